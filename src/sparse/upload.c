/* Host arrays to device buffers, and a COO matrix to CSR on a device (the
 * spmv benchmark and the library's pb_csr_upload share them). */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sparse/sparse.h"

pb_status pb__upload(pb_device *dev, const void *src, size_t bytes, pb_buf **out)
{
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, out);
    return st == PB_OK && bytes ? pb_buf_write(*out, 0, src, bytes) : st;
}

pb_status pb__upload_values(pb_device *dev, const double *v, size_t n, enum pb_precision prec, pb_buf **out)
{
    size_t elt = pb_precision_size(prec);
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, n * elt, out);
    if (st != PB_OK || n == 0)
        return st;
    if (prec == PB_DOUBLE)
        return pb_buf_write(*out, 0, v, n * elt);
    float *tmp;
    if ((st = pb__host_alloc(n * sizeof *tmp, "spmv float values", (void **)&tmp)) != PB_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        tmp[i] = (float)v[i];
    st = pb_buf_write(*out, 0, tmp, n * sizeof *tmp);
    pb__host_free(tmp);
    return st;
}

/* pb__csr_offsets reads m as sorted COO: a matrix built by hand that is not
 * would give offsets that drop entries, so it is checked first. */
static pb_status coo_check(const struct pb_coo *m)
{
    if (m->n_rows < 0 || m->n_cols < 0)
        return pb__fail(PB_ERR_INVALID, "pb_csr_upload: negative size %d x %d", m->n_rows, m->n_cols);
    if (m->nnz && (!m->rows || !m->cols || !m->values))
        return pb__fail(PB_ERR_INVALID, "pb_csr_upload: %zu entries but NULL arrays", m->nnz);
    for (size_t k = 0; k < m->nnz; k++) {
        if (m->rows[k] < 0 || m->rows[k] >= m->n_rows || m->cols[k] < 0 || m->cols[k] >= m->n_cols)
            return pb__fail(PB_ERR_INVALID, "pb_csr_upload: entry %zu at (%d, %d) is outside the %d x %d matrix",
                            k, m->rows[k], m->cols[k], m->n_rows, m->n_cols);
        if (k && m->rows[k] < m->rows[k - 1])
            return pb__fail(PB_ERR_INVALID, "pb_csr_upload: entry %zu (row %d) comes after row %d: COO must be "
                            "sorted by row", k, m->rows[k], m->rows[k - 1]);
    }
    return PB_OK;
}

pb_status pb_csr_upload(pb_device *dev, const struct pb_coo *m, enum pb_precision prec, struct pb_csr_device *out)
{
    if (!out || !m || !dev)
        return pb__fail(PB_ERR_INVALID, "pb_csr_upload: %s is NULL", !out ? "out" : !m ? "the matrix" : "dev");
    memset(out, 0, sizeof *out);
    if (prec != PB_FLOAT && prec != PB_DOUBLE)
        return pb__fail(PB_ERR_INVALID, "pb_csr_upload: unknown precision");
    pb_status st = coo_check(m);
    int32_t *ptr = NULL;
    if (st == PB_OK)
        st = pb__csr_offsets(m, &ptr);
    if (st == PB_OK)
        st = pb__upload(dev, ptr, ((size_t)m->n_rows + 1) * sizeof *ptr, &out->ptr);
    free(ptr);
    if (st == PB_OK)
        st = pb__upload(dev, m->cols, m->nnz * sizeof *m->cols, &out->idx);
    if (st == PB_OK)
        st = pb__upload_values(dev, m->values, m->nnz, prec, &out->val);
    if (st != PB_OK) {
        pb_csr_free(out);
        return st;
    }
    out->args = (struct pb_spmv_args){.prec = prec, .format = PB_SPARSE_CSR, .rows = m->n_rows, .cols = m->n_cols,
                                      .nnz = (int64_t)m->nnz, .ptr = out->ptr, .idx = out->idx, .val = out->val};
    return PB_OK;
}

void pb_csr_free(struct pb_csr_device *a)
{
    if (!a)
        return;
    pb_buf_free(a->ptr);
    pb_buf_free(a->idx);
    pb_buf_free(a->val);
    memset(a, 0, sizeof *a);
}

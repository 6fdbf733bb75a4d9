/* CSR offsets and ELLPACK from COO (which is sorted by row, then column). */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sparse/sparse.h"

/* The row offsets of m into p[rows + 1], int64_t where wide, else int32_t
 * (the caller checked that nnz fits). */
static void fill_offsets(const struct pb_coo *m, void *p, bool wide)
{
    size_t k = 0;
    for (int32_t i = 0; i <= m->n_rows; i++) {
        if (wide)
            ((int64_t *)p)[i] = (int64_t)k;
        else
            ((int32_t *)p)[i] = (int32_t)k;
        while (k < m->nnz && m->rows[k] == i)
            k++;
    }
}

pb_status pb__csr_offsets(const struct pb_coo *m, int32_t **ptr)
{
    *ptr = NULL;
    if (m->nnz > INT32_MAX)
        return pb__fail(PB_ERR_UNSUPPORTED, "%zu non-zeros do not fit 32-bit CSR offsets", m->nnz);
    if (!(*ptr = malloc(((size_t)m->n_rows + 1) * sizeof **ptr)))
        return pb__fail(PB_ERR_NOMEM, "out of host memory for CSR offsets");
    fill_offsets(m, *ptr, false);
    return PB_OK;
}

pb_status pb__csr_offsets64(const struct pb_coo *m, int64_t **ptr)
{
    if (!(*ptr = malloc(((size_t)m->n_rows + 1) * sizeof **ptr)))
        return pb__fail(PB_ERR_NOMEM, "out of host memory for CSR offsets");
    fill_offsets(m, *ptr, true);
    return PB_OK;
}

int32_t pb__coo_max_row(const struct pb_coo *m)
{
    int32_t best = 0;
    for (size_t k = 0; k < m->nnz;) {
        size_t start = k;
        while (k < m->nnz && m->rows[k] == m->rows[start])
            k++;
        if ((int32_t)(k - start) > best)
            best = (int32_t)(k - start);
    }
    return best;
}

int32_t pb__coo_cols_used(const struct pb_coo *m)
{
    size_t words = ((size_t)m->n_cols + 63) / 64;
    uint64_t *seen = calloc(words ? words : 1, sizeof *seen);
    if (!seen) /* a bound from above: at most one column per entry */
        return m->nnz < (size_t)m->n_cols ? (int32_t)m->nnz : m->n_cols;
    int32_t used = 0;
    for (size_t k = 0; k < m->nnz; k++) {
        uint64_t bit = (uint64_t)1 << (m->cols[k] % 64);
        if (!(seen[m->cols[k] / 64] & bit)) {
            seen[m->cols[k] / 64] |= bit;
            used++;
        }
    }
    free(seen);
    return used;
}

pb_status pb__ell_build(const struct pb_coo *m, bool transposed, double max_fill, struct pb_ell *out)
{
    memset(out, 0, sizeof *out);
    int32_t width = pb__coo_max_row(m);
    double stored = (double)m->n_rows * (double)width;
    if (m->nnz && stored > max_fill * (double)m->nnz)
        return pb__fail(PB_ERR_UNSUPPORTED,
                        "ELLPACK would store %.0f entries for %zu non-zeros (fill %.1f > limit %.1f: longest row %d)",
                        stored, m->nnz, stored / (double)m->nnz, max_fill, width);
    size_t n;
    if (!pb__mul_size((size_t)m->n_rows, (size_t)width, &n))
        return pb__fail(PB_ERR_OVERFLOW, "ELLPACK size overflows");
    pb_status st = pb__host_alloc(n * sizeof *out->idx, "ELLPACK columns", (void **)&out->idx);
    if (st == PB_OK)
        st = pb__host_alloc(n * sizeof *out->val, "ELLPACK values", (void **)&out->val);
    if (st != PB_OK) {
        pb__ell_free(out);
        return st;
    }
    out->rows = m->n_rows;
    out->width = width;
    out->transposed = transposed;
    size_t k = 0;
    for (int32_t i = 0; i < m->n_rows; i++)
        for (int32_t j = 0; j < width; j++) {
            size_t at = transposed ? (size_t)j * (size_t)m->n_rows + (size_t)i : (size_t)i * (size_t)width + (size_t)j;
            bool real = k < m->nnz && m->rows[k] == i;
            out->idx[at] = real ? m->cols[k] : -1;
            out->val[at] = real ? m->values[k] : 0.0;
            k += real;
        }
    return PB_OK;
}

void pb__ell_free(struct pb_ell *e)
{
    if (!e)
        return;
    pb__host_free(e->idx);
    pb__host_free(e->val);
    memset(e, 0, sizeof *e);
}

int pb__spmv_row_group(const struct pb_spmv_args *args)
{
    if (args->group)
        return args->group;
    double mean = args->rows ? (double)args->nnz / args->rows : 1;
    int g = 1;
    while (g < 32 && 2 * g <= mean / 3)
        g *= 2;
    return g;
}

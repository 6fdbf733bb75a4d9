/* Diagonal storage (DIA) from CSR, and whether a matrix is one of few
 * diagonals: stencils and bands store no column index then. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sparse/sparse.h"

/* An open-addressed set of the offsets seen (twice the most kept, a power of two). */
#define SET_SLOTS 256

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int pb__dia_pick(const int32_t *ptr, const int32_t *idx, int32_t rows, int32_t cols, size_t elt, int64_t *offsets,
                 double *ratio)
{
    int64_t slot[SET_SLOTS];
    bool used[SET_SLOTS] = {false};
    int n = 0;
    *ratio = 0;
    for (int32_t i = 0; i < rows; i++)
        for (int32_t k = ptr[i]; k < ptr[i + 1]; k++) {
            int64_t off = (int64_t)idx[k] - i;
            uint64_t h = ((uint64_t)off * 0x9e3779b97f4a7c15ull) >> 56; /* top 8 bits: 0..255 */
            while (used[h] && slot[h] != off)
                h = (h + 1) & (SET_SLOTS - 1);
            if (used[h])
                continue;
            if (n == PB_DIA_MAX_DIAGS) /* one more than kept: not a matrix of few diagonals */
                return 0;
            used[h] = true, slot[h] = off, offsets[n++] = off;
        }
    if (n == 0)
        return 0;
    qsort(offsets, (size_t)n, sizeof *offsets, cmp_int64);
    double dia = (double)n * rows * (double)elt, csr = (double)ptr[rows] * (double)(elt + 4) + 4.0 * (rows + 1);
    *ratio = dia / csr;
    (void)cols;
    return n;
}

pb_status pb__dia_build(const int32_t *ptr, const int32_t *idx, const void *val, size_t elt, int32_t rows,
                        int32_t cols, const int64_t *offsets, int diags, struct pb_dia *out)
{
    memset(out, 0, sizeof *out);
    size_t bytes = (size_t)diags * (size_t)rows * elt;
    out->offset = malloc((size_t)diags * sizeof *out->offset);
    out->val = calloc(bytes ? bytes : 1, 1);
    if (!out->offset || !out->val) {
        pb__dia_free(out);
        return pb__fail(PB_ERR_NOMEM, "spmv: the diagonal copy (%zu bytes): out of host memory", bytes);
    }
    memcpy(out->offset, offsets, (size_t)diags * sizeof *offsets);
    out->rows = rows, out->cols = cols, out->diags = diags;
    for (int32_t i = 0; i < rows; i++)
        for (int32_t k = ptr[i]; k < ptr[i + 1]; k++) {
            int64_t off = (int64_t)idx[k] - i;
            int lo = 0, hi = diags - 1; /* offsets ascend: a binary search */
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (offsets[mid] < off)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            size_t at = (size_t)lo * (size_t)rows + (size_t)i; /* duplicate entries are summed */
            if (elt == 8)
                ((double *)out->val)[at] += ((const double *)val)[k];
            else
                ((float *)out->val)[at] += ((const float *)val)[k];
        }
    return PB_OK;
}

void pb__dia_free(struct pb_dia *m)
{
    free(m->offset);
    free(m->val);
    memset(m, 0, sizeof *m);
}

pb_status pb__dia_refuse(int diags, double ratio)
{
    if (diags == 0)
        return pb__fail(PB_ERR_UNSUPPORTED, "not a matrix of few diagonals: more than %d, or no non-zeros",
                        PB_DIA_MAX_DIAGS);
    return pb__fail(PB_ERR_UNSUPPORTED, "its %d diagonals stored whole would move %.2fx CSR's bytes", diags, ratio);
}

/* Diagonal storage (DIA) from CSR, and whether a matrix is one of few
 * diagonals: stencils and bands store no column index then. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sparse/sparse.h"

/* An open-addressed set of the offsets seen (twice the most kept, a power of two). */
#define SET_SLOTS 256

int pb__dia_pick(const int32_t *ptr, const int32_t *idx, int32_t rows, int32_t cols, size_t elt,
                 struct pb_dia_shape *shape, double *ratio)
{
    int64_t slot[SET_SLOTS];
    int32_t first[SET_SLOTS], last[SET_SLOTS];
    bool used[SET_SLOTS] = {false};
    int n = 0;
    *ratio = 0;
    memset(shape, 0, sizeof *shape);
    for (int32_t i = 0; i < rows; i++)
        for (int32_t k = ptr[i]; k < ptr[i + 1]; k++) {
            int64_t off = (int64_t)idx[k] - i;
            uint64_t h = ((uint64_t)off * 0x9e3779b97f4a7c15ull) >> 56; /* top 8 bits: 0..255 */
            while (used[h] && slot[h] != off)
                h = (h + 1) & (SET_SLOTS - 1);
            if (used[h]) {
                last[h] = i; /* rows ascend */
                continue;
            }
            if (n == PB_DIA_MAX_DIAGS) /* one more than kept: not a matrix of few diagonals */
                return 0;
            used[h] = true, slot[h] = off, first[h] = last[h] = i, n++;
        }
    if (n == 0)
        return 0;
    /* insertion sort by offset (at most 64) */
    int64_t values = 0;
    for (int h = 0; h < SET_SLOTS; h++) {
        if (!used[h])
            continue;
        int q = shape->diags++;
        for (; q > 0 && shape->offset[q - 1] > slot[h]; q--) {
            shape->offset[q] = shape->offset[q - 1];
            shape->first[q] = shape->first[q - 1], shape->count[q] = shape->count[q - 1];
        }
        shape->offset[q] = slot[h], shape->first[q] = first[h], shape->count[q] = last[h] - first[h] + 1;
        values += last[h] - first[h] + 1;
    }
    double dia = (double)values * (double)elt, csr = (double)ptr[rows] * (double)(elt + 4) + 4.0 * (rows + 1);
    *ratio = dia / csr;
    (void)cols;
    return n;
}

pb_status pb__dia_build(const int32_t *ptr, const int32_t *idx, const void *val, size_t elt, int32_t rows,
                        int32_t cols, const struct pb_dia_shape *shape, struct pb_dia *out)
{
    memset(out, 0, sizeof *out);
    int diags = shape->diags;
    size_t values = 0;
    for (int q = 0; q < diags; q++)
        values += (size_t)shape->count[q];
    size_t bytes = values * elt;
    out->offset = malloc((size_t)diags * sizeof *out->offset);
    out->start = malloc((size_t)diags * sizeof *out->start);
    out->first = malloc((size_t)diags * sizeof *out->first);
    out->count = malloc((size_t)diags * sizeof *out->count);
    out->val = calloc(bytes ? bytes : 1, 1);
    if (!out->offset || !out->start || !out->first || !out->count || !out->val) {
        pb__dia_free(out);
        return pb__fail(PB_ERR_NOMEM, "spmv: the diagonal copy (%zu bytes): out of host memory", bytes);
    }
    out->rows = rows, out->cols = cols, out->diags = diags;
    int64_t at = 0;
    for (int q = 0; q < diags; q++) {
        out->offset[q] = shape->offset[q], out->first[q] = shape->first[q], out->count[q] = shape->count[q];
        out->start[q] = at;
        at += shape->count[q];
    }
    for (int32_t i = 0; i < rows; i++)
        for (int32_t k = ptr[i]; k < ptr[i + 1]; k++) {
            int64_t off = (int64_t)idx[k] - i;
            int lo = 0, hi = diags - 1; /* offsets ascend: a binary search */
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (shape->offset[mid] < off)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            size_t slot = (size_t)out->start[lo] + (size_t)(i - out->first[lo]); /* duplicates are summed */
            if (elt == 8)
                ((double *)out->val)[slot] += ((const double *)val)[k];
            else
                ((float *)out->val)[slot] += ((const float *)val)[k];
        }
    return PB_OK;
}

void pb__dia_free(struct pb_dia *m)
{
    free(m->offset);
    free(m->start);
    free(m->first);
    free(m->count);
    free(m->val);
    memset(m, 0, sizeof *m);
}

pb_status pb__dia_refuse(int diags, double ratio)
{
    if (diags == 0)
        return pb__fail(PB_ERR_UNSUPPORTED, "not a matrix of few diagonals: more than %d, or no non-zeros",
                        PB_DIA_MAX_DIAGS);
    return pb__fail(PB_ERR_UNSUPPORTED, "its %d diagonal%s, stored over the rows they span, would move %.2fx CSR's bytes",
                    diags, diags == 1 ? "" : "s", ratio);
}

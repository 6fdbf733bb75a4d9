/* Block CSR from CSR, and the choice of its block size. */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/core.h"
#include "sparse/sparse.h"

/* Windows of rows sampled by pb__bcsr_pick: a multiple of every b up to 8
 * (840 = lcm(1..8)) long and starting on one, so block rows fall alike. */
#define WINDOW_ROWS 1680

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The distinct block columns of rows [first, last) (one block row), ascending,
 * into list (room for each of their entries); their count. Sorting a block
 * row's few entries needs no array as long as the block columns, which
 * matrices of a billion columns would make gigabytes. */
static int32_t block_row_columns(const int32_t *ptr, const int32_t *idx, int32_t first, int32_t last, int b,
                                 int32_t *list)
{
    int32_t n = 0;
    for (int32_t k = ptr[first]; k < ptr[last]; k++)
        list[n++] = idx[k] / b;
    if (n > 64) {
        qsort(list, (size_t)n, sizeof *list, cmp_int32);
    } else { /* rows sorted already make b runs: insertion is quick */
        for (int32_t i = 1; i < n; i++) {
            int32_t v = list[i], j = i;
            for (; j > 0 && list[j - 1] > v; j--)
                list[j] = list[j - 1];
            list[j] = v;
        }
    }
    int32_t u = 0;
    for (int32_t i = 0; i < n; i++)
        if (u == 0 || list[i] != list[u - 1])
            list[u++] = list[i];
    return u;
}

/* The most entries of any block row of b rows among rows [first, last). */
static int64_t widest_block_row(const int32_t *ptr, int32_t first, int32_t last, int b)
{
    int64_t most = 0;
    for (int32_t r = first; r < last; r += b) {
        int32_t end = last - r < b ? last : r + b;
        if (ptr[end] - ptr[r] > most)
            most = ptr[end] - ptr[r];
    }
    return most;
}

int pb__bcsr_windows(int32_t rows, int32_t *first, int32_t *last)
{
    if (rows <= PB_BCSR_WINDOWS * WINDOW_ROWS) {
        first[0] = 0, last[0] = rows;
        return rows > 0;
    }
    int64_t slots = rows / WINDOW_ROWS; /* at least PB_BCSR_WINDOWS */
    for (int w = 0; w < PB_BCSR_WINDOWS; w++)
        first[w] = (int32_t)(slots * w / PB_BCSR_WINDOWS * WINDOW_ROWS), last[w] = first[w] + WINDOW_ROWS;
    return PB_BCSR_WINDOWS;
}

int pb__bcsr_pick(const int32_t *ptr, const int32_t *idx, int32_t rows, int32_t cols, size_t elt, double *ratio)
{
    *ratio = 0;
    int32_t first[PB_BCSR_WINDOWS], last[PB_BCSR_WINDOWS];
    int n_windows = pb__bcsr_windows(rows, first, last);
    if (!n_windows || cols <= 0 || ptr[rows] == 0)
        return 0;
    int64_t most = 0; /* per size: block rows of b rows straddle those of others */
    for (int b = 2; b <= PB_BCSR_MAX_B; b++)
        for (int w = 0; w < n_windows; w++) {
            int64_t m = widest_block_row(ptr, first[w], last[w], b);
            most = m > most ? m : most;
        }
    int32_t *list = malloc(((size_t)most + 1) * sizeof *list);
    if (!list)
        return 0;
    int best = 0;
    for (int b = 2; b <= PB_BCSR_MAX_B; b++) {
        int64_t blocks = 0, nnz = 0, sampled_rows = 0;
        for (int w = 0; w < n_windows; w++) {
            for (int32_t r = first[w]; r < last[w]; r += b)
                blocks += block_row_columns(ptr, idx, r, last[w] - r < b ? last[w] : r + b, b, list);
            nnz += ptr[last[w]] - ptr[first[w]], sampled_rows += last[w] - first[w];
        }
        /* bytes of the matrix read per product: values and indices, and
         * the row offsets (per block row in BCSR) */
        double csr = (double)nnz * ((double)elt + 4) + (double)sampled_rows * 4,
               bcsr = (double)blocks * ((double)b * b * (double)elt + 4) + (double)sampled_rows / b * 4;
        if (nnz == 0)
            break; /* nothing sampled: no estimate */
        double r = bcsr / csr;
        if (!best || r < *ratio)
            best = b, *ratio = r;
        if (b == 2 && r > 1.5)
            break; /* entries alone in their 2x2 blocks: no larger block does better in practice */
    }
    free(list);
    return best;
}

/* Threads for the builds: OpenMP's, at most 16. */
static int build_threads(void)
{
#ifdef _OPENMP
    int t = omp_get_max_threads();
    return t < 1 ? 1 : t > 16 ? 16 : t;
#else
    return 1;
#endif
}

static int thread_index(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

pb_status pb__bcsr_build(const int32_t *ptr, const int32_t *idx, const void *val, size_t elt, int32_t rows,
                         int32_t cols, int b, struct pb_bcsr *out)
{
    memset(out, 0, sizeof *out);
    if (b < 1 || b > PB_BCSR_MAX_B || (elt != 4 && elt != 8) || rows < 0 || cols < 0)
        return pb__fail(PB_ERR_INVALID, "block CSR: block size %d (1..%d), %zu-byte values", b, PB_BCSR_MAX_B, elt);
    int32_t block_rows = (int32_t)(((int64_t)rows + b - 1) / b), block_cols = (int32_t)(((int64_t)cols + b - 1) / b);
    int threads = build_threads();
    /* per thread: room for the entries of the widest block row */
    size_t room = (size_t)widest_block_row(ptr, 0, rows, b) + 1;
    int32_t *lists = NULL;
    int64_t *count = malloc(((size_t)block_rows + 1) * sizeof *count);
    out->ptr = malloc(((size_t)block_rows + 1) * sizeof *out->ptr);
    pb_status st = pb__host_alloc(room * (size_t)threads * sizeof *lists, "block CSR scratch", (void **)&lists);
    if (st == PB_OK && (!count || !out->ptr))
        st = pb__fail(PB_ERR_NOMEM, "out of host memory for block CSR");
    if (st != PB_OK)
        goto done;
    /* pass 1: the blocks of each block row */
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads)
    for (int32_t br = 0; br < block_rows; br++) {
        int32_t last = (int32_t)((int64_t)br * b + b < rows ? (int64_t)br * b + b : rows);
        count[br] = block_row_columns(ptr, idx, br * b, last, b, lists + room * (size_t)thread_index());
    }
    int64_t blocks = 0;
    out->ptr[0] = 0;
    for (int32_t br = 0; br < block_rows; br++) {
        blocks += count[br];
        if (blocks > INT32_MAX) {
            st = pb__fail(PB_ERR_UNSUPPORTED, "block CSR: more than %d blocks of %dx%d", INT32_MAX, b, b);
            goto done;
        }
        out->ptr[br + 1] = (int32_t)blocks;
    }
    size_t per_block = (size_t)b * (size_t)b;
    if ((st = pb__host_alloc((size_t)blocks * per_block * elt + 1, "block CSR values", &out->val)) != PB_OK)
        goto done;
    if (!(out->idx = malloc((size_t)blocks * sizeof *out->idx + 1))) {
        st = pb__fail(PB_ERR_NOMEM, "out of host memory for block CSR");
        goto done;
    }
    /* pass 2: each block row's block columns, then its entries into their
     * blocks, found by bisection */
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads)
    for (int32_t br = 0; br < block_rows; br++) {
        int32_t last = (int32_t)((int64_t)br * b + b < rows ? (int64_t)br * b + b : rows);
        int32_t *list = lists + room * (size_t)thread_index(), *cols_of = out->idx + out->ptr[br];
        int32_t n = block_row_columns(ptr, idx, br * b, last, b, list);
        memcpy(cols_of, list, (size_t)n * sizeof *list);
        memset((char *)out->val + (size_t)out->ptr[br] * per_block * elt, 0, (size_t)n * per_block * elt);
        for (int32_t r = br * b; r < last; r++)
            for (int32_t k = ptr[r]; k < ptr[r + 1]; k++) {
                int32_t bc = idx[k] / b, lo = 0, hi = n - 1;
                while (lo < hi) {
                    int32_t mid = (lo + hi) / 2;
                    if (cols_of[mid] < bc)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                size_t at = (((size_t)out->ptr[br] + (size_t)lo) * (size_t)b + (size_t)(r - br * b)) * (size_t)b +
                            (size_t)(idx[k] - bc * b);
                if (elt == 8)
                    ((double *)out->val)[at] += ((const double *)val)[k];
                else
                    ((float *)out->val)[at] += ((const float *)val)[k];
            }
    }
    out->b = b, out->block_rows = block_rows, out->block_cols = block_cols, out->blocks = (int32_t)blocks;
done:
    pb__host_free(lists);
    free(count);
    if (st != PB_OK)
        pb__bcsr_free(out);
    return st;
}

void pb__bcsr_free(struct pb_bcsr *m)
{
    free(m->ptr);
    free(m->idx);
    pb__host_free(m->val);
    memset(m, 0, sizeof *m);
}

pb_status pb__bcsr_ellt(const struct pb_bcsr *m, size_t elt, double max_fill, int32_t *width, int32_t **idx, void **val)
{
    *width = 0, *idx = NULL, *val = NULL;
    int32_t w = 0;
    for (int32_t i = 0; i < m->block_rows; i++)
        if (m->ptr[i + 1] - m->ptr[i] > w)
            w = m->ptr[i + 1] - m->ptr[i];
    double slots = (double)w * (double)m->block_rows;
    if (slots > max_fill * (double)m->blocks)
        return pb__fail(PB_ERR_UNSUPPORTED,
                        "block ELLPACK would store %.2fx the blocks (%d in the fullest block row, %.1f on average)",
                        m->blocks ? slots / m->blocks : 0, w, m->block_rows ? (double)m->blocks / m->block_rows : 0);
    size_t b = (size_t)m->b, rows_pad = (size_t)m->block_rows * b, n_slots = (size_t)w * (size_t)m->block_rows;
    pb_status st = pb__host_alloc(n_slots * sizeof **idx + 1, "block ELLPACK columns", (void **)idx);
    if (st == PB_OK)
        st = pb__host_alloc(n_slots * b * b * elt + 1, "block ELLPACK values", val);
    if (st != PB_OK) {
        pb__host_free(*idx), *idx = NULL;
        return st;
    }
    memset(*val, 0, n_slots * b * b * elt);
#pragma omp parallel for schedule(static) num_threads(build_threads())
    for (int32_t i = 0; i < m->block_rows; i++)
        for (int32_t j = 0; j < w; j++) {
            int32_t t = m->ptr[i] + j;
            bool real = t < m->ptr[i + 1];
            (*idx)[(size_t)j * (size_t)m->block_rows + (size_t)i] = real ? m->idx[t] : -1;
            for (size_t r = 0; real && r < b; r++)
                for (size_t c = 0; c < b; c++)
                    memcpy((char *)*val + (((size_t)j * b + c) * rows_pad + (size_t)i * b + r) * elt,
                           (const char *)m->val + (((size_t)t * b + r) * b + c) * elt, elt);
        }
    *width = w;
    return PB_OK;
}

int pb__bcsr_forced_b(void)
{
    const char *env = getenv("PARBENCH_BCSR_B");
    int b = env ? atoi(env) : 0;
    return b >= 2 && b <= PB_BCSR_MAX_B ? b : 0;
}

pb_status pb__bcsr_refuse(int b, double ratio)
{
    if (b < 2)
        return pb__fail(PB_ERR_UNSUPPORTED, "no block structure: the sampled rows hold no non-zeros");
    return pb__fail(PB_ERR_UNSUPPORTED, "no block structure: %dx%d blocks, the fewest bytes, would move %.2fx CSR's", b,
                    b, ratio);
}

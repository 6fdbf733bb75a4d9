/* Row partitions of a CSR matrix over ranks and what they cost to exchange
 * (sparse.h): shared by spmv-dist, which runs them, and the projection,
 * which only counts. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sparse/sparse.h"

void pb__partition_rows(const int32_t *ptr, int32_t rows, int ranks, bool by_nnz, int32_t *first)
{
    int64_t nnz = ptr[rows];
    first[0] = 0;
    for (int r = 1; r < ranks; r++) {
        if (!by_nnz) {
            first[r] = (int32_t)((int64_t)rows * r / ranks);
            continue;
        }
        int64_t target = (nnz * r + ranks - 1) / ranks;
        int32_t lo = first[r - 1], hi = rows;
        while (lo < hi) { /* the first row whose offset reaches the target */
            int32_t mid = lo + (hi - lo) / 2;
            if (ptr[mid] < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        first[r] = lo;
    }
    first[ranks] = rows;
}

void pb__partition_cols(const int32_t *row_first, int32_t rows, int32_t cols, int ranks, int32_t *first)
{
    for (int r = 0; r <= ranks; r++)
        first[r] = rows == cols ? row_first[r] : (int32_t)((int64_t)cols * r / ranks);
}

int pb__partition_owner(const int32_t *first, int ranks, int32_t j)
{
    int lo = 0, hi = ranks - 1;
    while (lo < hi) { /* the last rank whose block starts at or before j */
        int mid = (lo + hi + 1) / 2;
        if (first[mid] <= j)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

struct pair {
    int from, to; /* rank `from` sends x entries to rank `to` */
};

static int by_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    return x->from != y->from ? (x->from > y->from) - (x->from < y->from) : (x->to > y->to) - (x->to < y->to);
}

pb_status pb__partition_stats(const int32_t *ptr, const int32_t *idx, int32_t rows, int32_t cols, int ranks,
                              bool by_nnz, struct pb_part_stats *out)
{
    if (ranks < 1 || rows < 0 || cols < 0)
        return pb__fail(PB_ERR_INVALID, "partition of %d rows over %d ranks", (int)rows, ranks);
    int32_t *row_first = malloc(((size_t)ranks + 1) * sizeof *row_first);
    int32_t *col_first = malloc(((size_t)ranks + 1) * sizeof *col_first);
    int32_t *seen = malloc(((size_t)cols + 1) * sizeof *seen); /* last rank that counted column j */
    /* The pairs (o sends to q), each once: memory grows with the pairs, not ranks^2. */
    int *last_to = malloc((size_t)ranks * sizeof *last_to); /* the last q that o was found to send to */
    struct pair *pairs = NULL;
    size_t n_pairs = 0, cap = 0;
    if (!row_first || !col_first || !seen || !last_to) {
        free(row_first), free(col_first), free(seen), free(last_to);
        return pb__fail(PB_ERR_NOMEM, "partition statistics for %d ranks: out of memory", ranks);
    }
    for (int r = 0; r < ranks; r++)
        last_to[r] = -1;
    bool short_of_memory = false;
    pb__partition_rows(ptr, rows, ranks, by_nnz, row_first);
    pb__partition_cols(row_first, rows, cols, ranks, col_first);
    memset(out, 0, (size_t)ranks * sizeof *out);
    for (int32_t j = 0; j < cols; j++)
        seen[j] = -1;
    for (int q = 0; q < ranks; q++) {
        struct pb_part_stats *s = &out[q];
        int32_t lo = col_first[q], hi = col_first[q + 1];
        s->rows = row_first[q + 1] - row_first[q];
        s->own_cols = hi - lo;
        for (int32_t i = row_first[q]; i < row_first[q + 1]; i++) {
            bool boundary = false;
            int64_t own = 0;
            for (int32_t k = ptr[i]; k < ptr[i + 1]; k++) {
                int32_t j = idx[k];
                if (j >= lo && j < hi) {
                    own++;
                    continue;
                }
                boundary = true;
                if (seen[j] == q)
                    continue;
                seen[j] = q;
                int o = pb__partition_owner(col_first, ranks, j);
                s->halo++;
                out[o].sent++;
                if (last_to[o] != q) {
                    last_to[o] = q;
                    if (n_pairs == cap) {
                        size_t more = cap ? 2 * cap : 1024;
                        struct pair *grown = realloc(pairs, more * sizeof *grown);
                        short_of_memory |= !grown;
                        if (grown)
                            pairs = grown, cap = more;
                    }
                    if (n_pairs < cap)
                        pairs[n_pairs++] = (struct pair){o, q};
                }
            }
            int64_t len = ptr[i + 1] - ptr[i];
            s->nnz += len;
            if (!boundary)
                s->nnz_interior += len;
            else
                s->boundary_rows++, s->nnz_boundary_own += own;
        }
    }
    /* Neighbours: the ranks a rank sends to or receives from, each once. The
     * pairs sorted by (from, to) with their mirrors, the distinct ones are
     * counted in one pass. */
    struct pair *both = short_of_memory ? NULL : malloc((2 * n_pairs + 1) * sizeof *both);
    size_t n_both = 0;
    for (size_t i = 0; both && i < n_pairs; i++) {
        both[n_both++] = pairs[i];
        both[n_both++] = (struct pair){pairs[i].to, pairs[i].from};
    }
    if (both)
        qsort(both, n_both, sizeof *both, by_pair);
    for (size_t i = 0; both && i < n_both; i++)
        if (i == 0 || both[i].from != both[i - 1].from || both[i].to != both[i - 1].to)
            out[both[i].from].neighbours++;
    free(row_first);
    free(col_first);
    free(seen);
    free(last_to);
    free(pairs);
    if (!both)
        return pb__fail(PB_ERR_NOMEM, "partition statistics for %d ranks: out of memory", ranks);
    free(both);
    return PB_OK;
}

void pb__partition_grid(int ranks, int *pr, int *pc)
{
    *pr = 1;
    for (int d = 1; (int64_t)d * d <= ranks; d++)
        if (ranks % d == 0)
            *pr = d;
    *pc = ranks / *pr;
}

pb_status pb__partition_stats_2d(const int32_t *ptr, const int32_t *idx, int32_t rows, int32_t cols, int pr, int pc,
                                 bool by_nnz, struct pb_part2d_stats *out)
{
    if (pr < 1 || pc < 1 || (int64_t)pr * pc > 1 << 30 || rows < 0 || cols < 0)
        return pb__fail(PB_ERR_INVALID, "2D partition of %d rows over %d x %d ranks", (int)rows, pr, pc);
    const int ranks = pr * pc;
    int32_t *row_first = malloc(((size_t)ranks + 1) * sizeof *row_first);
    int32_t *col_first = malloc(((size_t)ranks + 1) * sizeof *col_first);
    int32_t *chunk_of_col = malloc(((size_t)cols + 1) * sizeof *chunk_of_col);
    int32_t *col_seen = malloc(((size_t)cols + 1) * sizeof *col_seen); /* the last row block that needed it */
    int32_t *chunk_seen = malloc((size_t)ranks * sizeof *chunk_seen);  /* the same, per x chunk */
    int32_t *row_seen = malloc((size_t)pc * sizeof *row_seen);         /* the last row with an entry in block j */
    int *last_to = malloc((size_t)ranks * sizeof *last_to);            /* the last rank a fold went to */
    if (!row_first || !col_first || !chunk_of_col || !col_seen || !chunk_seen || !row_seen || !last_to) {
        free(row_first), free(col_first), free(chunk_of_col), free(col_seen), free(chunk_seen), free(row_seen);
        free(last_to);
        return pb__fail(PB_ERR_NOMEM, "2D partition statistics for %d ranks: out of memory", ranks);
    }
    pb__partition_rows(ptr, rows, ranks, by_nnz, row_first);
    pb__partition_cols(row_first, rows, cols, ranks, col_first);
    memset(out, 0, (size_t)ranks * sizeof *out);
    for (int k = 0; k < ranks; k++) {
        chunk_seen[k] = -1, last_to[k] = -1;
        for (int32_t c = col_first[k]; c < col_first[k + 1]; c++)
            chunk_of_col[c] = k;
    }
    for (int32_t c = 0; c < cols; c++)
        col_seen[c] = -1;
    for (int j = 0; j < pc; j++)
        row_seen[j] = -1;
    for (int i = 0; i < pr; i++) {
        int k = i * pc; /* the y chunk of the row, rising with it: each rank's folds go out in order */
        for (int32_t r = row_first[i * pc]; r < row_first[(i + 1) * pc]; r++) {
            while (r >= row_first[k + 1])
                k++;
            for (int64_t e = ptr[r]; e < ptr[r + 1]; e++) {
                const int32_t c = idx[e];
                const int kx = chunk_of_col[c], j = kx / pr, q = i * pc + j;
                out[q].nnz++;
                if (col_seen[c] != i) { /* the first time row block i needs x[c]: rank q receives it */
                    col_seen[c] = i;
                    if (kx != j * pr + i) {
                        const int owner = (kx % pr) * pc + j;
                        out[q].expand.recv++, out[owner].expand.sent++;
                        if (chunk_seen[kx] != i) /* one message per x chunk and row block */
                            chunk_seen[kx] = i, out[q].expand.from++, out[owner].expand.to++;
                    }
                }
                if (row_seen[j] != r) { /* rank q's partial of y[r], once, to y's owner k */
                    row_seen[j] = r;
                    if (q != k) {
                        out[q].fold.sent++, out[k].fold.recv++;
                        if (last_to[q] != k)
                            last_to[q] = k, out[q].fold.to++, out[k].fold.from++;
                    }
                }
            }
        }
    }
    for (int k = 0; rows == cols && k < ranks; k++) { /* y chunk k to x chunk k's owner */
        const int to = (k % pr) * pc + k / pr;
        const int64_t n = row_first[k + 1] - row_first[k];
        if (to != k && n > 0)
            out[k].move.sent += n, out[k].move.to++, out[to].move.recv += n, out[to].move.from++;
    }
    free(row_first), free(col_first), free(chunk_of_col), free(col_seen), free(chunk_seen), free(row_seen);
    free(last_to);
    return PB_OK;
}

bool pb__dist_split_pays(int64_t nnz, int64_t nnz_boundary, int64_t boundary_rows, int64_t nnz_boundary_own)
{
    return boundary_rows > 0 && nnz_boundary_own >= boundary_rows && 2 * nnz_boundary >= nnz;
}

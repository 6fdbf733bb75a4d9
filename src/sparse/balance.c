/* The load-balanced SpMV plan (balance.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sparse/balance.h"

/* The largest power of two <= v, in [1, 32]. */
static int32_t pow2_floor(int64_t v)
{
    return v >= 32 ? 32 : v <= 1 ? 1 : (int32_t)1 << (31 - __builtin_clz((unsigned)v));
}

/* Threads per row for rows of `nnz` entries in all, the longest `max_len`:
 * about the mean, and (unless warps take the long ones) enough that the
 * longest takes at most PB_BAL_STEPS steps. */
static int32_t group_for(int64_t nnz, int64_t rows, int64_t max_len, bool warp_rows)
{
    int32_t g = pow2_floor(rows ? nnz / rows : 1);
    if (warp_rows)
        return g;
    int64_t need = (max_len + PB_BAL_STEPS - 1) / PB_BAL_STEPS; /* threads for PB_BAL_STEPS steps */
    int32_t n = need <= 1 ? 1 : need >= 32 ? 32 : (int32_t)1 << (32 - __builtin_clz((unsigned)(need - 1)));
    return g > n ? g : n;
}

static int64_t passes(int64_t rows, int32_t group)
{
    int64_t per_pass = PB_BAL_THREADS / group;
    return (rows + per_pass - 1) / per_pass;
}

pb_status pb__bal_plan(const int32_t *ptr, int32_t rows, int32_t block_nnz, bool warp_rows, struct pb_bal_plan *out)
{
    memset(out, 0, sizeof *out);
    if (block_nnz < PB_BAL_THREADS || block_nnz > PB_BAL_NNZ_MAX || block_nnz % PB_BAL_THREADS)
        return pb__fail(PB_ERR_INVALID, "spmv balance: %d entries per block", block_nnz);
    /* Counts first, then the arrays. */
    int64_t n_pieces = 0, n_parts = 0, long_rows = 0, n_blocks = 0;
    const int64_t long_len = warp_rows ? PB_BAL_WARP_LONG : PB_BAL_LONG;
    for (int32_t i = 0; i < rows; i++) {
        int64_t len = ptr[i + 1] - ptr[i];
        if (len > long_len) {
            int64_t n = (len + PB_BAL_PIECE - 1) / PB_BAL_PIECE;
            n_pieces += n;
            n_parts += n > 1 ? n : 0;
            long_rows++;
        }
    }
    /* Blocks: at most one per block_nnz / 2 entries (two neighbours always
     * exceed it), per long row (which ends one) and per 128 rows (a block
     * closed by the pass or row limit has more). */
    int64_t cap = 2 * (int64_t)ptr[rows] / block_nnz + long_rows + (int64_t)rows / 128 + 2;
    pb_status st = pb__host_alloc((size_t)cap * sizeof *out->blocks, "spmv balance blocks", (void **)&out->blocks);
    if (st == PB_OK && n_pieces)
        st = pb__host_alloc((size_t)n_pieces * sizeof *out->pieces, "spmv balance pieces", (void **)&out->pieces);
    if (st != PB_OK) {
        pb__bal_free(out);
        return st;
    }
    int64_t piece = 0, part = 0;
    int32_t row0 = 0;
    int64_t nnz = 0, max_len = 0;
    for (int32_t i = 0; i <= rows; i++) {
        int64_t len = i < rows ? ptr[i + 1] - ptr[i] : 0;
        bool is_long = i < rows && len > long_len;
        bool close = i == rows || is_long;
        if (!close) {
            int64_t m = len > max_len ? len : max_len, r = i - row0 + 1;
            /* up to PB_BAL_PASSES * PB_BAL_THREADS / 32 rows, even 32 threads a row fit the passes */
            close = nnz + len > block_nnz || r > PB_BAL_ROWS ||
                    (r > PB_BAL_PASSES * PB_BAL_THREADS / 32 &&
                     passes(r, group_for(nnz + len, r, m, warp_rows)) > PB_BAL_PASSES);
        }
        if (close && i > row0) {
            if (n_blocks == cap) { /* the bound above is wrong: say so rather than write past it */
                pb__bal_free(out);
                return pb__fail(PB_ERR_INVALID, "spmv balance: more than %lld blocks", (long long)cap);
            }
            out->blocks[n_blocks++] =
                (struct pb_bal_block){row0, i, ptr[row0], ptr[i], group_for(nnz, i - row0, max_len, warp_rows)};
            row0 = i, nnz = 0, max_len = 0;
        }
        if (i == rows)
            break;
        if (is_long) {
            int32_t n = (int32_t)((len + PB_BAL_PIECE - 1) / PB_BAL_PIECE);
            for (int32_t p = 0; p < n; p++) {
                int32_t k0 = ptr[i] + p * PB_BAL_PIECE, k1 = p + 1 < n ? k0 + PB_BAL_PIECE : ptr[i + 1];
                out->pieces[piece++] = (struct pb_bal_piece){i, k0, k1, n > 1 ? (int32_t)(part + p) : -1,
                                                             n > 1 ? (int32_t)part : -1, n};
            }
            if (n > 1)
                part += n;
            row0 = i + 1;
            continue;
        }
        nnz += len;
        if (len > max_len)
            max_len = len;
    }
    out->n_blocks = (int32_t)n_blocks;
    out->n_pieces = (int32_t)n_pieces;
    out->n_parts = (int32_t)n_parts;
    out->long_rows = (int32_t)long_rows;
    out->block_nnz = block_nnz;
    return PB_OK;
}

pb_status pb__csr_offsets_agree(const int32_t *ptr, int32_t rows, int64_t nnz)
{
    if (ptr[0] != 0 || ptr[rows] != nnz)
        return pb__fail(PB_ERR_INVALID, "spmv: the row offsets run from %d to %d, the arguments say 0 to %lld", ptr[0],
                        ptr[rows], (long long)nnz);
    for (int32_t r = 0; r < rows; r++)
        if (ptr[r + 1] < ptr[r])
            return pb__fail(PB_ERR_INVALID, "spmv: row offsets decrease after row %d (%d, then %d)", r, ptr[r],
                            ptr[r + 1]);
    return PB_OK;
}

void pb__spmv_row_stats_of(const int32_t *ptr, int32_t rows, int32_t cols, struct pb_spmv_row_stats *out)
{
    memset(out, 0, sizeof *out);
    out->rows = rows, out->cols = cols, out->nnz = rows ? ptr[rows] - ptr[0] : 0;
    if (rows == 0)
        return;
    double mean = (double)out->nnz / rows, var = 0;
    int64_t empty = 0;
    for (int32_t i = 0; i < rows; i++) {
        int32_t len = ptr[i + 1] - ptr[i];
        var += ((double)len - mean) * ((double)len - mean);
        empty += len == 0;
        if (len > out->max_len)
            out->max_len = len;
    }
    out->mean = mean;
    out->cv = mean > 0 ? sqrt(var / rows) / mean : 0;
    out->empty = (double)empty / rows;
}

static double ell_fill(const struct pb_spmv_row_stats *s)
{
    return s->nnz ? (double)s->rows * s->max_len / (double)s->nnz : 1;
}

enum pb_spmv_pick pb__spmv_auto_pick(const struct pb_spmv_row_stats *s)
{
    return ell_fill(s) <= 2 ? PB_PICK_ELLT : PB_PICK_BALANCED;
}

void pb__spmv_pick_note(const char *kernel, const struct pb_spmv_row_stats *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s: ELL fill %.2f, rows %.1f +- %.0f%%, longest %d, %.0f%% empty", kernel, ell_fill(s),
             s->mean, 100 * s->cv, s->max_len, 100 * s->empty);
}

void pb__bal_free(struct pb_bal_plan *p)
{
    if (!p)
        return;
    pb__host_free(p->blocks);
    pb__host_free(p->pieces);
    memset(p, 0, sizeof *p);
}

int pb__panels_for(double x_bytes, double share_bytes)
{
    const char *env = getenv("PARBENCH_PANELS");
    int forced = env ? atoi(env) : 0;
    if (forced >= 1 && forced <= PB_PANELS_MAX)
        return forced;
    if (!(share_bytes > 0) || x_bytes <= share_bytes)
        return 0;
    double n = ceil(x_bytes / share_bytes);
    return n > PB_PANELS_MAX ? PB_PANELS_MAX : (int)n;
}

int pb__panels_for_rows(double x_bytes, double coarse_bytes, double fine_bytes, double mean_row)
{
    int coarse = pb__panels_for(x_bytes, coarse_bytes), fine = pb__panels_for(x_bytes, fine_bytes);
    double by_rows = mean_row / PB_PANEL_ROW_MIN;
    if (fine > by_rows)
        fine = (int)by_rows;
    return fine >= 2 && fine > coarse ? fine : coarse;
}

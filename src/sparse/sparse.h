/* Sparse matrices on the host: the formats the spmv kernels read, built from
 * COO, and generated test matrices. */
#ifndef PARBENCH_SPARSE_H
#define PARBENCH_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parbench/pb_kernels.h"
#include "parbench/pb_matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads (work-items) cooperating on one CSR row when args->group leaves it
 * open: the largest power of two up to 32 and a third of the mean row length
 * (measured on an H100: one per row wins for Laplacians, 4-16 for rows of
 * 16-70). Shared by the CUDA and OpenCL csr-vector kernels. */
int pb__spmv_row_group(const struct pb_spmv_args *args);

/* CSR row offsets of m (its cols/values arrays are CSR's idx/val as they
 * are). PB_ERR_UNSUPPORTED when nnz does not fit int32 offsets. */
pb_status pb__csr_offsets(const struct pb_coo *m, int32_t **ptr);
/* The same in 64 bits, for any nnz. */
pb_status pb__csr_offsets64(const struct pb_coo *m, int64_t **ptr);

/* A device buffer holding bytes copied from src; one of n values converted
 * to prec (through a temporary when float). */
pb_status pb__upload(pb_device *dev, const void *src, size_t bytes, pb_buf **out);
pb_status pb__upload_values(pb_device *dev, const double *v, size_t n, enum pb_precision prec, pb_buf **out);

/* Longest row of m. */
int32_t pb__coo_max_row(const struct pb_coo *m);
/* Columns of m holding at least one entry: the entries of x a product reads. */
int32_t pb__coo_cols_used(const struct pb_coo *m);

/* ELLPACK of m: width = longest row, idx/val[rows * width] row by row, or
 * column by column when transposed; padding has column -1 and value 0.
 * Refused (PB_ERR_UNSUPPORTED, with the numbers) when the stored entries
 * would exceed max_fill times the non-zeros: one long row (dc1: 114190 in a
 * matrix averaging 6.6) would otherwise cost gigabytes. */
struct pb_ell {
    int32_t rows, width;
    bool transposed;
    int32_t *idx;
    double *val;
};
pb_status pb__ell_build(const struct pb_coo *m, bool transposed, double max_fill, struct pb_ell *out);
void pb__ell_free(struct pb_ell *e);

/* Block CSR: the matrix cut into b x b blocks, each block holding a
 * non-zero stored whole (row-major, its zeros too) under one column index.
 * A matrix of small dense blocks (b unknowns per mesh node) then moves one
 * index per block instead of one per entry. Block row i holds blocks
 * ptr[i]..ptr[i + 1] (block columns idx[], ascending); rows and columns past
 * the matrix in the last block row and column are zero. */
#define PB_BCSR_MAX_B 8
struct pb_bcsr {
    int32_t b, block_rows, block_cols, blocks;
    int32_t *ptr, *idx;
    void *val; /* blocks * b * b values of the CSR's type */
};
/* The block size b in 2..PB_BCSR_MAX_B whose BCSR moves the fewest bytes
 * per product (values of elt bytes, 32-bit indices and offsets), estimated
 * on up to 64 windows of rows spread over CSR (ptr, idx); *ratio = those
 * bytes / CSR's (below 1: BCSR moves less). Where 2x2 blocks already move
 * over 1.5x CSR's bytes, the larger sizes are not tried (2 is returned).
 * 0 for a matrix without non-zeros or out of host memory. */
int pb__bcsr_pick(const int32_t *ptr, const int32_t *idx, int32_t rows, int32_t cols, size_t elt, double *ratio);
/* Those windows: rows [first[w], last[w]) for w below the count returned
 * (idx is read there alone, so a caller may bring back just those rows). */
#define PB_BCSR_WINDOWS 64
int pb__bcsr_windows(int32_t rows, int32_t *first, int32_t *last);
/* BCSR with b x b blocks of CSR (ptr, idx, val of elt = 4 (float) or 8
 * (double) bytes); duplicate entries are summed. */
pb_status pb__bcsr_build(const int32_t *ptr, const int32_t *idx, const void *val, size_t elt, int32_t rows,
                         int32_t cols, int b, struct pb_bcsr *out);
void pb__bcsr_free(struct pb_bcsr *m);
/* PARBENCH_BCSR_B=2..8: the block size the bcsr variants impose (tests run
 * their kernels on matrices without blocks); else 0. */
int pb__bcsr_forced_b(void);
/* PB_ERR_UNSUPPORTED saying that b x b blocks, the best size, would move
 * `ratio` times CSR's bytes (b < 2: no non-zeros sampled). */
pb_status pb__bcsr_refuse(int b, double ratio);
/* Block ELLPACK, transposed, of m (BELLPACK without its reordering of rows):
 * every block row padded to *width, the most blocks of any block row. Slot j
 * of block row i holds block column idx[j * block_rows + i] (-1: padding)
 * and entry (r, c) of its block at val[(j * b + c) * block_rows * b + i * b
 * + r], so GPU threads of consecutive rows read consecutive values, as in
 * ELLPACK, with one index per block. Refused (PB_ERR_UNSUPPORTED) where
 * the slots would exceed max_fill times the blocks. idx and val are freed
 * with pb__host_free. */
pb_status pb__bcsr_ellt(const struct pb_bcsr *m, size_t elt, double max_fill, int32_t *width, int32_t **idx,
                        void **val);

/* DIA: the matrix as diagonals, for stencils and bands: diagonal q (column -
 * row = offset[q], ascending) stored over the rows it spans, first[q] to
 * first[q] + count[q] - 1, its values from val[start[q]] on, 0 where the
 * matrix has no entry. No column indices; x is read in one stream per
 * diagonal, and a diagonal filled only in part (a band's far couplings, a
 * renumbered block's) costs only that part. */
#define PB_DIA_MAX_DIAGS 64
struct pb_dia_shape {
    int diags;
    int64_t offset[PB_DIA_MAX_DIAGS];
    int32_t first[PB_DIA_MAX_DIAGS], count[PB_DIA_MAX_DIAGS];
};
struct pb_dia {
    int32_t rows, cols, diags;
    int64_t *offset, *start;
    int32_t *first, *count;
    void *val; /* the diagonals' values, one after the other, of the CSR's type */
};
/* The distinct diagonals of CSR (ptr, idx) and the rows each spans into
 * *shape, ascending; returns their count: 0 where there are more than
 * PB_DIA_MAX_DIAGS (the pass stops there) or no non-zeros. *ratio = DIA's
 * stored values over CSR's values, indices and offsets, in bytes (below 1:
 * DIA moves less). */
int pb__dia_pick(const int32_t *ptr, const int32_t *idx, int32_t rows, int32_t cols, size_t elt,
                 struct pb_dia_shape *shape, double *ratio);
/* DIA of CSR on the diagonals pb__dia_pick found; duplicate entries are summed. */
pb_status pb__dia_build(const int32_t *ptr, const int32_t *idx, const void *val, size_t elt, int32_t rows,
                        int32_t cols, const struct pb_dia_shape *shape, struct pb_dia *out);
void pb__dia_free(struct pb_dia *m);
/* PB_ERR_UNSUPPORTED saying why DIA does not pay (diags 0: too many). */
pb_status pb__dia_refuse(int diags, double ratio);

/* Generated matrices, for sizes beyond the files and for the classes of
 * matrices kernels trip on (values in (-1, 1) unless said, columns sorted,
 * seeded):
 *   lap2d:N            5-point Laplacian on an N x N grid (N^2 rows, 4 on the diagonal, -1 around)
 *   lap3d:N            7-point Laplacian on an N x N x N grid
 *   plap2d:N           lap2d:N with rows and columns renumbered by one random permutation
 *   random:ROWS[:K]    K (default 16) uniformly random columns per row, duplicates merged
 *   powerlaw:ROWS[:K]  row lengths Pareto-distributed (alpha 2) with mean about K (default 16)
 *   pareto:ROWS[:K[:ALPHA[:EMPTY]]]  Pareto row lengths of shape ALPHA (default 1.5; near 1 gives
 *                      rows of tens of thousands) and mean K (8), a fraction EMPTY (0) of rows empty
 *   dense:ROWS[:K[:D[:LEN]]]  D (8) rows of LEN (20000) among rows of K (3), one row in 20 empty
 *   gaps:ROWS[:K]      rows of K (8) with the first ROWS/100, the last, and runs of 1-256 rows empty
 *   rect:ROWS:COLS[:K] a ROWS x COLS matrix, K (16) random columns per row
 *   blocks:ROWS[:B[:K]]  dense B x B blocks (3), K (6) per block row within 32 block columns of
 *                      the diagonal (FEM-like)
 *   band:ROWS[:W[:F]]  2W+1 diagonals (W = 3) and F (2) far ones, wrapping
 *   rmat:SCALE[:K]     a Kronecker graph (Graph500's odds): 2^SCALE vertices, K (16) edges per
 *                      vertex drawn, heavy-tailed rows and columns, vertices shuffled
 * Random lengths are capped at the columns; sizes take k/M/G suffixes. True
 * when spec names a generator (whether or not it parses:
 * pb__sparse_generate says what is wrong). */
#define PB_SPARSE_GENERATORS                                                                         \
    "lap2d:N, lap3d:N, plap2d:N, random:ROWS[:K], powerlaw:ROWS[:K], pareto:ROWS[:K[:ALPHA[:EMPTY]]], " \
    "dense:ROWS[:K[:D[:LEN]]], gaps:ROWS[:K], rect:ROWS:COLS[:K], blocks:ROWS[:B[:K]], band:ROWS[:W[:F]], " \
    "rmat:SCALE[:K]"
/* Hub columns (csr-hubs). Where a few columns hold most of the entries (a
 * graph's heavy-tailed in-degrees), their entries of x lie scattered over x,
 * a cache line each, and the gathers that keep coming back to them miss
 * caches that would hold them packed. The hubs are the columns of at least
 * PB_HUB_FACTOR times the mean count of entries, hottest first; renumbered,
 * x reads as the hubs' entries followed by all of x as it is, so label[c],
 * column c's place in it, is its place among the hubs, else hubs + c (the
 * other columns keep their order, and whatever locality it had). OpenMP
 * copies x so before each product (reading a hub from a copy of the hubs
 * and any other column from x, a choice per entry, ran no faster on a
 * 2-core Xeon VM: 0.82-1.14x csr, the copy 0.83-1.17x); CUDA copies the
 * hubs alone and reads labels of hubs + c from x[c].
 * pb__hubs_plan fills label[cols] (which may be count itself) and out (list
 * malloc'ed: pb__hubs_free) from the entries per column; PB_ERR_UNSUPPORTED where the hubs hold less
 * than PB_HUB_SHARE of the entries, unless `any`. */
#define PB_HUB_FACTOR 4
#define PB_HUB_SHARE 0.3
struct pb_hubs {
    int32_t *list; /* the hub columns, hottest first */
    int32_t n;
    double share; /* of the entries, in hub columns */
};
pb_status pb__hubs_plan(const int32_t *count, int32_t cols, int64_t nnz, bool any, struct pb_hubs *out,
                        int32_t *label);
void pb__hubs_free(struct pb_hubs *h);
/* PB_ERR_UNSUPPORTED, saying the hubs hold `share` of the entries. */
pb_status pb__hubs_refuse(double share);

bool pb__sparse_is_generated(const char *spec);
/* Whether spec parses (PB_ERR_INVALID / PB_ERR_PARSE with a message), without generating. */
pb_status pb__sparse_check(const char *spec);
pb_status pb__sparse_generate(const char *spec, uint64_t seed, struct pb_coo *out);
/* One rank's rows without the whole matrix, for the generators whose rows
 * need no others (lap2d, lap3d; pb__sparse_rows_alone says): the lengths of
 * every row (*lengths malloc'ed), and rows [first, first + count) as COO of
 * the whole shape (global row numbers), what pb__coo_read_rows gives for a
 * file. The other generators are PB_ERR_UNSUPPORTED. */
bool pb__sparse_rows_alone(const char *spec);
pb_status pb__sparse_row_lengths(const char *spec, int32_t *rows, int32_t *cols, int64_t **lengths);
pb_status pb__sparse_generate_rows(const char *spec, int32_t first, int32_t count, struct pb_coo *out);
/* The zoo: one generated matrix of each class above, about ROWS rows each
 * (`zoo` = zoo:1M): heavy-tailed (alpha 1.3 with 10% empty rows, and 2.5),
 * power law, dense rows among short ones, empty-row runs, a permuted
 * Laplacian, wide and tall rectangles, 3x3 and 6x6 blocks, banded with far
 * diagonals, uniform random, a 3D Laplacian. pb__sparse_zoo puts the specs
 * in out[0..*n) (max >= 13), in storage that lives as long as the process. */
#define PB_SPARSE_SPEC_MAX 64
#define PB_SPARSE_ZOO_ROWS (1 << 20)
bool pb__sparse_is_zoo(const char *spec);
pb_status pb__sparse_zoo(const char *spec, const char **out, size_t max, size_t *n);
/* specs[0..n) with every zoo spec replaced by its members, into out[max]. */
pb_status pb__sparse_expand(char *const *specs, size_t n, const char **out, size_t max, size_t *n_out);
/* Whether spec, a generator or a Matrix Market file, can be used, before
 * anything is read: a generator that parses, a file that is readable; `who`
 * starts the message. */
pb_status pb__sparse_spec_check(const char *spec, const char *who);
/* The matrix spec names: generated from seed, or read from the file
 * (complex_real: complex entries by their real part, else refused). */
pb_status pb__sparse_load(const char *spec, uint64_t seed, bool complex_real, struct pb_coo *out);

/* Rows over ranks in contiguous blocks (first[ranks + 1]: rank r owns rows
 * [first[r], first[r + 1])): by_nnz puts each boundary at the first row whose
 * offset reaches r/ranks of the non-zeros, else rows / ranks each. Ranks
 * past the end own none. */
void pb__partition_rows(const int32_t *ptr, int32_t rows, int ranks, bool by_nnz, int32_t *first);
/* The x (column) blocks: the row blocks when square, else even blocks. */
void pb__partition_cols(const int32_t *row_first, int32_t rows, int32_t cols, int ranks, int32_t *first);
/* The rank whose block of first[] holds j. */
int pb__partition_owner(const int32_t *first, int ranks, int32_t j);

/* What one rank of a partition computes and exchanges in y = A x. */
struct pb_part_stats {
    int64_t rows, nnz, nnz_interior; /* interior rows need no x from other ranks */
    int64_t boundary_rows, nnz_boundary_own; /* the others, and their entries in its own columns */
    int64_t own_cols;                /* x entries it owns */
    int64_t halo;                    /* x entries it receives */
    int64_t sent;                    /* x entries it sends, once per receiving rank */
    int neighbours;                  /* ranks it receives from or sends to */
};
/* spmv-dist's choices, shared with parbench project's model. --halo auto
 * gathers x whole where some rank's halo is at least this share of the x
 * entries the other ranks own. */
#define PB_DIST_GATHER_FROM_SHARE 0.5
/* --split auto: a rank's boundary rows run their own columns ahead of the
 * halo where those rows hold at least half its non-zeros (power-law rows:
 * nearly all) and at least one own entry per row (each row gains one entry,
 * which adds the early part). */
bool pb__dist_split_pays(int64_t nnz, int64_t nnz_boundary, int64_t boundary_rows, int64_t nnz_boundary_own);

/* The statistics of every rank (out[ranks]) of the partition spmv-dist
 * makes, counted without running it: O(nnz + ranks^2). */
pb_status pb__partition_stats(const int32_t *ptr, const int32_t *idx, int32_t rows, int32_t cols, int ranks,
                              bool by_nnz, struct pb_part_stats *out);

/* A 2D partition: ranks on a grid of pr x pc, rank (i, j) = i * pc + j holding
 * the entries of row block i and column block j. y and x are cut in pr * pc
 * chunks as spmv-dist's rows and columns would be for that many ranks; row
 * block i is y chunks [i pc, (i + 1) pc), column block j x chunks [j pr,
 * (j + 1) pr); rank k owns y chunk k, and x chunk j pr + i is rank (i, j)'s.
 * A product: x expanded down each processor column, the local product, the
 * partial y folded along each processor row, then (square matrices) each y
 * chunk moved to the rank that owns it as x for the next product. */
struct pb_part2d_phase {
    int64_t recv, sent; /* vector entries */
    int from, to;       /* messages received and sent */
};
struct pb_part2d_stats {
    int64_t nnz;
    struct pb_part2d_phase expand, fold, move;
};
/* pr x pc for ranks: the most square grid (pr the largest divisor <= sqrt). */
void pb__partition_grid(int ranks, int *pr, int *pc);
/* The statistics of every rank (out[pr * pc]) of that partition: O(nnz + ranks). */
pb_status pb__partition_stats_2d(const int32_t *ptr, const int32_t *idx, int32_t rows, int32_t cols, int pr, int pc,
                                 bool by_nnz, struct pb_part2d_stats *out);

#ifdef __cplusplus
}
#endif

#endif

/* The work plan of the load-balanced CSR SpMV kernels (CUDA csr-balanced,
 * OpenCL csr-balanced), made once per matrix from its row offsets.
 *
 * Rows of at most PB_BAL_LONG entries are packed, in order, into blocks of
 * at most block_nnz entries and PB_BAL_ROWS rows: one thread block each, which
 * stages the block's products and row offsets in shared memory with coalesced
 * loads and then sums each
 * row with `group` threads (a power of two: about the block's mean row
 * length, and enough that its longest row takes at most 8 steps), in at most
 * PB_BAL_PASSES passes over its rows (so a run of empty rows is split too).
 * With warp_rows, the group follows the mean alone, rows of up to
 * PB_BAL_WARP_LONG stay in the blocks, and the rows longer than 8 steps of
 * the group (PB_BAL_STEPS) are the kernel's to give a warp each: one row of
 * 200 among rows of 3 no longer widens the group of all of them, nor ends
 * the block.
 * Longer rows are cut into pieces of PB_BAL_PIECE entries, a thread block
 * each; the pieces of one row write partial sums, and the last to finish adds
 * them in piece order, so the result is the same on every run. */
#ifndef PARBENCH_SPARSE_BALANCE_H
#define PARBENCH_SPARSE_BALANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parbench/pb.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PB_BAL_THREADS 256 /* threads per block */
#define PB_BAL_NNZ 2048    /* entries per block of short rows by default (8 per thread) */
#define PB_BAL_NNZ_MAX 4096 /* the most a plan may be asked for */
#define PB_BAL_ROWS 1024   /* rows per block at most (their offsets are staged too) */
#define PB_BAL_LONG 256    /* longer rows are cut into pieces */
#define PB_BAL_WARP_LONG 1024 /* the same with warp_rows: a warp sums up to 32 steps of a row */
#define PB_BAL_PIECE 4096  /* entries per piece (16 per thread) */
#define PB_BAL_PASSES 16   /* passes of the threads over a block's rows */
#define PB_BAL_STEPS 8     /* a row of more than group * PB_BAL_STEPS entries: a warp's, with warp_rows */

struct pb_bal_block {
    int32_t row0, row1; /* rows [row0, row1), none longer than PB_BAL_LONG */
    int32_t k0, k1;     /* their entries: ptr[row0], ptr[row1] */
    int32_t group;      /* threads per row: 1, 2, 4, 8, 16 or 32 */
};

struct pb_bal_piece {
    int32_t row;
    int32_t k0, k1;  /* the piece's entries */
    int32_t part;    /* its partial sum's slot */
    int32_t first;   /* the row's first slot (and its counter) */
    int32_t pieces;  /* the row's pieces; 1 = the piece writes y itself */
};

struct pb_bal_plan {
    struct pb_bal_block *blocks;
    struct pb_bal_piece *pieces;
    int32_t n_blocks, n_pieces;
    int32_t n_parts;  /* partial-sum slots (rows of more than one piece) */
    int32_t long_rows;
    int32_t block_nnz;
};

/* Row-length statistics of a CSR matrix (what `auto` variants decide on). */
struct pb_spmv_row_stats {
    int32_t rows, cols, max_len;
    int64_t nnz;
    double mean, cv;      /* mean row length; its standard deviation / mean */
    double empty;         /* fraction of rows that are empty */
};
void pb__spmv_row_stats_of(const int32_t *ptr, int32_t rows, int32_t cols, struct pb_spmv_row_stats *out);
/* Whether CSR row offsets read back agree with the arguments (ptr[0] = 0,
 * ptr[rows] = nnz, never decreasing); PB_ERR_INVALID saying where not. The
 * plans built from them would otherwise index past the arrays. */
pb_status pb__csr_offsets_agree(const int32_t *ptr, int32_t rows, int64_t nnz);

/* What an `auto` SpMV variant runs for a matrix of these statistics (CUDA's
 * and OpenCL's read PB_PICK_ELLT as "ELLT may run" and time it against the
 * others): ELLPACK transposed (a converted copy) when padding rows to the
 * longest at most doubles the entries (on a GPU a thread per row then reads
 * coalesced, with no reduction; rows of 1024 in float ran 1.7x OpenCL's
 * next kernel on an H200), else the load-balanced CSR kernel (or what the
 * backend has nearest to it). */
enum pb_spmv_pick {
    PB_PICK_ELLT,
    PB_PICK_BALANCED,
    PB_PICK_SPLIT, /* csr-split, block CSR, diagonals, column panels, csr-vector and hub columns: CUDA's timed picks */
    PB_PICK_BCSR,
    PB_PICK_DIA,
    PB_PICK_PANELS,
    PB_PICK_VECTOR,
    PB_PICK_HUBS
};
enum pb_spmv_pick pb__spmv_auto_pick(const struct pb_spmv_row_stats *s);

/* csr-panels (CUDA, OpenMP): how many panels of columns a matrix is cut into
 * where its x (x_bytes) outgrows share_bytes of the cache the gathers of x
 * should hit: ceil(x_bytes / share_bytes), at most PB_PANELS_MAX; 0 where x
 * fits. PARBENCH_PANELS=N (1..PB_PANELS_MAX) imposes N, for tests on small
 * matrices. */
#define PB_PANELS_MAX 64
int pb__panels_for(double x_bytes, double share_bytes);
/* The same where a second, smaller share (fine_bytes: a private cache) is
 * worth cutting for: rows long enough that each of its panels still gets
 * PB_PANEL_ROW_MIN entries of a row on average (mean_row) make panels for
 * fine_bytes, where those are more than the coarse rule's. */
#define PB_PANEL_ROW_MIN 8
int pb__panels_for_rows(double x_bytes, double coarse_bytes, double fine_bytes, double mean_row);
/* "KERNEL: ELL fill 1.04, rows 7.0 +- 8%, ..." for the row's note. */
void pb__spmv_pick_note(const char *kernel, const struct pb_spmv_row_stats *s, char *buf, size_t len);

/* The plan for CSR row offsets ptr[rows + 1], blocks of at most block_nnz
 * entries (a multiple of PB_BAL_THREADS up to PB_BAL_NNZ_MAX); warp_rows as
 * above. PB_ERR_NOMEM, PB_ERR_INVALID. */
pb_status pb__bal_plan(const int32_t *ptr, int32_t rows, int32_t block_nnz, bool warp_rows, struct pb_bal_plan *out);
void pb__bal_free(struct pb_bal_plan *p);

#ifdef __cplusplus
}
#endif
#endif

/* parbench: the kernel library API.
 *
 * Each kernel family has an argument struct; a kernel is called on a device by
 * variant name ("ijk", "blocked", "openblas", ...), or with NULL for the
 * backend's default (pb_kernel_default). Buffers belong to the same device.
 * pb_kernel_variants() lists what a backend offers. */
#ifndef PARBENCH_PB_KERNELS_H
#define PARBENCH_PB_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parbench/pb.h"
#include "parbench/pb_backend.h"
#include "parbench/pb_matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* C = alpha * A * B + beta * C, row-major. A is m x k (lda >= k), B is k x n
 * (ldb >= n), C is m x n (ldc >= n). beta == 0 means C is not read (it may
 * hold NaN). A and B hold pb_precision_size(prec)-byte elements; C holds
 * doubles for PB_DOUBLE and floats otherwise: the tensor-core types PB_TF32,
 * PB_BF16 and PB_FP16 are multiplied with fp32 accumulation into an fp32 C,
 * only by variants flagged PB_VARIANT_LOWP (others report
 * PB_ERR_UNSUPPORTED). PB_TF32's fp32 inputs are used as TF32: values with
 * more mantissa bits are rounded or truncated as the hardware does, so pass
 * values already rounded (parbench's benchmark does) for the same result on
 * every variant. m or n 0: nothing is done; k 0: C = beta * C (A and B, which
 * hold nothing, may be NULL). */
struct pb_gemm_args {
    enum pb_precision prec;
    size_t m, n, k;
    double alpha, beta;
    const pb_buf *a;
    size_t lda;
    const pb_buf *b;
    size_t ldb;
    pb_buf *c;
    size_t ldc;
    /* Launch shape, 0 = the variant's choice; only variants flagged
     * PB_VARIANT_SHAPED (the naive GPU kernels) take one, the others report
     * PB_ERR_UNSUPPORTED. A work-group (thread block) of block_x x block_y
     * work-items, x along the columns of C (both set or both 0), and at most
     * `groups` work-groups: fewer than C needs make each work-item loop over
     * several elements of C. */
    unsigned block_x, block_y;
    size_t groups;
};

/* Storage formats of a sparse matrix on a device (32-bit indices):
 * CSR     ptr[rows + 1] (int32 offsets; int64 where ptr_bits is 64, for
 *         more than 2^31 - 1 non-zeros), idx[nnz] columns, val[nnz];
 * ELL     every row padded to `width` entries, idx/val[rows * width] row by
 *         row; padding has column -1 and value 0;
 * ELLT    ELL stored column by column (entry j of row i at j * rows + i), so
 *         consecutive rows are consecutive addresses. */
enum pb_sparse_format { PB_SPARSE_CSR = 0, PB_SPARSE_ELL, PB_SPARSE_ELLT };

/* y = A * x with A rows x cols in `format`; values, x and y are prec-sized.
 * Variants work on one format (pb_spmv_format() says which) and report
 * PB_ERR_UNSUPPORTED for another. A matrix without entries (nnz 0, ELL width
 * 0) or columns gives y = 0 (the arrays holding nothing may be NULL). */
struct pb_spmv_args {
    enum pb_precision prec;
    enum pb_sparse_format format;
    int32_t rows, cols;
    int64_t nnz;      /* non-zeros (CSR: ptr[rows]) */
    int32_t width;    /* ELL, ELLT: entries per row */
    const pb_buf *ptr, *idx, *val;
    const pb_buf *x;
    pb_buf *y;
    /* Tuning of GPU variants, 0 = the variant's choice: threads cooperating
     * on one row (a power of two up to 32) and threads per block (a multiple
     * of 32 up to 1024). */
    int group, block;
    /* CSR row offsets: 32 (or 0) = int32_t, 64 = int64_t, which only variants
     * flagged PB_VARIANT_PTR64 read (the others report PB_ERR_UNSUPPORTED
     * naming those that do). Needed beyond 2^31 - 1 non-zeros. */
    int ptr_bits;
};

/* Peak-rate kernels (the `peak` benchmark behind parbench ceilings).
 * "fma": for every i < n, PB_PEAK_CHAINS independent chains x <- x*a + b
 * (one fused multiply-add each) run `iters` times from
 * x = 1 + (i % 64) / 64 + chain / 8; out[i] = the sum of the chains. No
 * loads: only arithmetic and one store per element.
 * "read": out[0..groups) = partial sums of in[0..n) (any partition: their
 * total is the sum); reads every element once, writes groups elements.
 * "copy": out[i] = in[i] for i < n (STREAM's Copy), bit for bit. */
#define PB_PEAK_CHAINS 8
struct pb_peak_args {
    enum pb_precision prec;
    size_t n;
    unsigned iters;  /* fma */
    double a, b;     /* fma */
    const pb_buf *in; /* read, copy */
    pb_buf *out;
    size_t groups;   /* read: elements of out */
};

/* Separable 2D convolution, row pass then column pass, with a 1D filter of
 * 2*radius+1 taps (correlation: out[x] = sum_k filter[k] * in[x + k - radius]).
 * The image is row-major, width elements per row. `in` holds in_rows rows, of
 * which rows [in_top, in_top + height) are the ones to filter; the others are
 * halo rows above and below (a horizontal strip of a larger image). Rows
 * outside `in` are outside the image: zero, or a copy of the nearest row of
 * `in` for clamp (strips are cut only at the image's edges, so that is the
 * image's edge row). Columns outside [0, width) are treated the same way.
 * tmp holds in_rows x width elements (the row pass, in a layout of the
 * variant's choosing; every variant may use it), out height x width.
 * Elements and filter taps are prec-sized. radius is 1 to 4096, border one of
 * the enum's, in_top + height <= in_rows; otherwise, or when a buffer is
 * NULL or smaller than said, PB_ERR_INVALID (PB_ERR_OVERFLOW for sizes past
 * size_t). An empty image (width or height 0) does nothing. */
enum pb_conv_border { PB_CONV_ZERO = 0, PB_CONV_CLAMP = 1 };
/* The largest radius: beyond it a filter is mostly halo and the variants'
 * buffers of 2R+1 rows grow past any cache. */
#define PB_CONV_MAX_RADIUS 4096

struct pb_conv_args {
    enum pb_precision prec;
    size_t width, height;
    size_t in_rows, in_top;
    size_t radius;
    enum pb_conv_border border;
    const pb_buf *filter; /* 2*radius+1 taps */
    const pb_buf *in;
    pb_buf *tmp;
    pb_buf *out;
};

/* Flags of a variant. */
#define PB_VARIANT_ANCHOR 1u /* a vendor library, shown for comparison */
#define PB_VARIANT_BOUND 2u  /* a speed bound that does not compute the family's result (transpose's
                                `copy` moves the same bytes without transposing: out = in) */
#define PB_VARIANT_WORKSPACE 4u /* needs scratch memory (see pb_kernel_workspace) */
#define PB_VARIANT_HIDDEN 8u /* test-only (a planted fault): not listed, run only when --variant names
                                it as BACKEND/NAME */
#define PB_VARIANT_VARIES 16u /* the result may differ from run to run (atomic additions in an order
                                 that varies): parbench checks every repetition */
#define PB_VARIANT_SHAPED 32u /* gemm: takes the launch shape of pb_gemm_args (block_x, block_y, groups) */
#define PB_VARIANT_LOWP 64u /* gemm: takes the tensor-core types PB_TF32, PB_BF16, PB_FP16 (fp32
                               accumulation and output); variants without it take float and double only */
#define PB_VARIANT_PTR64 128u /* spmv: reads CSR with 64-bit row offsets (pb_spmv_args.ptr_bits 64) */

/* out = in^T: in is rows x cols (ld_in >= cols), out is cols x rows (ld_out >=
 * rows), both row-major, prec-sized elements. Variants flagged
 * PB_VARIANT_BOUND copy instead: out is then rows x cols (ld_out >= cols).
 * Each variant's out must fit its own shape, and in and out must not share
 * memory (no variant transposes in place): PB_ERR_INVALID otherwise. */
struct pb_transpose_args {
    enum pb_precision prec;
    size_t rows, cols;
    const pb_buf *in;
    size_t ld_in;
    pb_buf *out;
    size_t ld_out;
};

/* Element and accumulator types of a sum. Integers are summed modulo 2^32 (the
 * wrap-around of two's-complement int32 addition), which is exact and the same
 * in every order. */
enum pb_reduce_type {
    PB_REDUCE_FLOAT = 0,        /* float elements, float accumulators, float result */
    PB_REDUCE_FLOAT_DOUBLE = 1, /* float elements, double accumulators, double result */
    PB_REDUCE_INT = 2,          /* int32 elements, int32 result modulo 2^32 */
};

/* *out = in[0] + ... + in[n-1]. out holds one scalar of the result type at
 * offset 0 (n == 0 gives 0). work is scratch of at least
 * pb_kernel_workspace() bytes (NULL when that is 0), zero-filled once by the
 * caller before its first use; variants leave any counters they keep there at
 * zero, so it can be reused without refilling. */
struct pb_reduce_args {
    enum pb_reduce_type type;
    size_t n;
    const pb_buf *in;
    pb_buf *out;
    pb_buf *work;
    size_t work_bytes;
};

/* Bytes of an element and of the result of a reduce type; "float",
 * "float+double-sum", "int32". */
size_t pb_reduce_elem_size(enum pb_reduce_type t);
size_t pb_reduce_result_size(enum pb_reduce_type t);
const char *pb_reduce_type_name(enum pb_reduce_type t);

/* Memory-access microbenchmarks (the coalescing and bank-conflict curves),
 * one variant per pattern:
 *   global-offset  out[i + step] = in[i + step] for i < n (misaligned start);
 *                  in and out hold n + step elements;
 *   global-stride  out[i * step] = in[i * step] for i < n (step >= 1);
 *                  (n - 1) * step + 1 elements;
 *   shared-stride  each block stages in[0..PB_ACCESS_SHARED_ELEMS) in shared
 *                  memory, then out[i] = sum over k < PB_ACCESS_SHARED_LOADS of
 *                  s[(t * step + k) mod PB_ACCESS_SHARED_ELEMS], t = i mod
 *                  PB_ACCESS_BLOCK (the thread in its block), summed in order
 *                  in the element type; step 0 = one address for all threads
 *                  (a broadcast); in holds PB_ACCESS_SHARED_ELEMS elements,
 *                  out n.
 * Elements not named are neither read nor written. */
#define PB_ACCESS_SHARED_ELEMS 4096
#define PB_ACCESS_SHARED_LOADS 256
#define PB_ACCESS_BLOCK 256
struct pb_access_args {
    enum pb_precision prec;
    size_t n, step;
    const pb_buf *in;
    pb_buf *out;
};

/* Copies between two devices of one backend (the p2p benchmark; the only
 * family whose buffers are on two devices). Direction 0 copies src[0] (on
 * dev[0]) into dst[0] (on dev[1]); variants that copy both ways at once
 * (directions = 2) also src[1] (on dev[1]) into dst[1] (on dev[0]). Each
 * direction copies `bytes` bytes `copies` times back to back. stream[g] is a
 * stream of dev[g]; a direction is issued on a stream of the device that
 * drives it. gate: 8 bytes of pinned host memory the variant uses to hold
 * its work back until all of it is queued. The run blocks until the copies
 * are done and writes *result: the seconds from the release of the gate to
 * the end of the slowest direction, and whether the devices reached each
 * other's memory directly (peer = 0: the driver staged the copy through host
 * memory). */
struct pb_p2p_result {
    double seconds;
    int peer;
};

struct pb_p2p_args {
    pb_device *dev[2];
    const pb_buf *src[2];
    pb_buf *dst[2];
    int directions;
    size_t bytes, copies;
    pb_stream *stream[2];
    pb_buf *gate;
    struct pb_p2p_result *result;
};

struct pb_variant_desc {
    const char *bench;   /* "gemm" */
    const char *name;    /* "blocked" */
    const char *summary; /* one line */
    unsigned flags;
};

/* Variants of `bench` offered by backend b (all benches when bench is NULL),
 * but the hidden test-only ones: fills up to max entries (none when out is
 * NULL), returns the total number (0 for a NULL backend). */
size_t pb_kernel_variants(const pb_backend *b, const char *bench, struct pb_variant_desc *out,
                          size_t max);

/* Run variant `variant` of kernel family `bench` on dev with the family's
 * argument struct; blocks until done. variant NULL runs pb_kernel_default's
 * choice. PB_ERR_NOT_FOUND for an unknown variant, PB_ERR_UNSUPPORTED when the
 * variant cannot handle these arguments. The buffers the kernel writes count
 * as changed (pb_buf_modified, pb_backend.h), so variants reading them later
 * do not use what they derived from their old content. An empty problem (a
 * dimension 0) is finished without the variant. */
pb_status pb_kernel_run(pb_device *dev, const char *bench, const char *variant, const void *args);

/* The same, queued on stream s (NULL = the default stream) without waiting. */
pb_status pb_kernel_launch(pb_device *dev, const char *bench, const char *variant, const void *args,
                           pb_stream *s);

/* Scratch bytes variant `variant` (NULL: the default) of `bench` needs for
 * these arguments (the `work` member of the family's struct); 0 for variants
 * that need none. PB_ERR_INVALID when dev, bench, args or bytes is NULL. */
pb_status pb_kernel_workspace(pb_device *dev, const char *bench, const char *variant, const void *args,
                              size_t *bytes);

/* The variant that variant NULL runs: the first of this list that dev's
 * backend has and that takes args (its format, for spmv; args NULL: any),
 * i.e. each backend's fastest kernel of its own that computes the family's
 * result. Vendor libraries (anchors) and bounds are never the default.
 *   gemm       regblock (cuda, opencl), blocked (openmp), ikj (ref);
 *              tf32, bf16, fp16: wgmma (cuda, compute capability 9.0),
 *              tc (cuda), ikj (ref)
 *   spmv       CSR: auto, csr-vector (cuda, opencl), csr (openmp, ref);
 *              64-bit offsets: auto (openmp), csr-vector (cuda, opencl), csr (ref);
 *              ELL: ell; ELLT: ellt
 *   conv       regs (cuda), fused (cuda, R <= 64), tiled (cuda, opencl),
 *              ring (openmp), rowcol (ref)
 *   transpose  padded (cuda, opencl), blocked (openmp), loops (ref)
 *   reduce     last-block (cuda: deterministic, one pass, needs a workspace),
 *              multiple-per-thread (opencl), pairwise (openmp, ref)
 * *variant is a static string. PB_ERR_NOT_FOUND when the backend has none of
 * the family's defaults (name one: pb_kernel_variants), PB_ERR_UNSUPPORTED
 * when none takes these arguments, PB_ERR_INVALID for invalid arguments. */
pb_status pb_kernel_default(pb_device *dev, const char *bench, const void *args, const char **variant);

/* Typed entry points: pb_kernel_run(dev, FAMILY, variant, args); variant NULL
 * is the backend's default (pb_kernel_default). For pb_reduce, args->work
 * needs pb_kernel_workspace(dev, "reduce", variant, args, &bytes) bytes,
 * zero-filled: the same variant, NULL included. */
pb_status pb_gemm(pb_device *dev, const char *variant, const struct pb_gemm_args *args);
pb_status pb_spmv(pb_device *dev, const char *variant, const struct pb_spmv_args *args);
pb_status pb_conv(pb_device *dev, const char *variant, const struct pb_conv_args *args);
pb_status pb_transpose(pb_device *dev, const char *variant, const struct pb_transpose_args *args);
pb_status pb_reduce(pb_device *dev, const char *variant, const struct pb_reduce_args *args);

/* A CSR matrix in device memory and the spmv arguments that read it, from a
 * COO matrix on the host (pb_matrix.h). A Matrix Market file to y = A x:
 *     struct pb_coo coo;
 *     struct pb_csr_device a;
 *     pb_coo_read("A.mtx", NULL, &coo);
 *     pb_csr_upload(dev, &coo, PB_DOUBLE, &a);
 *     a.args.x = x;  a.args.y = y;     (buffers of cols and rows elements)
 *     pb_spmv(dev, NULL, &a.args);
 * (each status checked), then pb_csr_free(&a) and pb_coo_free(&coo). */
struct pb_csr_device {
    pb_buf *ptr; /* int32 [rows + 1] row offsets */
    pb_buf *idx; /* int32 [nnz] column of each entry */
    pb_buf *val; /* [nnz] values in args.prec */
    /* prec, format (CSR), rows, cols, nnz, ptr, idx, val set; x, y NULL and
     * group, block 0 (the variant's choice): the caller's to set. */
    struct pb_spmv_args args;
};

/* Uploads m to dev as CSR with values rounded to prec. m must keep the COO
 * order of pb_matrix.h (rows non-decreasing, indices inside the matrix):
 * PB_ERR_INVALID otherwise; PB_ERR_UNSUPPORTED when nnz does not fit int32
 * offsets; PB_ERR_NOMEM, PB_ERR_DEVICE. On error *out is zeroed. */
pb_status pb_csr_upload(pb_device *dev, const struct pb_coo *m, enum pb_precision prec, struct pb_csr_device *out);

/* Frees the buffers and zeroes *a. Accepts NULL and a zeroed struct. */
void pb_csr_free(struct pb_csr_device *a);

/* The format an spmv variant of backend b reads; PB_ERR_NOT_FOUND for an
 * unknown variant. */
pb_status pb_spmv_format(const pb_backend *b, const char *variant, enum pb_sparse_format *out);

#ifdef __cplusplus
}
#endif
#endif

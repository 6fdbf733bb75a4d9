/* parbench: the kernel library API.
 *
 * Each kernel family has an argument struct; a kernel is called on a device by
 * variant name ("ijk", "blocked", "openblas", ...). Buffers belong to the same
 * device. pb_kernel_variants() lists what a backend offers. */
#ifndef PARBENCH_PB_KERNELS_H
#define PARBENCH_PB_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "parbench/pb.h"
#include "parbench/pb_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* C = alpha * A * B + beta * C, row-major. A is m x k (lda >= k), B is k x n
 * (ldb >= n), C is m x n (ldc >= n). Elements are prec-sized. beta == 0 means
 * C is not read (it may hold NaN). */
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
};

/* Separable 2D convolution, row pass then column pass, with a 1D filter of
 * 2*radius+1 taps (correlation: out[x] = sum_k filter[k] * in[x + k - radius]).
 * The image is row-major, width elements per row. `in` holds in_rows rows, of
 * which rows [in_top, in_top + height) are the ones to filter; the others are
 * halo rows above and below (a horizontal strip of a larger image). Rows
 * outside `in` are outside the image: zero, or a copy of the nearest row of
 * `in` for clamp (strips are cut only at the image's edges, so that is the
 * image's edge row). Columns outside [0, width) are treated the same way.
 * tmp holds in_rows x width elements (the row pass), out height x width.
 * Elements and filter taps are prec-sized. */
enum pb_conv_border { PB_CONV_ZERO = 0, PB_CONV_CLAMP = 1 };

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

struct pb_variant_desc {
    const char *bench;   /* "gemm" */
    const char *name;    /* "blocked" */
    const char *summary; /* one line */
    unsigned flags;
};

/* Variants of `bench` offered by backend b (all benches when bench is NULL):
 * fills up to max entries, returns the total number. */
size_t pb_kernel_variants(const pb_backend *b, const char *bench, struct pb_variant_desc *out,
                          size_t max);

/* Run variant `variant` of kernel family `bench` on dev with the family's
 * argument struct; blocks until done. PB_ERR_NOT_FOUND for an unknown variant,
 * PB_ERR_UNSUPPORTED when the variant cannot handle these arguments. */
pb_status pb_kernel_run(pb_device *dev, const char *bench, const char *variant, const void *args);

/* The same, queued on stream s (NULL = the default stream) without waiting. */
pb_status pb_kernel_launch(pb_device *dev, const char *bench, const char *variant, const void *args,
                           pb_stream *s);

/* Convenience: pb_kernel_run(dev, "gemm", variant, args). */
pb_status pb_gemm(pb_device *dev, const char *variant, const struct pb_gemm_args *args);

#ifdef __cplusplus
}
#endif
#endif

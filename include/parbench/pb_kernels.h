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

/* Peak-rate kernels (the `peak` benchmark behind parbench ceilings).
 * "fma": for every i < n, PB_PEAK_CHAINS independent chains x <- x*a + b
 * (one fused multiply-add each) run `iters` times from
 * x = 1 + (i % 64) / 64 + chain / 8; out[i] = the sum of the chains. No
 * loads: only arithmetic and one store per element.
 * "read": out[0..groups) = partial sums of in[0..n) (any partition: their
 * total is the sum); reads every element once, writes groups elements. */
#define PB_PEAK_CHAINS 8
struct pb_peak_args {
    enum pb_precision prec;
    size_t n;
    unsigned iters;  /* fma */
    double a, b;     /* fma */
    const pb_buf *in; /* read */
    pb_buf *out;
    size_t groups;   /* read: elements of out */
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

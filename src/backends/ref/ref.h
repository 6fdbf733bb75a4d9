/* Reference backend kernels (serial C, the oracle). */
#ifndef PARBENCH_REF_H
#define PARBENCH_REF_H

#include <stddef.h>
#include <stdint.h>

#include "parbench/pb_backend.h"
#include "parbench/pb_kernels.h"

pb_status pb__ref_gemm_ijk(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_gemm_ikj(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_spmv_csr(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_spmv_ell(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_transpose(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_reduce_pairwise(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_reduce_kahan(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_access_offset(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_access_stride(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_access_shared(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_access_fault(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_gemm_flaky(pb_device *dev, const void *args, pb_stream *s);

/* Sums shared with the OpenMP backend: pairwise in float or in double, and
 * integers modulo 2^32. */
float pb__sum_pairwise_f32(const float *x, size_t n);
double pb__sum_pairwise_f32_f64(const float *x, size_t n);
uint32_t pb__sum_u32(const uint32_t *x, size_t n);
/* Stores the result of r's type (f, d or u) in r->out (host memory). */
void pb__reduce_store(const struct pb_reduce_args *r, float f, double d, uint32_t u);

/* Index of element i of a line of n elements under the border rule, or -1
 * for a zero outside. */
static inline long pb__conv_border_index(long i, long n, enum pb_conv_border border)
{
    if (i >= 0 && i < n)
        return i;
    if (border == PB_CONV_ZERO)
        return -1;
    return i < 0 ? 0 : n - 1;
}

/* Separable convolution (conv_ref.c): the row and column passes of
 * pb_conv_args, serial, sums in double. */
pb_status pb__conv_ref(pb_device *dev, const void *args, pb_stream *s);
/* The same passes for the oracle, in double and threaded: in (prec) has
 * in_rows rows, out gets height rows starting at in row in_top; tmp holds
 * in_rows x width doubles. */
void pb__conv_oracle(const void *in, enum pb_precision prec, size_t width, size_t in_rows, size_t in_top,
                     size_t height, const double *taps, size_t radius, enum pb_conv_border border,
                     double *tmp, double *out);

#endif

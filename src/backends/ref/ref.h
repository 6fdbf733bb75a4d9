/* Reference backend kernels (serial C, the oracle). */
#ifndef PARBENCH_REF_H
#define PARBENCH_REF_H

#include "parbench/pb_backend.h"
#include "parbench/pb_kernels.h"

pb_status pb__ref_gemm_ijk(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_gemm_ikj(pb_device *dev, const void *args, pb_stream *s);

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

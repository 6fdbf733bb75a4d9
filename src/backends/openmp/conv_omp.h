/* Separable convolution on OpenMP threads (conv_omp.c). */
#ifndef PARBENCH_CONV_OMP_H
#define PARBENCH_CONV_OMP_H

#include "parbench/pb_backend.h"

pb_status pb__omp_conv_ring(pb_device *dev, const void *args, pb_stream *s);

#endif

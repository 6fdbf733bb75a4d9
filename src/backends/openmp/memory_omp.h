/* OpenMP kernels of the memory families (memory_omp.c). */
#ifndef PARBENCH_MEMORY_OMP_H
#define PARBENCH_MEMORY_OMP_H

#include "parbench/pb_backend.h"

pb_status pb__omp_transpose_blocked(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_transpose_copy(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_reduce_pairwise(pb_device *dev, const void *args, pb_stream *s);

#endif

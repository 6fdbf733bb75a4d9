/* Peak-rate kernels on the host CPU (struct pb_peak_args). */
#ifndef PARBENCH_OPENMP_PEAK_H
#define PARBENCH_OPENMP_PEAK_H

#include "core/backend_impl.h"

pb_status pb__omp_peak_fma(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_peak_read(pb_device *dev, const void *args, pb_stream *s);

#endif

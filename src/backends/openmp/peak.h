/* Peak-rate kernels on the host CPU (struct pb_peak_args), and the
 * backend's threaded fill. */
#ifndef PARBENCH_OPENMP_PEAK_H
#define PARBENCH_OPENMP_PEAK_H

#include "core/backend_impl.h"

pb_status pb__omp_peak_fma(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_peak_read(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_peak_copy(pb_device *dev, const void *args, pb_stream *s);

/* memset over the device's threads, each its share of the bytes: the share
 * peak/copy later copies, so a buffer filled first (the copy's input, its
 * poisoned output) has its pages first touched by the thread that uses them. */
pb_status pb__omp_fill(pb_buf *buf, unsigned char value);

/* Thread t of `threads` takes bytes [lo, hi) of n: contiguous, in order. */
static inline void pb__omp_share(size_t n, int t, int threads, size_t *lo, size_t *hi)
{
    size_t q = n / (size_t)threads, r = n % (size_t)threads; /* n * t / threads without overflow */
    *lo = q * (size_t)t + r * (size_t)t / (size_t)threads;
    *hi = q * (size_t)(t + 1) + r * (size_t)(t + 1) / (size_t)threads;
}

#endif

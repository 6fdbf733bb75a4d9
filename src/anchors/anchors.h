/* Vendor libraries as variants ("anchors"), attached to the backend whose
 * memory they use. */
#ifndef PARBENCH_ANCHORS_H
#define PARBENCH_ANCHORS_H

#include <stdbool.h>

#include "parbench/pb_backend.h"

#ifdef PB_HAVE_OPENBLAS
bool pb__openblas_gemm_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__openblas_gemm(pb_device *dev, const void *args, pb_stream *s);
void pb__openblas_quiet(void);

/* OpenBLAS (DYNAMIC_ARCH builds) picks its kernels from the CPU's model
 * once, as it loads. Where a virtual machine does not name the model
 * ("Intel(R) Xeon(R) Processor"), it takes an AVX-512 CPU for a Prescott and
 * runs SSE3 kernels: SGEMM at 31 GFLOP/s where SkylakeX's reach 156 (2-core
 * VM), an anchor 5x too slow. The core the CPU's features call for where
 * OpenBLAS took one without AVX2 (SkylakeX with AVX-512, else Haswell), or
 * NULL where its own pick stands; *picked: OpenBLAS's. */
const char *pb__openblas_core_wanted(const char **picked);
/* The core whose kernels OpenBLAS runs ("SkylakeX"), for the results' context. */
const char *pb__openblas_core_name(void);
#endif

/* Stops the anchors' own worker threads where they would take cores from
 * what is timed next (run: the kernel timed next, NULL if none): OpenBLAS
 * built on pthreads keeps a pool beside OpenMP's whose threads spin for
 * about 2^28 cycles (0.1 s) after the library loads and after each call. On
 * 2 cores that made a 0.2 ms `parbench conv` take 20-95 ms, and the first
 * row of `parbench run gemm` 8 ms instead of 0.02. OpenBLAS's own rows keep
 * the pool: started afresh, its spinning would fall on their own timed
 * calls. */
static inline void pb__anchors_quiet(pb_status (*run)(pb_device *, const void *, pb_stream *))
{
#ifdef PB_HAVE_OPENBLAS
    if (run != pb__openblas_gemm)
        pb__openblas_quiet();
#else
    (void)run;
#endif
}

#ifdef PB_HAVE_LIBRSB
pb_status pb__rsb_spmv(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__rsb_spmv_prepare(pb_device *dev, const void *args, char *note, size_t len);
/* Re-blocked by librsb's autotuner (rsb_tune_spmm) once per matrix. */
pb_status pb__rsb_spmv_tuned(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__rsb_spmv_tuned_prepare(pb_device *dev, const void *args, char *note, size_t len);
#endif

#endif

/* Vendor libraries as variants ("anchors"), attached to the backend whose
 * memory they use. */
#ifndef PARBENCH_ANCHORS_H
#define PARBENCH_ANCHORS_H

#include <stdbool.h>

#include "parbench/pb_backend.h"

#ifdef PB_HAVE_OPENBLAS
bool pb__openblas_gemm_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__openblas_gemm(pb_device *dev, const void *args, pb_stream *s);
#endif

#ifdef PB_HAVE_LIBRSB
pb_status pb__rsb_spmv(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__rsb_spmv_prepare(pb_device *dev, const void *args, char *note, size_t len);
/* Re-blocked by librsb's autotuner (rsb_tune_spmm) once per matrix. */
pb_status pb__rsb_spmv_tuned(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__rsb_spmv_tuned_prepare(pb_device *dev, const void *args, char *note, size_t len);
#endif

#endif

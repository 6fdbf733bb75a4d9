/* SpMV variants of the OpenMP backend (spmv_openmp.c). */
#ifndef PARBENCH_SPMV_OPENMP_H
#define PARBENCH_SPMV_OPENMP_H

#include "parbench/pb_backend.h"

pb_status pb__omp_spmv_csr(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_auto(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_auto_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__omp_spmv_h2(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_h4(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_h8(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_h16(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_v2(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_v4(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_v8(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_v16(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_ell(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_bcsr(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_bcsr_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__omp_spmv_dia(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_dia_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__omp_spmv_panels(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_prefetch(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_panels_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__omp_spmv_hubs(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__omp_spmv_hubs_prepare(pb_device *dev, const void *args, char *note, size_t len);
/* Frees what the spmv variants keep with the device (bcsr's block copy). */
void pb__omp_spmv_release(pb_device *dev);
void pb__omp_spmv_buf_gone(pb_device *dev, const pb_buf *buf); /* drops its matrix's block copy */

#endif

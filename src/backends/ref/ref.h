/* Reference backend kernels (serial C, the oracle). */
#ifndef PARBENCH_REF_H
#define PARBENCH_REF_H

#include "parbench/pb_backend.h"

pb_status pb__ref_gemm_ijk(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_gemm_ikj(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_spmv_csr(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__ref_spmv_ell(pb_device *dev, const void *args, pb_stream *s);

#endif

/* gemm_blocked.h: cache- and register-blocked, vectorised, OpenMP-threaded
 * dense matrix product for the openmp backend (GotoBLAS/BLIS-style design).
 *
 * Row-major storage: C = alpha * A * B + beta * C, where A is m x k (lda >= k),
 * B is k x n (ldb >= n) and C is m x n (ldc >= n).
 *
 * BLAS semantics: beta == 0 means C is never read (it may hold NaN); alpha == 0
 * or k == 0 means A and B are not read and C = beta * C. m == 0 or n == 0
 * touches nothing. threads >= 1 is the OpenMP team size to use, threads <= 0
 * means omp_get_max_threads(); no global OpenMP state is changed.
 *
 * Returns PB_OK, PB_ERR_INVALID (a leading dimension too small, or a NULL
 * matrix that would be accessed) or PB_ERR_NOMEM (packing buffers). */
#ifndef PARBENCH_BACKENDS_OPENMP_GEMM_BLOCKED_H
#define PARBENCH_BACKENDS_OPENMP_GEMM_BLOCKED_H

#include <stddef.h>

#include "parbench/pb.h"

#ifdef __cplusplus
extern "C" {
#endif

pb_status pb__gemm_blocked_f32(size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                               const float *b, size_t ldb, float beta, float *c, size_t ldc, int threads);

pb_status pb__gemm_blocked_f64(size_t m, size_t n, size_t k, double alpha, const double *a, size_t lda,
                               const double *b, size_t ldb, double beta, double *c, size_t ldc, int threads);

#ifdef __cplusplus
}
#endif
#endif

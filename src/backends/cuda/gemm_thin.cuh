// gemm_thin.cuh: SIMT GEMM for a thin C (at most 32 columns), the path regblock
// takes for such products. Design notes are in gemm_thin.cu.
#ifndef PARBENCH_CUDA_GEMM_THIN_CUH
#define PARBENCH_CUDA_GEMM_THIN_CUH

#include <cstddef>
#include <cuda_runtime.h>

// The widest C the thin kernels take.
constexpr size_t PB_GEMM_THIN_MAX_N = 32;

// Whether regblock hands an m x n x k product to the thin kernels: n <= 32,
// unless PARBENCH_GEMM_THIN=0 (A/B runs) or PARBENCH_GEMM_TILE imposes a tile.
bool pb__cuda_gemm_thin_wanted(size_t n);

// Row-major C = alpha*A*B + beta*C with n <= PB_GEMM_THIN_MAX_N, with the
// contract of pb__cuda_gemm_regblock_f32/_f64 (gemm_regblock.cuh); a wider C
// is cudaErrorInvalidValue.
cudaError_t pb__cuda_gemm_thin_f32(size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                                   const float *b, size_t ldb, float beta, float *c, size_t ldc, cudaStream_t s);
cudaError_t pb__cuda_gemm_thin_f64(size_t m, size_t n, size_t k, double alpha, const double *a, size_t lda,
                                   const double *b, size_t ldb, double beta, double *c, size_t ldc, cudaStream_t s);

#endif

// gemm_regblock.cuh: register-blocked SIMT GEMM for the CUDA backend (FP32 and FP64
// FMA units only, no tensor cores). Design notes are in gemm_regblock.cu.
#ifndef PARBENCH_CUDA_GEMM_REGBLOCK_CUH
#define PARBENCH_CUDA_GEMM_REGBLOCK_CUH

#include <cstddef>
#include <cuda_runtime.h>

// Row-major C = alpha*A*B + beta*C on device (or device-accessible) pointers.
// A is m x k (lda >= k), B is k x n (ldb >= n), C is m x n (ldc >= n).
// BLAS semantics: beta == 0 means C is never read (it may hold NaN); alpha == 0 or
// k == 0 means A and B are not read and C = beta*C. m == 0 || n == 0 launches nothing.
// Any sizes, any leading dimensions, pointers aligned to the element size; 16-byte
// vector accesses are used only where the pointer and leading dimension allow.
// Returns cudaErrorInvalidValue for a leading dimension that is too small or a NULL
// matrix that would be accessed, the error of the one-time shared-memory opt-in if it
// failed, else cudaGetLastError() after the launch. Never synchronises.
cudaError_t pb__cuda_gemm_regblock_f32(size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                                       const float *b, size_t ldb, float beta, float *c, size_t ldc, cudaStream_t s);
cudaError_t pb__cuda_gemm_regblock_f64(size_t m, size_t n, size_t k, double alpha, const double *a, size_t lda,
                                       const double *b, size_t ldb, double beta, double *c, size_t ldc, cudaStream_t s);

#endif

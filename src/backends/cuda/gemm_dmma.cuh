// gemm_dmma.cuh: FP64 GEMM on the FP64 tensor cores (DMMA, mma.sync .f64) for the CUDA
// backend. Design notes are in gemm_dmma.cu.
#ifndef PARBENCH_CUDA_GEMM_DMMA_CUH
#define PARBENCH_CUDA_GEMM_DMMA_CUH

#include <cstddef>
#include <cuda_runtime.h>

// Row-major C = alpha*A*B + beta*C, double, on device (or device-accessible) pointers;
// the same contract as pb__cuda_gemm_regblock_f64 in gemm_regblock.cuh.
// A is m x k (lda >= k), B is k x n (ldb >= n), C is m x n (ldc >= n).
// BLAS semantics: beta == 0 means C is never read (it may hold NaN); alpha == 0 or
// k == 0 means A and B are not read and C = beta*C. m == 0 || n == 0 launches nothing.
// Any sizes, any leading dimensions, pointers aligned to 8 bytes; 16-byte copies are
// used only where the pointer and leading dimension allow.
// Returns cudaErrorInvalidValue for a leading dimension that is too small or a NULL
// matrix that would be accessed, the error of the one-time shared-memory opt-in if it
// failed, else cudaGetLastError() after the launch. Never synchronises, prints or exits.
// Requires compute capability >= 8.0 (DMMA and cp.async); the caller checks it. On 9.x
// the kernel issues m16n8k4 DMMA, on 8.x pairs of m8n8k4 (same results either way).
cudaError_t pb__cuda_gemm_dmma_f64(size_t m, size_t n, size_t k, double alpha, const double *a, size_t lda,
                                   const double *b, size_t ldb, double beta, double *c, size_t ldc, cudaStream_t s);

#endif

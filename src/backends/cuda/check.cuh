// Error checks for CUDA and cuBLAS calls: on failure record "expression at
// file:line: driver message" for pb_last_error() and return a pb_status from
// the enclosing function. Library code never aborts.
#ifndef PARBENCH_CUDA_CHECK_CUH
#define PARBENCH_CUDA_CHECK_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/core.h"

static inline pb_status pb__cuda_status(cudaError_t e, const char *expr, const char *file, int line)
{
    // A failed call also leaves its error for the next cudaGetLastError():
    // taken here, so the next kernel's launch check does not report it again.
    (void)cudaGetLastError();
    pb_status st = e == cudaErrorMemoryAllocation ? PB_ERR_NOMEM : PB_ERR_DEVICE;
    return pb__fail(st, "%s failed at %s:%d: %s (%s)", expr, file, line, cudaGetErrorString(e),
                    cudaGetErrorName(e));
}

static inline pb_status pb__cublas_status(cublasStatus_t e, const char *expr, const char *file, int line)
{
    pb_status st = e == CUBLAS_STATUS_ALLOC_FAILED ? PB_ERR_NOMEM : PB_ERR_DEVICE;
    return pb__fail(st, "%s failed at %s:%d: %s", expr, file, line, cublasGetStatusString(e));
}

#define PB_CUDA_CHECK(expr)                                                        \
    do {                                                                           \
        cudaError_t pb__e = (expr);                                                \
        if (pb__e != cudaSuccess)                                                  \
            return pb__cuda_status(pb__e, #expr, __FILE__, __LINE__);              \
    } while (0)

#define PB_CUBLAS_CHECK(expr)                                                      \
    do {                                                                           \
        cublasStatus_t pb__e = (expr);                                             \
        if (pb__e != CUBLAS_STATUS_SUCCESS)                                        \
            return pb__cublas_status(pb__e, #expr, __FILE__, __LINE__);            \
    } while (0)

// After a kernel launch: launch-configuration errors surface here.
#define PB_CUDA_CHECK_LAUNCH() PB_CUDA_CHECK(cudaGetLastError())

#endif

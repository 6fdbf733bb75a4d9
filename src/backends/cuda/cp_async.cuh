// cp_async.cuh: asynchronous global -> shared copies (cp.async, sm_80+) with a
// source size taken at run time, one instruction each (cuda_pipeline.h's
// __pipeline_memcpy_async switches over its zero-fill count). Used by the
// GEMM kernels that stage their operands in shared memory without registers.
#ifndef PARBENCH_CUDA_CP_ASYNC_CUH
#define PARBENCH_CUDA_CP_ASYNC_CUH

#include <cuda_runtime.h>

__device__ __forceinline__ unsigned smem_u32(const void *p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copy cp-size bytes global -> shared, asynchronously; bytes past src_bytes are zero-filled
// and src_bytes == 0 reads nothing.
__device__ __forceinline__ void cp_async_16(unsigned dst, const void *src, int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
#endif
}
__device__ __forceinline__ void cp_async_8(unsigned dst, const void *src, int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
#endif
}
__device__ __forceinline__ void cp_async_4(unsigned dst, const void *src, int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
#endif
}
__device__ __forceinline__ void cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Wait until at most N of this thread's committed groups are still in flight.
template <int N> __device__ __forceinline__ void cp_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

#endif

// Private state of the CUDA backend shared by its kernel files.
#ifndef PARBENCH_CUDA_IMPL_CUH
#define PARBENCH_CUDA_IMPL_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/backend_impl.h"

struct pb_cuda_device {
    cudaDeviceProp prop;
    cublasHandle_t blas; // created on first use
};

static inline pb_cuda_device *pb__cuda(pb_device *dev) { return static_cast<pb_cuda_device *>(dev->impl); }

static inline cudaStream_t pb__cuda_stream(pb_stream *s)
{
    return s ? static_cast<cudaStream_t>(s->handle) : nullptr;
}

// Address the device uses for a buffer: device memory, or pinned/pageable host
// memory (pinned is device-accessible through unified addressing).
template <typename T> static inline T *pb__cuda_ptr(const pb_buf *b)
{
    return static_cast<T *>(b->handle ? b->handle : b->host);
}

// The device's cuBLAS handle, bound to stream s.
pb_status pb__cuda_blas(pb_device *dev, pb_stream *s, cublasHandle_t *out);

// GEMM variants (gemm.cu).
pb_status pb__cuda_gemm_naive(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_tiled8(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_tiled16(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_tiled32(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_regblock(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_dmma(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_cublas(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_gemm_dmma_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_gemm_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_gemm_cublas_supports(const pb_device *dev, const void *args, const char **why);

// Separable convolution variants (conv.cu).
pb_status pb__cuda_conv_naive(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_conv_tiled(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_conv_regs(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_conv_naive_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_conv_tiled_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_conv_regs_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cuda_conv_fused(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_conv_fused_supports(const pb_device *dev, const void *args, const char **why);

#endif

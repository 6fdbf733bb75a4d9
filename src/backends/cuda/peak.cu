// Peak-rate kernels (struct pb_peak_args): FMA chains for arithmetic
// throughput, a read-only streaming sum for memory bandwidth.
#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "parbench/pb_kernels.h"

namespace {

constexpr unsigned kBlock = 256;

template <typename T> __global__ void peak_fma(T *__restrict__ out, size_t n, unsigned iters, T a, T b)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    T x[PB_PEAK_CHAINS];
#pragma unroll
    for (int j = 0; j < PB_PEAK_CHAINS; j++)
        x[j] = T(1) + T(i % 64) / T(64) + T(j) / T(8);
#pragma unroll 4
    for (unsigned it = 0; it < iters; it++)
#pragma unroll
        for (int j = 0; j < PB_PEAK_CHAINS; j++)
            x[j] = fma(x[j], a, b);
    T sum = 0;
#pragma unroll
    for (int j = 0; j < PB_PEAK_CHAINS; j++)
        sum += x[j];
    out[i] = sum;
}

// Grid-stride sum with four loads in flight per thread, then one partial per block.
template <typename T> __global__ void __launch_bounds__(kBlock) peak_read(const T *__restrict__ in, size_t n, T *out)
{
    __shared__ T part[kBlock];
    size_t stride = (size_t)gridDim.x * kBlock, i = blockIdx.x * (size_t)kBlock + threadIdx.x;
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (; i + 3 * stride < n; i += 4 * stride) {
        a0 += in[i];
        a1 += in[i + stride];
        a2 += in[i + 2 * stride];
        a3 += in[i + 3 * stride];
    }
    for (; i < n; i += stride)
        a0 += in[i];
    part[threadIdx.x] = (a0 + a1) + (a2 + a3);
    __syncthreads();
    for (unsigned s = kBlock / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = part[0];
}

template <typename T> pb_status launch_fma(const pb_peak_args *p, cudaStream_t s)
{
    if (!p->n)
        return PB_OK;
    size_t blocks = (p->n + kBlock - 1) / kBlock;
    peak_fma<T><<<(unsigned)blocks, kBlock, 0, s>>>(pb__cuda_ptr<T>(p->out), p->n, p->iters, (T)p->a, (T)p->b);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

template <typename T> pb_status launch_read(const pb_peak_args *p, cudaStream_t s)
{
    if (!p->groups)
        return PB_OK;
    peak_read<T><<<(unsigned)p->groups, kBlock, 0, s>>>(pb__cuda_ptr<const T>(p->in), p->n, pb__cuda_ptr<T>(p->out));
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

} // namespace

bool pb__cuda_peak_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    const pb_peak_args *p = static_cast<const pb_peak_args *>(args);
    if ((p->n + kBlock - 1) / kBlock > 0x7fffffffu || p->groups > 0x7fffffffu) {
        *why = "more blocks than a CUDA grid holds";
        return false;
    }
    return true;
}

pb_status pb__cuda_peak_fma(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev;
    const pb_peak_args *p = static_cast<const pb_peak_args *>(args);
    return p->prec == PB_DOUBLE ? launch_fma<double>(p, pb__cuda_stream(s)) : launch_fma<float>(p, pb__cuda_stream(s));
}

pb_status pb__cuda_peak_read(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev;
    const pb_peak_args *p = static_cast<const pb_peak_args *>(args);
    return p->prec == PB_DOUBLE ? launch_read<double>(p, pb__cuda_stream(s))
                                : launch_read<float>(p, pb__cuda_stream(s));
}

// The lecture's memory-access experiments (study 004): global-memory copies
// whose warps start misaligned (offset) or touch every step-th element
// (stride), and shared-memory loads step elements apart (bank conflicts;
// step 0 = one address for the whole warp, a broadcast). One thread per
// element, PB_ACCESS_BLOCK threads per block.
#include <limits.h>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "core/kernel_data.h"

namespace {

constexpr unsigned BLOCK = PB_ACCESS_BLOCK;

template <typename T> __global__ void __launch_bounds__(BLOCK) offset_copy(const T *in, T *out, size_t n, size_t step)
{
    size_t i = blockIdx.x * (size_t)BLOCK + threadIdx.x + step;
    if (i < n + step)
        out[i] = in[i];
}

template <typename T> __global__ void __launch_bounds__(BLOCK) stride_copy(const T *in, T *out, size_t n, size_t step)
{
    size_t i = blockIdx.x * (size_t)BLOCK + threadIdx.x;
    if (i < n)
        out[i * step] = in[i * step];
}

template <typename T> __global__ void __launch_bounds__(BLOCK) shared_stride(const T *in, T *out, size_t n, size_t step)
{
    __shared__ T s[PB_ACCESS_SHARED_ELEMS];
    for (unsigned j = threadIdx.x; j < PB_ACCESS_SHARED_ELEMS; j += BLOCK)
        s[j] = in[j];
    __syncthreads();
    const unsigned base = (unsigned)((threadIdx.x * step) % PB_ACCESS_SHARED_ELEMS);
    T sum = 0;
#pragma unroll 16
    for (unsigned k = 0; k < PB_ACCESS_SHARED_LOADS; k++)
        sum += s[(base + k) % PB_ACCESS_SHARED_ELEMS];
    size_t i = blockIdx.x * (size_t)BLOCK + threadIdx.x;
    if (i < n)
        out[i] = sum;
}

template <typename T> using kernel_t = void (*)(const T *, T *, size_t, size_t);

template <typename T> pb_status launch(kernel_t<T> k, const pb_access_args *a, cudaStream_t s)
{
    k<<<(unsigned)((a->n + BLOCK - 1) / BLOCK), BLOCK, 0, s>>>(pb__cuda_ptr<const T>(a->in), pb__cuda_ptr<T>(a->out),
                                                              a->n, a->step);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

const pb_access_args *aargs(const void *args) { return static_cast<const pb_access_args *>(args); }

#define PB_ACCESS_DISPATCH(KERNEL)                                                          \
    (void)dev;                                                                              \
    const pb_access_args *a = aargs(args);                                                  \
    if (a->n == 0)                                                                          \
        return PB_OK;                                                                       \
    return a->prec == PB_DOUBLE ? launch<double>(KERNEL<double>, a, pb__cuda_stream(s))     \
                                : launch<float>(KERNEL<float>, a, pb__cuda_stream(s))

} // namespace

bool pb__cuda_access_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    if ((aargs(args)->n + BLOCK - 1) / BLOCK > INT_MAX) {
        *why = "too many elements for one grid";
        return false;
    }
    return true;
}

bool pb__cuda_access_stride_supports(const pb_device *dev, const void *args, const char **why)
{
    return pb__cuda_access_supports(dev, args, why) && pb__access_stride_supports(dev, args, why);
}

namespace {
// Writes through a pointer into the null page: the GPU faults (illegal
// address), the context is lost, every later call on it fails.
__global__ void write_null(float *nowhere) { nowhere[threadIdx.x] = 1.0f; }
} // namespace

pb_status pb__cuda_access_fault(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)args;
    write_null<<<1, 32, 0, pb__cuda_stream(s)>>>(reinterpret_cast<float *>(16));
    PB_CUDA_CHECK_LAUNCH();
    PB_CUDA_CHECK(cudaStreamSynchronize(pb__cuda_stream(s)));
    return PB_OK;
}

pb_status pb__cuda_access_offset(pb_device *dev, const void *args, pb_stream *s) { PB_ACCESS_DISPATCH(offset_copy); }
pb_status pb__cuda_access_stride(pb_device *dev, const void *args, pb_stream *s) { PB_ACCESS_DISPATCH(stride_copy); }
pb_status pb__cuda_access_shared(pb_device *dev, const void *args, pb_stream *s) { PB_ACCESS_DISPATCH(shared_stride); }

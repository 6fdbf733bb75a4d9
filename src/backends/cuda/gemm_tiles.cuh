// Host-side helpers shared by the hand-written CUDA GEMM kernels (regblock,
// dmma): the tile-shape choice and the alignment test for 16-byte accesses.
#ifndef PARBENCH_CUDA_GEMM_TILES_CUH
#define PARBENCH_CUDA_GEMM_TILES_CUH

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

static inline bool pb__aligned16(const void *p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// A block-tile shape and its relative efficiency (measured on an H100).
struct pb__tile_choice {
    int bm, bn;
    double eff;
};

// The current device's SM count (132 where it cannot be read).
static inline int pb__sm_count()
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0)
        sms = 132;
    return sms;
}

// Split-K slabs for a grid of `blocks` tiles: enough to fill the GPU once
// where the tiles alone leave most of it idle and k is long enough that each
// slab keeps at least 2048 of it (the reduction of the slabs then costs
// little beside the product). 1 = no split.
static inline int pb__split_k(size_t blocks, size_t k, int sms)
{
    if (blocks == 0 || blocks * 2 > (size_t)sms)
        return 1;
    size_t s = (size_t)sms / blocks;
    if (s > 64)
        s = 64;
    while (s > 1 && k / s < 2048)
        --s;
    return (int)s;
}

// C = alpha * (the sum of the split-K slabs, in slab order: the same on
// every run) + beta * C; the slabs are m x n, one after another.
template <typename T>
__global__ void pb__split_reduce_kernel(long long m, long long n, int slabs, const T *__restrict__ ws, T alpha, T beta,
                                        T *__restrict__ c, long long ldc)
{
    const long long total = m * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        T sum = 0;
        for (int z = 0; z < slabs; ++z)
            sum += ws[z * total + i];
        T *dst = c + i / n * ldc + i % n;
        *dst = beta == T(0) ? alpha * sum : fma(alpha, sum, beta * *dst);
    }
}

template <typename T>
static inline cudaError_t pb__split_reduce(int slabs, size_t m, size_t n, const T *ws, T alpha, T beta, T *c,
                                           size_t ldc, cudaStream_t s)
{
    const size_t blocks = (m * n + 255) / 256;
    pb__split_reduce_kernel<T><<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, s>>>(
        (long long)m, (long long)n, slabs, ws, alpha, beta, c, (long long)ldc);
    return cudaGetLastError();
}

// The blocks of a shape spread evenly over the SMs, so the run time is about
// (blocks per SM, rounded up) x (work of one block) / (efficiency of the tile),
// the work of a block divided by the slabs where the kernel splits k.
// Large tiles win whenever they fill the machine; smaller ones recover the
// parallelism of small or skinny products. Returns the index of the cheapest.
static inline int pb__pick_tile(size_t m, size_t n, size_t k, bool splits_k, const pb__tile_choice *choices,
                                int count)
{
    const int sms = pb__sm_count();
    int best = 0;
    double best_cost = 0;
    for (int i = 0; i < count; ++i) {
        const pb__tile_choice &t = choices[i];
        const size_t tiles = ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn);
        const int slabs = splits_k ? pb__split_k(tiles, k, sms) : 1;
        const double blocks = (double)tiles * slabs;
        const double cost = std::ceil(blocks / sms) * t.bm * t.bn / (t.eff * slabs);
        if (i == 0 || cost < best_cost) {
            best = i;
            best_cost = cost;
        }
    }
    return best;
}

#endif

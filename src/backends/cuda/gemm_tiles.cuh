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

// The blocks of a shape spread evenly over the SMs, so the run time is about
// (blocks per SM, rounded up) x (work of one block) / (efficiency of the tile).
// Large tiles win whenever they fill the machine; smaller ones recover the
// parallelism of small or skinny products. Returns the index of the cheapest.
static inline int pb__pick_tile(size_t m, size_t n, const pb__tile_choice *choices, int count)
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0)
        sms = 132;
    int best = 0;
    double best_cost = 0;
    for (int i = 0; i < count; ++i) {
        const pb__tile_choice &t = choices[i];
        const double blocks = (double)((m + t.bm - 1) / t.bm) * (double)((n + t.bn - 1) / t.bn);
        const double cost = std::ceil(blocks / sms) * t.bm * t.bn / t.eff;
        if (i == 0 || cost < best_cost) {
            best = i;
            best_cost = cost;
        }
    }
    return best;
}

#endif

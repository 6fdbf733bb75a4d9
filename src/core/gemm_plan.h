/* How a GEMM's output tiles go over a device's SMs or compute units: which
 * tiles run whole and which are cut along k into pieces summed afterwards.
 * Pure host arithmetic, shared by the CUDA kernels (gemm_tiles.cuh) and
 * OpenCL's regblock (C and C++ alike). */
#ifndef PARBENCH_CORE_GEMM_PLAN_H
#define PARBENCH_CORE_GEMM_PLAN_H

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

/* Tiles [0, first) run whole, a block each; tiles [first, tiles) are cut
 * along k into `slabs` pieces, each block writing its piece to a BM x BN part
 * of a workspace (tile first + x, piece y at (y * (tiles - first) + x) * BM *
 * BN) that a reduction sums in piece order: the same sum on every run.
 *  - Few tiles and a long k (tiles <= units / 2): every tile is cut, into as
 *    many pieces as fill the device once, each keeping at least 2048 of k.
 *  - Otherwise the tiles past the last full wave are cut into the pieces that
 *    bring that last wave closest to full. 3000 x 5000 in 128 x 256 tiles on
 *    132 SMs: 480 tiles are 3 full waves and 84 over, a fourth wave 36% busy;
 *    84 x 3 pieces take two waves of a third of a tile instead.
 * unit_rate (FLOP/s of one SM) weighs the pieces' partial results, written
 * and read once at about 3 TB/s, against the products of the tile. */
struct pb__split_plan {
    size_t first; /* tiles run whole */
    int slabs;    /* pieces of each tile past first */
    double waves; /* the estimated time, in units of one whole tile on every unit */
};

/* One SM's FMA rate on CUDA cores (H100: about 50 TFLOP/s of FP32, 25 of FP64,
 * over 132 SMs): the rate regblock's plans (CUDA and OpenCL) weigh against. */
static inline double pb__plan_fma_rate(size_t elem_bytes)
{
    return elem_bytes == 4 ? 3.8e11 : 1.9e11;
}

/* PARBENCH_GEMM_SMS=N: plan for N SMs or compute units instead of the
 * device's (tests cut tiles on small shapes so); else `units`. */
static inline int pb__plan_units(int units)
{
    const char *forced = getenv("PARBENCH_GEMM_SMS");
    int n = forced ? atoi(forced) : 0;
    return n > 0 ? n : units > 0 ? units : 1;
}

static inline struct pb__split_plan pb__plan_whole(size_t tiles, int units)
{
    struct pb__split_plan plan;
    plan.first = tiles;
    plan.slabs = 1;
    plan.waves = ceil((double)tiles / units);
    return plan;
}

static inline struct pb__split_plan pb__plan_split(size_t tiles, size_t k, int units, size_t elem_bytes,
                                                   double unit_rate)
{
    struct pb__split_plan plan = pb__plan_whole(tiles, units);
    if (tiles == 0)
        return plan;
    if (tiles * 2 <= (size_t)units) {
        size_t s = (size_t)units / tiles;
        if (s > 64)
            s = 64;
        while (s > 1 && k / s < 2048)
            --s;
        if (s > 1) {
            plan.first = 0;
            plan.slabs = (int)s;
            plan.waves = 1.0 / (double)s;
        }
        return plan;
    }
    const size_t whole = tiles / (size_t)units * (size_t)units, rest = tiles - whole;
    if (rest == 0)
        return plan;
    double best = 1.0; /* the last wave's share of the estimate, run whole */
    int best_s = 1;
    for (int s = 2; s <= 8 && k / (size_t)s >= 1024; ++s) {
        const double fixup = 0.01 + (double)(rest * (size_t)s * elem_bytes) * unit_rate / (3e12 * (double)k);
        const double t = ceil((double)(rest * (size_t)s) / units) / s + fixup;
        if (t < best) {
            best = t;
            best_s = s;
        }
    }
    /* Cut only where that saves a quarter of a wave: the pieces' pipelines
     * fill and drain more often than the estimate says (H200, wgmma bf16
     * 3000 x 5000 x 7000: 0.89 estimated, 6% slower measured; 8192^2 at
     * 0.83: 2% slower). */
    if (best > 0.75)
        return plan;
    plan.first = whole;
    plan.slabs = best_s;
    plan.waves = (double)(whole / (size_t)units) + best;
    return plan;
}

#endif

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
    double waves; /* the estimated time, in units of one whole tile on every unit (pb__plan_fill: seconds) */
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
    const char *forced = getenv("PARBENCH_GEMM_PIECES"); /* tuning runs: every tile in N pieces */
    if (forced && atoi(forced) > 1 && k > 0) {
        plan.first = 0;
        plan.slabs = atoi(forced) < 64 ? atoi(forced) : 64;
        plan.waves = ceil((double)(tiles * (size_t)plan.slabs) / units) / plan.slabs;
        return plan;
    }
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

/* regblock's plans (CUDA), from a model of each SM's time: an SM runs its
 * blocks per_sm at a time; a block of kk k-rows costs kk k-rows of FMAs
 * and block_s seconds per element of its tile (its pipeline filling and its
 * stores: 3x more where C takes scalar stores, twice that for a block alone on
 * its SM, whose stores nothing overlaps; 19531 x 13647 x 37 on an H200), and an
 * SM holding fewer blocks than per_sm hides less latency, running at
 * 1 - c (1 - resident / per_sm) of its rate (c = 0.24 with 2 blocks of 256
 * threads, measured on an H200; more for smaller blocks). Where few tiles
 * leave SMs idle, every tile is cut along k into the pieces that fill them;
 * cutting costs the pieces' partial results (written and read once) and a
 * second launch. Random shapes from 300 to 12000 on an H200 (bench/results/
 * 2026-11-28-NVIDIA-H200/gemm-unseen/)
 * are what the constants were set on. */
struct pb__fill_tile {
    size_t bm, bn;
    double eff; /* relative rate with per_sm blocks on every SM */
    int per_sm;
};

static inline double pb__fill_rate(const struct pb__fill_tile *t, double blocks_per_sm)
{
    const double c = t->per_sm <= 1 ? 0.0 : 0.24 + 0.14 * (t->per_sm - 2);
    const double resident = blocks_per_sm < t->per_sm ? blocks_per_sm / t->per_sm : 1.0;
    return t->eff * (1.0 - c * (1.0 - resident));
}

/* The estimated seconds of plan on sms SMs of sm_rate FLOP/s. */
static inline double pb__fill_seconds(const struct pb__fill_tile *t, struct pb__split_plan plan, size_t tiles,
                                      size_t k, int sms, size_t elem_bytes, double sm_rate, double block_s)
{
    const double block_k = block_s * sm_rate / 2 * (t->per_sm == 1 ? 2 : 1); /* in k-rows of the tile */
    const size_t rest = tiles - plan.first, pieces = rest * (size_t)plan.slabs;
    const double kk = ceil((double)k / plan.slabs), tile_flops = 2.0 * (double)(t->bm * t->bn);
    double per_sm = ceil((double)plan.first / sms) * (k + block_k) / pb__fill_rate(t, ceil((double)plan.first / sms));
    double busy = ceil((double)pieces / sms);
    if (pieces > 0)
        per_sm += busy * (kk + block_k) / pb__fill_rate(t, busy);
    double seconds = per_sm * tile_flops / sm_rate;
    if (plan.slabs > 1) /* the pieces written, read, summed into C; another launch */
        seconds += (double)((2 * pieces + rest) * t->bm * t->bn * elem_bytes) / 2.5e12 + 4e-6;
    return seconds;
}

/* The cheapest of: whole tiles, the last wave's tiles cut (pb__plan_split
 * over every block slot), and every tile cut into 2..64 pieces of at least
 * 128 of k. plan.waves holds the estimate in seconds. */
static inline struct pb__split_plan pb__plan_fill(const struct pb__fill_tile *t, size_t m, size_t n, size_t k, int sms,
                                                  size_t elem_bytes, double sm_rate, double block_s)
{
    const size_t tiles = ((m + t->bm - 1) / t->bm) * ((n + t->bn - 1) / t->bn);
    struct pb__split_plan best = pb__plan_split(tiles, k, sms * t->per_sm, elem_bytes, sm_rate / t->per_sm);
    if (getenv("PARBENCH_GEMM_PIECES") == NULL && tiles > 0 && k > 0) {
        struct pb__split_plan whole = pb__plan_whole(tiles, sms);
        double best_s = pb__fill_seconds(t, best, tiles, k, sms, elem_bytes, sm_rate, block_s);
        const double whole_s = pb__fill_seconds(t, whole, tiles, k, sms, elem_bytes, sm_rate, block_s);
        if (whole_s <= best_s)
            best = whole, best_s = whole_s;
        for (int s = 2; s <= 64 && k / (size_t)s >= 128 && tiles * (size_t)s <= 8 * (size_t)sms * t->per_sm; ++s) {
            struct pb__split_plan cut = {0, s, 0};
            const double cut_s = pb__fill_seconds(t, cut, tiles, k, sms, elem_bytes, sm_rate, block_s);
            if (cut_s < 0.97 * best_s) /* a cut must win clearly: the model is rough */
                best = cut, best_s = cut_s;
        }
    }
    best.waves = pb__fill_seconds(t, best, tiles, k, sms, elem_bytes, sm_rate, block_s);
    return best;
}

#endif

// SpMV on CUDA: the sparse study's kernels (CSR one thread per row, CSR with a
// group of threads per row -- the study's "2D blocks" --, ELLPACK row-major
// and transposed), two load-balanced CSR kernels for irregular matrices, and
// cuSPARSE as the anchor.
//
// Why load-balanced CSR rather than SELL-C-sigma for the irregular case:
// SELL-C-sigma still pads the slice that holds a row like dc1's 114190
// entries to that length, and needs a reordered copy of the matrix. CSR as it
// is can be balanced at run time: csr-adaptive lists the rows past a length
// (one pass over the row offsets) and gives them a warp or a block each,
// side by side with csr-vector over the others; csr-merge splits
// rows + non-zeros evenly over blocks and threads (merge path: a binary search
// per tile, products staged in shared memory, rows split between threads
// added atomically).
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include <cub/device/device_scan.cuh>

#include <cusparse.h>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "sparse/balance.h"
#include "sparse/sparse.h"

namespace {

constexpr int default_block = 256;
// csr-merge: rows + entries per thread (odd, so threads reading shared memory
// merge_items apart hit different banks) and threads per tile.
constexpr int merge_items = 7, merge_threads = 128, merge_tile = merge_items * merge_threads;

const pb_spmv_args *spmv_args(const void *args) { return static_cast<const pb_spmv_args *>(args); }

int block_of(const pb_spmv_args *a) { return a->block ? a->block : default_block; }

// The sum over a full warp, in lane 0.
template <typename T> __device__ __forceinline__ T warp_reduce(T v)
{
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// Row `row` of CSR by a group of G threads (lane = 0..G-1), the sum stored by
// lane 0. Rows longer than `split` are skipped (another worker does them).
// All G threads of the group must call it: the shuffles span the group.
// P: the type of the row offsets (int64_t beyond 2^31 - 1 non-zeros).
template <typename T, int G, typename P>
__device__ __forceinline__ void group_row(int64_t row, int lane, unsigned active, int32_t split,
                                          const P *__restrict__ ptr, const int32_t *__restrict__ idx,
                                          const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y)
{
    P begin = ptr[row], end = ptr[row + 1];
    bool skip = end - begin > split; // the same for the whole group
    T sum = 0;
    if (!skip) {
#pragma unroll 4
        for (P k = begin + lane; k < end; k += G)
            sum += val[k] * x[idx[k]];
    }
#pragma unroll
    for (int off = G / 2; off > 0; off /= 2)
        sum += __shfl_down_sync(active, sum, off, G);
    if (lane == 0 && !skip)
        y[row] = sum;
}

// G threads per row (G = 1: one thread per row), sums reduced by shuffles
// within the group.
template <typename T, int G, typename P>
__global__ void csr_vector(int32_t rows, const P *__restrict__ ptr, const int32_t *__restrict__ idx,
                           const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y)
{
    int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, row = t / G;
    unsigned active = __ballot_sync(0xffffffffu, row < rows);
    if (row < rows)
        group_row<T, G, P>(row, (int)(t % G), active, INT_MAX, ptr, idx, val, x, y);
}

// csr-adaptive. Rows of more than `split` entries are listed by csr_classify:
// list[0..counts[0]) medium rows (a warp each), from the end of list
// backwards counts[1] huge rows (more than `huge` entries, a block each).
struct long_rows {
    int32_t split, huge;
    int32_t *list, *counts;
    int32_t rows;
};

__global__ void csr_classify(int32_t rows, const int32_t *__restrict__ ptr, long_rows lr)
{
    int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    int32_t len = ptr[row + 1] - ptr[row];
    if (len > lr.huge)
        lr.list[lr.rows - 1 - atomicAdd(&lr.counts[1], 1)] = (int32_t)row;
    else if (len > lr.split)
        lr.list[atomicAdd(&lr.counts[0], 1)] = (int32_t)row;
}

// The first long_blocks blocks take the listed rows -- each block a huge row
// at a time, then each warp a medium one -- while the others run csr-vector
// over the short rows. Long rows start first, side by side with the short
// ones, so neither waits for the other.
template <typename T, int G>
__global__ void csr_adaptive(int32_t rows, const int32_t *__restrict__ ptr, const int32_t *__restrict__ idx,
                             const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y, long_rows lr,
                             int long_blocks)
{
    if ((int)blockIdx.x >= long_blocks) {
        int64_t t = (blockIdx.x - long_blocks) * (int64_t)blockDim.x + threadIdx.x, row = t / G;
        unsigned active = __ballot_sync(0xffffffffu, row < rows);
        if (row < rows)
            group_row<T, G, int32_t>(row, (int)(t % G), active, lr.split, ptr, idx, val, x, y);
        return;
    }
    __shared__ T warp_sum[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    const int n_medium = lr.counts[0], n_huge = lr.counts[1];
    for (int i = blockIdx.x; i < n_huge; i += long_blocks) {
        int32_t row = lr.list[lr.rows - 1 - i];
        T sum = 0;
#pragma unroll 4
        for (int32_t k = ptr[row] + threadIdx.x, end = ptr[row + 1]; k < end; k += blockDim.x)
            sum += val[k] * x[idx[k]];
        sum = warp_reduce(sum);
        if (lane == 0)
            warp_sum[warp] = sum;
        __syncthreads();
        if (warp == 0) {
            sum = warp_reduce(lane < warps ? warp_sum[lane] : T(0));
            if (lane == 0)
                y[row] = sum;
        }
        __syncthreads();
    }
    for (int i = blockIdx.x * warps + warp; i < n_medium; i += long_blocks * warps) {
        int32_t row = lr.list[i];
        T sum = 0;
#pragma unroll 4
        for (int32_t k = ptr[row] + lane, end = ptr[row + 1]; k < end; k += 32)
            sum += val[k] * x[idx[k]];
        sum = warp_reduce(sum);
        if (lane == 0)
            y[row] = sum;
    }
}

// One thread per row of an ELLPACK matrix; `transposed` = column-major, so a
// warp reads 32 consecutive entries per step.
template <typename T, bool transposed>
__global__ void ell_rows(int32_t rows, int32_t width, const int32_t *__restrict__ idx, const T *__restrict__ val,
                         const T *__restrict__ x, T *__restrict__ y)
{
    int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    T sum = 0;
    for (int32_t j = 0; j < width; j++) {
        size_t at = transposed ? (size_t)j * (size_t)rows + (size_t)row : (size_t)row * (size_t)width + (size_t)j;
        int32_t c = idx[at];
        if (c >= 0)
            sum += val[at] * x[c];
    }
    y[row] = sum;
}

// Block CSR (pb_bcsr) with B x B blocks: a group of G threads per block row
// reads its blocks' values as one coalesced stream; each thread keeps one sum
// per row of the block, the group adds them up by shuffles and thread q
// stores row q. Columns past the matrix (last block column) hold zeros and
// are not read from x.
template <typename T, int B, int G>
__global__ void bcsr_rows(int32_t block_rows, int32_t rows, int32_t cols, const int32_t *__restrict__ ptr,
                          const int32_t *__restrict__ idx, const T *__restrict__ val, const T *__restrict__ x,
                          T *__restrict__ y)
{
    constexpr int BB = B * B;
    int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, br = t / G;
    int lane = (int)(t % G);
    unsigned active = __ballot_sync(0xffffffffu, br < block_rows);
    if (br >= block_rows)
        return; // a group leaves whole: its threads share br
    T sum[B];
#pragma unroll
    for (int q = 0; q < B; q++)
        sum[q] = 0;
    int32_t first = ptr[br], end = ptr[br + 1];
    // the thread's entry: block `blk`, position `at` in it, stepped by G
    // entries at a time without dividing
    int32_t blk = first + lane / BB;
    int at = lane % BB;
    const T *v = val + (int64_t)first * BB + lane;
#pragma unroll 4
    for (; blk < end; v += G) {
        int r = at / B, c = at - r * B;
        int32_t col = idx[blk] * B + c;
        T p = col < cols ? *v * x[col] : T(0);
#pragma unroll
        for (int q = 0; q < B; q++)
            sum[q] += q == r ? p : T(0);
        at += G % BB, blk += G / BB;
        if (at >= BB)
            at -= BB, blk++;
    }
    T mine = 0;
#pragma unroll
    for (int q = 0; q < B; q++) {
#pragma unroll
        for (int off = G / 2; off > 0; off /= 2)
            sum[q] += __shfl_xor_sync(active, sum[q], off, G);
        mine = lane == q ? sum[q] : mine;
    }
    int64_t row = br * B + lane;
    if (lane < B && row < rows)
        y[row] = mine;
}

// Block ELLPACK transposed (pb__bcsr_ellt) with B x B blocks: a thread per
// row, as ELLT, reading its block row's slots in order; the threads of one
// block row share each slot's column index.
template <typename T, int B>
__global__ void bellt_rows(int32_t block_rows, int32_t rows, int32_t cols, int32_t width,
                           const int32_t *__restrict__ idx, const T *__restrict__ val, const T *__restrict__ x,
                           T *__restrict__ y)
{
    int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    int64_t br = row / B, rows_pad = (int64_t)block_rows * B;
    T sum = 0;
    for (int32_t j = 0; j < width; j++) {
        int32_t bc = idx[(int64_t)j * block_rows + br];
        if (bc < 0)
            break; // padding ends a block row
        const T *v = val + (int64_t)j * B * rows_pad + row;
#pragma unroll
        for (int c = 0; c < B; c++) {
            int32_t col = bc * B + c;
            if (col < cols)
                sum += v[c * rows_pad] * x[col];
        }
    }
    y[row] = sum;
}

// Where diagonal `diag` of the merge of row ends (ptr[1..rows]) and entry
// indices 0..nnz-1 crosses: the first row whose end is not yet consumed.
__device__ int32_t merge_search(int64_t diag, const int32_t *__restrict__ ptr, int32_t rows, int64_t nnz)
{
    int64_t lo = diag > nnz ? diag - nnz : 0, hi = diag < rows ? diag : rows;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (ptr[mid + 1] <= diag - mid - 1)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int32_t)lo;
}

// The merge path split in tiles of merge_tile items (rows + entries), a block
// each: the start of every tile, found once per call by merge_tiles.
struct merge_coord {
    int32_t row, k;
};

__global__ void merge_tiles(int32_t rows, int64_t nnz, const int32_t *__restrict__ ptr, merge_coord *coords,
                            int64_t tiles)
{
    int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (t > tiles)
        return;
    int64_t diag = t * merge_tile < rows + nnz ? t * merge_tile : rows + nnz;
    int32_t row = merge_search(diag, ptr, rows, nnz);
    coords[t] = {row, (int32_t)(diag - row)};
}

// One tile per block. The tile's products val[k] * x[idx[k]] and row ends
// are staged in shared memory with coalesced loads; then each thread walks
// merge_items of the path: an entry adds to the running sum, a row end
// stores it. A row begun and ended by one thread is stored; any other part
// of a row is added atomically into y, zeroed beforehand.
template <typename T>
__global__ void __launch_bounds__(merge_threads)
    csr_merge(int32_t rows, const int32_t *__restrict__ ptr, const int32_t *__restrict__ idx,
              const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y,
              const merge_coord *__restrict__ coords)
{
    __shared__ T prod[merge_tile];
    __shared__ int32_t row_end[merge_tile]; // local entry index where each row of the tile ends
    __shared__ int32_t first_start;         // local entry index where the tile's first row starts
    const merge_coord c0 = coords[blockIdx.x], c1 = coords[blockIdx.x + 1];
    const int32_t n_rows = c1.row - c0.row, n_k = c1.k - c0.k;
    for (int32_t i = threadIdx.x; i < n_rows; i += merge_threads)
        row_end[i] = ptr[c0.row + i + 1] - c0.k;
    for (int32_t i = threadIdx.x; i < n_k; i += merge_threads)
        prod[i] = val[c0.k + i] * x[idx[c0.k + i]];
    if (threadIdx.x == 0)
        first_start = c0.row < rows ? ptr[c0.row] - c0.k : 0;
    __syncthreads();
    const int32_t len = n_rows + n_k, d = min((int32_t)threadIdx.x * merge_items, len),
                  d_end = min(d + merge_items, len);
    int32_t lo = max(0, d - n_k), hi = min(d, n_rows);
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (row_end[mid] <= d - mid - 1)
            lo = mid + 1;
        else
            hi = mid;
    }
    int32_t r = lo, k = d - lo;
    bool whole = k == (r == 0 ? first_start : row_end[r - 1]); // the row starts in this thread
    bool begun = false;                                        // entries of row r summed here
    T sum = 0;
    for (int32_t item = d; item < d_end; item++) {
        if (r < n_rows && row_end[r] <= k) {
            if (whole)
                y[c0.row + r] = sum;
            else
                atomicAdd(&y[c0.row + r], sum);
            sum = 0, r++, whole = true, begun = false;
        } else {
            sum += prod[k++];
            begun = true;
        }
    }
    if (begun) // the row goes on past this thread
        atomicAdd(&y[c0.row + r], sum);
}

// csr-balanced (sparse/balance.h): pieces of long rows first, then blocks of
// shorter rows. A block stages its products in shared memory with coalesced
// loads, then `group` threads sum each row from there, and a warp each row
// longer than PB_BAL_STEPS steps of the group (H100, pareto rows of alpha
// 1.3: 109 -> 89 us, blocks fuller and groups no wider than the mean row).
template <typename T>
__device__ __forceinline__ void balanced_piece(const pb_bal_piece p, const int32_t *__restrict__ idx,
                                               const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y,
                                               T *partial, int32_t *counter, T *warp_sum)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T sum = 0;
#pragma unroll 4
    for (int32_t k = p.k0 + threadIdx.x; k < p.k1; k += PB_BAL_THREADS)
        sum += __ldcs(&val[k]) * x[__ldcs(&idx[k])];
    sum = warp_reduce(sum);
    if (lane == 0)
        warp_sum[warp] = sum;
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    sum = 0;
    for (int w = 0; w < PB_BAL_THREADS / 32; w++)
        sum += warp_sum[w];
    if (p.pieces == 1) {
        y[p.row] = sum;
        return;
    }
    // The last piece of the row to finish adds the partial sums in piece
    // order (the threadfence reduction of the CUDA samples).
    partial[p.part] = sum;
    __threadfence();
    if (atomicAdd(&counter[p.first], 1) != p.pieces - 1)
        return;
    __threadfence();
    T total = 0;
    for (int32_t i = 0; i < p.pieces; i++)
        total += static_cast<volatile T *>(partial)[p.first + i];
    y[p.row] = total;
    counter[p.first] = 0; // ready for the next product
}

// Every load of a thread is issued before its products: the gathers of x are
// what the time goes to, and more of them in flight beat occupancy (H100,
// double: 0.80 -> 0.92-0.98 of cuSPARSE on heavy-tailed and random rows with
// 6 blocks per SM rather than 8; float keeps 8).
template <typename T, int min_blocks>
__global__ void __launch_bounds__(PB_BAL_THREADS, min_blocks)
    csr_balanced(const int32_t *__restrict__ ptr, const int32_t *__restrict__ idx, const T *__restrict__ val,
                 const T *__restrict__ x, T *__restrict__ y, const pb_bal_piece *__restrict__ pieces,
                 int32_t n_pieces, const pb_bal_block *__restrict__ blocks, T *partial, int32_t *counter)
{
    constexpr int NZ = PB_BAL_NNZ, PER = NZ / PB_BAL_THREADS;
    __shared__ T prod[NZ];
    __shared__ int32_t start[PB_BAL_ROWS + 1]; // row offsets from the block's first entry
    if ((int32_t)blockIdx.x < n_pieces) {
        balanced_piece(pieces[blockIdx.x], idx, val, x, y, partial, counter, prod);
        return;
    }
    const pb_bal_block b = blocks[blockIdx.x - n_pieces];
    // The matrix streams through once: evict-first loads keep x in L2.
    int32_t c[PER];
    T v[PER];
#pragma unroll
    for (int i = 0; i < PER; i++) {
        int32_t k = b.k0 + i * PB_BAL_THREADS + (int32_t)threadIdx.x;
        c[i] = k < b.k1 ? __ldcs(&idx[k]) : -1;
        v[i] = k < b.k1 ? __ldcs(&val[k]) : T(0);
    }
#pragma unroll
    for (int i = 0; i < PER; i++)
        if (c[i] >= 0)
            prod[i * PB_BAL_THREADS + threadIdx.x] = v[i] * x[c[i]];
    for (int32_t i = threadIdx.x; i <= b.row1 - b.row0; i += PB_BAL_THREADS)
        start[i] = ptr[b.row0 + i] - b.k0;
    __syncthreads();
    // Rows of up to PB_BAL_STEPS steps of the group: `group` threads each;
    // longer ones (the plan's group follows the mean row): a warp each, after.
    const int g = b.group, lane = threadIdx.x & (g - 1), per_pass = PB_BAL_THREADS / g;
    const int32_t rows = b.row1 - b.row0, limit = PB_BAL_STEPS * g;
    for (int32_t r0 = 0; r0 < rows; r0 += per_pass) { // the same trip count for every thread
        int32_t r = r0 + (int32_t)threadIdx.x / g;
        T sum = 0;
        bool mine = r < rows && start[r + 1] - start[r] <= limit; // the same for the whole group
        if (mine)
            for (int32_t j = start[r] + lane, end = start[r + 1]; j < end; j += g)
                sum += prod[j];
        for (int off = g / 2; off > 0; off /= 2)
            sum += __shfl_down_sync(0xffffffffu, sum, off, g);
        if (lane == 0 && mine)
            __stcs(&y[b.row0 + r], sum);
    }
    const int wlane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int32_t base = warp * 32; base < rows; base += PB_BAL_THREADS) { // a warp looks at 32 rows at a time
        int32_t r = base + wlane;
        unsigned longer = __ballot_sync(0xffffffffu, r < rows && start[r + 1] - start[r] > limit);
        while (longer) {
            int32_t row = base + __ffs(longer) - 1;
            longer &= longer - 1;
            T sum = 0;
            for (int32_t j = start[row] + wlane, end = start[row + 1]; j < end; j += 32)
                sum += prod[j];
            sum = warp_reduce(sum);
            if (wlane == 0)
                __stcs(&y[b.row0 + row], sum);
        }
    }
}

// csr-split: the entries split evenly over blocks with no regard to rows
// (as cuSPARSE's CSR kernel), so a row of 200,000 entries costs what any
// 200,000 entries cost. Each thread takes `per` consecutive entries (vector
// loads where aligned, all in flight before the gathers of x), finds its
// first row by a binary search of the row offsets within its block's rows
// (block_row, made on the device once per matrix), and walks its entries:
// a row that starts and ends in the thread is written at once, the empty
// rows it passes are written 0. Rows crossing threads are summed by a
// segmented scan over the threads' open rows (runs of equal rows are
// contiguous), in thread order; rows crossing blocks leave the block's part
// in carry_row/carry_val, added by split_fixup in block order. Every row is
// summed in the same order on every run.
constexpr int split_threads = 256;

template <typename T, int PER, bool VEC>
__device__ __forceinline__ void split_load(int64_t a, int64_t nnz, const int32_t *__restrict__ idx,
                                           const T *__restrict__ val, int32_t (&c)[PER], T (&v)[PER])
{
    if (VEC && a + PER <= nnz) {
#pragma unroll
        for (int i = 0; i < PER; i += 4) {
            int4 q = __ldcs(reinterpret_cast<const int4 *>(idx + a + i));
            c[i] = q.x, c[i + 1] = q.y, c[i + 2] = q.z, c[i + 3] = q.w;
        }
        if constexpr (sizeof(T) == 8) {
#pragma unroll
            for (int i = 0; i < PER; i += 2) {
                double2 q = __ldcs(reinterpret_cast<const double2 *>(val + a + i));
                v[i] = q.x, v[i + 1] = q.y;
            }
        } else {
#pragma unroll
            for (int i = 0; i < PER; i += 4) {
                float4 q = __ldcs(reinterpret_cast<const float4 *>(val + a + i));
                v[i] = q.x, v[i + 1] = q.y, v[i + 2] = q.z, v[i + 3] = q.w;
            }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < PER; i++) {
        bool in = a + i < nnz;
        c[i] = in ? __ldcs(idx + a + i) : 0;
        v[i] = in ? __ldcs(val + a + i) : T(0);
    }
}

// The inclusive sum over each run of equal keys (>= 0) of the block's
// threads, in thread order; key -1 belongs to no run.
template <typename T> __device__ __forceinline__ T split_scan(int32_t key, T v, int32_t *warp_key, T *warp_sum)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
        T up = __shfl_up_sync(0xffffffffu, v, off);
        int32_t kup = __shfl_up_sync(0xffffffffu, key, off);
        if (lane >= off && key >= 0 && kup == key)
            v += up;
    }
    if (lane == 31)
        warp_key[warp] = key, warp_sum[warp] = v;
    __syncthreads();
    if (warp == 0) {
        constexpr int warps = split_threads / 32;
        int32_t k = lane < warps ? warp_key[lane] : -1;
        T w = lane < warps ? warp_sum[lane] : T(0);
#pragma unroll
        for (int off = 1; off < warps; off *= 2) {
            T up = __shfl_up_sync(0xffffffffu, w, off);
            int32_t kup = __shfl_up_sync(0xffffffffu, k, off);
            if (lane >= off && k >= 0 && kup == k)
                w += up;
        }
        if (lane < warps)
            warp_sum[lane] = w;
    }
    __syncthreads();
    if (warp > 0 && key >= 0 && warp_key[warp - 1] == key)
        v += warp_sum[warp - 1];
    return v;
}

// The row holding entry k: the last row in [lo, hi] starting at or before it.
__device__ __forceinline__ int32_t split_row_holding(const int32_t *__restrict__ ptr, int64_t k, int32_t lo, int32_t hi)
{
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (__ldg(&ptr[mid]) <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// ACC: add into y (csr-panels' later panels, and matrices whose y is zeroed
// first) rather than store; empty rows are then left as they are, and a run
// of them is passed by a binary search, not row by row.
template <typename T, bool ACC> __device__ __forceinline__ void split_put(T *y, int32_t r, T v)
{
    y[r] = ACC ? y[r] + v : v;
}

// Row r's place in y: itself, or where the plan compacted the rows, its row.
__device__ __forceinline__ int32_t split_y_row(const int32_t *__restrict__ compact_row, int32_t r)
{
    return compact_row ? __ldg(&compact_row[r]) : r;
}

// Where csr-split reads x: x itself, or (csr-hubs) columns below `hubs` from
// the hubs' packed copy and column c >= hubs from x[c - hubs].
template <typename T> struct split_x {
    const T *x, *hubs_x;
    int32_t hubs;
};

template <typename T, bool HUBS> __device__ __forceinline__ T split_x_at(const split_x<T> &src, int32_t c)
{
    if (HUBS)
        return c < src.hubs ? __ldg(&src.hubs_x[c]) : __ldg(&src.x[c - src.hubs]);
    return __ldg(&src.x[c]);
}

template <typename T, int PER, bool VEC, bool ACC, bool HUBS>
__global__ void __launch_bounds__(split_threads)
    csr_split(int32_t rows, int64_t nnz, const int32_t *__restrict__ ptr, const int32_t *__restrict__ idx,
              const T *__restrict__ val, const split_x<T> x, T *__restrict__ y,
              const int32_t *__restrict__ block_row, int32_t *__restrict__ carry_row, T *__restrict__ carry_val,
              const int32_t *__restrict__ compact_row)
{
    __shared__ int32_t keys[split_threads], warp_key[split_threads / 32];
    __shared__ T sums[split_threads], warp_sum[split_threads / 32];
    const int t = threadIdx.x;
    const int64_t a = ((int64_t)blockIdx.x * split_threads + t) * PER;
    int32_t c[PER];
    T v[PER];
    split_load<T, PER, VEC>(a, nnz, idx, val, c, v);
    T p[PER];
#pragma unroll
    for (int i = 0; i < PER; i++)
        p[i] = a + i < nnz ? v[i] * split_x_at<T, HUBS>(x, c[i]) : T(0);

    int32_t key = -1, head_row = -1;
    T open = 0, head_val = 0;
    if (a < nnz) {
        const int32_t last = block_row[blockIdx.x + 1];
        int32_t r = split_row_holding(ptr, a, block_row[blockIdx.x], last);
        if (a == 0 && !ACC) // the empty rows before the first entry
            for (int32_t e = 0; e < r; e++)
                y[e] = T(0);
        bool started_before = __ldg(&ptr[r]) < a;
        int64_t end = __ldg(&ptr[r + 1]);
        bool any = false; // entries of row r summed in `open`
#pragma unroll
        for (int i = 0; i < PER; i++) {
            if (a + i >= nnz)
                break;
            open += p[i];
            any = true;
            if (a + i + 1 == end) {
                if (started_before)
                    head_row = r, head_val = open, started_before = false;
                else
                    split_put<T, ACC>(y, split_y_row(compact_row, r), open);
                open = 0, any = false;
                // the empty rows after it, then the next row with entries
                if (!ACC) {
                    for (r++; r < rows && (end = __ldg(&ptr[r + 1])) == a + i + 1; r++)
                        y[r] = T(0);
                } else if (++r < rows && (end = __ldg(&ptr[r + 1])) == a + i + 1 && a + i + 1 < nnz) {
                    r = split_row_holding(ptr, a + i + 1, r, last); // past the empty rows at once
                    end = __ldg(&ptr[r + 1]);
                }
            }
        }
        if (any)
            key = r; // row r goes on past this thread (and maybe started before it)
    }
    T run = split_scan(key, open, warp_key, warp_sum);
    keys[t] = key, sums[t] = run;
    __syncthreads();
    if (head_row >= 0)
        split_put<T, ACC>(y, split_y_row(compact_row, head_row),
                          head_val + (t > 0 && keys[t - 1] == head_row ? sums[t - 1] : T(0)));
    if (t == split_threads - 1)
        carry_row[blockIdx.x] = key, carry_val[blockIdx.x] = run;
}

// Rows that cross blocks: the first block of each run of equal carry rows
// adds the run's parts, in block order, to what the row's last block wrote.
template <typename T>
__global__ void split_fixup(int32_t blocks, const int32_t *__restrict__ carry_row, const T *__restrict__ carry_val,
                           T *__restrict__ y, const int32_t *__restrict__ compact_row)
{
    int32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= blocks)
        return;
    int32_t r = carry_row[b];
    if (r < 0 || (b > 0 && carry_row[b - 1] == r))
        return;
    T sum = 0;
    for (int32_t j = b; j < blocks && carry_row[j] == r; j++)
        sum += carry_val[j];
    y[split_y_row(compact_row, r)] += sum;
}

// A thread writes the empty rows that follow its row one by one: where the
// matrix has runs of this many or more (a column panel of csr-panels, a
// matrix padded with empty rows), y is zeroed first instead.
constexpr int32_t split_empty_run = 64;

__global__ void split_empty_runs(int32_t rows, const int32_t *__restrict__ ptr, int32_t *__restrict__ found)
{
    int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (r + split_empty_run <= rows && ptr[r] == ptr[r + split_empty_run])
        *found = 1;
}

// block_row[b] = the row holding entry b * per_block (the last row starting
// at or before it); block_row[blocks] = the last row.
__global__ void split_plan(int32_t rows, int64_t per_block, int32_t blocks, const int32_t *__restrict__ ptr,
                           int32_t *__restrict__ block_row)
{
    int32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b > blocks)
        return;
    if (b == blocks) {
        block_row[b] = rows - 1;
        return;
    }
    int64_t k = (int64_t)b * per_block;
    int32_t lo = 0, hi = rows - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (ptr[mid] <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    block_row[b] = lo;
}

// csr-split's compacted rows: flag[r] = whether row r has entries (then
// scanned into each row's count of such rows up to it, `at`), and the rows
// with entries moved to their places.
__global__ void split_row_flags(int32_t rows, const int32_t *__restrict__ ptr, int32_t *__restrict__ flag)
{
    int32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows)
        flag[r] = ptr[r + 1] > ptr[r];
}

__global__ void split_compact(int32_t rows, const int32_t *__restrict__ ptr, const int32_t *__restrict__ at,
                              int32_t *__restrict__ compact_ptr, int32_t *__restrict__ compact_row)
{
    int32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    if (ptr[r + 1] > ptr[r])
        compact_ptr[at[r] - 1] = ptr[r], compact_row[at[r] - 1] = r;
    if (r == rows - 1)
        compact_ptr[at[r]] = ptr[rows];
}

// auto's ELLPACK transposed copy of a CSR matrix: a thread per row, padding
// with column -1 and value 0 (what ell_rows reads).
template <typename T>
__global__ void csr_to_ellt(int32_t rows, int32_t width, const int32_t *__restrict__ ptr,
                            const int32_t *__restrict__ idx, const T *__restrict__ val, int32_t *__restrict__ ell_idx,
                            T *__restrict__ ell_val)
{
    int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    int32_t begin = ptr[row], len = ptr[row + 1] - begin;
    for (int32_t j = 0; j < width; j++) {
        size_t at = (size_t)j * (size_t)rows + (size_t)row;
        ell_idx[at] = j < len ? idx[begin + j] : -1;
        ell_val[at] = j < len ? val[begin + j] : T(0);
    }
}

unsigned blocks_for(int64_t threads, int block) { return (unsigned)((threads + block - 1) / block); }

template <typename T, int G> pb_status launch_vector(const pb_spmv_args *a, cudaStream_t s)
{
    int block = block_of(a);
    if (a->ptr_bits == 64)
        csr_vector<T, G, int64_t><<<blocks_for((int64_t)a->rows * G, block), block, 0, s>>>(
            a->rows, pb__cuda_ptr<const int64_t>(a->ptr), pb__cuda_ptr<const int32_t>(a->idx),
            pb__cuda_ptr<const T>(a->val), pb__cuda_ptr<const T>(a->x), pb__cuda_ptr<T>(a->y));
    else
        csr_vector<T, G, int32_t><<<blocks_for((int64_t)a->rows * G, block), block, 0, s>>>(
            a->rows, pb__cuda_ptr<const int32_t>(a->ptr), pb__cuda_ptr<const int32_t>(a->idx),
            pb__cuda_ptr<const T>(a->val), pb__cuda_ptr<const T>(a->x), pb__cuda_ptr<T>(a->y));
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

// Rows past 8 passes of the group go to warps, past 1024 entries to blocks;
// a quarter of the threads the GPU holds at once work on them.
// The long-row lists of a (made by csr_classify once per matrix, kept with
// the device's sparse state; defined below).
pb_status adaptive_lists(pb_device *dev, const pb_spmv_args *a, int32_t split, cudaStream_t s, long_rows *out);

template <typename T, int G> pb_status launch_adaptive(pb_device *dev, const pb_spmv_args *a, cudaStream_t s)
{
    const cudaDeviceProp &prop = pb__cuda(dev)->prop;
    int block = block_of(a), long_blocks = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / block) / 4;
    long_rows lr = {};
    pb_status st = adaptive_lists(dev, a, 8 * G, s, &lr);
    if (st != PB_OK)
        return st;
    csr_adaptive<T, G><<<long_blocks + blocks_for((int64_t)a->rows * G, block), block, 0, s>>>(
        a->rows, pb__cuda_ptr<const int32_t>(a->ptr), pb__cuda_ptr<const int32_t>(a->idx),
        pb__cuda_ptr<const T>(a->val), pb__cuda_ptr<const T>(a->x), pb__cuda_ptr<T>(a->y), lr, long_blocks);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

// Instantiates f<T, G> for the group size g.
#define PB_SPMV_BY_GROUP(f, T, g, ...)                                                         \
    switch (g) {                                                                               \
    case 1: return f<T, 1>(__VA_ARGS__);                                                       \
    case 2: return f<T, 2>(__VA_ARGS__);                                                       \
    case 4: return f<T, 4>(__VA_ARGS__);                                                       \
    case 8: return f<T, 8>(__VA_ARGS__);                                                       \
    case 16: return f<T, 16>(__VA_ARGS__);                                                     \
    default: return f<T, 32>(__VA_ARGS__);                                                     \
    }

template <typename T> pb_status dispatch_vector(const pb_spmv_args *a, int group, cudaStream_t s)
{
    PB_SPMV_BY_GROUP(launch_vector, T, group, a, s)
}

// With the long rows taken out, a group as wide as the mean row length works
// best (H100: 16 for rows of 16 on average, random or power-law).
int adaptive_group(const pb_spmv_args *a)
{
    int group = a->group;
    if (!group)
        for (group = 1; group < 32 && 2 * group <= (a->rows ? (double)a->nnz / a->rows : 1);)
            group *= 2;
    return group;
}

template <typename T> pb_status dispatch_adaptive(pb_device *dev, const pb_spmv_args *a, cudaStream_t s)
{
    PB_SPMV_BY_GROUP(launch_adaptive, T, adaptive_group(a), dev, a, s)
}

template <typename T, bool transposed> pb_status launch_ell(const pb_spmv_args *a, cudaStream_t s)
{
    int block = block_of(a);
    ell_rows<T, transposed><<<blocks_for(a->rows, block), block, 0, s>>>(
        a->rows, a->width, pb__cuda_ptr<const int32_t>(a->idx), pb__cuda_ptr<const T>(a->val),
        pb__cuda_ptr<const T>(a->x), pb__cuda_ptr<T>(a->y));
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

template <typename T> pb_status launch_merge(const pb_spmv_args *a, cudaStream_t s)
{
    int64_t tiles = ((int64_t)a->rows + a->nnz + merge_tile - 1) / merge_tile;
    merge_coord *coords = nullptr;
    PB_CUDA_CHECK(cudaMallocAsync(&coords, (size_t)(tiles + 1) * sizeof *coords, s));
    T *y = pb__cuda_ptr<T>(a->y);
    cudaError_t e = cudaMemsetAsync(y, 0, (size_t)a->rows * sizeof(T), s);
    if (e == cudaSuccess) {
        merge_tiles<<<blocks_for(tiles + 1, 256), 256, 0, s>>>(a->rows, a->nnz, pb__cuda_ptr<const int32_t>(a->ptr),
                                                               coords, tiles);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) {
        csr_merge<T><<<(unsigned)tiles, merge_threads, 0, s>>>(
            a->rows, pb__cuda_ptr<const int32_t>(a->ptr), pb__cuda_ptr<const int32_t>(a->idx),
            pb__cuda_ptr<const T>(a->val), pb__cuda_ptr<const T>(a->x), y, coords);
        e = cudaGetLastError();
    }
    cudaError_t freed = cudaFreeAsync(coords, s);
    PB_CUDA_CHECK(e);
    PB_CUDA_CHECK(freed);
    return PB_OK;
}

// Empty matrices launch nothing; the grid must fit the hardware's limit.
bool fits(const pb_spmv_args *a, int64_t threads, const char **why)
{
    if ((threads + block_of(a) - 1) / block_of(a) > INT_MAX) {
        *why = "matrix too large for the grid";
        return false;
    }
    return true;
}

} // namespace

#define PB_SPMV_DISPATCH(call_f32, call_f64)                                                   \
    const pb_spmv_args *a = spmv_args(args);                                                  \
    (void)dev;                                                                                 \
    if (a->rows == 0)                                                                          \
        return PB_OK;                                                                          \
    cudaStream_t stream = pb__cuda_stream(s);                                                  \
    return a->prec == PB_DOUBLE ? call_f64 : call_f32

bool pb__cuda_spmv_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    const pb_spmv_args *a = spmv_args(args);
    return fits(a, (int64_t)a->rows * 32, why);
}

pb_status pb__cuda_spmv_scalar(pb_device *dev, const void *args, pb_stream *s)
{
    PB_SPMV_DISPATCH(dispatch_vector<float>(a, 1, stream), dispatch_vector<double>(a, 1, stream));
}

pb_status pb__cuda_spmv_vector(pb_device *dev, const void *args, pb_stream *s)
{
    PB_SPMV_DISPATCH(dispatch_vector<float>(a, pb__spmv_row_group(a), stream), dispatch_vector<double>(a, pb__spmv_row_group(a), stream));
}

pb_status pb__cuda_spmv_adaptive(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_spmv_args *a = spmv_args(args);
    if (a->rows == 0)
        return PB_OK;
    cudaStream_t stream = pb__cuda_stream(s);
    return a->prec == PB_DOUBLE ? dispatch_adaptive<double>(dev, a, stream) : dispatch_adaptive<float>(dev, a, stream);
}

pb_status pb__cuda_spmv_adaptive_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    (void)note, (void)len;
    const pb_spmv_args *a = spmv_args(args);
    long_rows lr = {};
    pb_status st = a->rows ? adaptive_lists(dev, a, 8 * adaptive_group(a), nullptr, &lr) : PB_OK;
    if (st == PB_OK)
        PB_CUDA_CHECK(cudaDeviceSynchronize());
    return st;
}

pb_status pb__cuda_spmv_ell(pb_device *dev, const void *args, pb_stream *s)
{
    PB_SPMV_DISPATCH((launch_ell<float, false>(a, stream)), (launch_ell<double, false>(a, stream)));
}

pb_status pb__cuda_spmv_ellt(pb_device *dev, const void *args, pb_stream *s)
{
    PB_SPMV_DISPATCH((launch_ell<float, true>(a, stream)), (launch_ell<double, true>(a, stream)));
}

pb_status pb__cuda_spmv_merge(pb_device *dev, const void *args, pb_stream *s)
{
    PB_SPMV_DISPATCH(launch_merge<float>(a, stream), launch_merge<double>(a, stream));
}

// ---- cuSPARSE --------------------------------------------------------------

static pb_status cusparse_status(cusparseStatus_t e, const char *expr, const char *file, int line)
{
    pb_status st = e == CUSPARSE_STATUS_ALLOC_FAILED ? PB_ERR_NOMEM : PB_ERR_DEVICE;
    return pb__fail(st, "%s failed at %s:%d: %s", expr, file, line, cusparseGetErrorString(e));
}

#define PB_CUSPARSE_CHECK(expr)                                                    \
    do {                                                                           \
        cusparseStatus_t pb__e = (expr);                                           \
        if (pb__e != CUSPARSE_STATUS_SUCCESS)                                      \
            return cusparse_status(pb__e, #expr, __FILE__, __LINE__);              \
    } while (0)

// Per-matrix state kept across calls, as a user multiplying many times would
// keep it (buffer stamps say when the CSR arrays changed). The cuSPARSE
// anchor: descriptors, workspace and cusparseSpMV_preprocess once per matrix
// and per x/y, then cusparseSpMV alone. csr-adaptive: its long-row lists.
// A device keeps one per matrix in use (core/plans.h).
constexpr int n_picks = PB_PICK_HUBS + 1; // auto's candidates, by pb_spmv_pick
const char *const pick_names[n_picks] = {"ellt", "csr-balanced", "csr-split", "bcsr", "dia", "csr-panels",
                                         "csr-vector", "csr-hubs"};

// csr-split's plan for one CSR matrix: the row of each block's first entry
// (made on the device) and the blocks' carries.
struct split_plan_arrays {
    int32_t *block_row, *carry_row;
    void *carry_val;
    int32_t blocks, per;
    bool zero_first; // a run of split_empty_run empty rows or more: y zeroed, then added into
    // Where many rows are empty (split_compact_share): the rows with entries
    // alone, their offsets (compact_ptr, compact_rows + 1 of them) and each
    // one's row in y (compact_row); y is zeroed, and the blocks walk no empty
    // rows. The blocks and block_row are then over the compacted rows.
    int32_t *compact_ptr, *compact_row;
    int32_t compact_rows;
};

// One column panel of csr-panels: its own CSR arrays and csr-split plan.
struct csr_panel {
    int32_t *ptr, *idx;
    void *val;
    int64_t nnz;
    split_plan_arrays plan;
};

struct pb_cuda_sparse {
    // csr-balanced and auto: the plan and the row statistics, made from the
    // row offsets with stamp `bal_ptr`.
    pb_bal_block *bal_blocks;
    pb_bal_piece *bal_pieces;
    void *bal_partial;
    int32_t *bal_counter;
    int32_t bal_n_blocks, bal_n_pieces, bal_long_rows, bal_block_nnz;
    uint64_t bal_ptr;
    int32_t bal_rows;
    int64_t bal_nnz;
    pb_spmv_row_stats stats;
    // auto: what it picked for the arrays with stamps pick_ptr/idx/val in
    // precision pick_prec, the candidates' times (ms, 0 = not a candidate),
    // and its ELLT copy (made from the arrays with stamps ell_ptr/ell_idx/ell_val).
    pb_spmv_pick pick;
    uint64_t pick_ptr, pick_idx, pick_val;
    enum pb_precision pick_prec;
    float pick_ms[n_picks];
    int32_t *ell_idx;
    void *ell_val;
    int32_t ell_width;
    uint64_t ell_ptr_stamp, ell_idx_stamp, ell_val_stamp;
    enum pb_precision ell_prec;
    // csr-split: its plan, for offsets with stamp split_ptr.
    split_plan_arrays split;
    int32_t split_rows;
    int64_t split_nnz;
    uint64_t split_ptr;
    // csr-panels, and auto where x outgrows L2: the copy cut into column
    // panels (panels_n = 0: none) of the arrays with stamps
    // panels_ptr/idx/val_stamp in precision panels_prec, or why there is none.
    csr_panel *panels;
    int panels_n;
    int32_t panels_width;
    bool panels_refused;
    uint64_t panels_ptr_stamp, panels_idx_stamp, panels_val_stamp;
    enum pb_precision panels_prec;
    // csr-hubs, and auto where a few columns hold most entries: the columns
    // renumbered (hubs_idx), the hub columns (hubs_n of hubs_list) and their
    // entries of x (hubs_x), for the column indices with stamp
    // hubs_idx_stamp in precision hubs_prec, or why not.
    int32_t *hubs_idx, *hubs_list;
    void *hubs_x;
    int32_t hubs_n;
    double hubs_share;
    bool hubs_refused, hubs_any;
    uint64_t hubs_idx_stamp;
    enum pb_precision hubs_prec;
    // bcsr, and auto where blocks pay: the block copy (bcsr_b = 0: none) of
    // the arrays with stamps bcsr_ptr/idx/val_stamp in precision bcsr_prec,
    // and the bytes it moves per product over CSR's.
    int32_t *bcsr_ptr, *bcsr_idx;
    void *bcsr_val;
    int32_t bcsr_b, bcsr_block_rows, bcsr_blocks;
    int32_t bcsr_width; // > 0: the block ELLPACK layout (bcsr_ptr unused), its width
    int32_t bcsr_refused_b; // no copy made: the best block size moved more
    double bcsr_ratio;
    uint64_t bcsr_ptr_stamp, bcsr_idx_stamp, bcsr_val_stamp;
    enum pb_precision bcsr_prec;
    // dia, and auto where diagonals pay: the diagonal copy (each diagonal
    // over the rows it spans) of the arrays with stamps
    // dia_ptr/idx/val_stamp in precision dia_prec, or why there is none.
    void *dia_off; // dia_diags of dia_diag: offset, rows spanned, where its values start
    void *dia_val;
    int dia_diags;
    double dia_ratio;
    bool dia_refused;
    uint64_t dia_ptr_stamp, dia_idx_stamp, dia_val_stamp;
    enum pb_precision dia_prec;
    int32_t *lists; // csr-adaptive: counts[2], then the list
    size_t lists_bytes;
    uint64_t lists_ptr; // stamp of the row offsets the lists were made from
    int32_t lists_rows, lists_split;
    cusparseHandle_t handle; // created on first use of the anchor
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t x, y;
    void *buffer;
    int64_t *idx64; // the column indices widened: cuSPARSE takes 64-bit offsets with 64-bit columns only
    cusparseStatus_t unprepared; // what cusparseSpMV_preprocess said where it failed (the products go on without)
    uint64_t ptr, idx, val; // stamps of the arrays mat was made from
    const void *x_ptr, *y_ptr;
    enum pb_precision prec;
};

static void split_plan_free(split_plan_arrays *p);
static void panels_drop(pb_cuda_sparse *sp);
static void hubs_drop(pb_cuda_sparse *sp);

static void sparse_drop_matrix(pb_cuda_sparse *sp)
{
    if (sp->mat)
        cusparseDestroySpMat(sp->mat);
    if (sp->x)
        cusparseDestroyDnVec(sp->x);
    if (sp->y)
        cusparseDestroyDnVec(sp->y);
    cudaFree(sp->buffer);
    cudaFree(sp->idx64);
    sp->mat = nullptr, sp->x = sp->y = nullptr, sp->buffer = nullptr, sp->idx64 = nullptr;
}

__global__ void widen_indices(int64_t n, const int32_t *__restrict__ in, int64_t *__restrict__ out)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

static void *sparse_make() { return new (std::nothrow) pb_cuda_sparse{}; }

static void sparse_free(void *plan)
{
    pb_cuda_sparse *sp = static_cast<pb_cuda_sparse *>(plan);
    sparse_drop_matrix(sp);
    if (sp->handle)
        cusparseDestroy(sp->handle);
    cudaFree(sp->lists);
    cudaFree(sp->bal_blocks);
    cudaFree(sp->bal_pieces);
    cudaFree(sp->bal_partial);
    cudaFree(sp->bal_counter);
    cudaFree(sp->ell_idx);
    cudaFree(sp->ell_val);
    split_plan_free(&sp->split);
    panels_drop(sp);
    hubs_drop(sp);
    cudaFree(sp->bcsr_ptr);
    cudaFree(sp->bcsr_idx);
    cudaFree(sp->bcsr_val);
    cudaFree(sp->dia_off);
    cudaFree(sp->dia_val);
    delete sp;
}

void pb__cuda_sparse_init(pb_cuda_device *impl)
{
    impl->sparse.make = sparse_make;
    impl->sparse.drop = sparse_free;
}

static pb_status sparse_state(pb_device *dev, const pb_spmv_args *a, pb_cuda_sparse **out)
{
    *out = static_cast<pb_cuda_sparse *>(pb__plans_for(&pb__cuda(dev)->sparse, a->ptr));
    return *out ? PB_OK : PB_ERR_NOMEM;
}

namespace {
pb_status adaptive_lists(pb_device *dev, const pb_spmv_args *a, int32_t split, cudaStream_t s, long_rows *out)
{
    pb_cuda_sparse *sp = nullptr;
    pb_status st = sparse_state(dev, a, &sp);
    if (st != PB_OK)
        return st;
    size_t bytes = ((size_t)a->rows + 2) * sizeof(int32_t);
    bool fresh = sp->lists && sp->lists_ptr == a->ptr->stamp && sp->lists_rows == a->rows && sp->lists_split == split;
    if (!fresh && bytes > sp->lists_bytes) {
        cudaFree(sp->lists);
        sp->lists = nullptr, sp->lists_bytes = 0;
        PB_CUDA_CHECK(cudaMalloc(&sp->lists, bytes));
        sp->lists_bytes = bytes;
    }
    *out = {split, 1024, sp->lists + 2, sp->lists, a->rows};
    if (!fresh) {
        sp->lists_ptr = 0; // stale until the lists below are made
        PB_CUDA_CHECK(cudaMemsetAsync(out->counts, 0, 2 * sizeof(int32_t), s));
        csr_classify<<<blocks_for(a->rows, 256), 256, 0, s>>>(a->rows, pb__cuda_ptr<const int32_t>(a->ptr), *out);
        PB_CUDA_CHECK_LAUNCH();
        sp->lists_ptr = a->ptr->stamp, sp->lists_rows = a->rows, sp->lists_split = split;
    }
    return PB_OK;
}
} // namespace

// The csr-balanced plan and the row statistics of a's matrix, made on the
// host from its row offsets once per matrix (the offsets come back once).
static pb_status balanced_plan(pb_device *dev, const pb_spmv_args *a, pb_cuda_sparse **out)
{
    pb_cuda_sparse *sp = nullptr;
    pb_status st = sparse_state(dev, a, &sp);
    if (st != PB_OK)
        return st;
    *out = sp;
    if (sp->bal_ptr == a->ptr->stamp && sp->bal_rows == a->rows && sp->bal_nnz == a->nnz && sp->bal_ptr)
        return PB_OK;
    sp->bal_ptr = 0; // stale until the plan below is made
    cudaFree(sp->bal_blocks);
    cudaFree(sp->bal_pieces);
    cudaFree(sp->bal_partial);
    cudaFree(sp->bal_counter);
    sp->bal_blocks = nullptr, sp->bal_pieces = nullptr, sp->bal_partial = nullptr, sp->bal_counter = nullptr;
    int32_t *ptr = nullptr;
    if ((st = pb__host_alloc(((size_t)a->rows + 1) * sizeof *ptr, "spmv row offsets", (void **)&ptr)) != PB_OK)
        return st;
    pb_bal_plan plan = {};
    cudaError_t e = cudaMemcpy(ptr, a->ptr->handle, ((size_t)a->rows + 1) * sizeof *ptr, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        st = pb__csr_offsets_agree(ptr, a->rows, a->nnz);
    if (e == cudaSuccess && st == PB_OK) {
        pb__spmv_row_stats_of(ptr, a->rows, a->cols, &sp->stats);
        // PARBENCH_CUDA_BAL_WARP_ROWS=0: the plan before warp rows (groups as wide as the longest row), for A/B runs
        const char *env = getenv("PARBENCH_CUDA_BAL_WARP_ROWS");
        bool warp_rows = !(env && strcmp(env, "0") == 0);
        // Full blocks leave a small matrix's GPU idle (mhd4800a, 102k non-zeros:
        // 50 blocks, 2.4x slower): at least two blocks per SM where it has them.
        int64_t per_sm = a->nnz / (2 * (int64_t)pb__cuda(dev)->prop.multiProcessorCount);
        int32_t block_nnz = PB_BAL_NNZ;
        if (warp_rows && per_sm < PB_BAL_NNZ)
            block_nnz = (int32_t)((per_sm + PB_BAL_THREADS - 1) / PB_BAL_THREADS * PB_BAL_THREADS);
        if (block_nnz < PB_BAL_THREADS)
            block_nnz = PB_BAL_THREADS;
        st = pb__bal_plan(ptr, a->rows, block_nnz, warp_rows, &plan);
    }
    pb__host_free(ptr);
    if (e != cudaSuccess || st != PB_OK) {
        pb__bal_free(&plan);
        PB_CUDA_CHECK(e);
        return st;
    }
    size_t blocks = (size_t)plan.n_blocks * sizeof *plan.blocks, pieces = (size_t)plan.n_pieces * sizeof *plan.pieces,
           parts = (size_t)plan.n_parts;
    e = cudaMalloc(&sp->bal_blocks, blocks ? blocks : 1);
    if (e == cudaSuccess)
        e = cudaMalloc(&sp->bal_pieces, pieces ? pieces : 1);
    if (e == cudaSuccess)
        e = cudaMalloc(&sp->bal_partial, parts ? parts * sizeof(double) : 1);
    if (e == cudaSuccess)
        e = cudaMalloc(&sp->bal_counter, parts ? parts * sizeof(int32_t) : 1);
    if (e == cudaSuccess && blocks)
        e = cudaMemcpy(sp->bal_blocks, plan.blocks, blocks, cudaMemcpyHostToDevice);
    if (e == cudaSuccess && pieces)
        e = cudaMemcpy(sp->bal_pieces, plan.pieces, pieces, cudaMemcpyHostToDevice);
    if (e == cudaSuccess && parts)
        e = cudaMemset(sp->bal_counter, 0, parts * sizeof(int32_t));
    sp->bal_n_blocks = plan.n_blocks, sp->bal_n_pieces = plan.n_pieces, sp->bal_long_rows = plan.long_rows;
    sp->bal_block_nnz = plan.block_nnz;
    pb__bal_free(&plan);
    PB_CUDA_CHECK(e);
    sp->bal_ptr = a->ptr->stamp, sp->bal_rows = a->rows, sp->bal_nnz = a->nnz;
    return PB_OK;
}

template <typename T>
static pb_status launch_balanced(pb_cuda_sparse *sp, const pb_spmv_args *a, cudaStream_t s)
{
    int64_t grid = (int64_t)sp->bal_n_pieces + sp->bal_n_blocks;
    if (grid == 0)
        return PB_OK;
    auto kernel = sizeof(T) == 8 ? csr_balanced<T, 6> : csr_balanced<T, 8>;
    kernel<<<(unsigned)grid, PB_BAL_THREADS, 0, s>>>(
        pb__cuda_ptr<const int32_t>(a->ptr), pb__cuda_ptr<const int32_t>(a->idx), pb__cuda_ptr<const T>(a->val),
        pb__cuda_ptr<const T>(a->x), pb__cuda_ptr<T>(a->y), sp->bal_pieces, sp->bal_n_pieces, sp->bal_blocks,
        static_cast<T *>(sp->bal_partial), sp->bal_counter);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

pb_status pb__cuda_spmv_balanced(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_spmv_args *a = spmv_args(args);
    if (a->rows == 0)
        return PB_OK;
    pb_cuda_sparse *sp = nullptr;
    pb_status st = balanced_plan(dev, a, &sp);
    if (st != PB_OK)
        return st;
    cudaStream_t stream = pb__cuda_stream(s);
    return a->prec == PB_DOUBLE ? launch_balanced<double>(sp, a, stream) : launch_balanced<float>(sp, a, stream);
}

pb_status pb__cuda_spmv_balanced_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const pb_spmv_args *a = spmv_args(args);
    pb_cuda_sparse *sp = nullptr;
    pb_status st = a->rows ? balanced_plan(dev, a, &sp) : PB_OK;
    if (st == PB_OK && sp && note)
        snprintf(note, len, "%d blocks of <= %d, %d long rows in %d pieces", sp->bal_n_blocks, sp->bal_block_nnz,
                 sp->bal_long_rows, sp->bal_n_pieces);
    return st;
}

// ---- csr-split ----------------------------------------------------------------

// Entries per thread: PARBENCH_CUDA_SPLIT_ITEMS (4, 8 or 16) for tuning runs,
// else as many as fill the same registers, 8 floats or 4 doubles: more in
// flight hide more of the gathers' latency until occupancy pays for them
// (H200, 4M rows, heavy-tailed and random: float 0.94-0.96x cuSPARSE with 4,
// 0.97-1.00x with 8; double 0.99 with 4, 0.93-0.97 with 8).
static int split_items(enum pb_precision prec)
{
    const char *env = getenv("PARBENCH_CUDA_SPLIT_ITEMS");
    int n = env ? atoi(env) : 0;
    return n == 4 || n == 8 || n == 16 ? n : prec == PB_FLOAT ? 8 : 4;
}

static void split_plan_free(split_plan_arrays *p)
{
    cudaFree(p->block_row);
    cudaFree(p->carry_row);
    cudaFree(p->carry_val);
    cudaFree(p->compact_ptr);
    cudaFree(p->compact_row);
    *p = {};
}

// A thread that ends a row walks the empty rows after it, a dependent load
// each; past this share of empty rows the plan compacts them away instead
// (PARBENCH_SPLIT_COMPACT=0: never, 1: wherever a row is empty).
constexpr double split_compact_share = 0.25;

// Fills p's compacted rows where ptr's rows call for it (above).
static pb_status split_compact_make(int32_t rows, int64_t nnz, const int32_t *ptr, cudaStream_t s,
                                    split_plan_arrays *p)
{
    const char *env = getenv("PARBENCH_SPLIT_COMPACT");
    if ((env && atoi(env) == 0) || rows == 0 || nnz == 0)
        return PB_OK;
    int32_t *at = nullptr, kept = rows;
    void *scratch = nullptr;
    size_t bytes = 0;
    cudaError_t e = cub::DeviceScan::InclusiveSum(nullptr, bytes, (int32_t *)nullptr, (int32_t *)nullptr, rows, s);
    if (e == cudaSuccess)
        e = cudaMalloc(&at, (size_t)rows * sizeof *at);
    if (e == cudaSuccess)
        e = cudaMalloc(&scratch, bytes ? bytes : 1);
    if (e == cudaSuccess) {
        split_row_flags<<<blocks_for(rows, 256), 256, 0, s>>>(rows, ptr, at);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cub::DeviceScan::InclusiveSum(scratch, bytes, at, at, rows, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&kept, at + rows - 1, sizeof kept, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    bool compact = kept < rows && (env ? atoi(env) == 1 : rows - kept >= split_compact_share * rows);
    if (e == cudaSuccess && compact) {
        e = cudaMalloc(&p->compact_ptr, ((size_t)kept + 1) * sizeof(int32_t));
        if (e == cudaSuccess)
            e = cudaMalloc(&p->compact_row, (size_t)kept * sizeof(int32_t));
        if (e == cudaSuccess) {
            split_compact<<<blocks_for(rows, 256), 256, 0, s>>>(rows, ptr, at, p->compact_ptr, p->compact_row);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s);
        p->compact_rows = kept;
    }
    cudaFree(at);
    cudaFree(scratch);
    PB_CUDA_CHECK(e);
    return PB_OK;
}

// The plan for CSR row offsets ptr (device memory) of rows rows and nnz
// entries, made on the device and waited for.
static pb_status split_plan_make(int32_t rows, int64_t nnz, const int32_t *ptr, enum pb_precision prec,
                                 cudaStream_t s, split_plan_arrays *out)
{
    split_plan_free(out);
    int per = split_items(prec);
    int64_t per_block = (int64_t)split_threads * per, blocks = (nnz + per_block - 1) / per_block;
    split_plan_arrays p = {};
    pb_status st = split_compact_make(rows, nnz, ptr, s, &p);
    if (st != PB_OK) {
        split_plan_free(&p);
        return st;
    }
    if (p.compact_row)
        rows = p.compact_rows, ptr = p.compact_ptr;
    cudaError_t e = cudaMalloc(&p.block_row, (size_t)(blocks + 1) * sizeof(int32_t));
    if (e == cudaSuccess)
        e = cudaMalloc(&p.carry_row, (size_t)(blocks + 1) * sizeof(int32_t));
    if (e == cudaSuccess)
        e = cudaMalloc(&p.carry_val, (size_t)(blocks + 1) * sizeof(double));
    if (e == cudaSuccess)
        e = cudaMemsetAsync(p.carry_row, 0, sizeof(int32_t), s); // the empty-run flag until the plan is made
    if (e == cudaSuccess && rows > split_empty_run) {
        split_empty_runs<<<blocks_for(rows, 256), 256, 0, s>>>(rows, ptr, p.carry_row);
        e = cudaGetLastError();
    }
    int32_t runs = 0;
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&runs, p.carry_row, sizeof runs, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) {
        split_plan<<<blocks_for(blocks + 1, 256), 256, 0, s>>>(rows, per_block, (int32_t)blocks, ptr, p.block_row);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    p.zero_first = runs != 0;
    if (e != cudaSuccess) {
        split_plan_free(&p);
        PB_CUDA_CHECK(e);
    }
    p.blocks = (int32_t)blocks, p.per = per;
    *out = p;
    return PB_OK;
}

// The plan for a's row offsets, made once per matrix (later products may run
// on other streams).
static pb_status split_plan_ready(pb_device *dev, const pb_spmv_args *a, cudaStream_t s, pb_cuda_sparse **out)
{
    pb_cuda_sparse *sp = nullptr;
    pb_status st = sparse_state(dev, a, &sp);
    if (st != PB_OK)
        return st;
    *out = sp;
    if (sp->split_ptr && sp->split_ptr == a->ptr->stamp && sp->split_rows == a->rows && sp->split_nnz == a->nnz &&
        sp->split.per == split_items(a->prec))
        return PB_OK;
    sp->split_ptr = 0; // stale until the plan below is made
    if ((st = split_plan_make(a->rows, a->nnz, pb__cuda_ptr<const int32_t>(a->ptr), a->prec, s, &sp->split)) != PB_OK)
        return st;
    sp->split_ptr = a->ptr->stamp, sp->split_rows = a->rows, sp->split_nnz = a->nnz;
    return PB_OK;
}

// One product y = A x (ACC: y += A x) by csr-split over CSR arrays and their plan.
template <typename T, int PER, bool VEC, bool ACC>
static void split_kernel(int32_t rows, int64_t nnz, const int32_t *ptr, const int32_t *idx, const T *val,
                         const split_x<T> &x, T *y, const split_plan_arrays &p, cudaStream_t s)
{
    if (x.hubs)
        csr_split<T, PER, VEC, ACC, true><<<(unsigned)p.blocks, split_threads, 0, s>>>(
            rows, nnz, ptr, idx, val, x, y, p.block_row, p.carry_row, static_cast<T *>(p.carry_val), p.compact_row);
    else
        csr_split<T, PER, VEC, ACC, false><<<(unsigned)p.blocks, split_threads, 0, s>>>(
            rows, nnz, ptr, idx, val, x, y, p.block_row, p.carry_row, static_cast<T *>(p.carry_val), p.compact_row);
}

template <typename T, bool ACC>
static pb_status split_run(int32_t rows, int64_t nnz, const int32_t *ptr, const int32_t *idx, const T *val,
                           const split_x<T> &x, T *y, const split_plan_arrays &p, cudaStream_t s)
{
    if (!ACC && (nnz == 0 || p.zero_first || p.compact_row)) {
        PB_CUDA_CHECK(cudaMemsetAsync(y, 0, (size_t)rows * sizeof(T), s));
        if (nnz && !p.compact_row)
            return split_run<T, true>(rows, nnz, ptr, idx, val, x, y, p, s);
    }
    if (nnz == 0)
        return PB_OK;
    if (p.compact_row) // every row left has entries, stored once (y was zeroed)
        rows = p.compact_rows, ptr = p.compact_ptr;
    // 16-byte loads need the arrays 16-byte aligned (each thread starts at a multiple of 4 entries)
    bool vec = (reinterpret_cast<uintptr_t>(idx) | reinterpret_cast<uintptr_t>(val)) % 16 == 0;
    switch (p.per * 2 + vec) {
    case 8: split_kernel<T, 4, false, ACC>(rows, nnz, ptr, idx, val, x, y, p, s); break;
    case 9: split_kernel<T, 4, true, ACC>(rows, nnz, ptr, idx, val, x, y, p, s); break;
    case 32: split_kernel<T, 16, false, ACC>(rows, nnz, ptr, idx, val, x, y, p, s); break;
    case 33: split_kernel<T, 16, true, ACC>(rows, nnz, ptr, idx, val, x, y, p, s); break;
    case 16: split_kernel<T, 8, false, ACC>(rows, nnz, ptr, idx, val, x, y, p, s); break;
    default: split_kernel<T, 8, true, ACC>(rows, nnz, ptr, idx, val, x, y, p, s); break;
    }
    PB_CUDA_CHECK_LAUNCH();
    split_fixup<T><<<blocks_for(p.blocks, 256), 256, 0, s>>>(p.blocks, p.carry_row,
                                                              static_cast<const T *>(p.carry_val), y, p.compact_row);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

template <typename T> static pb_status launch_split(pb_cuda_sparse *sp, const pb_spmv_args *a, cudaStream_t s)
{
    return split_run<T, false>(a->rows, a->nnz, pb__cuda_ptr<const int32_t>(a->ptr),
                               pb__cuda_ptr<const int32_t>(a->idx), pb__cuda_ptr<const T>(a->val),
                               split_x<T>{pb__cuda_ptr<const T>(a->x), nullptr, 0}, pb__cuda_ptr<T>(a->y), sp->split,
                               s);
}

pb_status pb__cuda_spmv_split(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_spmv_args *a = spmv_args(args);
    if (a->rows == 0)
        return PB_OK;
    cudaStream_t stream = pb__cuda_stream(s);
    pb_cuda_sparse *sp = nullptr;
    pb_status st = split_plan_ready(dev, a, stream, &sp);
    if (st != PB_OK)
        return st;
    return a->prec == PB_DOUBLE ? launch_split<double>(sp, a, stream) : launch_split<float>(sp, a, stream);
}

pb_status pb__cuda_spmv_split_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const pb_spmv_args *a = spmv_args(args);
    pb_cuda_sparse *sp = nullptr;
    pb_status st = a->rows ? split_plan_ready(dev, a, nullptr, &sp) : PB_OK;
    if (st == PB_OK && sp && note)
        snprintf(note, len, "%d blocks of %d entries (%d per thread)%s, planned on the device", sp->split.blocks,
                 split_threads * sp->split.per, sp->split.per, sp->split.compact_row ? ", empty rows compacted away" : "");
    return st;
}

// ---- csr-panels ---------------------------------------------------------------

// Where x outgrows a third of L2, more and more of the gathers of x miss it
// (H100, 8 random columns a row: 9.9 ps an entry with x 8 MiB, 13.8 with
// 32 MiB, 19 with 100 MiB). csr-panels cuts the matrix into panels of columns
// whose share of x fits, each panel a CSR matrix of its own, and runs
// csr-split over them one after the other, the later ones adding into y: the
// gathers of each panel hit L2, for y read and written once more a panel.
// (Trial, H100, double: random 4M rows of 8 from 0.52 to 0.42 ms in 2
// panels; 838860 x 12.6M, 30 a row, from 0.82 to 0.36 ms in 6.)
// The entries of each row in columns [first, first + width): counted into
// count[row + 1], or (fill) copied, in row order, to where ptr_p says.
template <typename T, bool FILL>
__global__ void panel_pass(int32_t rows, const int32_t *__restrict__ ptr, const int32_t *__restrict__ idx,
                           const T *__restrict__ val, int64_t first, int64_t width, int32_t *__restrict__ count,
                           const int32_t *__restrict__ ptr_p, int32_t *__restrict__ idx_p, T *__restrict__ val_p)
{
    int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    int32_t n = 0, at = FILL ? ptr_p[row] : 0;
    for (int32_t k = ptr[row], end = ptr[row + 1]; k < end; k++) {
        int32_t c = idx[k];
        if ((uint64_t)(c - first) < (uint64_t)width) {
            if (FILL)
                idx_p[at] = c, val_p[at] = val[k], at++;
            else
                n++;
        }
    }
    if (!FILL)
        count[row + 1] = n;
}

static void panels_drop(pb_cuda_sparse *sp)
{
    for (int p = 0; p < sp->panels_n; p++) {
        cudaFree(sp->panels[p].ptr);
        cudaFree(sp->panels[p].idx);
        cudaFree(sp->panels[p].val);
        split_plan_free(&sp->panels[p].plan);
    }
    free(sp->panels);
    sp->panels = nullptr, sp->panels_n = 0, sp->panels_ptr_stamp = 0;
}

// How many panels a's x needs: its bytes over a third of the device's L2
// (H100: 2 for 32 MiB of x ran 1.09-1.27x cuSPARSE, 3 ran 0.87-1.09; x of
// 16 MiB in one ran 0.90-0.99, in 2 0.59-0.91); 0 where x fits.
static int panels_wanted(const pb_device *dev, const pb_spmv_args *a)
{
    return pb__panels_for((double)a->cols * (double)pb_precision_size(a->prec),
                          pb__cuda(const_cast<pb_device *>(dev))->prop.l2CacheSize / 3.0);
}

static pb_status panels_refuse(const pb_device *dev, const pb_spmv_args *a)
{
    return pb__fail(PB_ERR_UNSUPPORTED, "x (%.1f MiB) fits in a third of the %.1f MiB L2 cache: no panels",
                    (double)a->cols * (double)pb_precision_size(a->prec) / 1048576.0,
                    pb__cuda(const_cast<pb_device *>(dev))->prop.l2CacheSize / 1048576.0);
}

template <typename T> static pb_status panels_make(pb_cuda_sparse *sp, const pb_spmv_args *a, int n)
{
    sp->panels = static_cast<csr_panel *>(calloc((size_t)n, sizeof *sp->panels));
    if (!sp->panels)
        return pb__fail(PB_ERR_NOMEM, "csr-panels: %d panel descriptions", n);
    sp->panels_n = n;
    int64_t width = ((int64_t)a->cols + n - 1) / n;
    sp->panels_width = (int32_t)(width > 0 ? width : 1);
    const int32_t *ptr = pb__cuda_ptr<const int32_t>(a->ptr), *idx = pb__cuda_ptr<const int32_t>(a->idx);
    const T *val = pb__cuda_ptr<const T>(a->val);
    unsigned grid = blocks_for(a->rows, 256);
    void *scratch = nullptr;
    size_t scratch_bytes = 0;
    PB_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scratch_bytes, (int32_t *)nullptr, (int32_t *)nullptr,
                                                a->rows));
    PB_CUDA_CHECK(cudaMalloc(&scratch, scratch_bytes ? scratch_bytes : 1));
    pb_status st = PB_OK;
    for (int p = 0; p < n && st == PB_OK; p++) {
        csr_panel *q = &sp->panels[p];
        int64_t first = (int64_t)p * sp->panels_width;
        cudaError_t e = cudaMalloc(&q->ptr, ((size_t)a->rows + 1) * sizeof(int32_t));
        if (e == cudaSuccess)
            e = cudaMemset(q->ptr, 0, sizeof(int32_t));
        if (e == cudaSuccess) {
            panel_pass<T, false><<<grid, 256>>>(a->rows, ptr, idx, val, first, sp->panels_width, q->ptr, nullptr,
                                                 nullptr, nullptr);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess)
            e = cub::DeviceScan::InclusiveSum(scratch, scratch_bytes, q->ptr + 1, q->ptr + 1, a->rows);
        int32_t nnz = 0;
        if (e == cudaSuccess)
            e = cudaMemcpy(&nnz, q->ptr + a->rows, sizeof nnz, cudaMemcpyDeviceToHost);
        q->nnz = nnz;
        if (e == cudaSuccess)
            e = cudaMalloc(&q->idx, (size_t)nnz * sizeof(int32_t) + 16);
        if (e == cudaSuccess)
            e = cudaMalloc(&q->val, (size_t)nnz * sizeof(T) + 16);
        if (e == cudaSuccess) {
            panel_pass<T, true><<<grid, 256>>>(a->rows, ptr, idx, val, first, sp->panels_width, nullptr, q->ptr,
                                                q->idx, static_cast<T *>(q->val));
            e = cudaGetLastError();
        }
        if (e != cudaSuccess)
            st = pb__cuda_status(e, "making csr-panels' copy", __FILE__, __LINE__);
        else
            st = split_plan_make(a->rows, q->nnz, q->ptr, a->prec, nullptr, &q->plan);
    }
    cudaFree(scratch);
    return st;
}

// The panel copy of a's matrix, made on the device once per matrix and
// precision where x needs panels; else UNSUPPORTED with the reason.
static pb_status panels_ready(pb_device *dev, const pb_spmv_args *a, pb_cuda_sparse **out)
{
    pb_status st = sparse_state(dev, a, out);
    if (st != PB_OK)
        return st;
    pb_cuda_sparse *sp = *out;
    int n = panels_wanted(dev, a);
    if (sp->panels_ptr_stamp && sp->panels_ptr_stamp == a->ptr->stamp && sp->panels_idx_stamp == a->idx->stamp &&
        sp->panels_val_stamp == a->val->stamp && sp->panels_prec == a->prec &&
        (sp->panels_refused ? n == 0 : n == sp->panels_n))
        return sp->panels_refused ? panels_refuse(dev, a) : PB_OK;
    panels_drop(sp);
    if (a->ptr_bits == 64)
        return pb__fail(PB_ERR_UNSUPPORTED, "cuda/csr-panels reads 32-bit row offsets");
    sp->panels_refused = n == 0;
    if (n) {
        st = a->prec == PB_DOUBLE ? panels_make<double>(sp, a, n) : panels_make<float>(sp, a, n);
        if (st != PB_OK) {
            panels_drop(sp);
            cudaGetLastError(); // a failed allocation is not the next call's error
            return st;
        }
    }
    sp->panels_ptr_stamp = a->ptr->stamp, sp->panels_idx_stamp = a->idx->stamp, sp->panels_val_stamp = a->val->stamp;
    sp->panels_prec = a->prec;
    return sp->panels_refused ? panels_refuse(dev, a) : PB_OK;
}

template <typename T> static pb_status launch_panels(pb_cuda_sparse *sp, const pb_spmv_args *a, cudaStream_t s)
{
    const split_x<T> x = {pb__cuda_ptr<const T>(a->x), nullptr, 0};
    T *y = pb__cuda_ptr<T>(a->y);
    pb_status st = PB_OK;
    for (int p = 0; p < sp->panels_n && st == PB_OK; p++) {
        const csr_panel &q = sp->panels[p];
        const T *val = static_cast<const T *>(q.val);
        st = p == 0 ? split_run<T, false>(a->rows, q.nnz, q.ptr, q.idx, val, x, y, q.plan, s)
                    : split_run<T, true>(a->rows, q.nnz, q.ptr, q.idx, val, x, y, q.plan, s);
    }
    return st;
}

pb_status pb__cuda_spmv_panels(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_spmv_args *a = spmv_args(args);
    if (a->rows == 0)
        return PB_OK;
    pb_cuda_sparse *sp = nullptr;
    pb_status st = panels_ready(dev, a, &sp);
    if (st != PB_OK)
        return st;
    cudaStream_t stream = pb__cuda_stream(s);
    return a->prec == PB_DOUBLE ? launch_panels<double>(sp, a, stream) : launch_panels<float>(sp, a, stream);
}

static void panels_note(const pb_cuda_sparse *sp, const pb_spmv_args *a, char *note, size_t len)
{
    snprintf(note, len, "%d panels of %d columns (x's share %.1f MiB), csr-split over each", sp->panels_n,
             sp->panels_width, (double)sp->panels_width * (double)pb_precision_size(a->prec) / 1048576.0);
}

pb_status pb__cuda_spmv_panels_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const pb_spmv_args *a = spmv_args(args);
    pb_cuda_sparse *sp = nullptr;
    pb_status st = a->rows ? panels_ready(dev, a, &sp) : PB_OK;
    if (st == PB_OK && sp && note)
        panels_note(sp, a, note, len);
    return st;
}

// ---- csr-hubs -----------------------------------------------------------------

// A graph's hub columns (sparse.h) packed into an array of their own, so
// that the gathers that keep coming back to them hit cache lines of hubs
// only; the hubs are copied out of x before each product, and csr-split runs
// over the renumbered columns, reading the others from x as it is.
__global__ void count_columns(int64_t nnz, const int32_t *__restrict__ idx, int32_t *__restrict__ count)
{
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < nnz; k += (int64_t)gridDim.x * blockDim.x)
        atomicAdd(&count[idx[k]], 1);
}

__global__ void relabel_columns(int64_t nnz, const int32_t *__restrict__ idx, const int32_t *__restrict__ label,
                                int32_t *__restrict__ out)
{
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < nnz; k += (int64_t)gridDim.x * blockDim.x)
        out[k] = label[idx[k]];
}

template <typename T>
__global__ void hubs_gather(int32_t hubs, const int32_t *__restrict__ list, const T *__restrict__ x, T *__restrict__ xh)
{
    for (int32_t p = blockIdx.x * blockDim.x + threadIdx.x; p < hubs; p += gridDim.x * blockDim.x)
        xh[p] = x[list[p]];
}

static void hubs_drop(pb_cuda_sparse *sp)
{
    cudaFree(sp->hubs_idx);
    cudaFree(sp->hubs_list);
    cudaFree(sp->hubs_x);
    sp->hubs_idx = sp->hubs_list = nullptr, sp->hubs_x = nullptr, sp->hubs_n = 0, sp->hubs_idx_stamp = 0;
}

// Counts the entries per column on the device, plans the hubs on the host
// (pb__hubs_plan) and renumbers the columns on the device.
static pb_status hubs_make(pb_cuda_sparse *sp, const pb_spmv_args *a)
{
    const int32_t *idx = pb__cuda_ptr<const int32_t>(a->idx);
    int32_t *count = nullptr, *host = nullptr;
    unsigned grid = blocks_for(a->nnz < (1 << 24) ? a->nnz : (1 << 24), 256);
    PB_CUDA_CHECK(cudaMalloc(&count, (size_t)a->cols * sizeof(int32_t)));
    cudaError_t e = cudaMemset(count, 0, (size_t)a->cols * sizeof(int32_t));
    if (e == cudaSuccess && a->nnz) {
        count_columns<<<grid, 256>>>(a->nnz, idx, count);
        e = cudaGetLastError();
    }
    pb_status st = e == cudaSuccess ? pb__host_alloc((size_t)a->cols * sizeof *host, "column counts", (void **)&host)
                                    : pb__cuda_status(e, "counting csr-hubs' columns", __FILE__, __LINE__);
    if (st == PB_OK && (e = cudaMemcpy(host, count, (size_t)a->cols * sizeof *host, cudaMemcpyDeviceToHost)) !=
                           cudaSuccess)
        st = pb__cuda_status(e, "counting csr-hubs' columns", __FILE__, __LINE__);
    pb_hubs hubs = {};
    if (st == PB_OK) // the counts' room on the host takes the labels
        st = pb__hubs_plan(host, a->cols, a->nnz, sp->hubs_any, &hubs, host);
    sp->hubs_share = hubs.share;
    if (st == PB_OK) {
        sp->hubs_n = hubs.n;
        size_t elt = pb_precision_size(a->prec);
        e = cudaMemcpy(count, host, (size_t)a->cols * sizeof *host, cudaMemcpyHostToDevice);
        if (e == cudaSuccess)
            e = cudaMalloc(&sp->hubs_list, (size_t)(hubs.n ? hubs.n : 1) * sizeof(int32_t));
        if (e == cudaSuccess && hubs.n)
            e = cudaMemcpy(sp->hubs_list, hubs.list, (size_t)hubs.n * sizeof(int32_t), cudaMemcpyHostToDevice);
        if (e == cudaSuccess)
            e = cudaMalloc(&sp->hubs_x, (size_t)(hubs.n ? hubs.n : 1) * elt);
        if (e == cudaSuccess)
            e = cudaMalloc(&sp->hubs_idx, (size_t)a->nnz * sizeof(int32_t) + 16);
        if (e == cudaSuccess && a->nnz) {
            relabel_columns<<<grid, 256>>>(a->nnz, idx, count, sp->hubs_idx);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess)
            st = pb__cuda_status(e, "making csr-hubs' copy", __FILE__, __LINE__);
    }
    pb__hubs_free(&hubs);
    pb__host_free(host);
    cudaFree(count);
    return st;
}

// The renumbered columns of a's matrix, made once per matrix and precision
// where it has hubs (PARBENCH_HUBS_ANY=1: whatever share they hold, for
// tests); else UNSUPPORTED with the reason.
static pb_status hubs_ready(pb_device *dev, const pb_spmv_args *a, pb_cuda_sparse **out)
{
    pb_status st = split_plan_ready(dev, a, nullptr, out);
    if (st != PB_OK)
        return st;
    pb_cuda_sparse *sp = *out;
    bool any = getenv("PARBENCH_HUBS_ANY") != nullptr;
    if (sp->hubs_idx_stamp && sp->hubs_idx_stamp == a->idx->stamp && sp->hubs_prec == a->prec && sp->hubs_any == any)
        return sp->hubs_refused ? pb__hubs_refuse(sp->hubs_share) : PB_OK;
    hubs_drop(sp);
    if (a->ptr_bits == 64)
        return pb__fail(PB_ERR_UNSUPPORTED, "cuda/csr-hubs reads 32-bit row offsets");
    sp->hubs_any = any;
    st = hubs_make(sp, a);
    sp->hubs_refused = st == PB_ERR_UNSUPPORTED;
    if (st != PB_OK && !sp->hubs_refused) {
        hubs_drop(sp);
        cudaGetLastError(); // a failed allocation is not the next call's error
        return st;
    }
    if (sp->hubs_refused) {
        hubs_drop(sp);
        pb__clear_error();
    }
    sp->hubs_idx_stamp = a->idx->stamp, sp->hubs_prec = a->prec;
    return sp->hubs_refused ? pb__hubs_refuse(sp->hubs_share) : PB_OK;
}

template <typename T> static pb_status launch_hubs(pb_cuda_sparse *sp, const pb_spmv_args *a, cudaStream_t s)
{
    T *xh = static_cast<T *>(sp->hubs_x);
    const T *x = pb__cuda_ptr<const T>(a->x);
    if (sp->hubs_n) {
        hubs_gather<T><<<blocks_for(sp->hubs_n, 256), 256, 0, s>>>(sp->hubs_n, sp->hubs_list, x, xh);
        PB_CUDA_CHECK_LAUNCH();
    }
    return split_run<T, false>(a->rows, a->nnz, pb__cuda_ptr<const int32_t>(a->ptr), sp->hubs_idx,
                               pb__cuda_ptr<const T>(a->val), split_x<T>{x, xh, sp->hubs_n}, pb__cuda_ptr<T>(a->y),
                               sp->split, s);
}

pb_status pb__cuda_spmv_hubs(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_spmv_args *a = spmv_args(args);
    if (a->rows == 0)
        return PB_OK;
    pb_cuda_sparse *sp = nullptr;
    pb_status st = hubs_ready(dev, a, &sp);
    if (st != PB_OK)
        return st;
    cudaStream_t stream = pb__cuda_stream(s);
    return a->prec == PB_DOUBLE ? launch_hubs<double>(sp, a, stream) : launch_hubs<float>(sp, a, stream);
}

pb_status pb__cuda_spmv_hubs_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const pb_spmv_args *a = spmv_args(args);
    pb_cuda_sparse *sp = nullptr;
    pb_status st = a->rows ? hubs_ready(dev, a, &sp) : PB_OK;
    if (st == PB_OK && sp && note)
        snprintf(note, len, "%d hub columns holding %.0f%% of the entries read from a packed copy, csr-split",
                 sp->hubs_n, 100 * sp->hubs_share);
    return st;
}

// ---- bcsr -------------------------------------------------------------------

static void bcsr_drop(pb_cuda_sparse *sp)
{
    cudaFree(sp->bcsr_ptr);
    cudaFree(sp->bcsr_idx);
    cudaFree(sp->bcsr_val);
    sp->bcsr_ptr = sp->bcsr_idx = nullptr, sp->bcsr_val = nullptr, sp->bcsr_b = 0, sp->bcsr_width = 0;
    sp->bcsr_refused_b = 0, sp->bcsr_ptr_stamp = 0;
}

// Host copies of a's CSR arrays: all of them, or (sample) the row offsets and
// only the columns of pb__bcsr_windows' rows (the rest of idx left untouched).
static pb_status csr_to_host(const pb_spmv_args *a, bool sample, int32_t **ptr, int32_t **idx, void **val)
{
    size_t rows = (size_t)a->rows, nnz = (size_t)a->nnz, elt = pb_precision_size(a->prec);
    *ptr = nullptr, *idx = nullptr, *val = nullptr;
    pb_status st = pb__host_alloc((rows + 1) * sizeof **ptr, "spmv row offsets", (void **)ptr);
    if (st == PB_OK)
        st = pb__host_alloc(nnz * sizeof **idx + 1, "spmv columns", (void **)idx);
    if (st == PB_OK && !sample)
        st = pb__host_alloc(nnz * elt + 1, "spmv values", val);
    cudaError_t e = cudaSuccess;
    if (st == PB_OK)
        e = cudaMemcpy(*ptr, a->ptr->handle, (rows + 1) * sizeof **ptr, cudaMemcpyDeviceToHost);
    if (st == PB_OK && e == cudaSuccess && !sample) {
        e = cudaMemcpy(*idx, a->idx->handle, nnz * sizeof **idx, cudaMemcpyDeviceToHost);
        if (e == cudaSuccess)
            e = cudaMemcpy(*val, a->val->handle, nnz * elt, cudaMemcpyDeviceToHost);
    } else if (st == PB_OK && e == cudaSuccess) {
        int32_t first[PB_BCSR_WINDOWS], last[PB_BCSR_WINDOWS];
        int n = pb__bcsr_windows(a->rows, first, last);
        for (int w = 0; w < n && e == cudaSuccess; w++) {
            int32_t from = (*ptr)[first[w]], to = (*ptr)[last[w]];
            if (to > from)
                e = cudaMemcpy(*idx + from, pb__cuda_ptr<const int32_t>(a->idx) + from, (size_t)(to - from) * sizeof **idx,
                               cudaMemcpyDeviceToHost);
        }
    }
    if (st == PB_OK && e != cudaSuccess)
        st = pb__fail(PB_ERR_DEVICE, "bringing the spmv matrix back: %s", cudaGetErrorString(e));
    if (st != PB_OK) {
        pb__host_free(*ptr), pb__host_free(*idx), pb__host_free(*val);
        *ptr = nullptr, *idx = nullptr, *val = nullptr;
    }
    return st;
}

// The block copy of a's matrix, made on the host from the arrays brought
// back, once per matrix and precision, with the block size that moves the
// fewest bytes; refused where even that moves more than CSR. Laid out as
// block ELLPACK, or as block CSR where padding would add too much.
static pb_status bcsr_ready(pb_device *dev, const pb_spmv_args *a, pb_cuda_sparse **out)
{
    pb_status st = sparse_state(dev, a, out);
    if (st != PB_OK)
        return st;
    pb_cuda_sparse *sp = *out;
    int forced = pb__bcsr_forced_b();
    bool same = sp->bcsr_ptr_stamp == a->ptr->stamp && sp->bcsr_idx_stamp == a->idx->stamp &&
                sp->bcsr_val_stamp == a->val->stamp && sp->bcsr_prec == a->prec && sp->bcsr_ptr_stamp;
    if (same && sp->bcsr_b && (!forced || forced == sp->bcsr_b))
        return PB_OK;
    if (same && sp->bcsr_refused_b && !forced) // refused once: not brought back again
        return pb__bcsr_refuse(sp->bcsr_refused_b, sp->bcsr_ratio);
    bcsr_drop(sp);
    int32_t *ptr = nullptr, *idx = nullptr;
    void *val = nullptr;
    if ((st = csr_to_host(a, false, &ptr, &idx, &val)) != PB_OK)
        return st;
    size_t elt = pb_precision_size(a->prec);
    double ratio = 0;
    int b = pb__bcsr_pick(ptr, idx, a->rows, a->cols, elt, &ratio);
    if (forced || (!b && a->nnz == 0)) {
        b = forced ? forced : 2; // without non-zeros any size does
    } else if (!b || ratio >= 1) {
        st = pb__bcsr_refuse(b, ratio);
        sp->bcsr_refused_b = b ? b : 1, sp->bcsr_ratio = ratio, sp->bcsr_prec = a->prec;
        sp->bcsr_ptr_stamp = a->ptr->stamp, sp->bcsr_idx_stamp = a->idx->stamp, sp->bcsr_val_stamp = a->val->stamp;
    }
    pb_bcsr m = {};
    if (st == PB_OK)
        st = pb__bcsr_build(ptr, idx, val, elt, a->rows, a->cols, b, &m);
    pb__host_free(ptr), pb__host_free(idx), pb__host_free(val);
    if (st != PB_OK)
        return st;
    // Block ELLPACK where padding adds at most a quarter: its coalesced reads
    // beat block CSR's group per block row (H100, blocks:4M:3:6, double:
    // ELLT 0.36 ms against block CSR 0.44 ms, though the latter read 0.7x
    // the bytes). PARBENCH_BCSR_ELL=0 keeps block CSR (tests of both).
    int32_t width = 0, *ell_idx = nullptr;
    void *ell_val = nullptr;
    const char *ell_env = getenv("PARBENCH_BCSR_ELL");
    bool ell = !(ell_env && strcmp(ell_env, "0") == 0);
    st = ell ? pb__bcsr_ellt(&m, elt, 1.25, &width, &ell_idx, &ell_val) : PB_ERR_UNSUPPORTED;
    if (st == PB_ERR_UNSUPPORTED)
        pb__clear_error(), st = PB_OK; // block CSR then
    if (st != PB_OK) {
        pb__bcsr_free(&m);
        return st;
    }
    size_t per_block = (size_t)b * (size_t)b * elt,
           slots = width ? (size_t)width * (size_t)m.block_rows : (size_t)m.blocks;
    cudaError_t e = cudaMalloc(&sp->bcsr_idx, slots * sizeof(int32_t) + 1);
    if (e == cudaSuccess)
        e = cudaMalloc(&sp->bcsr_val, slots * per_block + 1);
    if (e == cudaSuccess && !width)
        e = cudaMalloc(&sp->bcsr_ptr, ((size_t)m.block_rows + 1) * sizeof(int32_t));
    if (e == cudaSuccess && !width)
        e = cudaMemcpy(sp->bcsr_ptr, m.ptr, ((size_t)m.block_rows + 1) * sizeof(int32_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(sp->bcsr_idx, width ? ell_idx : m.idx, slots * sizeof(int32_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(sp->bcsr_val, width ? ell_val : m.val, slots * per_block, cudaMemcpyHostToDevice);
    sp->bcsr_block_rows = m.block_rows, sp->bcsr_blocks = m.blocks, sp->bcsr_width = width;
    sp->bcsr_ratio = ((double)slots * ((double)per_block + 4) + (width ? 0 : (double)m.block_rows * 4)) /
                     ((double)a->nnz * ((double)elt + 4) + (double)a->rows * 4);
    pb__bcsr_free(&m);
    pb__host_free(ell_idx), pb__host_free(ell_val);
    if (e != cudaSuccess) {
        bcsr_drop(sp);
        PB_CUDA_CHECK(e);
    }
    sp->bcsr_b = b, sp->bcsr_prec = a->prec;
    sp->bcsr_ptr_stamp = a->ptr->stamp, sp->bcsr_idx_stamp = a->idx->stamp, sp->bcsr_val_stamp = a->val->stamp;
    return PB_OK;
}

// A thread per row in block ELLPACK, else a group per block row as wide as
// its entries, up to a warp.
template <typename T, int B> static pb_status launch_bcsr_b(pb_cuda_sparse *sp, const pb_spmv_args *a, cudaStream_t s)
{
    int block = block_of(a);
    if (sp->bcsr_width) {
        bellt_rows<T, B><<<blocks_for(a->rows, block), block, 0, s>>>(
            sp->bcsr_block_rows, a->rows, a->cols, sp->bcsr_width, sp->bcsr_idx, static_cast<const T *>(sp->bcsr_val),
            pb__cuda_ptr<const T>(a->x), pb__cuda_ptr<T>(a->y));
        PB_CUDA_CHECK_LAUNCH();
        return PB_OK;
    }
    double per_block_row = sp->bcsr_block_rows ? (double)sp->bcsr_blocks * B * B / sp->bcsr_block_rows : 0;
    int64_t rows = sp->bcsr_block_rows;
    auto kernel = per_block_row >= 24 ? bcsr_rows<T, B, 32> : per_block_row >= 12 ? bcsr_rows<T, B, 16> : bcsr_rows<T, B, 8>;
    int group = per_block_row >= 24 ? 32 : per_block_row >= 12 ? 16 : 8;
    kernel<<<blocks_for(rows * group, block), block, 0, s>>>(sp->bcsr_block_rows, a->rows, a->cols, sp->bcsr_ptr,
                                                             sp->bcsr_idx, static_cast<const T *>(sp->bcsr_val),
                                                             pb__cuda_ptr<const T>(a->x), pb__cuda_ptr<T>(a->y));
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

template <typename T> static pb_status launch_bcsr(pb_cuda_sparse *sp, const pb_spmv_args *a, cudaStream_t s)
{
    switch (sp->bcsr_b) {
    case 2: return launch_bcsr_b<T, 2>(sp, a, s);
    case 3: return launch_bcsr_b<T, 3>(sp, a, s);
    case 4: return launch_bcsr_b<T, 4>(sp, a, s);
    case 5: return launch_bcsr_b<T, 5>(sp, a, s);
    case 6: return launch_bcsr_b<T, 6>(sp, a, s);
    case 7: return launch_bcsr_b<T, 7>(sp, a, s);
    default: return launch_bcsr_b<T, 8>(sp, a, s);
    }
}

pb_status pb__cuda_spmv_bcsr(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_spmv_args *a = spmv_args(args);
    if (a->rows == 0)
        return PB_OK;
    pb_cuda_sparse *sp = nullptr;
    pb_status st = bcsr_ready(dev, a, &sp);
    if (st != PB_OK)
        return st;
    cudaStream_t stream = pb__cuda_stream(s);
    return a->prec == PB_DOUBLE ? launch_bcsr<double>(sp, a, stream) : launch_bcsr<float>(sp, a, stream);
}

static void bcsr_note(const pb_cuda_sparse *sp, const pb_spmv_args *a, char *note, size_t len)
{
    double slots = sp->bcsr_width ? (double)sp->bcsr_width * sp->bcsr_block_rows : sp->bcsr_blocks;
    snprintf(note, len, "%dx%d blocks: %d, %s; %.2f stored per non-zero, %.2fx the bytes of CSR", sp->bcsr_b,
             sp->bcsr_b, sp->bcsr_blocks, sp->bcsr_width ? "block ELLPACK, a thread per row" : "block CSR, a group per block row",
             a->nnz ? slots * sp->bcsr_b * sp->bcsr_b / (double)a->nnz : 0, sp->bcsr_ratio);
}

pb_status pb__cuda_spmv_bcsr_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const pb_spmv_args *a = spmv_args(args);
    pb_cuda_sparse *sp = nullptr;
    pb_status st = a->rows ? bcsr_ready(dev, a, &sp) : PB_OK;
    if (st == PB_OK && sp && note)
        bcsr_note(sp, a, note, len);
    return st;
}

// ---- dia --------------------------------------------------------------------

// The distinct diagonals (column - row) of CSR into an open-addressed set of
// dia_slots keys (offset + 2^32, so that no key is the empty slot's all ones);
// found[0] counts them, found[1] says there were more than PB_DIA_MAX_DIAGS
// (then every thread stops early: random rows have millions).
constexpr int dia_slots = 256;
constexpr unsigned long long dia_empty = ~0ull;

__global__ void dia_find(int32_t rows, const int32_t *__restrict__ ptr, const int32_t *__restrict__ idx,
                         unsigned long long *set, int32_t *found)
{
    for (int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; row < rows;
         row += (int64_t)gridDim.x * blockDim.x) {
        if (*(volatile int32_t *)&found[1])
            return;
        for (int32_t k = ptr[row]; k < ptr[row + 1] && !*(volatile int32_t *)&found[1]; k++) {
            unsigned long long key = (unsigned long long)((int64_t)idx[k] - row + (1ll << 32));
            unsigned h = (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 56), probes = 0;
            for (;;) {
                unsigned long long seen = *(volatile unsigned long long *)&set[h];
                if (seen == dia_empty) {
                    seen = atomicCAS(&set[h], dia_empty, key);
                    if (seen == dia_empty && atomicAdd(&found[0], 1) >= PB_DIA_MAX_DIAGS)
                        found[1] = 1;
                }
                if (seen == dia_empty || seen == key)
                    break;
                h = (h + 1) % dia_slots;
                if (++probes == dia_slots) { // a full set: far more diagonals than kept; stop rather than spin
                    found[1] = 1;
                    return;
                }
            }
        }
    }
}

// A diagonal stored over the rows that have an entry on it, first to
// first + count - 1 (a stencil's split block or a band's far couplings fill
// only part of theirs), its values from start on.
struct dia_diag {
    int32_t off, first, count;
    int64_t start;
};

// Staged in shared memory by every kernel of the copy (at most PB_DIA_MAX_DIAGS).
__device__ __forceinline__ void dia_stage(int diags, const dia_diag *__restrict__ from, dia_diag *to)
{
    for (int d = threadIdx.x; d < diags; d += blockDim.x)
        to[d] = from[d];
    __syncthreads();
}

// Which of the diagonals (offsets ascending) column - row is.
__device__ __forceinline__ int dia_index(int diags, const dia_diag *o, int64_t want)
{
    int lo = 0, hi = diags - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (o[mid].off < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// The first and last row with an entry on each diagonal: per block in shared
// memory, then one atomic per diagonal and block.
__global__ void dia_span(int32_t rows, int diags, const dia_diag *__restrict__ in, const int32_t *__restrict__ ptr,
                         const int32_t *__restrict__ idx, int32_t *first, int32_t *last)
{
    __shared__ dia_diag o[PB_DIA_MAX_DIAGS];
    __shared__ int32_t lo[PB_DIA_MAX_DIAGS], hi[PB_DIA_MAX_DIAGS];
    for (int d = threadIdx.x; d < diags; d += blockDim.x)
        lo[d] = INT_MAX, hi[d] = -1;
    dia_stage(diags, in, o);
    int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (row < rows)
        for (int32_t k = ptr[row]; k < ptr[row + 1]; k++) {
            int d = dia_index(diags, o, (int64_t)idx[k] - row);
            atomicMin(&lo[d], (int32_t)row);
            atomicMax(&hi[d], (int32_t)row);
        }
    __syncthreads();
    for (int d = threadIdx.x; d < diags; d += blockDim.x)
        if (hi[d] >= 0) {
            atomicMin(&first[d], lo[d]);
            atomicMax(&last[d], hi[d]);
        }
}

// Row `row`'s entries into their diagonals; a thread per row, so duplicates
// add without atomics.
template <typename T>
__global__ void csr_to_dia(int32_t rows, int diags, const dia_diag *__restrict__ in, const int32_t *__restrict__ ptr,
                           const int32_t *__restrict__ idx, const T *__restrict__ val, T *__restrict__ dia)
{
    __shared__ dia_diag o[PB_DIA_MAX_DIAGS];
    dia_stage(diags, in, o);
    int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    for (int32_t k = ptr[row]; k < ptr[row + 1]; k++) {
        const dia_diag &g = o[dia_index(diags, o, (int64_t)idx[k] - row)];
        dia[g.start + (row - g.first)] += val[k];
    }
}

// y = A x from the diagonals: a thread per row; each diagonal's values and
// its stretch of x are read by the warp in one coalesced stream, with no
// column index (within a diagonal's rows, its columns are in the matrix).
template <typename T>
__global__ void dia_rows(int32_t rows, int diags, const dia_diag *__restrict__ in, const T *__restrict__ dia,
                         const T *__restrict__ x, T *__restrict__ y)
{
    __shared__ dia_diag o[PB_DIA_MAX_DIAGS];
    dia_stage(diags, in, o);
    int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    T sum = 0;
#pragma unroll 4
    for (int d = 0; d < diags; d++) {
        uint32_t at = (uint32_t)(row - o[d].first);
        if (at < (uint32_t)o[d].count)
            sum += dia[o[d].start + at] * x[row + o[d].off];
    }
    y[row] = sum;
}

static void dia_drop(pb_cuda_sparse *sp)
{
    cudaFree(sp->dia_off);
    cudaFree(sp->dia_val);
    sp->dia_off = nullptr, sp->dia_val = nullptr, sp->dia_diags = 0, sp->dia_refused = false;
    sp->dia_ptr_stamp = 0;
}

// A failed step of the copy: out of memory is PB_ERR_NOMEM (auto then goes
// on without the candidate), anything else a device error.
static pb_status dia_failed(cudaError_t e, const char *step)
{
    cudaGetLastError(); // not the next launch's error
    return pb__fail(e == cudaErrorMemoryAllocation ? PB_ERR_NOMEM : PB_ERR_DEVICE, "spmv dia: %s: %s", step,
                    cudaGetErrorString(e));
}

// The diagonals of a's matrix, found on the device: their offsets ascending
// into off (room for PB_DIA_MAX_DIAGS), how many (0: more than that, or none).
static pb_status dia_offsets(const pb_spmv_args *a, int64_t *off, int *diags)
{
    *diags = 0;
    unsigned long long *set = nullptr;
    int32_t *found = nullptr;
    cudaError_t e = cudaMalloc(&set, dia_slots * sizeof *set);
    if (e == cudaSuccess)
        e = cudaMalloc(&found, 2 * sizeof *found);
    if (e == cudaSuccess)
        e = cudaMemset(set, 0xff, dia_slots * sizeof *set);
    if (e == cudaSuccess)
        e = cudaMemset(found, 0, 2 * sizeof *found);
    if (e == cudaSuccess) {
        int64_t grid = blocks_for(a->rows, 256);
        dia_find<<<(unsigned)(grid < 65536 ? grid : 65536), 256>>>(a->rows, pb__cuda_ptr<const int32_t>(a->ptr),
                                                                  pb__cuda_ptr<const int32_t>(a->idx), set, found);
        e = cudaGetLastError();
    }
    unsigned long long keys[dia_slots];
    int32_t n[2] = {0, 0};
    if (e == cudaSuccess)
        e = cudaMemcpy(n, found, sizeof n, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(keys, set, sizeof keys, cudaMemcpyDeviceToHost);
    cudaFree(set);
    cudaFree(found);
    if (e != cudaSuccess)
        return dia_failed(e, "finding the diagonals");
    if (n[1] || n[0] > PB_DIA_MAX_DIAGS)
        return PB_OK;
    for (int h = 0; h < dia_slots; h++)
        if (keys[h] != dia_empty)
            off[(*diags)++] = (int64_t)keys[h] - (1ll << 32);
    qsort(off, (size_t)*diags, sizeof *off, [](const void *p, const void *q) {
        int64_t x = *static_cast<const int64_t *>(p), y = *static_cast<const int64_t *>(q);
        return (x > y) - (x < y);
    });
    return PB_OK;
}

// Where each diagonal's entries start and end (in[d].off set; first, count
// and start filled here, on the host and the device): the values it stores.
static pb_status dia_spans(const pb_spmv_args *a, dia_diag *host, int diags, dia_diag *dev, size_t *values)
{
    int32_t *ends = nullptr, init[2 * PB_DIA_MAX_DIAGS], got[2 * PB_DIA_MAX_DIAGS];
    for (int d = 0; d < diags; d++)
        init[d] = INT_MAX, init[diags + d] = -1;
    cudaError_t e = cudaMalloc(&ends, 2 * (size_t)diags * sizeof *ends);
    if (e == cudaSuccess)
        e = cudaMemcpy(ends, init, 2 * (size_t)diags * sizeof *ends, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(dev, host, (size_t)diags * sizeof *host, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        dia_span<<<blocks_for(a->rows, 256), 256>>>(a->rows, diags, dev, pb__cuda_ptr<const int32_t>(a->ptr),
                                                    pb__cuda_ptr<const int32_t>(a->idx), ends, ends + diags);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(got, ends, 2 * (size_t)diags * sizeof *ends, cudaMemcpyDeviceToHost);
    cudaFree(ends);
    if (e != cudaSuccess)
        return dia_failed(e, "the diagonals' rows");
    *values = 0;
    for (int d = 0; d < diags; d++) {
        host[d].first = got[d];
        host[d].count = got[diags + d] - got[d] + 1; // every diagonal found has an entry
        host[d].start = (int64_t)*values;
        *values += (size_t)host[d].count;
    }
    return PB_OK;
}

// The diagonal copy of a's matrix, made on the device once per matrix and
// precision where it has at most PB_DIA_MAX_DIAGS diagonals that, stored
// over the rows they span, move fewer bytes than CSR (PARBENCH_DIA_ANY:
// whatever they move); else UNSUPPORTED with the reason, remembered.
static pb_status dia_ready(pb_device *dev, const pb_spmv_args *a, pb_cuda_sparse **out)
{
    pb_status st = sparse_state(dev, a, out);
    if (st != PB_OK)
        return st;
    pb_cuda_sparse *sp = *out;
    if (sp->dia_ptr_stamp && sp->dia_ptr_stamp == a->ptr->stamp && sp->dia_idx_stamp == a->idx->stamp &&
        sp->dia_val_stamp == a->val->stamp && sp->dia_prec == a->prec)
        return sp->dia_refused ? pb__dia_refuse(sp->dia_diags, sp->dia_ratio) : PB_OK;
    dia_drop(sp);
    if (a->ptr_bits == 64)
        return pb__fail(PB_ERR_UNSUPPORTED, "cuda/dia reads 32-bit row offsets");
    int64_t off[PB_DIA_MAX_DIAGS];
    int diags = 0;
    if ((st = dia_offsets(a, off, &diags)) != PB_OK)
        return st;
    size_t elt = pb_precision_size(a->prec), values = 0;
    dia_diag host[PB_DIA_MAX_DIAGS];
    for (int d = 0; d < diags; d++)
        host[d] = {(int32_t)off[d], 0, 0, 0}; // column - row of int32 indices fits
    cudaError_t e = diags ? cudaMalloc(&sp->dia_off, (size_t)diags * sizeof *host) : cudaSuccess;
    if (e != cudaSuccess)
        return dia_failed(e, "the diagonals' spans");
    if (diags && (st = dia_spans(a, host, diags, static_cast<dia_diag *>(sp->dia_off), &values)) != PB_OK) {
        dia_drop(sp);
        return st;
    }
    double csr = (double)a->nnz * (double)(elt + 4) + 4.0 * ((double)a->rows + 1);
    sp->dia_diags = diags;
    sp->dia_ratio = diags ? ((double)values * (double)elt + (double)diags * sizeof *host) / csr : 0;
    sp->dia_refused = diags == 0 || (sp->dia_ratio >= 1 && !getenv("PARBENCH_DIA_ANY"));
    size_t bytes = values * elt;
    if (!sp->dia_refused) {
        e = cudaMemcpy(sp->dia_off, host, (size_t)diags * sizeof *host, cudaMemcpyHostToDevice);
        if (e == cudaSuccess)
            e = cudaMalloc(&sp->dia_val, bytes ? bytes : 1);
        if (e == cudaSuccess)
            e = cudaMemset(sp->dia_val, 0, bytes);
        const dia_diag *g = static_cast<const dia_diag *>(sp->dia_off);
        if (e == cudaSuccess) {
            if (a->prec == PB_DOUBLE)
                csr_to_dia<double><<<blocks_for(a->rows, 256), 256>>>(
                    a->rows, diags, g, pb__cuda_ptr<const int32_t>(a->ptr), pb__cuda_ptr<const int32_t>(a->idx),
                    pb__cuda_ptr<const double>(a->val), static_cast<double *>(sp->dia_val));
            else
                csr_to_dia<float><<<blocks_for(a->rows, 256), 256>>>(
                    a->rows, diags, g, pb__cuda_ptr<const int32_t>(a->ptr), pb__cuda_ptr<const int32_t>(a->idx),
                    pb__cuda_ptr<const float>(a->val), static_cast<float *>(sp->dia_val));
            e = cudaGetLastError();
        }
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            dia_drop(sp);
            return dia_failed(e, "making the diagonal copy");
        }
    } else {
        cudaFree(sp->dia_off);
        sp->dia_off = nullptr;
    }
    sp->dia_ptr_stamp = a->ptr->stamp, sp->dia_idx_stamp = a->idx->stamp, sp->dia_val_stamp = a->val->stamp;
    sp->dia_prec = a->prec;
    return sp->dia_refused ? pb__dia_refuse(sp->dia_diags, sp->dia_ratio) : PB_OK;
}

template <typename T> static pb_status launch_dia(pb_cuda_sparse *sp, const pb_spmv_args *a, cudaStream_t s)
{
    int block = block_of(a);
    dia_rows<T><<<blocks_for(a->rows, block), block, 0, s>>>(a->rows, sp->dia_diags,
                                                             static_cast<const dia_diag *>(sp->dia_off),
                                                             static_cast<const T *>(sp->dia_val),
                                                             pb__cuda_ptr<const T>(a->x), pb__cuda_ptr<T>(a->y));
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

pb_status pb__cuda_spmv_dia(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_spmv_args *a = spmv_args(args);
    if (a->rows == 0)
        return PB_OK;
    pb_cuda_sparse *sp = nullptr;
    pb_status st = dia_ready(dev, a, &sp);
    if (st != PB_OK)
        return st;
    cudaStream_t stream = pb__cuda_stream(s);
    return a->prec == PB_DOUBLE ? launch_dia<double>(sp, a, stream) : launch_dia<float>(sp, a, stream);
}

pb_status pb__cuda_spmv_dia_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const pb_spmv_args *a = spmv_args(args);
    pb_cuda_sparse *sp = nullptr;
    pb_status st = a->rows ? dia_ready(dev, a, &sp) : PB_OK;
    if (st == PB_OK && sp && note)
        snprintf(note, len, "%d diagonal%s, %.2fx CSR's bytes", sp->dia_diags, sp->dia_diags == 1 ? "" : "s",
                 sp->dia_ratio);
    return st;
}

// ---- auto -------------------------------------------------------------------

// auto's ELLT copy of a's matrix, made on the device when stale.
static pb_status auto_ellt(pb_cuda_sparse *sp, const pb_spmv_args *a)
{
    if (sp->ell_idx && sp->ell_ptr_stamp == a->ptr->stamp && sp->ell_idx_stamp == a->idx->stamp &&
        sp->ell_val_stamp == a->val->stamp && sp->ell_prec == a->prec && sp->ell_width == sp->stats.max_len)
        return PB_OK;
    cudaFree(sp->ell_idx);
    cudaFree(sp->ell_val);
    sp->ell_idx = nullptr, sp->ell_val = nullptr, sp->ell_ptr_stamp = 0;
    size_t n = (size_t)a->rows * (size_t)sp->stats.max_len, elt = pb_precision_size(a->prec);
    PB_CUDA_CHECK(cudaMalloc(&sp->ell_idx, n ? n * sizeof(int32_t) : 1));
    PB_CUDA_CHECK(cudaMalloc(&sp->ell_val, n ? n * elt : 1));
    sp->ell_width = sp->stats.max_len;
    if (a->prec == PB_DOUBLE)
        csr_to_ellt<double><<<blocks_for(a->rows, 256), 256>>>(
            a->rows, sp->ell_width, pb__cuda_ptr<const int32_t>(a->ptr), pb__cuda_ptr<const int32_t>(a->idx),
            pb__cuda_ptr<const double>(a->val), sp->ell_idx, static_cast<double *>(sp->ell_val));
    else
        csr_to_ellt<float><<<blocks_for(a->rows, 256), 256>>>(
            a->rows, sp->ell_width, pb__cuda_ptr<const int32_t>(a->ptr), pb__cuda_ptr<const int32_t>(a->idx),
            pb__cuda_ptr<const float>(a->val), sp->ell_idx, static_cast<float *>(sp->ell_val));
    PB_CUDA_CHECK_LAUNCH();
    PB_CUDA_CHECK(cudaDeviceSynchronize());
    sp->ell_ptr_stamp = a->ptr->stamp, sp->ell_idx_stamp = a->idx->stamp, sp->ell_val_stamp = a->val->stamp;
    sp->ell_prec = a->prec;
    return PB_OK;
}

// One product by auto's kernel `pick` (what it needs made).
static pb_status auto_launch(pb_cuda_sparse *sp, const pb_spmv_args *a, pb_spmv_pick pick, cudaStream_t stream)
{
    const bool dbl = a->prec == PB_DOUBLE;
    if (pick == PB_PICK_BALANCED)
        return dbl ? launch_balanced<double>(sp, a, stream) : launch_balanced<float>(sp, a, stream);
    if (pick == PB_PICK_SPLIT)
        return dbl ? launch_split<double>(sp, a, stream) : launch_split<float>(sp, a, stream);
    if (pick == PB_PICK_BCSR)
        return dbl ? launch_bcsr<double>(sp, a, stream) : launch_bcsr<float>(sp, a, stream);
    if (pick == PB_PICK_DIA)
        return dbl ? launch_dia<double>(sp, a, stream) : launch_dia<float>(sp, a, stream);
    if (pick == PB_PICK_PANELS)
        return dbl ? launch_panels<double>(sp, a, stream) : launch_panels<float>(sp, a, stream);
    if (pick == PB_PICK_VECTOR)
        return dbl ? dispatch_vector<double>(a, pb__spmv_row_group(a), stream)
                   : dispatch_vector<float>(a, pb__spmv_row_group(a), stream);
    if (pick == PB_PICK_HUBS)
        return dbl ? launch_hubs<double>(sp, a, stream) : launch_hubs<float>(sp, a, stream);
    int block = block_of(a);
    if (dbl)
        ell_rows<double, true><<<blocks_for(a->rows, block), block, 0, stream>>>(
            a->rows, sp->ell_width, sp->ell_idx, static_cast<const double *>(sp->ell_val),
            pb__cuda_ptr<const double>(a->x), pb__cuda_ptr<double>(a->y));
    else
        ell_rows<float, true><<<blocks_for(a->rows, block), block, 0, stream>>>(
            a->rows, sp->ell_width, sp->ell_idx, static_cast<const float *>(sp->ell_val),
            pb__cuda_ptr<const float>(a->x), pb__cuda_ptr<float>(a->y));
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

// The candidates (can[k] for pick k) timed in turns, so that clocks and caches
// treat them alike: one untimed product each, then 5 rounds of one product
// each; ms[k] = the fastest of k's.
static pb_status auto_time(pb_cuda_sparse *sp, const pb_spmv_args *a, const bool can[n_picks], float ms[n_picks])
{
    cudaEvent_t ev[2] = {nullptr, nullptr};
    cudaError_t e = cudaEventCreate(&ev[0]);
    if (e == cudaSuccess)
        e = cudaEventCreate(&ev[1]);
    pb_status st = PB_OK;
    for (int k = 0; k < n_picks; k++) {
        ms[k] = 0;
        if (can[k] && e == cudaSuccess && st == PB_OK)
            st = auto_launch(sp, a, (pb_spmv_pick)k, nullptr);
    }
    for (int r = 0; r < 5; r++)
        for (int k = 0; k < n_picks && e == cudaSuccess && st == PB_OK; k++) {
            float t = 0;
            if (can[k] && (e = cudaEventRecord(ev[0], nullptr)) == cudaSuccess &&
                (st = auto_launch(sp, a, (pb_spmv_pick)k, nullptr)) == PB_OK &&
                (e = cudaEventRecord(ev[1], nullptr)) == cudaSuccess &&
                (e = cudaEventSynchronize(ev[1])) == cudaSuccess &&
                (e = cudaEventElapsedTime(&t, ev[0], ev[1])) == cudaSuccess)
                ms[k] = r == 0 || t < ms[k] ? t : ms[k];
        }
    for (cudaEvent_t x : ev)
        if (x)
            cudaEventDestroy(x);
    if (st == PB_OK)
        PB_CUDA_CHECK(e);
    return st;
}

// Whether a's matrix may pay as block CSR: its sampled rows, brought back,
// moving at most 0.9x CSR's bytes as blocks (or PARBENCH_BCSR_B set).
static bool auto_bcsr_worth(const pb_spmv_args *a)
{
    if (pb__bcsr_forced_b())
        return true;
    int32_t *ptr = nullptr, *idx = nullptr;
    void *val = nullptr;
    if (csr_to_host(a, true, &ptr, &idx, &val) != PB_OK) {
        pb__clear_error();
        return false;
    }
    double ratio = 0;
    int b = pb__bcsr_pick(ptr, idx, a->rows, a->cols, pb_precision_size(a->prec), &ratio);
    pb__host_free(ptr), pb__host_free(idx);
    return b && ratio <= 0.9;
}

// Whether csr-vector, a group of threads per row as wide as the mean row,
// is worth timing: rows of 24 or more on average (random 1024 a row on the
// H100: 1.2-1.4x csr-split, whose block-wide scan then buys nothing), none
// so long that its group alone takes 16 times the mean's steps (a power-law
// graph's longest row held csr-vector to a tenth of csr-split's speed).
static bool auto_vector_worth(const pb_spmv_row_stats &s)
{
    const char *forced = getenv("PARBENCH_AUTO_PICK");
    if (forced && strcmp(forced, pick_names[PB_PICK_VECTOR]) == 0)
        return true;
    return s.mean >= 24 && s.max_len <= 16 * s.mean;
}

// The pick for a's matrix in a's precision, made once. The row statistics
// rule out ELLT where padding would more than double the entries
// (pb__spmv_auto_pick), a sample of rows rules out block CSR where blocks
// would not move fewer bytes, a pass over the columns rules out diagonals
// (more than 64, or more bytes than CSR); among what remains of ELLT,
// csr-balanced, csr-split, block CSR and DIA, products of each in turns decide (the zoo has
// classes where each leads, and others where the lead turns with size:
// gaps:1M vs gaps:4M). A candidate whose extra memory does not fit is left
// out.
static pb_status auto_ready(pb_device *dev, const pb_spmv_args *a, pb_cuda_sparse **out)
{
    pb_status st = balanced_plan(dev, a, out);
    if (st != PB_OK)
        return st;
    pb_cuda_sparse *sp = *out;
    if (sp->pick_ptr && sp->pick_ptr == a->ptr->stamp && sp->pick_idx == a->idx->stamp &&
        sp->pick_val == a->val->stamp && sp->pick_prec == a->prec)
        return PB_OK;
    sp->pick_ptr = 0; // stale until picked below
    bool can[n_picks] = {pb__spmv_auto_pick(&sp->stats) == PB_PICK_ELLT, true, true, auto_bcsr_worth(a), true,
                         panels_wanted(dev, a) > 0, auto_vector_worth(sp->stats), true};
    pb_cuda_sparse *other = nullptr;
    for (int k = 0; k < n_picks; k++) {
        if (!can[k] || k == PB_PICK_BALANCED || k == PB_PICK_VECTOR)
            continue;
        st = k == PB_PICK_ELLT    ? auto_ellt(sp, a)
             : k == PB_PICK_SPLIT ? split_plan_ready(dev, a, nullptr, &other)
             : k == PB_PICK_BCSR  ? bcsr_ready(dev, a, &other)
             : k == PB_PICK_DIA   ? dia_ready(dev, a, &other)
             : k == PB_PICK_HUBS  ? hubs_ready(dev, a, &other)
                                  : panels_ready(dev, a, &other);
        if (st == PB_ERR_NOMEM || (st == PB_ERR_UNSUPPORTED && k != PB_PICK_SPLIT)) {
            pb__clear_error();
            cudaGetLastError(); // the failed allocation is not the next call's error
            can[k] = false, st = PB_OK;
        } else if (st != PB_OK) {
            return st;
        }
    }
    if ((st = auto_time(sp, a, can, sp->pick_ms)) != PB_OK)
        return st;
    sp->pick = PB_PICK_BALANCED;
    for (int k = 0; k < n_picks; k++)
        if (can[k] && sp->pick_ms[k] < sp->pick_ms[sp->pick])
            sp->pick = (pb_spmv_pick)k;
    // PARBENCH_AUTO_PICK=NAME: that candidate where it is one (tests run every
    // pick, not only the one this device's clock favours)
    const char *forced = getenv("PARBENCH_AUTO_PICK");
    for (int k = 0; forced && k < n_picks; k++)
        if (can[k] && strcmp(forced, pick_names[k]) == 0)
            sp->pick = (pb_spmv_pick)k;
    if (sp->pick != PB_PICK_ELLT && sp->ell_idx) { // copies are not kept for nothing
        cudaFree(sp->ell_idx);
        cudaFree(sp->ell_val);
        sp->ell_idx = nullptr, sp->ell_val = nullptr, sp->ell_ptr_stamp = 0;
    }
    if (sp->pick != PB_PICK_BCSR)
        bcsr_drop(sp);
    if (sp->pick != PB_PICK_DIA && sp->dia_val)
        dia_drop(sp);
    if (sp->pick != PB_PICK_PANELS && sp->panels_n)
        panels_drop(sp);
    if (sp->pick != PB_PICK_HUBS && sp->hubs_idx)
        hubs_drop(sp);
    sp->pick_ptr = a->ptr->stamp, sp->pick_idx = a->idx->stamp, sp->pick_val = a->val->stamp;
    sp->pick_prec = a->prec;
    return PB_OK;
}

pb_status pb__cuda_spmv_auto(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_spmv_args *a = spmv_args(args);
    if (a->rows == 0)
        return PB_OK;
    pb_cuda_sparse *sp = nullptr;
    pb_status st = auto_ready(dev, a, &sp);
    if (st != PB_OK)
        return st;
    return auto_launch(sp, a, sp->pick, pb__cuda_stream(s));
}

pb_status pb__cuda_spmv_auto_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const pb_spmv_args *a = spmv_args(args);
    pb_cuda_sparse *sp = nullptr;
    pb_status st = a->rows ? auto_ready(dev, a, &sp) : PB_OK;
    if (st == PB_OK && sp && note) {
        char picked[200];
        int at = sp->pick == PB_PICK_BCSR
                     ? snprintf(picked, sizeof picked, "bcsr %dx%d, fastest of", sp->bcsr_b, sp->bcsr_b)
                     : snprintf(picked, sizeof picked, "%s, fastest of", pick_names[sp->pick]);
        for (int k = 0; k < n_picks; k++)
            if (sp->pick_ms[k] > 0 && at > 0 && (size_t)at < sizeof picked)
                at += snprintf(picked + at, sizeof picked - (size_t)at, " %s %.3f ms", pick_names[k], sp->pick_ms[k]);
        pb__spmv_pick_note(picked, &sp->stats, note, len);
    }
    return st;
}

static pb_status sparse_prepare(pb_cuda_sparse *sp, const pb_spmv_args *a, const void *alpha, const void *beta,
                                cudaDataType type)
{
    sparse_drop_matrix(sp);
    // "different index sizes for csrRowOffsetsType (64I) and csrColIndType
    // (32I) is not currently supported" (cuSPARSE's words): 64-bit offsets take a
    // 64-bit copy of the columns, made here (part of the preparation's time).
    void *idx = a->idx->handle;
    cusparseIndexType_t index = CUSPARSE_INDEX_32I;
    if (a->ptr_bits == 64) {
        PB_CUDA_CHECK(cudaMalloc(&sp->idx64, (size_t)(a->nnz ? a->nnz : 1) * sizeof(int64_t)));
        widen_indices<<<4096, 256>>>(a->nnz, static_cast<const int32_t *>(idx), sp->idx64);
        PB_CUDA_CHECK_LAUNCH();
        PB_CUDA_CHECK(cudaDeviceSynchronize());
        idx = sp->idx64, index = CUSPARSE_INDEX_64I;
    }
    PB_CUSPARSE_CHECK(cusparseCreateCsr(&sp->mat, a->rows, a->cols, a->nnz, a->ptr->handle, idx, a->val->handle,
                                        index, index, CUSPARSE_INDEX_BASE_ZERO, type));
    PB_CUSPARSE_CHECK(cusparseCreateDnVec(&sp->x, a->cols, a->x->handle, type));
    PB_CUSPARSE_CHECK(cusparseCreateDnVec(&sp->y, a->rows, a->y->handle, type));
    size_t bytes = 0;
    PB_CUSPARSE_CHECK(cusparseSpMV_bufferSize(sp->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, sp->mat, sp->x,
                                              beta, sp->y, type, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    PB_CUDA_CHECK(cudaMalloc(&sp->buffer, bytes ? bytes : 1));
    // The analysis is optional: where it fails (at 3.2 billion non-zeros on an
    // H100: "internal error") cusparseSpMV runs without it, and the row says so.
    sp->unprepared = cusparseSpMV_preprocess(sp->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, sp->mat, sp->x,
                                             beta, sp->y, type, CUSPARSE_SPMV_ALG_DEFAULT, sp->buffer);
    if (sp->unprepared != CUSPARSE_STATUS_SUCCESS)
        (void)cudaGetLastError(); // nothing of it is left for the next launch check
    sp->ptr = a->ptr->stamp, sp->idx = a->idx->stamp, sp->val = a->val->stamp;
    sp->x_ptr = a->x->handle, sp->y_ptr = a->y->handle, sp->prec = a->prec;
    return PB_OK;
}

bool pb__cuda_spmv_cusparse_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    const pb_spmv_args *a = spmv_args(args);
    if (!a->ptr->handle || !a->x->handle || !a->y->handle) {
        *why = "cuSPARSE is given device memory only here";
        return false;
    }
    return true;
}

// The handle and the preprocessed matrix of the anchor, made when stale.
static pb_status cusparse_ready(pb_device *dev, const pb_spmv_args *a, cudaStream_t stream, pb_cuda_sparse **out)
{
    pb_cuda_sparse *sp = nullptr;
    pb_status st = sparse_state(dev, a, &sp);
    if (st != PB_OK)
        return st;
    *out = sp;
    if (!sp->handle) {
        cusparseStatus_t e = cusparseCreate(&sp->handle);
        if (e != CUSPARSE_STATUS_SUCCESS) {
            sp->handle = nullptr;
            return cusparse_status(e, "cusparseCreate", __FILE__, __LINE__);
        }
    }
    PB_CUSPARSE_CHECK(cusparseSetStream(sp->handle, stream));
    if (!sp->mat || sp->ptr != a->ptr->stamp || sp->idx != a->idx->stamp || sp->val != a->val->stamp ||
        sp->x_ptr != a->x->handle || sp->y_ptr != a->y->handle || sp->prec != a->prec) {
        bool dbl = a->prec == PB_DOUBLE;
        const double one = 1, zero = 0;
        const float one_f = 1, zero_f = 0;
        st = sparse_prepare(sp, a, dbl ? (const void *)&one : &one_f, dbl ? (const void *)&zero : &zero_f,
                            dbl ? CUDA_R_64F : CUDA_R_32F);
        if (st != PB_OK)
            sparse_drop_matrix(sp);
    }
    return st;
}

pb_status pb__cuda_spmv_cusparse_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const pb_spmv_args *a = spmv_args(args);
    pb_cuda_sparse *sp = nullptr;
    pb_status st = a->rows ? cusparse_ready(dev, a, nullptr, &sp) : PB_OK;
    if (st == PB_OK && a->rows)
        PB_CUDA_CHECK(cudaDeviceSynchronize());
    if (st == PB_OK && sp && sp->unprepared != CUSPARSE_STATUS_SUCCESS && note)
        snprintf(note, len, "not preprocessed: cusparseSpMV_preprocess failed (%s)",
                 cusparseGetErrorString(sp->unprepared));
    return st;
}

pb_status pb__cuda_spmv_cusparse(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_spmv_args *a = spmv_args(args);
    if (a->rows == 0)
        return PB_OK;
    pb_cuda_sparse *sp = nullptr;
    pb_status st = cusparse_ready(dev, a, pb__cuda_stream(s), &sp);
    if (st != PB_OK)
        return st;
    const double one = 1, zero = 0;
    const float one_f = 1, zero_f = 0;
    bool dbl = a->prec == PB_DOUBLE;
    const void *alpha = dbl ? (const void *)&one : &one_f, *beta = dbl ? (const void *)&zero : &zero_f;
    PB_CUSPARSE_CHECK(cusparseSpMV(sp->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, sp->mat, sp->x, beta, sp->y,
                                   dbl ? CUDA_R_64F : CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, sp->buffer));
    return PB_OK;
}

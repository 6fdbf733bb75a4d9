// Separable convolution on CUDA (study 003): a row pass into tmp, then a
// column pass, for any radius. Variants:
//   naive  one thread per output, pixels and taps from global memory
//   tiled  the study's kernels: shared-memory tiles with the R-wide halo
//          loaded coalesced, taps in constant memory, one output per thread
//   regs   each pass from a shared-memory tile (16-byte loads where aligned;
//          tmp's rows kept aligned at any width),
//          several outputs per thread accumulated in registers: taps go in
//          chunks of 32 (float) or 16 (double) held in (uniform) registers
//          while the window of pixels streams past them once, so nearly every
//          instruction of the inner loop is an FMA, at any radius. In float
//          each warp or block filters two rows or segments, the second
//          copied in (cp.async) while the first is filtered.
//   fused  both passes in one kernel (columns first, in registers, then
//          rows from shared memory): the image crosses memory twice, not
//          four times; R <= 64. Radii 1-8 and 16 are compiled with R fixed.
// Taps live in constant memory up to PB_CONV_CONST_BYTES; longer filters are
// read from global memory. A tile that does not fit shared memory (opt-in
// maximum) makes the variant report UNSUPPORTED.
#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"

#include <cuda_pipeline.h>

#define PB_CONV_CONST_BYTES 32768
__constant__ double conv_taps_const[PB_CONV_CONST_BYTES / sizeof(double)];

template <typename T> struct ConstTaps {
    __device__ __forceinline__ T operator[](int k) const { return reinterpret_cast<const T *>(conv_taps_const)[k]; }
};
template <typename T> struct GlobalTaps {
    const T *p;
    __device__ __forceinline__ T operator[](int k) const { return __ldg(p + k); }
};

// Element i of a line of n under the border rule (zero: out-of-range reads 0).
template <typename T>
__device__ __forceinline__ T line_at(const T *__restrict__ line, long i, long n, long stride, int clamp)
{
    if (i < 0 || i >= n) {
        if (!clamp)
            return T(0);
        i = i < 0 ? 0 : n - 1;
    }
    return __ldg(line + i * stride);
}

struct ConvGeom {
    long width, height, in_rows, in_top, radius;
    int clamp;
    // regs' intermediate image (tmp) holds columns [0, tmp_main) row by row
    // with tmp_main as pitch, then the rest of the columns likewise. tmp_main
    // is the width rounded down to 32 columns where rows of the image are not
    // a whole number of 16-byte vectors, else the width: every row of the main
    // part starts 16-byte aligned, so the row pass stores and the column pass
    // loads 16-byte vectors at any width (but in the last < 32 columns).
    long tmp_main = 0;
};

// Blocks of a 2-D tiling in a 1-D grid (no 65535 limit on either side):
// column blocks run fastest.
struct Tiling {
    long nbx, nby;
    long per_block = 1; // rows (row pass, per warp) or segments (column pass) one after the other
    __device__ __forceinline__ long bx() const { return blockIdx.x % nbx; }
    __device__ __forceinline__ long by() const { return blockIdx.x / nbx; }
};

// ---- naive ------------------------------------------------------------------

template <typename T>
__global__ void conv_rows_naive(ConvGeom g, Tiling t, const T *__restrict__ in, T *__restrict__ tmp,
                                const T *__restrict__ f)
{
    long x = t.bx() * blockDim.x + threadIdx.x, y = t.by() * blockDim.y + threadIdx.y;
    if (x >= g.width || y >= g.in_rows)
        return;
    const T *row = in + y * g.width;
    T acc = 0;
    for (long k = -g.radius; k <= g.radius; k++)
        acc += f[k + g.radius] * line_at(row, x + k, g.width, 1, g.clamp);
    tmp[y * g.width + x] = acc;
}

template <typename T>
__global__ void conv_cols_naive(ConvGeom g, Tiling t, const T *__restrict__ tmp, T *__restrict__ out,
                                const T *__restrict__ f)
{
    long x = t.bx() * blockDim.x + threadIdx.x, y = t.by() * blockDim.y + threadIdx.y;
    if (x >= g.width || y >= g.height)
        return;
    T acc = 0;
    for (long k = -g.radius; k <= g.radius; k++)
        acc += f[k + g.radius] * line_at(tmp + x, y + g.in_top + k, g.in_rows, g.width, g.clamp);
    out[y * g.width + x] = acc;
}

// ---- tiled (the study's) ------------------------------------------------------

#define TILED_ROWS_X 64
#define TILED_ROWS_Y 4
#define TILED_COLS_X 32
#define TILED_COLS_Y 16

template <typename T, typename Taps>
__global__ void __launch_bounds__(TILED_ROWS_X *TILED_ROWS_Y)
    conv_rows_tiled(ConvGeom g, Tiling t, const T *__restrict__ in, T *__restrict__ tmp, Taps f)
{
    extern __shared__ __align__(16) unsigned char conv_smem[];
    T *s = reinterpret_cast<T *>(conv_smem);
    const long len = TILED_ROWS_X + 2 * g.radius;
    const long x0 = t.bx() * TILED_ROWS_X, y = t.by() * TILED_ROWS_Y + threadIdx.y;
    T *srow = s + threadIdx.y * len;
    if (y < g.in_rows)
        for (long i = threadIdx.x; i < len; i += TILED_ROWS_X)
            srow[i] = line_at(in + y * g.width, x0 - g.radius + i, g.width, 1, g.clamp);
    __syncthreads();
    const long x = x0 + threadIdx.x;
    if (y >= g.in_rows || x >= g.width)
        return;
    T acc = 0;
    for (int k = 0; k <= 2 * g.radius; k++)
        acc += f[k] * srow[threadIdx.x + k];
    tmp[y * g.width + x] = acc;
}

template <typename T, typename Taps>
__global__ void __launch_bounds__(TILED_COLS_X *TILED_COLS_Y)
    conv_cols_tiled(ConvGeom g, Tiling t, const T *__restrict__ tmp, T *__restrict__ out, Taps f)
{
    extern __shared__ __align__(16) unsigned char conv_smem[];
    T *s = reinterpret_cast<T *>(conv_smem); // (TILED_COLS_Y + 2R) rows of TILED_COLS_X
    const long rows = TILED_COLS_Y + 2 * g.radius;
    const long x = t.bx() * TILED_COLS_X + threadIdx.x, y0 = t.by() * TILED_COLS_Y;
    if (x < g.width)
        for (long i = threadIdx.y; i < rows; i += TILED_COLS_Y)
            s[i * TILED_COLS_X + threadIdx.x] =
                line_at(tmp + x, y0 + g.in_top - g.radius + i, g.in_rows, g.width, g.clamp);
    __syncthreads();
    const long y = y0 + threadIdx.y;
    if (y >= g.height || x >= g.width)
        return;
    T acc = 0;
    for (int k = 0; k <= 2 * g.radius; k++)
        acc += f[k] * s[(threadIdx.y + k) * TILED_COLS_X + threadIdx.x];
    out[y * g.width + x] = acc;
}

// ---- fused ----------------------------------------------------------------------

#define REGS_W 8     // outputs per thread along a row
#define REGS_TILE (32 * REGS_W)
#define REGS_CHUNK 8 // taps per step when R is not fixed at compile time

// Skewed shared index: thread t's window starts at t*REGS_W, so its reads
// fall in bank t*(REGS_W+1) + j: distinct over a warp.
__device__ __forceinline__ long skew(long i) { return i + i / REGS_W; }

// acc[i] += sum over taps k of f[k0 + k] * window(i + k), for N outputs:
// RC > 0 (R fixed): every tap at once, fully unrolled, each loaded pixel
// used by all the outputs it touches. RC == 0: chunks of REGS_CHUNK taps,
// each chunk's window of N + REGS_CHUNK - 1 pixels loaded into registers.
template <typename T, int N, int RC, typename Taps, typename Load>
__device__ __forceinline__ void accumulate(T (&acc)[N], long r, Taps f, Load load)
{
    if (RC) {
#pragma unroll
        for (int j = 0; j < N + 2 * RC; j++) {
            T v = load(j);
#pragma unroll
            for (int i = 0; i < N; i++)
                if (j - i >= 0 && j - i <= 2 * RC)
                    acc[i] += f[j - i] * v;
        }
        return;
    }
    const long taps = 2 * r + 1;
    for (long k0 = 0; k0 < taps; k0 += REGS_CHUNK) {
        T w[N + REGS_CHUNK - 1];
#pragma unroll
        for (int m = 0; m < N + REGS_CHUNK - 1; m++)
            w[m] = load(k0 + m);
#pragma unroll
        for (int k = 0; k < REGS_CHUNK; k++) {
            if (k0 + k < taps) { // uniform over the block
                const T fk = f[(int)(k0 + k)];
#pragma unroll
                for (int i = 0; i < N; i++)
                    acc[i] += fk * w[i + k];
            }
        }
    }
}


#define FUSED_COLS 256 // threads of a block = input columns of its tile
#define FUSED_MAX_RADIUS 64

// Rows of output a fused block computes (its column-stage registers).
template <typename T> __host__ __device__ constexpr int fused_h() { return sizeof(T) == 4 ? 32 : 16; }
// Elements of one shared row: the tile's columns plus what the last chunk
// of a window may read past them.
__host__ __device__ constexpr long fused_pitch(long r)
{
    return FUSED_COLS + 2 * r + REGS_W + REGS_CHUNK + (FUSED_COLS + 2 * r + REGS_W + REGS_CHUNK) / REGS_W + 1;
}

// Both passes in one kernel, the intermediate image never leaves the SM
// (the filter is separable and linear, so the column pass may go first).
// A block owns FUSED_COLS - 2R output columns and fused_h rows: each thread
// filters one input column down in registers (as regs' column pass), the
// results meet in shared memory, then each warp filters rows from there (as
// regs' row pass) and writes them coalesced. tmp is not used.
template <typename T, int RC, typename Taps>
__global__ void __launch_bounds__(FUSED_COLS)
    conv_fused(ConvGeom g, Tiling t, const T *__restrict__ in, T *__restrict__ out, Taps f)
{
    constexpr int H = fused_h<T>();
    extern __shared__ __align__(16) unsigned char conv_smem[];
    const long r = RC ? RC : g.radius, tile = FUSED_COLS - 2 * r, pitch = fused_pitch(r);
    T *s = reinterpret_cast<T *>(conv_smem);
    T *sout = s + H * pitch + threadIdx.y * (REGS_TILE + REGS_TILE / REGS_W);
    const long x0 = t.bx() * tile, y0 = t.by() * H;
    const int tid = threadIdx.x + 32 * threadIdx.y;
    {
        long x = x0 - r + tid;
        bool zero = false;
        if (x < 0 || x >= g.width) {
            zero = !g.clamp;
            x = x < 0 ? 0 : g.width - 1;
        }
        T acc[H];
#pragma unroll
        for (int i = 0; i < H; i++)
            acc[i] = 0;
        const long first = y0 + g.in_top - r;
        if (!zero)
            accumulate<T, H, RC>(acc, r, f,
                                 [&](long j) { return line_at(in + x, first + j, g.in_rows, g.width, g.clamp); });
#pragma unroll
        for (int i = 0; i < H; i++)
            s[i * pitch + skew(tid)] = acc[i];
    }
    __syncthreads();
    const long start = threadIdx.x * REGS_W;
    for (int row = threadIdx.y; row < H && y0 + row < g.height; row += FUSED_COLS / 32) {
        const T *srow = s + row * pitch;
        T acc[REGS_W];
#pragma unroll
        for (int i = 0; i < REGS_W; i++)
            acc[i] = 0;
        if (start < tile)
            accumulate<T, REGS_W, RC>(acc, r, f, [&](long j) { return srow[skew(start + j)]; });
#pragma unroll
        for (int i = 0; i < REGS_W; i++)
            sout[skew(start + i)] = acc[i];
        __syncwarp();
        T *dst = out + (y0 + row) * g.width + x0;
        for (int i = threadIdx.x; i < tile && x0 + i < g.width; i += 32)
            dst[i] = sout[skew(i)];
        __syncwarp();
    }
}

// ---- regs -----------------------------------------------------------------------

// A 16-byte vector of T, the width of the row pass's shared and global accesses.
template <typename T> struct Vec16;
template <> struct Vec16<float> {
    using type = float4;
};
template <> struct Vec16<double> {
    using type = double2;
};
template <typename T> __host__ __device__ constexpr int vec_n() { return 16 / sizeof(T); }

// Outputs per lane along a row: a multiple of the vector whose quotient is
// odd, so the lanes of a quarter warp read distinct banks with 16-byte loads
// and no skewing; down a column, lanes read neighbouring words anyway.
template <typename T> __host__ __device__ constexpr int win_row_n() { return sizeof(T) == 4 ? 20 : 10; }
template <typename T> __host__ __device__ constexpr int win_col_n() { return sizeof(T) == 4 ? 32 : 16; }
// Taps per chunk of the main loop, held in registers while the chunk runs.
template <typename T> __host__ __device__ constexpr int win_taps() { return sizeof(T) == 4 ? 32 : 16; }
#define WIN_ROW_WARPS 4 // row segments per block of the row pass (one a warp)
#define WIN_COL_WARPS 8 // warps per block of the column pass, stacked down 32 columns

// The row pass's window: W consecutive pixels a load, 16-byte aligned.
template <typename T> struct RowWindow {
    static constexpr int W = vec_n<T>();
    const T *p;
    __device__ __forceinline__ void load(int j, T (&v)[W]) const
    {
        *reinterpret_cast<typename Vec16<T>::type *>(v) = *reinterpret_cast<const typename Vec16<T>::type *>(p + j);
    }
};
// The column pass's window: one pixel a load, 32 words apart.
template <typename T> struct ColWindow {
    static constexpr int W = 1;
    const T *p;
    __device__ __forceinline__ void load(int j, T (&v)[1]) const { v[0] = p[j * 32]; }
};

// acc[i] += f[k0 + k] * window(i + k) for k < S: the S taps in registers,
// the N + S - 1 pixels streamed through once, each feeding every output it
// touches (taps summed in increasing k, as the reference does).
template <typename T, int N, int S, typename Taps, typename Win>
__device__ __forceinline__ void win_chunk(T (&acc)[N], int k0, Taps f, Win win)
{
    constexpr int W = Win::W, M = (N + S - 1 + W - 1) / W * W;
    T fk[S];
#pragma unroll
    for (int k = 0; k < S; k++)
        fk[k] = f[k0 + k];
#pragma unroll
    for (int jj = 0; jj < M; jj += W) {
        T v[W];
        win.load(k0 + jj, v);
#pragma unroll
        for (int c = 0; c < W; c++)
#pragma unroll
            for (int i = 0; i < N; i++)
                if (jj + c - i >= 0 && jj + c - i < S)
                    acc[i] += fk[jj + c - i] * v[c];
    }
}

// The taps left after the full chunks, in halving chunks (binary digits of
// rem) down to the window's vector width, which keeps k0 aligned for its
// loads; the last rem % W taps in one chunk of their own.
template <int S, typename T, int N, typename Taps, typename Win>
__device__ __forceinline__ void win_tail(T (&acc)[N], int k0, int rem, Taps f, Win win)
{
    constexpr int W = Win::W;
    if constexpr (S >= W && S >= 1) {
        if (rem & S) { // uniform over the grid
            win_chunk<T, N, S>(acc, k0, f, win);
            k0 += S;
        }
        win_tail<S / 2>(acc, k0, rem, f, win);
    } else if constexpr (W == 4) {
        switch (rem & 3) {
        case 1: win_chunk<T, N, 1>(acc, k0, f, win); break;
        case 2: win_chunk<T, N, 2>(acc, k0, f, win); break;
        case 3: win_chunk<T, N, 3>(acc, k0, f, win); break;
        default: break;
        }
    } else if constexpr (W == 2) {
        if (rem & 1)
            win_chunk<T, N, 1>(acc, k0, f, win);
    }
}

template <typename T, int N, typename Taps, typename Win>
__device__ __forceinline__ void win_all(T (&acc)[N], int taps, Taps f, Win win)
{
    constexpr int S = win_taps<T>();
    int k0 = 0;
    for (; k0 + S <= taps; k0 += S)
        win_chunk<T, N, S>(acc, k0, f, win);
    win_tail<S / 2>(acc, k0, taps - k0, f, win);
}

__device__ __forceinline__ bool aligned16(const void *p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// Stores one lane's N outputs down column x from row y, those inside the
// image. The common case, all N inside, walks a pointer: a bounds test and
// a 64-bit index product per output cost the column pass a sixth of its
// instructions.
template <typename T, int N>
__device__ __forceinline__ void store_column(const ConvGeom &g, T *__restrict__ out, long x, long y, const T (&acc)[N])
{
    if (x >= g.width)
        return;
    T *p = out + y * g.width + x;
    if (y + N <= g.height) {
#pragma unroll
        for (int i = 0; i < N; i++, p += g.width)
            *p = acc[i];
        return;
    }
    for (int i = 0; i < N && y + i < g.height; i++, p += g.width)
        *p = acc[i];
}

// Column x of row 0 of regs' intermediate image, and the pitch of its rows.
// SPLIT: tmp_main < width; else tmp has the image's layout, and the pitch is
// the kernel's parameter (the column pass in double then keeps to 64
// registers, not 80).
template <bool SPLIT, typename T>
__device__ __forceinline__ T *tmp_column(const ConvGeom &g, T *tmp, long x, long *pitch)
{
    if (!SPLIT) {
        *pitch = g.width;
        return tmp + x;
    }
    if (x < g.tmp_main) {
        *pitch = g.tmp_main;
        return tmp + x;
    }
    *pitch = g.width - g.tmp_main;
    return tmp + g.tmp_main * g.in_rows + (x - g.tmp_main);
}

// Stores a warp's len outputs from shared memory to dst, 16-byte vectors
// where both ends allow them.
template <typename T> __device__ __forceinline__ void store_row_piece(T *dst, const T *src, int len, int lane)
{
    using V = typename Vec16<T>::type;
    constexpr int W = vec_n<T>();
    if (aligned16(dst) && len % W == 0) {
        for (int j = lane; j < len / W; j += 32)
            reinterpret_cast<V *>(dst)[j] = reinterpret_cast<const V *>(src)[j];
    } else {
        for (int j = lane; j < len; j += 32)
            dst[j] = src[j];
    }
}

// Each warp (row pass) or block (column pass) filters per_block rows or
// segments one after the other. With more than one, it copies the next into
// a second buffer (cp.async) while it filters this one, so loads and FMAs
// overlap inside the block instead of relying on other blocks being out of
// phase; with one, it loads and filters once.

// Starts copying the row pass's segment of row y (with its halo) into srow.
template <typename T>
__device__ __forceinline__ void load_row_segment(T *srow, const ConvGeom &g, const T *__restrict__ in, long x0,
                                                 long y, int len, int lane)
{
    constexpr int W = vec_n<T>();
    const int r = (int)g.radius;
    const T *line = in + y * g.width, *src = line + x0 - r;
    if (x0 - r >= 0 && x0 - r + len <= g.width) {
        if (aligned16(src) && len % W == 0) {
            for (int i = lane; i < len / W; i += 32)
                __pipeline_memcpy_async(srow + i * W, src + i * W, 16);
        } else {
            for (int i = lane; i < len; i += 32)
                __pipeline_memcpy_async(srow + i, src + i, sizeof(T));
        }
    } else {
        for (int i = lane; i < len; i += 32)
            srow[i] = line_at(line, x0 - r + i, g.width, 1, g.clamp);
    }
}

// Row pass: each warp owns a segment of 32 * N outputs of a row; its input
// (with the 2R halo) goes to shared memory, each lane filters N outputs from
// there, and the results go back through the same shared row so the stores
// are coalesced. Warps never wait for each other.
template <typename T, typename Taps, bool SPLIT>
__global__ void __launch_bounds__(32 *WIN_ROW_WARPS)
    conv_rows_regs(ConvGeom g, Tiling t, const T *__restrict__ in, T *__restrict__ tmp, Taps f)
{
    using V = typename Vec16<T>::type;
    constexpr int N = win_row_n<T>(), TW = 32 * N, W = vec_n<T>();
    extern __shared__ __align__(16) unsigned char conv_smem[];
    const int r = (int)g.radius, len = TW + 2 * r, lane = threadIdx.x;
    const int pitch = (len + 2 * W - 1) / W * W;
    T *bufs = reinterpret_cast<T *>(conv_smem) + threadIdx.y * (t.per_block > 1 ? 2 : 1) * pitch; // as buffers()
    const long x0 = t.bx() * TW, y0 = (t.by() * WIN_ROW_WARPS + threadIdx.y) * t.per_block;
    const long rows = g.in_rows - y0 < t.per_block ? g.in_rows - y0 : t.per_block;
    if (rows <= 0)
        return; // the whole warp
    const int n = g.width - x0 < TW ? (int)(g.width - x0) : TW;
    // The segment's place in tmp: in its main part, or across both parts.
    long pitch1, pitch2;
    T *const dst1 = tmp_column<SPLIT>(g, tmp, x0, &pitch1);
    const int len1 = SPLIT && x0 < g.tmp_main && g.tmp_main < x0 + n ? (int)(g.tmp_main - x0) : n;
    T *const dst2 = tmp_column<SPLIT>(g, tmp, x0 + len1, &pitch2);
    load_row_segment(bufs, g, in, x0, y0, len, lane);
    __pipeline_commit();
    for (long k = 0; k < rows; k++) {
        T *srow = bufs + (k & 1) * pitch;
        if (k + 1 < rows)
            load_row_segment(bufs + ((k + 1) & 1) * pitch, g, in, x0, y0 + k + 1, len, lane);
        __pipeline_commit(); // (empty at the last row: the wait below stays the same)
        __pipeline_wait_prior(1);
        __syncwarp();
        T acc[N];
#pragma unroll
        for (int i = 0; i < N; i++)
            acc[i] = 0;
        win_all<T, N>(acc, 2 * r + 1, f, RowWindow<T>{srow + lane * N});
        __syncwarp(); // every lane done reading before the row is overwritten
#pragma unroll
        for (int i = 0; i < N; i += W)
            *reinterpret_cast<V *>(srow + lane * N + i) = *reinterpret_cast<const V *>(acc + i);
        __syncwarp();
        store_row_piece(dst1 + (y0 + k) * pitch1, srow, len1, lane);
        if (len1 < n)
            store_row_piece(dst2 + (y0 + k) * pitch2, srow + len1, n - len1, lane);
        __syncwarp(); // the next copy into this buffer starts after the stores read it
    }
}

// Starts copying rows [first, first + rows) of the 32 columns from x0 (at src
// in tmp, rows pitch apart) into s (32 elements a row); rows outside the
// image follow the border rule, columns outside it read 0.
template <typename T>
__device__ __forceinline__ void load_col_tile(T *s, const ConvGeom &g, const T *src, long pitch, long x0, long first,
                                              int rows, int tid, bool vectors)
{
    constexpr int W = vec_n<T>(), PER_ROW = 32 / W, ROWS_AT_ONCE = 32 * WIN_COL_WARPS / PER_ROW;
    if (vectors && first >= 0 && first + rows <= g.in_rows) {
        const int c = tid % PER_ROW;
        for (int i = tid / PER_ROW; i < rows; i += ROWS_AT_ONCE)
            __pipeline_memcpy_async(s + i * 32 + c * W, src + (first + i) * pitch + c * W, 16);
        return;
    }
    const long x = x0 + tid % 32;
    for (int i = tid / 32; i < rows; i += WIN_COL_WARPS) {
        long q = first + i;
        T *d = s + i * 32 + tid % 32;
        if (x >= g.width || ((q < 0 || q >= g.in_rows) && !g.clamp)) {
            *d = T(0);
            continue;
        }
        q = q < 0 ? 0 : q >= g.in_rows ? g.in_rows - 1 : q;
        __pipeline_memcpy_async(d, src + q * pitch + tid % 32, sizeof(T));
    }
}

// Column pass: a block owns 32 columns and segments of WIN_COL_WARPS * N
// rows; each segment's tile with its halo is loaded coalesced into shared
// memory, and each lane filters N outputs down its column from there.
template <typename T, typename Taps, bool SPLIT>
__global__ void __launch_bounds__(32 *WIN_COL_WARPS)
    conv_cols_regs(ConvGeom g, Tiling t, const T *__restrict__ tmp, T *__restrict__ out, Taps f)
{
    constexpr int N = win_col_n<T>(), TH = WIN_COL_WARPS * N;
    extern __shared__ __align__(16) unsigned char conv_smem[];
    T *bufs = reinterpret_cast<T *>(conv_smem);
    const int r = (int)g.radius, rows = TH + 2 * r, tid = threadIdx.x + 32 * threadIdx.y;
    const long x0 = t.bx() * 32, x = x0 + threadIdx.x, seg0 = t.by() * t.per_block;
    const long segs_left = (g.height + TH - 1) / TH - seg0;
    const long segs = segs_left < t.per_block ? segs_left : t.per_block;
    long pitch;
    const T *src = tmp_column<SPLIT>(g, tmp, x0, &pitch);
    const bool vectors = x0 + 32 <= g.tmp_main && aligned16(tmp);
    load_col_tile(bufs, g, src, pitch, x0, seg0 * TH + g.in_top - r, rows, tid, vectors);
    __pipeline_commit();
    for (long k = 0; k < segs; k++) {
        const T *s = bufs + (k & 1) * rows * 32;
        const long y0 = (seg0 + k) * TH;
        if (k + 1 < segs)
            load_col_tile(bufs + ((k + 1) & 1) * rows * 32, g, src, pitch, x0, y0 + TH + g.in_top - r, rows, tid, vectors);
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        T acc[N];
#pragma unroll
        for (int i = 0; i < N; i++)
            acc[i] = 0;
        win_all<T, N>(acc, 2 * r + 1, f, ColWindow<T>{s + threadIdx.y * N * 32 + threadIdx.x});
        store_column(g, out, x, y0 + threadIdx.y * N, acc);
        __syncthreads(); // every warp done with this buffer before the copy after next fills it
    }
}

// ---- host side ----------------------------------------------------------------

static const pb_conv_args *conv_args(const void *args) { return static_cast<const pb_conv_args *>(args); }

static ConvGeom geom(const pb_conv_args *a)
{
    return ConvGeom{(long)a->width, (long)a->height, (long)a->in_rows, (long)a->in_top, (long)a->radius,
                    a->border == PB_CONV_CLAMP};
}

static size_t taps_bytes(const pb_conv_args *a) { return (2 * a->radius + 1) * pb_precision_size(a->prec); }
static bool taps_fit_const(const pb_conv_args *a) { return taps_bytes(a) <= PB_CONV_CONST_BYTES; }

// Dynamic shared memory of the tiled and regs kernels.
static size_t tiled_rows_smem(const pb_conv_args *a)
{
    return TILED_ROWS_Y * (TILED_ROWS_X + 2 * a->radius) * pb_precision_size(a->prec);
}
static size_t tiled_cols_smem(const pb_conv_args *a)
{
    return (TILED_COLS_Y + 2 * a->radius) * TILED_COLS_X * pb_precision_size(a->prec);
}
static size_t regs_rows_smem(const pb_conv_args *a)
{
    bool d = a->prec == PB_DOUBLE;
    size_t n = d ? win_row_n<double>() : win_row_n<float>(), w = d ? vec_n<double>() : vec_n<float>();
    size_t pitch = (32 * n + 2 * a->radius + 2 * w - 1) / w * w; // as conv_rows_regs's
    return WIN_ROW_WARPS * pitch * pb_precision_size(a->prec);
}
static size_t regs_cols_smem(const pb_conv_args *a)
{
    size_t n = a->prec == PB_DOUBLE ? win_col_n<double>() : win_col_n<float>();
    return (WIN_COL_WARPS * n + 2 * a->radius) * 32 * pb_precision_size(a->prec);
}

static bool smem_fits(const pb_device *dev, size_t bytes, const char **why)
{
    const cudaDeviceProp &p = pb__cuda(const_cast<pb_device *>(dev))->prop;
    if (bytes > p.sharedMemPerBlockOptin) {
        *why = "the tile with its halo does not fit in shared memory (use naive or regs)";
        return false;
    }
    return true;
}

static bool device_buffers(const pb_conv_args *a, const char **why)
{
    if ((a->in && a->in->kind != PB_MEM_DEVICE) || (a->out && a->out->kind != PB_MEM_DEVICE) ||
        (a->tmp && a->tmp->kind != PB_MEM_DEVICE) || (a->filter && a->filter->kind != PB_MEM_DEVICE)) {
        *why = "conv kernels take device buffers (PB_MEM_DEVICE) only";
        return false;
    }
    return true;
}

bool pb__cuda_conv_naive_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    return device_buffers(conv_args(args), why);
}

bool pb__cuda_conv_tiled_supports(const pb_device *dev, const void *args, const char **why)
{
    const pb_conv_args *a = conv_args(args);
    return device_buffers(a, why) && smem_fits(dev, tiled_rows_smem(a), why) &&
           smem_fits(dev, tiled_cols_smem(a), why);
}

static size_t fused_smem(const pb_conv_args *a)
{
    size_t rows = a->prec == PB_DOUBLE ? fused_h<double>() : fused_h<float>();
    return (rows * fused_pitch((long)a->radius) + (FUSED_COLS / 32) * (REGS_TILE + REGS_TILE / REGS_W)) *
           pb_precision_size(a->prec);
}

bool pb__cuda_conv_fused_supports(const pb_device *dev, const void *args, const char **why)
{
    const pb_conv_args *a = conv_args(args);
    if (a->radius > FUSED_MAX_RADIUS) {
        *why = "radius above 64: the tile would be mostly halo (use regs or tiled)";
        return false;
    }
    return device_buffers(a, why) && smem_fits(dev, fused_smem(a), why);
}

bool pb__cuda_conv_regs_supports(const pb_device *dev, const void *args, const char **why)
{
    const pb_conv_args *a = conv_args(args);
    return device_buffers(a, why) && smem_fits(dev, regs_rows_smem(a), why) &&
           smem_fits(dev, regs_cols_smem(a), why);
}

// Launches kernel on a 1-D grid over a nbx x nby tiling, raising the
// dynamic shared memory limit when the tile needs more than the default.
template <typename T, typename Taps>
static pb_status launch(void (*kernel)(ConvGeom, Tiling, const T *, T *, Taps), const ConvGeom &g, long nbx,
                        long nby, dim3 block, size_t smem, cudaStream_t s, const pb_buf *src, pb_buf *dst, Taps f,
                        long per_block = 1)
{
    if (nbx <= 0 || nby <= 0)
        return PB_OK;
    if (smem > 48 * 1024)
        PB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<(unsigned)(nbx * nby), block, smem, s>>>(g, Tiling{nbx, nby, per_block}, pb__cuda_ptr<const T>(src),
                                                     pb__cuda_ptr<T>(dst), f);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

static long cdiv(long a, long b) { return (a + b - 1) / b; }

// Copies the taps to constant memory on the launch's stream (ordered before
// the kernels that read them).
static pb_status upload_taps(const pb_conv_args *a, cudaStream_t s)
{
    PB_CUDA_CHECK(cudaMemcpyToSymbolAsync(conv_taps_const, pb__cuda_ptr<const void>(a->filter), taps_bytes(a), 0,
                                          cudaMemcpyDeviceToDevice, s));
    return PB_OK;
}

template <typename T> static pb_status run_naive(const pb_device *, const pb_conv_args *a, cudaStream_t s)
{
    ConvGeom g = geom(a);
    const T *f = pb__cuda_ptr<const T>(a->filter);
    pb_status st = launch<T, const T *>(conv_rows_naive<T>, g, cdiv(g.width, 32), cdiv(g.in_rows, 8), dim3(32, 8), 0,
                                        s, a->in, a->tmp, f);
    if (st == PB_OK)
        st = launch<T, const T *>(conv_cols_naive<T>, g, cdiv(g.width, 32), cdiv(g.height, 8), dim3(32, 8), 0, s,
                                  a->tmp, a->out, f);
    return st;
}

template <typename T, typename Taps> static pb_status run_tiled_with(const pb_conv_args *a, cudaStream_t s, Taps f)
{
    ConvGeom g = geom(a);
    pb_status st = launch<T, Taps>(conv_rows_tiled<T, Taps>, g, cdiv(g.width, TILED_ROWS_X),
                                   cdiv(g.in_rows, TILED_ROWS_Y), dim3(TILED_ROWS_X, TILED_ROWS_Y),
                                   tiled_rows_smem(a), s, a->in, a->tmp, f);
    if (st == PB_OK)
        st = launch<T, Taps>(conv_cols_tiled<T, Taps>, g, cdiv(g.width, TILED_COLS_X), cdiv(g.height, TILED_COLS_Y),
                             dim3(TILED_COLS_X, TILED_COLS_Y), tiled_cols_smem(a), s, a->tmp, a->out, f);
    return st;
}

// Rows a warp (row pass) and segments a block (column pass) filter one after
// the other in the regs kernels: two, streamed, in float, where that cut
// 8192^2 at R = 32 by a tenth on the H100. Not in double: its passes already
// run at 1.02-1.05x the copy bound up to R = 32, and the second buffer cost
// them occupancy (slower at R = 32 and 80). The column pass streams only
// where two blocks with both buffers fit an SM.
#define REGS_STREAM_ROWS 2
#define REGS_STREAM_SEGMENTS 2
struct RegsPlan {
    long rows_per_warp, segments_per_block;
};
static RegsPlan regs_plan(const pb_device *dev, const pb_conv_args *a)
{
    if (a->prec != PB_FLOAT)
        return {1, 1};
    const cudaDeviceProp &p = pb__cuda(const_cast<pb_device *>(dev))->prop;
    const size_t rows = 2 * regs_rows_smem(a), cols = 2 * regs_cols_smem(a);
    const bool cols_fit = cols <= p.sharedMemPerBlockOptin &&
                          2 * (cols + p.reservedSharedMemPerBlock) <= p.sharedMemPerMultiprocessor;
    return {rows <= p.sharedMemPerBlockOptin ? REGS_STREAM_ROWS : 1, cols_fit ? REGS_STREAM_SEGMENTS : 1};
}

// Shared memory of a regs pass: one tile, or two where it streams.
static size_t buffers(long per_block, size_t tile) { return (per_block > 1 ? 2 : 1) * tile; }

template <typename T, typename Taps, bool SPLIT>
static pb_status run_regs_passes(const pb_conv_args *a, cudaStream_t s, Taps f, RegsPlan plan)
{
    ConvGeom g = geom(a);
    g.tmp_main = SPLIT ? g.width & ~31L : g.width;
    const long rp = plan.rows_per_warp, sp = plan.segments_per_block, th = WIN_COL_WARPS * win_col_n<T>();
    pb_status st = launch<T, Taps>(conv_rows_regs<T, Taps, SPLIT>, g, cdiv(g.width, 32 * win_row_n<T>()),
                                   cdiv(g.in_rows, WIN_ROW_WARPS * rp), dim3(32, WIN_ROW_WARPS),
                                   buffers(rp, regs_rows_smem(a)), s, a->in, a->tmp, f, rp);
    if (st == PB_OK)
        st = launch<T, Taps>(conv_cols_regs<T, Taps, SPLIT>, g, cdiv(g.width, 32), cdiv(cdiv(g.height, th), sp),
                             dim3(32, WIN_COL_WARPS), buffers(sp, regs_cols_smem(a)), s, a->tmp, a->out, f, sp);
    return st;
}

template <typename T, typename Taps>
static pb_status run_regs_with(const pb_conv_args *a, cudaStream_t s, Taps f, RegsPlan plan)
{
    const bool split = a->width * sizeof(T) % 16 != 0; // rows not a whole number of vectors
    return split ? run_regs_passes<T, Taps, true>(a, s, f, plan) : run_regs_passes<T, Taps, false>(a, s, f, plan);
}

// The fused kernel for a fixed (RC > 0) or run-time radius.
template <typename T, int RC, typename Taps> static pb_status run_fused_with(const pb_conv_args *a, cudaStream_t s, Taps f)
{
    ConvGeom g = geom(a);
    return launch<T, Taps>(conv_fused<T, RC, Taps>, g, cdiv(g.width, FUSED_COLS - 2 * g.radius),
                           cdiv(g.height, fused_h<T>()), dim3(32, FUSED_COLS / 32), fused_smem(a), s, a->in, a->out,
                           f);
}

// Calls run(taps): taps in constant memory where they fit, else read from
// global memory.
template <typename T, typename Run> static pb_status with_taps(const pb_conv_args *a, cudaStream_t s, Run run)
{
    if (!taps_fit_const(a))
        return run(GlobalTaps<T>{pb__cuda_ptr<const T>(a->filter)});
    pb_status st = upload_taps(a, s);
    return st != PB_OK ? st : run(ConstTaps<T>{});
}

template <typename T, int RC> static pb_status run_fused_fixed(const pb_conv_args *a, cudaStream_t s)
{
    pb_status st = upload_taps(a, s);
    return st != PB_OK ? st : run_fused_with<T, RC, ConstTaps<T>>(a, s, ConstTaps<T>{});
}

// Radii 1-8 and 16 unrolled with R fixed; others in chunks of taps.
template <typename T> static pb_status run_fused(const pb_device *, const pb_conv_args *a, cudaStream_t s)
{
    using Fixed = pb_status (*)(const pb_conv_args *, cudaStream_t);
    static const Fixed fixed[] = {nullptr,
                                  run_fused_fixed<T, 1>,
                                  run_fused_fixed<T, 2>,
                                  run_fused_fixed<T, 3>,
                                  run_fused_fixed<T, 4>,
                                  run_fused_fixed<T, 5>,
                                  run_fused_fixed<T, 6>,
                                  run_fused_fixed<T, 7>,
                                  run_fused_fixed<T, 8>};
    if (a->radius < sizeof fixed / sizeof fixed[0])
        return fixed[a->radius](a, s);
    if (a->radius == 16)
        return run_fused_fixed<T, 16>(a, s);
    return with_taps<T>(a, s, [&](auto f) { return run_fused_with<T, 0>(a, s, f); });
}

template <typename T> static pb_status run_regs(const pb_device *dev, const pb_conv_args *a, cudaStream_t s)
{
    const RegsPlan plan = regs_plan(dev, a);
    return with_taps<T>(a, s, [&](auto f) { return run_regs_with<T>(a, s, f, plan); });
}

template <typename T> static pb_status run_tiled(const pb_device *, const pb_conv_args *a, cudaStream_t s)
{
    return with_taps<T>(a, s, [&](auto f) { return run_tiled_with<T>(a, s, f); });
}

// Dispatch on precision; empty images launch nothing.
#define PB_CONV_DISPATCH(fn)                                                                 \
    const pb_conv_args *a = conv_args(args);                                                \
    if (!a->width || !a->height)                                                             \
        return PB_OK;                                                                        \
    return a->prec == PB_DOUBLE ? fn<double>(dev, a, pb__cuda_stream(s)) : fn<float>(dev, a, pb__cuda_stream(s))

pb_status pb__cuda_conv_naive(pb_device *dev, const void *args, pb_stream *s) { PB_CONV_DISPATCH(run_naive); }
pb_status pb__cuda_conv_tiled(pb_device *dev, const void *args, pb_stream *s) { PB_CONV_DISPATCH(run_tiled); }
pb_status pb__cuda_conv_regs(pb_device *dev, const void *args, pb_stream *s) { PB_CONV_DISPATCH(run_regs); }
pb_status pb__cuda_conv_fused(pb_device *dev, const void *args, pb_stream *s) { PB_CONV_DISPATCH(run_fused); }

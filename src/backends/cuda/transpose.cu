// Transpose on CUDA: the lecture's steps (study 004) and a vectorised kernel.
// naive reads rows and writes columns; coalesced stages a 32x32 tile in
// shared memory so both sides are row accesses; padded adds a column to the
// tile so its column reads hit 32 different banks; diagonal walks the blocks
// along diagonals (the partition-camping remedy); vec moves 16-byte vectors on
// both sides and 4 to 16 elements per thread. copy has vec's access pattern
// without transposing: the bound. Any m x n; edge tiles are bounds-checked.
#include <limits.h>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"

namespace {

constexpr int TILE = 32, ROWS = 8; // the teaching kernels: 32 x 8 threads, 4 elements each

const pb_transpose_args *targs(const void *args) { return static_cast<const pb_transpose_args *>(args); }

template <typename T>
__global__ void __launch_bounds__(TILE *ROWS)
    transpose_naive(size_t rows, size_t cols, const T *__restrict__ in, size_t ld_in, T *__restrict__ out,
                    size_t ld_out)
{
    size_t x = blockIdx.x * (size_t)TILE + threadIdx.x, y = blockIdx.y * (size_t)TILE + threadIdx.y;
    if (x >= cols)
        return;
    for (int j = 0; j < TILE; j += ROWS)
        if (y + j < rows)
            out[x * ld_out + y + j] = in[(y + j) * ld_in + x];
}

// DIAGONAL: blocks are renumbered so that consecutive blocks walk a diagonal
// of the tile grid (Ruetsch and Micikevicius), any grid shape.
template <typename T, int PAD, bool DIAGONAL>
__global__ void __launch_bounds__(TILE *ROWS)
    transpose_tiled(size_t rows, size_t cols, const T *__restrict__ in, size_t ld_in, T *__restrict__ out,
                    size_t ld_out)
{
    __shared__ T tile[TILE][TILE + PAD];
    size_t bx = blockIdx.x, by = blockIdx.y;
    if (DIAGONAL) {
        size_t bid = blockIdx.x + (size_t)gridDim.x * blockIdx.y;
        by = bid % gridDim.y;
        bx = (bid / gridDim.y + by) % gridDim.x;
    }
    size_t x = bx * TILE + threadIdx.x, y = by * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * ld_in + x];
    __syncthreads();
    x = by * TILE + threadIdx.x; // now along the output's rows (the input's columns)
    y = bx * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < rows && y + j < cols)
            out[(y + j) * ld_out + x] = tile[threadIdx.x][threadIdx.y + j];
}

// 16-byte vectors: 4 floats or 2 doubles.
template <typename T> struct vec16;
template <> struct vec16<float> {
    using type = float4;
    static constexpr int n = 4;
};
template <> struct vec16<double> {
    using type = double2;
    static constexpr int n = 2;
};

template <typename V, typename T> __device__ __forceinline__ T &lane(V &v, int e) { return reinterpret_cast<T *>(&v)[e]; }

constexpr int VEC_THREADS = 256;

// vec's second half: through the padded tile to the output rows.
template <typename T, int VT, typename V>
__device__ __forceinline__ void transpose_tile(T (*tile)[VT + 1], V *v, size_t rows, size_t cols, size_t r0,
                                               size_t c0, int q, int rr, bool full, T *__restrict__ out,
                                               size_t ld_out)
{
    constexpr int VN = vec16<T>::n, QPR = VT / VN, RPP = VEC_THREADS / QPR, PASSES = VT / RPP;
#pragma unroll
    for (int p = 0; p < PASSES; p++)
#pragma unroll
        for (int e = 0; e < VN; e++)
            tile[p * RPP + rr][q * VN + e] = lane<V, T>(v[p], e);
    __syncthreads();
    // Output row c0 + j holds input column c0 + j: elements from rows r0 + q*VN + e.
#pragma unroll
    for (int p = 0; p < PASSES; p++) {
        const int j = p * RPP + rr;
        V w;
#pragma unroll
        for (int e = 0; e < VN; e++)
            lane<V, T>(w, e) = tile[q * VN + e][j];
        size_t orow = c0 + j, ocol = r0 + q * VN;
        if (full) {
            *reinterpret_cast<V *>(&out[orow * ld_out + ocol]) = w;
        } else {
#pragma unroll
            for (int e = 0; e < VN; e++)
                if (orow < cols && ocol + e < rows)
                    out[orow * ld_out + ocol + e] = lane<V, T>(w, e);
        }
    }
}

// A VT x VT tile per block of 256 threads. Each thread loads all its
// vectors before storing any (more bytes in flight), writes them into the
// padded tile as scalars (conflict-free for VT = 32 floats), then reads
// vectors' worth of a tile column and stores them as one vector of the
// output row. Interior tiles of 16-byte-aligned rows use vectors; edge tiles
// and unaligned leading dimensions go element by element. TRANSPOSE = false
// is the copy with the same pattern, no shared memory.
template <typename T, int VT, bool TRANSPOSE>
__global__ void __launch_bounds__(VEC_THREADS)
    transpose_vec(size_t rows, size_t cols, const T *__restrict__ in, size_t ld_in, T *__restrict__ out,
                  size_t ld_out, bool aligned)
{
    using V = typename vec16<T>::type;
    constexpr int VN = vec16<T>::n, QPR = VT / VN, RPP = VEC_THREADS / QPR, PASSES = VT / RPP;
    static_assert(PASSES >= 1 && VT % RPP == 0, "tile shape");
    __shared__ T tile[TRANSPOSE ? VT : 1][TRANSPOSE ? VT + 1 : 1];
    const size_t r0 = blockIdx.y * (size_t)VT, c0 = blockIdx.x * (size_t)VT;
    const int q = threadIdx.x % QPR, rr = threadIdx.x / QPR;
    const bool full = aligned && r0 + VT <= rows && c0 + VT <= cols;
    V v[PASSES];
    if (full) {
#pragma unroll
        for (int p = 0; p < PASSES; p++)
            v[p] = __ldg(reinterpret_cast<const V *>(&in[(r0 + p * RPP + rr) * ld_in + c0 + q * VN]));
    } else {
#pragma unroll
        for (int p = 0; p < PASSES; p++)
#pragma unroll
            for (int e = 0; e < VN; e++) {
                size_t r = r0 + p * RPP + rr, c = c0 + q * VN + e;
                lane<V, T>(v[p], e) = r < rows && c < cols ? in[r * ld_in + c] : T(0);
            }
    }
    if constexpr (!TRANSPOSE) {
#pragma unroll
        for (int p = 0; p < PASSES; p++) {
            size_t r = r0 + p * RPP + rr, c = c0 + q * VN;
            if (full) {
                *reinterpret_cast<V *>(&out[r * ld_out + c]) = v[p];
            } else {
#pragma unroll
                for (int e = 0; e < VN; e++)
                    if (r < rows && c + e < cols)
                        out[r * ld_out + c + e] = lane<V, T>(v[p], e);
            }
        }
    } else {
        transpose_tile<T, VT>(tile, v, rows, cols, r0, c0, q, rr, full, out, ld_out);
    }
}

// Grid of tiles: x along the input's columns, y along its rows (at most 65535).
bool grid_fits(const pb_transpose_args *t, size_t tile, const char **why)
{
    if ((t->rows + tile - 1) / tile > 65535 || (t->cols + tile - 1) / tile > INT_MAX) {
        *why = "matrix too large for the tile grid (at most 65535 tiles down)";
        return false;
    }
    return true;
}

dim3 grid_of(const pb_transpose_args *t, size_t tile)
{
    return dim3((unsigned)((t->cols + tile - 1) / tile), (unsigned)((t->rows + tile - 1) / tile));
}

template <typename T> pb_status launch_naive(const pb_transpose_args *t, cudaStream_t s)
{
    transpose_naive<T><<<grid_of(t, TILE), dim3(TILE, ROWS), 0, s>>>(
        t->rows, t->cols, pb__cuda_ptr<const T>(t->in), t->ld_in, pb__cuda_ptr<T>(t->out), t->ld_out);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

template <typename T, int PAD, bool DIAGONAL> pb_status launch_tiled(const pb_transpose_args *t, cudaStream_t s)
{
    transpose_tiled<T, PAD, DIAGONAL><<<grid_of(t, TILE), dim3(TILE, ROWS), 0, s>>>(
        t->rows, t->cols, pb__cuda_ptr<const T>(t->in), t->ld_in, pb__cuda_ptr<T>(t->out), t->ld_out);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

template <typename T, int VT, bool TRANSPOSE> pb_status launch_vec(const pb_transpose_args *t, cudaStream_t s)
{
    constexpr size_t VN = vec16<T>::n;
    // Vectors need 16-byte aligned rows on both sides (buffers start aligned).
    bool aligned = t->ld_in % VN == 0 && t->ld_out % VN == 0;
    transpose_vec<T, VT, TRANSPOSE><<<grid_of(t, VT), VEC_THREADS, 0, s>>>(
        t->rows, t->cols, pb__cuda_ptr<const T>(t->in), t->ld_in, pb__cuda_ptr<T>(t->out), t->ld_out, aligned);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

#define PB_TRANSPOSE_DISPATCH(f32, f64)                                                  \
    (void)dev;                                                                           \
    const pb_transpose_args *t = targs(args);                                            \
    if (t->rows == 0 || t->cols == 0)                                                    \
        return PB_OK;                                                                    \
    return t->prec == PB_DOUBLE ? f64(t, pb__cuda_stream(s)) : f32(t, pb__cuda_stream(s))

} // namespace

bool pb__cuda_transpose_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    return grid_fits(targs(args), TILE, why);
}

pb_status pb__cuda_transpose_naive(pb_device *dev, const void *args, pb_stream *s)
{
    PB_TRANSPOSE_DISPATCH(launch_naive<float>, launch_naive<double>);
}

pb_status pb__cuda_transpose_coalesced(pb_device *dev, const void *args, pb_stream *s)
{
    PB_TRANSPOSE_DISPATCH((launch_tiled<float, 0, false>), (launch_tiled<double, 0, false>));
}

pb_status pb__cuda_transpose_padded(pb_device *dev, const void *args, pb_stream *s)
{
    PB_TRANSPOSE_DISPATCH((launch_tiled<float, 1, false>), (launch_tiled<double, 1, false>));
}

pb_status pb__cuda_transpose_diagonal(pb_device *dev, const void *args, pb_stream *s)
{
    PB_TRANSPOSE_DISPATCH((launch_tiled<float, 1, true>), (launch_tiled<double, 1, true>));
}

pb_status pb__cuda_transpose_vec32(pb_device *dev, const void *args, pb_stream *s)
{
    PB_TRANSPOSE_DISPATCH((launch_vec<float, 32, true>), (launch_vec<double, 32, true>));
}

pb_status pb__cuda_transpose_vec64(pb_device *dev, const void *args, pb_stream *s)
{
    PB_TRANSPOSE_DISPATCH((launch_vec<float, 64, true>), (launch_vec<double, 64, true>));
}

pb_status pb__cuda_transpose_copy(pb_device *dev, const void *args, pb_stream *s)
{
    PB_TRANSPOSE_DISPATCH((launch_vec<float, 64, false>), (launch_vec<double, 64, false>));
}

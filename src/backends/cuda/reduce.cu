// Sums on CUDA: the lecture's seven steps (study 004; Harris, "Optimizing
// parallel reduction in CUDA"), then warp shuffles, 16-byte vector loads and
// one-pass kernels, beside CUB's DeviceReduce::Sum. The teaching kernels write
// one partial sum per block and are applied again to the partials until one
// value is left; the grid-stride kernels need two passes at most (or one).
// Integers are summed as unsigned, so the sum wraps modulo 2^32 (defined).
#include <limits.h>

#include <cub/device/device_reduce.cuh>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "core/kernel_data.h"

namespace {

constexpr unsigned BS = 256;          // threads per block of every kernel here
constexpr unsigned BLOCKS_PER_SM = 4; // grid of the grid-stride kernels, per SM (all resident: one wave)

const pb_reduce_args *rargs(const void *args) { return static_cast<const pb_reduce_args *>(args); }

// ---- the seven steps ----------------------------------------------------------

// 1: interleaved addressing, the active threads chosen by tid % (2s): divergent warps.
template <typename In, typename A> __global__ void __launch_bounds__(BS) interleaved_divergent(const In *in, size_t n, A *out)
{
    __shared__ A s[BS];
    unsigned tid = threadIdx.x;
    size_t i = blockIdx.x * (size_t)BS + tid;
    s[tid] = i < n ? A(in[i]) : A(0);
    __syncthreads();
    for (unsigned d = 1; d < BS; d *= 2) {
        if (tid % (2 * d) == 0)
            s[tid] += s[tid + d];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = s[0];
}

// 2: interleaved addressing with contiguous active threads (strided shared
// memory indices: bank conflicts).
template <typename In, typename A> __global__ void __launch_bounds__(BS) interleaved(const In *in, size_t n, A *out)
{
    __shared__ A s[BS];
    unsigned tid = threadIdx.x;
    size_t i = blockIdx.x * (size_t)BS + tid;
    s[tid] = i < n ? A(in[i]) : A(0);
    __syncthreads();
    for (unsigned d = 1; d < BS; d *= 2) {
        unsigned index = 2 * d * tid;
        if (index < BS)
            s[index] += s[index + d];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = s[0];
}

// The tree of steps 3-7 over s[0..BS), from half the block down to
// stop (exclusive); s[tid] holds the thread's value on entry.
template <typename A> __device__ __forceinline__ void tree(A *s, unsigned tid, unsigned stop)
{
    for (unsigned d = BS / 2; d > stop; d >>= 1) {
        if (tid < d)
            s[tid] += s[tid + d];
        __syncthreads();
    }
}

// 3: sequential addressing (conflict-free, half the threads idle from the start).
template <typename In, typename A> __global__ void __launch_bounds__(BS) sequential(const In *in, size_t n, A *out)
{
    __shared__ A s[BS];
    unsigned tid = threadIdx.x;
    size_t i = blockIdx.x * (size_t)BS + tid;
    s[tid] = i < n ? A(in[i]) : A(0);
    __syncthreads();
    tree(s, tid, 0);
    if (tid == 0)
        out[blockIdx.x] = s[0];
}

// Two elements per thread, added while loading (steps 4-6).
template <typename In, typename A> __device__ __forceinline__ A load_two(const In *in, size_t n, unsigned tid)
{
    size_t i = blockIdx.x * (size_t)(2 * BS) + tid;
    A x = i < n ? A(in[i]) : A(0);
    return i + BS < n ? x + A(in[i + BS]) : x;
}

// 4: first add during load: each block covers 2 * BS elements.
template <typename In, typename A> __global__ void __launch_bounds__(BS) first_add(const In *in, size_t n, A *out)
{
    __shared__ A s[BS];
    unsigned tid = threadIdx.x;
    s[tid] = load_two<In, A>(in, n, tid);
    __syncthreads();
    tree(s, tid, 0);
    if (tid == 0)
        out[blockIdx.x] = s[0];
}

// The last warp's steps without __syncthreads. Independent thread scheduling
// (Volta on) needs __syncwarp between a step's reads and its writes.
template <typename A> __device__ __forceinline__ void warp_tail(volatile A *s, unsigned tid)
{
    A x = s[tid];
#pragma unroll
    for (unsigned d = 32; d > 0; d >>= 1) {
        x += s[tid + d];
        __syncwarp();
        s[tid] = x;
        __syncwarp();
    }
}

// 5: the last warp unrolled.
template <typename In, typename A> __global__ void __launch_bounds__(BS) unroll_last_warp(const In *in, size_t n, A *out)
{
    __shared__ A s[BS];
    unsigned tid = threadIdx.x;
    s[tid] = load_two<In, A>(in, n, tid);
    __syncthreads();
    tree(s, tid, 32);
    if (tid < 32)
        warp_tail<A>(s, tid);
    if (tid == 0)
        out[blockIdx.x] = s[0];
}

// 6: every step unrolled, the block size a template parameter.
template <typename In, typename A, unsigned B = BS>
__global__ void __launch_bounds__(B) unroll_all(const In *in, size_t n, A *out)
{
    __shared__ A s[B];
    unsigned tid = threadIdx.x;
    size_t i = blockIdx.x * (size_t)(2 * B) + tid;
    A x = i < n ? A(in[i]) : A(0);
    s[tid] = i + B < n ? x + A(in[i + B]) : x;
    __syncthreads();
    if (B >= 1024) { if (tid < 512) s[tid] += s[tid + 512]; __syncthreads(); }
    if (B >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
    if (B >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
    if (B >= 128) { if (tid < 64) s[tid] += s[tid + 64]; __syncthreads(); }
    if (tid < 32)
        warp_tail<A>(s, tid);
    if (tid == 0)
        out[blockIdx.x] = s[0];
}

// 7: many elements per thread: a fixed grid strides over the input.
template <typename In, typename A> __global__ void __launch_bounds__(BS, BLOCKS_PER_SM) multiple_per_thread(const In *in, size_t n, A *out)
{
    __shared__ A s[BS];
    unsigned tid = threadIdx.x;
    size_t i = blockIdx.x * (size_t)(2 * BS) + tid, step = 2 * (size_t)BS * gridDim.x;
    A x = 0;
    for (; i < n; i += step) {
        x += A(in[i]);
        if (i + BS < n)
            x += A(in[i + BS]);
    }
    s[tid] = x;
    __syncthreads();
    tree(s, tid, 32);
    if (tid < 32)
        warp_tail<A>(s, tid);
    if (tid == 0)
        out[blockIdx.x] = s[0];
}

// ---- modern kernels -------------------------------------------------------------

template <typename A> __device__ __forceinline__ A warp_sum(A x)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1)
        x += __shfl_down_sync(0xffffffffu, x, d);
    return x;
}

// Sum over the block, valid in thread 0: shuffles within warps, one shared
// slot per warp, shuffles again in the first warp.
template <typename A> __device__ __forceinline__ A block_sum(A x)
{
    __shared__ A warps[BS / 32];
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    x = warp_sum(x);
    if (lane == 0)
        warps[warp] = x;
    __syncthreads();
    x = threadIdx.x < BS / 32 ? warps[lane] : A(0);
    return warp == 0 ? warp_sum(x) : x;
}

// Grid-stride scalar loads, shuffle reduction.
template <typename In, typename A> __global__ void __launch_bounds__(BS, BLOCKS_PER_SM) shuffle(const In *in, size_t n, A *out)
{
    A x = 0;
    for (size_t i = blockIdx.x * (size_t)BS + threadIdx.x; i < n; i += (size_t)BS * gridDim.x)
        x += A(in[i]);
    x = block_sum(x);
    if (threadIdx.x == 0)
        out[blockIdx.x] = x;
}

template <typename T> struct vec16;
template <> struct vec16<float> { using type = float4; };
template <> struct vec16<unsigned> { using type = uint4; };
template <> struct vec16<double> { using type = double2; };

template <typename A> __device__ __forceinline__ A vsum(float4 v) { return A(v.x) + A(v.y) + A(v.z) + A(v.w); }
template <typename A> __device__ __forceinline__ A vsum(uint4 v) { return A(v.x) + A(v.y) + A(v.z) + A(v.w); }
template <typename A> __device__ __forceinline__ A vsum(double2 v) { return A(v.x) + A(v.y); }

constexpr int UNROLL = 4; // independent 16-byte loads in flight per thread

// This thread's sum of in[0..n) with 16-byte loads, UNROLL at a time, over a
// grid stride; the elements past the last whole vector go to the first threads.
template <typename In, typename A> __device__ __forceinline__ A thread_sum_vec(const In *__restrict__ in, size_t n)
{
    using V = typename vec16<In>::type;
    constexpr size_t VN = sizeof(V) / sizeof(In);
    const V *v = reinterpret_cast<const V *>(in);
    const size_t nv = n / VN, stride = (size_t)BS * gridDim.x, tid = blockIdx.x * (size_t)BS + threadIdx.x;
    A x = 0;
    size_t i = tid;
    for (; i + (UNROLL - 1) * stride < nv; i += UNROLL * stride) {
        V r[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            r[u] = __ldg(&v[i + u * stride]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            x += vsum<A>(r[u]);
    }
    for (; i < nv; i += stride)
        x += vsum<A>(__ldg(&v[i]));
    if (tid < n - nv * VN)
        x += A(in[nv * VN + tid]);
    return x;
}

template <typename In, typename A> __global__ void __launch_bounds__(BS, BLOCKS_PER_SM) vectorised(const In *in, size_t n, A *out)
{
    A x = block_sum(thread_sum_vec<In, A>(in, n));
    if (threadIdx.x == 0)
        out[blockIdx.x] = x;
}

// One pass: blocks write partial sums; the last block to finish (counted in
// *done) adds them and resets the counter for the next call.
template <typename In, typename A>
__global__ void __launch_bounds__(BS, BLOCKS_PER_SM) last_block(const In *in, size_t n, A *partial, unsigned *done, A *out)
{
    __shared__ bool last;
    A x = block_sum(thread_sum_vec<In, A>(in, n));
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = x;
        __threadfence(); // the partial is visible before the count says so
        last = atomicAdd(done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    A y = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BS)
        y += reinterpret_cast<volatile A *>(partial)[b];
    y = block_sum(y);
    if (threadIdx.x == 0) {
        *out = y;
        *done = 0;
    }
}

// One pass: every block adds its sum to *out atomically (the order of the
// additions, and so a float result's rounding, varies from run to run).
template <typename In, typename A> __global__ void __launch_bounds__(BS, BLOCKS_PER_SM) atomic(const In *in, size_t n, A *out)
{
    A x = block_sum(thread_sum_vec<In, A>(in, n));
    if (threadIdx.x == 0)
        atomicAdd(out, x);
}

// ---- host side ----------------------------------------------------------------------

template <typename In, typename A> using kernel_t = void (*)(const In *, size_t, A *);

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

size_t acc_size(pb_reduce_type t) { return t == PB_REDUCE_FLOAT_DOUBLE ? sizeof(double) : 4; }

// A variant's kernel and how it covers the input: PER_BLOCK elements per
// block, passes repeated until one block is left (the teaching kernels 1-6);
// or PER_BLOCK = 0, a grid-stride grid (at most BLOCKS_PER_SM per SM, about
// HINT elements per block on small inputs), then one block over the partials.
#define PB_REDUCE_KERNEL(NAME, KERNEL, PER_BLOCK, HINT)                                      \
    struct NAME {                                                                         \
        static constexpr size_t per_block = PER_BLOCK, hint = HINT;                       \
        template <typename In, typename A> static kernel_t<In, A> get() { return KERNEL<In, A>; } \
    };
PB_REDUCE_KERNEL(k_interleaved_divergent, interleaved_divergent, BS, 0)
PB_REDUCE_KERNEL(k_interleaved, interleaved, BS, 0)
PB_REDUCE_KERNEL(k_sequential, sequential, BS, 0)
PB_REDUCE_KERNEL(k_first_add, first_add, 2 * BS, 0)
PB_REDUCE_KERNEL(k_unroll_last_warp, unroll_last_warp, 2 * BS, 0)
PB_REDUCE_KERNEL(k_unroll_all, unroll_all, 2 * BS, 0)
PB_REDUCE_KERNEL(k_multiple_per_thread, multiple_per_thread, 0, 2 * BS)
PB_REDUCE_KERNEL(k_shuffle, shuffle, 0, BS)
PB_REDUCE_KERNEL(k_vectorised, vectorised, 0, 4 * UNROLL * BS)
#undef PB_REDUCE_KERNEL

// Blocks of the first pass.
template <typename K> size_t first_blocks(const pb_device *dev, size_t n)
{
    if (K::per_block)
        return ceil_div(n, K::per_block);
    size_t cap = (size_t)static_cast<const pb_cuda_device *>(dev->impl)->prop.multiProcessorCount * BLOCKS_PER_SM;
    size_t want = ceil_div(n, K::hint);
    return want < cap ? want : cap;
}

// Partial sums of two consecutive passes (ping-pong), the first half padded
// to 256 bytes.
template <typename K> size_t passes_workspace(const pb_device *dev, const void *args)
{
    const pb_reduce_args *r = rargs(args);
    size_t elt = acc_size(r->type), b1 = first_blocks<K>(dev, r->n);
    if (b1 <= 1)
        return 0;
    size_t b2 = K::per_block ? ceil_div(b1, K::per_block) : 1;
    return ceil_div(b1 * elt, 256) * 256 + b2 * elt;
}

template <typename K, typename In, typename A> pb_status run_passes(const pb_device *dev, const pb_reduce_args *r, cudaStream_t s)
{
    size_t blocks = first_blocks<K>(dev, r->n), count = r->n;
    char *work = r->work ? pb__cuda_ptr<char>(r->work) : nullptr;
    A *bufs[2] = {reinterpret_cast<A *>(work), work ? reinterpret_cast<A *>(work + ceil_div(blocks * sizeof(A), 256) * 256) : nullptr};
    A *out = pb__cuda_ptr<A>(r->out);
    for (int level = 0;; level++) {
        A *dst = blocks == 1 ? out : bufs[level % 2];
        if (level == 0)
            K::template get<In, A>()<<<(unsigned)blocks, BS, 0, s>>>(pb__cuda_ptr<const In>(r->in), count, dst);
        else
            K::template get<A, A>()<<<(unsigned)blocks, BS, 0, s>>>(bufs[(level - 1) % 2], count, dst);
        PB_CUDA_CHECK_LAUNCH();
        if (blocks == 1)
            return PB_OK;
        count = blocks;
        blocks = K::per_block ? ceil_div(count, K::per_block) : 1;
    }
}

pb_status zero_result(const pb_reduce_args *r, cudaStream_t s)
{
    PB_CUDA_CHECK(cudaMemsetAsync(pb__cuda_ptr<void>(r->out), 0, acc_size(r->type), s));
    return PB_OK;
}

pb_status check_work(const pb_reduce_args *r, size_t need)
{
    if (need && (!r->work || r->work_bytes < need || r->work->bytes < need))
        return pb__fail(PB_ERR_INVALID, "reduce: needs %zu bytes of workspace, has %zu", need,
                        r->work ? r->work_bytes : 0);
    return PB_OK;
}

// Element type In, accumulator A: float in float, float in double, int32 as unsigned.
template <template <typename, typename> class F> pb_status by_type(const pb_device *dev, const pb_reduce_args *r, cudaStream_t s)
{
    switch (r->type) {
    case PB_REDUCE_FLOAT: return F<float, float>::run(dev, r, s);
    case PB_REDUCE_FLOAT_DOUBLE: return F<float, double>::run(dev, r, s);
    case PB_REDUCE_INT: return F<unsigned, unsigned>::run(dev, r, s);
    }
    return pb__fail(PB_ERR_INVALID, "reduce: unknown type %d", (int)r->type);
}

template <typename K> struct passes {
    template <typename In, typename A> struct with {
        static pb_status run(const pb_device *dev, const pb_reduce_args *r, cudaStream_t s)
        {
            return run_passes<K, In, A>(dev, r, s);
        }
    };
};

template <typename K> pb_status run_variant(pb_device *dev, const void *args, pb_stream *st)
{
    const pb_reduce_args *r = rargs(args);
    cudaStream_t s = pb__cuda_stream(st);
    if (r->n == 0)
        return zero_result(r, s);
    pb_status e = check_work(r, passes_workspace<K>(dev, args));
    return e != PB_OK ? e : by_type<passes<K>::template with>(dev, r, s);
}

// ---- one-pass kernels -----------------------------------------------------------

template <typename In, typename A> struct one_pass_last_block {
    static pb_status run(const pb_device *dev, const pb_reduce_args *r, cudaStream_t s)
    {
        size_t blocks = first_blocks<k_vectorised>(dev, r->n);
        char *work = pb__cuda_ptr<char>(r->work);
        last_block<In, A><<<(unsigned)blocks, BS, 0, s>>>(pb__cuda_ptr<const In>(r->in), r->n,
                                                          reinterpret_cast<A *>(work + 256),
                                                          reinterpret_cast<unsigned *>(work), pb__cuda_ptr<A>(r->out));
        PB_CUDA_CHECK_LAUNCH();
        return PB_OK;
    }
};

// The counter, then the partial sums.
size_t last_block_workspace(const pb_device *dev, const void *args)
{
    const pb_reduce_args *r = rargs(args);
    return 256 + first_blocks<k_vectorised>(dev, r->n) * acc_size(r->type);
}

template <typename In, typename A> struct one_pass_atomic {
    static pb_status run(const pb_device *dev, const pb_reduce_args *r, cudaStream_t s)
    {
        pb_status e = zero_result(r, s);
        if (e != PB_OK)
            return e;
        atomic<In, A><<<(unsigned)first_blocks<k_vectorised>(dev, r->n), BS, 0, s>>>(pb__cuda_ptr<const In>(r->in), r->n,
                                                                                   pb__cuda_ptr<A>(r->out));
        PB_CUDA_CHECK_LAUNCH();
        return PB_OK;
    }
};

// ---- CUB ------------------------------------------------------------------------------

// CUB's Sum accumulates in the output's type (double for float+double-sum).
template <typename In, typename A> struct cub_sum {
    static cudaError_t call(void *temp, size_t &bytes, const pb_reduce_args *r, cudaStream_t s)
    {
        const In *in = r->in ? pb__cuda_ptr<const In>(r->in) : nullptr;
        A *out = r->out ? pb__cuda_ptr<A>(r->out) : nullptr;
        return cub::DeviceReduce::Sum(temp, bytes, in, out, (int)r->n, s);
    }
    static pb_status run(const pb_device *dev, const pb_reduce_args *r, cudaStream_t s)
    {
        (void)dev;
        size_t need = 0;
        PB_CUDA_CHECK(call(nullptr, need, r, s));
        pb_status e = check_work(r, need);
        if (e != PB_OK)
            return e;
        PB_CUDA_CHECK(call(pb__cuda_ptr<void>(r->work), need, r, s));
        return PB_OK;
    }
};

size_t cub_workspace(const pb_device *dev, const void *args)
{
    (void)dev;
    const pb_reduce_args *r = rargs(args);
    size_t bytes = 0;
    cudaError_t e = cudaErrorInvalidValue;
    switch (r->type) {
    case PB_REDUCE_FLOAT: e = cub_sum<float, float>::call(nullptr, bytes, r, nullptr); break;
    case PB_REDUCE_FLOAT_DOUBLE: e = cub_sum<float, double>::call(nullptr, bytes, r, nullptr); break;
    case PB_REDUCE_INT: e = cub_sum<unsigned, unsigned>::call(nullptr, bytes, r, nullptr); break;
    }
    return e == cudaSuccess ? bytes : 0; // run() reports the failure
}

} // namespace

#define PB_CUDA_REDUCE_PASSES(NAME)                                                             \
    pb_status pb__cuda_reduce_##NAME(pb_device *dev, const void *args, pb_stream *s)             \
    {                                                                                           \
        return run_variant<k_##NAME>(dev, args, s);                                             \
    }                                                                                           \
    const pb__workspace pb__cuda_reduce_##NAME##_work = {passes_workspace<k_##NAME>};
PB_CUDA_REDUCE_PASSES(interleaved_divergent)
PB_CUDA_REDUCE_PASSES(interleaved)
PB_CUDA_REDUCE_PASSES(sequential)
PB_CUDA_REDUCE_PASSES(first_add)
PB_CUDA_REDUCE_PASSES(unroll_last_warp)
PB_CUDA_REDUCE_PASSES(unroll_all)
PB_CUDA_REDUCE_PASSES(multiple_per_thread)
PB_CUDA_REDUCE_PASSES(shuffle)
PB_CUDA_REDUCE_PASSES(vectorised)

pb_status pb__cuda_reduce_last_block(pb_device *dev, const void *args, pb_stream *st)
{
    const pb_reduce_args *r = rargs(args);
    cudaStream_t s = pb__cuda_stream(st);
    if (r->n == 0)
        return zero_result(r, s);
    pb_status e = check_work(r, last_block_workspace(dev, args));
    return e != PB_OK ? e : by_type<one_pass_last_block>(dev, r, s);
}
const pb__workspace pb__cuda_reduce_last_block_work = {last_block_workspace};

pb_status pb__cuda_reduce_atomic(pb_device *dev, const void *args, pb_stream *st)
{
    const pb_reduce_args *r = rargs(args);
    cudaStream_t s = pb__cuda_stream(st);
    return r->n == 0 ? zero_result(r, s) : by_type<one_pass_atomic>(dev, r, s);
}

bool pb__cuda_reduce_cub_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    if (rargs(args)->n > INT_MAX) {
        *why = "more elements than CUB's int item count";
        return false;
    }
    return true;
}

pb_status pb__cuda_reduce_cub(pb_device *dev, const void *args, pb_stream *st)
{
    const pb_reduce_args *r = rargs(args);
    cudaStream_t s = pb__cuda_stream(st);
    return r->n == 0 ? zero_result(r, s) : by_type<cub_sum>(dev, r, s);
}
const pb__workspace pb__cuda_reduce_cub_work = {cub_workspace};

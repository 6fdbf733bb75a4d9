// Sum kernels, the lecture's seven steps (study 004). Every kernel adds
// n elements of in (from element in_off) per work-group of BS work-items and
// writes the group's sum to out[out_off + group]; the host repeats passes
// over the partial sums until one is left. Types by suffix: f32 (float in
// float), u32 (int32 as uint: sums wrap modulo 2^32), and with -DPB_FP64
// f32f64 (float in double) and f64 (double partial sums).
//
// OpenCL 1.2 promises nothing about warps, so on most platforms the last
// six steps keep their barriers: unrolling removes the loop, not the
// synchronisation. On NVIDIA's platform (PB_NV_WARP, set by the host) they
// run warp-synchronously as in the CUDA twin, with inline PTX for
// __syncwarp (bar.warp.sync) between a step's reads and its writes.

#ifdef PB_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define BS 256 // work-items per work-group: a compile-time constant (step 6)

#define LOAD_ONE(IN, A)                                                                               \
    const uint tid = get_local_id(0);                                                                 \
    const ulong i = get_group_id(0) * (ulong)BS + tid;                                                \
    s[tid] = i < n ? (A)in[in_off + i] : (A)0;                                                        \
    barrier(CLK_LOCAL_MEM_FENCE)

#define LOAD_TWO(IN, A)                                                                               \
    const uint tid = get_local_id(0);                                                                 \
    const ulong i = get_group_id(0) * (ulong)(2 * BS) + tid;                                          \
    A x_ = i < n ? (A)in[in_off + i] : (A)0;                                                          \
    s[tid] = i + BS < n ? x_ + (A)in[in_off + i + BS] : x_;                                           \
    barrier(CLK_LOCAL_MEM_FENCE)

#define SEQUENTIAL_TREE(STOP)                                                                         \
    for (uint d = BS / 2; d > (STOP); d >>= 1) {                                                      \
        if (tid < d)                                                                                  \
            s[tid] += s[tid + d];                                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
    }

#define STEP(D)                                                                                       \
    if (tid < (D))                                                                                    \
        s[tid] += s[tid + (D)];                                                                       \
    barrier(CLK_LOCAL_MEM_FENCE)

#if defined(PB_NV_WARP) && PB_NV_WARP == 32
#define WARP_SYNC() asm volatile("bar.warp.sync -1;" ::: "memory")
#define LAST_STEPS(A)                                                                                 \
    if (tid < 32) {                                                                                   \
        volatile __local A *v = s;                                                                    \
        A x_ = v[tid];                                                                                \
        for (uint d = 32; d > 0; d >>= 1) {                                                           \
            x_ += v[tid + d];                                                                         \
            WARP_SYNC();                                                                              \
            v[tid] = x_;                                                                              \
            WARP_SYNC();                                                                              \
        }                                                                                             \
    }
#else
#define LAST_STEPS(A) STEP(32); STEP(16); STEP(8); STEP(4); STEP(2); STEP(1)
#endif

#define STORE                                                                                         \
    if (tid == 0)                                                                                     \
    out[out_off + get_group_id(0)] = s[0]

#define ARGS(IN, A) __global const IN *restrict in, ulong in_off, ulong n, __global A *restrict out, ulong out_off

#define DEFINE_REDUCE(SUFFIX, IN, A)                                                                  \
    /* 1: interleaved addressing, divergent branch */                                                 \
    __kernel void interleaved_divergent_##SUFFIX(ARGS(IN, A))                                         \
    {                                                                                                 \
        __local A s[BS];                                                                              \
        LOAD_ONE(IN, A);                                                                              \
        for (uint d = 1; d < BS; d *= 2) {                                                            \
            if (tid % (2 * d) == 0)                                                                   \
                s[tid] += s[tid + d];                                                                 \
            barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        }                                                                                             \
        STORE;                                                                                        \
    }                                                                                                 \
    /* 2: interleaved addressing, strided index (bank conflicts) */                                   \
    __kernel void interleaved_##SUFFIX(ARGS(IN, A))                                                   \
    {                                                                                                 \
        __local A s[BS];                                                                              \
        LOAD_ONE(IN, A);                                                                              \
        for (uint d = 1; d < BS; d *= 2) {                                                            \
            uint index = 2 * d * tid;                                                                 \
            if (index < BS)                                                                           \
                s[index] += s[index + d];                                                             \
            barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        }                                                                                             \
        STORE;                                                                                        \
    }                                                                                                 \
    /* 3: sequential addressing */                                                                    \
    __kernel void sequential_##SUFFIX(ARGS(IN, A))                                                    \
    {                                                                                                 \
        __local A s[BS];                                                                              \
        LOAD_ONE(IN, A);                                                                              \
        SEQUENTIAL_TREE(0)                                                                            \
        STORE;                                                                                        \
    }                                                                                                 \
    /* 4: first add during load */                                                                    \
    __kernel void first_add_##SUFFIX(ARGS(IN, A))                                                     \
    {                                                                                                 \
        __local A s[BS];                                                                              \
        LOAD_TWO(IN, A);                                                                              \
        SEQUENTIAL_TREE(0)                                                                            \
        STORE;                                                                                        \
    }                                                                                                 \
    /* 5: the last six steps unrolled */                                                              \
    __kernel void unroll_last_warp_##SUFFIX(ARGS(IN, A))                                              \
    {                                                                                                 \
        __local A s[BS];                                                                              \
        LOAD_TWO(IN, A);                                                                              \
        SEQUENTIAL_TREE(32)                                                                           \
        LAST_STEPS(A);                                                                                   \
        STORE;                                                                                        \
    }                                                                                                 \
    /* 6: every step unrolled (BS is a compile-time constant) */                                      \
    __kernel void unroll_all_##SUFFIX(ARGS(IN, A))                                                    \
    {                                                                                                 \
        __local A s[BS];                                                                              \
        LOAD_TWO(IN, A);                                                                              \
        STEP(128); STEP(64);                                                                          \
        LAST_STEPS(A);                                                                                   \
        STORE;                                                                                        \
    }                                                                                                 \
    /* 7: many elements per work-item: the groups stride over the input */                            \
    __kernel void multiple_per_thread_##SUFFIX(ARGS(IN, A))                                           \
    {                                                                                                 \
        __local A s[BS];                                                                              \
        const uint tid = get_local_id(0);                                                             \
        const ulong step = 2 * (ulong)BS * get_num_groups(0);                                         \
        A x = 0;                                                                                      \
        for (ulong i = get_group_id(0) * (ulong)(2 * BS) + tid; i < n; i += step) {                   \
            x += (A)in[in_off + i];                                                                   \
            if (i + BS < n)                                                                           \
                x += (A)in[in_off + i + BS];                                                          \
        }                                                                                             \
        s[tid] = x;                                                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
        SEQUENTIAL_TREE(32)                                                                           \
        LAST_STEPS(A);                                                                                   \
        STORE;                                                                                        \
    }

DEFINE_REDUCE(f32, float, float)
DEFINE_REDUCE(u32, uint, uint)
#ifdef PB_FP64
DEFINE_REDUCE(f32f64, float, double)
DEFINE_REDUCE(f64, double, double)
#endif

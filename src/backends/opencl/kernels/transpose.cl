// Transpose kernels: out = in^T, in rows x cols, row-major, any shape. Built
// once per precision with -DT=float or -DT=double. Work-groups of 32 x 8
// cover a 32 x 32 tile, four elements per work-item (the CUDA twins').
// NDRange dimension 0 runs along the input's columns.

#ifdef PB_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef T
#error "build with -DT=float or -DT=double"
#endif

#define TILE 32
#define ROWS 8

// The bound: the same tiles copied, out = in (out rows x cols).
__kernel void transpose_copy(ulong rows, ulong cols, __global const T *restrict in, ulong ld_in,
                             __global T *restrict out, ulong ld_out)
{
    const ulong x = get_group_id(0) * TILE + get_local_id(0), y = get_group_id(1) * TILE + get_local_id(1);
    if (x >= cols)
        return;
    for (int j = 0; j < TILE; j += ROWS)
        if (y + j < rows)
            out[(y + j) * ld_out + x] = in[(y + j) * ld_in + x];
}

// Coalesced reads, strided writes.
__kernel void transpose_naive(ulong rows, ulong cols, __global const T *restrict in, ulong ld_in,
                              __global T *restrict out, ulong ld_out)
{
    const ulong x = get_group_id(0) * TILE + get_local_id(0), y = get_group_id(1) * TILE + get_local_id(1);
    if (x >= cols)
        return;
    for (int j = 0; j < TILE; j += ROWS)
        if (y + j < rows)
            out[x * ld_out + y + j] = in[(y + j) * ld_in + x];
}

// Through a local-memory tile of TILE x (TILE + PAD): both sides coalesced;
// PAD = 1 puts a tile column in 32 different banks.
#define DEFINE_TILED(NAME, PAD)                                                                       \
    __kernel void NAME(ulong rows, ulong cols, __global const T *restrict in, ulong ld_in,            \
                       __global T *restrict out, ulong ld_out)                                         \
    {                                                                                                 \
        __local T tile[TILE][TILE + PAD];                                                             \
        const int tx = get_local_id(0), ty = get_local_id(1);                                         \
        const ulong bx = get_group_id(0) * TILE, by = get_group_id(1) * TILE;                         \
        for (int j = 0; j < TILE; j += ROWS)                                                          \
            if (bx + tx < cols && by + ty + j < rows)                                                 \
                tile[ty + j][tx] = in[(by + ty + j) * ld_in + bx + tx];                               \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
        for (int j = 0; j < TILE; j += ROWS)                                                          \
            if (by + tx < rows && bx + ty + j < cols)                                                 \
                out[(bx + ty + j) * ld_out + by + tx] = tile[tx][ty + j];                             \
    }
DEFINE_TILED(transpose_coalesced, 0)
DEFINE_TILED(transpose_padded, 1)

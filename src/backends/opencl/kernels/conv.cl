// Separable convolution, the study's tiled kernels: a row pass into tmp and
// a column pass, each work-group loading its tile with the R-wide halo into
// local memory (coalesced, halo loaded with a stride), taps in constant
// memory. Built with -DT=float or -DT=double (-DPB_FP64 with it). Geometry
// as struct pb_conv_args: in has in_rows rows, output row y reads tmp row
// y + in_top + k - R; rows and columns outside are zero or clamped.
//
// Two sets of kernels differ only in where the taps come from:
//  * conv_*_tiled_arg (R <= CONV_ARG_RADIUS): the taps are a kernel argument
//    passed by value. NVIDIA keeps kernel arguments in a constant bank, read
//    at one load per warp, as nvcc does with the CUDA twin's __constant__
//    taps. A __constant pointer (or a program-scope __constant array) is read
//    there with one global load per work-item and tap, which made the
//    column pass 1.4x slower at R = 64 on an H100.
//  * conv_*_tiled: the taps through a __constant pointer, any R.

#ifdef PB_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef T
#error "build with -DT=float or -DT=double"
#endif

// The tiles of the CUDA twin (src/backends/cuda/conv.cu); conv.c uses the same.
#define ROWS_X 64
#define ROWS_Y 4
#define COLS_X 32
#define COLS_Y 16

T line_at(__global const T *line, long i, long n, long stride, int clamp)
{
    if (i < 0 || i >= n) {
        if (!clamp)
            return (T)0;
        i = i < 0 ? 0 : n - 1;
    }
    return line[i * stride];
}

#define CONV_ARG_RADIUS 64 // conv.c uses the same
typedef struct {
    T tap[2 * CONV_ARG_RADIUS + 1];
} conv_taps;

// Work-group (ROWS_X, ROWS_Y); s holds ROWS_Y rows of ROWS_X + 2R.
#define CONV_ROWS(NAME, TAPS_PARAM, TAP)                                                                \
    __kernel void NAME(ulong width, ulong in_rows, ulong radius, int clamp, __global const T *restrict in, \
                       __global T *restrict tmp, TAPS_PARAM, __local T *s)                                 \
    {                                                                                                   \
        const long w = (long)width, r = (long)radius, len = ROWS_X + 2 * r;                             \
        const int tx = get_local_id(0), ty = get_local_id(1);                                           \
        const long x0 = (long)get_group_id(0) * ROWS_X, y = (long)get_global_id(1);                     \
        __local T *srow = s + ty * len;                                                                 \
        if (y < (long)in_rows)                                                                          \
            for (long i = tx; i < len; i += ROWS_X)                                                     \
                srow[i] = line_at(in + y * w, x0 - r + i, w, 1, clamp);                                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
        const long x = x0 + tx;                                                                         \
        if (y >= (long)in_rows || x >= w)                                                               \
            return;                                                                                     \
        T acc = 0;                                                                                      \
        for (int k = 0; k <= 2 * (int)r; k++)                                                           \
            acc += TAP(k) * srow[tx + k];                                                               \
        tmp[y * w + x] = acc;                                                                           \
    }

// Work-group (COLS_X, COLS_Y); s holds COLS_Y + 2R rows of COLS_X.
#define CONV_COLS(NAME, TAPS_PARAM, TAP)                                                                \
    __kernel void NAME(ulong width, ulong height, ulong in_rows, ulong in_top, ulong radius, int clamp,  \
                       __global const T *restrict tmp, __global T *restrict out, TAPS_PARAM, __local T *s) \
    {                                                                                                   \
        const long w = (long)width, r = (long)radius, rows = COLS_Y + 2 * r;                            \
        const int tx = get_local_id(0), ty = get_local_id(1);                                           \
        const long x = (long)get_global_id(0), y0 = (long)get_group_id(1) * COLS_Y;                     \
        if (x < w)                                                                                      \
            for (long i = ty; i < rows; i += COLS_Y)                                                    \
                s[i * COLS_X + tx] = line_at(tmp + x, y0 + (long)in_top - r + i, (long)in_rows, w, clamp); \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
        const long y = y0 + ty;                                                                         \
        if (y >= (long)height || x >= w)                                                                \
            return;                                                                                     \
        T acc = 0;                                                                                      \
        for (int k = 0; k <= 2 * (int)r; k++)                                                           \
            acc += TAP(k) * s[(ty + k) * COLS_X + tx];                                                  \
        out[y * w + x] = acc;                                                                           \
    }

#define TAP_POINTER(k) f[k]
#define TAP_ARG(k) taps.tap[k]
CONV_ROWS(conv_rows_tiled, __constant T *f, TAP_POINTER)
CONV_COLS(conv_cols_tiled, __constant T *f, TAP_POINTER)
CONV_ROWS(conv_rows_tiled_arg, const conv_taps taps, TAP_ARG)
CONV_COLS(conv_cols_tiled_arg, const conv_taps taps, TAP_ARG)

/* Separable convolution on OpenCL, host side of kernels/conv.cl: the study's
 * tiled kernels (local-memory tiles with the halo, taps in constant memory).
 * Up to CONV_ARG_RADIUS the taps go by value as a kernel argument (see
 * conv.cl for why), from a host copy read back once per filter buffer
 * content (its stamp): by the first call, which in a benchmark is the untimed
 * warm-up. */
#include <stdio.h>
#include <string.h>

#include "backends/opencl/cl_impl.h"

#define CONV_CL "conv.cl"
/* Must match conv.cl. */
#define ROWS_X 64
#define ROWS_Y 4
#define COLS_X 32
#define COLS_Y 16
#define CONV_ARG_RADIUS 64
#define CONV_ARG_BYTES(prec) ((2 * CONV_ARG_RADIUS + 1) * pb_precision_size(prec))

static size_t rows_local_bytes(const struct pb_conv_args *a)
{
    return ROWS_Y * (ROWS_X + 2 * a->radius) * pb_precision_size(a->prec);
}

static size_t cols_local_bytes(const struct pb_conv_args *a)
{
    return (COLS_Y + 2 * a->radius) * COLS_X * pb_precision_size(a->prec);
}

bool pb__cl_conv_tiled_supports(const pb_device *dev, const void *args, const char **why)
{
    const struct pb_conv_args *a = args;
    struct pb_cl_device *impl = pb__cl(dev);
    if ((a->in && a->in->kind != PB_MEM_DEVICE) || (a->out && a->out->kind != PB_MEM_DEVICE) ||
        (a->tmp && a->tmp->kind != PB_MEM_DEVICE) || (a->filter && a->filter->kind != PB_MEM_DEVICE)) {
        *why = "OpenCL kernels take device buffers (PB_MEM_DEVICE) only";
        return false;
    }
    if (a->prec == PB_DOUBLE && !impl->fp64) {
        *why = "the device has no double precision (cl_khr_fp64)";
        return false;
    }
    if (impl->max_group < ROWS_X * ROWS_Y || impl->max_group < COLS_X * COLS_Y || impl->max_items[0] < ROWS_X ||
        impl->max_items[1] < COLS_Y) {
        *why = "the device's work-groups are smaller than the tiles (64x4 and 32x16)";
        return false;
    }
    size_t local = rows_local_bytes(a) > cols_local_bytes(a) ? rows_local_bytes(a) : cols_local_bytes(a);
    if (local > impl->local_mem) {
        snprintf(impl->why, sizeof impl->why, "a tile with its halo needs %zu bytes of local memory, the device has %llu",
                 local, (unsigned long long)impl->local_mem);
        *why = impl->why;
        return false;
    }
    cl_ulong constant = 0;
    size_t taps = (2 * a->radius + 1) * pb_precision_size(a->prec);
    if (clGetDeviceInfo(impl->device, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, sizeof constant, &constant, NULL) !=
            CL_SUCCESS ||
        taps > constant) {
        *why = "the filter does not fit the device's constant memory";
        return false;
    }
    return true;
}

struct cl_arg {
    size_t size;
    const void *value; /* NULL: local memory of that size */
};

static pb_status set_args(cl_kernel k, const struct cl_arg *list, cl_uint n)
{
    for (cl_uint i = 0; i < n; i++)
        PB_CL_CHECK(clSetKernelArg(k, i, list[i].size, list[i].value));
    return PB_OK;
}

/* Whether the taps go by value: the radius is small enough and the device
 * takes arguments that large (OpenCL promises only 1024 bytes in all). */
static bool taps_by_value(const struct pb_cl_device *impl, const struct pb_conv_args *a)
{
    size_t max_param = 0;
    if (a->radius > CONV_ARG_RADIUS ||
        clGetDeviceInfo(impl->device, CL_DEVICE_MAX_PARAMETER_SIZE, sizeof max_param, &max_param, NULL) !=
            CL_SUCCESS)
        return false;
    return CONV_ARG_BYTES(a->prec) + 6 * sizeof(cl_ulong) + 2 * sizeof(cl_mem) + sizeof(cl_int) <= max_param;
}

/* The host copy of the taps (CONV_ARG_BYTES, zero past 2R+1), read back when
 * the filter buffer changed since the last call. */
static pb_status taps_on_host(struct pb_cl_device *impl, const struct pb_conv_args *a, const void **taps)
{
    size_t bytes = (2 * a->radius + 1) * pb_precision_size(a->prec);
    if (impl->conv_taps_stamp != a->filter->stamp) {
        memset(impl->conv_taps, 0, sizeof impl->conv_taps);
        impl->conv_taps_stamp = 0;
        PB_CL_CHECK(clFinish(impl->queue)); /* the filter may still be being written */
        PB_CL_CHECK(clEnqueueReadBuffer(impl->queue, pb__cl_mem(a->filter), CL_TRUE, 0, bytes, impl->conv_taps, 0,
                                        NULL, NULL));
        impl->conv_taps_stamp = a->filter->stamp;
    }
    *taps = impl->conv_taps;
    return PB_OK;
}

pb_status pb__cl_conv_tiled(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_conv_args *a = args;
    if (!a->width || !a->height)
        return PB_OK;
    struct pb_cl_device *impl = pb__cl(dev);
    const bool by_value = taps_by_value(impl, a);
    const struct pb_cl_kernel *kr, *kc;
    pb_status st = pb__cl_kernel(dev, CONV_CL, a->prec, by_value ? "conv_rows_tiled_arg" : "conv_rows_tiled", &kr);
    if (st == PB_OK)
        st = pb__cl_kernel(dev, CONV_CL, a->prec, by_value ? "conv_cols_tiled_arg" : "conv_cols_tiled", &kc);
    cl_mem f = pb__cl_mem(a->filter);
    struct cl_arg taps = {sizeof f, &f};
    if (st == PB_OK && by_value) {
        taps.size = CONV_ARG_BYTES(a->prec);
        st = taps_on_host(impl, a, &taps.value);
    }
    if (st != PB_OK)
        return st;
    cl_ulong width = a->width, height = a->height, in_rows = a->in_rows, in_top = a->in_top, radius = a->radius;
    cl_int clamp = a->border == PB_CONV_CLAMP;
    cl_mem in = pb__cl_mem(a->in), tmp = pb__cl_mem(a->tmp), out = pb__cl_mem(a->out);
    const struct cl_arg rows[] = {{sizeof width, &width}, {sizeof in_rows, &in_rows}, {sizeof radius, &radius},
                                  {sizeof clamp, &clamp}, {sizeof in, &in},           {sizeof tmp, &tmp},
                                  taps,                   {rows_local_bytes(a), NULL}},
                        cols[] = {{sizeof width, &width},   {sizeof height, &height}, {sizeof in_rows, &in_rows},
                                  {sizeof in_top, &in_top}, {sizeof radius, &radius}, {sizeof clamp, &clamp},
                                  {sizeof tmp, &tmp},       {sizeof out, &out},       taps,
                                  {cols_local_bytes(a), NULL}};
    size_t local_r[2] = {ROWS_X, ROWS_Y}, local_c[2] = {COLS_X, COLS_Y};
    size_t global_r[2] = {(a->width + ROWS_X - 1) / ROWS_X * ROWS_X, (a->in_rows + ROWS_Y - 1) / ROWS_Y * ROWS_Y};
    size_t global_c[2] = {(a->width + COLS_X - 1) / COLS_X * COLS_X, (a->height + COLS_Y - 1) / COLS_Y * COLS_Y};
    if ((st = set_args(kr->kernel, rows, sizeof rows / sizeof rows[0])) != PB_OK ||
        (st = pb__cl_launch(dev, s, kr->kernel, 2, global_r, local_r)) != PB_OK ||
        (st = set_args(kc->kernel, cols, sizeof cols / sizeof cols[0])) != PB_OK)
        return st;
    return pb__cl_launch(dev, s, kc->kernel, 2, global_c, local_c);
}

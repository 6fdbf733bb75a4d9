/* SpMV on OpenCL, host side of kernels/spmv.cl: CSR one work-item per row,
 * CSR with a group of work-items per row, ELLPACK transposed. */
#include <stdio.h>

#include "backends/opencl/cl_impl.h"
#include "sparse/sparse.h"

#define SPMV_CL "spmv.cl"
#define ROWS_GROUP 128 /* work-group of the one-row-per-work-item kernels, at most */

static size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* The largest power of two up to `want` the device and kernel allow. */
static size_t group_size(const pb_device *dev, const struct pb_cl_kernel *k, size_t want)
{
    const struct pb_cl_device *impl = pb__cl(dev);
    size_t cap = k->max_group < impl->max_group ? k->max_group : impl->max_group, g = want;
    if (impl->max_items[0] < cap)
        cap = impl->max_items[0];
    while (g > cap && g > 1)
        g /= 2;
    return g;
}


bool pb__cl_spmv_supports(const pb_device *dev, const void *args, const char **why)
{
    const struct pb_spmv_args *a = args;
    if (a->prec == PB_DOUBLE && !pb__cl(dev)->fp64) {
        *why = "the device has no double precision (cl_khr_fp64)";
        return false;
    }
    return true;
}

static pb_status launch_rows(pb_device *dev, pb_stream *s, const struct pb_spmv_args *a, const char *name,
                             bool ell)
{
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, SPMV_CL, a->prec, name, &k);
    if (st != PB_OK)
        return st;
    cl_mem ptr = pb__cl_mem(a->ptr), idx = pb__cl_mem(a->idx), val = pb__cl_mem(a->val), x = pb__cl_mem(a->x),
           y = pb__cl_mem(a->y);
    cl_int rows = a->rows, width = a->width;
    cl_uint i = 0;
    if ((st = pb__cl_set_arg(k->kernel, i++, sizeof rows, &rows)) != PB_OK ||
        (ell && (st = pb__cl_set_arg(k->kernel, i++, sizeof width, &width)) != PB_OK) ||
        (!ell && (st = pb__cl_set_arg(k->kernel, i++, sizeof ptr, &ptr)) != PB_OK) ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof idx, &idx)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof val, &val)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof x, &x)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof y, &y)) != PB_OK)
        return st;
    size_t local = group_size(dev, k, ROWS_GROUP), global = round_up((size_t)a->rows, local);
    return pb__cl_launch(dev, s, k->kernel, 1, &global, &local);
}

pb_status pb__cl_spmv_scalar(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    return a->rows ? launch_rows(dev, s, a, "spmv_csr_scalar", false) : PB_OK;
}

pb_status pb__cl_spmv_ellt(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    return a->rows ? launch_rows(dev, s, a, "spmv_ellt", true) : PB_OK;
}

pb_status pb__cl_spmv_vector(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    if (!a->rows)
        return PB_OK;
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, SPMV_CL, a->prec, "spmv_csr_vector", &k);
    if (st != PB_OK)
        return st;
    size_t local = group_size(dev, k, ROWS_GROUP);
    cl_int rows = a->rows, group = pb__spmv_row_group(a);
    if ((size_t)group > local)
        group = (cl_int)local; /* a work-group smaller than the row group: still correct, fewer lanes */
    cl_mem ptr = pb__cl_mem(a->ptr), idx = pb__cl_mem(a->idx), val = pb__cl_mem(a->val), x = pb__cl_mem(a->x),
           y = pb__cl_mem(a->y);
    if ((st = pb__cl_set_arg(k->kernel, 0, sizeof rows, &rows)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 1, sizeof group, &group)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 2, sizeof ptr, &ptr)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 3, sizeof idx, &idx)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 4, sizeof val, &val)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 5, sizeof x, &x)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 6, sizeof y, &y)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 7, local * pb_precision_size(a->prec), NULL)) != PB_OK)
        return st;
    size_t global = round_up((size_t)a->rows * (size_t)group, local);
    return pb__cl_launch(dev, s, k->kernel, 1, &global, &local);
}

/* auto: on a GPU a group of work-items per row (csr-vector, the group from
 * the mean row length), on a CPU one work-item per row (csr-scalar: the
 * compiler vectorises across rows). */
static bool on_gpu(const pb_device *dev)
{
    cl_device_type type = 0;
    return clGetDeviceInfo(pb__cl(dev)->device, CL_DEVICE_TYPE, sizeof type, &type, NULL) == CL_SUCCESS &&
           (type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR));
}

pb_status pb__cl_spmv_auto(pb_device *dev, const void *args, pb_stream *s)
{
    return on_gpu(dev) ? pb__cl_spmv_vector(dev, args, s) : pb__cl_spmv_scalar(dev, args, s);
}

pb_status pb__cl_spmv_auto_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    if (on_gpu(dev))
        snprintf(note, len, "csr-vector, %d work-items per row: a GPU", pb__spmv_row_group(args));
    else
        snprintf(note, len, "csr-scalar: a CPU");
    return PB_OK;
}

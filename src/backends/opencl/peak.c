/* Peak-rate kernels on OpenCL, host side (kernels/peak.cl). */
#include <stdio.h>

#include "backends/opencl/cl_impl.h"
#include "parbench/pb_kernels.h"

#define PEAK_CL "peak.cl"
#define PEAK_GROUP 256 /* must match peak.cl */

bool pb__cl_peak_supports(const pb_device *dev, const void *args, const char **why)
{
    const struct pb_peak_args *p = args;
    struct pb_cl_device *impl = pb__cl(dev);
    if ((p->in && p->in->kind != PB_MEM_DEVICE) || (p->out && p->out->kind != PB_MEM_DEVICE)) {
        *why = "OpenCL kernels take device buffers (PB_MEM_DEVICE) only";
        return false;
    }
    if (p->prec == PB_DOUBLE && !impl->fp64) {
        *why = "the device has no double precision (cl_khr_fp64)";
        return false;
    }
    if (impl->max_group < PEAK_GROUP || impl->max_items[0] < PEAK_GROUP) {
        *why = "the device's work-groups are smaller than 256 work-items";
        return false;
    }
    return true;
}

/* Arguments in order, each checked. */
static pb_status set_args(cl_kernel k, size_t n, const size_t *sizes, const void *const *values)
{
    for (size_t i = 0; i < n; i++) {
        cl_int e = clSetKernelArg(k, (cl_uint)i, sizes[i], values[i]);
        if (e != CL_SUCCESS)
            return pb__fail(PB_ERR_DEVICE, "clSetKernelArg(%zu) failed at %s:%d: %s (%d)", i, __FILE__, __LINE__,
                            pb__cl_error_name(e), (int)e);
    }
    return PB_OK;
}

pb_status pb__cl_peak_fma(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_peak_args *p = args;
    if (!p->n)
        return PB_OK;
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, PEAK_CL, p->prec, "peak_fma", &k);
    if (st != PB_OK)
        return st;
    cl_mem out = pb__cl_mem(p->out);
    cl_ulong n = p->n;
    cl_uint iters = p->iters;
    cl_float af = (cl_float)p->a, bf = (cl_float)p->b;
    cl_double ad = p->a, bd = p->b;
    bool dbl = p->prec == PB_DOUBLE;
    size_t scalar = dbl ? sizeof ad : sizeof af;
    const size_t sizes[] = {sizeof out, sizeof n, sizeof iters, scalar, scalar};
    const void *values[] = {&out, &n, &iters, dbl ? (const void *)&ad : &af, dbl ? (const void *)&bd : &bf};
    if ((st = set_args(k->kernel, 5, sizes, values)) != PB_OK)
        return st;
    size_t local = PEAK_GROUP, global = (p->n + PEAK_GROUP - 1) / PEAK_GROUP * PEAK_GROUP;
    return pb__cl_launch(dev, s, k->kernel, 1, &global, &local);
}

pb_status pb__cl_peak_read(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_peak_args *p = args;
    if (!p->groups)
        return PB_OK;
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, PEAK_CL, p->prec, "peak_read", &k);
    if (st != PB_OK)
        return st;
    cl_mem in = pb__cl_mem(p->in), out = pb__cl_mem(p->out);
    cl_ulong n = p->n;
    const size_t sizes[] = {sizeof in, sizeof n, sizeof out};
    const void *values[] = {&in, &n, &out};
    if ((st = set_args(k->kernel, 3, sizes, values)) != PB_OK)
        return st;
    size_t local = PEAK_GROUP, global = p->groups * PEAK_GROUP;
    return pb__cl_launch(dev, s, k->kernel, 1, &global, &local);
}

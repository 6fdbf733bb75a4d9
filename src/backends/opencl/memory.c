/* OpenCL host side of the memory families: transpose (kernels/transpose.cl:
 * copy, naive, coalesced, padded) and reduce (kernels/reduce.cl: the seven
 * steps), twins of the CUDA kernels. Reduce passes ping-pong between the two
 * halves of the workspace until one partial sum is left. */
#include <stdio.h>

#include "backends/opencl/cl_impl.h"
#include "core/kernel_data.h"

#define TRANSPOSE_CL "transpose.cl"
#define REDUCE_CL "reduce.cl"

struct cl_arg {
    size_t size;
    const void *value;
};

static pb_status set_args(cl_kernel k, const struct cl_arg *args, cl_uint n)
{
    for (cl_uint i = 0; i < n; i++) {
        cl_int e = clSetKernelArg(k, i, args[i].size, args[i].value);
        if (e != CL_SUCCESS)
            return pb__fail(PB_ERR_DEVICE, "clSetKernelArg(%u) failed at %s:%d: %s (%d)", (unsigned)i, __FILE__,
                            __LINE__, pb__cl_error_name(e), (int)e);
    }
    return PB_OK;
}

static bool device_buffers(const pb_buf *a, const pb_buf *b, const char **why)
{
    if ((a && a->kind != PB_MEM_DEVICE) || (b && b->kind != PB_MEM_DEVICE)) {
        *why = "OpenCL kernels take device buffers (PB_MEM_DEVICE) only";
        return false;
    }
    return true;
}

/* ---- transpose ---------------------------------------------------------------------- */

#define TILE 32
#define ROWS 8

static bool transpose_supports(const pb_device *dev, const void *args, const char **why)
{
    const struct pb_transpose_args *t = args;
    struct pb_cl_device *impl = pb__cl(dev);
    if (!device_buffers(t->in, t->out, why))
        return false;
    if (t->prec == PB_DOUBLE && !impl->fp64) {
        *why = "the device has no double precision (cl_khr_fp64)";
        return false;
    }
    if (TILE * ROWS > impl->max_group || TILE > impl->max_items[0] || ROWS > impl->max_items[1]) {
        *why = "the device's work-groups are smaller than 32 x 8";
        return false;
    }
    return true;
}

static pb_status transpose_run(const char *kernel, pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_transpose_args *t = args;
    if (!t->rows || !t->cols)
        return PB_OK;
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, TRANSPOSE_CL, t->prec, kernel, &k);
    if (st != PB_OK)
        return st;
    cl_ulong rows = t->rows, cols = t->cols, ld_in = t->ld_in, ld_out = t->ld_out;
    cl_mem in = pb__cl_mem(t->in), out = pb__cl_mem(t->out);
    const struct cl_arg a[] = {{sizeof rows, &rows}, {sizeof cols, &cols}, {sizeof in, &in},
                               {sizeof ld_in, &ld_in}, {sizeof out, &out}, {sizeof ld_out, &ld_out}};
    if ((st = set_args(k->kernel, a, 6)) != PB_OK)
        return st;
    size_t local[2] = {TILE, ROWS};
    size_t global[2] = {(t->cols + TILE - 1) / TILE * TILE, (t->rows + TILE - 1) / TILE * ROWS};
    return pb__cl_launch(dev, s, k->kernel, 2, global, local);
}

#define PB__CL_TRANSPOSE_DEFINE(NAME)                                                                 \
    pb_status pb__cl_transpose_##NAME(pb_device *dev, const void *args, pb_stream *s)                \
    {                                                                                                \
        return transpose_run("transpose_" #NAME, dev, args, s);                                      \
    }
PB__CL_TRANSPOSE_DEFINE(copy)
PB__CL_TRANSPOSE_DEFINE(naive)
PB__CL_TRANSPOSE_DEFINE(coalesced)
PB__CL_TRANSPOSE_DEFINE(padded)

bool pb__cl_transpose_supports(const pb_device *dev, const void *args, const char **why)
{
    return transpose_supports(dev, args, why);
}

/* ---- reduce ------------------------------------------------------------------------- */

#define BS 256            /* must match reduce.cl */
#define GROUPS_PER_UNIT 4 /* multiple-per-thread's groups per compute unit */

/* A kernel of reduce.cl and how it covers its input: per_block elements per
 * work-group, or 0 for multiple-per-thread's fixed set of groups. The
 * kernel's names by type suffix (see reduce.cl). */
enum { U32, F32, F32F64, F64 };
struct reduce_kind {
    const char *kernels[4];
    size_t per_block;
};
#define KIND(NAME, PER_BLOCK)                                                                        \
    static const struct reduce_kind k_##NAME = {                                                     \
        {#NAME "_u32", #NAME "_f32", #NAME "_f32f64", #NAME "_f64"}, PER_BLOCK}
KIND(interleaved_divergent, BS);
KIND(interleaved, BS);
KIND(sequential, BS);
KIND(first_add, 2 * BS);
KIND(unroll_last_warp, 2 * BS);
KIND(unroll_all, 2 * BS);
KIND(multiple_per_thread, 0);
#undef KIND

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

static size_t first_groups(const pb_device *dev, const struct reduce_kind *kind, size_t n)
{
    if (kind->per_block)
        return ceil_div(n, kind->per_block);
    cl_uint units = 1;
    if (clGetDeviceInfo(pb__cl(dev)->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL) != CL_SUCCESS)
        units = 1;
    size_t cap = (size_t)units * GROUPS_PER_UNIT, want = ceil_div(n, 2 * BS);
    return want < cap ? want : cap;
}

static size_t next_groups(const struct reduce_kind *kind, size_t count)
{
    return kind->per_block ? ceil_div(count, kind->per_block) : 1;
}

static size_t acc_size(enum pb_reduce_type t) { return t == PB_REDUCE_FLOAT_DOUBLE ? sizeof(double) : 4; }

/* The two ping-pong halves: partial sums of the first and second pass. */
static size_t reduce_workspace(const pb_device *dev, const struct reduce_kind *kind, const void *args)
{
    const struct pb_reduce_args *r = args;
    size_t g1 = first_groups(dev, kind, r->n);
    return g1 <= 1 ? 0 : (g1 + next_groups(kind, g1)) * acc_size(r->type);
}

static bool reduce_supports(const pb_device *dev, const void *args, const char **why)
{
    const struct pb_reduce_args *r = args;
    struct pb_cl_device *impl = pb__cl(dev);
    if (!device_buffers(r->in, r->out, why) || !device_buffers(r->work, NULL, why))
        return false;
    if (r->type == PB_REDUCE_FLOAT_DOUBLE && !impl->fp64) {
        *why = "the device has no double precision (cl_khr_fp64)";
        return false;
    }
    if (BS > impl->max_group || BS > impl->max_items[0]) {
        *why = "the device's work-groups are smaller than 256";
        return false;
    }
    return true;
}

/* One pass: groups x BS work-items over count elements of in from in_off,
 * group sums to out from out_off. */
static pb_status pass(pb_device *dev, pb_stream *s, const struct pb_cl_kernel *k, cl_mem in, cl_ulong in_off,
                      cl_ulong count, cl_mem out, cl_ulong out_off, size_t groups)
{
    const struct cl_arg a[] = {{sizeof in, &in},   {sizeof in_off, &in_off},   {sizeof count, &count},
                               {sizeof out, &out}, {sizeof out_off, &out_off}};
    pb_status st = set_args(k->kernel, a, 5);
    size_t global = groups * BS, local = BS;
    return st != PB_OK ? st : pb__cl_launch(dev, s, k->kernel, 1, &global, &local);
}

static pb_status reduce_run(const struct reduce_kind *kind, pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_reduce_args *r = args;
    if (r->n == 0) {
        static const double zero = 0;
        return pb_buf_write(r->out, 0, &zero, acc_size(r->type));
    }
    size_t need = reduce_workspace(dev, kind, args);
    if (need && (!r->work || r->work_bytes < need || r->work->bytes < need))
        return pb__fail(PB_ERR_INVALID, "reduce: needs %zu bytes of workspace, has %zu", need,
                        r->work ? r->work_bytes : 0);
    /* Types: the first pass reads the elements, later ones the partial sums. */
    int first = r->type == PB_REDUCE_INT ? U32 : r->type == PB_REDUCE_FLOAT ? F32 : F32F64;
    int later = r->type == PB_REDUCE_FLOAT_DOUBLE ? F64 : first;
    enum pb_precision prog = r->type == PB_REDUCE_FLOAT_DOUBLE ? PB_DOUBLE : PB_FLOAT;
    const struct pb_cl_kernel *k_first, *k_later;
    pb_status st = pb__cl_kernel(dev, REDUCE_CL, prog, kind->kernels[first], &k_first);
    if (st == PB_OK)
        st = pb__cl_kernel(dev, REDUCE_CL, prog, kind->kernels[later], &k_later);
    if (st != PB_OK)
        return st;
    size_t groups = first_groups(dev, kind, r->n), count = r->n;
    cl_ulong half[2] = {0, groups}; /* element offsets of the two halves */
    cl_mem work = pb__cl_mem(r->work), in = pb__cl_mem(r->in);
    for (int level = 0;; level++) {
        bool last = groups == 1;
        cl_mem dst = last ? pb__cl_mem(r->out) : work;
        cl_ulong dst_off = last ? 0 : half[level % 2];
        st = level == 0 ? pass(dev, s, k_first, in, 0, count, dst, dst_off, groups)
                        : pass(dev, s, k_later, work, half[(level - 1) % 2], count, dst, dst_off, groups);
        if (st != PB_OK || last)
            return st;
        count = groups;
        groups = next_groups(kind, count);
    }
}

#define PB__CL_REDUCE_DEFINE(NAME)                                                                    \
    pb_status pb__cl_reduce_##NAME(pb_device *dev, const void *args, pb_stream *s)                   \
    {                                                                                                \
        return reduce_run(&k_##NAME, dev, args, s);                                                  \
    }                                                                                                \
    static size_t NAME##_workspace(const pb_device *dev, const void *args)                           \
    {                                                                                                \
        return reduce_workspace(dev, &k_##NAME, args);                                               \
    }                                                                                                \
    const struct pb__workspace pb__cl_reduce_##NAME##_work = {NAME##_workspace};
PB__CL_REDUCE_DEFINE(interleaved_divergent)
PB__CL_REDUCE_DEFINE(interleaved)
PB__CL_REDUCE_DEFINE(sequential)
PB__CL_REDUCE_DEFINE(first_add)
PB__CL_REDUCE_DEFINE(unroll_last_warp)
PB__CL_REDUCE_DEFINE(unroll_all)
PB__CL_REDUCE_DEFINE(multiple_per_thread)

bool pb__cl_reduce_supports(const pb_device *dev, const void *args, const char **why)
{
    return reduce_supports(dev, args, why);
}

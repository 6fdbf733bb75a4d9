/* The OpenCL backend: every device of every platform the ICD loader finds,
 * memory of every kind, copies, streams (command queues), profiling-event
 * timers and a per-device cache of built programs. Kernels are the .cl files
 * of kernels/ (embedded at build time), their host side gemm.c and friends. With
 * no ICD, no platform or no device the backend reports itself unavailable
 * (its rows are SKIP with the reason) and nothing else is touched.
 *
 * Ordering. Each device has a default in-order queue (the NULL stream) and
 * one in-order queue per pb_stream. They follow CUDA's legacy default-stream
 * rule: a command on the default queue starts after everything queued
 * earlier on any stream, and a command on a stream starts after everything
 * queued earlier on the default queue. Streams are independent of each
 * other. This is done with markers, only where the other side has work not
 * yet waited for, so a device without streams pays nothing. Commands on host
 * memory only (memcpy/memset on pinned or pageable buffers) first wait for
 * the whole device. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/opencl/cl_impl.h"
#include "backends/opencl/cl_sources.h"
#include "core/cpuinfo.h"
#include "core/kernel_data.h"

/* ---- errors ---------------------------------------------------------------- */

const char *pb__cl_error_name(cl_int e)
{
    switch (e) {
#define PB__CL_ERR(name) \
    case name:           \
        return #name;
        PB__CL_ERR(CL_SUCCESS)
        PB__CL_ERR(CL_DEVICE_NOT_FOUND)
        PB__CL_ERR(CL_DEVICE_NOT_AVAILABLE)
        PB__CL_ERR(CL_COMPILER_NOT_AVAILABLE)
        PB__CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        PB__CL_ERR(CL_OUT_OF_RESOURCES)
        PB__CL_ERR(CL_OUT_OF_HOST_MEMORY)
        PB__CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
        PB__CL_ERR(CL_MEM_COPY_OVERLAP)
        PB__CL_ERR(CL_IMAGE_FORMAT_MISMATCH)
        PB__CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        PB__CL_ERR(CL_BUILD_PROGRAM_FAILURE)
        PB__CL_ERR(CL_MAP_FAILURE)
        PB__CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        PB__CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        PB__CL_ERR(CL_COMPILE_PROGRAM_FAILURE)
        PB__CL_ERR(CL_LINKER_NOT_AVAILABLE)
        PB__CL_ERR(CL_LINK_PROGRAM_FAILURE)
        PB__CL_ERR(CL_DEVICE_PARTITION_FAILED)
        PB__CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        PB__CL_ERR(CL_INVALID_VALUE)
        PB__CL_ERR(CL_INVALID_DEVICE_TYPE)
        PB__CL_ERR(CL_INVALID_PLATFORM)
        PB__CL_ERR(CL_INVALID_DEVICE)
        PB__CL_ERR(CL_INVALID_CONTEXT)
        PB__CL_ERR(CL_INVALID_QUEUE_PROPERTIES)
        PB__CL_ERR(CL_INVALID_COMMAND_QUEUE)
        PB__CL_ERR(CL_INVALID_HOST_PTR)
        PB__CL_ERR(CL_INVALID_MEM_OBJECT)
        PB__CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        PB__CL_ERR(CL_INVALID_IMAGE_SIZE)
        PB__CL_ERR(CL_INVALID_SAMPLER)
        PB__CL_ERR(CL_INVALID_BINARY)
        PB__CL_ERR(CL_INVALID_BUILD_OPTIONS)
        PB__CL_ERR(CL_INVALID_PROGRAM)
        PB__CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
        PB__CL_ERR(CL_INVALID_KERNEL_NAME)
        PB__CL_ERR(CL_INVALID_KERNEL_DEFINITION)
        PB__CL_ERR(CL_INVALID_KERNEL)
        PB__CL_ERR(CL_INVALID_ARG_INDEX)
        PB__CL_ERR(CL_INVALID_ARG_VALUE)
        PB__CL_ERR(CL_INVALID_ARG_SIZE)
        PB__CL_ERR(CL_INVALID_KERNEL_ARGS)
        PB__CL_ERR(CL_INVALID_WORK_DIMENSION)
        PB__CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
        PB__CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
        PB__CL_ERR(CL_INVALID_GLOBAL_OFFSET)
        PB__CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
        PB__CL_ERR(CL_INVALID_EVENT)
        PB__CL_ERR(CL_INVALID_OPERATION)
        PB__CL_ERR(CL_INVALID_GL_OBJECT)
        PB__CL_ERR(CL_INVALID_BUFFER_SIZE)
        PB__CL_ERR(CL_INVALID_MIP_LEVEL)
        PB__CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
        PB__CL_ERR(CL_INVALID_PROPERTY)
        PB__CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR)
        PB__CL_ERR(CL_INVALID_COMPILER_OPTIONS)
        PB__CL_ERR(CL_INVALID_LINKER_OPTIONS)
        PB__CL_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef PB__CL_ERR
    case -1001:
        return "CL_PLATFORM_NOT_FOUND_KHR";
    }
    return "unknown OpenCL error";
}

pb_status pb__cl_status(cl_int e, const char *what, const char *file, int line)
{
    pb_status st = e == CL_OUT_OF_HOST_MEMORY || e == CL_MEM_OBJECT_ALLOCATION_FAILURE ? PB_ERR_NOMEM
                                                                                      : PB_ERR_DEVICE;
    return pb__fail(st, "%s failed at %s:%d: %s (%d)", what, file, line, pb__cl_error_name(e), (int)e);
}

/* ---- discovery: every device of every platform, in one flat list, GPUs first */

#define MAX_DEVICES 64

/* Filled once (pthread_once: threads opening devices at once all wait for
 * the whole list and its reason). */
static pthread_once_t found_once = PTHREAD_ONCE_INIT;
static struct {
    int count;
    cl_platform_id platform[MAX_DEVICES];
    cl_device_id device[MAX_DEVICES];
    char why[256];
} found;

static int type_rank(cl_device_type t)
{
    return t & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR) ? 0 : t & CL_DEVICE_TYPE_CPU ? 1 : 2;
}

void pb__cl_order_devices(const cl_device_type *types, int n, int *order)
{
    int k = 0;
    for (int rank = 0; rank < 3; rank++)
        for (int i = 0; i < n; i++)
            if (type_rank(types[i]) == rank)
                order[k++] = i;
}

/* GPUs first (pb__cl_order_devices): `parbench run` on a machine with
 * NVIDIA's platform beside PoCL then runs on the GPU by default. A device
 * whose type cannot be read goes with "anything else". */
static void order_found(void)
{
    cl_device_type types[MAX_DEVICES];
    int order[MAX_DEVICES];
    cl_platform_id platform[MAX_DEVICES];
    cl_device_id device[MAX_DEVICES];
    for (int i = 0; i < found.count; i++)
        if (clGetDeviceInfo(found.device[i], CL_DEVICE_TYPE, sizeof types[i], &types[i], NULL) != CL_SUCCESS)
            types[i] = 0;
    pb__cl_order_devices(types, found.count, order);
    for (int k = 0; k < found.count; k++) {
        platform[k] = found.platform[order[k]];
        device[k] = found.device[order[k]];
    }
    memcpy(found.platform, platform, (size_t)found.count * sizeof platform[0]);
    memcpy(found.device, device, (size_t)found.count * sizeof device[0]);
}

static void discover_once(void)
{
    cl_uint n_platforms = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &n_platforms);
    if (e == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (e == CL_SUCCESS && n_platforms == 0)) {
        snprintf(found.why, sizeof found.why,
                 "no OpenCL platform: the ICD loader found no driver (install one, e.g. pocl-opencl-icd)");
        return;
    }
    if (e != CL_SUCCESS) {
        snprintf(found.why, sizeof found.why, "clGetPlatformIDs failed: %s (%d)", pb__cl_error_name(e), (int)e);
        return;
    }
    cl_platform_id *platforms = calloc(n_platforms, sizeof *platforms);
    if (!platforms) {
        snprintf(found.why, sizeof found.why, "out of memory listing OpenCL platforms");
        return;
    }
    e = clGetPlatformIDs(n_platforms, platforms, NULL);
    for (cl_uint p = 0; e == CL_SUCCESS && p < n_platforms && found.count < MAX_DEVICES; p++) {
        cl_uint n = 0;
        /* CL_DEVICE_NOT_FOUND (or any error) leaves the platform out. */
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES - (cl_uint)found.count,
                           found.device + found.count, &n) != CL_SUCCESS)
            continue;
        if (n > (cl_uint)(MAX_DEVICES - found.count))
            n = (cl_uint)(MAX_DEVICES - found.count);
        for (cl_uint d = 0; d < n; d++)
            found.platform[found.count + (int)d] = platforms[p];
        found.count += (int)n;
    }
    free(platforms);
    if (found.count > 1)
        order_found();
    if (e != CL_SUCCESS)
        snprintf(found.why, sizeof found.why, "clGetPlatformIDs failed: %s (%d)", pb__cl_error_name(e), (int)e);
    else if (found.count == 0)
        snprintf(found.why, sizeof found.why, "no OpenCL device on %u platform(s)", (unsigned)n_platforms);
}

static void discover(void) { pthread_once(&found_once, discover_once); }

static bool cl_available(const char **why)
{
    discover();
    *why = found.why;
    return found.count > 0;
}

static int cl_device_count(void)
{
    discover();
    return found.count;
}

/* ---- device and platform properties ----------------------------------------- */

/* clGetDeviceInfo / clGetPlatformInfo behind one signature. */
typedef cl_int (*info_query)(void *obj, cl_uint what, size_t size, void *value, size_t *size_ret);

static cl_int query_device(void *obj, cl_uint what, size_t size, void *value, size_t *size_ret)
{
    return clGetDeviceInfo((cl_device_id)obj, what, size, value, size_ret);
}

static cl_int query_platform(void *obj, cl_uint what, size_t size, void *value, size_t *size_ret)
{
    return clGetPlatformInfo((cl_platform_id)obj, what, size, value, size_ret);
}

/* A string property into buf (truncated to fit), trailing blanks removed. */
static cl_int info_str(info_query query, void *obj, cl_uint what, char *buf, size_t len)
{
    size_t size = 0;
    buf[0] = '\0';
    cl_int e = query(obj, what, 0, NULL, &size);
    char *tmp = e == CL_SUCCESS ? malloc(size + 1) : NULL;
    if (e == CL_SUCCESS && !tmp)
        e = CL_OUT_OF_HOST_MEMORY;
    if (e == CL_SUCCESS)
        e = query(obj, what, size, tmp, NULL);
    if (e == CL_SUCCESS) {
        tmp[size] = '\0';
        size_t n = strlen(tmp);
        while (n && (tmp[n - 1] == ' ' || tmp[n - 1] == '\n'))
            tmp[--n] = '\0';
        snprintf(buf, len, "%s", tmp);
    }
    free(tmp);
    return e;
}

static cl_int device_str(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    return info_str(query_device, d, what, buf, len);
}

static cl_int platform_str(cl_platform_id p, cl_platform_info what, char *buf, size_t len)
{
    return info_str(query_platform, p, what, buf, len);
}

/* Whether the space-separated extension list of d names ext. */
static bool has_extension(cl_device_id d, const char *ext)
{
    size_t size = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS)
        return false;
    char *list = malloc(size + 1);
    bool yes = false;
    if (list && clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, size, list, NULL) == CL_SUCCESS) {
        list[size] = '\0';
        size_t n = strlen(ext);
        for (const char *p = strstr(list, ext); p && !yes; p = strstr(p + 1, ext))
            yes = (p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0');
    }
    free(list);
    return yes;
}

#define GET_DEVICE_INFO(d, what, var) PB_CL_CHECK(clGetDeviceInfo((d), (what), sizeof(var), &(var), NULL))

/* ---- open / close ------------------------------------------------------------- */

static void forget_last_kernel(struct pb_cl_device *impl)
{
    if (impl->last_kernel)
        clReleaseEvent(impl->last_kernel);
    impl->last_kernel = NULL;
}

static void release_all(struct pb_cl_device *impl)
{
    forget_last_kernel(impl);
    for (size_t i = 0; i < impl->n_kernels; i++)
        clReleaseKernel(impl->kernels[i].kernel);
    for (size_t i = 0; i < impl->n_programs; i++)
        clReleaseProgram(impl->programs[i].program);
    if (impl->queue) {
        clFinish(impl->queue);
        clReleaseCommandQueue(impl->queue);
    }
    if (impl->ctx)
        clReleaseContext(impl->ctx);
    free(impl->streams);
    free(impl->wait);
    free(impl);
}

static pb_status query_limits(struct pb_cl_device *impl)
{
    cl_device_id d = impl->device;
    cl_uint dims = 0;
    GET_DEVICE_INFO(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, impl->max_alloc);
    GET_DEVICE_INFO(d, CL_DEVICE_GLOBAL_MEM_SIZE, impl->global_mem);
    GET_DEVICE_INFO(d, CL_DEVICE_LOCAL_MEM_SIZE, impl->local_mem);
    GET_DEVICE_INFO(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, impl->max_group);
    GET_DEVICE_INFO(d, CL_DEVICE_ADDRESS_BITS, impl->address_bits);
    GET_DEVICE_INFO(d, CL_DEVICE_MAX_COMPUTE_UNITS, impl->compute_units);
    GET_DEVICE_INFO(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, dims);
    size_t items[16] = {0};
    if (dims > 16)
        dims = 16;
    PB_CL_CHECK(clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(size_t), items, NULL));
    for (int i = 0; i < 3; i++)
        impl->max_items[i] = i < (int)dims ? items[i] : 1;
    impl->fp64 = has_extension(d, "cl_khr_fp64");
    /* NVIDIA's compiler takes inline PTX: kernels may then use warp-level
     * steps as their CUDA twins do (PB_NV_WARP, see program_options). */
    impl->nv_warp = 0;
    if (has_extension(d, "cl_nv_device_attribute_query")) {
        cl_uint warp = 0;
        if (clGetDeviceInfo(d, CL_DEVICE_WARP_SIZE_NV, sizeof warp, &warp, NULL) == CL_SUCCESS)
            impl->nv_warp = warp;
    }
    return PB_OK;
}

static pb_status cl_open(pb_device *dev, int index)
{
    struct pb_cl_device *impl = calloc(1, sizeof *impl);
    if (!impl)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate the OpenCL device state");
    impl->platform = found.platform[index];
    impl->device = found.device[index];
    impl->wait = calloc(2, sizeof *impl->wait);
    if (!impl->wait) {
        release_all(impl);
        return pb__fail(PB_ERR_NOMEM, "cannot allocate the OpenCL device state");
    }
    pb_status st = query_limits(impl);
    cl_int e = CL_SUCCESS;
    if (st == PB_OK) {
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)impl->platform, 0};
        impl->ctx = clCreateContext(props, 1, &impl->device, NULL, NULL, &e);
        if (e != CL_SUCCESS)
            st = pb__cl_status(e, "clCreateContext", __FILE__, __LINE__);
    }
    if (st == PB_OK) {
        impl->queue = clCreateCommandQueue(impl->ctx, impl->device, CL_QUEUE_PROFILING_ENABLE, &e);
        if (e != CL_SUCCESS)
            st = pb__cl_status(e, "clCreateCommandQueue", __FILE__, __LINE__);
    }
    if (st != PB_OK) {
        release_all(impl);
        return st;
    }
    char name[150], platform[100];
    device_str(impl->device, CL_DEVICE_NAME, name, sizeof name);
    platform_str(impl->platform, CL_PLATFORM_NAME, platform, sizeof platform);
    snprintf(dev->name, sizeof dev->name, "%s (%s)", name, platform);
    /* The vendor names PoCL ("The pocl project"), which its device and
     * platform names do not: --device pocl then finds it. */
    if (platform_str(impl->platform, CL_PLATFORM_VENDOR, dev->aka, sizeof dev->aka) != CL_SUCCESS)
        dev->aka[0] = '\0'; /* matched by its name alone */
    cl_device_type type = 0;
    impl->serial_kernels = strstr(platform, "Portable Computing Language") &&
                           clGetDeviceInfo(impl->device, CL_DEVICE_TYPE, sizeof type, &type, NULL) == CL_SUCCESS &&
                           (type & CL_DEVICE_TYPE_CPU);
    dev->impl = impl;
    dev->threads = 0;
    return PB_OK;
}

static void cl_close(pb_device *dev)
{
    pb__cl_spmv_release(dev);
    if (dev->impl)
        release_all(pb__cl(dev));
    dev->impl = NULL;
}

static const char *device_type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU)
        return "gpu";
    if (t & CL_DEVICE_TYPE_CPU)
        return "cpu";
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    return "other";
}

static pb_status cl_info(pb_device *dev, struct pb_device_info *out)
{
    struct pb_cl_device *impl = pb__cl(dev);
    cl_device_id d = impl->device;
    char s[192];
    cl_device_type type = 0;
    cl_uint units = 0, clock = 0;
    cl_ulong cache = 0;
    cl_device_local_mem_type local_type = CL_LOCAL;
    size_t resolution = 0;
    GET_DEVICE_INFO(d, CL_DEVICE_TYPE, type);
    GET_DEVICE_INFO(d, CL_DEVICE_MAX_COMPUTE_UNITS, units);
    GET_DEVICE_INFO(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, clock);
    GET_DEVICE_INFO(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, cache);
    GET_DEVICE_INFO(d, CL_DEVICE_LOCAL_MEM_TYPE, local_type);
    GET_DEVICE_INFO(d, CL_DEVICE_PROFILING_TIMER_RESOLUTION, resolution);

    snprintf(out->name, sizeof out->name, "%s", dev->name);
    snprintf(out->kind, sizeof out->kind, "%s", device_type_name(type));
    PB_CL_CHECK(platform_str(impl->platform, CL_PLATFORM_NAME, s, sizeof s));
    pb__info_add(out, "platform", "%s", s);
    PB_CL_CHECK(platform_str(impl->platform, CL_PLATFORM_VENDOR, s, sizeof s));
    pb__info_add(out, "platform_vendor", "%s", s);
    PB_CL_CHECK(platform_str(impl->platform, CL_PLATFORM_VERSION, s, sizeof s));
    pb__info_add(out, "platform_version", "%s", s);
    PB_CL_CHECK(device_str(d, CL_DEVICE_NAME, s, sizeof s));
    pb__info_add(out, "device", "%s", s);
    pb__info_add(out, "device_type", "%s", device_type_name(type));
    PB_CL_CHECK(device_str(d, CL_DEVICE_VENDOR, s, sizeof s));
    pb__info_add(out, "device_vendor", "%s", s);
    PB_CL_CHECK(device_str(d, CL_DEVICE_VERSION, s, sizeof s));
    pb__info_add(out, "device_version", "%s", s);
    PB_CL_CHECK(device_str(d, CL_DRIVER_VERSION, s, sizeof s));
    pb__info_add(out, "driver_version", "%s", s);
    PB_CL_CHECK(device_str(d, CL_DEVICE_OPENCL_C_VERSION, s, sizeof s));
    pb__info_add(out, "opencl_c_version", "%s", s);
    pb__info_add(out, "compute_units", "%u", (unsigned)units);
    pb__info_add(out, "max_clock", "%u MHz", (unsigned)clock);
    char a[32];
    pb__info_add(out, "global_memory", "%s", pb__format_bytes((double)impl->global_mem, a, sizeof a));
    pb__info_add(out, "max_alloc", "%s", pb__format_bytes((double)impl->max_alloc, a, sizeof a));
    pb__info_add(out, "global_cache", "%s", pb__format_bytes((double)cache, a, sizeof a));
    pb__info_add(out, "local_memory", "%s (%s)", pb__format_bytes((double)impl->local_mem, a, sizeof a),
                 local_type == CL_LOCAL ? "dedicated" : local_type == CL_GLOBAL ? "global" : "none");
    pb__info_add(out, "max_work_group_size", "%zu", impl->max_group);
    pb__info_add(out, "max_work_item_sizes", "%zu x %zu x %zu", impl->max_items[0], impl->max_items[1],
                 impl->max_items[2]);
    static const struct {
        const char *name;
        cl_device_info what;
    } widths[] = {
        {"char", CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR},   {"short", CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT},
        {"int", CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT},     {"long", CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG},
        {"float", CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT}, {"double", CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE},
    };
    size_t used = 0;
    s[0] = '\0';
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        cl_uint w = 0;
        GET_DEVICE_INFO(d, widths[i].what, w);
        used += (size_t)snprintf(s + used, sizeof s - used, "%s%s %u", i ? ", " : "", widths[i].name, (unsigned)w);
        if (used >= sizeof s)
            break;
    }
    pb__info_add(out, "preferred_vector_widths", "%s", s);
    pb__info_add(out, "double_precision", "%s", impl->fp64 ? "yes (cl_khr_fp64)" : "no");
    if (impl->nv_warp)
        pb__info_add(out, "warp_size", "%u (cl_nv_device_attribute_query)", (unsigned)impl->nv_warp);
    pb__info_add(out, "profiling_timer_resolution", "%zu ns", resolution);
    pb__info_add(out, "address_bits", "%u", (unsigned)impl->address_bits);
    return PB_OK;
}

/* ---- ordering (see the top of the file) ----------------------------------------- */

static struct pb_cl_queue *stream_of(struct pb_cl_device *impl, const pb_stream *s)
{
    for (size_t i = 0; i < impl->n_streams; i++)
        if (impl->streams[i].queue == (cl_command_queue)s->handle)
            return &impl->streams[i];
    return NULL;
}

/* Picks the queue for a command on stream s and fills impl->wait with the
 * events it must wait for (*n of them). */
static pb_status order_before(struct pb_cl_device *impl, pb_stream *s, cl_command_queue *q, cl_uint *n)
{
    *n = 0;
    if (!s) {
        *q = impl->queue;
        for (size_t i = 0; i < impl->n_streams; i++) {
            struct pb_cl_queue *st = &impl->streams[i];
            if (!st->pending)
                continue;
            cl_int e = clEnqueueMarkerWithWaitList(st->queue, 0, NULL, &impl->wait[*n]);
            if (e != CL_SUCCESS) {
                for (cl_uint j = 0; j < *n; j++)
                    clReleaseEvent(impl->wait[j]);
                *n = 0;
                return pb__cl_status(e, "clEnqueueMarkerWithWaitList (ordering after a stream)", __FILE__,
                                     __LINE__);
            }
            (*n)++;
        }
        return PB_OK;
    }
    struct pb_cl_queue *st = stream_of(impl, s);
    if (!st)
        return pb__fail(PB_ERR_INVALID, "stream does not belong to this OpenCL device");
    *q = st->queue;
    if (st->behind) {
        cl_int e = clEnqueueMarkerWithWaitList(impl->queue, 0, NULL, &impl->wait[0]);
        if (e != CL_SUCCESS)
            return pb__cl_status(e, "clEnqueueMarkerWithWaitList (ordering after the default queue)", __FILE__,
                                 __LINE__);
        *n = 1;
    }
    return PB_OK;
}

/* After the command was queued (ok) or not: releases the wait list and
 * updates who has to wait for whom. A command that completed before
 * returning (done) leaves nothing for the other side to wait for. */
static void order_after(struct pb_cl_device *impl, pb_stream *s, cl_uint n, bool ok, bool done)
{
    for (cl_uint i = 0; i < n; i++)
        clReleaseEvent(impl->wait[i]);
    if (!s) {
        for (size_t i = 0; i < impl->n_streams; i++) {
            if (ok)
                impl->streams[i].pending = false; /* every pending stream gave a marker */
            impl->streams[i].behind = !(ok && done);
        }
        return;
    }
    struct pb_cl_queue *st = stream_of(impl, s);
    if (st) {
        if (ok)
            st->behind = false; /* it waited on a marker, or was not behind */
        st->pending = !(ok && done);
    }
}

static pb_status finish_all(struct pb_cl_device *impl)
{
    PB_CL_CHECK(clFinish(impl->queue));
    for (size_t i = 0; i < impl->n_streams; i++) {
        PB_CL_CHECK(clFinish(impl->streams[i].queue));
        impl->streams[i].pending = impl->streams[i].behind = false;
    }
    forget_last_kernel(impl);
    return PB_OK;
}

static pb_status cl_sync(pb_device *dev) { return finish_all(pb__cl(dev)); }

/* Waits for ev (when the command was queued) and releases it. */
static cl_int wait_release(cl_int e, cl_event ev)
{
    if (e != CL_SUCCESS)
        return e;
    e = clWaitForEvents(1, &ev);
    clReleaseEvent(ev);
    return e;
}

/* On PoCL's CPU drivers a kernel waits for the last kernel queued on another
 * queue. PoCL (3.1) keeps one compiled work-group function per kernel, local
 * size and grid width, takes the first that fits when a launch starts, and
 * at its end gives back the first with the same kernel and local size. With
 * launches of one kernel at several grid widths in flight on several queues
 * (conv's strips in streams) it gave back the wrong one and aborted the
 * process ("pocl_release_dlhandle_cache: Assertion `found->ref_count > 0'
 * failed", 2 of 30 `parbench conv` runs). A CPU device gains nothing from
 * kernels side by side; copies still overlap them. */
pb_status pb__cl_launch(pb_device *dev, pb_stream *s, cl_kernel k, cl_uint dims, const size_t *global,
                        const size_t *local)
{
    struct pb_cl_device *impl = pb__cl(dev);
    cl_command_queue q = NULL;
    cl_uint n;
    pb_status st = order_before(impl, s, &q, &n);
    if (st != PB_OK)
        return st;
    cl_uint waits = n;
    if (impl->serial_kernels && impl->last_kernel && impl->last_kernel_queue != q)
        impl->wait[waits++] = impl->last_kernel; /* not released by order_after: it keeps n */
    cl_event ev = NULL;
    cl_int e = clEnqueueNDRangeKernel(q, k, dims, NULL, global, local, waits, waits ? impl->wait : NULL,
                                      impl->serial_kernels ? &ev : NULL);
    order_after(impl, s, n, e == CL_SUCCESS, false);
    PB_CL_CHECK_ERR(e, "clEnqueueNDRangeKernel");
    if (ev) {
        forget_last_kernel(impl);
        impl->last_kernel = ev;
        impl->last_kernel_queue = q;
    }
    return PB_OK;
}

/* ---- memory ----------------------------------------------------------------------- */

static pb_status cl_alloc(pb_device *dev, pb_buf *buf)
{
    struct pb_cl_device *impl = pb__cl(dev);
    size_t bytes = buf->bytes ? buf->bytes : 1; /* OpenCL buffers cannot be empty */
    char want[32], have[32];
    cl_int e = CL_SUCCESS;
    if (buf->kind == PB_MEM_PAGEABLE)
        return pb__host_alloc(bytes, "a pageable host buffer", &buf->host);
    if (buf->kind != PB_MEM_DEVICE && buf->kind != PB_MEM_PINNED)
        return pb__fail(PB_ERR_INVALID, "unknown memory kind");
    bool pinned = buf->kind == PB_MEM_PINNED;
    if (bytes > impl->max_alloc)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate %s of %s in one OpenCL buffer: %s allows at most %s "
                        "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)", pb__format_bytes((double)bytes, want, sizeof want),
                        pinned ? "pinned host memory" : "device memory", dev->name,
                        pb__format_bytes((double)impl->max_alloc, have, sizeof have));
    if (!pinned && bytes > impl->global_mem)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate %s of device memory: %s has %s",
                        pb__format_bytes((double)bytes, want, sizeof want), dev->name,
                        pb__format_bytes((double)impl->global_mem, have, sizeof have));
    if (pinned && pb__host_mem_lacks(bytes))
        return pb__fail(PB_ERR_NOMEM, "cannot pin %s of host memory: not that much available",
                        pb__format_bytes((double)bytes, want, sizeof want));
    cl_mem_flags flags = CL_MEM_READ_WRITE | (pinned ? CL_MEM_ALLOC_HOST_PTR : 0);
    cl_mem mem = clCreateBuffer(impl->ctx, flags, bytes, NULL, &e);
    if (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY || e == CL_OUT_OF_RESOURCES)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate %s of %s: clCreateBuffer says %s",
                        pb__format_bytes((double)bytes, want, sizeof want),
                        pinned ? "pinned host memory" : "device memory", pb__cl_error_name(e));
    PB_CL_CHECK_ERR(e, "clCreateBuffer");
    buf->handle = mem;
    if (pinned) {
        /* Mapped for the buffer's lifetime: the mapping is the page-locked
         * host memory the transfers use. */
        void *p = clEnqueueMapBuffer(impl->queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL,
                                     NULL, &e);
        if (e != CL_SUCCESS) {
            clReleaseMemObject(mem);
            buf->handle = NULL;
            if (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY)
                return pb__fail(PB_ERR_NOMEM, "cannot pin %s of host memory: clEnqueueMapBuffer says %s",
                                pb__format_bytes((double)bytes, want, sizeof want), pb__cl_error_name(e));
            return pb__cl_status(e, "clEnqueueMapBuffer", __FILE__, __LINE__);
        }
        buf->host = p;
    }
    return PB_OK;
}

static void cl_free(pb_device *dev, pb_buf *buf)
{
    struct pb_cl_device *impl = pb__cl(dev);
    if (buf->kind == PB_MEM_PAGEABLE) {
        pb__host_free(buf->host);
        return;
    }
    cl_mem mem = pb__cl_mem(buf);
    if (!mem)
        return;
    if (buf->host) { /* pinned: unmap once nothing uses the mapping any more */
        cl_event ev = NULL;
        finish_all(impl);
        cl_int e = clEnqueueUnmapMemObject(impl->queue, mem, buf->host, 0, NULL, &ev);
        wait_release(e, ev);
    }
    clReleaseMemObject(mem);
}

/* Host-addressable bytes of a buffer (pinned or pageable), or NULL. */
static char *host_at(const pb_buf *b, size_t off) { return b->host ? (char *)b->host + off : NULL; }

static bool on_device(const pb_buf *b) { return b->kind == PB_MEM_DEVICE; }

/* Blocking copy between a buffer and host memory, either way, ordered after
 * the device's queued work like any default-queue command. */
static pb_status transfer(const pb_buf *buf, size_t off, void *host, size_t bytes, bool to_buf)
{
    struct pb_cl_device *impl = pb__cl(buf->dev);
    if (!bytes)
        return PB_OK;
    if (!on_device(buf)) {
        pb_status st = finish_all(impl);
        if (st == PB_OK)
            memcpy(to_buf ? host_at(buf, off) : host, to_buf ? host : host_at(buf, off), bytes);
        return st;
    }
    cl_command_queue q = NULL;
    cl_uint n;
    pb_status st = order_before(impl, NULL, &q, &n);
    if (st != PB_OK)
        return st;
    const cl_event *wait = n ? impl->wait : NULL;
    cl_int e = to_buf ? clEnqueueWriteBuffer(q, pb__cl_mem(buf), CL_TRUE, off, bytes, host, n, wait, NULL)
                      : clEnqueueReadBuffer(q, pb__cl_mem(buf), CL_TRUE, off, bytes, host, n, wait, NULL);
    order_after(impl, NULL, n, e == CL_SUCCESS, true);
    PB_CL_CHECK_ERR(e, to_buf ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer");
    return PB_OK;
}

static pb_status cl_write(pb_buf *dst, size_t off, const void *src, size_t bytes)
{
    return transfer(dst, off, (void *)src, bytes, true);
}

static pb_status cl_read(const pb_buf *src, size_t off, void *dst, size_t bytes)
{
    return transfer(src, off, dst, bytes, false);
}

static pb_status cl_fill(pb_buf *buf, unsigned char value)
{
    struct pb_cl_device *impl = pb__cl(buf->dev);
    if (!buf->bytes)
        return PB_OK;
    if (!on_device(buf)) {
        pb_status st = finish_all(impl);
        if (st == PB_OK)
            memset(buf->host, value, buf->bytes);
        return st;
    }
    cl_command_queue q = NULL;
    cl_uint n;
    pb_status st = order_before(impl, NULL, &q, &n);
    if (st != PB_OK)
        return st;
    cl_event ev;
    cl_uchar pattern = value;
    cl_int e = clEnqueueFillBuffer(q, pb__cl_mem(buf), &pattern, 1, 0, buf->bytes, n, n ? impl->wait : NULL, &ev);
    e = wait_release(e, ev);
    order_after(impl, NULL, n, e == CL_SUCCESS, true);
    PB_CL_CHECK_ERR(e, "clEnqueueFillBuffer");
    return PB_OK;
}

static pb_status cl_copy(pb_buf *dst, size_t dst_off, const pb_buf *src, size_t src_off, size_t bytes,
                         pb_stream *s)
{
    struct pb_cl_device *impl = pb__cl(dst->dev);
    if (!bytes)
        return PB_OK;
    bool dd = on_device(dst), sd = on_device(src);
    if (!dd && !sd) { /* host to host runs at once, after the device's queued work */
        pb_status st = finish_all(impl);
        if (st == PB_OK)
            memmove(host_at(dst, dst_off), host_at(src, src_off), bytes);
        return st;
    }
    if (dd && sd && dst->handle == src->handle &&
        (dst_off < src_off ? src_off - dst_off : dst_off - src_off) < bytes)
        return pb__fail(PB_ERR_UNSUPPORTED, "overlapping copy within one OpenCL buffer (clEnqueueCopyBuffer "
                                            "cannot overlap)");
    cl_command_queue q = NULL;
    cl_uint n;
    pb_status st = order_before(impl, s, &q, &n);
    if (st != PB_OK)
        return st;
    cl_event *wait = n ? impl->wait : NULL;
    cl_bool blocking = s ? CL_FALSE : CL_TRUE;
    cl_int e;
    const char *what;
    if (dd && !sd) {
        what = "clEnqueueWriteBuffer";
        e = clEnqueueWriteBuffer(q, pb__cl_mem(dst), blocking, dst_off, bytes, host_at(src, src_off), n, wait, NULL);
    } else if (!dd) {
        what = "clEnqueueReadBuffer";
        e = clEnqueueReadBuffer(q, pb__cl_mem(src), blocking, src_off, bytes, host_at(dst, dst_off), n, wait, NULL);
    } else {
        what = "clEnqueueCopyBuffer";
        cl_event ev;
        e = clEnqueueCopyBuffer(q, pb__cl_mem(src), pb__cl_mem(dst), src_off, dst_off, bytes, n, wait,
                                s ? NULL : &ev);
        if (!s)
            e = wait_release(e, ev);
    }
    order_after(impl, s, n, e == CL_SUCCESS, !s);
    PB_CL_CHECK_ERR(e, what);
    return PB_OK;
}

/* ---- streams ---------------------------------------------------------------------- */

static pb_status cl_stream_create(pb_device *dev, pb_stream *s)
{
    struct pb_cl_device *impl = pb__cl(dev);
    if (impl->n_streams == impl->cap_streams) {
        size_t cap = impl->cap_streams ? 2 * impl->cap_streams : 4;
        struct pb_cl_queue *streams = realloc(impl->streams, cap * sizeof *streams);
        if (!streams)
            return pb__fail(PB_ERR_NOMEM, "cannot allocate a stream");
        impl->streams = streams;
        cl_event *wait = realloc(impl->wait, (cap + 2) * sizeof *wait);
        if (!wait)
            return pb__fail(PB_ERR_NOMEM, "cannot allocate a stream");
        impl->wait = wait;
        impl->cap_streams = cap;
    }
    cl_int e;
    cl_command_queue q = clCreateCommandQueue(impl->ctx, impl->device, CL_QUEUE_PROFILING_ENABLE, &e);
    PB_CL_CHECK_ERR(e, "clCreateCommandQueue");
    /* Behind: it starts after what the default queue already has. */
    impl->streams[impl->n_streams++] = (struct pb_cl_queue){.queue = q, .pending = false, .behind = true};
    s->handle = q;
    return PB_OK;
}

/* Waits for the stream's work, then forgets it. */
static void cl_stream_destroy(pb_stream *s)
{
    struct pb_cl_device *impl = pb__cl(s->dev);
    struct pb_cl_queue *st = stream_of(impl, s);
    clFinish((cl_command_queue)s->handle);
    clReleaseCommandQueue((cl_command_queue)s->handle);
    if (st)
        *st = impl->streams[--impl->n_streams];
}

static pb_status cl_stream_sync(pb_stream *s)
{
    struct pb_cl_device *impl = pb__cl(s->dev);
    PB_CL_CHECK(clFinish((cl_command_queue)s->handle));
    struct pb_cl_queue *st = stream_of(impl, s);
    if (st)
        st->pending = false;
    return PB_OK;
}

/* ---- timers: profiling markers ---------------------------------------------------- */

/* A recorded time point: the marker on the queue it was recorded on and,
 * for the default queue, the markers it waited for on the streams. Its time
 * is the latest end among them: a driver may stamp a marker that waits on
 * another queue's events when it is queued rather than when they complete
 * (NVIDIA does), while a marker behind work on its own queue is stamped
 * after that work everywhere. */
struct time_point {
    cl_uint n;
    cl_event ev[]; /* ev[0] on the recording queue */
};

static void point_free(void *p)
{
    struct time_point *tp = p;
    if (!tp)
        return;
    for (cl_uint i = 0; i < tp->n; i++)
        clReleaseEvent(tp->ev[i]);
    free(tp);
}

/* t->start and t->stop are time points (NULL before the first record). */
static pb_status cl_timer_create(pb_device *dev, pb_timer *t)
{
    (void)dev;
    t->start = t->stop = NULL;
    return PB_OK;
}

static void cl_timer_destroy(pb_timer *t)
{
    point_free(t->start);
    point_free(t->stop);
    t->start = t->stop = NULL;
}

/* A marker completes when everything queued before it (on its queue, and on
 * the streams for the default queue) has. */
static pb_status cl_timer_record(pb_timer *t, bool stop, pb_stream *s)
{
    struct pb_cl_device *impl = pb__cl(t->dev);
    void **slot = stop ? &t->stop : &t->start;
    point_free(*slot);
    *slot = NULL;
    struct time_point *tp = malloc(sizeof *tp + (impl->n_streams + 1) * sizeof(cl_event));
    if (!tp)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate a timer point");
    cl_command_queue q = NULL;
    cl_uint n;
    pb_status st = order_before(impl, s, &q, &n);
    if (st != PB_OK) {
        free(tp);
        return st;
    }
    cl_int e = clEnqueueMarkerWithWaitList(q, n, n ? impl->wait : NULL, &tp->ev[0]);
    tp->n = e == CL_SUCCESS ? 1 : 0;
    if (e == CL_SUCCESS && !s) /* keep the streams' markers: order_after releases its references */
        for (cl_uint i = 0; i < n; i++)
            if (clRetainEvent(impl->wait[i]) == CL_SUCCESS)
                tp->ev[tp->n++] = impl->wait[i];
    order_after(impl, s, n, e == CL_SUCCESS, false);
    if (e != CL_SUCCESS) {
        free(tp);
        return pb__cl_status(e, "clEnqueueMarkerWithWaitList", __FILE__, __LINE__);
    }
    *slot = tp;
    return PB_OK;
}

/* Waits for a time point; its time in ns on the device clock. */
static pb_status point_time(const struct time_point *tp, cl_ulong *ns)
{
    PB_CL_CHECK(clWaitForEvents(tp->n, tp->ev));
    *ns = 0;
    for (cl_uint i = 0; i < tp->n; i++) {
        cl_ulong end = 0;
        PB_CL_CHECK(clGetEventProfilingInfo(tp->ev[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
        if (end > *ns)
            *ns = end;
    }
    return PB_OK;
}

static pb_status cl_timer_elapsed(pb_timer *t, double *seconds)
{
    if (!t->start || !t->stop)
        return pb__fail(PB_ERR_INVALID, "timer: start and stop must both be recorded");
    cl_ulong a = 0, b = 0;
    pb_status st = point_time(t->start, &a);
    if (st == PB_OK)
        st = point_time(t->stop, &b);
    if (st != PB_OK)
        return st;
    *seconds = ((double)b - (double)a) * 1e-9;
    return PB_OK;
}

/* ---- programs and kernels ------------------------------------------------------------ */

/* Source of `file`: $PARBENCH_CL_DIR/file when set, else the embedded copy.
 * *owned is set when the text was read from disk (free it). */
static pb_status load_source(const char *file, const char **text, char **owned)
{
    *owned = NULL;
    const char *dir = getenv("PARBENCH_CL_DIR");
    if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        FILE *f = fopen(path, "rb");
        if (!f)
            return pb__fail(PB_ERR_IO, "cannot open %s (PARBENCH_CL_DIR is set)", path);
        char *buf = NULL;
        size_t len = 0, cap = 0, got;
        do {
            if (len + 4096 + 1 > cap) {
                cap = 2 * cap + 4096 + 1;
                char *grown = realloc(buf, cap);
                if (!grown) {
                    free(buf);
                    fclose(f);
                    return pb__fail(PB_ERR_NOMEM, "cannot read %s", path);
                }
                buf = grown;
            }
            got = fread(buf + len, 1, 4096, f);
            len += got;
        } while (got == 4096);
        bool bad = ferror(f);
        fclose(f);
        if (bad) {
            free(buf);
            return pb__fail(PB_ERR_IO, "cannot read %s", path);
        }
        buf[len] = '\0';
        *text = *owned = buf;
        return PB_OK;
    }
    for (size_t i = 0; i < pb__cl_n_sources; i++)
        if (strcmp(pb__cl_sources[i].name, file) == 0) {
            *text = pb__cl_sources[i].text;
            return PB_OK;
        }
    return pb__fail(PB_ERR_NOT_FOUND, "no embedded OpenCL source %s", file);
}

/* Records a failed build with as much of the log as the message holds. */
static pb_status build_failed(const pb_device *dev, cl_program prog, const char *file, const char *options,
                              cl_int e)
{
    struct pb_cl_device *impl = pb__cl(dev);
    size_t size = 0;
    char *log = NULL;
    if (clGetProgramBuildInfo(prog, impl->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) == CL_SUCCESS &&
        (log = malloc(size + 1)) != NULL &&
        clGetProgramBuildInfo(prog, impl->device, CL_PROGRAM_BUILD_LOG, size, log, NULL) == CL_SUCCESS) {
        log[size] = '\0';
        /* One line, runs of blanks and line breaks squeezed to one space, so
         * more of the log fits in the message. */
        size_t o = 0;
        for (size_t i = 0; log[i]; i++) {
            char c = log[i] == '\t' || log[i] == '\r' || log[i] == '\n' ? ' ' : log[i];
            if (c == ' ' && (o == 0 || log[o - 1] == ' '))
                continue;
            log[o++] = c;
        }
        while (o && log[o - 1] == ' ')
            o--;
        log[o] = '\0';
    }
    pb_status st = pb__fail(PB_ERR_DEVICE, "building %s (%s) for %s failed: %s; log: %s", file, options,
                            dev->name, pb__cl_error_name(e), log && log[0] ? log : "(empty)");
    free(log);
    return st;
}

/* With $PARBENCH_CL_DUMP set to a directory, writes the built program
 * (PTX on NVIDIA's platform) and its build log there as FILE-PREC.bin and
 * FILE-PREC.log (FILE-PREC-DEFINES.* for programs built with defines), to compare the code a platform's compiler makes with
 * another's. Best effort: a development aid, never an error. */
static void dump_program(const struct pb_cl_device *impl, cl_program prog, const char *file, const char *defines,
                         enum pb_precision prec)
{
    const char *dir = getenv("PARBENCH_CL_DUMP");
    if (!dir || !*dir)
        return;
    const char *what[2] = {"bin", "log"};
    for (int i = 0; i < 2; i++) {
        size_t size = 0;
        unsigned char *data = NULL;
        if (i == 0) {
            if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
                !(data = malloc(size + 1)) ||
                clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof data, &data, NULL) != CL_SUCCESS)
                size = 0;
        } else if (clGetProgramBuildInfo(prog, impl->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS ||
                   !(data = malloc(size + 1)) ||
                   clGetProgramBuildInfo(prog, impl->device, CL_PROGRAM_BUILD_LOG, size, data, NULL) != CL_SUCCESS)
            size = 0;
        while (i == 1 && size && (data[size - 1] == '\0' || data[size - 1] == '\n'))
            size--; /* the log's terminator and blank tail */
        char path[4096], tag[64] = "";
        if (defines) { /* "-DRB_SMALL" -> "-DRB_SMALL", other characters dropped */
            size_t t = 0;
            tag[t++] = '-';
            for (const char *c = defines; *c && t + 1 < sizeof tag; c++)
                if (isalnum((unsigned char)*c) || *c == '_')
                    tag[t++] = *c;
            tag[t] = '\0';
        }
        snprintf(path, sizeof path, "%s/%.*s-%s%s.%s", dir, (int)strcspn(file, "."), file,
                 prec == PB_DOUBLE ? "double" : "float", tag, what[i]);
        FILE *f = size ? fopen(path, "wb") : NULL;
        if (f) {
            fwrite(data, 1, size, f);
            fclose(f);
        }
        free(data);
    }
}

/* Build options a program needs on this device beyond T and PB_FP64. On
 * NVIDIA's platform: PB_NV_WARP (the warp size, for inline PTX), and the float
 * GEMM held to 128 registers so two regblock work-groups share an SM, as
 * __launch_bounds__(256, 2) does for the CUDA twin (159 registers and one
 * work-group per SM otherwise: 42 instead of 46 TFLOP/s on an H100). The
 * other kernels of gemm.cl use far fewer registers. */
static int program_options(const struct pb_cl_device *impl, const char *file, const char *defines,
                           enum pb_precision prec, char *out, size_t size)
{
    int len = snprintf(out, size, "%s%s%s", prec == PB_DOUBLE ? "-DT=double -DPB_FP64" : "-DT=float",
                       defines ? " " : "", defines ? defines : "");
    if (impl->nv_warp) {
        len += snprintf(out + len, size - (size_t)len, " -DPB_NV_WARP=%u", (unsigned)impl->nv_warp);
        if (prec == PB_FLOAT && strcmp(file, "gemm.cl") == 0)
            len += snprintf(out + len, size - (size_t)len, " -cl-nv-maxrregcount=128");
    }
    const char *extra = getenv("PARBENCH_CL_OPTIONS");
    if (extra && *extra)
        len += snprintf(out + len, size - (size_t)len, " %s", extra);
    return len;
}

/* NULL and "" are no defines; otherwise equal strings. */
static bool same_defines(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static pb_status program_for(const pb_device *dev, const char *file, const char *defines, enum pb_precision prec,
                             cl_program *out)
{
    struct pb_cl_device *impl = pb__cl(dev);
    for (size_t i = 0; i < impl->n_programs; i++)
        if (impl->programs[i].prec == prec && strcmp(impl->programs[i].file, file) == 0 &&
            same_defines(impl->programs[i].defines, defines)) {
            *out = impl->programs[i].program;
            return PB_OK;
        }
    if (impl->n_programs == PB_CL_MAX_PROGRAMS)
        return pb__fail(PB_ERR_NOMEM, "too many OpenCL programs on one device");
    if (prec == PB_DOUBLE && !impl->fp64)
        return pb__fail(PB_ERR_UNSUPPORTED, "%s has no double precision (cl_khr_fp64)", dev->name);
    const char *text;
    char *owned;
    pb_status st = load_source(file, &text, &owned);
    if (st != PB_OK)
        return st;
    cl_int e;
    cl_program prog = clCreateProgramWithSource(impl->ctx, 1, &text, NULL, &e);
    free(owned);
    PB_CL_CHECK_ERR(e, "clCreateProgramWithSource");
    char options[512];
    if (program_options(impl, file, defines, prec, options, sizeof options) >= (int)sizeof options) {
        clReleaseProgram(prog);
        return pb__fail(PB_ERR_INVALID, "PARBENCH_CL_OPTIONS is too long");
    }
    e = clBuildProgram(prog, 1, &impl->device, options, NULL, NULL);
    if (e != CL_SUCCESS) {
        st = build_failed(dev, prog, file, options, e);
        clReleaseProgram(prog);
        return st;
    }
    dump_program(impl, prog, file, defines, prec);
    impl->programs[impl->n_programs++] =
        (struct pb_cl_program){.file = file, .defines = defines, .prec = prec, .program = prog};
    *out = prog;
    return PB_OK;
}

pb_status pb__cl_kernel(const pb_device *dev, const char *file, enum pb_precision prec, const char *name,
                        const struct pb_cl_kernel **out)
{
    return pb__cl_kernel_with(dev, file, NULL, prec, name, out);
}

pb_status pb__cl_kernel_with(const pb_device *dev, const char *file, const char *defines, enum pb_precision prec,
                             const char *name, const struct pb_cl_kernel **out)
{
    struct pb_cl_device *impl = pb__cl(dev);
    for (size_t i = 0; i < impl->n_kernels; i++)
        if (impl->kernels[i].prec == prec && strcmp(impl->kernels[i].name, name) == 0 &&
            strcmp(impl->kernels[i].file, file) == 0 && same_defines(impl->kernels[i].defines, defines)) {
            *out = &impl->kernels[i];
            return PB_OK;
        }
    if (impl->n_kernels == PB_CL_MAX_KERNELS)
        return pb__fail(PB_ERR_NOMEM, "too many OpenCL kernels on one device");
    cl_program prog = NULL;
    pb_status st = program_for(dev, file, defines, prec, &prog);
    if (st != PB_OK)
        return st;
    cl_int e;
    struct pb_cl_kernel k = {.file = file, .defines = defines, .name = name, .prec = prec};
    k.kernel = clCreateKernel(prog, name, &e);
    PB_CL_CHECK_ERR(e, "clCreateKernel");
    e = clGetKernelWorkGroupInfo(k.kernel, impl->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof k.max_group,
                                 &k.max_group, NULL);
    if (e == CL_SUCCESS)
        e = clGetKernelWorkGroupInfo(k.kernel, impl->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof k.local_mem,
                                     &k.local_mem, NULL);
    if (e != CL_SUCCESS) {
        clReleaseKernel(k.kernel);
        return pb__cl_status(e, "clGetKernelWorkGroupInfo", __FILE__, __LINE__);
    }
    impl->kernels[impl->n_kernels] = k;
    *out = &impl->kernels[impl->n_kernels++];
    return PB_OK;
}

pb_status pb__cl_set_arg(cl_kernel k, cl_uint i, size_t size, const void *value)
{
    cl_int e = clSetKernelArg(k, i, size, value);
    if (e != CL_SUCCESS)
        return pb__fail(PB_ERR_DEVICE, "clSetKernelArg(%u) failed: %s (%d)", (unsigned)i, pb__cl_error_name(e),
                        (int)e);
    return PB_OK;
}

/* ---- registration ------------------------------------------------------------------- */

#define CL_GEMM_FLAGS(NAME, SUMMARY, FLAGS)                                                      \
    {.desc = {"gemm", #NAME, SUMMARY, FLAGS}, .supports = pb__cl_gemm_##NAME##_supports,        \
     .run = pb__cl_gemm_##NAME}
#define CL_GEMM(NAME, SUMMARY) CL_GEMM_FLAGS(NAME, SUMMARY, 0)

#define CL_REDUCE(NAME, FN, SUMMARY)                                                            \
    {.desc = {"reduce", #NAME, SUMMARY, PB_VARIANT_WORKSPACE}, .supports = pb__cl_reduce_supports,   \
     .run = pb__cl_reduce_##FN, .data = &pb__cl_reduce_##FN##_work}

static const struct pb_variant cl_variants[] = {
    CL_GEMM_FLAGS(naive, "one work-item per element of C, operands from global memory", PB_VARIANT_SHAPED),
    CL_GEMM(tiled8, "8x8 local-memory tiles"),
    CL_GEMM(tiled16, "16x16 local-memory tiles"),
    CL_GEMM(tiled32, "32x32 local-memory tiles"),
    CL_GEMM(onerow, "one work-group per row of C, that row of A in local memory (study 001)"),
    CL_GEMM(regblock, "the CUDA regblock design: 128x128 tiles (64x64 where they fill the device better), vector loads, two local-memory stages"),
    {.desc = {"spmv", "csr-scalar", "CSR, one work-item per row; 32- or 64-bit row offsets", PB_VARIANT_PTR64}, .supports = pb__cl_spmv_supports, .run = pb__cl_spmv_scalar, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-vector", "CSR, --group work-items per row reduced in local memory; 32- or 64-bit row offsets", PB_VARIANT_PTR64}, .supports = pb__cl_spmv_supports, .run = pb__cl_spmv_vector, .data = &pb__spmv_csr},
    {.desc = {"spmv", "ellt", "ELLPACK transposed (column-major), one work-item per row", 0}, .supports = pb__cl_spmv_supports, .run = pb__cl_spmv_ellt, .data = &pb__spmv_ellt},
    {.desc = {"spmv", "csr-balanced", "CSR, rows packed into blocks of equal non-zeros (planned once per matrix), long rows split over work-groups", 0}, .supports = pb__cl_spmv_supports, .run = pb__cl_spmv_balanced, .data = &pb__spmv_csr, .prepare = pb__cl_spmv_balanced_prepare},
    {.desc = {"spmv", "dia", "CSR in, a diagonal copy (made on the host once per matrix: stencils and bands of at most 64 diagonals, no column indices; refused where the diagonals, each stored over the rows it spans, move more bytes than CSR), one work-item per row", 0}, .supports = pb__cl_spmv_supports, .run = pb__cl_spmv_dia, .data = &pb__spmv_csr, .prepare = pb__cl_spmv_dia_prepare},
    {.desc = {"spmv", "auto", "CSR in, the fastest on this device of csr-scalar, csr-vector, csr-balanced, an ELLT copy (where the row lengths allow) and a diagonal copy (where it moves fewer bytes), timed once per matrix; the row says which", 0}, .supports = pb__cl_spmv_supports, .run = pb__cl_spmv_auto, .data = &pb__spmv_csr, .prepare = pb__cl_spmv_auto_prepare},
    {.desc = {"transpose", "copy", "the tiles copied, not transposed: the bound", PB_VARIANT_BOUND}, .supports = pb__cl_transpose_supports, .run = pb__cl_transpose_copy},
    {.desc = {"transpose", "naive", "coalesced reads, strided writes", 0}, .supports = pb__cl_transpose_supports, .run = pb__cl_transpose_naive},
    {.desc = {"transpose", "coalesced", "32x32 tile through local memory", 0}, .supports = pb__cl_transpose_supports, .run = pb__cl_transpose_coalesced},
    {.desc = {"transpose", "padded", "the tile padded by a column: no bank conflicts", 0}, .supports = pb__cl_transpose_supports, .run = pb__cl_transpose_padded},
    CL_REDUCE(interleaved-divergent, interleaved_divergent, "1: interleaved addressing, divergent branch"),
    CL_REDUCE(interleaved, interleaved, "2: interleaved addressing, strided index (bank conflicts)"),
    CL_REDUCE(sequential, sequential, "3: sequential addressing"),
    CL_REDUCE(first-add-on-load, first_add, "4: first add during the load"),
    CL_REDUCE(unroll-last-warp, unroll_last_warp, "5: the last six steps unrolled (warp-synchronous on NVIDIA, barriers kept elsewhere)"),
    CL_REDUCE(unroll-all, unroll_all, "6: completely unrolled, work-group size a compile-time constant"),
    CL_REDUCE(multiple-per-thread, multiple_per_thread, "7: many elements per work-item"),
    {.desc = {"peak", "fma", "independent FMA chains per work-item, no loads (arithmetic peak)", 0}, .supports = pb__cl_peak_supports, .run = pb__cl_peak_fma},
    {.desc = {"peak", "read", "read-only sum over the NDRange, four loads in flight per work-item", 0}, .supports = pb__cl_peak_supports, .run = pb__cl_peak_read},
    {.desc = {"conv", "tiled", "local-memory tiles with the halo, taps in constant memory (study 003)", 0}, .supports = pb__cl_conv_tiled_supports, .run = pb__cl_conv_tiled},
};

const struct pb_backend pb__backend_opencl = {
    .name = "opencl",
    .summary = "OpenCL devices of every platform (ICD loader)",
    .threaded = false,
    .buffers_per_handle = true,
    .available = cl_available,
    .device_count = cl_device_count,
    .open = cl_open,
    .close = cl_close,
    .info = cl_info,
    .alloc = cl_alloc,
    .free = cl_free,
    .buf_gone = pb__cl_spmv_buf_gone,
    .write = cl_write,
    .read = cl_read,
    .fill = cl_fill,
    .sync = cl_sync,
    .copy = cl_copy,
    .stream_create = cl_stream_create,
    .stream_destroy = cl_stream_destroy,
    .stream_sync = cl_stream_sync,
    .timer_create = cl_timer_create,
    .timer_destroy = cl_timer_destroy,
    .timer_record = cl_timer_record,
    .timer_elapsed = cl_timer_elapsed,
    .variants = cl_variants,
    .n_variants = sizeof cl_variants / sizeof cl_variants[0],
};

/* Private state of the OpenCL backend shared by its files: the device
 * state, error checks, the per-device program/kernel cache and the ordered
 * kernel launch. OpenCL 1.2 API only, so it runs on every ICD (PoCL, NVIDIA). */
#ifndef PARBENCH_CL_IMPL_H
#define PARBENCH_CL_IMPL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <stdbool.h>

#include "core/backend_impl.h"
#include "core/core.h"
#include "core/plans.h"

/* "CL_INVALID_VALUE" etc.; "unknown OpenCL error" for other codes. */
const char *pb__cl_error_name(cl_int e);

/* The default order of the devices found (discovery order = platform by
 * platform): order[k] = discovery index of the k-th device. GPUs and
 * accelerators come first, then CPUs, then anything else, each group in
 * discovery order, so device 0 is a GPU wherever there is one. */
void pb__cl_order_devices(const cl_device_type *types, int n, int *order);

/* Records "what failed at file:line: CL_NAME (code)" and returns the status
 * (PB_ERR_NOMEM for allocation failures, PB_ERR_DEVICE otherwise). */
pb_status pb__cl_status(cl_int e, const char *what, const char *file, int line);

/* Check a call returning cl_int; on failure record it and return from the
 * enclosing function. */
#define PB_CL_CHECK(expr)                                                         \
    do {                                                                          \
        cl_int pb__e = (expr);                                                    \
        if (pb__e != CL_SUCCESS)                                                  \
            return pb__cl_status(pb__e, #expr, __FILE__, __LINE__);               \
    } while (0)

/* The same for an error code returned through a pointer: `what` names the call. */
#define PB_CL_CHECK_ERR(err, what)                                                \
    do {                                                                          \
        if ((err) != CL_SUCCESS)                                                  \
            return pb__cl_status((err), (what), __FILE__, __LINE__);              \
    } while (0)

/* A queue of the device besides the default one (a pb_stream), with the
 * bookkeeping that orders it against the default queue (see
 * backend_opencl.c, "ordering"). */
struct pb_cl_queue {
    cl_command_queue queue;
    bool pending; /* work queued since the default queue last waited for it */
    bool behind;  /* the default queue got work it has not waited for */
};

/* A built program: one source file for one precision and set of defines. */
struct pb_cl_program {
    const char *file;    /* static string, e.g. "gemm.cl" */
    const char *defines; /* static string of extra build options, or NULL */
    enum pb_precision prec;
    cl_program program;
};

/* A kernel of a built program with what the compiled code allows. */
struct pb_cl_kernel {
    const char *file, *defines, *name; /* static strings (defines may be NULL) */
    enum pb_precision prec;
    cl_kernel kernel;
    size_t max_group;   /* CL_KERNEL_WORK_GROUP_SIZE */
    cl_ulong local_mem; /* CL_KERNEL_LOCAL_MEM_SIZE: static __local use */
};

#define PB_CL_MAX_PROGRAMS 32
#define PB_CL_MAX_KERNELS 128

struct pb_cl_device {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue; /* the default stream: in order, profiling */
    struct pb_cl_queue *streams;
    size_t n_streams, cap_streams;
    cl_event *wait; /* scratch wait list, cap_streams + 2 events */
    /* PoCL's CPU drivers: each kernel launch waits for the last one queued
     * on another queue (pb__cl_launch says why). */
    bool serial_kernels;
    cl_event last_kernel; /* NULL: none outstanding */
    cl_command_queue last_kernel_queue;

    /* Limits the variants check in their supports(). */
    cl_ulong max_alloc, global_mem, local_mem;
    size_t max_group, max_items[3];
    cl_uint address_bits, compute_units;
    bool fp64;
    cl_uint nv_warp; /* warp size on NVIDIA's platform, else 0 */

    struct pb_cl_program programs[PB_CL_MAX_PROGRAMS];
    size_t n_programs;
    struct pb_cl_kernel kernels[PB_CL_MAX_KERNELS];
    size_t n_kernels;
    char why[256]; /* detailed supports() reasons live here */
    /* conv: the taps of the filter buffer with this stamp, read back once for
     * the kernels that take them by value (conv.c). */
    uint64_t conv_taps_stamp;
    unsigned char conv_taps[(2 * 64 + 1) * sizeof(double)];
    struct pb_plans spmv; /* csr-balanced and auto's per-matrix state (spmv.c) */
};

static inline struct pb_cl_device *pb__cl(const pb_device *dev)
{
    return (struct pb_cl_device *)dev->impl;
}

static inline cl_mem pb__cl_mem(const pb_buf *b) { return b ? (cl_mem)b->handle : NULL; }

/* Kernel `name` of kernels/`file` built for prec. The program is built on
 * first use (from the embedded source, or from $PARBENCH_CL_DIR/`file` when
 * that variable is set) and cached with its kernels for the device's
 * lifetime. A failed build is PB_ERR_DEVICE with the build log in the
 * message; a missing PARBENCH_CL_DIR file is PB_ERR_IO. file and name must be
 * static strings. */
pb_status pb__cl_kernel(const pb_device *dev, const char *file, enum pb_precision prec,
                        const char *name, const struct pb_cl_kernel **out);

/* The same from a program built with extra options `defines` (a static
 * string such as "-DRB_SMALL"; NULL for none), cached apart. */
pb_status pb__cl_kernel_with(const pb_device *dev, const char *file, const char *defines, enum pb_precision prec,
                             const char *name, const struct pb_cl_kernel **out);

/* Queues an NDRange of k on stream s (NULL = the default queue), ordered
 * like every other command of the backend. local may be NULL. */
pb_status pb__cl_launch(pb_device *dev, pb_stream *s, cl_kernel k, cl_uint dims, const size_t *global,
                        const size_t *local);

/* clSetKernelArg, checked: "clSetKernelArg(i) failed: CL_NAME (code)". */
pb_status pb__cl_set_arg(cl_kernel k, cl_uint i, size_t size, const void *value);

/* SpMV variants (spmv.c). */
bool pb__cl_spmv_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cl_spmv_scalar(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cl_spmv_vector(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cl_spmv_ellt(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cl_spmv_balanced(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cl_spmv_balanced_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cl_spmv_auto(pb_device *dev, const void *args, pb_stream *s);
/* Frees the spmv state of dev (before the device goes). */
void pb__cl_spmv_release(pb_device *dev);
void pb__cl_spmv_buf_gone(pb_device *dev, const pb_buf *buf); /* drops its matrix's plan */
pb_status pb__cl_spmv_auto_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cl_spmv_dia(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cl_spmv_dia_prepare(pb_device *dev, const void *args, char *note, size_t len);

/* GEMM variants (gemm.c). */
#define PB__CL_GEMM_DECL(name)                                                        \
    pb_status pb__cl_gemm_##name(pb_device *dev, const void *args, pb_stream *s);     \
    bool pb__cl_gemm_##name##_supports(const pb_device *dev, const void *args, const char **why);
PB__CL_GEMM_DECL(naive)
PB__CL_GEMM_DECL(tiled8)
PB__CL_GEMM_DECL(tiled16)
PB__CL_GEMM_DECL(tiled32)
PB__CL_GEMM_DECL(onerow)
PB__CL_GEMM_DECL(regblock)
#undef PB__CL_GEMM_DECL

/* Transpose and reduce variants (memory.c); reduce's workspace sizes are
 * their variant data. */
bool pb__cl_transpose_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cl_transpose_copy(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cl_transpose_naive(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cl_transpose_coalesced(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cl_transpose_padded(pb_device *dev, const void *args, pb_stream *s);
bool pb__cl_reduce_supports(const pb_device *dev, const void *args, const char **why);
struct pb__workspace;
#define PB__CL_REDUCE_DECL(NAME)                                                      \
    pb_status pb__cl_reduce_##NAME(pb_device *dev, const void *args, pb_stream *s);   \
    extern const struct pb__workspace pb__cl_reduce_##NAME##_work;
PB__CL_REDUCE_DECL(interleaved_divergent)
PB__CL_REDUCE_DECL(interleaved)
PB__CL_REDUCE_DECL(sequential)
PB__CL_REDUCE_DECL(first_add)
PB__CL_REDUCE_DECL(unroll_last_warp)
PB__CL_REDUCE_DECL(unroll_all)
PB__CL_REDUCE_DECL(multiple_per_thread)
#undef PB__CL_REDUCE_DECL
/* Peak-rate variants (peak.c). */
pb_status pb__cl_peak_fma(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cl_peak_read(pb_device *dev, const void *args, pb_stream *s);
bool pb__cl_peak_supports(const pb_device *dev, const void *args, const char **why);
/* Separable convolution (conv.c). */
pb_status pb__cl_conv_tiled(pb_device *dev, const void *args, pb_stream *s);
bool pb__cl_conv_tiled_supports(const pb_device *dev, const void *args, const char **why);

#endif

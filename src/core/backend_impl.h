/* Private backend interface: the vtable every backend fills in, and the
 * structures behind the public opaque handles. Adding a backend = one static
 * `struct pb_backend` + one line in registry.c; adding a kernel variant = one
 * function + one row in the backend's variant table. */
#ifndef PARBENCH_BACKEND_IMPL_H
#define PARBENCH_BACKEND_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parbench/pb_backend.h"
#include "parbench/pb_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pb_devcomm_ops;

struct pb_variant {
    struct pb_variant_desc desc;
    /* NULL = supports everything. Otherwise returns false and sets *why to a
     * static string when these arguments cannot be handled. */
    bool (*supports)(const pb_device *dev, const void *args, const char **why);
    /* Runs the kernel; may be asynchronous on stream s (NULL = default
     * stream). The caller synchronises with pb_device_sync(). */
    pb_status (*run)(pb_device *dev, const void *args, pb_stream *s);
    const void *data; /* the variant's own constants (e.g. which copy it is) */
    /* NULL = nothing to prepare. Otherwise analyses the arguments' input once
     * (cached with the device, as run() would on its first call), blocking,
     * and says in note what run() will do. */
    pb_status (*prepare)(pb_device *dev, const void *args, char *note, size_t len);
};

/* What the energy of a device's work is read from (core/energy.h). */
enum pb_energy_kind {
    PB_ENERGY_NONE,     /* nothing measured */
    PB_ENERGY_HOST_CPU, /* the host's CPU packages and their DRAM (RAPL) */
    PB_ENERGY_PCI_GPU,  /* an NVIDIA GPU, by PCI bus id (NVML) */
};

struct pb_energy_domain {
    enum pb_energy_kind kind;
    char pci_bus_id[32]; /* PB_ENERGY_PCI_GPU: "0000:65:00.0" */
};

struct pb_backend {
    const char *name;
    const char *summary;
    bool threaded; /* kernels honour dev->threads (--threads sweeps them) */
    /* Buffers belong to the handle that made them (a context of its own),
     * not to every handle of the same device. */
    bool buffers_per_handle;
    /* Runtime check, called once; NULL means always available. */
    bool (*available)(const char **why);
    int (*device_count)(void);
    pb_status (*open)(pb_device *dev, int index); /* fills impl, name, threads */
    void (*close)(pb_device *dev);
    pb_status (*info)(pb_device *dev, struct pb_device_info *out);
    /* Memory. Host-memory backends may leave these NULL: the core then uses
     * aligned host memory and memcpy/memset. */
    pb_status (*alloc)(pb_device *dev, pb_buf *buf);  /* buf->kind, bytes set */
    void (*free)(pb_device *dev, pb_buf *buf);
    /* NULL = nothing kept per buffer. Told of every buffer (views too) before
     * it is freed, so what was kept for it (a matrix's plans) goes with it. */
    void (*buf_gone)(pb_device *dev, const pb_buf *buf);
    pb_status (*write)(pb_buf *dst, size_t off, const void *src, size_t bytes);
    pb_status (*read)(const pb_buf *src, size_t off, void *dst, size_t bytes);
    pb_status (*fill)(pb_buf *buf, unsigned char value);
    /* Page-lock buf->host (caller memory) for copies; NULL = cannot. */
    pb_status (*pin_host)(pb_device *dev, pb_buf *buf);
    void (*unpin_host)(pb_device *dev, pb_buf *buf);
    pb_status (*sync)(pb_device *dev); /* NULL = synchronous backend */
    /* Copies between buffers; NULL = memcpy between host pointers. A NULL
     * stream means blocking. */
    pb_status (*copy)(pb_buf *dst, size_t dst_off, const pb_buf *src, size_t src_off,
                      size_t bytes, pb_stream *s);
    /* Streams; NULL = every stream is synchronous (work runs when queued). */
    pb_status (*stream_create)(pb_device *dev, pb_stream *s); /* fills s->handle */
    void (*stream_destroy)(pb_stream *s);
    pb_status (*stream_sync)(pb_stream *s);
    pb_status (*stream_wait)(pb_stream *waiter, pb_stream *on); /* NULL: the host waits for `on` */
    /* Device event timers; NULL = host clock. */
    pb_status (*timer_create)(pb_device *dev, pb_timer *t); /* fills t->start, t->stop */
    void (*timer_destroy)(pb_timer *t);
    pb_status (*timer_record)(pb_timer *t, bool stop, pb_stream *s);
    pb_status (*timer_elapsed)(pb_timer *t, double *seconds);
    /* Where the device's energy is read; NULL = nowhere (rows carry none). */
    pb_status (*energy_domain)(pb_device *dev, struct pb_energy_domain *out);
    const struct pb_variant *variants;
    size_t n_variants;
    /* Device buffers between ranks without host staging (comm/devcomm.h);
     * NULL = none (benchmarks stage through pinned host memory). */
    const struct pb_devcomm_ops *devcomm;
};

struct pb_device {
    const struct pb_backend *backend;
    int index;
    int threads;         /* threads kernels use; 0 = not applicable */
    int default_threads; /* what open() set */
    char name[256];
    char aka[128]; /* more text --device NAME matches (OpenCL: the platform vendor); "" = none */
    void *impl;
    /* The sparse matrix whose arrays pb__spmv_contents_check last found
     * valid: their stamps and the arguments that read them. */
    struct {
        uint64_t ptr, idx;
        int32_t rows, cols, width;
        int64_t nnz;
        int format, ptr_bits;
    } spmv_valid;
};

/* Whether --device NAME picks dev: its name or aka contains pattern, in any case. */
bool pb__device_matches(const pb_device *dev, const char *pattern);
/* The backends of this build, "ref, openmp, opencl", into buf. */
const char *pb__backend_names(char *buf, size_t len);

struct pb_buf {
    pb_device *dev;
    enum pb_mem kind;
    size_t bytes;
    void *host;   /* host-addressable memory, or NULL */
    void *handle; /* backend's native handle (device pointer, cl_mem) */
    bool owned;   /* false for pb_buf_wrap_host and pb_buf_pin_host */
    bool pinned_in_place; /* pb_buf_pin_host locked it: unlock when freed */
    /* Unique in the process, renewed by every write, fill or copy into the
     * buffer: variants that cache what they derive from an input (an
     * anchor's own matrix format) compare stamps to know it is unchanged. */
    uint64_t stamp;
};

uint64_t pb__new_stamp(void);

struct pb_stream {
    pb_device *dev;
    void *handle; /* cudaStream_t, cl_command_queue; NULL for synchronous backends */
    void *marker; /* the backend's, for pb_stream_wait (a cudaEvent_t) */
    bool urgent;  /* asked of stream_create */
};

struct pb_timer {
    pb_device *dev;
    void *start, *stop; /* device events */
    double host_start, host_stop;
    bool host_started, host_stopped; /* since the last start */
};

/* Host pointer of a buffer as a typed pointer; for host-memory backends. */
#define PB__HOST(buf, type) ((type *)(buf)->host)

/* spmv variants name the format they read through `data` (a const enum
 * pb_sparse_format *; NULL = CSR). These are the shared constants. */
extern const enum pb_sparse_format pb__spmv_csr, pb__spmv_ell, pb__spmv_ellt;
enum pb_sparse_format pb__spmv_variant_format(const struct pb_variant *v);

const struct pb_variant *pb__variant_find(const struct pb_backend *b, const char *bench,
                                          const char *name);

#ifdef __cplusplus
}
#endif
#endif

/* parbench: backends, devices and buffers behind opaque handles.
 *
 * A backend is a programming model (ref, openmp, later cuda, opencl). Every
 * backend compiled into the library is listed, available or not; one whose
 * runtime is missing reports why through pb_backend_available(). A device is
 * one compute device of a backend (the CPU for ref/openmp). Buffers are
 * allocated on a device; host-memory backends give direct host pointers. */
#ifndef PARBENCH_PB_BACKEND_H
#define PARBENCH_PB_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "parbench/pb.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pb_backend pb_backend; /* static, never freed */
typedef struct pb_device pb_device;
typedef struct pb_buf pb_buf;
typedef struct pb_stream pb_stream;
typedef struct pb_timer pb_timer;

/* ---- backends ---------------------------------------------------------- */
size_t pb_backend_count(void);
const pb_backend *pb_backend_at(size_t i);
/* NULL when no backend of that name is compiled in. */
const pb_backend *pb_backend_find(const char *name);
const char *pb_backend_name(const pb_backend *b);
/* True when the runtime is usable here; otherwise *why (if non-NULL) says why
 * not, e.g. "no CUDA driver". */
bool pb_backend_available(const pb_backend *b, const char **why);
int pb_backend_device_count(const pb_backend *b);

/* ---- devices ----------------------------------------------------------- */
#define PB_INFO_MAX_PROPS 64
struct pb_device_info {
    char name[256];
    char kind[16]; /* "cpu", "gpu", ... */
    int n_props;
    struct {
        char key[48];
        char value[192];
    } props[PB_INFO_MAX_PROPS];
};

/* A NULL handle is a caller's mistake the library reports, not a crash:
 * functions returning pb_status give PB_ERR_INVALID with the reason in
 * pb_last_error(); getters give what stands for none (a name "", a count or
 * thread count 0, false, NULL). Lifetimes cannot be checked, only kept by
 * the caller: free every buffer, stream and timer of a device before closing
 * it, and use no handle after it was freed or closed (twice included). */
pb_status pb_device_open(const pb_backend *b, int index, pb_device **out);
void pb_device_close(pb_device *dev); /* accepts NULL */
const pb_backend *pb_device_backend(const pb_device *dev);
const char *pb_device_name(const pb_device *dev);
pb_status pb_device_info(pb_device *dev, struct pb_device_info *out);
/* Threads the device's kernels use (openmp; ignored by backends that do not
 * take a thread count). n <= 0 restores the default, n > PB_MAX_THREADS is
 * taken as PB_MAX_THREADS. pb_device_threads: 1 for the serial reference, 0
 * where a thread count does not apply (GPUs). */
#define PB_MAX_THREADS 4096
void pb_device_set_threads(pb_device *dev, int n);
int pb_device_threads(const pb_device *dev);
/* Wait until all work queued on the device is done. */
pb_status pb_device_sync(pb_device *dev);

/* ---- buffers ----------------------------------------------------------- */
pb_status pb_buf_alloc(pb_device *dev, enum pb_mem kind, size_t bytes, pb_buf **out);
/* Wrap caller-owned host memory (host-memory backends only); pb_buf_free then
 * frees the wrapper, not the memory. */
pb_status pb_buf_wrap_host(pb_device *dev, void *ptr, size_t bytes, pb_buf **out);
/* Page-lock caller-owned host memory for the device's copies (CUDA:
 * cudaHostRegister), so they move it directly, without a staging copy; on
 * host-memory backends, a wrapper as pb_buf_wrap_host. pb_buf_free unlocks
 * it and frees the wrapper, not the memory. PB_ERR_UNSUPPORTED where the
 * backend cannot, PB_ERR_NOMEM where locking would leave the host short. */
pb_status pb_buf_pin_host(pb_device *dev, void *ptr, size_t bytes, pb_buf **out);
void pb_buf_free(pb_buf *buf); /* accepts NULL */
size_t pb_buf_size(const pb_buf *buf);
/* Host-addressable pointer, or NULL for device memory of a GPU backend.
 * Each call counts as a write to buf (see pb_buf_modified). */
void *pb_buf_host_ptr(const pb_buf *buf);
/* Says that buf's memory changed behind the library's back: written through
 * a pointer from pb_buf_host_ptr() kept from before, by the caller's own
 * kernels, or by another library. Variants keep what they derive from an
 * input buffer (spmv's copies of a matrix in another format, an anchor's own
 * matrix, OpenCL conv's taps) until the buffer changes, which the library
 * sees only through its own calls: pb_buf_write, pb_buf_fill_bytes,
 * pb_buf_copy, a kernel writing the buffer and pb_buf_host_ptr. Call this
 * after any other write and before the next kernel that reads buf, or that
 * kernel may compute with the old content. PB_ERR_INVALID for NULL. */
pb_status pb_buf_modified(pb_buf *buf);
/* Copy host -> buffer, buffer -> host (blocking). */
pb_status pb_buf_write(pb_buf *dst, size_t dst_off, const void *src, size_t bytes);
pb_status pb_buf_read(const pb_buf *src, size_t src_off, void *dst, size_t bytes);
/* Set every byte to value (0xFF makes every float and double a NaN). */
pb_status pb_buf_fill_bytes(pb_buf *buf, unsigned char value);
/* Copy bytes between two buffers of one device, any memory kinds (host to
 * device, device to host, device to device, host to host). With a stream the
 * copy is queued and may return before it is done (asynchronous when the
 * host side is pinned); with NULL it is complete on return. */
pb_status pb_buf_copy(pb_buf *dst, size_t dst_off, const pb_buf *src, size_t src_off, size_t bytes,
                      pb_stream *stream);

/* ---- streams: ordered queues of work ------------------------------------ */
/* Backends without streams give a stream whose work runs synchronously. */
pb_status pb_stream_create(pb_device *dev, pb_stream **out);
/* A stream whose waiting kernels the device starts ahead of other streams'
 * (CUDA's highest priority): for short work that others wait on, such as a
 * halo exchange next to a long product. An ordinary stream elsewhere. */
pb_status pb_stream_create_urgent(pb_device *dev, pb_stream **out);
void pb_stream_destroy(pb_stream *s); /* accepts NULL */
pb_status pb_stream_sync(pb_stream *s);
/* Work queued on `waiter` after this call starts after all that `on` holds
 * now. The host does not wait where the backend orders streams on the device
 * (CUDA); elsewhere it waits for `on`. */
pb_status pb_stream_wait(pb_stream *waiter, pb_stream *on);

/* ---- timers: elapsed time between two points of a stream ---------------- */
/* Device events where the backend has them, else the host clock (then start
 * and stop are taken when called). */
pb_status pb_timer_create(pb_device *dev, pb_timer **out);
void pb_timer_destroy(pb_timer *t); /* accepts NULL */
pb_status pb_timer_start(pb_timer *t, pb_stream *s);
pb_status pb_timer_stop(pb_timer *t, pb_stream *s);
/* Seconds between start and stop; waits for the stop point to be reached. */
pb_status pb_timer_elapsed(pb_timer *t, double *seconds);
/* True when this device's timers are device events rather than the host clock. */
bool pb_device_has_event_timers(const pb_device *dev);

#ifdef __cplusplus
}
#endif
#endif

/* The backend table and the public wrappers over the private vtable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/args.h"
#include "core/backend_impl.h"
#include "core/core.h"

extern const struct pb_backend pb__backend_ref;
#ifdef PB_HAVE_OPENMP
extern const struct pb_backend pb__backend_openmp;
#endif
#ifdef PB_HAVE_CUDA
extern const struct pb_backend pb__backend_cuda;
#endif
#ifdef PB_HAVE_OPENCL
extern const struct pb_backend pb__backend_opencl;
#endif

static const struct pb_backend *const backends[] = {
    &pb__backend_ref,
#ifdef PB_HAVE_OPENMP
    &pb__backend_openmp,
#endif
#ifdef PB_HAVE_CUDA
    &pb__backend_cuda,
#endif
#ifdef PB_HAVE_OPENCL
    &pb__backend_opencl,
#endif
};

/* The public entry points take NULL for a handle as a caller's mistake,
 * not a crash. */
#define PB_NOT_NULL(p, what)                                                         \
    do {                                                                             \
        if (!(p))                                                                    \
            return pb__fail(PB_ERR_INVALID, "%s: %s is NULL", __func__, what);       \
    } while (0)

size_t pb_backend_count(void) { return sizeof backends / sizeof backends[0]; }

const pb_backend *pb_backend_at(size_t i) { return i < pb_backend_count() ? backends[i] : NULL; }

const pb_backend *pb_backend_find(const char *name)
{
    for (size_t i = 0; name && i < pb_backend_count(); i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

/* Getters of a NULL handle give what stands for none (pb.h): "", 0, false. */
const char *pb_backend_name(const pb_backend *b) { return b ? b->name : ""; }

const char *pb__backend_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < pb_backend_count() && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", backends[i]->name);
    return buf;
}

bool pb_backend_available(const pb_backend *b, const char **why)
{
    const char *reason = NULL;
    if (!b) {
        if (why)
            *why = "no backend (NULL): pb_backend_find finds only the backends built in";
        return false;
    }
    bool ok = b->available ? b->available(&reason) : true;
    if (why)
        *why = ok ? "" : (reason ? reason : "unavailable");
    return ok;
}

int pb_backend_device_count(const pb_backend *b)
{
    return b && pb_backend_available(b, NULL) ? b->device_count() : 0;
}

pb_status pb_device_open(const pb_backend *b, int index, pb_device **out)
{
    const char *why;
    PB_NOT_NULL(out, "the device to fill");
    *out = NULL;
    PB_NOT_NULL(b, "the backend (pb_backend_find finds only the backends built in)");
    if (!pb_backend_available(b, &why))
        return pb__fail(PB_ERR_UNAVAILABLE, "backend %s: %s", b->name, why);
    if (index < 0 || index >= b->device_count())
        return pb__fail(PB_ERR_NOT_FOUND, "backend %s has no device %d", b->name, index);
    pb_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate a device handle");
    dev->backend = b;
    dev->index = index;
    pb_status st = b->open(dev, index);
    if (st != PB_OK) {
        free(dev);
        return st;
    }
    dev->default_threads = dev->threads;
    *out = dev;
    return PB_OK;
}

void pb_device_close(pb_device *dev)
{
    if (!dev)
        return;
    if (dev->backend->close)
        dev->backend->close(dev);
    free(dev);
}

bool pb__device_matches(const pb_device *dev, const char *pattern)
{
    return strcasestr(dev->name, pattern) || strcasestr(dev->aka, pattern);
}

const pb_backend *pb_device_backend(const pb_device *dev) { return dev ? dev->backend : NULL; }
const char *pb_device_name(const pb_device *dev) { return dev ? dev->name : ""; }

pb_status pb_device_info(pb_device *dev, struct pb_device_info *out)
{
    PB_NOT_NULL(out, "the info to fill");
    memset(out, 0, sizeof *out);
    PB_NOT_NULL(dev, "the device");
    return dev->backend->info(dev, out);
}

void pb_device_set_threads(pb_device *dev, int n)
{
    if (dev && dev->backend->threaded)
        dev->threads = n > 0 ? (n < PB_MAX_THREADS ? n : PB_MAX_THREADS) : dev->default_threads;
}
int pb_device_threads(const pb_device *dev) { return dev ? dev->threads : 0; }

pb_status pb_device_sync(pb_device *dev)
{
    PB_NOT_NULL(dev, "the device");
    return dev->backend->sync ? dev->backend->sync(dev) : PB_OK;
}

/* ---- buffers: host memory unless the backend provides its own ---------- */

uint64_t pb__new_stamp(void)
{
    static _Atomic uint64_t next = 1;
    return next++;
}

pb_status pb_buf_alloc(pb_device *dev, enum pb_mem kind, size_t bytes, pb_buf **out)
{
    PB_NOT_NULL(out, "the buffer to fill");
    *out = NULL;
    PB_NOT_NULL(dev, "the device");
    if (kind != PB_MEM_DEVICE && kind != PB_MEM_PINNED && kind != PB_MEM_PAGEABLE)
        return pb__fail(PB_ERR_INVALID, "pb_buf_alloc: unknown memory kind %d", (int)kind);
    pb_buf *buf = calloc(1, sizeof *buf);
    if (!buf)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate a buffer handle");
    buf->dev = dev;
    buf->kind = kind;
    buf->bytes = bytes;
    buf->owned = true;
    buf->stamp = pb__new_stamp();
    pb_status st = dev->backend->alloc ? dev->backend->alloc(dev, buf)
                                       : pb__host_alloc(bytes, "a buffer", &buf->host);
    if (st != PB_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    return PB_OK;
}

pb_status pb_buf_wrap_host(pb_device *dev, void *ptr, size_t bytes, pb_buf **out)
{
    PB_NOT_NULL(out, "the buffer to fill");
    *out = NULL;
    PB_NOT_NULL(dev, "the device");
    if (dev->backend->alloc)
        return pb__fail(PB_ERR_UNSUPPORTED, "backend %s cannot wrap host memory",
                        dev->backend->name);
    if (!ptr && bytes)
        return pb__fail(PB_ERR_INVALID, "NULL host pointer");
    pb_buf *buf = calloc(1, sizeof *buf);
    if (!buf)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate a buffer handle");
    *buf = (pb_buf){.dev = dev, .kind = PB_MEM_PAGEABLE, .bytes = bytes, .host = ptr, .owned = false,
                    .stamp = pb__new_stamp()};
    *out = buf;
    return PB_OK;
}

pb_status pb_buf_pin_host(pb_device *dev, void *ptr, size_t bytes, pb_buf **out)
{
    PB_NOT_NULL(out, "the buffer to fill");
    *out = NULL;
    PB_NOT_NULL(dev, "the device");
    if (!dev->backend->alloc)
        return pb_buf_wrap_host(dev, ptr, bytes, out);
    if (!dev->backend->pin_host)
        return pb__fail(PB_ERR_UNSUPPORTED, "backend %s cannot page-lock memory it did not allocate",
                        dev->backend->name);
    if (!ptr || !bytes)
        return pb__fail(PB_ERR_INVALID, "nothing to page-lock (NULL pointer or 0 bytes)");
    /* Locked pages cannot be reclaimed: leave the host at least as much as is locked. */
    size_t avail = pb__host_mem_available();
    if (bytes > avail) {
        char want[32], have[32];
        return pb__fail(PB_ERR_NOMEM, "page-locking %s would leave the host short: %s available",
                        pb__format_bytes((double)bytes, want, sizeof want),
                        pb__format_bytes((double)avail, have, sizeof have));
    }
    pb_buf *buf = calloc(1, sizeof *buf);
    if (!buf)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate a buffer handle");
    *buf = (pb_buf){.dev = dev, .kind = PB_MEM_PINNED, .bytes = bytes, .host = ptr, .owned = false,
                    .stamp = pb__new_stamp()};
    pb_status st = dev->backend->pin_host(dev, buf);
    if (st != PB_OK) {
        free(buf);
        return st;
    }
    buf->pinned_in_place = true;
    *out = buf;
    return PB_OK;
}

void pb_buf_free(pb_buf *buf)
{
    if (!buf)
        return;
    if (buf->dev->backend->buf_gone)
        buf->dev->backend->buf_gone(buf->dev, buf);
    if (buf->owned) {
        if (buf->dev->backend->free)
            buf->dev->backend->free(buf->dev, buf);
        else
            pb__host_free(buf->host);
    } else if (buf->pinned_in_place) {
        buf->dev->backend->unpin_host(buf->dev, buf);
    }
    free(buf);
}

size_t pb_buf_size(const pb_buf *buf) { return buf ? buf->bytes : 0; }
/* The caller may write through the pointer, now or later: the buffer counts
 * as changed (pb_buf_modified) so that no variant's cache of it is trusted.
 * Every buffer handle is allocated writable; only the signature is const. */
void *pb_buf_host_ptr(const pb_buf *buf)
{
    if (!buf || !buf->host)
        return NULL;
    ((pb_buf *)buf)->stamp = pb__new_stamp();
    return buf->host;
}

pb_status pb_buf_modified(pb_buf *buf)
{
    PB_NOT_NULL(buf, "the buffer");
    buf->stamp = pb__new_stamp();
    return PB_OK;
}

static pb_status check_range(const pb_buf *buf, size_t off, size_t bytes)
{
    size_t end;
    if (!pb__add_size(off, bytes, &end) || end > buf->bytes)
        return pb__fail(PB_ERR_INVALID, "access of %zu bytes at offset %zu outside a %zu-byte buffer",
                        bytes, off, buf->bytes);
    return PB_OK;
}

pb_status pb_buf_write(pb_buf *dst, size_t dst_off, const void *src, size_t bytes)
{
    PB_NOT_NULL(dst, "the buffer");
    if (bytes)
        PB_NOT_NULL(src, "the host memory to write from");
    pb_status st = check_range(dst, dst_off, bytes);
    if (st != PB_OK)
        return st;
    dst->stamp = pb__new_stamp();
    if (dst->dev->backend->write)
        return dst->dev->backend->write(dst, dst_off, src, bytes);
    if (bytes)
        memcpy((char *)dst->host + dst_off, src, bytes);
    return PB_OK;
}

pb_status pb_buf_read(const pb_buf *src, size_t src_off, void *dst, size_t bytes)
{
    PB_NOT_NULL(src, "the buffer");
    if (bytes)
        PB_NOT_NULL(dst, "the host memory to read into");
    pb_status st = check_range(src, src_off, bytes);
    if (st != PB_OK)
        return st;
    if (src->dev->backend->read)
        return src->dev->backend->read(src, src_off, dst, bytes);
    if (bytes)
        memcpy(dst, (const char *)src->host + src_off, bytes);
    return PB_OK;
}

pb_status pb_buf_fill_bytes(pb_buf *buf, unsigned char value)
{
    PB_NOT_NULL(buf, "the buffer");
    buf->stamp = pb__new_stamp();
    if (buf->dev->backend->fill)
        return buf->dev->backend->fill(buf, value);
    if (buf->bytes)
        memset(buf->host, value, buf->bytes);
    return PB_OK;
}

pb_status pb_buf_copy(pb_buf *dst, size_t dst_off, const pb_buf *src, size_t src_off, size_t bytes,
                      pb_stream *stream)
{
    pb_status st;
    PB_NOT_NULL(dst, "the destination buffer");
    PB_NOT_NULL(src, "the source buffer");
    if (dst->dev != src->dev)
        return pb__fail(PB_ERR_INVALID, "copy between buffers of different devices");
    if ((st = check_range(dst, dst_off, bytes)) != PB_OK || (st = check_range(src, src_off, bytes)) != PB_OK)
        return st;
    dst->stamp = pb__new_stamp();
    if (dst->dev->backend->copy)
        return dst->dev->backend->copy(dst, dst_off, src, src_off, bytes, stream);
    if (bytes)
        memmove((char *)dst->host + dst_off, (const char *)src->host + src_off, bytes);
    return PB_OK;
}

/* ---- streams and timers --------------------------------------------------- */

static pb_status stream_create(pb_device *dev, bool urgent, pb_stream **out)
{
    PB_NOT_NULL(out, "the stream to fill");
    *out = NULL;
    PB_NOT_NULL(dev, "the device");
    pb_stream *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate a stream handle");
    s->dev = dev, s->urgent = urgent;
    if (dev->backend->stream_create) {
        pb_status st = dev->backend->stream_create(dev, s);
        if (st != PB_OK) {
            free(s);
            return st;
        }
    }
    *out = s;
    return PB_OK;
}

pb_status pb_stream_create(pb_device *dev, pb_stream **out) { return stream_create(dev, false, out); }
pb_status pb_stream_create_urgent(pb_device *dev, pb_stream **out) { return stream_create(dev, true, out); }

void pb_stream_destroy(pb_stream *s)
{
    if (!s)
        return;
    if (s->dev->backend->stream_destroy)
        s->dev->backend->stream_destroy(s);
    free(s);
}

pb_status pb_stream_sync(pb_stream *s)
{
    PB_NOT_NULL(s, "the stream");
    return s->dev->backend->stream_sync ? s->dev->backend->stream_sync(s) : PB_OK;
}

pb_status pb_stream_wait(pb_stream *waiter, pb_stream *on)
{
    if (waiter == on)
        return PB_OK;
    PB_NOT_NULL(waiter, "the waiting stream");
    PB_NOT_NULL(on, "the stream waited on");
    const struct pb_backend *b = on->dev->backend;
    return b->stream_wait && waiter->dev == on->dev ? b->stream_wait(waiter, on) : pb_stream_sync(on);
}

bool pb_device_has_event_timers(const pb_device *dev) { return dev && dev->backend->timer_create != NULL; }

pb_status pb_timer_create(pb_device *dev, pb_timer **out)
{
    PB_NOT_NULL(out, "the timer to fill");
    *out = NULL;
    PB_NOT_NULL(dev, "the device");
    pb_timer *t = calloc(1, sizeof *t);
    if (!t)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate a timer");
    t->dev = dev;
    if (dev->backend->timer_create) {
        pb_status st = dev->backend->timer_create(dev, t);
        if (st != PB_OK) {
            free(t);
            return st;
        }
    }
    *out = t;
    return PB_OK;
}

void pb_timer_destroy(pb_timer *t)
{
    if (!t)
        return;
    if (t->dev->backend->timer_destroy)
        t->dev->backend->timer_destroy(t);
    free(t);
}

pb_status pb_timer_start(pb_timer *t, pb_stream *s)
{
    PB_NOT_NULL(t, "the timer");
    t->host_start = pb__now();
    t->host_started = true, t->host_stopped = false;
    return t->dev->backend->timer_record ? t->dev->backend->timer_record(t, false, s) : PB_OK;
}

pb_status pb_timer_stop(pb_timer *t, pb_stream *s)
{
    PB_NOT_NULL(t, "the timer");
    if (!t->host_started)
        return pb__fail(PB_ERR_INVALID, "pb_timer_stop: the timer was not started");
    t->host_stop = pb__now();
    t->host_stopped = true;
    return t->dev->backend->timer_record ? t->dev->backend->timer_record(t, true, s) : PB_OK;
}

pb_status pb_timer_elapsed(pb_timer *t, double *seconds)
{
    PB_NOT_NULL(t, "the timer");
    PB_NOT_NULL(seconds, "the seconds to fill");
    if (!t->host_stopped)
        return pb__fail(PB_ERR_INVALID, "pb_timer_elapsed: start and stop must both be recorded, in that order");
    if (t->dev->backend->timer_elapsed)
        return t->dev->backend->timer_elapsed(t, seconds);
    *seconds = t->host_stop - t->host_start;
    return PB_OK;
}

/* ---- kernels ------------------------------------------------------------ */

const struct pb_variant *pb__variant_find(const struct pb_backend *b, const char *bench,
                                          const char *name)
{
    for (size_t i = 0; i < b->n_variants; i++) {
        const struct pb_variant *v = &b->variants[i];
        if (strcmp(v->desc.bench, bench) == 0 && strcmp(v->desc.name, name) == 0)
            return v;
    }
    return NULL;
}

size_t pb_kernel_variants(const pb_backend *b, const char *bench, struct pb_variant_desc *out,
                          size_t max)
{
    size_t n = 0;
    if (!out) /* counting only */
        max = 0;
    for (size_t i = 0; b && i < b->n_variants; i++) {
        if (bench && strcmp(b->variants[i].desc.bench, bench) != 0)
            continue;
        if (b->variants[i].desc.flags & PB_VARIANT_HIDDEN) /* test-only: callable by name, not listed */
            continue;
        if (n < max)
            out[n] = b->variants[i].desc;
        n++;
    }
    return n;
}

pb_status pb_kernel_run(pb_device *dev, const char *bench, const char *variant, const void *args)
{
    pb_status st = pb_kernel_launch(dev, bench, variant, args, NULL);
    return st != PB_OK ? st : pb_device_sync(dev);
}

/* The defaults of variant NULL, per family in order of preference: each
 * backend's fastest own kernel comes before the slower ones of other backends
 * (pb_kernels.h lists who has which). */
static const struct {
    const char *bench;
    const char *names[6];
} defaults[] = {
    {"gemm", {"regblock", "wgmma", "tc", "blocked", "ikj"}},
    {"spmv", {"auto", "csr-vector", "csr", "ell", "ellt"}},
    {"conv", {"regs", "fused", "tiled", "ring", "rowcol"}},
    {"transpose", {"padded", "blocked", "loops"}},
    {"reduce", {"last-block", "multiple-per-thread", "pairwise"}},
};

/* Whether v may be a default and takes args (NULL: any). */
static bool default_takes(const pb_device *dev, const struct pb_variant *v, const char *bench, const void *args)
{
    if (v->desc.flags & (PB_VARIANT_ANCHOR | PB_VARIANT_BOUND | PB_VARIANT_HIDDEN))
        return false;
    if (!args)
        return true;
    if (strcmp(bench, "spmv") == 0 && ((const struct pb_spmv_args *)args)->format != pb__spmv_variant_format(v))
        return false;
    const char *why = NULL;
    if (strcmp(bench, "gemm") == 0 && pb__gemm_shaped(args) && !(v->desc.flags & PB_VARIANT_SHAPED))
        return false;
    if (strcmp(bench, "gemm") == 0 &&
        !pb__gemm_variant_takes(dev->backend, v, ((const struct pb_gemm_args *)args)->prec, &why))
        return false;
    if (strcmp(bench, "spmv") == 0 && !pb__spmv_variant_takes(dev->backend, v, args, &why))
        return false;
    return !v->supports || v->supports(dev, args, &why);
}

pb_status pb_kernel_default(pb_device *dev, const char *bench, const void *args, const char **variant)
{
    PB_NOT_NULL(variant, "the variant to fill");
    *variant = NULL;
    PB_NOT_NULL(dev, "the device");
    PB_NOT_NULL(bench, "the kernel family");
    pb_status st = args ? pb__kernel_args_check(dev, bench, args) : PB_OK;
    if (st == PB_OK && args && strcmp(bench, "transpose") == 0) /* every default transposes */
        st = pb__transpose_out_check(args, false);
    if (st != PB_OK)
        return st;
    bool any = false;
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        if (strcmp(defaults[i].bench, bench) != 0)
            continue;
        for (size_t j = 0; j < sizeof defaults[i].names / sizeof defaults[i].names[0] && defaults[i].names[j]; j++) {
            const struct pb_variant *v = pb__variant_find(dev->backend, bench, defaults[i].names[j]);
            if (!v)
                continue;
            any = true;
            if (default_takes(dev, v, bench, args)) {
                *variant = v->desc.name;
                return PB_OK;
            }
        }
    }
    if (!any)
        return pb__fail(PB_ERR_NOT_FOUND, "backend %s has no default %s variant: name one", dev->backend->name,
                        bench);
    return pb__fail(PB_ERR_UNSUPPORTED, "backend %s: no default %s variant takes these arguments",
                    dev->backend->name, bench);
}

pb_status pb_kernel_launch(pb_device *dev, const char *bench, const char *variant, const void *args,
                           pb_stream *s)
{
    PB_NOT_NULL(dev, "the device");
    PB_NOT_NULL(bench, "the kernel family");
    if (s && s->dev != dev)
        return pb__fail(PB_ERR_INVALID, "%s: the stream is another device's", bench);
    if (!variant) {
        pb_status st = pb_kernel_default(dev, bench, args, &variant);
        if (st != PB_OK)
            return st;
    }
    const struct pb_variant *v = pb__variant_find(dev->backend, bench, variant);
    if (!v)
        return pb__fail(PB_ERR_NOT_FOUND, "backend %s has no %s variant '%s'", dev->backend->name,
                        bench, variant);
    pb_status st = pb__kernel_args_check(dev, bench, args);
    if (st == PB_OK && strcmp(bench, "transpose") == 0)
        st = pb__transpose_out_check(args, (v->desc.flags & PB_VARIANT_BOUND) != 0);
    if (st != PB_OK)
        return st;
    if (strcmp(bench, "spmv") == 0 && ((const struct pb_spmv_args *)args)->format != pb__spmv_variant_format(v))
        return pb__fail(PB_ERR_UNSUPPORTED, "%s/%s: reads another sparse format", dev->backend->name, variant);
    if (strcmp(bench, "gemm") == 0 && pb__gemm_shaped(args) && !(v->desc.flags & PB_VARIANT_SHAPED))
        return pb__fail(PB_ERR_UNSUPPORTED, "%s/%s: takes no launch shape (block_x, block_y, groups)",
                        dev->backend->name, variant);
    const char *why = NULL;
    if (strcmp(bench, "gemm") == 0 &&
        !pb__gemm_variant_takes(dev->backend, v, ((const struct pb_gemm_args *)args)->prec, &why))
        return pb__fail(PB_ERR_UNSUPPORTED, "%s/%s: %s", dev->backend->name, variant, why);
    if (strcmp(bench, "spmv") == 0 && !pb__spmv_variant_takes(dev->backend, v, args, &why))
        return pb__fail(PB_ERR_UNSUPPORTED, "%s/%s: %s", dev->backend->name, variant, why);
    if (v->supports && !v->supports(dev, args, &why))
        return pb__fail(PB_ERR_UNSUPPORTED, "%s/%s: %s", dev->backend->name, variant,
                        why ? why : "unsupported arguments");
    bool empty;
    if ((st = pb__kernel_empty(dev, bench, args, &empty)) != PB_OK || empty)
        return st;
    if (strcmp(bench, "spmv") == 0 && (st = pb__spmv_contents_check(dev, args)) != PB_OK)
        return st;
    st = v->run(dev, args, s);
    /* What the kernel wrote (even in part, before failing) is new content: a
     * variant's cache derived from it (another family's input) is stale. */
    pb_buf *out[3];
    for (size_t i = 0, n = pb__args_outputs(bench, args, out); i < n; i++)
        if (out[i])
            out[i]->stamp = pb__new_stamp();
    return st;
}

pb_status pb_gemm(pb_device *dev, const char *variant, const struct pb_gemm_args *args)
{
    return pb_kernel_run(dev, "gemm", variant, args);
}

pb_status pb_spmv(pb_device *dev, const char *variant, const struct pb_spmv_args *args)
{
    return pb_kernel_run(dev, "spmv", variant, args);
}

pb_status pb_conv(pb_device *dev, const char *variant, const struct pb_conv_args *args)
{
    return pb_kernel_run(dev, "conv", variant, args);
}

pb_status pb_transpose(pb_device *dev, const char *variant, const struct pb_transpose_args *args)
{
    return pb_kernel_run(dev, "transpose", variant, args);
}

pb_status pb_reduce(pb_device *dev, const char *variant, const struct pb_reduce_args *args)
{
    return pb_kernel_run(dev, "reduce", variant, args);
}

enum pb_sparse_format pb__spmv_variant_format(const struct pb_variant *v)
{
    return v->data ? *(const enum pb_sparse_format *)v->data : PB_SPARSE_CSR;
}

/* b's first variant of bench in the defaults' order, whatever the arguments. */
static const struct pb_variant *default_of(const pb_backend *b, const char *bench)
{
    const size_t names = sizeof defaults[0].names / sizeof defaults[0].names[0];
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        for (size_t j = 0; strcmp(defaults[i].bench, bench) == 0 && j < names && defaults[i].names[j]; j++) {
            const struct pb_variant *v = pb__variant_find(b, bench, defaults[i].names[j]);
            if (v)
                return v;
        }
    return NULL;
}

pb_status pb_spmv_format(const pb_backend *b, const char *variant, enum pb_sparse_format *out)
{
    PB_NOT_NULL(out, "the format to fill");
    PB_NOT_NULL(b, "the backend");
    const struct pb_variant *v = variant ? pb__variant_find(b, "spmv", variant) : default_of(b, "spmv");
    if (!v)
        return pb__fail(PB_ERR_NOT_FOUND, "no spmv variant '%s'", variant ? variant : "(default)");
    *out = pb__spmv_variant_format(v);
    return PB_OK;
}

const enum pb_sparse_format pb__spmv_csr = PB_SPARSE_CSR, pb__spmv_ell = PB_SPARSE_ELL,
                            pb__spmv_ellt = PB_SPARSE_ELLT;

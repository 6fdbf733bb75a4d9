/* conv: separable 2D convolution of an image in device memory (study 003,
 * step 2). A row pass into an intermediate image, then a column pass, with a
 * filter of radius R. Each row also reports, measured once per binding, the
 * transfer of the image in and the result out through pinned memory (the
 * study's transfer time), kernel/transfer, their total, the time bound of
 * moving the image four times (read and write per pass) at the device's
 * measured device-to-device copy bandwidth, the time bound of its FMAs at the
 * ceilings file's FMA peak, and the kernel's fraction of the higher bound.
 * Kernel times are the trimmed mean of the repetitions (the study timed 12
 * runs dropping min and max: --reps 12). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"
#include "bench/conv_host.h"
#include "core/core.h"
#include "parbench/pb_kernels.h"

static const struct pb_param_def conv_params[] = {
    [PB_CONV_P_WIDTH] = {"width", "image width", "1024"},
    [PB_CONV_P_HEIGHT] = {"height", "image height (default: the width)", NULL},
    [PB_CONV_P_RADIUS] = {"radius", "filter radius R (2R+1 taps; default 2,8, or a filter file's own)", NULL},
    [PB_CONV_P_BORDER] = {"border", "zero or clamp", "zero", true},
    [PB_CONV_P_FILTER] = {"filter", "gauss (sigma R/3), gauss:SIGMA, box, or a file of 2R+1 taps", "gauss", true},
};

static const char *const conv_extra_names[] = {"kernel_s",    "transfer_s",  "ratio",     "total_s",
                                               "d2d_bound_s", "fma_bound_s", "bound_frac"};

struct conv_state {
    struct pb_conv_args args;
    pb_buf *in, *tmp, *out, *filter;
    void *download;
    double transfer_s, d2d_s;
};

static pb_status conv_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                           size_t max, size_t *n)
{
    static const int64_t radii[] = {2, 8};
    return pb__conv_plan(l, PB_CONV_N_SHAPE, radii, 2, prec, out, max, n);
}

static pb_status conv_prepare(const struct pb_problem *p, uint64_t seed, void **host)
{
    struct pb_conv_shape shape = pb__conv_shape(p);
    return pb__conv_host_prepare(&shape, seed, (struct pb_conv_host **)host);
}

static void conv_unbind(void *state)
{
    struct conv_state *s = state;
    if (!s)
        return;
    pb_buf_free(s->in);
    pb_buf_free(s->tmp);
    pb_buf_free(s->out);
    pb_buf_free(s->filter);
    pb__host_free(s->download);
    free(s);
}

/* Least of three timings of copying src to dst, and (when src2) src2 to dst2
 * after it: what the hardware can do. */
static pb_status time_copies(pb_device *dev, pb_buf *dst, const pb_buf *src, pb_buf *dst2, const pb_buf *src2,
                             size_t bytes, double *out)
{
    pb_timer *t;
    pb_status st = pb_timer_create(dev, &t);
    *out = INFINITY;
    for (int r = 0; r < 3 && st == PB_OK; r++) {
        double seconds = 0;
        st = pb_timer_start(t, NULL);
        if (st == PB_OK)
            st = pb_buf_copy(dst, 0, src, 0, bytes, NULL);
        if (st == PB_OK && src2)
            st = pb_buf_copy(dst2, 0, src2, 0, bytes, NULL);
        if (st == PB_OK)
            st = pb_timer_stop(t, NULL);
        if (st == PB_OK)
            st = pb_device_sync(dev);
        if (st == PB_OK)
            st = pb_timer_elapsed(t, &seconds);
        if (st == PB_OK && seconds < *out)
            *out = seconds;
    }
    pb_timer_destroy(t);
    return st;
}

/* The study's transfer time (image in, result out, pinned) and the
 * device-to-device copy time of one image. */
static pb_status time_transfers(pb_device *dev, struct conv_state *s, const void *image, size_t bytes)
{
    pb_buf *pin_in = NULL, *pin_out = NULL;
    pb_status st = pb_buf_alloc(dev, PB_MEM_PINNED, bytes, &pin_in);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_PINNED, bytes, &pin_out);
    if (st == PB_OK)
        st = pb_buf_write(pin_in, 0, image, bytes);
    if (st == PB_OK)
        st = time_copies(dev, s->in, pin_in, pin_out, s->out, bytes, &s->transfer_s);
    if (st == PB_OK)
        st = time_copies(dev, s->tmp, s->in, NULL, NULL, bytes, &s->d2d_s);
    pb_buf_free(pin_in);
    pb_buf_free(pin_out);
    return st;
}

static pb_status conv_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                           void **state, const void **args)
{
    (void)v;
    const struct pb_conv_host *h = host;
    *state = NULL;
    if (h->overflow[0])
        return pb__fail(PB_ERR_UNSUPPORTED, "%s", h->overflow);
    struct pb_conv_shape sh = pb__conv_shape(p);
    size_t elt = pb_precision_size(p->prec), bytes = sh.width * sh.height * elt, fbytes = (2 * sh.radius + 1) * elt;
    struct conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "conv: out of host memory");
    void *f = NULL;
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &s->in);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &s->tmp);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &s->out);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, fbytes, &s->filter);
    if (st == PB_OK)
        st = pb__conv_filter_cast(h->taps, sh.radius, p->prec, &f);
    if (st == PB_OK)
        st = pb_buf_write(s->filter, 0, f, fbytes);
    pb__host_free(f);
    if (st == PB_OK)
        st = time_transfers(dev, s, h->image, bytes);
    if (st == PB_OK) /* after the timings, which overwrite it */
        st = pb_buf_write(s->in, 0, h->image, bytes);
    if (st == PB_OK && !pb_buf_host_ptr(s->out))
        st = pb__host_alloc(bytes, "conv result download", &s->download);
    if (st != PB_OK) {
        conv_unbind(s);
        return st;
    }
    s->args = (struct pb_conv_args){.prec = p->prec, .width = sh.width, .height = sh.height, .in_rows = sh.height,
                                    .in_top = 0, .radius = sh.radius, .border = sh.border, .filter = s->filter,
                                    .in = s->in, .tmp = s->tmp, .out = s->out};
    *state = s;
    *args = &s->args;
    return PB_OK;
}

static pb_status conv_poison(void *state)
{
    struct conv_state *s = state;
    pb_status st = pb_buf_fill_bytes(s->out, 0xFF);
    return st == PB_OK ? pb_buf_fill_bytes(s->tmp, 0xFF) : st;
}

static pb_status conv_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    struct conv_state *s = state;
    const struct pb_conv_host *h = host;
    void *image = pb_buf_host_ptr(s->out);
    if (!image) {
        pb_status st = pb_buf_read(s->out, 0, s->download, pb_buf_size(s->out));
        if (st != PB_OK)
            return st;
        image = s->download;
    }
    return pb__conv_host_check(h, image, corrupt, out);
}

static void conv_extras(void *state, const struct pb_stats *time, const struct pb_ceiling *ceiling, double *out)
{
    const struct conv_state *s = state;
    const struct pb_conv_args *a = &s->args;
    double kernel = time->trimmed_mean, copy = 2.0 * s->d2d_s; /* a copy moves the image twice */
    double peak = ceiling ? (a->prec == PB_DOUBLE ? ceiling->fp64_gflops : ceiling->fp32_gflops) : NAN;
    double flops = 4.0 * (2.0 * a->radius + 1) * (double)a->width * (double)a->height;
    double fma = peak > 0 ? flops / (peak * 1e9) : NAN;
    double bound = isnan(fma) ? copy : fmax(copy, fma);
    out[0] = kernel;
    out[1] = s->transfer_s;
    out[2] = s->transfer_s > 0 ? kernel / s->transfer_s : NAN;
    out[3] = kernel + s->transfer_s;
    out[4] = copy;
    out[5] = fma;
    out[6] = kernel > 0 ? bound / kernel : NAN;
}

const struct pb_bench pb__bench_conv = {
    .name = "conv",
    .summary = "separable 2D convolution (row pass, column pass) of an image in device memory",
    .flop_model = "4*(2R+1)*width*height (two passes)",
    .byte_model = "4*width*height*element size (each pass reads and writes the image)",
    .params = conv_params,
    .n_params = sizeof conv_params / sizeof conv_params[0],
    .baseline_backend = "ref",
    .baseline_variant = "rowcol",
    .extra_names = conv_extra_names,
    .n_extras = sizeof conv_extra_names / sizeof conv_extra_names[0],
    .extras = conv_extras,
    .plan = conv_plan,
    .describe = pb__conv_describe,
    .flops = pb__conv_flops,
    .bytes = pb__conv_bytes,
    .prepare = conv_prepare,
    .release = pb__conv_host_release,
    .bind = conv_bind,
    .poison = conv_poison,
    .check = conv_check,
    .unbind = conv_unbind,
};

/* conv-stream: separable convolution of an image in host memory, of any
 * size, through the device in horizontal strips (study 003, steps 3-5). Each
 * strip of output rows travels with up to R halo rows above and below; both
 * passes run per strip. Variants:
 *   strips   one set of buffers, every step blocking (the study's step 3)
 *   streams  --streams sets of buffers, each on its own stream, so the copies
 *            of one strip overlap the kernels of another (step 4)
 * --host-mem says how strips reach the host images: straight from and to
 * them, page-locked in place once at bind (pinned: no host copy, the link's
 * own rate), or through pinned strip-sized buffers (staged: a memcpy each
 * way, nothing locked beyond the strips); auto pins where the backend and the
 * host's free memory allow. --device-mem caps the device memory the strips use
 * (strips shrink to fit), which also forces many strips on small tests.
 * Extra columns: the kernels alone and the transfers alone (every strip, the
 * same schedule without the other part; least of three), kernel/transfer,
 * the total (the row's trimmed mean), max(kernel, transfer) and the overlap
 * efficiency max(kernel, transfer) / total (1 = the shorter part fully
 * hidden). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/conv_host.h"
#include "core/backend_impl.h"
#include "core/core.h"

enum { P_STREAMS = PB_CONV_N_SHAPE, P_STRIP, P_DEVMEM, P_KERNEL, P_HOSTMEM };

static const char *const host_mem_names[] = {
    [PB_CONV_STAGED] = "staged", [PB_CONV_PINNED] = "pinned", [PB_CONV_PIN_IF_ABLE] = "auto"};

static const struct pb_param_def cs_params[] = {
    [PB_CONV_P_WIDTH] = {"width", "image width", "4096"},
    [PB_CONV_P_HEIGHT] = {"height", "image height (default: the width)", NULL},
    [PB_CONV_P_RADIUS] = {"radius", "filter radius R (2R+1 taps; default 8, or a filter file's own)", NULL},
    [PB_CONV_P_BORDER] = {"border", "zero or clamp", "zero", true},
    [PB_CONV_P_FILTER] = {"filter", "gauss (sigma R/3), gauss:SIGMA, box, or a file of 2R+1 taps", "gauss", true},
    [P_STREAMS] = {"streams", "streams (sets of strip buffers) of the streams variant", "3"},
    [P_STRIP] = {"strip", "output rows per strip (0 = height/64, at least 8R, within --device-mem)", "0"},
    [P_DEVMEM] = {"device-mem", "device memory the strips may use, e.g. 512M (0 = no cap)", "0"},
    [P_KERNEL] = {"kernel", "conv kernel of the backend run on each strip (auto = its fastest)", "auto", true},
    [P_HOSTMEM] = {"host-mem", "pinned (the images page-locked in place), staged (through pinned strip buffers) "
                   "or auto (pinned where possible)", "auto", true},
};

static const char *const cs_extra_names[] = {"kernel_s", "transfer_s", "ratio", "total_s",
                                             "bound_s", "efficiency", "strip_rows", "device_bytes"};

struct cs_kind {
    bool streams;
};

struct cs_state {
    struct pb_conv_engine *engine;
    const struct pb_conv_host *host;
    void *out; /* the result image, host memory */
    size_t bytes;
    double kernel_s, transfer_s;
};

static pb_status cs_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                         size_t max, size_t *n_out)
{
    static const int64_t radii[] = {8};
    pb_status st = pb__conv_plan(l, sizeof cs_params / sizeof cs_params[0], radii, 1, prec, out, max, n_out);
    for (size_t i = 0; i < *n_out && st == PB_OK; i++) {
        const struct pb_problem *p = &out[i];
        if (p->v[P_STREAMS] < 1 || p->v[P_STREAMS] > 64)
            return pb__fail(PB_ERR_INVALID, "--streams must be between 1 and 64 (got %lld)",
                            (long long)p->v[P_STREAMS]);
        if (p->v[P_STRIP] < 0 || p->v[P_DEVMEM] < 0)
            return pb__fail(PB_ERR_INVALID, "--strip and --device-mem must not be negative");
        size_t m = 0;
        while (m < 3 && strcmp(p->s[P_HOSTMEM], host_mem_names[m]) != 0)
            m++;
        if (m == 3)
            return pb__fail(PB_ERR_INVALID, "--host-mem: pinned, staged or auto (got '%s')", p->s[P_HOSTMEM]);
        out[i].v[P_HOSTMEM] = (int64_t)m;
        /* A kernel no backend has is a typo, not an UNSUPPORTED row per backend. */
        const char *kernel = p->s[P_KERNEL];
        bool known = !kernel || strcmp(kernel, "auto") == 0;
        for (size_t b = 0; !known && b < pb_backend_count(); b++)
            known = pb__variant_find(pb_backend_at(b), "conv", kernel) != NULL;
        if (!known)
            return pb__fail(PB_ERR_INVALID, "--kernel: no backend has a conv kernel '%s' (auto or a conv variant: "
                            "see parbench list)", kernel);
        /* --device-mem too small for even one strip: nothing could run (a usage error, as for parbench conv).
         * Where it holds one strip but not --streams of them, the streams rows are UNSUPPORTED. */
        struct pb_conv_job one = {.shape = pb__conv_shape(p), .slots = 1, .strip_rows = (size_t)p->v[P_STRIP],
                                  .device_mem = (size_t)p->v[P_DEVMEM]};
        size_t rows;
        if (one.device_mem && one.shape.radius && (st = pb__conv_strip_rows(&one, &rows)) != PB_OK)
            return st;
    }
    return st;
}

static void cs_describe(const struct pb_problem *p, char *buf, size_t len)
{
    char shape[128], mem[32] = "";
    pb__conv_describe(p, shape, sizeof shape);
    if (p->v[P_DEVMEM])
        pb__format_bytes((double)p->v[P_DEVMEM], mem, sizeof mem);
    const char *host_mem = p->v[P_HOSTMEM] == PB_CONV_PIN_IF_ABLE ? "" : host_mem_names[p->v[P_HOSTMEM]];
    /* a kernel asked for by name is part of the label: rows of two kernels must not read alike */
    const char *kernel = p->s[P_KERNEL] && strcmp(p->s[P_KERNEL], "auto") != 0 ? p->s[P_KERNEL] : NULL;
    snprintf(buf, len, "%s k%lld%s%s%s%s%s%s", shape, (long long)p->v[P_STREAMS], mem[0] ? " cap " : "", mem,
             host_mem[0] ? " " : "", host_mem, kernel ? " kernel " : "", kernel ? kernel : "");
}

static pb_status cs_prepare(const struct pb_problem *p, uint64_t seed, void **host)
{
    struct pb_conv_shape shape = pb__conv_shape(p);
    /* the strips of both variants (one set of buffers, --streams sets), for the check's sample */
    for (int k = 0; k < 2; k++) {
        struct pb_conv_job job = {.shape = shape, .slots = k ? (size_t)p->v[P_STREAMS] : 1,
                                  .strip_rows = (size_t)p->v[P_STRIP], .device_mem = (size_t)p->v[P_DEVMEM]};
        if (pb__conv_strip_rows(&job, &shape.strips[k]) != PB_OK)
            shape.strips[k] = 0, pb__clear_error();
    }
    return pb__conv_host_prepare(&shape, seed, (struct pb_conv_host **)host);
}

static void cs_unbind(void *state)
{
    struct cs_state *s = state;
    if (!s)
        return;
    pb__conv_engine_free(s->engine);
    pb__host_free(s->out);
    free(s);
}

/* Least of three runs of one part. */
static pb_status time_part(struct cs_state *s, enum pb_conv_part part, double *out)
{
    *out = INFINITY;
    for (int r = 0; r < 3; r++) {
        double t0 = pb__now();
        pb_status st = pb__conv_engine_run(s->engine, s->host->image, s->out, part);
        if (st != PB_OK)
            return st;
        double t = pb__now() - t0;
        if (t < *out)
            *out = t;
    }
    return PB_OK;
}

static pb_status cs_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                         void **state, const void **args)
{
    const struct cs_kind *kind = v->data;
    const struct pb_conv_host *h = host;
    *state = NULL;
    if (h->overflow[0])
        return pb__fail(PB_ERR_UNSUPPORTED, "%s", h->overflow);
    struct cs_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "conv-stream: out of host memory");
    s->host = h;
    struct pb_conv_job job = {.shape = pb__conv_shape(p), .variant = p->s[P_KERNEL],
                              .slots = kind->streams ? (size_t)p->v[P_STREAMS] : 1, .streams = kind->streams,
                              .strip_rows = (size_t)p->v[P_STRIP], .device_mem = (size_t)p->v[P_DEVMEM],
                              .host_mem = (enum pb_conv_host_mem)p->v[P_HOSTMEM], .in = h->image};
    s->bytes = job.shape.width * job.shape.height * pb_precision_size(p->prec);
    pb_status st = pb__host_alloc(s->bytes, "conv-stream result image", &s->out);
    job.out = s->out;
    /* Touched, so page-locking it does not fault in the zero page's copies mid-run. */
    if (st == PB_OK)
        memset(s->out, 0, s->bytes);
    if (st == PB_OK && (st = pb__conv_engine_create(dev, &job, h->taps, &s->engine)) == PB_ERR_INVALID)
        st = PB_ERR_UNSUPPORTED; /* --device-mem holds one strip (cs_plan made sure) but not --streams of them */
    *state = s;
    *args = s;
    if (st == PB_OK && pb__conv_engine_unsupported(s->engine))
        return PB_OK; /* cs_supports says why */
    if (st == PB_OK)
        st = time_part(s, PB_CONV_KERNELS, &s->kernel_s);
    if (st == PB_OK)
        st = time_part(s, PB_CONV_COPIES, &s->transfer_s);
    if (st != PB_OK) {
        cs_unbind(s);
        *state = NULL;
    }
    return st;
}

static bool cs_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    const struct cs_state *s = args;
    *why = pb__conv_engine_unsupported(s->engine);
    return !*why;
}

static pb_status cs_run(pb_device *dev, const void *args, pb_stream *stream)
{
    (void)dev, (void)stream;
    const struct cs_state *s = args;
    return pb__conv_engine_run(s->engine, s->host->image, s->out, PB_CONV_ALL);
}

static pb_status cs_poison(void *state)
{
    struct cs_state *s = state;
    memset(s->out, 0xFF, s->bytes);
    return PB_OK;
}

static pb_status cs_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    struct cs_state *s = state;
    return pb__conv_host_check(host, s->out, corrupt, out);
}

static void cs_extras(void *state, const struct pb_stats *time, const struct pb_ceiling *ceiling, double *out)
{
    (void)ceiling;
    const struct cs_state *s = state;
    double total = time->trimmed_mean, bound = s->kernel_s > s->transfer_s ? s->kernel_s : s->transfer_s;
    out[0] = s->kernel_s;
    out[1] = s->transfer_s;
    out[2] = s->transfer_s > 0 ? s->kernel_s / s->transfer_s : NAN;
    out[3] = total;
    out[4] = bound;
    out[5] = total > 0 ? bound / total : NAN;
    out[6] = (double)pb__conv_engine_strip_rows(s->engine);
    out[7] = (double)pb__conv_engine_device_bytes(s->engine);
}

static void cs_note(void *state, char *buf, size_t len)
{
    const struct cs_state *s = state;
    double pin_s;
    const char *why_staged;
    if (pb__conv_engine_pinned(s->engine, &pin_s, &why_staged))
        snprintf(buf, len, "kernel %s; images page-locked in place (%.3f s, once)", pb__conv_engine_variant(s->engine),
                 pin_s);
    else
        snprintf(buf, len, "kernel %s; staged through pinned strips (%s)", pb__conv_engine_variant(s->engine),
                 why_staged);
}

static const struct pb_variant cs_variants[] = {
    {.desc = {"conv-stream", "strips", "one set of strip buffers, blocking copies and kernels", 0},
     .supports = cs_supports, .run = cs_run, .data = &(const struct cs_kind){false}},
    {.desc = {"conv-stream", "streams", "--streams sets of strip buffers on their own streams, copies overlap kernels", 0},
     .supports = cs_supports, .run = cs_run, .data = &(const struct cs_kind){true}},
};

static double cs_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)v, (void)host;
    return 2.0 * (double)p->v[PB_CONV_P_WIDTH] * (double)p->v[PB_CONV_P_HEIGHT] * (double)pb_precision_size(p->prec);
}

/* The image goes to the device and comes back: the link both ways bounds
 * it, not device memory; the arithmetic against the FMA peak as conv's. */
static struct pb_roof cs_roof(const char *variant, const char *backend, const char *device, enum pb_precision prec)
{
    (void)variant, (void)backend, (void)device, (void)prec;
    return (struct pb_roof){PB_ROOF_FMA, PB_ROOF_BIDIR};
}

const struct pb_bench pb__bench_conv_stream = {
    .name = "conv-stream",
    .summary = "separable 2D convolution of a host image in strips through the device, with or without streams",
    .flop_model = "4*(2R+1)*width*height (two passes, halo rows not counted)",
    .byte_model = "2*width*height*element size (the image in, the result out)",
    .roof = cs_roof,
    .params = cs_params,
    .n_params = sizeof cs_params / sizeof cs_params[0],
    .baseline_variant = "strips",
    .extra_names = cs_extra_names,
    .n_extras = sizeof cs_extra_names / sizeof cs_extra_names[0],
    .extras = cs_extras,
    .note = cs_note,
    .plan = cs_plan,
    .describe = cs_describe,
    .flops = pb__conv_flops,
    .bytes = cs_bytes,
    .prepare = cs_prepare,
    .release = pb__conv_host_release,
    .bind = cs_bind,
    .poison = cs_poison,
    .check = cs_check,
    .unbind = cs_unbind,
    .variants = cs_variants,
    .n_variants = sizeof cs_variants / sizeof cs_variants[0],
};

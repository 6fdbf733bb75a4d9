/* overlap: hiding host<->device transfers behind computation (the GEMM-streams
 * study). Lm independent products C_i = A_i * B_i of size n, each copied in,
 * multiplied by a tiled GEMM kernel of the backend and copied out, on four
 * schedules:
 *   v3-pageable      blocking copies + kernel per matrix, pageable host memory
 *                    (the study's version 3)
 *   v3-pinned        the same with pinned memory (the control run the study
 *                    asked for: how much of the gain is pinned memory alone)
 *   streams-breadth  one stream per matrix, pinned; all copies in, then all
 *                    kernels, then all copies out (the study's version 5)
 *   streams-depth    the same, issued stream by stream (in, kernel, out)
 * Each row also reports the copies alone and the kernels alone, timed
 * separately on the same buffers one after another, and the overlap
 * efficiency max(copies, kernels) / time: 1 means the shorter part is fully
 * hidden. It can exceed 1 where copies in and out also overlap each other
 * (GPUs with two or more copy engines).
 * Every product is verified (all Lm use the same inputs, so one oracle). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/gemm_host.h"
#include "core/core.h"
#include "parbench/pb_kernels.h"

enum { P_N, P_LM, P_BS };

static const struct pb_param_def ov_params[] = {
    [P_N] = {"n", "matrix size (square products)", "224,864,1120,1728,4096"},
    [P_LM] = {"lm", "number of independent products", "1,5,10"},
    [P_BS] = {"bs", "tile of the GEMM kernel: 8, 16, 32 (tiledN), 0 = regblock", "8,16,32"},
};

enum schedule { SEQUENTIAL, BREADTH, DEPTH };

struct ov_kind {
    enum schedule schedule;
    enum pb_mem host;
};

struct ov_args {
    pb_device *dev;
    size_t lm;
    size_t bytes; /* of one matrix */
    enum schedule schedule;
    char kernel[16];
    pb_buf **host;   /* 3 per product: A, B, C */
    pb_buf **device; /* 3 per product */
    pb_stream **streams;
    struct pb_gemm_args *gemm; /* per product */
};

struct ov_state {
    struct ov_args args;
    double copy_s, kernel_s; /* the parts alone */
};

static const char *const ov_extra_names[] = {"copy_s", "kernel_s", "bound_s", "efficiency"};

static pb_status ov_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                         size_t max, size_t *n_out)
{
    size_t count = 0;
    for (size_t i = 0; i < l->count[P_N]; i++)
        for (size_t j = 0; j < l->count[P_LM]; j++)
            for (size_t b = 0; b < l->count[P_BS]; b++) {
                int64_t n = l->values[P_N][i], lm = l->values[P_LM][j], bs = l->values[P_BS][b];
                if (n < 1 || n > 1 << 20)
                    return pb__fail(PB_ERR_INVALID, "--n must be between 1 and 1048576 (got %lld)", (long long)n);
                if (lm < 1 || lm > 4096)
                    return pb__fail(PB_ERR_INVALID, "--lm must be between 1 and 4096 (got %lld)", (long long)lm);
                if (bs != 0 && bs != 8 && bs != 16 && bs != 32)
                    return pb__fail(PB_ERR_INVALID, "--bs must be 8, 16, 32 or 0 (got %lld)", (long long)bs);
                if (count >= max)
                    return pb__fail(PB_ERR_INVALID, "overlap: more than %zu problems", max);
                out[count++] = (struct pb_problem){.prec = prec, .v = {[P_N] = n, [P_LM] = lm, [P_BS] = bs}};
            }
    *n_out = count;
    return PB_OK;
}

static void kernel_name(const struct pb_problem *p, char *buf, size_t len)
{
    if (p->v[P_BS] == 0)
        snprintf(buf, len, "regblock");
    else
        snprintf(buf, len, "tiled%lld", (long long)p->v[P_BS]);
}

static void ov_describe(const struct pb_problem *p, char *buf, size_t len)
{
    char k[16];
    kernel_name(p, k, sizeof k);
    snprintf(buf, len, "%lldx%lld %s", (long long)p->v[P_LM], (long long)p->v[P_N], k);
}

static double ov_flops(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    (void)v;
    double n = (double)p->v[P_N];
    return 2.0 * n * n * n * (double)p->v[P_LM];
}

static double ov_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    (void)v;
    double n = (double)p->v[P_N];
    return 3.0 * n * n * (double)pb_precision_size(p->prec) * (double)p->v[P_LM];
}

static pb_status ov_prepare(const struct pb_problem *p, uint64_t seed, void **host)
{
    struct pb_problem g = pb__gemm_problem(p->prec, p->v[P_N], p->v[P_N], p->v[P_N]);
    return pb__gemm_host_prepare(&g, seed, host);
}

static void ov_unbind(void *state)
{
    struct ov_state *s = state;
    if (!s)
        return;
    struct ov_args *a = &s->args;
    for (size_t i = 0; i < 3 * a->lm; i++) {
        if (a->host)
            pb_buf_free(a->host[i]);
        if (a->device)
            pb_buf_free(a->device[i]);
    }
    for (size_t i = 0; a->streams && i < a->lm; i++)
        pb_stream_destroy(a->streams[i]);
    free(a->host);
    free(a->device);
    free(a->streams);
    free(a->gemm);
    free(s);
}

/* Copies of product i: inputs in, or the result out, on stream s (NULL = blocking). */
static pb_status copy_in(const struct ov_args *a, size_t i, pb_stream *s)
{
    pb_status st = pb_buf_copy(a->device[3 * i], 0, a->host[3 * i], 0, a->bytes, s);
    return st != PB_OK ? st : pb_buf_copy(a->device[3 * i + 1], 0, a->host[3 * i + 1], 0, a->bytes, s);
}

static pb_status copy_out(const struct ov_args *a, size_t i, pb_stream *s)
{
    return pb_buf_copy(a->host[3 * i + 2], 0, a->device[3 * i + 2], 0, a->bytes, s);
}

static pb_status kernel(const struct ov_args *a, size_t i, pb_stream *s)
{
    return pb_kernel_launch(a->dev, "gemm", a->kernel, &a->gemm[i], s);
}

/* Seconds for all copies or all kernels of the products, one after another;
 * the least of three, since it stands for what the hardware can do. */
static pb_status time_parts(struct ov_args *a, bool copies, double *out)
{
    pb_timer *t;
    pb_status st = pb_timer_create(a->dev, &t);
    double samples[3] = {0, 0, 0};
    for (int r = 0; r < 3 && st == PB_OK; r++) {
        st = pb_timer_start(t, NULL);
        for (size_t i = 0; i < a->lm && st == PB_OK; i++) {
            st = copies ? copy_in(a, i, NULL) : kernel(a, i, NULL);
            if (st == PB_OK && copies)
                st = copy_out(a, i, NULL);
        }
        if (st == PB_OK)
            st = pb_timer_stop(t, NULL);
        if (st == PB_OK)
            st = pb_device_sync(a->dev);
        if (st == PB_OK)
            st = pb_timer_elapsed(t, &samples[r]);
    }
    pb_timer_destroy(t);
    *out = samples[0];
    for (int r = 1; r < 3; r++)
        if (samples[r] < *out)
            *out = samples[r];
    return st;
}

static pb_status ov_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                         void **state, const void **args)
{
    const struct ov_kind *kind = v->data;
    *state = NULL;
    struct ov_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "overlap: out of host memory");
    struct ov_args *a = &s->args;
    size_t n = (size_t)p->v[P_N], lm = (size_t)p->v[P_LM];
    a->dev = dev;
    a->lm = lm;
    a->bytes = n * n * pb_precision_size(p->prec);
    a->schedule = kind->schedule;
    kernel_name(p, a->kernel, sizeof a->kernel);
    *state = s;
    if (!pb__variant_find(dev->backend, "gemm", a->kernel))
        return PB_OK; /* ov_supports says why */
    a->host = calloc(3 * lm, sizeof *a->host);
    a->device = calloc(3 * lm, sizeof *a->device);
    a->streams = calloc(lm, sizeof *a->streams);
    a->gemm = calloc(lm, sizeof *a->gemm);
    pb_status st = a->host && a->device && a->streams && a->gemm ? PB_OK
                                                                 : pb__fail(PB_ERR_NOMEM, "overlap: out of host memory");
    const void *inputs[2] = {pb__gemm_host_input(host, 'a'), pb__gemm_host_input(host, 'b')};
    for (size_t i = 0; i < lm && st == PB_OK; i++) {
        for (int m = 0; m < 3 && st == PB_OK; m++) {
            st = pb_buf_alloc(dev, kind->host, a->bytes, &a->host[3 * i + m]);
            if (st == PB_OK)
                st = pb_buf_alloc(dev, PB_MEM_DEVICE, a->bytes, &a->device[3 * i + m]);
            if (st == PB_OK && m < 2)
                st = pb_buf_write(a->host[3 * i + m], 0, inputs[m], a->bytes);
        }
        if (st == PB_OK && kind->schedule != SEQUENTIAL)
            st = pb_stream_create(dev, &a->streams[i]);
        a->gemm[i] = (struct pb_gemm_args){.prec = p->prec, .m = n, .n = n, .k = n, .alpha = 1, .beta = 0,
                                           .a = a->device[3 * i], .lda = n, .b = a->device[3 * i + 1], .ldb = n,
                                           .c = a->device[3 * i + 2], .ldc = n};
    }
    if (st == PB_OK)
        st = time_parts(a, true, &s->copy_s);
    if (st == PB_OK)
        st = time_parts(a, false, &s->kernel_s);
    if (st != PB_OK) {
        ov_unbind(s);
        *state = NULL;
        return st;
    }
    *args = a;
    return PB_OK;
}

static bool ov_supports(const pb_device *dev, const void *args, const char **why)
{
    const struct ov_args *a = args;
    if (!a || !pb__variant_find(dev->backend, "gemm", a->kernel)) {
        *why = "this backend has no such tiled GEMM kernel";
        return false;
    }
    return true;
}

static pb_status ov_run(pb_device *dev, const void *args, pb_stream *stream)
{
    (void)dev, (void)stream;
    const struct ov_args *a = args;
    pb_status st = PB_OK;
    switch (a->schedule) {
    case SEQUENTIAL:
        for (size_t i = 0; i < a->lm && st == PB_OK; i++) {
            st = copy_in(a, i, NULL);
            if (st == PB_OK)
                st = kernel(a, i, NULL);
            if (st == PB_OK)
                st = copy_out(a, i, NULL);
        }
        break;
    case BREADTH:
        for (size_t i = 0; i < a->lm && st == PB_OK; i++)
            st = copy_in(a, i, a->streams[i]);
        for (size_t i = 0; i < a->lm && st == PB_OK; i++)
            st = kernel(a, i, a->streams[i]);
        for (size_t i = 0; i < a->lm && st == PB_OK; i++)
            st = copy_out(a, i, a->streams[i]);
        break;
    case DEPTH:
        for (size_t i = 0; i < a->lm && st == PB_OK; i++) {
            st = copy_in(a, i, a->streams[i]);
            if (st == PB_OK)
                st = kernel(a, i, a->streams[i]);
            if (st == PB_OK)
                st = copy_out(a, i, a->streams[i]);
        }
        break;
    }
    return st;
}

static pb_status ov_poison(void *state)
{
    struct ov_args *a = &((struct ov_state *)state)->args;
    for (size_t i = 0; i < a->lm; i++) {
        pb_status st = pb_buf_fill_bytes(a->host[3 * i + 2], 0xFF);
        if (st == PB_OK)
            st = pb_buf_fill_bytes(a->device[3 * i + 2], 0xFF);
        if (st != PB_OK)
            return st;
    }
    return PB_OK;
}

/* Every product is checked; the row carries the worst. */
static pb_status ov_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    struct ov_args *a = &((struct ov_state *)state)->args;
    for (size_t i = 0; i < a->lm; i++) {
        struct pb_check c;
        pb_status st = pb__gemm_host_check(host, pb_buf_host_ptr(a->host[3 * i + 2]), corrupt && i == a->lm - 1, &c);
        if (st != PB_OK)
            return st;
        bool worse = i == 0 || (out->pass && !c.pass) ||
                     (out->pass == c.pass && (c.err_norm > out->err_norm || c.err_max > out->err_max));
        if (worse) {
            *out = c;
            if (!c.pass)
                snprintf(out->detail, sizeof out->detail, "product %zu: %.120s", i, c.detail);
        }
    }
    return PB_OK;
}

static void ov_extras(void *state, const struct pb_stats *time, const struct pb_ceiling *ceiling, double *out)
{
    (void)ceiling;
    const struct ov_state *s = state;
    double bound = s->copy_s > s->kernel_s ? s->copy_s : s->kernel_s;
    out[0] = s->copy_s;
    out[1] = s->kernel_s;
    out[2] = bound;
    out[3] = time->median > 0 ? bound / time->median : 0;
}

#define OV_VARIANT(NAME, SUMMARY, SCHEDULE, HOST)                                                           \
    {.desc = {"overlap", NAME, SUMMARY, 0}, .supports = ov_supports, .run = ov_run,                        \
     .data = &(const struct ov_kind){SCHEDULE, HOST}}
static const struct pb_variant ov_variants[] = {
    OV_VARIANT("v3-pageable", "per product: blocking copies in, kernel, copy out; pageable memory", SEQUENTIAL,
               PB_MEM_PAGEABLE),
    OV_VARIANT("v3-pinned", "the same with pinned memory (control run)", SEQUENTIAL, PB_MEM_PINNED),
    OV_VARIANT("streams-breadth", "stream per product: all copies in, all kernels, all copies out", BREADTH,
               PB_MEM_PINNED),
    OV_VARIANT("streams-depth", "stream per product, issued product by product", DEPTH, PB_MEM_PINNED),
};

/* GEMMs against the FMA peak, their operands through the link both ways. */
static struct pb_roof ov_roof(const char *variant, const char *backend, const char *device, enum pb_precision prec)
{
    (void)variant, (void)backend, (void)device, (void)prec;
    return (struct pb_roof){PB_ROOF_FMA, PB_ROOF_BIDIR};
}

const struct pb_bench pb__bench_overlap = {
    .name = "overlap",
    .summary = "Lm GEMMs with their transfers, sequential or overlapped on streams",
    .flop_model = "2*n^3*lm",
    .byte_model = "3*n^2*element size*lm (A and B in, C out)",
    .roof = ov_roof,
    .params = ov_params,
    .n_params = sizeof ov_params / sizeof ov_params[0],
    .baseline_variant = "v3-pageable",
    .extra_names = ov_extra_names,
    .n_extras = sizeof ov_extra_names / sizeof ov_extra_names[0],
    .extras = ov_extras,
    .plan = ov_plan,
    .describe = ov_describe,
    .flops = ov_flops,
    .bytes = ov_bytes,
    .prepare = ov_prepare,
    .release = pb__gemm_host_release,
    .bind = ov_bind,
    .poison = ov_poison,
    .check = ov_check,
    .unbind = ov_unbind,
    .variants = ov_variants,
    .n_variants = sizeof ov_variants / sizeof ov_variants[0],
};

/* reduce: the sum of n elements (the GPU lecture's reduction steps, study
 * 004, and modern kernels beside CUB). --type picks elements and
 * accumulators: float summed in float, float summed in double, int32 summed
 * modulo 2^32.
 *
 * Float inputs are positive (uniform in (0, 1]), so a sum that stalls (a
 * float accumulator past 2^24 that no longer grows) shows. The oracle is
 * Kahan's sum in double; integer sums are exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "core/core.h"
#include "core/rng.h"
#include "parbench/pb_kernels.h"

enum { P_N, P_TYPE };

static const struct pb_param_def red_params[] = {
    [P_N] = {"n", "elements summed", "1M"},
    [P_TYPE] = {"type", "0 = float summed in float, 1 = float summed in double, 2 = int32 (sum modulo 2^32)",
                "0,1,2"},
};

struct red_host {
    void *x;
    double sum, abs_sum; /* floats: Kahan in double; abs_sum = sum of |x| */
    uint32_t isum;
};

struct red_state {
    struct pb_reduce_args args;
    pb_buf *in, *out, *work;
};

static enum pb_reduce_type type_of(const struct pb_problem *p) { return (enum pb_reduce_type)p->v[P_TYPE]; }

static pb_status red_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                          size_t max, size_t *n_out)
{
    size_t count = 0;
    for (size_t i = 0; i < l->count[P_N]; i++)
        for (size_t t = 0; t < l->count[P_TYPE]; t++) {
            int64_t n = l->values[P_N][i], type = l->values[P_TYPE][t];
            if (n < 1)
                return pb__fail(PB_ERR_INVALID, "reduce: --n must be at least 1 (got %lld)", (long long)n);
            if (type < PB_REDUCE_FLOAT || type > PB_REDUCE_INT)
                return pb__fail(PB_ERR_INVALID, "reduce: --type %lld is not 0, 1 or 2", (long long)type);
            size_t bytes;
            if (!pb__mul_size((size_t)n, 4, &bytes))
                return pb__fail(PB_ERR_OVERFLOW, "reduce: %lld elements overflow", (long long)n);
            if (count >= max)
                return pb__fail(PB_ERR_INVALID, "reduce: more than %zu problems", max);
            out[count++] = (struct pb_problem){.prec = prec, .v = {[P_N] = n, [P_TYPE] = type}};
        }
    *n_out = count;
    return PB_OK;
}

static void red_describe(const struct pb_problem *p, char *buf, size_t len)
{
    snprintf(buf, len, "%lld %s", (long long)p->v[P_N], pb_reduce_type_name(type_of(p)));
}

/* Every element read once (the result is one scalar). */
static double red_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    (void)v;
    return (double)p->v[P_N] * (double)pb_reduce_elem_size(type_of(p));
}

static void red_release(void *host)
{
    struct red_host *h = host;
    if (h)
        pb__host_free(h->x);
    free(h);
}

static pb_status red_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    size_t n = (size_t)p->v[P_N];
    struct red_host *h = calloc(1, sizeof *h);
    if (!h)
        return pb__fail(PB_ERR_NOMEM, "reduce: out of host memory");
    pb_status st = pb__host_alloc(n * 4, "reduce input", &h->x);
    if (st != PB_OK) {
        red_release(h);
        return st;
    }
    struct pb_rng rng;
    pb__rng_init(&rng, seed, 1);
    if (type_of(p) == PB_REDUCE_INT) {
        uint32_t *x = h->x; /* the full range: sums wrap around */
        for (size_t i = 0; i < n; i++)
            h->isum += x[i] = (uint32_t)(pb__rng_next(&rng) >> 32);
    } else {
        float *x = h->x;
        double c = 0;
        for (size_t i = 0; i < n; i++) {
            x[i] = fabsf((float)pb__rng_uniform(&rng));
            double y = x[i] - c, t = h->sum + y;
            c = (t - h->sum) - y;
            h->sum = t;
            h->abs_sum += x[i];
        }
    }
    *out = h;
    return PB_OK;
}

static void red_unbind(void *state)
{
    struct red_state *s = state;
    if (!s)
        return;
    pb_buf_free(s->in);
    pb_buf_free(s->out);
    pb_buf_free(s->work);
    free(s);
}

static pb_status red_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                          void **state, const void **args)
{
    const struct red_host *h = host;
    size_t n = (size_t)p->v[P_N];
    *state = NULL;
    struct red_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "reduce: out of host memory");
    s->args = (struct pb_reduce_args){.type = type_of(p), .n = n};
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, n * 4, &s->in);
    if (st == PB_OK)
        st = pb_buf_write(s->in, 0, h->x, n * 4);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof(double), &s->out);
    s->args.in = s->in;
    s->args.out = s->out;
    /* Scratch is sized and allocated here, outside the timed runs. */
    if (st == PB_OK)
        st = pb_kernel_workspace(dev, "reduce", v->desc.name, &s->args, &s->args.work_bytes);
    if (st == PB_OK && s->args.work_bytes) {
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, s->args.work_bytes, &s->work);
        if (st == PB_OK)
            st = pb_buf_fill_bytes(s->work, 0);
        s->args.work = s->work;
    }
    if (st != PB_OK) {
        red_unbind(s);
        return st;
    }
    *state = s;
    *args = &s->args;
    return PB_OK;
}

/* NaN for float results; for int32 a pattern a kernel is unlikely to produce. */
static pb_status red_poison(void *state)
{
    struct red_state *s = state;
    return pb_buf_fill_bytes(s->out, s->args.type == PB_REDUCE_INT ? 0xA5 : 0xFF);
}

/* Tolerance of float sums, relative to sum |x|. Every variant here adds runs
 * of at most sqrt(n) elements per thread, then combines the runs in trees
 * (depth <= log2 n), so every element passes through at most d = sqrt(n) +
 * log2(n) + 2 additions. The worst case, d * u * sum |x| (Higham, Accuracy and
 * Stability, 4.2), is so loose past a few million elements that a sum 0.1%
 * off, or short of its last few dozen elements, passed. Rounding errors that
 * are independent and of mean zero give 8 sqrt(d) u instead, exceeded with a
 * probability below 1e-13 (Higham and Mary, SIAM J. Sci. Comput. 41(5),
 * 2019); the oracle's own error (Kahan in double, <= 2 u_double sum |x|) adds
 * 4 more. Measured errors sit 200-1400 times under it (ref, OpenMP, OpenCL). */
static double red_tolerance(enum pb_reduce_type t, size_t n)
{
    double u = t == PB_REDUCE_FLOAT ? 0x1p-24 : 0x1p-53;
    return u * (8 * sqrt(sqrt((double)n) + log2((double)n) + 2) + 4);
}

static pb_status red_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    struct red_state *s = state;
    const struct red_host *h = host;
    unsigned char got[sizeof(double)];
    pb_status st = pb_buf_read(s->out, 0, got, pb_reduce_result_size(s->args.type));
    if (st != PB_OK)
        return st;
    if (s->args.type == PB_REDUCE_INT) {
        uint32_t u;
        memcpy(&u, got, sizeof u);
        if (corrupt)
            u ^= 1;
        pb__check_begin(out, 0, "full");
        out->checked = 1;
        out->err_norm = out->err_max = u == h->isum ? 0 : 1;
        out->pass = u == h->isum;
        if (!out->pass)
            snprintf(out->detail, sizeof out->detail, "sum is %d, expected %d (modulo 2^32)", (int)(int32_t)u,
                     (int)(int32_t)h->isum);
        return PB_OK;
    }
    double x;
    if (s->args.type == PB_REDUCE_FLOAT) {
        float f;
        memcpy(&f, got, sizeof f);
        x = f;
    } else {
        memcpy(&x, got, sizeof x);
    }
    if (corrupt)
        x += h->abs_sum * 1e-3 + 1;
    pb__check_begin(out, red_tolerance(s->args.type, s->args.n), "full");
    out->checked = 1;
    out->err_norm = out->err_max = fabs(x - h->sum) / h->abs_sum;
    out->pass = isfinite(x) && out->err_max <= out->tol;
    if (!out->pass)
        snprintf(out->detail, sizeof out->detail, "sum is %.9g, expected %.9g (error %.3g > tolerance %.3g)", x,
                 h->sum, out->err_max, out->tol);
    return PB_OK;
}

const struct pb_bench pb__bench_reduce = {
    .name = "reduce",
    .roof = pb__roof_memory,
    .summary = "sum of n elements: float in float, float in double, int32 modulo 2^32 (--type)",
    .flop_model = "-",
    .byte_model = "n * element size (read once)",
    .typeless = true, /* --type, not --precision, picks the types */
    .params = red_params,
    .n_params = sizeof red_params / sizeof red_params[0],
    .baseline_variant = "cub", /* speed-up = CUB's time / the row's, on the CUDA backend */
    .plan = red_plan,
    .describe = red_describe,
    .bytes = red_bytes,
    .prepare = red_prepare,
    .release = red_release,
    .bind = red_bind,
    .poison = red_poison,
    .check = red_check,
    .unbind = red_unbind,
};

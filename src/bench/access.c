/* access: the coalescing and bank-conflict curves of the GPU lecture (study
 * 004). global-offset copies n elements starting `step` elements past an
 * aligned address, global-stride copies every step-th element, shared-stride
 * has threads read shared memory `step` elements apart (0 = all threads one
 * address, a broadcast). One row per step, ready to plot against it.
 *
 * Inputs are small integers, so the shared-memory sums are exact; every
 * element is checked exactly, including that elements outside the pattern
 * were not written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/exact.h"
#include "core/core.h"
#include "core/kernel_data.h"
#include "parbench/pb_kernels.h"

enum { P_N, P_STEP };

static const struct pb_param_def acc_params[] = {
    [P_N] = {"n", "elements copied, or threads reading shared memory", "16M"},
    [P_STEP] = {"step", "offset (global-offset) or stride (global-stride, shared-stride) in elements", "0:32:1"},
};

#define MAX_STEP 4096

struct acc_state {
    struct pb_access_args args;
    enum pb__access_pattern pattern;
    size_t len; /* elements of in and out */
    pb_buf *in, *out;
    void *host_in, *download;
};

static pb_status acc_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                          size_t max, size_t *n_out)
{
    size_t count = 0;
    for (size_t i = 0; i < l->count[P_N]; i++)
        for (size_t j = 0; j < l->count[P_STEP]; j++) {
            int64_t n = l->values[P_N][i], step = l->values[P_STEP][j];
            if (n < 1)
                return pb__fail(PB_ERR_INVALID, "access: --n must be at least 1 (got %lld)", (long long)n);
            if (step < 0 || step > MAX_STEP)
                return pb__fail(PB_ERR_INVALID, "access: --step must be between 0 and %d (got %lld)", MAX_STEP,
                                (long long)step);
            size_t bytes;
            if (!pb__mul_size((size_t)n, (size_t)(step + 1), &bytes) || !pb__mul_size(bytes, 8, &bytes))
                return pb__fail(PB_ERR_OVERFLOW, "access: %lld elements at step %lld overflow", (long long)n,
                                (long long)step);
            if (count >= max)
                return pb__fail(PB_ERR_INVALID, "access: more than %zu problems", max);
            out[count++] = (struct pb_problem){.prec = prec, .v = {[P_N] = n, [P_STEP] = step}};
        }
    *n_out = count;
    return PB_OK;
}

static void acc_describe(const struct pb_problem *p, char *buf, size_t len)
{
    snprintf(buf, len, "%lld step %lld", (long long)p->v[P_N], (long long)p->v[P_STEP]);
}

static enum pb__access_pattern pattern_of(const struct pb_variant *v)
{
    return *(const enum pb__access_pattern *)v->data;
}

/* Copies: the useful bytes, read + written (the lecture's effective
 * bandwidth). Shared memory: the bytes the loads deliver. */
static double acc_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    double n = (double)p->v[P_N], elt = (double)pb_precision_size(p->prec);
    return pattern_of(v) == PB__ACCESS_SHARED ? n * PB_ACCESS_SHARED_LOADS * elt : 2 * n * elt;
}

static pb_status acc_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    (void)p, (void)seed;
    *out = NULL; /* the input's size depends on the variant: each binding makes its own */
    return PB_OK;
}

static void acc_release(void *host) { (void)host; }

static void acc_unbind(void *state)
{
    struct acc_state *s = state;
    if (!s)
        return;
    pb_buf_free(s->in);
    pb_buf_free(s->out);
    pb__host_free(s->host_in);
    pb__host_free(s->download);
    free(s);
}

/* Input element i: a small integer, exact in float and in sums of 256,
 * hashed from i. A period (i % 17 - 8 was one, its 17 values summing to 0)
 * let a kernel that loaded fewer elements, or elements a period away, write
 * the expected sums. */
static double input_value(size_t i)
{
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15u;
    return (double)((h >> 32) % 17) - 8;
}

static void put(void *x, enum pb_precision prec, size_t i, double v)
{
    if (prec == PB_DOUBLE)
        ((double *)x)[i] = v;
    else
        ((float *)x)[i] = (float)v;
}

static pb_status acc_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                          void **state, const void **args)
{
    (void)host;
    *state = NULL;
    struct acc_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "access: out of host memory");
    size_t n = (size_t)p->v[P_N], step = (size_t)p->v[P_STEP], elt = pb_precision_size(p->prec);
    s->pattern = pattern_of(v);
    size_t in_len = s->pattern == PB__ACCESS_OFFSET   ? n + step
                    : s->pattern == PB__ACCESS_STRIDE ? (n - 1) * (step ? step : 1) + 1
                                                      : PB_ACCESS_SHARED_ELEMS;
    s->len = s->pattern == PB__ACCESS_SHARED ? n : in_len;
    pb_status st = pb__host_alloc(in_len * elt, "access input", &s->host_in);
    if (st == PB_OK) {
        for (size_t i = 0; i < in_len; i++)
            put(s->host_in, p->prec, i, input_value(i));
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, in_len * elt, &s->in);
    }
    if (st == PB_OK)
        st = pb_buf_write(s->in, 0, s->host_in, in_len * elt);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, s->len * elt, &s->out);
    if (st == PB_OK && !pb_buf_host_ptr(s->out))
        st = pb__host_alloc(s->len * elt, "access result download", &s->download);
    if (st != PB_OK) {
        acc_unbind(s);
        return st;
    }
    s->args = (struct pb_access_args){.prec = p->prec, .n = n, .step = step, .in = s->in, .out = s->out};
    *state = s;
    *args = &s->args;
    return PB_OK;
}

static pb_status acc_poison(void *state) { return pb_buf_fill_bytes(((struct acc_state *)state)->out, 0xFF); }

static pb_status acc_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    (void)host;
    struct acc_state *s = state;
    const struct pb_access_args *a = &s->args;
    size_t elt = pb_precision_size(a->prec);
    unsigned char *got = pb_buf_host_ptr(s->out);
    if (!got) {
        pb_status st = pb_buf_read(s->out, 0, s->download, s->len * elt);
        if (st != PB_OK)
            return st;
        got = s->download;
    }
    if (corrupt)
        got[(s->len - 1) * elt] ^= 0x40;
    double sums[PB_ACCESS_BLOCK];
    if (s->pattern == PB__ACCESS_SHARED)
        for (size_t t = 0; t < PB_ACCESS_BLOCK; t++) {
            sums[t] = 0;
            for (size_t k = 0; k < PB_ACCESS_SHARED_LOADS; k++)
                sums[t] += input_value((t * a->step + k) % PB_ACCESS_SHARED_ELEMS);
        }
    const unsigned char poison[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    unsigned char want[8];
    struct pb__exact e = {0};
    for (size_t i = 0; i < s->len; i++) {
        const void *w = want;
        if (s->pattern == PB__ACCESS_SHARED)
            put(want, a->prec, 0, sums[i % PB_ACCESS_BLOCK]);
        else if (s->pattern == PB__ACCESS_OFFSET ? i >= a->step : i % a->step == 0)
            w = (const unsigned char *)s->host_in + i * elt;
        else
            w = poison; /* outside the pattern: never written */
        pb__exact_add(&e, got + i * elt, w, elt, i);
    }
    pb__exact_end(&e, "element", out);
    return PB_OK;
}

/* Global-memory copies against device memory; shared-memory loads against
 * nothing (no on-chip ceiling is measured). */
static struct pb_roof acc_roof(const char *variant, const char *backend, const char *device, enum pb_precision prec)
{
    (void)backend, (void)device, (void)prec;
    return (struct pb_roof){PB_ROOF_NONE, strcmp(variant, "shared-stride") == 0 ? PB_ROOF_ONCHIP : PB_ROOF_MEMORY};
}

const struct pb_bench pb__bench_access = {
    .name = "access",
    .summary = "global-memory bandwidth vs offset and stride, shared-memory loads vs stride",
    .flop_model = "-",
    .byte_model = "copies: 2 * n * element size; shared: n * 256 loads * element size",
    .roof = acc_roof,
    .params = acc_params,
    .n_params = sizeof acc_params / sizeof acc_params[0],
    .plan = acc_plan,
    .describe = acc_describe,
    .bytes = acc_bytes,
    .prepare = acc_prepare,
    .release = acc_release,
    .bind = acc_bind,
    .poison = acc_poison,
    .check = acc_check,
    .unbind = acc_unbind,
};

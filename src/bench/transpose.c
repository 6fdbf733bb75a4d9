/* transpose: out = in^T for an m x n row-major matrix, float or double (the
 * GPU lecture's transpose steps, study 004). The `copy` variants (flagged
 * PB_VARIANT_BOUND) move the same bytes without transposing: the bound a
 * transpose can reach. Verified exactly: a transpose only moves bits. */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"
#include "bench/exact.h"
#include "core/core.h"
#include "core/rng.h"
#include "parbench/pb_kernels.h"

enum { P_M, P_N };

static const struct pb_param_def tr_params[] = {
    [P_M] = {"m", "rows of the input (default: n)", NULL},
    [P_N] = {"n", "columns of the input; with only --n given the matrix is square", "4096"},
};

struct tr_state {
    struct pb_transpose_args args;
    pb_buf *in, *out;
    void *download;
    bool copy; /* a bound variant: out = in */
};

static pb_status tr_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                         size_t max, size_t *n_out)
{
    size_t nm = l->count[P_M] ? l->count[P_M] : 1, count = 0;
    for (size_t in = 0; in < l->count[P_N]; in++)
        for (size_t im = 0; im < nm; im++) {
            int64_t n = l->values[P_N][in], m = l->count[P_M] ? l->values[P_M][im] : n;
            size_t bytes;
            if (m < 1 || n < 1)
                return pb__fail(PB_ERR_INVALID, "transpose sizes must be at least 1 (got m=%lld n=%lld)",
                                (long long)m, (long long)n);
            if (!pb__mul_size((size_t)m, (size_t)n, &bytes) || !pb__mul_size(bytes, pb_precision_size(prec), &bytes))
                return pb__fail(PB_ERR_OVERFLOW, "transpose %lldx%lld: matrix size overflows", (long long)m,
                                (long long)n);
            if (count >= max)
                return pb__fail(PB_ERR_INVALID, "transpose: more than %zu problems", max);
            out[count++] = (struct pb_problem){.prec = prec, .v = {[P_M] = m, [P_N] = n}};
        }
    *n_out = count;
    return PB_OK;
}

static void tr_describe(const struct pb_problem *p, char *buf, size_t len)
{
    snprintf(buf, len, "%lldx%lld", (long long)p->v[P_M], (long long)p->v[P_N]);
}

static size_t elems(const struct pb_problem *p) { return (size_t)p->v[P_M] * (size_t)p->v[P_N]; }

/* Every element read once and written once. */
static double tr_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    (void)v;
    return 2.0 * (double)elems(p) * (double)pb_precision_size(p->prec);
}

static pb_status tr_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    pb_status st = pb__host_alloc(elems(p) * pb_precision_size(p->prec), "transpose input", out);
    if (st != PB_OK)
        return st;
    struct pb_rng rng;
    pb__rng_init(&rng, seed, 1);
    pb__rng_fill(&rng, *out, p->prec, elems(p));
    return PB_OK;
}

static void tr_release(void *host) { pb__host_free(host); }

static void tr_unbind(void *state)
{
    struct tr_state *s = state;
    if (!s)
        return;
    pb_buf_free(s->in);
    pb_buf_free(s->out);
    pb__host_free(s->download);
    free(s);
}

static pb_status tr_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                         void **state, const void **args)
{
    *state = NULL;
    struct tr_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "transpose: out of host memory");
    size_t m = (size_t)p->v[P_M], n = (size_t)p->v[P_N], bytes = elems(p) * pb_precision_size(p->prec);
    s->copy = (v->desc.flags & PB_VARIANT_BOUND) != 0;
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &s->in);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &s->out);
    if (st == PB_OK)
        st = pb_buf_write(s->in, 0, host, bytes);
    if (st == PB_OK && !pb_buf_host_ptr(s->out))
        st = pb__host_alloc(bytes, "transpose result download", &s->download);
    if (st != PB_OK) {
        tr_unbind(s);
        return st;
    }
    s->args = (struct pb_transpose_args){.prec = p->prec, .rows = m, .cols = n, .in = s->in, .ld_in = n,
                                         .out = s->out, .ld_out = s->copy ? n : m};
    *state = s;
    *args = &s->args;
    return PB_OK;
}

static pb_status tr_poison(void *state) { return pb_buf_fill_bytes(((struct tr_state *)state)->out, 0xFF); }

static pb_status tr_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    struct tr_state *s = state;
    const struct pb_transpose_args *a = &s->args;
    size_t elt = pb_precision_size(a->prec), bytes = a->rows * a->cols * elt;
    unsigned char *got = pb_buf_host_ptr(s->out);
    if (!got) {
        pb_status st = pb_buf_read(s->out, 0, s->download, bytes);
        if (st != PB_OK)
            return st;
        got = s->download;
    }
    if (corrupt)
        got[bytes / 2] ^= 0x40;
    const unsigned char *in = host;
    struct pb__exact e = {0};
    /* In 64 x 64 blocks, so the strided side of a large matrix stays in cache. */
    const size_t out_rows = s->copy ? a->rows : a->cols, out_cols = s->copy ? a->cols : a->rows, B = 64;
    for (size_t r0 = 0; r0 < out_rows; r0 += B)
        for (size_t c0 = 0; c0 < out_cols; c0 += B)
            for (size_t r = r0; r < r0 + B && r < out_rows; r++)
                for (size_t c = c0; c < c0 + B && c < out_cols; c++) {
                    size_t o = r * a->ld_out + c, i = s->copy ? r * a->ld_in + c : c * a->ld_in + r;
                    pb__exact_add(&e, got + o * elt, in + i * elt, elt, o);
                }
    pb__exact_end(&e, "output element", out);
    return PB_OK;
}

const struct pb_bench pb__bench_transpose = {
    .name = "transpose",
    .roof = pb__roof_memory,
    .summary = "out = in^T, m x n row-major (copy = the same traffic without transposing)",
    .flop_model = "-",
    .byte_model = "2 * m * n * element size (read + write)",
    .params = tr_params,
    .n_params = sizeof tr_params / sizeof tr_params[0],
    .baseline_variant = "copy", /* speed-up = fraction of the backend's copy */
    .plan = tr_plan,
    .describe = tr_describe,
    .bytes = tr_bytes,
    .prepare = tr_prepare,
    .release = tr_release,
    .bind = tr_bind,
    .poison = tr_poison,
    .check = tr_check,
    .unbind = tr_unbind,
};

/* gemm: C = A * B, row-major, m x k times k x n, float or double; or
 * inputs in a tensor-core type (tf32, bf16, fp16: the float problem's inputs
 * rounded to nearest even) multiplied with fp32 accumulation into an fp32 C.
 *
 * Checked in full at O(m n + m k + k n) cost, at any size: every element must
 * be finite (an unwritten one is NaN), a few exact rows (the first, the last
 * and seeded ones) are compared element by element with the product
 * accumulated in double from the same rounded inputs, and every row is
 * covered by Freivalds' test: C*r against A*(B*r) for random vectors r,
 * computed in double with compensated sums. Each value is compared against
 * its own rounding-error scale (verify.h): an element against
 * u sqrt(k sum_p (a_ip b_pj)^2), a row of C*r against the same summed over
 * the row with weights r_j^2, u sqrt(k sum_p a_ip^2 sum_j (b_pj r_j)^2).
 * u is the accumulation's unit roundoff (pb__accum_roundoff): 2^-53 and 2^-24
 * for double and float, 2^-22 (1 + sqrt(k / 768)) for tf32/bf16/fp16 (fp32
 * sums on tensor cores, which truncate, and whose bias grows with k). The inputs' own unit roundoff (2^-11 for tf32 and fp16,
 * 2^-8 for bf16) has no part: the oracle multiplies the rounded inputs, the
 * very values every kernel reads, and their products are exact in fp32 (11 x
 * 11 significant bits at most), so only the accumulation errs. A kernel that
 * rounded them further (cuBLAS's FAST_TF32 rounds fp32 to TF32: a no-op on
 * values already TF32) would err by about that unit roundoff and fail. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/gemm_host.h"
#include "core/core.h"
#include "core/args.h"
#include "core/parse.h"
#include "core/precision.h"
#include "core/rng.h"
#include "parbench/pb_kernels.h"

enum { P_M, P_N, P_K, P_WG, P_GROUPS };

static const struct pb_param_def gemm_params[] = {
    [P_M] = {"m", "rows of A and C (default: n)", NULL},
    [P_N] = {"n", "columns of B and C; with only --n given the product is square", "512"},
    [P_K] = {"k", "columns of A, rows of B (default: n)", NULL},
    [P_WG] = {"wg", "naive GPU kernels: work-group shapes WIDTHxHEIGHT, e.g. 16x16,32x8,256x1 (width along "
                    "the columns of C; default 16x16)", NULL, true},
    [P_GROUPS] = {"groups", "naive GPU kernels: at most this many work-groups, each work-item then looping over "
                            "several elements of C (0 = as many as C needs)", "0"},
};

#define WG_MAX 65536 /* per dimension; what a device takes is its variant's check */

#define EXACT_ROWS 8 /* rows of C compared element by element */
#define N_VECTORS 2  /* Freivalds vectors, on each side */
#define FAULT 1e-3   /* --inject-fault: one element off by this times sum_p |a_ip b_pj| */

struct gemm_host {
    struct pb_problem p;
    uint64_t seed;
    void *a, *b;             /* inputs in the problem's precision (C: pb__precision_out) */
    size_t *rows, n_rows;    /* the exact rows */
    double *ref, *ref_scale; /* their oracle and error scales, n_rows x n */
    double *r;               /* Freivalds vectors, N_VECTORS x n */
    double *abr, *abr_scale; /* A*(B*r) and its scales, N_VECTORS x m */
    double *l;               /* left ones, N_VECTORS x m */
    double *lab, *lab_scale; /* (l*A)*B and its scales, N_VECTORS x n */
};

struct gemm_state {
    struct pb_gemm_args args;
    pb_buf *a, *b, *c;
    void *download; /* host copy of C, when C is not host memory */
};

static void dims(const struct pb_problem *p, size_t *m, size_t *n, size_t *k)
{
    *m = (size_t)p->v[P_M];
    *n = (size_t)p->v[P_N];
    *k = (size_t)p->v[P_K];
}

/* Bytes of a rows x cols matrix of elt-sized elements; false on overflow. */
static bool matrix_bytes(size_t rows, size_t cols, size_t elt, size_t *out)
{
    return pb__mul_size(rows, cols, out) && pb__mul_size(*out, elt, out);
}

/* "WIDTHxHEIGHT" into *w, *h. */
static pb_status parse_wg(const char *text, int64_t *w, int64_t *h)
{
    char *x = strchr(text, 'x');
    char head[32];
    size_t len = x ? (size_t)(x - text) : 0;
    if (!x || len == 0 || len >= sizeof head || !x[1])
        return pb__fail(PB_ERR_INVALID, "--wg: '%s' is not WIDTHxHEIGHT (e.g. 16x16)", text);
    memcpy(head, text, len);
    head[len] = '\0';
    if (pb__parse_int(head, "--wg width", w) != PB_OK || pb__parse_int(x + 1, "--wg height", h) != PB_OK)
        return pb__fail(PB_ERR_INVALID, "--wg: '%s' is not WIDTHxHEIGHT (e.g. 16x16)", text);
    if (*w < 1 || *h < 1 || *w > WG_MAX || *h > WG_MAX)
        return pb__fail(PB_ERR_INVALID, "--wg: %s: width and height must be between 1 and %d", text, WG_MAX);
    return PB_OK;
}

static pb_status gemm_plan(const struct pb_param_lists *l, enum pb_precision prec,
                           struct pb_problem *out, size_t max, size_t *n_out)
{
    /* m and k follow n unless given: then every combination is run, each
     * with every launch shape. */
    const struct pb_param_lists *L = l;
    size_t nn = L->count[P_N];
    size_t nm = L->count[P_M] ? L->count[P_M] : 1, nk = L->count[P_K] ? L->count[P_K] : 1;
    size_t nw = L->count[P_WG] ? L->count[P_WG] : 1, ng = L->count[P_GROUPS] ? L->count[P_GROUPS] : 1;
    size_t count = 0;
    for (size_t in = 0; in < nn; in++)
        for (size_t im = 0; im < nm; im++)
            for (size_t ik = 0; ik < nk; ik++)
                for (size_t iw = 0; iw < nw; iw++)
                    for (size_t ig = 0; ig < ng; ig++) {
                        int64_t n = L->values[P_N][in];
                        int64_t m = L->count[P_M] ? L->values[P_M][im] : n;
                        int64_t k = L->count[P_K] ? L->values[P_K][ik] : n;
                        int64_t groups = L->count[P_GROUPS] ? L->values[P_GROUPS][ig] : 0, w = 0, h = 0;
                        if (m < 1 || n < 1 || k < 1)
                            return pb__fail(PB_ERR_INVALID,
                                            "gemm sizes must be at least 1 (got m=%lld n=%lld k=%lld)",
                                            (long long)m, (long long)n, (long long)k);
                        if (groups < 0 || groups > ((int64_t)1 << 40))
                            return pb__fail(PB_ERR_INVALID, "--groups must be between 0 and 2^40 (got %lld)",
                                            (long long)groups);
                        pb_status st;
                        if (L->count[P_WG] && (st = parse_wg(L->text[P_WG][iw], &w, &h)) != PB_OK)
                            return st;
                        size_t bytes, elt = pb_precision_size(prec);
                        if (!elt)
                            return pb__fail(PB_ERR_INVALID, "gemm: unknown precision %d", (int)prec);
                        if (!matrix_bytes((size_t)m, (size_t)k, elt, &bytes) ||
                            !matrix_bytes((size_t)k, (size_t)n, elt, &bytes) ||
                            !matrix_bytes((size_t)m, (size_t)n, sizeof(double), &bytes))
                            return pb__fail(PB_ERR_OVERFLOW, "gemm %lldx%lldx%lld: matrix size overflows",
                                            (long long)m, (long long)n, (long long)k);
                        if (count >= max)
                            return pb__fail(PB_ERR_INVALID, "gemm: more than %zu problems", max);
                        struct pb_problem p = pb__gemm_problem(prec, m, n, k);
                        if (L->count[P_WG]) {
                            p.s[P_WG] = L->text[P_WG][iw];
                            p.v[P_WG] = w << 32 | h;
                        }
                        p.v[P_GROUPS] = groups;
                        out[count++] = p;
                    }
    *n_out = count;
    return PB_OK;
}

static unsigned wg_width(const struct pb_problem *p) { return (unsigned)(p->v[P_WG] >> 32); }
static unsigned wg_height(const struct pb_problem *p) { return (unsigned)(p->v[P_WG] & 0xffffffff); }

static void gemm_describe(const struct pb_problem *p, char *buf, size_t len)
{
    int used = snprintf(buf, len, "%lldx%lldx%lld", (long long)p->v[P_M], (long long)p->v[P_N],
                        (long long)p->v[P_K]);
    if (p->v[P_WG] && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, " wg %ux%u", wg_width(p), wg_height(p));
    if (p->v[P_GROUPS] && used >= 0 && (size_t)used < len)
        snprintf(buf + used, len - (size_t)used, " groups %lld", (long long)p->v[P_GROUPS]);
}

static double gemm_flops(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    (void)v;
    return 2.0 * (double)p->v[P_M] * (double)p->v[P_N] * (double)p->v[P_K];
}

static double gemm_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    (void)v;
    double m = (double)p->v[P_M], n = (double)p->v[P_N], k = (double)p->v[P_K];
    return (m * k + k * n) * (double)pb_precision_size(p->prec) +
           m * n * (double)pb_precision_size(pb__precision_out(p->prec));
}

static double elem(const void *x, enum pb_precision prec, size_t i) { return pb__precision_value(x, prec, i); }

/* Exact rows in double, ikj order, with each element's sum of squared terms
 * for its scale; rows are independent so threads split them. */
static void exact_rows(struct gemm_host *h)
{
    size_t m, n, k;
    dims(&h->p, &m, &n, &k);
    (void)m;
    enum pb_precision prec = h->p.prec;
    const long n_rows = (long)h->n_rows;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (long r = 0; r < n_rows; r++) {
        double *c = &h->ref[(size_t)r * n], *q = &h->ref_scale[(size_t)r * n];
        size_t i = h->rows[r];
        memset(c, 0, n * sizeof *c);
        memset(q, 0, n * sizeof *q);
        for (size_t p = 0; p < k; p++) {
            double aip = elem(h->a, prec, i * k + p);
            if (prec == PB_DOUBLE) {
                const double *b = (const double *)h->b + p * n;
                for (size_t j = 0; j < n; j++) {
                    double t = aip * b[j];
                    c[j] += t;
                    q[j] += t * t;
                }
            } else if (prec == PB_FLOAT || prec == PB_TF32) {
                const float *b = (const float *)h->b + p * n;
                for (size_t j = 0; j < n; j++) {
                    double t = aip * (double)b[j];
                    c[j] += t;
                    q[j] += t * t;
                }
            } else {
                for (size_t j = 0; j < n; j++) {
                    double t = aip * elem(h->b, prec, p * n + j);
                    c[j] += t;
                    q[j] += t * t;
                }
            }
        }
        for (size_t j = 0; j < n; j++)
            q[j] = pb__dot_scale(prec, (double)k, q[j]);
    }
}

/* out[i] = sum_t x[i*row_step + t*step] * v[t] over t < len, compensated,
 * and outq[i] = sum_t x^2 vq[t] (vq NULL: v^2), for rows i < rows. */
static void weighted_products(const void *x, enum pb_precision prec, size_t rows, size_t len, size_t row_step,
                              size_t step, const double *v, const double *vq, double *out, double *outq)
{
    const long nr = (long)rows;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long i = 0; i < nr; i++) {
        struct pb_ksum s = {0, 0};
        double q = 0;
        for (size_t t = 0; t < len; t++) {
            double e = elem(x, prec, (size_t)i * row_step + t * step);
            pb__ksum_add(&s, e * v[t]);
            q += e * e * (vq ? vq[t] : v[t] * v[t]);
        }
        out[i] = s.s + s.c;
        outq[i] = q;
    }
}

/* Freivalds vector v: from the right, r (pb__check_vector), w = B*r, then A*w
 * and its scales, a row of C each; from the left, l, w = l*A, then w*B, a
 * column each. C*r sums a row's n elements, so an error in one element
 * weighs against a scale of sqrt(n) elements' and escapes where C is wide
 * (n of a million in float); l*C sums a column's m elements. */
static pb_status freivalds_prepare(struct gemm_host *h, size_t v, bool left)
{
    size_t m, n, k;
    dims(&h->p, &m, &n, &k);
    enum pb_precision prec = h->p.prec;
    double *w;
    pb_status st = pb__host_alloc(2 * k * sizeof *w, "gemm check vectors", (void **)&w);
    if (st != PB_OK)
        return st;
    double *wq = w + k, *z, *zs, norm;
    size_t out;
    if (!left) {
        double *r = &h->r[v * n];
        norm = pb__check_vector(h->seed, 10 + v, r, n);
        weighted_products(h->b, prec, k, n, n, 1, r, NULL, w, wq);
        z = &h->abr[v * m], zs = &h->abr_scale[v * m], out = m;
        weighted_products(h->a, prec, m, k, k, 1, w, wq, z, zs);
    } else {
        double *l = &h->l[v * m];
        norm = pb__check_vector(h->seed, 30 + v, l, m);
        weighted_products(h->a, prec, k, m, 1, k, l, NULL, w, wq);
        z = &h->lab[v * n], zs = &h->lab_scale[v * n], out = n;
        weighted_products(h->b, prec, n, k, 1, n, w, wq, z, zs);
    }
    /* sqrt(sum s^2 r^2) over the elements' scales s (Minkowski) */
    double tiny = pb__dot_scale(prec, (double)k, 0);
    for (size_t i = 0; i < out; i++)
        zs[i] = pb__dot_scale(prec, (double)k, zs[i]) - tiny + tiny * norm;
    pb__host_free(w);
    return PB_OK;
}

void pb__gemm_host_release(void *host)
{
    struct gemm_host *h = host;
    if (!h)
        return;
    pb__host_free(h->a);
    pb__host_free(h->b);
    pb__host_free(h->ref);
    pb__host_free(h->ref_scale);
    pb__host_free(h->r);
    pb__host_free(h->abr);
    pb__host_free(h->abr_scale);
    pb__host_free(h->l);
    pb__host_free(h->lab);
    pb__host_free(h->lab_scale);
    free(h->rows);
    free(h);
}

pb_status pb__gemm_host_adopt(const struct pb_problem *p, uint64_t seed, void *a, void *b, void **out)
{
    size_t m, n, k, bytes;
    dims(p, &m, &n, &k);
    *out = NULL;
    struct gemm_host *h = calloc(1, sizeof *h);
    if (!h) {
        pb__host_free(a);
        pb__host_free(b);
        return pb__fail(PB_ERR_NOMEM, "gemm: out of host memory");
    }
    h->p = *p;
    h->seed = seed;
    h->a = a;
    h->b = b;
    h->n_rows = m <= EXACT_ROWS ? m : EXACT_ROWS;
    pb_status st = PB_OK;
    h->rows = malloc((h->n_rows ? h->n_rows : 1) * sizeof *h->rows);
    if (!h->rows)
        st = pb__fail(PB_ERR_NOMEM, "gemm: out of host memory");
    if (st == PB_OK && !matrix_bytes(h->n_rows, n, sizeof(double), &bytes))
        st = pb__fail(PB_ERR_OVERFLOW, "gemm: reference size overflows");
    if (st == PB_OK)
        st = pb__host_alloc(bytes, "gemm reference rows", (void **)&h->ref);
    if (st == PB_OK)
        st = pb__host_alloc(bytes, "gemm reference scales", (void **)&h->ref_scale);
    if (st == PB_OK)
        st = pb__host_alloc(N_VECTORS * n * sizeof(double), "gemm check vectors", (void **)&h->r);
    if (st == PB_OK)
        st = pb__host_alloc(N_VECTORS * m * sizeof(double), "gemm check products", (void **)&h->abr);
    if (st == PB_OK)
        st = pb__host_alloc(N_VECTORS * m * sizeof(double), "gemm check scales", (void **)&h->abr_scale);
    if (st == PB_OK)
        st = pb__host_alloc(N_VECTORS * m * sizeof(double), "gemm check vectors", (void **)&h->l);
    if (st == PB_OK)
        st = pb__host_alloc(N_VECTORS * n * sizeof(double), "gemm check products", (void **)&h->lab);
    if (st == PB_OK)
        st = pb__host_alloc(N_VECTORS * n * sizeof(double), "gemm check scales", (void **)&h->lab_scale);
    if (st != PB_OK) {
        pb__gemm_host_release(h);
        return st;
    }
    if (h->n_rows == m) {
        for (size_t i = 0; i < m; i++)
            h->rows[i] = i;
    } else {
        pb__rng_sample_rows(seed, m, h->rows, h->n_rows);
    }
    exact_rows(h);
    for (size_t v = 0; v < 2 * N_VECTORS && st == PB_OK; v++)
        st = freivalds_prepare(h, v % N_VECTORS, v >= N_VECTORS);
    if (st != PB_OK) {
        pb__gemm_host_release(h);
        return st;
    }
    *out = h;
    return PB_OK;
}

pb_status pb__gemm_host_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    size_t m, n, k, elt = pb_precision_size(p->prec);
    dims(p, &m, &n, &k);
    *out = NULL;
    /* All the host side at once, before a minute of filling inputs that
     * could never be checked: A, B, the reference rows, the check vectors. */
    double rows = (double)(m < EXACT_ROWS ? m : EXACT_ROWS),
           need = ((double)m * (double)k + (double)k * (double)n) * (double)elt + 2 * rows * (double)n * 8 +
                  3 * N_VECTORS * ((double)n + (double)m) * 8 + 2 * (double)k * 8 + (double)n * 16;
    char who[96];
    snprintf(who, sizeof who, "gemm %zux%zux%zu", m, n, k);
    pb_status st = pb__host_mem_need(need, who, "(inputs, reference, check vectors)");
    if (st != PB_OK)
        return st;
    void *a = NULL, *b = NULL;
    st = pb__host_alloc(m * k * elt, "gemm input A", &a);
    if (st == PB_OK)
        st = pb__host_alloc(k * n * elt, "gemm input B", &b);
    if (st != PB_OK) {
        pb__host_free(a);
        pb__host_free(b);
        return st;
    }
    struct pb_rng rng;
    pb__rng_init(&rng, seed, 1);
    pb__rng_fill(&rng, a, p->prec, m * k);
    pb__rng_init(&rng, seed, 2);
    pb__rng_fill(&rng, b, p->prec, k * n);
    return pb__gemm_host_adopt(p, seed, a, b, out);
}

static void gemm_unbind(void *state)
{
    struct gemm_state *s = state;
    if (!s)
        return;
    pb_buf_free(s->a);
    pb_buf_free(s->b);
    pb_buf_free(s->c);
    pb__host_free(s->download);
    free(s);
}

static pb_status gemm_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v,
                           void *host, void **state, const void **args)
{
    const struct gemm_host *h = host;
    if ((p->v[P_WG] || p->v[P_GROUPS]) && !(v->desc.flags & PB_VARIANT_SHAPED))
        return pb__fail(PB_ERR_UNSUPPORTED, "--wg and --groups apply to the naive GPU kernels only");
    const char *why = NULL;
    if (!pb__gemm_variant_takes(dev->backend, v, p->prec, &why))
        return pb__fail(PB_ERR_UNSUPPORTED, "%s", why);
    size_t m, n, k, elt = pb_precision_size(p->prec), elt_c = pb_precision_size(pb__precision_out(p->prec));
    dims(p, &m, &n, &k);
    *state = NULL;
    struct gemm_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "gemm: out of host memory");
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, m * k * elt, &s->a);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, k * n * elt, &s->b);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, m * n * elt_c, &s->c);
    if (st == PB_OK)
        st = pb_buf_write(s->a, 0, h->a, m * k * elt);
    if (st == PB_OK)
        st = pb_buf_write(s->b, 0, h->b, k * n * elt);
    if (st == PB_OK && !pb_buf_host_ptr(s->c))
        st = pb__host_alloc(m * n * elt_c, "gemm result download", &s->download);
    if (st != PB_OK) {
        gemm_unbind(s);
        return st;
    }
    s->args = (struct pb_gemm_args){.prec = p->prec, .m = m, .n = n, .k = k, .alpha = 1.0,
                                    .beta = 0.0, .a = s->a, .lda = k, .b = s->b, .ldb = n,
                                    .c = s->c, .ldc = n, .block_x = wg_width(p), .block_y = wg_height(p),
                                    .groups = (size_t)p->v[P_GROUPS]};
    *state = s;
    *args = &s->args;
    return PB_OK;
}

static pb_status gemm_poison(void *state)
{
    struct gemm_state *s = state;
    return pb_buf_fill_bytes(s->c, 0xFF);
}

/* The fault: a seeded element anywhere in C (not one the check prefers) off
 * by FAULT times the sum of its terms' magnitudes, an error a rounding model
 * never explains yet small enough to hide in a normwise measure. */
static void inject_fault(const struct gemm_host *h, void *c)
{
    size_t m, n, k;
    dims(&h->p, &m, &n, &k);
    struct pb_rng rng;
    pb__rng_init(&rng, h->seed, 20);
    size_t i = (size_t)(pb__rng_next(&rng) % m), j = (size_t)(pb__rng_next(&rng) % n);
    double mag = 0;
    for (size_t p = 0; p < k; p++)
        mag += fabs(elem(h->a, h->p.prec, i * k + p) * elem(h->b, h->p.prec, p * n + j));
    enum pb_precision out = pb__precision_out(h->p.prec);
    pb__precision_store(c, out, i * n + j, elem(c, out, i * n + j) + FAULT * mag);
}

pb_status pb__gemm_host_check(const void *host, void *c, bool corrupt, struct pb_check *out)
{
    const struct gemm_host *h = host;
    enum pb_precision prec = pb__precision_out(h->p.prec); /* of C */
    size_t m, n, k, elt = pb_precision_size(prec);
    dims(&h->p, &m, &n, &k);
    if (corrupt)
        inject_fault(h, c);
    pb__check_begin(out, PB_CHECK_TOL, "full");
    pb__check_finite(out, c, prec, m * n, 0);
    if (out->nonfinite) {
        pb__check_end(out);
        return PB_OK;
    }
    const unsigned char *bytes = c;
    for (size_t r = 0; r < h->n_rows; r++) {
        size_t i = h->rows[r];
        pb__check_add_scaled(out, bytes + i * n * elt, prec, &h->ref[r * n], &h->ref_scale[r * n], n, i * n,
                             "element");
    }
    double *y;
    pb_status st = pb__host_alloc(m * sizeof *y, "gemm check", (void **)&y);
    if (st != PB_OK)
        return st;
    const long mm = (long)m;
    for (size_t v = 0; v < N_VECTORS; v++) {
        const double *r = &h->r[v * n];
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (long i = 0; i < mm; i++) {
            struct pb_ksum s = {0, 0};
            for (size_t j = 0; j < n; j++)
                pb__ksum_add(&s, elem(c, prec, (size_t)i * n + j) * r[j]);
            y[i] = s.s + s.c;
        }
        pb__check_add_scaled(out, y, PB_DOUBLE, &h->abr[v * m], &h->abr_scale[v * m], m, 0, "row of C*r");
    }
    pb__host_free(y);
    struct pb_ksum *col;
    if ((st = pb__host_alloc(n * sizeof *col, "gemm check", (void **)&col)) != PB_OK)
        return st;
    const long nn = (long)n, chunk = 256;
    for (size_t v = 0; v < N_VECTORS; v++) {
        const double *l = &h->l[v * m];
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (long j0 = 0; j0 < nn; j0 += chunk) { /* a run of columns, down the rows */
            size_t j1 = (size_t)(j0 + chunk < nn ? j0 + chunk : nn);
            for (size_t j = (size_t)j0; j < j1; j++)
                col[j] = (struct pb_ksum){0, 0};
            for (size_t i = 0; i < m; i++)
                for (size_t j = (size_t)j0; j < j1; j++)
                    pb__ksum_add(&col[j], elem(c, prec, i * n + j) * l[i]);
        }
        double *yc = (double *)col; /* in place: col[j] is read before yc[j] is written */
        for (size_t j = 0; j < n; j++)
            yc[j] = col[j].s + col[j].c;
        pb__check_add_scaled(out, yc, PB_DOUBLE, &h->lab[v * n], &h->lab_scale[v * n], n, 0, "column of l*C");
    }
    pb__host_free(col);
    pb__check_end(out);
    return PB_OK;
}

const void *pb__gemm_host_input(const void *host, char which)
{
    const struct gemm_host *h = host;
    return which == 'a' ? h->a : h->b;
}

struct pb_problem pb__gemm_problem(enum pb_precision prec, int64_t m, int64_t n, int64_t k)
{
    return (struct pb_problem){.prec = prec, .v = {[P_M] = m, [P_N] = n, [P_K] = k}};
}

static pb_status gemm_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    struct gemm_state *s = state;
    const struct gemm_host *h = host;
    size_t m, n, k, elt = pb_precision_size(pb__precision_out(h->p.prec));
    dims(&h->p, &m, &n, &k);
    void *c = pb_buf_host_ptr(s->c);
    if (!c) {
        pb_status st = pb_buf_read(s->c, 0, s->download, m * n * elt);
        if (st != PB_OK)
            return st;
        c = s->download;
    }
    return pb__gemm_host_check(host, c, corrupt, out);
}

/* Against the FMA peak; FP64 products on tensor cores (dmma, cuBLAS on the
 * parts that have them) outrun it, and no tensor peak is measured: their
 * fraction stays empty rather than above 100%. So does every row in a
 * tensor-core type (tf32, bf16, fp16), whichever variant computed it: the
 * FMA peak of float is no ceiling of theirs. */
struct pb_roof pb__gemm_roof(const char *variant, const char *backend, const char *device, enum pb_precision prec)
{
    bool cublas = strcmp(backend, "cuda") == 0 && strcmp(variant, "cublas") == 0 && pb__fp64_tensor_device(device);
    bool tensor = pb__precision_lowp(prec) || (prec == PB_DOUBLE && (strcmp(variant, "dmma") == 0 || cublas));
    return (struct pb_roof){tensor ? PB_ROOF_TENSOR : PB_ROOF_FMA, PB_ROOF_NONE};
}

const struct pb_bench pb__bench_gemm = {
    .name = "gemm",
    .summary = "dense matrix product C = A*B (row-major)",
    .flop_model = "2*m*n*k",
    .byte_model = "((m*k + k*n) * input size + m*n * output size; tf32/bf16/fp16: output size 4)",
    .roof = pb__gemm_roof,
    .precisions = PB_PREC(PB_FLOAT) | PB_PREC(PB_DOUBLE) | PB_PREC(PB_TF32) | PB_PREC(PB_BF16) | PB_PREC(PB_FP16),
    .params = gemm_params,
    .n_params = sizeof gemm_params / sizeof gemm_params[0],
    .baseline_backend = "ref",
    .baseline_variant = "ikj",
    .plan = gemm_plan,
    .describe = gemm_describe,
    .flops = gemm_flops,
    .bytes = gemm_bytes,
    .prepare = pb__gemm_host_prepare,
    .release = pb__gemm_host_release,
    .bind = gemm_bind,
    .poison = gemm_poison,
    .check = gemm_check,
    .unbind = gemm_unbind,
};

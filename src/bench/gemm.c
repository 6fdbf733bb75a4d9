/* gemm: C = A * B, row-major, m x k times k x n, float or double.
 *
 * The oracle is the same product accumulated in double from the same rounded
 * inputs. Up to 2^33 multiply-adds it covers every element; beyond that it
 * covers a seeded sample of rows (always the first and last) and every other
 * element is still checked to be finite, so an unwritten element fails. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/gemm_host.h"
#include "core/core.h"
#include "core/rng.h"
#include "parbench/pb_kernels.h"

enum { P_M, P_N, P_K };

static const struct pb_param_def gemm_params[] = {
    [P_M] = {"m", "rows of A and C (default: n)", NULL},
    [P_N] = {"n", "columns of B and C; with only --n given the product is square", "512"},
    [P_K] = {"k", "columns of A, rows of B (default: n)", NULL},
};

#define FULL_ORACLE_LIMIT (1ull << 33) /* multiply-adds */
#define SAMPLED_ROWS 64

struct gemm_host {
    struct pb_problem p;
    void *a, *b;       /* inputs in the problem's precision */
    double *ref;       /* oracle rows, n doubles each */
    size_t *rows;      /* which rows of C the oracle covers */
    size_t n_rows;
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

static pb_status gemm_plan(const struct pb_param_lists *l, enum pb_precision prec,
                           struct pb_problem *out, size_t max, size_t *n_out)
{
    /* m and k follow n unless given: then every combination is run. */
    const struct pb_param_lists *L = l;
    size_t nn = L->count[P_N];
    size_t nm = L->count[P_M] ? L->count[P_M] : 1, nk = L->count[P_K] ? L->count[P_K] : 1;
    size_t count = 0;
    for (size_t in = 0; in < nn; in++)
        for (size_t im = 0; im < nm; im++)
            for (size_t ik = 0; ik < nk; ik++) {
                int64_t n = L->values[P_N][in];
                int64_t m = L->count[P_M] ? L->values[P_M][im] : n;
                int64_t k = L->count[P_K] ? L->values[P_K][ik] : n;
                if (m < 1 || n < 1 || k < 1)
                    return pb__fail(PB_ERR_INVALID, "gemm sizes must be at least 1 (got m=%lld n=%lld k=%lld)",
                                    (long long)m, (long long)n, (long long)k);
                size_t bytes, elt = pb_precision_size(prec);
                if (!matrix_bytes((size_t)m, (size_t)k, elt, &bytes) ||
                    !matrix_bytes((size_t)k, (size_t)n, elt, &bytes) ||
                    !matrix_bytes((size_t)m, (size_t)n, sizeof(double), &bytes))
                    return pb__fail(PB_ERR_OVERFLOW, "gemm %lldx%lldx%lld: matrix size overflows",
                                    (long long)m, (long long)n, (long long)k);
                if (count >= max)
                    return pb__fail(PB_ERR_INVALID, "gemm: more than %zu problems", max);
                out[count++] = pb__gemm_problem(prec, m, n, k);
            }
    *n_out = count;
    return PB_OK;
}

static void gemm_describe(const struct pb_problem *p, char *buf, size_t len)
{
    snprintf(buf, len, "%lldx%lldx%lld", (long long)p->v[P_M], (long long)p->v[P_N],
             (long long)p->v[P_K]);
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
    return (m * k + k * n + m * n) * (double)pb_precision_size(p->prec);
}

/* The inputs widened to double, so the oracle loop is plain vectorisable double. */
static pb_status widen(const void *x, enum pb_precision prec, size_t count, const char *what,
                       double **out)
{
    pb_status st = pb__host_alloc(count * sizeof(double), what, (void **)out);
    if (st != PB_OK)
        return st;
    for (size_t i = 0; i < count; i++)
        (*out)[i] = prec == PB_DOUBLE ? ((const double *)x)[i] : (double)((const float *)x)[i];
    return PB_OK;
}

/* Oracle rows in double, ikj order; rows are independent so threads split them. */
static pb_status compute_oracle(struct gemm_host *h)
{
    size_t m, n, k;
    dims(&h->p, &m, &n, &k);
    double *a = NULL, *b = NULL;
    pb_status st = widen(h->a, h->p.prec, m * k, "gemm oracle copy of A", &a);
    if (st == PB_OK)
        st = widen(h->b, h->p.prec, k * n, "gemm oracle copy of B", &b);
    if (st != PB_OK) {
        pb__host_free(a);
        return st;
    }
    const long n_rows = (long)h->n_rows;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (long r = 0; r < n_rows; r++) {
        double *c = &h->ref[(size_t)r * n];
        const double *arow = &a[h->rows[r] * k];
        memset(c, 0, n * sizeof *c);
        for (size_t p = 0; p < k; p++)
            for (size_t j = 0; j < n; j++)
                c[j] += arow[p] * b[p * n + j];
    }
    pb__host_free(a);
    pb__host_free(b);
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
    free(h->rows);
    free(h);
}

pb_status pb__gemm_host_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    size_t m, n, k, elt = pb_precision_size(p->prec), bytes;
    dims(p, &m, &n, &k);
    *out = NULL;
    struct gemm_host *h = calloc(1, sizeof *h);
    if (!h)
        return pb__fail(PB_ERR_NOMEM, "gemm: out of host memory");
    h->p = *p;
    bool full = (double)m * (double)n * (double)k <= (double)FULL_ORACLE_LIMIT || m <= SAMPLED_ROWS;
    h->n_rows = full ? m : SAMPLED_ROWS;
    pb_status st = PB_OK;
    h->rows = malloc(h->n_rows * sizeof *h->rows);
    if (!h->rows)
        st = pb__fail(PB_ERR_NOMEM, "gemm: out of host memory");
    if (st == PB_OK)
        st = pb__host_alloc(m * k * elt, "gemm input A", &h->a);
    if (st == PB_OK)
        st = pb__host_alloc(k * n * elt, "gemm input B", &h->b);
    if (st == PB_OK)
        st = matrix_bytes(h->n_rows, n, sizeof(double), &bytes)
                 ? pb__host_alloc(bytes, "gemm reference result", (void **)&h->ref)
                 : pb__fail(PB_ERR_OVERFLOW, "gemm: reference size overflows");
    if (st != PB_OK) {
        pb__gemm_host_release(h);
        return st;
    }
    struct pb_rng rng;
    pb__rng_init(&rng, seed, 1);
    pb__rng_fill(&rng, h->a, p->prec, m * k);
    pb__rng_init(&rng, seed, 2);
    pb__rng_fill(&rng, h->b, p->prec, k * n);
    if (full) {
        for (size_t i = 0; i < m; i++)
            h->rows[i] = i;
    } else {
        pb__rng_sample_rows(seed, m, h->rows, h->n_rows);
    }
    st = compute_oracle(h);
    if (st != PB_OK) {
        pb__gemm_host_release(h);
        return st;
    }
    *out = h;
    return PB_OK;
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
    (void)v;
    const struct gemm_host *h = host;
    size_t m, n, k, elt = pb_precision_size(p->prec);
    dims(p, &m, &n, &k);
    *state = NULL;
    struct gemm_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "gemm: out of host memory");
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, m * k * elt, &s->a);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, k * n * elt, &s->b);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, m * n * elt, &s->c);
    if (st == PB_OK)
        st = pb_buf_write(s->a, 0, h->a, m * k * elt);
    if (st == PB_OK)
        st = pb_buf_write(s->b, 0, h->b, k * n * elt);
    if (st == PB_OK && !pb_buf_host_ptr(s->c))
        st = pb__host_alloc(m * n * elt, "gemm result download", &s->download);
    if (st != PB_OK) {
        gemm_unbind(s);
        return st;
    }
    s->args = (struct pb_gemm_args){.prec = p->prec, .m = m, .n = n, .k = k, .alpha = 1.0,
                                    .beta = 0.0, .a = s->a, .lda = k, .b = s->b, .ldb = n,
                                    .c = s->c, .ldc = n};
    *state = s;
    *args = &s->args;
    return PB_OK;
}

static pb_status gemm_poison(void *state)
{
    struct gemm_state *s = state;
    return pb_buf_fill_bytes(s->c, 0xFF);
}

void pb__gemm_host_check(const void *host, void *c, bool corrupt, struct pb_check *out)
{
    const struct gemm_host *h = host;
    size_t m, n, k, elt = pb_precision_size(h->p.prec);
    dims(&h->p, &m, &n, &k);
    unsigned char *bytes = c;
    if (corrupt) { /* shift one element, in a row the oracle covers */
        size_t mid = h->rows[h->n_rows / 2] * n + n / 2;
        if (h->p.prec == PB_DOUBLE)
            ((double *)c)[mid] += 1.0;
        else
            ((float *)c)[mid] += 1.0f;
    }
    bool full = h->n_rows == m;
    /* Rounding error of a k-term dot product grows like sqrt(k) for random data. */
    double tol = 32.0 * pb__epsilon(h->p.prec) * sqrt((double)k + 1.0);
    pb__check_begin(out, tol, full ? "full" : "sampled");
    for (size_t r = 0; r < h->n_rows; r++) {
        size_t i = h->rows[r];
        pb__check_add(out, bytes + i * n * elt, h->p.prec, &h->ref[r * n], n, i * n);
    }
    if (!full)
        pb__check_finite(out, c, h->p.prec, m * n, 0);
    pb__check_end(out);
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
    size_t m, n, k, elt = pb_precision_size(h->p.prec);
    dims(&h->p, &m, &n, &k);
    void *c = pb_buf_host_ptr(s->c);
    if (!c) {
        pb_status st = pb_buf_read(s->c, 0, s->download, m * n * elt);
        if (st != PB_OK)
            return st;
        c = s->download;
    }
    pb__gemm_host_check(host, c, corrupt, out);
    return PB_OK;
}

const struct pb_bench pb__bench_gemm = {
    .name = "gemm",
    .summary = "dense matrix product C = A*B (row-major)",
    .flop_model = "2*m*n*k",
    .byte_model = "(m*k + k*n + m*n) * element size",
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

/* spmv: y = A * x for sparse A from Matrix Market files or generated (the
 * sparse study: CSR vs ELLPACK, OpenMP vs CUDA).
 *
 * Each variant reads one format (CSR, ELL or ELL transposed); the formats are
 * built from the same COO on the host, ELLPACK only when a variant needs it
 * and only while its padding stays under --ell-max-fill times the non-zeros.
 * The oracle sums in double over the values and x rounded to the precision
 * the kernels see; row i is checked against its own rounding-error scale,
 * u sqrt(len_i sum_j (a_ij x_j)^2) (verify.h: x is seeded and symmetric about
 * 0, so the terms of every row have random signs), never against the largest
 * |y|: a row of small values is checked as closely as a row of large ones. Rates: GFLOP/s = 2 * NZ / time (the study's); GB/s counts
 * what CSR must move at least, for every variant alike, so GB/s compares
 * formats by time. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "core/args.h"
#include "core/backend_impl.h"
#include "core/core.h"
#include "core/parse.h"
#include "core/rng.h"
#include "io/mmio.h"
#include "parbench/pb_kernels.h"
#include "sparse/sparse.h"

enum { P_MATRIX, P_GROUP, P_BLOCK, P_FILL, P_COMPLEX, P_OFFSETS };

static const struct pb_param_def spmv_params[] = {
    [P_MATRIX] = {"matrix",
                  "Matrix Market files (.mtx, .mtx.gz), generated (" PB_SPARSE_GENERATORS
                  "; K non-zeros per row on average), or zoo[:ROWS]: one matrix of each irregular class",
                  "lap2d:512,lap3d:48,random:64k:16,powerlaw:64k:16", true},
    [P_GROUP] = {"group", "GPU vector kernels: threads per row (power of two up to 32), 0 = from the mean row length", "0",
                 false},
    [P_BLOCK] = {"block", "GPU kernels: threads per block, 0 = the variant's choice", "0", false},
    [P_FILL] = {"ell-max-fill", "refuse ELLPACK when it would store more than this many times the non-zeros",
                "8", false},
    [P_COMPLEX] = {"complex-real", "complex files: 1 = load the real part of each entry, 0 = refuse them", "0", false,
                   true},
    [P_OFFSETS] = {"offsets", "CSR row offsets: 32 or 64 bits, 0 = 64 only beyond 2^31 - 1 non-zeros (`parbench list` names the variants that read 64)",
                   "0", false, true},
};

struct plain_time {
    const pb_device *dev;
    int threads;
    double median;
};

struct spmv_host {
    struct pb_problem p;
    struct pb_coo m;
    int64_t *ptr;   /* CSR offsets */
    int32_t *ptr32; /* the same in 32 bits where nnz fits them, else NULL */
    int32_t max_row;
    int32_t cols_used; /* columns holding an entry: the x a product must read */
    void *x;     /* cols elements, prec */
    double *ref;   /* oracle y */
    double *scale; /* each row's rounding-error scale */
    uint64_t seed;
    /* why the matrix or its product does not fit in the precision ("" if it does) */
    char overflow[160];
    /* ELLPACK row-major [0] and transposed [1], built on first use (taking
     * ell_s seconds). */
    struct pb_ell ell[2];
    pb_status ell_status[2];
    char ell_error[2][256];
    double ell_s[2];
    /* Per device: the fastest variant that needed no preparation so far (the
     * plain CSR that break_even is counted against). */
    struct plain_time plain[16];
    int n_plain;
};

struct spmv_state {
    struct pb_spmv_args args;
    struct spmv_host *h;
    pb_device *dev;
    bool csr;      /* args hold CSR (else ELLPACK) */
    double prep_s; /* the variant's preparation: its prepare() or the format's build */
    char note[256]; /* as long as a row's reason */
    pb_buf *ptr, *idx, *val, *x, *y;
    void *download;
};

static const char *const spmv_extra_names[] = {"rows", "nnz", "max_row", "prep_s", "break_even"};

static pb_status spmv_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                           size_t max, size_t *n_out)
{
    const char *specs[PB_MAX_LIST];
    size_t count = 0, n_specs;
    pb_status st = pb__sparse_expand(l->text[P_MATRIX], l->count[P_MATRIX], specs, PB_MAX_LIST, &n_specs);
    if (st != PB_OK)
        return st;
    for (size_t im = 0; im < n_specs; im++) {
        const char *spec = specs[im];
        if ((st = pb__sparse_spec_check(spec, "spmv")) != PB_OK)
            return st;
        for (size_t ig = 0; ig < l->count[P_GROUP]; ig++)
            for (size_t ib = 0; ib < l->count[P_BLOCK]; ib++)
                for (size_t iff = 0; iff < l->count[P_FILL]; iff++) {
                    int64_t g = l->values[P_GROUP][ig], b = l->values[P_BLOCK][ib], f = l->values[P_FILL][iff];
                    int64_t c = l->values[P_COMPLEX][l->count[P_COMPLEX] - 1];
                    int64_t o = l->values[P_OFFSETS][l->count[P_OFFSETS] - 1];
                    if (l->count[P_OFFSETS] != 1 || (o != 0 && o != 32 && o != 64))
                        return pb__fail(PB_ERR_INVALID, "spmv: --offsets takes one value, 0, 32 or 64");
                    if (g < 0 || g > 32 || (g & (g - 1)) != 0)
                        return pb__fail(PB_ERR_INVALID, "spmv: --group %lld is not 0 or a power of two up to 32",
                                        (long long)g);
                    if (b < 0 || b > 1024 || (b && b < 32) || b % 32 != 0)
                        return pb__fail(PB_ERR_INVALID, "spmv: --block %lld is not 0 or a multiple of 32 up to 1024",
                                        (long long)b);
                    if (f < 1)
                        return pb__fail(PB_ERR_INVALID, "spmv: --ell-max-fill must be at least 1");
                    if (l->count[P_COMPLEX] != 1 || (c != 0 && c != 1))
                        return pb__fail(PB_ERR_INVALID, "spmv: --complex-real takes one value, 0 or 1");
                    if (count >= max)
                        return pb__fail(PB_ERR_INVALID, "spmv: more than %zu problems", max);
                    out[count++] = (struct pb_problem){
                        .prec = prec, .v = {[P_GROUP] = g, [P_BLOCK] = b, [P_FILL] = f, [P_COMPLEX] = c, [P_OFFSETS] = o}, .s = {[P_MATRIX] = spec}};
                }
    }
    *n_out = count;
    return PB_OK;
}

static void spmv_describe(const struct pb_problem *p, char *buf, size_t len)
{
    if (pb__sparse_is_generated(p->s[P_MATRIX]))
        snprintf(buf, len, "%s", p->s[P_MATRIX]);
    else
        pb__matinfo_name(p->s[P_MATRIX], buf, len);
}

static double spmv_flops(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)p, (void)v;
    const struct spmv_host *h = host;
    return h ? 2.0 * (double)h->m.nnz : NAN;
}

static double spmv_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)v;
    const struct spmv_host *h = host;
    if (!h)
        return NAN;
    double elt = (double)pb_precision_size(p->prec), offset = h->ptr32 && p->v[P_OFFSETS] != 64 ? 4 : 8;
    return (double)h->m.nnz * (elt + 4) + ((double)h->m.n_rows + 1) * offset +
           ((double)h->cols_used + (double)h->m.n_rows) * elt;
}

static void spmv_release(void *host)
{
    struct spmv_host *h = host;
    if (!h)
        return;
    pb_coo_free(&h->m);
    free(h->ptr);
    free(h->ptr32);
    pb__host_free(h->x);
    pb__host_free(h->ref);
    pb__host_free(h->scale);
    pb__ell_free(&h->ell[0]);
    pb__ell_free(&h->ell[1]);
    free(h);
}

static double as_prec(double v, enum pb_precision prec) { return prec == PB_DOUBLE ? v : (double)(float)v; }

static double x_at(const struct spmv_host *h, int32_t j)
{
    return h->p.prec == PB_DOUBLE ? ((const double *)h->x)[j] : (double)((const float *)h->x)[j];
}

/* Oracle y = A x in double from the rounded values, and each row's scale. */
static void compute_oracle(struct spmv_host *h)
{
    enum pb_precision prec = h->p.prec;
    for (int32_t i = 0; i < h->m.n_rows; i++) {
        double sum = 0, sumsq = 0;
        for (int64_t k = h->ptr[i]; k < h->ptr[i + 1]; k++) {
            double t = as_prec(h->m.values[k], prec) * x_at(h, h->m.cols[k]);
            sum += t;
            sumsq += t * t;
        }
        h->ref[i] = sum;
        h->scale[i] = pb__dot_scale(prec, (double)(h->ptr[i + 1] - h->ptr[i]), sumsq);
        if (!pb__sumsq_in_range(sumsq)) { /* terms past 1e154 or below 1e-154 */
            struct pb_sumsq a = {0};
            for (int64_t k = h->ptr[i]; k < h->ptr[i + 1]; k++)
                pb__sumsq_add(&a, as_prec(h->m.values[k], prec) * x_at(h, h->m.cols[k]));
            h->scale[i] = pb__dot_scale_scaled(prec, (double)(h->ptr[i + 1] - h->ptr[i]), &a);
        }
    }
}

static pb_status spmv_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    *out = NULL;
    struct spmv_host *h = calloc(1, sizeof *h);
    if (!h)
        return pb__fail(PB_ERR_NOMEM, "spmv: out of host memory");
    h->p = *p;
    h->seed = seed;
    const char *spec = p->s[P_MATRIX];
    pb_status st = pb__sparse_load(spec, seed, p->v[P_COMPLEX] != 0, &h->m);
    size_t elt = pb_precision_size(p->prec);
    if (st == PB_OK) {
        /* A 2e9-row file with two entries got the process killed. */
        double rows = (double)h->m.n_rows, cols = (double)h->m.n_cols, e = (double)elt;
        double need = (rows + 1) * 12 + cols * e + rows * 16 /* offsets (64 and 32 bits), x, reference and scales */
                      + (rows + 1) * 4 + cols * e + rows * e; /* a host backend's copies of them and y */
        char who[64];
        snprintf(who, sizeof who, "spmv: %d x %d", h->m.n_rows, h->m.n_cols);
        st = pb__host_mem_need(need, who, "for its offsets, x, y and reference alone");
    }
    if (st == PB_OK)
        st = pb__csr_offsets64(&h->m, &h->ptr);
    if (st == PB_OK && h->m.nnz <= INT32_MAX)
        st = pb__csr_offsets(&h->m, &h->ptr32);
    if (st == PB_OK)
        st = pb__host_alloc((size_t)h->m.n_cols * elt, "spmv input x", &h->x);
    if (st == PB_OK)
        st = pb__host_alloc((size_t)h->m.n_rows * sizeof(double), "spmv reference y", (void **)&h->ref);
    if (st == PB_OK)
        st = pb__host_alloc((size_t)h->m.n_rows * sizeof(double), "spmv reference scales", (void **)&h->scale);
    if (st != PB_OK) {
        spmv_release(h);
        return st;
    }
    h->max_row = pb__coo_max_row(&h->m);
    h->cols_used = pb__coo_cols_used(&h->m);
    struct pb_rng rng;
    pb__rng_init(&rng, seed, 1);
    pb__rng_fill(&rng, h->x, p->prec, (size_t)h->m.n_cols);
    compute_oracle(h);
    /* A value or a product beyond the type's range is Inf in every kernel: no
     * kernel's fault, so those rows are UNSUPPORTED rather than FAILED. */
    double most = p->prec == PB_FLOAT ? FLT_MAX : DBL_MAX;
    const char *type = pb_precision_name(p->prec), *hint = p->prec == PB_FLOAT ? " (--precision double)" : "";
    for (size_t k = 0; k < h->m.nnz && !h->overflow[0]; k++)
        if (fabs(h->m.values[k]) > most)
            snprintf(h->overflow, sizeof h->overflow, "value %g in row %d does not fit in %s%s", h->m.values[k],
                     (int)h->m.rows[k] + 1, type, hint);
    for (int32_t i = 0; i < h->m.n_rows && !h->overflow[0]; i++)
        if (!(fabs(h->ref[i]) <= most))
            snprintf(h->overflow, sizeof h->overflow, "row %d of the product (%g) does not fit in %s%s", (int)i + 1,
                     h->ref[i], type, hint);
    *out = h;
    return PB_OK;
}

static void spmv_unbind(void *state)
{
    struct spmv_state *s = state;
    if (!s)
        return;
    pb_buf_free(s->ptr);
    pb_buf_free(s->idx);
    pb_buf_free(s->val);
    pb_buf_free(s->x);
    pb_buf_free(s->y);
    pb__host_free(s->download);
    free(s);
}

/* The ELLPACK layout of h, built once; its refusal is remembered too. */
static pb_status ell_of(struct spmv_host *h, bool transposed, const struct pb_ell **out)
{
    struct pb_ell *e = &h->ell[transposed];
    if (!e->idx && h->ell_status[transposed] == PB_OK) {
        double t0 = pb__now();
        h->ell_status[transposed] = pb__ell_build(&h->m, transposed, (double)h->p.v[P_FILL], e);
        h->ell_s[transposed] = pb__now() - t0;
        if (h->ell_status[transposed] != PB_OK)
            snprintf(h->ell_error[transposed], sizeof h->ell_error[transposed], "%s", pb_last_error());
    }
    if (h->ell_status[transposed] != PB_OK)
        return pb__fail(h->ell_status[transposed], "%s", h->ell_error[transposed]);
    *out = e;
    return PB_OK;
}

static pb_status spmv_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                           void **state, const void **args)
{
    struct spmv_host *h = host;
    *state = NULL;
    if (h->overflow[0])
        return pb__fail(PB_ERR_UNSUPPORTED, "%s", h->overflow);
    struct spmv_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "spmv: out of host memory");
    s->h = h;
    enum pb_sparse_format format = pb__spmv_variant_format(v);
    size_t elt = pb_precision_size(p->prec), rows = (size_t)h->m.n_rows;
    s->args = (struct pb_spmv_args){.prec = p->prec, .format = format, .rows = h->m.n_rows, .cols = h->m.n_cols,
                                    .nnz = (int64_t)h->m.nnz, .group = (int)p->v[P_GROUP],
                                    .block = (int)p->v[P_BLOCK]};
    pb_status st = PB_OK;
    if (format == PB_SPARSE_CSR) {
        s->args.ptr_bits = !h->ptr32 || p->v[P_OFFSETS] == 64 ? 64 : 32;
        const char *why = NULL;
        if (!h->ptr32 && p->v[P_OFFSETS] == 32)
            st = pb__fail(PB_ERR_UNSUPPORTED, "%zu non-zeros need 64-bit row offsets (--offsets 0 or 64)", h->m.nnz);
        else if (!pb__spmv_variant_takes(dev->backend, v, &s->args, &why))
            st = pb__fail(PB_ERR_UNSUPPORTED, "%s", why);
        else if (s->args.ptr_bits == 64)
            st = pb__upload(dev, h->ptr, (rows + 1) * sizeof *h->ptr, &s->ptr);
        else
            st = pb__upload(dev, h->ptr32, (rows + 1) * sizeof *h->ptr32, &s->ptr);
        if (st == PB_OK)
            st = pb__upload(dev, h->m.cols, h->m.nnz * sizeof *h->m.cols, &s->idx);
        if (st == PB_OK)
            st = pb__upload_values(dev, h->m.values, h->m.nnz, p->prec, &s->val);
    } else {
        const struct pb_ell *e = NULL;
        st = ell_of(h, format == PB_SPARSE_ELLT, &e);
        size_t n = e ? rows * (size_t)e->width : 0;
        if (st == PB_OK) {
            s->prep_s = h->ell_s[format == PB_SPARSE_ELLT];
            s->args.width = e->width;
            st = pb__upload(dev, e->idx, n * sizeof *e->idx, &s->idx);
        }
        if (st == PB_OK)
            st = pb__upload_values(dev, e->val, n, p->prec, &s->val);
    }
    if (st == PB_OK)
        st = pb__upload(dev, h->x, (size_t)h->m.n_cols * elt, &s->x);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, rows * elt, &s->y);
    if (st == PB_OK && !pb_buf_host_ptr(s->y))
        st = pb__host_alloc(rows * elt, "spmv result download", &s->download);
    if (st != PB_OK) {
        spmv_unbind(s);
        return st;
    }
    s->args.ptr = s->ptr;
    s->args.idx = s->idx;
    s->args.val = s->val;
    s->args.x = s->x;
    s->args.y = s->y;
    s->dev = dev;
    s->csr = format == PB_SPARSE_CSR;
    /* The variant's analysis of the matrix, timed on its own (else its
     * first product would carry it). */
    if (v->prepare && (st = pb_device_sync(dev)) == PB_OK) {
        double t0 = pb__now();
        st = v->prepare(dev, &s->args, s->note, sizeof s->note);
        s->prep_s = pb__now() - t0;
    }
    if (st != PB_OK) {
        spmv_unbind(s);
        return st;
    }
    *state = s;
    *args = &s->args;
    return PB_OK;
}

static pb_status spmv_poison(void *state)
{
    struct spmv_state *s = state;
    return pb_buf_fill_bytes(s->y, 0xFF);
}

/* The fault: a seeded non-empty row anywhere (none preferred) off by 1e-3
 * times the sum of its terms' magnitudes; without non-zeros (every row must
 * then be exactly 0) a seeded row off by 1. */
static void inject_fault(const struct spmv_host *h, void *y)
{
    int32_t rows = h->m.n_rows;
    if (rows == 0)
        return;
    struct pb_rng rng;
    pb__rng_init(&rng, h->seed, 20);
    int32_t i = (int32_t)(pb__rng_next(&rng) % (uint64_t)rows);
    while (h->m.nnz > 0 && h->ptr[i + 1] == h->ptr[i]) /* an empty row has nothing to get wrong */
        i = (i + 1) % rows;
    double mag = 0;
    for (int64_t k = h->ptr[i]; k < h->ptr[i + 1]; k++)
        mag += fabs(as_prec(h->m.values[k], h->p.prec) * x_at(h, h->m.cols[k]));
    double d = mag > 0 ? 1e-3 * mag : 1.0;
    if (h->p.prec == PB_DOUBLE)
        ((double *)y)[i] += d;
    else
        ((float *)y)[i] += (float)d;
}

static pb_status spmv_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    struct spmv_state *s = state;
    const struct spmv_host *h = host;
    size_t rows = (size_t)h->m.n_rows;
    void *y = pb_buf_host_ptr(s->y);
    if (!y) {
        pb_status st = pb_buf_read(s->y, 0, s->download, rows * pb_precision_size(h->p.prec));
        if (st != PB_OK)
            return st;
        y = s->download;
    }
    if (corrupt)
        inject_fault(h, y);
    pb__check_begin(out, PB_CHECK_TOL, "full");
    pb__check_add_scaled(out, y, h->p.prec, h->ref, h->scale, rows, 0, "row");
    pb__check_end(out);
    return PB_OK;
}

/* The backend's plain CSR kernel on this binding's arguments, timed here (the
 * fastest of 3 after a warm-up), where no variant without preparation ran
 * before on this device; NAN if it cannot run (or the binding holds ELLPACK).
 * Called after the check, so the y it writes is never checked. */
static double time_plain_csr(struct spmv_state *s)
{
    static const char *const plain[] = {"csr-vector", "csr"};
    const char *name = NULL;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0] && !name; i++)
        if (pb__variant_find(s->dev->backend, "spmv", plain[i]))
            name = plain[i];
    pb_timer *t = NULL;
    double best = INFINITY;
    if (!s->csr || !name || pb_timer_create(s->dev, &t) != PB_OK)
        return NAN;
    for (int i = 0; i < 4 && !isnan(best); i++) {
        double elapsed = 0;
        pb_status st = pb_timer_start(t, NULL);
        if (st == PB_OK)
            st = pb_kernel_launch(s->dev, "spmv", name, &s->args, NULL);
        if (st == PB_OK)
            st = pb_timer_stop(t, NULL);
        if (st == PB_OK)
            st = pb_device_sync(s->dev);
        if (st == PB_OK)
            st = pb_timer_elapsed(t, &elapsed);
        if (st != PB_OK)
            best = NAN;
        else if (i > 0)
            best = fmin(best, elapsed);
    }
    pb_timer_destroy(t);
    return best;
}

/* break_even: products after which the preparation has paid for itself
 * against the fastest variant without one measured before on this device
 * (variants are listed plain first), or else the backend's plain CSR timed
 * for it; NAN when it never pays back or CSR cannot run. */
static void spmv_extras(void *state, const struct pb_stats *time, const struct pb_ceiling *ceiling, double *out)
{
    (void)ceiling;
    struct spmv_state *s = state;
    struct spmv_host *h = s->h;
    out[0] = h->m.n_rows;
    out[1] = (double)h->m.nnz;
    out[2] = h->max_row;
    out[3] = s->prep_s;
    int threads = pb_device_threads(s->dev), at = 0;
    while (at < h->n_plain && (h->plain[at].dev != s->dev || h->plain[at].threads != threads))
        at++;
    bool known = at < h->n_plain;
    if (!known && s->prep_s > 0 && at < (int)(sizeof h->plain / sizeof h->plain[0])) {
        double plain = time_plain_csr(s);
        if (!isnan(plain)) {
            h->plain[h->n_plain++] = (struct plain_time){s->dev, threads, plain};
            known = true;
        }
    }
    if (s->prep_s == 0) {
        out[4] = 0;
        if (!known && at < (int)(sizeof h->plain / sizeof h->plain[0]))
            h->plain[h->n_plain++] = (struct plain_time){s->dev, threads, time->median};
        else if (known && time->median < h->plain[at].median)
            h->plain[at].median = time->median;
    } else {
        double gain = known ? h->plain[at].median - time->median : 0;
        out[4] = gain > 0 ? ceil(s->prep_s / gain) : NAN;
    }
}

static void spmv_note(void *state, char *buf, size_t len)
{
    const struct spmv_state *s = state;
    snprintf(buf, len, "%s", s->note);
}

const struct pb_bench pb__bench_spmv = {
    .name = "spmv",
    .roof = pb__roof_memory,
    .summary = "sparse matrix-vector product y = A*x (CSR, ELLPACK)",
    .flop_model = "2*nnz",
    .byte_model = "nnz*(element size + 4) + (rows+1)*4 (8 with 64-bit offsets) + (columns holding an entry + rows)*element size (CSR's minimum, for every format)",
    .params = spmv_params,
    .n_params = sizeof spmv_params / sizeof spmv_params[0],
    .baseline_backend = "ref",
    .baseline_variant = "csr",
    .extra_names = spmv_extra_names,
    .n_extras = sizeof spmv_extra_names / sizeof spmv_extra_names[0],
    .extras = spmv_extras,
    .note = spmv_note,
    .plan = spmv_plan,
    .describe = spmv_describe,
    .flops = spmv_flops,
    .bytes = spmv_bytes,
    .prepare = spmv_prepare,
    .release = spmv_release,
    .bind = spmv_bind,
    .poison = spmv_poison,
    .check = spmv_check,
    .unbind = spmv_unbind,
};

/* peak: the machine's arithmetic and memory ceilings, measured like any other
 * benchmark (SHOC's MaxFlops, a read-only stream and STREAM's Copy). Variant
 * "fma" runs independent fused multiply-add chains with no loads (GFLOP/s =
 * 2 * chains * iters * n / time); variant "read" sums an array it only reads
 * (GB/s = its bytes / time); variant "copy" (host backends) copies an array
 * (GB/s = bytes read + written / time). parbench ceilings runs them with
 * device-sized problems.
 *
 * Verified like the rest: FMA outputs are all checked for NaN (poisoned
 * before each run) and a sample against the recurrence computed in double;
 * the partial sums of "read" must add up to the array's sum; every element
 * "copy" writes must equal its source, bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/exact.h"
#include "core/core.h"
#include "parbench/pb_kernels.h"

enum { P_N, P_ITERS };

static const struct pb_param_def peak_params[] = {
    [P_N] = {"n", "elements: FMA work-items, or the array that read sums and copy copies; k/M/G suffixes", "1M"},
    [P_ITERS] = {"iters", "FMA steps per chain (fma only)", "64"},
};

#define FMA_A 0.999 /* x <- x*a + b contracts towards 1: no overflow, errors die out */
#define FMA_B 0.001
#define READ_PER_GROUP 16384 /* elements per partial sum of read */

/* The kernels are fixed by struct pb_peak_args's contract. */
enum peak_kind { PEAK_FMA, PEAK_READ, PEAK_COPY };

static enum peak_kind kind_of(const struct pb_variant *v)
{
    return strcmp(v->desc.name, "read") == 0 ? PEAK_READ : strcmp(v->desc.name, "copy") == 0 ? PEAK_COPY : PEAK_FMA;
}

static size_t groups_of(size_t n) { return n ? (n + READ_PER_GROUP - 1) / READ_PER_GROUP : 0; }

static pb_status peak_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                           size_t max, size_t *n_out)
{
    size_t count = 0;
    for (size_t i = 0; i < l->count[P_N]; i++)
        for (size_t j = 0; j < l->count[P_ITERS]; j++) {
            int64_t n = l->values[P_N][i], iters = l->values[P_ITERS][j];
            if (n < 1 || n > (1ll << 34))
                return pb__fail(PB_ERR_INVALID, "--n must be between 1 and 16G (got %lld)", (long long)n);
            if (iters < 1 || iters > 1 << 20)
                return pb__fail(PB_ERR_INVALID, "--iters must be between 1 and 1M (got %lld)", (long long)iters);
            if (count >= max)
                return pb__fail(PB_ERR_INVALID, "peak: more than %zu problems", max);
            out[count++] = (struct pb_problem){.prec = prec, .v = {[P_N] = n, [P_ITERS] = iters}};
        }
    *n_out = count;
    return PB_OK;
}

static void peak_describe(const struct pb_problem *p, char *buf, size_t len)
{
    snprintf(buf, len, "%lld x %lld", (long long)p->v[P_N], (long long)p->v[P_ITERS]);
}

static double peak_flops(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    return kind_of(v) != PEAK_FMA ? NAN : 2.0 * PB_PEAK_CHAINS * (double)p->v[P_ITERS] * (double)p->v[P_N];
}

static double peak_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    double elt = (double)pb_precision_size(p->prec), n = (double)p->v[P_N];
    enum peak_kind k = kind_of(v);
    return k == PEAK_READ ? (n + (double)groups_of((size_t)n)) * elt : k == PEAK_COPY ? 2 * n * elt : n * elt;
}

/* Array of read and copy: multiples of 1/1024 below 1, exact in either precision. */
static double read_value(size_t i) { return (double)((i * 2654435761u) % 1024) / 1024.0; }

struct peak_host {
    double sum; /* of the read array */
};

static pb_status peak_prepare(const struct pb_problem *p, uint64_t seed, void **host)
{
    (void)seed;
    struct peak_host *h = calloc(1, sizeof *h);
    if (!h)
        return pb__fail(PB_ERR_NOMEM, "peak: out of host memory");
    for (size_t i = 0; i < (size_t)p->v[P_N]; i++)
        h->sum += read_value(i);
    *host = h;
    return PB_OK;
}

static void peak_release(void *host) { free(host); }

struct peak_state {
    struct pb_peak_args args;
    pb_buf *in, *out;
    enum peak_kind kind;
    size_t out_elems;
};

static void peak_unbind(void *state)
{
    struct peak_state *s = state;
    if (!s)
        return;
    pb_buf_free(s->in);
    pb_buf_free(s->out);
    free(s);
}

/* The read array written in slices, so the host copy stays small. */
static pb_status upload_read_array(pb_buf *in, enum pb_precision prec, size_t n)
{
    enum { SLICE = 1 << 20 };
    size_t elt = pb_precision_size(prec);
    void *tmp;
    pb_status st = pb__host_alloc(SLICE * elt, "the read array", &tmp);
    for (size_t lo = 0; lo < n && st == PB_OK; lo += SLICE) {
        size_t len = n - lo < SLICE ? n - lo : SLICE;
        for (size_t i = 0; i < len; i++) {
            if (prec == PB_DOUBLE)
                ((double *)tmp)[i] = read_value(lo + i);
            else
                ((float *)tmp)[i] = (float)read_value(lo + i);
        }
        st = pb_buf_write(in, lo * elt, tmp, len * elt);
    }
    pb__host_free(tmp);
    return st;
}

static pb_status peak_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                           void **state, const void **args)
{
    (void)host;
    *state = NULL;
    struct peak_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "peak: out of host memory");
    size_t n = (size_t)p->v[P_N], elt = pb_precision_size(p->prec);
    s->kind = kind_of(v);
    s->out_elems = s->kind == PEAK_READ ? groups_of(n) : n;
    s->args = (struct pb_peak_args){.prec = p->prec, .n = n, .iters = (unsigned)p->v[P_ITERS], .a = FMA_A,
                                    .b = FMA_B, .groups = groups_of(n)};
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, s->out_elems * elt, &s->out);
    if (st == PB_OK && s->kind != PEAK_FMA)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, n * elt, &s->in);
    /* Filled first: a backend whose fill is threaded (OpenMP) first touches
     * the pages with the threads that later read them. */
    if (st == PB_OK && s->kind != PEAK_FMA)
        st = pb_buf_fill_bytes(s->in, 0);
    if (st == PB_OK && s->kind != PEAK_FMA)
        st = upload_read_array(s->in, p->prec, n);
    if (st != PB_OK) {
        peak_unbind(s);
        return st;
    }
    s->args.in = s->in;
    s->args.out = s->out;
    *state = s;
    *args = &s->args;
    return PB_OK;
}

static pb_status peak_poison(void *state)
{
    struct peak_state *s = state;
    return pb_buf_fill_bytes(s->out, 0xFF); /* NaN in either precision */
}

/* The recurrence of element i in double, with a and b as the kernel sees them. */
static double fma_oracle(size_t i, unsigned iters, enum pb_precision prec)
{
    double a = prec == PB_DOUBLE ? FMA_A : (float)FMA_A, b = prec == PB_DOUBLE ? FMA_B : (float)FMA_B, sum = 0;
    for (int j = 0; j < PB_PEAK_CHAINS; j++) {
        double x = 1 + (double)(i % 64) / 64 + (double)j / 8;
        for (unsigned it = 0; it < iters; it++)
            x = fma(x, a, b);
        sum += x;
    }
    return sum;
}

/* copy: every element against read_value, read back in slices. */
static pb_status copy_check(const struct peak_state *s, bool corrupt, struct pb_check *out)
{
    enum { SLICE = 1 << 20 };
    enum pb_precision prec = s->args.prec;
    size_t elt = pb_precision_size(prec), n = s->out_elems;
    void *buf;
    pb_status st = pb__host_alloc(SLICE * elt, "the copy check", &buf);
    struct pb__exact e = {0};
    for (size_t lo = 0; lo < n && st == PB_OK; lo += SLICE) {
        size_t len = n - lo < SLICE ? n - lo : SLICE;
        st = pb_buf_read(s->out, lo * elt, buf, len * elt);
        if (st == PB_OK && corrupt && lo <= n / 2 && n / 2 < lo + len) /* one bit flipped */
            ((unsigned char *)buf)[(n / 2 - lo) * elt] ^= 1;
        for (size_t i = 0; i < len && st == PB_OK; i++) {
            double d = read_value(lo + i);
            float f = (float)d;
            pb__exact_add(&e, (char *)buf + i * elt, prec == PB_DOUBLE ? (const void *)&d : (const void *)&f, elt,
                          lo + i);
        }
    }
    pb__host_free(buf);
    if (st == PB_OK)
        pb__exact_end(&e, "element", out);
    return st;
}

static pb_status peak_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    struct peak_state *s = state;
    if (s->kind == PEAK_COPY)
        return copy_check(s, corrupt, out);
    const struct peak_host *h = host;
    enum pb_precision prec = s->args.prec;
    size_t elt = pb_precision_size(prec), n = s->out_elems;
    void *buf;
    pb_status st = pb__host_alloc(n ? n * elt : elt, "the peak check", &buf);
    if (st == PB_OK && n)
        st = pb_buf_read(s->out, 0, buf, n * elt);
    if (st != PB_OK) {
        pb__host_free(buf);
        return st;
    }
    if (corrupt && n) { /* doubles read's total; off by about 10% for an FMA element */
        double bump = s->kind == PEAK_READ ? h->sum + 1 : 1;
        if (prec == PB_DOUBLE)
            ((double *)buf)[n / 2] += bump;
        else
            ((float *)buf)[n / 2] += (float)bump;
    }
    /* float: rounding of up to 16K additions per partial, or of the chains. */
    double tol = prec == PB_DOUBLE ? 1e-10 : 1e-3;
    if (s->kind == PEAK_READ) {
        pb__check_begin(out, tol, "full");
        double total = 0;
        for (size_t i = 0; i < n; i++)
            total += prec == PB_DOUBLE ? ((double *)buf)[i] : ((float *)buf)[i];
        pb__check_add(out, &total, PB_DOUBLE, &h->sum, 1, 0);
    } else { /* every element: out[i] depends on i % 64 alone, so 64 oracles are all of them */
        pb__check_begin(out, tol, "full");
        enum { SLICE = 64 * 1024 };
        double period[64], *ref = malloc(SLICE * sizeof *ref);
        if (!ref) {
            pb__host_free(buf);
            return pb__fail(PB_ERR_NOMEM, "out of memory for the peak check");
        }
        for (size_t k = 0; k < 64; k++)
            period[k] = fma_oracle(k, s->args.iters, prec);
        for (size_t first = 0; first < n; first += SLICE) {
            size_t m = n - first < SLICE ? n - first : SLICE;
            for (size_t k = 0; k < m; k++)
                ref[k] = period[(first + k) % 64];
            pb__check_add(out, (char *)buf + first * elt, prec, ref, m, first);
        }
        free(ref);
    }
    pb__check_end(out);
    pb__host_free(buf);
    return PB_OK;
}

static struct pb_roof peak_roof(const char *variant, const char *backend, const char *device, enum pb_precision prec)
{
    (void)backend, (void)device, (void)prec;
    bool fma = strcmp(variant, "fma") == 0;
    return (struct pb_roof){fma ? PB_ROOF_FMA : PB_ROOF_NONE, fma ? PB_ROOF_NONE : PB_ROOF_MEMORY};
}

const struct pb_bench pb__bench_peak = {
    .name = "peak",
    .summary = "peak FMA throughput, read-only and copy memory bandwidth (the ceilings of the roofline)",
    .flop_model = "fma: 2 * 8 chains * iters * n; read, copy: -",
    .byte_model = "fma: n stores; read: n + n/16384 partials; copy: 2n (read + written); times the element size",
    .roof = peak_roof,
    .params = peak_params,
    .n_params = sizeof peak_params / sizeof peak_params[0],
    .plan = peak_plan,
    .describe = peak_describe,
    .flops = peak_flops,
    .bytes = peak_bytes,
    .prepare = peak_prepare,
    .release = peak_release,
    .bind = peak_bind,
    .poison = peak_poison,
    .check = peak_check,
    .unbind = peak_unbind,
};

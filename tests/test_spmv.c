/* The cross-backend SpMV test: every available backend, every spmv variant in
 * the format it reads, float and double, through the public API, on matrices
 * chosen to break kernels: empty rows (first, last, runs of them), one row
 * far longer than a warp, rows shorter and longer than every group size,
 * rectangular shapes, a 1x1, a matrix with no non-zeros, generated Laplacians
 * and power-law rows; GPU group and block sizes swept. y is poisoned with
 * NaN before each run, so an unwritten row fails. */
#include <float.h>

#include "test_util.h"

#include "core/core.h"
#include "core/cpuinfo.h"
#include "core/rng.h"
#include "parbench/pb_backend.h"
#include "parbench/pb_kernels.h"
#include "sparse/balance.h"
#include "sparse/sparse.h"

/* A random matrix with the given row lengths (capped at cols). */
static void make_rows(struct pb_coo *m, int32_t rows, int32_t cols, const int32_t *len, uint64_t seed)
{
    size_t cap = 0;
    for (int32_t i = 0; i < rows; i++)
        cap += (size_t)(len[i] < cols ? len[i] : cols);
    memset(m, 0, sizeof *m);
    m->n_rows = rows, m->n_cols = cols;
    m->rows = malloc((cap + 1) * sizeof *m->rows);
    m->cols = malloc((cap + 1) * sizeof *m->cols);
    m->values = malloc((cap + 1) * sizeof *m->values);
    assert_true(m->rows && m->cols && m->values);
    struct pb_rng rng;
    pb__rng_init(&rng, seed, 1);
    for (int32_t i = 0; i < rows; i++) {
        int32_t l = len[i] < cols ? len[i] : cols;
        /* l distinct sorted columns: a random start, then steps that fit */
        int32_t c = (int32_t)(pb__rng_next(&rng) % (uint64_t)(cols - l + 1));
        for (int32_t k = 0; k < l; k++) {
            m->rows[m->nnz] = i;
            m->cols[m->nnz] = c + k;
            m->values[m->nnz++] = pb__rng_uniform(&rng);
        }
    }
}

struct matrix_case {
    const char *name;
    struct pb_coo m;
};

#define N_ZOO 15
#define N_CASES (11 + N_ZOO)
static struct matrix_case cases[N_CASES];

static int setup(void **state)
{
    (void)state;
    int32_t len[300];
    size_t n = 0;
    /* empty first/last rows and a run of empty rows */
    for (int i = 0; i < 70; i++)
        len[i] = (i == 0 || i == 69 || (i > 20 && i < 30)) ? 0 : 1 + i % 7;
    cases[n].name = "empty-rows";
    make_rows(&cases[n++].m, 70, 90, len, 1);
    /* one row of 1000 among short ones (past any group, several blocks' worth) */
    for (int i = 0; i < 300; i++)
        len[i] = i == 150 ? 1000 : i % 3;
    cases[n].name = "one-long-row";
    make_rows(&cases[n++].m, 300, 1200, len, 2);
    /* every length from 0 to 65 */
    for (int i = 0; i < 66; i++)
        len[i] = i;
    cases[n].name = "lengths-0-65";
    make_rows(&cases[n++].m, 66, 66, len, 3);
    /* rectangular, wide and tall */
    for (int i = 0; i < 300; i++)
        len[i] = 3 + i % 40;
    cases[n].name = "wide";
    make_rows(&cases[n++].m, 5, 257, len, 4);
    cases[n].name = "tall";
    make_rows(&cases[n++].m, 300, 3, len, 5);
    len[0] = 1;
    cases[n].name = "1x1";
    make_rows(&cases[n++].m, 1, 1, len, 6);
    len[0] = len[1] = len[2] = 0;
    cases[n].name = "no-nonzeros";
    make_rows(&cases[n++].m, 3, 4, len, 7);
    cases[n].name = "lap2d:23";
    assert_int_equal(pb__sparse_generate("lap2d:23", 8, &cases[n++].m), PB_OK);
    cases[n].name = "powerlaw:2000:6";
    assert_int_equal(pb__sparse_generate("powerlaw:2000:6", 9, &cases[n++].m), PB_OK);
    /* rows cut into several pieces (9000, 4097 = one past a piece) among a
     * run of 5000 empty rows and short ones */
    int32_t *many = calloc(6000, sizeof *many);
    assert_non_null(many);
    for (int i = 0; i < 6000; i++)
        many[i] = i >= 500 && i < 5500 ? 0 : 1 + i % 5;
    many[3] = 9000, many[5700] = 4097, many[5999] = 300;
    cases[n].name = "pieces";
    make_rows(&cases[n++].m, 6000, 9500, many, 10);
    free(many);
    len[0] = len[1] = len[2] = len[3] = 0;
    cases[n].name = "no-columns"; /* y = 0, though no entry writes it */
    make_rows(&cases[n++].m, 4, 0, len, 7);
    /* the zoo, small */
    const char *zoo[N_ZOO];
    size_t n_zoo;
    assert_int_equal(pb__sparse_zoo("zoo:512", zoo, N_ZOO, &n_zoo), PB_OK);
    assert_int_equal(n_zoo, N_ZOO);
    for (size_t z = 0; z < n_zoo; z++) {
        cases[n].name = zoo[z];
        assert_int_equal(pb__sparse_generate(zoo[z], 11 + z, &cases[n++].m), PB_OK);
    }
    assert_int_equal(n, N_CASES);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_CASES; i++)
        pb_coo_free(&cases[i].m);
    return 0;
}

static double rounded(double v, enum pb_precision prec) { return prec == PB_DOUBLE ? v : (double)(float)v; }

static pb_buf *upload(pb_device *dev, const void *src, size_t bytes)
{
    pb_buf *b = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, bytes ? bytes : 1, &b), PB_OK);
    if (bytes)
        assert_int_equal(pb_buf_write(b, 0, src, bytes), PB_OK);
    return b;
}

/* The values of n doubles in prec. */
static void *narrow(const double *v, size_t n, enum pb_precision prec)
{
    void *out = malloc((n ? n : 1) * pb_precision_size(prec));
    assert_non_null(out);
    for (size_t i = 0; i < n; i++)
        if (prec == PB_DOUBLE)
            ((double *)out)[i] = v[i];
        else
            ((float *)out)[i] = (float)v[i];
    return out;
}

/* Cases run and declined (UNSUPPORTED) by the variant under test. */
static size_t cases_ran, cases_declined;

/* Runs one variant on one matrix (CSR row offsets of ptr_bits: 32 or 64);
 * returns 1 and prints why on failure. */
static int run_case_offsets(pb_device *dev, const char *backend, const char *variant, enum pb_sparse_format format,
                            const struct matrix_case *mc, enum pb_precision prec, int group, int block, int ptr_bits)
{
    const struct pb_coo *m = &mc->m;
    size_t elt = pb_precision_size(prec), rows = (size_t)m->n_rows;
    struct pb_ell ell = {0};
    int32_t *ptr = NULL;
    int64_t *ptr64 = NULL;
    assert_int_equal(pb__csr_offsets(m, &ptr), PB_OK);
    assert_int_equal(pb__csr_offsets64(m, &ptr64), PB_OK);
    const int32_t *idx = m->cols;
    const double *val = m->values;
    size_t entries = m->nnz;
    if (format != PB_SPARSE_CSR) {
        assert_int_equal(pb__ell_build(m, format == PB_SPARSE_ELLT, 1e9, &ell), PB_OK);
        idx = ell.idx, val = ell.val, entries = rows * (size_t)ell.width;
    }
    struct pb_rng rng;
    pb__rng_init(&rng, 42, 2);
    double *xd = malloc(((size_t)m->n_cols + 1) * sizeof *xd);
    assert_non_null(xd);
    for (int32_t j = 0; j < m->n_cols; j++)
        xd[j] = rounded(pb__rng_uniform(&rng), prec);
    void *x = narrow(xd, (size_t)m->n_cols, prec), *v = narrow(val, entries, prec);
    pb_buf *bptr = ptr_bits == 64 ? upload(dev, ptr64, (rows + 1) * sizeof *ptr64)
                                  : upload(dev, ptr, (rows + 1) * sizeof *ptr),
           *bidx = upload(dev, idx, entries * sizeof *idx),
           *bval = upload(dev, v, entries * elt), *bx = upload(dev, x, (size_t)m->n_cols * elt), *by = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, rows * elt + 1, &by), PB_OK);
    assert_int_equal(pb_buf_fill_bytes(by, 0xFF), PB_OK);
    struct pb_spmv_args a = {.prec = prec, .format = format, .rows = m->n_rows, .cols = m->n_cols,
                             .nnz = (int64_t)m->nnz, .width = ell.width, .ptr = bptr, .idx = bidx, .val = bval,
                             .x = bx, .y = by, .group = group, .block = block, .ptr_bits = ptr_bits};
    pb_status st = pb_kernel_run(dev, "spmv", variant, &a);
    int failed = 0;
    char why[200] = "";
    if (st == PB_ERR_UNSUPPORTED) {
        cases_declined++; /* allowed: the variant says why */
    } else if (st != PB_OK) {
        snprintf(why, sizeof why, "status %s: %s", pb_status_name(st), pb_last_error());
    } else {
        cases_ran++;
        void *y = malloc(rows * elt + 1);
        assert_non_null(y);
        assert_int_equal(pb_buf_read(by, 0, y, rows * elt), PB_OK);
        for (size_t i = 0; i < rows && !why[0]; i++) {
            double ref = 0, abs_sum = 0;
            for (int32_t k = ptr[i]; k < ptr[i + 1]; k++) {
                double t = rounded(m->values[k], prec) * xd[m->cols[k]];
                ref += t, abs_sum += fabs(t);
            }
            double got = prec == PB_DOUBLE ? ((double *)y)[i] : (double)((float *)y)[i];
            double tol = 4 * (prec == PB_DOUBLE ? DBL_EPSILON : FLT_EPSILON) * (ptr[i + 1] - ptr[i] + 1) * abs_sum;
            if (!(fabs(got - ref) <= tol))
                snprintf(why, sizeof why, "y[%zu] = %.9g, expected %.9g", i, got, ref);
        }
        free(y);
    }
    if (why[0]) {
        print_message("FAIL %s/%s %s %s group=%d block=%d: %s\n", backend, variant, mc->name,
                      pb_precision_name(prec), group, block, why);
        failed = 1;
    }
    pb_buf_free(bptr), pb_buf_free(bidx), pb_buf_free(bval), pb_buf_free(bx), pb_buf_free(by);
    free(x), free(v), free(xd), free(ptr), free(ptr64);
    pb__ell_free(&ell);
    return failed;
}

static int run_case(pb_device *dev, const char *backend, const char *variant, enum pb_sparse_format format,
                    const struct matrix_case *mc, enum pb_precision prec, int group, int block)
{
    return run_case_offsets(dev, backend, variant, format, mc, prec, group, block, 32);
}

static void test_every_variant(void **state)
{
    (void)state;
    static const enum pb_precision precs[] = {PB_FLOAT, PB_DOUBLE};
    static const int groups[] = {0, 1, 4, 32}, blocks[] = {0, 64};
    int failed = 0;
    size_t runs = 0;
    setenv("PARBENCH_PANELS", "2", 1); /* else csr-panels refuses matrices whose x fits in the cache */
    setenv("PARBENCH_HUBS_ANY", "1", 1); /* else csr-hubs refuses matrices without hub columns */
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        if (!pb_test_backend_usable(b))
            continue;
        pb_device *dev = NULL;
        assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
        pb_device_set_threads(dev, 3); /* an uneven split on 2 cores */
        struct pb_variant_desc variants[32];
        size_t nv = pb_kernel_variants(b, "spmv", variants, PB_ARRAY_LEN(variants));
        assert_true(nv <= PB_ARRAY_LEN(variants));
        for (size_t v = 0; v < nv; v++) {
            enum pb_sparse_format format;
            assert_int_equal(pb_spmv_format(b, variants[v].name, &format), PB_OK);
            cases_ran = cases_declined = 0;
            /* the zoo at the variant's own group and block; the hand-made
             * cases across the sweep */
            for (size_t c = 0; c < N_CASES; c++)
                for (size_t p = 0; p < PB_ARRAY_LEN(precs); p++)
                    for (size_t g = 0; g < (c < N_CASES - N_ZOO ? PB_ARRAY_LEN(groups) : 1); g++)
                        for (size_t k = 0; k < (c < N_CASES - N_ZOO ? PB_ARRAY_LEN(blocks) : 1); k++, runs++)
                            failed += run_case(dev, pb_backend_name(b), variants[v].name, format, &cases[c],
                                               precs[p], groups[g], blocks[k]);
            failed += pb_test_declined_all("spmv", pb_backend_name(b), variants[v].name, cases_ran, cases_declined);
        }
        pb_device_close(dev);
    }
    unsetenv("PARBENCH_PANELS");
    unsetenv("PARBENCH_HUBS_ANY");
    assert_true(runs > 0);
    assert_int_equal(failed, 0);
}

/* 64-bit row offsets (needed beyond 2^31 - 1 non-zeros, tested here on the
 * small cases): every variant flagged PB_VARIANT_PTR64 computes every case
 * from them; every other CSR variant refuses them, naming those that read
 * them. */
/* Calls fn on a device of every usable backend for each of its spmv variants
 * that read CSR; the failures fn counts, summed. */
typedef int (*csr_variant_fn)(pb_device *dev, const char *backend, const struct pb_variant_desc *v, void *ctx);
static int for_each_csr_variant(csr_variant_fn fn, void *ctx)
{
    int failed = 0;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        if (!pb_test_backend_usable(b))
            continue;
        pb_device *dev = NULL;
        assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
        struct pb_variant_desc variants[32];
        size_t nv = pb_kernel_variants(b, "spmv", variants, PB_ARRAY_LEN(variants));
        assert_true(nv <= PB_ARRAY_LEN(variants));
        for (size_t v = 0; v < nv; v++) {
            enum pb_sparse_format format;
            assert_int_equal(pb_spmv_format(b, variants[v].name, &format), PB_OK);
            if (format == PB_SPARSE_CSR)
                failed += fn(dev, pb_backend_name(b), &variants[v], ctx);
        }
        pb_device_close(dev);
    }
    return failed;
}

static int offsets64_on(pb_device *dev, const char *backend, const struct pb_variant_desc *v, void *ctx)
{
    size_t *flagged = ctx;
    bool wide = (v->flags & PB_VARIANT_PTR64) != 0;
    int failed = 0;
    *flagged += wide;
    cases_ran = cases_declined = 0;
    for (size_t c = 0; c < N_CASES; c++)
        for (int p = 0; p < 2; p++)
            failed += run_case_offsets(dev, backend, v->name, PB_SPARSE_CSR, &cases[c], p ? PB_DOUBLE : PB_FLOAT, 0,
                                       0, 64);
    if (wide ? cases_declined != 0 : cases_ran != 0 || !strstr(pb_last_error(), "64-bit row offsets")) {
        print_message("FAIL %s/%s with 64-bit offsets: %zu ran, %zu declined (%s)\n", backend, v->name, cases_ran,
                      cases_declined, pb_last_error());
        failed++;
    }
    return failed;
}

static void test_offsets64(void **state)
{
    (void)state;
    size_t flagged = 0;
    int failed = for_each_csr_variant(offsets64_on, &flagged);
    assert_true(flagged >= 3); /* ref/csr, openmp/csr and openmp/auto at least */
    assert_int_equal(failed, 0);
}

/* A variant given another format than its own is refused, not misread. */
static void test_wrong_format(void **state)
{
    (void)state;
    pb_device *dev = NULL;
    assert_int_equal(pb_device_open(pb_backend_find("ref"), 0, &dev), PB_OK);
    const struct pb_coo *m = &cases[0].m;
    int32_t *ptr = NULL;
    assert_int_equal(pb__csr_offsets(m, &ptr), PB_OK);
    pb_buf *bptr = upload(dev, ptr, ((size_t)m->n_rows + 1) * sizeof *ptr),
           *bidx = upload(dev, m->cols, m->nnz * sizeof *m->cols),
           *bval = upload(dev, m->values, m->nnz * sizeof *m->values), *bx = NULL, *by = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, (size_t)m->n_cols * 8, &bx), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, (size_t)m->n_rows * 8, &by), PB_OK);
    struct pb_spmv_args a = {.prec = PB_DOUBLE, .format = PB_SPARSE_CSR, .rows = m->n_rows, .cols = m->n_cols,
                             .nnz = (int64_t)m->nnz, .ptr = bptr, .idx = bidx, .val = bval, .x = bx, .y = by};
    assert_int_equal(pb_kernel_run(dev, "spmv", "ell", &a), PB_ERR_UNSUPPORTED);
    a.group = 3;
    assert_int_equal(pb_kernel_run(dev, "spmv", "csr", &a), PB_ERR_INVALID);
    a.group = 0, a.nnz = (int64_t)m->nnz + 1000; /* more entries than the buffers hold */
    assert_int_equal(pb_kernel_run(dev, "spmv", "csr", &a), PB_ERR_INVALID);
    pb_buf_free(bptr), pb_buf_free(bidx), pb_buf_free(bval), pb_buf_free(bx), pb_buf_free(by);
    free(ptr);
    pb_device_close(dev);
}

/* Variants that keep state per matrix (librsb's and cuSPARSE's own copies,
 * csr-adaptive's row lists) must see new values written into the same
 * buffers: y = A x against a product computed here (mostly non-zero, so an
 * all-zero y fails), then A's values doubled in place, then y must be
 * 2 A x. */
static void test_cached_state_sees_new_values(void **state)
{
    (void)state;
    const struct {
        const char *backend, *variant;
    } anchors[] = {{"openmp", "librsb"}, {"cuda", "cusparse"},     {"cuda", "csr-adaptive"}, {"cuda", "csr-balanced"},
                   {"cuda", "auto"},     {"opencl", "csr-balanced"}, {"opencl", "auto"}};
    const struct pb_coo *m = &cases[7].m; /* lap2d:23 */
    size_t rows = (size_t)m->n_rows, checked = 0;
    for (size_t ai = 0; ai < PB_ARRAY_LEN(anchors); ai++) {
        const pb_backend *b = pb_backend_find(anchors[ai].backend);
        enum pb_sparse_format format;
        if (!b || pb_spmv_format(b, anchors[ai].variant, &format) != PB_OK)
            continue; /* not in this build */
        if (!pb_test_backend_usable(b))
            continue;
        pb_device *dev = NULL;
        assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
        int32_t *ptr = NULL;
        assert_int_equal(pb__csr_offsets(m, &ptr), PB_OK);
        double *twice = malloc(m->nnz * sizeof *twice), *x = malloc((size_t)m->n_cols * sizeof *x);
        double *y1 = malloc(rows * sizeof *y1), *y2 = malloc(rows * sizeof *y2), *want = calloc(rows, sizeof *want);
        assert_true(twice && x && y1 && y2 && want);
        for (size_t k = 0; k < m->nnz; k++)
            twice[k] = 2 * m->values[k];
        for (int32_t j = 0; j < m->n_cols; j++)
            x[j] = 1.0 + j % 7;
        size_t nonzero = 0;
        for (size_t i = 0; i < rows; i++) {
            for (int32_t k = ptr[i]; k < ptr[i + 1]; k++)
                want[i] += m->values[k] * x[m->cols[k]];
            nonzero += want[i] != 0;
        }
        assert_true(nonzero > rows / 2); /* so an all-zero y cannot pass */
        pb_buf *bptr = upload(dev, ptr, (rows + 1) * sizeof *ptr), *bidx = upload(dev, m->cols, m->nnz * sizeof *m->cols),
               *bval = upload(dev, m->values, m->nnz * sizeof *m->values),
               *bx = upload(dev, x, (size_t)m->n_cols * sizeof *x), *by = NULL;
        assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, rows * sizeof *y1, &by), PB_OK);
        struct pb_spmv_args a = {.prec = PB_DOUBLE, .format = PB_SPARSE_CSR, .rows = m->n_rows, .cols = m->n_cols,
                                 .nnz = (int64_t)m->nnz, .ptr = bptr, .idx = bidx, .val = bval, .x = bx, .y = by};
        assert_int_equal(pb_kernel_run(dev, "spmv", anchors[ai].variant, &a), PB_OK);
        assert_int_equal(pb_buf_read(by, 0, y1, rows * sizeof *y1), PB_OK);
        assert_int_equal(pb_buf_write(bval, 0, twice, m->nnz * sizeof *twice), PB_OK);
        assert_int_equal(pb_kernel_run(dev, "spmv", anchors[ai].variant, &a), PB_OK);
        assert_int_equal(pb_buf_read(by, 0, y2, rows * sizeof *y2), PB_OK);
        for (size_t i = 0; i < rows; i++) {
            assert_near(y1[i], want[i], 1e-12 * (1 + fabs(want[i])));
            assert_near(y2[i], 2 * want[i], 2e-12 * (1 + fabs(want[i])));
        }
        checked++;
        pb_buf_free(bptr), pb_buf_free(bidx), pb_buf_free(bval), pb_buf_free(bx), pb_buf_free(by);
        free(ptr), free(twice), free(x), free(y1), free(y2), free(want);
        pb_device_close(dev);
    }
    if (!checked)
        pb_test_skip("cached-state", "no variant with cached state in this build"); /* the backends' skips said why */
}

/* One matrix on a device, with x, y and the answer. */
struct resident {
    const struct matrix_case *mc;
    int32_t *ptr;
    double *want;
    pb_buf *bptr, *bidx, *bval, *bx, *by;
};

static void resident_load(pb_device *dev, const struct matrix_case *mc, struct resident *r)
{
    const struct pb_coo *m = &mc->m;
    size_t rows = (size_t)m->n_rows;
    r->mc = mc;
    assert_int_equal(pb__csr_offsets(m, &r->ptr), PB_OK);
    double *x = malloc(((size_t)m->n_cols + 1) * sizeof *x);
    r->want = calloc(rows + 1, sizeof *r->want);
    assert_true(x && r->want);
    for (int32_t j = 0; j < m->n_cols; j++)
        x[j] = 1.0 + (j * 7 + mc->m.n_rows) % 11;
    for (size_t i = 0; i < rows; i++)
        for (int32_t k = r->ptr[i]; k < r->ptr[i + 1]; k++)
            r->want[i] += m->values[k] * x[m->cols[k]];
    r->bptr = upload(dev, r->ptr, (rows + 1) * sizeof *r->ptr);
    r->bidx = upload(dev, m->cols, m->nnz * sizeof *m->cols + 1);
    r->bval = upload(dev, m->values, m->nnz * sizeof *m->values + 1);
    r->bx = upload(dev, x, (size_t)m->n_cols * sizeof *x);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, rows * sizeof(double) + 1, &r->by), PB_OK);
    free(x);
}

static void resident_free(struct resident *r)
{
    pb_buf_free(r->bptr), pb_buf_free(r->bidx), pb_buf_free(r->bval), pb_buf_free(r->bx), pb_buf_free(r->by);
    free(r->ptr), free(r->want);
    memset(r, 0, sizeof *r);
}

/* 1: y differs from the answer (said), 0: right or declined. */
static int resident_run(pb_device *dev, const char *backend, const char *variant, struct resident *r, size_t *ran)
{
    const struct pb_coo *m = &r->mc->m;
    size_t rows = (size_t)m->n_rows;
    assert_int_equal(pb_buf_fill_bytes(r->by, 0xFF), PB_OK);
    struct pb_spmv_args a = {.prec = PB_DOUBLE, .format = PB_SPARSE_CSR, .rows = m->n_rows, .cols = m->n_cols,
                             .nnz = (int64_t)m->nnz, .ptr = r->bptr, .idx = r->bidx, .val = r->bval,
                             .x = r->bx, .y = r->by};
    pb_status st = pb_kernel_run(dev, "spmv", variant, &a);
    if (st == PB_ERR_UNSUPPORTED)
        return 0;
    if (st != PB_OK) {
        print_message("FAIL %s/%s %s: %s\n", backend, variant, r->mc->name, pb_last_error());
        return 1;
    }
    double *y = malloc(rows * sizeof *y + 1);
    assert_non_null(y);
    assert_int_equal(pb_buf_read(r->by, 0, y, rows * sizeof *y), PB_OK);
    int failed = 0;
    for (size_t i = 0; i < rows && !failed; i++) {
        double tol = 1e-12 * (r->ptr[i + 1] - r->ptr[i] + 1) * (1 + fabs(r->want[i])) * 64;
        if (!(fabs(y[i] - r->want[i]) <= tol)) {
            print_message("FAIL %s/%s %s between other matrices: y[%zu] = %.17g, expected %.17g\n", backend,
                          variant, r->mc->name, i, y[i], r->want[i]);
            failed = 1;
        }
    }
    free(y);
    (*ran)++;
    return failed;
}

static int in_turn_on(pb_device *dev, const char *backend, const struct pb_variant_desc *v, void *ctx)
{
    /* the zoo's two block matrices (copies in blocks of 3 and 6, one after
     * the other), lap2d:23, pieces, pareto; then its dense rows: differently
     * shaped plans */
    const size_t z = N_CASES - N_ZOO, pick[] = {z + 8, z + 9, 7, 9, z, z + 3};
    size_t *ran = ctx;
    int failed = 0;
    struct resident r[5];
    for (size_t i = 0; i < 5; i++)
        resident_load(dev, &cases[pick[i]], &r[i]);
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < 5; i++)
            failed += resident_run(dev, backend, v->name, &r[round ? 4 - i : i], ran);
        if (round == 1) { /* a matrix goes, another comes in its place */
            resident_free(&r[2]);
            resident_load(dev, &cases[pick[5]], &r[2]);
        }
    }
    for (size_t i = 0; i < 5; i++)
        resident_free(&r[i]);
    return failed;
}

/* A caller multiplying several matrices in turn (spmv-dist's interior and
 * boundary rows, a multigrid's levels) gets each one's product from every
 * variant that keeps a plan per matrix: more matrices than a device keeps
 * plans for, in turns, one freed and another loaded between them. */
static void test_matrices_in_turn(void **state)
{
    (void)state;
    size_t ran = 0;
    int failed = for_each_csr_variant(in_turn_on, &ran);
    assert_true(ran > 0);
    assert_int_equal(failed, 0);
}

/* ELLPACK is refused past its fill limit; CSR offsets and generators. */
static void test_formats(void **state)
{
    (void)state;
    struct pb_ell e;
    assert_int_equal(pb__ell_build(&cases[1].m, false, 8, &e), PB_ERR_UNSUPPORTED);
    assert_contains(pb_last_error(), "longest row 1000");
    assert_int_equal(pb__ell_build(&cases[0].m, true, 8, &e), PB_OK);
    assert_int_equal(e.width, 7);
    /* row 0 is empty: its entries are padding in the transposed layout */
    assert_int_equal(e.idx[0], -1);
    assert_int_equal(e.idx[(size_t)e.rows], -1);
    pb__ell_free(&e);
    struct pb_coo m;
    assert_int_equal(pb__sparse_generate("lap3d:4", 1, &m), PB_OK);
    assert_int_equal(m.n_rows, 64);
    assert_int_equal(m.nnz, 64 * 7 - 6 * 16); /* 7 per row minus the missing neighbours on 6 faces */
    pb_coo_free(&m);
    assert_int_equal(pb__sparse_generate("lap2d", 1, &m), PB_ERR_INVALID);
    assert_int_equal(pb__sparse_generate("lap2d:0", 1, &m), PB_ERR_INVALID);
    assert_int_equal(pb__sparse_generate("lap2d:4:5", 1, &m), PB_ERR_INVALID);
    assert_int_equal(pb__sparse_generate("random:1M:1G", 1, &m), PB_ERR_INVALID); /* 10^12 entries */
    /* 6 x 10^10 entries, 16 bytes each: past 32-bit offsets, and past the host's
     * memory (a host with more than 960 GB free would start generating them) */
    if (pb__host_mem_available() < 6e10 * 16) {
        assert_int_equal(pb__sparse_generate("random:1M:60k", 1, &m), PB_ERR_NOMEM);
        assert_non_null(strstr(pb_last_error(), "host memory"));
    }
    assert_int_equal(pb__sparse_generate("random:10:x", 1, &m), PB_ERR_PARSE);
    assert_false(pb__sparse_is_generated("lap2dx:3"));
    assert_int_equal(pb__sparse_generate("pareto:100:8:0.5", 1, &m), PB_ERR_INVALID); /* alpha <= 1: no mean */
    assert_int_equal(pb__sparse_generate("pareto:100:8:x", 1, &m), PB_ERR_PARSE);
    assert_int_equal(pb__sparse_generate("rect:10", 1, &m), PB_ERR_INVALID); /* COLS missing */
    assert_int_equal(pb__sparse_generate("band:10:3:2:1", 1, &m), PB_ERR_INVALID);
    /* gaps: the first rows, the last, and more are empty */
    assert_int_equal(pb__sparse_generate("gaps:1000:4", 3, &m), PB_OK);
    int32_t *ptr = NULL;
    assert_int_equal(pb__csr_offsets(&m, &ptr), PB_OK);
    assert_int_equal(ptr[10], 0);
    assert_int_equal(ptr[1000], ptr[999]);
    assert_true(m.nnz < 4 * 989);
    free(ptr);
    pb_coo_free(&m);
    /* plap2d: a permutation of lap2d, so the same entries per row count and sum */
    struct pb_coo l;
    assert_int_equal(pb__sparse_generate("plap2d:9", 3, &m), PB_OK);
    assert_int_equal(pb__sparse_generate("lap2d:9", 3, &l), PB_OK);
    assert_int_equal(m.nnz, l.nnz);
    double sum_m = 0, sum_l = 0;
    for (size_t k = 0; k < m.nnz; k++) {
        sum_m += m.values[k], sum_l += l.values[k];
        assert_true(k == 0 || m.rows[k] > m.rows[k - 1] || m.cols[k] > m.cols[k - 1]); /* sorted */
    }
    assert_true(sum_m == sum_l);
    pb_coo_free(&m);
    pb_coo_free(&l);
    /* rmat: 2^SCALE rows, heavy-tailed rows and columns, sorted, no duplicates */
    assert_int_equal(pb__sparse_generate("rmat:12:16", 3, &m), PB_OK);
    assert_int_equal(m.n_rows, 4096);
    assert_int_equal(m.n_cols, 4096);
    assert_true(m.nnz > 4096 * 8 && m.nnz <= 4096 * 17);
    int32_t *per_col = calloc(4096, sizeof *per_col);
    assert_non_null(per_col);
    int32_t busiest_col = 0;
    for (size_t k = 0; k < m.nnz; k++) {
        assert_true(k == 0 || m.rows[k] > m.rows[k - 1] || m.cols[k] > m.cols[k - 1]);
        if (++per_col[m.cols[k]] > busiest_col)
            busiest_col = per_col[m.cols[k]];
    }
    free(per_col);
    double mean = (double)m.nnz / 4096;
    assert_true(pb__coo_max_row(&m) > 10 * mean);
    assert_true(busiest_col > 10 * mean);
    pb_coo_free(&m);
    assert_int_equal(pb__sparse_generate("rmat:31", 1, &m), PB_ERR_INVALID);
    assert_int_equal(pb__sparse_generate("rmat", 1, &m), PB_ERR_INVALID);
    /* dense: D rows of LEN among short ones */
    assert_int_equal(pb__sparse_generate("dense:5000:3:4:1000", 3, &m), PB_OK);
    assert_true(pb__coo_max_row(&m) > 900);
    pb_coo_free(&m);
    const char *zoo[16];
    size_t n_zoo;
    assert_int_equal(pb__sparse_zoo("zoo:32", zoo, 16, &n_zoo), PB_ERR_INVALID);
    assert_int_equal(pb__sparse_zoo("zoo:1k", zoo, 4, &n_zoo), PB_ERR_INVALID);
    assert_int_equal(pb__sparse_zoo("zoo", zoo, 16, &n_zoo), PB_OK);
    assert_string_equal(zoo[0], "pareto:1048576:8:1.3:0.1");
}

/* Hub columns: the hottest first, the others after them in their order;
 * refused where the hubs hold too small a share, unless asked. */
static void test_hubs_plan(void **state)
{
    (void)state;
    /* 40 entries over 8 columns, mean 5: hubs hold 20 or more */
    const int32_t count[8] = {1, 20, 2, 0, 3, 1, 1, 12};
    int32_t label[8];
    struct pb_hubs h;
    assert_int_equal(pb__hubs_plan(count, 8, 40, false, &h, label), PB_OK);
    assert_int_equal(h.n, 1);
    assert_int_equal(h.list[0], 1);
    assert_true(fabs(h.share - 0.5) < 1e-12);
    static const int32_t want[8] = {1, 0, 3, 4, 5, 6, 7, 8};
    assert_memory_equal(label, want, sizeof want);
    pb__hubs_free(&h);
    /* 100 entries over 100 columns, mean 1: hubs hold 4 or more */
    int32_t flat[100], labels[100];
    for (int c = 0; c < 100; c++)
        flat[c] = 1;
    flat[7] = flat[3] = 5;
    flat[50] = 8;
    assert_int_equal(pb__hubs_plan(flat, 100, 115, false, &h, labels), PB_ERR_UNSUPPORTED); /* 18 of 115 */
    assert_contains(pb_last_error(), "no hub columns");
    assert_int_equal(pb__hubs_plan(flat, 100, 115, true, &h, labels), PB_OK);
    assert_int_equal(h.n, 3);
    assert_int_equal(h.list[0], 50); /* hottest first, then ties by column */
    assert_int_equal(h.list[1], 3);
    assert_int_equal(h.list[2], 7);
    assert_int_equal(labels[50], 0);
    assert_int_equal(labels[0], 3);
    assert_int_equal(labels[99], 102);
    pb__hubs_free(&h);
}

/* Block CSR: every case at every block size gives the CSR product (in double
 * and in float, whose values are copied as they are), blocks hold what they
 * cover, and the size picked is the blocks' own on block matrices and
 * refused-by-ratio (above 1) on a random one. */
static void test_bcsr(void **state)
{
    (void)state;
    for (size_t c = 0; c < N_CASES; c++) {
        const struct pb_coo *m = &cases[c].m;
        int32_t *ptr = NULL;
        assert_int_equal(pb__csr_offsets(m, &ptr), PB_OK);
        float *val32 = malloc(m->nnz * sizeof *val32 + 1);
        assert_non_null(val32);
        for (size_t k = 0; k < m->nnz; k++)
            val32[k] = (float)m->values[k];
        double *x = malloc(((size_t)m->n_cols + 8) * sizeof *x), *y = calloc((size_t)m->n_rows + 8, sizeof *y);
        assert_non_null(x);
        assert_non_null(y);
        for (int32_t j = 0; j < m->n_cols + 8; j++)
            x[j] = j < m->n_cols ? 1 + j % 7 : NAN; /* past the matrix: never to be read */
        for (int b = 1; b <= PB_BCSR_MAX_B; b++)
            for (int single = 0; single < 2; single++) {
                struct pb_bcsr bm;
                assert_int_equal(pb__bcsr_build(ptr, m->cols, single ? (const void *)val32 : m->values,
                                                 single ? 4 : 8, m->n_rows, m->n_cols, b, &bm),
                                 PB_OK);
                assert_int_equal(bm.block_rows, (m->n_rows + b - 1) / b);
                assert_true((int64_t)bm.blocks * b * b >= (int64_t)m->nnz);
                for (int32_t br = 0; br < bm.block_rows; br++) {
                    double sum[PB_BCSR_MAX_B] = {0};
                    for (int32_t t = bm.ptr[br]; t < bm.ptr[br + 1]; t++) {
                        assert_true(t == bm.ptr[br] || bm.idx[t] > bm.idx[t - 1]);
                        for (int r = 0; r < b; r++)
                            for (int q = 0; q < b; q++) {
                                size_t at = ((size_t)t * b + r) * b + q;
                                double v = single ? ((float *)bm.val)[at] : ((double *)bm.val)[at];
                                int32_t col = bm.idx[t] * b + q;
                                if (col >= m->n_cols || br * b + r >= m->n_rows)
                                    assert_true(v == 0);
                                else
                                    sum[r] += v * x[col];
                            }
                    }
                    for (int r = 0; r < b && br * b + r < m->n_rows; r++) {
                        int32_t i = br * b + r;
                        double want = 0;
                        for (int32_t k = ptr[i]; k < ptr[i + 1]; k++)
                            want += (single ? (double)val32[k] : m->values[k]) * x[m->cols[k]];
                        if (fabs(sum[r] - want) > 1e-12 * (1 + fabs(want)))
                            fail_msg("%s b=%d row %d: %.17g, expected %.17g", cases[c].name, b, i, sum[r], want);
                    }
                }
                /* its block ELLPACK: the same products, row by row */
                int32_t width = 0, *eidx = NULL;
                void *evals = NULL;
                assert_int_equal(pb__bcsr_ellt(&bm, single ? 4 : 8, 1e9, &width, &eidx, &evals), PB_OK);
                size_t rows_pad = (size_t)bm.block_rows * (size_t)b;
                for (int32_t i = 0; i < m->n_rows; i++) {
                    int32_t br = i / b;
                    double got = 0, want = 0;
                    for (int32_t j = 0; j < width && eidx[(size_t)j * bm.block_rows + br] >= 0; j++)
                        for (int q = 0; q < b; q++) {
                            int32_t col = eidx[(size_t)j * bm.block_rows + br] * b + q;
                            size_t at = ((size_t)j * b + q) * rows_pad + (size_t)i;
                            if (col < m->n_cols)
                                got += (single ? ((float *)evals)[at] : ((double *)evals)[at]) * x[col];
                        }
                    for (int32_t k = ptr[i]; k < ptr[i + 1]; k++)
                        want += (single ? (double)val32[k] : m->values[k]) * x[m->cols[k]];
                    if (fabs(got - want) > 1e-12 * (1 + fabs(want)))
                        fail_msg("%s b=%d block ELLPACK row %d: %.17g, expected %.17g", cases[c].name, b, i, got, want);
                }
                pb__host_free(eidx), pb__host_free(evals);
                if (c == 1) /* one row of 1000 among short ones: padding everything to it is refused */
                    assert_int_equal(pb__bcsr_ellt(&bm, 8, 2, &width, &eidx, &evals), PB_ERR_UNSUPPORTED);
                pb__bcsr_free(&bm);
            }
        double ratio = 0; /* long rows side by side: the pick's scratch holds any size's block rows */
        int picked = pb__bcsr_pick(ptr, m->cols, m->n_rows, m->n_cols, 8, &ratio);
        assert_true(m->nnz == 0 || (picked >= 2 && picked <= PB_BCSR_MAX_B && ratio > 0));
        free(x), free(y), free(val32), free(ptr);
    }
    /* OpenMP's bcsr at every block size imposed, so its kernels run on every
     * case, not only on matrices made of blocks */
    const pb_backend *omp = pb_backend_find("openmp");
    if (omp && pb_test_backend_usable(omp)) {
        pb_device *dev = NULL;
        assert_int_equal(pb_device_open(omp, 0, &dev), PB_OK);
        int failed = 0;
        for (int b = 2; b <= PB_BCSR_MAX_B; b++) {
            char value[2] = {(char)('0' + b), 0};
            setenv("PARBENCH_BCSR_B", value, 1);
            cases_ran = cases_declined = 0;
            for (size_t c = 0; c < N_CASES; c++)
                for (int single = 0; single < 2; single++)
                    failed += run_case(dev, "openmp", "bcsr", PB_SPARSE_CSR, &cases[c], single ? PB_FLOAT : PB_DOUBLE,
                                       0, 0);
            assert_int_equal(cases_declined, 0);
        }
        unsetenv("PARBENCH_BCSR_B");
        pb_device_close(dev);
        assert_int_equal(failed, 0);
    }
    /* auto's every pick imposed (PARBENCH_AUTO_PICK), so a kernel this
     * machine's clock never picks is still checked behind auto */
    static const struct {
        const char *backend, *picks[8];
    } forced[] = {{"opencl", {"ellt", "csr-balanced", "csr-scalar", "csr-vector", "dia"}},
                  {"openmp", {"bcsr", "csr", "dia", "csr-panels", "csr-hubs", "csr-prefetch"}},
                  {"cuda", {"ellt", "csr-balanced", "csr-split", "bcsr", "dia", "csr-panels", "csr-vector", "csr-hubs"}}};
    for (size_t f = 0; f < PB_ARRAY_LEN(forced); f++) {
        const pb_backend *be = pb_backend_find(forced[f].backend);
        if (!be || !pb_test_backend_usable(be))
            continue;
        pb_device *dev = NULL;
        assert_int_equal(pb_device_open(be, 0, &dev), PB_OK);
        int failed = 0;
        setenv("PARBENCH_PANELS", "3", 1); /* csr-panels a candidate however small x is */
        setenv("PARBENCH_HUBS_ANY", "1", 1); /* and csr-hubs whatever its columns */
        for (int k = 0; k < 8 && forced[f].picks[k]; k++) {
            setenv("PARBENCH_AUTO_PICK", forced[f].picks[k], 1);
            for (size_t c = 0; c < N_CASES; c++)
                for (int single = 0; single < 2; single++)
                    failed += run_case(dev, forced[f].backend, "auto", PB_SPARSE_CSR, &cases[c],
                                       single ? PB_FLOAT : PB_DOUBLE, 0, 0);
        }
        unsetenv("PARBENCH_AUTO_PICK");
        unsetenv("PARBENCH_PANELS");
        unsetenv("PARBENCH_HUBS_ANY");
        pb_device_close(dev);
        assert_int_equal(failed, 0);
    }
    /* csr-panels in 1, 2, 3 and 7 panels (PARBENCH_PANELS): panels with no
     * entries, rows in none or in several, the later panels adding into y;
     * refused on these small matrices without it */
    static const char *const panel_backends[] = {"openmp", "cuda"};
    for (size_t b = 0; b < PB_ARRAY_LEN(panel_backends); b++) {
        const pb_backend *be = pb_backend_find(panel_backends[b]);
        if (!be || !pb_test_backend_usable(be))
            continue;
        pb_device *dev = NULL;
        assert_int_equal(pb_device_open(be, 0, &dev), PB_OK);
        pb_device_set_threads(dev, 3);
        int failed = 0;
        cases_ran = cases_declined = 0;
        failed += run_case(dev, panel_backends[b], "csr-panels", PB_SPARSE_CSR, &cases[0], PB_DOUBLE, 0, 0);
        assert_int_equal(cases_declined, 1);
        static const char *const counts[] = {"1", "2", "3", "7"};
        cases_ran = cases_declined = 0;
        for (size_t n = 0; n < PB_ARRAY_LEN(counts); n++) {
            setenv("PARBENCH_PANELS", counts[n], 1);
            for (size_t c = 0; c < N_CASES; c++)
                for (int single = 0; single < 2; single++)
                    failed += run_case(dev, panel_backends[b], "csr-panels", PB_SPARSE_CSR, &cases[c],
                                       single ? PB_FLOAT : PB_DOUBLE, 0, 0);
        }
        unsetenv("PARBENCH_PANELS");
        pb_device_close(dev);
        assert_int_equal(failed, 0);
        assert_int_equal(cases_declined, 0);
    }
    /* rows 7 and 8 long: a block row of 3 holds both, one of 8 only one */
    int32_t len[16] = {1, 1, 1, 1, 1, 1, 1, 100, 100, 1, 1, 1, 1, 1, 1, 1}, *lptr = NULL;
    struct pb_coo straddle;
    make_rows(&straddle, 16, 200, len, 12);
    assert_int_equal(pb__csr_offsets(&straddle, &lptr), PB_OK);
    double lratio = 0;
    assert_true(pb__bcsr_pick(lptr, straddle.cols, 16, 200, 8, &lratio) >= 2);
    free(lptr);
    pb_coo_free(&straddle);
    static const struct {
        const char *spec;
        int b;
    } picks[] = {{"blocks:3000:3:6", 3}, {"blocks:3000:6:4", 6}, {"blocks:300k:4:5", 4}, {"random:300k:8", 0},
                 {"rect:1000:2000000000:8", 0}}; /* 2e9 columns: no array as long as them */
    for (size_t i = 0; i < PB_ARRAY_LEN(picks); i++) {
        struct pb_coo m;
        int32_t *ptr = NULL;
        assert_int_equal(pb__sparse_generate(picks[i].spec, 5, &m), PB_OK);
        assert_int_equal(pb__csr_offsets(&m, &ptr), PB_OK);
        double ratio = 0;
        int b = pb__bcsr_pick(ptr, m.cols, m.n_rows, m.n_cols, 8, &ratio);
        if (picks[i].b) {
            assert_int_equal(b, picks[i].b);
            assert_true(ratio > 0.5 && ratio < 0.8); /* 8-byte values: an index per block instead of per entry */
        } else {
            assert_true(ratio > 1.5); /* random columns: blocks hold one entry each */
            struct pb_bcsr bm;
            assert_int_equal(pb__bcsr_build(ptr, m.cols, m.values, 8, m.n_rows, m.n_cols, 2, &bm), PB_OK);
            assert_true(bm.blocks <= (int32_t)m.nnz && bm.blocks > 0.99 * (double)m.nnz); /* few share a block */
            pb__bcsr_free(&bm);
        }
        free(ptr);
        pb_coo_free(&m);
    }
    struct pb_bcsr bm;
    int32_t ptr1[2] = {0, 0};
    assert_int_equal(pb__bcsr_build(ptr1, NULL, NULL, 8, 1, 1, 9, &bm), PB_ERR_INVALID);
}

/* DIA: the diagonals counted (none past 64), and OpenMP's and OpenCL's dia verified on
 * every case of few diagonals whatever its byte ratio (PARBENCH_DIA_ANY),
 * rectangles whose diagonals leave the matrix on either side among them. */
static void test_dia(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        int diags;
    } counts[] = {{"lap2d:30", 5}, {"lap3d:9", 7}, {"band:5000:3:0", 7}, {"band:5000:3:2", 11}, {"random:3000:8", 0},
                  {"band:5000:40:0", 0}};
    for (size_t i = 0; i < PB_ARRAY_LEN(counts); i++) {
        struct pb_coo m;
        int32_t *ptr = NULL;
        assert_int_equal(pb__sparse_generate(counts[i].spec, 3, &m), PB_OK);
        assert_int_equal(pb__csr_offsets(&m, &ptr), PB_OK);
        double ratio = 0;
        struct pb_dia_shape shape;
        int d = pb__dia_pick(ptr, m.cols, m.n_rows, m.n_cols, 8, &shape, &ratio);
        if (d != counts[i].diags)
            print_message("%s: %d diagonals, expected %d\n", counts[i].spec, d, counts[i].diags);
        assert_int_equal(d, counts[i].diags);
        for (int q = 1; q < d; q++)
            assert_true(shape.offset[q - 1] < shape.offset[q]);
        for (int q = 0; q < d; q++) /* spans within the matrix, every column of them inside it */
            assert_true(shape.count[q] >= 1 && shape.first[q] >= 0 && shape.first[q] + shape.count[q] <= m.n_rows &&
                        shape.first[q] + shape.offset[q] >= 0 &&
                        shape.first[q] + shape.count[q] - 1 + shape.offset[q] < m.n_cols);
        if (d) /* doubles without an index: below CSR's bytes (band's wrapped far diagonals are half full) */
            assert_true(ratio > 0.5 && ratio < 0.8);
        free(ptr);
        pb_coo_free(&m);
    }
    /* a diagonal with one entry costs one value, not a diagonal's worth: the
     * main diagonal of 1000 rows and (0, 999) move half CSR's bytes */
    {
        int32_t ptr[1001], idx[1001];
        for (int32_t i = 0, k = 0; i < 1000; i++) {
            ptr[i] = k;
            idx[k++] = i;
            if (i == 0)
                idx[k++] = 999;
        }
        ptr[1000] = 1001;
        struct pb_dia_shape shape;
        double ratio = 0;
        assert_int_equal(pb__dia_pick(ptr, idx, 1000, 1000, 8, &shape, &ratio), 2);
        assert_int_equal(shape.offset[1], 999);
        assert_int_equal(shape.first[1], 0);
        assert_int_equal(shape.count[1], 1);
        assert_int_equal(shape.count[0], 1000);
        assert_true(ratio > 0.45 && ratio < 0.55);
    }
    /* 40 x 25 and 25 x 40 with diagonals -7, -2, 0, 3, 30: some leave on one side, one is outside */
    struct matrix_case rect[2];
    for (int t = 0; t < 2; t++) {
        struct pb_coo *m = &rect[t].m;
        rect[t].name = t ? "25x40" : "40x25";
        int32_t rows = t ? 25 : 40, cols = t ? 40 : 25;
        static const int offs[] = {-7, -2, 0, 3, 30};
        memset(m, 0, sizeof *m);
        m->n_rows = rows, m->n_cols = cols;
        m->rows = calloc((size_t)rows * 5, sizeof *m->rows);
        m->cols = calloc((size_t)rows * 5, sizeof *m->cols);
        m->values = calloc((size_t)rows * 5, sizeof *m->values);
        assert_true(m->rows && m->cols && m->values);
        for (int32_t i = 0; i < rows; i++)
            for (int q = 0; q < 5; q++)
                if (i + offs[q] >= 0 && i + offs[q] < cols)
                    m->rows[m->nnz] = i, m->cols[m->nnz] = i + offs[q], m->values[m->nnz++] = 1.0 / (1 + i + q);
    }
    static const char *const backends[] = {"openmp", "opencl", "cuda"};
    for (size_t b = 0; b < PB_ARRAY_LEN(backends); b++) {
        const pb_backend *be = pb_backend_find(backends[b]);
        if (!be || !pb_test_backend_usable(be))
            continue;
        pb_device *dev = NULL;
        assert_int_equal(pb_device_open(be, 0, &dev), PB_OK);
        setenv("PARBENCH_DIA_ANY", "1", 1);
        cases_ran = cases_declined = 0;
        int failed = 0;
        for (int single = 0; single < 2; single++) {
            enum pb_precision prec = single ? PB_FLOAT : PB_DOUBLE;
            for (size_t c = 0; c < N_CASES; c++)
                failed += run_case(dev, backends[b], "dia", PB_SPARSE_CSR, &cases[c], prec, 0, 0);
            for (int t = 0; t < 2; t++)
                failed += run_case(dev, backends[b], "dia", PB_SPARSE_CSR, &rect[t], prec, 0, 0);
        }
        unsetenv("PARBENCH_DIA_ANY");
        pb_device_close(dev);
        assert_int_equal(failed, 0);
        assert_true(cases_ran >= 2 * 6);      /* 1x1, lap2d, the zoo's bands and stencils, both rectangles */
        assert_true(cases_declined >= 2 * 3); /* random, power-law and no non-zeros at least */
    }
    for (int t = 0; t < 2; t++)
        pb_coo_free(&rect[t].m);
}

/* A Laplacian's rows made alone (spmv-dist --reader each) are the whole
 * matrix's rows: pieces of any size, the lengths of every row. */
static void test_rows_alone(void **state)
{
    (void)state;
    const char *specs[] = {"lap2d:7", "lap3d:5", "lap2d:1"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        struct pb_coo whole, part;
        assert_true(pb__sparse_rows_alone(specs[s]));
        assert_int_equal(pb__sparse_generate(specs[s], 1, &whole), PB_OK);
        int32_t rows, cols;
        int64_t *len = NULL;
        assert_int_equal(pb__sparse_row_lengths(specs[s], &rows, &cols, &len), PB_OK);
        assert_int_equal(rows, whole.n_rows);
        assert_int_equal(cols, whole.n_cols);
        size_t at = 0;
        for (int32_t first = 0, count = 0; first < rows; first += count) {
            count = 1 + first % 4; /* pieces of 1-4 rows, and an empty one */
            if (first + count > rows)
                count = rows - first;
            assert_int_equal(pb__sparse_generate_rows(specs[s], first, 0, &part), PB_OK);
            assert_int_equal(part.nnz, 0);
            pb_coo_free(&part);
            assert_int_equal(pb__sparse_generate_rows(specs[s], first, count, &part), PB_OK);
            assert_int_equal(part.n_rows, rows);
            int64_t want = 0;
            for (int32_t i = first; i < first + count; i++)
                want += len[i];
            assert_int_equal((int64_t)part.nnz, want);
            for (size_t k = 0; k < part.nnz; k++, at++) {
                assert_int_equal(part.rows[k], whole.rows[at]);
                assert_int_equal(part.cols[k], whole.cols[at]);
                assert_true(part.values[k] == whole.values[at]);
            }
            pb_coo_free(&part);
        }
        assert_int_equal(at, whole.nnz);
        free(len);
        pb_coo_free(&whole);
    }
    struct pb_coo m;
    assert_false(pb__sparse_rows_alone("powerlaw:100:4"));
    assert_int_equal(pb__sparse_generate_rows("powerlaw:100:4", 0, 10, &m), PB_ERR_UNSUPPORTED);
    assert_int_equal(pb__sparse_generate_rows("lap2d:3", 5, 5, &m), PB_ERR_INVALID); /* past the end */
}

/* The csr-balanced plan, run on the host as the kernels run it, gives every
 * row once, within the limits the kernels rely on. */
/* csr-panels' count: x over the cache's share, rounded up and capped; none
 * where x fits; PARBENCH_PANELS imposes a count in range only. And the
 * cache it is weighed against is read on Linux. */
static void test_panel_count(void **state)
{
    (void)state;
    unsetenv("PARBENCH_PANELS");
    const double mib = 1048576.0;
    assert_int_equal(pb__panels_for(8 * mib, 16 * mib), 0);
    assert_int_equal(pb__panels_for(16 * mib, 16 * mib), 0);
    assert_int_equal(pb__panels_for(16 * mib + 1, 16 * mib), 2);
    assert_int_equal(pb__panels_for(100 * mib, 16.7 * mib), 6);
    assert_int_equal(pb__panels_for(1e15, 16 * mib), PB_PANELS_MAX);
    assert_int_equal(pb__panels_for(32 * mib, 0), 0); /* cache unknown: no panels */
    /* long rows: panels for the private cache while each keeps 8 of a row */
    assert_int_equal(pb__panels_for_rows(32 * mib, 16 * mib, 1 * mib, 1024), 32);
    assert_int_equal(pb__panels_for_rows(32 * mib, 16 * mib, 1 * mib, 100), 12);
    assert_int_equal(pb__panels_for_rows(32 * mib, 16 * mib, 1 * mib, 8), 2); /* short rows: the coarse rule */
    assert_int_equal(pb__panels_for_rows(8 * mib, 16 * mib, 1 * mib, 12), 0); /* one fine panel a row: none */
    assert_int_equal(pb__panels_for_rows(8 * mib, 16 * mib, 1 * mib, 64), 8);
    assert_int_equal(pb__panels_for_rows(8 * mib, 16 * mib, 0, 1024), 0); /* level 2 unknown */
    setenv("PARBENCH_PANELS", "3", 1);
    assert_int_equal(pb__panels_for(1, 16 * mib), 3);
    setenv("PARBENCH_PANELS", "65", 1); /* out of range: the rule */
    assert_int_equal(pb__panels_for(32 * mib, 16 * mib), 2);
    unsetenv("PARBENCH_PANELS");
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index0/size", "r");
    if (f) { /* where Linux says what the caches are */
        fclose(f);
        assert_true(pb__cpu_last_cache_bytes() >= 64 * 1024);
    }
}

static void test_balance_plan(void **state)
{
    (void)state;
    for (size_t c = 0; c < 2 * N_CASES; c++) {
        const struct pb_coo *m = &cases[c % N_CASES].m;
        int32_t *ptr = NULL, rows = m->n_rows;
        assert_int_equal(pb__csr_offsets(m, &ptr), PB_OK);
        struct pb_bal_plan plan;
        int32_t block_nnz = c % 2 ? PB_BAL_NNZ : PB_BAL_NNZ_MAX;
        bool warp_rows = c >= N_CASES; /* both kinds of plan on every case */
        assert_int_equal(pb__bal_plan(ptr, rows, block_nnz, warp_rows, &plan), PB_OK);
        double *y = malloc(((size_t)rows + 1) * sizeof *y), *partial = calloc((size_t)plan.n_parts + 1, sizeof *partial);
        int *written = calloc((size_t)rows + 1, sizeof *written);
        assert_true(y && partial && written);
        int32_t last_row = 0;
        for (int32_t b = 0; b < plan.n_blocks; b++) {
            const struct pb_bal_block *bl = &plan.blocks[b];
            assert_true(bl->row0 >= last_row && bl->row1 > bl->row0 && bl->row1 <= rows);
            last_row = bl->row1;
            assert_int_equal(bl->k0, ptr[bl->row0]);
            assert_int_equal(bl->k1, ptr[bl->row1]);
            assert_true(bl->k1 - bl->k0 <= block_nnz && bl->row1 - bl->row0 <= PB_BAL_ROWS);
            assert_true(bl->group >= 1 && bl->group <= 32 && (bl->group & (bl->group - 1)) == 0);
            int32_t per_pass = PB_BAL_THREADS / bl->group;
            assert_true((bl->row1 - bl->row0 + per_pass - 1) / per_pass <= PB_BAL_PASSES);
            for (int32_t i = bl->row0; i < bl->row1; i++) {
                assert_true(ptr[i + 1] - ptr[i] <= (warp_rows ? PB_BAL_WARP_LONG : PB_BAL_LONG));
                /* without warps for them, no row takes more than PB_BAL_STEPS steps of the group */
                assert_true(warp_rows || ptr[i + 1] - ptr[i] <= PB_BAL_STEPS * bl->group);
                double sum = 0;
                for (int32_t k = ptr[i]; k < ptr[i + 1]; k++)
                    sum += m->values[k];
                y[i] = sum, written[i]++;
            }
        }
        for (int32_t p = 0; p < plan.n_pieces; p++) {
            const struct pb_bal_piece *pc = &plan.pieces[p];
            assert_true(pc->k1 - pc->k0 <= PB_BAL_PIECE && pc->k0 >= ptr[pc->row] && pc->k1 <= ptr[pc->row + 1]);
            double sum = 0;
            for (int32_t k = pc->k0; k < pc->k1; k++)
                sum += m->values[k];
            if (pc->pieces == 1) {
                y[pc->row] = sum, written[pc->row]++;
                continue;
            }
            assert_true(pc->part >= pc->first && pc->part < pc->first + pc->pieces && pc->part < plan.n_parts);
            partial[pc->part] = sum;
            if (pc->part == pc->first + pc->pieces - 1) { /* here: the pieces come in order */
                double total = 0;
                for (int32_t i = 0; i < pc->pieces; i++)
                    total += partial[pc->first + i];
                y[pc->row] = total, written[pc->row]++;
            }
        }
        for (int32_t i = 0; i < rows; i++) {
            double ref = 0;
            for (int32_t k = ptr[i]; k < ptr[i + 1]; k++)
                ref += m->values[k];
            if (written[i] != 1 || fabs(y[i] - ref) > 1e-9 * (1 + fabs(ref)))
                fail_msg("%s: row %d written %d times, %.17g for %.17g", cases[c % N_CASES].name, i, written[i], y[i],
                         ref);
        }
        free(y), free(partial), free(written), free(ptr);
        pb__bal_free(&plan);
    }
    /* the zoo's long rows really are cut */
    int32_t ptr[3] = {0, 9000, 9001};
    struct pb_bal_plan plan;
    assert_int_equal(pb__bal_plan(ptr, 2, 100, false, &plan), PB_ERR_INVALID);
    assert_int_equal(pb__bal_plan(ptr, 2, PB_BAL_NNZ, false, &plan), PB_OK);
    assert_int_equal(plan.n_pieces, 3);
    assert_int_equal(plan.n_parts, 3);
    assert_int_equal(plan.n_blocks, 1);
    pb__bal_free(&plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_variant),
        cmocka_unit_test(test_wrong_format),
        cmocka_unit_test(test_offsets64),
        cmocka_unit_test(test_cached_state_sees_new_values),
        cmocka_unit_test(test_matrices_in_turn),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_bcsr),
        cmocka_unit_test(test_dia),
        cmocka_unit_test(test_rows_alone),
        cmocka_unit_test(test_panel_count),
        cmocka_unit_test(test_hubs_plan),
        cmocka_unit_test(test_balance_plan),
    };
    return pb_test_run(tests, setup, teardown);
}

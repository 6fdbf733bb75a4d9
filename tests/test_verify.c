/* Verification against a double oracle: pb__check_* and pb__epsilon; the
 * scaled checks; and the planted bugs the GEMM and SpMV checks must fail
 * (a later k slice overwriting instead of accumulating, a block edge off by
 * one, inputs rounded to TF32, a zeroed SpMV row among rows of tiny values,
 * a fault injected anywhere), at shapes up to and past 2^33 multiply-adds,
 * next to the correct results that must pass; and GEMM in tf32, bf16, fp16
 * (products of the rounded inputs summed in fp32 in order, as tensor cores
 * do, and by ref, must pass; a fault, a zeroed element and inputs rounded
 * further must fail). */
#include <float.h>

#include "test_util.h"

#include "bench/bench.h"
#include "bench/gemm_host.h"
#include "core/precision.h"
#include "core/rng.h"
#include "core/verify.h"
#include "parbench/pb_backend.h"
#include "parbench/pb_kernels.h"

#define N 10000 /* a 100 x 100 matrix */

static const enum pb_precision precs[] = {PB_FLOAT, PB_DOUBLE};

/* Oracle values around 1 (0.9 .. 1.16), exactly representable as neither. */
static void make_ref(double *ref, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ref[i] = 0.9 + 0.01 * (double)(i % 27);
}

/* out[i] = ref[i] * (1 + rel), stored in prec. */
static void make_out(void *out, enum pb_precision prec, const double *ref, size_t n, double rel)
{
    for (size_t i = 0; i < n; i++) {
        double x = ref[i] * (1.0 + rel);
        if (prec == PB_DOUBLE)
            ((double *)out)[i] = x;
        else
            ((float *)out)[i] = (float)x;
    }
}

static void set_elem(void *out, enum pb_precision prec, size_t i, double x)
{
    if (prec == PB_DOUBLE)
        ((double *)out)[i] = x;
    else
        ((float *)out)[i] = (float)x;
}

/* One full check of n elements (as the output's elements first .. first+n-1). */
static struct pb_check check(const void *out, enum pb_precision prec, const double *ref,
                             size_t n, size_t first, double tol)
{
    struct pb_check c;
    pb__check_begin(&c, tol, "full");
    pb__check_add(&c, out, prec, ref, n, first);
    pb__check_end(&c);
    return c;
}

struct arrays {
    double ref[N];
    double out_d[N];
    float out_f[N];
};

static void *out_of(struct arrays *a, enum pb_precision prec)
{
    return prec == PB_DOUBLE ? (void *)a->out_d : (void *)a->out_f;
}

static int setup(void **state)
{
    struct arrays *a = malloc(sizeof *a);
    if (!a)
        return -1;
    make_ref(a->ref, N);
    *state = a;
    return 0;
}

static int teardown(void **state)
{
    free(*state);
    return 0;
}

static void test_epsilon(void **state)
{
    (void)state;
    assert_true(pb__epsilon(PB_DOUBLE) == DBL_EPSILON);
    assert_true(pb__epsilon(PB_FLOAT) == FLT_EPSILON);
    volatile float one = 1.0f, half_eps = (float)(pb__epsilon(PB_FLOAT) / 2);
    assert_true(one + (float)pb__epsilon(PB_FLOAT) != one);
    assert_true(one + half_eps == one);
}

static void test_exact_match(void **state)
{
    struct arrays *a = *state;
    for (size_t p = 0; p < PB_ARRAY_LEN(precs); p++) {
        /* The oracle holds the output's values exactly (as from rounded inputs). */
        void *out = out_of(a, precs[p]);
        double ref[N];
        make_out(out, precs[p], a->ref, N, 0.0);
        for (size_t i = 0; i < N; i++)
            ref[i] = precs[p] == PB_DOUBLE ? a->out_d[i] : (double)a->out_f[i];
        struct pb_check c = check(out, precs[p], ref, N, 0, 1e-12);
        assert_true(c.pass);
        assert_true(c.err_norm == 0.0);
        assert_true(c.err_max == 0.0);
        assert_int_equal(c.checked, N);
        assert_false(c.nonfinite);
        assert_string_equal(c.mode, "full");
    }
}

static void test_small_error_passes(void **state)
{
    struct arrays *a = *state;
    for (size_t p = 0; p < PB_ARRAY_LEN(precs); p++) {
        double eps = pb__epsilon(precs[p]), tol = 32 * eps;
        void *out = out_of(a, precs[p]);
        make_out(out, precs[p], a->ref, N, 4 * eps);
        struct pb_check c = check(out, precs[p], a->ref, N, 0, tol);
        assert_true(c.pass);
        assert_true(c.err_norm > 0 && c.err_norm <= tol);
        assert_true(c.err_max > 0 && c.err_max <= tol);
        assert_near(c.tol, tol, 0);
    }
}

static void test_large_error_fails(void **state)
{
    struct arrays *a = *state;
    for (size_t p = 0; p < PB_ARRAY_LEN(precs); p++) {
        double tol = 32 * pb__epsilon(precs[p]);
        void *out = out_of(a, precs[p]);
        make_out(out, precs[p], a->ref, N, 100 * tol);
        struct pb_check c = check(out, precs[p], a->ref, N, 0, tol);
        assert_false(c.pass);
        assert_true(c.err_norm > tol);
        assert_contains(c.detail, "tolerance");
    }
}

/* One element off by 1.0 in a 100 x 100 matrix of values around 1: the
 * normwise error (about 1/100) is within the tolerance, the elementwise
 * maximum (about 1) is not, and the check must fail. */
static void test_planted_element_fails(void **state)
{
    struct arrays *a = *state;
    for (size_t p = 0; p < PB_ARRAY_LEN(precs); p++) {
        const double tol = 0.05;
        void *out = out_of(a, precs[p]);
        make_out(out, precs[p], a->ref, N, 0.0);
        set_elem(out, precs[p], 4242, a->ref[4242] + 1.0);
        struct pb_check c = check(out, precs[p], a->ref, N, 0, tol);
        assert_true(c.err_norm <= tol); /* the norm alone would let it through */
        assert_true(c.err_max > tol);
        assert_false(c.pass);
        assert_true(c.detail[0] != '\0');
    }
}

/* A non-finite element fails whatever the tolerance; the detail names its
 * index in the whole output (first + i) and what it is. */
static void expect_nonfinite(struct arrays *a, enum pb_precision prec, double bad,
                             const char *word)
{
    void *out = out_of(a, prec);
    make_out(out, prec, a->ref, N, 0.0);
    set_elem(out, prec, 17, bad);
    set_elem(out, prec, 99, bad); /* only the first one is named */
    struct pb_check c = check(out, prec, a->ref, N, 1000, 1e300);
    assert_false(c.pass);
    assert_true(c.nonfinite);
    assert_true(isnan(c.err_norm) && isnan(c.err_max));
    assert_contains(c.detail, word);
    assert_contains(c.detail, "1017");
}

static void test_nonfinite_fails(void **state)
{
    struct arrays *a = *state;
    for (size_t p = 0; p < PB_ARRAY_LEN(precs); p++) {
        expect_nonfinite(a, precs[p], NAN, "NaN");
        expect_nonfinite(a, precs[p], INFINITY, "Inf");
        expect_nonfinite(a, precs[p], -INFINITY, "Inf");
    }
}

/* Accumulating in pieces gives the same answer as one call. */
static void test_chunked_add(void **state)
{
    struct arrays *a = *state;
    make_out(a->out_d, PB_DOUBLE, a->ref, N, 1e-9);
    a->out_d[7000] += 0.5;
    struct pb_check whole = check(a->out_d, PB_DOUBLE, a->ref, N, 0, 1e-3), parts;
    pb__check_begin(&parts, 1e-3, "sampled");
    for (size_t i = 0; i < N; i += 100)
        pb__check_add(&parts, a->out_d + i, PB_DOUBLE, a->ref + i, 100, i);
    pb__check_end(&parts);
    assert_int_equal(parts.checked, N);
    assert_near(parts.err_norm, whole.err_norm, 1e-15);
    assert_near(parts.err_max, whole.err_max, 0);
    assert_int_equal(parts.pass, whole.pass);
    assert_false(parts.pass);
}

/* An all-zero oracle makes the error absolute. */
static void test_zero_reference(void **state)
{
    (void)state;
    const double ref[4] = {0, 0, 0, 0};
    const double zeros[4] = {0, 0, 0, 0}, tiny[4] = {0, 1e-20, 0, -1e-20}, ones[4] = {0, 0, 1, 0};
    struct pb_check c = check(zeros, PB_DOUBLE, ref, 4, 0, 1e-12);
    assert_true(c.pass);
    assert_true(c.err_norm == 0 && c.err_max == 0);
    c = check(tiny, PB_DOUBLE, ref, 4, 0, 1e-12);
    assert_true(c.pass);
    assert_true(isfinite(c.err_norm) && c.err_norm > 0);
    c = check(ones, PB_DOUBLE, ref, 4, 0, 1e-12);
    assert_false(c.pass);
    assert_near(c.err_max, 1.0, 0);

    const float fzeros[4] = {0, 0, 0, 0}, fones[4] = {0, 1, 0, 0};
    assert_true(check(fzeros, PB_FLOAT, ref, 4, 0, 1e-6).pass);
    assert_false(check(fones, PB_FLOAT, ref, 4, 0, 1e-6).pass);
}

static void test_finite_only(void **state)
{
    struct arrays *a = *state;
    for (size_t p = 0; p < PB_ARRAY_LEN(precs); p++) {
        void *out = out_of(a, precs[p]);
        make_out(out, precs[p], a->ref, N, 0.5); /* wrong, but finite-only does not compare */
        struct pb_check c;
        pb__check_begin(&c, 1e-6, "sampled");
        pb__check_finite(&c, out, precs[p], N, 0);
        pb__check_end(&c);
        assert_true(c.pass);

        set_elem(out, precs[p], N - 1, NAN);
        pb__check_begin(&c, 1e-6, "sampled");
        pb__check_finite(&c, out, precs[p], N, 0);
        pb__check_end(&c);
        assert_false(c.pass);
        assert_contains(c.detail, "NaN");
        assert_contains(c.detail, "9999");
    }
}


/* ---- scaled checks ------------------------------------------------------ */

static struct pb_check scaled(const double *out, const double *ref, const double *scale, size_t n)
{
    struct pb_check c;
    pb__check_begin(&c, PB_CHECK_TOL, "full");
    pb__check_add_scaled(&c, out, PB_DOUBLE, ref, scale, n, 100, NULL);
    pb__check_end(&c);
    return c;
}

static void test_scaled(void **state)
{
    (void)state;
    const double ref[4] = {1, 2, 0, -4}, scale[4] = {1e-6, 1e-6, 0, 1e-3};
    double out[4] = {1, 2, 0, -4};
    struct pb_check c = scaled(out, ref, scale, 4);
    assert_true(c.pass);
    assert_true(c.err_max == 0 && c.err_norm == 0);

    out[1] = 2 + 15e-6; /* 15 scales: within */
    c = scaled(out, ref, scale, 4);
    assert_true(c.pass);
    assert_near(c.err_max, 15, 1e-6);
    assert_true(c.err_norm <= c.err_max);

    out[1] = 2 + 17e-6; /* 17 scales: out, and named by its index */
    c = scaled(out, ref, scale, 4);
    assert_false(c.pass);
    assert_contains(c.detail, "element 101");
    assert_contains(c.detail, "tolerance");

    out[1] = 2; /* a zero scale: exact answers only */
    out[2] = 1e-300;
    c = scaled(out, ref, scale, 4);
    assert_false(c.pass);
    assert_true(isinf(c.err_max));

    out[2] = NAN;
    c = scaled(out, ref, scale, 4);
    assert_false(c.pass);
    assert_contains(c.detail, "NaN");
}

/* Sums of squares of huge and tiny terms keep their size (a plain sum made
 * Inf or 0 of them), and so do the checks that use them: outputs near 1e200
 * are judged as outputs near 1. */
static void test_sumsq_range(void **state)
{
    (void)state;
    struct pb_sumsq a = {0};
    const double terms[] = {3e200, 4e200, 0, 1e-300, 5, 12};
    for (size_t i = 0; i < PB_ARRAY_LEN(terms); i++)
        pb__sumsq_add(&a, terms[i]);
    assert_near(pb__sumsq_norm(&a) / 5e200, 1, 1e-15);
    struct pb_sumsq b = {0};
    pb__sumsq_add(&b, 3e-200);
    pb__sumsq_add(&b, 4e-200);
    assert_near(pb__sumsq_norm(&b) / 5e-200, 1, 1e-15);
    struct pb_sumsq c = {0};
    pb__sumsq_add(&c, 3);
    pb__sumsq_add(&c, 4);
    assert_near(pb__sumsq_norm(&c), 5, 1e-15);
    assert_false(pb__sumsq_in_range(1e300 * 1e300));
    assert_false(pb__sumsq_in_range(0));
    assert_true(pb__sumsq_in_range(1e-100));
    /* A row of terms near 1e200: its scale is finite, so an error of 1e-12 relative fails. */
    struct pb_sumsq t = {0};
    pb__sumsq_add(&t, 1e200);
    pb__sumsq_add(&t, -7e199);
    double ref[2] = {3e199, 1}, scale[2] = {pb__dot_scale_scaled(PB_DOUBLE, 2, &t), 1e-15};
    assert_true(isfinite(scale[0]) && scale[0] > 0);
    double out[2] = {3e199, 1};
    struct pb_check ok = scaled(out, ref, scale, 2);
    assert_true(ok.pass);
    out[0] = 3e199 * (1 + 1e-12);
    struct pb_check bad = scaled(out, ref, scale, 2);
    assert_false(bad.pass);
    assert_true(isfinite(bad.err_norm) && bad.err_norm > 16);
}

/* The dot-product scale: u sqrt(n sumsq) plus the underflow allowance; for
 * the tensor-core types u = 2^-22 (1 + sqrt(n / 768)), twice 2^-22 at 768. */
static void test_dot_scale(void **state)
{
    (void)state;
    assert_near(pb__dot_scale(PB_FLOAT, 4, 9), 0x1p-24 * 6 + 4 * FLT_MIN, 1e-20);
    assert_near(pb__dot_scale(PB_DOUBLE, 100, 1), 0x1p-53 * 10 + 100 * DBL_MIN, 1e-30);
    assert_near(pb__dot_scale(PB_TF32, 768, 1), 0x1p-22 * 2 * sqrt(768.0) + 768 * FLT_MIN, 1e-15);
    assert_near(pb__dot_scale(PB_BF16, 3072, 4), 0x1p-22 * 3 * sqrt(3072.0 * 4) + 3072 * FLT_MIN, 1e-15);
    assert_true(pb__dot_scale(PB_FLOAT, 0, 0) == 0);
}

/* ---- GEMM: planted bugs ------------------------------------------------- */

#define KC_FLOAT 768 /* the blocked OpenMP kernel's k slice in float */

static pb_device *gemm_dev;
static const char *gemm_variant;

/* Products come from the OpenMP blocked kernel (fast enough for 2^33
 * multiply-adds), or the reference when OpenMP is not built. */
static int gemm_setup(void **state)
{
    (void)state;
    const pb_backend *b = pb_backend_find("openmp");
    const char *why;
    gemm_variant = "blocked";
    if (!b || !pb_backend_available(b, &why)) {
        b = pb_backend_find("ref");
        gemm_variant = "ikj";
    }
    return pb_device_open(b, 0, &gemm_dev) == PB_OK ? 0 : -1;
}

static int gemm_teardown(void **state)
{
    (void)state;
    pb_device_close(gemm_dev);
    return 0;
}

static float tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u = (u + 0x1000u) & ~0x1FFFu; /* round to 10 mantissa bits */
    memcpy(&x, &u, sizeof x);
    return x;
}

/* C = A[:, p0:p1] * B[p0:p1, :] in float; inputs rounded to TF32 first when
 * asked. */
static float *product(const float *a, const float *b, size_t m, size_t n, size_t k, size_t p0, size_t p1,
                      bool to_tf32)
{
    size_t kk = p1 - p0;
    float *as = malloc(m * kk * sizeof *as), *bs = malloc(kk * n * sizeof *bs), *c = malloc(m * n * sizeof *c);
    assert_true(as && bs && c);
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < kk; p++)
            as[i * kk + p] = to_tf32 ? tf32(a[i * k + p0 + p]) : a[i * k + p0 + p];
    for (size_t i = 0; i < kk * n; i++)
        bs[i] = to_tf32 ? tf32(b[p0 * n + i]) : b[p0 * n + i];
    pb_buf *buf[3] = {NULL, NULL, NULL};
    assert_int_equal(pb_buf_alloc(gemm_dev, PB_MEM_DEVICE, m * kk * 4, &buf[0]), PB_OK);
    assert_int_equal(pb_buf_alloc(gemm_dev, PB_MEM_DEVICE, kk * n * 4, &buf[1]), PB_OK);
    assert_int_equal(pb_buf_alloc(gemm_dev, PB_MEM_DEVICE, m * n * 4, &buf[2]), PB_OK);
    assert_int_equal(pb_buf_write(buf[0], 0, as, m * kk * 4), PB_OK);
    assert_int_equal(pb_buf_write(buf[1], 0, bs, kk * n * 4), PB_OK);
    struct pb_gemm_args args = {.prec = PB_FLOAT, .m = m, .n = n, .k = kk, .alpha = 1, .beta = 0, .a = buf[0],
                                .lda = kk, .b = buf[1], .ldb = n, .c = buf[2], .ldc = n};
    assert_int_equal(pb_gemm(gemm_dev, gemm_variant, &args), PB_OK);
    assert_int_equal(pb_buf_read(buf[2], 0, c, m * n * 4), PB_OK);
    for (int i = 0; i < 3; i++)
        pb_buf_free(buf[i]);
    free(as);
    free(bs);
    return c;
}

/* The same product summed in float one term after another (the order whose
 * rounding error grows fastest). */
static float *product_sequential(const float *a, const float *b, size_t m, size_t n, size_t k)
{
    float *c = calloc(m * n, sizeof *c);
    assert_non_null(c);
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            for (size_t j = 0; j < n; j++)
                c[i * n + j] += a[i * k + p] * b[p * n + j];
    return c;
}

static struct pb_check gemm_check(void *host, const float *c, size_t m, size_t n, bool corrupt)
{
    float *copy = malloc(m * n * sizeof *copy);
    assert_non_null(copy);
    memcpy(copy, c, m * n * sizeof *copy);
    struct pb_check chk;
    assert_int_equal(pb__gemm_host_check(host, copy, corrupt, &chk), PB_OK);
    free(copy);
    return chk;
}

static void expect_gemm(void *host, const float *c, size_t m, size_t n, bool pass, const char *what)
{
    struct pb_check chk = gemm_check(host, c, m, n, false);
    print_message("  %-34s err_max %9.3g  %s\n", what, chk.err_max, chk.pass ? "pass" : "FAIL");
    if (chk.pass != pass)
        fail_msg("%s: expected %s, got err_max %g (%s)", what, pass ? "pass" : "FAIL", chk.err_max, chk.detail);
    assert_string_equal(chk.mode, "full");
}

struct gemm_shape {
    size_t m, n, k;
};

/* Shapes cheap on a CPU: long k with a small C (k up to 65536, several KC
 * slices), C with rows past a 192-row block, and one past 2^33 multiply-adds
 * (where the old check sampled 64 rows). */
static const struct gemm_shape planted_shapes[] = {
    {16, 16, 65536}, {64, 64, 4096}, {400, 300, 1700}, {2048, 2048, 2100},
};

static void test_gemm_planted(void **state)
{
    (void)state;
    for (size_t s = 0; s < PB_ARRAY_LEN(planted_shapes); s++) {
        size_t m = planted_shapes[s].m, n = planted_shapes[s].n, k = planted_shapes[s].k;
        print_message("gemm %zux%zux%zu (%.3g multiply-adds)\n", m, n, k, (double)m * n * k);
        struct pb_problem p = pb__gemm_problem(PB_FLOAT, (int64_t)m, (int64_t)n, (int64_t)k);
        void *host;
        assert_int_equal(pb__gemm_host_prepare(&p, 42, &host), PB_OK);
        const float *a = pb__gemm_host_input(host, 'a'), *b = pb__gemm_host_input(host, 'b');

        float *c = product(a, b, m, n, k, 0, k, false);
        expect_gemm(host, c, m, n, true, "correct (blocked)");
        if ((double)m * n * k <= 1e8) {
            float *seq = product_sequential(a, b, m, n, k);
            expect_gemm(host, seq, m, n, true, "correct (sequential float)");
            free(seq);
        }

        /* The last k slice overwrites C instead of adding to it. */
        size_t last = (k - 1) / KC_FLOAT * KC_FLOAT;
        if (last > 0) {
            float *bad = product(a, b, m, n, k, last, k, false);
            expect_gemm(host, bad, m, n, false, "last k slice overwrites");
            free(bad);
        }

        /* Inputs rounded to TF32, summed in float. */
        float *t = product(a, b, m, n, k, 0, k, true);
        expect_gemm(host, t, m, n, false, "inputs rounded to TF32");
        free(t);

        /* Off by one at the edge of each 192-row block (or of C): the row
         * gets its neighbour's values. */
        float *bad = malloc(m * n * sizeof *bad);
        assert_non_null(bad);
        memcpy(bad, c, m * n * sizeof *bad);
        for (size_t i = 1; i < m; i++)
            if (i % 192 == 191 || i == m - 1)
                memcpy(&bad[i * n], &bad[(i - 1) * n], n * sizeof *bad);
        expect_gemm(host, bad, m, n, false, "block-edge row off by one");

        /* One element at a block edge misses its largest product. */
        memcpy(bad, c, m * n * sizeof *bad);
        size_t ei = m > 191 ? 191 : m - 1, ej = n / 2, big = 0;
        for (size_t q = 1; q < k; q++)
            if (fabsf(a[ei * k + q] * b[q * n + ej]) > fabsf(a[ei * k + big] * b[big * n + ej]))
                big = q;
        bad[ei * n + ej] -= a[ei * k + big] * b[big * n + ej];
        expect_gemm(host, bad, m, n, false, "one element misses a term");

        /* Single zeroed elements at seeded places anywhere. */
        struct pb_rng rng;
        pb__rng_init(&rng, 7, s);
        for (int trial = 0; trial < 20; trial++) {
            memcpy(bad, c, m * n * sizeof *bad);
            size_t at = (size_t)(pb__rng_next(&rng) % (m * n));
            bad[at] = 0;
            struct pb_check chk = gemm_check(host, bad, m, n, false);
            if (chk.pass)
                fail_msg("element %zu zeroed (was %g) passed, err_max %g", at, c[at], chk.err_max);
        }
        /* --inject-fault: a seeded element anywhere, 1e-3 of its terms' sum;
         * more seeds put it in other rows where products are cheap. */
        struct pb_check faulty = gemm_check(host, c, m, n, true);
        if (faulty.pass)
            fail_msg("injected fault passed (err_max %g)", faulty.err_max);
        print_message("  injected fault, seed 42: err_max %.3g (%s)\n", faulty.err_max, faulty.detail);
        pb__gemm_host_release(host);
        for (uint64_t seed = 1; seed <= 4 && (double)m * n * k < 1e9; seed++) {
            assert_int_equal(pb__gemm_host_prepare(&p, seed, &host), PB_OK);
            float *cs = product(pb__gemm_host_input(host, 'a'), pb__gemm_host_input(host, 'b'), m, n, k, 0, k, false);
            struct pb_check ok = gemm_check(host, cs, m, n, false), bad_one = gemm_check(host, cs, m, n, true);
            assert_true(ok.pass);
            if (bad_one.pass)
                fail_msg("seed %llu: injected fault passed (err_max %g)", (unsigned long long)seed, bad_one.err_max);
            print_message("  injected fault, seed %llu: err_max %.3g (%s)\n", (unsigned long long)seed,
                          bad_one.err_max, bad_one.detail);
            free(cs);
            pb__gemm_host_release(host);
        }
        free(bad);
        free(c);
    }
}

/* ---- GEMM in the tensor-core types: planted bugs -------------------------- */

/* expect_gemm, its label naming the precision. */
static void expect_lowp(void *host, const float *c, size_t m, size_t n, bool pass, const char *what,
                        enum pb_precision p)
{
    char label[64];
    snprintf(label, sizeof label, "%s: %s", pb_precision_name(p), what);
    expect_gemm(host, c, m, n, pass, label);
}

static double in(const void *x, enum pb_precision p, size_t i) { return pb__precision_value(x, p, i); }

/* C from the problem's inputs, fp32 accumulation: in order (block 1), or as
 * tensor cores add: the products of `block` k-steps summed (exactly enough,
 * in double), then added to the fp32 sum with truncation (toward zero). */
static float *lowp_product(const void *a, const void *b, enum pb_precision p, size_t m, size_t n, size_t k, size_t block)
{
    float *c = malloc(m * n * sizeof *c);
    assert_non_null(c);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float acc = 0;
            for (size_t p0 = 0; p0 < k; p0 += block) {
                double s = acc;
                for (size_t q = p0; q < p0 + block && q < k; q++)
                    s += in(a, p, i * k + q) * in(b, p, q * n + j);
                float f = (float)s;
                if (block > 1 && fabs((double)f) > fabs(s))
                    f = nextafterf(f, 0.0f);
                acc = f;
            }
            c[i * n + j] = acc;
        }
    return c;
}

/* x with `bits` explicit mantissa bits (nearest even): inputs rounded further. */
static float coarser(float x, unsigned bits)
{
    uint32_t u = pb__f32_bits(x), drop = 23 - bits;
    u = (u + (1u << (drop - 1)) - 1 + ((u >> drop) & 1)) >> drop << drop;
    return pb__f32_from_bits(u);
}

/* C by a library variant (ref's ikj: the inputs as float, fp32 sums). */
static float *library_product(const void *a, const void *b, enum pb_precision p, size_t m, size_t n, size_t k)
{
    pb_device *dev = NULL;
    assert_int_equal(pb_device_open(pb_backend_find("ref"), 0, &dev), PB_OK);
    size_t elt = pb_precision_size(p);
    pb_buf *buf[3] = {NULL, NULL, NULL};
    float *c = malloc(m * n * sizeof *c);
    assert_non_null(c);
    assert_int_equal(pb_buf_wrap_host(dev, (void *)a, m * k * elt, &buf[0]), PB_OK);
    assert_int_equal(pb_buf_wrap_host(dev, (void *)b, k * n * elt, &buf[1]), PB_OK);
    assert_int_equal(pb_buf_wrap_host(dev, c, m * n * sizeof *c, &buf[2]), PB_OK);
    struct pb_gemm_args g = {.prec = p, .m = m, .n = n, .k = k, .alpha = 1, .beta = 0, .a = buf[0], .lda = k,
                             .b = buf[1], .ldb = n, .c = buf[2], .ldc = n};
    assert_int_equal(pb_gemm(dev, "ikj", &g), PB_OK);
    for (int i = 0; i < 3; i++)
        pb_buf_free(buf[i]);
    pb_device_close(dev);
    return c;
}

static void test_gemm_planted_lowp(void **state)
{
    (void)state;
    static const enum pb_precision lowp[] = {PB_TF32, PB_BF16, PB_FP16};
    static const struct {
        size_t m, n, k;
    } shapes[] = {{1, 1, 1}, {37, 29, 61}, {64, 64, 4096}, {300, 200, 700}, {16, 16, 65536}};
    for (size_t pi = 0; pi < PB_ARRAY_LEN(lowp); pi++) {
        enum pb_precision p = lowp[pi];
        /* One truncation every 4 products: the most the tolerance allows for
         * (verify.c), twice as many as an m16n8k8 TF32 instruction has. */
        size_t block = 4;
        for (size_t s = 0; s < PB_ARRAY_LEN(shapes); s++) {
            size_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
            print_message("%s gemm %zux%zux%zu\n", pb_precision_name(p), m, n, k);
            struct pb_problem prob = pb__gemm_problem(p, (int64_t)m, (int64_t)n, (int64_t)k);
            void *host = NULL, *host_f = NULL;
            assert_int_equal(pb__gemm_host_prepare(&prob, 42, &host), PB_OK);
            const void *a = pb__gemm_host_input(host, 'a'), *b = pb__gemm_host_input(host, 'b');

            /* The inputs are the float problem's, rounded to the type. */
            struct pb_problem prob_f = pb__gemm_problem(PB_FLOAT, (int64_t)m, (int64_t)n, (int64_t)k);
            assert_int_equal(pb__gemm_host_prepare(&prob_f, 42, &host_f), PB_OK);
            const float *af = pb__gemm_host_input(host_f, 'a');
            for (size_t i = 0; i < m * k; i++) {
                float want = p == PB_TF32   ? pb__f32_to_tf32(af[i])
                             : p == PB_BF16 ? pb__bf16_to_f32(pb__f32_to_bf16(af[i]))
                                            : pb__f16_to_f32(pb__f32_to_f16(af[i]));
                if (in(a, p, i) != (double)want)
                    fail_msg("A[%zu] = %g, the float input %g rounded is %g", i, in(a, p, i), af[i], want);
            }
            pb__gemm_host_release(host_f);

            float *seq = lowp_product(a, b, p, m, n, k, 1), *tc = lowp_product(a, b, p, m, n, k, block);
            expect_lowp(host, seq, m, n, true, "fp32 sums in order", p);
            expect_lowp(host, tc, m, n, true, "tensor-core model (blocks, truncation)", p);
            float *lib = library_product(a, b, p, m, n, k);
            expect_lowp(host, lib, m, n, true, "ref/ikj through pb_gemm", p);
            free(lib);

            struct pb_check faulty = gemm_check(host, seq, m, n, true);
            if (faulty.pass)
                fail_msg("%s: injected fault passed (err_max %g)", pb_precision_name(p), faulty.err_max);
            print_message("  injected fault: err_max %.3g (%s)\n", faulty.err_max, faulty.detail);

            float *bad = malloc(m * n * sizeof *bad);
            assert_non_null(bad);
            memcpy(bad, seq, m * n * sizeof *bad);
            size_t at = (m * n) / 2;
            bad[at] = 0;
            expect_lowp(host, bad, m, n, false, "one element zeroed", p);

            /* The tolerance has no room for the inputs' own rounding: the
             * same products from inputs with fewer mantissa bits fail. Not
             * past k = 16384 for tf32 and fp16: there truncation's bias in
             * fp32 sums nears what 2 fewer input bits give (at 65536: 5.9
             * scales of it), so no tolerance can tell the two apart. */
            if (k >= 64 && (k <= 16384 || p == PB_BF16)) {
                size_t ea = m * k, eb = k * n;
                float *a2 = malloc(ea * sizeof *a2), *b2 = malloc(eb * sizeof *b2);
                assert_true(a2 && b2);
                unsigned bits = p == PB_BF16 ? 5 : 8;
                for (size_t i = 0; i < ea; i++)
                    a2[i] = coarser((float)in(a, p, i), bits);
                for (size_t i = 0; i < eb; i++)
                    b2[i] = coarser((float)in(b, p, i), bits);
                float *c2 = lowp_product(a2, b2, PB_FLOAT, m, n, k, 1);
                expect_lowp(host, c2, m, n, false, "inputs rounded to fewer bits", p);
                free(c2);
                free(a2);
                free(b2);
            }
            free(bad);
            free(seq);
            free(tc);
            pb__gemm_host_release(host);
        }
    }
}

/* ---- SpMV: planted bugs ------------------------------------------------- */

enum { SPMV_MATRIX, SPMV_GROUP, SPMV_BLOCK, SPMV_FILL, SPMV_COMPLEX }; /* spmv.c's parameters */

/* Rows whose values span 30 orders of magnitude from row to row, and rows
 * with one large value among small ones; the last row holds tiny values. */
static void write_magnitudes_matrix(const char *path, int rows, int cols)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    struct pb_rng rng;
    pb__rng_init(&rng, 3, 1);
    int nnz = 0;
    for (int i = 0; i < rows; i++)
        nnz += 1 + (i * 7) % 40;
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", rows, cols, nnz);
    for (int i = 0; i < rows; i++) {
        int len = 1 + (i * 7) % 40, start = (int)(pb__rng_next(&rng) % (uint64_t)(cols - len));
        double row_scale = pow(10.0, -(double)((i * 13) % 30)) * (i == rows - 1 ? 1e-6 : 1);
        for (int j = 0; j < len; j++) {
            double v = pb__rng_uniform(&rng) * row_scale;
            if (i % 3 == 0)
                v *= pow(10.0, -(double)(j % 12)); /* one large value, then smaller and smaller */
            fprintf(f, "%d %d %.17g\n", i + 1, start + j + 1, v);
        }
    }
    fclose(f);
}

struct spmv_fixture {
    const struct pb_bench *bench;
    pb_device *dev;
    struct pb_problem p;
    void *host, *state;
    const struct pb_spmv_args *args;
};

static void spmv_open(struct spmv_fixture *f, const char *matrix, enum pb_precision prec)
{
    memset(f, 0, sizeof *f);
    f->bench = pb__bench_find("spmv");
    assert_non_null(f->bench);
    const pb_backend *ref = pb_backend_find("ref");
    assert_int_equal(pb_device_open(ref, 0, &f->dev), PB_OK);
    f->p = (struct pb_problem){.prec = prec, .v = {[SPMV_FILL] = 8}, .s = {[SPMV_MATRIX] = matrix}};
    assert_int_equal(f->bench->prepare(&f->p, 42, &f->host), PB_OK);
    const struct pb_variant *v = NULL;
    for (size_t i = 0; (v = pb__bench_variant(f->bench, ref, i)) != NULL; i++)
        if (strcmp(v->desc.name, "csr") == 0)
            break;
    assert_non_null(v);
    const void *args;
    assert_int_equal(f->bench->bind(f->dev, &f->p, v, f->host, &f->state, &args), PB_OK);
    f->args = args;
    assert_int_equal(pb_kernel_run(f->dev, "spmv", "csr", f->args), PB_OK);
}

static void spmv_close(struct spmv_fixture *f)
{
    f->bench->unbind(f->state);
    f->bench->release(f->host);
    pb_device_close(f->dev);
}

static struct pb_check spmv_checked(struct spmv_fixture *f, bool corrupt)
{
    struct pb_check c;
    assert_int_equal(f->bench->check(f->state, f->host, corrupt, &c), PB_OK);
    return c;
}

/* Zeroes row i of y, checks, restores; true when the check failed or the
 * row was 0 already (an empty row). */
static bool spmv_row_zero_fails(struct spmv_fixture *f, size_t i, double *err)
{
    size_t elt = pb_precision_size(f->p.prec);
    unsigned char saved[8], zero[8] = {0};
    *err = INFINITY;
    assert_int_equal(pb_buf_read(f->args->y, i * elt, saved, elt), PB_OK);
    if (memcmp(saved, zero, elt) == 0)
        return true;
    assert_int_equal(pb_buf_write(f->args->y, i * elt, zero, elt), PB_OK);
    struct pb_check c = spmv_checked(f, false);
    assert_int_equal(pb_buf_write(f->args->y, i * elt, saved, elt), PB_OK);
    *err = c.err_max;
    return !c.pass;
}

static void test_spmv_planted(void **state)
{
    (void)state;
    char path[256];
    pb_test_tmpfile(path, sizeof path, "magnitudes");
    const int rows = 600;
    write_magnitudes_matrix(path, rows, 700);
    const char *matrices[] = {path, "random:20000:16", "powerlaw:20000:8", "lap2d:100"};
    static const enum pb_precision spmv_precs[] = {PB_FLOAT, PB_DOUBLE};
    for (size_t mi = 0; mi < PB_ARRAY_LEN(matrices); mi++)
        for (size_t pi = 0; pi < PB_ARRAY_LEN(spmv_precs); pi++) {
            struct spmv_fixture f;
            spmv_open(&f, matrices[mi], spmv_precs[pi]);
            struct pb_check ok = spmv_checked(&f, false);
            assert_true(ok.pass);
            size_t n_rows = (size_t)f.args->rows;
            /* The last row zeroed; on the first matrix every row in turn. */
            double err, min_err = INFINITY;
            size_t first = mi == 0 ? 0 : n_rows - 1;
            for (size_t i = first; i < n_rows; i++) {
                if (!spmv_row_zero_fails(&f, i, &err))
                    fail_msg("%s %s: row %zu zeroed passed (err_max %g)", matrices[mi],
                             pb_precision_name(spmv_precs[pi]), i, err);
                min_err = fmin(min_err, err);
            }
            struct pb_check faulty = spmv_checked(&f, true);
            assert_false(faulty.pass);
            print_message("spmv %-18s %-6s correct err_max %.3g, zeroed row err_max >= %.3g, injected fault %.3g\n",
                          mi == 0 ? "magnitudes" : matrices[mi], pb_precision_name(spmv_precs[pi]), ok.err_max,
                          min_err, faulty.err_max);
            spmv_close(&f);
        }
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epsilon),
        cmocka_unit_test(test_exact_match),
        cmocka_unit_test(test_small_error_passes),
        cmocka_unit_test(test_large_error_fails),
        cmocka_unit_test(test_planted_element_fails),
        cmocka_unit_test(test_nonfinite_fails),
        cmocka_unit_test(test_chunked_add),
        cmocka_unit_test(test_zero_reference),
        cmocka_unit_test(test_finite_only),
    };
    const struct CMUnitTest planted[] = {
        cmocka_unit_test(test_scaled),
        cmocka_unit_test(test_sumsq_range),
        cmocka_unit_test(test_dot_scale),
        cmocka_unit_test(test_gemm_planted),
        cmocka_unit_test(test_gemm_planted_lowp),
        cmocka_unit_test(test_spmv_planted),
    };
    int first = pb_test_run(tests, setup, teardown), second = pb_test_run(planted, gemm_setup, gemm_teardown);
    return first == 1 || second == 1 ? 1 : first ? first : second;
}

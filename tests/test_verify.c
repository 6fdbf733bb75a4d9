/* Verification against a double oracle: pb__check_* and pb__epsilon. */
#include <float.h>

#include "test_util.h"

#include "core/verify.h"

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
    return pb_test_run(tests, setup, teardown);
}

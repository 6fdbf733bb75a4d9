/* pb__stats_compute: order statistics, moments, and that the input is left alone. */
#include "test_util.h"

#include "core/stats.h"

#define TOL 1e-12

/* Statistics of n samples; also checks the samples were not modified and
 * that scratch ends up holding them sorted. */
static struct pb_stats compute(const double *samples, size_t n)
{
    double copy[64], scratch[64];
    assert_true(n <= PB_ARRAY_LEN(copy));
    memcpy(copy, samples, n * sizeof *copy);
    struct pb_stats st;
    pb__stats_compute(copy, n, scratch, &st);
    assert_memory_equal(copy, samples, n * sizeof *copy);
    for (size_t i = 1; i < n; i++)
        assert_true(scratch[i - 1] <= scratch[i]);
    assert_int_equal(st.n, n);
    return st;
}

static void test_one_sample(void **state)
{
    (void)state;
    const double x[] = {3.0};
    struct pb_stats st = compute(x, 1);
    assert_near(st.min, 3.0, 0);
    assert_near(st.max, 3.0, 0);
    assert_near(st.median, 3.0, 0);
    assert_near(st.mean, 3.0, 0);
    assert_near(st.trimmed_mean, 3.0, 0); /* too few samples to trim */
    assert_near(st.stddev, 0.0, 0);
    assert_near(st.cv, 0.0, 0);
}

static void test_two_samples(void **state)
{
    (void)state;
    const double x[] = {4.0, 2.0};
    struct pb_stats st = compute(x, 2);
    assert_near(st.min, 2.0, 0);
    assert_near(st.max, 4.0, 0);
    assert_near(st.median, 3.0, TOL); /* even n: mean of the middle two */
    assert_near(st.mean, 3.0, TOL);
    assert_near(st.trimmed_mean, 3.0, TOL);
    assert_near(st.stddev, sqrt(2.0), TOL); /* divides by n - 1 = 1 */
    assert_near(st.cv, sqrt(2.0) / 3.0, TOL);
}

static void test_three_samples(void **state)
{
    (void)state;
    const double x[] = {5.0, 1.0, 3.0};
    struct pb_stats st = compute(x, 3);
    assert_near(st.min, 1.0, 0);
    assert_near(st.max, 5.0, 0);
    assert_near(st.median, 3.0, 0);
    assert_near(st.mean, 3.0, TOL);
    assert_near(st.trimmed_mean, 3.0, TOL); /* only the middle sample is left */
    assert_near(st.stddev, 2.0, TOL);       /* sqrt((4 + 0 + 4) / 2) */
    assert_near(st.cv, 2.0 / 3.0, TOL);
}

static void test_even_median(void **state)
{
    (void)state;
    const double x[] = {4.0, 1.0, 3.0, 2.0};
    struct pb_stats st = compute(x, 4);
    assert_near(st.median, 2.5, TOL);
    assert_near(st.trimmed_mean, 2.5, TOL); /* (2 + 3) / 2 */
}

/* Twelve repetitions as in the convolution study, with one fast and one slow
 * outlier: the trimmed mean drops exactly one min and one max. Expected
 * values computed independently (Python's statistics module). */
static void test_twelve_samples(void **state)
{
    (void)state;
    const double x[] = {1.10, 1.02, 0.98, 1.00, 1.05, 2.50, 1.01, 0.99, 1.03, 0.50, 1.04, 1.00};
    struct pb_stats st = compute(x, 12);
    assert_near(st.min, 0.50, 0);
    assert_near(st.max, 2.50, 0);
    assert_near(st.median, 1.015, TOL); /* (1.01 + 1.02) / 2 */
    assert_near(st.mean, 1.1016666666666666, TOL);
    assert_near(st.trimmed_mean, 1.022, TOL);
    assert_near(st.stddev, 0.4663169685434095, TOL);
    assert_near(st.cv, 0.4232831787080873, TOL);
}

/* Duplicated extremes: only one copy of the min and of the max is dropped. */
static void test_trim_drops_one_of_each(void **state)
{
    (void)state;
    const double x[] = {1.0, 1.0, 2.0, 9.0, 9.0};
    struct pb_stats st = compute(x, 5);
    assert_near(st.trimmed_mean, (1.0 + 2.0 + 9.0) / 3.0, TOL);
}

static void test_zero_samples(void **state)
{
    (void)state;
    struct pb_stats st;
    memset(&st, 0x55, sizeof st);
    pb__stats_compute(NULL, 0, NULL, &st);
    assert_int_equal(st.n, 0);
    assert_near(st.mean, 0.0, 0);
    assert_near(st.stddev, 0.0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_sample),
        cmocka_unit_test(test_two_samples),
        cmocka_unit_test(test_three_samples),
        cmocka_unit_test(test_even_median),
        cmocka_unit_test(test_twelve_samples),
        cmocka_unit_test(test_trim_drops_one_of_each),
        cmocka_unit_test(test_zero_samples),
    };
    return pb_test_run(tests, NULL, NULL);
}

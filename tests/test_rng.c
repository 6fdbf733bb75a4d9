/* Seeded inputs: the published xoshiro256** and splitmix64 vectors,
 * reproducibility, stream separation, and the range of uniform values. */
#include "test_util.h"

#include "core/rng.h"

#define DRAWS 1000000

/* xoshiro256** from the state {1, 2, 3, 4}: the reference implementation's
 * first outputs, so inputs match on every machine and every build. */
static void test_xoshiro_reference_vector(void **state)
{
    (void)state;
    struct pb_rng r = {{1, 2, 3, 4}};
    static const uint64_t want[] = {11520u, 0u, 1509978240u, 1215971899390074240u};
    for (size_t i = 0; i < PB_ARRAY_LEN(want); i++)
        assert_true(pb__rng_next(&r) == want[i]);
}

/* Uniform values from the same known state: 53 bits offset by half a step,
 * so the smallest output (next() >> 11 == 0) is -1 + 2^-53, never -1. */
static void test_uniform_reference_vector(void **state)
{
    (void)state;
    struct pb_rng r = {{1, 2, 3, 4}};
    assert_true(pb__rng_uniform(&r) == -1.0 + 11 * 0x1.0p-53); /* 11520 >> 11 = 5 */
    assert_true(pb__rng_uniform(&r) == -1.0 + 0x1.0p-53);      /* 0 >> 11 = 0 */
}

/* Seed 0, stream 0: the state is splitmix64's first four outputs from 0. */
static void test_splitmix_seeding(void **state)
{
    (void)state;
    struct pb_rng r;
    pb__rng_init(&r, 0, 0);
    static const uint64_t want[] = {0xe220a8397b1dcdafu, 0x6e789e6aa1b965f4u,
                                    0x06c45d188009454fu, 0xf88bb8a8724c81ecu};
    for (size_t i = 0; i < 4; i++)
        assert_true(r.s[i] == want[i]);
}

/* Number of positions where the first n outputs of the two generators agree. */
static size_t agreements(uint64_t seed1, uint64_t stream1, uint64_t seed2, uint64_t stream2,
                         size_t n)
{
    struct pb_rng a, b;
    pb__rng_init(&a, seed1, stream1);
    pb__rng_init(&b, seed2, stream2);
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += pb__rng_next(&a) == pb__rng_next(&b);
    return same;
}

static void test_reproducible(void **state)
{
    (void)state;
    assert_int_equal(agreements(42, 1, 42, 1, 1000), 1000);
    assert_int_equal(agreements(0, 0, 0, 0, 1000), 1000);
}

static void test_streams_and_seeds_differ(void **state)
{
    (void)state;
    assert_int_equal(agreements(42, 1, 42, 2, 1000), 0);
    assert_int_equal(agreements(42, 0, 42, 1, 1000), 0);
    assert_int_equal(agreements(42, 1, 43, 1, 1000), 0);
    assert_int_equal(agreements(1, 0, 0, 0, 1000), 0);
    /* Seed and stream do not simply combine: (1, 0) and (0, 1) differ. */
    assert_int_equal(agreements(1, 0, 0, 1, 1000), 0);
    assert_int_equal(agreements(3, 1, 2, 2, 1000), 0);
}

static void test_uniform_range(void **state)
{
    (void)state;
    struct pb_rng r;
    pb__rng_init(&r, 12345, 7);
    double lo = 1, hi = -1, sum = 0;
    size_t zeros = 0, out_of_range = 0;
    for (size_t i = 0; i < DRAWS; i++) {
        double u = pb__rng_uniform(&r);
        out_of_range += !(u >= -1.0 && u < 1.0);
        zeros += u == 0.0;
        lo = fmin(lo, u);
        hi = fmax(hi, u);
        sum += u;
    }
    assert_int_equal(out_of_range, 0);
    assert_int_equal(zeros, 0);
    /* Covers the interval: a million draws come within 1e-4 of both ends,
     * and the mean is within ~17 standard errors of 0. */
    assert_true(lo < -0.9999 && hi > 0.9999);
    assert_near(sum / DRAWS, 0.0, 0.01);
}

/* The fills are the uniform stream, element by element (float: rounded). */
static void test_fill(void **state)
{
    (void)state;
    enum { N = 4096 };
    static double d[N];
    static float f[N];
    struct pb_rng r, check;
    pb__rng_init(&r, 99, 3);
    pb__rng_fill(&r, d, PB_DOUBLE, N);
    pb__rng_init(&r, 99, 3);
    pb__rng_fill(&r, f, PB_FLOAT, N);

    pb__rng_init(&check, 99, 3);
    size_t zeros_d = 0, zeros_f = 0, mismatch_d = 0, mismatch_f = 0;
    for (size_t i = 0; i < N; i++) {
        double u = pb__rng_uniform(&check);
        mismatch_d += d[i] != u;
        mismatch_f += f[i] != (float)u;
        zeros_d += d[i] == 0.0;
        zeros_f += f[i] == 0.0f;
    }
    assert_int_equal(mismatch_d, 0);
    assert_int_equal(mismatch_f, 0);
    assert_int_equal(zeros_d, 0);
    assert_int_equal(zeros_f, 0);

    /* The fill advances the generator: the next fill gives new values. */
    double d2[16];
    pb__rng_init(&r, 99, 3);
    pb__rng_fill(&r, d2, PB_DOUBLE, 8);
    pb__rng_fill(&r, d2 + 8, PB_DOUBLE, 8);
    assert_memory_equal(d2, d, sizeof d2);
    assert_memory_not_equal(d2, d2 + 8, 8 * sizeof *d2);
}

/* Counter-based elements: the same value whatever else was made, in range,
 * different across indices, streams and seeds, and balanced around 0. */
static void test_at(void **state)
{
    (void)state;
    double sum = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        double x = pb__rng_at(42, 1, i);
        assert_true(x >= -1.0 && x < 1.0 && x != 0.0);
        sum += x;
    }
    assert_true(fabs(sum / 100000) < 0.01);
    assert_true(pb__rng_at(42, 1, 77) == pb__rng_at(42, 1, 77));
    assert_true(pb__rng_at(42, 1, 77) != pb__rng_at(42, 1, 78));
    assert_true(pb__rng_at(42, 1, 77) != pb__rng_at(42, 2, 77));
    assert_true(pb__rng_at(42, 1, 77) != pb__rng_at(43, 1, 77));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xoshiro_reference_vector),
        cmocka_unit_test(test_uniform_reference_vector),
        cmocka_unit_test(test_splitmix_seeding),
        cmocka_unit_test(test_reproducible),
        cmocka_unit_test(test_streams_and_seeds_differ),
        cmocka_unit_test(test_uniform_range),
        cmocka_unit_test(test_fill),
        cmocka_unit_test(test_at),
    };
    return pb_test_run(tests, NULL, NULL);
}

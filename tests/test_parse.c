/* Command-line value parsing: integers with suffixes, integer lists and
 * ranges, name lists. Errors must come with a message naming the option. */
#include "test_util.h"

#include "core/core.h"
#include "core/parse.h"

#define WHAT "--n"

/* An error status, and pb_last_error() naming the option. */
static void assert_error(pb_status got, pb_status want, const char *input)
{
    if (got != want)
        print_message("input '%s': got %s, expected %s\n", input, pb_status_name(got),
                      pb_status_name(want));
    assert_int_equal(got, want);
    assert_true(pb_last_error()[0] != '\0');
    assert_contains(pb_last_error(), WHAT);
}

/* ---- pb__parse_int ------------------------------------------------------ */

static void test_int_valid(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t v;
    } cases[] = {
        {"0", 0},
        {"42", 42},
        {"-7", -7},
        {"4k", 4096},
        {"4K", 4096},
        {"4Ki", 4096},
        {"4KiB", 4096},
        {"4KB", 4096},
        {"-2k", -2048},
        {"3m", 3ll << 20},
        {"3M", 3ll << 20},
        {"2MiB", 2ll << 20},
        {"1g", 1ll << 30},
        {"5G", 5ll << 30},
        {"1GiB", 1ll << 30},
        {"9223372036854775807", INT64_MAX},
        {"-9223372036854775808", INT64_MIN},
        {"8589934591G", 8589934591ll << 30}, /* the largest G that fits */
        {"1T", 1ll << 40},
        {"2TiB", 2ll << 40},
    };
    for (size_t i = 0; i < PB_ARRAY_LEN(cases); i++) {
        int64_t v = -12345;
        pb_status st = pb__parse_int(cases[i].s, WHAT, &v);
        if (st != PB_OK || v != cases[i].v)
            print_message("input '%s': status %s, value %lld\n", cases[i].s, pb_status_name(st),
                          (long long)v);
        assert_int_equal(st, PB_OK);
        assert_true(v == cases[i].v);
    }
}

static void test_int_errors(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        pb_status st;
    } cases[] = {
        {"", PB_ERR_PARSE},
        {"12x", PB_ERR_PARSE},
        {"x12", PB_ERR_PARSE},
        {"k", PB_ERR_PARSE},
        {"1.5", PB_ERR_PARSE},
        {"1kx", PB_ERR_PARSE},
        {"1KiBB", PB_ERR_PARSE},
        {"1i", PB_ERR_PARSE},
        {"1 2", PB_ERR_PARSE},
        {"-", PB_ERR_PARSE},
        {"99999999999999999999", PB_ERR_OVERFLOW},
        {"-99999999999999999999", PB_ERR_OVERFLOW},
        {"9223372036854775808", PB_ERR_OVERFLOW},
        {"8589934592G", PB_ERR_OVERFLOW}, /* 2^33 * 2^30 = 2^63 */
        {"9999999999G", PB_ERR_OVERFLOW},
        {"-9999999999G", PB_ERR_OVERFLOW},
        {"9007199254740993M", PB_ERR_OVERFLOW},
    };
    for (size_t i = 0; i < PB_ARRAY_LEN(cases); i++) {
        int64_t v = -12345;
        pb__clear_error();
        assert_error(pb__parse_int(cases[i].s, WHAT, &v), cases[i].st, cases[i].s);
        assert_true(v == -12345); /* not written on failure */
    }
}

/* ---- pb__parse_int_list ------------------------------------------------- */

/* Parses s, expecting exactly the n values in want. */
static void expect_list(const char *s, const int64_t *want, size_t n)
{
    int64_t *vals = NULL;
    size_t count = 99;
    pb_status st = pb__parse_int_list(s, WHAT, &vals, &count);
    if (st != PB_OK)
        print_message("input '%s': %s (%s)\n", s, pb_status_name(st), pb_last_error());
    assert_int_equal(st, PB_OK);
    if (count != n)
        print_message("input '%s': %zu values, expected %zu\n", s, count, n);
    assert_int_equal(count, n);
    for (size_t i = 0; i < n; i++) {
        if (vals[i] != want[i])
            print_message("input '%s': value %zu is %lld, expected %lld\n", s, i,
                          (long long)vals[i], (long long)want[i]);
        assert_true(vals[i] == want[i]);
    }
    free(vals);
}

#define EXPECT_LIST(s, ...)                                        \
    do {                                                           \
        static const int64_t want_[] = {__VA_ARGS__};              \
        expect_list((s), want_, PB_ARRAY_LEN(want_));              \
    } while (0)

static void test_list_valid(void **state)
{
    (void)state;
    EXPECT_LIST("5", 5);
    EXPECT_LIST("-5", -5);
    EXPECT_LIST("256,512", 256, 512);
    EXPECT_LIST("512,256,512", 512, 256, 512); /* order and duplicates kept */
    EXPECT_LIST("256:2048", 256, 512, 1024, 2048);
    EXPECT_LIST("3:20", 3, 6, 12); /* stops below the end when it is not hit */
    EXPECT_LIST("7:7", 7);
    EXPECT_LIST("1k:4k", 1024, 2048, 4096);
    EXPECT_LIST("1:10:3", 1, 4, 7, 10);
    EXPECT_LIST("1:10:+3", 1, 4, 7, 10);
    EXPECT_LIST("1:9:3", 1, 4, 7);
    EXPECT_LIST("-3:3:2", -3, -1, 1, 3); /* linear ranges may start below 1 */
    EXPECT_LIST("16:4096:x4", 16, 64, 256, 1024, 4096);
    EXPECT_LIST("2:100:x3", 2, 6, 18, 54);
    EXPECT_LIST("1,2:8,100", 1, 2, 4, 8, 100);
    /* Doubling stops at the int64 limit instead of overflowing. */
    EXPECT_LIST("4611686018427387904:9223372036854775807", 4611686018427387904ll);
}

static void test_list_max_length(void **state)
{
    (void)state;
    int64_t *vals = NULL;
    size_t n = 0;
    char s[32];
    snprintf(s, sizeof s, "1:%d:1", PB_MAX_LIST); /* exactly the limit */
    assert_int_equal(pb__parse_int_list(s, WHAT, &vals, &n), PB_OK);
    assert_int_equal(n, PB_MAX_LIST);
    assert_true(vals[0] == 1 && vals[n - 1] == PB_MAX_LIST);
    free(vals);

    snprintf(s, sizeof s, "1:%d:1", PB_MAX_LIST + 1);
    pb__clear_error();
    assert_error(pb__parse_int_list(s, WHAT, &vals, &n), PB_ERR_INVALID, s);
}

static void test_list_errors(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        pb_status st;
    } cases[] = {
        {"4:2", PB_ERR_INVALID},      /* end below start */
        {"0:8", PB_ERR_INVALID},      /* doubling from 0 never ends */
        {"-2:8", PB_ERR_INVALID},
        {"0:8:x2", PB_ERR_INVALID},
        {"1:5:0", PB_ERR_INVALID},    /* step 0 */
        {"1:5:-1", PB_ERR_INVALID},
        {"1:5:+0", PB_ERR_INVALID},
        {"1:5:x1", PB_ERR_INVALID},   /* factor 1 */
        {"1:5:x0", PB_ERR_INVALID},
        {"1:100000:1", PB_ERR_INVALID}, /* more than PB_MAX_LIST values */
        {"", PB_ERR_PARSE},
        {",", PB_ERR_PARSE},
        {"1,,2", PB_ERR_PARSE},
        {",1", PB_ERR_PARSE},
        {"1,", PB_ERR_PARSE},
        {"a:b", PB_ERR_PARSE},
        {"1:b", PB_ERR_PARSE},
        {"1:5:x", PB_ERR_PARSE},
        {"1:5:", PB_ERR_PARSE},
        {":5", PB_ERR_PARSE},
        {"1:2:3:4", PB_ERR_PARSE},
        {"12x,4", PB_ERR_PARSE},
        {"99999999999999999999", PB_ERR_OVERFLOW},
    };
    for (size_t i = 0; i < PB_ARRAY_LEN(cases); i++) {
        int64_t *vals = (int64_t *)&vals; /* must be reset to NULL */
        size_t n = 99;
        pb__clear_error();
        assert_error(pb__parse_int_list(cases[i].s, WHAT, &vals, &n), cases[i].st, cases[i].s);
        assert_null(vals);
        assert_int_equal(n, 0);
    }
}

/* ---- pb__parse_name_list ------------------------------------------------ */

static void test_names_valid(void **state)
{
    (void)state;
    const char *input = "ref/ikj,openmp/blocked,x";
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(pb__parse_name_list(input, WHAT, &names, &n), PB_OK);
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "ref/ikj");
    assert_string_equal(names[1], "openmp/blocked");
    assert_string_equal(names[2], "x");
    assert_string_equal(input, "ref/ikj,openmp/blocked,x"); /* input untouched */
    free(names); /* frees the copy too (ASan reports a leak otherwise) */

    assert_int_equal(pb__parse_name_list("a,b", WHAT, &names, &n), PB_OK);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "a");
    assert_string_equal(names[1], "b");
    free(names);

    assert_int_equal(pb__parse_name_list("single", WHAT, &names, &n), PB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "single");
    free(names);
}

static void test_names_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "a,,b", ",a", "a,", ","};
    for (size_t i = 0; i < PB_ARRAY_LEN(bad); i++) {
        char **names = (char **)&names;
        size_t n = 99;
        pb__clear_error();
        assert_error(pb__parse_name_list(bad[i], WHAT, &names, &n), PB_ERR_PARSE, bad[i]);
        assert_null(names);
        assert_int_equal(n, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int_valid),       cmocka_unit_test(test_int_errors),
        cmocka_unit_test(test_list_valid),      cmocka_unit_test(test_list_max_length),
        cmocka_unit_test(test_list_errors),     cmocka_unit_test(test_names_valid),
        cmocka_unit_test(test_names_errors),
    };
    return pb_test_run(tests, NULL, NULL);
}

/* The peak benchmark's kernels on every available backend, both variants,
 * float and double, awkward sizes (one element, less than a work-group, a
 * partial last group, several read partials), through the benchmark's own
 * bind/run/check path; and its checker, which reads every element, catches a
 * corrupted result. */
#include "test_util.h"

#include "bench/bench.h"
#include "parbench/pb_backend.h"

static const int64_t sizes[][2] = {{1, 1}, {7, 3}, {257, 2}, {16385, 5}, {100003, 1}};

/* Runs one variant on one problem; returns whether its check passed (a
 * declined problem passes and sets *declined). */
static bool run_case(const struct pb_bench *b, pb_device *dev, const struct pb_variant *v, const struct pb_problem *p,
                     void *host, bool corrupt, const char *backend, bool *declined)
{
    *declined = false;
    void *state = NULL;
    const void *args = NULL;
    assert_int_equal(b->bind(dev, p, v, host, &state, &args), PB_OK);
    const char *why = NULL;
    if (v->supports && !v->supports(dev, args, &why)) {
        printf("  %s/%s n=%lld: unsupported (%s)\n", backend, v->desc.name, (long long)p->v[0], why ? why : "");
        b->unbind(state);
        *declined = true;
        return !corrupt;
    }
    assert_int_equal(b->poison(state), PB_OK);
    assert_int_equal(v->run(dev, args, NULL), PB_OK);
    assert_int_equal(pb_device_sync(dev), PB_OK);
    struct pb_check c;
    assert_int_equal(b->check(state, host, corrupt, &c), PB_OK);
    assert_string_equal(c.mode, "full"); /* every element, the corrupted one wherever it lies */
    if (!c.pass && !corrupt)
        printf("FAIL %s/%s n=%lld iters=%lld %s: %s\n", backend, v->desc.name, (long long)p->v[0],
               (long long)p->v[1], pb_precision_name(p->prec), c.detail);
    b->unbind(state);
    return c.pass;
}

static void test_peak_all_backends(void **unused)
{
    (void)unused;
    const struct pb_bench *b = pb__bench_find("peak");
    assert_non_null(b);
    size_t cases = 0, failed = 0;
    enum { MAX_B = 8, MAX_V = 8 };
    size_t ran[MAX_B][MAX_V] = {{0}}, declined[MAX_B][MAX_V] = {{0}};
    assert_true(pb_backend_count() <= MAX_B);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int prec = 0; prec < 2; prec++) {
            struct pb_problem p = {.prec = prec ? PB_DOUBLE : PB_FLOAT, .v = {sizes[s][0], sizes[s][1]}};
            void *host = NULL;
            assert_int_equal(b->prepare(&p, 42, &host), PB_OK);
            for (size_t bi = 0; bi < pb_backend_count(); bi++) {
                const pb_backend *be = pb_backend_at(bi);
                pb_device *dev;
                if (!pb_test_backend_usable(be))
                    continue;
                assert_int_equal(pb_device_open(be, 0, &dev), PB_OK);
                const struct pb_variant *v;
                for (size_t vi = 0; (v = pb__bench_variant(b, be, vi)) != NULL; vi++) {
                    assert_true(vi < MAX_V);
                    bool no;
                    cases++;
                    failed += !run_case(b, dev, v, &p, host, false, be->name, &no);
                    ran[bi][vi] += !no, declined[bi][vi] += no;
                    /* The checker sees a corrupted element. */
                    failed += run_case(b, dev, v, &p, host, true, be->name, &no);
                }
                pb_device_close(dev);
            }
            b->release(host);
        }
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const struct pb_variant *v;
        for (size_t vi = 0; (v = pb__bench_variant(b, pb_backend_at(bi), vi)) != NULL; vi++)
            failed += (size_t)pb_test_declined_all("peak", pb_backend_name(pb_backend_at(bi)), v->desc.name,
                                                   ran[bi][vi], declined[bi][vi]);
    }
    printf("  %zu cases, %zu failed\n", cases, failed);
    assert_true(cases >= 2 * 2 * 5); /* openmp at least: 2 variants x 2 precisions x 5 sizes */
    assert_int_equal(failed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_peak_all_backends)};
    return pb_test_run(tests, NULL, NULL);
}

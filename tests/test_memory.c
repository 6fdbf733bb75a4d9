/* The cross-backend test of the memory families: every available backend
 * and every transpose, reduce and access variant on awkward shapes (n = 1,
 * sizes that are not powers of two, smaller than a block, not multiples of a
 * tile), through the public API, against oracles computed here. Outputs are
 * poisoned first and guarded by sentinels past their end. */
#include <float.h>
#include <stdint.h>

#include "test_util.h"

#include "core/rng.h"
#include "parbench/pb_backend.h"
#include "parbench/pb_kernels.h"

#define TAIL 16 /* sentinel bytes after every output */

/* Runs fn on every variant of bench on every available backend (threaded
 * ones with 1 and 3 threads); returns the number of failed cases. */
typedef int (*case_fn)(pb_device *dev, const struct pb_variant_desc *v);

/* Cases run and declined (UNSUPPORTED) by the variant under test; a case
 * function that allows declining counts them. */
static size_t cases_ran, cases_declined;

static void for_every_variant(const char *bench, case_fn fn)
{
    int failed = 0;
    size_t targets = 0;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        if (!pb_test_backend_usable(b))
            continue;
        pb_device *dev = NULL;
        assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
        struct pb_variant_desc v[32];
        size_t nv = pb_kernel_variants(b, bench, v, PB_ARRAY_LEN(v));
        assert_true(nv <= PB_ARRAY_LEN(v));
        for (size_t i = 0; i < nv; i++) {
            cases_ran = cases_declined = 0;
            for (int threads = 1; threads <= 3; threads += 2) {
                pb_device_set_threads(dev, threads);
                failed += fn(dev, &v[i]);
                targets++;
            }
            failed += pb_test_declined_all(bench, pb_backend_name(b), v[i].name, cases_ran, cases_declined);
        }
        pb_device_close(dev);
    }
    assert_true(targets >= 1);
    if (failed)
        print_message("%d case(s) failed\n", failed);
    assert_int_equal(failed, 0);
}

/* Allocates a device buffer of bytes + TAIL, poisoned with 0xFF (NaN). */
static pb_buf *poisoned(pb_device *dev, size_t bytes)
{
    pb_buf *b = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, bytes + TAIL, &b), PB_OK);
    assert_int_equal(pb_buf_fill_bytes(b, 0xFF), PB_OK);
    return b;
}

static pb_buf *upload(pb_device *dev, const void *x, size_t bytes)
{
    pb_buf *b = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, bytes ? bytes : 1, &b), PB_OK);
    if (bytes)
        assert_int_equal(pb_buf_write(b, 0, x, bytes), PB_OK);
    return b;
}

static bool tail_intact(const unsigned char *x, size_t bytes)
{
    for (size_t i = 0; i < TAIL; i++)
        if (x[bytes + i] != 0xFF)
            return false;
    return true;
}

/* ---- transpose ---------------------------------------------------------- */

struct tr_shape {
    size_t rows, cols, pad_in, pad_out;
};
static const struct tr_shape tr_shapes[] = {
    {1, 1, 0, 0},   {1, 100, 0, 0},  {100, 1, 0, 0},   {31, 33, 0, 0},  {32, 32, 0, 0}, {64, 64, 0, 0},
    {65, 63, 0, 0}, {130, 67, 3, 5}, {257, 129, 0, 0}, {96, 160, 4, 4}, {5, 700, 1, 0},
};

static int transpose_case(pb_device *dev, const struct pb_variant_desc *v, enum pb_precision prec,
                          const struct tr_shape *s)
{
    bool copy = (v->flags & PB_VARIANT_BOUND) != 0;
    size_t elt = pb_precision_size(prec), ld_in = s->cols + s->pad_in;
    size_t out_rows = copy ? s->rows : s->cols, out_cols = copy ? s->cols : s->rows, ld_out = out_cols + s->pad_out;
    size_t in_bytes = s->rows * ld_in * elt, out_bytes = out_rows * ld_out * elt;
    unsigned char *in = malloc(in_bytes), *out = malloc(out_bytes + TAIL);
    assert_true(in && out);
    struct pb_rng rng;
    pb__rng_init(&rng, 7, s->rows * 1000 + s->cols);
    pb__rng_fill(&rng, in, prec, s->rows * ld_in);
    pb_buf *bin = upload(dev, in, in_bytes), *bout = poisoned(dev, out_bytes);
    struct pb_transpose_args a = {.prec = prec, .rows = s->rows, .cols = s->cols, .in = bin, .ld_in = ld_in,
                                  .out = bout, .ld_out = ld_out};
    pb_status st = pb_kernel_run(dev, "transpose", v->name, &a);
    int failed = 0;
    char why[160] = "";
    cases_ran += st == PB_OK;
    if (st == PB_ERR_UNSUPPORTED) {
        cases_declined++;
        print_message("note: %s/%s declined: %s\n", pb_backend_name(pb_device_backend(dev)), v->name, pb_last_error());
    } else if (st != PB_OK || pb_buf_read(bout, 0, out, out_bytes + TAIL) != PB_OK) {
        snprintf(why, sizeof why, "returned %s (%s)", pb_status_name(st), pb_last_error());
    } else {
        for (size_t r = 0; r < out_rows && !why[0]; r++)
            for (size_t c = 0; c < ld_out && !why[0]; c++) {
                const unsigned char *got = out + (r * ld_out + c) * elt;
                if (c >= out_cols) { /* padding: never written */
                    if (got[0] != 0xFF)
                        snprintf(why, sizeof why, "padding at %zu,%zu written", r, c);
                    continue;
                }
                size_t i = copy ? r * ld_in + c : c * ld_in + r;
                if (memcmp(got, in + i * elt, elt) != 0)
                    snprintf(why, sizeof why, "out[%zu][%zu] wrong", r, c);
            }
        if (!why[0] && !tail_intact(out, out_bytes))
            snprintf(why, sizeof why, "written past the end");
    }
    if (why[0]) {
        print_message("FAIL %s/%s threads=%d %s %zux%zu (pads %zu,%zu): %s\n", pb_backend_name(pb_device_backend(dev)),
                      v->name, pb_device_threads(dev), pb_precision_name(prec), s->rows, s->cols, s->pad_in,
                      s->pad_out, why);
        failed = 1;
    }
    pb_buf_free(bin);
    pb_buf_free(bout);
    free(in);
    free(out);
    return failed;
}

static int transpose_all(pb_device *dev, const struct pb_variant_desc *v)
{
    int failed = 0;
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < PB_ARRAY_LEN(tr_shapes); i++)
            failed += transpose_case(dev, v, p ? PB_DOUBLE : PB_FLOAT, &tr_shapes[i]);
    return failed;
}

static void test_transpose(void **state)
{
    (void)state;
    for_every_variant("transpose", transpose_all);
}

/* ---- reduce ------------------------------------------------------------- */

static const size_t red_sizes[] = {0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1000, 4097, 65537, 300001};

static int reduce_case(pb_device *dev, const struct pb_variant_desc *v, enum pb_reduce_type type, size_t n)
{
    uint32_t *x = malloc((n ? n : 1) * 4);
    assert_non_null(x);
    struct pb_rng rng;
    pb__rng_init(&rng, 11, n);
    double sum = 0, abs_sum = 0; /* floats: exact enough in double for these n */
    uint32_t isum = 0;
    for (size_t i = 0; i < n; i++) {
        if (type == PB_REDUCE_INT) {
            x[i] = (uint32_t)(pb__rng_next(&rng) >> 32); /* sums overflow: must wrap */
            isum += x[i];
        } else {
            float f = (float)pb__rng_uniform(&rng); /* mixed signs */
            memcpy(&x[i], &f, 4);
            sum += f;
            abs_sum += fabs(f);
        }
    }
    pb_buf *in = upload(dev, x, n * 4), *out = poisoned(dev, sizeof(double)), *work = NULL;
    struct pb_reduce_args a = {.type = type, .n = n, .in = in, .out = out};
    assert_int_equal(pb_kernel_workspace(dev, "reduce", v->name, &a, &a.work_bytes), PB_OK);
    if (a.work_bytes) {
        work = poisoned(dev, a.work_bytes);
        assert_int_equal(pb_buf_fill_bytes(work, 0), PB_OK);
        a.work = work;
    }
    char why[200] = "";
    unsigned char got[sizeof(double) + TAIL];
    /* Twice: a variant must leave its workspace reusable. */
    for (int rep = 0; rep < 2 && !why[0]; rep++) {
        assert_int_equal(pb_buf_fill_bytes(out, 0xFF), PB_OK);
        pb_status st = pb_kernel_run(dev, "reduce", v->name, &a);
        if (st != PB_OK || pb_buf_read(out, 0, got, sizeof got) != PB_OK) {
            snprintf(why, sizeof why, "returned %s (%s)", pb_status_name(st), pb_last_error());
            break;
        }
        size_t size = pb_reduce_result_size(type);
        for (size_t i = size; i < sizeof got; i++)
            if (got[i] != 0xFF)
                snprintf(why, sizeof why, "byte %zu past the result written", i);
        if (type == PB_REDUCE_INT) {
            uint32_t u;
            memcpy(&u, got, 4);
            if (u != isum)
                snprintf(why, sizeof why, "sum %u, expected %u", u, isum);
            continue;
        }
        double s;
        if (type == PB_REDUCE_FLOAT) {
            float f;
            memcpy(&f, got, 4);
            s = f;
        } else {
            memcpy(&s, got, 8);
        }
        /* The benchmark's bound: sqrt(n) + log2(n) + 4 roundings of sum |x|. */
        double u = type == PB_REDUCE_FLOAT ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
        double tol = u * (sqrt((double)n) + log2((double)n + 1) + 4) * abs_sum + (type == PB_REDUCE_FLOAT ? 0 : 1e-12 * abs_sum);
        if (!isfinite(s) || fabs(s - sum) > tol)
            snprintf(why, sizeof why, "sum %.9g, expected %.9g (tolerance %.3g)", s, sum, tol);
    }
    if (why[0])
        print_message("FAIL %s/%s threads=%d %s n=%zu: %s\n", pb_backend_name(pb_device_backend(dev)), v->name,
                      pb_device_threads(dev), pb_reduce_type_name(type), n, why);
    pb_buf_free(in);
    pb_buf_free(out);
    pb_buf_free(work);
    free(x);
    return why[0] != 0;
}

static int reduce_all(pb_device *dev, const struct pb_variant_desc *v)
{
    int failed = 0;
    for (int t = PB_REDUCE_FLOAT; t <= PB_REDUCE_INT; t++)
        for (size_t i = 0; i < PB_ARRAY_LEN(red_sizes); i++)
            failed += reduce_case(dev, v, (enum pb_reduce_type)t, red_sizes[i]);
    return failed;
}

static void test_reduce(void **state)
{
    (void)state;
    for_every_variant("reduce", reduce_all);
}

/* ---- access ------------------------------------------------------------- */

static int access_case(pb_device *dev, const struct pb_variant_desc *v, enum pb_precision prec, size_t n, size_t step)
{
    bool offset = strcmp(v->name, "global-offset") == 0, stride = strcmp(v->name, "global-stride") == 0;
    if (stride && step == 0)
        return 0;
    size_t elt = pb_precision_size(prec);
    size_t in_len = offset ? n + step : stride ? (n - 1) * step + 1 : PB_ACCESS_SHARED_ELEMS;
    size_t out_len = offset || stride ? in_len : n;
    unsigned char *in = malloc(in_len * elt), *out = malloc(out_len * elt + TAIL), *want = malloc(out_len * elt);
    assert_true(in && out && want);
    for (size_t i = 0; i < in_len; i++) { /* small integers: exact sums */
        double x = (double)((i * 7) % 13) - 6;
        if (prec == PB_DOUBLE)
            memcpy(in + i * elt, &x, elt);
        else {
            float f = (float)x;
            memcpy(in + i * elt, &f, elt);
        }
    }
    memset(want, 0xFF, out_len * elt);
    for (size_t i = 0; i < n; i++) {
        if (offset || stride) {
            size_t j = offset ? i + step : i * step;
            memcpy(want + j * elt, in + j * elt, elt);
            continue;
        }
        double sum = 0;
        for (size_t k = 0; k < PB_ACCESS_SHARED_LOADS; k++) {
            size_t j = ((i % PB_ACCESS_BLOCK) * step + k) % PB_ACCESS_SHARED_ELEMS;
            double x;
            float f;
            if (prec == PB_DOUBLE)
                memcpy(&x, in + j * elt, elt);
            else
                memcpy(&f, in + j * elt, elt), x = f;
            sum += x;
        }
        float f = (float)sum;
        memcpy(want + i * elt, prec == PB_DOUBLE ? (void *)&sum : (void *)&f, elt);
    }
    pb_buf *bin = upload(dev, in, in_len * elt), *bout = poisoned(dev, out_len * elt);
    struct pb_access_args a = {.prec = prec, .n = n, .step = step, .in = bin, .out = bout};
    pb_status st = pb_kernel_run(dev, "access", v->name, &a);
    char why[160] = "";
    if (st != PB_OK || pb_buf_read(bout, 0, out, out_len * elt + TAIL) != PB_OK)
        snprintf(why, sizeof why, "returned %s (%s)", pb_status_name(st), pb_last_error());
    else if (memcmp(out, want, out_len * elt) != 0)
        snprintf(why, sizeof why, "wrong output");
    else if (!tail_intact(out, out_len * elt))
        snprintf(why, sizeof why, "written past the end");
    if (why[0])
        print_message("FAIL %s/%s %s n=%zu step=%zu: %s\n", pb_backend_name(pb_device_backend(dev)), v->name,
                      pb_precision_name(prec), n, step, why);
    pb_buf_free(bin);
    pb_buf_free(bout);
    free(in);
    free(out);
    free(want);
    return why[0] != 0;
}

static int access_all(pb_device *dev, const struct pb_variant_desc *v)
{
    static const size_t ns[] = {1, 255, 257, 1000};
    static const size_t steps[] = {0, 1, 2, 7, 32, 33};
    int failed = 0;
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < PB_ARRAY_LEN(ns); i++)
            for (size_t j = 0; j < PB_ARRAY_LEN(steps); j++)
                failed += access_case(dev, v, p ? PB_DOUBLE : PB_FLOAT, ns[i], steps[j]);
    return failed;
}

static void test_access(void **state)
{
    (void)state;
    for_every_variant("access", access_all);
}

/* Stride 0 is declined, not run. */
static void test_access_stride_zero(void **state)
{
    (void)state;
    pb_device *dev = NULL;
    assert_int_equal(pb_device_open(pb_backend_find("ref"), 0, &dev), PB_OK);
    pb_buf *in = upload(dev, "abcd", 4), *out = poisoned(dev, 4);
    struct pb_access_args a = {.prec = PB_FLOAT, .n = 1, .step = 0, .in = in, .out = out};
    assert_int_equal(pb_kernel_run(dev, "access", "global-stride", &a), PB_ERR_UNSUPPORTED);
    assert_contains(pb_last_error(), "stride 0");
    pb_buf_free(in);
    pb_buf_free(out);
    pb_device_close(dev);
}

/* The family checks run before any variant: short buffers and bad leading
 * dimensions are PB_ERR_INVALID with a message. */
static void test_bad_arguments(void **state)
{
    (void)state;
    pb_device *dev = NULL;
    assert_int_equal(pb_device_open(pb_backend_find("ref"), 0, &dev), PB_OK);
    pb_buf *small = poisoned(dev, 8 - TAIL + 4), *big = poisoned(dev, 4096);
    struct pb_transpose_args t = {.prec = PB_FLOAT, .rows = 4, .cols = 4, .in = big, .ld_in = 3, .out = big, .ld_out = 4};
    assert_int_equal(pb_kernel_run(dev, "transpose", "loops", &t), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "ld_in");
    t.ld_in = 4;
    t.out = small;
    assert_int_equal(pb_kernel_run(dev, "transpose", "loops", &t), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "out needs 64 bytes");
    struct pb_reduce_args r = {.type = PB_REDUCE_FLOAT_DOUBLE, .n = 4, .in = small, .out = big};
    assert_int_equal(pb_kernel_run(dev, "reduce", "pairwise", &r), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "in needs 16 bytes");
    r.n = 2;
    r.type = (enum pb_reduce_type)7;
    assert_int_equal(pb_kernel_run(dev, "reduce", "pairwise", &r), PB_ERR_INVALID);
    struct pb_access_args a = {.prec = PB_DOUBLE, .n = 2, .step = 1, .in = big, .out = small};
    assert_int_equal(pb_kernel_run(dev, "access", "global-offset", &a), PB_ERR_INVALID);
    pb_buf_free(small);
    pb_buf_free(big);
    pb_device_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_access),
        cmocka_unit_test(test_access_stride_zero),
        cmocka_unit_test(test_bad_arguments),
    };
    return pb_test_run(tests, NULL, NULL);
}

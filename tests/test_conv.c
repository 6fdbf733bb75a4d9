/* The cross-backend convolution test: every available backend, every conv
 * variant, float and double, both borders, awkward shapes (sides that are
 * not multiples of any tile, 1-pixel images, radii larger than the image,
 * R = 1 and 128), through the public kernel API against a double reference
 * computed here; then the strip engine (conv-stream, `parbench conv`) with a
 * device-memory cap small enough to force many strips, with and without
 * streams. UNSUPPORTED is allowed (a variant documents its limits); a wrong
 * answer never is. */
#include "test_util.h"

#include "bench/conv_host.h"
#include "core/core.h"
#include "core/rng.h"
#include "parbench/pb_backend.h"
#include "parbench/pb_kernels.h"

struct shape {
    size_t w, h;
};

static const struct shape shapes[] = {{1, 1}, {7, 5}, {33, 17}, {257, 70}, {100, 131}, {300, 3}, {1, 40}, {45, 1}};
static const size_t radii[] = {1, 2, 8, 17, 128};

static double ref_at(const double *img, long w, long h, long x, long y, enum pb_conv_border border)
{
    if (x < 0 || x >= w || y < 0 || y >= h) {
        if (border == PB_CONV_ZERO)
            return 0;
        x = x < 0 ? 0 : x >= w ? w - 1 : x;
        y = y < 0 ? 0 : y >= h ? h - 1 : y;
    }
    return img[y * w + x];
}

/* The separable filter the direct way: rows, then columns. */
static void reference(const double *img, size_t w, size_t h, const double *f, size_t r,
                      enum pb_conv_border border, double *out)
{
    double *tmp = malloc(w * h * sizeof *tmp);
    assert_non_null(tmp);
    long R = (long)r;
    for (long y = 0; y < (long)h; y++)
        for (long x = 0; x < (long)w; x++) {
            double acc = 0;
            for (long k = -R; k <= R; k++)
                acc += f[k + R] * ref_at(img, (long)w, (long)h, x + k, y, border);
            tmp[y * (long)w + x] = acc;
        }
    for (long y = 0; y < (long)h; y++)
        for (long x = 0; x < (long)w; x++) {
            double acc = 0;
            for (long k = -R; k <= R; k++)
                acc += f[k + R] * ref_at(tmp, (long)w, (long)h, x, y + k, border);
            out[y * (long)w + x] = acc;
        }
    free(tmp);
}

/* An image rounded to prec, as doubles, and a filter (not symmetric, so a
 * flipped filter would fail) rounded the same way. */
static void make_inputs(enum pb_precision prec, size_t n, size_t r, double *img, double *f)
{
    struct pb_rng rng;
    pb__rng_init(&rng, 7, n);
    for (size_t i = 0; i < n; i++)
        img[i] = prec == PB_FLOAT ? (double)(float)pb__rng_uniform(&rng) : pb__rng_uniform(&rng);
    for (size_t k = 0; k <= 2 * r; k++) {
        double v = 1.0 / (double)(2 * r + 1) * (1.0 + 0.5 * (double)k / (double)(2 * r + 1));
        f[k] = prec == PB_FLOAT ? (double)(float)v : v;
    }
}

static void *narrow(const double *x, size_t n, enum pb_precision prec)
{
    void *out = malloc(n * pb_precision_size(prec) + 1);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        if (prec == PB_DOUBLE)
            ((double *)out)[i] = x[i];
        else
            ((float *)out)[i] = (float)x[i];
    }
    return out;
}

/* Largest |got - want| relative to the largest |want|; NaN counts as failure. */
static bool close_enough(const void *got, enum pb_precision prec, const double *want, size_t n, size_t r,
                         double *err)
{
    double scale = 0, worst = 0;
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < n; i++) {
        double g = prec == PB_DOUBLE ? ((const double *)got)[i] : ((const float *)got)[i];
        double d = fabs(g - want[i]);
        if (!(d == d))
            d = INFINITY;
        worst = fmax(worst, d);
    }
    *err = scale > 0 ? worst / scale : worst;
    return *err <= 16 * pb__epsilon(prec) * sqrt(2.0 * (double)r + 2.0);
}

struct device_case {
    pb_device *dev;
    const char *backend, *variant;
};

static int failures;
static size_t cases_ran, cases_declined; /* by the variant under test */

static void one_kernel_case(const struct device_case *dc, enum pb_precision prec, struct shape s, size_t r,
                            enum pb_conv_border border)
{
    size_t n = s.w * s.h, elt = pb_precision_size(prec);
    double *img = malloc(n * sizeof *img), *f = malloc((2 * r + 1) * sizeof *f), *want = malloc(n * sizeof *want);
    assert_true(img && f && want);
    make_inputs(prec, n, r, img, f);
    reference(img, s.w, s.h, f, r, border, want);
    void *img_p = narrow(img, n, prec), *f_p = narrow(f, 2 * r + 1, prec), *got = malloc(n * elt);
    pb_buf *in, *tmp, *out, *filter;
    assert_int_equal(pb_buf_alloc(dc->dev, PB_MEM_DEVICE, n * elt, &in), PB_OK);
    assert_int_equal(pb_buf_alloc(dc->dev, PB_MEM_DEVICE, n * elt, &tmp), PB_OK);
    assert_int_equal(pb_buf_alloc(dc->dev, PB_MEM_DEVICE, n * elt, &out), PB_OK);
    assert_int_equal(pb_buf_alloc(dc->dev, PB_MEM_DEVICE, (2 * r + 1) * elt, &filter), PB_OK);
    assert_int_equal(pb_buf_write(in, 0, img_p, n * elt), PB_OK);
    assert_int_equal(pb_buf_write(filter, 0, f_p, (2 * r + 1) * elt), PB_OK);
    struct pb_conv_args a = {.prec = prec, .width = s.w, .height = s.h, .in_rows = s.h, .in_top = 0, .radius = r,
                             .border = border, .filter = filter, .in = in, .tmp = tmp, .out = out};
    /* Twice: the second time with the taps doubled in the same buffer (a
     * variant that keeps a copy of the taps must notice), so out doubles. */
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            for (size_t i = 0; i < 2 * r + 1; i++)
                f[i] *= 2;
            for (size_t i = 0; i < n; i++)
                want[i] *= 4; /* both passes scale by 2 */
            free(f_p);
            f_p = narrow(f, 2 * r + 1, prec);
            assert_int_equal(pb_buf_write(filter, 0, f_p, (2 * r + 1) * elt), PB_OK);
        }
        assert_int_equal(pb_buf_fill_bytes(out, 0xFF), PB_OK);
        pb_status st = pb_kernel_run(dc->dev, "conv", dc->variant, &a);
        double err = 0;
        cases_ran += st == PB_OK;
        cases_declined += st == PB_ERR_UNSUPPORTED;
        if (st == PB_OK) {
            assert_int_equal(pb_buf_read(out, 0, got, n * elt), PB_OK);
            if (!close_enough(got, prec, want, n, r, &err)) {
                print_message("FAIL %s/%s %s %zux%zu r%zu %s pass %d: error %.3g\n", dc->backend, dc->variant,
                              pb_precision_name(prec), s.w, s.h, r, border ? "clamp" : "zero", pass, err);
                failures++;
            }
        } else if (st != PB_ERR_UNSUPPORTED) {
            print_message("FAIL %s/%s %s %zux%zu r%zu: %s\n", dc->backend, dc->variant, pb_precision_name(prec),
                          s.w, s.h, r, pb_last_error());
            failures++;
        }
    }
    pb_buf_free(in);
    pb_buf_free(tmp);
    pb_buf_free(out);
    pb_buf_free(filter);
    free(img), free(f), free(want), free(img_p), free(f_p), free(got);
}

/* The strip engine: a cap that leaves room for a few rows per strip. */
static void one_engine_case(pb_device *dev, const char *backend, const char *variant, enum pb_precision prec,
                            struct shape s, size_t r, enum pb_conv_border border, size_t slots, bool streams,
                            enum pb_conv_host_mem host_mem)
{
    size_t n = s.w * s.h, elt = pb_precision_size(prec);
    double *img = malloc(n * sizeof *img), *f = malloc((2 * r + 1) * sizeof *f), *want = malloc(n * sizeof *want);
    assert_true(img && f && want);
    make_inputs(prec, n, r, img, f);
    reference(img, s.w, s.h, f, r, border, want);
    void *img_p = narrow(img, n, prec), *got = malloc(n * elt);
    size_t in_rows = 3 + 2 * r < s.h ? 3 + 2 * r : s.h; /* strips of 3 rows */
    struct pb_conv_job job = {.shape = {.width = s.w, .height = s.h, .radius = r, .border = border,
                                        .filter = "gauss", .prec = prec},
                              .variant = variant, .slots = slots, .streams = streams,
                              .device_mem = slots * (2 * in_rows + 3) * s.w * elt + (2 * r + 1) * elt,
                              .host_mem = host_mem, .in = img_p, .out = got};
    struct pb_conv_engine *e;
    assert_int_equal(pb__conv_engine_create(dev, &job, f, &e), PB_OK);
    double pin_s;
    const char *why_staged;
    /* Every backend but OpenCL copies straight from and to the images when asked. */
    bool pinned = pb__conv_engine_pinned(e, &pin_s, &why_staged);
    assert_int_equal(pinned, host_mem != PB_CONV_STAGED && strcmp(backend, "opencl") != 0);
    assert_true(pinned ? why_staged == NULL : why_staged && why_staged[0]);
    double err = 0;
    cases_declined += pb__conv_engine_unsupported(e) != NULL;
    if (!pb__conv_engine_unsupported(e)) {
        cases_ran++;
        if (s.h > 3)
            assert_true(pb__conv_engine_strip_rows(e) <= 3);
        memset(got, 0xFF, n * elt);
        pb_status st = pb__conv_engine_run(e, img_p, got, PB_CONV_ALL);
        if (st != PB_OK || !close_enough(got, prec, want, n, r, &err)) {
            print_message("FAIL engine %s/%s %s %zux%zu r%zu %s slots %zu%s%s: %s error %.3g\n", backend, variant,
                          pb_precision_name(prec), s.w, s.h, r, border ? "clamp" : "zero", slots,
                          streams ? " streams" : "", pinned ? " pinned" : "", st == PB_OK ? "" : pb_last_error(),
                          err);
            failures++;
        }
        /* A pinned engine refuses images it did not lock rather than stage them silently. */
        if (pinned)
            assert_int_equal(pb__conv_engine_run(e, want, got, PB_CONV_ALL), PB_ERR_INVALID);
    }
    pb__conv_engine_free(e);
    free(img), free(f), free(want), free(img_p), free(got);
}

static void for_each_variant(void (*fn)(const struct device_case *dc))
{
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        if (!pb_test_backend_usable(b))
            continue;
        pb_device *dev;
        assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
        struct pb_variant_desc v[16];
        size_t nv = pb_kernel_variants(b, "conv", v, PB_ARRAY_LEN(v));
        assert_true(nv >= 1 && nv <= PB_ARRAY_LEN(v));
        for (size_t j = 0; j < nv; j++) {
            struct device_case dc = {dev, pb_backend_name(b), v[j].name};
            cases_ran = cases_declined = 0;
            fn(&dc);
            failures += pb_test_declined_all("conv", dc.backend, dc.variant, cases_ran, cases_declined);
        }
        pb_device_close(dev);
    }
}

static void kernels_on(const struct device_case *dc)
{
    for (int p = 0; p < 2; p++)
        for (size_t s = 0; s < PB_ARRAY_LEN(shapes); s++)
            for (size_t r = 0; r < PB_ARRAY_LEN(radii); r++)
                for (int b = 0; b < 2; b++)
                    one_kernel_case(dc, (enum pb_precision)p, shapes[s], radii[r], (enum pb_conv_border)b);
}

static void test_kernels(void **state)
{
    (void)state;
    failures = 0;
    for_each_variant(kernels_on);
    assert_int_equal(failures, 0);
}

static void engine_on(const struct device_case *dc)
{
    static const struct shape es[] = {{37, 29}, {5, 2}, {64, 40}};
    static const size_t er[] = {1, 4, 33};
    for (int p = 0; p < 2; p++)
        for (size_t s = 0; s < PB_ARRAY_LEN(es); s++)
            for (size_t r = 0; r < PB_ARRAY_LEN(er); r++)
                for (int b = 0; b < 2; b++) {
                    one_engine_case(dc->dev, dc->backend, dc->variant, (enum pb_precision)p, es[s], er[r],
                                    (enum pb_conv_border)b, 1, false, PB_CONV_STAGED);
                    one_engine_case(dc->dev, dc->backend, dc->variant, (enum pb_precision)p, es[s], er[r],
                                    (enum pb_conv_border)b, 3, true, PB_CONV_STAGED);
                    one_engine_case(dc->dev, dc->backend, dc->variant, (enum pb_precision)p, es[s], er[r],
                                    (enum pb_conv_border)b, 2, true, PB_CONV_PIN_IF_ABLE);
                }
}

static void test_engine(void **state)
{
    (void)state;
    failures = 0;
    for_each_variant(engine_on);
    assert_int_equal(failures, 0);
}

/* A cap below one strip is a clear error, not a crash or a wrong answer. */
static void test_engine_cap_too_small(void **state)
{
    (void)state;
    struct pb_conv_job job = {.shape = {.width = 1000, .height = 100, .radius = 40, .filter = "gauss"},
                              .slots = 2, .device_mem = 4096};
    size_t rows;
    assert_int_equal(pb__conv_strip_rows(&job, &rows), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "too small");
}

static void test_filters(void **state)
{
    (void)state;
    size_t r = 3;
    double *t;
    assert_int_equal(pb__conv_filter_make("gauss:1.5", &r, &t), PB_OK);
    double sum = 0;
    for (int k = 0; k < 7; k++)
        sum += t[k];
    assert_near(sum, 1.0, 1e-12);
    assert_near(t[0], t[6], 1e-15);
    assert_true(t[3] > t[2]);
    free(t);
    assert_int_equal(pb__conv_filter_make("box", &r, &t), PB_OK);
    assert_near(t[0], 1.0 / 7, 1e-15);
    free(t);
    assert_int_equal(pb__conv_filter_make("gauss:-1", &r, &t), PB_ERR_INVALID);
    char path[256];
    pb_test_tmpfile(path, sizeof path, "taps");
    FILE *fp = fopen(path, "w");
    fputs("0.25, 0.5\n0.25\n", fp);
    fclose(fp);
    r = 0;
    assert_int_equal(pb__conv_filter_make(path, &r, &t), PB_OK);
    assert_int_equal(r, 1);
    assert_near(t[1], 0.5, 0);
    free(t);
    r = 2; /* three taps, radius 2 asked for: the caller's mismatch, not the file's */
    assert_int_equal(pb__conv_filter_make(path, &r, &t), PB_ERR_INVALID);
    unlink(path);
    r = 1;
    assert_int_equal(pb__conv_filter_make("/no/such/taps.txt", &r, &t), PB_ERR_IO);
}

/* A sampled check covers the strips' seams: both sides of each. */
static void test_seam_rows(void **state)
{
    (void)state;
    size_t rows[64];
    struct pb_conv_shape shape = {.width = 10, .height = 1000, .radius = 1, .strips = {100, 0}};
    assert_int_equal(pb__conv_seam_rows(&shape, rows, 64), 18);
    for (size_t i = 0; i < 18; i++)
        assert_int_equal(rows[i], (i / 2 + 1) * 100 - 1 + i % 2);
    shape.strips[1] = 64; /* two variants' strips share the room */
    size_t n = pb__conv_seam_rows(&shape, rows, 64);
    assert_true(n > 18 && n <= 64 && n % 2 == 0);
    assert_int_equal(rows[18], 63);
    shape.strips[0] = 3, shape.strips[1] = 0; /* 333 seams spread over the room of 8 */
    n = pb__conv_seam_rows(&shape, rows, 16);
    assert_true(n >= 8 && n <= 16);
    assert_true(rows[n - 1] > 500);
    shape.strips[0] = 1000; /* one strip: no seam */
    assert_int_equal(pb__conv_seam_rows(&shape, rows, 64), 0);
}

/* An element of out (prec) set to v. */
static void put(void *out, enum pb_precision prec, size_t i, double v)
{
    if (prec == PB_DOUBLE)
        ((double *)out)[i] = v;
    else
        ((float *)out)[i] = (float)v;
}

/* The row of out furthest from every row the sampled check compares. */
static size_t unsampled_row(const struct pb_conv_host *h)
{
    size_t best = 0, gap = 0;
    for (size_t y = 0; y < h->shape.height; y++) {
        size_t d = SIZE_MAX;
        for (size_t r = 0; r < h->n_rows; r++)
            d = h->rows[r] > y ? (h->rows[r] - y < d ? h->rows[r] - y : d) : (y - h->rows[r] < d ? y - h->rows[r] : d);
        if (d > gap)
            gap = d, best = y;
    }
    return best;
}

/* Above its pixel cap, the check compares a sample of rows and, through
 * projections of every row's segments, every element: one wrong element in
 * a row it does not sample fails it, at both borders, with segments of 64
 * columns (R = 3) and of R (R = 70). */
static void test_sampled_projections(void **state)
{
    (void)state;
    const size_t w = 301, ht = 203, radii_p[] = {3, 70};
    const enum pb_precision precs[] = {PB_FLOAT, PB_DOUBLE};
    for (size_t ri = 0; ri < 2; ri++)
        for (int b = 0; b < 2; b++)
            for (size_t pi = 0; pi < 2; pi++) {
                enum pb_precision prec = precs[pi];
                struct pb_conv_shape shape = {.width = w, .height = ht, .radius = radii_p[ri],
                                              .border = b ? PB_CONV_CLAMP : PB_CONV_ZERO, .filter = "gauss",
                                              .prec = prec, .full_pixels = 1000};
                struct pb_conv_host *h = NULL;
                assert_int_equal(pb__conv_host_prepare(&shape, 7, &h), PB_OK);
                assert_true(h->n_rows < ht && h->n_segs == (w + h->seg_len - 1) / h->seg_len);
                double *img = malloc(w * ht * sizeof *img), *ref = malloc(w * ht * sizeof *ref);
                void *out = malloc(w * ht * pb_precision_size(prec));
                assert_true(img && ref && out);
                for (size_t i = 0; i < w * ht; i++)
                    img[i] = prec == PB_DOUBLE ? ((double *)h->image)[i] : ((float *)h->image)[i];
                reference(img, w, ht, h->taps, shape.radius, shape.border, ref);
                for (size_t i = 0; i < w * ht; i++)
                    put(out, prec, i, ref[i]);
                struct pb_check c;
                assert_int_equal(pb__conv_host_check(h, out, false, &c), PB_OK);
                assert_true(c.pass);
                assert_string_equal(c.mode, "sampled");
                assert_true(c.checked == h->n_rows * w + ht * h->n_segs);
                size_t y = unsampled_row(h), i = y * w + w / 2;
                put(out, prec, i, ref[i] + 1e-3);
                assert_int_equal(pb__conv_host_check(h, out, false, &c), PB_OK);
                assert_false(c.pass);
                assert_non_null(strstr(c.detail, "of out * r"));
                put(out, prec, i, ref[i]);
                assert_int_equal(pb__conv_host_check(h, out, true, &c), PB_OK); /* the seeded fault */
                assert_false(c.pass);
                free(img), free(ref), free(out);
                pb__conv_host_release(h);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_engine_cap_too_small),
        cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_engine),
        cmocka_unit_test(test_seam_rows),
        cmocka_unit_test(test_sampled_projections),
    };
    return pb_test_run(tests, NULL, NULL);
}

/* The cross-backend GEMM test: every backend compiled in and available, every
 * gemm variant it offers, float and double (and tf32, bf16, fp16 on the
 * variants flagged PB_VARIANT_LOWP), awkward shapes, a few thread
 * counts, through the public API only, against a double reference computed
 * here. Each failure is printed with backend/variant/threads/precision/shape;
 * a test fails when any case did. */
#include <float.h>

#include "test_util.h"

#include "core/gemm_plan.h"
#include "core/precision.h"
#include "core/rng.h"
#include "core/verify.h"
#include "parbench/pb_backend.h"
#include "parbench/pb_kernels.h"

#define PAD_SENTINEL (-12345.0) /* exact in float and double */
#define TAIL 8                  /* sentinel elements after C's last element */

struct shape {
    size_t m, n, k;
};

/* m x n x k. The awkward shapes, plus: k spanning several packed slices of
 * the blocked kernel (KC = 768 in float, 512 in double; k above 2 KC and no
 * multiple of it, so a slice that overwrote C instead of adding to it
 * fails), n past one packed block (NC = 3072), and shapes big enough (> 1e6
 * multiply-adds) to be split over threads, one with more rows per thread
 * than one packed block of A (MC = 192). */
static const struct shape shapes[] = {
    {1, 1, 1},     {17, 33, 5},   {5, 17, 33},    {33, 5, 17},    {64, 64, 64},
    {100, 1, 100}, {1, 100, 100}, {127, 129, 131}, {257, 255, 3}, {3, 1000, 7},
    {40, 70, 400}, {2, 3100, 3},  {200, 300, 20},  {400, 64, 40}, {9, 37, 1700},
    {3, 5, 2500},
};

/* Degenerate shapes: k == 0 (C = beta*C), and empty products (no-ops). */
static const struct shape k_zero_shapes[] = {{7, 9, 0}, {1, 1, 0}, {33, 65, 0}};
static const struct shape empty_shapes[] = {{0, 5, 3}, {4, 0, 3}, {0, 0, 0}, {0, 7, 0}};

/* How a case is set up besides its shape. */
struct mode {
    const char *name;
    size_t pad_a, pad_b, pad_c; /* lda = k + pad_a, ldb = n + pad_b, ldc = n + pad_c */
    double alpha, beta;
    bool c_finite; /* C starts with random values; otherwise poisoned with NaN */
    unsigned block_x, block_y; /* launch shape (PB_VARIANT_SHAPED variants), 0 = theirs */
    size_t groups;
};

static const struct mode plain = {"plain", 0, 0, 0, 1.0, 0.0, false, 0, 0, 0}; /* beta 0: C not read */
static const struct mode padded = {"padded", 3, 5, 7, 1.0, 0.0, false, 0, 0, 0};
static const struct mode alpha_beta = {"alpha=0.5,beta=2", 0, 0, 0, 0.5, 2.0, true, 0, 0, 0};
static const struct mode padded_alpha_beta = {"padded,alpha=-1.5,beta=0.25", 3, 5, 7, -1.5, 0.25,
                                              true, 0, 0, 0};
static const struct mode alpha_zero = {"alpha=0,beta=0.5", 0, 0, 0, 0.0, 0.5, true, 0, 0, 0};
/* Launch shapes of study 001: odd work-groups, capped grids (work-items loop). */
static const struct mode shape_odd = {"wg 7x3, 5 groups, padded, alpha=-1.5, beta=0.25", 3, 5, 7, -1.5, 0.25, true,
                                      7, 3, 5};
static const struct mode shape_one = {"wg 32x8, 1 group", 0, 0, 0, 1.0, 0.0, false, 32, 8, 1};
static const struct mode shape_column = {"wg 1x64", 0, 0, 0, 1.0, 0.0, false, 1, 64, 0};
static const struct mode shape_groups = {"default wg, 3 groups, padded", 3, 5, 7, 1.0, 0.0, false, 0, 0, 3};

/* One (backend, variant, thread count) under test. */
struct target {
    pb_device *dev;
    const char *backend;
    struct pb_variant_desc variant;
    int threads;
    size_t ran, declined; /* cases run and cases the variant declined */
};

/* ---- host-side matrices ------------------------------------------------- */

static double get(const void *x, enum pb_precision prec, size_t i) { return pb__precision_value(x, prec, i); }

static void put(void *x, enum pb_precision prec, size_t i, double v) { pb__precision_store(x, prec, i, v); }

/* rows x ld array of prec elements: random in the first cols of each row, pad
 * elsewhere. An extra TAIL elements of pad follow when tail is set. */
static void *make_matrix(enum pb_precision prec, size_t rows, size_t cols, size_t ld,
                         double pad, struct pb_rng *rng, bool tail)
{
    size_t count = rows * ld + (tail ? TAIL : 0);
    void *x = malloc((count ? count : 1) * pb_precision_size(prec));
    assert_non_null(x);
    for (size_t i = 0; i < count; i++) {
        bool inside = ld > 0 && i / ld < rows && i % ld < cols;
        put(x, prec, i, inside ? pb__rng_uniform(rng) : pad);
    }
    return x;
}

/* ---- one case ----------------------------------------------------------- */

struct gemm_case {
    enum pb_precision prec;
    struct shape s;
    const struct mode *mode;
};

/* The test's own oracle, in double: alpha*A*B + beta*C0 (C0 not read when
 * beta == 0), then from m*n on each element's rounding-error scale
 * (verify.h), over the k products scaled by alpha and beta*C0. */
static double *reference(const struct gemm_case *gc, const void *a, size_t lda, const void *b,
                         size_t ldb, const void *c0, size_t ldc)
{
    size_t m = gc->s.m, n = gc->s.n, k = gc->s.k;
    double *ref = calloc(2 * m * n + 1, sizeof *ref), alpha = gc->mode->alpha;
    assert_non_null(ref);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double sum = 0, sumsq = 0;
            for (size_t p = 0; p < k; p++) {
                double t = get(a, gc->prec, i * lda + p) * get(b, gc->prec, p * ldb + j);
                sum += t;
                sumsq += t * t;
            }
            double c = gc->mode->beta != 0 ? gc->mode->beta * get(c0, pb__precision_out(gc->prec), i * ldc + j) : 0;
            ref[i * n + j] = alpha * sum + c;
            ref[m * n + i * n + j] = pb__dot_scale(gc->prec, (double)k + 2, alpha * alpha * sumsq + c * c);
        }
    return ref;
}

/* Compares C (downloaded, ldc, with TAIL elements after it) with the oracle:
 * every element finite and within PB_CHECK_TOL of its scale, every pad and
 * tail element still the sentinel. Returns a description of the first
 * problem, or NULL. */
static const char *compare(const struct gemm_case *gc, const void *c, size_t ldc,
                           const double *ref, char *why, size_t len)
{
    size_t m = gc->s.m, n = gc->s.n;
    for (size_t i = 0; i < m * ldc + TAIL; i++) {
        size_t row = i / (ldc ? ldc : 1), col = ldc ? i % ldc : 0;
        double x = get(c, pb__precision_out(gc->prec), i);
        if (ldc == 0 || row >= m || col >= n) {
            if (x != PAD_SENTINEL) {
                snprintf(why, len, "padding element %zu overwritten with %g", i, x);
                return why;
            }
            continue;
        }
        double r = ref[row * n + col], scale = ref[m * n + row * n + col];
        if (!isfinite(x)) {
            snprintf(why, len, "C[%zu][%zu] is %g (expected %g)", row, col, x, r);
            return why;
        }
        if (fabs(x - r) > PB_CHECK_TOL * scale) {
            snprintf(why, len, "C[%zu][%zu] = %.9g, expected %.9g (error %.3g scales > tolerance %g)",
                     row, col, x, r, fabs(x - r) / scale, PB_CHECK_TOL);
            return why;
        }
    }
    return NULL;
}

/* Uploads A, B, C; poisons C with pb_buf_fill_bytes(0xFF) and writes the pad
 * sentinels (and C's values in finite mode) row by row through offsets. */
static pb_status upload(pb_device *dev, const struct gemm_case *gc, const void *a, size_t lda,
                        const void *b, size_t ldb, const void *c0, size_t ldc, pb_buf *buf[3])
{
    size_t elt = pb_precision_size(gc->prec), m = gc->s.m, n = gc->s.n, k = gc->s.k;
    size_t elt_c = pb_precision_size(pb__precision_out(gc->prec));
    size_t bytes[3] = {m * lda * elt, k * ldb * elt, (m * ldc + TAIL) * elt_c};
    const void *src[3] = {a, b, NULL};
    for (int i = 0; i < 3; i++) {
        pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes[i], &buf[i]);
        if (st == PB_OK && src[i])
            st = pb_buf_write(buf[i], 0, src[i], bytes[i]);
        if (st != PB_OK)
            return st;
    }
    pb_status st = pb_buf_fill_bytes(buf[2], 0xFF);
    const char *c_bytes = c0;
    for (size_t i = 0; i < m && st == PB_OK; i++) {
        size_t off = i * ldc * elt_c;
        if (gc->mode->c_finite)
            st = pb_buf_write(buf[2], off, c_bytes + off, n * elt_c);
        if (st == PB_OK && ldc > n)
            st = pb_buf_write(buf[2], off + n * elt_c, c_bytes + off + n * elt_c, (ldc - n) * elt_c);
    }
    size_t tail_off = m * ldc * elt_c;
    if (st == PB_OK)
        st = pb_buf_write(buf[2], tail_off, c_bytes + tail_off, TAIL * elt_c);
    return st;
}

/* Runs one case on one target; prints and returns 1 when it fails. */
static int run_case(struct target *t, const struct gemm_case *gc)
{
    const struct mode *md = gc->mode;
    size_t m = gc->s.m, n = gc->s.n, k = gc->s.k;
    size_t lda = k + md->pad_a, ldb = n + md->pad_b, ldc = n + md->pad_c;
    enum pb_precision out = pb__precision_out(gc->prec); /* of C */
    size_t elt = pb_precision_size(out);
    struct pb_rng rng;
    pb__rng_init(&rng, 2024, m * 1000003 + n * 1009 + k);
    /* Pads of A and B hold NaN: a kernel that reads them gets caught. */
    void *a = make_matrix(gc->prec, m, k, lda, NAN, &rng, false);
    void *b = make_matrix(gc->prec, k, n, ldb, NAN, &rng, false);
    void *c0 = make_matrix(out, m, n, ldc, PAD_SENTINEL, &rng, true);
    void *c = malloc((m * ldc + TAIL) * elt);
    double *ref = reference(gc, a, lda, b, ldb, c0, ldc);
    assert_non_null(c);

    pb_buf *buf[3] = {NULL, NULL, NULL};
    char why[256] = "";
    const char *problem = NULL;
    pb_status st = upload(t->dev, gc, a, lda, b, ldb, c0, ldc, buf);
    if (st != PB_OK) {
        snprintf(why, sizeof why, "setup failed: %s (%s)", pb_status_name(st), pb_last_error());
        problem = why;
    } else {
        struct pb_gemm_args args = {.prec = gc->prec, .m = m, .n = n, .k = k, .alpha = md->alpha,
                                    .beta = md->beta, .a = buf[0], .lda = lda, .b = buf[1],
                                    .ldb = ldb, .c = buf[2], .ldc = ldc, .block_x = md->block_x,
                                    .block_y = md->block_y, .groups = md->groups};
        st = pb_gemm(t->dev, t->variant.name, &args);
        if (st == PB_ERR_UNSUPPORTED) {
            /* A variant may decline what it does not handle (a vendor library's int
             * sizes, a double-only kernel); it must never answer wrongly. */
            print_message("note: %s/%s declined %zux%zux%zu %s: %s\n", t->backend,
                          t->variant.name, m, n, k, md->name, pb_last_error());
            t->declined++;
        } else if (st != PB_OK) {
            snprintf(why, sizeof why, "pb_gemm returned %s (%s)", pb_status_name(st),
                     pb_last_error());
            problem = why;
        } else if ((st = pb_buf_read(buf[2], 0, c, (m * ldc + TAIL) * elt)) != PB_OK) {
            snprintf(why, sizeof why, "pb_buf_read returned %s", pb_status_name(st));
            problem = why;
        } else {
            problem = compare(gc, c, ldc, ref, why, sizeof why);
            t->ran++;
        }
    }
    if (problem)
        print_message("FAIL %s/%s threads=%d %s %zux%zux%zu (m x n x k) %s: %s\n", t->backend,
                      t->variant.name, t->threads, pb_precision_name(gc->prec), m, n, k, md->name,
                      problem);
    for (int i = 0; i < 3; i++)
        pb_buf_free(buf[i]);
    free(a);
    free(b);
    free(c0);
    free(c);
    free(ref);
    return problem != NULL;
}

/* ---- every target ------------------------------------------------------- */

/* Device 0 of backend b, or NULL (a skip noted) where b cannot run here. */
static pb_device *open_usable(const pb_backend *b)
{
    pb_device *dev = NULL;
    if (pb_test_backend_usable(b))
        assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
    return dev;
}

static const enum pb_precision precs[] = {PB_FLOAT, PB_DOUBLE, PB_TF32, PB_BF16, PB_FP16};

/* Runs the shapes in every mode given on one target, in float and double and,
 * where the variant takes them, the tensor-core types; returns the number of
 * failed cases. */
static int run_on_targets(struct target *t, const struct shape *s, size_t n_shapes,
                          const struct mode *const *modes, size_t n_modes)
{
    int failed = 0;
    size_t n_precs = t->variant.flags & PB_VARIANT_LOWP ? PB_ARRAY_LEN(precs) : 2;
    for (size_t p = 0; p < n_precs; p++)
        for (size_t i = 0; i < n_shapes; i++)
            for (size_t md = 0; md < n_modes; md++) {
                struct gemm_case gc = {precs[p], s[i], modes[md]};
                failed += run_case(t, &gc);
            }
    return failed;
}

/* Calls run_on_targets for every available backend, gemm variant and thread
 * count (where the backend takes one). Asserts nothing failed. */
static void run_everywhere(const struct shape *s, size_t n_shapes, const struct mode *const *modes,
                           size_t n_modes)
{
    static const int thread_counts[] = {1, 2, 3}; /* 3: an uneven split on 2 cores */
    int failed = 0;
    size_t targets = 0;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        /* Threaded backends take the thread count; the others keep their own. */
        int before = pb_device_threads(dev);
        pb_device_set_threads(dev, 3);
        bool threaded = pb_device_threads(dev) == 3;
        if (!threaded)
            assert_int_equal(pb_device_threads(dev), before);
        size_t n_threads = threaded ? PB_ARRAY_LEN(thread_counts) : 1;

        struct pb_variant_desc variants[32];
        size_t nv = pb_kernel_variants(b, "gemm", variants, PB_ARRAY_LEN(variants));
        assert_true(nv <= PB_ARRAY_LEN(variants));
        for (size_t v = 0; v < nv; v++) {
            size_t ran = 0, declined = 0;
            /* OpenCL's regblock picks its tile by shape and device: run both. */
            static const char *const cl_tiles[] = {"large", "small"};
            bool cl_regblock = strcmp(pb_backend_name(b), "opencl") == 0 && strcmp(variants[v].name, "regblock") == 0;
            for (size_t tile = 0; tile < (cl_regblock ? PB_ARRAY_LEN(cl_tiles) : 1); tile++)
                for (size_t ti = 0; ti < n_threads; ti++) {
                    if (cl_regblock)
                        assert_int_equal(setenv("PARBENCH_CL_REGBLOCK_TILE", cl_tiles[tile], 1), 0);
                    pb_device_set_threads(dev, threaded ? thread_counts[ti] : 0);
                    if (threaded)
                        assert_int_equal(pb_device_threads(dev), thread_counts[ti]);
                    struct target t = {.dev = dev, .backend = pb_backend_name(b), .variant = variants[v],
                                       .threads = pb_device_threads(dev)};
                    assert_string_equal(variants[v].bench, "gemm");
                    failed += run_on_targets(&t, s, n_shapes, modes, n_modes);
                    ran += t.ran, declined += t.declined;
                    targets++;
                }
            unsetenv("PARBENCH_CL_REGBLOCK_TILE");
            failed += pb_test_declined_all("gemm", pb_backend_name(b), variants[v].name, ran, declined);
        }
        pb_device_close(dev);
    }
    /* At least the two serial reference variants are always there. */
    assert_true(targets >= 2);
    if (failed)
        print_message("%d case(s) failed\n", failed);
    assert_int_equal(failed, 0);
}

#define RUN_EVERYWHERE(shape_table, ...)                                                  \
    do {                                                                                  \
        static const struct mode *const modes_[] = {__VA_ARGS__};                         \
        run_everywhere(shape_table, PB_ARRAY_LEN(shape_table), modes_, PB_ARRAY_LEN(modes_)); \
    } while (0)

/* ---- tests -------------------------------------------------------------- */

/* C = A*B with C full of NaN beforehand (beta == 0: C must not be read). */
static void test_shapes(void **state)
{
    (void)state;
    RUN_EVERYWHERE(shapes, &plain);
}

/* lda = k+3, ldb = n+5, ldc = n+7: padding of A and B holds NaN (must not be
 * read), padding of C a sentinel (must not be written). */
static void test_leading_dimensions(void **state)
{
    (void)state;
    RUN_EVERYWHERE(shapes, &padded);
}

/* alpha and beta with a finite C, with and without padding; alpha == 0. */
static void test_alpha_beta(void **state)
{
    (void)state;
    RUN_EVERYWHERE(shapes, &alpha_beta, &padded_alpha_beta, &alpha_zero);
}

/* k == 0: C = beta*C (beta == 0 with NaN in C must give zeros). */
static void test_k_zero(void **state)
{
    (void)state;
    RUN_EVERYWHERE(k_zero_shapes, &plain, &padded, &alpha_beta, &padded_alpha_beta);
}

/* m == 0 or n == 0: nothing is written, not even with beta != 1. */
static void test_empty(void **state)
{
    (void)state;
    RUN_EVERYWHERE(empty_shapes, &plain, &padded, &alpha_beta, &padded_alpha_beta);
}

/* Launch shapes: variants flagged PB_VARIANT_SHAPED compute the same product
 * in any work-group and capped grid; every other variant refuses a shape. */
static void test_launch_shapes(void **state)
{
    (void)state;
    static const struct mode *const modes[] = {&shape_odd, &shape_one, &shape_column, &shape_groups};
    int failed = 0;
    size_t shaped = 0;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        struct pb_variant_desc variants[32];
        size_t nv = pb_kernel_variants(b, "gemm", variants, PB_ARRAY_LEN(variants));
        for (size_t v = 0; v < nv; v++) {
            struct target t = {.dev = dev, .backend = pb_backend_name(b), .variant = variants[v]};
            if (variants[v].flags & PB_VARIANT_SHAPED) {
                /* The first shapes: capped grids run slowly on CPU devices. */
                failed += run_on_targets(&t, shapes, 9, modes, PB_ARRAY_LEN(modes));
                failed += pb_test_declined_all("gemm", t.backend, variants[v].name, t.ran, t.declined);
                shaped++;
                continue;
            }
            pb_buf *buf = NULL;
            assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, 16 * sizeof(double), &buf), PB_OK);
            struct pb_gemm_args g = {.prec = PB_DOUBLE, .m = 4, .n = 4, .k = 1, .alpha = 1, .a = buf, .lda = 1,
                                     .b = buf, .ldb = 4, .c = buf, .ldc = 4, .block_x = 4, .block_y = 4};
            pb_status st = pb_gemm(dev, variants[v].name, &g);
            if (st != PB_ERR_UNSUPPORTED) {
                print_message("FAIL %s/%s took a launch shape: %s\n", t.backend, variants[v].name,
                              pb_status_name(st));
                failed++;
            }
            pb_buf_free(buf);
        }
        pb_device_close(dev);
    }
    const pb_backend *cl = pb_backend_find("opencl"); /* NULL in a build without OpenCL */
    if (cl && pb_test_backend_usable(cl))
        assert_true(shaped >= 1);
    assert_int_equal(failed, 0);
}

/* tf32, bf16, fp16: variants not flagged PB_VARIANT_LOWP refuse them with a
 * reason that says where they run (no tensor cores at all on openmp and
 * opencl), and the default variant of a backend is one that takes them. */
static void test_tensor_types_refused(void **state)
{
    (void)state;
    static const enum pb_precision lowp[] = {PB_TF32, PB_BF16, PB_FP16};
    size_t refused = 0, lowp_variants = 0;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        pb_buf *in = NULL, *c = NULL;
        assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, 16 * sizeof(float), &in), PB_OK);
        assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, 16 * sizeof(float), &c), PB_OK);
        assert_int_equal(pb_buf_fill_bytes(in, 0), PB_OK);
        struct pb_variant_desc variants[32];
        size_t nv = pb_kernel_variants(b, "gemm", variants, PB_ARRAY_LEN(variants)), lowp_here = 0;
        for (size_t v = 0; v < nv; v++)
            lowp_here += (variants[v].flags & PB_VARIANT_LOWP) != 0;
        bool tensorless = strcmp(pb_backend_name(b), "openmp") == 0 || strcmp(pb_backend_name(b), "opencl") == 0;
        if (tensorless)
            assert_int_equal(lowp_here, 0);
        for (size_t p = 0; p < PB_ARRAY_LEN(lowp); p++) {
            struct pb_gemm_args g = {.prec = lowp[p], .m = 4, .n = 4, .k = 4, .alpha = 1, .a = in, .lda = 4,
                                     .b = in, .ldb = 4, .c = c, .ldc = 4};
            for (size_t v = 0; v < nv; v++) {
                if (variants[v].flags & PB_VARIANT_LOWP)
                    continue;
                assert_int_equal(pb_gemm(dev, variants[v].name, &g), PB_ERR_UNSUPPORTED);
                const char *why = pb_last_error();
                if (!strstr(why, "tf32/bf16/fp16 run on") ||
                    (tensorless && !strstr(why, "no tensor cores: tf32/bf16/fp16 run on cuda")))
                    fail_msg("%s/%s %s: reason '%s'", pb_backend_name(b), variants[v].name,
                             pb_precision_name(lowp[p]), why);
                refused++;
            }
            const char *chosen = NULL;
            pb_status st = pb_kernel_default(dev, "gemm", &g, &chosen);
            if (lowp_here) {
                assert_int_equal(st, PB_OK);
                assert_true(pb_gemm(dev, NULL, &g) == PB_OK);
            } else {
                assert_int_equal(st, PB_ERR_UNSUPPORTED);
            }
        }
        lowp_variants += lowp_here;
        pb_buf_free(in);
        pb_buf_free(c);
        pb_device_close(dev);
    }
    /* ref's ijk and ikj take them; openmp's variants refuse them */
    assert_true(lowp_variants >= 2);
    assert_true(refused >= 3);
}

/* CUDA's regblock, dmma and wgmma, and OpenCL's regblock (both tiles), cut
 * tiles along k where whole tiles would leave the last wave part-empty
 * (src/core/gemm_plan.h). Planned for 4 SMs or compute units, small shapes
 * take those paths: the tiles past the last full wave cut in two or more
 * (depending on the tile each variant picks; regblock's plan cuts the last 5
 * of 21 64 x 64 tiles of 5 x 1314 x 3261 in float, the last 6 of 18 of 9 x
 * 1104 x 2273 in double), and every tile cut (520 x 70 x 4500, 64 x 64 x
 * 9000). */
static void test_cut_tiles(void **state)
{
    (void)state;
    static const struct shape cut[] = {{300, 600, 2100}, {130, 1000, 2200}, {520, 70, 4500},
                                       {64, 64, 9000},   {5, 1314, 3261},   {9, 1104, 2273}};
    static const struct mode *const modes[] = {&padded_alpha_beta};
    static const char *const backends[] = {"cuda", "opencl"};
    static const char *const cutting[] = {"regblock", "dmma", "wgmma"};
    static const char *const cl_tiles[] = {"large", "small"};
    assert_int_equal(setenv("PARBENCH_GEMM_SMS", "4", 1), 0);
    int failed = 0;
    for (size_t bi = 0; bi < PB_ARRAY_LEN(backends); bi++) {
        const pb_backend *b = pb_backend_find(backends[bi]);
        pb_device *dev = b ? open_usable(b) : NULL;
        if (!dev) {
            print_message("note: no usable %s device; its tiles cut along k not tested\n", backends[bi]);
            continue;
        }
        bool opencl = strcmp(backends[bi], "opencl") == 0;
        struct pb_variant_desc variants[32];
        size_t nv = pb_kernel_variants(b, "gemm", variants, PB_ARRAY_LEN(variants)), ran = 0;
        for (size_t v = 0; v < nv; v++)
            for (size_t i = 0; i < PB_ARRAY_LEN(cutting); i++)
                for (size_t tile = 0; tile < (opencl ? PB_ARRAY_LEN(cl_tiles) : 1); tile++)
                    if (strcmp(variants[v].name, cutting[i]) == 0) {
                        if (opencl)
                            assert_int_equal(setenv("PARBENCH_CL_REGBLOCK_TILE", cl_tiles[tile], 1), 0);
                        struct target t = {.dev = dev, .backend = backends[bi], .variant = variants[v], .threads = 0};
                        failed += run_on_targets(&t, cut, PB_ARRAY_LEN(cut), modes, PB_ARRAY_LEN(modes));
                        ran += t.ran;
                    }
        unsetenv("PARBENCH_CL_REGBLOCK_TILE");
        pb_device_close(dev);
        print_message("note: %zu product(s) with tiles cut along k ran on %s\n", ran, backends[bi]);
        assert_true(ran > 0);
    }
    unsetenv("PARBENCH_GEMM_SMS");
    assert_int_equal(failed, 0);
}

/* A thin C, on every target. n <= 32: CUDA's regblock hands it to
 * gemm_thin.cu (n rounded up to a multiple of 4: every rounding here), m
 * past one block of rows and not, k cut into pieces on a large GPU (65 x 9 x
 * 2000) and not (700 x 24 x 40); OpenMP's blocked kernel reads A unpacked.
 * m <= 48 and n past 4 micro-panels: it reads B unpacked (20 x 300 x 700, 45 x
 * 200 x 500; a ragged last panel packed), its last row tile a third (16 rows:
 * 12 + 4), two thirds (17, 20) or all (45) of the micro-tile's rows. */
static void test_thin(void **state)
{
    (void)state;
    static const struct shape thin[] = {{900, 19, 300}, {300, 1, 1300}, {333, 8, 700},  {65, 9, 2000},
                                        {700, 24, 40},  {129, 25, 300}, {200, 32, 257}, {7, 31, 1500},
                                        {600, 16, 16},  {20, 300, 700}, {45, 200, 500}, {16, 300, 200},
                                        {17, 300, 200}};
    RUN_EVERYWHERE(thin, &plain, &padded_alpha_beta);
}

/* regblock's plans (pb__plan_fill) on 132 SMs: every plan is one the kernels
 * can run and no slower by the model than whole tiles; a small product cuts
 * its tiles to fill the SMs, a tiny k never cuts, 4096^3 runs whole, and
 * PARBENCH_GEMM_PIECES imposes its count. */
static void test_fill_plans(void **state)
{
    (void)state;
    static const struct pb__fill_tile tiles[] = {{128, 256, 1.0, 1}, {128, 128, 0.985, 2}, {128, 64, 0.95, 4},
                                                 {64, 64, 0.77, 4}};
    struct pb_rng rng;
    pb__rng_init(&rng, 11, 0);
    for (int i = 0; i < 2000; i++) {
        const size_t m = 1 + pb__rng_next(&rng) % 20000, n = 1 + pb__rng_next(&rng) % 20000,
                     k = 1 + pb__rng_next(&rng) % 70000;
        const struct pb__fill_tile *t = &tiles[i % 4];
        const size_t count = ((m + t->bm - 1) / t->bm) * ((n + t->bn - 1) / t->bn);
        const struct pb__split_plan plan = pb__plan_fill(t, m, n, k, 132, 4, 3.8e11, 1e-10);
        assert_true(plan.first <= count);
        assert_true(plan.slabs >= 1 && plan.slabs <= 64);
        assert_true(plan.slabs == 1 || plan.first < count);
        assert_true(plan.slabs == 1 || k / (size_t)plan.slabs >= 128);
        assert_true(plan.waves > 0 && isfinite(plan.waves));
        const double whole = pb__fill_seconds(t, pb__plan_whole(count, 132), count, k, 132, 4, 3.8e11, 1e-10);
        assert_true(plan.waves <= whole * (1 + 1e-12));
    }
    const struct pb__split_plan small = pb__plan_fill(&tiles[3], 511, 463, 1023, 132, 4, 3.8e11, 1e-10);
    assert_true(small.slabs > 1 && small.first == 0);
    const struct pb__split_plan thin_k = pb__plan_fill(&tiles[1], 19531, 13647, 37, 132, 4, 3.8e11, 3.2e-10);
    assert_int_equal(thin_k.slabs, 1);
    const struct pb__split_plan square = pb__plan_fill(&tiles[0], 4096, 4096, 4096, 132, 4, 3.8e11, 1e-10);
    assert_int_equal(square.slabs, 1);
    assert_int_equal(square.first, 32 * 16);
    assert_int_equal(setenv("PARBENCH_GEMM_PIECES", "5", 1), 0);
    const struct pb__split_plan forced = pb__plan_fill(&tiles[0], 4096, 4096, 4096, 132, 4, 3.8e11, 1e-10);
    unsetenv("PARBENCH_GEMM_PIECES");
    assert_int_equal(forced.slabs, 5);
    assert_int_equal(forced.first, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),     cmocka_unit_test(test_leading_dimensions),
        cmocka_unit_test(test_alpha_beta), cmocka_unit_test(test_k_zero),
        cmocka_unit_test(test_empty),      cmocka_unit_test(test_launch_shapes),
        cmocka_unit_test(test_tensor_types_refused), cmocka_unit_test(test_cut_tiles),
        cmocka_unit_test(test_fill_plans), cmocka_unit_test(test_thin),
    };
    return pb_test_run(tests, NULL, NULL);
}

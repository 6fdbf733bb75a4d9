/* The public API's error paths and small contracts: argument checking before
 * any variant runs, buffers, status names, backends and devices. */
#include "test_util.h"

#include "parbench/pb.h"
#include "parbench/pb_backend.h"
#include "parbench/pb_kernels.h"
#include "core/core.h"
#include "io/image.h"
#include "sparse/sparse.h"

struct fixture {
    pb_device *dev; /* ref, device 0 */
    pb_buf *a, *b, *c;
    struct pb_gemm_args args; /* a valid 4 x 5 x 3 double product */
};

enum { M = 4, N = 5, K = 3 };

static pb_buf *alloc_buf(pb_device *dev, size_t bytes)
{
    pb_buf *buf = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &buf), PB_OK);
    assert_non_null(buf);
    assert_int_equal(pb_buf_size(buf), bytes);
    return buf;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || pb_device_open(pb_backend_find("ref"), 0, &f->dev) != PB_OK)
        return -1;
    f->a = alloc_buf(f->dev, M * K * sizeof(double));
    f->b = alloc_buf(f->dev, K * N * sizeof(double));
    f->c = alloc_buf(f->dev, M * N * sizeof(double));
    assert_int_equal(pb_buf_fill_bytes(f->a, 0), PB_OK);
    assert_int_equal(pb_buf_fill_bytes(f->b, 0), PB_OK);
    f->args = (struct pb_gemm_args){.prec = PB_DOUBLE, .m = M, .n = N, .k = K, .alpha = 1,
                                    .beta = 0, .a = f->a, .lda = K, .b = f->b, .ldb = N,
                                    .c = f->c, .ldc = N};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    pb_buf_free(f->a);
    pb_buf_free(f->b);
    pb_buf_free(f->c);
    pb_device_close(f->dev);
    free(f);
    return 0;
}

/* Device 0 of b, or NULL where b is not usable here. */
static pb_device *open_usable(const pb_backend *b)
{
    pb_device *dev = NULL;
    if (pb_test_backend_usable(b))
        assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
    return dev;
}

/* st is the expected error and pb_last_error() explains it. */
static void assert_fails(pb_status st, pb_status want)
{
    if (st != want)
        print_message("got %s, expected %s (%s)\n", pb_status_name(st), pb_status_name(want),
                      pb_last_error());
    assert_int_equal(st, want);
    assert_true(pb_last_error()[0] != '\0');
}

/* ---- kernels ------------------------------------------------------------ */

static void test_valid_args_run(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(pb_gemm(f->dev, "ijk", &f->args), PB_OK);
    assert_int_equal(pb_kernel_run(f->dev, "gemm", "ikj", &f->args), PB_OK);
}

static void test_unknown_variant_or_bench(void **state)
{
    struct fixture *f = *state;
    assert_fails(pb_gemm(f->dev, "no-such-variant", &f->args), PB_ERR_NOT_FOUND);
    assert_contains(pb_last_error(), "no-such-variant");
    assert_fails(pb_kernel_run(f->dev, "no-such-bench", "ijk", &f->args), PB_ERR_NOT_FOUND);
    assert_fails(pb_kernel_run(f->dev, "gemm", "ijk", NULL), PB_ERR_INVALID);
}

/* Each entry breaks one field of the valid arguments. */
struct bad_args {
    const char *what;
    void (*apply)(struct pb_gemm_args *g, struct fixture *f);
    pb_status want;
};

static void lda_too_small(struct pb_gemm_args *g, struct fixture *f) { (void)f, g->lda = K - 1; }
static void ldb_too_small(struct pb_gemm_args *g, struct fixture *f) { (void)f, g->ldb = N - 1; }
static void ldc_too_small(struct pb_gemm_args *g, struct fixture *f) { (void)f, g->ldc = N - 1; }
static void a_too_small(struct pb_gemm_args *g, struct fixture *f) { (void)f, g->m = M + 1; }
static void b_too_small(struct pb_gemm_args *g, struct fixture *f) { (void)f, g->n = N + 1, g->ldc = N + 1; }
static void lda_past_end(struct pb_gemm_args *g, struct fixture *f) { (void)f, g->lda = K + 1; }
static void c_is_a(struct pb_gemm_args *g, struct fixture *f) { g->c = f->a; } /* 12 < 20 elements */
static void b_null(struct pb_gemm_args *g, struct fixture *f) { (void)f, g->b = NULL; }
static void bad_precision(struct pb_gemm_args *g, struct fixture *f) { (void)f, g->prec = (enum pb_precision)7; }
static void bytes_overflow(struct pb_gemm_args *g, struct fixture *f) { (void)f, g->m = SIZE_MAX / 16; }
static void span_overflow(struct pb_gemm_args *g, struct fixture *f)
{
    (void)f, g->m = SIZE_MAX, g->lda = SIZE_MAX / 2;
}

static const struct bad_args bad_cases[] = {
    {"lda < k", lda_too_small, PB_ERR_INVALID},
    {"ldb < n", ldb_too_small, PB_ERR_INVALID},
    {"ldc < n", ldc_too_small, PB_ERR_INVALID},
    {"A smaller than m*k", a_too_small, PB_ERR_INVALID},
    {"B smaller than k*n", b_too_small, PB_ERR_INVALID},
    {"A smaller than its lda span", lda_past_end, PB_ERR_INVALID},
    {"C smaller than m*n", c_is_a, PB_ERR_INVALID},
    {"B NULL", b_null, PB_ERR_INVALID},
    {"unknown precision", bad_precision, PB_ERR_INVALID},
    {"A's element count times 8 overflows", bytes_overflow, PB_ERR_OVERFLOW},
    {"(m-1)*lda overflows", span_overflow, PB_ERR_OVERFLOW},
};

/* Bad arguments are refused before any variant runs, for every variant of
 * every available backend, with an explanation and nothing written. */
static void test_bad_args_every_variant(void **state)
{
    struct fixture *f = *state;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        struct pb_variant_desc v[32];
        size_t nv = pb_kernel_variants(b, "gemm", v, PB_ARRAY_LEN(v));
        for (size_t vi = 0; vi < nv; vi++)
            for (size_t i = 0; i < PB_ARRAY_LEN(bad_cases); i++) {
                struct pb_gemm_args g = f->args;
                bad_cases[i].apply(&g, f);
                assert_int_equal(pb_buf_fill_bytes(f->c, 0x7F), PB_OK);
                pb_status st = pb_gemm(dev, v[vi].name, &g);
                unsigned char after[M * N * sizeof(double)], want[sizeof after];
                memset(want, 0x7F, sizeof want);
                assert_int_equal(pb_buf_read(f->c, 0, after, sizeof after), PB_OK);
                if (st != bad_cases[i].want || memcmp(after, want, sizeof after) != 0)
                    print_message("%s/%s, %s: got %s, C %s\n", pb_backend_name(b), v[vi].name,
                                  bad_cases[i].what, pb_status_name(st),
                                  memcmp(after, want, sizeof after) ? "modified" : "untouched");
                assert_fails(st, bad_cases[i].want);
                assert_memory_equal(after, want, sizeof after);
            }
        pb_device_close(dev);
    }
}

/* A buffer exactly as large as the matrix spans (the last row needs no pad)
 * is accepted; one element less is not. */
static void test_exact_span_accepted(void **state)
{
    struct fixture *f = *state;
    size_t lda = K + 2, need = ((M - 1) * lda + K) * sizeof(double);
    pb_buf *exact = alloc_buf(f->dev, need), *short_buf = alloc_buf(f->dev, need - sizeof(double));
    assert_int_equal(pb_buf_fill_bytes(exact, 0), PB_OK);
    struct pb_gemm_args g = f->args;
    g.a = exact;
    g.lda = lda;
    assert_int_equal(pb_gemm(f->dev, "ikj", &g), PB_OK);
    g.a = short_buf;
    assert_fails(pb_gemm(f->dev, "ikj", &g), PB_ERR_INVALID);
    pb_buf_free(exact);
    pb_buf_free(short_buf);
}

/* ---- buffers ------------------------------------------------------------ */

static void test_buffer_ranges(void **state)
{
    struct fixture *f = *state;
    pb_buf *buf = alloc_buf(f->dev, 64);
    unsigned char data[80] = {0};
    assert_int_equal(pb_buf_write(buf, 0, data, 64), PB_OK);
    assert_int_equal(pb_buf_write(buf, 60, data, 4), PB_OK);
    assert_int_equal(pb_buf_write(buf, 64, data, 0), PB_OK);
    assert_int_equal(pb_buf_read(buf, 32, data, 32), PB_OK);
    assert_fails(pb_buf_write(buf, 0, data, 65), PB_ERR_INVALID);
    assert_fails(pb_buf_write(buf, 61, data, 4), PB_ERR_INVALID);
    assert_fails(pb_buf_write(buf, 65, data, 0), PB_ERR_INVALID);
    assert_fails(pb_buf_read(buf, 1, data, 64), PB_ERR_INVALID);
    assert_fails(pb_buf_read(buf, SIZE_MAX, data, 2), PB_ERR_INVALID); /* offset + size wraps */
    assert_fails(pb_buf_write(buf, 2, data, SIZE_MAX), PB_ERR_INVALID);
    pb_buf_free(buf);
}

/* Every free accepts NULL (DESIGN: "every free accepts NULL"): on every
 * usable backend, each public free of NULL returns without touching the error
 * state, and so do the library's internal ones; freeing a struct the free
 * has already emptied is harmless too (ASan would see a double free). */
static void test_free_null(void **state)
{
    (void)state;
    size_t backends = 0;
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        pb_stream *s = NULL;
        pb_timer *t = NULL;
        assert_int_equal(pb_stream_create(dev, &s), PB_OK);
        assert_int_equal(pb_timer_create(dev, &t), PB_OK);
        pb__fail(PB_ERR_INVALID, "marker %s", pb_backend_name(b));
        char before[64];
        snprintf(before, sizeof before, "marker %s", pb_backend_name(b));
        pb_buf_free(NULL);
        pb_stream_destroy(NULL);
        pb_timer_destroy(NULL);
        pb_device_close(NULL);
        assert_string_equal(pb_last_error(), before);
        pb_timer_destroy(t);
        pb_stream_destroy(s);
        pb_device_close(dev);
        backends++;
    }
    assert_true(backends >= 1);
    pb__fail(PB_ERR_INVALID, "marker");
    pb_coo_free(NULL);
    pb__ell_free(NULL);
    pb__image_free(NULL);
    pb__host_free(NULL);
    assert_string_equal(pb_last_error(), "marker");
    struct pb_coo m;
    assert_int_equal(pb__sparse_generate("lap2d:3", 1, &m), PB_OK);
    struct pb_ell e;
    assert_int_equal(pb__ell_build(&m, false, 8, &e), PB_OK);
    pb__ell_free(&e);
    assert_null(e.idx);
    pb__ell_free(&e);
    pb_coo_free(&m);
    assert_null(m.values);
    pb_coo_free(&m);
    struct pb_image img = {0};
    pb__image_free(&img);
}

/* pb_stream_wait orders two streams: on every usable backend, a copy queued
 * on an urgent stream after waiting reads what the other stream wrote. 8 MiB
 * a copy, so that without the wait the second would start while the first
 * is still under way on a GPU. */
static void test_stream_wait(void **state)
{
    (void)state;
    enum { WORDS = 1 << 21 };
    uint32_t *in = malloc(WORDS * sizeof *in), *out = malloc(WORDS * sizeof *out);
    assert_non_null(in);
    assert_non_null(out);
    for (uint32_t i = 0; i < WORDS; i++)
        in[i] = i * 2654435761u;
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        pb_stream *first = NULL, *second = NULL;
        assert_int_equal(pb_stream_create(dev, &first), PB_OK);
        assert_int_equal(pb_stream_create_urgent(dev, &second), PB_OK);
        pb_buf *src = alloc_buf(dev, WORDS * sizeof *in), *mid = alloc_buf(dev, WORDS * sizeof *in),
               *dst = alloc_buf(dev, WORDS * sizeof *in);
        assert_int_equal(pb_buf_write(src, 0, in, WORDS * sizeof *in), PB_OK);
        assert_int_equal(pb_buf_fill_bytes(mid, 0), PB_OK);
        assert_int_equal(pb_buf_copy(mid, 0, src, 0, WORDS * sizeof *in, first), PB_OK);
        assert_int_equal(pb_stream_wait(second, first), PB_OK);
        assert_int_equal(pb_stream_wait(second, second), PB_OK); /* on itself: nothing to do */
        assert_int_equal(pb_buf_copy(dst, 0, mid, 0, WORDS * sizeof *in, second), PB_OK);
        assert_int_equal(pb_stream_sync(second), PB_OK);
        assert_int_equal(pb_buf_read(dst, 0, out, WORDS * sizeof *out), PB_OK);
        if (memcmp(in, out, WORDS * sizeof *in) != 0)
            fail_msg("%s: the copy behind pb_stream_wait read the buffer before it was written", pb_backend_name(b));
        assert_int_equal(pb_stream_sync(first), PB_OK);
        pb_buf_free(src);
        pb_buf_free(mid);
        pb_buf_free(dst);
        pb_stream_destroy(first);
        pb_stream_destroy(second);
        pb_device_close(dev);
    }
    free(in);
    free(out);
}

static void test_write_read_fill(void **state)
{
    struct fixture *f = *state;
    pb_buf *buf = alloc_buf(f->dev, 16);
    unsigned char in[16], out[16], ff[16];
    for (int i = 0; i < 16; i++)
        in[i] = (unsigned char)(i * 7 + 1);
    assert_int_equal(pb_buf_write(buf, 0, in, 16), PB_OK);
    assert_int_equal(pb_buf_read(buf, 0, out, 16), PB_OK);
    assert_memory_equal(in, out, 16);
    assert_int_equal(pb_buf_read(buf, 5, out, 3), PB_OK); /* offsets */
    assert_memory_equal(in + 5, out, 3);
    assert_int_equal(pb_buf_fill_bytes(buf, 0xFF), PB_OK);
    assert_int_equal(pb_buf_read(buf, 0, out, 16), PB_OK);
    memset(ff, 0xFF, sizeof ff);
    assert_memory_equal(out, ff, 16);
    double d;
    memcpy(&d, out, sizeof d);
    assert_true(isnan(d)); /* 0xFF bytes poison doubles with NaN */
    pb_buf_free(buf);
}

/* Wrapped host memory: the buffer is the caller's memory, and freeing the
 * wrapper leaves it alone (ASan would report a double free otherwise). */
static void test_wrap_host(void **state)
{
    struct fixture *f = *state;
    double a[M * K], b[K * N], c[M * N];
    for (size_t i = 0; i < M * K; i++)
        a[i] = (double)i;
    for (size_t i = 0; i < K * N; i++)
        b[i] = i % (N + 1) == 0 ? 1.0 : 0.0; /* K x N "identity" */
    pb_buf *wa, *wb, *wc;
    assert_int_equal(pb_buf_wrap_host(f->dev, a, sizeof a, &wa), PB_OK);
    assert_int_equal(pb_buf_wrap_host(f->dev, b, sizeof b, &wb), PB_OK);
    assert_int_equal(pb_buf_wrap_host(f->dev, c, sizeof c, &wc), PB_OK);
    assert_ptr_equal(pb_buf_host_ptr(wa), a);
    assert_int_equal(pb_buf_size(wa), sizeof a);

    struct pb_gemm_args g = f->args;
    g.a = wa, g.b = wb, g.c = wc;
    assert_int_equal(pb_buf_fill_bytes(wc, 0xFF), PB_OK);
    assert_int_equal(pb_gemm(f->dev, "ikj", &g), PB_OK);
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++)
            assert_near(c[i * N + j], j < K ? a[i * K + j] : 0.0, 0); /* A padded with zeros */

    double x = 42.0, y = 0;
    assert_int_equal(pb_buf_write(wc, sizeof(double), &x, sizeof x), PB_OK);
    assert_near(c[1], 42.0, 0);
    c[2] = -3.0;
    assert_int_equal(pb_buf_read(wc, 2 * sizeof(double), &y, sizeof y), PB_OK);
    assert_near(y, -3.0, 0);

    pb_buf_free(wa);
    pb_buf_free(wb);
    pb_buf_free(wc);
    a[0] = b[0] = c[0] = 1.0; /* still ours */

    pb_buf *w = (pb_buf *)&w;
    assert_fails(pb_buf_wrap_host(f->dev, NULL, 8, &w), PB_ERR_INVALID);
    assert_null(w);
}

/* ---- status codes ------------------------------------------------------- */

static void test_status_names(void **state)
{
    (void)state;
    static const struct {
        pb_status st;
        const char *name, *msg;
    } all[] = {
#define PB__ROW(name, value, msg) {PB_##name, #name, msg},
        PB_STATUS_MAP(PB__ROW)
#undef PB__ROW
    };
    assert_true(PB_ARRAY_LEN(all) >= 12);
    for (size_t i = 0; i < PB_ARRAY_LEN(all); i++) {
        assert_string_equal(pb_status_name(all[i].st), all[i].name);
        assert_string_equal(pb_status_message(all[i].st), all[i].msg);
        assert_true(all[i].msg[0] != '\0');
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(all[i].st, all[j].st);
    }
    assert_int_equal(PB_OK, 0);
    assert_true(PB_ERR_INVALID < 0);
    const pb_status unknown[] = {(pb_status)42, (pb_status)-1000};
    for (size_t i = 0; i < PB_ARRAY_LEN(unknown); i++) {
        assert_string_equal(pb_status_name(unknown[i]), "UNKNOWN");
        assert_true(pb_status_message(unknown[i])[0] != '\0');
    }
}

static void test_version_and_precision(void **state)
{
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", PB_VERSION_MAJOR, PB_VERSION_MINOR, PB_VERSION_PATCH);
    assert_string_equal(pb_version(), want);
    assert_true(pb_git_commit()[0] != '\0');
    assert_string_equal(pb_precision_name(PB_FLOAT), "float");
    assert_string_equal(pb_precision_name(PB_DOUBLE), "double");
    assert_int_equal(pb_precision_size(PB_FLOAT), sizeof(float));
    assert_int_equal(pb_precision_size(PB_DOUBLE), sizeof(double));
}

/* ---- backends and devices ----------------------------------------------- */

static void test_backends(void **state)
{
    (void)state;
    assert_true(pb_backend_count() >= 1);
    assert_null(pb_backend_find("nope"));
    assert_null(pb_backend_find(""));
    assert_null(pb_backend_at(pb_backend_count()));
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        assert_ptr_equal(pb_backend_find(pb_backend_name(b)), b);
        const char *why = NULL;
        bool avail = pb_backend_available(b, &why);
        assert_non_null(why);
        assert_true(avail ? why[0] == '\0' : why[0] != '\0');
        assert_true(avail ? pb_backend_device_count(b) >= 1 : pb_backend_device_count(b) == 0);
        /* Variant listing: the total, whatever fits. */
        struct pb_variant_desc one[1];
        size_t total = pb_kernel_variants(b, NULL, NULL, 0);
        assert_int_equal(pb_kernel_variants(b, NULL, one, 1), total);
        assert_true(pb_kernel_variants(b, "gemm", NULL, 0) <= total);
        assert_int_equal(pb_kernel_variants(b, "no-such-bench", NULL, 0), 0);
    }
    const char *why = NULL;
    assert_true(pb_backend_available(pb_backend_find("ref"), &why));
    /* A backend PB_REQUIRE names must be in this build (a backend left out
     * at configure time is otherwise invisible to every other test). */
    static const char *const kinds[] = {"ref", "openmp", "cuda", "opencl"};
    for (size_t i = 0; i < PB_ARRAY_LEN(kinds); i++)
        if (pb_test_required(kinds[i]) && !pb_backend_find(kinds[i])) {
            print_message("FAIL: %s is required (PB_REQUIRE) but not in this build\n", kinds[i]);
            fail();
        }
}

static void test_devices(void **state)
{
    (void)state;
    const pb_backend *ref = pb_backend_find("ref");
    pb_device *dev = (pb_device *)&dev;
    assert_fails(pb_device_open(ref, pb_backend_device_count(ref), &dev), PB_ERR_NOT_FOUND);
    assert_null(dev);
    assert_fails(pb_device_open(ref, -1, &dev), PB_ERR_NOT_FOUND);

    assert_int_equal(pb_device_open(ref, 0, &dev), PB_OK);
    assert_ptr_equal(pb_device_backend(dev), ref);
    assert_true(pb_device_name(dev)[0] != '\0');
    assert_int_equal(pb_device_threads(dev), 1); /* serial */
    pb_device_set_threads(dev, 4);
    assert_int_equal(pb_device_threads(dev), 1);
    assert_int_equal(pb_device_sync(dev), PB_OK);
    struct pb_device_info info;
    assert_int_equal(pb_device_info(dev, &info), PB_OK);
    assert_true(info.name[0] != '\0');
    assert_true(info.n_props >= 0 && info.n_props <= PB_INFO_MAX_PROPS);
    pb_device_close(dev);
}

/* A threaded backend takes a thread count; n <= 0 restores its default. */
static void test_threads(void **state)
{
    (void)state;
    size_t threaded = 0;
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        int def = pb_device_threads(dev);
        pb_device_set_threads(dev, 3);
        if (pb_device_threads(dev) == 3) {
            threaded++;
            pb_device_set_threads(dev, 0);
            assert_int_equal(pb_device_threads(dev), def);
            pb_device_set_threads(dev, 5);
            pb_device_set_threads(dev, -1);
            assert_int_equal(pb_device_threads(dev), def);
            pb_device_set_threads(dev, 1 << 30); /* more than any machine may create */
            assert_int_equal(pb_device_threads(dev), PB_MAX_THREADS);
        } else {
            assert_int_equal(pb_device_threads(dev), def); /* ignored, not half-applied */
        }
        pb_device_close(dev);
    }
    /* The OpenMP backend, when built, is the threaded one: the test checked something. */
    assert_true(threaded >= (pb_backend_find("openmp") ? 1u : 0u));
}

/* A NULL handle or a buffer of another device is the caller's mistake: a
 * status and a message, never a crash. */
static void test_misuse(void **state)
{
    struct fixture *f = *state;
    pb_device *dev = NULL;
    pb_buf *buf = NULL;
    double x = 0, seconds = 0;
    assert_null(pb_backend_find(NULL));
    assert_fails(pb_device_open(NULL, 0, &dev), PB_ERR_INVALID);
    assert_fails(pb_device_open(pb_backend_find("ref"), 0, NULL), PB_ERR_INVALID);
    assert_fails(pb_buf_alloc(NULL, PB_MEM_DEVICE, 8, &buf), PB_ERR_INVALID);
    assert_fails(pb_buf_alloc(f->dev, PB_MEM_DEVICE, 8, NULL), PB_ERR_INVALID);
    assert_fails(pb_buf_alloc(f->dev, (enum pb_mem)7, 8, &buf), PB_ERR_INVALID);
    assert_fails(pb_buf_write(f->a, 0, NULL, 8), PB_ERR_INVALID);
    assert_fails(pb_buf_read(f->a, 0, NULL, 8), PB_ERR_INVALID);
    assert_fails(pb_buf_write(NULL, 0, &x, 8), PB_ERR_INVALID);
    assert_int_equal(pb_buf_size(NULL), 0);
    assert_fails(pb_gemm(NULL, NULL, &f->args), PB_ERR_INVALID);
    assert_fails(pb_kernel_run(f->dev, NULL, NULL, &f->args), PB_ERR_INVALID);
    const char *variant = NULL;
    assert_fails(pb_kernel_default(f->dev, "gemm", &f->args, NULL), PB_ERR_INVALID);
    assert_int_equal(pb_kernel_default(f->dev, "gemm", &f->args, &variant), PB_OK);
    enum pb_sparse_format format;
    assert_int_equal(pb_spmv_format(pb_backend_find("ref"), NULL, &format), PB_OK); /* the default's */
    assert_fails(pb_stream_create(f->dev, NULL), PB_ERR_INVALID);

    /* the host timer: both ends, in order */
    pb_timer *t = NULL;
    assert_int_equal(pb_timer_create(f->dev, &t), PB_OK);
    assert_fails(pb_timer_elapsed(t, &seconds), PB_ERR_INVALID);
    assert_fails(pb_timer_stop(t, NULL), PB_ERR_INVALID);
    assert_int_equal(pb_timer_start(t, NULL), PB_OK);
    assert_fails(pb_timer_elapsed(t, &seconds), PB_ERR_INVALID);
    assert_int_equal(pb_timer_stop(t, NULL), PB_OK);
    assert_int_equal(pb_timer_elapsed(t, &seconds), PB_OK);
    assert_true(seconds >= 0);
    assert_fails(pb_timer_elapsed(t, NULL), PB_ERR_INVALID);
    pb_timer_destroy(t);

    /* OpenCL's buffers (a context per handle) and ref's host memory, crossed */
    const pb_backend *cl = pb_backend_find("opencl");
    pb_device *cl_dev = cl ? open_usable(cl) : NULL, *cl_other = cl_dev ? open_usable(cl) : NULL;
    if (!cl_dev)
        return;
    pb_buf *cl_a = alloc_buf(cl_dev, M * K * sizeof(double));
    struct pb_gemm_args g = f->args;
    g.a = cl_a;
    assert_fails(pb_gemm(f->dev, NULL, &g), PB_ERR_INVALID);
    assert_non_null(strstr(pb_last_error(), "another device"));
    assert_fails(pb_gemm(cl_other, NULL, &g), PB_ERR_INVALID); /* the same device, another handle */
    g = f->args;
    assert_fails(pb_gemm(cl_dev, NULL, &g), PB_ERR_INVALID);
    pb_buf_free(cl_a);
    pb_device_close(cl_other);
    pb_device_close(cl_dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_args_run),
        cmocka_unit_test(test_unknown_variant_or_bench),
        cmocka_unit_test(test_bad_args_every_variant),
        cmocka_unit_test(test_exact_span_accepted),
        cmocka_unit_test(test_buffer_ranges),
        cmocka_unit_test(test_free_null),
        cmocka_unit_test(test_stream_wait),
        cmocka_unit_test(test_write_read_fill),
        cmocka_unit_test(test_wrap_host),
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_version_and_precision),
        cmocka_unit_test(test_backends),
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_misuse),
    };
    return pb_test_run(tests, setup, teardown);
}

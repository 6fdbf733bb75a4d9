/* The public API's error paths and small contracts: argument checking before
 * any variant runs, buffers, status names, backends and devices. */
#include "test_util.h"

#include <pthread.h>

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

/* ---- stale caches: what a variant derives from an input is rebuilt when the input changes ---- */

enum { TRI_N = 200 };

/* y = A x with A tridiagonal (TRI_N rows, double), on one device; ones and
 * ramp are the two sets of values the tests switch between. */
struct tri {
    int32_t ptr[TRI_N + 1], idx[3 * TRI_N];
    double ones[3 * TRI_N], ramp[3 * TRI_N], x[TRI_N];
    int nnz;
    pb_buf *ptr_b, *idx_b, *val_b, *ramp_b, *x_b, *y_b;
    struct pb_spmv_args args;
};

static void tri_make(pb_device *dev, struct tri *t)
{
    t->nnz = 0;
    for (int i = 0; i < TRI_N; i++) {
        t->ptr[i] = t->nnz;
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < TRI_N) {
                t->idx[t->nnz] = j, t->ones[t->nnz] = 1, t->ramp[t->nnz] = j - i + 2;
                t->nnz++;
            }
        t->x[i] = 1 + i % 3;
    }
    t->ptr[TRI_N] = t->nnz;
    size_t vals = (size_t)t->nnz * sizeof(double);
    t->ptr_b = alloc_buf(dev, sizeof t->ptr), t->idx_b = alloc_buf(dev, (size_t)t->nnz * sizeof(int32_t));
    t->val_b = alloc_buf(dev, vals), t->ramp_b = alloc_buf(dev, vals);
    t->x_b = alloc_buf(dev, sizeof t->x), t->y_b = alloc_buf(dev, sizeof t->x);
    assert_int_equal(pb_buf_write(t->ptr_b, 0, t->ptr, sizeof t->ptr), PB_OK);
    assert_int_equal(pb_buf_write(t->idx_b, 0, t->idx, (size_t)t->nnz * sizeof(int32_t)), PB_OK);
    assert_int_equal(pb_buf_write(t->val_b, 0, t->ones, vals), PB_OK);
    assert_int_equal(pb_buf_write(t->ramp_b, 0, t->ramp, vals), PB_OK);
    assert_int_equal(pb_buf_write(t->x_b, 0, t->x, sizeof t->x), PB_OK);
    t->args = (struct pb_spmv_args){.prec = PB_DOUBLE, .format = PB_SPARSE_CSR, .rows = TRI_N, .cols = TRI_N,
                                    .nnz = t->nnz, .ptr = t->ptr_b, .idx = t->idx_b, .val = t->val_b, .x = t->x_b,
                                    .y = t->y_b};
}

static void tri_free(struct tri *t)
{
    pb_buf *bufs[] = {t->ptr_b, t->idx_b, t->val_b, t->ramp_b, t->x_b, t->y_b};
    for (size_t i = 0; i < PB_ARRAY_LEN(bufs); i++)
        pb_buf_free(bufs[i]);
}

/* y holds the product with values `val` (after `what`). */
static void tri_expect(const struct tri *t, const double *val, const char *where, const char *what)
{
    double y[TRI_N];
    assert_int_equal(pb_buf_read(t->y_b, 0, y, sizeof y), PB_OK);
    for (int i = 0; i < TRI_N; i++) {
        double want = 0;
        for (int q = t->ptr[i]; q < t->ptr[i + 1]; q++)
            want += val[q] * t->x[t->idx[q]];
        if (y[i] != want) {
            print_message("%s after %s: y[%d] = %g, want %g (an old copy of the matrix was used)\n", where, what, i,
                          y[i], want);
            fail();
        }
    }
}

/* Every CSR spmv variant of every usable backend (auto, dia and librsb keep
 * copies of the matrix) computes with the values as they are now, however
 * they changed: a kernel writing the buffer, a write through a pointer from
 * pb_buf_host_ptr, or one through a pointer kept from before and
 * pb_buf_modified. */
/* A matrix in host memory whose column indices or row offsets would send a
 * kernel outside x or the arrays is refused by every host variant, and
 * accepted again once repaired. */
static void test_spmv_contents(void **state)
{
    (void)state;
    const char *names[] = {"ref", "openmp"};
    for (size_t bi = 0; bi < PB_ARRAY_LEN(names); bi++) {
        const pb_backend *b = pb_backend_find(names[bi]);
        pb_device *dev = b ? open_usable(b) : NULL;
        if (!dev)
            continue;
        struct tri t;
        tri_make(dev, &t);
        assert_int_equal(pb_spmv(dev, NULL, &t.args), PB_OK);
        int32_t bad = TRI_N; /* one past the last column */
        assert_int_equal(pb_buf_write(t.idx_b, 4 * sizeof bad, &bad, sizeof bad), PB_OK);
        assert_fails(pb_spmv(dev, NULL, &t.args), PB_ERR_INVALID);
        assert_non_null(strstr(pb_last_error(), "column"));
        assert_int_equal(pb_buf_write(t.idx_b, 0, t.idx, (size_t)t.nnz * sizeof(int32_t)), PB_OK);
        assert_int_equal(pb_spmv(dev, NULL, &t.args), PB_OK);
        int32_t down = 0; /* row 3 starting before row 2 */
        assert_int_equal(pb_buf_write(t.ptr_b, 3 * sizeof down, &down, sizeof down), PB_OK);
        assert_fails(pb_spmv(dev, NULL, &t.args), PB_ERR_INVALID);
        assert_non_null(strstr(pb_last_error(), "row offset"));
        tri_free(&t);
        pb_device_close(dev);
    }
}

static void test_stale_spmv(void **state)
{
    (void)state;
    size_t ran = 0;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        struct pb_variant_desc v[48];
        size_t nv = pb_kernel_variants(b, "spmv", v, PB_ARRAY_LEN(v));
        for (size_t vi = 0; vi < nv && vi < PB_ARRAY_LEN(v); vi++) {
            enum pb_sparse_format format;
            assert_int_equal(pb_spmv_format(b, v[vi].name, &format), PB_OK);
            if (format != PB_SPARSE_CSR)
                continue;
            char where[96];
            snprintf(where, sizeof where, "%s/%s", pb_backend_name(b), v[vi].name);
            struct tri t;
            tri_make(dev, &t);
            pb_status st = pb_spmv(dev, v[vi].name, &t.args);
            if (st == PB_ERR_UNSUPPORTED) {
                tri_free(&t);
                continue;
            }
            assert_int_equal(st, PB_OK);
            tri_expect(&t, t.ones, where, "the first run");
            /* a kernel rewrites the values: a 1 x nnz transpose is a copy */
            struct pb_transpose_args copy = {.prec = PB_DOUBLE, .rows = 1, .cols = (size_t)t.nnz, .in = t.ramp_b,
                                             .ld_in = (size_t)t.nnz, .out = t.val_b, .ld_out = 1};
            assert_int_equal(pb_transpose(dev, NULL, &copy), PB_OK);
            assert_int_equal(pb_spmv(dev, v[vi].name, &t.args), PB_OK);
            tri_expect(&t, t.ramp, where, "a kernel's write");
            double *host = pb_buf_host_ptr(t.val_b);
            if (host) {
                memcpy(host, t.ones, (size_t)t.nnz * sizeof(double));
                assert_int_equal(pb_spmv(dev, v[vi].name, &t.args), PB_OK);
                tri_expect(&t, t.ones, where, "a write through pb_buf_host_ptr");
                memcpy(host, t.ramp, (size_t)t.nnz * sizeof(double)); /* the pointer kept from before */
                assert_int_equal(pb_buf_modified(t.val_b), PB_OK);
                assert_int_equal(pb_spmv(dev, v[vi].name, &t.args), PB_OK);
                tri_expect(&t, t.ramp, where, "a kept pointer's write and pb_buf_modified");
            }
            ran++;
            tri_free(&t);
        }
        pb_device_close(dev);
    }
    assert_true(ran >= 2);
    assert_fails(pb_buf_modified(NULL), PB_ERR_INVALID);
}

/* conv's taps (OpenCL keeps a host copy): after a kernel rewrote the filter
 * buffer, the next conv uses the new taps, on every usable backend. */
static void test_stale_conv_filter(void **state)
{
    (void)state;
    enum { W = 8, H = 8 };
    float img[W * H], out[W * H], center1[3] = {0, 1, 0}, center2[3] = {0, 2, 0};
    for (int i = 0; i < W * H; i++)
        img[i] = (float)i;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        pb_buf *filter = alloc_buf(dev, sizeof center1), *filter2 = alloc_buf(dev, sizeof center2),
               *in = alloc_buf(dev, sizeof img), *tmp = alloc_buf(dev, sizeof img), *o = alloc_buf(dev, sizeof img);
        assert_int_equal(pb_buf_write(filter, 0, center1, sizeof center1), PB_OK);
        assert_int_equal(pb_buf_write(filter2, 0, center2, sizeof center2), PB_OK);
        assert_int_equal(pb_buf_write(in, 0, img, sizeof img), PB_OK);
        struct pb_conv_args a = {.prec = PB_FLOAT, .width = W, .height = H, .in_rows = H, .radius = 1,
                                 .filter = filter, .in = in, .tmp = tmp, .out = o};
        pb_status st = pb_conv(dev, NULL, &a);
        if (st == PB_OK) {
            struct pb_transpose_args copy = {.prec = PB_FLOAT, .rows = 1, .cols = 3, .in = filter2, .ld_in = 3,
                                             .out = filter, .ld_out = 1};
            assert_int_equal(pb_transpose(dev, NULL, &copy), PB_OK);
            assert_int_equal(pb_conv(dev, NULL, &a), PB_OK);
            assert_int_equal(pb_buf_read(o, 0, out, sizeof out), PB_OK);
            for (int i = 0; i < W * H; i++)
                if (out[i] != 4 * img[i]) { /* both passes scale by 2 */
                    print_message("%s: out[%d] = %g after the taps doubled, want %g\n", pb_backend_name(b), i, out[i],
                                  4 * img[i]);
                    fail();
                }
        } else {
            assert_int_equal(st, PB_ERR_UNSUPPORTED);
        }
        pb_buf *bufs[] = {filter, filter2, in, tmp, o};
        for (size_t i = 0; i < PB_ARRAY_LEN(bufs); i++)
            pb_buf_free(bufs[i]);
        pb_device_close(dev);
    }
}

/* ---- transpose: each variant's own output shape, never in place ------------- */

static void test_transpose_shapes(void **state)
{
    (void)state;
    float in_h[16], out_h[16];
    for (int i = 0; i < 16; i++)
        in_h[i] = (float)i;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        pb_buf *in = alloc_buf(dev, sizeof in_h), *out = alloc_buf(dev, sizeof out_h);
        assert_int_equal(pb_buf_write(in, 0, in_h, sizeof in_h), PB_OK);
        struct pb_variant_desc v[16];
        size_t nv = pb_kernel_variants(b, "transpose", v, PB_ARRAY_LEN(v));
        for (size_t vi = 0; vi < nv && vi < PB_ARRAY_LEN(v); vi++) {
            bool copies = (v[vi].flags & PB_VARIANT_BOUND) != 0;
            /* 2 x 8 with ld_out 8: out (16 elements) fits the copy, not the 8 x 2 transpose with ld 8 */
            struct pb_transpose_args t = {.prec = PB_FLOAT, .rows = 2, .cols = 8, .in = in, .ld_in = 8, .out = out,
                                          .ld_out = 8};
            assert_int_equal(pb_buf_fill_bytes(out, 0), PB_OK);
            pb_status st = pb_transpose(dev, v[vi].name, &t);
            if (copies) {
                assert_int_equal(st, PB_OK);
                assert_int_equal(pb_buf_read(out, 0, out_h, sizeof out_h), PB_OK);
                assert_memory_equal(out_h, in_h, sizeof in_h);
            } else {
                assert_fails(st, PB_ERR_INVALID);
                assert_contains(pb_last_error(), "out needs");
            }
            /* 3 x 2 with ld_out 2: the copy's leading dimension, less than the transpose's 3 */
            t = (struct pb_transpose_args){.prec = PB_FLOAT, .rows = 3, .cols = 2, .in = in, .ld_in = 2, .out = out,
                                           .ld_out = 2};
            st = pb_transpose(dev, v[vi].name, &t);
            if (copies) {
                assert_int_equal(st, PB_OK);
            } else {
                assert_fails(st, PB_ERR_INVALID);
                assert_contains(pb_last_error(), "ld_out");
            }
            /* in place */
            t = (struct pb_transpose_args){.prec = PB_FLOAT, .rows = 4, .cols = 4, .in = in, .ld_in = 4, .out = in,
                                           .ld_out = 4};
            assert_fails(pb_transpose(dev, v[vi].name, &t), PB_ERR_INVALID);
            assert_contains(pb_last_error(), "share memory");
        }
        struct pb_transpose_args t = {.prec = PB_FLOAT, .rows = 2, .cols = 8, .in = in, .ld_in = 8, .out = out,
                                      .ld_out = 8};
        const char *variant = NULL;
        assert_fails(pb_kernel_default(dev, "transpose", &t, &variant), PB_ERR_INVALID);
        /* two wrappers of overlapping host memory */
        float mem[24] = {0};
        pb_buf *lo = NULL, *hi = NULL;
        if (pb_buf_wrap_host(dev, mem, 16 * sizeof(float), &lo) == PB_OK) {
            assert_int_equal(pb_buf_wrap_host(dev, mem + 8, 16 * sizeof(float), &hi), PB_OK);
            t = (struct pb_transpose_args){.prec = PB_FLOAT, .rows = 4, .cols = 4, .in = lo, .ld_in = 4, .out = hi,
                                           .ld_out = 4};
            assert_fails(pb_transpose(dev, NULL, &t), PB_ERR_INVALID);
            t.rows = 2; /* lo's first 8 floats, hi's 2 x 4 transpose = 4 x 2: apart */
            t.ld_out = 2;
            assert_int_equal(pb_transpose(dev, NULL, &t), PB_OK);
            pb_buf_free(lo);
            pb_buf_free(hi);
        }
        pb_buf_free(in);
        pb_buf_free(out);
        pb_device_close(dev);
    }
}

/* ---- conv's argument checks ------------------------------------------------------ */

enum { CW = 8, CH = 8, CR = 1 };

struct conv_fixture {
    pb_buf *filter, *in, *tmp, *out, *small;
};

static void conv_null_filter(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->filter = NULL; }
static void conv_null_in(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->in = NULL; }
static void conv_null_tmp(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->tmp = NULL; }
static void conv_null_out(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->out = NULL; }
static void conv_small_in(struct pb_conv_args *a, struct conv_fixture *c) { a->in = c->small; }
static void conv_small_tmp(struct pb_conv_args *a, struct conv_fixture *c) { a->tmp = c->small; }
static void conv_small_out(struct pb_conv_args *a, struct conv_fixture *c) { a->out = c->small; }
static void conv_small_filter(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->radius = 2; }
static void conv_top_past(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->in_top = 1; }
static void conv_height_past(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->in_rows = CH - 1; }
static void conv_double(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->prec = PB_DOUBLE; }
static void conv_fp16(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->prec = PB_FP16; }
static void conv_radius0(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->radius = 0; }
static void conv_radius_huge(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->radius = SIZE_MAX / 2; }
static void conv_border(struct pb_conv_args *a, struct conv_fixture *c) { (void)c, a->border = (enum pb_conv_border)7; }
static void conv_overflow(struct pb_conv_args *a, struct conv_fixture *c)
{
    (void)c, a->width = (size_t)1 << 62, a->height = a->in_rows = 4;
}

static const struct {
    const char *what;
    void (*apply)(struct pb_conv_args *a, struct conv_fixture *c);
    pb_status want;
} conv_bad[] = {
    {"filter NULL", conv_null_filter, PB_ERR_INVALID},
    {"in NULL", conv_null_in, PB_ERR_INVALID},
    {"tmp NULL", conv_null_tmp, PB_ERR_INVALID},
    {"out NULL", conv_null_out, PB_ERR_INVALID},
    {"in too small", conv_small_in, PB_ERR_INVALID},
    {"tmp too small", conv_small_tmp, PB_ERR_INVALID},
    {"out too small", conv_small_out, PB_ERR_INVALID},
    {"filter smaller than 2R+1 taps", conv_small_filter, PB_ERR_INVALID},
    {"in_top + height past in_rows", conv_top_past, PB_ERR_INVALID},
    {"height more than in_rows", conv_height_past, PB_ERR_INVALID},
    {"double elements in float-sized buffers", conv_double, PB_ERR_INVALID},
    {"fp16", conv_fp16, PB_ERR_INVALID},
    {"radius 0", conv_radius0, PB_ERR_INVALID},
    {"radius past any filter", conv_radius_huge, PB_ERR_INVALID},
    {"unknown border", conv_border, PB_ERR_INVALID},
    {"width x height overflows", conv_overflow, PB_ERR_OVERFLOW},
};

/* Every misuse is refused before a variant runs, on every conv variant of
 * every usable backend, and out is left as it was. */
static void test_conv_args(void **state)
{
    (void)state;
    const size_t image = CW * CH * sizeof(float);
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        struct conv_fixture c = {alloc_buf(dev, (2 * CR + 1) * sizeof(float)), alloc_buf(dev, image),
                                 alloc_buf(dev, image), alloc_buf(dev, image), alloc_buf(dev, image - 4)};
        assert_int_equal(pb_buf_fill_bytes(c.filter, 0), PB_OK);
        assert_int_equal(pb_buf_fill_bytes(c.in, 0), PB_OK);
        struct pb_conv_args valid = {.prec = PB_FLOAT, .width = CW, .height = CH, .in_rows = CH, .radius = CR,
                                     .filter = c.filter, .in = c.in, .tmp = c.tmp, .out = c.out};
        struct pb_variant_desc v[16];
        size_t nv = pb_kernel_variants(b, "conv", v, PB_ARRAY_LEN(v));
        for (size_t vi = 0; vi < nv && vi < PB_ARRAY_LEN(v); vi++) {
            pb_status st = pb_conv(dev, v[vi].name, &valid);
            assert_true(st == PB_OK || st == PB_ERR_UNSUPPORTED);
            for (size_t i = 0; i < PB_ARRAY_LEN(conv_bad); i++) {
                struct pb_conv_args a = valid;
                conv_bad[i].apply(&a, &c);
                assert_int_equal(pb_buf_fill_bytes(c.out, 0x7F), PB_OK);
                st = pb_conv(dev, v[vi].name, &a);
                if (st != conv_bad[i].want)
                    print_message("%s/%s, %s\n", pb_backend_name(b), v[vi].name, conv_bad[i].what);
                assert_fails(st, conv_bad[i].want);
                unsigned char after[CW * CH * sizeof(float)], want[sizeof after];
                memset(want, 0x7F, sizeof want);
                assert_int_equal(pb_buf_read(c.out, 0, after, sizeof after), PB_OK);
                assert_memory_equal(after, want, sizeof after);
            }
        }
        /* a strip with halo rows: in_top 1 of in_rows CH, height CH - 2 */
        struct pb_conv_args strip = valid;
        strip.in_top = 1, strip.height = CH - 2;
        assert_int_equal(pb_conv(dev, NULL, &strip), PB_OK);
        pb_buf *bufs[] = {c.filter, c.in, c.tmp, c.out, c.small};
        for (size_t i = 0; i < PB_ARRAY_LEN(bufs); i++)
            pb_buf_free(bufs[i]);
        pb_device_close(dev);
    }
}

/* ---- empty problems: nothing read, NULL for what holds nothing ----------------- */

static void test_empty_problems(void **state)
{
    (void)state;
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const pb_backend *b = pb_backend_at(bi);
        pb_device *dev = open_usable(b);
        if (!dev)
            continue;
        const char *name = pb_backend_name(b);
        float c_h[12], y_h[4];
        pb_buf *c = alloc_buf(dev, sizeof c_h), *y = alloc_buf(dev, sizeof y_h), *ptr = alloc_buf(dev, 5 * 4);
        assert_int_equal(pb_buf_fill_bytes(ptr, 0), PB_OK);

        /* gemm k = 0: C = beta * C (ldc 4 > n 3: the pad stays), A and B NULL */
        for (int i = 0; i < 12; i++)
            c_h[i] = (float)i;
        assert_int_equal(pb_buf_write(c, 0, c_h, sizeof c_h), PB_OK);
        struct pb_gemm_args g = {.prec = PB_FLOAT, .m = 3, .n = 3, .k = 0, .alpha = 1, .beta = 2, .lda = 0, .ldb = 3,
                                 .c = c, .ldc = 4};
        assert_int_equal(pb_gemm(dev, NULL, &g), PB_OK);
        assert_int_equal(pb_buf_read(c, 0, c_h, sizeof c_h), PB_OK);
        for (int i = 0; i < 12; i++)
            assert_true(c_h[i] == (i % 4 == 3 ? i : 2.0f * i));
        assert_int_equal(pb_buf_fill_bytes(c, 0xFF), PB_OK); /* NaN: beta 0 does not read C */
        g.beta = 0;
        assert_int_equal(pb_gemm(dev, NULL, &g), PB_OK);
        assert_int_equal(pb_buf_read(c, 0, c_h, sizeof c_h), PB_OK);
        for (int i = 0; i < 12; i++)
            assert_true(i % 4 == 3 ? isnan(c_h[i]) : c_h[i] == 0);
        g.c = NULL; /* C is written: needed */
        assert_fails(pb_gemm(dev, NULL, &g), PB_ERR_INVALID);
        g = (struct pb_gemm_args){.prec = PB_FLOAT, .m = 0, .n = 4, .k = 4, .alpha = 1, .lda = 4, .ldb = 4, .ldc = 4};
        assert_int_equal(pb_gemm(dev, NULL, &g), PB_OK);
        g.m = 4, g.n = 0;
        assert_int_equal(pb_gemm(dev, NULL, &g), PB_OK);

        /* spmv without entries or without columns: y = 0 */
        struct pb_spmv_args s = {.prec = PB_FLOAT, .rows = 4, .cols = 4, .nnz = 0, .ptr = ptr, .x = y, .y = y};
        assert_int_equal(pb_buf_fill_bytes(y, 0xFF), PB_OK);
        assert_int_equal(pb_spmv(dev, NULL, &s), PB_OK);
        assert_int_equal(pb_buf_read(y, 0, y_h, sizeof y_h), PB_OK);
        for (int i = 0; i < 4; i++)
            assert_true(y_h[i] == 0);
        s.cols = 0, s.x = NULL;
        assert_int_equal(pb_buf_fill_bytes(y, 0xFF), PB_OK);
        assert_int_equal(pb_spmv(dev, NULL, &s), PB_OK);
        assert_int_equal(pb_buf_read(y, 0, y_h, sizeof y_h), PB_OK);
        assert_true(y_h[3] == 0);
        s.y = NULL;
        assert_fails(pb_spmv(dev, NULL, &s), PB_ERR_INVALID);
        s = (struct pb_spmv_args){.prec = PB_FLOAT, .rows = 0, .cols = 0, .nnz = 0, .ptr = ptr};
        assert_int_equal(pb_spmv(dev, NULL, &s), PB_OK);

        /* transpose 0 x 5, every buffer NULL */
        struct pb_transpose_args t = {.prec = PB_FLOAT, .rows = 0, .cols = 5, .ld_in = 5, .ld_out = 5};
        assert_int_equal(pb_transpose(dev, NULL, &t), PB_OK);

        /* reduce of nothing: 0, in NULL; out still needed */
        struct pb_reduce_args r = {.type = PB_REDUCE_FLOAT, .n = 0, .out = y};
        size_t ws = 0;
        assert_int_equal(pb_kernel_workspace(dev, "reduce", NULL, &r, &ws), PB_OK);
        pb_buf *work = ws ? alloc_buf(dev, ws) : NULL;
        if (work)
            assert_int_equal(pb_buf_fill_bytes(work, 0), PB_OK);
        r.work = work, r.work_bytes = ws;
        assert_int_equal(pb_buf_fill_bytes(y, 0xFF), PB_OK);
        assert_int_equal(pb_reduce(dev, NULL, &r), PB_OK);
        assert_int_equal(pb_buf_read(y, 0, y_h, sizeof y_h), PB_OK);
        if (y_h[0] != 0)
            print_message("%s: reduce of nothing gave %g\n", name, y_h[0]);
        assert_true(y_h[0] == 0);
        r.out = NULL;
        assert_fails(pb_reduce(dev, NULL, &r), PB_ERR_INVALID);

        /* conv of an empty image, every buffer NULL */
        struct pb_conv_args cv = {.prec = PB_FLOAT, .width = 8, .height = 0, .in_rows = 0, .radius = 1};
        assert_int_equal(pb_conv(dev, NULL, &cv), PB_OK);

        pb_buf_free(work);
        pb_buf_free(c);
        pb_buf_free(y);
        pb_buf_free(ptr);
        pb_device_close(dev);
    }
}

/* ---- NULL handles -------------------------------------------------------------- */

static void test_null_handles(void **state)
{
    struct fixture *f = *state;
    struct pb_device_info info;
    const char *why = NULL;
    assert_fails(pb_device_sync(NULL), PB_ERR_INVALID);
    assert_fails(pb_device_info(NULL, &info), PB_ERR_INVALID);
    assert_fails(pb_device_info(f->dev, NULL), PB_ERR_INVALID);
    assert_string_equal(pb_backend_name(NULL), "");
    assert_false(pb_backend_available(NULL, &why));
    assert_true(why && why[0] != '\0');
    assert_false(pb_backend_available(NULL, NULL));
    assert_int_equal(pb_backend_device_count(NULL), 0);
    assert_int_equal(pb_kernel_variants(NULL, "gemm", NULL, 0), 0);
    struct pb_variant_desc one;
    assert_int_equal(pb_kernel_variants(NULL, NULL, &one, 1), 0);
    const pb_backend *ref = pb_backend_find("ref");
    assert_int_equal(pb_kernel_variants(ref, "gemm", NULL, 5), pb_kernel_variants(ref, "gemm", &one, 1));
    assert_string_equal(pb_device_name(NULL), "");
    assert_null(pb_device_backend(NULL));
    assert_int_equal(pb_device_threads(NULL), 0);
    assert_false(pb_device_has_event_timers(NULL));
    pb_buf *out = alloc_buf(f->dev, 8);
    struct pb_reduce_args r = {.type = PB_REDUCE_FLOAT, .n = 4, .out = out};
    size_t bytes = 0;
    assert_fails(pb_kernel_workspace(f->dev, "reduce", NULL, &r, NULL), PB_ERR_INVALID);
    assert_fails(pb_kernel_workspace(f->dev, "reduce", NULL, NULL, &bytes), PB_ERR_INVALID);
    assert_fails(pb_kernel_workspace(f->dev, "reduce", "pairwise", NULL, &bytes), PB_ERR_INVALID);
    assert_fails(pb_kernel_workspace(NULL, "reduce", "pairwise", &r, &bytes), PB_ERR_INVALID);
    assert_fails(pb_kernel_workspace(f->dev, NULL, NULL, &r, &bytes), PB_ERR_INVALID);
    struct pb_csr_device csr;
    struct pb_coo coo = {0};
    assert_fails(pb_csr_upload(f->dev, NULL, PB_DOUBLE, &csr), PB_ERR_INVALID);
    assert_fails(pb_csr_upload(NULL, &coo, PB_DOUBLE, &csr), PB_ERR_INVALID);
    assert_fails(pb_csr_upload(f->dev, &coo, PB_DOUBLE, NULL), PB_ERR_INVALID);
    pb_buf_free(out);
}

/* ---- first use from two threads at once ----------------------------------------- */

struct opener {
    const pb_backend *b;
    pthread_barrier_t *start;
    pb_status st;
    char error[256];
};

static void *open_device(void *arg)
{
    struct opener *o = arg;
    pb_device *dev = NULL;
    pthread_barrier_wait(o->start);
    o->st = pb_device_open(o->b, 0, &dev);
    snprintf(o->error, sizeof o->error, "%s", o->st == PB_OK ? "" : pb_last_error());
    pb_device_close(dev);
    return NULL;
}

/* Two threads open device 0 of each CPU backend at once, as the process's
 * first use of the backend (this case runs first: OpenCL's discovery must
 * not have run yet). Both get the same answer: the device, or the same
 * reason it is unavailable. */
static void test_first_open_race(void **state)
{
    (void)state;
    static const char *const cpu[] = {"opencl", "openmp", "ref"};
    for (size_t i = 0; i < PB_ARRAY_LEN(cpu); i++) {
        const pb_backend *b = pb_backend_find(cpu[i]);
        if (!b)
            continue;
        pthread_barrier_t start;
        assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
        struct opener o[2] = {{.b = b, .start = &start}, {.b = b, .start = &start}};
        pthread_t t[2];
        for (int k = 0; k < 2; k++)
            assert_int_equal(pthread_create(&t[k], NULL, open_device, &o[k]), 0);
        for (int k = 0; k < 2; k++)
            assert_int_equal(pthread_join(t[k], NULL), 0);
        pthread_barrier_destroy(&start);
        if (o[0].st != o[1].st || strcmp(o[0].error, o[1].error) != 0)
            print_message("%s: thread 0 got %s '%s', thread 1 %s '%s'\n", cpu[i], pb_status_name(o[0].st),
                          o[0].error, pb_status_name(o[1].st), o[1].error);
        assert_int_equal(o[0].st, o[1].st);
        assert_string_equal(o[0].error, o[1].error);
        size_t len = strlen(o[0].error); /* "backend X: <why>", the why not empty */
        assert_true(o[0].st == PB_OK || (len > 2 && strcmp(o[0].error + len - 2, ": ") != 0));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_open_race), /* first: before any other use of the backends */
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
        cmocka_unit_test(test_null_handles),
        cmocka_unit_test(test_spmv_contents),
        cmocka_unit_test(test_stale_spmv),
        cmocka_unit_test(test_stale_conv_filter),
        cmocka_unit_test(test_transpose_shapes),
        cmocka_unit_test(test_conv_args),
        cmocka_unit_test(test_empty_problems),
    };
    return pb_test_run(tests, setup, teardown);
}

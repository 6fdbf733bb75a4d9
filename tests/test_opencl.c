/* The OpenCL backend beyond what the cross-backend tests cover: device
 * properties, every memory kind copied to every other with and without a
 * stream, fills, size limits, the ordering of streams against the default
 * queue, profiling timers, the one-row kernel's k chunks, work-group and
 * memory limits reported as UNSUPPORTED, and PARBENCH_CL_DIR (build logs,
 * missing files). Every test skips when no OpenCL device is available (a
 * failure where PB_REQUIRE names opencl). */
#include <float.h>
#include <sys/stat.h>

#include "test_util.h"

#include "backends/opencl/cl_impl.h"
#include "parbench/pb_kernels.h"

/* Opens opencl device 0, or skips the test. */
static pb_device *open_device(void)
{
    const pb_backend *b = pb_backend_find("opencl");
    assert_non_null(b);
    if (!pb_test_backend_usable(b))
        skip();
    pb_device *dev = NULL;
    assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
    return dev;
}

static const char *prop(const struct pb_device_info *info, const char *key)
{
    for (int i = 0; i < info->n_props; i++)
        if (strcmp(info->props[i].key, key) == 0)
            return info->props[i].value;
    return NULL;
}

/* The default order on fake device lists: GPUs and accelerators first, CPUs
 * next, anything else last, each group in discovery order. Needs no device. */
static void test_device_order(void **state)
{
    (void)state;
    const cl_device_type g = CL_DEVICE_TYPE_GPU, c = CL_DEVICE_TYPE_CPU, a = CL_DEVICE_TYPE_ACCELERATOR,
                         other = CL_DEVICE_TYPE_CUSTOM;
    struct {
        cl_device_type types[6];
        int n, want[6];
    } cases[] = {
        {{c, g}, 2, {1, 0}},                          /* PoCL listed before NVIDIA */
        {{g, c}, 2, {0, 1}},                          /* already in order */
        {{c, g, c, a, g, other}, 6, {1, 3, 4, 0, 2, 5}},
        {{c, c, c}, 3, {0, 1, 2}},                    /* CPUs only: stable */
        {{other, c | CL_DEVICE_TYPE_DEFAULT, g | CL_DEVICE_TYPE_DEFAULT}, 3, {2, 1, 0}},
        {{0, g}, 2, {1, 0}},                          /* a type that could not be read goes last */
        {{c}, 1, {0}},
    };
    for (size_t i = 0; i < PB_ARRAY_LEN(cases); i++) {
        int order[6] = {-1, -1, -1, -1, -1, -1};
        pb__cl_order_devices(cases[i].types, cases[i].n, order);
        for (int k = 0; k < cases[i].n; k++) {
            if (order[k] != cases[i].want[k])
                print_message("case %zu: position %d holds device %d, want %d\n", i, k, order[k], cases[i].want[k]);
            assert_int_equal(order[k], cases[i].want[k]);
        }
    }
}

/* The devices of this machine come in that order, and --device NAME matches
 * a device's name or its platform's vendor. */
static void test_devices_in_order(void **state)
{
    (void)state;
    const pb_backend *b = pb_backend_find("opencl");
    assert_non_null(b);
    if (!pb_test_backend_usable(b))
        skip();
    int n = pb_backend_device_count(b), last_rank = 0;
    for (int i = 0; i < n; i++) {
        pb_device *dev;
        struct pb_device_info info;
        assert_int_equal(pb_device_open(b, i, &dev), PB_OK);
        assert_int_equal(pb_device_info(dev, &info), PB_OK);
        int rank = strcmp(info.kind, "gpu") == 0 || strcmp(info.kind, "accelerator") == 0 ? 0
                   : strcmp(info.kind, "cpu") == 0                                      ? 1
                                                                                        : 2;
        assert_true(rank >= last_rank);
        last_rank = rank;
        /* the platform vendor is matched too (PoCL's names do not say pocl) */
        assert_true(pb__device_matches(dev, info.name));
        const char *vendor = NULL;
        for (int p = 0; p < info.n_props; p++)
            if (strcmp(info.props[p].key, "platform_vendor") == 0)
                vendor = info.props[p].value;
        assert_non_null(vendor);
        if (vendor[0])
            assert_true(pb__device_matches(dev, vendor));
        assert_false(pb__device_matches(dev, "no such device anywhere"));
        pb_device_close(dev);
    }
}

static void test_device_info(void **state)
{
    (void)state;
    pb_device *dev = open_device();
    /* "device name (platform name)" */
    assert_non_null(strstr(pb_device_name(dev), " ("));
    assert_int_equal(pb_device_threads(dev), 0);
    assert_true(pb_device_has_event_timers(dev));
    struct pb_device_info info;
    assert_int_equal(pb_device_info(dev, &info), PB_OK);
    assert_string_equal(info.name, pb_device_name(dev));
    static const char *const keys[] = {
        "platform", "platform_vendor", "platform_version", "device", "device_type", "device_vendor",
        "driver_version", "opencl_c_version", "compute_units", "max_clock", "global_memory", "max_alloc",
        "local_memory", "max_work_group_size", "max_work_item_sizes", "preferred_vector_widths",
        "double_precision", "profiling_timer_resolution"};
    for (size_t i = 0; i < PB_ARRAY_LEN(keys); i++) {
        const char *v = prop(&info, keys[i]);
        if (!v)
            print_message("missing property %s\n", keys[i]);
        assert_non_null(v);
    }
    assert_contains(prop(&info, "opencl_c_version"), "OpenCL C");
    pb_device_close(dev);
}

/* ---- memory ---------------------------------------------------------------- */

static const enum pb_mem kinds[] = {PB_MEM_DEVICE, PB_MEM_PINNED, PB_MEM_PAGEABLE};
static const char *const kind_names[] = {"device", "pinned", "pageable"};

static void pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31u + seed * 7u + (i >> 8));
}

/* Every kind to every kind, blocking and on a stream, at offsets: the bytes
 * outside the copied range stay as filled. */
static void test_copy_every_kind(void **state)
{
    (void)state;
    pb_device *dev = open_device();
    enum { SIZE = 1 << 20, OFF_SRC = 100, OFF_DST = 333, LEN = SIZE - 1000 };
    unsigned char *src = malloc(SIZE), *got = malloc(SIZE), *want = malloc(SIZE);
    assert_non_null(src);
    assert_non_null(got);
    assert_non_null(want);
    pb_stream *s = NULL;
    assert_int_equal(pb_stream_create(dev, &s), PB_OK);
    for (size_t i = 0; i < PB_ARRAY_LEN(kinds); i++)
        for (size_t j = 0; j < PB_ARRAY_LEN(kinds); j++)
            for (int async = 0; async < 2; async++) {
                pb_buf *a = NULL, *b = NULL;
                assert_int_equal(pb_buf_alloc(dev, kinds[i], SIZE, &a), PB_OK);
                assert_int_equal(pb_buf_alloc(dev, kinds[j], SIZE, &b), PB_OK);
                assert_true((pb_buf_host_ptr(a) == NULL) == (kinds[i] == PB_MEM_DEVICE));
                pattern(src, SIZE, (unsigned)(i * 3 + j));
                assert_int_equal(pb_buf_write(a, 0, src, SIZE), PB_OK);
                assert_int_equal(pb_buf_fill_bytes(b, 0xA5), PB_OK);
                assert_int_equal(pb_buf_copy(b, OFF_DST, a, OFF_SRC, LEN, async ? s : NULL), PB_OK);
                if (async)
                    assert_int_equal(pb_stream_sync(s), PB_OK);
                assert_int_equal(pb_buf_read(b, 0, got, SIZE), PB_OK);
                memset(want, 0xA5, SIZE);
                memcpy(want + OFF_DST, src + OFF_SRC, LEN);
                if (memcmp(got, want, SIZE) != 0)
                    print_message("copy %s -> %s (%s) differs\n", kind_names[i], kind_names[j],
                                  async ? "stream" : "blocking");
                assert_memory_equal(got, want, SIZE);
                pb_buf_free(a);
                pb_buf_free(b);
            }
    pb_stream_destroy(s);
    free(src);
    free(got);
    free(want);
    pb_device_close(dev);
}

/* Partial writes and reads at offsets, fills, empty buffers, one buffer to itself. */
static void test_write_read_fill(void **state)
{
    (void)state;
    pb_device *dev = open_device();
    for (size_t i = 0; i < PB_ARRAY_LEN(kinds); i++) {
        pb_buf *buf = NULL, *empty = NULL;
        unsigned char data[256], got[256], want[256];
        assert_int_equal(pb_buf_alloc(dev, kinds[i], sizeof data, &buf), PB_OK);
        assert_int_equal(pb_buf_fill_bytes(buf, 0x11), PB_OK);
        pattern(data, sizeof data, 5);
        assert_int_equal(pb_buf_write(buf, 10, data, 50), PB_OK);
        assert_int_equal(pb_buf_read(buf, 0, got, sizeof got), PB_OK);
        memset(want, 0x11, sizeof want);
        memcpy(want + 10, data, 50);
        assert_memory_equal(got, want, sizeof got);
        assert_int_equal(pb_buf_read(buf, 20, got, 5), PB_OK);
        assert_memory_equal(got, data + 10, 5);
        /* Non-overlapping copy inside one buffer; overlapping is refused
         * on the device (host memory uses memmove). */
        assert_int_equal(pb_buf_copy(buf, 200, buf, 10, 50, NULL), PB_OK);
        assert_int_equal(pb_buf_read(buf, 200, got, 50), PB_OK);
        assert_memory_equal(got, data, 50);
        pb_status st = pb_buf_copy(buf, 20, buf, 10, 50, NULL);
        if (kinds[i] == PB_MEM_DEVICE) {
            assert_int_equal(st, PB_ERR_UNSUPPORTED);
            assert_contains(pb_last_error(), "overlapping");
        } else {
            assert_int_equal(st, PB_OK);
        }
        assert_int_equal(pb_buf_alloc(dev, kinds[i], 0, &empty), PB_OK);
        assert_int_equal(pb_buf_size(empty), 0);
        assert_int_equal(pb_buf_fill_bytes(empty, 0), PB_OK);
        assert_int_equal(pb_buf_write(empty, 0, data, 0), PB_OK);
        assert_int_equal(pb_buf_copy(buf, 0, empty, 0, 0, NULL), PB_OK);
        pb_buf_free(empty);
        pb_buf_free(buf);
    }
    pb_device_close(dev);
}

/* More than the device allows in one buffer: a clear NOMEM, not a driver code. */
static void test_too_large(void **state)
{
    (void)state;
    pb_device *dev = open_device();
    pb_buf *buf = (pb_buf *)&buf;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, SIZE_MAX / 2, &buf), PB_ERR_NOMEM);
    assert_null(buf);
    assert_contains(pb_last_error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_PINNED, SIZE_MAX / 2, &buf), PB_ERR_NOMEM);
    assert_contains(pb_last_error(), "pinned");
    pb_device_close(dev);
}

/* ---- streams and timers ------------------------------------------------------ */

/* A blocking read on the default queue sees what a stream copied before it;
 * a stream copy sees what a kernel on the default queue wrote before it. */
static void test_stream_ordering(void **state)
{
    (void)state;
    pb_device *dev = open_device();
    enum { SIZE = 32 << 20 };
    unsigned char *data = malloc(SIZE), *got = malloc(SIZE);
    assert_non_null(data);
    assert_non_null(got);
    pattern(data, SIZE, 9);
    pb_buf *x = NULL, *y = NULL;
    pb_stream *s = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, SIZE, &x), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, SIZE, &y), PB_OK);
    assert_int_equal(pb_stream_create(dev, &s), PB_OK);
    for (int round = 0; round < 3; round++) {
        assert_int_equal(pb_buf_write(x, 0, data, SIZE), PB_OK);
        assert_int_equal(pb_buf_fill_bytes(y, 0), PB_OK);
        assert_int_equal(pb_buf_copy(y, 0, x, 0, SIZE, s), PB_OK); /* no sync */
        assert_int_equal(pb_buf_read(y, 0, got, SIZE), PB_OK);
        assert_memory_equal(got, data, SIZE);
    }

    /* C = 2 * ones(m x k) * ones(k x n) = 2k everywhere, by a kernel on the
     * default queue, then copied on the stream into pinned memory. */
    enum { M = 300, N = 200, K = 150 };
    float *ones = malloc(sizeof(float) * M * K); /* M*K >= K*N */
    assert_non_null(ones);
    for (size_t i = 0; i < (size_t)M * K; i++)
        ones[i] = 1.0f;
    pb_buf *a = NULL, *b = NULL, *c = NULL, *pinned = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof(float) * M * K, &a), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof(float) * K * N, &b), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof(float) * M * N, &c), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_PINNED, sizeof(float) * M * N, &pinned), PB_OK);
    assert_int_equal(pb_buf_write(a, 0, ones, sizeof(float) * M * K), PB_OK);
    assert_int_equal(pb_buf_write(b, 0, ones, sizeof(float) * K * N), PB_OK);
    assert_int_equal(pb_buf_fill_bytes(pinned, 0), PB_OK);
    struct pb_gemm_args g = {.prec = PB_FLOAT, .m = M, .n = N, .k = K, .alpha = 2, .beta = 0,
                             .a = a, .lda = K, .b = b, .ldb = N, .c = c, .ldc = N};
    assert_int_equal(pb_kernel_launch(dev, "gemm", "naive", &g, NULL), PB_OK);
    assert_int_equal(pb_buf_copy(pinned, 0, c, 0, sizeof(float) * M * N, s), PB_OK);
    assert_int_equal(pb_stream_sync(s), PB_OK);
    const float *out = pb_buf_host_ptr(pinned);
    for (size_t i = 0; i < (size_t)M * N; i++)
        if (out[i] != 2.0f * K) {
            print_message("element %zu is %g, expected %g\n", i, out[i], 2.0 * K);
            fail();
        }
    assert_int_equal(pb_device_sync(dev), PB_OK);
    pb_buf_free(a);
    pb_buf_free(b);
    pb_buf_free(c);
    pb_buf_free(pinned);
    pb_stream_destroy(s);
    pb_buf_free(x);
    pb_buf_free(y);
    free(ones);
    free(data);
    free(got);
    pb_device_close(dev);
}

/* Profiling timers on the default queue around work on streams, and on a
 * stream; stopping on the default queue waits for the streams' work. */
static void test_timers(void **state)
{
    (void)state;
    pb_device *dev = open_device();
    enum { SIZE = 64 << 20 };
    pb_buf *x = NULL, *y = NULL;
    pb_stream *s = NULL;
    pb_timer *t = NULL;
    double seconds = -1;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, SIZE, &x), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, SIZE, &y), PB_OK);
    assert_int_equal(pb_buf_fill_bytes(x, 1), PB_OK);
    assert_int_equal(pb_stream_create(dev, &s), PB_OK);
    assert_int_equal(pb_timer_create(dev, &t), PB_OK);
    assert_int_equal(pb_timer_elapsed(t, &seconds), PB_ERR_INVALID); /* nothing recorded */

    for (int round = 0; round < 3; round++) { /* re-recording releases the old markers */
        assert_int_equal(pb_device_sync(dev), PB_OK);
        assert_int_equal(pb_timer_start(t, NULL), PB_OK);
        for (int i = 0; i < 4; i++)
            assert_int_equal(pb_buf_copy(y, 0, x, 0, SIZE, s), PB_OK);
        assert_int_equal(pb_timer_stop(t, NULL), PB_OK);
        assert_int_equal(pb_timer_elapsed(t, &seconds), PB_OK);
        /* 4 x 64 MiB read and written: more than 50 microseconds on anything. */
        if (!(seconds > 5e-5 && seconds < 60))
            print_message("4 copies of 64 MiB on a stream timed at %g s\n", seconds);
        assert_true(seconds > 5e-5 && seconds < 60);
    }
    assert_int_equal(pb_timer_start(t, s), PB_OK);
    assert_int_equal(pb_buf_copy(y, 0, x, 0, SIZE, s), PB_OK);
    assert_int_equal(pb_timer_stop(t, s), PB_OK);
    assert_int_equal(pb_timer_elapsed(t, &seconds), PB_OK);
    assert_true(seconds > 0 && seconds < 60);
    pb_timer_destroy(t);
    pb_stream_destroy(s);
    pb_buf_free(x);
    pb_buf_free(y);
    pb_device_close(dev);
}

/* ---- gemm specifics ------------------------------------------------------------ */

/* The one-row kernel with k past what local memory holds: the row of A is
 * walked in chunks. Float and double (when the device has it). */
static void test_onerow_chunks(void **state)
{
    (void)state;
    pb_device *dev = open_device();
    struct pb_cl_device *impl = pb__cl(dev);
    for (int pi = 0; pi < 2; pi++) {
        enum pb_precision prec = pi ? PB_DOUBLE : PB_FLOAT;
        if (prec == PB_DOUBLE && !impl->fp64)
            continue;
        size_t elt = pb_precision_size(prec), m = 3, n = 5;
        size_t k = (size_t)(impl->local_mem / elt) * 2 + 1001; /* three chunks at least */
        if (k * n * elt > impl->max_alloc || k * n * elt > (64u << 20)) {
            print_message("note: local memory too large to test chunks cheaply\n");
            continue;
        }
        double *a = malloc(m * k * sizeof(double)), *b = malloc(k * n * sizeof(double));
        void *ha = malloc(m * k * elt), *hb = malloc(k * n * elt), *hc = malloc(m * n * elt);
        assert_true(a && b && ha && hb && hc);
        for (size_t i = 0; i < m * k; i++)
            a[i] = (double)((i * 7919u) % 17) / 16.0 - 0.5; /* exact in float */
        for (size_t i = 0; i < k * n; i++)
            b[i] = (double)((i * 104729u) % 13) / 8.0 - 0.75;
        for (size_t i = 0; i < m * k; i++)
            prec == PB_DOUBLE ? (void)(((double *)ha)[i] = a[i]) : (void)(((float *)ha)[i] = (float)a[i]);
        for (size_t i = 0; i < k * n; i++)
            prec == PB_DOUBLE ? (void)(((double *)hb)[i] = b[i]) : (void)(((float *)hb)[i] = (float)b[i]);
        pb_buf *ba = NULL, *bb = NULL, *bc = NULL;
        assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, m * k * elt, &ba), PB_OK);
        assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, k * n * elt, &bb), PB_OK);
        assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, m * n * elt, &bc), PB_OK);
        assert_int_equal(pb_buf_write(ba, 0, ha, m * k * elt), PB_OK);
        assert_int_equal(pb_buf_write(bb, 0, hb, k * n * elt), PB_OK);
        assert_int_equal(pb_buf_fill_bytes(bc, 0xFF), PB_OK);
        struct pb_gemm_args g = {.prec = prec, .m = m, .n = n, .k = k, .alpha = 1, .beta = 0,
                                 .a = ba, .lda = k, .b = bb, .ldb = n, .c = bc, .ldc = n};
        assert_int_equal(pb_gemm(dev, "onerow", &g), PB_OK);
        assert_int_equal(pb_buf_read(bc, 0, hc, m * n * elt), PB_OK);
        double eps = prec == PB_DOUBLE ? DBL_EPSILON : FLT_EPSILON;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                double ref = 0, mag = 0;
                for (size_t p = 0; p < k; p++) {
                    ref += a[i * k + p] * b[p * n + j];
                    mag += fabs(a[i * k + p] * b[p * n + j]);
                }
                double got = prec == PB_DOUBLE ? ((double *)hc)[i * n + j] : ((float *)hc)[i * n + j];
                assert_near(got, ref, 4 * eps * mag + 1e-12);
            }
        pb_buf_free(ba);
        pb_buf_free(bb);
        pb_buf_free(bc);
        free(a);
        free(b);
        free(ha);
        free(hb);
        free(hc);
    }
    pb_device_close(dev);
}

/* The naive kernel in launch shapes of study 001: any work-group, and a capped
 * number of work-groups that makes each work-item loop over several elements
 * of C (rows and columns not multiples of the shape, C with a padded leading
 * dimension whose padding must stay untouched). Shapes the device cannot take
 * and shapes given to other variants are refused with the reason. */
static void test_naive_shapes(void **state)
{
    (void)state;
    pb_device *dev = open_device();
    enum { SM = 37, SN = 29, SK = 11, LDC = SN + 3 };
    float a[SM * SK], b[SK * SN], c[SM * LDC];
    double ref[SM * SN];
    for (size_t i = 0; i < SM * SK; i++)
        a[i] = (float)((i * 7919u) % 17) / 16.0f - 0.5f; /* products and sums exact in float */
    for (size_t i = 0; i < SK * SN; i++)
        b[i] = (float)((i * 104729u) % 13) / 8.0f - 0.75f;
    for (size_t i = 0; i < SM; i++)
        for (size_t j = 0; j < SN; j++) {
            ref[i * SN + j] = 0;
            for (size_t p = 0; p < SK; p++)
                ref[i * SN + j] += (double)a[i * SK + p] * b[p * SN + j];
        }
    pb_buf *ba = NULL, *bb = NULL, *bc = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof a, &ba), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof b, &bb), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof c, &bc), PB_OK);
    assert_int_equal(pb_buf_write(ba, 0, a, sizeof a), PB_OK);
    assert_int_equal(pb_buf_write(bb, 0, b, sizeof b), PB_OK);
    static const struct {
        unsigned x, y;
        size_t groups;
    } shapes[] = {{0, 0, 0}, {1, 1, 0}, {7, 3, 5}, {32, 8, 1}, {64, 1, 0}, {5, 13, 1000}, {0, 0, 2}, {2, 64, 3}};
    for (size_t si = 0; si < PB_ARRAY_LEN(shapes); si++) {
        struct pb_gemm_args g = {.prec = PB_FLOAT, .m = SM, .n = SN, .k = SK, .alpha = 1, .beta = 0,
                                 .a = ba, .lda = SK, .b = bb, .ldb = SN, .c = bc, .ldc = LDC,
                                 .block_x = shapes[si].x, .block_y = shapes[si].y, .groups = shapes[si].groups};
        assert_int_equal(pb_buf_fill_bytes(bc, 0xFF), PB_OK);
        pb_status st = pb_gemm(dev, "naive", &g);
        if (st != PB_OK)
            print_message("%ux%u groups %zu: %s\n", shapes[si].x, shapes[si].y, shapes[si].groups, pb_last_error());
        assert_int_equal(st, PB_OK);
        assert_int_equal(pb_buf_read(bc, 0, c, sizeof c), PB_OK);
        for (size_t i = 0; i < SM; i++) {
            for (size_t j = 0; j < SN; j++)
                assert_true(c[i * LDC + j] == (float)ref[i * SN + j]);
            for (size_t j = SN; j < LDC; j++)
                assert_true(isnan(c[i * LDC + j])); /* the padding, never written */
        }
    }
    struct pb_gemm_args g = {.prec = PB_FLOAT, .m = SM, .n = SN, .k = SK, .alpha = 1, .beta = 0,
                             .a = ba, .lda = SK, .b = bb, .ldb = SN, .c = bc, .ldc = LDC,
                             .block_x = (unsigned)pb__cl(dev)->max_group + 1, .block_y = 1};
    assert_int_equal(pb_gemm(dev, "naive", &g), PB_ERR_UNSUPPORTED);
    assert_contains(pb_last_error(), "exceeds the device's maximum");
    g.block_x = 8;
    g.block_y = 8;
    assert_int_equal(pb_gemm(dev, "tiled16", &g), PB_ERR_UNSUPPORTED);
    assert_contains(pb_last_error(), "launch shape");
    g.block_y = 0;
    assert_int_equal(pb_gemm(dev, "naive", &g), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "both");
    pb_buf_free(ba);
    pb_buf_free(bb);
    pb_buf_free(bc);
    pb_device_close(dev);
}

/* Limits are reported by supports() as UNSUPPORTED with the reason: operand
 * memory kinds, a work-group larger than the device allows, local memory. */
static void test_limits(void **state)
{
    (void)state;
    pb_device *dev = open_device();
    struct pb_cl_device *impl = pb__cl(dev);
    pb_buf *a = NULL, *b = NULL, *c = NULL, *host = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, 64 * sizeof(float), &a), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, 64 * sizeof(float), &b), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, 64 * sizeof(float), &c), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_PINNED, 64 * sizeof(float), &host), PB_OK);
    assert_int_equal(pb_buf_fill_bytes(a, 0), PB_OK);
    assert_int_equal(pb_buf_fill_bytes(b, 0), PB_OK);
    struct pb_gemm_args g = {.prec = PB_FLOAT, .m = 8, .n = 8, .k = 8, .alpha = 1, .beta = 0,
                             .a = host, .lda = 8, .b = b, .ldb = 8, .c = c, .ldc = 8};
    assert_int_equal(pb_gemm(dev, "naive", &g), PB_ERR_UNSUPPORTED);
    assert_contains(pb_last_error(), "device buffers");
    g.a = a;
    assert_int_equal(pb_gemm(dev, "tiled32", &g), PB_OK);

    /* Pretend the device is smaller. */
    size_t max_group = impl->max_group;
    cl_ulong local_mem = impl->local_mem;
    bool fp64 = impl->fp64;
    impl->max_group = 64;
    assert_int_equal(pb_gemm(dev, "tiled32", &g), PB_ERR_UNSUPPORTED);
    assert_contains(pb_last_error(), "exceeds the device's maximum");
    assert_int_equal(pb_gemm(dev, "tiled16", &g), PB_ERR_UNSUPPORTED);
    assert_int_equal(pb_gemm(dev, "tiled8", &g), PB_OK);
    assert_int_equal(pb_gemm(dev, "onerow", &g), PB_OK); /* its work-group adapts */
    impl->max_group = max_group;
    impl->local_mem = 1024;
    assert_int_equal(pb_gemm(dev, "tiled32", &g), PB_ERR_UNSUPPORTED);
    assert_contains(pb_last_error(), "local memory");
    impl->local_mem = local_mem;
    impl->fp64 = false;
    g.prec = PB_DOUBLE; /* 4 x 4 doubles fit the buffers */
    g.m = g.n = g.k = g.lda = g.ldb = g.ldc = 4;
    assert_int_equal(pb_gemm(dev, "naive", &g), PB_ERR_UNSUPPORTED);
    assert_contains(pb_last_error(), "cl_khr_fp64");
    impl->fp64 = fp64;
    pb_buf_free(a);
    pb_buf_free(b);
    pb_buf_free(c);
    pb_buf_free(host);
    pb_device_close(dev);
}

/* PARBENCH_CL_DIR: a kernel that does not compile is PB_ERR_DEVICE with the
 * build log; a directory without the file is PB_ERR_IO. */
static void test_cl_dir(void **state)
{
    (void)state;
    pb_device *probe = open_device();
    pb_device_close(probe);
    char dir[512], path[600];
    pb_test_tmpfile(dir, sizeof dir, "cldir");
    unlink(dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/gemm.cl", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("__kernel void gemm_naive(__global float *c) { c[0] = no_such_identifier; }\n", f);
    fclose(f);

    const pb_backend *b = pb_backend_find("opencl");
    pb_device *dev = NULL;
    pb_buf *buf = NULL;
    setenv("PARBENCH_CL_DIR", dir, 1);
    assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, 16 * sizeof(float), &buf), PB_OK);
    struct pb_gemm_args g = {.prec = PB_FLOAT, .m = 2, .n = 2, .k = 2, .alpha = 1, .beta = 0,
                             .a = buf, .lda = 2, .b = buf, .ldb = 2, .c = buf, .ldc = 2};
    assert_int_equal(pb_gemm(dev, "naive", &g), PB_ERR_DEVICE);
    assert_contains(pb_last_error(), "building gemm.cl");
    assert_contains(pb_last_error(), "log:");
    assert_contains(pb_last_error(), "no_such_identifier");
    pb_buf_free(buf);
    pb_device_close(dev);

    unlink(path);
    assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, 16 * sizeof(float), &buf), PB_OK);
    g.a = g.b = g.c = buf;
    assert_int_equal(pb_gemm(dev, "naive", &g), PB_ERR_IO);
    assert_contains(pb_last_error(), "PARBENCH_CL_DIR");
    pb_buf_free(buf);
    pb_device_close(dev);
    unsetenv("PARBENCH_CL_DIR");
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_order),    cmocka_unit_test(test_devices_in_order),
        cmocka_unit_test(test_device_info),     cmocka_unit_test(test_copy_every_kind),
        cmocka_unit_test(test_write_read_fill), cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_stream_ordering), cmocka_unit_test(test_timers),
        cmocka_unit_test(test_onerow_chunks),   cmocka_unit_test(test_limits),
        cmocka_unit_test(test_naive_shapes),
        cmocka_unit_test(test_cl_dir),
    };
    return pb_test_run(tests, NULL, NULL);
}

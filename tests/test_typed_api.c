/* The typed entry points (pb_gemm, pb_spmv, pb_conv, pb_transpose,
 * pb_reduce) with their defaults (variant NULL), and a COO matrix to CSR on a
 * device (pb_csr_upload): the default each backend gets, a small exact
 * problem of every family through NULL on every usable backend, and the
 * contracts of pb_csr_upload. */
#include "test_util.h"

#include "parbench/pb_kernels.h"
#include "core/backend_impl.h"

/* ---- which variant NULL runs --------------------------------------------- */

/* The defaults pb_kernels.h documents, per backend. spmv: "auto" where the
 * backend has one, else this. */
static const struct {
    const char *backend, *gemm, *spmv, *conv, *transpose, *reduce;
} expected_defaults[] = {
    {"ref", "ikj", "csr", "rowcol", "loops", "pairwise"},
    {"openmp", "blocked", "csr", "ring", "blocked", "pairwise"},
    {"cuda", "regblock", "csr-vector", "regs", "padded", "last-block"},
    {"opencl", "regblock", "csr-vector", "tiled", "padded", "multiple-per-thread"},
};

static bool has_variant(const pb_backend *b, const char *bench, const char *name)
{
    struct pb_variant_desc d[256];
    size_t n = pb_kernel_variants(b, bench, d, PB_ARRAY_LEN(d));
    assert_true(n <= PB_ARRAY_LEN(d));
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0)
            return !(d[i].flags & (PB_VARIANT_ANCHOR | PB_VARIANT_BOUND));
    return false;
}

static void check_default(pb_device *dev, const char *bench, const char *want)
{
    const char *got = NULL;
    pb_status st = pb_kernel_default(dev, bench, NULL, &got);
    if (st != PB_OK || !got || strcmp(got, want) != 0)
        print_message("%s default of %s: got %s (%s), expected %s\n", pb_backend_name(dev->backend), bench,
                      got ? got : "none", pb_last_error(), want);
    assert_int_equal(st, PB_OK);
    assert_string_equal(got, want);
    assert_true(has_variant(dev->backend, bench, got)); /* listed, neither anchor nor bound */
}

/* Every backend compiled in, with or without a device here: the defaults
 * need only the backend's table when no arguments are given. */
static void test_defaults_per_backend(void **state)
{
    (void)state;
    size_t checked = 0;
    for (size_t i = 0; i < pb_backend_count(); i++) {
        struct pb_device fake = {.backend = pb_backend_at(i)};
        const char *name = pb_backend_name(fake.backend);
        for (size_t j = 0; j < PB_ARRAY_LEN(expected_defaults); j++) {
            if (strcmp(expected_defaults[j].backend, name) != 0)
                continue;
            check_default(&fake, "gemm", expected_defaults[j].gemm);
            check_default(&fake, "spmv",
                          pb__variant_find(fake.backend, "spmv", "auto") ? "auto" : expected_defaults[j].spmv);
            check_default(&fake, "conv", expected_defaults[j].conv);
            check_default(&fake, "transpose", expected_defaults[j].transpose);
            check_default(&fake, "reduce", expected_defaults[j].reduce);
            checked++;
        }
        /* Families without a default say so. */
        const char *got = "unchanged";
        pb_status st = pb_kernel_default(&fake, "access", NULL, &got);
        assert_int_equal(st, PB_ERR_NOT_FOUND);
        assert_null(got);
        assert_contains(pb_last_error(), "no default access variant");
    }
    assert_int_equal(checked, pb_backend_count()); /* a new backend needs its row above */
}

/* ---- every family through NULL on every usable backend ------------------- */

static pb_buf *upload(pb_device *dev, const void *data, size_t bytes)
{
    pb_buf *buf = NULL;
    assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &buf), PB_OK);
    if (data)
        assert_int_equal(pb_buf_write(buf, 0, data, bytes), PB_OK);
    else
        assert_int_equal(pb_buf_fill_bytes(buf, 0xFF), PB_OK); /* NaN: unwritten outputs show */
    return buf;
}

static void expect_ok(pb_status st, const pb_device *dev, const char *what)
{
    if (st != PB_OK)
        print_message("%s on %s: %s (%s)\n", what, pb_backend_name(dev->backend), pb_status_name(st),
                      pb_last_error());
    assert_int_equal(st, PB_OK);
}

/* Small integers throughout: every variant's result is exact. */
static void run_gemm(pb_device *dev)
{
    enum { M = 5, N = 6, K = 7 };
    float a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 5 - 2);
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(i % 3 - 1);
    pb_buf *ba = upload(dev, a, sizeof a), *bb = upload(dev, b, sizeof b), *bc = upload(dev, NULL, sizeof c);
    struct pb_gemm_args g = {.prec = PB_FLOAT, .m = M, .n = N, .k = K, .alpha = 1, .beta = 0,
                             .a = ba, .lda = K, .b = bb, .ldb = N, .c = bc, .ldc = N};
    expect_ok(pb_gemm(dev, NULL, &g), dev, "pb_gemm");
    assert_int_equal(pb_buf_read(bc, 0, c, sizeof c), PB_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0;
            for (int k = 0; k < K; k++)
                want += a[i * K + k] * b[k * N + j];
            assert_true(c[i * N + j] == want);
        }
    pb_buf_free(ba);
    pb_buf_free(bb);
    pb_buf_free(bc);
}

/* 3 x 4:  [1 0 2 0; 0 0 0 0; 0 3 0 4], as sorted COO. */
static int32_t coo_rows[] = {0, 0, 2, 2}, coo_cols[] = {0, 2, 1, 3};
static double coo_vals[] = {1, 2, 3, 4};
static struct pb_coo small_coo(void)
{
    return (struct pb_coo){.n_rows = 3, .n_cols = 4, .nnz = 4, .rows = coo_rows, .cols = coo_cols,
                           .values = coo_vals};
}

static void run_spmv(pb_device *dev)
{
    struct pb_coo m = small_coo();
    struct pb_csr_device a;
    expect_ok(pb_csr_upload(dev, &m, PB_DOUBLE, &a), dev, "pb_csr_upload");
    double x[4] = {1, -2, 3, 5}, y[3];
    a.args.x = upload(dev, x, sizeof x);
    a.args.y = upload(dev, NULL, sizeof y);
    expect_ok(pb_spmv(dev, NULL, &a.args), dev, "pb_spmv");
    assert_int_equal(pb_buf_read(a.args.y, 0, y, sizeof y), PB_OK);
    assert_true(y[0] == 1 * 1 + 2 * 3);
    assert_true(y[1] == 0);
    assert_true(y[2] == 3 * -2 + 4 * 5);
    pb_buf_free((pb_buf *)a.args.x);
    pb_buf_free(a.args.y);
    pb_csr_free(&a);
    assert_null(a.ptr);
    pb_csr_free(&a); /* a zeroed struct */
}

/* A single 1 at (Y0, X0) filtered by taps f: out = f[Y0 - y + R] f[X0 - x + R]. */
static void run_conv(pb_device *dev)
{
    enum { W = 9, H = 7, R = 1, Y0 = 3, X0 = 0 };
    float in[H * W] = {0}, out[H * W], f[2 * R + 1] = {1, 2, 3};
    in[Y0 * W + X0] = 1;
    pb_buf *bf = upload(dev, f, sizeof f), *bi = upload(dev, in, sizeof in), *bt = upload(dev, NULL, sizeof in),
           *bo = upload(dev, NULL, sizeof out);
    struct pb_conv_args c = {.prec = PB_FLOAT, .width = W, .height = H, .in_rows = H, .in_top = 0, .radius = R,
                             .border = PB_CONV_ZERO, .filter = bf, .in = bi, .tmp = bt, .out = bo};
    expect_ok(pb_conv(dev, NULL, &c), dev, "pb_conv");
    assert_int_equal(pb_buf_read(bo, 0, out, sizeof out), PB_OK);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int ky = Y0 - y + R, kx = X0 - x + R;
            float want = ky >= 0 && ky <= 2 * R && kx >= 0 && kx <= 2 * R ? f[ky] * f[kx] : 0;
            assert_true(out[y * W + x] == want);
        }
    pb_buf_free(bf);
    pb_buf_free(bi);
    pb_buf_free(bt);
    pb_buf_free(bo);
}

static void run_transpose(pb_device *dev)
{
    enum { ROWS = 37, COLS = 45 };
    static double in[ROWS * COLS], out[COLS * ROWS];
    for (int i = 0; i < ROWS * COLS; i++)
        in[i] = i;
    pb_buf *bi = upload(dev, in, sizeof in), *bo = upload(dev, NULL, sizeof out);
    struct pb_transpose_args t = {.prec = PB_DOUBLE, .rows = ROWS, .cols = COLS, .in = bi, .ld_in = COLS,
                                  .out = bo, .ld_out = ROWS};
    expect_ok(pb_transpose(dev, NULL, &t), dev, "pb_transpose");
    assert_int_equal(pb_buf_read(bo, 0, out, sizeof out), PB_OK);
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            assert_true(out[j * ROWS + i] == in[i * COLS + j]);
    pb_buf_free(bi);
    pb_buf_free(bo);
}

/* int32 sums are exact in any order; the workspace is asked for variant NULL. */
static void run_reduce(pb_device *dev)
{
    enum { N = 100003 };
    static int32_t in[N];
    int64_t want = 0;
    for (int i = 0; i < N; i++) {
        in[i] = i % 201 - 100;
        want += in[i];
    }
    pb_buf *bi = upload(dev, in, sizeof in), *bo = upload(dev, NULL, sizeof(int32_t)), *bw = NULL;
    struct pb_reduce_args r = {.type = PB_REDUCE_INT, .n = N, .in = bi, .out = bo};
    size_t bytes = 1;
    expect_ok(pb_kernel_workspace(dev, "reduce", NULL, &r, &bytes), dev, "pb_kernel_workspace");
    if (bytes) {
        assert_int_equal(pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &bw), PB_OK);
        assert_int_equal(pb_buf_fill_bytes(bw, 0), PB_OK);
        r.work = bw;
        r.work_bytes = bytes;
    }
    expect_ok(pb_reduce(dev, NULL, &r), dev, "pb_reduce");
    int32_t got;
    assert_int_equal(pb_buf_read(bo, 0, &got, sizeof got), PB_OK);
    assert_int_equal(got, (int32_t)want);
    pb_buf_free(bi);
    pb_buf_free(bo);
    pb_buf_free(bw);
}

static void test_null_variant_every_family(void **state)
{
    (void)state;
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        if (!pb_test_backend_usable(b))
            continue;
        pb_device *dev = NULL;
        assert_int_equal(pb_device_open(b, 0, &dev), PB_OK);
        run_gemm(dev);
        run_spmv(dev);
        run_conv(dev);
        run_transpose(dev);
        run_reduce(dev);
        pb_device_close(dev);
    }
}

/* ---- contracts ------------------------------------------------------------ */

struct fixture {
    pb_device *dev; /* ref */
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || pb_device_open(pb_backend_find("ref"), 0, &f->dev) != PB_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    pb_device_close(f->dev);
    free(f);
    return 0;
}

static void assert_zeroed(const struct pb_csr_device *a)
{
    static const struct pb_csr_device zero;
    assert_memory_equal(a, &zero, sizeof zero);
}

static void test_csr_upload_refuses(void **state)
{
    struct fixture *f = *state;
    struct pb_csr_device a;
    int32_t unsorted[] = {0, 2, 0, 2};
    struct pb_coo m = small_coo();
    m.rows = unsorted;
    assert_int_equal(pb_csr_upload(f->dev, &m, PB_DOUBLE, &a), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "sorted by row");
    assert_zeroed(&a);

    int32_t outside[] = {0, 2, 1, 4}; /* column 4 of a 4-column matrix */
    m = small_coo();
    m.cols = outside;
    assert_int_equal(pb_csr_upload(f->dev, &m, PB_DOUBLE, &a), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "outside the 3 x 4 matrix");
    assert_zeroed(&a);

    m = small_coo();
    m.values = NULL;
    assert_int_equal(pb_csr_upload(f->dev, &m, PB_DOUBLE, &a), PB_ERR_INVALID);
    assert_zeroed(&a);
    m = small_coo();
    assert_int_equal(pb_csr_upload(f->dev, &m, (enum pb_precision)3, &a), PB_ERR_INVALID);
    assert_zeroed(&a);
    pb_csr_free(NULL);
}

/* What the struct holds: the CSR arrays, values rounded to the precision,
 * and arguments ready but for x and y. */
static void test_csr_upload_contents(void **state)
{
    struct fixture *f = *state;
    double v[] = {0.1, 2, 3, 4};
    struct pb_coo m = small_coo();
    m.values = v;
    struct pb_csr_device a;
    assert_int_equal(pb_csr_upload(f->dev, &m, PB_FLOAT, &a), PB_OK);
    int32_t ptr[4], idx[4];
    float val[4];
    assert_int_equal(pb_buf_size(a.ptr), sizeof ptr);
    assert_int_equal(pb_buf_size(a.val), sizeof val);
    assert_int_equal(pb_buf_read(a.ptr, 0, ptr, sizeof ptr), PB_OK);
    assert_int_equal(pb_buf_read(a.idx, 0, idx, sizeof idx), PB_OK);
    assert_int_equal(pb_buf_read(a.val, 0, val, sizeof val), PB_OK);
    assert_memory_equal(ptr, ((int32_t[]){0, 2, 2, 4}), sizeof ptr);
    assert_memory_equal(idx, coo_cols, sizeof idx);
    assert_true(val[0] == 0.1f && val[3] == 4.0f);
    assert_int_equal(a.args.prec, PB_FLOAT);
    assert_int_equal(a.args.format, PB_SPARSE_CSR);
    assert_int_equal(a.args.rows, 3);
    assert_int_equal(a.args.cols, 4);
    assert_int_equal(a.args.nnz, 4);
    assert_ptr_equal(a.args.ptr, a.ptr);
    assert_ptr_equal(a.args.idx, a.idx);
    assert_ptr_equal(a.args.val, a.val);
    assert_null(a.args.x);
    assert_null(a.args.y);
    /* Without x and y the arguments are refused, not run. */
    assert_int_equal(pb_spmv(f->dev, NULL, &a.args), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "x is NULL");
    pb_csr_free(&a);
    assert_zeroed(&a);

    /* No entries: rows of zeros. */
    m = (struct pb_coo){.n_rows = 2, .n_cols = 2};
    assert_int_equal(pb_csr_upload(f->dev, &m, PB_DOUBLE, &a), PB_OK);
    double x[2] = {1, 1}, y[2] = {NAN, NAN};
    pb_buf *bx = NULL, *by = NULL;
    assert_int_equal(pb_buf_wrap_host(f->dev, x, sizeof x, &bx), PB_OK);
    assert_int_equal(pb_buf_wrap_host(f->dev, y, sizeof y, &by), PB_OK);
    a.args.x = bx;
    a.args.y = by;
    assert_int_equal(pb_spmv(f->dev, NULL, &a.args), PB_OK);
    assert_true(y[0] == 0 && y[1] == 0);
    pb_buf_free(bx);
    pb_buf_free(by);
    pb_csr_free(&a);
}

static void test_default_refusals(void **state)
{
    struct fixture *f = *state;
    /* ref has ELLPACK row-major only: no default takes the transposed format. */
    struct pb_coo m = small_coo();
    struct pb_csr_device a;
    assert_int_equal(pb_csr_upload(f->dev, &m, PB_DOUBLE, &a), PB_OK);
    double x[4] = {0}, y[3];
    pb_buf *bx = NULL, *by = NULL;
    assert_int_equal(pb_buf_wrap_host(f->dev, x, sizeof x, &bx), PB_OK);
    assert_int_equal(pb_buf_wrap_host(f->dev, y, sizeof y, &by), PB_OK);
    struct pb_spmv_args ellt = {.prec = PB_DOUBLE, .format = PB_SPARSE_ELLT, .rows = 3, .cols = 4, .width = 1,
                                .idx = a.idx, .val = a.val, .x = bx, .y = by};
    const char *name = "unchanged";
    assert_int_equal(pb_kernel_default(f->dev, "spmv", &ellt, &name), PB_ERR_UNSUPPORTED);
    assert_null(name);
    assert_contains(pb_last_error(), "no default spmv variant takes these arguments");
    assert_int_equal(pb_spmv(f->dev, NULL, &ellt), PB_ERR_UNSUPPORTED);
    /* CSR arguments get csr, also through pb_kernel_default with them. */
    a.args.x = bx;
    a.args.y = by;
    assert_int_equal(pb_kernel_default(f->dev, "spmv", &a.args, &name), PB_OK);
    assert_string_equal(name, "csr");
    /* Invalid arguments are refused before any variant looks at them. */
    a.args.nnz = 5;
    assert_int_equal(pb_kernel_default(f->dev, "spmv", &a.args, &name), PB_ERR_INVALID);
    assert_int_equal(pb_spmv(f->dev, NULL, &a.args), PB_ERR_INVALID);
    assert_int_equal(pb_kernel_run(f->dev, "gemm", NULL, NULL), PB_ERR_INVALID);
    assert_int_equal(pb_kernel_run(f->dev, "no-such-family", NULL, &a.args), PB_ERR_NOT_FOUND);
    pb_buf_free(bx);
    pb_buf_free(by);
    pb_csr_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_per_backend),
        cmocka_unit_test(test_null_variant_every_family),
        cmocka_unit_test(test_csr_upload_refuses),
        cmocka_unit_test(test_csr_upload_contents),
        cmocka_unit_test(test_default_refusals),
    };
    return pb_test_run(tests, setup, teardown);
}

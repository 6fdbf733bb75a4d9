/* A library user's loop: open a device, allocate, upload, run a GEMM, read
 * back, free, close -- 10,000 times on the host backends, 2,000 on device
 * backends, whose every open makes a context (PB_LIFECYCLE_TURNS sets both;
 * the GPU check runs 10,000 on CUDA). After the first
 * tenth (warm-up: caches, pools, compiled programs), neither host memory (the
 * resident set) nor device memory (CUDA's free memory) may grow. In the
 * sanitizer build LeakSanitizer checks that every allocation is freed; the
 * resident set is not checked there (ASan's quarantine holds freed memory). */
#include "test_util.h"

#include "parbench/pb_kernels.h"

#define N 24

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static double resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    if (f)
        fclose(f);
    return resident < 0 ? NAN : (double)resident * (double)sysconf(_SC_PAGESIZE);
}

/* CUDA's free device memory in bytes (the device's info), NAN elsewhere. */
static double device_free_bytes(pb_device *dev)
{
    struct pb_device_info info;
    if (pb_device_info(dev, &info) != PB_OK)
        return NAN;
    for (int i = 0; i < info.n_props; i++)
        if (strcmp(info.props[i].key, "free_memory_bytes") == 0)
            return atof(info.props[i].value);
    return NAN;
}

static const char *variant_of(const char *backend)
{
    return strcmp(backend, "ref") == 0 ? "ikj" : strcmp(backend, "openmp") == 0 ? "blocked" : "tiled16";
}

/* One turn of the loop; false (with a message) on any error or a wrong C. */
static bool one_turn(const pb_backend *b, const float *a, const float *bm, double *device_free)
{
    pb_device *dev = NULL;
    pb_buf *ba = NULL, *bb = NULL, *bc = NULL;
    float c[N * N];
    pb_status st = pb_device_open(b, 0, &dev);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof c, &ba);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof c, &bb);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof c, &bc);
    if (st == PB_OK)
        st = pb_buf_write(ba, 0, a, sizeof c);
    if (st == PB_OK)
        st = pb_buf_write(bb, 0, bm, sizeof c);
    struct pb_gemm_args g = {.prec = PB_FLOAT, .m = N, .n = N, .k = N, .alpha = 1, .beta = 0,
                             .a = ba, .lda = N, .b = bb, .ldb = N, .c = bc, .ldc = N};
    if (st == PB_OK)
        st = pb_gemm(dev, variant_of(pb_backend_name(b)), &g);
    if (st == PB_OK)
        st = pb_buf_read(bc, 0, c, sizeof c);
    if (device_free && dev)
        *device_free = device_free_bytes(dev);
    pb_buf_free(ba);
    pb_buf_free(bb);
    pb_buf_free(bc);
    pb_device_close(dev);
    if (st != PB_OK) {
        print_message("%s: %s\n", pb_backend_name(b), pb_last_error());
        return false;
    }
    /* a = identity: C = B */
    for (int i = 0; i < N * N; i++)
        if (c[i] != bm[i]) {
            print_message("%s: C[%d] = %g, expected %g\n", pb_backend_name(b), i, c[i], bm[i]);
            return false;
        }
    return true;
}

static void test_loop(void **state)
{
    (void)state;
    float a[N * N], bm[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = i / N == i % N ? 1.0f : 0.0f;
        bm[i] = (float)(i % 7) - 3.0f;
    }
    const char *env = getenv("PB_LIFECYCLE_TURNS"), *only = getenv("PB_LIFECYCLE_BACKENDS");
    int usable = 0;
    for (size_t k = 0; k < pb_backend_count(); k++) {
        const pb_backend *b = pb_backend_at(k);
        if (only && !strstr(only, pb_backend_name(b))) /* e.g. the GPU check's 10,000 turns on cuda */
            continue;
        if (!pb_test_backend_usable(b))
            continue;
        usable++;
        bool host = strcmp(pb_backend_name(b), "ref") == 0 || strcmp(pb_backend_name(b), "openmp") == 0;
        /* an OpenCL device is a context and a program build each turn */
        bool opencl = strcmp(pb_backend_name(b), "opencl") == 0;
        int turns = env && atoi(env) > 0 ? atoi(env) : host ? 10000 : opencl ? 1000 : 2000;
        int warm = turns / 10 > 0 ? turns / 10 : 1;
        double rss0 = NAN, dev0 = NAN, dev1 = NAN;
        for (int t = 0; t < turns; t++) {
            bool measure = t == warm || t == turns - 1;
            double dev_free = NAN;
            assert_true(one_turn(b, a, bm, measure ? &dev_free : NULL));
            if (t == warm) {
                rss0 = resident_bytes();
                dev0 = dev_free;
            } else if (t == turns - 1) {
                dev1 = dev_free;
            }
        }
        double grew = resident_bytes() - rss0;
        print_message("%s: %d turns, resident set %+.0f KiB after warm-up%s\n", pb_backend_name(b), turns,
                      grew / 1024, UNDER_ASAN ? " (not checked under ASan)" : "");
        /* growth of 2 KiB a turn is 3.5 MiB or more here; allocator noise stays far below */
        if (!UNDER_ASAN && turns >= 1000)
            assert_true(grew < 4.0 * 1024 * 1024);
        if (!isnan(dev0) && !isnan(dev1)) {
            print_message("%s: device free memory %+.0f KiB after warm-up\n", pb_backend_name(b), (dev1 - dev0) / 1024);
            /* the driver hands out device memory in 2 MiB pages: 4 MiB moved in one
             * 2,000-turn run on the H100, 0 in a 10,000-turn one */
            assert_true(dev0 - dev1 < 16.0 * 1024 * 1024);
        }
    }
    assert_true(usable >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop),
    };
    return pb_test_run(tests, NULL, NULL);
}

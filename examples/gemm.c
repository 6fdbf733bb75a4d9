/* C = A * B on the best device here: a CUDA GPU, else an OpenCL GPU, else the
 * CPU through OpenMP, else the plain C reference; or on the backend named.
 * The variant is the backend's default (pb_gemm with NULL).
 *
 *     gemm [N [BACKEND]]        e.g. gemm 1024, gemm 256 openmp
 *
 * Build: cc gemm.c $(pkg-config --cflags --libs parbench), or CMake's
 * find_package(parbench) and parbench::parbench (CMakeLists.txt here). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parbench/pb_kernels.h>

/* Prints what failed and why, then leaves main through `out`. */
#define CHECK(call)                                                                                  \
    do {                                                                                             \
        pb_status st_ = (call);                                                                      \
        if (st_ != PB_OK) {                                                                          \
            fprintf(stderr, "%s failed: %s: %s\n", #call, pb_status_message(st_), pb_last_error()); \
            goto out;                                                                                \
        }                                                                                            \
    } while (0)

/* Device 0 of the backend named, or the best device found. */
static pb_status open_device(const char *name, pb_device **dev)
{
    if (name) {
        const pb_backend *b = pb_backend_find(name);
        if (!b) {
            fprintf(stderr, "no backend %s in this libparbench\n", name);
            return PB_ERR_NOT_FOUND;
        }
        return pb_device_open(b, 0, dev);
    }
    static const char *const order[] = {"cuda", "opencl", "openmp", "ref"};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const pb_backend *b = pb_backend_find(order[i]);
        for (int d = 0; b && d < pb_backend_device_count(b); d++) {
            struct pb_device_info info;
            if (pb_device_open(b, d, dev) != PB_OK)
                continue;
            /* OpenCL counts only with a GPU: on the CPU OpenMP does better. */
            if (strcmp(order[i], "opencl") != 0 ||
                (pb_device_info(*dev, &info) == PB_OK && strcmp(info.kind, "gpu") == 0))
                return PB_OK;
            pb_device_close(*dev);
            *dev = NULL;
        }
    }
    return pb_device_open(pb_backend_find("ref"), 0, dev);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 512;
    const char *backend = argc > 2 ? argv[2] : NULL;
    int rc = 1;
    pb_device *dev = NULL;
    pb_buf *a = NULL, *b = NULL, *c = NULL;
    float *ha = malloc(n * n * sizeof *ha), *hb = malloc(n * n * sizeof *hb), *hc = malloc(n * n * sizeof *hc);
    if (n == 0 || !ha || !hb || !hc) {
        fprintf(stderr, "usage: gemm [N [BACKEND]] (N > 0, memory for three N x N matrices)\n");
        goto out;
    }
    /* Small integers: every product is exact in float, in any order. */
    for (size_t i = 0; i < n * n; i++) {
        ha[i] = (float)((int)(i % 7) - 3);
        hb[i] = (float)((int)(i % 5) - 2);
    }

    CHECK(open_device(backend, &dev));
    CHECK(pb_buf_alloc(dev, PB_MEM_DEVICE, n * n * sizeof(float), &a));
    CHECK(pb_buf_alloc(dev, PB_MEM_DEVICE, n * n * sizeof(float), &b));
    CHECK(pb_buf_alloc(dev, PB_MEM_DEVICE, n * n * sizeof(float), &c));
    CHECK(pb_buf_write(a, 0, ha, n * n * sizeof(float)));
    CHECK(pb_buf_write(b, 0, hb, n * n * sizeof(float)));

    struct pb_gemm_args g = {.prec = PB_FLOAT, .m = n, .n = n, .k = n, .alpha = 1, .beta = 0,
                             .a = a, .lda = n, .b = b, .ldb = n, .c = c, .ldc = n};
    const char *variant;
    CHECK(pb_kernel_default(dev, "gemm", &g, &variant));
    CHECK(pb_gemm(dev, NULL, &g));
    CHECK(pb_buf_read(c, 0, hc, n * n * sizeof(float)));

    /* Check a few rows against the loops. */
    size_t wrong = 0;
    for (size_t i = 0; i < n; i += n / 4 + 1)
        for (size_t j = 0; j < n; j++) {
            double want = 0;
            for (size_t k = 0; k < n; k++)
                want += (double)ha[i * n + k] * hb[k * n + j];
            wrong += hc[i * n + j] != want;
        }
    printf("gemm %zu x %zu x %zu float on %s/%s (%s): %s\n", n, n, n, pb_backend_name(pb_device_backend(dev)),
           variant, pb_device_name(dev), wrong ? "WRONG" : "ok");
    rc = wrong != 0;
out:
    pb_buf_free(a);
    pb_buf_free(b);
    pb_buf_free(c);
    pb_device_close(dev);
    free(ha);
    free(hb);
    free(hc);
    return rc;
}

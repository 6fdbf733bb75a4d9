/* The sum of N floats, accumulated in double, with the backend's default
 * reduction (pb_reduce with NULL), and the workspace it may need.
 *
 *     reduce [N [BACKEND]]       e.g. reduce 100000000 cuda
 *
 * BACKEND defaults to openmp (ref when this libparbench has no OpenMP). */
#include <stdio.h>
#include <stdlib.h>

#include <parbench/pb_kernels.h>

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        pb_status st_ = (call);                                                                      \
        if (st_ != PB_OK) {                                                                          \
            fprintf(stderr, "%s failed: %s: %s\n", #call, pb_status_message(st_), pb_last_error()); \
            goto out;                                                                                \
        }                                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1u << 20;
    const char *backend = argc > 2 ? argv[2] : pb_backend_find("openmp") ? "openmp" : "ref";
    int rc = 1;
    pb_device *dev = NULL;
    pb_buf *in = NULL, *out = NULL, *work = NULL;
    float *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) {
        fprintf(stderr, "out of memory for %zu floats\n", n);
        return 1;
    }
    /* Eighths below 16: their sum is exact in double, in any order. */
    double want = 0;
    for (size_t i = 0; i < n; i++) {
        h[i] = (float)(i % 128) / 8;
        want += h[i];
    }

    const pb_backend *b = pb_backend_find(backend);
    if (!b) {
        fprintf(stderr, "no backend %s in this libparbench\n", backend);
        goto out;
    }
    CHECK(pb_device_open(b, 0, &dev));
    CHECK(pb_buf_alloc(dev, PB_MEM_DEVICE, n * sizeof(float), &in));
    CHECK(pb_buf_alloc(dev, PB_MEM_DEVICE, sizeof(double), &out));
    CHECK(pb_buf_write(in, 0, h, n * sizeof(float)));

    struct pb_reduce_args r = {.type = PB_REDUCE_FLOAT_DOUBLE, .n = n, .in = in, .out = out};
    /* Scratch for the same variant (NULL: the default), zero-filled once. */
    CHECK(pb_kernel_workspace(dev, "reduce", NULL, &r, &r.work_bytes));
    if (r.work_bytes) {
        CHECK(pb_buf_alloc(dev, PB_MEM_DEVICE, r.work_bytes, &work));
        CHECK(pb_buf_fill_bytes(work, 0));
        r.work = work;
    }
    const char *variant;
    CHECK(pb_kernel_default(dev, "reduce", &r, &variant));
    CHECK(pb_reduce(dev, NULL, &r));
    double sum;
    CHECK(pb_buf_read(out, 0, &sum, sizeof sum));
    printf("reduce %zu floats on %s/%s: %.17g, expected %.17g: %s\n", n, backend, variant, sum, want,
           sum == want ? "ok" : "WRONG");
    rc = sum != want;
out:
    pb_buf_free(in);
    pb_buf_free(out);
    pb_buf_free(work);
    pb_device_close(dev);
    free(h);
    return rc;
}

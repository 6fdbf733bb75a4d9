/* y = A x for A from a Matrix Market file: read it (pb_coo_read), put it on a
 * device as CSR (pb_csr_upload), run SpMV (pb_spmv). The variant is given or
 * the backend's default (NULL); x is all ones, so y holds the row sums.
 *
 *     spmv FILE.mtx [VARIANT [BACKEND]]     e.g. spmv A.mtx, spmv A.mtx csr-v4 openmp
 *
 * BACKEND defaults to openmp (ref when this libparbench has no OpenMP). */
#include <math.h>
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
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: spmv FILE.mtx [VARIANT [BACKEND]]\n");
        return 2;
    }
    const char *variant = argc > 2 && argv[2][0] ? argv[2] : NULL;
    const char *backend = argc > 3 ? argv[3] : pb_backend_find("openmp") ? "openmp" : "ref";
    int rc = 1;
    struct pb_coo coo = {0};
    struct pb_csr_device mat = {0};
    pb_device *dev = NULL;
    pb_buf *x = NULL, *y = NULL;
    double *hx = NULL, *hy = NULL;

    const pb_backend *b = pb_backend_find(backend);
    if (!b) {
        fprintf(stderr, "no backend %s in this libparbench\n", backend);
        goto out;
    }
    CHECK(pb_device_open(b, 0, &dev));
    /* The two calls from a file to a matrix on the device. */
    CHECK(pb_coo_read(argv[1], NULL, &coo));
    CHECK(pb_csr_upload(dev, &coo, PB_DOUBLE, &mat));

    size_t rows = (size_t)coo.n_rows, cols = (size_t)coo.n_cols;
    hx = malloc((cols ? cols : 1) * sizeof *hx);
    hy = malloc((rows ? rows : 1) * sizeof *hy);
    if (!hx || !hy) {
        fprintf(stderr, "out of memory\n");
        goto out;
    }
    for (size_t j = 0; j < cols; j++)
        hx[j] = 1;
    CHECK(pb_buf_alloc(dev, PB_MEM_DEVICE, cols * sizeof(double), &x));
    CHECK(pb_buf_alloc(dev, PB_MEM_DEVICE, rows * sizeof(double), &y));
    CHECK(pb_buf_write(x, 0, hx, cols * sizeof(double)));
    mat.args.x = x;
    mat.args.y = y;
    if (!variant)
        CHECK(pb_kernel_default(dev, "spmv", &mat.args, &variant));
    CHECK(pb_spmv(dev, variant, &mat.args));
    CHECK(pb_buf_read(y, 0, hy, rows * sizeof(double)));

    /* The row sums from the COO entries, to within rounding. */
    size_t wrong = 0, k = 0;
    for (size_t i = 0; i < rows; i++) {
        double want = 0, mag = 0;
        for (; k < coo.nnz && (size_t)coo.rows[k] == i; k++) {
            want += coo.values[k];
            mag += fabs(coo.values[k]);
        }
        wrong += !(fabs(hy[i] - want) <= 1e-12 * mag);
    }
    printf("spmv %s: %zu x %zu, %zu non-zeros, on %s/%s: %s\n", argv[1], rows, cols, coo.nnz, backend, variant,
           wrong ? "WRONG" : "ok");
    rc = wrong != 0;
out:
    pb_buf_free(x);
    pb_buf_free(y);
    pb_csr_free(&mat);
    pb_coo_free(&coo);
    pb_device_close(dev);
    free(hx);
    free(hy);
    return rc;
}

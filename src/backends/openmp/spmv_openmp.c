/* SpMV on OpenMP threads: CSR with the study's horizontal unrolling (U
 * partial sums along one row) and vertical unrolling (U rows at once), and
 * ELLPACK. Rows are split so every thread gets the same rows + non-zeros
 * (a merge-path split of the row ends and the entries), so one long row
 * does not leave the other threads waiting. */
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>

#include "backends/openmp/spmv_openmp.h"
#include "core/backend_impl.h"

/* Row offset i of ptr, 64-bit offsets where wide. */
static inline int64_t offset_at(const void *ptr, bool wide, int32_t i)
{
    return wide ? ((const int64_t *)ptr)[i] : ((const int32_t *)ptr)[i];
}

/* First row of thread t of n: the smallest r with r + ptr[r] >= t * (rows + nnz) / n. */
static int32_t split_row_of(const void *ptr, bool wide, int32_t rows, int t, int n)
{
    int64_t target = ((int64_t)rows + offset_at(ptr, wide, rows)) * t / n;
    int32_t lo = 0, hi = rows;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if ((int64_t)mid + offset_at(ptr, wide, mid) < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int32_t split_row(const int32_t *ptr, int32_t rows, int t, int n)
{
    return split_row_of(ptr, false, rows, t, n);
}

static int threads_of(const pb_device *dev) { return dev->threads > 0 ? dev->threads : 1; }

/* Row i of CSR with U partial sums (U = 1: the plain loop). */
#define ROW_H(T, U, ptr, idx, val, x, i, out)                                               \
    do {                                                                                   \
        T s_[U] = {0};                                                                     \
        int32_t k_ = ptr[i], e_ = ptr[i + 1];                                              \
        for (; k_ + (U) <= e_; k_ += (U))                                                  \
            for (int u_ = 0; u_ < (U); u_++)                                               \
                s_[u_] += val[k_ + u_] * x[idx[k_ + u_]];                                  \
        for (; k_ < e_; k_++)                                                              \
            s_[0] += val[k_] * x[idx[k_]];                                                 \
        T r_ = 0;                                                                          \
        for (int u_ = 0; u_ < (U); u_++)                                                   \
            r_ += s_[u_];                                                                  \
        out = r_;                                                                          \
    } while (0)

#define DEFINE_CSR(T, SUFFIX, NAME, U, VERTICAL)                                            \
    static void NAME##_##SUFFIX(const struct pb_spmv_args *a, int threads)                 \
    {                                                                                      \
        const int32_t *ptr = PB__HOST(a->ptr, const int32_t), *idx = PB__HOST(a->idx, const int32_t); \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);           \
        T *y = PB__HOST(a->y, T);                                                          \
        _Pragma("omp parallel num_threads(threads)")                                       \
        {                                                                                  \
            int t = omp_get_thread_num(), n = omp_get_num_threads();                       \
            int32_t i = split_row(ptr, a->rows, t, n), end = split_row(ptr, a->rows, t + 1, n); \
            if (VERTICAL) /* U rows side by side over their common length */              \
                for (; i + (U) <= end; i += (U)) {                                         \
                    T s_[U] = {0};                                                         \
                    int32_t common = ptr[i + 1] - ptr[i];                                  \
                    for (int u = 1; u < (U); u++)                                          \
                        if (ptr[i + u + 1] - ptr[i + u] < common)                          \
                            common = ptr[i + u + 1] - ptr[i + u];                          \
                    for (int32_t j = 0; j < common; j++)                                   \
                        for (int u = 0; u < (U); u++)                                      \
                            s_[u] += val[ptr[i + u] + j] * x[idx[ptr[i + u] + j]];         \
                    for (int u = 0; u < (U); u++) {                                        \
                        for (int32_t k = ptr[i + u] + common; k < ptr[i + u + 1]; k++)     \
                            s_[u] += val[k] * x[idx[k]];                                   \
                        y[i + u] = s_[u];                                                  \
                    }                                                                      \
                }                                                                          \
            for (; i < end; i++)                                                           \
                ROW_H(T, (VERTICAL ? 1 : (U)), ptr, idx, val, x, i, y[i]);                 \
        }                                                                                  \
    }

/* Plain CSR with 64-bit row offsets (beyond 2^31 - 1 non-zeros). */
#define DEFINE_CSR64(T, SUFFIX)                                                             \
    static void csr64_##SUFFIX(const struct pb_spmv_args *a, int threads)                  \
    {                                                                                      \
        const int64_t *ptr = PB__HOST(a->ptr, const int64_t);                              \
        const int32_t *idx = PB__HOST(a->idx, const int32_t);                              \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);            \
        T *y = PB__HOST(a->y, T);                                                          \
        _Pragma("omp parallel num_threads(threads)")                                       \
        {                                                                                  \
            int t = omp_get_thread_num(), n = omp_get_num_threads();                       \
            int32_t end = split_row_of(ptr, true, a->rows, t + 1, n);                      \
            for (int32_t i = split_row_of(ptr, true, a->rows, t, n); i < end; i++) {       \
                T sum = 0;                                                                 \
                for (int64_t k = ptr[i]; k < ptr[i + 1]; k++)                              \
                    sum += val[k] * x[idx[k]];                                             \
                y[i] = sum;                                                                \
            }                                                                              \
        }                                                                                  \
    }

#define DEFINE_ELL(T, SUFFIX)                                                               \
    static void ell_##SUFFIX(const struct pb_spmv_args *a, int threads)                    \
    {                                                                                      \
        const int32_t *idx = PB__HOST(a->idx, const int32_t);                              \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);            \
        T *y = PB__HOST(a->y, T);                                                          \
        const size_t w = (size_t)a->width;                                                 \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                  \
        for (int32_t i = 0; i < a->rows; i++) {                                            \
            T sum = 0;                                                                     \
            for (size_t j = 0; j < w; j++) {                                               \
                int32_t c = idx[(size_t)i * w + j];                                        \
                sum += c >= 0 ? val[(size_t)i * w + j] * x[c] : 0;                         \
            }                                                                              \
            y[i] = sum;                                                                    \
        }                                                                                  \
    }

#define DEFINE_ALL(T, SUFFIX)                                                               \
    DEFINE_CSR(T, SUFFIX, csr32, 1, 0)                                                       \
    DEFINE_CSR(T, SUFFIX, h2, 2, 0)                                                        \
    DEFINE_CSR(T, SUFFIX, h4, 4, 0)                                                        \
    DEFINE_CSR(T, SUFFIX, h8, 8, 0)                                                        \
    DEFINE_CSR(T, SUFFIX, h16, 16, 0)                                                      \
    DEFINE_CSR(T, SUFFIX, v2, 2, 1)                                                        \
    DEFINE_CSR(T, SUFFIX, v4, 4, 1)                                                        \
    DEFINE_CSR(T, SUFFIX, v8, 8, 1)                                                        \
    DEFINE_CSR(T, SUFFIX, v16, 16, 1)                                                      \
    DEFINE_CSR64(T, SUFFIX)                                                                \
    DEFINE_ELL(T, SUFFIX)

DEFINE_ALL(float, f32)
DEFINE_ALL(double, f64)

#define DEFINE_RUN(NAME)                                                                    \
    pb_status pb__omp_spmv_##NAME(pb_device *dev, const void *args, pb_stream *s)          \
    {                                                                                      \
        (void)s;                                                                           \
        const struct pb_spmv_args *a = args;                                               \
        if (a->prec == PB_DOUBLE)                                                          \
            NAME##_f64(a, threads_of(dev));                                                \
        else                                                                               \
            NAME##_f32(a, threads_of(dev));                                                \
        return PB_OK;                                                                      \
    }

static DEFINE_RUN(csr32)
static DEFINE_RUN(csr64)
DEFINE_RUN(h2)
DEFINE_RUN(h4)
DEFINE_RUN(h8)
DEFINE_RUN(h16)
DEFINE_RUN(v2)
DEFINE_RUN(v4)
DEFINE_RUN(v8)
DEFINE_RUN(v16)
DEFINE_RUN(ell)

pb_status pb__omp_spmv_csr(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    return a->ptr_bits == 64 ? pb__omp_spmv_csr64(dev, args, s) : pb__omp_spmv_csr32(dev, args, s);
}

/* auto: csr, whose split of rows + non-zeros over the threads holds on
 * every class of the zoo (rows of any length stay on one thread, in order). */
pb_status pb__omp_spmv_auto(pb_device *dev, const void *args, pb_stream *s)
{
    return pb__omp_spmv_csr(dev, args, s);
}

pb_status pb__omp_spmv_auto_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    (void)args;
    snprintf(note, len, "csr: rows split by rows + non-zeros over %d threads", pb_device_threads(dev));
    return PB_OK;
}

/* Reference SpMV: one row at a time, CSR and row-major ELLPACK. */
#include "backends/ref/ref.h"
#include "core/backend_impl.h"

#define DEFINE_SPMV_REF(T, SUFFIX)                                                          \
    static void csr_##SUFFIX(const struct pb_spmv_args *a)                                 \
    {                                                                                      \
        const int32_t *ptr = PB__HOST(a->ptr, const int32_t), *idx = PB__HOST(a->idx, const int32_t); \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);           \
        T *y = PB__HOST(a->y, T);                                                          \
        for (int32_t i = 0; i < a->rows; i++) {                                            \
            T sum = 0;                                                                     \
            for (int32_t k = ptr[i]; k < ptr[i + 1]; k++)                                  \
                sum += val[k] * x[idx[k]];                                                 \
            y[i] = sum;                                                                    \
        }                                                                                  \
    }                                                                                      \
    static void ell_##SUFFIX(const struct pb_spmv_args *a)                                 \
    {                                                                                      \
        const int32_t *idx = PB__HOST(a->idx, const int32_t);                              \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);            \
        T *y = PB__HOST(a->y, T);                                                          \
        for (int32_t i = 0; i < a->rows; i++) {                                            \
            T sum = 0;                                                                     \
            for (int32_t j = 0; j < a->width; j++) {                                       \
                size_t at = (size_t)i * (size_t)a->width + (size_t)j;                      \
                if (idx[at] >= 0)                                                          \
                    sum += val[at] * x[idx[at]];                                           \
            }                                                                              \
            y[i] = sum;                                                                    \
        }                                                                                  \
    }

DEFINE_SPMV_REF(float, f32)
DEFINE_SPMV_REF(double, f64)

pb_status pb__ref_spmv_csr(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    const struct pb_spmv_args *a = args;
    if (a->prec == PB_DOUBLE)
        csr_f64(a);
    else
        csr_f32(a);
    return PB_OK;
}

pb_status pb__ref_spmv_ell(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    const struct pb_spmv_args *a = args;
    if (a->prec == PB_DOUBLE)
        ell_f64(a);
    else
        ell_f32(a);
    return PB_OK;
}

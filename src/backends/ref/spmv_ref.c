/* Reference SpMV: one row at a time, CSR and row-major ELLPACK. */
#include "backends/ref/ref.h"
#include "core/backend_impl.h"

/* CSR with row offsets of type P (int32_t, or int64_t where ptr_bits is 64). */
#define DEFINE_CSR_REF(T, P, SUFFIX)                                                        \
    static void csr_##SUFFIX(const struct pb_spmv_args *a)                                 \
    {                                                                                      \
        const P *ptr = PB__HOST(a->ptr, const P);                                          \
        const int32_t *idx = PB__HOST(a->idx, const int32_t);                              \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);           \
        T *y = PB__HOST(a->y, T);                                                          \
        for (int32_t i = 0; i < a->rows; i++) {                                            \
            T sum = 0;                                                                     \
            for (P k = ptr[i]; k < ptr[i + 1]; k++)                                        \
                sum += val[k] * x[idx[k]];                                                 \
            y[i] = sum;                                                                    \
        }                                                                                  \
    }

#define DEFINE_SPMV_REF(T, SUFFIX)                                                          \
    DEFINE_CSR_REF(T, int32_t, SUFFIX)                                                     \
    DEFINE_CSR_REF(T, int64_t, SUFFIX##_p64)                                               \
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
    if (a->ptr_bits == 64)
        a->prec == PB_DOUBLE ? csr_f64_p64(a) : csr_f32_p64(a);
    else
        a->prec == PB_DOUBLE ? csr_f64(a) : csr_f32(a);
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

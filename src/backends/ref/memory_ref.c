/* Reference kernels of the memory families: transpose (the two loops),
 * reduce (pairwise and Kahan summation, for accuracy) and the access patterns
 * (the loops of pb_kernels.h, serially). */
#include <stdint.h>
#include <string.h>

#include "backends/ref/ref.h"
#include "core/core.h"
#include "core/backend_impl.h"
#include "core/kernel_data.h"

/* ---- transpose ---------------------------------------------------------- */

#define DEFINE_TRANSPOSE(T, SUFFIX)                                                          \
    static void transpose_##SUFFIX(const struct pb_transpose_args *t)                       \
    {                                                                                      \
        const T *in = PB__HOST(t->in, const T);                                            \
        T *out = PB__HOST(t->out, T);                                                      \
        for (size_t i = 0; i < t->rows; i++)                                               \
            for (size_t j = 0; j < t->cols; j++)                                           \
                out[j * t->ld_out + i] = in[i * t->ld_in + j];                             \
    }
DEFINE_TRANSPOSE(float, f32)
DEFINE_TRANSPOSE(double, f64)

pb_status pb__ref_transpose(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    const struct pb_transpose_args *t = args;
    if (t->prec == PB_DOUBLE)
        transpose_f64(t);
    else
        transpose_f32(t);
    return PB_OK;
}

/* ---- reduce ------------------------------------------------------------- */

/* Pairwise summation: halves summed recursively, short runs in a loop. Any
 * element passes through at most PAIRWISE_RUN + log2(n) additions, so the
 * error stays near the accumulator's epsilon times log2(n) (Higham, 4.2). */
#define PAIRWISE_RUN 16
#define DEFINE_PAIRWISE(T, A, NAME)                                                          \
    A NAME(const T *x, size_t n)                                                           \
    {                                                                                      \
        if (n <= PAIRWISE_RUN) {                                                           \
            A s = 0;                                                                       \
            for (size_t i = 0; i < n; i++)                                                 \
                s += (A)x[i];                                                              \
            return s;                                                                      \
        }                                                                                  \
        size_t half = n / 2;                                                               \
        return NAME(x, half) + NAME(x + half, n - half);                                   \
    }
DEFINE_PAIRWISE(float, float, pb__sum_pairwise_f32)
DEFINE_PAIRWISE(float, double, pb__sum_pairwise_f32_f64)

/* Integer sums wrap modulo 2^32: unsigned arithmetic makes that defined. */
uint32_t pb__sum_u32(const uint32_t *x, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s;
}

void pb__reduce_store(const struct pb_reduce_args *r, float f, double d, uint32_t u)
{
    void *out = r->out->host;
    if (r->type == PB_REDUCE_FLOAT)
        memcpy(out, &f, sizeof f);
    else if (r->type == PB_REDUCE_FLOAT_DOUBLE)
        memcpy(out, &d, sizeof d);
    else
        memcpy(out, &u, sizeof u);
}

/* r's sum with the float and the float-into-double summation given (integers
 * are exact in any order). */
static pb_status reduce_with(const struct pb_reduce_args *r, float (*sum_f32)(const float *, size_t),
                             double (*sum_f32_f64)(const float *, size_t))
{
    const void *in = r->in ? r->in->host : NULL;
    if (r->type == PB_REDUCE_INT)
        pb__reduce_store(r, 0, 0, r->n ? pb__sum_u32(in, r->n) : 0);
    else if (r->type == PB_REDUCE_FLOAT_DOUBLE)
        pb__reduce_store(r, 0, r->n ? sum_f32_f64(in, r->n) : 0, 0);
    else
        pb__reduce_store(r, r->n ? sum_f32(in, r->n) : 0, 0, 0);
    return PB_OK;
}

pb_status pb__ref_reduce_pairwise(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    return reduce_with(args, pb__sum_pairwise_f32, pb__sum_pairwise_f32_f64);
}

/* Kahan's compensated sum: the rounding error of each addition is carried
 * into the next, so the error does not grow with n (Higham, 4.3). */
#define DEFINE_KAHAN(A, NAME)                                                                \
    static A NAME(const float *x, size_t n)                                                \
    {                                                                                      \
        A s = 0, c = 0;                                                                    \
        for (size_t i = 0; i < n; i++) {                                                   \
            A y = (A)x[i] - c, t = s + y;                                                  \
            c = (t - s) - y;                                                               \
            s = t;                                                                         \
        }                                                                                  \
        return s;                                                                          \
    }
DEFINE_KAHAN(float, kahan_f32)
DEFINE_KAHAN(double, kahan_f32_f64)

pb_status pb__ref_reduce_kahan(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    return reduce_with(args, kahan_f32, kahan_f32_f64);
}

/* ---- access ------------------------------------------------------------- */

#define DEFINE_ACCESS(T, SUFFIX)                                                             \
    static void access_##SUFFIX(const struct pb_access_args *a, enum pb__access_pattern p)  \
    {                                                                                      \
        const T *in = PB__HOST(a->in, const T);                                            \
        T *out = PB__HOST(a->out, T);                                                      \
        if (p == PB__ACCESS_OFFSET) {                                                      \
            for (size_t i = 0; i < a->n; i++)                                              \
                out[i + a->step] = in[i + a->step];                                        \
        } else if (p == PB__ACCESS_STRIDE) {                                               \
            for (size_t i = 0; i < a->n; i++)                                              \
                out[i * a->step] = in[i * a->step];                                        \
        } else {                                                                           \
            for (size_t i = 0; i < a->n; i++) {                                            \
                size_t t = i % PB_ACCESS_BLOCK;                                            \
                T sum = 0;                                                                 \
                for (size_t k = 0; k < PB_ACCESS_SHARED_LOADS; k++)                        \
                    sum += in[(t * a->step + k) % PB_ACCESS_SHARED_ELEMS];                 \
                out[i] = sum;                                                              \
            }                                                                              \
        }                                                                                  \
    }
DEFINE_ACCESS(float, f32)
DEFINE_ACCESS(double, f64)

static pb_status access_run(const void *args, enum pb__access_pattern p)
{
    const struct pb_access_args *a = args;
    if (a->prec == PB_DOUBLE)
        access_f64(a, p);
    else
        access_f32(a, p);
    return PB_OK;
}

pb_status pb__ref_access_offset(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    return access_run(args, PB__ACCESS_OFFSET);
}

pb_status pb__ref_access_stride(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    return access_run(args, PB__ACCESS_STRIDE);
}

pb_status pb__ref_access_shared(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    return access_run(args, PB__ACCESS_SHARED);
}

/* access/fault (hidden, test-only): fails as a device would, so the run
 * loop's handling of a device error is tested where there is no GPU. */
pb_status pb__ref_access_fault(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)args, (void)s;
    return pb__fail(PB_ERR_DEVICE, "planted device fault (the test-only variant ref/fault)");
}

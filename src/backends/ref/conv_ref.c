/* Reference separable convolution: a row pass into tmp, then a column pass,
 * each output a plain sum over the taps accumulated in double. The same
 * passes, over double arrays and split over threads, are the benchmarks'
 * oracle (pb__conv_oracle). */
#include <stdlib.h>

#include "backends/ref/ref.h"
#include "core/backend_impl.h"
#include "core/core.h"

/* Row pass over rows [r0, r1) of in (width w) into tmp, then column pass
 * into out rows [0, h) reading tmp rows in_top - R ... (see pb_conv_args). */
#define DEFINE_CONV_PASSES(SUFFIX, TIN, TMID, TOUT)                                                        \
    static void conv_rows_##SUFFIX(const TIN *in, TMID *tmp, size_t w, size_t rows, const double *f,      \
                                   size_t radius, enum pb_conv_border border, bool threads)               \
    {                                                                                                     \
        const long R = (long)radius, W = (long)w, n_rows = (long)rows;                                    \
        _Pragma("omp parallel for if(threads) schedule(static)") for (long y = 0; y < n_rows; y++)         \
        {                                                                                                 \
            const TIN *src = in + (size_t)y * w;                                                          \
            for (long x = 0; x < W; x++) {                                                                \
                double acc = 0;                                                                           \
                for (long k = -R; k <= R; k++) {                                                          \
                    long i = pb__conv_border_index(x + k, W, border);                                     \
                    if (i >= 0)                                                                           \
                        acc += f[k + R] * (double)src[i];                                                 \
                }                                                                                         \
                tmp[(size_t)y * w + (size_t)x] = (TMID)acc;                                               \
            }                                                                                             \
        }                                                                                                 \
    }                                                                                                     \
    static void conv_cols_##SUFFIX(const TMID *tmp, TOUT *out, size_t w, size_t h, size_t in_rows,        \
                                   size_t in_top, const double *f, size_t radius,                         \
                                   enum pb_conv_border border, bool threads)                              \
    {                                                                                                     \
        const long R = (long)radius, H = (long)h;                                                         \
        _Pragma("omp parallel for if(threads) schedule(static)") for (long y = 0; y < H; y++)              \
        {                                                                                                 \
            for (size_t x = 0; x < w; x++) {                                                              \
                double acc = 0;                                                                           \
                for (long k = -R; k <= R; k++) {                                                          \
                    long r = pb__conv_border_index(y + (long)in_top + k, (long)in_rows, border);          \
                    if (r >= 0)                                                                           \
                        acc += f[k + R] * (double)tmp[(size_t)r * w + x];                                 \
                }                                                                                         \
                out[(size_t)y * w + x] = (TOUT)acc;                                                       \
            }                                                                                             \
        }                                                                                                 \
    }

DEFINE_CONV_PASSES(f32, float, float, float)
DEFINE_CONV_PASSES(f64, double, double, double)
DEFINE_CONV_PASSES(oracle_f32, float, double, double)
DEFINE_CONV_PASSES(oracle_f64, double, double, double)

pb_status pb__conv_ref(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    const struct pb_conv_args *a = args;
    size_t taps = 2 * a->radius + 1;
    double *f = malloc(taps * sizeof *f);
    if (!f)
        return pb__fail(PB_ERR_NOMEM, "conv: out of host memory for the filter");
    for (size_t k = 0; k < taps; k++)
        f[k] = a->prec == PB_DOUBLE ? PB__HOST(a->filter, const double)[k]
                                    : (double)PB__HOST(a->filter, const float)[k];
    if (a->prec == PB_DOUBLE) {
        conv_rows_f64(PB__HOST(a->in, const double), PB__HOST(a->tmp, double), a->width, a->in_rows, f,
                      a->radius, a->border, false);
        conv_cols_f64(PB__HOST(a->tmp, const double), PB__HOST(a->out, double), a->width, a->height,
                      a->in_rows, a->in_top, f, a->radius, a->border, false);
    } else {
        conv_rows_f32(PB__HOST(a->in, const float), PB__HOST(a->tmp, float), a->width, a->in_rows, f,
                      a->radius, a->border, false);
        conv_cols_f32(PB__HOST(a->tmp, const float), PB__HOST(a->out, float), a->width, a->height,
                      a->in_rows, a->in_top, f, a->radius, a->border, false);
    }
    free(f);
    return PB_OK;
}

void pb__conv_oracle(const void *in, enum pb_precision prec, size_t width, size_t in_rows, size_t in_top,
                     size_t height, const double *taps, size_t radius, enum pb_conv_border border,
                     double *tmp, double *out)
{
    if (prec == PB_DOUBLE) {
        conv_rows_oracle_f64(in, tmp, width, in_rows, taps, radius, border, true);
        conv_cols_oracle_f64(tmp, out, width, height, in_rows, in_top, taps, radius, border, true);
    } else {
        conv_rows_oracle_f32(in, tmp, width, in_rows, taps, radius, border, true);
        conv_cols_oracle_f32(tmp, out, width, height, in_rows, in_top, taps, radius, border, true);
    }
}

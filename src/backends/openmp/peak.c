/* Peak-rate kernels on the host CPU. FMA: blocks of elements whose chains
 * the compiler keeps in vector registers, enough independent FMAs in flight
 * to cover their latency; fma() so the operation is fused whatever the
 * floating-point contraction setting. Read: one contiguous slice per group,
 * four accumulators each. */
#include <math.h>
#include <omp.h>

#include "backends/openmp/peak.h"
#include "parbench/pb_kernels.h"

#define BLOCK 8 /* elements at once: BLOCK * PB_PEAK_CHAINS accumulators */

static int threads_of(const pb_device *dev) { return dev->threads > 0 ? dev->threads : 1; }

#define DEFINE_PEAK(T, SUFFIX, FMA)                                                               \
    static void fma_##SUFFIX(const struct pb_peak_args *p, int threads)                           \
    {                                                                                             \
        T *out = PB__HOST(p->out, T);                                                             \
        const T a = (T)p->a, b = (T)p->b;                                                         \
        const long blocks = (long)((p->n + BLOCK - 1) / BLOCK);                                   \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                         \
        for (long blk = 0; blk < blocks; blk++) {                                                 \
            T x[BLOCK * PB_PEAK_CHAINS];                                                          \
            size_t i0 = (size_t)blk * BLOCK;                                                      \
            for (int k = 0; k < BLOCK * PB_PEAK_CHAINS; k++)                                      \
                x[k] = (T)1 + (T)((i0 + (size_t)(k / PB_PEAK_CHAINS)) % 64) / (T)64 +             \
                       (T)(k % PB_PEAK_CHAINS) / (T)8;                                            \
            for (unsigned it = 0; it < p->iters; it++)                                            \
                for (int k = 0; k < BLOCK * PB_PEAK_CHAINS; k++)                                  \
                    x[k] = FMA(x[k], a, b);                                                       \
            for (int e = 0; e < BLOCK && i0 + (size_t)e < p->n; e++) {                            \
                T sum = 0;                                                                        \
                for (int j = 0; j < PB_PEAK_CHAINS; j++)                                          \
                    sum += x[e * PB_PEAK_CHAINS + j];                                             \
                out[i0 + (size_t)e] = sum;                                                        \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    static void read_##SUFFIX(const struct pb_peak_args *p, int threads)                          \
    {                                                                                             \
        const T *in = PB__HOST(p->in, const T);                                                   \
        T *out = PB__HOST(p->out, T);                                                             \
        const long groups = (long)p->groups;                                                      \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                         \
        for (long g = 0; g < groups; g++) {                                                       \
            size_t lo = p->n * (size_t)g / (size_t)groups, hi = p->n * (size_t)(g + 1) / (size_t)groups; \
            T s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                     \
            size_t i = lo;                                                                        \
            for (; i + 4 <= hi; i += 4) {                                                         \
                s0 += in[i];                                                                      \
                s1 += in[i + 1];                                                                  \
                s2 += in[i + 2];                                                                  \
                s3 += in[i + 3];                                                                  \
            }                                                                                     \
            for (; i < hi; i++)                                                                   \
                s0 += in[i];                                                                      \
            out[g] = (s0 + s1) + (s2 + s3);                                                       \
        }                                                                                         \
    }

DEFINE_PEAK(float, f32, fmaf)
DEFINE_PEAK(double, f64, fma)

pb_status pb__omp_peak_fma(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_peak_args *p = args;
    if (p->prec == PB_DOUBLE)
        fma_f64(p, threads_of(dev));
    else
        fma_f32(p, threads_of(dev));
    return PB_OK;
}

pb_status pb__omp_peak_read(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_peak_args *p = args;
    if (p->prec == PB_DOUBLE)
        read_f64(p, threads_of(dev));
    else
        read_f32(p, threads_of(dev));
    return PB_OK;
}

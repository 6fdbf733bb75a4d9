/* Peak-rate kernels on the host CPU. FMA: blocks of elements whose chains
 * the compiler keeps in vector registers, enough independent vector FMAs in
 * flight to cover their latency on every FMA port; fma() so the operation
 * is fused whatever the floating-point contraction setting. Read: one
 * contiguous slice per group, four accumulators each. Copy: STREAM's Copy,
 * each thread its share (pb__omp_share), the share the backend's fill first
 * touches its pages with, streaming stores on x86. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "backends/openmp/peak.h"
#include "parbench/pb_kernels.h"

/* Vector registers of the FMA accumulators per thread: at least FMA latency
 * (4 cycles) x FMA ports (2) independent chains, few enough that they, a and
 * b stay in registers (16 vector registers before AVX-512, where GCC spills
 * at 12; 32 with it and on AArch64). Counted in bytes, so float blocks hold
 * twice the elements of double ones and both run at the vector unit's width. */
#if defined(__AVX512F__)
#define VEC_BYTES 64
#define VEC_ACCS 16
#elif defined(__AVX__)
#define VEC_BYTES 32
#define VEC_ACCS 10
#elif defined(__aarch64__)
#define VEC_BYTES 16
#define VEC_ACCS 16
#else
#define VEC_BYTES 16
#define VEC_ACCS 12
#endif
#define ACC_BYTES (VEC_BYTES * VEC_ACCS)

static int threads_of(const pb_device *dev) { return dev->threads > 0 ? dev->threads : 1; }

/* ACC accumulators = BLOCK elements x PB_PEAK_CHAINS chains, element-major:
 * x[e * CHAINS + j] is chain j of element i0 + e. The simd loop over all of
 * them is what the compiler turns into VEC_ACCS packed FMAs per step. */
#define DEFINE_PEAK(T, SUFFIX, FMA)                                                               \
    enum { ACC_##SUFFIX = ACC_BYTES / (int)sizeof(T), BLOCK_##SUFFIX = ACC_##SUFFIX / PB_PEAK_CHAINS }; \
    _Static_assert(ACC_##SUFFIX % PB_PEAK_CHAINS == 0, "whole elements per block");              \
    static void fma_##SUFFIX(const struct pb_peak_args *p, int threads)                           \
    {                                                                                             \
        T *out = PB__HOST(p->out, T);                                                             \
        const T a = (T)p->a, b = (T)p->b;                                                         \
        const long blocks = (long)((p->n + BLOCK_##SUFFIX - 1) / BLOCK_##SUFFIX);                 \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                         \
        for (long blk = 0; blk < blocks; blk++) {                                                 \
            T x[ACC_##SUFFIX];                                                                    \
            size_t i0 = (size_t)blk * BLOCK_##SUFFIX;                                             \
            for (int k = 0; k < ACC_##SUFFIX; k++)                                                \
                x[k] = (T)1 + (T)((i0 + (size_t)(k / PB_PEAK_CHAINS)) % 64) / (T)64 +             \
                       (T)(k % PB_PEAK_CHAINS) / (T)8;                                            \
            for (unsigned it = 0; it < p->iters; it++) {                                          \
                _Pragma("omp simd")                                                               \
                for (int k = 0; k < ACC_##SUFFIX; k++)                                            \
                    x[k] = FMA(x[k], a, b);                                                       \
            }                                                                                     \
            for (int e = 0; e < BLOCK_##SUFFIX && i0 + (size_t)e < p->n; e++) {                   \
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

/* One share of copy. On x86 the stores bypass the caches (non-temporal, as
 * a tuned STREAM's do): without, every line written is first read in, and
 * the copy would move 3 bytes for the 2 it counts. Elsewhere memcpy. */
static void copy_share(unsigned char *out, const unsigned char *in, size_t bytes)
{
#if defined(__SSE2__)
#if defined(__AVX512F__)
    typedef __m512i vec;
#define STREAM_VEC(d, s) _mm512_stream_si512((void *)(d), _mm512_loadu_si512((const void *)(s)))
#elif defined(__AVX__)
    typedef __m256i vec;
#define STREAM_VEC(d, s) _mm256_stream_si256((vec *)(d), _mm256_loadu_si256((const vec *)(s)))
#else
    typedef __m128i vec;
#define STREAM_VEC(d, s) _mm_stream_si128((vec *)(d), _mm_loadu_si128((const vec *)(s)))
#endif
    size_t head = (sizeof(vec) - (uintptr_t)out % sizeof(vec)) % sizeof(vec);
    if (head > bytes)
        head = bytes;
    memcpy(out, in, head);
    size_t i = head;
    for (; i + sizeof(vec) <= bytes; i += sizeof(vec))
        STREAM_VEC(out + i, in + i);
#undef STREAM_VEC
    memcpy(out + i, in + i, bytes - i);
    _mm_sfence(); /* streaming stores are weakly ordered: visible before the region ends */
#else
    memcpy(out, in, bytes);
#endif
}

pb_status pb__omp_peak_copy(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_peak_args *p = args;
    const size_t bytes = p->n * pb_precision_size(p->prec);
    const unsigned char *in = p->in->host;
    unsigned char *out = p->out->host;
#pragma omp parallel num_threads(threads_of(dev))
    {
        size_t lo, hi;
        pb__omp_share(bytes, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        if (hi > lo)
            copy_share(out + lo, in + lo, hi - lo);
    }
    return PB_OK;
}

pb_status pb__omp_fill(pb_buf *buf, unsigned char value)
{
    unsigned char *p = buf->host;
    const size_t bytes = buf->bytes;
#pragma omp parallel num_threads(threads_of(buf->dev)) if (bytes >= ((size_t)1 << 20))
    {
        size_t lo, hi;
        pb__omp_share(bytes, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        if (hi > lo)
            memset(p + lo, value, hi - lo);
    }
    return PB_OK;
}

/* Separable convolution on OpenMP threads, cache-friendly: each thread takes
 * a band of output rows and keeps the row-filtered rows it needs in a ring of
 * 2R+1 rows (L2-sized for small R), so the intermediate image never goes to
 * memory: one read of the input and one write of the output. Both passes are
 * written as tap-outer, pixel-inner loops that the compiler vectorises; the
 * band edges refilter 2R rows, a small price for no barriers. args->tmp is
 * not used. */
#include <omp.h>
#include <string.h>

#include "backends/openmp/conv_omp.h"
#include "backends/ref/ref.h"
#include "core/backend_impl.h"
#include "core/core.h"

#define DEFINE_CONV_RING(T, SUFFIX)                                                                        \
    /* dst = src filtered along the row. */                                                                \
    static void row_pass_##SUFFIX(const T *restrict src, T *restrict dst, long w, const T *restrict f,     \
                                  long r, enum pb_conv_border border)                                      \
    {                                                                                                      \
        long lo = r < w ? r : w, hi = w - r > lo ? w - r : lo; /* interior [lo, hi) */                     \
        for (long x = lo; x < hi; x++)                                                                     \
            dst[x] = 0;                                                                                    \
        for (long k = 0; k <= 2 * r; k++) {                                                                \
            const T fk = f[k];                                                                             \
            const T *s = src + k - r;                                                                      \
            _Pragma("omp simd") for (long x = lo; x < hi; x++) dst[x] += fk * s[x];                        \
        }                                                                                                  \
        for (long x = 0; x < w; x++) {                                                                     \
            if (x == lo)                                                                                   \
                x = hi;                                                                                    \
            if (x >= w)                                                                                    \
                break;                                                                                     \
            T acc = 0;                                                                                     \
            for (long k = -r; k <= r; k++) {                                                               \
                long i = pb__conv_border_index(x + k, w, border);                                          \
                if (i >= 0)                                                                                \
                    acc += f[k + r] * src[i];                                                              \
            }                                                                                              \
            dst[x] = acc;                                                                                  \
        }                                                                                                  \
    }                                                                                                      \
                                                                                                           \
    static void band_##SUFFIX(const struct pb_conv_args *a, const T *f, T *ring, long y0, long y1)         \
    {                                                                                                      \
        const long r = (long)a->radius, w = (long)a->width, len = 2 * r + 1;                               \
        const T *in = PB__HOST(a->in, const T);                                                            \
        T *out = PB__HOST(a->out, T);                                                                      \
        const long base = y0 - r; /* first virtual row the band needs */                                   \
        long last = -1;           /* the input row the previous ring row was filtered from */              \
        for (long v = base; v < y1 + r; v++) {                                                             \
            /* row v (relative to the first output row) enters the ring */                                 \
            long i = pb__conv_border_index(v + (long)a->in_top, (long)a->in_rows, a->border);              \
            T *slot = ring + ((v - base) % len) * w;                                                       \
            if (i >= 0 && i == last) /* clamp: the edge row again, already filtered (R past the image) */  \
                memcpy(slot, ring + ((v - 1 - base) % len) * w, (size_t)w * sizeof(T));                    \
            else if (i >= 0) /* (zero border: rows outside stay unwritten, the column pass skips them) */  \
                row_pass_##SUFFIX(in + (size_t)i * (size_t)w, slot, w, f, r, a->border);                   \
            last = i;                                                                                      \
            long y = v - r; /* the output row now complete */                                              \
            if (y < y0)                                                                                    \
                continue;                                                                                  \
            T *o = out + (size_t)y * (size_t)w;                                                            \
            /* zero border: only the taps on rows inside the image (R past it: most are zero rows) */     \
            long k0 = 0, k1 = len - 1, top = y - r + (long)a->in_top;                                      \
            if (a->border == PB_CONV_ZERO) {                                                               \
                k0 = top < 0 ? -top : 0;                                                                   \
                k1 = (long)a->in_rows - 1 - top < k1 ? (long)a->in_rows - 1 - top : k1;                   \
            }                                                                                              \
            if (k0 > k1) {                                                                                 \
                memset(o, 0, (size_t)w * sizeof(T));                                                       \
                continue;                                                                                  \
            }                                                                                              \
            const T *first = ring + ((y - r + k0 - base) % len) * w;                                       \
            _Pragma("omp simd") for (long x = 0; x < w; x++) o[x] = f[k0] * first[x];                      \
            for (long k = k0 + 1; k <= k1; k++) {                                                          \
                const T fk = f[k];                                                                         \
                const T *s = ring + ((y - r + k - base) % len) * w;                                        \
                _Pragma("omp simd") for (long x = 0; x < w; x++) o[x] += fk * s[x];                        \
            }                                                                                              \
        }                                                                                                  \
    }                                                                                                      \
                                                                                                           \
    static pb_status conv_ring_##SUFFIX(const struct pb_conv_args *a, int threads)                         \
    {                                                                                                      \
        const long h = (long)a->height;                                                                    \
        size_t ring_elems = (2 * a->radius + 1) * a->width;                                                \
        if (threads > h)                                                                                   \
            threads = h > 0 ? (int)h : 1;                                                                  \
        T *rings;                                                                                          \
        size_t bytes;                                                                                      \
        if (!pb__mul_size(ring_elems, (size_t)threads * sizeof(T), &bytes))                                \
            return pb__fail(PB_ERR_OVERFLOW, "conv: ring buffer size overflows");                          \
        pb_status st = pb__host_alloc(bytes, "conv row rings", (void **)&rings);                           \
        if (st != PB_OK)                                                                                   \
            return st;                                                                                     \
        const T *f = PB__HOST(a->filter, const T);                                                         \
        _Pragma("omp parallel num_threads(threads)")                                                       \
        {                                                                                                  \
            long t = omp_get_thread_num(), n = omp_get_num_threads();                                      \
            band_##SUFFIX(a, f, rings + (size_t)t * ring_elems, h * t / n, h * (t + 1) / n);               \
        }                                                                                                  \
        pb__host_free(rings);                                                                              \
        return PB_OK;                                                                                      \
    }

DEFINE_CONV_RING(float, f32)
DEFINE_CONV_RING(double, f64)

pb_status pb__omp_conv_ring(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_conv_args *a = args;
    int threads = dev->threads > 0 ? dev->threads : 1;
    if (a->height == 0 || a->width == 0)
        return PB_OK;
    return a->prec == PB_DOUBLE ? conv_ring_f64(a, threads) : conv_ring_f32(a, threads);
}

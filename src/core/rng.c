/* xoshiro256** (Blackman & Vigna), seeded through splitmix64. */
#include <stdbool.h>
#include <stdlib.h>

#include "core/precision.h"
#include "core/rng.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void pb__rng_init(struct pb_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

uint64_t pb__rng_next(struct pb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double pb__rng_uniform(struct pb_rng *r)
{
    /* 53 random bits, offset by half a step so 0 is never produced. */
    double u = ((double)(pb__rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
    return 2.0 * u - 1.0;
}

double pb__rng_at(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint64_t key = seed ^ (stream * 0xd1b54a32d192ed03ull);
    uint64_t x = splitmix64(&key) + index * 0x9e3779b97f4a7c15ull;
    double u = ((double)(splitmix64(&x) >> 11) + 0.5) * 0x1.0p-53;
    return 2.0 * u - 1.0;
}

void pb__rng_fill(struct pb_rng *r, void *dst, enum pb_precision prec, size_t n)
{
    if (prec == PB_DOUBLE) {
        double *d = dst;
        for (size_t i = 0; i < n; i++)
            d[i] = pb__rng_uniform(r);
    } else if (prec == PB_FLOAT) {
        float *f = dst;
        for (size_t i = 0; i < n; i++)
            f[i] = (float)pb__rng_uniform(r);
    } else { /* the float values, rounded to the narrower type */
        for (size_t i = 0; i < n; i++)
            pb__precision_store(dst, prec, i, (float)pb__rng_uniform(r));
    }
}

static int cmp_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return (a > b) - (a < b);
}

void pb__rng_sample_rows(uint64_t seed, size_t m, size_t *rows, size_t n)
{
    struct pb_rng rng;
    pb__rng_init(&rng, seed, 3);
    rows[0] = 0;
    rows[1] = m - 1;
    for (size_t r = 2; r < n; r++) {
        size_t i;
        bool dup;
        do {
            i = 1 + (size_t)(pb__rng_next(&rng) % (m - 2));
            dup = false;
            for (size_t q = 0; q < r && !dup; q++)
                dup = rows[q] == i;
        } while (dup);
        rows[r] = i;
    }
    qsort(rows, n, sizeof *rows, cmp_size);
}

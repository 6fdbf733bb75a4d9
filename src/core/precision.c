/* Precisions: names, sizes and the round-to-nearest-even conversions of the
 * tensor-core input types (precision.h). Bit-level, so the host's results
 * match the GPU's conversion instructions exactly. */
#include <stdio.h>

#include "core/precision.h"

static const struct {
    const char *name, *alias;
    size_t size;
} precisions[PB__PRECISIONS] = {
    [PB_FLOAT] = {"float", "fp32", sizeof(float)},
    [PB_DOUBLE] = {"double", "fp64", sizeof(double)},
    [PB_TF32] = {"tf32", NULL, sizeof(float)},
    [PB_BF16] = {"bf16", NULL, sizeof(uint16_t)},
    [PB_FP16] = {"fp16", NULL, sizeof(uint16_t)},
};

static bool known(enum pb_precision p) { return (unsigned)p < PB__PRECISIONS; }

const char *pb_precision_name(enum pb_precision p) { return known(p) ? precisions[p].name : "unknown"; }

size_t pb_precision_size(enum pb_precision p) { return known(p) ? precisions[p].size : 0; }

bool pb__precision_parse(const char *name, enum pb_precision *out)
{
    for (unsigned i = 0; i < PB__PRECISIONS; i++)
        if (strcmp(name, precisions[i].name) == 0 || (precisions[i].alias && strcmp(name, precisions[i].alias) == 0)) {
            *out = (enum pb_precision)i;
            return true;
        }
    return false;
}

const char *pb__precision_names(char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (unsigned i = 0; i < PB__PRECISIONS && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", precisions[i].name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return buf;
}

/* Drops the low `drop` bits of an fp32 pattern, rounding to nearest even; a
 * carry into the exponent is the right result (up to Inf on overflow). */
static uint32_t round_bits(uint32_t u, unsigned drop)
{
    uint32_t half = (1u << (drop - 1)) - 1, odd = (u >> drop) & 1;
    return (u + half + odd) >> drop;
}

uint16_t pb__f32_to_bf16(float x)
{
    uint32_t u = pb__f32_bits(x);
    if ((u & 0x7fffffff) > 0x7f800000) /* NaN: keep the sign, make it quiet */
        return (uint16_t)((u >> 16) | 0x0040);
    return (uint16_t)round_bits(u, 16);
}

float pb__bf16_to_f32(uint16_t h) { return pb__f32_from_bits((uint32_t)h << 16); }

float pb__f32_to_tf32(float x)
{
    uint32_t u = pb__f32_bits(x);
    if ((u & 0x7f800000) == 0x7f800000) /* Inf, NaN */
        return x;
    return pb__f32_from_bits(round_bits(u, 13) << 13);
}

uint16_t pb__f32_to_f16(float x)
{
    uint32_t u = pb__f32_bits(x), sign = (u >> 16) & 0x8000, a = u & 0x7fffffff;
    if (a > 0x7f800000)
        return (uint16_t)(sign | 0x7e00); /* NaN */
    if (a >= 0x477ff000)                  /* >= 65520 (Inf included): past the last half-way point */
        return (uint16_t)(sign | 0x7c00);
    if (a >= 0x38800000) /* normal in fp16 (>= 2^-14): rebias the exponent by 127 - 15 */
        return (uint16_t)(sign | round_bits(a - (112u << 23), 13));
    if (a <= 0x33000000) /* <= 2^-25, half the smallest subnormal: ties to even, 0 */
        return (uint16_t)sign;
    /* Subnormal: value = mantissa * 2^(e - 150) = h * 2^-24, so h = mantissa >> (126 - e). */
    uint32_t e = a >> 23, mant = (a & 0x7fffff) | 0x800000;
    return (uint16_t)(sign | round_bits(mant, 126 - e));
}

float pb__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f)
        return pb__f32_from_bits(sign | 0x7f800000 | (m << 13));
    if (e)
        return pb__f32_from_bits(sign | ((e + 112) << 23) | (m << 13));
    /* zero or subnormal: m * 2^-24, exact in fp32 */
    float v = (float)m * 0x1p-24f;
    return sign ? -v : v;
}

void pb__precision_store(void *x, enum pb_precision p, size_t i, double v)
{
    switch (p) {
    case PB_DOUBLE:
        ((double *)x)[i] = v;
        break;
    case PB_TF32:
        ((float *)x)[i] = pb__f32_to_tf32((float)v);
        break;
    case PB_BF16:
        ((uint16_t *)x)[i] = pb__f32_to_bf16((float)v);
        break;
    case PB_FP16:
        ((uint16_t *)x)[i] = pb__f32_to_f16((float)v);
        break;
    default:
        ((float *)x)[i] = (float)v;
        break;
    }
}

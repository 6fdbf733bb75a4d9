/* Element types beyond float and double: the tensor-core input types of gemm
 * (pb.h: PB_TF32, PB_BF16, PB_FP16), their conversions, and the few facts
 * about a precision that code must ask rather than assume ("not double, so
 * float" is wrong for them).
 *
 * Conversions from fp32 round to nearest, ties to even (IEEE's default and
 * what __float2bfloat16_rn / __float2half_rn do); overflow gives Inf, NaN
 * stays NaN, fp16's subnormals are kept (not flushed). */
#ifndef PARBENCH_PRECISION_H
#define PARBENCH_PRECISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "parbench/pb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One past the last value of enum pb_precision. */
#define PB__PRECISIONS 5

/* The bits of an fp32 value, and back. */
static inline uint32_t pb__f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline float pb__f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

uint16_t pb__f32_to_bf16(float x);
float pb__bf16_to_f32(uint16_t h);
uint16_t pb__f32_to_f16(float x);
float pb__f16_to_f32(uint16_t h);
/* x rounded to TF32's 10 explicit mantissa bits (still an fp32 value). */
float pb__f32_to_tf32(float x);

/* TF32, BF16, FP16: inputs of that type, fp32 accumulation, fp32 output. */
static inline bool pb__precision_lowp(enum pb_precision p)
{
    return p == PB_TF32 || p == PB_BF16 || p == PB_FP16;
}

/* The type of a result computed from inputs of type p: p itself for float
 * and double, float for the tensor-core types. */
static inline enum pb_precision pb__precision_out(enum pb_precision p)
{
    return p == PB_DOUBLE ? PB_DOUBLE : PB_FLOAT;
}

/* --precision names: float (fp32), double (fp64), tf32, bf16, fp16. */
bool pb__precision_parse(const char *name, enum pb_precision *out);

/* "float, double, tf32, bf16, fp16" into buf. */
const char *pb__precision_names(char *buf, size_t len);

/* Element i of x, stored in precision p, as a double (exact for every type). */
static inline double pb__precision_value(const void *x, enum pb_precision p, size_t i)
{
    switch (p) {
    case PB_DOUBLE:
        return ((const double *)x)[i];
    case PB_BF16:
        return (double)pb__bf16_to_f32(((const uint16_t *)x)[i]);
    case PB_FP16:
        return (double)pb__f16_to_f32(((const uint16_t *)x)[i]);
    default: /* float, tf32 */
        return (double)((const float *)x)[i];
    }
}

/* Stores v into element i of x in precision p: rounded to fp32 first unless
 * p is double, then to the type (nearest even). */
void pb__precision_store(void *x, enum pb_precision p, size_t i, double v);

#ifdef __cplusplus
}
#endif
#endif

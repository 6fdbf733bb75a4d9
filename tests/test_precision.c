/* The tensor-core types (tf32, bf16, fp16): round-to-nearest-even conversions
 * (ties, overflow to Inf, NaN, fp16's subnormals, every 16-bit pattern back
 * and forth, the compiler's own _Float16 where it has one) and the precision
 * names. gemm's check in these types: test_verify.c. */
#include <float.h>

#include "test_util.h"

#include "core/precision.h"
#include "core/rng.h"

static float f_of(uint32_t u) { return pb__f32_from_bits(u); }
static uint32_t u_of(float x) { return pb__f32_bits(x); }

static void test_names(void **state)
{
    (void)state;
    static const struct {
        enum pb_precision p;
        const char *name;
        size_t size;
    } known[] = {{PB_FLOAT, "float", 4}, {PB_DOUBLE, "double", 8}, {PB_TF32, "tf32", 4},
                 {PB_BF16, "bf16", 2},   {PB_FP16, "fp16", 2}};
    assert_int_equal(PB_FLOAT, 0); /* the ABI's values */
    assert_int_equal(PB_DOUBLE, 1);
    for (size_t i = 0; i < PB_ARRAY_LEN(known); i++) {
        enum pb_precision got = (enum pb_precision)99;
        assert_string_equal(pb_precision_name(known[i].p), known[i].name);
        assert_int_equal(pb_precision_size(known[i].p), known[i].size);
        assert_true(pb__precision_parse(known[i].name, &got));
        assert_int_equal(got, known[i].p);
    }
    assert_string_equal(pb_precision_name((enum pb_precision)5), "unknown");
    assert_int_equal(pb_precision_size((enum pb_precision)5), 0);
    enum pb_precision p;
    assert_true(pb__precision_parse("fp32", &p) && p == PB_FLOAT);
    assert_true(pb__precision_parse("fp64", &p) && p == PB_DOUBLE);
    assert_false(pb__precision_parse("bf61", &p));
    assert_false(pb__precision_parse("half", &p));
    assert_false(pb__precision_parse("", &p));
    assert_true(pb__precision_lowp(PB_BF16) && pb__precision_lowp(PB_TF32) && pb__precision_lowp(PB_FP16));
    assert_false(pb__precision_lowp(PB_FLOAT) || pb__precision_lowp(PB_DOUBLE));
    assert_int_equal(pb__precision_out(PB_FP16), PB_FLOAT);
    assert_int_equal(pb__precision_out(PB_DOUBLE), PB_DOUBLE);
}

static void test_bf16(void **state)
{
    (void)state;
    assert_int_equal(pb__f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(pb__f32_to_bf16(-2.0f), 0xc000);
    assert_int_equal(pb__f32_to_bf16(-0.0f), 0x8000);
    /* ties to even: 1 + 2^-8 between 0x3f80 and 0x3f81; 1 + 3 * 2^-8 between 0x3f81 and 0x3f82 */
    assert_int_equal(pb__f32_to_bf16(f_of(0x3f808000)), 0x3f80);
    assert_int_equal(pb__f32_to_bf16(f_of(0x3f818000)), 0x3f82);
    assert_int_equal(pb__f32_to_bf16(f_of(0x3f808001)), 0x3f81); /* just past the tie */
    assert_int_equal(pb__f32_to_bf16(f_of(0x3f807fff)), 0x3f80);
    /* overflow: past the midpoint between the largest bf16 and 2^128 */
    assert_int_equal(pb__f32_to_bf16(FLT_MAX), 0x7f80);
    assert_int_equal(pb__f32_to_bf16(-FLT_MAX), 0xff80);
    assert_int_equal(pb__f32_to_bf16(f_of(0x7f7f7fff)), 0x7f7f);
    assert_int_equal(pb__f32_to_bf16(INFINITY), 0x7f80);
    assert_true(isnan(pb__bf16_to_f32(pb__f32_to_bf16(NAN))));
    assert_true(isnan(pb__bf16_to_f32(pb__f32_to_bf16(f_of(0x7f800001))))); /* a NaN that rounding would make Inf */
    /* subnormals keep their bits */
    assert_int_equal(pb__f32_to_bf16(f_of(0x00010000)), 0x0001);
    /* every non-NaN pattern converts back to itself */
    for (uint32_t h = 0; h < 0x10000; h++) {
        float x = pb__bf16_to_f32((uint16_t)h);
        assert_int_equal(u_of(x), h << 16);
        if (!isnan(x))
            assert_int_equal(pb__f32_to_bf16(x), h);
    }
}

static void test_fp16(void **state)
{
    (void)state;
    assert_int_equal(pb__f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(pb__f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(pb__f32_to_f16(65504.0f), 0x7bff);
    /* ties to even: 1 + 2^-11 and 1 + 3 * 2^-11 */
    assert_int_equal(pb__f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    assert_int_equal(pb__f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
    /* overflow: 65520 is the tie between 65504 (odd) and 2^16, so Inf */
    assert_int_equal(pb__f32_to_f16(65519.996f), 0x7bff);
    assert_int_equal(pb__f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(pb__f32_to_f16(-1e6f), 0xfc00);
    assert_int_equal(pb__f32_to_f16(INFINITY), 0x7c00);
    assert_true(isnan(pb__f16_to_f32(pb__f32_to_f16(NAN))));
    /* subnormals: steps of 2^-24 */
    assert_int_equal(pb__f32_to_f16(0x1p-24f), 0x0001);
    assert_int_equal(pb__f32_to_f16(-0x1p-24f), 0x8001);
    assert_int_equal(pb__f32_to_f16(0x1p-25f), 0x0000);      /* tie: to 0, even */
    assert_int_equal(pb__f32_to_f16(0x1.000002p-25f), 0x0001); /* just past it */
    assert_int_equal(pb__f32_to_f16(3 * 0x1p-25f), 0x0002);  /* tie between 1 and 2 */
    assert_int_equal(pb__f32_to_f16(5 * 0x1p-25f), 0x0002);  /* tie between 2 and 3 */
    assert_int_equal(pb__f32_to_f16(1e-10f), 0x0000);
    assert_int_equal(pb__f32_to_f16(0x1p-14f), 0x0400);             /* smallest normal */
    assert_int_equal(pb__f32_to_f16(0x1p-14f - 0x1p-25f), 0x0400);  /* tie 0x3ff / 0x400: even */
    assert_int_equal(pb__f32_to_f16(0x1p-14f - 0x1p-24f), 0x03ff);  /* the largest subnormal */
    assert_true(pb__f16_to_f32(0x0001) == 0x1p-24f);
    assert_true(pb__f16_to_f32(0x83ff) == -1023 * 0x1p-24f);
    for (uint32_t h = 0; h < 0x10000; h++) {
        float x = pb__f16_to_f32((uint16_t)h);
        if (!isnan(x))
            assert_int_equal(pb__f32_to_f16(x), h);
        else
            assert_int_equal(h & 0x7c00, 0x7c00);
    }
#ifdef __FLT16_MAX__
    /* Against the compiler's own conversion (IEEE, nearest even), on random
     * bit patterns over every exponent and on each half-way point. */
    struct pb_rng rng;
    pb__rng_init(&rng, 5, 0);
    for (int i = 0; i < 2000000; i++) {
        float x = f_of((uint32_t)pb__rng_next(&rng));
        if (i % 2)
            x = pb__f16_to_f32((uint16_t)i) + ((i & 2) ? 1 : -1) * 0x1p-25f * (float)(1 << ((i >> 2) % 16));
        if (isnan(x))
            continue;
        __extension__ _Float16 want = (_Float16)x; /* GCC and Clang: IEEE half, nearest even */
        uint16_t w;
        memcpy(&w, &want, sizeof w);
        if (pb__f32_to_f16(x) != w)
            fail_msg("fp16 of %a (0x%08x): 0x%04x, the compiler says 0x%04x", (double)x, u_of(x),
                     pb__f32_to_f16(x), w);
    }
#endif
}

static void test_tf32(void **state)
{
    (void)state;
    assert_true(pb__f32_to_tf32(1.0f + 0x1p-11f) == 1.0f);                       /* tie: even */
    assert_true(pb__f32_to_tf32(1.0f + 3 * 0x1p-11f) == 1.0f + 0x1p-9f);         /* tie: even */
    assert_true(pb__f32_to_tf32(1.0f + 0x1p-11f + 0x1p-20f) == 1.0f + 0x1p-10f); /* past it */
    assert_true(pb__f32_to_tf32(-(1.0f + 0x1p-11f + 0x1p-20f)) == -(1.0f + 0x1p-10f));
    assert_true(isinf(pb__f32_to_tf32(FLT_MAX)));
    assert_true(isinf(pb__f32_to_tf32(-INFINITY)) && pb__f32_to_tf32(-INFINITY) < 0);
    assert_true(isnan(pb__f32_to_tf32(NAN)));
    struct pb_rng rng;
    pb__rng_init(&rng, 6, 0);
    for (int i = 0; i < 100000; i++) {
        float x = (float)pb__rng_uniform(&rng) * 1e3f, t = pb__f32_to_tf32(x);
        assert_int_equal(u_of(t) & 0x1fff, 0);
        assert_true(fabsf(t - x) <= 0x1p-11f * fabsf(x));
        assert_true(pb__f32_to_tf32(t) == t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names), cmocka_unit_test(test_bf16), cmocka_unit_test(test_fp16),
        cmocka_unit_test(test_tf32),
    };
    return pb_test_run(tests, NULL, NULL);
}

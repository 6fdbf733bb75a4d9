/* Verification accumulators; see verify.h for the measures. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/precision.h"
#include "core/rng.h"
#include "core/verify.h"

double pb__epsilon(enum pb_precision p)
{
    switch (p) {
    case PB_DOUBLE:
        return DBL_EPSILON;
    case PB_TF32:
    case PB_FP16:
        return 0x1p-10;
    case PB_BF16:
        return 0x1p-7;
    default:
        return FLT_EPSILON;
    }
}

double pb__unit_roundoff(enum pb_precision p) { return pb__epsilon(p) / 2; }

double pb__accum_roundoff(enum pb_precision p, double n)
{
    /* Tensor cores add in fp32 but not as IEEE does: products of a k-step are
     * aligned to the largest with few extra bits and the sum is truncated
     * (Fasi, Higham, Mikaitis & Pranesh, PeerJ CS 2021, on V100 to A100; the
     * same on Hopper's HMMA and WGMMA). Truncation errs up to one ulp (2u)
     * per step where IEEE rounding errs u: 4u = 2^-22 covers the spread.
     * Its errors also lean one way (toward zero), so they add up: about
     * 2^-24 |s_j| at each of n / 4 steps (4 products a truncation or more)
     * over partial sums s_j that wander as a random walk does, whose sum has
     * standard deviation n^1.5 / (4 sqrt 3) x the terms' rms. Relative to
     * 2^-22 sqrt(n * sumsq) that is sqrt(n / 768): the bias passes the
     * spread at n = 768 and dominates long sums (H200, tf32 through WMMA,
     * 35819 x 28 x 44111: 17 scales without it, 2 with it). */
    if (!pb__precision_lowp(p))
        return pb__unit_roundoff(p);
    return 0x1p-22 * (1 + sqrt(n / 768));
}

double pb__dot_scale(enum pb_precision p, double n, double sumsq)
{
    double tiny = p == PB_DOUBLE ? DBL_MIN : FLT_MIN;
    return pb__accum_roundoff(p, n) * sqrt(n * sumsq) + n * tiny;
}

void pb__sumsq_add(struct pb_sumsq *a, double t)
{
    double m = fabs(t);
    if (m > 0x1p-400 && m < 0x1p+400) {
        a->plain += m * m;
    } else if (m > a->big) {
        double r = a->big / m;
        a->ssq = 1 + a->ssq * r * r;
        a->big = m;
    } else if (m > 0) {
        double r = m / a->big;
        a->ssq += r * r;
    }
}

double pb__sumsq_norm(const struct pb_sumsq *a)
{
    double p = sqrt(a->plain), most = p > a->big ? p : a->big;
    if (most == 0)
        return 0;
    double rp = p / most, rb = a->big / most;
    return most * sqrt(rp * rp + rb * rb * a->ssq);
}

/* Far enough from both ends that no term's square overflowed and not all
 * of them underflowed (0 included: a row of tiny terms sums to 0 as well). */
bool pb__sumsq_in_range(double sumsq) { return sumsq > 0x1p-900 && sumsq < 0x1p+900; }

double pb__dot_scale_scaled(enum pb_precision p, double n, const struct pb_sumsq *a)
{
    double tiny = p == PB_DOUBLE ? DBL_MIN : FLT_MIN;
    return pb__accum_roundoff(p, n) * sqrt(n) * pb__sumsq_norm(a) + n * tiny;
}

void pb__check_begin(struct pb_check *c, double tol, const char *mode)
{
    memset(c, 0, sizeof *c);
    c->tol = tol;
    c->mode = mode;
}

static double element(const void *out, enum pb_precision prec, size_t i) { return pb__precision_value(out, prec, i); }

static void note_nonfinite(struct pb_check *c, double x, size_t index)
{
    if (!c->nonfinite)
        snprintf(c->detail, sizeof c->detail, "element %zu is %s%s", index,
                 isnan(x) ? "NaN" : "Inf", isnan(x) ? " (never written?)" : "");
    c->nonfinite = true;
}

void pb__check_add(struct pb_check *c, const void *out, enum pb_precision prec, const double *ref,
                   size_t n, size_t first)
{
    for (size_t i = 0; i < n; i++) {
        double x = element(out, prec, i), r = ref[i];
        if (!isfinite(x)) {
            note_nonfinite(c, x, first + i);
            continue;
        }
        double d = fabs(x - r);
        pb__sumsq_add(&c->sq_diff, d);
        pb__sumsq_add(&c->sq_ref, r);
        if (d > c->max_diff)
            c->max_diff = d;
        if (fabs(r) > c->max_ref)
            c->max_ref = fabs(r);
    }
    c->checked += n;
}

void pb__check_add_scaled(struct pb_check *c, const void *out, enum pb_precision prec, const double *ref,
                          const double *scale, size_t n, size_t first, const char *what)
{
    c->scaled = true;
    for (size_t i = 0; i < n; i++) {
        double x = element(out, prec, i), r = ref[i], s = scale[i];
        if (!isfinite(x)) {
            note_nonfinite(c, x, first + i);
            continue;
        }
        double d = fabs(x - r);
        /* s == 0: the exact answer is 0 and needs no rounding. */
        double ratio = d == 0 ? 0 : s > 0 ? d / s : INFINITY;
        pb__sumsq_add(&c->sq_diff, d);
        pb__sumsq_add(&c->sq_ref, s);
        if (ratio > c->err_max || c->checked + i == 0) {
            c->err_max = ratio;
            c->worst = first + i;
            c->worst_out = x;
            c->worst_ref = r;
            c->worst_what = what;
        }
    }
    c->checked += n;
}

void pb__check_finite(struct pb_check *c, const void *out, enum pb_precision prec, size_t n,
                      size_t first)
{
    for (size_t i = 0; i < n; i++) {
        double x = element(out, prec, i);
        if (!isfinite(x)) {
            note_nonfinite(c, x, first + i);
            return;
        }
    }
}

void pb__check_end(struct pb_check *c)
{
    double norm_diff = pb__sumsq_norm(&c->sq_diff), norm_ref = pb__sumsq_norm(&c->sq_ref);
    if (c->scaled) {
        c->err_norm = norm_diff == 0 ? 0 : norm_ref > 0 ? norm_diff / norm_ref : INFINITY;
    } else {
        /* An all-zero oracle makes the errors absolute. */
        double max_ref = c->max_ref > 0 ? c->max_ref : 1.0;
        c->err_norm = norm_diff / (norm_ref > 0 ? norm_ref : 1.0);
        c->err_max = c->max_diff / max_ref;
    }
    if (c->nonfinite) {
        c->err_norm = c->err_max = NAN;
        c->pass = false;
        return;
    }
    c->pass = c->err_norm <= c->tol && c->err_max <= c->tol;
    if (c->pass)
        return;
    if (c->scaled)
        snprintf(c->detail, sizeof c->detail,
                 "%s %zu is %.9g, expected %.9g (error %.3g rounding scales > tolerance %.3g)",
                 c->worst_what ? c->worst_what : "element", c->worst, c->worst_out, c->worst_ref, c->err_max,
                 c->tol);
    else
        snprintf(c->detail, sizeof c->detail, "error %.3g exceeds tolerance %.3g",
                 c->err_norm > c->err_max ? c->err_norm : c->err_max, c->tol);
}

double pb__check_vector(uint64_t seed, uint64_t stream, double *r, size_t n)
{
    struct pb_rng rng;
    pb__rng_init(&rng, seed, stream);
    double norm = 0;
    for (size_t j = 0; j < n; j++) {
        double u = pb__rng_uniform(&rng);
        r[j] = u < 0 ? -0.5 + 0.5 * u : 0.5 + 0.5 * u;
        norm += r[j] * r[j];
    }
    return sqrt(norm);
}

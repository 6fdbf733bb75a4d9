/* Verification against a double-precision oracle.
 *
 * Two ways to compare, both with one limit `tol`:
 *  - relative (pb__check_add): the normwise error ||out - ref||_2 / ||ref||_2
 *    and the largest elementwise error max|out - ref| / max|ref|; for outputs
 *    that must be exact or nearly so (copies, transposes, FMA chains).
 *  - scaled (pb__check_add_scaled): every element i comes with its own error
 *    scale s_i > 0, the rounding error that element may carry given the
 *    operation and its operands (see pb__dot_scale); err_max is the largest
 *    |out_i - ref_i| / s_i, err_norm is ||out - ref||_2 / ||s||_2 (never above
 *    err_max), so both are in units of "expected rounding error" and tol is a
 *    small constant (PB_CHECK_TOL). An element with s_i = 0 must be exact.
 * A check uses one way or the other, not both. A NaN or Inf anywhere in the
 * output fails (outputs are poisoned with NaN before each run, so an element
 * the kernel never wrote shows up here). */
#ifndef PARBENCH_VERIFY_H
#define PARBENCH_VERIFY_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parbench/pb.h"

/* The limit of scaled checks: a correct kernel's error is a random variable
 * with standard deviation at most about s_i / sqrt(3) (pb__dot_scale), in
 * practice s_i / 2 or less; 16 leaves the tail of millions of elements far
 * behind, while inputs rounded to TF32 (a 10-bit mantissa) err by about
 * 6700 / sqrt(terms) times s_i (still 26 at 65536 terms). */
#define PB_CHECK_TOL 16.0

/* A sum of squares that neither overflows nor underflows: past 1e154 a
 * square is Inf (a scale or norm of Inf passes any result), below 1e-154 it
 * is 0 (a scale too small fails a correct one). Terms of ordinary size are
 * summed plainly; the others as big^2 * ssq (a division each). Zero it, add
 * every term, read pb__sumsq_norm = sqrt(sum of t^2). */
struct pb_sumsq {
    double plain, big, ssq;
};
void pb__sumsq_add(struct pb_sumsq *a, double t);
double pb__sumsq_norm(const struct pb_sumsq *a);

struct pb_check {
    double err_norm, err_max, tol;
    bool pass;
    const char *mode;   /* "full", "sampled", "none" */
    char detail[160];   /* why it failed */
    /* accumulators */
    struct pb_sumsq sq_diff, sq_ref;
    double max_diff, max_ref;
    size_t checked;
    bool nonfinite, scaled;
    /* the worst scaled element: its index, values and what it is */
    size_t worst;
    double worst_out, worst_ref;
    const char *worst_what;
};

/* Machine epsilon of a precision's elements (2^-23, 2^-52; TF32 and FP16
 * 2^-10, BF16 2^-7). */
double pb__epsilon(enum pb_precision p);
/* Unit roundoff: the largest relative error of one rounding (eps / 2). */
double pb__unit_roundoff(enum pb_precision p);
/* The unit roundoff of sums of n terms a kernel computes from inputs of
 * precision p: p's own for float and double; for TF32, BF16 and FP16, whose
 * products tensor cores accumulate in fp32 (2^-24) with truncation and
 * fewer alignment bits than IEEE addition, 2^-22 (1 + sqrt(n / 768)): 4u
 * for the spread, and a term for truncation's bias, which grows with the
 * sum's length (verify.c says why). */
double pb__accum_roundoff(enum pb_precision p, double n);

/* The error scale of a sum of n terms t_j computed in precision p in any
 * order, given sumsq = sum t_j^2:
 *     u * sqrt(n * sumsq) + n * tiny,   u = pb__accum_roundoff(p, n)
 * Why: the benchmarks draw one factor of every term (x, B, the image) as
 * seeded values symmetric about 0, so any partial sum s of any summation
 * order has E[s^2] <= sumsq. Each of the n - 1 additions (and each product)
 * rounds with relative error below u; treating those as independent
 * (Higham & Mary's probabilistic model) the error has variance at most
 * u^2 / 3 * n * sumsq. Unlike u * sum|t_j| this grows with sqrt(n) where one
 * term dominates a long sum, and unlike a worst-case u * n * sum|t_j| it stays
 * tight enough to tell rounded inputs (TF32) from accumulation error.
 * n * tiny (tiny = the smallest normal number of the accumulation: DBL_MIN
 * or FLT_MIN) covers products that underflow or are flushed to zero. The
 * inputs' own rounding is no part of it: the oracle multiplies the very
 * values the kernel read. */
double pb__dot_scale(enum pb_precision p, double n, double sumsq);

/* pb__dot_scale from the terms' pb_sumsq: for rows whose plain sum of
 * squares pb__sumsq_in_range finds out of double's range. */
bool pb__sumsq_in_range(double sumsq);
double pb__dot_scale_scaled(enum pb_precision p, double n, const struct pb_sumsq *a);

/* Compensated (Neumaier) sum: a check's own rounding stays far below the
 * double kernels' errors it must judge. Start at {0, 0}; the sum is s + c. */
struct pb_ksum {
    double s, c;
};
static inline void pb__ksum_add(struct pb_ksum *k, double x)
{
    double t = k->s + x;
    k->c += fabs(k->s) >= fabs(x) ? (k->s - t) + x : (x - t) + k->s;
    k->s = t;
}

/* A random check vector (Freivalds' test) from a seeded stream: entries
 * +-[0.5, 1), never near 0, so no error hides behind a small weight;
 * returns its 2-norm. */
double pb__check_vector(uint64_t seed, uint64_t stream, double *r, size_t n);

void pb__check_begin(struct pb_check *c, double tol, const char *mode);
/* Compare n elements of out (prec) with ref; `first` is the index of out[0]
 * in the whole output, for messages. */
void pb__check_add(struct pb_check *c, const void *out, enum pb_precision prec, const double *ref,
                   size_t n, size_t first);
/* Compare n elements of out with ref, each against its scale (see above).
 * `what` names the values for messages (NULL: "element"), e.g. "row of C*r". */
void pb__check_add_scaled(struct pb_check *c, const void *out, enum pb_precision prec, const double *ref,
                          const double *scale, size_t n, size_t first, const char *what);
/* Only look for NaN/Inf (elements without an oracle value). */
void pb__check_finite(struct pb_check *c, const void *out, enum pb_precision prec, size_t n,
                      size_t first);
void pb__check_end(struct pb_check *c);

#endif

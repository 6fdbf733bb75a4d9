/* Verification against a double-precision oracle.
 *
 * Two measures, both relative to the oracle's scale and both compared with
 * one tolerance: the normwise error ||out - ref||_2 / ||ref||_2 and the
 * largest elementwise error max|out - ref| / max|ref|. A NaN or Inf anywhere
 * in the output fails (outputs are poisoned with NaN before each run, so an
 * element the kernel never wrote shows up here). */
#ifndef PARBENCH_VERIFY_H
#define PARBENCH_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "parbench/pb.h"

struct pb_check {
    double err_norm, err_max, tol;
    bool pass;
    const char *mode;   /* "full", "sampled", "none" */
    char detail[160];   /* why it failed */
    /* accumulators */
    double sq_diff, sq_ref, max_diff, max_ref;
    size_t checked;
    bool nonfinite;
};

/* Machine epsilon of a precision. */
double pb__epsilon(enum pb_precision p);

void pb__check_begin(struct pb_check *c, double tol, const char *mode);
/* Compare n elements of out (prec) with ref; `first` is the index of out[0]
 * in the whole output, for messages. */
void pb__check_add(struct pb_check *c, const void *out, enum pb_precision prec, const double *ref,
                   size_t n, size_t first);
/* Only look for NaN/Inf (elements without an oracle value). */
void pb__check_finite(struct pb_check *c, const void *out, enum pb_precision prec, size_t n,
                      size_t first);
void pb__check_end(struct pb_check *c);

#endif

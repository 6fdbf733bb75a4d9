/* Exact verification for the benchmarks that move data without arithmetic
 * (transpose, access): every element compared bit for bit; the error columns
 * hold the fraction of elements that differ. */
#ifndef PARBENCH_EXACT_H
#define PARBENCH_EXACT_H

#include <stdio.h>
#include <string.h>

#include "core/verify.h"

struct pb__exact {
    size_t checked, bad, first_bad;
};

/* Compares one element of elt bytes; `index` names it in the message. */
static inline void pb__exact_add(struct pb__exact *e, const void *got, const void *want, size_t elt, size_t index)
{
    if (memcmp(got, want, elt) != 0 && e->bad++ == 0)
        e->first_bad = index;
    e->checked++;
}

/* The result into out (mode "full", tolerance 0). */
static inline void pb__exact_end(const struct pb__exact *e, const char *what, struct pb_check *out)
{
    pb__check_begin(out, 0, "full");
    out->checked = e->checked;
    out->err_norm = out->err_max = e->checked ? (double)e->bad / (double)e->checked : 0;
    out->pass = e->bad == 0;
    if (!out->pass)
        snprintf(out->detail, sizeof out->detail, "%zu of %zu elements differ, the first at %s %zu", e->bad,
                 e->checked, what, e->first_bad);
}

#endif

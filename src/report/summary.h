/* The report's first screen: per benchmark, precision and device, our best
 * variant beside the best vendor library (anchor) on the same problems, the
 * ratio, OpenCL against CUDA, and the fraction of the ceiling that bounds the
 * row; rows measured again in a newer file are left out of it and marked in
 * their own file; noisy rows counted. */
#ifndef PARBENCH_REPORT_SUMMARY_H
#define PARBENCH_REPORT_SUMMARY_H

#include <stddef.h>

#include "report/results.h"
#include "report/svg.h"

/* Repetitions that vary more than this (coefficient of variation) make the
 * median uncertain enough to say so beside the row. */
#define PB_RP_NOISY_CV 0.10

bool pb__rp_noisy(const struct pb_rp_row *r);

/* For each row of set: the index of a file holding a newer measurement of the
 * same row (same benchmark, backend, variant, device, precision, problem,
 * parameters, rank and threads; newer by the files' dates), or SIZE_MAX.
 * *out has set->n_rows entries (NULL when there are none). */
pb_status pb__rp_superseded(const struct pb_rp_set *set, size_t **out);

/* One line of the summary. Rows point into the set. */
struct pb_rp_summary_line {
    const char *bench, *precision;
    char device[160]; /* the device's name without its OpenCL platform: CUDA and OpenCL rows of one GPU meet */
    const struct pb_rp_row *ours;   /* our best row at the headline problem */
    const struct pb_rp_row *anchor; /* the best anchor row there, or NULL */
    size_t problems;                /* problems with an OK row of ours */
    size_t compared;                /* ... of which with an anchor row too */
    double ratio;                   /* ours / anchor at the headline problem; NAN without anchor */
    double geomean, lo, hi;         /* ours / anchor over the compared problems */
    double opencl_over_cuda;        /* geomean of the best of each, same problems; NAN if not both */
    size_t twins;                   /* problems behind that ratio */
    double fraction;                /* ours' fraction of its ceiling; NAN when none */
    size_t ok, failed, noisy;       /* rows of the group */
};

/* The lines, ordered by the studies' benchmarks, then precision and device.
 * superseded: from pb__rp_superseded (NULL: none). */
pb_status pb__rp_summarize(const struct pb_rp_set *set, const size_t *superseded, struct pb_rp_summary_line **out,
                           size_t *n);

/* The section: a table of the lines and a chart of the ratios. */
void pb__rp_summary_html(struct pb_sbuf *b, const struct pb_rp_set *set, const struct pb_rp_summary_line *lines,
                         size_t n);

/* The study (SEEDS.md: "000".."004") whose experiments run bench, the k-th
 * when several do (k = 0, 1, ...); NULL when none is left. */
const char *pb__rp_study_of(const char *bench, size_t k);

#endif

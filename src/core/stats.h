/* Statistics over the timed repetitions (seconds). */
#ifndef PARBENCH_STATS_H
#define PARBENCH_STATS_H

#include <stddef.h>

struct pb_stats {
    size_t n;
    double min, max, median, mean;
    double trimmed_mean; /* mean without one min and one max (n >= 3; else mean) */
    double stddev;       /* sample standard deviation (n - 1); 0 for n < 2 */
    double cv;           /* stddev / mean */
};

/* Statistics of n samples; scratch holds n doubles (a sorted copy ends up
 * there), samples are not modified. */
void pb__stats_compute(const double *samples, size_t n, double *scratch, struct pb_stats *out);

#endif

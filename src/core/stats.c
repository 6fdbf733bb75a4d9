/* Order statistics on a sorted copy; moments in one pass each. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void pb__stats_compute(const double *samples, size_t n, double *scratch, struct pb_stats *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n == 0)
        return;
    double *s = scratch;
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    out->min = s[0];
    out->max = s[n - 1];
    out->median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    out->mean = sum / (double)n;
    out->trimmed_mean = n >= 3 ? (sum - s[0] - s[n - 1]) / (double)(n - 2) : out->mean;
    if (n >= 2) {
        double ss = 0;
        for (size_t i = 0; i < n; i++)
            ss += (s[i] - out->mean) * (s[i] - out->mean);
        out->stddev = sqrt(ss / (double)(n - 1));
    }
    out->cv = out->mean > 0 ? out->stddev / out->mean : 0;
}

/* Charts a person expects from a set of results: per results file, the rate
 * (GFLOP/s, GB/s or time) against the parameter that varies, one series per
 * backend/variant, one chart per combination of the other parameters, with
 * the device's ceilings drawn in; bars of transfer vs kernel time where a
 * benchmark reports them; then one roofline per device, and the parallel
 * efficiency of runs at several rank counts. */
#ifndef PARBENCH_REPORT_CHARTS_H
#define PARBENCH_REPORT_CHARTS_H

#include "report/results.h"
#include "report/svg.h"

#define PB_RP_ROOFLINE ((size_t)-1) /* chart file index of the rooflines */
#define PB_RP_SCALING ((size_t)-2)  /* ... and of the scaling curves */

struct pb_rp_charts {
    struct pb_chart *charts;
    size_t *file; /* per chart: index into set->files, or PB_RP_ROOFLINE */
    size_t n;
};

pb_status pb__rp_charts_build(const struct pb_rp_set *set, struct pb_rp_charts *out);
void pb__rp_charts_free(struct pb_rp_charts *c);

/* Human-readable seconds: 12.3 us, 4.56 ms, 1.2 s. */
void pb__rp_fmt_time(double s, char *buf, size_t len);

#endif

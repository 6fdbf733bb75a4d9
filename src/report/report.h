/* The report commands of the CLI: parbench report, plot, compare and
 * ceilings. Each takes the command's own argv (argv[0] = the command name)
 * and returns the process exit code (0 OK, 1 regression or failed row, 2 usage,
 * 3 unreadable input or device error). */
#ifndef PARBENCH_REPORT_H
#define PARBENCH_REPORT_H

#include <stdbool.h>

#include "parbench/pb.h"
#include "report/results.h"

int pb__cmd_report(int argc, char **argv);
/* The report of the result files `inputs` with the HTML `preamble` (a
 * section) at the top, written to out; no rows is not an error when there is
 * a preamble. An exit code, the message printed. */
int pb__report_write(char **inputs, int n, const char *title, const char *preamble, const char *out);
int pb__cmd_plot(int argc, char **argv);
int pb__cmd_compare(int argc, char **argv);
int pb__cmd_scaling(int argc, char **argv);

/* One point of a scaling curve: a row for all ranks that ran OK (or a
 * one-rank row), its curve (strong: same benchmark, backend, variant,
 * precision and parameters; weak: without the parameters), and its speed-up
 * and parallel efficiency against the curve's fewest ranks. */
struct pb_rp_scaling {
    const struct pb_rp_row *row;
    int ranks;
    size_t curve;
    double speedup, efficiency;
    bool by_problem; /* weak scaling whose rows repeat a rank count: a curve per problem */
    bool by_file;    /* rows that repeat a rank count across files: a curve per file */
};
/* The parameters of r that differ between rows of its benchmark in set and
 * that its problem does not name (spmv-dist's --local), as " key=value..."
 * ("" when none): what tells two curves of the same problem apart. */
void pb__rp_varying_params(const struct pb_rp_set *set, const struct pb_rp_row *r, char *buf, size_t len);
/* The points of set, sorted by curve then ranks (*out freed by the caller). */
pb_status pb__rp_scaling(const struct pb_rp_set *set, bool weak, struct pb_rp_scaling **out, size_t *n,
                         size_t *n_curves);
int pb__cmd_project(int argc, char **argv);
int pb__cmd_ceilings(int argc, char **argv);

struct pb_ceilings;
/* The ceilings a run uses: from path, else from the default file when it
 * exists (when it does not, says so once on stderr and leaves out empty). */
pb_status pb__ceilings_for_run(const char *path, struct pb_ceilings *out);

#endif

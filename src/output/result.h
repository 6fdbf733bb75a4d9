/* Result rows and run context, and the writers that emit them. Every writer
 * gets each row as soon as it is measured, so an interrupted run keeps what it
 * measured. */
#ifndef PARBENCH_RESULT_H
#define PARBENCH_RESULT_H

#include <stdbool.h>
#include <stdio.h>

#include "bench/bench.h"
#include "core/stats.h"
#include "core/verify.h"

#define PB_RESULT_STATUS_MAP(X)                                                  \
    X(OK, "OK")                                                                  \
    X(FAILED, "FAILED")           /* wrong result: no speed is reported */       \
    X(SKIP, "SKIP")               /* backend or device not available here */     \
    X(UNSUPPORTED, "UNSUPPORTED") /* the variant cannot run this problem */      \
    X(ERROR, "ERROR")             /* device, memory or I/O error */

enum pb_result_status {
#define PB__RS_ENUM(name, str) PB_RESULT_##name,
    PB_RESULT_STATUS_MAP(PB__RS_ENUM)
#undef PB__RS_ENUM
};

const char *pb__result_status_name(enum pb_result_status s);

/* Recorded once per run. */
struct pb_context {
    char version[32], commit[48], date[32];
    char host[128], cpu[128], compiler[96];
    char blas[80]; /* the CPU BLAS anchor and the kernels it runs ("OpenBLAS SkylakeX"); empty without one */
    char command[512];
    int reps, warmup;
    unsigned long long seed;
    /* The ranks of the run (1 without a launcher), their nodes and hosts, and
     * the MPI library ("none"). */
    int ranks, nodes;
    char hosts[256], mpi[64];
};

#define PB_RANK_ALL (-1) /* pb_result.rank of the aggregate of every rank */

struct pb_result {
    const struct pb_bench *bench;
    struct pb_problem problem;
    char label[64];
    const char *backend, *variant;
    bool anchor;
    char device[256];
    /* Whose ceiling the row's fraction is of: host, backend and device index.
     * An aggregate counts a unit that several ranks share once. */
    char unit[128];
    int threads; /* 0 = not applicable */
    /* ranks of the run; rank = this row's rank, or PB_RANK_ALL for the
     * aggregate (total rate over the slowest rank's time per repetition) and
     * for distributed benchmarks (one row for all ranks). */
    int ranks, rank;
    /* Aggregate rows: the lowest, median and highest per-rank rate (GFLOP/s,
     * else GB/s); NAN otherwise. */
    double rank_rate_min, rank_rate_median, rank_rate_max;
    enum pb_result_status status;
    char reason[256];
    /* Seconds; valid for OK rows. `stats` is what rates are computed from:
     * device events where the backend has them (timer "event"), else the host
     * clock (timer "host"). host_stats always time the call to completion on
     * the host clock. */
    const char *timer;
    struct pb_stats stats, host_stats;
    const double *samples, *host_samples; /* stats.n raw samples each */
    double gflops, gbps;   /* from the median time; NAN when not applicable */
    double speedup;        /* baseline median / this median; NAN when not measured */
    double fraction;       /* of the device's ceiling (output/ceilings.h); NAN = no ceilings */
    struct pb_check check;
    double extras[PB_MAX_EXTRAS]; /* bench->extra_names; NAN = none */
    /* Energy of OK rows over their timed repetitions (core/energy.h), NAN
     * when not measured: power_w the mean power, energy_j = power_w x the
     * median time (one repetition at that power), gflops_per_w = gflops /
     * power_w (GFLOP per joule), gbps_per_w the same for GB/s where a row has
     * no GFLOP/s; the mean SM and memory clocks sampled. energy_source:
     * "nvml-energy", "nvml-power", "rapl"; NULL = no energy. throttle: "" =
     * unknown, "none", or the reasons clocks were held back ("power-cap"). */
    const char *energy_source;
    double energy_j, power_w, gflops_per_w, gbps_per_w, sm_mhz, mem_mhz;
    char throttle[64];
};

void pb__context_init(struct pb_context *ctx, int argc, char **argv);

struct pb_writer;

/* Output formats: "table", "csv", "json". */
bool pb__format_valid(const char *format);
/* Format from a file name's extension (.csv, .json, .txt), or NULL. */
const char *pb__format_from_path(const char *path);

/* path NULL = stdout. append: CSV only; adds rows to an existing file after
 * checking its header matches. */
pb_status pb__writer_open(const char *format, const char *path, bool append, struct pb_writer **out);
pb_status pb__writer_begin(struct pb_writer *w, const struct pb_context *ctx,
                           const struct pb_bench *bench);
pb_status pb__writer_row(struct pb_writer *w, const struct pb_result *r);
/* Finish the document (JSON closes its array); then free. Accepts NULL. */
pb_status pb__writer_close(struct pb_writer *w);

#endif

/* Benchmarks: one `struct pb_bench` per file, listed in bench_list.c.
 *
 * A benchmark turns its options into problems, makes seeded host inputs and a
 * double-precision oracle for each problem, binds them to a device (allocate,
 * upload, argument struct for the variants), poisons the outputs before every
 * timed run, and checks the downloaded result. FLOP and byte counts live here
 * so rates are computed in one place for all benchmarks. */
#ifndef PARBENCH_BENCH_H
#define PARBENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/verify.h"
#include "core/backend_impl.h"
#include "core/stats.h"
#include "output/ceilings.h"
#include "parbench/pb_backend.h"

#define PB_MAX_PARAMS 12
#define PB_PREC(p) (1u << (p))
#define PB_MAX_EXTRAS 8

/* A benchmark-specific option taking a list of integers ("--n 256,512") or,
 * when `text` is set, a comma-separated list of words ("--matrix a.mtx,lap2d:64"). */
struct pb_param_def {
    const char *name;          /* option name without "--", also the CSV column */
    const char *help;
    const char *default_value; /* list syntax; NULL = derived by plan() */
    bool text;
    bool single;               /* one value, not a list (its help says N) */
};

/* One problem: a precision and one value per parameter, in definition order.
 * Text parameters are in s[] (pointing into the run's lists, which outlive
 * the problems); their v[] is free for the benchmark's own use. */
struct pb_problem {
    enum pb_precision prec;
    int64_t v[PB_MAX_PARAMS];
    const char *s[PB_MAX_PARAMS];
};

/* Parsed parameter lists, indexed like bench->params: values[] for integer
 * parameters, text[] for text ones. */
struct pb_param_lists {
    int64_t *values[PB_MAX_PARAMS];
    char **text[PB_MAX_PARAMS];
    size_t count[PB_MAX_PARAMS]; /* 0 = not given and no default */
};

struct pb_bench {
    const char *name;
    const char *summary;
    /* More for `parbench run NAME --help` (how to read the rows); NULL = none. */
    const char *notes;
    const char *flop_model; /* e.g. "2*m*n*k" */
    const char *byte_model; /* e.g. "(m*k + k*n + m*n) * element size" */
    bool typeless;          /* no element type: --precision does not apply */
    /* The precisions --precision may pick, PB_PREC bits; 0 = float and
     * double. Checked before plan() (pb__bench_takes), so no benchmark meets
     * a type it would misread as float. */
    unsigned precisions;
    /* One problem spread over the ranks (comm/comm.h), not one per rank:
     * prepare, bind and run are collective (every rank calls them, and they
     * agree with pb__comm_agree after any step that may fail on one rank
     * only); check compares this rank's part; the run writes one row for all
     * ranks, each repetition timed as its slowest rank, flops() and bytes()
     * counting the whole problem, extras those of the slowest rank. */
    bool distributed;
    const struct pb_param_def *params;
    size_t n_params;
    /* Speed-up column: time of this variant on the same problem / time of
     * the row. baseline_backend NULL = the row's own backend. */
    const char *baseline_backend, *baseline_variant;
    /* Extra metrics of this benchmark, one column each (NULL extras = none):
     * computed after the timed runs from the bound state, the time and the
     * row's device ceilings (NULL when no ceilings file covers it). */
    const char *const *extra_names;
    size_t n_extras;
    void (*extras)(void *state, const struct pb_stats *time, const struct pb_ceiling *ceiling, double *out);
    /* Bit e: extra e is a rate worked out from the row's time (work / time),
     * so a distributed run's row for all ranks scales it to its own time. */
    unsigned rate_extras;
    /* What an OK row's variant chose (an `auto` variant's pick), into the
     * row's reason; NULL = nothing to say. */
    void (*note)(void *state, char *buf, size_t len);
    /* For variants that time themselves (work spread over several devices,
     * started behind a gate so that issuing it is not timed): the seconds of
     * the last run, which replace the runner's timer; NULL = the timer. */
    double (*run_seconds)(void *state);
    /* How many times one call of run does the work (spmv-dist --batch: K
     * products queued back to back): each repetition's times are divided by
     * it, so rows give the time of one. NULL = 1. */
    int (*runs_per_call)(void *state);
    /* The ceilings its rates are held against (the fraction of ceiling, the
     * lines of its charts), by variant, backend and device; NULL = the FMA
     * peak and device memory, whichever is closer (the plain roofline). */
    struct pb_roof (*roof)(const char *variant, const char *backend, const char *device, enum pb_precision prec);

    /* Problems for the given lists (one precision each); checks sizes for
     * overflow and absurdity (PB_ERR_INVALID / PB_ERR_OVERFLOW + message). */
    pb_status (*plan)(const struct pb_param_lists *lists, enum pb_precision prec,
                      struct pb_problem *out, size_t max, size_t *n);
    void (*describe)(const struct pb_problem *p, char *buf, size_t len);
    /* Counts for the rates of one variant on p (host: what prepare() made,
     * for counts only known once the input exists, like a file's non-zeros);
     * NULL or NAN = not reported. */
    double (*flops)(const struct pb_problem *p, const struct pb_variant *v, const void *host);
    double (*bytes)(const struct pb_problem *p, const struct pb_variant *v, const void *host);

    /* Host inputs and oracle for one problem. */
    pb_status (*prepare)(const struct pb_problem *p, uint64_t seed, void **host);
    void (*release)(void *host);
    /* Per device and variant: allocate, upload, fill *args with the family's
     * argument struct (owned by *state). PB_ERR_UNAVAILABLE = this machine
     * lacks what the problem needs (the row is SKIP with the message),
     * PB_ERR_UNSUPPORTED = the variant cannot take it (UNSUPPORTED). */
    pb_status (*bind)(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                      void **state, const void **args);
    pb_status (*poison)(void *state);
    /* Download and compare with the oracle. corrupt != 0 flips one output
     * element first (to prove the checker catches it). */
    pb_status (*check)(void *state, const void *host, bool corrupt, struct pb_check *out);
    void (*unbind)(void *state);

    /* Variants the benchmark itself implements through the portable buffer,
     * stream and kernel API, offered on every backend (e.g. the copies of
     * `bandwidth`), next to the backends' own variants. */
    const struct pb_variant *variants;
    size_t n_variants;
};

/* Roofs shared by several benchmarks: memory-bound (GB/s against device
 * memory, their GFLOP/s against nothing) and unbounded (nothing measured
 * applies: peer links, networks). */
struct pb_roof pb__roof_memory(const char *variant, const char *backend, const char *device, enum pb_precision prec);
struct pb_roof pb__roof_none(const char *variant, const char *backend, const char *device, enum pb_precision prec);
/* gemm's (gemm.c), also the roof of gemm-dist's local products. */
struct pb_roof pb__gemm_roof(const char *variant, const char *backend, const char *device, enum pb_precision prec);

/* bench->roof, or the plain roofline (also for bench NULL: an unknown name). */
struct pb_roof pb__bench_roof(const struct pb_bench *bench, const char *variant, const char *backend,
                              const char *device, enum pb_precision prec);

/* PB_OK when bench computes in precision p; PB_ERR_INVALID otherwise, with
 * "conv has no precision bf16: float or double". */
pb_status pb__bench_takes(const struct pb_bench *bench, enum pb_precision p);
/* Its precisions as "float or double" into buf. */
const char *pb__bench_precisions(const struct pb_bench *bench, char *buf, size_t len);

/* A distributed product's exposed communication: its median less its
 * products timed alone. Products alone up to 10% slower than the whole
 * (noise) leave none exposed; slower still (a tiny problem's threads waking
 * cold when timed alone), the split cannot be told: NaN, not 0. */
double pb__exposed_comm(double median, double compute);

size_t pb__bench_count(void);
const struct pb_bench *pb__bench_at(size_t i);
const struct pb_bench *pb__bench_find(const char *name);
/* The i-th variant of `bench` on backend b: the backend's own variants for
 * it, then the benchmark's portable ones. NULL past the end. */
const struct pb_variant *pb__bench_variant(const struct pb_bench *bench, const struct pb_backend *b,
                                           size_t i);

#endif

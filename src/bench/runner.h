/* The run loop: problems x backends x variants x thread counts, each one
 * bound, warmed up, timed, verified and written as one result row. */
#ifndef PARBENCH_RUNNER_H
#define PARBENCH_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/bench.h"
#include "output/result.h"

struct pb_run_config {
    const struct pb_bench *bench;
    const struct pb_problem *problems;
    size_t n_problems;
    const char *const *backends; /* names; NULL = every compiled-in backend */
    size_t n_backends;
    const char *const *variants; /* "name" or "backend/name"; NULL = all */
    size_t n_variants;
    const int *threads; /* thread counts for threaded backends; NULL = default */
    size_t n_threads;
    int device;         /* device index within each backend */
    const char *device_match; /* else: first device whose name contains this (any case) */
    /* Under several ranks: true = the ranks of a node take the devices from
     * `device` on (or the matching ones) in turn by node-local rank; false =
     * every rank takes `device`. */
    bool device_per_rank;
    int reps, warmup;
    uint64_t seed;
    bool verify;        /* false: rows say check "none" */
    bool inject_fault;  /* corrupt one output element before checking */
    bool progress;      /* progress line on stderr for long runs */
    bool energy;        /* energy, power and clocks of every OK row (core/energy.h) */
    struct pb_writer **writers;
    size_t n_writers;
    const struct pb_context *ctx;
    const struct pb_ceilings *ceilings; /* NULL = rows carry no fraction of ceiling */
};

/* Rows written (on rank 0: every rank's rows and the aggregates; the same
 * summary is returned on every rank). */
struct pb_run_summary {
    size_t ok, failed, skipped, unsupported, errors;
    bool interrupted;
};

/* Checks the backend and variant names against what is compiled in;
 * PB_ERR_NOT_FOUND with a message listing the known names. */
pb_status pb__run_validate(const struct pb_run_config *cfg);

/* Runs everything, writing each row as it is measured. Returns an error only
 * when a writer fails (rows that fail are counted in the summary).
 *
 * Under several ranks (comm/comm.h) it is collective: every rank runs every
 * job on its own device ("every rank at once"), the repetitions of a job
 * start together, rank 0 gathers the rows, writes one per rank and one for
 * all (rank PB_RANK_ALL), and only rank 0's writers are used. */
pb_status pb__run(const struct pb_run_config *cfg, struct pb_run_summary *sum);

#endif

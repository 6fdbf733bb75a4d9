/* The run loop (see runner.h). Host inputs and the oracle are made once per
 * problem, data is uploaded once per (problem, device), and only the kernel is
 * inside the timed region. */
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anchors/anchors.h"
#include "bench/runner.h"
#include "comm/comm.h"
#include "core/backend_impl.h"
#include "core/core.h"
#include "core/energy.h"
#include "output/ceilings.h"

/* ---- signals: Ctrl-C (or SIGTERM) finishes the current repetition; a crash
 * says where ----------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;
static char crash_note[256]; /* written before each job, read by the handler */

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
    static const char msg[] = "\nparbench: interrupted; stopping after the current repetition "
                              "(Ctrl-C again to quit at once)\n";
    ssize_t rc = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)rc;
}

/* Async-signal-safe: write and raise only. */
static void on_crash(int sig)
{
    size_t len = 0;
    while (len < sizeof crash_note && crash_note[len])
        len++;
    ssize_t rc = write(STDERR_FILENO, crash_note, len);
    (void)rc;
    /* SA_RESETHAND restored the default action: pending until the handler
     * returns, it ends the process with the signal's own status (abort()
     * would raise it again too) */
    raise(sig);
}

struct saved_signals {
    struct sigaction intr, term, segv, bus, fpe, ill, abrt;
};

static void install_signals(struct saved_signals *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, &old->intr);
    sigaction(SIGTERM, &sa, &old->term); /* a batch system's stop: the same orderly end */
    sa.sa_handler = on_crash;
    sigaction(SIGSEGV, &sa, &old->segv);
    sigaction(SIGBUS, &sa, &old->bus);
    sigaction(SIGFPE, &sa, &old->fpe);
    sigaction(SIGILL, &sa, &old->ill);
    sigaction(SIGABRT, &sa, &old->abrt); /* a failed assert or a library's abort() */
}

static void restore_signals(const struct saved_signals *old)
{
    sigaction(SIGINT, &old->intr, NULL);
    sigaction(SIGTERM, &old->term, NULL);
    sigaction(SIGSEGV, &old->segv, NULL);
    sigaction(SIGBUS, &old->bus, NULL);
    sigaction(SIGFPE, &old->fpe, NULL);
    sigaction(SIGILL, &old->ill, NULL);
    sigaction(SIGABRT, &old->abrt, NULL);
}

/* ---- selection ---------------------------------------------------------- */

static bool name_listed(const char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

static bool backend_selected(const struct pb_run_config *cfg, const struct pb_backend *b)
{
    return !cfg->backends || name_listed(cfg->backends, cfg->n_backends, b->name);
}

static bool variant_selected(const struct pb_run_config *cfg, const struct pb_backend *b,
                             const struct pb_variant *v)
{
    bool hidden = (v->desc.flags & PB_VARIANT_HIDDEN) != 0;
    if (!cfg->variants)
        return !hidden;
    char full[96];
    snprintf(full, sizeof full, "%s/%s", b->name, v->desc.name);
    return (!hidden && name_listed(cfg->variants, cfg->n_variants, v->desc.name)) ||
           name_listed(cfg->variants, cfg->n_variants, full);
}

struct job;
static size_t plan_jobs(const struct pb_run_config *cfg, struct job *jobs);

pb_status pb__run_validate(const struct pb_run_config *cfg)
{
    char known[512] = "";
    for (size_t i = 0; i < cfg->n_backends; i++)
        if (!pb_backend_find(cfg->backends[i]))
            return pb__fail(PB_ERR_NOT_FOUND, "unknown backend '%s' (this build has: %s)", cfg->backends[i],
                            pb__backend_names(known, sizeof known));
    for (size_t i = 0; i < cfg->n_variants; i++) {
        bool found = false;
        size_t used = 0;
        known[0] = '\0';
        for (size_t j = 0; j < pb_backend_count(); j++) {
            const struct pb_backend *b = pb_backend_at(j);
            const struct pb_variant *v;
            for (size_t k = 0; (v = pb__bench_variant(cfg->bench, b, k)) != NULL; k++) {
                char full[96];
                snprintf(full, sizeof full, "%s/%s", b->name, v->desc.name);
                found |= strcmp(cfg->variants[i], v->desc.name) == 0 ||
                         strcmp(cfg->variants[i], full) == 0;
                if (used < sizeof known && !(v->desc.flags & PB_VARIANT_HIDDEN)) /* test-only: not offered */
                    used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                             used ? ", " : "", full);
            }
        }
        if (!found)
            return pb__fail(PB_ERR_NOT_FOUND, "unknown %s variant '%s' (this build has: %s)",
                            cfg->bench->name, cfg->variants[i], known);
    }
    /* Known names that select nothing together (--backend ref --variant
     * openmp/blocked) would print a header and no row, and exit 0. (Without
     * --variant, a benchmark no backend here has simply has nothing to run.) */
    if (cfg->n_variants > 0 && plan_jobs(cfg, NULL) == 0)
        return pb__fail(PB_ERR_NOT_FOUND, "no %s variant of the selected backends matches --variant (see parbench list)",
                        cfg->bench->name);
    if (cfg->n_backends > 0 && plan_jobs(cfg, NULL) == 0)
        return pb__fail(PB_ERR_NOT_FOUND, "%s has no variant on the backends given to --backend (see parbench list)",
                        cfg->bench->name);
    return PB_OK;
}

/* ---- one job: (problem, backend, variant, threads) ---------------------- */

struct job {
    const struct pb_backend *backend;
    const struct pb_variant *variant;
    int threads; /* 0 = the device's default */
};

struct run_state {
    const struct pb_run_config *cfg;
    struct pb_run_summary *sum;
    pb_comm *comm;
    int rank, size;
    char host[64]; /* this rank's, for the rows' units */
    int syncs;  /* repetition starts this job has agreed on so far */
    bool stop;  /* every rank agreed to stop (an interrupt on any of them) */
    bool peer_failed; /* at the last start, some rank was not running the job */
    pb_status comm_status;
    pb_device **devices;            /* opened lazily, per backend index */
    pb_energy **meters;             /* with the devices, when cfg->energy */
    double *baseline;               /* per backend index: baseline median of this problem */
    pb_status *device_status;
    char (*device_error)[256];
    double *samples, *host_samples, *scratch; /* cfg->reps each */
    double start, last_progress;
    bool progress_shown;
    pb_status writer_status;
    char said[8][320]; /* energy notes already on stderr */
    size_t n_said;
};

static void free_run_state(struct run_state *rs)
{
    for (size_t i = 0; rs->meters && i < pb_backend_count(); i++)
        pb__energy_free(rs->meters[i]);
    for (size_t i = 0; rs->devices && i < pb_backend_count(); i++)
        pb_device_close(rs->devices[i]);
    free(rs->meters);
    free(rs->devices);
    free(rs->baseline);
    free(rs->device_status);
    free(rs->device_error);
    free(rs->samples);
    free(rs->host_samples);
    free(rs->scratch);
}

static void progress_clear(struct run_state *rs)
{
    if (rs->progress_shown) {
        fputs("\r\033[K", stderr);
        rs->progress_shown = false;
    }
}

static void progress(struct run_state *rs, size_t done, size_t total, const struct job *j,
                     const char *label, const char *phase, int rep)
{
    double now = pb__now();
    if (!rs->cfg->progress || rs->rank != 0 || now - rs->start < 1.0 || now - rs->last_progress < 0.1)
        return;
    rs->last_progress = now;
    fprintf(stderr, "\r\033[K[%zu/%zu] %s/%s %s: %s", done + 1, total, j->backend->name,
            j->variant->desc.name, label, phase);
    if (rep >= 0)
        fprintf(stderr, " %d/%d", rep + 1, phase[0] == 'w' ? rs->cfg->warmup : rs->cfg->reps);
    fflush(stderr);
    rs->progress_shown = true;
}

/* Why energy was not measured, once per reason (rank 0 speaks for all). */
static void say_once(struct run_state *rs, const char *note)
{
    if (!note || !note[0] || rs->rank != 0)
        return;
    for (size_t i = 0; i < rs->n_said; i++)
        if (strcmp(rs->said[i], note) == 0)
            return;
    if (rs->n_said == sizeof rs->said / sizeof rs->said[0])
        return;
    snprintf(rs->said[rs->n_said++], sizeof rs->said[0], "%s", note);
    progress_clear(rs);
    fprintf(stderr, "parbench: %s\n", note);
}

static void emit(struct run_state *rs, const struct pb_result *r)
{
    progress_clear(rs);
    struct pb_run_summary *s = rs->sum;
    switch (r->status) {
    case PB_RESULT_OK: s->ok++; break;
    case PB_RESULT_FAILED: s->failed++; break;
    case PB_RESULT_SKIP: s->skipped++; break;
    case PB_RESULT_UNSUPPORTED: s->unsupported++; break;
    case PB_RESULT_ERROR: s->errors++; break;
    }
    for (size_t i = 0; i < rs->cfg->n_writers; i++) {
        pb_status st = pb__writer_row(rs->cfg->writers[i], r);
        if (st != PB_OK && rs->writer_status == PB_OK)
            rs->writer_status = st;
    }
}

static void set_reason(struct pb_result *r, enum pb_result_status status, pb_status st)
{
    r->status = status;
    const char *detail = pb_last_error();
    snprintf(r->reason, sizeof r->reason, "%s", detail[0] ? detail : pb_status_message(st));
}

/* Opens the device cfg selects on backend b: by index, or the first whose name
 * contains cfg->device_match. Under several ranks per node each takes the
 * next one in turn (node-local rank), cycling when there are fewer devices
 * than ranks, so ranks share them. */
static pb_status open_selected(const struct pb_run_config *cfg, const struct pb_backend *b, int local_rank,
                               pb_device **out)
{
    int count = pb_backend_device_count(b), turn = cfg->device_per_rank ? local_rank : 0;
    if (!cfg->device_match) {
        int index = cfg->device;
        if (turn > 0 && count > cfg->device)
            index += turn % (count - cfg->device);
        return pb_device_open(b, index, out);
    }
    int matching = 0, chosen = -1;
    for (int pass = 0; pass < 2 && chosen < 0; pass++) {
        /* First pass counts the matches, the second opens the rank's turn. */
        int seen = 0;
        for (int i = 0; i < count; i++) {
            pb_status st = pb_device_open(b, i, out);
            if (st != PB_OK)
                return st;
            bool match = pb__device_matches(*out, cfg->device_match);
            if (match && pass == 1 && seen == turn % matching) {
                chosen = i;
                break;
            }
            seen += match;
            pb_device_close(*out);
            *out = NULL;
        }
        if (pass == 0 && (matching = seen) == 0)
            break;
    }
    if (chosen < 0)
        return pb__fail(PB_ERR_UNAVAILABLE, "no %s device matches '%s'", b->name, cfg->device_match);
    return PB_OK;
}

/* The device of backend index bi, opened on first use. */
static pb_device *device_for(struct run_state *rs, size_t bi, struct pb_result *r)
{
    if (!rs->devices[bi] && rs->device_status[bi] == PB_OK) {
        pb__clear_error();
        rs->device_status[bi] = open_selected(rs->cfg, pb_backend_at(bi), pb__comm_local_rank(rs->comm),
                                              &rs->devices[bi]);
        if (rs->device_status[bi] != PB_OK)
            snprintf(rs->device_error[bi], sizeof rs->device_error[bi], "%s",
                     pb_last_error()[0] ? pb_last_error() : pb_status_message(rs->device_status[bi]));
        else if (rs->meters)
            pb__energy_open(rs->devices[bi], &rs->meters[bi]); /* none when out of memory: no energy */
    }
    if (!rs->devices[bi]) {
        /* no such device on this backend (--device 1 where it has one): not here, as unavailable */
        pb_status why = rs->device_status[bi];
        r->status = why == PB_ERR_UNAVAILABLE || why == PB_ERR_NOT_FOUND ? PB_RESULT_SKIP : PB_RESULT_ERROR;
        snprintf(r->reason, sizeof r->reason, "%s", rs->device_error[bi]);
    }
    return rs->devices[bi];
}

/* Every rank calls this before each repetition of a job (warm-up included),
 * and as often when it has nothing to run, so repetitions start together and
 * an interrupt seen by any rank stops every rank at the same point. False =
 * stop. */
static bool start_together(struct run_state *rs, bool failed_here)
{
    rs->syncs++;
    int32_t flags[2] = {interrupted != 0, failed_here};
    if (rs->size > 1 && rs->comm_status == PB_OK) {
        pb_status st = pb__comm_allreduce(rs->comm, flags, flags, 2, PB_COMM_INT32, PB_COMM_MAX);
        if (st != PB_OK) {
            rs->comm_status = st;
            flags[0] = 1;
        }
    }
    rs->stop = flags[0] != 0 || rs->comm_status != PB_OK;
    rs->peer_failed = flags[1] != 0;
    return !rs->stop;
}

/* One process stops at once on an interrupt; several ranks only where they
 * agreed to (start_together). */
static bool stopping(struct run_state *rs)
{
    if (rs->size == 1 && interrupted)
        rs->stop = true;
    return rs->stop;
}

/* Starts per job: one per repetition (warm-up included) and a last one that
 * tells every rank whether all of them finished. */
static int starts_per_job(const struct pb_run_config *cfg) { return cfg->warmup + cfg->reps + 1; }

/* A rank whose job ended early (no device, bind failed, an error in a
 * repetition) still takes part in the job's remaining starts. */
static void finish_starts(struct run_state *rs)
{
    while (rs->size > 1 && rs->syncs < starts_per_job(rs->cfg) && !rs->stop)
        start_together(rs, true);
}

/* A distributed job runs only when every rank has its device; otherwise no
 * rank runs it, and r says which rank lacked one (a rank that has its own
 * reason keeps it). */
static bool all_have_devices(struct run_state *rs, bool mine, struct pb_result *r)
{
    pb__clear_error();
    pb_status own = mine ? PB_OK : r->status == PB_RESULT_SKIP ? PB_ERR_UNAVAILABLE : PB_ERR_DEVICE;
    if (!mine)
        pb__fail(own, "%s", r->reason);
    pb_status st = pb__comm_agree(rs->comm, own);
    if (st == PB_OK)
        return true;
    rs->syncs = starts_per_job(rs->cfg); /* nobody starts it: nothing to wait for */
    if (mine)
        set_reason(r, st == PB_ERR_UNAVAILABLE ? PB_RESULT_SKIP : PB_RESULT_ERROR, st);
    return false;
}

/* The energy columns of an OK row from its meter's reading (result.h). */
static void set_energy(struct pb_result *r, const struct pb_energy_reading *e)
{
    r->sm_mhz = e->sm_mhz;
    r->mem_mhz = e->mem_mhz;
    snprintf(r->throttle, sizeof r->throttle, "%s", e->throttle);
    if (!e->source || !(e->watts > 0) || !(r->stats.median > 0))
        return;
    r->energy_source = e->source;
    r->power_w = e->watts;
    r->energy_j = e->watts * r->stats.median;
    r->gflops_per_w = r->gflops / e->watts;
    r->gbps_per_w = isnan(r->gflops) ? r->gbps / e->watts : NAN;
}

/* Time one job; fills r. Meter (NULL = none) measures the timed repetitions,
 * paused while a repetition is checked. Returns false when the ranks agreed
 * to stop. */
static bool measure(struct run_state *rs, pb_device *dev, pb_energy *meter, const struct job *j,
                    const struct pb_problem *p, void *host, struct pb_result *r, size_t done,
                    size_t total)
{
    const struct pb_run_config *cfg = rs->cfg;
    const struct pb_bench *b = cfg->bench;
    void *state = NULL;
    const void *args = NULL;
    pb_status st;

    pb__clear_error();
    if ((st = b->bind(dev, p, j->variant, host, &state, &args)) != PB_OK) {
        /* e.g. a format the input cannot take (ELLPACK of a matrix with one huge row),
         * or a second GPU this machine does not have */
        set_reason(r, st == PB_ERR_UNSUPPORTED   ? PB_RESULT_UNSUPPORTED
                      : st == PB_ERR_UNAVAILABLE ? PB_RESULT_SKIP
                                                 : PB_RESULT_ERROR,
                   st);
        return true;
    }
    const char *why = NULL;
    bool supported = !j->variant->supports || j->variant->supports(dev, args, &why);
    if (b->distributed) {
        pb__clear_error();
        if (!supported)
            pb__fail(PB_ERR_UNSUPPORTED, "%s", why ? why : "not supported");
        st = pb__comm_agree(rs->comm, supported ? PB_OK : PB_ERR_UNSUPPORTED);
        if (st != PB_OK) {
            set_reason(r, st == PB_ERR_UNSUPPORTED ? PB_RESULT_UNSUPPORTED : PB_RESULT_ERROR, st);
            b->unbind(state);
            return true;
        }
    } else if (!supported) {
        r->status = PB_RESULT_UNSUPPORTED;
        snprintf(r->reason, sizeof r->reason, "%s", why ? why : "");
        b->unbind(state);
        return true;
    }
    pb_timer *timer = NULL;
    st = pb_timer_create(dev, &timer);
    if (b->distributed)
        st = pb__comm_agree(rs->comm, st);
    if (st != PB_OK) {
        set_reason(r, PB_RESULT_ERROR, st);
        pb_timer_destroy(timer);
        b->unbind(state);
        return true;
    }
    int total_runs = cfg->warmup + cfg->reps;
    pb__anchors_quiet(j->variant->run);
    struct pb_energy_reading energy = {.joules = NAN};
    bool metering = false;
    for (int i = 0; i < total_runs && st == PB_OK && !rs->stop; i++) {
        bool warm = i < cfg->warmup;
        progress(rs, done, total, j, r->label, warm ? "warm-up" : "rep", warm ? i : i - cfg->warmup);
        if ((st = b->poison(state)) == PB_OK)
            st = pb_device_sync(dev);
        /* A distributed run stops on every rank when one fails: the others
         * would wait for it in the next exchange. */
        if (!start_together(rs, st != PB_OK) || st != PB_OK)
            break;
        if (b->distributed && rs->peer_failed) {
            st = pb__fail(PB_ERR_DEVICE, "another rank failed; this one stopped with it");
            break;
        }
        if (meter && i == cfg->warmup) { /* counters read here, outside the timed region */
            pb__energy_start(meter, false);
            metering = true;
        }
        double t0 = pb__now(), elapsed = 0;
        if ((st = pb_timer_start(timer, NULL)) != PB_OK)
            break;
        st = j->variant->run(dev, args, NULL);
        if (st == PB_OK)
            st = pb_timer_stop(timer, NULL);
        if (st == PB_OK)
            st = pb_device_sync(dev);
        double t1 = pb__now();
        if (st == PB_OK)
            st = pb_timer_elapsed(timer, &elapsed);
        if (st == PB_OK && b->run_seconds)
            elapsed = b->run_seconds(state);
        int per_call = b->runs_per_call ? b->runs_per_call(state) : 1;
        per_call = per_call > 0 ? per_call : 1;
        if (!warm) {
            rs->samples[i - cfg->warmup] = elapsed / per_call;
            rs->host_samples[i - cfg->warmup] = (t1 - t0) / per_call;
        }
        /* Besides the last repetition (checked below): the first, and every
         * one of a variant whose result may change from run to run. */
        int rep = i - cfg->warmup;
        bool varies = (j->variant->desc.flags & PB_VARIANT_VARIES) != 0;
        if (st == PB_OK && cfg->verify && !warm && i + 1 < total_runs && (rep == 0 || varies)) {
            progress(rs, done, total, j, r->label, "verify", rep);
            if (metering) /* checking is the host's work, not the kernel's */
                pb__energy_stop(meter, &energy);
            if ((st = b->check(state, host, false, &r->check)) == PB_OK && !r->check.pass)
                st = pb__fail(PB_ERR_VERIFY, "repetition %d of %d: %s", rep + 1, cfg->reps, r->check.detail);
            if (metering)
                pb__energy_start(meter, true);
        }
    }
    if (metering) {
        pb__energy_stop(meter, &energy);
        say_once(rs, energy.note);
    }
    pb_timer_destroy(timer);
    /* The last start: whether every rank finished its repetitions. */
    if (st == PB_OK && !rs->stop && rs->size > 1) {
        start_together(rs, false);
        if (b->distributed && rs->peer_failed)
            st = pb__fail(PB_ERR_DEVICE, "another rank failed; this one stopped with it");
    }
    if (rs->stop) {
        b->unbind(state);
        return false;
    }
    if (st != PB_OK) {
        set_reason(r, st == PB_ERR_VERIFY ? PB_RESULT_FAILED : PB_RESULT_ERROR, st);
        b->unbind(state);
        return true;
    }
    if (cfg->verify) {
        progress(rs, done, total, j, r->label, "verify", -1);
        st = b->check(state, host, cfg->inject_fault, &r->check);
        if (st != PB_OK) {
            set_reason(r, PB_RESULT_ERROR, st);
            b->unbind(state);
            return true;
        }
        /* A fault the check cannot see (an output of no elements) must not
         * leave the row OK: --inject-fault promises FAILED. */
        if (cfg->inject_fault && r->check.pass) {
            r->check.pass = false;
            snprintf(r->check.detail, sizeof r->check.detail,
                     "--inject-fault: the check passed the corrupted output (no element to corrupt?)");
        }
    } else {
        pb__check_begin(&r->check, NAN, "none");
        r->check.err_norm = r->check.err_max = NAN;
        r->check.pass = true;
    }
    if (!r->check.pass) {
        b->unbind(state);
        r->status = PB_RESULT_FAILED;
        snprintf(r->reason, sizeof r->reason, "%s", r->check.detail);
        return true;
    }
    r->status = PB_RESULT_OK;
    r->timer = pb_device_has_event_timers(dev) ? "event" : "host";
    pb__stats_compute(rs->samples, (size_t)cfg->reps, rs->scratch, &r->stats);
    pb__stats_compute(rs->host_samples, (size_t)cfg->reps, rs->scratch, &r->host_stats);
    r->samples = rs->samples;
    r->host_samples = rs->host_samples;
    double t = r->stats.median;
    r->gflops = t > 0 && b->flops ? b->flops(p, j->variant, host) / t * 1e-9 : NAN;
    r->gbps = t > 0 && b->bytes ? b->bytes(p, j->variant, host) / t * 1e-9 : NAN;
    bool dbl = p->prec == PB_DOUBLE && !b->typeless;
    const char *dev_name = pb_device_name(dev);
    const struct pb_ceiling *ceiling = pb__ceilings_find(cfg->ceilings, j->backend->name, dev_name);
    r->fraction = pb__ceiling_fraction(
        ceiling, pb__bench_roof(b, j->variant->desc.name, j->backend->name, dev_name, b->typeless ? PB_FLOAT : p->prec),
        dbl, r->gflops, r->gbps);
    if (b->extras)
        b->extras(state, &r->stats, ceiling, r->extras);
    if (metering)
        set_energy(r, &energy);
    if (b->note)
        b->note(state, r->reason, sizeof r->reason);
    b->unbind(state);
    return true;
}

/* ---- every rank at once: rows to rank 0, and their aggregate ------------ */

/* One rank's row as it crosses to rank 0 (followed by 2 * reps samples). */
struct row_wire {
    int32_t status, threads, pass;
    char device[256], unit[128], reason[256], timer[8], mode[16];
    struct pb_stats stats, host_stats;
    double gflops, gbps, speedup, fraction, err_norm, err_max, tol;
    double extras[PB_MAX_EXTRAS];
    double energy_j, power_w, gflops_per_w, gbps_per_w, sm_mhz, mem_mhz;
    char throttle[64], energy_source[16];
};

static void pack_row(const struct pb_result *r, int reps, struct row_wire *w)
{
    memset(w, 0, sizeof *w + 2 * (size_t)reps * sizeof(double));
    w->status = (int32_t)r->status;
    w->threads = r->threads;
    w->pass = r->check.pass;
    snprintf(w->device, sizeof w->device, "%s", r->device);
    snprintf(w->unit, sizeof w->unit, "%s", r->unit);
    snprintf(w->reason, sizeof w->reason, "%s", r->reason);
    snprintf(w->timer, sizeof w->timer, "%s", r->timer ? r->timer : "");
    snprintf(w->mode, sizeof w->mode, "%s", r->check.mode ? r->check.mode : "");
    w->stats = r->stats;
    w->host_stats = r->host_stats;
    w->gflops = r->gflops;
    w->gbps = r->gbps;
    w->speedup = r->speedup;
    w->fraction = r->fraction;
    w->err_norm = r->check.err_norm;
    w->err_max = r->check.err_max;
    w->tol = r->check.tol;
    memcpy(w->extras, r->extras, sizeof w->extras);
    w->energy_j = r->energy_j;
    w->power_w = r->power_w;
    w->gflops_per_w = r->gflops_per_w;
    w->gbps_per_w = r->gbps_per_w;
    w->sm_mhz = r->sm_mhz;
    w->mem_mhz = r->mem_mhz;
    snprintf(w->throttle, sizeof w->throttle, "%s", r->throttle);
    snprintf(w->energy_source, sizeof w->energy_source, "%s", r->energy_source ? r->energy_source : "");
    double *samples = (double *)(w + 1);
    if (r->status == PB_RESULT_OK) {
        memcpy(samples, r->samples, (size_t)reps * sizeof(double));
        memcpy(samples + reps, r->host_samples, (size_t)reps * sizeof(double));
    }
}

/* r keeps the job's common fields (bench, problem, backend, variant); the
 * rest comes from w. Strings point into w. */
static void unpack_row(struct row_wire *w, int reps, int rank, struct pb_result *r)
{
    r->rank = rank;
    r->status = (enum pb_result_status)w->status;
    r->threads = w->threads;
    snprintf(r->device, sizeof r->device, "%s", w->device);
    snprintf(r->unit, sizeof r->unit, "%s", w->unit);
    snprintf(r->reason, sizeof r->reason, "%s", w->reason);
    r->timer = w->timer[0] ? w->timer : NULL;
    r->stats = w->stats;
    r->host_stats = w->host_stats;
    r->gflops = w->gflops;
    r->gbps = w->gbps;
    r->speedup = w->speedup;
    r->fraction = w->fraction;
    r->check.err_norm = w->err_norm;
    r->check.err_max = w->err_max;
    r->check.tol = w->tol;
    r->check.pass = w->pass != 0;
    /* the check's modes are static strings; the wire goes when the row is written */
    static const char *const modes[] = {"full", "sampled", "none"};
    r->check.mode = NULL;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        if (strcmp(w->mode, modes[m]) == 0)
            r->check.mode = modes[m];
    memcpy(r->extras, w->extras, sizeof r->extras);
    r->energy_j = w->energy_j;
    r->power_w = w->power_w;
    r->gflops_per_w = w->gflops_per_w;
    r->gbps_per_w = w->gbps_per_w;
    r->sm_mhz = w->sm_mhz;
    r->mem_mhz = w->mem_mhz;
    snprintf(r->throttle, sizeof r->throttle, "%s", w->throttle);
    /* the meters' source names are static strings too */
    static const char *const sources[] = {"nvml-energy", "nvml-power", "rapl"};
    r->energy_source = NULL;
    for (size_t m = 0; m < sizeof sources / sizeof sources[0]; m++)
        if (strcmp(w->energy_source, sources[m]) == 0)
            r->energy_source = sources[m];
    r->samples = (const double *)(w + 1);
    r->host_samples = r->samples + reps;
}

/* A reason that repeats another rank's failure (pb__comm_agree's "rank K: ",
 * the runner's "another rank ...") rather than giving one of its own. */
static bool echoed(const char *reason)
{
    return strncmp(reason, "rank ", 5) == 0 || strncmp(reason, "another rank", 12) == 0;
}

/* The row for all ranks from the per-rank rows: a rank that did not run OK
 * decides the status (FAILED before ERROR before SKIP before UNSUPPORTED,
 * naming a rank that failed on its own rather than one that stopped with
 * it); otherwise each repetition takes the slowest rank's time on the host
 * clock (they started together), and the rates are the work over that time: every rank's in
 * "every rank at once" mode, the one problem's for a distributed benchmark
 * (whose extras are its slowest rank's). A distributed benchmark that times
 * itself (run_seconds, e.g. pingpong: rank 0's round trip / 2, 0 on the
 * ranks that only answer) takes the largest of the ranks' own times. */
static void aggregate_rows(const struct pb_result *rows, int n, int reps, const struct pb_bench *b,
                           double *samples, double *host_samples, double *scratch, struct pb_result *agg)
{
    static const enum pb_result_status order[] = {PB_RESULT_FAILED, PB_RESULT_ERROR, PB_RESULT_SKIP,
                                                  PB_RESULT_UNSUPPORTED};
    agg->rank = PB_RANK_ALL;
    agg->status = PB_RESULT_OK;
    agg->speedup = agg->fraction = NAN;
    agg->rank_rate_min = agg->rank_rate_median = agg->rank_rate_max = NAN;
    for (size_t e = 0; e < PB_MAX_EXTRAS; e++)
        agg->extras[e] = NAN;
    /* Energy stays with the ranks' own rows: ranks may share a package or a GPU. */
    agg->energy_source = NULL;
    agg->energy_j = agg->power_w = agg->gflops_per_w = agg->gbps_per_w = agg->sm_mhz = agg->mem_mhz = NAN;
    agg->throttle[0] = '\0';
    for (size_t o = 0; o < sizeof order / sizeof order[0] && agg->status == PB_RESULT_OK; o++) {
        int pick = -1;
        for (int r = n - 1; r >= 0; r--)
            if (rows[r].status == order[o] && (pick < 0 || !echoed(rows[r].reason) || echoed(rows[pick].reason)))
                pick = r;
        if (pick >= 0) {
            char why[sizeof agg->reason]; /* agg may be one of the rows' neighbours */
            memcpy(why, rows[pick].reason, sizeof why);
            agg->status = order[o];
            if (echoed(why) || n == 1)
                memcpy(agg->reason, why, sizeof why);
            else
                snprintf(agg->reason, sizeof agg->reason, "rank %d: %.200s", pick, why);
        }
    }
    bool same_device = true;
    agg->check = rows[0].check;
    for (int r = 0; r < n; r++) {
        same_device &= strcmp(rows[r].device, rows[0].device) == 0;
        agg->check.err_norm = fmax(agg->check.err_norm, rows[r].check.err_norm);
        agg->check.err_max = fmax(agg->check.err_max, rows[r].check.err_max);
        agg->check.pass &= rows[r].check.pass;
    }
    snprintf(agg->device, sizeof agg->device, "%d x %.200s", n, same_device ? rows[0].device : "mixed devices");
    agg->threads = rows[0].threads;
    if (agg->status != PB_RESULT_OK)
        return;
    /* The host clock from the common start to each rank's end: device events
     * of separate processes share no clock, and ranks that share a GPU each
     * time only their own turn on it. */
    bool distributed = b->distributed, own = distributed && b->run_seconds != NULL;
    for (int i = 0; i < reps; i++) {
        samples[i] = host_samples[i] = 0;
        for (int r = 0; r < n; r++) {
            host_samples[i] = fmax(host_samples[i], rows[r].host_samples[i]);
            samples[i] = fmax(samples[i], own ? rows[r].samples[i] : rows[r].host_samples[i]);
        }
    }
    pb__stats_compute(samples, (size_t)reps, scratch, &agg->stats);
    pb__stats_compute(host_samples, (size_t)reps, scratch, &agg->host_stats);
    agg->samples = samples;
    agg->host_samples = host_samples;
    agg->timer = "host";
    /* A distributed run's extras are its slowest rank's (what bounds it). */
    int slowest = 0;
    for (int r = 1; r < n; r++)
        if (rows[r].stats.median > rows[slowest].stats.median)
            slowest = r;
    if (distributed) {
        memcpy(agg->extras, rows[slowest].extras, sizeof agg->extras);
        /* Rates among them were worked out from that rank's own time: over
         * the row's time instead, as its GB/s is (busbw = algbw x factor). */
        for (size_t e = 0; e < b->n_extras; e++)
            if (b->rate_extras & (1u << e))
                agg->extras[e] *= rows[slowest].stats.median / agg->stats.median;
    }
    /* Work of each rank = its rate x its time; the per-rank rates give the spread. */
    double flop = 0, byte = 0, ceiling = 0, *rates = distributed ? NULL : malloc((size_t)n * 2 * sizeof *rates);
    bool use_flops = !isnan(rows[0].gflops);
    for (int r = 0; r < n; r++) {
        double rate = use_flops ? rows[r].gflops : rows[r].gbps;
        bool shared = false; /* ranks on one CPU or GPU share its ceiling */
        for (int q = 0; q < r && !shared; q++)
            shared = rows[r].unit[0] && strcmp(rows[q].unit, rows[r].unit) == 0;
        if (!shared)
            ceiling += rate / rows[r].fraction; /* NAN when a rank has no ceiling */
        if (rates)
            rates[r] = rate;
        if (distributed)
            continue;
        flop += rows[r].gflops * rows[r].stats.median;
        byte += rows[r].gbps * rows[r].stats.median;
    }
    if (distributed) { /* every rank counts the whole problem; the slowest has a time */
        flop = rows[slowest].gflops * rows[slowest].stats.median;
        byte = rows[slowest].gbps * rows[slowest].stats.median;
    }
    double t = agg->stats.median;
    agg->gflops = t > 0 ? flop / t : NAN;
    agg->gbps = t > 0 ? byte / t : NAN;
    agg->fraction = (use_flops ? agg->gflops : agg->gbps) / ceiling;
    if (rates) {
        struct pb_stats spread;
        pb__stats_compute(rates, (size_t)n, rates + n, &spread);
        agg->rank_rate_min = spread.min;
        agg->rank_rate_median = spread.median;
        agg->rank_rate_max = spread.max;
        free(rates);
    }
}

/* Every rank's row of this job to rank 0, which writes them and their
 * aggregate. A failure to exchange stops the run (rs->comm_status). */
static void exchange_rows(struct run_state *rs, const struct pb_result *mine)
{
    int reps = rs->cfg->reps, n = rs->size;
    size_t each = sizeof(struct row_wire) + 2 * (size_t)reps * sizeof(double);
    struct row_wire *out = malloc(each);
    unsigned char *all = rs->rank == 0 ? malloc(each * (size_t)n) : NULL;
    struct pb_result *rows = rs->rank == 0 ? calloc((size_t)n + 1, sizeof *rows) : NULL;
    double *agg_samples = rs->rank == 0 ? malloc(3 * (size_t)reps * sizeof(double)) : NULL;
    /* A rank short of memory still takes part in the agreement. */
    int32_t fine = out && (rs->rank != 0 || (all && rows && agg_samples));
    pb_status st = pb__comm_allreduce(rs->comm, &fine, &fine, 1, PB_COMM_INT32, PB_COMM_MIN);
    if (st == PB_OK && !fine)
        st = pb__fail(PB_ERR_NOMEM, "out of memory gathering the ranks' rows");
    if (st == PB_OK) {
        pack_row(mine, reps, out);
        st = pb__comm_gather(rs->comm, out, each, all, 0);
    }
    if (st != PB_OK) {
        rs->comm_status = st;
        rs->stop = true;
    } else if (rs->rank == 0) {
        for (int r = 0; r < n; r++) {
            rows[r] = *mine;
            unpack_row((struct row_wire *)(all + (size_t)r * each), reps, r, &rows[r]);
            if (!rs->cfg->bench->distributed)
                emit(rs, &rows[r]);
        }
        rows[n] = *mine;
        aggregate_rows(rows, n, reps, rs->cfg->bench,
                       agg_samples, agg_samples + reps, agg_samples + 2 * reps, &rows[n]);
        emit(rs, &rows[n]);
    }
    free(out);
    free(all);
    free(rows);
    free(agg_samples);
}

/* Threads of a threaded backend's job by default: with several ranks on a
 * node, their share of the cores this rank may run on. 0 = the backend's own
 * default (one rank per node). */
static int default_threads(const struct run_state *rs)
{
    int local = pb__comm_local_size(rs->comm);
    if (local <= 1)
        return 0;
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int mine = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)online;
    int share = online > 0 ? (int)(online / local) : 1;
    return share < 1 ? 1 : share < mine ? share : mine;
}

static bool is_baseline(const struct pb_bench *bench, const char *backend, const char *variant)
{
    return bench->baseline_variant && strcmp(variant, bench->baseline_variant) == 0 &&
           (!bench->baseline_backend || strcmp(backend, bench->baseline_backend) == 0);
}

/* Jobs for one problem in backend order, each backend's speed-up baseline
 * first among its jobs (a named baseline backend must come first in the
 * registry, as ref does). With jobs == NULL only counts them. */
static size_t plan_jobs(const struct pb_run_config *cfg, struct job *jobs)
{
    size_t n = 0;
    static const int default_threads[] = {0};
    for (size_t bi = 0; bi < pb_backend_count(); bi++) {
        const struct pb_backend *b = pb_backend_at(bi);
        if (!backend_selected(cfg, b))
            continue;
        const int *threads = b->threaded && cfg->threads ? cfg->threads : default_threads;
        size_t n_threads = b->threaded && cfg->threads ? cfg->n_threads : 1;
        const struct pb_variant *v;
        size_t first = n; /* this backend's first job */
        for (size_t vi = 0; (v = pb__bench_variant(cfg->bench, b, vi)) != NULL; vi++) {
            if (!variant_selected(cfg, b, v))
                continue;
            for (size_t t = 0; t < n_threads; t++, n++) {
                if (!jobs)
                    continue;
                struct job j = {b, v, threads[t]};
                bool baseline = is_baseline(cfg->bench, b->name, v->desc.name);
                if (baseline) {
                    memmove(&jobs[first + 1], &jobs[first], (n - first) * sizeof *jobs);
                    jobs[first] = j;
                } else {
                    jobs[n] = j;
                }
            }
        }
    }
    return n;
}

static size_t backend_index(const struct pb_backend *b)
{
    for (size_t i = 0; i < pb_backend_count(); i++)
        if (pb_backend_at(i) == b)
            return i;
    return 0;
}

pb_status pb__run(const struct pb_run_config *cfg, struct pb_run_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    /* The CLI refuses these before planning; this keeps any other caller from
     * handing a benchmark a type it would read as float. */
    for (size_t i = 0; i < cfg->n_problems; i++)
        if (!cfg->bench->typeless && pb__bench_takes(cfg->bench, cfg->problems[i].prec) != PB_OK)
            return PB_ERR_INVALID;
    struct run_state rs = {.cfg = cfg, .sum = sum, .start = pb__now(), .comm = pb__comm_world()};
    rs.rank = pb__comm_rank(rs.comm);
    if (gethostname(rs.host, sizeof rs.host - 1) != 0)
        snprintf(rs.host, sizeof rs.host, "?");
    rs.size = pb__comm_size(rs.comm);
    size_t n_jobs = plan_jobs(cfg, NULL);
    size_t total = n_jobs * cfg->n_problems, done = 0;
    struct job *jobs = calloc(n_jobs ? n_jobs : 1, sizeof *jobs);
    rs.samples = calloc((size_t)cfg->reps, sizeof *rs.samples);
    rs.host_samples = calloc((size_t)cfg->reps, sizeof *rs.host_samples);
    rs.scratch = calloc((size_t)cfg->reps, sizeof *rs.scratch);
    rs.devices = calloc(pb_backend_count(), sizeof *rs.devices);
    rs.baseline = calloc(pb_backend_count(), sizeof *rs.baseline);
    rs.device_status = calloc(pb_backend_count(), sizeof *rs.device_status);
    rs.device_error = calloc(pb_backend_count(), sizeof *rs.device_error);
    rs.meters = cfg->energy ? calloc(pb_backend_count(), sizeof *rs.meters) : NULL;
    if (!jobs || !rs.samples || !rs.host_samples || !rs.scratch || !rs.baseline || !rs.devices || !rs.device_status || !rs.device_error ||
        (cfg->energy && !rs.meters)) {
        free_run_state(&rs);
        free(jobs);
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    plan_jobs(cfg, jobs);
    struct saved_signals saved;
    interrupted = 0;
    install_signals(&saved);

    for (size_t pi = 0; pi < cfg->n_problems && !stopping(&rs); pi++) {
        const struct pb_problem *p = &cfg->problems[pi];
        void *host = NULL;
        pb_status host_status = PB_OK;
        char host_error[256] = "", label[64];
        for (size_t bi = 0; bi < pb_backend_count(); bi++)
            rs.baseline[bi] = NAN;
        cfg->bench->describe(p, label, sizeof label);

        for (size_t ji = 0; ji < n_jobs && !stopping(&rs); ji++, done++) {
            const struct job *j = &jobs[ji];
            struct pb_result r = {.bench = cfg->bench, .problem = *p, .backend = j->backend->name,
                                  .variant = j->variant->desc.name,
                                  .anchor = (j->variant->desc.flags & PB_VARIANT_ANCHOR) != 0,
                                  .threads = j->threads, .ranks = rs.size, .rank = rs.rank,
                                  .gflops = NAN, .gbps = NAN, .speedup = NAN, .fraction = NAN,
                                  .rank_rate_min = NAN, .rank_rate_median = NAN, .rank_rate_max = NAN,
                                  .energy_j = NAN, .power_w = NAN, .gflops_per_w = NAN, .gbps_per_w = NAN,
                                  .sm_mhz = NAN, .mem_mhz = NAN};
            rs.syncs = 0;
            for (size_t e = 0; e < PB_MAX_EXTRAS; e++)
                r.extras[e] = NAN;
            snprintf(r.label, sizeof r.label, "%s", label);
            snprintf(crash_note, sizeof crash_note,
                     "\nparbench: crashed in %s/%s %s %s; rows written so far are kept\n",
                     j->backend->name, j->variant->desc.name, label, pb_precision_name(p->prec));
            const char *why;
            size_t bi = backend_index(j->backend);
            pb_device *dev = NULL;
            if (!pb_backend_available(j->backend, &why)) {
                r.status = PB_RESULT_SKIP;
                snprintf(r.reason, sizeof r.reason, "%s", why);
            } else {
                dev = device_for(&rs, bi, &r);
            }
            if (cfg->bench->distributed && !all_have_devices(&rs, dev != NULL, &r))
                dev = NULL;
            if (dev) {
                snprintf(r.device, sizeof r.device, "%s", pb_device_name(dev));
                snprintf(r.unit, sizeof r.unit, "%s/%s/%d", rs.host, j->backend->name, dev->index);
                pb_device_set_threads(dev, j->threads || !j->backend->threaded ? j->threads
                                                                                : default_threads(&rs));
                r.threads = pb_device_threads(dev);
                if (!host && host_status == PB_OK) {
                    progress(&rs, done, total, j, label, "preparing inputs and reference", -1);
                    pb__clear_error();
                    host_status = cfg->bench->prepare(p, cfg->seed, &host);
                    if (cfg->bench->distributed)
                        host_status = pb__comm_agree(rs.comm, host_status);
                    if (host_status != PB_OK)
                        snprintf(host_error, sizeof host_error, "%s",
                                 pb_last_error()[0] ? pb_last_error() : pb_status_message(host_status));
                }
                if (host_status != PB_OK) {
                    r.status = PB_RESULT_ERROR;
                    snprintf(r.reason, sizeof r.reason, "%s", host_error);
                } else if (!measure(&rs, dev, rs.meters ? rs.meters[bi] : NULL, j, p, host, &r, done, total)) {
                    break; /* interrupted: the unfinished row is not written */
                }
            }
            finish_starts(&rs);
            if (rs.stop)
                break;
            if (r.status == PB_RESULT_OK) {
                /* The baseline of a named backend serves every row; otherwise each
                 * backend's own. */
                size_t slot = cfg->bench->baseline_backend ? 0 : bi;
                if (is_baseline(cfg->bench, r.backend, r.variant))
                    rs.baseline[slot] = r.stats.median;
                if (!isnan(rs.baseline[slot]) && r.stats.median > 0)
                    r.speedup = rs.baseline[slot] / r.stats.median;
            }
            if (rs.size > 1 || cfg->bench->distributed)
                exchange_rows(&rs, &r);
            else
                emit(&rs, &r);
        }
        cfg->bench->release(host);
    }
    progress_clear(&rs);
    sum->interrupted = stopping(&rs) && rs.comm_status == PB_OK;
    if (rs.size > 1 && rs.comm_status == PB_OK) {
        /* Rank 0 wrote the rows: its counts are the run's, on every rank. */
        uint64_t counts[5] = {sum->ok, sum->failed, sum->skipped, sum->unsupported, sum->errors};
        rs.comm_status = pb__comm_bcast(rs.comm, counts, sizeof counts, 0);
        sum->ok = counts[0], sum->failed = counts[1], sum->skipped = counts[2];
        sum->unsupported = counts[3], sum->errors = counts[4];
    }
    restore_signals(&saved);
    free_run_state(&rs);
    free(jobs);
    return rs.comm_status != PB_OK ? rs.comm_status : rs.writer_status;
}

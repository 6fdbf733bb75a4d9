/* The run loop (see runner.h). Host inputs and the oracle are made once per
 * problem, data is uploaded once per (problem, device), and only the kernel is
 * inside the timed region. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/runner.h"
#include "core/backend_impl.h"
#include "core/core.h"
#include "output/ceilings.h"

/* ---- signals: Ctrl-C finishes the current repetition; a crash says where - */

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

static void on_crash(int sig)
{
    ssize_t rc = write(STDERR_FILENO, crash_note, strlen(crash_note));
    (void)rc;
    raise(sig); /* SA_RESETHAND restored the default action */
}

struct saved_signals {
    struct sigaction intr, segv, bus, fpe, ill;
};

static void install_signals(struct saved_signals *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, &old->intr);
    sa.sa_handler = on_crash;
    sigaction(SIGSEGV, &sa, &old->segv);
    sigaction(SIGBUS, &sa, &old->bus);
    sigaction(SIGFPE, &sa, &old->fpe);
    sigaction(SIGILL, &sa, &old->ill);
}

static void restore_signals(const struct saved_signals *old)
{
    sigaction(SIGINT, &old->intr, NULL);
    sigaction(SIGSEGV, &old->segv, NULL);
    sigaction(SIGBUS, &old->bus, NULL);
    sigaction(SIGFPE, &old->fpe, NULL);
    sigaction(SIGILL, &old->ill, NULL);
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
    if (!cfg->variants)
        return true;
    char full[96];
    snprintf(full, sizeof full, "%s/%s", b->name, v->desc.name);
    return name_listed(cfg->variants, cfg->n_variants, v->desc.name) ||
           name_listed(cfg->variants, cfg->n_variants, full);
}

pb_status pb__run_validate(const struct pb_run_config *cfg)
{
    char known[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < cfg->n_backends; i++)
        if (!pb_backend_find(cfg->backends[i])) {
            for (size_t j = 0; j < pb_backend_count() && used < sizeof known; j++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", j ? ", " : "",
                                         pb_backend_at(j)->name);
            return pb__fail(PB_ERR_NOT_FOUND, "unknown backend '%s' (this build has: %s)",
                            cfg->backends[i], known);
        }
    for (size_t i = 0; i < cfg->n_variants; i++) {
        bool found = false;
        used = 0;
        known[0] = '\0';
        for (size_t j = 0; j < pb_backend_count(); j++) {
            const struct pb_backend *b = pb_backend_at(j);
            const struct pb_variant *v;
            for (size_t k = 0; (v = pb__bench_variant(cfg->bench, b, k)) != NULL; k++) {
                char full[96];
                snprintf(full, sizeof full, "%s/%s", b->name, v->desc.name);
                found |= strcmp(cfg->variants[i], v->desc.name) == 0 ||
                         strcmp(cfg->variants[i], full) == 0;
                if (used < sizeof known)
                    used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                             used ? ", " : "", full);
            }
        }
        if (!found)
            return pb__fail(PB_ERR_NOT_FOUND, "unknown %s variant '%s' (this build has: %s)",
                            cfg->bench->name, cfg->variants[i], known);
    }
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
    pb_device **devices;            /* opened lazily, per backend index */
    double *baseline;               /* per backend index: baseline median of this problem */
    pb_status *device_status;
    char (*device_error)[256];
    double *samples, *host_samples, *scratch; /* cfg->reps each */
    double start, last_progress;
    bool progress_shown;
    pb_status writer_status;
};

static void free_run_state(struct run_state *rs)
{
    for (size_t i = 0; rs->devices && i < pb_backend_count(); i++)
        pb_device_close(rs->devices[i]);
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
    if (!rs->cfg->progress || now - rs->start < 1.0 || now - rs->last_progress < 0.1)
        return;
    rs->last_progress = now;
    fprintf(stderr, "\r\033[K[%zu/%zu] %s/%s %s: %s", done + 1, total, j->backend->name,
            j->variant->desc.name, label, phase);
    if (rep >= 0)
        fprintf(stderr, " %d/%d", rep + 1, phase[0] == 'w' ? rs->cfg->warmup : rs->cfg->reps);
    fflush(stderr);
    rs->progress_shown = true;
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
 * contains cfg->device_match. */
static pb_status open_selected(const struct pb_run_config *cfg, const struct pb_backend *b, pb_device **out)
{
    if (!cfg->device_match)
        return pb_device_open(b, cfg->device, out);
    for (int i = 0; i < pb_backend_device_count(b); i++) {
        pb_status st = pb_device_open(b, i, out);
        if (st != PB_OK)
            return st;
        if (strcasestr(pb_device_name(*out), cfg->device_match))
            return PB_OK;
        pb_device_close(*out);
        *out = NULL;
    }
    return pb__fail(PB_ERR_UNAVAILABLE, "no %s device matches '%s'", b->name, cfg->device_match);
}

/* The device of backend index bi, opened on first use. */
static pb_device *device_for(struct run_state *rs, size_t bi, struct pb_result *r)
{
    if (!rs->devices[bi] && rs->device_status[bi] == PB_OK) {
        pb__clear_error();
        rs->device_status[bi] = open_selected(rs->cfg, pb_backend_at(bi), &rs->devices[bi]);
        if (rs->device_status[bi] != PB_OK)
            snprintf(rs->device_error[bi], sizeof rs->device_error[bi], "%s",
                     pb_last_error()[0] ? pb_last_error() : pb_status_message(rs->device_status[bi]));
    }
    if (!rs->devices[bi]) {
        r->status = rs->device_status[bi] == PB_ERR_UNAVAILABLE ? PB_RESULT_SKIP : PB_RESULT_ERROR;
        snprintf(r->reason, sizeof r->reason, "%s", rs->device_error[bi]);
    }
    return rs->devices[bi];
}

/* Time one job; fills r. Returns false when interrupted. */
static bool measure(struct run_state *rs, pb_device *dev, const struct job *j,
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
        /* e.g. a format the input cannot take (ELLPACK of a matrix with one huge row) */
        set_reason(r, st == PB_ERR_UNSUPPORTED ? PB_RESULT_UNSUPPORTED : PB_RESULT_ERROR, st);
        return true;
    }
    const char *why = NULL;
    if (j->variant->supports && !j->variant->supports(dev, args, &why)) {
        r->status = PB_RESULT_UNSUPPORTED;
        snprintf(r->reason, sizeof r->reason, "%s", why ? why : "");
        b->unbind(state);
        return true;
    }
    pb_timer *timer = NULL;
    if ((st = pb_timer_create(dev, &timer)) != PB_OK) {
        set_reason(r, PB_RESULT_ERROR, st);
        b->unbind(state);
        return true;
    }
    int total_runs = cfg->warmup + cfg->reps;
    for (int i = 0; i < total_runs && st == PB_OK && !interrupted; i++) {
        bool warm = i < cfg->warmup;
        progress(rs, done, total, j, r->label, warm ? "warm-up" : "rep", warm ? i : i - cfg->warmup);
        if ((st = b->poison(state)) != PB_OK || (st = pb_device_sync(dev)) != PB_OK)
            break;
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
        if (!warm) {
            rs->samples[i - cfg->warmup] = elapsed;
            rs->host_samples[i - cfg->warmup] = t1 - t0;
        }
    }
    pb_timer_destroy(timer);
    if (interrupted) {
        b->unbind(state);
        return false;
    }
    if (st != PB_OK) {
        set_reason(r, PB_RESULT_ERROR, st);
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
    r->fraction = pb__ceiling_fraction(pb__ceilings_find(cfg->ceilings, j->backend->name, pb_device_name(dev)),
                                       b->typeless, p->prec == PB_DOUBLE, r->gflops, r->gbps);
    if (b->extras)
        b->extras(state, &r->stats, r->extras);
    b->unbind(state);
    return true;
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
    struct run_state rs = {.cfg = cfg, .sum = sum, .start = pb__now()};
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
    if (!jobs || !rs.samples || !rs.host_samples || !rs.scratch || !rs.baseline || !rs.devices || !rs.device_status || !rs.device_error) {
        free_run_state(&rs);
        free(jobs);
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    plan_jobs(cfg, jobs);
    struct saved_signals saved;
    interrupted = 0;
    install_signals(&saved);

    for (size_t pi = 0; pi < cfg->n_problems && !interrupted; pi++) {
        const struct pb_problem *p = &cfg->problems[pi];
        void *host = NULL;
        pb_status host_status = PB_OK;
        char host_error[256] = "", label[64];
        for (size_t bi = 0; bi < pb_backend_count(); bi++)
            rs.baseline[bi] = NAN;
        cfg->bench->describe(p, label, sizeof label);

        for (size_t ji = 0; ji < n_jobs && !interrupted; ji++, done++) {
            const struct job *j = &jobs[ji];
            struct pb_result r = {.bench = cfg->bench, .problem = *p, .backend = j->backend->name,
                                  .variant = j->variant->desc.name,
                                  .anchor = (j->variant->desc.flags & PB_VARIANT_ANCHOR) != 0,
                                  .threads = j->threads, .gflops = NAN, .gbps = NAN,
                                  .speedup = NAN, .fraction = NAN};
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
            } else if ((dev = device_for(&rs, bi, &r)) != NULL) {
                snprintf(r.device, sizeof r.device, "%s", pb_device_name(dev));
                pb_device_set_threads(dev, j->threads);
                r.threads = pb_device_threads(dev);
                if (!host && host_status == PB_OK) {
                    progress(&rs, done, total, j, label, "preparing inputs and reference", -1);
                    pb__clear_error();
                    host_status = cfg->bench->prepare(p, cfg->seed, &host);
                    if (host_status != PB_OK)
                        snprintf(host_error, sizeof host_error, "%s",
                                 pb_last_error()[0] ? pb_last_error() : pb_status_message(host_status));
                }
                if (host_status != PB_OK) {
                    r.status = PB_RESULT_ERROR;
                    snprintf(r.reason, sizeof r.reason, "%s", host_error);
                } else if (!measure(&rs, dev, j, p, host, &r, done, total)) {
                    break; /* interrupted: the unfinished row is not written */
                }
            }
            if (r.status == PB_RESULT_OK) {
                /* The baseline of a named backend serves every row; otherwise each
                 * backend's own. */
                size_t slot = cfg->bench->baseline_backend ? 0 : bi;
                if (is_baseline(cfg->bench, r.backend, r.variant))
                    rs.baseline[slot] = r.stats.median;
                if (!isnan(rs.baseline[slot]) && r.stats.median > 0)
                    r.speedup = rs.baseline[slot] / r.stats.median;
            }
            emit(&rs, &r);
        }
        cfg->bench->release(host);
    }
    progress_clear(&rs);
    sum->interrupted = interrupted != 0;
    restore_signals(&saved);
    free_run_state(&rs);
    free(jobs);
    return rs.writer_status;
}

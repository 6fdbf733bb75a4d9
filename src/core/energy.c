/* Energy meters (see energy.h): the measurement and its sampling thread,
 * the RAPL source; NVML's is energy_nvml.c. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "core/energy.h"

/* ---- the pieces ------------------------------------------------------------ */

uint64_t pb__rapl_delta(uint64_t before, uint64_t after, uint64_t range)
{
    if (after >= before)
        return after - before;
    /* Wrapped past range back to 0 (once: the sampler reads far more often
     * than the counter wraps, minutes at full power). */
    return before <= range ? range - before + after : after;
}

void pb__power_add(struct pb_power_integral *p, double t, double watts)
{
    if (p->have_last && t > p->last_t) {
        p->joules += 0.5 * (p->last_w + watts) * (t - p->last_t);
        p->seconds += t - p->last_t;
    }
    p->last_t = t;
    p->last_w = watts;
    p->have_last = true;
    p->sum_w += watts;
    p->n++;
}

void pb__power_break(struct pb_power_integral *p) { p->have_last = false; }

double pb__power_mean(const struct pb_power_integral *p)
{
    if (p->seconds > 0)
        return p->joules / p->seconds;
    return p->n ? p->sum_w / (double)p->n : NAN;
}

void pb__throttle_name(unsigned bits, char *buf, size_t len)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{PB_THROTTLE_POWER_CAP, "power-cap"}, {PB_THROTTLE_HW_SLOWDOWN, "hw-slowdown"},
                 {PB_THROTTLE_SYNC_BOOST, "sync-boost"}, {PB_THROTTLE_THERMAL, "thermal"},
                 {PB_THROTTLE_HW_THERMAL, "hw-thermal"}, {PB_THROTTLE_POWER_BRAKE, "power-brake"}};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((bits & names[i].bit) && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "+" : "", names[i].name);
    if (!bits)
        snprintf(buf, len, "none");
}

pb_status pb__energy_domain_host(pb_device *dev, struct pb_energy_domain *out)
{
    (void)dev;
    memset(out, 0, sizeof *out);
    out->kind = PB_ENERGY_HOST_CPU;
    return PB_OK;
}

/* ---- RAPL ------------------------------------------------------------------ */

#define RAPL_MAX_ZONES 16

struct rapl_zone {
    char energy[PATH_MAX + 16]; /* .../energy_uj */
    uint64_t range, last;  /* max_energy_range_uj, the last reading */
};

struct rapl {
    struct rapl_zone zone[RAPL_MAX_ZONES];
    size_t n;
    double joules; /* every zone's energy since open */
};

/* One unsigned number from a sysfs file; errno-style message in why. */
static bool read_u64(const char *path, uint64_t *out, char *why, size_t len)
{
    FILE *f = fopen(path, "r");
    int err = 0;
    bool ok = false;
    *out = 0;
    if (f) {
        unsigned long long v = 0;
        errno = 0;
        ok = fscanf(f, "%llu", &v) == 1;
        err = ok ? 0 : ferror(f) && errno ? errno : EINVAL;
        fclose(f);
        *out = v;
    } else {
        err = errno;
    }
    if (!ok)
        snprintf(why, len, "cannot read %s: %s%s", path, strerror(err),
                 err == EACCES ? " (the kernel lets only root read RAPL counters)" : "");
    return ok;
}

static bool read_name(const char *dir, char *buf, size_t len)
{
    char path[PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/name", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\r\n")] = '\0';
    return ok;
}

static bool rapl_counter(void *state, double *joules, char *why, size_t len)
{
    struct rapl *r = state;
    for (size_t i = 0; i < r->n; i++) {
        struct rapl_zone *z = &r->zone[i];
        uint64_t now;
        if (!read_u64(z->energy, &now, why, len))
            return false;
        r->joules += (double)pb__rapl_delta(z->last, now, z->range) * 1e-6;
        z->last = now;
    }
    *joules = r->joules;
    return true;
}

static void rapl_close(void *state) { free(state); }

static const struct pb_energy_ops rapl_ops = {
    .counter_name = "rapl", .power_name = "rapl", .period_s = 0.1, .counter = rapl_counter, .close = rapl_close};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct rapl_zone *)a)->energy, ((const struct rapl_zone *)b)->energy);
}

/* The packages (intel-rapl:N named package-*) and their DRAM (intel-rapl:N:M
 * named dram: outside the package's count on servers). psys, where there is
 * one, overlaps them both and is left out; so are core and uncore, inside
 * the package's. AMD's RAPL appears under the same names. */
bool pb__rapl_open(const char *root, const struct pb_energy_ops **ops, void **state, char *why, size_t len)
{
    if (!root)
        root = getenv("PB_TEST_POWERCAP_DIR");
    if (!root || !root[0])
        root = "/sys/class/powercap";
    struct rapl *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, len, "out of memory");
        return false;
    }
    DIR *d = opendir(root);
    if (!d) {
        snprintf(why, len, "no RAPL energy counters (%s: %s)", root, strerror(errno));
        free(r);
        return false;
    }
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        const char *colon = strchr(e->d_name, ':');
        if (strncmp(e->d_name, "intel-rapl:", 11) != 0 || !colon)
            continue;
        char dir[PATH_MAX], name[64];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        if (!read_name(dir, name, sizeof name))
            continue;
        bool sub = strchr(colon + 1, ':') != NULL;
        if (sub ? strcmp(name, "dram") != 0 : strncmp(name, "package", 7) != 0)
            continue;
        if (r->n == RAPL_MAX_ZONES)
            break;
        struct rapl_zone *z = &r->zone[r->n];
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/max_energy_range_uj", dir);
        ok = read_u64(path, &z->range, why, len);
        snprintf(z->energy, sizeof z->energy, "%s/energy_uj", dir);
        ok = ok && read_u64(z->energy, &z->last, why, len);
        r->n += ok;
    }
    closedir(d);
    if (ok && r->n == 0) {
        snprintf(why, len, "no RAPL package counters under %s (no RAPL driver here, e.g. in a virtual machine)",
                 root);
        ok = false;
    }
    if (!ok) {
        free(r);
        return false;
    }
    qsort(r->zone, r->n, sizeof r->zone[0], by_name);
    *ops = &rapl_ops;
    *state = r;
    return true;
}

bool (*pb__energy_host_open)(const char *, const struct pb_energy_ops **, void **, char *, size_t) = pb__rapl_open;

#ifndef PB_HAVE_NVML
bool pb__nvml_open(const char *pci_bus_id, const struct pb_energy_ops **ops, void **state, char *why, size_t len)
{
    (void)pci_bus_id, (void)ops, (void)state;
    snprintf(why, len, "this parbench was built without nvml.h (NVML's header: README, Build options)");
    return false;
}
#endif

/* ---- the meter -------------------------------------------------------------- */

struct pb_energy {
    const struct pb_energy_ops *ops; /* NULL: nothing measured (why says so) */
    void *state;
    char why[352];  /* "energy not measured on WHERE: REASON" */
    char note[320]; /* a failure during measurement */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* on the monotonic clock */
    pthread_t thread;
    bool thread_running, active, quit;
    /* the measurement */
    bool counting;          /* the counter is used and has not failed */
    double counter_last, joules;
    double t_start, seconds;
    struct pb_power_integral power;
    double sm_sum, mem_sum;
    size_t sm_n, mem_n, samples;
    unsigned throttle;
    bool throttle_known;
};

/* Lock held. */
static void read_counter(pb_energy *m)
{
    double j;
    char why[256];
    if (!m->counting)
        return;
    if (m->ops->counter(m->state, &j, why, sizeof why)) {
        m->joules += j - m->counter_last;
        m->counter_last = j;
    } else {
        m->counting = false;
        snprintf(m->note, sizeof m->note, "%.100s: %.200s", m->why, why);
    }
}

/* Lock held. */
static void take_sample(pb_energy *m)
{
    read_counter(m);
    m->samples++;
    if (!m->ops->sample)
        return;
    struct pb_energy_sample s = {NAN, NAN, NAN, 0, false};
    m->ops->sample(m->state, !m->ops->counter, &s);
    if (!isnan(s.watts))
        pb__power_add(&m->power, pb__now(), s.watts);
    if (!isnan(s.sm_mhz))
        m->sm_sum += s.sm_mhz, m->sm_n++;
    if (!isnan(s.mem_mhz))
        m->mem_sum += s.mem_mhz, m->mem_n++;
    if (s.throttle_known) {
        m->throttle |= s.throttle;
        m->throttle_known = true;
    }
}

static void *sampler(void *arg)
{
    pb_energy *m = arg;
    pthread_mutex_lock(&m->lock);
    while (!m->quit) {
        if (!m->active) {
            pthread_cond_wait(&m->wake, &m->lock);
            continue;
        }
        take_sample(m);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        long ns = (long)(m->ops->period_s * 1e9) + until.tv_nsec;
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&m->wake, &m->lock, &until);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

pb_status pb__energy_open(pb_device *dev, pb_energy **out)
{
    pb_energy *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    pthread_condattr_t attr;
    int e = pthread_condattr_init(&attr);
    if (!e) {
        if (!(e = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)) && !(e = pthread_cond_init(&m->wake, &attr)) &&
            (e = pthread_mutex_init(&m->lock, NULL)) != 0)
            pthread_cond_destroy(&m->wake);
        pthread_condattr_destroy(&attr);
    }
    if (e) {
        free(m);
        return pb__fail(PB_ERR_NOMEM, "cannot make an energy meter: %s", strerror(e));
    }
    struct pb_energy_domain d;
    memset(&d, 0, sizeof d);
    pb_status st = dev->backend->energy_domain ? dev->backend->energy_domain(dev, &d) : PB_OK;
    char why[256] = "";
    bool ok = false;
    if (st != PB_OK)
        snprintf(why, sizeof why, "%s", pb_last_error()[0] ? pb_last_error() : pb_status_message(st));
    else if (d.kind == PB_ENERGY_HOST_CPU)
        ok = pb__energy_host_open(NULL, &m->ops, &m->state, why, sizeof why);
    else if (d.kind == PB_ENERGY_PCI_GPU)
        ok = pb__nvml_open(d.pci_bus_id, &m->ops, &m->state, why, sizeof why);
    else
        snprintf(why, sizeof why, "the %s backend has no energy reading", dev->backend->name);
    if (!ok) {
        m->ops = NULL;
        snprintf(m->why, sizeof m->why, "energy not measured on %.80s: %.220s",
                 d.kind == PB_ENERGY_HOST_CPU ? "the host CPU" : dev->name, why);
    } else {
        snprintf(m->why, sizeof m->why, "energy on %.80s",
                 d.kind == PB_ENERGY_HOST_CPU ? "the host CPU" : dev->name);
    }
    *out = m;
    return PB_OK;
}

void pb__energy_start(pb_energy *m, bool resume)
{
    if (!m->ops)
        return;
    pthread_mutex_lock(&m->lock);
    if (!resume) {
        m->counting = m->ops->counter != NULL;
        m->counter_last = m->joules = m->seconds = 0;
        memset(&m->power, 0, sizeof m->power);
        m->sm_sum = m->mem_sum = 0;
        m->sm_n = m->mem_n = m->samples = 0;
        m->throttle = 0;
        m->throttle_known = false;
        m->note[0] = '\0';
    }
    if (m->counting) {
        char why[256];
        if (!m->ops->counter(m->state, &m->counter_last, why, sizeof why)) {
            m->counting = false;
            snprintf(m->note, sizeof m->note, "%.100s: %.200s", m->why, why);
        }
    }
    pb__power_break(&m->power);
    m->t_start = pb__now();
    m->active = true;
    if (!m->thread_running) {
        int e = pthread_create(&m->thread, NULL, sampler, m);
        m->thread_running = e == 0;
        if (e)
            snprintf(m->note, sizeof m->note, "%.100s: no sampling thread (%s): no clocks, no throttling",
                     m->why, strerror(e));
    }
    pthread_cond_signal(&m->wake);
    pthread_mutex_unlock(&m->lock);
}

void pb__energy_stop(pb_energy *m, struct pb_energy_reading *out)
{
    memset(out, 0, sizeof *out);
    out->joules = out->seconds = out->watts = out->sm_mhz = out->mem_mhz = NAN;
    if (!m->ops) {
        out->note = m->why;
        return;
    }
    pthread_mutex_lock(&m->lock);
    if (m->active) {
        /* At least one sample, however short the run (its clocks then are
         * the ones just after it). */
        if (m->samples == 0)
            take_sample(m);
        else
            read_counter(m);
        m->seconds += pb__now() - m->t_start;
        m->active = false;
    }
    out->seconds = m->seconds;
    double mean_w = pb__power_mean(&m->power), floor_s = PB_ENERGY_STEPS * m->ops->counter_step_s;
    if (m->counting && m->joules > 0 && m->seconds >= floor_s) {
        out->joules = m->joules;
        out->source = m->ops->counter_name;
    } else if (m->counting && m->joules > 0) {
        /* a step or two over a few milliseconds: watts no board draws */
        snprintf(m->note, sizeof m->note, "%.100s: the timed repetitions took %.1f ms, too short for its energy "
                 "counter, which moves in steps of about %.0f ms (%.0f ms needed: more --reps make them longer)",
                 m->why, m->seconds * 1e3, m->ops->counter_step_s * 1e3, floor_s * 1e3);
    } else if (m->counting) {
        snprintf(m->note, sizeof m->note, "%.100s: its energy counter did not advance during the timed "
                 "repetitions (too short: more --reps make them longer)", m->why);
    } else if (!m->ops->counter && !isnan(mean_w)) {
        out->joules = mean_w * m->seconds;
        out->source = m->ops->power_name;
    }
    if (out->seconds > 0)
        out->watts = out->joules / out->seconds;
    if (m->sm_n)
        out->sm_mhz = m->sm_sum / (double)m->sm_n;
    if (m->mem_n)
        out->mem_mhz = m->mem_sum / (double)m->mem_n;
    if (m->throttle_known)
        pb__throttle_name(m->throttle, out->throttle, sizeof out->throttle);
    if (m->note[0])
        out->note = m->note;
    pthread_mutex_unlock(&m->lock);
}

void pb__energy_free(pb_energy *m)
{
    if (!m)
        return;
    if (m->thread_running) {
        pthread_mutex_lock(&m->lock);
        m->quit = true;
        pthread_cond_signal(&m->wake);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->thread, NULL);
    }
    if (m->ops && m->ops->close)
        m->ops->close(m->state);
    pthread_cond_destroy(&m->wake);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

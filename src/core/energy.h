/* Energy, power and clocks of a device while a row's timed repetitions run.
 *
 * One meter per device, behind one interface: NVIDIA GPUs through NVML
 * (libnvidia-ml.so.1 loaded at run time: the total-energy counter where the
 * GPU has one, else power sampled and integrated; SM and memory clocks and
 * the reasons clocks were held back, sampled), the host CPU through RAPL
 * (powercap sysfs energy counters of the packages and their DRAM, wrap-around
 * handled). A sampling thread per meter reads every 15 ms (GPU) or 100 ms
 * (CPU) while a measurement runs; counters are read only at start and stop.
 *
 * A meter that cannot measure (no driver, no permission, a backend without an
 * energy domain) returns empty readings and says why once, through the
 * reading's note; it never fails a row. */
#ifndef PARBENCH_ENERGY_H
#define PARBENCH_ENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reasons a GPU held its clocks back that make a measurement suspect (idle,
 * application or display clock settings are not among them). */
enum {
    PB_THROTTLE_POWER_CAP = 1u << 0,   /* software power cap */
    PB_THROTTLE_HW_SLOWDOWN = 1u << 1, /* hardware slowdown (thermal or power brake) */
    PB_THROTTLE_SYNC_BOOST = 1u << 2,  /* held to another GPU's clocks */
    PB_THROTTLE_THERMAL = 1u << 3,     /* software thermal slowdown */
    PB_THROTTLE_HW_THERMAL = 1u << 4,
    PB_THROTTLE_POWER_BRAKE = 1u << 5, /* external power brake */
};

struct pb_energy_reading {
    /* Over the measured time: joules, and seconds on the host clock; NAN when
     * not measured (no source, no sample, a counter that did not move). */
    double joules, seconds;
    double watts;           /* joules / seconds */
    double sm_mhz, mem_mhz; /* mean of the samples; NAN = none */
    /* "" = unknown, "none", or the PB_THROTTLE_ reasons seen, joined by '+'
     * ("power-cap+thermal"). */
    char throttle[64];
    /* "nvml-energy" (counter), "nvml-power" (sampled power integrated),
     * "rapl"; NULL = not measured. */
    const char *source;
    /* Why nothing (or less) was measured, the first time only; NULL after. */
    const char *note;
};

typedef struct pb_energy pb_energy;

/* A meter for dev (its backend's energy_domain). *out is NULL only when out
 * of memory; a meter that cannot measure is still returned. */
pb_status pb__energy_open(pb_device *dev, pb_energy **out);
/* Starts a measurement (resume = false: totals from zero) or resumes one
 * after pb__energy_stop (resume = true: time between is left out). */
void pb__energy_start(pb_energy *m, bool resume);
/* Stops (or pauses) the measurement; out = the totals so far. */
void pb__energy_stop(pb_energy *m, struct pb_energy_reading *out);
void pb__energy_free(pb_energy *m); /* accepts NULL */

/* For ref/openmp's energy_domain: the host CPU. */
pb_status pb__energy_domain_host(pb_device *dev, struct pb_energy_domain *out);

/* ---- the pieces, for tests --------------------------------------------- */

/* Energy of a RAPL counter (micro-joules) going from before to after, which
 * wraps to 0 past range (max_energy_range_uj). */
uint64_t pb__rapl_delta(uint64_t before, uint64_t after, uint64_t range);

/* Sampled power integrated over time: trapezoids between consecutive
 * samples of one stretch; pb__power_break starts a new stretch. */
struct pb_power_integral {
    double joules, seconds; /* the trapezoids' area and width */
    double last_t, last_w;
    bool have_last;
    double sum_w; /* of every sample: the mean when no trapezoid was made */
    size_t n;
};
void pb__power_add(struct pb_power_integral *p, double t, double watts);
void pb__power_break(struct pb_power_integral *p);
/* Mean power: joules / seconds of the trapezoids, else the samples' mean;
 * NAN without samples. */
double pb__power_mean(const struct pb_power_integral *p);

/* "power-cap+thermal" from PB_THROTTLE_ bits; "none" for 0. */
void pb__throttle_name(unsigned bits, char *buf, size_t len);

/* One source of readings (RAPL, NVML): the meter calls these with its lock
 * held, from the caller's thread or the sampling thread. */
struct pb_energy_sample {
    double watts, sm_mhz, mem_mhz; /* NAN = not read */
    unsigned throttle;             /* PB_THROTTLE_ bits */
    bool throttle_known;
};
#define PB_ENERGY_STEPS 5
struct pb_energy_ops {
    const char *counter_name, *power_name; /* the reading's source */
    double period_s;                       /* between samples */
    /* The counter moves in steps about this far apart (0: finely): energy is
     * read from it only over intervals of PB_ENERGY_STEPS steps or more. */
    double counter_step_s;
    /* Cumulative energy in joules; false = no counter, or it failed (why set). */
    bool (*counter)(void *state, double *joules, char *why, size_t len);
    /* NULL = nothing to sample. want_power: the counter is not in use. */
    void (*sample)(void *state, bool want_power, struct pb_energy_sample *out);
    void (*close)(void *state);
};

/* RAPL under root (NULL: PB_TEST_POWERCAP_DIR, else /sys/class/powercap).
 * False with why when no zone can be read. */
bool pb__rapl_open(const char *root, const struct pb_energy_ops **ops, void **state, char *why, size_t len);
/* Opens the host CPU's reading in pb__energy_open: pb__rapl_open by default;
 * tests put a stand-in here (one whose counter moves on every read, so a run
 * sees energy however its threads are scheduled). */
extern bool (*pb__energy_host_open)(const char *root, const struct pb_energy_ops **ops, void **state, char *why,
                                    size_t len);
/* NVML for the GPU at pci_bus_id (PB_TEST_NVML_LIB names another library to
 * load, for tests). False with why when it cannot be measured. */
bool pb__nvml_open(const char *pci_bus_id, const struct pb_energy_ops **ops, void **state, char *why,
                   size_t len);

#ifdef __cplusplus
}
#endif
#endif

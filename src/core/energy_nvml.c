/* The NVML source of energy meters (energy.h): libnvidia-ml.so.1 is loaded at
 * run time, so the binary starts where there is no NVIDIA driver. Built where
 * nvml.h is found (the CUDA toolkit, or PyPI's nvidia-nvml-dev). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvml.h>

#include "core/energy.h"

/* Older headers name the reasons call after throttling; the same signature. */
#ifdef nvmlClocksEventReasonGpuIdle
typedef __typeof__(nvmlDeviceGetCurrentClocksEventReasons) reasons_fn;
#else
typedef __typeof__(nvmlDeviceGetCurrentClocksThrottleReasons) reasons_fn;
#endif

struct nvml {
    void *lib;
    __typeof__(nvmlShutdown) *shutdown;
    __typeof__(nvmlErrorString) *error_string;
    __typeof__(nvmlDeviceGetTotalEnergyConsumption) *energy;
    __typeof__(nvmlDeviceGetPowerUsage) *power;
    __typeof__(nvmlDeviceGetClockInfo) *clock;
    reasons_fn *reasons; /* NULL: a driver without either name */
    nvmlDevice_t dev;
};

/* dlsym's object pointer into the function pointer at fp, as POSIX allows. */
static bool load(void *lib, const char *name, void *fp)
{
    void *sym = dlsym(lib, name);
    memcpy(fp, &sym, sizeof sym);
    return sym != NULL;
}

static const char *nvml_error(const struct nvml *n, nvmlReturn_t r)
{
    return n->error_string ? n->error_string(r) : "NVML error";
}

static bool nvml_counter(void *state, double *joules, char *why, size_t len)
{
    struct nvml *n = state;
    unsigned long long mj = 0;
    nvmlReturn_t r = n->energy(n->dev, &mj);
    if (r != NVML_SUCCESS) {
        snprintf(why, len, "nvmlDeviceGetTotalEnergyConsumption: %s", nvml_error(n, r));
        return false;
    }
    *joules = (double)mj * 1e-3;
    return true;
}

static void nvml_sample(void *state, bool want_power, struct pb_energy_sample *out)
{
    struct nvml *n = state;
    unsigned v = 0;
    if (want_power && n->power(n->dev, &v) == NVML_SUCCESS)
        out->watts = v * 1e-3;
    if (n->clock(n->dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
        out->sm_mhz = v;
    if (n->clock(n->dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
        out->mem_mhz = v;
    unsigned long long bits = 0;
    if (n->reasons && n->reasons(n->dev, &bits) == NVML_SUCCESS) {
        /* Idle, application and display clock settings are no throttling. */
        static const struct {
            unsigned long long nvml;
            unsigned ours;
        } map[] = {{nvmlClocksThrottleReasonSwPowerCap, PB_THROTTLE_POWER_CAP},
                   {nvmlClocksThrottleReasonHwSlowdown, PB_THROTTLE_HW_SLOWDOWN},
                   {nvmlClocksThrottleReasonSyncBoost, PB_THROTTLE_SYNC_BOOST},
                   {nvmlClocksThrottleReasonSwThermalSlowdown, PB_THROTTLE_THERMAL},
                   {nvmlClocksThrottleReasonHwThermalSlowdown, PB_THROTTLE_HW_THERMAL},
                   {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, PB_THROTTLE_POWER_BRAKE}};
        out->throttle = 0;
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (bits & map[i].nvml)
                out->throttle |= map[i].ours;
        out->throttle_known = true;
    }
}

static void nvml_close(void *state)
{
    struct nvml *n = state;
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

static const struct pb_energy_ops nvml_energy_ops = {.counter_name = "nvml-energy", .power_name = "nvml-power",
                                                     .period_s = 0.015, .counter_step_s = 0.02, .counter = nvml_counter,
                                                     .sample = nvml_sample, .close = nvml_close};
/* GPUs before Volta have no energy counter: their power is sampled. */
static const struct pb_energy_ops nvml_power_ops = {.counter_name = "nvml-energy", .power_name = "nvml-power",
                                                    .period_s = 0.015, .sample = nvml_sample, .close = nvml_close};

bool pb__nvml_open(const char *pci_bus_id, const struct pb_energy_ops **ops, void **state, char *why, size_t len)
{
    const char *name = getenv("PB_TEST_NVML_LIB");
    if (!name || !name[0])
        name = "libnvidia-ml.so.1";
    struct nvml *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(why, len, "out of memory");
        return false;
    }
    n->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        snprintf(why, len, "NVML not found (%s)", dlerror());
        free(n);
        return false;
    }
    __typeof__(nvmlInit_v2) *init = NULL;
    __typeof__(nvmlDeviceGetHandleByPciBusId_v2) *by_bus = NULL;
    const char *missing = !load(n->lib, "nvmlInit_v2", &init)                              ? "nvmlInit_v2"
                          : !load(n->lib, "nvmlShutdown", &n->shutdown)                    ? "nvmlShutdown"
                          : !load(n->lib, "nvmlDeviceGetHandleByPciBusId_v2", &by_bus)     ? "nvmlDeviceGetHandleByPciBusId_v2"
                          : !load(n->lib, "nvmlDeviceGetPowerUsage", &n->power)            ? "nvmlDeviceGetPowerUsage"
                          : !load(n->lib, "nvmlDeviceGetClockInfo", &n->clock)             ? "nvmlDeviceGetClockInfo"
                                                                                          : NULL;
    (void)load(n->lib, "nvmlErrorString", &n->error_string);
    if (!load(n->lib, "nvmlDeviceGetCurrentClocksEventReasons", &n->reasons))
        (void)load(n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &n->reasons);
    bool has_energy = load(n->lib, "nvmlDeviceGetTotalEnergyConsumption", &n->energy);
    if (missing) {
        snprintf(why, len, "%s lacks %s (an older driver than parbench needs)", name, missing);
        dlclose(n->lib);
        free(n);
        return false;
    }
    nvmlReturn_t r = init();
    if (r != NVML_SUCCESS) {
        snprintf(why, len, "nvmlInit failed: %s", nvml_error(n, r));
        dlclose(n->lib);
        free(n);
        return false;
    }
    /* By PCI bus id, not index: NVML and CUDA may number GPUs differently
     * (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER). */
    if ((r = by_bus(pci_bus_id, &n->dev)) != NVML_SUCCESS) {
        snprintf(why, len, "no NVML device at PCI bus id %s: %s", pci_bus_id, nvml_error(n, r));
        nvml_close(n);
        return false;
    }
    unsigned long long mj;
    unsigned mw;
    if (has_energy && n->energy(n->dev, &mj) == NVML_SUCCESS) {
        *ops = &nvml_energy_ops;
    } else if ((r = n->power(n->dev, &mw)) == NVML_SUCCESS) {
        *ops = &nvml_power_ops;
    } else {
        snprintf(why, len, "the GPU reports neither energy nor power: %s", nvml_error(n, r));
        nvml_close(n);
        return false;
    }
    *state = n;
    return true;
}

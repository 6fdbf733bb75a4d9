/* A stand-in for libnvidia-ml.so.1 (test_energy loads it through
 * PB_TEST_NVML_LIB): one GPU at PCI bus id 0000:65:00.0, its functions
 * declared by nvml.h itself. FAKE_NVML_MODE=power: no energy counter, power
 * sampled instead; otherwise the counter advances 1 J at every read. */
#include <stdlib.h>
#include <string.h>

#include <nvml.h>

static char gpu; /* the handle's target */

static int power_only(void)
{
    const char *mode = getenv("FAKE_NVML_MODE");
    return mode && strcmp(mode, "power") == 0;
}

nvmlReturn_t nvmlInit_v2(void) { return NVML_SUCCESS; }

nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t result)
{
    return result == NVML_ERROR_NOT_FOUND ? "Not Found" : "fake NVML error";
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    if (strcmp(pciBusId, "0000:65:00.0") != 0)
        return NVML_ERROR_NOT_FOUND;
    *device = (nvmlDevice_t)(void *)&gpu;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
    static unsigned long long mj = 5000000;
    if (device != (nvmlDevice_t)(void *)&gpu)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (power_only())
        return NVML_ERROR_NOT_SUPPORTED;
    *energy = mj += 1000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    (void)device;
    *power = 250000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    (void)device;
    *clock = type == NVML_CLOCK_SM ? 1980 : type == NVML_CLOCK_MEM ? 2619 : 0;
    return NVML_SUCCESS;
}

/* Idle and a display clock setting, which are no throttling, beside a power
 * cap and sync boost, which are. */
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons)
{
    (void)device;
    *reasons = nvmlClocksThrottleReasonGpuIdle | nvmlClocksThrottleReasonSwPowerCap |
               nvmlClocksThrottleReasonSyncBoost | nvmlClocksEventReasonDisplayClockSetting;
    return NVML_SUCCESS;
}

/* Host CPU description for the CPU backends' `devices` output. */
#ifndef PARBENCH_CPUINFO_H
#define PARBENCH_CPUINFO_H

#include "core/core.h"
#include "parbench/pb_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Append key = printf(fmt, ...) to info (silently dropped when full). */
void pb__info_add(struct pb_device_info *info, const char *key, const char *fmt, ...) PB__PRINTF(3, 4);
/* Fill info with the host CPU's name and properties. */
void pb__cpu_info(struct pb_device_info *info);
/* The CPU model string ("unknown CPU" when not found). */
void pb__cpu_model(char *buf, size_t len);
/* Bytes of the last-level data cache of CPU 0 (one instance: what the cores
 * sharing it hold together); 0 when unknown. */
size_t pb__cpu_last_cache_bytes(void);
/* Bytes of CPU 0's level-2 cache (each core's own on most CPUs); 0 when unknown. */
size_t pb__cpu_l2_cache_bytes(void);

#ifdef __cplusplus
}
#endif
#endif

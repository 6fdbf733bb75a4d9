/* Host memory: aligned allocation guarded by the memory actually available. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"

/* PB_TEST_MEM_AVAILABLE=BYTES (k/M/G suffixes), for tests only: the refusals
 * are tested on a small pretend host instead of allocating a large amount. */
static bool test_mem_available(size_t *out)
{
    const char *s = getenv("PB_TEST_MEM_AVAILABLE");
    if (!s || !*s)
        return false;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    const char *units = "kmg", *u = *end ? strchr(units, *end | 0x20) : NULL;
    int shift = u ? 10 * (int)(u - units + 1) : 0;
    if (end == s || (*end && (!u || end[1])) || v > (SIZE_MAX >> shift))
        return false; /* not a size: the real figure */
    *out = (size_t)v << shift;
    return true;
}

size_t pb__host_mem_available(void)
{
    size_t fake;
    if (test_mem_available(&fake))
        return fake;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return SIZE_MAX;
    char line[256];
    size_t avail = SIZE_MAX;
    while (fgets(line, sizeof line, f)) {
        unsigned long long kib;
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
            avail = (size_t)kib * 1024u;
            break;
        }
    }
    fclose(f);
    return avail;
}

bool pb__host_mem_lacks(size_t bytes) { return bytes >= ((size_t)16 << 20) && bytes > pb__host_mem_available(); }

pb_status pb__host_mem_need(double bytes, const char *who, const char *what)
{
    size_t avail = pb__host_mem_available();
    if (bytes <= (double)avail)
        return PB_OK;
    char want[32], have[32];
    return pb__fail(PB_ERR_NOMEM, "%s needs %s of host memory %s, %s is available", who,
                    pb__format_bytes(bytes, want, sizeof want), what,
                    pb__format_bytes((double)avail, have, sizeof have));
}

pb_status pb__host_alloc(size_t bytes, const char *what, void **out)
{
    char want[32], have[32];
    *out = NULL;
    if (pb__host_mem_lacks(bytes))
        return pb__fail(PB_ERR_NOMEM, "cannot allocate %s for %s: only %s of host memory available",
                        pb__format_bytes((double)bytes, want, sizeof want), what,
                        pb__format_bytes((double)pb__host_mem_available(), have, sizeof have));
    /* aligned_alloc needs a multiple of the alignment; 0 bytes still gets a
     * unique pointer so callers need no special case. */
    size_t rounded;
    if (!pb__add_size(bytes, 63, &rounded))
        return pb__fail(PB_ERR_OVERFLOW, "size of %s overflows", what);
    rounded = rounded / 64 * 64;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate %s for %s",
                        pb__format_bytes((double)bytes, want, sizeof want), what);
    *out = p;
    return PB_OK;
}

void pb__host_free(void *p) { free(p); }

const char *pb__format_bytes(double bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;
    while (bytes >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        bytes /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f %s", bytes, units[u]);
    else
        snprintf(buf, len, "%.1f %s", bytes, units[u]);
    return buf;
}

double pb__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

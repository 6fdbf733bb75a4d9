/* What the CPU is: model, cores, threads, caches, SIMD, memory. Linux reads
 * /proc/cpuinfo and sysfs; missing files just leave properties out. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cpuinfo.h"

void pb__info_add(struct pb_device_info *info, const char *key, const char *fmt, ...)
{
    if (info->n_props >= PB_INFO_MAX_PROPS)
        return;
    int i = info->n_props++;
    snprintf(info->props[i].key, sizeof info->props[i].key, "%s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(info->props[i].value, sizeof info->props[i].value, fmt, ap);
    va_end(ap);
}

static void strip(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

/* First line of a small file into buf; false when unreadable. */
static bool read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        strip(buf);
    return ok;
}

void pb__cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (colon && (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0)) {
            strip(colon + 2);
            snprintf(buf, len, "%s", colon + 2);
            break;
        }
    }
    fclose(f);
}

/* Physical cores = distinct (physical id, core id) pairs; 0 when unknown. */
static int count_cores(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[1024];
    int phys = 0, pairs[1024][2], n = 0;
    while (fgets(line, sizeof line, f)) {
        int v;
        if (sscanf(line, "physical id : %d", &v) == 1)
            phys = v;
        else if (sscanf(line, "core id : %d", &v) == 1) {
            bool seen = false;
            for (int i = 0; i < n && !seen; i++)
                seen = pairs[i][0] == phys && pairs[i][1] == v;
            if (!seen && n < 1024) {
                pairs[n][0] = phys;
                pairs[n][1] = v;
                n++;
            }
        }
    }
    fclose(f);
    return n;
}

static void add_simd(struct pb_device_info *info)
{
    static const char *const known[] = {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw",
                                        "avx512vl", "avx512_bf16", "amx_tile", "asimd", "sve"};
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192], out[192] = "";
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0 && strncmp(line, "Features", 8) != 0)
            continue;
        strip(line);
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
            char pat[32];
            snprintf(pat, sizeof pat, " %s", known[i]);
            const char *hit = strstr(line, pat);
            size_t plen = strlen(pat);
            if (hit && (hit[plen] == ' ' || hit[plen] == '\0')) {
                size_t used = strlen(out);
                snprintf(out + used, sizeof out - used, "%s%s", used ? " " : "", known[i]);
            }
        }
        break;
    }
    fclose(f);
    if (out[0])
        pb__info_add(info, "simd", "%s", out);
}

/* Cache `index` of CPU 0 as Linux describes it: level, type (Data,
 * Instruction, Unified) and size ("32768K"). -1: no such index (the list
 * ends), 0: one of them unreadable, 1: read. */
static int cache_at(int index, char level[16], char type[32], char size[32])
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
    if (!read_line(path, level, 16))
        return -1;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
    if (!read_line(path, type, 32))
        return 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    return read_line(path, size, 32) ? 1 : 0;
}

static void add_caches(struct pb_device_info *info)
{
    char level[16], type[32], size[32], key[48];
    for (int i = 0, got; i < 8 && (got = cache_at(i, level, type, size)) >= 0; i++) {
        if (!got)
            continue;
        const char *suffix = strcmp(type, "Data") == 0 ? "d" : strcmp(type, "Instruction") == 0 ? "i" : "";
        snprintf(key, sizeof key, "cache_l%s%s", level, suffix);
        pb__info_add(info, key, "%s", size);
    }
}

/* The data (or unified) cache of CPU 0 at `want` (0: the highest level). */
static size_t cache_bytes(int want)
{
    size_t best = 0;
    int best_level = 0;
    char level[16], type[32], size[32];
    for (int i = 0, got; i < 8 && (got = cache_at(i, level, type, size)) >= 0; i++) {
        char unit = 0;
        unsigned long n = 0;
        if (!got || strcmp(type, "Instruction") == 0 || sscanf(size, "%lu%c", &n, &unit) < 1)
            continue;
        size_t bytes = (size_t)n * (unit == 'K' ? 1024u : unit == 'M' ? 1048576u : 1u);
        if (want ? atoi(level) == want : atoi(level) > best_level)
            best_level = atoi(level), best = bytes;
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (!best) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        long got = want == 2 ? l2 : want == 3 || l3 > 0 ? l3 : l2;
        best = got > 0 ? (size_t)got : 0;
    }
#endif
    return best;
}

size_t pb__cpu_last_cache_bytes(void) { return cache_bytes(0); }
size_t pb__cpu_l2_cache_bytes(void) { return cache_bytes(2); }

void pb__cpu_info(struct pb_device_info *info)
{
    char model[128];
    pb__cpu_model(model, sizeof model);
    snprintf(info->name, sizeof info->name, "%s", model);
    snprintf(info->kind, sizeof info->kind, "cpu");
    pb__info_add(info, "model", "%s", model);
    int cores = count_cores();
    if (cores > 0)
        pb__info_add(info, "cores", "%d", cores);
    pb__info_add(info, "threads", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    char freq[32];
    long khz;
    if (read_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", freq, sizeof freq) &&
        sscanf(freq, "%ld", &khz) == 1)
        pb__info_add(info, "max_clock", "%.2f GHz", (double)khz / 1e6);
    add_caches(info);
    add_simd(info);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        pb__info_add(info, "memory", "%.1f GiB", (double)pages * (double)page / (1u << 30));
}

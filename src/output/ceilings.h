/* The machine's ceilings (`parbench ceilings`): per device, peak memory
 * bandwidth, host<->device bandwidth and peak FMA throughput. Saved as JSON;
 * runs read it to give every row its fraction of the device's ceiling. */
#ifndef PARBENCH_CEILINGS_H
#define PARBENCH_CEILINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "parbench/pb.h"

/* GB/s are 1e9 bytes/s. NAN = not measured. */
struct pb_ceiling {
    char backend[32], device[256];
    double copy_gbps;   /* device-to-device copy, bytes read + written */
    double read_gbps;   /* read-only streaming */
    double h2d_gbps, d2h_gbps; /* pinned host memory */
    double fp32_gflops, fp64_gflops; /* FMA throughput */
};

struct pb_ceilings {
    struct pb_ceiling *dev;
    size_t n;
    char date[32], commit[48];
};

/* $XDG_CACHE_HOME/parbench/ceilings.json or ~/.cache/parbench/ceilings.json;
 * false when neither variable is set. */
bool pb__ceilings_default_path(char *buf, size_t len);

/* PB_ERR_NOT_FOUND when the file does not exist (no message), PB_ERR_IO or
 * PB_ERR_PARSE otherwise. */
pb_status pb__ceilings_read(const char *path, struct pb_ceilings *out);
/* The same from a file's NUL-terminated text; name is for messages. */
pb_status pb__ceilings_parse(const char *text, const char *name, struct pb_ceilings *out);
/* Creates the parent directory when missing. */
pb_status pb__ceilings_write(const char *path, const struct pb_ceilings *c);
/* Adds or replaces the entry of (backend, device). */
pb_status pb__ceilings_put(struct pb_ceilings *c, const struct pb_ceiling *entry);
void pb__ceilings_free(struct pb_ceilings *c);

const struct pb_ceiling *pb__ceilings_find(const struct pb_ceilings *c, const char *backend,
                                           const char *device);
/* Memory ceiling: the larger of copy and read-only streaming. */
double pb__ceiling_mem_gbps(const struct pb_ceiling *c);
/* Fraction of the ceiling a rate reaches: the larger of GFLOP/s against the
 * FMA peak of that precision and GB/s against the memory ceiling (the
 * roofline bound that is closer). NAN when nothing applies. double_prec
 * picks fp64; typeless rows compare bandwidth only. */
double pb__ceiling_fraction(const struct pb_ceiling *c, bool typeless, bool double_prec,
                            double gflops, double gbps);

#endif

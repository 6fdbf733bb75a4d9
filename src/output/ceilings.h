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
    bool derived_copy; /* reports: copy_gbps is the best measured d2d copy, not a ceilings file's */
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
 * PB_ERR_PARSE otherwise (also for a ceiling that is not a positive, finite
 * and plausible number). */
pb_status pb__ceilings_read(const char *path, struct pb_ceilings *out);
/* The same from a file's NUL-terminated text; name is for messages. */
pb_status pb__ceilings_parse(const char *text, const char *name, struct pb_ceilings *out);
/* Creates the parent directory when missing; replaces the file whole (a
 * temporary renamed over it), so a failed write keeps the old one. */
pb_status pb__ceilings_write(const char *path, const struct pb_ceilings *c);
/* Whether pb__ceilings_write could write path (its directory created when
 * missing): checked before measuring, not after. */
pb_status pb__ceilings_check_writable(const char *path);
/* Adds or replaces the entry of (backend, device). */
pb_status pb__ceilings_put(struct pb_ceilings *c, const struct pb_ceiling *entry);
void pb__ceilings_free(struct pb_ceilings *c);

const struct pb_ceiling *pb__ceilings_find(const struct pb_ceilings *c, const char *backend,
                                           const char *device);
/* Memory ceiling: the larger of copy and read-only streaming. */
double pb__ceiling_mem_gbps(const struct pb_ceiling *c);

/* The ceilings a benchmark's rates are held against, one for GFLOP/s and
 * one for GB/s; each benchmark declares its own (bench.h: roof). */
enum pb_roof_kind {
    PB_ROOF_NONE,   /* not held against anything of this kind */
    PB_ROOF_FMA,    /* GFLOP/s: the FMA peak of the row's precision */
    PB_ROOF_TENSOR, /* GFLOP/s on tensor cores: no peak measured, no fraction */
    PB_ROOF_MEMORY, /* GB/s: device memory (pb__ceiling_mem_gbps) */
    PB_ROOF_H2D,    /* GB/s: host to device (pinned) */
    PB_ROOF_D2H,    /* GB/s: device to host (pinned) */
    PB_ROOF_BIDIR,  /* GB/s through the link both ways at once (data in and
                       out, counted together): H2D + D2H, what any split reaches at most */
    PB_ROOF_ONCHIP, /* GB/s of shared/local memory: no ceiling measured, no fraction */
};
struct pb_roof {
    enum pb_roof_kind flops, bytes;
};

/* The ceiling of that kind in its unit (GFLOP/s or GB/s); NAN when it is not
 * measured or not measurable (TENSOR, ONCHIP, NONE). */
double pb__roof_value(const struct pb_ceiling *c, enum pb_roof_kind kind, bool double_prec);
/* Whether the kind stands for hardware no ceiling covers (the fraction is
 * then left empty on purpose, and a report says why). */
bool pb__roof_unmeasured(enum pb_roof_kind kind);
/* "FMA peak", "memory", "H2D", ...: for labels. */
const char *pb__roof_name(enum pb_roof_kind kind);

/* Fraction of its ceiling a row reaches, on the roofline of its roof: the
 * larger of GFLOP/s over the flops ceiling and GB/s over the bytes ceiling,
 * where each is set and measured. NAN when nothing applies, and whenever a
 * roof is unmeasured (a part the other ceiling would misjudge). */
double pb__ceiling_fraction(const struct pb_ceiling *c, struct pb_roof roof, bool double_prec, double gflops,
                            double gbps);

/* Whether a CUDA device of this name runs double GEMMs (cuBLAS) on FP64
 * tensor cores: the data-centre parts from A100 on (A100, A30, H100, H200,
 * GH200, B200, ...), matched on whole words of the name. */
bool pb__fp64_tensor_device(const char *device);

#endif

/* Separable convolution, host side: filters, the seeded image and its oracle
 * (shared by the conv and conv-stream benchmarks), and the strip engine that
 * filters an image of any height through a device in horizontal strips (the
 * conv-stream benchmark and the `parbench conv` command). */
#ifndef PARBENCH_CONV_HOST_H
#define PARBENCH_CONV_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bench/bench.h"
#include "parbench/pb_kernels.h"

#define PB_CONV_MAX_SIDE (1u << 24)

/* "zero" or "clamp". */
pb_status pb__conv_border_parse(const char *s, enum pb_conv_border *out);
/* 2R+1 taps in double (free()), normalised to sum 1, from a spec: "gauss"
 * (sigma R/3), "gauss:SIGMA", "box", or a text file of 2R+1 numbers
 * (whitespace or commas; used as given). *radius 0 with a file: the file's
 * count sets it. PB_ERR_INVALID / PB_ERR_IO with a message. */
pb_status pb__conv_filter_make(const char *spec, size_t *radius, double **taps);
/* The filter-file part of it, from an open stream (path: for messages). */
pb_status pb__conv_filter_read(FILE *f, const char *path, size_t *radius, double **taps);
/* Taps rounded to prec into a host array (free with pb__host_free). */
pb_status pb__conv_filter_cast(const double *taps, size_t radius, enum pb_precision prec, void **out);

/* Checks width, height, radius: PB_ERR_INVALID with a message when absurd. */
pb_status pb__conv_check_dims(int64_t width, int64_t height, int64_t radius, enum pb_precision prec);

/* The problem's parameters common to both benchmarks. */
struct pb_conv_shape {
    size_t width, height, radius;
    enum pb_conv_border border;
    const char *filter; /* spec */
    enum pb_precision prec;
    /* Strip heights (0: none) whose seams a sampled check covers: the last
     * row of every strip and the first of the next. */
    size_t strips[2];
    /* Images of up to this many pixels are checked whole; 0: 2^27. */
    size_t full_pixels;
};

/* Seeded image and the oracle: every row when the image is small enough,
 * else a sample of rows (first, last, seeded ones and the strips' seams, up
 * to SEAM_ROWS of them), a finite check, and projections that reach every
 * element: each row's segments of seg_len columns times a seeded vector r,
 * whose oracle K_H (I (K_W^T r_s)) costs a few passes over the image where
 * the filter's costs 2(2R+1) (the output is K_H I K_W^T, K the 1D filter
 * with its border as a matrix).
 * Each output element is checked against its rounding-error scale
 * (verify.h): u sqrt(N) sum|t| + N tiny, sum|t| = the |taps| x |taps|
 * filter applied to |image|, N = 2(2R+1) + 1 roundings on the path of a
 * term through both passes and the intermediate's store (Higham & Mary's
 * probabilistic bound; the terms' signs are not relied on, as a clamped
 * border repeats pixels). */
struct pb_conv_host {
    struct pb_conv_shape shape;
    uint64_t seed;
    void *image;        /* width x height, prec */
    double *taps;       /* 2R+1, rounded to prec (what the kernels see) */
    double *ref;        /* n_rows x width */
    double *scale;      /* n_rows x width: each element's error scale */
    size_t *rows;       /* rows of the output the oracle covers */
    size_t n_rows;
    /* Sampled images: each row's segments of seg_len columns (n_segs of
     * them, the last maybe shorter) times r, their oracle, and a bound on
     * the |taps| filter of |image| over each row (its elements' scales). */
    size_t seg_len, n_segs;
    double *proj_r;     /* width */
    double *proj_ref;   /* height x n_segs */
    double *proj_bound; /* height */
    char proj_what[96]; /* what a projection is, in messages */
    /* Why the filter's outputs may not fit in prec ("" when they do): its rows are UNSUPPORTED. */
    char overflow[192];
};
pb_status pb__conv_host_prepare(const struct pb_conv_shape *shape, uint64_t seed, struct pb_conv_host **out);
/* The rows on either side of shape's strips' seams, at most max of them
 * (seams spread evenly where there are more), into out; their count. */
size_t pb__conv_seam_rows(const struct pb_conv_shape *shape, size_t *out, size_t max);
void pb__conv_host_release(void *host);
/* Compare an output image (host memory, prec) with the oracle; corrupt:
 * first add a fault to a seeded element anywhere in the image. */
pb_status pb__conv_host_check(const struct pb_conv_host *h, void *image, bool corrupt, struct pb_check *out);

/* ---- the strip engine -------------------------------------------------- */

/* How strips travel between the host images and the device. */
enum pb_conv_host_mem {
    PB_CONV_STAGED,      /* through pinned strip-sized buffers (a memcpy each way) */
    PB_CONV_PINNED,      /* straight from and to the images, page-locked in place */
    PB_CONV_PIN_IF_ABLE, /* pinned where the backend and the host allow, else staged */
};

/* What the engine runs: one variant of the device's conv kernels on strips
 * of strip_rows output rows (plus up to R halo rows above and below), through
 * `slots` sets of buffers. streams: each slot has its own stream, so the
 * copies of one strip overlap the kernel of another; otherwise every step
 * blocks. Staging buffers are pinned and strip-sized. */
struct pb_conv_job {
    struct pb_conv_shape shape;
    const char *variant; /* NULL or "auto": the device's fastest */
    size_t slots;
    bool streams;
    size_t strip_rows;   /* 0: from device_mem, or a default */
    size_t device_mem;   /* bytes the engine may use on the device; 0 = no cap */
    enum pb_conv_host_mem host_mem;
    /* Not staged: the only images the engine then filters (in to out). */
    const void *in;
    void *out;
};

enum pb_conv_part { PB_CONV_ALL, PB_CONV_COPIES, PB_CONV_KERNELS };

struct pb_conv_engine;

/* Rows per strip for the job: PB_ERR_INVALID when even one row does not fit
 * device_mem. */
pb_status pb__conv_strip_rows(const struct pb_conv_job *job, size_t *rows);
/* The variant "auto" stands for on this backend for a filter of this radius
 * (NULL when it has none): the fastest, of those that take a where a is
 * given; another name is looked up as it is. */
const struct pb_variant *pb__conv_auto_variant(const pb_device *dev, const char *name, size_t radius,
                                               const struct pb_conv_args *a);
pb_status pb__conv_engine_create(pb_device *dev, const struct pb_conv_job *job, const double *taps,
                                 struct pb_conv_engine **out);
void pb__conv_engine_free(struct pb_conv_engine *e);
/* False when the backend has no conv kernel of the job's variant name. */
bool pb__conv_engine_auto_variant_ok(const struct pb_conv_engine *e);
/* Name of the kernel the engine runs ("-" when none). */
const char *pb__conv_engine_variant(const struct pb_conv_engine *e);
/* Why the chosen kernel cannot run these strips (NULL = it can). */
const char *pb__conv_engine_unsupported(const struct pb_conv_engine *e);
size_t pb__conv_engine_strip_rows(const struct pb_conv_engine *e);
/* Whether strips go straight to and from the images (pinned in place), and
 * then the seconds that page-locking took; why not (NULL when pinned). */
bool pb__conv_engine_pinned(const struct pb_conv_engine *e, double *pin_s, const char **why_staged);
/* Filters in (width x height, prec, host memory) into out; with part set to
 * COPIES or KERNELS only that part runs (for timing the parts alone). */
pb_status pb__conv_engine_run(struct pb_conv_engine *e, const void *in, void *out, enum pb_conv_part part);
/* Bytes of device memory the engine holds. */
size_t pb__conv_engine_device_bytes(const struct pb_conv_engine *e);



/* Parameters both benchmarks start with, in this order. */
enum { PB_CONV_P_WIDTH, PB_CONV_P_HEIGHT, PB_CONV_P_RADIUS, PB_CONV_P_BORDER, PB_CONV_P_FILTER, PB_CONV_N_SHAPE };

/* Every combination of the lists (n_params of them; height defaults to the
 * width), checked; v[PB_CONV_P_BORDER] holds the border enum. Without
 * --radius, a filter file's radius is its own and the others run at each of
 * the n_radii radii. */
pb_status pb__conv_plan(const struct pb_param_lists *l, size_t n_params, const int64_t *radii, size_t n_radii,
                        enum pb_precision prec, struct pb_problem *out, size_t max, size_t *n_out);
struct pb_conv_shape pb__conv_shape(const struct pb_problem *p);
void pb__conv_describe(const struct pb_problem *p, char *buf, size_t len);
double pb__conv_flops(const struct pb_problem *p, const struct pb_variant *v, const void *host);
double pb__conv_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host);
#endif

/* parbench conv: filter an image file with a separable filter on any backend,
 * through the strip engine of the conv-stream benchmark (so images larger
 * than device memory work).
 *
 * Exit codes: 0 done, 2 usage error (bad option, radius <= 0, absurd size,
 * an output format that cannot hold the image), 3 unreadable or unwritable
 * file, a file that cannot hold the pixels it declares, more pixels than
 * --max-pixels, out of memory, device error. Everything that needs no
 * computation is checked before the image is decoded. */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "anchors/anchors.h"
#include "bench/conv_host.h"
#include "cli/conv_cmd.h"
#include "core/backend_impl.h"
#include "core/core.h"
#include "core/parse.h"
#include "io/image.h"
#include "parbench/pb_backend.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_ERROR = 3 };

static void conv_help(FILE *f)
{
    fprintf(f,
            "usage: parbench conv --image FILE [--save FILE] --radius R [options]\n\n"
            "Filters an image with a separable filter (row pass, then column pass), each\n"
            "channel of a colour image on its own, in strips through the device (images\n"
            "larger than device memory work). Files: PNG, JPEG, BMP, TGA, PGM/PPM (8/16-bit,\n"
            "grey or colour) and raw float32 (.f32/.raw, one channel, with --width/--height).\n\n"
            "options:\n"
            "  --image FILE          input image\n"
            "  --save FILE           output image, format from the extension\n"
            "  --radius R            filter radius (2R+1 taps); with a filter file: its taps\n"
            "  --sigma S             Gaussian sigma (default R/3)\n"
            "  --filter SPEC         gauss, box or a file of 2R+1 taps (default gauss)\n"
            "  --border zero|clamp   pixels beyond the edges (default clamp)\n"
            "  --width W --height H  size of a raw float32 input\n"
            "  --backend NAME        ref, openmp, cuda, opencl (default: cuda, opencl on a GPU,\n"
            "                        openmp, opencl on a CPU, ref: the first usable that can\n"
            "                        take the image)\n"
            "  --device N|NAME       device index within the backend (default 0), or the first\n"
            "                        device whose name (OpenCL: or platform vendor) contains NAME\n"
            "  --variant NAME        conv kernel of the backend (default: its fastest)\n"
            "  --precision P         float or double (default float)\n"
            "  --streams K           strips in flight (default 3)\n"
            "  --strip ROWS          output rows per strip (default: automatic)\n"
            "  --device-mem BYTES    device memory the strips may use, e.g. 512M\n"
            "  --max-pixels N        refuse larger images before decoding (default 1G = 2^30)\n"
            "  --quiet               no summary line\n\n"
            "The output, the device and the size the input declares are checked before\n"
            "any pixel is decoded; a file too small for the pixels it declares is refused.\n\n"
            "exit codes: 0 done, 2 usage error, 3 file, memory or device error.\n");
    if (!pb__image_have_codecs())
        fprintf(f, "\nThis parbench was built without stb_image: it reads raw float32 files only\n"
                   "(.f32/.raw) and writes those, PGM and PPM.\n");
}

static int usage(const char *fmt, const char *arg)
{
    fputs("parbench: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return EXIT_USAGE;
}

/* One line from the library error; usage errors exit 2. */
static int fail(pb_status st)
{
    const char *detail = pb_last_error();
    fprintf(stderr, "parbench: %s\n", detail[0] ? detail : pb_status_message(st));
    return st == PB_ERR_INVALID || st == PB_ERR_PARSE || st == PB_ERR_OVERFLOW || st == PB_ERR_NOT_FOUND
               ? EXIT_USAGE
               : EXIT_ERROR;
}

struct conv_opts {
    const char *image, *save, *filter, *backend, *variant;
    const char *device_name; /* --device NAME, else NULL and device is the index */
    int64_t radius, width, height, device, streams, strip, device_mem, max_pixels;
    double sigma;
    enum pb_conv_border border;
    enum pb_precision prec;
    bool quiet;
};

static int parse_int(const char *s, const char *what, int64_t min, int64_t *out)
{
    pb_status st = pb__parse_int(s, what, out);
    if (st != PB_OK)
        return fail(st);
    if (*out < min) {
        fprintf(stderr, "parbench: %s must be at least %lld (got %s)\n", what, (long long)min, s);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static int parse_opts(int argc, char **argv, struct conv_opts *o)
{
    enum { O_IMAGE = 256, O_SAVE, O_RADIUS, O_SIGMA, O_FILTER, O_BORDER, O_WIDTH, O_HEIGHT, O_BACKEND, O_DEVICE,
           O_VARIANT, O_PRECISION, O_STREAMS, O_STRIP, O_DEVMEM, O_MAXPX, O_QUIET, O_HELP };
    static const struct option longopts[] = {
        {"image", required_argument, NULL, O_IMAGE},     {"save", required_argument, NULL, O_SAVE},
        {"radius", required_argument, NULL, O_RADIUS},   {"sigma", required_argument, NULL, O_SIGMA},
        {"filter", required_argument, NULL, O_FILTER},   {"border", required_argument, NULL, O_BORDER},
        {"width", required_argument, NULL, O_WIDTH},     {"height", required_argument, NULL, O_HEIGHT},
        {"backend", required_argument, NULL, O_BACKEND}, {"device", required_argument, NULL, O_DEVICE},
        {"variant", required_argument, NULL, O_VARIANT}, {"precision", required_argument, NULL, O_PRECISION},
        {"streams", required_argument, NULL, O_STREAMS}, {"strip", required_argument, NULL, O_STRIP},
        {"device-mem", required_argument, NULL, O_DEVMEM}, {"max-pixels", required_argument, NULL, O_MAXPX},
        {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},             {NULL, 0, NULL, 0}};
    *o = (struct conv_opts){.filter = "gauss", .border = PB_CONV_CLAMP, .streams = 3, .prec = PB_FLOAT,
                            .max_pixels = (int64_t)PB_IMAGE_MAX_PIXELS};
    opterr = 0;
    optind = 1;
    int c, rc = EXIT_OK;
    while (rc == EXIT_OK && (c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        pb_status st = PB_OK;
        char *end;
        switch (c) {
        case O_IMAGE: o->image = optarg; break;
        case O_SAVE: o->save = optarg; break;
        case O_RADIUS: rc = parse_int(optarg, "--radius", 1, &o->radius); break;
        case O_SIGMA:
            o->sigma = strtod(optarg, &end);
            if (*end || !(o->sigma > 0) || o->sigma > 1e6)
                rc = usage("--sigma must be a positive number (got '%s')", optarg);
            break;
        case O_FILTER: o->filter = optarg; break;
        case O_BORDER: st = pb__conv_border_parse(optarg, &o->border); break;
        case O_WIDTH: rc = parse_int(optarg, "--width", 1, &o->width); break;
        case O_HEIGHT: rc = parse_int(optarg, "--height", 1, &o->height); break;
        case O_BACKEND: o->backend = optarg; break;
        case O_DEVICE:
            if (strspn(optarg, "+-0123456789") > 0) /* a number, or a usage error */
                rc = parse_int(optarg, "--device", 0, &o->device);
            else
                o->device_name = optarg;
            break;
        case O_VARIANT: o->variant = optarg; break;
        case O_PRECISION:
            if (strcmp(optarg, "float") == 0)
                o->prec = PB_FLOAT;
            else if (strcmp(optarg, "double") == 0)
                o->prec = PB_DOUBLE;
            else
                rc = usage("--precision: unknown precision '%s' (float, double)", optarg);
            break;
        case O_STREAMS: rc = parse_int(optarg, "--streams", 1, &o->streams); break;
        case O_STRIP: rc = parse_int(optarg, "--strip", 1, &o->strip); break;
        case O_DEVMEM: rc = parse_int(optarg, "--device-mem", 1, &o->device_mem); break;
        case O_MAXPX: rc = parse_int(optarg, "--max-pixels", 1, &o->max_pixels); break;
        case O_QUIET: o->quiet = true; break;
        case 'h':
        case O_HELP: conv_help(stdout); return -1;
        case ':': rc = usage("option %s needs a value", argv[optind - 1]); break;
        default: rc = usage("unknown option '%s' for conv (see parbench conv --help)", argv[optind - 1]); break;
        }
        if (st != PB_OK)
            rc = fail(st);
    }
    if (rc != EXIT_OK)
        return rc;
    if (optind < argc)
        return usage("conv takes no positional arguments (got '%s')", argv[optind]);
    if (!o->image)
        return usage("%s", "conv needs --image FILE (see parbench conv --help)");
    if (o->streams > 64)
        return usage("%s", "--streams must be at most 64");
    bool gauss = strcmp(o->filter, "gauss") == 0, box = strcmp(o->filter, "box") == 0;
    if (!o->radius && (gauss || box))
        return usage("%s", "conv needs --radius R (at least 1)");
    if (o->sigma > 0 && !gauss)
        return usage("%s", "--sigma applies to the gauss filter only");
    if ((o->width || o->height) && !pb__image_is_raw(o->image))
        return usage("--width and --height apply to raw float32 images only ('%s' carries its own size)", o->image);
    return EXIT_OK;
}

/* The device of backend b that the options pick: --device N, or the first
 * whose name contains --device NAME; -1 if b has no such device. */
static int picked_device(const pb_backend *b, const struct conv_opts *o)
{
    int n = pb_backend_device_count(b);
    if (!o->device_name)
        return o->device < n ? (int)o->device : -1;
    for (int i = 0; i < n; i++) {
        pb_device *d = NULL;
        bool match = pb_device_open(b, i, &d) == PB_OK && pb__device_matches(d, o->device_name);
        pb_device_close(d);
        pb__clear_error();
        if (match)
            return i;
    }
    return -1;
}

/* Whether device i of backend b is a CPU. */
static bool device_is_cpu(const pb_backend *b, int i)
{
    pb_device *d = NULL;
    struct pb_device_info info;
    bool cpu = pb_device_open(b, i, &d) == PB_OK && pb_device_info(d, &info) == PB_OK &&
               strcmp(info.kind, "cpu") == 0;
    pb_device_close(d);
    pb__clear_error();
    return cpu;
}

/* The backend to use: the one named, or the first usable of the default order
 * after `skip` usable ones (skip > 0: the ones before could not filter this
 * image). OpenCL on a CPU (PoCL) comes after OpenMP: on 2 cores it filtered
 * a 3000x2000 RGB image in 387 ms, OpenMP in 34. EXIT_ERROR with a line when
 * none is left. */
static int open_device(const struct conv_opts *o, int skip, pb_device **dev)
{
    enum { ANY, GPU, CPU }; /* which devices an entry takes */
    static const struct {
        const char *name;
        int takes;
    } order[] = {{"cuda", ANY}, {"opencl", GPU}, {"openmp", ANY}, {"opencl", CPU}, {"ref", ANY}};
    const pb_backend *b = NULL;
    const char *why = "";
    if (o->backend) {
        b = pb_backend_find(o->backend);
        if (!b) {
            char known[128];
            fprintf(stderr, "parbench: unknown backend '%s' (this build has: %s)\n", o->backend,
                    pb__backend_names(known, sizeof known));
            return EXIT_USAGE;
        }
        if (!pb_backend_available(b, &why)) {
            fprintf(stderr, "parbench: backend %s is not usable here: %s\n", o->backend, why);
            return EXIT_ERROR;
        }
    } else {
        const bool first_pick = skip == 0;
        for (size_t i = 0; i < sizeof order / sizeof order[0] && !b; i++) {
            const pb_backend *c = pb_backend_find(order[i].name);
            int d = c && pb_backend_available(c, &why) ? picked_device(c, o) : -1;
            if (d >= 0 && (order[i].takes == ANY || device_is_cpu(c, d) == (order[i].takes == CPU)) && skip-- == 0)
                b = c;
        }
        if (!b && first_pick && o->device_name) { /* a device no backend has: a usage error, as for run */
            fprintf(stderr, "parbench: no usable backend here has a device matching '%s'\n", o->device_name);
            return EXIT_USAGE;
        }
        if (!b && first_pick && o->device > 0) {
            fprintf(stderr, "parbench: no usable backend here has a device %lld\n", (long long)o->device);
            return EXIT_USAGE;
        }
        if (!b) {
            fprintf(stderr, "parbench: no backend here can filter this image\n");
            return EXIT_ERROR;
        }
    }
    int index = picked_device(b, o);
    if (index < 0) {
        if (o->device_name)
            fprintf(stderr, "parbench: backend %s has no device matching '%s'\n", pb_backend_name(b), o->device_name);
        else
            fprintf(stderr, "parbench: backend %s has no device %lld\n", pb_backend_name(b), (long long)o->device);
        return EXIT_USAGE;
    }
    pb_status st = pb_device_open(b, index, dev);
    return st == PB_OK ? EXIT_OK : fail(st);
}

/* Filters every channel of img in place through the engine. */
static pb_status filter_channels(struct pb_conv_engine *e, struct pb_image *img, enum pb_precision prec)
{
    size_t px = img->width * img->height;
    double *in = NULL, *out = NULL;
    pb_status st = PB_OK;
    if (prec == PB_DOUBLE) {
        st = pb__host_alloc(px * sizeof(double), "double-precision channel", (void **)&in);
        if (st == PB_OK)
            st = pb__host_alloc(px * sizeof(double), "double-precision result", (void **)&out);
    } else {
        st = pb__host_alloc(px * sizeof(float), "filtered channel", (void **)&out);
    }
    for (size_t c = 0; c < img->channels && st == PB_OK; c++) {
        float *plane = img->data + c * px;
        if (prec == PB_DOUBLE) {
            for (size_t i = 0; i < px; i++)
                in[i] = plane[i];
            st = pb__conv_engine_run(e, in, out, PB_CONV_ALL);
            for (size_t i = 0; st == PB_OK && i < px; i++)
                plane[i] = (float)out[i];
        } else {
            st = pb__conv_engine_run(e, plane, out, PB_CONV_ALL);
            if (st == PB_OK)
                memcpy(plane, out, px * sizeof(float));
        }
    }
    pb__host_free(in);
    pb__host_free(out);
    return st;
}

/* The first value of img that is Inf or NaN, or SIZE_MAX. */
static size_t first_not_finite(const struct pb_image *img)
{
    size_t n = img->width * img->height * img->channels;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(img->data[i]))
            return i;
    return SIZE_MAX;
}

/* A finite image filtered holds only numbers: taps whose sums leave float's
 * range made Inf or NaN, which no image format would show as the error it is. */
static pb_status check_finite(const struct pb_image *img, const double *taps, size_t radius)
{
    size_t i = first_not_finite(img);
    if (i == SIZE_MAX)
        return PB_OK;
    double l1 = 0;
    for (size_t k = 0; k <= 2 * radius; k++)
        l1 += fabs(taps[k]);
    return pb__fail(PB_ERR_UNSUPPORTED, "filtered value %zu is %g: the taps (their magnitudes sum to %g) carry the "
                    "image past float's range; nothing saved", i, (double)img->data[i], l1);
}

int pb__cmd_conv(int argc, char **argv)
{
    struct conv_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    char spec[64];
    const char *filter = o.filter;
    if (o.sigma > 0) {
        snprintf(spec, sizeof spec, "gauss:%.17g", o.sigma);
        filter = spec;
    }
    size_t radius = (size_t)o.radius;
    double *taps = NULL;
    if (o.radius > PB_CONV_MAX_RADIUS)
        return fail(pb__conv_check_dims(1, 1, o.radius, o.prec));
    pb_status st = pb__conv_filter_make(filter, &radius, &taps);
    if (st != PB_OK)
        return fail(st);
    if (o.width > PB_CONV_MAX_SIDE || o.height > PB_CONV_MAX_SIDE) {
        free(taps);
        return fail(pb__conv_check_dims(o.width, o.height, (int64_t)radius, o.prec));
    }
    /* Before any pixel is decoded: the size the file declares (and whether it
     * can hold it), the output, the device and the engine. */
    struct pb_image_info info;
    st = pb__image_probe(o.image, (size_t)o.width, (size_t)o.height, (uint64_t)o.max_pixels, &info);
    if (st == PB_OK)
        st = pb__conv_check_dims((int64_t)info.width, (int64_t)info.height, (int64_t)radius, o.prec);
    if (st == PB_OK && o.save)
        st = pb__image_check_output(o.save, info.width, info.height, info.channels);
    const char *ext = o.save && strrchr(o.save, '.') ? strrchr(o.save, '.') + 1 : "";
    bool jpeg = strcasecmp(ext, "jpg") == 0 || strcasecmp(ext, "jpeg") == 0; /* and a BMP of grey + alpha */
    if (st == PB_OK && !o.quiet && (info.channels == 2 || info.channels == 4) &&
        (jpeg || (info.channels == 2 && strcasecmp(ext, "bmp") == 0)))
        fprintf(stderr, "parbench: conv: this .%s file holds no alpha: the image's alpha channel is filtered but not "
                        "saved (PNG and TGA keep it)\n", ext);
    if (st == PB_OK) { /* decoded (a byte a sample), as floats, filtered into floats: 9 bytes a sample */
        char who[96];
        snprintf(who, sizeof who, "conv: a %zux%zu image of %zu channel(s)", info.width, info.height, info.channels);
        st = pb__host_mem_need(9.0 * (double)info.width * (double)info.height * (double)info.channels, who,
                               "to decode and filter it");
    }
    if (st != PB_OK) {
        free(taps);
        return fail(st);
    }
    struct pb_image img = {0};
    pb_device *dev = NULL;
    struct pb_conv_engine *e = NULL;
    struct pb_conv_job job = {.shape = {.width = info.width, .height = info.height, .radius = radius,
                                        .border = o.border, .filter = filter, .prec = o.prec},
                              .variant = o.variant, .slots = (size_t)o.streams, .streams = true,
                              .strip_rows = (size_t)o.strip, .device_mem = (size_t)o.device_mem};
    /* Without --backend, a backend that cannot take this image (a radius past
     * its local memory) gives way to the next of the default order. */
    for (int skip = 0; (rc = open_device(&o, skip, &dev)) == EXIT_OK; skip++) {
        st = pb__conv_engine_create(dev, &job, taps, &e);
        if (o.backend || st != PB_OK || !pb__conv_engine_auto_variant_ok(e) || !pb__conv_engine_unsupported(e))
            break;
        if (!o.quiet)
            fprintf(stderr, "parbench: %s/%s cannot filter this image (%s); trying the next backend\n",
                    pb_backend_name(pb_device_backend(dev)), pb__conv_engine_variant(e),
                    pb__conv_engine_unsupported(e));
        pb__conv_engine_free(e);
        e = NULL;
        pb_device_close(dev);
        dev = NULL;
    }
    double seconds = 0;
    if (rc == EXIT_OK) {
        if (st == PB_OK && !pb__conv_engine_auto_variant_ok(e)) {
            fprintf(stderr, "parbench: backend %s has no conv variant '%s' (see parbench list)\n",
                    pb_backend_name(pb_device_backend(dev)), o.variant ? o.variant : "auto");
            rc = EXIT_USAGE;
        } else if (st == PB_OK && pb__conv_engine_unsupported(e)) {
            fprintf(stderr, "parbench: %s/%s cannot filter this image: %s\n", pb_backend_name(pb_device_backend(dev)),
                    pb__conv_engine_variant(e), pb__conv_engine_unsupported(e));
            rc = EXIT_ERROR;
        } else if (st == PB_OK) {
            st = pb__image_read(o.image, (size_t)o.width, (size_t)o.height, &img);
            if (st == PB_OK && (img.width != info.width || img.height != info.height || img.channels != info.channels))
                st = pb__fail(PB_ERR_IO, "image '%s' changed while it was read", o.image);
        }
        if (st == PB_OK && rc == EXIT_OK) {
            size_t bad_in = first_not_finite(&img); /* a raw input may hold NaN itself: said, and filtered */
            bool finite_in = bad_in == SIZE_MAX;
            if (!finite_in)
                fprintf(stderr, "parbench: conv: the input holds non-finite values (the first, value %zu, is %g); "
                                "the filter spreads them over their neighbours\n",
                        bad_in, (double)img.data[bad_in]);
            pb__anchors_quiet(NULL);
            double t0 = pb__now();
            st = filter_channels(e, &img, o.prec);
            seconds = pb__now() - t0;
            if (st == PB_OK && finite_in)
                st = check_finite(&img, taps, radius);
        }
        if (st != PB_OK)
            rc = fail(st);
    }
    if (rc == EXIT_OK && o.save && (st = pb__image_write(o.save, &img)) != PB_OK)
        rc = fail(st);
    if (rc == EXIT_OK && !o.quiet)
        printf("parbench conv: %zux%zu%s, %zu channel%s, radius %zu %s, %s border, %s/%s on %s, strips of %zu rows, "
               "%.3f ms%s%s\n",
               img.width, img.height, img.orientation ? " (turned upright as its Exif orientation says)" : "",
               img.channels, img.channels == 1 ? "" : "s", radius, filter,
               o.border == PB_CONV_CLAMP ? "clamp" : "zero", pb_backend_name(pb_device_backend(dev)),
               pb__conv_engine_variant(e), pb_device_name(dev), pb__conv_engine_strip_rows(e), seconds * 1e3,
               o.save ? ", saved " : "", o.save ? o.save : "");
    pb__conv_engine_free(e);
    pb_device_close(dev);
    pb__image_free(&img);
    free(taps);
    return rc;
}

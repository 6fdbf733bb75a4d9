/* parbench command line: the command table, option parsing, exit codes.
 *
 * Exit codes: 0 every row OK or skipped, 1 a result FAILED verification,
 * 2 usage error, 3 device, memory or I/O error, 130 interrupted. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anchors/anchors.h"
#include "bench/bench.h"
#include "bench/runner.h"
#include "cli/conv_cmd.h"
#include "cli/study_cmd.h"
#include "comm/comm.h"
#include "core/backend_impl.h"
#include "core/core.h"
#include "core/parse.h"
#include "core/precision.h"
#include "io/mmio.h"
#include "output/ceilings.h"
#include "output/result.h"
#include "parbench/pb_backend.h"
#include "report/cli_util.h"
#include "report/report.h"
#include "sparse/sparse.h"

#define DEFAULT_SEED 42 /* --seed's default, which matinfo's generated matrices share */

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_ERROR = 3, EXIT_INTERRUPTED = 130 };

/* The last library error as one line; exit code from its status. */
static int fail_status(pb_status st)
{
    const char *detail = pb_last_error();
    fprintf(stderr, "parbench: %s\n", detail[0] ? detail : pb_status_message(st));
    return st == PB_ERR_PARSE || st == PB_ERR_INVALID || st == PB_ERR_NOT_FOUND ||
                   st == PB_ERR_OVERFLOW
               ? EXIT_USAGE
               : EXIT_ERROR;
}

/* ---- a small long-option parser ---------------------------------------- */

struct opt {
    const char *name;
    const char *metavar; /* NULL = flag */
    const char *help;
};

/* Looks argv[*i] up in opts; returns its index, sets *value. -1 = unknown,
 * -2 = missing value (messages printed). */
static int next_opt(int argc, char **argv, int *i, const struct opt *opts, size_t n_opts,
                    const char **value, const char *context)
{
    const char *arg = argv[*i];
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (strncmp(arg, "--", 2) == 0) {
        for (size_t o = 0; o < n_opts; o++) {
            if (strlen(opts[o].name) != len - 2 || strncmp(arg + 2, opts[o].name, len - 2) != 0)
                continue;
            if (!opts[o].metavar) {
                if (eq) {
                    fprintf(stderr, "parbench: option --%s takes no value\n", opts[o].name);
                    return -2;
                }
                *value = NULL;
            } else if (eq) {
                *value = eq + 1;
            } else if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
                *value = argv[++*i];
            } else if (*i + 1 < argc) { /* "--reps --warmup 3": a value forgotten, not a value "--warmup" */
                fprintf(stderr, "parbench: option --%s needs a value (%s), got the option %s\n", opts[o].name,
                        opts[o].metavar, argv[*i + 1]);
                return -2;
            } else {
                fprintf(stderr, "parbench: option --%s needs a value (%s)\n", opts[o].name,
                        opts[o].metavar);
                return -2;
            }
            return (int)o;
        }
    }
    fprintf(stderr, "parbench: unknown option '%s' for %s (see parbench %s --help)\n", arg, context,
            context);
    return -1;
}

static void print_opts(FILE *f, const struct opt *opts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", opts[i].name, opts[i].metavar ? " " : "",
                 opts[i].metavar ? opts[i].metavar : "");
        fprintf(f, "  %-24s %s\n", left, opts[i].help);
    }
}

static bool is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

/* --device NAME: whether some device of some usable backend has NAME in its
 * name (a typo would otherwise skip every row and exit 0). */
bool pb__cli_any_device_matches(const char *name)
{
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        for (int d = 0; d < pb_backend_device_count(b); d++) { /* 0 where b is unavailable */
            pb_device *dev = NULL;
            if (pb_device_open(b, d, &dev) != PB_OK)
                continue;
            bool match = pb__device_matches(dev, name);
            pb_device_close(dev);
            if (match)
                return true;
        }
    }
    return false;
}

/* --device N: whether some usable backend has a device N (a typo would
 * otherwise give an ERROR row for every job). */
static bool any_device_index(int index)
{
    for (size_t i = 0; i < pb_backend_count(); i++)
        if (pb_backend_device_count(pb_backend_at(i)) > index) /* 0 where unavailable */
            return true;
    return false;
}

/* ---- parbench list ------------------------------------------------------ */

static void list_help(FILE *f)
{
    fprintf(f, "usage: parbench list\n\n"
               "Benchmarks, their variants on every backend, and which backends are\n"
               "compiled in and usable here (with the reason when one is not).\n"
               "Anchor variants (vendor libraries) are marked with *.\n");
}

static int cmd_list(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            list_help(stdout);
            return EXIT_OK;
        }
        return pb__cli_die(EXIT_USAGE, "list takes no arguments (got '%s')", argv[i]);
    }
    printf("Backends:\n");
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        const char *why;
        bool ok = pb_backend_available(b, &why);
        printf("  %-8s %-38s %s%s\n", b->name, b->summary, ok ? "available" : "unavailable: ",
               ok ? "" : why);
    }
    printf("\nBenchmarks:\n");
    for (size_t i = 0; i < pb__bench_count(); i++) {
        const struct pb_bench *bench = pb__bench_at(i);
        printf("  %s: %s\n", bench->name, bench->summary);
        printf("    FLOPs: %s; bytes: %s\n", bench->flop_model, bench->byte_model);
        if (bench->precisions) { /* more than the usual float and double */
            char precs[96];
            printf("    precisions: %s\n", pb__bench_precisions(bench, precs, sizeof precs));
        }
        for (size_t j = 0; j < pb_backend_count(); j++) {
            const struct pb_backend *b = pb_backend_at(j);
            const struct pb_variant *v;
            for (size_t k = 0; (v = pb__bench_variant(bench, b, k)) != NULL; k++) {
                if (v->desc.flags & PB_VARIANT_HIDDEN)
                    continue;
                char name[64];
                snprintf(name, sizeof name, "%s/%s%s", b->name, v->desc.name,
                         v->desc.flags & PB_VARIANT_ANCHOR ? "*" : "");
                printf("    %-22s %s\n", name, v->desc.summary);
            }
        }
    }
    return EXIT_OK;
}

/* ---- parbench devices ---------------------------------------------------- */

static const struct opt devices_opts[] = {
    {"backend", "LIST", "only these backends (comma-separated)"},
    {"format", "table|json", "output format (default table)"},
};

static void devices_help(FILE *f)
{
    fprintf(f, "usage: parbench devices [options]\n\n"
               "Every device of every backend with its key properties.\n\noptions:\n");
    print_opts(f, devices_opts, sizeof devices_opts / sizeof devices_opts[0]);
}

static int cmd_devices(int argc, char **argv)
{
    const char *format = "table", *backend_list = NULL;
    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            devices_help(stdout);
            return EXIT_OK;
        }
        const char *val;
        int o = next_opt(argc, argv, &i, devices_opts, 2, &val, "devices");
        if (o < 0)
            return EXIT_USAGE;
        if (o == 0)
            backend_list = val;
        else
            format = val;
    }
    if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0)
        return pb__cli_die(EXIT_USAGE, "devices: unknown format '%s' (table, json)", format);
    char **names = NULL;
    size_t n_names = 0;
    if (backend_list) {
        pb_status st = pb__parse_name_list(backend_list, "--backend", &names, &n_names);
        if (st != PB_OK)
            return fail_status(st);
        for (size_t i = 0; i < n_names; i++)
            if (!pb_backend_find(names[i])) {
                int rc = pb__cli_die(EXIT_USAGE, "unknown backend '%s'", names[i]);
                free(names);
                return rc;
            }
    }
    cJSON *doc = cJSON_CreateArray();
    int rc = EXIT_OK;
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        bool selected = !names;
        for (size_t k = 0; k < n_names; k++)
            selected |= strcmp(names[k], b->name) == 0;
        if (!selected)
            continue;
        const char *why;
        if (!pb_backend_available(b, &why)) {
            if (doc && strcmp(format, "json") == 0) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "backend", b->name);
                cJSON_AddStringToObject(o, "unavailable", why);
                cJSON_AddItemToArray(doc, o);
            } else {
                printf("%s: unavailable: %s\n\n", b->name, why);
            }
            continue;
        }
        for (int d = 0; d < pb_backend_device_count(b); d++) {
            pb_device *dev;
            struct pb_device_info info;
            pb_status st = pb_device_open(b, d, &dev);
            if (st == PB_OK) {
                st = pb_device_info(dev, &info);
                pb_device_close(dev);
            }
            const char *error = pb_last_error()[0] ? pb_last_error() : pb_status_message(st);
            if (st == PB_ERR_UNAVAILABLE) { /* present but unusable here (no code for it in this build) */
                if (doc && strcmp(format, "json") == 0) {
                    cJSON *o = cJSON_CreateObject();
                    cJSON_AddStringToObject(o, "backend", b->name);
                    cJSON_AddNumberToObject(o, "index", d);
                    cJSON_AddStringToObject(o, "unavailable", error);
                    cJSON_AddItemToArray(doc, o);
                } else {
                    printf("%s device %d: unavailable: %s\n\n", b->name, d, error);
                }
                continue;
            }
            if (st != PB_OK) {
                fprintf(stderr, "parbench: %s device %d: %s\n", b->name, d, error);
                rc = EXIT_ERROR;
                continue;
            }
            if (strcmp(format, "json") == 0) {
                cJSON *o = cJSON_CreateObject(), *props = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "backend", b->name);
                cJSON_AddNumberToObject(o, "index", d);
                cJSON_AddStringToObject(o, "name", info.name);
                cJSON_AddStringToObject(o, "kind", info.kind);
                for (int p = 0; p < info.n_props; p++)
                    cJSON_AddStringToObject(props, info.props[p].key, info.props[p].value);
                cJSON_AddItemToObject(o, "properties", props);
                cJSON_AddItemToArray(doc, o);
            } else {
                printf("%s device %d: %s (%s)\n", b->name, d, info.name, info.kind);
                for (int p = 0; p < info.n_props; p++)
                    printf("  %-22s %s\n", info.props[p].key, info.props[p].value);
                printf("\n");
            }
        }
    }
    if (strcmp(format, "json") == 0) {
        char *text = doc ? cJSON_Print(doc) : NULL;
        if (!text) {
            rc = pb__cli_die(EXIT_ERROR, "%s", "out of memory");
        } else {
            printf("%s\n", text);
            cJSON_free(text);
        }
    }
    cJSON_Delete(doc);
    free(names);
    return rc;
}

/* ---- parbench matinfo FILE... ---------------------------------------------- */

static const struct opt matinfo_opts[] = {
    {"format", "table|csv|json", "standard output format (default table)"},
    {"out", "FILE", "also write FILE (.csv, .json or .txt; another extension in the --format given)"},
};

static void matinfo_help(FILE *f)
{
    fprintf(f, "usage: parbench matinfo FILE... [options]\n\n"
               "Reads Matrix Market files (.mtx, plain or gzip-compressed), or makes generated\n"
               "matrices as `parbench run spmv` does with its default seed (%s,\n"
               "zoo[:ROWS]), and prints per matrix:\n"
               "rows, columns, non-zeros after symmetric expansion, average, maximum and standard\n"
               "deviation of the non-zeros per row, the declared symmetry, the ELLPACK fill ratio\n"
               "(rows * max per row / NZ), the bandwidth (max |i-j|) and the bytes COO, CSR and\n"
               "ELLPACK take with 32-bit indices and double values. Complex matrices are read by\n"
               "their real part.\n\noptions:\n",
            PB_SPARSE_GENERATORS);
    print_opts(f, matinfo_opts, sizeof matinfo_opts / sizeof matinfo_opts[0]);
    fprintf(f, "\nexit status: 0 every file read, 2 usage error, 3 a file could not be read\n"
               "(one line on stderr each; the other files are still reported).\n");
}

static int cmd_matinfo(int argc, char **argv)
{
    const char *format = NULL, *out = NULL;
    /* Files in order; "--" ends the options. */
    char **files = malloc((size_t)argc * sizeof *files);
    int n_files = 0;
    if (!files)
        return pb__cli_die(EXIT_ERROR, "%s", "out of memory");
    for (int i = 1, options = 1; i < argc; i++) {
        if (options && is_help(argv[i])) {
            free(files);
            matinfo_help(stdout);
            return EXIT_OK;
        }
        if (options && strcmp(argv[i], "--") == 0) {
            options = 0;
            continue;
        }
        if (!options || strncmp(argv[i], "--", 2) != 0) {
            files[n_files++] = argv[i];
            continue;
        }
        const char *val;
        int o = next_opt(argc, argv, &i, matinfo_opts, 2, &val, "matinfo");
        if (o < 0) {
            free(files);
            return EXIT_USAGE;
        }
        *(o == 0 ? &format : &out) = val;
    }
    const char *std_format = format ? format : "table", *out_format = NULL;
    int rc = EXIT_OK;
    if (n_files == 0) {
        matinfo_help(stderr);
        rc = EXIT_USAGE;
    } else if (!pb__format_valid(std_format)) {
        rc = pb__cli_die(EXIT_USAGE, "matinfo: unknown format '%s' (table, csv, json)", std_format);
    } else if (out && !(out_format = pb__format_from_path(out)) && !(out_format = format)) {
        rc = pb__cli_die(EXIT_USAGE, "cannot tell the format of '%s' from its extension (.csv, .json, "
                             ".txt); add --format", out);
    } else if (pb__same_file_among(out, files, n_files)) {
        rc = pb__cli_die(EXIT_USAGE, "matinfo: --out %s is one of the matrices read; it would be overwritten", out);
    }
    if (rc != EXIT_OK) {
        free(files);
        return rc;
    }
    struct pb_matinfo_writer *writers[2] = {NULL, NULL};
    /* the file first: a path that cannot be written stops before any output */
    pb_status st = out ? pb__matinfo_writer_open(out_format, out, &writers[1]) : PB_OK;
    if (st == PB_OK)
        st = pb__matinfo_writer_open(std_format, NULL, &writers[0]);
    const struct pb_mm_options mm_opt = {.complex_real_part = true};
    /* zoo[:ROWS] stands for its members */
    size_t max_specs = (size_t)n_files * 16, n_specs = 0;
    const char **specs = st == PB_OK ? malloc(max_specs * sizeof *specs) : NULL;
    if (st == PB_OK && !specs)
        st = pb__fail(PB_ERR_NOMEM, "out of memory");
    if (st == PB_OK)
        st = pb__sparse_expand(files, (size_t)n_files, specs, max_specs, &n_specs);
    if (st != PB_OK)
        rc = fail_status(st);
    for (size_t i = 0; i < n_specs && st == PB_OK; i++) {
        struct pb_coo m;
        pb__clear_error();
        bool generated = pb__sparse_is_generated(specs[i]);
        pb_status rst = generated ? pb__sparse_generate(specs[i], DEFAULT_SEED, &m) : pb_coo_read(specs[i], &mm_opt, &m);
        if (rst != PB_OK) { /* a spec's mistake is the command line's, as in `run` */
            int code = fail_status(rst);
            rc = generated ? code : EXIT_ERROR;
            continue;
        }
        struct pb_matinfo info;
        pb__matinfo_compute(specs[i], &m, &info);
        pb_coo_free(&m);
        for (size_t w = 0; w < 2 && st == PB_OK; w++)
            if (writers[w])
                st = pb__matinfo_writer_row(writers[w], &info);
        if (st != PB_OK)
            rc = fail_status(st);
    }
    for (size_t w = 0; w < 2; w++) {
        pb_status cst = pb__matinfo_writer_close(writers[w]);
        if (cst != PB_OK && st == PB_OK)
            rc = fail_status(cst), st = cst;
    }
    free(specs);
    free(files);
    return rc;
}

/* ---- parbench run BENCH ---------------------------------------------------- */

enum {
    O_BACKEND, O_VARIANT, O_PRECISION, O_REPS, O_WARMUP, O_SEED, O_THREADS, O_DEVICE, O_FORMAT,
    O_OUT, O_APPEND, O_NO_VERIFY, O_NO_ENERGY, O_INJECT, O_QUIET, O_PROGRESS, O_CEILINGS, O_RANK_DEVICE, N_COMMON
};

static const struct opt run_opts[N_COMMON] = {
    [O_BACKEND] = {"backend", "LIST", "backends to run (default: all compiled in)"},
    [O_VARIANT] = {"variant", "LIST", "variants, as NAME or BACKEND/NAME (default: all)"},
    [O_PRECISION] = {"precision", "LIST", "float (fp32), double (fp64); gemm also tf32, bf16, fp16 (inputs of that "
                                          "type, fp32 accumulation and C; default: float)"},
    [O_REPS] = {"reps", "N", "timed repetitions per row (default 5)"},
    [O_WARMUP] = {"warmup", "N", "untimed warm-up runs before them (default 1)"},
    [O_SEED] = {"seed", "N", "seed of the random inputs (default 42)"},
    [O_THREADS] = {"threads", "LIST", "thread counts for threaded backends, e.g. 1,2 or 1:16"},
    [O_DEVICE] = {"device", "N|NAME", "device index within each backend (default 0; OpenCL lists GPUs first), "
                                       "or the first device whose name (OpenCL: or platform vendor) contains "
                                       "NAME (e.g. --device nvidia, --device pocl)"},
    [O_FORMAT] = {"format", "FMT", "standard output format: table, csv or json (default table)"},
    [O_OUT] = {"out", "FILE", "also write results to FILE (.csv, .json or .txt)"},
    [O_APPEND] = {"append", NULL, "append rows to an existing CSV file given by --out"},
    [O_NO_VERIFY] = {"no-verify", NULL, "skip verification (rows say check=none)"},
    [O_NO_ENERGY] = {"no-energy", NULL, "measure no energy, power or clocks (their columns stay empty)"},
    [O_INJECT] = {"inject-fault", NULL, "corrupt one output element before checking (tests the checker)"},
    [O_QUIET] = {"quiet", NULL, "no progress line on stderr"},
    [O_PROGRESS] = {"progress", NULL, "progress line even when stderr is not a terminal"},
    [O_CEILINGS] = {"ceilings", "FILE", "ceilings for the fraction-of-ceiling column (default: parbench ceilings' file)"},
    [O_RANK_DEVICE] = {"rank-device", "local|same", "under mpirun: the ranks of a node take the devices from --device "
                                                    "on in turn (local, default) or all take --device (same)"},
};

static void run_help(FILE *f, const struct pb_bench *bench)
{
    if (!bench) {
        fprintf(f, "usage: parbench run BENCH [options]\n\nbenchmarks:\n");
        for (size_t i = 0; i < pb__bench_count(); i++)
            fprintf(f, "  %-10s %s\n", pb__bench_at(i)->name, pb__bench_at(i)->summary);
        fprintf(f, "\nparbench run BENCH --help lists the options of one benchmark.\n");
        return;
    }
    fprintf(f, "usage: parbench run %s [options]\n\n%s.\n", bench->name, bench->summary);
    if (bench->notes)
        fprintf(f, "%s\n", bench->notes);
    fprintf(f, "GFLOP/s = %s / median time; GB/s = %s / median time.\n", bench->flop_model,
            bench->byte_model);
    fprintf(f, "Every result is verified against a double-precision reference.\n");
    if (!bench->typeless) {
        char precs[96];
        fprintf(f, "Precisions (--precision): %s.\n", pb__bench_precisions(bench, precs, sizeof precs));
    }
    fprintf(f, "\n");
    fprintf(f, "%s options (lists: 256,512  ranges: 256:4096 doubling, 256:1024:256 linear, "
               "16:4096:x4 geometric):\n", bench->name);
    for (size_t i = 0; i < bench->n_params; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s %s", bench->params[i].name, bench->params[i].text   ? "NAMES"
                                                                            : bench->params[i].single ? "N"
                                                                                                      : "LIST");
        /* Printed, not formatted into a buffer: spmv's --matrix help alone
         * is longer than any fixed line, and its default must show. */
        fprintf(f, "  %-24s %s%s%s%s\n", left, bench->params[i].help,
                bench->params[i].default_value ? " (default " : "",
                bench->params[i].default_value ? bench->params[i].default_value : "",
                bench->params[i].default_value ? ")" : "");
    }
    fprintf(f, "\ncommon options:\n");
    print_opts(f, run_opts, N_COMMON);
    fprintf(f, "\nexit status: 0 all rows OK or skipped, 1 a result FAILED verification,\n"
               "2 usage error, 3 device, memory or I/O error, 130 interrupted.\n");
}

static pb_status parse_count(const char *s, const char *what, int lo, int hi, int *out)
{
    int64_t v;
    pb_status st = pb__parse_int(s, what, &v);
    if (st != PB_OK)
        return st;
    if (v < lo || v > hi)
        return pb__fail(PB_ERR_INVALID, "%s must be between %d and %d (got %s)", what, lo, hi, s);
    *out = (int)v;
    return PB_OK;
}

struct run_args {
    const char *values[N_COMMON];
    bool flags[N_COMMON];
    const char *params[PB_MAX_PARAMS];
};

/* Everything the run needs, parsed; owns its allocations. */
struct run_plan {
    struct pb_param_lists lists;
    char **backends, **variants, **precisions;
    size_t n_backends, n_variants, n_precisions;
    int64_t *threads64;
    int *threads;
    size_t n_threads;
    struct pb_problem *problems;
    size_t n_problems;
};

static void run_plan_free(struct run_plan *p)
{
    for (size_t i = 0; i < PB_MAX_PARAMS; i++) {
        free(p->lists.values[i]);
        free(p->lists.text[i]);
    }
    free(p->backends);
    free(p->variants);
    free(p->precisions);
    free(p->threads64);
    free(p->threads);
    free(p->problems);
}

/* Whether problem q is one of the first n (same precision and parameters). */
static bool problem_seen(const struct pb_bench *bench, const struct pb_problem *problems, size_t n,
                         const struct pb_problem *q)
{
    for (size_t i = 0; i < n; i++) {
        bool same = problems[i].prec == q->prec;
        for (size_t k = 0; same && k < bench->n_params; k++)
            same = problems[i].v[k] == q->v[k] && (problems[i].s[k] == q->s[k] ||
                                                   (problems[i].s[k] && q->s[k] && !strcmp(problems[i].s[k], q->s[k])));
        if (same)
            return true;
    }
    return false;
}

static pb_status build_plan(const struct pb_bench *bench, const struct run_args *a, struct run_plan *p)
{
    pb_status st;
    for (size_t i = 0; i < bench->n_params; i++) {
        const char *src = a->params[i] ? a->params[i] : bench->params[i].default_value;
        char what[48];
        snprintf(what, sizeof what, "--%s", bench->params[i].name);
        if (!src)
            continue;
        st = bench->params[i].text ? pb__parse_name_list(src, what, &p->lists.text[i], &p->lists.count[i])
                                   : pb__parse_int_list(src, what, &p->lists.values[i], &p->lists.count[i]);
        if (st != PB_OK)
            return st;
    }
    if (a->values[O_BACKEND] &&
        (st = pb__parse_name_list(a->values[O_BACKEND], "--backend", &p->backends, &p->n_backends)) != PB_OK)
        return st;
    if (a->values[O_VARIANT] &&
        (st = pb__parse_name_list(a->values[O_VARIANT], "--variant", &p->variants, &p->n_variants)) != PB_OK)
        return st;
    for (size_t i = 0; i < p->n_variants; i++) { /* "cublas*" as list and the tables print anchors */
        size_t n = strlen(p->variants[i]);
        if (n > 1 && p->variants[i][n - 1] == '*')
            p->variants[i][n - 1] = '\0';
    }
    if ((st = pb__parse_name_list(a->values[O_PRECISION] ? a->values[O_PRECISION] : "float",
                                  "--precision", &p->precisions, &p->n_precisions)) != PB_OK)
        return st;
    if (a->values[O_THREADS]) {
        if ((st = pb__parse_int_list(a->values[O_THREADS], "--threads", &p->threads64, &p->n_threads)) != PB_OK)
            return st;
        p->threads = malloc(p->n_threads * sizeof *p->threads);
        if (!p->threads)
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < p->n_threads; i++) {
            if (p->threads64[i] < 1 || p->threads64[i] > PB_MAX_THREADS)
                return pb__fail(PB_ERR_INVALID, "--threads: %lld is not between 1 and %d", (long long)p->threads64[i],
                                PB_MAX_THREADS);
            p->threads[i] = (int)p->threads64[i];
        }
    }
    size_t max = PB_MAX_LIST;
    p->problems = calloc(max, sizeof *p->problems);
    if (!p->problems)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    if (bench->typeless && a->values[O_PRECISION])
        return pb__fail(PB_ERR_INVALID, "--precision does not apply to %s", bench->name);
    for (size_t i = 0; i < (bench->typeless ? 1 : p->n_precisions); i++) {
        enum pb_precision prec;
        char names[96];
        if (!pb__precision_parse(p->precisions[i], &prec))
            return pb__fail(PB_ERR_INVALID, "--precision: unknown precision '%s' (%s)", p->precisions[i],
                            pb__precision_names(names, sizeof names));
        bool again = false; /* "float,fp32": one precision, run once */
        for (size_t j = 0; j < i && !again; j++) {
            enum pb_precision earlier;
            again = pb__precision_parse(p->precisions[j], &earlier) && earlier == prec;
        }
        if (again)
            continue;
        if (!bench->typeless && (st = pb__bench_takes(bench, prec)) != PB_OK)
            return st;
        size_t n = 0;
        if ((st = bench->plan(&p->lists, prec, p->problems + p->n_problems, max - p->n_problems, &n)) != PB_OK)
            return st;
        const size_t first = p->n_problems;
        for (size_t k = 0; k < n; k++) { /* "--matrix a,a", or sizes the plan rounded to one: run once */
            const struct pb_problem q = p->problems[first + k];
            if (!problem_seen(bench, p->problems, p->n_problems, &q))
                p->problems[p->n_problems++] = q;
        }
    }
    return PB_OK;
}

/* What a run needs once its options are parsed; owned by cmd_run. */
struct run_cmd {
    const struct pb_bench *bench;
    struct pb_context ctx;
    struct run_plan plan;
    struct pb_run_config cfg;
    struct pb_ceilings ceilings;
    struct pb_writer *writers[2];
    size_t n_writers;
    bool done; /* --help: nothing to run */
};

/* Parses the options and opens the outputs: EXIT_OK when ready to run (or
 * done, for --help), else the exit code with its message printed. Only rank
 * 0 opens writers. */
static int run_setup(int argc, char **argv, int rank, struct run_cmd *rc_out)
{
    if (argc < 2 || is_help(argv[1])) {
        run_help(argc < 2 ? stderr : stdout, NULL);
        rc_out->done = true;
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    const struct pb_bench *bench = pb__bench_find(argv[1]);
    if (!bench) {
        fprintf(stderr, "parbench: unknown benchmark '%s' (", argv[1]);
        for (size_t i = 0; i < pb__bench_count(); i++)
            fprintf(stderr, "%s%s", i ? ", " : "", pb__bench_at(i)->name);
        fprintf(stderr, ")\n");
        return EXIT_USAGE;
    }
    rc_out->bench = bench;
    /* Common options then the benchmark's own, in one table. */
    struct opt opts[N_COMMON + PB_MAX_PARAMS];
    memcpy(opts, run_opts, sizeof run_opts);
    for (size_t i = 0; i < bench->n_params; i++)
        opts[N_COMMON + i] = (struct opt){bench->params[i].name, bench->params[i].single ? "N" : "LIST",
                                          bench->params[i].help};
    char context[64];
    snprintf(context, sizeof context, "run %s", bench->name);
    struct run_args a;
    memset(&a, 0, sizeof a);
    for (int i = 2; i < argc; i++) {
        if (is_help(argv[i])) {
            run_help(stdout, bench);
            rc_out->done = true;
            return EXIT_OK;
        }
        const char *val;
        int o = next_opt(argc, argv, &i, opts, N_COMMON + bench->n_params, &val, context);
        if (o < 0)
            return EXIT_USAGE;
        if (val && (o < N_COMMON ? a.values[o] : a.params[o - N_COMMON]) != NULL) /* the last would win unseen */
            return pb__cli_die(EXIT_USAGE, "--%s is given twice ('%s', then '%s'): one list takes several values, "
                               "--%s %s,%s", opts[o].name, o < N_COMMON ? a.values[o] : a.params[o - N_COMMON], val,
                               opts[o].name, o < N_COMMON ? a.values[o] : a.params[o - N_COMMON], val);
        if (o < N_COMMON) {
            a.values[o] = val;
            a.flags[o] = true;
        } else {
            a.params[o - N_COMMON] = val;
        }
    }

    struct pb_context *ctx = &rc_out->ctx;
    pb__context_init(ctx, argc + 1, argv - 1);
    ctx->reps = 5;
    ctx->warmup = 1;
    int device = 0;
    int64_t seed = DEFAULT_SEED;
    pb_status st = PB_OK;
    if (a.values[O_REPS])
        st = parse_count(a.values[O_REPS], "--reps", 1, 1000000, &ctx->reps);
    if (st == PB_OK && a.values[O_WARMUP])
        st = parse_count(a.values[O_WARMUP], "--warmup", 0, 1000000, &ctx->warmup);
    const char *device_match = NULL;
    if (st == PB_OK && a.values[O_DEVICE]) {
        const char *d = a.values[O_DEVICE];
        /* "-1" is a mistyped index, not part of a name (no device is named so). */
        bool index = d[0] && strspn(d + (d[0] == '-'), "0123456789") == strlen(d + (d[0] == '-')) &&
                     d[d[0] == '-'] != '\0';
        if (index)
            st = parse_count(d, "--device", 0, 1023, &device);
        else if (d[0])
            device_match = d;
        else
            st = pb__fail(PB_ERR_INVALID, "--device needs an index or part of a device name");
    }
    bool device_per_rank = true;
    if (st == PB_OK && a.values[O_RANK_DEVICE]) {
        if (strcmp(a.values[O_RANK_DEVICE], "same") == 0)
            device_per_rank = false;
        else if (strcmp(a.values[O_RANK_DEVICE], "local") != 0)
            st = pb__fail(PB_ERR_INVALID, "--rank-device: '%s' is neither local nor same", a.values[O_RANK_DEVICE]);
    }
    if (st == PB_OK && a.values[O_SEED]) {
        st = pb__parse_int(a.values[O_SEED], "--seed", &seed);
        /* JSON numbers hold integers exactly up to 2^53: keep seeds repeatable. */
        if (st == PB_OK && (seed < 0 || seed > (1ll << 53)))
            st = pb__fail(PB_ERR_INVALID, "--seed must be between 0 and 2^53 (got %s)",
                          a.values[O_SEED]);
    }
    if (st == PB_OK && device_match && !pb__cli_any_device_matches(device_match))
        return pb__cli_die(EXIT_USAGE, "no device of any backend here matches '%s' (parbench devices lists them)",
                           device_match);
    if (st == PB_OK && !device_match && device > 0 && !any_device_index((int)device))
        return pb__cli_die(EXIT_USAGE, "no backend here has a device %lld (parbench devices lists them)",
                           (long long)device);
    if (st != PB_OK)
        return fail_status(st);
    ctx->seed = (unsigned long long)seed;

    if (a.flags[O_INJECT] && a.flags[O_NO_VERIFY]) /* the fault would pass unseen: rows OK */
        return pb__cli_die(EXIT_USAGE, "--inject-fault needs the check that --no-verify skips");
    const char *format = a.values[O_FORMAT] ? a.values[O_FORMAT] : "table";
    if (!pb__format_valid(format))
        return pb__cli_die(EXIT_USAGE, "unknown format '%s' (table, csv, json)", format);
    const char *out_format = NULL;
    if (a.values[O_OUT]) {
        out_format = pb__format_from_path(a.values[O_OUT]);
        if (!out_format && a.values[O_FORMAT])
            out_format = format;
        if (!out_format)
            return pb__cli_die(EXIT_USAGE,
                       "cannot tell the format of '%s' from its extension (.csv, .json, .txt); "
                       "add --format", a.values[O_OUT]);
    } else if (a.flags[O_APPEND]) {
        return pb__cli_die(EXIT_USAGE, "%s", "--append needs --out FILE.csv");
    }

    struct run_plan *plan = &rc_out->plan;
    pb__clear_error();
    st = build_plan(bench, &a, plan);
    rc_out->cfg = (struct pb_run_config){
        .bench = bench, .problems = plan->problems, .n_problems = plan->n_problems,
        .backends = (const char *const *)plan->backends, .n_backends = plan->n_backends,
        .variants = (const char *const *)plan->variants, .n_variants = plan->n_variants,
        .threads = plan->threads, .n_threads = plan->n_threads, .device = device, .device_match = device_match,
        .device_per_rank = device_per_rank,
        .reps = ctx->reps, .warmup = ctx->warmup, .seed = ctx->seed,
        .verify = !a.flags[O_NO_VERIFY], .inject_fault = a.flags[O_INJECT], .energy = !a.flags[O_NO_ENERGY],
        .progress = !a.flags[O_QUIET] && (a.flags[O_PROGRESS] || isatty(STDERR_FILENO)),
        .ctx = ctx,
    };
    if (st == PB_OK)
        st = pb__run_validate(&rc_out->cfg);
    if (st == PB_OK)
        st = pb__ceilings_for_run(a.values[O_CEILINGS], &rc_out->ceilings);
    rc_out->cfg.ceilings = &rc_out->ceilings;
    if (st != PB_OK)
        return fail_status(st);
    if (rank != 0)
        return EXIT_OK;

    /* Open every output before measuring anything: a bad --out path costs nothing. */
    struct pb_writer **writers = rc_out->writers;
    st = pb__writer_open(format, NULL, false, &writers[rc_out->n_writers]);
    if (st == PB_OK)
        rc_out->n_writers++;
    if (st == PB_OK && out_format) {
        st = pb__writer_open(out_format, a.values[O_OUT], a.flags[O_APPEND], &writers[rc_out->n_writers]);
        if (st == PB_OK)
            rc_out->n_writers++;
    }
    /* Files first: one that cannot take the rows (--append to other columns)
     * fails before the table's header reaches the terminal. */
    for (size_t i = rc_out->n_writers; i-- > 0 && st == PB_OK;)
        st = pb__writer_begin(writers[i], ctx, bench);
    return st == PB_OK ? EXIT_OK : fail_status(st);
}

/* Setup messages of ranks other than 0 are held until the ranks know whether
 * rank 0 failed too: every rank parses the same options, so rank 0 speaks for
 * all, unless only another rank failed (a file only it cannot read). */
struct held_stderr {
    FILE *saved;
    char *text;
    size_t len;
};

static void hold_stderr(struct held_stderr *h)
{
    memset(h, 0, sizeof *h);
    FILE *mem = open_memstream(&h->text, &h->len);
    if (mem) {
        h->saved = stderr;
        stderr = mem;
    }
}

static void release_stderr(struct held_stderr *h, bool show, int rank)
{
    if (!h->saved)
        return;
    fclose(stderr);
    stderr = h->saved;
    for (char *line = h->text, *next; show && line && *line; line = next) {
        next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        fprintf(stderr, "[rank %d] %.*s", rank, (int)(next - line), line);
    }
    free(h->text);
}

/* FNV-1a of the arguments: ranks started with different ones would run
 * different jobs and wait for each other forever. */
static uint64_t args_hash(int argc, char **argv)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 1; i < argc; i++)
        for (const char *c = argv[i];; c++) {
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
            if (!*c)
                break;
        }
    return h;
}

/* Exit code on every rank: the highest of the ranks' (1 wrong result < 2
 * usage < 3 error < 130 interrupted). */
static int agree_exit(pb_comm *comm, int rc)
{
    int32_t v = rc;
    if (pb__comm_allreduce(comm, &v, &v, 1, PB_COMM_INT32, PB_COMM_MAX) != PB_OK)
        return EXIT_ERROR;
    return (int)v;
}

static int cmd_run(int argc, char **argv)
{
    pb_comm *comm = pb__comm_world();
    int rank = pb__comm_rank(comm), size = pb__comm_size(comm);
    struct held_stderr held = {0};
    if (rank != 0) {
        /* Only rank 0 prints results; the others' messages are held or prefixed. */
        if (!freopen("/dev/null", "w", stdout))
            return pb__cli_die(EXIT_ERROR, "rank %d: cannot silence standard output", rank);
        hold_stderr(&held);
    }
    struct run_cmd run = {0};
    int rc = EXIT_OK;
    if (size > 1) {
        int64_t h[2] = {(int64_t)args_hash(argc, argv), 0};
        h[1] = -h[0];
        if (pb__comm_allreduce(comm, h, h, 2, PB_COMM_INT64, PB_COMM_MAX) != PB_OK || h[0] != -h[1])
            rc = pb__cli_die(EXIT_USAGE, "%s", "the ranks were started with different arguments: every rank "
                                               "must run the same command");
    }
    if (rc == EXIT_OK)
        rc = run_setup(argc, argv, rank, &run);
    if (size > 1) {
        /* Agree before anyone enters the run's collectives: the highest exit
         * code wins, and a rank's own message shows unless rank 0 failed too. */
        int32_t rank0_failed = rank == 0 && rc != EXIT_OK;
        pb_status st = pb__comm_allreduce(comm, &rank0_failed, &rank0_failed, 1, PB_COMM_INT32, PB_COMM_MAX);
        release_stderr(&held, rc != EXIT_OK && !rank0_failed, rank);
        if (st != PB_OK && rc == EXIT_OK)
            rc = fail_status(st);
        rc = agree_exit(comm, rc);
    } else {
        release_stderr(&held, true, rank);
    }
    struct pb_run_summary sum = {0};
    if (rc == EXIT_OK && !run.done) {
        run.cfg.writers = run.writers;
        run.cfg.n_writers = run.n_writers;
        pb_status st = pb__run(&run.cfg, &sum);
        if (st != PB_OK)
            rc = fail_status(st);
    }
    for (size_t i = 0; i < run.n_writers; i++) {
        pb_status cst = pb__writer_close(run.writers[i]);
        if (cst != PB_OK && rc == EXIT_OK)
            rc = fail_status(cst);
    }
    run_plan_free(&run.plan);
    pb__ceilings_free(&run.ceilings);
    if (rc == EXIT_OK && !run.done) {
        if (sum.interrupted)
            rc = EXIT_INTERRUPTED;
        else if (sum.failed)
            rc = EXIT_FAILED;
        else if (sum.errors)
            rc = EXIT_ERROR;
        if (rank == 0 && sum.ok + sum.failed + sum.skipped + sum.unsupported + sum.errors > 0 &&
            isatty(STDERR_FILENO))
            fprintf(stderr, "%zu OK, %zu failed, %zu skipped, %zu unsupported, %zu errors\n", sum.ok,
                    sum.failed, sum.skipped, sum.unsupported, sum.errors);
    }
    return size > 1 ? agree_exit(comm, rc) : rc;
}

int pb__cli_run(int argc, char **argv) { return cmd_run(argc, argv); }

/* `run` is the one command that spans ranks: MPI starts for it alone. */
static int cmd_run_ranks(int argc, char **argv)
{
    pb__clear_error();
    pb_status st = pb__comm_init();
    if (st != PB_OK) {
        int rc = fail_status(st);
        pb__comm_finalize();
        return rc == EXIT_USAGE ? EXIT_ERROR : rc;
    }
    int rc = cmd_run(argc, argv);
    pb__comm_finalize();
    return rc;
}

/* ---- the command table ---------------------------------------------------- */

static int cmd_version(int argc, char **argv)
{
    if (argc == 2 && pb__cli_is_help(argv[1])) {
        printf("usage: parbench version\n\nPrints parbench's version and the commit it was built from.\n");
        return EXIT_OK;
    }
    if (argc > 1)
        return pb__cli_die(EXIT_USAGE, "version takes no arguments (got '%s')", argv[1]);
    printf("parbench %s (%s)\n", pb_version(), pb_git_commit());
    return EXIT_OK;
}

static const struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"run", "run a benchmark: parbench run gemm --n 1024 (under mpirun: on every rank)", cmd_run_ranks},
    {"list", "benchmarks, variants and backends (and which are usable here)", cmd_list},
    {"devices", "every device of every backend with its properties", cmd_devices},
    {"matinfo", "structure of Matrix Market files: NZ, row lengths, bytes per format", cmd_matinfo},
    {"ceilings", "measure this machine's roofline: peak bandwidth and FMA throughput per device", pb__cmd_ceilings},
    {"report", "one HTML report with charts and tables from result files", pb__cmd_report},
    {"plot", "one chart of result files as SVG or PNG", pb__cmd_plot},
    {"compare", "compare two result files row by row; exit 1 on a regression", pb__cmd_compare},
    {"study", "run one of the source studies 000-004 and set its published figures beside ours", pb__cmd_study},
    {"scaling", "strong and weak scaling tables from runs at several rank counts", pb__cmd_scaling},
    {"project", "project spmv-dist to thousands of ranks from its partition and measured rates", pb__cmd_project},
    {"version", "print the version", cmd_version},
    {"conv", "filter an image: parbench conv --image in.png --radius 8 --sigma 3 --save out.png", pb__cmd_conv},
};

static void main_help(FILE *f)
{
    fprintf(f, "usage: parbench COMMAND [options]\n\n"
               "Measures parallel kernels on every programming model compiled in, verifies\n"
               "every result against a CPU reference, and reports honest statistics.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nparbench COMMAND --help describes one command.\n");
}

/* What a command printed must have reached standard output (a full disk,
 * a closed pipe): a command that succeeded otherwise fails here. */
static int stdout_written(int rc)
{
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == EXIT_OK) {
        fprintf(stderr, "parbench: cannot write standard output: %s\n", strerror(errno));
        return EXIT_ERROR;
    }
    return rc;
}

static int run_command(int argc, char **argv)
{
    if (argc < 2) {
        main_help(stderr);
        return EXIT_USAGE;
    }
    if (is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        main_help(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(0, NULL);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "parbench: unknown command '%s' (see parbench --help)\n", argv[1]);
    return EXIT_USAGE;
}

#ifdef PB_HAVE_OPENBLAS
/* Where OpenBLAS misread the CPU (pb__openblas_core_wanted), parbench run
 * gemm (and gemm-dist) and study start again with OPENBLAS_CORETYPE naming the
 * right core: OpenBLAS reads it only as it loads. A core the user set stands.
 * The results' context says so (PB_OPENBLAS_PICKED: OpenBLAS's own pick). */
static void openblas_fit_core(int argc, char **argv)
{
    const bool gemm = argc > 2 && strcmp(argv[1], "run") == 0 && strncmp(argv[2], "gemm", 4) == 0;
    if (!gemm && !(argc > 1 && strcmp(argv[1], "study") == 0))
        return;
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    const bool speaks = !rank || strcmp(rank, "0") == 0;
    const char *picked = NULL, *core = getenv("OPENBLAS_CORETYPE") ? NULL : pb__openblas_core_wanted(&picked);
    if (!core)
        return;
    if (setenv("OPENBLAS_CORETYPE", core, 1) == 0 && setenv("PB_OPENBLAS_PICKED", picked, 1) == 0)
        execv("/proc/self/exe", argv);
    const int err = errno;
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("PB_OPENBLAS_PICKED");
    if (speaks)
        fprintf(stderr, "parbench: OpenBLAS took this CPU (its model not named) for a %s, slower than it is; "
                        "restarting with OPENBLAS_CORETYPE=%s failed (%s): set it and run again\n",
                picked, core, strerror(err));
}
#endif

int main(int argc, char **argv)
{
    if (!pb__cli_std_descriptors_open()) /* reaches no one where stderr is the one closed: the exit code says it */
        return pb__cli_die(EXIT_ERROR, "standard input, output or error is closed and /dev/null cannot be "
                                       "opened in its place: %s", strerror(errno));
    /* Past a file-size limit (ulimit -f) a write fails with EFBIG and says
     * "cannot write FILE: File too large", instead of the process dying unseen. */
    signal(SIGXFSZ, SIG_IGN);
#ifdef PB_HAVE_OPENBLAS
    openblas_fit_core(argc, argv);
#endif
    return stdout_written(run_command(argc, argv));
}

/* parbench ceilings: on every device of the selected backends, the `peak`
 * benchmark's FMA (fp32, fp64), read-only and (host CPU) copy kernels, the
 * bandwidth benchmark's device copy and pinned host<->device copies, run
 * through the ordinary runner (statistics, verification), their median rates
 * saved as the device's ceilings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/runner.h"
#include "core/parse.h"
#include "output/writer_impl.h"
#include "report/cli_util.h"
#include "report/report.h"

/* Problem sizes by the kind of device: GPUs need many threads and large
 * arrays to reach their peaks; a CPU's FMA peak is reached with far less. */
struct sizes {
    int64_t fma_n, fma_iters, read_bytes, copy_bytes, transfer_bytes;
};
static const struct sizes gpu_sizes = {4 << 20, 4096, 1ll << 30, 1ll << 30, 256 << 20};
static const struct sizes cpu_sizes = {1 << 20, 256, 256 << 20, 256 << 20, 0};
static const struct sizes quick_sizes = {1 << 16, 16, 4 << 20, 4 << 20, 4 << 20};

/* Collects the rates of the rows into one ceiling. */
static pb_status capture_begin(struct pb_writer *w)
{
    (void)w;
    return PB_OK;
}

static pb_status capture_row(struct pb_writer *w, const struct pb_result *r)
{
    struct pb_ceiling *c = w->state;
    if (r->device[0])
        snprintf(c->device, sizeof c->device, "%s", r->device);
    if (r->status != PB_RESULT_OK)
        return PB_OK;
    const char *v = r->variant;
    if (strcmp(r->bench->name, "peak") == 0 && strcmp(v, "fma") == 0)
        *(r->problem.prec == PB_DOUBLE ? &c->fp64_gflops : &c->fp32_gflops) = r->gflops;
    else if (strcmp(r->bench->name, "peak") == 0 && strcmp(v, "read") == 0)
        c->read_gbps = r->gbps;
    else if (strcmp(v, "d2d") == 0 || (strcmp(r->bench->name, "peak") == 0 && strcmp(v, "copy") == 0))
        c->copy_gbps = r->gbps;
    else if (strcmp(v, "h2d-pinned") == 0)
        c->h2d_gbps = r->gbps;
    else if (strcmp(v, "d2h-pinned") == 0)
        c->d2h_gbps = r->gbps;
    return PB_OK;
}

static pb_status capture_end(struct pb_writer *w)
{
    (void)w;
    return PB_OK;
}

static const struct pb_writer_ops capture_ops = {"capture", capture_begin, capture_row, capture_end, NULL};

struct measure {
    const char *bench;
    const char *variants[3];
    size_t n_variants;
    bool both_precisions;
    int64_t v[2]; /* parameter values in the benchmark's order */
};

/* One pb__run of one benchmark on one backend. */
static int run_one(const struct measure *m, const char *backend, int device, int reps,
                   struct pb_context *ctx, struct pb_writer **writers, size_t n_writers, struct pb_run_summary *total)
{
    const struct pb_bench *bench = pb__bench_find(m->bench);
    struct pb_param_lists lists;
    memset(&lists, 0, sizeof lists);
    int64_t values[2] = {m->v[0], m->v[1]};
    for (size_t i = 0; i < bench->n_params && i < 2; i++) {
        lists.values[i] = &values[i];
        lists.count[i] = 1;
    }
    struct pb_problem problems[2];
    size_t n = 0, got = 0;
    pb_status st = PB_OK;
    for (int p = 0; p < (m->both_precisions ? 2 : 1) && st == PB_OK; p++, n += got)
        st = bench->plan(&lists, p ? PB_DOUBLE : PB_FLOAT, problems + n, 2 - n, &got);
    const char *backends[1] = {backend};
    struct pb_run_config cfg = {.bench = bench, .problems = problems, .n_problems = n, .backends = backends,
                                .n_backends = 1, .variants = m->variants, .n_variants = m->n_variants,
                                .device = device, .reps = reps, .warmup = 1,
                                .seed = ctx->seed, .verify = true, .ctx = ctx, .progress = isatty(STDERR_FILENO),
                                .writers = writers, .n_writers = n_writers};
    for (size_t i = 0; i < n_writers && st == PB_OK; i++)
        st = pb__writer_begin(writers[i], ctx, bench);
    struct pb_run_summary sum = {0};
    if (st == PB_OK)
        st = pb__run(&cfg, &sum);
    total->ok += sum.ok, total->failed += sum.failed, total->errors += sum.errors;
    total->skipped += sum.skipped + sum.unsupported;
    total->interrupted |= sum.interrupted;
    return st == PB_OK ? PB_EXIT_OK : pb__cli_fail(st);
}

/* What the ceilings loop needs to know of device i of backend b: its name,
 * whether it is a GPU (sizes follow) and, on the host CPU, the last-level
 * cache (0 = not known). false when it cannot be opened (said on stderr). */
static bool probe_device(const pb_backend *b, int i, char *name, size_t len, bool *gpu, int64_t *llc)
{
    pb_device *dev;
    struct pb_device_info info;
    pb_status st = pb_device_open(b, i, &dev);
    *llc = 0;
    if (st == PB_OK) {
        snprintf(name, len, "%s", pb_device_name(dev));
        st = pb_device_info(dev, &info);
        *gpu = st == PB_OK && (strcmp(info.kind, "gpu") == 0 || strcmp(info.kind, "accelerator") == 0);
        for (int k = 0; st == PB_OK && k < info.n_props; k++) /* "32768K" */
            if (strcmp(info.props[k].key, "cache_l3") == 0 && pb__parse_int(info.props[k].value, "cache", llc) != PB_OK)
                *llc = 0;
        pb__clear_error();
        pb_device_close(dev);
    }
    if (st != PB_OK)
        fprintf(stderr, "parbench: %s device %d skipped: %s\n", b->name, i,
                pb_last_error()[0] ? pb_last_error() : pb_status_message(st));
    return st == PB_OK;
}

/* Whether the device picked by --device (index or NAME) is device i of b.
 * Without --device every device is measured. */
static bool device_selected(const pb_backend *b, int i, const char *device_arg, int64_t index, const char *match)
{
    if (!device_arg)
        return true;
    if (!match)
        return i == index;
    pb_device *dev;
    if (pb_device_open(b, i, &dev) != PB_OK)
        return false;
    bool yes = pb__device_matches(dev, match);
    pb_device_close(dev);
    return yes;
}

/* Runs the ceilings' kernels on device di of b and adds what they measured
 * to saved. Returns an exit code; *st gets a library error. */
static int measure_device(const pb_backend *b, int di, const char *name, bool gpu, int64_t llc, bool quick,
                          int reps, struct pb_context *ctx, struct pb_writer *table, struct pb_ceilings *saved,
                          struct pb_run_summary *total, size_t *measured, pb_status *st)
{
    struct sizes sz_cpu = cpu_sizes;
    /* Arrays well past the last-level cache, also where it is large. */
    if (llc > 0 && 8 * llc > sz_cpu.read_bytes)
        sz_cpu.read_bytes = sz_cpu.copy_bytes = 8 * llc;
    const struct sizes *sz = quick ? &quick_sizes : gpu ? &gpu_sizes : &sz_cpu;
    struct pb_ceiling entry = {.copy_gbps = NAN, .read_gbps = NAN, .h2d_gbps = NAN, .d2h_gbps = NAN,
                               .fp32_gflops = NAN, .fp64_gflops = NAN};
    snprintf(entry.backend, sizeof entry.backend, "%s", b->name);
    snprintf(entry.device, sizeof entry.device, "%s", name);
    struct pb_writer capture = {.ops = &capture_ops, .state = &entry};
    struct pb_writer *writers[2] = {table, &capture};
    /* The copy ceiling: peak/copy where the backend has it (the host CPU's
     * STREAM Copy over all threads), else the device-to-device copy. */
    const struct measure copy_peak = {"peak", {"copy"}, 1, false, {sz->copy_bytes / 4, 1}},
                         copy_d2d = {"bandwidth", {"d2d"}, 1, false, {sz->copy_bytes, 1}};
    const struct measure plan[] = {
        {"peak", {"fma"}, 1, true, {sz->fma_n, sz->fma_iters}},
        {"peak", {"read"}, 1, false, {sz->read_bytes / 4, 1}},
        pb__variant_find(b, "peak", "copy") ? copy_peak : copy_d2d,
    };
    int rc = PB_EXIT_OK;
    for (size_t m = 0; m < sizeof plan / sizeof plan[0] && rc == PB_EXIT_OK && !total->interrupted; m++)
        rc = run_one(&plan[m], b->name, di, reps, ctx, writers, 2, total);
    /* The transfers at their own size: a GPU's copy engines saturate long
     * before its memory does. */
    if (rc == PB_EXIT_OK && sz->transfer_bytes && !total->interrupted) {
        const struct measure transfers = {"bandwidth", {"h2d-pinned", "d2h-pinned"}, 2, false,
                                          {sz->transfer_bytes, 1}};
        rc = run_one(&transfers, b->name, di, reps, ctx, writers, 2, total);
    }
    if (rc == PB_EXIT_OK &&
        (isfinite(entry.fp32_gflops) || isfinite(entry.copy_gbps) || isfinite(entry.read_gbps))) {
        *st = pb__ceilings_put(saved, &entry);
        (*measured)++;
    }
    return rc;
}

static void ceilings_help(FILE *f)
{
    fprintf(f, "usage: parbench ceilings [options]\n\n"
               "Measures this machine's roofline once, on every device of the selected backends: peak FMA\n"
               "throughput in fp32 and fp64 (peak/fma), read-only streaming bandwidth (peak/read), a\n"
               "copy (peak/copy on the host CPU: STREAM Copy over all threads; elsewhere the\n"
               "device-to-device copy, bandwidth/d2d) and, on GPUs, pinned host<->device copies. Every\n"
               "kernel is verified. Saved as JSON; later runs read it and give each row its fraction of\n"
               "the ceiling that bounds it (GFLOP/s against the FMA peak of its precision, GB/s of\n"
               "memory-bound kernels against the memory ceiling, transfers against the link).\n\noptions:\n"
               "  --backend LIST          backends (default: every available one but ref)\n"
               "  --device N|NAME         only this device index within each backend, or the devices whose\n"
               "                          name (OpenCL: or platform vendor) contains NAME (default: all;\n"
               "                          GPUs of one model are measured once, saved under their name)\n"
               "  --ceilings FILE         where to save (default $XDG_CACHE_HOME/parbench/ceilings.json\n"
               "                          or ~/.cache/parbench/ceilings.json); other devices' entries are kept\n"
               "  --reps N                timed repetitions (default 5)\n"
               "  --quick                 small problems (a check that it works, not a measurement;\n"
               "                          saved only to a --ceilings FILE given)\n"
               "\nexit status: 0 saved, 1 a kernel FAILED verification, 2 usage error, 3 device or I/O error.\n");
}

int pb__cmd_ceilings(int argc, char **argv)
{
    const char *backend_list = NULL, *device_arg = NULL, *path = NULL, *reps_arg = "5";
    bool quick = false;
    int rc = PB_EXIT_OK;
    for (int i = 1; i < argc && rc == PB_EXIT_OK; i++) {
        const char *v;
        if (pb__cli_is_help(argv[i])) {
            ceilings_help(stdout);
            return PB_EXIT_OK;
        }
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (pb__cli_value(argc, argv, &i, "backend", 0, &v, &rc))
            backend_list = v;
        else if (pb__cli_value(argc, argv, &i, "device", 0, &v, &rc))
            device_arg = v;
        else if (pb__cli_value(argc, argv, &i, "ceilings", 0, &v, &rc))
            path = v;
        else if (pb__cli_value(argc, argv, &i, "reps", 0, &v, &rc))
            reps_arg = v;
        else if (rc == PB_EXIT_OK)
            rc = pb__cli_die(PB_EXIT_USAGE, "unknown option '%s' for ceilings (see parbench ceilings --help)", argv[i]);
    }
    if (rc != PB_EXIT_OK)
        return rc;
    char default_path[1024];
    /* quick figures are no ceilings: they go where asked, never over the default file */
    bool save = !quick || path;
    if (!path && !pb__ceilings_default_path(default_path, sizeof default_path))
        return pb__cli_die(PB_EXIT_USAGE, "%s", "neither XDG_CACHE_HOME nor HOME is set: give --ceilings FILE");
    if (!path)
        path = default_path;
    int64_t reps, device = 0;
    pb_status st = pb__parse_int(reps_arg, "--reps", &reps);
    if (st == PB_OK && (reps < 1 || reps > 10000))
        st = pb__fail(PB_ERR_INVALID, "--reps must be between 1 and 10000 (got %s)", reps_arg);
    const char *match = NULL;
    if (st == PB_OK && device_arg) {
        if (device_arg[0] && strspn(device_arg, "0123456789") == strlen(device_arg))
            st = pb__parse_int(device_arg, "--device", &device);
        else if (device_arg[0])
            match = device_arg;
        else
            st = pb__fail(PB_ERR_INVALID, "--device needs an index or part of a device name");
    }
    char **names = NULL;
    size_t n_names = 0;
    if (st == PB_OK && backend_list)
        st = pb__parse_name_list(backend_list, "--backend", &names, &n_names);
    for (size_t i = 0; st == PB_OK && i < n_names; i++)
        if (!pb_backend_find(names[i]))
            st = pb__fail(PB_ERR_NOT_FOUND, "unknown backend '%s'", names[i]);
    if (st != PB_OK) {
        free(names);
        return pb__cli_fail(st);
    }
    struct pb_ceilings saved;
    st = pb__ceilings_read(path, &saved);
    if (st == PB_ERR_NOT_FOUND)
        st = PB_OK;
    if (st == PB_ERR_PARSE && path == default_path) { /* the advice for a damaged default file is to rerun this */
        fprintf(stderr, "parbench: %s: %s\n", pb_last_error(),
                save ? "it is replaced by this run's ceilings" : "ignored");
        pb__clear_error();
        st = PB_OK;
    }
    /* A destination that cannot be written fails now, not after the measuring. */
    if (st == PB_OK && save)
        st = pb__ceilings_check_writable(path);
    if (st != PB_OK) {
        free(names);
        pb__ceilings_free(&saved);
        return pb__cli_fail(st);
    }

    struct pb_context ctx;
    pb__context_init(&ctx, argc + 1, argv - 1);
    ctx.reps = (int)reps;
    ctx.warmup = 1;
    ctx.seed = 42;
    struct pb_writer *table = NULL;
    st = pb__writer_open("table", NULL, false, &table);
    struct pb_run_summary total = {0};
    size_t measured = 0;
    for (size_t bi = 0; st == PB_OK && rc == PB_EXIT_OK && bi < pb_backend_count() && !total.interrupted; bi++) {
        const pb_backend *b = pb_backend_at(bi);
        bool selected = !names && strcmp(b->name, "ref") != 0;
        for (size_t k = 0; k < n_names; k++)
            selected |= strcmp(names[k], b->name) == 0;
        const char *why;
        if (!selected)
            continue;
        if (!pb_backend_available(b, &why)) {
            fprintf(stderr, "parbench: %s skipped: %s\n", b->name, why);
            continue;
        }
        /* Every device (or the ones --device picks), each under its own
         * name: the key rows find their ceilings by. Twins (several GPUs of
         * one model) share a name, so the first stands for them. */
        int count = pb_backend_device_count(b), picked = 0;
        char (*names_done)[256] = calloc(count > 0 ? (size_t)count : 1, sizeof *names_done);
        if (!names_done) {
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
            break;
        }
        for (int di = 0; di < count && st == PB_OK && rc == PB_EXIT_OK && !total.interrupted; di++) {
            if (!device_selected(b, di, device_arg, device, match))
                continue;
            picked++;
            char name[256];
            bool gpu = false;
            int64_t llc = 0;
            if (!probe_device(b, di, name, sizeof name, &gpu, &llc))
                continue;
            int twin = -1;
            for (int k = 0; k < di && twin < 0; k++)
                if (strcmp(names_done[k], name) == 0)
                    twin = k;
            if (twin >= 0) {
                fprintf(stderr, "parbench: %s device %d is the same model as device %d (%s): measured once\n",
                        b->name, di, twin, name);
                continue;
            }
            snprintf(names_done[di], sizeof names_done[di], "%s", name);
            rc = measure_device(b, di, name, gpu, llc, quick, (int)reps, &ctx, table, &saved, &total, &measured, &st);
        }
        free(names_done);
        if (device_arg && !picked && rc == PB_EXIT_OK)
            fprintf(stderr, "parbench: %s has no device %s\n", b->name, device_arg);
    }
    pb_status cst = pb__writer_close(table);
    if (st == PB_OK)
        st = cst;
    free(names);
    if (st != PB_OK && rc == PB_EXIT_OK)
        rc = pb__cli_fail(st);
    if (rc == PB_EXIT_OK && total.interrupted)
        rc = 130;
    if (rc == PB_EXIT_OK && measured && !save) {
        printf("\n--quick: nothing saved (--ceilings FILE keeps these figures; a full run saves to %s)\n", path);
    } else if (rc == PB_EXIT_OK && measured) {
        snprintf(saved.date, sizeof saved.date, "%s", ctx.date);
        snprintf(saved.commit, sizeof saved.commit, "%s", ctx.commit);
        st = pb__ceilings_write(path, &saved);
        if (st != PB_OK) {
            rc = pb__cli_fail(st);
        } else {
            printf("\nceilings (GB/s = 1e9 bytes/s) saved to %s:\n", path);
            for (size_t i = 0; i < saved.n; i++) {
                const struct pb_ceiling *c = &saved.dev[i];
                const double v[6] = {c->copy_gbps, c->read_gbps, c->h2d_gbps, c->d2h_gbps, c->fp32_gflops,
                                     c->fp64_gflops};
                char t[6][24]; /* "-": not measured on this backend */
                for (int k = 0; k < 6; k++)
                    snprintf(t[k], sizeof t[k], isfinite(v[k]) ? "%.1f" : "-", v[k]);
                printf("  %-7s %-40s copy %8s  read %8s  h2d %6s  d2h %6s GB/s   fp32 %9s  fp64 %9s GFLOP/s\n",
                       c->backend, c->device, t[0], t[1], t[2], t[3], t[4], t[5]);
            }
        }
    } else if (rc == PB_EXIT_OK) {
        rc = pb__cli_die(PB_EXIT_ERROR, "%s", "no device measured: nothing saved");
    }
    pb__ceilings_free(&saved);
    if (rc == PB_EXIT_OK && total.failed)
        rc = PB_EXIT_FAILED;
    return rc;
}

pb_status pb__ceilings_for_run(const char *path, struct pb_ceilings *out)
{
    char default_path[1024];
    memset(out, 0, sizeof *out);
    if (!path && !pb__ceilings_default_path(default_path, sizeof default_path))
        return PB_OK;
    pb_status st = pb__ceilings_read(path ? path : default_path, out);
    if (st == PB_ERR_NOT_FOUND && path)
        return pb__fail(PB_ERR_IO, "cannot read %s: no such file", path);
    if (path || st == PB_OK || st == PB_ERR_NOMEM) /* a --ceilings FILE given and damaged stays an error */
        return st;
    /* The default file missing or damaged: the rows go without fractions
     * rather than every run failing on a cache file. */
    static bool told; /* once per process: a study makes several runs */
    if (!told && st == PB_ERR_NOT_FOUND)
        fprintf(stderr, "parbench: no ceilings file (%s): rows carry no fraction of ceiling; "
                        "parbench ceilings measures them\n", default_path);
    else if (!told)
        fprintf(stderr, "parbench: warning: %s; rows carry no fraction of ceiling (delete it or rerun parbench "
                        "ceilings)\n", pb_last_error());
    told = true;
    pb__clear_error();
    pb__ceilings_free(out);
    return PB_OK;
}

/* Energy meters without the hardware: the RAPL reader on a powercap tree made
 * here (PB_TEST_POWERCAP_DIR), wrap-around, sampled power integrated, the
 * throttle names, the meter's pauses, NVML through a stand-in library (where
 * nvml.h was found), a run whose rows carry energy, a run with no source at
 * all, and the new columns through CSV and JSON and back (report/results.c). */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <time.h>

#include "test_util.h"

#include "bench/runner.h"
#include "core/core.h"
#include "core/energy.h"
#include "core/parse.h"
#include "output/result.h"
#include "report/results.h"

/* ---- a powercap tree ------------------------------------------------------- */

static char root[512];

static void put(const char *zone, const char *file, const char *text)
{
    char path[700], tmp[720];
    snprintf(path, sizeof path, "%s/%s/%s", root, zone, file);
    snprintf(tmp, sizeof tmp, "%s.new", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, path), 0); /* readers see the old or the new value, never half */
}

static void put_u64(const char *zone, const char *file, uint64_t v)
{
    char text[32];
    snprintf(text, sizeof text, "%" PRIu64 "\n", v);
    put(zone, file, text);
}

static uint64_t get_u64(const char *zone)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s/energy_uj", root, zone);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    unsigned long long v = 0;
    assert_int_equal(fscanf(f, "%llu", &v), 1);
    fclose(f);
    return v;
}

static void bump(const char *zone, uint64_t uj, uint64_t range)
{
    uint64_t v = get_u64(zone) + uj;
    put_u64(zone, "energy_uj", v > range ? v - range : v);
}

#define RANGE 262143328850ull

static void zone(const char *name, const char *kind, uint64_t energy)
{
    char dir[700];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    assert_int_equal(mkdir(dir, 0755), 0);
    put(name, "name", kind);
    put_u64(name, "max_energy_range_uj", RANGE);
    put_u64(name, "energy_uj", energy);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static int make_root(void **state)
{
    (void)state;
    const char *dir = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/parbench-powercap-XXXXXX", dir && *dir ? dir : "/tmp");
    if (!mkdtemp(root))
        return -1;
    setenv("PB_TEST_POWERCAP_DIR", root, 1);
    return 0;
}

static int remove_root(void **state)
{
    (void)state;
    unsetenv("PB_TEST_POWERCAP_DIR");
    return nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A server's tree: two packages with core and DRAM subzones, and psys. */
static void server_tree(void)
{
    zone("intel-rapl:0", "package-0\n", 1000);
    zone("intel-rapl:0:0", "core\n", 500);
    zone("intel-rapl:0:1", "dram\n", 2000);
    zone("intel-rapl:1", "package-1\n", RANGE - 1000000); /* 1 J before it wraps */
    zone("intel-rapl:2", "psys\n", 7);
}

/* ---- devices of made-up backends -------------------------------------------- */

static char gpu_bus[32] = "0000:65:00.0";

static pb_status gpu_domain(pb_device *dev, struct pb_energy_domain *out)
{
    (void)dev;
    memset(out, 0, sizeof *out);
    out->kind = PB_ENERGY_PCI_GPU;
    snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "%s", gpu_bus);
    return PB_OK;
}

static const struct pb_backend host_backend = {.name = "hostlike", .energy_domain = pb__energy_domain_host};
static const struct pb_backend gpu_backend = {.name = "gpulike", .energy_domain = gpu_domain};
static const struct pb_backend plain_backend = {.name = "plain"};

static pb_device device_of(const struct pb_backend *b, const char *name)
{
    pb_device dev;
    memset(&dev, 0, sizeof dev);
    dev.backend = b;
    snprintf(dev.name, sizeof dev.name, "%s", name);
    return dev;
}

/* ---- the pieces ------------------------------------------------------------- */

static void test_rapl_delta(void **state)
{
    (void)state;
    assert_int_equal(pb__rapl_delta(100, 250, 1000), 150);
    assert_int_equal(pb__rapl_delta(900, 50, 1000), 150); /* wrapped once */
    assert_int_equal(pb__rapl_delta(7, 7, 1000), 0);
    assert_int_equal(pb__rapl_delta(RANGE - 1000000, 2000000, RANGE), 3000000);
}

static void test_power_integral(void **state)
{
    (void)state;
    struct pb_power_integral p;
    memset(&p, 0, sizeof p);
    assert_true(isnan(pb__power_mean(&p)));
    pb__power_add(&p, 0, 100);
    assert_near(pb__power_mean(&p), 100, 0); /* one sample: its value */
    pb__power_add(&p, 1, 200);               /* 150 J over 1 s */
    pb__power_add(&p, 3, 200);               /* 400 J over 2 s */
    assert_near(p.joules, 550, 1e-12);
    assert_near(p.seconds, 3, 0);
    assert_near(pb__power_mean(&p), 550.0 / 3, 1e-12);
    pb__power_break(&p); /* the gap from 3 s to 10 s is not measured */
    pb__power_add(&p, 10, 50);
    pb__power_add(&p, 12, 50);
    assert_near(p.joules, 650, 1e-12);
    assert_near(p.seconds, 5, 0);
    assert_near(pb__power_mean(&p), 130, 1e-12);
}

static void test_throttle_name(void **state)
{
    (void)state;
    char buf[64];
    pb__throttle_name(0, buf, sizeof buf);
    assert_string_equal(buf, "none");
    pb__throttle_name(PB_THROTTLE_POWER_CAP | PB_THROTTLE_THERMAL, buf, sizeof buf);
    assert_string_equal(buf, "power-cap+thermal");
    pb__throttle_name(PB_THROTTLE_SYNC_BOOST, buf, sizeof buf);
    assert_string_equal(buf, "sync-boost");
    pb__throttle_name(0x3f, buf, sizeof buf);
    assert_string_equal(buf, "power-cap+hw-slowdown+sync-boost+thermal+hw-thermal+power-brake");
}

/* ---- RAPL ---------------------------------------------------------------------- */

/* Packages and DRAM are summed, core (inside its package) and psys (over
 * everything) are not, and a counter that wraps still adds what it counted. */
static void test_rapl_reader(void **state)
{
    (void)state;
    server_tree();
    const struct pb_energy_ops *ops;
    void *rapl;
    char why[256] = "";
    assert_true(pb__rapl_open(root, &ops, &rapl, why, sizeof why));
    double j = -1;
    assert_true(ops->counter(rapl, &j, why, sizeof why));
    assert_near(j, 0, 0);
    bump("intel-rapl:0", 5000000, RANGE);   /* 5 J */
    bump("intel-rapl:0:1", 1000000, RANGE); /* 1 J of DRAM */
    bump("intel-rapl:1", 3000000, RANGE);   /* 3 J, through the wrap */
    bump("intel-rapl:0:0", 50000000, RANGE);
    bump("intel-rapl:2", 90000000, RANGE);
    assert_true(get_u64("intel-rapl:1") < 3000000); /* it did wrap */
    assert_true(ops->counter(rapl, &j, why, sizeof why));
    assert_near(j, 9, 1e-9);
    bump("intel-rapl:0", 250000, RANGE);
    assert_true(ops->counter(rapl, &j, why, sizeof why));
    assert_near(j, 9.25, 1e-9);
    ops->close(rapl);
}

static void test_rapl_unreadable(void **state)
{
    (void)state;
    const struct pb_energy_ops *ops;
    void *rapl;
    char why[256] = "", missing[600];
    assert_false(pb__rapl_open(root, &ops, &rapl, why, sizeof why)); /* an empty tree */
    assert_contains(why, "no RAPL package counters");
    snprintf(missing, sizeof missing, "%s/none", root);
    assert_false(pb__rapl_open(missing, &ops, &rapl, why, sizeof why));
    assert_contains(why, "No such file");
    /* A counter that cannot be read: named, with the system's reason. */
    zone("intel-rapl:0", "package-0\n", 1000);
    char path[700];
    snprintf(path, sizeof path, "%s/intel-rapl:0/energy_uj", root);
    assert_int_equal(remove(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_false(pb__rapl_open(root, &ops, &rapl, why, sizeof why));
    assert_contains(why, "cannot read");
    assert_contains(why, "intel-rapl:0/energy_uj");
}

/* ---- the meter ------------------------------------------------------------------- */

static void test_meter_rapl(void **state)
{
    (void)state;
    server_tree();
    pb_device dev = device_of(&host_backend, "some CPU");
    pb_energy *m;
    assert_int_equal(pb__energy_open(&dev, &m), PB_OK);
    struct pb_energy_reading r;
    pb__energy_start(m, false);
    bump("intel-rapl:0", 2000000, RANGE);
    pb__energy_stop(m, &r);
    assert_null(r.note);
    assert_string_equal(r.source, "rapl");
    assert_near(r.joules, 2, 1e-9);
    assert_true(r.seconds > 0);
    assert_near(r.watts, r.joules / r.seconds, 1e-9 * r.watts);
    assert_true(isnan(r.sm_mhz) && isnan(r.mem_mhz));
    assert_string_equal(r.throttle, "");

    /* Paused while something else runs: what it spends is left out. */
    pb__energy_start(m, false);
    bump("intel-rapl:0", 1000000, RANGE);
    pb__energy_stop(m, &r);
    double first = r.seconds;
    bump("intel-rapl:0", 10000000, RANGE);
    pb__energy_start(m, true);
    bump("intel-rapl:0:1", 2000000, RANGE);
    pb__energy_stop(m, &r);
    assert_near(r.joules, 3, 1e-9);
    assert_true(r.seconds >= first);

    /* A counter that did not move: nothing measured, and the reason. */
    pb__energy_start(m, false);
    pb__energy_stop(m, &r);
    assert_true(isnan(r.joules) && isnan(r.watts));
    assert_null(r.source);
    assert_contains(r.note, "did not advance");
    pb__energy_free(m);
    pb__energy_free(NULL);
}

/* No RAPL here and a backend with no energy domain: empty readings, and why. */
static void test_meter_without_source(void **state)
{
    (void)state;
    pb_device host = device_of(&host_backend, "some CPU"), plain = device_of(&plain_backend, "a device");
    pb_energy *m;
    struct pb_energy_reading r;
    assert_int_equal(pb__energy_open(&host, &m), PB_OK);
    pb__energy_start(m, false);
    pb__energy_stop(m, &r);
    assert_true(isnan(r.joules) && isnan(r.watts) && isnan(r.sm_mhz));
    assert_null(r.source);
    assert_contains(r.note, "energy not measured on the host CPU: no RAPL package counters under");
    pb__energy_free(m);

    assert_int_equal(pb__energy_open(&plain, &m), PB_OK);
    pb__energy_start(m, false);
    pb__energy_stop(m, &r);
    assert_true(isnan(r.joules));
    assert_contains(r.note, "energy not measured on a device: the plain backend has no energy reading");
    pb__energy_free(m);
}

#ifdef PB_TEST_FAKE_NVML
/* NVML through the stand-in: the GPU found by its bus id, the counter used
 * where there is one, else sampled power; clocks averaged; idle and display
 * settings are not throttling, a power cap and sync boost are. */
static void test_nvml(void **state)
{
    (void)state;
    setenv("PB_TEST_NVML_LIB", PB_TEST_FAKE_NVML, 1);
    pb_device gpu = device_of(&gpu_backend, "Fake GPU");
    pb_energy *m;
    struct pb_energy_reading r;
    unsetenv("FAKE_NVML_MODE");
    assert_int_equal(pb__energy_open(&gpu, &m), PB_OK);
    /* the counter moved over a few microseconds: too short to read watts from */
    pb__energy_start(m, false);
    pb__energy_stop(m, &r);
    assert_true(isnan(r.joules) && isnan(r.watts));
    assert_contains(r.note, "too short for its energy counter");
    pb__energy_start(m, false);
    nanosleep(&(struct timespec){.tv_nsec = 120 * 1000 * 1000}, NULL); /* past 5 steps of 20 ms */
    pb__energy_stop(m, &r);
    assert_null(r.note);
    assert_string_equal(r.source, "nvml-energy");
    assert_true(r.joules >= 1);
    assert_near(r.joules, round(r.joules), 1e-9); /* whole reads of 1 J */
    assert_near(r.sm_mhz, 1980, 0);
    assert_near(r.mem_mhz, 2619, 0);
    assert_string_equal(r.throttle, "power-cap+sync-boost");
    pb__energy_free(m);

    setenv("FAKE_NVML_MODE", "power", 1);
    assert_int_equal(pb__energy_open(&gpu, &m), PB_OK);
    pb__energy_start(m, false);
    pb__energy_stop(m, &r);
    assert_null(r.note);
    assert_string_equal(r.source, "nvml-power");
    assert_near(r.watts, 250, 1e-9);
    assert_near(r.joules, 250 * r.seconds, 1e-9);
    pb__energy_free(m);
    unsetenv("FAKE_NVML_MODE");

    snprintf(gpu_bus, sizeof gpu_bus, "0000:17:00.0"); /* a GPU NVML does not have */
    assert_int_equal(pb__energy_open(&gpu, &m), PB_OK);
    pb__energy_stop(m, &r);
    assert_contains(r.note, "energy not measured on Fake GPU: no NVML device at PCI bus id 0000:17:00.0");
    pb__energy_free(m);
    snprintf(gpu_bus, sizeof gpu_bus, "0000:65:00.0");

    setenv("PB_TEST_NVML_LIB", "libnvidia-ml-not-here.so.1", 1);
    assert_int_equal(pb__energy_open(&gpu, &m), PB_OK);
    pb__energy_stop(m, &r);
    assert_contains(r.note, "NVML not found");
    pb__energy_free(m);
    unsetenv("PB_TEST_NVML_LIB");
}
#else
static void test_nvml(void **state)
{
    (void)state;
    pb_device gpu = device_of(&gpu_backend, "Fake GPU");
    pb_energy *m;
    struct pb_energy_reading r;
    assert_int_equal(pb__energy_open(&gpu, &m), PB_OK);
    pb__energy_stop(m, &r);
    assert_contains(r.note, "built without nvml.h");
    pb__energy_free(m);
}
#endif

/* ---- runs --------------------------------------------------------------------- */

/* RAPL over the test's tree, whose package counter is bumped 0.5 J before
 * every read: the timed repetitions see energy, with no thread to race. */
static const struct pb_energy_ops *rapl_ops;
static struct pb_energy_ops bumping_ops;

static bool bumping_counter(void *state, double *joules, char *why, size_t len)
{
    bump("intel-rapl:0", 500000, RANGE);
    return rapl_ops->counter(state, joules, why, len);
}

static bool open_bumping_rapl(const char *dir, const struct pb_energy_ops **ops, void **state, char *why, size_t len)
{
    if (!pb__rapl_open(dir, &rapl_ops, state, why, len))
        return false;
    bumping_ops = *rapl_ops;
    bumping_ops.counter = bumping_counter;
    *ops = &bumping_ops;
    return true;
}

/* gemm ref/ikj at n over cfg.energy, one CSV row read back. */
static struct csv *run_gemm(const char *n, bool energy, const char *path)
{
    const struct pb_bench *gemm = pb__bench_find("gemm");
    struct pb_context ctx;
    char *argv[] = {"test_energy"};
    pb__context_init(&ctx, 1, argv);
    struct pb_problem problems[1];
    struct pb_param_lists lists = {0};
    size_t n_idx = 0, got = 0, count;
    while (strcmp(gemm->params[n_idx].name, "n") != 0)
        n_idx++;
    int64_t *values;
    assert_int_equal(pb__parse_int_list(n, "--n", &values, &count), PB_OK);
    lists.values[n_idx] = values;
    lists.count[n_idx] = count;
    assert_int_equal(gemm->plan(&lists, PB_DOUBLE, problems, 1, &got), PB_OK);
    free(values);
    static const char *const ikj[] = {"ref/ikj"};
    struct pb_writer *w = NULL;
    assert_int_equal(pb__writer_open("csv", path, false, &w), PB_OK);
    assert_int_equal(pb__writer_begin(w, &ctx, gemm), PB_OK);
    struct pb_run_config cfg = {.bench = gemm, .problems = problems, .n_problems = 1, .variants = ikj,
                                .n_variants = 1, .reps = 3, .warmup = 0, .seed = 42, .verify = true,
                                .energy = energy, .ctx = &ctx, .writers = &w, .n_writers = 1};
    struct pb_run_summary sum;
    assert_int_equal(pb__run(&cfg, &sum), PB_OK);
    assert_int_equal(pb__writer_close(w), PB_OK);
    assert_int_equal(sum.ok, 1);
    struct csv *csv = csv_read(path);
    assert_int_equal(csv->n_records, 2);
    assert_string_equal(csv_get(csv, 1, "status"), "OK");
    return csv;
}

static void assert_no_energy(const struct csv *csv)
{
    static const char *const cols[] = {"energy_j", "power_w", "gflops_per_w", "gbps_per_w", "sm_mhz",
                                       "mem_mhz", "throttle", "energy_source"};
    for (size_t i = 0; i < PB_ARRAY_LEN(cols); i++)
        assert_string_equal(csv_get(csv, 1, cols[i]), "");
}

/* A row's energy: the counter over its timed repetitions, power x median
 * time per repetition, GFLOP/s per watt. */
static void test_run_with_energy(void **state)
{
    (void)state;
    char path[512];
    pb_test_tmpfile(path, sizeof path, "energy-run");
    zone("intel-rapl:0", "package-0\n", 1000);
    pb__energy_host_open = open_bumping_rapl;
    struct csv *csv = run_gemm("64", true, path);
    pb__energy_host_open = pb__rapl_open;
    assert_string_equal(csv_get(csv, 1, "energy_source"), "rapl");
    double power = atof(csv_get(csv, 1, "power_w")), median = atof(csv_get(csv, 1, "median_s"));
    double gflops = atof(csv_get(csv, 1, "gflops"));
    assert_true(power > 0);
    assert_near(atof(csv_get(csv, 1, "energy_j")), power * median, 1e-6 * power * median);
    assert_near(atof(csv_get(csv, 1, "gflops_per_w")), gflops / power, 1e-6 * gflops / power);
    assert_string_equal(csv_get(csv, 1, "gbps_per_w"), ""); /* the row has GFLOP/s */
    assert_string_equal(csv_get(csv, 1, "sm_mhz"), "");     /* RAPL has no clocks */
    csv_free(csv);

    /* --no-energy: nothing measured. */
    csv = run_gemm("17", false, path);
    assert_no_energy(csv);
    csv_free(csv);
    unlink(path);
}

/* No NVML, no RAPL: the row is OK and its energy columns are empty. */
static void test_run_without_sources(void **state)
{
    (void)state;
    char path[512];
    pb_test_tmpfile(path, sizeof path, "energy-none");
    struct csv *csv = run_gemm("17", true, path);
    assert_no_energy(csv);
    csv_free(csv);
    unlink(path);
}

/* ---- the columns written and read back ------------------------------------------ */

static void test_columns_round_trip(void **state)
{
    (void)state;
    const struct pb_bench *gemm = pb__bench_find("gemm");
    struct pb_context ctx;
    char *argv[] = {"test_energy"};
    pb__context_init(&ctx, 1, argv);
    double samples[3] = {0.02, 0.01, 0.015}, scratch[3];
    struct pb_result rows[2];
    for (int i = 0; i < 2; i++) {
        rows[i] = (struct pb_result){.bench = gemm, .problem = {PB_FLOAT, {64, 64, 64}}, .backend = "cuda",
                                     .variant = i ? "naive" : "cublas", .ranks = 1, .status = PB_RESULT_OK,
                                     .speedup = NAN, .fraction = NAN, .rank_rate_min = NAN,
                                     .rank_rate_median = NAN, .rank_rate_max = NAN, .timer = "event",
                                     .samples = samples, .host_samples = samples};
        gemm->describe(&rows[i].problem, rows[i].label, sizeof rows[i].label);
        snprintf(rows[i].device, sizeof rows[i].device, "Fake GPU");
        pb__stats_compute(samples, 3, scratch, &rows[i].stats);
        rows[i].host_stats = rows[i].stats;
        rows[i].gflops = 100, rows[i].gbps = NAN;
        pb__check_begin(&rows[i].check, 16, "full");
        rows[i].check.pass = true;
    }
    struct pb_result *e = &rows[0], *none = &rows[1];
    e->energy_source = "nvml-energy";
    e->power_w = 312.5, e->energy_j = 312.5 * 0.015, e->gflops_per_w = 100 / 312.5, e->gbps_per_w = NAN;
    e->sm_mhz = 1755, e->mem_mhz = 2619;
    snprintf(e->throttle, sizeof e->throttle, "power-cap");
    none->energy_source = NULL;
    none->energy_j = none->power_w = none->gflops_per_w = none->gbps_per_w = none->sm_mhz = none->mem_mhz = NAN;

    static const char *const formats[] = {"csv", "json", "table"};
    for (size_t k = 0; k < PB_ARRAY_LEN(formats); k++) {
        char path[512];
        pb_test_tmpfile(path, sizeof path, "energy-cols");
        struct pb_writer *w = NULL;
        assert_int_equal(pb__writer_open(formats[k], path, false, &w), PB_OK);
        assert_int_equal(pb__writer_begin(w, &ctx, gemm), PB_OK);
        for (int i = 0; i < 2; i++)
            assert_int_equal(pb__writer_row(w, &rows[i]), PB_OK);
        assert_int_equal(pb__writer_close(w), PB_OK);
        if (strcmp(formats[k], "table") == 0) { /* short: the power and the warning */
            char *text = pb_test_slurp(path);
            assert_contains(text, "312.5 W  throttled: power-cap");
            free(text);
            unlink(path);
            continue;
        }
        struct pb_rp_set set;
        memset(&set, 0, sizeof set);
        assert_int_equal(pb__rp_load(&set, path), PB_OK);
        assert_int_equal(set.n_rows, 2);
        const struct pb_rp_row *a = &set.rows[0], *b = &set.rows[1];
        assert_string_equal(a->energy_source, "nvml-energy");
        assert_near(a->power_w, 312.5, 1e-9);
        assert_near(a->energy_j, 312.5 * 0.015, 1e-9);
        assert_near(a->gflops_per_w, 0.32, 1e-9);
        assert_true(isnan(a->gbps_per_w));
        assert_near(a->sm_mhz, 1755, 0);
        assert_near(a->mem_mhz, 2619, 0);
        assert_string_equal(a->throttle, "power-cap");
        /* Not extras: the report would list them twice. */
        assert_null(pb__rp_find(a, "power_w"));
        assert_null(pb__rp_find(a, "energy"));
        assert_string_equal(b->energy_source, "");
        assert_string_equal(b->throttle, "");
        assert_true(isnan(b->power_w) && isnan(b->energy_j) && isnan(b->gflops_per_w) && isnan(b->sm_mhz));
        pb__rp_free(&set);
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rapl_delta),
        cmocka_unit_test(test_power_integral),
        cmocka_unit_test(test_throttle_name),
        cmocka_unit_test_setup_teardown(test_rapl_reader, make_root, remove_root),
        cmocka_unit_test_setup_teardown(test_rapl_unreadable, make_root, remove_root),
        cmocka_unit_test_setup_teardown(test_meter_rapl, make_root, remove_root),
        cmocka_unit_test_setup_teardown(test_meter_without_source, make_root, remove_root),
        cmocka_unit_test(test_nvml),
        cmocka_unit_test_setup_teardown(test_run_with_energy, make_root, remove_root),
        cmocka_unit_test_setup_teardown(test_run_without_sources, make_root, remove_root),
        cmocka_unit_test(test_columns_round_trip),
    };
    return pb_test_run(tests, NULL, NULL);
}

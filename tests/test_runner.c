/* The run loop end to end on the gemm benchmark: rows and statuses written to
 * a CSV file and read back, fault injection, variant/backend/thread
 * selection, name validation, and a problem too large to allocate. */
#include "test_util.h"

#include "bench/runner.h"
#include "core/core.h"
#include "core/parse.h"
#include "parbench/pb_kernels.h"

#define MAX_PROBLEMS 8

struct fixture {
    const struct pb_bench *gemm;
    struct pb_context ctx;
    struct pb_problem problems[MAX_PROBLEMS];
    size_t n_problems;
    char path[512];
};

/* Problems from "--n <list>" (m and k follow n), appended to f->problems. */
static void plan(struct fixture *f, const char *n_list, enum pb_precision prec)
{
    struct pb_param_lists lists = {0};
    size_t n_idx = 0;
    while (strcmp(f->gemm->params[n_idx].name, "n") != 0)
        n_idx++;
    int64_t *values;
    size_t count;
    assert_int_equal(pb__parse_int_list(n_list, "--n", &values, &count), PB_OK);
    lists.values[n_idx] = values;
    lists.count[n_idx] = count;
    size_t got = 0;
    pb_status st = f->gemm->plan(&lists, prec, f->problems + f->n_problems,
                                 MAX_PROBLEMS - f->n_problems, &got);
    if (st != PB_OK)
        print_message("plan(%s): %s\n", n_list, pb_last_error());
    assert_int_equal(st, PB_OK);
    assert_int_equal(got, count);
    f->n_problems += got;
    free(values);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || !(f->gemm = pb__bench_find("gemm")))
        return -1;
    char *argv[] = {"test_runner"};
    pb__context_init(&f->ctx, 1, argv);
    f->ctx.reps = 2;
    f->ctx.warmup = 1;
    pb_test_tmpfile(f->path, sizeof f->path, "runner");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    unlink(f->path);
    free(f);
    return 0;
}

/* A configuration over f->problems: every backend and variant, 2 reps after 1
 * warm-up, verified. Writers are added by run(). */
static struct pb_run_config config(const struct fixture *f)
{
    return (struct pb_run_config){.bench = f->gemm, .problems = f->problems,
                                  .n_problems = f->n_problems, .reps = 2, .warmup = 1,
                                  .seed = 42, .verify = true, .ctx = &f->ctx};
}

/* Runs cfg with one CSV writer on f->path; returns the rows read back. */
static struct csv *run(struct fixture *f, struct pb_run_config *cfg, struct pb_run_summary *sum)
{
    struct pb_writer *w = NULL;
    assert_int_equal(pb__writer_open("csv", f->path, false, &w), PB_OK);
    assert_int_equal(pb__writer_begin(w, &f->ctx, f->gemm), PB_OK);
    cfg->writers = &w;
    cfg->n_writers = 1;
    assert_int_equal(pb__run_validate(cfg), PB_OK);
    pb_status st = pb__run(cfg, sum);
    assert_int_equal(pb__writer_close(w), PB_OK);
    assert_int_equal(st, PB_OK);
    assert_false(sum->interrupted);
    struct csv *csv = csv_read(f->path);
    size_t rows = sum->ok + sum->failed + sum->skipped + sum->unsupported + sum->errors;
    assert_int_equal(csv->n_records, 1 + rows); /* one row per counted job */
    for (size_t r = 1; r < csv->n_records; r++)
        assert_int_equal(csv->n_fields[r], csv->n_fields[0]);
    return csv;
}

/* Rows whose column has the given value. */
static size_t count_rows(const struct csv *csv, const char *column, const char *value)
{
    size_t n = 0;
    for (size_t r = 1; r < csv->n_records; r++)
        n += strcmp(csv_get(csv, r, column), value) == 0;
    return n;
}

/* Jobs per problem: gemm variants over every compiled-in backend (only the
 * named backend/variant when given; only available backends when asked),
 * twice for threaded backends when two thread counts are swept. */
static size_t count_jobs(const char *only_backend, const char *only_variant, bool threaded_twice,
                         bool available_only)
{
    size_t n = 0;
    for (size_t i = 0; i < pb_backend_count(); i++) {
        const pb_backend *b = pb_backend_at(i);
        if ((only_backend && strcmp(pb_backend_name(b), only_backend) != 0) ||
            (available_only && !pb_backend_available(b, NULL)))
            continue;
        struct pb_variant_desc v[32];
        size_t nv = pb_kernel_variants(b, "gemm", v, PB_ARRAY_LEN(v));
        size_t per_variant = 1;
        pb_device *dev;
        if (threaded_twice && pb_device_open(b, 0, &dev) == PB_OK) {
            pb_device_set_threads(dev, 3);
            per_variant = pb_device_threads(dev) == 3 ? 2 : 1;
            pb_device_close(dev);
        }
        for (size_t j = 0; j < nv; j++)
            n += (!only_variant || strcmp(v[j].name, only_variant) == 0) * per_variant;
    }
    return n;
}

/* ---- tests -------------------------------------------------------------- */

static void test_all_variants_ok(void **state)
{
    struct fixture *f = *state;
    plan(f, "17,64", PB_DOUBLE);
    plan(f, "17,64", PB_FLOAT);
    struct pb_run_config cfg = config(f);
    struct pb_run_summary sum;
    struct csv *csv = run(f, &cfg, &sum);
    size_t jobs = count_jobs(NULL, NULL, false, false);
    size_t runnable = count_jobs(NULL, NULL, false, true);
    assert_int_equal(csv->n_records - 1, jobs * f->n_problems);
    assert_int_equal(sum.failed, 0);
    assert_int_equal(sum.errors, 0);
    /* A variant may decline a problem it does not handle (a double-only
     * kernel), saying why; every other runnable job is OK. */
    assert_int_equal(sum.ok + sum.unsupported, runnable * f->n_problems);
    assert_true(sum.ok > 0);
    for (size_t r = 1; r < csv->n_records; r++)
        if (strcmp(csv_get(csv, r, "status"), "UNSUPPORTED") == 0)
            assert_true(csv_get(csv, r, "reason")[0] != '\0');
    assert_int_equal(sum.skipped, (jobs - runnable) * f->n_problems);
    assert_int_equal(count_rows(csv, "status", "OK"), sum.ok);
    assert_int_equal(count_rows(csv, "check", "full"), sum.ok);
    assert_int_equal(count_rows(csv, "reps", "2"), sum.ok);
    assert_int_equal(count_rows(csv, "problem", "17x17x17"), 2 * jobs);
    assert_int_equal(count_rows(csv, "precision", "float"), 2 * jobs);
    /* The speed-up baseline (ref/ikj) is the first row of each problem. */
    for (size_t p = 0; p < f->n_problems; p++) {
        size_t first = 1 + p * jobs;
        assert_string_equal(csv_get(csv, first, "backend"), "ref");
        assert_string_equal(csv_get(csv, first, "variant"), "ikj");
        assert_string_equal(csv_get(csv, first, "speedup"), "1");
    }
    csv_free(csv);
}

/* A corrupted output element fails verification for every job: no OK rows,
 * and a FAILED row reports no speed. */
static void test_inject_fault(void **state)
{
    struct fixture *f = *state;
    plan(f, "17,64", PB_DOUBLE);
    plan(f, "17", PB_FLOAT);
    struct pb_run_config cfg = config(f);
    cfg.inject_fault = true;
    struct pb_run_summary sum;
    struct csv *csv = run(f, &cfg, &sum);
    assert_int_equal(sum.ok, 0);
    assert_int_equal(sum.errors, 0);
    assert_int_equal(sum.failed + sum.unsupported, count_jobs(NULL, NULL, false, true) * f->n_problems);
    assert_true(sum.failed > 0);
    assert_int_equal(count_rows(csv, "status", "FAILED"), sum.failed);
    assert_int_equal(count_rows(csv, "gflops", ""), csv->n_records - 1);
    for (size_t r = 1; r < csv->n_records; r++)
        if (strcmp(csv_get(csv, r, "status"), "FAILED") == 0)
            assert_true(csv_get(csv, r, "reason")[0] != '\0');
    csv_free(csv);
}

/* Variant names, "backend/variant" names, backend names and thread counts
 * select jobs. */
static void test_selection(void **state)
{
    struct fixture *f = *state;
    plan(f, "17,33", PB_DOUBLE);
    static const char *const ref_ikj[] = {"ref/ikj"}, *const ikj[] = {"ikj"},
                             *const ref[] = {"ref"};
    static const int threads[] = {1, 2};
    struct pb_run_summary sum;

    struct pb_run_config cfg = config(f);
    cfg.variants = ref_ikj, cfg.n_variants = 1;
    struct csv *csv = run(f, &cfg, &sum);
    assert_int_equal(sum.ok, f->n_problems); /* exactly one job per problem */
    assert_int_equal(count_rows(csv, "variant", "ikj"), f->n_problems);
    assert_int_equal(count_rows(csv, "backend", "ref"), f->n_problems);
    csv_free(csv);

    cfg = config(f);
    cfg.variants = ikj, cfg.n_variants = 1; /* ikj of every backend that has one */
    csv = run(f, &cfg, &sum);
    assert_int_equal(csv->n_records - 1, count_jobs(NULL, "ikj", false, false) * f->n_problems);
    assert_int_equal(count_rows(csv, "variant", "ikj"), csv->n_records - 1);
    csv_free(csv);

    cfg = config(f);
    cfg.backends = ref, cfg.n_backends = 1;
    csv = run(f, &cfg, &sum);
    assert_int_equal(csv->n_records - 1, count_jobs("ref", NULL, false, false) * f->n_problems);
    assert_int_equal(count_rows(csv, "backend", "ref"), csv->n_records - 1);
    csv_free(csv);

    /* Thread counts multiply the jobs of threaded backends only. */
    cfg = config(f);
    cfg.threads = threads, cfg.n_threads = 2;
    csv = run(f, &cfg, &sum);
    assert_int_equal(csv->n_records - 1, count_jobs(NULL, NULL, true, false) * f->n_problems);
    assert_int_equal(count_rows(csv, "backend", "ref"),
                     count_jobs("ref", NULL, false, false) * f->n_problems);
    for (size_t r = 1; r < csv->n_records; r++)
        if (pb_backend_find(csv_get(csv, r, "backend"))->threaded &&
            strcmp(csv_get(csv, r, "status"), "OK") == 0)
            assert_in_range(atoi(csv_get(csv, r, "threads")), 1, 2);
    csv_free(csv);
}

static void test_validate(void **state)
{
    struct fixture *f = *state;
    plan(f, "17", PB_DOUBLE);
    static const char *const bad_variant[] = {"ikj", "nope"}, *const bad_full[] = {"ref/blocked"},
                             *const bad_backend[] = {"ref", "nope"};
    struct pb_run_config cfg = config(f);
    assert_int_equal(pb__run_validate(&cfg), PB_OK);

    cfg.variants = bad_variant, cfg.n_variants = 2;
    pb__clear_error();
    assert_int_equal(pb__run_validate(&cfg), PB_ERR_NOT_FOUND);
    assert_contains(pb_last_error(), "nope");
    assert_contains(pb_last_error(), "ref/ikj"); /* lists what exists */

    cfg.variants = bad_full, cfg.n_variants = 1; /* blocked is not a ref variant */
    assert_int_equal(pb__run_validate(&cfg), PB_ERR_NOT_FOUND);

    cfg = config(f);
    cfg.backends = bad_backend, cfg.n_backends = 2;
    pb__clear_error();
    assert_int_equal(pb__run_validate(&cfg), PB_ERR_NOT_FOUND);
    assert_contains(pb_last_error(), "nope");
}

/* verify off: rows are OK with check "none" and no error measures. */
static void test_no_verify(void **state)
{
    struct fixture *f = *state;
    plan(f, "17", PB_DOUBLE);
    static const char *const ref_ikj[] = {"ref/ikj"};
    struct pb_run_config cfg = config(f);
    cfg.variants = ref_ikj, cfg.n_variants = 1;
    cfg.verify = false;
    cfg.inject_fault = true; /* ignored without verification */
    struct pb_run_summary sum;
    struct csv *csv = run(f, &cfg, &sum);
    assert_int_equal(sum.ok, 1);
    assert_string_equal(csv_get(csv, 1, "check"), "none");
    assert_string_equal(csv_get(csv, 1, "err_max"), "");
    csv_free(csv);
}

/* A problem whose inputs cannot be allocated gives ERROR rows naming the
 * memory problem, and the run goes on to the next problem. */
static void test_too_large(void **state)
{
    struct fixture *f = *state;
    plan(f, "2000000,17", PB_DOUBLE);
    struct pb_run_config cfg = config(f);
    struct pb_run_summary sum;
    struct csv *csv = run(f, &cfg, &sum);
    size_t jobs = count_jobs(NULL, NULL, false, false);
    size_t runnable = count_jobs(NULL, NULL, false, true);
    assert_int_equal(sum.errors, runnable);
    /* a variant without double (the tensor-core ones) declines the small one */
    assert_int_equal(sum.ok + sum.unsupported, runnable);
    assert_int_equal(sum.failed, 0);
    for (size_t r = 1; r <= jobs; r++) {
        assert_string_equal(csv_get(csv, r, "problem"), "2000000x2000000x2000000");
        if (strcmp(csv_get(csv, r, "status"), "SKIP") == 0)
            continue;
        assert_string_equal(csv_get(csv, r, "status"), "ERROR");
        assert_contains(csv_get(csv, r, "reason"), "available"); /* the memory check's message */
        assert_string_equal(csv_get(csv, r, "gflops"), "");
    }
    for (size_t r = jobs + 1; r < csv->n_records; r++)
        assert_string_not_equal(csv_get(csv, r, "status"), "ERROR");
    csv_free(csv);
}

/* A problem in a type its benchmark does not take never reaches it: conv
 * would read bf16 as float. */
static void test_precision_refused(void **state)
{
    struct fixture *f = *state;
    struct pb_problem p = {.prec = PB_BF16, .v = {64, 64, 3}};
    struct pb_run_config cfg = config(f);
    cfg.bench = pb__bench_find("conv");
    cfg.problems = &p;
    cfg.n_problems = 1;
    struct pb_run_summary sum;
    pb__clear_error();
    assert_int_equal(pb__run(&cfg, &sum), PB_ERR_INVALID);
    assert_string_equal(pb_last_error(), "conv has no precision bf16: float or double");
    assert_int_equal(sum.ok + sum.failed + sum.unsupported + sum.errors, 0);
    assert_int_equal(pb__bench_takes(f->gemm, PB_BF16), PB_OK);
    assert_int_equal(pb__bench_takes(f->gemm, (enum pb_precision)9), PB_ERR_INVALID);
}

/* The compute / communication split of distributed rows: noise leaves none
 * exposed, products alone far slower than the whole leave no split. */
static void test_exposed_comm(void **state)
{
    (void)state;
    assert_true(fabs(pb__exposed_comm(1.0, 0.25) - 0.75) < 1e-15);
    assert_true(pb__exposed_comm(1.0, 1.05) == 0);
    assert_true(isnan(pb__exposed_comm(6.9e-6, 8.3e-6)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exposed_comm),
        cmocka_unit_test_setup_teardown(test_all_variants_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_precision_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inject_fault, setup, teardown),
        cmocka_unit_test_setup_teardown(test_selection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_verify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_large, setup, teardown),
    };
    return pb_test_run(tests, NULL, NULL);
}

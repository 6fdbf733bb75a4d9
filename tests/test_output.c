/* Result writers: CSV (parsed back with an RFC 4180 splitter written here),
 * JSON (parsed back with cJSON), --append, I/O errors, format names; the
 * ceiling each benchmark's rows are held against (the fraction of ceiling). */
#include <cjson/cJSON.h>

#include "test_util.h"

#include "bench/bench.h"
#include "core/core.h"
#include "output/result.h"

#define REPS 3
#define NASTY_REASON "error 1.5 exceeds tolerance 1e-12, \"planted\" element"

/* ---- fixture: a context and three rows (OK, FAILED, SKIP) --------------- */

struct fixture {
    const struct pb_bench *gemm;
    struct pb_context ctx;
    double samples[REPS], scratch[REPS];
    struct pb_result rows[3];
    char path[512];
};

enum { ROW_OK, ROW_FAILED, ROW_SKIP };

static struct pb_result make_row(const struct fixture *f, const char *backend, const char *variant,
                                 enum pb_result_status status, const char *reason)
{
    struct pb_result r = {.bench = f->gemm, .problem = {PB_DOUBLE, {48, 64, 80}},
                          .backend = backend, .variant = variant, .threads = 2, .ranks = 1,
                          .status = status, .gflops = NAN, .gbps = NAN, .speedup = NAN,
                          .rank_rate_min = NAN, .rank_rate_median = NAN, .rank_rate_max = NAN,
                          .energy_j = NAN, .power_w = NAN, .gflops_per_w = NAN, .gbps_per_w = NAN,
                          .sm_mhz = NAN, .mem_mhz = NAN};
    f->gemm->describe(&r.problem, r.label, sizeof r.label);
    snprintf(r.device, sizeof r.device, "Test \"Turbo\" CPU"); /* a quote, no comma */
    snprintf(r.reason, sizeof r.reason, "%s", reason);
    return r;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || !(f->gemm = pb__bench_find("gemm")))
        return -1;
    char *argv[] = {"parbench", "run", "gemm", "--n", "64"};
    pb__context_init(&f->ctx, 5, argv);
    f->ctx.reps = REPS;
    f->ctx.warmup = 1;
    f->ctx.seed = 42;

    const double samples[REPS] = {0.012, 0.010, 0.011};
    memcpy(f->samples, samples, sizeof samples);
    struct pb_result *ok = &f->rows[ROW_OK];
    *ok = make_row(f, "openmp", "blocked", PB_RESULT_OK, "");
    pb__stats_compute(f->samples, REPS, f->scratch, &ok->stats);
    ok->samples = f->samples;
    ok->gflops = f->gemm->flops(&ok->problem, NULL, NULL) / ok->stats.median * 1e-9;
    ok->gbps = 1.25;
    /* The aggregate of four ranks. */
    ok->ranks = 4, ok->rank = PB_RANK_ALL;
    ok->rank_rate_min = 1.5, ok->rank_rate_median = 2.5, ok->rank_rate_max = 3.5;
    pb__check_begin(&ok->check, 1e-12, "full");
    ok->check.err_norm = 1e-16, ok->check.err_max = 2e-16, ok->check.pass = true;

    struct pb_result *bad = &f->rows[ROW_FAILED];
    *bad = make_row(f, "ref", "ijk", PB_RESULT_FAILED, NASTY_REASON);
    pb__check_begin(&bad->check, 1e-12, "full");
    bad->check.err_norm = 0.01, bad->check.err_max = 1.5, bad->check.pass = false;
    /* Measured but wrong: writers must not report its speed. */
    pb__stats_compute(f->samples, REPS, f->scratch, &bad->stats);
    bad->samples = f->samples;
    bad->gflops = 99.0, bad->gbps = 9.0, bad->speedup = 2.0;

    f->rows[ROW_SKIP] = make_row(f, "cuda", "cublas", PB_RESULT_SKIP, "no CUDA driver");
    pb_test_tmpfile(f->path, sizeof f->path, "output");
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

/* Opens a writer on f->path, writes the first n_rows rows, closes it. */
static pb_status write_rows(struct fixture *f, const char *format, bool append, size_t n_rows)
{
    struct pb_writer *w = NULL;
    pb_status st = pb__writer_open(format, f->path, append, &w);
    if (st != PB_OK)
        return st;
    st = pb__writer_begin(w, &f->ctx, f->gemm);
    for (size_t i = 0; i < n_rows && st == PB_OK; i++)
        st = pb__writer_row(w, &f->rows[i]);
    pb_status closed = pb__writer_close(w);
    return st != PB_OK ? st : closed;
}

/* The splitter itself, on a hand-written file. */
static void test_csv_splitter(void **state)
{
    (void)state;
    struct csv *csv = csv_parse("a,\"b,c\",\"say \"\"hi\"\"\",\n1,,\"x\ny\",3\n");
    assert_int_equal(csv->n_records, 2);
    assert_int_equal(csv->n_fields[0], 4);
    assert_int_equal(csv->n_fields[1], 4);
    assert_string_equal(csv->field[0][1], "b,c");
    assert_string_equal(csv->field[0][2], "say \"hi\"");
    assert_string_equal(csv->field[0][3], "");
    assert_string_equal(csv->field[1][1], "");
    assert_string_equal(csv->field[1][2], "x\ny");
    csv_free(csv);
}

/* ---- CSV ---------------------------------------------------------------- */

static void test_csv(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(write_rows(f, "csv", false, 3), PB_OK);
    struct csv *csv = csv_read(f->path);
    assert_int_equal(csv->n_records, 4); /* header + 3 rows */
    for (size_t r = 1; r < csv->n_records; r++)
        assert_int_equal(csv->n_fields[r], csv->n_fields[0]);

    /* The bench's parameters are columns, in definition order, after "threads", "ranks", "rank". */
    size_t threads = csv_col(csv, "threads");
    assert_int_equal(csv_col(csv, "rank"), threads + 2);
    for (size_t i = 0; i < f->gemm->n_params; i++)
        assert_string_equal(csv->field[0][threads + 3 + i], f->gemm->params[i].name);
    assert_int_equal(csv_col(csv, "n"), csv_col(csv, "m") + 1);

    const size_t ok = 1 + ROW_OK, bad = 1 + ROW_FAILED, skip = 1 + ROW_SKIP;
    assert_string_equal(csv_get(csv, ok, "status"), "OK");
    assert_string_equal(csv_get(csv, ok, "m"), "48");
    assert_string_equal(csv_get(csv, ok, "n"), "64");
    assert_string_equal(csv_get(csv, ok, "k"), "80");
    assert_string_equal(csv_get(csv, ok, "backend"), "openmp");
    assert_string_equal(csv_get(csv, ok, "precision"), "double");
    assert_string_equal(csv_get(csv, ok, "reps"), "3");
    assert_string_equal(csv_get(csv, ok, "version"), pb_version());
    assert_near(atof(csv_get(csv, ok, "median_s")), 0.011, 1e-12);
    assert_near(atof(csv_get(csv, ok, "gflops")), f->rows[ROW_OK].gflops, 1e-6);
    assert_string_equal(csv_get(csv, ok, "speedup"), ""); /* NaN: empty */
    assert_string_equal(csv_get(csv, ok, "check"), "full");
    assert_string_equal(csv_get(csv, ok, "device"), "Test \"Turbo\" CPU");
    assert_string_equal(csv_get(csv, ok, "ranks"), "4");
    assert_string_equal(csv_get(csv, ok, "rank"), "all");
    assert_near(atof(csv_get(csv, ok, "rank_rate_median")), 2.5, 0);
    assert_near(atof(csv_get(csv, ok, "rank_rate_max")), 3.5, 0);
    assert_string_equal(csv_get(csv, skip, "ranks"), "1");
    assert_string_equal(csv_get(csv, skip, "rank"), "0");
    assert_string_equal(csv_get(csv, skip, "rank_rate_min"), "");

    assert_string_equal(csv_get(csv, bad, "status"), "FAILED");
    assert_string_equal(csv_get(csv, bad, "reason"), NASTY_REASON); /* quoting round trip */
    assert_string_equal(csv_get(csv, bad, "gflops"), "");
    assert_string_equal(csv_get(csv, bad, "gbps"), "");
    assert_string_equal(csv_get(csv, bad, "speedup"), "");
    assert_string_equal(csv_get(csv, bad, "median_s"), "");
    assert_near(atof(csv_get(csv, bad, "err_max")), 1.5, 1e-12);

    assert_string_equal(csv_get(csv, skip, "status"), "SKIP");
    assert_string_equal(csv_get(csv, skip, "reason"), "no CUDA driver");
    assert_string_equal(csv_get(csv, skip, "err_norm"), "");
    csv_free(csv);
}

/* --append adds rows under the existing header; a file with other columns is
 * refused and left as it was; a missing or empty file gets a header. */
static void test_csv_append(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(write_rows(f, "csv", false, 3), PB_OK);
    assert_int_equal(write_rows(f, "csv", true, 2), PB_OK);
    struct csv *csv = csv_read(f->path);
    assert_int_equal(csv->n_records, 6); /* one header + 3 + 2 */
    for (size_t r = 1; r < csv->n_records; r++) {
        assert_int_equal(csv->n_fields[r], csv->n_fields[0]);
        assert_string_not_equal(csv->field[r][0], "date");
    }
    assert_string_equal(csv_get(csv, 4, "status"), "OK");
    assert_string_equal(csv_get(csv, 5, "status"), "FAILED");
    csv_free(csv);

    const char *other = "a,b,c\n1,2,3\n";
    FILE *fp = fopen(f->path, "w");
    assert_non_null(fp);
    fputs(other, fp);
    fclose(fp);
    pb__clear_error();
    assert_int_equal(write_rows(f, "csv", true, 1), PB_ERR_INVALID);
    assert_true(pb_last_error()[0] != '\0');
    char *text = pb_test_slurp(f->path);
    assert_non_null(text);
    assert_string_equal(text, other);
    free(text);

    unlink(f->path);
    assert_int_equal(write_rows(f, "csv", true, 1), PB_OK);
    csv = csv_read(f->path);
    assert_int_equal(csv->n_records, 2);
    assert_string_equal(csv->field[0][0], "date");
    csv_free(csv);
}

/* ---- JSON --------------------------------------------------------------- */

static cJSON *json_read(const char *path)
{
    char *text = pb_test_slurp(path);
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text);
    if (!doc)
        print_message("not valid JSON:\n%s\n", text);
    free(text);
    assert_non_null(doc);
    return doc;
}

static cJSON *get(const cJSON *o, const char *key)
{
    cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!item)
        print_message("no key '%s'\n", key);
    assert_non_null(item);
    return item;
}

static const char *get_str(const cJSON *o, const char *key)
{
    cJSON *item = get(o, key);
    assert_true(cJSON_IsString(item));
    return item->valuestring;
}

static void test_json(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(write_rows(f, "json", false, 3), PB_OK);
    cJSON *doc = json_read(f->path);
    cJSON *ctx = get(doc, "context");
    assert_string_equal(get_str(ctx, "parbench_version"), pb_version());
    assert_string_equal(get_str(ctx, "command"), "parbench run gemm --n 64");
    assert_near(get(ctx, "reps")->valuedouble, REPS, 0);
    assert_string_equal(get_str(get(doc, "bench"), "name"), "gemm");
    cJSON *results = get(doc, "results");
    assert_true(cJSON_IsArray(results));
    assert_int_equal(cJSON_GetArraySize(results), 3);

    cJSON *ok = cJSON_GetArrayItem(results, ROW_OK);
    assert_string_equal(get_str(ok, "status"), "OK");
    assert_string_equal(get_str(ok, "device"), "Test \"Turbo\" CPU");
    assert_near(get(get(ok, "params"), "k")->valuedouble, 80, 0);
    assert_string_equal(get_str(ok, "rank"), "all");
    assert_near(get(ok, "ranks")->valuedouble, 4, 0);
    assert_near(get(get(ok, "rank_rates"), "min")->valuedouble, 1.5, 0);
    assert_near(get(ctx, "ranks")->valuedouble, 1, 0);
    cJSON *samples = get(get(ok, "time_s"), "samples");
    assert_int_equal(cJSON_GetArraySize(samples), REPS);
    for (int i = 0; i < REPS; i++)
        assert_near(cJSON_GetArrayItem(samples, i)->valuedouble, f->samples[i], 1e-15);
    assert_near(get(get(ok, "time_s"), "median")->valuedouble, 0.011, 1e-15);
    assert_near(get(ok, "gflops")->valuedouble, f->rows[ROW_OK].gflops, 1e-9);
    assert_true(cJSON_IsNull(get(ok, "speedup"))); /* NaN becomes null */
    assert_true(cJSON_IsTrue(get(get(ok, "verification"), "pass")));

    cJSON *bad = cJSON_GetArrayItem(results, ROW_FAILED);
    assert_string_equal(get_str(bad, "status"), "FAILED");
    assert_string_equal(get_str(bad, "reason"), NASTY_REASON);
    assert_null(cJSON_GetObjectItemCaseSensitive(bad, "gflops"));
    assert_null(cJSON_GetObjectItemCaseSensitive(bad, "speedup"));
    assert_null(cJSON_GetObjectItemCaseSensitive(bad, "time_s"));
    assert_true(cJSON_IsFalse(get(get(bad, "verification"), "pass")));

    cJSON *skip = cJSON_GetArrayItem(results, ROW_SKIP);
    assert_string_equal(get_str(skip, "status"), "SKIP");
    assert_null(cJSON_GetObjectItemCaseSensitive(skip, "verification"));
    cJSON_Delete(doc);
}

/* The file is a complete document after begin and after every row, before
 * the writer is closed (an interrupted run keeps valid JSON). */
static void test_json_complete_after_each_row(void **state)
{
    struct fixture *f = *state;
    struct pb_writer *w = NULL;
    assert_int_equal(pb__writer_open("json", f->path, false, &w), PB_OK);
    assert_int_equal(pb__writer_begin(w, &f->ctx, f->gemm), PB_OK);
    for (int rows = 0; rows <= 2; rows++) {
        if (rows > 0)
            assert_int_equal(pb__writer_row(w, &f->rows[rows - 1]), PB_OK);
        cJSON *doc = json_read(f->path);
        assert_int_equal(cJSON_GetArraySize(get(doc, "results")), rows);
        cJSON_Delete(doc);
    }
    assert_int_equal(pb__writer_close(w), PB_OK);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", f->path);
    assert_int_equal(access(tmp, F_OK), -1); /* no temporary left behind */
}

/* ---- table, errors, formats --------------------------------------------- */

static void test_table(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(write_rows(f, "table", false, 3), PB_OK);
    char *text = pb_test_slurp(f->path);
    assert_non_null(text);
    assert_contains(text, "blocked@all"); /* the aggregate of several ranks */
    assert_contains(text, "FAILED");
    assert_contains(text, NASTY_REASON);
    assert_contains(text, "SKIP: no CUDA driver");
    free(text);
}

/* Long runs, large matrices, short preparations: the table's numbers stay
 * plain (a median of 61234 ms, not 6.123e+04; rows=123456, not 1.235e+05;
 * prep_s=0.00002716, not 2.716e-05). */
static void test_table_large_numbers(void **state)
{
    struct fixture *f = *state;
    const struct pb_bench *spmv = pb__bench_find("spmv");
    assert_non_null(spmv);
    assert_true(spmv->n_extras >= 3);
    f->gemm = spmv;
    struct pb_result *ok = &f->rows[ROW_OK];
    ok->bench = spmv;
    ok->ranks = 1, ok->rank = 0;
    for (size_t i = 0; i < REPS; i++)
        f->samples[i] = 61.2345 + 0.001 * (double)i;
    pb__stats_compute(f->samples, REPS, f->scratch, &ok->stats);
    for (size_t i = 0; i < PB_MAX_EXTRAS; i++)
        ok->extras[i] = NAN;
    ok->extras[0] = 123456;  /* rows */
    ok->extras[1] = 1234567; /* nnz */
    ok->extras[2] = 0.5;
    ok->extras[3] = 2.716e-05; /* prep_s */
    ok->power_w = 12345.6;
    assert_int_equal(write_rows(f, "table", false, 1), PB_OK);
    char *text = pb_test_slurp(f->path);
    assert_non_null(text);
    assert_contains(text, " 61235 ");
    assert_contains(text, "=123456 ");
    assert_contains(text, "=1234567 ");
    assert_contains(text, "=0.5 ");
    assert_contains(text, "prep_s=0.00002716\n");
    assert_contains(text, "12346 W");
    assert_null(strstr(text, "e+0"));
    assert_null(strstr(text, "e-05"));
    free(text);
}

static void test_unwritable_path(void **state)
{
    struct fixture *f = *state;
    static const char *const formats[] = {"csv", "json", "table"};
    char dir[600];
    snprintf(dir, sizeof dir, "%s.missing-dir/out.csv", f->path);
    for (size_t i = 0; i < PB_ARRAY_LEN(formats); i++) {
        struct pb_writer *w = (struct pb_writer *)&w;
        pb__clear_error();
        assert_int_equal(pb__writer_open(formats[i], dir, false, &w), PB_ERR_IO);
        assert_null(w);
        assert_contains(pb_last_error(), "missing-dir");
    }
    struct pb_writer *w = NULL;
    assert_int_equal(pb__writer_open("csv", dir, true, &w), PB_ERR_IO);
}

static void test_formats(void **state)
{
    (void)state;
    static const struct {
        const char *path, *format;
    } cases[] = {
        {"out.csv", "csv"},         {"/tmp/a.b/out.json", "json"}, {"results.txt", "table"},
        {"out.dat", NULL},          {"noext", NULL},               {"dir.d/file", NULL},
        {"out.csv.bak", NULL},      {".csv", "csv"},
    };
    for (size_t i = 0; i < PB_ARRAY_LEN(cases); i++) {
        const char *got = pb__format_from_path(cases[i].path);
        if (!cases[i].format) {
            assert_null(got);
        } else {
            assert_non_null(got);
            assert_string_equal(got, cases[i].format);
        }
    }
    assert_true(pb__format_valid("csv") && pb__format_valid("json") && pb__format_valid("table"));
    assert_false(pb__format_valid("xml"));
    struct pb_writer *w = (struct pb_writer *)&w;
    assert_int_equal(pb__writer_open("xml", NULL, false, &w), PB_ERR_INVALID);
    assert_null(w);
    assert_int_equal(pb__writer_open("json", NULL, true, &w), PB_ERR_INVALID); /* CSV only */
    assert_int_equal(pb__writer_close(NULL), PB_OK);
    assert_string_equal(pb__result_status_name(PB_RESULT_FAILED), "FAILED");
    assert_string_equal(pb__result_status_name(PB_RESULT_UNSUPPORTED), "UNSUPPORTED");
}

/* ---- roofs: which ceiling a row's fraction divides by -------------------- */

/* An H100's ceilings, as parbench ceilings measures them. */
static const struct pb_ceiling h100 = {.backend = "cuda", .device = "NVIDIA H100 80GB HBM3", .copy_gbps = 2978,
                                       .read_gbps = 3000, .h2d_gbps = 52.6, .d2h_gbps = 48, .fp32_gflops = 60000,
                                       .fp64_gflops = 30000};

static double fraction(const char *bench, const char *variant, const char *backend, const char *device, bool dbl,
                       double gflops, double gbps)
{
    const struct pb_bench *b = pb__bench_find(bench);
    assert_non_null(b);
    return pb__ceiling_fraction(&h100, pb__bench_roof(b, variant, backend, device, dbl ? PB_DOUBLE : PB_FLOAT), dbl,
                                gflops, gbps);
}

static void assert_fraction(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * want))
        print_message("fraction %.6g, want %.6g\n", got, want);
    assert_true(fabs(got - want) <= 1e-9 * want);
}

static void test_roofs(void **state)
{
    (void)state;
    const char *gpu = h100.device;
    /* Transfers against the link of their direction, never device memory. */
    assert_fraction(fraction("bandwidth", "h2d-pinned", "cuda", gpu, false, NAN, 52.6), 1.0);
    assert_fraction(fraction("bandwidth", "h2d-pageable-async", "cuda", gpu, false, NAN, 26.3), 0.5);
    assert_fraction(fraction("bandwidth", "d2h-pinned", "cuda", gpu, false, NAN, 24), 0.5);
    assert_fraction(fraction("bandwidth", "bidir-pinned", "cuda", gpu, false, NAN, 100.6), 1.0);
    assert_fraction(fraction("bandwidth", "d2d", "cuda", gpu, false, NAN, 1500), 0.5);
    /* Shared memory: no ceiling, no fraction (it was 808% of device memory). */
    assert_true(isnan(fraction("access", "shared-stride", "cuda", gpu, false, NAN, 24900)));
    assert_fraction(fraction("access", "global-stride", "cuda", gpu, false, NAN, 750), 0.25);
    /* Memory-bound kernels against memory, whatever their GFLOP/s. */
    assert_fraction(fraction("spmv", "csr-vector", "cuda", gpu, true, 250, 1500), 0.5);
    assert_fraction(fraction("transpose", "padded", "cuda", gpu, false, NAN, 2700), 0.9);
    assert_fraction(fraction("reduce", "cub", "cuda", gpu, false, NAN, 3000), 1.0);
    assert_fraction(fraction("peak", "read", "openmp", "AMD EPYC", false, NAN, 1500), 0.5);
    assert_fraction(fraction("peak", "fma", "cuda", gpu, true, 15000, 1), 0.5);
    /* The image of conv-stream goes through the link both ways, not device memory. */
    assert_fraction(fraction("conv-stream", "streams", "cuda", gpu, false, 1, 50.3), 0.5);
    /* GEMM against the FMA peak of its precision; FP64 on tensor cores: none. */
    assert_fraction(fraction("gemm", "regblock", "cuda", gpu, true, 15000, 50), 0.5);
    assert_fraction(fraction("gemm", "cublas", "cuda", gpu, false, 30000, 50), 0.5);
    assert_true(isnan(fraction("gemm", "dmma", "cuda", gpu, true, 55000, 50)));
    assert_true(isnan(fraction("gemm", "cublas", "cuda", gpu, true, 55000, 50)));
    assert_true(isnan(fraction("gemm-dist", "summa-vendor", "cuda", gpu, true, 55000, 50)));
    assert_fraction(fraction("gemm-dist", "summa", "cuda", gpu, true, 15000, 50), 0.5);
    assert_fraction(fraction("gemm", "cublas", "cuda", "NVIDIA L40S", true, 15000, 50), 0.5);
    assert_fraction(fraction("gemm", "openblas", "openmp", "AMD EPYC", true, 15000, 50), 0.5);
    /* Nothing measured for peer links and networks. */
    assert_true(isnan(fraction("p2p", "ce", "cuda", gpu, false, NAN, 400)));
    assert_true(isnan(fraction("allreduce", "nccl", "cuda", gpu, false, NAN, 400)));
    /* Without a roof of its own: the plain roofline, the closer bound. */
    assert_fraction(fraction("conv", "tiled", "cuda", gpu, false, 6000, 1500), 0.5);
    /* The tensor-core types: no peak measured for any variant, so no fraction. */
    static const enum pb_precision lowp[] = {PB_TF32, PB_BF16, PB_FP16};
    static const char *const lowp_variants[][2] = {{"tc", "cuda"}, {"cublas", "cuda"}, {"ikj", "ref"}};
    for (size_t p = 0; p < 3; p++)
        for (size_t v = 0; v < 3; v++) {
            struct pb_roof r = pb__bench_roof(pb__bench_find("gemm"), lowp_variants[v][0], lowp_variants[v][1], gpu,
                                              lowp[p]);
            assert_int_equal(r.flops, PB_ROOF_TENSOR);
            assert_true(isnan(pb__ceiling_fraction(&h100, r, false, 1000, 50)));
        }
    struct pb_roof plain = pb__bench_roof(NULL, "x", "cuda", gpu, PB_FLOAT);
    assert_int_equal(plain.flops, PB_ROOF_FMA);
    assert_int_equal(plain.bytes, PB_ROOF_MEMORY);
    /* A ceiling not measured gives no fraction rather than another's. */
    struct pb_ceiling cpu = h100;
    cpu.h2d_gbps = cpu.d2h_gbps = NAN;
    assert_true(isnan(pb__ceiling_fraction(&cpu, (struct pb_roof){PB_ROOF_NONE, PB_ROOF_H2D}, false, NAN, 10)));
    assert_true(isnan(pb__ceiling_fraction(&cpu, (struct pb_roof){PB_ROOF_NONE, PB_ROOF_BIDIR}, false, NAN, 10)));
    assert_true(isnan(pb__ceiling_fraction(NULL, (struct pb_roof){PB_ROOF_FMA, PB_ROOF_MEMORY}, false, 1, 1)));
    /* FP64 tensor-core parts by whole words of the name. */
    assert_true(pb__fp64_tensor_device("NVIDIA A100-SXM4-80GB"));
    assert_true(pb__fp64_tensor_device("NVIDIA GH200 480GB"));
    assert_true(pb__fp64_tensor_device("NVIDIA H200"));
    assert_false(pb__fp64_tensor_device("NVIDIA RTX A3000 Laptop GPU"));
    assert_false(pb__fp64_tensor_device("NVIDIA GeForce RTX 4090"));
    assert_false(pb__fp64_tensor_device(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_splitter),
        cmocka_unit_test_setup_teardown(test_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv_append, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_complete_after_each_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_large_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_path, setup, teardown),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_roofs),
    };
    return pb_test_run(tests, NULL, NULL);
}

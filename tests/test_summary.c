/* The report's summary: our best against the anchor on the same problems,
 * OpenCL and CUDA rows of one GPU meeting, rows re-measured in a newer file
 * counted once, noisy rows, the studies a benchmark belongs to. */
#include <math.h>
#include <stdint.h>

#include "test_util.h"

#include "report/results.h"
#include "report/summary.h"

#define HEAD "date,host,version,commit,bench,backend,variant,anchor,device,precision,threads,n,problem,status," \
             "reps,median_s,cv,gflops,check\n"
#define GPU "NVIDIA H100 80GB HBM3"

/* Two sizes: ours 0.9x and 1.2x the anchor; OpenCL half of CUDA at n=2000;
 * a FAILED row and a noisy one. */
static const char older[] = HEAD
    "2026-11-01T00:00:00Z,h,0.1,c,gemm,cuda,regblock,0,"GPU",float,0,1000,1000,OK,5,1,0.01,900,max\n"
    "2026-11-01T00:00:00Z,h,0.1,c,gemm,cuda,cublas,1,"GPU",float,0,1000,1000,OK,5,1,0.01,1000,max\n"
    "2026-11-01T00:00:00Z,h,0.1,c,gemm,cuda,regblock,0,"GPU",float,0,2000,2000,OK,5,1,0.3,1200,max\n"
    "2026-11-01T00:00:00Z,h,0.1,c,gemm,cuda,cublas,1,"GPU",float,0,2000,2000,OK,5,1,0.01,1000,max\n"
    "2026-11-01T00:00:00Z,h,0.1,c,gemm,cuda,naive,0,"GPU",float,0,2000,2000,FAILED,5,1,0.01,,max\n"
    "2026-11-01T00:00:00Z,h,0.1,c,gemm,opencl,regblock,0,"GPU" (NVIDIA CUDA),float,0,2000,2000,OK,5,2,0.01,"
    "600,max\n";

/* The same anchor row at n=1000 measured again, later: 1200 now. */
static const char newer[] = HEAD
    "2026-11-02T00:00:00Z,h,0.1,c,gemm,cuda,cublas,1,"GPU",float,0,1000,1000,OK,5,1,0.01,1200,max\n";

static void load(struct pb_rp_set *set)
{
    memset(set, 0, sizeof *set);
    assert_int_equal(pb__rp_load_text(set, "older.csv", older), PB_OK);
    assert_int_equal(pb__rp_load_text(set, "newer.csv", newer), PB_OK);
    assert_int_equal(set->n_rows, 7);
}

static void test_superseded(void **state)
{
    (void)state;
    struct pb_rp_set set;
    load(&set);
    size_t *newer_file;
    assert_int_equal(pb__rp_superseded(&set, &newer_file), PB_OK);
    for (size_t i = 0; i < set.n_rows; i++)
        assert_int_equal(newer_file[i], i == 1 ? 1 : SIZE_MAX); /* only the old cuBLAS row at n=1000 */
    free(newer_file);
    pb__rp_free(&set);
}

static void test_lines(void **state)
{
    (void)state;
    struct pb_rp_set set;
    load(&set);
    size_t *superseded;
    struct pb_rp_summary_line *lines;
    size_t n;
    assert_int_equal(pb__rp_superseded(&set, &superseded), PB_OK);
    assert_int_equal(pb__rp_summarize(&set, superseded, &lines, &n), PB_OK);
    assert_int_equal(n, 1); /* CUDA and OpenCL rows of one GPU: one line */
    const struct pb_rp_summary_line *l = &lines[0];
    assert_string_equal(l->bench, "gemm");
    assert_string_equal(l->device, GPU);
    assert_int_equal(l->problems, 2);
    assert_int_equal(l->compared, 2);
    /* The headline is the problem with the most work both ran: n=2000. */
    assert_string_equal(l->ours->problem, "2000");
    assert_string_equal(l->ours->variant, "regblock");
    assert_string_equal(l->ours->backend, "cuda");
    assert_string_equal(l->anchor->variant, "cublas");
    assert_true(fabs(l->ratio - 1.2) < 1e-12);
    /* n=1000 against the newer anchor row: 900 / 1200. */
    assert_true(fabs(l->lo - 0.75) < 1e-12);
    assert_true(fabs(l->hi - 1.2) < 1e-12);
    assert_true(fabs(l->geomean - sqrt(0.75 * 1.2)) < 1e-12);
    assert_int_equal(l->twins, 1);
    assert_true(fabs(l->opencl_over_cuda - 0.5) < 1e-12);
    assert_int_equal(l->failed, 1);
    assert_int_equal(l->noisy, 1);
    assert_int_equal(l->ok, 5); /* the superseded row is not counted */

    struct pb_sbuf b = {0};
    pb__rp_summary_html(&b, &set, lines, n);
    assert_false(b.failed);
    assert_non_null(strstr(b.s, "1.20x"));
    assert_non_null(strstr(b.s, "0.95x (0.75-1.20), 2"));
    assert_non_null(strstr(b.s, "0.50x, 1"));
    assert_non_null(strstr(b.s, "1 failed, 1 noisy"));
    assert_non_null(strstr(b.s, "class=\"pb-data\"")); /* the ratio chart has its bar */
    pb__sb_free(&b);
    free(lines);
    free(superseded);
    pb__rp_free(&set);
}

/* Precisions are strings: bf16 rows meet their own anchor, apart from float's;
 * a precision this build does not know is grouped by its name too and held
 * against float's roof; tensor-core rows have no fraction of ceiling. */
static const char lowp[] = HEAD
    "2026-11-03T00:00:00Z,h,0.1,c,gemm,cuda,tc,0,"GPU",bf16,0,4096,4096,OK,5,1,0.01,170000,max\n"
    "2026-11-03T00:00:00Z,h,0.1,c,gemm,cuda,cublas,1,"GPU",bf16,0,4096,4096,OK,5,1,0.01,590000,max\n"
    "2026-11-03T00:00:00Z,h,0.1,c,gemm,cuda,tc,0,"GPU",fp8,0,4096,4096,OK,5,1,0.01,300000,max\n"
    "2026-11-03T00:00:00Z,h,0.1,c,gemm,cuda,regblock,0,"GPU",float,0,4096,4096,OK,5,1,0.01,47000,max\n";

static void test_precisions(void **state)
{
    (void)state;
    struct pb_rp_set set;
    memset(&set, 0, sizeof set);
    assert_int_equal(pb__rp_load_text(&set, "lowp.csv", lowp), PB_OK);
    assert_int_equal(set.n_rows, 4);
    assert_int_equal(pb__rp_roof(&set.rows[0]).flops, PB_ROOF_TENSOR);
    assert_int_equal(pb__rp_roof(&set.rows[2]).flops, PB_ROOF_FMA); /* unknown: float's */
    size_t *superseded;
    struct pb_rp_summary_line *lines;
    size_t n;
    assert_int_equal(pb__rp_superseded(&set, &superseded), PB_OK);
    assert_int_equal(pb__rp_summarize(&set, superseded, &lines, &n), PB_OK);
    assert_int_equal(n, 3);
    bool seen_bf16 = false;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(lines[i].precision, "bf16") != 0)
            continue;
        seen_bf16 = true;
        assert_string_equal(lines[i].ours->variant, "tc");
        assert_string_equal(lines[i].anchor->variant, "cublas");
        assert_true(fabs(lines[i].ratio - 170000.0 / 590000.0) < 1e-12);
        assert_true(isnan(lines[i].fraction));
    }
    assert_true(seen_bf16);
    free(lines);
    free(superseded);
    pb__rp_free(&set);
}

static void test_noisy(void **state)
{
    (void)state;
    struct pb_rp_row r = {.status = "OK", .cv = PB_RP_NOISY_CV * 1.01};
    assert_true(pb__rp_noisy(&r));
    r.cv = PB_RP_NOISY_CV * 0.99;
    assert_false(pb__rp_noisy(&r));
    r.cv = 1.6;
    r.status = "FAILED"; /* a failed row has no speed to doubt */
    assert_false(pb__rp_noisy(&r));
}

static void test_studies(void **state)
{
    (void)state;
    assert_string_equal(pb__rp_study_of("spmv", 0), "002");
    assert_string_equal(pb__rp_study_of("overlap", 0), "000");
    const char *first = pb__rp_study_of("bandwidth", 0), *second = pb__rp_study_of("bandwidth", 1);
    assert_non_null(first);
    assert_non_null(second); /* transfers are in two studies */
    assert_string_not_equal(first, second);
    assert_null(pb__rp_study_of("allreduce", 0));
}

/* The same problem under two labels (a setting the label names), no anchor,
 * no ceiling: the headline is the faster row, not whichever rate x time
 * rounds larger (1000 GFLOP/s x 1 ms against 500 x 2.000001 ms). */
static void test_same_work(void **state)
{
    (void)state;
    static const char text[] = HEAD
        "2026-11-01T00:00:00Z,h,0.1,c,spmv,cuda,csr,0,"GPU",double,0,1,m halo p2p,OK,5,0.002000001,0.01,500,max\n"
        "2026-11-01T00:00:00Z,h,0.1,c,spmv,cuda,csr,0,"GPU",double,0,1,m,OK,5,0.001,0.01,1000,max\n"
        "2026-11-01T00:00:00Z,h,0.1,c,spmv,cuda,csr,0,"GPU",double,0,1,m halo gather,OK,5,0.0025,0.01,400,max\n";
    struct pb_rp_set set = {0};
    assert_int_equal(pb__rp_load_text(&set, "same.csv", text), PB_OK);
    struct pb_rp_summary_line *lines;
    size_t n;
    assert_int_equal(pb__rp_summarize(&set, NULL, &lines, &n), PB_OK);
    assert_int_equal(n, 1);
    assert_non_null(lines[0].ours);
    assert_string_equal(lines[0].ours->problem, "m");
    free(lines);
    pb__rp_free(&set);
}

static void test_empty(void **state)
{
    (void)state;
    struct pb_rp_set set = {0};
    size_t *superseded;
    struct pb_rp_summary_line *lines;
    size_t n;
    assert_int_equal(pb__rp_superseded(&set, &superseded), PB_OK);
    assert_null(superseded);
    assert_int_equal(pb__rp_summarize(&set, NULL, &lines, &n), PB_OK);
    assert_int_equal(n, 0);
    free(lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_superseded), cmocka_unit_test(test_lines), cmocka_unit_test(test_noisy),
        cmocka_unit_test(test_studies), cmocka_unit_test(test_empty), cmocka_unit_test(test_precisions),
        cmocka_unit_test(test_same_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

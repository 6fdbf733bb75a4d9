/* parbench study's data and matching: the studies' table is complete (every
 * figure names its source, device and a row of one of its experiments), and
 * figures find their rows as study.h says: the best row, the first backend
 * of the list that ran, a ratio on one backend, quick-run parameters, the
 * verdict on the study's conclusion, and why a figure was not measured; the
 * comparison read back as parbench report reads it. */
#include "test_util.h"

#include "report/study.h"

/* ---- the table -------------------------------------------------------------------- */

static bool names_exp(const struct pb_study *st, const char *exp)
{
    for (size_t e = 0; e < st->n_exps; e++)
        if (strcmp(st->exps[e].name, exp) == 0)
            return true;
    return false;
}

static void check_sel(const struct pb_study *st, const struct pb_study_sel *s, bool den)
{
    assert_non_null(s->exp);
    assert_true(names_exp(st, s->exp));
    assert_true(den || (s->backend && s->backend[0]));
    assert_non_null(s->params);
    assert_non_null(s->column);
    assert_true(s->column[0] != '\0');
}

static void test_table(void **state)
{
    (void)state;
    static const char *const ids[] = {"000", "001", "002", "003", "004"};
    assert_int_equal(pb__study_count(), PB_ARRAY_LEN(ids));
    for (size_t i = 0; i < PB_ARRAY_LEN(ids); i++) {
        const struct pb_study *st = pb__study_find(ids[i]);
        assert_non_null(st);
        assert_ptr_equal(st, pb__study_at(i));
        /* the original, by its file name under shared/seeds/ */
        char prefix[32];
        snprintf(prefix, sizeof prefix, "shared/seeds/%s_", ids[i]);
        assert_true(strncmp(st->original, prefix, strlen(prefix)) == 0);
        assert_true(st->title[0] && st->summary[0]);
        assert_true(st->n_exps >= 1 && st->n_figs >= 8);
        for (size_t e = 0; e < st->n_exps; e++) {
            const struct pb_study_exp *x = &st->exps[e];
            assert_true(x->name[0] && x->what[0] && x->full[0] && x->quick[0]);
            assert_true(strchr(x->full, '/') == NULL); /* no paths: the directory is the command's */
            for (size_t f = 0; f < e; f++)
                assert_string_not_equal(x->name, st->exps[f].name);
        }
        for (size_t f = 0; f < st->n_figs; f++) {
            const struct pb_study_fig *g = &st->figs[f];
            assert_true(g->what[0] && g->source[0] && g->device[0] && g->unit[0]);
            assert_true(isnan(g->value) || isfinite(g->value));
            assert_true(g->per == 0 || (isfinite(g->value) && isfinite(g->per)));
            check_sel(st, &g->num, false);
            if (g->den.exp)
                check_sel(st, &g->den, true);
            assert_true(g->claim == 0 || g->claim == '<' || g->claim == '>');
            assert_true((g->claim != 0) == (g->conclusion != NULL));
        }
    }
    assert_null(pb__study_find("005"));
    assert_null(pb__study_at(PB_ARRAY_LEN(ids)));
}

/* ---- matching ---------------------------------------------------------------------- */

static const char results[] =
    "bench,backend,variant,device,precision,threads,n,matrix,problem,status,reason,median_s,gflops,check,kernel_s\n"
    "gemm,cuda,naive,GPU,float,0,100,,p,SKIP,no CUDA device,,,,\n"
    "gemm,opencl,naive,CL,float,0,100,,p,OK,,0.2,5,full,0.1\n"
    "gemm,opencl,naive,CL,float,0,200,,p,OK,,0.5,9,full,0.4\n"
    "gemm,opencl,tiled,CL,float,0,100,,p,OK,,0.15,7,full,0.05\n"
    "gemm,opencl,tiled,CL,float,0,100,,p,OK,,0.1,10,full,0.06\n"
    "gemm,opencl,tiled,CL,float,0,100,,p,FAILED,wrong,,,full,\n"
    "gemm,openmp,naive,CPU,double,2,100,dir/rdist2.mtx,p,OK,,1,1,full,0.5\n"
    "gemm,openmp,naive,CPU,double,4,100,dir/rdist2.mtx,p,OK,,0.5,2,full,0.25\n";

static const struct pb_study_exp exps[] = {
    {"runs", "runs", "gemm", "gemm", NULL},
    {"absent", "not run", "gemm", "gemm", NULL},
};

#define SEL(backend, variant, params, quick, column) {"runs", backend, variant, params, quick, column}
#define NO_SEL {NULL, NULL, NULL, NULL, NULL, NULL}

static const struct pb_study_fig figs[] = {
    /* 0: the best of several rows: the highest rate; FAILED rows do not count */
    {"tiled rate", "T1", "theirs", 5, 0, "GFLOP/s", SEL("opencl", "tiled", "n=100", NULL, "gflops"), NO_SEL, 0, 0,
     NULL, NULL},
    /* 1: the least time, cuda SKIP so opencl; a ratio on opencl; their ratio 4 / 2 */
    {"naive / tiled", "T2", "theirs", 4, 2, "ratio", SEL("cuda,opencl", "naive", "n=100", NULL, "median_s"),
     SEL(NULL, "tiled", "n=100", NULL, "median_s"), '>', 1, "tiles are faster", NULL},
    /* 2: the same held against the opposite conclusion */
    {"naive / tiled, wrongly", "T2", "theirs", NAN, 0, "ratio", SEL("cuda,opencl", "naive", "n=100", NULL, "median_s"),
     SEL(NULL, "tiled", "n=100", NULL, "median_s"), '<', 1, "naive is faster", NULL},
    /* 3: cuda only: SKIP, with its reason */
    {"cuda only", "T3", "theirs", 1, 0, "s", SEL("cuda", "naive", "n=100", NULL, "median_s"), NO_SEL, 0, 0, NULL,
     NULL},
    /* 4: no row with these parameters */
    {"n = 300", "T4", "theirs", 1, 0, "s", SEL("opencl", "naive", "n=300", NULL, "median_s"), NO_SEL, 0, 0, NULL,
     NULL},
    /* 5: quick-run parameters */
    {"quick", "T5", "theirs", 3, 0, "GFLOP/s", SEL("opencl", "naive", "n=300", "n=200", "gflops"), NO_SEL, 0, 0,
     NULL, "a remark"},
    /* 6: an experiment that did not run */
    {"absent", "T6", "theirs", 1, 0, "s", {"absent", "opencl", NULL, "n=100", NULL, "median_s"}, NO_SEL, 0, 0, NULL,
     NULL},
    /* 7: a file parameter by its base name, threads, an extra column, any variant */
    {"extra", "T7", "theirs", 0.5, 0, "s", SEL("openmp", NULL, "matrix=rdist2 threads=4 precision=double", NULL,
                                               "kernel_s"), NO_SEL, 0, 0, NULL, NULL},
    /* 8: a backend this build does not have, and no row of it */
    {"elsewhere", "T8", "theirs", 1, 0, "s", SEL("nosuch", "naive", "n=100", NULL, "median_s"), NO_SEL, 0, 0, NULL,
     NULL},
    /* 9: a conclusion tested at the study's size; a quick run at another gives no verdict */
    {"naive rate", "T9", "theirs", 4, 0, "GFLOP/s", SEL("opencl", "naive", "n=100", "n=200", "gflops"), NO_SEL, '>',
     6, "naive passes 6", NULL},
};

static const struct pb_study fake = {"900", "a study", "shared/seeds/900_x.txt", "summary", NULL, exps,
                                     PB_ARRAY_LEN(exps), figs, PB_ARRAY_LEN(figs)};

static void compare(bool quick, struct pb_study_cmp *c)
{
    struct pb_rp_set set;
    memset(&set, 0, sizeof set);
    assert_int_equal(pb__rp_load_text(&set, "runs.csv", results), PB_OK);
    assert_int_equal(set.n_files, 1);
    const char *file_exp[] = {"runs"};
    const char *missing[] = {NULL, "it wrote no result file"};
    pb__study_compare(&fake, &set, file_exp, missing, quick, c);
    pb__rp_free(&set);
}

static void test_matching(void **state)
{
    (void)state;
    struct pb_study_cmp c[PB_ARRAY_LEN(figs)];
    compare(false, c);

    assert_true(c[0].measured);
    assert_near(c[0].ours, 10, 0);
    assert_near(c[0].ratio, 2, 1e-12);
    assert_string_equal(c[0].backend, "opencl");
    assert_string_equal(c[0].device, "CL");

    assert_true(c[1].measured);
    assert_near(c[1].theirs, 2, 0);
    assert_near(c[1].ours, 0.2 / 0.1, 1e-12); /* least times: 0.2 and 0.1 */
    assert_near(c[1].ratio, 1, 1e-12);
    assert_int_equal(c[1].verdict, 1);
    assert_string_equal(c[1].note, "agrees: tiles are faster");

    assert_true(c[2].measured);
    assert_true(isnan(c[2].ratio)); /* no number of theirs */
    assert_int_equal(c[2].verdict, -1);
    assert_true(strncmp(c[2].note, "contradicts the study, which concludes that naive is faster", 59) == 0);

    assert_false(c[3].measured);
    assert_true(isnan(c[3].ours) && isnan(c[3].ratio));
    assert_string_equal(c[3].note, "not measured here: cuda/naive SKIP: no CUDA device");

    assert_false(c[4].measured);
    assert_string_equal(c[4].note, "not measured here: no runs row with n=300");

    /* the full run has no n = 300; the quick run matches n = 200 and says so */
    assert_false(c[5].measured);
    assert_int_equal(c[9].verdict, -1); /* the full run, n = 100: 5 is not above 6 */
    compare(true, c);
    assert_true(c[5].measured);
    assert_near(c[5].ours, 9, 0);
    assert_string_equal(c[5].note, "quick run: ours at n=200, theirs at n=300; a remark");

    assert_false(c[6].measured);
    assert_string_equal(c[6].note, "not measured here: it wrote no result file");

    assert_true(c[7].measured);
    assert_near(c[7].ours, 0.25, 0);

    assert_false(c[8].measured);
    assert_string_equal(c[8].note, "not measured here: this build has no nosuch backend");

    assert_int_equal(c[9].verdict, 0); /* the quick run, n = 200: 9 > 6, but no verdict */
    assert_string_equal(c[9].note, "no verdict at quick sizes (the full run gives one): here 9; the study "
                                   "concludes that naive passes 6; quick run: ours at n=200, theirs at n=100");
}

/* The CSV: one line per figure, theirs as transcribed, empty where absent. */
static void test_csv(void **state)
{
    (void)state;
    struct pb_study_cmp c[PB_ARRAY_LEN(figs)];
    compare(false, c);
    struct pb_sbuf b = {0};
    pb__study_csv(&b, &fake, c);
    assert_false(b.failed);
    assert_non_null(strstr(b.s, "study,figure,source,their_device,their_value,unit,our_backend,our_device,our_value,"
                                "ratio,measured,verdict,note\n"));
    assert_non_null(strstr(b.s, "900,tiled rate,\"900_x.txt, T1\",theirs,5,GFLOP/s,opencl,CL,10,2,yes,,\n"));
    assert_non_null(strstr(b.s, "900,cuda only,\"900_x.txt, T3\",theirs,1,s,,,,,no,,not measured here: "));
    size_t lines = 0;
    for (const char *p = b.s; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1 + PB_ARRAY_LEN(figs));
    pb__sb_free(&b);
}

/* The CSV read back (parbench report of a study's folder): every figure as it
 * was, the same HTML table as the study's own report; a copy of a comparison
 * is named, not kept twice; a file's study comes from its study-NNN folder. */
static void test_read_back(void **state)
{
    (void)state;
    struct pb_study_cmp c[PB_ARRAY_LEN(figs)];
    compare(false, c);
    struct pb_sbuf csv = {0}, mine = {0}, back = {0};
    pb__study_csv(&csv, &fake, c);
    assert_false(csv.failed);
    struct pb_rp_set set;
    memset(&set, 0, sizeof set);
    assert_int_equal(pb__rp_load_text(&set, "out/s900/comparison.csv", csv.s), PB_OK);
    assert_int_equal(set.n_files, 0); /* not a result file */
    assert_int_equal(set.n_comparisons, 1);
    const struct pb_rp_comparison *rc = &set.comparisons[0];
    assert_string_equal(rc->study, "900");
    assert_string_equal(rc->name, "comparison.csv");
    assert_int_equal(rc->n_figs, PB_ARRAY_LEN(figs));
    struct pb_study_line mine_l[PB_ARRAY_LEN(figs)], back_l[PB_ARRAY_LEN(figs)];
    for (size_t i = 0; i < PB_ARRAY_LEN(figs); i++) {
        const struct pb_rp_figure *f = &rc->figs[i];
        assert_string_equal(f->figure, figs[i].what);
        assert_true(strstr(f->source, figs[i].source) != NULL);
        assert_int_equal(f->verdict, c[i].verdict);
        assert_int_equal(f->measured, c[i].measured);
        assert_string_equal(f->note, c[i].note);
        assert_true(isnan(c[i].ours) ? isnan(f->ours) : fabs(f->ours - c[i].ours) <= 1e-8 * fabs(c[i].ours));
        mine_l[i] = (struct pb_study_line){figs[i].what, "s", figs[i].device, figs[i].unit, c[i].backend,
                                           c[i].device, c[i].note, c[i].theirs, c[i].ours, c[i].ratio, true,
                                           c[i].measured, c[i].verdict};
        back_l[i] = (struct pb_study_line){f->figure, "s", f->their_device, f->unit, f->our_backend, f->our_device,
                                           f->note, f->theirs, f->ours, f->ratio, true, f->measured, f->verdict};
    }
    pb__study_table_html(&mine, mine_l, PB_ARRAY_LEN(figs));
    pb__study_table_html(&back, back_l, PB_ARRAY_LEN(figs));
    assert_false(mine.failed || back.failed);
    assert_string_equal(mine.s, back.s);
    assert_non_null(strstr(back.s, "<th>verdict</th>"));
    assert_non_null(strstr(back.s, "<td class=\"t\">agrees</td>"));
    assert_non_null(strstr(back.s, "<tr class=\"FAILED\">"));

    /* the same figures again: named as a copy; changed ones: a second comparison */
    assert_int_equal(pb__rp_load_text(&set, "out/study-900-comparison.csv", csv.s), PB_OK);
    assert_int_equal(set.n_comparisons, 1);
    assert_string_equal(set.comparisons[0].copies, "study-900-comparison.csv");
    char *changed = strdup(csv.s);
    assert_non_null(changed);
    char *agrees = strstr(changed, ",agrees,");
    assert_non_null(agrees);
    memcpy(agrees, ",AGREES,", 8);
    assert_int_equal(pb__rp_load_text(&set, "other.csv", changed), PB_OK);
    assert_int_equal(set.n_comparisons, 2);
    assert_int_equal(set.comparisons[1].figs[1].verdict, 0);
    free(changed);

    assert_int_equal(pb__rp_load_text(&set, "res/study-003/radius.csv", results), PB_OK);
    assert_int_equal(pb__rp_load_text(&set, "study-004/deeper/x.csv", results), PB_OK);
    assert_int_equal(pb__rp_load_text(&set, "study-04/x.csv", results), PB_OK);
    assert_int_equal(pb__rp_load_text(&set, "study-0042/x.csv", results), PB_OK);
    assert_int_equal(set.n_files, 4);
    assert_string_equal(set.files[0].study, "003");
    assert_string_equal(set.files[0].name, "radius.csv");
    assert_string_equal(set.files[1].study, "004");
    assert_string_equal(set.files[2].study, "");
    assert_string_equal(set.files[3].study, "");
    pb__rp_free(&set);
    pb__sb_free(&csv);
    pb__sb_free(&mine);
    pb__sb_free(&back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_matching),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_read_back),
    };
    return pb_test_run(tests, NULL, NULL);
}

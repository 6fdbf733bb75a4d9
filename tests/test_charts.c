/* The report's charts follow the data's shape (report/svg.h, charts.h): a
 * sweep of one value is drawn as bars on a linear axis from zero; integer x
 * of few values and text x get ticks only at their values; many series are
 * muted but for the best few and the anchors; category labels are short and
 * do not collide; ceiling labels stand apart, and the boundary's label clear
 * of them; no chart is drawn without a measured mark. The charts are built
 * from result files as the report reads them, or by hand, and checked in the
 * SVG text. */
#include "test_util.h"

#include <libgen.h>

#include "report/charts.h"
#include "report/cli_util.h"
#include "report/results.h"
#include "report/svg.h"

/* The scaling charts come from scaling.c, whose command reads its files
 * through the report command's loader: not linked here, never called. */
int pb__rp_load_all(struct pb_rp_set *set, char **paths, int n, const char *ceilings)
{
    (void)set, (void)paths, (void)n, (void)ceilings;
    fail();
    return 1;
}

/* ---- results as CSV text ------------------------------------------------------- */

static void csv_header(struct pb_sbuf *c, const char *params, const char *extras)
{
    pb__sb_printf(c, "date,host,version,commit,bench,backend,variant,anchor,device,precision,threads,%s,problem,"
                         "status,reason,reps,min_s,median_s,mean_s,trimmed_mean_s,stddev_s,cv,timer,host_median_s,"
                         "gflops,gbps,speedup,err_norm,err_max,tolerance,check%s%s\n",
                  params, extras ? "," : "", extras ? extras : "");
}

static void rate(struct pb_sbuf *b, double v)
{
    if (isfinite(v))
        pb__sb_printf(b, "%.6g", v);
}

/* One row; NAN rates are left empty, extras (if any) follow the check. */
static void csv_row(struct pb_sbuf *c, const char *bench, const char *variant, bool anchor, const char *precision,
                    const char *params, const char *status, double gflops, double gbps, const char *extras)
{
    pb__sb_printf(c, "2026-01-01T00:00:00Z,host,0.1.0,abc,%s,cuda,%s,%d,Some GPU,%s,0,%s,%s,%s,,5,0.001,0.001,"
                         "0.001,0.001,0,0.01,event,0.001,", bench, variant, anchor, precision, params, params, status);
    rate(c, gflops);
    pb__sb_printf(c, ",");
    rate(c, gbps);
    pb__sb_printf(c, ",1,0,0,0.001,full%s%s\n", extras ? "," : "", extras ? extras : "");
}

/* The charts of one file's text. */
static void build(struct pb_sbuf *c, struct pb_rp_set *set, struct pb_rp_charts *charts)
{
    assert_false(c->failed);
    memset(set, 0, sizeof *set);
    assert_int_equal(pb__rp_load_text(set, "results.csv", c->s), PB_OK);
    assert_int_equal(pb__rp_charts_build(set, charts), PB_OK);
    pb__sb_free(c);
}

/* ---- reading the SVG back ------------------------------------------------------- */

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The value of attribute `name` of the element that `at` points into. */
static double attr_of(const char *svg, const char *at, const char *name)
{
    const char *start = at;
    while (start > svg && *start != '<')
        start--;
    char key[32];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *a = strstr(start, key);
    const char *end = strchr(start, '>');
    assert_non_null(a);
    assert_true(a < end);
    return strtod(a + strlen(key), NULL);
}

/* The text of the element that `at` points into. */
static void text_of(const char *at, char *buf, size_t len)
{
    const char *open = strchr(at, '>');
    assert_non_null(open);
    size_t n = strcspn(open + 1, "<");
    snprintf(buf, len, "%.*s", (int)n, open + 1);
}

struct labels {
    double x[128], y[128];
    char text[128][128];
    size_t n;
};

/* Every <text> of class cls: position and text. */
static void labels_of(const char *svg, const char *cls, struct labels *out)
{
    char needle[64];
    snprintf(needle, sizeof needle, "class=\"%s\"", cls);
    out->n = 0;
    for (const char *p = strstr(svg, needle); p && out->n < 128; p = strstr(p + 1, needle)) {
        out->x[out->n] = attr_of(svg, p, "x");
        out->y[out->n] = attr_of(svg, p, "y");
        text_of(p, out->text[out->n], sizeof out->text[0]);
        out->n++;
    }
}

/* The element a <title> at p belongs to: the last tag opened before it. */
static const char *owner(const char *svg, const char *p)
{
    do
        p--;
    while (p > svg && *p != '<');
    return p;
}

/* The height of the bar whose tooltip names category cat. */
static double bar_height(const char *svg, const char *cat)
{
    char key[96];
    snprintf(key, sizeof key, ": %s,", cat);
    const char *p = strstr(svg, key);
    assert_non_null(p);
    p = owner(svg, owner(svg, p)); /* inside <title>, inside the bar */
    assert_true(strncmp(p, "<rect", 5) == 0);
    return attr_of(svg, p + 1, "height");
}

static char *svg_of(const struct pb_chart *c)
{
    struct pb_sbuf b = {0};
    pb__chart_svg(c, &b);
    assert_false(b.failed);
    return b.s;
}

/* ---- a sweep of one value --------------------------------------------------------- */

/* n varies in the file but takes one value per precision: each facet is a
 * bar per variant, on a linear axis from zero although the rates span 100x
 * (a line chart would have picked a log axis). */
static void test_one_value_sweep_is_bars(void **state)
{
    (void)state;
    struct pb_sbuf c = {0};
    csv_header(&c, "n", NULL);
    static const char *const variants[] = {"naive", "tiled", "padded"};
    static const double rates[] = {30, 300, 3000};
    for (size_t v = 0; v < 3; v++) {
        csv_row(&c, "transpose", variants[v], false, "float", "16384", "OK", NAN, rates[v], NULL);
        csv_row(&c, "transpose", variants[v], false, "double", "8192", "OK", NAN, rates[v] / 2, NULL);
    }
    struct pb_rp_set set;
    struct pb_rp_charts ch;
    build(&c, &set, &ch);
    assert_int_equal(ch.n, 2);
    for (size_t i = 0; i < ch.n; i++) {
        const struct pb_chart *k = &ch.charts[i];
        assert_int_equal(k->kind, PB_CHART_BARS);
        assert_false(k->logy);
        assert_int_equal(k->n_categories, 3);
        char *svg = svg_of(k);
        assert_int_equal(count(svg, "<rect class=\"pb-data\""), 3);
        assert_null(strstr(svg, "<polyline"));
        assert_null(strstr(svg, i == 0 ? "16383" : "8191"));
        assert_contains(svg, i == 0 ? "n = 16384" : "n = 8192");
        /* linear from zero: bar heights in the ratio of the values */
        double h_lo = bar_height(svg, "cuda/naive"), h_hi = bar_height(svg, "cuda/padded");
        assert_true(h_lo > 0);
        assert_near(h_hi / h_lo, 100, 100 * 0.05);
        free(svg);
    }
    pb__rp_charts_free(&ch);
    pb__rp_free(&set);
}

/* By hand: a roof curve at that x becomes a reference line, anchors stay. */
static void test_one_value_chart_by_hand(void **state)
{
    (void)state;
    struct pb_chart c = {.kind = PB_CHART_LINES, .vline_at = -1, .logy = true};
    struct pb_series *a = pb__chart_series(&c, "cuda/mine", PB_SERIES_LINE);
    assert_true(pb__series_add(a, 7, 10));
    struct pb_series *lib = pb__chart_series(&c, "cuda/lib*", PB_SERIES_LINE);
    lib->anchor = true;
    assert_true(pb__series_add(lib, 7, 750));
    struct pb_series *roof = pb__chart_series(&c, "memory roof (cuda)", PB_SERIES_DASHED);
    assert_true(pb__series_add(roof, 7, 900));
    assert_true(pb__chart_one_x_to_bars(&c, "streams"));
    assert_int_equal(c.kind, PB_CHART_BARS);
    assert_false(c.logy);
    assert_int_equal(c.n_categories, 2);
    assert_false(c.category_anchor[0]);
    assert_true(c.category_anchor[1]);
    assert_int_equal(c.n_hlines, 1);
    assert_string_equal(c.hlines[0].label, "memory roof (cuda)");
    assert_contains(c.xlabel, "streams = 7");
    char *svg = svg_of(&c);
    /* 750 is 75x 10: the bars say so */
    assert_near(bar_height(svg, "cuda/lib*") / bar_height(svg, "cuda/mine"), 75, 75 * 0.05);
    assert_contains(svg, "vendor library (anchor)");
    free(svg);
    pb__chart_free(&c);

    /* a real sweep stays a line chart */
    struct pb_chart d = {.kind = PB_CHART_LINES, .vline_at = -1};
    struct pb_series *s = pb__chart_series(&d, "s", PB_SERIES_LINE);
    assert_true(pb__series_add(s, 1, 1) && pb__series_add(s, 2, 2));
    assert_true(pb__chart_one_x_to_bars(&d, "n"));
    assert_int_equal(d.kind, PB_CHART_LINES);
    pb__chart_free(&d);
}

/* ---- ticks ----------------------------------------------------------------------- */

/* Counts (streams 1..4) are ticked at 1, 2, 3, 4, never at 1.5; text values
 * are categories named on the axis. */
static void test_categorical_ticks(void **state)
{
    (void)state;
    struct pb_sbuf c = {0};
    csv_header(&c, "streams", NULL);
    static const char *const streams[] = {"1", "2", "3", "4"};
    for (size_t i = 0; i < 4; i++) {
        csv_row(&c, "overlap", "a", false, "float", streams[i], "OK", 100 + 30.0 * (double)i, NAN, NULL);
        csv_row(&c, "overlap", "b", false, "float", streams[i], "OK", 90 + 20.0 * (double)i, NAN, NULL);
    }
    struct pb_rp_set set;
    struct pb_rp_charts ch;
    build(&c, &set, &ch);
    assert_int_equal(ch.n, 1);
    assert_int_equal(ch.charts[0].kind, PB_CHART_LINES);
    char *svg = svg_of(&ch.charts[0]);
    struct labels t;
    labels_of(svg, "pb-xtick", &t);
    assert_int_equal(t.n, 4);
    for (size_t i = 0; i < t.n; i++)
        assert_string_equal(t.text[i], streams[i]);
    free(svg);
    pb__rp_charts_free(&ch);
    pb__rp_free(&set);

    struct pb_sbuf d = {0};
    csv_header(&d, "border", NULL);
    static const char *const borders[] = {"zero", "clamp", "wrap"};
    for (size_t i = 0; i < 3; i++)
        csv_row(&d, "conv", "a", false, "float", borders[i], "OK", 10 + (double)i, NAN, NULL);
    build(&d, &set, &ch);
    assert_int_equal(ch.n, 1);
    assert_non_null(ch.charts[0].categories);
    svg = svg_of(&ch.charts[0]);
    labels_of(svg, "pb-xtick", &t);
    assert_int_equal(t.n, 3);
    for (size_t i = 0; i < t.n; i++)
        assert_string_equal(t.text[i], borders[i]);
    free(svg);
    pb__rp_charts_free(&ch);
    pb__rp_free(&set);
}

/* ---- many series ----------------------------------------------------------------- */

/* The marker of series `name` (its first tooltip): muted or not. */
static bool marker_muted(const char *svg, const char *name)
{
    char tip[160];
    snprintf(tip, sizeof tip, "<title>%s:", name);
    const char *p = strstr(svg, tip);
    assert_non_null(p);
    const char *mark = owner(svg, p);
    assert_true(strncmp(mark, "<circle", 7) == 0 || strncmp(mark, "<rect", 5) == 0);
    return strncmp(strstr(mark, "class=\""), "class=\"pb-data pb-muted\"", 24) == 0;
}

static void many_series_chart(struct pb_chart *c, size_t n)
{
    *c = (struct pb_chart){.kind = PB_CHART_LINES, .vline_at = -1};
    for (size_t i = 0; i < n; i++) {
        char name[48];
        snprintf(name, sizeof name, "opencl/variant-%02zu", i);
        struct pb_series *s = pb__chart_series(c, name, PB_SERIES_LINE);
        assert_true(pb__series_add(s, 1, 10 + (double)i) && pb__series_add(s, 2, 20 + (double)i));
    }
    struct pb_series *lib = pb__chart_series(c, "cuda/cublas*", PB_SERIES_LINE);
    lib->anchor = true; /* the worst of all, and still drawn */
    assert_true(pb__series_add(lib, 1, 1) && pb__series_add(lib, 2, 2));
    struct pb_series *roof = pb__chart_series(c, "memory roof (cuda)", PB_SERIES_DASHED);
    assert_true(pb__series_add(roof, 1, 50) && pb__series_add(roof, 2, 50));
}

static void test_many_series_muted(void **state)
{
    (void)state;
    struct pb_chart c;
    many_series_chart(&c, 12); /* 13 measured series */
    char *svg = svg_of(&c);
    assert_int_equal(count(svg, "<polyline class=\"pb-data pb-muted\""), 12 - 5);
    assert_int_equal(count(svg, "<polyline class=\"pb-ref\""), 1);
    assert_contains(svg, "7 more (muted)");
    assert_contains(svg, "* vendor library (anchor)");
    for (size_t i = 0; i < 12; i++) {
        char name[32];
        snprintf(name, sizeof name, "opencl/variant-%02zu", i);
        assert_int_equal(marker_muted(svg, name), i < 7); /* the 5 best stay */
    }
    assert_false(marker_muted(svg, "cuda/cublas*"));
    /* the anchor: square marks, a dashed line */
    const char *lib = strstr(svg, "<title>cuda/cublas*:");
    assert_non_null(lib);
    assert_true(strncmp(owner(svg, lib), "<rect", 5) == 0);
    assert_contains(svg, "stroke=\"#1a1a1a\" stroke-width=\"2\" stroke-dasharray=");
    /* the vivid lines' colours differ from each other and from the muted grey */
    char colors[16][16];
    size_t n_colors = 0;
    static const char vivid[] = "<polyline class=\"pb-data\"";
    for (const char *p = strstr(svg, vivid); p; p = strstr(p + 1, vivid)) {
        const char *st = strstr(p, "stroke=\"");
        assert_non_null(st);
        snprintf(colors[n_colors], sizeof colors[0], "%.7s", st + 8);
        for (size_t k = 0; k < n_colors; k++)
            assert_string_not_equal(colors[k], colors[n_colors]);
        n_colors++;
    }
    assert_int_equal(n_colors, 5 + 1);
    /* the legend lists the vivid ones first, the best first */
    const char *best = strstr(svg, ">opencl/variant-11<"), *next = strstr(svg, ">opencl/variant-10<");
    const char *muted = strstr(svg, ">7 more (muted)<");
    assert_non_null(best);
    assert_non_null(next);
    assert_true(best < next && next < muted);
    free(svg);
    pb__chart_free(&c);

    many_series_chart(&c, PB_CHART_MAX_VIVID - 1); /* 8 measured: all in colour */
    svg = svg_of(&c);
    assert_null(strstr(svg, "pb-muted"));
    assert_null(strstr(svg, "more (muted)"));
    free(svg);
    pb__chart_free(&c);
}

/* ---- category labels ------------------------------------------------------------- */

static void test_label_shortening(void **state)
{
    (void)state;
    char buf[128];
    pb__chart_short_label(".data/matrices/bcsstk33.mtx", true, 24, buf, sizeof buf);
    assert_string_equal(buf, "bcsstk33");
    pb__chart_short_label("dir/sub/web-Google.mtx.gz", true, 24, buf, sizeof buf);
    assert_string_equal(buf, "web-Google");
    pb__chart_short_label("lap3d:160", true, 24, buf, sizeof buf);
    assert_string_equal(buf, "lap3d:160");
    pb__chart_short_label("cuda/cublas*", false, 24, buf, sizeof buf); /* a variant keeps its slash */
    assert_string_equal(buf, "cuda/cublas*");
    pb__chart_short_label("cuda/regblock (NVIDIA H100 80GB HBM3) @1 of 4", false, 24, buf, sizeof buf);
    assert_contains(buf, "\xE2\x80\xA6");
    assert_true(strncmp(buf, "cuda/regbloc", 12) == 0); /* the head ... */
    assert_true(strcmp(buf + strlen(buf) - 6, "1 of 4") == 0); /* ... and the tail stay */
    size_t chars = 0;
    for (const char *p = buf; *p; p++)
        chars += ((unsigned char)*p & 0xC0) != 0x80;
    assert_int_equal(chars, 24);
}

/* Legend names too long for the legend that differ only in the middle: the
 * words all share at the start and the end give way first, so each entry
 * shows its own part; names that fit are left whole. */
static void test_legend_keeps_what_differs(void **state)
{
    (void)state;
    static const char *const names[] = {"cuda/overlap powerlaw:4M:16 by nnz (read by each) via nccl batch=1",
                                        "cuda/overlap lap3d:320 by nnz (read by each) via nccl batch=1"};
    struct pb_chart c = {.kind = PB_CHART_LINES, .vline_at = -1};
    for (size_t i = 0; i < 2; i++) {
        struct pb_series *s = pb__chart_series(&c, names[i], PB_SERIES_LINE);
        assert_true(pb__series_add(s, 1, 1 + (double)i) && pb__series_add(s, 2, 2 + (double)i));
    }
    char *svg = svg_of(&c);
    assert_contains(svg, ">\xE2\x80\xA6powerlaw:4M:16\xE2\x80\xA6<");
    assert_contains(svg, ">\xE2\x80\xA6lap3d:320\xE2\x80\xA6<");
    free(svg);
    pb__chart_free(&c);

    struct pb_chart d = {.kind = PB_CHART_LINES, .vline_at = -1};
    static const char *const short_names[] = {"cuda/overlap lap3d:320", "cuda/overlap lap3d:160"};
    for (size_t i = 0; i < 2; i++) {
        struct pb_series *s = pb__chart_series(&d, short_names[i], PB_SERIES_LINE);
        assert_true(pb__series_add(s, 1, 1 + (double)i) && pb__series_add(s, 2, 2 + (double)i));
    }
    svg = svg_of(&d);
    assert_contains(svg, ">cuda/overlap lap3d:320<");
    assert_contains(svg, ">cuda/overlap lap3d:160<");
    free(svg);
    pb__chart_free(&d);
}

/* Fifty matrices by path: short names, no two labels closer than a line of
 * text, the first one inside the picture, the bottom one too. */
static void test_many_categories(void **state)
{
    (void)state;
    struct pb_sbuf c = {0};
    csv_header(&c, "matrix", "rows,nnz");
    for (int i = 0; i < 50; i++) {
        char params[96], extras[64];
        snprintf(params, sizeof params, "some/deep/directory/matrix_with_a_long_name_%02d.mtx", i);
        snprintf(extras, sizeof extras, "%d,%d", 1000 + i, 10000 + 100 * i);
        csv_row(&c, "spmv", "csr", false, "double", params, "OK", 1 + i, 6 + 6.0 * i, extras);
        csv_row(&c, "spmv", "ell", false, "double", params, "OK", 2 + i, 12 + 6.0 * i, extras);
    }
    struct pb_rp_set set;
    struct pb_rp_charts ch;
    build(&c, &set, &ch);
    const struct pb_chart *k = NULL;
    for (size_t i = 0; i < ch.n && !k; i++)
        if (strstr(ch.charts[i].title, "per matrix"))
            k = &ch.charts[i];
    assert_non_null(k);
    assert_int_equal(k->n_categories, 50);
    char *svg = svg_of(k);
    struct labels t;
    labels_of(svg, "pb-xtick", &t);
    assert_true(t.n >= 25);
    double width = attr_of(svg, svg, "width"), height = attr_of(svg, svg, "height");
    assert_true(width >= 50 * 14);
    for (size_t i = 0; i < t.n; i++) {
        assert_null(strchr(t.text[i], '/'));
        assert_null(strstr(t.text[i], ".mtx"));
        assert_true(strncmp(t.text[i], "matrix_with_a_long", 18) == 0);
        if (i)
            assert_true(t.x[i] - t.x[i - 1] >= 14);
        /* rotated by 45 degrees, ending at (x, y): about 6 px a character */
        double run = 6.0 * (double)strlen(t.text[i]) * 0.7071;
        assert_true(t.x[i] - run >= 0);
        assert_true(t.y[i] + run <= height);
    }
    free(svg);
    pb__rp_charts_free(&ch);
    pb__rp_free(&set);
}

/* ---- reference lines -------------------------------------------------------------- */

static void test_reference_labels_apart(void **state)
{
    (void)state;
    struct pb_chart c = {.kind = PB_CHART_LINES, .vline_at = 2};
    snprintf(c.vline_label, sizeof c.vline_label, "GPU ahead from here");
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        assert_true(pb__chart_category(&c, name) == i);
    }
    struct pb_series *s = pb__chart_series(&c, "cuda/x", PB_SERIES_LINE);
    assert_true(pb__series_add(s, 0, 100) && pb__series_add(s, 1, 400) && pb__series_add(s, 2, 700));
    /* four ceilings within a few px of each other at the top of the plot
     * (the axis ends at 2000), where the boundary's label would go */
    pb__chart_hline(&c, "memory ceiling (cuda)", 1935);
    pb__chart_hline(&c, "memory ceiling (opencl)", 1940);
    pb__chart_hline(&c, "memory ceiling (openmp)", 1930);
    pb__chart_hline(&c, "L2 ceiling (cuda)", 1925);
    char *svg = svg_of(&c);
    struct labels h, v;
    labels_of(svg, "pb-ceiling-label", &h);
    labels_of(svg, "pb-vline-label", &v);
    assert_int_equal(h.n, 4);
    assert_int_equal(v.n, 1);
    double top = attr_of(svg, strstr(svg, "fill=\"none\" stroke=\"#444444\""), "y");
    double bottom = top + attr_of(svg, strstr(svg, "fill=\"none\" stroke=\"#444444\""), "height");
    for (size_t i = 0; i < h.n; i++) {
        assert_true(h.y[i] - 10 >= top && h.y[i] <= bottom);
        for (size_t j = 0; j < i; j++)
            assert_true(fabs(h.y[i] - h.y[j]) >= 12);
        assert_true(fabs(v.y[0] - h.y[i]) >= 12); /* the boundary's label is clear of them */
    }
    free(svg);
    pb__chart_free(&c);
}

/* ---- charts with data only ---------------------------------------------------------- */

static void data_dir(char *buf, size_t len, const char *sub)
{
    char here[512];
    snprintf(here, sizeof here, "%s", __FILE__);
    snprintf(buf, len, "%s/data/%s", dirname(here), sub);
}

static void every_chart_has_data(const struct pb_rp_charts *ch)
{
    for (size_t i = 0; i < ch->n; i++) {
        assert_true(pb__chart_measured_points(&ch->charts[i]) > 0);
        char *svg = svg_of(&ch->charts[i]);
        assert_true(count(svg, "class=\"pb-data") >= 1);
        assert_null(strstr(svg, "no measured values"));
        free(svg);
    }
}

static void test_no_empty_charts(void **state)
{
    (void)state;
    /* a file of failures and one of results: charts of the results only */
    struct pb_sbuf c = {0};
    csv_header(&c, "n", NULL);
    csv_row(&c, "gemm", "a", false, "float", "64", "FAILED", NAN, NAN, NULL);
    csv_row(&c, "gemm", "a", false, "float", "128", "FAILED", NAN, NAN, NULL);
    csv_row(&c, "gemm", "a", false, "double", "64", "OK", 5, NAN, NULL);
    csv_row(&c, "gemm", "a", false, "double", "128", "OK", 6, NAN, NULL);
    struct pb_rp_set set;
    struct pb_rp_charts ch;
    build(&c, &set, &ch);
    assert_int_equal(ch.n, 1);
    assert_contains(ch.charts[0].title, "double");
    every_chart_has_data(&ch);
    pb__rp_charts_free(&ch);
    pb__rp_free(&set);

    /* the committed samples, and the memory roof of a memory-bound GFLOP/s chart */
    static const char *const dirs[] = {"results", "roofs"};
    for (size_t d = 0; d < PB_ARRAY_LEN(dirs); d++) {
        char path[600];
        data_dir(path, sizeof path, dirs[d]);
        memset(&set, 0, sizeof set);
        assert_int_equal(pb__rp_load(&set, path), PB_OK);
        assert_int_equal(pb__rp_charts_build(&set, &ch), PB_OK);
        assert_true(ch.n >= 5);
        every_chart_has_data(&ch);
        bool spmv_seen = false;
        for (size_t i = 0; d == 1 && i < ch.n; i++) {
            if (strncmp(ch.charts[i].title, "spmv: GFLOP/s", 13) != 0)
                continue;
            char *svg = svg_of(&ch.charts[i]);
            assert_contains(svg, "memory roof (cuda)");
            assert_null(strstr(svg, "FMA peak"));
            spmv_seen = true;
            free(svg);
        }
        assert_true(d == 0 || spmv_seen);
        pb__rp_charts_free(&ch);
        pb__rp_free(&set);
    }
}

/* The parts of the time of a run at 1, 2 and 4 ranks: a bar per count, from
 * the rows for all ranks (not the per-rank ones), each labelled with its
 * count; before, all five rows were drawn at one category. */
static void test_parts_by_rank_count(void **state)
{
    (void)state;
    struct pb_sbuf c = {0};
    csv_header(&c, "ranks,rank,matrix", "compute_s");
    static const struct {
        int ranks;
        const char *rank;
    } rows[] = {{1, "all"}, {2, "0"}, {2, "1"}, {2, "all"}, {4, "all"}};
    for (size_t i = 0; i < PB_ARRAY_LEN(rows); i++)
        pb__sb_printf(&c, "2026-01-01T00:00:00Z,host,0.1.0,abc,spmv-dist,cuda,overlap,0,Some GPU,double,0,%d,%s,"
                          "lap2d:40,lap2d:40,OK,,5,0.001,0.001,0.001,0.001,0,0.01,event,0.001,1,1,1,0,0,0.001,full,"
                          "0.0005\n",
                      rows[i].ranks, rows[i].rank);
    struct pb_rp_set set;
    struct pb_rp_charts ch;
    build(&c, &set, &ch);
    bool seen = false;
    for (size_t i = 0; i < ch.n; i++) {
        if (!strstr(ch.charts[i].title, "each part of the time"))
            continue;
        seen = true;
        char *svg = svg_of(&ch.charts[i]);
        struct labels ticks;
        labels_of(svg, "pb-xtick", &ticks);
        assert_int_equal(ticks.n, 3);
        assert_string_equal(ticks.text[0], "cuda/overlap @1 rank");
        assert_string_equal(ticks.text[1], "cuda/overlap @2 ranks");
        assert_string_equal(ticks.text[2], "cuda/overlap @4 ranks");
        free(svg);
    }
    assert_true(seen);
    pb__rp_charts_free(&ch);
    pb__rp_free(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_value_sweep_is_bars),
        cmocka_unit_test(test_one_value_chart_by_hand),
        cmocka_unit_test(test_categorical_ticks),
        cmocka_unit_test(test_many_series_muted),
        cmocka_unit_test(test_label_shortening),
        cmocka_unit_test(test_legend_keeps_what_differs),
        cmocka_unit_test(test_many_categories),
        cmocka_unit_test(test_reference_labels_apart),
        cmocka_unit_test(test_no_empty_charts),
        cmocka_unit_test(test_parts_by_rank_count),
    };
    return pb_test_run(tests, NULL, NULL);
}

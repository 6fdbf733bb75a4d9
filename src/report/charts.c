/* Chart selection (see charts.h). Generic over benchmarks: everything is
 * decided from the columns a file has, with a few preferences by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "core/core.h"
#include "report/charts.h"
#include "report/report.h"

#define MAX_FACETS 6

/* The rates, the time, and the rates per watt (energy efficiency). */
enum metric { M_GFLOPS, M_GBPS, M_TIME, M_GFLOPS_PER_W, M_GBPS_PER_W };

static double metric_of(const struct pb_rp_row *r, enum metric m)
{
    switch (m) {
    case M_GFLOPS: return r->gflops;
    case M_GBPS: return r->gbps;
    case M_GFLOPS_PER_W: return r->gflops_per_w;
    case M_GBPS_PER_W: return r->gbps_per_w;
    case M_TIME: break;
    }
    return r->median;
}

static const char *metric_label(enum metric m)
{
    switch (m) {
    case M_GFLOPS: return "GFLOP/s";
    case M_GBPS: return "GB/s (1e9 bytes/s)";
    case M_GFLOPS_PER_W: return "GFLOP/s per watt (GFLOP per joule)";
    case M_GBPS_PER_W: return "GB/s per watt";
    case M_TIME: break;
    }
    return "median time (s)";
}

static const char *metric_short(enum metric m)
{
    switch (m) {
    case M_GFLOPS: return "GFLOP/s";
    case M_GBPS: return "GB/s";
    case M_GFLOPS_PER_W: return "GFLOP/s per watt";
    case M_GBPS_PER_W: return "GB/s per watt";
    case M_TIME: break;
    }
    return "time";
}

static bool any_rate(const struct pb_rp_row *rows, size_t n, enum metric m)
{
    for (size_t i = 0; i < n; i++)
        if (pb__rp_ok(&rows[i]) && isfinite(metric_of(&rows[i], m)) && metric_of(&rows[i], m) > 0)
            return true;
    return false;
}

void pb__rp_fmt_time(double s, char *buf, size_t len)
{
    if (!isfinite(s))
        snprintf(buf, len, "-");
    else if (s < 1e-6)
        snprintf(buf, len, "%.3g ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, len, "%.3g us", s * 1e6);
    else if (s < 1)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else
        snprintf(buf, len, "%.3g s", s);
}

/* ---- the list of charts ------------------------------------------------------ */

static struct pb_chart *add_chart(struct pb_rp_charts *l, size_t file)
{
    struct pb_chart *bigger = realloc(l->charts, (l->n + 1) * sizeof *bigger);
    if (!bigger)
        return NULL;
    l->charts = bigger;
    size_t *files = realloc(l->file, (l->n + 1) * sizeof *files);
    if (!files)
        return NULL;
    l->file = files;
    memset(&l->charts[l->n], 0, sizeof l->charts[0]);
    l->file[l->n] = file;
    return &l->charts[l->n++];
}

void pb__rp_charts_free(struct pb_rp_charts *c)
{
    for (size_t i = 0; i < c->n; i++)
        pb__chart_free(&c->charts[i]);
    free(c->charts);
    free(c->file);
    memset(c, 0, sizeof *c);
}

/* Points of every series in x order, so lines do not zigzag. */
static void sort_series(struct pb_chart *c)
{
    for (size_t i = 0; i < c->n_series; i++) {
        struct pb_series *s = &c->series[i];
        for (size_t a = 1; a < s->n; a++)
            for (size_t b = a; b > 0 && s->x[b - 1] > s->x[b]; b--) {
                double tx = s->x[b], ty = s->y[b];
                s->x[b] = s->x[b - 1], s->y[b] = s->y[b - 1];
                s->x[b - 1] = tx, s->y[b - 1] = ty;
                if (s->tips) {
                    char *t = s->tips[b];
                    s->tips[b] = s->tips[b - 1], s->tips[b - 1] = t;
                }
            }
    }
}

/* ---- parameters of one file ---------------------------------------------------- */

struct param_info {
    const char *name;
    size_t distinct;
    bool numeric;
};

static int by_text(const void *a, const void *b)
{
    const char *const *x = a, *const *y = b;
    int c = strcmp(x[0], y[0]);
    return c ? c : strcmp(x[1], y[1]);
}

/* Distinct text values of param `name` among rows (sorted, not compared
 * pairwise: files of a million rows). */
static size_t distinct_values(const struct pb_rp_row *rows, size_t n, const char *name, bool *numeric)
{
    *numeric = true;
    const char *(*v)[2] = malloc((n ? n : 1) * sizeof *v);
    if (!v) /* out of memory: as many as rows, so a chart is still planned */
        return n;
    for (size_t i = 0; i < n; i++) {
        const struct pb_rp_kv *kv = pb__rp_find(&rows[i], name);
        if (kv && isnan(kv->num))
            *numeric = false;
        v[i][0] = kv ? kv->text : "", v[i][1] = "";
    }
    qsort(v, n, sizeof *v, by_text);
    size_t count = n > 0;
    for (size_t i = 1; i < n; i++)
        count += strcmp(v[i][0], v[i - 1][0]) != 0;
    free(v);
    return count;
}

/* true when every x value goes with one value of param p (gemm's m and k
 * follow n on a square sweep): p then needs no chart of its own. Rows
 * lacking either are left out. */
static bool follows(const struct pb_rp_row *rows, size_t n, const char *x, const char *p)
{
    const char *(*v)[2] = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return false;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct pb_rp_kv *xi = pb__rp_find(&rows[i], x), *pi = pb__rp_find(&rows[i], p);
        if (xi && pi)
            v[m][0] = xi->text, v[m][1] = pi->text, m++;
    }
    qsort(v, m, sizeof *v, by_text);
    bool one = true;
    for (size_t i = 1; i < m && one; i++)
        one = strcmp(v[i][0], v[i - 1][0]) != 0 || strcmp(v[i][1], v[i - 1][1]) == 0;
    free(v);
    return one;
}

/* Bandwidth variants by direction: "h2d-pinned-async" -> "h2d". */
static void direction_of(const char *variant, char *buf, size_t len)
{
    size_t n = strcspn(variant, "-");
    snprintf(buf, len, "%.*s", (int)n, variant);
}

struct file_plan {
    const struct pb_rp_row *rows;
    size_t n;
    const struct pb_rp_file *file;
    enum metric metric;
    const char *x;             /* NULL: no parameter varies */
    bool x_numeric, x_by_nnz;  /* x_by_nnz: categories sorted by the nnz column */
    const char *facet[PB_MAX_PARAMS + 2], *in_series[PB_MAX_PARAMS + 2];
    size_t n_facet, n_in_series;
    bool facet_precision, facet_direction, series_device, series_threads;
};

static void append(char *buf, size_t len, const char *sep, const char *text)
{
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", used ? sep : "", text);
}

static void facet_key(const struct file_plan *fp, const struct pb_rp_row *r, char *buf, size_t len)
{
    buf[0] = '\0';
    char part[160];
    if (fp->facet_direction) {
        direction_of(r->variant, part, sizeof part);
        append(buf, len, ", ", part);
    }
    if (fp->facet_precision && r->precision[0])
        append(buf, len, ", ", r->precision);
    for (size_t i = 0; i < fp->n_facet; i++) {
        const struct pb_rp_kv *kv = pb__rp_find(r, fp->facet[i]);
        snprintf(part, sizeof part, "%s=%s", fp->facet[i], kv ? kv->text : "");
        append(buf, len, ", ", part);
    }
}

static void series_key(const struct file_plan *fp, const struct pb_rp_row *r, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s%s", r->backend, r->variant, r->anchor ? "*" : "");
    char part[160];
    if (fp->series_device) {
        snprintf(part, sizeof part, "(%.40s)", r->device);
        append(buf, len, " ", part);
    }
    if (fp->series_threads) {
        snprintf(part, sizeof part, "%d thr", r->threads);
        append(buf, len, " ", part);
    }
    if (r->ranks > 1) { /* every rank's row and the aggregate are series of their own */
        snprintf(part, sizeof part, "@%.16s of %d", r->rank, r->ranks);
        append(buf, len, " ", part);
    }
    for (size_t i = 0; i < fp->n_in_series; i++) {
        const struct pb_rp_kv *kv = pb__rp_find(r, fp->in_series[i]);
        snprintf(part, sizeof part, "%s=%s", fp->in_series[i], kv ? kv->text : "");
        append(buf, len, " ", part);
    }
}

static int by_backend_variant(const void *x, const void *y)
{
    const struct pb_rp_row *a = *(const struct pb_rp_row *const *)x, *b = *(const struct pb_rp_row *const *)y;
    int c = strcmp(a->backend, b->backend);
    return c ? c : strcmp(a->variant, b->variant);
}

/* Whether two rows of the same backend/variant differ in device or threads:
 * each row against the first of its backend/variant, in sorted order (all
 * pairs took 10 s on a 30,000-row file). */
static void series_splits(struct file_plan *fp)
{
    const struct pb_rp_row **order = malloc(fp->n * sizeof *order);
    if (!order)
        return; /* without memory to sort: one series per backend/variant */
    for (size_t i = 0; i < fp->n; i++)
        order[i] = &fp->rows[i];
    qsort(order, fp->n, sizeof *order, by_backend_variant);
    for (size_t i = 1, first = 0; i < fp->n; i++) {
        if (by_backend_variant(&order[first], &order[i]) != 0) {
            first = i;
            continue;
        }
        fp->series_device |= strcmp(order[first]->device, order[i]->device) != 0;
        fp->series_threads |= order[first]->threads != order[i]->threads;
    }
    free(order);
}

static const char *const preferred_x[] = {"n", "size", "radius", "nnz", "bytes", "m", "k"};

static void plan_file(struct file_plan *fp)
{
    const struct pb_rp_row *rows = fp->rows;
    const char *bench = fp->file->bench[0] ? fp->file->bench : rows[0].bench;
    fp->metric = strcmp(bench, "conv") == 0 && any_rate(rows, fp->n, M_TIME) ? M_TIME
                 : any_rate(rows, fp->n, M_GFLOPS) && strcmp(bench, "bandwidth") != 0 ? M_GFLOPS
                 : any_rate(rows, fp->n, M_GBPS)                                       ? M_GBPS
                                                                                      : M_TIME;
    struct param_info params[PB_MAX_PARAMS + 2];
    size_t np = 0;
    for (size_t i = 0; i < rows[0].n_params && np < PB_MAX_PARAMS; i++) {
        params[np].name = rows[0].params[i].key;
        params[np].distinct = distinct_values(rows, fp->n, params[np].name, &params[np].numeric);
        np++;
    }
    /* SpMV-like results: one category per matrix, sorted by its non-zeros. */
    bool has_nnz = pb__rp_find(&rows[0], "nnz") != NULL;
    if (pb__rp_find(&rows[0], "matrix") || has_nnz) {
        fp->x = "matrix";
        fp->x_numeric = false;
        fp->x_by_nnz = has_nnz;
    }
    for (size_t k = 0; !fp->x && k < sizeof preferred_x / sizeof preferred_x[0]; k++)
        for (size_t i = 0; i < np; i++)
            if (params[i].distinct > 1 && strcmp(params[i].name, preferred_x[k]) == 0) {
                fp->x = params[i].name;
                fp->x_numeric = params[i].numeric;
            }
    for (size_t i = 0; !fp->x && i < np; i++)
        if (params[i].distinct > 1 && (!fp->x || params[i].distinct > distinct_values(rows, fp->n, fp->x, &(bool){0}))) {
            fp->x = params[i].name;
            fp->x_numeric = params[i].numeric;
        }
    fp->facet_direction = strcmp(bench, "bandwidth") == 0;
    bool prec_varies = false;
    for (size_t i = 1; i < fp->n; i++)
        prec_varies |= strcmp(rows[i].precision, rows[0].precision) != 0;
    fp->facet_precision = prec_varies;
    /* Other varying parameters that do not follow x: charts of their own
     * while the count stays small, the rest into the series names. */
    size_t facets = 1;
    if (fp->facet_direction) {
        enum { MAX_DIRS = 16 }; /* h2d, d2h, ...: a handful */
        char seen_dirs[MAX_DIRS][32];
        size_t dirs = 0;
        for (size_t i = 0; i < fp->n; i++) {
            char a[32];
            bool seen = false;
            direction_of(rows[i].variant, a, sizeof a);
            for (size_t j = 0; j < dirs && !seen; j++)
                seen = strcmp(a, seen_dirs[j]) == 0;
            if (!seen && dirs < MAX_DIRS)
                snprintf(seen_dirs[dirs++], sizeof seen_dirs[0], "%s", a);
        }
        facets *= dirs;
    }
    if (prec_varies)
        facets *= 2;
    for (size_t pass = 0; pass < np; pass++) {
        /* fewest distinct values first */
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < np; i++) {
            if (params[i].distinct <= 1 || (fp->x && strcmp(params[i].name, fp->x) == 0))
                continue;
            if (best == SIZE_MAX || params[i].distinct < params[best].distinct)
                best = i;
        }
        if (best == SIZE_MAX)
            break;
        size_t d = params[best].distinct;
        params[best].distinct = 0; /* taken */
        if (fp->x && follows(rows, fp->n, fp->x, params[best].name))
            continue;
        if (facets * d <= MAX_FACETS) {
            fp->facet[fp->n_facet++] = params[best].name;
            facets *= d;
        } else {
            fp->in_series[fp->n_in_series++] = params[best].name;
        }
    }
    series_splits(fp);
}

/* A matrix's name: its column, else the problem label. */
static const char *matrix_name(const struct pb_rp_row *r)
{
    const struct pb_rp_kv *m = pb__rp_find(r, "matrix");
    return m ? m->text : r->problem;
}

struct nnz_cat {
    const char *name;
    double nnz;
    size_t row; /* its first row */
};

static int by_name_then_row(const void *a, const void *b)
{
    const struct nnz_cat *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

static int by_nnz(const void *a, const void *b)
{
    const struct nnz_cat *x = a, *y = b;
    return x->nnz < y->nnz ? -1 : x->nnz > y->nnz ? 1 : strcmp(x->name, y->name);
}

/* A matrix's category; the axis shows its short name (bcsstk33, not
 * .data/matrices/bcsstk33.mtx) while the tooltips keep the whole. -1 when
 * out of memory. */
static int matrix_category(struct pb_chart *c, const char *name)
{
    int ci = pb__chart_category(c, name);
    char short_name[96];
    pb__chart_short_label(name, true, 64, short_name, sizeof short_name);
    if (ci >= 0 && !c->category_labels[ci] && strcmp(short_name, name) != 0 &&
        !pb__chart_category_label(c, (size_t)ci, short_name))
        return -1;
    return ci;
}

/* Categories in non-zero order, before any point is added. */
static bool nnz_categories(const struct file_plan *fp, struct pb_chart *c)
{
    struct nnz_cat *cats = calloc(fp->n ? fp->n : 1, sizeof *cats);
    if (!cats)
        return false;
    for (size_t i = 0; i < fp->n; i++) {
        const struct pb_rp_kv *z = pb__rp_find(&fp->rows[i], "nnz");
        cats[i] = (struct nnz_cat){matrix_name(&fp->rows[i]), z ? z->num : NAN, i};
    }
    /* each name once, with its first row's count (sorted: a file may hold thousands) */
    qsort(cats, fp->n, sizeof *cats, by_name_then_row);
    size_t n = 0;
    for (size_t i = 0; i < fp->n; i++)
        if (n == 0 || strcmp(cats[n - 1].name, cats[i].name) != 0)
            cats[n++] = cats[i];
    qsort(cats, n, sizeof *cats, by_nnz);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++)
        ok = matrix_category(c, cats[i].name) >= 0;
    free(cats);
    return ok;
}

/* GPU rows: CUDA, and OpenCL unless its device is a CPU (PoCL's pthread device). */
static bool on_gpu(const struct pb_rp_row *r)
{
    if (strcmp(r->backend, "cuda") == 0)
        return true;
    return strcmp(r->backend, "opencl") == 0 && !strcasestr(r->device, "pthread") && !strcasestr(r->device, "cpu");
}

/* The CPU/GPU crossover of a per-matrix chart: the first matrix (in
 * non-zero order) from which the best GPU rate stays above the best CPU rate. */
static void mark_crossover(const struct file_plan *fp, const char *facet, struct pb_chart *c)
{
    size_t n = c->n_categories;
    double *cpu = calloc(n ? 2 * n : 1, sizeof *cpu), *gpu = cpu + n;
    if (!cpu)
        return;
    for (size_t i = 0; i < fp->n; i++) {
        const struct pb_rp_row *r = &fp->rows[i];
        char key[256];
        facet_key(fp, r, key, sizeof key);
        double y = metric_of(r, fp->metric);
        if (strcmp(key, facet) != 0 || !pb__rp_ok(r) || !isfinite(y))
            continue;
        int ci = pb__chart_category(c, matrix_name(r));
        if (ci < 0 || (size_t)ci >= n)
            continue;
        /* time: lower is better */
        double score = fp->metric == M_TIME ? -y : y, *best = on_gpu(r) ? &gpu[ci] : &cpu[ci];
        if (*best == 0 || score > *best)
            *best = score;
    }
    int from = -1;
    for (size_t k = n; k-- > 0;) {
        if (cpu[k] == 0 || gpu[k] == 0 || gpu[k] <= cpu[k])
            break;
        from = (int)k;
    }
    c->vline_at = from;
    snprintf(c->vline_label, sizeof c->vline_label, "GPU ahead from here");
    free(cpu);
}

/* The x of a row's point on a line chart: its numeric parameter, or the
 * index of its category (added on first use; -1 when out of memory). */
static double point_x(const struct file_plan *fp, struct pb_chart *c, const struct pb_rp_row *r)
{
    const struct pb_rp_kv *kv = pb__rp_find(r, fp->x);
    if (fp->x_numeric)
        return kv ? kv->num : NAN;
    if (fp->x_by_nnz || !kv || strcmp(fp->x, "matrix") == 0)
        return matrix_category(c, fp->x_by_nnz || !kv ? matrix_name(r) : kv->text);
    return pb__chart_category(c, kv->text);
}

static void roof_hline(struct pb_chart *c, const char *label, double y)
{
    for (size_t h = 0; h < c->n_hlines; h++)
        if (fabs(c->hlines[h].y - y) < 1e-9 * y)
            return;
    pb__chart_hline(c, label, y);
}

/* The ceilings of the devices on a chart, each row against its own roof
 * (bench.h): GB/s charts get the bandwidth ceiling as a line; GFLOP/s charts
 * the FMA peak, or where a row also has a bandwidth roof its roofline bound
 * min(peak, intensity x bandwidth), a dashed curve through the rows' x (a
 * memory-bound SpMV is not drawn under an FMA peak it can never approach).
 * Rows held against nothing measured get no line. */
static bool add_ceiling_lines(const struct pb_rp_set *set, const struct file_plan *fp, const char *facet,
                              struct pb_chart *c)
{
    if (fp->metric != M_GFLOPS && fp->metric != M_GBPS)
        return true;
    char key[256], label[128];
    for (size_t i = 0; i < fp->n; i++) {
        const struct pb_rp_row *r = &fp->rows[i];
        facet_key(fp, r, key, sizeof key);
        const struct pb_ceiling *ce = pb__ceilings_find(&set->ceilings, r->backend, r->device);
        if (strcmp(key, facet) != 0 || !pb__rp_ok(r) || !ce)
            continue;
        struct pb_roof roof = pb__rp_roof(r);
        bool dbl = strcmp(r->precision, "double") == 0;
        double peak = pb__roof_value(ce, roof.flops, dbl), bw = pb__roof_value(ce, roof.bytes, dbl);
        if (fp->metric == M_GBPS) {
            snprintf(label, sizeof label, "%s ceiling (%s)", pb__roof_name(roof.bytes), r->backend);
            if (isfinite(bw))
                roof_hline(c, label, bw);
            continue;
        }
        double ai = r->gbps > 0 ? r->gflops / r->gbps : NAN, y = isfinite(bw) ? ai * bw : NAN;
        if (!isfinite(y)) { /* compute-bound, or no bandwidth roof measured */
            snprintf(label, sizeof label, "%s %s (%s)", pb__roof_name(roof.flops), r->precision, r->backend);
            if (isfinite(peak))
                roof_hline(c, label, peak);
            continue;
        }
        if (isfinite(peak))
            y = fmin(y, peak);
        snprintf(label, sizeof label, "%s roof (%s)",
                 roof.bytes == PB_ROOF_MEMORY ? "memory" : pb__roof_name(roof.bytes), r->backend);
        if (c->kind == PB_CHART_BARS) { /* no x to draw a curve through */
            roof_hline(c, label, y);
            continue;
        }
        double x = point_x(fp, c, r);
        struct pb_series *s = NULL;
        for (size_t k = 0; k < c->n_series && !s; k++)
            if (strcmp(c->series[k].name, label) == 0)
                s = &c->series[k];
        if (!s && !(s = pb__chart_series(c, label, PB_SERIES_DASHED)))
            return false;
        bool seen = false;
        for (size_t k = 0; k < s->n && !seen; k++)
            seen = s->x[k] == x;
        if (!seen && isfinite(x) && x >= 0 && !pb__series_add(s, x, y))
            return false;
    }
    return true;
}

/* One chart per facet of fp's rows, in fp->metric. */
static pb_status facet_charts(const struct pb_rp_set *set, size_t fi, const struct file_plan *fp,
                              char (*facets)[256], size_t n_facets, struct pb_rp_charts *out)
{
    const char *bench = fp->rows[0].bench;
    bool per_watt = fp->metric == M_GFLOPS_PER_W || fp->metric == M_GBPS_PER_W;
    pb_status st = PB_OK;
    for (size_t fa = 0; fa < n_facets && st == PB_OK; fa++) {
        struct pb_chart *c = add_chart(out, fi);
        if (!c)
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        c->kind = fp->x ? PB_CHART_LINES : PB_CHART_BARS;
        c->vline_at = -1;
        c->lower_is_better = fp->metric == M_TIME;
        const char *what = metric_short(fp->metric);
        snprintf(c->title, sizeof c->title, "%s: %s%s%s%s%s", bench, what, fp->x ? " vs " : " per variant",
                 fp->x ? fp->x : "", facets[fa][0] ? " — " : "", facets[fa]);
        snprintf(c->ylabel, sizeof c->ylabel, "%s", metric_label(fp->metric));
        snprintf(c->xlabel, sizeof c->xlabel, "%s", fp->x ? fp->x : "variant");
        if (fp->x && strcmp(fp->x, "size") == 0) {
            c->bytes_x = true;
            snprintf(c->xlabel, sizeof c->xlabel, "size (bytes)");
        }
        if (fp->x_by_nnz) {
            snprintf(c->title, sizeof c->title, "%s: %s per matrix, sorted by non-zeros%s%s", bench, what,
                     facets[fa][0] ? " — " : "", facets[fa]);
            snprintf(c->xlabel, sizeof c->xlabel, "matrix (sorted by non-zeros)");
            if (!nnz_categories(fp, c))
                st = pb__fail(PB_ERR_NOMEM, "out of memory");
        }
        for (size_t i = 0; i < fp->n && st == PB_OK; i++) {
            const struct pb_rp_row *r = &fp->rows[i];
            char key[256], name[256];
            facet_key(fp, r, key, sizeof key);
            double y = metric_of(r, fp->metric);
            if (strcmp(key, facets[fa]) != 0 || !pb__rp_ok(r) || !isfinite(y))
                continue;
            series_key(fp, r, name, sizeof name);
            double x;
            struct pb_series *s;
            if (!fp->x) { /* bars: one category per series name, one series */
                int ci = pb__chart_category(c, name);
                s = pb__chart_series_named(c, what);
                x = ci;
                if (ci >= 0)
                    c->category_anchor[ci] = r->anchor;
            } else {
                s = pb__chart_series_named(c, name);
                x = point_x(fp, c, r);
                if (s)
                    s->anchor = r->anchor;
            }
            if (!s || x < 0 || !pb__series_add(s, x, y))
                st = pb__fail(PB_ERR_NOMEM, "out of memory");
        }
        if (st == PB_OK && !pb__chart_points(c)) { /* nothing measured: the table says why */
            pb__chart_free(c);
            out->n--;
            continue;
        }
        if (fp->x_by_nnz && !per_watt)
            mark_crossover(fp, facets[fa], c);
        if (st == PB_OK && !add_ceiling_lines(set, fp, facets[fa], c))
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
        /* a facet where x took one value: bars of the series, not a line on 16383..16385 */
        if (st == PB_OK && !pb__chart_one_x_to_bars(c, fp->x))
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
        if (fp->x && c->kind == PB_CHART_BARS) /* the axis label names the one value */
            snprintf(c->title, sizeof c->title, "%s: %s per variant%s%s", bench, what, facets[fa][0] ? " — " : "",
                     facets[fa]);
        pb__chart_auto_log(c);
        if (c->categories && c->kind == PB_CHART_LINES)
            c->logx = false;
        sort_series(c);
    }
    return st;
}

static pb_status file_charts(const struct pb_rp_set *set, size_t fi, struct pb_rp_charts *out)
{
    const struct pb_rp_file *f = &set->files[fi];
    struct file_plan fp = {.rows = &set->rows[f->first_row], .n = f->n_rows, .file = f};
    if (!fp.n)
        return PB_OK;
    plan_file(&fp);
    const char *bench = fp.rows[0].bench;
    /* Facets in order of first appearance. */
    char (*facets)[256] = calloc(fp.n, sizeof *facets);
    if (!facets)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    size_t n_facets = 0;
    for (size_t i = 0; i < fp.n; i++) {
        char key[256];
        facet_key(&fp, &fp.rows[i], key, sizeof key);
        bool seen = false;
        for (size_t k = 0; k < n_facets && !seen; k++)
            seen = strcmp(facets[k], key) == 0;
        if (!seen)
            snprintf(facets[n_facets++], sizeof facets[0], "%s", key);
    }
    pb_status st = facet_charts(set, fi, &fp, facets, n_facets, out);
    /* Energy efficiency where rows measured their energy: the same charts,
     * each rate over its row's mean power. */
    enum metric rate = fp.metric;
    fp.metric = any_rate(fp.rows, fp.n, M_GFLOPS_PER_W) ? M_GFLOPS_PER_W
                : any_rate(fp.rows, fp.n, M_GBPS_PER_W) ? M_GBPS_PER_W
                                                        : rate;
    if (st == PB_OK && fp.metric != rate)
        st = facet_charts(set, fi, &fp, facets, n_facets, out);
    fp.metric = rate;
    free(facets);

    /* Parts of the time where the benchmark measures them (columns ending
     * in _s: overlap's copy_s and kernel_s, a transfer/kernel split): bars
     * per variant at the largest problem, next to the measured time. */
    const char *parts[4];
    size_t n_parts = 0;
    for (size_t e = 0; e < fp.rows[0].n_extras && n_parts < 4; e++) {
        const char *key = fp.rows[0].extras[e].key;
        size_t len = strlen(key);
        if (len > 2 && strcmp(key + len - 2, "_s") == 0)
            parts[n_parts++] = key;
    }
    const struct pb_rp_row *big = NULL;
    for (size_t i = 0; n_parts && i < fp.n; i++)
        if (pb__rp_ok(&fp.rows[i]) && (!big || fp.rows[i].median > big->median))
            big = &fp.rows[i];
    /* Runs at several rank counts (spmv-dist at 1, 2, 4): a bar each, from the
     * rows for all ranks, not one per rank drawn over each other. */
    bool several_counts = false;
    for (size_t i = 0; big && i < fp.n; i++)
        several_counts |= pb__rp_ok(&fp.rows[i]) && fp.rows[i].ranks != big->ranks &&
                          !strcmp(fp.rows[i].problem, big->problem) && !strcmp(fp.rows[i].precision, big->precision);
    if (st == PB_OK && big) {
        struct pb_chart *c = add_chart(out, fi);
        if (!c)
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        c->kind = PB_CHART_BARS;
        snprintf(c->title, sizeof c->title, "%s: each part of the time alone vs the measured time, at %s", bench,
                 big->problem);
        snprintf(c->xlabel, sizeof c->xlabel, "variant");
        snprintf(c->ylabel, sizeof c->ylabel, "time (s)");
        for (size_t k = 0; k < n_parts; k++)
            if (!pb__chart_series(c, parts[k], PB_SERIES_LINE))
                return pb__fail(PB_ERR_NOMEM, "out of memory");
        if (!pb__chart_series(c, "measured (median)", PB_SERIES_LINE))
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < fp.n; i++) {
            const struct pb_rp_row *r = &fp.rows[i];
            if (!pb__rp_ok(r) || strcmp(r->problem, big->problem) || strcmp(r->precision, big->precision) ||
                (r->ranks > 1 && strcmp(r->rank, "all") != 0))
                continue;
            char name[160];
            if (several_counts)
                snprintf(name, sizeof name, "%s/%s @%d rank%s", r->backend, r->variant, r->ranks,
                         r->ranks > 1 ? "s" : "");
            else
                snprintf(name, sizeof name, "%s/%s", r->backend, r->variant);
            int ci = pb__chart_category(c, name);
            if (ci < 0)
                return pb__fail(PB_ERR_NOMEM, "out of memory");
            for (size_t k = 0; k <= n_parts; k++) {
                const struct pb_rp_kv *kv = k < n_parts ? pb__rp_find(r, parts[k]) : NULL;
                if (!pb__series_add(&c->series[k], ci, k < n_parts ? (kv ? kv->num : NAN) : r->median))
                    return pb__fail(PB_ERR_NOMEM, "out of memory");
            }
        }
    }
    return st;
}

/* ---- rooflines ---------------------------------------------------------------- */

static pb_status rooflines(const struct pb_rp_set *set, struct pb_rp_charts *out)
{
    /* One chart per device that has both rates somewhere. */
    for (size_t i = 0; i < set->n_rows; i++) {
        const struct pb_rp_row *r = &set->rows[i];
        if (!pb__rp_ok(r) || !(r->gflops > 0) || !(r->gbps > 0))
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            const struct pb_rp_row *o = &set->rows[j];
            seen = pb__rp_ok(o) && o->gflops > 0 && o->gbps > 0 && strcmp(o->backend, r->backend) == 0 &&
                   strcmp(o->device, r->device) == 0;
        }
        if (seen)
            continue;
        struct pb_chart *c = add_chart(out, PB_RP_ROOFLINE);
        if (!c)
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        snprintf(c->title, sizeof c->title, "roofline: %s (%.50s%s)", r->backend, r->device,
                 strlen(r->device) > 50 ? "..." : "");
        snprintf(c->xlabel, sizeof c->xlabel, "arithmetic intensity (FLOP/byte, from each benchmark's counts)");
        snprintf(c->ylabel, sizeof c->ylabel, "GFLOP/s");
        c->logx = c->logy = true;
        double xmin = INFINITY, xmax = -INFINITY;
        for (size_t j = i; j < set->n_rows; j++) {
            const struct pb_rp_row *o = &set->rows[j];
            if (!pb__rp_ok(o) || !(o->gflops > 0) || !(o->gbps > 0) || strcmp(o->backend, r->backend) ||
                strcmp(o->device, r->device))
                continue;
            char name[160];
            snprintf(name, sizeof name, "%s %s", o->bench, o->precision);
            struct pb_series *s = pb__chart_series_named(c, name);
            double ai = o->gflops / o->gbps;
            char tip[320];
            snprintf(tip, sizeof tip, "%s/%s%s %s", o->backend, o->variant, o->anchor ? "*" : "", o->problem);
            if (!s || !pb__series_add_tip(s, ai, o->gflops, tip))
                return pb__fail(PB_ERR_NOMEM, "out of memory");
            s->style = PB_SERIES_POINTS;
            xmin = fmin(xmin, ai);
            xmax = fmax(xmax, ai);
        }
        const struct pb_ceiling *ce = pb__ceilings_find(&set->ceilings, r->backend, r->device);
        double bw = ce ? pb__ceiling_mem_gbps(ce) : NAN;
        const double peaks[2] = {ce ? ce->fp32_gflops : NAN, ce ? ce->fp64_gflops : NAN};
        static const char *const names[2] = {"roof fp32 (FMA peak, memory ceiling)", "roof fp64"};
        for (int p = 0; p < 2; p++) {
            if (!(bw > 0) || !(peaks[p] > 0))
                continue;
            double ridge = peaks[p] / bw, lo = fmin(xmin, ridge) / 4, hi = fmax(xmax, ridge) * 4;
            struct pb_series *s = pb__chart_series(c, names[p], PB_SERIES_DASHED);
            if (!s || !pb__series_add(s, lo, lo * bw) || !pb__series_add(s, ridge, peaks[p]) ||
                !pb__series_add(s, hi, peaks[p]))
                return pb__fail(PB_ERR_NOMEM, "out of memory");
        }
        sort_series(c);
    }
    return PB_OK;
}

/* ---- scaling ----------------------------------------------------------------- */

/* Per benchmark run at several rank counts: the strong-scaling efficiency of
 * every curve (parbench scaling's), ranks doubling along x, 1 = ideal. A
 * benchmark that is not distributed ran whole on every rank at once: its
 * curve is T(base) / T(n), the contention between the ranks (1 = none). */
static pb_status scaling_charts(const struct pb_rp_set *set, struct pb_rp_charts *out)
{
    struct pb_rp_scaling *pts = NULL;
    size_t n = 0, curves = 0;
    pb_status st = pb__rp_scaling(set, false, &pts, &n, &curves);
    char benches[16][64];
    size_t chart_of[16], n_benches = 0;
    for (size_t i = 0; i < n && st == PB_OK; i++) {
        /* a curve at one rank count (one point, or repeated runs at that
         * count) says nothing about scaling; points are in rank order */
        size_t first = i, last = i;
        while (first > 0 && pts[first - 1].curve == pts[i].curve)
            first--;
        while (last + 1 < n && pts[last + 1].curve == pts[i].curve)
            last++;
        if (pts[first].ranks == pts[last].ranks)
            continue;
        const struct pb_rp_row *r = pts[i].row;
        const struct pb_bench *bench = pb__bench_find(r->bench);
        bool every_rank = bench && !bench->distributed;
        size_t b = 0;
        while (b < n_benches && strcmp(benches[b], r->bench) != 0)
            b++;
        if (b == n_benches) {
            if (n_benches == 16)
                continue;
            struct pb_chart *c = add_chart(out, PB_RP_SCALING);
            if (!c) {
                st = pb__fail(PB_ERR_NOMEM, "out of memory");
                break;
            }
            snprintf(benches[b], sizeof benches[b], "%.63s", r->bench);
            chart_of[n_benches++] = out->n - 1;
            if (every_rank) {
                snprintf(c->title, sizeof c->title, "%.60s: every rank at once (the whole problem on each)", r->bench);
                snprintf(c->ylabel, sizeof c->ylabel, "T(base) / T(n) (1 = no contention)");
            } else {
                snprintf(c->title, sizeof c->title, "%.60s: strong scaling (the same problem on more ranks)", r->bench);
                snprintf(c->ylabel, sizeof c->ylabel, "parallel efficiency (T(base) x base / (T(n) x n))");
            }
            snprintf(c->xlabel, sizeof c->xlabel, "ranks");
            c->logx = true;
            pb__chart_hline(c, "ideal", 1.0);
        }
        struct pb_chart *c = &out->charts[chart_of[b]];
        char name[192], more[64];
        pb__rp_varying_params(set, r, more, sizeof more); /* two curves of one problem stay apart */
        if (pts[i].by_file && strlen(more) + 8 < sizeof more)
            snprintf(more + strlen(more), sizeof more - strlen(more), " (%.40s)", set->files[r->file].name);
        snprintf(name, sizeof name, "%.20s/%.20s%s %.8s %.60s", r->backend, r->variant, more, r->precision,
                 r->problem);
        struct pb_series *s = pb__chart_series_named(c, name);
        if (!s || !pb__series_add(s, pts[i].ranks, every_rank ? pts[i].speedup : pts[i].efficiency))
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    free(pts);
    return st;
}

/* A chart with nothing measured on it (a part-of-the-time chart of a run
 * that reported none of its parts, a roofline of reference lines only) is
 * not shown: the table says what there is. */
static void drop_empty(struct pb_rp_charts *out)
{
    size_t kept = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (!pb__chart_measured_points(&out->charts[i])) {
            pb__chart_free(&out->charts[i]);
            continue;
        }
        out->charts[kept] = out->charts[i];
        out->file[kept++] = out->file[i];
    }
    out->n = kept;
}

pb_status pb__rp_charts_build(const struct pb_rp_set *set, struct pb_rp_charts *out)
{
    memset(out, 0, sizeof *out);
    pb_status st = PB_OK;
    for (size_t i = 0; i < set->n_files && st == PB_OK; i++)
        st = file_charts(set, i, out);
    if (st == PB_OK)
        st = rooflines(set, out);
    if (st == PB_OK)
        st = scaling_charts(set, out);
    if (st != PB_OK)
        pb__rp_charts_free(out);
    else
        drop_empty(out);
    return st;
}

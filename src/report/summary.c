/* The report's summary (see summary.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/study.h"
#include "report/summary.h"

bool pb__rp_noisy(const struct pb_rp_row *r) { return pb__rp_ok(r) && r->cv > PB_RP_NOISY_CV; }

/* ---- keys --------------------------------------------------------------------- */

static void key_add(struct pb_sbuf *b, const char *s)
{
    pb__sb_printf(b, "%s", s ? s : "");
    pb__sb_printf(b, "%c", '\x1f'); /* a separator no field holds */
}

static void problem_key(struct pb_sbuf *b, const struct pb_rp_row *r)
{
    key_add(b, r->problem);
    for (size_t p = 0; p < r->n_params; p++) {
        key_add(b, r->params[p].key);
        key_add(b, r->params[p].text);
    }
}

/* What makes two rows measurements of the same thing. */
static char *row_key(const struct pb_rp_row *r)
{
    struct pb_sbuf b = {0};
    const char *fields[] = {r->bench, r->backend, r->variant, r->device, r->precision, r->rank};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        key_add(&b, fields[i]);
    pb__sb_printf(&b, "%d%c", r->threads, '\x1f');
    problem_key(&b, r);
    if (b.failed)
        pb__sb_free(&b);
    return b.s;
}

struct keyed {
    char *key;
    size_t row;
};

static int by_key(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

static void free_keyed(struct keyed *k, size_t n)
{
    for (size_t i = 0; k && i < n; i++)
        free(k[i].key);
    free(k);
}

pb_status pb__rp_superseded(const struct pb_rp_set *set, size_t **out)
{
    *out = NULL;
    if (!set->n_rows)
        return PB_OK;
    size_t *newer = malloc(set->n_rows * sizeof *newer);
    struct keyed *k = calloc(set->n_rows, sizeof *k);
    bool ok = newer && k;
    for (size_t i = 0; ok && i < set->n_rows; i++) {
        newer[i] = SIZE_MAX;
        k[i].row = i;
        ok = (k[i].key = row_key(&set->rows[i])) != NULL;
    }
    if (!ok) {
        free(newer);
        free_keyed(k, set->n_rows);
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    qsort(k, set->n_rows, sizeof *k, by_key);
    /* In each run of equal keys, the file with the latest date holds the
     * current measurement; rows of files with earlier dates are superseded
     * (equal dates: neither is). */
    for (size_t a = 0, b; a < set->n_rows; a = b) {
        size_t latest = set->rows[k[a].row].file;
        for (b = a + 1; b < set->n_rows && strcmp(k[a].key, k[b].key) == 0; b++)
            if (strcmp(set->files[set->rows[k[b].row].file].date, set->files[latest].date) > 0)
                latest = set->rows[k[b].row].file;
        for (size_t i = a; i < b && b - a > 1; i++) {
            size_t f = set->rows[k[i].row].file;
            if (strcmp(set->files[f].date, set->files[latest].date) < 0)
                newer[k[i].row] = latest;
        }
    }
    free_keyed(k, set->n_rows);
    *out = newer;
    return PB_OK;
}

/* ---- studies ------------------------------------------------------------------ */

static bool runs_bench(const struct pb_study_exp *e, const char *bench)
{
    size_t n = strlen(bench);
    return strncmp(e->full, bench, n) == 0 && e->full[n] == ' ';
}

const char *pb__rp_study_of(const char *bench, size_t k)
{
    for (size_t s = 0; s < pb__study_count(); s++) {
        const struct pb_study *st = pb__study_at(s);
        for (size_t e = 0; e < st->n_exps; e++)
            if (runs_bench(&st->exps[e], bench)) {
                if (k-- == 0)
                    return st->id;
                break;
            }
    }
    return NULL;
}

/* ---- lines ---------------------------------------------------------------------- */

/* The row's rate, higher is better, in the unit of the rows it is compared
 * with: both have GFLOP/s, else both GB/s, else per second. */
static double rate_vs(const struct pb_rp_row *r, const struct pb_rp_row *other)
{
    if (r->gflops > 0 && (!other || other->gflops > 0))
        return r->gflops;
    if (r->gbps > 0 && (!other || other->gbps > 0))
        return r->gbps;
    return r->median > 0 ? 1 / r->median : NAN;
}

static bool better(const struct pb_rp_row *r, const struct pb_rp_row *than)
{
    return !than || rate_vs(r, than) > rate_vs(than, r);
}

/* The work of a problem, to pick the headline one: GFLOP or GB moved. */
static double work_of(const struct pb_rp_row *r)
{
    if (r->gflops > 0 && r->median > 0)
        return r->gflops * r->median;
    if (r->gbps > 0 && r->median > 0)
        return r->gbps * r->median;
    return r->median;
}

struct entry {
    char *group, *problem;
    const struct pb_rp_row *row;
};

static int by_group(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->group, y->group);
    return c ? c : strcmp(x->problem, y->problem);
}

static size_t study_rank(const char *bench)
{
    const char *id = pb__rp_study_of(bench, 0);
    return id ? (size_t)atoi(id) : 99;
}

/* "NVIDIA H100 80GB HBM3 (NVIDIA CUDA)" -> "NVIDIA H100 80GB HBM3": OpenCL
 * names a device with its platform in parentheses. */
static void device_base(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s", name);
    size_t n = strlen(buf);
    char *open = strrchr(buf, '(');
    if (n > 2 && buf[n - 1] == ')' && open && open > buf && open[-1] == ' ')
        open[-1] = '\0';
}

/* Groups sort by the study that runs the benchmark, then by name. */
static char *group_key(const struct pb_rp_row *r)
{
    struct pb_sbuf b = {0};
    pb__sb_printf(&b, "%02zu", study_rank(r->bench));
    key_add(&b, r->bench);
    key_add(&b, r->precision);
    char device[160];
    device_base(r->device, device, sizeof device);
    key_add(&b, device);
    if (b.failed)
        pb__sb_free(&b);
    return b.s;
}

static bool eligible(const struct pb_rp_row *r, const size_t *superseded, const struct pb_rp_set *set)
{
    return r->ranks <= 1 && (!superseded || superseded[r - set->rows] == SIZE_MAX);
}

/* One problem's best rows: ours, the anchor's, and ours per backend. */
struct best {
    const struct pb_rp_row *ours, *anchor, *cuda, *opencl;
};

static void best_of(const struct entry *e, size_t n, struct best *b)
{
    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < n; i++) {
        const struct pb_rp_row *r = e[i].row;
        if (!pb__rp_ok(r) || !(rate_vs(r, NULL) > 0))
            continue;
        const struct pb_rp_row **slot = r->anchor ? &b->anchor : &b->ours;
        if (better(r, *slot))
            *slot = r;
        if (!r->anchor && strcmp(r->backend, "cuda") == 0 && better(r, b->cuda))
            b->cuda = r;
        if (!r->anchor && strcmp(r->backend, "opencl") == 0 && better(r, b->opencl))
            b->opencl = r;
    }
}

static void summarize_group(const struct pb_rp_set *set, const struct entry *e, size_t n,
                            struct pb_rp_summary_line *l)
{
    memset(l, 0, sizeof *l);
    l->bench = e[0].row->bench;
    l->precision = e[0].row->precision;
    device_base(e[0].row->device, l->device, sizeof l->device);
    l->ratio = l->geomean = l->lo = l->hi = l->opencl_over_cuda = l->fraction = NAN;
    double log_sum = 0, twin_log_sum = 0, best_work = -1, best_fraction = -1;
    for (size_t i = 0; i < n; i++) {
        l->ok += pb__rp_ok(e[i].row);
        l->failed += strcmp(e[i].row->status, "FAILED") == 0 || strcmp(e[i].row->status, "ERROR") == 0;
        l->noisy += pb__rp_noisy(e[i].row);
    }
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && strcmp(e[a].problem, e[b].problem) == 0; b++)
            ;
        struct best best;
        best_of(e + a, b - a, &best);
        if (!best.ours)
            continue;
        l->problems++;
        if (best.cuda && best.opencl) {
            twin_log_sum += log(rate_vs(best.opencl, best.cuda) / rate_vs(best.cuda, best.opencl));
            l->twins++;
        }
        double ratio = NAN;
        if (best.anchor) {
            ratio = rate_vs(best.ours, best.anchor) / rate_vs(best.anchor, best.ours);
            log_sum += log(ratio);
            l->lo = l->compared ? fmin(l->lo, ratio) : ratio;
            l->hi = l->compared ? fmax(l->hi, ratio) : ratio;
            l->compared++;
        }
        /* The headline: with an anchor, the problem with the most work that
         * both ran; without one, the row closest to its ceiling (the most
         * work where no ceiling is known). */
        double fr = pb__rp_fraction(set, best.ours), work = work_of(best.ours);
        /* Work recovered from rate x time carries rounding: as much work (the
         * same problem under another label) is decided by the rate. */
        bool same_work = fabs(work - best_work) <= 1e-6 * fmax(work, best_work);
        bool more = same_work ? l->ours && better(best.ours, l->ours) : work > best_work;
        bool take;
        if (best.anchor)
            take = !l->anchor || more;
        else if (l->anchor)
            take = false;
        else if (isfinite(fr))
            take = fr > best_fraction;
        else
            take = best_fraction < 0 && more;
        if (take) {
            l->ours = best.ours;
            l->anchor = best.anchor;
            l->ratio = ratio;
            best_work = work;
            if (isfinite(fr))
                best_fraction = fr;
        }
    }
    if (l->compared)
        l->geomean = exp(log_sum / (double)l->compared);
    if (l->twins)
        l->opencl_over_cuda = exp(twin_log_sum / (double)l->twins);
    if (l->ours)
        l->fraction = pb__rp_fraction(set, l->ours);
}

pb_status pb__rp_summarize(const struct pb_rp_set *set, const size_t *superseded, struct pb_rp_summary_line **out,
                           size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    struct entry *e = calloc(set->n_rows ? set->n_rows : 1, sizeof *e);
    size_t n = 0;
    bool ok = e != NULL;
    for (size_t i = 0; ok && i < set->n_rows; i++) {
        const struct pb_rp_row *r = &set->rows[i];
        if (!eligible(r, superseded, set))
            continue;
        struct pb_sbuf p = {0};
        problem_key(&p, r);
        e[n].row = r;
        e[n].group = group_key(r);
        e[n].problem = p.failed ? NULL : p.s;
        ok = e[n].group && e[n].problem;
        n++;
        if (!ok)
            pb__sb_free(&p);
    }
    struct pb_rp_summary_line *lines = NULL;
    size_t n_lines = 0;
    if (ok && n) {
        qsort(e, n, sizeof *e, by_group);
        ok = (lines = calloc(n, sizeof *lines)) != NULL;
        for (size_t a = 0, b; ok && a < n; a = b) {
            for (b = a + 1; b < n && strcmp(e[a].group, e[b].group) == 0; b++)
                ;
            summarize_group(set, e + a, b - a, &lines[n_lines]);
            n_lines += lines[n_lines].ours != NULL;
        }
    }
    for (size_t i = 0; e && i < n; i++)
        free(e[i].group), free(e[i].problem);
    free(e);
    if (!ok) {
        free(lines);
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    *out = lines;
    *n_out = n_lines;
    return PB_OK;
}

/* ---- HTML ----------------------------------------------------------------------- */

static void rate_text(const struct pb_rp_row *r, const struct pb_rp_row *other, char *buf, size_t len)
{
    double v = rate_vs(r, other);
    if (r->gflops > 0 && (!other || other->gflops > 0))
        snprintf(buf, len, v >= 1000 ? "%.1f TFLOP/s" : "%.3g GFLOP/s", v >= 1000 ? v / 1000 : v);
    else if (r->gbps > 0 && (!other || other->gbps > 0))
        snprintf(buf, len, "%.4g GB/s", v);
    else
        snprintf(buf, len, "%.3g s", r->median);
}

/* A ratio with two decimals, or two significant digits below 0.1 (0.0036,
 * not 0.00). */
static const char *ratio_text(double r, char *buf, size_t len)
{
    snprintf(buf, len, r < 0.1 ? "%.2g" : "%.2f", r);
    return buf;
}

/* A matrix file's name without its directories. */
static const char *short_problem(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? slash + 1 : p;
}

static void row_cell(struct pb_sbuf *b, const struct pb_rp_row *r, const struct pb_rp_row *other)
{
    char rate[64];
    rate_text(r, other, rate, sizeof rate);
    pb__sb_printf(b, "<td class=\"t\">");
    pb__sb_escape(b, r->backend);
    pb__sb_printf(b, "/");
    pb__sb_escape(b, r->variant);
    pb__sb_printf(b, " <b>");
    pb__sb_escape(b, rate);
    pb__sb_printf(b, "</b></td>");
}

static void ratio_chart(struct pb_sbuf *b, const struct pb_rp_summary_line *lines, size_t n, bool twins)
{
    struct pb_chart c = {.kind = PB_CHART_BARS, .vline_at = -1};
    snprintf(c.title, sizeof c.title, "%s", twins ? "OpenCL against CUDA, our best of each on the same problems"
                                                  : "our best against the vendor library, on the same problems");
    snprintf(c.xlabel, sizeof c.xlabel, "benchmark, precision (backend of our best)");
    snprintf(c.ylabel, sizeof c.ylabel, "%s", twins ? "OpenCL / CUDA (geomean)" : "ours / anchor (geomean)");
    struct pb_series *s = pb__chart_series(&c, twins ? "OpenCL / CUDA" : "ours / anchor", PB_SERIES_LINE);
    bool ok = s != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        double v = twins ? lines[i].opencl_over_cuda : lines[i].geomean;
        if (!isfinite(v))
            continue;
        char name[160]; /* short: the device is in the table */
        snprintf(name, sizeof name, "%s%s%s (%s)", lines[i].bench, lines[i].precision[0] ? " " : "",
                 lines[i].precision, lines[i].ours->backend);
        int x = pb__chart_category(&c, name);
        ok = x >= 0 && pb__series_add(s, x, v);
    }
    pb__chart_hline(&c, twins ? "equal" : "vendor library", 1.0);
    if (ok && pb__chart_points(&c))
        pb__chart_svg(&c, b);
    pb__chart_free(&c);
}

void pb__rp_summary_html(struct pb_sbuf *b, const struct pb_rp_set *set, const struct pb_rp_summary_line *lines,
                         size_t n)
{
    (void)set;
    pb__sb_printf(b, "<section>\n<h2 id=\"summary\">Summary</h2>\n");
    if (!n) {
        pb__sb_printf(b, "<p class=\"note\">No OK row to summarise.</p>\n</section>\n");
        return;
    }
    pb__sb_printf(b, "<p class=\"note\">Per benchmark, precision and device: our best variant against the best "
                     "vendor library (anchor, marked *) on the problem with the most work both ran, and the "
                     "ratio's geometric mean (min-max) over every problem both ran; OpenCL against CUDA the same "
                     "way. Where no anchor ran, the row of ours closest to its ceiling. Rows measured again in a "
                     "newer file count once, from the newer.</p>\n");
    pb__sb_printf(b, "<div><table class=\"summary\">\n<thead><tr><th>benchmark</th><th>precision</th><th>device</th>"
                     "<th>problem</th><th>our best</th><th>anchor</th><th>ours / anchor</th>"
                     "<th>over problems</th><th>OpenCL / CUDA</th><th>of ceiling</th><th>rows</th></tr></thead>"
                     "\n<tbody>\n");
    for (size_t i = 0; i < n; i++) {
        const struct pb_rp_summary_line *l = &lines[i];
        pb__sb_printf(b, "<tr><td class=\"t\"><a href=\"#f%zu\">", l->ours->file);
        pb__sb_escape(b, l->bench);
        pb__sb_printf(b, "</a></td><td class=\"t\">");
        pb__sb_escape(b, l->precision[0] ? l->precision : "-");
        pb__sb_printf(b, "</td><td class=\"t\">");
        pb__sb_escape(b, l->device);
        pb__sb_printf(b, "</td><td class=\"t\">");
        pb__sb_escape(b, short_problem(l->ours->problem));
        pb__sb_printf(b, "</td>");
        row_cell(b, l->ours, l->anchor);
        if (l->anchor)
            row_cell(b, l->anchor, l->ours);
        else
            pb__sb_printf(b, "<td class=\"t\">none ran</td>");
        char buf[96] = "-", r1[16], r2[16], r3[16];
        if (isfinite(l->ratio))
            snprintf(buf, sizeof buf, "%sx", ratio_text(l->ratio, r1, sizeof r1));
        pb__sb_printf(b, "<td%s>%s</td>", isfinite(l->ratio) && l->ratio < 1 ? " class=\"behind\"" : "", buf);
        snprintf(buf, sizeof buf, "-");
        if (l->compared > 1)
            snprintf(buf, sizeof buf, "%sx (%s-%s), %zu", ratio_text(l->geomean, r1, sizeof r1),
                     ratio_text(l->lo, r2, sizeof r2), ratio_text(l->hi, r3, sizeof r3), l->compared);
        pb__sb_printf(b, "<td>%s</td>", buf);
        snprintf(buf, sizeof buf, "-");
        if (l->twins)
            snprintf(buf, sizeof buf, "%sx, %zu", ratio_text(l->opencl_over_cuda, r1, sizeof r1), l->twins);
        pb__sb_printf(b, "<td>%s</td>", buf);
        snprintf(buf, sizeof buf, "-");
        if (isfinite(l->fraction))
            snprintf(buf, sizeof buf, "%.0f%%", l->fraction * 100);
        pb__sb_printf(b, "<td>%s</td>", buf);
        int len = snprintf(buf, sizeof buf, "%zu OK", l->ok);
        if (l->failed)
            len += snprintf(buf + len, sizeof buf - (size_t)len, ", %zu failed", l->failed);
        if (l->noisy)
            snprintf(buf + len, sizeof buf - (size_t)len, ", %zu noisy", l->noisy);
        pb__sb_printf(b, "<td class=\"t\">%s</td></tr>\n", buf);
    }
    pb__sb_printf(b, "</tbody></table></div>\n<p class=\"note\">over problems: geometric mean of ours / anchor "
                     "(lowest-highest), and how many problems; OpenCL / CUDA: the same for our best OpenCL "
                     "and CUDA variants, and how many problems; of ceiling: our best row's rate against the "
                     "ceiling that bounds it (see each table); noisy: repetitions varying more than %.0f%% "
                     "(cv).</p>\n<div class=\"charts\">\n", PB_RP_NOISY_CV * 100);
    ratio_chart(b, lines, n, false);
    ratio_chart(b, lines, n, true);
    pb__sb_printf(b, "</div>\n</section>\n");
}

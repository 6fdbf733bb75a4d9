/* parbench report and parbench plot: one self-contained HTML file (inline
 * SVG, inline CSS, no script) or one chart as SVG/PNG. */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "report/charts.h"
#include "report/cli_util.h"
#include "report/report.h"
#include "report/study.h"
#include "report/summary.h"

/* Where no ceilings file gave a device's copy ceiling, the best measured
 * device-to-device copy of the bandwidth benchmark stands in; a ceiling from
 * a file is shown as the file has it (rows above it say so). */
static pb_status derive_ceilings(struct pb_rp_set *set)
{
    for (size_t i = 0; i < set->n_rows; i++) {
        const struct pb_rp_row *r = &set->rows[i];
        if (!pb__rp_ok(r) || strcmp(r->bench, "bandwidth") || strcmp(r->variant, "d2d") || !(r->gbps > 0))
            continue;
        const struct pb_ceiling *have = pb__ceilings_find(&set->ceilings, r->backend, r->device);
        struct pb_ceiling c = {.copy_gbps = r->gbps, .read_gbps = NAN, .h2d_gbps = NAN, .d2h_gbps = NAN,
                               .fp32_gflops = NAN, .fp64_gflops = NAN};
        if (have) {
            if (isfinite(have->copy_gbps) && (!have->derived_copy || have->copy_gbps >= r->gbps))
                continue;
            c = *have;
            c.copy_gbps = r->gbps;
        }
        c.derived_copy = true;
        snprintf(c.backend, sizeof c.backend, "%s", r->backend);
        snprintf(c.device, sizeof c.device, "%s", r->device);
        pb_status st = pb__ceilings_put(&set->ceilings, &c);
        if (st != PB_OK)
            return st;
    }
    return PB_OK;
}

/* Loads every path into set (and a ceilings file when given); an exit code.
 * allow_empty: no rows is not an error (a study whose runs all failed). */
static int load_inputs(struct pb_rp_set *set, char **paths, int n, const char *ceilings, bool allow_empty)
{
    memset(set, 0, sizeof *set);
    for (int i = 0; i < n; i++) {
        if (pb__same_file_among(paths[i], paths, i)) /* the same file named twice: its rows once */
            continue;
        pb__clear_error();
        pb_status st = pb__rp_load(set, paths[i]);
        if (st != PB_OK)
            return pb__cli_fail(st);
    }
    if (ceilings) {
        struct pb_ceilings c;
        pb_status st = pb__ceilings_read(ceilings, &c);
        if (st == PB_ERR_NOT_FOUND)
            return pb__cli_die(PB_EXIT_ERROR, "cannot read %s: no such file", ceilings);
        for (size_t i = 0; st == PB_OK && i < c.n; i++)
            st = pb__ceilings_put(&set->ceilings, &c.dev[i]);
        pb__ceilings_free(&c);
        if (st != PB_OK)
            return pb__cli_fail(st);
    }
    if (set->n_rows == 0 && !allow_empty)
        return pb__cli_die(PB_EXIT_ERROR, "%s", "no result rows in the given files");
    pb_status st = derive_ceilings(set);
    return st == PB_OK ? PB_EXIT_OK : pb__cli_fail(st);
}

int pb__rp_load_all(struct pb_rp_set *set, char **paths, int n, const char *ceilings)
{
    return load_inputs(set, paths, n, ceilings, false);
}

/* ---- HTML ----------------------------------------------------------------------- */

static const char css[] =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}"
    "h1{font-size:24px}h2{font-size:19px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:36px}"
    ".ctx{color:#555;font-size:13px}.charts{display:flex;flex-wrap:wrap;gap:12px}"
    ".charts svg{border:1px solid #ddd;max-width:100%;height:auto}"
    "table{border-collapse:collapse;font-size:12px;margin-top:12px}"
    "th,td{border:1px solid #ddd;padding:2px 6px;text-align:right;white-space:nowrap}"
    "th{background:#f2f2f2;position:sticky;top:0}td.t{text-align:left}"
    "tr.FAILED td,tr.ERROR td{background:#fde2e2}tr.SKIP td,tr.UNSUPPORTED td{color:#888;background:#f7f7f7}"
    ".scroll{max-height:520px;overflow:auto;border:1px solid #eee}"
    "nav li{font-size:14px}.note{font-size:13px;color:#555}"
    "h3{font-size:16px;border-bottom:1px solid #e4e4e4;padding-bottom:3px;margin-top:28px}"
    "h2.study{font-size:21px;border-bottom:2px solid #999;margin-top:48px}"
    "td.noisy{background:#fff3c4}td.behind{color:#a40000}td.wrap{white-space:normal;max-width:760px}"
    ".superseded{background:#fff3c4;padding:4px 8px;font-size:13px}"
    "table.summary td{white-space:normal}nav ul ul{display:inline;padding:0}nav ul ul li{display:inline}"
    "nav ul ul li:not(:last-child)::after{content:\", \"}";

static void cell_text(struct pb_sbuf *b, const char *s, bool left)
{
    pb__sb_printf(b, "<td%s>", left ? " class=\"t\"" : "");
    pb__sb_escape(b, s);
    pb__sb_printf(b, "</td>");
}

/* fmt with %g keeps large numbers whole: 60000, not 6e+04. */
static void cell_num(struct pb_sbuf *b, double x, const char *fmt)
{
    if (!isfinite(x))
        pb__sb_printf(b, "<td>-</td>");
    else if (strchr(fmt, 'g') && fabs(x) >= 1e4 && fabs(x) < 1e15)
        pb__sb_printf(b, "<td>%.0f</td>", x);
    else
        pb__sb_printf(b, "<td>"), pb__sb_printf(b, fmt, x), pb__sb_printf(b, "</td>");
}

static bool any_finite(const struct pb_rp_row *rows, size_t n, size_t offset)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(*(const double *)((const char *)&rows[i] + offset)))
            return true;
    return false;
}

/* Notes of the "of ceiling" column, marked where they apply. */
enum { NOTE_TENSOR, NOTE_ONCHIP, NOTE_ABOVE, N_NOTES };
static const char *const fraction_notes[N_NOTES] = {
    [NOTE_TENSOR] = "FP64 on tensor cores (dmma; cuBLAS in double on A100/H100-class GPUs): no tensor-core peak is "
                    "measured, and the FMA peak is below what they reach, so no fraction is given.",
    [NOTE_ONCHIP] = "shared/local (on-chip) memory: no ceiling is measured for it (device memory's is far below), "
                    "so no fraction is given.",
    [NOTE_ABOVE] = "above the ceiling: ceilings are rates parbench ceilings measured (device memory with arrays "
                   "well past the caches), not datasheet peaks; problems small enough to stay in a cache, or a "
                   "ceiling run that was disturbed, go past them.",
};

static void fraction_cell(struct pb_sbuf *b, const struct pb_rp_set *set, const struct pb_rp_row *r, bool *used)
{
    struct pb_roof roof = pb__rp_roof(r);
    double fr = pb__rp_fraction(set, r);
    int note = -1;
    if (pb__rp_ok(r) && (roof.flops == PB_ROOF_TENSOR || roof.bytes == PB_ROOF_TENSOR))
        note = NOTE_TENSOR;
    else if (pb__rp_ok(r) && (roof.flops == PB_ROOF_ONCHIP || roof.bytes == PB_ROOF_ONCHIP))
        note = NOTE_ONCHIP;
    else if (fr > 1)
        note = NOTE_ABOVE;
    pb__sb_printf(b, "<td>");
    if (isfinite(fr))
        pb__sb_printf(b, "%.1f%%", fr * 100);
    else
        pb__sb_printf(b, "-");
    if (note >= 0) {
        pb__sb_printf(b, "<sup>%c</sup>", 'a' + note);
        used[note] = true;
    }
    pb__sb_printf(b, "</td>");
}

static void results_table(struct pb_sbuf *b, const struct pb_rp_set *set, const struct pb_rp_file *f)
{
    const struct pb_rp_row *rows = &set->rows[f->first_row];
    size_t n = f->n_rows;
    bool gflops = any_finite(rows, n, offsetof(struct pb_rp_row, gflops)),
         gbps = any_finite(rows, n, offsetof(struct pb_rp_row, gbps)),
         speedup = any_finite(rows, n, offsetof(struct pb_rp_row, speedup));
    bool frac = any_finite(rows, n, offsetof(struct pb_rp_row, fraction)), used[N_NOTES] = {false}, noisy = false;
    bool power = any_finite(rows, n, offsetof(struct pb_rp_row, power_w)),
         gflops_w = any_finite(rows, n, offsetof(struct pb_rp_row, gflops_per_w)),
         gbps_w = any_finite(rows, n, offsetof(struct pb_rp_row, gbps_per_w)),
         clocks = any_finite(rows, n, offsetof(struct pb_rp_row, sm_mhz)), throttle = false;
    for (size_t i = 0; i < n; i++)
        throttle |= rows[i].throttle[0] != '\0';
    /* Without a fraction column, the report's ceilings give one. */
    for (size_t i = 0; i < n && !frac; i++)
        frac = pb__ceilings_find(&set->ceilings, rows[i].backend, rows[i].device) != NULL;
    pb__sb_printf(b, "<div class=\"scroll\"><table>\n<thead><tr><th>backend</th><th>variant</th><th>device</th>"
                     "<th>precision</th><th>threads</th>");
    for (size_t p = 0; p < rows[0].n_params; p++) {
        pb__sb_printf(b, "<th>");
        pb__sb_escape(b, rows[0].params[p].key);
        pb__sb_printf(b, "</th>");
    }
    pb__sb_printf(b, "<th>problem</th><th>status</th><th>reps</th><th>median</th><th>min</th><th>cv</th>");
    if (gflops)
        pb__sb_printf(b, "<th>GFLOP/s</th>");
    if (gbps)
        pb__sb_printf(b, "<th>GB/s</th>");
    if (frac)
        pb__sb_printf(b, "<th>of ceiling</th>");
    if (speedup)
        pb__sb_printf(b, "<th>speed-up</th>");
    if (power)
        pb__sb_printf(b, "<th>power (W)</th>");
    if (gflops_w)
        pb__sb_printf(b, "<th>GFLOP/s per W</th>");
    if (gbps_w)
        pb__sb_printf(b, "<th>GB/s per W</th>");
    if (clocks)
        pb__sb_printf(b, "<th>SM / mem MHz</th>");
    if (throttle)
        pb__sb_printf(b, "<th>throttle</th>");
    pb__sb_printf(b, "<th>max error</th><th>check</th>");
    for (size_t e = 0; e < rows[0].n_extras; e++) {
        pb__sb_printf(b, "<th>");
        pb__sb_escape(b, rows[0].extras[e].key);
        pb__sb_printf(b, "</th>");
    }
    pb__sb_printf(b, "<th>reason</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < n; i++) {
        const struct pb_rp_row *r = &rows[i];
        char buf[64];
        pb__sb_printf(b, "<tr class=\"");
        pb__sb_escape(b, r->status);
        pb__sb_printf(b, "\">");
        snprintf(buf, sizeof buf, "%s%s", r->variant, r->anchor ? "*" : "");
        cell_text(b, r->backend, true);
        cell_text(b, buf, true);
        cell_text(b, r->device, true);
        cell_text(b, r->precision[0] ? r->precision : "-", true);
        snprintf(buf, sizeof buf, "%d", r->threads);
        cell_text(b, r->threads ? buf : "-", false);
        for (size_t p = 0; p < rows[0].n_params; p++) {
            const struct pb_rp_kv *kv = pb__rp_find(r, rows[0].params[p].key);
            cell_text(b, kv ? kv->text : "", false);
        }
        cell_text(b, r->problem, true);
        cell_text(b, r->status, true);
        cell_num(b, r->reps, "%.0f");
        pb__rp_fmt_time(r->median, buf, sizeof buf);
        cell_text(b, buf, false);
        pb__rp_fmt_time(r->min, buf, sizeof buf);
        cell_text(b, buf, false);
        if (pb__rp_noisy(r)) {
            pb__sb_printf(b, "<td class=\"noisy\">%.1f%%<sup>n</sup></td>", r->cv * 100);
            noisy = true;
        } else {
            cell_num(b, r->cv * 100, "%.1f%%");
        }
        if (gflops)
            cell_num(b, r->gflops, "%.4g");
        if (gbps)
            cell_num(b, r->gbps, "%.4g");
        if (frac)
            fraction_cell(b, set, r, used);
        if (speedup)
            cell_num(b, r->speedup, "%.3g");
        if (power)
            cell_num(b, r->power_w, "%.4g");
        if (gflops_w)
            cell_num(b, r->gflops_per_w, "%.4g");
        if (gbps_w)
            cell_num(b, r->gbps_per_w, "%.4g");
        if (clocks) {
            char sm[24] = "-", mem[24] = "-";
            if (isfinite(r->sm_mhz))
                snprintf(sm, sizeof sm, "%.0f", r->sm_mhz);
            if (isfinite(r->mem_mhz))
                snprintf(mem, sizeof mem, "%.0f", r->mem_mhz);
            snprintf(buf, sizeof buf, "%s / %s", sm, mem);
            cell_text(b, buf, false);
        }
        if (throttle)
            cell_text(b, r->throttle[0] ? r->throttle : "-", true);
        cell_num(b, r->err_max, "%.2g");
        cell_text(b, r->check[0] ? r->check : "-", true);
        for (size_t e = 0; e < rows[0].n_extras; e++) {
            const struct pb_rp_kv *kv = pb__rp_find(r, rows[0].extras[e].key);
            if (kv && isfinite(kv->num))
                cell_num(b, kv->num, "%.4g");
            else
                cell_text(b, kv ? kv->text : "", true);
        }
        cell_text(b, r->reason, true);
        pb__sb_printf(b, "</tr>\n");
    }
    pb__sb_printf(b, "</tbody></table></div>\n");
    if (noisy)
        pb__sb_printf(b, "<p class=\"note\"><sup>n</sup> noisy: the repetitions vary by more than %.0f%% (cv), so "
                         "the median is uncertain; more --reps, a longer problem or a quieter machine narrow "
                         "it.</p>\n", PB_RP_NOISY_CV * 100);
    if (power || clocks)
        pb__sb_printf(b, "<p class=\"note\">power: the mean over the timed repetitions (checking left out), from the "
                         "GPU's energy counter or sampled power (NVML) or the CPU packages' and DRAM's RAPL "
                         "counters; per W: the rate over that power, i.e. the work per joule. Clocks are the "
                         "mean of samples taken every 15 ms; throttle names what held the clocks back while "
                         "measuring (power cap, thermal, sync boost), none when nothing did.</p>\n");
    if (!frac)
        return;
    pb__sb_printf(b, "<p class=\"note\">of ceiling: each rate against the ceiling that bounds it (parbench ceilings): "
                     "GFLOP/s against the FMA peak of its precision; GB/s of memory-bound kernels against device "
                     "memory (the larger of copy and read); transfers against the link of their direction, data "
                     "that goes to the device and back against both directions together; where a benchmark has "
                     "both, the closer (the roofline). Rates with no measured ceiling (peer links, networks) "
                     "have none.");
    for (int k = 0; k < N_NOTES; k++)
        if (used[k])
            pb__sb_printf(b, "<br/><sup>%c</sup> %s", 'a' + k, fraction_notes[k]);
    pb__sb_printf(b, "</p>\n");
}

static void status_counts(struct pb_sbuf *b, const struct pb_rp_set *set, const struct pb_rp_file *f)
{
    static const char *const names[] = {"OK", "FAILED", "SKIP", "UNSUPPORTED", "ERROR"};
    pb__sb_printf(b, "<p class=\"note\">%zu row%s:", f->n_rows, f->n_rows == 1 ? "" : "s");
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t c = 0;
        for (size_t i = 0; i < f->n_rows; i++)
            c += strcmp(set->rows[f->first_row + i].status, names[k]) == 0;
        if (c)
            pb__sb_printf(b, " %zu %s", c, names[k]);
    }
    pb__sb_printf(b, ". Charts show OK rows only; rates come from the median time; every OK row was "
                     "verified against the CPU reference unless its check says none.</p>\n");
}

static void ceilings_table(struct pb_sbuf *b, const struct pb_rp_set *set)
{
    pb__sb_printf(b, "<h2 id=\"ceilings\">Ceilings</h2>\n<table><thead><tr><th>backend</th><th>device</th>"
                     "<th>copy GB/s</th><th>read GB/s</th><th>H2D GB/s</th><th>D2H GB/s</th>"
                     "<th>fp32 GFLOP/s</th><th>fp64 GFLOP/s</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < set->ceilings.n; i++) {
        const struct pb_ceiling *c = &set->ceilings.dev[i];
        pb__sb_printf(b, "<tr>");
        cell_text(b, c->backend, true);
        cell_text(b, c->device, true);
        if (c->derived_copy)
            pb__sb_printf(b, "<td>%.4g<sup>d</sup></td>", c->copy_gbps);
        else
            cell_num(b, c->copy_gbps, "%.4g");
        cell_num(b, c->read_gbps, "%.4g");
        cell_num(b, c->h2d_gbps, "%.4g");
        cell_num(b, c->d2h_gbps, "%.4g");
        cell_num(b, c->fp32_gflops, "%.4g");
        cell_num(b, c->fp64_gflops, "%.4g");
        pb__sb_printf(b, "</tr>\n");
    }
    pb__sb_printf(b, "</tbody></table>\n<p class=\"note\">As the ceilings files among the inputs give them "
                     "(parbench ceilings); <sup>d</sup> a copy ceiling no file gave: the best device-to-device "
                     "copy of the bandwidth results.</p>\n");
}

/* What the page is made of, besides the rows. */
struct page {
    const struct pb_rp_set *set;
    const struct pb_rp_charts *ch;
    size_t *superseded; /* per row: the file of a newer measurement, or SIZE_MAX */
    struct pb_rp_summary_line *lines;
    size_t n_lines;
    size_t *order; /* the files, those of the studies first, in the studies' order */
};

/* The study whose section holds a file: that of its study-NNN folder, else
 * the first that runs its benchmark; SIZE_MAX: none. */
static size_t file_study(const struct pb_rp_file *f)
{
    const char *id = f->study[0] && pb__study_find(f->study) ? f->study
                     : f->bench[0]                            ? pb__rp_study_of(f->bench, 0)
                                                              : NULL;
    return id ? (size_t)atoi(id) : SIZE_MAX;
}

static size_t comparison_study(const struct pb_rp_comparison *c)
{
    return pb__study_find(c->study) ? (size_t)atoi(c->study) : SIZE_MAX;
}

/* Whether the table of contents lists file f under study id: its folder's
 * study, else every study that runs its benchmark. */
static bool listed_under(const struct pb_rp_file *f, const char *id)
{
    if (f->study[0] && pb__study_find(f->study))
        return strcmp(f->study, id) == 0;
    for (size_t k = 0; f->bench[0]; k++) {
        const char *of = pb__rp_study_of(f->bench, k);
        if (!of)
            return false;
        if (strcmp(of, id) == 0)
            return true;
    }
    return false;
}

static const struct pb_rp_set *sort_set; /* for by_study: qsort has no context argument */

static int by_study(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    size_t sx = file_study(&sort_set->files[x]), sy = file_study(&sort_set->files[y]);
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return (x > y) - (x < y);
}

/* Properties worth a line of context, per kind of device. */
static const char *const device_facts[] = {
    "compute_capability", "multiprocessors", "global_memory", "gpu_clock", "memory_clock", "pcie_link", "ecc",
    "copy_engines", "driver_version", "runtime_version", "platform", "platform_version", "device_version",
    "compute_units", "max_clock", "cores", "threads", "simd", "memory", "cache_l3"};

static void devices_section(struct pb_sbuf *b, const struct pb_rp_set *set)
{
    pb__sb_printf(b, "<section>\n<h2 id=\"devices\">Devices</h2>\n");
    if (!set->n_devices) {
        pb__sb_printf(b, "<p class=\"note\">No devices file among the inputs: <code>parbench devices --format json "
                         "&gt; devices.json</code> on the machine that ran them, beside the results, puts the "
                         "driver, runtime, clocks and unit counts here.</p>\n</section>\n");
        return;
    }
    pb__sb_printf(b, "<table><thead><tr><th>backend</th><th>device</th><th>kind</th><th>properties</th></tr></thead>"
                     "<tbody>\n");
    for (size_t i = 0; i < set->n_devices; i++) {
        const struct pb_rp_device *d = &set->devices[i];
        pb__sb_printf(b, "<tr>");
        cell_text(b, d->backend, true);
        cell_text(b, d->name, true);
        cell_text(b, d->kind, true);
        pb__sb_printf(b, "<td class=\"t wrap\">");
        bool first = true;
        for (size_t k = 0; k < sizeof device_facts / sizeof device_facts[0]; k++)
            for (size_t p = 0; p < d->n_props; p++)
                if (strcmp(d->props[p].key, device_facts[k]) == 0) {
                    pb__sb_printf(b, "%s", first ? "" : "; ");
                    pb__sb_escape(b, d->props[p].key);
                    pb__sb_printf(b, ": ");
                    pb__sb_escape(b, d->props[p].text);
                    first = false;
                }
        pb__sb_printf(b, "</td></tr>\n");
    }
    pb__sb_printf(b, "</tbody></table>\n</section>\n");
}

static void nav_file(struct pb_sbuf *b, const struct page *pg, size_t i)
{
    const struct pb_rp_file *f = &pg->set->files[i];
    pb__sb_printf(b, "<li><a href=\"#f%zu\">", i);
    pb__sb_escape(b, f->bench[0] ? f->bench : "results");
    pb__sb_printf(b, " — ");
    pb__sb_escape(b, f->name);
    pb__sb_printf(b, "</a></li>");
}

/* The table of contents lists the comparisons, then the files: item i is
 * comparison i, or file i - n_comparisons. */
static void nav_item(struct pb_sbuf *b, const struct page *pg, size_t i)
{
    if (i >= pg->set->n_comparisons) {
        nav_file(b, pg, i - pg->set->n_comparisons);
        return;
    }
    pb__sb_printf(b, "<li><a href=\"#c%zu\">their figures beside ours — ", i);
    pb__sb_escape(b, pg->set->comparisons[i].name);
    pb__sb_printf(b, "</a></li>");
}

static size_t item_study(const struct pb_rp_set *set, size_t i)
{
    return i < set->n_comparisons ? comparison_study(&set->comparisons[i])
                                  : file_study(&set->files[i - set->n_comparisons]);
}

/* The table of contents: the studies with their comparisons and files, then
 * the rest. */
static void nav(struct pb_sbuf *b, const struct page *pg, bool study_preamble)
{
    const struct pb_rp_set *set = pg->set;
    pb__sb_printf(b, "<nav><ul>\n<li><a href=\"#summary\">summary</a></li>\n");
    if (study_preamble)
        pb__sb_printf(b, "<li><a href=\"#study\">the study's figures beside ours</a></li>\n");
    pb__sb_printf(b, "<li><a href=\"#devices\">devices</a></li>\n");
    for (size_t s = 0; s < pb__study_count(); s++) {
        const struct pb_study *st = pb__study_at(s);
        size_t id = (size_t)atoi(st->id);
        bool heading = false, any = false; /* a section opens with this study's heading; a line lists it */
        for (size_t i = 0; i < set->n_comparisons + set->n_files && !heading; i++)
            heading = item_study(set, i) == id;
        for (size_t i = 0; i < set->n_comparisons + set->n_files; i++) {
            if (i < set->n_comparisons ? item_study(set, i) != id
                                       : !listed_under(&set->files[i - set->n_comparisons], st->id))
                continue;
            if (!any) {
                if (heading)
                    pb__sb_printf(b, "<li><a href=\"#study%s\">study %s</a>: ", st->id, st->id);
                else
                    pb__sb_printf(b, "<li>study %s: ", st->id);
                pb__sb_escape(b, st->title);
                pb__sb_printf(b, ": <ul>");
            }
            any = true;
            nav_item(b, pg, i);
        }
        if (any)
            pb__sb_printf(b, "</ul></li>\n");
    }
    bool other = false;
    for (size_t i = 0; i < set->n_comparisons + set->n_files; i++) {
        if (item_study(set, i) != SIZE_MAX)
            continue;
        if (!other)
            pb__sb_printf(b, "<li>beyond the studies: <ul>");
        other = true;
        nav_item(b, pg, i);
    }
    if (other)
        pb__sb_printf(b, "</ul></li>\n");
    pb__sb_printf(b, "<li><a href=\"#roofline\">roofline</a></li>\n");
    for (size_t c = 0; c < pg->ch->n; c++)
        if (pg->ch->file[c] == PB_RP_SCALING) {
            pb__sb_printf(b, "<li><a href=\"#scaling\">scaling</a></li>\n");
            break;
        }
    if (set->ceilings.n)
        pb__sb_printf(b, "<li><a href=\"#ceilings\">ceilings</a></li>\n");
    pb__sb_printf(b, "</ul></nav>\n");
}

/* Rows of file fi measured again in a newer file: how many, and where. */
static void superseded_note(struct pb_sbuf *b, const struct page *pg, size_t fi)
{
    const struct pb_rp_file *f = &pg->set->files[fi];
    size_t count = 0, newer = SIZE_MAX;
    for (size_t i = 0; pg->superseded && i < f->n_rows; i++)
        if (pg->superseded[f->first_row + i] != SIZE_MAX) {
            count++;
            newer = pg->superseded[f->first_row + i];
        }
    if (!count)
        return;
    const struct pb_rp_file *nf = &pg->set->files[newer];
    if (count == f->n_rows)
        pb__sb_printf(b, "<p class=\"superseded\">Superseded: %s measured again in a newer file (<a href=\"#f%zu\">",
                      count == 1 ? "its row was" : "all its rows were", newer);
    else
        pb__sb_printf(b, "<p class=\"superseded\">Superseded: %zu of its %zu rows %s measured again in a newer "
                         "file (<a href=\"#f%zu\">", count, f->n_rows, count == 1 ? "was" : "were", newer);
    pb__sb_escape(b, nf->name);
    pb__sb_printf(b, "</a>, ");
    pb__sb_escape(b, nf->date);
    pb__sb_printf(b, "%s); the summary uses the newer.</p>\n", count > 1 ? ", among others" : "");
}

static void file_section(struct pb_sbuf *b, const struct page *pg, size_t i)
{
    const struct pb_rp_set *set = pg->set;
    const struct pb_rp_file *f = &set->files[i];
    pb__sb_printf(b, "<section>\n<h3 id=\"f%zu\">", i);
    pb__sb_escape(b, f->bench[0] ? f->bench : "results");
    pb__sb_printf(b, " — ");
    pb__sb_escape(b, f->name);
    pb__sb_printf(b, "</h3>\n<p class=\"ctx\">");
    const char *labels[] = {"date", "commit", "host", "cpu", "command"};
    const char *values[] = {f->date, f->commit, f->host, f->cpu, f->command};
    for (size_t k = 0; k < 5; k++)
        if (values[k] && values[k][0]) {
            pb__sb_printf(b, "%s: ", labels[k]);
            pb__sb_escape(b, values[k]);
            pb__sb_printf(b, "; ");
        }
    pb__sb_printf(b, "</p>\n");
    superseded_note(b, pg, i);
    status_counts(b, set, f);
    pb__sb_printf(b, "<div class=\"charts\">\n");
    for (size_t c = 0; c < pg->ch->n; c++)
        if (pg->ch->file[c] == i)
            pb__chart_svg(&pg->ch->charts[c], b);
    pb__sb_printf(b, "</div>\n");
    if (f->n_rows)
        results_table(b, set, f);
    pb__sb_printf(b, "</section>\n");
}

/* Devices of rooflines drawn without roofs: no ceilings were given for them. */
static void roofline_hint(struct pb_sbuf *b, const struct pb_rp_set *set)
{
    bool missing = false;
    for (size_t i = 0; i < set->n_rows && !missing; i++) {
        const struct pb_rp_row *r = &set->rows[i];
        missing = pb__rp_ok(r) && r->gflops > 0 && r->gbps > 0 &&
                  !pb__ceilings_find(&set->ceilings, r->backend, r->device);
    }
    if (missing)
        pb__sb_printf(b, "<p class=\"note\">Some devices have no roofs: no ceilings were given for them. "
                         "<code>parbench ceilings -o ceilings.json</code> on the machine that ran the results, "
                         "then the file among the report's inputs (or --ceilings), draws them.</p>\n");
}

/* The files of a study under its name, what it measured, and how to set its
 * published figures beside ours. */
static void study_heading(struct pb_sbuf *b, size_t study)
{
    char id[24];
    snprintf(id, sizeof id, "%03zu", study);
    const struct pb_study *st = study == SIZE_MAX ? NULL : pb__study_find(id);
    if (!st) {
        pb__sb_printf(b, "<h2 class=\"study\">Beyond the studies</h2>\n");
        return;
    }
    pb__sb_printf(b, "<h2 class=\"study\" id=\"study%s\">Study %s: ", st->id, st->id);
    pb__sb_escape(b, st->title);
    pb__sb_printf(b, "</h2>\n<p class=\"note\">");
    pb__sb_escape(b, st->summary);
    pb__sb_printf(b, " <code>parbench study %s</code> runs its experiments and sets its published figures beside "
                     "ours.</p>\n", st->id);
}

/* A comparison.csv read back: the study's published figures beside ours. */
static void comparison_section(struct pb_sbuf *b, const struct pb_rp_set *set, size_t i)
{
    const struct pb_rp_comparison *c = &set->comparisons[i];
    pb__sb_printf(b, "<section>\n<h3 id=\"c%zu\">Their figures beside ours — ", i);
    pb__sb_escape(b, c->name);
    pb__sb_printf(b, "</h3>\n");
    const struct pb_study *st = pb__study_find(c->study);
    if (st || c->copies[0]) {
        pb__sb_printf(b, "<p class=\"ctx\">");
        if (st) {
            pb__sb_printf(b, "original: ");
            pb__sb_escape(b, st->original);
        }
        if (c->copies[0]) {
            pb__sb_printf(b, "%sthe same figures are also in ", st ? "; " : "");
            pb__sb_escape(b, c->copies);
        }
        pb__sb_printf(b, "</p>\n");
    }
    struct pb_study_line *lines = calloc(c->n_figs ? c->n_figs : 1, sizeof *lines);
    if (!lines) {
        b->failed = true;
        return;
    }
    const char *original = st ? strrchr(st->original, '/') : NULL;
    original = original ? original + 1 : st ? st->original : NULL;
    for (size_t k = 0; k < c->n_figs; k++) {
        const struct pb_rp_figure *f = &c->figs[k];
        /* The file's source names the original first, as the line above does. */
        const char *source = f->source;
        size_t n = original ? strlen(original) : 0;
        if (n && strncmp(source, original, n) == 0 && strncmp(source + n, ", ", 2) == 0)
            source += n + 2;
        /* The file keeps 9 digits; the study's table says whether theirs is a ratio, shown to 4. */
        bool exact = true;
        for (size_t j = 0; st && j < st->n_figs; j++)
            if (strcmp(st->figs[j].what, f->figure) == 0)
                exact = st->figs[j].per == 0;
        lines[k] = (struct pb_study_line){f->figure, source, f->their_device, f->unit, f->our_backend,
                                          f->our_device, f->note, f->theirs, f->ours, f->ratio, exact,
                                          f->measured, f->verdict};
    }
    pb__study_table_html(b, lines, c->n_figs);
    free(lines);
    pb__sb_printf(b, "</section>\n");
}

/* One line near the top: how many published figures the comparisons hold, and
 * how their conclusions fared. */
static void comparisons_count(struct pb_sbuf *b, const struct pb_rp_set *set)
{
    if (!set->n_comparisons)
        return;
    size_t figs = 0, measured = 0, agree = 0, contradict = 0;
    for (size_t i = 0; i < set->n_comparisons; i++)
        for (size_t k = 0; k < set->comparisons[i].n_figs; k++) {
            const struct pb_rp_figure *f = &set->comparisons[i].figs[k];
            figs++;
            measured += f->measured;
            agree += f->verdict > 0;
            contradict += f->verdict < 0;
        }
    pb__sb_printf(b, "<p class=\"ctx\" id=\"figures\">The studies' published figures: %zu compared with ours in %zu "
                     "comparison%s, %zu measured here; of the conclusions tested, %zu agree%s and %zu contradict%s "
                     "the study's.</p>\n",
                  figs, set->n_comparisons, set->n_comparisons == 1 ? "" : "s", measured, agree,
                  agree == 1 ? "s" : "", contradict, contradict == 1 ? "s" : "");
}

static void render_html(struct pb_sbuf *b, const struct page *pg, const char *title, const char *preamble)
{
    const struct pb_rp_set *set = pg->set;
    const struct pb_rp_charts *ch = pg->ch;
    pb__sb_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>");
    pb__sb_escape(b, title);
    pb__sb_printf(b, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
    pb__sb_escape(b, title);
    pb__sb_printf(b, "</h1>\n<p class=\"ctx\">parbench %s (%s); %zu result file%s, %zu row%s.</p>\n", pb_version(),
                  pb_git_commit(), set->n_files, set->n_files == 1 ? "" : "s", set->n_rows,
                  set->n_rows == 1 ? "" : "s");
    comparisons_count(b, set);
    nav(b, pg, preamble != NULL);
    if (preamble)
        pb__sb_printf(b, "%s", preamble);
    pb__rp_summary_html(b, set, pg->lines, pg->n_lines);
    devices_section(b, set);
    /* Per study (in the studies' order, then the rest): its comparisons, then its files. */
    for (size_t s = 0; s <= pb__study_count(); s++) {
        size_t study = s < pb__study_count() ? (size_t)atoi(pb__study_at(s)->id) : SIZE_MAX;
        bool any = false;
        for (size_t c = 0; c < set->n_comparisons; c++)
            if (comparison_study(&set->comparisons[c]) == study) {
                if (!any)
                    study_heading(b, study);
                any = true;
                comparison_section(b, set, c);
            }
        for (size_t k = 0; k < set->n_files; k++)
            if (file_study(&set->files[pg->order[k]]) == study) {
                if (!any)
                    study_heading(b, study);
                any = true;
                file_section(b, pg, pg->order[k]);
            }
    }
    pb__sb_printf(b, "<section>\n<h2 id=\"roofline\">Roofline</h2>\n<p class=\"note\">Every OK row with both "
                     "GFLOP/s and GB/s, placed at its arithmetic intensity (the benchmark's FLOP count over "
                     "its byte count). Roofs: min(FMA peak, intensity x memory ceiling) of the device, drawn "
                     "when its ceilings were measured (parbench ceilings).</p>\n");
    roofline_hint(b, set);
    pb__sb_printf(b, "<div class=\"charts\">\n");
    size_t roofs = 0;
    for (size_t c = 0; c < ch->n; c++)
        if (ch->file[c] == PB_RP_ROOFLINE) {
            pb__chart_svg(&ch->charts[c], b);
            roofs++;
        }
    if (!roofs)
        pb__sb_printf(b, "<p class=\"note\">No row reports both GFLOP/s and GB/s.</p>\n");
    pb__sb_printf(b, "</div>\n</section>\n");
    bool scaling = false;
    for (size_t c = 0; c < ch->n; c++)
        scaling |= ch->file[c] == PB_RP_SCALING;
    if (scaling) {
        pb__sb_printf(b, "<section>\n<h2 id=\"scaling\">Scaling</h2>\n<p class=\"note\">Runs of one problem at "
                         "several rank counts (the rows for all ranks): parallel efficiency against the fewest "
                         "ranks measured; parbench scaling prints the tables, with the compute and "
                         "communication split.</p>\n<div class=\"charts\">\n");
        for (size_t c = 0; c < ch->n; c++)
            if (ch->file[c] == PB_RP_SCALING)
                pb__chart_svg(&ch->charts[c], b);
        pb__sb_printf(b, "</div>\n</section>\n");
    }
    if (set->ceilings.n)
        ceilings_table(b, set);
    pb__sb_printf(b, "</body>\n</html>\n");
}

static int write_text(const char *path, const struct pb_sbuf *b)
{
    if (b->failed)
        return pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    bool ok = f && fwrite(b->s, 1, b->len, f) == b->len;
    if (f && f != stdout && fclose(f) != 0)
        ok = false;
    if (!ok)
        return pb__cli_die(PB_EXIT_ERROR, "cannot write %s: %s", path, strerror(errno));
    return PB_EXIT_OK;
}

static int report_write(char **inputs, int n, const char *ceilings, const char *title, const char *preamble,
                        const char *out)
{
    struct pb_rp_set set = {0};
    struct pb_rp_charts ch = {0};
    int rc = load_inputs(&set, inputs, n, ceilings, true);
    /* Comparisons alone make a report; a study's report may have no rows. */
    if (rc == PB_EXIT_OK && !set.n_rows && !set.n_comparisons && !preamble)
        rc = pb__cli_die(PB_EXIT_ERROR, "%s", "no result rows in the given files");
    if (rc == PB_EXIT_OK) {
        pb_status st = pb__rp_charts_build(&set, &ch);
        if (st != PB_OK)
            rc = pb__cli_fail(st);
    }
    struct page pg = {.set = &set, .ch = &ch};
    if (rc == PB_EXIT_OK) {
        pb_status st = pb__rp_superseded(&set, &pg.superseded);
        if (st == PB_OK)
            st = pb__rp_summarize(&set, pg.superseded, &pg.lines, &pg.n_lines);
        if (st == PB_OK && !(pg.order = malloc((set.n_files ? set.n_files : 1) * sizeof *pg.order)))
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
        if (st != PB_OK)
            rc = pb__cli_fail(st);
    }
    if (rc == PB_EXIT_OK) {
        for (size_t i = 0; i < set.n_files; i++)
            pg.order[i] = i;
        sort_set = &set;
        qsort(pg.order, set.n_files, sizeof *pg.order, by_study);
        struct pb_sbuf b = {0};
        render_html(&b, &pg, title, preamble);
        rc = write_text(out, &b);
        pb__sb_free(&b);
    }
    free(pg.superseded);
    free(pg.lines);
    free(pg.order);
    pb__rp_charts_free(&ch);
    pb__rp_free(&set);
    return rc;
}

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcmp(path + n - e, ext) == 0;
}

static void report_help(FILE *f)
{
    fprintf(f, "usage: parbench report RESULTS... -o report.html [options]\n\n"
               "One self-contained HTML file (inline SVG charts, no script, no network) from parbench\n"
               "result files (.json or .csv). A directory adds the result files in it and in its\n"
               "folders, read recursively (up to %d levels; hidden folders and links to folders are\n"
               "not entered), each named by its path below the directory; files of a folder named\n"
               "study-NNN go under that study. A study's comparison.csv (parbench study) opens its\n"
               "study's section as a table of their figures beside ours, with the verdicts counted\n"
               "at the top. Per file: the rate against the parameter that varies, one series per\n"
               "backend/variant, ceilings drawn in; then the table with statistics and verification\n"
               "status (FAILED and SKIP rows are listed, never plotted); then a roofline per device.\n"
               "\noptions:\n"
               "  -o, --out FILE          the HTML file to write (- = standard output)\n"
               "  --ceilings FILE         ceilings to draw (a ceilings file among RESULTS works too)\n"
               "  --title TEXT            the page title (default \"parbench report\")\n"
               "\nexit status: 0 written, 2 usage error, 3 a file could not be read or written.\n",
            PB_RP_MAX_DEPTH);
}

int pb__cmd_report(int argc, char **argv)
{
    const char *out = NULL, *ceilings = NULL, *title = "parbench report";
    char **inputs = calloc((size_t)argc, sizeof *inputs);
    int n_inputs = 0;
    if (!inputs)
        return pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
    int rc = PB_EXIT_OK;
    for (int i = 1; i < argc && rc == PB_EXIT_OK; i++) {
        const char *v;
        if (pb__cli_is_help(argv[i])) {
            report_help(stdout);
            free(inputs);
            return PB_EXIT_OK;
        }
        if (pb__cli_value(argc, argv, &i, "out", 'o', &v, &rc))
            out = v;
        else if (pb__cli_value(argc, argv, &i, "ceilings", 0, &v, &rc))
            ceilings = v;
        else if (pb__cli_value(argc, argv, &i, "title", 0, &v, &rc))
            title = v;
        else if (rc == PB_EXIT_OK && argv[i][0] == '-' && argv[i][1])
            rc = pb__cli_die(PB_EXIT_USAGE, "unknown option '%s' for report (see parbench report --help)", argv[i]);
        else if (rc == PB_EXIT_OK)
            inputs[n_inputs++] = argv[i];
    }
    /* Nothing given: the usage. Something given: one line naming what is
     * missing, not the whole usage to search it in. */
    if (rc == PB_EXIT_OK && argc < 2) {
        report_help(stderr);
        rc = PB_EXIT_USAGE;
    } else if (rc == PB_EXIT_OK && (!n_inputs || !out)) {
        rc = pb__cli_die(PB_EXIT_USAGE, "report needs %s (usage: parbench report RESULTS... -o report.html)",
                         !n_inputs ? "result files or directories" : "-o FILE, the HTML file to write");
    } else if (rc == PB_EXIT_OK && pb__same_file_among(out, inputs, n_inputs)) {
        rc = pb__cli_die(PB_EXIT_USAGE, "report: -o %s is one of the result files read; it would be overwritten",
                         out);
    } else if (rc == PB_EXIT_OK && (has_ext(out, ".csv") || has_ext(out, ".json") || has_ext(out, ".svg") ||
                                    has_ext(out, ".png") || has_ext(out, ".txt") || has_ext(out, ".pdf"))) {
        rc = pb__cli_die(PB_EXIT_USAGE, "report: -o %s: the report is HTML (.html); parbench plot writes a chart "
                         "as .svg or .png", out);
    }
    if (rc == PB_EXIT_OK)
        rc = report_write(inputs, n_inputs, ceilings, title, NULL, out);
    free(inputs);
    return rc;
}

int pb__report_write(char **inputs, int n, const char *title, const char *preamble, const char *out)
{
    return report_write(inputs, n, NULL, title, preamble, out);
}

/* ---- plot ------------------------------------------------------------------------ */

static void plot_help(FILE *f)
{
    fprintf(f, "usage: parbench plot RESULTS... -o FILE.svg|FILE.png [options]\n\n"
               "One chart of the report (the first unless --chart says which) as SVG, or as PNG through\n"
               "rsvg-convert (librsvg2-bin) when it is installed.\n\noptions:\n"
               "  -o, --out FILE          .svg or .png\n"
               "  --chart N               the N-th chart (1 = first); --list shows them\n"
               "  --list                  list the charts and exit\n"
               "  --ceilings FILE         ceilings to draw\n"
               "\nexit status: 0 written, 2 usage error, 3 a file could not be read, written or converted.\n");
}

/* SVG -> PNG through rsvg-convert, found on PATH. */
static int svg_to_png(const struct pb_sbuf *svg, const char *png)
{
    /* rsvg-convert's own error would come first, in its words: say it here, once */
    char where[1024];
    snprintf(where, sizeof where, "%s", png);
    if (access(dirname(where), W_OK) != 0)
        return pb__cli_die(PB_EXIT_ERROR, "cannot write %s: %s", png, strerror(errno));
    const char *dir = getenv("TMPDIR");
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s/parbench-plot-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return pb__cli_die(PB_EXIT_ERROR, "cannot create a temporary file: %s", strerror(errno));
    bool ok = write(fd, svg->s, svg->len) == (ssize_t)svg->len;
    close(fd);
    int rc = PB_EXIT_OK;
    if (!ok) {
        rc = pb__cli_die(PB_EXIT_ERROR, "cannot write %s: %s", tmp, strerror(errno));
    } else {
        char *args[] = {"rsvg-convert", "-b", "white", "-o", (char *)png, tmp, NULL};
        pid_t pid;
        extern char **environ;
        int err = posix_spawnp(&pid, "rsvg-convert", NULL, NULL, args, environ), status = 0;
        if (err != 0)
            rc = pb__cli_die(PB_EXIT_ERROR, "PNG output needs rsvg-convert (Debian: librsvg2-bin), "
                                            "not found: %s; write .svg instead", strerror(err));
        else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            rc = pb__cli_die(PB_EXIT_ERROR, "rsvg-convert failed to write %s", png);
    }
    remove(tmp);
    return rc;
}

int pb__cmd_plot(int argc, char **argv)
{
    const char *out = NULL, *ceilings = NULL, *chart = "1";
    bool list = false;
    char **inputs = calloc((size_t)argc, sizeof *inputs);
    int n_inputs = 0, rc = PB_EXIT_OK;
    if (!inputs)
        return pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
    for (int i = 1; i < argc && rc == PB_EXIT_OK; i++) {
        const char *v;
        if (pb__cli_is_help(argv[i])) {
            plot_help(stdout);
            free(inputs);
            return PB_EXIT_OK;
        }
        if (strcmp(argv[i], "--list") == 0)
            list = true;
        else if (pb__cli_value(argc, argv, &i, "out", 'o', &v, &rc))
            out = v;
        else if (pb__cli_value(argc, argv, &i, "ceilings", 0, &v, &rc))
            ceilings = v;
        else if (pb__cli_value(argc, argv, &i, "chart", 0, &v, &rc))
            chart = v;
        else if (rc == PB_EXIT_OK && argv[i][0] == '-' && argv[i][1])
            rc = pb__cli_die(PB_EXIT_USAGE, "unknown option '%s' for plot (see parbench plot --help)", argv[i]);
        else if (rc == PB_EXIT_OK)
            inputs[n_inputs++] = argv[i];
    }
    char *end;
    long which = strtol(chart, &end, 10);
    if (rc == PB_EXIT_OK && (*end || which < 1))
        rc = pb__cli_die(PB_EXIT_USAGE, "--chart needs a chart number from 1 (got '%s')", chart);
    if (rc == PB_EXIT_OK && argc < 2) {
        plot_help(stderr);
        rc = PB_EXIT_USAGE;
    } else if (rc == PB_EXIT_OK && (!n_inputs || (!out && !list))) {
        rc = pb__cli_die(PB_EXIT_USAGE, "plot needs %s (usage: parbench plot RESULTS... -o FILE.svg|FILE.png)",
                         !n_inputs ? "result files or directories" : "-o FILE.svg or FILE.png, or --list");
    }
    if (rc == PB_EXIT_OK && out && !has_ext(out, ".svg") && !has_ext(out, ".png"))
        rc = pb__cli_die(PB_EXIT_USAGE, "cannot tell the format of '%s': use .svg or .png", out);
    struct pb_rp_set set = {0};
    struct pb_rp_charts ch = {0};
    if (rc == PB_EXIT_OK)
        rc = pb__rp_load_all(&set, inputs, n_inputs, ceilings);
    if (rc == PB_EXIT_OK) {
        pb_status st = pb__rp_charts_build(&set, &ch);
        if (st != PB_OK)
            rc = pb__cli_fail(st);
    }
    if (rc == PB_EXIT_OK && ch.n == 0) { /* nothing to draw is the data's doing, not a usage error */
        size_t ok = 0;
        for (size_t i = 0; i < set.n_rows; i++)
            ok += pb__rp_ok(&set.rows[i]);
        rc = pb__cli_die(PB_EXIT_ERROR, "the results make no chart: %zu rows, %zu of them OK", set.n_rows,
                         ok);
    } else if (rc == PB_EXIT_OK && list) {
        for (size_t i = 0; i < ch.n; i++) { /* of several files: each file's charts named by it */
            bool of_file = set.n_files > 1 && ch.file[i] < set.n_files;
            printf("%zu: %s%s%s%s\n", i + 1, ch.charts[i].title, of_file ? " (" : "",
                   of_file ? set.files[ch.file[i]].name : "", of_file ? ")" : "");
        }
    } else if (rc == PB_EXIT_OK && (size_t)which > ch.n) {
        rc = pb__cli_die(PB_EXIT_USAGE, "--chart %ld: the results make %zu charts (see --list)", which, ch.n);
    } else if (rc == PB_EXIT_OK) {
        struct pb_sbuf b = {0};
        pb__sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        pb__chart_svg(&ch.charts[which - 1], &b);
        if (b.failed)
            rc = pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
        else if (has_ext(out, ".png"))
            rc = svg_to_png(&b, out);
        else
            rc = write_text(out, &b);
        pb__sb_free(&b);
    }
    pb__rp_charts_free(&ch);
    pb__rp_free(&set);
    free(inputs);
    return rc;
}

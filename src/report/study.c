/* Their figures beside ours: each figure of a study (studies.c) matched with
 * the rows of the study's result files, and the comparison written as CSV,
 * a text table and an HTML section. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/parse.h"
#include "parbench/pb_backend.h"
#include "report/study.h"

/* ---- matching ------------------------------------------------------------------- */

/* A file parameter's base name without .mtx or .mtx.gz. */
static bool base_name_is(const char *text, const char *want)
{
    const char *slash = strrchr(text, '/');
    const char *base = slash ? slash + 1 : text;
    size_t n = strlen(want);
    return strncmp(base, want, n) == 0 && (strcmp(base + n, ".mtx") == 0 || strcmp(base + n, ".mtx.gz") == 0);
}

static bool value_matches(const char *text, double num, const char *want)
{
    if (strcmp(text, want) == 0 || base_name_is(text, want))
        return true;
    int64_t v;
    pb__clear_error();
    bool numeric = pb__parse_int(want, "", &v) == PB_OK;
    pb__clear_error();
    return numeric && isfinite(num) && num == (double)v;
}

/* Whether row r has every "key=value" of params. */
static bool params_match(const struct pb_rp_row *r, const char *params)
{
    const char *p = params;
    while (p && *p) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (!len)
            break;
        char item[128];
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        p += len;
        char *eq = strchr(item, '=');
        if (!eq)
            return false;
        *eq = '\0';
        const char *key = item, *want = eq + 1;
        if (strcmp(key, "precision") == 0) {
            if (strcmp(r->precision, want) != 0)
                return false;
        } else if (strcmp(key, "threads") == 0) {
            if (!value_matches("", (double)r->threads, want))
                return false;
        } else {
            const struct pb_rp_kv *kv = pb__rp_find(r, key);
            if (!kv || !value_matches(kv->text, kv->num, want))
                return false;
        }
    }
    return true;
}

static double row_column(const struct pb_rp_row *r, const char *column)
{
    if (strcmp(column, "gflops") == 0)
        return r->gflops;
    if (strcmp(column, "gbps") == 0)
        return r->gbps;
    if (strcmp(column, "speedup") == 0)
        return r->speedup;
    if (strcmp(column, "median_s") == 0)
        return r->median;
    const struct pb_rp_kv *kv = pb__rp_find(r, column);
    return kv ? kv->num : NAN;
}

static bool is_time(const char *column)
{
    size_t n = strlen(column);
    return n >= 2 && strcmp(column + n - 2, "_s") == 0;
}

/* What one selection found. */
struct found {
    double value;
    const struct pb_rp_row *row; /* the row of value */
    const struct pb_rp_row *other; /* a matching row that did not run OK, for its reason */
    bool any;                    /* some row of the experiment's file matched backend and variant */
};

/* The best value of sel on backend `backend` among the rows of the files of
 * experiment sel->exp. */
static struct found find_on(const struct pb_rp_set *set, const char *const *file_exp, const struct pb_study_sel *sel,
                            const char *params, const char *backend)
{
    struct found f = {NAN, NULL, NULL, false};
    bool time = is_time(sel->column);
    for (size_t fi = 0; fi < set->n_files; fi++) {
        if (strcmp(file_exp[fi], sel->exp) != 0)
            continue;
        const struct pb_rp_file *file = &set->files[fi];
        for (size_t i = file->first_row; i < file->first_row + file->n_rows; i++) {
            const struct pb_rp_row *r = &set->rows[i];
            if (strcmp(r->backend, backend) != 0 || (sel->variant && strcmp(r->variant, sel->variant) != 0))
                continue;
            f.any = true;
            if (!params_match(r, params))
                continue;
            if (!pb__rp_ok(r)) {
                if (!f.other)
                    f.other = r;
                continue;
            }
            double v = row_column(r, sel->column);
            if (!isfinite(v))
                continue;
            if (!f.row || (time ? v < f.value : v > f.value)) {
                f.value = v;
                f.row = r;
            }
        }
    }
    return f;
}

/* sel on the first of its backends (or `backend` when given) with an OK
 * row; *why says why none when there is none. */
static struct found find(const struct pb_rp_set *set, const char *const *file_exp, const char *const *missing,
                         const struct pb_study *st, const struct pb_study_sel *sel, const char *backend, bool quick,
                         char *why, size_t why_len)
{
    const char *params = quick && sel->quick_params ? sel->quick_params : sel->params;
    const char *list = backend ? backend : sel->backend;
    struct found best = {NAN, NULL, NULL, false}, first_other = best;
    for (size_t e = 0; e < st->n_exps; e++)
        if (strcmp(st->exps[e].name, sel->exp) == 0 && missing[e]) {
            snprintf(why, why_len, "%s", missing[e]);
            return best;
        }
    bool built = false;
    for (const char *b = list; b && *b;) {
        size_t len = strcspn(b, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), b);
        struct found f = find_on(set, file_exp, sel, params, name);
        if (f.row)
            return f;
        if (f.other && !first_other.other)
            first_other = f;
        best.any |= f.any;
        built |= pb_backend_find(name) != NULL;
        b += len + (b[len] == ',');
    }
    if (first_other.other)
        snprintf(why, why_len, "%s/%s %s: %s", first_other.other->backend, first_other.other->variant,
                 first_other.other->status, first_other.other->reason[0] ? first_other.other->reason : "no reason given");
    else if (!built)
        snprintf(why, why_len, "this build has no %s backend", list);
    else if (best.any)
        snprintf(why, why_len, "no %s row with %s%s", sel->exp, params, quick ? " in this quick run" : "");
    else
        snprintf(why, why_len, "no %s row of %s%s%s", sel->exp, list, sel->variant ? "/" : "",
                 sel->variant ? sel->variant : "");
    return best;
}

static void appendf(char *buf, size_t len, const char *fmt, ...) PB__PRINTF(3, 4);
static void appendf(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static bool resized_sel(const struct pb_study_sel *sel)
{
    return sel->exp && sel->quick_params && strcmp(sel->quick_params, sel->params) != 0;
}

static void quick_note(const struct pb_study_sel *sel, char *note, size_t len)
{
    if (resized_sel(sel))
        appendf(note, len, "%squick run: ours at %s, theirs at %s", note[0] ? "; " : "", sel->quick_params,
                sel->params);
}

void pb__study_compare(const struct pb_study *st, const struct pb_rp_set *set, const char *const *file_exp,
                       const char *const *missing, bool quick, struct pb_study_cmp *out)
{
    for (size_t i = 0; i < st->n_figs; i++) {
        const struct pb_study_fig *fig = &st->figs[i];
        struct pb_study_cmp *c = &out[i];
        memset(c, 0, sizeof *c);
        c->fig = fig;
        c->theirs = fig->per != 0 ? fig->value / fig->per : fig->value;
        c->ours = c->ratio = NAN;
        char why[400] = "";
        struct found num = find(set, file_exp, missing, st, &fig->num, NULL, quick, why, sizeof why), den = num;
        if (num.row && fig->den.exp) {
            den = find(set, file_exp, missing, st, &fig->den, fig->den.backend ? NULL : num.row->backend, quick, why,
                       sizeof why);
            if (den.row && den.value != 0)
                c->ours = num.value / den.value;
            else if (den.row)
                snprintf(why, sizeof why, "the denominator is 0");
        } else if (num.row) {
            c->ours = num.value;
        }
        c->measured = isfinite(c->ours);
        if (c->measured) {
            snprintf(c->backend, sizeof c->backend, "%s", num.row->backend);
            if (fig->den.exp && strcmp(den.row->device, num.row->device) != 0)
                snprintf(c->device, sizeof c->device, "%s / %s", num.row->device, den.row->device);
            else
                snprintf(c->device, sizeof c->device, "%s", num.row->device);
            if (isfinite(c->theirs) && c->theirs != 0)
                c->ratio = c->ours / c->theirs;
            /* A quick run at other sizes than the study's tests nothing of its
             * conclusion (reduce's steps at 1M elements, not 256M): no verdict. */
            bool resized = quick && (resized_sel(&fig->num) || resized_sel(&fig->den));
            if (fig->claim && resized) {
                snprintf(c->note, sizeof c->note, "no verdict at quick sizes (the full run gives one): here %.3g; "
                         "the study concludes that %s", c->ours, fig->conclusion);
            } else if (fig->claim) {
                bool holds = fig->claim == '<' ? c->ours < fig->limit : c->ours > fig->limit;
                c->verdict = holds ? 1 : -1;
                if (holds)
                    snprintf(c->note, sizeof c->note, "agrees: %s", fig->conclusion);
                else
                    snprintf(c->note, sizeof c->note, "contradicts the study, which concludes that %s: here %.3g "
                             "is not %s %g",
                             fig->conclusion, c->ours, fig->claim == '<' ? "below" : "above", fig->limit);
            }
            if (quick) {
                quick_note(&fig->num, c->note, sizeof c->note);
                if (!(fig->num.quick_params && fig->num.params && strcmp(fig->num.quick_params, fig->num.params)))
                    quick_note(&fig->den, c->note, sizeof c->note);
            }
        } else {
            snprintf(c->note, sizeof c->note, "not measured here: %s", why);
        }
        if (fig->remark)
            appendf(c->note, sizeof c->note, "%s%s", c->note[0] ? "; " : "", fig->remark);
    }
}

/* ---- output --------------------------------------------------------------------- */

/* Theirs as transcribed (all its digits), or a ratio of two of their numbers. */
static void their_num(char *buf, size_t len, double theirs, bool exact)
{
    if (isfinite(theirs))
        snprintf(buf, len, exact ? "%.10g" : "%.4g", theirs);
    else
        snprintf(buf, len, "-");
}

static void num(char *buf, size_t len, double x)
{
    if (isfinite(x) && x == floor(x) && fabs(x) < 1e9)
        snprintf(buf, len, "%.0f", x); /* counts: every digit */
    else if (isfinite(x))
        snprintf(buf, len, "%.4g", x);
    else
        snprintf(buf, len, "-");
}

static void csv_field(struct pb_sbuf *b, const char *s, bool last)
{
    bool quote = strpbrk(s, ",\"\n") != NULL;
    if (quote) {
        pb__sb_printf(b, "\"");
        for (const char *p = s; *p; p++)
            pb__sb_printf(b, *p == '"' ? "\"\"" : "%c", *p);
        pb__sb_printf(b, "\"");
    } else {
        pb__sb_printf(b, "%s", s);
    }
    pb__sb_printf(b, last ? "\n" : ",");
}

static void csv_num(struct pb_sbuf *b, double x)
{
    if (isfinite(x))
        pb__sb_printf(b, "%.9g,", x);
    else
        pb__sb_printf(b, ",");
}

static const char *original_name(const struct pb_study *st)
{
    const char *slash = strrchr(st->original, '/');
    return slash ? slash + 1 : st->original;
}

void pb__study_csv(struct pb_sbuf *b, const struct pb_study *st, const struct pb_study_cmp *c)
{
    pb__sb_printf(b, "study,figure,source,their_device,their_value,unit,our_backend,our_device,our_value,"
                     "ratio,measured,verdict,note\n");
    for (size_t i = 0; i < st->n_figs; i++) {
        const struct pb_study_fig *f = c[i].fig;
        char source[512];
        snprintf(source, sizeof source, "%s, %s", original_name(st), f->source);
        csv_field(b, st->id, false);
        csv_field(b, f->what, false);
        csv_field(b, source, false);
        csv_field(b, f->device, false);
        csv_num(b, c[i].theirs);
        csv_field(b, f->unit, false);
        csv_field(b, c[i].backend, false);
        csv_field(b, c[i].device, false);
        csv_num(b, c[i].ours);
        csv_num(b, c[i].ratio);
        csv_field(b, c[i].measured ? "yes" : "no", false);
        csv_field(b, c[i].verdict > 0 ? "agrees" : c[i].verdict < 0 ? "contradicts" : "", false);
        csv_field(b, c[i].note, true);
    }
}

/* Display width of UTF-8 text (code points; the figures hold Greek, Czech and
 * Polish source names). */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void padded(struct pb_sbuf *b, const char *s, size_t w)
{
    pb__sb_printf(b, "%s", s);
    for (size_t n = width(s); n < w; n++)
        pb__sb_printf(b, " ");
}

void pb__study_text(struct pb_sbuf *b, const struct pb_study *st, const struct pb_study_cmp *c, bool quick)
{
    pb__sb_printf(b, "\nstudy %s: %s\ntheir figures (%s) beside ours%s:\n\n", st->id, st->title, st->original,
                  quick ? " (quick run: small sizes, see the notes)" : "");
    enum { COLS = 7 };
    static const char *const head[COLS] = {"figure", "source", "their device", "theirs", "ours", "ours/theirs",
                                           "our device"};
    size_t w[COLS];
    for (int k = 0; k < COLS; k++)
        w[k] = width(head[k]);
    char cell[COLS][256];
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (int k = 0; k < COLS; k++) {
                padded(b, head[k], w[k] + 2);
            }
            pb__sb_printf(b, "note\n");
        }
        for (size_t i = 0; i < st->n_figs; i++) {
            const struct pb_study_fig *f = c[i].fig;
            char theirs[64], ours[64], ratio[64];
            their_num(theirs, sizeof theirs, c[i].theirs, f->per == 0);
            num(ours, sizeof ours, c[i].ours);
            num(ratio, sizeof ratio, c[i].ratio);
            snprintf(cell[0], sizeof cell[0], "%s", f->what);
            snprintf(cell[1], sizeof cell[1], "%s", f->source);
            snprintf(cell[2], sizeof cell[2], "%s", f->device);
            bool unit = isfinite(c[i].theirs) && strcmp(f->unit, "ratio") != 0;
            snprintf(cell[3], sizeof cell[3], "%s%s%s", theirs, unit ? " " : "", unit ? f->unit : "");
            snprintf(cell[4], sizeof cell[4], "%s", ours);
            snprintf(cell[5], sizeof cell[5], "%s", ratio);
            snprintf(cell[6], sizeof cell[6], "%s%s%s", c[i].backend, c[i].backend[0] ? " " : "",
                     c[i].device[0] ? c[i].device : "-");
            for (int k = 0; k < COLS; k++) {
                if (pass == 0) {
                    size_t n = width(cell[k]);
                    w[k] = n > w[k] ? n : w[k];
                } else {
                    padded(b, cell[k], w[k] + 2);
                }
            }
            if (pass == 1)
                pb__sb_printf(b, "%s\n", c[i].note);
        }
    }
}

/* A cell: numbers right-aligned, text left; wrap: text that may break lines. */
static void td(struct pb_sbuf *b, const char *s, bool left)
{
    pb__sb_printf(b, "<td%s>", left ? " class=\"t\"" : "");
    pb__sb_escape(b, s);
    pb__sb_printf(b, "</td>");
}

static void td_wrap(struct pb_sbuf *b, const char *s, int min_em)
{
    pb__sb_printf(b, "<td class=\"t\" style=\"white-space:normal;min-width:%dem\">", min_em);
    pb__sb_escape(b, s);
    pb__sb_printf(b, "</td>");
}

void pb__study_table_html(struct pb_sbuf *b, const struct pb_study_line *l, size_t n)
{
    pb__sb_printf(b, "<div class=\"scroll\"><table>\n<thead><tr><th>figure</th><th>source</th><th>their device</th>"
                     "<th>theirs</th><th>unit</th><th>our device</th><th>ours</th><th>ours/theirs</th>"
                     "<th>verdict</th><th>note</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < n; i++) {
        char theirs[64], ours[64], ratio[64], dev[256];
        their_num(theirs, sizeof theirs, l[i].theirs, l[i].theirs_exact);
        num(ours, sizeof ours, l[i].ours);
        num(ratio, sizeof ratio, l[i].ratio);
        snprintf(dev, sizeof dev, "%s%s%s", l[i].our_backend, l[i].our_backend[0] ? " " : "", l[i].our_device);
        pb__sb_printf(b, "<tr class=\"%s\">", l[i].verdict < 0 ? "FAILED" : l[i].measured ? "OK" : "SKIP");
        /* Only the numbers stay on one line: ten columns fit the page width. */
        td_wrap(b, l[i].figure, 14);
        td_wrap(b, l[i].source, 9);
        td_wrap(b, l[i].their_device, 7);
        td(b, theirs, false);
        td(b, l[i].unit, true);
        td_wrap(b, dev, 7);
        td(b, ours, false);
        td(b, ratio, false);
        td(b, l[i].verdict > 0 ? "agrees" : l[i].verdict < 0 ? "contradicts" : "-", true);
        td_wrap(b, l[i].note, 22);
        pb__sb_printf(b, "</tr>\n");
    }
    pb__sb_printf(b, "</tbody></table></div>\n<p class=\"note\">ours/theirs divides like by like: above 1 a rate "
                     "is higher here, a time longer. verdict: whether ours agrees with the conclusion the study "
                     "draws from the figure; rows that contradict one are shaded.</p>\n");
}

void pb__study_html(struct pb_sbuf *b, const struct pb_study *st, const struct pb_study_cmp *c, bool quick,
                    const char *const *commands, const char *const *missing)
{
    pb__sb_printf(b, "<section>\n<h2 id=\"study\">Study %s: ", st->id);
    pb__sb_escape(b, st->title);
    pb__sb_printf(b, "</h2>\n<p class=\"note\">");
    pb__sb_escape(b, st->summary);
    pb__sb_printf(b, " Original: ");
    pb__sb_escape(b, st->original);
    pb__sb_printf(b, ".</p>\n");
    if (st->notes) {
        pb__sb_printf(b, "<p class=\"note\">");
        pb__sb_escape(b, st->notes);
        pb__sb_printf(b, "</p>\n");
    }
    if (quick)
        pb__sb_printf(b, "<p class=\"note\"><b>Quick run</b>: small sizes and few repetitions, for checking that "
                         "everything runs; figures are matched at the quick run's sizes where the notes say so, "
                         "and are not the study's.</p>\n");
    struct pb_study_line *lines = calloc(st->n_figs ? st->n_figs : 1, sizeof *lines);
    if (!lines) {
        b->failed = true;
        return;
    }
    for (size_t i = 0; i < st->n_figs; i++) {
        const struct pb_study_fig *f = c[i].fig;
        lines[i] = (struct pb_study_line){f->what, f->source, f->device, f->unit, c[i].backend, c[i].device,
                                          c[i].note, c[i].theirs, c[i].ours, c[i].ratio, f->per == 0,
                                          c[i].measured, c[i].verdict};
    }
    pb__sb_printf(b, "<h3>Their figures beside ours</h3>\n");
    pb__study_table_html(b, lines, st->n_figs);
    free(lines);
    pb__sb_printf(b, "<h3>Experiments</h3>\n<ul>\n");
    for (size_t e = 0; e < st->n_exps; e++) {
        const struct pb_study_exp *x = &st->exps[e];
        pb__sb_printf(b, "<li><b>");
        pb__sb_escape(b, x->name);
        pb__sb_printf(b, "</b>: ");
        pb__sb_escape(b, x->what);
        pb__sb_printf(b, "<br/><code>");
        pb__sb_escape(b, commands[e] ? commands[e] : "");
        pb__sb_printf(b, "</code>");
        if (missing[e]) {
            pb__sb_printf(b, "<br/>not run: ");
            pb__sb_escape(b, missing[e]);
        }
        if (x->scaled && !quick) {
            pb__sb_printf(b, "<br/>scaled: ");
            pb__sb_escape(b, x->scaled);
        }
        pb__sb_printf(b, "</li>\n");
    }
    pb__sb_printf(b, "</ul>\n</section>\n");
}

/* SVG charts (see svg.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report/svg.h"

void pb__sb_printf(struct pb_sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *bigger = realloc(b->s, cap);
        if (!bigger) {
            b->failed = true;
            return;
        }
        b->s = bigger;
        b->cap = cap;
    }
}

void pb__sb_escape(struct pb_sbuf *b, const char *text)
{
    for (const char *p = text; *p; p++) {
        switch (*p) {
        case '&': pb__sb_printf(b, "&amp;"); break;
        case '<': pb__sb_printf(b, "&lt;"); break;
        case '>': pb__sb_printf(b, "&gt;"); break;
        case '"': pb__sb_printf(b, "&quot;"); break;
        case '\'': pb__sb_printf(b, "&#39;"); break;
        default:
            /* Control characters are not allowed in XML 1.0. */
            if ((unsigned char)*p >= 0x20 || *p == '\n' || *p == '\t')
                pb__sb_printf(b, "%c", *p);
        }
    }
}

void pb__sb_free(struct pb_sbuf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

/* Bytes of the first max_chars characters of UTF-8 text. */
static size_t utf8_prefix(const char *s, size_t max_chars)
{
    size_t bytes = 0;
    for (size_t chars = 0; s[bytes] && chars < max_chars; chars++)
        do
            bytes++;
        while (((unsigned char)s[bytes] & 0xC0) == 0x80);
    return bytes;
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* text into dst (len bytes), cut at a character boundary where too long. */
static void copy_text(char *dst, size_t len, const char *text, size_t text_len)
{
    size_t n = text_len < len ? text_len : len - 1;
    while (n > 0 && n < text_len && ((unsigned char)text[n] & 0xC0) == 0x80)
        n--;
    memcpy(dst, text, n);
    dst[n] = '\0';
}

/* ---- chart data ------------------------------------------------------------- */

struct pb_series *pb__chart_series(struct pb_chart *c, const char *name, enum pb_series_style style)
{
    struct pb_series *bigger = realloc(c->series, (c->n_series + 1) * sizeof *bigger);
    if (!bigger)
        return NULL;
    c->series = bigger;
    struct pb_series *s = &c->series[c->n_series++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->style = style;
    return s;
}

struct pb_series *pb__chart_series_named(struct pb_chart *c, const char *name)
{
    for (size_t i = 0; i < c->n_series; i++)
        if (strcmp(c->series[i].name, name) == 0)
            return &c->series[i];
    return pb__chart_series(c, name, PB_SERIES_LINE);
}

bool pb__series_add(struct pb_series *s, double x, double y)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        double *nx = realloc(s->x, cap * sizeof *nx);
        if (!nx)
            return false;
        s->x = nx;
        double *ny = realloc(s->y, cap * sizeof *ny);
        if (!ny)
            return false;
        s->y = ny;
        if (s->tips) {
            char **nt = realloc(s->tips, cap * sizeof *nt);
            if (!nt)
                return false;
            s->tips = nt;
        }
        s->cap = cap;
    }
    if (s->tips)
        s->tips[s->n] = NULL;
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
    return true;
}

bool pb__series_add_tip(struct pb_series *s, double x, double y, const char *tip)
{
    if (!s->tips && (s->tips = calloc(s->cap ? s->cap : 1, sizeof *s->tips)) == NULL)
        return false;
    if (!pb__series_add(s, x, y))
        return false;
    return (s->tips[s->n - 1] = strdup(tip)) != NULL;
}

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The category index at twice the categories' count (a chart of one
 * category per matrix of a 100,000-row file looked each name up among all). */
static bool category_slots_grow(struct pb_chart *c)
{
    size_t cap = c->n_slots ? 2 * c->n_slots : 64, *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < c->n_categories; i++) {
        size_t h = name_hash(c->categories[i]) & (cap - 1);
        while (slots[h])
            h = (h + 1) & (cap - 1);
        slots[h] = i + 1;
    }
    free(c->category_slots);
    c->category_slots = slots;
    c->n_slots = cap;
    return true;
}

int pb__chart_category(struct pb_chart *c, const char *name)
{
    if (2 * (c->n_categories + 1) > c->n_slots && !category_slots_grow(c))
        return -1;
    size_t mask = c->n_slots - 1, h = name_hash(name) & mask;
    for (; c->category_slots[h]; h = (h + 1) & mask)
        if (strcmp(c->categories[c->category_slots[h] - 1], name) == 0)
            return (int)(c->category_slots[h] - 1);
    size_t n = c->n_categories + 1;
    char **names = realloc(c->categories, n * sizeof *names);
    if (!names)
        return -1;
    c->categories = names;
    char **labels = realloc(c->category_labels, n * sizeof *labels);
    if (!labels)
        return -1;
    c->category_labels = labels;
    bool *anchors = realloc(c->category_anchor, n * sizeof *anchors);
    if (!anchors)
        return -1;
    c->category_anchor = anchors;
    if (!(names[n - 1] = strdup(name)))
        return -1;
    labels[n - 1] = NULL;
    anchors[n - 1] = false;
    c->category_slots[h] = n;
    return (int)c->n_categories++;
}

bool pb__chart_category_label(struct pb_chart *c, size_t i, const char *label)
{
    char *copy = strdup(label);
    if (!copy)
        return false;
    free(c->category_labels[i]);
    c->category_labels[i] = copy;
    return true;
}

static const char *category_text(const struct pb_chart *c, size_t i)
{
    return c->category_labels && c->category_labels[i] ? c->category_labels[i] : c->categories[i];
}

void pb__chart_hline(struct pb_chart *c, const char *label, double y)
{
    if (c->n_hlines < sizeof c->hlines / sizeof c->hlines[0] && isfinite(y) && y > 0) {
        copy_text(c->hlines[c->n_hlines].label, sizeof c->hlines[0].label, label, strlen(label));
        c->hlines[c->n_hlines++].y = y;
    }
}

static size_t series_points(const struct pb_series *s)
{
    size_t n = 0;
    for (size_t k = 0; k < s->n; k++)
        n += isfinite(s->x[k]) && isfinite(s->y[k]);
    return n;
}

size_t pb__chart_points(const struct pb_chart *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_series; i++)
        n += series_points(&c->series[i]);
    return n;
}

size_t pb__chart_measured_points(const struct pb_chart *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_series; i++)
        n += c->series[i].style == PB_SERIES_DASHED ? 0 : series_points(&c->series[i]);
    return n;
}

void pb__chart_free(struct pb_chart *c)
{
    for (size_t i = 0; i < c->n_series; i++) {
        free(c->series[i].x);
        free(c->series[i].y);
        for (size_t k = 0; c->series[i].tips && k < c->series[i].n; k++)
            free(c->series[i].tips[k]);
        free(c->series[i].tips);
    }
    free(c->series);
    for (size_t i = 0; i < c->n_categories; i++) {
        free(c->categories[i]);
        free(c->category_labels[i]);
    }
    free(c->categories);
    free(c->category_labels);
    free(c->category_anchor);
    free(c->category_slots);
    memset(c, 0, sizeof *c);
}

/* Finite range of x (axis 0) or y (axis 1); positive only when log. */
static bool range_of(const struct pb_chart *c, int axis, bool positive, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < c->n_series; i++)
        for (size_t k = 0; k < c->series[i].n; k++) {
            double x = c->series[i].x[k], y = c->series[i].y[k], v = axis ? y : x;
            if (!isfinite(x) || !isfinite(y) || (positive && v <= 0))
                continue;
            *lo = fmin(*lo, v);
            *hi = fmax(*hi, v);
        }
    for (size_t i = 0; axis && i < c->n_hlines; i++) {
        *lo = fmin(*lo, c->hlines[i].y);
        *hi = fmax(*hi, c->hlines[i].y);
    }
    return *lo <= *hi;
}

/* Sweeps over powers of two get ticks at powers of two. */
static bool all_pow2_x(const struct pb_chart *c)
{
    for (size_t i = 0; i < c->n_series; i++)
        for (size_t k = 0; k < c->series[i].n; k++) {
            double x = c->series[i].x[k];
            int e;
            if (isfinite(x) && isfinite(c->series[i].y[k]) && (x <= 0 || frexp(x, &e) != 0.5))
                return false;
        }
    return true;
}

void pb__chart_auto_log(struct pb_chart *c)
{
    double lo, hi;
    if (c->kind == PB_CHART_BARS) { /* a bar's length is its value: 75x must look like 75x */
        c->logx = c->logy = false;
        return;
    }
    if (!c->categories && range_of(c, 0, false, &lo, &hi) && lo > 0 && hi / lo >= 8)
        c->logx = true;
    if (range_of(c, 1, false, &lo, &hi) && lo > 0 && hi / lo >= 50)
        c->logy = true;
}

/* The best of a series' finite values: the highest, or the lowest when lower
 * is better; NAN when it has none. */
static double series_best(const struct pb_series *s, bool lower_is_better)
{
    double best = NAN;
    for (size_t k = 0; k < s->n; k++) {
        double y = s->y[k];
        if (isfinite(s->x[k]) && isfinite(y) && (isnan(best) || (lower_is_better ? y < best : y > best)))
            best = y;
    }
    return best;
}

bool pb__chart_one_x_to_bars(struct pb_chart *c, const char *x_name)
{
    if (c->kind != PB_CHART_LINES)
        return true;
    double x = NAN;
    for (size_t i = 0; i < c->n_series; i++) {
        const struct pb_series *s = &c->series[i];
        for (size_t k = 0; k < s->n && s->style != PB_SERIES_DASHED; k++) {
            if (!isfinite(s->x[k]) || !isfinite(s->y[k]))
                continue;
            if (isnan(x))
                x = s->x[k];
            else if (s->x[k] != x)
                return true; /* a real sweep */
        }
    }
    if (isnan(x))
        return true;
    struct pb_chart bars = {.kind = PB_CHART_BARS, .vline_at = -1, .lower_is_better = c->lower_is_better};
    snprintf(bars.title, sizeof bars.title, "%s", c->title);
    snprintf(bars.ylabel, sizeof bars.ylabel, "%s", c->ylabel);
    char value[64];
    if (c->categories)
        pb__chart_short_label(category_text(c, (size_t)x), false, 40, value, sizeof value);
    else
        snprintf(value, sizeof value, "%.10g", x);
    snprintf(bars.xlabel, sizeof bars.xlabel, "variant (%.30s = %.50s)", x_name ? x_name : "x", value);
    memcpy(bars.hlines, c->hlines, sizeof bars.hlines);
    bars.n_hlines = c->n_hlines;
    struct pb_series *values = pb__chart_series(&bars, c->ylabel, PB_SERIES_LINE);
    bool ok = values != NULL;
    for (size_t i = 0; i < c->n_series && ok; i++) {
        const struct pb_series *s = &c->series[i];
        if (s->style == PB_SERIES_DASHED) { /* a roof at that x: a reference line */
            pb__chart_hline(&bars, s->name, series_best(s, false));
            continue;
        }
        double best = series_best(s, c->lower_is_better);
        if (isnan(best))
            continue;
        int ci = pb__chart_category(&bars, s->name);
        ok = ci >= 0;
        if (ok) {
            bars.category_anchor[ci] = s->anchor;
            ok = pb__series_add(values, ci, best);
        }
    }
    if (!ok) {
        pb__chart_free(&bars);
        return false;
    }
    pb__chart_free(c);
    *c = bars;
    return true;
}

void pb__chart_short_label(const char *name, bool strip_path, size_t max_chars, char *buf, size_t len)
{
    size_t n = strlen(name);
    if (strip_path) {
        const char *slash = strrchr(name, '/');
        if (slash && slash[1])
            name = slash + 1;
        n = strlen(name);
        static const char *const exts[] = {".mtx.gz", ".mtx", ".mm"};
        for (size_t e = 0; e < sizeof exts / sizeof exts[0]; e++) {
            size_t el = strlen(exts[e]);
            if (n > el && strcasecmp(name + n - el, exts[e]) == 0) {
                n -= el;
                break;
            }
        }
    }
    char whole[512];
    copy_text(whole, sizeof whole, name, n);
    if (utf8_chars(whole) <= max_chars || max_chars < 2) {
        copy_text(buf, len, whole, strlen(whole));
    } else { /* head, ellipsis, tail: the ends tell series apart ("... @1 of 4") */
        static const char ellipsis[] = "\xE2\x80\xA6";
        size_t head_chars = max_chars / 2, tail_chars = max_chars - 1 - head_chars;
        size_t head = utf8_prefix(whole, head_chars);
        const char *tail = whole + utf8_prefix(whole, utf8_chars(whole) - tail_chars);
        char cut[sizeof whole + sizeof ellipsis];
        memcpy(cut, whole, head);
        memcpy(cut + head, ellipsis, sizeof ellipsis - 1);
        copy_text(cut + head + sizeof ellipsis - 1, sizeof cut - head - sizeof ellipsis + 1, tail, strlen(tail));
        copy_text(buf, len, cut, strlen(cut));
    }
}

/* ---- drawing ----------------------------------------------------------------- */

/* The plot's default size; a chart grows to the right for many categories and
 * downwards for long rotated category labels. The legend is right of the plot. */
enum {
    PLOT_W = 482,
    PLOT_H = 324,
    MAX_PLOT_W = 1400,
    LEFT = 78,
    TOP = 46,
    LEGEND_W = 300,
    LEGEND_CHARS = 36,
    CAT_LABEL_CHARS = 32,
    CAT_LABEL_STEP = 16, /* px between rotated labels (10 px text at 45 degrees needs 15.6) */
    HLINE_LABEL_GAP = 12,
    VIVID_WHEN_MUTED = 5 /* the best series kept in colour when the rest are muted */
};

/* Tableau 10 with its grey swapped for indigo (grey is for muted series);
 * anchors have their own dark colours, dashes and square marks. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1",
                                      "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#6b6ecf"};
static const char *const anchor_palette[] = {"#1a1a1a", "#7f3b08", "#3f007d"};
#define N_COLORS (sizeof palette / sizeof palette[0])
#define N_ANCHOR_COLORS (sizeof anchor_palette / sizeof anchor_palette[0])
#define MUTED_COLOR "#c4c4c4"
#define ANCHOR_DASH "7,3"

/* A rough width of sans-serif text: enough to keep labels apart. */
static double text_width(const char *s, int font_size)
{
    return (double)utf8_chars(s) * font_size * 0.6;
}

struct axis {
    bool log;
    double lo, hi; /* in axis units: log10 of the value when log */
};

static double axis_pos(const struct axis *a, double v, double p0, double p1)
{
    double t = a->log ? log10(v) : v;
    return p0 + (t - a->lo) / (a->hi - a->lo) * (p1 - p0);
}

/* Short number: 1.5k, 2M, 0.001, 3e-06. */
static void fmt_num(double v, char *buf, size_t len)
{
    static const char *const si[] = {"", "k", "M", "G", "T", "P"};
    double a = fabs(v);
    if (a >= 1e3) {
        int e = 0;
        while (a >= 1000 && e < 5)
            a /= 1000, v /= 1000, e++;
        snprintf(buf, len, "%.3g%s", v, si[e]);
    } else {
        snprintf(buf, len, "%.3g", v);
    }
}

static void fmt_bytes(double v, char *buf, size_t len)
{
    static const char *const units[] = {"", "K", "M", "G", "T"};
    int e = 0;
    while (v >= 1024 && e < 4)
        v /= 1024, e++;
    snprintf(buf, len, "%.3g%s", v, units[e]);
}

/* Axis range and tick values (at most max_ticks). */
static size_t make_axis(struct axis *a, bool use_log, bool binary, double lo, double hi, bool from_zero,
                        double *ticks, size_t max_ticks)
{
    size_t n = 0;
    a->log = use_log;
    if (use_log) {
        double base = binary ? 2 : 10;
        double l = floor(log(lo) / log(base) + 1e-9), h = ceil(log(hi) / log(base) - 1e-9);
        if (h <= l)
            h = l + 1;
        double step = ceil((h - l) / (double)(max_ticks - 1));
        if (binary && step > 1)
            step = ceil(step / 2) * 2; /* powers of 4: 1K, 4K, 16K ... */
        l = floor(l / step) * step;
        a->lo = l * log10(base);
        a->hi = h * log10(base);
        for (double e = l; e <= h + 1e-9 && n < max_ticks; e += step)
            ticks[n++] = pow(base, e);
        return n;
    }
    if (from_zero && lo > 0)
        lo = 0;
    hi += (hi - lo) * 0.03; /* the highest bar or point below the frame */
    if (hi <= lo)
        hi = lo + (lo ? fabs(lo) : 1);
    double raw = (hi - lo) / (double)(max_ticks - 2), mag = pow(10, floor(log10(raw))), step = mag;
    if (raw / mag > 5)
        step = 10 * mag;
    else if (raw / mag > 2)
        step = 5 * mag;
    else if (raw / mag > 1)
        step = 2 * mag;
    a->lo = floor(lo / step) * step;
    a->hi = ceil(hi / step) * step;
    for (double t = a->lo; t <= a->hi + step * 1e-6 && n < max_ticks; t += step)
        ticks[n++] = fabs(t) < step * 1e-9 ? 0 : t;
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A linear x of few integer values (counts such as streams 1..4, codes such
 * as a type 0..2) is ticked at those values only, never at 2.5; 0 when x is
 * not like that. */
static size_t integer_ticks(const struct pb_chart *c, double *ticks, size_t max_ticks)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_series; i++) {
        const struct pb_series *s = &c->series[i];
        for (size_t k = 0; k < s->n && s->style != PB_SERIES_DASHED; k++) {
            double x = s->x[k];
            if (!isfinite(x) || !isfinite(s->y[k]))
                continue;
            if (x != floor(x))
                return 0;
            bool seen = false;
            for (size_t t = 0; t < n && !seen; t++)
                seen = ticks[t] == x;
            if (seen)
                continue;
            if (n == max_ticks)
                return 0;
            ticks[n++] = x;
        }
    }
    if (n < 2)
        return 0;
    qsort(ticks, n, sizeof *ticks, cmp_double);
    return n;
}

static void text(struct pb_sbuf *b, double x, double y, const char *anchor, int size, const char *extra,
                 const char *s)
{
    pb__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\"%s%s>", x, y, anchor,
                  size, extra ? " " : "", extra ? extra : "");
    pb__sb_escape(b, s);
    pb__sb_printf(b, "</text>\n");
}

/* How each series is drawn. */
enum role { ROLE_VIVID, ROLE_ANCHOR, ROLE_REF, ROLE_MUTED };

struct look {
    enum role role;
    const char *color;
    double best;
};

/* Roles and colours: with more than PB_CHART_MAX_VIVID measured series, the
 * VIVID_WHEN_MUTED best (by their best value) and every anchor stay vivid,
 * the others are muted. Colours go in series order, so that the same series
 * keeps its colour across the facets of a file where nothing is muted. */
static bool assign_looks(const struct pb_chart *c, struct look *looks)
{
    size_t measured = 0;
    for (size_t i = 0; i < c->n_series; i++) {
        const struct pb_series *s = &c->series[i];
        looks[i].best = series_best(s, c->lower_is_better);
        looks[i].role = s->style == PB_SERIES_DASHED ? ROLE_REF : s->anchor ? ROLE_ANCHOR : ROLE_VIVID;
        measured += s->style != PB_SERIES_DASHED;
    }
    bool mute = c->kind == PB_CHART_LINES && measured > PB_CHART_MAX_VIVID;
    if (mute) {
        bool *keep = calloc(c->n_series ? c->n_series : 1, sizeof *keep);
        if (!keep)
            return false;
        for (size_t pick = 0; pick < VIVID_WHEN_MUTED; pick++) {
            size_t best = SIZE_MAX;
            for (size_t i = 0; i < c->n_series; i++) {
                double v = looks[i].best;
                if (looks[i].role != ROLE_VIVID || keep[i] || isnan(v))
                    continue;
                if (best == SIZE_MAX || (c->lower_is_better ? v < looks[best].best : v > looks[best].best))
                    best = i;
            }
            if (best != SIZE_MAX)
                keep[best] = true;
        }
        for (size_t i = 0; i < c->n_series; i++)
            if (looks[i].role == ROLE_VIVID && !keep[i])
                looks[i].role = ROLE_MUTED;
        free(keep);
    }
    size_t colored = 0, anchors = 0;
    for (size_t i = 0; i < c->n_series; i++)
        looks[i].color = looks[i].role == ROLE_MUTED    ? MUTED_COLOR
                         : looks[i].role == ROLE_ANCHOR ? anchor_palette[anchors++ % N_ANCHOR_COLORS]
                                                        : palette[colored++ % N_COLORS];
    return true;
}

struct layout {
    double x0, x1, y0, y1; /* the plot's frame */
    int w, h;
    double slot;         /* categorical x: px per category */
    bool tilt;           /* category labels rotated by 45 degrees */
    size_t label_every;  /* a category label on every n-th category */
    double legend_x;
};

/* Room for the category labels: level while each fits its slot, else
 * rotated, the plot then widened to CAT_LABEL_STEP px per category (up to
 * MAX_PLOT_W, beyond which only every n-th label is written), the left margin
 * grown so that the first labels stay inside, the bottom one for the longest. */
static void make_layout(const struct pb_chart *c, char (*labels)[CAT_LABEL_CHARS * 4 + 4], struct layout *L)
{
    double plot_w = PLOT_W, widest = 0;
    L->tilt = false;
    L->label_every = 1;
    for (size_t i = 0; i < c->n_categories; i++) {
        double w = text_width(labels[i], 10);
        widest = fmax(widest, w);
        L->tilt |= w > plot_w / (double)c->n_categories - 6;
    }
    if (L->tilt) {
        plot_w = fmin(fmax(plot_w, (double)c->n_categories * CAT_LABEL_STEP), MAX_PLOT_W);
        double slot = plot_w / (double)c->n_categories;
        L->label_every = slot >= CAT_LABEL_STEP ? 1 : (size_t)ceil(CAT_LABEL_STEP / slot);
    }
    L->slot = c->n_categories ? plot_w / (double)c->n_categories : 0;
    L->x0 = LEFT;
    const double cos45 = 0.7071;
    for (size_t i = 0; L->tilt && i < c->n_categories; i += L->label_every)
        L->x0 = fmax(L->x0, text_width(labels[i], 10) * cos45 + 4 - L->slot * ((double)i + 0.5));
    L->x0 = ceil(L->x0);
    L->x1 = L->x0 + plot_w;
    L->y0 = TOP;
    L->y1 = TOP + PLOT_H;
    L->h = L->tilt ? (int)ceil(L->y1 + 14 + widest * cos45 + 30) : (int)L->y1 + 70;
    L->legend_x = L->x1 + 16;
    L->w = (int)ceil(L->x1 + LEGEND_W);
}

/* Baselines of the reference lines' labels: just above their lines, nudged
 * at least HLINE_LABEL_GAP px apart, kept inside the plot. */
static void place_hline_labels(const double *line_y, size_t n, double top, double bottom, double *base)
{
    size_t order[8];
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
        base[i] = line_y[i] - 4;
    }
    for (size_t a = 1; a < n; a++) /* top first */
        for (size_t k = a; k > 0 && base[order[k - 1]] > base[order[k]]; k--) {
            size_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    for (size_t k = 0; k < n; k++) {
        double floor_y = k ? base[order[k - 1]] + HLINE_LABEL_GAP : top + 11;
        base[order[k]] = fmax(base[order[k]], floor_y);
    }
    for (size_t k = n; k-- > 0;) {
        double ceil_y = k + 1 < n ? base[order[k + 1]] - HLINE_LABEL_GAP : bottom - 3;
        base[order[k]] = fmin(base[order[k]], ceil_y);
    }
}

struct box {
    double x0, y0, x1, y1;
};

static bool boxes_overlap(struct box a, struct box b)
{
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/* A legend entry: a swatch in the series' look and its name (without the
 * `skip_head` and `skip_tail` bytes all series' names share, where some name
 * would be cut). */
struct entry {
    const char *text;
    const char *color;
    enum role role;
    bool bar, points, italic;
    size_t skip_head, skip_tail;
};

static bool word_end(char c) { return c == ' ' || c == '/' || c == ',' || c == '=' || c == ':' || c == '('; }

/* Where names longer than the legend's width share a start or an end, those
 * parts go (shown as an ellipsis) before the middle is cut: two series whose
 * names differ only in the middle would otherwise read alike. Each part ends
 * at a word, and something of every name is left. */
static void skip_shared_words(struct entry *e, size_t n)
{
    size_t shortest = SIZE_MAX, cut = 0, named = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].italic)
            continue;
        size_t len = strlen(e[i].text);
        shortest = len < shortest ? len : shortest;
        cut += utf8_chars(e[i].text) > LEGEND_CHARS;
        named++;
    }
    if (named < 2 || !cut)
        return;
    const char *first = NULL;
    size_t head = shortest, tail = shortest;
    for (size_t i = 0; i < n; i++) {
        if (e[i].italic)
            continue;
        if (!first) {
            first = e[i].text;
            continue;
        }
        size_t k = 0, len = strlen(e[i].text), flen = strlen(first);
        while (k < head && first[k] == e[i].text[k])
            k++;
        head = k;
        for (k = 0; k < tail && first[flen - 1 - k] == e[i].text[len - 1 - k]; k++)
            ;
        tail = k;
    }
    size_t flen = strlen(first);
    while (head > 0 && !word_end(first[head - 1])) /* back to the end of a word */
        head--;
    while (tail > 0 && first[flen - tail] != ' ') /* forward to a space */
        tail--;
    if (head + tail >= shortest) /* keep a distinguishing part */
        tail = 0;
    if (head + tail >= shortest)
        head = 0;
    for (size_t i = 0; i < n; i++)
        if (!e[i].italic)
            e[i].skip_head = head, e[i].skip_tail = tail;
}

static void draw_entry(struct pb_sbuf *b, const struct layout *L, double y, const struct entry *e)
{
    double x = L->legend_x;
    const char *dash = e->role == ROLE_ANCHOR ? " stroke-dasharray=\"" ANCHOR_DASH "\""
                       : e->role == ROLE_REF  ? " stroke-dasharray=\"5,3\""
                                              : "";
    if (e->bar)
        pb__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>\n", x + 3, y - 5,
                      e->color);
    else if (!e->points)
        pb__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n",
                      x, y, x + 20, y, e->color, e->role == ROLE_MUTED ? "1" : "2", dash);
    if (!e->bar && e->role == ROLE_ANCHOR)
        pb__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\" fill=\"%s\"/>\n", x + 7, y - 3, e->color);
    else if (!e->bar && e->role != ROLE_REF)
        pb__sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"/>\n", x + 10, y,
                      e->role == ROLE_MUTED ? "2" : "3.5", e->color);
    static const char ellipsis[] = "\xE2\x80\xA6";
    char kept[512], name[LEGEND_CHARS * 4 + 4];
    const int middle = (int)(strlen(e->text) - e->skip_head - e->skip_tail);
    snprintf(kept, sizeof kept, "%s%.*s%s", e->skip_head ? ellipsis : "", middle, e->text + e->skip_head,
             e->skip_tail ? ellipsis : "");
    pb__chart_short_label(kept, false, LEGEND_CHARS, name, sizeof name);
    text(b, x + 26, y + 4, "start", 11, e->italic ? "font-style=\"italic\"" : NULL, name);
}

/* The legend, one column right of the plot: vivid series (the best first when
 * others are muted), anchors, reference curves, then the muted ones' count and
 * what the anchors' look means. */
static void legend(const struct pb_chart *c, const struct look *looks, const struct layout *L, struct pb_sbuf *b)
{
    bool bars = c->kind == PB_CHART_BARS;
    size_t n_muted = 0, cap = c->n_series + 2, n = 0;
    struct entry *entries = calloc(cap, sizeof *entries);
    if (!entries)
        return;
    bool *listed = calloc(c->n_series ? c->n_series : 1, sizeof *listed);
    if (!listed) {
        free(entries);
        return;
    }
    bool any_anchor = false;
    for (size_t i = 0; i < c->n_series; i++) {
        n_muted += looks[i].role == ROLE_MUTED;
        any_anchor |= looks[i].role == ROLE_ANCHOR;
    }
    for (size_t i = 0; i < c->n_categories && c->category_anchor; i++)
        any_anchor |= c->category_anchor[i];
    static const enum role order[] = {ROLE_VIVID, ROLE_ANCHOR, ROLE_REF};
    for (size_t o = 0; o < sizeof order / sizeof order[0]; o++)
        for (;;) { /* by best value when some are muted, else in series order */
            size_t pick = SIZE_MAX;
            for (size_t i = 0; i < c->n_series; i++) {
                if (listed[i] || looks[i].role != order[o])
                    continue;
                if (pick == SIZE_MAX)
                    pick = i;
                else if (n_muted && !isnan(looks[i].best) &&
                         (isnan(looks[pick].best) ||
                          (c->lower_is_better ? looks[i].best < looks[pick].best : looks[i].best > looks[pick].best)))
                    pick = i;
            }
            if (pick == SIZE_MAX)
                break;
            listed[pick] = true;
            entries[n++] = (struct entry){c->series[pick].name, looks[pick].color, looks[pick].role, bars,
                                          c->series[pick].style == PB_SERIES_POINTS, false, 0, 0};
        }
    char muted[64];
    snprintf(muted, sizeof muted, "%zu more (muted)", n_muted);
    if (n_muted)
        entries[n++] = (struct entry){muted, MUTED_COLOR, ROLE_MUTED, bars, false, true, 0, 0};
    if (any_anchor)
        entries[n++] =
            (struct entry){"* vendor library (anchor)", anchor_palette[0], ROLE_ANCHOR, bars, false, true, 0, 0};
    skip_shared_words(entries, n);
    size_t room = (size_t)((L->h - L->y0) / 15), shown = n <= room ? n : room - 1;
    for (size_t i = 0; i < shown; i++)
        draw_entry(b, L, L->y0 + 6 + 15.0 * (double)i, &entries[i]);
    if (shown < n) {
        char more[64];
        snprintf(more, sizeof more, "+%zu more (see the table)", n - shown);
        text(b, L->legend_x + 26, L->y0 + 10 + 15.0 * (double)shown, "start", 11, "font-style=\"italic\"", more);
    }
    free(listed);
    free(entries);
}

/* One series' marks: a line through its points (unless points only), and a
 * mark per point with its value as a tooltip. */
static void draw_series(const struct pb_chart *c, const struct pb_series *s, const struct look *look,
                        const struct layout *L, const struct axis *xa, const struct axis *ya, struct pb_sbuf *b)
{
    bool cat = c->categories != NULL;
    const char *cls = look->role == ROLE_REF ? "pb-ref" : look->role == ROLE_MUTED ? "pb-data pb-muted" : "pb-data";
    const char *width = look->role == ROLE_MUTED ? "1" : look->role == ROLE_REF ? "1.5" : "2";
    const char *dash = look->role == ROLE_ANCHOR ? " stroke-dasharray=\"" ANCHOR_DASH "\""
                       : look->role == ROLE_REF  ? " stroke-dasharray=\"5,3\""
                                                 : "";
    bool started = false;
    for (size_t k = 0; k < s->n && s->style != PB_SERIES_POINTS; k++) {
        double x = s->x[k], y = s->y[k];
        if (!isfinite(x) || !isfinite(y) || (ya->log && y <= 0) || (xa->log && x <= 0))
            continue;
        double px = cat ? L->x0 + L->slot * (x + 0.5) : axis_pos(xa, x, L->x0, L->x1);
        double py = axis_pos(ya, y, L->y1, L->y0);
        if (!started)
            pb__sb_printf(b, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", cls,
                          look->color, width, dash);
        pb__sb_printf(b, "%s%.1f,%.1f", started ? " " : "", px, py);
        started = true;
    }
    if (started)
        pb__sb_printf(b, "\"/>\n");
    if (look->role == ROLE_REF)
        return;
    for (size_t k = 0; k < s->n; k++) {
        double x = s->x[k], y = s->y[k];
        if (!isfinite(x) || !isfinite(y) || (ya->log && y <= 0) || (xa->log && x <= 0))
            continue;
        char tip[400], xs[64], ys[64];
        fmt_num(y, ys, sizeof ys);
        if (cat)
            snprintf(xs, sizeof xs, "%s", c->categories[(size_t)x]);
        else if (c->bytes_x)
            fmt_bytes(x, xs, sizeof xs);
        else
            fmt_num(x, xs, sizeof xs);
        if (s->tips && s->tips[k])
            snprintf(tip, sizeof tip, "%s, %s: %s, %s", s->name, s->tips[k], xs, ys);
        else
            snprintf(tip, sizeof tip, "%s: %s, %s", s->name, xs, ys);
        double px = cat ? L->x0 + L->slot * (x + 0.5) : axis_pos(xa, x, L->x0, L->x1);
        double py = axis_pos(ya, y, L->y1, L->y0);
        if (look->role == ROLE_ANCHOR)
            pb__sb_printf(b, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\" fill=\"%s\"><title>", cls,
                          px - 3, py - 3, look->color);
        else
            pb__sb_printf(b, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>", cls, px, py,
                          look->role == ROLE_MUTED ? "2" : "3", look->color);
        pb__sb_escape(b, tip);
        pb__sb_printf(b, "</title></%s>\n", look->role == ROLE_ANCHOR ? "rect" : "circle");
    }
}

/* Bars: per category one bar per series, side by side, from zero. A bar
 * chart of one series colours the anchors' categories as anchors. */
static void draw_bars(const struct pb_chart *c, const struct look *looks, const struct layout *L,
                      const struct axis *ya, struct pb_sbuf *b)
{
    double bar_w = c->n_series ? L->slot * 0.8 / (double)c->n_series : 0;
    double zero = axis_pos(ya, fmax(0, ya->lo), L->y1, L->y0);
    for (size_t si = 0; si < c->n_series; si++) {
        const struct pb_series *s = &c->series[si];
        for (size_t k = 0; k < s->n; k++) {
            double x = s->x[k], y = s->y[k];
            if (!isfinite(x) || !isfinite(y) || x < 0 || (size_t)x >= c->n_categories)
                continue;
            bool anchor = c->n_series == 1 && c->category_anchor && c->category_anchor[(size_t)x];
            const char *color = anchor ? anchor_palette[0] : looks[si].color;
            double py = axis_pos(ya, y, L->y1, L->y0), top = fmin(py, zero), height = fabs(zero - py);
            double px = L->x0 + L->slot * x + L->slot * 0.1 + bar_w * (double)si;
            char tip[400], ys[64];
            fmt_num(y, ys, sizeof ys);
            snprintf(tip, sizeof tip, "%s: %s, %s", s->name, c->categories[(size_t)x], ys);
            pb__sb_printf(b, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                          looks[si].role == ROLE_MUTED ? "pb-data pb-muted" : "pb-data", px, top,
                          bar_w > 1 ? bar_w - 0.5 : bar_w, height, color);
            pb__sb_escape(b, tip);
            pb__sb_printf(b, "</title></rect>\n");
        }
    }
}

static void draw_category_labels(const struct pb_chart *c, char (*labels)[CAT_LABEL_CHARS * 4 + 4],
                                 const struct layout *L, struct pb_sbuf *b)
{
    double y = L->y1 + 14;
    for (size_t i = 0; i < c->n_categories; i += L->label_every) {
        double x = L->x0 + L->slot * ((double)i + 0.5);
        char rot[96];
        snprintf(rot, sizeof rot, "class=\"pb-xtick\" transform=\"rotate(-45 %.1f %.1f)\"", x, y);
        text(b, x, y, L->tilt ? "end" : "middle", 10, L->tilt ? rot : "class=\"pb-xtick\"", labels[i]);
    }
}

/* Numeric x ticks: grid lines, and labels where they do not run into the
 * previous one. */
static void draw_x_ticks(const struct pb_chart *c, const double *xt, size_t nxt, const struct axis *xa,
                         const struct layout *L, struct pb_sbuf *b)
{
    double last_right = -INFINITY;
    char label[64];
    for (size_t i = 0; i < nxt; i++) {
        double x = axis_pos(xa, xt[i], L->x0, L->x1);
        pb__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n", x, L->y0, x,
                      L->y1);
        if (c->bytes_x)
            fmt_bytes(xt[i], label, sizeof label);
        else if (fabs(xt[i]) < 1e5 && xt[i] == floor(xt[i]))
            snprintf(label, sizeof label, "%.0f", xt[i]);
        else
            fmt_num(xt[i], label, sizeof label);
        double half = text_width(label, 11) / 2;
        if (x - half < last_right + 4)
            continue;
        last_right = x + half;
        text(b, x, L->y1 + 16, "middle", 11, "class=\"pb-xtick\"", label);
    }
}

/* Reference lines with their labels placed apart, then the categorical
 * boundary with its label where no reference label is. */
static void draw_reference_lines(const struct pb_chart *c, const struct axis *ya, const struct layout *L,
                                 struct pb_sbuf *b)
{
    double line_y[8], base[8];
    struct box label_box[8];
    size_t n = c->n_hlines;
    for (size_t i = 0; i < n; i++)
        line_y[i] = axis_pos(ya, c->hlines[i].y, L->y1, L->y0);
    place_hline_labels(line_y, n, L->y0, L->y1, base);
    for (size_t i = 0; i < n; i++) {
        pb__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555555\" "
                         "stroke-dasharray=\"6,4\"/>\n", L->x0, line_y[i], L->x1, line_y[i]);
        double w = text_width(c->hlines[i].label, 10);
        label_box[i] = (struct box){L->x1 - 4 - w, base[i] - 10, L->x1 - 4, base[i] + 3};
        text(b, L->x1 - 4, base[i], "end", 10, "class=\"pb-ceiling-label\" fill=\"#333333\"", c->hlines[i].label);
    }
    if (!c->categories || c->vline_at <= 0 || (size_t)c->vline_at >= c->n_categories)
        return;
    double x = L->x0 + L->slot * c->vline_at, w = text_width(c->vline_label, 10);
    pb__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\" "
                     "stroke-dasharray=\"3,3\"/>\n", x, L->y0, x, L->y1);
    bool right = x + 4 + w <= L->x1 - 2;
    double lx = right ? x + 4 : x - 4 - w, y = L->y0 + 14;
    for (double cand = L->y0 + 14; cand <= L->y1 - 4; cand += 13) {
        struct box mine = {lx, cand - 10, lx + w, cand + 3};
        bool clear = true;
        for (size_t i = 0; i < n && clear; i++)
            clear = !boxes_overlap(mine, label_box[i]);
        if (clear) {
            y = cand;
            break;
        }
    }
    text(b, right ? x + 4 : x - 4, y, right ? "start" : "end", 10, "class=\"pb-vline-label\" fill=\"#333333\"",
         c->vline_label);
}

/* The title across the whole picture: smaller where long, shortened only
 * where even that does not fit. */
static void draw_title(const struct pb_chart *c, const struct layout *L, struct pb_sbuf *b)
{
    double room = L->w - 20;
    int size = 15;
    while (size > 11 && text_width(c->title, size) * 1.05 > room) /* bold runs wider */
        size--;
    char title[sizeof c->title];
    size_t fits = (size_t)(room / (size * 0.6 * 1.05));
    pb__chart_short_label(c->title, false, fits, title, sizeof title);
    text(b, L->w / 2.0, 24, "middle", size, "font-weight=\"bold\"", title);
}

void pb__chart_svg(const struct pb_chart *c, struct pb_sbuf *b)
{
    bool bars = c->kind == PB_CHART_BARS, cat = c->categories != NULL;
    bool logy = c->logy && !bars, logx = c->logx && !cat;
    size_t n_cat = cat ? c->n_categories : 0;
    char (*labels)[CAT_LABEL_CHARS * 4 + 4] = calloc(n_cat ? n_cat : 1, sizeof *labels);
    struct look *looks = calloc(c->n_series ? c->n_series : 1, sizeof *looks);
    if (!labels || !looks || !assign_looks(c, looks)) {
        b->failed = true;
        free(labels);
        free(looks);
        return;
    }
    for (size_t i = 0; i < n_cat; i++)
        pb__chart_short_label(category_text(c, i), false, CAT_LABEL_CHARS, labels[i], sizeof labels[i]);
    struct layout L;
    make_layout(c, labels, &L);
    pb__sb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                     "font-family=\"sans-serif\" role=\"img\">\n", L.w, L.h, L.w, L.h);
    pb__sb_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", L.w, L.h);
    draw_title(c, &L, b);
    double xlo, xhi, ylo, yhi;
    bool have_y = range_of(c, 1, logy, &ylo, &yhi);
    bool have_x = cat ? n_cat > 0 : range_of(c, 0, logx, &xlo, &xhi);
    if (!have_x || !have_y) {
        text(b, (L.x0 + L.x1) / 2.0, L.h / 2.0, "middle", 13, NULL, "no measured values to plot");
        pb__sb_printf(b, "</svg>\n");
        free(labels);
        free(looks);
        return;
    }
    double yt[16], xt[16];
    struct axis ya, xa = {false, 0, 1};
    size_t nyt = make_axis(&ya, logy, false, ylo, yhi, true, yt, 9);
    size_t nxt = 0;
    if (!cat && !logx && (nxt = integer_ticks(c, xt, 12)) > 0) {
        xa.lo = xt[0];
        xa.hi = xt[nxt - 1];
    } else if (!cat) {
        if (!logx && xlo == xhi)
            xlo -= 1, xhi += 1;
        nxt = make_axis(&xa, logx, logx && (c->bytes_x || all_pow2_x(c)), xlo, xhi, false, xt, 10);
    }
    char label[64];
    for (size_t i = 0; i < nyt; i++) {
        double y = axis_pos(&ya, yt[i], L.y1, L.y0);
        pb__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", L.x0, y, L.x1,
                      y);
        fmt_num(yt[i], label, sizeof label);
        text(b, L.x0 - 6, y + 4, "end", 11, NULL, label);
    }
    if (cat)
        draw_category_labels(c, labels, &L, b);
    else
        draw_x_ticks(c, xt, nxt, &xa, &L, b);
    pb__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444444\"/>\n",
                  L.x0, L.y0, L.x1 - L.x0, L.y1 - L.y0);
    text(b, (L.x0 + L.x1) / 2.0, L.h - 8, "middle", 12, NULL, c->xlabel);
    char rot[64];
    snprintf(rot, sizeof rot, "transform=\"rotate(-90 16 %.1f)\"", (L.y0 + L.y1) / 2.0);
    text(b, 16, (L.y0 + L.y1) / 2.0, "middle", 12, rot, c->ylabel);

    if (bars) {
        draw_bars(c, looks, &L, &ya, b);
    } else { /* muted underneath, anchors on top */
        static const enum role layers[] = {ROLE_MUTED, ROLE_REF, ROLE_VIVID, ROLE_ANCHOR};
        for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++)
            for (size_t si = 0; si < c->n_series; si++)
                if (looks[si].role == layers[l])
                    draw_series(c, &c->series[si], &looks[si], &L, &xa, &ya, b);
    }
    draw_reference_lines(c, &ya, &L, b);
    legend(c, looks, &L, b);
    pb__sb_printf(b, "</svg>\n");
    free(labels);
    free(looks);
}

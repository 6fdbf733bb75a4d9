/* SVG charts (see svg.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        s->cap = cap;
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
    return true;
}

int pb__chart_category(struct pb_chart *c, const char *name)
{
    for (size_t i = 0; i < c->n_categories; i++)
        if (strcmp(c->categories[i], name) == 0)
            return (int)i;
    char **bigger = realloc(c->categories, (c->n_categories + 1) * sizeof *bigger);
    if (!bigger)
        return -1;
    c->categories = bigger;
    if (!(bigger[c->n_categories] = strdup(name)))
        return -1;
    return (int)c->n_categories++;
}

void pb__chart_hline(struct pb_chart *c, const char *label, double y)
{
    if (c->n_hlines < sizeof c->hlines / sizeof c->hlines[0] && isfinite(y) && y > 0) {
        snprintf(c->hlines[c->n_hlines].label, sizeof c->hlines[0].label, "%s", label);
        c->hlines[c->n_hlines++].y = y;
    }
}

size_t pb__chart_points(const struct pb_chart *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_series; i++)
        for (size_t k = 0; k < c->series[i].n; k++)
            n += isfinite(c->series[i].x[k]) && isfinite(c->series[i].y[k]);
    return n;
}

void pb__chart_free(struct pb_chart *c)
{
    for (size_t i = 0; i < c->n_series; i++) {
        free(c->series[i].x);
        free(c->series[i].y);
    }
    free(c->series);
    for (size_t i = 0; i < c->n_categories; i++)
        free(c->categories[i]);
    free(c->categories);
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
    if (!c->categories && range_of(c, 0, false, &lo, &hi) && lo > 0 && hi / lo >= 8)
        c->logx = true;
    if (range_of(c, 1, false, &lo, &hi) && lo > 0 && hi / lo >= 50)
        c->logy = true;
}

/* ---- drawing ----------------------------------------------------------------- */

enum { W = 860, H = 440, X0 = 78, X1 = 560, Y0 = 46, Y1 = 370 };

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#ad494a"};
#define N_COLORS (sizeof palette / sizeof palette[0])

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

static void text(struct pb_sbuf *b, double x, double y, const char *anchor, int size, const char *extra,
                 const char *s)
{
    pb__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\"%s%s>", x, y, anchor,
                  size, extra ? " " : "", extra ? extra : "");
    pb__sb_escape(b, s);
    pb__sb_printf(b, "</text>\n");
}

static void legend(const struct pb_chart *c, struct pb_sbuf *b)
{
    size_t room = (size_t)(H - Y0) / 15, shown = c->n_series <= room ? c->n_series : room - 1;
    for (size_t i = 0; i < shown; i++) {
        const struct pb_series *s = &c->series[i];
        double y = Y0 + 6 + 15.0 * (double)i;
        const char *color = palette[i % N_COLORS];
        if (s->style == PB_SERIES_POINTS)
            pb__sb_printf(b, "<circle cx=\"%d\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", X1 + 26, y, color);
        else
            pb__sb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                          X1 + 16, y, X1 + 36, y, color,
                          s->style == PB_SERIES_DASHED ? " stroke-dasharray=\"5,3\"" : "");
        char name[48];
        snprintf(name, sizeof name, "%.40s%s", s->name, strlen(s->name) > 40 ? "..." : "");
        text(b, X1 + 42, y + 4, "start", 11, NULL, name);
    }
    if (shown < c->n_series) {
        char more[48];
        snprintf(more, sizeof more, "+%zu more (see the table)", c->n_series - shown);
        text(b, X1 + 42, Y0 + 10 + 15.0 * (double)shown, "start", 11, "font-style=\"italic\"", more);
    }
}

void pb__chart_svg(const struct pb_chart *c, struct pb_sbuf *b)
{
    bool bars = c->kind == PB_CHART_BARS, cat = c->categories != NULL;
    pb__sb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                     "font-family=\"sans-serif\" role=\"img\">\n", W, H, W, H);
    pb__sb_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);
    text(b, W / 2.0, 24, "middle", 15, "font-weight=\"bold\"", c->title);
    double xlo, xhi, ylo, yhi;
    bool have_y = range_of(c, 1, c->logy, &ylo, &yhi);
    bool have_x = cat ? c->n_categories > 0 : range_of(c, 0, c->logx, &xlo, &xhi);
    if (!have_x || !have_y) {
        text(b, W / 2.0, H / 2.0, "middle", 13, NULL, "no measured values to plot");
        pb__sb_printf(b, "</svg>\n");
        return;
    }
    double yt[16], xt[16];
    struct axis ya, xa = {false, 0, 1};
    size_t nyt = make_axis(&ya, c->logy, false, ylo, yhi, true, yt, 9);
    size_t nxt = 0;
    if (!cat) {
        if (!c->logx && xlo == xhi)
            xlo -= 1, xhi += 1;
        nxt = make_axis(&xa, c->logx, c->logx && (c->bytes_x || all_pow2_x(c)), xlo, xhi, false, xt, 10);
    }
    /* grid and y ticks */
    char label[64];
    for (size_t i = 0; i < nyt; i++) {
        double y = axis_pos(&ya, yt[i], Y1, Y0);
        pb__sb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", X0, y, X1, y);
        fmt_num(yt[i], label, sizeof label);
        text(b, X0 - 6, y + 4, "end", 11, NULL, label);
    }
    if (cat) {
        double slot = (double)(X1 - X0) / (double)c->n_categories;
        bool tilt = c->n_categories > 6;
        for (size_t i = 0; i < c->n_categories; i++) {
            double x = X0 + slot * ((double)i + 0.5);
            char name[40];
            snprintf(name, sizeof name, "%.28s%s", c->categories[i], strlen(c->categories[i]) > 28 ? "..." : "");
            char rot[64];
            snprintf(rot, sizeof rot, "transform=\"rotate(-35 %.1f %d)\"", x, Y1 + 14);
            text(b, x, Y1 + 14, tilt ? "end" : "middle", 10, tilt ? rot : NULL, name);
        }
    } else {
        for (size_t i = 0; i < nxt; i++) {
            double x = axis_pos(&xa, xt[i], X0, X1);
            pb__sb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eeeeee\"/>\n", x, Y0, x, Y1);
            if (c->bytes_x)
                fmt_bytes(xt[i], label, sizeof label);
            else if (xt[i] >= 1 && xt[i] < 1e5 && xt[i] == floor(xt[i]))
                snprintf(label, sizeof label, "%.0f", xt[i]);
            else
                fmt_num(xt[i], label, sizeof label);
            text(b, x, Y1 + 16, "middle", 11, NULL, label);
        }
    }
    pb__sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444444\"/>\n", X0, Y0,
                  X1 - X0, Y1 - Y0);
    text(b, (X0 + X1) / 2.0, H - 8, "middle", 12, NULL, c->xlabel);
    char rot[64];
    snprintf(rot, sizeof rot, "transform=\"rotate(-90 16 %.1f)\"", (Y0 + Y1) / 2.0);
    text(b, 16, (Y0 + Y1) / 2.0, "middle", 12, rot, c->ylabel);

    if (cat && c->vline_at > 0 && (size_t)c->vline_at < c->n_categories) {
        double x = X0 + (double)(X1 - X0) / (double)c->n_categories * c->vline_at;
        pb__sb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333333\" "
                         "stroke-dasharray=\"3,3\"/>\n", x, Y0, x, Y1);
        text(b, x + 4, Y0 + 14, "start", 10, "fill=\"#333333\"", c->vline_label);
    }
    /* reference lines */
    for (size_t i = 0; i < c->n_hlines; i++) {
        double y = axis_pos(&ya, c->hlines[i].y, Y1, Y0);
        pb__sb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#555555\" "
                         "stroke-dasharray=\"6,4\"/>\n", X0, y, X1, y);
        text(b, X1 - 4, y - 4, "end", 10, "fill=\"#333333\"", c->hlines[i].label);
    }

    /* data */
    double slot = cat ? (double)(X1 - X0) / (double)c->n_categories : 0;
    double bar_w = bars && c->n_series ? slot * 0.8 / (double)c->n_series : 0;
    for (size_t si = 0; si < c->n_series; si++) {
        const struct pb_series *s = &c->series[si];
        const char *color = palette[si % N_COLORS];
        bool started = false;
        if (!bars && s->style != PB_SERIES_POINTS) {
            for (size_t k = 0; k < s->n; k++) {
                double x = s->x[k], y = s->y[k];
                if (!isfinite(x) || !isfinite(y) || (c->logy && y <= 0) || (c->logx && !cat && x <= 0))
                    continue;
                double px = cat ? X0 + slot * (x + 0.5) : axis_pos(&xa, x, X0, X1), py = axis_pos(&ya, y, Y1, Y0);
                if (!started)
                    pb__sb_printf(b, "<polyline class=\"pb-data\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", color,
                                  s->style == PB_SERIES_DASHED ? "1.5" : "2",
                                  s->style == PB_SERIES_DASHED ? " stroke-dasharray=\"5,3\"" : "");
                pb__sb_printf(b, "%s%.1f,%.1f", started ? " " : "", px, py);
                started = true;
            }
            if (started)
                pb__sb_printf(b, "\"/>\n");
        }
        if (s->style == PB_SERIES_DASHED)
            continue;
        for (size_t k = 0; k < s->n; k++) {
            double x = s->x[k], y = s->y[k];
            if (!isfinite(x) || !isfinite(y) || (c->logy && y <= 0) || (c->logx && !cat && x <= 0))
                continue;
            char tip[400], xs[64], ys[64];
            fmt_num(y, ys, sizeof ys);
            if (cat)
                snprintf(xs, sizeof xs, "%s", c->categories[(size_t)x]);
            else if (c->bytes_x)
                fmt_bytes(x, xs, sizeof xs);
            else
                fmt_num(x, xs, sizeof xs);
            snprintf(tip, sizeof tip, "%s: %s, %s", s->name, xs, ys);
            double py = axis_pos(&ya, y, Y1, Y0);
            if (bars) {
                double px = X0 + slot * x + slot * 0.1 + bar_w * (double)si;
                pb__sb_printf(b, "<rect class=\"pb-data\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", px,
                              py, bar_w > 1 ? bar_w - 0.5 : bar_w, Y1 - py > 0 ? Y1 - py : 0, color);
            } else {
                double px = cat ? X0 + slot * (x + 0.5) : axis_pos(&xa, x, X0, X1);
                pb__sb_printf(b, "<circle class=\"pb-data\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>", px, py, color);
            }
            pb__sb_escape(b, tip);
            pb__sb_printf(b, "</title></%s>\n", bars ? "rect" : "circle");
        }
    }
    legend(c, b);
    pb__sb_printf(b, "</svg>\n");
}

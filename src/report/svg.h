/* Charts written as SVG text, no dependencies: line charts (numeric or
 * categorical x, linear or log axes), grouped bar charts and reference lines
 * (ceilings). Non-finite values are left out, never written. Every mark that
 * draws a measured value has class "pb-data" (the layout check counts them). */
#ifndef PARBENCH_REPORT_SVG_H
#define PARBENCH_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/core.h"

/* A growing string; `failed` sticks after an allocation failure. */
struct pb_sbuf {
    char *s;
    size_t len, cap;
    bool failed;
};

void pb__sb_printf(struct pb_sbuf *b, const char *fmt, ...) PB__PRINTF(2, 3);
/* text with & < > " ' escaped for XML/HTML. */
void pb__sb_escape(struct pb_sbuf *b, const char *text);
void pb__sb_free(struct pb_sbuf *b);

enum pb_series_style { PB_SERIES_LINE, PB_SERIES_POINTS, PB_SERIES_DASHED };

struct pb_series {
    char name[128];
    enum pb_series_style style;
    double *x, *y;
    size_t n, cap;
};

struct pb_hline {
    char label[96];
    double y;
};

enum pb_chart_kind { PB_CHART_LINES, PB_CHART_BARS };

struct pb_chart {
    enum pb_chart_kind kind;
    char title[192], xlabel[96], ylabel[96];
    bool logx, logy, bytes_x; /* bytes_x: x ticks as 1K, 4M, 1G */
    /* Categorical x (bars always, lines optionally): point x = category index. */
    char **categories;
    size_t n_categories;
    struct pb_series *series;
    size_t n_series;
    struct pb_hline hlines[8];
    size_t n_hlines;
    /* A marked boundary before categorical x index `vline_at` (< 0 = none),
     * e.g. where GPUs overtake CPUs. */
    int vline_at;
    char vline_label[96];
};

/* A new series (name copied); NULL when out of memory. Points append. */
struct pb_series *pb__chart_series(struct pb_chart *c, const char *name, enum pb_series_style style);
/* The series named `name`, made on first use. */
struct pb_series *pb__chart_series_named(struct pb_chart *c, const char *name);
bool pb__series_add(struct pb_series *s, double x, double y);
/* Index of a category, added on first use; -1 when out of memory. */
int pb__chart_category(struct pb_chart *c, const char *name);
void pb__chart_hline(struct pb_chart *c, const char *label, double y);
/* Picks log axes where the finite, positive values span a wide range. */
void pb__chart_auto_log(struct pb_chart *c);
size_t pb__chart_points(const struct pb_chart *c);
void pb__chart_free(struct pb_chart *c);

/* One <svg> element (no XML prolog) into b. */
void pb__chart_svg(const struct pb_chart *c, struct pb_sbuf *b);

#endif

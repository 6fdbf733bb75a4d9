/* Charts written as SVG text, no dependencies: line charts (numeric or
 * categorical x, linear or log axes), grouped bar charts and reference lines
 * (ceilings). Non-finite values are left out, never written. Every mark that
 * draws a measured value has class "pb-data" (the layout check counts them);
 * reference curves (dashed series) have class "pb-ref".
 *
 * The drawing follows the data's shape: bars always on a linear axis from
 * zero; integer x with few distinct values gets ticks only at those values;
 * category labels are shortened, rotated where they would collide, and the
 * chart widens (or labels thin out) so that none overlap; ceiling labels are
 * nudged apart. Where a chart has more than PB_CHART_MAX_VIVID measured
 * series, the best few and every anchor (vendor library) are drawn in colour
 * and the rest thin and grey. */
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

/* PB_SERIES_DASHED: a reference curve (a roof), not measured values. */
struct pb_series {
    char name[128];
    enum pb_series_style style;
    bool anchor; /* a vendor library's results: drawn dark, dashed, with squares */
    double *x, *y;
    char **tips; /* per point, what the point is (its tooltip names it); NULL: none */
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
    bool lower_is_better; /* time: the best series are the lowest */
    /* Categorical x (bars always, lines optionally): point x = category index.
     * category_labels[i]: what the axis shows (NULL: the name itself);
     * category_anchor[i]: the category is an anchor's (bars per variant). */
    char **categories, **category_labels;
    bool *category_anchor;
    size_t n_categories;
    size_t *category_slots, n_slots; /* categories by name: index + 1 (0: empty), open addressing */
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
/* A point whose tooltip also says what it is (e.g. "cuda/regblock n=4096"). */
bool pb__series_add_tip(struct pb_series *s, double x, double y, const char *tip);
/* Index of a category, added on first use; -1 when out of memory. */
int pb__chart_category(struct pb_chart *c, const char *name);
/* The axis label of category i (copied); false when out of memory. */
bool pb__chart_category_label(struct pb_chart *c, size_t i, const char *label);
void pb__chart_hline(struct pb_chart *c, const char *label, double y);
/* Picks log axes where the finite, positive values span a wide range; never
 * for bars, which are always drawn from zero on a linear axis. */
void pb__chart_auto_log(struct pb_chart *c);
/* A line chart whose measured series all sit at one x value (a sweep of one
 * value) becomes bars: one category per series (anchors kept; a series
 * measured there more than once shows its best), reference curves become
 * reference lines, the axis label names the value ("n = 16384", x_name being
 * the parameter). false only when out of memory. */
bool pb__chart_one_x_to_bars(struct pb_chart *c, const char *x_name);
/* Finite points of all series, and of the measured (non-reference) ones. */
size_t pb__chart_points(const struct pb_chart *c);
size_t pb__chart_measured_points(const struct pb_chart *c);
void pb__chart_free(struct pb_chart *c);

/* Series a chart draws in colour before muting the rest. */
#define PB_CHART_MAX_VIVID 8

/* A label at most max_chars characters long: when longer, its head and tail
 * around an ellipsis. strip_path: a path's file name without directories and
 * a .mtx/.mm extension (matrices). */
void pb__chart_short_label(const char *name, bool strip_path, size_t max_chars, char *buf, size_t len);

/* One <svg> element (no XML prolog) into b. */
void pb__chart_svg(const struct pb_chart *c, struct pb_sbuf *b);

#endif

/* parbench study ID: the five source studies (SEEDS.md) as data: per study
 * its experiments as parbench run command lines and its published figures,
 * transcribed from the originals under shared/seeds/, each with where our
 * matching row is. study.c sets theirs beside ours. */
#ifndef PARBENCH_REPORT_STUDY_H
#define PARBENCH_REPORT_STUDY_H

#include <stdbool.h>
#include <stddef.h>

#include "report/results.h"
#include "report/svg.h"

/* One experiment: `parbench run` with these arguments writes DIR/NAME.csv.
 * In a --matrix list, "@NAME" stands for NAME.mtx (or .mtx.gz) of the
 * --matrices directory; names not found there are left out. */
struct pb_study_exp {
    const char *name;
    const char *what;
    const char *full;   /* the full study */
    const char *quick;  /* --quick: small sizes, few repetitions */
    const char *scaled; /* how the full run departs from the study's sizes, or NULL */
};

/* Where a figure's counterpart is among our rows: the rows of experiment
 * `exp` on the first backend of the comma-separated list that ran one OK,
 * of `variant` (NULL: any, the best counts), whose parameters match
 * `params` ("key=value ..."; keys: the benchmark's parameters, precision,
 * threads; a file parameter matches its base name without .mtx), or
 * `quick_params` in a quick run (NULL: the same). `column`: gflops, gbps,
 * speedup, median_s or one of the benchmark's extra columns. Among several
 * rows the best counts: the least time (a column ending in _s), else the
 * highest value. */
struct pb_study_sel {
    const char *exp, *backend, *variant, *params, *quick_params, *column;
};

/* One published figure and its counterpart. */
struct pb_study_fig {
    const char *what;
    const char *source;   /* table, figure, slide or section of the original */
    const char *device;   /* theirs */
    double value, per;    /* theirs: value, or value / per where per != 0 (a ratio of two of their
                             numbers); NAN: the original gives no number */
    const char *unit;
    struct pb_study_sel num, den; /* ours: num, or num / den where den.exp is set (den.backend
                                     NULL: num's) */
    char claim;           /* '<' or '>': their conclusion is that the value lies below or above
                             `limit`; 0: no conclusion to test */
    double limit;
    const char *conclusion; /* that conclusion in words */
    const char *remark;     /* about the transcription, or NULL */
};

struct pb_study {
    const char *id, *title;
    const char *original; /* shared/seeds/... */
    const char *summary;  /* what they measured, on what */
    const char *notes;    /* about the original and what we run instead, or NULL */
    const struct pb_study_exp *exps;
    size_t n_exps;
    const struct pb_study_fig *figs;
    size_t n_figs;
};

size_t pb__study_count(void);
const struct pb_study *pb__study_at(size_t i);
const struct pb_study *pb__study_find(const char *id);

/* One line of the comparison. */
struct pb_study_cmp {
    const struct pb_study_fig *fig;
    double theirs, ours, ratio; /* NAN when absent */
    bool measured;
    int verdict;                /* +1 agrees with their conclusion, -1 contradicts it, 0 no test */
    char backend[32], device[160];
    char note[640];
};

/* Compares every figure of st with the rows of set (the study's result
 * files; file_exp[i] names the experiment of set->files[i]; missing[e] says
 * why experiment e wrote no file, or is NULL). out has st->n_figs entries. */
void pb__study_compare(const struct pb_study *st, const struct pb_rp_set *set, const char *const *file_exp,
                       const char *const *missing, bool quick, struct pb_study_cmp *out);

/* One line of a comparison as the HTML reports show it: study.c's from a
 * pb_study_cmp, parbench report's from a comparison.csv read back. */
struct pb_study_line {
    const char *figure, *source, *their_device, *unit, *our_backend, *our_device, *note;
    double theirs, ours, ratio; /* NAN when absent */
    bool theirs_exact;          /* theirs as transcribed (every digit), not a ratio of two of theirs */
    bool measured;
    int verdict;                /* as pb_study_cmp's */
};

/* The table of lines, with the note that reads it; marks b failed when out
 * of memory. */
void pb__study_table_html(struct pb_sbuf *b, const struct pb_study_line *lines, size_t n);

/* The comparison as CSV (one header line, one line per figure), as a plain
 * text table, and as the HTML section at the top of the study's report. */
void pb__study_csv(struct pb_sbuf *b, const struct pb_study *st, const struct pb_study_cmp *c);
void pb__study_text(struct pb_sbuf *b, const struct pb_study *st, const struct pb_study_cmp *c, bool quick);
void pb__study_html(struct pb_sbuf *b, const struct pb_study *st, const struct pb_study_cmp *c, bool quick,
                    const char *const *commands, const char *const *missing);

#endif

/* Result files read back for reports: parbench's own JSON (src/output/json.c)
 * and CSV (src/output/csv.c), of any benchmark. Columns the reader does not
 * know are kept by name, so results of benchmarks added later still load. */
#ifndef PARBENCH_REPORT_RESULTS_H
#define PARBENCH_REPORT_RESULTS_H

#include <stdbool.h>
#include <stddef.h>

#include "output/ceilings.h"
#include "parbench/pb.h"

/* A named value: num is NAN when text is not a number. */
struct pb_rp_kv {
    char *key, *text;
    double num;
};

struct pb_rp_row {
    size_t file; /* index into the set's files */
    char *bench, *backend, *variant, *device, *precision, *problem, *status, *reason, *timer, *check;
    char *rank; /* "0".."N-1", or "all" (aggregate / distributed); "0" in files from before ranks */
    int threads, ranks;
    bool anchor;
    struct pb_rp_kv *params, *extras; /* params: the benchmark's parameters in order */
    size_t n_params, n_extras;
    /* Seconds and rates; NAN when absent. */
    double reps, min, max, median, mean, stddev, cv, gflops, gbps, speedup, err_max, fraction;
    /* Energy over the timed repetitions (output/result.h); NAN when absent. */
    double energy_j, power_w, gflops_per_w, gbps_per_w, sm_mhz, mem_mhz;
    char *throttle, *energy_source; /* "" when absent */
    double *samples;
    size_t n_samples;
};

/* Context of one file (from JSON's "context" or the first CSV row). */
struct pb_rp_file {
    char *path;
    char *name;  /* as shown: the path relative to the directory given (a file given itself: without
                    directories), so that two report.csv of different folders stay apart */
    char *study; /* "NNN" when the file lies in a folder named study-NNN (the nearest such), else "" */
    char *bench, *date, *commit, *host, *cpu, *command;
    size_t first_row, n_rows;
};

/* A device as `parbench devices --format json` describes it. */
struct pb_rp_device {
    char *backend, *name, *kind;
    struct pb_rp_kv *props; /* its properties in file order */
    size_t n_props;
};

/* One figure of a comparison: its line of the CSV; strings never NULL,
 * numbers NAN when absent. */
struct pb_rp_figure {
    char *figure, *source, *their_device, *unit, *our_backend, *our_device, *note;
    double theirs, ours, ratio;
    bool measured;
    int verdict; /* +1 agrees with the study's conclusion, -1 contradicts it, 0 no test */
};

/* A study's published figures beside ours, as `parbench study` writes them to
 * DIR/comparison.csv (the header starts "study,figure,source,their_device"). */
struct pb_rp_comparison {
    char *path, *name; /* as a file's */
    char *study;       /* the study column of its first line; without lines, the folder's as a file's */
    char *copies;      /* names of files identical to it, ", "-separated; "" when none */
    struct pb_rp_figure *figs;
    size_t n_figs;
};

struct pb_rp_set {
    struct pb_rp_row *rows;
    size_t n_rows, cap_rows;
    struct pb_rp_file *files;
    size_t n_files;
    struct pb_ceilings ceilings; /* from ceilings files among the inputs */
    struct pb_rp_device *devices; /* from devices files among the inputs */
    size_t n_devices;
    struct pb_rp_comparison *comparisons; /* comparison files among the inputs; a file identical to
                                             one already loaded for the same study is kept once */
    size_t n_comparisons;
};

/* Adds a results file (.json or .csv, by content), a ceilings file, a
 * devices file (parbench devices --format json) or a study's comparison to set;
 * a directory adds its .json and .csv files and those of its folders, in name
 * order, skipping files that are none of these; folders whose names start
 * with '.', symbolic links to folders and folders more than PB_RP_MAX_DEPTH
 * levels down are not entered. PB_ERR_IO / PB_ERR_PARSE with a message
 * naming the file. */
#define PB_RP_MAX_DEPTH 4
pb_status pb__rp_load(struct pb_rp_set *set, const char *path);
/* The same for one file's NUL-terminated text (name: its path, for messages). */
pb_status pb__rp_load_text(struct pb_rp_set *set, const char *name, const char *text);
void pb__rp_free(struct pb_rp_set *set);

/* A row's parameter or extra column by name; NULL when absent. */
const struct pb_rp_kv *pb__rp_find(const struct pb_rp_row *r, const char *key);
bool pb__rp_ok(const struct pb_rp_row *r);

/* The ceilings a row is held against: its benchmark's roof (bench.h). */
struct pb_roof pb__rp_roof(const struct pb_rp_row *r);
/* An OK row's fraction of its ceiling: the file's own where it was computed
 * against the same ceilings (FMA peak, device memory: older files held
 * transfers and on-chip rates against memory too), else from the set's
 * ceilings of its device; NAN when none, and always for unmeasured roofs
 * (pb__roof_unmeasured). */
double pb__rp_fraction(const struct pb_rp_set *set, const struct pb_rp_row *r);


#endif

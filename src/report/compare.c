/* parbench compare BASE NEW: rows matched by (bench, backend, device,
 * variant, precision, threads, parameters); per pair the ratio of median
 * times and whether the difference is larger than the spread of the
 * samples. A row that got slower beyond the threshold and beyond the spread,
 * or that verified in BASE and FAILED or ERROR in NEW, is a regression: exit 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "report/charts.h"
#include "report/cli_util.h"
#include "report/report.h"

/* Whether a parameter is empty or at the benchmark's default: left out of
 * the key, so files written before a parameter existed still match. */
static bool at_default(const char *bench, const char *key, const char *text)
{
    if (!text[0])
        return true;
    const struct pb_bench *b = pb__bench_find(bench);
    for (size_t i = 0; b && i < b->n_params; i++)
        if (strcmp(b->params[i].name, key) == 0)
            return b->params[i].default_value && strcmp(b->params[i].default_value, text) == 0;
    return false;
}

static void row_key(const struct pb_rp_row *r, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s|%s|%s|%s|%s|%d|%d@%s", r->bench, r->backend, r->device, r->variant,
                                   r->precision, r->threads, r->ranks, r->rank);
    for (size_t i = 0; i < r->n_params && used < len; i++)
        if (!at_default(r->bench, r->params[i].key, r->params[i].text))
            used += (size_t)snprintf(buf + used, len - used, "|%s=%s", r->params[i].key, r->params[i].text);
}

/* Rows of a set measured again later (a file's rows appended twice, a folder
 * of several runs): each key's latest counts, by its file's date, then by
 * its place in the file. stale[i] marks the others; returns how many. */
struct keyed {
    char key[1024];
    const char *date;
    size_t row;
};

static int by_key_then_time(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (!c)
        c = strcmp(x->date, y->date);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

static size_t mark_stale(const struct pb_rp_set *set, bool *stale)
{
    struct keyed *k = malloc((set->n_rows ? set->n_rows : 1) * sizeof *k);
    if (!k)
        return 0; /* out of memory: every row counts, as before */
    for (size_t i = 0; i < set->n_rows; i++) {
        row_key(&set->rows[i], k[i].key, sizeof k[i].key);
        const char *date = set->files[set->rows[i].file].date;
        k[i].date = date ? date : "";
        k[i].row = i;
    }
    qsort(k, set->n_rows, sizeof *k, by_key_then_time);
    size_t n = 0;
    for (size_t i = 0; i + 1 < set->n_rows; i++)
        if (strcmp(k[i].key, k[i + 1].key) == 0)
            stale[k[i].row] = true, n++;
    free(k);
    return n;
}

/* Lowest and highest sample, else median -+ one standard deviation. */
static void spread(const struct pb_rp_row *r, double *lo, double *hi)
{
    if (r->n_samples) {
        *lo = INFINITY, *hi = -INFINITY;
        for (size_t i = 0; i < r->n_samples; i++)
            *lo = fmin(*lo, r->samples[i]), *hi = fmax(*hi, r->samples[i]);
        return;
    }
    double sd = isfinite(r->stddev) ? r->stddev : 0;
    *lo = isfinite(r->min) ? fmin(r->min, r->median - sd) : r->median - sd;
    *hi = r->median + sd;
}

static void compare_help(FILE *f)
{
    fprintf(f, "usage: parbench compare BASE NEW [options]\n\n"
               "Matches the rows of two result files (.json or .csv) by benchmark, backend, device,\n"
               "variant, precision, threads and parameters, and prints per pair the ratio of median\n"
               "times (NEW/BASE; below 1 is faster) and whether the difference is larger than the\n"
               "spread of the samples (their ranges do not overlap), as the change of the time and\n"
               "the speed factor (\"time -58.8%%, 2.43x faster\").\n\noptions:\n"
               "  --threshold PCT         a time more than PCT%% longer (and beyond the spread) is a\n"
               "                          regression (default 10)\n"
               "  --quiet                 print regressions and the summary only\n"
               "\nexit status: 0 no regression, 1 a row regressed, or FAILED or ERROR in NEW that was OK in BASE,\n"
               "2 usage error, 3 a file could not be read or no matched row could be compared; rows of BASE\n"
               "missing from NEW are named on stderr. A row measured again later in the same file (or in a\n"
               "folder given as BASE or NEW) counts once, from its latest measurement, and that is said.\n");
}

int pb__cmd_compare(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL}, *threshold_text = "10";
    int n_files = 0, rc = PB_EXIT_OK;
    bool quiet = false;
    for (int i = 1; i < argc && rc == PB_EXIT_OK; i++) {
        const char *v;
        if (pb__cli_is_help(argv[i])) {
            compare_help(stdout);
            return PB_EXIT_OK;
        }
        if (strcmp(argv[i], "--quiet") == 0)
            quiet = true;
        else if (pb__cli_value(argc, argv, &i, "threshold", 0, &v, &rc))
            threshold_text = v;
        else if (rc == PB_EXIT_OK && argv[i][0] == '-' && argv[i][1])
            rc = pb__cli_die(PB_EXIT_USAGE, "unknown option '%s' for compare (see parbench compare --help)", argv[i]);
        else if (rc == PB_EXIT_OK && n_files < 2)
            files[n_files++] = argv[i];
        else if (rc == PB_EXIT_OK)
            rc = pb__cli_die(PB_EXIT_USAGE, "compare takes two files (got '%s' too)", argv[i]);
    }
    if (rc != PB_EXIT_OK)
        return rc;
    if (n_files == 0 && argc < 2) {
        compare_help(stderr);
        return PB_EXIT_USAGE;
    }
    if (n_files != 2)
        return pb__cli_die(PB_EXIT_USAGE, "compare needs two result files, BASE and NEW (got %s)",
                           n_files ? "one" : "none");
    char *end;
    double threshold = strtod(threshold_text, &end);
    if (end == threshold_text || (*end && strcmp(end, "%") != 0) || !(threshold >= 0) || threshold > 1000)
        return pb__cli_die(PB_EXIT_USAGE, "--threshold needs a percentage between 0 and 1000 (got '%s')",
                           threshold_text);
    struct pb_rp_set sets[2];
    for (int k = 0; k < 2; k++) {
        rc = pb__rp_load_all(&sets[k], (char **)&files[k], 1, NULL);
        if (rc != PB_EXIT_OK) {
            if (k)
                pb__rp_free(&sets[0]);
            pb__rp_free(&sets[k]);
            return rc;
        }
    }
    const struct pb_rp_set *base = &sets[0], *cur = &sets[1];
    size_t matched = 0, regressed = 0, faster = 0, slower = 0, only_new = 0, not_compared = 0;
    /* used: BASE rows matched, or stale (not to be matched); stale_new: NEW's */
    bool *used = calloc(base->n_rows + 1, sizeof *used), *stale_new = calloc(cur->n_rows + 1, sizeof *stale_new);
    if (!used || !stale_new) {
        free(used);
        free(stale_new);
        pb__rp_free(&sets[0]);
        pb__rp_free(&sets[1]);
        return pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
    }
    size_t stale[2] = {mark_stale(base, used), mark_stale(cur, stale_new)};
    for (int k = 0; k < 2; k++)
        if (stale[k])
            fprintf(stderr, "parbench: compare: %s holds %zu rows measured again later in it: the latest of each "
                            "taken\n", files[k], stale[k]);
    printf("%-10s %-28s %-12s %-18s %10s %10s %7s  %s\n", "bench", "backend/variant", "precision", "problem",
           "base", "new", "new/base", "verdict");
    for (size_t i = 0; i < cur->n_rows; i++) {
        const struct pb_rp_row *n = &cur->rows[i];
        if (stale_new[i])
            continue;
        char kn[1024], kb[1024];
        row_key(n, kn, sizeof kn);
        const struct pb_rp_row *b = NULL;
        for (size_t j = 0; j < base->n_rows && !b; j++) {
            if (used[j])
                continue;
            row_key(&base->rows[j], kb, sizeof kb);
            if (strcmp(kn, kb) == 0) {
                b = &base->rows[j];
                used[j] = true;
            }
        }
        if (!b) {
            only_new++;
            continue;
        }
        matched++;
        char verdict[96] = "", tb[32], tn[32], ratio_text[16] = "-";
        bool bad = false;
        pb__rp_fmt_time(b->median, tb, sizeof tb);
        pb__rp_fmt_time(n->median, tn, sizeof tn);
        if (pb__rp_ok(b) && (strcmp(n->status, "FAILED") == 0 || strcmp(n->status, "ERROR") == 0)) {
            snprintf(verdict, sizeof verdict, "REGRESSION: %s (was OK)", n->status);
            bad = true;
        } else if (!pb__rp_ok(b) || !pb__rp_ok(n)) {
            snprintf(verdict, sizeof verdict, "not compared (%s -> %s)", b->status, n->status);
            not_compared++;
        } else if (!(b->median > 0 && isfinite(b->median)) || !(n->median > 0 && isfinite(n->median))) {
            /* an OK row without a usable time: an edited file */
            bool base_bad = !(b->median > 0 && isfinite(b->median));
            snprintf(verdict, sizeof verdict, "not compared (%s has no usable median time)", base_bad ? "base" : "new");
            not_compared++;
        } else {
            double ratio = n->median / b->median, blo, bhi, nlo, nhi;
            spread(b, &blo, &bhi);
            spread(n, &nlo, &nhi);
            bool beyond = nlo > bhi || nhi < blo;
            snprintf(ratio_text, sizeof ratio_text, "%.3f", ratio);
            /* The change of time in percent and the speed as a factor: a
             * time 58.8% lower is 2.43x faster, not "142.8% faster". */
            char change[48];
            snprintf(change, sizeof change, "time %+.1f%%, %.2fx %s", (ratio - 1) * 100,
                     ratio > 1 ? ratio : 1 / ratio, ratio > 1 ? "slower" : "faster");
            if (!beyond) {
                snprintf(verdict, sizeof verdict, "within the spread");
            } else if (ratio > 1 + threshold / 100) {
                snprintf(verdict, sizeof verdict, "REGRESSION: %s", change);
                bad = true;
            } else if (ratio > 1) {
                snprintf(verdict, sizeof verdict, "%s (under the threshold)", change);
                slower++;
            } else {
                snprintf(verdict, sizeof verdict, "%s", change);
                faster++;
            }
        }
        regressed += bad;
        if (quiet && !bad)
            continue;
        char name[160], problem[300];
        snprintf(name, sizeof name, "%s/%s", n->backend, n->variant);
        snprintf(problem, sizeof problem, "%s", n->problem);
        if (n->ranks > 1) /* the rows of one run at several rank counts look alike otherwise */
            snprintf(problem, sizeof problem, "%s, %d ranks%s%s", n->problem, n->ranks,
                     strcmp(n->rank, "all") == 0 ? "" : ", rank ", strcmp(n->rank, "all") == 0 ? "" : n->rank);
        printf("%-10s %-28s %-12s %-18s %10s %10s %7s  %s\n", n->bench, name, n->precision[0] ? n->precision : "-",
               problem, tb, tn, ratio_text, verdict);
    }
    free(stale_new);
    /* BASE's stale rows are marked used: counted neither as missing nor named */
    size_t only_base = 0;
    for (size_t j = 0; j < base->n_rows; j++)
        only_base += !used[j];
    printf("\n%zu rows matched: %zu regressed (threshold %g%%), %zu faster, %zu slower within the threshold, "
           "%zu not compared; %zu only in %s, %zu only in %s\n", matched, regressed, threshold, faster, slower,
           not_compared, only_base, files[0], only_new, files[1]);
    int fail = !matched ? pb__cli_die(PB_EXIT_ERROR, "no rows of %s match rows of %s", files[1], files[0])
               /* A new file that kept no comparable row is no pass of the gate. */
               : matched == not_compared
                   ? pb__cli_die(PB_EXIT_ERROR, "none of the %zu matched rows could be compared (not OK, or no usable time)",
                                 matched)
                   : PB_EXIT_OK;
    if (fail != PB_EXIT_OK) {
        free(used);
        pb__rp_free(&sets[0]);
        pb__rp_free(&sets[1]);
        return fail;
    }
    if (only_base) {
        fprintf(stderr, "parbench: compare: %zu rows of %s are missing from %s:\n", only_base, files[0], files[1]);
        size_t named = 0;
        for (size_t j = 0; j < base->n_rows; j++) {
            const struct pb_rp_row *b = &base->rows[j];
            if (used[j] || ++named > 10)
                continue;
            char ranks[32] = "";
            if (b->ranks > 1)
                snprintf(ranks, sizeof ranks, ", %d ranks", b->ranks);
            fprintf(stderr, "  %s %s/%s %s %s%s\n", b->bench, b->backend, b->variant,
                    b->precision[0] ? b->precision : "-", b->problem, ranks);
        }
        if (named > 10)
            fprintf(stderr, "  and %zu more\n", named - 10);
    }
    free(used);
    pb__rp_free(&sets[0]);
    pb__rp_free(&sets[1]);
    return regressed ? PB_EXIT_FAILED : PB_EXIT_OK;
}

/* parbench scaling FILE...: strong and weak scaling tables from result files
 * of runs at several rank counts (the rows for all ranks: distributed
 * benchmarks, and "every rank at once" aggregates).
 *
 * Strong: the same problem on more ranks; speed-up = T(base) / T(n) and
 * parallel efficiency = T(base) * base / (T(n) * n), base being the fewest
 * ranks measured. Weak (--weak): the problem grows with the ranks (rows are
 * matched ignoring the problem); speed-up = the rate at n over the rate at
 * base (GFLOP/s, else GB/s, else 1 / time) and efficiency = speed-up * base
 * / n: the rate per rank kept. Where each rank's work is held, that is
 * T(base) / T(n); where it is not (gemm-dist with n^2 per GPU held does
 * 2^1.5 times the work on two), time alone would read as a loss. Where such a
 * group has several rows at one rank count -- "every rank at once" files,
 * where each rank runs the same problems -- each problem is a curve. Where the rows
 * carry compute_s and exposed_comm_s (spmv-dist, gemm-dist), the time is
 * split into compute and exposed communication, and the part of the
 * communication the overlap hid is shown when the blocking variant of the
 * same run is in the files. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "report/cli_util.h"
#include "report/report.h"

static void scaling_help(FILE *f)
{
    fprintf(f, "usage: parbench scaling FILE... [--weak] [--format table|csv]\n\n"
               "Strong or weak scaling from result files (.json or .csv) of one benchmark run\n"
               "at several rank counts, e.g.\n"
               "  for n in 1 2 4 8; do mpirun -np $n parbench run spmv-dist --matrix lap3d:320 \\\n"
               "      --out sd.csv --append; done   (the first without --append)\n"
               "  parbench scaling sd.csv\n"
               "Rows for all ranks are used (distributed benchmarks; the aggregate of \"every\n"
               "rank at once\" runs); per group of benchmark, backend, variant, precision and\n"
               "problem (strong) or without the problem (--weak): ranks, median time, speed-up\n"
               "and parallel efficiency against the fewest ranks (weak: speed-up = the rate,\n"
               "GFLOP/s or GB/s, over the fewest ranks' rate; efficiency = that rate per rank\n"
               "kept, right also where each rank's work grows, as gemm-dist's with n^2 per rank\n"
               "held), and the compute / exposed\n"
               "communication split where the rows have it (compute_s, exposed_comm_s). A\n"
               "curve's title names the parameters its rows differ in that the problem does\n"
               "not (spmv-dist's local=...); the same runs in two files are a curve each.\n\n"
               "options:\n"
               "  --weak                  the problem grows with the ranks: match rows without it\n"
               "                          (where one rank count has several problems, as in \"every\n"
               "                          rank at once\" runs, each problem is a curve)\n"
               "  --format table|csv      output (default table)\n"
               "\nexit status: 0, 2 usage error, 3 a file could not be read, or the files hold no run at two or\n"
               "more rank counts.\n");
}

static bool weak_mode; /* qsort's comparison has no argument for it */

/* Rows of one curve: the same benchmark, backend, variant, precision and
 * threads, and (strong scaling) the same parameters -- not the problem's
 * label, which may name the rank grid (gemm-dist's "on 2x2"), nor the device,
 * which the aggregate names with the rank count. */
static void group_key(const struct pb_rp_row *r, bool weak, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s|%s|%s|%s|%d", r->bench, r->backend, r->variant, r->precision,
                                   r->threads);
    for (size_t i = 0; !weak && i < r->n_params && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "|%s=%s", r->params[i].key, r->params[i].text);
}

static void point_key(const struct pb_rp_scaling *p, char *buf, size_t len)
{
    group_key(p->row, weak_mode && !p->by_problem, buf, len);
    size_t used = strlen(buf);
    if (p->by_file && used < len)
        snprintf(buf + used, len - used, "|file=%zu", p->row->file);
}

static int cmp_points(const void *a, const void *b)
{
    const struct pb_rp_scaling *x = a, *y = b;
    char kx[512], ky[512];
    point_key(x, kx, sizeof kx);
    point_key(y, ky, sizeof ky);
    int c = strcmp(kx, ky);
    if (!c)
        c = (x->ranks > y->ranks) - (x->ranks < y->ranks);
    return c ? c : (x->row > y->row) - (x->row < y->row); /* a row measured again: the later one last */
}

static bool same_curve(const struct pb_rp_scaling *a, const struct pb_rp_scaling *b)
{
    char ka[512], kb[512];
    point_key(a, ka, sizeof ka);
    point_key(b, kb, sizeof kb);
    return strcmp(ka, kb) == 0;
}

/* [a, b) of the sorted points: one curve; returns b. */
static size_t curve_end(const struct pb_rp_scaling *pts, size_t n, size_t a)
{
    char key[512], next[512];
    point_key(&pts[a], key, sizeof key);
    size_t b = a + 1;
    for (; b < n; b++) {
        point_key(&pts[b], next, sizeof next);
        if (strcmp(key, next) != 0)
            break;
    }
    return b;
}

static double extra(const struct pb_rp_row *r, const char *name)
{
    const struct pb_rp_kv *kv = pb__rp_find(r, name);
    return kv ? kv->num : NAN;
}

/* The blocking row of the same benchmark, backend, precision, problem and
 * ranks as an overlap row: its exposed communication is the whole of it. */
static const struct pb_rp_row *blocking_twin(const struct pb_rp_scaling *pts, size_t n, const struct pb_rp_row *r)
{
    if (strcmp(r->variant, "overlap") != 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const struct pb_rp_row *q = pts[i].row;
        if (strcmp(q->variant, "blocking") == 0 && q->ranks == r->ranks && strcmp(q->bench, r->bench) == 0 &&
            strcmp(q->backend, r->backend) == 0 && strcmp(q->precision, r->precision) == 0 &&
            strcmp(q->problem, r->problem) == 0)
            return q;
    }
    return NULL;
}

/* Whether two points split by_file (else by problem) would part: their
 * files, or their problems, differ. */
static bool would_part(const struct pb_rp_scaling *x, const struct pb_rp_scaling *y, bool by_file)
{
    if (by_file)
        return x->row->file != y->row->file;
    char kx[512], ky[512];
    group_key(x->row, false, kx, sizeof kx);
    group_key(y->row, false, ky, sizeof ky);
    return strcmp(kx, ky) != 0;
}

/* Groups of the sorted points with a rank count twice are split: a weak
 * group by problem (every rank at once, several problems per rank count),
 * then any group still repeating by file (two files with the same runs). A
 * problem run again into the same file is no repeat: its later rows count. */
static void split_repeats(struct pb_rp_scaling *pts, size_t n, bool by_file)
{
    bool split = false;
    for (size_t a = 0, b; a < n; a = b) {
        b = curve_end(pts, n, a);
        bool repeats = false;
        for (size_t i = a + 1; i < b; i++)
            repeats |= pts[i].ranks == pts[i - 1].ranks && would_part(&pts[i], &pts[i - 1], by_file);
        for (size_t i = a; i < b && repeats; i++) {
            if (by_file)
                pts[i].by_file = true;
            else
                pts[i].by_problem = true;
            split = true;
        }
    }
    if (split)
        qsort(pts, n, sizeof *pts, cmp_points);
}

/* Whether a benchmark's problem is the whole job's (spread over the ranks)
 * rather than each rank's. */
static bool distributed(const char *bench)
{
    const struct pb_bench *b = pb__bench_find(bench);
    return b && b->distributed;
}

/* Weak scaling's speed-up of r over base: the rate both rows carry (the
 * problem differs, so time alone says nothing of the work). */
static double weak_speedup(const struct pb_rp_row *base, const struct pb_rp_row *r)
{
    if (isfinite(base->gflops) && base->gflops > 0 && isfinite(r->gflops) && r->gflops > 0)
        return r->gflops / base->gflops;
    if (isfinite(base->gbps) && base->gbps > 0 && isfinite(r->gbps) && r->gbps > 0)
        return r->gbps / base->gbps;
    return base->median / r->median;
}

pb_status pb__rp_scaling(const struct pb_rp_set *set, bool weak, struct pb_rp_scaling **out, size_t *n_out,
                         size_t *n_curves)
{
    /* The rows for all ranks that ran OK (one-rank runs of "every rank at
     * once" benchmarks have only rank 0). */
    struct pb_rp_scaling *pts = calloc(set->n_rows + 1, sizeof *pts);
    if (!pts)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        const struct pb_rp_row *r = &set->rows[i];
        bool whole = strcmp(r->rank, "all") == 0 || (r->ranks == 1 && strcmp(r->rank, "0") == 0);
        if (whole && pb__rp_ok(r) && isfinite(r->median) && r->median > 0)
            pts[n++] = (struct pb_rp_scaling){.row = r, .ranks = r->ranks};
    }
    weak_mode = weak;
    qsort(pts, n, sizeof *pts, cmp_points);
    if (weak)
        split_repeats(pts, n, false);
    split_repeats(pts, n, true);
    /* What still repeats a rank count is one file's run measured again (its
     * rows appended twice): the later rows count, as in compare and report. */
    size_t unique = 0;
    for (size_t i = 0; i < n; i++) {
        bool again = i + 1 < n && pts[i + 1].ranks == pts[i].ranks && same_curve(&pts[i], &pts[i + 1]);
        if (!again)
            pts[unique++] = pts[i];
    }
    n = unique;
    /* A curve needs two rank counts: groups run at one only (single-rank
     * files, the same run repeated) are left out. */
    size_t kept = 0, curves = 0;
    for (size_t a = 0, b; a < n; a = b) {
        b = curve_end(pts, n, a);
        if (pts[a].ranks == pts[b - 1].ranks)
            continue;
        double t_base = pts[a].row->median;
        int r_base = pts[a].ranks;
        for (size_t i = a; i < b; i++) {
            struct pb_rp_scaling p = pts[i];
            p.curve = curves;
            p.speedup = weak ? weak_speedup(pts[a].row, p.row) : t_base / p.row->median;
            p.efficiency = p.speedup * r_base / p.ranks;
            pts[kept++] = p;
        }
        curves++;
    }
    n = kept;
    *out = pts;
    *n_out = n;
    *n_curves = curves;
    return PB_OK;
}

/* Whether text holds word whole: not inside a longer word or number (a batch
 * of 1 is not named by powerlaw:4M:16), a number also between x's (24 in
 * 24x24x24). */
static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    bool numeric = n > 0 && strspn(word, "0123456789") == n;
#define PB__EDGE(c) (!isalnum((unsigned char)(c)) || (numeric && (c) == 'x'))
    for (const char *at = n ? strstr(text, word) : NULL; at; at = strstr(at + 1, word))
        if ((at == text || PB__EDGE(at[-1])) && PB__EDGE(at[n]))
            return true;
#undef PB__EDGE
    return false;
}

/* Whether the problem's label names value: itself, or a file by its base name
 * (af23560 for .../af23560.mtx.gz). */
static bool mentions(const char *problem, const char *value)
{
    if (has_word(problem, value))
        return true;
    const char *base = strrchr(value, '/') ? strrchr(value, '/') + 1 : value;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
    return name[0] && has_word(problem, name);
}

void pb__rp_varying_params(const struct pb_rp_set *set, const struct pb_rp_row *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_params && used < len; i++) {
        const struct pb_rp_kv *kv = &r->params[i];
        bool varies = false;
        for (size_t j = 0; j < set->n_rows && !varies; j++) {
            const struct pb_rp_row *q = &set->rows[j];
            const struct pb_rp_kv *other = strcmp(q->bench, r->bench) == 0 ? pb__rp_find(q, kv->key) : NULL;
            varies = other && strcmp(other->text, kv->text) != 0;
        }
        if (varies && !mentions(r->problem, kv->text))
            used += (size_t)snprintf(buf + used, len - used, " %s=%s", kv->key, kv->text);
    }
}

static void print_num(FILE *f, bool csv, int width, const char *fmt, double v)
{
    char buf[32] = "-";
    if (isfinite(v))
        snprintf(buf, sizeof buf, fmt, v);
    if (csv)
        fprintf(f, ",%s", isfinite(v) ? buf : "");
    else
        fprintf(f, " %*s", width, buf);
}

int pb__cmd_scaling(int argc, char **argv)
{
    const char *format = "table";
    char **files = malloc((size_t)argc * sizeof *files);
    int n_files = 0, rc = PB_EXIT_OK;
    if (!files)
        return pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
    weak_mode = false;
    for (int i = 1; i < argc && rc == PB_EXIT_OK; i++) {
        const char *v;
        if (pb__cli_is_help(argv[i])) {
            free(files);
            scaling_help(stdout);
            return PB_EXIT_OK;
        }
        if (strcmp(argv[i], "--weak") == 0)
            weak_mode = true;
        else if (pb__cli_value(argc, argv, &i, "format", 0, &v, &rc))
            format = v;
        else if (rc == PB_EXIT_OK && argv[i][0] == '-' && argv[i][1])
            rc = pb__cli_die(PB_EXIT_USAGE, "unknown option '%s' for scaling (see parbench scaling --help)", argv[i]);
        else if (rc == PB_EXIT_OK)
            files[n_files++] = argv[i];
    }
    bool csv = strcmp(format, "csv") == 0;
    if (rc == PB_EXIT_OK && !csv && strcmp(format, "table") != 0)
        rc = pb__cli_die(PB_EXIT_USAGE, "scaling: unknown format '%s' (table, csv)", format);
    if (rc == PB_EXIT_OK && n_files == 0) {
        scaling_help(stderr);
        rc = PB_EXIT_USAGE;
    }
    struct pb_rp_set set = {0};
    if (rc == PB_EXIT_OK)
        rc = pb__rp_load_all(&set, files, n_files, NULL);
    free(files);
    if (rc != PB_EXIT_OK) {
        pb__rp_free(&set);
        return rc;
    }
    struct pb_rp_scaling *pts = NULL;
    size_t n = 0, curves = 0;
    pb_status st = pb__rp_scaling(&set, weak_mode, &pts, &n, &curves);
    if (st != PB_OK) {
        pb__rp_free(&set);
        return pb__cli_fail(st);
    }
    bool per_problem = false;
    for (size_t i = 0; i < n; i++)
        per_problem |= weak_mode && pts[i].by_problem && distributed(pts[i].row->bench);
    if (per_problem) /* a strong series given with a weak one: their rank counts repeat */
        fprintf(stderr, "parbench scaling: --weak: several problems ran at one rank count, so each problem is its "
                        "own curve (a fixed problem: strong scaling); give the files of one weak series alone\n");
    bool every_rank = false; /* rows of a benchmark that ran on every rank at once, each its own problem */
    for (size_t i = 0; i < n && !weak_mode; i++)
        every_rank |= !distributed(pts[i].row->bench);
    if (every_rank)
        fprintf(stderr, "parbench scaling: some rows ran every rank at once, each rank its own problem: the "
                        "efficiencies below treat them as one problem shared; --weak reads them as they ran\n");
    if (csv) /* curve: which curve a row is on, as the table's titles; curve_also: what else sets it apart */
        printf("curve,bench,backend,variant,precision,problem,curve_also,ranks,median_s,speedup,efficiency,compute_s,"
               "exposed_comm_s,hidden_comm_s\n");
    char more[256] = ""; /* what sets the current curve apart, for its title and CSV rows */
    for (size_t i = 0; i < n; i++) {
        const struct pb_rp_row *r = pts[i].row;
        bool by_rows = weak_mode && !pts[i].by_problem; /* the problem changes along the curve */
        /* a distributed benchmark's problem is the whole job's: fixed along a curve, that is strong
         * scaling; every rank at once, each rank's (weak) */
        bool weak_curve = by_rows || (weak_mode && !distributed(r->bench));
        bool first = i == 0 || pts[i].curve != pts[i - 1].curve;
        if (first) {
            pb__rp_varying_params(&set, r, more, sizeof more);
            if (pts[i].by_file && strlen(more) + 8 < sizeof more)
                snprintf(more + strlen(more), sizeof more - strlen(more), " (%s)", set.files[r->file].name);
        }
        if (!csv && first) {
            printf("%s%s %s/%s%s%s%s%s%s (%s scaling)\n%6s %12s %9s %10s %12s %14s %13s\n", i ? "\n" : "",
                   r->bench, r->backend, r->variant, r->precision[0] ? " " : "", r->precision,
                   by_rows ? "" : ", ", by_rows ? "" : r->problem, more, weak_curve ? "weak" : "strong", "ranks",
                   "median s", "speed-up",
                   "efficiency", "compute s", "exposed comm s", "hidden comm s");
        }
        double compute = extra(r, "compute_s"), exposed = extra(r, "exposed_comm_s"), hidden = NAN;
        const struct pb_rp_row *twin = blocking_twin(pts, n, r);
        double blocked = twin ? extra(twin, "exposed_comm_s") : NAN;
        if (!isnan(blocked) && !isnan(exposed)) /* either split left empty: nothing to tell (fmax would say 0) */
            hidden = fmax(0, blocked - exposed);
        if (csv)
            printf("%zu,%s,%s,%s,%s,\"%s\",\"%s\",%d", pts[i].curve + 1, r->bench, r->backend, r->variant, r->precision,
                   r->problem, more[0] == ' ' ? more + 1 : more, r->ranks);
        else
            printf("%6d", r->ranks);
        print_num(stdout, csv, 12, "%.4g", r->median);
        print_num(stdout, csv, 9, weak_mode || csv ? "%.3g" : "%.3gx", pts[i].speedup); /* CSV: plain numbers */
        print_num(stdout, csv, 10, "%.2f", pts[i].efficiency);
        print_num(stdout, csv, 12, "%.4g", compute);
        print_num(stdout, csv, 14, "%.4g", exposed);
        print_num(stdout, csv, 13, "%.4g", hidden);
        putchar('\n');
    }
    free(pts);
    pb__rp_free(&set);
    if (n == 0) /* nothing to show is no success */
        return pb__cli_die(PB_EXIT_ERROR, "%s", "scaling: no run in these files at two or more rank counts (OK rows "
                                                "for all ranks)");
    return PB_EXIT_OK;
}

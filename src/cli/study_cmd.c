/* parbench study ID: runs a source study's experiments through `parbench run`
 * (each writes DIR/NAME.csv), then sets the study's published figures beside
 * ours: a table on standard output, DIR/comparison.csv, and DIR/report.html
 * (parbench report of the results, the comparison at the top). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/bench.h"
#include "cli/study_cmd.h"
#include "comm/comm.h"
#include "report/cli_util.h"
#include "report/report.h"
#include "report/study.h"

#define MAX_EXPS 16
#define MAX_ARGS 96

struct study_run {
    const struct pb_study *st;
    const char *dir, *matrices, *device;
    bool quick, dry_run;
    char *command[MAX_EXPS];  /* "parbench run ..." as run, for the output and the report */
    const char *missing[MAX_EXPS]; /* why an experiment wrote no file (NULL: it did) */
    char missing_buf[MAX_EXPS][512];
    char *path[MAX_EXPS];     /* DIR/NAME.csv */
};

static void study_help(FILE *f)
{
    fprintf(f, "usage: parbench study ID [options]\n\n"
               "Runs one of the five source studies (SEEDS.md) with its parameters through parbench run,\n"
               "writes every result file and one report into a directory, and sets the study's published\n"
               "figures beside ours: their device and number, ours, the ratio, and a sentence where our\n"
               "measurement contradicts their conclusion. The comparison is printed as a table and\n"
               "written to DIR/comparison.csv; DIR/report.html has it at the top. Rows of backends\n"
               "without a device here are SKIP and their figures say \"not measured here\".\n\nstudies:\n");
    for (size_t i = 0; i < pb__study_count(); i++)
        fprintf(f, "  %s  %s\n", pb__study_at(i)->id, pb__study_at(i)->title);
    fprintf(f, "\noptions:\n"
               "  --out DIR              the directory of the results (default study-ID)\n"
               "  --quick                small sizes and few repetitions: a minute or two on a laptop\n"
               "  --matrices DIR         study 002: Table 1's matrices as NAME.mtx (default: $PB_MATRICES_DIR)\n"
               "  --device N|NAME        passed to every run (see parbench run --help)\n"
               "  --dry-run              print the runs' command lines and stop\n"
               "\nexit status: 0 every row OK or skipped, 1 a result FAILED verification, 2 usage error,\n"
               "3 device, memory or I/O error, 130 interrupted.\n");
}

/* ---- command lines -------------------------------------------------------------- */

struct args {
    char *v[MAX_ARGS + 2]; /* v[0] = "parbench", then "run", ...; NULL-terminated */
    int n;
};

static void args_free(struct args *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
}

static bool args_add(struct args *a, const char *s, size_t len)
{
    if (a->n >= MAX_ARGS)
        return false;
    char *copy = strndup(s, len);
    if (!copy)
        return false;
    a->v[a->n++] = copy;
    a->v[a->n] = NULL;
    return true;
}

static bool regular_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The --matrix list with "@NAME" replaced by the matrices directory's
 * NAME.mtx or NAME.mtx.gz; names not found there are left out and listed in
 * left_out. Empty when none is left. */
static char *expand_matrices(const struct study_run *r, const char *list, char *left_out, size_t left_len)
{
    size_t cap = strlen(list) * 2 + (r->matrices ? strlen(r->matrices) * 64 : 0) + 64, used = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    left_out[0] = '\0';
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        char item[256], path[4096];
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        p += len + (p[len] == ',');
        const char *use = item;
        if (item[0] == '@') {
            use = NULL;
            for (int gz = 0; gz < 2 && !use && r->matrices; gz++) {
                snprintf(path, sizeof path, "%s/%s.mtx%s", r->matrices, item + 1, gz ? ".gz" : "");
                if (regular_file(path))
                    use = path;
            }
            if (!use) {
                size_t l = strlen(left_out);
                snprintf(left_out + l, left_len - l, "%s%s", l ? ", " : "", item + 1);
                continue;
            }
        }
        size_t need = strlen(use) + 2;
        if (used + need >= cap) {
            char *bigger = realloc(out, cap = (used + need) * 2);
            if (!bigger) {
                free(out);
                return NULL;
            }
            out = bigger;
        }
        used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? "," : "", use);
    }
    return out;
}

/* Whether this build has backend `name` (variant: a variant `name` or
 * BACKEND/NAME of bench on a backend compiled in). */
static bool in_build(const struct pb_bench *bench, bool variant, const char *name)
{
    if (!variant)
        return pb_backend_find(name) != NULL;
    for (size_t i = 0; bench && i < pb_backend_count(); i++) {
        const struct pb_backend *b = pb_backend_at(i);
        const struct pb_variant *v;
        for (size_t k = 0; (v = pb__bench_variant(bench, b, k)) != NULL; k++) {
            size_t bl = strlen(b->name);
            if (strcmp(name, v->desc.name) == 0 ||
                (strncmp(name, b->name, bl) == 0 && name[bl] == '/' && strcmp(name + bl + 1, v->desc.name) == 0))
                return true;
        }
    }
    return false;
}

/* The items of a --backend or --variant list this build has (into out,
 * comma-separated); the others appended to left_out. */
static void keep_in_build(const struct pb_bench *bench, bool variant, const char *list, char *out, size_t len,
                          char *left_out, size_t left_len)
{
    out[0] = '\0';
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        char item[128];
        snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), p);
        p += n + (p[n] == ',');
        if (in_build(bench, variant, item)) {
            size_t used = strlen(out);
            snprintf(out + used, len - used, "%s%s", used ? "," : "", item);
        } else {
            size_t used = strlen(left_out);
            snprintf(left_out + used, left_len - used, "%s%s%s", used ? ", " : "", variant ? "" : "backend ", item);
        }
    }
}

/* argv of experiment e: its arguments, --out DIR/NAME.csv and --device; its
 * backends and variants are those of this build (a list naming one it lacks
 * would be a usage error). false with r->missing[e] set when it cannot run
 * here (no matrix found, none of its backends or variants built); *rc set on
 * a memory error. */
/* Whether --device's value (len bytes at p) matches a device here. */
static bool device_named(const char *p, size_t len)
{
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
    return pb__cli_any_device_matches(name);
}

static bool build_args(struct study_run *r, size_t e, struct args *a, int *rc)
{
    const struct pb_study_exp *x = &r->st->exps[e];
    const char *spec = r->quick ? x->quick : x->full;
    a->n = 0;
    bool ok = args_add(a, "parbench", 8) && args_add(a, "run", 3);
    bool matrix_next = false, backend_next = false, variant_next = false, device_next = false, named_next = false;
    const struct pb_bench *bench = NULL;
    for (const char *p = spec; ok && *p;) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (!len)
            break;
        /* --device given to the study replaces the experiment's own (run refuses an option twice) */
        bool device = r->device && len == 8 && strncmp(p, "--device", len) == 0;
        if (device || device_next) {
            device_next = device;
            p += len;
            continue;
        }
        if (!bench) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
            bench = pb__bench_find(name);
        }
        if (backend_next || variant_next) {
            char item[1024], kept[1024], left[1024] = "";
            snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
            keep_in_build(bench, variant_next, item, kept, sizeof kept, left, sizeof left);
            if (left[0])
                printf("study %s: %s: not in this build, left out: %s\n", r->st->id, x->name, left);
            if (!kept[0]) {
                snprintf(r->missing_buf[e], sizeof r->missing_buf[e], "this build has none of its %s (%.200s)",
                         backend_next ? "backends" : "variants", item);
                r->missing[e] = r->missing_buf[e];
                args_free(a);
                return false;
            }
            ok = args_add(a, kept, strlen(kept));
        } else if (matrix_next) {
            char item[8192], left[2048];
            snprintf(item, sizeof item, "%.*s", (int)len, p);
            char *list = expand_matrices(r, item, left, sizeof left);
            if (!list) {
                ok = false;
                break;
            }
            if (left[0]) {
                printf("study %s: %s: matrices not found in %s, left out: %s\n", r->st->id, x->name,
                       r->matrices ? r->matrices : "(no --matrices DIR)", left);
            }
            if (!list[0]) {
                snprintf(r->missing_buf[e], sizeof r->missing_buf[e], "none of its matrices found (%s)",
                         r->matrices ? r->matrices : "give --matrices DIR");
                r->missing[e] = r->missing_buf[e];
                free(list);
                args_free(a);
                return false;
            }
            ok = args_add(a, list, strlen(list));
            free(list);
        } else if (named_next && !device_named(p, len)) {
            /* the study's GPU, on a machine without one: its rows are not measured here */
            snprintf(r->missing_buf[e], sizeof r->missing_buf[e], "no device here matches '%.*s', the device it names",
                     (int)(len < 64 ? len : 64), p);
            r->missing[e] = r->missing_buf[e];
            args_free(a);
            return false;
        } else {
            ok = args_add(a, p, len);
        }
        named_next = len == 8 && strncmp(p, "--device", len) == 0;
        matrix_next = len == 8 && strncmp(p, "--matrix", len) == 0;
        backend_next = len == 9 && strncmp(p, "--backend", len) == 0;
        variant_next = len == 9 && strncmp(p, "--variant", len) == 0;
        p += len;
    }
    ok = ok && args_add(a, "--out", 5) && args_add(a, r->path[e], strlen(r->path[e]));
    if (ok && r->device)
        ok = args_add(a, "--device", 8) && args_add(a, r->device, strlen(r->device));
    if (!ok) {
        args_free(a);
        *rc = pb__cli_die(PB_EXIT_ERROR, "study %s: %s: out of memory or too many arguments", r->st->id, x->name);
        return false;
    }
    size_t len = 0;
    for (int i = 0; i < a->n; i++)
        len += strlen(a->v[i]) + 3;
    free(r->command[e]);
    r->command[e] = malloc(len + 1);
    if (!r->command[e]) {
        args_free(a);
        *rc = pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
        return false;
    }
    size_t used = 0;
    for (int i = 0; i < a->n; i++) {
        bool quote = strchr(a->v[i], ' ') != NULL;
        used += (size_t)snprintf(r->command[e] + used, len + 1 - used, "%s%s%s%s", i ? " " : "", quote ? "'" : "",
                                 a->v[i], quote ? "'" : "");
    }
    return true;
}

/* ---- the study ------------------------------------------------------------------ */

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0)
        return PB_EXIT_OK;
    struct stat sb;
    if (errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
        return PB_EXIT_OK;
    return pb__cli_die(PB_EXIT_ERROR, "cannot make the directory %s: %s", dir,
                       errno == EEXIST ? "a file of that name exists" : strerror(errno));
}

static int write_file(const char *path, const struct pb_sbuf *b)
{
    if (b->failed)
        return pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
    FILE *f = fopen(path, "w");
    bool ok = f && fwrite(b->s, 1, b->len, f) == b->len;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok)
        return pb__cli_die(PB_EXIT_ERROR, "cannot write %s: %s", path, strerror(errno));
    return PB_EXIT_OK;
}

/* A worse exit code wins: 1 failed < 3 error < 2 usage (the study stops) < 130. */
static int worse(int a, int b)
{
    static const int order[] = {0, 1, 3, 2, 130};
    int ra = 0, rb = 0;
    for (int i = 0; i < 5; i++) {
        ra = order[i] == a ? i : ra;
        rb = order[i] == b ? i : rb;
    }
    return rb > ra ? b : a;
}

/* Loads the files the runs wrote, compares, prints and writes the
 * comparison and the report. */
static int compare_and_report(struct study_run *r)
{
    const struct pb_study *st = r->st;
    struct pb_rp_set set;
    memset(&set, 0, sizeof set);
    const char *file_exp[MAX_EXPS];
    char *inputs[MAX_EXPS];
    int n_inputs = 0, rc = PB_EXIT_OK;
    for (size_t e = 0; e < st->n_exps; e++) {
        if (r->missing[e])
            continue;
        if (!r->path[e]) {
            r->missing[e] = "not run: the study stopped before it";
            continue;
        }
        if (!regular_file(r->path[e])) {
            r->missing[e] = "it wrote no result file";
            continue;
        }
        size_t before = set.n_files;
        pb__clear_error();
        pb_status ls = pb__rp_load(&set, r->path[e]);
        if (ls != PB_OK) {
            snprintf(r->missing_buf[e], sizeof r->missing_buf[e], "its results cannot be read: %s",
                     pb_last_error()[0] ? pb_last_error() : pb_status_message(ls));
            r->missing[e] = r->missing_buf[e];
            continue;
        }
        for (size_t f = before; f < set.n_files; f++)
            file_exp[f] = st->exps[e].name;
        inputs[n_inputs++] = r->path[e];
    }
    struct pb_study_cmp *cmp = calloc(st->n_figs ? st->n_figs : 1, sizeof *cmp);
    if (!cmp) {
        pb__rp_free(&set);
        return pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
    }
    pb__study_compare(st, &set, file_exp, r->missing, r->quick, cmp);
    pb__rp_free(&set);

    struct pb_sbuf text = {0}, csv = {0}, html = {0};
    pb__study_text(&text, st, cmp, r->quick);
    pb__study_csv(&csv, st, cmp);
    pb__study_html(&html, st, cmp, r->quick, (const char *const *)r->command, r->missing);
    if (text.failed || html.failed) {
        rc = pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
    } else {
        fputs(text.s, stdout);
        fflush(stdout);
    }
    char path[4096], title[256];
    snprintf(path, sizeof path, "%s/comparison.csv", r->dir);
    if (rc == PB_EXIT_OK)
        rc = write_file(path, &csv);
    snprintf(path, sizeof path, "%s/report.html", r->dir);
    snprintf(title, sizeof title, "parbench study %s: %s%s", st->id, st->title, r->quick ? " (quick run)" : "");
    if (rc == PB_EXIT_OK)
        rc = pb__report_write(inputs, n_inputs, title, html.s, path);
    if (rc == PB_EXIT_OK)
        printf("\nwritten: %s/comparison.csv, %s/report.html and the result files beside them\n", r->dir, r->dir);
    pb__sb_free(&text);
    pb__sb_free(&csv);
    pb__sb_free(&html);
    free(cmp);
    return rc;
}

static int run_study(struct study_run *r)
{
    const struct pb_study *st = r->st;
    int rc = PB_EXIT_OK;
    if (!r->dry_run) {
        printf("study %s: %s\n%s\n", st->id, st->title, st->summary);
        if (r->quick)
            printf("quick run: small sizes and few repetitions; figures are matched at these sizes where the "
                   "notes say so\n");
        else
            for (size_t e = 0; e < st->n_exps; e++)
                if (st->exps[e].scaled)
                    printf("scaled (%s): %s\n", st->exps[e].name, st->exps[e].scaled);
        fflush(stdout);
        if ((rc = make_dir(r->dir)) != PB_EXIT_OK)
            return rc;
    }
    for (size_t e = 0; e < st->n_exps && rc != PB_EXIT_USAGE && rc != 130; e++) {
        size_t len = strlen(r->dir) + strlen(st->exps[e].name) + 6;
        if (!(r->path[e] = malloc(len)))
            return pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
        snprintf(r->path[e], len, "%s/%s.csv", r->dir, st->exps[e].name);
        struct args a = {.n = 0};
        int brc = PB_EXIT_OK;
        if (!build_args(r, e, &a, &brc)) {
            if (brc != PB_EXIT_OK)
                return brc;
            printf("%s: not run: %s\n", st->exps[e].name, r->missing[e]);
            const char *spec = r->quick ? st->exps[e].quick : st->exps[e].full;
            size_t clen = strlen(spec) + 16;
            if ((r->command[e] = malloc(clen)) != NULL) /* for the report; else it shows none */
                snprintf(r->command[e], clen, "parbench run %s", spec);
            continue;
        }
        printf("%s%s\n", r->dry_run ? "" : "\n== ", r->command[e]);
        fflush(stdout);
        if (!r->dry_run) {
            int one = pb__cli_run(a.n - 1, a.v + 1);
            fflush(stdout);
            rc = worse(rc, one);
            if (one == PB_EXIT_USAGE)
                fprintf(stderr, "parbench: study %s: the run of %s refused its arguments\n", st->id,
                        st->exps[e].name);
        }
        args_free(&a);
    }
    if (r->dry_run)
        return rc;
    int crc = compare_and_report(r);
    return worse(rc, crc);
}

int pb__cmd_study(int argc, char **argv)
{
    struct study_run r;
    memset(&r, 0, sizeof r);
    const char *id = NULL;
    int rc = PB_EXIT_OK;
    for (int i = 1; i < argc && rc == PB_EXIT_OK; i++) {
        const char *v;
        if (pb__cli_is_help(argv[i])) {
            study_help(stdout);
            return PB_EXIT_OK;
        }
        if (strcmp(argv[i], "--quick") == 0)
            r.quick = true;
        else if (strcmp(argv[i], "--dry-run") == 0)
            r.dry_run = true;
        else if (pb__cli_value(argc, argv, &i, "out", 'o', &v, &rc))
            r.dir = v;
        else if (pb__cli_value(argc, argv, &i, "matrices", 0, &v, &rc))
            r.matrices = v;
        else if (pb__cli_value(argc, argv, &i, "device", 0, &v, &rc))
            r.device = v;
        else if (rc == PB_EXIT_OK && argv[i][0] == '-')
            rc = pb__cli_die(PB_EXIT_USAGE, "unknown option '%s' for study (see parbench study --help)", argv[i]);
        else if (rc == PB_EXIT_OK && id)
            rc = pb__cli_die(PB_EXIT_USAGE, "study takes one ID (got '%s' and '%s')", id, argv[i]);
        else if (rc == PB_EXIT_OK)
            id = argv[i];
    }
    if (rc != PB_EXIT_OK)
        return rc;
    if (!id) {
        study_help(stderr);
        return PB_EXIT_USAGE;
    }
    if (!(r.st = pb__study_find(id))) {
        fprintf(stderr, "parbench: unknown study '%s' (", id);
        for (size_t i = 0; i < pb__study_count(); i++)
            fprintf(stderr, "%s%s", i ? ", " : "", pb__study_at(i)->id);
        fprintf(stderr, ")\n");
        return PB_EXIT_USAGE;
    }
    if (r.st->n_exps > MAX_EXPS)
        return pb__cli_die(PB_EXIT_ERROR, "study %s has more than %d experiments", id, MAX_EXPS);
    if (r.dir && !r.dir[0])
        return pb__cli_die(PB_EXIT_USAGE, "%s", "--out needs a directory");
    /* A directory named on the command line that is not there is a typo to
     * say before the other experiments run for minutes without it. */
    struct stat sb;
    if (r.matrices && stat(r.matrices, &sb) != 0)
        return pb__cli_die(PB_EXIT_ERROR, "--matrices %s: %s", r.matrices, strerror(errno));
    if (r.matrices && !S_ISDIR(sb.st_mode))
        return pb__cli_die(PB_EXIT_USAGE, "--matrices %s: not a directory (it names the directory of Table 1's "
                           "NAME.mtx files)", r.matrices);
    if (!r.matrices) {
        const char *env = getenv("PB_MATRICES_DIR");
        r.matrices = env && env[0] ? env : NULL;
    }
    char default_dir[32];
    if (!r.dir) {
        snprintf(default_dir, sizeof default_dir, "study-%s", id);
        r.dir = default_dir;
    }
    /* The runs share this process: one rank only. */
    pb__clear_error();
    pb_status st = pb__comm_init();
    if (st == PB_OK && pb__comm_size(pb__comm_world()) > 1)
        st = pb__fail(PB_ERR_INVALID, "study runs in one process: start it without an MPI launcher");
    if (st == PB_OK)
        rc = run_study(&r);
    else
        rc = pb__cli_fail(st);
    pb__comm_finalize();
    for (size_t e = 0; e < MAX_EXPS; e++) {
        free(r.command[e]);
        free(r.path[e]);
    }
    return rc;
}

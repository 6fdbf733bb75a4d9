/* Result files read back (see results.h). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/bench.h"
#include "core/core.h"
#include "core/precision.h"
#include "report/results.h"

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

static double parse_num(const char *s)
{
    if (!s || !*s)
        return NAN;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    return *end || errno || !isfinite(x) ? NAN : x;
}

/* Figures no run writes (an edited or damaged file): absent, not shown as
 * measured. Times are positive, rates and energies not negative. */
static void drop_impossible(struct pb_rp_row *r)
{
    double *times[] = {&r->min, &r->max, &r->median, &r->mean};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if (!(*times[i] > 0))
            *times[i] = NAN;
    double *rates[] = {&r->stddev,  &r->cv,       &r->gflops,       &r->gbps,       &r->speedup,
                       &r->fraction, &r->energy_j, &r->power_w,      &r->gflops_per_w, &r->gbps_per_w,
                       &r->sm_mhz,   &r->mem_mhz,  &r->reps};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        if (*rates[i] < 0)
            *rates[i] = NAN;
    if (r->ranks < 1)
        r->ranks = 1;
}

/* A count from a file: absent (NAN), fractional junk or out of int's range
 * is `otherwise`, never undefined behaviour. */
static int to_int(double x, int otherwise)
{
    return x >= INT_MIN && x <= INT_MAX ? (int)x : otherwise;
}

static void free_kvs(struct pb_rp_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].text);
    }
    free(kv);
}

static void free_row(struct pb_rp_row *r)
{
    char **strs[] = {&r->bench, &r->backend, &r->variant, &r->device, &r->precision, &r->problem,
                     &r->status, &r->reason, &r->timer, &r->check, &r->rank, &r->throttle, &r->energy_source};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        free(*strs[i]);
    free_kvs(r->params, r->n_params);
    free_kvs(r->extras, r->n_extras);
    free(r->samples);
}

static void free_comparison(struct pb_rp_comparison *c)
{
    for (size_t i = 0; i < c->n_figs; i++) {
        struct pb_rp_figure *f = &c->figs[i];
        char **strs[] = {&f->figure, &f->source, &f->their_device, &f->unit, &f->our_backend, &f->our_device,
                         &f->note};
        for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
            free(*strs[k]);
    }
    free(c->figs);
    free(c->path), free(c->name), free(c->study), free(c->copies);
}

void pb__rp_free(struct pb_rp_set *set)
{
    for (size_t i = 0; i < set->n_rows; i++)
        free_row(&set->rows[i]);
    for (size_t i = 0; i < set->n_files; i++) {
        struct pb_rp_file *f = &set->files[i];
        char **strs[] = {&f->path, &f->name, &f->study, &f->bench, &f->date, &f->commit, &f->host, &f->cpu,
                         &f->command};
        for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
            free(*strs[k]);
    }
    for (size_t i = 0; i < set->n_devices; i++) {
        struct pb_rp_device *d = &set->devices[i];
        free(d->backend), free(d->name), free(d->kind);
        free_kvs(d->props, d->n_props);
    }
    for (size_t i = 0; i < set->n_comparisons; i++)
        free_comparison(&set->comparisons[i]);
    free(set->comparisons);
    free(set->devices);
    free(set->rows);
    free(set->files);
    pb__ceilings_free(&set->ceilings);
    memset(set, 0, sizeof *set);
}

const struct pb_rp_kv *pb__rp_find(const struct pb_rp_row *r, const char *key)
{
    for (size_t i = 0; i < r->n_params; i++)
        if (strcmp(r->params[i].key, key) == 0)
            return &r->params[i];
    for (size_t i = 0; i < r->n_extras; i++)
        if (strcmp(r->extras[i].key, key) == 0)
            return &r->extras[i];
    return NULL;
}

bool pb__rp_ok(const struct pb_rp_row *r) { return strcmp(r->status, "OK") == 0; }

struct pb_roof pb__rp_roof(const struct pb_rp_row *r)
{
    /* A typeless row's "" or a precision this build does not know: float's roof. */
    enum pb_precision prec = PB_FLOAT;
    pb__precision_parse(r->precision, &prec);
    return pb__bench_roof(pb__bench_find(r->bench), r->variant, r->backend, r->device, prec);
}

double pb__rp_fraction(const struct pb_rp_set *set, const struct pb_rp_row *r)
{
    struct pb_roof roof = pb__rp_roof(r);
    if (!pb__rp_ok(r) || pb__roof_unmeasured(roof.flops) || pb__roof_unmeasured(roof.bytes))
        return NAN;
    bool same_rule = (roof.flops == PB_ROOF_FMA || roof.bytes == PB_ROOF_MEMORY) &&
                     (roof.flops == PB_ROOF_FMA || roof.flops == PB_ROOF_NONE) &&
                     (roof.bytes == PB_ROOF_MEMORY || roof.bytes == PB_ROOF_NONE);
    if (same_rule && isfinite(r->fraction))
        return r->fraction;
    return pb__ceiling_fraction(pb__ceilings_find(&set->ceilings, r->backend, r->device), roof,
                                strcmp(r->precision, "double") == 0, r->gflops, r->gbps);
}

static pb_status add_kv(struct pb_rp_kv **kv, size_t *n, const char *key, const char *text, double num)
{
    struct pb_rp_kv *bigger = realloc(*kv, (*n + 1) * sizeof *bigger);
    if (!bigger)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    *kv = bigger;
    bigger[*n] = (struct pb_rp_kv){strdup(key), strdup(text), num};
    if (!bigger[*n].key || !bigger[*n].text)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    ++*n;
    return PB_OK;
}

static struct pb_rp_row *new_row(struct pb_rp_set *set)
{
    if (set->n_rows == set->cap_rows) {
        size_t cap = set->cap_rows ? 2 * set->cap_rows : 64;
        struct pb_rp_row *bigger = realloc(set->rows, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        set->rows = bigger;
        set->cap_rows = cap;
    }
    struct pb_rp_row *r = &set->rows[set->n_rows++];
    memset(r, 0, sizeof *r);
    r->file = set->n_files - 1;
    double *nums[] = {&r->reps, &r->min, &r->max, &r->median, &r->mean, &r->stddev, &r->cv,
                      &r->gflops, &r->gbps, &r->speedup, &r->err_max, &r->fraction, &r->energy_j,
                      &r->power_w, &r->gflops_per_w, &r->gbps_per_w, &r->sm_mhz, &r->mem_mhz};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        *nums[i] = NAN;
    return r;
}

/* Strings never NULL once a row is complete. */
static bool fill_strings(struct pb_rp_row *r)
{
    char **strs[] = {&r->bench, &r->backend, &r->variant, &r->device, &r->precision, &r->problem,
                     &r->status, &r->reason, &r->timer, &r->check, &r->rank, &r->throttle, &r->energy_source};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (!*strs[i] && !(*strs[i] = strdup("")))
            return false;
    return true;
}

/* The NNN of the nearest folder of path named study-NNN, or "". */
static void folder_study(const char *path, char out[4])
{
    out[0] = '\0';
    for (const char *end = strrchr(path, '/'); end;) {
        const char *start = end;
        while (start > path && start[-1] != '/')
            start--;
        if (end - start == 9 && strncmp(start, "study-", 6) == 0 && isdigit((unsigned char)start[6]) &&
            isdigit((unsigned char)start[7]) && isdigit((unsigned char)start[8])) {
            memcpy(out, start + 6, 3);
            out[3] = '\0';
            return;
        }
        end = start > path ? start - 1 : NULL;
    }
}

/* shown: the name to show (NULL: path without directories). NULL when out of
 * memory; the set then holds the file for pb__rp_free. */
static struct pb_rp_file *new_file(struct pb_rp_set *set, const char *path, const char *shown)
{
    struct pb_rp_file *bigger = realloc(set->files, (set->n_files + 1) * sizeof *bigger);
    if (!bigger)
        return NULL;
    set->files = bigger;
    struct pb_rp_file *f = &set->files[set->n_files++];
    memset(f, 0, sizeof *f);
    const char *slash = strrchr(path, '/');
    char study[4];
    folder_study(path, study);
    f->path = strdup(path);
    f->name = strdup(shown ? shown : slash ? slash + 1 : path);
    f->study = strdup(study);
    f->first_row = set->n_rows;
    return f->path && f->name && f->study ? f : NULL;
}

/* ---- JSON ------------------------------------------------------------------ */

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

/* Top-level keys of a result the reader interprets itself. */
static bool json_known(const char *key)
{
    static const char *const known[] = {"backend", "variant", "anchor", "device", "precision", "threads",
                                        "ranks", "rank",
                                        "params", "problem", "status", "reason", "time_s", "timer",
                                        "host_time_s", "gflops", "gbps", "speedup", "verification",
                                        "ceiling_fraction", "energy"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(key, known[i]) == 0)
            return true;
    return false;
}

static pb_status json_row(struct pb_rp_set *set, const char *bench, const cJSON *o)
{
    struct pb_rp_row *r = new_row(set);
    if (!r)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    r->bench = dup_or_empty(bench);
    r->backend = dup_or_empty(jstr(o, "backend"));
    r->variant = dup_or_empty(jstr(o, "variant"));
    r->device = dup_or_empty(jstr(o, "device"));
    r->precision = dup_or_empty(jstr(o, "precision"));
    r->problem = dup_or_empty(jstr(o, "problem"));
    r->status = dup_or_empty(jstr(o, "status"));
    r->reason = dup_or_empty(jstr(o, "reason"));
    r->timer = dup_or_empty(jstr(o, "timer"));
    double th = jnum(o, "threads"), nr = jnum(o, "ranks");
    r->threads = to_int(th, 0);
    r->ranks = to_int(nr, 1);
    const cJSON *rank = cJSON_GetObjectItemCaseSensitive(o, "rank");
    char rank_text[32] = "0";
    if (cJSON_IsString(rank))
        snprintf(rank_text, sizeof rank_text, "%.31s", rank->valuestring);
    else if (cJSON_IsNumber(rank))
        snprintf(rank_text, sizeof rank_text, "%d", to_int(rank->valuedouble, 0));
    r->rank = strdup(rank_text);
    r->anchor = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "anchor"));
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "time_s");
    r->reps = jnum(t, "reps");
    r->min = jnum(t, "min");
    r->max = jnum(t, "max");
    r->median = jnum(t, "median");
    r->mean = jnum(t, "mean");
    r->stddev = jnum(t, "stddev");
    r->cv = jnum(t, "cv");
    r->gflops = jnum(o, "gflops");
    r->gbps = jnum(o, "gbps");
    r->speedup = jnum(o, "speedup");
    r->fraction = jnum(o, "ceiling_fraction");
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(o, "energy");
    r->energy_j = jnum(en, "energy_j");
    r->power_w = jnum(en, "power_w");
    r->gflops_per_w = jnum(en, "gflops_per_w");
    r->gbps_per_w = jnum(en, "gbps_per_w");
    r->sm_mhz = jnum(en, "sm_mhz");
    r->mem_mhz = jnum(en, "mem_mhz");
    r->throttle = dup_or_empty(jstr(en, "throttle"));
    r->energy_source = dup_or_empty(jstr(en, "source"));
    drop_impossible(r);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "verification");
    r->err_max = jnum(v, "err_max");
    r->check = dup_or_empty(jstr(v, "mode"));
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(t, "samples"), *it;
    int ns = cJSON_GetArraySize(samples);
    if (ns > 0 && (r->samples = malloc((size_t)ns * sizeof *r->samples))) {
        cJSON_ArrayForEach(it, samples) if (cJSON_IsNumber(it)) r->samples[r->n_samples++] = it->valuedouble;
    }
    pb_status st = PB_OK;
    char text[64];
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(o, "params");
    if (!cJSON_IsObject(params))
        params = NULL; /* an array's items have no names */
    cJSON_ArrayForEach(it, params)
    {
        if (cJSON_IsNumber(it)) {
            snprintf(text, sizeof text, "%.17g", it->valuedouble);
            st = add_kv(&r->params, &r->n_params, it->string, text, it->valuedouble);
        } else if (cJSON_IsString(it)) {
            st = add_kv(&r->params, &r->n_params, it->string, it->valuestring, parse_num(it->valuestring));
        }
        if (st != PB_OK)
            return st;
    }
    cJSON_ArrayForEach(it, o)
    {
        if (json_known(it->string))
            continue;
        if (cJSON_IsNumber(it)) {
            snprintf(text, sizeof text, "%.17g", it->valuedouble);
            st = add_kv(&r->extras, &r->n_extras, it->string, text, it->valuedouble);
        } else if (cJSON_IsString(it)) {
            st = add_kv(&r->extras, &r->n_extras, it->string, it->valuestring, parse_num(it->valuestring));
        } else if (cJSON_IsNull(it)) {
            st = add_kv(&r->extras, &r->n_extras, it->string, "", NAN);
        }
        if (st != PB_OK)
            return st;
    }
    return fill_strings(r) ? PB_OK : pb__fail(PB_ERR_NOMEM, "out of memory");
}

/* parbench devices --format json: an array of {backend, name, kind, properties}. */
static bool is_devices(const cJSON *doc)
{
    const cJSON *first = cJSON_IsArray(doc) ? cJSON_GetArrayItem(doc, 0) : NULL;
    return first && jstr(first, "backend") && jstr(first, "name") &&
           cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(first, "properties"));
}

static pb_status load_devices(struct pb_rp_set *set, const cJSON *doc)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, doc)
    {
        if (!jstr(o, "backend") || !jstr(o, "name"))
            continue;
        struct pb_rp_device *bigger = realloc(set->devices, (set->n_devices + 1) * sizeof *bigger);
        if (!bigger)
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        set->devices = bigger;
        struct pb_rp_device *d = &set->devices[set->n_devices++];
        memset(d, 0, sizeof *d);
        d->backend = strdup(jstr(o, "backend"));
        d->name = strdup(jstr(o, "name"));
        d->kind = dup_or_empty(jstr(o, "kind"));
        if (!d->backend || !d->name || !d->kind)
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(o, "properties"))
        {
            if (cJSON_IsString(p) && add_kv(&d->props, &d->n_props, p->string, p->valuestring, NAN) != PB_OK)
                return pb__fail(PB_ERR_NOMEM, "out of memory");
        }
    }
    return PB_OK;
}

static pb_status load_json(struct pb_rp_set *set, const char *path, const char *shown, const char *text, bool quiet)
{
    cJSON *doc = cJSON_Parse(text);
    if (is_devices(doc)) {
        pb_status st = load_devices(set, doc);
        cJSON_Delete(doc);
        return st;
    }
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results");
    if (doc && cJSON_GetObjectItemCaseSensitive(doc, "parbench_ceilings")) {
        cJSON_Delete(doc);
        struct pb_ceilings c;
        pb_status st = pb__ceilings_parse(text, path, &c);
        for (size_t i = 0; st == PB_OK && i < c.n; i++)
            st = pb__ceilings_put(&set->ceilings, &c.dev[i]);
        pb__ceilings_free(&c);
        return st;
    }
    if (!doc && !quiet) { /* a results file cut short (a run killed while writing) reads so */
        const char *at = cJSON_GetErrorPtr();
        return pb__fail(PB_ERR_PARSE, "%s is not valid JSON (near byte %ld of %zu; a file cut short reads so)",
                        path, at && at >= text ? (long)(at - text) : -1L, strlen(text));
    }
    /* In a folder, a results file cut short is skipped, not silently: its rows are missing. */
    if (!doc && strstr(text, "\"parbench_version\""))
        fprintf(stderr, "parbench: skipping %s: not valid JSON (a results file cut short?)\n", path);
    if (!doc || !cJSON_IsArray(results)) {
        cJSON_Delete(doc);
        return quiet ? PB_ERR_UNSUPPORTED
                     : pb__fail(PB_ERR_PARSE, "%s is not a parbench results file (JSON with \"results\")", path);
    }
    struct pb_rp_file *f = new_file(set, path, shown);
    if (!f) {
        cJSON_Delete(doc);
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(doc, "context");
    const char *bench = jstr(cJSON_GetObjectItemCaseSensitive(doc, "bench"), "name");
    f->bench = dup_or_empty(bench);
    f->date = dup_or_empty(jstr(ctx, "date"));
    f->commit = dup_or_empty(jstr(ctx, "git_commit"));
    f->host = dup_or_empty(jstr(ctx, "host"));
    f->cpu = dup_or_empty(jstr(ctx, "cpu"));
    f->command = dup_or_empty(jstr(ctx, "command"));
    pb_status st = PB_OK;
    const cJSON *o;
    cJSON_ArrayForEach(o, results)
    {
        if (cJSON_IsObject(o) && (st = json_row(set, bench, o)) != PB_OK)
            break;
    }
    f->n_rows = set->n_rows - f->first_row;
    cJSON_Delete(doc);
    return st;
}

/* ---- CSV (RFC 4180) ----------------------------------------------------------- */

/* Splits one record starting at *p into fields (allocated); advances *p past
 * the record. Returns the number of fields, -1 on memory exhaustion. */
static int csv_record(const char **p, char ***fields)
{
    size_t n = 0, cap = 0;
    char **out = NULL;
    const char *s = *p;
    for (;;) {
        size_t len = 0, fcap = 64;
        char *fld = malloc(fcap);
        if (!fld)
            goto nomem;
        bool quoted = *s == '"';
        if (quoted)
            s++;
        for (;;) {
            char c = *s;
            if (!c)
                break;
            if (quoted && c == '"') {
                if (s[1] == '"') {
                    s += 2;
                    c = '"';
                } else {
                    s++;
                    quoted = false;
                    continue;
                }
            } else if (!quoted && (c == ',' || c == '\n' || c == '\r')) {
                break;
            } else {
                s++;
            }
            if (len + 2 > fcap) {
                char *bigger = realloc(fld, fcap *= 2);
                if (!bigger) {
                    free(fld);
                    goto nomem;
                }
                fld = bigger;
            }
            fld[len++] = c;
        }
        fld[len] = '\0';
        if (n == cap) {
            char **bigger = realloc(out, (cap = cap ? 2 * cap : 32) * sizeof *bigger);
            if (!bigger) {
                free(fld);
                goto nomem;
            }
            out = bigger;
        }
        out[n++] = fld;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\r')
            s++;
        if (*s == '\n')
            s++;
        break;
    }
    *p = s;
    *fields = out;
    return (int)n;
nomem:
    for (size_t i = 0; i < n; i++)
        free(out[i]);
    free(out);
    return -1;
}

static void free_fields(char **f, int n)
{
    for (int i = 0; i < n; i++)
        free(f[i]);
    free(f);
}

static int col_index(char **head, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(head[i], name) == 0)
            return i;
    return -1;
}

/* The next record of a CSV body into *v (nh fields; NULL at the end of the
 * text), blank lines skipped; *line counts the lines read, for messages.
 * skips (a file found in a folder; NULL: strict): a record of the wrong
 * length is left out and counted there, as the file's other rows are worth
 * having. */
struct csv_skips {
    int count, first_line, first_fields;
};

/* Whether the n fields of a record are the header's: files concatenated
 * (cat a.csv b.csv) repeat it. */
static bool is_header(char **v, int n, char **head, int nh)
{
    if (n != nh)
        return false;
    for (int i = 0; i < n; i++)
        if (strcmp(v[i], head[i]) != 0)
            return false;
    return true;
}

static pb_status csv_next(const char **p, const char *path, int *line, char **head, int nh, struct csv_skips *skips,
                          char ***v)
{
    *v = NULL;
    while (**p) {
        ++*line;
        int n = csv_record(p, v);
        if (n < 0) {
            *v = NULL;
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        }
        bool blank = n == 1 && !(*v)[0][0];
        if (n == nh && !blank && !is_header(*v, n, head, nh))
            return PB_OK;
        free_fields(*v, n);
        *v = NULL;
        if (n == nh && !blank) /* the header again */
            continue;
        /* A last record short of fields and of its line end is a run killed
         * while writing: the rows before it stand, and it is left out, not
         * silently. (At least one character was read, so (*p)[-1] is in the text.) */
        if (!blank && !**p && (*p)[-1] != '\n' && n < nh) {
            fprintf(stderr, "parbench: %s:%d: cut short (%d of %d fields): that row is left out\n", path, *line, n,
                    nh);
            return PB_OK;
        }
        if (!blank && skips && !skips->count++)
            skips->first_line = *line, skips->first_fields = n;
        else if (!blank && !skips)
            return pb__fail(PB_ERR_PARSE, "%s:%d: %d fields, the header has %d", path, *line, n, nh);
    }
    return PB_OK;
}

static pb_status load_csv(struct pb_rp_set *set, const char *path, const char *shown, const char *text, bool quiet)
{
    const char *p = text;
    char **head;
    int nh = csv_record(&p, &head);
    if (nh < 0)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    /* The columns every parbench CSV has; parameters lie between threads and
     * problem; what follows check is the benchmark's extras. */
    int c_bench = col_index(head, nh, "bench"), c_threads = col_index(head, nh, "threads"),
        c_problem = col_index(head, nh, "problem"), c_status = col_index(head, nh, "status"),
        c_check = col_index(head, nh, "check");
    if (c_bench < 0 || c_threads < 0 || c_problem < c_threads || c_status < 0 || c_check < 0) {
        free_fields(head, nh);
        return quiet ? PB_ERR_UNSUPPORTED
                     : pb__fail(PB_ERR_PARSE, "%s is not a parbench results file (CSV needs bench, "
                                              "threads, problem, status and check columns)", path);
    }
    struct pb_rp_file *f = new_file(set, path, shown);
    if (!f) {
        free_fields(head, nh);
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    static const char *const fixed[] = {"date", "host", "version", "commit", "bench", "backend", "variant",
                                        "anchor", "device", "precision", "threads", "ranks", "rank", "problem", "status",
                                        "reason", "reps", "min_s", "median_s", "mean_s", "trimmed_mean_s",
                                        "stddev_s", "cv", "timer", "host_median_s", "gflops", "gbps",
                                        "speedup", "err_norm", "err_max", "tolerance", "check",
                                        "ceiling_fraction", "energy_j", "power_w", "gflops_per_w", "gbps_per_w",
                                        "sm_mhz", "mem_mhz", "throttle", "energy_source"};
    pb_status st = PB_OK;
    int line = 1;
    struct csv_skips skips = {0};
    for (;;) {
        char **v;
        if ((st = csv_next(&p, path, &line, head, nh, quiet ? &skips : NULL, &v)) != PB_OK || !v)
            break;
        int n = nh;
#define COL(name) (col_index(head, nh, name) >= 0 ? v[col_index(head, nh, name)] : NULL)
        struct pb_rp_row *r = new_row(set);
        if (!r) {
            free_fields(v, n);
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
            break;
        }
        if (!f->date) {
            f->bench = dup_or_empty(COL("bench"));
            f->date = dup_or_empty(COL("date"));
            f->commit = dup_or_empty(COL("commit"));
            f->host = dup_or_empty(COL("host"));
        }
        r->bench = dup_or_empty(COL("bench"));
        r->backend = dup_or_empty(COL("backend"));
        r->variant = dup_or_empty(COL("variant"));
        r->device = dup_or_empty(COL("device"));
        r->precision = dup_or_empty(COL("precision"));
        r->problem = dup_or_empty(COL("problem"));
        r->status = dup_or_empty(COL("status"));
        r->reason = dup_or_empty(COL("reason"));
        r->timer = dup_or_empty(COL("timer"));
        r->check = dup_or_empty(COL("check"));
        const char *anchor = COL("anchor");
        r->anchor = anchor && strcmp(anchor, "1") == 0;
        double th = parse_num(COL("threads")), nr = parse_num(COL("ranks"));
        r->threads = to_int(th, 0);
        r->ranks = to_int(nr, 1);
        const char *rank = COL("rank");
        r->rank = strdup(rank ? rank : "0");
        r->reps = parse_num(COL("reps"));
        r->min = parse_num(COL("min_s"));
        r->median = parse_num(COL("median_s"));
        r->mean = parse_num(COL("mean_s"));
        r->stddev = parse_num(COL("stddev_s"));
        r->cv = parse_num(COL("cv"));
        r->gflops = parse_num(COL("gflops"));
        r->gbps = parse_num(COL("gbps"));
        r->speedup = parse_num(COL("speedup"));
        r->err_max = parse_num(COL("err_max"));
        r->fraction = parse_num(COL("ceiling_fraction"));
        r->energy_j = parse_num(COL("energy_j"));
        r->power_w = parse_num(COL("power_w"));
        r->gflops_per_w = parse_num(COL("gflops_per_w"));
        r->gbps_per_w = parse_num(COL("gbps_per_w"));
        r->sm_mhz = parse_num(COL("sm_mhz"));
        r->mem_mhz = parse_num(COL("mem_mhz"));
        r->throttle = dup_or_empty(COL("throttle"));
        r->energy_source = dup_or_empty(COL("energy_source"));
        drop_impossible(r);
#undef COL
        /* the benchmark's parameters: between "threads" and "problem", but "ranks" and "rank" */
        bool param[nh > 0 ? nh : 1];
        for (int i = 0; i < nh; i++)
            param[i] = i > c_threads && i < c_problem && strcmp(head[i], "ranks") != 0 && strcmp(head[i], "rank") != 0;
        for (int i = 0; i < nh && st == PB_OK; i++)
            if (param[i])
                st = add_kv(&r->params, &r->n_params, head[i], v[i], parse_num(v[i]));
        for (int i = 0; i < nh && st == PB_OK; i++) {
            bool known = param[i];
            for (size_t k = 0; k < sizeof fixed / sizeof fixed[0] && !known; k++)
                known = strcmp(head[i], fixed[k]) == 0;
            if (!known)
                st = add_kv(&r->extras, &r->n_extras, head[i], v[i], parse_num(v[i]));
        }
        if (st == PB_OK && !fill_strings(r))
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
        free_fields(v, n);
        if (st != PB_OK)
            break;
    }
    if (!f->date) {
        f->bench = strdup("");
        f->date = strdup("");
        f->commit = strdup("");
        f->host = strdup("");
    }
    f->cpu = strdup("");
    f->command = strdup("");
    f->n_rows = set->n_rows - f->first_row;
    free_fields(head, nh);
    if (skips.count)
        fprintf(stderr, "parbench: %s: %d rows left out, their field count not the header's %d (line %d has %d)\n",
                path, skips.count, nh, skips.first_line, skips.first_fields);
    return st;
}

/* ---- comparisons ---------------------------------------------------------------- */

static bool same_num(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static bool same_figs(const struct pb_rp_comparison *a, const struct pb_rp_comparison *b)
{
    if (a->n_figs != b->n_figs || strcmp(a->study, b->study) != 0)
        return false;
    for (size_t i = 0; i < a->n_figs; i++) {
        const struct pb_rp_figure *x = &a->figs[i], *y = &b->figs[i];
        const char *xs[] = {x->figure, x->source, x->their_device, x->unit, x->our_backend, x->our_device, x->note};
        const char *ys[] = {y->figure, y->source, y->their_device, y->unit, y->our_backend, y->our_device, y->note};
        for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++)
            if (strcmp(xs[k], ys[k]) != 0)
                return false;
        if (!same_num(x->theirs, y->theirs) || !same_num(x->ours, y->ours) || !same_num(x->ratio, y->ratio) ||
            x->measured != y->measured || x->verdict != y->verdict)
            return false;
    }
    return true;
}

/* A copy of a comparison already loaded (`parbench study` output kept both in
 * its folder and beside it) is named on the first, not shown twice. */
static pb_status add_comparison(struct pb_rp_set *set, struct pb_rp_comparison *c)
{
    for (size_t i = 0; i < set->n_comparisons; i++) {
        struct pb_rp_comparison *have = &set->comparisons[i];
        if (!same_figs(have, c))
            continue;
        size_t len = strlen(have->copies);
        char *copies = realloc(have->copies, len + strlen(c->name) + 3);
        if (!copies)
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        snprintf(copies + len, strlen(c->name) + 3, "%s%s", len ? ", " : "", c->name);
        have->copies = copies;
        free_comparison(c);
        return PB_OK;
    }
    struct pb_rp_comparison *bigger = realloc(set->comparisons, (set->n_comparisons + 1) * sizeof *bigger);
    if (!bigger)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    set->comparisons = bigger;
    bigger[set->n_comparisons++] = *c;
    return PB_OK;
}

static const char comparison_head[] = "study,figure,source,their_device";

static pb_status load_comparison(struct pb_rp_set *set, const char *path, const char *shown, const char *text)
{
    enum { STUDY, FIGURE, SOURCE, THEIR_DEVICE, THEIR_VALUE, UNIT, OUR_BACKEND, OUR_DEVICE, OUR_VALUE, RATIO,
           MEASURED, VERDICT, NOTE, N_COLS };
    static const char *const names[N_COLS] = {"study", "figure", "source", "their_device", "their_value", "unit",
                                              "our_backend", "our_device", "our_value", "ratio", "measured",
                                              "verdict", "note"};
    const char *p = text;
    char **head;
    int nh = csv_record(&p, &head);
    if (nh < 0)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    int col[N_COLS];
    for (int k = 0; k < N_COLS; k++)
        col[k] = col_index(head, nh, names[k]);
    struct pb_rp_comparison c = {0};
    pb_status st = PB_OK;
    int line = 1;
    while (st == PB_OK) {
        char **v;
        if ((st = csv_next(&p, path, &line, head, nh, NULL, &v)) != PB_OK || !v)
            break;
        int n = nh;
        struct pb_rp_figure *bigger = realloc(c.figs, (c.n_figs + 1) * sizeof *bigger);
        if (!bigger) {
            free_fields(v, n);
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
            break;
        }
        c.figs = bigger;
#define FIELD(k) (col[k] >= 0 ? v[col[k]] : NULL)
        struct pb_rp_figure *f = &c.figs[c.n_figs++];
        *f = (struct pb_rp_figure){dup_or_empty(FIELD(FIGURE)), dup_or_empty(FIELD(SOURCE)),
                                   dup_or_empty(FIELD(THEIR_DEVICE)), dup_or_empty(FIELD(UNIT)),
                                   dup_or_empty(FIELD(OUR_BACKEND)), dup_or_empty(FIELD(OUR_DEVICE)),
                                   dup_or_empty(FIELD(NOTE)), parse_num(FIELD(THEIR_VALUE)),
                                   parse_num(FIELD(OUR_VALUE)), parse_num(FIELD(RATIO)), false, 0};
        const char *measured = FIELD(MEASURED), *verdict = FIELD(VERDICT);
        f->measured = measured && strcmp(measured, "yes") == 0;
        f->verdict = !verdict ? 0 : strcmp(verdict, "agrees") == 0 ? 1 : strcmp(verdict, "contradicts") == 0 ? -1 : 0;
        if (!c.study && !(c.study = dup_or_empty(FIELD(STUDY))))
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
#undef FIELD
        if (!f->figure || !f->source || !f->their_device || !f->unit || !f->our_backend || !f->our_device ||
            !f->note)
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
        free_fields(v, n);
    }
    free_fields(head, nh);
    if (st == PB_OK) {
        const char *slash = strrchr(path, '/');
        char study[4];
        folder_study(path, study);
        c.path = strdup(path);
        c.name = strdup(shown ? shown : slash ? slash + 1 : path);
        c.copies = strdup("");
        if (!c.study)
            c.study = strdup(study);
        if (!c.path || !c.name || !c.copies || !c.study)
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    if (st == PB_OK)
        st = add_comparison(set, &c);
    if (st != PB_OK)
        free_comparison(&c);
    return st;
}

/* ---- files and directories ------------------------------------------------------ */

/* quiet: a file that is not parbench output is skipped (PB_ERR_UNSUPPORTED).
 * shown: the name to show, NULL for path without directories. */
static pb_status load_text(struct pb_rp_set *set, const char *path, const char *shown, const char *text,
                           bool quiet)
{
    if (strncmp(text, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 byte-order mark (spreadsheets write one) */
        text += 3;
    const char *s = text;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (!*s && quiet) { /* in a folder: an empty file is skipped, not silently */
        fprintf(stderr, "parbench: skipping %s: empty\n", path);
        return PB_ERR_UNSUPPORTED;
    }
    if (!*s)
        return pb__fail(PB_ERR_PARSE, "%s is empty: no results in it", path);
    if (*s == '{' || *s == '[')
        return load_json(set, path, shown, text, quiet);
    if (strncmp(text, comparison_head, sizeof comparison_head - 1) == 0)
        return load_comparison(set, path, shown, text);
    return load_csv(set, path, shown, text, quiet);
}

static pb_status load_file(struct pb_rp_set *set, const char *path, const char *shown, bool quiet)
{
    char *text;
    pb_status st = pb__read_file(path, &text);
    if (st == PB_ERR_NOT_FOUND)
        return pb__fail(PB_ERR_IO, "cannot read %s: no such file", path);
    if (st != PB_OK)
        return st;
    st = load_text(set, path, shown, text, quiet);
    free(text);
    return st;
}

pb_status pb__rp_load_text(struct pb_rp_set *set, const char *name, const char *text)
{
    return load_text(set, name, NULL, text, false);
}

struct entry {
    char *name;
    bool dir;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir), len = n + strlen(name) + 2;
    char *full = malloc(len);
    if (full)
        snprintf(full, len, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
    return full;
}

/* The .json and .csv files of dir and of its folders, depth levels down;
 * rel: dir's path relative to the directory given ("" for it), for the
 * names shown. */
static pb_status load_dir(struct pb_rp_set *set, const char *path, const char *rel, int depth)
{
    DIR *d = opendir(path);
    if (!d)
        return pb__fail(PB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    struct entry *ents = NULL;
    size_t n = 0;
    pb_status st = PB_OK;
    for (struct dirent *e; st == PB_OK && (e = readdir(d)) != NULL;) {
        const char *dot = strrchr(e->d_name, '.');
        bool data = dot && (strcmp(dot, ".json") == 0 || strcmp(dot, ".csv") == 0);
        char *full = join(path, e->d_name);
        if (!full) {
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
            break;
        }
        /* A link to a folder is not entered: it may lead back up. */
        struct stat sb;
        bool link = lstat(full, &sb) == 0 && S_ISLNK(sb.st_mode);
        bool found = (link ? stat(full, &sb) : lstat(full, &sb)) == 0, dir = found && S_ISDIR(sb.st_mode);
        /* A pipe or device named *.csv would be read forever (or block): left out, not silently. */
        if (data && found && !dir && !S_ISREG(sb.st_mode))
            fprintf(stderr, "parbench: skipping %s: not a regular file\n", full);
        free(full);
        if (dir ? link || e->d_name[0] == '.' || depth >= PB_RP_MAX_DEPTH : !data || (found && !S_ISREG(sb.st_mode)))
            continue;
        struct entry *bigger = realloc(ents, (n + 1) * sizeof *bigger);
        if (!bigger || !(bigger[n].name = strdup(e->d_name))) {
            ents = bigger ? bigger : ents;
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
            break;
        }
        ents = bigger;
        ents[n++].dir = dir;
    }
    closedir(d);
    if (n)
        qsort(ents, n, sizeof *ents, by_name);
    for (size_t i = 0; i < n; i++) {
        char *full = st == PB_OK ? join(path, ents[i].name) : NULL;
        char *shown = full ? malloc(strlen(rel) + strlen(ents[i].name) + 2) : NULL;
        if (st == PB_OK && !shown) {
            st = pb__fail(PB_ERR_NOMEM, "out of memory");
        } else if (st == PB_OK && ents[i].dir) {
            sprintf(shown, "%s%s/", rel, ents[i].name);
            st = load_dir(set, full, shown, depth + 1);
        } else if (st == PB_OK) {
            sprintf(shown, "%s%s", rel, ents[i].name);
            st = load_file(set, full, shown, true);
            if (st == PB_ERR_UNSUPPORTED)
                st = PB_OK;
        }
        free(full);
        free(shown);
        free(ents[i].name);
    }
    free(ents);
    return st;
}

pb_status pb__rp_load(struct pb_rp_set *set, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return pb__fail(PB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return load_file(set, path, NULL, false);
    return load_dir(set, path, "", 0);
}

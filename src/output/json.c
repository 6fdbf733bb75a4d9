/* JSON through cJSON: {"context", "bench", "results": [...]}. A file is
 * rewritten whole (to a temporary, then renamed) after every row, so it is
 * always a complete document; standard output gets it once at the end. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "output/writer_impl.h"

struct json_state {
    cJSON *doc, *results;
};

/* NaN means "no value": null, not a number JSON cannot hold. */
static void add_num(cJSON *o, const char *key, double x)
{
    if (isnan(x) || isinf(x))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, x);
}

static pb_status write_file(struct pb_writer *w)
{
    struct json_state *s = w->state;
    char *text = cJSON_Print(s->doc);
    if (!text)
        return pb__fail(PB_ERR_NOMEM, "out of memory serialising JSON");
    size_t len = strlen(w->path) + 8;
    char *tmp = malloc(len);
    pb_status st = PB_OK;
    FILE *f = NULL;
    if (!tmp) {
        st = pb__fail(PB_ERR_NOMEM, "out of memory");
    } else {
        snprintf(tmp, len, "%s.tmp", w->path);
        f = fopen(tmp, "w");
        bool written = f && fputs(text, f) != EOF && fputc('\n', f) != EOF;
        if (f && fclose(f) != 0)
            written = false;
        if (!written) {
            st = pb__fail(PB_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
            remove(tmp);
        } else if (rename(tmp, w->path) != 0) {
            st = pb__fail(PB_ERR_IO, "cannot replace %s: %s", w->path, strerror(errno));
            remove(tmp);
        }
    }
    free(tmp);
    cJSON_free(text);
    return st;
}

static pb_status json_begin(struct pb_writer *w)
{
    const struct pb_context *c = w->ctx;
    const struct pb_bench *b = w->bench;
    struct json_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    w->state = s;
    s->doc = cJSON_CreateObject();
    cJSON *ctx = cJSON_AddObjectToObject(s->doc, "context");
    cJSON_AddStringToObject(ctx, "parbench_version", c->version);
    cJSON_AddStringToObject(ctx, "git_commit", c->commit);
    cJSON_AddStringToObject(ctx, "date", c->date);
    cJSON_AddStringToObject(ctx, "host", c->host);
    cJSON_AddStringToObject(ctx, "cpu", c->cpu);
    cJSON_AddStringToObject(ctx, "compiler", c->compiler);
    if (c->blas[0])
        cJSON_AddStringToObject(ctx, "blas", c->blas);
    cJSON_AddStringToObject(ctx, "command", c->command);
    cJSON_AddNumberToObject(ctx, "reps", c->reps);
    cJSON_AddNumberToObject(ctx, "warmup", c->warmup);
    cJSON_AddNumberToObject(ctx, "seed", (double)c->seed);
    cJSON_AddNumberToObject(ctx, "ranks", c->ranks);
    cJSON_AddNumberToObject(ctx, "nodes", c->nodes);
    cJSON_AddStringToObject(ctx, "hosts", c->hosts);
    cJSON_AddStringToObject(ctx, "mpi", c->mpi);
    cJSON *bench = cJSON_AddObjectToObject(s->doc, "bench");
    cJSON_AddStringToObject(bench, "name", b->name);
    cJSON_AddStringToObject(bench, "summary", b->summary);
    cJSON_AddStringToObject(bench, "flop_model", b->flop_model);
    cJSON_AddStringToObject(bench, "byte_model", b->byte_model);
    cJSON_AddStringToObject(bench, "rates_from", "median");
    cJSON_AddStringToObject(bench, "gbps_unit", "1e9 bytes/s");
    s->results = cJSON_AddArrayToObject(s->doc, "results");
    if (!s->results)
        return pb__fail(PB_ERR_NOMEM, "out of memory building JSON");
    if (w->path && !w->stream) {
        fclose(w->f); /* opened only to prove the path writable; rewritten per row */
        w->f = NULL;
        return write_file(w);
    }
    return PB_OK;
}

static pb_status json_row(struct pb_writer *w, const struct pb_result *r)
{
    struct json_state *s = w->state;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return pb__fail(PB_ERR_NOMEM, "out of memory building JSON");
    cJSON_AddItemToArray(s->results, o);
    cJSON_AddStringToObject(o, "backend", r->backend);
    cJSON_AddStringToObject(o, "variant", r->variant);
    cJSON_AddBoolToObject(o, "anchor", r->anchor);
    cJSON_AddStringToObject(o, "device", r->device);
    if (r->bench->typeless)
        cJSON_AddNullToObject(o, "precision");
    else
        cJSON_AddStringToObject(o, "precision", pb_precision_name(r->problem.prec));
    cJSON_AddNumberToObject(o, "threads", r->threads);
    cJSON_AddNumberToObject(o, "ranks", r->ranks);
    if (r->rank == PB_RANK_ALL)
        cJSON_AddStringToObject(o, "rank", "all");
    else
        cJSON_AddNumberToObject(o, "rank", r->rank);
    cJSON *params = cJSON_AddObjectToObject(o, "params");
    for (size_t i = 0; i < r->bench->n_params; i++) {
        if (r->bench->params[i].text)
            cJSON_AddStringToObject(params, r->bench->params[i].name, r->problem.s[i] ? r->problem.s[i] : "");
        else
            cJSON_AddNumberToObject(params, r->bench->params[i].name, (double)r->problem.v[i]);
    }
    cJSON_AddStringToObject(o, "problem", r->label);
    cJSON_AddStringToObject(o, "status", pb__result_status_name(r->status));
    cJSON_AddStringToObject(o, "reason", r->reason);
    if (r->status == PB_RESULT_OK) {
        cJSON *st = cJSON_AddObjectToObject(o, "time_s");
        cJSON_AddNumberToObject(st, "reps", (double)r->stats.n);
        add_num(st, "min", r->stats.min);
        add_num(st, "max", r->stats.max);
        add_num(st, "median", r->stats.median);
        add_num(st, "mean", r->stats.mean);
        add_num(st, "trimmed_mean", r->stats.trimmed_mean);
        add_num(st, "stddev", r->stats.stddev);
        add_num(st, "cv", r->stats.cv);
        cJSON_AddItemToObject(st, "samples", cJSON_CreateDoubleArray(r->samples, (int)r->stats.n));
        cJSON_AddStringToObject(o, "timer", r->timer ? r->timer : "host");
        cJSON *hst = cJSON_AddObjectToObject(o, "host_time_s");
        add_num(hst, "median", r->host_stats.median);
        add_num(hst, "min", r->host_stats.min);
        cJSON_AddItemToObject(hst, "samples",
                              cJSON_CreateDoubleArray(r->host_samples, (int)r->host_stats.n));
        add_num(o, "gflops", r->gflops);
        add_num(o, "gbps", r->gbps);
        add_num(o, "speedup", r->speedup);
        add_num(o, "ceiling_fraction", r->fraction);
        if (!isnan(r->rank_rate_median)) {
            cJSON *rr = cJSON_AddObjectToObject(o, "rank_rates");
            add_num(rr, "min", r->rank_rate_min);
            add_num(rr, "median", r->rank_rate_median);
            add_num(rr, "max", r->rank_rate_max);
        }
        for (size_t i = 0; i < r->bench->n_extras; i++)
            add_num(o, r->bench->extra_names[i], r->extras[i]);
        if (r->energy_source || !isnan(r->sm_mhz) || r->throttle[0]) {
            cJSON *e = cJSON_AddObjectToObject(o, "energy");
            if (r->energy_source)
                cJSON_AddStringToObject(e, "source", r->energy_source);
            else
                cJSON_AddNullToObject(e, "source");
            add_num(e, "energy_j", r->energy_j);
            add_num(e, "power_w", r->power_w);
            add_num(e, "gflops_per_w", r->gflops_per_w);
            add_num(e, "gbps_per_w", r->gbps_per_w);
            add_num(e, "sm_mhz", r->sm_mhz);
            add_num(e, "mem_mhz", r->mem_mhz);
            if (r->throttle[0])
                cJSON_AddStringToObject(e, "throttle", r->throttle);
            else
                cJSON_AddNullToObject(e, "throttle");
        }
    }
    if (r->status == PB_RESULT_OK || r->status == PB_RESULT_FAILED) {
        cJSON *v = cJSON_AddObjectToObject(o, "verification");
        cJSON_AddStringToObject(v, "mode", r->check.mode ? r->check.mode : "");
        add_num(v, "err_norm", r->check.err_norm);
        add_num(v, "err_max", r->check.err_max);
        add_num(v, "tolerance", r->check.tol);
        cJSON_AddBoolToObject(v, "pass", r->check.pass);
    }
    return w->path && !w->stream ? write_file(w) : PB_OK;
}

static pb_status json_end(struct pb_writer *w)
{
    struct json_state *s = w->state;
    if (!s || (w->path && !w->stream))
        return PB_OK;
    char *text = cJSON_Print(s->doc);
    if (!text)
        return pb__fail(PB_ERR_NOMEM, "out of memory serialising JSON");
    fprintf(w->f, "%s\n", text);
    cJSON_free(text);
    return pb__writer_flush(w);
}

static void json_free(struct pb_writer *w)
{
    struct json_state *s = w->state;
    if (s)
        cJSON_Delete(s->doc);
    free(s);
}

const struct pb_writer_ops pb__writer_json = {"json", json_begin, json_row, json_end, json_free};

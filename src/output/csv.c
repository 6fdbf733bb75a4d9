/* CSV (RFC 4180): one header, then one row per result, flushed as it comes.
 * The run context is repeated on every row so files from several runs can be
 * concatenated (--append). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/core.h"
#include "output/writer_impl.h"

static void field(FILE *f, const char *s, bool last)
{
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

static void num(FILE *f, double x)
{
    if (isnan(x))
        fputc(',', f);
    else
        fprintf(f, "%.9g,", x);
}

static const char *const fixed_head[] = {"date", "host", "version", "commit", "bench", "backend",
                                         "variant", "anchor", "device", "precision", "threads",
                                         "ranks", "rank"};
static const char *const fixed_tail[] = {"problem", "status", "reason", "reps", "min_s", "median_s",
                                         "mean_s", "trimmed_mean_s", "stddev_s", "cv", "timer",
                                         "host_median_s", "gflops",
                                         "gbps", "speedup", "ceiling_fraction", "err_norm", "err_max", "tolerance",
                                         "check", "rank_rate_min", "rank_rate_median", "rank_rate_max",
                                         "energy_j", "power_w", "gflops_per_w", "gbps_per_w", "sm_mhz",
                                         "mem_mhz", "throttle", "energy_source"};

/* The header line into buf (without newline). */
static void header(const struct pb_bench *b, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
#define PB__APPEND(s) used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "," : "", s)
    for (size_t i = 0; i < sizeof fixed_head / sizeof fixed_head[0]; i++)
        PB__APPEND(fixed_head[i]);
    for (size_t i = 0; i < b->n_params; i++)
        PB__APPEND(b->params[i].name);
    for (size_t i = 0; i < sizeof fixed_tail / sizeof fixed_tail[0]; i++)
        PB__APPEND(fixed_tail[i]);
    for (size_t i = 0; i < b->n_extras; i++)
        PB__APPEND(b->extra_names[i]);
#undef PB__APPEND
}

/* A file to append to whose last byte is not a newline: rows written after it
 * would join its last line. A last line with all its fields (a header alone, a
 * newline lost in an editor) is ended here; a shorter one is a row cut short by
 * an interrupted write, and appending would bury it mid-file where readers
 * reject the whole file, so the append is refused. */
static pb_status end_last_line(struct pb_writer *w, const char *head)
{
    FILE *f = w->f;
    /* fgets read the header, so there is a last byte; reads and writes of
     * one stream are separated by a seek */
    bool ended = fseek(f, -1, SEEK_END) == 0 && getc(f) == '\n';
    if (fseek(f, 0, SEEK_END) != 0)
        return pb__fail(PB_ERR_IO, "cannot read %s: %s", w->path, strerror(errno));
    if (ended)
        return PB_OK;
    size_t head_fields = 1, fields = 1;
    for (const char *c = head; *c; c++)
        head_fields += *c == ',';
    long line = 1, record_line = 1;
    bool quoted = false;
    rewind(f);
    for (int c; (c = getc(f)) != EOF;) {
        if (c == '"')
            quoted = !quoted; /* a doubled quote toggles twice */
        else if (c == ',' && !quoted)
            fields++;
        if (c == '\n' && !quoted)
            fields = 1, record_line = line + 1;
        line += c == '\n';
    }
    if (ferror(f))
        return pb__fail(PB_ERR_IO, "cannot read %s: %s", w->path, strerror(errno));
    if (quoted || fields != head_fields)
        return pb__fail(PB_ERR_IO, "cannot append to %s: its last line (line %ld) is cut short, %zu of %zu fields "
                        "(an interrupted run?); delete that line or write to a new file", w->path, record_line, fields,
                        head_fields);
    fseek(f, 0, SEEK_END);
    fputc('\n', f); /* in append mode, so at the end wherever the stream stood */
    return pb__writer_flush(w);
}

static pb_status csv_begin(struct pb_writer *w)
{
    char head[2048], existing[2048] = "";
    header(w->bench, head, sizeof head);
    if (w->append) {
        rewind(w->f);
        if (fgets(existing, sizeof existing, w->f)) {
            existing[strcspn(existing, "\r\n")] = '\0';
            if (strcmp(existing, head) != 0)
                return pb__fail(PB_ERR_INVALID, "cannot append to %s: its columns differ from %s's",
                                w->path, w->bench->name);
            return end_last_line(w, head);
        }
    }
    fprintf(w->f, "%s\n", head);
    return pb__writer_flush(w);
}

static pb_status csv_row(struct pb_writer *w, const struct pb_result *r)
{
    const struct pb_context *c = w->ctx;
    FILE *f = w->f;
    char buf[64];
    field(f, c->date, false);
    field(f, c->host, false);
    field(f, c->version, false);
    field(f, c->commit, false);
    field(f, r->bench->name, false);
    field(f, r->backend, false);
    field(f, r->variant, false);
    field(f, r->anchor ? "1" : "0", false);
    field(f, r->device, false);
    field(f, r->bench->typeless ? "" : pb_precision_name(r->problem.prec), false);
    fprintf(f, "%d,", r->threads);
    fprintf(f, "%d,", r->ranks);
    if (r->rank == PB_RANK_ALL)
        fputs("all,", f);
    else
        fprintf(f, "%d,", r->rank);
    for (size_t i = 0; i < r->bench->n_params; i++) {
        if (r->bench->params[i].text)
            field(f, r->problem.s[i] ? r->problem.s[i] : "", false);
        else
            fprintf(f, "%lld,", (long long)r->problem.v[i]);
    }
    field(f, r->label, false);
    field(f, pb__result_status_name(r->status), false);
    field(f, r->reason, false);
    bool ok = r->status == PB_RESULT_OK, checked = ok || r->status == PB_RESULT_FAILED;
    fprintf(f, "%zu,", ok ? r->stats.n : 0);
    num(f, ok ? r->stats.min : NAN);
    num(f, ok ? r->stats.median : NAN);
    num(f, ok ? r->stats.mean : NAN);
    num(f, ok ? r->stats.trimmed_mean : NAN);
    num(f, ok ? r->stats.stddev : NAN);
    num(f, ok ? r->stats.cv : NAN);
    field(f, ok && r->timer ? r->timer : "", false);
    num(f, ok ? r->host_stats.median : NAN);
    num(f, ok ? r->gflops : NAN);
    num(f, ok ? r->gbps : NAN);
    num(f, ok ? r->speedup : NAN);
    num(f, ok ? r->fraction : NAN);
    num(f, checked ? r->check.err_norm : NAN);
    num(f, checked ? r->check.err_max : NAN);
    num(f, checked ? r->check.tol : NAN);
    snprintf(buf, sizeof buf, "%s", checked && r->check.mode ? r->check.mode : "");
    field(f, buf, false);
    num(f, ok ? r->rank_rate_min : NAN);
    num(f, ok ? r->rank_rate_median : NAN);
    num(f, ok ? r->rank_rate_max : NAN);
    num(f, ok ? r->energy_j : NAN);
    num(f, ok ? r->power_w : NAN);
    num(f, ok ? r->gflops_per_w : NAN);
    num(f, ok ? r->gbps_per_w : NAN);
    num(f, ok ? r->sm_mhz : NAN);
    num(f, ok ? r->mem_mhz : NAN);
    field(f, ok ? r->throttle : "", false);
    field(f, ok && r->energy_source ? r->energy_source : "", r->bench->n_extras == 0);
    for (size_t i = 0; i < r->bench->n_extras; i++) {
        if (ok && !isnan(r->extras[i]))
            fprintf(f, "%.9g", r->extras[i]);
        fputc(i + 1 < r->bench->n_extras ? ',' : '\n', f);
    }
    return pb__writer_flush(w);
}

static pb_status csv_end(struct pb_writer *w) { return pb__writer_flush(w); }

const struct pb_writer_ops pb__writer_csv = {"csv", csv_begin, csv_row, csv_end, NULL};

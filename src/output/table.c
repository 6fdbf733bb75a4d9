/* Human-readable table, one line per row as it arrives. */
#include <math.h>
#include <string.h>

#include "output/writer_impl.h"

static pb_status table_begin(struct pb_writer *w)
{
    const struct pb_context *c = w->ctx;
    const struct pb_bench *b = w->bench;
    fprintf(w->f, "# parbench %s (%s) on %s, %s; %s; %s%s%s\n", c->version, c->commit, c->host, c->cpu,
            c->compiler, c->blas, c->blas[0] ? "; " : "", c->date);
    fprintf(w->f, "# %s: %s. %d timed repetitions after %d warm-up, seed %llu.\n", b->name,
            b->summary, c->reps, c->warmup, c->seed);
    if (c->ranks > 1)
        fprintf(w->f, "# %d ranks on %d node%s (%s), %s; rank `all` = total rate over the slowest "
                      "rank's time per repetition\n",
                c->ranks, c->nodes, c->nodes == 1 ? "" : "s", c->hosts, c->mpi);
    fprintf(w->f, "# time = median; GFLOP/s = %s / time; GB/s (1e9 B/s) = %s / time\n",
            b->flop_model, b->byte_model);
    fprintf(w->f, "%-8s %-18s %-18s %-6s %3s %10s %6s %9s %9s %8s %9s  %s\n", "backend", "variant",
            "size", "prec", "thr", "median ms", "cv %", "GFLOP/s", "GB/s", "speedup", "error",
            "status");
    return pb__writer_flush(w);
}

/* A number for people: 4 significant digits, never in exponent form (a
 * median of 61234 ms is not 6.123e+04, 0.00006 ms not 6e-05), and whole
 * numbers (rows, non-zeros, bytes) in full. */
static const char *human(char *buf, size_t len, double v)
{
    double a = fabs(v);
    if (isfinite(v) && a < 1e15 && (a >= 1e4 || (a >= 1 && v == floor(v))))
        snprintf(buf, len, "%.0f", v);
    else if (isfinite(v) && a > 0 && a < 1e-4) {
        int digits = 3 - (int)floor(log10(a)); /* 4 significant digits, at most 9 decimals */
        snprintf(buf, len, "%.*f", digits < 9 ? digits : 9, v);
    } else
        snprintf(buf, len, "%.4g", v);
    return buf;
}

static pb_status table_row(struct pb_writer *w, const struct pb_result *r)
{
    char num[32];
    char variant[48], thr[16] = "-", speedup[16] = "-", err[16] = "-", gflops[16] = "-", gbps[16] = "-";
    snprintf(variant, sizeof variant, "%s%s", r->variant, r->anchor ? "*" : "");
    if (r->ranks > 1) { /* the rank after the variant keeps the columns of one-rank runs */
        size_t len = strlen(variant);
        if (r->rank == PB_RANK_ALL)
            snprintf(variant + len, sizeof variant - len, "@all");
        else
            snprintf(variant + len, sizeof variant - len, "@%d", r->rank);
    }
    if (r->threads > 0)
        snprintf(thr, sizeof thr, "%d", r->threads);
    double e = fmax(r->check.err_norm, r->check.err_max);
    if ((r->status == PB_RESULT_OK || r->status == PB_RESULT_FAILED) && !isnan(e)) /* NAN: not checked */
        snprintf(err, sizeof err, "%.2e", e);
    fprintf(w->f, "%-8s %-18s %-18s %-6s %3s ", r->backend, variant, r->label,
            r->bench->typeless ? "-" : pb_precision_name(r->problem.prec), thr);
    if (r->status == PB_RESULT_OK) {
        if (!isnan(r->speedup))
            snprintf(speedup, sizeof speedup, "%.2fx", r->speedup);
        if (!isnan(r->gflops))
            snprintf(gflops, sizeof gflops, "%.2f", r->gflops);
        if (!isnan(r->gbps))
            snprintf(gbps, sizeof gbps, "%.2f", r->gbps);
        fprintf(w->f, "%10s %6.1f %9s %9s %8s %9s  OK", human(num, sizeof num, r->stats.median * 1e3),
                r->stats.cv * 100, gflops, gbps, speedup, err);
        /* An OK that checked nothing (--no-verify) or only samples says so
         * where it is read. */
        if (r->check.mode && strcmp(r->check.mode, "full") != 0)
            fprintf(w->f, "  check=%s", r->check.mode);
        /* Energy stays short here: the power and a warning; CSV/JSON have the rest. */
        if (!isnan(r->power_w))
            fprintf(w->f, "  %s W", human(num, sizeof num, r->power_w));
        if (r->throttle[0] && strcmp(r->throttle, "none") != 0)
            fprintf(w->f, "  throttled: %s", r->throttle);
        for (size_t i = 0; i < r->bench->n_extras; i++)
            if (!isnan(r->extras[i]))
                fprintf(w->f, "  %s=%s", r->bench->extra_names[i], human(num, sizeof num, r->extras[i]));
        if (r->reason[0])
            fprintf(w->f, "  (%s)", r->reason);
        fputc('\n', w->f);
    } else {
        fprintf(w->f, "%10s %6s %9s %9s %8s %9s  %s%s%s\n", "-", "-", "-", "-", "-", err,
                pb__result_status_name(r->status), r->reason[0] ? ": " : "", r->reason);
    }
    return pb__writer_flush(w);
}

static pb_status table_end(struct pb_writer *w)
{
    (void)w;
    return PB_OK;
}

const struct pb_writer_ops pb__writer_table = {"table", table_begin, table_row, table_end, NULL};

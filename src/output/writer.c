/* Writer dispatch, format selection, run context and status names. */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/core.h"
#include "core/cpuinfo.h"
#include "output/writer_impl.h"

static const struct pb_writer_ops *const formats[] = {&pb__writer_table, &pb__writer_csv,
                                                      &pb__writer_json};

static const struct pb_writer_ops *find_format(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i]->format, name) == 0)
            return formats[i];
    return NULL;
}

bool pb__format_valid(const char *format) { return find_format(format) != NULL; }

const char *pb__format_from_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return NULL;
    if (strcmp(dot, ".csv") == 0)
        return "csv";
    if (strcmp(dot, ".json") == 0)
        return "json";
    if (strcmp(dot, ".txt") == 0)
        return "table";
    return NULL;
}

const char *pb__result_status_name(enum pb_result_status s)
{
    switch (s) {
#define PB__RS_NAME(name, str) \
    case PB_RESULT_##name:     \
        return str;
        PB_RESULT_STATUS_MAP(PB__RS_NAME)
#undef PB__RS_NAME
    }
    return "UNKNOWN";
}

pb_status pb__writer_open(const char *format, const char *path, bool append, struct pb_writer **out)
{
    *out = NULL;
    const struct pb_writer_ops *ops = find_format(format);
    if (!ops)
        return pb__fail(PB_ERR_INVALID, "unknown output format '%s' (table, csv, json)", format);
    if (append && ops != &pb__writer_csv)
        return pb__fail(PB_ERR_INVALID, "--append works with CSV files only");
    struct pb_writer *w = calloc(1, sizeof *w);
    if (!w)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    w->ops = ops;
    w->append = append;
    w->f = stdout;
    if (path) {
        w->path = strdup(path);
        /* JSON is rewritten whole after every row; the others stream. */
        const char *mode = ops == &pb__writer_json ? "w" : append ? "a+" : "w";
        w->f = w->path ? fopen(path, mode) : NULL;
        if (!w->f) {
            pb_status st = pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
            free(w->path);
            free(w);
            return st;
        }
    }
    *out = w;
    return PB_OK;
}

pb_status pb__writer_begin(struct pb_writer *w, const struct pb_context *ctx,
                           const struct pb_bench *bench)
{
    w->ctx = ctx;
    w->bench = bench;
    return w->ops->begin(w);
}

pb_status pb__writer_row(struct pb_writer *w, const struct pb_result *r) { return w->ops->row(w, r); }

pb_status pb__writer_close(struct pb_writer *w)
{
    if (!w)
        return PB_OK;
    pb_status st = w->ctx ? w->ops->end(w) : PB_OK;
    if (w->ops->free)
        w->ops->free(w);
    if (w->f && w->f != stdout && fclose(w->f) != 0 && st == PB_OK)
        st = pb__fail(PB_ERR_IO, "cannot write %s: %s", w->path, strerror(errno));
    free(w->path);
    free(w);
    return st;
}

pb_status pb__writer_flush(struct pb_writer *w)
{
    if (fflush(w->f) != 0 || ferror(w->f))
        return pb__fail(PB_ERR_IO, "cannot write %s: %s", w->path ? w->path : "standard output",
                        strerror(errno));
    return PB_OK;
}

static const char *compiler_name(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown compiler";
#endif
}

void pb__context_init(struct pb_context *ctx, int argc, char **argv)
{
    memset(ctx, 0, sizeof *ctx);
    snprintf(ctx->version, sizeof ctx->version, "%s", pb_version());
    snprintf(ctx->commit, sizeof ctx->commit, "%s", pb_git_commit());
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ctx->date, sizeof ctx->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(ctx->host, sizeof ctx->host) != 0)
        snprintf(ctx->host, sizeof ctx->host, "unknown");
    ctx->host[sizeof ctx->host - 1] = '\0';
    pb__cpu_model(ctx->cpu, sizeof ctx->cpu);
    snprintf(ctx->compiler, sizeof ctx->compiler, "%s", compiler_name());
    const pb_comm *comm = pb__comm_world();
    ctx->ranks = pb__comm_size(comm);
    ctx->nodes = pb__comm_nodes(comm);
    snprintf(ctx->hosts, sizeof ctx->hosts, "%.255s", pb__comm_hosts(comm));
    snprintf(ctx->mpi, sizeof ctx->mpi, "%.63s", pb__comm_library(comm));
    size_t used = 0;
    for (int i = 0; i < argc && used + 1 < sizeof ctx->command; i++)
        used += (size_t)snprintf(ctx->command + used, sizeof ctx->command - used, "%s%s",
                                 i ? " " : "", argv[i]);
}

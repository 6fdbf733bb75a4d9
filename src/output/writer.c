/* Writer dispatch, format selection, run context and status names. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/core.h"
#include "core/cpuinfo.h"
#include "output/writer_impl.h"
#ifdef PB_HAVE_OPENBLAS
#include "anchors/anchors.h"
#endif

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
    if (strcasecmp(dot, ".csv") == 0)
        return "csv";
    if (strcasecmp(dot, ".json") == 0)
        return "json";
    if (strcasecmp(dot, ".txt") == 0)
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

/* A second parbench on the same output is refused rather than interleaved:
 * an exclusive lock, taken before anything is truncated. */
static pb_status lock_fd(int fd, const char *path)
{
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
        return PB_OK; /* a file system without locks is not an error */
    return pb__fail(PB_ERR_IO, "%s is being written by another parbench run (it holds the lock)", path);
}

static void release_lock(struct pb_writer *w)
{
    if (w->lock_fd >= 0) {
        unlink(w->lock_path); /* before closing: no second run can take the old file's lock */
        close(w->lock_fd);
    }
    free(w->lock_path);
    w->lock_fd = -1;
    w->lock_path = NULL;
}

/* The file a symbolic link leads to (malloc'ed; NULL if path is no link or on
 * error): JSON's temporary is renamed over it, not over the link. A dangling
 * link gives its target, created by the write. */
static char *link_target(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode))
        return NULL;
    char *real = realpath(path, NULL);
    if (real || errno != ENOENT)
        return real;
    char target[4096];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return NULL;
    target[n] = '\0';
    const char *slash = strrchr(path, '/');
    int dir_len = target[0] == '/' || !slash ? 0 : (int)(slash - path + 1);
    size_t len = (size_t)dir_len + (size_t)n + 1;
    char *joined = malloc(len);
    if (joined)
        snprintf(joined, len, "%.*s%s", dir_len, path, target);
    return joined;
}

/* Opens path for w: locked, truncated only once the lock is held (unless
 * appending). JSON, rewritten whole after every row as PATH.tmp renamed over
 * PATH (over a link's target, not the link), is locked through PATH.lock and
 * never truncated; a path that is not a regular file (a device, a pipe) is
 * written in place and never replaced. */
static pb_status open_output(struct pb_writer *w, const char *path)
{
    struct stat sb;
    w->stream = stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
    bool json = w->ops == &pb__writer_json;
    char *target = json && !w->stream ? link_target(path) : NULL;
    w->path = target ? target : strdup(path);
    if (!w->path)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    path = w->path;
    pb_status st = PB_OK;
    if (json && !w->stream) {
        size_t len = strlen(path) + 6;
        if (!(w->lock_path = malloc(len)))
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        snprintf(w->lock_path, len, "%s.lock", path);
        w->lock_fd = open(w->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (w->lock_fd < 0)
            return pb__fail(PB_ERR_IO, "cannot write %s: %s", w->lock_path, strerror(errno));
        if ((st = lock_fd(w->lock_fd, path)) != PB_OK) {
            close(w->lock_fd); /* another run's lock file: not ours to remove */
            w->lock_fd = -1;
            return st;
        }
    }
    int flags = (w->append ? O_RDWR | O_APPEND : O_WRONLY) | O_CREAT | O_CLOEXEC;
    int fd = open(path, flags, 0666);
    if (fd < 0)
        return pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    if (!json && !w->stream && (st = lock_fd(fd, path)) != PB_OK) {
        close(fd);
        return st;
    }
    /* JSON is replaced whole by its first complete document: never emptied first */
    if (!w->append && !w->stream && !json && ftruncate(fd, 0) != 0) {
        st = pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        return st;
    }
    w->f = fdopen(fd, w->append ? "a+" : "w");
    if (!w->f) {
        st = pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        close(fd);
    }
    return st;
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
    w->lock_fd = -1;
    pb_status st = path ? open_output(w, path) : PB_OK;
    if (st != PB_OK) {
        release_lock(w);
        free(w->path);
        free(w);
        return st;
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
    release_lock(w);
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
#ifdef PB_HAVE_OPENBLAS
    const char *picked = getenv("PB_OPENBLAS_PICKED"); /* set where parbench replaced OpenBLAS's pick */
    snprintf(ctx->blas, sizeof ctx->blas, "OpenBLAS %.20s%s%.20s%s", pb__openblas_core_name(),
             picked ? " (not its own pick, " : "", picked ? picked : "", picked ? ")" : "");
#endif
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

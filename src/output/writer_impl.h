/* Private writer interface: one ops table per format. */
#ifndef PARBENCH_WRITER_IMPL_H
#define PARBENCH_WRITER_IMPL_H

#include "output/result.h"

struct pb_writer;

struct pb_writer_ops {
    const char *format;
    pb_status (*begin)(struct pb_writer *w);
    pb_status (*row)(struct pb_writer *w, const struct pb_result *r);
    pb_status (*end)(struct pb_writer *w);
    void (*free)(struct pb_writer *w); /* format state only */
};

struct pb_writer {
    const struct pb_writer_ops *ops;
    FILE *f;    /* stdout or the opened file */
    char *path; /* NULL for stdout */
    bool append;
    /* path is not a regular file (a device, a pipe): written in place, once
     * for JSON, never replaced by a new file */
    bool stream;
    int lock_fd;     /* JSON's PATH.lock, held while writing; -1 = none */
    char *lock_path;
    const struct pb_context *ctx;
    const struct pb_bench *bench;
    void *state;
};

extern const struct pb_writer_ops pb__writer_table, pb__writer_csv, pb__writer_json;

/* fflush + ferror check, naming the file on failure. */
pb_status pb__writer_flush(struct pb_writer *w);

#endif

/* Matrix Market internals shared with matinfo, the tests and the fuzzer. */
#ifndef PARBENCH_IO_MMIO_H
#define PARBENCH_IO_MMIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parbench/pb_matrix.h"

/* pb_coo_read on bytes in memory (plain or gzip); `name` stands for the file
 * in messages. chunk: at most this many bytes are read (or inflated) at a
 * time, 0 = the default (1 MiB); small values exercise the block boundaries. */
pb_status pb__coo_parse_buffer(const void *data, size_t len, const char *name,
                               const struct pb_mm_options *opt, size_t chunk, struct pb_coo *out);

/* pb_coo_read with a chosen chunk size (see above). */
pb_status pb__coo_read_chunked(const char *path, const struct pb_mm_options *opt, size_t chunk,
                               struct pb_coo *out);

/* Every reader of a file taking its own rows (spmv-dist --reader each):
 * pb__coo_row_lengths parses and checks the whole file and keeps only the
 * number of entries of each row (*lengths: malloc'd, *rows entries; mirrors
 * of a symmetric file counted, duplicates counted apart: for balancing).
 * pb__coo_read_rows is pb_coo_read keeping rows [first, first + count)
 * (0-based) alone: out->rows hold indices of the whole matrix, n_rows is its
 * row count, every line of the file is still checked. sharers: processes of
 * this host counting the same file at once; PB_ERR_NOMEM, before anything is
 * allocated, where they cannot all hold the lengths, offsets and x. */
pb_status pb__coo_row_lengths(const char *path, const struct pb_mm_options *opt, unsigned sharers, int32_t *rows,
                              int32_t *cols, int64_t **lengths);
pb_status pb__coo_read_rows(const char *path, const struct pb_mm_options *opt, int32_t first, int32_t count,
                            struct pb_coo *out);
/* pb_coo_write to an open stream (not closed); `name` is used in messages. */
pb_status pb__coo_write_stream(FILE *f, const char *name, const struct pb_coo *m);

/* The decimal number in [s, end): [+-](digits[.digits]|.digits)[(e|E)[+-]digits].
 * Exactly what strtod gives for it, without strtod in the common case (at
 * most 19 significant digits, |exponent| small). False when the text is not
 * such a number or its magnitude overflows a double. */
bool pb__mm_parse_double(const char *s, const char *end, double *out);

/* ---- matinfo: structure statistics of a matrix ------------------------- */

struct pb_matinfo {
    char name[128];                 /* file stem: "af23560" for af23560.mtx.gz */
    int32_t rows, cols;
    size_t nnz;                     /* after expansion */
    size_t file_entries;            /* listed in the file */
    enum pb_mm_field field;
    enum pb_mm_symmetry symmetry;   /* as declared */
    double avg_row, row_stddev;     /* non-zeros per row (population std) */
    size_t max_row;
    double ell_fill;                /* rows * max_row / nnz; NAN when nnz = 0 */
    int64_t bandwidth;              /* max |i - j|; 0 when empty */
    /* Bytes with int32 indices and double values. */
    double bytes_coo;               /* nnz * (4 + 4 + 8) */
    double bytes_csr;               /* nnz * (4 + 8) + (rows + 1) * 4 */
    double bytes_ell;               /* rows * max_row * (4 + 8) */
};

/* The stem of path (directories and .gz, .mtx, .mm extensions removed) into buf. */
void pb__matinfo_name(const char *path, char *buf, size_t len);
void pb__matinfo_compute(const char *path, const struct pb_coo *m, struct pb_matinfo *out);

/* Rows of matinfo as a table, CSV or JSON (format "table", "csv", "json"),
 * to path or to standard output (path NULL). Table and CSV rows are written
 * and flushed as they come; JSON is written whole when the writer closes. */
struct pb_matinfo_writer;
pb_status pb__matinfo_writer_open(const char *format, const char *path,
                                  struct pb_matinfo_writer **out);
pb_status pb__matinfo_writer_row(struct pb_matinfo_writer *w, const struct pb_matinfo *info);
/* Finishes and frees; accepts NULL. */
pb_status pb__matinfo_writer_close(struct pb_matinfo_writer *w);

#endif

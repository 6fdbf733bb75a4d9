/* parbench: sparse matrices on the host, and Matrix Market files.
 *
 * COO (coordinate) storage is what a Matrix Market file becomes on load: it is
 * always general (a symmetric file is expanded to both triangles), 0-based,
 * sorted row-major by (row, column) with no two entries at the same position,
 * so that CSR is its row counts plus its cols/values arrays as they are.
 * Indices are int32: matrices with more than INT32_MAX rows or columns are
 * refused. */
#ifndef PARBENCH_PB_MATRIX_H
#define PARBENCH_PB_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parbench/pb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The field and symmetry a Matrix Market banner declares. */
enum pb_mm_field { PB_MM_REAL = 0, PB_MM_INTEGER, PB_MM_PATTERN, PB_MM_COMPLEX };
enum pb_mm_symmetry { PB_MM_GENERAL = 0, PB_MM_SYMMETRIC, PB_MM_SKEW_SYMMETRIC, PB_MM_HERMITIAN };

/* "real", "integer", "pattern", "complex" / "general", "symmetric",
 * "skew-symmetric", "hermitian" (the banner's keywords). */
const char *pb_mm_field_name(enum pb_mm_field f);
const char *pb_mm_symmetry_name(enum pb_mm_symmetry s);

/* ---- COO ---------------------------------------------------------------- */

struct pb_coo {
    int32_t n_rows, n_cols;
    size_t nnz;      /* entries stored below, after expansion and merging */
    int32_t *rows;   /* [nnz] 0-based, non-decreasing */
    int32_t *cols;   /* [nnz] 0-based, increasing within a row */
    double *values;  /* [nnz] */

    /* Where it came from (set by pb_coo_read; zero otherwise). */
    bool symmetric_origin;  /* declared symmetric, skew-symmetric or hermitian:
                               one triangle was stored and mirrored on load */
    bool pattern_origin;    /* declared pattern: every value is 1 */
    enum pb_mm_field field; /* as declared */
    enum pb_mm_symmetry symmetry;
    size_t file_entries;    /* entries the file lists (the size line's count;
                               the number of values of an array file) */
    size_t duplicates;      /* entries merged into another at the same position */
};

struct pb_mm_options {
    /* Load a complex matrix by the real part of each entry (a hermitian one
     * then becomes symmetric). Otherwise complex files are refused. */
    bool complex_real_part;
};

/* Reads a Matrix Market file (gzip-compressed or not: the content decides,
 * not the name) into *out, which is overwritten; opt may be NULL (defaults).
 *
 * Formats: coordinate and array (array files keep every value, zeros
 * included, in the order of a coordinate file). Fields real, integer, pattern
 * (value 1) and complex (see pb_mm_options). Symmetric, skew-symmetric
 * (mirror negated) and hermitian (real part: like symmetric) files are
 * expanded; the diagonal is not duplicated. A symmetric coordinate file may
 * store either triangle, not both. Entries at the same position are summed
 * (pattern: kept once with value 1). Comments and blank lines anywhere after
 * the banner, CRLF line ends and trailing blanks are accepted; numbers are
 * decimal (no inf, nan or hex).
 *
 * Errors, with pb_last_error() set: PB_ERR_PARSE for any malformed or
 * unsupported content ("FILE:LINE: what is wrong"; this includes sizes beyond
 * the int32 index limit and complex files without complex_real_part),
 * PB_ERR_IO (cannot open or read), PB_ERR_NOMEM. On error *out is left
 * zeroed. */
pb_status pb_coo_read(const char *path, const struct pb_mm_options *opt, struct pb_coo *out);

/* Writes m as "coordinate real general" with 1-based indices and values in
 * %.17g (they read back bit for bit); gzip-compressed when path ends in
 * ".gz". PB_ERR_INVALID for an index outside the matrix, PB_ERR_IO. */
pb_status pb_coo_write(const char *path, const struct pb_coo *m);

/* Frees the arrays and zeroes *m. Accepts NULL and a zeroed struct. */
void pb_coo_free(struct pb_coo *m);

#ifdef __cplusplus
}
#endif
#endif

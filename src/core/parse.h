/* Parsing of command-line values: integers with binary suffixes, and lists
 * and ranges of them. */
#ifndef PARBENCH_PARSE_H
#define PARBENCH_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "parbench/pb.h"

#define PB_MAX_LIST 4096 /* elements a list or range may expand to */

/* One integer: decimal, optional suffix k/K, m/M, g/G, t/T (powers of 1024, with or
 * without "i"/"iB"/"B"). Negative numbers are allowed here; callers check
 * ranges. PB_ERR_PARSE / PB_ERR_OVERFLOW with a message naming `what`. */
pb_status pb__parse_int(const char *s, const char *what, int64_t *out);

/* A comma-separated list of items, each an integer or a range:
 *   A:B      A, 2A, 4A, ... up to B      (doubling)
 *   A:B:xF   A, A*F, A*F^2, ... up to B  (geometric, F >= 2)
 *   A:B:S    A, A+S, A+2S, ... up to B   (linear, S >= 1; also written +S)
 * Values are kept in order; *out is malloc'ed (free() it). */
pb_status pb__parse_int_list(const char *s, const char *what, int64_t **out, size_t *n);

/* Split a comma-separated list of names into a malloc'ed array of pointers
 * into a malloc'ed copy: free(*out) frees both. Empty items are an error. */
pb_status pb__parse_name_list(const char *s, const char *what, char ***out, size_t *n);

#endif

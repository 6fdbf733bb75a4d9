/* Shared helpers for the cmocka unit tests: the cmocka include prologue, a
 * tolerance assertion for doubles, temporary files, and a small RFC 4180
 * reader for the CSV the writers produce. */
#ifndef PARBENCH_TEST_UTIL_H
#define PARBENCH_TEST_UTIL_H

/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* |actual - expected| <= tol, naming both values when it fails (cmocka's
 * assert_float_equal works in float precision). */
#define assert_near(actual, expected, tol) \
    pb_test_assert_near((actual), (expected), (tol), #actual, __FILE__, __LINE__)

static inline void pb_test_assert_near(double actual, double expected, double tol,
                                       const char *expr, const char *file, int line)
{
    if (!(fabs(actual - expected) <= tol)) {
        print_message("%s:%d: %s = %.17g, expected %.17g (tolerance %.3g)\n", file, line, expr,
                      actual, expected, tol);
        fail();
    }
}

/* strstr as an assertion, printing both strings on failure. */
#define assert_contains(haystack, needle) \
    pb_test_assert_contains((haystack), (needle), __FILE__, __LINE__)

static inline void pb_test_assert_contains(const char *haystack, const char *needle,
                                           const char *file, int line)
{
    if (!haystack || !strstr(haystack, needle)) {
        print_message("%s:%d: \"%s\" does not contain \"%s\"\n", file, line,
                      haystack ? haystack : "(null)", needle);
        fail();
    }
}

/* A fresh empty file under $TMPDIR (or /tmp); its path into buf. */
static inline void pb_test_tmpfile(char *buf, size_t len, const char *tag)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(buf, len, "%s/parbench-%s-XXXXXX", dir, tag);
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    close(fd);
}

/* Whole file into a malloc'ed NUL-terminated string (NULL if unreadable). */
static inline char *pb_test_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *bigger = realloc(text, cap * 2);
            if (!bigger) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (text)
        text[len] = '\0';
    return text;
}

/* ---- a small RFC 4180 reader -------------------------------------------- */

#define CSV_MAX_FIELDS 64
#define CSV_MAX_RECORDS 256

struct csv {
    size_t n_records;
    size_t n_fields[CSV_MAX_RECORDS];
    char *field[CSV_MAX_RECORDS][CSV_MAX_FIELDS];
};

/* One field starting at *p (quoted or not) into a malloc'ed string; *p ends
 * on the delimiter that follows (',', '\n' or NUL). */
static inline char *csv_field(const char **p)
{
    const char *s = *p;
    size_t len = strlen(s);
    char *out = malloc(len + 1), *o = out;
    assert_non_null(out);
    if (*s == '"') {
        for (s++; *s; s++) {
            if (*s == '"' && s[1] == '"')
                *o++ = *s++; /* escaped quote */
            else if (*s == '"')
                break;
            else
                *o++ = *s;
        }
        assert_true(*s == '"'); /* unterminated quoted field otherwise */
        s++;
        assert_true(*s == ',' || *s == '\n' || *s == '\0');
    } else {
        for (; *s && *s != ',' && *s != '\n'; s++) {
            assert_true(*s != '"'); /* a quote only inside a quoted field */
            *o++ = *s;
        }
    }
    *o = '\0';
    *p = s;
    return out;
}

/* Parses a whole file's text into a malloc'ed struct csv (csv_free it). */
static inline struct csv *csv_parse(const char *text)
{
    struct csv *csv = calloc(1, sizeof *csv);
    assert_non_null(csv);
    const char *p = text;
    while (*p) {
        assert_true(csv->n_records < CSV_MAX_RECORDS);
        size_t r = csv->n_records++;
        for (;;) {
            assert_true(csv->n_fields[r] < CSV_MAX_FIELDS);
            csv->field[r][csv->n_fields[r]++] = csv_field(&p);
            if (*p != ',')
                break;
            p++;
        }
        assert_true(*p == '\n'); /* every record ends with a newline */
        p++;
    }
    return csv;
}

static inline void csv_free(struct csv *csv)
{
    for (size_t r = 0; r < csv->n_records; r++)
        for (size_t i = 0; i < csv->n_fields[r]; i++)
            free(csv->field[r][i]);
    free(csv);
}

static inline struct csv *csv_read(const char *path)
{
    char *text = pb_test_slurp(path);
    assert_non_null(text);
    struct csv *csv = csv_parse(text);
    free(text);
    return csv;
}

/* Column index of a header name; fails when absent. */
static inline size_t csv_col(const struct csv *csv, const char *name)
{
    for (size_t i = 0; i < csv->n_fields[0]; i++)
        if (strcmp(csv->field[0][i], name) == 0)
            return i;
    print_message("CSV header has no column '%s'\n", name);
    fail();
    return 0;
}

static inline const char *csv_get(const struct csv *csv, size_t record, const char *column)
{
    return csv->field[record][csv_col(csv, column)];
}

#endif

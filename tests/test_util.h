/* Shared helpers for the cmocka unit tests: the cmocka include prologue, a
 * tolerance assertion for doubles, temporary files, a small RFC 4180 reader
 * for the CSV the writers produce, and the skip rule (what did not run is
 * said, and a required part that did not run fails). */
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

#include "parbench/pb_backend.h"

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

/* ---- skips: what did not run is said, what must run does ------------------
 * The rule (tests/CMakeLists.txt registers it with CTest):
 *   - A part of a test that cannot run here (a backend with no device, a data
 *     directory not there, a build without stb_image) is a skip of a *topic*:
 *     a backend's name, "matrices", "corpus", "stb", ... Call pb_test_skip_part
 *     (the case goes on with what it can check) or pb_test_skip (the case stops).
 *   - A topic named in PB_REQUIRE (comma-separated, e.g. PB_REQUIRE=opencl,stb)
 *     must run: its skip fails the running case instead.
 *   - Expected skips are only noted: "cuda" (no NVIDIA GPU on most machines
 *     that build the CUDA code; PB_REQUIRE=cuda on a GPU machine).
 *   - pb_test_run: exit 1 when a case failed, else PB_TEST_SKIPPED (CTest's
 *     SKIP_RETURN_CODE) when any other skip happened, else 0.
 * PB_TEST_ONLY / PB_TEST_EXCEPT (one case name each) run one case alone or
 * all but one, so a case whose data may be missing is its own CTest test. */

#define PB_TEST_SKIPPED 77

struct pb_test_skips {
    int count;
    char topics[256];
};

static inline struct pb_test_skips *pb_test_skips(void)
{
    static struct pb_test_skips s;
    return &s;
}

/* Whether PB_REQUIRE names topic. */
static inline bool pb_test_required(const char *topic)
{
    const char *req = getenv("PB_REQUIRE");
    size_t n = strlen(topic);
    for (const char *p = req; p && *p;) {
        size_t len = strcspn(p, ", ");
        if (len == n && strncmp(p, topic, n) == 0)
            return true;
        p += len;
        p += strspn(p, ", ");
    }
    return false;
}

static inline bool pb_test_skip_expected(const char *topic)
{
    return strcmp(topic, "cuda") == 0 && !pb_test_required(topic);
}

/* Records that topic could not be checked here, and why; fails the running
 * case when PB_REQUIRE names the topic. */
static inline void pb_test_skip_part(const char *topic, const char *why)
{
    if (pb_test_required(topic)) {
        print_message("FAIL: %s is required (PB_REQUIRE) but did not run: %s\n", topic, why);
        fail();
    }
    if (pb_test_skip_expected(topic)) {
        print_message("note: %s not checked here (expected): %s\n", topic, why);
        return;
    }
    print_message("SKIP: %s not checked here: %s\n", topic, why);
    struct pb_test_skips *s = pb_test_skips();
    s->count++;
    char *t = s->topics;
    size_t len = strlen(topic), used = strlen(t);
    const char *at = strstr(t, topic);
    bool listed = at && (at == t || at[-1] == ' ') && (at[len] == '\0' || at[len] == ',');
    if (!listed && used + len + 3 < sizeof s->topics)
        snprintf(t + used, sizeof s->topics - used, "%s%s", used ? ", " : "", topic);
}

/* The same, then the case stops as skipped. */
#define pb_test_skip(topic, why) \
    do {                         \
        pb_test_skip_part((topic), (why)); \
        skip();                  \
    } while (0)

/* Whether backend b can run here; when not, a skip of the backend's name. */
static inline bool pb_test_backend_usable(const pb_backend *b)
{
    const char *why = NULL;
    if (pb_backend_available(b, &why))
        return true;
    char msg[300];
    snprintf(msg, sizeof msg, "backend %s not available: %s", pb_backend_name(b), why ? why : "?");
    pb_test_skip_part(pb_backend_name(b), msg);
    return false;
}

/* After a variant's cases in a cross-backend test: 1 (and says so) when it
 * ran none of them and declined some, unless it is listed below as expected
 * to; else 0. A kernel that never runs is not tested. */
static inline int pb_test_declined_all(const char *bench, const char *backend, const char *variant, size_t ran,
                                       size_t declined)
{
    static const struct {
        const char *bench, *backend, *variant;
    } expected[] = {{NULL, NULL, NULL}}; /* none today */
    if (ran > 0 || declined == 0)
        return 0;
    for (size_t i = 0; expected[i].bench; i++)
        if (strcmp(expected[i].bench, bench) == 0 && strcmp(expected[i].backend, backend) == 0 &&
            strcmp(expected[i].variant, variant) == 0)
            return 0;
    print_message("FAIL %s %s/%s declined all %zu cases: none of its kernels ran\n", bench, backend, variant,
                  declined);
    return 1;
}

/* cmocka_run_group_tests with the exit status of the rule above. */
#define pb_test_run(tests, setup, teardown) \
    pb_test_run_group((tests), PB_ARRAY_LEN(tests), (setup), (teardown))

static inline int pb_test_run_group_inner(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                                          CMFixtureFunction teardown)
{
    const char *only = getenv("PB_TEST_ONLY"), *except = getenv("PB_TEST_EXCEPT");
    for (int i = 0; i < 2; i++) {
        const char *name = i ? except : only;
        if (!name || !*name)
            continue;
        size_t k = 0;
        while (k < n && strcmp(tests[k].name, name) != 0)
            k++;
        if (k == n) {
            fprintf(stderr, "%s=%s names no case here\n", i ? "PB_TEST_EXCEPT" : "PB_TEST_ONLY", name);
            return 1;
        }
        if (i)
            cmocka_set_skip_filter(name);
        else
            cmocka_set_test_filter(name);
    }
    return _cmocka_run_group_tests("tests", tests, n, setup, teardown);
}

static inline int pb_test_run_group(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                                    CMFixtureFunction teardown)
{
    int failed = pb_test_run_group_inner(tests, n, setup, teardown);
    if (failed)
        return 1;
    const struct pb_test_skips *s = pb_test_skips();
    if (s->count) {
        printf("SKIPPED: %d part(s) did not run here (%s); PB_REQUIRE=<topic> makes them required\n", s->count,
               s->topics);
        return PB_TEST_SKIPPED;
    }
    return 0;
}

#endif

/* Matrix Market I/O: every format, field and symmetry on tiny inputs, the
 * formatting the reader tolerates, every malformed input it refuses (status
 * and the line named), gzip, write/read round trips, the decimal parser
 * against strtod, matinfo, and the shared SuiteSparse matrices against a
 * naive fgets+strtod reader.
 *
 * Every text input is parsed in one block and again in blocks of 1, 2, 3, 7
 * and 64 bytes: results and messages must be identical. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <float.h>
#include <sys/stat.h>
#include <zlib.h>

#include "test_util.h"

#include "core/core.h"
#include "io/mmio.h"
#include "parbench/pb_matrix.h"

#define NAME "t.mtx"

struct trip {
    int32_t r, c;
    double v;
};

/* This file's directory (CMake compiles it by absolute path). */
static void source_dir(char *buf, size_t len)
{
    snprintf(buf, len, "%s", __FILE__);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(buf, len, ".");
}

static void assert_same_coo(const struct pb_coo *a, const struct pb_coo *b)
{
    assert_int_equal(a->n_rows, b->n_rows);
    assert_int_equal(a->n_cols, b->n_cols);
    assert_int_equal(a->nnz, b->nnz);
    if (a->nnz) {
        assert_memory_equal(a->rows, b->rows, a->nnz * sizeof *a->rows);
        assert_memory_equal(a->cols, b->cols, a->nnz * sizeof *a->cols);
        assert_memory_equal(a->values, b->values, a->nnz * sizeof *a->values);
    }
}

/* Sorted, unique, in range. */
static void assert_well_formed(const struct pb_coo *m)
{
    for (size_t k = 0; k < m->nnz; k++) {
        assert_true(m->rows[k] >= 0 && m->rows[k] < m->n_rows);
        assert_true(m->cols[k] >= 0 && m->cols[k] < m->n_cols);
        if (k)
            assert_true(m->rows[k - 1] < m->rows[k] ||
                        (m->rows[k - 1] == m->rows[k] && m->cols[k - 1] < m->cols[k]));
    }
}

/* Parses text in one block, then in small blocks: the same status, message
 * and matrix every time. */
static pb_status parse_opt(const char *text, size_t len, const struct pb_mm_options *opt,
                           struct pb_coo *m)
{
    pb__clear_error();
    pb_status st = pb__coo_parse_buffer(text, len, NAME, opt, 0, m);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", pb_last_error());
    static const size_t chunks[] = {1, 2, 3, 7, 64};
    for (size_t i = 0; i < PB_ARRAY_LEN(chunks); i++) {
        struct pb_coo m2;
        pb__clear_error();
        pb_status st2 = pb__coo_parse_buffer(text, len, NAME, opt, chunks[i], &m2);
        if (st2 != st || strcmp(msg, pb_last_error()) != 0)
            print_message("chunk %zu: %s '%s' vs %s '%s'\n", chunks[i], pb_status_name(st2),
                          pb_last_error(), pb_status_name(st), msg);
        assert_int_equal(st2, st);
        assert_string_equal(pb_last_error(), msg);
        if (st == PB_OK)
            assert_same_coo(m, &m2);
        pb_coo_free(&m2);
    }
    pb__fail(st, "%s", msg);
    if (st == PB_OK)
        assert_well_formed(m);
    return st;
}

static pb_status parse(const char *text, struct pb_coo *m)
{
    const struct pb_mm_options opt = {.complex_real_part = true};
    return parse_opt(text, strlen(text), &opt, m);
}

static void assert_entries(const struct pb_coo *m, int32_t rows, int32_t cols,
                           const struct trip *t, size_t n)
{
    assert_int_equal(m->n_rows, rows);
    assert_int_equal(m->n_cols, cols);
    if (m->nnz != n) {
        for (size_t k = 0; k < m->nnz; k++)
            print_message("  (%d, %d) %g\n", m->rows[k], m->cols[k], m->values[k]);
    }
    assert_int_equal(m->nnz, n);
    for (size_t k = 0; k < n; k++) {
        if (m->rows[k] != t[k].r || m->cols[k] != t[k].c || m->values[k] != t[k].v)
            print_message("entry %zu: (%d, %d) %.17g, expected (%d, %d) %.17g\n", k, m->rows[k],
                          m->cols[k], m->values[k], t[k].r, t[k].c, t[k].v);
        assert_int_equal(m->rows[k], t[k].r);
        assert_int_equal(m->cols[k], t[k].c);
        assert_true(m->values[k] == t[k].v);
    }
}

#define EXPECT(text, rows, cols, ...)                                              \
    do {                                                                           \
        static const struct trip want_[] = {__VA_ARGS__};                          \
        struct pb_coo m_;                                                          \
        pb_status st_ = parse(text, &m_);                                          \
        if (st_ != PB_OK)                                                          \
            print_message("%s\n", pb_last_error());                                \
        assert_int_equal(st_, PB_OK);                                              \
        assert_entries(&m_, rows, cols, want_, PB_ARRAY_LEN(want_));               \
        pb_coo_free(&m_);                                                          \
    } while (0)

#define BANNER "%%MatrixMarket matrix "

/* ---- every format x field x symmetry -------------------------------------- */

static void test_coordinate_general(void **state)
{
    (void)state;
    EXPECT(BANNER "coordinate real general\n% c\n3 4 4\n3 4 -1.5\n1 1 2\n2 3 1e-3\n1 4 .25\n", 3,
           4, {0, 0, 2}, {0, 3, 0.25}, {1, 2, 1e-3}, {2, 3, -1.5});
    EXPECT(BANNER "coordinate integer general\n2 2 3\n2 2 -7\n1 2 +3\n2 1 9007199254740993\n", 2,
           2, {0, 1, 3}, {1, 0, 9007199254740992.0}, {1, 1, -7});
    EXPECT(BANNER "coordinate pattern general\n3 2 3\n3 1\n1 2\n2 2\n", 3, 2, {0, 1, 1},
           {1, 1, 1}, {2, 0, 1});
    EXPECT(BANNER "coordinate complex general\n2 2 2\n2 1 1.5 -3\n1 2 -2 4e1\n", 2, 2,
           {0, 1, -2}, {1, 0, 1.5});

    struct pb_coo m;
    assert_int_equal(parse(BANNER "coordinate real general\n3 4 1\n2 3 5\n", &m), PB_OK);
    assert_false(m.symmetric_origin);
    assert_false(m.pattern_origin);
    assert_int_equal(m.field, PB_MM_REAL);
    assert_int_equal(m.symmetry, PB_MM_GENERAL);
    assert_int_equal(m.file_entries, 1);
    pb_coo_free(&m);
    assert_int_equal(parse(BANNER "coordinate pattern general\n3 4 1\n2 3\n", &m), PB_OK);
    assert_true(m.pattern_origin);
    assert_int_equal(m.field, PB_MM_PATTERN);
    pb_coo_free(&m);
}

static void test_coordinate_symmetric(void **state)
{
    (void)state;
    /* 2 off-diagonal + 2 diagonal stored: 2*2 + 2 = 6 entries. */
    EXPECT(BANNER "coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n3 1 2\n3 3 5\n", 3, 3,
           {0, 0, 4}, {0, 1, -1}, {0, 2, 2}, {1, 0, -1}, {2, 0, 2}, {2, 2, 5});
    EXPECT(BANNER "coordinate integer symmetric\n2 2 2\n2 1 3\n2 2 1\n", 2, 2, {0, 1, 3},
           {1, 0, 3}, {1, 1, 1});
    EXPECT(BANNER "coordinate pattern symmetric\n3 3 2\n3 2\n1 1\n", 3, 3, {0, 0, 1}, {1, 2, 1},
           {2, 1, 1});
    EXPECT(BANNER "coordinate complex symmetric\n2 2 1\n2 1 2.5 1\n", 2, 2, {0, 1, 2.5},
           {1, 0, 2.5});
    /* The upper triangle instead of the lower one. */
    EXPECT(BANNER "coordinate real symmetric\n3 3 2\n1 3 7\n2 2 1\n", 3, 3, {0, 2, 7}, {1, 1, 1},
           {2, 0, 7});

    struct pb_coo m;
    assert_int_equal(parse(BANNER "coordinate real symmetric\n3 3 2\n2 1 1\n3 3 1\n", &m), PB_OK);
    assert_true(m.symmetric_origin);
    assert_int_equal(m.symmetry, PB_MM_SYMMETRIC);
    assert_int_equal(m.file_entries, 2);
    assert_int_equal(m.nnz, 3);
    pb_coo_free(&m);
}

static void test_coordinate_skew_hermitian(void **state)
{
    (void)state;
    EXPECT(BANNER "coordinate real skew-symmetric\n3 3 2\n2 1 3\n3 2 -0.5\n", 3, 3, {0, 1, -3},
           {1, 0, 3}, {1, 2, 0.5}, {2, 1, -0.5});
    EXPECT(BANNER "coordinate integer skew-symmetric\n2 2 1\n2 1 4\n", 2, 2, {0, 1, -4},
           {1, 0, 4});
    EXPECT(BANNER "coordinate complex skew-symmetric\n2 2 1\n2 1 4 1\n", 2, 2, {0, 1, -4},
           {1, 0, 4});
    /* An explicit zero on the diagonal of a skew matrix is kept, not mirrored. */
    EXPECT(BANNER "coordinate real skew-symmetric\n2 2 2\n1 1 0\n2 1 1\n", 2, 2, {0, 0, 0},
           {0, 1, -1}, {1, 0, 1});
    /* Hermitian, real part: like symmetric. */
    EXPECT(BANNER "coordinate complex hermitian\n2 2 2\n1 1 5 0\n2 1 1 2\n", 2, 2, {0, 0, 5},
           {0, 1, 1}, {1, 0, 1});
    struct pb_coo m;
    assert_int_equal(parse(BANNER "coordinate complex hermitian\n2 2 1\n2 1 1 2\n", &m), PB_OK);
    assert_true(m.symmetric_origin);
    assert_int_equal(m.symmetry, PB_MM_HERMITIAN);
    assert_int_equal(m.field, PB_MM_COMPLEX);
    pb_coo_free(&m);
}

static void test_array(void **state)
{
    (void)state;
    /* Column-major: 1 3 5 / 2 4 6; zeros are kept. */
    EXPECT(BANNER "array real general\n2 3\n1\n2\n3\n4\n0\n6\n", 2, 3, {0, 0, 1}, {0, 1, 3},
           {0, 2, 0}, {1, 0, 2}, {1, 1, 4}, {1, 2, 6});
    EXPECT(BANNER "array integer general\n1 2\n-3\n4\n", 1, 2, {0, 0, -3}, {0, 1, 4});
    EXPECT(BANNER "array complex general\n2 1\n1 9\n2 9\n", 2, 1, {0, 0, 1}, {1, 0, 2});
    /* Lower triangle with the diagonal, column by column: a11 a21 a31 a22 a32 a33. */
    EXPECT(BANNER "array real symmetric\n3 3\n11\n21\n31\n22\n32\n33\n", 3, 3, {0, 0, 11},
           {0, 1, 21}, {0, 2, 31}, {1, 0, 21}, {1, 1, 22}, {1, 2, 32}, {2, 0, 31}, {2, 1, 32},
           {2, 2, 33});
    /* Skew: without the diagonal: a21 a31 a32. */
    EXPECT(BANNER "array real skew-symmetric\n3 3\n21\n31\n32\n", 3, 3, {0, 1, -21}, {0, 2, -31},
           {1, 0, 21}, {1, 2, -32}, {2, 0, 31}, {2, 1, 32});
    EXPECT(BANNER "array integer symmetric\n2 2\n1\n2\n3\n", 2, 2, {0, 0, 1}, {0, 1, 2},
           {1, 0, 2}, {1, 1, 3});
    EXPECT(BANNER "array complex hermitian\n2 2\n1 0\n2 5\n3 0\n", 2, 2, {0, 0, 1}, {0, 1, 2},
           {1, 0, 2}, {1, 1, 3});
    EXPECT(BANNER "array complex skew-symmetric\n2 2\n2 5\n", 2, 2, {0, 1, -2}, {1, 0, 2});
    /* 1 x 1 skew holds no value; 0 x 0 nothing at all. */
    struct pb_coo m;
    assert_int_equal(parse(BANNER "array real skew-symmetric\n1 1\n", &m), PB_OK);
    assert_int_equal(m.nnz, 0);
    pb_coo_free(&m);
    assert_int_equal(parse(BANNER "array real general\n0 0\n", &m), PB_OK);
    assert_int_equal(m.nnz, 0);
    assert_int_equal(m.n_rows, 0);
    pb_coo_free(&m);
}

static void test_empty_matrices(void **state)
{
    (void)state;
    struct pb_coo m;
    assert_int_equal(parse(BANNER "coordinate real general\n0 0 0\n", &m), PB_OK);
    assert_int_equal(m.nnz, 0);
    pb_coo_free(&m);
    assert_int_equal(parse(BANNER "coordinate real symmetric\n5 5 0\n", &m), PB_OK);
    assert_int_equal(m.nnz, 0);
    assert_int_equal(m.n_rows, 5);
    pb_coo_free(&m);
    pb_coo_free(&m); /* twice: zeroed */
    pb_coo_free(NULL);
}

static void test_duplicates(void **state)
{
    (void)state;
    EXPECT(BANNER "coordinate real general\n2 2 4\n1 1 1\n2 2 5\n1 1 2.5\n1 1 -0.5\n", 2, 2,
           {0, 0, 3}, {1, 1, 5});
    /* In a symmetric file, one triangle: (2,1) twice sums on both sides. */
    EXPECT(BANNER "coordinate real symmetric\n2 2 2\n2 1 1\n2 1 2\n", 2, 2, {0, 1, 3}, {1, 0, 3});
    /* Pattern: kept once, value 1. */
    EXPECT(BANNER "coordinate pattern general\n2 2 3\n1 2\n1 2\n1 2\n", 2, 2, {0, 1, 1});
    struct pb_coo m;
    assert_int_equal(parse(BANNER "coordinate pattern general\n2 2 3\n1 2\n1 2\n2 2\n", &m), PB_OK);
    assert_int_equal(m.duplicates, 1);
    assert_int_equal(m.file_entries, 3);
    assert_int_equal(m.nnz, 2);
    pb_coo_free(&m);
}

static void test_formatting(void **state)
{
    (void)state;
    /* CRLF, blank lines and comments anywhere, trailing and leading blanks,
     * tabs, case-insensitive keywords, no newline at the end. */
    EXPECT("%%matrixmarket MATRIX Coordinate REAL General\r\n"
           "% comment\r\n"
           "\r\n"
           "   \t\r\n"
           "%\r\n"
           "  3\t3   2  \r\n"
           "% between entries\r\n"
           "\r\n"
           "\t1 2\t  7.5 \t\r\n"
           "\n"
           "3 3 -1",
           3, 3, {0, 1, 7.5}, {2, 2, -1});
    EXPECT(BANNER "coordinate real general   \n1 1 1\n1 1 1\n\n\n% trailing comment\n", 1, 1,
           {0, 0, 1});
    /* Numbers: signs, exponents, leading zeros, underflow to zero. */
    EXPECT(BANNER "coordinate real general\n1 7 7\n1 1 -0\n1 2 +1.e2\n1 3 001.500\n1 4 1E-400\n"
                  "1 5 4.9406564584124654e-324\n1 6 1.7976931348623157e308\n1 7 -.5E+1\n",
           1, 7, {0, 0, -0.0}, {0, 1, 100}, {0, 2, 1.5}, {0, 3, 0}, {0, 4, 4.9406564584124654e-324},
           {0, 5, 1.7976931348623157e308}, {0, 6, -5});
    struct pb_coo m;
    assert_int_equal(parse(BANNER "coordinate real general\n1 1 1\n1 1 -0\n", &m), PB_OK);
    assert_true(signbit(m.values[0]));
    pb_coo_free(&m);
    /* Indices at the int32 limit (no entry needed). */
    assert_int_equal(parse(BANNER "coordinate real general\n2147483647 2147483647 0\n", &m), PB_OK);
    assert_int_equal(m.n_rows, INT32_MAX);
    pb_coo_free(&m);
    /* ... and an entry in its last row and column. */
    EXPECT(BANNER "coordinate pattern general\n2147483647 2147483647 2\n2147483647 2147483647\n"
                  "1 2147483647\n",
           INT32_MAX, INT32_MAX, {0, INT32_MAX - 1, 1}, {INT32_MAX - 1, INT32_MAX - 1, 1});
}

/* Long inputs: many entries in reverse order (the sort), a long comment line
 * crossing blocks. */
static void test_sorting_and_blocks(void **state)
{
    (void)state;
    const int n = 3000;
    size_t cap = (size_t)n * 40 + 5000, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text + len, cap - len, "%s", BANNER "coordinate integer symmetric\n%");
    for (int i = 0; i < 3000; i++)
        text[len++] = 'x';
    len += (size_t)snprintf(text + len, cap - len, "\n%d %d %d\n", n, n, 2 * n - 1);
    /* A lower bidiagonal matrix, column-major from the end. */
    for (int j = n; j >= 1; j--) {
        if (j < n)
            len += (size_t)snprintf(text + len, cap - len, "%d %d %d\n", j + 1, j, -j);
        len += (size_t)snprintf(text + len, cap - len, "%d %d %d\n", j, j, j);
    }
    struct pb_coo m;
    assert_int_equal(parse_opt(text, len, NULL, &m), PB_OK);
    assert_int_equal(m.nnz, (size_t)3 * n - 2);
    for (size_t k = 0, i = 0; i < (size_t)n; i++) {
        if (i > 0) {
            assert_int_equal(m.rows[k], i);
            assert_int_equal(m.cols[k], i - 1);
            assert_true(m.values[k++] == -(double)i);
        }
        assert_int_equal(m.cols[k], i);
        assert_true(m.values[k++] == (double)(i + 1));
        if (i + 1 < (size_t)n) {
            assert_int_equal(m.cols[k], i + 1);
            assert_true(m.values[k++] == -(double)(i + 1));
        }
    }
    pb_coo_free(&m);
    free(text);
}

/* ---- malformed input ------------------------------------------------------- */

struct bad {
    const char *text;
    int line; /* 0: the message names no line */
    const char *says;
};

static const struct bad bad_inputs[] = {
    {"", 1, "empty file"},
    {"\n", 1, "banner"},
    {"hello world\n", 1, "expected the banner"},
    {"%MatrixMarket matrix coordinate real general\n1 1 0\n", 1, "banner"},
    {"%%MatrixMarketmatrix coordinate real general\n1 1 0\n", 1, "banner"},
    {"%%MatrixMarket\n1 1 0\n", 1, "no object"},
    {"%%MatrixMarket matrix\n", 1, "no format"},
    {"%%MatrixMarket matrix coordinate\n", 1, "no field"},
    {"%%MatrixMarket matrix coordinate real\n", 1, "no symmetry"},
    {"%%MatrixMarket vector coordinate real general\n", 1, "unsupported object 'vector'"},
    {"%%MatrixMarket matrix coordinat real general\n", 1, "unsupported format 'coordinat'"},
    {"%%MatrixMarket matrix coordinate float general\n", 1, "unsupported field 'float'"},
    {"%%MatrixMarket matrix coordinate real upper\n", 1, "unsupported symmetry 'upper'"},
    {"%%MatrixMarket matrix coordinate real general extra\n", 1, "unexpected 'extra'"},
    {"%%MatrixMarket matrix array pattern general\n1 1\n", 1, "coordinate format"},
    {"%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 1, "must be complex"},
    {"%%MatrixMarket matrix coordinate pattern hermitian\n1 1 0\n", 1, "must be complex"},
    {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n", 1, "skew"},
    /* the size line */
    {BANNER "coordinate real general\n", 1, "end of file before the size line"},
    {BANNER "coordinate real general\n% only comments\n\n", 3, "before the size line"},
    {BANNER "coordinate real general\n3 3\n", 2, "lacks NNZ"},
    {BANNER "array real general\n3\n", 2, "lacks COLS"},
    {BANNER "coordinate real general\n3 -3 1\n", 2, "COLS '-3' is not a non-negative integer"},
    {BANNER "coordinate real general\n3 3.0 1\n", 2, "'3.0'"},
    {BANNER "coordinate real general\nx 3 1\n", 2, "ROWS 'x'"},
    {BANNER "coordinate real general\n3 3 1 4\n", 2, "unexpected '4'"},
    {BANNER "array real general\n3 3 9\n", 2, "unexpected '9'"},
    {BANNER "coordinate real general\n2147483648 3 1\n", 2, "32-bit"},
    {BANNER "coordinate real general\n3 99999999999 1\n", 2, "32-bit"},
    {BANNER "coordinate real general\n3 3 99999999999999999999999\n", 2, "NNZ '9999"},
    {BANNER "coordinate real general\n3 3 99999999999999999999999\n", 2, "is too large"},
    {BANNER "coordinate real general\n3 3 4611686018427387904\n", 2, "too large"},
    {BANNER "array real general\n2147483647 2147483647\n", 2, "too large"},
    {BANNER "coordinate real symmetric\n3 4 1\n", 2, "must be square"},
    {BANNER "array real skew-symmetric\n4 3\n", 2, "must be square"},
    /* entries */
    {BANNER "coordinate real general\n3 3 1\n0 1 1\n", 3, "row index '0' is out of range 1..3"},
    {BANNER "coordinate real general\n3 3 1\n4 1 1\n", 3, "row index '4' is out of range"},
    {BANNER "coordinate real general\n3 3 1\n1 4 1\n", 3, "column index '4' is out of range"},
    {BANNER "coordinate real general\n3 3 1\n99999999999999999999999 1 1\n", 3, "out of range"},
    {BANNER "coordinate real general\n3 3 1\n-1 1 1\n", 3, "row index '-1' is not a positive"},
    {BANNER "coordinate real general\n3 3 1\n1.0 1 1\n", 3, "row index '1.0'"},
    {BANNER "coordinate real general\n3 3 1\n1 x 1\n", 3, "column index 'x'"},
    {BANNER "coordinate real general\n3 3 1\n1\n", 3, "missing column index"},
    {BANNER "coordinate real general\n3 3 1\n1 1\n", 3, "missing value"},
    {BANNER "coordinate real general\n3 3 1\n1 1 abc\n", 3, "value 'abc' is not a finite"},
    {BANNER "coordinate real general\n3 3 1\n1 1 1e999\n", 3, "'1e999' is not a finite"},
    {BANNER "coordinate real general\n3 3 1\n1 1 -1e400\n", 3, "'-1e400'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 nan\n", 3, "'nan'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 inf\n", 3, "'inf'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 0x10\n", 3, "'0x10'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 1.5e\n", 3, "'1.5e'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 1.5e+\n", 3, "'1.5e+'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 .\n", 3, "'.'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 -\n", 3, "'-'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 1..2\n", 3, "'1..2'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 1,5\n", 3, "'1,5'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 1 2\n", 3, "unexpected '2' after the entry"},
    {BANNER "coordinate integer general\n3 3 1\n1 1 1.5\n", 3, "'1.5' is not an integer"},
    {BANNER "coordinate integer general\n3 3 1\n1 1 9223372036854775808\n", 3, "not an integer"},
    {BANNER "coordinate pattern general\n3 3 1\n1 1 1\n", 3, "unexpected '1' after the entry"},
    {BANNER "coordinate complex general\n3 3 1\n1 1 1\n", 3, "missing imaginary part"},
    {BANNER "coordinate complex general\n3 3 1\n1 1 1 i\n", 3, "imaginary part 'i'"},
    {BANNER "coordinate real general\n3 3 1\n1 1 1\x01\n", 3, "'1?'"},
    /* counts */
    {BANNER "coordinate real general\n3 3 2\n1 1 1\n", 3,
     "end of file after 1 of the 2 entries declared on line 2"},
    {BANNER "coordinate real general\n3 3 2\n1 1 1\n\n% end\n", 5, "after 1 of the 2"},
    {BANNER "coordinate real general\n3 3 0\n", 2, NULL},
    {BANNER "coordinate real general\n3 3 1\n1 1 1\n2 2 2\n", 4,
     "more entries than the 1 declared on line 2"},
    {BANNER "array real general\n2 2\n1\n2\n3\n", 5, "after 3 of the 4 values"},
    {BANNER "array real general\n1 1\n1\n2\n", 4, "more values than the 1"},
    {BANNER "array real general\n2 2\n1 2\n3\n4\n", 3, "one entry per line"},
    {BANNER "array real symmetric\n2 2\n1\n2\n", 4, "after 2 of the 3 values"},
    /* symmetry rules */
    {BANNER "coordinate real skew-symmetric\n3 3 1\n2 2 1\n", 3, "zero diagonal"},
    {BANNER "coordinate complex skew-symmetric\n3 3 1\n2 2 0 1\n", 3, "zero diagonal"},
    {BANNER "coordinate complex hermitian\n3 3 1\n2 2 1 1\n", 3, "real diagonal"},
    {BANNER "array complex hermitian\n2 2\n1 0\n2 0\n3 1\n", 5, "real diagonal"},
    {BANNER "coordinate real symmetric\n3 3 3\n2 1 1\n3 3 1\n1 3 1\n", 5,
     "line 5 is above the diagonal and line 3 below"},
    /* duplicates that overflow: no single line to name */
    {BANNER "coordinate real general\n2 2 2\n1 2 1e308\n1 2 1e308\n", 0,
     "duplicate entries at (1, 2)"},
};

static void test_malformed(void **state)
{
    (void)state;
    for (size_t i = 0; i < PB_ARRAY_LEN(bad_inputs); i++) {
        const struct bad *b = &bad_inputs[i];
        struct pb_coo m;
        pb_status st = parse(b->text, &m);
        if (!b->says) { /* a control case that must parse */
            assert_int_equal(st, PB_OK);
            pb_coo_free(&m);
            continue;
        }
        char prefix[64];
        if (b->line)
            snprintf(prefix, sizeof prefix, NAME ":%d: ", b->line);
        else
            snprintf(prefix, sizeof prefix, NAME ": ");
        if (st != PB_ERR_PARSE || strncmp(pb_last_error(), prefix, strlen(prefix)) != 0 ||
            !strstr(pb_last_error(), b->says))
            print_message("case %zu: %s: \"%s\" (want \"%s...%s\")\n", i, pb_status_name(st),
                          pb_last_error(), prefix, b->says);
        assert_int_equal(st, PB_ERR_PARSE);
        assert_int_equal(strncmp(pb_last_error(), prefix, strlen(prefix)), 0);
        assert_contains(pb_last_error(), b->says);
        /* On error the output is zeroed. */
        assert_null(m.rows);
        assert_int_equal(m.nnz, 0);
    }
}

static void test_malformed_binary(void **state)
{
    (void)state;
    /* A NUL byte inside a value. */
    static const char nul[] = BANNER "coordinate real general\n3 3 1\n1 1 1\0 2\n";
    struct pb_coo m;
    const struct pb_mm_options opt = {0};
    assert_int_equal(parse_opt(nul, sizeof nul - 1, &opt, &m), PB_ERR_PARSE);
    assert_contains(pb_last_error(), NAME ":3: value '1?'");
    /* Complex without the option. */
    static const char cx[] = BANNER "coordinate complex general\n1 1 1\n1 1 1 0\n";
    assert_int_equal(parse_opt(cx, sizeof cx - 1, &opt, &m), PB_ERR_PARSE);
    assert_contains(pb_last_error(), NAME ":1: complex matrices are not supported");
    assert_int_equal(parse_opt(cx, sizeof cx - 1, NULL, &m), PB_ERR_PARSE);
    /* A line longer than 1 MiB. */
    size_t len = ((size_t)1 << 20) + 100;
    char *text = malloc(len + 1);
    assert_non_null(text);
    int head = snprintf(text, len, "%s", BANNER "coordinate real general\n%");
    memset(text + head, 'y', len - (size_t)head);
    text[len] = '\0';
    assert_int_equal(pb__coo_parse_buffer(text, len, NAME, NULL, 0, &m), PB_ERR_PARSE);
    assert_contains(pb_last_error(), NAME ":2: line longer than");
    free(text);
}

/* ---- files, gzip, I/O errors -------------------------------------------------- */

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void *gzip_bytes(const char *text, size_t *len)
{
    char path[512];
    pb_test_tmpfile(path, sizeof path, "gz");
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, text, (unsigned)strlen(text)), (int)strlen(text));
    assert_int_equal(gzclose(gz), Z_OK);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    *len = (size_t)sb.st_size;
    char *bytes = pb_test_slurp(path);
    assert_non_null(bytes);
    remove(path);
    return bytes;
}

static const char gz_text[] =
    BANNER "coordinate real symmetric\n% gzip\n3 3 3\n1 1 1\n2 1 2\n3 2 3\n";

static void test_gzip(void **state)
{
    (void)state;
    struct pb_coo plain, m;
    assert_int_equal(parse(gz_text, &plain), PB_OK);
    assert_int_equal(plain.nnz, 5);

    /* A .mtx.gz written with gzopen, and the same bytes under a plain name. */
    char path[512], named[600];
    pb_test_tmpfile(path, sizeof path, "mm");
    snprintf(named, sizeof named, "%s.mtx.gz", path);
    gzFile gz = gzopen(named, "wb");
    assert_non_null(gz);
    assert_true(gzputs(gz, gz_text) > 0);
    assert_int_equal(gzclose(gz), Z_OK);
    assert_int_equal(pb_coo_read(named, NULL, &m), PB_OK);
    assert_same_coo(&plain, &m);
    pb_coo_free(&m);
    assert_int_equal(rename(named, path), 0);
    assert_int_equal(pb_coo_read(path, NULL, &m), PB_OK);
    assert_same_coo(&plain, &m);
    pb_coo_free(&m);
    for (size_t chunk = 1; chunk < 40; chunk += 13) {
        assert_int_equal(pb__coo_read_chunked(path, NULL, chunk, &m), PB_OK);
        assert_same_coo(&plain, &m);
        pb_coo_free(&m);
    }
    remove(path);

    /* From memory; two concatenated members read as one stream. */
    size_t len;
    char *bytes = gzip_bytes(gz_text, &len);
    assert_int_equal(parse_opt(bytes, len, NULL, &m), PB_OK);
    assert_same_coo(&plain, &m);
    pb_coo_free(&m);
    size_t half = strlen(gz_text) / 2, len1, len2;
    char first[sizeof gz_text];
    memcpy(first, gz_text, half);
    first[half] = '\0';
    char *a = gzip_bytes(first, &len1), *b = gzip_bytes(gz_text + half, &len2);
    char *both = malloc(len1 + len2);
    assert_non_null(both);
    memcpy(both, a, len1);
    memcpy(both + len1, b, len2);
    assert_int_equal(parse_opt(both, len1 + len2, NULL, &m), PB_OK);
    assert_same_coo(&plain, &m);
    pb_coo_free(&m);

    /* Truncated, corrupt, trailing garbage. */
    for (size_t cut = 2; cut < len; cut += 5) {
        assert_int_equal(parse_opt(bytes, cut, NULL, &m), PB_ERR_PARSE);
        assert_contains(pb_last_error(), NAME ":");
    }
    assert_int_equal(parse_opt(bytes, len - 1, NULL, &m), PB_ERR_PARSE);
    assert_contains(pb_last_error(), "gzip data ends early");
    bytes[len / 2] ^= 0x55;
    bytes[len / 2 + 1] ^= 0x55;
    assert_int_equal(parse_opt(bytes, len, NULL, &m), PB_ERR_PARSE);
    bytes[len / 2] ^= 0x55;
    bytes[len / 2 + 1] ^= 0x55;
    memcpy(both, bytes, len);
    memcpy(both + len, "junk", 4);
    assert_int_equal(parse_opt(both, len + 4, NULL, &m), PB_ERR_PARSE);
    assert_contains(pb_last_error(), "corrupt gzip data");
    /* The magic alone. */
    assert_int_equal(parse_opt("\x1f\x8b", 2, NULL, &m), PB_ERR_PARSE);
    assert_contains(pb_last_error(), "gzip data ends early");
    /* One byte that is not gzip: a bad banner. */
    assert_int_equal(parse_opt("\x1f", 1, NULL, &m), PB_ERR_PARSE);
    assert_contains(pb_last_error(), NAME ":1: expected the banner");
    free(a);
    free(b);
    free(both);
    free(bytes);
    pb_coo_free(&plain);
}

static void test_io_errors(void **state)
{
    (void)state;
    struct pb_coo m;
    assert_int_equal(pb_coo_read("/nonexistent/dir/x.mtx", NULL, &m), PB_ERR_IO);
    assert_contains(pb_last_error(), "cannot open /nonexistent/dir/x.mtx");
    assert_null(m.rows);
    char dir[512];
    source_dir(dir, sizeof dir);
    assert_int_equal(pb_coo_read(dir, NULL, &m), PB_ERR_IO);
    assert_contains(pb_last_error(), dir);
    /* The file's name in parse errors. */
    char path[512];
    pb_test_tmpfile(path, sizeof path, "bad");
    static const char text[] = "%%MatrixMarket matrix coordinate real general\n1 1 1\n2 1 1\n";
    write_file(path, text, sizeof text - 1);
    assert_int_equal(pb_coo_read(path, NULL, &m), PB_ERR_PARSE);
    char want[600];
    snprintf(want, sizeof want, "%s:3: row index '2' is out of range 1..1", path);
    assert_string_equal(pb_last_error(), want);
    remove(path);
    /* Writing into a missing directory, or an invalid matrix. */
    int32_t r = 0, c = 5;
    double v = 1;
    struct pb_coo bad = {.n_rows = 2, .n_cols = 2, .nnz = 1, .rows = &r, .cols = &c, .values = &v};
    pb_test_tmpfile(path, sizeof path, "w");
    assert_int_equal(pb_coo_write(path, &bad), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "outside the 2 x 2 matrix");
    c = 1;
    v = NAN;
    assert_int_equal(pb_coo_write(path, &bad), PB_ERR_INVALID);
    assert_contains(pb_last_error(), "not finite");
    v = 1;
    assert_int_equal(pb_coo_write("/nonexistent/dir/x.mtx", &bad), PB_ERR_IO);
    assert_contains(pb_last_error(), "/nonexistent/dir/x.mtx");
    assert_int_equal(pb_coo_write("/nonexistent/dir/x.mtx.gz", &bad), PB_ERR_IO);
    remove(path);
}

/* The hand-written files in tests/data. */
static void test_data_files(void **state)
{
    (void)state;
    char dir[512], path[600];
    source_dir(dir, sizeof dir);
    struct pb_coo m;
    pb_status st;
#define READ(file)                                                   \
    snprintf(path, sizeof path, "%s/data/" file, dir);               \
    if ((st = pb_coo_read(path, NULL, &m)) != PB_OK)                 \
        print_message("%s\n", pb_last_error());                      \
    assert_int_equal(st, PB_OK);                                     \
    assert_well_formed(&m)
    READ("general.mtx");
    static const struct trip g[] = {{0, 0, 1}, {0, 4, -1e-3}, {1, 2, 3.25},
                                    {2, 1, 42}, {3, 0, 0.5}, {3, 4, -2.5}};
    assert_entries(&m, 4, 5, g, PB_ARRAY_LEN(g));
    pb_coo_free(&m);
    READ("symmetric_crlf.mtx");
    static const struct trip s[] = {{0, 0, 4},  {0, 1, -1}, {0, 2, 2},
                                    {1, 0, -1}, {2, 0, 2},  {2, 2, 5}};
    assert_entries(&m, 3, 3, s, PB_ARRAY_LEN(s));
    pb_coo_free(&m);
    READ("pattern_symmetric.mtx");
    assert_int_equal(m.nnz, 10);
    assert_true(m.pattern_origin && m.symmetric_origin);
    pb_coo_free(&m);
    READ("array_general.mtx");
    static const struct trip a[] = {{0, 0, 1}, {0, 1, 3}, {0, 2, 5},
                                    {1, 0, 2}, {1, 1, 4}, {1, 2, 6}};
    assert_entries(&m, 2, 3, a, PB_ARRAY_LEN(a));
    pb_coo_free(&m);
    READ("skew_integer.mtx");
    static const struct trip k[] = {{0, 1, -7}, {1, 0, 7}, {1, 2, 4}, {2, 1, -4}};
    assert_entries(&m, 3, 3, k, PB_ARRAY_LEN(k));
    pb_coo_free(&m);
    snprintf(path, sizeof path, "%s/data/hermitian.mtx", dir);
    assert_int_equal(pb_coo_read(path, NULL, &m), PB_ERR_PARSE);
    assert_contains(pb_last_error(), "hermitian.mtx:1: complex");
    const struct pb_mm_options re = {.complex_real_part = true};
    assert_int_equal(pb_coo_read(path, &re, &m), PB_OK);
    static const struct trip h[] = {{0, 0, 3}, {0, 1, 1.5}, {1, 0, 1.5}};
    assert_entries(&m, 2, 2, h, PB_ARRAY_LEN(h));
    pb_coo_free(&m);
#undef READ
}

/* ---- a share of the rows (every rank reading its own) ---------------------------- */

/* The rows of path read in `parts` contiguous shares are the whole file's
 * entries, in order; the row lengths count at least what each row holds. */
static void check_shares(const char *path, int parts)
{
    struct pb_coo whole;
    assert_int_equal(pb_coo_read(path, NULL, &whole), PB_OK);
    int32_t rows = -1, cols = -1;
    int64_t *lengths;
    assert_int_equal(pb__coo_row_lengths(path, NULL, 1, &rows, &cols, &lengths), PB_OK);
    assert_int_equal(rows, whole.n_rows);
    assert_int_equal(cols, whole.n_cols);
    int64_t total = 0;
    for (int32_t i = 0; i < rows; i++) {
        int64_t have = 0;
        for (size_t k = 0; k < whole.nnz; k++)
            have += whole.rows[k] == i;
        assert_true(lengths[i] >= have);
        total += lengths[i];
    }
    assert_int_equal(total, (int64_t)(whole.nnz + whole.duplicates));
    free(lengths);
    size_t at = 0;
    for (int p = 0; p < parts; p++) {
        int32_t first = (int32_t)((int64_t)rows * p / parts), last = (int32_t)((int64_t)rows * (p + 1) / parts);
        struct pb_coo share;
        assert_int_equal(pb__coo_read_rows(path, NULL, first, last - first, &share), PB_OK);
        assert_int_equal(share.n_rows, rows);
        for (size_t k = 0; k < share.nnz; k++, at++) {
            assert_true(at < whole.nnz);
            assert_true(share.rows[k] >= first && share.rows[k] < last);
            assert_int_equal(share.rows[k], whole.rows[at]);
            assert_int_equal(share.cols[k], whole.cols[at]);
            assert_true(share.values[k] == whole.values[at]);
        }
        pb_coo_free(&share);
    }
    assert_int_equal(at, whole.nnz);
    pb_coo_free(&whole);
}

static void test_read_rows(void **state)
{
    (void)state;
    char dir[512], path[600];
    source_dir(dir, sizeof dir);
    static const char *const files[] = {"general.mtx", "symmetric_crlf.mtx", "pattern_symmetric.mtx",
                                        "array_general.mtx", "skew_integer.mtx"};
    for (size_t f = 0; f < PB_ARRAY_LEN(files); f++) {
        snprintf(path, sizeof path, "%s/data/%s", dir, files[f]);
        for (int parts = 1; parts <= 4; parts++)
            check_shares(path, parts);
    }

    /* Bigger, symmetric, with duplicates, gzip-compressed, listed column-major. */
    char base[512];
    pb_test_tmpfile(base, sizeof base, "shares");
    snprintf(path, sizeof path, "%s.mtx.gz", base);
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    const int n = 300;
    gzprintf(gz, "%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n", n, n, 3 * n - 1);
    for (int j = 1; j <= n; j++) {
        gzprintf(gz, "%d %d %d.5\n", j, j, j);
        if (j < n)
            gzprintf(gz, "%d %d -1\n", (j * 7) % n + 1 > j ? (j * 7) % n + 1 : n, j);
        gzprintf(gz, "%d %d 0.25\n", j, j); /* a duplicate of the diagonal */
    }
    assert_int_equal(gzclose(gz), Z_OK);
    for (int parts = 1; parts <= 7; parts += 3)
        check_shares(path, parts);

    /* A bad line among rows that are not kept still fails the read. */
    FILE *f = fopen(base, "w");
    assert_non_null(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1\n2 2 2\n4 4 x\n");
    assert_int_equal(fclose(f), 0);
    struct pb_coo share;
    assert_int_equal(pb__coo_read_rows(base, NULL, 0, 2, &share), PB_ERR_PARSE);
    assert_contains(pb_last_error(), ":5:");
    int32_t rows, cols;
    int64_t *lengths;
    assert_int_equal(pb__coo_row_lengths(base, NULL, 1, &rows, &cols, &lengths), PB_ERR_PARSE);
    remove(path);
    remove(base);
}

/* ---- write -> read ---------------------------------------------------------------- */

static void round_trip(const struct pb_coo *m, const char *suffix)
{
    char base[512], path[600];
    pb_test_tmpfile(base, sizeof base, "rt");
    snprintf(path, sizeof path, "%s%s", base, suffix);
    assert_int_equal(pb_coo_write(path, m), PB_OK);
    struct pb_coo back;
    pb_status st = pb_coo_read(path, NULL, &back);
    if (st != PB_OK)
        print_message("%s\n", pb_last_error());
    assert_int_equal(st, PB_OK);
    assert_same_coo(m, &back);
    assert_int_equal(back.field, PB_MM_REAL);
    assert_int_equal(back.symmetry, PB_MM_GENERAL);
    pb_coo_free(&back);
    remove(path);
    remove(base);
}

static void test_round_trip(void **state)
{
    (void)state;
    struct pb_coo m;
    assert_int_equal(parse(BANNER "coordinate real skew-symmetric\n4 4 3\n2 1 0.1\n3 1 -1e-300\n"
                                  "4 3 3.141592653589793\n",
                           &m),
                     PB_OK);
    round_trip(&m, ".mtx");
    round_trip(&m, ".mtx.gz");
    pb_coo_free(&m);
    /* Awkward doubles: every bit must come back. */
    enum { N = 2000 };
    int32_t rows[N], cols[N];
    double vals[N];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < N; k++) {
        rows[k] = k / 50;
        cols[k] = k % 50;
        double v;
        do {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            memcpy(&v, &x, sizeof v);
        } while (!isfinite(v));
        vals[k] = v;
    }
    vals[0] = -0.0;
    vals[1] = 4.9406564584124654e-324;
    vals[2] = DBL_MAX;
    struct pb_coo r = {.n_rows = N / 50, .n_cols = 50, .nnz = N, .rows = rows, .cols = cols,
                       .values = vals};
    round_trip(&r, ".mtx");
    /* Empty. */
    struct pb_coo e = {.n_rows = 3, .n_cols = 0};
    round_trip(&e, ".mtx");
}

/* ---- the decimal parser against strtod ---------------------------------------- */

static void check_double(const char *s)
{
    char *end;
    double want = strtod(s, &end), got = -12345;
    bool ok = pb__mm_parse_double(s, s + strlen(s), &got);
    /* Decimal syntax only: no blanks, hex, inf or nan. */
    bool want_ok = *end == '\0' && end != s && isfinite(want) &&
                   strspn(s, "+-.0123456789eE") == strlen(s);
    if (ok != want_ok || (ok && memcmp(&got, &want, sizeof got) != 0))
        print_message("'%s': got %s %.17g, strtod %s %.17g\n", s, ok ? "ok" : "error", got,
                      want_ok ? "ok" : "error", want);
    assert_int_equal(ok, want_ok);
    if (ok)
        assert_memory_equal(&got, &want, sizeof got);
}

static void test_parse_double(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "0", "-0", "+0", "0.0", "1", "-1", "1.", ".5", "-.5", "1e0", "1E+0", "1e-0", "00001",
        "0.1", "0.3", "3.14159265358979323846", "1e22", "1e23", "1e-22", "1e-23",
        "9007199254740992", "9007199254740993", "9007199254740993.0", "18014398509481985",
        "123456789012345678", "1234567890123456789", "12345678901234567890",
        "12345678901234567890123456789", "0.000000000000000000000000000001234",
        "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "2.2250738585072011e-308", "2.2250738585072014e-308", "1.7976931348623157e308",
        "1.7976931348623158e308", "1.7976931348623159e308", "1e308", "1e309", "1e-400",
        "1000000000000000000000000000000", "1e30", "10000000000000000e30", "4.1829208100000e+01",
        "1.0000000000000000e+00", "9.9999999999999999e-01", "12345678.12345678",
        "1234567812345678e-8", "0.1234567812345678", "99999999.99999999", "5e-1", "123.456e-5",
        "", "-", "+", ".", "e5", ".e5", "1e", "1e+", "1e-", "1.2.3", "1e5.5", "--1", "+-1",
        "0x1p3", "inf", "nan", "1 ", " 1", "1,0", "1d5",
    };
    for (size_t i = 0; i < PB_ARRAY_LEN(cases); i++)
        check_double(cases[i]);
    /* Random decimal strings of every shape. */
    uint64_t x = 88172645463325252ull;
    for (int n = 0; n < 200000; n++) {
        char s[64];
        size_t len = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t r = x;
        if (r & 1)
            s[len++] = (r & 2) ? '-' : '+';
        r >>= 2;
        int digits = 1 + (int)(r % 24);
        r /= 24;
        int point = (int)(r % (unsigned)(digits + 2)) - 1;
        r /= (unsigned)(digits + 2);
        uint64_t y = x * 0x2545F4914F6CDD1Dull;
        for (int d = 0; d < digits; d++) {
            if (d == point)
                s[len++] = '.';
            s[len++] = (char)('0' + (y >> 60) % 10);
            y = y * 6364136223846793005ull + 1442695040888963407ull;
        }
        if (r & 1) {
            int e = (int)((r >> 1) % 700) - 350;
            if ((r >> 12) & 1)
                e %= 30;
            len += (size_t)snprintf(s + len, sizeof s - len, "%c%d", (r >> 11) & 1 ? 'e' : 'E', e);
        }
        s[len] = '\0';
        check_double(s);
    }
    /* %.17g of random doubles. */
    for (int n = 0; n < 100000; n++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v;
        memcpy(&v, &x, sizeof v);
        if (!isfinite(v))
            continue;
        char s[64];
        snprintf(s, sizeof s, (n & 1) ? "%.17g" : "%.15e", v);
        check_double(s);
    }
}

/* ---- matinfo ----------------------------------------------------------------------- */

static void test_matinfo(void **state)
{
    (void)state;
    /* Row lengths 2, 0, 3, 1. */
    struct pb_coo m;
    assert_int_equal(parse(BANNER "coordinate real general\n4 5 6\n1 1 1\n1 2 1\n3 1 1\n3 3 1\n"
                                  "3 5 1\n4 4 1\n",
                           &m),
                     PB_OK);
    struct pb_matinfo info;
    pb__matinfo_compute("some/dir/foo.bar.mtx.gz", &m, &info);
    assert_string_equal(info.name, "foo.bar");
    assert_int_equal(info.rows, 4);
    assert_int_equal(info.cols, 5);
    assert_int_equal(info.nnz, 6);
    assert_near(info.avg_row, 1.5, 1e-15);
    assert_int_equal(info.max_row, 3);
    assert_near(info.row_stddev, sqrt(1.25), 1e-15);
    assert_near(info.ell_fill, 2.0, 1e-15);
    assert_int_equal(info.bandwidth, 2); /* (3,1) and (3,5) */
    assert_near(info.bytes_coo, 96, 0);
    assert_near(info.bytes_csr, 6 * 12 + 5 * 4, 0);
    assert_near(info.bytes_ell, 4 * 3 * 12, 0);
    pb_coo_free(&m);

    char name[64];
    pb__matinfo_name("a.mtx", name, sizeof name);
    assert_string_equal(name, "a");
    pb__matinfo_name("/x/y/b.mm", name, sizeof name);
    assert_string_equal(name, "b");
    pb__matinfo_name("c", name, sizeof name);
    assert_string_equal(name, "c");
    pb__matinfo_name(".mtx", name, sizeof name);
    assert_string_equal(name, ".mtx");

    /* Empty: no division by zero, no fill ratio. */
    struct pb_coo e = {.n_rows = 0, .n_cols = 0};
    pb__matinfo_compute("e.mtx", &e, &info);
    assert_near(info.avg_row, 0, 0);
    assert_true(isnan(info.ell_fill));
    assert_near(info.bytes_csr, 4, 0);

    /* CSV and JSON writers, read back. */
    assert_int_equal(parse(BANNER "coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n", &m), PB_OK);
    pb__matinfo_compute("x/we,ird\"name.mtx", &m, &info);
    pb_coo_free(&m);
    char path[512];
    pb_test_tmpfile(path, sizeof path, "mi");
    struct pb_matinfo_writer *w;
    assert_int_equal(pb__matinfo_writer_open("csv", path, &w), PB_OK);
    assert_int_equal(pb__matinfo_writer_row(w, &info), PB_OK);
    assert_int_equal(pb__matinfo_writer_row(w, &info), PB_OK);
    assert_int_equal(pb__matinfo_writer_close(w), PB_OK);
    struct csv *csv = csv_read(path);
    assert_int_equal(csv->n_records, 3);
    assert_string_equal(csv_get(csv, 1, "name"), "we,ird\"name");
    assert_string_equal(csv_get(csv, 1, "nnz"), "3");
    assert_string_equal(csv_get(csv, 1, "file_entries"), "2");
    assert_string_equal(csv_get(csv, 1, "symmetry"), "symmetric");
    assert_string_equal(csv_get(csv, 1, "symmetric"), "1");
    assert_string_equal(csv_get(csv, 1, "field"), "pattern");
    assert_string_equal(csv_get(csv, 1, "max_row"), "1");
    assert_string_equal(csv_get(csv, 1, "bandwidth"), "1");
    assert_string_equal(csv_get(csv, 1, "bytes_coo"), "48");
    assert_string_equal(csv_get(csv, 1, "bytes_ell"), "36");
    csv_free(csv);

    assert_int_equal(pb__matinfo_writer_open("json", path, &w), PB_OK);
    assert_int_equal(pb__matinfo_writer_row(w, &info), PB_OK);
    pb__matinfo_compute("e.mtx", &e, &info);
    assert_int_equal(pb__matinfo_writer_row(w, &info), PB_OK);
    assert_int_equal(pb__matinfo_writer_close(w), PB_OK);
    char *text = pb_test_slurp(path);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    assert_int_equal(cJSON_GetArraySize(doc), 2);
    cJSON *o = cJSON_GetArrayItem(doc, 0);
    assert_string_equal(cJSON_GetObjectItem(o, "name")->valuestring, "we,ird\"name");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(o, "symmetric")));
    assert_near(cJSON_GetObjectItem(o, "nnz")->valuedouble, 3, 0);
    assert_near(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "bytes"), "csr")->valuedouble,
                3 * 12 + 4 * 4, 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(doc, 1), "ell_fill")));
    cJSON_Delete(doc);
    free(text);

    assert_int_equal(pb__matinfo_writer_open("table", path, &w), PB_OK);
    assert_int_equal(pb__matinfo_writer_row(w, &info), PB_OK);
    assert_int_equal(pb__matinfo_writer_close(w), PB_OK);
    text = pb_test_slurp(path);
    assert_contains(text, "bandwidth");
    assert_contains(text, "\ne ");
    free(text);
    assert_int_equal(pb__matinfo_writer_open("xml", path, &w), PB_ERR_INVALID);
    assert_int_equal(pb__matinfo_writer_open("csv", "/nonexistent/dir/x.csv", &w), PB_ERR_IO);
    assert_int_equal(pb__matinfo_writer_close(NULL), PB_OK);
    remove(path);
}

/* ---- the fuzzer's seed corpus never crashes (regression for its findings) ---- */

static void test_corpus(void **state)
{
    (void)state;
    char dir[600];
    source_dir(dir, sizeof dir - 20);
    strcat(dir, "/fuzz/corpus/mmio");
    DIR *d = opendir(dir);
    if (!d) {
        char why[700];
        snprintf(why, sizeof why, "no corpus at %s", dir);
        pb_test_skip("corpus", why);
    }
    struct dirent *ent;
    size_t n = 0;
    const struct pb_mm_options opt = {.complex_real_part = true};
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.')
            continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        struct pb_coo m, m2;
        pb_status st = pb_coo_read(path, &opt, &m);
        pb_status st2 = pb__coo_read_chunked(path, &opt, 5, &m2);
        assert_true(st == PB_OK || st == PB_ERR_PARSE);
        assert_int_equal(st, st2);
        if (st == PB_OK) {
            assert_well_formed(&m);
            assert_same_coo(&m, &m2);
        }
        pb_coo_free(&m);
        pb_coo_free(&m2);
        n++;
    }
    closedir(d);
    assert_true(n > 0);
}

/* ---- the shared SuiteSparse matrices against a naive reader -------------------- */

static int cmp_trip(const void *a, const void *b)
{
    const struct trip *x = a, *y = b;
    if (x->r != y->r)
        return x->r < y->r ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

/* fgets + strtol/strtod, expand, qsort, merge: the obvious reader. Returns
 * the size line's count and the diagonal entries stored. */
static struct trip *naive_read(const char *path, int *rows, int *cols, size_t *n, size_t *header,
                               size_t *diag)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024], field[32] = "", sym[32] = "";
    assert_non_null(fgets(line, sizeof line, f));
    assert_int_equal(sscanf(line, "%%%%MatrixMarket matrix coordinate %31s %31s", field, sym), 2);
    do
        assert_non_null(fgets(line, sizeof line, f));
    while (line[0] == '%');
    long nnz;
    assert_int_equal(sscanf(line, "%d %d %ld", rows, cols, &nnz), 3);
    bool mirror = strcmp(sym, "general") != 0, skew = strcmp(sym, "skew-symmetric") == 0;
    struct trip *t = malloc((size_t)nnz * 2 * sizeof *t);
    assert_non_null(t);
    size_t k = 0;
    *diag = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = line, *e;
        long i = strtol(p, &e, 10), j = strtol(e, &p, 10);
        double v = strcmp(field, "pattern") == 0 ? 1 : strtod(p, &e);
        t[k++] = (struct trip){(int32_t)i - 1, (int32_t)j - 1, v};
        if (i == j)
            ++*diag;
        else if (mirror)
            t[k++] = (struct trip){(int32_t)j - 1, (int32_t)i - 1, skew ? -v : v};
    }
    fclose(f);
    qsort(t, k, sizeof *t, cmp_trip);
    *n = k;
    *header = (size_t)nnz;
    return t;
}

static void test_shared_matrices(void **state)
{
    (void)state;
    char dir[512];
    const char *env = getenv("PB_MATRICES_DIR");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
    } else {
#ifdef PB_MATRICES_DIR
        snprintf(dir, sizeof dir, "%s", PB_MATRICES_DIR);
#else
        source_dir(dir, sizeof dir - 40);
        strcat(dir, "/../../shared/data/matrices");
#endif
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        char why[700];
        snprintf(why, sizeof why, "no shared matrices at %s (set PB_MATRICES_DIR)", dir);
        pb_test_skip("matrices", why);
    }
    static const struct {
        const char *name;
        bool symmetric;
    } files[] = {
        {"af23560.mtx", false},  /* real general, column-major, no comments */
        {"bcsstk13.mtx", true},  /* real symmetric */
        {"bcsstk33.mtx", true},  /* pattern symmetric */
        {"jazz.mtx", true},      /* integer symmetric */
        {"young1c.mtx", false},  /* complex general */
        {"cage4.mtx", false},
    };
    const struct pb_mm_options opt = {.complex_real_part = true};
    for (size_t f = 0; f < PB_ARRAY_LEN(files); f++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s", dir, files[f].name);
        if (stat(path, &sb) != 0) {
            char why[800];
            snprintf(why, sizeof why, "%s is not there", path);
            pb_test_skip_part("matrices", why);
            continue;
        }
        struct pb_coo m;
        pb_status st = pb_coo_read(path, &opt, &m);
        if (st != PB_OK)
            print_message("%s\n", pb_last_error());
        assert_int_equal(st, PB_OK);
        assert_well_formed(&m);
        int rows, cols;
        size_t n, header, diag;
        struct trip *t = naive_read(path, &rows, &cols, &n, &header, &diag);
        /* NZ against the header: general = header, symmetric = 2*offdiag + diag. */
        size_t want = files[f].symmetric ? 2 * (header - diag) + diag : header;
        print_message("%-14s %6d x %-6d header %7zu, diagonal %5zu, NZ %7zu\n", files[f].name,
                      rows, cols, header, diag, m.nnz);
        assert_int_equal(m.nnz, want);
        assert_int_equal(m.file_entries, header);
        assert_int_equal(m.symmetric_origin, files[f].symmetric);
        assert_entries(&m, rows, cols, t, n);
        if (f == 1) /* a symmetric one through write and read */
            round_trip(&m, ".mtx");
        free(t);
        pb_coo_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coordinate_general),
        cmocka_unit_test(test_coordinate_symmetric),
        cmocka_unit_test(test_coordinate_skew_hermitian),
        cmocka_unit_test(test_array),
        cmocka_unit_test(test_empty_matrices),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_formatting),
        cmocka_unit_test(test_sorting_and_blocks),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_malformed_binary),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_io_errors),
        cmocka_unit_test(test_data_files),
        cmocka_unit_test(test_read_rows),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_parse_double),
        cmocka_unit_test(test_matinfo),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_shared_matrices),
    };
    return pb_test_run(tests, NULL, NULL);
}

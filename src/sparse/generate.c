/* Generated sparse matrices (see sparse.h), built directly in sorted COO. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/parse.h"
#include "core/rng.h"
#include "sparse/sparse.h"

enum kind { LAP2D, LAP3D, RANDOM, POWERLAW };
static const char *const kind_names[] = {"lap2d", "lap3d", "random", "powerlaw"};

static int kind_of(const char *spec)
{
    for (int k = 0; k < 4; k++) {
        size_t len = strlen(kind_names[k]);
        if (strncmp(spec, kind_names[k], len) == 0 && (spec[len] == ':' || spec[len] == '\0'))
            return k;
    }
    return -1;
}

bool pb__sparse_is_generated(const char *spec) { return kind_of(spec) >= 0; }

static pb_status coo_alloc(struct pb_coo *m, int64_t rows, size_t cap)
{
    memset(m, 0, sizeof *m);
    m->n_rows = m->n_cols = (int32_t)rows;
    pb_status st = pb__host_alloc(cap * sizeof *m->rows, "generated matrix rows", (void **)&m->rows);
    if (st == PB_OK)
        st = pb__host_alloc(cap * sizeof *m->cols, "generated matrix columns", (void **)&m->cols);
    if (st == PB_OK)
        st = pb__host_alloc(cap * sizeof *m->values, "generated matrix values", (void **)&m->values);
    return st;
}

static void push(struct pb_coo *m, int64_t i, int64_t j, double v)
{
    m->rows[m->nnz] = (int32_t)i;
    m->cols[m->nnz] = (int32_t)j;
    m->values[m->nnz++] = v;
}

/* d-dimensional Laplacian on an n^d grid: neighbours in column order. */
static void laplacian(struct pb_coo *m, int64_t n, int dims)
{
    int64_t stride[3] = {1, n, n * n}, rows = m->n_rows;
    for (int64_t i = 0; i < rows; i++) {
        int64_t coord[3] = {i % n, (i / n) % n, i / (n * n)};
        for (int d = dims - 1; d >= 0; d--)
            if (coord[d] > 0)
                push(m, i, i - stride[d], -1.0);
        push(m, i, i, 2.0 * dims);
        for (int d = 0; d < dims; d++)
            if (coord[d] < n - 1)
                push(m, i, i + stride[d], -1.0);
    }
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Row i gets len[i] random columns, sorted, duplicates dropped. */
static void random_rows(struct pb_coo *m, const int32_t *len, struct pb_rng *rng)
{
    for (int64_t i = 0; i < m->n_rows; i++) {
        int32_t *c = m->cols + m->nnz;
        for (int32_t k = 0; k < len[i]; k++)
            c[k] = (int32_t)(pb__rng_next(rng) % (uint64_t)m->n_cols);
        qsort(c, (size_t)len[i], sizeof *c, cmp_i32);
        int32_t kept = 0;
        for (int32_t k = 0; k < len[i]; k++)
            if (kept == 0 || c[k] != c[kept - 1])
                c[kept++] = c[k];
        for (int32_t k = 0; k < kept; k++) {
            m->rows[m->nnz + (size_t)k] = (int32_t)i;
            m->values[m->nnz + (size_t)k] = pb__rng_uniform(rng);
        }
        m->nnz += (size_t)kept;
    }
}

/* Kind and sizes of spec; rows and an upper bound of the non-zeros (0 when
 * only known once row lengths are drawn). */
struct spec {
    int kind, dims;
    int64_t n, k;
    double rows, nnz_cap;
};

static pb_status parse_spec(const char *spec, struct spec *out)
{
    int kind = kind_of(spec);
    if (kind < 0)
        return pb__fail(PB_ERR_INVALID, "'%s' is not a generated matrix (lap2d:N, lap3d:N, random:ROWS[:K], powerlaw:ROWS[:K])", spec);
    /* "kind:A[:B]" */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec);
    char *a = strchr(buf, ':'), *b = a ? strchr(a + 1, ':') : NULL;
    if (!a)
        return pb__fail(PB_ERR_INVALID, "%s: give a size, e.g. %s:1024", spec, kind_names[kind]);
    *a++ = '\0';
    if (b)
        *b++ = '\0';
    int64_t n, k = 16;
    pb_status st = pb__parse_int(a, spec, &n);
    if (st == PB_OK && b)
        st = pb__parse_int(b, spec, &k);
    if (st != PB_OK)
        return st;
    if (b && kind <= LAP3D)
        return pb__fail(PB_ERR_INVALID, "%s: a Laplacian takes one size", spec);
    int dims = kind == LAP2D ? 2 : kind == LAP3D ? 3 : 1;
    double rows = pow((double)n, dims), nnz_cap = rows * (kind == LAP2D ? 5 : kind == LAP3D ? 7 : (double)k);
    if (n < 1 || k < 1 || rows > INT32_MAX)
        return pb__fail(PB_ERR_INVALID, "%s: sizes must be at least 1 and give at most %d rows", spec, INT32_MAX);
    if (kind == POWERLAW)
        nnz_cap = 0;
    if (nnz_cap > (double)INT32_MAX)
        return pb__fail(PB_ERR_INVALID, "%s: %.0f non-zeros exceed the 32-bit limit", spec, nnz_cap);
    *out = (struct spec){kind, dims, n, k, rows, nnz_cap};
    return PB_OK;
}

pb_status pb__sparse_check(const char *spec)
{
    struct spec sp;
    return parse_spec(spec, &sp);
}

pb_status pb__sparse_generate(const char *spec, uint64_t seed, struct pb_coo *out)
{
    memset(out, 0, sizeof *out);
    struct spec sp;
    pb_status st = parse_spec(spec, &sp);
    if (st != PB_OK)
        return st;
    int kind = sp.kind, dims = sp.dims;
    int64_t n = sp.n, k = sp.k;
    double rows = sp.rows, nnz_cap = sp.nnz_cap;
    int32_t *len = NULL;
    struct pb_rng rng;
    pb__rng_init(&rng, seed, 7);
    if (kind >= RANDOM) {
        if ((st = pb__host_alloc((size_t)rows * sizeof *len, "generated row lengths", (void **)&len)) != PB_OK)
            return st;
        for (int64_t i = 0; i < (int64_t)rows; i++) {
            double l = (double)k;
            if (kind == POWERLAW) /* Pareto, alpha 2: mean 2 * xm, so xm = K / 2 */
                l = ceil(0.5 * (double)k / sqrt(1.0 - (0.5 * pb__rng_uniform(&rng) + 0.5)));
            len[i] = (int32_t)fmin(l, rows);
            if (kind == POWERLAW)
                nnz_cap += len[i];
        }
    }
    if (nnz_cap > (double)INT32_MAX) {
        pb__host_free(len);
        return pb__fail(PB_ERR_INVALID, "%s: %.0f non-zeros exceed the 32-bit limit", spec, nnz_cap);
    }
    if ((st = coo_alloc(out, (int64_t)rows, (size_t)nnz_cap)) != PB_OK) {
        pb__host_free(len);
        pb_coo_free(out);
        return st;
    }
    if (kind <= LAP3D)
        laplacian(out, n, dims);
    else
        random_rows(out, len, &rng);
    pb__host_free(len);
    out->field = PB_MM_REAL;
    out->symmetry = kind <= LAP3D ? PB_MM_SYMMETRIC : PB_MM_GENERAL;
    out->file_entries = out->nnz;
    return PB_OK;
}

pb_status pb__sparse_spec_check(const char *spec, const char *who)
{
    if (pb__sparse_is_generated(spec))
        return pb__sparse_check(spec);
    if (access(spec, R_OK) != 0)
        return pb__fail(PB_ERR_IO, "%s: cannot read matrix file '%s'", who, spec);
    return PB_OK;
}

pb_status pb__sparse_load(const char *spec, uint64_t seed, bool complex_real, struct pb_coo *out)
{
    struct pb_mm_options opt = {.complex_real_part = complex_real};
    return pb__sparse_is_generated(spec) ? pb__sparse_generate(spec, seed, out) : pb_coo_read(spec, &opt, out);
}

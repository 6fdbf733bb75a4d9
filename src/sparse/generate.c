/* Generated sparse matrices (see sparse.h), built directly in sorted COO.
 *
 * Every kind is one row of a table: its name, its fields (the numbers after
 * the colons, with defaults and ranges), its shape, and how it fills the
 * rows. The zoo (pb__sparse_zoo) is a list of specs over these kinds that
 * covers the classes of matrices SpMV kernels trip on. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "core/parse.h"
#include "core/rng.h"
#include "sparse/sparse.h"

#define MAX_FIELDS 4

struct gen {
    double f[MAX_FIELDS]; /* the fields, defaults filled in */
    int64_t rows, cols;
    struct pb_rng rng;
    int32_t *len; /* row lengths (kinds with random lengths), else scratch */
};

struct field {
    const char *name;
    double def; /* NAN = required */
    double min, max;
    bool real; /* else an integer with k/M/G suffixes */
};

struct kind {
    const char *name, *usage;
    struct field field[MAX_FIELDS];
    void (*shape)(struct gen *g); /* rows and cols from the fields */
    /* The non-zeros before any are drawn: exact, or the mean for random
     * lengths, which lengths() then draws (returning their sum). */
    double (*estimate)(const struct gen *g);
    double (*lengths)(struct gen *g); /* NULL: no random lengths */
    void (*fill)(struct gen *g, struct pb_coo *m);
    /* int32 scratch in g->len besides the lengths: per row, and fixed. */
    unsigned scratch_per_row, scratch_fixed;
};

static double uniform01(struct pb_rng *r) { return (double)(pb__rng_next(r) >> 11) * 0x1.0p-53; }

static void push(struct pb_coo *m, int64_t i, int64_t j, double v)
{
    m->rows[m->nnz] = (int32_t)i;
    m->cols[m->nnz] = (int32_t)j;
    m->values[m->nnz++] = v;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sorts c[0..n) and drops duplicates; the count kept. */
static int32_t sort_unique(int32_t *c, int32_t n)
{
    qsort(c, (size_t)n, sizeof *c, cmp_i32);
    int32_t kept = 0;
    for (int32_t k = 0; k < n; k++)
        if (kept == 0 || c[k] != c[kept - 1])
            c[kept++] = c[k];
    return kept;
}

/* Row i from the n columns already written at m->cols + m->nnz: sorted,
 * duplicates dropped, random values. */
static void finish_row(struct pb_coo *m, int64_t i, int32_t n, struct pb_rng *rng)
{
    int32_t kept = sort_unique(m->cols + m->nnz, n);
    for (int32_t k = 0; k < kept; k++) {
        m->rows[m->nnz + (size_t)k] = (int32_t)i;
        m->values[m->nnz + (size_t)k] = pb__rng_uniform(rng);
    }
    m->nnz += (size_t)kept;
}

/* Row i gets g->len[i] uniformly random columns. */
static void fill_random_rows(struct gen *g, struct pb_coo *m)
{
    for (int64_t i = 0; i < g->rows; i++) {
        int32_t *c = m->cols + m->nnz;
        for (int32_t k = 0; k < g->len[i]; k++)
            c[k] = (int32_t)(pb__rng_next(&g->rng) % (uint64_t)g->cols);
        finish_row(m, i, g->len[i], &g->rng);
    }
}

static double sum_len(const struct gen *g)
{
    double s = 0;
    for (int64_t i = 0; i < g->rows; i++)
        s += g->len[i];
    return s;
}

static int32_t capped(double len, const struct gen *g) { return (int32_t)fmin(len, (double)g->cols); }

/* ---- Laplacians ---------------------------------------------------------- */

/* Rows [first, end) of the Laplacian on an n^dims grid. */
static void laplacian_rows(struct pb_coo *m, int64_t n, int dims, int64_t first, int64_t end)
{
    int64_t stride[3] = {1, n, n * n};
    for (int64_t i = first; i < end; i++) {
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

static void laplacian(struct pb_coo *m, int64_t n, int dims) { laplacian_rows(m, n, dims, 0, m->n_rows); }

static void shape_lap2d(struct gen *g) { g->rows = g->cols = (int64_t)(g->f[0] * g->f[0]); }
static void shape_lap3d(struct gen *g) { g->rows = g->cols = (int64_t)(g->f[0] * g->f[0] * g->f[0]); }
static double estimate_lap2d(const struct gen *g) { return 5.0 * (double)g->rows; }
static double estimate_lap3d(const struct gen *g) { return 7.0 * (double)g->rows; }
static void fill_lap2d(struct gen *g, struct pb_coo *m) { laplacian(m, (int64_t)g->f[0], 2); }
static void fill_lap3d(struct gen *g, struct pb_coo *m) { laplacian(m, (int64_t)g->f[0], 3); }

/* p[0..n) a random permutation (Fisher-Yates), q its inverse. */
static void shuffle(struct gen *g, int64_t n, int32_t *p, int32_t *q)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = (int32_t)i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(pb__rng_next(&g->rng) % (uint64_t)(i + 1));
        int32_t t = p[i];
        p[i] = p[j], p[j] = t;
    }
    for (int64_t i = 0; i < n; i++)
        q[p[i]] = (int32_t)i;
}

/* The 2D Laplacian with rows and columns renumbered by one random
 * permutation p (entry (i, j) moves to (p[i], p[j])): the same operator, no
 * locality left in x. */
static void fill_plap2d(struct gen *g, struct pb_coo *m)
{
    int64_t n = (int64_t)g->f[0], rows = g->rows, stride[2] = {1, n};
    int32_t *p = g->len, *q = g->len + rows; /* q: row r of the result is Laplacian row q[r] */
    shuffle(g, rows, p, q);
    for (int64_t r = 0; r < rows; r++) {
        int64_t i = q[r], coord[2] = {i % n, i / n};
        int32_t *c = m->cols + m->nnz, cnt = 0;
        for (int d = 0; d < 2; d++) {
            if (coord[d] > 0)
                c[cnt++] = p[i - stride[d]];
            if (coord[d] < n - 1)
                c[cnt++] = p[i + stride[d]];
        }
        c[cnt++] = (int32_t)r; /* the diagonal: p[i] == r */
        qsort(c, (size_t)cnt, sizeof *c, cmp_i32);
        for (int32_t k = 0; k < cnt; k++) {
            m->rows[m->nnz + (size_t)k] = (int32_t)r;
            m->values[m->nnz + (size_t)k] = c[k] == r ? 4.0 : -1.0;
        }
        m->nnz += (size_t)cnt;
    }
}

/* ---- random row lengths -------------------------------------------------- */

static void shape_square(struct gen *g) { g->rows = g->cols = (int64_t)g->f[0]; }
static double estimate_k(const struct gen *g) { return (double)g->rows * fmin(g->f[1], (double)g->cols); }

/* random:ROWS:K -- every row K long. */
static double lengths_random(struct gen *g)
{
    for (int64_t i = 0; i < g->rows; i++)
        g->len[i] = capped(g->f[1], g);
    return sum_len(g);
}

/* powerlaw:ROWS:K -- Pareto, alpha 2: mean 2 * xm, so xm = K / 2. */
static double lengths_powerlaw(struct gen *g)
{
    for (int64_t i = 0; i < g->rows; i++)
        g->len[i] = capped(ceil(0.5 * g->f[1] / sqrt(1.0 - (0.5 * pb__rng_uniform(&g->rng) + 0.5))), g);
    return sum_len(g);
}

/* pareto:ROWS:K:ALPHA:EMPTY -- Pareto lengths with shape ALPHA and mean K
 * (xm = K (alpha - 1) / alpha, before the cap at the columns), a fraction
 * EMPTY of the rows empty. Alpha near 1: a few rows of tens of thousands. */
static double estimate_pareto(const struct gen *g) { return estimate_k(g) * (1 - g->f[3]); }
static double lengths_pareto(struct gen *g)
{
    double k = g->f[1], alpha = g->f[2], empty = g->f[3], xm = k * (alpha - 1) / alpha;
    for (int64_t i = 0; i < g->rows; i++) {
        double u = uniform01(&g->rng), l = ceil(xm / pow(1.0 - uniform01(&g->rng), 1.0 / alpha));
        g->len[i] = u < empty ? 0 : capped(l, g);
    }
    return sum_len(g);
}

/* dense:ROWS:K:D:LEN -- D rows of LEN at random places among rows of K, one
 * row in 20 empty (an optimisation problem's linking rows, a circuit's
 * supply net). */
static double estimate_dense(const struct gen *g) { return estimate_k(g) + g->f[2] * fmin(g->f[3], (double)g->cols); }
static double lengths_dense(struct gen *g)
{
    for (int64_t i = 0; i < g->rows; i++)
        g->len[i] = pb__rng_next(&g->rng) % 20 == 0 ? 0 : capped(g->f[1], g);
    for (int64_t d = 0; d < (int64_t)g->f[2]; d++)
        g->len[pb__rng_next(&g->rng) % (uint64_t)g->rows] = capped(g->f[3], g);
    return sum_len(g);
}

/* gaps:ROWS:K -- rows of K with empty ones where kernels slip: the first
 * ROWS/100 (at least one), the last, and runs of 1 to 256 in between. */
static double lengths_gaps(struct gen *g)
{
    int64_t rows = g->rows, head = rows / 100 > 0 ? rows / 100 : 1;
    for (int64_t i = 0; i < rows; i++)
        g->len[i] = i < head || i == rows - 1 ? 0 : capped(g->f[1], g);
    for (int64_t i = head; i < rows;) {
        i += 1 + (int64_t)(pb__rng_next(&g->rng) % 512);
        for (int64_t run = 1 + (int64_t)(pb__rng_next(&g->rng) % 256); run > 0 && i < rows; run--, i++)
            g->len[i] = 0;
    }
    return sum_len(g);
}

/* rect:ROWS:COLS:K -- K random columns per row of a ROWS x COLS matrix. */
static void shape_rect(struct gen *g) { g->rows = (int64_t)g->f[0], g->cols = (int64_t)g->f[1]; }
static double estimate_rect(const struct gen *g) { return (double)g->rows * fmin(g->f[2], (double)g->cols); }
static double lengths_rect(struct gen *g)
{
    for (int64_t i = 0; i < g->rows; i++)
        g->len[i] = capped(g->f[2], g);
    return sum_len(g);
}

/* ---- structured ---------------------------------------------------------- */

/* blocks:ROWS:B:K -- dense B x B blocks, K per block row: the diagonal one
 * and K - 1 others within 32 block columns of it (a finite-element mesh's
 * couplings, B unknowns per node). Exactly ROWS rows: where B does not divide
 * it, the last block row and column are cut short. */
static void shape_blocks(struct gen *g) { g->rows = g->cols = (int64_t)g->f[0]; }
static double estimate_blocks(const struct gen *g) { return (double)g->rows * g->f[1] * g->f[2]; }
static void fill_blocks(struct gen *g, struct pb_coo *m)
{
    int64_t b = (int64_t)g->f[1], k = (int64_t)g->f[2], nb = (g->rows + b - 1) / b;
    int32_t *bc = g->len; /* the block columns of one block row */
    for (int64_t br = 0; br < nb; br++) {
        int32_t cnt = 0;
        bc[cnt++] = (int32_t)br;
        for (int64_t t = 1; t < k; t++) {
            int64_t c = br + (int64_t)(pb__rng_next(&g->rng) % 65) - 32;
            if (c >= 0 && c < nb)
                bc[cnt++] = (int32_t)c;
        }
        int32_t kept = sort_unique(bc, cnt);
        for (int64_t r = 0; r < b && br * b + r < g->rows; r++)
            for (int32_t t = 0; t < kept; t++)
                for (int64_t c = 0; c < b && bc[t] * b + c < g->cols; c++)
                    push(m, br * b + r, bc[t] * b + c, pb__rng_uniform(&g->rng));
    }
}

/* band:ROWS:W:F -- the 2W + 1 diagonals around the main one, and F far
 * diagonals at offsets ROWS (f + 1) / (F + 1), wrapping (long-range or
 * periodic couplings). */
static double estimate_band(const struct gen *g) { return (double)g->rows * (2 * g->f[1] + 1 + g->f[2]); }
static void fill_band(struct gen *g, struct pb_coo *m)
{
    int64_t rows = g->rows, w = (int64_t)g->f[1], far = (int64_t)g->f[2];
    for (int64_t i = 0; i < rows; i++) {
        int32_t *c = m->cols + m->nnz, cnt = 0;
        for (int64_t j = i - w; j <= i + w; j++)
            if (j >= 0 && j < rows)
                c[cnt++] = (int32_t)j;
        for (int64_t f = 0; f < far; f++)
            c[cnt++] = (int32_t)((i + rows * (f + 1) / (far + 1)) % rows);
        finish_row(m, i, cnt, &g->rng);
    }
}

/* ---- graphs -------------------------------------------------------------- */

/* rmat:SCALE:K -- a Kronecker graph as Graph500 draws it: 2^SCALE vertices,
 * K * 2^SCALE edges, each placed by SCALE quadrant choices with odds a, b,
 * c, d = 0.57, 0.19, 0.19, 0.05, duplicates dropped, vertices renumbered by
 * one random permutation. Row lengths and column popularity are both
 * heavy-tailed (social and web graphs): a few hot columns of x take most of
 * the gathers. The quadrant choices per level are independent, so row i's
 * share of the edges is a product over its bits (c + d for a 1, a + b for
 * a 0), and a row's columns draw their bits given the row's. */
#define RMAT_A 0.57
#define RMAT_B 0.19
#define RMAT_C 0.19
#define RMAT_D 0.05
static void shape_rmat(struct gen *g) { g->rows = g->cols = (int64_t)1 << (int)g->f[0]; }
static double estimate_rmat(const struct gen *g) { return (double)g->rows * g->f[1]; }
static double lengths_rmat(struct gen *g)
{
    int64_t rows = g->rows, scale = (int64_t)g->f[0];
    int32_t *p = g->len + rows, *q = g->len + 2 * rows; /* vertex i is labelled p[i]; q inverts p */
    shuffle(g, rows, p, q);
    double edges = estimate_rmat(g);
    for (int64_t r = 0; r < rows; r++) {
        double share = 1;
        for (int64_t b = 0; b < scale; b++)
            share *= (q[r] >> b) & 1 ? RMAT_C + RMAT_D : RMAT_A + RMAT_B;
        /* the expected count, rounded up with the odds of its fraction */
        g->len[r] = capped(floor(edges * share + uniform01(&g->rng)), g);
    }
    return sum_len(g);
}
static void fill_rmat(struct gen *g, struct pb_coo *m)
{
    int64_t rows = g->rows, scale = (int64_t)g->f[0];
    const int32_t *p = g->len + rows, *q = g->len + 2 * rows;
    const double right_given_top = RMAT_B / (RMAT_A + RMAT_B), right_given_bottom = RMAT_D / (RMAT_C + RMAT_D);
    for (int64_t r = 0; r < rows; r++) {
        int32_t *c = m->cols + m->nnz;
        for (int32_t k = 0; k < g->len[r]; k++) {
            int64_t j = 0;
            for (int64_t b = 0; b < scale; b++)
                if (uniform01(&g->rng) < ((q[r] >> b) & 1 ? right_given_bottom : right_given_top))
                    j |= (int64_t)1 << b;
            c[k] = p[j];
        }
        finish_row(m, r, g->len[r], &g->rng);
    }
}

#define ROWS_FIELD {"ROWS", NAN, 1, INT32_MAX, false}
#define K_FIELD(d) {"K", d, 1, INT32_MAX, false}

static const struct kind kinds[] = {
    {"lap2d", "lap2d:N", {{"N", NAN, 1, 46340, false}}, shape_lap2d, estimate_lap2d, NULL, fill_lap2d, 0, 0},
    {"lap3d", "lap3d:N", {{"N", NAN, 1, 1290, false}}, shape_lap3d, estimate_lap3d, NULL, fill_lap3d, 0, 0},
    {"random", "random:ROWS[:K]", {ROWS_FIELD, K_FIELD(16)}, shape_square, estimate_k, lengths_random,
     fill_random_rows, 0, 0},
    {"powerlaw", "powerlaw:ROWS[:K]", {ROWS_FIELD, K_FIELD(16)}, shape_square, estimate_k, lengths_powerlaw,
     fill_random_rows, 0, 0},
    {"pareto", "pareto:ROWS[:K[:ALPHA[:EMPTY]]]",
     {ROWS_FIELD, K_FIELD(8), {"ALPHA", 1.5, 1.05, 10, true}, {"EMPTY", 0, 0, 0.95, true}}, shape_square,
     estimate_pareto, lengths_pareto, fill_random_rows, 0, 0},
    {"dense", "dense:ROWS[:K[:D[:LEN]]]",
     {ROWS_FIELD, K_FIELD(3), {"D", 8, 0, 1 << 20, false}, {"LEN", 20000, 1, INT32_MAX, false}}, shape_square,
     estimate_dense, lengths_dense, fill_random_rows, 0, 0},
    {"gaps", "gaps:ROWS[:K]", {ROWS_FIELD, K_FIELD(8)}, shape_square, estimate_k, lengths_gaps, fill_random_rows, 0,
     0},
    {"plap2d", "plap2d:N", {{"N", NAN, 1, 32768, false}}, shape_lap2d, estimate_lap2d, NULL, fill_plap2d, 2, 0},
    {"rect", "rect:ROWS:COLS[:K]", {ROWS_FIELD, {"COLS", NAN, 1, INT32_MAX, false}, K_FIELD(16)}, shape_rect,
     estimate_rect, lengths_rect, fill_random_rows, 0, 0},
    {"blocks", "blocks:ROWS[:B[:K]]", {ROWS_FIELD, {"B", 3, 1, 64, false}, {"K", 6, 1, 64, false}}, shape_blocks,
     estimate_blocks, NULL, fill_blocks, 0, 64},
    {"band", "band:ROWS[:W[:F]]", {ROWS_FIELD, {"W", 3, 0, 1024, false}, {"F", 2, 0, 64, false}}, shape_square,
     estimate_band, NULL, fill_band, 0, 0},
    {"rmat", "rmat:SCALE[:K]", {{"SCALE", NAN, 1, 30, false}, K_FIELD(16)}, shape_rmat, estimate_rmat, lengths_rmat,
     fill_rmat, 2, 0},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static const struct kind *kind_of(const char *spec)
{
    for (size_t k = 0; k < N_KINDS; k++) {
        size_t len = strlen(kinds[k].name);
        if (strncmp(spec, kinds[k].name, len) == 0 && (spec[len] == ':' || spec[len] == '\0'))
            return &kinds[k];
    }
    return NULL;
}

bool pb__sparse_is_generated(const char *spec) { return kind_of(spec) != NULL; }

/* Beyond 2^31 - 1 non-zeros CSR needs 64-bit row offsets (spmv takes them);
 * 2^36 is far past any host's memory (16 bytes an entry while generating). */
#define PB_GENERATED_NNZ_MAX 68719476736.0
static pb_status too_many(const char *spec, double nnz)
{
    return pb__fail(PB_ERR_INVALID, "%s: %.0f non-zeros exceed the limit of %.0f", spec, nnz, PB_GENERATED_NNZ_MAX);
}

/* The kind and fields of spec, its shape, and the estimate checked. */
static pb_status parse_spec(const char *spec, const struct kind **kind_out, struct gen *g)
{
    const struct kind *kind = kind_of(spec);
    if (!kind)
        return pb__fail(PB_ERR_INVALID, "'%s' is not a generated matrix (%s)", spec, PB_SPARSE_GENERATORS);
    memset(g, 0, sizeof *g);
    char buf[160];
    if (snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf)
        return pb__fail(PB_ERR_INVALID, "'%.40s...' is too long for a generated matrix", spec);
    char *at = strchr(buf, ':');
    int n = 0;
    while (at) {
        char *item = at + 1;
        if ((at = strchr(item, ':')))
            *at = '\0';
        if (n == MAX_FIELDS || !kind->field[n].name)
            return pb__fail(PB_ERR_INVALID, "%s: too many fields (%s)", spec, kind->usage);
        const struct field *f = &kind->field[n];
        if (f->real) {
            char *end;
            g->f[n] = strtod(item, &end);
            if (end == item || *end)
                return pb__fail(PB_ERR_PARSE, "%s: %s '%s' is not a number", spec, f->name, item);
        } else {
            int64_t v;
            pb_status st = pb__parse_int(item, spec, &v);
            if (st != PB_OK)
                return st;
            g->f[n] = (double)v;
        }
        if (!(g->f[n] >= f->min && g->f[n] <= f->max)) /* integers in full: 2147483647, not 2.14748e+09 */
            return pb__fail(PB_ERR_INVALID, f->real ? "%s: %s must be from %g to %g (%s)"
                                                    : "%s: %s must be from %.0f to %.0f (%s)",
                            spec, f->name, f->min, f->max, kind->usage);
        n++;
    }
    for (; n < MAX_FIELDS && kind->field[n].name; n++) {
        if (isnan(kind->field[n].def))
            return pb__fail(PB_ERR_INVALID, "%s: give %s (%s)", spec, kind->field[n].name, kind->usage);
        g->f[n] = kind->field[n].def;
    }
    kind->shape(g);
    if (g->rows < 1 || g->cols < 1 || g->rows > INT32_MAX || g->cols > INT32_MAX)
        return pb__fail(PB_ERR_INVALID, "%s: sizes must give 1 to %d rows and columns", spec, INT32_MAX);
    double nnz = kind->estimate(g);
    if (nnz > PB_GENERATED_NNZ_MAX)
        return too_many(spec, nnz);
    *kind_out = kind;
    return PB_OK;
}

pb_status pb__sparse_check(const char *spec)
{
    const struct kind *kind;
    struct gen g;
    return parse_spec(spec, &kind, &g);
}

static pb_status coo_alloc(struct pb_coo *m, int64_t rows, int64_t cols, size_t cap)
{
    memset(m, 0, sizeof *m);
    m->n_rows = (int32_t)rows;
    m->n_cols = (int32_t)cols;
    pb_status st = pb__host_alloc(cap * sizeof *m->rows, "generated matrix rows", (void **)&m->rows);
    if (st == PB_OK)
        st = pb__host_alloc(cap * sizeof *m->cols, "generated matrix columns", (void **)&m->cols);
    if (st == PB_OK)
        st = pb__host_alloc(cap * sizeof *m->values, "generated matrix values", (void **)&m->values);
    return st;
}

pb_status pb__sparse_generate(const char *spec, uint64_t seed, struct pb_coo *out)
{
    memset(out, 0, sizeof *out);
    const struct kind *kind;
    struct gen g;
    pb_status st = parse_spec(spec, &kind, &g);
    if (st != PB_OK)
        return st;
    pb__rng_init(&g.rng, seed, 7);
    size_t scratch = (size_t)g.rows * (kind->scratch_per_row + (kind->lengths != NULL)) + kind->scratch_fixed;
    if (scratch && (st = pb__host_alloc(scratch * sizeof *g.len, "generated row lengths", (void **)&g.len)) != PB_OK)
        return st;
    double nnz = kind->lengths ? kind->lengths(&g) : kind->estimate(&g);
    if (nnz > PB_GENERATED_NNZ_MAX)
        st = too_many(spec, nnz);
    if (st == PB_OK) /* rows, columns and values: the allocations below are lazy */
        st = pb__host_mem_need(nnz * (2 * sizeof(int32_t) + sizeof(double)), spec, "for its entries");
    if (st == PB_OK)
        st = coo_alloc(out, g.rows, g.cols, (size_t)nnz);
    if (st == PB_OK)
        kind->fill(&g, out);
    pb__host_free(g.len);
    if (st != PB_OK) {
        pb_coo_free(out);
        return st;
    }
    out->field = PB_MM_REAL;
    out->symmetry = kind->fill == fill_lap2d || kind->fill == fill_lap3d || kind->fill == fill_plap2d
                        ? PB_MM_SYMMETRIC
                        : PB_MM_GENERAL;
    out->file_entries = out->nnz;
    return PB_OK;
}

/* ---- one rank's rows ------------------------------------------------------ */

/* The Laplacians' grid side and dimensions; false for the other kinds. */
static bool laplacian_of(const struct kind *kind, const struct gen *g, int64_t *n, int *dims)
{
    *n = (int64_t)g->f[0];
    *dims = kind->fill == fill_lap2d ? 2 : kind->fill == fill_lap3d ? 3 : 0;
    return *dims != 0;
}

static pb_status parse_rows_alone(const char *spec, const struct kind **kind, struct gen *g, int64_t *n, int *dims)
{
    pb_status st = parse_spec(spec, kind, g);
    if (st == PB_OK && !laplacian_of(*kind, g, n, dims))
        st = pb__fail(PB_ERR_UNSUPPORTED, "%s: only the Laplacians' rows are made alone", spec);
    return st;
}

bool pb__sparse_rows_alone(const char *spec)
{
    const struct kind *kind;
    struct gen g;
    int64_t n;
    int dims;
    return parse_spec(spec, &kind, &g) == PB_OK && laplacian_of(kind, &g, &n, &dims);
}

pb_status pb__sparse_row_lengths(const char *spec, int32_t *rows, int32_t *cols, int64_t **lengths)
{
    const struct kind *kind;
    struct gen g;
    int64_t n;
    int dims;
    *lengths = NULL;
    pb_status st = parse_rows_alone(spec, &kind, &g, &n, &dims);
    int64_t *len = NULL;
    if (st == PB_OK && !(len = malloc((size_t)g.rows * sizeof *len)))
        st = pb__fail(PB_ERR_NOMEM, "%s: out of host memory for the row lengths", spec);
    if (st != PB_OK)
        return st;
    for (int64_t i = 0; i < g.rows; i++) {
        int64_t coord[3] = {i % n, (i / n) % n, i / (n * n)};
        len[i] = 1;
        for (int d = 0; d < dims; d++)
            len[i] += (coord[d] > 0) + (coord[d] < n - 1);
    }
    *rows = (int32_t)g.rows, *cols = (int32_t)g.cols;
    *lengths = len;
    return PB_OK;
}

pb_status pb__sparse_generate_rows(const char *spec, int32_t first, int32_t count, struct pb_coo *out)
{
    memset(out, 0, sizeof *out);
    const struct kind *kind;
    struct gen g;
    int64_t n;
    int dims;
    pb_status st = parse_rows_alone(spec, &kind, &g, &n, &dims);
    if (st == PB_OK && (first < 0 || count < 0 || (int64_t)first + count > g.rows))
        st = pb__fail(PB_ERR_INVALID, "%s: rows %d to %d are not in the matrix", spec, first + 1, first + count);
    if (st == PB_OK)
        st = coo_alloc(out, g.rows, g.cols, (size_t)count * (2 * (size_t)dims + 1) + 1);
    if (st != PB_OK) {
        pb_coo_free(out);
        return st;
    }
    laplacian_rows(out, n, dims, first, (int64_t)first + count);
    out->field = PB_MM_REAL;
    out->symmetry = PB_MM_SYMMETRIC;
    out->file_entries = out->nnz;
    return PB_OK;
}

/* ---- the zoo ------------------------------------------------------------- */

/* The zoo at R rows (about R each; sparse.h lists the classes). */
#define N_ZOO 15
static void zoo_specs(long long r, char (*out)[PB_SPARSE_SPEC_MAX])
{
    long long side2 = llround(sqrt((double)r)), side3 = llround(cbrt((double)r));
    size_t n = 0;
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "pareto:%lld:8:1.3:0.1", r);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "pareto:%lld:16:2.5", r);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "powerlaw:%lld:8", r);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "dense:%lld:3:8:%lld", r, r / 16);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "gaps:%lld:8", r);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "plap2d:%lld", side2);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "rect:%lld:%lld:30", r / 5, 3 * r);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "rect:%lld:%lld:8", 2 * r, r / 8);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "blocks:%lld:3:6", r);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "blocks:%lld:6:4", r);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "band:%lld:4:2", r);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "random:%lld:8", r);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "lap3d:%lld", side3);
    int scale = 0; /* rmat's vertices: the largest power of two up to r */
    while (scale < 30 && (2LL << scale) <= r)
        scale++;
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "rmat:%d:16", scale);
    snprintf(out[n++], PB_SPARSE_SPEC_MAX, "rect:%lld:%lld:1024", r >= 128 ? r / 128 : 1, r);
}

bool pb__sparse_is_zoo(const char *spec) { return strcmp(spec, "zoo") == 0 || strncmp(spec, "zoo:", 4) == 0; }

pb_status pb__sparse_zoo(const char *spec, const char **out, size_t max, size_t *n)
{
    /* The specs live as long as the process: problems point at them. */
    static char store[16][N_ZOO][PB_SPARSE_SPEC_MAX];
    static long long store_rows[16];
    static size_t stored;
    *n = 0;
    int64_t r = PB_SPARSE_ZOO_ROWS;
    if (strncmp(spec, "zoo:", 4) == 0) {
        pb_status st = pb__parse_int(spec + 4, spec, &r);
        if (st != PB_OK)
            return st;
    } else if (strcmp(spec, "zoo") != 0)
        return pb__fail(PB_ERR_INVALID, "'%s' is not the zoo (zoo or zoo:ROWS)", spec);
    if (r < 64 || r > (1 << 26))
        return pb__fail(PB_ERR_INVALID, "%s: ROWS must be from 64 to 64M", spec);
    if (max < N_ZOO)
        return pb__fail(PB_ERR_INVALID, "%s: room for %zu matrices, the zoo has %d", spec, max, N_ZOO);
    size_t at = 0;
    while (at < stored && store_rows[at] != r)
        at++;
    if (at == stored) {
        if (stored == sizeof store / sizeof store[0])
            return pb__fail(PB_ERR_INVALID, "%s: more than %zu zoo sizes in one run", spec, stored);
        zoo_specs(r, store[at]);
        store_rows[stored++] = r;
    }
    for (size_t i = 0; i < N_ZOO; i++)
        out[i] = store[at][i];
    *n = N_ZOO;
    return PB_OK;
}

pb_status pb__sparse_expand(char *const *specs, size_t n, const char **out, size_t max, size_t *n_out)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pb__sparse_is_zoo(specs[i])) {
            if (count == max)
                return pb__fail(PB_ERR_INVALID, "more than %zu matrices", max);
            out[count++] = specs[i];
            continue;
        }
        const char *members[N_ZOO];
        size_t got;
        pb_status st = pb__sparse_zoo(specs[i], members, N_ZOO, &got);
        if (st != PB_OK)
            return st;
        if (count + got > max)
            return pb__fail(PB_ERR_INVALID, "more than %zu matrices", max);
        for (size_t k = 0; k < got; k++)
            out[count++] = members[k];
    }
    *n_out = count;
    return PB_OK;
}

pb_status pb__sparse_spec_check(const char *spec, const char *who)
{
    if (pb__sparse_is_generated(spec))
        return pb__sparse_check(spec);
    struct stat sb;
    if (access(spec, R_OK) != 0) {
        int err = errno;
        /* "lapl2d:64" or "zoo:1M" mistyped reads as a file name: name the
         * generators too. */
        if (err == ENOENT && strchr(spec, ':') && !strchr(spec, '/'))
            return pb__fail(PB_ERR_IO, "%s: '%s' is no file, nor a generated matrix (%s, zoo[:ROWS])", who, spec,
                            PB_SPARSE_GENERATORS);
        return pb__fail(PB_ERR_IO, "%s: cannot read matrix file '%s': %s", who, spec, strerror(err));
    }
    if (stat(spec, &sb) == 0 && S_ISDIR(sb.st_mode))
        return pb__fail(PB_ERR_IO, "%s: cannot read matrix file '%s': %s", who, spec, strerror(EISDIR));
    return PB_OK;
}

pb_status pb__sparse_load(const char *spec, uint64_t seed, bool complex_real, struct pb_coo *out)
{
    struct pb_mm_options opt = {.complex_real_part = complex_real};
    return pb__sparse_is_generated(spec) ? pb__sparse_generate(spec, seed, out) : pb_coo_read(spec, &opt, out);
}

/* gemm-dist: C = A * B over the ranks with SUMMA (van de Geijn & Watts) on a
 * pr x pc process grid (distributed).
 *
 * Grid: pr x pc = the rank count, as square as possible with pr <= pc (a
 * prime count is 1 x p); rank r is row r / pc, column r % pc. Every matrix is
 * cut into contiguous blocks, the first (size mod parts) blocks one longer:
 * rank (i, j) holds rows block i (over pr) of A and C, columns block j (over
 * pc) of B and C, columns block j of A's k and rows block i of B's k. Blocks
 * may be empty (more ranks than rows).
 *
 * SUMMA: k is walked in steps of at most --panel, cut where either owner
 * changes, so each step's A panel (m_loc x w) lies on one grid column and its
 * B panel (w x n_loc) on one grid row. The owners broadcast them along their
 * process row (A) and column (B) and every rank adds A_panel * B_panel to its
 * C block with the backend's own GEMM (beta = 0 on the first step, which
 * writes all of C, 1 after). A's block is stored panel after panel (each
 * panel m_loc x w, row-major) so a panel is contiguous; B's rows are already.
 * Host-memory backends broadcast in place (the owner's panel where it lies,
 * into a panel buffer elsewhere); the others take the device path --path
 * asks for (comm/devcomm.h: NCCL or a CUDA-aware MPI on the device buffers;
 * auto takes the first that runs) or go through pinned host buffers
 * (download, broadcast, upload: staged). Lookahead: step t + 1's panels travel while
 * step t's product runs on its own stream, into the other of two panel
 * buffers; on backends with asynchronous kernels (CUDA, OpenCL) the two
 * overlap, on host backends (kernels run where queued) they alternate.
 *
 * Inputs: element (i, j) of A is pb__rng_at(seed, 1, i * k + j), of B
 * pb__rng_at(seed, 2, i * n + j), rounded to the precision: every rank makes
 * its own blocks and its own oracle rows without anyone holding a whole
 * matrix, and the product is the same whatever the grid (not gemm's inputs:
 * those come from one sequential stream). The oracle is the product of the
 * same rounded inputs accumulated in double, rows of this rank's C block:
 * all of them up to 2^33 multiply-adds per rank, beyond that a seeded sample
 * of 64 (always the first and the last) plus every element checked finite.
 * (A later change replaces the sample with Freivalds' check.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/gemm_host.h"
#include "comm/comm.h"
#include "comm/devcomm.h"
#include "core/core.h"
#include "core/rng.h"
#include "parbench/pb_kernels.h"

enum { P_M, P_N, P_K, P_PANEL, P_PATH };

static const struct pb_param_def gd_params[] = {
    [P_M] = {"m", "rows of A and C (default: n)", NULL},
    [P_N] = {"n", "columns of B and C; with only --n given the product is square", "512"},
    [P_K] = {"k", "columns of A, rows of B (default: n)", NULL},
    [P_PANEL] = {"panel", "SUMMA step: columns of A and rows of B broadcast at a time (0 = k/8 in multiples of 256, "
                          "256 to 2048)", "0"},
    [P_PATH] = {"path", "how panels move between GPUs: " PB_PATH_NAMES " (auto: NCCL, else a CUDA-aware MPI, "
                        "else staged through pinned host memory)", "auto", true},
};


/* ---- the grid and the blocks -------------------------------------------- */

struct grid {
    int pr, pc, row, col;
};

static struct grid grid_for(int ranks, int rank)
{
    struct grid g = {1, ranks, 0, 0};
    for (int d = 1; (long)d * d <= ranks; d++)
        if (ranks % d == 0)
            g.pr = d;
    g.pc = ranks / g.pr;
    g.row = rank / g.pc;
    g.col = rank % g.pc;
    return g;
}

/* First index of block i of n split into parts blocks. */
static size_t block_start(size_t n, int parts, int i)
{
    size_t q = n / (size_t)parts, r = n % (size_t)parts, u = (size_t)i;
    return u * q + (u < r ? u : r);
}

/* The block holding index x < n. */
static int block_of(size_t n, int parts, size_t x)
{
    size_t q = n / (size_t)parts, r = n % (size_t)parts;
    if (x < r * (q + 1))
        return (int)(x / (q + 1));
    return (int)(r + (x - r * (q + 1)) / q); /* q > 0: x < n */
}

/* This rank's part of one problem. */
struct layout {
    struct grid g;
    size_t m, n, k, panel;
    size_t m0, m_loc;   /* rows of A and C */
    size_t n0, n_loc;   /* columns of B and C */
    size_t ka0, ka_loc; /* columns of A */
    size_t kb0, kb_loc; /* rows of B */
    size_t wmax;        /* widest step */
    size_t steps;
};

/* The step starting at p0: its width, the grid column holding A's panel and
 * the grid row holding B's. */
static size_t step_at(const struct layout *L, size_t p0, int *a_col, int *b_row)
{
    *a_col = block_of(L->k, L->g.pc, p0);
    *b_row = block_of(L->k, L->g.pr, p0);
    size_t end = block_start(L->k, L->g.pc, *a_col + 1), b_end = block_start(L->k, L->g.pr, *b_row + 1);
    if (b_end < end)
        end = b_end;
    if (p0 + L->panel < end)
        end = p0 + L->panel;
    return end - p0;
}

static void layout_of(const struct pb_problem *p, int ranks, int rank, struct layout *L)
{
    memset(L, 0, sizeof *L);
    L->g = grid_for(ranks, rank);
    L->m = (size_t)p->v[P_M], L->n = (size_t)p->v[P_N], L->k = (size_t)p->v[P_K];
    L->panel = (size_t)p->v[P_PANEL];
    L->m0 = block_start(L->m, L->g.pr, L->g.row);
    L->m_loc = block_start(L->m, L->g.pr, L->g.row + 1) - L->m0;
    L->n0 = block_start(L->n, L->g.pc, L->g.col);
    L->n_loc = block_start(L->n, L->g.pc, L->g.col + 1) - L->n0;
    L->ka0 = block_start(L->k, L->g.pc, L->g.col);
    L->ka_loc = block_start(L->k, L->g.pc, L->g.col + 1) - L->ka0;
    L->kb0 = block_start(L->k, L->g.pr, L->g.row);
    L->kb_loc = block_start(L->k, L->g.pr, L->g.row + 1) - L->kb0;
    int a_col, b_row;
    for (size_t p0 = 0, w; p0 < L->k; p0 += w, L->steps++) {
        w = step_at(L, p0, &a_col, &b_row);
        if (w > L->wmax)
            L->wmax = w;
    }
}

/* The inputs, rounded to the precision. */
static double rounded(enum pb_precision prec, double x) { return prec == PB_FLOAT ? (double)(float)x : x; }

static double a_at(const struct layout *L, enum pb_precision prec, uint64_t seed, size_t i, size_t j)
{
    return rounded(prec, pb__rng_at(seed, 1, (uint64_t)i * L->k + j));
}

static double b_at(const struct layout *L, enum pb_precision prec, uint64_t seed, size_t i, size_t j)
{
    return rounded(prec, pb__rng_at(seed, 2, (uint64_t)i * L->n + j));
}

static void store(enum pb_precision prec, void *dst, size_t i, double x)
{
    if (prec == PB_FLOAT)
        ((float *)dst)[i] = (float)x;
    else
        ((double *)dst)[i] = x;
}

/* ---- problems ------------------------------------------------------------ */

static bool matrix_bytes(size_t rows, size_t cols, size_t elt, size_t *out)
{
    return pb__mul_size(rows, cols, out) && pb__mul_size(*out, elt, out);
}

/* The default step: wide, because every step's local product reads and
 * writes all of C (on an H200 at n = 16384, 2048 ran 1.4x (float) and 1.85x
 * (double) faster than 256, on 1 GPU and on 2), yet eight steps or more, so
 * the next step's panels still have a product to hide behind. */
static int64_t auto_panel(int64_t k)
{
    int64_t w = k / 8 / 256 * 256;
    return w < 256 ? (k < 256 ? k : 256) : w > 2048 ? 2048 : w;
}

static pb_status gd_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                         size_t max, size_t *n_out)
{
    /* As gemm: m and k follow n unless given, then every combination runs. */
    size_t nm = l->count[P_M] ? l->count[P_M] : 1, nk = l->count[P_K] ? l->count[P_K] : 1, count = 0;
    for (size_t in = 0; in < l->count[P_N]; in++)
        for (size_t im = 0; im < nm; im++)
            for (size_t ik = 0; ik < nk; ik++)
                for (size_t ip = 0; ip < l->count[P_PANEL]; ip++)
                for (size_t ia = 0; ia < l->count[P_PATH]; ia++) {
                    int64_t n = l->values[P_N][in];
                    int64_t m = l->count[P_M] ? l->values[P_M][im] : n;
                    int64_t k = l->count[P_K] ? l->values[P_K][ik] : n;
                    int64_t panel = l->values[P_PANEL][ip];
                    if (panel == 0 && k >= 1)
                        panel = auto_panel(k);
                    if (panel > k) /* a step is at most k wide: the label names the width used */
                        panel = k;
                    if (m < 1 || n < 1 || k < 1 || panel < 1)
                        return pb__fail(PB_ERR_INVALID,
                                        "gemm-dist sizes must be at least 1 and --panel at least 0 (0 = auto; got "
                                        "m=%lld n=%lld k=%lld panel=%lld)", (long long)m, (long long)n, (long long)k,
                                        (long long)l->values[P_PANEL][ip]);
                    size_t bytes, elt = pb_precision_size(prec);
                    if (!matrix_bytes((size_t)m, (size_t)k, elt, &bytes) ||
                        !matrix_bytes((size_t)k, (size_t)n, elt, &bytes) ||
                        !matrix_bytes((size_t)m, (size_t)n, sizeof(double), &bytes))
                        return pb__fail(PB_ERR_OVERFLOW, "gemm-dist %lldx%lldx%lld: matrix size overflows",
                                        (long long)m, (long long)n, (long long)k);
                    enum pb_devcomm_path path;
                    if (!pb__devcomm_path_parse(l->text[P_PATH][ia], &path))
                        return pb__fail(PB_ERR_INVALID, "gemm-dist: --path '%s' is none of " PB_PATH_NAMES,
                                        l->text[P_PATH][ia]);
                    struct pb_problem q = {
                        .prec = prec, .v = {[P_M] = m, [P_N] = n, [P_K] = k, [P_PANEL] = panel, [P_PATH] = path},
                        .s = {[P_PATH] = l->text[P_PATH][ia]}};
                    bool again = false; /* two panels past k, or 0 and the width it stands for */
                    for (size_t i = 0; i < count && !again; i++)
                        again = memcmp(out[i].v, q.v, sizeof q.v) == 0 && strcmp(out[i].s[P_PATH], q.s[P_PATH]) == 0;
                    if (again)
                        continue;
                    if (count >= max)
                        return pb__fail(PB_ERR_INVALID, "gemm-dist: more than %zu problems", max);
                    out[count++] = q;
                }
    *n_out = count;
    return PB_OK;
}

static void gd_describe(const struct pb_problem *p, char *buf, size_t len)
{
    struct grid g = grid_for(pb__comm_size(pb__comm_world()), 0);
    bool auto_path = p->v[P_PATH] == PB_PATH_AUTO;
    snprintf(buf, len, "%lldx%lldx%lld on %dx%d panel %lld%s%s", (long long)p->v[P_M], (long long)p->v[P_N],
             (long long)p->v[P_K], g.pr, g.pc, (long long)p->v[P_PANEL], auto_path ? "" : " via ",
             auto_path ? "" : p->s[P_PATH]);
}

/* The whole problem's work, as gemm counts it. */
static double gd_flops(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)v, (void)host;
    return 2.0 * (double)p->v[P_M] * (double)p->v[P_N] * (double)p->v[P_K];
}

static double gd_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)v, (void)host;
    double m = (double)p->v[P_M], n = (double)p->v[P_N], k = (double)p->v[P_K];
    return (m * k + k * n + m * n) * (double)pb_precision_size(p->prec);
}

/* ---- host memory: the ranks of this node together ------------------------- */

/* Each block alone passes pb__host_alloc's check; all of them on every rank
 * of a node brought the OOM killer (n = 30k in double on 2 ranks holds
 * 10 GiB a rank for the check alone). Weighed before prepare and before
 * bind allocate: the largest rank's part (rank 0's blocks come first, one longer where the
 * sizes do not divide) times the ranks of this node. */
static pb_status node_fits(const struct pb_problem *p, double per_rank, const char *what)
{
    int local = pb__comm_local_size(pb__comm_world());
    char who[128];
    snprintf(who, sizeof who, "gemm-dist %lldx%lldx%lld on %d rank(s) of this node", (long long)p->v[P_M],
             (long long)p->v[P_N], (long long)p->v[P_K], local);
    return pb__host_mem_need(per_rank * local, who, what);
}

static double elems(size_t rows, size_t cols) { return (double)rows * (double)cols; }

/* The check (prepare): its copies of the rank's rows of A and columns of B,
 * the reference rows and Freivalds vectors around them (O(m + n), as gemm.c
 * weighs them), and the input block bind makes on the host whatever the
 * backend (upload_inputs). */
static pb_status check_fits(const struct pb_problem *p, const struct layout *L0)
{
    double elt = (double)pb_precision_size(p->prec), m = (double)L0->m_loc, n = (double)L0->n_loc,
           k = (double)L0->k, rows = m < 8 ? m : 8;
    double a = elems(L0->m_loc, L0->ka_loc), b = elems(L0->kb_loc, L0->n_loc);
    double need = (m * k + k * n) * elt + 2 * rows * n * 8 + 6 * (n + m) * 8 + 2 * k * 8 + n * 16 +
                  (a > b ? a : b) * elt;
    return node_fits(p, need, "(the check's copies of A's rows and B's columns, the input block)");
}

/* Bind: the blocks and panel buffers where the device's memory is host
 * memory (ref, openmp); else C's download and, where panels may be staged,
 * the pinned panels; the input block either way. */
static pb_status blocks_fit(const pb_device *dev, const struct pb_problem *p, const struct layout *L0)
{
    double a = elems(L0->m_loc, L0->ka_loc), b = elems(L0->kb_loc, L0->n_loc), c = elems(L0->m_loc, L0->n_loc),
           panels = elems(L0->m_loc, L0->wmax) + elems(L0->wmax, L0->n_loc);
    double need = a > b ? a : b;
    if (!dev->backend->alloc)
        need += a + b + c + 2 * panels;
    else
        need += c + (p->v[P_PATH] == PB_PATH_STAGED || p->v[P_PATH] == PB_PATH_AUTO ? panels : 0);
    return node_fits(p, need * (double)pb_precision_size(p->prec),
                     !dev->backend->alloc ? "(blocks of A, B and C, panels, the input block)"
                                          : "(C's download, pinned panels, the input block)");
}

/* ---- host side: this rank's check ----------------------------------------- */

/* This rank's block of C is a product of its own: its rows of A (m_loc x k)
 * times its columns of B (k x n_loc), checked as gemm checks a product
 * (gemm_host.h: every element finite, exact rows, Freivalds, each value
 * against its rounding scale). */
struct gd_host {
    struct pb_problem p;
    uint64_t seed;
    struct layout L;
    void *check; /* gemm_host of the block; NULL for an empty block */
};

static void gd_release(void *host)
{
    struct gd_host *h = host;
    if (!h)
        return;
    pb__gemm_host_release(h->check);
    free(h);
}

static pb_status gd_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    pb_comm *world = pb__comm_world();
    *out = NULL;
    struct gd_host *h = calloc(1, sizeof *h);
    if (!h)
        return pb__fail(PB_ERR_NOMEM, "gemm-dist: out of host memory");
    h->p = *p;
    h->seed = seed;
    layout_of(p, pb__comm_size(world), pb__comm_rank(world), &h->L);
    const struct layout *L = &h->L;
    struct layout L0;
    layout_of(p, pb__comm_size(world), 0, &L0);
    pb_status fit = check_fits(p, &L0); /* the runner agrees on prepare's outcome */
    if (fit != PB_OK) {
        gd_release(h);
        return fit;
    }
    if (!L->m_loc || !L->n_loc) {
        *out = h;
        return PB_OK;
    }
    enum pb_precision prec = p->prec;
    size_t elt = pb_precision_size(prec), bytes_a = 0, bytes_b = 0;
    void *a = NULL, *b = NULL;
    pb_status st = matrix_bytes(L->m_loc, L->k, elt, &bytes_a) && matrix_bytes(L->k, L->n_loc, elt, &bytes_b)
                       ? PB_OK
                       : pb__fail(PB_ERR_OVERFLOW, "gemm-dist: the block's inputs overflow");
    if (st == PB_OK)
        st = pb__host_alloc(bytes_a, "gemm-dist check: A's rows", &a);
    if (st == PB_OK)
        st = pb__host_alloc(bytes_b, "gemm-dist check: B's columns", &b);
    if (st != PB_OK) {
        pb__host_free(a);
        pb__host_free(b);
        gd_release(h);
        return st; /* the runner agrees on prepare's outcome */
    }
    const long rows = (long)L->m_loc, depth = (long)L->k;
#ifdef _OPENMP
#pragma omp parallel for
#endif
    for (long i = 0; i < rows; i++)
        for (size_t q = 0; q < L->k; q++)
            store(prec, a, (size_t)i * L->k + q, a_at(L, prec, seed, L->m0 + (size_t)i, q));
#ifdef _OPENMP
#pragma omp parallel for
#endif
    for (long q = 0; q < depth; q++)
        for (size_t j = 0; j < L->n_loc; j++)
            store(prec, b, (size_t)q * L->n_loc + j, b_at(L, prec, seed, (size_t)q, L->n0 + j));
    struct pb_problem block = pb__gemm_problem(prec, (int64_t)L->m_loc, (int64_t)L->n_loc, (int64_t)L->k);
    /* each grid row and column draws its own check vectors */
    st = pb__gemm_host_adopt(&block, seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(L->g.row * 131 + L->g.col + 1)), a,
                             b, &h->check);
    if (st != PB_OK) {
        gd_release(h);
        return st;
    }
    *out = h;
    return PB_OK;
}

/* ---- variants: the local products' GEMM per backend ---------------------- */

enum gd_kind { GD_OWN, GD_VENDOR };

/* Each backend's best own GEMM, and its vendor library's where it has one. */
static const struct {
    const char *backend, *own, *vendor;
} local_gemm[] = {
    {"ref", "ikj", NULL},
    {"openmp", "blocked", "openblas"},
    {"cuda", "regblock", "cublas"}, /* double: dmma (local_kernel) */
    {"opencl", "regblock", NULL},
};

/* The local GEMM variant of kind on dev's backend, or NULL with *why. */
static const char *local_kernel(const pb_device *dev, enum gd_kind kind, enum pb_precision prec, const char **why)
{
    const pb_backend *b = pb_device_backend(dev);
    const char *name = pb_backend_name(b);
    for (size_t i = 0; i < sizeof local_gemm / sizeof local_gemm[0]; i++) {
        if (strcmp(local_gemm[i].backend, name) != 0)
            continue;
        const char *kernel = kind == GD_VENDOR ? local_gemm[i].vendor : local_gemm[i].own;
        /* CUDA's own double GEMM is the FP64 tensor-core one where the GPU
         * has them (H100: 4x regblock's rate) */
        const struct pb_variant *dmma = pb__variant_find(b, "gemm", "dmma");
        struct pb_gemm_args probe = {.prec = PB_DOUBLE, .m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64};
        const char *no;
        if (kind == GD_OWN && prec == PB_DOUBLE && strcmp(name, "cuda") == 0 && dmma &&
            (!dmma->supports || dmma->supports(dev, &probe, &no)))
            kernel = "dmma";
        if (!kernel) {
            *why = "this backend has no vendor GEMM (summa-vendor: openmp's OpenBLAS, cuda's cuBLAS)";
            return NULL;
        }
        if (!pb__variant_find(b, "gemm", kernel)) {
            *why = kind == GD_VENDOR ? "this build lacks the backend's vendor GEMM (OpenBLAS, cuBLAS)"
                                     : "this build lacks the backend's GEMM variant";
            return NULL;
        }
        return kernel;
    }
    *why = "no local GEMM chosen for this backend (gemm_dist.c's local_gemm table)";
    return NULL;
}

/* ---- binding: blocks on the device, sub-communicators, panel buffers ---- */

struct gd_state;

struct gd_args {
    struct gd_state *s; /* the variant's working state (owned by bind) */
};

struct gd_state {
    struct gd_args args;
    const struct gd_host *h;
    pb_device *dev;
    const char *kernel;
    pb_comm *row, *col; /* this rank's process row (A's panels), column (B's) */
    pb_buf *a, *b, *c;
    pb_buf *pa[2], *pb[2]; /* panel buffers, one pair per step in flight */
    pb_buf *stage_a, *stage_b; /* pinned, for panels staged through host memory */
    struct pb_devcomm *dev_row, *dev_col; /* device paths (NULL: staged) */
    char staged_why[200];                 /* auto: why neither direct path runs */
    bool in_place;             /* host memory: broadcast where the panels lie */
    pb_buf **a_view, **b_view; /* in place: per step, this rank's own panels (NULL elsewhere) */
    pb_stream *compute, *copy;
    void *download; /* C, when not host memory */
};

static void gd_unbind(void *state)
{
    struct gd_state *s = state;
    if (!s)
        return;
    for (size_t t = 0; t < s->h->L.steps; t++) {
        if (s->a_view)
            pb_buf_free(s->a_view[t]);
        if (s->b_view)
            pb_buf_free(s->b_view[t]);
    }
    free(s->a_view);
    free(s->b_view);
    pb_buf_free(s->a);
    pb_buf_free(s->b);
    pb_buf_free(s->c);
    for (int i = 0; i < 2; i++) {
        pb_buf_free(s->pa[i]);
        pb_buf_free(s->pb[i]);
    }
    pb_buf_free(s->stage_a);
    pb_buf_free(s->stage_b);
    pb__devcomm_close(s->dev_row);
    pb__devcomm_close(s->dev_col);
    pb_stream_destroy(s->compute);
    pb_stream_destroy(s->copy);
    pb__host_free(s->download);
    pb__comm_free(s->row);
    pb__comm_free(s->col);
    free(s);
}

/* A buffer of at least one element (blocks may be empty). */
static pb_status alloc_block(pb_device *dev, enum pb_mem kind, size_t rows, size_t cols, size_t elt,
                             pb_buf **out)
{
    size_t bytes;
    if (!matrix_bytes(rows, cols, elt, &bytes))
        return pb__fail(PB_ERR_OVERFLOW, "gemm-dist: block size overflows");
    return pb_buf_alloc(dev, kind, bytes ? bytes : elt, out);
}

/* This rank's blocks of A (panel after panel) and B, made on the host and
 * uploaded. */
static pb_status upload_inputs(struct gd_state *s)
{
    const struct layout *L = &s->h->L;
    enum pb_precision prec = s->h->p.prec;
    size_t elt = pb_precision_size(prec);
    uint64_t seed = s->h->seed;
    void *host = NULL;
    size_t a_elems = L->m_loc * L->ka_loc, b_elems = L->kb_loc * L->n_loc;
    pb_status st = pb__host_alloc((a_elems > b_elems ? a_elems : b_elems) * elt, "gemm-dist input block", &host);
    if (st != PB_OK)
        return st;
    int a_col, b_row;
    for (size_t p0 = L->ka0, w; p0 < L->ka0 + L->ka_loc; p0 += w) {
        w = step_at(L, p0, &a_col, &b_row);
        size_t at = L->m_loc * (p0 - L->ka0);
        /* a billion hashed draws per input at n = 32768 on one GPU: all cores */
#ifdef _OPENMP
#pragma omp parallel for
#endif
        for (long i = 0; i < (long)L->m_loc; i++)
            for (size_t q = 0; q < w; q++)
                store(prec, host, at + (size_t)i * w + q, a_at(L, prec, seed, L->m0 + (size_t)i, p0 + q));
    }
    if (a_elems)
        st = pb_buf_write(s->a, 0, host, a_elems * elt);
    if (st == PB_OK) {
#ifdef _OPENMP
#pragma omp parallel for
#endif
        for (long i = 0; i < (long)L->kb_loc; i++)
            for (size_t j = 0; j < L->n_loc; j++)
                store(prec, host, (size_t)i * L->n_loc + j, b_at(L, prec, seed, L->kb0 + (size_t)i, L->n0 + j));
    }
    if (st == PB_OK && b_elems)
        st = pb_buf_write(s->b, 0, host, b_elems * elt);
    pb__host_free(host);
    return st;
}

/* In place: views of this rank's own panels, per step. */
static pb_status make_views(struct gd_state *s)
{
    const struct layout *L = &s->h->L;
    size_t elt = pb_precision_size(s->h->p.prec);
    s->a_view = calloc(L->steps ? L->steps : 1, sizeof *s->a_view);
    s->b_view = calloc(L->steps ? L->steps : 1, sizeof *s->b_view);
    if (!s->a_view || !s->b_view)
        return pb__fail(PB_ERR_NOMEM, "gemm-dist: out of host memory");
    unsigned char *a = pb_buf_host_ptr(s->a), *b = pb_buf_host_ptr(s->b);
    int a_col, b_row;
    pb_status st = PB_OK;
    size_t t = 0;
    for (size_t p0 = 0, w; p0 < L->k && st == PB_OK; p0 += w, t++) {
        w = step_at(L, p0, &a_col, &b_row);
        if (a_col == L->g.col && L->m_loc)
            st = pb_buf_wrap_host(s->dev, a + L->m_loc * (p0 - L->ka0) * elt, L->m_loc * w * elt, &s->a_view[t]);
        if (st == PB_OK && b_row == L->g.row && L->n_loc)
            st = pb_buf_wrap_host(s->dev, b + (p0 - L->kb0) * L->n_loc * elt, w * L->n_loc * elt, &s->b_view[t]);
    }
    return st;
}

static pb_status gd_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                         void **state, const void **args)
{
    pb_comm *world = pb__comm_world();
    const struct gd_host *h = host;
    const struct layout *L = &h->L;
    size_t elt = pb_precision_size(p->prec);
    *state = NULL;
    const char *why = NULL;
    const char *kernel = local_kernel(dev, *(const enum gd_kind *)v->data, p->prec, &why);
    pb_status st = kernel ? PB_OK : pb__fail(PB_ERR_UNSUPPORTED, "%s", why);
    struct layout L0;
    layout_of(p, pb__comm_size(world), 0, &L0);
    if (st == PB_OK)
        st = blocks_fit(dev, p, &L0); /* agreed below, before any rank allocates */
    struct gd_state *s = NULL;
    if (st == PB_OK && !(s = calloc(1, sizeof *s)))
        st = pb__fail(PB_ERR_NOMEM, "gemm-dist: out of host memory");
    if ((st = pb__comm_agree(world, st)) != PB_OK) {
        free(s);
        return st;
    }
    s->h = h;
    s->dev = dev;
    s->kernel = kernel;
    s->args.s = s;
    /* Collective, agreed inside: every rank has both or none. */
    st = pb__comm_split(world, L->g.row, L->g.col, &s->row);
    if (st == PB_OK)
        st = pb__comm_split(world, L->g.col, L->g.row, &s->col);
    if (st != PB_OK) {
        gd_unbind(s);
        return st;
    }
    st = alloc_block(dev, PB_MEM_DEVICE, L->m_loc, L->ka_loc, elt, &s->a);
    if (st == PB_OK)
        st = alloc_block(dev, PB_MEM_DEVICE, L->kb_loc, L->n_loc, elt, &s->b);
    if (st == PB_OK)
        st = alloc_block(dev, PB_MEM_DEVICE, L->m_loc, L->n_loc, elt, &s->c);
    for (int i = 0; i < 2 && st == PB_OK; i++) {
        st = alloc_block(dev, PB_MEM_DEVICE, L->m_loc, L->wmax, elt, &s->pa[i]);
        if (st == PB_OK)
            st = alloc_block(dev, PB_MEM_DEVICE, L->wmax, L->n_loc, elt, &s->pb[i]);
    }
    if (st == PB_OK)
        s->in_place = pb_buf_host_ptr(s->a) && pb_buf_host_ptr(s->b) && pb_buf_host_ptr(s->pa[0]);
    /* Every rank opens both, whatever happened before (collective over the
     * row, then the column); one rank's failure is agreed below. */
    enum pb_devcomm_path path = (enum pb_devcomm_path)p->v[P_PATH];
    if (s->in_place && path == PB_PATH_AUTO)
        path = PB_PATH_STAGED; /* host memory: broadcast in place */
    char why_col[sizeof s->staged_why];
    pb_status ost = pb__devcomm_open(dev, s->row, path, &s->dev_row, s->staged_why, sizeof s->staged_why);
    pb_status cst = pb__devcomm_open(dev, s->col, path, &s->dev_col, why_col, sizeof why_col);
    if (st == PB_OK)
        st = ost != PB_OK ? ost : cst;
    if (!s->staged_why[0])
        snprintf(s->staged_why, sizeof s->staged_why, "%s", why_col);
    if (st == PB_OK && !s->in_place && (!s->dev_row || !s->dev_col)) {
        st = alloc_block(dev, PB_MEM_PINNED, L->m_loc, L->wmax, elt, &s->stage_a);
        if (st == PB_OK)
            st = alloc_block(dev, PB_MEM_PINNED, L->wmax, L->n_loc, elt, &s->stage_b);
        if (st == PB_OK && (!pb_buf_host_ptr(s->stage_a) || !pb_buf_host_ptr(s->stage_b)))
            st = pb__fail(PB_ERR_UNSUPPORTED, "gemm-dist: pinned buffers without a host address");
    }
    if (st == PB_OK && !pb_buf_host_ptr(s->c)) /* the check reads C back */
        st = pb__host_alloc(L->m_loc * L->n_loc * elt, "gemm-dist result download", &s->download);
    if (st == PB_OK)
        st = pb_stream_create(dev, &s->compute);
    if (st == PB_OK)
        st = pb_stream_create(dev, &s->copy);
    if (st == PB_OK)
        st = upload_inputs(s);
    if (st == PB_OK && s->in_place)
        st = make_views(s);
    /* Memory or an upload may fail on one rank only: no rank goes on alone. */
    if ((st = pb__comm_agree(world, st)) != PB_OK) {
        gd_unbind(s);
        return st;
    }
    *state = s;
    *args = &s->args;
    return PB_OK;
}

/* The local GEMM of the largest step (each step's call checks its own). */
static bool gd_supports(const pb_device *dev, const void *args, const char **why)
{
    const struct gd_state *s = ((const struct gd_args *)args)->s;
    const struct layout *L = &s->h->L;
    const struct pb_variant *v = pb__variant_find(pb_device_backend(dev), "gemm", s->kernel);
    if (!v->supports || !L->m_loc || !L->n_loc)
        return true;
    struct pb_gemm_args g = {.prec = s->h->p.prec, .m = L->m_loc, .n = L->n_loc, .k = L->wmax, .alpha = 1,
                             .beta = 1, .a = s->pa[0], .lda = L->wmax, .b = s->pb[0], .ldb = L->n_loc,
                             .c = s->c, .ldc = L->n_loc};
    return v->supports(dev, &g, why);
}

static pb_status gd_poison(void *state)
{
    struct gd_state *s = state;
    return pb_buf_fill_bytes(s->c, 0xFF);
}

/* ---- the run ------------------------------------------------------------- */

struct step {
    size_t p0, w;
    int a_col, b_row;
    const pb_buf *a, *b; /* the panels the product reads */
};

/* Moves step t's panels to every rank that needs them, into slot's panel
 * buffers (or, in place, leaves the owner's where they lie). A failure of
 * this rank's own copies is kept in *local and the broadcasts go on (the
 * others are waiting for them); a failed broadcast is returned. */
static pb_status share_panels(struct gd_state *s, size_t t, int slot, struct step *st, pb_status *local)
{
    const struct layout *L = &s->h->L;
    size_t elt = pb_precision_size(s->h->p.prec);
    size_t a_bytes = L->m_loc * st->w * elt, b_bytes = st->w * L->n_loc * elt;
    bool a_mine = st->a_col == L->g.col, b_mine = st->b_row == L->g.row;
    size_t a_off = a_mine ? L->m_loc * (st->p0 - L->ka0) * elt : 0;
    size_t b_off = b_mine ? (st->p0 - L->kb0) * L->n_loc * elt : 0;
    pb_status cs = PB_OK;
    st->a = s->pa[slot];
    st->b = s->pb[slot];
    if (s->in_place) {
        if (a_mine && s->a_view[t])
            st->a = s->a_view[t];
        if (b_mine && s->b_view[t])
            st->b = s->b_view[t];
        /* Byte counts agree along a process row (m_loc) and column (n_loc). */
        if (a_bytes && (cs = pb__comm_bcast(s->row, pb_buf_host_ptr(st->a), a_bytes, st->a_col)) != PB_OK)
            return cs;
        if (b_bytes && (cs = pb__comm_bcast(s->col, pb_buf_host_ptr(st->b), b_bytes, st->b_row)) != PB_OK)
            return cs;
        return PB_OK;
    }
    /* Staged panels go down to the pinned buffers, across, and up; on a
     * device path the owner's panel goes straight to every panel buffer. */
    pb_status mine = PB_OK;
    if (a_bytes && a_mine && !s->dev_row)
        mine = pb_buf_copy(s->stage_a, 0, s->a, a_off, a_bytes, s->copy);
    if (b_bytes && b_mine && !s->dev_col && mine == PB_OK)
        mine = pb_buf_copy(s->stage_b, 0, s->b, b_off, b_bytes, s->copy);
    if (mine == PB_OK)
        mine = pb_stream_sync(s->copy);
    if (a_bytes)
        cs = s->dev_row ? pb__devcomm_bcast(s->dev_row, s->a, a_off, s->pa[slot], 0, a_bytes, st->a_col, s->copy)
                        : pb__comm_bcast(s->row, pb_buf_host_ptr(s->stage_a), a_bytes, st->a_col);
    if (cs != PB_OK)
        return cs;
    if (b_bytes)
        cs = s->dev_col ? pb__devcomm_bcast(s->dev_col, s->b, b_off, s->pb[slot], 0, b_bytes, st->b_row, s->copy)
                        : pb__comm_bcast(s->col, pb_buf_host_ptr(s->stage_b), b_bytes, st->b_row);
    if (cs != PB_OK)
        return cs;
    /* The owner copies its panel on the device rather than uploading it back. */
    if (a_bytes && !s->dev_row && mine == PB_OK)
        mine = a_mine ? pb_buf_copy(s->pa[slot], 0, s->a, a_off, a_bytes, s->copy)
                      : pb_buf_copy(s->pa[slot], 0, s->stage_a, 0, a_bytes, s->copy);
    if (b_bytes && !s->dev_col && mine == PB_OK)
        mine = b_mine ? pb_buf_copy(s->pb[slot], 0, s->b, b_off, b_bytes, s->copy)
                      : pb_buf_copy(s->pb[slot], 0, s->stage_b, 0, b_bytes, s->copy);
    pb_status done = pb_stream_sync(s->copy); /* the device path's broadcasts too */
    if (mine == PB_OK)
        mine = done;
    if (*local == PB_OK)
        *local = mine;
    return PB_OK;
}

/* One SUMMA product. Step t + 1's panels move while step t's product runs
 * (on its own stream), into the other slot; before that, the product of
 * step t - 1, which read that slot, has finished. A local failure stops the
 * products but not the broadcasts, so no rank waits for this one; it is
 * returned at the end (the runner then stops every rank). */
static pb_status summa_run(pb_device *dev, const void *args, pb_stream *stream)
{
    (void)stream;
    struct gd_state *s = ((const struct gd_args *)args)->s;
    const struct layout *L = &s->h->L;
    pb_status local = PB_OK, st = PB_OK;
    struct step step[2] = {{0}};
    step[0].w = step_at(L, 0, &step[0].a_col, &step[0].b_row);
    st = share_panels(s, 0, 0, &step[0], &local);
    for (size_t t = 0; t < L->steps && st == PB_OK; t++) {
        struct step *now = &step[t % 2], *next = &step[(t + 1) % 2];
        if (local == PB_OK && L->m_loc && L->n_loc) {
            struct pb_gemm_args g = {.prec = s->h->p.prec, .m = L->m_loc, .n = L->n_loc, .k = now->w,
                                     .alpha = 1, .beta = t ? 1 : 0, .a = now->a, .lda = now->w, .b = now->b,
                                     .ldb = L->n_loc, .c = s->c, .ldc = L->n_loc};
            local = pb_kernel_launch(dev, "gemm", s->kernel, &g, s->compute);
        }
        if (t + 1 < L->steps) {
            next->p0 = now->p0 + now->w;
            next->w = step_at(L, next->p0, &next->a_col, &next->b_row);
            st = share_panels(s, t + 1, (int)((t + 1) % 2), next, &local);
        }
        pb_status done = pb_stream_sync(s->compute);
        if (local == PB_OK)
            local = done;
    }
    return st != PB_OK ? st : local;
}

/* ---- verification and extras --------------------------------------------- */

static pb_status gd_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    struct gd_state *s = state;
    const struct gd_host *h = host;
    const struct layout *L = &h->L;
    if (!h->check) { /* an empty block: nothing to compare */
        pb__check_begin(out, PB_CHECK_TOL, "full");
        pb__check_end(out);
        return PB_OK;
    }
    unsigned char *c = pb_buf_host_ptr(s->c);
    if (!c) {
        pb_status st = pb_buf_read(s->c, 0, s->download, L->m_loc * L->n_loc * pb_precision_size(h->p.prec));
        if (st != PB_OK)
            return st;
        c = s->download;
    }
    return pb__gemm_host_check(h->check, c, corrupt, out);
}

/* The local products alone, every step's width, from the panel buffers
 * (their contents do not change the time), a few times after the timed runs:
 * the compute part of the time; the rest of the median is communication the
 * overlap did not hide. Host clocks around products queued on a stream
 * would not tell the two apart. */
static void gd_extras(void *state, const struct pb_stats *time, const struct pb_ceiling *ceiling, double *out)
{
    (void)ceiling;
    struct gd_state *s = state;
    const struct layout *L = &s->h->L;
    double best = 0;
    if (L->m_loc && L->n_loc && s->pa[0] && s->pb[0]) {
        best = INFINITY;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = pb__now();
            pb_status st = PB_OK;
            for (size_t t = 0, p0 = 0; t < L->steps && st == PB_OK; t++) {
                int a_col, b_row;
                size_t w = step_at(L, p0, &a_col, &b_row);
                struct pb_gemm_args g = {.prec = s->h->p.prec, .m = L->m_loc, .n = L->n_loc, .k = w, .alpha = 1,
                                         .beta = t ? 1 : 0, .a = s->pa[0], .lda = w, .b = s->pb[0],
                                         .ldb = L->n_loc, .c = s->c, .ldc = L->n_loc};
                st = pb_kernel_launch(s->dev, "gemm", s->kernel, &g, s->compute);
                p0 += w;
            }
            if (st == PB_OK)
                st = pb_stream_sync(s->compute);
            if (st != PB_OK) {
                best = NAN;
                break;
            }
            best = fmin(best, pb__now() - t0);
        }
    }
    out[0] = best;
    out[1] = pb__exposed_comm(time->median, best);
}

static const enum gd_kind gd_own = GD_OWN, gd_vendor = GD_VENDOR;

static const struct pb_variant gd_variants[] = {
    {{"gemm-dist", "summa", "SUMMA, local products with the backend's own GEMM (ref ikj, openmp blocked, "
                            "cuda regblock or dmma in double, opencl regblock)", 0},
     .supports = gd_supports, .run = summa_run, .data = &gd_own},
    {{"gemm-dist", "summa-vendor", "SUMMA, local products with the vendor GEMM (openmp OpenBLAS, cuda cuBLAS)",
      PB_VARIANT_ANCHOR},
     .supports = gd_supports, .run = summa_run, .data = &gd_vendor},
};

static const char *const gd_extra_names[] = {"compute_s", "exposed_comm_s"};

/* The local products' roof: gemm's, with summa-vendor's cuBLAS as its own. */
static struct pb_roof gd_roof(const char *variant, const char *backend, const char *device, enum pb_precision prec)
{
    return pb__gemm_roof(strcmp(variant, "summa-vendor") == 0 && strcmp(backend, "cuda") == 0 ? "cublas" : variant,
                         backend, device, prec);
}

/* The path the panels took, for the row. */
static void gd_note(void *state, char *buf, size_t len)
{
    const struct gd_state *s = state;
    if (s->in_place) {
        snprintf(buf, len, "panels broadcast in place (host memory)");
        return;
    }
    enum pb_devcomm_path a = pb__devcomm_path(s->dev_row), b = pb__devcomm_path(s->dev_col);
    if (a == b)
        snprintf(buf, len, "panels %s", pb__devcomm_describe(a));
    else
        snprintf(buf, len, "A's panels %s, B's %s", pb__devcomm_describe(a), pb__devcomm_describe(b));
    if ((a == PB_PATH_STAGED || b == PB_PATH_STAGED) && s->staged_why[0]) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, " (%s)", s->staged_why);
    }
}

const struct pb_bench pb__bench_gemm_dist = {
    .name = "gemm-dist",
    .summary = "dense matrix product C = A*B over the ranks: SUMMA on a 2D process grid (distributed)",
    .flop_model = "2*m*n*k (the whole product)",
    .byte_model = "(m*k + k*n + m*n) * element size (the whole problem)",
    .distributed = true,
    .roof = gd_roof,
    .params = gd_params,
    .n_params = sizeof gd_params / sizeof gd_params[0],
    .baseline_backend = "ref",
    .baseline_variant = "summa",
    .extra_names = gd_extra_names,
    .n_extras = 2,
    .extras = gd_extras,
    .note = gd_note,
    .plan = gd_plan,
    .describe = gd_describe,
    .flops = gd_flops,
    .bytes = gd_bytes,
    .prepare = gd_prepare,
    .release = gd_release,
    .bind = gd_bind,
    .poison = gd_poison,
    .check = gd_check,
    .unbind = gd_unbind,
    .variants = gd_variants,
    .n_variants = sizeof gd_variants / sizeof gd_variants[0],
};

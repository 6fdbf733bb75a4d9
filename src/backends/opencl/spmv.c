/* SpMV on OpenCL, host side of kernels/spmv.cl: CSR one work-item per row,
 * CSR with a group of work-items per row, ELLPACK transposed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/opencl/cl_impl.h"
#include "core/plans.h"
#include "sparse/balance.h"
#include "sparse/sparse.h"

#define SPMV_CL "spmv.cl"
#define ROWS_GROUP 128 /* work-group of the one-row-per-work-item kernels, at most */

static size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* The largest power of two up to `want` the device and kernel allow. */
static size_t group_size(const pb_device *dev, const struct pb_cl_kernel *k, size_t want)
{
    const struct pb_cl_device *impl = pb__cl(dev);
    size_t cap = k->max_group < impl->max_group ? k->max_group : impl->max_group, g = want;
    if (impl->max_items[0] < cap)
        cap = impl->max_items[0];
    while (g > cap && g > 1)
        g /= 2;
    return g;
}


bool pb__cl_spmv_supports(const pb_device *dev, const void *args, const char **why)
{
    const struct pb_spmv_args *a = args;
    if (a->prec == PB_DOUBLE && !pb__cl(dev)->fp64) {
        *why = "the device has no double precision (cl_khr_fp64)";
        return false;
    }
    return true;
}

static pb_status launch_rows(pb_device *dev, pb_stream *s, const struct pb_spmv_args *a, const char *name,
                             bool ell)
{
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, SPMV_CL, a->prec, name, &k);
    if (st != PB_OK)
        return st;
    cl_mem ptr = pb__cl_mem(a->ptr), idx = pb__cl_mem(a->idx), val = pb__cl_mem(a->val), x = pb__cl_mem(a->x),
           y = pb__cl_mem(a->y);
    cl_int rows = a->rows, width = a->width;
    cl_uint i = 0;
    if ((st = pb__cl_set_arg(k->kernel, i++, sizeof rows, &rows)) != PB_OK ||
        (ell && (st = pb__cl_set_arg(k->kernel, i++, sizeof width, &width)) != PB_OK) ||
        (!ell && (st = pb__cl_set_arg(k->kernel, i++, sizeof ptr, &ptr)) != PB_OK) ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof idx, &idx)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof val, &val)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof x, &x)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof y, &y)) != PB_OK)
        return st;
    size_t local = group_size(dev, k, ROWS_GROUP), global = round_up((size_t)a->rows, local);
    return pb__cl_launch(dev, s, k->kernel, 1, &global, &local);
}

pb_status pb__cl_spmv_scalar(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    return a->rows ? launch_rows(dev, s, a, a->ptr_bits == 64 ? "spmv_csr_scalar64" : "spmv_csr_scalar", false)
                   : PB_OK;
}

pb_status pb__cl_spmv_ellt(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    return a->rows ? launch_rows(dev, s, a, "spmv_ellt", true) : PB_OK;
}

pb_status pb__cl_spmv_vector(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    if (!a->rows)
        return PB_OK;
    const struct pb_cl_kernel *k;
    pb_status st =
        pb__cl_kernel(dev, SPMV_CL, a->prec, a->ptr_bits == 64 ? "spmv_csr_vector64" : "spmv_csr_vector", &k);
    if (st != PB_OK)
        return st;
    size_t local = group_size(dev, k, ROWS_GROUP);
    cl_int rows = a->rows, group = pb__spmv_row_group(a);
    if ((size_t)group > local)
        group = (cl_int)local; /* a work-group smaller than the row group: still correct, fewer lanes */
    cl_mem ptr = pb__cl_mem(a->ptr), idx = pb__cl_mem(a->idx), val = pb__cl_mem(a->val), x = pb__cl_mem(a->x),
           y = pb__cl_mem(a->y);
    if ((st = pb__cl_set_arg(k->kernel, 0, sizeof rows, &rows)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 1, sizeof group, &group)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 2, sizeof ptr, &ptr)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 3, sizeof idx, &idx)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 4, sizeof val, &val)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 5, sizeof x, &x)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 6, sizeof y, &y)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 7, local * pb_precision_size(a->prec), NULL)) != PB_OK)
        return st;
    size_t global = round_up((size_t)a->rows * (size_t)group, local);
    return pb__cl_launch(dev, s, k->kernel, 1, &global, &local);
}

/* ---- csr-balanced and auto ---------------------------------------------- */

/* auto's candidates (see auto_ready). */
enum { PICK_ELLT, PICK_BALANCED, PICK_SCALAR, PICK_VECTOR, PICK_DIA, N_PICKS };

/* What csr-balanced, dia and auto derive from a matrix, kept as a user
 * multiplying many times would keep it, one per matrix in use (core/plans.h):
 * the plan and statistics of the row offsets with stamp ptr_stamp, auto's
 * ELLT copy of the arrays with stamps ell_stamp[3], and the diagonal copy
 * (or why there is none) of those with dia_stamp[3]. */
struct pb_cl_spmv_cache {
    uint64_t ptr_stamp;
    int32_t rows;
    int64_t nnz;
    struct pb_spmv_row_stats stats;
    pb_buf *blocks, *pieces, *partial, *counter;
    int32_t n_blocks, n_pieces, long_rows;
    /* auto's pick for the arrays with stamps pick_stamp[3], in pick_prec, and
     * each candidate's time (0: not a candidate) */
    int pick;
    uint64_t pick_stamp[3];
    enum pb_precision pick_prec;
    double pick_ms[N_PICKS];
    pb_buf *ell_idx, *ell_val;
    uint64_t ell_stamp[3];
    enum pb_precision ell_prec;
    pb_buf *dia_off, *dia_val; /* dia_off: 4 longs per diagonal (spmv_dia's spans) */
    uint64_t dia_stamp[3];
    enum pb_precision dia_prec;
    int dia_diags;
    double dia_ratio;
    bool dia_refused;
};

static void drop_plan(struct pb_cl_spmv_cache *c)
{
    pb_buf_free(c->blocks), pb_buf_free(c->pieces), pb_buf_free(c->partial), pb_buf_free(c->counter);
    c->blocks = c->pieces = c->partial = c->counter = NULL;
    c->ptr_stamp = 0;
}

static void drop_ell(struct pb_cl_spmv_cache *c)
{
    pb_buf_free(c->ell_idx), pb_buf_free(c->ell_val);
    c->ell_idx = c->ell_val = NULL;
    memset(c->ell_stamp, 0, sizeof c->ell_stamp);
}

static void drop_dia(struct pb_cl_spmv_cache *c)
{
    pb_buf_free(c->dia_off), pb_buf_free(c->dia_val);
    c->dia_off = c->dia_val = NULL;
    memset(c->dia_stamp, 0, sizeof c->dia_stamp);
}

static void *cache_make(void) { return calloc(1, sizeof(struct pb_cl_spmv_cache)); }

static void cache_drop(void *plan)
{
    drop_plan(plan);
    drop_ell(plan);
    drop_dia(plan);
    free(plan);
}

void pb__cl_spmv_release(pb_device *dev)
{
    struct pb_cl_device *impl = pb__cl(dev);
    if (impl)
        pb__plans_clear(&impl->spmv);
}

void pb__cl_spmv_buf_gone(pb_device *dev, const pb_buf *buf)
{
    struct pb_cl_device *impl = pb__cl(dev);
    if (impl)
        pb__plans_forget(&impl->spmv, buf);
}

static pb_status upload_new(pb_device *dev, const void *src, size_t bytes, pb_buf **out)
{
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes ? bytes : 1, out);
    return st == PB_OK && bytes ? pb_buf_write(*out, 0, src, bytes) : st;
}

/* The plan and statistics of a's matrix, made from its row offsets (read
 * back once per matrix). */
static struct pb_cl_spmv_cache *cache_of(pb_device *dev, const struct pb_spmv_args *a)
{
    struct pb_plans *plans = &pb__cl(dev)->spmv;
    plans->make = cache_make, plans->drop = cache_drop;
    return pb__plans_for(plans, a->ptr);
}

static pb_status plan_ready(pb_device *dev, const struct pb_spmv_args *a, struct pb_cl_spmv_cache **out)
{
    struct pb_cl_spmv_cache *c = *out = cache_of(dev, a);
    if (!c)
        return PB_ERR_NOMEM;
    if (c->ptr_stamp && c->ptr_stamp == a->ptr->stamp && c->rows == a->rows && c->nnz == a->nnz)
        return PB_OK;
    drop_plan(c);
    int32_t *ptr = NULL;
    struct pb_bal_plan plan = {0};
    pb_status st = pb__host_alloc(((size_t)a->rows + 1) * sizeof *ptr, "spmv row offsets", (void **)&ptr);
    if (st == PB_OK)
        st = pb_buf_read(a->ptr, 0, ptr, ((size_t)a->rows + 1) * sizeof *ptr);
    if (st == PB_OK)
        st = pb__csr_offsets_agree(ptr, a->rows, a->nnz);
    if (st == PB_OK) {
        pb__spmv_row_stats_of(ptr, a->rows, a->cols, &c->stats);
        st = pb__bal_plan(ptr, a->rows, PB_BAL_NNZ, false, &plan);
    }
    pb__host_free(ptr);
    size_t parts = (size_t)plan.n_parts;
    int32_t *zero = NULL;
    if (st == PB_OK)
        st = upload_new(dev, plan.blocks, (size_t)plan.n_blocks * sizeof *plan.blocks, &c->blocks);
    if (st == PB_OK)
        st = upload_new(dev, plan.pieces, (size_t)plan.n_pieces * sizeof *plan.pieces, &c->pieces);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, parts ? parts * sizeof(double) : 1, &c->partial);
    if (st == PB_OK && !(zero = calloc(parts + 1, sizeof *zero)))
        st = pb__fail(PB_ERR_NOMEM, "out of host memory");
    if (st == PB_OK)
        st = upload_new(dev, zero, parts * sizeof *zero, &c->counter);
    free(zero);
    c->n_blocks = plan.n_blocks, c->n_pieces = plan.n_pieces, c->long_rows = plan.long_rows;
    pb__bal_free(&plan);
    if (st != PB_OK) {
        drop_plan(c);
        return st;
    }
    c->ptr_stamp = a->ptr->stamp, c->rows = a->rows, c->nnz = a->nnz;
    return PB_OK;
}

/* The work-group of csr-balanced: 256 where the device allows, else the
 * largest power of two it allows (at least 32: the widest row group). */
static size_t balanced_group(const pb_device *dev, const struct pb_cl_kernel *k)
{
    return group_size(dev, k, PB_BAL_THREADS);
}

static size_t balanced_local_bytes(enum pb_precision prec, size_t local)
{
    size_t elt = pb_precision_size(prec);
    return PB_BAL_NNZ * elt + (PB_BAL_ROWS + 1) * sizeof(cl_int) + local * elt;
}

static pb_status launch_balanced(pb_device *dev, pb_stream *s, const struct pb_spmv_args *a,
                                 const struct pb_cl_spmv_cache *c)
{
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, SPMV_CL, a->prec, "spmv_csr_balanced", &k);
    if (st != PB_OK)
        return st;
    size_t local = balanced_group(dev, k), elt = pb_precision_size(a->prec);
    if (local < 32 || balanced_local_bytes(a->prec, local) > pb__cl(dev)->local_mem)
        return pb__fail(PB_ERR_UNSUPPORTED,
                        "opencl/csr-balanced: needs work-groups of 32 and %zu bytes of local memory",
                        balanced_local_bytes(a->prec, 32));
    cl_int n_pieces = c->n_pieces;
    cl_mem ptr = pb__cl_mem(a->ptr), idx = pb__cl_mem(a->idx), val = pb__cl_mem(a->val), x = pb__cl_mem(a->x),
           y = pb__cl_mem(a->y), pieces = pb__cl_mem(c->pieces), blocks = pb__cl_mem(c->blocks),
           partial = pb__cl_mem(c->partial), counter = pb__cl_mem(c->counter);
    cl_uint i = 0;
    if ((st = pb__cl_set_arg(k->kernel, i++, sizeof n_pieces, &n_pieces)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof ptr, &ptr)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof idx, &idx)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof val, &val)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof x, &x)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof y, &y)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof pieces, &pieces)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof blocks, &blocks)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof partial, &partial)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, sizeof counter, &counter)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, PB_BAL_NNZ * elt, NULL)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, (PB_BAL_ROWS + 1) * sizeof(cl_int), NULL)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, i++, local * elt, NULL)) != PB_OK)
        return st;
    size_t global = ((size_t)c->n_pieces + (size_t)c->n_blocks) * local;
    return global ? pb__cl_launch(dev, s, k->kernel, 1, &global, &local) : PB_OK;
}

pb_status pb__cl_spmv_balanced(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    struct pb_cl_spmv_cache *c;
    pb_status st = a->rows ? plan_ready(dev, a, &c) : PB_OK;
    return st == PB_OK && a->rows ? launch_balanced(dev, s, a, c) : st;
}

pb_status pb__cl_spmv_balanced_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const struct pb_spmv_args *a = args;
    struct pb_cl_spmv_cache *c;
    pb_status st = a->rows ? plan_ready(dev, a, &c) : PB_OK;
    if (st == PB_OK && a->rows)
        snprintf(note, len, "%d blocks of <= %d, %d long rows in %d pieces", c->n_blocks, PB_BAL_NNZ, c->long_rows,
                 c->n_pieces);
    return st;
}

/* auto's ELLT copy of a's matrix, made on the device when stale. */
static pb_status ell_ready(pb_device *dev, const struct pb_spmv_args *a, struct pb_cl_spmv_cache *c)
{
    if (c->ell_idx && c->ell_stamp[0] == a->ptr->stamp && c->ell_stamp[1] == a->idx->stamp &&
        c->ell_stamp[2] == a->val->stamp && c->ell_prec == a->prec)
        return PB_OK;
    drop_ell(c);
    size_t n = (size_t)a->rows * (size_t)c->stats.max_len;
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, SPMV_CL, a->prec, "spmv_csr_to_ellt", &k);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, n ? n * sizeof(cl_int) : 1, &c->ell_idx);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, n ? n * pb_precision_size(a->prec) : 1, &c->ell_val);
    cl_int rows = a->rows, width = c->stats.max_len;
    cl_mem ptr = pb__cl_mem(a->ptr), idx = pb__cl_mem(a->idx), val = pb__cl_mem(a->val),
           eidx = pb__cl_mem(c->ell_idx), eval = pb__cl_mem(c->ell_val);
    const void *arg[] = {&rows, &width, &ptr, &idx, &val, &eidx, &eval};
    const size_t size[] = {sizeof rows, sizeof width, sizeof ptr, sizeof idx, sizeof val, sizeof eidx, sizeof eval};
    for (cl_uint i = 0; st == PB_OK && i < sizeof arg / sizeof arg[0]; i++)
        st = pb__cl_set_arg(k->kernel, i, size[i], arg[i]);
    if (st == PB_OK) {
        size_t local = group_size(dev, k, ROWS_GROUP), global = round_up((size_t)a->rows, local);
        st = pb__cl_launch(dev, NULL, k->kernel, 1, &global, &local);
    }
    if (st == PB_OK)
        st = pb_device_sync(dev);
    if (st != PB_OK) {
        drop_ell(c);
        return st;
    }
    c->ell_stamp[0] = a->ptr->stamp, c->ell_stamp[1] = a->idx->stamp, c->ell_stamp[2] = a->val->stamp;
    c->ell_prec = a->prec;
    return PB_OK;
}

/* ---- dia ------------------------------------------------------------------- */

/* The diagonal copy of a's matrix, made on the host from its CSR (read back
 * once per matrix) where it has at most PB_DIA_MAX_DIAGS diagonals and they
 * move fewer bytes than CSR (PARBENCH_DIA_ANY: whatever they move). */
static pb_status dia_ready(pb_device *dev, const struct pb_spmv_args *a, struct pb_cl_spmv_cache *c)
{
    if (c->dia_stamp[0] == a->ptr->stamp && c->dia_stamp[1] == a->idx->stamp && c->dia_stamp[2] == a->val->stamp &&
        c->dia_prec == a->prec)
        return c->dia_refused ? pb__dia_refuse(c->dia_diags, c->dia_ratio) : PB_OK;
    drop_dia(c);
    c->dia_refused = false;
    if (a->ptr_bits == 64)
        return pb__fail(PB_ERR_UNSUPPORTED, "opencl/dia reads 32-bit row offsets");
    size_t elt = pb_precision_size(a->prec), nnz = (size_t)a->nnz;
    int32_t *ptr = NULL, *idx = NULL;
    void *val = NULL;
    pb_status st = pb__host_alloc(((size_t)a->rows + 1) * sizeof *ptr, "dia: row offsets", (void **)&ptr);
    if (st == PB_OK)
        st = pb__host_alloc((nnz ? nnz : 1) * sizeof *idx, "dia: columns", (void **)&idx);
    if (st == PB_OK)
        st = pb__host_alloc((nnz ? nnz : 1) * elt, "dia: values", &val);
    if (st == PB_OK)
        st = pb_buf_read(a->ptr, 0, ptr, ((size_t)a->rows + 1) * sizeof *ptr);
    if (st == PB_OK && nnz)
        st = pb_buf_read(a->idx, 0, idx, nnz * sizeof *idx);
    if (st == PB_OK && nnz)
        st = pb_buf_read(a->val, 0, val, nnz * elt);
    struct pb_dia d = {0};
    if (st == PB_OK) {
        struct pb_dia_shape shape;
        c->dia_diags = pb__dia_pick(ptr, idx, a->rows, a->cols, elt, &shape, &c->dia_ratio);
        c->dia_refused = c->dia_diags == 0 || (c->dia_ratio >= 1 && !getenv("PARBENCH_DIA_ANY"));
        st = c->dia_refused ? pb__dia_refuse(c->dia_diags, c->dia_ratio)
                            : pb__dia_build(ptr, idx, val, elt, a->rows, a->cols, &shape, &d);
    }
    pb__host_free(ptr), pb__host_free(idx), pb__host_free(val);
    /* per diagonal, as spmv_dia reads it: offset, first row, rows, start of its values */
    cl_long spans[4 * PB_DIA_MAX_DIAGS];
    size_t values = 0;
    for (int q = 0; st == PB_OK && q < d.diags; q++) {
        spans[4 * q] = d.offset[q], spans[4 * q + 1] = d.first[q], spans[4 * q + 2] = d.count[q];
        spans[4 * q + 3] = d.start[q];
        values += (size_t)d.count[q];
    }
    if (st == PB_OK)
        st = upload_new(dev, spans, 4 * (size_t)d.diags * sizeof *spans, &c->dia_off);
    if (st == PB_OK)
        st = upload_new(dev, d.val, values * elt, &c->dia_val);
    pb__dia_free(&d);
    if (st != PB_OK && !c->dia_refused) {
        drop_dia(c);
        return st;
    }
    c->dia_stamp[0] = a->ptr->stamp, c->dia_stamp[1] = a->idx->stamp, c->dia_stamp[2] = a->val->stamp;
    c->dia_prec = a->prec;
    return st;
}

static pb_status launch_dia(pb_device *dev, pb_stream *s, const struct pb_spmv_args *a,
                            const struct pb_cl_spmv_cache *c)
{
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, SPMV_CL, a->prec, "spmv_dia", &k);
    cl_int rows = a->rows, diags = c->dia_diags;
    cl_mem spans = pb__cl_mem(c->dia_off), val = pb__cl_mem(c->dia_val), x = pb__cl_mem(a->x), y = pb__cl_mem(a->y);
    const void *arg[] = {&rows, &diags, &spans, &val, &x, &y};
    const size_t size[] = {sizeof rows, sizeof diags, sizeof spans, sizeof val, sizeof x, sizeof y};
    for (cl_uint i = 0; st == PB_OK && i < sizeof arg / sizeof arg[0]; i++)
        st = pb__cl_set_arg(k->kernel, i, size[i], arg[i]);
    if (st != PB_OK)
        return st;
    size_t local = group_size(dev, k, ROWS_GROUP), global = round_up((size_t)a->rows, local);
    return pb__cl_launch(dev, s, k->kernel, 1, &global, &local);
}

pb_status pb__cl_spmv_dia(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    if (!a->rows)
        return PB_OK;
    struct pb_cl_spmv_cache *c = cache_of(dev, a);
    pb_status st = c ? dia_ready(dev, a, c) : PB_ERR_NOMEM;
    return st == PB_OK ? launch_dia(dev, s, a, c) : st;
}

pb_status pb__cl_spmv_dia_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const struct pb_spmv_args *a = args;
    struct pb_cl_spmv_cache *c = a->rows ? cache_of(dev, a) : NULL;
    pb_status st = !a->rows ? PB_OK : c ? dia_ready(dev, a, c) : PB_ERR_NOMEM;
    if (st == PB_OK && c)
        snprintf(note, len, "%d diagonal%s, %.2fx CSR's bytes", c->dia_diags, c->dia_diags == 1 ? "" : "s",
                 c->dia_ratio);
    return st;
}

/* auto: the fastest of its candidates on this device, timed once per
 * matrix: ELLT (a copy, where the rows are even enough: sparse/balance.h),
 * csr-balanced, csr-scalar, csr-vector and DIA (a copy, where the matrix
 * has few diagonals and they move fewer bytes than CSR). No rule from the row lengths
 * holds across OpenCL devices: on PoCL's CPU device csr-scalar ran 2-6x
 * ELLT on blocks, bands and stencils (2-core EPYC, zoo:256k float), the
 * matrices a GPU runs best as ELLT. */
static const char *const pick_names[N_PICKS] = {"ellt", "csr-balanced", "csr-scalar", "csr-vector", "dia"};

static pb_status auto_launch(pb_device *dev, pb_stream *s, const struct pb_spmv_args *a,
                             const struct pb_cl_spmv_cache *c, int pick)
{
    if (pick == PICK_BALANCED)
        return launch_balanced(dev, s, a, c);
    if (pick == PICK_SCALAR)
        return launch_rows(dev, s, a, "spmv_csr_scalar", false);
    if (pick == PICK_VECTOR)
        return pb__cl_spmv_vector(dev, a, s);
    if (pick == PICK_DIA)
        return launch_dia(dev, s, a, c);
    struct pb_spmv_args ell = *a;
    ell.idx = c->ell_idx, ell.val = c->ell_val, ell.width = c->stats.max_len;
    return launch_rows(dev, s, &ell, "spmv_ellt", true);
}

/* The candidates timed in turns (one untimed product each, then 5 rounds);
 * ms[k] = the fastest of k's, 0 where k is no candidate. A candidate the
 * device cannot run (csr-balanced's local memory) is left out. */
static pb_status auto_time(pb_device *dev, const struct pb_spmv_args *a, const struct pb_cl_spmv_cache *c,
                           bool can[N_PICKS], double ms[N_PICKS])
{
    pb_status st = PB_OK;
    for (int k = 0; k < N_PICKS && st == PB_OK; k++) {
        ms[k] = 0;
        if (!can[k])
            continue;
        st = auto_launch(dev, NULL, a, c, k);
        if (st == PB_OK)
            st = pb_device_sync(dev);
        if (st == PB_ERR_UNSUPPORTED)
            can[k] = false, st = PB_OK, pb__clear_error();
    }
    for (int r = 0; r < 5 && st == PB_OK; r++)
        for (int k = 0; k < N_PICKS && st == PB_OK; k++) {
            if (!can[k])
                continue;
            double t0 = pb__now();
            st = auto_launch(dev, NULL, a, c, k);
            if (st == PB_OK)
                st = pb_device_sync(dev);
            double t = (pb__now() - t0) * 1e3;
            if (st == PB_OK && (ms[k] == 0 || t < ms[k]))
                ms[k] = t > 0 ? t : 1e-9;
        }
    return st;
}

static pb_status auto_ready(pb_device *dev, const struct pb_spmv_args *a, struct pb_cl_spmv_cache **out)
{
    pb_status st = plan_ready(dev, a, out);
    if (st != PB_OK)
        return st;
    struct pb_cl_spmv_cache *c = *out;
    if (c->pick_stamp[0] == a->ptr->stamp && c->pick_stamp[1] == a->idx->stamp &&
        c->pick_stamp[2] == a->val->stamp && c->pick_prec == a->prec)
        return c->pick == PICK_ELLT ? ell_ready(dev, a, c) : c->pick == PICK_DIA ? dia_ready(dev, a, c) : PB_OK;
    bool can[N_PICKS] = {[PICK_BALANCED] = true, [PICK_SCALAR] = true, [PICK_VECTOR] = true};
    if (pb__spmv_auto_pick(&c->stats) == PB_PICK_ELLT) {
        st = ell_ready(dev, a, c);
        can[PICK_ELLT] = st == PB_OK;
        if (st == PB_ERR_NOMEM) /* no room for the copy: the CSR kernels */
            pb__clear_error(), st = PB_OK;
    }
    if (st == PB_OK && a->ptr_bits != 64) {
        pb_status d = dia_ready(dev, a, c); /* refused, or no room: the others */
        can[PICK_DIA] = d == PB_OK;
        if (d == PB_ERR_UNSUPPORTED || d == PB_ERR_NOMEM)
            pb__clear_error();
        else if (d != PB_OK)
            st = d;
    }
    if (st == PB_OK)
        st = auto_time(dev, a, c, can, c->pick_ms);
    if (st != PB_OK)
        return st;
    c->pick = PICK_SCALAR; /* runs on every device */
    for (int k = 0; k < N_PICKS; k++)
        if (can[k] && c->pick_ms[k] < c->pick_ms[c->pick])
            c->pick = k;
    /* PARBENCH_AUTO_PICK=NAME: that candidate where it is one (tests run
     * every pick, not only the one this device's clock favours) */
    const char *forced = getenv("PARBENCH_AUTO_PICK");
    for (int k = 0; forced && k < N_PICKS; k++)
        if (can[k] && strcmp(forced, pick_names[k]) == 0)
            c->pick = k;
    if (c->pick != PICK_ELLT)
        drop_ell(c); /* not kept for nothing */
    if (c->pick != PICK_DIA)
        drop_dia(c);
    c->pick_stamp[0] = a->ptr->stamp, c->pick_stamp[1] = a->idx->stamp, c->pick_stamp[2] = a->val->stamp;
    c->pick_prec = a->prec;
    return PB_OK;
}

pb_status pb__cl_spmv_auto(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    struct pb_cl_spmv_cache *c;
    pb_status st = a->rows ? auto_ready(dev, a, &c) : PB_OK;
    return st == PB_OK && a->rows ? auto_launch(dev, s, a, c, c->pick) : st;
}

pb_status pb__cl_spmv_auto_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const struct pb_spmv_args *a = args;
    struct pb_cl_spmv_cache *c;
    pb_status st = a->rows ? auto_ready(dev, a, &c) : PB_OK;
    if (st == PB_OK && a->rows) {
        char picked[200];
        int at = snprintf(picked, sizeof picked, "%s, fastest of", pick_names[c->pick]);
        for (int k = 0; k < N_PICKS; k++)
            if (c->pick_ms[k] > 0 && at > 0 && (size_t)at < sizeof picked)
                at += snprintf(picked + at, sizeof picked - (size_t)at, " %s %.3f ms", pick_names[k], c->pick_ms[k]);
        pb__spmv_pick_note(picked, &c->stats, note, len);
    }
    return st;
}

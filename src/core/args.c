/* Argument checks common to every variant of a kernel family, run before any
 * variant sees the arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/args.h"
#include "core/backend_impl.h"
#include "core/core.h"
#include "core/precision.h"

/* Bytes a row-major rows x cols matrix with leading dimension ld spans. */
static bool matrix_span(size_t rows, size_t cols, size_t ld, size_t elt, size_t *bytes)
{
    if (rows == 0 || cols == 0) {
        *bytes = 0;
        return true;
    }
    size_t elems;
    return pb__mul_size(rows - 1, ld, &elems) && pb__add_size(elems, cols, &elems) &&
           pb__mul_size(elems, elt, bytes);
}

static pb_status check_matrix(const char *name, const pb_buf *buf, size_t rows, size_t cols,
                              size_t ld, size_t elt)
{
    size_t need;
    if (ld < cols)
        return pb__fail(PB_ERR_INVALID, "gemm: leading dimension of %s (%zu) is less than its %zu columns",
                        name, ld, cols);
    if (!matrix_span(rows, cols, ld, elt, &need))
        return pb__fail(PB_ERR_OVERFLOW, "gemm: size of %s overflows", name);
    if (need && !buf)
        return pb__fail(PB_ERR_INVALID, "gemm: %s is NULL", name);
    if (buf && need > buf->bytes)
        return pb__fail(PB_ERR_INVALID, "gemm: %s needs %zu bytes, its buffer has %zu", name, need,
                        buf->bytes);
    return PB_OK;
}

pb_status pb__gemm_args_check(const void *p)
{
    const struct pb_gemm_args *g = p;
    size_t elt = pb_precision_size(g->prec), elt_c = pb_precision_size(pb__precision_out(g->prec));
    if (!elt)
        return pb__fail(PB_ERR_INVALID, "gemm: unknown precision %d", (int)g->prec);
    pb_status st;
    /* Without elements of C nothing is read: A and B may be NULL. */
    bool reads = g->m && g->n;
    if ((st = check_matrix("A", g->a, reads ? g->m : 0, g->k, g->lda, elt)) != PB_OK ||
        (st = check_matrix("B", g->b, g->k, reads ? g->n : 0, g->ldb, elt)) != PB_OK ||
        (st = check_matrix("C", g->c, g->m, g->n, g->ldc, elt_c)) != PB_OK)
        return st;
    if ((g->block_x == 0) != (g->block_y == 0))
        return pb__fail(PB_ERR_INVALID, "gemm: block_x and block_y are both set or both 0 (got %u x %u)",
                        g->block_x, g->block_y);
    return PB_OK;
}

/* "LEAD NAME, NAME..." over b's visible variants of bench flagged `flag`
 * (in buf), or `none` when it has none. */
static const char *flagged_variants(const struct pb_backend *b, const char *bench, unsigned flag, const char *lead,
                                    const char *none, char *buf, size_t len)
{
    int used = snprintf(buf, len, "%s", lead);
    bool any = false;
    for (size_t i = 0; i < b->n_variants; i++) {
        const struct pb_variant_desc *d = &b->variants[i].desc;
        if (strcmp(d->bench, bench) != 0 || !(d->flags & flag) || (d->flags & PB_VARIANT_HIDDEN))
            continue;
        if (used > 0 && (size_t)used < len)
            used += snprintf(buf + used, len - (size_t)used, "%s %s", any ? "," : "", d->name);
        any = true;
    }
    return any ? buf : none;
}

bool pb__gemm_variant_takes(const struct pb_backend *b, const struct pb_variant *v, enum pb_precision p,
                            const char **why)
{
    if (!pb__precision_lowp(p) || (v->desc.flags & PB_VARIANT_LOWP))
        return true;
    static _Thread_local char buf[192];
    *why = flagged_variants(b, "gemm", PB_VARIANT_LOWP, "float and double only: tf32/bf16/fp16 run on",
                            "no tensor cores: tf32/bf16/fp16 run on cuda", buf, sizeof buf);
    return false;
}

bool pb__spmv_variant_takes(const struct pb_backend *b, const struct pb_variant *v, const void *args,
                            const char **why)
{
    const struct pb_spmv_args *a = args;
    if (a->ptr_bits != 64 || (v->desc.flags & PB_VARIANT_PTR64))
        return true;
    static _Thread_local char buf[192];
    *why = flagged_variants(b, "spmv", PB_VARIANT_PTR64, "64-bit row offsets (beyond 2^31 - 1 non-zeros) run on",
                            "64-bit row offsets: no variant of this backend reads them", buf, sizeof buf);
    return false;
}

bool pb__gemm_shaped(const void *args)
{
    const struct pb_gemm_args *g = args;
    return g->block_x || g->block_y || g->groups;
}

static pb_status check_array(const char *name, const pb_buf *buf, size_t count, size_t elt)
{
    size_t need;
    if (!pb__mul_size(count, elt, &need))
        return pb__fail(PB_ERR_OVERFLOW, "spmv: size of %s overflows", name);
    if (need && !buf)
        return pb__fail(PB_ERR_INVALID, "spmv: %s is NULL", name);
    if (buf && need > buf->bytes)
        return pb__fail(PB_ERR_INVALID, "spmv: %s needs %zu bytes, its buffer has %zu", name, need, buf->bytes);
    return PB_OK;
}

pb_status pb__spmv_args_check(const void *p)
{
    const struct pb_spmv_args *a = p;
    pb_status st = pb__float_or_double("spmv", a->prec);
    if (st != PB_OK)
        return st;
    if (a->rows < 0 || a->cols < 0 || a->nnz < 0 || a->width < 0)
        return pb__fail(PB_ERR_INVALID, "spmv: negative size");
    if (a->group < 0 || a->group > 32 || (a->group & (a->group - 1)) != 0)
        return pb__fail(PB_ERR_INVALID, "spmv: group %d is not a power of two up to 32", a->group);
    if (a->block < 0 || a->block > 1024 || a->block % 32 != 0)
        return pb__fail(PB_ERR_INVALID, "spmv: block %d is not a multiple of 32 up to 1024", a->block);
    size_t elt = pb_precision_size(a->prec), rows = (size_t)a->rows, entries;
    switch (a->format) {
    case PB_SPARSE_CSR:
        entries = (size_t)a->nnz;
        break;
    case PB_SPARSE_ELL:
    case PB_SPARSE_ELLT:
        if (!pb__mul_size(rows, (size_t)a->width, &entries))
            return pb__fail(PB_ERR_OVERFLOW, "spmv: ELL size overflows");
        break;
    default:
        return pb__fail(PB_ERR_INVALID, "spmv: unknown format");
    }
    if (a->ptr_bits != 0 && a->ptr_bits != 32 && a->ptr_bits != 64)
        return pb__fail(PB_ERR_INVALID, "spmv: ptr_bits %d is not 32 or 64", a->ptr_bits);
    if (a->ptr_bits == 64 && a->format != PB_SPARSE_CSR)
        return pb__fail(PB_ERR_INVALID, "spmv: 64-bit row offsets are CSR's only");
    if (a->format == PB_SPARSE_CSR && a->ptr_bits != 64 && a->nnz > INT32_MAX)
        return pb__fail(PB_ERR_INVALID, "spmv: %lld non-zeros need 64-bit row offsets (ptr_bits 64)",
                        (long long)a->nnz);
    const size_t ptr_elt = a->ptr_bits == 64 ? sizeof(int64_t) : sizeof(int32_t);
    if ((a->format == PB_SPARSE_CSR && (st = check_array("ptr", a->ptr, rows + 1, ptr_elt)) != PB_OK) ||
        (st = check_array("idx", a->idx, entries, sizeof(int32_t))) != PB_OK ||
        (st = check_array("val", a->val, entries, elt)) != PB_OK ||
        (st = check_array("x", a->x, entries ? (size_t)a->cols : 0, elt)) != PB_OK || /* read through entries */
        (st = check_array("y", a->y, rows, elt)) != PB_OK)
        return st;
    return PB_OK;
}

pb_status pb__float_or_double(const char *family, enum pb_precision p)
{
    if (p == PB_FLOAT || p == PB_DOUBLE)
        return PB_OK;
    if (!pb_precision_size(p))
        return pb__fail(PB_ERR_INVALID, "%s: unknown precision %d", family, (int)p);
    return pb__fail(PB_ERR_INVALID, "%s: no precision %s: float or double", family, pb_precision_name(p));
}

/* A conv array of rows x cols elements (the filter: 1 x taps). */
static pb_status check_conv_array(const char *name, const pb_buf *buf, size_t rows, size_t cols, size_t elt)
{
    size_t need;
    if (!pb__mul_size(rows, cols, &need) || !pb__mul_size(need, elt, &need))
        return pb__fail(PB_ERR_OVERFLOW, "conv: size of %s (%zu x %zu elements) overflows", name, rows, cols);
    if (need && !buf)
        return pb__fail(PB_ERR_INVALID, "conv: %s is NULL", name);
    if (buf && need > buf->bytes)
        return pb__fail(PB_ERR_INVALID, "conv: %s needs %zu bytes (%zu x %zu elements), its buffer has %zu", name,
                        need, rows, cols, buf->bytes);
    return PB_OK;
}

static pb_status conv_args_check(const void *args)
{
    const struct pb_conv_args *a = args;
    pb_status st = pb__float_or_double("conv", a->prec);
    if (st != PB_OK)
        return st;
    if (a->border != PB_CONV_ZERO && a->border != PB_CONV_CLAMP)
        return pb__fail(PB_ERR_INVALID, "conv: unknown border %d: PB_CONV_ZERO or PB_CONV_CLAMP", (int)a->border);
    if (a->radius < 1 || a->radius > PB_CONV_MAX_RADIUS)
        return pb__fail(PB_ERR_INVALID, "conv: radius %zu is not between 1 and %d", a->radius, PB_CONV_MAX_RADIUS);
    if (a->in_top > a->in_rows || a->height > a->in_rows - a->in_top)
        return pb__fail(PB_ERR_INVALID, "conv: in_top (%zu) + height (%zu) exceeds in_rows (%zu): the rows to filter "
                        "lie in `in`", a->in_top, a->height, a->in_rows);
    /* Every variant may use tmp; an empty image reads nothing. */
    bool reads = a->width && a->height;
    size_t elt = pb_precision_size(a->prec), taps = reads ? 2 * a->radius + 1 : 0, rows = reads ? a->in_rows : 0;
    if ((st = check_conv_array("in", a->in, rows, a->width, elt)) != PB_OK ||
        (st = check_conv_array("tmp", a->tmp, rows, a->width, elt)) != PB_OK ||
        (st = check_conv_array("out", a->out, a->height, a->width, elt)) != PB_OK ||
        (st = check_conv_array("filter", a->filter, 1, taps, elt)) != PB_OK)
        return st;
    return PB_OK;
}

static pb_status peak_args_check(const void *args)
{
    return pb__float_or_double("peak", ((const struct pb_peak_args *)args)->prec);
}

/* The buffers of a kernel family's arguments, up to 5 (p2p's span devices:
 * not listed). */
static size_t args_buffers(const char *bench, const void *args, const pb_buf *buf[5], const char *name[5])
{
    size_t n = 0;
#define PB_ARG_BUF(T, field) (buf[n] = ((const T *)args)->field, name[n++] = #field)
    if (strcmp(bench, "gemm") == 0) {
        PB_ARG_BUF(struct pb_gemm_args, a), PB_ARG_BUF(struct pb_gemm_args, b), PB_ARG_BUF(struct pb_gemm_args, c);
    } else if (strcmp(bench, "spmv") == 0) {
        PB_ARG_BUF(struct pb_spmv_args, ptr), PB_ARG_BUF(struct pb_spmv_args, idx);
        PB_ARG_BUF(struct pb_spmv_args, val), PB_ARG_BUF(struct pb_spmv_args, x), PB_ARG_BUF(struct pb_spmv_args, y);
    } else if (strcmp(bench, "conv") == 0) {
        PB_ARG_BUF(struct pb_conv_args, filter), PB_ARG_BUF(struct pb_conv_args, in);
        PB_ARG_BUF(struct pb_conv_args, tmp), PB_ARG_BUF(struct pb_conv_args, out);
    } else if (strcmp(bench, "transpose") == 0) {
        PB_ARG_BUF(struct pb_transpose_args, in), PB_ARG_BUF(struct pb_transpose_args, out);
    } else if (strcmp(bench, "reduce") == 0) {
        PB_ARG_BUF(struct pb_reduce_args, in), PB_ARG_BUF(struct pb_reduce_args, out);
        PB_ARG_BUF(struct pb_reduce_args, work);
    } else if (strcmp(bench, "access") == 0) {
        PB_ARG_BUF(struct pb_access_args, in), PB_ARG_BUF(struct pb_access_args, out);
    }
#undef PB_ARG_BUF
    return n;
}

size_t pb__args_outputs(const char *bench, const void *args, pb_buf *out[3])
{
    size_t n = 0;
#define PB_ARG_OUT(T, field) (out[n++] = ((const T *)args)->field)
    if (strcmp(bench, "gemm") == 0) {
        PB_ARG_OUT(struct pb_gemm_args, c);
    } else if (strcmp(bench, "spmv") == 0) {
        PB_ARG_OUT(struct pb_spmv_args, y);
    } else if (strcmp(bench, "conv") == 0) {
        PB_ARG_OUT(struct pb_conv_args, tmp), PB_ARG_OUT(struct pb_conv_args, out);
    } else if (strcmp(bench, "transpose") == 0) {
        PB_ARG_OUT(struct pb_transpose_args, out);
    } else if (strcmp(bench, "reduce") == 0) {
        PB_ARG_OUT(struct pb_reduce_args, out), PB_ARG_OUT(struct pb_reduce_args, work);
    } else if (strcmp(bench, "access") == 0) {
        PB_ARG_OUT(struct pb_access_args, out);
    } else if (strcmp(bench, "peak") == 0) {
        PB_ARG_OUT(struct pb_peak_args, out);
    } else if (strcmp(bench, "p2p") == 0) {
        PB_ARG_OUT(struct pb_p2p_args, dst[0]), PB_ARG_OUT(struct pb_p2p_args, dst[1]);
        PB_ARG_OUT(struct pb_p2p_args, gate);
    }
#undef PB_ARG_OUT
    return n;
}

/* Whether dev's kernels may read buf: its own, any host-memory backend's
 * where dev's is one too, or another handle's of the same device where the
 * backend shares buffers between handles. */
static bool usable_by(const pb_buf *buf, const pb_device *dev)
{
    const pb_backend *b = buf->dev->backend;
    if (buf->dev == dev || (!b->alloc && !dev->backend->alloc))
        return true;
    return b == dev->backend && buf->dev->index == dev->index && !b->buffers_per_handle;
}

pb_status pb__kernel_args_check(const pb_device *dev, const char *bench, const void *args)
{
    static const struct {
        const char *bench;
        pb_status (*check)(const void *);
    } checks[] = {
        {"gemm", pb__gemm_args_check},
        {"spmv", pb__spmv_args_check},
        {"transpose", pb__transpose_args_check},
        {"reduce", pb__reduce_args_check},
        {"access", pb__access_args_check},
        {"conv", conv_args_check},
        {"peak", peak_args_check},
    };
    if (!args)
        return pb__fail(PB_ERR_INVALID, "%s: NULL arguments", bench);
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        pb_status st = strcmp(checks[i].bench, bench) == 0 ? checks[i].check(args) : PB_OK;
        if (st != PB_OK)
            return st;
    }
    const pb_buf *buf[5];
    const char *name[5];
    for (size_t i = 0, n = args_buffers(bench, args, buf, name); i < n; i++)
        if (buf[i] && !usable_by(buf[i], dev))
            return pb__fail(PB_ERR_INVALID, "%s: %s is a buffer of another device (%s/%s), not of %s/%s", bench,
                            name[i], buf[i]->dev->backend->name, buf[i]->dev->name, dev->backend->name, dev->name);
    return PB_OK;
}

/* ---- empty problems ------------------------------------------------------ */

/* bytes zero bytes into buf at off, whatever its memory. */
static pb_status write_zeros(pb_buf *buf, size_t off, size_t bytes)
{
    static const unsigned char zeros[4096];
    pb_status st = PB_OK;
    for (size_t done = 0, n; st == PB_OK && done < bytes; done += n) {
        n = bytes - done < sizeof zeros ? bytes - done : sizeof zeros;
        st = pb_buf_write(buf, off + done, zeros, n);
    }
    return st;
}

/* C = beta * C row by row through the host (gemm with k = 0: A * B is 0);
 * beta == 0 writes zeros without reading C, as the variants do. */
static pb_status gemm_scale_c(const struct pb_gemm_args *g)
{
    size_t elt = pb_precision_size(pb__precision_out(g->prec)), row = g->n * elt; /* spans checked */
    pb_status st = PB_OK;
    if (g->beta == 0) {
        for (size_t i = 0; i < g->m && st == PB_OK; i++)
            st = write_zeros(g->c, i * g->ldc * elt, row);
        return st;
    }
    void *line = malloc(row);
    if (!line)
        return pb__fail(PB_ERR_NOMEM, "gemm: out of host memory for a row of C");
    for (size_t i = 0; i < g->m && st == PB_OK; i++) {
        if ((st = pb_buf_read(g->c, i * g->ldc * elt, line, row)) != PB_OK)
            break;
        for (size_t j = 0; j < g->n; j++)
            if (elt == sizeof(double))
                ((double *)line)[j] *= g->beta;
            else
                ((float *)line)[j] *= (float)g->beta;
        st = pb_buf_write(g->c, i * g->ldc * elt, line, row);
    }
    free(line);
    return st;
}

pb_status pb__kernel_empty(pb_device *dev, const char *bench, const void *args, bool *empty)
{
    *empty = true;
    if (strcmp(bench, "gemm") == 0) {
        const struct pb_gemm_args *g = args;
        if (g->m == 0 || g->n == 0 || (g->k == 0 && g->beta == 1))
            return PB_OK;
        if (g->k == 0) { /* the device's queued work may still use C */
            pb_status st = pb_device_sync(dev);
            return st != PB_OK ? st : gemm_scale_c(g);
        }
    } else if (strcmp(bench, "spmv") == 0) {
        const struct pb_spmv_args *a = args;
        size_t entries = a->format == PB_SPARSE_CSR ? (size_t)a->nnz : (size_t)a->rows * (size_t)a->width;
        if (a->rows == 0)
            return PB_OK;
        if (entries == 0 || a->cols == 0) { /* no entry inside the matrix: y = 0 */
            pb_status st = pb_device_sync(dev);
            return st != PB_OK ? st : write_zeros(a->y, 0, (size_t)a->rows * pb_precision_size(a->prec));
        }
    } else if (strcmp(bench, "conv") == 0) {
        const struct pb_conv_args *a = args;
        if (a->width == 0 || a->height == 0)
            return PB_OK;
    } else if (strcmp(bench, "transpose") == 0) {
        const struct pb_transpose_args *t = args;
        if (t->rows == 0 || t->cols == 0)
            return PB_OK;
    } else if (strcmp(bench, "reduce") == 0) {
        const struct pb_reduce_args *r = args;
        if (r->n == 0) { /* the sum of nothing; work's counters stay as they are (zero) */
            pb_status st = pb_device_sync(dev);
            return st != PB_OK ? st : write_zeros(r->out, 0, pb_reduce_result_size(r->type));
        }
    } else if (strcmp(bench, "access") == 0) {
        if (((const struct pb_access_args *)args)->n == 0)
            return PB_OK;
    }
    *empty = false;
    return PB_OK;
}

pb_status pb__spmv_contents_check(pb_device *dev, const void *args)
{
    const struct pb_spmv_args *a = args;
    if (!a->idx || !a->idx->host || (a->format == PB_SPARSE_CSR && (!a->ptr || !a->ptr->host)))
        return PB_OK;
    const bool csr = a->format == PB_SPARSE_CSR;
    if (dev->spmv_valid.idx == a->idx->stamp && (!csr || dev->spmv_valid.ptr == a->ptr->stamp) &&
        dev->spmv_valid.rows == a->rows && dev->spmv_valid.cols == a->cols && dev->spmv_valid.width == a->width &&
        dev->spmv_valid.nnz == a->nnz && dev->spmv_valid.format == (int)a->format &&
        dev->spmv_valid.ptr_bits == a->ptr_bits)
        return PB_OK;
    const int32_t *idx = a->idx->host;
    size_t entries = csr ? (size_t)a->nnz : (size_t)a->rows * (size_t)a->width;
    if (csr) {
        const void *ptr = a->ptr->host;
        bool wide = a->ptr_bits == 64;
        for (int32_t r = 0; r <= a->rows; r++) {
            int64_t at = wide ? ((const int64_t *)ptr)[r] : ((const int32_t *)ptr)[r];
            int64_t before = r == 0 ? 0 : wide ? ((const int64_t *)ptr)[r - 1] : ((const int32_t *)ptr)[r - 1];
            if ((r == 0 && at != 0) || at < before || (r == a->rows && at != a->nnz))
                return pb__fail(PB_ERR_INVALID,
                                "spmv: row offset %d is %lld; offsets run from 0 to nnz (%lld), never decreasing", r,
                                (long long)at, (long long)a->nnz);
        }
    }
    for (size_t k = 0; k < entries; k++)
        if (idx[k] >= a->cols || (csr && idx[k] < 0))
            return pb__fail(PB_ERR_INVALID, "spmv: entry %zu has column %d, outside the matrix's %d columns", k, idx[k],
                            a->cols);
    dev->spmv_valid.ptr = csr ? a->ptr->stamp : 0, dev->spmv_valid.idx = a->idx->stamp;
    dev->spmv_valid.rows = a->rows, dev->spmv_valid.cols = a->cols, dev->spmv_valid.width = a->width;
    dev->spmv_valid.nnz = a->nnz, dev->spmv_valid.format = (int)a->format, dev->spmv_valid.ptr_bits = a->ptr_bits;
    return PB_OK;
}

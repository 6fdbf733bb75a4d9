/* Argument checks common to every variant of a kernel family, run before any
 * variant sees the arguments. */
#include <stdio.h>
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
    if ((st = check_matrix("A", g->a, g->m, g->k, g->lda, elt)) != PB_OK ||
        (st = check_matrix("B", g->b, g->k, g->n, g->ldb, elt)) != PB_OK ||
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
        (st = check_array("x", a->x, (size_t)a->cols, elt)) != PB_OK ||
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

static pb_status conv_args_check(const void *args)
{
    return pb__float_or_double("conv", ((const struct pb_conv_args *)args)->prec);
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

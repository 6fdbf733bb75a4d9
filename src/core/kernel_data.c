/* Workspace queries and the reduce types' sizes and names. */
#include <stdint.h>

#include "core/kernel_data.h"
#include "core/args.h"
#include "core/core.h"

const enum pb__access_pattern pb__access_offset = PB__ACCESS_OFFSET;
const enum pb__access_pattern pb__access_stride = PB__ACCESS_STRIDE;
const enum pb__access_pattern pb__access_shared = PB__ACCESS_SHARED;

const int pb__p2p_one_way = 1, pb__p2p_both_ways = 2;

int pb__p2p_directions(const struct pb_variant *v) { return v->data ? *(const int *)v->data : 1; }

bool pb__access_stride_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    if (((const struct pb_access_args *)args)->step == 0) {
        *why = "stride 0 is not a copy (the broadcast case is shared-stride's step 0)";
        return false;
    }
    return true;
}

pb_status pb_kernel_workspace(pb_device *dev, const char *bench, const char *variant, const void *args,
                              size_t *bytes)
{
    if (!bytes || !dev || !bench || !args)
        return pb__fail(PB_ERR_INVALID, "pb_kernel_workspace: %s is NULL",
                        !bytes ? "the size to fill" : !dev ? "the device" : !bench ? "the kernel family" : "args");
    *bytes = 0;
    if (!variant) {
        pb_status st = pb_kernel_default(dev, bench, args, &variant);
        if (st != PB_OK)
            return st;
    }
    const struct pb_variant *v = pb__variant_find(dev->backend, bench, variant);
    if (!v)
        return pb__fail(PB_ERR_NOT_FOUND, "backend %s has no %s variant '%s'", dev->backend->name, bench,
                        variant);
    if (v->data && (v->desc.flags & PB_VARIANT_WORKSPACE))
        *bytes = ((const struct pb__workspace *)v->data)->bytes(dev, args);
    return PB_OK;
}

size_t pb_reduce_elem_size(enum pb_reduce_type t) { return t == PB_REDUCE_INT ? 4 : sizeof(float); }

size_t pb_reduce_result_size(enum pb_reduce_type t) { return t == PB_REDUCE_FLOAT_DOUBLE ? sizeof(double) : 4; }

const char *pb_reduce_type_name(enum pb_reduce_type t)
{
    switch (t) {
    case PB_REDUCE_FLOAT: return "float";
    case PB_REDUCE_FLOAT_DOUBLE: return "float+double-sum";
    case PB_REDUCE_INT: return "int32";
    }
    return "unknown";
}

/* ---- argument checks ------------------------------------------------------ */

/* Bytes a rows x cols matrix with leading dimension ld spans; false on overflow. */
static bool span(size_t rows, size_t cols, size_t ld, size_t elt, size_t *bytes)
{
    size_t e;
    *bytes = 0;
    return rows == 0 || cols == 0 ||
           (pb__mul_size(rows - 1, ld, &e) && pb__add_size(e, cols, &e) && pb__mul_size(e, elt, bytes));
}

static pb_status need(const char *family, const char *name, const pb_buf *buf, size_t bytes)
{
    if (bytes && !buf)
        return pb__fail(PB_ERR_INVALID, "%s: %s is NULL", family, name);
    if (buf && bytes > buf->bytes)
        return pb__fail(PB_ERR_INVALID, "%s: %s needs %zu bytes, its buffer has %zu", family, name, bytes,
                        buf->bytes);
    return PB_OK;
}

/* What every variant reads; the output depends on the variant (pb__transpose_out_check). */
pb_status pb__transpose_args_check(const void *args)
{
    const struct pb_transpose_args *t = args;
    pb_status bad = pb__float_or_double("transpose", t->prec);
    if (bad != PB_OK)
        return bad;
    size_t in;
    if (t->ld_in < t->cols)
        return pb__fail(PB_ERR_INVALID, "transpose: ld_in (%zu) is less than the %zu columns", t->ld_in, t->cols);
    if (!span(t->rows, t->cols, t->ld_in, pb_precision_size(t->prec), &in))
        return pb__fail(PB_ERR_OVERFLOW, "transpose: size of in overflows");
    return need("transpose", "in", t->in, in);
}

/* Whether byte ranges [0, a_bytes) of a and [0, b_bytes) of b share memory:
 * the same buffer, or host memory wrapped twice. */
static bool overlap(const pb_buf *a, size_t a_bytes, const pb_buf *b, size_t b_bytes)
{
    if (!a || !b || !a_bytes || !b_bytes)
        return false;
    if (a == b)
        return true;
    uintptr_t a0 = (uintptr_t)a->host, b0 = (uintptr_t)b->host;
    return a->host && b->host && a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

/* The transpose is cols x rows (ld_out >= rows), a bound's copy rows x cols
 * (ld_out >= cols): each variant's own shape must fit out, which must not
 * overlap in (tiles would read what others wrote). */
pb_status pb__transpose_out_check(const void *args, bool copies)
{
    const struct pb_transpose_args *t = args;
    size_t elt = pb_precision_size(t->prec), out_rows = copies ? t->rows : t->cols,
           out_cols = copies ? t->cols : t->rows, in, out;
    const char *shape = copies ? "the copy (a bound)" : "the transpose";
    if (t->ld_out < out_cols)
        return pb__fail(PB_ERR_INVALID, "transpose: ld_out (%zu) is less than the %zu columns of %s", t->ld_out,
                        out_cols, shape);
    if (!span(out_rows, out_cols, t->ld_out, elt, &out) || !span(t->rows, t->cols, t->ld_in, elt, &in))
        return pb__fail(PB_ERR_OVERFLOW, "transpose: size of out overflows");
    pb_status st = need("transpose", "out", t->out, out);
    if (st == PB_OK && overlap(t->in, in, t->out, out))
        return pb__fail(PB_ERR_INVALID, "transpose: in and out share memory (no variant transposes in place): "
                        "give out a buffer of its own");
    return st;
}

pb_status pb__reduce_args_check(const void *args)
{
    const struct pb_reduce_args *r = args;
    if (r->type != PB_REDUCE_FLOAT && r->type != PB_REDUCE_FLOAT_DOUBLE && r->type != PB_REDUCE_INT)
        return pb__fail(PB_ERR_INVALID, "reduce: unknown type %d", (int)r->type);
    size_t in;
    if (!pb__mul_size(r->n, pb_reduce_elem_size(r->type), &in))
        return pb__fail(PB_ERR_OVERFLOW, "reduce: input size overflows");
    pb_status st = need("reduce", "in", r->in, in);
    if (st == PB_OK)
        st = need("reduce", "out", r->out, pb_reduce_result_size(r->type));
    if (st == PB_OK)
        st = need("reduce", "work", r->work, r->work_bytes);
    return st;
}

/* Every pattern writes at least n elements; the input's extent depends on
 * the pattern, which each variant knows. */
pb_status pb__access_args_check(const void *args)
{
    const struct pb_access_args *a = args;
    pb_status bad = pb__float_or_double("access", a->prec);
    if (bad != PB_OK)
        return bad;
    size_t out;
    if (!pb__mul_size(a->n, pb_precision_size(a->prec), &out))
        return pb__fail(PB_ERR_OVERFLOW, "access: size overflows");
    pb_status st = need("access", "out", a->out, out);
    return st != PB_OK ? st : need("access", "in", a->in, a->n ? 1 : 0);
}

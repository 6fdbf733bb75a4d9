/* Workspace queries and the reduce types' sizes and names. */
#include "core/kernel_data.h"
#include "core/core.h"

const enum pb__access_pattern pb__access_offset = PB__ACCESS_OFFSET;
const enum pb__access_pattern pb__access_stride = PB__ACCESS_STRIDE;
const enum pb__access_pattern pb__access_shared = PB__ACCESS_SHARED;

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
    *bytes = 0;
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

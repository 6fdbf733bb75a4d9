/* What the bandwidth-bound kernel families (transpose, reduce, access, p2p) keep in
 * a variant's `data`, so benchmarks and the library size buffers without
 * knowing variant names. */
#ifndef PARBENCH_KERNEL_DATA_H
#define PARBENCH_KERNEL_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include "core/backend_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `data` of a variant flagged PB_VARIANT_WORKSPACE. */
struct pb__workspace {
    size_t (*bytes)(const pb_device *dev, const void *args);
};

/* `data` of every access variant: which pattern it implements. */
enum pb__access_pattern { PB__ACCESS_OFFSET, PB__ACCESS_STRIDE, PB__ACCESS_SHARED };
extern const enum pb__access_pattern pb__access_offset, pb__access_stride, pb__access_shared;
/* supports() of every global-stride variant: a stride of 0 is not a copy. */
bool pb__access_stride_supports(const pb_device *dev, const void *args, const char **why);

/* `data` of every p2p variant: how many directions it copies at once
 * (pb_p2p_args.directions); pb__p2p_directions(v) reads it (1 without data). */
extern const int pb__p2p_one_way, pb__p2p_both_ways;
int pb__p2p_directions(const struct pb_variant *v);

#ifdef __cplusplus
}
#endif
#endif

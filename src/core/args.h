/* Argument checks shared by all variants of a kernel family. */
#ifndef PARBENCH_ARGS_H
#define PARBENCH_ARGS_H

#include <stdbool.h>

#include "parbench/pb.h"
#include "parbench/pb_backend.h"

/* Checks the family's argument struct (dimensions, leading dimensions, that
 * every buffer is dev's and large enough); families without a checker pass. */
pb_status pb__kernel_args_check(const pb_device *dev, const char *bench, const void *args);
pb_status pb__gemm_args_check(const void *args);
pb_status pb__spmv_args_check(const void *args);
/* PB_OK for float and double; PB_ERR_INVALID naming the family otherwise
 * (every family but gemm computes those two only). */
pb_status pb__float_or_double(const char *family, enum pb_precision p);
/* Whether gemm arguments ask for a launch shape (block_x, block_y, groups),
 * which only PB_VARIANT_SHAPED variants take. */
bool pb__gemm_shaped(const void *args);
struct pb_backend;
struct pb_variant;
/* Whether variant v of backend b computes gemm in precision p: float and
 * double always, the tensor-core types only when flagged PB_VARIANT_LOWP;
 * false with *why saying in one line where they run. */
bool pb__gemm_variant_takes(const struct pb_backend *b, const struct pb_variant *v, enum pb_precision p,
                            const char **why);
/* Whether spmv variant v of backend b reads these arguments' row offsets:
 * 32-bit always, 64-bit only when flagged PB_VARIANT_PTR64; false with *why
 * naming those that do. */
bool pb__spmv_variant_takes(const struct pb_backend *b, const struct pb_variant *v, const void *args,
                            const char **why);
/* The memory families' checks (kernel_data.c). */
pb_status pb__transpose_args_check(const void *args);
pb_status pb__reduce_args_check(const void *args);
pb_status pb__access_args_check(const void *args);

#endif

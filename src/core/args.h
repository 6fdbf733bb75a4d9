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
/* The buffers a run of the family writes (gemm's C, spmv's y, conv's tmp and
 * out, ...), up to 3, into out; their count. */
size_t pb__args_outputs(const char *bench, const void *args, pb_buf *out[3]);
/* Whether these checked arguments are an empty problem, one whose result
 * reads no input (nothing to compute; gemm with k = 0: C = beta * C; spmv of
 * a matrix without entries or columns: y = 0; reduce of n = 0: *out = 0).
 * Then *empty is set and the result written here, without any variant (which
 * may not take NULL for the buffers that hold nothing); blocking. */
pb_status pb__kernel_empty(pb_device *dev, const char *bench, const void *args, bool *empty);
/* spmv's arrays in host memory read once per content (their stamps):
 * CSR offsets from 0 to nnz, never decreasing, every column inside the
 * matrix (ELL: or negative, padding), which kernels index x with unchecked.
 * Arrays in device memory are trusted, as the vendors' libraries do
 * (pb_csr_upload makes valid ones). */
pb_status pb__spmv_contents_check(pb_device *dev, const void *args);
/* The memory families' checks (kernel_data.c). transpose's covers what every
 * variant reads; pb__transpose_out_check the output of a variant that
 * transposes or, copies true, of a bound that copies (PB_VARIANT_BOUND). */
pb_status pb__transpose_args_check(const void *args);
pb_status pb__transpose_out_check(const void *args, bool copies);
pb_status pb__reduce_args_check(const void *args);
pb_status pb__access_args_check(const void *args);

#endif

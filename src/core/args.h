/* Argument checks shared by all variants of a kernel family. */
#ifndef PARBENCH_ARGS_H
#define PARBENCH_ARGS_H

#include "parbench/pb.h"

/* Checks the family's argument struct (dimensions, leading dimensions, that
 * every buffer is large enough); families without a checker pass. */
pb_status pb__kernel_args_check(const char *bench, const void *args);
pb_status pb__gemm_args_check(const void *args);
pb_status pb__spmv_args_check(const void *args);
/* The memory families' checks (kernel_data.c). */
pb_status pb__transpose_args_check(const void *args);
pb_status pb__reduce_args_check(const void *args);
pb_status pb__access_args_check(const void *args);

#endif

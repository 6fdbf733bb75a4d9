/* parbench: status codes, version and the basic enums shared by every module.
 *
 * Every library function that can fail returns pb_status: 0 (PB_OK) on success,
 * a negative code otherwise. Library code never exits or aborts; the CLI maps a
 * status to one line on stderr and an exit code. */
#ifndef PARBENCH_PB_H
#define PARBENCH_PB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PB_VERSION_MAJOR 0
#define PB_VERSION_MINOR 1
#define PB_VERSION_PATCH 0

/* X(name, value, message): the one list of status codes. */
#define PB_STATUS_MAP(X)                                                         \
    X(OK, 0, "success")                                                          \
    X(ERR_INVALID, -1, "invalid argument")                                       \
    X(ERR_NOMEM, -2, "out of memory")                                            \
    X(ERR_UNSUPPORTED, -3, "not supported by this variant or backend")          \
    X(ERR_UNAVAILABLE, -4, "backend or device not available")                   \
    X(ERR_DEVICE, -5, "device or driver error")                                  \
    X(ERR_IO, -6, "input/output error")                                          \
    X(ERR_PARSE, -7, "malformed input")                                          \
    X(ERR_NOT_FOUND, -8, "not found")                                            \
    X(ERR_OVERFLOW, -9, "size overflow")                                         \
    X(ERR_INTERRUPTED, -10, "interrupted")                                       \
    X(ERR_VERIFY, -11, "result verification failed")

typedef enum pb_status {
#define PB__STATUS_ENUM(name, value, msg) PB_##name = value,
    PB_STATUS_MAP(PB__STATUS_ENUM)
#undef PB__STATUS_ENUM
} pb_status;

/* "ERR_NOMEM" etc.; "UNKNOWN" for a value outside the list. */
const char *pb_status_name(pb_status s);
/* Human-readable message, e.g. "out of memory". */
const char *pb_status_message(pb_status s);

/* Detail of the most recent failure in this thread (e.g. "cannot allocate
 * 64.0 GiB for A: 12.1 GiB available"), or "" when none was recorded. */
const char *pb_last_error(void);

/* "0.1.0" */
const char *pb_version(void);
/* Git commit the library was built from, or "unknown". */
const char *pb_git_commit(void);

/* Element types. FLOAT and DOUBLE hold inputs and outputs alike. The
 * tensor-core types (gemm only; pb_kernels.h) are the types of the INPUTS,
 * multiplied with fp32 accumulation into an fp32 output:
 *   PB_TF32  fp32 storage whose values kernels use as TF32 (10 explicit
 *            mantissa bits, fp32's range);
 *   PB_BF16  bfloat16 storage (8 exponent, 7 mantissa bits);
 *   PB_FP16  IEEE half storage (5 exponent, 10 mantissa bits).
 * Values may be appended, never renumbered. */
enum pb_precision { PB_FLOAT = 0, PB_DOUBLE = 1, PB_TF32 = 2, PB_BF16 = 3, PB_FP16 = 4 };

/* "float", "double", "tf32", "bf16", "fp16"; "unknown" for a value outside
 * the list. */
const char *pb_precision_name(enum pb_precision p);
/* Bytes of one element as stored (of the inputs, for the tensor-core types):
 * 4, 8, 4, 2, 2; 0 for a value outside the list. */
size_t pb_precision_size(enum pb_precision p);

/* Where a buffer lives. Host-memory backends (ref, openmp) treat DEVICE as
 * ordinary host memory. */
enum pb_mem {
    PB_MEM_DEVICE = 0,   /* device global memory */
    PB_MEM_PINNED = 1,   /* page-locked host memory */
    PB_MEM_PAGEABLE = 2  /* ordinary host memory */
};

#ifdef __cplusplus
}
#endif
#endif

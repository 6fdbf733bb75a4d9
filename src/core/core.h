/* Internal helpers shared by every module: error detail, host memory with an
 * availability check, overflow-checked size arithmetic, small formatting. */
#ifndef PARBENCH_CORE_H
#define PARBENCH_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parbench/pb.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PB__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PB__PRINTF(f, a)
#endif

/* Record a detail message for pb_last_error() and return s. */
pb_status pb__fail(pb_status s, const char *fmt, ...) PB__PRINTF(2, 3);
void pb__clear_error(void);
/* Appends to buf (len bytes) at *at, moving *at on; what does not fit is cut. */
void pb__appendf(char *buf, size_t len, size_t *at, const char *fmt, ...) PB__PRINTF(4, 5);

/* 64-byte aligned host memory. Refuses (PB_ERR_NOMEM with a message naming
 * `what`) requests larger than the memory currently available, so an absurd
 * size gets a clear error instead of the kernel's OOM killer. */
pb_status pb__host_alloc(size_t bytes, const char *what, void **out);
void pb__host_free(void *p);
/* MemAvailable in bytes, or SIZE_MAX when unknown; PB_TEST_MEM_AVAILABLE=BYTES
 * (k/M/G suffixes) stands in for it in tests of the refusals. */
size_t pb__host_mem_available(void);
/* Whether a request of `bytes` exceeds MemAvailable. Requests under 16 MiB
 * are not weighed: reading /proc/meminfo for each of a million small
 * buffers took minutes, and a failed allocation still says so. */
bool pb__host_mem_lacks(size_t bytes);
/* A problem's whole host footprint weighed before any of it is touched
 * (lazily mapped allocations each pass pb__host_alloc's own check, and
 * touching them all brings the OOM killer): PB_OK, or PB_ERR_NOMEM with
 * "WHO needs N of host memory WHAT, M is available". */
pb_status pb__host_mem_need(double bytes, const char *who, const char *what);

/* a * b and a + b into *out; false on overflow. */
static inline bool pb__mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool pb__add_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* "1.5 GiB", "512 B" into buf. Returns buf. */
const char *pb__format_bytes(double bytes, char *buf, size_t len);

/* Monotonic clock in seconds. */
double pb__now(void);

/* A whole text file as a NUL-terminated string (caller frees). PB_ERR_NOT_FOUND
 * when it does not exist (no message), PB_ERR_IO with one otherwise,
 * PB_ERR_PARSE for a NUL byte or more than PB_READ_FILE_MAX bytes. */
#define PB_READ_FILE_MAX (256 << 20)
pb_status pb__read_file(const char *path, char **text);
/* Whether two existing paths name the same file. */
bool pb__same_file(const char *a, const char *b);
/* The path among paths[0..n) that names the same file as path, or NULL
 * (an output that would overwrite an input, a file named twice). */
const char *pb__same_file_among(const char *path, char *const *paths, int n);

#ifdef __cplusplus
}
#endif
#endif

/* The GEMM benchmark's host side (seeded inputs and the double-precision
 * oracle), shared with the benchmarks that run GEMMs (overlap). */
#ifndef PARBENCH_GEMM_HOST_H
#define PARBENCH_GEMM_HOST_H

#include "bench/bench.h"

/* A gemm problem m x n x k. */
struct pb_problem pb__gemm_problem(enum pb_precision prec, int64_t m, int64_t n, int64_t k);
/* Inputs A (m x k), B (k x n) and the oracle for p; see gemm.c. */
pb_status pb__gemm_host_prepare(const struct pb_problem *p, uint64_t seed, void **host);
/* The same for given inputs a (m x k) and b (k x n), row-major in the
 * problem's precision, allocated with pb__host_alloc: the host takes them
 * over (and frees them on failure too); seed draws the checks' vectors. */
pb_status pb__gemm_host_adopt(const struct pb_problem *p, uint64_t seed, void *a, void *b, void **host);
void pb__gemm_host_release(void *host);
/* Input 'a' or 'b', row-major in the problem's precision. */
const void *pb__gemm_host_input(const void *host, char which);
/* Compare C (host memory, m x n, leading dimension n; double for double,
 * float otherwise, the tensor-core types included) with the oracle (see
 * gemm.c); corrupt: first add a fault to a seeded element. PB_ERR_NOMEM when
 * the check's scratch cannot be had. */
pb_status pb__gemm_host_check(const void *host, void *c, bool corrupt, struct pb_check *out);

#endif

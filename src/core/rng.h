/* Seeded, reproducible random inputs (xoshiro256** seeded by splitmix64):
 * the same seed gives the same inputs on every machine. */
#ifndef PARBENCH_RNG_H
#define PARBENCH_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "parbench/pb.h"

struct pb_rng {
    uint64_t s[4];
};

/* stream separates independent inputs drawn from one seed (A, B, ...). */
void pb__rng_init(struct pb_rng *r, uint64_t seed, uint64_t stream);
uint64_t pb__rng_next(struct pb_rng *r);
/* Uniform in [-1, 1), never exactly 0 (so an input is never all zeros).
 * Rounded to float the upper end can reach 1.0f. */
double pb__rng_uniform(struct pb_rng *r);
/* Element `index` of a seeded stream, uniform in [-1, 1) like
 * pb__rng_uniform, computed on its own (splitmix64 of the counter): any
 * part of a large input can be made without making what precedes it (each
 * rank its block of a distributed matrix). Not the values pb__rng_fill
 * draws for the same seed. */
double pb__rng_at(uint64_t seed, uint64_t stream, uint64_t index);
/* n distinct row indices of 0..m-1 (2 < n < m), sorted: the first, the last
 * and seeded ones in between (the rows a sampled oracle covers). */
void pb__rng_sample_rows(uint64_t seed, size_t m, size_t *rows, size_t n);
/* Fill n elements of an array of precision prec with uniform values; the
 * tensor-core types get the float values (the same draws) rounded to them. */
void pb__rng_fill(struct pb_rng *r, void *dst, enum pb_precision prec, size_t n);

#endif

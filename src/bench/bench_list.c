/* The benchmark table: adding a benchmark = one file + one line here. */
#include <string.h>

#include "bench/bench.h"

extern const struct pb_bench pb__bench_gemm;

static const struct pb_bench *const benches[] = {
    &pb__bench_gemm,
};

size_t pb__bench_count(void) { return sizeof benches / sizeof benches[0]; }

const struct pb_bench *pb__bench_at(size_t i) { return i < pb__bench_count() ? benches[i] : NULL; }

const struct pb_bench *pb__bench_find(const char *name)
{
    for (size_t i = 0; i < pb__bench_count(); i++)
        if (strcmp(benches[i]->name, name) == 0)
            return benches[i];
    return NULL;
}

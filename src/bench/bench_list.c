/* The benchmark table: adding a benchmark = one file + one line here. */
#include <string.h>

#include "bench/bench.h"

extern const struct pb_bench pb__bench_gemm, pb__bench_bandwidth, pb__bench_overlap, pb__bench_spmv;
extern const struct pb_bench pb__bench_transpose, pb__bench_reduce, pb__bench_access;
extern const struct pb_bench pb__bench_peak;
extern const struct pb_bench pb__bench_conv, pb__bench_conv_stream;
extern const struct pb_bench pb__bench_allreduce, pb__bench_allgather, pb__bench_alltoall, pb__bench_broadcast;
extern const struct pb_bench pb__bench_pingpong, pb__bench_spmv_dist, pb__bench_p2p, pb__bench_gemm_dist;

static const struct pb_bench *const benches[] = {
    &pb__bench_bandwidth,
    &pb__bench_gemm,
    &pb__bench_overlap,
    &pb__bench_spmv,
    &pb__bench_transpose,
    &pb__bench_reduce,
    &pb__bench_access,
    &pb__bench_peak,
    &pb__bench_conv,
    &pb__bench_conv_stream,
    &pb__bench_allreduce,
    &pb__bench_allgather,
    &pb__bench_alltoall,
    &pb__bench_broadcast,
    &pb__bench_pingpong,
    &pb__bench_spmv_dist,
    &pb__bench_p2p,
    &pb__bench_gemm_dist,
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

struct pb_roof pb__roof_memory(const char *variant, const char *backend, const char *device, bool double_prec)
{
    (void)variant, (void)backend, (void)device, (void)double_prec;
    return (struct pb_roof){PB_ROOF_NONE, PB_ROOF_MEMORY};
}

struct pb_roof pb__roof_none(const char *variant, const char *backend, const char *device, bool double_prec)
{
    (void)variant, (void)backend, (void)device, (void)double_prec;
    return (struct pb_roof){PB_ROOF_NONE, PB_ROOF_NONE};
}

struct pb_roof pb__bench_roof(const struct pb_bench *bench, const char *variant, const char *backend,
                              const char *device, bool double_prec)
{
    if (bench && bench->roof)
        return bench->roof(variant, backend, device, double_prec);
    return (struct pb_roof){PB_ROOF_FMA, PB_ROOF_MEMORY};
}

const struct pb_variant *pb__bench_variant(const struct pb_bench *bench, const struct pb_backend *b,
                                           size_t i)
{
    for (size_t k = 0; k < b->n_variants; k++)
        if (strcmp(b->variants[k].desc.bench, bench->name) == 0 && i-- == 0)
            return &b->variants[k];
    return i < bench->n_variants ? &bench->variants[i] : NULL;
}

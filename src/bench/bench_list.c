/* The benchmark table: adding a benchmark = one file + one line here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "core/core.h"
#include "core/precision.h"

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

struct pb_roof pb__roof_memory(const char *variant, const char *backend, const char *device, enum pb_precision prec)
{
    (void)variant, (void)backend, (void)device, (void)prec;
    return (struct pb_roof){PB_ROOF_NONE, PB_ROOF_MEMORY};
}

struct pb_roof pb__roof_none(const char *variant, const char *backend, const char *device, enum pb_precision prec)
{
    (void)variant, (void)backend, (void)device, (void)prec;
    return (struct pb_roof){PB_ROOF_NONE, PB_ROOF_NONE};
}

struct pb_roof pb__bench_roof(const struct pb_bench *bench, const char *variant, const char *backend,
                              const char *device, enum pb_precision prec)
{
    if (bench && bench->roof)
        return bench->roof(variant, backend, device, prec);
    return (struct pb_roof){PB_ROOF_FMA, PB_ROOF_MEMORY};
}

static unsigned takes(const struct pb_bench *bench)
{
    return bench->precisions ? bench->precisions : PB_PREC(PB_FLOAT) | PB_PREC(PB_DOUBLE);
}

const char *pb__bench_precisions(const struct pb_bench *bench, char *buf, size_t len)
{
    unsigned set = takes(bench);
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (unsigned i = 0; i < PB__PRECISIONS && used < len; i++) {
        if (!(set & PB_PREC(i)))
            continue;
        bool last = (set >> (i + 1)) == 0;
        int n = snprintf(buf + used, len - used, "%s%s", !used ? "" : last ? " or " : ", ",
                         pb_precision_name((enum pb_precision)i));
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

double pb__exposed_comm(double median, double compute)
{
    return compute <= 1.1 * median ? fmax(0, median - compute) : NAN;
}

pb_status pb__bench_takes(const struct pb_bench *bench, enum pb_precision p)
{
    if ((unsigned)p < PB__PRECISIONS && (takes(bench) & PB_PREC(p)))
        return PB_OK;
    char list[96];
    return pb__fail(PB_ERR_INVALID, "%s has no precision %s: %s", bench->name, pb_precision_name(p),
                    pb__bench_precisions(bench, list, sizeof list));
}

const struct pb_variant *pb__bench_variant(const struct pb_bench *bench, const struct pb_backend *b,
                                           size_t i)
{
    for (size_t k = 0; k < b->n_variants; k++)
        if (strcmp(b->variants[k].desc.bench, bench->name) == 0 && i-- == 0)
            return &b->variants[k];
    return i < bench->n_variants ? &bench->variants[i] : NULL;
}

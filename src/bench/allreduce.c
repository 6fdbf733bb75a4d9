/* allreduce: every rank's vector summed into every rank (distributed).
 *
 * Rates as nccl-tests defines them: the algorithm bandwidth (GB/s column) is
 * the message size over the time, the bus bandwidth (busbw_gbps) that times
 * 2 (n - 1) / n, which compares with the links' speed whatever the rank count.
 * Variants: `mpi` hands the buffers to MPI_Allreduce where they are (host
 * memory, or device memory when MPI is CUDA-aware), `mpi-staged` goes
 * through pinned host buffers, the CUDA backend's `nccl` is ncclAllReduce.
 *
 * Verified exactly: rank r's element i is (r + 1) * (i mod 13 + 1), whose sum
 * over the ranks is an integer every float holds exactly at these sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "comm/comm.h"
#include "core/core.h"

enum { P_SIZE };

static const struct pb_param_def ar_params[] = {
    [P_SIZE] = {"size", "bytes per rank (rounded down to whole elements); k/M/G suffixes", "8:1G:x8"},
};

#define CHUNK 65536 /* elements made, downloaded and compared at a time */

struct ar_state {
    struct pb_collective_args args;
    pb_buf *send;
    enum pb_precision prec;
    void *chunk;  /* CHUNK elements */
    double *want; /* CHUNK elements */
};

static size_t elem_size(const struct pb_problem *p) { return pb_precision_size(p->prec); }
static size_t count_of(const struct pb_problem *p) { return (size_t)p->v[P_SIZE] / elem_size(p); }

static pb_status ar_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                         size_t max, size_t *n_out)
{
    size_t n = 0;
    for (size_t i = 0; i < l->count[P_SIZE]; i++) {
        int64_t size = l->values[P_SIZE][i];
        if (size < (int64_t)pb_precision_size(prec) || size > ((int64_t)1 << 40))
            return pb__fail(PB_ERR_INVALID, "--size %lld: between one element and 1 TiB", (long long)size);
        if (n >= max)
            return pb__fail(PB_ERR_INVALID, "allreduce: more than %zu problems", max);
        out[n++] = (struct pb_problem){.prec = prec, .v = {[P_SIZE] = size}};
    }
    *n_out = n;
    return PB_OK;
}

static void ar_describe(const struct pb_problem *p, char *buf, size_t len)
{
    pb__format_bytes((double)(count_of(p) * elem_size(p)), buf, len);
}

/* Algorithm bytes: the message each rank contributes. */
static double ar_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)v, (void)host;
    return (double)(count_of(p) * elem_size(p));
}

static pb_status ar_prepare(const struct pb_problem *p, uint64_t seed, void **host)
{
    (void)p, (void)seed;
    *host = NULL; /* each rank makes its part at bind time */
    return PB_OK;
}

static void ar_release(void *host) { (void)host; }

static void ar_unbind(void *state)
{
    struct ar_state *s = state;
    if (!s)
        return;
    pb_buf_free(s->send);
    pb_buf_free(s->args.recv);
    pb_buf_free(s->args.stage_send);
    pb_buf_free(s->args.stage_recv);
    pb__host_free(s->chunk);
    free(s->want);
    free(s);
}

static double element(int rank, size_t i) { return (double)(rank + 1) * (double)(i % 13 + 1); }

static void store(enum pb_precision prec, void *dst, size_t i, double x)
{
    if (prec == PB_FLOAT)
        ((float *)dst)[i] = (float)x;
    else
        ((double *)dst)[i] = x;
}

static pb_status ar_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                         void **state, const void **args)
{
    (void)v, (void)host;
    pb_comm *comm = pb__comm_world();
    int rank = pb__comm_rank(comm);
    size_t count = count_of(p), bytes = count * elem_size(p);
    struct ar_state *s = calloc(1, sizeof *s);
    pb_status st = s ? PB_OK : pb__fail(PB_ERR_NOMEM, "allreduce: out of host memory");
    if (st == PB_OK) {
        s->prec = p->prec;
        s->args = (struct pb_collective_args){.comm = comm, .count = count,
                                              .type = p->prec == PB_FLOAT ? PB_COMM_FLOAT : PB_COMM_DOUBLE};
        st = pb__host_alloc(CHUNK * elem_size(p), "the allreduce chunk", &s->chunk);
    }
    if (st == PB_OK && !(s->want = malloc(CHUNK * sizeof *s->want)))
        st = pb__fail(PB_ERR_NOMEM, "allreduce: out of host memory");
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &s->send);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, bytes, &s->args.recv);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_PINNED, bytes, &s->args.stage_send);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_PINNED, bytes, &s->args.stage_recv);
    for (size_t at = 0; st == PB_OK && at < count; at += CHUNK) {
        size_t n = count - at < CHUNK ? count - at : CHUNK;
        for (size_t i = 0; i < n; i++)
            store(p->prec, s->chunk, i, element(rank, at + i));
        st = pb_buf_write(s->send, at * elem_size(p), s->chunk, n * elem_size(p));
    }
    /* Buffers may fail on one rank only (memory): no rank goes on alone. */
    st = pb__comm_agree(comm, st);
    if (st != PB_OK) {
        ar_unbind(s);
        return st;
    }
    s->args.send = s->send;
    *state = s;
    *args = &s->args;
    return PB_OK;
}

static pb_status ar_poison(void *state)
{
    struct ar_state *s = state;
    return pb_buf_fill_bytes(s->args.recv, 0xFF);
}

static pb_status ar_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    (void)host;
    struct ar_state *s = state;
    int ranks = pb__comm_size(s->args.comm);
    size_t count = s->args.count, esize = pb_precision_size(s->prec);
    pb__check_begin(out, 0, "full");
    for (size_t at = 0; at < count; at += CHUNK) {
        size_t n = count - at < CHUNK ? count - at : CHUNK;
        pb_status st = pb_buf_read(s->args.recv, at * esize, s->chunk, n * esize);
        if (st != PB_OK)
            return st;
        for (size_t i = 0; i < n; i++) /* sum over r of (r + 1) = n (n + 1) / 2 */
            s->want[i] = 0.5 * ranks * (ranks + 1) * (double)((at + i) % 13 + 1);
        if (corrupt && at == 0)
            store(s->prec, s->chunk, n / 2, s->want[n / 2] + 1);
        pb__check_add(out, s->chunk, s->prec, s->want, n, at);
    }
    pb__check_end(out);
    return PB_OK;
}

static void ar_extras(void *state, const struct pb_stats *time, double *out)
{
    struct ar_state *s = state;
    double n = pb__comm_size(s->args.comm), bytes = (double)(s->args.count * pb_precision_size(s->prec));
    out[0] = time->median > 0 ? bytes * 2 * (n - 1) / n / time->median * 1e-9 : NAN;
}

/* ---- the MPI variants ----------------------------------------------------- */

/* The address MPI can take for b: host memory, or CUDA device memory when the
 * MPI library is CUDA-aware; NULL otherwise. */
static void *mpi_address(const pb_buf *b, const pb_comm *comm)
{
    if (pb_buf_host_ptr(b))
        return pb_buf_host_ptr(b);
    if (pb__comm_cuda_aware(comm) && strcmp(pb_backend_name(pb_device_backend(b->dev)), "cuda") == 0)
        return b->handle;
    return NULL;
}

static bool mpi_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    const struct pb_collective_args *a = args;
    if (mpi_address(a->send, a->comm) && mpi_address(a->recv, a->comm))
        return true;
    *why = "device memory MPI cannot address (not CUDA-aware: MPIX_Query_cuda_support); see mpi-staged";
    return false;
}

static pb_status mpi_run(pb_device *dev, const void *args, pb_stream *stream)
{
    (void)dev, (void)stream;
    const struct pb_collective_args *a = args;
    return pb__comm_allreduce(a->comm, mpi_address(a->send, a->comm), mpi_address(a->recv, a->comm), a->count,
                              a->type, PB_COMM_SUM);
}

static pb_status mpi_staged_run(pb_device *dev, const void *args, pb_stream *stream)
{
    (void)dev, (void)stream;
    const struct pb_collective_args *a = args;
    size_t bytes = a->count * pb__comm_type_size(a->type);
    pb_status st = pb_buf_copy(a->stage_send, 0, a->send, 0, bytes, NULL);
    if (st == PB_OK)
        st = pb__comm_allreduce(a->comm, pb_buf_host_ptr(a->stage_send), pb_buf_host_ptr(a->stage_recv),
                                a->count, a->type, PB_COMM_SUM);
    if (st == PB_OK)
        st = pb_buf_copy(a->recv, 0, a->stage_recv, 0, bytes, NULL);
    return st;
}

static const struct pb_variant ar_variants[] = {
    {{"allreduce", "mpi", "MPI_Allreduce on the buffers where they are (host, or device if MPI is CUDA-aware)", 0},
     mpi_supports, mpi_run, NULL},
    {{"allreduce", "mpi-staged", "device -> pinned host, MPI_Allreduce, pinned host -> device", 0}, NULL,
     mpi_staged_run, NULL},
};

static const char *const ar_extra_names[] = {"busbw_gbps"};

const struct pb_bench pb__bench_allreduce = {
    .name = "allreduce",
    .roof = pb__roof_none, /* no peer-link or network ceiling is measured */
    .summary = "sum of every rank's vector on every rank (MPI, NCCL), distributed over the ranks",
    .flop_model = "-",
    .byte_model = "bytes per rank (algorithm bandwidth; busbw_gbps = that x 2(n-1)/n)",
    .distributed = true,
    .params = ar_params,
    .n_params = sizeof ar_params / sizeof ar_params[0],
    .extra_names = ar_extra_names,
    .n_extras = 1,
    .extras = ar_extras,
    .plan = ar_plan,
    .describe = ar_describe,
    .bytes = ar_bytes,
    .prepare = ar_prepare,
    .release = ar_release,
    .bind = ar_bind,
    .poison = ar_poison,
    .check = ar_check,
    .unbind = ar_unbind,
    .variants = ar_variants,
    .n_variants = sizeof ar_variants / sizeof ar_variants[0],
};

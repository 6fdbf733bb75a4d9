/* The collectives people run with nccl-tests and the OSU benchmarks, across
 * the ranks (distributed): allreduce, allgather, alltoall, broadcast, and
 * pingpong between ranks 0 and 1.
 *
 * One benchmark per operation, so rows, files and `parbench scaling` name the
 * operation, all made from one table (struct coll_op): what each rank sends
 * and must hold after, the MPI call and the bus-bandwidth factor. The rest is
 * shared: sizes, buffers, filling, poisoning, the exact check and the
 * variants. `mpi` hands the buffers to MPI where they are: host memory (ref,
 * openmp), or CUDA device memory when MPI is CUDA-aware (device-direct; else
 * UNSUPPORTED); `mpi-staged` goes device -> pinned host -> MPI -> pinned host
 * -> device; the CUDA backend's `nccl` is the NCCL call (backends/cuda/nccl.cu).
 * Each OK row names its path in its reason: host, device-direct, staged,
 * NCCL (a variant's .data, or for `mpi` where the buffers are). Only
 * mpi-staged has staging buffers; what the ranks of a node hold in host
 * memory together is weighed before any of it is allocated (host_fits).
 *
 * --size is nccl-tests' size S: the message (allreduce, broadcast, pingpong)
 * or the whole buffer of one piece per rank (allgather: the gathered result;
 * alltoall: each rank's send buffer), rounded down to whole elements, and to
 * a whole number per rank of at least one. GB/s is the algorithm bandwidth
 * S / time; busbw_gbps that times nccl-tests' factor for n ranks (allreduce
 * 2(n-1)/n, allgather and alltoall (n-1)/n, broadcast 1), which compares with
 * the links' speed whatever n is. pingpong times itself: rank 0's round trip
 * / 2 (the one-way time), so its GB/s is S over the one-way time.
 *
 * Verified exactly on every rank: rank r's element i is value(r, i), an
 * integer below 2^24 (exact in float) hashed from (r, i), so a receiver can
 * check every element and an element from the wrong rank or offset fails;
 * allreduce keeps (r + 1) * (i mod 13 + 1), whose sum over the ranks is as
 * exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "comm/comm.h"
#include "core/core.h"

enum { P_SIZE, P_OP }; /* P_OP is no option: the operation, set by plan */

#define CHUNK 65536 /* elements made, downloaded and compared at a time */
#define PINGPONG_TAG 11

/* Elements of one rank's buffers for one call. */
struct coll_layout {
    size_t send; /* sent from the send buffer (the recv buffer when in place) */
    size_t recv; /* received into the recv buffer (poisoned before each run) */
    size_t held; /* recv[0, held) must hold want() after the call (held >= recv) */
    bool in_place;
};

struct coll_op {
    const char *name;
    /* --size is the whole buffer of one piece per rank (the count is a piece) */
    bool pieces;
    /* bus bandwidth / algorithm bandwidth for n ranks; NULL = no busbw column */
    double (*busbw)(double n);
    void (*layout)(int rank, int ranks, size_t count, struct coll_layout *out);
    double (*sent)(int rank, size_t i); /* element i of rank's send buffer */
    /* element i of what rank holds after the call */
    double (*want)(int rank, int ranks, size_t count, size_t i);
    /* The MPI call on host-addressable buffers (host, pinned or device memory
     * MPI takes); send == recv when in place. */
    pb_status (*mpi)(const struct pb_collective_args *a, void *send, void *recv);
    /* mpi-staged when the copies cannot all come before and after the call;
     * NULL = device -> host copy, mpi(), host -> device copy. */
    pb_status (*staged)(const struct pb_collective_args *a);
};

/* An integer below 2^24 from (rank, i): splitmix64's finaliser. */
static double value(int rank, size_t i)
{
    uint64_t z = ((uint64_t)rank << 40) + (uint64_t)i + 1; /* i < 2^40: sizes are at most 1 TiB */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return (double)(z >> 40);
}

static size_t elem_bytes(const struct pb_collective_args *a) { return a->count * pb__comm_type_size(a->type); }

static void same_layout(size_t n, struct coll_layout *out) { *out = (struct coll_layout){n, n, n, false}; }

/* ---- allreduce: recv = the sum over the ranks of send ------------------- */

static double allreduce_busbw(double n) { return 2 * (n - 1) / n; }

static void allreduce_layout(int rank, int ranks, size_t count, struct coll_layout *out)
{
    (void)rank, (void)ranks;
    same_layout(count, out);
}

static double allreduce_sent(int rank, size_t i) { return (double)(rank + 1) * (double)(i % 13 + 1); }

static double allreduce_want(int rank, int ranks, size_t count, size_t i)
{
    (void)rank, (void)count; /* sum over r of (r + 1) = n (n + 1) / 2 */
    return 0.5 * ranks * (ranks + 1) * (double)(i % 13 + 1);
}

static pb_status allreduce_mpi(const struct pb_collective_args *a, void *send, void *recv)
{
    return pb__comm_allreduce(a->comm, send, recv, a->count, a->type, PB_COMM_SUM);
}

/* ---- allgather: piece r of recv = rank r's send -------------------------- */

static double pieces_busbw(double n) { return (n - 1) / n; }

static void allgather_layout(int rank, int ranks, size_t count, struct coll_layout *out)
{
    (void)rank;
    *out = (struct coll_layout){count, count * (size_t)ranks, count * (size_t)ranks, false};
}

static double allgather_want(int rank, int ranks, size_t count, size_t i)
{
    (void)rank, (void)ranks;
    return value((int)(i / count), i % count);
}

static pb_status allgather_mpi(const struct pb_collective_args *a, void *send, void *recv)
{
    return pb__comm_allgather(a->comm, send, elem_bytes(a), recv);
}

/* ---- alltoall: piece r of recv on rank q = piece q of rank r's send ------ */

static void alltoall_layout(int rank, int ranks, size_t count, struct coll_layout *out)
{
    (void)rank;
    same_layout(count * (size_t)ranks, out);
}

static double alltoall_want(int rank, int ranks, size_t count, size_t i)
{
    (void)ranks;
    return value((int)(i / count), (size_t)rank * count + i % count);
}

static pb_status alltoall_mpi(const struct pb_collective_args *a, void *send, void *recv)
{
    return pb__comm_alltoall(a->comm, send, elem_bytes(a), recv);
}

/* ---- broadcast from rank 0, in place (its buffer is never poisoned) ----- */

static double broadcast_busbw(double n)
{
    (void)n;
    return 1;
}

static void broadcast_layout(int rank, int ranks, size_t count, struct coll_layout *out)
{
    (void)ranks;
    *out = (struct coll_layout){rank == 0 ? count : 0, rank == 0 ? 0 : count, count, true};
}

static double broadcast_want(int rank, int ranks, size_t count, size_t i)
{
    (void)rank, (void)ranks, (void)count;
    return value(0, i);
}

static pb_status broadcast_mpi(const struct pb_collective_args *a, void *send, void *recv)
{
    return pb__comm_bcast(a->comm, pb__comm_rank(a->comm) == 0 ? send : recv, elem_bytes(a), 0);
}

/* ---- pingpong: rank 0 sends, rank 1 answers with its own message -------- */

static void pingpong_layout(int rank, int ranks, size_t count, struct coll_layout *out)
{
    (void)ranks;
    same_layout(rank < 2 ? count : 0, out);
}

static double pingpong_want(int rank, int ranks, size_t count, size_t i)
{
    (void)ranks, (void)count;
    return value(1 - rank, i);
}

/* Rank 1 says it is there before rank 0 starts its clock, so the round trip
 * does not hold rank 1's late start (ranks leave the runner's common start
 * at slightly different times). */
static pb_status pingpong_ready(const struct pb_collective_args *a, int rank)
{
    char none = 0;
    return rank == 0 ? pb__comm_recv(a->comm, &none, 0, 1, PINGPONG_TAG)
                     : pb__comm_send(a->comm, &none, 0, 0, PINGPONG_TAG);
}

/* Ranks 0 and 1 only (the others have nothing to do); rank 0 times the round
 * trip. An answer that fails is not sent: MPI's errors here mean the
 * connection is gone. */
static pb_status pingpong_mpi(const struct pb_collective_args *a, void *send, void *recv)
{
    int rank = pb__comm_rank(a->comm);
    size_t bytes = elem_bytes(a);
    *a->seconds = 0;
    if (rank > 1)
        return PB_OK;
    pb_status st = pingpong_ready(a, rank);
    if (st != PB_OK)
        return st;
    double t0 = pb__now();
    st = rank == 0 ? pb__comm_send(a->comm, send, bytes, 1, PINGPONG_TAG)
                   : pb__comm_recv(a->comm, recv, bytes, 0, PINGPONG_TAG);
    if (st == PB_OK)
        st = rank == 0 ? pb__comm_recv(a->comm, recv, bytes, 1, PINGPONG_TAG)
                       : pb__comm_send(a->comm, send, bytes, 0, PINGPONG_TAG);
    if (rank == 0)
        *a->seconds = (pb__now() - t0) / 2;
    return st;
}

/* Each way is device -> host, MPI, host -> device, so rank 1 copies between
 * its receive and its answer. A failed copy still lets the message go: the
 * other rank would wait for it. */
static pb_status pingpong_staged(const struct pb_collective_args *a)
{
    int rank = pb__comm_rank(a->comm);
    size_t bytes = elem_bytes(a);
    *a->seconds = 0;
    if (rank > 1)
        return PB_OK;
    void *out = pb_buf_host_ptr(a->stage_send), *in = pb_buf_host_ptr(a->stage_recv);
    pb_status st = pingpong_ready(a, rank), sent;
    if (st != PB_OK)
        return st;
    double t0 = pb__now();
    if (rank == 0) {
        st = pb_buf_copy(a->stage_send, 0, a->send, 0, bytes, NULL);
        sent = pb__comm_send(a->comm, out, bytes, 1, PINGPONG_TAG);
        if (sent == PB_OK)
            sent = pb__comm_recv(a->comm, in, bytes, 1, PINGPONG_TAG);
        if (st == PB_OK && (st = sent) == PB_OK)
            st = pb_buf_copy(a->recv, 0, a->stage_recv, 0, bytes, NULL);
        *a->seconds = (pb__now() - t0) / 2;
        return st;
    }
    if ((sent = pb__comm_recv(a->comm, in, bytes, 0, PINGPONG_TAG)) != PB_OK)
        return sent;
    st = pb_buf_copy(a->recv, 0, a->stage_recv, 0, bytes, NULL);
    pb_status copied = pb_buf_copy(a->stage_send, 0, a->send, 0, bytes, NULL);
    sent = pb__comm_send(a->comm, out, bytes, 0, PINGPONG_TAG);
    return st != PB_OK ? st : copied != PB_OK ? copied : sent;
}

/* Indexed by enum pb_collective. */
static const struct coll_op ops[] = {
    [PB_COLL_ALLREDUCE] = {"allreduce", false, allreduce_busbw, allreduce_layout, allreduce_sent, allreduce_want,
                           allreduce_mpi, NULL},
    [PB_COLL_ALLGATHER] = {"allgather", true, pieces_busbw, allgather_layout, value, allgather_want, allgather_mpi,
                           NULL},
    [PB_COLL_ALLTOALL] = {"alltoall", true, pieces_busbw, alltoall_layout, value, alltoall_want, alltoall_mpi,
                          NULL},
    [PB_COLL_BROADCAST] = {"broadcast", false, broadcast_busbw, broadcast_layout, value, broadcast_want,
                           broadcast_mpi, NULL},
    [PB_COLL_PINGPONG] = {"pingpong", false, NULL, pingpong_layout, value, pingpong_want, pingpong_mpi,
                          pingpong_staged},
};

/* ---- the benchmark, shared by every operation --------------------------- */

struct coll_state {
    struct pb_collective_args args;
    const struct coll_op *op;
    struct coll_layout layout;
    pb_buf *send; /* NULL when in place or nothing is sent */
    enum pb_precision prec;
    double seconds; /* pingpong's own time of the last run */
    const char *path; /* how the data moved, for the row */
    void *chunk;    /* CHUNK elements */
    double *want;   /* CHUNK elements */
};

/* The mpi variant's .data: its path depends on where the buffers are. */
static const char where_they_are[] = "host or device-direct";
/* mpi-staged's: the only variant that uses the pinned staging buffers. */
static const char staged[] = "staged";

static size_t elem_size(const struct pb_problem *p) { return pb_precision_size(p->prec); }
static const struct coll_op *op_of(const struct pb_problem *p) { return &ops[p->v[P_OP]]; }

/* Elements per piece: the whole size, or its n-th (at least one). */
static size_t count_of(const struct pb_problem *p, int ranks)
{
    size_t n = (size_t)p->v[P_SIZE] / elem_size(p);
    if (!op_of(p)->pieces)
        return n;
    return n / (size_t)ranks ? n / (size_t)ranks : 1;
}

/* nccl-tests' size S in bytes: the message, or every piece. */
static size_t size_of(const struct pb_problem *p)
{
    int ranks = pb__comm_size(pb__comm_world());
    return count_of(p, ranks) * (op_of(p)->pieces ? (size_t)ranks : 1) * elem_size(p);
}

static pb_status coll_plan(enum pb_collective op, const struct pb_param_lists *l, enum pb_precision prec,
                           struct pb_problem *out, size_t max, size_t *n_out)
{
    size_t n = 0;
    for (size_t i = 0; i < l->count[P_SIZE]; i++) {
        int64_t size = l->values[P_SIZE][i];
        if (size < (int64_t)pb_precision_size(prec) || size > ((int64_t)1 << 40))
            return pb__fail(PB_ERR_INVALID, "--size must be between one element (%zu B in %s) and 1 TiB (got %lld)",
                            pb_precision_size(prec), pb_precision_name(prec), (long long)size);
        if (n >= max)
            return pb__fail(PB_ERR_INVALID, "%s: more than %zu problems", ops[op].name, max);
        out[n] = (struct pb_problem){.prec = prec, .v = {[P_SIZE] = size, [P_OP] = op}};
        out[n].v[P_SIZE] = (int64_t)size_of(&out[n]); /* as measured: sizes that round alike run once */
        n++;
    }
    *n_out = n;
    return PB_OK;
}

static void coll_describe(const struct pb_problem *p, char *buf, size_t len)
{
    pb__format_bytes((double)size_of(p), buf, len);
}

static double coll_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)v, (void)host;
    return (double)size_of(p);
}

static pb_status coll_prepare(const struct pb_problem *p, uint64_t seed, void **host)
{
    (void)p, (void)seed;
    *host = NULL; /* each rank makes its part at bind time */
    return PB_OK;
}

static void coll_release(void *host) { (void)host; }

static void coll_unbind(void *state)
{
    struct coll_state *s = state;
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

static void store(enum pb_precision prec, void *dst, size_t i, double x)
{
    if (prec == PB_FLOAT)
        ((float *)dst)[i] = (float)x;
    else
        ((double *)dst)[i] = x;
}

static pb_status alloc_if(pb_device *dev, enum pb_mem kind, size_t bytes, pb_buf **out)
{
    return bytes ? pb_buf_alloc(dev, kind, bytes, out) : PB_OK;
}

/* Host bytes of one rank's buffers for layout L: send and receive where the
 * device's memory is host memory (ref, openmp), the pinned staging buffers
 * when the variant uses them. The check's chunks come on top. */
static double buffers_on_host(const struct coll_layout *L, size_t esize, bool device_on_host, bool staging)
{
    double elems = 0;
    if (device_on_host)
        elems += (double)(L->in_place ? 0 : L->send) + (double)L->held;
    if (staging)
        elems += (double)L->send + (double)L->recv;
    return elems * (double)esize;
}

/* The ranks of this node together, before any of them allocates: each
 * buffer alone passes pb__host_alloc's check, all of them on every rank
 * brought the OOM killer (allreduce 8 GiB on 2 ranks). Which ranks share the
 * node is not known here, so the `local` largest needs stand for them (only
 * pingpong's idle ranks need less). Collective: every rank refuses together. */
static pb_status host_fits(pb_comm *comm, const struct pb_problem *p, size_t count, bool device_on_host,
                           bool staging)
{
    int ranks = pb__comm_size(comm), local = pb__comm_local_size(comm), busy = 0;
    size_t esize = elem_size(p);
    double most = 0;
    for (int r = 0; r < ranks; r++) {
        struct coll_layout L;
        op_of(p)->layout(r, ranks, count, &L);
        double need = buffers_on_host(&L, esize, device_on_host, staging);
        busy += need > 0;
        most = need > most ? need : most;
    }
    double need = most * (busy < local ? busy : local) + (double)local * CHUNK * (double)(esize + sizeof(double));
    char who[96], size[32];
    snprintf(who, sizeof who, "%s %s on %d rank(s) of this node", op_of(p)->name,
             pb__format_bytes((double)size_of(p), size, sizeof size), local);
    const char *what = staging ? "for their buffers, pinned staging included" : "for their buffers";
    return pb__comm_agree(comm, pb__host_mem_need(need, who, what));
}

static pb_status coll_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                           void **state, const void **args)
{
    (void)host;
    pb_comm *comm = pb__comm_world();
    int rank = pb__comm_rank(comm), ranks = pb__comm_size(comm);
    const struct coll_op *op = op_of(p);
    if (p->v[P_OP] == PB_COLL_PINGPONG && ranks < 2) /* the same on every rank */
        return pb__fail(PB_ERR_UNAVAILABLE, "pingpong needs two ranks (mpirun -np 2 parbench run pingpong)");
    size_t count = count_of(p, ranks), esize = elem_size(p);
    bool staging = v->data == staged; /* no other variant touches the staging buffers */
    pb_status st = host_fits(comm, p, count, !dev->backend->alloc, staging);
    if (st != PB_OK)
        return st;
    struct coll_state *s = calloc(1, sizeof *s);
    st = s ? PB_OK : pb__fail(PB_ERR_NOMEM, "%s: out of host memory", op->name);
    if (st == PB_OK) {
        s->op = op;
        s->prec = p->prec;
        op->layout(rank, ranks, count, &s->layout);
        s->args = (struct pb_collective_args){.comm = comm, .op = (enum pb_collective)p->v[P_OP], .count = count,
                                              .type = p->prec == PB_FLOAT ? PB_COMM_FLOAT : PB_COMM_DOUBLE,
                                              .seconds = &s->seconds};
        st = pb__host_alloc(CHUNK * esize, "the collective's chunk", &s->chunk);
    }
    if (st == PB_OK && !(s->want = malloc(CHUNK * sizeof *s->want)))
        st = pb__fail(PB_ERR_NOMEM, "%s: out of host memory", op->name);
    static const struct coll_layout none;
    const struct coll_layout *L = s ? &s->layout : &none;
    if (st == PB_OK && !L->in_place)
        st = alloc_if(dev, PB_MEM_DEVICE, L->send * esize, &s->send);
    if (st == PB_OK)
        st = alloc_if(dev, PB_MEM_DEVICE, L->held * esize, &s->args.recv);
    if (st == PB_OK && staging)
        st = alloc_if(dev, PB_MEM_PINNED, L->send * esize, &s->args.stage_send);
    if (st == PB_OK && staging)
        st = alloc_if(dev, PB_MEM_PINNED, L->recv * esize, &s->args.stage_recv);
    pb_buf *send = !s ? NULL : L->in_place ? s->args.recv : s->send;
    for (size_t at = 0; st == PB_OK && at < L->send; at += CHUNK) {
        size_t n = L->send - at < CHUNK ? L->send - at : CHUNK;
        for (size_t i = 0; i < n; i++)
            store(p->prec, s->chunk, i, op->sent(rank, at + i));
        st = pb_buf_write(send, at * esize, s->chunk, n * esize);
    }
    /* Buffers may fail on one rank only (memory): no rank goes on alone. */
    st = pb__comm_agree(comm, st);
    if (st != PB_OK) {
        coll_unbind(s);
        return st;
    }
    s->args.send = send;
    /* a backend's variant says its path in .data ("NCCL") */
    s->path = v->data ? v->data : v->desc.name;
    const pb_buf *held = s->args.recv ? s->args.recv : send; /* none on pingpong's idle ranks */
    if (s->path == where_they_are)
        s->path = !held || pb_buf_host_ptr(held) ? "host" : "device-direct";
    *state = s;
    *args = &s->args;
    return PB_OK;
}

static pb_status coll_poison(void *state)
{
    struct coll_state *s = state;
    return s->layout.recv ? pb_buf_fill_bytes(s->args.recv, 0xFF) : PB_OK;
}

static pb_status coll_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    (void)host;
    struct coll_state *s = state;
    int rank = pb__comm_rank(s->args.comm), ranks = pb__comm_size(s->args.comm);
    size_t held = s->layout.held, esize = pb_precision_size(s->prec), bad = held;
    double got = 0, want = 0;
    pb__check_begin(out, 0, "full");
    for (size_t at = 0; at < held; at += CHUNK) {
        size_t n = held - at < CHUNK ? held - at : CHUNK;
        pb_status st = pb_buf_read(s->args.recv, at * esize, s->chunk, n * esize);
        if (st != PB_OK)
            return st;
        for (size_t i = 0; i < n; i++)
            s->want[i] = s->op->want(rank, ranks, s->args.count, at + i);
        if (corrupt && at == 0)
            store(s->prec, s->chunk, n / 2, s->want[n / 2] + 1);
        pb__check_add(out, s->chunk, s->prec, s->want, n, at);
        for (size_t i = 0; i < n && bad == held; i++) {
            double x = s->prec == PB_FLOAT ? ((const float *)s->chunk)[i] : ((const double *)s->chunk)[i];
            if (x != s->want[i]) /* NaN too */
                bad = at + i, got = x, want = s->want[i];
        }
    }
    pb__check_end(out);
    if (!out->pass && bad < held) /* exact: the first wrong element says more than a norm */
        snprintf(out->detail, sizeof out->detail, "element %zu is %.9g, expected %.9g", bad, got, want);
    return PB_OK;
}

static void coll_extras(void *state, const struct pb_stats *time, const struct pb_ceiling *ceiling, double *out)
{
    (void)ceiling;
    struct coll_state *s = state;
    int ranks = pb__comm_size(s->args.comm);
    double bytes = (double)(s->args.count * (s->op->pieces ? (size_t)ranks : 1) * pb_precision_size(s->prec));
    out[0] = time->median > 0 ? bytes * s->op->busbw(ranks) / time->median * 1e-9 : NAN;
}

static double coll_seconds(void *state) { return ((struct coll_state *)state)->seconds; }

static void coll_note(void *state, char *buf, size_t len)
{
    snprintf(buf, len, "path: %s", ((const struct coll_state *)state)->path);
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
    const struct pb_collective_args *a = args;
    if ((!a->send || mpi_address(a->send, a->comm)) && (!a->recv || mpi_address(a->recv, a->comm)))
        return true;
    if (strcmp(pb_backend_name(pb_device_backend(dev)), "cuda") == 0)
        *why = "device memory MPI cannot address (not CUDA-aware: MPIX_Query_cuda_support); see mpi-staged";
    else
        *why = "device memory MPI cannot address (MPI takes host or CUDA memory only); see mpi-staged";
    return false;
}

static pb_status mpi_run(pb_device *dev, const void *args, pb_stream *stream)
{
    (void)dev, (void)stream;
    const struct pb_collective_args *a = args;
    return ops[a->op].mpi(a, a->send ? mpi_address(a->send, a->comm) : NULL,
                          a->recv ? mpi_address(a->recv, a->comm) : NULL);
}

/* A failed copy still takes part in the call: the other ranks wait for it. */
static pb_status mpi_staged_run(pb_device *dev, const void *args, pb_stream *stream)
{
    (void)dev, (void)stream;
    const struct pb_collective_args *a = args;
    const struct coll_op *op = &ops[a->op];
    if (op->staged)
        return op->staged(a);
    struct coll_layout L;
    op->layout(pb__comm_rank(a->comm), pb__comm_size(a->comm), a->count, &L);
    size_t esize = pb__comm_type_size(a->type);
    pb_status st = L.send ? pb_buf_copy(a->stage_send, 0, a->send, 0, L.send * esize, NULL) : PB_OK;
    pb_status called = op->mpi(a, a->stage_send ? pb_buf_host_ptr(a->stage_send) : NULL,
                               a->stage_recv ? pb_buf_host_ptr(a->stage_recv) : NULL);
    if (st == PB_OK && (st = called) == PB_OK && L.recv)
        st = pb_buf_copy(a->recv, 0, a->stage_recv, 0, L.recv * esize, NULL);
    return st;
}

#define MPI_VARIANTS(bench, call)                                                                              \
    {{bench, "mpi", call " on the buffers where they are (host, or device if MPI is CUDA-aware)", 0},         \
     .supports = mpi_supports, .run = mpi_run, .data = where_they_are},                                        \
    {                                                                                                          \
        {bench, "mpi-staged", "device -> pinned host, " call ", pinned host -> device", 0},                    \
            .run = mpi_staged_run, .data = staged                                                              \
    }

#define PLAN(fn, op)                                                                                           \
    static pb_status fn(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,        \
                        size_t max, size_t *n)                                                                 \
    {                                                                                                          \
        return coll_plan(op, l, prec, out, max, n);                                                            \
    }

/* What every collective benchmark shares. */
#define COLLECTIVE                                                                                             \
    .flop_model = "-", .distributed = true, .n_params = 1, .describe = coll_describe, .bytes = coll_bytes,     \
    .prepare = coll_prepare, .release = coll_release, .bind = coll_bind, .poison = coll_poison,                \
    .check = coll_check, .unbind = coll_unbind, .note = coll_note, .n_variants = 2

static const char *const busbw_names[] = {"busbw_gbps"};

/* ---- the benchmarks --------------------------------------------------------- */

PLAN(allreduce_plan, PB_COLL_ALLREDUCE)
static const struct pb_param_def allreduce_params[] = {
    [P_SIZE] = {"size", "bytes per rank (rounded down to whole elements); k/M/G suffixes", "8:1G:x8"},
};
static const struct pb_variant allreduce_variants[] = {MPI_VARIANTS("allreduce", "MPI_Allreduce")};

const struct pb_bench pb__bench_allreduce = {
    .name = "allreduce",
    .roof = pb__roof_none, /* no peer-link or network ceiling is measured */
    .summary = "sum of every rank's vector on every rank (MPI, NCCL), distributed over the ranks",
    .byte_model = "bytes per rank (algorithm bandwidth; busbw_gbps = that x 2(n-1)/n)",
    .params = allreduce_params,
    .extra_names = busbw_names,
    .n_extras = 1,
    .extras = coll_extras,
    .rate_extras = 1, /* busbw_gbps */
    .plan = allreduce_plan,
    .variants = allreduce_variants,
    COLLECTIVE,
};

PLAN(allgather_plan, PB_COLL_ALLGATHER)
static const struct pb_param_def allgather_params[] = {
    [P_SIZE] = {"size", "bytes gathered on every rank, one piece per rank (rounded down to whole elements "
                        "per rank, at least one); k/M/G suffixes",
                "8:1G:x8"},
};
static const struct pb_variant allgather_variants[] = {MPI_VARIANTS("allgather", "MPI_Allgather")};

const struct pb_bench pb__bench_allgather = {
    .name = "allgather",
    .roof = pb__roof_none, /* no peer-link or network ceiling is measured */
    .summary = "every rank's piece on every rank (MPI, NCCL), distributed over the ranks",
    .byte_model = "the gathered bytes (algorithm bandwidth; busbw_gbps = that x (n-1)/n)",
    .params = allgather_params,
    .extra_names = busbw_names,
    .n_extras = 1,
    .extras = coll_extras,
    .rate_extras = 1, /* busbw_gbps */
    .plan = allgather_plan,
    .variants = allgather_variants,
    COLLECTIVE,
};

PLAN(alltoall_plan, PB_COLL_ALLTOALL)
static const struct pb_param_def alltoall_params[] = {
    [P_SIZE] = {"size", "bytes each rank sends, one piece to every rank (rounded down to whole elements "
                        "per rank, at least one); k/M/G suffixes",
                "8:1G:x8"},
};
static const struct pb_variant alltoall_variants[] = {MPI_VARIANTS("alltoall", "MPI_Alltoall")};

const struct pb_bench pb__bench_alltoall = {
    .name = "alltoall",
    .roof = pb__roof_none, /* no peer-link or network ceiling is measured */
    .summary = "piece q of rank r's buffer to piece r of rank q's (MPI, NCCL), distributed over the ranks",
    .byte_model = "bytes each rank sends (algorithm bandwidth; busbw_gbps = that x (n-1)/n)",
    .params = alltoall_params,
    .extra_names = busbw_names,
    .n_extras = 1,
    .extras = coll_extras,
    .rate_extras = 1, /* busbw_gbps */
    .plan = alltoall_plan,
    .variants = alltoall_variants,
    COLLECTIVE,
};

PLAN(broadcast_plan, PB_COLL_BROADCAST)
static const struct pb_param_def broadcast_params[] = {
    [P_SIZE] = {"size", "bytes rank 0 sends to every rank (rounded down to whole elements); k/M/G suffixes",
                "8:1G:x8"},
};
static const struct pb_variant broadcast_variants[] = {MPI_VARIANTS("broadcast", "MPI_Bcast")};

const struct pb_bench pb__bench_broadcast = {
    .name = "broadcast",
    .roof = pb__roof_none, /* no peer-link or network ceiling is measured */
    .summary = "rank 0's buffer to every rank (MPI, NCCL), distributed over the ranks",
    .byte_model = "the message (algorithm bandwidth; busbw_gbps = the same, as nccl-tests counts it)",
    .params = broadcast_params,
    .extra_names = busbw_names,
    .n_extras = 1,
    .extras = coll_extras,
    .rate_extras = 1, /* busbw_gbps */
    .plan = broadcast_plan,
    .variants = broadcast_variants,
    COLLECTIVE,
};

PLAN(pingpong_plan, PB_COLL_PINGPONG)
static const struct pb_param_def pingpong_params[] = {
    [P_SIZE] = {"size", "bytes of each message (rounded down to whole elements); k/M/G suffixes", "8:1G:x8"},
};
static const struct pb_variant pingpong_variants[] = {MPI_VARIANTS("pingpong", "MPI_Send/MPI_Recv")};

const struct pb_bench pb__bench_pingpong = {
    .name = "pingpong",
    .roof = pb__roof_none, /* no peer-link or network ceiling is measured */
    .summary = "latency and bandwidth between ranks 0 and 1 (MPI, NCCL): one-way time = round trip / 2",
    .notes = "\nRank 0 sends a message to rank 1, which answers with one of the same size; the time is\n"
             "rank 0's round trip / 2 (the one-way time: the latency at small sizes), from when rank 1\n"
             "said it is waiting, and GB/s the message over it. Both messages are verified. Other\n"
             "ranks wait; one rank is SKIP.",
    .byte_model = "the message",
    .params = pingpong_params,
    .run_seconds = coll_seconds,
    .plan = pingpong_plan,
    .variants = pingpong_variants,
    COLLECTIVE,
};

/* The communicator's dispatch and the one-process transport (see comm.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm_impl.h"
#include "core/core.h"

/* ---- one process: collectives are copies -------------------------------- */

static pb_status single_barrier(pb_comm *c)
{
    (void)c;
    return PB_OK;
}

static pb_status single_allreduce(pb_comm *c, const void *send, void *recv, size_t count, enum pb_comm_type t,
                                  enum pb_comm_op op)
{
    (void)c, (void)op;
    if (send != recv)
        memmove(recv, send, count * pb__comm_type_size(t));
    return PB_OK;
}

static pb_status single_bcast(pb_comm *c, void *buf, size_t bytes, int root)
{
    (void)c, (void)buf, (void)bytes;
    return root == 0 ? PB_OK : pb__fail(PB_ERR_INVALID, "broadcast from rank %d of 1", root);
}

static pb_status single_gather(pb_comm *c, const void *send, size_t bytes, void *recv, int root)
{
    (void)c;
    if (root != 0)
        return pb__fail(PB_ERR_INVALID, "gather to rank %d of 1", root);
    if (send != recv)
        memmove(recv, send, bytes);
    return PB_OK;
}

static pb_status single_allgather(pb_comm *c, const void *send, size_t bytes, void *recv)
{
    return single_gather(c, send, bytes, recv, 0);
}

static pb_status single_alltoall(pb_comm *c, const void *send, size_t bytes, void *recv)
{
    return single_gather(c, send, bytes, recv, 0);
}

static pb_status single_exchange_start(pb_comm *c, size_t n, const int *peers, const void *const *send,
                                       const size_t *send_bytes, void *const *recv, const size_t *recv_bytes,
                                       struct pb_comm_exchange **out)
{
    for (size_t i = 0; i < n; i++) {
        if (peers[i] != 0)
            return pb__fail(PB_ERR_INVALID, "exchange with rank %d of 1", peers[i]);
        if (send_bytes[i] != recv_bytes[i])
            return pb__fail(PB_ERR_INVALID, "exchange with itself of %zu bytes into %zu", send_bytes[i],
                            recv_bytes[i]);
        if (send_bytes[i])
            memmove(recv[i], send[i], send_bytes[i]);
    }
    *out = calloc(1, sizeof **out);
    if (!*out)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    (*out)->c = c;
    return PB_OK;
}

static pb_status single_exchange_wait(struct pb_comm_exchange *x)
{
    free(x);
    return PB_OK;
}

static pb_status single_send(pb_comm *c, const void *buf, size_t bytes, int peer, int tag)
{
    (void)c, (void)buf, (void)bytes, (void)tag;
    return pb__fail(PB_ERR_INVALID, "send to rank %d in a one-process run", peer);
}

static pb_status single_recv(pb_comm *c, void *buf, size_t bytes, int peer, int tag)
{
    (void)c, (void)buf, (void)bytes, (void)tag;
    return pb__fail(PB_ERR_INVALID, "receive from rank %d in a one-process run", peer);
}

static void single_abort(pb_comm *c, int code)
{
    (void)c, (void)code;
}

static void single_finalize(pb_comm *c) { (void)c; }

static pb_status single_split(pb_comm *c, int color, int key, pb_comm **out)
{
    (void)color, (void)key;
    if (!(*out = malloc(sizeof **out)))
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    **out = *c;
    return PB_OK;
}

static void single_free_split(pb_comm *c) { free(c); }

static const struct pb_comm_ops single_ops = {
    single_barrier, single_allreduce, single_bcast, single_gather, single_allgather, single_alltoall,
    single_exchange_start, single_exchange_wait, single_send, single_recv, single_abort, single_finalize,
    single_split, single_free_split,
};

static pb_comm single_comm;
static pb_comm *world;

static void single_init(void)
{
    memset(&single_comm, 0, sizeof single_comm);
    single_comm.ops = &single_ops;
    single_comm.size = single_comm.local_size = single_comm.nodes = 1;
    if (gethostname(single_comm.hosts, sizeof single_comm.hosts) != 0)
        snprintf(single_comm.hosts, sizeof single_comm.hosts, "unknown");
    single_comm.hosts[sizeof single_comm.hosts - 1] = '\0';
    snprintf(single_comm.library, sizeof single_comm.library, "none");
}

/* True when an MPI launcher started this process (its environment says so). */
static bool launched_by_mpi(void)
{
    static const char *const vars[] = {
        "OMPI_COMM_WORLD_SIZE", /* Open MPI's mpirun */
        "PMIX_RANK",            /* PMIx: Open MPI 5, srun --mpi=pmix */
        "PMI_SIZE",             /* PMI-1/2: MPICH's Hydra, Intel MPI, srun --mpi=pmi2 */
        "MPI_LOCALNRANKS",      /* MPICH's Hydra */
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

pb_status pb__comm_init(void)
{
    single_init();
    world = &single_comm;
    const char *force = getenv("PARBENCH_MPI");
    bool want = force && force[0] ? strcmp(force, "0") != 0 : launched_by_mpi();
    if (!want)
        return PB_OK;
#ifdef PB_HAVE_MPI
    static pb_comm mpi_comm;
    pb_status st = pb__comm_mpi_start(&mpi_comm);
    if (st == PB_OK)
        world = &mpi_comm;
    return st;
#else
    /* Under a launcher every copy would run the whole job alone: say so. */
    return pb__fail(PB_ERR_UNAVAILABLE, "started by an MPI launcher, but this parbench was built "
                                        "without MPI (install libopenmpi-dev and rebuild; PB_MPI)");
#endif
}

void pb__comm_finalize(void)
{
    if (world && world != &single_comm)
        world->ops->finalize(world);
    single_init();
    world = &single_comm;
}

pb_comm *pb__comm_world(void)
{
    if (!world) {
        single_init();
        world = &single_comm;
    }
    return world;
}

int pb__comm_rank(const pb_comm *c) { return c->rank; }
int pb__comm_size(const pb_comm *c) { return c->size; }
int pb__comm_local_rank(const pb_comm *c) { return c->local_rank; }
int pb__comm_local_size(const pb_comm *c) { return c->local_size; }
int pb__comm_nodes(const pb_comm *c) { return c->nodes; }
const char *pb__comm_hosts(const pb_comm *c) { return c->hosts; }
const char *pb__comm_library(const pb_comm *c) { return c->library; }
bool pb__comm_cuda_aware(const pb_comm *c) { return c->cuda_aware; }
void *pb__comm_mpi_handle(pb_comm *c) { return c->mpi_comm; }

size_t pb__comm_type_size(enum pb_comm_type t)
{
    switch (t) {
    case PB_COMM_BYTE: return 1;
    case PB_COMM_INT32: return 4;
    case PB_COMM_INT64: return 8;
    case PB_COMM_FLOAT: return 4;
    case PB_COMM_DOUBLE: return 8;
    }
    return 1;
}

pb_status pb__comm_barrier(pb_comm *c) { return c->ops->barrier(c); }

pb_status pb__comm_allreduce(pb_comm *c, const void *send, void *recv, size_t count, enum pb_comm_type t,
                             enum pb_comm_op op)
{
    return c->ops->allreduce(c, send, recv, count, t, op);
}

pb_status pb__comm_bcast(pb_comm *c, void *buf, size_t bytes, int root) { return c->ops->bcast(c, buf, bytes, root); }

pb_status pb__comm_gather(pb_comm *c, const void *send, size_t bytes, void *recv, int root)
{
    return c->ops->gather(c, send, bytes, recv, root);
}

pb_status pb__comm_allgather(pb_comm *c, const void *send, size_t bytes, void *recv)
{
    return c->ops->allgather(c, send, bytes, recv);
}

pb_status pb__comm_alltoall(pb_comm *c, const void *send, size_t bytes, void *recv)
{
    return c->ops->alltoall(c, send, bytes, recv);
}

pb_status pb__comm_exchange_start(pb_comm *c, size_t n, const int *peers, const void *const *send,
                                  const size_t *send_bytes, void *const *recv, const size_t *recv_bytes,
                                  struct pb_comm_exchange **out)
{
    *out = NULL;
    return c->ops->exchange_start(c, n, peers, send, send_bytes, recv, recv_bytes, out);
}

pb_status pb__comm_exchange_wait(struct pb_comm_exchange *x)
{
    return x ? x->c->ops->exchange_wait(x) : PB_OK;
}

pb_status pb__comm_send(pb_comm *c, const void *buf, size_t bytes, int peer, int tag)
{
    return c->ops->send(c, buf, bytes, peer, tag);
}

pb_status pb__comm_recv(pb_comm *c, void *buf, size_t bytes, int peer, int tag)
{
    return c->ops->recv(c, buf, bytes, peer, tag);
}

void pb__comm_abort(pb_comm *c, int code) { c->ops->abort(c, code); }

pb_status pb__comm_split(pb_comm *c, int color, int key, pb_comm **out)
{
    *out = NULL;
    if (color < 0)
        return pb__fail(PB_ERR_INVALID, "communicator split with color %d (must be >= 0)", color);
    return c->ops->split(c, color, key, out);
}

void pb__comm_free(pb_comm *c)
{
    if (c && c != world && c != &single_comm)
        c->ops->free_split(c);
}

pb_status pb__comm_agree(pb_comm *c, pb_status st)
{
    if (c->size == 1)
        return st;
    int32_t first = st != PB_OK ? c->rank : c->size;
    pb_status ast = pb__comm_allreduce(c, &first, &first, 1, PB_COMM_INT32, PB_COMM_MIN);
    if (ast != PB_OK)
        return ast;
    if (first == c->size)
        return PB_OK;
    struct {
        int32_t status;
        char message[240];
    } why = {(int32_t)st, ""};
    if (c->rank == first)
        snprintf(why.message, sizeof why.message, "%s", pb_last_error()[0] ? pb_last_error() : pb_status_message(st));
    if ((ast = pb__comm_bcast(c, &why, sizeof why, first)) != PB_OK)
        return ast;
    if (st != PB_OK)
        return st;
    return pb__fail((pb_status)why.status, "rank %d: %s", (int)first, why.message);
}

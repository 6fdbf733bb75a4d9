/* The MPI transport (see comm.h): MPI_COMM_WORLD duplicated, errors returned
 * rather than fatal, the node layout from a shared-memory split. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* MPIX_Query_cuda_support */
#endif
#endif

#include "comm/comm_impl.h"
#include "core/core.h"

#define HOST_LEN 64

static bool we_initialised; /* a library user may have started MPI already */

static MPI_Comm comm_of(const pb_comm *c) { return *(MPI_Comm *)c->mpi_comm; }

static pb_status mpi_fail(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error %d", rc);
    return pb__fail(PB_ERR_IO, "MPI %s failed: %s", what, msg);
}

#define MPI_CHECK(call, what)                   \
    do {                                        \
        int rc_ = (call);                       \
        if (rc_ != MPI_SUCCESS)                 \
            return mpi_fail(rc_, what);         \
    } while (0)

static pb_status to_int(size_t n, const char *what, int *out)
{
    if (n > INT_MAX)
        return pb__fail(PB_ERR_OVERFLOW, "MPI %s of %zu elements: more than one call takes", what, n);
    *out = (int)n;
    return PB_OK;
}

static MPI_Datatype mpi_type(enum pb_comm_type t)
{
    switch (t) {
    case PB_COMM_BYTE: return MPI_BYTE;
    case PB_COMM_INT32: return MPI_INT32_T;
    case PB_COMM_INT64: return MPI_INT64_T;
    case PB_COMM_FLOAT: return MPI_FLOAT;
    case PB_COMM_DOUBLE: return MPI_DOUBLE;
    }
    return MPI_BYTE;
}

static MPI_Op mpi_op(enum pb_comm_op op)
{
    switch (op) {
    case PB_COMM_SUM: return MPI_SUM;
    case PB_COMM_MIN: return MPI_MIN;
    case PB_COMM_MAX: return MPI_MAX;
    }
    return MPI_SUM;
}

static pb_status mpi_barrier(pb_comm *c)
{
    MPI_CHECK(MPI_Barrier(comm_of(c)), "barrier");
    return PB_OK;
}

static pb_status mpi_allreduce(pb_comm *c, const void *send, void *recv, size_t count, enum pb_comm_type t,
                               enum pb_comm_op op)
{
    int n = 0;
    pb_status st = to_int(count, "allreduce", &n);
    if (st != PB_OK)
        return st;
    MPI_CHECK(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, n, mpi_type(t), mpi_op(op), comm_of(c)),
              "allreduce");
    return PB_OK;
}

/* Broadcasts, sends and receives of more than MPI's int count go in pieces
 * (in order between the same ranks and tag, so they reassemble). */
#define MPI_PIECE ((size_t)1 << 30)

static pb_status mpi_bcast(pb_comm *c, void *buf, size_t bytes, int root)
{
    size_t at = 0;
    do { /* once even for 0 bytes: the other ranks make the matching call */
        int n = (int)(bytes - at < MPI_PIECE ? bytes - at : MPI_PIECE);
        MPI_CHECK(MPI_Bcast((char *)buf + at, n, MPI_BYTE, root, comm_of(c)), "broadcast");
        at += (size_t)n;
    } while (at < bytes);
    return PB_OK;
}

static pb_status mpi_gather(pb_comm *c, const void *send, size_t bytes, void *recv, int root)
{
    int n = 0;
    pb_status st = to_int(bytes, "gather", &n);
    if (st != PB_OK)
        return st;
    MPI_CHECK(MPI_Gather(send, n, MPI_BYTE, recv, n, MPI_BYTE, root, comm_of(c)), "gather");
    return PB_OK;
}

static pb_status mpi_allgather(pb_comm *c, const void *send, size_t bytes, void *recv)
{
    int n = 0;
    pb_status st = to_int(bytes, "allgather", &n);
    if (st != PB_OK)
        return st;
    MPI_CHECK(MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_of(c)), "allgather");
    return PB_OK;
}

static pb_status mpi_alltoall(pb_comm *c, const void *send, size_t bytes, void *recv)
{
    int n = 0;
    pb_status st = to_int(bytes, "alltoall", &n);
    if (st != PB_OK)
        return st;
    MPI_CHECK(MPI_Alltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_of(c)), "alltoall");
    return PB_OK;
}

static pb_status mpi_exchange_start(pb_comm *c, size_t n, const int *peers, const void *const *send,
                                    const size_t *send_bytes, void *const *recv, const size_t *recv_bytes,
                                    struct pb_comm_exchange **out)
{
    struct pb_comm_exchange *x = calloc(1, sizeof *x);
    MPI_Request *req = calloc(2 * n + 1, sizeof *req);
    if (!x || !req) {
        free(x);
        free(req);
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    }
    x->c = c;
    x->requests = req;
    pb_status st = PB_OK;
    /* Receives first, so no send waits for its matching receive to be posted. */
    for (size_t i = 0; i < n && st == PB_OK; i++) {
        int len = 0;
        if (!recv_bytes[i] || (st = to_int(recv_bytes[i], "receive", &len)) != PB_OK)
            continue;
        int rc = MPI_Irecv(recv[i], len, MPI_BYTE, peers[i], 7, comm_of(c), &req[x->n]);
        if (rc != MPI_SUCCESS)
            st = mpi_fail(rc, "receive");
        else
            x->n++;
    }
    for (size_t i = 0; i < n && st == PB_OK; i++) {
        int len = 0;
        if (!send_bytes[i] || (st = to_int(send_bytes[i], "send", &len)) != PB_OK)
            continue;
        int rc = MPI_Isend(send[i], len, MPI_BYTE, peers[i], 7, comm_of(c), &req[x->n]);
        if (rc != MPI_SUCCESS)
            st = mpi_fail(rc, "send");
        else
            x->n++;
    }
    if (st != PB_OK) {
        /* Complete what was posted: the buffers are the caller's to free next. */
        for (size_t i = 0; i < x->n; i++)
            MPI_Cancel(&req[i]);
        MPI_Waitall((int)x->n, req, MPI_STATUSES_IGNORE);
        free(req);
        free(x);
        return st;
    }
    *out = x;
    return PB_OK;
}

static pb_status mpi_exchange_wait(struct pb_comm_exchange *x)
{
    int rc = MPI_Waitall((int)x->n, x->requests, MPI_STATUSES_IGNORE);
    free(x->requests);
    free(x);
    return rc == MPI_SUCCESS ? PB_OK : mpi_fail(rc, "exchange");
}

static pb_status mpi_send(pb_comm *c, const void *buf, size_t bytes, int peer, int tag)
{
    size_t at = 0;
    do { /* once even for 0 bytes: the other ranks make the matching call */
        int n = (int)(bytes - at < MPI_PIECE ? bytes - at : MPI_PIECE);
        MPI_CHECK(MPI_Send((const char *)buf + at, n, MPI_BYTE, peer, tag, comm_of(c)), "send");
        at += (size_t)n;
    } while (at < bytes);
    return PB_OK;
}

static pb_status mpi_recv(pb_comm *c, void *buf, size_t bytes, int peer, int tag)
{
    size_t at = 0;
    do { /* once even for 0 bytes: the other ranks make the matching call */
        int n = (int)(bytes - at < MPI_PIECE ? bytes - at : MPI_PIECE);
        MPI_CHECK(MPI_Recv((char *)buf + at, n, MPI_BYTE, peer, tag, comm_of(c), MPI_STATUS_IGNORE), "receive");
        at += (size_t)n;
    } while (at < bytes);
    return PB_OK;
}

static void mpi_abort(pb_comm *c, int code) { MPI_Abort(comm_of(c), code); }

static void mpi_finalize(pb_comm *c)
{
    MPI_Comm_free((MPI_Comm *)c->mpi_comm);
    free(c->mpi_comm);
    c->mpi_comm = NULL;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (we_initialised && !finalized)
        MPI_Finalize();
}

static void mpi_free_split(pb_comm *c)
{
    if (c->mpi_comm)
        MPI_Comm_free((MPI_Comm *)c->mpi_comm);
    free(c->mpi_comm);
    free(c);
}

static pb_status mpi_split(pb_comm *c, int color, int key, pb_comm **out)
{
    pb_comm *s = malloc(sizeof *s);
    MPI_Comm *handle = malloc(sizeof *handle), made = MPI_COMM_NULL;
    /* Every rank takes part in the split, even one short of memory (with
     * MPI_UNDEFINED: it gets no communicator), and then all learn whether
     * it worked everywhere, so none goes on with a half-made split. */
    int rc = MPI_Comm_split(comm_of(c), s && handle ? color : MPI_UNDEFINED, key, &made);
    int fine = s && handle && rc == MPI_SUCCESS, all = 0;
    int rc2 = MPI_Allreduce(&fine, &all, 1, MPI_INT, MPI_MIN, comm_of(c));
    if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS || !all) {
        if (made != MPI_COMM_NULL)
            MPI_Comm_free(&made);
        free(s);
        free(handle);
        if (rc != MPI_SUCCESS)
            return mpi_fail(rc, "comm_split");
        if (rc2 != MPI_SUCCESS)
            return mpi_fail(rc2, "allreduce");
        return pb__fail(PB_ERR_NOMEM, fine ? "communicator split: another rank is out of memory" : "out of memory");
    }
    *s = *c;
    *handle = made;
    s->mpi_comm = handle;
    MPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
    MPI_Comm_rank(made, &s->rank);
    MPI_Comm_size(made, &s->size);
    *out = s;
    return PB_OK;
}

static const struct pb_comm_ops mpi_ops = {
    mpi_barrier, mpi_allreduce, mpi_bcast, mpi_gather, mpi_allgather, mpi_alltoall,
    mpi_exchange_start, mpi_exchange_wait, mpi_send, mpi_recv, mpi_abort, mpi_finalize,
    mpi_split, mpi_free_split,
};

/* The size the launcher meant, or 0 when it does not say. */
static int launcher_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) > 0)
            return atoi(v);
    }
    return 0;
}

/* Node layout and host names: every rank learns them. */
static pb_status describe_layout(pb_comm *c)
{
    MPI_Comm local;
    MPI_CHECK(MPI_Comm_split_type(comm_of(c), MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &local),
              "node split");
    MPI_Comm_rank(local, &c->local_rank);
    MPI_Comm_size(local, &c->local_size);
    MPI_Comm_free(&local);
    int leader = c->local_rank == 0;
    MPI_CHECK(MPI_Allreduce(&leader, &c->nodes, 1, MPI_INT, MPI_SUM, comm_of(c)), "allreduce");

    char name[HOST_LEN] = "";
    int len = 0;
    char full[MPI_MAX_PROCESSOR_NAME];
    if (MPI_Get_processor_name(full, &len) == MPI_SUCCESS)
        snprintf(name, sizeof name, "%.63s", full);
    char *all = calloc((size_t)c->size, HOST_LEN);
    if (!all)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    int rc = MPI_Allgather(name, HOST_LEN, MPI_CHAR, all, HOST_LEN, MPI_CHAR, comm_of(c));
    if (rc != MPI_SUCCESS) {
        free(all);
        return mpi_fail(rc, "allgather");
    }
    size_t used = 0;
    c->hosts[0] = '\0';
    for (int r = 0; r < c->size; r++) {
        const char *h = all + (size_t)r * HOST_LEN;
        bool seen = false;
        for (int q = 0; q < r && !seen; q++)
            seen = strncmp(h, all + (size_t)q * HOST_LEN, HOST_LEN) == 0;
        if (!seen && used < sizeof c->hosts)
            used += (size_t)snprintf(c->hosts + used, sizeof c->hosts - used, "%s%.*s", used ? "," : "",
                                     HOST_LEN, h);
    }
    free(all);
    return PB_OK;
}

pb_status pb__comm_mpi_start(pb_comm *c)
{
    memset(c, 0, sizeof *c);
    c->ops = &mpi_ops;
    int initialised = 0, provided;
    MPI_Initialized(&initialised);
    if (!initialised) {
        /* Only the main thread calls MPI (OpenMP threads never do). */
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return pb__fail(PB_ERR_UNAVAILABLE, "MPI could not start (MPI_Init_thread failed)");
        we_initialised = true;
    }
    c->mpi_comm = malloc(sizeof(MPI_Comm));
    if (!c->mpi_comm)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, (MPI_Comm *)c->mpi_comm), "comm_dup");
    MPI_Comm_set_errhandler(comm_of(c), MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_of(c), &c->rank);
    MPI_Comm_size(comm_of(c), &c->size);
    int meant = launcher_size();
    if (meant > 1 && c->size == 1)
        return pb__fail(PB_ERR_UNAVAILABLE,
                        "the launcher started %d tasks but MPI sees one: each runs alone (with srun, "
                        "pass --mpi=pmix or --mpi=pmi2)", meant);

    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(version, &len) == MPI_SUCCESS) {
        version[strcspn(version, ",\n")] = '\0'; /* "Open MPI v4.1.4, package: ..." */
        snprintf(c->library, sizeof c->library, "%.100s", version);
    } else {
        snprintf(c->library, sizeof c->library, "MPI");
    }
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    c->cuda_aware = MPIX_Query_cuda_support() == 1;
#endif
    return describe_layout(c);
}

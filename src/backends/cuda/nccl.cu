// NCCL collectives as CUDA variants (`nccl` of allreduce, allgather, alltoall,
// broadcast, pingpong). libnccl is loaded at run time, so the binary starts
// where NCCL is not installed; its rows are then UNSUPPORTED with the reason.
// The NCCL communicator is made once per device from the run's ranks (rank
// 0's unique id broadcast through comm/comm.h) and kept with the device.
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nccl.h>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "comm/comm.h"

namespace {

struct nccl_api {
    bool tried, loaded;
    char why[160];
    ncclResult_t (*get_unique_id)(ncclUniqueId *);
    ncclResult_t (*comm_init_rank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*comm_destroy)(ncclComm_t);
    ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                               cudaStream_t);
    ncclResult_t (*all_gather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*group_start)(void);
    ncclResult_t (*group_end)(void);
    const char *(*error_string)(ncclResult_t);
};

nccl_api api;

template <typename F> bool load_symbol(void *lib, const char *name, F *out)
{
    *out = reinterpret_cast<F>(dlsym(lib, name));
    return *out != nullptr;
}

// Loads libnccl once; false (api.why says why) when it is not usable.
bool nccl_load()
{
    if (api.tried)
        return api.loaded;
    api.tried = true;
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(api.why, sizeof api.why, "NCCL not found (libnccl.so.2: %s)", dlerror());
        return false;
    }
    api.loaded = load_symbol(lib, "ncclGetUniqueId", &api.get_unique_id) &&
                 load_symbol(lib, "ncclCommInitRank", &api.comm_init_rank) &&
                 load_symbol(lib, "ncclCommDestroy", &api.comm_destroy) &&
                 load_symbol(lib, "ncclAllReduce", &api.all_reduce) &&
                 load_symbol(lib, "ncclAllGather", &api.all_gather) &&
                 load_symbol(lib, "ncclBroadcast", &api.broadcast) &&
                 load_symbol(lib, "ncclSend", &api.send) && load_symbol(lib, "ncclRecv", &api.recv) &&
                 load_symbol(lib, "ncclGroupStart", &api.group_start) &&
                 load_symbol(lib, "ncclGroupEnd", &api.group_end) &&
                 load_symbol(lib, "ncclGetErrorString", &api.error_string);
    if (!api.loaded)
        snprintf(api.why, sizeof api.why,
                 "libnccl.so.2 lacks a function parbench calls (NCCL 2.7 or later has them)");
    return api.loaded;
}

pb_status nccl_status(ncclResult_t r, const char *expr, const char *file, int line)
{
    return pb__fail(r == ncclSystemError ? PB_ERR_IO : PB_ERR_DEVICE, "%s failed at %s:%d: %s", expr, file, line,
                    api.error_string ? api.error_string(r) : "NCCL error");
}

#define PB_NCCL_CHECK(expr)                                                     \
    do {                                                                        \
        ncclResult_t pb__r = (expr);                                            \
        if (pb__r != ncclSuccess)                                               \
            return nccl_status(pb__r, #expr, __FILE__, __LINE__);               \
    } while (0)

// A new NCCL communicator over comm's ranks: rank 0's unique id broadcast
// through comm (collective; st: this rank's status so far, agreed first).
pb_status comm_init(pb_device *dev, pb_comm *comm, pb_status st, ncclComm_t *out)
{
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (st == PB_OK && pb__comm_rank(comm) == 0) {
        ncclResult_t r = api.get_unique_id(&id);
        if (r != ncclSuccess)
            st = nccl_status(r, "ncclGetUniqueId", __FILE__, __LINE__);
    }
    if ((st = pb__comm_agree(comm, st)) != PB_OK || (st = pb__comm_bcast(comm, &id, sizeof id, 0)) != PB_OK)
        return st;
    PB_CUDA_CHECK(cudaSetDevice(dev->index));
    PB_NCCL_CHECK(api.comm_init_rank(out, pb__comm_size(comm), id, pb__comm_rank(comm)));
    return PB_OK;
}

// The device's NCCL communicator over comm's ranks, made on first use
// (collective: every rank calls it in the same run).
pb_status nccl_comm(pb_device *dev, pb_comm *comm, ncclComm_t *out)
{
    pb_cuda_device *impl = pb__cuda(dev);
    if (impl->nccl && impl->nccl_ranks == comm) {
        *out = static_cast<ncclComm_t>(impl->nccl);
        return PB_OK;
    }
    pb_status st = comm_init(dev, comm, PB_OK, out);
    if (st == PB_OK)
        impl->nccl = *out, impl->nccl_ranks = comm;
    return st;
}

ncclDataType_t nccl_type(pb_comm_type t)
{
    switch (t) {
    case PB_COMM_FLOAT: return ncclFloat32;
    case PB_COMM_DOUBLE: return ncclFloat64;
    case PB_COMM_INT32: return ncclInt32;
    case PB_COMM_INT64: return ncclInt64;
    case PB_COMM_BYTE: return ncclUint8;
    }
    return ncclUint8;
}

// Byte address of element i of a collective's buffer.
void *at(const pb_buf *b, const pb_collective_args *a, size_t i)
{
    return pb__cuda_ptr<char>(b) + i * pb__comm_type_size(a->type);
}

} // namespace

void pb__cuda_nccl_release(pb_cuda_device *impl)
{
    if (impl->nccl && api.comm_destroy)
        api.comm_destroy(static_cast<ncclComm_t>(impl->nccl));
    impl->nccl = nullptr;
}

namespace {

// NCCL takes one rank per GPU: two ranks on one device are refused by
// ncclCommInitRank, so they are found here first (collective over comm:
// every rank gets the same answer).
pb_status one_rank_per_gpu(const pb_device *dev, pb_comm *comm)
{
    struct {
        char host[64];
        char bus[32];
    } mine, *all = nullptr;
    memset(&mine, 0, sizeof mine);
    if (gethostname(mine.host, sizeof mine.host - 1) != 0)
        snprintf(mine.host, sizeof mine.host, "unknown");
    if (cudaDeviceGetPCIBusId(mine.bus, sizeof mine.bus, dev->index) != cudaSuccess)
        snprintf(mine.bus, sizeof mine.bus, "device %d", dev->index);
    int n = pb__comm_size(comm);
    all = static_cast<decltype(all)>(calloc(static_cast<size_t>(n), sizeof mine));
    pb_status st = all ? PB_OK : pb__fail(PB_ERR_NOMEM, "out of host memory");
    if ((st = pb__comm_agree(comm, st)) == PB_OK)
        st = pb__comm_allgather(comm, &mine, sizeof mine, all);
    for (int r = 0; st == PB_OK && r < n; r++)
        for (int q = 0; q < r; q++)
            if (memcmp(&all[r], &all[q], sizeof mine) == 0) {
                st = pb__fail(PB_ERR_UNSUPPORTED, "NCCL takes one rank per GPU: ranks %d and %d share %s", q, r,
                              all[r].bus);
                break;
            }
    free(all);
    return st;
}

} // namespace

bool pb__cuda_nccl_supports(const pb_device *dev, const void *args, const char **why)
{
    const auto *a = static_cast<const pb_collective_args *>(args);
    static char reason[256];
    if (!nccl_load()) {
        *why = api.why;
        return false;
    }
    if (one_rank_per_gpu(dev, a->comm) != PB_OK) {
        snprintf(reason, sizeof reason, "%s", pb_last_error());
        *why = reason;
        return false;
    }
    return true;
}

// A communicator of its own over comm's ranks, for a device path
// (comm/devcomm.h): collective; every rank gets the same answer.
pb_status pb__cuda_nccl_open(pb_device *dev, pb_comm *comm, void **out)
{
    *out = nullptr;
    pb_status st = nccl_load() ? PB_OK : pb__fail(PB_ERR_UNSUPPORTED, "%s", api.why);
    if ((st = pb__comm_agree(comm, st)) != PB_OK || (st = one_rank_per_gpu(dev, comm)) != PB_OK)
        return st;
    ncclComm_t nc;
    if ((st = comm_init(dev, comm, PB_OK, &nc)) == PB_OK)
        *out = nc;
    return st;
}

void pb__cuda_nccl_close(void *nc)
{
    if (nc && api.comm_destroy)
        api.comm_destroy(static_cast<ncclComm_t>(nc));
}

pb_status pb__cuda_nccl_bcast(void *nc, const void *src, void *dst, size_t bytes, int root, cudaStream_t s)
{
    PB_NCCL_CHECK(api.broadcast(src, dst, bytes, ncclUint8, root, static_cast<ncclComm_t>(nc), s));
    return PB_OK;
}

// Rank r's part (bytes[r] at base + offset[r]) to every rank, in place. Equal
// parts end to end are NCCL's allgather (a ring over the links); others go as
// one broadcast per rank, grouped so that NCCL runs them together rather than
// one after the other.
pb_status pb__cuda_nccl_allgatherv(void *nc, int n, int rank, char *base, const size_t *offset, const size_t *bytes,
                                   cudaStream_t s)
{
    ncclComm_t c = static_cast<ncclComm_t>(nc);
    bool even = true;
    for (int r = 1; r < n && even; r++)
        even = bytes[r] == bytes[0] && offset[r] == offset[0] + static_cast<size_t>(r) * bytes[0];
    if (even) {
        if (bytes[0])
            PB_NCCL_CHECK(api.all_gather(base + offset[rank], base + offset[0], bytes[0], ncclUint8, c, s));
        return PB_OK;
    }
    PB_NCCL_CHECK(api.group_start());
    ncclResult_t r = ncclSuccess;
    for (int q = 0; q < n && r == ncclSuccess; q++)
        if (bytes[q])
            r = api.broadcast(base + offset[q], base + offset[q], bytes[q], ncclUint8, q, c, s);
    ncclResult_t end = api.group_end();
    if (r != ncclSuccess)
        return nccl_status(r, "ncclBroadcast", __FILE__, __LINE__);
    if (end != ncclSuccess)
        return nccl_status(end, "ncclGroupEnd", __FILE__, __LINE__);
    return PB_OK;
}

// Every send and receive in one group (zero-byte ones left out: the lists
// agree pairwise, so both ends leave them out). The group is ended even
// after a failed call in it.
pb_status pb__cuda_nccl_exchange(void *nc, size_t n, const int *peers, const void *const *send,
                                 const size_t *send_bytes, void *const *recv, const size_t *recv_bytes,
                                 cudaStream_t s)
{
    ncclComm_t c = static_cast<ncclComm_t>(nc);
    PB_NCCL_CHECK(api.group_start());
    ncclResult_t r = ncclSuccess;
    const char *failed = nullptr;
    for (size_t i = 0; i < n && r == ncclSuccess; i++) {
        if (send_bytes[i] && (r = api.send(send[i], send_bytes[i], ncclUint8, peers[i], c, s)) != ncclSuccess)
            failed = "ncclSend";
        else if (recv_bytes[i] && (r = api.recv(recv[i], recv_bytes[i], ncclUint8, peers[i], c, s)) != ncclSuccess)
            failed = "ncclRecv";
    }
    ncclResult_t end = api.group_end();
    if (r != ncclSuccess)
        return nccl_status(r, failed, __FILE__, __LINE__);
    if (end != ncclSuccess)
        return nccl_status(end, "ncclGroupEnd", __FILE__, __LINE__);
    return PB_OK;
}

pb_status pb__cuda_nccl_allreduce(pb_device *dev, const void *args, pb_stream *s)
{
    const auto *a = static_cast<const pb_collective_args *>(args);
    ncclComm_t nc;
    pb_status st = nccl_comm(dev, a->comm, &nc);
    if (st != PB_OK)
        return st;
    PB_NCCL_CHECK(api.all_reduce(pb__cuda_ptr<const void>(a->send), pb__cuda_ptr<void>(a->recv), a->count,
                                 nccl_type(a->type), ncclSum, nc, pb__cuda_stream(s)));
    return PB_OK;
}

pb_status pb__cuda_nccl_allgather(pb_device *dev, const void *args, pb_stream *s)
{
    const auto *a = static_cast<const pb_collective_args *>(args);
    ncclComm_t nc;
    pb_status st = nccl_comm(dev, a->comm, &nc);
    if (st != PB_OK)
        return st;
    PB_NCCL_CHECK(api.all_gather(pb__cuda_ptr<const void>(a->send), pb__cuda_ptr<void>(a->recv), a->count,
                                 nccl_type(a->type), nc, pb__cuda_stream(s)));
    return PB_OK;
}

// One send and one receive per rank, itself included, in one group (as
// nccl-tests' alltoall).
pb_status pb__cuda_nccl_alltoall(pb_device *dev, const void *args, pb_stream *s)
{
    const auto *a = static_cast<const pb_collective_args *>(args);
    ncclComm_t nc;
    pb_status st = nccl_comm(dev, a->comm, &nc);
    if (st != PB_OK)
        return st;
    size_t n = static_cast<size_t>(pb__comm_size(a->comm)), bytes = a->count * pb__comm_type_size(a->type);
    int *peers = static_cast<int *>(calloc(n, sizeof *peers));
    const void **send = static_cast<const void **>(calloc(n, sizeof *send));
    void **recv = static_cast<void **>(calloc(n, sizeof *recv));
    size_t *sizes = static_cast<size_t *>(calloc(n, sizeof *sizes));
    st = peers && send && recv && sizes ? PB_OK : pb__fail(PB_ERR_NOMEM, "out of host memory");
    for (size_t peer = 0; st == PB_OK && peer < n; peer++) {
        peers[peer] = static_cast<int>(peer);
        send[peer] = at(a->send, a, peer * a->count);
        recv[peer] = at(a->recv, a, peer * a->count);
        sizes[peer] = bytes;
    }
    if (st == PB_OK)
        st = pb__cuda_nccl_exchange(nc, n, peers, send, sizes, recv, sizes, pb__cuda_stream(s));
    free(peers);
    free(send);
    free(recv);
    free(sizes);
    return st;
}

// From rank 0, in place (send == recv): rank 0's buffer is never written.
pb_status pb__cuda_nccl_broadcast(pb_device *dev, const void *args, pb_stream *s)
{
    const auto *a = static_cast<const pb_collective_args *>(args);
    ncclComm_t nc;
    pb_status st = nccl_comm(dev, a->comm, &nc);
    if (st != PB_OK)
        return st;
    PB_NCCL_CHECK(api.broadcast(pb__cuda_ptr<const void>(a->recv), pb__cuda_ptr<void>(a->recv), a->count,
                                nccl_type(a->type), 0, nc, pb__cuda_stream(s)));
    return PB_OK;
}

// Rank 0 sends then receives, rank 1 receives then answers, each call its
// own group (so the two ways do not overlap); rank 0 times the round trip to
// the stream's end, from when rank 1 said it is there (through comm.h).
// Every rank makes the communicator (collective); the others then have
// nothing to do.
pb_status pb__cuda_nccl_pingpong(pb_device *dev, const void *args, pb_stream *s)
{
    const auto *a = static_cast<const pb_collective_args *>(args);
    ncclComm_t nc;
    pb_status st = nccl_comm(dev, a->comm, &nc);
    *a->seconds = 0;
    int rank = pb__comm_rank(a->comm);
    if (st != PB_OK || rank > 1)
        return st;
    const int ready = 12; // a tag of its own
    char none = 0;
    st = rank == 0 ? pb__comm_recv(a->comm, &none, 0, 1, ready) : pb__comm_send(a->comm, &none, 0, 0, ready);
    if (st != PB_OK)
        return st;
    ncclDataType_t type = nccl_type(a->type);
    cudaStream_t stream = pb__cuda_stream(s);
    double t0 = pb__now();
    if (rank == 0) {
        PB_NCCL_CHECK(api.send(pb__cuda_ptr<const void>(a->send), a->count, type, 1, nc, stream));
        PB_NCCL_CHECK(api.recv(pb__cuda_ptr<void>(a->recv), a->count, type, 1, nc, stream));
    } else {
        PB_NCCL_CHECK(api.recv(pb__cuda_ptr<void>(a->recv), a->count, type, 0, nc, stream));
        PB_NCCL_CHECK(api.send(pb__cuda_ptr<const void>(a->send), a->count, type, 0, nc, stream));
    }
    PB_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (rank == 0)
        *a->seconds = (pb__now() - t0) / 2;
    return PB_OK;
}

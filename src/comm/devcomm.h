/* Device buffers between ranks without staging them through host memory:
 * the halos of spmv-dist and the panels of gemm-dist, through NCCL or a
 * CUDA-aware MPI where the backend has one (the path), otherwise staged by
 * the benchmark itself through pinned host buffers.
 *
 * A backend offers paths through its `devcomm` operations (NULL: none). The
 * benchmark opens one per communicator it moves data over, at bind, and
 * names its path in the row. */
#ifndef PARBENCH_DEVCOMM_H
#define PARBENCH_DEVCOMM_H

#include <stddef.h>

#include "comm/comm.h"
#include "parbench/pb_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

enum pb_devcomm_path {
    PB_PATH_AUTO,   /* NCCL, else CUDA-aware MPI, else staged */
    PB_PATH_STAGED, /* through pinned host memory (the benchmark's own code) */
    PB_PATH_MPI,    /* MPI on device pointers (a CUDA-aware MPI) */
    PB_PATH_NCCL,   /* NCCL on the device buffers */
};

#define PB_PATH_NAMES "auto, staged, mpi or nccl"
/* The path --path names (false: none). */
bool pb__devcomm_path_parse(const char *name, enum pb_devcomm_path *out);
const char *pb__devcomm_path_name(enum pb_devcomm_path p);
/* Where the device's memory is the host's (ref, OpenMP), staging has no
 * pinned copy to go through: rows say this instead. */
#define PB_DEVCOMM_STAGED_HOST "staged through host memory"
/* For rows: "through NCCL (device buffers)", "staged through pinned host memory"... */
const char *pb__devcomm_describe(enum pb_devcomm_path p);

/* A halo exchange, planned once: element send_index[send_first[i] + k]
 * (k < send_count[i]) of the source goes to peers[i], and recv_count[i]
 * elements from peers[i] land at recv_first[i] of the destination. The lists
 * must agree pairwise, as pb__comm_exchange_start's. send_index is a device
 * buffer of int32 indices; pack a device buffer of at least the sum of
 * send_count elements (what is sent, gathered). */
struct pb_devcomm_halo {
    size_t n;
    const int *peers;
    const pb_buf *send_index;
    const size_t *send_first, *send_count;
    pb_buf *pack;
    const size_t *recv_first, *recv_count;
    size_t esize; /* 4 or 8 bytes */
};

/* A backend's paths. Every call is collective over the communicator open
 * was given, in the same order on every rank. */
struct pb_devcomm_ops {
    /* Opens path (MPI or NCCL) on dev over comm; PB_ERR_UNSUPPORTED, with
     * the reason, where it cannot run. Every rank gets the same answer. */
    pb_status (*open)(pb_device *dev, pb_comm *comm, enum pb_devcomm_path path, void **impl);
    void (*close)(void *impl);
    /* bytes from src + src_off on root to dst + dst_off on every rank (root
     * included; src is only read on root), queued on s. */
    pb_status (*bcast)(void *impl, const pb_buf *src, size_t src_off, pb_buf *dst, size_t dst_off, size_t bytes,
                       int root, pb_stream *s);
    /* The halo h from src (indices relative to element src_first) into dst
     * (relative to element dst_first), queued on s. */
    pb_status (*exchange)(void *impl, const struct pb_devcomm_halo *h, const pb_buf *src, size_t src_first,
                          pb_buf *dst, size_t dst_first, pb_stream *s);
    /* Every rank's part of buf to every rank, in place: part r (bytes[r] at
     * offset[r], one per rank) comes from rank r. Queued on s. */
    pb_status (*allgatherv)(void *impl, pb_buf *buf, const size_t *offset, const size_t *bytes, pb_stream *s);
};

struct pb_devcomm;

/* Opens the path `want` on dev over comm (collective). *out is NULL when the
 * data goes staged: asked for, or `auto` found no other path (why then says
 * what each path lacked, for the row: any failure of a direct path, its
 * set-up included, falls back). A path asked for by name that cannot run
 * fails on every rank with the reason (PB_ERR_UNSUPPORTED where it is
 * missing). */
pb_status pb__devcomm_open(pb_device *dev, pb_comm *comm, enum pb_devcomm_path want, struct pb_devcomm **out,
                           char *why, size_t len);
/* Accepts NULL; every rank closes what it opened. */
void pb__devcomm_close(struct pb_devcomm *d);
enum pb_devcomm_path pb__devcomm_path(const struct pb_devcomm *d); /* NULL: staged */
pb_status pb__devcomm_bcast(struct pb_devcomm *d, const pb_buf *src, size_t src_off, pb_buf *dst, size_t dst_off,
                            size_t bytes, int root, pb_stream *s);
pb_status pb__devcomm_exchange(struct pb_devcomm *d, const struct pb_devcomm_halo *h, const pb_buf *src,
                               size_t src_first, pb_buf *dst, size_t dst_first, pb_stream *s);
pb_status pb__devcomm_allgatherv(struct pb_devcomm *d, pb_buf *buf, const size_t *offset, const size_t *bytes,
                                 pb_stream *s);

#ifdef __cplusplus
}
#endif
#endif

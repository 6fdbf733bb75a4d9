/* Ranks: the processes of one run, and the few collectives parbench needs.
 *
 * Under an MPI launcher (mpirun, mpiexec, srun) every process is one rank of
 * MPI_COMM_WORLD; otherwise, and in builds without MPI, the run is one rank
 * (the one-process communicator: every collective is a copy or a no-op).
 * Benchmarks and the runner only see this interface, never MPI itself.
 *
 * Every call is collective unless said otherwise: all ranks make it, in the
 * same order, with matching sizes. A failure returns a status with the MPI
 * library's message (errors are returned, never fatal). */
#ifndef PARBENCH_COMM_H
#define PARBENCH_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parbench/pb.h"
#include "parbench/pb_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pb_comm pb_comm;

enum pb_comm_type { PB_COMM_BYTE, PB_COMM_INT32, PB_COMM_INT64, PB_COMM_FLOAT, PB_COMM_DOUBLE };
enum pb_comm_op { PB_COMM_SUM, PB_COMM_MIN, PB_COMM_MAX };

/* Starts the communicator of this process: MPI when the process was started
 * by an MPI launcher (its environment says so) or PARBENCH_MPI=1, the
 * one-process one when PARBENCH_MPI=0, without a launcher, or without MPI in
 * the build. Not collective before MPI is up; call once, first thing. */
pb_status pb__comm_init(void);
/* Ends MPI (collective); after it pb__comm_world() is the one-process one. */
void pb__comm_finalize(void);
/* The communicator of this process; the one-process one before init. */
pb_comm *pb__comm_world(void);

/* Not collective. */
int pb__comm_rank(const pb_comm *c);
int pb__comm_size(const pb_comm *c);
int pb__comm_local_rank(const pb_comm *c); /* among the ranks of this node */
int pb__comm_local_size(const pb_comm *c);
int pb__comm_nodes(const pb_comm *c);
/* Host names of the ranks' nodes, distinct, comma-separated, in rank order. */
const char *pb__comm_hosts(const pb_comm *c);
/* "none" (one process) or the MPI library, e.g. "Open MPI v4.1.4". */
const char *pb__comm_library(const pb_comm *c);
/* True when the MPI library takes CUDA device pointers (CUDA-aware MPI). */
bool pb__comm_cuda_aware(const pb_comm *c);
/* MPI_Comm of this communicator as an opaque pointer (for NCCL's bootstrap
 * and tests), NULL for the one-process one. */
void *pb__comm_mpi_handle(pb_comm *c);

size_t pb__comm_type_size(enum pb_comm_type t);

pb_status pb__comm_barrier(pb_comm *c);
/* recv = op over ranks of send, count elements; send == recv reduces in place. */
pb_status pb__comm_allreduce(pb_comm *c, const void *send, void *recv, size_t count,
                             enum pb_comm_type t, enum pb_comm_op op);
pb_status pb__comm_bcast(pb_comm *c, void *buf, size_t bytes, int root);
/* Every rank sends `bytes`; root receives size * bytes, in rank order
 * (recv is only used on root). */
pb_status pb__comm_gather(pb_comm *c, const void *send, size_t bytes, void *recv, int root);
/* Every rank receives size * bytes. */
pb_status pb__comm_allgather(pb_comm *c, const void *send, size_t bytes, void *recv);
/* Every rank sends block r of send (bytes each, size blocks) to rank r and
 * receives rank r's block for it as block r of recv. */
pb_status pb__comm_alltoall(pb_comm *c, const void *send, size_t bytes, void *recv);

/* Non-blocking exchange with a list of peers (a halo exchange): send[i]
 * (send_bytes[i]) goes to peers[i] and recv[i] (recv_bytes[i]) comes from
 * it; zero-byte entries are skipped. Collective among the peers only; the
 * lists must agree pairwise. The buffers must stay valid until
 * pb__comm_exchange_wait returns; the work between start and wait overlaps
 * the transfer. */
struct pb_comm_exchange;
pb_status pb__comm_exchange_start(pb_comm *c, size_t n, const int *peers, const void *const *send,
                                  const size_t *send_bytes, void *const *recv, const size_t *recv_bytes,
                                  struct pb_comm_exchange **out);
/* Waits for every transfer and frees the handle (accepts NULL). */
pb_status pb__comm_exchange_wait(struct pb_comm_exchange *x);

/* Sub-communicators: *out holds the ranks of c that passed the same color
 * (>= 0), ranked by key (ties by their rank in c); e.g. the rows and the
 * columns of a process grid. Collective over c. The node layout, hosts and
 * library of *out are c's (a process's node does not change). The
 * one-process transport gives a copy of itself. Free it with
 * pb__comm_free (collective over *out; accepts NULL; never frees the
 * world communicator). */
pb_status pb__comm_split(pb_comm *c, int color, int key, pb_comm **out);
void pb__comm_free(pb_comm *c);

/* Point-to-point, blocking (a ping-pong). */
pb_status pb__comm_send(pb_comm *c, const void *buf, size_t bytes, int peer, int tag);
pb_status pb__comm_recv(pb_comm *c, void *buf, size_t bytes, int peer, int tag);

/* After a step that may fail on some ranks only (a file, a device, memory):
 * PB_OK when it worked everywhere; otherwise a failing rank keeps its own
 * status and message, and every other rank returns the status of the lowest
 * failing rank with the message "rank K: <its message>". Call it before any
 * collective that follows such a step, so no rank is left waiting. */
pb_status pb__comm_agree(pb_comm *c, pb_status st);

/* Ends every rank at once with `code` (MPI_Abort): for a rank that cannot
 * continue while the others may be waiting in a collective. One process:
 * returns without doing anything. */
void pb__comm_abort(pb_comm *c, int code);

/* The collective benchmarks (bench/collectives.c), one per operation. */
enum pb_collective {
    PB_COLL_ALLREDUCE, /* recv = the sum over the ranks of send, count elements */
    PB_COLL_ALLGATHER, /* piece r of recv (count elements each) = rank r's send */
    PB_COLL_ALLTOALL,  /* piece r of recv = piece `rank` of rank r's send */
    PB_COLL_BROADCAST, /* rank 0's recv to every rank's, in place (send == recv) */
    PB_COLL_PINGPONG,  /* rank 0 sends, rank 1 answers, count elements each way */
};

/* Arguments of the collective benchmarks' variants: count elements of type
 * (per piece for allgather and alltoall); stage_send and stage_recv are
 * pinned host buffers of the send and recv sizes for the variants that go
 * through host memory. A buffer a rank does not use is NULL (pingpong's
 * ranks other than 0 and 1). pingpong's variants time themselves: rank 0
 * writes its round trip / 2 to *seconds, the other ranks 0. A backend's
 * collective variant names its path in its .data (e.g. "NCCL"), for the
 * rows. */
struct pb_collective_args {
    pb_comm *comm;
    enum pb_collective op;
    enum pb_comm_type type;
    size_t count;
    const pb_buf *send;
    pb_buf *recv;
    pb_buf *stage_send, *stage_recv;
    double *seconds;
};

#ifdef __cplusplus
}
#endif
#endif

/* The communicator's private side: one ops table per transport (comm.c has
 * the one-process one, comm_mpi.c the MPI one). */
#ifndef PARBENCH_COMM_IMPL_H
#define PARBENCH_COMM_IMPL_H

#include "comm/comm.h"

struct pb_comm_ops {
    pb_status (*barrier)(pb_comm *c);
    pb_status (*allreduce)(pb_comm *c, const void *send, void *recv, size_t count, enum pb_comm_type t,
                           enum pb_comm_op op);
    pb_status (*bcast)(pb_comm *c, void *buf, size_t bytes, int root);
    pb_status (*gather)(pb_comm *c, const void *send, size_t bytes, void *recv, int root);
    pb_status (*allgather)(pb_comm *c, const void *send, size_t bytes, void *recv);
    pb_status (*alltoall)(pb_comm *c, const void *send, size_t bytes, void *recv);
    pb_status (*exchange_start)(pb_comm *c, size_t n, const int *peers, const void *const *send,
                                const size_t *send_bytes, void *const *recv, const size_t *recv_bytes,
                                struct pb_comm_exchange **out);
    pb_status (*exchange_wait)(struct pb_comm_exchange *x);
    pb_status (*send)(pb_comm *c, const void *buf, size_t bytes, int peer, int tag);
    pb_status (*recv)(pb_comm *c, void *buf, size_t bytes, int peer, int tag);
    void (*abort)(pb_comm *c, int code);
    void (*finalize)(pb_comm *c);
    /* *out is heap memory that free_split releases (with its transport's part). */
    pb_status (*split)(pb_comm *c, int color, int key, pb_comm **out);
    void (*free_split)(pb_comm *c);
};

struct pb_comm {
    const struct pb_comm_ops *ops;
    int rank, size, local_rank, local_size, nodes;
    char hosts[1024];
    char library[128];
    bool cuda_aware;
    void *mpi_comm; /* MPI_Comm *, owned by comm_mpi.c */
};

struct pb_comm_exchange {
    pb_comm *c;
    size_t n;
    void *requests; /* transport's own */
};

#ifdef PB_HAVE_MPI
/* Starts MPI and fills c (rank, size, node layout, hosts, library). */
pb_status pb__comm_mpi_start(pb_comm *c);
#endif

#endif

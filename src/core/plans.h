/* What a backend keeps per matrix across calls (a plan, a converted copy),
 * for a few matrices at once, so a caller multiplying several in turn
 * (spmv-dist's interior rows and the boundary rows' stages, up to six, a
 * multigrid's levels) keeps every one's. A matrix is known by its row offsets' buffer; the plans themselves
 * compare that buffer's stamps to see when it changed. */
#ifndef PARBENCH_PLANS_H
#define PARBENCH_PLANS_H

#include <stdint.h>

#include "core/backend_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PB_PLAN_SLOTS 8

struct pb_plans {
    struct {
        const pb_buf *key; /* the row offsets' buffer (NULL: free slot) */
        void *plan;
        uint64_t used; /* when last handed out */
    } slot[PB_PLAN_SLOTS];
    uint64_t clock;
    void *(*make)(void);      /* a new empty plan; NULL: out of memory */
    void (*drop)(void *plan); /* frees one */
};

/* The plan of the matrix whose row offsets are in key: its own, else a new
 * one in a free slot, else the least recently used one handed over (its
 * contents then stale by their stamps). NULL: out of memory (said). */
void *pb__plans_for(struct pb_plans *p, const pb_buf *key);
/* Drops the plan of key's matrix, if any (its buffer is being freed). */
void pb__plans_forget(struct pb_plans *p, const pb_buf *key);
/* Drops every plan. */
void pb__plans_clear(struct pb_plans *p);

#ifdef __cplusplus
}
#endif

#endif

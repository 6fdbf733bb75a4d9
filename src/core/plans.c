#include "core/plans.h"

#include "core/core.h"

void *pb__plans_for(struct pb_plans *p, const pb_buf *key)
{
    int pick = -1;
    for (int i = 0; i < PB_PLAN_SLOTS && pick < 0; i++)
        if (p->slot[i].plan && p->slot[i].key == key)
            pick = i;
    for (int i = 0; i < PB_PLAN_SLOTS && pick < 0; i++)
        if (!p->slot[i].plan)
            pick = i;
    if (pick < 0) {
        pick = 0;
        for (int i = 1; i < PB_PLAN_SLOTS; i++)
            if (p->slot[i].used < p->slot[pick].used)
                pick = i;
    }
    if (!p->slot[pick].plan && !(p->slot[pick].plan = p->make())) {
        pb__fail(PB_ERR_NOMEM, "out of host memory");
        return NULL;
    }
    p->slot[pick].key = key;
    p->slot[pick].used = ++p->clock;
    return p->slot[pick].plan;
}

void pb__plans_forget(struct pb_plans *p, const pb_buf *key)
{
    for (int i = 0; i < PB_PLAN_SLOTS; i++)
        if (p->slot[i].plan && p->slot[i].key == key) {
            void *plan = p->slot[i].plan; /* out of the slot first: dropping it frees buffers too */
            p->slot[i].plan = NULL, p->slot[i].key = NULL;
            p->drop(plan);
        }
}

void pb__plans_clear(struct pb_plans *p)
{
    for (int i = 0; i < PB_PLAN_SLOTS; i++)
        if (p->slot[i].plan) {
            void *plan = p->slot[i].plan;
            p->slot[i].plan = NULL, p->slot[i].key = NULL;
            p->drop(plan);
        }
}

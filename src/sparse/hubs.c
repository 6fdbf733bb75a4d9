/* Hub columns (csr-hubs; sparse.h). */
#include <stdlib.h>

#include "core/core.h"
#include "sparse/sparse.h"

struct hub {
    int32_t count, col;
};

static int hotter_first(const void *a, const void *b)
{
    const struct hub *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return (x->col > y->col) - (x->col < y->col);
}

pb_status pb__hubs_plan(const int32_t *count, int32_t cols, int64_t nnz, bool any, struct pb_hubs *out,
                        int32_t *label)
{
    out->list = NULL, out->n = 0, out->share = 0;
    double least = cols ? PB_HUB_FACTOR * (double)nnz / cols : 0;
    int64_t n = 0, in_hubs = 0;
    for (int32_t c = 0; c < cols; c++)
        if (count[c] > 0 && count[c] >= least)
            n++, in_hubs += count[c];
    out->share = nnz ? (double)in_hubs / (double)nnz : 0;
    if (!any && out->share < PB_HUB_SHARE)
        return pb__hubs_refuse(out->share);
    struct hub *h = NULL;
    pb_status st = pb__host_alloc((size_t)(n ? n : 1) * sizeof *h, "hub columns", (void **)&h);
    if (st == PB_OK)
        st = pb__host_alloc((size_t)(n ? n : 1) * sizeof *out->list, "hub columns", (void **)&out->list);
    if (st != PB_OK) {
        pb__host_free(h);
        return st;
    }
    int64_t at = 0;
    for (int32_t c = 0; c < cols; c++)
        if (count[c] > 0 && count[c] >= least)
            h[at].count = count[c], h[at++].col = c;
    qsort(h, (size_t)n, sizeof *h, hotter_first);
    out->n = (int32_t)n;
    for (int32_t c = 0; c < cols; c++)
        label[c] = (int32_t)n + c;
    for (int64_t i = 0; i < n; i++)
        out->list[i] = h[i].col, label[h[i].col] = (int32_t)i;
    pb__host_free(h);
    return PB_OK;
}

pb_status pb__hubs_refuse(double share)
{
    return pb__fail(PB_ERR_UNSUPPORTED,
                    "no hub columns: those of %d times the mean count of entries or more hold %.0f%% of them, "
                    "under %.0f%%",
                    PB_HUB_FACTOR, 100 * share, 100 * PB_HUB_SHARE);
}

void pb__hubs_free(struct pb_hubs *h)
{
    pb__host_free(h->list);
    h->list = NULL, h->n = 0;
}

/* Choosing and running a device path (comm/devcomm.h). */
#include "comm/devcomm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_impl.h"
#include "core/core.h"

struct pb_devcomm {
    const struct pb_devcomm_ops *ops;
    enum pb_devcomm_path path;
    void *impl;
};

static const char *const path_names[] = {
    [PB_PATH_AUTO] = "auto", [PB_PATH_STAGED] = "staged", [PB_PATH_MPI] = "mpi", [PB_PATH_NCCL] = "nccl"};

bool pb__devcomm_path_parse(const char *name, enum pb_devcomm_path *out)
{
    for (size_t i = 0; i < sizeof path_names / sizeof path_names[0]; i++)
        if (strcmp(name, path_names[i]) == 0) {
            *out = (enum pb_devcomm_path)i;
            return true;
        }
    return false;
}

const char *pb__devcomm_path_name(enum pb_devcomm_path p)
{
    return (size_t)p < sizeof path_names / sizeof path_names[0] ? path_names[p] : "?";
}

const char *pb__devcomm_describe(enum pb_devcomm_path p)
{
    switch (p) {
    case PB_PATH_NCCL: return "through NCCL (device buffers)";
    case PB_PATH_MPI: return "through CUDA-aware MPI (device pointers)";
    case PB_PATH_STAGED: return "staged through pinned host memory";
    case PB_PATH_AUTO: break;
    }
    return "?";
}

/* One path, agreed by every rank. */
static pb_status try_path(pb_device *dev, pb_comm *comm, enum pb_devcomm_path path, void **impl)
{
    const struct pb_devcomm_ops *ops = pb_device_backend(dev)->devcomm;
    *impl = NULL;
    pb_status st = ops->open(dev, comm, path, impl);
    pb_status all = pb__comm_agree(comm, st);
    if (all != PB_OK && st == PB_OK) { /* another rank could not: nobody uses it */
        ops->close(*impl);
        *impl = NULL;
    }
    return all;
}

pb_status pb__devcomm_open(pb_device *dev, pb_comm *comm, enum pb_devcomm_path want, struct pb_devcomm **out,
                           char *why, size_t len)
{
    *out = NULL;
    if (len)
        why[0] = '\0';
    if (want == PB_PATH_STAGED)
        return PB_OK;
    const struct pb_backend *b = pb_device_backend(dev);
    if (!b->devcomm) {
        if (want == PB_PATH_AUTO)
            return PB_OK;
        return pb__fail(PB_ERR_UNSUPPORTED, "--path %s: the %s backend has no device path (only staged)",
                        pb__devcomm_path_name(want), b->name);
    }
    const enum pb_devcomm_path order[] = {PB_PATH_NCCL, PB_PATH_MPI};
    size_t used = 0;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (want != PB_PATH_AUTO && want != order[i])
            continue;
        void *impl = NULL;
        pb_status st = try_path(dev, comm, order[i], &impl);
        if (st == PB_OK) {
            struct pb_devcomm *d = calloc(1, sizeof *d);
            if (!d) {
                b->devcomm->close(impl);
                return pb__comm_agree(comm, pb__fail(PB_ERR_NOMEM, "out of host memory"));
            }
            d->ops = b->devcomm;
            d->path = order[i];
            d->impl = impl;
            /* A rank short of memory just now leaves the others holding theirs. */
            if ((st = pb__comm_agree(comm, PB_OK)) != PB_OK) {
                pb__devcomm_close(d);
                return st;
            }
            *out = d;
            return PB_OK;
        }
        /* auto never fails a run that staging can do: any agreed failure of a
         * direct path (NCCL's set-up included) is a reason to go on */
        if (want != PB_PATH_AUTO)
            return st;
        if (used < len) {
            int n = snprintf(why + used, len - used, "%s%s", used ? "; " : "", pb_last_error());
            used += n > 0 ? (size_t)n : 0;
        }
    }
    return PB_OK; /* auto, nothing direct: staged */
}

void pb__devcomm_close(struct pb_devcomm *d)
{
    if (!d)
        return;
    d->ops->close(d->impl);
    free(d);
}

enum pb_devcomm_path pb__devcomm_path(const struct pb_devcomm *d) { return d ? d->path : PB_PATH_STAGED; }

pb_status pb__devcomm_bcast(struct pb_devcomm *d, const pb_buf *src, size_t src_off, pb_buf *dst, size_t dst_off,
                            size_t bytes, int root, pb_stream *s)
{
    return d->ops->bcast(d->impl, src, src_off, dst, dst_off, bytes, root, s);
}

pb_status pb__devcomm_exchange(struct pb_devcomm *d, const struct pb_devcomm_halo *h, const pb_buf *src,
                               size_t src_first, pb_buf *dst, size_t dst_first, pb_stream *s)
{
    return d->ops->exchange(d->impl, h, src, src_first, dst, dst_first, s);
}

pb_status pb__devcomm_allgatherv(struct pb_devcomm *d, pb_buf *buf, const size_t *offset, const size_t *bytes,
                                 pb_stream *s)
{
    return d->ops->allgatherv(d->impl, buf, offset, bytes, s);
}

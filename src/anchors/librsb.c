/* librsb as the CPU SpMV anchor. librsb multiplies with its own recursive
 * blocked copy of the matrix, so that copy is built once per input (buffer
 * stamps say when CSR arrays changed) and the timed call is rsb_spmv alone,
 * as a user who multiplies many times would see it. One cached matrix:
 * callers use the anchor from one thread at a time. */
#include <rsb.h>
#include <stdlib.h>

#include "anchors/anchors.h"
#include "core/backend_impl.h"
#include "core/core.h"

static struct {
    bool initialised;
    struct rsb_mtx_t *mtx;
    uint64_t ptr, idx, val; /* stamps of the arrays it was built from */
    enum pb_precision prec;
} rsb;

static void rsb_shutdown(void)
{
    if (rsb.mtx)
        rsb_mtx_free(rsb.mtx);
    rsb_lib_exit(RSB_NULL_EXIT_OPTIONS);
    rsb.mtx = NULL;
    rsb.initialised = false;
}

static pb_status rsb_failed(rsb_err_t e, const char *what)
{
    char msg[128] = "";
    rsb_strerror_r(e, msg, sizeof msg);
    return pb__fail(PB_ERR_DEVICE, "librsb: %s: %s", what, msg);
}

pb_status pb__rsb_spmv(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_spmv_args *a = args;
    rsb_err_t e;
    if (!rsb.initialised) {
        if ((e = rsb_lib_init(RSB_NULL_INIT_OPTIONS)) != RSB_ERR_NO_ERROR)
            return rsb_failed(e, "initialisation");
        rsb.initialised = true;
        atexit(rsb_shutdown);
    }
    rsb_int_t threads = dev->threads > 0 ? dev->threads : 1;
    if ((e = rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &threads)) != RSB_ERR_NO_ERROR)
        return rsb_failed(e, "setting the thread count");
    rsb_type_t type = a->prec == PB_DOUBLE ? RSB_NUMERICAL_TYPE_DOUBLE : RSB_NUMERICAL_TYPE_FLOAT;
    if (!rsb.mtx || rsb.ptr != a->ptr->stamp || rsb.idx != a->idx->stamp || rsb.val != a->val->stamp ||
        rsb.prec != a->prec) {
        if (rsb.mtx)
            rsb_mtx_free(rsb.mtx);
        rsb.mtx = rsb_mtx_alloc_from_csr_const(a->val->host, a->ptr->host, a->idx->host, (rsb_nnz_idx_t)a->nnz, type,
                                               a->rows, a->cols, 1, 1, RSB_FLAG_NOFLAGS, &e);
        if (!rsb.mtx)
            return rsb_failed(e, "building its matrix");
        rsb.ptr = a->ptr->stamp, rsb.idx = a->idx->stamp, rsb.val = a->val->stamp, rsb.prec = a->prec;
    }
    const double one = 1, zero = 0;
    const float one_f = 1, zero_f = 0;
    const void *alpha = a->prec == PB_DOUBLE ? (const void *)&one : &one_f;
    const void *beta = a->prec == PB_DOUBLE ? (const void *)&zero : &zero_f;
    if ((e = rsb_spmv(RSB_TRANSPOSITION_N, alpha, rsb.mtx, a->x->host, 1, beta, a->y->host, 1)) != RSB_ERR_NO_ERROR)
        return rsb_failed(e, "rsb_spmv");
    return PB_OK;
}

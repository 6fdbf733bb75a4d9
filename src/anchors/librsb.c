/* librsb as the CPU SpMV anchor. librsb multiplies with its own recursive
 * blocked copy of the matrix, so that copy is built once per input (buffer
 * stamps say when CSR arrays changed) and the timed call is rsb_spmv alone,
 * as a user who multiplies many times would see it. One cached matrix (and
 * librsb's thread count, a process-wide option), so threads take turns:
 * rsb_lock is held from the cache's lookup to the end of its use. */
#include <pthread.h>
#include <rsb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anchors/anchors.h"
#include "core/backend_impl.h"
#include "core/core.h"

/* [0] as built, [1] tuned by rsb_tune_spmm. */
static struct rsb_cache {
    struct rsb_mtx_t *mtx;
    uint64_t ptr, idx, val; /* stamps of the arrays it was built from */
    int32_t rows, cols;     /* and the arguments' sizes that read them */
    int64_t nnz;
    enum pb_precision prec;
    rsb_int_t threads;      /* it runs with */
    rsb_int_t tuned_for;    /* threads the tuner was given */
} rsb[2];
static bool rsb_initialised;
static pthread_mutex_t rsb_lock = PTHREAD_MUTEX_INITIALIZER;

static void rsb_shutdown(void)
{
    pthread_mutex_lock(&rsb_lock); /* a thread still multiplying finishes first */
    for (int i = 0; i < 2; i++)
        if (rsb[i].mtx)
            rsb_mtx_free(rsb[i].mtx);
    rsb_lib_exit(RSB_NULL_EXIT_OPTIONS);
    memset(rsb, 0, sizeof rsb);
    rsb_initialised = false;
    pthread_mutex_unlock(&rsb_lock);
}

static pb_status rsb_failed(rsb_err_t e, const char *what)
{
    char msg[128] = "";
    rsb_strerror_r(e, msg, sizeof msg);
    return pb__fail(PB_ERR_DEVICE, "librsb: %s: %s", what, msg);
}

/* librsb's matrix of a (tuned: and re-blocked by its autotuner for the
 * device's thread count, timing products into a's y), made when stale.
 * Called with rsb_lock held, kept until *out is no longer used. */
static pb_status rsb_ready(pb_device *dev, const struct pb_spmv_args *a, bool tuned, struct rsb_cache **out)
{
    rsb_err_t e;
    /* librsb supports so many threads (RSB_CONST_MAX_SUPPORTED_THREADS, in
     * rsb-config.h, which rsb.h leaves out); 514 spun forever in its locks. */
    enum { RSB_MOST_THREADS = 128 };
    /* Its tuner refuses more threads than librsb started with (OpenMP's
     * count then: OMP_NUM_THREADS=1 with --threads 2 failed as "corrupt or
     * inconsistent data"), so it is given at most those; the row's note
     * says how many. */
    static rsb_int_t started_with = 1;
    if (!rsb_initialised) {
        if ((e = rsb_lib_init(RSB_NULL_INIT_OPTIONS)) != RSB_ERR_NO_ERROR)
            return rsb_failed(e, "initialisation");
        if (rsb_lib_get_opt(RSB_IO_WANT_EXECUTING_THREADS, &started_with) != RSB_ERR_NO_ERROR || started_with < 1)
            started_with = 1;
        rsb_initialised = true;
        atexit(rsb_shutdown);
    }
    rsb_int_t threads = dev->threads > 0 ? dev->threads : 1;
    if (threads > RSB_MOST_THREADS)
        threads = RSB_MOST_THREADS;
    if ((e = rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &threads)) != RSB_ERR_NO_ERROR)
        return rsb_failed(e, "setting the thread count");
    struct rsb_cache *c = *out = &rsb[tuned];
    if (c->mtx && c->ptr == a->ptr->stamp && c->idx == a->idx->stamp && c->val == a->val->stamp &&
        c->rows == a->rows && c->cols == a->cols && c->nnz == a->nnz && c->prec == a->prec &&
        (!tuned || c->threads == threads))
        return PB_OK;
    if (c->mtx)
        rsb_mtx_free(c->mtx);
    c->mtx = NULL;
    /* What librsb's assembly (and its tuner's copies) took at most per entry
     * on the 2-core machines, with room to spare: 11 and 33 bytes. */
    double per_entry = (double)(pb_precision_size(a->prec) + 8) * (tuned ? 3 : 1.5);
    pb_status st = pb__host_mem_need(per_entry * (double)a->nnz, tuned ? "librsb-tuned" : "librsb",
                                     "for its matrix");
    if (st != PB_OK)
        return st;
    rsb_type_t type = a->prec == PB_DOUBLE ? RSB_NUMERICAL_TYPE_DOUBLE : RSB_NUMERICAL_TYPE_FLOAT;
    c->mtx = rsb_mtx_alloc_from_csr_const(a->val->host, a->ptr->host, a->idx->host, (rsb_nnz_idx_t)a->nnz, type,
                                          a->rows, a->cols, 1, 1, RSB_FLAG_NOFLAGS, &e);
    if (!c->mtx)
        return rsb_failed(e, "building its matrix");
    rsb_int_t tuned_for = 0;
    if (tuned) {
        const double one = 1, zero = 0;
        const float one_f = 1, zero_f = 0;
        bool dbl = a->prec == PB_DOUBLE;
        rsb_real_t speedup = 0;
        /* positive: tune the matrix for this many threads, not the count; the
         * tuner refuses more threads than cores, or than librsb started with */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        rsb_int_t tn = cores > 0 && threads > cores ? (rsb_int_t)cores : threads;
        tn = tuned_for = tn > started_with ? started_with : tn;
        /* A matrix without rows or columns has nothing to tune, and the
         * tuner calls it corrupt. */
        e = RSB_ERR_NO_ERROR;
        if (a->rows > 0 && a->cols > 0)
            e = rsb_tune_spmm(&c->mtx, &speedup, &tn, 0, 0, RSB_TRANSPOSITION_N, dbl ? (const void *)&one : &one_f,
                              NULL, 1, RSB_FLAG_WANT_COLUMN_MAJOR_ORDER, a->x->host, a->cols,
                              dbl ? (const void *)&zero : &zero_f, a->y->host, a->rows);
        if (e != RSB_ERR_NO_ERROR) {
            rsb_mtx_free(c->mtx);
            c->mtx = NULL;
            return rsb_failed(e, "rsb_tune_spmm");
        }
        if ((e = rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &threads)) != RSB_ERR_NO_ERROR)
            return rsb_failed(e, "setting the thread count");
    }
    c->ptr = a->ptr->stamp, c->idx = a->idx->stamp, c->val = a->val->stamp, c->prec = a->prec, c->threads = threads;
    c->rows = a->rows, c->cols = a->cols, c->nnz = a->nnz;
    c->tuned_for = tuned ? tuned_for : 0;
    return PB_OK;
}

static pb_status rsb_run_locked(pb_device *dev, const struct pb_spmv_args *a, bool tuned)
{
    struct rsb_cache *c;
    pb_status st = rsb_ready(dev, a, tuned, &c);
    if (st != PB_OK)
        return st;
    if (a->cols == 0) { /* librsb leaves y as it was */
        memset(a->y->host, 0, (size_t)a->rows * pb_precision_size(a->prec));
        return PB_OK;
    }
    const double one = 1, zero = 0;
    const float one_f = 1, zero_f = 0;
    const void *alpha = a->prec == PB_DOUBLE ? (const void *)&one : &one_f;
    const void *beta = a->prec == PB_DOUBLE ? (const void *)&zero : &zero_f;
    rsb_err_t e = rsb_spmv(RSB_TRANSPOSITION_N, alpha, c->mtx, a->x->host, 1, beta, a->y->host, 1);
    return e == RSB_ERR_NO_ERROR ? PB_OK : rsb_failed(e, "rsb_spmv");
}

static pb_status rsb_run(pb_device *dev, const struct pb_spmv_args *a, bool tuned)
{
    pthread_mutex_lock(&rsb_lock);
    pb_status st = rsb_run_locked(dev, a, tuned);
    pthread_mutex_unlock(&rsb_lock);
    return st;
}

pb_status pb__rsb_spmv(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    return rsb_run(dev, args, false);
}

pb_status pb__rsb_spmv_tuned(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    return rsb_run(dev, args, true);
}

/* What the row's thread count does not say: librsb ran fewer. */
static const char *threads_capped(const pb_device *dev, const struct rsb_cache *c, char *buf, size_t len)
{
    buf[0] = '\0';
    if (dev->threads > c->threads)
        snprintf(buf, len, "; %d threads, the most librsb takes", (int)c->threads);
    return buf;
}

pb_status pb__rsb_spmv_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    struct rsb_cache *c;
    pthread_mutex_lock(&rsb_lock);
    pb_status st = rsb_ready(dev, args, false, &c);
    char capped[64];
    if (st == PB_OK && threads_capped(dev, c, capped, sizeof capped)[0])
        snprintf(note, len, "%s", capped + 2);
    pthread_mutex_unlock(&rsb_lock);
    return st;
}

pb_status pb__rsb_spmv_tuned_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    struct rsb_cache *c;
    pthread_mutex_lock(&rsb_lock);
    pb_status st = rsb_ready(dev, args, true, &c);
    char leaves[32] = "", capped[64];
    if (st == PB_OK &&
        rsb_mtx_get_info_str(c->mtx, "RSB_MIF_LEAVES_COUNT__TO__RSB_BLK_INDEX_T", leaves, sizeof leaves) ==
            RSB_ERR_NO_ERROR)
        snprintf(note, len, "tuned into %s leaf blocks for %d thread%s%s", leaves, (int)c->tuned_for,
                 c->tuned_for == 1 ? "" : "s", threads_capped(dev, c, capped, sizeof capped));
    pthread_mutex_unlock(&rsb_lock);
    return st;
}

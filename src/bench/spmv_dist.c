/* spmv-dist: y = A * x with A's rows spread over the ranks (distributed), the
 * kernel of every iterative solver.
 *
 * Rank 0 reads or generates A and sends each rank its rows (--reader one), or
 * every rank reads the file and keeps its own rows (--reader each: for files
 * larger than one host's memory share): contiguous blocks balanced by
 * non-zeros (--balance nnz) or by rows. x is spread like
 * the rows (square A) or in even column blocks. Each rank splits its rows
 * into interior rows, which need only its own x, and boundary rows, which
 * also need x from other ranks (the halo). The halo lists are built once, at
 * bind, from the column pattern: a rank exchanges with the ranks it shares
 * columns with, nobody else.
 *
 * Each rank's x is stored [entries no other rank needs | entries some rank
 * needs | halo], so one contiguous download gives everything to send and one
 * contiguous upload places what arrives (--halo p2p). Where a rank needs most
 * of x, --halo allgather keeps the whole x in global order on every rank and
 * each rank's part goes to all (NCCL's allgather where the parts are equal,
 * its broadcasts grouped where not; no gather on either side). auto, the
 * default, gathers where some rank's halo is at least half of what the
 * others own (power-law rows on two H200s: 0.42 ms against 0.49 with p2p).
 * Variants:
 *   overlap   download what is sent, start the exchange, run the interior
 *             rows while the halo travels, then upload it and run the
 *             boundary rows;
 *   blocking  exchange, then both products.
 * The local products are the backend's CSR kernel (--local, default the
 * backend's own: auto on CUDA, OpenCL and OpenMP, which keep a plan per
 * block; csr on ref). Halos take the device
 * path --path asks for (comm/devcomm.h: what is sent gathered on the device,
 * then NCCL or a CUDA-aware MPI straight into the halo part of x; auto takes
 * the first that runs) or go through pinned host memory (staged).
 *
 * Verified per row against the double-precision oracle of the rows it owns,
 * each row against its own rounding scale (core/verify.h). */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "comm/comm.h"
#include "comm/devcomm.h"
#include "core/backend_impl.h"
#include "core/core.h"
#include "core/parse.h"
#include "core/rng.h"
#include "io/mmio.h"
#include "parbench/pb_kernels.h"
#include "sparse/sparse.h"

enum { P_MATRIX, P_BALANCE, P_LOCAL, P_READER, P_PATH, P_COMPLEX, P_HALO, P_SPLIT, P_BATCH };
#define SD_MAX_BATCH 10000
#define SD_MAX_CHUNKS 4 /* pieces gathered x may travel in */

enum halo_mode { HALO_P2P, HALO_ALLGATHER, HALO_AUTO };
static const char *const halo_names[] = {[HALO_P2P] = "p2p", [HALO_ALLGATHER] = "allgather", [HALO_AUTO] = "auto"};

static const struct pb_param_def sd_params[] = {
    [P_MATRIX] = {"matrix", "Matrix Market files, generated (" PB_SPARSE_GENERATORS ") or zoo[:ROWS]",
                  "lap2d:512,lap3d:48,powerlaw:64k:16", true},
    [P_BALANCE] = {"balance", "how rows are spread: nnz (equal non-zeros per rank) or rows", "nnz", true},
    [P_LOCAL] = {"local", "the backend's CSR kernel for the local products: default (auto, csr on ref) or a CSR variant of parbench list",
                 "default", true},
    [P_READER] = {"reader", "who reads A: one (rank 0 reads or generates it and sends each rank its rows) or each "
                            "(every rank reads the file, or generates A, and keeps its own rows: no rank holds "
                            "the whole matrix read from a file)", "one", true},
    [P_PATH] = {"path", "how halos move between GPUs: " PB_PATH_NAMES " (auto: NCCL, else a CUDA-aware MPI, "
                        "else staged through pinned host memory)", "auto", true},
    [P_COMPLEX] = {"complex-real", "complex files: 1 = load the real part of each entry, 0 = refuse them", "0", false,
                   true},
    [P_HALO] = {"halo", "p2p (each rank sends each other rank the x entries it needs), allgather (every rank "
                        "gets all of x) or auto (allgather where some rank needs half of the others' x or more)",
                "auto", true},
    [P_SPLIT] = {"split", "overlap: auto (where the boundary rows hold half the non-zeros or more and the backend "
                          "queues work, their own columns run while the halo travels) or off (whole boundary rows "
                          "after it)",
                 "auto", true},
    [P_BATCH] = {"batch", "products per timed repetition, each queued behind the one before as a solver's loop "
                          "would (on a GPU through NCCL no host wait between them); times are per product",
                 "1", false, true},
};

/* A CSR block on the host: rows x (columns of its own numbering). */
struct csr {
    int32_t rows;
    int32_t *ptr, *idx;
    double *val;
};

static void csr_free(struct csr *c)
{
    free(c->ptr);
    free(c->idx);
    free(c->val);
    memset(c, 0, sizeof *c);
}

/* What prepare leaves on every rank: its rows (global columns), the
 * partition, x and the oracle of its rows. */
struct sd_host {
    struct pb_problem p;
    int32_t n_rows, n_cols;
    int64_t nnz;         /* whole matrix */
    int ranks, rank;
    int32_t *row_first;  /* ranks + 1: rank r owns rows [row_first[r], row_first[r + 1]) */
    int32_t *col_first;  /* ranks + 1: and the x entries [col_first[r], col_first[r + 1]) */
    struct csr mine;     /* its rows, global columns */
    double *x;           /* the whole x, rounded to the precision */
    /* float only: why A or A*x does not fit in float, the same on every rank ("" if it does) */
    char float_overflow[160];
};

/* Per device: the split blocks, the halo plan, the buffers. */
struct sd_state {
    const struct sd_host *h;
    pb_device *dev;
    const char *local; /* the CSR variant */
    bool overlap;
    int batch; /* products per run call */
    enum pb_precision prec;
    size_t esize;
    /* x on the device: [own, not sent | own, sent | halo]; allgather: all of x */
    int32_t n_own, n_sent, n_halo;
    bool gather;
    /* allgather through NCCL: every rank's part padded to this many entries
     * (rank r's at r * stride), so that NCCL's allgather moves x instead of
     * one broadcast per rank; 0: global order */
    int32_t gather_stride;
    /* padded: x travels in this many pieces (the same on every rank), piece
     * c holding the c-th stride / chunks entries of every rank's part; 1:
     * whole. A rank that splits runs its boundary rows' halo columns as one
     * stage per piece (stages = chunks: mid[c], then boundary), each as soon
     * as its piece has arrived, each adding the stage before it through one
     * more entry per row, as boundary adds early; one that does not, in one
     * stage after the last piece. */
    int chunks, stages;
    pb_buf *stage_x; /* allgather staged through host memory: all of x, pinned */
    /* allgather: rank r's part of piece c of x, in bytes, at [c * ranks + r] */
    size_t *part_off, *part_bytes;
    struct csr interior, boundary; /* columns index x_ext; rows in order */
    int32_t *interior_rows, *boundary_rows; /* their local row numbers */
    /* split (where the boundary rows hold most of the work): the boundary
     * rows' own columns run ahead of the halo (early, into y_early, then
     * copied behind x_ext); the boundary block then holds their halo
     * columns plus one entry of 1 per row on that copy, so its product
     * adds the two parts */
    bool split, split_allowed; /* split_allowed: --split auto */
    struct csr early;
    struct csr mid[SD_MAX_CHUNKS - 1]; /* chunks > 1: the stages before the last (boundary) */
    size_t n_ext; /* x_ext's length; x holds n_ext + boundary rows when split */
    double *ref, *scale;                    /* oracle per local row */
    /* the exchange: peers, what each is sent (indices into the sent part) and
     * where its halo lands (offset and count in the halo part) */
    int n_peers;
    int *peers;
    size_t *send_count, *recv_count, *recv_offset, *send_bytes, *recv_bytes;
    int32_t **send_index;
    void **send_buf;
    void *const *recv_ptr;
    void **recv_at;
    pb_buf *x, *y_int, *y_bnd, *ptr_i, *idx_i, *val_i, *ptr_b, *idx_b, *val_b, *stage_sent, *stage_halo;
    pb_buf *y_early, *ptr_e, *idx_e, *val_e;
    pb_buf *y_mid, *ptr_m[SD_MAX_CHUNKS - 1], *idx_m[SD_MAX_CHUNKS - 1], *val_m[SD_MAX_CHUNKS - 1];
    pb_stream *compute, *copy;
    struct pb_spmv_args args_int, args_bnd, args_early, args_mid[SD_MAX_CHUNKS - 1];
    void *download;
    double halo_bytes;
    /* a device path (NULL: staged) and its plan: send_index on the device,
     * peer after peer (send_first), into pack */
    struct pb_devcomm *dc;
    struct pb_devcomm_halo halo;
    pb_buf *send_index_dev, *pack;
    size_t *send_first;
    char staged_why[200]; /* auto: why neither direct path runs */
};

static pb_status sd_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                         size_t max, size_t *n_out)
{
    size_t count = 0;
    if (l->count[P_COMPLEX] != 1 || (l->values[P_COMPLEX][0] != 0 && l->values[P_COMPLEX][0] != 1))
        return pb__fail(PB_ERR_INVALID, "spmv-dist: --complex-real takes one value, 0 or 1");
    if (l->count[P_BATCH] != 1 || l->values[P_BATCH][0] < 1 || l->values[P_BATCH][0] > SD_MAX_BATCH)
        return pb__fail(PB_ERR_INVALID, "spmv-dist: --batch takes one value, 1 to %d", SD_MAX_BATCH);
    const char *specs[PB_MAX_LIST];
    size_t n_specs;
    pb_status st = pb__sparse_expand(l->text[P_MATRIX], l->count[P_MATRIX], specs, PB_MAX_LIST, &n_specs);
    if (st != PB_OK)
        return st;
    /* With --reader one alone, only rank 0 opens the files (the others may
     * run where they are not). */
    bool reads = pb__comm_rank(pb__comm_world()) == 0;
    for (size_t ir = 0; ir < l->count[P_READER] && !reads; ir++)
        reads = strcmp(l->text[P_READER][ir], "one") != 0;
    for (size_t im = 0; im < n_specs; im++) {
        const char *spec = specs[im];
        if (reads && (st = pb__sparse_spec_check(spec, "spmv-dist")) != PB_OK)
            return st;
        for (size_t ib = 0; ib < l->count[P_BALANCE]; ib++) {
            const char *bal = l->text[P_BALANCE][ib];
            if (strcmp(bal, "nnz") != 0 && strcmp(bal, "rows") != 0)
                return pb__fail(PB_ERR_INVALID, "spmv-dist: --balance '%s' is neither nnz nor rows", bal);
            for (size_t il = 0; il < l->count[P_LOCAL]; il++) {
                /* A kernel no backend has is a typo, not an ERROR row per backend. */
                const char *local = l->text[P_LOCAL][il];
                bool known = strcmp(local, "default") == 0;
                for (size_t b = 0; !known && b < pb_backend_count(); b++)
                    known = pb__variant_find(pb_backend_at(b), "spmv", local) != NULL;
                if (!known)
                    return pb__fail(PB_ERR_INVALID, "spmv-dist: --local: no backend has an spmv kernel '%s' "
                                    "(default or a CSR variant: see parbench list)", local);
                for (size_t ir = 0; ir < l->count[P_READER]; ir++) {
                    const char *reader = l->text[P_READER][ir];
                    if (strcmp(reader, "one") != 0 && strcmp(reader, "each") != 0)
                        return pb__fail(PB_ERR_INVALID, "spmv-dist: --reader '%s' is neither one nor each",
                                        reader);
                    for (size_t ia = 0; ia < l->count[P_PATH]; ia++) {
                        enum pb_devcomm_path path;
                        if (!pb__devcomm_path_parse(l->text[P_PATH][ia], &path))
                            return pb__fail(PB_ERR_INVALID, "spmv-dist: --path '%s' is none of " PB_PATH_NAMES,
                                            l->text[P_PATH][ia]);
                        for (size_t ih = 0; ih < l->count[P_HALO]; ih++) {
                            const char *halo = l->text[P_HALO][ih];
                            int mode = 0;
                            while (mode < 3 && strcmp(halo, halo_names[mode]) != 0)
                                mode++;
                            if (mode == 3)
                                return pb__fail(PB_ERR_INVALID, "spmv-dist: --halo '%s' is none of p2p, allgather "
                                                "or auto", halo);
                            for (size_t is = 0; is < l->count[P_SPLIT]; is++) {
                                const char *split = l->text[P_SPLIT][is];
                                if (strcmp(split, "auto") != 0 && strcmp(split, "off") != 0)
                                    return pb__fail(PB_ERR_INVALID, "spmv-dist: --split '%s' is neither auto nor off",
                                                    split);
                                if (count >= max)
                                    return pb__fail(PB_ERR_INVALID, "spmv-dist: more than %zu problems", max);
                                out[count++] = (struct pb_problem){
                                    .prec = prec,
                                    .v = {[P_COMPLEX] = l->values[P_COMPLEX][0], [P_PATH] = path, [P_HALO] = mode,
                                          [P_SPLIT] = strcmp(split, "auto") == 0, [P_BATCH] = l->values[P_BATCH][0]},
                                    .s = {[P_MATRIX] = spec, [P_BALANCE] = bal, [P_LOCAL] = l->text[P_LOCAL][il],
                                          [P_READER] = reader, [P_PATH] = l->text[P_PATH][ia], [P_HALO] = halo,
                                          [P_SPLIT] = split}};
                            }
                        }
                    }
                }
            }
        }
    }
    *n_out = count;
    return PB_OK;
}

static void sd_describe(const struct pb_problem *p, char *buf, size_t len)
{
    char name[48];
    if (pb__sparse_is_generated(p->s[P_MATRIX]))
        snprintf(name, sizeof name, "%s", p->s[P_MATRIX]);
    else
        pb__matinfo_name(p->s[P_MATRIX], name, sizeof name);
    bool auto_path = p->v[P_PATH] == PB_PATH_AUTO, auto_halo = p->v[P_HALO] == HALO_AUTO;
    char batch[32] = "";
    if (p->v[P_BATCH] > 1)
        snprintf(batch, sizeof batch, " batch %lld", (long long)p->v[P_BATCH]);
    snprintf(buf, len, "%s by %s%s%s%s%s%s%s%s", name, p->s[P_BALANCE],
             strcmp(p->s[P_READER], "each") == 0 ? " (read by each)" : "", auto_path ? "" : " via ",
             auto_path ? "" : p->s[P_PATH], auto_halo ? "" : " halo ", auto_halo ? "" : p->s[P_HALO],
             p->v[P_SPLIT] ? "" : " split off", batch);
}

static double sd_flops(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)p, (void)v;
    const struct sd_host *h = host;
    return h ? 2.0 * (double)h->nnz : NAN;
}

/* CSR's minimum traffic for the whole matrix, halos not counted, x whole (a
 * rank holds only its rows, so the columns holding an entry are not known). */
static double sd_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)v;
    const struct sd_host *h = host;
    if (!h)
        return NAN;
    double elt = (double)pb_precision_size(p->prec);
    return (double)h->nnz * (elt + 4) + ((double)h->n_rows + 1) * 4 + ((double)h->n_cols + h->n_rows) * elt;
}

static void sd_release(void *host)
{
    struct sd_host *h = host;
    if (!h)
        return;
    free(h->row_first);
    free(h->col_first);
    csr_free(&h->mine);
    pb__host_free(h->x);
    free(h);
}

static double as_prec(double v, enum pb_precision prec) { return prec == PB_DOUBLE ? v : (double)(float)v; }

/* Rank 0's whole matrix, as CSR. */
static pb_status load_matrix(const struct pb_problem *p, uint64_t seed, struct pb_coo *m, int32_t **ptr)
{
    pb_status st = pb__sparse_load(p->s[P_MATRIX], seed, p->v[P_COMPLEX] != 0, m);
    if (st == PB_OK)
        st = pb__csr_offsets(m, ptr);
    return st;
}

/* Room for this rank's rows: nnz entries. */
static pb_status alloc_rows(struct csr *c, int32_t rows, int64_t nnz)
{
    c->rows = rows;
    c->ptr = malloc(((size_t)rows + 1) * sizeof *c->ptr);
    c->idx = malloc((size_t)(nnz ? nnz : 1) * sizeof *c->idx);
    c->val = malloc((size_t)(nnz ? nnz : 1) * sizeof *c->val);
    return c->ptr && c->idx && c->val ? PB_OK
                                      : pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory for %lld non-zeros",
                                                 (long long)nnz);
}

/* Rows [first, first + rows) of rank 0's matrix into c, offsets rebased. */
static void copy_rows(const struct pb_coo *m, const int32_t *ptr, int32_t first, struct csr *c)
{
    int64_t base = ptr[first];
    for (int32_t i = 0; i <= c->rows; i++)
        c->ptr[i] = (int32_t)(ptr[first + i] - base);
    memcpy(c->idx, m->cols + base, (size_t)c->ptr[c->rows] * sizeof *c->idx);
    memcpy(c->val, m->values + base, (size_t)c->ptr[c->rows] * sizeof *c->val);
}

/* Rank 0 sends every other rank its rows (offsets, columns, values). */
static pb_status scatter_rows(pb_comm *comm, const struct pb_coo *m, const int32_t *ptr, const int32_t *first,
                              struct csr *mine)
{
    int me = pb__comm_rank(comm), ranks = pb__comm_size(comm);
    pb_status st = PB_OK;
    struct csr part = {0};
    for (int r = 1; r < ranks && st == PB_OK; r++) {
        if (me == 0) {
            int32_t rows = first[r + 1] - first[r];
            int64_t nnz = ptr[first[r + 1]] - ptr[first[r]];
            st = alloc_rows(&part, rows, nnz);
            if (st == PB_OK) {
                copy_rows(m, ptr, first[r], &part);
                st = pb__comm_send(comm, part.ptr, ((size_t)rows + 1) * sizeof *part.ptr, r, 2);
            }
            if (st == PB_OK)
                st = pb__comm_send(comm, part.idx, (size_t)nnz * sizeof *part.idx, r, 3);
            if (st == PB_OK)
                st = pb__comm_send(comm, part.val, (size_t)nnz * sizeof *part.val, r, 4);
            csr_free(&part);
        } else if (me == r) {
            st = pb__comm_recv(comm, mine->ptr, ((size_t)mine->rows + 1) * sizeof *mine->ptr, 0, 2);
            size_t nnz = st == PB_OK ? (size_t)mine->ptr[mine->rows] : 0;
            if (st == PB_OK)
                st = pb__comm_recv(comm, mine->idx, nnz * sizeof *mine->idx, 0, 3);
            if (st == PB_OK)
                st = pb__comm_recv(comm, mine->val, nnz * sizeof *mine->val, 0, 4);
        }
    }
    return st;
}

/* Every rank of this host holds all of x twice (double and typed) and its
 * share of the row offsets, oracle and scales: refuse together what they
 * cannot all hold, before each allocates its part alone. Collective. */
static pb_status host_share_fits(pb_comm *comm, const struct sd_host *h, enum pb_precision prec)
{
    double per_rank = (double)h->n_cols * (8.0 + (double)pb_precision_size(prec)) +
                      ((double)h->n_rows / h->ranks + 1) * (4 + 16);
    int local = pb__comm_local_size(comm);
    char who[96];
    snprintf(who, sizeof who, "spmv-dist: %d x %d on %d rank(s) of this host", (int)h->n_rows, (int)h->n_cols,
             local);
    return pb__comm_agree(comm, pb__host_mem_need(per_rank * local, who, "for x and the rows' offsets"));
}

/* --reader one: rank 0 loads A, every rank gets the partition and its rows.
 * Collective; st: this rank's status so far. */
static pb_status rows_from_rank0(pb_comm *comm, const struct pb_problem *p, uint64_t seed, struct sd_host *h,
                                 pb_status st)
{
    int ranks = pb__comm_size(comm), me = pb__comm_rank(comm);
    struct pb_coo m;
    memset(&m, 0, sizeof m);
    int32_t *ptr = NULL;
    if (st == PB_OK && me == 0)
        st = load_matrix(p, seed, &m, &ptr);
    st = pb__comm_agree(comm, st); /* a file rank 0 cannot read ends it everywhere */
    int64_t shape[3] = {m.n_rows, m.n_cols, ptr ? ptr[m.n_rows] : 0};
    if (st == PB_OK)
        st = pb__comm_bcast(comm, shape, sizeof shape, 0);
    if (st == PB_OK) {
        h->n_rows = (int32_t)shape[0], h->n_cols = (int32_t)shape[1], h->nnz = shape[2];
        st = host_share_fits(comm, h, p->prec);
    }
    if (st == PB_OK) {
        if (me == 0)
            pb__partition_rows(ptr, h->n_rows, ranks, strcmp(p->s[P_BALANCE], "nnz") == 0, h->row_first);
        st = pb__comm_bcast(comm, h->row_first, ((size_t)ranks + 1) * sizeof *h->row_first, 0);
    }
    int64_t *nnz_first = calloc((size_t)ranks + 1, sizeof *nnz_first);
    if (st == PB_OK && !nnz_first)
        st = pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    st = pb__comm_agree(comm, st);
    if (st == PB_OK) {
        pb__partition_cols(h->row_first, h->n_rows, h->n_cols, ranks, h->col_first);
        for (int r = 0; me == 0 && r <= ranks; r++)
            nnz_first[r] = ptr[h->row_first[r]];
        st = pb__comm_bcast(comm, nnz_first, ((size_t)ranks + 1) * sizeof *nnz_first, 0);
    }
    if (st == PB_OK) {
        st = alloc_rows(&h->mine, h->row_first[me + 1] - h->row_first[me], nnz_first[me + 1] - nnz_first[me]);
        if (st == PB_OK && me == 0)
            copy_rows(&m, ptr, 0, &h->mine);
        st = pb__comm_agree(comm, st);
    }
    free(nnz_first);
    if (st == PB_OK)
        st = pb__comm_agree(comm, scatter_rows(comm, &m, ptr, h->row_first, &h->mine));
    pb_coo_free(&m);
    free(ptr);
    return st;
}

/* 32-bit CSR offsets from row lengths; spmv-dist keeps 32-bit offsets. */
static pb_status offsets_of(const int64_t *lengths, int32_t rows, int32_t **out)
{
    int32_t *ptr = malloc(((size_t)rows + 1) * sizeof *ptr);
    if (!ptr)
        return pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    int64_t sum = 0;
    ptr[0] = 0;
    for (int32_t i = 0; i < rows; i++) {
        sum += lengths[i];
        if (sum > INT32_MAX) {
            free(ptr);
            return pb__fail(PB_ERR_UNSUPPORTED, "spmv-dist: more than %d non-zeros (32-bit offsets)", INT32_MAX);
        }
        ptr[i + 1] = (int32_t)sum;
    }
    *out = ptr;
    return PB_OK;
}

/* --reader each: every rank partitions the rows it counted itself, so a
 * file that differs between the ranks' file systems would give them
 * different partitions; its size and row lengths are compared with rank 0's. */
static pb_status same_matrix_everywhere(pb_comm *comm, const char *spec, int32_t rows, int32_t cols,
                                        const int32_t *ptr)
{
    int ranks = pb__comm_size(comm);
    uint64_t hash = 1469598103934665603u; /* FNV-1a over the row offsets */
    for (int32_t i = 0; i <= rows; i++)
        hash = (hash ^ (uint64_t)(uint32_t)ptr[i]) * 1099511628211u;
    int64_t mine[4] = {rows, cols, ptr[rows], (int64_t)hash}, *all = malloc((size_t)ranks * sizeof mine);
    pb_status st = all ? PB_OK : pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    st = pb__comm_agree(comm, st);
    if (st == PB_OK)
        st = pb__comm_allgather(comm, mine, sizeof mine, all);
    for (int r = 1; st == PB_OK && r < ranks; r++) {
        const int64_t *o = all + 4 * r;
        if (memcmp(o, all, 3 * sizeof *o) != 0)
            st = pb__fail(PB_ERR_INVALID, "spmv-dist: --reader each: rank %d read %s as %lld x %lld with %lld "
                          "entries, rank 0 as %lld x %lld with %lld: every rank must read the same file", r, spec,
                          (long long)o[0], (long long)o[1], (long long)o[2], (long long)all[0], (long long)all[1],
                          (long long)all[2]);
        else if (o[3] != all[3])
            st = pb__fail(PB_ERR_INVALID, "spmv-dist: --reader each: rank %d read %s with other row lengths than "
                          "rank 0: every rank must read the same file", r, spec);
    }
    free(all);
    return st;
}

/* --reader each: every rank counts the rows' lengths of the file itself,
 * makes the same partition, and reads its own rows; a Laplacian's rows are
 * made alone the same way; another generated matrix is made whole on every
 * rank (the same seed) and cut. Only statuses, the non-zero count and what
 * each rank counted (same_matrix_everywhere) cross the network. Collective;
 * st as above. */
static pb_status rows_read_by_each(pb_comm *comm, const struct pb_problem *p, uint64_t seed, struct sd_host *h,
                                   pb_status st)
{
    int ranks = pb__comm_size(comm), me = pb__comm_rank(comm);
    const char *spec = p->s[P_MATRIX];
    const struct pb_mm_options opt = {.complex_real_part = p->v[P_COMPLEX] != 0};
    bool generated = pb__sparse_is_generated(spec) && !pb__sparse_rows_alone(spec);
    bool made_alone = !generated && pb__sparse_is_generated(spec);
    struct pb_coo m;
    memset(&m, 0, sizeof m);
    int32_t *ptr = NULL, rows = 0, cols = 0;
    if (st == PB_OK && generated) {
        st = pb__sparse_generate(spec, seed, &m);
        if (st == PB_OK)
            st = pb__csr_offsets(&m, &ptr);
        rows = m.n_rows, cols = m.n_cols;
    } else if (st == PB_OK) {
        int64_t *lengths = NULL;
        st = made_alone ? pb__sparse_row_lengths(spec, &rows, &cols, &lengths)
                        : pb__coo_row_lengths(spec, &opt, (unsigned)pb__comm_local_size(comm), &rows, &cols,
                                              &lengths);
        if (st == PB_OK)
            st = offsets_of(lengths, rows, &ptr);
        free(lengths);
    }
    st = pb__comm_agree(comm, st);
    if (st == PB_OK)
        st = same_matrix_everywhere(comm, spec, rows, cols, ptr);
    int32_t first = 0, count = 0;
    if (st == PB_OK) {
        h->n_rows = rows, h->n_cols = cols;
        pb__partition_rows(ptr, rows, ranks, strcmp(p->s[P_BALANCE], "nnz") == 0, h->row_first);
        pb__partition_cols(h->row_first, h->n_rows, h->n_cols, ranks, h->col_first);
        first = h->row_first[me], count = h->row_first[me + 1] - first;
        if (!generated) {
            /* The check compares y with an oracle of the rows this rank read:
             * a share read short would pass it, so the count of the first
             * pass must match. */
            int64_t counted = ptr[first + count] - ptr[first];
            free(ptr);
            ptr = NULL;
            st = made_alone ? pb__sparse_generate_rows(spec, first, count, &m)
                            : pb__coo_read_rows(spec, &opt, first, count, &m);
            if (st == PB_OK && (int64_t)(m.nnz + m.duplicates) != counted)
                st = pb__fail(PB_ERR_PARSE, "spmv-dist: rank %d read %zu entries of rows %d-%d of %s, its count "
                              "found %lld", me, m.nnz + m.duplicates, first + 1, first + count, spec,
                              (long long)counted);
            if (st == PB_OK)
                st = pb__csr_offsets(&m, &ptr);
        }
        if (st == PB_OK)
            st = alloc_rows(&h->mine, count, ptr[first + count] - ptr[first]);
        if (st == PB_OK)
            copy_rows(&m, ptr, first, &h->mine);
    }
    pb_coo_free(&m);
    free(ptr);
    int64_t nnz = st == PB_OK ? h->mine.ptr[count] : 0;
    st = pb__comm_agree(comm, st);
    if (st == PB_OK)
        st = pb__comm_agree(comm, pb__comm_allreduce(comm, &nnz, &h->nnz, 1, PB_COMM_INT64, PB_COMM_SUM));
    return st;
}

/* A value or a product beyond float's range is Inf in every float kernel: no
 * kernel's fault, so such a problem is UNSUPPORTED rather than FAILED. The
 * first rank that finds one says which; every rank keeps the same words, so
 * all refuse together. Collective. */
static pb_status find_float_overflow(pb_comm *comm, struct sd_host *h)
{
    const struct csr *c = &h->mine;
    char why[sizeof h->float_overflow] = "";
    for (int32_t i = 0; i < c->rows && !why[0]; i++) {
        double sum = 0;
        for (int32_t k = c->ptr[i]; k < c->ptr[i + 1] && !why[0]; k++) {
            if (fabs(c->val[k]) > FLT_MAX)
                snprintf(why, sizeof why, "value %g in row %d does not fit in float (--precision double)", c->val[k],
                         (int)(h->row_first[h->rank] + i) + 1);
            sum += c->val[k] * h->x[c->idx[k]];
        }
        if (!why[0] && fabs(sum) > FLT_MAX)
            snprintf(why, sizeof why, "row %d of the product (%g) does not fit in float (--precision double)",
                     (int)(h->row_first[h->rank] + i) + 1, sum);
    }
    int32_t mine = why[0] ? h->rank : h->ranks, first;
    pb_status st = pb__comm_allreduce(comm, &mine, &first, 1, PB_COMM_INT32, PB_COMM_MIN);
    if (st == PB_OK && first < h->ranks) {
        st = pb__comm_bcast(comm, why, sizeof why, first);
        snprintf(h->float_overflow, sizeof h->float_overflow, "%s", why);
    }
    return pb__comm_agree(comm, st);
}

static pb_status sd_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    *out = NULL;
    pb_comm *comm = pb__comm_world();
    int ranks = pb__comm_size(comm), me = pb__comm_rank(comm);
    struct sd_host *h = calloc(1, sizeof *h);
    pb_status st = h ? PB_OK : pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    if (h) {
        h->p = *p;
        h->ranks = ranks;
        h->rank = me;
        h->row_first = calloc((size_t)ranks + 1, sizeof *h->row_first);
        h->col_first = calloc((size_t)ranks + 1, sizeof *h->col_first);
        if (!h->row_first || !h->col_first)
            st = pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    }
    if (strcmp(p->s[P_READER], "each") == 0)
        st = rows_read_by_each(comm, p, seed, h, st);
    else
        st = rows_from_rank0(comm, p, seed, h, st);
    /* x: the same seeded vector as spmv's, rounded to the precision. */
    size_t elt = pb_precision_size(p->prec);
    void *xs = NULL;
    pb_status local = st;
    if (local == PB_OK)
        local = pb__host_alloc((size_t)h->n_cols * elt, "spmv-dist x", &xs);
    if (local == PB_OK)
        local = pb__host_alloc((size_t)h->n_cols * sizeof(double), "spmv-dist x", (void **)&h->x);
    if (local == PB_OK) {
        struct pb_rng rng;
        pb__rng_init(&rng, seed, 1);
        pb__rng_fill(&rng, xs, p->prec, (size_t)h->n_cols);
        for (int32_t j = 0; j < h->n_cols; j++)
            h->x[j] = p->prec == PB_DOUBLE ? ((double *)xs)[j] : (double)((float *)xs)[j];
    }
    pb__host_free(xs);
    if (st == PB_OK)
        st = pb__comm_agree(comm, local);
    if (st == PB_OK && p->prec == PB_FLOAT)
        st = find_float_overflow(comm, h);
    if (st != PB_OK) {
        sd_release(h);
        return st;
    }
    *out = h;
    return PB_OK;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void sd_unbind(void *state)
{
    struct sd_state *s = state;
    if (!s)
        return;
    pb_buf *bufs[] = {s->x,     s->y_int,      s->y_bnd,      s->ptr_i,          s->idx_i, s->val_i,
                      s->ptr_b, s->idx_b,      s->val_b,      s->stage_sent,     s->stage_halo,
                      s->pack,  s->send_index_dev, s->stage_x, s->y_early, s->ptr_e, s->idx_e, s->val_e};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        pb_buf_free(bufs[i]);
    pb_buf_free(s->y_mid);
    for (int c = 0; c < SD_MAX_CHUNKS - 1; c++) {
        pb_buf_free(s->ptr_m[c]);
        pb_buf_free(s->idx_m[c]);
        pb_buf_free(s->val_m[c]);
        csr_free(&s->mid[c]);
    }
    pb_stream_destroy(s->compute);
    pb_stream_destroy(s->copy);
    csr_free(&s->interior);
    csr_free(&s->boundary);
    csr_free(&s->early);
    free(s->interior_rows);
    free(s->boundary_rows);
    free(s->ref);
    free(s->scale);
    for (int i = 0; s->send_index && i < s->n_peers; i++) {
        free(s->send_index[i]);
        free(s->send_buf[i]);
    }
    free(s->peers);
    free(s->send_count);
    free(s->recv_count);
    free(s->recv_offset);
    free(s->send_index);
    free(s->send_buf);
    free(s->recv_at);
    free(s->send_bytes);
    free(s->recv_bytes);
    pb__host_free(s->download);
    pb__devcomm_close(s->dc);
    free(s->send_first);
    free(s->part_off);
    free(s->part_bytes);
    free(s);
}

/* Columns this rank needs from others: sorted, distinct (so grouped by owner). */
static pb_status halo_columns(const struct sd_host *h, int32_t **out, int32_t *n_out)
{
    int32_t lo = h->col_first[h->rank], hi = h->col_first[h->rank + 1];
    size_t nnz = (size_t)h->mine.ptr[h->mine.rows], n = 0;
    int32_t *cols = malloc((nnz ? nnz : 1) * sizeof *cols);
    if (!cols)
        return pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    for (size_t k = 0; k < nnz; k++)
        if (h->mine.idx[k] < lo || h->mine.idx[k] >= hi)
            cols[n++] = h->mine.idx[k];
    qsort(cols, n, sizeof *cols, cmp_i32);
    size_t d = 0;
    for (size_t k = 0; k < n; k++)
        if (d == 0 || cols[k] != cols[d - 1])
            cols[d++] = cols[k];
    *out = cols;
    *n_out = (int32_t)d;
    return PB_OK;
}

/* Column j's place in gathered x: its owner's part, at owner * stride where
 * padded; in pieces, its piece's place among the owners' parts of that piece. */
static int32_t gathered_slot(const struct sd_state *s, int32_t j)
{
    const struct sd_host *h = s->h;
    if (!s->gather_stride)
        return j;
    int lo = 0, hi = h->ranks - 1; /* the last r with col_first[r] <= j */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (h->col_first[mid] <= j)
            lo = mid;
        else
            hi = mid - 1;
    }
    int32_t at = j - h->col_first[lo], piece = s->gather_stride / s->chunks, c = at / piece;
    return c * h->ranks * piece + lo * piece + (at - c * piece);
}

/* The piece of gathered x a slot lies in. */
static int chunk_of(const struct sd_state *s, int32_t slot)
{
    return s->chunks > 1 ? slot / (s->h->ranks * (s->gather_stride / s->chunks)) : 0;
}

/* Column j's slot in x_ext: its place in gathered x (allgather), its own
 * slot, or its place in the sorted halo list behind the own entries. */
static int32_t slot_of(const struct sd_state *s, const int32_t *own_slot, const int32_t *halo, int32_t n_halo,
                       int32_t j)
{
    const struct sd_host *h = s->h;
    int32_t lo = h->col_first[h->rank], hi = h->col_first[h->rank + 1];
    if (s->gather)
        return gathered_slot(s, j);
    if (j >= lo && j < hi)
        return own_slot[j - lo];
    const int32_t *f = bsearch(&j, halo, (size_t)n_halo, sizeof *halo, cmp_i32);
    return s->n_own + (int32_t)(f - halo);
}

/* Insertion sort of entries [start, end) by slot: rows are short, and x_ext is then read in order. */
static void sort_row(struct csr *c, int32_t start, int32_t end)
{
    for (int32_t a = start + 1; a < end; a++)
        for (int32_t z = a; z > start && c->idx[z - 1] > c->idx[z]; z--) {
            int32_t ti = c->idx[z];
            c->idx[z] = c->idx[z - 1], c->idx[z - 1] = ti;
            double tv = c->val[z];
            c->val[z] = c->val[z - 1], c->val[z - 1] = tv;
        }
}

static bool csr_alloc(struct csr *c, int32_t rows, size_t nnz)
{
    c->rows = rows;
    c->ptr = calloc((size_t)rows + 1, sizeof *c->ptr);
    c->idx = malloc((nnz ? nnz : 1) * sizeof *c->idx);
    c->val = malloc((nnz ? nnz : 1) * sizeof *c->val);
    return c->ptr && c->idx && c->val;
}

/* Splits the local rows into interior and boundary blocks (and, split, the
 * boundary rows' own columns into early, their halo columns into one stage
 * per piece of x) with columns renumbered into x_ext, each row's entries
 * sorted by slot. */
static pb_status split_rows(struct sd_state *s, const int32_t *own_slot, const int32_t *halo, int32_t n_halo)
{
    const struct sd_host *h = s->h;
    const struct csr *m = &h->mine;
    int32_t lo = h->col_first[h->rank], hi = h->col_first[h->rank + 1];
    int32_t n_int = 0, n_bnd = 0;
    size_t nnz_int = 0, nnz_bnd = 0, nnz_own_bnd = 0;
    bool *is_bnd = calloc((size_t)m->rows + 1, sizeof *is_bnd);
    if (!is_bnd)
        return pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    for (int32_t i = 0; i < m->rows; i++) {
        size_t own = 0, len = (size_t)(m->ptr[i + 1] - m->ptr[i]);
        for (int32_t k = m->ptr[i]; k < m->ptr[i + 1]; k++)
            own += m->idx[k] >= lo && m->idx[k] < hi;
        is_bnd[i] = own < len;
        if (is_bnd[i])
            n_bnd++, nnz_bnd += len, nnz_own_bnd += own;
        else
            n_int++, nnz_int += len;
    }
    s->n_ext = !s->gather ? (size_t)s->n_own + (size_t)s->n_halo
               : s->gather_stride ? (size_t)h->ranks * (size_t)s->gather_stride : (size_t)h->n_cols;
    s->split = s->split_allowed && s->overlap && s->n_ext + (size_t)n_bnd <= INT32_MAX &&
               pb__dist_split_pays((int64_t)(nnz_int + nnz_bnd), (int64_t)nnz_bnd, n_bnd, (int64_t)nnz_own_bnd);
    s->stages = s->split ? s->chunks : 1; /* the pieces' stages are the split's */
    /* stage c's entries: the boundary rows' halo columns in piece c, one more per row for the stage before */
    size_t stage_nnz[SD_MAX_CHUNKS] = {0};
    for (int32_t i = 0; s->stages > 1 && i < m->rows; i++)
        for (int32_t k = m->ptr[i]; is_bnd[i] && k < m->ptr[i + 1]; k++)
            if (m->idx[k] < lo || m->idx[k] >= hi)
                stage_nnz[chunk_of(s, gathered_slot(s, m->idx[k]))]++;
    if (s->stages == 1)
        stage_nnz[0] = s->split ? nnz_bnd - nnz_own_bnd : nnz_bnd;
    bool ok = csr_alloc(&s->interior, n_int, nnz_int) &&
              csr_alloc(&s->boundary, n_bnd, stage_nnz[s->stages - 1] + (s->split ? (size_t)n_bnd : 0)) &&
              csr_alloc(&s->early, s->split ? n_bnd : 0, s->split ? nnz_own_bnd : 0);
    for (int c = 0; ok && c < s->stages - 1; c++)
        ok = csr_alloc(&s->mid[c], n_bnd, stage_nnz[c] + (size_t)n_bnd);
    s->interior_rows = malloc(((size_t)n_int + 1) * sizeof *s->interior_rows);
    s->boundary_rows = malloc(((size_t)n_bnd + 1) * sizeof *s->boundary_rows);
    pb_status st = ok && s->interior_rows && s->boundary_rows ? PB_OK
                                                              : pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    /* the boundary rows' stages, in the order they run: piece 0 .. last (boundary) */
    struct csr *stage[SD_MAX_CHUNKS], *e = &s->early;
    for (int c = 0; c < s->stages - 1; c++)
        stage[c] = &s->mid[c];
    stage[s->stages - 1] = &s->boundary;
    int32_t at_int = 0, at_bnd = 0;
    for (int32_t i = 0; st == PB_OK && i < m->rows; i++) {
        if (!is_bnd[i]) {
            struct csr *c = &s->interior;
            int32_t r = at_int++, n = c->ptr[r];
            s->interior_rows[r] = i;
            for (int32_t k = m->ptr[i]; k < m->ptr[i + 1]; k++)
                c->idx[n] = slot_of(s, own_slot, halo, n_halo, m->idx[k]), c->val[n++] = m->val[k];
            sort_row(c, c->ptr[r], n);
            c->ptr[r + 1] = n;
            continue;
        }
        int32_t r = at_bnd++, ne = s->split ? e->ptr[r] : 0, n[SD_MAX_CHUNKS];
        s->boundary_rows[r] = i;
        for (int c = 0; c < s->stages; c++)
            n[c] = stage[c]->ptr[r];
        for (int32_t k = m->ptr[i]; k < m->ptr[i + 1]; k++) {
            int32_t j = m->idx[k], slot = slot_of(s, own_slot, halo, n_halo, j);
            if (s->split && j >= lo && j < hi) {
                e->idx[ne] = slot, e->val[ne++] = m->val[k];
            } else {
                int c = s->stages > 1 ? chunk_of(s, slot) : 0;
                stage[c]->idx[n[c]] = slot, stage[c]->val[n[c]++] = m->val[k];
            }
        }
        if (s->split) { /* the stage before, copied behind x_ext */
            for (int c = 0; c < s->stages; c++)
                stage[c]->idx[n[c]] = (int32_t)(s->n_ext + (size_t)r), stage[c]->val[n[c]++] = 1.0;
            sort_row(e, e->ptr[r], ne);
            e->ptr[r + 1] = ne;
        }
        for (int c = 0; c < s->stages; c++) {
            sort_row(stage[c], stage[c]->ptr[r], n[c]);
            stage[c]->ptr[r + 1] = n[c];
        }
    }
    free(is_bnd);
    return st;
}

/* The halo plan (collective): who needs which of whose x entries. */
static pb_status plan_halo(struct sd_state *s, int32_t **halo_out, int32_t **own_slot_out)
{
    const struct sd_host *h = s->h;
    pb_comm *comm = pb__comm_world();
    int ranks = h->ranks, me = h->rank;
    int32_t lo = h->col_first[me], hi = h->col_first[me + 1], n_halo = 0, *halo = NULL;
    int64_t *need = calloc((size_t)ranks, sizeof *need), *all = calloc((size_t)ranks * ranks, sizeof *all);
    pb_status st = need && all ? halo_columns(h, &halo, &n_halo) : pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    for (int32_t k = 0; st == PB_OK && k < n_halo; k++)
        need[pb__partition_owner(h->col_first, ranks, halo[k])]++;
    st = pb__comm_agree(comm, st);
    /* all[q * ranks + r] = how many of r's entries q needs */
    if (st == PB_OK)
        st = pb__comm_allgather(comm, need, (size_t)ranks * sizeof *need, all);
    int n_peers = 0;
    for (int q = 0; st == PB_OK && q < ranks; q++)
        n_peers += q != me && (all[(size_t)me * ranks + q] || all[(size_t)q * ranks + me]);
    s->n_peers = n_peers;
    s->n_halo = n_halo;
    s->peers = calloc((size_t)n_peers + 1, sizeof *s->peers);
    s->send_count = calloc((size_t)n_peers + 1, sizeof *s->send_count);
    s->recv_count = calloc((size_t)n_peers + 1, sizeof *s->recv_count);
    s->recv_offset = calloc((size_t)n_peers + 1, sizeof *s->recv_offset);
    s->send_index = calloc((size_t)n_peers + 1, sizeof *s->send_index);
    s->send_buf = calloc((size_t)n_peers + 1, sizeof *s->send_buf);
    s->recv_at = calloc((size_t)n_peers + 1, sizeof *s->recv_at);
    s->send_bytes = calloc((size_t)n_peers + 1, sizeof *s->send_bytes);
    s->recv_bytes = calloc((size_t)n_peers + 1, sizeof *s->recv_bytes);
    int32_t **asked = calloc((size_t)n_peers + 1, sizeof *asked); /* global columns each peer asks for */
    if (st == PB_OK && (!s->peers || !s->send_count || !s->recv_count || !s->recv_offset || !s->send_index ||
                        !s->send_buf || !s->recv_at || !asked || !s->send_bytes || !s->recv_bytes))
        st = pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    size_t at = 0;
    for (int q = 0, i = 0; st == PB_OK && q < ranks; q++) {
        if (q == me || !(all[(size_t)me * ranks + q] || all[(size_t)q * ranks + me]))
            continue;
        s->peers[i] = q;
        s->recv_count[i] = (size_t)all[(size_t)me * ranks + q];
        s->recv_offset[i] = at; /* the halo is sorted, so grouped by owner in rank order */
        at += s->recv_count[i];
        s->send_count[i] = (size_t)all[(size_t)q * ranks + me];
        s->send_bytes[i] = s->send_count[i] * s->esize;
        s->recv_bytes[i] = s->recv_count[i] * s->esize;
        s->send_index[i] = malloc((s->send_count[i] + 1) * sizeof(int32_t));
        asked[i] = malloc((s->send_count[i] + 1) * sizeof(int32_t));
        s->send_buf[i] = malloc((s->send_count[i] + 1) * s->esize);
        if (!s->send_index[i] || !asked[i] || !s->send_buf[i])
            st = pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
        i++;
    }
    st = pb__comm_agree(comm, st);
    /* Tell every owner which of its columns are needed. */
    if (st == PB_OK) {
        const void **send = calloc((size_t)n_peers + 1, sizeof *send);
        void **recv = calloc((size_t)n_peers + 1, sizeof *recv);
        size_t *sb = calloc((size_t)n_peers + 1, sizeof *sb), *rb = calloc((size_t)n_peers + 1, sizeof *rb);
        st = send && recv && sb && rb ? PB_OK : pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
        st = pb__comm_agree(comm, st);
        for (int i = 0; st == PB_OK && i < n_peers; i++) {
            send[i] = halo + s->recv_offset[i];
            sb[i] = s->recv_count[i] * sizeof(int32_t);
            recv[i] = asked[i];
            rb[i] = s->send_count[i] * sizeof(int32_t);
        }
        struct pb_comm_exchange *x = NULL;
        if (st == PB_OK)
            st = pb__comm_exchange_start(comm, (size_t)n_peers, s->peers, send, sb, recv, rb, &x);
        if (st == PB_OK)
            st = pb__comm_exchange_wait(x);
        free(send);
        free(recv);
        free(sb);
        free(rb);
    }
    /* Own entries: those nobody asks for first, then the asked ones (sorted). */
    int32_t n_own = hi - lo, *own_slot = malloc(((size_t)n_own + 1) * sizeof *own_slot);
    bool *sent = calloc((size_t)n_own + 1, sizeof *sent);
    if (st == PB_OK && (!own_slot || !sent))
        st = pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    for (int i = 0; st == PB_OK && i < n_peers; i++)
        for (size_t k = 0; k < s->send_count[i]; k++) {
            int32_t j = asked[i][k];
            if (j < lo || j >= hi) {
                st = pb__fail(PB_ERR_INVALID, "spmv-dist: rank %d asked rank %d for column %d it does not own",
                              s->peers[i], me, (int)j);
                break;
            }
            sent[j - lo] = true;
        }
    int32_t n_sent = 0;
    for (int32_t j = 0; st == PB_OK && j < n_own; j++)
        n_sent += sent[j];
    for (int32_t j = 0, a = 0, b = n_own - n_sent; st == PB_OK && j < n_own; j++)
        own_slot[j] = sent[j] ? b++ : a++;
    for (int i = 0; st == PB_OK && i < n_peers; i++)
        for (size_t k = 0; k < s->send_count[i]; k++)
            s->send_index[i][k] = own_slot[asked[i][k] - lo] - (n_own - n_sent);
    s->n_own = n_own;
    s->n_sent = n_sent;
    for (int i = 0; asked && i < n_peers; i++)
        free(asked[i]);
    free(asked);
    free(sent);
    free(need);
    free(all);
    if (st != PB_OK) {
        free(halo);
        free(own_slot);
        return st;
    }
    *halo_out = halo;
    *own_slot_out = own_slot;
    return PB_OK;
}

static pb_status upload_csr(pb_device *dev, const struct csr *c, enum pb_precision prec, pb_buf **ptr, pb_buf **idx,
                            pb_buf **val)
{
    size_t nnz = (size_t)c->ptr[c->rows], elt = pb_precision_size(prec);
    pb_status st = pb_buf_alloc(dev, PB_MEM_DEVICE, ((size_t)c->rows + 1) * sizeof(int32_t), ptr);
    if (st == PB_OK)
        st = pb_buf_write(*ptr, 0, c->ptr, ((size_t)c->rows + 1) * sizeof(int32_t));
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, (nnz ? nnz : 1) * sizeof(int32_t), idx);
    if (st == PB_OK && nnz)
        st = pb_buf_write(*idx, 0, c->idx, nnz * sizeof(int32_t));
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, (nnz ? nnz : 1) * elt, val);
    void *tmp = NULL;
    if (st == PB_OK && nnz)
        st = pb__host_alloc(nnz * elt, "spmv-dist values", &tmp);
    if (st == PB_OK && nnz) {
        for (size_t k = 0; k < nnz; k++)
            if (prec == PB_DOUBLE)
                ((double *)tmp)[k] = c->val[k];
            else
                ((float *)tmp)[k] = (float)c->val[k];
        st = pb_buf_write(*val, 0, tmp, nnz * elt);
    }
    pb__host_free(tmp);
    return st;
}

static void store(enum pb_precision prec, void *dst, size_t i, double v)
{
    if (prec == PB_DOUBLE)
        ((double *)dst)[i] = v;
    else
        ((float *)dst)[i] = (float)v;
}

/* The oracle of this rank's rows, each with its rounding scale. */
static void oracle(struct sd_state *s)
{
    const struct sd_host *h = s->h;
    for (int32_t i = 0; i < h->mine.rows; i++) {
        double sum = 0, sumsq = 0;
        for (int32_t k = h->mine.ptr[i]; k < h->mine.ptr[i + 1]; k++) {
            double t = as_prec(h->mine.val[k], s->prec) * h->x[h->mine.idx[k]];
            sum += t;
            sumsq += t * t;
        }
        s->ref[i] = sum;
        s->scale[i] = pb__dot_scale(s->prec, (double)(h->mine.ptr[i + 1] - h->mine.ptr[i]), sumsq);
        if (!pb__sumsq_in_range(sumsq)) { /* terms past 1e154 or below 1e-154 */
            struct pb_sumsq a = {0};
            for (int32_t k = h->mine.ptr[i]; k < h->mine.ptr[i + 1]; k++)
                pb__sumsq_add(&a, as_prec(h->mine.val[k], s->prec) * h->x[h->mine.idx[k]]);
            s->scale[i] = pb__dot_scale_scaled(s->prec, (double)(h->mine.ptr[i + 1] - h->mine.ptr[i]), &a);
        }
    }
}

/* The halo plan on the device path: what each peer is sent, as indices into
 * the sent part of x, peer after peer. */
static pb_status plan_device_halo(struct sd_state *s)
{
    size_t total = 0;
    s->send_first = calloc((size_t)s->n_peers + 1, sizeof *s->send_first);
    if (!s->send_first)
        return pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    for (int i = 0; i < s->n_peers; i++) {
        s->send_first[i] = total;
        total += s->send_count[i];
    }
    int32_t *all = malloc((total + 1) * sizeof *all);
    if (!all)
        return pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    for (int i = 0; i < s->n_peers; i++)
        memcpy(all + s->send_first[i], s->send_index[i], s->send_count[i] * sizeof *all);
    pb_status st = pb_buf_alloc(s->dev, PB_MEM_DEVICE, (total + 1) * sizeof *all, &s->send_index_dev);
    if (st == PB_OK && total)
        st = pb_buf_write(s->send_index_dev, 0, all, total * sizeof *all);
    if (st == PB_OK)
        st = pb_buf_alloc(s->dev, PB_MEM_DEVICE, (total + 1) * s->esize, &s->pack);
    free(all);
    s->halo = (struct pb_devcomm_halo){.n = (size_t)s->n_peers, .peers = s->peers, .send_index = s->send_index_dev,
                                       .send_first = s->send_first, .send_count = s->send_count, .pack = s->pack,
                                       .recv_first = s->recv_offset, .recv_count = s->recv_count,
                                       .esize = s->esize};
    return st;
}

/* Whether x travels whole (collective: every rank decides the same). */
static pb_status choose_halo(struct sd_state *s, enum halo_mode mode)
{
    const struct sd_host *h = s->h;
    double others = (double)h->n_cols - (double)s->n_own, share = others > 0 ? s->n_halo / others : 0, most = 0;
    pb_status st = pb__comm_allreduce(pb__comm_world(), &share, &most, 1, PB_COMM_DOUBLE, PB_COMM_MAX);
    s->gather = h->ranks > 1 && (mode == HALO_ALLGATHER || (mode == HALO_AUTO && most >= PB_DIST_GATHER_FROM_SHARE));
    return st;
}

/* Pads the parts of gathered x to the largest where NCCL moves it and the
 * padding costs at most a quarter more bytes: its allgather (one pass round
 * the ranks) moves x where one broadcast per rank would otherwise. Padded,
 * x may travel in pieces (chunks), one by default: on 4 H200s through NCCL,
 * 2-4 pieces took powerlaw:4M:16 from 0.25 to 0.30-0.33 ms a product (each
 * stage is one more pass over the boundary rows, and each allgather call its
 * own fixed cost), powerlaw:8M:8 from 0.50 to 0.45 (2), 0.41 (3) and 0.53
 * (4), the one-piece rows varying by 20% between repetitions. Measurement
 * knobs: PARBENCH_GATHER_PAD=0 never pads, =1 pads on every path (the tests'
 * way to run the padded layout without NCCL); PARBENCH_GATHER_CHUNKS=C (1 to
 * SD_MAX_CHUNKS) the pieces. The knobs are agreed (the largest any rank
 * has), as every rank must lay x out alike. */
static pb_status plan_gather(struct sd_state *s)
{
    const struct sd_host *h = s->h;
    int32_t most = 0;
    for (int r = 0; r < h->ranks; r++)
        if (h->col_first[r + 1] - h->col_first[r] > most)
            most = h->col_first[r + 1] - h->col_first[r];
    const char *chunks_knob = getenv("PARBENCH_GATHER_CHUNKS"), *pad_knob = getenv("PARBENCH_GATHER_PAD");
    double knobs[2] = {chunks_knob && chunks_knob[0] ? atoi(chunks_knob) : 1,
                       pad_knob && pad_knob[0] ? strcmp(pad_knob, "0") != 0 : -1}, agreed[2];
    pb_status st = pb__comm_allreduce(pb__comm_world(), knobs, agreed, 2, PB_COMM_DOUBLE, PB_COMM_MAX);
    if (st != PB_OK)
        return st;
    int chunks = (int)agreed[0];
    if (chunks < 1 || chunks > SD_MAX_CHUNKS || chunks > most)
        chunks = 1;
    size_t n = (size_t)h->n_cols, stride = ((size_t)most + (size_t)chunks - 1) / (size_t)chunks * (size_t)chunks,
           padded = (size_t)h->ranks * stride;
    bool pays = agreed[1] >= 0 ? agreed[1] > 0 : pb__devcomm_path(s->dc) == PB_PATH_NCCL && padded <= n + n / 4;
    if (!pays || padded > INT32_MAX || (padded == n && chunks == 1)) /* equal parts: global order is that layout */
        stride = 0, chunks = 1;
    s->gather_stride = (int32_t)stride;
    s->chunks = chunks;
    return PB_OK;
}

/* Measurement knob PARBENCH_SD_URGENT=0: the halo on an ordinary stream. */
static bool env_flag(const char *name, bool unset)
{
    const char *v = getenv(name);
    return v && v[0] ? strcmp(v, "0") != 0 : unset;
}

/* Through NCCL, whether the interior rows are queued before the halo.
 * Point-to-point halos are small: queued first, the interior rows run while
 * the host is still in NCCL's calls, and the halo's kernels, on the urgent
 * stream, take the SMs as the interior's blocks finish (lap3d:320 on 4
 * H200s: 0.174 ms a product against 0.193 halo first). A gathered x is most
 * of the traffic, so its allgather starts first (powerlaw:4M:16: 0.273
 * against 0.306 behind the interior rows). Measurement knob:
 * PARBENCH_SD_ORDER=halo|interior imposes one order on both. */
static bool nccl_interior_first(bool gathered)
{
    const char *v = getenv("PARBENCH_SD_ORDER");
    if (v && strcmp(v, "halo") == 0)
        return false;
    if (v && strcmp(v, "interior") == 0)
        return true;
    return !gathered;
}

static pb_status launch(struct sd_state *s, const struct pb_spmv_args *a, pb_stream *stream)
{
    return a->rows ? pb_kernel_launch(s->dev, "spmv", s->local, a, stream) : PB_OK;
}

static const char *local_variant(const pb_device *dev, const char *asked)
{
    if (strcmp(asked, "default") != 0)
        return asked;
    /* csr-vector gives a row one group of threads: a rank holding a row of
     * 16k entries waits for it (powerlaw:4M:16 on 4 GPUs: 1.25 ms a rank, as
     * long as the whole matrix on one). CUDA's auto splits such rows, OpenCL's
     * times the kernels that do, OpenMP's takes blocks where they pay. Each
     * keeps the interior and boundary blocks' plans side by side. */
    const char *b = pb_backend_name(pb_device_backend(dev));
    return strcmp(b, "ref") == 0 ? "csr" : "auto";
}

static pb_status sd_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                         void **state, const void **args)
{
    const struct sd_host *h = host;
    pb_comm *comm = pb__comm_world();
    if (h->float_overflow[0]) /* the same on every rank */
        return pb__fail(PB_ERR_UNSUPPORTED, "%s", h->float_overflow);
    struct sd_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__comm_agree(comm, pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory"));
    s->h = h;
    s->dev = dev;
    s->prec = p->prec;
    s->esize = pb_precision_size(p->prec);
    s->overlap = v->data != NULL;
    s->batch = p->v[P_BATCH] > 1 ? (int)p->v[P_BATCH] : 1; /* a problem made without sd_plan: 0 */
    s->chunks = s->stages = 1;
    /* only where streams queue work (a GPU's): run synchronously, the early part would only add a pass */
    s->split_allowed = p->v[P_SPLIT] != 0 && pb_device_backend(dev)->stream_create;
    s->local = local_variant(dev, p->s[P_LOCAL]);
    enum pb_sparse_format format;
    const pb_backend *backend = pb_device_backend(dev);
    pb_status st = pb__variant_find(backend, "spmv", s->local) ? pb_spmv_format(backend, s->local, &format)
                   : pb__fail(PB_ERR_UNSUPPORTED, "spmv-dist: --local %s: %s has no such spmv kernel", s->local,
                              pb_backend_name(backend));
    if (st == PB_OK && format != PB_SPARSE_CSR)
        st = pb__fail(PB_ERR_UNSUPPORTED, "spmv-dist: --local %s reads another format than CSR", s->local);
    st = pb__comm_agree(comm, st);
    int32_t *halo = NULL, *own_slot = NULL;
    if (st == PB_OK)
        st = plan_halo(s, &halo, &own_slot);
    st = pb__comm_agree(comm, st); /* the plan's last checks are local; the open below is collective */
    if (st == PB_OK)
        st = choose_halo(s, (enum halo_mode)p->v[P_HALO]);
    if (st == PB_OK)
        st = pb__devcomm_open(dev, comm, (enum pb_devcomm_path)p->v[P_PATH], &s->dc, s->staged_why,
                              sizeof s->staged_why);
    if (st == PB_OK && s->dc && !s->gather)
        st = plan_device_halo(s);
    if (st == PB_OK && s->gather)
        st = plan_gather(s);
    if (st == PB_OK) {
        int32_t rows = h->mine.rows;
        s->ref = malloc(((size_t)rows + 1) * sizeof *s->ref);
        s->scale = malloc(((size_t)rows + 1) * sizeof *s->scale);
        st = s->ref && s->scale ? split_rows(s, own_slot, halo, s->n_halo) : pb__fail(PB_ERR_NOMEM, "out of memory");
        if (st == PB_OK)
            oracle(s);
    }
    /* Device side: the blocks, x_ext (and the early parts behind it), the y, the staging buffers. */
    size_t n_ext = s->n_ext, n_x = n_ext + (s->split ? (size_t)s->boundary.rows : 0);
    if (st == PB_OK)
        st = upload_csr(dev, &s->interior, s->prec, &s->ptr_i, &s->idx_i, &s->val_i);
    if (st == PB_OK)
        st = upload_csr(dev, &s->boundary, s->prec, &s->ptr_b, &s->idx_b, &s->val_b);
    if (st == PB_OK && s->split)
        st = upload_csr(dev, &s->early, s->prec, &s->ptr_e, &s->idx_e, &s->val_e);
    for (int c = 0; st == PB_OK && c < s->stages - 1; c++)
        st = upload_csr(dev, &s->mid[c], s->prec, &s->ptr_m[c], &s->idx_m[c], &s->val_m[c]);
    if (st == PB_OK && s->stages > 1)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, ((size_t)s->boundary.rows + 1) * s->esize, &s->y_mid);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, (n_x ? n_x : 1) * s->esize, &s->x);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, ((size_t)s->interior.rows + 1) * s->esize, &s->y_int);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, ((size_t)s->boundary.rows + 1) * s->esize, &s->y_bnd);
    if (st == PB_OK && s->split)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, ((size_t)s->early.rows + 1) * s->esize, &s->y_early);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_PINNED, ((size_t)s->n_sent + 1) * s->esize, &s->stage_sent);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_PINNED, ((size_t)s->n_halo + 1) * s->esize, &s->stage_halo);
    if (st == PB_OK && s->gather && !s->dc)
        st = pb_buf_alloc(dev, PB_MEM_PINNED, (n_ext ? n_ext : 1) * s->esize, &s->stage_x);
    if (st == PB_OK && s->gather) {
        size_t parts = (size_t)h->ranks * (size_t)s->chunks, piece = (size_t)(s->gather_stride / s->chunks);
        s->part_off = calloc(parts, sizeof *s->part_off);
        s->part_bytes = calloc(parts, sizeof *s->part_bytes);
        st = s->part_off && s->part_bytes ? PB_OK : pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
        for (size_t k = 0; st == PB_OK && k < parts; k++) {
            /* padded: r's place even where r owns no column (its own slot would be the next rank's) */
            size_t r = k % (size_t)h->ranks;
            s->part_off[k] = (s->gather_stride ? k * piece : (size_t)h->col_first[r]) * s->esize;
            s->part_bytes[k] = (s->gather_stride ? piece : (size_t)(h->col_first[r + 1] - h->col_first[r])) * s->esize;
        }
    }
    if (st == PB_OK)
        st = pb_stream_create(dev, &s->compute);
    if (st == PB_OK) /* the halo's kernels (NCCL's) start ahead of the interior rows' waiting blocks */
        st = env_flag("PARBENCH_SD_URGENT", true) ? pb_stream_create_urgent(dev, &s->copy)
                                                   : pb_stream_create(dev, &s->copy);
    int32_t most = s->interior.rows > s->boundary.rows ? s->interior.rows : s->boundary.rows;
    if (st == PB_OK)
        st = pb__host_alloc(((size_t)most + 1) * s->esize, "spmv-dist y", &s->download);
    void *xh = NULL;
    if (st == PB_OK)
        st = pb__host_alloc((n_x ? n_x : 1) * s->esize, "spmv-dist x", &xh);
    if (st == PB_OK) { /* own entries in their slots; the halo arrives with each product */
        int32_t lo = h->col_first[h->rank];
        memset(xh, 0, (n_x ? n_x : 1) * s->esize);
        for (int32_t j = 0; j < s->n_own; j++)
            store(s->prec, xh, s->gather ? (size_t)gathered_slot(s, lo + j) : (size_t)own_slot[j], h->x[lo + j]);
        st = pb_buf_write(s->x, 0, xh, (n_x ? n_x : 1) * s->esize);
    }
    pb__host_free(xh);
    free(halo);
    free(own_slot);
    for (int i = 0; st == PB_OK && i < s->n_peers; i++) /* halos land in place */
        s->recv_at[i] = (char *)pb_buf_host_ptr(s->stage_halo) + s->recv_offset[i] * s->esize;
    s->recv_ptr = s->recv_at;
    double halo_bytes = !s->gather ? (double)s->n_halo * (double)s->esize : 0;
    for (int c = 0; s->gather && s->part_bytes && c < s->chunks; c++) /* (none: a step above failed, an ERROR row) */
        halo_bytes += (double)(s->n_ext * s->esize / (size_t)s->chunks - s->part_bytes[c * h->ranks + h->rank]);
    s->halo_bytes = halo_bytes;
    s->args_int = (struct pb_spmv_args){.prec = s->prec, .format = PB_SPARSE_CSR, .rows = s->interior.rows,
                                        .cols = n_ext ? (int32_t)n_ext : 1, .nnz = s->interior.ptr ? s->interior.ptr[s->interior.rows] : 0,
                                        .ptr = s->ptr_i, .idx = s->idx_i, .val = s->val_i, .x = s->x, .y = s->y_int};
    s->args_bnd = s->args_int;
    s->args_bnd.rows = s->boundary.rows;
    s->args_bnd.nnz = s->boundary.ptr ? s->boundary.ptr[s->boundary.rows] : 0;
    s->args_bnd.ptr = s->ptr_b, s->args_bnd.idx = s->idx_b, s->args_bnd.val = s->val_b, s->args_bnd.y = s->y_bnd;
    s->args_bnd.cols = n_x ? (int32_t)n_x : 1;
    s->args_early = s->args_int;
    s->args_early.rows = s->early.rows;
    s->args_early.nnz = s->early.ptr ? s->early.ptr[s->early.rows] : 0;
    s->args_early.ptr = s->ptr_e, s->args_early.idx = s->idx_e, s->args_early.val = s->val_e;
    s->args_early.y = s->y_early;
    for (int c = 0; c < s->stages - 1; c++) {
        s->args_mid[c] = s->args_bnd;
        s->args_mid[c].nnz = s->mid[c].ptr ? s->mid[c].ptr[s->mid[c].rows] : 0;
        s->args_mid[c].ptr = s->ptr_m[c], s->args_mid[c].idx = s->idx_m[c], s->args_mid[c].val = s->val_m[c];
        s->args_mid[c].y = s->y_mid;
    }
    /* One product of each block now: a kernel that refuses these rows (bcsr
     * finding no blocks) makes the row UNSUPPORTED here rather than an ERROR
     * mid-run, and its analysis of the rows is not timed in a repetition. */
    if (st == PB_OK)
        st = launch(s, &s->args_int, NULL);
    if (st == PB_OK && s->split)
        st = launch(s, &s->args_early, NULL);
    for (int c = 0; st == PB_OK && c < s->stages - 1; c++)
        st = launch(s, &s->args_mid[c], NULL);
    if (st == PB_OK)
        st = launch(s, &s->args_bnd, NULL);
    if (st == PB_OK)
        st = pb_device_sync(dev);
    st = pb__comm_agree(comm, st);
    if (st != PB_OK) {
        sd_unbind(s);
        return st;
    }
    *state = s;
    *args = s;
    return PB_OK;
}

#define DEFINE_GATHER(T, SUFFIX)                                                          \
    static void gather_##SUFFIX(void *out, const void *from, const int32_t *index, size_t n) \
    {                                                                                     \
        T *o = out;                                                                       \
        const T *f = from;                                                                \
        for (size_t k = 0; k < n; k++)                                                    \
            o[k] = f[index[k]];                                                           \
    }
DEFINE_GATHER(float, f32)
DEFINE_GATHER(double, f64)

/* Download what is sent and start the exchange. Called on every rank even
 * after a local failure (it then sends whatever it has), so no peer waits. */
static pb_status start_halo(struct sd_state *s, struct pb_comm_exchange **x)
{
    pb_status st = PB_OK;
    if (s->n_sent)
        st = pb_buf_copy(s->stage_sent, 0, s->x, (size_t)(s->n_own - s->n_sent) * s->esize,
                         (size_t)s->n_sent * s->esize, s->copy);
    if (st == PB_OK)
        st = pb_stream_sync(s->copy);
    const void *sent = pb_buf_host_ptr(s->stage_sent);
    for (int i = 0; i < s->n_peers; i++) /* typed: a memcpy call per entry cost as much as the product */
        if (s->esize == sizeof(double))
            gather_f64(s->send_buf[i], sent, s->send_index[i], s->send_count[i]);
        else
            gather_f32(s->send_buf[i], sent, s->send_index[i], s->send_count[i]);
    pb_status xst = pb__comm_exchange_start(pb__comm_world(), (size_t)s->n_peers, s->peers,
                                            (const void *const *)s->send_buf, s->send_bytes, s->recv_ptr,
                                            s->recv_bytes, x);
    return st != PB_OK ? st : xst;
}

/* Split: the boundary rows' own columns on the compute stream, their sums
 * then copied behind x_ext, where the boundary block reads them. */
static pb_status launch_early(struct sd_state *s)
{
    if (!s->split)
        return PB_OK;
    pb_status st = launch(s, &s->args_early, s->compute);
    if (st == PB_OK)
        st = pb_buf_copy(s->x, s->n_ext * s->esize, s->y_early, 0, (size_t)s->early.rows * s->esize, s->compute);
    return st;
}

/* overlap: what runs while the halo travels, on the compute stream (the
 * early parts, the interior rows). Queued before a halo that MPI moves, which
 * returns only when it has arrived; through NCCL, see nccl_interior_first. */
static pb_status overlapped_work(struct sd_state *s)
{
    if (!s->overlap)
        return PB_OK;
    pb_status st = launch_early(s);
    return st == PB_OK ? launch(s, &s->args_int, s->compute) : st;
}

/* The boundary rows on the copy stream, behind the halo; split, also behind
 * what the compute stream holds (the early parts). */
static pb_status launch_boundary(struct sd_state *s)
{
    pb_status st = s->split ? pb_stream_wait(s->copy, s->compute) : PB_OK;
    return st == PB_OK ? launch(s, &s->args_bnd, s->copy) : st;
}

/* After the interior rows (st) and the exchange (xst): the boundary rows
 * behind the exchange on the copy stream, then both streams drained. Through
 * NCCL every step is queued in order on the streams, so the product is left
 * queued: the caller's device events and sync wait for CUDA's streams as for
 * any kernel, and the host's wake-up from a sync is not part of the product
 * (a solver calling it in a loop would not sync either). */
static pb_status boundary_then_sync(struct sd_state *s, pb_status st, pb_status xst)
{
    if (st == PB_OK)
        st = xst;
    if (st == PB_OK)
        st = launch_boundary(s);
    if (st == PB_OK && pb__devcomm_path(s->dc) == PB_PATH_NCCL)
        return PB_OK;
    pb_status s1 = pb_stream_sync(s->compute), s2 = pb_stream_sync(s->copy);
    return st != PB_OK ? st : s1 != PB_OK ? s1 : s2;
}

/* The halo on the device path: gathered, sent and received into x on the
 * copy stream; the interior rows on the compute stream meanwhile (overlap)
 * or after it; the boundary rows behind the halo. A CUDA-aware MPI returns
 * when the halo has arrived, so there the interior rows are queued first;
 * through NCCL too, unless the knob says otherwise. */
static pb_status device_run(struct sd_state *s)
{
    size_t sent_first = (size_t)(s->n_own - s->n_sent);
    bool first = pb__devcomm_path(s->dc) == PB_PATH_MPI || nccl_interior_first(false);
    pb_status st = first ? overlapped_work(s) : PB_OK, xst;
    xst = pb__devcomm_exchange(s->dc, &s->halo, s->x, sent_first, s->x, (size_t)s->n_own, s->copy);
    if (st == PB_OK && !first)
        st = overlapped_work(s);
    if (st == PB_OK && !s->overlap)
        st = launch(s, &s->args_int, s->copy);
    return boundary_then_sync(s, st, xst);
}

/* Piece c of x (all of it where x travels whole): rank r's part of it from r
 * to every rank, in place, on a device path or through the pinned copy of x. */
static pb_status share_x(struct sd_state *s, int c)
{
    const struct sd_host *h = s->h;
    const size_t *off = s->part_off + (size_t)c * h->ranks, *bytes = s->part_bytes + (size_t)c * h->ranks;
    pb_status st = PB_OK, all = PB_OK;
    size_t lo = off[h->rank], hi = lo + bytes[h->rank];
    size_t first = s->chunks > 1 ? off[0] : 0, end = s->chunks > 1 ? off[h->ranks - 1] + bytes[h->ranks - 1]
                                                                   : s->n_ext * s->esize;
    if (!s->dc && hi > lo)
        st = pb_buf_copy(s->stage_x, lo, s->x, lo, hi - lo, s->copy);
    if (!s->dc && st == PB_OK)
        st = pb_stream_sync(s->copy);
    /* Every rank takes part in every broadcast, even after a local failure, so none waits. */
    if (s->dc)
        all = pb__devcomm_allgatherv(s->dc, s->x, off, bytes, s->copy);
    char *staged = s->dc ? NULL : pb_buf_host_ptr(s->stage_x);
    for (int r = 0; staged && r < h->ranks; r++) {
        pb_status b = bytes[r] ? pb__comm_bcast(pb__comm_world(), staged + off[r], bytes[r], r) : PB_OK;
        if (all == PB_OK)
            all = b;
    }
    if (st == PB_OK)
        st = all;
    if (!s->dc && st == PB_OK && lo > first)
        st = pb_buf_copy(s->x, first, s->stage_x, first, lo - first, s->copy);
    if (!s->dc && st == PB_OK && end > hi)
        st = pb_buf_copy(s->x, hi, s->stage_x, hi, end - hi, s->copy);
    return st;
}

/* In pieces: stage c of the boundary rows on the compute stream, its sums
 * then copied behind x_ext for the next stage. */
static pb_status launch_mid(struct sd_state *s, int c)
{
    pb_status st = launch(s, &s->args_mid[c], s->compute);
    if (st == PB_OK)
        st = pb_buf_copy(s->x, s->n_ext * s->esize, s->y_mid, 0, (size_t)s->boundary.rows * s->esize, s->compute);
    return st;
}

/* allgather: the interior rows (own x only) run while the rest of x arrives;
 * in pieces, each stage of the boundary rows as soon as its piece is there. */
static pb_status gather_run(struct sd_state *s)
{
    bool first = pb__devcomm_path(s->dc) != PB_PATH_NCCL || nccl_interior_first(true); /* MPI's broadcasts */
    pb_status st = first ? overlapped_work(s) : PB_OK, xst;
    xst = share_x(s, 0);
    if (st == PB_OK && !first)
        st = overlapped_work(s);
    if (st == PB_OK && !s->overlap)
        st = launch(s, &s->args_int, s->copy);
    for (int c = 1; c < s->chunks; c++) {
        /* the copy stream holds pieces 0..c-1 so far: stage c-1 waits for them alone */
        bool stage = c - 1 < s->stages - 1;
        if (st == PB_OK && stage)
            st = pb_stream_wait(s->compute, s->copy);
        pb_status b = share_x(s, c);
        if (xst == PB_OK)
            xst = b;
        if (st == PB_OK && stage)
            st = launch_mid(s, c - 1);
    }
    return boundary_then_sync(s, st, xst);
}

static pb_status one_product(struct sd_state *s)
{
    if (s->gather)
        return gather_run(s);
    if (s->dc)
        return device_run(s);
    struct pb_comm_exchange *x = NULL;
    pb_status st = start_halo(s, &x), wst;
    if (s->overlap) {
        if (st == PB_OK)
            st = overlapped_work(s);
        wst = pb__comm_exchange_wait(x);
    } else {
        wst = pb__comm_exchange_wait(x);
        if (st == PB_OK)
            st = launch(s, &s->args_int, s->copy);
    }
    /* the arrived halo uploaded behind x's own entries, the boundary rows behind it */
    if (st == PB_OK && wst == PB_OK && s->n_halo)
        st = pb_buf_copy(s->x, (size_t)s->n_own * s->esize, s->stage_halo, 0, (size_t)s->n_halo * s->esize, s->copy);
    return boundary_then_sync(s, st, wst);
}

/* --batch products, each one's exchange queued behind the last one's
 * products (they read x's halo, which it rewrites): stream-ordered, no host
 * wait where the path queues everything (NCCL). After a local failure the
 * rank still takes part in every exchange, so that no other rank waits for
 * it; the first failure is returned. */
static pb_status sd_run(pb_device *dev, const void *args, pb_stream *stream)
{
    (void)dev, (void)stream;
    struct sd_state *s = (struct sd_state *)args;
    pb_status st = PB_OK;
    for (int k = 0; k < s->batch; k++) {
        pb_status w = k > 0 ? pb_stream_wait(s->copy, s->compute) : PB_OK, p = one_product(s);
        if (st == PB_OK)
            st = w != PB_OK ? w : p;
    }
    return st;
}

static int sd_runs_per_call(void *state) { return ((const struct sd_state *)state)->batch; }

static pb_status sd_poison(void *state)
{
    struct sd_state *s = state;
    pb_status st = pb_buf_fill_bytes(s->y_int, 0xFF);
    if (st == PB_OK && s->y_early)
        st = pb_buf_fill_bytes(s->y_early, 0xFF);
    return st == PB_OK ? pb_buf_fill_bytes(s->y_bnd, 0xFF) : st;
}

static pb_status sd_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    (void)host;
    struct sd_state *s = state;
    pb__check_begin(out, PB_CHECK_TOL, "full");
    const struct { pb_buf *y; int32_t rows; const int32_t *which; } parts[2] = {
        {s->y_int, s->interior.rows, s->interior_rows}, {s->y_bnd, s->boundary.rows, s->boundary_rows}};
    double *ref = malloc(((size_t)s->h->mine.rows + 1) * 2 * sizeof *ref);
    if (!ref)
        return pb__fail(PB_ERR_NOMEM, "spmv-dist: out of host memory");
    for (int b = 0; b < 2; b++) {
        if (!parts[b].rows)
            continue;
        pb_status st = pb_buf_read(parts[b].y, 0, s->download, (size_t)parts[b].rows * s->esize);
        if (st != PB_OK) {
            free(ref);
            return st;
        }
        double *scale = ref + parts[b].rows;
        for (int32_t r = 0; r < parts[b].rows; r++) {
            ref[r] = s->ref[parts[b].which[r]];
            scale[r] = s->scale[parts[b].which[r]];
        }
        if (corrupt && b == (s->boundary.rows > 0)) { /* a boundary row where there is one */
            double want = ref[parts[b].rows / 2];
            store(s->prec, s->download, (size_t)parts[b].rows / 2, want + 1.0 + fabs(want));
        }
        pb__check_add_scaled(out, s->download, s->prec, ref, scale, (size_t)parts[b].rows,
                             (size_t)s->h->row_first[s->h->rank], "row");
    }
    free(ref);
    pb__check_end(out);
    return PB_OK;
}

/* The local products alone, a few times (outside the timed runs): the
 * compute part of the time; the rest of the median is exposed exchange. */
static void sd_extras(void *state, const struct pb_stats *time, const struct pb_ceiling *ceiling, double *out)
{
    (void)ceiling;
    struct sd_state *s = state;
    double best = INFINITY;
    for (int i = 0; i < 3; i++) {
        double t0 = pb__now();
        pb_status st = PB_OK;
        for (int k = 0; k < s->batch && st == PB_OK; k++) { /* as the timed runs: --batch back to back */
            st = launch_early(s);
            if (st == PB_OK)
                st = launch(s, &s->args_int, s->compute);
            for (int c = 0; st == PB_OK && c < s->stages - 1; c++)
                st = launch_mid(s, c);
            if (st == PB_OK)
                st = launch(s, &s->args_bnd, s->compute);
        }
        if (st == PB_OK)
            st = pb_stream_sync(s->compute);
        if (st != PB_OK) {
            best = NAN;
            break;
        }
        best = fmin(best, (pb__now() - t0) / s->batch);
    }
    out[0] = best;
    out[1] = pb__exposed_comm(time->median, best);
    out[2] = s->halo_bytes;
    out[3] = s->gather ? s->h->ranks - 1 : s->n_peers;
    out[4] = s->h->mine.rows ? (double)s->boundary.rows / s->h->mine.rows : 0;
}

static const char *const sd_extra_names[] = {"compute_s", "exposed_comm_s", "halo_bytes", "neighbours",
                                             "boundary_fraction"};

static const struct pb_variant sd_variants[] = {
    {{"spmv-dist", "overlap", "interior rows while the halo travels, then the boundary rows", 0}, .run = sd_run,
     .data = "overlap"},
    {{"spmv-dist", "blocking", "halo exchange first, then the products", 0}, .run = sd_run},
};

/* The path the halo took, for the row. */
static void sd_note(void *state, char *buf, size_t len)
{
    const struct sd_state *s = state;
    char padded[96] = "", pieces[32] = "";
    if (s->chunks > 1)
        snprintf(pieces, sizeof pieces, ", in %d pieces", s->chunks);
    if (s->gather_stride)
        snprintf(padded, sizeof padded, " (parts padded to %" PRId32 "%s)", s->gather_stride, pieces);
    const char *how =
        !s->dc && pb_buf_host_ptr(s->x) ? PB_DEVCOMM_STAGED_HOST : pb__devcomm_describe(pb__devcomm_path(s->dc));
    snprintf(buf, len, "%s%s %s%s%s%s%s", s->gather ? "x gathered whole" : "halo", padded, how,
             s->staged_why[0] ? " (" : "", s->staged_why,
             s->staged_why[0] ? ")" : "", s->split ? "; boundary rows' own columns ahead of it" : "");
}

const struct pb_bench pb__bench_spmv_dist = {
    .name = "spmv-dist",
    .roof = pb__roof_memory,
    .summary = "sparse y = A*x with A's rows over the ranks, halo exchange overlapped (distributed)",
    .flop_model = "2*nnz",
    .byte_model = "CSR's minimum for the whole matrix (as spmv, but all of x; halos not counted)",
    .distributed = true,
    .params = sd_params,
    .n_params = sizeof sd_params / sizeof sd_params[0],
    .extra_names = sd_extra_names,
    .n_extras = sizeof sd_extra_names / sizeof sd_extra_names[0],
    .extras = sd_extras,
    .runs_per_call = sd_runs_per_call,
    .note = sd_note,
    .plan = sd_plan,
    .describe = sd_describe,
    .flops = sd_flops,
    .bytes = sd_bytes,
    .prepare = sd_prepare,
    .release = sd_release,
    .bind = sd_bind,
    .poison = sd_poison,
    .check = sd_check,
    .unbind = sd_unbind,
    .variants = sd_variants,
    .n_variants = sizeof sd_variants / sizeof sd_variants[0],
};

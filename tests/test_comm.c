/* Ranks: the communicator's collectives and the run loop's "every rank at
 * once" mode. Run alone (one process) and under mpiexec with 2, 3 and 4
 * ranks (tests/CMakeLists.txt); every rank makes the same calls. */
#include "test_util.h"

#include "bench/runner.h"
#include "comm/comm.h"
#include "comm/devcomm.h"
#include "core/backend_impl.h"
#include "core/core.h"
#include "output/writer_impl.h"
#include "sparse/sparse.h"

static pb_comm *comm;
static int me, ranks;

static int group_setup(void **state)
{
    (void)state;
    if (pb__comm_init() != PB_OK) {
        print_message("comm init: %s\n", pb_last_error());
        return -1;
    }
    comm = pb__comm_world();
    me = pb__comm_rank(comm);
    ranks = pb__comm_size(comm);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    pb__comm_finalize();
    return 0;
}

static void test_layout(void **state)
{
    (void)state;
#ifndef PB_HAVE_MPI
    /* the multi-rank tests are not even registered: say so */
    pb_test_skip_part("mpi", "built without MPI (PB_MPI): only the one-process communicator is tested");
#endif
    assert_true(me >= 0 && me < ranks);
    assert_true(pb__comm_local_rank(comm) < pb__comm_local_size(comm));
    assert_true(pb__comm_nodes(comm) >= 1 && pb__comm_nodes(comm) <= ranks);
    assert_true(strlen(pb__comm_hosts(comm)) > 0);
    if (ranks == 1 && !getenv("OMPI_COMM_WORLD_SIZE"))
        assert_string_equal(pb__comm_library(comm), "none");
}

static void test_collectives(void **state)
{
    (void)state;
    /* Sum, min and max of values that differ per rank, in place and not. */
    int64_t v[3] = {me + 1, me + 1, me + 1}, sum;
    assert_int_equal(pb__comm_allreduce(comm, v, &sum, 1, PB_COMM_INT64, PB_COMM_SUM), PB_OK);
    assert_int_equal(sum, (int64_t)ranks * (ranks + 1) / 2);
    assert_int_equal(pb__comm_allreduce(comm, &v[1], &v[1], 1, PB_COMM_INT64, PB_COMM_MIN), PB_OK);
    assert_int_equal(v[1], 1);
    assert_int_equal(pb__comm_allreduce(comm, &v[2], &v[2], 1, PB_COMM_INT64, PB_COMM_MAX), PB_OK);
    assert_int_equal(v[2], ranks);
    double d[2] = {0.5 * me, -1.0 * me};
    assert_int_equal(pb__comm_allreduce(comm, d, d, 2, PB_COMM_DOUBLE, PB_COMM_SUM), PB_OK);
    assert_near(d[0], 0.25 * ranks * (ranks - 1), 0);
    assert_near(d[1], -0.5 * ranks * (ranks - 1), 0);

    /* Broadcast from the last rank, gather and allgather in rank order. */
    char word[32];
    snprintf(word, sizeof word, "from %d", me);
    assert_int_equal(pb__comm_bcast(comm, word, sizeof word, ranks - 1), PB_OK);
    char want[32];
    snprintf(want, sizeof want, "from %d", ranks - 1);
    assert_string_equal(word, want);
    int32_t *all = calloc((size_t)ranks, sizeof *all), mine = 10 * me;
    assert_non_null(all);
    assert_int_equal(pb__comm_gather(comm, &mine, sizeof mine, all, 0), PB_OK);
    for (int r = 0; me == 0 && r < ranks; r++)
        assert_int_equal(all[r], 10 * r);
    memset(all, 0, (size_t)ranks * sizeof *all);
    assert_int_equal(pb__comm_allgather(comm, &mine, sizeof mine, all), PB_OK);
    for (int r = 0; r < ranks; r++)
        assert_int_equal(all[r], 10 * r);
    /* Alltoall: block r of every rank goes to rank r, in the sender's slot. */
    int32_t *out = calloc((size_t)ranks, sizeof *out);
    assert_non_null(out);
    for (int r = 0; r < ranks; r++)
        out[r] = 100 * me + r;
    assert_int_equal(pb__comm_alltoall(comm, out, sizeof *out, all), PB_OK);
    for (int r = 0; r < ranks; r++)
        assert_int_equal(all[r], 100 * r + me);
    free(out);
    free(all);
    assert_int_equal(pb__comm_barrier(comm), PB_OK);
}

/* A ring halo: each rank sends its left neighbour `me + 1` values and its
 * right neighbour none (zero-byte entries are skipped), and receives from
 * the right neighbour what it sent. One rank: the exchange is with itself. */
static void test_exchange(void **state)
{
    (void)state;
    int left = (me + ranks - 1) % ranks, right = (me + 1) % ranks;
    if (ranks == 1) {
        double out[2] = {1.5, 2.5}, in[2] = {0, 0};
        const void *send[] = {out};
        void *recv[] = {in};
        size_t bytes[] = {sizeof out};
        int peers[] = {0};
        struct pb_comm_exchange *x;
        assert_int_equal(pb__comm_exchange_start(comm, 1, peers, send, bytes, recv, bytes, &x), PB_OK);
        assert_int_equal(pb__comm_exchange_wait(x), PB_OK);
        assert_near(in[1], 2.5, 0);
        pb__clear_error();
        peers[0] = 1;
        /* no rank 1 (one process, or MPI with one rank) */
        assert_int_not_equal(pb__comm_exchange_start(comm, 1, peers, send, bytes, recv, bytes, &x), PB_OK);
        assert_null(x);
        return;
    }
    double out[8], in[8];
    for (int i = 0; i < 8; i++)
        out[i] = 100.0 * me + i, in[i] = -1;
    size_t n_out = (size_t)(me % 8) + 1, n_in = (size_t)(right % 8) + 1;
    int peers[2] = {left, right};
    const void *send[2] = {out, out};
    void *recv[2] = {in, in};
    size_t send_bytes[2] = {n_out * sizeof(double), 0}, recv_bytes[2] = {0, n_in * sizeof(double)};
    struct pb_comm_exchange *x;
    assert_int_equal(pb__comm_exchange_start(comm, 2, peers, send, send_bytes, recv, recv_bytes, &x), PB_OK);
    assert_int_equal(pb__comm_exchange_wait(x), PB_OK);
    for (size_t i = 0; i < n_in; i++)
        assert_near(in[i], 100.0 * right + (double)i, 0);
    if (n_in < 8)
        assert_near(in[n_in], -1, 0); /* nothing past what was sent */
}

/* Split into even and odd ranks, ranked in reverse: each part sums its own
 * ranks and hears from its own root; freeing the world does nothing. */
static void test_split(void **state)
{
    (void)state;
    pb_comm *part = NULL;
    assert_int_equal(pb__comm_split(comm, me % 2, -me, &part), PB_OK);
    assert_non_null(part);
    int members = ranks / 2 + (me % 2 == 0 ? ranks % 2 : 0);
    assert_int_equal(pb__comm_size(part), members);
    /* keys -me: the highest rank of the part is its rank 0 */
    int highest = (ranks - 1) - ((ranks - 1 - me) % 2);
    assert_int_equal(pb__comm_rank(part), (highest - me) / 2);
    int64_t sum = me, want = 0;
    for (int r = me % 2; r < ranks; r += 2)
        want += r;
    assert_int_equal(pb__comm_allreduce(part, &sum, &sum, 1, PB_COMM_INT64, PB_COMM_SUM), PB_OK);
    assert_int_equal(sum, want);
    int32_t root = me;
    assert_int_equal(pb__comm_bcast(part, &root, sizeof root, 0), PB_OK);
    assert_int_equal(root, highest);
    assert_string_equal(pb__comm_library(part), pb__comm_library(comm));
    pb__comm_free(part);
    pb__comm_free(NULL);
    pb__comm_free(comm); /* the world is not freed */
    assert_int_equal(pb__comm_barrier(comm), PB_OK);
    pb__clear_error();
    assert_int_equal(pb__comm_split(comm, -1, 0, &part), PB_ERR_INVALID);
    assert_null(part);
}

/* ---- the run loop: a writer that keeps the rows it is given ------------- */

#define MAX_ROWS 64

struct kept {
    struct pb_result rows[MAX_ROWS];
    size_t n;
};

static struct kept kept;

static pb_status keep_begin(struct pb_writer *w)
{
    (void)w;
    return PB_OK;
}

static pb_status keep_row(struct pb_writer *w, const struct pb_result *r)
{
    (void)w;
    if (kept.n < MAX_ROWS)
        kept.rows[kept.n++] = *r; /* samples are not kept: they point into the runner */
    return PB_OK;
}

static const struct pb_writer_ops keep_ops = {"keep", keep_begin, keep_row, keep_begin, NULL};

static void test_every_rank_at_once(void **state)
{
    (void)state;
    const struct pb_bench *gemm = pb__bench_find("gemm");
    assert_non_null(gemm);
    struct pb_problem p = {.prec = PB_DOUBLE, .v = {37, 29, 41}};
    const char *backends[] = {"ref", "openmp"}, *variants[] = {"ref/ikj", "openmp/blocked"};
    struct pb_context ctx;
    char *argv[] = {"test_comm"};
    pb__context_init(&ctx, 1, argv);
    assert_int_equal(ctx.ranks, ranks);
    struct pb_writer w = {.ops = &keep_ops, .ctx = &ctx, .bench = gemm};
    struct pb_writer *writers[] = {&w};
    struct pb_run_config cfg = {.bench = gemm, .problems = &p, .n_problems = 1, .backends = backends,
                                .n_backends = 2, .variants = variants, .n_variants = 2, .device_per_rank = true,
                                .reps = 4, .warmup = 1, .seed = 7, .verify = true, .ctx = &ctx,
                                .writers = me == 0 ? writers : NULL, .n_writers = me == 0 ? 1 : 0};
    memset(&kept, 0, sizeof kept);
    struct pb_run_summary sum;
    assert_int_equal(pb__run(&cfg, &sum), PB_OK);

    /* Every rank gets rank 0's counts: one row per rank and job, plus an
     * aggregate per job under several ranks. */
    size_t rows = ranks == 1 ? 2 : 2 * ((size_t)ranks + 1);
    assert_int_equal(sum.ok, rows);
    assert_int_equal(sum.failed + sum.errors + sum.skipped + sum.unsupported, 0);
    assert_false(sum.interrupted);
    if (me != 0) {
        assert_int_equal(kept.n, 0);
        return;
    }
    assert_int_equal(kept.n, rows);
    for (size_t job = 0; job < 2; job++) {
        const struct pb_result *row = &kept.rows[job * (ranks == 1 ? 1 : (size_t)ranks + 1)];
        double work = 0, slowest = 0, lo = INFINITY, hi = 0;
        for (int r = 0; r < ranks; r++, row++) {
            assert_int_equal(row->status, PB_RESULT_OK);
            assert_int_equal(row->rank, r);
            assert_int_equal(row->ranks, ranks);
            assert_true(isnan(row->rank_rate_median));
            work += row->gflops * row->stats.median;
            slowest = fmax(slowest, row->stats.median);
            lo = fmin(lo, row->gflops);
            hi = fmax(hi, row->gflops);
        }
        if (ranks == 1)
            continue;
        /* The aggregate: every rank's work over the slowest rank's time per
         * repetition, whose median is at least every rank's median. */
        assert_string_equal(row->variant, kept.rows[job * ((size_t)ranks + 1)].variant);
        assert_int_equal(row->rank, PB_RANK_ALL);
        assert_int_equal(row->status, PB_RESULT_OK);
        assert_true(row->check.pass);
        assert_true(row->stats.median >= slowest);
        assert_near(row->gflops, work / row->stats.median, 1e-9 * row->gflops);
        assert_near(row->rank_rate_min, lo, 0);
        assert_near(row->rank_rate_max, hi, 0);
        assert_true(row->rank_rate_median >= lo && row->rank_rate_median <= hi);
        char want[32];
        snprintf(want, sizeof want, "%d x ", ranks);
        assert_contains(row->device, want);
    }
}

/* A distributed benchmark: one row per job for all ranks, verified on every
 * rank; a fault planted on rank 0 fails the row. */
static void test_distributed(void **state)
{
    (void)state;
    const struct pb_bench *ar = pb__bench_find("allreduce");
    assert_non_null(ar);
    assert_true(ar->distributed);
    struct pb_problem p[2] = {{.prec = PB_FLOAT, .v = {4}}, {.prec = PB_DOUBLE, .v = {1000 * 8 + 8}}};
    const char *backends[] = {"ref", "openmp"};
    struct pb_context ctx;
    char *argv[] = {"test_comm"};
    pb__context_init(&ctx, 1, argv);
    struct pb_writer w = {.ops = &keep_ops, .ctx = &ctx, .bench = ar};
    struct pb_writer *writers[] = {&w};
    for (int fault = 0; fault < 2; fault++) {
        struct pb_run_config cfg = {.bench = ar, .problems = p, .n_problems = 2, .backends = backends,
                                    .n_backends = 2, .device_per_rank = true, .reps = 3, .warmup = 1,
                                    .seed = 7, .verify = true, .inject_fault = fault && me == 0, .ctx = &ctx,
                                    .writers = me == 0 ? writers : NULL, .n_writers = me == 0 ? 1 : 0};
        memset(&kept, 0, sizeof kept);
        struct pb_run_summary sum;
        assert_int_equal(pb__run(&cfg, &sum), PB_OK);
        /* 2 problems x 2 backends x (mpi, mpi-staged), one row each */
        assert_int_equal(fault ? sum.failed : sum.ok, 8);
        assert_int_equal(sum.ok + sum.failed, 8);
        for (size_t i = 0; i < kept.n; i++) {
            const struct pb_result *r = &kept.rows[i];
            assert_int_equal(r->rank, PB_RANK_ALL);
            assert_int_equal(r->ranks, ranks);
            assert_int_equal(r->status, fault ? PB_RESULT_FAILED : PB_RESULT_OK);
            if (!fault) {
                assert_near(r->check.err_max, 0, 0);
                /* bus bandwidth = algorithm bandwidth x 2 (n - 1) / n, at the slowest rank's time */
                assert_true(r->extras[0] >= 0);
            } else if (ranks > 1) {
                assert_contains(r->reason, "rank 0:");
            }
        }
    }
}

/* allgather, alltoall, broadcast and pingpong: one verified row per job, the
 * size nccl-tests' S (a whole number of elements per rank, at least one),
 * GB/s = S / time; pingpong's time rank 0's round trip / 2, and SKIP alone.
 * A fault planted on rank 0 fails every row, naming the element. */
static void test_collective_benches(void **state)
{
    (void)state;
    static const char *const names[] = {"allgather", "alltoall", "broadcast", "pingpong"};
    /* one float (less than one per rank under several ranks); 1001 doubles */
    struct pb_problem p[2] = {{.prec = PB_FLOAT, .v = {4}}, {.prec = PB_DOUBLE, .v = {1001 * 8}}};
    const char *backends[] = {"ref", "openmp"};
    struct pb_context ctx;
    char *argv[] = {"test_comm"};
    pb__context_init(&ctx, 1, argv);
    for (size_t b = 0; b < sizeof names / sizeof names[0]; b++) {
        const struct pb_bench *bench = pb__bench_find(names[b]);
        assert_non_null(bench);
        assert_true(bench->distributed);
        bool pieces = b < 2, pingpong = b == 3;
        struct pb_problem planned[2];
        struct pb_param_lists lists = {.count = {1}};
        for (int i = 0; i < 2; i++) {
            size_t n = 0;
            lists.values[0] = &p[i].v[0];
            assert_int_equal(bench->plan(&lists, p[i].prec, &planned[i], 1, &n), PB_OK);
            assert_int_equal(n, 1);
        }
        struct pb_writer w = {.ops = &keep_ops, .ctx = &ctx, .bench = bench};
        struct pb_writer *writers[] = {&w};
        for (int fault = 0; fault < 2; fault++) {
            struct pb_run_config cfg = {.bench = bench, .problems = planned, .n_problems = 2, .backends = backends,
                                        .n_backends = 2, .device_per_rank = true, .reps = 3, .warmup = 1,
                                        .seed = 7, .verify = true, .inject_fault = fault && me == 0, .ctx = &ctx,
                                        .writers = me == 0 ? writers : NULL, .n_writers = me == 0 ? 1 : 0};
            memset(&kept, 0, sizeof kept);
            struct pb_run_summary sum;
            assert_int_equal(pb__run(&cfg, &sum), PB_OK);
            /* 2 problems x 2 backends x (mpi, mpi-staged), one row each */
            if (pingpong && ranks == 1) {
                assert_int_equal(sum.skipped, 8);
                if (me == 0)
                    assert_contains(kept.rows[0].reason, "pingpong needs two ranks");
                break;
            }
            assert_int_equal(fault ? sum.failed : sum.ok, 8);
            for (size_t i = 0; i < kept.n; i++) {
                const struct pb_result *r = &kept.rows[i];
                assert_int_equal(r->rank, PB_RANK_ALL);
                assert_int_equal(r->ranks, ranks);
                if (fault) {
                    assert_int_equal(r->status, PB_RESULT_FAILED);
                    assert_contains(r->reason, "element ");
                    continue;
                }
                assert_int_equal(r->status, PB_RESULT_OK);
                assert_near(r->check.err_max, 0, 0);
                assert_string_equal(r->reason, strcmp(r->variant, "mpi") == 0 ? "path: host" : "path: staged");
                size_t esize = r->problem.prec == PB_FLOAT ? 4 : 8, count = (size_t)r->problem.v[0] / esize;
                if (pieces)
                    count = (count / (size_t)ranks ? count / (size_t)ranks : 1) * (size_t)ranks;
                assert_near(r->gbps, (double)(count * esize) / r->stats.median * 1e-9, 1e-9 * r->gbps);
                if (pingpong) { /* half of rank 0's round trip, within its host-timed call */
                    assert_true(r->stats.median > 0 && r->stats.median <= r->host_stats.median);
                    continue;
                }
                /* busbw: x (n-1)/n (0 on one rank), broadcast x 1 */
                if (pieces && ranks == 1)
                    assert_near(r->extras[0], 0, 0);
                else
                    assert_true(r->extras[0] > 0);
            }
        }
    }
}

/* spmv-dist over awkward partitions: a diagonal matrix (no halo), a dense
 * row and empty rows (a halo of everything for some ranks), a rectangular
 * matrix, a one-row matrix (empty ranks), a Laplacian; both variants and both
 * balances, on ref and openmp; every row verified by its owner. */
static void test_spmv_dist(void **state)
{
    (void)state;
    const struct pb_bench *sd = pb__bench_find("spmv-dist");
    assert_non_null(sd);
    assert_true(sd->distributed);
    char diag[512], odd[512], wide[512];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(diag, sizeof diag, "%s/comm-diag.mtx", tmp);
    snprintf(odd, sizeof odd, "%s/comm-odd.mtx", tmp);
    snprintf(wide, sizeof wide, "%s/comm-wide.mtx", tmp);
    if (me == 0) {
        FILE *f = fopen(diag, "w");
        assert_non_null(f);
        fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n10 10 10\n");
        for (int i = 1; i <= 10; i++)
            fprintf(f, "%d %d %g\n", i, i, 0.5 + i);
        fclose(f);
        /* row 1 empty, row 4 dense, rows 7..9 empty, the last row one entry far left */
        f = fopen(odd, "w");
        assert_non_null(f);
        fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n12 12 %d\n", 12 + 4);
        for (int j = 1; j <= 12; j++)
            fprintf(f, "4 %d %g\n", j, 1.0 / j);
        fprintf(f, "2 2 1\n3 12 -2\n6 5 3\n12 1 4\n");
        fclose(f);
        f = fopen(wide, "w");
        assert_non_null(f);
        fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n5 13 9\n");
        fprintf(f, "1 1 1\n1 13 2\n2 7 3\n3 2 4\n3 9 5\n4 4 6\n5 5 7\n5 12 8\n5 1 9\n");
        fclose(f);
    }
    assert_int_equal(pb__comm_barrier(comm), PB_OK);
    const char *mats[] = {diag, odd, wide, "lap2d:1", "lap2d:9", "powerlaw:300:6"};
    const char *bal[] = {"nnz", "rows"};
    struct pb_problem p[24];
    size_t np = 0;
    for (size_t m = 0; m < PB_ARRAY_LEN(mats); m++)
        for (size_t b = 0; b < 2; b++)
            p[np++] = (struct pb_problem){.prec = (m + b) % 2 ? PB_DOUBLE : PB_FLOAT,
                                          .s = {mats[m], bal[b], "default", (m + b) % 3 ? "one" : "each"}};
    const char *backends[] = {"ref", "openmp"};
    struct pb_context ctx;
    char *argv[] = {"test_comm"};
    pb__context_init(&ctx, 1, argv);
    struct pb_writer w = {.ops = &keep_ops, .ctx = &ctx, .bench = sd};
    struct pb_writer *writers[] = {&w};
    struct pb_run_config cfg = {.bench = sd, .problems = p, .n_problems = np, .backends = backends,
                                .n_backends = 2, .device_per_rank = true, .reps = 2, .warmup = 1, .seed = 3,
                                .verify = true, .ctx = &ctx, .writers = me == 0 ? writers : NULL,
                                .n_writers = me == 0 ? 1 : 0};
    memset(&kept, 0, sizeof kept);
    struct pb_run_summary sum;
    assert_int_equal(pb__run(&cfg, &sum), PB_OK);
    assert_int_equal(sum.ok, np * 2 * 2); /* x backends x (overlap, blocking) */
    for (size_t i = 0; i < kept.n; i++) {
        const struct pb_result *r = &kept.rows[i];
        if (r->status != PB_RESULT_OK)
            print_message("%s %s: %s\n", r->variant, r->label, r->reason);
        assert_int_equal(r->status, PB_RESULT_OK);
        assert_int_equal(r->rank, PB_RANK_ALL);
        double halo = r->extras[2], peers = r->extras[3];
        if (strstr(r->label, "comm-diag")) { /* nothing crosses */
            assert_near(halo, 0, 0);
            assert_near(peers, 0, 0);
        }
        if (ranks > 1 && strstr(r->label, "lap2d:9")) /* neighbours on both sides, at least one */
            assert_true(peers >= 1 && halo > 0);
    }
    if (me == 0) {
        unlink(diag);
        unlink(odd);
        unlink(wide);
    }
}

/* The partition counted without running (spmv-dist's, and the projection's):
 * lap2d:4 (a 4 x 4 grid, 64 non-zeros) in two blocks of 8 rows. */
static void test_partition_stats(void **state)
{
    (void)state;
    struct pb_coo m;
    int32_t *ptr = NULL;
    assert_int_equal(pb__sparse_generate("lap2d:4", 1, &m), PB_OK);
    assert_int_equal(pb__csr_offsets(&m, &ptr), PB_OK);
    struct pb_part_stats s[3];
    assert_int_equal(pb__partition_stats(ptr, m.cols, m.n_rows, m.n_cols, 2, true, s), PB_OK);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(s[r].rows, 8);
        assert_int_equal(s[r].nnz, 32);
        assert_int_equal(s[r].nnz_interior, 14); /* the outer grid row: corners 3, edges 4 */
        assert_int_equal(s[r].halo, 4);          /* the other half's first grid row */
        assert_int_equal(s[r].sent, 4);
        assert_int_equal(s[r].neighbours, 1);
    }
    /* three ranks by rows: 5, 5, 6 rows; the middle one has two neighbours */
    assert_int_equal(pb__partition_stats(ptr, m.cols, m.n_rows, m.n_cols, 3, false, s), PB_OK);
    assert_int_equal(s[0].rows + s[1].rows + s[2].rows, 16);
    assert_int_equal(s[0].nnz + s[1].nnz + s[2].nnz, 64);
    assert_int_equal(s[1].neighbours, 2);
    assert_int_equal(s[0].halo + s[1].halo + s[2].halo, s[0].sent + s[1].sent + s[2].sent);
    free(ptr);
    pb_coo_free(&m);
}

/* The 2D partition counted (parbench project --partition 2d) on lap2d:4 by
 * rows: chunks of 4 rows (one grid row each). On 2 x 2, rank (0,0) holds rows
 * 0-7 x columns 0-7 (28 entries) and needs x[4..7] from rank (1,0), whose x
 * chunk that is; the coupling of grid rows 1 and 2 (4 entries) sits on the
 * off-diagonal ranks; partial y of rows 4-7 goes from (0,0) to (0,1), of rows
 * 8-11 from (1,1) to (1,0); y chunks 1 and 2 swap places to become x. */
static void test_partition_stats_2d(void **state)
{
    (void)state;
    struct pb_coo m;
    int32_t *ptr = NULL;
    assert_int_equal(pb__sparse_generate("lap2d:4", 1, &m), PB_OK);
    assert_int_equal(pb__csr_offsets(&m, &ptr), PB_OK);
    int pr, pc;
    pb__partition_grid(8, &pr, &pc);
    assert_int_equal(pr * 10 + pc, 24);
    pb__partition_grid(7, &pr, &pc);
    assert_int_equal(pr * 10 + pc, 17);
    struct pb_part2d_stats s[4];
    assert_int_equal(pb__partition_stats_2d(ptr, m.cols, m.n_rows, m.n_cols, 2, 2, false, s), PB_OK);
    static const int64_t nnz[4] = {28, 4, 4, 28}, expand_recv[4] = {4, 0, 0, 4}, expand_sent[4] = {0, 4, 4, 0},
                         fold_sent[4] = {4, 0, 0, 4}, fold_recv[4] = {0, 4, 4, 0}, moved[4] = {0, 4, 4, 0};
    for (int r = 0; r < 4; r++) {
        assert_int_equal(s[r].nnz, nnz[r]);
        assert_int_equal(s[r].expand.recv, expand_recv[r]);
        assert_int_equal(s[r].expand.sent, expand_sent[r]);
        assert_int_equal(s[r].expand.from, expand_recv[r] ? 1 : 0);
        assert_int_equal(s[r].fold.sent, fold_sent[r]);
        assert_int_equal(s[r].fold.recv, fold_recv[r]);
        assert_int_equal(s[r].fold.to, fold_sent[r] ? 1 : 0);
        assert_int_equal(s[r].move.sent, moved[r]);
        assert_int_equal(s[r].move.recv, moved[r]);
    }
    /* 1 x 2 is a column partition: no expand, no move, each side folds its 4 coupling rows */
    assert_int_equal(pb__partition_stats_2d(ptr, m.cols, m.n_rows, m.n_cols, 1, 2, true, s), PB_OK);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(s[r].nnz, 32);
        assert_int_equal(s[r].expand.recv + s[r].move.recv, 0);
        assert_int_equal(s[r].fold.recv, 4);
        assert_int_equal(s[r].fold.from, 1);
    }
    assert_int_equal(pb__partition_stats_2d(ptr, m.cols, m.n_rows, m.n_cols, 0, 2, true, s), PB_ERR_INVALID);
    free(ptr);
    pb_coo_free(&m);
}

/* gemm-dist: SUMMA on the grid these ranks make (1x1, 1x2, 1x3, 2x2), on
 * shapes the grid does not divide, more ranks than rows (m = 2), k = 1, a
 * panel of 1 and one wider than k; float and double, ref and openmp. Every
 * row OK and close to the oracle; a fault planted on every rank fails each
 * row; ref has no vendor GEMM. */
static void test_gemm_dist(void **state)
{
    (void)state;
    const struct pb_bench *gd = pb__bench_find("gemm-dist");
    assert_non_null(gd);
    assert_true(gd->distributed);
    enum { M, N, K, PANEL };
    static const int64_t shapes[][4] = {{37, 29, 41, 8}, {2, 5, 7, 3}, {9, 11, 1, 4}, {13, 3, 17, 1},
                                        {6, 7, 50, 64}};
    enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };
    struct pb_problem p[2 * N_SHAPES];
    for (size_t i = 0; i < 2 * N_SHAPES; i++) {
        const int64_t *sh = shapes[i % N_SHAPES];
        p[i] = (struct pb_problem){.prec = i < N_SHAPES ? PB_DOUBLE : PB_FLOAT,
                                   .v = {[M] = sh[M], [N] = sh[N], [K] = sh[K], [PANEL] = sh[PANEL]}};
    }
    const char *backends[] = {"ref", "openmp"}, *variants[] = {"summa"};
    struct pb_context ctx;
    char *argv[] = {"test_comm"};
    pb__context_init(&ctx, 1, argv);
    struct pb_writer w = {.ops = &keep_ops, .ctx = &ctx, .bench = gd};
    struct pb_writer *writers[] = {&w};
    char grid[16];
    snprintf(grid, sizeof grid, " on %dx%d ", ranks == 4 ? 2 : 1, ranks == 4 ? 2 : ranks);
    for (int fault = 0; fault < 2; fault++) {
        struct pb_run_config cfg = {.bench = gd, .problems = p, .n_problems = 2 * N_SHAPES, .backends = backends,
                                    .n_backends = 2, .variants = variants, .n_variants = 1,
                                    .device_per_rank = true, .reps = 2, .warmup = 1, .seed = 11, .verify = true,
                                    .inject_fault = fault != 0, .ctx = &ctx,
                                    .writers = me == 0 ? writers : NULL, .n_writers = me == 0 ? 1 : 0};
        memset(&kept, 0, sizeof kept);
        struct pb_run_summary sum;
        assert_int_equal(pb__run(&cfg, &sum), PB_OK);
        assert_int_equal(fault ? sum.failed : sum.ok, 4 * N_SHAPES);
        assert_int_equal(sum.ok + sum.failed, 4 * N_SHAPES);
        for (size_t i = 0; i < kept.n; i++) {
            const struct pb_result *r = &kept.rows[i];
            assert_int_equal(r->rank, PB_RANK_ALL);
            assert_int_equal(r->status, fault ? PB_RESULT_FAILED : PB_RESULT_OK);
            assert_contains(r->label, grid);
            if (fault)
                continue;
            assert_true(r->check.err_max <= r->check.tol);
            assert_true(r->check.mode && strcmp(r->check.mode, "full") == 0); /* Freivalds: every size */
            /* whole-problem rates; compute_s (the products alone) and the exposed rest */
            double flop = 2.0 * (double)(r->problem.v[M] * r->problem.v[N] * r->problem.v[K]);
            assert_near(r->gflops, flop / r->stats.median * 1e-9, 1e-9 * r->gflops);
            /* tiny products timed alone may run slower than the whole: no split then (NaN) */
            assert_true(r->extras[0] >= 0);
            assert_true(isnan(r->extras[1]) || (r->extras[1] >= 0 && r->extras[1] <= r->stats.median));
        }
    }
    /* No vendor GEMM on ref: UNSUPPORTED on every rank, saying why. */
    const char *vendor[] = {"ref/summa-vendor"};
    struct pb_run_config cfg = {.bench = gd, .problems = p, .n_problems = 1, .backends = backends,
                                .n_backends = 1, .variants = vendor, .n_variants = 1, .device_per_rank = true,
                                .reps = 2, .warmup = 1, .seed = 11, .verify = true, .ctx = &ctx,
                                .writers = me == 0 ? writers : NULL, .n_writers = me == 0 ? 1 : 0};
    memset(&kept, 0, sizeof kept);
    struct pb_run_summary sum;
    assert_int_equal(pb__run(&cfg, &sum), PB_OK);
    assert_int_equal(sum.unsupported, 1);
    if (me == 0)
        assert_contains(kept.rows[0].reason, "no vendor GEMM");
}

/* ---- device paths: which one runs, agreed by every rank ------------------ */

/* A backend whose paths open or fail as the test says, counting opens and
 * closes; only the last rank may be told to fail. */
struct fake_paths {
    pb_status nccl, mpi; /* what open gives on the failing rank (PB_OK: opens) */
    int opened, closed;
};
static struct fake_paths fake;

static pb_status fake_open(pb_device *dev, pb_comm *c, enum pb_devcomm_path path, void **impl)
{
    (void)dev;
    pb_status st = path == PB_PATH_NCCL ? fake.nccl : fake.mpi;
    if (st != PB_OK && pb__comm_rank(c) == pb__comm_size(c) - 1)
        return pb__fail(st, "%s cannot run here", pb__devcomm_path_name(path));
    fake.opened++;
    *impl = &fake;
    return PB_OK;
}

static void fake_close(void *impl)
{
    if (impl)
        fake.closed++;
}

static const struct pb_devcomm_ops fake_ops = {fake_open, fake_close, NULL, NULL, NULL};

static void test_device_paths(void **state)
{
    (void)state;
    struct pb_backend with = {.name = "fake", .devcomm = &fake_ops}, without = {.name = "plain"};
    pb_device dev = {.backend = &with}, host = {.backend = &without};
    struct pb_devcomm *d = NULL;
    char why[200];

    /* auto: NCCL first; where it fails on one rank, no rank keeps it and MPI runs */
    fake = (struct fake_paths){.nccl = PB_ERR_UNSUPPORTED};
    assert_int_equal(pb__devcomm_open(&dev, comm, PB_PATH_AUTO, &d, why, sizeof why), PB_OK);
    assert_non_null(d);
    assert_int_equal(pb__devcomm_path(d), PB_PATH_MPI);
    assert_int_equal(fake.opened - fake.closed, 1); /* NCCL's opens, where they happened, closed again */
    pb__devcomm_close(d);
    assert_int_equal(fake.opened, fake.closed);

    /* auto with neither: staged, every rank saying why; a set-up error counts too */
    fake = (struct fake_paths){.nccl = PB_ERR_DEVICE, .mpi = PB_ERR_UNSUPPORTED};
    assert_int_equal(pb__devcomm_open(&dev, comm, PB_PATH_AUTO, &d, why, sizeof why), PB_OK);
    assert_null(d);
    assert_int_equal(pb__devcomm_path(d), PB_PATH_STAGED);
    assert_non_null(strstr(why, "nccl cannot run here"));
    assert_non_null(strstr(why, "mpi cannot run here"));
    assert_int_equal(fake.opened, fake.closed);

    /* a path asked for by name that fails on one rank fails on all */
    fake = (struct fake_paths){.nccl = PB_ERR_UNSUPPORTED};
    assert_int_equal(pb__devcomm_open(&dev, comm, PB_PATH_NCCL, &d, why, sizeof why), PB_ERR_UNSUPPORTED);
    assert_null(d);
    assert_non_null(strstr(pb_last_error(), "nccl cannot run here"));
    assert_int_equal(fake.opened, fake.closed);
    assert_int_equal(pb__devcomm_open(&dev, comm, PB_PATH_MPI, &d, why, sizeof why), PB_OK);
    assert_int_equal(pb__devcomm_path(d), PB_PATH_MPI);
    pb__devcomm_close(d);

    /* staged opens nothing; a backend without paths stages under auto and refuses them by name */
    fake = (struct fake_paths){0};
    assert_int_equal(pb__devcomm_open(&dev, comm, PB_PATH_STAGED, &d, why, sizeof why), PB_OK);
    assert_null(d);
    assert_int_equal(fake.opened, 0);
    assert_int_equal(pb__devcomm_open(&host, comm, PB_PATH_AUTO, &d, why, sizeof why), PB_OK);
    assert_null(d);
    assert_int_equal(pb__devcomm_open(&host, comm, PB_PATH_NCCL, &d, why, sizeof why), PB_ERR_UNSUPPORTED);
    assert_non_null(strstr(pb_last_error(), "the plain backend has no device path"));

    enum pb_devcomm_path p;
    assert_true(pb__devcomm_path_parse("nccl", &p) && p == PB_PATH_NCCL);
    assert_false(pb__devcomm_path_parse("NCCL", &p));
    assert_string_equal(pb__devcomm_describe(PB_PATH_STAGED), "staged through pinned host memory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_collectives),
        cmocka_unit_test(test_exchange),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_every_rank_at_once),
        cmocka_unit_test(test_distributed),
        cmocka_unit_test(test_collective_benches),
        cmocka_unit_test(test_spmv_dist),
        cmocka_unit_test(test_partition_stats),
        cmocka_unit_test(test_partition_stats_2d),
        cmocka_unit_test(test_gemm_dist),
        cmocka_unit_test(test_device_paths),
    };
    return pb_test_run(tests, group_setup, group_teardown);
}

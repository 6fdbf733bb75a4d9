/* parbench project spmv-dist: spmv-dist's scaling past the machines at hand,
 * on paper.
 *
 * The model (per rank r of the partition spmv-dist makes for P ranks, counted
 * exactly from the matrix without running it, sparse/partition.c):
 *   compute_r = step + nnz_r / rate          rate: non-zeros per second of one device
 *   comm_r    = neighbours_r * latency + max(halo_r, sent_r) * elt / bandwidth   (p2p halos)
 *             = (P - 1) * latency + (cols - own_cols_r) * elt / bandwidth      (x gathered whole)
 *   overlap:  T_r = max(ahead_r / rate, comm_r) + (nnz_r - ahead_r) / rate + fixed,
 *             ahead_r = nnz_interior_r, plus the boundary rows' own entries where
 *             they run ahead of the halo (split: one more entry per boundary row after it)
 *   blocking: T_r = comm_r + compute_r + fixed
 * --halo and --split choose as spmv-dist's do (auto: gathered where some
 * rank's halo is half the others' x or more; split where the boundary rows
 * hold half a rank's non-zeros or more: sparse.h).
 * fixed: what a product costs beside its kernels (launches, waits), the
 * one-rank row's median less its compute_s (0 where no such row is given).
 *   T(P) = max over r of T_r; speed-up T(1) / T(P); efficiency speed-up / P.
 * Communication "takes over" at the first P where the slowest rank's comm_r
 * exceeds its compute_r. rate, latency and bandwidth are given, or read from
 * result files (--from): rate from a one-rank spmv-dist row of the same matrix
 * (nnz / compute_s; where a multi-rank row of it was measured too, rate and
 * step, a cost per product, fitted through the compute_s of both: a rank's
 * products ran slower per entry than its share of one device's, 11% at 4
 * GPUs on lap3d:320), latency from the fastest two-rank pingpong row (its
 * one-way median: the fixed cost of a message), bandwidth from the largest
 * (bytes / median), or where no pingpong ran from allreduce rows (median; bus
 * bandwidth). --path picks the rows of one way of moving halos (NCCL's rows
 * for nccl, MPI's on device memory for mpi, MPI through host memory for
 * staged), so the link figures and the measured spmv-dist rows printed beside
 * the projection are those of the same path.
 * --partition 2d models a partition spmv-dist does not run (sparse.h's 2D
 * grid): comm_r = the sum over expand, fold and move of messages * latency +
 * max(received, sent) * elt / bandwidth; blocking T_r = comm_r + compute_r +
 * fixed, ideal T_r = max(comm_r, compute_r) + fixed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/devcomm.h"
#include "core/parse.h"
#include "io/mmio.h"
#include "report/cli_util.h"
#include "report/report.h"
#include "sparse/sparse.h"

static void project_help(FILE *f)
{
    fprintf(f, "usage: parbench project spmv-dist --matrix SPEC [options]\n\n"
               "Projects spmv-dist to rank counts beyond this machine: the partition spmv-dist\n"
               "would make for each count is counted exactly from the matrix (non-zeros, interior\n"
               "rows, halo entries and neighbours of every rank), then each rank's time is\n"
               "  compute = step + nnz / rate, comm = neighbours * latency + halo bytes / bandwidth\n"
               "  (x gathered whole: (ranks - 1) * latency + the others' x / bandwidth),\n"
               "  overlap: max(interior compute, comm) + boundary compute (split: the boundary rows'\n"
               "  own columns with the interior); blocking: comm + compute,\n"
               "each plus a fixed cost per product (a one-rank row's median less its compute_s),\n"
               "and the run's time is its slowest rank's. It says at which count communication\n"
               "takes over (the slowest rank's comm above its compute).\n\noptions:\n"
               "  --matrix SPEC           a Matrix Market file or a generator (lap3d:320, powerlaw:4M:8, ...)\n"
               "  --ranks LIST            rank counts (default 1:4096, doubling)\n"
               "  --balance nnz|rows      spmv-dist's --balance (default nnz); --from's rows are of it\n"
               "  --precision float|double element size of x; --from's rows are of it (default: theirs, double\n"
               "                          where they hold both; double without --from)\n"
               "  --backend NAME          --from's spmv-dist rows of this backend (default: the first row's, said\n"
               "                          where the files hold others)\n"
               "  --rate NZ_PER_S         non-zeros per second of one device's local product\n"
               "  --latency S             per message and neighbour\n"
               "  --bandwidth B_PER_S     per rank, for the halo\n"
               "  --from FILE...          result files to take rate, latency and bandwidth from (a one-rank\n"
               "                          spmv-dist row of this matrix; pingpong, else allreduce rows of two\n"
               "                          ranks), whose spmv-dist rows are also printed beside the projection;\n"
               "                          with a multi-rank row of the matrix too, rate and step (a cost per\n"
               "                          product, else 0) fitted through both rows' compute_s\n"
               "  --path staged|mpi|nccl  take the rows of this halo path only: spmv-dist rows whose reason\n"
               "                          names it, pingpong's and allreduce's mpi-staged, mpi or nccl variant\n"
               "                          (default: any MPI row, spmv-dist rows of any path)\n"
               "  --batch K               --from's spmv-dist rows run with --batch K (default 1)\n"
               "  --halo p2p|allgather|auto  spmv-dist's --halo (default auto: gathered where some rank\n"
               "                          needs half the others' x or more, as spmv-dist decides)\n"
               "  --split auto|off        spmv-dist's --split (default auto, as on GPUs; off for the\n"
               "                          synchronous ref and OpenMP backends, which never split)\n"
               "  --partition 1d|2d       1d: spmv-dist's rows (default); 2d: a grid of ranks (the most square\n"
               "                          pr x pc), not built in spmv-dist: x expanded down the grid's\n"
               "                          columns, partial y folded along its rows, y moved to where the next\n"
               "                          product's x lives; each step's time is messages * latency + entries\n"
               "                          * size / bandwidth (the larger of sent and received), and the table\n"
               "                          gives the steps after each other (blocking) and hidden behind the\n"
               "                          products (ideal: max of the two)\n"
               "  --seed N                of generated matrices (default 42, as parbench run)\n"
               "\nexit status: 0, 2 usage error (a missing rate, latency or bandwidth among them), 3 a file\n"
               "could not be read.\n");
}

struct calibration {
    double rate, latency, bandwidth, fixed;
    const char *rate_from, *latency_from, *bandwidth_from;
    /* from the one-rank row (its nnz and compute_s) and the most ranks'
     * measured row (its ranks and compute_s, the slowest rank's), to fit a
     * cost per product beside the non-zeros: compute = step + nnz / rate */
    double nnz_one, compute_one, compute_most, step;
    int ranks_most;
};

static double kv_num(const struct pb_rp_row *r, const char *key)
{
    const struct pb_rp_kv *kv = pb__rp_find(r, key);
    return kv ? kv->num : NAN;
}

/* Bytes of an allreduce row's message: its problem label ("4.0 KiB") parsed. */
static double row_bytes(const struct pb_rp_row *r)
{
    const struct pb_rp_kv *kv = pb__rp_find(r, "size");
    return kv ? kv->num : NAN;
}

/* Whether a pingpong or allreduce row moved its data the way `path` does:
 * its variant mpi-staged, mpi or nccl (NULL: any MPI row). */
static bool link_row_on_path(const struct pb_rp_row *r, const char *path)
{
    if (!path)
        return strncmp(r->variant, "mpi", 3) == 0;
    return strcmp(r->variant, strcmp(path, "staged") == 0 ? "mpi-staged" : path) == 0;
}

#define GATHERED "x gathered whole"

/* Whether a spmv-dist row moved its halos on `path` (NULL: any): the path
 * that ran, as its reason says ("halo staged through ...", "x gathered
 * whole through NCCL ..."), which auto chose. */
static bool dist_row_on_path(const struct pb_rp_row *r, const char *path)
{
    enum pb_devcomm_path p;
    if (!path || !pb__devcomm_path_parse(path, &p))
        return true;
    if (!r->reason)
        return false;
    const char *how = strncmp(r->reason, GATHERED, strlen(GATHERED)) == 0 ? r->reason + strlen(GATHERED)
                      : strncmp(r->reason, "halo", 4) == 0            ? r->reason + 4
                                                                       : "";
    if (strncmp(how, " (parts padded", 14) == 0) /* NCCL's layout of gathered x */
        how = strchr(how, ')') ? strchr(how, ')') + 1 : "";
    how += *how == ' ';
    const char *want = pb__devcomm_describe(p);
    return strncmp(how, want, strlen(want)) == 0 ||
           (p == PB_PATH_STAGED && strncmp(how, PB_DEVCOMM_STAGED_HOST, strlen(PB_DEVCOMM_STAGED_HOST)) == 0);
}

/* Latency and bandwidth from two-rank rows of `bench` on `path`: the fastest
 * message's median, the largest message's rate (pingpong: one way, the
 * halo's own pattern; allreduce: its bus bandwidth). */
static void from_two_ranks(const struct pb_rp_set *set, const char *bench, const char *path, struct calibration *c)
{
    double fastest = INFINITY, large = 0;
    bool pingpong = strcmp(bench, "pingpong") == 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        const struct pb_rp_row *r = &set->rows[i];
        if (!pb__rp_ok(r) || strcmp(r->bench, bench) != 0 || r->ranks != 2 || !link_row_on_path(r, path))
            continue;
        double bytes = row_bytes(r);
        if (r->median < fastest && (!c->latency_from || strcmp(c->latency_from, "option") != 0)) {
            fastest = r->median;
            c->latency = r->median;
            c->latency_from = pingpong ? "the fastest two-rank pingpong (one-way median)"
                                       : "the fastest two-rank allreduce (its median)";
        }
        if (bytes > large && (!c->bandwidth_from || strcmp(c->bandwidth_from, "option") != 0)) {
            large = bytes;
            c->bandwidth = pingpong ? bytes / r->median : kv_num(r, "busbw_gbps") * 1e9;
            c->bandwidth_from = pingpong ? "the largest two-rank pingpong (bytes / one-way median)"
                                         : "the largest two-rank allreduce (its bus bandwidth)";
        }
    }
}

/* What is projected: the matrix (its label), --balance, --precision (NULL:
 * not given, rows of any precision), --path. */
struct projected {
    const char *label, *balance, *precision, *path;
    const char *backend; /* of the spmv-dist rows taken (NULL: any) */
    const char *halo; /* p2p, allgather or auto */
    bool split;       /* --split auto */
    int64_t batch;    /* spmv-dist's --batch */
};

/* Whether a spmv-dist row ran what is projected: the same matrix, balance and
 * precision, its x moved as the model's at that count (gathered whole or not,
 * as its reason says) on the path; --split auto: a row not run with --split
 * off; --split off: a row whose boundary rows did not split (ref and OpenMP
 * rows never do, whatever they were asked). */
static bool dist_row_matches(const struct pb_rp_row *r, const struct projected *w, bool gathered)
{
    char by[32], batch[32];
    snprintf(by, sizeof by, " by %s", w->balance);
    snprintf(batch, sizeof batch, " batch %lld", (long long)w->batch);
    const char *at = strstr(r->problem, " batch ");
    if (w->batch == 1 ? at != NULL : !at || strcmp(at, batch) != 0) /* the label ends with it */
        return false;
    size_t n = strlen(w->label);
    return pb__rp_ok(r) && strcmp(r->bench, "spmv-dist") == 0 && dist_row_on_path(r, w->path) &&
           strncmp(r->problem, w->label, n) == 0 && strncmp(r->problem + n, by, strlen(by)) == 0 &&
           r->reason && (strncmp(r->reason, GATHERED, strlen(GATHERED)) == 0) == gathered &&
           (w->split ? !strstr(r->problem, " split off") : !strstr(r->reason, "own columns ahead")) &&
           (!w->precision || strcmp(r->precision, w->precision) == 0) &&
           (!w->backend || strcmp(r->backend, w->backend) == 0);
}

static void calibrate(const struct pb_rp_set *set, const struct projected *w, struct calibration *c)
{
    const char *path = w->path;
    for (size_t i = 0; i < set->n_rows; i++) {
        const struct pb_rp_row *r = &set->rows[i];
        if (r->ranks == 1 && dist_row_matches(r, w, false)) {
            double nnz = r->gflops * 1e9 * r->median / 2, compute = kv_num(r, "compute_s");
            if (isnan(c->rate) && compute > 0) {
                c->rate = nnz / compute;
                c->rate_from = "a one-rank spmv-dist row (nnz / compute_s)";
                c->fixed = fmax(r->median - compute, 0);
                c->nnz_one = nnz, c->compute_one = compute;
            }
        }
        /* the products alone do not depend on how x moved: any multi-rank row of the matrix on the path */
        double compute = kv_num(r, "compute_s");
        if (r->ranks > c->ranks_most && strcmp(r->rank, "all") == 0 &&
            (dist_row_matches(r, w, false) || dist_row_matches(r, w, true)) && compute > 0)
            c->ranks_most = r->ranks, c->compute_most = compute;
    }
    /* A halo exchange is point to point: pingpong where it was measured. */
    bool have_pingpong = false;
    for (size_t i = 0; i < set->n_rows && !have_pingpong; i++)
        have_pingpong = pb__rp_ok(&set->rows[i]) && strcmp(set->rows[i].bench, "pingpong") == 0 &&
                        set->rows[i].ranks == 2 && link_row_on_path(&set->rows[i], path);
    from_two_ranks(set, have_pingpong ? "pingpong" : "allreduce", path, c);
}

/* The measured median of spmv-dist `variant` at `ranks` for what is projected, or NAN. */
static double measured(const struct pb_rp_set *set, const struct projected *w, const char *variant, int ranks,
                       bool gathered)
{
    for (size_t i = 0; i < set->n_rows; i++) {
        const struct pb_rp_row *r = &set->rows[i];
        if (r->ranks == ranks && strcmp(r->rank, "all") == 0 && strcmp(r->variant, variant) == 0 &&
            dist_row_matches(r, w, gathered))
            return r->median;
    }
    return NAN;
}

/* Whether x travels whole at this count, as spmv-dist's --halo decides. */
static bool gathers(const struct pb_part_stats *s, int ranks, int64_t cols, const char *halo)
{
    if (ranks < 2 || strcmp(halo, "p2p") == 0)
        return false;
    double most = 0;
    for (int r = 0; r < ranks; r++) {
        double others = (double)(cols - s[r].own_cols);
        most = fmax(most, others > 0 ? (double)s[r].halo / others : 0);
    }
    return strcmp(halo, "allgather") == 0 || most >= PB_DIST_GATHER_FROM_SHARE;
}

/* Whether rank s's boundary rows run their own columns ahead of the halo (--split auto), as spmv-dist decides. */
static bool splits(const struct pb_part_stats *s, int ranks, bool split)
{
    return split && ranks > 1 &&
           pb__dist_split_pays(s->nnz, s->nnz - s->nnz_interior, s->boundary_rows, s->nnz_boundary_own);
}

static void model(const struct pb_part_stats *s, int ranks, int64_t cols, bool gathered, bool split,
                  const struct calibration *c, double elt, double *overlap, double *blocking, double *compute_max,
                  double *comm_max, const struct pb_part_stats **slowest)
{
    *overlap = *blocking = *compute_max = *comm_max = 0;
    *slowest = &s[0];
    for (int r = 0; r < ranks; r++) {
        bool early = splits(&s[r], ranks, split);
        /* split: the boundary rows' own entries run with the interior, one entry per row more after */
        double ahead = (double)(s[r].nnz_interior + (early ? s[r].nnz_boundary_own : 0)) / c->rate;
        double compute = (double)(s[r].nnz + (early ? s[r].boundary_rows : 0)) / c->rate + c->step;
        double words = gathered ? (double)(cols - s[r].own_cols) : (double)(s[r].halo > s[r].sent ? s[r].halo : s[r].sent);
        double comm = (gathered ? ranks - 1 : s[r].neighbours) * c->latency + words * elt / c->bandwidth;
        double t_over = fmax(ahead, comm) + (compute - ahead) + c->fixed, t_block = comm + compute + c->fixed;
        if (t_over > *overlap) {
            *overlap = t_over;
            *slowest = &s[r];
        }
        *blocking = fmax(*blocking, t_block);
        *compute_max = fmax(*compute_max, compute);
        *comm_max = fmax(*comm_max, comm);
    }
}

static double phase_time(const struct pb_part2d_phase *ph, const struct calibration *c, double elt)
{
    const int messages = ph->from > ph->to ? ph->from : ph->to;
    const int64_t words = ph->recv > ph->sent ? ph->recv : ph->sent;
    return messages * c->latency + (double)words * elt / c->bandwidth;
}

/* The 2D partition's time per rank: compute as 1D's, comm the three steps
 * (expand, fold, move) after each other; blocking adds them, ideal hides the
 * exchange behind the products entirely. */
static void model_2d(const struct pb_part2d_stats *s, int ranks, const struct calibration *c, double elt,
                     double *ideal, double *blocking, double *compute_max, double *comm_max)
{
    *ideal = *blocking = *compute_max = *comm_max = 0;
    for (int r = 0; r < ranks; r++) {
        double compute = (double)s[r].nnz / c->rate + c->step;
        double comm = ranks > 1 ? phase_time(&s[r].expand, c, elt) + phase_time(&s[r].fold, c, elt) +
                                      phase_time(&s[r].move, c, elt)
                                : 0;
        *ideal = fmax(*ideal, fmax(compute, comm) + c->fixed);
        *blocking = fmax(*blocking, compute + comm + c->fixed);
        *compute_max = fmax(*compute_max, compute);
        *comm_max = fmax(*comm_max, comm);
    }
}

/* One 2D row of the table: the grid, the largest share of non-zeros and of
 * vector entries received, the most messages a rank receives or sends. */
static int project_2d(const struct pb_coo *m, const int32_t *ptr, int p, bool by_nnz, const struct calibration *c,
                      double elt, double t1, int *takes_over)
{
    int pr, pc;
    pb__partition_grid(p, &pr, &pc);
    struct pb_part2d_stats *s = calloc((size_t)p, sizeof *s);
    pb_status st = s ? pb__partition_stats_2d(ptr, m->cols, m->n_rows, m->n_cols, pr, pc, by_nnz, s)
                     : pb__fail(PB_ERR_NOMEM, "out of memory");
    if (st != PB_OK) {
        free(s);
        return pb__cli_fail(st);
    }
    double ideal, block, compute, comm;
    model_2d(s, p, c, elt, &ideal, &block, &compute, &comm);
    int64_t max_nnz = 0, max_recv = 0;
    int max_msgs = 0;
    for (int r = 0; r < p; r++) {
        const struct pb_part2d_phase *ph[3] = {&s[r].expand, &s[r].fold, &s[r].move};
        int64_t recv = 0;
        int msgs = 0;
        for (int k = 0; k < 3; k++)
            recv += ph[k]->recv, msgs += ph[k]->from > ph[k]->to ? ph[k]->from : ph[k]->to;
        max_nnz = s[r].nnz > max_nnz ? s[r].nnz : max_nnz;
        max_recv = recv > max_recv ? recv : max_recv;
        max_msgs = msgs > max_msgs ? msgs : max_msgs;
    }
    free(s);
    if (!*takes_over && comm > compute)
        *takes_over = p;
    char grid[32], eff[2][32];
    snprintf(grid, sizeof grid, "%dx%d", pr, pc);
    const double t[2] = {ideal, block};
    for (int v = 0; v < 2; v++)
        snprintf(eff[v], sizeof eff[v], t[v] > 0 && isfinite(t1) ? "%.2f" : "-", t1 / t[v] / p);
    printf("%7d %7s %12lld %10lld %8d %11.4g %11.4g %12.4g %12.4g %10s %10s\n", p, grid, (long long)max_nnz,
           (long long)max_recv, max_msgs, compute, comm, ideal, block, eff[0], eff[1]);
    return PB_EXIT_OK;
}

/* Where a multi-rank row was measured, the rate and a cost per product
 * (launches, a kernel's tail) that make compute = step + nnz / rate pass
 * through both rows: the one-rank row's nnz and compute_s, and the slowest
 * rank's of the most ranks (its entries counted from the partition as the
 * model counts them). Kept as
 * measured on one rank where the two do not give a positive rate and step. */
static int fit_step(const struct pb_coo *m, const int32_t *ptr, bool by_nnz, bool split, struct calibration *c)
{
    int p = c->ranks_most;
    struct pb_part_stats *s = calloc((size_t)p, sizeof *s);
    pb_status st = s ? pb__partition_stats(ptr, m->cols, m->n_rows, m->n_cols, p, by_nnz, s)
                     : pb__fail(PB_ERR_NOMEM, "out of memory");
    if (st != PB_OK) {
        free(s);
        return pb__cli_fail(st);
    }
    int64_t most = 0;
    for (int r = 0; r < p; r++) { /* the entries the model gives a rank's products */
        int64_t n = s[r].nnz + (splits(&s[r], p, split) ? s[r].boundary_rows : 0);
        most = n > most ? n : most;
    }
    free(s);
    double rate = (c->nnz_one - (double)most) / (c->compute_one - c->compute_most);
    double step = c->compute_one - c->nnz_one / rate;
    if (isfinite(rate) && rate > 0 && step > 0) {
        c->rate = rate, c->step = step;
        c->rate_from = "a one-rank spmv-dist row and the most ranks' one, a line through their compute_s";
    }
    return PB_EXIT_OK;
}

int pb__cmd_project(int argc, char **argv)
{
    if (argc < 2 || pb__cli_is_help(argv[1])) {
        project_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? PB_EXIT_USAGE : PB_EXIT_OK;
    }
    if (strcmp(argv[1], "spmv-dist") != 0)
        return pb__cli_die(PB_EXIT_USAGE, "project: only spmv-dist has a model (got '%s')", argv[1]);
    const char *matrix = NULL, *ranks_text = "1:4096", *balance = "nnz", *precision = "double", *backend = NULL;
    bool precision_given = false;
    const char *rate_text = NULL, *latency_text = NULL, *bandwidth_text = NULL, *seed_text = "42", *path = NULL;
    const char *halo = "auto", *split = "auto", *batch_text = "1", *partition = "1d";
    char **from = malloc((size_t)argc * sizeof *from);
    int n_from = 0, rc = PB_EXIT_OK;
    if (!from)
        return pb__cli_die(PB_EXIT_ERROR, "%s", "out of memory");
    for (int i = 2; i < argc && rc == PB_EXIT_OK; i++) {
        const char *v;
        if (pb__cli_is_help(argv[i])) {
            free(from);
            project_help(stdout);
            return PB_EXIT_OK;
        }
        if (pb__cli_value(argc, argv, &i, "matrix", 0, &v, &rc))
            matrix = v;
        else if (pb__cli_value(argc, argv, &i, "ranks", 0, &v, &rc))
            ranks_text = v;
        else if (pb__cli_value(argc, argv, &i, "balance", 0, &v, &rc))
            balance = v;
        else if (pb__cli_value(argc, argv, &i, "precision", 0, &v, &rc))
            precision = v, precision_given = true;
        else if (pb__cli_value(argc, argv, &i, "backend", 0, &v, &rc))
            backend = v;
        else if (pb__cli_value(argc, argv, &i, "rate", 0, &v, &rc))
            rate_text = v;
        else if (pb__cli_value(argc, argv, &i, "latency", 0, &v, &rc))
            latency_text = v;
        else if (pb__cli_value(argc, argv, &i, "bandwidth", 0, &v, &rc))
            bandwidth_text = v;
        else if (pb__cli_value(argc, argv, &i, "seed", 0, &v, &rc))
            seed_text = v;
        else if (pb__cli_value(argc, argv, &i, "path", 0, &v, &rc))
            path = v;
        else if (pb__cli_value(argc, argv, &i, "halo", 0, &v, &rc))
            halo = v;
        else if (pb__cli_value(argc, argv, &i, "split", 0, &v, &rc))
            split = v;
        else if (pb__cli_value(argc, argv, &i, "batch", 0, &v, &rc))
            batch_text = v;
        else if (pb__cli_value(argc, argv, &i, "partition", 0, &v, &rc))
            partition = v;
        else if (rc == PB_EXIT_OK && strcmp(argv[i], "--from") == 0)
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                from[n_from++] = argv[++i];
        else if (rc == PB_EXIT_OK)
            rc = pb__cli_die(PB_EXIT_USAGE, "unknown option '%s' for project (see parbench project --help)", argv[i]);
    }
    int64_t *ranks = NULL, seed = 42, batch = 1;
    size_t n_ranks = 0;
    struct calibration c = {.rate = NAN, .latency = NAN, .bandwidth = NAN};
    double elt = strcmp(precision, "float") == 0 ? 4 : 8;
    if (rc == PB_EXIT_OK && !matrix)
        rc = pb__cli_die(PB_EXIT_USAGE, "%s", "project: --matrix is needed");
    if (rc == PB_EXIT_OK && strcmp(balance, "nnz") != 0 && strcmp(balance, "rows") != 0)
        rc = pb__cli_die(PB_EXIT_USAGE, "project: --balance '%s' is neither nnz nor rows", balance);
    enum pb_devcomm_path parsed;
    if (rc == PB_EXIT_OK && path && (!pb__devcomm_path_parse(path, &parsed) || parsed == PB_PATH_AUTO))
        rc = pb__cli_die(PB_EXIT_USAGE, "project: --path '%s' is none of staged, mpi or nccl", path);
    if (rc == PB_EXIT_OK && strcmp(halo, "p2p") != 0 && strcmp(halo, "allgather") != 0 && strcmp(halo, "auto") != 0)
        rc = pb__cli_die(PB_EXIT_USAGE, "project: --halo '%s' is none of p2p, allgather or auto", halo);
    if (rc == PB_EXIT_OK && strcmp(split, "auto") != 0 && strcmp(split, "off") != 0)
        rc = pb__cli_die(PB_EXIT_USAGE, "project: --split '%s' is neither auto nor off", split);
    if (rc == PB_EXIT_OK && strcmp(partition, "1d") != 0 && strcmp(partition, "2d") != 0)
        rc = pb__cli_die(PB_EXIT_USAGE, "project: --partition '%s' is neither 1d nor 2d", partition);
    const bool two_d = strcmp(partition, "2d") == 0;
    if (rc == PB_EXIT_OK && strcmp(precision, "float") != 0 && strcmp(precision, "double") != 0)
        rc = pb__cli_die(PB_EXIT_USAGE, "project: --precision '%s' is neither float nor double", precision);
    pb_status st = PB_OK;
    if (rc == PB_EXIT_OK && (st = pb__parse_int_list(ranks_text, "--ranks", &ranks, &n_ranks)) == PB_OK)
        st = pb__parse_int(seed_text, "--seed", &seed);
    if (rc == PB_EXIT_OK && st == PB_OK)
        st = pb__parse_int(batch_text, "--batch", &batch);
    if (rc == PB_EXIT_OK && st == PB_OK && batch < 1)
        rc = pb__cli_die(PB_EXIT_USAGE, "project: --batch %lld is not a positive count", (long long)batch);
    if (rc == PB_EXIT_OK && st == PB_OK && batch != 1 && !n_from)
        rc = pb__cli_die(PB_EXIT_USAGE, "project: --batch chooses --from's spmv-dist rows; without --from it has "
                         "nothing to choose");
    const struct {
        const char *text;
        double *out;
        const char **from;
    } given[] = {{rate_text, &c.rate, &c.rate_from}, {latency_text, &c.latency, &c.latency_from},
                 {bandwidth_text, &c.bandwidth, &c.bandwidth_from}};
    for (size_t g = 0; rc == PB_EXIT_OK && st == PB_OK && g < 3; g++) {
        if (!given[g].text)
            continue;
        char *end;
        *given[g].out = strtod(given[g].text, &end);
        if (*end || !(*given[g].out > 0) || !isfinite(*given[g].out))
            rc = pb__cli_die(PB_EXIT_USAGE, "project: '%s' is not a positive number", given[g].text);
        *given[g].from = "option";
    }
    for (size_t i = 0; rc == PB_EXIT_OK && st == PB_OK && i < n_ranks; i++)
        if (ranks[i] < 1 || ranks[i] > 1 << 20)
            rc = pb__cli_die(PB_EXIT_USAGE, "project: --ranks %lld is not between 1 and 2^20", (long long)ranks[i]);
    if (rc == PB_EXIT_OK && st != PB_OK) /* --ranks, --seed or --batch that is no number */
        rc = pb__cli_die(PB_EXIT_USAGE, "%s", pb_last_error());
    struct pb_rp_set set = {0};
    if (rc == PB_EXIT_OK && n_from)
        rc = pb__rp_load_all(&set, from, n_from, NULL);
    free(from);
    char label[64];
    if (pb__sparse_is_generated(matrix ? matrix : ""))
        snprintf(label, sizeof label, "%s", matrix);
    else if (matrix)
        pb__matinfo_name(matrix, label, sizeof label);
    struct projected want = {label, balance, NULL, path, NULL, halo, strcmp(split, "auto") == 0, batch};
    if (precision_given) {
        want.precision = precision;
    } else { /* the --from rows' precision; of both, the default's, said */
        bool seen[2] = {false, false};
        for (size_t i = 0; i < set.n_rows; i++)
            for (int g = 0; g < 2; g++)
                if (dist_row_matches(&set.rows[i], &want, g == 1))
                    seen[strcmp(set.rows[i].precision, "float") == 0] = true;
        if (seen[1] && !seen[0])
            precision = "float";
        else if (seen[0] && seen[1])
            fprintf(stderr, "parbench: project: --from has rows in float and double: double's taken "
                            "(--precision float for the others)\n");
        want.precision = precision;
        elt = strcmp(precision, "float") == 0 ? 4 : 8;
    }
    /* One backend's rows: the rate of one and the step of another fit nothing. */
    const char *other = NULL;
    bool backend_given = backend != NULL;
    for (size_t i = 0; !backend_given && i < set.n_rows; i++)
        for (int g = 0; g < 2; g++)
            if (dist_row_matches(&set.rows[i], &want, g == 1)) { /* want.backend still NULL: any */
                if (!backend)
                    backend = set.rows[i].backend;
                else if (strcmp(set.rows[i].backend, backend) != 0)
                    other = set.rows[i].backend;
            }
    want.backend = backend;
    if (other)
        fprintf(stderr, "parbench: project: --from has spmv-dist rows of %s and %s: %s's taken (--backend chooses)\n",
                want.backend, other, want.backend);
    if (rc == PB_EXIT_OK) {
        calibrate(&set, &want, &c);
        /* The ones missing, in words: "no rate, latency or bandwidth", "no latency". */
        const char *missing[3];
        int n = 0;
        if (isnan(c.rate))
            missing[n++] = "rate";
        if (isnan(c.latency))
            missing[n++] = "latency";
        if (isnan(c.bandwidth))
            missing[n++] = "bandwidth";
        /* The rate needs a one-rank row of exactly what is projected: say what that was. */
        char wanted[256] = "";
        if (n_from && isnan(c.rate))
            snprintf(wanted, sizeof wanted, " (the rate: a one-rank spmv-dist row of %s by %s, %s%s%s%s%s, --batch %lld)",
                     label, balance, want.precision ? want.precision : "any precision", path ? ", via " : "",
                     path ? path : "", want.backend ? ", backend " : "", want.backend ? want.backend : "",
                     (long long)batch);
        if (n > 0)
            rc = pb__cli_die(PB_EXIT_USAGE, "project: no %s%s%s%s%s: give --rate, --latency, --bandwidth or --from "
                             "files that have them%s", missing[0], n == 3 ? ", " : n == 2 ? " or " : "",
                             n > 1 ? missing[1] : "", n == 3 ? " or " : "", n == 3 ? missing[2] : "", wanted);
    }
    struct pb_coo m;
    memset(&m, 0, sizeof m);
    int32_t *ptr = NULL;
    if (rc == PB_EXIT_OK) {
        st = pb__sparse_load(matrix, (uint64_t)seed, true, &m);
        if (st == PB_OK)
            st = pb__csr_offsets(&m, &ptr);
        if (st != PB_OK && pb__sparse_is_generated(matrix) && st != PB_ERR_NOMEM) /* lap3d:abc: a usage error */
            rc = pb__cli_die(PB_EXIT_USAGE, "%s", pb_last_error());
        else if (st != PB_OK)
            rc = pb__cli_fail(st);
    }
    if (rc == PB_EXIT_OK && c.ranks_most > 1 && c.compute_one > 0)
        rc = fit_step(&m, ptr, strcmp(balance, "nnz") == 0, want.split, &c);
    if (rc == PB_EXIT_OK) {
        printf("# spmv-dist projected for %s by %s (%d x %d, %zu non-zeros, %s)%s%s, --partition %s --halo %s "
               "--split %s --batch %lld\n",
               label, balance, (int)m.n_rows, (int)m.n_cols, m.nnz, precision, path ? ", halos via " : "",
               path ? path : "", partition, halo, split, (long long)batch);
        printf("# rate %.4g G non-zeros/s (%s), latency %.4g us (%s), bandwidth %.4g GB/s (%s)\n", c.rate * 1e-9,
               c.rate_from, c.latency * 1e6, c.latency_from, c.bandwidth * 1e-9, c.bandwidth_from);
        if (c.fixed > 0)
            printf("# fixed cost per product %.4g us (the one-rank row's median less its compute_s)\n", c.fixed * 1e6);
        if (c.step > 0)
            printf("# products: %.4g us + nnz / rate (the one-rank row's and the %d-rank row's compute_s: a rank's "
                   "products cost more than its share of one device's)\n",
                   c.step * 1e6, c.ranks_most);
        if (two_d)
            printf("# 2d: a partition spmv-dist does not run; max recv: the vector entries a rank receives in the "
                   "three steps, max msgs: the messages it receives or sends in them\n"
                   "%7s %7s %12s %10s %8s %11s %11s %12s %12s %10s %10s\n",
                   "ranks", "grid", "max nnz", "max recv", "max msgs", "compute s", "comm s", "ideal s", "blocking s",
                   "eff. ideal", "eff. blk");
        else
            printf("%7s %12s %10s %8s %7s %11s %11s %12s %12s %10s %10s %12s %12s\n", "ranks", "max nnz",
                   "max halo", "max nbrs", "x", "compute s", "comm s", "overlap s", "blocking s", "speed-up",
                   "efficiency", "meas. ovl s", "meas. blk s");
    }
    double t1 = c.rate > 0 ? (double)m.nnz / c.rate + c.step + c.fixed : NAN; /* one rank: no exchange */
    int takes_over = 0;
    for (size_t i = 0; rc == PB_EXIT_OK && i < n_ranks; i++) {
        int p = (int)ranks[i];
        if (two_d) {
            rc = project_2d(&m, ptr, p, strcmp(balance, "nnz") == 0, &c, elt, t1, &takes_over);
            continue;
        }
        struct pb_part_stats *s = calloc((size_t)p, sizeof *s);
        st = s ? pb__partition_stats(ptr, m.cols, m.n_rows, m.n_cols, p, strcmp(balance, "nnz") == 0, s)
               : pb__fail(PB_ERR_NOMEM, "out of memory");
        if (st != PB_OK) {
            free(s);
            rc = pb__cli_fail(st);
            break;
        }
        double over, block, compute, comm;
        const struct pb_part_stats *slow;
        bool gathered = gathers(s, p, m.n_cols, halo);
        model(s, p, m.n_cols, gathered, want.split, &c, elt, &over, &block, &compute, &comm, &slow);
        int64_t max_nnz = 0, max_halo = 0;
        int max_nb = 0;
        for (int r = 0; r < p; r++) {
            max_nnz = s[r].nnz > max_nnz ? s[r].nnz : max_nnz;
            max_halo = s[r].halo > max_halo ? s[r].halo : max_halo;
            max_nb = s[r].neighbours > max_nb ? s[r].neighbours : max_nb;
        }
        if (!takes_over && comm > compute)
            takes_over = p;
        double speedup = over > 0 ? t1 / over : NAN; /* no non-zeros: nothing to speed up */
        char meas[2][32], sp[32] = "-", eff[32] = "-";
        for (int v = 0; v < 2; v++) {
            double t = measured(&set, &want, v ? "blocking" : "overlap", p, gathered);
            snprintf(meas[v], sizeof meas[v], isnan(t) ? "-" : "%.4g", t);
        }
        if (isfinite(speedup)) {
            snprintf(sp, sizeof sp, "%.3gx", speedup);
            snprintf(eff, sizeof eff, "%.2f", speedup / p);
        }
        printf("%7d %12lld %10lld %8d %7s %11.4g %11.4g %12.4g %12.4g %10s %10s %12s %12s\n", p, (long long)max_nnz,
               (long long)max_halo, max_nb, gathered ? "whole" : "halo", compute, comm, over, block, sp, eff, meas[0],
               meas[1]);
        free(s);
    }
    if (rc == PB_EXIT_OK) {
        if (takes_over)
            printf("# communication takes over at %d ranks (the slowest rank's exchange outlasts its product)\n",
                   takes_over);
        else
            printf("# communication stays below computation up to %lld ranks\n", (long long)ranks[n_ranks - 1]);
    }
    pb_coo_free(&m);
    free(ptr);
    free(ranks);
    pb__rp_free(&set);
    return rc;
}

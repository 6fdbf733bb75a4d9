/* p2p: copies between two GPUs of one node, every ordered pair (src, dst),
 * like nvbandwidth and CUDA's p2pBandwidthLatencyTest: copy engines and copy
 * kernels, one direction and both at once, at a large size (bandwidth) and a
 * small one (latency: many copies back to back, the time of one).
 *
 * The runner opens one device per backend; this benchmark opens the pair's
 * two GPUs itself (pb_device_open on the runner device's backend) and hands
 * both to the backend's variants (struct pb_p2p_args), which time themselves
 * (run_seconds). Only backends with p2p variants (cuda) have rows.
 *
 * Every copy is verified: the sources hold a seeded byte pattern (one per
 * direction), the destinations are poisoned before each run and compared
 * byte for byte after, a chunk at a time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "core/core.h"
#include "core/kernel_data.h"
#include "core/rng.h"
#include "parbench/pb_kernels.h"

enum { P_SRC, P_DST, P_SIZE, P_COPIES };

static const struct pb_param_def p2p_params[] = {
    [P_SRC] = {"src", "source GPUs (CUDA device indices; default every GPU)", NULL},
    [P_DST] = {"dst", "destination GPUs (default every GPU); every pair with src != dst is a problem", NULL},
    [P_SIZE] = {"size", "bytes per copy, k/M/G suffixes (the large size: bandwidth, the small: latency)", "4,256M"},
    [P_COPIES] = {"copies", "copies back to back per direction in each repetition, 1 to 256 "
                            "(default 100 below 1M, else 1)",
                  NULL},
};

#define MAX_COPIES 256 /* all queued behind the start gate at once */
#define CHUNK ((size_t)16 << 20) /* bytes made, read back and compared at a time; a multiple of 8 */

struct p2p_state {
    struct pb_p2p_args args;
    struct pb_p2p_result result;
    pb_device *gpu[2];
    pb_buf *src[2], *dst[2];
    size_t size;
    unsigned char *pattern, *readback; /* min(size, CHUNK) bytes each */
};

static const char *const p2p_extra_names[] = {"latency_us", "peer"};

#define MAX_GPUS 1024

/* The GPUs a list names, or every GPU of the cuda backend when not given.
 * Where there are fewer than two, the first pair (0, 1) stands in, or both
 * of its GPUs when the other list was given: its rows say why they SKIP. */
static pb_status gpu_list(const struct pb_param_lists *l, int which, int64_t *out, size_t *n)
{
    if (l->count[which]) {
        if (l->count[which] > MAX_GPUS)
            return pb__fail(PB_ERR_INVALID, "--%s: more than %d GPUs", p2p_params[which].name, MAX_GPUS);
        for (size_t i = 0; i < l->count[which]; i++) {
            out[i] = l->values[which][i];
            if (out[i] < 0 || out[i] >= MAX_GPUS)
                return pb__fail(PB_ERR_INVALID, "--%s %lld: a GPU index from 0 to %d", p2p_params[which].name,
                                (long long)out[i], MAX_GPUS - 1);
        }
        *n = l->count[which];
        return PB_OK;
    }
    const pb_backend *cuda = pb_backend_find("cuda");
    int count = cuda ? pb_backend_device_count(cuda) : 0;
    if (count < 2) {
        bool other_given = l->count[which == P_SRC ? P_DST : P_SRC] > 0;
        *n = 0;
        if (other_given || which == P_SRC)
            out[(*n)++] = 0;
        if (other_given || which == P_DST)
            out[(*n)++] = 1;
        return PB_OK;
    }
    count = count < MAX_GPUS ? count : MAX_GPUS;
    for (int g = 0; g < count; g++)
        out[g] = g;
    *n = (size_t)count;
    return PB_OK;
}

static pb_status p2p_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                          size_t max, size_t *n_out)
{
    int64_t srcs[MAX_GPUS], dsts[MAX_GPUS];
    size_t n_src, n_dst, count = 0;
    pb_status st = gpu_list(l, P_SRC, srcs, &n_src);
    if (st == PB_OK)
        st = gpu_list(l, P_DST, dsts, &n_dst);
    if (st != PB_OK)
        return st;
    for (size_t c = 0; c < l->count[P_COPIES]; c++)
        if (l->values[P_COPIES][c] < 1 || l->values[P_COPIES][c] > MAX_COPIES)
            return pb__fail(PB_ERR_INVALID, "--copies must be between 1 and %d (got %lld)", MAX_COPIES,
                            (long long)l->values[P_COPIES][c]);
    for (size_t i = 0; i < l->count[P_SIZE]; i++) {
        int64_t size = l->values[P_SIZE][i];
        if (size < 1 || size > ((int64_t)1 << 40))
            return pb__fail(PB_ERR_INVALID, "--size %lld: between 1 byte and 1 TiB", (long long)size);
        size_t n_copies = l->count[P_COPIES] ? l->count[P_COPIES] : 1;
        for (size_t c = 0; c < n_copies; c++) {
            int64_t copies = l->count[P_COPIES] ? l->values[P_COPIES][c] : size < (1 << 20) ? 100 : 1;
            for (size_t si = 0; si < n_src; si++)
                for (size_t di = 0; di < n_dst; di++) {
                    if (srcs[si] == dsts[di])
                        continue;
                    if (count >= max)
                        return pb__fail(PB_ERR_INVALID, "p2p: more than %zu problems", max);
                    out[count++] = (struct pb_problem){
                        .prec = prec,
                        .v = {[P_SRC] = srcs[si], [P_DST] = dsts[di], [P_SIZE] = size, [P_COPIES] = copies}};
                }
        }
    }
    if (count == 0)
        return pb__fail(PB_ERR_INVALID,
                        "--src and --dst name only GPU %lld: p2p copies between two GPUs "
                        "(a copy within one is bandwidth's d2d)",
                        (long long)srcs[0]);
    *n_out = count;
    return PB_OK;
}

static void p2p_describe(const struct pb_problem *p, char *buf, size_t len)
{
    char size[32];
    pb__format_bytes((double)p->v[P_SIZE], size, sizeof size);
    if (p->v[P_COPIES] > 1)
        snprintf(buf, len, "%s x%lld %lld->%lld", size, (long long)p->v[P_COPIES], (long long)p->v[P_SRC],
                 (long long)p->v[P_DST]);
    else
        snprintf(buf, len, "%s %lld->%lld", size, (long long)p->v[P_SRC], (long long)p->v[P_DST]);
}

/* Bytes that crossed between the GPUs: both directions for the -bidir ones. */
static double p2p_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    return (double)p->v[P_SIZE] * (double)p->v[P_COPIES] * pb__p2p_directions(v);
}

static pb_status p2p_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    (void)p, (void)seed;
    *out = NULL; /* each binding makes its patterns on the GPUs */
    return PB_OK;
}

static void p2p_release(void *host) { (void)host; }

static void p2p_unbind(void *state)
{
    struct p2p_state *s = state;
    if (!s)
        return;
    for (int l = 0; l < 2; l++) {
        pb_buf_free(s->src[l]);
        pb_buf_free(s->dst[l]);
        pb_stream_destroy(s->args.stream[l]);
    }
    pb_buf_free(s->args.gate);
    for (int g = 0; g < 2; g++)
        pb_device_close(s->gpu[g]);
    pb__host_free(s->pattern);
    pb__host_free(s->readback);
    free(s);
}

/* Direction l's pattern, CHUNK bytes at a time from the start: the same
 * bytes whenever it is made again from a fresh generator. */
static void pattern_start(struct pb_rng *rng, const struct p2p_state *s, int l)
{
    pb__rng_init(rng, (uint64_t)s->size, 11 + (uint64_t)l);
}

static void pattern_next(struct pb_rng *rng, unsigned char *out, size_t len)
{
    for (size_t i = 0; i < len; i += 8) {
        uint64_t x = pb__rng_next(rng);
        memcpy(out + i, &x, len - i < 8 ? len - i : 8);
    }
}

static pb_status p2p_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                          void **state, const void **args)
{
    (void)host;
    *state = NULL;
    const pb_backend *backend = pb_device_backend(dev);
    int count = pb_backend_device_count(backend);
    if (count < 2)
        return pb__fail(PB_ERR_UNAVAILABLE, "p2p needs two GPUs: this machine has %d", count);
    for (int w = P_SRC; w <= P_DST; w++)
        if (p->v[w] >= count)
            return pb__fail(PB_ERR_UNAVAILABLE, "no GPU %lld: this machine has %d (0 to %d)", (long long)p->v[w],
                            count, count - 1);
    struct p2p_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "p2p: out of host memory");
    s->size = (size_t)p->v[P_SIZE];
    size_t chunk = s->size < CHUNK ? s->size : CHUNK;
    int dirs = pb__p2p_directions(v);
    pb_status st = pb_device_open(backend, (int)p->v[P_SRC], &s->gpu[0]);
    if (st == PB_OK)
        st = pb_device_open(backend, (int)p->v[P_DST], &s->gpu[1]);
    if (st == PB_OK)
        st = pb__host_alloc(chunk, "the copy pattern", (void **)&s->pattern);
    if (st == PB_OK)
        st = pb__host_alloc(chunk, "the copy check", (void **)&s->readback);
    /* Direction l goes from gpu[l] to gpu[1 - l]. */
    for (int l = 0; l < dirs && st == PB_OK; l++) {
        st = pb_buf_alloc(s->gpu[l], PB_MEM_DEVICE, s->size, &s->src[l]);
        if (st == PB_OK)
            st = pb_buf_alloc(s->gpu[1 - l], PB_MEM_DEVICE, s->size, &s->dst[l]);
        struct pb_rng rng;
        pattern_start(&rng, s, l);
        for (size_t off = 0; off < s->size && st == PB_OK; off += chunk) {
            size_t len = s->size - off < chunk ? s->size - off : chunk;
            pattern_next(&rng, s->pattern, len);
            st = pb_buf_write(s->src[l], off, s->pattern, len);
        }
    }
    for (int g = 0; g < 2 && st == PB_OK; g++)
        st = pb_stream_create(s->gpu[g], &s->args.stream[g]);
    if (st == PB_OK)
        st = pb_buf_alloc(s->gpu[0], PB_MEM_PINNED, 2 * sizeof(int), &s->args.gate);
    if (st != PB_OK) {
        p2p_unbind(s);
        return st;
    }
    struct pb_p2p_args *a = &s->args;
    for (int l = 0; l < 2; l++) {
        a->dev[l] = s->gpu[l];
        a->src[l] = s->src[l];
        a->dst[l] = s->dst[l];
    }
    a->directions = dirs;
    a->bytes = s->size;
    a->copies = (size_t)p->v[P_COPIES];
    a->result = &s->result;
    s->result.seconds = NAN;
    s->result.peer = -1;
    *state = s;
    *args = a;
    return PB_OK;
}

/* Both GPUs finish poisoning before the copies start (the runner waits only
 * for its own device). */
static pb_status p2p_poison(void *state)
{
    struct p2p_state *s = state;
    pb_status st = PB_OK;
    for (int l = 0; l < s->args.directions && st == PB_OK; l++)
        st = pb_buf_fill_bytes(s->dst[l], 0xFF);
    for (int g = 0; g < 2 && st == PB_OK; g++)
        st = pb_device_sync(s->gpu[g]);
    return st;
}

static pb_status p2p_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    (void)host;
    struct p2p_state *s = state;
    size_t chunk = s->size < CHUNK ? s->size : CHUNK;
    size_t bad = 0, total = 0, first_bad = 0;
    int first_dir = -1;
    for (int l = 0; l < s->args.directions; l++) {
        struct pb_rng rng;
        pattern_start(&rng, s, l);
        for (size_t off = 0; off < s->size; off += chunk) {
            size_t len = s->size - off < chunk ? s->size - off : chunk;
            pattern_next(&rng, s->pattern, len);
            pb_status st = pb_buf_read(s->dst[l], off, s->readback, len);
            if (st != PB_OK)
                return st;
            if (corrupt && l == 0 && off == 0)
                s->readback[len / 2] ^= 0x5A;
            if (memcmp(s->readback, s->pattern, len) == 0)
                continue; /* the usual case, at memcmp's speed: bytes are counted only where they differ */
            for (size_t b = 0; b < len; b++)
                if (s->readback[b] != s->pattern[b]) {
                    if (first_dir < 0)
                        first_dir = l, first_bad = off + b;
                    bad++;
                }
        }
        total += s->size;
    }
    pb__check_begin(out, 0, "full");
    out->checked = total;
    out->err_norm = out->err_max = total ? (double)bad / (double)total : 0;
    out->pass = bad == 0;
    if (!out->pass) {
        int from = first_dir == 0 ? s->gpu[0]->index : s->gpu[1]->index;
        int to = first_dir == 0 ? s->gpu[1]->index : s->gpu[0]->index;
        snprintf(out->detail, sizeof out->detail, "%zu of %zu bytes differ, the first at byte %zu of %d->%d", bad,
                 total, first_bad, from, to);
    }
    return PB_OK;
}

static double p2p_run_seconds(void *state) { return ((struct p2p_state *)state)->result.seconds; }

/* latency_us: the median time of one copy (of each direction at once for
 * the -bidir variants); peer: 1 = the GPUs reached each other directly,
 * 0 = the driver staged the copies through host memory. */
static void p2p_extras(void *state, const struct pb_stats *time, const struct pb_ceiling *ceiling, double *out)
{
    (void)ceiling;
    struct p2p_state *s = state;
    out[0] = time->median / (double)s->args.copies * 1e6;
    out[1] = s->result.peer < 0 ? NAN : s->result.peer;
}

const struct pb_bench pb__bench_p2p = {
    .name = "p2p",
    .roof = pb__roof_none, /* no peer-link or network ceiling is measured */
    .summary = "copies between every ordered pair of GPUs of this node: bandwidth and latency matrices",
    .notes = "\nEach row is one ordered pair: columns src and dst (CUDA device indices), so a pivot of\n"
             "src x dst over one variant and size is a matrix. GB/s at the large --size is the\n"
             "bandwidth matrix (-bidir variants count both directions); latency_us at the small one\n"
             "is the latency matrix (the median time of one of --copies copies queued back to back).\n"
             "peer = 1: the GPUs reached each other's memory directly; 0: the driver staged the\n"
             "copy through host memory (the ce variants; the sm ones are UNSUPPORTED without peer\n"
             "access). Copies are held back until all are queued, so issuing them is not timed.\n"
             "Needs two GPUs: with fewer, every row is SKIP with the reason.",
    .flop_model = "-",
    .byte_model = "size x copies (x2 for -bidir)",
    .typeless = true,
    .params = p2p_params,
    .n_params = sizeof p2p_params / sizeof p2p_params[0],
    .extra_names = p2p_extra_names,
    .n_extras = sizeof p2p_extra_names / sizeof p2p_extra_names[0],
    .extras = p2p_extras,
    .run_seconds = p2p_run_seconds,
    .plan = p2p_plan,
    .describe = p2p_describe,
    .bytes = p2p_bytes,
    .prepare = p2p_prepare,
    .release = p2p_release,
    .bind = p2p_bind,
    .poison = p2p_poison,
    .check = p2p_check,
    .unbind = p2p_unbind,
};

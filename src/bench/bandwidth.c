/* bandwidth: copies between host and device memory (the transfer tests of the
 * CUDA-vs-OpenCL study). Directions host-to-device, device-to-host,
 * device-to-device and both host directions at once on two streams; host
 * memory pageable or pinned; blocking or queued on a stream; one buffer or the
 * same bytes split over many buffers. On host-memory backends every copy is a
 * memcpy, which measures host memory bandwidth.
 *
 * Every copy is verified: the source holds a seeded byte pattern, the
 * destination is poisoned before each run and compared byte for byte after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "core/core.h"
#include "core/rng.h"

enum { P_SIZE, P_BUFFERS };

static const struct pb_param_def bw_params[] = {
    [P_SIZE] = {"size", "bytes per copy (all buffers together); k/M/G suffixes", "1K:1G"},
    [P_BUFFERS] = {"buffers", "split each copy over this many buffers (many small vs one large)", "1"},
};

enum direction { H2D, D2H, D2D, BIDIR };

struct bw_kind {
    enum direction dir;
    enum pb_mem host; /* host side of the copy (unused for D2D) */
    bool async;       /* queued on a stream instead of blocking */
};

/* One direction of copies: n buffers of `chunk` bytes each way. */
struct lane {
    pb_buf **src, **dst;
    pb_stream *stream[2]; /* [0] NULL = blocking; pieces alternate over the two where [1] is set */
};

struct bw_args {
    size_t n, chunk;
    size_t piece; /* each buffer's copy goes in pieces of at most this */
    struct lane lanes[2]; /* two for BIDIR */
    int n_lanes;
};

struct bw_state {
    struct bw_args args;
    unsigned char *pattern, *readback; /* chunk bytes */
};

static pb_status bw_plan(const struct pb_param_lists *l, enum pb_precision prec, struct pb_problem *out,
                         size_t max, size_t *n_out)
{
    size_t count = 0;
    for (size_t i = 0; i < l->count[P_SIZE]; i++)
        for (size_t j = 0; j < l->count[P_BUFFERS]; j++) {
            int64_t size = l->values[P_SIZE][i], nb = l->values[P_BUFFERS][j];
            if (nb < 1 || nb > 1 << 20)
                return pb__fail(PB_ERR_INVALID, "--buffers must be between 1 and 1M (got %lld)", (long long)nb);
            if (size < 1)
                return pb__fail(PB_ERR_INVALID, "--size must be at least 1 byte (got %lld)", (long long)size);
            if (size < nb)
                return pb__fail(PB_ERR_INVALID, "--size %lld is smaller than --buffers %lld", (long long)size,
                                (long long)nb);
            size = size / nb * nb; /* what is copied: equal buffers (the size column says so) */
            if (count >= max)
                return pb__fail(PB_ERR_INVALID, "bandwidth: more than %zu problems", max);
            out[count++] = (struct pb_problem){.prec = prec, .v = {[P_SIZE] = size, [P_BUFFERS] = nb}};
        }
    *n_out = count;
    return PB_OK;
}

static size_t chunk_of(const struct pb_problem *p) { return (size_t)(p->v[P_SIZE] / p->v[P_BUFFERS]); }

static void bw_describe(const struct pb_problem *p, char *buf, size_t len)
{
    char size[32];
    pb__format_bytes((double)(chunk_of(p) * (size_t)p->v[P_BUFFERS]), size, sizeof size);
    if (p->v[P_BUFFERS] == 1)
        snprintf(buf, len, "%s", size);
    else
        snprintf(buf, len, "%s in %lld", size, (long long)p->v[P_BUFFERS]);
}

/* Device-to-device copies read and write device memory: both count. Both
 * directions at once move the bytes twice. */
static double bw_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)host;
    const struct bw_kind *k = v->data;
    double bytes = (double)chunk_of(p) * (double)p->v[P_BUFFERS];
    return k->dir == D2D || k->dir == BIDIR ? 2 * bytes : bytes;
}

/* Both directions at once: pieces of PARBENCH_BIDIR_PIECE bytes (tuning
 * runs), else 16 MiB. */
static size_t bidir_piece(void)
{
    const char *env = getenv("PARBENCH_BIDIR_PIECE");
    long long v = env ? atoll(env) : 0;
    return v > 0 ? (size_t)v : (size_t)16 << 20;
}

/* Streams a direction: PARBENCH_BIDIR_STREAMS=2 (tuning runs), else 1. */
static int bidir_streams(void)
{
    const char *env = getenv("PARBENCH_BIDIR_STREAMS");
    return env && atoi(env) == 2 ? 2 : 1;
}

static pb_status bw_prepare(const struct pb_problem *p, uint64_t seed, void **out)
{
    (void)p, (void)seed;
    *out = NULL; /* each binding makes its own pattern */
    return PB_OK;
}

static void bw_release(void *host) { (void)host; }

static void free_lane(struct lane *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (l->src)
            pb_buf_free(l->src[i]);
        if (l->dst)
            pb_buf_free(l->dst[i]);
    }
    free(l->src);
    free(l->dst);
    pb_stream_destroy(l->stream[0]);
    pb_stream_destroy(l->stream[1]);
}

static void bw_unbind(void *state)
{
    struct bw_state *s = state;
    if (!s)
        return;
    for (int i = 0; i < s->args.n_lanes; i++)
        free_lane(&s->args.lanes[i], s->args.n);
    pb__host_free(s->pattern);
    pb__host_free(s->readback);
    free(s);
}

static pb_status make_lane(pb_device *dev, struct lane *l, size_t n, size_t chunk, enum pb_mem src_kind,
                           enum pb_mem dst_kind, int streams, const unsigned char *pattern)
{
    l->src = calloc(n, sizeof *l->src);
    l->dst = calloc(n, sizeof *l->dst);
    if (!l->src || !l->dst)
        return pb__fail(PB_ERR_NOMEM, "bandwidth: out of host memory");
    pb_status st = PB_OK;
    for (int i = 0; i < streams && st == PB_OK; i++)
        st = pb_stream_create(dev, &l->stream[i]);
    for (size_t i = 0; i < n && st == PB_OK; i++) {
        st = pb_buf_alloc(dev, src_kind, chunk, &l->src[i]);
        if (st == PB_OK)
            st = pb_buf_alloc(dev, dst_kind, chunk, &l->dst[i]);
        if (st == PB_OK)
            st = pb_buf_write(l->src[i], 0, pattern, chunk);
    }
    return st;
}

static pb_status bw_bind(pb_device *dev, const struct pb_problem *p, const struct pb_variant *v, void *host,
                         void **state, const void **args)
{
    (void)host;
    const struct bw_kind *k = v->data;
    *state = NULL;
    struct bw_state *s = calloc(1, sizeof *s);
    if (!s)
        return pb__fail(PB_ERR_NOMEM, "bandwidth: out of host memory");
    size_t n = (size_t)p->v[P_BUFFERS], chunk = chunk_of(p);
    s->args.n = n;
    s->args.chunk = chunk;
    s->args.piece = k->dir == BIDIR ? bidir_piece() : chunk;
    pb_status st = pb__host_alloc(chunk, "the copy pattern", (void **)&s->pattern);
    if (st == PB_OK)
        st = pb__host_alloc(chunk, "the copy check", (void **)&s->readback);
    if (st == PB_OK) {
        struct pb_rng rng;
        pb__rng_init(&rng, (uint64_t)p->v[P_SIZE], 7);
        for (size_t i = 0; i < chunk; i += 8) {
            uint64_t x = pb__rng_next(&rng);
            memcpy(s->pattern + i, &x, chunk - i < 8 ? chunk - i : 8);
        }
    }
    struct { enum pb_mem from, to; } dirs[2];
    int lanes = 1;
    switch (k->dir) {
    case H2D: dirs[0].from = k->host, dirs[0].to = PB_MEM_DEVICE; break;
    case D2H: dirs[0].from = PB_MEM_DEVICE, dirs[0].to = k->host; break;
    case D2D: dirs[0].from = PB_MEM_DEVICE, dirs[0].to = PB_MEM_DEVICE; break;
    case BIDIR:
        dirs[0].from = k->host, dirs[0].to = PB_MEM_DEVICE;
        dirs[1].from = PB_MEM_DEVICE, dirs[1].to = k->host;
        lanes = 2;
        break;
    }
    for (int i = 0; i < lanes && st == PB_OK; i++) {
        s->args.n_lanes = i + 1;
        int streams = !k->async ? 0 : k->dir == BIDIR ? bidir_streams() : 1;
        st = make_lane(dev, &s->args.lanes[i], n, chunk, dirs[i].from, dirs[i].to, streams, s->pattern);
    }
    if (st != PB_OK) {
        bw_unbind(s);
        return st;
    }
    *state = s;
    *args = &s->args;
    return PB_OK;
}

/* Queue every lane's copies before waiting on any, so two lanes overlap;
 * the lanes take turns (breadth first) piece by piece, so both directions
 * stay busy to the end instead of one finishing alone (H100, 256 MiB each
 * way: 1.57x one direction as two whole copies, 1.79x in 16 MiB pieces, 1.61-1.64x
 * in 2, 4 or 64 MiB ones). */
static pb_status bw_run(pb_device *dev, const void *args, pb_stream *stream)
{
    (void)dev, (void)stream;
    const struct bw_args *a = args;
    size_t turn = 0;
    for (size_t i = 0; i < a->n; i++)
        for (size_t at = 0; at < a->chunk; at += a->piece, turn++)
            for (int l = 0; l < a->n_lanes; l++) {
                const struct lane *lane = &a->lanes[l];
                size_t bytes = a->chunk - at < a->piece ? a->chunk - at : a->piece;
                pb_stream *on = lane->stream[1] ? lane->stream[turn % 2] : lane->stream[0];
                pb_status st = pb_buf_copy(lane->dst[i], at, lane->src[i], at, bytes, on);
                if (st != PB_OK)
                    return st;
            }
    return PB_OK;
}

static pb_status bw_poison(void *state)
{
    struct bw_state *s = state;
    for (int l = 0; l < s->args.n_lanes; l++)
        for (size_t i = 0; i < s->args.n; i++) {
            pb_status st = pb_buf_fill_bytes(s->args.lanes[l].dst[i], 0xFF);
            if (st != PB_OK)
                return st;
        }
    return PB_OK;
}

static pb_status bw_check(void *state, const void *host, bool corrupt, struct pb_check *out)
{
    (void)host;
    struct bw_state *s = state;
    size_t bad = 0, total = 0, first_bad = SIZE_MAX;
    for (int l = 0; l < s->args.n_lanes; l++)
        for (size_t i = 0; i < s->args.n; i++) {
            pb_status st = pb_buf_read(s->args.lanes[l].dst[i], 0, s->readback, s->args.chunk);
            if (st != PB_OK)
                return st;
            if (corrupt && l == 0 && i == 0)
                s->readback[s->args.chunk / 2] ^= 0x5A;
            for (size_t b = 0; b < s->args.chunk; b++)
                if (s->readback[b] != s->pattern[b]) {
                    if (first_bad == SIZE_MAX)
                        first_bad = total + b;
                    bad++;
                }
            total += s->args.chunk;
        }
    pb__check_begin(out, 0, "full");
    out->checked = total;
    out->err_norm = out->err_max = total ? (double)bad / (double)total : 0;
    out->pass = bad == 0;
    if (!out->pass)
        snprintf(out->detail, sizeof out->detail, "%zu of %zu bytes differ, the first at byte %zu", bad, total,
                 first_bad);
    return PB_OK;
}

#define BW_VARIANT(NAME, SUMMARY, DIR, HOST, ASYNC)                                                   \
    {{"bandwidth", NAME, SUMMARY, 0}, .run = bw_run, .data = &(const struct bw_kind){DIR, HOST, ASYNC}}
static const struct pb_variant bw_variants[] = {
    BW_VARIANT("h2d-pageable", "host to device from pageable memory, blocking", H2D, PB_MEM_PAGEABLE, false),
    BW_VARIANT("h2d-pinned", "host to device from pinned memory, blocking", H2D, PB_MEM_PINNED, false),
    BW_VARIANT("h2d-pageable-async", "host to device from pageable memory, on a stream", H2D, PB_MEM_PAGEABLE,
               true),
    BW_VARIANT("h2d-pinned-async", "host to device from pinned memory, on a stream", H2D, PB_MEM_PINNED, true),
    BW_VARIANT("d2h-pageable", "device to pageable host memory, blocking", D2H, PB_MEM_PAGEABLE, false),
    BW_VARIANT("d2h-pinned", "device to pinned host memory, blocking", D2H, PB_MEM_PINNED, false),
    BW_VARIANT("d2h-pageable-async", "device to pageable host memory, on a stream", D2H, PB_MEM_PAGEABLE, true),
    BW_VARIANT("d2h-pinned-async", "device to pinned host memory, on a stream", D2H, PB_MEM_PINNED, true),
    BW_VARIANT("d2d", "device to device (bytes read + written)", D2D, PB_MEM_DEVICE, false),
    BW_VARIANT("bidir-pinned", "host to device and device to host at once on two streams, in turns of 16 MiB pieces (both counted)", BIDIR,
               PB_MEM_PINNED, true),
};

/* Transfers against the link of their direction, device copies against
 * device memory. */
static struct pb_roof bw_roof(const char *variant, const char *backend, const char *device, enum pb_precision prec)
{
    (void)backend, (void)device, (void)prec;
    static const enum pb_roof_kind by_dir[] = {[H2D] = PB_ROOF_H2D, [D2H] = PB_ROOF_D2H, [D2D] = PB_ROOF_MEMORY,
                                               [BIDIR] = PB_ROOF_BIDIR};
    for (size_t i = 0; i < sizeof bw_variants / sizeof bw_variants[0]; i++)
        if (strcmp(bw_variants[i].desc.name, variant) == 0)
            return (struct pb_roof){PB_ROOF_NONE, by_dir[((const struct bw_kind *)bw_variants[i].data)->dir]};
    return (struct pb_roof){PB_ROOF_NONE, PB_ROOF_NONE};
}

const struct pb_bench pb__bench_bandwidth = {
    .name = "bandwidth",
    .summary = "copies between host and device memory in every direction and memory mode",
    .flop_model = "-",
    .byte_model = "bytes copied (x2 for d2d and bidir)",
    .typeless = true,
    .roof = bw_roof,
    .params = bw_params,
    .n_params = sizeof bw_params / sizeof bw_params[0],
    .plan = bw_plan,
    .describe = bw_describe,
    .bytes = bw_bytes,
    .prepare = bw_prepare,
    .release = bw_release,
    .bind = bw_bind,
    .poison = bw_poison,
    .check = bw_check,
    .unbind = bw_unbind,
    .variants = bw_variants,
    .n_variants = sizeof bw_variants / sizeof bw_variants[0],
};

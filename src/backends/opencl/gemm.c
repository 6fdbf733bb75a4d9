/* GEMM on OpenCL, host side: the teaching kernels (naive, local-memory tiles
 * of 8, 16, 32), study 001's one-row work-groups and a register-blocked
 * kernel (the twin of CUDA's regblock: 128x128x8 tiles, 256 work-items, 8x8
 * per work-item, or 64x64x8 tiles of 128 work-items where those fill the
 * device better; tiles cut along k as the twin's), all in kernels/gemm.cl.
 * Row-major throughout; beta == 0 never reads C; k == 0 or alpha == 0 only
 * scales C (A and B are not read). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/opencl/cl_impl.h"
#include "core/gemm_plan.h"

#define GEMM_CL "gemm.cl"

/* Shape of one variant's launch. */
struct gemm_kind {
    const char *kernel;
    unsigned lx, ly;         /* work-group; lx = 0 for onerow (picked at launch) */
    unsigned tile_x, tile_y; /* columns and rows of C one work-group covers */
    unsigned local_elems;    /* static __local elements (checked before building) */
    bool regblock;           /* kernel picked by alignment (gemm_regblock_*), takes c_vec */
    const char *defines;     /* build options of its program, or NULL */
    bool shaped;             /* takes the arguments' launch shape (block_x, block_y, groups) */
    size_t groups_x, groups_y; /* a capped grid of work-groups (0: cover C); the kernel loops */
};

static const struct gemm_kind k_naive = {"gemm_naive", 16, 16, 16, 16, 0, false, NULL, true, 0, 0};
static const struct gemm_kind k_tiled8 = {"gemm_tiled8", 8, 8, 8, 8, 2 * 8 * 8, false, NULL, false, 0, 0};
static const struct gemm_kind k_tiled16 = {"gemm_tiled16", 16, 16, 16, 16, 2 * 16 * 16, false, NULL, false, 0, 0};
static const struct gemm_kind k_tiled32 = {"gemm_tiled32", 32, 32, 32, 32, 2 * 32 * 32, false, NULL, false, 0, 0};
static const struct gemm_kind k_onerow = {"gemm_onerow", 0, 1, 0, 1, 0, false, NULL, false, 0, 0};
/* Must match RB_* in gemm.cl: 128x128 tiles of C, a 1-D work-group of 256
 * (dimension 1 counts tile rows), two stages of k slices of 8 with A's rows
 * padded by 4; the small tile 64x64 with 128 work-items. */
static const struct gemm_kind k_regblock = {"gemm_regblock_ss", 256, 1, 128, 128, 2 * (8 * 132 + 8 * 128), true,
                                            NULL, false, 0, 0};
static const struct gemm_kind k_regblock_small = {"gemm_regblock_ss", 128, 1, 64, 64, 2 * (8 * 68 + 8 * 64), true,
                                                  "-DRB_SMALL", false, 0, 0};

/* The naive kernel in the arguments' shape: their work-group, and at most
 * g->groups work-groups, the capped grid as square as C allows, run by the
 * strided kernel. */
static const struct gemm_kind *shaped_kind(const struct gemm_kind *kind, const struct pb_gemm_args *g,
                                           struct gemm_kind *out)
{
    *out = *kind;
    if (g->block_x) {
        out->lx = out->tile_x = g->block_x;
        out->ly = out->tile_y = g->block_y;
    }
    size_t gx = (g->n + out->lx - 1) / out->lx, gy = (g->m + out->ly - 1) / out->ly;
    if (g->groups && g->n && g->m && gx > g->groups / gy) {
        out->groups_x = gx < g->groups ? gx : g->groups;
        size_t rows = g->groups / out->groups_x;
        out->groups_y = gy < rows ? gy : rows;
        out->kernel = "gemm_naive_strided";
    }
    return out;
}

/* Only the product kernels have limits; scaling (k == 0 or alpha == 0) and
 * empty products always run. */
static bool product_needed(const struct pb_gemm_args *g)
{
    return g->m && g->n && g->k && g->alpha != 0;
}

/* How kind's tiles go over the compute units (src/core/gemm_plan.h): whole,
 * or the last wave's tiles (all of them where they leave most units idle)
 * cut along k. */
static struct pb__split_plan regblock_plan(const pb_device *dev, const struct pb_gemm_args *g,
                                           const struct gemm_kind *kind)
{
    size_t tiles = ((g->m + kind->tile_y - 1) / kind->tile_y) * ((g->n + kind->tile_x - 1) / kind->tile_x);
    int units = pb__plan_units((int)pb__cl(dev)->compute_units);
    size_t elt = pb_precision_size(g->prec);
    return pb__plan_split(tiles, product_needed(g) ? g->k : 0, units, elt, pb__plan_fma_rate(elt));
}

/* The regblock tile for this product, as the CUDA twin picks it
 * (pb__pick_tile in src/backends/cuda/gemm_tiles.cuh): the time is about the
 * plan's waves x (work of one tile) / (efficiency of the tile; the small
 * one's relative to the large as measured for CUDA on an H100).
 * PARBENCH_CL_REGBLOCK_TILE=large or small forces one (tests use it to cover
 * both on any device). */
static const struct gemm_kind *regblock_tile(const pb_device *dev, const struct pb_gemm_args *g)
{
    const char *force = getenv("PARBENCH_CL_REGBLOCK_TILE");
    if (force && strcmp(force, "large") == 0)
        return &k_regblock;
    if (force && strcmp(force, "small") == 0)
        return &k_regblock_small;
    const struct gemm_kind *tiles[2] = {&k_regblock, &k_regblock_small};
    const double eff[2] = {1.0, g->prec == PB_DOUBLE ? 0.905 : 0.83 / 0.985};
    const struct gemm_kind *best = tiles[0];
    double best_cost = 0;
    for (int i = 0; i < 2; i++) {
        double cost = regblock_plan(dev, g, tiles[i]).waves * tiles[i]->tile_x * tiles[i]->tile_y / eff[i];
        if (i == 0 || cost < best_cost) {
            best = tiles[i];
            best_cost = cost;
        }
    }
    return best;
}

/* Elements of the 16-byte vectors gemm_regblock loads and stores. */
static size_t regblock_vec(enum pb_precision prec)
{
    return 16 / pb_precision_size(prec);
}

/* The kernel of kind for these arguments: regblock reads A and B in 16-byte
 * vectors where the leading dimension allows it (buffer bases are aligned to
 * CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least 128 bytes). */
static const char *kernel_name(const struct gemm_kind *kind, const struct pb_gemm_args *g, bool cut)
{
    if (!kind->regblock)
        return kind->kernel;
    static const char *const names[2][4] = {
        {"gemm_regblock_ss", "gemm_regblock_sv", "gemm_regblock_vs", "gemm_regblock_vv"},
        {"gemm_regblock_cut_ss", "gemm_regblock_cut_sv", "gemm_regblock_cut_vs", "gemm_regblock_cut_vv"}};
    size_t vec = regblock_vec(g->prec);
    bool va = g->lda % vec == 0, vb = g->ldb % vec == 0;
    return names[cut][va * 2 + vb];
}

#define ONEROW_GROUP 256 /* work-items of a one-row work-group, at most */

/* Work-items of a one-row work-group: the largest power of two up to
 * ONEROW_GROUP that the device and the compiled kernel allow. */
static size_t onerow_group(const struct pb_cl_device *impl, const struct pb_cl_kernel *k)
{
    size_t cap = k->max_group, g = ONEROW_GROUP;
    if (impl->max_group < cap)
        cap = impl->max_group;
    if (impl->max_items[0] < cap)
        cap = impl->max_items[0];
    while (g > cap && g > 1)
        g /= 2;
    return g;
}

/* Elements of A's row the one-row kernel keeps in local memory at once. */
static size_t onerow_chunk(const struct pb_cl_device *impl, const struct pb_cl_kernel *k, size_t elt, size_t kk)
{
    cl_ulong avail = impl->local_mem > k->local_mem ? impl->local_mem - k->local_mem : 0;
    size_t chunk = (size_t)(avail / elt);
    return chunk < kk ? chunk : kk;
}

static bool gemm_supports(const struct gemm_kind *kind, const pb_device *dev, const void *args, const char **why)
{
    const struct pb_gemm_args *g = args;
    struct pb_cl_device *impl = pb__cl(dev);
    struct gemm_kind shaped;
    if (kind->regblock)
        kind = regblock_tile(dev, g);
    if (kind->shaped)
        kind = shaped_kind(kind, g, &shaped);
    size_t elt = pb_precision_size(g->prec);
    if ((g->a && g->a->kind != PB_MEM_DEVICE) || (g->b && g->b->kind != PB_MEM_DEVICE) ||
        (g->c && g->c->kind != PB_MEM_DEVICE)) {
        *why = "OpenCL kernels take device buffers (PB_MEM_DEVICE) only";
        return false;
    }
    if (g->prec == PB_DOUBLE && !impl->fp64) {
        *why = "the device has no double precision (cl_khr_fp64)";
        return false;
    }
    if (!g->m || !g->n)
        return true;
    if (kind->lx) {
        size_t group = (size_t)kind->lx * kind->ly;
        if (group > impl->max_group || kind->lx > impl->max_items[0] || kind->ly > impl->max_items[1]) {
            snprintf(impl->why, sizeof impl->why,
                     "work-group of %u x %u exceeds the device's maximum (%zu work-items, %zu x %zu)", kind->lx,
                     kind->ly, impl->max_group, impl->max_items[0], impl->max_items[1]);
            *why = impl->why;
            return false;
        }
    }
    if ((cl_ulong)kind->local_elems * elt > impl->local_mem) {
        snprintf(impl->why, sizeof impl->why, "needs %zu bytes of local memory, the device has %llu",
                 kind->local_elems * elt, (unsigned long long)impl->local_mem);
        *why = impl->why;
        return false;
    }
    /* Global sizes: each dimension rounded up to whole work-groups; regblock's
     * tiles all along dimension 0. */
    size_t gx = ONEROW_GROUP, gy = g->m;
    size_t limit = impl->address_bits >= 64 ? SIZE_MAX : ((size_t)1 << impl->address_bits) - 1;
    size_t tiles_x = 0, tiles_y = 0; /* onerow (lx = 0) has no tiles */
    if (kind->lx) {
        tiles_x = kind->groups_x ? kind->groups_x : (g->n + kind->tile_x - 1) / kind->tile_x;
        tiles_y = kind->groups_y ? kind->groups_y : (g->m + kind->tile_y - 1) / kind->tile_y;
    }
    if (kind->regblock && !pb__mul_size(tiles_x, tiles_y, &tiles_x))
        tiles_x = SIZE_MAX;
    if (kind->regblock)
        tiles_y = 1;
    if (kind->lx && (!pb__mul_size(tiles_x, kind->lx, &gx) || !pb__mul_size(tiles_y, kind->ly, &gy))) {
        gx = SIZE_MAX;
        limit = 0;
    }
    if (gx > limit || gy > limit) {
        *why = "matrix too large for the device's NDRange";
        return false;
    }
    if (!product_needed(g))
        return true;
    /* What the compiled kernel allows. A failed build is not "unsupported":
     * run() reports it as an error with the build log. The kernel's own
     * CL_KERNEL_WORK_GROUP_SIZE is not checked: OpenCL 1.2 makes only the
     * device maximum a launch limit, and NVIDIA reports 256 for every kernel
     * (even at 14 registers) while launching 1024 work-items works. */
    const struct pb_cl_kernel *k;
    if (pb__cl_kernel_with(dev, GEMM_CL, kind->defines, g->prec, kernel_name(kind, g, false), &k) != PB_OK)
        return true;
    if (!kind->lx && onerow_chunk(impl, k, elt, g->k) < 1) {
        *why = "no local memory left for a row of A";
        return false;
    }
    return true;
}

/* alpha or beta in the precision of the kernel. */
struct scalar {
    size_t size;
    union {
        cl_float f;
        cl_double d;
    } v;
};

static struct scalar scalar_of(enum pb_precision prec, double x)
{
    struct scalar s;
    if (prec == PB_DOUBLE) {
        s.size = sizeof s.v.d;
        s.v.d = x;
    } else {
        s.size = sizeof s.v.f;
        s.v.f = (cl_float)x;
    }
    return s;
}

/* C = beta*C on the whole m x n matrix. */
static pb_status gemm_scale(pb_device *dev, const struct pb_gemm_args *g, pb_stream *s)
{
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel(dev, GEMM_CL, g->prec, "gemm_scale", &k);
    if (st != PB_OK)
        return st;
    cl_ulong m = g->m, n = g->n, ldc = g->ldc;
    struct scalar beta = scalar_of(g->prec, g->beta);
    cl_mem c = pb__cl_mem(g->c);
    if ((st = pb__cl_set_arg(k->kernel, 0, sizeof m, &m)) != PB_OK || (st = pb__cl_set_arg(k->kernel, 1, sizeof n, &n)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 2, beta.size, &beta.v)) != PB_OK ||
        (st = pb__cl_set_arg(k->kernel, 3, sizeof c, &c)) != PB_OK || (st = pb__cl_set_arg(k->kernel, 4, sizeof ldc, &ldc)) != PB_OK)
        return st;
    size_t global[2] = {g->n, g->m};
    return pb__cl_launch(dev, s, k->kernel, 2, global, NULL);
}

/* A kernel argument's size and value. */
struct kernel_arg {
    size_t size;
    const void *value;
};

/* regblock's arguments past the common ones. */
struct regblock_args {
    cl_int c_vec;
    cl_ulong tiles_m, tiles_n, tile_first, k_split;
    cl_mem ws;
};

/* regblock over `count` tiles from r->tile_first, each in `slabs` pieces of
 * r->k_split: the kernel for whole tiles (slabs 1), or for pieces. */
static pb_status regblock_launch(pb_device *dev, pb_stream *s, const struct pb_gemm_args *g,
                                 const struct gemm_kind *kind, const struct kernel_arg *common, cl_uint n_args,
                                 const struct regblock_args *r, size_t count, int slabs)
{
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel_with(dev, GEMM_CL, kind->defines, g->prec, kernel_name(kind, g, slabs > 1), &k);
    const struct kernel_arg extra[] = {{sizeof r->c_vec, &r->c_vec},     {sizeof r->tiles_m, &r->tiles_m},
                                       {sizeof r->tiles_n, &r->tiles_n}, {sizeof r->tile_first, &r->tile_first},
                                       {sizeof r->k_split, &r->k_split}, {sizeof r->ws, &r->ws}};
    for (cl_uint i = 0; i < n_args && st == PB_OK; i++)
        st = pb__cl_set_arg(k->kernel, i, common[i].size, common[i].value);
    for (cl_uint i = 0; i < 6 && st == PB_OK; i++)
        st = pb__cl_set_arg(k->kernel, n_args + i, extra[i].size, extra[i].value);
    size_t global[2] = {count * kind->lx, (size_t)slabs}, local[2] = {kind->lx, 1};
    return st == PB_OK ? pb__cl_launch(dev, s, k->kernel, 2, global, local) : st;
}

/* regblock's launches after the n_args common arguments: the whole tiles,
 * then the cut ones and their reduction (regblock_plan). Where the pieces'
 * workspace cannot be had, every tile runs whole (slower, never an error). */
static pb_status regblock_run(pb_device *dev, const struct pb_gemm_args *g, const struct gemm_kind *kind,
                              const struct kernel_arg *common, cl_uint n_args, pb_stream *s)
{
    struct pb_cl_device *impl = pb__cl(dev);
    struct regblock_args r = {g->ldc % regblock_vec(g->prec) == 0, /* C may be stored in 16-byte vectors */
                              (g->m + kind->tile_y - 1) / kind->tile_y, (g->n + kind->tile_x - 1) / kind->tile_x,
                              0, g->k, NULL};
    size_t tiles = (size_t)(r.tiles_m * r.tiles_n), elt = pb_precision_size(g->prec);
    struct pb__split_plan plan = regblock_plan(dev, g, kind);
    if (plan.slabs > 1) {
        cl_int e;
        r.ws = clCreateBuffer(impl->ctx, CL_MEM_READ_WRITE,
                              (tiles - plan.first) * (size_t)plan.slabs * kind->tile_x * kind->tile_y * elt, NULL, &e);
        if (e != CL_SUCCESS || !r.ws)
            plan = pb__plan_whole(tiles, 1), r.ws = NULL;
    }
    pb_status st = PB_OK;
    if (plan.first > 0)
        st = regblock_launch(dev, s, g, kind, common, n_args, &r, plan.first, 1);
    if (st == PB_OK && plan.first < tiles) {
        r.tile_first = plan.first;
        r.k_split = ((g->k + plan.slabs - 1) / plan.slabs + 7) / 8 * 8; /* whole slices of 8 */
        st = regblock_launch(dev, s, g, kind, common, n_args, &r, tiles - plan.first, plan.slabs);
        const struct pb_cl_kernel *red = NULL;
        if (st == PB_OK)
            st = pb__cl_kernel_with(dev, GEMM_CL, kind->defines, g->prec, "gemm_tile_reduce", &red);
        cl_ulong first = plan.first, count = tiles - plan.first;
        cl_int slabs = plan.slabs;
        /* m, n; then alpha, beta, c, ldc as the common arguments 3, 8, 9, 10 */
        const struct kernel_arg args[] = {common[0],         common[1],           {sizeof r.tiles_m, &r.tiles_m},
                                          {sizeof r.tiles_n, &r.tiles_n},        {sizeof first, &first},
                                          {sizeof count, &count},                {sizeof slabs, &slabs},
                                          {sizeof r.ws, &r.ws},                  common[3],
                                          common[8],         common[9],           common[10]};
        for (cl_uint i = 0; i < 12 && st == PB_OK; i++)
            st = pb__cl_set_arg(red->kernel, i, args[i].size, args[i].value);
        size_t local = impl->max_group < 256 ? impl->max_group : 256;
        size_t groups = ((size_t)count * kind->tile_x * kind->tile_y + local - 1) / local;
        size_t global = (groups < 4096 ? groups : 4096) * local;
        if (st == PB_OK)
            st = pb__cl_launch(dev, s, red->kernel, 1, &global, &local);
    }
    if (r.ws)
        clReleaseMemObject(r.ws); /* freed once the queued kernels are done with it */
    return st;
}

static pb_status gemm_run(const struct gemm_kind *kind, pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_gemm_args *g = args;
    if (!g->m || !g->n)
        return PB_OK;
    if (!product_needed(g))
        return gemm_scale(dev, g, s);
    struct pb_cl_device *impl = pb__cl(dev);
    struct gemm_kind shaped;
    if (kind->regblock)
        kind = regblock_tile(dev, g);
    if (kind->shaped)
        kind = shaped_kind(kind, g, &shaped);
    const struct pb_cl_kernel *k;
    pb_status st = pb__cl_kernel_with(dev, GEMM_CL, kind->defines, g->prec, kernel_name(kind, g, false), &k);
    if (st != PB_OK)
        return st;
    cl_kernel kk = k->kernel;
    cl_ulong m = g->m, n = g->n, kd = g->k, lda = g->lda, ldb = g->ldb, ldc = g->ldc;
    struct scalar alpha = scalar_of(g->prec, g->alpha), beta = scalar_of(g->prec, g->beta);
    cl_mem a = pb__cl_mem(g->a), b = pb__cl_mem(g->b), c = pb__cl_mem(g->c);
    const struct kernel_arg common[] = {{sizeof m, &m},       {sizeof n, &n},     {sizeof kd, &kd},
                                        {alpha.size, &alpha.v}, {sizeof a, &a},     {sizeof lda, &lda},
                                        {sizeof b, &b},       {sizeof ldb, &ldb}, {beta.size, &beta.v},
                                        {sizeof c, &c},       {sizeof ldc, &ldc}};
    cl_uint n_args = (cl_uint)(sizeof common / sizeof common[0]);
    if (kind->regblock)
        return regblock_run(dev, g, kind, common, n_args, s);
    for (cl_uint i = 0; i < n_args; i++)
        if ((st = pb__cl_set_arg(kk, i, common[i].size, common[i].value)) != PB_OK)
            return st;
    size_t global[2], local[2];
    if (kind->lx) {
        local[0] = kind->lx;
        local[1] = kind->ly;
        global[0] = (kind->groups_x ? kind->groups_x : (g->n + kind->tile_x - 1) / kind->tile_x) * kind->lx;
        global[1] = (kind->groups_y ? kind->groups_y : (g->m + kind->tile_y - 1) / kind->tile_y) * kind->ly;
    } else { /* one row per work-group */
        size_t elt = pb_precision_size(g->prec);
        cl_ulong chunk = onerow_chunk(impl, k, elt, g->k);
        if ((st = pb__cl_set_arg(kk, n_args, (size_t)chunk * elt, NULL)) != PB_OK ||
            (st = pb__cl_set_arg(kk, n_args + 1, sizeof chunk, &chunk)) != PB_OK)
            return st;
        local[0] = global[0] = onerow_group(impl, k);
        local[1] = 1;
        global[1] = g->m;
    }
    st = pb__cl_launch(dev, s, kk, 2, global, local);
    if (st != PB_OK && local[0] * local[1] > k->max_group) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", pb_last_error());
        return pb__fail(st, "%s (work-group of %zu; the compiled kernel reports at most %zu, "
                        "CL_KERNEL_WORK_GROUP_SIZE)", msg, local[0] * local[1], k->max_group);
    }
    return st;
}

#define PB__CL_GEMM_DEFINE(NAME)                                                                     \
    pb_status pb__cl_gemm_##NAME(pb_device *dev, const void *args, pb_stream *s)                     \
    {                                                                                                \
        return gemm_run(&k_##NAME, dev, args, s);                                                    \
    }                                                                                                \
    bool pb__cl_gemm_##NAME##_supports(const pb_device *dev, const void *args, const char **why)     \
    {                                                                                                \
        return gemm_supports(&k_##NAME, dev, args, why);                                             \
    }

PB__CL_GEMM_DEFINE(naive)
PB__CL_GEMM_DEFINE(tiled8)
PB__CL_GEMM_DEFINE(tiled16)
PB__CL_GEMM_DEFINE(tiled32)
PB__CL_GEMM_DEFINE(onerow)
PB__CL_GEMM_DEFINE(regblock)

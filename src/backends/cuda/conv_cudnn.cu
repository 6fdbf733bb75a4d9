// cuDNN as the conv anchor (`cudnn`): cudnnConvolutionForward twice, a
// 1 x (2R+1) filter along the rows of `in` into tmp, then a (2R+1) x 1 filter
// along the columns of tmp into out, NCHW tensors with N = C = K = 1, through
// cuDNN's legacy API.
//
// libcudnn is loaded at run time (as nccl.cu loads NCCL), so the binary starts
// where cuDNN is absent; its rows are then UNSUPPORTED with the reason. It is
// looked for, in order: PB_CUDNN_LIB (a full path: that file only); else
// libcudnn.so.9, then libcudnn.so, in each directory of PB_CUDNN_PATH
// (colon-separated, e.g. a Python wheel's .../site-packages/nvidia/cudnn/lib),
// then libcudnn.so.9 and libcudnn.so through the dynamic loader's search path.
// In cuDNN 9 libcudnn.so.9 forwards the legacy calls to libcudnn_cnn.so.9 and
// libcudnn_ops.so.9, which it loads from its own directory.
//
// Semantics. cuDNN's CUDNN_CROSS_CORRELATION is y[i] = sum_k w[k] x[i + k - pad]
// (zero outside x): pb_conv_args' definition, so the taps are used as they
// are (CUDNN_CONVOLUTION would flip them), and the same 2R+1 taps in memory
// are both the 1 x (2R+1) and the (2R+1) x 1 filter. cuDNN pads with zeros:
// border clamp is UNSUPPORTED. The row pass filters all in_rows rows of `in`
// (padding R on the sides). Out row y reads tmp rows y + in_top - R ...
// y + in_top + R, zero outside [0, in_rows): max(0, R - in_top) rows are
// missing above and max(0, in_top + height + R - in_rows) below. cuDNN pads
// both ends of a dimension alike, so the two must be equal (pad p): the
// column pass then reads tmp from row in_top - R + p, height + 2R - 2p rows.
// The whole image (in_top = 0, in_rows = height) has p = R, a strip with its
// full halo p = 0; a strip at the image's top or bottom edge (the first and
// last of conv-stream's strips when there are several) is UNSUPPORTED.
//
// Algorithms: the direct sums only (implicit GEMM, implicit precomputed GEMM,
// GEMM, direct), deterministic ones: FFT and Winograd round differently (an
// exact 0 comes out as a small non-zero), which the verification, scaled per
// element, rejects. Float runs with CUDNN_FMA_MATH (no TF32, like the cuBLAS
// anchor); double with the default math (FP64 is exact on any unit).
//
// Kept with the device (pb_cuda_device::cudnn) until it is closed: the cuDNN
// handle; the descriptors of up to PB_CUDNN_SHAPES shapes, each with the
// algorithm per pass that cudnnFindConvolutionForwardAlgorithmEx timed fastest
// on its first run; a workspace per stream (streams running at once never
// share scratch), sized for the shapes run on it. A timed repetition calls
// cudnnSetStream and cudnnConvolutionForward twice, nothing else. Algorithms
// whose workspace exceeds half of the free GPU memory are not tried; when
// every one does, the run fails with a message saying so.
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cudnn.h>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"

#define PB_CUDNN_SHAPES 8  // shapes kept per device (least recently used dropped)
#define PB_CUDNN_STREAMS 8 // workspaces kept per device, one per stream

// The algorithms tried: those that sum the products directly.
static const cudnnConvolutionFwdAlgo_t direct_algos[] = {
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
    CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT};
#define PB_CUDNN_ALGOS (sizeof direct_algos / sizeof direct_algos[0])

// One cudnnConvolutionForward: its descriptors, the workspace each direct
// algorithm needs (SIZE_MAX: not available for this shape), the one chosen.
struct pb_cudnn_pass {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t f;
    cudnnConvolutionDescriptor_t conv;
    size_t need[PB_CUDNN_ALGOS];
    size_t algo; // index into direct_algos
};

struct pb_cudnn_shape {
    bool used, chosen; // chosen: the passes' algorithms are picked
    uint64_t last;     // clock of the last use
    enum pb_precision prec;
    size_t width, height, in_rows, in_top, radius;
    size_t first;     // the column pass reads tmp from this row
    pb_cudnn_pass rows, cols;
    size_t work;      // workspace of the chosen algorithms
};

struct pb_cudnn_work {
    bool used;
    uint64_t last;
    cudaStream_t stream;
    void *ptr;
    size_t bytes;
};

struct pb_cuda_cudnn {
    cudnnHandle_t handle;
    int device;
    uint64_t clock;
    pb_cudnn_shape shapes[PB_CUDNN_SHAPES];
    pb_cudnn_work work[PB_CUDNN_STREAMS];
};

namespace {

struct cudnn_api {
    bool tried, loaded;
    char why[320];
    decltype(&cudnnGetVersion) get_version;
    decltype(&cudnnGetErrorString) error_string;
    decltype(&cudnnCreate) create;
    decltype(&cudnnDestroy) destroy;
    decltype(&cudnnSetStream) set_stream;
    decltype(&cudnnCreateTensorDescriptor) create_tensor;
    decltype(&cudnnSetTensor4dDescriptor) set_tensor;
    decltype(&cudnnDestroyTensorDescriptor) destroy_tensor;
    decltype(&cudnnCreateFilterDescriptor) create_filter;
    decltype(&cudnnSetFilter4dDescriptor) set_filter;
    decltype(&cudnnDestroyFilterDescriptor) destroy_filter;
    decltype(&cudnnCreateConvolutionDescriptor) create_conv;
    decltype(&cudnnSetConvolution2dDescriptor) set_conv;
    decltype(&cudnnSetConvolutionMathType) set_math;
    decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv;
    decltype(&cudnnGetConvolutionForwardWorkspaceSize) workspace_size;
    decltype(&cudnnFindConvolutionForwardAlgorithmEx) find;
    decltype(&cudnnConvolutionForward) forward;
};

cudnn_api api;

template <typename F> bool load_symbol(void *lib, const char *name, F *out)
{
    *out = reinterpret_cast<F>(dlsym(lib, name));
    return *out != nullptr;
}

// dlopen of name; on failure the loader's message goes to err when it holds
// none yet.
void *open_lib(const char *name, char *err, size_t len)
{
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib && !err[0]) {
        const char *e = dlerror();
        snprintf(err, len, "%s", e ? e : name);
    }
    return lib;
}

// libcudnn from PB_CUDNN_LIB, PB_CUDNN_PATH or the loader's search path (see
// the top); null with the reason in err. name gets the file opened.
void *find_lib(char *name, size_t name_len, char *err, size_t len)
{
    static const char *const names[] = {"libcudnn.so.9", "libcudnn.so"};
    const char *only = getenv("PB_CUDNN_LIB");
    if (only && only[0]) {
        snprintf(name, name_len, "%s", only);
        char e[256] = "";
        void *lib = open_lib(only, e, sizeof e);
        if (!lib)
            snprintf(err, len, "PB_CUDNN_LIB: %s", e);
        return lib;
    }
    // A file in PB_CUDNN_PATH that is there but does not load says more than
    // the loader not finding libcudnn.so.9: its message is kept first.
    const char *dirs = getenv("PB_CUDNN_PATH");
    if (dirs && dirs[0]) {
        char *copy = strdup(dirs), *save = nullptr;
        for (char *dir = copy ? strtok_r(copy, ":", &save) : nullptr; dir; dir = strtok_r(nullptr, ":", &save))
            for (const char *n : names) {
                char path[4096];
                if (snprintf(path, sizeof path, "%s/%s", dir, n) >= (int)sizeof path || access(path, F_OK) != 0)
                    continue;
                void *lib = open_lib(path, err, len);
                if (lib) {
                    snprintf(name, name_len, "%s", path);
                    free(copy);
                    return lib;
                }
            }
        free(copy);
    }
    for (const char *n : names) {
        void *lib = open_lib(n, err, len);
        if (lib) {
            snprintf(name, name_len, "%s", n);
            return lib;
        }
    }
    return nullptr;
}

// Loads libcudnn once; false (api.why says why) when it is not usable.
bool cudnn_load()
{
    if (api.tried)
        return api.loaded;
    api.tried = true;
    char name[4096] = "", err[256] = "";
    void *lib = find_lib(name, sizeof name, err, sizeof err);
    if (!lib) {
        snprintf(api.why, sizeof api.why, "cuDNN not found (%s)", err);
        return false;
    }
    bool all = load_symbol(lib, "cudnnGetVersion", &api.get_version) &&
               load_symbol(lib, "cudnnGetErrorString", &api.error_string) &&
               load_symbol(lib, "cudnnCreate", &api.create) && load_symbol(lib, "cudnnDestroy", &api.destroy) &&
               load_symbol(lib, "cudnnSetStream", &api.set_stream) &&
               load_symbol(lib, "cudnnCreateTensorDescriptor", &api.create_tensor) &&
               load_symbol(lib, "cudnnSetTensor4dDescriptor", &api.set_tensor) &&
               load_symbol(lib, "cudnnDestroyTensorDescriptor", &api.destroy_tensor) &&
               load_symbol(lib, "cudnnCreateFilterDescriptor", &api.create_filter) &&
               load_symbol(lib, "cudnnSetFilter4dDescriptor", &api.set_filter) &&
               load_symbol(lib, "cudnnDestroyFilterDescriptor", &api.destroy_filter) &&
               load_symbol(lib, "cudnnCreateConvolutionDescriptor", &api.create_conv) &&
               load_symbol(lib, "cudnnSetConvolution2dDescriptor", &api.set_conv) &&
               load_symbol(lib, "cudnnSetConvolutionMathType", &api.set_math) &&
               load_symbol(lib, "cudnnDestroyConvolutionDescriptor", &api.destroy_conv) &&
               load_symbol(lib, "cudnnGetConvolutionForwardWorkspaceSize", &api.workspace_size) &&
               load_symbol(lib, "cudnnFindConvolutionForwardAlgorithmEx", &api.find) &&
               load_symbol(lib, "cudnnConvolutionForward", &api.forward);
    if (!all) {
        snprintf(api.why, sizeof api.why, "%s lacks a cuDNN function parbench calls (cuDNN %d has them)", name,
                 CUDNN_MAJOR);
        return false;
    }
    // Status codes and structures are those of the header built against.
    size_t v = api.get_version(), major = v >= 10000 ? v / 10000 : v / 1000;
    if (major != CUDNN_MAJOR) {
        snprintf(api.why, sizeof api.why, "%s is cuDNN %zu; parbench was built with cuDNN %d's header", name, major,
                 CUDNN_MAJOR);
        return false;
    }
    api.loaded = true;
    return true;
}

bool not_supported(cudnnStatus_t r)
{
#if CUDNN_MAJOR >= 9
    return CUDNN_STATUS_CATEGORY(r) == CUDNN_STATUS_NOT_SUPPORTED;
#else
    return r == CUDNN_STATUS_NOT_SUPPORTED;
#endif
}

pb_status cudnn_status(cudnnStatus_t r, const char *call, const char *file, int line)
{
    pb_status st = not_supported(r) ? PB_ERR_UNSUPPORTED : PB_ERR_DEVICE;
#if CUDNN_MAJOR >= 9
    if (r == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
        r == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
        st = PB_ERR_NOMEM;
#else
    if (r == CUDNN_STATUS_ALLOC_FAILED)
        st = PB_ERR_NOMEM;
#endif
    return pb__fail(st, "cuDNN %s failed at %s:%d: %s", call, file, line, api.error_string(r));
}

#define PB_CUDNN_CHECK(call, expr)                                   \
    do {                                                             \
        cudnnStatus_t pb__r = (expr);                                \
        if (pb__r != CUDNN_STATUS_SUCCESS)                           \
            return cudnn_status(pb__r, call, __FILE__, __LINE__);    \
    } while (0)

const pb_conv_args *conv_args(const void *args) { return static_cast<const pb_conv_args *>(args); }

cudnnDataType_t data_type(enum pb_precision p) { return p == PB_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

// The column pass's rows: tmp from row *first, *pad zero rows on each side
// (see the top). False when cuDNN's padding, alike at both ends, cannot give
// it. Needs in_top + height <= in_rows.
bool column_window(const pb_conv_args *a, size_t *first, size_t *pad)
{
    size_t R = a->radius, above = a->in_top, below = a->in_rows - a->in_top - a->height;
    size_t missing_above = R > above ? R - above : 0, missing_below = R > below ? R - below : 0;
    if (missing_above != missing_below)
        return false;
    *pad = missing_above;
    *first = a->in_top + missing_above - R; // 0 when rows are missing, else in_top - R >= 0
    return true;
}

// ---- the device's state --------------------------------------------------------

pb_status cudnn_state(pb_device *dev, pb_cuda_cudnn **out)
{
    pb_cuda_device *impl = pb__cuda(dev);
    if (!impl->cudnn) {
        PB_CUDA_CHECK(cudaSetDevice(dev->index)); // the handle belongs to the current device
        auto *c = static_cast<pb_cuda_cudnn *>(calloc(1, sizeof(pb_cuda_cudnn)));
        if (!c)
            return pb__fail(PB_ERR_NOMEM, "cuDNN: out of host memory");
        cudnnStatus_t r = api.create(&c->handle);
        if (r != CUDNN_STATUS_SUCCESS) {
            free(c);
            return cudnn_status(r, "cudnnCreate", __FILE__, __LINE__);
        }
        c->device = dev->index;
        impl->cudnn = c;
    }
    *out = impl->cudnn;
    return PB_OK;
}

void drop_pass(pb_cudnn_pass *p)
{
    if (p->x)
        api.destroy_tensor(p->x);
    if (p->y)
        api.destroy_tensor(p->y);
    if (p->f)
        api.destroy_filter(p->f);
    if (p->conv)
        api.destroy_conv(p->conv);
}

void drop_shape(pb_cudnn_shape *sh)
{
    drop_pass(&sh->rows);
    drop_pass(&sh->cols);
    memset(sh, 0, sizeof *sh);
}

// A pass's descriptors: x rows_in x width, y rows_out x width, the taps as a
// filter_h x filter_w filter, padding pad_h, pad_w; then the workspace each
// direct algorithm needs. PB_ERR_UNSUPPORTED when cuDNN has none for it.
pb_status describe_pass(cudnnHandle_t h, pb_cudnn_pass *p, enum pb_precision prec, int rows_in, int rows_out,
                        int width, int filter_h, int filter_w, int pad_h, int pad_w, const char *name)
{
    cudnnDataType_t t = data_type(prec);
    PB_CUDNN_CHECK("cudnnCreateTensorDescriptor", api.create_tensor(&p->x));
    PB_CUDNN_CHECK("cudnnSetTensor4dDescriptor", api.set_tensor(p->x, CUDNN_TENSOR_NCHW, t, 1, 1, rows_in, width));
    PB_CUDNN_CHECK("cudnnCreateTensorDescriptor", api.create_tensor(&p->y));
    PB_CUDNN_CHECK("cudnnSetTensor4dDescriptor", api.set_tensor(p->y, CUDNN_TENSOR_NCHW, t, 1, 1, rows_out, width));
    PB_CUDNN_CHECK("cudnnCreateFilterDescriptor", api.create_filter(&p->f));
    PB_CUDNN_CHECK("cudnnSetFilter4dDescriptor",
                   api.set_filter(p->f, t, CUDNN_TENSOR_NCHW, 1, 1, filter_h, filter_w));
    PB_CUDNN_CHECK("cudnnCreateConvolutionDescriptor", api.create_conv(&p->conv));
    PB_CUDNN_CHECK("cudnnSetConvolution2dDescriptor",
                   api.set_conv(p->conv, pad_h, pad_w, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, t));
    PB_CUDNN_CHECK("cudnnSetConvolutionMathType",
                   api.set_math(p->conv, prec == PB_DOUBLE ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    bool any = false;
    cudnnStatus_t error = CUDNN_STATUS_SUCCESS; // the first failure that is not "not supported"
    for (size_t i = 0; i < PB_CUDNN_ALGOS; i++) {
        size_t bytes = 0;
        cudnnStatus_t r = api.workspace_size(h, p->x, p->f, p->conv, p->y, direct_algos[i], &bytes);
        p->need[i] = r == CUDNN_STATUS_SUCCESS ? bytes : SIZE_MAX;
        any |= r == CUDNN_STATUS_SUCCESS;
        if (r != CUDNN_STATUS_SUCCESS && !not_supported(r) && error == CUDNN_STATUS_SUCCESS)
            error = r;
    }
    if (!any && error != CUDNN_STATUS_SUCCESS)
        return cudnn_status(error, "cudnnGetConvolutionForwardWorkspaceSize", __FILE__, __LINE__);
    if (!any)
        return pb__fail(PB_ERR_UNSUPPORTED,
                        "cuDNN has no direct-sum algorithm for the %s pass (%d x %d image, %d x %d filter)", name,
                        rows_in, width, filter_h, filter_w);
    return PB_OK;
}

pb_status describe_shape(cudnnHandle_t h, pb_cudnn_shape *sh, const pb_conv_args *a)
{
    size_t first = 0, pad = 0;
    column_window(a, &first, &pad); // supports() has refused the others
    sh->prec = a->prec;
    sh->width = a->width, sh->height = a->height, sh->in_rows = a->in_rows, sh->in_top = a->in_top;
    sh->radius = a->radius;
    sh->first = first;
    int W = (int)a->width, R = (int)a->radius, taps = 2 * R + 1;
    pb_status st = describe_pass(h, &sh->rows, a->prec, (int)a->in_rows, (int)a->in_rows, W, 1, taps, 0, R, "row");
    if (st == PB_OK)
        st = describe_pass(h, &sh->cols, a->prec, (int)(a->height + 2 * a->radius - 2 * pad), (int)a->height, W,
                           taps, 1, (int)pad, 0, "column");
    return st;
}

// The shape of a, described on first use (least recently used one dropped
// when all are taken).
pb_status shape_for(pb_device *dev, const pb_conv_args *a, pb_cuda_cudnn **out_c, pb_cudnn_shape **out)
{
    pb_cuda_cudnn *c;
    pb_status st = cudnn_state(dev, &c);
    if (st != PB_OK)
        return st;
    *out_c = c;
    pb_cudnn_shape *slot = &c->shapes[0];
    for (pb_cudnn_shape &sh : c->shapes) {
        if (sh.used && sh.prec == a->prec && sh.width == a->width && sh.height == a->height &&
            sh.in_rows == a->in_rows && sh.in_top == a->in_top && sh.radius == a->radius) {
            sh.last = ++c->clock;
            *out = &sh;
            return PB_OK;
        }
        if (slot->used && (!sh.used || sh.last < slot->last))
            slot = &sh;
    }
    if (slot->used)
        drop_shape(slot);
    st = describe_shape(c->handle, slot, a);
    if (st != PB_OK) {
        drop_shape(slot);
        return st;
    }
    slot->used = true;
    slot->last = ++c->clock;
    *out = slot;
    return PB_OK;
}

// The workspace of stream (empty at first; the least recently used one freed
// when all are taken).
pb_status work_for(pb_cuda_cudnn *c, cudaStream_t stream, pb_cudnn_work **out)
{
    pb_cudnn_work *slot = &c->work[0];
    for (pb_cudnn_work &w : c->work) {
        if (w.used && w.stream == stream) {
            w.last = ++c->clock;
            *out = &w;
            return PB_OK;
        }
        if (slot->used && (!w.used || w.last < slot->last))
            slot = &w;
    }
    if (slot->used && slot->ptr)
        PB_CUDA_CHECK(cudaFree(slot->ptr)); // waits for the work that used it
    *slot = pb_cudnn_work{true, ++c->clock, stream, nullptr, 0};
    *out = slot;
    return PB_OK;
}

// w holds at least bytes (exactly bytes when exact).
pb_status resize_work(pb_cudnn_work *w, size_t bytes, bool exact)
{
    if (w->bytes == bytes || (w->bytes > bytes && !exact))
        return PB_OK;
    if (w->ptr)
        PB_CUDA_CHECK(cudaFree(w->ptr)); // waits for the work that used it
    w->ptr = nullptr, w->bytes = 0;
    if (!bytes)
        return PB_OK;
    cudaError_t e = cudaMalloc(&w->ptr, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        w->ptr = nullptr;
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        char want[32], have[32];
        return pb__fail(PB_ERR_NOMEM, "cuDNN: cannot allocate its workspace of %s: %s of GPU memory free",
                        pb__format_bytes((double)bytes, want, sizeof want),
                        pb__format_bytes((double)free_b, have, sizeof have));
    }
    PB_CUDA_CHECK(e);
    w->bytes = bytes;
    return PB_OK;
}

// The fastest algorithm of pass p that cudnnFindConvolutionForwardAlgorithmEx
// times within workspace w (it overwrites y), among the direct, deterministic
// ones; the one needing the least workspace when it times none of them.
pb_status find_algo(cudnnHandle_t h, pb_cudnn_pass *p, const void *x, const void *f, void *y,
                    const pb_cudnn_work *w)
{
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    PB_CUDNN_CHECK("cudnnFindConvolutionForwardAlgorithmEx",
                   api.find(h, p->x, x, p->f, f, p->conv, p->y, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf,
                            w->ptr, w->bytes));
    for (int k = 0; k < n; k++) { // fastest first
        if (perf[k].status != CUDNN_STATUS_SUCCESS || perf[k].determinism != CUDNN_DETERMINISTIC)
            continue;
        for (size_t i = 0; i < PB_CUDNN_ALGOS; i++)
            if (perf[k].algo == direct_algos[i] && p->need[i] <= w->bytes) {
                p->algo = i;
                return PB_OK;
            }
    }
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < PB_CUDNN_ALGOS; i++)
        if (p->need[i] <= w->bytes && (best == SIZE_MAX || p->need[i] < p->need[best]))
            best = i;
    if (best == SIZE_MAX) // choose() sized w for at least one
        return pb__fail(PB_ERR_DEVICE, "cuDNN: no algorithm fits the workspace it was sized for");
    p->algo = best;
    return PB_OK;
}

// Picks the algorithms of sh (first run of the shape), timing the candidates
// whose workspace fits half of the free memory in workspace w.
pb_status choose(pb_cuda_cudnn *c, pb_cudnn_shape *sh, const pb_conv_args *a, pb_cudnn_work *w)
{
    size_t free_b = 0, total_b = 0;
    PB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t budget = (free_b + w->bytes) / 2, size = 0;
    pb_cudnn_pass *passes[] = {&sh->rows, &sh->cols};
    const char *names[] = {"row", "column"};
    for (int k = 0; k < 2; k++) {
        size_t least = SIZE_MAX, most = 0;
        for (size_t i = 0; i < PB_CUDNN_ALGOS; i++) {
            size_t need = passes[k]->need[i];
            if (need < least)
                least = need;
            if (need <= budget && need > most)
                most = need;
        }
        if (least > budget) {
            char want[32], have[32];
            return pb__fail(PB_ERR_NOMEM,
                            "cuDNN: every algorithm of the %s pass needs a workspace of %s or more, over half of "
                            "the %s of GPU memory free",
                            names[k], pb__format_bytes((double)least, want, sizeof want),
                            pb__format_bytes((double)(free_b + w->bytes), have, sizeof have));
        }
        if (most > size)
            size = most;
    }
    pb_status st = resize_work(w, size, false);
    if (st != PB_OK)
        return st;
    size_t elt = pb_precision_size(a->prec);
    const char *tmp = pb__cuda_ptr<const char>(a->tmp);
    if ((st = find_algo(c->handle, &sh->rows, pb__cuda_ptr<const void>(a->in), pb__cuda_ptr<const void>(a->filter),
                        pb__cuda_ptr<void>(a->tmp), w)) != PB_OK ||
        (st = find_algo(c->handle, &sh->cols, tmp + sh->first * a->width * elt,
                        pb__cuda_ptr<const void>(a->filter), pb__cuda_ptr<void>(a->out), w)) != PB_OK)
        return st;
    size_t need_rows = sh->rows.need[sh->rows.algo], need_cols = sh->cols.need[sh->cols.algo];
    sh->work = need_rows > need_cols ? need_rows : need_cols;
    sh->chosen = true;
    // Give back what only the timing needed: the most any chosen shape needs.
    size_t keep = 0;
    for (const pb_cudnn_shape &s : c->shapes)
        if (s.used && s.chosen && s.work > keep)
            keep = s.work;
    return w->bytes > keep ? resize_work(w, keep, true) : PB_OK;
}

bool device_buffers(const pb_conv_args *a)
{
    return !((a->in && a->in->kind != PB_MEM_DEVICE) || (a->out && a->out->kind != PB_MEM_DEVICE) ||
             (a->tmp && a->tmp->kind != PB_MEM_DEVICE) || (a->filter && a->filter->kind != PB_MEM_DEVICE));
}

} // namespace

void pb__cuda_cudnn_release(pb_cuda_device *impl)
{
    pb_cuda_cudnn *c = impl->cudnn;
    if (!c)
        return;
    cudaSetDevice(c->device); // nothing to report to (as cuda_free)
    for (pb_cudnn_shape &sh : c->shapes)
        if (sh.used)
            drop_shape(&sh);
    for (pb_cudnn_work &w : c->work)
        if (w.ptr)
            cudaFree(w.ptr);
    api.destroy(c->handle);
    free(c);
    impl->cudnn = nullptr;
}

bool pb__cuda_conv_cudnn_supports(const pb_device *dev, const void *args, const char **why)
{
    const pb_conv_args *a = conv_args(args);
    static char reason[256];
    size_t first, pad;
    if (!cudnn_load()) {
        *why = api.why;
        return false;
    }
    if (!device_buffers(a)) {
        *why = "conv kernels take device buffers (PB_MEM_DEVICE) only";
        return false;
    }
    if (a->border != PB_CONV_ZERO) {
        *why = "cuDNN pads with zeros: border clamp is not available";
        return false;
    }
    if (a->in_top > a->in_rows || a->height > a->in_rows - a->in_top) {
        *why = "the input has fewer than in_top + height rows";
        return false;
    }
    if (!column_window(a, &first, &pad)) {
        *why = "cuDNN pads top and bottom alike: the halo must lack as many of R rows above as below "
               "(a strip at the image's top or bottom edge does not)";
        return false;
    }
    if (a->width > INT_MAX || a->in_rows > INT_MAX || a->radius > (INT_MAX - 1) / 2 ||
        (a->width && a->in_rows > (size_t)INT_MAX / a->width)) {
        *why = "cuDNN's tensors hold at most 2^31 - 1 elements";
        return false;
    }
    if (!a->width || !a->height)
        return true; // nothing to do
    // Whether cuDNN has an algorithm for the shape (describing it once: the
    // run finds it described). Other failures are the run's to report.
    pb_cuda_cudnn *c;
    pb_cudnn_shape *sh;
    if (shape_for(const_cast<pb_device *>(dev), a, &c, &sh) == PB_ERR_UNSUPPORTED) {
        snprintf(reason, sizeof reason, "%s", pb_last_error());
        *why = reason;
        return false;
    }
    return true;
}

pb_status pb__cuda_conv_cudnn(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_conv_args *a = conv_args(args);
    if (!a->width || !a->height)
        return PB_OK;
    if (!cudnn_load())
        return pb__fail(PB_ERR_UNSUPPORTED, "%s", api.why);
    PB_CUDA_CHECK(cudaSetDevice(dev->index));
    pb_cuda_cudnn *c;
    pb_cudnn_shape *sh;
    pb_cudnn_work *w;
    cudaStream_t stream = pb__cuda_stream(s);
    pb_status st = shape_for(dev, a, &c, &sh);
    if (st == PB_OK)
        st = work_for(c, stream, &w);
    if (st != PB_OK)
        return st;
    PB_CUDNN_CHECK("cudnnSetStream", api.set_stream(c->handle, stream));
    if (!sh->chosen && (st = choose(c, sh, a, w)) != PB_OK)
        return st;
    if ((st = resize_work(w, sh->work, false)) != PB_OK)
        return st;
    static const double one_d = 1, zero_d = 0;
    static const float one_f = 1, zero_f = 0;
    const void *one = a->prec == PB_DOUBLE ? static_cast<const void *>(&one_d) : &one_f;
    const void *zero = a->prec == PB_DOUBLE ? static_cast<const void *>(&zero_d) : &zero_f;
    const char *tmp = pb__cuda_ptr<const char>(a->tmp);
    const void *f = pb__cuda_ptr<const void>(a->filter);
    PB_CUDNN_CHECK("cudnnConvolutionForward (row pass)",
                   api.forward(c->handle, one, sh->rows.x, pb__cuda_ptr<const void>(a->in), sh->rows.f, f,
                               sh->rows.conv, direct_algos[sh->rows.algo], w->ptr, w->bytes, zero, sh->rows.y,
                               pb__cuda_ptr<void>(a->tmp)));
    PB_CUDNN_CHECK("cudnnConvolutionForward (column pass)",
                   api.forward(c->handle, one, sh->cols.x, tmp + sh->first * a->width * pb_precision_size(a->prec),
                               sh->cols.f, f, sh->cols.conv, direct_algos[sh->cols.algo], w->ptr, w->bytes, zero,
                               sh->cols.y, pb__cuda_ptr<void>(a->out)));
    return PB_OK;
}

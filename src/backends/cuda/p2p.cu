// Copies between two GPUs of one node (the p2p benchmark), as nvbandwidth and
// CUDA's p2pBandwidthLatencyTest make them:
//   ce       cudaMemcpyPeerAsync on a stream of the source GPU (its copy
//            engine); with peer access enabled where cudaDeviceCanAccessPeer
//            allows, else the driver stages the copy through host memory
//            (the result says which);
//   sm-pull  a copy kernel on the destination GPU reading the source GPU's
//            memory through peer access;
//   sm-push  a copy kernel on the source GPU writing into the destination's.
// The -bidir variants copy both ways at once, one stream per direction, each
// issued as its one-way twin issues it.
//
// Timing: each direction's stream first waits in a one-thread kernel for a
// flag in pinned host memory; the host raises it once every copy of every
// direction is queued, so the time of issuing them is not measured (the
// blocking kernel of p2pBandwidthLatencyTest, the spin kernel of
// nvbandwidth). Events after that kernel and after the last copy time each
// direction. A copy the driver stages through the host is not held back (it
// may wait on the host itself); its time then includes issuing it.
//
// The runner's device may be neither GPU of the pair: every call makes its
// GPU current, and the device current on entry is current again on return.
#include <stdint.h>
#include <stdio.h>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"

namespace {

enum class engine { ce, sm_pull, sm_push };

constexpr unsigned THREADS = 512;
constexpr unsigned long long GATE_LIMIT_NS = 10ull * 1000 * 1000 * 1000;

__device__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Holds its stream until gate[0] != 0; gives up after GATE_LIMIT_NS and says
// so in gate[1] (the host then reports the run as failed, never a hang).
__global__ void gate_wait(volatile int *gate)
{
    unsigned long long t0 = now_ns();
    while (gate[0] == 0)
        if (now_ns() - t0 > GATE_LIMIT_NS) {
            gate[1] = 1;
            return;
        }
}

// bytes from src to dst, any size and alignment: 16-byte words where both
// are 16-byte aligned (four in flight per thread), then the bytes after the
// last whole word one per thread.
__global__ void __launch_bounds__(THREADS)
    copy_bytes(unsigned char *__restrict__ dst, const unsigned char *__restrict__ src, size_t bytes, bool words)
{
    const size_t n16 = words ? bytes / 16 : 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const uint4 *s = reinterpret_cast<const uint4 *>(src);
    uint4 *d = reinterpret_cast<uint4 *>(dst);
    for (; k + 3 * stride < n16; k += 4 * stride) {
        uint4 a = s[k], b = s[k + stride], c = s[k + 2 * stride], e = s[k + 3 * stride];
        d[k] = a;
        d[k + stride] = b;
        d[k + 2 * stride] = c;
        d[k + 3 * stride] = e;
    }
    for (; k < n16; k += stride)
        d[k] = s[k];
    for (size_t i = n16 * 16 + blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < bytes; i += stride)
        dst[i] = src[i];
}

const pb_p2p_args *p2p_args(const void *args) { return static_cast<const pb_p2p_args *>(args); }

// The GPU (0 or 1 in args->dev) that drives direction l: the source for the
// copy engine and for pushes, the destination for pulls.
int issuer(engine e, int l) { return e == engine::sm_pull ? 1 - l : l; }

struct lane {
    int gpu;     // index into args->dev
    cudaEvent_t start, stop;
};

// Peer access from GPU `from` to GPU `to` where the two allow it; *on says
// whether it is on. Enabling it again is not an error.
pb_status enable_peer(int from, int to, bool *on)
{
    int can = 0;
    PB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
    *on = can != 0;
    if (!can)
        return PB_OK;
    PB_CUDA_CHECK(cudaSetDevice(from));
    cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError(); // not sticky: clear it so later checks do not see it
        e = cudaSuccess;
    }
    PB_CUDA_CHECK(e);
    return PB_OK;
}

// Peer access for every direction, and each direction's events.
pb_status setup(engine e, const pb_p2p_args *a, lane *lanes, bool *peer)
{
    *peer = true;
    for (int l = 0; l < a->directions; l++) {
        lanes[l].gpu = issuer(e, l);
        bool on = false;
        pb_status st = enable_peer(a->dev[lanes[l].gpu]->index, a->dev[1 - lanes[l].gpu]->index, &on);
        if (st != PB_OK)
            return st;
        *peer &= on;
    }
    if (!*peer && e != engine::ce)
        return pb__fail(PB_ERR_UNSUPPORTED, "a copy kernel needs peer access between GPU %d and GPU %d",
                        a->dev[0]->index, a->dev[1]->index);
    for (int l = 0; l < a->directions; l++) {
        PB_CUDA_CHECK(cudaSetDevice(a->dev[lanes[l].gpu]->index));
        PB_CUDA_CHECK(cudaEventCreate(&lanes[l].start));
        PB_CUDA_CHECK(cudaEventCreate(&lanes[l].stop));
    }
    return PB_OK;
}

unsigned copy_blocks(const pb_device *dev, size_t bytes)
{
    size_t work = bytes / 16 > bytes % 16 ? bytes / 16 : bytes % 16;
    size_t want = (work + THREADS - 1) / THREADS;
    size_t most = (size_t)static_cast<const pb_cuda_device *>(dev->impl)->prop.multiProcessorCount * 8;
    if (want > most)
        want = most;
    return want ? (unsigned)want : 1;
}

// Every direction's gate, start event, copies and stop event. Directions take
// turns copy by copy, so neither is queued far ahead of the other.
pb_status enqueue(engine e, const pb_p2p_args *a, lane *lanes, bool gated)
{
    for (int l = 0; l < a->directions; l++) {
        cudaStream_t s = pb__cuda_stream(a->stream[lanes[l].gpu]);
        PB_CUDA_CHECK(cudaSetDevice(a->dev[lanes[l].gpu]->index));
        if (gated) {
            gate_wait<<<1, 1, 0, s>>>(static_cast<volatile int *>(a->gate->host));
            PB_CUDA_CHECK_LAUNCH();
        }
        PB_CUDA_CHECK(cudaEventRecord(lanes[l].start, s));
    }
    for (size_t c = 0; c < a->copies; c++)
        for (int l = 0; l < a->directions; l++) {
            const pb_device *from = a->dev[l], *to = a->dev[1 - l], *drive = a->dev[lanes[l].gpu];
            cudaStream_t s = pb__cuda_stream(a->stream[lanes[l].gpu]);
            auto *dst = pb__cuda_ptr<unsigned char>(a->dst[l]);
            const auto *src = pb__cuda_ptr<const unsigned char>(a->src[l]);
            PB_CUDA_CHECK(cudaSetDevice(drive->index));
            if (e == engine::ce) {
                PB_CUDA_CHECK(cudaMemcpyPeerAsync(dst, to->index, src, from->index, a->bytes, s));
            } else {
                bool words = (reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) % 16 == 0;
                copy_bytes<<<copy_blocks(drive, a->bytes), THREADS, 0, s>>>(dst, src, a->bytes, words);
                PB_CUDA_CHECK_LAUNCH();
            }
        }
    for (int l = 0; l < a->directions; l++) {
        PB_CUDA_CHECK(cudaSetDevice(a->dev[lanes[l].gpu]->index));
        PB_CUDA_CHECK(cudaEventRecord(lanes[l].stop, pb__cuda_stream(a->stream[lanes[l].gpu])));
    }
    return PB_OK;
}

// Keeps the first failure of a clean-up step that must go on past it.
void keep(pb_status *st, cudaError_t e, const char *expr, int line)
{
    if (e != cudaSuccess && *st == PB_OK)
        *st = pb__cuda_status(e, expr, __FILE__, line);
}
#define PB_P2P_KEEP(st, expr) keep(&(st), (expr), #expr, __LINE__)

pb_status run(engine e, const void *args)
{
    const pb_p2p_args *a = p2p_args(args);
    if (a->directions < 1 || a->directions > 2 || !a->gate || !a->gate->host || !a->result)
        return pb__fail(PB_ERR_INVALID, "p2p: malformed arguments");
    int prev = 0;
    PB_CUDA_CHECK(cudaGetDevice(&prev));
    volatile int *gate = static_cast<volatile int *>(a->gate->host);
    gate[0] = 0;
    gate[1] = 0;
    lane lanes[2] = {};
    bool peer = false;
    pb_status st = setup(e, a, lanes, &peer);
    if (st == PB_OK)
        st = enqueue(e, a, lanes, e != engine::ce || peer);
    __sync_synchronize();
    gate[0] = 1; // also after a failure: what was queued must drain before the buffers go
    __sync_synchronize();
    for (int l = 0; l < a->directions; l++)
        PB_P2P_KEEP(st, cudaStreamSynchronize(pb__cuda_stream(a->stream[issuer(e, l)])));
    if (st == PB_OK && gate[1])
        st = pb__fail(PB_ERR_DEVICE, "p2p: the copies were held back for %llu s without being released",
                      GATE_LIMIT_NS / 1000000000ull);
    double seconds = 0;
    for (int l = 0; l < a->directions && st == PB_OK; l++) {
        float ms = 0;
        PB_P2P_KEEP(st, cudaEventElapsedTime(&ms, lanes[l].start, lanes[l].stop));
        seconds = ms * 1e-3 > seconds ? ms * 1e-3 : seconds;
    }
    for (int l = 0; l < a->directions; l++) {
        if (lanes[l].start)
            PB_P2P_KEEP(st, cudaEventDestroy(lanes[l].start));
        if (lanes[l].stop)
            PB_P2P_KEEP(st, cudaEventDestroy(lanes[l].stop));
    }
    PB_P2P_KEEP(st, cudaSetDevice(prev));
    if (st == PB_OK)
        *a->result = pb_p2p_result{seconds, peer ? 1 : 0};
    return st;
}

// Copy kernels need peer access in the direction each one reaches.
bool sm_supports(const void *args, engine e, const char **why)
{
    static char reason[200];
    const pb_p2p_args *a = p2p_args(args);
    for (int l = 0; l < a->directions; l++) {
        int from = a->dev[issuer(e, l)]->index, to = a->dev[1 - issuer(e, l)]->index, can = 0;
        cudaError_t err = cudaDeviceCanAccessPeer(&can, from, to);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(reason, sizeof reason, "cudaDeviceCanAccessPeer(%d, %d) failed: %s", from, to,
                     cudaGetErrorString(err));
            *why = reason;
            return false;
        }
        if (!can) {
            snprintf(reason, sizeof reason,
                     "no peer access from GPU %d to GPU %d (cudaDeviceCanAccessPeer): a kernel there cannot "
                     "reach the other's memory",
                     from, to);
            *why = reason;
            return false;
        }
    }
    return true;
}

} // namespace

pb_status pb__cuda_p2p_ce(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    return run(engine::ce, args);
}

pb_status pb__cuda_p2p_sm_pull(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    return run(engine::sm_pull, args);
}

pb_status pb__cuda_p2p_sm_push(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev, (void)s;
    return run(engine::sm_push, args);
}

bool pb__cuda_p2p_sm_pull_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    return sm_supports(args, engine::sm_pull, why);
}

bool pb__cuda_p2p_sm_push_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    return sm_supports(args, engine::sm_push, why);
}

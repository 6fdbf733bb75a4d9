// The CUDA backend: device query, memory of every kind, copies, streams and
// event timers over the CUDA runtime; kernels in gemm.cu and friends. With no
// driver or no device the backend reports itself unavailable (every CUDA row
// is then SKIP with the reason) and nothing else is touched.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "core/cpuinfo.h"
#include "core/kernel_data.h"

// Probed once (pthread_once: threads opening devices at once all wait for
// the count and its reason).
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int device_count_cached;
static char unavailable_reason[256];

static void probe_devices()
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver)
        dlclose(driver);
    if (e != cudaSuccess && !driver) {
        // The runtime reports a missing driver as an "insufficient" one.
        snprintf(unavailable_reason, sizeof unavailable_reason, "no NVIDIA driver (libcuda.so.1 not found)");
        n = 0;
        (void)cudaGetLastError();
    } else if (e != cudaSuccess) {
        snprintf(unavailable_reason, sizeof unavailable_reason, "no usable CUDA driver or device (%s)",
                 cudaGetErrorString(e));
        n = 0;
        (void)cudaGetLastError(); // clear the sticky error
    } else if (n == 0) {
        snprintf(unavailable_reason, sizeof unavailable_reason, "no CUDA device");
    }
    device_count_cached = n;
}

static bool cuda_available(const char **why)
{
    pthread_once(&probe_once, probe_devices);
    *why = unavailable_reason;
    return device_count_cached > 0;
}

static int cuda_device_count(void)
{
    const char *why;
    return cuda_available(&why) ? device_count_cached : 0;
}

#ifndef PB_CUDA_ARCHS_BUILT
#define PB_CUDA_ARCHS_BUILT "?"
#endif

// Every CUDA file is built for the same architectures (PB_CUDA_ARCHS), so
// whether this kernel loads on a device says whether any of them will.
__global__ void pb_cuda_probe_kernel() {}

static pb_status check_code_for(const cudaDeviceProp &p)
{
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, pb_cuda_probe_kernel);
    if (e == cudaSuccess)
        return PB_OK;
    (void)cudaGetLastError();
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction)
        return pb__fail(PB_ERR_UNAVAILABLE,
                        "this build has no code for %s (compute capability %d.%d; built for %s): "
                        "rebuild with -DPB_CUDA_ARCHS=%d%d",
                        p.name, p.major, p.minor, PB_CUDA_ARCHS_BUILT, p.major, p.minor);
    if (e == cudaErrorUnsupportedPtxVersion || e == cudaErrorInvalidPtx) {
        int driver = 0;
        (void)cudaDriverGetVersion(&driver);
        return pb__fail(PB_ERR_UNAVAILABLE,
                        "the NVIDIA driver (CUDA %d.%d) cannot compile this build's code (CUDA %d.%d, built for %s): "
                        "update the driver, or rebuild with -DPB_CUDA_ARCHS=%d%d",
                        driver / 1000, (driver % 1000) / 10, CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10,
                        PB_CUDA_ARCHS_BUILT, p.major, p.minor);
    }
    return pb__cuda_status(e, "loading a kernel", __FILE__, __LINE__);
}

static pb_status cuda_open(pb_device *dev, int index)
{
    PB_CUDA_CHECK(cudaSetDevice(index));
    auto *impl = static_cast<pb_cuda_device *>(calloc(1, sizeof(pb_cuda_device)));
    if (!impl)
        return pb__fail(PB_ERR_NOMEM, "cannot allocate the CUDA device state");
    pb__cuda_sparse_init(impl);
    cudaError_t e = cudaGetDeviceProperties(&impl->prop, index);
    if (e == cudaSuccess)
        e = cudaFree(nullptr); // create the context now, not inside the first timed run
    if (e == cudaSuccess) {
        pb_status st = check_code_for(impl->prop);
        if (st != PB_OK) {
            free(impl);
            return st;
        }
    }
    // Kernels take scratch space with cudaMallocAsync; keeping freed memory in
    // the pool makes that a cheap stream-ordered step instead of a remap.
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    if (e == cudaSuccess)
        e = cudaDeviceGetDefaultMemPool(&pool, index);
    if (e == cudaSuccess)
        e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    if (e != cudaSuccess) {
        free(impl);
        return pb__cuda_status(e, "opening the device", __FILE__, __LINE__);
    }
    dev->impl = impl;
    dev->threads = 0;
    snprintf(dev->name, sizeof dev->name, "%s", impl->prop.name);
    return PB_OK;
}

static void cuda_close(pb_device *dev)
{
    pb_cuda_device *impl = pb__cuda(dev);
    if (!impl)
        return;
    if (impl->blas)
        cublasDestroy(impl->blas);
    pb__plans_clear(&impl->sparse);
#ifdef PB_HAVE_NCCL
    pb__cuda_nccl_release(impl);
#endif
#ifdef PB_HAVE_CUDNN
    pb__cuda_cudnn_release(impl);
#endif
    free(impl);
}

pb_status pb__cuda_blas(pb_device *dev, pb_stream *s, cublasHandle_t *out)
{
    pb_cuda_device *impl = pb__cuda(dev);
    if (!impl->blas) {
        PB_CUBLAS_CHECK(cublasCreate(&impl->blas));
        // FP32 stays FP32: no TF32 tensor-core shortcut in the anchor.
        PB_CUBLAS_CHECK(cublasSetMathMode(impl->blas, CUBLAS_DEFAULT_MATH));
    }
    PB_CUBLAS_CHECK(cublasSetStream(impl->blas, pb__cuda_stream(s)));
    *out = impl->blas;
    return PB_OK;
}

// PCIe link through NVML when the driver ships it (looked up at run time so the
// binary does not depend on the driver being installed).
static void add_pcie_link(struct pb_device_info *out, const char *bus_id)
{
    void *nvml = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!nvml)
        return;
    typedef int (*init_fn)(void);
    typedef int (*by_bus_fn)(const char *, void **);
    typedef int (*link_fn)(void *, unsigned *);
    auto init = reinterpret_cast<init_fn>(dlsym(nvml, "nvmlInit_v2"));
    auto by_bus = reinterpret_cast<by_bus_fn>(dlsym(nvml, "nvmlDeviceGetHandleByPciBusId_v2"));
    auto gen = reinterpret_cast<link_fn>(dlsym(nvml, "nvmlDeviceGetCurrPcieLinkGeneration"));
    auto width = reinterpret_cast<link_fn>(dlsym(nvml, "nvmlDeviceGetCurrPcieLinkWidth"));
    auto max_gen = reinterpret_cast<link_fn>(dlsym(nvml, "nvmlDeviceGetMaxPcieLinkGeneration"));
    auto max_width = reinterpret_cast<link_fn>(dlsym(nvml, "nvmlDeviceGetMaxPcieLinkWidth"));
    auto shutdown = reinterpret_cast<init_fn>(dlsym(nvml, "nvmlShutdown"));
    void *handle = nullptr;
    unsigned g = 0, w = 0, mg = 0, mw = 0;
    if (init && by_bus && gen && width && shutdown && init() == 0) {
        if (by_bus(bus_id, &handle) == 0 && gen(handle, &g) == 0 && width(handle, &w) == 0) {
            if (max_gen && max_width && max_gen(handle, &mg) == 0 && max_width(handle, &mw) == 0)
                pb__info_add(out, "pcie_link", "gen %u x%u (max gen %u x%u)", g, w, mg, mw);
            else
                pb__info_add(out, "pcie_link", "gen %u x%u", g, w);
        }
        shutdown();
    }
    dlclose(nvml);
}

static pb_status cuda_info(pb_device *dev, struct pb_device_info *out)
{
    const cudaDeviceProp &p = pb__cuda(dev)->prop;
    int d = dev->index, clock_khz = 0, mem_khz = 0, ecc = 0;
    PB_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d));
    PB_CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, d));
    PB_CUDA_CHECK(cudaDeviceGetAttribute(&ecc, cudaDevAttrEccEnabled, d));
    int driver = 0, runtime = 0;
    PB_CUDA_CHECK(cudaDriverGetVersion(&driver));
    PB_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    char bus[32] = "";
    PB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));

    snprintf(out->name, sizeof out->name, "%s", p.name);
    snprintf(out->kind, sizeof out->kind, "gpu");
    pb__info_add(out, "compute_capability", "%d.%d", p.major, p.minor);
    pb__info_add(out, "multiprocessors", "%d", p.multiProcessorCount);
    pb__info_add(out, "global_memory", "%.1f GiB", (double)p.totalGlobalMem / (1u << 30));
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) // what is free now (the lifecycle test watches it)
        pb__info_add(out, "free_memory_bytes", "%zu", free_bytes);
    pb__info_add(out, "gpu_clock", "%.0f MHz", clock_khz / 1e3);
    pb__info_add(out, "memory_clock", "%.0f MHz", mem_khz / 1e3);
    pb__info_add(out, "memory_bus_width", "%d bits", p.memoryBusWidth);
    // DDR: two transfers per clock.
    pb__info_add(out, "peak_memory_bandwidth", "%.0f GB/s (from clock and bus width)",
                 2.0 * mem_khz * 1e3 * (p.memoryBusWidth / 8) / 1e9);
    pb__info_add(out, "l2_cache", "%.1f MiB", p.l2CacheSize / 1048576.0);
    pb__info_add(out, "shared_memory_per_block", "%zu KiB (opt-in %zu KiB)", p.sharedMemPerBlock / 1024,
                 p.sharedMemPerBlockOptin / 1024);
    pb__info_add(out, "shared_memory_per_sm", "%zu KiB", p.sharedMemPerMultiprocessor / 1024);
    pb__info_add(out, "registers_per_block", "%d", p.regsPerBlock);
    pb__info_add(out, "registers_per_sm", "%d", p.regsPerMultiprocessor);
    pb__info_add(out, "warp_size", "%d", p.warpSize);
    pb__info_add(out, "max_threads_per_block", "%d", p.maxThreadsPerBlock);
    pb__info_add(out, "max_threads_per_sm", "%d", p.maxThreadsPerMultiProcessor);
    pb__info_add(out, "max_block_dims", "%d x %d x %d", p.maxThreadsDim[0], p.maxThreadsDim[1],
                 p.maxThreadsDim[2]);
    pb__info_add(out, "max_grid_dims", "%d x %d x %d", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
    pb__info_add(out, "copy_engines", "%d", p.asyncEngineCount);
    pb__info_add(out, "concurrent_kernels", "%s", p.concurrentKernels ? "yes" : "no");
    pb__info_add(out, "ecc", "%s", ecc ? "on" : "off");
    pb__info_add(out, "unified_addressing", "%s", p.unifiedAddressing ? "yes" : "no");
    pb__info_add(out, "pci_bus_id", "%s", bus);
    add_pcie_link(out, bus);
    pb__info_add(out, "driver_version", "%d.%d", driver / 1000, (driver % 1000) / 10);
    pb__info_add(out, "runtime_version", "%d.%d", runtime / 1000, (runtime % 1000) / 10);
    return PB_OK;
}

// ---- memory -----------------------------------------------------------------

// Several devices may be open at once (p2p opens both GPUs of a pair), and the
// runtime works on the current one: every call that allocates, queues or
// waits makes its device current first.
#define PB_CUDA_USE(dev) PB_CUDA_CHECK(cudaSetDevice((dev)->index))

static pb_status cuda_alloc(pb_device *dev, pb_buf *buf)
{
    PB_CUDA_USE(dev);
    size_t bytes = buf->bytes ? buf->bytes : 1;
    char size[32];
    switch (buf->kind) {
    case PB_MEM_DEVICE: {
        cudaError_t e = cudaMalloc(&buf->handle, bytes);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            size_t free_b = 0, total_b = 0;
            cudaMemGetInfo(&free_b, &total_b);
            char have[32];
            return pb__fail(PB_ERR_NOMEM, "cannot allocate %s of GPU memory: %s free",
                            pb__format_bytes((double)bytes, size, sizeof size),
                            pb__format_bytes((double)free_b, have, sizeof have));
        }
        PB_CUDA_CHECK(e);
        return PB_OK;
    }
    case PB_MEM_PINNED:
        if (pb__host_mem_lacks(bytes))
            return pb__fail(PB_ERR_NOMEM, "cannot pin %s of host memory: not that much available",
                            pb__format_bytes((double)bytes, size, sizeof size));
        PB_CUDA_CHECK(cudaMallocHost(&buf->host, bytes));
        return PB_OK;
    case PB_MEM_PAGEABLE:
        return pb__host_alloc(bytes, "a pageable host buffer", &buf->host);
    }
    return pb__fail(PB_ERR_INVALID, "unknown memory kind");
}

static void cuda_free(pb_device *dev, pb_buf *buf)
{
    cudaSetDevice(dev->index); // nothing to report to: a failure shows in the next checked call
    if (buf->kind == PB_MEM_DEVICE)
        cudaFree(buf->handle);
    else if (buf->kind == PB_MEM_PINNED)
        cudaFreeHost(buf->host);
    else
        pb__host_free(buf->host);
}

static pb_status cuda_pin_host(pb_device *dev, pb_buf *buf)
{
    PB_CUDA_USE(dev);
    cudaError_t e = cudaHostRegister(buf->host, buf->bytes, cudaHostRegisterDefault);
    if (e == cudaErrorHostMemoryAlreadyRegistered || e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); // not sticky: the caller may stage instead
        char size[32];
        return pb__fail(e == cudaErrorMemoryAllocation ? PB_ERR_NOMEM : PB_ERR_UNSUPPORTED,
                        "cannot page-lock %s of host memory in place: %s",
                        pb__format_bytes((double)buf->bytes, size, sizeof size), cudaGetErrorString(e));
    }
    PB_CUDA_CHECK(e);
    return PB_OK;
}

static void cuda_unpin_host(pb_device *dev, pb_buf *buf)
{
    cudaSetDevice(dev->index); // as in cuda_free
    cudaHostUnregister(buf->host);
}

static void cuda_buf_gone(pb_device *dev, const pb_buf *buf)
{
    if (pb_cuda_device *impl = pb__cuda(dev))
        pb__plans_forget(&impl->sparse, buf); // its matrix's plans, if it held row offsets
}

static void *address(const pb_buf *b, size_t off)
{
    return static_cast<char *>(b->handle ? b->handle : b->host) + off;
}

static pb_status cuda_write(pb_buf *dst, size_t off, const void *src, size_t bytes)
{
    PB_CUDA_USE(dst->dev);
    if (bytes)
        PB_CUDA_CHECK(cudaMemcpy(address(dst, off), src, bytes, cudaMemcpyDefault));
    return PB_OK;
}

static pb_status cuda_read(const pb_buf *src, size_t off, void *dst, size_t bytes)
{
    PB_CUDA_USE(src->dev);
    if (bytes)
        PB_CUDA_CHECK(cudaMemcpy(dst, address(src, off), bytes, cudaMemcpyDefault));
    return PB_OK;
}

static pb_status cuda_fill(pb_buf *buf, unsigned char value)
{
    PB_CUDA_USE(buf->dev);
    if (buf->kind == PB_MEM_DEVICE)
        PB_CUDA_CHECK(cudaMemset(buf->handle, value, buf->bytes));
    else
        memset(buf->host, value, buf->bytes);
    return PB_OK;
}

static pb_status cuda_copy(pb_buf *dst, size_t dst_off, const pb_buf *src, size_t src_off, size_t bytes,
                           pb_stream *s)
{
    if (!bytes)
        return PB_OK;
    PB_CUDA_USE(src->dev);
    // Unified addressing lets the runtime infer the direction from the pointers.
    if (s)
        PB_CUDA_CHECK(cudaMemcpyAsync(address(dst, dst_off), address(src, src_off), bytes, cudaMemcpyDefault,
                                      pb__cuda_stream(s)));
    else
        PB_CUDA_CHECK(cudaMemcpy(address(dst, dst_off), address(src, src_off), bytes, cudaMemcpyDefault));
    return PB_OK;
}

static pb_status cuda_sync(pb_device *dev)
{
    PB_CUDA_USE(dev);
    PB_CUDA_CHECK(cudaDeviceSynchronize());
    return PB_OK;
}

// ---- streams and event timers -----------------------------------------------

static pb_status cuda_stream_create(pb_device *dev, pb_stream *s)
{
    PB_CUDA_USE(dev);
    cudaStream_t stream;
    int least = 0, greatest = 0; // the greatest priority is the lowest number
    if (s->urgent)
        PB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    // Blocking with respect to the legacy default stream, so events recorded
    // there bracket work on every stream.
    PB_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamDefault, greatest));
    s->handle = stream;
    return PB_OK;
}

static void cuda_stream_destroy(pb_stream *s)
{
    cudaSetDevice(s->dev->index); // as in cuda_free
    if (s->marker)
        cudaEventDestroy(static_cast<cudaEvent_t>(s->marker));
    cudaStreamDestroy(pb__cuda_stream(s));
}

static pb_status cuda_stream_wait(pb_stream *waiter, pb_stream *on)
{
    PB_CUDA_USE(on->dev);
    if (!on->marker) {
        cudaEvent_t ev;
        PB_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
        on->marker = ev;
    }
    cudaEvent_t ev = static_cast<cudaEvent_t>(on->marker);
    PB_CUDA_CHECK(cudaEventRecord(ev, pb__cuda_stream(on)));
    PB_CUDA_CHECK(cudaStreamWaitEvent(pb__cuda_stream(waiter), ev, 0));
    return PB_OK;
}

static pb_status cuda_stream_sync(pb_stream *s)
{
    PB_CUDA_CHECK(cudaStreamSynchronize(pb__cuda_stream(s)));
    return PB_OK;
}

static pb_status cuda_timer_create(pb_device *dev, pb_timer *t)
{
    PB_CUDA_USE(dev);
    cudaEvent_t a, b;
    PB_CUDA_CHECK(cudaEventCreate(&a));
    cudaError_t e = cudaEventCreate(&b);
    if (e != cudaSuccess) {
        cudaEventDestroy(a);
        return pb__cuda_status(e, "cudaEventCreate", __FILE__, __LINE__);
    }
    t->start = a;
    t->stop = b;
    return PB_OK;
}

static void cuda_timer_destroy(pb_timer *t)
{
    cudaSetDevice(t->dev->index); // as in cuda_free
    cudaEventDestroy(static_cast<cudaEvent_t>(t->start));
    cudaEventDestroy(static_cast<cudaEvent_t>(t->stop));
}

static pb_status cuda_timer_record(pb_timer *t, bool stop, pb_stream *s)
{
    PB_CUDA_USE(t->dev); // NULL = the legacy default stream of the current device
    PB_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(stop ? t->stop : t->start), pb__cuda_stream(s)));
    return PB_OK;
}

static pb_status cuda_timer_elapsed(pb_timer *t, double *seconds)
{
    float ms = 0;
    PB_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(t->stop)));
    PB_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(t->start), static_cast<cudaEvent_t>(t->stop)));
    *seconds = ms * 1e-3;
    return PB_OK;
}

// ---- energy -------------------------------------------------------------------

// NVML finds the GPU by its PCI bus id (core/energy.h), never by index.
static pb_status cuda_energy_domain(pb_device *dev, struct pb_energy_domain *out)
{
    memset(out, 0, sizeof *out);
    PB_CUDA_CHECK(cudaDeviceGetPCIBusId(out->pci_bus_id, sizeof out->pci_bus_id, dev->index));
    out->kind = PB_ENERGY_PCI_GPU;
    return PB_OK;
}

// ---- registration -------------------------------------------------------------

static const struct pb_variant cuda_variants[] = {
    {.desc = {"gemm", "naive", "one thread per element of C, operands from global memory", PB_VARIANT_SHAPED}, .supports = pb__cuda_gemm_naive_supports, .run = pb__cuda_gemm_naive},
    {.desc = {"gemm", "tiled8", "8x8 shared-memory tiles (the overlap study's kernel)", 0}, .supports = pb__cuda_gemm_supports, .run = pb__cuda_gemm_tiled8},
    {.desc = {"gemm", "tiled16", "16x16 shared-memory tiles", 0}, .supports = pb__cuda_gemm_supports, .run = pb__cuda_gemm_tiled16},
    {.desc = {"gemm", "tiled32", "32x32 shared-memory tiles", 0}, .supports = pb__cuda_gemm_supports, .run = pb__cuda_gemm_tiled32},
    {.desc = {"gemm", "regblock", "register-blocked tiles, vector loads, double-buffered shared memory", 0}, .supports = pb__cuda_gemm_supports, .run = pb__cuda_gemm_regblock},
    {.desc = {"gemm", "dmma", "FP64 tensor cores (mma.sync), cp.async pipeline; double only", 0}, .supports = pb__cuda_gemm_dmma_supports, .run = pb__cuda_gemm_dmma},
    {.desc = {"gemm", "tc", "tensor cores (wmma): tf32, bf16, fp16 inputs, fp32 accumulation; 128x128 tiles, 4 warps of 64x64", PB_VARIANT_LOWP}, .supports = pb__cuda_gemm_tc_supports, .run = pb__cuda_gemm_tc},
    {.desc = {"gemm", "wgmma", "Hopper tensor cores: warpgroup MMA fed by TMA, 128x256 tiles (128x128, 128x64 for thin C), split-K; tf32, bf16, fp16 (sm_90a)", PB_VARIANT_LOWP}, .supports = pb__cuda_gemm_wgmma_supports, .run = pb__cuda_gemm_wgmma},
    {.desc = {"gemm", "cublas", "cuBLAS sgemm/dgemm (TF32 off); cublasGemmEx for tf32, bf16, fp16", PB_VARIANT_ANCHOR | PB_VARIANT_LOWP}, .supports = pb__cuda_gemm_cublas_supports, .run = pb__cuda_gemm_cublas},
    {.desc = {"spmv", "csr-scalar", "CSR, one thread per row (the study's 1D blocks); 32- or 64-bit row offsets", PB_VARIANT_PTR64}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_scalar, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-vector", "CSR, --group threads per row reduced by shuffles (the study's 2D blocks); 32- or 64-bit row offsets", PB_VARIANT_PTR64}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_vector, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-adaptive", "CSR, longer rows listed (once per matrix) and given a warp or a block each, beside csr-vector", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_adaptive, .data = &pb__spmv_csr, .prepare = pb__cuda_spmv_adaptive_prepare},
    {.desc = {"spmv", "csr-merge", "CSR, merge-path split of rows + non-zeros (irregular matrices)",PB_VARIANT_VARIES}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_merge, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-balanced", "CSR, rows packed into blocks of equal non-zeros (planned once per matrix), long rows split over blocks", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_balanced, .data = &pb__spmv_csr, .prepare = pb__cuda_spmv_balanced_prepare},
    {.desc = {"spmv", "csr-split", "CSR, the non-zeros split evenly over blocks regardless of rows, rows crossing threads and blocks summed in order (planned on the device)", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_split, .data = &pb__spmv_csr, .prepare = pb__cuda_spmv_split_prepare},
    {.desc = {"spmv", "ell", "ELLPACK row-major, one thread per row", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_ell, .data = &pb__spmv_ell},
    {.desc = {"spmv", "ellt", "ELLPACK transposed (column-major), one thread per row, coalesced", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_ellt, .data = &pb__spmv_ellt},
    {.desc = {"spmv", "bcsr", "CSR in, a copy in dense blocks (made once per matrix, 2x2..8x8, the size moving the fewest bytes; refused where none moves fewer than CSR): block ELLPACK, a thread per row, or block CSR where padding adds over 25%", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_bcsr, .data = &pb__spmv_csr, .prepare = pb__cuda_spmv_bcsr_prepare},
    {.desc = {"spmv", "dia", "CSR in, a diagonal copy (made on the device once per matrix: stencils and bands of at most 64 diagonals, no column indices; refused where the diagonals, each stored over the rows it spans, move more bytes than CSR), a thread per row", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_dia, .data = &pb__spmv_csr, .prepare = pb__cuda_spmv_dia_prepare},
    {.desc = {"spmv", "csr-panels", "CSR in, a copy cut into panels of columns whose share of x fits in a third of L2 (made on the device once per matrix; refused where x fits), csr-split over each panel, the later ones adding into y", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_panels, .data = &pb__spmv_csr, .prepare = pb__cuda_spmv_panels_prepare},
    {.desc = {"spmv", "csr-hubs", "CSR in, the columns renumbered once per matrix so that the hub columns (4 times the mean count of entries or more; refused where they hold under 30% of the entries) are read from a packed copy of their entries of x, made before each product; csr-split over the renumbered columns", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_hubs, .data = &pb__spmv_csr, .prepare = pb__cuda_spmv_hubs_prepare},
    {.desc = {"spmv", "auto", "CSR in, the fastest of csr-balanced, csr-split, an ELLT copy (where the row lengths allow), a block CSR copy (where blocks move fewer bytes), a diagonal copy (likewise), csr-panels' copy (where x outgrows a third of L2), csr-vector (long rows) and csr-hubs' copy (where hub columns hold 30% of the entries) timed once per matrix; the row says which", 0}, .supports = pb__cuda_spmv_supports, .run = pb__cuda_spmv_auto, .data = &pb__spmv_csr, .prepare = pb__cuda_spmv_auto_prepare},
    {.desc = {"spmv", "cusparse", "cuSPARSE cusparseSpMV (CSR, default algorithm, preprocessed); 32- or 64-bit row offsets (these with a 64-bit copy of the columns)", PB_VARIANT_ANCHOR | PB_VARIANT_PTR64}, .supports = pb__cuda_spmv_cusparse_supports, .run = pb__cuda_spmv_cusparse, .data = &pb__spmv_csr, .prepare = pb__cuda_spmv_cusparse_prepare},
    {.desc = {"transpose", "copy", "vec64's 16-byte loads and stores without transposing: the bound", PB_VARIANT_BOUND}, .supports = pb__cuda_transpose_supports, .run = pb__cuda_transpose_copy},
    {.desc = {"transpose", "naive", "coalesced reads, strided writes", 0}, .supports = pb__cuda_transpose_supports, .run = pb__cuda_transpose_naive},
    {.desc = {"transpose", "coalesced", "32x32 tile through shared memory (bank conflicts on its columns)", 0}, .supports = pb__cuda_transpose_supports, .run = pb__cuda_transpose_coalesced},
    {.desc = {"transpose", "padded", "the tile padded by a column: no bank conflicts", 0}, .supports = pb__cuda_transpose_supports, .run = pb__cuda_transpose_padded},
    {.desc = {"transpose", "diagonal", "padded, blocks walked along diagonals (partition camping)", 0}, .supports = pb__cuda_transpose_supports, .run = pb__cuda_transpose_diagonal},
    {.desc = {"transpose", "vec32", "32x32 tiles, 16-byte loads and stores, 4 floats per thread", 0}, .supports = pb__cuda_transpose_supports, .run = pb__cuda_transpose_vec32},
    {.desc = {"transpose", "vec64", "64x64 tiles, 16-byte loads and stores, 16 floats per thread", 0}, .supports = pb__cuda_transpose_supports, .run = pb__cuda_transpose_vec64},
    {.desc = {"reduce", "interleaved-divergent", "1: interleaved addressing, divergent branch", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_interleaved_divergent, .data = &pb__cuda_reduce_interleaved_divergent_work},
    {.desc = {"reduce", "interleaved", "2: interleaved addressing, strided index (bank conflicts)", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_interleaved, .data = &pb__cuda_reduce_interleaved_work},
    {.desc = {"reduce", "sequential", "3: sequential addressing", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_sequential, .data = &pb__cuda_reduce_sequential_work},
    {.desc = {"reduce", "first-add-on-load", "4: first add during the load", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_first_add, .data = &pb__cuda_reduce_first_add_work},
    {.desc = {"reduce", "unroll-last-warp", "5: the last warp unrolled", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_unroll_last_warp, .data = &pb__cuda_reduce_unroll_last_warp_work},
    {.desc = {"reduce", "unroll-all", "6: completely unrolled, block size a template parameter", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_unroll_all, .data = &pb__cuda_reduce_unroll_all_work},
    {.desc = {"reduce", "multiple-per-thread", "7: many elements per thread (grid-stride)", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_multiple_per_thread, .data = &pb__cuda_reduce_multiple_per_thread_work},
    {.desc = {"reduce", "warp-shuffle", "grid-stride, warp shuffles instead of shared-memory steps", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_shuffle, .data = &pb__cuda_reduce_shuffle_work},
    {.desc = {"reduce", "vectorised", "warp-shuffle with 16-byte loads, 4 in flight per thread", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_vectorised, .data = &pb__cuda_reduce_vectorised_work},
    {.desc = {"reduce", "last-block", "vectorised in one pass: the last block adds the partial sums", PB_VARIANT_WORKSPACE}, .run = pb__cuda_reduce_last_block, .data = &pb__cuda_reduce_last_block_work},
    {.desc = {"reduce", "atomic", "vectorised in one pass: blocks add atomically into the result",PB_VARIANT_VARIES}, .run = pb__cuda_reduce_atomic},
    {.desc = {"reduce", "cub", "CUB DeviceReduce::Sum", PB_VARIANT_ANCHOR | PB_VARIANT_WORKSPACE}, .supports = pb__cuda_reduce_cub_supports, .run = pb__cuda_reduce_cub, .data = &pb__cuda_reduce_cub_work},
    {.desc = {"access", "global-offset", "copy starting step elements past an aligned address", 0}, .supports = pb__cuda_access_supports, .run = pb__cuda_access_offset, .data = &pb__access_offset},
    {.desc = {"access", "global-stride", "copy of every step-th element", 0}, .supports = pb__cuda_access_stride_supports, .run = pb__cuda_access_stride, .data = &pb__access_stride},
    {.desc = {"access", "shared-stride", "shared-memory loads step elements apart (0 = broadcast)", 0}, .supports = pb__cuda_access_supports, .run = pb__cuda_access_shared, .data = &pb__access_shared},
    {.desc = {"access", "fault", "test-only: writes into the null page (a GPU fault)", PB_VARIANT_HIDDEN}, .run = pb__cuda_access_fault, .data = &pb__access_offset},
    {.desc = {"peak", "fma", "independent FMA chains per thread, no loads (arithmetic peak)", 0}, .supports = pb__cuda_peak_supports, .run = pb__cuda_peak_fma},
    {.desc = {"peak", "read", "grid-stride read-only sum, four loads in flight per thread", 0}, .supports = pb__cuda_peak_supports, .run = pb__cuda_peak_read},
    {.desc = {"conv", "naive", "one thread per output, pixels and taps from global memory", 0}, .supports = pb__cuda_conv_naive_supports, .run = pb__cuda_conv_naive},
    {.desc = {"conv", "tiled", "shared-memory tiles with the halo, taps in constant memory (study 003)", 0}, .supports = pb__cuda_conv_tiled_supports, .run = pb__cuda_conv_tiled},
    {.desc = {"conv", "regs", "each pass from a shared tile, 20 (rows) or 32 (columns) outputs per thread, taps 32 at a time in registers (any R); in float the next tile loads while this one is filtered", 0}, .supports = pb__cuda_conv_regs_supports, .run = pb__cuda_conv_regs},
#ifdef PB_HAVE_NCCL
    {.desc = {"allreduce", "nccl", "ncclAllReduce on the device buffers (NCCL loaded at run time)", PB_VARIANT_ANCHOR}, .supports = pb__cuda_nccl_supports, .run = pb__cuda_nccl_allreduce, .data = "NCCL"},
    {.desc = {"allgather", "nccl", "ncclAllGather on the device buffers (NCCL loaded at run time)", PB_VARIANT_ANCHOR}, .supports = pb__cuda_nccl_supports, .run = pb__cuda_nccl_allgather, .data = "NCCL"},
    {.desc = {"alltoall", "nccl", "ncclSend/ncclRecv with every rank in one group (NCCL loaded at run time)", PB_VARIANT_ANCHOR}, .supports = pb__cuda_nccl_supports, .run = pb__cuda_nccl_alltoall, .data = "NCCL"},
    {.desc = {"broadcast", "nccl", "ncclBroadcast from rank 0, in place (NCCL loaded at run time)", PB_VARIANT_ANCHOR}, .supports = pb__cuda_nccl_supports, .run = pb__cuda_nccl_broadcast, .data = "NCCL"},
    {.desc = {"pingpong", "nccl", "ncclSend then ncclRecv on rank 0, the reverse on rank 1 (NCCL loaded at run time)", PB_VARIANT_ANCHOR}, .supports = pb__cuda_nccl_supports, .run = pb__cuda_nccl_pingpong, .data = "NCCL"},
#endif
    {.desc = {"p2p", "ce", "cudaMemcpyPeerAsync on the source GPU's copy engine (peer-to-peer where possible)", 0}, .run = pb__cuda_p2p_ce, .data = &pb__p2p_one_way},
    {.desc = {"p2p", "ce-bidir", "ce both ways at once, a stream on each GPU", 0}, .run = pb__cuda_p2p_ce, .data = &pb__p2p_both_ways},
    {.desc = {"p2p", "sm-pull", "copy kernel on the destination GPU reading the source's memory (peer access)", 0}, .supports = pb__cuda_p2p_sm_pull_supports, .run = pb__cuda_p2p_sm_pull, .data = &pb__p2p_one_way},
    {.desc = {"p2p", "sm-push", "copy kernel on the source GPU writing the destination's memory (peer access)", 0}, .supports = pb__cuda_p2p_sm_push_supports, .run = pb__cuda_p2p_sm_push, .data = &pb__p2p_one_way},
    {.desc = {"p2p", "sm-pull-bidir", "sm-pull both ways at once: each GPU reads the other's memory", 0}, .supports = pb__cuda_p2p_sm_pull_supports, .run = pb__cuda_p2p_sm_pull, .data = &pb__p2p_both_ways},
    {.desc = {"p2p", "sm-push-bidir", "sm-push both ways at once: each GPU writes the other's memory", 0}, .supports = pb__cuda_p2p_sm_push_supports, .run = pb__cuda_p2p_sm_push, .data = &pb__p2p_both_ways},
    {.desc = {"conv", "fused", "both passes in one kernel: columns in registers, rows from shared memory; R <= 64", 0}, .supports = pb__cuda_conv_fused_supports, .run = pb__cuda_conv_fused},
#ifdef PB_HAVE_CUDNN
    {.desc = {"conv", "cudnn", "cuDNN's cudnnConvolutionForward, a 1 x (2R+1) then a (2R+1) x 1 filter (cuDNN loaded at run time)", PB_VARIANT_ANCHOR}, .supports = pb__cuda_conv_cudnn_supports, .run = pb__cuda_conv_cudnn},
#endif
};

extern "C" const struct pb_backend pb__backend_cuda = {
    .name = "cuda",
    .summary = "NVIDIA GPUs through the CUDA runtime",
    .threaded = false,
    .available = cuda_available,
    .device_count = cuda_device_count,
    .open = cuda_open,
    .close = cuda_close,
    .info = cuda_info,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .buf_gone = cuda_buf_gone,
    .write = cuda_write,
    .read = cuda_read,
    .fill = cuda_fill,
    .pin_host = cuda_pin_host,
    .unpin_host = cuda_unpin_host,
    .sync = cuda_sync,
    .copy = cuda_copy,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .stream_wait = cuda_stream_wait,
    .timer_create = cuda_timer_create,
    .timer_destroy = cuda_timer_destroy,
    .timer_record = cuda_timer_record,
    .timer_elapsed = cuda_timer_elapsed,
    .energy_domain = cuda_energy_domain,
    .variants = cuda_variants,
    .n_variants = sizeof cuda_variants / sizeof cuda_variants[0],
    .devcomm = &pb__cuda_devcomm,
};

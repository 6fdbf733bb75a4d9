// Private state of the CUDA backend shared by its kernel files.
#ifndef PARBENCH_CUDA_IMPL_CUH
#define PARBENCH_CUDA_IMPL_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/backend_impl.h"
#include "core/plans.h"

struct pb_cuda_sparse; // the cuSPARSE anchor's handle and cached matrix (spmv.cu)
struct pb_cuda_cudnn;  // the cuDNN anchor's handle, shapes and workspaces (conv_cudnn.cu)

struct pb_comm;

struct pb_cuda_device {
    cudaDeviceProp prop;
    cublasHandle_t blas;    // created on first use
    pb_plans sparse;        // a pb_cuda_sparse per matrix in use (spmv.cu)
    void *nccl;             // ncclComm_t over nccl_ranks, made on first use (nccl.cu)
    const pb_comm *nccl_ranks;
    pb_cuda_cudnn *cudnn;   // made on first use (conv_cudnn.cu)
};

static inline pb_cuda_device *pb__cuda(pb_device *dev) { return static_cast<pb_cuda_device *>(dev->impl); }

static inline cudaStream_t pb__cuda_stream(pb_stream *s)
{
    return s ? static_cast<cudaStream_t>(s->handle) : nullptr;
}

// Address the device uses for a buffer: device memory, or pinned/pageable host
// memory (pinned is device-accessible through unified addressing).
template <typename T> static inline T *pb__cuda_ptr(const pb_buf *b)
{
    return static_cast<T *>(b->handle ? b->handle : b->host);
}

// The device's cuBLAS handle, bound to stream s.
pb_status pb__cuda_blas(pb_device *dev, pb_stream *s, cublasHandle_t *out);

// GEMM variants (gemm.cu).
pb_status pb__cuda_gemm_naive(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_gemm_naive_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cuda_gemm_tiled8(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_tiled16(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_tiled32(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_regblock(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_dmma(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_gemm_cublas(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_gemm_dmma_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_gemm_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_gemm_cublas_supports(const pb_device *dev, const void *args, const char **why);
// Tensor-core types on the tensor cores (gemm_tc.cu).
pb_status pb__cuda_gemm_tc(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_gemm_tc_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cuda_gemm_wgmma(pb_device *dev, const void *args, pb_stream *s); // gemm_wgmma.cu
bool pb__cuda_gemm_wgmma_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cuda_peak_fma(pb_device *dev, const void *args, pb_stream *s); // peak.cu
pb_status pb__cuda_peak_read(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_peak_supports(const pb_device *dev, const void *args, const char **why);

// SpMV variants (spmv.cu).
bool pb__cuda_spmv_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_spmv_cusparse_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cuda_spmv_scalar(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_vector(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_ell(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_ellt(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_adaptive(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_adaptive_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cuda_spmv_merge(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_balanced(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_balanced_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cuda_spmv_split(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_split_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cuda_spmv_bcsr(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_bcsr_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cuda_spmv_dia(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_dia_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cuda_spmv_panels(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_panels_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cuda_spmv_hubs(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_hubs_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cuda_spmv_auto(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_auto_prepare(pb_device *dev, const void *args, char *note, size_t len);
pb_status pb__cuda_spmv_cusparse(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_spmv_cusparse_prepare(pb_device *dev, const void *args, char *note, size_t len);
void pb__cuda_sparse_init(pb_cuda_device *impl);

// NCCL collectives (nccl.cu; built when nccl.h is found).
bool pb__cuda_nccl_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cuda_nccl_allreduce(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_nccl_allgather(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_nccl_alltoall(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_nccl_broadcast(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_nccl_pingpong(pb_device *dev, const void *args, pb_stream *s);
void pb__cuda_nccl_release(pb_cuda_device *impl);
// NCCL for the device paths (devcomm.cu): a communicator of its own per open.
pb_status pb__cuda_nccl_open(pb_device *dev, pb_comm *comm, void **out);
void pb__cuda_nccl_close(void *nc);
pb_status pb__cuda_nccl_bcast(void *nc, const void *src, void *dst, size_t bytes, int root, cudaStream_t s);
pb_status pb__cuda_nccl_allgatherv(void *nc, int n, int rank, char *base, const size_t *offset, const size_t *bytes,
                                   cudaStream_t s);
pb_status pb__cuda_nccl_exchange(void *nc, size_t n, const int *peers, const void *const *send,
                                 const size_t *send_bytes, void *const *recv, const size_t *recv_bytes,
                                 cudaStream_t s);
// The device paths (devcomm.cu).
extern const struct pb_devcomm_ops pb__cuda_devcomm;

// access/fault (access.cu): hidden, test-only, faults on purpose.
pb_status pb__cuda_access_fault(pb_device *dev, const void *args, pb_stream *s);

// Transpose variants (transpose.cu).
bool pb__cuda_transpose_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cuda_transpose_naive(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_transpose_coalesced(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_transpose_padded(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_transpose_diagonal(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_transpose_vec32(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_transpose_vec64(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_transpose_copy(pb_device *dev, const void *args, pb_stream *s);

// Reduce variants (reduce.cu) and their workspace sizes (variant data).
struct pb__workspace;
#define PB__CUDA_REDUCE_DECL(NAME)                                                    \
    pb_status pb__cuda_reduce_##NAME(pb_device *dev, const void *args, pb_stream *s); \
    extern const pb__workspace pb__cuda_reduce_##NAME##_work;
PB__CUDA_REDUCE_DECL(interleaved_divergent)
PB__CUDA_REDUCE_DECL(interleaved)
PB__CUDA_REDUCE_DECL(sequential)
PB__CUDA_REDUCE_DECL(first_add)
PB__CUDA_REDUCE_DECL(unroll_last_warp)
PB__CUDA_REDUCE_DECL(unroll_all)
PB__CUDA_REDUCE_DECL(multiple_per_thread)
PB__CUDA_REDUCE_DECL(shuffle)
PB__CUDA_REDUCE_DECL(vectorised)
PB__CUDA_REDUCE_DECL(last_block)
PB__CUDA_REDUCE_DECL(cub)
#undef PB__CUDA_REDUCE_DECL
pb_status pb__cuda_reduce_atomic(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_reduce_cub_supports(const pb_device *dev, const void *args, const char **why);

// Access patterns (access.cu).
bool pb__cuda_access_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_access_stride_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cuda_access_offset(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_access_stride(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_access_shared(pb_device *dev, const void *args, pb_stream *s);

// Separable convolution variants (conv.cu).
pb_status pb__cuda_conv_naive(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_conv_tiled(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_conv_regs(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_conv_naive_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_conv_tiled_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_conv_regs_supports(const pb_device *dev, const void *args, const char **why);
pb_status pb__cuda_conv_fused(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_conv_fused_supports(const pb_device *dev, const void *args, const char **why);


// cuDNN as the conv anchor (conv_cudnn.cu; built when cudnn.h is found).
pb_status pb__cuda_conv_cudnn(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_conv_cudnn_supports(const pb_device *dev, const void *args, const char **why);
void pb__cuda_cudnn_release(pb_cuda_device *impl);

// Copies between two GPUs (p2p.cu).
pb_status pb__cuda_p2p_ce(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_p2p_sm_pull(pb_device *dev, const void *args, pb_stream *s);
pb_status pb__cuda_p2p_sm_push(pb_device *dev, const void *args, pb_stream *s);
bool pb__cuda_p2p_sm_pull_supports(const pb_device *dev, const void *args, const char **why);
bool pb__cuda_p2p_sm_push_supports(const pb_device *dev, const void *args, const char **why);

#endif

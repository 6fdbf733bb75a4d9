// The CUDA backend's device paths (comm/devcomm.h): NCCL on the device
// buffers (nccl.cu), or device pointers handed to a CUDA-aware MPI. A halo
// is first gathered on the device into one packed buffer, peer after peer,
// so each peer's part leaves in one message.
#include <stdlib.h>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "comm/devcomm.h"

namespace {

struct cuda_devcomm {
    pb_device *dev;
    pb_comm *comm;
    enum pb_devcomm_path path;
    void *nccl; // ncclComm_t (NCCL path)
};

template <typename T>
__global__ void gather(size_t n, const int32_t *__restrict__ index, const T *__restrict__ src, T *__restrict__ dst)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[index[i]];
}

// pack[0..total) = src[send_index[0..total)], on s.
pb_status pack(const pb_devcomm_halo *h, const pb_buf *src, size_t src_first, size_t total, cudaStream_t s)
{
    if (!total)
        return PB_OK;
    const int threads = 256;
    unsigned blocks = static_cast<unsigned>(total / threads + 1 < 4096 ? total / threads + 1 : 4096);
    const int32_t *index = pb__cuda_ptr<const int32_t>(h->send_index);
    if (h->esize == 8)
        gather<<<blocks, threads, 0, s>>>(total, index, pb__cuda_ptr<const uint64_t>(src) + src_first,
                                          pb__cuda_ptr<uint64_t>(h->pack));
    else
        gather<<<blocks, threads, 0, s>>>(total, index, pb__cuda_ptr<const uint32_t>(src) + src_first,
                                          pb__cuda_ptr<uint32_t>(h->pack));
    PB_CUDA_CHECK(cudaGetLastError());
    return PB_OK;
}

pb_status open_path(pb_device *dev, pb_comm *comm, pb_devcomm_path path, void **out)
{
    *out = nullptr;
    pb_status st = PB_OK;
    void *nccl = nullptr;
    if (path == PB_PATH_MPI) {
        if (!pb__comm_cuda_aware(comm))
            st = pb__fail(PB_ERR_UNSUPPORTED, "MPI on device memory: %s is not CUDA-aware (MPIX_Query_cuda_support)",
                          pb__comm_library(comm));
    } else if (path == PB_PATH_NCCL) {
#ifdef PB_HAVE_NCCL
        st = pb__cuda_nccl_open(dev, comm, &nccl);
#else
        st = pb__fail(PB_ERR_UNSUPPORTED, "NCCL: this parbench was built without nccl.h");
#endif
    } else {
        st = pb__fail(PB_ERR_INVALID, "no device path %s", pb__devcomm_path_name(path));
    }
    if (st != PB_OK)
        return st;
    auto *d = static_cast<cuda_devcomm *>(calloc(1, sizeof(cuda_devcomm)));
    if (!d) {
#ifdef PB_HAVE_NCCL
        pb__cuda_nccl_close(nccl);
#endif
        return pb__fail(PB_ERR_NOMEM, "out of host memory");
    }
    *d = cuda_devcomm{dev, comm, path, nccl};
    *out = d;
    return PB_OK;
}

void close_path(void *impl)
{
    auto *d = static_cast<cuda_devcomm *>(impl);
    if (!d)
        return;
#ifdef PB_HAVE_NCCL
    pb__cuda_nccl_close(d->nccl);
#endif
    free(d);
}

pb_status bcast(void *impl, const pb_buf *src, size_t src_off, pb_buf *dst, size_t dst_off, size_t bytes, int root,
                pb_stream *s)
{
    auto *d = static_cast<cuda_devcomm *>(impl);
    cudaStream_t stream = pb__cuda_stream(s);
    const char *from = pb__cuda_ptr<const char>(src) + src_off;
    char *to = pb__cuda_ptr<char>(dst) + dst_off;
    bool root_here = pb__comm_rank(d->comm) == root;
#ifdef PB_HAVE_NCCL
    if (d->path == PB_PATH_NCCL)
        return pb__cuda_nccl_bcast(d->nccl, root_here ? from : to, to, bytes, root, stream);
#endif
    // MPI broadcasts in place: the root's panel goes where the others' land.
    if (root_here && from != to)
        PB_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream));
    PB_CUDA_CHECK(cudaStreamSynchronize(stream));
    return pb__comm_bcast(d->comm, to, bytes, root);
}

pb_status allgatherv(void *impl, pb_buf *buf, const size_t *offset, const size_t *bytes, pb_stream *s)
{
    auto *d = static_cast<cuda_devcomm *>(impl);
    char *base = pb__cuda_ptr<char>(buf);
#ifdef PB_HAVE_NCCL
    if (d->path == PB_PATH_NCCL)
        return pb__cuda_nccl_allgatherv(d->nccl, pb__comm_size(d->comm), pb__comm_rank(d->comm), base, offset, bytes,
                                        pb__cuda_stream(s));
#endif
    PB_CUDA_CHECK(cudaStreamSynchronize(pb__cuda_stream(s)));
    // Every rank takes part in every broadcast, even after a failed one, so none waits.
    pb_status st = PB_OK;
    for (int r = 0; r < pb__comm_size(d->comm); r++) {
        pb_status b = bytes[r] ? pb__comm_bcast(d->comm, base + offset[r], bytes[r], r) : PB_OK;
        if (st == PB_OK)
            st = b;
    }
    return st;
}

pb_status exchange(void *impl, const pb_devcomm_halo *h, const pb_buf *src, size_t src_first, pb_buf *dst,
                   size_t dst_first, pb_stream *s)
{
    auto *d = static_cast<cuda_devcomm *>(impl);
    cudaStream_t stream = pb__cuda_stream(s);
    size_t total = 0;
    for (size_t i = 0; i < h->n; i++)
        total += h->send_count[i];
    size_t n = h->n ? h->n : 1;
    auto **send = static_cast<const void **>(calloc(n, sizeof(void *)));
    auto **recv = static_cast<void **>(calloc(n, sizeof(void *)));
    auto *send_bytes = static_cast<size_t *>(calloc(n, sizeof(size_t)));
    auto *recv_bytes = static_cast<size_t *>(calloc(n, sizeof(size_t)));
    pb_status st = send && recv && send_bytes && recv_bytes ? PB_OK : pb__fail(PB_ERR_NOMEM, "out of host memory");
    for (size_t i = 0; st == PB_OK && i < h->n; i++) {
        send[i] = pb__cuda_ptr<const char>(h->pack) + h->send_first[i] * h->esize;
        send_bytes[i] = h->send_count[i] * h->esize;
        recv[i] = pb__cuda_ptr<char>(dst) + (dst_first + h->recv_first[i]) * h->esize;
        recv_bytes[i] = h->recv_count[i] * h->esize;
    }
    // The peers wait for this rank's messages whatever happened here: a
    // failed pack still sends (whatever the buffer holds), and says so after.
    pb_status packed = st == PB_OK ? pack(h, src, src_first, total, stream) : st;
#ifdef PB_HAVE_NCCL
    if (st == PB_OK && d->path == PB_PATH_NCCL)
        st = pb__cuda_nccl_exchange(d->nccl, h->n, h->peers, send, send_bytes, recv, recv_bytes, stream);
#endif
    if (st == PB_OK && d->path == PB_PATH_MPI) {
        cudaError_t e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess && packed == PB_OK)
            packed = pb__fail(PB_ERR_DEVICE, "cudaStreamSynchronize: %s", cudaGetErrorString(e));
        struct pb_comm_exchange *x = nullptr;
        st = pb__comm_exchange_start(d->comm, h->n, h->peers, send, send_bytes, recv, recv_bytes, &x);
        if (st == PB_OK)
            st = pb__comm_exchange_wait(x);
    }
    free(send);
    free(recv);
    free(send_bytes);
    free(recv_bytes);
    return st != PB_OK ? st : packed;
}

} // namespace

extern const pb_devcomm_ops pb__cuda_devcomm = {open_path, close_path, bcast, exchange, allgatherv};

// GEMM kernels: C = alpha*A*B + beta*C, row-major, any m, n, k and leading
// dimensions. Built once per precision with -DT=float or -DT=double
// (-DPB_FP64 with it). beta == 0 never reads C; the host calls gemm_scale
// instead of a product kernel when k == 0 or alpha == 0, so the product
// kernels may assume k >= 1 and never touch A or B otherwise.
//
// NDRange layout: dimension 0 runs along the columns of C (consecutive
// work-items touch consecutive addresses of B and C), dimension 1 along the
// rows.

#ifdef PB_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef T
#error "build with -DT=float or -DT=double"
#endif

void store_c(__global T *c, T acc, T alpha, T beta)
{
    if (beta == (T)0)
        *c = alpha * acc;
    else
        *c = alpha * acc + beta * *c;
}

// C = beta*C (0 when beta == 0, whatever C held).
__kernel void gemm_scale(ulong m, ulong n, T beta, __global T *c, ulong ldc)
{
    const ulong j = get_global_id(0), i = get_global_id(1);
    if (i < m && j < n)
        c[i * ldc + j] = beta == (T)0 ? (T)0 : beta * c[i * ldc + j];
}

// One work-item per element of C, operands straight from global memory.
__kernel void gemm_naive(ulong m, ulong n, ulong k, T alpha, __global const T *restrict a, ulong lda,
                         __global const T *restrict b, ulong ldb, T beta, __global T *restrict c, ulong ldc)
{
    const ulong col = get_global_id(0), row = get_global_id(1);
    if (row >= m || col >= n)
        return;
    __global const T *ar = a + row * lda;
    T acc = 0;
    for (ulong p = 0; p < k; p++)
        acc += ar[p] * b[p * ldb + col];
    store_c(&c[row * ldc + col], acc, alpha, beta);
}

// The classic tiled kernel: a TS x TS work-group computes a TS x TS tile of
// C, walking k in TS-wide steps through local copies of one tile of A and
// one of B. Out-of-range elements load as 0 so any m, n, k works. TS is a
// constant in each caller, so the inner loop unrolls.
void tiled(const int TS, __local T *as, __local T *bs, ulong m, ulong n, ulong k, T alpha,
           __global const T *restrict a, ulong lda, __global const T *restrict b, ulong ldb, T beta,
           __global T *restrict c, ulong ldc)
{
    const int tx = get_local_id(0), ty = get_local_id(1);
    const ulong row = get_group_id(1) * TS + ty, col = get_group_id(0) * TS + tx;
    T acc = 0;
    for (ulong t = 0; t < k; t += TS) {
        as[ty * TS + tx] = row < m && t + tx < k ? a[row * lda + t + tx] : (T)0;
        bs[ty * TS + tx] = t + ty < k && col < n ? b[(t + ty) * ldb + col] : (T)0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int p = 0; p < TS; p++)
            acc += as[ty * TS + p] * bs[p * TS + tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < m && col < n)
        store_c(&c[row * ldc + col], acc, alpha, beta);
}

#define PB_TILED(TS)                                                                                     \
    __kernel __attribute__((reqd_work_group_size(TS, TS, 1))) void gemm_tiled##TS(                      \
        ulong m, ulong n, ulong k, T alpha, __global const T *restrict a, ulong lda,                      \
        __global const T *restrict b, ulong ldb, T beta, __global T *restrict c, ulong ldc)               \
    {                                                                                                    \
        __local T as[TS * TS], bs[TS * TS];                                                              \
        tiled(TS, as, bs, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                                 \
    }
PB_TILED(8)
PB_TILED(16)
PB_TILED(32)

// Study 001's one-row design: work-group i (dimension 1) computes row i of C.
// The row of A goes to local memory, chunk elements at a time (the host
// passes the largest chunk local memory holds); then each work-item walks
// the columns j = lid, lid + size, ... and reads B from global memory. When
// the whole row fits it is loaded once; otherwise every column block walks
// the chunks again.
__kernel void gemm_onerow(ulong m, ulong n, ulong k, T alpha, __global const T *restrict a, ulong lda,
                          __global const T *restrict b, ulong ldb, T beta, __global T *restrict c, ulong ldc,
                          __local T *arow, ulong chunk)
{
    const ulong i = get_group_id(1);
    const ulong lid = get_local_id(0), size = get_local_size(0);
    __global const T *ar = a + i * lda;
    const bool whole = k <= chunk;
    if (whole) {
        for (ulong p = lid; p < k; p += size)
            arow[p] = ar[p];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (ulong j0 = 0; j0 < n; j0 += size) {
        const ulong j = j0 + lid;
        T acc = 0;
        if (whole) {
            if (j < n)
                for (ulong p = 0; p < k; p++)
                    acc += arow[p] * b[p * ldb + j];
        } else {
            for (ulong p0 = 0; p0 < k; p0 += chunk) {
                const ulong len = min(chunk, k - p0);
                barrier(CLK_LOCAL_MEM_FENCE); // everyone is done with the previous chunk
                for (ulong p = lid; p < len; p += size)
                    arow[p] = ar[p0 + p];
                barrier(CLK_LOCAL_MEM_FENCE);
                if (j < n)
                    for (ulong p = 0; p < len; p++)
                        acc += arow[p] * b[(p0 + p) * ldb + j];
            }
        }
        if (j < n && i < m)
            store_c(&c[i * ldc + j], acc, alpha, beta);
    }
}

// Register blocking: a work-group of RB_RTSN x RB_RTSM work-items computes an
// RB_TSM x RB_TSN tile of C; each work-item owns RB_WPTM x RB_WPTN elements,
// spaced RB_RTSM rows and RB_RTSN columns apart (so neighbouring work-items
// read neighbouring local and global addresses). k is walked in RB_TSK
// slices: A's slice is stored transposed (as[p][row], rows padded by one
// element against bank conflicts on the transposing store) and B's as is;
// for each p a work-item loads RB_WPTM values of A and RB_WPTN of B into
// registers and does RB_WPTM * RB_WPTN multiply-adds. Edges load as 0 and
// stores are guarded. The sizes may be overridden at build time.
#ifndef RB_TSM
#define RB_TSM 64
#endif
#ifndef RB_TSN
#define RB_TSN 64
#endif
#ifndef RB_TSK
#define RB_TSK 16
#endif
#ifndef RB_WPTM
#define RB_WPTM 4
#endif
#ifndef RB_WPTN
#define RB_WPTN 4
#endif
#define RB_RTSM (RB_TSM / RB_WPTM)
#define RB_RTSN (RB_TSN / RB_WPTN)
#define RB_THREADS (RB_RTSM * RB_RTSN)
#define RB_LDA (RB_TSM + 1)

__kernel __attribute__((reqd_work_group_size(RB_RTSN, RB_RTSM, 1))) void
gemm_regblock(ulong m, ulong n, ulong k, T alpha, __global const T *restrict a, ulong lda,
              __global const T *restrict b, ulong ldb, T beta, __global T *restrict c, ulong ldc)
{
    __local T as[RB_TSK * RB_LDA];
    __local T bs[RB_TSK * RB_TSN];
    const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * RB_RTSN + tx;
    const ulong row0 = get_group_id(1) * RB_TSM, col0 = get_group_id(0) * RB_TSN;
    T acc[RB_WPTM][RB_WPTN];
    for (int wm = 0; wm < RB_WPTM; wm++)
        for (int wn = 0; wn < RB_WPTN; wn++)
            acc[wm][wn] = 0;

    for (ulong t = 0; t < k; t += RB_TSK) {
        for (int e = tid; e < RB_TSM * RB_TSK; e += RB_THREADS) {
            const int r = e / RB_TSK, p = e % RB_TSK;
            const ulong gr = row0 + r, gp = t + p;
            as[p * RB_LDA + r] = gr < m && gp < k ? a[gr * lda + gp] : (T)0;
        }
        for (int e = tid; e < RB_TSK * RB_TSN; e += RB_THREADS) {
            const int p = e / RB_TSN, q = e % RB_TSN;
            const ulong gp = t + p, gc = col0 + q;
            bs[p * RB_TSN + q] = gp < k && gc < n ? b[gp * ldb + gc] : (T)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int p = 0; p < RB_TSK; p++) {
            T breg[RB_WPTN];
            for (int wn = 0; wn < RB_WPTN; wn++)
                breg[wn] = bs[p * RB_TSN + tx + wn * RB_RTSN];
            for (int wm = 0; wm < RB_WPTM; wm++) {
                const T areg = as[p * RB_LDA + ty + wm * RB_RTSM];
                for (int wn = 0; wn < RB_WPTN; wn++)
                    acc[wm][wn] += areg * breg[wn];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int wm = 0; wm < RB_WPTM; wm++) {
        const ulong row = row0 + ty + wm * RB_RTSM;
        for (int wn = 0; wn < RB_WPTN; wn++) {
            const ulong col = col0 + tx + wn * RB_RTSN;
            if (row < m && col < n)
                store_c(&c[row * ldc + col], acc[wm][wn], alpha, beta);
        }
    }
}

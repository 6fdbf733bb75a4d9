// SpMV kernels: y = A*x, built once per precision with -DT=float or
// -DT=double (-DPB_FP64 with it). Column indices are int (32-bit), as on the
// host; CSR row offsets int, or long in the kernels named ...64 (beyond
// 2^31 - 1 non-zeros).

#ifdef PB_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef T
#error "build with -DT=float or -DT=double"
#endif

// CSR, one work-item per row; row offsets of type P.
#define CSR_SCALAR(NAME, P)                                                                              \
    __kernel void NAME(int rows, __global const P *restrict ptr, __global const int *restrict idx,       \
                       __global const T *restrict val, __global const T *restrict x, __global T *restrict y) \
    {                                                                                                    \
        const int row = (int)get_global_id(0);                                                           \
        if (row >= rows)                                                                                 \
            return;                                                                                      \
        T sum = 0;                                                                                       \
        for (P k = ptr[row]; k < ptr[row + 1]; k++)                                                      \
            sum += val[k] * x[idx[k]];                                                                   \
        y[row] = sum;                                                                                    \
    }
CSR_SCALAR(spmv_csr_scalar, int)
CSR_SCALAR(spmv_csr_scalar64, long)

// CSR, `group` work-items per row (a power of two dividing the work-group),
// partial sums reduced in local memory; row offsets of type P.
#define CSR_VECTOR(NAME, P)                                                                              \
    __kernel void NAME(int rows, int group, __global const P *restrict ptr, __global const int *restrict idx, \
                       __global const T *restrict val, __global const T *restrict x, __global T *restrict y, \
                       __local T *partial)                                                               \
    {                                                                                                    \
        const size_t gid = get_global_id(0), lid = get_local_id(0);                                      \
        const int row = (int)(gid / (size_t)group), lane = (int)(gid % (size_t)group);                   \
        T sum = 0;                                                                                       \
        if (row < rows)                                                                                  \
            for (P k = ptr[row] + lane; k < ptr[row + 1]; k += group)                                    \
                sum += val[k] * x[idx[k]];                                                               \
        partial[lid] = sum;                                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
        for (int off = group / 2; off > 0; off /= 2) {                                                   \
            if (lane < off)                                                                              \
                partial[lid] += partial[lid + off];                                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                \
        }                                                                                                \
        if (lane == 0 && row < rows)                                                                     \
            y[row] = partial[lid];                                                                       \
    }
CSR_VECTOR(spmv_csr_vector, int)
CSR_VECTOR(spmv_csr_vector64, long)

// ELLPACK stored column by column, one work-item per row: consecutive
// work-items read consecutive addresses.
__kernel void spmv_ellt(int rows, int width, __global const int *restrict idx, __global const T *restrict val,
                        __global const T *restrict x, __global T *restrict y)
{
    const int row = (int)get_global_id(0);
    if (row >= rows)
        return;
    T sum = 0;
    for (int j = 0; j < width; j++) {
        const size_t at = (size_t)j * (size_t)rows + (size_t)row;
        const int c = idx[at];
        if (c >= 0)
            sum += val[at] * x[c];
    }
    y[row] = sum;
}

// csr-balanced (the plan of sparse/balance.h, made on the host): work-groups
// [0, n_pieces) each sum a piece of a long row, the others a block of short
// rows. A block stages its products and row offsets in local memory with
// coalesced loads, then `group` work-items sum each row (a power of two up to
// 32 that divides the work-group). Pieces of one row leave partial sums; the
// last to finish adds them in piece order (the same result on every run).
// blocks: 5 ints each (row0, row1, k0, k1, group); pieces: 6 (row, k0, k1,
// part, first, pieces).
__kernel void spmv_csr_balanced(int n_pieces, __global const int *restrict ptr, __global const int *restrict idx,
                                __global const T *restrict val, __global const T *restrict x, __global T *restrict y,
                                __global const int *restrict pieces, __global const int *restrict blocks,
                                __global T *partial, __global volatile int *counter, __local T *prod,
                                __local int *start, __local T *red)
{
    const int lid = (int)get_local_id(0), nt = (int)get_local_size(0), grp = (int)get_group_id(0);
    if (grp < n_pieces) {
        __global const int *p = pieces + 6 * (size_t)grp;
        const int row = p[0], k1 = p[2], part = p[3], first = p[4], np = p[5];
        T sum = 0;
        for (int k = p[1] + lid; k < k1; k += nt)
            sum += val[k] * x[idx[k]];
        red[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int off = nt / 2; off > 0; off /= 2) {
            if (lid < off)
                red[lid] += red[lid + off];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid != 0)
            return;
        if (np == 1) {
            y[row] = red[0];
            return;
        }
        partial[part] = red[0];
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        if (atomic_inc(&counter[first]) != np - 1)
            return;
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        T total = 0;
        for (int i = 0; i < np; i++)
            total += ((volatile __global T *)partial)[first + i];
        y[row] = total;
        counter[first] = 0; // ready for the next product
        return;
    }
    __global const int *b = blocks + 5 * (size_t)(grp - n_pieces);
    const int row0 = b[0], rows = b[1] - b[0], k0 = b[2], k1 = b[3], g = b[4];
    for (int k = k0 + lid; k < k1; k += nt)
        prod[k - k0] = val[k] * x[idx[k]];
    for (int i = lid; i <= rows; i += nt)
        start[i] = ptr[row0 + i] - k0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int lane = lid % g, per_pass = nt / g;
    for (int r0 = 0; r0 < rows; r0 += per_pass) { // the same trip count for every work-item
        const int r = r0 + lid / g;
        T sum = 0;
        if (r < rows)
            for (int j = start[r] + lane; j < start[r + 1]; j += g)
                sum += prod[j];
        red[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane == 0 && r < rows) {
            T total = 0;
            for (int i = 0; i < g; i++)
                total += red[lid + i];
            y[row0 + r] = total;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// DIA (sparse/sparse.h): diagonal q stored over the rows it spans, 0 where it
// has no entry; no column index is read, and neighbouring work-items read
// neighbouring values and x.
__kernel void spmv_dia(int rows, int diags, __global const long *restrict spans, __global const T *restrict val,
                       __global const T *restrict x, __global T *restrict y)
{
    const int row = (int)get_global_id(0);
    if (row >= rows)
        return;
    T sum = 0;
    for (int q = 0; q < diags; q++) { // spans: offset, first row, rows, start of the values
        const long at = (long)row - spans[4 * q + 1];
        if (at >= 0 && at < spans[4 * q + 2])
            sum += val[spans[4 * q + 3] + at] * x[(long)row + spans[4 * q]];
    }
    y[row] = sum;
}

// auto's ELLPACK transposed copy of a CSR matrix (what spmv_ellt reads).
__kernel void spmv_csr_to_ellt(int rows, int width, __global const int *restrict ptr, __global const int *restrict idx,
                               __global const T *restrict val, __global int *restrict ell_idx,
                               __global T *restrict ell_val)
{
    const int row = (int)get_global_id(0);
    if (row >= rows)
        return;
    const int begin = ptr[row], len = ptr[row + 1] - begin;
    for (int j = 0; j < width; j++) {
        const size_t at = (size_t)j * (size_t)rows + (size_t)row;
        ell_idx[at] = j < len ? idx[begin + j] : -1;
        ell_val[at] = j < len ? val[begin + j] : (T)0;
    }
}

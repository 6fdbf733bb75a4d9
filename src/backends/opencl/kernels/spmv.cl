// SpMV kernels: y = A*x, built once per precision with -DT=float or
// -DT=double (-DPB_FP64 with it). Index types are int (32-bit), as on the host.

#ifdef PB_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef T
#error "build with -DT=float or -DT=double"
#endif

// CSR, one work-item per row.
__kernel void spmv_csr_scalar(int rows, __global const int *restrict ptr, __global const int *restrict idx,
                              __global const T *restrict val, __global const T *restrict x, __global T *restrict y)
{
    const int row = (int)get_global_id(0);
    if (row >= rows)
        return;
    T sum = 0;
    for (int k = ptr[row]; k < ptr[row + 1]; k++)
        sum += val[k] * x[idx[k]];
    y[row] = sum;
}

// CSR, `group` work-items per row (a power of two dividing the work-group),
// partial sums reduced in local memory.
__kernel void spmv_csr_vector(int rows, int group, __global const int *restrict ptr, __global const int *restrict idx,
                              __global const T *restrict val, __global const T *restrict x, __global T *restrict y,
                              __local T *partial)
{
    const size_t gid = get_global_id(0), lid = get_local_id(0);
    const int row = (int)(gid / (size_t)group), lane = (int)(gid % (size_t)group);
    T sum = 0;
    if (row < rows)
        for (int k = ptr[row] + lane; k < ptr[row + 1]; k += group)
            sum += val[k] * x[idx[k]];
    partial[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = group / 2; off > 0; off /= 2) {
        if (lane < off)
            partial[lid] += partial[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && row < rows)
        y[row] = partial[lid];
}

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

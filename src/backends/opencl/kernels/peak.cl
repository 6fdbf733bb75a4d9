// Peak-rate kernels (struct pb_peak_args), built with -DT=float or
// -DT=double. peak_fma: independent FMA chains per work-item, no loads.
// peak_read: stride-of-the-NDRange sum, one partial per work-group of
// PEAK_GROUP work-items.

#ifdef PB_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef T
#error "build with -DT=float or -DT=double"
#endif

#define CHAINS 8 // PB_PEAK_CHAINS
#define PEAK_GROUP 256

__kernel void peak_fma(__global T *out, ulong n, uint iters, T a, T b)
{
    const ulong i = get_global_id(0);
    if (i >= n)
        return;
    T x[CHAINS];
    for (int j = 0; j < CHAINS; j++)
        x[j] = (T)1 + (T)(i % 64) / (T)64 + (T)j / (T)8;
    for (uint it = 0; it < iters; it++) {
#pragma unroll
        for (int j = 0; j < CHAINS; j++)
            x[j] = fma(x[j], a, b);
    }
    T sum = 0;
    for (int j = 0; j < CHAINS; j++)
        sum += x[j];
    out[i] = sum;
}

__kernel __attribute__((reqd_work_group_size(PEAK_GROUP, 1, 1)))
void peak_read(__global const T *in, ulong n, __global T *out)
{
    __local T part[PEAK_GROUP];
    const ulong stride = get_global_size(0);
    ulong i = get_global_id(0);
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (; i + 3 * stride < n; i += 4 * stride) {
        a0 += in[i];
        a1 += in[i + stride];
        a2 += in[i + 2 * stride];
        a3 += in[i + 3 * stride];
    }
    for (; i < n; i += stride)
        a0 += in[i];
    const uint l = get_local_id(0);
    part[l] = (a0 + a1) + (a2 + a3);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = PEAK_GROUP / 2; s > 0; s /= 2) {
        if (l < s)
            part[l] += part[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[get_group_id(0)] = part[0];
}

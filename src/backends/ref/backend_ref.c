/* The reference backend: serial C on the host, always built. */
#include <stdio.h>

#include "backends/ref/ref.h"
#include "core/backend_impl.h"
#include "core/cpuinfo.h"
#include "core/energy.h"
#include "core/kernel_data.h"

static int ref_device_count(void) { return 1; }

static pb_status ref_open(pb_device *dev, int index)
{
    (void)index;
    pb__cpu_model(dev->name, sizeof dev->name);
    dev->threads = 1;
    return PB_OK;
}

static pb_status ref_info(pb_device *dev, struct pb_device_info *out)
{
    (void)dev;
    pb__cpu_info(out);
    pb__info_add(out, "execution", "serial (1 thread)");
    return PB_OK;
}

static const struct pb_variant ref_variants[] = {
    {.desc = {"gemm", "ijk", "naive triple loop, dot-product order", PB_VARIANT_LOWP}, .supports = NULL, .run = pb__ref_gemm_ijk},
    {.desc = {"gemm", "ikj", "row-streaming loop order (the studies' CPU baseline)", PB_VARIANT_LOWP}, .supports = NULL, .run = pb__ref_gemm_ikj},
    {.desc = {"gemm", "flaky", "test-only: wrong in the first timed repetition only", PB_VARIANT_HIDDEN | PB_VARIANT_LOWP}, .supports = NULL, .run = pb__ref_gemm_flaky},
    {.desc = {"spmv", "csr", "CSR, one row at a time (32- or 64-bit row offsets)", PB_VARIANT_PTR64}, .run = pb__ref_spmv_csr, .data = &pb__spmv_csr},
    {.desc = {"spmv", "ell", "ELLPACK (row-major, padded), one row at a time", 0}, .run = pb__ref_spmv_ell, .data = &pb__spmv_ell},
    {.desc = {"transpose", "loops", "the two loops, rows of the input in order", 0}, .supports = NULL, .run = pb__ref_transpose},
    {.desc = {"reduce", "pairwise", "pairwise (recursive halving) summation", 0}, .supports = NULL, .run = pb__ref_reduce_pairwise},
    {.desc = {"reduce", "kahan", "Kahan compensated summation", 0}, .supports = NULL, .run = pb__ref_reduce_kahan},
    {.desc = {"access", "global-offset", "copy starting step elements in", 0}, .supports = NULL, .run = pb__ref_access_offset, .data = &pb__access_offset},
    {.desc = {"access", "global-stride", "copy of every step-th element", 0}, .supports = pb__access_stride_supports, .run = pb__ref_access_stride, .data = &pb__access_stride},
    {.desc = {"access", "shared-stride", "sums of a staged array read at stride step", 0}, .supports = NULL, .run = pb__ref_access_shared, .data = &pb__access_shared},
    {.desc = {"access", "fault", "test-only: fails as a device error", PB_VARIANT_HIDDEN}, .supports = NULL, .run = pb__ref_access_fault, .data = &pb__access_offset},
    {.desc = {"conv", "rowcol", "row pass then column pass, plain loops, sums in double (the oracle's algorithm)", 0}, .supports = NULL, .run = pb__conv_ref},
};

const struct pb_backend pb__backend_ref = {
    .name = "ref",
    .summary = "serial C reference (the oracle)",
    .device_count = ref_device_count,
    .open = ref_open,
    .info = ref_info,
    .energy_domain = pb__energy_domain_host,
    .variants = ref_variants,
    .n_variants = sizeof ref_variants / sizeof ref_variants[0],
};

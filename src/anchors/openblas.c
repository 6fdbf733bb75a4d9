/* OpenBLAS as the CPU GEMM anchor. cblas takes int dimensions, so larger
 * problems are reported unsupported rather than truncated. */
#include <cblas.h>
#include <limits.h>
#include <stddef.h>
#include <strings.h>

#include "anchors/anchors.h"
#include "core/backend_impl.h"

/* Declared by OpenBLAS's cblas.h; repeated so a generic cblas.h also works. */
void openblas_set_num_threads(int num_threads);
int openblas_get_parallel(void);
/* OpenBLAS's own (exported, undeclared): joins its pthread pool. Weak: a
 * serial build has none. */
int blas_thread_shutdown_(void) __attribute__((weak));

char *openblas_get_corename(void);

const char *pb__openblas_core_wanted(const char **picked)
{
#if defined(__x86_64__) && defined(__GNUC__)
    /* OpenBLAS's cores with AVX2 kernels (0.3.x); any other one on an AVX2 CPU is a misreading */
    static const char *const avx2_cores[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids",
                                             "Excavator"};
    const char *name = openblas_get_corename();
    *picked = name ? name : "?";
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof avx2_cores / sizeof avx2_cores[0]; i++)
        if (strcasecmp(name, avx2_cores[i]) == 0)
            return NULL;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
#else
    (void)picked;
#endif
    return NULL;
}

const char *pb__openblas_core_name(void)
{
    const char *name = openblas_get_corename();
    return name ? name : "?";
}

void pb__openblas_quiet(void)
{
    if (blas_thread_shutdown_ && openblas_get_parallel() == 1) /* 1: pthreads */
        blas_thread_shutdown_();
}

bool pb__openblas_gemm_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    const struct pb_gemm_args *g = args;
    if (g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX || g->lda > INT_MAX ||
        g->ldb > INT_MAX || g->ldc > INT_MAX) {
        *why = "dimension exceeds the int range of the BLAS interface";
        return false;
    }
    return true;
}

pb_status pb__openblas_gemm(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_gemm_args *g = args;
    if (g->m == 0 || g->n == 0)
        return PB_OK;
    openblas_set_num_threads(dev->threads > 0 ? dev->threads : 1);
    /* BLAS rejects leading dimensions < 1 even when nothing is read (k == 0). */
    int lda = g->lda ? (int)g->lda : 1, ldb = g->ldb ? (int)g->ldb : 1;
    if (g->prec == PB_DOUBLE)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g->m, (int)g->n, (int)g->k,
                    g->alpha, PB__HOST(g->a, const double), lda, PB__HOST(g->b, const double),
                    ldb, g->beta, PB__HOST(g->c, double), (int)g->ldc);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g->m, (int)g->n, (int)g->k,
                    (float)g->alpha, PB__HOST(g->a, const float), lda,
                    PB__HOST(g->b, const float), ldb, (float)g->beta, PB__HOST(g->c, float),
                    (int)g->ldc);
    return PB_OK;
}

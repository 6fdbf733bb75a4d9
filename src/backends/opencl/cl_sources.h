/* The OpenCL C sources of src/backends/opencl/kernels/, embedded at build
 * time by cmake/embed_cl.cmake (the table is a generated source file). */
#ifndef PARBENCH_CL_SOURCES_H
#define PARBENCH_CL_SOURCES_H

#include <stddef.h>

struct pb__cl_source {
    const char *name; /* file name, e.g. "gemm.cl" */
    const char *text; /* NUL-terminated */
    size_t len;       /* bytes, without the NUL */
};

extern const struct pb__cl_source pb__cl_sources[];
extern const size_t pb__cl_n_sources;

#endif

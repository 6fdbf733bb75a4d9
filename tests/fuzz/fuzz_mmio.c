/* libFuzzer target for the Matrix Market reader (built with -DPB_FUZZ=ON and
 * clang; see CMakeLists.txt):
 *
 *   fuzz_mmio -runs=1000000 -max_len=4096 NEW_CORPUS_DIR tests/fuzz/corpus
 *
 * Each input is parsed from memory (plain text or gzip) twice, in one block
 * and in blocks of 1..13 bytes, and must give the same status, message and
 * matrix; a failure must be PB_ERR_PARSE naming the input and leave the output
 * zeroed; a matrix read must be sorted, unique and in range, and must come
 * back bit for bit through the writer. ASan/LSan/UBSan catch the rest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "io/mmio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz_mmio: check failed: %s (line %d)\n", #cond, __LINE__); \
            abort();                                                         \
        }                                                                    \
    } while (0)

static void check_same(const struct pb_coo *a, const struct pb_coo *b)
{
    CHECK(a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz);
    if (a->nnz) {
        CHECK(memcmp(a->rows, b->rows, a->nnz * sizeof *a->rows) == 0);
        CHECK(memcmp(a->cols, b->cols, a->nnz * sizeof *a->cols) == 0);
        CHECK(memcmp(a->values, b->values, a->nnz * sizeof *a->values) == 0);
    }
}

#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define UNINSTRUMENTED_ZLIB 1 /* what inflate writes would read as uninitialised */
#endif
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef UNINSTRUMENTED_ZLIB
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)
        return 0;
#endif
    /* Complex files refused for one length in four. */
    const struct pb_mm_options opt = {.complex_real_part = size % 4 != 3};
    struct pb_coo a, b;
    pb__clear_error();
    pb_status st = pb__coo_parse_buffer(data, size, "fuzz", &opt, 0, &a);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", pb_last_error());
    pb__clear_error();
    pb_status st2 = pb__coo_parse_buffer(data, size, "fuzz", &opt, 1 + size % 13, &b);
    if (st != st2 || (st != PB_OK && strcmp(msg, pb_last_error()) != 0))
        fprintf(stderr, "block sizes disagree: '%s' vs '%s'\n", msg, pb_last_error());
    CHECK(st == st2);
    if (st != PB_OK) {
        CHECK(st == PB_ERR_PARSE);
        CHECK(strcmp(msg, pb_last_error()) == 0);
        CHECK(strncmp(msg, "fuzz:", 5) == 0);
        CHECK(!a.rows && !a.cols && !a.values && a.nnz == 0);
        return 0;
    }
    check_same(&a, &b);
    pb_coo_free(&b);

    CHECK(a.n_rows >= 0 && a.n_cols >= 0);
    CHECK(a.nnz <= 2 * a.file_entries);
    for (size_t k = 0; k < a.nnz; k++) {
        CHECK(a.rows[k] >= 0 && a.rows[k] < a.n_rows);
        CHECK(a.cols[k] >= 0 && a.cols[k] < a.n_cols);
        CHECK(k == 0 || a.rows[k - 1] < a.rows[k] ||
              (a.rows[k - 1] == a.rows[k] && a.cols[k - 1] < a.cols[k]));
        CHECK(!a.pattern_origin || a.values[k] == 1.0);
    }

    /* Write it and read it back. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f);
    CHECK(pb__coo_write_stream(f, "memory", &a) == PB_OK);
    CHECK(fclose(f) == 0);
    st = pb__coo_parse_buffer(text, len, "written", NULL, 0, &b);
    if (st != PB_OK)
        fprintf(stderr, "cannot read back: %s\n", pb_last_error());
    CHECK(st == PB_OK);
    check_same(&a, &b);
    pb_coo_free(&b);
    free(text);
    pb_coo_free(&a);
    return 0;
}

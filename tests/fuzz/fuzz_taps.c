/* libFuzzer target for filter-tap files (`parbench conv --filter FILE`, read
 * by pb__conv_filter_read in src/bench/conv_host.c):
 *
 *   fuzz_taps -runs=1000000 -max_len=4096 NEW_CORPUS_DIR tests/fuzz/corpus/taps
 *
 * The input is the file (read through fmemopen); the radius asked for is 0
 * (the file sets it) except for one length in five. A success must hold
 * exactly the numbers a plain split of the bytes at separators (white space
 * and commas) gives, an odd count of them, finite; a failure leaves nothing
 * allocated and says why. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/conv_host.h"
#include "core/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "fuzz_taps: check failed: %s (line %d)\n", #cond, __LINE__); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

static bool separator(uint8_t c) { return c == ',' || isspace(c); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1); /* fmemopen's buffer, never empty */
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    FILE *f = fmemopen(buf, size, "r");
    if (!f) {
        free(buf);
        return 0;
    }
    size_t radius = size % 5 == 4 ? 1 + size % 3 : 0, asked = radius;
    double *taps;
    pb__clear_error();
    pb_status st = pb__conv_filter_read(f, "fuzz", &radius, &taps);
    fclose(f);
    if (st != PB_OK) {
        CHECK(st == PB_ERR_IO || st == PB_ERR_NOMEM || (asked && st == PB_ERR_INVALID)); /* INVALID: taps != 2R+1 */
        CHECK(!taps && pb_last_error()[0] != '\0');
        free(buf);
        return 0;
    }
    CHECK(radius <= PB_CONV_MAX_RADIUS && (!asked || radius == asked));
    size_t n = 2 * radius + 1, k = 0;
    for (size_t i = 0; i < size;) {
        if (separator(data[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < size && !separator(data[j]))
            j++;
        char *word = strndup((const char *)data + i, j - i), *end;
        CHECK(word);
        CHECK(strlen(word) == j - i); /* no NUL inside a number */
        double v = strtod(word, &end);
        CHECK(*end == '\0' && isfinite(v));
        CHECK(k < n);
        CHECK(memcmp(&v, &taps[k], sizeof v) == 0);
        free(word);
        k++;
        i = j;
    }
    CHECK(k == n);
    free(taps);
    free(buf);
    return 0;
}

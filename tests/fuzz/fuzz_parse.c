/* libFuzzer target for the command-line value parser (src/core/parse.c):
 * integers with k/M/G suffixes, integer lists and ranges, name lists.
 *
 *   fuzz_parse -runs=1000000 -max_len=256 NEW_CORPUS_DIR tests/fuzz/corpus/parse
 *
 * The input, up to its first NUL, goes to all three parsers. A success is
 * checked against the rules of parse.h (a plain integer list holds what
 * pb__parse_int makes of each item, a range stays within its ends and in
 * order, a name list joins back to the input); a failure leaves nothing
 * allocated and says why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "fuzz_parse: check failed: %s (line %d)\n", #cond, __LINE__); \
            abort();                                                                   \
        }                                                                              \
    } while (0)

static void check_failed(pb_status st)
{
    CHECK(st == PB_ERR_PARSE || st == PB_ERR_OVERFLOW || st == PB_ERR_INVALID);
    CHECK(pb_last_error()[0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';

    int64_t v;
    pb__clear_error();
    pb_status st = pb__parse_int(s, "fuzz", &v);
    if (st != PB_OK)
        check_failed(st);

    int64_t *list;
    size_t n;
    pb__clear_error();
    st = pb__parse_int_list(s, "fuzz", &list, &n);
    if (st != PB_OK) {
        check_failed(st);
        CHECK(!list && n == 0);
    } else {
        CHECK(n >= 1 && n <= PB_MAX_LIST && list);
        if (!strchr(s, ':')) {
            /* Items are plain integers: each one as pb__parse_int reads it. */
            char *copy = strdup(s), *save = NULL;
            CHECK(copy);
            size_t k = 0;
            for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save), k++) {
                int64_t one;
                CHECK(k < n);
                CHECK(pb__parse_int(item, "fuzz", &one) == PB_OK);
                CHECK(one == list[k]);
            }
            CHECK(k == n);
            free(copy);
        } else if (!strchr(s, ',')) {
            /* One range: ascending from its start. */
            for (size_t k = 1; k < n; k++)
                CHECK(list[k] > list[k - 1]);
        }
        free(list);
    }

    char **names;
    pb__clear_error();
    st = pb__parse_name_list(s, "fuzz", &names, &n);
    if (st != PB_OK) {
        CHECK(st == PB_ERR_PARSE);
        CHECK(!names && n == 0);
    } else {
        size_t commas = 0, len = 0;
        for (const char *c = s; *c; c++)
            commas += *c == ',';
        CHECK(n == commas + 1);
        for (size_t k = 0; k < n; k++) {
            CHECK(names[k][0] != '\0' && !strchr(names[k], ','));
            CHECK(strncmp(s + len, names[k], strlen(names[k])) == 0);
            len += strlen(names[k]);
            CHECK(s[len] == (k + 1 < n ? ',' : '\0'));
            len += k + 1 < n;
        }
        free(names);
    }
    free(s);
    return 0;
}

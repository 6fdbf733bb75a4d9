/* libFuzzer target for result files as `parbench report`, `compare`, `plot`
 * and `scaling` read them (src/report/results.c: CSV, JSON, and ceilings
 * files among them):
 *
 *   fuzz_results -runs=1000000 -max_len=4096 NEW_CORPUS_DIR tests/fuzz/corpus/results
 *
 * The input, up to its first NUL, is loaded twice into one set, as two files
 * of a directory would be. Whatever the outcome, the set must be whole: every
 * row complete with its strings, its file and its numbered parameters, every
 * file's rows its own, every comparison's figures whole; the second load of
 * a file that loaded doubles it, but for a comparison, kept once.
 * ASan/LSan/UBSan catch the rest. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "report/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_results: check failed: %s (line %d)\n", #cond, __LINE__); \
            abort();                                                                     \
        }                                                                                \
    } while (0)

static void check_row(const struct pb_rp_set *set, const struct pb_rp_row *r)
{
    const char *strs[] = {r->bench, r->backend, r->variant, r->device, r->precision, r->problem,
                          r->status, r->reason, r->timer, r->check, r->rank};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        CHECK(strs[i]);
    CHECK(r->file < set->n_files);
    CHECK(!r->n_samples || r->samples);
    for (size_t i = 0; i < r->n_params; i++) {
        CHECK(r->params[i].key && r->params[i].text);
        CHECK(pb__rp_find(r, r->params[i].key));
    }
    for (size_t i = 0; i < r->n_extras; i++)
        CHECK(r->extras[i].key && r->extras[i].text && pb__rp_find(r, r->extras[i].key));
    (void)pb__rp_ok(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct pb_rp_set set = {0};
    pb__clear_error();
    pb_status st = pb__rp_load_text(&set, "dir/fuzz.csv", text);
    if (st != PB_OK)
        CHECK(pb_last_error()[0] != '\0');
    size_t rows = set.n_rows, files = set.n_files, ceilings = set.ceilings.n, comparisons = set.n_comparisons;
    if (st == PB_OK) {
        pb_status st2 = pb__rp_load_text(&set, "dir/again.json", text);
        CHECK(st2 == PB_OK);
        CHECK(set.n_rows == 2 * rows && set.n_files == 2 * files && set.ceilings.n == ceilings);
        CHECK(set.n_comparisons == comparisons);
        for (size_t i = 0; i < set.n_comparisons; i++) {
            const struct pb_rp_comparison *c = &set.comparisons[i];
            CHECK(c->path && c->name && c->study && c->copies && (!c->n_figs || c->figs));
            CHECK(strcmp(c->copies, "again.json") == 0);
            for (size_t k = 0; k < c->n_figs; k++) {
                const struct pb_rp_figure *f = &c->figs[k];
                CHECK(f->figure && f->source && f->their_device && f->unit && f->our_backend && f->our_device &&
                      f->note);
            }
        }
        for (size_t i = 0; i < set.n_rows; i++)
            check_row(&set, &set.rows[i]);
        for (size_t i = 0; i < set.n_files; i++) {
            const struct pb_rp_file *f = &set.files[i];
            CHECK(f->path && f->name && f->study && f->bench && f->date && f->commit && f->host && f->cpu &&
                  f->command);
            CHECK(f->first_row + f->n_rows <= set.n_rows);
            for (size_t k = f->first_row; k < f->first_row + f->n_rows; k++)
                CHECK(set.rows[k].file == i);
        }
    }
    pb__rp_free(&set);
    free(text);
    return 0;
}

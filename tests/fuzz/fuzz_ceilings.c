/* libFuzzer target for the ceilings file reader (src/output/ceilings.c):
 *
 *   fuzz_ceilings -runs=1000000 -max_len=4096 NEW_CORPUS_DIR tests/fuzz/corpus/ceilings
 *
 * The input, up to its first NUL, is parsed as a ceilings file's text. A
 * success holds one entry per (backend, device), with terminated names; it is
 * written out and read back, and must come back the same (numbers bit for bit,
 * the non-finite ones as NAN). A failure leaves nothing allocated. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "output/ceilings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "fuzz_ceilings: check failed: %s (line %d)\n", #cond, __LINE__); \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

static bool same_num(double a, double b)
{
    return isfinite(a) ? a == b : isnan(b);
}

/* A scratch file in $TMPDIR, made once per process. */
static const char *scratch(void)
{
    static char path[512];
    if (!path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/parbench-fuzz-ceilings-%ld.json", dir && *dir ? dir : "/tmp",
                 (long)getpid());
    }
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct pb_ceilings c;
    pb__clear_error();
    pb_status st = pb__ceilings_parse(text, "fuzz", &c);
    free(text);
    if (st != PB_OK) {
        CHECK(st == PB_ERR_PARSE || st == PB_ERR_NOMEM);
        CHECK(!c.dev && c.n == 0);
        return 0;
    }
    CHECK(memchr(c.date, '\0', sizeof c.date) && memchr(c.commit, '\0', sizeof c.commit));
    for (size_t i = 0; i < c.n; i++) {
        const struct pb_ceiling *e = &c.dev[i];
        CHECK(memchr(e->backend, '\0', sizeof e->backend) && memchr(e->device, '\0', sizeof e->device));
        CHECK(pb__ceilings_find(&c, e->backend, e->device) == e);
        for (int k = PB_ROOF_NONE; k <= PB_ROOF_ONCHIP; k++) { /* any value read: a fraction or NAN, never a crash */
            double f = pb__ceiling_fraction(e, (struct pb_roof){PB_ROOF_FMA, (enum pb_roof_kind)k}, true, 1.0, 1.0);
            CHECK(isnan(f) || f >= 0);
        }
        (void)pb__fp64_tensor_device(e->device); /* any name: words split without overreading */
    }

    /* Written and read back. */
    const char *path = scratch();
    CHECK(pb__ceilings_write(path, &c) == PB_OK);
    struct pb_ceilings back;
    st = pb__ceilings_read(path, &back);
    if (st != PB_OK)
        fprintf(stderr, "cannot read back: %s\n", pb_last_error());
    CHECK(st == PB_OK);
    remove(path);
    CHECK(back.n == c.n && strcmp(back.date, c.date) == 0 && strcmp(back.commit, c.commit) == 0);
    for (size_t i = 0; i < c.n; i++) {
        const struct pb_ceiling *a = &c.dev[i], *b = &back.dev[i];
        CHECK(strcmp(a->backend, b->backend) == 0 && strcmp(a->device, b->device) == 0);
        CHECK(same_num(a->copy_gbps, b->copy_gbps) && same_num(a->read_gbps, b->read_gbps) &&
              same_num(a->h2d_gbps, b->h2d_gbps) && same_num(a->d2h_gbps, b->d2h_gbps) &&
              same_num(a->fp32_gflops, b->fp32_gflops) && same_num(a->fp64_gflops, b->fp64_gflops));
    }
    pb__ceilings_free(&back);
    pb__ceilings_free(&c);
    return 0;
}

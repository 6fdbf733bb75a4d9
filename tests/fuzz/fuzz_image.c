/* libFuzzer target for image files as `parbench conv` reads them
 * (src/io/image.c): pb__image_probe, then pb__image_read when the probe
 * accepts, as the command does. Every format stb_image knows (PNG, JPEG, BMP,
 * TGA, PGM/PPM, GIF, PSD, HDR, PIC) and the raw float32 path:
 *
 *   fuzz_image -runs=1000000 -max_len=4096 NEW_CORPUS_DIR tests/fuzz/corpus/image
 *
 * An input that starts with "F32" is a raw image: two bytes of width and two
 * of height (little endian) follow, then the file's bytes, written to a .f32
 * file; any other input is an image file, handed over as a memfd. The pixel
 * budget is 1<<20 (the command's default is 1<<30), so a run stays fast. An
 * image read must have the size the probe declared, and its 8-bit pixels must
 * lie in 0..255. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core.h"
#include "io/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "fuzz_image: check failed: %s (line %d)\n", #cond, __LINE__); \
            abort();                                                                   \
        }                                                                              \
    } while (0)

#define MAX_PIXELS ((uint64_t)1 << 20)

static bool write_all(int fd, const uint8_t *data, size_t size)
{
    while (size) {
        ssize_t got = write(fd, data, size);
        if (got <= 0)
            return false;
        data += got;
        size -= (size_t)got;
    }
    return true;
}

/* The raw file: one per process in $TMPDIR, rewritten for each input. */
static const char *raw_path(void)
{
    static char path[512];
    if (!path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/parbench-fuzz-image-%ld.f32", dir && *dir ? dir : "/tmp", (long)getpid());
    }
    return path;
}

static void probe_and_read(const char *path, size_t width, size_t height, bool raw)
{
    struct pb_image_info info;
    pb__clear_error();
    pb_status st = pb__image_probe(path, width, height, MAX_PIXELS, &info);
    if (st != PB_OK) {
        CHECK(st == PB_ERR_IO || st == PB_ERR_NOMEM || st == PB_ERR_INVALID || st == PB_ERR_UNSUPPORTED);
        CHECK(pb_last_error()[0] != '\0');
        return;
    }
    CHECK(info.width >= 1 && info.height >= 1 && info.channels >= 1 && info.channels <= 4);
    CHECK((uint64_t)info.width * info.height <= MAX_PIXELS);
    struct pb_image img;
    st = pb__image_read(path, width, height, &img);
    if (st != PB_OK) {
        CHECK(st == PB_ERR_IO || st == PB_ERR_NOMEM);
        CHECK(!img.data);
        return;
    }
    if (img.width != info.width || img.height != info.height || img.channels != info.channels)
        fprintf(stderr, "probe said %zux%zux%zu, read gave %zux%zux%zu\n", info.width, info.height,
                info.channels, img.width, img.height, img.channels);
    CHECK(img.width == info.width && img.height == info.height && img.channels == info.channels);
    size_t n = img.width * img.height * img.channels;
    for (size_t i = 0; !raw && i < n; i++)
        CHECK(img.data[i] >= 0 && img.data[i] <= 255);
    pb__image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 7 && memcmp(data, "F32", 3) == 0) {
        size_t width = data[3] | (size_t)data[4] << 8, height = data[5] | (size_t)data[6] << 8;
        FILE *f = fopen(raw_path(), "wb");
        if (!f)
            return 0;
        bool ok = fwrite(data + 7, 1, size - 7, f) == size - 7;
        if (fclose(f) == 0 && ok)
            probe_and_read(raw_path(), width, height, true);
        remove(raw_path());
        return 0;
    }
    int fd = memfd_create("fuzz_image", 0);
    if (fd < 0)
        return 0;
    if (write_all(fd, data, size)) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        probe_and_read(path, 0, 0, false);
    }
    close(fd);
    return 0;
}

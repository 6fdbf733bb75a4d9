/* Images for `parbench conv`: 8-bit greyscale or colour files (PNG, JPEG,
 * BMP, TGA, PGM/PPM ... through stb_image; written as PNG, JPEG, BMP, TGA or
 * PGM/PPM by extension) and raw float32 files (.f32 or .raw: row-major,
 * native byte order, one channel, size given by the caller) for inputs of
 * any size. Pixels are held as float planes, one per channel, 0-255 for
 * 8-bit files. */
#ifndef PARBENCH_IMAGE_H
#define PARBENCH_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parbench/pb.h"

struct pb_image {
    size_t width, height, channels;
    float *data;     /* channel c at data + c * width * height */
    int orientation; /* a JPEG's Exif orientation (2-8) the pixels were turned upright by, else 0 */
};

/* The default pixel budget of pb__image_probe: 2^30 pixels (a grey one is
 * 4 GiB as float, a colour one 12 GiB). */
#define PB_IMAGE_MAX_PIXELS ((uint64_t)1 << 30)

/* What a file declares, from its header alone (a JPEG's sides as its Exif
 * orientation turns them upright). */
struct pb_image_info {
    size_t width, height, channels;
};

/* True when path names a raw float32 file (.f32 or .raw). */
bool pb__image_is_raw(const char *path);
/* True when this build can read and write 8-bit image files. */
bool pb__image_have_codecs(void);
/* Reads path. Raw files need width and height (their size must match);
 * other files ignore them. PB_ERR_IO (unreadable, not an image, wrong
 * size), PB_ERR_NOMEM, PB_ERR_UNSUPPORTED (no image codecs in this build). */
pb_status pb__image_read(const char *path, size_t width, size_t height, struct pb_image *out);
/* The checks that need no decoding, for refusing before any work: reads the
 * declared size (raw files: width x height, their byte count must match),
 * refuses a file too small to hold the pixels it declares (a corrupt file or
 * a decompression bomb: PB_ERR_IO) and more than max_pixels pixels
 * (PB_ERR_NOMEM, the message names --max-pixels). Raw files: as
 * pb__image_read. */
pb_status pb__image_probe(const char *path, size_t width, size_t height, uint64_t max_pixels,
                          struct pb_image_info *out);
/* Whether an image of that size can be written to path, before it is made:
 * a known extension, channels and sides the format holds (PB_ERR_INVALID),
 * a path that can be opened for writing (PB_ERR_IO; an existing file is left
 * as it is, a new one is not left behind). */
pb_status pb__image_check_output(const char *path, size_t width, size_t height, size_t channels);
/* Writes img to path in the format of its extension; 8-bit formats round
 * and clamp to 0-255. PB_ERR_IO, PB_ERR_INVALID (unknown extension, or a
 * raw file of several channels). */
pb_status pb__image_write(const char *path, const struct pb_image *img);
void pb__image_free(struct pb_image *img);

#endif

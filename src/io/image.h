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

#include "parbench/pb.h"

struct pb_image {
    size_t width, height, channels;
    float *data; /* channel c at data + c * width * height */
};

/* True when path names a raw float32 file (.f32 or .raw). */
bool pb__image_is_raw(const char *path);
/* True when this build can read and write 8-bit image files. */
bool pb__image_have_codecs(void);
/* Reads path. Raw files need width and height (their size must match);
 * other files ignore them. PB_ERR_IO (unreadable, not an image, wrong
 * size), PB_ERR_NOMEM, PB_ERR_UNSUPPORTED (no image codecs in this build). */
pb_status pb__image_read(const char *path, size_t width, size_t height, struct pb_image *out);
/* Writes img to path in the format of its extension; 8-bit formats round
 * and clamp to 0-255. PB_ERR_IO, PB_ERR_INVALID (unknown extension, or a
 * raw file of several channels). */
pb_status pb__image_write(const char *path, const struct pb_image *img);
void pb__image_free(struct pb_image *img);

#endif

/* stb_image and stb_image_write (the headers of Debian's libstb-dev),
 * compiled into parbench rather than linked from libstb: stb_image 2.27
 * reads memory it never wrote on corrupt files (tests/fuzz/RUNS.md), so
 * every buffer it allocates or grows starts zeroed here. What such a file
 * decodes to is then the same on every run, never what the heap last held;
 * image.c refuses the corrupt files it can recognise before decoding. Their
 * functions stay static; src/io/stb.h's wrappers are the way in. */
#include <stdlib.h>
#include <string.h>

#include "io/stb.h"

static void *zeroed_realloc(void *p, size_t old_size, size_t new_size)
{
    unsigned char *q = realloc(p, new_size);
    if (q && new_size > old_size)
        memset(q + old_size, 0, new_size - old_size);
    return q;
}

#define STBI_MALLOC(size) calloc(1, size)
#define STBI_REALLOC_SIZED(p, old_size, new_size) zeroed_realloc(p, old_size, new_size)
#define STBI_FREE(p) free(p)
#define STB_IMAGE_STATIC
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image.h>
#include <stb_image_write.h>

unsigned char *pb__stbi_load(const char *path, int *width, int *height, int *channels, int want_channels)
{
    return stbi_load(path, width, height, channels, want_channels);
}

unsigned short *pb__stbi_load_16(const char *path, int *width, int *height, int *channels, int want_channels)
{
    return stbi_load_16(path, width, height, channels, want_channels);
}

int pb__stbi_info(const char *path, int *width, int *height, int *channels)
{
    return stbi_info(path, width, height, channels);
}

int pb__stbi_info_from_file(FILE *f, int *width, int *height, int *channels)
{
    return stbi_info_from_file(f, width, height, channels);
}

int pb__stbi_is_16_bit(const char *path) { return stbi_is_16_bit(path); }

const char *pb__stbi_failure_reason(void) { return stbi_failure_reason(); }

void pb__stbi_image_free(void *pixels) { stbi_image_free(pixels); }

int pb__stbi_write_png_to_func(pb_stb_write_func *write, void *context, int width, int height, int channels,
                               const void *pixels, int stride_bytes)
{
    return stbi_write_png_to_func(write, context, width, height, channels, pixels, stride_bytes);
}

int pb__stbi_write_jpg_to_func(pb_stb_write_func *write, void *context, int width, int height, int channels,
                               const void *pixels, int quality)
{
    return stbi_write_jpg_to_func(write, context, width, height, channels, pixels, quality);
}

int pb__stbi_write_bmp_to_func(pb_stb_write_func *write, void *context, int width, int height, int channels,
                               const void *pixels)
{
    return stbi_write_bmp_to_func(write, context, width, height, channels, pixels);
}

int pb__stbi_write_tga_to_func(pb_stb_write_func *write, void *context, int width, int height, int channels,
                               const void *pixels)
{
    return stbi_write_tga_to_func(write, context, width, height, channels, pixels);
}

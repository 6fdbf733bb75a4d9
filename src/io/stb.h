/* The part of stb_image and stb_image_write that parbench calls. Both are
 * compiled into parbench with every function of their own kept static
 * (src/io/stb_impl.c), so that a program linking libparbench.a next to its
 * own stb_image meets no duplicate symbol; these wrappers are the way in. */
#ifndef PB_IO_STB_H
#define PB_IO_STB_H

#include <stdio.h>

typedef void pb_stb_write_func(void *context, void *data, int size);

unsigned char *pb__stbi_load(const char *path, int *width, int *height, int *channels, int want_channels);
unsigned short *pb__stbi_load_16(const char *path, int *width, int *height, int *channels, int want_channels);
int pb__stbi_info(const char *path, int *width, int *height, int *channels);
int pb__stbi_info_from_file(FILE *f, int *width, int *height, int *channels);
int pb__stbi_is_16_bit(const char *path);
const char *pb__stbi_failure_reason(void);
void pb__stbi_image_free(void *pixels);

int pb__stbi_write_png_to_func(pb_stb_write_func *write, void *context, int width, int height, int channels,
                               const void *pixels, int stride_bytes);
int pb__stbi_write_jpg_to_func(pb_stb_write_func *write, void *context, int width, int height, int channels,
                               const void *pixels, int quality);
int pb__stbi_write_bmp_to_func(pb_stb_write_func *write, void *context, int width, int height, int channels,
                               const void *pixels);
int pb__stbi_write_tga_to_func(pb_stb_write_func *write, void *context, int width, int height, int channels,
                               const void *pixels);

#endif

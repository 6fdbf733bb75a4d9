/* Image files for `parbench conv` (see image.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core.h"
#include "io/image.h"

#ifdef PB_HAVE_STB
#include <stb_image.h>
#include <stb_image_write.h>
#endif

static const char *extension(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

bool pb__image_is_raw(const char *path)
{
    const char *e = extension(path);
    return strcasecmp(e, "f32") == 0 || strcasecmp(e, "raw") == 0;
}

bool pb__image_have_codecs(void)
{
#ifdef PB_HAVE_STB
    return true;
#else
    return false;
#endif
}

void pb__image_free(struct pb_image *img)
{
    if (img) {
        pb__host_free(img->data);
        img->data = NULL;
    }
}

static pb_status alloc_planes(struct pb_image *img, const char *what)
{
    size_t bytes;
    if (!pb__mul_size(img->width, img->height, &bytes) || !pb__mul_size(bytes, img->channels, &bytes) ||
        !pb__mul_size(bytes, sizeof(float), &bytes))
        return pb__fail(PB_ERR_OVERFLOW, "%s: image size overflows", what);
    return pb__host_alloc(bytes, what, (void **)&img->data);
}

static pb_status read_raw(const char *path, size_t width, size_t height, struct pb_image *out)
{
    if (!width || !height)
        return pb__fail(PB_ERR_INVALID, "raw image '%s' needs --width and --height", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
    *out = (struct pb_image){.width = width, .height = height, .channels = 1};
    pb_status st = PB_OK;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    size_t want = width * height * sizeof(float); /* cannot overflow: checked by the caller's limits */
    if (size < 0 || (size_t)size != want)
        st = pb__fail(PB_ERR_IO, "raw image '%s' has %ld bytes; %zux%zu float32 needs %zu", path, size, width,
                      height, want);
    if (st == PB_OK)
        st = alloc_planes(out, "raw image");
    if (st == PB_OK && (fseek(f, 0, SEEK_SET) != 0 || fread(out->data, 1, want, f) != want))
        st = pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, ferror(f) ? strerror(errno) : "short file");
    fclose(f);
    if (st != PB_OK)
        pb__image_free(out);
    return st;
}

pb_status pb__image_read(const char *path, size_t width, size_t height, struct pb_image *out)
{
    *out = (struct pb_image){0};
    if (pb__image_is_raw(path))
        return read_raw(path, width, height, out);
#ifdef PB_HAVE_STB
    FILE *probe = fopen(path, "rb");
    if (!probe)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
    fclose(probe);
    int w, h, n;
    unsigned char *pixels = stbi_load(path, &w, &h, &n, 0);
    if (!pixels)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, stbi_failure_reason());
    *out = (struct pb_image){.width = (size_t)w, .height = (size_t)h, .channels = (size_t)n};
    pb_status st = alloc_planes(out, "image");
    if (st == PB_OK) {
        size_t px = out->width * out->height;
        for (size_t i = 0; i < px; i++)
            for (size_t c = 0; c < out->channels; c++)
                out->data[c * px + i] = pixels[i * out->channels + c];
    }
    stbi_image_free(pixels);
    return st;
#else
    return pb__fail(PB_ERR_UNSUPPORTED, "cannot read '%s': this parbench was built without stb_image "
                    "(only raw float32 .f32/.raw images)", path);
#endif
}

static pb_status write_raw(const char *path, const struct pb_image *img)
{
    if (img->channels != 1)
        return pb__fail(PB_ERR_INVALID, "raw images have one channel; '%s' would need %zu", path, img->channels);
    FILE *f = fopen(path, "wb");
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    size_t n = img->width * img->height;
    bool ok = fwrite(img->data, sizeof(float), n, f) == n;
    ok = fclose(f) == 0 && ok;
    return ok ? PB_OK : pb__fail(PB_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
}

/* Binary PGM (1 channel) or PPM (3 channels). */
static pb_status write_pnm(const char *path, const unsigned char *pixels, const struct pb_image *img)
{
    if (img->channels != 1 && img->channels != 3)
        return pb__fail(PB_ERR_INVALID, "'%s': PGM/PPM hold 1 or 3 channels, the image has %zu", path,
                        img->channels);
    FILE *f = fopen(path, "wb");
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    size_t n = img->width * img->height * img->channels;
    bool ok = fprintf(f, "P%c\n%zu %zu\n255\n", img->channels == 1 ? '5' : '6', img->width, img->height) > 0 &&
              fwrite(pixels, 1, n, f) == n;
    ok = fclose(f) == 0 && ok;
    return ok ? PB_OK : pb__fail(PB_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
}

pb_status pb__image_write(const char *path, const struct pb_image *img)
{
    if (pb__image_is_raw(path))
        return write_raw(path, img);
    const char *e = extension(path);
    bool pnm = strcasecmp(e, "pgm") == 0 || strcasecmp(e, "ppm") == 0 || strcasecmp(e, "pnm") == 0;
#ifndef PB_HAVE_STB
    if (!pnm)
        return pb__fail(PB_ERR_UNSUPPORTED, "cannot write '%s': this parbench was built without stb_image_write "
                        "(.pgm, .ppm, .f32 and .raw only)", path);
#endif
    if (img->width > 1u << 16 || img->height > 1u << 16)
        if (!pnm)
            return pb__fail(PB_ERR_INVALID, "'%s': %zux%zu is too large for an 8-bit image file (use .pgm or .f32)",
                            path, img->width, img->height);
    size_t px = img->width * img->height;
    unsigned char *pixels;
    pb_status st = pb__host_alloc(px * img->channels, "8-bit image", (void **)&pixels);
    if (st != PB_OK)
        return st;
    for (size_t i = 0; i < px; i++)
        for (size_t c = 0; c < img->channels; c++) {
            float v = img->data[c * px + i] + 0.5f;
            pixels[i * img->channels + c] = v <= 0 ? 0 : v >= 255 ? 255 : (unsigned char)v;
        }
    if (pnm) {
        st = write_pnm(path, pixels, img);
    } else {
#ifdef PB_HAVE_STB
        int w = (int)img->width, h = (int)img->height, n = (int)img->channels, ok;
        if (strcasecmp(e, "png") == 0)
            ok = stbi_write_png(path, w, h, n, pixels, w * n);
        else if (strcasecmp(e, "jpg") == 0 || strcasecmp(e, "jpeg") == 0)
            ok = stbi_write_jpg(path, w, h, n, pixels, 95);
        else if (strcasecmp(e, "bmp") == 0)
            ok = stbi_write_bmp(path, w, h, n, pixels);
        else if (strcasecmp(e, "tga") == 0)
            ok = stbi_write_tga(path, w, h, n, pixels);
        else
            ok = -1;
        if (ok < 0)
            st = pb__fail(PB_ERR_INVALID, "'%s': unknown image format '.%s' (png, jpg, bmp, tga, pgm, ppm, f32, raw)",
                          path, e);
        else if (!ok)
            st = pb__fail(PB_ERR_IO, "cannot write '%s'", path);
#endif
    }
    pb__host_free(pixels);
    return st;
}

/* Image files for `parbench conv` (see image.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <zlib.h>

#include "core/core.h"
#include "io/image.h"

#ifdef PB_HAVE_STB
#include "io/stb.h"
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

#ifdef PB_HAVE_STB
/* A byte of f, 0 past its end, as stb_image reads it. */
static int zero_at_eof(FILE *f)
{
    int c = getc(f);
    return c == EOF ? 0 : c;
}

/* Why stb_image must not be given f, or NULL when it may. stb_image 2.27
 * (Debian's libstb) mishandles three kinds of corrupt JPEG, all found by
 * tests/fuzz/fuzz_image.c: a Huffman table segment (DHT) of more than 256
 * codes, which it writes past its tables for (fixed upstream in 2.28); a
 * scan that decodes with a Huffman table, or a component that names a
 * quantization table, that no segment before it defined, whose
 * uninitialised contents it reads as indices (a crash that depends on what
 * the heap held before) or as the pixels' scale; a frame header it refuses
 * once it has counted the components, after which it frees their buffers'
 * uninitialised pointers. The markers are walked as stb_image finds them:
 * bytes between segments and the entropy-coded data are passed over one at a
 * time, a marker (0xFF, fill 0xFFs, a code other than 0x00 and the restart
 * codes) is followed by its length; DHT, DQT, SOF and SOS segments are read
 * field by field as stb_image reads them. Rewinds f. */
static const char *stb_unsafe(FILE *f)
{
    const char *why = NULL;
    bool huffman[2][4] = {{false}}, quant[4] = {false}, progressive = false;
    int frame_n = 0, frame_id[4] = {0}, frame_tq[4] = {0};
    int c = getc(f);
    if (c == 0xFF)
        while ((c = getc(f)) == 0xFF)
            ;
    if (c != 0xD8)
        goto done; /* not a JPEG: stb_image wants 0xFF, fill 0xFFs, 0xD8 */
    while ((c = getc(f)) != EOF) {
        if (c != 0xFF)
            continue;
        while ((c = getc(f)) == 0xFF)
            ;
        if (c == EOF)
            break;
        if (c == 0x00 || c == 0x01 || (c >= 0xD0 && c <= 0xD9))
            continue; /* a stuffed 0xFF or a marker without a length */
        int hi = getc(f), lo = getc(f);
        if (lo == EOF)
            break;
        long len = (long)(hi << 8 | lo) - 2;
        if (c == 0xC4) {
            while (len > 0) { /* past the end, stb_image reads zeros */
                int q = getc(f), n = 0;
                for (int i = 0, count; i < 16; i++)
                    n += (count = getc(f)) == EOF ? 0 : count;
                if (n > 256) {
                    why = "a Huffman table of more than 256 codes";
                    goto done;
                }
                if (q == EOF || q >> 4 > 1 || (q & 15) > 3 || fseek(f, n, SEEK_CUR) != 0)
                    goto done; /* stb_image refuses the table itself */
                huffman[q >> 4][q & 15] = true;
                len -= 17 + n;
            }
        } else if (c == 0xDB) {
            while (len > 0) {
                int q = getc(f), bytes = q >> 4 ? 128 : 64;
                if (q == EOF || q >> 4 > 1 || (q & 15) > 3 || fseek(f, bytes, SEEK_CUR) != 0)
                    goto done;
                quant[q & 15] = true;
                len -= 1 + bytes;
            }
        } else if (c >= 0xC0 && c <= 0xC2 && frame_n == 0) { /* the frame stb_image decodes */
            /* Past the end stb_image reads zeros. Once it has the component
             * count, a frame it refuses makes it free its components' buffers,
             * which it never set: every such refusal is made here first. */
            int head[6];
            for (int i = 0; i < 6; i++)
                head[i] = zero_at_eof(f);
            long x = head[3] << 8 | head[4], y = head[1] << 8 | head[2], n = head[5];
            if (head[0] != 8 || x == 0 || y == 0 || (n != 1 && n != 3 && n != 4))
                goto done; /* refused before it counts components */
            progressive = c == 0xC2;
            frame_n = (int)n;
            int h_max = 1, v_max = 1, h[4], v[4];
            bool valid = len + 2 == 8 + 3 * n;
            for (int i = 0; i < frame_n; i++) {
                frame_id[i] = zero_at_eof(f);
                int q = zero_at_eof(f), tq = zero_at_eof(f);
                h[i] = q >> 4, v[i] = q & 15;
                valid = valid && h[i] >= 1 && h[i] <= 4 && v[i] >= 1 && v[i] <= 4 && tq <= 3;
                frame_tq[i] = tq & 3;
                h_max = h[i] > h_max ? h[i] : h_max;
                v_max = v[i] > v_max ? v[i] : v_max;
            }
            for (int i = 0; valid && i < frame_n; i++)
                valid = h_max % h[i] == 0 && v_max % v[i] == 0;
            if (!valid) {
                why = "an invalid frame header";
                goto done;
            }
            if ((uint64_t)x * (uint64_t)y * (uint64_t)n > INT_MAX) {
                why = "more than 2^31 samples, past stb_image's limit";
                goto done;
            }
            len -= 6 + 3 * n;
            if (len > 0 && fseek(f, len, SEEK_CUR) != 0)
                goto done;
        } else if (c == 0xDA) {
            unsigned char scan[4 * 2 + 4];
            int n = getc(f);
            if (n < 1 || n > 4 || fread(scan, 1, (size_t)n * 2 + 3, f) != (size_t)n * 2 + 3)
                goto done;
            int spec_start = scan[2 * n], succ_high = scan[2 * n + 2] >> 4;
            bool dc = !progressive || (spec_start == 0 && succ_high == 0), ac = !progressive || spec_start > 0;
            for (int i = 0; i < n; i++) {
                int k = 0;
                while (k < frame_n && frame_id[k] != scan[2 * i])
                    k++;
                if (k == frame_n)
                    goto done; /* stb_image refuses a scan of an unknown component */
                int td = scan[2 * i + 1] >> 4, ta = scan[2 * i + 1] & 15;
                if (td > 3 || ta > 3)
                    goto done;
                if ((dc && !huffman[0][td]) || (ac && !huffman[1][ta])) {
                    why = "a scan decoded with a Huffman table the file has not defined";
                    goto done;
                }
                if (!quant[frame_tq[k]]) {
                    why = "a component whose quantization table the file has not defined";
                    goto done;
                }
            }
            len -= 1 + 2 * n + 3;
            if (len > 0 && fseek(f, len, SEEK_CUR) != 0)
                goto done;
        } else if (len > 0 && fseek(f, len, SEEK_CUR) != 0) {
            break;
        }
    }
done:
    rewind(f);
    return why;
}
#endif

#ifdef PB_HAVE_STB
/* stb_image's reasons are terse ("IEN", "outofdata", "bad png sig": the last
 * format it tried, not the file's): say which format the file's first bytes
 * claim and keep stb's reason after it. */
static pb_status unreadable(const char *path, const unsigned char *hd, size_t got)
{
    static const struct { const char *magic; size_t len; const char *name; } formats[] = {
        {"\x89PNG", 4, "PNG"}, {"\xff\xd8", 2, "JPEG"}, {"BM", 2, "BMP"}, {"GIF8", 4, "GIF"},
        {"8BPS", 4, "PSD"}, {"#?RADIANCE", 10, "HDR"}};
    const char *name = NULL;
    for (size_t i = 0; !name && i < sizeof formats / sizeof formats[0]; i++)
        if (got >= formats[i].len && memcmp(hd, formats[i].magic, formats[i].len) == 0)
            name = formats[i].name;
    if (got == 0)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': the file is empty", path);
    if (!name && got >= 2 && hd[0] == 'P' && hd[1] >= '1' && hd[1] <= '3')
        return pb__fail(PB_ERR_IO, "cannot read image '%s': a plain-text (P%c) PGM/PPM; only binary ones (P5, P6) are "
                        "read", path, hd[1]);
    if (!name && got >= 2 && hd[0] == 'P' && (hd[1] == '5' || hd[1] == '6'))
        name = "PGM/PPM";
    /* Some of its failures set no reason at all. */
    const char *why = pb__stbi_failure_reason();
    if (!why || !*why)
        why = "no reason given";
    if (name)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': a corrupt or truncated %s file (stb_image: %s)", path,
                        name, why);
    return pb__fail(PB_ERR_IO, "cannot read image '%s': not an image file parbench reads (PNG, JPEG, BMP, TGA, "
                    "binary PGM/PPM; stb_image: %s)", path, why);
}

/* The size a PNG's header (IHDR, bytes 16-25) declares, and the samples per
 * pixel stb_image counts against its limit (4 for a palette). False when hd
 * holds no PNG header. */
static bool png_declares(const unsigned char *hd, size_t got, uint64_t *w, uint64_t *h, uint64_t *n)
{
    if (got < 26 || memcmp(hd, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(hd + 12, "IHDR", 4) != 0)
        return false;
    *w = (uint64_t)hd[16] << 24 | (uint64_t)hd[17] << 16 | (uint64_t)hd[18] << 8 | hd[19];
    *h = (uint64_t)hd[20] << 24 | (uint64_t)hd[21] << 16 | (uint64_t)hd[22] << 8 | hd[23];
    unsigned type = hd[25];
    *n = type == 3 ? 4 : (type & 2 ? 3u : 1u) + (type & 4 ? 1u : 0u);
    return true;
}

/* The bytes of a file's start its format is told from (and a PGM/PPM
 * header, comments included, read from). */
#define IMAGE_HEADER_BYTES 4096

/* The maxval a binary PGM/PPM header declares (its third number, comments
 * skipped), or -1 where hd holds no such header in full. */
static long pnm_maxval(const unsigned char *hd, size_t got)
{
    if (got < 3 || hd[0] != 'P' || (hd[1] != '5' && hd[1] != '6'))
        return -1;
    long v = -1;
    size_t i = 2;
    for (int field = 0; field < 3; field++) {
        while (i < got && (isspace(hd[i]) || hd[i] == '#'))
            if (hd[i++] == '#') /* a comment ends at CR or LF, as stb_image reads it */
                while (i < got && hd[i] != '\n' && hd[i] != '\r')
                    i++;
        if (i >= got || !isdigit(hd[i]))
            return -1;
        for (v = 0; i < got && isdigit(hd[i]); i++) /* every digit read; the value saturates */
            v = v < 1000000 ? v * 10 + (hd[i] - '0') : v;
    }
    return i < got ? v : -1; /* a number cut by the buffer's end is not read */
}

/* stb_image takes a maxval of 0 (every pixel then reads as white) and fails
 * past 65535 naming no cause. A header longer than the bytes read (comments)
 * is refused: its maxval unread, 16-bit samples would go to stb_image, which
 * reads them byte-swapped, and the size check would miss a short file. */
static pb_status pnm_check(const char *path, const unsigned char *hd, size_t got)
{
    long maxval = pnm_maxval(hd, got);
    if (maxval < 0 && got == IMAGE_HEADER_BYTES && hd[0] == 'P' && (hd[1] == '5' || hd[1] == '6'))
        return pb__fail(PB_ERR_IO, "cannot read image '%s': a PGM/PPM header (comments) longer than %d bytes",
                        path, IMAGE_HEADER_BYTES);
    if (maxval < 0 && got >= 2 && hd[0] == 'P' && (hd[1] == '5' || hd[1] == '6'))
        return pb__fail(PB_ERR_IO, "cannot read image '%s': a PGM/PPM whose header is not width, height and maxval",
                        path);
    if (maxval >= 1000000) /* pnm_maxval saturates there */
        return pb__fail(PB_ERR_IO, "cannot read image '%s': a PGM/PPM whose maxval is above 65535", path);
    if (maxval == 0 || maxval > 65535)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': a PGM/PPM whose maxval is %ld (1 to 65535)", path, maxval);
    return PB_OK;
}

/* A directory opens and reads as an empty file: say what it is. */
static pb_status not_a_directory(const char *path, FILE *f)
{
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode))
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(EISDIR));
    return PB_OK;
}
#endif

#ifdef PB_HAVE_STB
static uint64_t pnm_header_bytes(const unsigned char *hd, size_t got, uint64_t samples);

/* A PGM/PPM sample past its maxval would scale past 255. */
static pb_status above_maxval(const char *path, long sample, long maxval)
{
    return pb__fail(PB_ERR_IO, "cannot read image '%s': a PGM/PPM with a sample of %ld, above its maxval %ld", path,
                    sample, maxval);
}

/* A binary PGM/PPM of two-byte samples. stb_image 2.27 hands them out in the
 * file's big-endian order read as the host's, so they are read here, scaled
 * to 0..255 as stb_image scales a 16-bit PNG's. */
static pb_status read_pnm16(const char *path, const unsigned char *hd, size_t got, long maxval, struct pb_image *out)
{
    uint64_t at = pnm_header_bytes(hd, got, 0);
    int w, h, n;
    if (!at || !pb__stbi_info(path, &w, &h, &n) || w < 1 || h < 1 || n < 1)
        return unreadable(path, hd, got);
    *out = (struct pb_image){.width = (size_t)w, .height = (size_t)h, .channels = (size_t)n};
    size_t px = out->width * out->height, samples = px * out->channels;
    unsigned char *raw = NULL;
    pb_status st = alloc_planes(out, "image");
    if (st == PB_OK)
        st = pb__host_alloc(2 * samples, "16-bit samples", (void **)&raw);
    FILE *f = st == PB_OK ? fopen(path, "rb") : NULL;
    if (st == PB_OK && !f)
        st = pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
    if (f) {
        if (fseek(f, (long)at, SEEK_SET) != 0 || fread(raw, 2, samples, f) != samples)
            st = pb__fail(PB_ERR_IO, "cannot read image '%s': it ends before its %zu samples", path, samples);
        fclose(f);
    }
    for (size_t i = 0; st == PB_OK && i < px; i++)
        for (size_t c = 0; c < out->channels; c++) {
            const unsigned char *b = raw + 2 * (i * out->channels + c);
            long sample = b[0] << 8 | b[1];
            if (sample > maxval) {
                st = above_maxval(path, sample, maxval);
                break;
            }
            out->data[c * px + i] = (float)(sample * 255.0 / (double)maxval);
        }
    pb__host_free(raw);
    if (st != PB_OK)
        pb__image_free(out);
    return st;
}
#endif

#ifdef PB_HAVE_STB
/* A run-length coded TGA (types 9-11) holds its pixels in packets whose
 * length no header states; stb_image reads a short one's missing pixels as
 * black. Its packets are walked here: PB_OK where they cover every pixel. */
static pb_status tga_rle_whole(const char *path, const unsigned char *hd, size_t got)
{
    bool other = hd[0] == 0x89 || hd[0] == 0xFF || hd[0] == 'P' || memcmp(hd, "BM", 2) == 0 ||
                 memcmp(hd, "GIF", 3) == 0 || memcmp(hd, "8BPS", 4) == 0 || memcmp(hd, "#?", 2) == 0;
    unsigned bits = hd[16];
    if (got < 18 || other || hd[2] < 9 || hd[2] > 11 || hd[1] != (hd[2] == 9) ||
        (bits != 8 && bits != 15 && bits != 16 && bits != 24 && bits != 32))
        return PB_OK; /* not a run-length coded TGA (stb_image judges the rest) */
    uint64_t cmap = hd[1] ? (uint64_t)(hd[5] | hd[6] << 8) * ((hd[7] + 7u) / 8) : 0, bpp = (hd[16] + 7u) / 8;
    uint64_t pixels = (uint64_t)(hd[12] | hd[13] << 8) * (uint64_t)(hd[14] | hd[15] << 8), at = 18 + hd[0] + cmap;
    FILE *f = fopen(path, "rb");
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    uint64_t covered = 0;
    while (size >= 0 && covered < pixels && at < (uint64_t)size && fseek(f, (long)at, SEEK_SET) == 0) {
        int packet = getc(f);
        if (packet == EOF)
            break;
        uint64_t n = (uint64_t)(packet & 127) + 1;
        at += 1 + (packet & 128 ? bpp : n * bpp);
        covered += n;
    }
    fclose(f);
    if (size >= 0 && covered >= pixels && at <= (uint64_t)size)
        return PB_OK;
    return pb__fail(PB_ERR_IO, "cannot read image '%s': a run-length coded TGA whose packets end before its "
                    "%llu pixels (a truncated file)", path, (unsigned long long)pixels);
}
#endif

#ifdef PB_HAVE_STB
static uint64_t le16(const unsigned char *p) { return (uint64_t)p[0] | (uint64_t)p[1] << 8; }
static uint64_t le32(const unsigned char *p) { return le16(p) | le16(p + 2) << 16; }
static uint64_t be32(const unsigned char *p) { return (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | p[2] << 8 | p[3]; }

/* A BMP of 1, 4 or 8 bits a pixel indexes a palette whose size stb_image
 * derives from the data offset; it reads a palette of a negative size as
 * none, and an index past the palette, as the colour its uninitialised stack
 * held (found by tests/fuzz/fuzz_image.c). Both are refused here: the
 * palette's size as stb_image computes it, then every pixel's index. */
static pb_status bmp_palette_whole(const char *path, const unsigned char *hd, size_t got)
{
    if (got < 2 || memcmp(hd, "BM", 2) != 0)
        return PB_OK; /* hd is zero past got, as stb_image reads past the end */
    uint64_t offset = le32(hd + 10), hsz = le32(hd + 14);
    bool core = hsz == 12;
    if (!core && hsz != 40 && hsz != 56 && hsz != 108 && hsz != 124)
        return PB_OK; /* stb_image refuses it, or reads no palette */
    uint64_t bpp = le16(hd + (core ? 24 : 28));
    if (bpp != 1 && bpp != 4 && bpp != 8)
        return PB_OK;
    int64_t w = core ? (int64_t)le16(hd + 18) : (int32_t)le32(hd + 18);
    int64_t h = core ? (int64_t)le16(hd + 20) : (int32_t)le32(hd + 22);
    h = h < 0 ? -h : h;
    int64_t gap = (int64_t)offset - 14 - (int64_t)(core ? 24 : hsz); /* stb_image: / 3 and >> 2 */
    int64_t psize = core ? gap / 3 : gap < 0 ? -1 : gap / 4;
    if (psize < 0)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': a corrupt BMP (its pixels start at byte %u, inside "
                        "its header)", path, (unsigned)offset);
    if (psize == 0 || psize > 256 || w < 1 || h < 1)
        return PB_OK; /* stb_image refuses these itself */
    if (psize >= 1 << bpp) /* no index can pass it */
        return PB_OK;
    FILE *f = fopen(path, "rb");
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
    uint64_t width = bpp == 1 ? ((uint64_t)w + 7) / 8 : bpp == 4 ? ((uint64_t)w + 1) / 2 : (uint64_t)w;
    uint64_t stride = width + (-width & 3);
    unsigned char row[4096];
    int64_t bad = -1;
    /* past the file's end stb_image reads zeros: index 0, in the palette */
    for (int64_t j = 0; j < h && bad < 0 && fseek(f, (long)(offset + (uint64_t)j * stride), SEEK_SET) == 0; j++) {
        for (uint64_t at = 0; at < width && bad < 0;) {
            size_t n = fread(row, 1, width - at < sizeof row ? (size_t)(width - at) : sizeof row, f);
            if (n == 0)
                break;
            for (size_t b = 0; b < n && bad < 0; b++) {
                uint64_t first = (at + b) * (8 / bpp); /* the byte's first pixel */
                for (unsigned k = 0; k < 8 / bpp && first + k < (uint64_t)w; k++) {
                    int64_t index = (row[b] >> (8 - bpp * (k + 1))) & ((1u << bpp) - 1);
                    if (index >= psize) {
                        bad = index;
                        break;
                    }
                }
            }
            at += n;
        }
        if (feof(f))
            break;
    }
    fclose(f);
    if (bad < 0)
        return PB_OK;
    return pb__fail(PB_ERR_IO, "cannot read image '%s': a corrupt BMP (a pixel of colour %lld, past its palette of "
                    "%lld)", path, (long long)bad, (long long)psize);
}

/* A PNG's compressed pixels (its IDAT chunks), inflated by zlib to see that
 * they are one whole, valid deflate stream no longer than the image needs.
 * stb_image 2.27 takes the invalid distance codes 30 and 31 as distance 0
 * and copies pixels it never wrote, and decodes past a stream's end (zeros)
 * until its output reaches 2 GiB: a 60-byte file took 2.2 GB and 1.8 s
 * (both found by tests/fuzz/fuzz_image.c under MemorySanitizer). The output
 * is discarded. */
static pb_status png_deflate_valid(const char *path, const unsigned char *hd, size_t got)
{
    if (got < 8 || memcmp(hd, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(hd + 12, "CgBI", 4) == 0)
        return PB_OK; /* not a PNG, or Apple's variant (raw deflate, left to stb_image) */
    FILE *f = fopen(path, "rb");
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
    enum { PIECE = 1 << 16 };
    unsigned char *in = malloc(2 * PIECE);
    z_stream zs = {0};
    if (!in || inflateInit(&zs) != Z_OK) {
        free(in);
        fclose(f);
        return pb__fail(PB_ERR_NOMEM, "cannot read image '%s': no memory to check its compressed pixels", path);
    }
    /* At most 8 bytes a pixel (16-bit RGBA) and a filter byte a row, in up to
     * 7 interlaced passes. */
    uint64_t w = be32(hd + 16), h = be32(hd + 20), most = h * (8 * w + 8) + 1024; /* hd: zeros past got */
    int zst = Z_OK;
    unsigned char chunk[8];
    bool ok = fseek(f, 8, SEEK_SET) == 0;
    while (ok && zst == Z_OK && zs.total_out <= most && fread(chunk, 1, 8, f) == 8) {
        uint64_t len = (uint64_t)chunk[0] << 24 | (uint64_t)chunk[1] << 16 | (uint64_t)chunk[2] << 8 | chunk[3];
        if (memcmp(chunk + 4, "IEND", 4) == 0)
            break;
        if (memcmp(chunk + 4, "IDAT", 4) != 0) {
            ok = len < (1u << 31) && fseek(f, (long)len + 4, SEEK_CUR) == 0;
            continue;
        }
        while (len > 0 && zst == Z_OK && zs.total_out <= most) {
            size_t n = fread(in, 1, len < PIECE ? (size_t)len : PIECE, f);
            if (n == 0)
                break; /* a short file: stb_image judges what it holds */
            len -= n;
            zs.next_in = in;
            zs.avail_in = (uInt)n;
            do {
                zs.next_out = in + PIECE; /* the output, discarded */
                zs.avail_out = PIECE;
                zst = inflate(&zs, Z_NO_FLUSH);
            } while (zst == Z_OK && zs.avail_in > 0 && zs.total_out <= most);
            if (zst == Z_BUF_ERROR)
                zst = Z_OK; /* no progress possible without more input */
        }
        ok = len == 0 && fseek(f, 4, SEEK_CUR) == 0;
    }
    const char *why = zst == Z_DATA_ERROR || zst == Z_NEED_DICT ? (zs.msg ? zs.msg : "invalid data")
                      : zs.total_out > most                     ? "they inflate to more than its size needs"
                      : zst == Z_OK && zs.total_in > 0          ? "they end before their stream does"
                                                                : NULL;
    char reason[128];
    if (why)
        snprintf(reason, sizeof reason, "%s", why);
    inflateEnd(&zs);
    free(in);
    fclose(f);
    if (zst == Z_MEM_ERROR)
        return pb__fail(PB_ERR_NOMEM, "cannot read image '%s': zlib ran out of memory", path);
    if (why)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': a corrupt PNG (its compressed pixels: %s)", path, reason);
    return PB_OK;
}

/* The orientation a JPEG's Exif block (APP1, before the first scan) records
 * for its pixels, 1-8, or 1 where hd shows none: 2-8 say how a viewer turns
 * or mirrors them upright, as phone cameras rely on. */
static int jpeg_exif_orientation(const unsigned char *hd, size_t got)
{
    if (got < 4 || hd[0] != 0xFF || hd[1] != 0xD8)
        return 1;
    for (size_t at = 2; at + 4 <= got && hd[at] == 0xFF && hd[at + 1] != 0xDA;) {
        size_t len = (size_t)hd[at + 2] << 8 | hd[at + 3], seg = at + 4, end = at + 2 + len;
        if (len < 2)
            return 1;
        if (hd[at + 1] == 0xE1 && end <= got && len >= 2 + 6 + 8 && memcmp(hd + seg, "Exif\0\0", 6) == 0) {
            const unsigned char *tiff = hd + seg + 6;
            size_t n = end - seg - 6;
            bool big = tiff[0] == 'M';
            if (!(tiff[0] == tiff[1] && (tiff[0] == 'M' || tiff[0] == 'I')))
                return 1;
#define EXIF16(p) (big ? (unsigned)(p)[0] << 8 | (p)[1] : (unsigned)(p)[1] << 8 | (p)[0])
#define EXIF32(p) (big ? (uint32_t)EXIF16(p) << 16 | EXIF16((p) + 2) : (uint32_t)EXIF16((p) + 2) << 16 | EXIF16(p))
            uint32_t ifd = EXIF32(tiff + 4);
            if (ifd > n || n - ifd < 2)
                return 1;
            unsigned entries = EXIF16(tiff + ifd);
            for (unsigned e = 0; e < entries && (uint64_t)ifd + 2 + 12 * (e + 1) <= n; e++) {
                const unsigned char *entry = tiff + ifd + 2 + 12 * e;
                if (EXIF16(entry) == 0x0112 && EXIF16(entry + 2) == 3) { /* Orientation, a SHORT */
                    unsigned o = EXIF16(entry + 8);
                    return o >= 1 && o <= 8 ? (int)o : 1;
                }
            }
#undef EXIF16
#undef EXIF32
            return 1;
        }
        at = end;
    }
    return 1;
}

/* img's pixels turned upright from Exif orientation o (2-8): mirrored,
 * turned by a half, or (5-8) its sides swapped, as viewers show them. */
static pb_status orient_upright(struct pb_image *img, int o)
{
    size_t w = img->width, h = img->height, px = w * h;
    bool swap = o >= 5;
    struct pb_image out = {.width = swap ? h : w, .height = swap ? w : h, .channels = img->channels};
    pb_status st = alloc_planes(&out, "the image turned upright");
    if (st != PB_OK)
        return st;
    for (size_t c = 0; c < img->channels; c++) {
        const float *src = img->data + c * px;
        float *dst = out.data + c * px;
        for (size_t y = 0; y < out.height; y++)
            for (size_t x = 0; x < out.width; x++) {
                size_t sx, sy; /* the stored pixel shown at (x, y) */
                switch (o) {
                case 2: sx = w - 1 - x, sy = y; break;
                case 3: sx = w - 1 - x, sy = h - 1 - y; break;
                case 4: sx = x, sy = h - 1 - y; break;
                case 5: sx = y, sy = x; break;
                case 6: sx = y, sy = h - 1 - x; break;
                case 7: sx = w - 1 - y, sy = h - 1 - x; break;
                default: sx = w - 1 - y, sy = x; break; /* 8 */
                }
                dst[y * out.width + x] = src[sy * w + sx];
            }
    }
    pb__image_free(img);
    *img = out;
    img->orientation = o;
    return PB_OK;
}

/* A Radiance HDR file's pixels, walked as stb_image reads them: flat (4
 * bytes a pixel) or run-length coded scanlines. stb_image leaves the pixels
 * of a short flat file uninitialised and loops forever on a short
 * run-length coded one (it reads zeros past the end: runs of no pixels).
 * PB_OK where the file holds every pixel, or where stb_image refuses it. */
static pb_status hdr_whole(const char *path, const unsigned char *hd, size_t got)
{
    if (got < 2 || memcmp(hd, "#?", 2) != 0)
        return PB_OK;
    FILE *f = fopen(path, "rb");
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    bool whole = true;
    char line[1024];
    int lines = 0, c;
    long width = 0, height = 0;
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0)
        goto done;
    for (;;) { /* the magic, header lines up to an empty one, then the layout */
        size_t len = 0;
        while ((c = getc(f)) != EOF && c != '\n')
            if (len < sizeof line - 1)
                line[len++] = (char)c;
        line[len] = '\0';
        if (c == EOF)
            goto done; /* stb_image refuses a header without its layout */
        if (lines++ > 0 && (len == 0 || line[0] == '\0'))
            break; /* stb_image ends the header at a line that starts with NUL too */
    }
    size_t len = 0;
    while ((c = getc(f)) != EOF && c != '\n' && len < sizeof line - 1)
        line[len++] = (char)c;
    line[len] = '\0';
    char *at = line;
    if (strncmp(at, "-Y ", 3) != 0)
        goto done;
    height = strtol(at + 3, &at, 10);
    while (*at == ' ')
        at++;
    if (strncmp(at, "+X ", 3) != 0)
        goto done;
    width = strtol(at + 3, NULL, 10);
    if (width < 1 || height < 1 || width > (1 << 24) || height > (1 << 24))
        goto done;
    long here = ftell(f);
    uint64_t flat = 4 * (uint64_t)width * (uint64_t)height;
    if (width < 8 || width >= 32768) {
        whole = (uint64_t)(size - here) >= flat;
        goto done;
    }
    for (long j = 0; j < height; j++) {
        int c1 = getc(f), c2 = getc(f), len_hi = getc(f);
        if (len_hi == EOF) {
            whole = false;
            goto done;
        }
        if (c1 != 2 || c2 != 2 || (len_hi & 0x80)) { /* flat from here, from the first pixel on */
            whole = (uint64_t)(size - ftell(f)) + 3 >= flat;
            goto done;
        }
        int len_lo = getc(f);
        if (len_lo == EOF) {
            whole = false;
            goto done;
        }
        if ((len_hi << 8 | len_lo) != width)
            goto done;
        for (int k = 0; k < 4; k++)
            for (long i = 0; i < width;) {
                int count = getc(f);
                bool run = count > 128;
                if (count == EOF || (run && getc(f) == EOF)) {
                    whole = false;
                    goto done;
                }
                count = run ? count - 128 : count;
                if (count > width - i)
                    goto done; /* stb_image: "bad RLE data" */
                if (!run && fseek(f, count, SEEK_CUR) != 0) {
                    whole = false;
                    goto done;
                }
                i += count;
            }
        if (ftell(f) > size) {
            whole = false;
            goto done;
        }
    }
done:
    fclose(f);
    if (whole)
        return PB_OK;
    return pb__fail(PB_ERR_IO, "cannot read image '%s': a Radiance HDR file whose pixels end before its %ld x %ld "
                    "(a truncated file)", path, width, height);
}
#endif

pb_status pb__image_read(const char *path, size_t width, size_t height, struct pb_image *out)
{
    *out = (struct pb_image){0};
    if (pb__image_is_raw(path))
        return read_raw(path, width, height, out);
#ifdef PB_HAVE_STB
    FILE *probe = fopen(path, "rb");
    if (!probe)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
    pb_status st = not_a_directory(path, probe);
    if (st != PB_OK) {
        fclose(probe);
        return st;
    }
    unsigned char hd[IMAGE_HEADER_BYTES] = {0};
    size_t got = fread(hd, 1, sizeof hd, probe);
    if (fseek(probe, 0, SEEK_SET) != 0) {
        int err = errno;
        fclose(probe);
        return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(err));
    }
    const char *unsafe = stb_unsafe(probe);
    fclose(probe);
    if (unsafe)
        return pb__fail(PB_ERR_IO, "cannot read image '%s': a corrupt JPEG (%s)", path, unsafe);
    if ((st = pnm_check(path, hd, got)) != PB_OK || (st = tga_rle_whole(path, hd, got)) != PB_OK ||
        (st = bmp_palette_whole(path, hd, got)) != PB_OK || (st = hdr_whole(path, hd, got)) != PB_OK ||
        (st = png_deflate_valid(path, hd, got)) != PB_OK)
        return st;
    long maxval = pnm_maxval(hd, got);
    if (maxval > 255)
        return read_pnm16(path, hd, got, maxval, out);
    /* 16-bit PNGs whole (stbi_load keeps their high bytes), scaled to 0..255
     * as 16-bit PGM/PPM samples are; a PGM/PPM below maxval 255, which
     * stb_image 2.27 leaves unscaled, likewise */
    bool wide = pb__stbi_is_16_bit(path);
    double scale = wide ? 255.0 / 65535.0 : maxval > 0 && maxval < 255 ? 255.0 / (double)maxval : 1.0;
    int w, h, n;
    void *pixels = wide ? (void *)pb__stbi_load_16(path, &w, &h, &n, 0) : (void *)pb__stbi_load(path, &w, &h, &n, 0);
    if (!pixels)
        return unreadable(path, hd, got);
    *out = (struct pb_image){.width = (size_t)w, .height = (size_t)h, .channels = (size_t)n};
    st = alloc_planes(out, "image");
    if (st == PB_OK) {
        size_t px = out->width * out->height;
        const unsigned char *p8 = pixels;
        const unsigned short *p16 = pixels;
        long limit = !wide && maxval > 0 && maxval < 255 ? maxval : 65535;
        for (size_t i = 0; st == PB_OK && i < px; i++)
            for (size_t c = 0; c < out->channels; c++) {
                size_t k = i * out->channels + c;
                long sample = wide ? p16[k] : p8[k];
                if (sample > limit) {
                    st = above_maxval(path, sample, limit);
                    break;
                }
                out->data[c * px + i] = (float)(sample * scale);
            }
    }
    pb__stbi_image_free(pixels);
    int orientation = jpeg_exif_orientation(hd, got);
    if (st == PB_OK && orientation > 1)
        st = orient_upright(out, orientation);
    if (st != PB_OK)
        pb__image_free(out);
    return st;
#else
    return pb__fail(PB_ERR_UNSUPPORTED, "cannot read '%s': this parbench was built without stb_image "
                    "(only raw float32 .f32/.raw images)", path);
#endif
}

/* ---- checks before any work ---------------------------------------------- */

#ifdef PB_HAVE_STB /* the encoded formats' bounds; raw images are checked exactly */

/* The fewest bytes a file in the format of header h can hold w x h pixels
 * of n channels in. Uncompressed formats (BMP, binary PGM/PPM, TGA types
 * 1-3) store every pixel; for the others a bound on the densest coding
 * stb_image reads: deflate (PNG) packs at most 1032 bytes into one, at 1
 * bit per pixel 8256 pixels a byte; JPEG, GIF's LZW, PackBits and RLE
 * (TGA, PSD, HDR) pack fewer. */
/* A binary PGM/PPM: its header (magic, width, height, maxval, each after
 * white space or comments, then one white-space byte) and samples of one
 * byte, two above maxval 255. stb_image 2.27 hands out the unread rest of a
 * short file uninitialised, so the header counts too. Headers longer than
 * the bytes at hand: the samples alone. */
static uint64_t pnm_header_bytes(const unsigned char *hd, size_t got, uint64_t samples)
{
    size_t at = 2;
    uint64_t field[3] = {0};
    for (int f = 0; f < 3; f++) {
        for (;;) {
            while (at < got && (hd[at] == ' ' || (hd[at] >= '\t' && hd[at] <= '\r')))
                at++;
            if (at < got && hd[at] == '#') {
                while (at < got && hd[at] != '\n' && hd[at] != '\r')
                    at++;
                continue;
            }
            break;
        }
        if (at >= got || hd[at] < '0' || hd[at] > '9')
            return samples;
        for (; at < got && hd[at] >= '0' && hd[at] <= '9'; at++) /* the value saturates */
            field[f] = field[f] < (1u << 30) ? field[f] * 10 + (uint64_t)(hd[at] - '0') : field[f];
    }
    if (at >= got)
        return samples;
    return at + 1 + samples * (field[2] > 255 ? 2 : 1);
}

static uint64_t min_file_bytes(const unsigned char *hd, size_t got, uint64_t w, uint64_t h, uint64_t n)
{
    uint64_t px = w * h;
    if (got >= 34 && hd[0] == 'B' && hd[1] == 'M') {
        bool core = le32(hd + 14) == 12;
        uint64_t bpp = le16(hd + (core ? 24 : 28)), compression = core ? 0 : le32(hd + 30);
        if ((compression == 0 || compression == 3 || compression == 6) && bpp >= 1 && bpp <= 32) {
            uint64_t row = (w * bpp + 31) / 32 * 4, last = (w * bpp + 7) / 8;
            return le32(hd + 10) + row * (h - 1) + last; /* the last row's padding may be missing */
        }
    } else if (got >= 2 && hd[0] == 'P' && (hd[1] == '5' || hd[1] == '6')) {
        return pnm_header_bytes(hd, got, px * n);
    } else if (got >= 18 && hd[0] != 0x89 && hd[0] != 0xFF && memcmp(hd, "GIF", 3) != 0 &&
               memcmp(hd, "8BPS", 4) != 0 && memcmp(hd, "#?", 2) != 0 && hd[2] >= 1 && hd[2] <= 3) {
        uint64_t bytes = (hd[16] + 7u) / 8; /* TGA without run-length coding */
        return 18 + hd[0] + px * (bytes ? bytes : 1);
    }
    return px / 8256;
}
#endif

static pb_status too_many_pixels(const char *path, uint64_t w, uint64_t h, uint64_t max_pixels)
{
    return pb__fail(PB_ERR_NOMEM, "image '%s' has %llux%llu = %llu pixels, more than the limit of %llu "
                    "(--max-pixels raises it)", path, (unsigned long long)w, (unsigned long long)h,
                    (unsigned long long)(w * h), (unsigned long long)max_pixels);
}

pb_status pb__image_probe(const char *path, size_t width, size_t height, uint64_t max_pixels,
                          struct pb_image_info *out)
{
    *out = (struct pb_image_info){0};
    uint64_t w = width, h = height, n = 1;
    if (pb__image_is_raw(path)) {
        if (!width || !height)
            return pb__fail(PB_ERR_INVALID, "raw image '%s' needs --width and --height", path);
        struct stat sb;
        if (stat(path, &sb) != 0)
            return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
        size_t want;
        if (!pb__mul_size(width, height, &want) || !pb__mul_size(want, sizeof(float), &want) ||
            (uint64_t)sb.st_size != want)
            return pb__fail(PB_ERR_IO, "raw image '%s' has %lld bytes; %zux%zu float32 needs %llu", path,
                            (long long)sb.st_size, width, height, (unsigned long long)w * h * sizeof(float));
    } else {
#ifdef PB_HAVE_STB
        FILE *f = fopen(path, "rb");
        if (!f)
            return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
        pb_status st = not_a_directory(path, f);
        if (st != PB_OK) {
            fclose(f);
            return st;
        }
        unsigned char hd[IMAGE_HEADER_BYTES] = {0};
        size_t got = fread(hd, 1, sizeof hd, f);
        long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
        int iw, ih, in;
        bool rewound = size >= 0 && fseek(f, 0, SEEK_SET) == 0;
        const char *unsafe = rewound ? stb_unsafe(f) : NULL;
        bool ok = rewound && !unsafe && pb__stbi_info_from_file(f, &iw, &ih, &in);
        fclose(f);
        if (unsafe)
            return pb__fail(PB_ERR_IO, "cannot read image '%s': a corrupt JPEG (%s)", path, unsafe);
        if ((st = pnm_check(path, hd, got)) != PB_OK)
            return st;
        if (!ok && size < 0)
            return pb__fail(PB_ERR_IO, "cannot read image '%s': %s", path, strerror(errno));
        /* stb_image declines a PNG of more than 2^30 bytes of samples (or a
         * side over 2^24) as if it were corrupt: a valid 20000 x 20000 RGB
         * image is one. Say so, after the checks that come first. */
        uint64_t pw, ph, pn;
        if (!ok && png_declares(hd, got, &pw, &ph, &pn) && pw > 0 && ph > 0) {
            if (pw * ph > max_pixels)
                return too_many_pixels(path, pw, ph, max_pixels);
            if ((uint64_t)size < min_file_bytes(hd, got, pw, ph, pn))
                return pb__fail(PB_ERR_IO, "image '%s' declares %llux%llu pixels, which need at least %llu bytes; "
                                "it has %ld (a truncated file or a decompression bomb)", path, (unsigned long long)pw,
                                (unsigned long long)ph, (unsigned long long)min_file_bytes(hd, got, pw, ph, pn), size);
            if (pw > 1u << 24 || ph > 1u << 24 || pw * ph > (1u << 30) / pn)
                return pb__fail(PB_ERR_UNSUPPORTED, "image '%s' has %llux%llu pixels of %llu channels, more than "
                                "stb_image decodes (2^30 bytes); give it as raw float32 (.f32 with --width, --height)",
                                path, (unsigned long long)pw, (unsigned long long)ph, (unsigned long long)pn);
        }
        if (!ok)
            return unreadable(path, hd, got);
        if (ih < 0 && ih != INT_MIN && got >= 2 && hd[0] == 'B' && hd[1] == 'M')
            ih = -ih; /* a BMP stored top-down: stbi_info passes its negative height on */
        if (iw < 0 || ih < 0) /* stb_image's int overflowed */
            return pb__fail(PB_ERR_IO, "image '%s' declares a side of 2^31 pixels or more", path);
        if (iw < 1 || ih < 1 || in < 1)
            return pb__fail(PB_ERR_IO, "image '%s' declares %dx%d pixels of %d channel(s); sides and channels must "
                            "be 1 or more", path, iw, ih, in);
        w = (uint64_t)iw, h = (uint64_t)ih, n = (uint64_t)in;
        uint64_t need = min_file_bytes(hd, got, w, h, n);
        if ((uint64_t)size < need)
            return pb__fail(PB_ERR_IO, "image '%s' declares %llux%llu pixels, which need at least %llu bytes; "
                            "it has %ld (a truncated file or a decompression bomb)", path, (unsigned long long)w,
                            (unsigned long long)h, (unsigned long long)need, size);
        if (jpeg_exif_orientation(hd, got) >= 5) { /* read with its sides swapped */
            uint64_t t = w;
            w = h, h = t;
        }
#else
        return pb__fail(PB_ERR_UNSUPPORTED, "cannot read '%s': this parbench was built without stb_image "
                        "(only raw float32 .f32/.raw images)", path);
#endif
    }
    if (w * h > max_pixels)
        return too_many_pixels(path, w, h, max_pixels);
    *out = (struct pb_image_info){.width = (size_t)w, .height = (size_t)h, .channels = (size_t)n};
    return PB_OK;
}

/* The format of path's extension: 'r' raw, 'p' PGM/PPM, 's' through
 * stb_image_write, 0 none. */
static char output_kind(const char *path)
{
    static const char *const stb[] = {"png", "jpg", "jpeg", "bmp", "tga"};
    const char *e = extension(path);
    if (pb__image_is_raw(path))
        return 'r';
    if (strcasecmp(e, "pgm") == 0 || strcasecmp(e, "ppm") == 0 || strcasecmp(e, "pnm") == 0)
        return 'p';
    for (size_t i = 0; i < sizeof stb / sizeof stb[0]; i++)
        if (strcasecmp(e, stb[i]) == 0)
            return 's';
    return 0;
}

/* Format, channels and size, as pb__image_write needs them. */
static pb_status check_format(const char *path, size_t width, size_t height, size_t channels)
{
    char kind = output_kind(path);
    if (!kind && !extension(path)[0])
        return pb__fail(PB_ERR_INVALID, "'%s' has no extension to tell its image format by (png, jpg, bmp, tga, pgm, "
                        "ppm, f32, raw)", path);
    if (!kind)
        return pb__fail(PB_ERR_INVALID, "'%s': unknown image format '.%s' (png, jpg, bmp, tga, pgm, ppm, f32, raw)",
                        path, extension(path));
    if (kind == 'r' && channels != 1)
        return pb__fail(PB_ERR_INVALID, "raw images have one channel; '%s' would need %zu", path, channels);
    if (kind == 'p' && channels != 1 && channels != 3)
        return pb__fail(PB_ERR_INVALID, "'%s': PGM/PPM hold 1 or 3 channels, the image has %zu", path, channels);
    /* The name says which: a .pgm is grey (P5), a .ppm colour (P6). */
    if (kind == 'p' && strcasecmp(extension(path), "pgm") == 0 && channels != 1)
        return pb__fail(PB_ERR_INVALID, "'%s': a PGM holds one channel, the image has %zu (write .ppm or .png)", path,
                        channels);
    if (kind == 'p' && strcasecmp(extension(path), "ppm") == 0 && channels != 3)
        return pb__fail(PB_ERR_INVALID, "'%s': a PPM holds three channels, the image has %zu (write .pgm or .png)",
                        path, channels);
    if (kind == 's' && !pb__image_have_codecs())
        return pb__fail(PB_ERR_UNSUPPORTED, "cannot write '%s': this parbench was built without stb_image_write "
                        "(.pgm, .ppm, .f32 and .raw only)", path);
    if (kind == 's' && (width > 1u << 16 || height > 1u << 16))
        return pb__fail(PB_ERR_INVALID, "'%s': %zux%zu is too large for an 8-bit image file (use .pgm or .f32)",
                        path, width, height);
    return PB_OK;
}

pb_status pb__image_check_output(const char *path, size_t width, size_t height, size_t channels)
{
    pb_status st = check_format(path, width, height, channels);
    if (st != PB_OK)
        return st;
    struct stat sb;
    bool existed = stat(path, &sb) == 0;
    if (existed && S_ISDIR(sb.st_mode))
        return pb__fail(PB_ERR_IO, "cannot write '%s': %s", path, strerror(EISDIR));
    FILE *f = fopen(path, existed ? "r+b" : "wb"); /* r+: opened for writing, not emptied */
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    fclose(f);
    if (!existed)
        remove(path);
    return PB_OK;
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

#ifdef PB_HAVE_STB
/* stbi_write_* to a path ignore failed fwrite and fclose: they write through
 * this callback instead, which keeps the first error. */
struct stb_sink {
    FILE *f;
    int error; /* errno of the first failed write; 0 = none */
};

static void stb_sink_write(void *context, void *data, int size)
{
    struct stb_sink *sink = context;
    if (!sink->error && size > 0 && fwrite(data, 1, (size_t)size, sink->f) != (size_t)size)
        sink->error = errno ? errno : EIO;
}

static pb_status write_stb(const char *path, const unsigned char *pixels, const struct pb_image *img)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    struct stb_sink sink = {f, 0};
    const char *e = extension(path);
    int w = (int)img->width, h = (int)img->height, n = (int)img->channels, ok;
    errno = 0;
    if (strcasecmp(e, "png") == 0)
        ok = pb__stbi_write_png_to_func(stb_sink_write, &sink, w, h, n, pixels, w * n);
    else if (strcasecmp(e, "jpg") == 0 || strcasecmp(e, "jpeg") == 0)
        ok = pb__stbi_write_jpg_to_func(stb_sink_write, &sink, w, h, n, pixels, 95);
    else if (strcasecmp(e, "bmp") == 0)
        ok = pb__stbi_write_bmp_to_func(stb_sink_write, &sink, w, h, n, pixels);
    else /* tga: check_format knows no other */
        ok = pb__stbi_write_tga_to_func(stb_sink_write, &sink, w, h, n, pixels);
    if (!sink.error && (fflush(f) != 0 || ferror(f)))
        sink.error = errno ? errno : EIO;
    if (fclose(f) != 0 && !sink.error)
        sink.error = errno ? errno : EIO;
    if (ok && !sink.error)
        return PB_OK;
    /* no half image left behind (a device or a link is not ours to remove) */
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode))
        remove(path);
    return pb__fail(PB_ERR_IO, "cannot write '%s': %s", path,
                    sink.error ? strerror(sink.error) : "stb_image_write failed (out of memory?)");
}
#endif

pb_status pb__image_write(const char *path, const struct pb_image *img)
{
    if (pb__image_is_raw(path))
        return write_raw(path, img);
    bool pnm = output_kind(path) == 'p';
    pb_status st = check_format(path, img->width, img->height, img->channels);
    if (st != PB_OK)
        return st;
    size_t px = img->width * img->height;
    unsigned char *pixels;
    st = pb__host_alloc(px * img->channels, "8-bit image", (void **)&pixels);
    if (st != PB_OK)
        return st;
    for (size_t i = 0; i < px; i++)
        for (size_t c = 0; c < img->channels; c++) {
            float v = img->data[c * px + i] + 0.5f;
            /* !(v > 0): NaN too, whose conversion would be undefined (the warning said it is there) */
            pixels[i * img->channels + c] = !(v > 0) ? 0 : v >= 255 ? 255 : (unsigned char)v;
        }
    if (pnm) {
        st = write_pnm(path, pixels, img);
    } else {
#ifdef PB_HAVE_STB
        st = write_stb(path, pixels, img);
#endif
    }
    pb__host_free(pixels);
    return st;
}

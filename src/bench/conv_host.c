/* Separable convolution, host side: filters, seeded images, the oracle and
 * the strip engine (see conv_host.h). */
#include <ctype.h>
#include <errno.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ref/ref.h"
#include "bench/conv_host.h"
#include "core/core.h"
#include "core/rng.h"
#include "core/verify.h"

#define FULL_ORACLE_PIXELS ((size_t)1 << 27)
#define SAMPLED_ROWS 64
#define SEGMENT_MIN 64   /* columns per projected segment: max(this, R) */
#define PROJ_STREAM 40   /* the projections' seeded vector */
#define PROJ_CHUNK 1024  /* rows projected at a time at check time */
#define SEAM_ROWS 256 /* at most, spread over the seams */
#define FILL_CHUNK ((size_t)1 << 20) /* elements per seeded stream of the image */

pb_status pb__conv_border_parse(const char *s, enum pb_conv_border *out)
{
    if (strcmp(s, "zero") == 0)
        *out = PB_CONV_ZERO;
    else if (strcmp(s, "clamp") == 0)
        *out = PB_CONV_CLAMP;
    else
        return pb__fail(PB_ERR_INVALID, "--border: unknown border '%s' (zero, clamp)", s);
    return PB_OK;
}

static pb_status filter_file(const char *path, size_t *radius, double **taps)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return pb__fail(PB_ERR_IO, "cannot read filter file '%s': %s (filters: gauss, gauss:SIGMA, box, FILE)",
                        path, strerror(errno));
    pb_status st = pb__conv_filter_read(f, path, radius, taps);
    fclose(f);
    return st;
}

/* The next word of a filter file into word (NUL-terminated, cut to len - 1
 * bytes): its length, 0 at the end of the file. Words are separated by white
 * space and commas; a NUL byte is part of a word, read as '?' (no number). */
static size_t next_word(FILE *f, char *word, size_t len)
{
    int c;
    while ((c = getc(f)) != EOF && (c == ',' || isspace(c)))
        ;
    size_t n = 0;
    for (; c != EOF && c != ',' && !isspace(c); c = getc(f), n++)
        if (n + 1 < len)
            word[n] = c ? (char)c : '?';
    word[n + 1 < len ? n : len - 1] = '\0';
    return n;
}

pb_status pb__conv_filter_read(FILE *f, const char *path, size_t *radius, double **taps)
{
    *taps = NULL;
    size_t n = 0, cap = 64, len;
    double *t = malloc(cap * sizeof *t);
    pb_status st = t ? PB_OK : pb__fail(PB_ERR_NOMEM, "out of memory reading '%s'", path);
    char word[128];
    while (st == PB_OK && (len = next_word(f, word, sizeof word)) > 0) {
        char *end;
        /* No errno test: ERANGE from an underflow still gives a number (0 or
         * subnormal), and an overflow gives Inf. */
        double v = strtod(word, &end);
        if (*end || !isfinite(v) || len >= sizeof word) {
            st = pb__fail(PB_ERR_IO, "filter file '%s': '%s%s' is not a number", path, word,
                          len >= sizeof word ? "..." : "");
            break;
        }
        if (n == 2 * PB_CONV_MAX_RADIUS + 1) {
            st = pb__fail(PB_ERR_IO, "filter file '%s': more than %d taps", path, 2 * PB_CONV_MAX_RADIUS + 1);
            break;
        }
        if (n == cap) {
            double *grown = realloc(t, 2 * cap * sizeof *t);
            if (!grown) {
                st = pb__fail(PB_ERR_NOMEM, "out of memory reading '%s'", path);
                break;
            }
            t = grown;
            cap *= 2;
        }
        t[n++] = v;
    }
    if (st == PB_OK && ferror(f))
        st = pb__fail(PB_ERR_IO, "cannot read filter file '%s': %s", path, strerror(errno));
    if (st == PB_OK && n < 3 && !*radius) /* one tap would be radius 0 */
        st = pb__fail(PB_ERR_IO, "filter file '%s' has %zu tap%s; a filter needs at least 3 (radius 1)", path, n,
                      n == 1 ? "" : "s");
    if (st == PB_OK && (n % 2 == 0 || (*radius && n != 2 * *radius + 1)))
        st = *radius ? pb__fail(PB_ERR_INVALID, "filter file '%s' has %zu taps; radius %zu needs %zu", path, n,
                                *radius, 2 * *radius + 1)
                     : pb__fail(PB_ERR_IO, "filter file '%s' has %zu taps; a filter needs an odd count", path, n);
    if (st != PB_OK) {
        free(t);
        return st;
    }
    *radius = n / 2;
    *taps = t;
    return PB_OK;
}

pb_status pb__conv_filter_make(const char *spec, size_t *radius, double **taps)
{
    *taps = NULL;
    bool gauss = strcmp(spec, "gauss") == 0 || strncmp(spec, "gauss:", 6) == 0, box = strcmp(spec, "box") == 0;
    if (!gauss && !box)
        return filter_file(spec, radius, taps);
    size_t r = *radius;
    if (r < 1 || r > PB_CONV_MAX_RADIUS)
        return pb__fail(PB_ERR_INVALID, "radius must be between 1 and %d (got %zu)", PB_CONV_MAX_RADIUS, r);
    double sigma = (double)r / 3.0;
    if (gauss && spec[5] == ':') {
        char *end;
        sigma = strtod(spec + 6, &end);
        if (*end || !(sigma > 0) || !isfinite(sigma))
            return pb__fail(PB_ERR_INVALID, "filter '%s': sigma must be a positive number", spec);
    }
    double *t = malloc((2 * r + 1) * sizeof *t), sum = 0;
    if (!t)
        return pb__fail(PB_ERR_NOMEM, "out of memory for the filter");
    for (size_t k = 0; k <= 2 * r; k++) {
        double x = (double)k - (double)r;
        double u = x / sigma; /* not x^2 / sigma^2: a sigma whose square underflows made 0/0 */
        t[k] = box ? 1.0 : exp(-0.5 * u * u);
        sum += t[k];
    }
    for (size_t k = 0; k <= 2 * r; k++)
        t[k] /= sum;
    *taps = t;
    return PB_OK;
}

pb_status pb__conv_filter_cast(const double *taps, size_t radius, enum pb_precision prec, void **out)
{
    size_t n = 2 * radius + 1;
    pb_status st = pb__host_alloc(n * pb_precision_size(prec), "conv filter", out);
    for (size_t k = 0; st == PB_OK && k < n; k++) {
        if (prec == PB_DOUBLE)
            ((double *)*out)[k] = taps[k];
        else
            ((float *)*out)[k] = (float)taps[k];
    }
    return st;
}

pb_status pb__conv_check_dims(int64_t width, int64_t height, int64_t radius, enum pb_precision prec)
{
    if (width < 1 || height < 1 || width > PB_CONV_MAX_SIDE || height > PB_CONV_MAX_SIDE)
        return pb__fail(PB_ERR_INVALID, "image sides must be between 1 and %u (got %lldx%lld)", PB_CONV_MAX_SIDE,
                        (long long)width, (long long)height);
    if (radius < 1 || radius > PB_CONV_MAX_RADIUS)
        return pb__fail(PB_ERR_INVALID, "radius must be between 1 and %d (got %lld)", PB_CONV_MAX_RADIUS,
                        (long long)radius);
    size_t bytes;
    if (!pb__mul_size((size_t)width, (size_t)height, &bytes) ||
        !pb__mul_size(bytes, pb_precision_size(prec), &bytes))
        return pb__fail(PB_ERR_OVERFLOW, "image %lldx%lld: size overflows", (long long)width, (long long)height);
    return PB_OK;
}

/* ---- seeded image and oracle ------------------------------------------- */

void pb__conv_host_release(void *host)
{
    struct pb_conv_host *h = host;
    if (!h)
        return;
    pb__host_free(h->image);
    free(h->taps);
    pb__host_free(h->ref);
    pb__host_free(h->scale);
    pb__host_free(h->proj_r);
    pb__host_free(h->proj_ref);
    pb__host_free(h->proj_bound);
    free(h->rows);
    free(h);
}

/* Output rows y0 .. y0+rows-1 of the filter `taps` applied to `image` (prec,
 * holding the image's rows from row0 on), from the input rows they depend on. */
static pb_status oracle_rows(const struct pb_conv_host *h, const void *image, size_t row0, const double *taps,
                             size_t y0, size_t rows, double *out)
{
    const struct pb_conv_shape *s = &h->shape;
    size_t top = y0 < s->radius ? y0 : s->radius;
    size_t last = y0 + rows + s->radius < s->height ? y0 + rows + s->radius : s->height;
    size_t in_rows = last - (y0 - top), elt = pb_precision_size(s->prec);
    double *tmp;
    pb_status st = pb__host_alloc(in_rows * s->width * sizeof(double), "conv oracle rows", (void **)&tmp);
    if (st != PB_OK)
        return st;
    pb__conv_oracle((const char *)image + (y0 - top - row0) * s->width * elt, s->prec, s->width, in_rows, top, rows, taps,
                    s->radius, s->border, tmp, out);
    pb__host_free(tmp);
    return PB_OK;
}

/* The oracle's rows and their scales: the same passes over |image| with
 * |taps| give sum|t| per element. */
static pb_status oracle(struct pb_conv_host *h)
{
    const struct pb_conv_shape *s = &h->shape;
    size_t w = s->width, elt = pb_precision_size(s->prec), px = w * s->height, n = 2 * s->radius + 1;
    bool full = h->n_rows == s->height;
    void *abs_image = NULL;
    double *abs_taps = malloc(n * sizeof *abs_taps);
    pb_status st = abs_taps ? PB_OK : pb__fail(PB_ERR_NOMEM, "conv: out of host memory");
    if (st == PB_OK)
        st = pb__host_alloc(px * elt, "conv oracle |image|", &abs_image);
    if (st != PB_OK) {
        free(abs_taps);
        return st;
    }
    for (size_t k = 0; k < n; k++)
        abs_taps[k] = fabs(h->taps[k]);
    for (size_t i = 0; i < px; i++) {
        if (s->prec == PB_DOUBLE)
            ((double *)abs_image)[i] = fabs(((const double *)h->image)[i]);
        else
            ((float *)abs_image)[i] = fabsf(((const float *)h->image)[i]);
    }
    for (size_t r = 0; r < (full ? 1 : h->n_rows) && st == PB_OK; r++) {
        size_t y0 = full ? 0 : h->rows[r], rows = full ? s->height : 1;
        st = oracle_rows(h, h->image, 0, h->taps, y0, rows, h->ref + r * w);
        if (st == PB_OK)
            st = oracle_rows(h, abs_image, 0, abs_taps, y0, rows, h->scale + r * w);
    }
    double paths = 2.0 * (double)n + 1;
    for (size_t i = 0; st == PB_OK && i < h->n_rows * w; i++)
        h->scale[i] = pb__dot_scale(s->prec, paths, h->scale[i] * h->scale[i]);
    pb__host_free(abs_image);
    free(abs_taps);
    return st;
}

/* ---- projections of sampled images ------------------------------------- */

static inline double pixel(const void *image, enum pb_precision prec, size_t i)
{
    return prec == PB_DOUBLE ? ((const double *)image)[i] : (double)((const float *)image)[i];
}

/* Segment g's columns [x0, x1), and [lo, hi): those of w_g = K_W^T r_g. */
static void segment_cols(const struct pb_conv_host *h, size_t g, size_t *x0, size_t *x1, size_t *lo, size_t *hi)
{
    size_t w = h->shape.width, R = h->shape.radius;
    *x0 = g * h->seg_len;
    *x1 = *x0 + h->seg_len < w ? *x0 + h->seg_len : w;
    *lo = *x0 > R ? *x0 - R : 0;
    *hi = *x1 + R < w ? *x1 + R : w;
}

/* out = K c over a line of n elements (c's element i at c[i * stride]),
 * compensated: the oracle's rounding stays far below double kernels'. */
static void filter_line(const struct pb_conv_host *h, const double *c, size_t n, size_t stride, size_t i, double *out)
{
    long R = (long)h->shape.radius;
    struct pb_ksum acc = {0, 0};
    for (long k = -R; k <= R; k++) {
        long j = pb__conv_border_index((long)i + k, (long)n, h->shape.border);
        if (j >= 0)
            pb__ksum_add(&acc, h->taps[k + R] * c[(size_t)j * stride]);
    }
    *out = acc.s + acc.c;
}

/* The projections' oracle: w_g = K_W^T r_g for each segment g, then
 * c[y][g] = image row y . w_g and proj_ref = K_H c, column by column; and
 * proj_bound = sum|t| (|K_H| m), m[y] = the largest |pixel| of row y, which
 * bounds the |taps| filter of |image| over the row. */
static pb_status projection_oracle(struct pb_conv_host *h)
{
    const struct pb_conv_shape *s = &h->shape;
    const size_t w = s->width, ht = s->height, R = s->radius, n = 2 * R + 1, ns = h->n_segs, span = h->seg_len + 2 * R;
    double *wv = NULL, *c = NULL, *m = NULL;
    pb_status st = pb__host_alloc(ns * span * sizeof *wv, "conv projections", (void **)&wv);
    if (st == PB_OK)
        st = pb__host_alloc(ht * ns * sizeof *c, "conv projections", (void **)&c);
    if (st == PB_OK)
        st = pb__host_alloc(ht * sizeof *m, "conv projections", (void **)&m);
    if (st != PB_OK) {
        pb__host_free(wv);
        pb__host_free(c);
        return st;
    }
    pb__check_vector(h->seed, PROJ_STREAM, h->proj_r, w);
    for (size_t g = 0; g < ns; g++) {
        size_t x0, x1, lo, hi;
        segment_cols(h, g, &x0, &x1, &lo, &hi);
        double *wg = wv + g * span;
        memset(wg, 0, span * sizeof *wg);
        for (size_t x = x0; x < x1; x++)
            for (size_t k = 0; k < n; k++) {
                long j = pb__conv_border_index((long)(x + k) - (long)R, (long)w, s->border);
                if (j >= 0)
                    wg[(size_t)j - lo] += h->taps[k] * h->proj_r[x];
            }
    }
    const long rows = (long)ht;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long y = 0; y < rows; y++) {
        size_t row = (size_t)y * w;
        double most = 0;
        for (size_t x = 0; x < w; x++)
            most = fmax(most, fabs(pixel(h->image, s->prec, row + x)));
        m[y] = most;
        for (size_t g = 0; g < ns; g++) {
            size_t x0, x1, lo, hi;
            segment_cols(h, g, &x0, &x1, &lo, &hi);
            const double *wg = wv + g * span;
            struct pb_ksum acc = {0, 0};
            for (size_t j = lo; j < hi; j++)
                pb__ksum_add(&acc, pixel(h->image, s->prec, row + j) * wg[j - lo]);
            c[(size_t)y * ns + g] = acc.s + acc.c;
        }
    }
    double l1 = 0;
    for (size_t k = 0; k < n; k++)
        l1 += fabs(h->taps[k]);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long y = 0; y < rows; y++) {
        for (size_t g = 0; g < ns; g++)
            filter_line(h, c + g, ht, ns, (size_t)y, &h->proj_ref[(size_t)y * ns + g]);
        double b = 0;
        for (long k = -(long)R; k <= (long)R; k++) {
            long j = pb__conv_border_index(y + k, rows, s->border);
            if (j >= 0)
                b += fabs(h->taps[k + (long)R]) * m[j];
        }
        h->proj_bound[y] = l1 * b;
    }
    pb__host_free(wv);
    pb__host_free(c);
    pb__host_free(m);
    return PB_OK;
}

/* Each row's segments of out times r against the oracle's. A segment's
 * elements err by at most their scales s_x (u sqrt(N) S_x + N tiny, S_x <=
 * the row's bound), independently, so its projection errs by about
 * sqrt(sum r_x^2 s_x^2) <= |r_g| s_max: a wrong element weighs against
 * sqrt(seg_len) elements' scales. */
static pb_status check_projections(const struct pb_conv_host *h, const void *image, struct pb_check *out)
{
    const struct pb_conv_shape *s = &h->shape;
    const size_t w = s->width, ht = s->height, ns = h->n_segs;
    const double paths = 2.0 * (2 * s->radius + 1) + 1;
    double *got = NULL, *scale = NULL, *norm = NULL;
    pb_status st = pb__host_alloc(PROJ_CHUNK * ns * sizeof *got, "conv check projections", (void **)&got);
    if (st == PB_OK)
        st = pb__host_alloc(2 * ns * sizeof *scale, "conv check projections", (void **)&scale);
    if (st != PB_OK) {
        pb__host_free(got);
        return st;
    }
    norm = scale + ns;
    for (size_t g = 0; g < ns; g++) {
        size_t x0, x1, lo, hi;
        segment_cols(h, g, &x0, &x1, &lo, &hi);
        norm[g] = 0;
        for (size_t x = x0; x < x1; x++)
            norm[g] += h->proj_r[x] * h->proj_r[x];
        norm[g] = sqrt(norm[g]);
    }
    for (size_t y0 = 0; y0 < ht; y0 += PROJ_CHUNK) {
        const long rows = (long)(ht - y0 < PROJ_CHUNK ? ht - y0 : PROJ_CHUNK);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (long i = 0; i < rows; i++) {
            size_t row = (y0 + (size_t)i) * w;
            for (size_t g = 0; g < ns; g++) {
                size_t x0, x1, lo, hi;
                segment_cols(h, g, &x0, &x1, &lo, &hi);
                struct pb_ksum acc = {0, 0};
                for (size_t x = x0; x < x1; x++)
                    pb__ksum_add(&acc, pixel(image, s->prec, row + x) * h->proj_r[x]);
                got[(size_t)i * ns + g] = acc.s + acc.c;
            }
        }
        for (long i = 0; i < rows; i++) {
            size_t y = y0 + (size_t)i;
            double sy = pb__dot_scale(s->prec, paths, h->proj_bound[y] * h->proj_bound[y]);
            for (size_t g = 0; g < ns; g++)
                scale[g] = norm[g] * sy;
            pb__check_add_scaled(out, got + (size_t)i * ns, PB_DOUBLE, h->proj_ref + y * ns, scale, ns, y * ns,
                                 h->proj_what);
        }
    }
    pb__host_free(got);
    pb__host_free(scale);
    return PB_OK;
}

static int by_row(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

size_t pb__conv_seam_rows(const struct pb_conv_shape *shape, size_t *out, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < 2; k++) {
        size_t s = shape->strips[k], ht = shape->height;
        if (!s || s >= ht)
            continue;
        size_t seams = (ht - 1) / s, room = (max - n) / 2 / (k == 0 && shape->strips[1] ? 2 : 1);
        size_t step = seams > room && room ? (seams + room - 1) / room : 1;
        for (size_t b = 1; b <= seams && n + 2 <= max && room; b += step)
            out[n++] = b * s - 1, out[n++] = b * s;
    }
    return n;
}

pb_status pb__conv_host_prepare(const struct pb_conv_shape *shape, uint64_t seed, struct pb_conv_host **out)
{
    *out = NULL;
    struct pb_conv_host *h = calloc(1, sizeof *h);
    if (!h)
        return pb__fail(PB_ERR_NOMEM, "conv: out of host memory");
    h->shape = *shape;
    size_t w = shape->width, ht = shape->height, px = w * ht, elt = pb_precision_size(shape->prec);
    size_t radius = shape->radius;
    bool full = px <= (shape->full_pixels ? shape->full_pixels : FULL_ORACLE_PIXELS) || ht <= SAMPLED_ROWS;
    h->n_rows = full ? ht : SAMPLED_ROWS + SEAM_ROWS;
    pb_status st = pb__conv_filter_make(shape->filter, &radius, &h->taps);
    if (st == PB_OK && radius != shape->radius)
        st = pb__fail(PB_ERR_INVALID, "filter '%s' has radius %zu, not %zu", shape->filter, radius, shape->radius);
    if (st == PB_OK && !(h->rows = malloc(h->n_rows * sizeof *h->rows)))
        st = pb__fail(PB_ERR_NOMEM, "conv: out of host memory");
    if (st == PB_OK && full) {
        for (size_t i = 0; i < ht; i++)
            h->rows[i] = i;
    } else if (st == PB_OK) {
        pb__rng_sample_rows(seed, ht, h->rows, SAMPLED_ROWS);
        h->n_rows = SAMPLED_ROWS + pb__conv_seam_rows(shape, h->rows + SAMPLED_ROWS, SEAM_ROWS);
        qsort(h->rows, h->n_rows, sizeof *h->rows, by_row);
        size_t kept = 1; /* a seam may be a sampled row */
        for (size_t r = 1; r < h->n_rows; r++)
            if (h->rows[r] != h->rows[kept - 1])
                h->rows[kept++] = h->rows[r];
        h->n_rows = kept;
    }
    if (st == PB_OK)
        st = pb__host_alloc(px * elt, "conv input image", &h->image);
    if (st == PB_OK)
        st = pb__host_alloc(h->n_rows * w * sizeof(double), "conv reference result", (void **)&h->ref);
    if (st == PB_OK)
        st = pb__host_alloc(h->n_rows * w * sizeof(double), "conv reference scales", (void **)&h->scale);
    if (st == PB_OK && !full) {
        h->seg_len = radius > SEGMENT_MIN ? radius : SEGMENT_MIN;
        h->n_segs = (w + h->seg_len - 1) / h->seg_len;
        snprintf(h->proj_what, sizeof h->proj_what, "segment (row * %zu + segment of %zu columns) of out * r",
                 h->n_segs, h->seg_len);
        st = pb__host_alloc(w * sizeof(double), "conv check vector", (void **)&h->proj_r);
        if (st == PB_OK)
            st = pb__host_alloc(ht * h->n_segs * sizeof(double), "conv reference projections", (void **)&h->proj_ref);
        if (st == PB_OK)
            st = pb__host_alloc(ht * sizeof(double), "conv reference projections", (void **)&h->proj_bound);
    }
    if (st != PB_OK) {
        pb__conv_host_release(h);
        return st;
    }
    h->seed = seed;
    /* The kernels see the taps rounded to prec; so does the oracle. */
    for (size_t k = 0; k <= 2 * radius && shape->prec == PB_FLOAT; k++)
        h->taps[k] = (float)h->taps[k];
    /* Taps, or sums of them, past the type's range are Inf in every kernel:
     * the filter's doing, not a kernel's (UNSUPPORTED, not FAILED). The
     * image's values are at most 1 in magnitude, so no output of the two
     * passes exceeds (sum of |taps|)^2. */
    double most = shape->prec == PB_FLOAT ? FLT_MAX : DBL_MAX, l1 = 0;
    for (size_t k = 0; k <= 2 * radius; k++)
        l1 += fabs(h->taps[k]);
    if (!(l1 * l1 <= most))
        snprintf(h->overflow, sizeof h->overflow,
                 "filter '%s': its taps sum to %g in magnitude, so two passes can reach %g, past %s's range",
                 shape->filter, l1, l1 * l1, pb_precision_name(shape->prec));
    /* One seeded stream per chunk, so threads fill it and the image does not
     * depend on the thread count. */
    const long chunks = (long)((px + FILL_CHUNK - 1) / FILL_CHUNK);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16)
#endif
    for (long c = 0; c < chunks; c++) {
        struct pb_rng rng;
        size_t first = (size_t)c * FILL_CHUNK, n = px - first < FILL_CHUNK ? px - first : FILL_CHUNK;
        pb__rng_init(&rng, seed, 100 + (uint64_t)c);
        pb__rng_fill(&rng, (char *)h->image + first * elt, shape->prec, n);
    }
    st = oracle(h);
    if (st == PB_OK && !full)
        st = projection_oracle(h);
    if (st != PB_OK) {
        pb__conv_host_release(h);
        return st;
    }
    *out = h;
    return PB_OK;
}

/* The fault: a seeded element anywhere in the image off by 1e-3 times the
 * sum of its terms' magnitudes (recomputed here, for any row), or by 1 where
 * that sum is 0. */
static pb_status inject_fault(const struct pb_conv_host *h, void *image)
{
    const struct pb_conv_shape *s = &h->shape;
    struct pb_rng rng;
    pb__rng_init(&rng, h->seed, 20);
    size_t y = (size_t)(pb__rng_next(&rng) % s->height), x = (size_t)(pb__rng_next(&rng) % s->width);
    size_t n = 2 * s->radius + 1, elt = pb_precision_size(s->prec);
    size_t top = y < s->radius ? y : s->radius, last = y + 1 + s->radius < s->height ? y + 1 + s->radius : s->height;
    size_t row0 = y - top, in_px = (last - row0) * s->width;
    double *row = NULL, *abs_taps = malloc(n * sizeof *abs_taps);
    void *abs_rows = NULL;
    pb_status st = abs_taps ? PB_OK : pb__fail(PB_ERR_NOMEM, "conv: out of host memory");
    if (st == PB_OK)
        st = pb__host_alloc(s->width * sizeof *row, "conv fault", (void **)&row);
    if (st == PB_OK)
        st = pb__host_alloc(in_px * elt, "conv fault", &abs_rows);
    if (st == PB_OK) {
        for (size_t k = 0; k < n; k++)
            abs_taps[k] = fabs(h->taps[k]);
        for (size_t i = 0; i < in_px; i++) {
            if (s->prec == PB_DOUBLE)
                ((double *)abs_rows)[i] = fabs(((const double *)h->image)[row0 * s->width + i]);
            else
                ((float *)abs_rows)[i] = fabsf(((const float *)h->image)[row0 * s->width + i]);
        }
        st = oracle_rows(h, abs_rows, row0, abs_taps, y, 1, row);
    }
    if (st == PB_OK) {
        /* All terms 0 (zero taps or pixels): the exact 0 off by 1. */
        double d = row[x] > 0 ? 1e-3 * row[x] : 1.0;
        if (s->prec == PB_DOUBLE)
            ((double *)image)[y * s->width + x] += d;
        else
            ((float *)image)[y * s->width + x] += (float)d;
    }
    pb__host_free(row);
    pb__host_free(abs_rows);
    free(abs_taps);
    return st;
}

pb_status pb__conv_host_check(const struct pb_conv_host *h, void *image, bool corrupt, struct pb_check *out)
{
    const struct pb_conv_shape *s = &h->shape;
    size_t w = s->width, elt = pb_precision_size(s->prec);
    if (corrupt) {
        pb_status st = inject_fault(h, image);
        if (st != PB_OK)
            return st;
    }
    bool full = h->n_rows == s->height;
    pb__check_begin(out, PB_CHECK_TOL, full ? "full" : "sampled");
    for (size_t r = 0; r < h->n_rows; r++)
        pb__check_add_scaled(out, (char *)image + h->rows[r] * w * elt, s->prec, h->ref + r * w, h->scale + r * w, w,
                             h->rows[r] * w, "element");
    pb_status st = PB_OK;
    if (!full) {
        pb__check_finite(out, image, s->prec, w * s->height, 0);
        st = check_projections(h, image, out);
    }
    pb__check_end(out);
    return st;
}

/* ---- the strip engine -------------------------------------------------- */

struct conv_slot {
    pb_buf *stage_in, *stage_out; /* pinned, strip-sized */
    pb_buf *in, *tmp, *out;       /* device */
    pb_stream *stream;
    bool pending;                 /* stage_out holds a strip not yet in the output */
    size_t y0, rows;
};

struct pb_conv_engine {
    pb_device *dev;
    struct pb_conv_job job;
    const struct pb_variant *variant;
    const char *unsupported;
    size_t strip;
    pb_buf *filter;
    struct conv_slot *slots;
    size_t device_bytes;
    pb_buf *pin_in, *pin_out; /* the job's images, page-locked in place; NULL = staged */
    double pin_s;
    char why_staged[256];
};

/* Device bytes of one slot for strips of s rows. */
static bool slot_bytes(const struct pb_conv_shape *sh, size_t s, size_t *out)
{
    size_t in_rows = s + 2 * sh->radius < sh->height ? s + 2 * sh->radius : sh->height, rows;
    return pb__add_size(2 * in_rows, s, &rows) && pb__mul_size(rows, sh->width, out) &&
           pb__mul_size(*out, pb_precision_size(sh->prec), out);
}

pb_status pb__conv_strip_rows(const struct pb_conv_job *job, size_t *rows)
{
    const struct pb_conv_shape *sh = &job->shape;
    size_t s = job->strip_rows;
    if (!s) {
        /* Enough strips for a deep pipeline, few enough that halo rows stay a small part. */
        s = (sh->height + 63) / 64;
        if (s < 8 * sh->radius)
            s = 8 * sh->radius;
    }
    if (s > sh->height)
        s = sh->height;
    if (job->device_mem) {
        size_t filter = (2 * sh->radius + 1) * pb_precision_size(sh->prec), per_slot;
        size_t budget = job->device_mem > filter ? (job->device_mem - filter) / job->slots : 0;
        while (s > 0 && (!slot_bytes(sh, s, &per_slot) || per_slot > budget))
            s = s > 64 ? s - s / 8 : s - 1;
        if (!s) {
            char buf[32];
            return pb__fail(PB_ERR_INVALID,
                            "--device-mem %s is too small for %zu strip(s) of width %zu with radius %zu",
                            pb__format_bytes((double)job->device_mem, buf, sizeof buf), job->slots, sh->width,
                            sh->radius);
        }
    }
    *rows = s;
    return PB_OK;
}

/* Conv kernels from fastest to slowest, for "auto". fused moves the image
 * half as often as regs but does more work per tap: it leads only where the
 * taps are few (measured on an H100, float and double: ahead at R <= 3, even
 * at 4, behind from R = 8). */
static const char *const fastest_first[] = {"fused", "regs", "tiled", "ring", "rowcol"};
#define FUSED_LEADS_UP_TO_RADIUS 3

const struct pb_variant *pb__conv_auto_variant(const pb_device *dev, const char *name, size_t radius,
                                               const struct pb_conv_args *a)
{
    if (name && strcmp(name, "auto") != 0)
        return pb__variant_find(dev->backend, "conv", name);
    const struct pb_variant *fused = NULL;
    for (size_t i = 0; i < sizeof fastest_first / sizeof fastest_first[0]; i++) {
        const struct pb_variant *v = pb__variant_find(dev->backend, "conv", fastest_first[i]);
        const char *why;
        if (!v || (a && v->supports && !v->supports(dev, a, &why)))
            continue;
        if (i == 0 && radius > FUSED_LEADS_UP_TO_RADIUS)
            fused = v; /* only if nothing else is there */
        else
            return v;
    }
    return fused;
}

void pb__conv_engine_free(struct pb_conv_engine *e)
{
    if (!e)
        return;
    for (size_t i = 0; e->slots && i < e->job.slots; i++) {
        struct conv_slot *s = &e->slots[i];
        pb_buf_free(s->stage_in);
        pb_buf_free(s->stage_out);
        pb_buf_free(s->in);
        pb_buf_free(s->tmp);
        pb_buf_free(s->out);
        pb_stream_destroy(s->stream);
    }
    free(e->slots);
    pb_buf_free(e->filter);
    pb_buf_free(e->pin_in);
    pb_buf_free(e->pin_out);
    free(e);
}

static struct pb_conv_args strip_args(const struct pb_conv_engine *e, const struct conv_slot *s, size_t y0,
                                      size_t rows)
{
    const struct pb_conv_shape *sh = &e->job.shape;
    size_t top = y0 < sh->radius ? y0 : sh->radius;
    size_t below = sh->height - (y0 + rows);
    size_t bottom = below < sh->radius ? below : sh->radius;
    return (struct pb_conv_args){.prec = sh->prec, .width = sh->width, .height = rows,
                                 .in_rows = top + rows + bottom, .in_top = top, .radius = sh->radius,
                                 .border = sh->border, .filter = e->filter, .in = s->in, .tmp = s->tmp,
                                 .out = s->out};
}

/* Page-locks the job's images; PB_CONV_PIN_IF_ABLE stages instead where
 * that fails, and keeps why. */
static pb_status pin_images(struct pb_conv_engine *e)
{
    const struct pb_conv_job *j = &e->job;
    if (!j->in || !j->out)
        return pb__fail(PB_ERR_INVALID, "conv: copying in place needs the images at creation");
    size_t bytes = j->shape.width * j->shape.height * pb_precision_size(j->shape.prec);
    double t0 = pb__now();
    pb_status st = pb_buf_pin_host(e->dev, (void *)j->in, bytes, &e->pin_in);
    if (st == PB_OK)
        st = pb_buf_pin_host(e->dev, j->out, bytes, &e->pin_out);
    e->pin_s = pb__now() - t0;
    if (st == PB_OK)
        return PB_OK;
    pb_buf_free(e->pin_in);
    e->pin_in = NULL;
    if (j->host_mem == PB_CONV_PINNED)
        return st;
    snprintf(e->why_staged, sizeof e->why_staged, "%s", pb_last_error());
    return PB_OK;
}

pb_status pb__conv_engine_create(pb_device *dev, const struct pb_conv_job *job, const double *taps,
                                 struct pb_conv_engine **out)
{
    *out = NULL;
    struct pb_conv_engine *e = calloc(1, sizeof *e);
    if (!e)
        return pb__fail(PB_ERR_NOMEM, "conv: out of host memory");
    e->dev = dev;
    e->job = *job;
    if (!e->job.slots)
        e->job.slots = 1;
    *out = e;
    e->variant = pb__conv_auto_variant(dev, job->variant, job->shape.radius, NULL);
    if (!e->variant) {
        e->unsupported = "this backend has no such conv kernel";
        return PB_OK;
    }
    const struct pb_conv_shape *sh = &e->job.shape;
    size_t elt = pb_precision_size(sh->prec), w = sh->width;
    pb_status st = pb__conv_strip_rows(&e->job, &e->strip);
    if (st == PB_OK && e->job.host_mem != PB_CONV_STAGED)
        st = pin_images(e);
    else
        snprintf(e->why_staged, sizeof e->why_staged, "staging asked for");
    if (st == PB_OK && !(e->slots = calloc(e->job.slots, sizeof *e->slots)))
        st = pb__fail(PB_ERR_NOMEM, "conv: out of host memory");
    void *f = NULL;
    if (st == PB_OK)
        st = pb__conv_filter_cast(taps, sh->radius, sh->prec, &f);
    if (st == PB_OK)
        st = pb_buf_alloc(dev, PB_MEM_DEVICE, (2 * sh->radius + 1) * elt, &e->filter);
    if (st == PB_OK)
        st = pb_buf_write(e->filter, 0, f, (2 * sh->radius + 1) * elt);
    pb__host_free(f);
    size_t in_rows = e->strip + 2 * sh->radius < sh->height ? e->strip + 2 * sh->radius : sh->height;
    for (size_t i = 0; i < e->job.slots && st == PB_OK; i++) {
        struct conv_slot *s = &e->slots[i];
        if (!e->pin_in) {
            st = pb_buf_alloc(dev, PB_MEM_PINNED, in_rows * w * elt, &s->stage_in);
            if (st == PB_OK)
                st = pb_buf_alloc(dev, PB_MEM_PINNED, e->strip * w * elt, &s->stage_out);
        }
        if (st == PB_OK)
            st = pb_buf_alloc(dev, PB_MEM_DEVICE, in_rows * w * elt, &s->in);
        if (st == PB_OK)
            st = pb_buf_alloc(dev, PB_MEM_DEVICE, in_rows * w * elt, &s->tmp);
        if (st == PB_OK)
            st = pb_buf_alloc(dev, PB_MEM_DEVICE, e->strip * w * elt, &s->out);
        /* Zeros, so timing the kernels alone reads defined values. */
        if (st == PB_OK)
            st = pb_buf_fill_bytes(s->in, 0);
        if (st == PB_OK && job->streams)
            st = pb_stream_create(dev, &s->stream);
        e->device_bytes += (2 * in_rows + e->strip) * w * elt;
    }
    if (st != PB_OK) {
        pb__conv_engine_free(e);
        *out = NULL;
        return st;
    }
    /* "auto": the fastest kernel that takes these strips. */
    struct pb_conv_args a = strip_args(e, &e->slots[0], 0, e->strip);
    const struct pb_variant *fits = pb__conv_auto_variant(dev, job->variant, sh->radius, &a);
    if (fits)
        e->variant = fits;
    if (e->variant->supports && !e->variant->supports(dev, &a, &e->unsupported) && !e->unsupported)
        e->unsupported = "unsupported";
    return PB_OK;
}

const char *pb__conv_engine_unsupported(const struct pb_conv_engine *e) { return e->unsupported; }
bool pb__conv_engine_auto_variant_ok(const struct pb_conv_engine *e) { return e->variant != NULL; }
const char *pb__conv_engine_variant(const struct pb_conv_engine *e) { return e->variant ? e->variant->desc.name : "-"; }
size_t pb__conv_engine_strip_rows(const struct pb_conv_engine *e) { return e->strip; }
size_t pb__conv_engine_device_bytes(const struct pb_conv_engine *e) { return e->device_bytes; }

bool pb__conv_engine_pinned(const struct pb_conv_engine *e, double *pin_s, const char **why_staged)
{
    *pin_s = e->pin_s;
    *why_staged = e->pin_in ? NULL : e->why_staged;
    return e->pin_in != NULL;
}

/* memcpy split over every thread when large (the host side of a strip's
 * copy must keep up with the link, and strips may be small). */
static void copy_host(void *dst, const void *src, size_t bytes)
{
    size_t threads = 1;
#ifdef _OPENMP
    threads = (size_t)omp_get_max_threads();
    threads = threads < PB_MAX_THREADS ? threads : PB_MAX_THREADS;
#endif
    size_t chunk = (bytes / threads + 4095) / 4096 * 4096;
    if (chunk < ((size_t)1 << 18))
        chunk = (size_t)1 << 18;
    const long n = (long)((bytes + chunk - 1) / chunk);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n > 1)
#endif
    for (long i = 0; i < n; i++) {
        size_t off = (size_t)i * chunk, len = bytes - off < chunk ? bytes - off : chunk;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}

/* Waits for the slot's queued work and moves its finished strip into out. */
static pb_status drain(struct pb_conv_engine *e, struct conv_slot *s, void *out)
{
    if (s->stream) {
        pb_status st = pb_stream_sync(s->stream);
        if (st != PB_OK)
            return st;
    }
    if (s->pending) {
        size_t row = e->job.shape.width * pb_precision_size(e->job.shape.prec);
        copy_host((char *)out + s->y0 * row, pb_buf_host_ptr(s->stage_out), s->rows * row);
        s->pending = false;
    }
    return PB_OK;
}

pb_status pb__conv_engine_run(struct pb_conv_engine *e, const void *in, void *out, enum pb_conv_part part)
{
    if (e->unsupported)
        return pb__fail(PB_ERR_UNSUPPORTED, "conv: %s", e->unsupported);
    if (e->pin_in && (in != e->job.in || out != e->job.out))
        return pb__fail(PB_ERR_INVALID, "conv: this engine copies in place and filters only the images it pinned");
    const struct pb_conv_shape *sh = &e->job.shape;
    size_t row = sh->width * pb_precision_size(sh->prec);
    pb_status st = PB_OK;
    size_t n_strips = (sh->height + e->strip - 1) / e->strip;
    for (size_t i = 0; i < n_strips && st == PB_OK; i++) {
        struct conv_slot *s = &e->slots[i % e->job.slots];
        if ((st = drain(e, s, out)) != PB_OK)
            break;
        size_t y0 = i * e->strip, rows = sh->height - y0 < e->strip ? sh->height - y0 : e->strip;
        struct pb_conv_args a = strip_args(e, s, y0, rows);
        if (part != PB_CONV_KERNELS && e->pin_in) {
            st = pb_buf_copy(s->in, 0, e->pin_in, (y0 - a.in_top) * row, a.in_rows * row, s->stream);
        } else if (part != PB_CONV_KERNELS) {
            copy_host(pb_buf_host_ptr(s->stage_in), (const char *)in + (y0 - a.in_top) * row, a.in_rows * row);
            st = pb_buf_copy(s->in, 0, s->stage_in, 0, a.in_rows * row, s->stream);
        }
        if (st == PB_OK && part != PB_CONV_COPIES)
            st = e->variant->run(e->dev, &a, s->stream);
        if (st == PB_OK && part != PB_CONV_KERNELS && e->pin_out) {
            st = pb_buf_copy(e->pin_out, y0 * row, s->out, 0, rows * row, s->stream);
        } else if (st == PB_OK && part != PB_CONV_KERNELS) {
            st = pb_buf_copy(s->stage_out, 0, s->out, 0, rows * row, s->stream);
            s->pending = true;
            s->y0 = y0;
            s->rows = rows;
        }
    }
    for (size_t i = 0; i < e->job.slots && st == PB_OK; i++)
        st = drain(e, &e->slots[i], out);
    if (st == PB_OK)
        st = pb_device_sync(e->dev);
    return st;
}

/* ---- planning, shared by the benchmarks -------------------------------- */

pb_status pb__conv_plan(const struct pb_param_lists *given, size_t n_params, const int64_t *radii, size_t n_radii,
                        enum pb_precision prec, struct pb_problem *out, size_t max, size_t *n_out)
{
    size_t idx[PB_MAX_PARAMS] = {0}, count = 0;
    struct pb_param_lists lists = *given, *l = &lists;
    bool radius_given = given->count[PB_CONV_P_RADIUS] != 0;
    if (!radius_given)
        lists.values[PB_CONV_P_RADIUS] = (int64_t *)radii, lists.count[PB_CONV_P_RADIUS] = n_radii;
    for (;;) {
        struct pb_problem p = {.prec = prec};
        for (size_t i = 0; i < n_params; i++) {
            if (!l->count[i])
                continue;
            if (l->text[i])
                p.s[i] = l->text[i][idx[i]];
            else
                p.v[i] = l->values[i][idx[i]];
        }
        if (!l->count[PB_CONV_P_HEIGHT])
            p.v[PB_CONV_P_HEIGHT] = p.v[PB_CONV_P_WIDTH];
        const char *filter = p.s[PB_CONV_P_FILTER];
        bool file = filter && strcmp(filter, "gauss") != 0 && strncmp(filter, "gauss:", 6) != 0 &&
                    strcmp(filter, "box") != 0;
        pb_status st = PB_OK;
        bool keep = true;
        if (file && !radius_given) { /* the file's taps say the radius: one problem */
            keep = idx[PB_CONV_P_RADIUS] == 0;
            size_t radius = 0;
            double *taps = NULL;
            if (keep)
                st = pb__conv_filter_make(filter, &radius, &taps);
            free(taps);
            p.v[PB_CONV_P_RADIUS] = (int64_t)radius;
        }
        if (st == PB_OK && keep)
            st = pb__conv_check_dims(p.v[PB_CONV_P_WIDTH], p.v[PB_CONV_P_HEIGHT], p.v[PB_CONV_P_RADIUS], prec);
        enum pb_conv_border border = PB_CONV_ZERO;
        if (st == PB_OK)
            st = pb__conv_border_parse(p.s[PB_CONV_P_BORDER], &border);
        /* A bad gauss:SIGMA, or a filter file whose taps do not match the
         * --radius given, is a usage error, found before any row runs. */
        if (st == PB_OK && filter && (strncmp(filter, "gauss:", 6) == 0 || (file && radius_given))) {
            size_t radius = (size_t)p.v[PB_CONV_P_RADIUS];
            double *taps = NULL;
            st = pb__conv_filter_make(filter, &radius, &taps);
            free(taps);
        }
        if (st != PB_OK)
            return st;
        p.v[PB_CONV_P_BORDER] = border;
        if (keep && count >= max)
            return pb__fail(PB_ERR_INVALID, "conv: more than %zu problems", max);
        if (keep)
            out[count++] = p;
        /* next combination, last parameter fastest */
        size_t i = n_params;
        while (i > 0) {
            i--;
            size_t n = l->count[i] ? l->count[i] : 1;
            if (++idx[i] < n)
                break;
            idx[i] = 0;
            if (i == 0) {
                *n_out = count;
                return PB_OK;
            }
        }
    }
}

struct pb_conv_shape pb__conv_shape(const struct pb_problem *p)
{
    return (struct pb_conv_shape){.width = (size_t)p->v[PB_CONV_P_WIDTH], .height = (size_t)p->v[PB_CONV_P_HEIGHT],
                                  .radius = (size_t)p->v[PB_CONV_P_RADIUS],
                                  .border = (enum pb_conv_border)p->v[PB_CONV_P_BORDER],
                                  .filter = p->s[PB_CONV_P_FILTER], .prec = p->prec};
}

void pb__conv_describe(const struct pb_problem *p, char *buf, size_t len)
{
    snprintf(buf, len, "%lldx%lld r%lld %s %s", (long long)p->v[PB_CONV_P_WIDTH], (long long)p->v[PB_CONV_P_HEIGHT],
             (long long)p->v[PB_CONV_P_RADIUS], p->s[PB_CONV_P_BORDER], p->s[PB_CONV_P_FILTER]);
}

double pb__conv_flops(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)v, (void)host;
    return 4.0 * (2.0 * (double)p->v[PB_CONV_P_RADIUS] + 1.0) * (double)p->v[PB_CONV_P_WIDTH] *
           (double)p->v[PB_CONV_P_HEIGHT];
}

double pb__conv_bytes(const struct pb_problem *p, const struct pb_variant *v, const void *host)
{
    (void)v, (void)host;
    return 4.0 * (double)p->v[PB_CONV_P_WIDTH] * (double)p->v[PB_CONV_P_HEIGHT] *
           (double)pb_precision_size(p->prec);
}

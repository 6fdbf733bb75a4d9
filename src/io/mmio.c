/* Matrix Market reader and writer (see pb_matrix.h).
 *
 * The reader streams: bytes come in blocks (read(2), or inflate for gzip
 * data, recognised by its magic bytes), and the parser walks complete lines
 * in the block with a hand-written integer parser and a decimal parser that
 * only falls back to strtod for long mantissas (or extreme exponents).
 * Entries are kept as one 64-bit key (row << column bits | column) and a
 * value: sorting into row-major order is a stable counting sort by row (LSD
 * radix sort where rows outnumber entries), merging duplicates one pass. */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/core.h"
#include "io/mmio.h"

#define MM_CHUNK ((size_t)1 << 20)    /* bytes read or inflated at a time */
#define MM_MAX_LINE ((size_t)1 << 20) /* a longer line is an error */
#define MM_BIG_ALLOC ((size_t)64 << 20)

const char *pb_mm_field_name(enum pb_mm_field f)
{
    switch (f) {
    case PB_MM_REAL: return "real";
    case PB_MM_INTEGER: return "integer";
    case PB_MM_PATTERN: return "pattern";
    case PB_MM_COMPLEX: return "complex";
    }
    return "unknown";
}

const char *pb_mm_symmetry_name(enum pb_mm_symmetry s)
{
    switch (s) {
    case PB_MM_GENERAL: return "general";
    case PB_MM_SYMMETRIC: return "symmetric";
    case PB_MM_SKEW_SYMMETRIC: return "skew-symmetric";
    case PB_MM_HERMITIAN: return "hermitian";
    }
    return "unknown";
}

void pb_coo_free(struct pb_coo *m)
{
    if (!m)
        return;
    free(m->rows);
    free(m->cols);
    free(m->values);
    memset(m, 0, sizeof *m);
}

/* realloc of n * size bytes for `what`, refusing sizes beyond the memory
 * available (a clear error instead of the OOM killer). */
static pb_status mm_realloc(const char *name, const char *what, void **p, size_t n, size_t size)
{
    size_t bytes;
    char want[32], have[32];
    if (!pb__mul_size(n, size, &bytes))
        return pb__fail(PB_ERR_NOMEM, "%s: %s: size overflows", name, what);
    if (bytes == 0)
        bytes = 1;
    if (bytes >= MM_BIG_ALLOC) {
        size_t avail = pb__host_mem_available();
        if (bytes > avail)
            return pb__fail(PB_ERR_NOMEM, "%s: cannot allocate %s for %s: only %s available", name,
                            pb__format_bytes((double)bytes, want, sizeof want), what,
                            pb__format_bytes((double)avail, have, sizeof have));
    }
    void *q = realloc(*p, bytes);
    if (!q)
        return pb__fail(PB_ERR_NOMEM, "%s: cannot allocate %s for %s", name,
                        pb__format_bytes((double)bytes, want, sizeof want), what);
    *p = q;
    return PB_OK;
}

/* ---- decimal numbers ------------------------------------------------------ */

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
static const uint64_t pow10_u64[] = {1ull,
                                     10ull,
                                     100ull,
                                     1000ull,
                                     10000ull,
                                     100000ull,
                                     1000000ull,
                                     10000000ull,
                                     100000000ull,
                                     1000000000ull,
                                     10000000000ull,
                                     100000000000ull,
                                     1000000000000ull,
                                     10000000000000ull,
                                     100000000000000ull,
                                     1000000000000000ull,
                                     10000000000000000ull,
                                     100000000000000000ull,
                                     1000000000000000000ull,
                                     10000000000000000000ull};

static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* strtod in the C locale whatever the program set (a comma there would make
 * "1.5" unreadable). */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void c_locale_init(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

static bool slow_double(const char *s, size_t len, double *out)
{
    char small[128], *copy = small;
    if (len >= sizeof small && !(copy = malloc(len + 1)))
        return false;
    memcpy(copy, s, len);
    copy[len] = '\0';
    pthread_once(&c_locale_once, c_locale_init);
    char *end;
    errno = 0;
    double v = c_locale ? strtod_l(copy, &end, c_locale) : strtod(copy, &end);
    bool ok = end == copy + len && !(errno == ERANGE && isinf(v));
    if (copy != small)
        free(copy);
    *out = v;
    return ok;
}

/* Eight ASCII digits at p (little-endian SWAR, as in fast_float): true and
 * their value in *v, or false when they are not all digits. */
static inline bool eight_digits(const char *p, uint64_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t x;
    memcpy(&x, p, 8);
    if ((((x + 0x4646464646464646ull) | (x - 0x3030303030303030ull)) & 0x8080808080808080ull) != 0)
        return false;
    x -= 0x3030303030303030ull;
    x = x * 10 + (x >> 8);
    x = (((x & 0x000000FF000000FFull) * 0x000F424000000064ull) +
         (((x >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
    *v = (uint32_t)x;
    return true;
#else
    (void)p, (void)v;
    return false;
#endif
}

/* The decimal number at p, not beyond limit: its end, or NULL when p holds
 * no number (or it overflows). The caller checks what follows it. */
static inline const char *scan_double(const char *p, const char *limit, double *out)
{
    const char *s = p;
    bool neg = false;
    if (p < limit && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    /* value = m * 10^e10, m the first 19 significant digits; `dropped` when a
     * nonzero digit did not fit. */
    uint64_t m = 0;
    int nd = 0;
    int64_t e10 = 0;
    bool dropped = false;
    const char *start = p;
    while (p < limit && *p == '0')
        p++;
    for (; p < limit && is_digit(*p); p++) {
        if (nd < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            nd++;
        } else {
            e10++;
            dropped |= *p != '0';
        }
    }
    bool digits = p > start;
    if (p < limit && *p == '.') {
        const char *frac = ++p;
        if (m == 0)
            for (; p < limit && *p == '0'; p++)
                e10--;
        uint64_t eight;
        while (nd <= 19 - 8 && limit - p >= 8 && eight_digits(p, &eight)) {
            m = m * 100000000u + eight;
            nd += 8;
            e10 -= 8;
            p += 8;
        }
        for (; p < limit && is_digit(*p); p++) {
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                nd++;
                e10--;
            } else {
                dropped |= *p != '0';
            }
        }
        digits |= p > frac;
    }
    if (!digits)
        return NULL;
    if (p < limit && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < limit && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p == limit || !is_digit(*p))
            return NULL;
        int64_t e = 0;
        for (; p < limit && is_digit(*p); p++)
            if (e < 1000000)
                e = e * 10 + (*p - '0');
        e10 += eneg ? -e : e;
    }
    if (!dropped) {
        if (m == 0) {
            *out = neg ? -0.0 : 0.0;
            return p;
        }
        while (m > (1ull << 53) && m % 10 == 0) {
            m /= 10;
            e10++;
        }
        /* Clinger's fast path: m and 10^|e10| both exact doubles, so one
         * correctly rounded operation gives strtod's answer. */
        if (m <= (1ull << 53)) {
            double v = -1;
            if (e10 >= 0 && e10 <= 22) {
                v = (double)m * pow10_exact[e10];
            } else if (e10 < 0 && e10 >= -22) {
                v = (double)m / pow10_exact[-e10];
            } else if (e10 > 22 && e10 <= 22 + 19) {
                uint64_t mm;
                if (!__builtin_mul_overflow(m, pow10_u64[e10 - 22], &mm) && mm <= (1ull << 53))
                    v = (double)mm * 1e22;
            }
            if (v >= 0) {
                *out = neg ? -v : v;
                return p;
            }
        }
    }
    return slow_double(s, (size_t)(p - s), out) ? p : NULL;
}

bool pb__mm_parse_double(const char *s, const char *end, double *out)
{
    return scan_double(s, end, out) == end;
}

/* ---- the byte source: a file descriptor or memory, maybe gzip ------------ */

struct mm_reader {
    const char *name;
    size_t chunk;
    /* raw bytes */
    int fd; /* -1: memory */
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    unsigned char peek[2]; /* bytes read to sniff the gzip magic */
    size_t peek_len, peek_pos;
    size_t size_hint; /* uncompressed bytes expected; 0 = unknown */
    /* gzip */
    bool raw_eof, gz, gz_init, gz_member_done;
    int gz_error; /* an inflate error held back until the text before it is used */
    z_stream zs;
    unsigned char *zin;
    /* text: [pos, lines_end) complete lines, each ending in '\n'; then a
     * partial line up to len; one byte of cap is kept for a final '\n'. */
    char *buf;
    size_t cap, len, pos, lines_end;
    bool eof;
    size_t line; /* number of the line at pos */
    /* Reading a share of the rows (pb__coo_read_rows): every entry is parsed
     * and checked, those of rows outside [keep_lo, keep_hi) (0-based, mirrors
     * of a symmetric file included) are dropped. */
    bool filter;
    uint64_t keep_lo, keep_hi;
    bool count_only;  /* pb__coo_row_lengths: nothing kept, lengths counted */
    unsigned sharers; /* count_only: processes of this host reading the same file (>= 1) */
    int64_t *lengths; /* entries per row, mirrors included (count_only) */
};

static inline bool keeps(const struct mm_reader *r, uint64_t row)
{
    return !r->filter || (row >= r->keep_lo && row < r->keep_hi);
}

/* A parsed entry (0-based): counted, kept or dropped. False: drop it. */
static inline bool take_entry(struct mm_reader *r, uint64_t i, uint64_t j, bool mirrored)
{
    if (r->count_only) {
        r->lengths[i]++;
        if (mirrored && i != j)
            r->lengths[j]++;
        return false;
    }
    return keeps(r, i) || (mirrored && i != j && keeps(r, j));
}

static pb_status mm_fail(const struct mm_reader *r, const char *fmt, ...) PB__PRINTF(2, 3);
static pb_status mm_fail(const struct mm_reader *r, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pb__fail(PB_ERR_PARSE, "%s:%zu: %s", r->name, r->line, msg);
}

static pb_status src_read(struct mm_reader *r, void *dst, size_t cap, size_t *got)
{
    if (r->fd < 0) {
        size_t n = r->mem_len - r->mem_pos;
        if (n > cap)
            n = cap;
        memcpy(dst, r->mem + r->mem_pos, n);
        r->mem_pos += n;
        *got = n;
        return PB_OK;
    }
    ssize_t n;
    do
        n = read(r->fd, dst, cap);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return pb__fail(PB_ERR_IO, "cannot read %s: %s", r->name, strerror(errno));
    *got = (size_t)n;
    return PB_OK;
}

/* The raw bytes: first those read for sniffing, then the source's. */
static pb_status raw_read(struct mm_reader *r, void *dst, size_t cap, size_t *got)
{
    if (r->peek_pos < r->peek_len) {
        size_t n = r->peek_len - r->peek_pos;
        if (n > cap)
            n = cap;
        memcpy(dst, r->peek + r->peek_pos, n);
        r->peek_pos += n;
        *got = n;
        return PB_OK;
    }
    return src_read(r, dst, cap, got);
}

static pb_status gz_read(struct mm_reader *r, void *dst, size_t cap, size_t *got)
{
    z_stream *zs = &r->zs;
    if (r->gz_error)
        return r->gz_error == Z_MEM_ERROR
                   ? pb__fail(PB_ERR_NOMEM, "%s: out of memory inflating gzip data", r->name)
                   : mm_fail(r, "corrupt gzip data (%s)", zs->msg ? zs->msg : "inflate failed");
    zs->next_out = dst;
    zs->avail_out = (uInt)cap;
    for (;;) {
        if (zs->avail_in == 0 && !r->raw_eof) {
            size_t n;
            pb_status st = raw_read(r, r->zin, r->chunk, &n);
            if (st != PB_OK)
                return st;
            zs->next_in = r->zin;
            zs->avail_in = (uInt)n;
            r->raw_eof = n == 0;
        }
        if (r->gz_member_done) {
            if (zs->avail_in == 0) { /* the end, after a complete member */
                *got = 0;
                return PB_OK;
            }
            inflateReset(zs); /* more bytes: the next member */
            r->gz_member_done = false;
        }
        /* Also with no input left: inflate may hold output back. */
        int ret = inflate(zs, Z_NO_FLUSH);
        size_t produced = cap - zs->avail_out;
        if (ret == Z_STREAM_END)
            r->gz_member_done = true;
        else if (ret == Z_BUF_ERROR && produced == 0 && r->raw_eof)
            return mm_fail(r, "gzip data ends early (truncated file?)");
        else if (ret != Z_OK && !(ret == Z_BUF_ERROR && zs->avail_in == 0))
            r->gz_error = ret == Z_MEM_ERROR ? ret : Z_DATA_ERROR;
        /* What came out before an error is used first, so that the error is
         * met at the same line whatever the block size. */
        if (produced > 0) {
            *got = produced;
            return PB_OK;
        }
        if (r->gz_error)
            return gz_read(r, dst, cap, got);
    }
}

/* Refills the text buffer so that [pos, lines_end) is not empty, unless the
 * input has ended. A last line without '\n' gets one. */
static pb_status refill(struct mm_reader *r)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    r->lines_end = 0;
    for (;;) {
        if (r->eof) {
            if (r->len > 0 && r->buf[r->len - 1] != '\n')
                r->buf[r->len++] = '\n';
            r->lines_end = r->len;
            return PB_OK;
        }
        size_t room = r->cap - 1 - r->len;
        if (room == 0) {
            if (r->len >= MM_MAX_LINE)
                return mm_fail(r, "line longer than %zu bytes", MM_MAX_LINE);
            size_t cap = r->cap * 2 > MM_MAX_LINE + 1 ? MM_MAX_LINE + 1 : r->cap * 2;
            pb_status st = mm_realloc(r->name, "a line", (void **)&r->buf, cap, 1);
            if (st != PB_OK)
                return st;
            r->cap = cap;
            room = r->cap - 1 - r->len;
        }
        size_t want = room < r->chunk ? room : r->chunk, got;
        pb_status st = r->gz ? gz_read(r, r->buf + r->len, want, &got)
                             : raw_read(r, r->buf + r->len, want, &got);
        if (st != PB_OK)
            return st;
        if (got == 0) {
            r->eof = true;
            continue;
        }
        char *nl = memrchr(r->buf + r->len, '\n', got);
        r->len += got;
        if (nl) {
            r->lines_end = (size_t)(nl - r->buf) + 1;
            return PB_OK;
        }
    }
}

/* The next line (ending in '\n' within the buffer), or NULL at the end. */
static inline pb_status next_line(struct mm_reader *r, const char **line)
{
    if (r->pos == r->lines_end) {
        pb_status st = refill(r);
        if (st != PB_OK)
            return st;
        if (r->pos == r->lines_end) {
            *line = NULL;
            return PB_OK;
        }
    }
    *line = r->buf + r->pos;
    return PB_OK;
}

/* p is at the '\n' ending the current line: moves to the next. */
static inline void end_line(struct mm_reader *r, const char *p)
{
    r->pos = (size_t)(p - r->buf) + 1;
    r->line++;
}

/* p is within the current line: moves to the next. */
static inline void skip_line(struct mm_reader *r, const char *p)
{
    const char *nl = memchr(p, '\n', (size_t)(r->buf + r->lines_end - p));
    r->pos = (size_t)(nl - r->buf) + 1;
    r->line++;
}

static inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static inline const char *skip_blanks(const char *p)
{
    while (is_blank(*p))
        p++;
    return p;
}

static inline const char *token_end(const char *p)
{
    while (!is_blank(*p) && *p != '\n')
        p++;
    return p;
}

/* The token at p, quoted and shortened for a message. */
static const char *excerpt(const char *p, char *buf, size_t len)
{
    const char *e = token_end(p);
    size_t n = 0;
    buf[n++] = '\'';
    for (; p < e && n + 5 < len; p++)
        buf[n++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    if (p < e) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n++] = '\'';
    buf[n] = '\0';
    return buf;
}

static bool tok_is(const char *p, const char *e, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(e - p) == n && strncasecmp(p, word, n) == 0;
}

/* Decimal digits at p into *v (saturating at 2^40, beyond any index);
 * NULL when p holds no digit or the token goes on after them. */
static inline const char *parse_index(const char *p, uint64_t *v)
{
    if (!is_digit(*p))
        return NULL;
    uint64_t x = 0;
    do {
        if (x < (1ull << 40))
            x = x * 10 + (uint64_t)(*p - '0');
        p++;
    } while (is_digit(*p));
    if (!is_blank(*p) && *p != '\n')
        return NULL;
    *v = x;
    return p;
}

/* [+-]digits in [p, e) as int64; false when malformed or out of range. */
static bool parse_int64(const char *p, const char *e, int64_t *out)
{
    bool neg = false;
    if (p < e && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    if (p == e)
        return false;
    uint64_t x = 0;
    for (; p < e; p++) {
        if (!is_digit(*p) || __builtin_mul_overflow(x, 10, &x) ||
            __builtin_add_overflow(x, (uint64_t)(*p - '0'), &x))
            return false;
    }
    if (x > (uint64_t)INT64_MAX + neg)
        return false;
    *out = neg ? (int64_t)(0 - x) : (int64_t)x;
    return true;
}

static int bits_for(uint64_t n) /* bits to hold 0..n-1 */
{
    int b = 0;
    while (b < 63 && (1ull << b) < n)
        b++;
    return b;
}

/* ---- entries: keys and values ----------------------------------------- */

struct mm_entries {
    uint64_t *keys; /* row << colbits | col, 0-based */
    double *vals;   /* NULL for pattern */
    size_t n, cap, max;
    int colbits;
};

static pb_status entries_reserve(struct mm_reader *r, struct mm_entries *e, size_t want)
{
    if (want <= e->cap)
        return PB_OK;
    size_t cap = e->cap ? e->cap : 1024;
    while (cap < want)
        cap = cap > SIZE_MAX / 2 ? want : cap * 2;
    if (cap > e->max)
        cap = e->max > want ? e->max : want;
    pb_status st = mm_realloc(r->name, "the entries", (void **)&e->keys, cap, sizeof *e->keys);
    if (st == PB_OK && e->vals)
        st = mm_realloc(r->name, "the values", (void **)&e->vals, cap, sizeof *e->vals);
    if (st == PB_OK)
        e->cap = cap;
    return st;
}

/* Stable LSD radix sort of n keys (and values, when v) by key bits [lo, hi),
 * in digits of at most 11 bits; tk/tv are scratch of n. Digits that are the
 * same for every key cost one counting pass. */
static void radix_sort(uint64_t *k, double *v, uint64_t *tk, double *tv, size_t n, int lo, int hi)
{
    enum { DMAX = 11 };
    size_t count[1 << DMAX];
    int passes = (hi - lo + DMAX - 1) / DMAX;
    int width = passes ? (hi - lo + passes - 1) / passes : 0;
    uint64_t *sk = k, *dk = tk;
    double *sv = v, *dv = tv;
    for (int shift = lo; shift < hi; shift += width) {
        const size_t buckets = (size_t)1 << width, mask = buckets - 1;
        memset(count, 0, buckets * sizeof count[0]);
        for (size_t i = 0; i < n; i++)
            count[(sk[i] >> shift) & mask]++;
        if (count[(sk[0] >> shift) & mask] == n)
            continue;
        size_t sum = 0;
        for (size_t b = 0; b < buckets; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t at = count[(sk[i] >> shift) & mask]++;
            dk[at] = sk[i];
            if (v)
                dv[at] = sv[i];
        }
        uint64_t *t = sk;
        sk = dk;
        dk = t;
        double *u = sv;
        sv = dv;
        dv = u;
    }
    if (sk != k) {
        memcpy(k, sk, n * sizeof *k);
        if (v)
            memcpy(v, sv, n * sizeof *v);
    }
}

/* Sorts the entries row-major. Files list entries row- or column-major as a
 * rule, and a stable counting sort by row alone sorts both (and a mirrored
 * column-major triangle too); rows left unsorted after it are sorted alone. */
static pb_status sort_entries(struct mm_reader *r, struct mm_entries *e, uint64_t rows)
{
    size_t n = e->n;
    bool sorted = true;
    for (size_t k = 1; k < n && sorted; k++)
        sorted = e->keys[k - 1] <= e->keys[k];
    if (sorted)
        return PB_OK;
    const int cb = e->colbits, bits = bits_for(rows) + cb;
    uint64_t *tk = NULL;
    double *tv = NULL;
    size_t *start = NULL;
    pb_status st = mm_realloc(r->name, "sorting", (void **)&tk, n, sizeof *tk);
    if (st == PB_OK && e->vals)
        st = mm_realloc(r->name, "sorting", (void **)&tv, n, sizeof *tv);
    /* A row count array when it is no larger than the entries. */
    bool by_row = rows <= n + 1024;
    if (st == PB_OK && by_row)
        st = mm_realloc(r->name, "sorting", (void **)&start, (size_t)rows + 1, sizeof *start);
    if (st != PB_OK) {
        free(tk);
        free(tv);
        return st;
    }
    if (!by_row) {
        radix_sort(e->keys, e->vals, tk, tv, n, 0, bits);
    } else {
        memset(start, 0, ((size_t)rows + 1) * sizeof *start);
        for (size_t k = 0; k < n; k++)
            start[(e->keys[k] >> cb) + 1]++;
        for (size_t i = 0; i < rows; i++)
            start[i + 1] += start[i];
        for (size_t k = 0; k < n; k++) { /* start[i] moves to the end of row i */
            size_t at = start[e->keys[k] >> cb]++;
            tk[at] = e->keys[k];
            if (tv)
                tv[at] = e->vals[k];
        }
        uint64_t *t = e->keys;
        e->keys = tk;
        tk = t;
        double *u = e->vals;
        e->vals = tv;
        tv = u;
        for (size_t i = 0, lo = 0; i < rows; lo = start[i++]) {
            size_t hi = start[i];
            bool ok = true;
            for (size_t k = lo + 1; k < hi && ok; k++)
                ok = e->keys[k - 1] <= e->keys[k];
            if (!ok)
                radix_sort(e->keys + lo, e->vals ? e->vals + lo : NULL, tk + lo,
                           tv ? tv + lo : NULL, hi - lo, 0, cb);
        }
    }
    free(tk);
    free(tv);
    free(start);
    e->cap = n;
    return PB_OK;
}

/* ---- the parser -------------------------------------------------------- */

struct mm_header {
    bool array;
    enum pb_mm_field field;
    enum pb_mm_symmetry symmetry;
    uint64_t rows, cols, count; /* count: entries (values for array) listed */
    size_t size_line;
};

static pb_status parse_banner(struct mm_reader *r, const struct pb_mm_options *opt,
                              struct mm_header *h)
{
    const char *line;
    pb_status st = next_line(r, &line);
    if (st != PB_OK)
        return st;
    if (!line)
        return mm_fail(r, "empty file (expected a %%%%MatrixMarket banner)");
    if (strncmp(line, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 byte-order mark, as some editors write */
        line += 3;
    static const char magic[] = "%%MatrixMarket";
    char tok[48];
    if (strncasecmp(line, magic, sizeof magic - 1) != 0 ||
        (!is_blank(line[sizeof magic - 1]) && line[sizeof magic - 1] != '\n'))
        return mm_fail(r, "expected the banner '%%%%MatrixMarket matrix FORMAT FIELD SYMMETRY', "
                          "found %s",
                       excerpt(line, tok, sizeof tok));
    static const char *const what[] = {"object", "format", "field", "symmetry"};
    static const char *const choices[] = {"matrix", "coordinate or array",
                                          "real, integer, pattern or complex",
                                          "general, symmetric, skew-symmetric or hermitian"};
    const char *p = line + sizeof magic - 1;
    for (int t = 0; t < 4; t++) {
        p = skip_blanks(p);
        const char *e = token_end(p);
        if (e == p)
            return mm_fail(r, "the banner has no %s (%s)", what[t], choices[t]);
        bool ok = true;
        switch (t) {
        case 0:
            ok = tok_is(p, e, "matrix");
            break;
        case 1:
            if (tok_is(p, e, "coordinate"))
                h->array = false;
            else if (tok_is(p, e, "array"))
                h->array = true;
            else
                ok = false;
            break;
        case 2:
            if (tok_is(p, e, "real"))
                h->field = PB_MM_REAL;
            else if (tok_is(p, e, "integer"))
                h->field = PB_MM_INTEGER;
            else if (tok_is(p, e, "pattern"))
                h->field = PB_MM_PATTERN;
            else if (tok_is(p, e, "complex"))
                h->field = PB_MM_COMPLEX;
            else
                ok = false;
            break;
        default:
            if (tok_is(p, e, "general"))
                h->symmetry = PB_MM_GENERAL;
            else if (tok_is(p, e, "symmetric"))
                h->symmetry = PB_MM_SYMMETRIC;
            else if (tok_is(p, e, "skew-symmetric"))
                h->symmetry = PB_MM_SKEW_SYMMETRIC;
            else if (tok_is(p, e, "hermitian"))
                h->symmetry = PB_MM_HERMITIAN;
            else
                ok = false;
            break;
        }
        if (!ok)
            return mm_fail(r, "unsupported %s %s in the banner (expected %s)", what[t],
                           excerpt(p, tok, sizeof tok), choices[t]);
        p = e;
    }
    const char *after = p;
    p = skip_blanks(p);
    if (*p != '\n' && memchr(after, '\r', (size_t)(p - after)))
        return mm_fail(r, "lines end in a bare carriage return (old Mac style); Matrix Market lines end in '\\n'");
    if (*p != '\n')
        return mm_fail(r, "unexpected %s after the banner's symmetry", excerpt(p, tok, sizeof tok));
    if (h->array && h->field == PB_MM_PATTERN)
        return mm_fail(r, "a pattern matrix must be in coordinate format, not array");
    if (h->symmetry == PB_MM_HERMITIAN && h->field != PB_MM_COMPLEX)
        return mm_fail(r, "a hermitian matrix must be complex, not %s", pb_mm_field_name(h->field));
    if (h->symmetry == PB_MM_SKEW_SYMMETRIC && h->field == PB_MM_PATTERN)
        return mm_fail(r, "a pattern matrix cannot be skew-symmetric");
    if (h->field == PB_MM_COMPLEX && !(opt && opt->complex_real_part))
        return mm_fail(r, "complex matrices are not supported (the real part can be loaded: "
                          "--complex-real 1, or complex_real_part in the library)");
    skip_line(r, p);
    return PB_OK;
}

static pb_status parse_size(struct mm_reader *r, struct mm_header *h)
{
    const char *line;
    for (;;) {
        pb_status st = next_line(r, &line);
        if (st != PB_OK)
            return st;
        if (!line) {
            r->line -= r->line > 1;
            return mm_fail(r, "end of file before the size line");
        }
        const char *p = skip_blanks(line);
        if (*p != '%' && *p != '\n')
            break;
        skip_line(r, p);
    }
    h->size_line = r->line;
    static const char *const names[] = {"ROWS", "COLS", "NNZ"};
    const char *usage = h->array ? "ROWS COLS" : "ROWS COLS NNZ";
    uint64_t v[3] = {0, 0, 0};
    const char *p = line;
    char tok[48];
    for (int t = 0; t < (h->array ? 2 : 3); t++) {
        p = skip_blanks(p);
        const char *e = token_end(p);
        if (e == p)
            return mm_fail(r, "the size line lacks %s (expected %s)", names[t], usage);
        int64_t x;
        if (!is_digit(*p) || !parse_int64(p, e, &x)) {
            const char *q = p;
            while (q < e && is_digit(*q))
                q++;
            return mm_fail(r, "%s %s is %s (size line: %s)", names[t], excerpt(p, tok, sizeof tok),
                           q == e ? "too large" : "not a non-negative integer", usage);
        }
        v[t] = (uint64_t)x;
        p = e;
    }
    p = skip_blanks(p);
    if (*p != '\n')
        return mm_fail(r, "unexpected %s at the end of the size line (expected %s)",
                       excerpt(p, tok, sizeof tok), usage);
    h->rows = v[0];
    h->cols = v[1];
    if (h->rows > INT32_MAX || h->cols > INT32_MAX)
        return mm_fail(r, "%llu x %llu matrix: more than %d rows or columns (indices are 32-bit)",
                       (unsigned long long)h->rows, (unsigned long long)h->cols, INT32_MAX);
    if (h->symmetry != PB_MM_GENERAL && h->rows != h->cols)
        return mm_fail(r, "a %s matrix must be square, not %llu x %llu",
                       pb_mm_symmetry_name(h->symmetry), (unsigned long long)h->rows,
                       (unsigned long long)h->cols);
    if (h->array) {
        uint64_t n = h->rows;
        if (h->symmetry == PB_MM_GENERAL)
            h->count = h->rows * h->cols; /* < 2^62 */
        else if (h->symmetry == PB_MM_SKEW_SYMMETRIC)
            h->count = n ? n * (n - 1) / 2 : 0;
        else
            h->count = n * (n + 1) / 2;
    } else {
        h->count = v[2];
    }
    /* Expanded, at most twice the listed entries, 16 bytes each while sorting. */
    size_t bytes;
    if (h->count > SIZE_MAX / 2 ||
        !pb__mul_size((size_t)h->count * 2, 2 * sizeof(uint64_t), &bytes))
        return mm_fail(r, "%llu entries: the matrix is too large to address",
                       (unsigned long long)h->count);
    skip_line(r, p);
    return PB_OK;
}

/* The value(s) of an entry at p: real/integer into *re, complex into *re and
 * *im. Returns the position after them, or NULL with the error recorded. */
static inline const char *parse_value(struct mm_reader *r, const char *p, enum pb_mm_field field,
                                      double *re, double *im, pb_status *st)
{
    char tok[48];
    for (int part = 0; part < (field == PB_MM_COMPLEX ? 2 : 1); part++) {
        p = skip_blanks(p);
        if (*p == '\n') {
            *st = mm_fail(r, "missing %s", part ? "imaginary part" : "value");
            return NULL;
        }
        const char *e = field == PB_MM_INTEGER ? token_end(p) : NULL;
        double *out = part ? im : re;
        if (field == PB_MM_INTEGER) {
            int64_t x;
            if (!parse_int64(p, e, &x)) {
                *st = mm_fail(r, "value %s is not an integer (field integer)",
                              excerpt(p, tok, sizeof tok));
                return NULL;
            }
            *out = (double)x;
        } else if (!(e = scan_double(p, r->buf + r->lines_end, out)) ||
                   (!is_blank(*e) && *e != '\n')) {
            *st = mm_fail(r, "%s %s is not a finite decimal number",
                          part ? "imaginary part" : "value", excerpt(p, tok, sizeof tok));
            return NULL;
        }
        p = e;
    }
    return p;
}

static pb_status parse_coordinate(struct mm_reader *r, const struct mm_header *h,
                                  struct mm_entries *e, size_t *offdiag)
{
    const uint64_t rows = h->rows, cols = h->cols;
    const enum pb_mm_field field = h->field;
    const bool sym = h->symmetry != PB_MM_GENERAL;
    size_t upper_line = 0, lower_line = 0, off = 0, seen = 0;
    char tok[48];
    pb_status st;
    const char *line;
    while ((st = next_line(r, &line)) == PB_OK && line) {
        const char *p = skip_blanks(line);
        if (*p == '\n' || *p == '%') {
            skip_line(r, p);
            continue;
        }
        if (seen == h->count)
            return mm_fail(r, "more entries than the %llu declared on line %zu",
                           (unsigned long long)h->count, h->size_line);
        uint64_t i, j;
        const char *q = parse_index(p, &i);
        if (!q)
            return mm_fail(r, "row index %s is not a positive integer",
                           excerpt(p, tok, sizeof tok));
        if (i < 1 || i > rows)
            return mm_fail(r, "row index %s is out of range 1..%llu", excerpt(p, tok, sizeof tok),
                           (unsigned long long)rows);
        p = skip_blanks(q);
        if (*p == '\n')
            return mm_fail(r, "missing column index");
        if (!(q = parse_index(p, &j)))
            return mm_fail(r, "column index %s is not a positive integer",
                           excerpt(p, tok, sizeof tok));
        if (j < 1 || j > cols)
            return mm_fail(r, "column index %s is out of range 1..%llu",
                           excerpt(p, tok, sizeof tok), (unsigned long long)cols);
        p = q;
        double re = 1, im = 0;
        if (field != PB_MM_PATTERN && !(p = parse_value(r, p, field, &re, &im, &st)))
            return st;
        p = skip_blanks(p);
        if (*p != '\n')
            return mm_fail(r, "unexpected %s after the entry", excerpt(p, tok, sizeof tok));
        if (i != j) {
            if (sym) {
                if (i < j && !upper_line)
                    upper_line = r->line;
                if (i > j && !lower_line)
                    lower_line = r->line;
                if (upper_line && lower_line)
                    return mm_fail(r, "a %s file must store one triangle, but line %zu is above "
                                      "the diagonal and line %zu below",
                                   pb_mm_symmetry_name(h->symmetry), upper_line, lower_line);
            }
        } else if (h->symmetry == PB_MM_SKEW_SYMMETRIC && (re != 0 || im != 0)) {
            return mm_fail(r, "a skew-symmetric matrix has a zero diagonal, but (%llu, %llu) "
                              "is not",
                           (unsigned long long)i, (unsigned long long)j);
        } else if (h->symmetry == PB_MM_HERMITIAN && im != 0) {
            return mm_fail(r, "a hermitian matrix has a real diagonal, but (%llu, %llu) has "
                              "imaginary part %g",
                           (unsigned long long)i, (unsigned long long)j, im);
        }
        seen++;
        if (!take_entry(r, i - 1, j - 1, sym)) {
            end_line(r, p);
            continue;
        }
        off += i != j;
        if (e->n == e->cap && (st = entries_reserve(r, e, e->n + 1)) != PB_OK)
            return st;
        e->keys[e->n] = (i - 1) << e->colbits | (j - 1);
        if (e->vals)
            e->vals[e->n] = re;
        e->n++;
        end_line(r, p);
    }
    if (st != PB_OK)
        return st;
    if (seen < h->count) {
        r->line -= r->line > 1;
        return mm_fail(r, "end of file after %zu of the %llu entries declared on line %zu", seen,
                       (unsigned long long)h->count, h->size_line);
    }
    *offdiag = off;
    return PB_OK;
}

static pb_status parse_array(struct mm_reader *r, const struct mm_header *h, struct mm_entries *e,
                             size_t *offdiag)
{
    /* Column-major; symmetric kinds list the lower triangle (skew: without
     * the diagonal) column by column. */
    const uint64_t rows = h->rows;
    const uint64_t first = h->symmetry == PB_MM_SKEW_SYMMETRIC; /* below the diagonal */
    const bool tri = h->symmetry != PB_MM_GENERAL;
    uint64_t i = tri ? first : 0, j = 0;
    size_t off = 0, seen = 0;
    char tok[48];
    pb_status st;
    const char *line;
    while ((st = next_line(r, &line)) == PB_OK && line) {
        const char *p = skip_blanks(line);
        if (*p == '\n' || *p == '%') {
            skip_line(r, p);
            continue;
        }
        if (seen == h->count)
            return mm_fail(r, "more values than the %llu a %llu x %llu %s array holds (line %zu)",
                           (unsigned long long)h->count, (unsigned long long)h->rows,
                           (unsigned long long)h->cols, pb_mm_symmetry_name(h->symmetry),
                           h->size_line);
        double re, im = 0;
        if (!(p = parse_value(r, p, h->field, &re, &im, &st)))
            return st;
        p = skip_blanks(p);
        if (*p != '\n')
            return mm_fail(r, "unexpected %s after the value (one entry per line)",
                           excerpt(p, tok, sizeof tok));
        if (i == j && h->symmetry == PB_MM_HERMITIAN && im != 0)
            return mm_fail(r, "a hermitian matrix has a real diagonal, but (%llu, %llu) has "
                              "imaginary part %g",
                           (unsigned long long)i + 1, (unsigned long long)j + 1, im);
        seen++;
        if (take_entry(r, i, j, tri)) {
            if (e->n == e->cap && (st = entries_reserve(r, e, e->n + 1)) != PB_OK)
                return st;
            e->keys[e->n] = i << e->colbits | j;
            e->vals[e->n] = re;
            e->n++;
            off += i != j;
        }
        if (++i == rows) {
            j++;
            i = tri ? j + first : 0;
        }
        end_line(r, p);
    }
    if (st != PB_OK)
        return st;
    if (seen < h->count) {
        r->line -= r->line > 1;
        return mm_fail(r, "end of file after %zu of the %llu values of a %llu x %llu %s array",
                       seen, (unsigned long long)h->count, (unsigned long long)h->rows,
                       (unsigned long long)h->cols, pb_mm_symmetry_name(h->symmetry));
    }
    *offdiag = off;
    return PB_OK;
}

static pb_status mm_parse(struct mm_reader *r, const struct pb_mm_options *opt, struct pb_coo *out)
{
    struct mm_header h;
    memset(&h, 0, sizeof h);
    pb_status st = parse_banner(r, opt, &h);
    if (st == PB_OK)
        st = parse_size(r, &h);
    if (st != PB_OK)
        return st;

    struct mm_entries e = {.colbits = bits_for(h.cols)};
    e.max = (size_t)h.count;
    size_t first = e.max;
    if (r->size_hint) { /* a malicious count must not allocate beyond what the bytes can hold */
        size_t bound = r->size_hint / (h.array ? 2 : 4) + 16;
        first = first < bound ? first : bound;
    } else if (first > ((size_t)1 << 16)) {
        first = (size_t)1 << 16;
    }
    if (r->filter && first > ((size_t)1 << 16))
        first = (size_t)1 << 16; /* a share of the rows: grow as they come */
    if (r->count_only) {
        /* Every reader of this host keeps the row lengths, 32-bit offsets and
         * x (double and typed) at once: refuse together what they cannot all
         * hold, before any of it is allocated. */
        double need = ((double)h.rows * (sizeof *r->lengths + sizeof(int32_t)) + (double)h.cols * 16) * r->sharers;
        size_t avail = pb__host_mem_available();
        if (need > (double)avail) {
            char want[32], have[32];
            return pb__fail(PB_ERR_NOMEM, "%s: %llu x %llu: %u reader(s) on this host need %s for the row lengths, "
                            "offsets and x, %s is available", r->name, (unsigned long long)h.rows, (unsigned long long)h.cols, r->sharers,
                           pb__format_bytes(need, want, sizeof want), pb__format_bytes((double)avail, have, sizeof have));
        }
    }
    if (r->count_only &&
        (st = mm_realloc(r->name, "the row lengths", (void **)&r->lengths, h.rows ? h.rows : 1,
                         sizeof *r->lengths)) == PB_OK)
        memset(r->lengths, 0, (h.rows ? h.rows : 1) * sizeof *r->lengths);
    if (st != PB_OK)
        return st;
    if (h.field != PB_MM_PATTERN && (st = mm_realloc(r->name, "the values", (void **)&e.vals, 1,
                                                      sizeof *e.vals)) != PB_OK)
        return st;
    size_t offdiag = 0;
    st = entries_reserve(r, &e, first ? first : 1);
    if (st == PB_OK)
        st = h.array ? parse_array(r, &h, &e, &offdiag) : parse_coordinate(r, &h, &e, &offdiag);

    /* Mirror the stored triangle. */
    if (st == PB_OK && h.symmetry != PB_MM_GENERAL && offdiag > 0) {
        size_t stored = e.n;
        e.max = stored + offdiag;
        st = entries_reserve(r, &e, stored + offdiag);
        const uint64_t mask = (1ull << e.colbits) - 1;
        const double sign = h.symmetry == PB_MM_SKEW_SYMMETRIC ? -1.0 : 1.0;
        for (size_t k = 0; st == PB_OK && k < stored; k++) {
            uint64_t i = e.keys[k] >> e.colbits, j = e.keys[k] & mask;
            if (i == j || !keeps(r, j))
                continue;
            e.keys[e.n] = j << e.colbits | i;
            if (e.vals)
                e.vals[e.n] = sign * e.vals[k];
            e.n++;
        }
    }
    if (st == PB_OK && e.n > 0)
        st = sort_entries(r, &e, h.rows);

    /* Merge entries at the same position. */
    size_t n = 0, dups = 0;
    for (size_t k = 0; st == PB_OK && k < e.n; k++) {
        if (!keeps(r, e.keys[k] >> e.colbits))
            continue; /* kept for its mirror only */
        if (n > 0 && e.keys[k] == e.keys[n - 1]) {
            dups++;
            if (e.vals) {
                e.vals[n - 1] += e.vals[k];
                if (!isfinite(e.vals[n - 1])) {
                    uint64_t i = e.keys[k] >> e.colbits, j = e.keys[k] & ((1ull << e.colbits) - 1);
                    st = pb__fail(PB_ERR_PARSE, "%s: the duplicate entries at (%llu, %llu) sum "
                                                "beyond the range of a double",
                                  r->name, (unsigned long long)i + 1, (unsigned long long)j + 1);
                }
            }
            continue;
        }
        e.keys[n] = e.keys[k];
        if (e.vals)
            e.vals[n] = e.vals[k];
        n++;
    }

    struct pb_coo m;
    memset(&m, 0, sizeof m);
    if (st == PB_OK)
        st = mm_realloc(r->name, "the row indices", (void **)&m.rows, n, sizeof *m.rows);
    if (st == PB_OK)
        st = mm_realloc(r->name, "the column indices", (void **)&m.cols, n, sizeof *m.cols);
    if (st == PB_OK && !e.vals)
        st = mm_realloc(r->name, "the values", (void **)&e.vals, n, sizeof *e.vals);
    if (st != PB_OK) {
        free(e.keys);
        free(e.vals);
        pb_coo_free(&m);
        return st;
    }
    const uint64_t mask = (1ull << e.colbits) - 1;
    for (size_t k = 0; k < n; k++) {
        m.rows[k] = (int32_t)(e.keys[k] >> e.colbits);
        m.cols[k] = (int32_t)(e.keys[k] & mask);
        if (h.field == PB_MM_PATTERN)
            e.vals[k] = 1.0;
    }
    free(e.keys);
    if (n < e.n) { /* give back what merging freed; failure to shrink is harmless */
        void *shrunk = realloc(e.vals, (n ? n : 1) * sizeof *e.vals);
        if (shrunk)
            e.vals = shrunk;
    }
    m.values = e.vals;
    m.n_rows = (int32_t)h.rows;
    m.n_cols = (int32_t)h.cols;
    m.nnz = n;
    m.symmetric_origin = h.symmetry != PB_MM_GENERAL;
    m.pattern_origin = h.field == PB_MM_PATTERN;
    m.field = h.field;
    m.symmetry = h.symmetry;
    m.file_entries = (size_t)h.count;
    m.duplicates = dups;
    *out = m;
    return PB_OK;
}

/* Sniffs the gzip magic, sets up the buffers, parses, cleans up. */
static pb_status mm_run(struct mm_reader *r, const struct pb_mm_options *opt, struct pb_coo *out)
{
    if (!r->chunk)
        r->chunk = MM_CHUNK;
    if (r->chunk > ((size_t)1 << 30))
        r->chunk = (size_t)1 << 30; /* zlib counts in 32 bits */
    pb_status st = PB_OK;
    while (r->peek_len < 2) {
        size_t got;
        if ((st = src_read(r, r->peek + r->peek_len, 2 - r->peek_len, &got)) != PB_OK || got == 0)
            break;
        r->peek_len += got;
    }
    r->gz = r->peek_len == 2 && r->peek[0] == 0x1f && r->peek[1] == 0x8b;
    if (st == PB_OK && r->gz) {
        r->size_hint = 0;
        st = mm_realloc(r->name, "gzip input", (void **)&r->zin, r->chunk, 1);
        if (st == PB_OK) {
            if (inflateInit2(&r->zs, 16 + MAX_WBITS) != Z_OK)
                st = pb__fail(PB_ERR_NOMEM, "%s: cannot set up zlib", r->name);
            else
                r->gz_init = true;
        }
    }
    r->cap = r->chunk + 1;
    if (st == PB_OK)
        st = mm_realloc(r->name, "the read buffer", (void **)&r->buf, r->cap, 1);
    r->line = 1;
    if (st == PB_OK)
        st = mm_parse(r, opt, out);
    if (r->gz_init)
        inflateEnd(&r->zs);
    free(r->zin);
    free(r->buf);
    return st;
}

pb_status pb__coo_parse_buffer(const void *data, size_t len, const char *name,
                               const struct pb_mm_options *opt, size_t chunk, struct pb_coo *out)
{
    if (!out || !name)
        return pb__fail(PB_ERR_INVALID, "pb__coo_parse_buffer: NULL argument");
    memset(out, 0, sizeof *out);
    struct mm_reader r;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.fd = -1;
    r.mem = data;
    r.mem_len = data ? len : 0;
    r.size_hint = len;
    r.chunk = chunk;
    return mm_run(&r, opt, out);
}

/* Opens path and parses it with r's settings (name and fd are set here). */
static pb_status read_path(struct mm_reader *r, const char *path, const struct pb_mm_options *opt,
                           struct pb_coo *out)
{
    memset(out, 0, sizeof *out);
    r->name = path;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0)
        return pb__fail(PB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode))
        r->size_hint = (size_t)sb.st_size;
    pb_status st = mm_run(r, opt, out);
    close(r->fd);
    return st;
}

pb_status pb__coo_read_chunked(const char *path, const struct pb_mm_options *opt, size_t chunk,
                               struct pb_coo *out)
{
    if (!out || !path)
        return pb__fail(PB_ERR_INVALID, "pb_coo_read: NULL argument");
    struct mm_reader r;
    memset(&r, 0, sizeof r);
    r.chunk = chunk;
    return read_path(&r, path, opt, out);
}

pb_status pb__coo_row_lengths(const char *path, const struct pb_mm_options *opt, unsigned sharers, int32_t *rows,
                              int32_t *cols, int64_t **lengths)
{
    struct mm_reader r;
    memset(&r, 0, sizeof r);
    r.filter = r.count_only = true; /* keep_lo = keep_hi = 0: nothing */
    r.sharers = sharers ? sharers : 1;
    struct pb_coo m;
    pb_status st = read_path(&r, path, opt, &m);
    *lengths = NULL;
    if (st != PB_OK) {
        free(r.lengths);
        return st;
    }
    *rows = m.n_rows;
    *cols = m.n_cols;
    *lengths = r.lengths;
    pb_coo_free(&m);
    return PB_OK;
}

pb_status pb__coo_read_rows(const char *path, const struct pb_mm_options *opt, int32_t first, int32_t count,
                            struct pb_coo *out)
{
    if (!out || !path || first < 0 || count < 0)
        return pb__fail(PB_ERR_INVALID, "pb__coo_read_rows: invalid argument");
    struct mm_reader r;
    memset(&r, 0, sizeof r);
    r.filter = true;
    r.keep_lo = (uint64_t)first;
    r.keep_hi = (uint64_t)first + (uint64_t)count;
    return read_path(&r, path, opt, out);
}

pb_status pb_coo_read(const char *path, const struct pb_mm_options *opt, struct pb_coo *out)
{
    return pb__coo_read_chunked(path, opt, 0, out);
}

/* ---- writer --------------------------------------------------------------- */

struct mm_sink {
    FILE *f;
    gzFile gz;
    const char *name;
    char *buf;
    size_t len, cap;
};

static pb_status sink_flush(struct mm_sink *s)
{
    if (s->len == 0)
        return PB_OK;
    bool ok = s->gz ? gzwrite(s->gz, s->buf, (unsigned)s->len) == (int)s->len
                    : fwrite(s->buf, 1, s->len, s->f) == s->len;
    s->len = 0;
    if (!ok)
        return pb__fail(PB_ERR_IO, "cannot write %s: %s", s->name, strerror(errno));
    return PB_OK;
}

static char *put_int(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

static pb_status write_sink(struct mm_sink *s, const struct pb_coo *m)
{
    if (!m || m->n_rows < 0 || m->n_cols < 0 ||
        (m->nnz > 0 && (!m->rows || !m->cols || !m->values)))
        return pb__fail(PB_ERR_INVALID, "cannot write %s: malformed matrix", s->name);
    for (size_t k = 0; k < m->nnz; k++) {
        if (m->rows[k] < 0 || m->rows[k] >= m->n_rows || m->cols[k] < 0 || m->cols[k] >= m->n_cols)
            return pb__fail(PB_ERR_INVALID, "cannot write %s: entry %zu at (%d, %d) is outside "
                                            "the %d x %d matrix",
                            s->name, k, m->rows[k], m->cols[k], m->n_rows, m->n_cols);
        if (!isfinite(m->values[k]))
            return pb__fail(PB_ERR_INVALID, "cannot write %s: entry %zu at (%d, %d) is not finite",
                            s->name, k, m->rows[k], m->cols[k]);
    }
    s->len = (size_t)snprintf(s->buf, s->cap,
                              "%%%%MatrixMarket matrix coordinate real general\n"
                              "%% written by parbench %s\n%d %d %zu\n",
                              pb_version(), m->n_rows, m->n_cols, m->nnz);
    for (size_t k = 0; k < m->nnz; k++) {
        if (s->cap - s->len < 64) {
            pb_status st = sink_flush(s);
            if (st != PB_OK)
                return st;
        }
        char *p = put_int(s->buf + s->len, (uint64_t)m->rows[k] + 1);
        *p++ = ' ';
        p = put_int(p, (uint64_t)m->cols[k] + 1);
        *p++ = ' ';
        s->len = (size_t)(p - s->buf);
        s->len += (size_t)snprintf(p, s->cap - s->len, "%.17g\n", m->values[k]);
    }
    return sink_flush(s);
}

pb_status pb__coo_write_stream(FILE *f, const char *name, const struct pb_coo *m)
{
    struct mm_sink s = {.f = f, .name = name, .cap = (size_t)1 << 16};
    if (!(s.buf = malloc(s.cap)))
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    pb_status st = write_sink(&s, m);
    free(s.buf);
    if (st == PB_OK && (fflush(f) != 0 || ferror(f)))
        st = pb__fail(PB_ERR_IO, "cannot write %s: %s", name, strerror(errno));
    return st;
}

pb_status pb_coo_write(const char *path, const struct pb_coo *m)
{
    if (!path)
        return pb__fail(PB_ERR_INVALID, "pb_coo_write: NULL path");
    size_t len = strlen(path);
    bool gz = len >= 3 && strcmp(path + len - 3, ".gz") == 0;
    struct mm_sink s = {.name = path, .cap = MM_CHUNK};
    if (!(s.buf = malloc(s.cap)))
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    if (gz)
        s.gz = gzopen(path, "wb");
    else
        s.f = fopen(path, "w");
    if (!s.gz && !s.f) {
        free(s.buf);
        return pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
    }
    pb_status st = write_sink(&s, m);
    free(s.buf);
    int rc = gz ? gzclose(s.gz) : fclose(s.f);
    if (st == PB_OK && rc != 0)
        st = pb__fail(PB_ERR_IO, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
    return st;
}

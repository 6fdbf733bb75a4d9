/* Value parsing for the CLI (see parse.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/parse.h"

pb_status pb__parse_int(const char *s, const char *what, int64_t *out)
{
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0')
        return pb__fail(PB_ERR_PARSE, "%s: empty value", what);
    errno = 0;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p)
        return pb__fail(PB_ERR_PARSE, "%s: '%s' is not a number", what, s);
    if (errno == ERANGE)
        return pb__fail(PB_ERR_OVERFLOW, "%s: '%s' is out of range", what, s);
    if (*end == '.' || *end == 'e' || *end == 'E') /* 1.5, 1e3: a number, but not a whole one written out */
        return pb__fail(PB_ERR_PARSE, "%s: '%s' is not an integer (digits, with an optional K, M, G or T suffix)", what,
                        s);
    int64_t mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1ll << 10; end++; break;
    case 'm': case 'M': mult = 1ll << 20; end++; break;
    case 'g': case 'G': mult = 1ll << 30; end++; break;
    case 't': case 'T': mult = 1ll << 40; end++; break;
    default: break;
    }
    if (mult > 1) {
        if (*end == 'i')
            end++;
        if (*end == 'B')
            end++;
    }
    if (*end != '\0')
        return pb__fail(PB_ERR_PARSE, "%s: '%s' is not a number", what, s);
    int64_t r;
    if (__builtin_mul_overflow((int64_t)v, mult, &r))
        return pb__fail(PB_ERR_OVERFLOW, "%s: '%s' is out of range", what, s);
    *out = r;
    return PB_OK;
}

static pb_status push(int64_t **vals, size_t *n, size_t *cap, int64_t v, const char *what)
{
    if (*n >= PB_MAX_LIST)
        return pb__fail(PB_ERR_INVALID, "%s: more than %d values", what, PB_MAX_LIST);
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        int64_t *nv = realloc(*vals, ncap * sizeof *nv);
        if (!nv)
            return pb__fail(PB_ERR_NOMEM, "out of memory");
        *vals = nv;
        *cap = ncap;
    }
    (*vals)[(*n)++] = v;
    return PB_OK;
}

/* One item of a list: "A", "A:B", "A:B:S", "A:B:+S", "A:B:xF". */
static pb_status parse_item(char *item, const char *what, int64_t **vals, size_t *n, size_t *cap)
{
    char *parts[3] = {item, NULL, NULL};
    int np = 1;
    for (char *c = item; *c && np <= 3; c++)
        if (*c == ':') {
            *c = '\0';
            if (np == 3)
                return pb__fail(PB_ERR_PARSE, "%s: a range has at most two ':'", what);
            parts[np++] = c + 1;
        }
    int64_t a, b, step = 0, factor = 2;
    pb_status st = pb__parse_int(parts[0], what, &a);
    if (st != PB_OK || np == 1)
        return st != PB_OK ? st : push(vals, n, cap, a, what);
    if ((st = pb__parse_int(parts[1], what, &b)) != PB_OK)
        return st;
    if (np == 3) {
        const char *s = parts[2];
        if (*s == 'x' || *s == '*') {
            if ((st = pb__parse_int(s + 1, what, &factor)) != PB_OK)
                return st;
            if (factor < 2)
                return pb__fail(PB_ERR_INVALID, "%s: range factor must be at least 2", what);
        } else {
            if ((st = pb__parse_int(*s == '+' ? s + 1 : s, what, &step)) != PB_OK)
                return st;
            if (step < 1)
                return pb__fail(PB_ERR_INVALID, "%s: range step must be at least 1", what);
        }
    }
    if (b < a)
        return pb__fail(PB_ERR_INVALID, "%s: range end %lld is below its start %lld", what,
                        (long long)b, (long long)a);
    if (step == 0 && a < 1)
        return pb__fail(PB_ERR_INVALID, "%s: a geometric range must start at 1 or more", what);
    for (int64_t v = a; v <= b;) {
        if ((st = push(vals, n, cap, v, what)) != PB_OK)
            return st;
        if (step ? __builtin_add_overflow(v, step, &v) : __builtin_mul_overflow(v, factor, &v))
            break;
    }
    return PB_OK;
}

pb_status pb__parse_int_list(const char *s, const char *what, int64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char *copy = strdup(s);
    if (!copy)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    size_t cap = 0;
    pb_status st = PB_OK;
    char *save = NULL;
    if (*s == '\0' || s[strlen(s) - 1] == ',' || *s == ',' || strstr(s, ",,"))
        st = pb__fail(PB_ERR_PARSE, "%s: empty item in '%s'", what, s);
    for (char *item = strtok_r(copy, ",", &save); item && st == PB_OK; item = strtok_r(NULL, ",", &save))
        st = parse_item(item, what, out, n, &cap);
    free(copy);
    if (st != PB_OK) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return st;
}

pb_status pb__parse_name_list(const char *s, const char *what, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t items = 1, len = strlen(s);
    for (const char *c = s; *c; c++)
        items += *c == ',';
    /* One block: the pointer array, then the copied text. */
    char **list = malloc(items * sizeof *list + len + 1);
    if (!list)
        return pb__fail(PB_ERR_NOMEM, "out of memory");
    char *text = (char *)(list + items);
    memcpy(text, s, len + 1);
    size_t count = 0;
    for (char *item = text;; item++) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        if (*item == '\0') {
            free(list);
            return pb__fail(PB_ERR_PARSE, "%s: empty item in '%s'", what, s);
        }
        list[count++] = item;
        if (!comma)
            break;
        item = comma;
    }
    *out = list;
    *n = count;
    return PB_OK;
}

/* Whole files into memory (see core.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

pb_status pb__read_file(const char *path, char **text)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? PB_ERR_NOT_FOUND : pb__fail(PB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger)
                free(buf);
            buf = bigger;
        }
    }
    bool err = ferror(f);
    fclose(f);
    if (!buf)
        return pb__fail(PB_ERR_NOMEM, "out of memory reading %s", path);
    if (err) {
        free(buf);
        return pb__fail(PB_ERR_IO, "cannot read %s", path);
    }
    buf[len] = '\0';
    *text = buf;
    return PB_OK;
}

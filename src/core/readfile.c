/* Whole files into memory (see core.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
        /* Text files of bounded size: an endless or binary input (/dev/zero) ends here, not in memory. */
        const char *nul = memchr(buf + len, '\0', got);
        if (nul || len + got > PB_READ_FILE_MAX) {
            size_t at = nul ? len + (size_t)(nul - (buf + len)) : len + got;
            free(buf);
            fclose(f);
            return nul ? pb__fail(PB_ERR_PARSE, "%s is not a text file (a NUL byte at offset %zu)", path, at)
                       : pb__fail(PB_ERR_PARSE, "%s is larger than %d MiB: not a file parbench reads whole", path,
                                  PB_READ_FILE_MAX >> 20);
        }
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

bool pb__same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

const char *pb__same_file_among(const char *path, char *const *paths, int n)
{
    for (int i = 0; path && i < n; i++)
        if (pb__same_file(path, paths[i]))
            return paths[i];
    return NULL;
}

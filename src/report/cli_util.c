/* Helpers of the report commands (see cli_util.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report/cli_util.h"

int pb__cli_die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("parbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

int pb__cli_fail(pb_status st)
{
    const char *detail = pb_last_error();
    fprintf(stderr, "parbench: %s\n", detail[0] ? detail : pb_status_message(st));
    return st == PB_ERR_INVALID || st == PB_ERR_NOT_FOUND ? PB_EXIT_USAGE : PB_EXIT_ERROR;
}

bool pb__cli_is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

bool pb__cli_value(int argc, char **argv, int *i, const char *name, char short_name, const char **value, int *rc)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    bool is_short = short_name && arg[0] == '-' && arg[1] == short_name && !arg[2];
    bool is_long = strncmp(arg, "--", 2) == 0 && strncmp(arg + 2, name, len) == 0 &&
                   (arg[2 + len] == '\0' || arg[2 + len] == '=');
    if (!is_short && !is_long)
        return false;
    if (is_long && arg[2 + len] == '=') {
        *value = arg + 3 + len;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        *rc = pb__cli_die(PB_EXIT_USAGE, "option --%s needs a value", name);
        return false;
    }
    return true;
}

bool pb__cli_std_descriptors_open(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY); /* the lowest free one: fd itself */
        if (null != fd) {
            if (null >= 0)
                close(null);
            return false;
        }
    }
    return true;
}

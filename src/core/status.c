/* Status names and messages, the thread's last error detail, version. */
#include <stdarg.h>
#include <stdio.h>

#include "core/core.h"
#include "git_commit.h" /* generated at build time */

const char *pb_status_name(pb_status s)
{
    switch (s) {
#define PB__STATUS_NAME(name, value, msg) \
    case PB_##name:                       \
        return #name;
        PB_STATUS_MAP(PB__STATUS_NAME)
#undef PB__STATUS_NAME
    }
    return "UNKNOWN";
}

const char *pb_status_message(pb_status s)
{
    switch (s) {
#define PB__STATUS_MSG(name, value, msg) \
    case PB_##name:                      \
        return msg;
        PB_STATUS_MAP(PB__STATUS_MSG)
#undef PB__STATUS_MSG
    }
    return "unknown status";
}

static _Thread_local char last_error[512];

const char *pb_last_error(void) { return last_error; }

pb_status pb__fail(pb_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

void pb__clear_error(void) { last_error[0] = '\0'; }

void pb__appendf(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at = *at + (size_t)n < len ? *at + (size_t)n : len;
}

#define PB__STR2(x) #x
#define PB__STR(x) PB__STR2(x)

const char *pb_version(void)
{
    return PB__STR(PB_VERSION_MAJOR) "." PB__STR(PB_VERSION_MINOR) "." PB__STR(PB_VERSION_PATCH);
}

const char *pb_git_commit(void) { return PB_GIT_COMMIT; }

/* pb_precision_name and pb_precision_size: core/precision.c, beside the other facts of each type. */

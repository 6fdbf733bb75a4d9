/* Small helpers of the report commands: exit codes and messages as the rest
 * of the CLI prints them, and option values (--name VALUE, --name=VALUE, -o VALUE). */
#ifndef PARBENCH_REPORT_CLI_UTIL_H
#define PARBENCH_REPORT_CLI_UTIL_H

#include <stdbool.h>

#include "core/core.h"
#include "report/results.h"

enum { PB_EXIT_OK = 0, PB_EXIT_FAILED = 1, PB_EXIT_USAGE = 2, PB_EXIT_ERROR = 3 };

/* "parbench: message" on stderr; returns code. */
int pb__cli_die(int code, const char *fmt, ...) PB__PRINTF(2, 3);
/* The last library error as one line; exit code from its status. */
int pb__cli_fail(pb_status st);
bool pb__cli_is_help(const char *arg);
/* true when argv[*i] is --name (or -short): *value is its value (advancing
 * *i); a missing value sets *rc to usage and prints why. */
bool pb__cli_value(int argc, char **argv, int *i, const char *name, char short_name, const char **value, int *rc);

/* Descriptors 0-2 closed by the caller (`>&-`) would be taken by the next
 * files opened, and the table written into an --out file: /dev/null takes
 * their places. false (errno set) when it cannot. */
bool pb__cli_std_descriptors_open(void);

/* Loads every path into set (and a ceilings file when given); an exit code. */
int pb__rp_load_all(struct pb_rp_set *set, char **paths, int n, const char *ceilings);

#endif

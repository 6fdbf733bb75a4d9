/* The `parbench study` command (study_cmd.c). */
#ifndef PARBENCH_STUDY_CMD_H
#define PARBENCH_STUDY_CMD_H

#include <stdbool.h>

int pb__cmd_study(int argc, char **argv);

/* `parbench run` in this process (main.c), the ranks layer already started:
 * argv[0] is "run" and argv[-1] the program's name. An exit code. */
int pb__cli_run(int argc, char **argv);
/* Whether some device of some usable backend has name in its name. */
bool pb__cli_any_device_matches(const char *name);

#endif

/* The `parbench conv` command (conv_cmd.c). */
#ifndef PARBENCH_CONV_CMD_H
#define PARBENCH_CONV_CMD_H

int pb__cmd_conv(int argc, char **argv);

#endif

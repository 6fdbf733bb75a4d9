#include "report/cli_util.h"
#include "report/report.h"
int pb__cmd_ceilings(int argc, char **argv) { (void)argc, (void)argv; return 0; }

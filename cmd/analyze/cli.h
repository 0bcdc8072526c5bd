/*
 * The command line of the analysis views, shared by ms-analyze and
 * microscope report: one parser of the query options, one way to load,
 * write and finish.
 */
#ifndef MS_CMD_ANALYZE_CLI_H
#define MS_CMD_ANALYZE_CLI_H

#include <stdbool.h>

/*
 * Run the view argv names. ms-analyze: argv[1] is the view. microscope
 * report (report true): argv[1] is a view when it names one, else the
 * report (summary, top and tree). Returns the exit code.
 */
int ms_analyze_main(int argc, char **argv, bool report);

#endif

/*
 * microscope report: the views of ms-analyze under the front command;
 * with no view, the summary, the hottest functions and the call tree.
 */
#include "cmd/analyze/cli.h"
#include "cmd/microscope/microscope.h"
#include "util/error.h"

int ms_front_report(int argc, char **argv)
{
	ms_set_progname("microscope report");
	return ms_analyze_main(argc, argv, true);
}

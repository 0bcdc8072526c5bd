/*
 * ms-analyze: print a view of a capture: summary, top, tree, callers,
 * callees, threads, timeline, problems, off-cpu, wall, or the diff of
 * two. The command line is cmd/analyze/cli.c; the views are
 * libcommon/analysis.
 */
#include "cmd/analyze/cli.h"
#include "util/error.h"

int main(int argc, char **argv)
{
	ms_set_progname(argv[0]);
	return ms_analyze_main(argc, argv, false);
}

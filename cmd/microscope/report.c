/* microscope report: a capture's summary, hottest functions and call tree. */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "cmd/microscope/microscope.h"
#include "util/error.h"

static const char usage_report[] =
	"usage: microscope report FILE\n"
	"\n"
	"Prints the capture's summary (warnings first), the hottest functions and\n"
	"the call tree; FILE '-' reads it from stdin. ms-analyze gives each part\n"
	"alone, and --json.\n"
	MS_EXIT_CODES_HELP;

int ms_front_report(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ms_capture *cap;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_report, stdout);
			return MS_EXIT_OK;
		}
		fputs(usage_report, stderr);
		return MS_EXIT_USAGE;
	}
	if (optind + 1 != argc) {
		ms_error("report needs exactly one capture file");
		fputs(usage_report, stderr);
		return MS_EXIT_USAGE;
	}
	cap = ms_capture_load(argv[optind]);
	if (!cap)
		return MS_EXIT_ERROR;
	/* A closed stdout (| head) ends the report quietly: see finish below. */
	signal(SIGPIPE, SIG_IGN);
	rc = ms_report_write(stdout, cap, NULL) ? MS_EXIT_ERROR : MS_EXIT_OK;
	ms_capture_free(cap);
	if (ms_finish_stdout("the report") != MS_EXIT_OK)
		return MS_EXIT_ERROR;
	return rc;
}


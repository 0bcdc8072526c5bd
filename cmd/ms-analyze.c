/*
 * ms-analyze: read a capture and print a summary, the flat profile, the
 * call tree or the symbolization problems, as text or JSON. The views live
 * in libcommon/analysis.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "util/error.h"

static const char usage_text[] =
	"usage: ms-analyze summary [--json] FILE\n"
	"   or: ms-analyze top [--json] [--limit N] [--sort self|total] FILE\n"
	"   or: ms-analyze tree [--json] [--min-percent P] FILE\n"
	"   or: ms-analyze problems [--json] FILE\n";

static const char help_text[] =
	"\n"
	"Print a view of a capture written by ms-capture.\n"
	"\n"
	"  summary             the command, duration, samples, threads, lost records,\n"
	"                      problems, and how stacks ended\n"
	"  top                 self and total samples per function\n"
	"  tree                the call tree from the outermost frame in\n"
	"  problems            the modules and addresses that could not be\n"
	"                      symbolized: identity, reason, samples\n"
	"\n"
	"  --json              one JSON object instead of text\n"
	"  --limit N           top: print the first N functions (0: all; default 20,\n"
	"                      all with --json)\n"
	"  --sort self|total   top: order by self (default) or total samples\n"
	"  --min-percent P     tree: leave out nodes under P percent of all samples\n"
	"                      (default 0.5, 0 with --json)\n"
	"  -h, --help          print this help and exit\n"
	"  --version           print the version and exit\n"
	"\n" MS_EXIT_CODES_HELP;

enum view { VIEW_SUMMARY, VIEW_TOP, VIEW_TREE, VIEW_PROBLEMS };

enum {
	OPT_JSON = 256,
	OPT_LIMIT,
	OPT_SORT,
	OPT_MIN_PERCENT,
	OPT_VERSION,
};

/* The message, then the synopsis, on stderr; exit as a usage error. */
static uint32_t parse_limit(const char *arg)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v > UINT32_MAX)
		ms_usage_error("--limit wants a count of functions, not '%s'", arg);
	return (uint32_t)v;
}

static double parse_percent(const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0 && v <= 100))
		ms_usage_error("--min-percent wants a number from 0 to 100, not '%s'", arg);
	return v;
}

/* A reader that went away (| head) is no error (ms_finish_stdout()). */
static int finish_output(void)
{
	return ms_finish_stdout("the view");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "min-percent", required_argument, NULL, OPT_MIN_PERCENT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct ms_top_options top = { .sort = MS_TOP_SORT_SELF };
	struct ms_tree_options tree = { 0 };
	bool json = false, have_limit = false, have_min = false;
	enum view view;
	struct ms_capture *cap;
	const char *cmd;
	int c, ret;

	ms_set_progname(argv[0]);
	signal(SIGPIPE, SIG_IGN);	/* see EPIPE in finish_output() instead */

	if (argc < 2)
		ms_usage_error("which view? summary, top, tree or problems");
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		fputs(usage_text, stdout);
		fputs(help_text, stdout);
		return finish_output();
	}
	if (!strcmp(cmd, "--version")) {
		printf("ms-analyze %s\n", PACKAGE_VERSION);
		return finish_output();
	}
	if (!strcmp(cmd, "summary"))
		view = VIEW_SUMMARY;
	else if (!strcmp(cmd, "top"))
		view = VIEW_TOP;
	else if (!strcmp(cmd, "tree"))
		view = VIEW_TREE;
	else if (!strcmp(cmd, "problems"))
		view = VIEW_PROBLEMS;
	else if (cmd[0] == '-')
		ms_usage_error("unknown option '%s': the view comes first", cmd);
	else
		ms_usage_error("unknown view '%s': use summary, top, tree or problems", cmd);

	/* Options follow the view: parse argv[1..] with the view as argv[0]. */
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_LIMIT:
			if (view != VIEW_TOP)
				ms_usage_error("--limit applies to top, not %s", cmd);
			top.limit = parse_limit(optarg);
			have_limit = true;
			break;
		case OPT_SORT:
			if (view != VIEW_TOP)
				ms_usage_error("--sort applies to top, not %s", cmd);
			if (!strcmp(optarg, "self"))
				top.sort = MS_TOP_SORT_SELF;
			else if (!strcmp(optarg, "total"))
				top.sort = MS_TOP_SORT_TOTAL;
			else
				ms_usage_error("--sort wants self or total, not '%s'", optarg);
			break;
		case OPT_MIN_PERCENT:
			if (view != VIEW_TREE)
				ms_usage_error("--min-percent applies to tree, not %s", cmd);
			tree.min_percent = parse_percent(optarg);
			have_min = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(help_text, stdout);
			return finish_output();
		case OPT_VERSION:
			printf("ms-analyze %s\n", PACKAGE_VERSION);
			return finish_output();
		case ':':
			ms_usage_error("option '%s' needs a value", argv[optind]);
		default:
			ms_usage_error("unknown option '%s'", argv[optind]);
		}
	}
	if (optind + 1 >= argc)
		ms_usage_error("no capture file given");
	if (optind + 2 < argc)
		ms_usage_error("one capture file at a time, not also '%s'", argv[optind + 2]);

	/* Text is read by people: short by default; JSON is read by programs: whole. */
	if (!have_limit)
		top.limit = json ? 0 : 20;
	if (!have_min)
		tree.min_percent = json ? 0 : 0.5;
	top.json = tree.json = json;

	cap = ms_capture_load(argv[optind + 1]);
	if (!cap)
		return MS_EXIT_ERROR;
	switch (view) {
	case VIEW_SUMMARY:
		ret = ms_summary_write(stdout, cap, json);
		break;
	case VIEW_TOP:
		ret = ms_top_write(stdout, cap, &top);
		break;
	case VIEW_PROBLEMS:
		ret = ms_sym_problems_write(stdout, cap, json);
		break;
	default:
		ret = ms_tree_write(stdout, cap, &tree);
		break;
	}
	ms_capture_free(cap);
	if (ret) {
		fflush(stdout);
		return MS_EXIT_ERROR;
	}
	return finish_output();
}

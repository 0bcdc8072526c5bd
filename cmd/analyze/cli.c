/*
 * The analysis command line: VIEW [FUNC] [options] FILE, or diff A B.
 * Options become a typed query (analysis/query.h); the view is a pure
 * function of it and the capture.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "analysis/options.h"
#include "analysis/present.h"
#include "capture/capture.h"
#include "cmd/analyze/cli.h"
#include "util/error.h"
#include "util/progress.h"

static const char usage_analyze[] =
	"usage: ms-analyze VIEW [options] FILE\n"
	"   or: ms-analyze callers|callees FUNCTION [options] FILE\n"
	"   or: ms-analyze diff [options] A B\n";
static const char usage_report[] =
	"usage: microscope report [VIEW] [options] FILE\n"
	"   or: microscope report callers|callees FUNCTION [options] FILE\n"
	"   or: microscope report diff [options] A B\n";

static const char help_text[] =
	"\n"
	"Views of a capture (FILE '-' reads it from stdin):\n"
	"  report              the summary, the hottest functions and the call tree\n"
	"                      (microscope report's default)\n"
	"  summary             the command, duration, samples, threads, lost records,\n"
	"                      problems, and how stacks ended\n"
	"  top                 self and total per function\n"
	"  tree                the call tree from the outermost frame in\n"
	"  callers FUNCTION    who called FUNCTION, from it outwards (bottom-up)\n"
	"  callees FUNCTION    what FUNCTION called, from it inwards\n"
	"  threads             samples per thread\n"
	"  timeline            samples per thread over time, as density lanes\n"
	"  problems            the modules and addresses that could not be symbolized,\n"
	"                      and the off-CPU intervals with an end missing\n"
	"  diff A B            per function, the change from capture A to capture B\n"
	"  off-cpu             off-CPU time per cause and thread, and per cause the\n"
	"                      functions threads left the CPU in (record --off-cpu)\n"
	"  wall                per thread, wall-clock time on CPU, off CPU per cause,\n"
	"                      and unaccounted (record --off-cpu)\n"
	"  tasks               per task of thread snapshots, its whole, changed and\n"
	"                      dropped reads (record --python snapshot)\n"
	"\n"
	"Filters (every view but summary and problems; they compose):\n"
	"  --tid N[,N...]      samples of these thread ids\n"
	"  --thread NAME       samples of threads of this name (repeatable)\n"
	"  --time START..END   samples in this time from the recording's start:\n"
	"                      1.5s..2s, 250ms.., ..3 (seconds when no unit)\n"
	"  --module NAME       samples whose innermost frame is in this module\n"
	"                      (its file name, or path)\n"
	"  --focus REGEX       samples whose stack goes through a matching function\n"
	"  --ignore REGEX      drop matching functions from every stack\n"
	"  --label KEY=VALUE   samples whose thread had this label then: gil=held,\n"
	"                      gil=released (Python's GIL, record --python bpf)\n"
	"  --cause C[,C...]    off-CPU intervals of these causes: preempted, sleeping,\n"
	"                      blocked, unknown (--unit off-cpu, off-cpu, timeline)\n"
	"  --hide-below PCT    leave out rows, nodes and lanes under PCT percent\n"
	"                      (diff: changes under PCT points; report: the tree's)\n"
	"\n"
	"How to count:\n"
	"  --by function|line|address|module   what one frame is (default function)\n"
	"  --unit samples|cpu-time|off-cpu|snapshots   samples (default), the CPU\n"
	"                      time they stand for (clock events only), the time off\n"
	"                      CPU of complete off-CPU intervals, at their switch-out\n"
	"                      stacks, or thread snapshots, one per whole read of a\n"
	"                      thread's Python stack (record --python snapshot)\n"
	"  --look mixed|native|python   how a stack is seen: mixed (default), as\n"
	"                      recorded, Python frames among native ones; native,\n"
	"                      without Python frames; python, from the outermost\n"
	"                      Python frame in, without the interpreter's frames\n"
	"\n"
	"Output:\n"
	"  --json              one JSON object instead of text\n"
	"  --color[=WHEN]      colour text: auto (default: on a terminal, unless\n"
	"                      NO_COLOR is set), always or never\n"
	"  --width N           shorten names to N columns (default: the terminal's;\n"
	"                      0: never)\n"
	"  --limit N           top, diff, report, off-cpu: the first N rows (0: all;\n"
	"                      default 20 in text, all in JSON)\n"
	"  --sort self|total   top, diff, report, off-cpu: order by self (default) or\n"
	"                      total\n"
	"  --min-percent P     tree, callers, callees, report: the same as\n"
	"                      --hide-below (default 0.5 in text, 1 in the report)\n"
	"  --buckets N         timeline: buckets per lane (default: the width)\n"
	"  -h, --help          print this help and exit\n"
	"  --version           print the version and exit\n"
	"\n"
	"Exit status: 0 success (also when the reader of stdout went away), 1 an\n"
	"input could not be read or a view failed, 2 a bad command line.\n";

enum {
	OPT_JSON = 256,
	OPT_COLOR,
	OPT_WIDTH,
	OPT_LIMIT,
	OPT_SORT,
	OPT_MIN_PERCENT,
	OPT_HIDE_BELOW,
	OPT_BY,
	OPT_LOOK,
	OPT_UNIT,
	OPT_TID,
	OPT_THREAD,
	OPT_TIME,
	OPT_MODULE,
	OPT_FOCUS,
	OPT_IGNORE,
	OPT_BUCKETS,
	OPT_CAUSE,
	OPT_LABEL,
	OPT_VERSION,
};

static const struct option longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "color", optional_argument, NULL, OPT_COLOR },
	{ "colour", optional_argument, NULL, OPT_COLOR },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "min-percent", required_argument, NULL, OPT_MIN_PERCENT },
	{ "hide-below", required_argument, NULL, OPT_HIDE_BELOW },
	{ "by", required_argument, NULL, OPT_BY },
	{ "look", required_argument, NULL, OPT_LOOK },
	{ "unit", required_argument, NULL, OPT_UNIT },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "thread", required_argument, NULL, OPT_THREAD },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "module", required_argument, NULL, OPT_MODULE },
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "ignore", required_argument, NULL, OPT_IGNORE },
	{ "buckets", required_argument, NULL, OPT_BUCKETS },
	{ "cause", required_argument, NULL, OPT_CAUSE },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

struct cli {
	struct ms_query q;
	struct ms_view_out out;
	enum ms_color_mode color;
	long width;		/* -1: the terminal's */
	bool have_limit, have_hide;
	bool report;
};

static void usage_fail_if(int rc)
{
	if (rc) {
		fprintf(stderr, "Try '%s --help'.\n", ms_progname());
		exit(MS_EXIT_USAGE);
	}
}

/* The query option getopt's opt is, or -1 for the command's own options. */
static int qopt_of(int opt)
{
	switch (opt) {
	case OPT_LIMIT: return MS_QOPT_LIMIT;
	case OPT_SORT: return MS_QOPT_SORT;
	case OPT_MIN_PERCENT: return MS_QOPT_MIN_PERCENT;
	case OPT_HIDE_BELOW: return MS_QOPT_HIDE_BELOW;
	case OPT_BY: return MS_QOPT_BY;
	case OPT_LOOK: return MS_QOPT_LOOK;
	case OPT_UNIT: return MS_QOPT_UNIT;
	case OPT_TID: return MS_QOPT_TID;
	case OPT_THREAD: return MS_QOPT_THREAD;
	case OPT_TIME: return MS_QOPT_TIME;
	case OPT_MODULE: return MS_QOPT_MODULE;
	case OPT_FOCUS: return MS_QOPT_FOCUS;
	case OPT_IGNORE: return MS_QOPT_IGNORE;
	case OPT_BUCKETS: return MS_QOPT_BUCKETS;
	case OPT_CAUSE: return MS_QOPT_CAUSE;
	case OPT_LABEL: return MS_QOPT_LABEL;
	default: return -1;
	}
}

static void print_help(bool report)
{
	fputs(report ? usage_report : usage_analyze, stdout);
	fputs(help_text, stdout);
}

static void parse_options(struct cli *c, int argc, char **argv)
{
	int opt, li = 0;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
		int qo = qopt_of(opt);
		uint32_t width;

		if (qo >= 0) {
			/* the query's options and their checks are analysis/options.c's */
			usage_fail_if(ms_qopt_check_view(c->q.view, (enum ms_qopt)qo));
			usage_fail_if(ms_qopt_apply(&c->q, (enum ms_qopt)qo, optarg));
			c->have_limit |= qo == MS_QOPT_LIMIT;
			c->have_hide |= qo == MS_QOPT_MIN_PERCENT || qo == MS_QOPT_HIDE_BELOW;
			continue;
		}
		switch (opt) {
		case OPT_JSON: c->out.json = true; break;
		case OPT_COLOR:
			usage_fail_if(ms_color_mode_parse(optarg, &c->color));
			break;
		case OPT_WIDTH:
			usage_fail_if(ms_qopt_parse_count("--width", "columns", optarg, 100000, &width));
			c->width = width;
			break;
		case 'h':
			print_help(c->report);
			exit(ms_finish_stdout("the help"));
		case OPT_VERSION:
			printf("%s %s\n", c->report ? "microscope" : "ms-analyze", PACKAGE_VERSION);
			exit(ms_finish_stdout("the version"));
		case ':':
			ms_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			ms_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
}

/* Text for people: short by default; JSON for programs: whole. */
static void apply_defaults(struct cli *c)
{
	if (c->q.view == MS_VIEW_REPORT) {
		if (!c->have_limit && !c->out.json)
			c->q.limit = MS_REPORT_TOP_LIMIT;
		if (!c->have_hide && !c->out.json)
			c->q.hide_below = MS_REPORT_TREE_HIDE_BELOW;
		return;
	}
	if (!c->have_limit && !c->out.json)
		c->q.limit = 20;
	if (!c->have_hide && !c->out.json &&
	    (c->q.view == MS_VIEW_TREE || c->q.view == MS_VIEW_CALLERS || c->q.view == MS_VIEW_CALLEES))
		c->q.hide_below = 0.5;
}

/* The environment is read here, once; the views take the decisions as values. */
static void decide_output(struct cli *c)
{
	c->out.f = stdout;
	c->out.color = !c->out.json && ms_color_decide(c->color, STDOUT_FILENO);
	if (c->width >= 0)
		c->out.width = (uint32_t)c->width;
	else if (isatty(STDOUT_FILENO))
		c->out.width = (uint32_t)ms_term_width(STDOUT_FILENO);
}

/* The view's progress: a line on stderr when it is a terminal and the view takes a while. */
static void view_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct ms_progress *p = ctx;

	if (!p->label)
		ms_progress_start(p, "writing the view", total);
	ms_progress_update(p, done);
}

static struct ms_capture *load(const char *path, const struct ms_query *q)
{
	struct ms_capture *cap = ms_capture_load(path);

	if (cap && ms_query_check_capture(q, cap, path)) {
		ms_capture_free(cap);
		return NULL;
	}
	return cap;
}

static int run(struct cli *c, char **files, int n)
{
	struct ms_capture *a, *b = NULL;
	struct ms_progress progress = { 0 };
	int rc;

	if (!(a = load(files[0], &c->q)))
		return MS_EXIT_ERROR;
	if (n == 2 && !(b = load(files[1], &c->q))) {
		ms_capture_free(a);
		return MS_EXIT_ERROR;
	}
	/* A closed stdout (| head) ends the view quietly: see ms_finish_stdout(). */
	signal(SIGPIPE, SIG_IGN);
	c->out.progress = view_progress;
	c->out.progress_ctx = &progress;
	if (b)
		rc = ms_diff_write(&c->out, a, files[0], b, files[1], &c->q);
	else
		rc = ms_view_write(&c->out, a, &c->q);
	ms_progress_finish(&progress);
	ms_capture_free(a);
	ms_capture_free(b);
	if (rc) {
		fflush(stdout);
		return MS_EXIT_ERROR;
	}
	return ms_finish_stdout("the view");
}

int ms_analyze_main(int argc, char **argv, bool report)
{
	struct cli c = { .color = MS_COLOR_AUTO, .width = -1, .report = report };
	enum ms_view view = MS_VIEW_REPORT;
	int first = 1, n_files, need;
	char **rest;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		print_help(report);
		return ms_finish_stdout("the help");
	}
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("%s %s\n", report ? "microscope" : "ms-analyze", PACKAGE_VERSION);
		return ms_finish_stdout("the version");
	}
	if (argc < 2)
		ms_usage_error(report ? "which capture? give a file, or '-' for stdin"
				      : "which view? summary, top, tree, callers, callees, threads, "
					"timeline, problems, diff, off-cpu, wall or tasks");
	if (argv[1][0] != '-' || !argv[1][1]) {
		if (!ms_view_parse_quiet(argv[1], &view) && (!report || argc > 2))
			first = 2;
		else if (!report)
			ms_usage_error("unknown view '%s': use summary, top, tree, callers, callees, "
				       "threads, timeline, problems, diff, off-cpu, wall or tasks", argv[1]);
		else
			view = MS_VIEW_REPORT;
	} else if (!report) {
		ms_usage_error("unknown option '%s': the view comes first", argv[1]);
	}
	ms_query_init(&c.q, view);

	/* Options may come anywhere after the view: argv[first - 1] stands as argv[0]. */
	parse_options(&c, argc - first + 1, argv + first - 1);
	rest = argv + first - 1 + optind;
	n_files = argc - first + 1 - optind;
	if (view == MS_VIEW_CALLERS || view == MS_VIEW_CALLEES) {
		if (n_files < 2)
			ms_usage_error("%s needs the function to start from, then the capture",
				       ms_view_name(view));
		c.q.function = rest[0];
		rest++;
		n_files--;
	}
	need = view == MS_VIEW_DIFF ? 2 : 1;
	if (n_files > need && view == MS_VIEW_REPORT && report) {
		enum ms_view late;

		if (!ms_view_parse_quiet(rest[0], &late))
			ms_usage_error("the view comes first: microscope report %s [options] FILE",
				       rest[0]);
	}
	if (n_files < need)
		ms_usage_error(need == 2 ? "diff needs two captures: A B" : "no capture file given");
	if (n_files > need)
		ms_usage_error("%s, not also '%s'", need == 2 ? "two captures" : "one capture file at a time",
			       rest[need]);
	if (need == 2 && !strcmp(rest[0], "-") && !strcmp(rest[1], "-"))
		ms_usage_error("only one of the two captures can come from stdin");
	apply_defaults(&c);
	usage_fail_if(ms_query_check(&c.q));
	decide_output(&c);
	return run(&c, rest, n_files);
}

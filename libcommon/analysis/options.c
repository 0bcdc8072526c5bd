/*
 * The query options: names, the views that take each, and their values
 * parsed into a query, with the messages ms-analyze has always printed.
 */
#include "analysis/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "util/error.h"

static const char *const names[MS_QOPT_COUNT] = {
	[MS_QOPT_LIMIT] = "limit",
	[MS_QOPT_SORT] = "sort",
	[MS_QOPT_MIN_PERCENT] = "min-percent",
	[MS_QOPT_HIDE_BELOW] = "hide-below",
	[MS_QOPT_BY] = "by",
	[MS_QOPT_LOOK] = "look",
	[MS_QOPT_UNIT] = "unit",
	[MS_QOPT_TID] = "tid",
	[MS_QOPT_THREAD] = "thread",
	[MS_QOPT_TIME] = "time",
	[MS_QOPT_MODULE] = "module",
	[MS_QOPT_FOCUS] = "focus",
	[MS_QOPT_IGNORE] = "ignore",
	[MS_QOPT_BUCKETS] = "buckets",
	[MS_QOPT_CAUSE] = "cause",
	[MS_QOPT_LABEL] = "label",
};

const char *ms_qopt_name(enum ms_qopt o)
{
	return (unsigned)o < MS_QOPT_COUNT ? names[o] : NULL;
}

int ms_qopt_find(const char *name, enum ms_qopt *out)
{
	for (int i = 0; i < MS_QOPT_COUNT; i++)
		if (!strcmp(name, names[i])) {
			*out = (enum ms_qopt)i;
			return 0;
		}
	return -1;
}

bool ms_qopt_repeats(enum ms_qopt o)
{
	return o == MS_QOPT_TID || o == MS_QOPT_THREAD;
}

/* The views an option applies to, for the message when it does not. */
static const char *views_of(enum ms_qopt o)
{
	switch (o) {
	case MS_QOPT_LIMIT:
	case MS_QOPT_SORT:
		return "top, diff, report and off-cpu";
	case MS_QOPT_MIN_PERCENT:
		return "tree, callers, callees and report";
	case MS_QOPT_BUCKETS:
		return "timeline";
	case MS_QOPT_CAUSE:
		return "every view but summary, problems, wall and tasks";
	case MS_QOPT_TID: case MS_QOPT_THREAD:
		return "every view but summary and problems";
	case MS_QOPT_TIME:
		return "every view but summary, problems and tasks";
	case MS_QOPT_UNIT:
		return "every view but summary, problems, off-cpu, wall and tasks";
	default:
		return "every view but summary, problems, wall and tasks";
	}
}

bool ms_qopt_applies(enum ms_view v, enum ms_qopt o)
{
	switch (o) {
	case MS_QOPT_LIMIT:
	case MS_QOPT_SORT:
		return v == MS_VIEW_TOP || v == MS_VIEW_DIFF || v == MS_VIEW_REPORT ||
		       v == MS_VIEW_OFF_CPU;
	case MS_QOPT_MIN_PERCENT:
		return v == MS_VIEW_TREE || v == MS_VIEW_CALLERS || v == MS_VIEW_CALLEES ||
		       v == MS_VIEW_REPORT;
	case MS_QOPT_BUCKETS:
		return v == MS_VIEW_TIMELINE;
	case MS_QOPT_TID: case MS_QOPT_THREAD:
		return v != MS_VIEW_SUMMARY && v != MS_VIEW_PROBLEMS;
	case MS_QOPT_TIME:
		return v != MS_VIEW_SUMMARY && v != MS_VIEW_PROBLEMS && v != MS_VIEW_TASKS;
	case MS_QOPT_UNIT:
		return v != MS_VIEW_SUMMARY && v != MS_VIEW_PROBLEMS && v != MS_VIEW_OFF_CPU &&
		       v != MS_VIEW_WALL && v != MS_VIEW_TASKS;
	case MS_QOPT_MODULE: case MS_QOPT_FOCUS: case MS_QOPT_IGNORE: case MS_QOPT_HIDE_BELOW:
	case MS_QOPT_BY: case MS_QOPT_CAUSE: case MS_QOPT_LABEL:
		return v != MS_VIEW_SUMMARY && v != MS_VIEW_PROBLEMS && v != MS_VIEW_WALL &&
		       v != MS_VIEW_TASKS;
	default:
		/* look: every view */
		return true;
	}
}

int ms_qopt_check_view(enum ms_view v, enum ms_qopt o)
{
	if (ms_qopt_applies(v, o))
		return 0;
	return ms_error("--%s applies to %s, not %s", ms_qopt_name(o), views_of(o), ms_view_name(v));
}

int ms_qopt_parse_count(const char *opt, const char *noun, const char *arg, uint32_t max,
			uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || arg[0] == '+' || v > max)
		return ms_error("%s wants a count of %s (0 to %lu), not '%s'", opt, noun,
				(unsigned long)max, arg);
	*out = (uint32_t)v;
	return 0;
}

static int parse_percent(const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0 && v <= 100))
		return ms_error("%s wants a number from 0 to 100, not '%s'", opt, arg);
	*out = v;
	return 0;
}

int ms_qopt_apply(struct ms_query *q, enum ms_qopt o, const char *arg)
{
	switch (o) {
	case MS_QOPT_LIMIT:
		return ms_qopt_parse_count("--limit", "rows", arg, UINT32_MAX, &q->limit);
	case MS_QOPT_SORT:
		if (!strcmp(arg, "self"))
			q->sort = MS_SORT_SELF;
		else if (!strcmp(arg, "total"))
			q->sort = MS_SORT_TOTAL;
		else
			return ms_error("--sort wants self or total, not '%s'", arg);
		return 0;
	case MS_QOPT_MIN_PERCENT:
		return parse_percent("--min-percent", arg, &q->hide_below);
	case MS_QOPT_HIDE_BELOW:
		return parse_percent("--hide-below", arg, &q->hide_below);
	case MS_QOPT_BY: return ms_by_parse(arg, &q->by);
	case MS_QOPT_LOOK: return ms_look_parse(arg, &q->look);
	case MS_QOPT_UNIT: return ms_unit_parse(arg, &q->unit);
	case MS_QOPT_TID: return ms_query_add_tids(q, arg);
	case MS_QOPT_THREAD: return ms_query_add_thread_name(q, arg);
	case MS_QOPT_TIME: return ms_query_parse_time(q, arg);
	case MS_QOPT_MODULE: q->module = arg; return 0;
	case MS_QOPT_FOCUS: q->focus = arg; return 0;
	case MS_QOPT_IGNORE: q->ignore = arg; return 0;
	case MS_QOPT_CAUSE: return ms_query_add_causes(q, arg);
	case MS_QOPT_LABEL: return ms_query_set_label(q, arg);
	case MS_QOPT_BUCKETS:
		if (ms_qopt_parse_count("--buckets", "buckets", arg, MS_TIMELINE_MAX_BUCKETS,
					&q->buckets))
			return -1;
		if (!q->buckets)
			return ms_error("--buckets wants at least 1");
		return 0;
	default:
		return ms_error("a query option out of range (%d)", (int)o);
	}
}

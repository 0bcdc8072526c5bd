/*
 * The query value: defaults, names, parsers of option values, checks.
 */
#include "analysis/query.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "capture/labels.h"
#include "capture/weight.h"
#include "stream/records.h"
#include "util/error.h"

static const char *const view_names[MS_VIEW_COUNT] = {
	[MS_VIEW_REPORT] = "report",
	[MS_VIEW_SUMMARY] = "summary",
	[MS_VIEW_TOP] = "top",
	[MS_VIEW_TREE] = "tree",
	[MS_VIEW_CALLERS] = "callers",
	[MS_VIEW_CALLEES] = "callees",
	[MS_VIEW_THREADS] = "threads",
	[MS_VIEW_TIMELINE] = "timeline",
	[MS_VIEW_PROBLEMS] = "problems",
	[MS_VIEW_DIFF] = "diff",
	[MS_VIEW_OFF_CPU] = "off-cpu",
	[MS_VIEW_WALL] = "wall",
	[MS_VIEW_TASKS] = "tasks",
};
static const char *const by_names[MS_BY_COUNT] = {
	[MS_BY_FUNCTION] = "function",
	[MS_BY_LINE] = "line",
	[MS_BY_ADDRESS] = "address",
	[MS_BY_MODULE] = "module",
};
static const char *const unit_names[MS_UNIT_COUNT] = {
	[MS_UNIT_SAMPLES] = "samples",
	[MS_UNIT_CPU_TIME] = "cpu-time",
	[MS_UNIT_OFF_CPU] = "off-cpu",
	[MS_UNIT_SNAPSHOTS] = "snapshots",
};

void ms_query_init(struct ms_query *q, enum ms_view view)
{
	memset(q, 0, sizeof(*q));
	q->view = view;
}

const char *ms_view_name(enum ms_view v)
{
	return (unsigned)v < MS_VIEW_COUNT ? view_names[v] : NULL;
}

const char *ms_by_name(enum ms_by b)
{
	return (unsigned)b < MS_BY_COUNT ? by_names[b] : NULL;
}

const char *ms_unit_name(enum ms_unit u)
{
	return (unsigned)u < MS_UNIT_COUNT ? unit_names[u] : NULL;
}

const char *ms_unit_measure(enum ms_unit u)
{
	return u == MS_UNIT_CPU_TIME || u == MS_UNIT_OFF_CPU ? "ns" :
	       u == MS_UNIT_SNAPSHOTS ? "snapshots" : "samples";
}

const char *ms_unit_source(enum ms_unit u)
{
	return u == MS_UNIT_OFF_CPU ? "intervals" : u == MS_UNIT_SNAPSHOTS ? "thread-snapshots" :
	       "cpu-sampling";
}

const char *ms_unit_words(enum ms_unit u)
{
	return u == MS_UNIT_CPU_TIME ? " of CPU time" : u == MS_UNIT_OFF_CPU ? " of off-CPU time" :
	       u == MS_UNIT_SNAPSHOTS ? " snapshots" : " samples";
}

const char *ms_unit_column(enum ms_unit u)
{
	return u == MS_UNIT_CPU_TIME ? "cpu time" : u == MS_UNIT_OFF_CPU ? "off cpu" :
	       u == MS_UNIT_SNAPSHOTS ? "snapshots" : "samples";
}

/* The index of arg in names, or -1 after a message listing them. */
static int parse_name(const char *what, const char *arg, const char *const *names, int n)
{
	char choices[256] = "";
	size_t used = 0;
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(arg, names[i]))
			return i;
	for (i = 0; i < n; i++) {
		if (!names[i])
			continue;
		int w = snprintf(choices + used, sizeof(choices) - used, "%s%s", used ? ", " : "",
				 names[i]);

		if (w > 0 && (size_t)w < sizeof(choices) - used)
			used += (size_t)w;
	}
	return ms_error("unknown %s '%s': use %s", what, arg, choices);
}

int ms_view_parse(const char *arg, enum ms_view *out)
{
	int i = parse_name("view", arg, view_names, MS_VIEW_COUNT);

	if (i < 0)
		return -1;
	*out = (enum ms_view)i;
	return 0;
}

int ms_view_parse_quiet(const char *arg, enum ms_view *out)
{
	int i;

	for (i = 0; i < MS_VIEW_COUNT; i++)
		if (!strcmp(arg, view_names[i])) {
			*out = (enum ms_view)i;
			return 0;
		}
	return -1;
}

int ms_by_parse(const char *arg, enum ms_by *out)
{
	int i = parse_name("granularity for --by", arg, by_names, MS_BY_COUNT);

	if (i < 0)
		return -1;
	*out = (enum ms_by)i;
	return 0;
}

int ms_look_parse(const char *arg, enum ms_look *out)
{
	int i = parse_name("look", arg, ms_look_names, MS_LOOK_COUNT);

	if (i < 0)
		return -1;
	*out = (enum ms_look)i;
	return 0;
}

int ms_unit_parse(const char *arg, enum ms_unit *out)
{
	int i = parse_name("unit", arg, unit_names, MS_UNIT_COUNT);

	if (i < 0)
		return -1;
	*out = (enum ms_unit)i;
	return 0;
}

static int time_error(const char *whole)
{
	return ms_error("--time wants START..END, each a time from the recording's start "
			"such as 1.5s, 250ms or 2 (seconds), either side empty; not '%s'", whole);
}

/* One side of a range: "1.5s", "250ms", "2" (seconds). */
static int parse_duration(const char *s, size_t len, uint64_t *out, const char *whole)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "min", 60e9 }, { "", 1e9 },
	};
	char buf[64], *end;
	double v;
	size_t i;

	if (len >= sizeof(buf))
		goto bad;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	v = strtod(buf, &end);
	if (end == buf || errno || !isfinite(v) || v < 0 || buf[0] == '-' || buf[0] == '+')
		goto bad;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		v *= units[i].ns;
		if (v >= 1.8e19)
			goto bad;
		*out = (uint64_t)(v + 0.5);
		return 0;
	}
bad:
	return time_error(whole);
}

int ms_query_parse_time(struct ms_query *q, const char *arg)
{
	const char *dots = strstr(arg, "..");
	const char *end_s;
	uint64_t start = 0, end = 0;
	bool has_start, has_end;

	/* "..", "1...2" and "1..2..3" say no one range */
	if (!dots || strstr(dots + 2, "..") || dots[2] == '.')
		return time_error(arg);
	end_s = dots + 2;
	has_start = dots > arg;
	has_end = *end_s != 0;
	if (!has_start && !has_end)
		return time_error(arg);
	if (has_start && parse_duration(arg, (size_t)(dots - arg), &start, arg))
		return -1;
	if (has_end && parse_duration(end_s, strlen(end_s), &end, arg))
		return -1;
	/* the query changes only when the whole range parsed */
	q->has_time_start = has_start;
	q->has_time_end = has_end;
	q->time_start = start;
	q->time_end = end;
	return 0;
}

int ms_query_add_tids(struct ms_query *q, const char *arg)
{
	const char *p = arg;

	for (;;) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || end == p || *p == '-' || *p == '+' || v > UINT32_MAX ||
		    (*end && *end != ','))
			return ms_error("--tid wants thread ids such as 1234 or 1234,1240; not '%s'", arg);
		if (q->n_tids == MS_QUERY_MAX_THREADS)
			return ms_error("at most %d thread ids in --tid", MS_QUERY_MAX_THREADS);
		q->tids[q->n_tids++] = (uint32_t)v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

int ms_query_add_thread_name(struct ms_query *q, const char *name)
{
	if (q->n_thread_names == MS_QUERY_MAX_THREADS)
		return ms_error("at most %d names in --thread", MS_QUERY_MAX_THREADS);
	q->thread_names[q->n_thread_names++] = name;
	return 0;
}

int ms_query_add_causes(struct ms_query *q, const char *arg)
{
	const char *p = arg;

	for (;;) {
		size_t len = strcspn(p, ",");
		uint32_t c;

		for (c = 0; c < MS_CAUSE_COUNT; c++)
			if (strlen(ms_off_cpu_cause_name(c)) == len &&
			    !strncmp(p, ms_off_cpu_cause_name(c), len))
				break;
		if (c == MS_CAUSE_COUNT)
			return ms_error("--cause wants preempted, sleeping, blocked or unknown, "
					"or a list such as sleeping,blocked; not '%s'", arg);
		q->causes |= 1u << c;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int ms_query_set_label(struct ms_query *q, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return ms_error("--label wants KEY=VALUE, such as gil=held; not '%s'", arg);
	q->label = arg;
	q->label_key_len = (uint32_t)(eq - arg);
	return 0;
}

bool ms_query_off_cpu(const struct ms_query *q)
{
	return q->unit == MS_UNIT_OFF_CPU || q->view == MS_VIEW_OFF_CPU || q->view == MS_VIEW_WALL;
}

static int check_regex(const char *opt, const char *re)
{
	char msg[160];
	regex_t r;
	int rc;

	if (!re)
		return 0;
	rc = regcomp(&r, re, REG_EXTENDED | REG_NOSUB);
	if (!rc) {
		regfree(&r);
		return 0;
	}
	regerror(rc, &r, msg, sizeof(msg));
	return ms_error("%s '%s' is not a regular expression: %s", opt, re, msg);
}

int ms_query_check(const struct ms_query *q)
{
	if ((unsigned)q->view >= MS_VIEW_COUNT || (unsigned)q->by >= MS_BY_COUNT ||
	    (unsigned)q->look >= MS_LOOK_COUNT || (unsigned)q->unit >= MS_UNIT_COUNT)
		return ms_error("a query with a value out of range");
	if (q->has_time_start && q->has_time_end && q->time_end <= q->time_start)
		return ms_error("--time ends before it starts: give START..END with END after START");
	if (!(q->hide_below >= 0 && q->hide_below <= 100))
		return ms_error("--hide-below wants a share from 0 to 100");
	if ((q->view == MS_VIEW_CALLERS || q->view == MS_VIEW_CALLEES) &&
	    (!q->function || !*q->function))
		return ms_error("%s needs the function to start from", ms_view_name(q->view));
	if (check_regex("--focus", q->focus) || check_regex("--ignore", q->ignore))
		return -1;
	/* the off-CPU views weigh time of their own; the timeline draws off-CPU lanes apart */
	if (q->view == MS_VIEW_TIMELINE && q->unit == MS_UNIT_OFF_CPU)
		return ms_error("the timeline draws off-CPU lanes of its own beside the CPU lanes: "
				"leave --unit off-cpu out");
	if ((q->view == MS_VIEW_OFF_CPU || q->view == MS_VIEW_WALL || q->view == MS_VIEW_TASKS) &&
	    (q->unit == MS_UNIT_CPU_TIME || q->unit == MS_UNIT_SNAPSHOTS))
		return ms_error("the %s view states its own units: leave --unit out",
				ms_view_name(q->view));
	/* a task's changed and dropped reads are counts without times, stacks or labels */
	if (q->view == MS_VIEW_TASKS && (q->has_time_start || q->has_time_end || q->module ||
					 q->focus || q->ignore || q->label))
		return ms_error("the tasks view counts every read of each task: of the filters "
				"it takes only --tid and --thread");
	if (q->causes && q->view == MS_VIEW_WALL)
		return ms_error("the wall view joins every cause: leave --cause out, or see one "
				"cause in the off-cpu view");
	if (q->label && q->view == MS_VIEW_WALL)
		return ms_error("the wall view accounts all of each thread's time: leave --label "
				"out, or see the label's samples in the threads view");
	if (q->causes && !ms_query_off_cpu(q) && q->view != MS_VIEW_TIMELINE)
		return ms_error("--cause selects off-CPU intervals: use it with --unit off-cpu, "
				"the off-cpu view or the timeline");
	return 0;
}

int ms_query_check_capture(const struct ms_query *q, const struct ms_capture *cap,
			   const char *file)
{
	const char *event;

	if (q->label) {
		uint32_t key = ms_capture_find_string(cap, q->label, q->label_key_len), i;

		for (i = 0; key != MS_NONE && i < cap->n_label_spans; i++)
			if (cap->label_spans[i].key == key)
				break;
		if (key == MS_NONE || i == cap->n_label_spans)
			return ms_error("'%s' has no label spans of the key '%.*s' (--label %s)%s",
					file, (int)q->label_key_len, q->label, q->label,
					cap->n_label_spans ? "" : ": it has no labels at all; "
					"Python's GIL labels come from microscope record --python bpf");
	}
	if (ms_query_off_cpu(q) && !(cap->flags & MS_CAPTURE_OFF_CPU))
		return ms_error("'%s' has no off-CPU intervals: record it with microscope record "
				"--off-cpu", file);
	if (q->view == MS_VIEW_TASKS && !cap->n_tasks)
		return ms_error("'%s' has no tasks: thread snapshots make them; record it with "
				"microscope record --python snapshot", file);
	if (q->unit == MS_UNIT_SNAPSHOTS && !cap->n_waits)
		return ms_error("'%s' has no thread snapshots to weigh%s: record it with "
				"microscope record --python snapshot", file,
				cap->n_tasks ? " (its tasks were read, but no read was whole: "
				"see the tasks view)" : "");
	if (q->unit != MS_UNIT_CPU_TIME)
		return 0;
	if (ms_capture_time_event(cap)) {
		uint32_t i;

		for (i = 0; i < cap->n_samples; i++)
			if (cap->samples[i].period)
				return 0;
		if (!cap->n_samples)
			return 0;
		return ms_error("the samples of '%s' carry no periods%s: there is no CPU time to "
				"show; use --unit samples", file,
				ms_capture_info_text(cap, "import") ? " (an import of counts)" : "");
	}
	event = ms_capture_info_text(cap, "event");
	return ms_error("'%s' was recorded on the event '%s', whose periods are not time: "
			"there is no CPU time to show; use --unit samples", file,
			event ? event : "?");
}

bool ms_query_filters(const struct ms_query *q)
{
	return q->n_tids || q->n_thread_names || q->has_time_start || q->has_time_end ||
	       q->module || q->focus || q->ignore || q->causes || q->label;
}

uint64_t ms_query_origin(const struct ms_capture *cap)
{
	uint64_t start, end;

	ms_capture_span(cap, &start, &end);
	if (start)
		return start;
	if (cap->n_samples)
		return cap->samples[0].time;
	/* intervals are sorted by start, or else end: the first holds the earliest time */
	if (cap->n_intervals)
		return cap->intervals[0].start ? cap->intervals[0].start : cap->intervals[0].end;
	/* waits are sorted by task, then time: the earliest is any task's first */
	{
		uint64_t first = 0;

		for (uint32_t i = 0; i < cap->n_waits; i++)
			if (!first || (cap->waits[i].time && cap->waits[i].time < first))
				first = cap->waits[i].time;
		return first;
	}
}

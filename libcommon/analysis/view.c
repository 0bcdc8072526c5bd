/*
 * What the views share: values in the query's unit, the selection line,
 * the head of their JSON, a key as text, and the dispatch by view.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "capture/look.h"
#include "analysis/present.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/text.h"

void ms_view_value(char *buf, size_t size, const struct ms_select *s, uint64_t w)
{
	if (s->unit == MS_UNIT_CPU_TIME || s->unit == MS_UNIT_OFF_CPU)
		ms_format_ns(buf, size, w);
	else
		snprintf(buf, size, "%" PRIu64, w);
}

static void put_time(FILE *out, uint64_t ns)
{
	char buf[32];

	ms_format_ns(buf, sizeof(buf), ns);
	fputs(buf, out);
}

void ms_view_put_filters(FILE *out, const struct ms_query *q)
{
	const char *sep = ": ";
	uint32_t i;

	if (q->n_tids || q->n_thread_names) {
		fprintf(out, "%sthreads", sep);
		for (i = 0; i < q->n_tids; i++)
			fprintf(out, " %" PRIu32, q->tids[i]);
		for (i = 0; i < q->n_thread_names; i++) {
			fputs(" '", out);
			ms_text_put(out, q->thread_names[i]);
			fputc('\'', out);
		}
		sep = ", ";
	}
	if (q->has_time_start || q->has_time_end) {
		fprintf(out, "%stime ", sep);
		if (q->has_time_start)
			put_time(out, q->time_start);
		fputs("..", out);
		if (q->has_time_end)
			put_time(out, q->time_end);
		sep = ", ";
	}
	if (q->module) {
		fprintf(out, "%sin module '", sep);
		ms_text_put(out, q->module);
		fputc('\'', out);
		sep = ", ";
	}
	if (q->focus) {
		fprintf(out, "%sthrough '", sep);
		ms_text_put(out, q->focus);
		fputc('\'', out);
		sep = ", ";
	}
	if (q->ignore) {
		fprintf(out, "%sframes '", sep);
		ms_text_put(out, q->ignore);
		fputs("' dropped", out);
		sep = ", ";
	}
	if (q->label) {
		fprintf(out, "%slabel '", sep);
		ms_text_put(out, q->label);
		fputc('\'', out);
		sep = ", ";
	}
	if (q->causes) {
		fprintf(out, "%scause", sep);
		for (i = 0; i < MS_CAUSE_COUNT; i++)
			if (q->causes & (1u << i))
				fprintf(out, " %s", ms_off_cpu_cause_name(i));
	}
}

void ms_view_selection_line(FILE *out, const struct ms_select *s)
{
	char a[32], b[32];

	if (!ms_query_filters(s->q))
		return;
	ms_view_value(a, sizeof(a), s, s->selected);
	ms_view_value(b, sizeof(b), s, s->all);
	fprintf(out, "selected %s of %s%s", a, b, s->unit == MS_UNIT_SAMPLES ? " samples" :
		s->unit == MS_UNIT_SNAPSHOTS ? " snapshots" : "");
	ms_view_put_filters(out, s->q);
	fputc('\n', out);
}

void ms_view_json_head(struct ms_json *j, const struct ms_select *s)
{
	ms_json_key(j, "source");
	ms_json_string(j, ms_unit_source(s->unit));
	ms_json_key(j, "unit");
	ms_json_string(j, ms_unit_measure(s->unit));
	ms_json_key(j, "by");
	ms_json_string(j, ms_by_name(s->keys.by));
	ms_json_key(j, "look");
	ms_json_string(j, ms_look_name(s->q->look));
	/* what was counted: samples, complete intervals, or snapshots */
	if (s->unit == MS_UNIT_OFF_CPU) {
		ms_json_key(j, "intervals");
		ms_json_uint(j, s->selected_intervals);
	} else if (s->unit == MS_UNIT_SNAPSHOTS) {
		ms_json_key(j, "snapshots");
		ms_json_uint(j, s->selected_samples);
	} else {
		ms_json_key(j, "samples");
		ms_json_uint(j, s->selected_samples);
	}
	ms_json_key(j, "total");
	ms_json_uint(j, s->selected);
	ms_json_key(j, "capture_total");
	ms_json_uint(j, s->all);
}

/*
 * What gives way when a line is too wide for width columns: first the
 * module, then the file and line, and only then the name, cut to the
 * width (never below MS_VIEW_MIN_NAME columns) with its end kept.
 */
#define MIN_NAME MS_VIEW_MIN_NAME

void ms_view_put_key(const struct ms_view_out *o, const struct ms_select *s, uint32_t key,
		     size_t width, bool with_module)
{
	const struct ms_key *k = &s->keys.keys[key];
	const char *mod = with_module ? ms_key_module_label(&s->keys, s->cap, key) : "";
	char loc[512], name[MS_NAME_SIZE(512)];
	size_t name_w, loc_w, mod_w;

	if (k->kind == MS_KEY_TRUNCATED) {
		ms_styled_put(o->f, o->color, MS_STYLE_WARN, k->label);
		return;
	}
	*loc = 0;
	/* an unnamed function's label says where it is, unless it is another address of it */
	if (k->kind == MS_KEY_MODULE || (!s->keys.funcs.funcs[k->func].name &&
	    (k->kind != MS_KEY_ADDRESS || s->keys.funcs.funcs[k->func].address == k->address)))
		mod = "";
	else
		ms_key_location(loc, sizeof(loc), &s->keys, key);
	/* templates elided whatever the width, as pprof and perf do in text */
	ms_name_shorten(name, sizeof(name), k->label, 0);
	name_w = ms_text_width(name);
	loc_w = *loc ? ms_text_width(loc) + 3 : 0;
	mod_w = *mod ? ms_text_width(mod) + (*loc ? 2 : 3) : 0;
	if (width && name_w + loc_w + mod_w > width) {
		mod = "";
		if (name_w + loc_w > width)
			*loc = 0;
		if (name_w > width)
			ms_name_shorten(name, sizeof(name), k->label, width > MIN_NAME ? width : MIN_NAME);
	}
	ms_text_put(o->f, name);
	if (!*loc && !*mod)
		return;
	ms_style_put(o->f, o->color, MS_STYLE_DIM);
	fputs(" (", o->f);
	ms_text_put(o->f, loc);
	if (*loc && *mod)
		fputs(", ", o->f);
	ms_text_put(o->f, mod);
	fputc(')', o->f);
	ms_style_put(o->f, o->color, MS_STYLE_RESET);
}

void ms_view_put_percent(const struct ms_view_out *o, double percent)
{
	uint32_t ppm = percent <= 0 ? 0 : percent >= 100 ? 1000000 : (uint32_t)(percent * 10000);

	ms_style_put(o->f, o->color, ms_heat_style(ppm));
	fprintf(o->f, "%5.1f%%", percent);
	ms_style_put(o->f, o->color, MS_STYLE_RESET);
}

static int view_write_seen(const struct ms_view_out *o, const struct ms_capture *cap,
			   const struct ms_query *q)
{
	switch (q->view) {
	case MS_VIEW_REPORT:
		return ms_report_write(o, cap, q);
	case MS_VIEW_SUMMARY:
		return ms_summary_write_out(o, cap);
	case MS_VIEW_TOP:
		return ms_top_write(o, cap, q);
	case MS_VIEW_TREE:
	case MS_VIEW_CALLERS:
	case MS_VIEW_CALLEES:
		return ms_tree_write(o, cap, q);
	case MS_VIEW_THREADS:
		return ms_threads_write(o, cap, q);
	case MS_VIEW_TIMELINE:
		return ms_timeline_write(o, cap, q);
	case MS_VIEW_PROBLEMS:
		return ms_sym_problems_write(o->f, cap, o->json);
	case MS_VIEW_OFF_CPU:
		return ms_off_cpu_write(o, cap, q);
	case MS_VIEW_WALL:
		return ms_wall_write(o, cap, q);
	case MS_VIEW_TASKS:
		return ms_tasks_write(o, cap, q);
	default:
		return ms_error("the view %s compares two captures: use ms_diff_write()",
				ms_view_name(q->view));
	}
}

int ms_view_write(const struct ms_view_out *o, const struct ms_capture *cap,
		  const struct ms_query *q)
{
	struct ms_look_view look;
	int rc;

	if (ms_look_build(&look, cap, q->look) < 0)
		return -1;
	rc = view_write_seen(o, look.seen, q);
	ms_look_release(&look);
	return rc;
}

void ms_view_json_thread(struct ms_json *j, const struct ms_capture *cap,
			 const struct ms_cap_thread *th)
{
	ms_json_key(j, "pid");
	ms_json_uint(j, th->pid);
	ms_json_key(j, "tid");
	ms_json_uint(j, th->tid);
	ms_json_key(j, "name");
	ms_json_string(j, cap->strings[th->name]);
}

void ms_view_json_problem_rows(struct ms_json *j, const struct ms_capture *cap)
{
	ms_json_array_begin(j);
	for (uint32_t i = 0; i < cap->n_problems; i++) {
		const struct ms_cap_problem *p = &cap->problems[i];
		const char *meaning;

		ms_json_object_begin(j);
		ms_json_key(j, "stage");
		ms_json_string(j, cap->strings[p->stage]);
		ms_json_key(j, "code");
		ms_json_string(j, cap->strings[p->code]);
		ms_json_key(j, "count");
		ms_json_uint(j, p->count);
		ms_json_key(j, "detail");
		ms_json_string(j, cap->strings[p->detail]);
		/* only for the codes it knows, so that every other row stays as it was */
		if ((meaning = ms_jit_problem_meaning(cap->strings[p->stage], cap->strings[p->code]))) {
			ms_json_key(j, "meaning");
			ms_json_string(j, meaning);
		}
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
}

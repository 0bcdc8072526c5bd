/*
 * Tasks of thread snapshots (capture.h: ms_cap_task, ms_cap_wait): the
 * tasks view, a row per task with the counts of its reads, and the
 * summary's word on them. A whole read is a wait row (a snapshot the
 * unit snapshots weighs); a changed read was not whole and a dropped one
 * lost its stack, so those are counts alone, without times or stacks.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "capture/weight.h"
#include "util/error.h"
#include "util/json.h"
#include "util/text.h"

struct task_sums {
	uint64_t snapshots, changed, dropped;
	uint32_t tasks;
};

static void sum_tasks(const struct ms_capture *cap, struct task_sums *t)
{
	memset(t, 0, sizeof(*t));
	t->tasks = cap->n_tasks;
	for (uint32_t i = 0; i < cap->n_tasks; i++) {
		t->snapshots = ms_weight_add(t->snapshots, cap->tasks[i].waits);
		t->changed = ms_weight_add(t->changed, cap->tasks[i].changed);
		t->dropped = ms_weight_add(t->dropped, cap->tasks[i].dropped);
	}
}

/* The kind of every task when they share one ("thread"), else NULL. */
static const char *one_kind(const struct ms_capture *cap)
{
	for (uint32_t i = 1; i < cap->n_tasks; i++)
		if (cap->tasks[i].kind != cap->tasks[0].kind)
			return NULL;
	return cap->n_tasks ? cap->strings[cap->tasks[0].kind] : NULL;
}

void ms_tasks_summary_text(FILE *out, const struct ms_capture *cap)
{
	const char *kind = one_kind(cap);
	struct task_sums t;

	if (!cap->n_tasks)
		return;
	sum_tasks(cap, &t);
	fprintf(out, "tasks:       %" PRIu32 " ", t.tasks);
	ms_text_put(out, kind ? kind : "task");
	fprintf(out, "%s read by snapshots: %" PRIu64 " whole, %" PRIu64 " changed, %" PRIu64
		" dropped (--unit snapshots weighs the whole; the tasks view lists them)\n",
		t.tasks == 1 ? "" : "s", t.snapshots, t.changed, t.dropped);
}

void ms_tasks_summary_json(struct ms_json *j, const struct ms_capture *cap)
{
	struct task_sums t;

	sum_tasks(cap, &t);
	ms_json_object_begin(j);
	ms_json_key(j, "tasks");
	ms_json_uint(j, t.tasks);
	ms_json_key(j, "snapshots");
	ms_json_uint(j, t.snapshots);
	ms_json_key(j, "changed");
	ms_json_uint(j, t.changed);
	ms_json_key(j, "dropped");
	ms_json_uint(j, t.dropped);
	ms_json_object_end(j);
}

/* --tid and --thread: the task's thread, or for a thread without a row, its id. */
static bool task_selected(const struct ms_capture *cap, const struct ms_query *q,
			  const struct ms_cap_task *t)
{
	const struct ms_cap_thread *th = t->thread < cap->n_threads ? &cap->threads[t->thread] : NULL;
	uint32_t i;

	if (!q->n_tids && !q->n_thread_names)
		return true;
	for (i = 0; i < q->n_tids; i++)
		if (th ? q->tids[i] == th->tid :
		    !strcmp(cap->strings[t->kind], "thread") && q->tids[i] == t->id)
			return true;
	for (i = 0; th && i < q->n_thread_names; i++)
		if (!strcmp(q->thread_names[i], cap->strings[th->name]))
			return true;
	return false;
}

static const char *task_name(const struct ms_capture *cap, const struct ms_cap_task *t)
{
	return t->thread < cap->n_threads ? cap->strings[cap->threads[t->thread].name] : "";
}

int ms_tasks_write(const struct ms_view_out *o, const struct ms_capture *cap,
		   const struct ms_query *q)
{
	uint64_t *framed = calloc(cap->n_tasks + 1, sizeof(*framed));
	uint64_t origin = ms_query_origin(cap);
	struct task_sums all = { 0 };
	uint32_t i, shown = 0;

	if (!framed)
		return ms_error("out of memory counting the snapshots of %" PRIu32 " tasks",
				cap->n_tasks);
	/* the share of each task's snapshots that found frames (its thread ran Python) */
	for (i = 0; i < cap->n_waits; i++)
		if (cap->waits[i].task < cap->n_tasks && cap->waits[i].stack != MS_NONE)
			framed[cap->waits[i].task]++;
	for (i = 0; i < cap->n_tasks; i++) {
		const struct ms_cap_task *t = &cap->tasks[i];

		if (!task_selected(cap, q, t))
			continue;
		all.tasks++;
		all.snapshots = ms_weight_add(all.snapshots, t->waits);
		all.changed = ms_weight_add(all.changed, t->changed);
		all.dropped = ms_weight_add(all.dropped, t->dropped);
	}
	if (o->json) {
		struct ms_json j;

		ms_json_init(&j, o->f);
		ms_json_object_begin(&j);
		ms_json_key(&j, "source");
		ms_json_string(&j, ms_unit_source(MS_UNIT_SNAPSHOTS));
		ms_json_key(&j, "tasks");
		ms_json_uint(&j, all.tasks);
		ms_json_key(&j, "snapshots");
		ms_json_uint(&j, all.snapshots);
		ms_json_key(&j, "changed");
		ms_json_uint(&j, all.changed);
		ms_json_key(&j, "dropped");
		ms_json_uint(&j, all.dropped);
		ms_json_key(&j, "rows");
		ms_json_array_begin(&j);
		for (i = 0; i < cap->n_tasks; i++) {
			const struct ms_cap_task *t = &cap->tasks[i];

			if (!task_selected(cap, q, t))
				continue;
			ms_json_object_begin(&j);
			ms_json_key(&j, "pid");
			ms_json_uint(&j, t->pid);
			ms_json_key(&j, "kind");
			ms_json_string(&j, cap->strings[t->kind]);
			ms_json_key(&j, "id");
			ms_json_uint(&j, t->id);
			ms_json_key(&j, "name");
			ms_json_string(&j, task_name(cap, t));
			ms_json_key(&j, "snapshots");
			ms_json_uint(&j, t->waits);
			ms_json_key(&j, "changed");
			ms_json_uint(&j, t->changed);
			ms_json_key(&j, "dropped");
			ms_json_uint(&j, t->dropped);
			/* from the recording's start, as --time */
			ms_json_key(&j, "first_ns");
			ms_json_uint(&j, t->first_time > origin ? t->first_time - origin : 0);
			ms_json_key(&j, "last_ns");
			ms_json_uint(&j, t->last_time > origin ? t->last_time - origin : 0);
			ms_json_key(&j, "with_frames");
			ms_json_uint(&j, framed[i]);
			ms_json_key(&j, "with_frames_percent");
			ms_json_double(&j, ms_percent(framed[i], t->waits), 2);
			ms_json_object_end(&j);
		}
		ms_json_array_end(&j);
		ms_json_object_end(&j);
		fputc('\n', o->f);
		free(framed);
		return 0;
	}
	fprintf(o->f, "%" PRIu32 " task%s: %" PRIu64 " snapshots, %" PRIu64 " changed, %" PRIu64
		" dropped", all.tasks, all.tasks == 1 ? "" : "s", all.snapshots, all.changed,
		all.dropped);
	ms_view_put_filters(o->f, q);
	fputc('\n', o->f);
	fprintf(o->f, "%8s  %-8s  %10s  %9s  %7s  %7s  %6s  %10s  %10s  name\n", "pid", "kind", "id",
		"snapshots", "changed", "dropped", "frames", "first", "last");
	for (i = 0; i < cap->n_tasks; i++) {
		const struct ms_cap_task *t = &cap->tasks[i];
		char first[32], last[32];

		if (!task_selected(cap, q, t))
			continue;
		shown++;
		ms_format_ns(first, sizeof(first), t->first_time > origin ? t->first_time - origin : 0);
		ms_format_ns(last, sizeof(last), t->last_time > origin ? t->last_time - origin : 0);
		fprintf(o->f, "%8" PRIu32 "  ", t->pid);
		ms_text_pad(o->f, cap->strings[t->kind], 8, 0);
		fprintf(o->f, "  %10" PRIu64 "  %9" PRIu64 "  %7" PRIu64 "  %7" PRIu64 "  %5.1f%%"
			"  %10s  %10s  ", t->id, t->waits, t->changed, t->dropped,
			ms_percent(framed[i], t->waits), first, last);
		ms_text_put(o->f, *task_name(cap, t) ? task_name(cap, t) : "(no name)");
		fputc('\n', o->f);
	}
	if (!shown)
		fputs("(no selected tasks)\n", o->f);
	free(framed);
	return 0;
}

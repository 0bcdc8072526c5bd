/*
 * captasks CAPTURE: a capture's tasks and wait rows as text, for
 * tests/0777-snapshot-capture.bats. One line a task: pid, kind, id, its
 * thread's name (- for none), first-last read, complete (w), changed (c)
 * and dropped (d) reads; then one line a wait row: its task's row, time,
 * the stack's frame names innermost first (- for none) and its reason.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "capture/capture.h"
#include "util/error.h"

static const char *str(const struct ms_capture *cap, uint32_t id)
{
	return id == MS_NONE ? "-" : cap->strings[id];
}

int main(int argc, char **argv)
{
	struct ms_capture *cap;

	ms_set_progname("captasks");
	if (argc != 2) {
		fprintf(stderr, "usage: captasks CAPTURE\n");
		return 2;
	}
	if (!(cap = ms_capture_load(argv[1])))
		return 1;
	printf("minor %u\n", cap->minor);
	for (uint32_t i = 0; i < cap->n_tasks; i++) {
		const struct ms_cap_task *t = &cap->tasks[i];

		printf("task %u %s %" PRIu64 " %s %" PRIu64 "-%" PRIu64 " w%" PRIu64 " c%" PRIu64
		       " d%" PRIu64 "\n", t->pid, str(cap, t->kind), t->id,
		       t->thread == MS_NONE ? "-" : str(cap, cap->threads[t->thread].name),
		       t->first_time, t->last_time, t->waits, t->changed, t->dropped);
	}
	for (uint32_t i = 0; i < cap->n_waits; i++) {
		const struct ms_cap_wait *x = &cap->waits[i];
		const char *sep = "";

		printf("wait %u %" PRIu64 " ", x->task, x->time);
		if (x->stack == MS_NONE)
			printf("-");
		for (uint32_t s = x->stack; s != MS_NONE; s = cap->stacks[s].parent, sep = ";")
			printf("%s%s", sep, str(cap, cap->frames[cap->stacks[s].frame].name));
		printf(" %s\n", str(cap, x->reason));
	}
	ms_capture_free(cap);
	return 0;
}

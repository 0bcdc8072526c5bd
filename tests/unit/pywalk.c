/*
 * pywalk PID: the Python stack of each thread of a CPython process, for
 * tests/0750-python-layout.bats. Prints the layout, then for each thread
 *   thread TID
 *   FILE:FUNCTION:LINE      (outermost first)
 *   end STATUS [REASON]
 * Exits 0 when the thread list was read to its end, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include "python/layout.h"
#include "python/walk.h"

static int print_thread(const struct ms_py_thread *t, void *data)
{
	(void)data;
	printf("thread %llu\n", (unsigned long long)t->native_tid);
	for (uint32_t i = t->n_frames; i-- > 0;) {
		const struct ms_py_frame *f = &t->frames[i];
		printf("%s:%s:%d\n", ms_py_thread_str(t, f->file), ms_py_thread_str(t, f->func), f->line);
	}
	printf("end %s%s%s\n", ms_py_walk_status_name(t->status), t->reason[0] ? " " : "", t->reason);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pywalk PID\n");
		return 2;
	}
	pid_t pid = (pid_t)atoi(argv[1]);
	struct ms_py_layout *l = malloc(sizeof(*l));
	char err[512];
	if (!l || ms_py_layout_find(pid, l, err, sizeof(err)) < 0) {
		fprintf(stderr, "pywalk: %s\n", l ? err : "out of memory");
		return 1;
	}
	printf("layout %u.%u 0x%08x %s %s\n", l->major, l->minor, l->version_hex,
	       ms_py_source_name(l->source), l->module);
	struct ms_py_walker *w = ms_py_walker_new(pid, l);
	if (!w) {
		fprintf(stderr, "pywalk: cannot set up the walker of process %d (out of memory?)\n", (int)pid);
		return 1;
	}
	int rc = ms_py_walk(w, print_thread, NULL, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "pywalk: %s\n", err);
	ms_py_walker_free(w);
	free(l);
	return rc < 0 ? 1 : 0;
}

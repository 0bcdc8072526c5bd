/*
 * Where threads waited: each selected complete off-CPU interval reduced to
 * its wait site (the system call its switch-out stack entered the kernel
 * by, the user function that made it and that one's caller), the sites
 * summed and ordered by time. The kernel's frames of a switch-out are
 * alike (schedule, __schedule): what tells waits apart is where user code
 * left for the kernel.
 */
#include "analysis/waits.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/intervals.h"
#include "capture/weight.h"
#include "stream/records.h"
#include "util/error.h"

/* Kernel entry points of system calls, by architecture and build: __x64_sys_read. */
static const char *const syscall_prefixes[] = {
	"__x64_sys_", "__ia32_sys_", "__arm64_sys_", "__se_sys_", "__do_sys_", "ksys_", "sys_",
};

uint32_t ms_wait_syscall_name(const char *name)
{
	for (size_t i = 0; i < sizeof(syscall_prefixes) / sizeof(syscall_prefixes[0]); i++) {
		size_t n = strlen(syscall_prefixes[i]);

		if (!strncmp(name, syscall_prefixes[i], n) && name[n])
			return (uint32_t)n;
	}
	return 0;
}

static bool kernel_frame(const struct ms_capture *cap, const struct ms_cap_frame *fr)
{
	return (fr->flags & MS_FRAME_KERNEL) ||
	       (fr->module != MS_NONE && cap->modules[fr->module].kind == MS_MODULE_KERNEL);
}

/* The module of node's frame (MS_NONE when none). */
static uint32_t node_module(const struct ms_capture *cap, uint32_t node)
{
	return cap->frames[cap->stacks[node].frame].module;
}

/*
 * The site of the stack whose innermost node is node: the system call
 * (the outermost kernel frame named like one's entry: a thread preempted
 * in user code or on its way back from a call has none), the innermost
 * user function, and the first
 * function outside that one's module that led to it (where the program's
 * code called into the library that waited; its direct caller when the
 * whole stack is one module).
 */
static void site_of(const struct ms_select *s, uint32_t node, struct ms_wait_site *w)
{
	const struct ms_capture *cap = s->cap;
	uint32_t caller = MS_NONE, module = MS_NONE;

	w->syscall = MS_NONE;
	w->key[0] = w->key[1] = MS_NONE;
	/* (a node past the table, in a capture made by hand, is no stack) */
	for (; node < cap->n_stacks; node = cap->stacks[node].parent) {
		const struct ms_cap_frame *fr = &cap->frames[cap->stacks[node].frame];
		const uint32_t *keys;
		uint32_t n;

		if (kernel_frame(cap, fr)) {
			/* the outermost: the call's entry, not a helper it went through */
			if (fr->name && ms_wait_syscall_name(cap->strings[fr->name]))
				w->syscall = fr->name;
			continue;
		}
		keys = ms_select_node_keys(s, node, &n);
		/* a frame's keys are outermost first: the innermost function is the last */
		while (n-- > 0) {
			if (w->key[0] == MS_NONE) {
				w->key[0] = keys[n];
				module = node_module(cap, node);
			} else if (keys[n] != w->key[0] && caller == MS_NONE) {
				caller = keys[n];
			}
			if (w->key[0] != keys[n] && node_module(cap, node) != module) {
				w->key[1] = keys[n];
				break;
			}
		}
		if (w->key[1] != MS_NONE)
			break;
	}
	if (w->key[1] == MS_NONE)
		w->key[1] = caller;
}

static int cmp_key(const void *pa, const void *pb)
{
	const struct ms_wait_site *a = pa, *b = pb;

	if (a->cause != b->cause)
		return a->cause < b->cause ? -1 : 1;
	if (a->syscall != b->syscall)
		return a->syscall < b->syscall ? -1 : 1;
	if (a->key[0] != b->key[0])
		return a->key[0] < b->key[0] ? -1 : 1;
	return a->key[1] < b->key[1] ? -1 : a->key[1] > b->key[1];
}

static int cmp_time(const void *pa, const void *pb, void *data)
{
	const struct ms_wait_site *a = pa, *b = pb;
	const struct ms_keys *k = data;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->intervals != b->intervals)
		return a->intervals > b->intervals ? -1 : 1;
	if (a->cause != b->cause)
		return a->cause < b->cause ? -1 : 1;
	/* ties by what the keys say, not their numbers: the same order run to run */
	for (int i = 0; i < 2; i++) {
		int c;

		if (a->key[i] == b->key[i])
			continue;
		if (a->key[i] == MS_NONE || b->key[i] == MS_NONE)
			return a->key[i] == MS_NONE ? 1 : -1;
		if ((c = ms_key_cmp(k, a->key[i], b->key[i])))
			return c;
	}
	return cmp_key(pa, pb);
}

int ms_wait_sites(const struct ms_select *s, struct ms_wait_site **out, uint32_t *n_out)
{
	const struct ms_capture *cap = s->cap;
	struct ms_wait_site *w;
	uint32_t n = 0, m = 0;

	*out = NULL;
	*n_out = 0;
	if (!cap->n_intervals)
		return 0;
	w = malloc(cap->n_intervals * sizeof(*w));
	if (!w)
		return ms_error("out of memory for the wait sites of %u intervals", cap->n_intervals);
	for (uint32_t i = 0; i < cap->n_intervals; i++) {
		const struct ms_cap_interval *iv = &cap->intervals[i];
		uint64_t weight;
		uint32_t cls;

		if (!ms_select_interval(s, i, &weight, &cls))
			continue;
		site_of(s, iv->stack, &w[n]);
		w[n].cause = ms_interval_cause(cap, iv);
		w[n].ns = weight;
		w[n].intervals = 1;
		n++;
	}
	if (n) {
		qsort(w, n, sizeof(*w), cmp_key);
		for (uint32_t i = 1; i < n; i++) {
			if (!cmp_key(&w[m], &w[i])) {
				w[m].ns = ms_weight_add(w[m].ns, w[i].ns);
				w[m].intervals++;
			} else {
				w[++m] = w[i];
			}
		}
		m++;
		qsort_r(w, m, sizeof(*w), cmp_time, (void *)&s->keys);
	}
	*out = w;
	*n_out = m;
	return 0;
}

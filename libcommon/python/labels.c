/* The GIL's runs per thread, as label spans (python/labels.h). */
#include "config.h"

#include "python/labels.h"

#include <stdlib.h>
#include <string.h>

#include "bpf/sampler.h"
#include "util/error.h"
#include "util/hashindex.h"

/* Twice the bound: linear probing stays short at half full. */
#define SLOTS (2 * MS_PY_LABELS_THREADS_MAX)

struct run {
	bool used;
	uint32_t pid, tid;
	uint32_t gil;		/* MS_BPF_PY_GIL_HELD or _RELEASED */
	uint64_t start, end, samples;
};

struct ms_py_labels {
	struct run *slot;	/* SLOTS, NULL until the first value */
	uint32_t open;		/* runs open */
	uint32_t ending, n_ending;	/* ms_py_labels_next_open(): runs compacted and sorted */
	bool ended;
	struct ms_py_labels_stats stats;
};

struct ms_py_labels *ms_py_labels_new(void)
{
	struct ms_py_labels *l = calloc(1, sizeof(*l));

	if (!l)
		ms_error("out of memory");
	return l;
}

void ms_py_labels_free(struct ms_py_labels *l)
{
	if (!l)
		return;
	free(l->slot);
	free(l);
}

const struct ms_py_labels_stats *ms_py_labels_stats(const struct ms_py_labels *l)
{
	return &l->stats;
}

static uint32_t home(uint32_t pid, uint32_t tid)
{
	return ms_hash_u64((uint64_t)pid << 32 | tid) & (SLOTS - 1);
}

/* The slot of (pid, tid), or the empty slot where it would go. */
static uint32_t find(const struct ms_py_labels *l, uint32_t pid, uint32_t tid)
{
	uint32_t i = home(pid, tid);

	while (l->slot[i].used && (l->slot[i].pid != pid || l->slot[i].tid != tid))
		i = (i + 1) & (SLOTS - 1);
	return i;
}

/* Empty slot i, moving later entries of its probe chain back (no tombstones). */
static void remove_at(struct ms_py_labels *l, uint32_t i)
{
	uint32_t j = i;

	l->slot[i].used = false;
	l->open--;
	for (;;) {
		uint32_t h;

		j = (j + 1) & (SLOTS - 1);
		if (!l->slot[j].used)
			return;
		h = home(l->slot[j].pid, l->slot[j].tid);
		/* j may move to i when its home is not in (i, j] cyclically */
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			l->slot[i] = l->slot[j];
			l->slot[j].used = false;
			i = j;
		}
	}
}

/* The span of run r. */
static void span_of(const struct run *r, struct ms_label_span *out)
{
	static const char key[] = "gil", held[] = "held", released[] = "released";

	memset(out, 0, sizeof(*out));
	out->pid = r->pid;
	out->tid = r->tid;
	out->start = r->start;
	out->end = r->end;
	out->samples = r->samples;
	out->key = (struct ms_str){ key, sizeof(key) - 1 };
	out->value = r->gil == MS_BPF_PY_GIL_HELD ?
		     (struct ms_str){ held, sizeof(held) - 1 } :
		     (struct ms_str){ released, sizeof(released) - 1 };
}

/*
 * A value of (pid, tid) at time. snapshot: a run that ends another starts
 * 1 ns after its end (a snapshot's value holds since the one before),
 * else at time.
 */
static int add_value(struct ms_py_labels *l, uint32_t pid, uint32_t tid, uint64_t time,
		     uint32_t gil, bool snapshot, struct ms_label_span *out)
{
	bool value = gil == MS_BPF_PY_GIL_HELD || gil == MS_BPF_PY_GIL_RELEASED;
	uint64_t start = time;
	struct run *r;
	uint32_t i;
	int ended = 0;

	if (l->ended)
		return ms_error("internal error: a sample after the GIL runs ended");
	if (!l->slot) {
		if (!value)
			return 0;	/* nothing open: no Python yet */
		if (!(l->slot = calloc(SLOTS, sizeof(*l->slot))))
			return ms_error("out of memory keeping the GIL runs of %u threads",
					MS_PY_LABELS_THREADS_MAX);
	}
	if (!value && !l->open)
		return 0;
	i = find(l, pid, tid);
	r = &l->slot[i];
	if (r->used) {
		/* the run goes on (a time out of order stays inside it) */
		if (value && r->gil == gil) {
			r->end = time > r->end ? time : r->end;
			r->samples++;
			return 0;
		}
		span_of(r, out);
		l->stats.spans++;
		ended = 1;
		if (!value) {
			remove_at(l, i);
			return 1;
		}
		if (snapshot) {
			/* (a time out of order is moved after the run before: no overlap) */
			start = r->end + 1;
			time = time > start ? time : start;
		}
	} else if (!value) {
		return 0;
	} else if (l->open == MS_PY_LABELS_THREADS_MAX) {
		l->stats.threads_full++;
		return 0;
	} else {
		r->used = true;
		r->pid = pid;
		r->tid = tid;
		l->open++;
	}
	r->gil = gil;
	r->start = start;
	r->end = time;
	r->samples = 1;
	return ended;
}

int ms_py_labels_sample(struct ms_py_labels *l, uint32_t pid, uint32_t tid, uint64_t time,
			uint32_t gil, struct ms_label_span *out)
{
	return add_value(l, pid, tid, time, gil, false, out);
}

int ms_py_labels_snapshot(struct ms_py_labels *l, uint32_t pid, uint32_t tid, uint64_t time,
			  uint32_t gil, struct ms_label_span *out)
{
	return add_value(l, pid, tid, time, gil, true, out);
}

int ms_py_labels_exit(struct ms_py_labels *l, uint32_t pid, uint32_t tid,
		      struct ms_label_span *out)
{
	uint32_t i;

	if (!l->slot || !l->open || l->ended)
		return 0;
	i = find(l, pid, tid);
	if (!l->slot[i].used)
		return 0;
	span_of(&l->slot[i], out);
	l->stats.spans++;
	remove_at(l, i);
	return 1;
}

static int cmp_runs(const void *x, const void *y)
{
	const struct run *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int ms_py_labels_next_open(struct ms_py_labels *l, struct ms_label_span *out)
{
	if (!l->slot)
		return 0;
	if (!l->ended) {
		uint32_t i, n = 0;

		for (i = 0; i < SLOTS; i++)
			if (l->slot[i].used)
				l->slot[n++] = l->slot[i];
		qsort(l->slot, n, sizeof(*l->slot), cmp_runs);
		l->ended = true;
		l->ending = 0;
		l->n_ending = n;
		l->open = 0;
	}
	if (l->ending == l->n_ending)
		return 0;
	span_of(&l->slot[l->ending++], out);
	l->stats.spans++;
	return 1;
}

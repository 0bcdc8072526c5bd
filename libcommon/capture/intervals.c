/* Off-CPU pairing: see intervals.h for the rules. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture/intervals.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/hashindex.h"

enum state {
	UNSEEN,
	RUNNING,
	OFF,
	UNCERTAIN_OFF,
	UNCERTAIN_RUNNING,
	GONE,
};

struct thread {
	uint32_t pid, tid;
	uint8_t state;		/* enum state */
	bool born;		/* a fork of it was seen */
	uint32_t heap_at;	/* its place in the heap while OFF, else MS_NONE */
	uint32_t run_at;	/* its place in running while RUNNING, else MS_NONE */
	/* the open interval, while OFF */
	uint64_t start;
	uint32_t cpu, stack, stack_end;
	uint32_t state_cause;	/* the off_cpu record's cause (with MS_EVIDENCE_STATE) */
	struct ms_cap_evidence ev;
};

struct ms_pairing {
	struct ms_pairing_sink sink;
	bool failed;
	bool lost_any;		/* some loss came before */
	struct thread *threads;
	uint32_t n_threads, alloc_threads;
	struct ms_index ix;
	/* OFF threads, a min-heap by the start of their open interval */
	uint32_t *heap;
	uint32_t n_heap, alloc_heap;
	/* RUNNING threads, in no order */
	uint32_t *running;
	uint32_t n_running, alloc_running;
};

static const char *const problem_codes[MS_PAIRING_PROBLEM_COUNT] = {
	[MS_PAIRING_SWITCH_IN_UNPAIRED] = "switch-in-unpaired",
	[MS_PAIRING_ENDS_BEFORE_START] = "interval-ends-before-start",
	[MS_PAIRING_TIME_ZERO] = "interval-time-zero",
};

const char *ms_pairing_problem_code(enum ms_pairing_problem p)
{
	return (unsigned)p < MS_PAIRING_PROBLEM_COUNT ? problem_codes[p] : "unknown";
}

struct ms_pairing *ms_pairing_new(const struct ms_pairing_sink *sink)
{
	struct ms_pairing *p = calloc(1, sizeof(*p));

	if (!p) {
		ms_error("cannot pair off-CPU records: out of memory");
		return NULL;
	}
	p->sink = *sink;
	return p;
}

void ms_pairing_free(struct ms_pairing *p)
{
	if (!p)
		return;
	free(p->threads);
	ms_index_release(&p->ix);
	free(p->heap);
	free(p->running);
	free(p);
}

/* Room for row n of a table of threads (or of thread ids); 0, or -1 after a message. */
static int grow(void *arr, uint32_t *alloc, uint32_t n, size_t size)
{
	if (n < *alloc)
		return 0;
	if (n >= UINT32_MAX - 1 || !ms_reserve(arr, alloc, (uint64_t)n + 1, size))
		return ms_error("cannot pair off-CPU records: out of memory at %u threads", n);
	return 0;
}
#define GROW(arr, n, alloc) grow(&(arr), &(alloc), (n), sizeof(*(arr)))

static int fail(struct ms_pairing *p)
{
	p->failed = true;
	return -1;
}

/* ---- the threads ---- */

static bool thread_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_pairing *p = ctx;
	const uint32_t *k = key;

	return p->threads[e].pid == k[0] && p->threads[e].tid == k[1];
}

/* The thread (pid, tid), UNSEEN when new; MS_NONE after a message. */
static uint32_t thread_of(struct ms_pairing *p, uint32_t pid, uint32_t tid)
{
	uint32_t k[2] = { pid, tid }, h = ms_hash_u64((uint64_t)pid << 32 | tid), e;
	struct thread *t;

	e = ms_index_find(&p->ix, h, thread_eq, p, k);
	if (e != MS_INDEX_EMPTY)
		return e;
	if (GROW(p->threads, p->n_threads, p->alloc_threads) < 0)
		return MS_NONE;
	e = p->n_threads;
	t = &p->threads[e];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->state = UNSEEN;
	t->heap_at = t->run_at = MS_NONE;
	if (ms_index_add(&p->ix, h, e) < 0) {
		ms_error("cannot pair off-CPU records: out of memory");
		return MS_NONE;
	}
	p->n_threads++;
	return e;
}

/* ---- the heap of OFF threads by start ---- */

static bool heap_less(const struct ms_pairing *p, uint32_t a, uint32_t b)
{
	const struct thread *x = &p->threads[p->heap[a]], *y = &p->threads[p->heap[b]];

	return x->start != y->start ? x->start < y->start : p->heap[a] < p->heap[b];
}

static void heap_swap(struct ms_pairing *p, uint32_t a, uint32_t b)
{
	uint32_t t = p->heap[a];

	p->heap[a] = p->heap[b];
	p->heap[b] = t;
	p->threads[p->heap[a]].heap_at = a;
	p->threads[p->heap[b]].heap_at = b;
}

static void heap_up(struct ms_pairing *p, uint32_t i)
{
	while (i && heap_less(p, i, (i - 1) / 2)) {
		heap_swap(p, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(struct ms_pairing *p, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < p->n_heap && heap_less(p, l, m))
			m = l;
		if (r < p->n_heap && heap_less(p, r, m))
			m = r;
		if (m == i)
			return;
		heap_swap(p, i, m);
		i = m;
	}
}

static void heap_remove(struct ms_pairing *p, uint32_t t)
{
	uint32_t i = p->threads[t].heap_at, last = --p->n_heap;

	p->threads[t].heap_at = MS_NONE;
	if (i == last)
		return;
	p->heap[i] = p->heap[last];
	p->threads[p->heap[i]].heap_at = i;
	heap_up(p, i);
	heap_down(p, p->threads[p->heap[i]].heap_at);
}

/* ---- states ---- */

/* Move thread t to state s, keeping the heap and the running list. */
static int set_state(struct ms_pairing *p, uint32_t t, enum state s)
{
	struct thread *th = &p->threads[t];

	if (th->heap_at != MS_NONE)
		heap_remove(p, t);
	if (th->run_at != MS_NONE) {
		uint32_t i = th->run_at, moved = p->running[--p->n_running];

		p->running[i] = moved;
		p->threads[moved].run_at = i;
		th->run_at = MS_NONE;
	}
	th->state = s;
	if (s == OFF) {
		if (GROW(p->heap, p->n_heap, p->alloc_heap) < 0)
			return -1;
		th = &p->threads[t];
		th->heap_at = p->n_heap;
		p->heap[p->n_heap++] = t;
		heap_up(p, th->heap_at);
	} else if (s == RUNNING) {
		if (GROW(p->running, p->n_running, p->alloc_running) < 0)
			return -1;
		th = &p->threads[t];
		th->run_at = p->n_running;
		p->running[p->n_running++] = t;
	}
	return 0;
}

/* The cause the evidence gives (intervals.h). */
static uint32_t cause_of(const struct thread *th, const struct ms_cap_evidence *ev)
{
	if (ev->sources & MS_EVIDENCE_STATE)
		return th->state_cause < MS_CAUSE_COUNT ? th->state_cause : MS_CAUSE_UNKNOWN;
	if (ev->sources & MS_EVIDENCE_SWITCH)
		return ev->preempt ? MS_CAUSE_PREEMPTED : MS_CAUSE_UNKNOWN;
	return MS_CAUSE_UNKNOWN;
}

static int problem(struct ms_pairing *p, enum ms_pairing_problem code, const struct thread *th,
		   uint64_t time)
{
	if (p->sink.problem)
		p->sink.problem(p->sink.ctx, code, th->pid, th->tid, time);
	return 0;
}

/*
 * End an interval of thread t. With a start (missing is COMPLETE or an end
 * is missing) it is t's open one, ending at end; without, it has only its
 * end. Times that cannot be are a problem instead.
 */
static int emit(struct ms_pairing *p, uint32_t t, uint32_t missing, uint64_t end)
{
	const struct thread *th = &p->threads[t];
	bool has_start = missing != MS_INTERVAL_BEGAN_INSIDE && missing != MS_INTERVAL_LOST_START;
	struct ms_pairing_interval iv;

	memset(&iv, 0, sizeof(iv));
	iv.pid = th->pid;
	iv.tid = th->tid;
	iv.missing = missing;
	iv.end = end;
	iv.cpu = iv.stack = MS_NONE;
	iv.stack_end = MS_END_UNKNOWN;
	if (has_start) {
		iv.start = th->start;
		iv.cpu = th->cpu;
		iv.stack = th->stack;
		iv.stack_end = th->stack_end;
		iv.evidence = th->ev;
	}
	iv.evidence.cause = cause_of(th, &iv.evidence);
	if ((has_start && !iv.start) || (missing != MS_INTERVAL_ENDED_INSIDE &&
					 missing != MS_INTERVAL_LOST_END && !iv.end))
		return problem(p, MS_PAIRING_TIME_ZERO, th, has_start ? iv.start : iv.end);
	if (missing == MS_INTERVAL_COMPLETE && iv.end < iv.start)
		return problem(p, MS_PAIRING_ENDS_BEFORE_START, th, iv.end);
	if (p->sink.interval(p->sink.ctx, &iv) < 0)
		return fail(p);
	return 0;
}

/* Open an interval of t at start, leaving whatever it was in. */
static int open_interval(struct ms_pairing *p, uint32_t t, uint64_t start, uint32_t cpu,
			 uint32_t stack, uint32_t stack_end)
{
	struct thread *th = &p->threads[t];

	th->start = start;
	th->cpu = cpu;
	th->stack = stack;
	th->stack_end = stack_end;
	th->state_cause = MS_CAUSE_UNKNOWN;
	memset(&th->ev, 0, sizeof(th->ev));
	return set_state(p, t, OFF);
}

/* ---- the facts ---- */

int ms_pairing_off_cpu(struct ms_pairing *p, const struct ms_off_cpu *o, uint32_t stack,
		       uint32_t stack_end)
{
	uint32_t t;
	struct thread *th;

	if (p->failed)
		return -1;
	t = thread_of(p, o->pid, o->tid);
	if (t == MS_NONE)
		return fail(p);
	if (p->threads[t].state == OFF && emit(p, t, MS_INTERVAL_LOST_END, 0) < 0)
		return -1;
	if (open_interval(p, t, o->time, o->cpu, stack, stack_end) < 0)
		return fail(p);
	th = &p->threads[t];
	th->ev.sources = MS_EVIDENCE_STATE;
	th->ev.state = o->state;
	th->state_cause = o->cause;
	return 0;
}

int ms_pairing_switch(struct ms_pairing *p, const struct ms_switch *s)
{
	uint32_t t;
	struct thread *th;

	if (p->failed)
		return -1;
	t = thread_of(p, s->pid, s->tid);
	if (t == MS_NONE)
		return fail(p);
	th = &p->threads[t];
	if (s->out) {
		if (th->state == OFF && !(th->ev.sources & MS_EVIDENCE_SWITCH)) {
			/* the switch whose sched_switch sample opened the interval */
			th->ev.sources |= MS_EVIDENCE_SWITCH;
			th->ev.preempt = s->preempt;
			return 0;
		}
		if (th->state == OFF && emit(p, t, MS_INTERVAL_LOST_END, 0) < 0)
			return -1;
		if (open_interval(p, t, s->time, s->cpu, MS_NONE, MS_END_UNKNOWN) < 0)
			return fail(p);
		th = &p->threads[t];
		th->ev.sources = MS_EVIDENCE_SWITCH;
		th->ev.preempt = s->preempt;
		return 0;
	}
	switch ((enum state)th->state) {
	case OFF:
		if (emit(p, t, MS_INTERVAL_COMPLETE, s->time) < 0)
			return -1;
		break;
	case UNSEEN:
		if (!th->born && emit(p, t, MS_INTERVAL_BEGAN_INSIDE, s->time) < 0)
			return -1;
		break;
	case RUNNING:
	case GONE:
		/* its switch-out may be among records lost before */
		if (!p->lost_any)
			problem(p, MS_PAIRING_SWITCH_IN_UNPAIRED, th, s->time);
		else if (emit(p, t, MS_INTERVAL_LOST_START, s->time) < 0)
			return -1;
		break;
	case UNCERTAIN_RUNNING:
		if (emit(p, t, MS_INTERVAL_LOST_START, s->time) < 0)
			return -1;
		break;
	case UNCERTAIN_OFF:
		break;
	}
	return set_state(p, t, RUNNING) < 0 ? fail(p) : 0;
}

int ms_pairing_fork(struct ms_pairing *p, uint32_t pid, uint32_t tid)
{
	uint32_t t;

	if (p->failed)
		return -1;
	t = thread_of(p, pid, tid);
	if (t == MS_NONE)
		return fail(p);
	/* A new thread has no interval: an open one is another's of that id. */
	if (p->threads[t].state == OFF && emit(p, t, MS_INTERVAL_LOST_END, 0) < 0)
		return -1;
	if (set_state(p, t, UNSEEN) < 0)
		return fail(p);
	p->threads[t].born = true;
	return 0;
}

int ms_pairing_exit(struct ms_pairing *p, uint32_t pid, uint32_t tid)
{
	uint32_t t;

	if (p->failed)
		return -1;
	t = thread_of(p, pid, tid);
	if (t == MS_NONE)
		return fail(p);
	/* A thread exits running: its switch-in was lost. */
	if (p->threads[t].state == OFF && emit(p, t, MS_INTERVAL_LOST_END, 0) < 0)
		return -1;
	return set_state(p, t, GONE) < 0 ? fail(p) : 0;
}

int ms_pairing_lost(struct ms_pairing *p, uint64_t time)
{
	if (p->failed)
		return -1;
	p->lost_any = true;
	/* OFF threads that started before the loss, earliest first; 0: all of them. */
	while (p->n_heap && (!time || p->threads[p->heap[0]].start < time)) {
		uint32_t t = p->heap[0];

		if (emit(p, t, MS_INTERVAL_LOST_END, 0) < 0)
			return -1;
		if (set_state(p, t, UNCERTAIN_OFF) < 0)
			return fail(p);
	}
	while (p->n_running)
		if (set_state(p, p->running[p->n_running - 1], UNCERTAIN_RUNNING) < 0)
			return fail(p);
	return 0;
}

int ms_pairing_end(struct ms_pairing *p)
{
	if (p->failed)
		return -1;
	while (p->n_heap) {
		uint32_t t = p->heap[0];

		if (emit(p, t, MS_INTERVAL_ENDED_INSIDE, 0) < 0)
			return -1;
		if (set_state(p, t, GONE) < 0)
			return fail(p);
	}
	return 0;
}

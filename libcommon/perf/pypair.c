/* Pairing the Python walker's records with their samples: see pypair.h. */
#include "perf/pypair.h"
#include "stream/fastpack.h"
#include "util/error.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void ms_py_pair_init(struct ms_py_pair *p, struct ms_problems *problems)
{
	memset(p, 0, sizeof(*p));
	p->problems = problems;
}

void ms_py_pair_release(struct ms_py_pair *p)
{
	for (uint32_t i = 0; i < p->n_rings; i++)
		free(p->rings[i]);
	free(p->rings);
	free(p->ring_of);
	memset(p, 0, sizeof(*p));
}

static struct ms_py_ring *ring_find(const struct ms_py_pair *p, uint32_t cpu)
{
	if (cpu >= MS_PY_PAIR_CPUS || !p->ring_of || !p->ring_of[cpu])
		return NULL;
	return p->rings[p->ring_of[cpu] - 1];
}

/* The table of ring cpu, made on its first record. NULL after a message. */
static struct ms_py_ring *ring_get(struct ms_py_pair *p, uint32_t cpu)
{
	struct ms_py_ring *r = ring_find(p, cpu);

	if (r)
		return r;
	if (!p->ring_of && !(p->ring_of = calloc(MS_PY_PAIR_CPUS, sizeof(*p->ring_of)))) {
		ms_error("out of memory for the table of rings of python walker records");
		return NULL;
	}
	if (p->n_rings == p->rings_alloc) {
		uint32_t n = p->rings_alloc ? 2 * p->rings_alloc : 8;
		struct ms_py_ring **grown = realloc(p->rings, n * sizeof(*grown));

		if (!grown) {
			ms_error("out of memory for %u rings of python walker records", n);
			return NULL;
		}
		p->rings = grown;
		p->rings_alloc = n;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		ms_error("out of memory for the python walker records of cpu %u", cpu);
		return NULL;
	}
	r->cpu = cpu;
	p->rings[p->n_rings++] = r;
	p->ring_of[cpu] = (uint16_t)p->n_rings;
	return r;
}

static void drop(struct ms_py_pair *p, struct ms_py_ring *r, struct ms_py_pending *s)
{
	s->used = false;
	r->n_used--;
	p->n_pending--;
}

static struct ms_py_pending *slot_of(struct ms_py_ring *r, uint32_t tid)
{
	for (uint32_t i = 0; i < MS_PY_PAIR_SLOTS; i++)
		if (r->slots[i].used && r->slots[i].tid == tid)
			return &r->slots[i];
	return NULL;
}

static void unpaired(struct ms_py_pair *p, struct ms_py_ring *r, struct ms_py_pending *s,
		     const char *by)
{
	p->n.unpaired++;
	ms_problems_add(p->problems, "py-record-unpaired",
			"a python walker record of thread %u on cpu %u (time %" PRIu64 ") was "
			"followed by %s of the thread before any sample: its sample was lost, "
			"and its frames with it", s->tid, r->cpu, s->time, by);
	drop(p, r, s);
}

/* A free slot of r for a record of tid, the oldest record made room if none is. */
static struct ms_py_pending *slot_free(struct ms_py_pair *p, struct ms_py_ring *r, uint32_t tid)
{
	struct ms_py_pending *old = NULL;

	for (uint32_t i = 0; i < MS_PY_PAIR_SLOTS; i++) {
		struct ms_py_pending *s = &r->slots[i];

		if (!s->used)
			return s;
		if (!old || s->seq < old->seq)
			old = s;
	}
	p->n.full++;
	ms_problems_add(p->problems, "py-pairing-full",
			"%u python walker records waited for their samples on cpu %u when one "
			"of thread %u came: the oldest (thread %u, time %" PRIu64 ") was "
			"dropped, its frames lost", MS_PY_PAIR_SLOTS, r->cpu, tid, old->tid,
			old->time);
	drop(p, r, old);
	return old;
}

int ms_py_pair_record(struct ms_py_pair *p, uint32_t ring, const struct ms_bpf_record *rec,
		      uint64_t time)
{
	uint32_t tid = rec->h.tid;
	struct ms_py_pending *s;
	struct ms_py_ring *r;

	if (rec->h.kind != MS_BPF_KIND_PYTHON) {
		/* the program ran for another sample: a record still waiting lost its own */
		p->n.bare++;
		r = ring_find(p, ring);
		if (r && r->n_used && (s = slot_of(r, tid)))
			unpaired(p, r, s, "a record of kind sample");
		return 0;
	}
	p->n.records++;
	if (ring >= MS_PY_PAIR_CPUS) {
		p->n.bad_ring++;
		ms_problems_add(p->problems, "py-record-ring",
				"a python walker record of thread %u came from the ring of cpu %u: "
				"rings are CPUs below %u; it was dropped", tid, ring,
				MS_PY_PAIR_CPUS);
		return 0;
	}
	r = ring_get(p, ring);
	if (!r)
		return -1;
	s = slot_of(r, tid);
	if (s)
		unpaired(p, r, s, "another record");
	s = slot_free(p, r, tid);
	s->used = true;
	s->tid = tid;
	s->seq = p->seq++;
	s->time = time;
	s->head = rec->py;
	for (uint32_t i = 0; i < rec->py.n_frames; i++)
		ms_bpf_py_frame_get(rec, i, &s->frames[i]);
	r->n_used++;
	p->n_pending++;
	return 0;
}

const struct ms_py_pending *ms_py_pair_take(struct ms_py_pair *p, uint32_t ring, uint32_t tid)
{
	struct ms_py_ring *r = ring_find(p, ring);
	struct ms_py_pending *s;

	if (!r || !r->n_used || !(s = slot_of(r, tid)))
		return NULL;
	drop(p, r, s);
	p->n.paired++;
	return s;
}

enum why { LOST, EXPIRED, AT_END };

/*
 * Drop the records waiting on r: all of them, or for EXPIRED those the
 * watermark passed by the slack; each counted, with its problem.
 */
static void sweep(struct ms_py_pair *p, struct ms_py_ring *r, enum why why, uint64_t watermark)
{
	for (uint32_t i = 0; i < MS_PY_PAIR_SLOTS && r->n_used; i++) {
		struct ms_py_pending *s = &r->slots[i];

		if (!s->used)
			continue;
		switch (why) {
		case EXPIRED:
			/* the caller made sure that watermark > the slack */
			if (s->time >= watermark - MS_PY_PAIRING_SLACK_NS)
				continue;
			p->n.expired++;
			ms_problems_add(p->problems, "py-record-expired",
					"the sample of a python walker record of thread %u on cpu "
					"%u (time %" PRIu64 ") had not come when the recording "
					"was %" PRIu64 " ns past it: the record was dropped, its "
					"frames lost", s->tid, r->cpu, s->time, watermark - s->time);
			break;
		case LOST:
			p->n.lost++;
			ms_problems_add(p->problems, "py-record-lost",
					"records were lost after a python walker record of thread "
					"%u on cpu %u (time %" PRIu64 "), its sample among them: "
					"its frames were dropped", s->tid, r->cpu, s->time);
			break;
		case AT_END:
			p->n.at_end++;
			ms_problems_add(p->problems, "py-record-at-end",
					"the recording ended between a python walker record of "
					"thread %u on cpu %u (time %" PRIu64 ") and its sample: "
					"its frames were dropped", s->tid, r->cpu, s->time);
			break;
		}
		drop(p, r, s);
	}
}

void ms_py_pair_lost(struct ms_py_pair *p, uint32_t ring)
{
	if (!p->n_pending)
		return;
	for (uint32_t i = 0; i < p->n_rings; i++)
		if (ring == UINT32_MAX || p->rings[i]->cpu == ring)
			sweep(p, p->rings[i], LOST, 0);
}

void ms_py_pair_expire(struct ms_py_pair *p, uint64_t watermark)
{
	if (!p->n_pending || watermark <= MS_PY_PAIRING_SLACK_NS)
		return;
	for (uint32_t i = 0; i < p->n_rings; i++)
		sweep(p, p->rings[i], EXPIRED, watermark);
}

void ms_py_pair_end(struct ms_py_pair *p)
{
	for (uint32_t i = 0; i < p->n_rings && p->n_pending; i++)
		sweep(p, p->rings[i], AT_END, 0);
}

void ms_py_stack_of(const struct ms_py_pending *py, uint32_t pid, uint32_t tid, uint64_t time,
		    uint32_t cpu, struct ms_py_stack *out)
{
	out->pid = pid;
	out->tid = tid;
	out->time = time;
	out->cpu = cpu;
	out->status = py->head.status;
	out->gil = py->head.gil;
	out->tstate = py->head.tstate;
	out->n_words = 4 * py->head.n_frames;
	for (uint32_t i = 0; i < py->head.n_frames; i++) {
		out->words[4 * i] = py->frames[i].code;
		out->words[4 * i + 1] = py->frames[i].stamp;
		out->words[4 * i + 2] = py->frames[i].instr;
		out->words[4 * i + 3] = py->frames[i].flags;
	}
}

_Static_assert(MS_PY_STACK_FRAMES_MAX == MS_BPF_PY_FRAMES_MAX,
	       "a PY_STACK holds every frame a walker record may");

/* [36, pid, tid, time, cpu, status, gil, tstate, [words]]: a 9-array. */
size_t ms_py_stack_bound(const struct ms_py_pending *py)
{
	return 1 + 1 + 5 + 5 + 9 + 5 + 5 + 5 + 9 + 5 + 4 * 9 * (size_t)py->head.n_frames;
}

char *ms_py_stack_fp(char *p, const struct ms_py_pending *py, uint32_t pid, uint32_t tid,
		     uint64_t time, uint32_t cpu)
{
	p = fp_array(p, 9);
	p = fp_uint(p, MS_REC_PY_STACK);
	p = fp_uint(p, pid);
	p = fp_uint(p, tid);
	p = fp_addr(p, time);
	p = fp_uint(p, cpu);
	p = fp_uint(p, py->head.status);
	p = fp_uint(p, py->head.gil);
	p = fp_addr(p, py->head.tstate);
	p = fp_array(p, 4 * py->head.n_frames);
	for (uint32_t i = 0; i < py->head.n_frames; i++) {
		const struct ms_bpf_py_frame *f = &py->frames[i];

		p = fp_addr(p, f->code);
		p = fp_addr(p, f->stamp);
		p = fp_addr(p, f->instr);
		p = fp_uint(p, f->flags);
	}
	return p;
}

/* The JIT recorder's GDB JIT interface part: see recordergdb.h. */
#include "jit/recordergdb.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"
#include "util/grow.h"

/* A JIT_OBJECT record past its chunk: the array, kind, six numbers, the bin header. */
#define OBJECT_FIXED 96

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ms_gdb_shared_init(struct ms_gdb_shared *s)
{
	memset(s, 0, sizeof(*s));
	ms_gdbjit_walk_init(&s->walk);
	return (s->files = ms_gdbjit_files_new()) ? 0 : -1;
}

void ms_gdb_shared_release(struct ms_gdb_shared *s)
{
	ms_gdbjit_files_free(s->files);
	ms_gdbjit_walk_release(&s->walk);
	free(s->list);
	free(s->img);
	free(s->ranges);
	free(s->nent);
	free(s->nobj);
	memset(s, 0, sizeof(*s));
}

void ms_gdb_proc_init(struct ms_gdb_proc *g)
{
	memset(g, 0, sizeof(*g));
	ms_anon_init(&g->cov);
}

void ms_gdb_proc_forget(struct ms_gdb_shared *s, struct ms_gdb_proc *g)
{
	struct ms_anon_set cov = g->cov;

	if (s->owner == g)
		s->owner = NULL;
	s->dropped += g->n_q - g->head;
	for (uint32_t i = 0; i < g->n; i++)
		free(g->obj[i].ranges);
	free(g->ent);
	free(g->obj);
	free(g->q);
	memset(g, 0, sizeof(*g));
	ms_anon_clear(&cov);
	g->cov = cov;
}

void ms_gdb_proc_release(struct ms_gdb_shared *s, struct ms_gdb_proc *g)
{
	ms_gdb_proc_forget(s, g);
	ms_anon_release(&g->cov);
}

/* The code of the objects shipped and not ended, again (after one went). */
static void cov_rebuild(struct ms_gdb_proc *g)
{
	ms_anon_clear(&g->cov);
	for (uint32_t i = 0; i < g->n; i++) {
		const struct ms_gdb_obj *o = &g->obj[i];

		if (!o->read_at || o->ended || o->failed)
			continue;
		for (uint32_t k = 0; k < o->n_ranges; k++)
			ms_anon_map(&g->cov, o->ranges[k].start, o->ranges[k].end, true);
	}
}

bool ms_gdb_on_mmap(struct ms_gdb_proc *g, uint64_t start, uint64_t end, bool file, uint64_t time)
{
	bool ended = false;

	g->mapped_since = true;
	/* A new file may hold a descriptor (a library loaded). */
	if (file)
		g->searched = false;
	if (!ms_anon_overlaps(&g->cov, start, end))
		return false;
	for (uint32_t i = 0; i < g->n; i++) {
		struct ms_gdb_obj *o = &g->obj[i];

		if (!o->read_at || o->ended || time <= o->read_at)
			continue;
		for (uint32_t k = 0; k < o->n_ranges; k++)
			if (o->ranges[k].start < end && start < o->ranges[k].end) {
				o->ended = true;
				ended = true;
				break;
			}
	}
	if (!ended)
		return false;
	/* Its code is another's now: the list is walked again, and names it again if it still lists it. */
	g->replaced = true;
	cov_rebuild(g);
	return true;
}

/* ---- the check ---- */

struct vm {
	pid_t pid;
};

static long vm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct vm *v = ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t got = process_vm_readv(v->pid, &local, 1, &remote, 1, 0);

	if (got >= 0 && (size_t)got != len)
		errno = EFAULT;
	return (long)got;
}

static bool gone_err(int err)
{
	return err == ESRCH;
}

static int queue(struct ms_gdb_proc *g, const struct ms_gdbjit_entry *e, bool unreg)
{
	if (g->head == g->n_q)
		g->head = g->n_q = 0;
	if (MS_GROW(g->q, g->n_q, g->alloc_q) < 0)
		return -1;
	g->q[g->n_q++] = (struct ms_gdb_item){ *e, unreg };
	return 0;
}

/* The diff's callbacks build the new shipped set in s->nent/nobj, in entry order. */
static int push(struct ms_gdb_shared *s, const struct ms_gdbjit_entry *e, const struct ms_gdb_obj *o)
{
	if (MS_GROW(s->nent, s->nn, s->alloc_nent) < 0 || MS_GROW(s->nobj, s->nn, s->alloc_nobj) < 0)
		return -1;
	s->nent[s->nn] = *e;
	s->nobj[s->nn++] = *o;
	return 0;
}

static void diff_gone(void *ctx, const struct ms_gdbjit_entry *e)
{
	struct ms_gdb_shared *s = ctx;
	struct ms_gdb_proc *g = s->diff_proc;
	struct ms_gdb_obj *o = &g->obj[e - g->ent];

	/* Downstream knows only what was shipped. */
	if (o->read_at && !o->failed)
		queue(g, e, true);
	free(o->ranges);
	o->ranges = NULL;
}

static void diff_added(void *ctx, const struct ms_gdbjit_entry *e)
{
	struct ms_gdb_shared *s = ctx;
	struct ms_gdb_obj o = { 0 };

	if (!e->addr || !e->size) {
		o.failed = true;
		ms_problems_add(s->diff_problems, "jit-object-unreadable",
				"pid %u: the GDB JIT entry at %#" PRIx64 " gives an object at %#" PRIx64
				" of %" PRIu64 " bytes: not read", s->diff_pid, e->entry, e->addr, e->size);
	} else if (e->size > MS_JIT_OBJECT_MAX) {
		o.failed = true;
		ms_problems_add(s->diff_problems, "jit-object-too-large",
				"pid %u: the GDB JIT object at %#" PRIx64 " (entry %#" PRIx64 ") has %"
				PRIu64 " bytes, more than %u: not read, its code stays unnamed",
				s->diff_pid, e->addr, e->entry, e->size, MS_JIT_OBJECT_MAX);
	} else {
		queue(s->diff_proc, e, false);
	}
	push(s, e, &o);
}

static void diff_kept(void *ctx, uint32_t i)
{
	struct ms_gdb_shared *s = ctx;
	struct ms_gdb_proc *g = s->diff_proc;
	struct ms_gdb_obj *o = &g->obj[i];

	/* Still listed after a mapping replaced its code: it names the code there now. */
	if (o->ended && !o->failed) {
		free(o->ranges);
		*o = (struct ms_gdb_obj){ 0 };
		queue(g, &g->ent[i], false);
	}
	push(s, &g->ent[i], o);
	o->ranges = NULL;
}

/* Say why a walk of descriptor at stopped, as a problem. */
static void walk_problem(const struct ms_gdbjit_walk *w, uint32_t pid, uint64_t at,
			 struct ms_problems *pr)
{
	switch (w->end) {
	case MS_GDBJIT_WALK_DONE:
		break;
	case MS_GDBJIT_WALK_UNREADABLE:
	case MS_GDBJIT_WALK_MISALIGNED:
		ms_problems_add(pr, "jit-entry-unreadable",
				"pid %u: the GDB JIT entry at %#" PRIx64 " (descriptor %#" PRIx64 ") could "
				"not be read (%s): the list was not read past it", pid, w->end_at, at,
				w->end == MS_GDBJIT_WALK_MISALIGNED ? "misaligned" : strerror(w->err));
		break;
	case MS_GDBJIT_WALK_CYCLE:
		ms_problems_add(pr, "jit-entries-cycle",
				"pid %u: the GDB JIT entries of descriptor %#" PRIx64 " come back to %#"
				PRIx64 ": the list was read up to there", pid, at, w->end_at);
		break;
	case MS_GDBJIT_WALK_MAX_REACHED:
		ms_problems_add(pr, "jit-objects-max",
				"pid %u: the GDB JIT list of descriptor %#" PRIx64 " has more than %u "
				"entries: those past them were not read", pid, at, MS_GDBJIT_WALK_MAX);
		break;
	}
}

static int entry_cmp(const void *a, const void *b)
{
	const struct ms_gdbjit_entry *x = a, *y = b;

	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* Walk every descriptor's list into s->list: whether all were read to their end. */
static bool walk_all(struct ms_gdb_shared *s, struct ms_gdb_proc *g, uint32_t pid,
		     const struct ms_gdbjit_desc *d, const bool *ok, bool unnamed,
		     struct ms_problems *pr)
{
	struct vm v = { (pid_t)pid };
	bool complete = true;
	uint32_t m = 0;

	s->n_list = 0;
	for (uint32_t k = 0; k < g->n_desc; k++) {
		if (!ok[k]) {
			complete = false;
			continue;
		}
		s->walks++;
		if (ms_gdbjit_walk(&s->walk, d[k].first, 0, vm_read, &v) < 0)
			return false;
		if (s->walk.end == MS_GDBJIT_WALK_UNREADABLE && gone_err(s->walk.err)) {
			if (unnamed)
				ms_problems_add(pr, "jit-process-gone",
						"pid %u ended before its GDB JIT objects were read", pid);
			return false;
		}
		walk_problem(&s->walk, pid, g->desc[k], pr);
		complete &= s->walk.end == MS_GDBJIT_WALK_DONE;
		if (!ms_reserve((void **)&s->list, &s->alloc_list, (uint64_t)s->n_list + s->walk.n,
				sizeof(*s->list))) {
			ms_error("out of memory for %u GDB JIT entries", s->n_list + s->walk.n);
			return false;
		}
		memcpy(s->list + s->n_list, s->walk.e, s->walk.n * sizeof(*s->list));
		s->n_list += s->walk.n;
	}
	/* An entry listed by two descriptors is one. */
	qsort(s->list, s->n_list, sizeof(*s->list), entry_cmp);
	for (uint32_t i = 0; i < s->n_list; i++)
		if (!m || s->list[i].entry != s->list[m - 1].entry)
			s->list[m++] = s->list[i];
	s->n_list = m;
	return complete;
}

bool ms_gdb_check(struct ms_gdb_shared *s, struct ms_gdb_proc *g, uint32_t pid,
		  uint64_t sample_time, bool unnamed, struct ms_problems *pr)
{
	uint8_t b[MS_GDBJIT_DESCS_MAX][MS_GDBJIT_DESC_SIZE];
	struct ms_gdbjit_desc d[MS_GDBJIT_DESCS_MAX];
	bool ok[MS_GDBJIT_DESCS_MAX], changed, complete;
	struct vm v = { (pid_t)pid };
	uint32_t queued = g->n_q - g->head;

	s->checks++;
	if (!ms_jit_read_due(&g->th, sample_time, g->mapped_since)) {
		s->throttled++;
		return false;
	}
	g->mapped_since = false;
	if (!g->searched) {
		struct ms_gdbjit_found f;

		s->searches++;
		if (ms_gdbjit_search(s->files, (pid_t)pid, &f) < 0) {
			if (gone_err(errno) && unnamed)
				ms_problems_add(pr, "jit-process-gone",
						"pid %u ended before its files were searched for "
						"__jit_debug_descriptor", pid);
			ms_jit_read_done(&g->th, sample_time, false);
			return false;
		}
		s->files_opened += f.opened;
		if (f.unproved)
			ms_problems_add(pr, "jit-module-unproved",
					"pid %u: %u mapped files (the first %s) could not be opened as the "
					"file mapped, so not searched for __jit_debug_descriptor", pid,
					f.unproved, f.unproved_path);
		if (f.over)
			ms_problems_add(pr, "jit-descriptors-max",
					"pid %u: its files define __jit_debug_descriptor more than %u "
					"times: the others are not read", pid, MS_GDBJIT_DESCS_MAX);
		g->searched = true;
		/* New descriptors: their lists are walked. */
		if (f.n != g->n_desc || memcmp(f.addr, g->desc, f.n * sizeof(*f.addr)))
			g->walked = false;
		g->n_desc = f.n;
		memcpy(g->desc, f.addr, sizeof(g->desc));
	}
	if (!g->n_desc) {
		ms_jit_read_done(&g->th, sample_time, false);
		return false;
	}
	changed = !g->walked || g->replaced;
	for (uint32_t k = 0; k < g->n_desc; k++) {
		s->desc_reads++;
		ok[k] = false;
		if (vm_read(&v, g->desc[k], b[k], MS_GDBJIT_DESC_SIZE) != MS_GDBJIT_DESC_SIZE) {
			if (gone_err(errno)) {
				if (unnamed)
					ms_problems_add(pr, "jit-process-gone",
							"pid %u ended before its __jit_debug_descriptor "
							"at %#" PRIx64 " was read", pid, g->desc[k]);
				ms_jit_read_done(&g->th, sample_time, false);
				return false;
			}
			ms_problems_add(pr, "jit-descriptor-unreadable",
					"pid %u: __jit_debug_descriptor at %#" PRIx64 " could not be read "
					"(%s): its JIT objects were not read", pid, g->desc[k],
					strerror(errno));
			memset(b[k], 0, sizeof(b[k]));
			continue;
		}
		ms_gdbjit_desc_parse(b[k], &d[k]);
		changed |= memcmp(b[k], g->last[k], MS_GDBJIT_DESC_SIZE) != 0;
		if (d[k].version != 1) {
			ms_problems_add(pr, "jit-descriptor-version",
					"pid %u: __jit_debug_descriptor at %#" PRIx64 " has version %u, "
					"not 1: its JIT objects were not read", pid, g->desc[k], d[k].version);
			continue;
		}
		ok[k] = true;
	}
	if (!changed) {
		ms_jit_read_done(&g->th, sample_time, false);
		return false;
	}
	complete = walk_all(s, g, pid, d, ok, unnamed, pr);
	/* The new shipped set, and the queue, from the diff. */
	s->nn = 0;
	s->diff_proc = g;
	s->diff_pid = pid;
	s->diff_problems = pr;
	ms_gdbjit_diff(g->ent, g->n, s->list, s->n_list, complete,
		       &(const struct ms_gdbjit_diff_fns){ diff_gone, diff_added, diff_kept }, s);
	/* Swap in the new set (its ranges were moved over; the gone ones freed). */
	{
		struct ms_gdbjit_entry *te = g->ent;
		struct ms_gdb_obj *to = g->obj;
		uint32_t ae = g->alloc_ent, ao = g->alloc_obj;

		g->ent = s->nent;
		g->obj = s->nobj;
		g->alloc_ent = s->alloc_nent;
		g->alloc_obj = s->alloc_nobj;
		g->n = s->nn;
		s->nent = te;
		s->nobj = to;
		s->alloc_nent = ae;
		s->alloc_nobj = ao;
	}
	memcpy(g->last, b, sizeof(g->last));
	g->walked = true;
	g->replaced = false;
	cov_rebuild(g);
	ms_jit_read_done(&g->th, sample_time, g->n_q - g->head > queued);
	return g->n_q - g->head > queued;
}

/* ---- the writing ---- */

static struct ms_gdb_obj *obj_of(struct ms_gdb_proc *g, uint64_t entry)
{
	uint32_t lo = 0, hi = g->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (g->ent[mid].entry < entry)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->n && g->ent[lo].entry == entry ? &g->obj[lo] : NULL;
}

/*
 * Read q[head]'s image into the shared buffer: true when it is there and
 * sane, false when it failed (its problem counted, the object marked).
 */
static bool image_read(struct ms_gdb_shared *s, struct ms_gdb_proc *g, uint32_t pid,
		       uint64_t mapped_at, struct ms_problems *pr)
{
	const struct ms_gdbjit_entry *e = &g->q[g->head].e;
	struct ms_gdb_obj *o = obj_of(g, e->entry);
	struct vm v = { (pid_t)pid };
	const char *why;
	uint64_t now = mono_ns();
	int n;

	if (!ms_reserve((void **)&s->img, &s->img_alloc, e->size, 1)) {
		ms_error("out of memory for a GDB JIT object of %" PRIu64 " bytes", e->size);
		goto failed;
	}
	if (vm_read(&v, e->addr, s->img, e->size) != (long)e->size) {
		if (gone_err(errno))
			ms_problems_add(pr, "jit-process-gone",
					"pid %u ended before its GDB JIT object at %#" PRIx64 " was read",
					pid, e->addr);
		else
			ms_problems_add(pr, "jit-object-unreadable",
					"pid %u: the GDB JIT object at %#" PRIx64 " (%" PRIu64 " bytes, "
					"entry %#" PRIx64 ") could not be read (%s)", pid, e->addr, e->size,
					e->entry, strerror(errno));
		goto failed;
	}
	if ((why = ms_gdbjit_image_wrong(s->img, e->size))) {
		ms_problems_add(pr, "jit-object-not-elf",
				"pid %u: the GDB JIT object at %#" PRIx64 " (entry %#" PRIx64 ") is not "
				"an x86-64 ELF object: %s", pid, e->addr, e->entry, why);
		goto failed;
	}
	if (o) {
		uint16_t shnum;

		memcpy(&shnum, s->img + 60, sizeof(shnum));	/* e_shnum */
		if (!ms_reserve((void **)&s->ranges, &s->alloc_ranges, shnum ? shnum : 1,
				sizeof(*s->ranges)))
			goto failed;
		n = ms_gdbjit_exec_ranges(s->img, e->size, s->ranges, shnum);
		free(o->ranges);
		o->ranges = NULL;
		o->n_ranges = 0;
		if (n > 0 && (o->ranges = malloc((size_t)n * sizeof(*o->ranges)))) {
			memcpy(o->ranges, s->ranges, (size_t)n * sizeof(*o->ranges));
			o->n_ranges = (uint32_t)n;
		}
	}
	s->owner = g;
	g->inflight = true;
	g->off = 0;
	/* As a JIT_FUNC's: after every mapping of the process seen. */
	g->inflight_time = now > mapped_at ? now : mapped_at + 1;
	return true;
failed:
	if (o)
		o->failed = true;
	return false;
}

enum ms_watch_verdict ms_gdb_flush(struct ms_gdb_shared *s, struct ms_gdb_proc *g, uint32_t pid,
				   uint64_t mapped_at, const struct ms_collect_out *out,
				   bool *cov_changed)
{
	while (g->head < g->n_q) {
		const struct ms_gdb_item *it = &g->q[g->head];
		struct ms_jit_object rec = { .pid = pid, .entry = it->e.entry, .addr = it->e.addr };

		if (it->unreg) {
			if (!out->room(out->ctx, OBJECT_FIXED))
				return MS_WATCH_WAIT;
			rec.time = mono_ns();
			if (rec.time <= mapped_at)
				rec.time = mapped_at + 1;
			if (ms_jit_object_pack(out->w, &rec) < 0)
				return MS_WATCH_ERROR;
			s->unregs++;
			g->head++;
			continue;
		}
		if (!g->inflight) {
			/* Another process's object holds the buffer: it goes first (flush_all). */
			if (s->owner && s->owner != g)
				return MS_WATCH_WAIT;
			/* Nothing is read before the output takes its first chunk. */
			if (!out->room(out->ctx, OBJECT_FIXED + (it->e.size < MS_JIT_OBJECT_CHUNK ?
								 it->e.size : MS_JIT_OBJECT_CHUNK)))
				return MS_WATCH_WAIT;
			if (!image_read(s, g, pid, mapped_at, out->problems)) {
				g->head++;
				continue;
			}
		}
		rec.size = it->e.size;
		rec.time = g->inflight_time;
		while (g->off < it->e.size) {
			uint64_t len = it->e.size - g->off;

			if (len > MS_JIT_OBJECT_CHUNK)
				len = MS_JIT_OBJECT_CHUNK;
			if (!out->room(out->ctx, OBJECT_FIXED + len))
				return MS_WATCH_WAIT;
			rec.offset = g->off;
			rec.chunk = s->img + g->off;
			rec.chunk_len = (uint32_t)len;
			if (ms_jit_object_pack(out->w, &rec) < 0)
				return MS_WATCH_ERROR;
			g->off += len;
		}
		/* All of it out: its code is named from now on. */
		{
			struct ms_gdb_obj *o = obj_of(g, it->e.entry);

			if (o) {
				o->read_at = g->inflight_time;
				for (uint32_t k = 0; k < o->n_ranges; k++)
					ms_anon_map(&g->cov, o->ranges[k].start, o->ranges[k].end, true);
				*cov_changed = true;
			}
		}
		s->objects++;
		s->owner = NULL;
		g->inflight = false;
		g->head++;
	}
	return MS_WATCH_WRITE;
}

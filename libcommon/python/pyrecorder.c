/*
 * The Python recorder's watch: processes, their layouts and the
 * PY_PROCESS records (pyrecorder.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perf/bpfrecord.h"
#include "python/bpflayout.h"
#include "python/pyrecorderint.h"
#include "stream/records.h"
#include "util/error.h"

/* Layouts looked for in one tick: each reads an ELF file, some its DWARF. */
#define FINDS_PER_TICK 4
/*
 * Ticks a live process whose memory did not read is looked at again
 * before it is refused: the loader may not have mapped all of libpython
 * yet when the tick after its first mapping comes (a target descheduled
 * between two mmaps).
 */
#define LOOK_TRIES 5
/* A PY_PROCESS record: its numbers, a path and a reason. */
#define PROCESS_RECORD_MAX (128 + PATH_MAX + sizeof(((struct ms_py_recorder *)0)->err))

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct ms_py_recorder *ms_py_recorder_new(const struct ms_py_sink *sink)
{
	struct ms_py_recorder *r = calloc(1, sizeof(*r));

	if (!r || !(r->info = malloc(sizeof(*r->info)))) {
		free(r);
		ms_error("python recorder: out of memory");
		return NULL;
	}
	if (ms_bpf_py_pidns(getpid(), &r->self_ns_dev, &r->self_ns_ino, r->err, sizeof(r->err)) < 0) {
		ms_error("python recorder: %s", r->err);
		ms_py_recorder_free(r);
		return NULL;
	}
	r->sink = *sink;
	r->codes_max = MS_PYREC_CODES_MAX;
	return r;
}

static void proc_release(struct pyrec_proc *p)
{
	free(p->threads);
	free(p->fresh);
	free(p->nsids);
	free(p->codes);
	memset(p, 0, sizeof(*p));
}

void ms_py_recorder_free(struct ms_py_recorder *r)
{
	if (!r)
		return;
	for (int i = 0; i < MS_PYREC_PROCS_MAX; i++)
		proc_release(&r->procs[i]);
	pyrec_snap_free(r->snap);
	free(r->info);
	free(r);
}

const struct ms_py_recorder_counts *ms_py_recorder_counts(const struct ms_py_recorder *r)
{
	return &r->n;
}

void ms_py_recorder_limit_codes(struct ms_py_recorder *r, uint32_t codes_max)
{
	r->codes_max = codes_max < MS_PYREC_CODES_MAX ? codes_max : MS_PYREC_CODES_MAX;
}

static struct pyrec_proc *proc_of(struct ms_py_recorder *r, uint32_t pid)
{
	struct pyrec_proc *last = &r->procs[r->last_proc];

	if (last->state != PYREC_FREE && last->pid == pid)
		return last;
	for (uint32_t i = 0; i < MS_PYREC_PROCS_MAX; i++)
		if (r->procs[i].state != PYREC_FREE && r->procs[i].pid == pid) {
			r->last_proc = i;
			return &r->procs[i];
		}
	return NULL;
}

struct pyrec_proc *pyrec_layout_of(struct ms_py_recorder *r, uint32_t pid)
{
	struct pyrec_proc *p = proc_of(r, pid);

	return p && p->state == PYREC_LAYOUT ? p : NULL;
}

/* A free slot for pid, or NULL (counted). */
static struct pyrec_proc *proc_new(struct ms_py_recorder *r, uint32_t pid,
				   const struct ms_collect_out *out)
{
	for (int i = 0; i < MS_PYREC_PROCS_MAX; i++)
		if (r->procs[i].state == PYREC_FREE) {
			r->procs[i].pid = pid;
			return &r->procs[i];
		}
	if (out)
		ms_problems_add(out->problems, "python-processes-full",
				"process %u maps a Python interpreter while %d others are "
				"recorded: its Python frames are not walked", pid,
				MS_PYREC_PROCS_MAX);
	return NULL;
}

/* Stop walking p's frames and forget it. */
static void proc_drop(struct ms_py_recorder *r, struct pyrec_proc *p)
{
	if (p->state == PYREC_LAYOUT) {
		pyrec_threads_drop(r, p);
		if (r->sink.drop_layout)
			r->sink.drop_layout(r->sink.arg, p->pid);
	}
	if (r->info_waiting && r->info_pid == p->pid)
		r->info_waiting = false;
	proc_release(p);
}

static bool same_file(const struct pyrec_file *a, const struct pyrec_file *b)
{
	return a->maj == b->maj && a->min == b->min && a->ino == b->ino && a->bid == b->bid;
}

/*
 * A mapping of a file named like an interpreter: look at the next tick,
 * unless the process has (or waits for) a layout, or refused this file.
 */
static void on_mmap(struct ms_py_recorder *r, const struct ms_mmap *m)
{
	const char *path = m->filename.ptr, *base;
	struct pyrec_file f = { .maj = m->maj, .min = m->min, .ino = m->ino };
	struct pyrec_proc *p;

	if (!m->filename.len || path[0] != '/')
		return;
	base = memrchr(path, '/', m->filename.len) + 1;
	if (!ms_py_module_name(base, m->filename.len - (size_t)(base - path)))
		return;
	if (m->build_id_len >= 8)
		memcpy(&f.bid, m->build_id, 8);
	p = proc_of(r, m->pid);
	if (p && (p->state == PYREC_PENDING || p->state == PYREC_LAYOUT ||
		  same_file(&p->file, &f)))
		return;
	/* No watch output here: a full table is said at the tick that cannot look. */
	if (!p && !(p = proc_new(r, m->pid, NULL)))
		return;
	p->state = PYREC_PENDING;
	p->tries = 0;
	p->inherit = false;
	p->file = f;
}

/* A new process: a child of one with a layout gets it (same memory). */
static void on_fork(struct ms_py_recorder *r, const struct ms_task *t)
{
	struct pyrec_proc *parent = proc_of(r, t->ppid), *p;

	if (t->pid == t->ppid || !parent ||
	    (parent->state != PYREC_LAYOUT && parent->state != PYREC_PENDING))
		return;
	if ((p = proc_of(r, t->pid)))
		proc_drop(r, p);	/* a pid reused before its exit was seen */
	if (!(p = proc_new(r, t->pid, NULL)))
		return;
	p->state = PYREC_PENDING;
	p->tries = 0;
	p->file = parent->file;
	p->inherit = parent->state == PYREC_LAYOUT || parent->inherit;
	p->l = parent->l;
}

static void on_record(void *arg, uint32_t kind, const void *rec)
{
	struct ms_py_recorder *r = arg;
	struct pyrec_proc *p;

	switch (kind) {
	case MS_REC_MMAP:
		on_mmap(r, rec);
		break;
	case MS_REC_COMM: {
		const struct ms_comm *c = rec;

		/* An exec: a new program, which maps its own interpreter or none. */
		if (c->exec && (p = proc_of(r, c->pid)))
			proc_drop(r, p);
		break;
	}
	case MS_REC_FORK:
		on_fork(r, rec);
		break;
	case MS_REC_EXIT: {
		const struct ms_task *t = rec;

		if (!(p = proc_of(r, t->pid)))
			break;
		if (t->tid == t->pid)
			proc_drop(r, p);
		else
			p->nsids_stale = true;	/* its id may name another thread soon */
		break;
	}
	default:
		break;
	}
}

static int write_process(struct ms_py_recorder *r, const struct pyrec_proc *p, uint32_t status,
			 const char *reason, const struct ms_collect_out *out)
{
	struct ms_py_process rec = {
		.pid = p->pid,
		.time = mono_ns(),
		.status = status,
		.version_hex = status == MS_PY_PROCESS_OK ? p->l.version_hex : 0,
		.source = status == MS_PY_PROCESS_OK ? (uint32_t)p->l.source : 0,
		.path = { p->l.module, (uint32_t)strnlen(p->l.module, sizeof(p->l.module)) },
		.engine = r->snap ? (struct ms_str){ "snapshot", 8 } : (struct ms_str){ "bpf", 3 },
		.reason = { reason, (uint32_t)strlen(reason) },
	};

	if (status == MS_PY_PROCESS_OK)
		r->n.layouts++;
	else
		r->n.refused++;
	return ms_py_process_pack(out->w, &rec);
}

/* What a refusal of ms_py_layout_find() is: the process could not be read, or not understood. */
static uint32_t refusal(const struct ms_py_recorder *r, uint32_t pid)
{
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return MS_PY_PROCESS_FAILED;
	if (strstr(r->err, "cannot read") || strstr(r->err, "does not start") ||
	    strstr(r->err, "is not the file"))
		return MS_PY_PROCESS_FAILED;
	return MS_PY_PROCESS_UNSUPPORTED;
}

/* Find p's layout and set it in the walker's map: 0, or -1 when the output failed. */
static int look(struct ms_py_recorder *r, struct pyrec_proc *p, const struct ms_collect_out *out)
{
	uint32_t status;

	r->err[0] = '\0';
	if (!p->inherit && ms_py_layout_find((pid_t)p->pid, &p->l, r->err, sizeof(r->err)) < 0) {
		/*
		 * An executable python3.X whose interpreter is a libpython the
		 * loader maps after it: not a finding yet. That mapping looks
		 * again; without one the process runs no CPython to read.
		 */
		if (strstr(r->err, "maps no CPython interpreter")) {
			p->state = PYREC_REFUSED;
			return 0;
		}
		goto refused;
	}
	if (ms_bpf_py_pidns((pid_t)p->pid, &p->pidns_dev, &p->pidns_ino, r->err, sizeof(r->err)) < 0)
		goto refused;
	p->nested = p->pidns_dev != r->self_ns_dev || p->pidns_ino != r->self_ns_ino;
	p->n_nsids = 0;
	p->nsids_stale = true;
	/* The BPF walker's thread map (snapshots read every state each round) */
	if (!r->snap && !p->threads)
		p->threads = malloc(MS_PY_WALK_THREADS * sizeof(*p->threads));
	if (!r->snap && !p->fresh)
		p->fresh = malloc(MS_PY_WALK_THREADS * sizeof(*p->fresh));
	if (!r->snap && (!p->threads || !p->fresh)) {
		snprintf(r->err, sizeof(r->err), "python recorder: out of memory for process %u's threads",
			 p->pid);
		goto refused;
	}
	p->n_threads = 0;
	if (r->sink.set_layout &&
	    r->sink.set_layout(r->sink.arg, p->pid, &p->l, p->pidns_dev, p->pidns_ino) < 0) {
		ms_problems_add(out->problems, "python-map-failed",
				"the BPF walker's map py_layouts refused process %u's layout", p->pid);
		snprintf(r->err, sizeof(r->err),
			 "python recorder: the BPF walker's map refused process %u's layout (see the "
			 "problem python-map-failed)", p->pid);
		goto refused;
	}
	p->state = PYREC_LAYOUT;
	p->inherit = false;
	return write_process(r, p, MS_PY_PROCESS_OK, "", out);
refused:
	status = refusal(r, p->pid);
	if (status == MS_PY_PROCESS_FAILED && kill((pid_t)p->pid, 0) == 0 && ++p->tries < LOOK_TRIES)
		return 0;	/* still PENDING: the next tick looks again */
	p->state = PYREC_REFUSED;
	p->inherit = false;
	return write_process(r, p, status, r->err, out);
}

static int on_tick(void *arg, uint64_t now_ns, const struct ms_collect_out *out)
{
	struct ms_py_recorder *r = arg;
	int finds = 0;

	r->n.ticks++;
	/* Snapshot rounds may come more often: layouts are looked for as with bpf. */
	if (r->snap && now_ns < r->next_look_ns)
		return pyrec_snap_round(r, now_ns, out);
	r->next_look_ns = now_ns + MS_COLLECT_TICK_MS * 1000000ull;
	r->tick_bytes = 0;
	for (int i = 0; i < MS_PYREC_PROCS_MAX && finds < FINDS_PER_TICK; i++) {
		struct pyrec_proc *p = &r->procs[i];

		/* No room for its record: the next tick looks. */
		if (p->state != PYREC_PENDING || !out->room(out->ctx, PROCESS_RECORD_MAX))
			continue;
		finds++;
		if (look(r, p, out) < 0)
			return -1;
	}
	if (r->snap)
		return pyrec_snap_round(r, now_ns, out);
	for (int i = 0; i < MS_PYREC_PROCS_MAX; i++)
		if (r->procs[i].state == PYREC_LAYOUT)
			pyrec_threads_refresh(r, &r->procs[i], out);
	return 0;
}

static enum ms_watch_verdict on_bpf(void *arg, const struct ms_bpf_record *rec,
				    const struct ms_collect_out *out)
{
	if (rec->h.kind != MS_BPF_KIND_PYTHON)
		return MS_WATCH_WRITE;
	return pyrec_codes_name(arg, rec, out);
}

void ms_py_recorder_watch(struct ms_py_recorder *r, struct ms_collect_watch *w)
{
	*w = (struct ms_collect_watch){
		.arg = r,
		.record = on_record,
		.bpf = on_bpf,
		.tick = on_tick,
		.tick_ms = r->snap ? pyrec_snap_interval(r->snap) : 0,
	};
}

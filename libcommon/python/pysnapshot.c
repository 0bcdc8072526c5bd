/*
 * The snapshot engine's rounds (pysnapshot.h): every process with a
 * layout walked light, each thread's codes named and its PY_SNAPSHOT
 * record written, within the round's bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "python/pyrecorderint.h"
#include "python/pysnapshot.h"
#include "util/error.h"

/* A PY_SNAPSHOT record past its reason and frames: its numbers and headers. */
#define SNAPSHOT_RECORD_FIXED 128

struct pyrec_snap {
	uint32_t interval_ms;
	struct ms_py_snap_bounds b;
	struct ms_py_snap_counts n;
	uint64_t round;
	uint32_t first_slot;		/* the process slot a round reads first */
	struct ms_py_walker *w;		/* one for all: made at the first layout */
	struct ms_py_snapshot *rec;
	char why[256];
	char err[512];
};

/* One process's part of a round. */
struct round_ctx {
	struct ms_py_recorder *r;
	struct pyrec_snap *s;
	struct pyrec_proc *p;
	const struct ms_collect_out *out;
	uint64_t now;
	bool reread;			/* its tasks were read in this round */
	uint64_t gil_interp;		/* the interpreter whose GIL was read; 0: none yet */
	bool gil_known, gil_locked;
	uint64_t gil_holder;
	bool failed;			/* writing failed: the recording ends */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct pyrec_snap *pyrec_snap_new(uint32_t interval_ms)
{
	struct pyrec_snap *s = calloc(1, sizeof(*s));

	if (!s || !(s->rec = malloc(sizeof(*s->rec)))) {
		free(s);
		ms_error("python snapshots: out of memory");
		return NULL;
	}
	s->interval_ms = interval_ms;
	ms_py_snap_bounds_init(&s->b, interval_ms);
	return s;
}

void pyrec_snap_free(struct pyrec_snap *s)
{
	if (!s)
		return;
	ms_py_walker_free(s->w);
	free(s->rec);
	free(s);
}

uint32_t pyrec_snap_interval(const struct pyrec_snap *s)
{
	return s->interval_ms;
}

const struct ms_py_snap_counts *ms_py_snapshot_counts(const struct ms_py_recorder *r)
{
	return r->snap ? &r->snap->n : NULL;
}

struct ms_py_recorder *ms_py_snapshot_recorder_new(uint32_t interval_ms)
{
	static const struct ms_py_sink none;
	struct ms_py_recorder *r;
	char self[32];
	ssize_t n;

	if (interval_ms < MS_PY_SNAP_INTERVAL_MIN || interval_ms > MS_PY_SNAP_INTERVAL_MAX) {
		ms_error("internal error: a snapshot interval of %u ms (%d to %d)", interval_ms,
			 MS_PY_SNAP_INTERVAL_MIN, MS_PY_SNAP_INTERVAL_MAX);
		return NULL;
	}
	/*
	 * Processes are read by their pid through /proc: it must be this pid
	 * namespace's (unshare --pid --fork without --mount-proc keeps the
	 * parent's, where the same numbers are other processes).
	 */
	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n > 0)
		self[n] = '\0';
	if (n <= 0 || strtol(self, NULL, 10) != (long)getpid()) {
		ms_error("--python snapshot: /proc is not of ms-collect's pid namespace (/proc/self "
			 "is '%s', ms-collect is process %d): it would read other processes; "
			 "mount a proc of this namespace (unshare --pid --fork --mount-proc) or "
			 "run ms-collect outside it", n > 0 ? self : "unreadable", (int)getpid());
		return NULL;
	}
	if (!(r = ms_py_recorder_new(&none)))
		return NULL;
	if (!(r->snap = pyrec_snap_new(interval_ms))) {
		ms_py_recorder_free(r);
		return NULL;
	}
	return r;
}

/* Whether process pid has ended (gone, or a zombie: no memory left to read). */
static bool proc_ended(uint32_t pid)
{
	char path[64], buf[512];
	const char *paren;
	ssize_t got;
	int fd;

	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return false;
	buf[got] = '\0';
	/* "PID (COMM) S ...": COMM may hold ')' */
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* The thread's GIL state: its interpreter's GIL read once a round. */
static uint32_t gil_of(struct round_ctx *c, const struct ms_py_thread *t)
{
	if (c->gil_interp != t->interp) {
		c->gil_interp = t->interp;
		c->gil_known = ms_py_walk_gil(c->s->w, t->interp, &c->gil_locked, &c->gil_holder) == 0;
	}
	return ms_py_snap_gil(c->gil_known, c->gil_locked, c->gil_holder, t->tstate);
}

/* Each thread walked: its codes named, its record written. Non-zero stops the round. */
static int on_thread(const struct ms_py_thread *t, void *arg)
{
	struct round_ctx *c = arg;
	struct pyrec_snap *s = c->s;
	struct ms_py_snapshot *rec = s->rec;
	uint32_t tid, gil;

	if (!ms_py_snap_admit(&s->b, mono_ns()))
		return 1;
	/* 0: a state made for a thread not started yet */
	if (!t->native_tid)
		return 0;
	if (!(tid = pyrec_tid_of(c->p, t->native_tid, &c->reread))) {
		s->n.no_thread++;
		ms_problems_add(c->out->problems, "python-snapshot-no-thread",
				"process %u: the thread state at 0x%llx has native id %llu, which "
				"names no thread of the process: not written (a thread that "
				"ended, or memory that is not a thread state)", c->p->pid,
				(unsigned long long)t->tstate, (unsigned long long)t->native_tid);
		return 0;
	}
	if (t->status == MS_PY_WALK_BUDGET)
		s->b.bytes_hit = true;
	gil = gil_of(c, t);
	ms_py_snapshot_from_walk(t, c->p->pid, tid, s->round, c->now, gil, rec, s->why,
				 sizeof(s->why));
	for (uint32_t i = 0; i < rec->n_words; i += 4) {
		enum ms_watch_verdict v = pyrec_code_name(c->r, c->p, rec->words[i], rec->words[i + 1],
							  c->out);

		if (v == MS_WATCH_ERROR) {
			c->failed = true;
			return 1;
		}
		if (v == MS_WATCH_WAIT)
			goto no_room;
	}
	if (!c->out->room(c->out->ctx, SNAPSHOT_RECORD_FIXED + rec->reason.len + 9 * rec->n_words))
		goto no_room;
	if (ms_py_snapshot_pack(c->out->w, rec) < 0) {
		c->failed = true;
		return 1;
	}
	s->n.snapshots++;
	if (rec->status == MS_PY_SNAPSHOT_COMPLETE) {
		s->n.complete++;
		s->n.frames += rec->n_words / 4;
	} else {
		s->n.changed++;
	}
	return 0;
no_room:
	s->n.no_room++;
	ms_problems_add(c->out->problems, "python-snapshot-no-room",
			"the output could not take a thread snapshot (process %u, thread %u): it "
			"was not written (a slower reader downstream, or a longer "
			"--python-interval)", c->p->pid, tid);
	return 0;
}

/* Walk p's threads into the round. 0, or -1 when writing failed. */
static int snap_process(struct ms_py_recorder *r, struct pyrec_proc *p, uint64_t now,
			const struct ms_collect_out *out)
{
	struct pyrec_snap *s = r->snap;
	struct round_ctx c = { .r = r, .s = s, .p = p, .out = out, .now = now };
	uint64_t bytes;
	bool gone;
	int rc;

	if (!s->w ? !(s->w = ms_py_walker_new((pid_t)p->pid, &p->l))
		  : ms_py_walker_set(s->w, (pid_t)p->pid, &p->l) < 0) {
		s->n.unreadable++;
		ms_problems_add(out->problems, "python-snapshot-unreadable",
				"process %u: its layout's offsets cannot be walked (or out of "
				"memory): its threads were not read", p->pid);
		return 0;
	}
	ms_py_walker_light(s->w, true);
	ms_py_walker_budget(s->w, s->b.bytes_left);
	rc = ms_py_walk(s->w, on_thread, &c, s->err, sizeof(s->err));
	gone = rc < 0 && errno == ESRCH;
	bytes = ms_py_walker_bytes(s->w);
	s->n.bytes += bytes;
	ms_py_snap_spend(&s->b, bytes);
	if (c.failed)
		return -1;
	if (rc >= 0)
		return 0;
	if (ms_py_walker_spent(s->w)) {
		s->b.bytes_hit = true;
	} else if (!gone && !proc_ended(p->pid)) {
		/* an ended process's exit, still in a ring, drops it */
		s->n.unreadable++;
		ms_problems_add(out->problems, "python-snapshot-unreadable",
				"%s: the threads after it were not read in that round", s->err);
	}
	return 0;
}

int pyrec_snap_round(struct ms_py_recorder *r, uint64_t tick_ns, const struct ms_collect_out *out)
{
	struct pyrec_snap *s = r->snap;
	uint64_t last = s->b.last_ns;
	/* The round's own time: a look for layouts may have taken some of the tick's. */
	uint64_t now = mono_ns();

	(void)tick_ns;

	if (ms_py_snap_round_begin(&s->b, now)) {
		s->n.late++;
		ms_problems_add(out->problems, "python-snapshot-late",
				"a round of thread snapshots came %llu ms after the one before, "
				"whose interval is %u ms: the rounds between were not taken (the "
				"recorder was busy; a longer --python-interval)",
				(unsigned long long)((now - last) / 1000000), s->interval_ms);
	}
	s->round++;
	s->n.rounds++;
	for (uint32_t k = 0; k < MS_PYREC_PROCS_MAX; k++) {
		struct pyrec_proc *p = &r->procs[(s->first_slot + k) % MS_PYREC_PROCS_MAX];

		if (p->state != PYREC_LAYOUT)
			continue;
		if (s->b.threads_hit || s->b.bytes_hit || s->b.time_hit)
			break;
		if (snap_process(r, p, now, out) < 0)
			return -1;
	}
	s->first_slot = (s->first_slot + 1) % MS_PYREC_PROCS_MAX;
	if (s->b.threads_hit) {
		s->n.threads_bounded++;
		ms_problems_add(out->problems, "python-snapshot-threads",
				"a round of thread snapshots read %u thread states: the others "
				"were not read in that round", MS_PY_SNAP_THREADS_MAX);
	}
	if (s->b.bytes_hit) {
		s->n.bytes_bounded++;
		ms_problems_add(out->problems, "python-snapshot-bytes",
				"a round of thread snapshots read %u bytes: the thread that found "
				"them spent was written changed, the others not read in that round",
				MS_PY_SNAP_ROUND_BYTES);
	}
	if (s->b.time_hit) {
		s->n.time_bounded++;
		ms_problems_add(out->problems, "python-snapshot-time",
				"a round of thread snapshots took half its interval (%u ms): the "
				"threads after were not read in that round (a longer "
				"--python-interval)", s->interval_ms);
	}
	return 0;
}

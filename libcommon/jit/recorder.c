/* ms-collect's JIT recorder: the processes, the trigger and the reads. See recorder.h. */
#include "jit/recorder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jit/perfmapread.h"
#include "jit/recorderanon.h"
#include "jit/recordergdb.h"
#include "jit/recorderproc.h"
#include "jit/rows.h"
#include "jit/throttle.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"
#include "util/grow.h"

/* No read starts without room for this: one function at its largest and the read's record. */
#define READ_ROOM (MS_PERFMAP_NAME_MAX + MS_ROWS_ENCODED_MAX + 512)
/* A JIT_FUNC record past its name and rows: the array, kind and nine numbers. */
#define FUNC_FIXED 96
#define READ_RECORD_ROOM 320
/* No status written yet. */
#define STATUS_NONE UINT32_MAX

struct proc {
	uint32_t pid;
	int32_t threads;	/* seen alive: FORKs and synthesized COMMs less EXITs */
	bool leader_gone;	/* the thread whose tid is pid exited */
	bool gone;		/* ended while records waited: freed once they went out */
	struct ms_anon_set anon;
	uint64_t mapped_at;	/* the latest mapping record's time */
	bool mapped_since;	/* something was mapped since the last read (throttle.h) */
	struct ms_jit_throttle th;
	struct ms_anon_set all;	/* every mapping seen, anonymous or not, merged */
	struct ms_perfmap *map;	/* made at the first read that finds a map */
	struct ms_anon_set pmcov;	/* what map's functions cover (ms_anon_covered()) */
	struct ms_gdb_proc gdb;	/* the GDB JIT interface's objects (recordergdb.h) */
	/* What names code: pmcov and gdb.cov together; no perf-map read fires there. */
	struct ms_anon_set covered;
	bool known_start;	/* start_boot_ns is this process's (first read) */
	uint64_t start_boot_ns;
	uint64_t read_at;	/* the last read's time, CLOCK_MONOTONIC; 0: none yet */
	/* What waits for room: funcs [next, map->n), then the read's record. */
	uint32_t next;
	bool read_waits;
	struct ms_jit_read rd;	/* the read's record, counts filled when written */
	uint32_t written_status;	/* of the last JIT_READ written, or STATUS_NONE */
	uint64_t code_unread;
	char path[48];		/* the map as the process names it */
};

struct ms_jit_recorder {
	struct ms_prover *prover;
	bool perf_maps, objects;	/* what is read: both by default */
	struct ms_gdb_shared gdb;
	struct proc **procs;	/* sorted by pid */
	uint32_t n_procs, alloc_procs;
	uint32_t n_anon;	/* processes whose anon set is not empty */
	uint32_t n_waiting;	/* processes with records waiting for room */
	struct proc *last;	/* the last one looked up */
	struct ms_jit_recorder_counts c;
	/*
	 * One function's work, reused; prep is the record made last (of
	 * prep_proc's function prep_id), kept while it waits for room so
	 * that its code is read and counted once.
	 */
	uint8_t code[MS_PROVE_STOP_MAX];
	struct ms_prove_rows rows;
	uint8_t enc[MS_ROWS_ENCODED_MAX];
	const struct proc *prep_proc;
	uint32_t prep_id;
	struct ms_jit_func prep;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the processes ---- */

/* The index of pid in r->procs, or where it would go. */
static uint32_t proc_slot(const struct ms_jit_recorder *r, uint32_t pid)
{
	uint32_t lo = 0, hi = r->n_procs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct proc *proc_find(struct ms_jit_recorder *r, uint32_t pid)
{
	uint32_t i;

	if (r->last && r->last->pid == pid)
		return r->last;
	i = proc_slot(r, pid);
	if (i == r->n_procs || r->procs[i]->pid != pid)
		return NULL;
	return r->last = r->procs[i];
}

/* pid's process, made (with no thread seen) when new; NULL after a message. */
static struct proc *proc_get(struct ms_jit_recorder *r, uint32_t pid)
{
	struct proc *p = proc_find(r, pid);
	uint32_t i;

	if (p)
		return p;
	i = proc_slot(r, pid);
	if (MS_GROW(r->procs, r->n_procs, r->alloc_procs) < 0)
		return NULL;
	if (!(p = calloc(1, sizeof(*p)))) {
		ms_error("out of memory recording the JIT code of pid %u", pid);
		return NULL;
	}
	p->pid = pid;
	p->written_status = STATUS_NONE;
	ms_anon_init(&p->anon);
	ms_anon_init(&p->all);
	ms_anon_init(&p->pmcov);
	ms_anon_init(&p->covered);
	ms_gdb_proc_init(&p->gdb);
	snprintf(p->path, sizeof(p->path), "/tmp/perf-%u.map", pid);
	memmove(r->procs + i + 1, r->procs + i, (r->n_procs - i) * sizeof(*r->procs));
	r->procs[i] = p;
	r->n_procs++;
	return r->last = p;
}

/* Keep n_anon true across a change of p's ranges. */
static void anon_changed(struct ms_jit_recorder *r, struct proc *p, bool had)
{
	bool has = p->anon.n > 0;

	if (had != has)
		r->n_anon += has ? 1 : (uint32_t)-1;
}

static bool waits(const struct proc *p)
{
	return p->read_waits || (p->map && p->next < p->map->n) || ms_gdb_waits(&p->gdb);
}

/* covered again, after pmcov or gdb.cov changed. */
static void cover(struct proc *p)
{
	if (!p->gdb.cov.n)
		ms_anon_copy(&p->covered, &p->pmcov);
	else if (!p->pmcov.n)
		ms_anon_copy(&p->covered, &p->gdb.cov);
	else
		ms_anon_union(&p->covered, &p->pmcov, &p->gdb.cov);
}

/* Forget what p read (an exec, or its end): records still waiting are counted lost. */
static void proc_forget(struct ms_jit_recorder *r, struct proc *p)
{
	bool had = p->anon.n > 0;

	if (r->prep_proc == p)
		r->prep_proc = NULL;
	if (waits(p)) {
		r->n_waiting--;
		if (p->map)
			r->c.dropped += p->map->n - p->next;
	}
	ms_gdb_proc_forget(&r->gdb, &p->gdb);
	if (p->map) {
		ms_perfmap_release(p->map);
		free(p->map);
	}
	p->map = NULL;
	ms_anon_clear(&p->pmcov);
	ms_anon_clear(&p->covered);
	ms_anon_clear(&p->all);
	p->next = 0;
	p->read_waits = false;
	p->read_at = 0;
	p->known_start = false;
	p->th = (struct ms_jit_throttle){ 0 };
	p->mapped_since = false;
	p->written_status = STATUS_NONE;
	p->code_unread = 0;
	ms_anon_clear(&p->anon);
	anon_changed(r, p, had);
}

static void proc_free(struct ms_jit_recorder *r, struct proc *p)
{
	uint32_t i = proc_slot(r, p->pid);

	proc_forget(r, p);
	ms_anon_release(&p->anon);
	ms_anon_release(&p->all);
	ms_anon_release(&p->pmcov);
	ms_anon_release(&p->covered);
	ms_gdb_proc_release(&r->gdb, &p->gdb);
	memmove(r->procs + i, r->procs + i + 1, (r->n_procs - i - 1) * sizeof(*r->procs));
	r->n_procs--;
	if (r->last == p)
		r->last = NULL;
	free(p);
}

/* ---- what the collector saw ---- */

static void on_mmap(struct ms_jit_recorder *r, const struct ms_mmap *m)
{
	struct proc *p = proc_get(r, m->pid);
	bool had, anon = ms_anon_name(m->filename.ptr, m->filename.len);

	if (!p || m->start + m->len < m->start)
		return;
	/*
	 * Functions read before the mapping was made end under it; after a
	 * read later than the mapping (the rings interleave), a line read
	 * may already name the new code: they stay, until a later line
	 * replaces them.
	 */
	if (p->map && m->time > p->read_at) {
		uint64_t ended = p->map->c.ended;

		if (ms_perfmap_unmap(p->map, m->start, m->start + m->len) == 0 &&
		    p->map->c.ended != ended) {
			ms_anon_covered(&p->pmcov, p->map);
			cover(p);
		}
	}
	if (ms_gdb_on_mmap(&p->gdb, m->start, m->start + m->len,
			   !anon && m->filename.ptr[0] == '/', m->time))
		cover(p);
	ms_anon_map(&p->all, m->start, m->start + m->len, true);
	had = p->anon.n > 0;
	ms_anon_map(&p->anon, m->start, m->start + m->len, anon);
	anon_changed(r, p, had);
	p->mapped_since = true;
	if (m->time > p->mapped_at)
		p->mapped_at = m->time;
}

static void on_comm(struct ms_jit_recorder *r, const struct ms_comm *c)
{
	struct proc *p = proc_get(r, c->pid);

	if (!p)
		return;
	if (c->synthesized || !p->threads)
		p->threads++;
	/* A new program: its mappings and map are its own. */
	if (c->exec)
		proc_forget(r, p);
}

static void on_task_fork(struct ms_jit_recorder *r, const struct ms_task *t)
{
	struct proc *parent, *child;
	bool had;

	if (t->pid == t->ppid) {
		/* A new thread. */
		if ((child = proc_get(r, t->pid)))
			child->threads++;
		return;
	}
	/* A new process: a copy of the parent's memory, its own map (perf-CHILD.map). */
	if (!(child = proc_get(r, t->pid)))
		return;
	proc_forget(r, child);
	child->threads = 1;
	child->leader_gone = child->gone = false;
	parent = proc_find(r, t->ppid);
	if (parent && parent->anon.n) {
		had = child->anon.n > 0;
		ms_anon_copy(&child->anon, &parent->anon);
		anon_changed(r, child, had);
	}
	if (parent)
		ms_anon_copy(&child->all, &parent->all);
	r->last = child;
}

static void on_task_exit(struct ms_jit_recorder *r, const struct ms_task *t)
{
	struct proc *p = proc_find(r, t->pid);

	if (!p)
		return;
	p->threads--;
	if (t->tid == t->pid)
		p->leader_gone = true;
	if (!p->leader_gone || p->threads > 0)
		return;
	/* What it read and could not write yet still goes out (its code unread now). */
	if (waits(p))
		p->gone = true;
	else
		proc_free(r, p);
}

static void on_record(void *arg, uint32_t kind, const void *rec)
{
	struct ms_jit_recorder *r = arg;

	switch (kind) {
	case MS_REC_MMAP:
		on_mmap(r, rec);
		break;
	case MS_REC_COMM:
		on_comm(r, rec);
		break;
	case MS_REC_FORK:
		on_task_fork(r, rec);
		break;
	case MS_REC_EXIT:
		on_task_exit(r, rec);
		break;
	default:
		break;
	}
}

/* ---- the read ---- */

/* Read p's map now, at the sample's time: what it finds waits in p for room. */
static void read_map(struct ms_jit_recorder *r, struct proc *p, uint64_t sample_time)
{
	struct ms_jit_proc facts;
	struct ms_perfmap_readres res = { 0 };
	struct stat st;
	uint32_t status = MS_JIT_READ_OK, err = 0;
	uint64_t now = mono_ns();
	bool was = waits(p);
	int fd = -1;

	r->c.reads++;
	/* After every mapping of the process seen: a mapping made after the read ends what it read. */
	p->read_at = now > p->mapped_at ? now : p->mapped_at + 1;
	if (ms_jit_proc_read((pid_t)p->pid, &facts) < 0) {
		status = MS_JIT_READ_FAILED;
		err = (uint32_t)errno;
		goto done;
	}
	/*
	 * A process with this pid that began after the sample is another
	 * one: the sampled one ended. Its map is not the target's to read.
	 */
	if ((p->known_start && facts.start_boot_ns != p->start_boot_ns) ||
	    facts.start_boot_ns > sample_time + facts.boot_minus_mono + MS_JIT_START_SLACK_NS) {
		status = MS_JIT_READ_FAILED;
		err = ESRCH;
		goto done;
	}
	p->known_start = true;
	p->start_boot_ns = facts.start_boot_ns;
	snprintf(p->path, sizeof(p->path), "/tmp/perf-%u.map", facts.nspid);
	if ((fd = ms_jit_map_open((pid_t)p->pid, facts.nspid, &st)) < 0) {
		status = errno == ENOENT ? MS_JIT_READ_MISSING : MS_JIT_READ_FAILED;
		err = status == MS_JIT_READ_FAILED ? (uint32_t)errno : 0;
		goto done;
	}
	if (ms_perfmap_stale((uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec,
			     facts.start_real_ns, MS_JIT_START_SLACK_NS)) {
		status = MS_JIT_READ_STALE;
		goto done;
	}
	/* As perf: a map only the process's user or root could have written. */
	if (st.st_uid != facts.euid && st.st_uid != 0) {
		status = MS_JIT_READ_FAILED;
		err = EPERM;
		goto done;
	}
	if (!p->map) {
		if (!(p->map = malloc(sizeof(*p->map)))) {
			status = MS_JIT_READ_FAILED;
			err = ENOMEM;
			goto done;
		}
		ms_perfmap_init(p->map);
	}
	if (ms_perfmap_read(p->map, fd, p->path, &res) < 0) {
		status = MS_JIT_READ_FAILED;
		err = errno ? (uint32_t)errno : EIO;
		goto done;
	}
	if (res.bounded)
		status = MS_JIT_READ_BOUNDED;
	if (res.funcs) {
		ms_anon_covered(&p->pmcov, p->map);
		cover(p);
	}
done:
	if (fd >= 0)
		close(fd);
	ms_jit_read_done(&p->th, sample_time, res.funcs > 0);
	p->mapped_since = false;
	p->rd = (struct ms_jit_read){ .pid = p->pid, .time = p->read_at, .status = status,
				      .err = err };
	/*
	 * A process that ended (samples of it are drained after its end) has
	 * nothing more to say: its last record stays its perf-map setting.
	 */
	if (res.funcs > 0 || (status != p->written_status && err != ESRCH))
		p->read_waits = true;
	if (!was && waits(p))
		r->n_waiting++;
}

/* The JIT_FUNC record of p's function id, in r->prep (rows in r->enc): its size. */
static size_t make_func(struct ms_jit_recorder *r, struct proc *p, uint32_t id)
{
	const struct ms_perfmap_func *pf = &p->map->funcs[id];
	struct ms_jit_func *f = &r->prep;
	uint64_t size = pf->end - pf->start;
	size_t want = size < MS_PROVE_STOP_MAX ? (size_t)size : MS_PROVE_STOP_MAX;
	long got;

	if (r->prep_proc == p && r->prep_id == id)
		return FUNC_FIXED + f->name.len + f->rows_len;
	r->prep_proc = p;
	r->prep_id = id;
	*f = (struct ms_jit_func){
		.pid = p->pid, .time = p->read_at, .start = pf->start, .end = pf->end,
		.name = { pf->name, (uint32_t)strlen(pf->name) },
		.source = MS_JIT_PERF_MAP, .line = pf->line,
	};
	if (!ms_perfmap_code_fits(p->map, id)) {
		f->flags = MS_JIT_NO_CODE;
	} else if (pf->flags & MS_PERFMAP_REPLACED ||
		   (got = ms_jit_read_code((pid_t)p->pid, pf->start, r->code, want)) <= 0) {
		/* (a later line's code is at its place now: its own cannot be read) */
		f->flags = MS_JIT_CODE_UNREAD;
		p->code_unread++;
	} else {
		ms_prove_rows(r->prover, r->code, (size_t)got, &r->rows);
		f->rows = r->enc;
		f->rows_len = (uint32_t)ms_rows_encode(&r->rows, r->enc, sizeof(r->enc));
	}
	return FUNC_FIXED + f->name.len + f->rows_len;
}

/*
 * Write what p's last read found, as the output takes it: MS_WATCH_WRITE
 * when all went out, MS_WATCH_WAIT when the rest waits for room.
 */
static enum ms_watch_verdict flush(struct ms_jit_recorder *r, struct proc *p,
				   const struct ms_collect_out *out)
{
	const struct ms_perfmap *t = p->map;
	bool cov_changed = false;
	enum ms_watch_verdict v;

	/* The objects first: their code is theirs, whatever a perf map says. */
	if (ms_gdb_waits(&p->gdb)) {
		v = ms_gdb_flush(&r->gdb, &p->gdb, p->pid, p->mapped_at, out, &cov_changed);
		if (cov_changed)
			cover(p);
		if (v != MS_WATCH_WRITE)
			return v;
	}
	while (t && p->next < t->n) {
		if (t->funcs[p->next].flags & MS_PERFMAP_ENDED) {
			/* Mapped over since the read: its code is gone, its records too. */
			p->next++;
			continue;
		}
		if (!out->room(out->ctx, make_func(r, p, p->next)))
			return MS_WATCH_WAIT;
		if (ms_jit_func_pack(out->w, &r->prep) < 0)
			return MS_WATCH_ERROR;
		r->prep_proc = NULL;
		r->c.funcs++;
		p->next++;
	}
	if (p->read_waits) {
		struct ms_jit_read *rd = &p->rd;

		if (!out->room(out->ctx, READ_RECORD_ROOM))
			return MS_WATCH_WAIT;
		rd->path = (struct ms_str){ p->path, (uint32_t)strlen(p->path) };
		if (t) {
			rd->offset = t->consumed;
			rd->functions = t->n;
			rd->malformed = t->c.malformed;
			rd->over_max = t->c.over_max;
			rd->no_code = t->c.no_code;
			rd->code_bytes = t->c.code_bytes;
		}
		rd->code_unread = p->code_unread;
		if (ms_jit_read_pack(out->w, rd) < 0)
			return MS_WATCH_ERROR;
		r->c.read_records++;
		p->written_status = rd->status;
		p->read_waits = false;
	}
	r->n_waiting--;
	if (p->gone)
		proc_free(r, p);
	return MS_WATCH_WRITE;
}

/* Every process's waiting records, by pid: the one whose object is half out first. */
static enum ms_watch_verdict flush_all(struct ms_jit_recorder *r, const struct ms_collect_out *out)
{
	uint32_t i = 0;

	for (uint32_t k = 0; r->gdb.owner && k < r->n_procs; k++) {
		struct proc *p = r->procs[k];
		enum ms_watch_verdict v;

		if (&p->gdb != r->gdb.owner)
			continue;
		if ((v = flush(r, p, out)) != MS_WATCH_WRITE)
			return v;
		break;
	}

	while (i < r->n_procs && r->n_waiting) {
		struct proc *p = r->procs[i];
		bool gone = p->gone;
		enum ms_watch_verdict v;

		if (!waits(p)) {
			i++;
			continue;
		}
		if ((v = flush(r, p, out)) != MS_WATCH_WRITE)
			return v;
		/* (a process that ended left the table: i holds the next one now) */
		if (!gone)
			i++;
	}
	return MS_WATCH_WRITE;
}

/* The sample's user ip: its ip, or the user registers' when it was taken in the kernel; 0: none. */
static uint64_t user_ip(const struct ms_sample *s)
{
	enum { PERF_REG_IP = 8 };
	uint32_t at;

	if (s->cpumode == MS_CPUMODE_USER)
		return s->ip;
	if (!s->regs_abi || !(s->regs_mask & ((uint64_t)1 << PERF_REG_IP)))
		return 0;
	at = (uint32_t)__builtin_popcountll(s->regs_mask & (((uint64_t)1 << PERF_REG_IP) - 1));
	return at < s->n_regs ? s->regs[at] : 0;
}

/*
 * Whether the GDB JIT objects of p are to be checked for sample s (a is
 * what the anonymous-code trigger found): an ip in no mapping seen (its
 * record may have been lost), or in an object's code (it may have been
 * unregistered since).
 */
static bool gdb_trigger(const struct proc *p, const struct ms_sample *s, uint64_t a)
{
	uint64_t ip;

	if (ms_gdb_never(&p->gdb))
		return false;
	if (a)
		return true;
	if (!(ip = user_ip(s)))
		return false;
	return !ms_anon_has(&p->all, ip) || ms_anon_has(&p->gdb.cov, ip);
}

/* Note that p has records waiting, when it has and had none. */
static void now_waits(struct ms_jit_recorder *r, struct proc *p, bool was)
{
	if (!was && waits(p))
		r->n_waiting++;
}

/* A trigger that came while the output was full: a later sample reads. */
static enum ms_watch_verdict deferred(struct ms_jit_recorder *r, const struct ms_collect_out *out)
{
	r->c.deferred++;
	ms_problems_add(out->problems, "jit-read-deferred",
			"a sample in JIT code nothing read names came while the output was full: "
			"the JIT's descriptions were read at a later sample");
	return MS_WATCH_WRITE;
}

static enum ms_watch_verdict on_sample(void *arg, const struct ms_sample *s,
				       const struct ms_collect_out *out)
{
	struct ms_jit_recorder *r = arg;
	enum ms_watch_verdict v;
	struct proc *p;
	uint64_t a = 0;
	bool g;

	r->c.samples++;
	/* What an earlier read found goes before any later sample. */
	if (r->n_waiting && (v = flush_all(r, out)) != MS_WATCH_WRITE) {
		r->c.waits += v == MS_WATCH_WAIT;
		return v;
	}
	if (!r->n_anon && !r->objects)
		return MS_WATCH_WRITE;
	if (!(p = proc_find(r, s->pid)))
		return MS_WATCH_WRITE;
	if (p->anon.n) {
		r->c.scanned++;
		a = ms_anon_trigger(&p->anon, s, &p->covered);
	}
	g = r->objects && gdb_trigger(p, s, a);
	if (!a && !g)
		return MS_WATCH_WRITE;
	r->c.triggers++;
	/*
	 * The check writes nothing itself (mostly it reads 24 bytes): what it
	 * queues goes out as room allows, the sample waiting for it.
	 */
	if (g) {
		bool was = waits(p);

		uint64_t ip = user_ip(s);
		bool unnamed = a || !ip || !ms_anon_has(&p->gdb.cov, ip);

		if (ms_gdb_check(&r->gdb, &p->gdb, p->pid, s->time, unnamed, out->problems)) {
			now_waits(r, p, was);
			if ((v = flush(r, p, out)) != MS_WATCH_WRITE) {
				r->c.waits += v == MS_WATCH_WAIT;
				return v;
			}
			/* (flush() forgot a process that ended) */
			if (!(p = proc_find(r, s->pid)))
				return MS_WATCH_WRITE;
			/* The objects written may name the code that made the trigger fire. */
			if (a)
				a = ms_anon_trigger(&p->anon, s, &p->covered);
		}
	}
	if (!a || !r->perf_maps)
		return MS_WATCH_WRITE;
	if (!ms_jit_read_due(&p->th, s->time, p->mapped_since)) {
		r->c.throttled++;
		return MS_WATCH_WRITE;
	}
	if (!out->room(out->ctx, READ_ROOM))
		return deferred(r, out);
	read_map(r, p, s->time);
	if (!waits(p))
		return MS_WATCH_WRITE;
	v = flush(r, p, out);
	r->c.waits += v == MS_WATCH_WAIT;
	return v;
}

static int on_finish(void *arg, const struct ms_collect_out *out)
{
	struct ms_jit_recorder *r = arg;

	/* The output blocks now: only a failure stops this. */
	if (r->n_waiting && flush_all(r, out) != MS_WATCH_WRITE)
		return -1;
	if (r->gdb.dropped)
		ms_problems_add(out->problems, "jit-objects-dropped",
				"%llu GDB JIT objects or unregistrations read were not written: their "
				"process ran another program before the output had room for them",
				(unsigned long long)r->gdb.dropped);
	if (r->c.dropped)
		ms_problems_add(out->problems, "jit-funcs-dropped",
				"%llu functions read from perf maps were not written: their process "
				"ran another program before the output had room for them",
				(unsigned long long)r->c.dropped);
	return 0;
}

/* ---- the recorder ---- */

struct ms_jit_recorder *ms_jit_recorder_new(void)
{
	struct ms_jit_recorder *r = calloc(1, sizeof(*r));

	if (!r) {
		ms_error("out of memory for the JIT recorder");
		return NULL;
	}
	r->perf_maps = r->objects = true;
	if (!(r->prover = ms_prover_new())) {
		free(r);
		return NULL;
	}
	if (ms_gdb_shared_init(&r->gdb) < 0) {
		ms_prover_free(r->prover);
		free(r);
		return NULL;
	}
	return r;
}

void ms_jit_recorder_free(struct ms_jit_recorder *r)
{
	if (!r)
		return;
	while (r->n_procs)
		proc_free(r, r->procs[r->n_procs - 1]);
	free(r->procs);
	ms_gdb_shared_release(&r->gdb);
	ms_prover_free(r->prover);
	free(r);
}

void ms_jit_recorder_watch(struct ms_jit_recorder *r, struct ms_collect_watch *w)
{
	*w = (struct ms_collect_watch){
		.arg = r, .record = on_record, .sample = on_sample, .finish = on_finish,
	};
}

const struct ms_jit_recorder_counts *ms_jit_recorder_counts(const struct ms_jit_recorder *r)
{
	return &r->c;
}

void ms_jit_recorder_sources(struct ms_jit_recorder *r, bool perf_maps, bool objects)
{
	r->perf_maps = perf_maps;
	r->objects = objects;
}

const struct ms_gdb_shared *ms_jit_recorder_gdb(const struct ms_jit_recorder *r)
{
	return &r->gdb;
}

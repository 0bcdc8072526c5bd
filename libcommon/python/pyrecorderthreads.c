/*
 * The Python recorder's thread map (pyrecorder.h): each tick, a process's
 * thread states and their native ids, translated to the recorder's tids,
 * made the walker's py_threads by the fewest sink calls.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/pymem.h"
#include "python/pyrecorderint.h"
#include "stream/records.h"

/* The largest span of a thread state read: two fields below MS_PY_OFFSET_MAX, in practice < 200 bytes. */
#define TS_SPAN_MAX 1024

static uint64_t u64(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/*
 * Every thread state of every interpreter of p, as (native id, state)
 * into p->fresh: their count, -1 with the reason in r->err, or -2 when
 * the process is gone.
 */
static int read_list(struct ms_py_recorder *r, struct pyrec_proc *p)
{
	const struct ms_py_offsets *o = &p->l.off;
	uint32_t lo = o->ts_next < o->ts_native_tid ? o->ts_next : o->ts_native_tid;
	uint32_t hi = (o->ts_next > o->ts_native_tid ? o->ts_next : o->ts_native_tid) + 8;
	pid_t pid = (pid_t)p->pid;
	uint64_t interp, ts;
	uint8_t h[TS_SPAN_MAX];
	int n = 0, interps = 0;

	if (hi - lo > TS_SPAN_MAX) {
		snprintf(r->err, sizeof(r->err), "process %u: thread state fields %u bytes apart",
			 p->pid, hi - lo);
		return -1;
	}
	if (ms_py_read(pid, p->l.runtime + o->rt_interp_head, &interp, 8) < 0) {
		if (errno == ESRCH)
			return -2;
		snprintf(r->err, sizeof(r->err), "process %u: _PyRuntime's interpreters unreadable: %s",
			 p->pid, strerror(errno));
		return -1;
	}
	for (; interp; interps++) {
		uint64_t next;

		if (interps == MS_PY_WALK_INTERPS) {
			snprintf(r->err, sizeof(r->err), "process %u: more than %d interpreters (a cycle?)",
				 p->pid, MS_PY_WALK_INTERPS);
			return -1;
		}
		if (ms_py_read(pid, interp + o->is_threads_head, &ts, 8) < 0 ||
		    ms_py_read(pid, interp + o->is_next, &next, 8) < 0) {
			snprintf(r->err, sizeof(r->err), "process %u: interpreter at 0x%llx unreadable: %s",
				 p->pid, (unsigned long long)interp, strerror(errno));
			return -1;
		}
		for (; ts; ts = u64(h, o->ts_next - lo)) {
			uint64_t native;

			if (n == MS_PY_WALK_THREADS) {
				snprintf(r->err, sizeof(r->err),
					 "process %u: more than %d thread states (a cycle?)", p->pid,
					 MS_PY_WALK_THREADS);
				return -1;
			}
			if (ms_py_read(pid, ts + lo, h, hi - lo) < 0) {
				snprintf(r->err, sizeof(r->err),
					 "process %u: thread state at 0x%llx unreadable: %s", p->pid,
					 (unsigned long long)ts, strerror(errno));
				return -1;
			}
			native = u64(h, o->ts_native_tid - lo);
			/* 0: not started yet; above 2^32: not a thread id */
			if (native && native <= UINT32_MAX)
				p->fresh[n++] = (struct pyrec_thread){ (uint32_t)native, ts };
		}
		interp = next;
	}
	return n;
}

static int cmp_nsid(const void *a, const void *b)
{
	const struct pyrec_nsid *x = a, *y = b;

	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct pyrec_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The last number on an "NSpid:" line and the first: the ids innermost and here. */
static int nspid_line(const char *s, uint32_t *ns, uint32_t *host)
{
	const char *line = strstr(s, "\nNSpid:");
	unsigned long v;
	char *end;
	int n = 0;

	if (!line)
		return -1;
	line += 7;
	for (;;) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line < '0' || *line > '9')
			break;
		v = strtoul(line, &end, 10);
		if (v > UINT32_MAX)
			return -1;
		if (!n++)
			*host = (uint32_t)v;
		*ns = (uint32_t)v;
		line = end;
	}
	return n ? 0 : -1;
}

/*
 * Read p's tasks into p->nsids, sorted by ns: their NSpid lines when p is
 * in a nested namespace, else their ids (the same here and there).
 */
static void read_nsids(struct pyrec_proc *p)
{
	char path[64], buf[4096];
	struct dirent *e;
	DIR *d;

	p->n_nsids = 0;
	p->nsids_stale = false;
	if (!p->nsids && !(p->nsids = malloc(MS_PY_WALK_THREADS * sizeof(*p->nsids))))
		return;
	snprintf(path, sizeof(path), "/proc/%u/task", p->pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)) && p->n_nsids < MS_PY_WALK_THREADS) {
		struct pyrec_nsid id;
		ssize_t got;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (!p->nested) {
			unsigned long v = strtoul(e->d_name, NULL, 10);

			if (v && v <= UINT32_MAX)
				p->nsids[p->n_nsids++] = (struct pyrec_nsid){ (uint32_t)v, (uint32_t)v };
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%u/task/%.16s/status", p->pid, e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		/* "\n" first: the line search wants one before each line */
		buf[0] = '\n';
		got = read(fd, buf + 1, sizeof(buf) - 2);
		close(fd);
		if (got <= 0)
			continue;
		buf[got + 1] = '\0';
		if (nspid_line(buf, &id.ns, &id.host) == 0)
			p->nsids[p->n_nsids++] = id;
	}
	closedir(d);
	qsort(p->nsids, p->n_nsids, sizeof(*p->nsids), cmp_nsid);
}

static uint32_t host_tid(const struct pyrec_proc *p, uint32_t ns)
{
	struct pyrec_nsid key = { .ns = ns };
	const struct pyrec_nsid *hit;

	if (!p->nsids)
		return 0;
	hit = bsearch(&key, p->nsids, p->n_nsids, sizeof(*p->nsids), cmp_nsid);
	return hit ? hit->host : 0;
}

uint32_t pyrec_tid_of(struct pyrec_proc *p, uint64_t ns, bool *reread)
{
	uint32_t host;

	if (!ns || ns > UINT32_MAX)
		return 0;
	if ((p->nsids_stale || !p->nsids) && !*reread) {
		read_nsids(p);
		*reread = true;
	}
	host = host_tid(p, (uint32_t)ns);
	/* A thread started since the last reading: read again, once a round. */
	if (!host && !*reread) {
		read_nsids(p);
		*reread = true;
		host = host_tid(p, (uint32_t)ns);
	}
	return host;
}

/* Native ids to the recorder's (0: none); in the recorder's namespace they are equal. */
static void translate(struct pyrec_proc *p, uint32_t n)
{
	bool reread = false;

	if (!p->nested)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t host = host_tid(p, p->fresh[i].tid);

		/* A thread started since the last reading: read again, once a tick. */
		if (!host && !reread) {
			read_nsids(p);
			reread = true;
			host = host_tid(p, p->fresh[i].tid);
		}
		p->fresh[i].tid = host;
	}
}

/* Sort by tid, leaving out 0 and every id more than one state claims: their count. */
static uint32_t unique(struct pyrec_thread *t, uint32_t n)
{
	uint32_t out = 0;

	qsort(t, n, sizeof(*t), cmp_thread);
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i + 1;

		while (j < n && t[j].tid == t[i].tid)
			j++;
		if (t[i].tid && j == i + 1)
			t[out++] = t[i];
		i = j;
	}
	return out;
}

static void set_thread(struct ms_py_recorder *r, const struct pyrec_thread *t,
		       const struct ms_collect_out *out)
{
	r->n.thread_sets++;
	if (r->sink.set_thread && r->sink.set_thread(r->sink.arg, t->tid, t->tstate) < 0)
		ms_problems_add(out->problems, "python-map-failed",
				"the BPF walker's map py_threads refused thread %u", t->tid);
}

static void drop_thread(struct ms_py_recorder *r, uint32_t tid, const struct ms_collect_out *out)
{
	r->n.thread_drops++;
	if (r->sink.drop_thread && r->sink.drop_thread(r->sink.arg, tid) < 0 && out)
		ms_problems_add(out->problems, "python-map-failed",
				"the BPF walker's map py_threads did not let thread %u go", tid);
}

void pyrec_threads_refresh(struct ms_py_recorder *r, struct pyrec_proc *p,
			   const struct ms_collect_out *out)
{
	int got = read_list(r, p);
	uint32_t n, i = 0, j = 0;
	struct pyrec_thread *swap;

	/* Gone: its exit, still in a ring, drops it. */
	if (got == -2)
		return;
	if (got < 0) {
		/* The map stays as it was: the walker's own search covers what changed. */
		ms_problems_add(out->problems, "python-threads-unreadable",
				"python recorder: %s; the thread map kept its last reading", r->err);
		return;
	}
	translate(p, (uint32_t)got);
	n = unique(p->fresh, (uint32_t)got);
	/* A merge of two sorted lists: set what is new or moved, drop what is gone. */
	while (i < n || j < p->n_threads) {
		if (j == p->n_threads || (i < n && p->fresh[i].tid < p->threads[j].tid)) {
			set_thread(r, &p->fresh[i++], out);
		} else if (i == n || p->threads[j].tid < p->fresh[i].tid) {
			drop_thread(r, p->threads[j++].tid, out);
		} else {
			if (p->fresh[i].tstate != p->threads[j].tstate)
				set_thread(r, &p->fresh[i], out);
			i++, j++;
		}
	}
	swap = p->threads;
	p->threads = p->fresh;
	p->fresh = swap;
	p->n_threads = n;
}

void pyrec_threads_drop(struct ms_py_recorder *r, struct pyrec_proc *p)
{
	for (uint32_t i = 0; i < p->n_threads; i++)
		drop_thread(r, p->threads[i].tid, NULL);
	p->n_threads = 0;
}

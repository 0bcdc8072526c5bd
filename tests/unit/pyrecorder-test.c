/*
 * The Python recorder's pieces against live CPython processes (pyenv's
 * 3.12.1, part of this machine: ARCHITECTURE.md): codeobj.h reads and
 * proves the code objects python/walk.c's walker finds, and refuses a
 * wrong stamp or a freed object; pyrecorder.h, with a fake sink and
 * hand-made walker records, sets a layout and the thread map (translated
 * from a nested pid namespace), writes PY_PROCESS and PY_CODE records
 * once each and ahead of the record, keeps its bounds and waits for room.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf/bpfrecord.h"
#include "perf/decode.h"
#include "python/codeobj.h"
#include "python/layout.h"
#include "python/pymem.h"
#include "python/pyparse.h"
#include "python/pyrecorder.h"
#include "python/walk.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "tmpdir.h"

#define PY312 "/root/.pyenv/versions/3.12.1/bin/python3.12"
#define FIXTURE MS_SRCDIR "/tests/fixtures/pystack.py"

/* ---- a live Python ---- */

struct py {
	pid_t pid;		/* the child we started (python, or unshare) */
	pid_t py;		/* python's pid here */
	FILE *out;		/* its stdout */
	int in;			/* its stdin */
	struct ms_py_layout *l;
};

/* The processes a test started, ended by teardown() when an assertion left it early. */
static pid_t started[4];

static void remember(pid_t pid)
{
	for (int i = 0; i < 4; i++)
		if (!started[i]) {
			started[i] = pid;
			return;
		}
}

static int teardown(void **state)
{
	int status;

	(void)state;
	for (int i = 0; i < 4; i++)
		if (started[i] > 0) {
			kill(started[i], SIGKILL);
			waitpid(started[i], &status, 0);
			started[i] = 0;
		}
	return 0;
}

/* Start argv with pipes; wait for a line starting with ready (or `code `). */
static void py_start(struct py *p, char *const argv[], const char *ready, char *line, size_t cap)
{
	int out[2], in[2];

	memset(p, 0, sizeof(*p));
	if (access(PY312, X_OK) < 0)
		fail_msg("%s is missing: this machine's Pythons are listed in ARCHITECTURE.md", PY312);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (!p->pid) {
		dup2(out[1], 1);
		dup2(in[0], 0);
		execv(argv[0], argv);
		_exit(127);
	}
	remember(p->pid);
	close(out[1]);
	close(in[0]);
	p->in = in[1];
	p->out = fdopen(out[0], "r");
	assert_non_null(p->out);
	for (;;) {
		if (!fgets(line, (int)cap, p->out))
			fail_msg("%s never said %s", argv[0], ready);
		if (!strncmp(line, ready, strlen(ready)))
			break;
	}
	p->py = p->pid;
}

static void py_layout(struct py *p)
{
	char err[512];

	p->l = malloc(sizeof(*p->l));
	assert_non_null(p->l);
	if (ms_py_layout_find(p->py, p->l, err, sizeof(err)) < 0)
		fail_msg("%s", err);
}

static void py_stop(struct py *p)
{
	int status;

	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, &status, 0);
		for (int i = 0; i < 4; i++)
			if (started[i] == p->pid)
				started[i] = 0;
	}
	if (p->out)
		fclose(p->out);
	if (p->in > 0)
		close(p->in);
	free(p->l);
	memset(p, 0, sizeof(*p));
}

static void chain_start(struct py *p)
{
	char *argv[] = { PY312, FIXTURE, "chain", NULL };
	char line[256];

	py_start(p, argv, "ready ", line, sizeof(line));
	py_layout(p);
}

/* The main thread's frames as the walker read them, innermost first. */
struct walked {
	uint32_t n;
	uint64_t tstate, native_tid;
	uint64_t code[32], stamp[32];
	char func[32][64], file[32][256];
	int firstlineno[32];
};

static int keep_first(const struct ms_py_thread *t, void *data)
{
	struct walked *w = data;

	if (w->n || !t->n_frames)
		return 0;
	w->tstate = t->tstate;
	w->native_tid = t->native_tid;
	for (uint32_t i = 0; i < t->n_frames && i < 32; i++) {
		w->code[i] = t->frames[i].code;
		w->firstlineno[i] = t->frames[i].firstlineno;
		snprintf(w->func[i], sizeof(w->func[i]), "%s", ms_py_thread_str(t, t->frames[i].func));
		snprintf(w->file[i], sizeof(w->file[i]), "%s", ms_py_thread_str(t, t->frames[i].file));
		w->n++;
	}
	return 0;
}

static void walk(struct py *p, struct walked *w)
{
	struct ms_py_walker *wk = ms_py_walker_new(p->py, p->l);
	char err[512];

	memset(w, 0, sizeof(*w));
	assert_non_null(wk);
	assert_int_equal(ms_py_walk(wk, keep_first, w, err, sizeof(err)), 0);
	ms_py_walker_free(wk);
	assert_true(w->n >= 5);
	for (uint32_t i = 0; i < w->n; i++)
		assert_int_equal(ms_py_read(p->py, w->code[i] + p->l->off.co_linetable, &w->stamp[i], 8), 0);
}

/* ---- codeobj ---- */

static void test_code_read(void **state)
{
	struct ms_py_code_info *in = malloc(sizeof(*in));
	static const char *const want[] = { "h", "g", "f", "main", "<module>" };
	struct walked w;
	struct py p;

	(void)state;
	assert_non_null(in);
	chain_start(&p);
	walk(&p, &w);
	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(ms_py_code_read(p.py, p.l, w.code[i], w.stamp[i], in), MS_PY_CODE_OK);
		assert_string_equal(in->qualname, want[i]);
		assert_string_equal(in->qualname, w.func[i]);
		assert_int_equal(in->qualname_len, strlen(want[i]));
		assert_string_equal(in->file, w.file[i]);
		assert_int_equal(in->firstlineno, w.firstlineno[i]);
		assert_int_equal(in->code_start, w.code[i] + p.l->off.co_code_adaptive);
		assert_true(in->linetable_len > 0);
		assert_true(in->bytes > in->linetable_len);
		int line;
		/* a function's first instruction (RESUME) is on its def line; a module's on 0 */
		assert_int_equal(ms_py_linetable_line(in->linetable, in->linetable_len,
						      in->firstlineno, 0, &line), MS_PY_LINE_OK);
		assert_int_equal(line, i < 4 ? in->firstlineno : 0);
	}
	/* A wrong stamp: another object (or a reused address) */
	assert_int_equal(ms_py_code_read(p.py, p.l, w.code[0], w.stamp[0] + 16, in), MS_PY_CODE_INVALID);
	assert_non_null(strstr(in->reason, "not the walker's"));
	assert_int_equal(ms_py_code_read(p.py, p.l, w.code[0], 0, in), MS_PY_CODE_INVALID);
	/* Not a code object: its thread state */
	assert_int_equal(ms_py_code_read(p.py, p.l, w.tstate, w.stamp[0], in), MS_PY_CODE_INVALID);
	assert_non_null(strstr(in->reason, "is not a code object"));
	/* Nothing mapped there */
	assert_int_equal(ms_py_code_read(p.py, p.l, 0x1000, w.stamp[0], in), MS_PY_CODE_UNREADABLE);
	assert_non_null(strstr(in->reason, "code object at 0x1000"));
	/* The process gone */
	pid_t pid = p.py;
	struct ms_py_layout *l = p.l;
	p.l = NULL;
	py_stop(&p);
	assert_int_equal(ms_py_code_read(pid, l, w.code[0], w.stamp[0], in), MS_PY_CODE_UNREADABLE);
	free(l);
	free(in);
}

/*
 * A code object freed: one of some 240 KiB, which malloc maps and unmaps
 * on its own, so that its address is certain to read as nothing.
 */
static void test_code_freed(void **state)
{
	static const char script[] =
		"import sys\n"
		"c = compile('x = 1\\n' * 60000, 'big.py', 'exec')\n"
		"print('code %d' % id(c), flush=True)\n"
		"sys.stdin.readline()\n"
		"del c\n"
		"print('freed', flush=True)\n"
		"sys.stdin.readline()\n";
	char *argv[] = { PY312, "-c", (char *)script, NULL };
	struct ms_py_code_info *in = malloc(sizeof(*in));
	char line[256];
	uint64_t code, stamp;
	struct py p;

	(void)state;
	assert_non_null(in);
	py_start(&p, argv, "code ", line, sizeof(line));
	py_layout(&p);
	code = strtoull(line + 5, NULL, 10);
	assert_int_equal(ms_py_read(p.py, code + p.l->off.co_linetable, &stamp, 8), 0);
	assert_int_equal(ms_py_code_read(p.py, p.l, code, stamp, in), MS_PY_CODE_NO_LINES);
	assert_string_equal(in->qualname, "<module>");
	assert_string_equal(in->file, "big.py");
	assert_int_equal(write(p.in, "\n", 1), 1);
	assert_non_null(fgets(line, sizeof(line), p.out));
	assert_string_equal(line, "freed\n");
	uint32_t s = ms_py_code_read(p.py, p.l, code, stamp, in);
	assert_true(s == MS_PY_CODE_UNREADABLE || s == MS_PY_CODE_INVALID);
	py_stop(&p);
	free(in);
}

/* ---- the recorder ---- */

/* The fake sink: what was set in the walker's maps. */
struct fake {
	uint32_t layout_pid, layouts, layout_drops;
	uint64_t pidns_ino;
	struct ms_py_layout l;
	uint32_t n;
	struct { uint32_t tid; uint64_t tstate; } t[64];
	uint32_t thread_drops;
};

static int fake_set_layout(void *arg, uint32_t pid, const struct ms_py_layout *l, uint64_t dev,
			   uint64_t ino)
{
	struct fake *f = arg;

	(void)dev;
	f->layout_pid = pid;
	f->l = *l;
	f->pidns_ino = ino;
	f->layouts++;
	return 0;
}

static int fake_drop_layout(void *arg, uint32_t pid)
{
	struct fake *f = arg;

	assert_int_equal(pid, f->layout_pid);
	f->layout_drops++;
	return 0;
}

static int fake_set_thread(void *arg, uint32_t tid, uint64_t tstate)
{
	struct fake *f = arg;

	for (uint32_t i = 0; i < f->n; i++)
		if (f->t[i].tid == tid) {
			f->t[i].tstate = tstate;
			return 0;
		}
	assert_true(f->n < 64);
	f->t[f->n].tid = tid;
	f->t[f->n++].tstate = tstate;
	return 0;
}

static int fake_drop_thread(void *arg, uint32_t tid)
{
	struct fake *f = arg;

	f->thread_drops++;
	for (uint32_t i = 0; i < f->n; i++)
		if (f->t[i].tid == tid) {
			f->t[i] = f->t[--f->n];
			return 0;
		}
	return 0;
}

/* The collector's side: a stream in a file, room while room_left says. */
struct kit {
	char dir[256], path[300];
	int fd;
	struct ms_writer *w;
	struct ms_problems problems;
	long room_left;		/* < 0: always */
	struct ms_collect_out out;
	struct fake fake;
	struct ms_py_recorder *r;
	struct ms_collect_watch watch;
};

static bool kit_room(void *ctx, size_t len)
{
	struct kit *k = ctx;

	(void)len;
	if (k->room_left < 0)
		return true;
	if (!k->room_left)
		return false;
	k->room_left--;
	return true;
}

static void kit_open(struct kit *k)
{
	struct ms_py_sink sink = {
		.arg = &k->fake, .set_layout = fake_set_layout, .drop_layout = fake_drop_layout,
		.set_thread = fake_set_thread, .drop_thread = fake_drop_thread,
	};

	memset(k, 0, sizeof(*k));
	tmpdir_make(k->dir, sizeof(k->dir), "pyrecorder-test");
	snprintf(k->path, sizeof(k->path), "%s/out.msr", k->dir);
	k->fd = open(k->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(k->fd >= 0);
	k->w = ms_writer_open(k->fd, k->path, 0);
	assert_non_null(k->w);
	assert_int_equal(ms_writer_header(k->w, NULL, "pyrecorder-test", "0"), 0);
	ms_problems_init(&k->problems, "pyrecorder-test");
	k->room_left = -1;
	k->out = (struct ms_collect_out){ k->w, &k->problems, kit_room, k };
	k->r = ms_py_recorder_new(&sink);
	assert_non_null(k->r);
	ms_py_recorder_watch(k->r, &k->watch);
	assert_null(k->watch.sample);
	assert_null(k->watch.finish);
}

/* What the stream holds, in order: 'p' PY_PROCESS, 'c' PY_CODE, 'x' a marker. */
struct seen {
	char order[64];
	uint32_t n;
	struct { uint32_t pid, status; char path[256], reason[512], engine[8]; } p[8];
	uint32_t n_p;
	struct { uint64_t code, stamp, code_start; uint32_t status, firstlineno, lt_len; char name[64], file[256]; } c[32];
	uint32_t n_c;
};

/* A marker in the stream: where the walker's record would be written. */
static void mark(struct kit *k)
{
	struct ms_info i = { .key = { "mark", 4 }, .number = 1 };

	assert_int_equal(ms_info_pack(k->w, &i), 0);
}

static void kit_close(struct kit *k, struct seen *s)
{
	struct ms_reader *rd;
	struct ms_record rec;
	int fd;

	assert_int_equal(ms_writer_trailer(k->w, true), 0);
	assert_int_equal(ms_writer_close(k->w), 0);
	close(k->fd);
	ms_py_recorder_free(k->r);
	memset(s, 0, sizeof(*s));
	fd = open(k->path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	rd = ms_reader_open(fd, k->path);
	assert_non_null(rd);
	while (ms_reader_next(rd, &rec) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_PY_PROCESS) {
			struct ms_py_process p;

			assert_int_equal(ms_py_process_unpack(&rec, &p), 0);
			assert_true(s->n_p < 8);
			s->p[s->n_p].pid = p.pid;
			s->p[s->n_p].status = p.status;
			snprintf(s->p[s->n_p].path, 256, "%.*s", (int)p.path.len, p.path.ptr);
			snprintf(s->p[s->n_p].reason, 512, "%.*s", (int)p.reason.len, p.reason.ptr);
			snprintf(s->p[s->n_p].engine, 8, "%.*s", (int)p.engine.len, p.engine.ptr);
			s->n_p++;
			s->order[s->n++] = 'p';
		} else if (rec.kind == MS_REC_PY_CODE) {
			struct ms_py_code c;

			assert_int_equal(ms_py_code_unpack(&rec, &c), 0);
			assert_true(s->n_c < 32);
			s->c[s->n_c].code = c.code;
			s->c[s->n_c].stamp = c.stamp;
			s->c[s->n_c].status = c.status;
			s->c[s->n_c].code_start = c.code_start;
			s->c[s->n_c].firstlineno = c.firstlineno;
			s->c[s->n_c].lt_len = c.linetable_len;
			snprintf(s->c[s->n_c].name, 64, "%.*s", (int)c.qualname.len, c.qualname.ptr);
			snprintf(s->c[s->n_c].file, 256, "%.*s", (int)c.file.len, c.file.ptr);
			s->n_c++;
			s->order[s->n++] = 'c';
		} else if (rec.kind == MS_REC_INFO) {
			s->order[s->n++] = 'x';
		}
	}
	ms_reader_free(rd);
	close(fd);
	assert_int_equal(tmpdir_remove(k->dir), 0);
}

static void tell_mmap(struct kit *k, uint32_t pid, const char *path)
{
	struct ms_mmap m = {
		.pid = pid, .tid = pid, .start = 0x400000, .len = 0x1000, .prot = 5,
		.maj = 8, .min = 1, .ino = 1234,
		.filename = { path, (uint32_t)strlen(path) },
	};

	k->watch.record(k->watch.arg, MS_REC_MMAP, &m);
}

static void tick(struct kit *k)
{
	assert_int_equal(k->watch.tick(k->watch.arg, 1, &k->out), 0);
}

/* A walker record of process pid naming n frames. */
struct hand {
	struct ms_bpf_record rec;
	uint8_t payload[sizeof(struct ms_bpf_py_head) + 32 * sizeof(struct ms_bpf_py_frame)];
};

static const struct ms_bpf_record *hand(struct hand *h, uint32_t pid, uint32_t n,
					const uint64_t *code, const uint64_t *stamp)
{
	struct ms_bpf_py_head head = { .status = MS_BPF_PY_COMPLETE, .n_frames = n, .tstate = 1 };

	memset(h, 0, sizeof(*h));
	h->rec.h = (struct ms_bpf_header){ .magic = MS_BPF_MAGIC, .version = MS_BPF_VERSION,
					   .kind = MS_BPF_KIND_PYTHON, .pid = pid, .tid = pid };
	memcpy(h->payload, &head, sizeof(head));
	for (uint32_t i = 0; i < n; i++) {
		struct ms_bpf_py_frame f = { .code = code[i], .stamp = stamp[i] };

		memcpy(h->payload + sizeof(head) + i * sizeof(f), &f, sizeof(f));
	}
	h->rec.payload = h->payload;
	h->rec.payload_len = (uint32_t)(sizeof(head) + n * sizeof(struct ms_bpf_py_frame));
	h->rec.h.size = (uint32_t)sizeof(h->rec.h) + h->rec.payload_len;
	return &h->rec;
}

static uint64_t problem(const struct kit *k, const char *code)
{
	for (uint32_t i = 0; i < k->problems.n; i++)
		if (!strcmp(k->problems.entries[i].code, code))
			return k->problems.entries[i].count;
	return 0;
}

static void test_recorder_names_codes(void **state)
{
	static const char *const want[] = { "h", "g", "f", "main", "<module>" };
	struct hand h;
	struct walked w;
	struct seen s;
	struct py p;
	struct kit k;

	(void)state;
	chain_start(&p);
	walk(&p, &w);
	pid_t pid = p.py;
	kit_open(&k);
	/* A walker record before the layout: nothing to name it by */
	assert_int_equal(k.watch.bpf(k.watch.arg, hand(&h, (uint32_t)p.py, w.n, w.code, w.stamp),
				     &k.out), MS_WATCH_WRITE);
	tell_mmap(&k, (uint32_t)p.py, p.l->module);
	assert_int_equal(k.fake.layouts, 0);	/* at the tick, not at the mapping */
	tick(&k);
	assert_int_equal(k.fake.layouts, 1);
	assert_int_equal(k.fake.layout_pid, p.py);
	assert_int_equal(k.fake.l.runtime, p.l->runtime);
	assert_int_equal(k.fake.l.version_hex, p.l->version_hex);
	/* The main thread is the one Python thread: its tid is the pid here */
	assert_int_equal(k.fake.n, 1);
	assert_int_equal(k.fake.t[0].tid, p.py);
	assert_int_equal(k.fake.t[0].tstate, w.tstate);
	/* Mapped again (libpython's other segments): no second look */
	tell_mmap(&k, (uint32_t)p.py, p.l->module);
	tick(&k);
	assert_int_equal(k.fake.layouts, 1);
	assert_int_equal(k.fake.n, 1);
	mark(&k);
	assert_int_equal(k.watch.bpf(k.watch.arg, hand(&h, (uint32_t)p.py, w.n, w.code, w.stamp),
				     &k.out), MS_WATCH_WRITE);
	mark(&k);
	/* The same codes again: already named */
	assert_int_equal(k.watch.bpf(k.watch.arg, hand(&h, (uint32_t)p.py, w.n, w.code, w.stamp),
				     &k.out), MS_WATCH_WRITE);
	/* One wrong stamp, one unread stamp, one address of nothing */
	uint64_t code[3] = { w.code[0], w.code[1], 0x1000 }, stamp[3] = { w.stamp[0] + 8, 0, 77 };
	assert_int_equal(k.watch.bpf(k.watch.arg, hand(&h, (uint32_t)p.py, 3, code, stamp), &k.out),
			 MS_WATCH_WRITE);
	/* Another process's record (no layout) names nothing */
	assert_int_equal(k.watch.bpf(k.watch.arg, hand(&h, (uint32_t)p.py + 1, w.n, w.code, w.stamp),
				     &k.out), MS_WATCH_WRITE);
	/* Its end drops the layout and its threads */
	struct ms_task t = { .pid = (uint32_t)p.py, .ppid = 1, .tid = (uint32_t)p.py, .ptid = 1 };
	k.watch.record(k.watch.arg, MS_REC_EXIT, &t);
	assert_int_equal(k.fake.layout_drops, 1);
	assert_int_equal(k.fake.n, 0);
	const struct ms_py_recorder_counts *n = ms_py_recorder_counts(k.r);
	assert_int_equal(n->layouts, 1);
	assert_int_equal(n->codes, w.n + 3);
	assert_int_equal(n->codes_ok, w.n);
	assert_true(n->code_bytes > 0);
	kit_close(&k, &s);
	py_stop(&p);

	assert_int_equal(s.n_p, 1);
	assert_int_equal(s.p[0].pid, pid);
	assert_int_equal(s.p[0].status, MS_PY_PROCESS_OK);
	assert_string_equal(s.p[0].engine, "bpf");
	assert_string_equal(s.p[0].reason, "");
	/* the process record, a marker, the codes, a marker, the three bad ones */
	char order[64];
	snprintf(order, sizeof(order), "px%.*sxccc", (int)w.n, "cccccccccccccccccccccccc");
	assert_string_equal(s.order, order);
	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(s.c[i].status, MS_PY_CODE_OK);
		assert_string_equal(s.c[i].name, want[i]);
		assert_true(strstr(s.c[i].file, "pystack.py") != NULL);
		assert_int_equal(s.c[i].code, w.code[i]);
		assert_int_equal(s.c[i].stamp, w.stamp[i]);
		assert_int_equal(s.c[i].firstlineno, w.firstlineno[i]);
		assert_true(s.c[i].lt_len > 0);
	}
	assert_int_equal(s.c[w.n].status, MS_PY_CODE_INVALID);
	assert_string_equal(s.c[w.n].name, "");
	assert_int_equal(s.c[w.n + 1].status, MS_PY_CODE_UNREADABLE);
	assert_int_equal(s.c[w.n + 2].status, MS_PY_CODE_UNREADABLE);
}

/* Bounds and room: a full code table, a record waiting for room. */
static void test_recorder_bounds(void **state)
{
	struct hand h;
	struct walked w;
	struct seen s;
	struct py p;
	struct kit k;

	(void)state;
	chain_start(&p);
	walk(&p, &w);
	kit_open(&k);
	ms_py_recorder_limit_codes(k.r, 2);
	tell_mmap(&k, (uint32_t)p.py, p.l->module);
	tick(&k);
	/* No room: the record waits, nothing is written, and then it goes once */
	k.room_left = 0;
	assert_int_equal(k.watch.bpf(k.watch.arg, hand(&h, (uint32_t)p.py, 1, w.code, w.stamp),
				     &k.out), MS_WATCH_WAIT);
	k.room_left = -1;
	assert_int_equal(k.watch.bpf(k.watch.arg, hand(&h, (uint32_t)p.py, 1, w.code, w.stamp),
				     &k.out), MS_WATCH_WRITE);
	assert_int_equal(k.watch.bpf(k.watch.arg, hand(&h, (uint32_t)p.py, w.n, w.code, w.stamp),
				     &k.out), MS_WATCH_WRITE);
	assert_int_equal(problem(&k, "python-code-table-full"), w.n - 2);
	assert_int_equal(ms_py_recorder_counts(k.r)->table_full, w.n - 2);
	/* A malformed payload is left to ms-decode */
	hand(&h, (uint32_t)p.py, w.n, w.code, w.stamp);
	h.rec.payload_len -= 8;
	uint64_t before = ms_py_recorder_counts(k.r)->records;
	assert_int_equal(k.watch.bpf(k.watch.arg, &h.rec, &k.out), MS_WATCH_WRITE);
	assert_int_equal(ms_py_recorder_counts(k.r)->records, before);
	kit_close(&k, &s);
	py_stop(&p);
	assert_int_equal(s.n_c, 2);
	assert_string_equal(s.c[0].name, "h");
	assert_string_equal(s.c[1].name, "g");
}

/*
 * A file named like an interpreter in a process that runs none: no
 * finding (the executable python3.X of a shared libpython is one, before
 * the loader maps the library). A process that cannot be read: refused
 * once, failed, with the reason.
 */
static void test_recorder_refuses(void **state)
{
	struct seen s;
	struct kit k;
	pid_t gone = fork();
	int status;

	(void)state;
	assert_true(gone >= 0);
	if (!gone)
		_exit(0);
	assert_int_equal(waitpid(gone, &status, 0), gone);
	kit_open(&k);
	tell_mmap(&k, (uint32_t)getpid(), "/opt/x/python3.99");
	tell_mmap(&k, (uint32_t)getpid(), "/opt/x/notpython");
	tell_mmap(&k, (uint32_t)gone, "/usr/lib/libpython3.12.so.1.0");
	tick(&k);
	tell_mmap(&k, (uint32_t)getpid(), "/opt/x/python3.99");
	tell_mmap(&k, (uint32_t)gone, "/usr/lib/libpython3.12.so.1.0");
	tick(&k);
	assert_int_equal(k.fake.layouts, 0);
	assert_int_equal(ms_py_recorder_counts(k.r)->refused, 1);
	kit_close(&k, &s);
	assert_int_equal(s.n_p, 1);
	assert_int_equal(s.p[0].pid, gone);
	assert_int_equal(s.p[0].status, MS_PY_PROCESS_FAILED);
	assert_non_null(strstr(s.p[0].reason, "cannot read /proc/"));
}

/*
 * A fork of a process with a layout: the child gets it (same memory) and
 * its own PY_PROCESS; its main thread is set by its own id. An exec drops
 * it.
 */
static void test_recorder_fork_exec(void **state)
{
	static const char script[] =
		"import os\n"
		"pid = os.fork()\n"
		"if pid == 0:\n"
		"    while True: pass\n"
		"print('child %d' % pid, flush=True)\n"
		"while True: pass\n";
	char *argv[] = { PY312, "-c", (char *)script, NULL };
	char line[256];
	struct seen s;
	struct py p;
	struct kit k;
	pid_t child;

	(void)state;
	py_start(&p, argv, "child ", line, sizeof(line));
	child = (pid_t)atoi(line + 6);
	remember(child);
	py_layout(&p);
	kit_open(&k);
	tell_mmap(&k, (uint32_t)p.py, p.l->module);
	tick(&k);
	assert_int_equal(k.fake.layouts, 1);
	struct ms_task fork_rec = { .pid = (uint32_t)child, .ppid = (uint32_t)p.py,
				    .tid = (uint32_t)child, .ptid = (uint32_t)p.py };
	k.watch.record(k.watch.arg, MS_REC_FORK, &fork_rec);
	/* A new thread of the parent is no new process */
	struct ms_task thread_rec = { .pid = (uint32_t)p.py, .ppid = (uint32_t)p.py,
				      .tid = (uint32_t)p.py + 1, .ptid = (uint32_t)p.py };
	k.watch.record(k.watch.arg, MS_REC_FORK, &thread_rec);
	tick(&k);
	assert_int_equal(k.fake.layouts, 2);
	assert_int_equal(k.fake.layout_pid, child);
	assert_int_equal(k.fake.l.runtime, p.l->runtime);
	bool found = false;
	for (uint32_t i = 0; i < k.fake.n; i++)
		found |= k.fake.t[i].tid == (uint32_t)child;
	assert_true(found);
	struct ms_comm exec_rec = { .pid = (uint32_t)child, .tid = (uint32_t)child, .exec = true };
	k.watch.record(k.watch.arg, MS_REC_COMM, &exec_rec);
	assert_int_equal(k.fake.layout_drops, 1);
	kit_close(&k, &s);
	kill(child, SIGKILL);
	for (int i = 0; i < 4; i++)
		if (started[i] == child)
			started[i] = 0;
	py_stop(&p);
	assert_int_equal(s.n_p, 2);
	assert_int_equal(s.p[1].pid, child);
	assert_int_equal(s.p[1].status, MS_PY_PROCESS_OK);
}

/* The pid of the one child of process pid. */
static pid_t child_of(pid_t pid)
{
	char path[64], buf[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	for (int i = 0; i < 200; i++) {
		if ((f = fopen(path, "r"))) {
			buf[0] = '\0';
			if (fgets(buf, sizeof(buf), f) && atoi(buf) > 0) {
				fclose(f);
				return atoi(buf);
			}
			fclose(f);
		}
		usleep(10000);
	}
	fail_msg("process %d started no child", (int)pid);
	return -1;
}

/*
 * A target in its own pid namespace, with threads: each thread's
 * native_thread_id is its id there, set in the map as the id here.
 */
static void test_recorder_nested_threads(void **state)
{
	char *argv[] = { "/usr/bin/unshare", "--pid", "--fork", "--kill-child", PY312, FIXTURE, "threads", "3", NULL };
	char line[256], path[64];
	struct seen s;
	struct py p;
	struct kit k;
	uint32_t tids[4], n = 0;
	DIR *d;
	struct dirent *e;

	(void)state;
	if (geteuid() != 0)
		fail_msg("unshare --pid needs root: run make check as root");
	py_start(&p, argv, "ready ", line, sizeof(line));
	p.py = child_of(p.pid);
	py_layout(&p);
	kit_open(&k);
	tell_mmap(&k, (uint32_t)p.py, p.l->module);
	tick(&k);
	assert_int_equal(k.fake.layouts, 1);
	/* The namespace's own, not this one's */
	struct stat self;
	assert_int_equal(stat("/proc/self/ns/pid", &self), 0);
	assert_true(k.fake.pidns_ino != (uint64_t)self.st_ino);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p.py);
	assert_non_null(d = opendir(path));
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && n < 4)
			tids[n++] = (uint32_t)atoi(e->d_name);
	closedir(d);
	assert_int_equal(n, 4);
	/* Every thread of the process, by its id here, and no other id */
	assert_int_equal(k.fake.n, 4);
	for (uint32_t i = 0; i < 4; i++) {
		bool found = false;

		for (uint32_t j = 0; j < 4; j++)
			found |= k.fake.t[j].tid == tids[i];
		assert_true(found);
	}
	kit_close(&k, &s);
	py_stop(&p);
	assert_int_equal(s.n_p, 1);
	assert_int_equal(s.p[0].status, MS_PY_PROCESS_OK);
}

/*
 * --stream-python: the Python records of a stream (stdin) in order, for
 * tests/0775-python-collect.bats:
 *   info python ENGINE
 *   process PID STATUS VERSION SOURCE PATH | REASON | engine ENGINE
 *   code PID CODE STAMP STATUS QUALNAME FILE FIRSTLINE LINETABLE-BYTES
 *   walker PID TID STATUS FRAMES: NAME... (innermost first; "?" for a code
 *     no PY_CODE record before it named)
 *   snapshot PID TID ROUND TIME STATUS GIL FRAMES: NAME... (innermost first,
 *     "?" as for walker records) | REASON
 *   sample PID TID (with --samples: each sample's ids)
 *   decoded-sample PID TID TIME (with --samples: ms-decode's SAMPLE records)
 *   exit PID TID TIME (a thread's exit)
 *   info python-interval MS
 *   problem CODE COUNT DETAIL (python-* only)
 *   samples N walkers M (at the end: the sampler's samples, the walker's records)
 * It reads ms-collect's stream or ms-decode's (PY_SNAPSHOT goes through).
 */
#define NAMED_MAX 65536
static struct { uint32_t pid; uint64_t code, stamp; char name[64]; } named[NAMED_MAX];
static uint32_t n_named;

static const char *name_of(uint32_t pid, uint64_t code, uint64_t stamp)
{
	for (uint32_t i = 0; i < n_named; i++)
		if (named[i].pid == pid && named[i].code == code && named[i].stamp == stamp)
			return named[i].name;
	return "?";
}

static void print_walker(const struct ms_bpf_record *b)
{
	struct ms_bpf_py_head head;

	if (b->h.kind != MS_BPF_KIND_PYTHON || b->payload_len < sizeof(head))
		return;
	memcpy(&head, b->payload, sizeof(head));
	if (head.n_frames > MS_BPF_PY_FRAMES_MAX ||
	    sizeof(head) + head.n_frames * sizeof(struct ms_bpf_py_frame) > b->payload_len) {
		printf("walker %u %u malformed\n", b->h.pid, b->h.tid);
		return;
	}
	printf("walker %u %u %u %u:", b->h.pid, b->h.tid, head.status, head.n_frames);
	for (uint32_t i = 0; i < head.n_frames; i++) {
		struct ms_bpf_py_frame f;

		memcpy(&f, b->payload + sizeof(head) + i * sizeof(f), sizeof(f));
		printf(" %s", name_of(b->h.pid, f.code, f.stamp));
	}
	printf("\n");
}

static void print_snapshot(const struct ms_py_snapshot *s)
{
	printf("snapshot %u %u %llu %llu %s %u %u:", s->pid, s->tid, (unsigned long long)s->round,
	       (unsigned long long)s->time, ms_py_snapshot_status_name(s->status), s->gil,
	       s->n_words / 4);
	for (uint32_t i = 0; i < s->n_words; i += 4)
		printf(" %s", name_of(s->pid, s->words[i], s->words[i + 1]));
	printf(" | %.*s\n", (int)s->reason.len, s->reason.ptr);
}

static int stream_python(bool each_sample)
{
	static struct ms_py_snapshot snap;
	struct ms_reader *r = ms_reader_open(0, "stdin");
	static struct ms_decoder dec;
	static struct ms_decoded d;
	static struct ms_attr attr;
	struct ms_record rec;
	uint64_t samples = 0, walkers = 0;
	int got;

	if (!r)
		return 1;
	ms_decoder_init(&dec);
	while ((got = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_ATTR) {
			if (ms_attr_unpack(&rec, &attr) < 0 || ms_decoder_add_attr(&dec, &attr) < 0)
				return 1;
		} else if (rec.kind == MS_REC_INFO) {
			struct ms_info i;

			if (ms_info_unpack(&rec, &i) < 0)
				return 1;
			if (i.is_text && i.key.len == 6 && !memcmp(i.key.ptr, "python", 6))
				printf("info python %.*s\n", (int)i.text.len, i.text.ptr);
			if (!i.is_text && i.key.len == 15 && !memcmp(i.key.ptr, "python-interval", 15))
				printf("info python-interval %llu\n", (unsigned long long)i.number);
		} else if (rec.kind == MS_REC_SAMPLE && each_sample) {
			if (ms_sample_unpack(&rec, &d.u.sample) < 0)
				return 1;
			printf("decoded-sample %u %u %llu\n", d.u.sample.pid, d.u.sample.tid,
			       (unsigned long long)d.u.sample.time);
		} else if (rec.kind == MS_REC_PY_SNAPSHOT) {
			if (ms_py_snapshot_unpack(&rec, &snap) < 0)
				return 1;
			print_snapshot(&snap);
		} else if (rec.kind == MS_REC_PY_PROCESS) {
			struct ms_py_process p;

			if (ms_py_process_unpack(&rec, &p) < 0)
				return 1;
			printf("process %u %s %#x %u %.*s | %.*s | engine %.*s\n", p.pid,
			       ms_py_process_status_name(p.status), p.version_hex, p.source,
			       (int)p.path.len, p.path.ptr, (int)p.reason.len, p.reason.ptr,
			       (int)p.engine.len, p.engine.ptr);
		} else if (rec.kind == MS_REC_PY_CODE) {
			struct ms_py_code c;

			if (ms_py_code_unpack(&rec, &c) < 0)
				return 1;
			printf("code %u %#llx %#llx %s %.*s %.*s %u %u\n", c.pid,
			       (unsigned long long)c.code, (unsigned long long)c.stamp,
			       ms_py_code_status_name(c.status), (int)c.qualname.len, c.qualname.ptr,
			       (int)c.file.len, c.file.ptr, c.firstlineno, c.linetable_len);
			if (n_named < NAMED_MAX) {
				named[n_named].pid = c.pid;
				named[n_named].code = c.code;
				named[n_named].stamp = c.stamp;
				snprintf(named[n_named].name, 64, "%.*s", (int)c.qualname.len,
					 c.status == MS_PY_CODE_OK ? c.qualname.ptr : "!");
				n_named++;
			}
		} else if (rec.kind == MS_REC_RAW) {
			struct ms_raw raw;

			if (ms_raw_unpack(&rec, &raw) < 0)
				return 1;
			got = ms_decode(&dec, raw.cpu, raw.data, raw.len, &d);
			if (got == MS_DECODE_BPF) {
				print_walker(&d.u.bpf.rec);
				walkers++;
			}
			samples += got == MS_DECODE_SAMPLE;
			if (got == MS_DECODE_SAMPLE && each_sample)
				printf("sample %u %u\n", d.u.sample.pid, d.u.sample.tid);
			if (got == MS_DECODE_EXIT)
				printf("exit %u %u %llu\n", d.u.task.pid, d.u.task.tid,
				       (unsigned long long)d.u.task.time);
		} else if (rec.kind == MS_REC_PROBLEM) {
			struct ms_problem pr;

			if (ms_problem_unpack(&rec, &pr) < 0)
				return 1;
			if (pr.code.len > 7 && !memcmp(pr.code.ptr, "python-", 7))
				printf("problem %.*s %llu %.*s\n", (int)pr.code.len, pr.code.ptr,
				       (unsigned long long)pr.count, (int)pr.detail.len, pr.detail.ptr);
		}
	}
	printf("samples %llu walkers %llu\n", (unsigned long long)samples,
	       (unsigned long long)walkers);
	ms_reader_free(r);
	return got == MS_READ_END ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--stream-python"))
		return stream_python(false);
	if (argc == 3 && !strcmp(argv[1], "--stream-python") && !strcmp(argv[2], "--samples"))
		return stream_python(true);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_code_read, teardown),
		cmocka_unit_test_teardown(test_code_freed, teardown),
		cmocka_unit_test_teardown(test_recorder_names_codes, teardown),
		cmocka_unit_test_teardown(test_recorder_bounds, teardown),
		cmocka_unit_test_teardown(test_recorder_refuses, teardown),
		cmocka_unit_test_teardown(test_recorder_fork_exec, teardown),
		cmocka_unit_test_teardown(test_recorder_nested_threads, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

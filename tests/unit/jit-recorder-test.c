/*
 * ms-collect's JIT recorder (libcommon/jit/recorder*.h): the anonymous
 * range set against a brute-force model, the trigger over hand-built
 * samples, the /proc parsers, and the recorder driven as collect.c drives
 * it, against a process of its own (in its own mount and pid namespaces,
 * so its /tmp/perf-1.map is a file in this test's folder): the reads, what
 * they write, staleness, the throttle, mappings that end functions, and
 * the output's room.
 *
 * Not a test: `jit-recorder-test --stream-jit < STREAM` prints the JIT
 * records of an ms-collect stream, one per line, and whether the sample
 * right after each read's records holds an address in a function it
 * wrote (the sample that made the recorder read), for tests/0730. A GDB
 * JIT object (its JIT_OBJECT chunks put together) is one line
 * "jit-object pid P entry E addr A size S chunks N after-mmap B time T
 * text START-END..." (its executable sections), an unregistration
 * "jit-object-unregister pid P entry E time T"; a chunk that does not
 * follow the one before it prints "jit-object-broken"; the problems whose
 * code starts with "jit-" print "problem CODE count N detail ..."; for
 * tests/0731.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jit/gdbjit.h"
#include "jit/recorder.h"
#include "jit/recorderanon.h"
#include "jit/recorderproc.h"
#include "jit/rows.h"
#include "jit/throttle.h"
#include "perf/decode.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "tmpdir.h"
#include "jit-code.h"

/* ---- the range set ---- */

/* A model: one flag per 16-byte unit of [0, 64 * 16). */
#define UNITS 64
#define UNIT 16

static void check_model(const struct ms_anon_set *s, const bool *model)
{
	uint64_t lo = 0, hi = 0;
	bool any = false;

	for (uint32_t i = 0; i < s->n; i++) {
		assert_true(s->r[i].start < s->r[i].end);
		/* disjoint, sorted, and touching ones merged */
		if (i)
			assert_true(s->r[i - 1].end < s->r[i].start);
	}
	for (uint64_t u = 0; u < UNITS; u++) {
		for (uint64_t a = u * UNIT; a < (u + 1) * UNIT; a += 5)
			assert_int_equal(ms_anon_has(s, a), model[u]);
		if (model[u]) {
			if (!any)
				lo = u * UNIT;
			hi = (u + 1) * UNIT;
			any = true;
		}
	}
	assert_int_equal(s->lo, lo);
	assert_int_equal(s->hi, hi);
	assert_false(ms_anon_has(s, UNITS * UNIT));
}

static void test_anon_set_model(void **state)
{
	struct ms_anon_set s, copy;
	bool model[UNITS] = { false };
	unsigned seed = 19;

	(void)state;
	ms_anon_init(&s);
	ms_anon_init(&copy);
	check_model(&s, model);
	for (int step = 0; step < 20000; step++) {
		uint64_t a = (uint64_t)(rand_r(&seed) % UNITS), b = (uint64_t)(rand_r(&seed) % UNITS);
		bool anon = rand_r(&seed) % 3 != 0;

		if (a > b) {
			uint64_t t = a;

			a = b;
			b = t;
		}
		b++;
		assert_int_equal(ms_anon_map(&s, a * UNIT, b * UNIT, anon), 0);
		for (uint64_t u = a; u < b; u++)
			model[u] = anon;
		check_model(&s, model);
		if (step % 1000 == 999) {
			/* A fork's copy answers alike; an exec's clear empties it. */
			assert_int_equal(ms_anon_copy(&copy, &s), 0);
			check_model(&copy, model);
			if (step % 5000 == 4999) {
				ms_anon_clear(&s);
				memset(model, 0, sizeof(model));
				check_model(&s, model);
			}
		}
	}
	/* Empty and wrapping ranges change nothing. */
	assert_int_equal(ms_anon_map(&s, 5 * UNIT, 5 * UNIT, true), 0);
	assert_int_equal(ms_anon_map(&s, UINT64_MAX - 4, 3, true), 0);
	check_model(&s, model);
	ms_anon_release(&s);
	ms_anon_release(&copy);
}

static void test_anon_set_bounded(void **state)
{
	struct ms_anon_set s;

	(void)state;
	ms_anon_init(&s);
	/* Ranges apart (a hole between each): one past the bound is counted, not kept. */
	for (uint64_t i = 0; i <= MS_ANON_RANGES_MAX; i++)
		assert_int_equal(ms_anon_map(&s, i * 0x2000, i * 0x2000 + 0x1000, true), 0);
	assert_int_equal(s.n, MS_ANON_RANGES_MAX);
	assert_int_equal(s.over_max, 1);
	assert_false(ms_anon_has(&s, (uint64_t)MS_ANON_RANGES_MAX * 0x2000));
	/* A mapping that splits a range needs one more: refused too, and counted. */
	assert_int_equal(ms_anon_map(&s, 0x400, 0x800, false), 0);
	assert_int_equal(s.over_max, 2);
	/* One that replaces a range in place fits. */
	assert_int_equal(ms_anon_map(&s, 0, 0x1000, false), 0);
	assert_int_equal(s.n, MS_ANON_RANGES_MAX - 1);
	assert_int_equal(s.lo, 0x2000);
	ms_anon_release(&s);
}

static void test_anon_names(void **state)
{
	(void)state;
	assert_true(ms_anon_name("", 0));
	assert_true(ms_anon_name("//anon", 6));
	assert_true(ms_anon_name("[anon:v8 code]", 14));
	assert_true(ms_anon_name("a\0b", 3));
	assert_false(ms_anon_name("[vdso]", 6));
	assert_false(ms_anon_name("[vsyscall]", 10));
	assert_false(ms_anon_name("[heap]", 6));
	assert_false(ms_anon_name("[stack]", 7));
	assert_false(ms_anon_name("/usr/lib/libc.so.6", 18));
	assert_false(ms_anon_name("/memfd:jit (deleted)", 20));
}

/* ---- the trigger ---- */

/* A perf map of lines, fed and indexed. */
static void map_of(struct ms_perfmap *t, const char *text)
{
	ms_perfmap_init(t);
	assert_int_equal(ms_perfmap_feed(t, text, strlen(text)), 0);
	assert_int_equal(ms_perfmap_index(t), 0);
}

static void test_trigger(void **state)
{
	static struct ms_sample s;
	struct ms_anon_set a, t;
	struct ms_perfmap map;
	uint64_t words[6] = {
		0x1234,			/* outside every range */
		0x7f0000001000,		/* a file's code, not JIT code */
		0x40000010,		/* in jit_a: covered */
		0x40002010,		/* in the anon range, in no function */
		0x40000020,
		0x50000000,		/* past the highest end */
	};

	(void)state;
	ms_anon_init(&a);
	assert_int_equal(ms_anon_map(&a, 0x40000000, 0x40003000, true), 0);
	assert_int_equal(ms_anon_map(&a, 0x7f0000000000, 0x7f0000100000, false), 0);
	map_of(&map, "40000000 100 jit_a\n40001000 100 jit_b\n");
	ms_anon_init(&t);
	assert_int_equal(ms_anon_covered(&t, &map), 0);

	memset(&s, 0, sizeof(s));
	s.ip = 0x7f0000001000;
	assert_int_equal(ms_anon_trigger(&a, &s, &t), 0);
	/* The ip, covered or not. */
	s.ip = 0x40001080;
	assert_int_equal(ms_anon_trigger(&a, &s, &t), 0);
	s.ip = 0x40001100;
	assert_int_equal(ms_anon_trigger(&a, &s, &t), 0x40001100);
	/* Nothing read yet: everything in the ranges is uncovered. */
	s.ip = 0x40000010;
	assert_int_equal(ms_anon_trigger(&a, &s, NULL), 0x40000010);
	assert_int_equal(ms_anon_trigger(&a, &s, &t), 0);
	/* The user call chain. */
	s.uchain[0] = 0x40000010;
	s.uchain[1] = 0x40002fff;
	s.n_uchain = 2;
	assert_int_equal(ms_anon_trigger(&a, &s, &t), 0x40002fff);
	s.n_uchain = 1;
	assert_int_equal(ms_anon_trigger(&a, &s, &t), 0);
	/* The stack's words: the first uncovered one. */
	s.stack = (const uint8_t *)words;
	s.stack_len = sizeof(words);
	assert_int_equal(ms_anon_trigger(&a, &s, &t), 0x40002010);
	/* A copy cut before it: none. */
	s.stack_len = 3 * 8 + 7;
	assert_int_equal(ms_anon_trigger(&a, &s, &t), 0);
	/*
	 * The words are where the stack's addresses are multiples of 8: with
	 * a stack pointer 4 past one, the first is 4 bytes into the copy.
	 */
	{
		static uint8_t shifted[4 + sizeof(words)];

		memcpy(shifted + 4, words, sizeof(words));
		s.stack = shifted;
		s.stack_len = sizeof(shifted);
		s.regs_abi = 2;
		s.regs_mask = 0xff01ff;
		s.n_regs = 17;
		s.regs[7] = 0x7ffc00000004;	/* perf's SP */
		assert_int_equal(ms_anon_trigger(&a, &s, &t), 0x40002010);
		s.regs[7] = 0x7ffc00000000;	/* words at 0, 8...: none of them is one */
		assert_int_equal(ms_anon_trigger(&a, &s, &t), 0);
	}
	/* No anonymous range: nothing, whatever the sample holds. */
	ms_anon_clear(&a);
	s.ip = 0x40002010;
	assert_int_equal(ms_anon_trigger(&a, &s, NULL), 0);
	ms_perfmap_release(&map);
	ms_anon_release(&t);
	ms_anon_release(&a);
}

/* What functions cover: the index's ranges, touching ones merged, ended ones out. */
static void test_covered(void **state)
{
	struct ms_perfmap map;
	struct ms_anon_set c;

	(void)state;
	/* b and c touch a; d stands apart; e replaces part of d. */
	map_of(&map, "1000 10 a\n1010 8 b\n1018 8 c\n2000 100 d\n2040 10 e\n");
	ms_anon_init(&c);
	assert_int_equal(ms_anon_covered(&c, &map), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.r[0].start, 0x1000);
	assert_int_equal(c.r[0].end, 0x1020);
	assert_int_equal(c.r[1].start, 0x2000);
	assert_int_equal(c.r[1].end, 0x2100);
	/* Each address as the map answers it. */
	for (uint64_t a = 0xff0; a < 0x2110; a++)
		assert_int_equal(ms_anon_has(&c, a), ms_perfmap_find(&map, a) != NULL);
	/* A mapping over b ends it: a hole there. */
	assert_int_equal(ms_perfmap_unmap(&map, 0x1010, 0x1011), 0);
	assert_int_equal(ms_anon_covered(&c, &map), 0);
	for (uint64_t a = 0xff0; a < 0x2110; a++)
		assert_int_equal(ms_anon_has(&c, a), ms_perfmap_find(&map, a) != NULL);
	assert_false(ms_anon_has(&c, 0x1014));
	assert_true(ms_anon_has(&c, 0x1018));
	ms_perfmap_release(&map);
	ms_anon_release(&c);
}

/* ---- /proc ---- */

static void test_parse_status(void **state)
{
	static const char nested[] = "Name:\tpython3\nTgid:\t4242\nPid:\t4242\n"
				     "Uid:\t1000\t1001\t1000\t1000\nNSpid:\t4242\t17\t1\n";
	static const char flat[] = "Pid:\t77\nUid:\t0\t0\t0\t0\n";
	static const char no_uid[] = "NSpid:\t9\n";
	static const char bad[] = "NSpid:\tx\nUid:\t0\t0\n";
	uint32_t nspid, euid;

	(void)state;
	assert_int_equal(ms_jit_parse_status(nested, strlen(nested), &nspid, &euid), 0);
	assert_int_equal(nspid, 1);
	assert_int_equal(euid, 1001);
	assert_int_equal(ms_jit_parse_status(flat, strlen(flat), &nspid, &euid), 0);
	assert_int_equal(nspid, 77);
	assert_int_equal(euid, 0);
	assert_int_equal(ms_jit_parse_status(no_uid, strlen(no_uid), &nspid, &euid), -1);
	assert_int_equal(ms_jit_parse_status(bad, strlen(bad), &nspid, &euid), -1);
}

static void test_parse_starttime(void **state)
{
	/* A name with spaces and parentheses; starttime is field 22. */
	static const char odd[] = "42 (a) b (c) R 1 42 42 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 "
				  "1 0 123456 1000 100 18446744073709551615\n";
	static const char cut[] = "42 (x) R 1 42 42 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0";
	uint64_t ticks;

	(void)state;
	assert_int_equal(ms_jit_parse_starttime(odd, strlen(odd), &ticks), 0);
	assert_int_equal(ticks, 123456);
	assert_int_equal(ms_jit_parse_starttime(cut, strlen(cut), &ticks), -1);
	assert_int_equal(ms_jit_parse_starttime("no paren", 8, &ticks), -1);
}

static void test_proc_self(void **state)
{
	struct ms_jit_proc p;
	struct timespec now;

	(void)state;
	assert_int_equal(ms_jit_proc_read(getpid(), &p), 0);
	assert_int_equal(p.euid, geteuid());
	clock_gettime(CLOCK_REALTIME, &now);
	/* It began before now, and not long before (tests are short). */
	assert_true(p.start_real_ns <= (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec +
		    MS_JIT_START_SLACK_NS);
	assert_true(p.start_real_ns + 3600ull * 1000000000ull >
		    (uint64_t)now.tv_sec * 1000000000ull);
	/* A pid that is no process. */
	assert_int_equal(ms_jit_proc_read(0x3fffffff, &p), -1);
	assert_int_equal(errno, ESRCH);
}

/* ---- the recorder, against a process of its own ---- */

/* Where the code is: jit_classic (the classic frame), then jit_tramp 64 bytes on. */
#define CODE_SIZE 0x2000
#define TRAMP_AT 64

struct target {
	char dir[256];
	char map[300];		/* the map as this test reaches it */
	pid_t middle;		/* the process that made the namespaces */
	pid_t pid;		/* the target: pid 1 in its own namespace */
	uint64_t code;
	bool ok;
};

/* The target: maps its code, writes its map's lines, says where, and sleeps. */
static void target_main(int out)
{
	uint8_t *p = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char line[128];
	int fd, n;
	uint64_t at;

	if (p == MAP_FAILED)
		_exit(1);
	memset(p, 0xcc, CODE_SIZE);
	memcpy(p, classic, sizeof(classic));
	memcpy(p + TRAMP_AT, trampoline, sizeof(trampoline));
	if (mprotect(p, CODE_SIZE, PROT_READ | PROT_EXEC) < 0)
		_exit(1);
	fd = open("/tmp/perf-1.map", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	n = snprintf(line, sizeof(line), "%lx %zx jit_classic\n%lx b jit_tramp\n",
		     (unsigned long)(uintptr_t)p, sizeof(classic),
		     (unsigned long)(uintptr_t)(p + TRAMP_AT));
	if (fd < 0 || getpid() != 1 || write(fd, line, (size_t)n) != n)
		_exit(1);
	close(fd);
	at = (uint64_t)(uintptr_t)p;
	if (write(out, &at, 8) != 8)
		_exit(1);
	for (;;)
		pause();
}

/* The middle process: its own mounts (/tmp is the test's folder) and pid namespace. */
static void middle_main(const char *dir, int out)
{
	pid_t pid;
	uint64_t code;
	int status, fds[2];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(dir, "/tmp", NULL, MS_BIND, NULL) < 0 || pipe(fds) < 0)
		_exit(2);
	pid = fork();
	if (pid < 0)
		_exit(2);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		target_main(fds[1]);
	}
	close(fds[1]);
	/* Its pid as the test's namespace sees it, then where its code is. */
	if (read(fds[0], &code, 8) != 8 || write(out, &pid, sizeof(pid)) != (ssize_t)sizeof(pid) ||
	    write(out, &code, 8) != 8)
		_exit(2);
	waitpid(pid, &status, 0);
	_exit(0);
}

static void target_start(struct target *t)
{
	int fds[2];

	memset(t, 0, sizeof(*t));
	tmpdir_make(t->dir, sizeof(t->dir), "jit-recorder-test");
	snprintf(t->map, sizeof(t->map), "%s/perf-1.map", t->dir);
	assert_int_equal(pipe(fds), 0);
	t->middle = fork();
	assert_true(t->middle >= 0);
	if (t->middle == 0) {
		close(fds[0]);
		middle_main(t->dir, fds[1]);
	}
	close(fds[1]);
	t->ok = read(fds[0], &t->pid, sizeof(t->pid)) == (ssize_t)sizeof(t->pid) &&
		read(fds[0], &t->code, 8) == 8;
	close(fds[0]);
}

static void target_stop(struct target *t)
{
	int status;

	kill(t->middle, SIGKILL);
	if (t->pid > 0)
		kill(t->pid, SIGKILL);
	waitpid(t->middle, &status, 0);
	assert_int_equal(tmpdir_remove(t->dir), 0);
}

/* The collector's side: a writer into a file, and room when room_left says. */
struct sink {
	char path[300];
	int fd;
	struct ms_writer *w;
	struct ms_problems problems;
	long room_left;		/* room() says yes this many more times; < 0: always */
	struct ms_collect_out out;
	struct ms_collect_watch watch;
	struct ms_jit_recorder *r;
};

static bool sink_room(void *ctx, size_t len)
{
	struct sink *k = ctx;

	(void)len;
	if (k->room_left < 0)
		return true;
	if (!k->room_left)
		return false;
	k->room_left--;
	return true;
}

static void sink_open(struct sink *k, const char *dir)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->path, sizeof(k->path), "%s/out.msr", dir);
	k->fd = open(k->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(k->fd >= 0);
	k->w = ms_writer_open(k->fd, k->path, 0);
	assert_non_null(k->w);
	assert_int_equal(ms_writer_header(k->w, NULL, "jit-recorder-test", "0"), 0);
	ms_problems_init(&k->problems, "jit-recorder-test");
	k->room_left = -1;
	k->out = (struct ms_collect_out){ k->w, &k->problems, sink_room, k };
	k->r = ms_jit_recorder_new();
	assert_non_null(k->r);
	ms_jit_recorder_watch(k->r, &k->watch);
}

/* What the stream holds, as text lines in buf. */
struct seen {
	uint32_t funcs, reads;
	struct { uint64_t start, end, time; char name[32]; uint32_t flags, rows_len, line; } f[16];
	struct { uint32_t status, err; uint64_t functions, offset, code_unread, no_code; char path[64]; } r[16];
	uint32_t order[32];	/* 'f' or 'r', in stream order */
	uint32_t n_order;
	uint8_t rows[16][MS_JIT_ROWS_MAX];
};

static void sink_close(struct sink *k, struct seen *s)
{
	struct ms_reader *rd;
	struct ms_record rec;
	int fd;

	assert_int_equal(k->watch.finish(k->watch.arg, &k->out), 0);
	assert_int_equal(ms_writer_trailer(k->w, true), 0);
	assert_int_equal(ms_writer_close(k->w), 0);
	close(k->fd);
	ms_jit_recorder_free(k->r);
	memset(s, 0, sizeof(*s));
	fd = open(k->path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	rd = ms_reader_open(fd, k->path);
	assert_non_null(rd);
	while (ms_reader_next(rd, &rec) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_JIT_FUNC) {
			struct ms_jit_func f;

			assert_int_equal(ms_jit_func_unpack(&rec, &f), 0);
			assert_true(s->funcs < 16);
			s->f[s->funcs].start = f.start;
			s->f[s->funcs].end = f.end;
			s->f[s->funcs].time = f.time;
			s->f[s->funcs].flags = f.flags;
			s->f[s->funcs].line = f.line;
			s->f[s->funcs].rows_len = f.rows_len;
			memcpy(s->rows[s->funcs], f.rows, f.rows_len);
			snprintf(s->f[s->funcs].name, sizeof(s->f[0].name), "%.*s", (int)f.name.len,
				 f.name.ptr);
			assert_int_equal(f.source, MS_JIT_PERF_MAP);
			s->funcs++;
			s->order[s->n_order++] = 'f';
		} else if (rec.kind == MS_REC_JIT_READ) {
			struct ms_jit_read r;

			assert_int_equal(ms_jit_read_unpack(&rec, &r), 0);
			assert_true(s->reads < 16);
			s->r[s->reads].status = r.status;
			s->r[s->reads].err = r.err;
			s->r[s->reads].functions = r.functions;
			s->r[s->reads].offset = r.offset;
			s->r[s->reads].code_unread = r.code_unread;
			s->r[s->reads].no_code = r.no_code;
			snprintf(s->r[s->reads].path, sizeof(s->r[0].path), "%.*s", (int)r.path.len,
				 r.path.ptr);
			s->reads++;
			s->order[s->n_order++] = 'r';
		}
	}
	ms_reader_free(rd);
	close(fd);
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Tell the recorder of a mapping of the target. */
static void tell_mmap(struct sink *k, const struct target *t, uint64_t start, uint64_t len,
		      const char *name, uint64_t time)
{
	struct ms_mmap m = {
		.pid = (uint32_t)t->pid, .tid = (uint32_t)t->pid, .time = time,
		.start = start, .len = len, .prot = PROT_READ | PROT_EXEC,
		.filename = { name, (uint32_t)strlen(name) },
	};

	k->watch.record(k->watch.arg, MS_REC_MMAP, &m);
}

/* A sample of the target at ip; the verdict on its RAW record. */
static enum ms_watch_verdict tell_sample(struct sink *k, const struct target *t, uint64_t ip,
					 uint64_t time)
{
	static struct ms_sample s;

	memset(&s, 0, sizeof(s));
	s.pid = s.tid = (uint32_t)t->pid;
	s.time = time;
	s.ip = ip;
	return k->watch.sample(k->watch.arg, &s, &k->out);
}

/*
 * The target in its own mount and pid namespaces, or a failure: make check
 * runs as root (as the recorder must), where they can always be made.
 */
static void target_or_fail(struct target *t)
{
	target_start(t);
	if (t->ok)
		return;
	target_stop(t);
	fail_msg("cannot start the target in its own mount and pid namespaces "
		 "(unshare needs root: run make check as root)");
}

static void test_recorder_reads(void **state)
{
	struct target t;
	struct sink k;
	struct seen s;
	struct ms_prove_rows rows;

	(void)state;
	target_or_fail(&t);
	sink_open(&k, t.dir);
	/* A sample in the code before any mapping of it was seen: nothing is read. */
	assert_int_equal(tell_sample(&k, &t, t.code + 5, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 0);
	tell_mmap(&k, &t, t.code, CODE_SIZE, "//anon", mono());
	/* Samples outside it: nothing either. */
	assert_int_equal(tell_sample(&k, &t, 0x401000, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 0);
	/* One in it reads; one in a function read reads nothing more. */
	assert_int_equal(tell_sample(&k, &t, t.code + 5, mono()), MS_WATCH_WRITE);
	assert_int_equal(tell_sample(&k, &t, t.code + TRAMP_AT + 4, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 1);
	/* One past the functions reads again, finds nothing: then waits 20 ms of samples' time. */
	{
		uint64_t now = mono();

		assert_int_equal(tell_sample(&k, &t, t.code + 0x1000, now), MS_WATCH_WRITE);
		assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 2);
		assert_int_equal(tell_sample(&k, &t, t.code + 0x1000, now + MS_JIT_RETRY_NS - 1),
				 MS_WATCH_WRITE);
		assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 2);
		assert_int_equal(ms_jit_recorder_counts(k.r)->throttled, 1);
		assert_int_equal(tell_sample(&k, &t, t.code + 0x1000, now + MS_JIT_RETRY_NS),
				 MS_WATCH_WRITE);
		assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 3);
	}
	sink_close(&k, &s);
	/* Two functions, then the read's record; nothing new after: no more records. */
	assert_int_equal(s.funcs, 2);
	assert_int_equal(s.reads, 1);
	assert_int_equal(s.n_order, 3);
	assert_int_equal(s.order[2], 'r');
	assert_string_equal(s.f[0].name, "jit_classic");
	assert_int_equal(s.f[0].start, t.code);
	assert_int_equal(s.f[0].end, t.code + sizeof(classic));
	assert_int_equal(s.f[0].line, 1);
	assert_int_equal(s.f[0].flags, 0);
	assert_string_equal(s.f[1].name, "jit_tramp");
	assert_int_equal(s.f[1].start, t.code + TRAMP_AT);
	assert_int_equal(s.f[1].end, t.code + TRAMP_AT + 11);
	assert_int_equal(s.f[1].line, 2);
	/* The rows are the code's, proved: the classic frame's CFA moves to rbp; the trampoline's is rsp+16. */
	assert_int_equal(ms_rows_decode(s.rows[0], s.f[0].rows_len, &rows, "jit_classic"), 0);
	assert_true(rows.n >= 3);
	assert_int_equal(rows.row[0].cfa_reg, MS_DW_RSP);
	assert_int_equal(rows.row[0].cfa_off, 8);
	assert_int_equal(rows.row[2].cfa_reg, MS_DW_RBP);
	assert_int_equal(ms_rows_decode(s.rows[1], s.f[1].rows_len, &rows, "jit_tramp"), 0);
	assert_true(rows.n >= 2);
	assert_int_equal(rows.row[1].offset, 4);
	assert_int_equal(rows.row[1].cfa_off, 16);
	assert_int_equal(s.r[0].status, MS_JIT_READ_OK);
	assert_int_equal(s.r[0].functions, 2);
	assert_int_equal(s.r[0].code_unread, 0);
	/* The map as the process names it: its own pid in its namespace. */
	assert_string_equal(s.r[0].path, "/tmp/perf-1.map");
	/* Read after the mapping was seen. */
	assert_true(s.f[0].time > 0);
	target_stop(&t);
}

/* Append a line to the target's map. */
static void map_append(const struct target *t, const char *line)
{
	int fd = open(t->map, O_WRONLY | O_APPEND | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
}

static void test_recorder_mapping_ends(void **state)
{
	struct target t;
	struct sink k;
	struct seen s;
	char line[128];
	uint64_t before;

	(void)state;
	target_or_fail(&t);
	sink_open(&k, t.dir);
	tell_mmap(&k, &t, t.code, CODE_SIZE, "//anon", 1);
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 1);
	/* A mapping made before the read (the rings interleave) ends nothing. */
	tell_mmap(&k, &t, t.code, 0x1000, "//anon", 2);
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 1);
	/* One made after it ends jit_classic and jit_tramp: the next sample there reads. */
	before = mono();
	tell_mmap(&k, &t, t.code, 0x1000, "//anon", before);
	snprintf(line, sizeof(line), "%lx 19 jit_new\n", (unsigned long)t.code);
	map_append(&t, line);
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 2);
	/* A file mapped over the rest: no more JIT code there, no read. */
	tell_mmap(&k, &t, t.code + 0x1000, 0x1000, "/usr/lib/x.so", mono());
	assert_int_equal(tell_sample(&k, &t, t.code + 0x1800, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 2);
	sink_close(&k, &s);
	assert_int_equal(s.funcs, 3);
	assert_string_equal(s.f[2].name, "jit_new");
	assert_int_equal(s.f[2].line, 3);
	/* Read after the mapping that made it: a reader ends it only under a later one. */
	assert_true(s.f[2].time > before);
	assert_int_equal(s.reads, 2);
	assert_int_equal(s.r[1].functions, 3);
	target_stop(&t);
}

static void test_recorder_stale_and_missing(void **state)
{
	struct target t;
	struct sink k;
	struct seen s;
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };

	(void)state;
	target_or_fail(&t);
	/* A map last written before the process began: an earlier one's. */
	assert_int_equal(utimensat(AT_FDCWD, t.map, old, 0), 0);
	sink_open(&k, t.dir);
	tell_mmap(&k, &t, t.code, CODE_SIZE, "//anon", 1);
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono()), MS_WATCH_WRITE);
	/* The same again within 20 ms: not read; after, read and still stale: no new record. */
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 1);
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono() + MS_JIT_RETRY_NS), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 2);
	/* Gone: missing now (a new status, a new record). */
	assert_int_equal(unlink(t.map), 0);
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono() + 2 * MS_JIT_RETRY_NS),
			 MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 3);
	sink_close(&k, &s);
	assert_int_equal(s.funcs, 0);
	assert_int_equal(s.reads, 2);
	assert_int_equal(s.r[0].status, MS_JIT_READ_STALE);
	assert_int_equal(s.r[0].functions, 0);
	assert_int_equal(s.r[1].status, MS_JIT_READ_MISSING);
	target_stop(&t);
}

static void test_recorder_room(void **state)
{
	struct target t;
	struct sink k;
	struct seen s;

	(void)state;
	target_or_fail(&t);
	sink_open(&k, t.dir);
	tell_mmap(&k, &t, t.code, CODE_SIZE, "//anon", 1);
	/* No room at all: not read now, counted; the sample goes on. */
	k.room_left = 0;
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 0);
	assert_int_equal(ms_jit_recorder_counts(k.r)->deferred, 1);
	assert_int_equal(ms_problems_total(&k.problems), 1);
	/* Room to start and for one function: the sample waits for the rest. */
	k.room_left = 2;
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono()), MS_WATCH_WAIT);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 1);
	assert_int_equal(ms_jit_recorder_counts(k.r)->funcs, 1);
	/* Still no room: it waits again, and no other read is made meanwhile. */
	assert_int_equal(tell_sample(&k, &t, t.code + 0x1000, mono()), MS_WATCH_WAIT);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 1);
	/* Room: the rest goes out, and the sample with it. */
	k.room_left = -1;
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono()), MS_WATCH_WRITE);
	sink_close(&k, &s);
	assert_int_equal(s.funcs, 2);
	assert_int_equal(s.reads, 1);
	assert_int_equal(s.order[2], 'r');
	assert_int_equal(s.r[0].code_unread, 0);
	assert_int_equal(s.f[1].flags, 0);
	target_stop(&t);
}

static void test_recorder_exit_fork_exec(void **state)
{
	struct target t;
	struct sink k;
	struct seen s;
	struct ms_task fork_rec, exit_rec;
	struct ms_comm exec_rec = { 0 };

	(void)state;
	target_or_fail(&t);
	sink_open(&k, t.dir);
	tell_mmap(&k, &t, t.code, CODE_SIZE, "//anon", 1);
	/* A child forked from it has its mappings (and reads its own map, which it lacks). */
	fork_rec = (struct ms_task){ .pid = 0x3ffffffe, .ppid = (uint32_t)t.pid,
				     .tid = 0x3ffffffe, .ptid = (uint32_t)t.pid, .time = 2 };
	k.watch.record(k.watch.arg, MS_REC_FORK, &fork_rec);
	{
		static struct ms_sample smp;

		smp.pid = smp.tid = fork_rec.pid;
		smp.time = mono();
		smp.ip = t.code + 1;
		assert_int_equal(k.watch.sample(k.watch.arg, &smp, &k.out), MS_WATCH_WRITE);
		assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 1);
		/* It exits: forgotten, nothing read again. */
		exit_rec = fork_rec;
		k.watch.record(k.watch.arg, MS_REC_EXIT, &exit_rec);
		smp.time += MS_JIT_RETRY_NS;
		assert_int_equal(k.watch.sample(k.watch.arg, &smp, &k.out), MS_WATCH_WRITE);
		assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 1);
	}
	/* The target execs: its anonymous code is forgotten, so nothing triggers. */
	exec_rec.pid = exec_rec.tid = (uint32_t)t.pid;
	exec_rec.exec = true;
	exec_rec.comm = (struct ms_str){ "x", 1 };
	k.watch.record(k.watch.arg, MS_REC_COMM, &exec_rec);
	assert_int_equal(tell_sample(&k, &t, t.code + 1, mono()), MS_WATCH_WRITE);
	assert_int_equal(ms_jit_recorder_counts(k.r)->reads, 1);
	assert_int_equal(ms_jit_recorder_counts(k.r)->scanned, 1);
	sink_close(&k, &s);
	/* The child's read: no such process (it ended): nothing to say, no record. */
	assert_int_equal(s.funcs, 0);
	assert_int_equal(s.reads, 0);
	target_stop(&t);
}

/* ---- --stream-jit ---- */

#define BATCH_MAX 4096

/* Whether sample s holds an address in [start[i], end[i]) for some i < n. */
static bool holds(const struct ms_sample *s, const uint64_t (*range)[2], uint32_t n)
{
	uint64_t w;

	for (uint32_t i = 0; i < n; i++) {
		if (s->ip >= range[i][0] && s->ip < range[i][1])
			return true;
		for (uint32_t k = 0; k < s->n_uchain; k++)
			if (s->uchain[k] >= range[i][0] && s->uchain[k] < range[i][1])
				return true;
		for (uint32_t off = 0; off + 8 <= s->stack_len; off += 8) {
			memcpy(&w, s->stack + off, 8);
			if (w >= range[i][0] && w < range[i][1])
				return true;
		}
	}
	return false;
}

static int stream_jit(void)
{
	struct ms_reader *r = ms_reader_open(0, "stdin");
	static struct ms_decoder dec;
	static struct ms_decoded d;
	static uint64_t batch[BATCH_MAX][2];
	static struct ms_attr attr;
	static struct ms_tracepoint tp;
	struct ms_record rec;
	static struct ms_sample prev;
	static uint8_t prev_stack[MS_STACK_MAX];
	uint32_t n_batch = 0;
	bool in_batch = false, batch_read = false, prev_valid = false;
	uint64_t in_funcs = 0, samples = 0, latest_anon_mmap = 0;
	int got;

	if (!r)
		return 1;
	ms_decoder_init(&dec);
	while ((got = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_ATTR) {
			if (ms_attr_unpack(&rec, &attr) < 0 || ms_decoder_add_attr(&dec, &attr) < 0)
				return 1;
		} else if (rec.kind == MS_REC_TRACEPOINT) {
			if (ms_tracepoint_unpack(&rec, &tp) < 0 || ms_decoder_add_tracepoint(&dec, &tp) < 0)
				return 1;
		} else if (rec.kind == MS_REC_JIT_FUNC) {
			struct ms_jit_func f;

			if (ms_jit_func_unpack(&rec, &f) < 0)
				return 1;
			printf("jit-func pid %u start %#" PRIx64 " size %#" PRIx64 " name %.*s line %u "
			       "flags %u rows %u after-mmap %d time %" PRIu64 "\n", f.pid, f.start,
			       f.end - f.start, (int)f.name.len, f.name.ptr, f.line, f.flags, f.rows_len,
			       f.time > latest_anon_mmap, f.time);
			if (!in_batch)
				n_batch = 0;
			in_batch = true;
			if (n_batch < BATCH_MAX) {
				batch[n_batch][0] = f.start;
				batch[n_batch][1] = f.end;
				n_batch++;
			}
		} else if (rec.kind == MS_REC_PROBLEM) {
			struct ms_problem pr;

			if (ms_problem_unpack(&rec, &pr) < 0)
				return 1;
			if (pr.code.len > 4 && !memcmp(pr.code.ptr, "jit-", 4))
				printf("problem %.*s count %" PRIu64 " detail %.*s\n", (int)pr.code.len,
				       pr.code.ptr, pr.count, (int)pr.detail.len, pr.detail.ptr);
		} else if (rec.kind == MS_REC_JIT_OBJECT) {
			static uint8_t img[MS_JIT_OBJECT_MAX];
			static struct ms_jit_object cur;
			static uint32_t chunks;
			static struct ms_gdbjit_range ranges[64];
			struct ms_jit_object o;
			int n;

			if (ms_jit_object_unpack(&rec, &o) < 0)
				return 1;
			if (!o.size) {
				printf("jit-object-unregister pid %u entry %#" PRIx64 " time %" PRIu64 "\n",
				       o.pid, o.entry, o.time);
				continue;
			}
			/* Each chunk follows the one before it, of the same object. */
			if (o.offset && (o.offset != cur.offset || o.entry != cur.entry ||
					 o.pid != cur.pid || o.size != cur.size || o.time != cur.time)) {
				printf("jit-object-broken pid %u entry %#" PRIx64 " offset %" PRIu64 "\n",
				       o.pid, o.entry, o.offset);
				continue;
			}
			if (!o.offset)
				chunks = 0;
			memcpy(img + o.offset, o.chunk, o.chunk_len);
			cur = o;
			cur.offset = o.offset + o.chunk_len;
			chunks++;
			if (cur.offset < o.size)
				continue;
			printf("jit-object pid %u entry %#" PRIx64 " addr %#" PRIx64 " size %" PRIu64
			       " chunks %u after-mmap %d time %" PRIu64, o.pid, o.entry, o.addr, o.size,
			       chunks, o.time > latest_anon_mmap, o.time);
			n = ms_gdbjit_exec_ranges(img, o.size, ranges, 64);
			if (!in_batch)
				n_batch = 0;
			in_batch = true;
			for (int i = 0; i < n; i++) {
				printf(" text %#" PRIx64 "-%#" PRIx64, ranges[i].start, ranges[i].end);
				if (n_batch < BATCH_MAX) {
					batch[n_batch][0] = ranges[i].start;
					batch[n_batch][1] = ranges[i].end;
					n_batch++;
				}
			}
			printf("\n");
		} else if (rec.kind == MS_REC_JIT_READ) {
			struct ms_jit_read rd;

			if (ms_jit_read_unpack(&rec, &rd) < 0)
				return 1;
			printf("jit-read pid %u path %.*s status %s err %u offset %" PRIu64
			       " functions %" PRIu64 " malformed %" PRIu64 " over-max %" PRIu64
			       " no-code %" PRIu64 " code-unread %" PRIu64 " code-bytes %" PRIu64 "\n",
			       rd.pid, (int)rd.path.len, rd.path.ptr, ms_jit_read_status_name(rd.status),
			       rd.err, rd.offset, rd.functions, rd.malformed, rd.over_max, rd.no_code,
			       rd.code_unread, rd.code_bytes);
			if (!in_batch)
				n_batch = 0;
			in_batch = true;
			batch_read = true;
		} else if (rec.kind == MS_REC_RAW) {
			struct ms_raw raw;
			int k;

			if (ms_raw_unpack(&rec, &raw) < 0)
				return 1;
			k = ms_decode(&dec, raw.cpu, raw.data, raw.len, &d);
			if (k == MS_DECODE_MMAP && ms_anon_name(d.u.mmap.filename.ptr,
							       d.u.mmap.filename.len) &&
			    d.u.mmap.time > latest_anon_mmap)
				latest_anon_mmap = d.u.mmap.time;
			if (k != MS_DECODE_SAMPLE)
				continue;
			samples++;
			in_funcs += holds(&d.u.sample, batch, n_batch);
			if (in_batch) {
				/*
				 * The sample right after a read's records is the one that
				 * made it read; the one right before them held no address
				 * in the functions read (or it would have made the read).
				 */
				printf("jit-next-sample %s\n", !n_batch ? (batch_read ? "none" : "?") :
				       holds(&d.u.sample, batch, n_batch) ? "holds" : "misses");
				if (n_batch)
					printf("jit-prev-sample %s\n", !prev_valid ? "none" :
					       holds(&prev, batch, n_batch) ? "holds" : "misses");
				in_batch = batch_read = false;
			}
			prev = d.u.sample;
			memcpy(prev_stack, d.u.sample.stack, d.u.sample.stack_len);
			prev.stack = prev_stack;
			prev_valid = true;
		}
	}
	printf("samples %" PRIu64 "\n", samples);
	printf("samples-holding-last-read %" PRIu64 "\n", in_funcs);
	ms_reader_free(r);
	return got == MS_READ_END ? 0 : got == MS_READ_TRUNCATED ? 3 : 1;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anon_set_model),
		cmocka_unit_test(test_anon_set_bounded),
		cmocka_unit_test(test_anon_names),
		cmocka_unit_test(test_trigger),
		cmocka_unit_test(test_covered),
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_parse_starttime),
		cmocka_unit_test(test_proc_self),
		cmocka_unit_test(test_recorder_reads),
		cmocka_unit_test(test_recorder_mapping_ends),
		cmocka_unit_test(test_recorder_stale_and_missing),
		cmocka_unit_test(test_recorder_room),
		cmocka_unit_test(test_recorder_exit_fork_exec),
	};

	if (argc == 2 && !strcmp(argv[1], "--stream-jit"))
		return stream_jit();
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Unit tests of the collection layer that need no perf events: ring
 * reading over a ring in memory (wrap-around, peeks, untrustworthy
 * headers), /proc/PID/maps lines, CPU lists, option parsing, the launch
 * gate and exit codes, ATTR records.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf/collect.h"
#include "perf/procfs.h"
#include "perf/ring.h"
#include "perf/session.h"
#include "perf/target.h"
#include "stream/records.h"
#include "stream/stream.h"

/* ---- a ring in memory ---- */

#define RING_SIZE 256u

struct fake_ring {
	struct perf_event_mmap_page meta;
	uint8_t data[RING_SIZE];
	uint8_t bounce[MS_RING_RECORD_MAX];
	uint64_t head;		/* where the "kernel" writes next */
	struct ms_ring r;
};

static struct fake_ring *fake_new(uint64_t start)
{
	struct fake_ring *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	/* Start anywhere: positions are free-running 64-bit counters. */
	f->meta.data_head = f->meta.data_tail = f->head = start;
	ms_ring_init_mem(&f->r, &f->meta, f->data, RING_SIZE, f->bounce);
	return f;
}

/* Write a record of size bytes whose body bytes are fill, as the kernel would. */
static void fake_put(struct fake_ring *f, uint32_t type, uint16_t size, uint8_t fill)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };
	uint8_t rec[RING_SIZE];

	assert_true(size <= sizeof(rec));
	memset(rec, fill, size);
	memcpy(rec, &h, sizeof(h));
	for (uint16_t i = 0; i < size; i++)
		f->data[(f->head + i) % RING_SIZE] = rec[i];
	f->head += size;
	f->meta.data_head = f->head;
}

static void check_record(const uint8_t *rec, uint32_t len, uint32_t type, uint16_t size, uint8_t fill)
{
	struct perf_event_header h;

	assert_int_equal(len, size);
	memcpy(&h, rec, sizeof(h));
	assert_int_equal(h.type, type);
	assert_int_equal(h.size, size);
	for (uint32_t i = sizeof(h); i < len; i++)
		assert_int_equal(rec[i], fill);
}

static void test_ring_in_place(void **state)
{
	struct fake_ring *f = fake_new(0);
	const uint8_t *rec;
	uint32_t len;

	fake_put(f, PERF_RECORD_SAMPLE, 32, 0xaa);
	fake_put(f, PERF_RECORD_MMAP2, 48, 0xbb);
	assert_int_equal(ms_ring_begin(&f->r), 80);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	check_record(rec, len, PERF_RECORD_SAMPLE, 32, 0xaa);
	assert_ptr_equal(rec, f->data);		/* no copy when it does not wrap */
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	check_record(rec, len, PERF_RECORD_MMAP2, 48, 0xbb);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 0);
	/* Nothing is given back until commit. */
	assert_int_equal(f->meta.data_tail, 0);
	ms_ring_commit(&f->r);
	assert_int_equal(f->meta.data_tail, 80);
	assert_int_equal(ms_ring_begin(&f->r), 0);
	free(f);
}

static void test_ring_wraps_through_bounce(void **state)
{
	/* 200 bytes in: a 96-byte record crosses the end at 256. */
	struct fake_ring *f = fake_new(200);
	const uint8_t *rec;
	uint32_t len;

	fake_put(f, PERF_RECORD_SAMPLE, 96, 0x5c);
	fake_put(f, PERF_RECORD_COMM, 24, 0x11);
	assert_int_equal(ms_ring_begin(&f->r), 120);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	assert_ptr_equal(rec, f->bounce);
	check_record(rec, len, PERF_RECORD_SAMPLE, 96, 0x5c);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	assert_ptr_equal(rec, f->data + (296 % RING_SIZE));
	check_record(rec, len, PERF_RECORD_COMM, 24, 0x11);
	ms_ring_commit(&f->r);
	assert_int_equal(f->meta.data_tail, 320);
	free(f);
}

static void test_ring_header_wraps(void **state)
{
	/* The header itself starts 8 bytes before the end: still read whole. */
	struct fake_ring *f = fake_new(RING_SIZE - 8);
	const uint8_t *rec;
	uint32_t len;

	fake_put(f, PERF_RECORD_FORK, 40, 0x77);
	ms_ring_begin(&f->r);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	check_record(rec, len, PERF_RECORD_FORK, 40, 0x77);
	free(f);
}

static void test_ring_many_passes(void **state)
{
	/* Many laps: every record comes out once, in order, intact. */
	struct fake_ring *f = fake_new(UINT64_C(0xfffffffffffff000));
	const uint8_t *rec;
	uint32_t len;
	unsigned seen = 0;

	for (unsigned lap = 0; lap < 100; lap++) {
		uint16_t size = (uint16_t)(8 + 8 * (lap % 12));

		fake_put(f, PERF_RECORD_SAMPLE, size, (uint8_t)lap);
		fake_put(f, PERF_RECORD_EXIT, 40, (uint8_t)(lap + 1));
		ms_ring_begin(&f->r);
		assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
		check_record(rec, len, PERF_RECORD_SAMPLE, size, (uint8_t)lap);
		assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
		check_record(rec, len, PERF_RECORD_EXIT, 40, (uint8_t)(lap + 1));
		assert_int_equal(ms_ring_next(&f->r, &rec, &len), 0);
		ms_ring_commit(&f->r);
		assert_int_equal(f->meta.data_tail, f->head);
		seen += 2;
	}
	assert_int_equal(seen, 200);
	free(f);
}

static void test_ring_peek_then_read(void **state)
{
	struct fake_ring *f = fake_new(0);
	const uint8_t *rec;
	uint32_t len;

	fake_put(f, PERF_RECORD_FORK, 40, 1);
	ms_ring_begin(&f->r);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	/* A new pass without commit reads the same record again. */
	fake_put(f, PERF_RECORD_SAMPLE, 16, 2);
	assert_int_equal(ms_ring_begin(&f->r), 56);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	check_record(rec, len, PERF_RECORD_FORK, 40, 1);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	check_record(rec, len, PERF_RECORD_SAMPLE, 16, 2);
	free(f);
}

static void test_ring_snapshot_bounds_pass(void **state)
{
	struct fake_ring *f = fake_new(0);
	const uint8_t *rec;
	uint32_t len;

	fake_put(f, PERF_RECORD_SAMPLE, 16, 1);
	ms_ring_begin(&f->r);
	/* Published after the snapshot: waits for the next pass. */
	fake_put(f, PERF_RECORD_SAMPLE, 16, 2);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 0);
	ms_ring_commit(&f->r);
	ms_ring_begin(&f->r);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 1);
	check_record(rec, len, PERF_RECORD_SAMPLE, 16, 2);
	free(f);
}

static void test_ring_bad_sizes(void **state)
{
	static const uint16_t bad[] = { 0, 4, 12, 64 };	/* 64: beyond the 32 published */
	const uint8_t *rec;
	uint32_t len;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fake_ring *f = fake_new(0);
		struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = bad[i] };

		memcpy(f->data, &h, sizeof(h));
		f->meta.data_head = f->head = 32;
		ms_ring_begin(&f->r);
		assert_int_equal(ms_ring_next(&f->r, &rec, &len), -1);
		/* The published data is skipped, never read past. */
		assert_int_equal(ms_ring_next(&f->r, &rec, &len), 0);
		ms_ring_commit(&f->r);
		assert_int_equal(f->meta.data_tail, 32);
		free(f);
	}
}

static void test_ring_head_beyond_size(void **state)
{
	struct fake_ring *f = fake_new(0);
	const uint8_t *rec;
	uint32_t len;

	fake_put(f, PERF_RECORD_SAMPLE, 16, 1);
	f->meta.data_head = RING_SIZE * 3;	/* impossible: more than the ring holds */
	ms_ring_begin(&f->r);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), -1);
	assert_int_equal(ms_ring_next(&f->r, &rec, &len), 0);
	free(f);
}

/* ---- /proc/PID/maps ---- */

static void check_path(const struct ms_maps_entry *e, const char *want)
{
	assert_int_equal(e->path_len, strlen(want));
	assert_memory_equal(e->path, want, e->path_len);
}

/*
 * A default ring shrinks to what may be locked: figures of this machine's
 * kernel for an unprivileged user (perf_event_mlock_kb 516 = 129 pages a
 * CPU, ulimit -l 8 MiB = 2048 pages), never under the floor.
 */
static void test_ring_pages_fit(void **state)
{
	(void)state;
	/* 2 CPUs: 2 x 1025 <= 2 x 129 + 2048. */
	assert_int_equal(ms_ring_pages_fit(1024, 256, 2, 2 * 129 + 2048), 1024);
	/* 4 CPUs: 4 x 1025 > 4 x 129 + 2048, 4 x 513 fits. */
	assert_int_equal(ms_ring_pages_fit(1024, 256, 4, 4 * 129 + 2048), 512);
	/* 16 CPUs: 16 x 257 is exactly 16 x 129 + 2048 ... */
	assert_int_equal(ms_ring_pages_fit(1024, 256, 16, 16 * 129 + 2048), 256);
	/* ... 64 CPUs: not even the floor fits: the floor, for the mapping to refuse. */
	assert_int_equal(ms_ring_pages_fit(1024, 256, 64, 64 * 129 + 2048), 256);
	/* No limit, or a want at the floor: as wanted. */
	assert_int_equal(ms_ring_pages_fit(1024, 256, 1024, UINT64_MAX), 1024);
	assert_int_equal(ms_ring_pages_fit(256, 256, 64, 1), 256);
	/* The bound itself fits. */
	assert_int_equal(ms_ring_pages_fit(1024, 16, 3, 3 * 1025), 1024);
	assert_int_equal(ms_ring_pages_fit(1024, 16, 3, 3 * 1025 - 1), 512);
}

static void test_maps_file(void **state)
{
	static const char line[] =
		"55aa473c2000-55aa473c7000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n";
	struct ms_maps_entry e;

	assert_int_equal(ms_maps_parse_line(line, strlen(line), &e), 0);
	assert_int_equal(e.start, 0x55aa473c2000ull);
	assert_int_equal(e.end, 0x55aa473c7000ull);
	assert_int_equal(e.pgoff, 0x2000);
	assert_int_equal(e.maj, 0xfe);
	assert_int_equal(e.min, 0);
	assert_int_equal(e.ino, 247134);
	assert_int_equal(e.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(e.flags, MAP_PRIVATE);
	check_path(&e, "/usr/bin/cat");
	assert_false(e.deleted);
}

static void test_maps_anonymous(void **state)
{
	static const char line[] = "7f24dfcbb000-7f24dfd7f000 rw-p 00000000 00:00 0 \n";
	struct ms_maps_entry e;

	assert_int_equal(ms_maps_parse_line(line, strlen(line), &e), 0);
	assert_int_equal(e.prot, PROT_READ | PROT_WRITE);
	assert_int_equal(e.path_len, 0);
	assert_int_equal(e.ino, 0);
}

static void test_maps_named_regions(void **state)
{
	static const char *const lines[] = {
		"7ffc1a9e1000-7ffc1a9e3000 r-xp 00000000 00:00 0                          [vdso]\n",
		"7ffc1a8c0000-7ffc1a8e1000 rw-p 00000000 00:00 0                          [stack]\n",
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
	};
	static const char *const names[] = { "[vdso]", "[stack]", "[vsyscall]" };
	struct ms_maps_entry e;

	for (int i = 0; i < 3; i++) {
		assert_int_equal(ms_maps_parse_line(lines[i], strlen(lines[i]), &e), 0);
		check_path(&e, names[i]);
	}
	assert_int_equal(e.prot, PROT_EXEC);
	assert_int_equal(e.end, 0xffffffffff601000ull);
}

static void test_maps_odd_paths(void **state)
{
	static const char spaces[] =
		"7f0000000000-7f0000001000 r-xp 00001000 08:02 42    /tmp/my dir/lib  two.so\n";
	static const char deleted[] =
		"7f0000000000-7f0000001000 r-xs 00000000 00:05 1031  /memfd:jit (deleted)\n";
	static const char just_deleted[] =
		"7f0000000000-7f0000001000 r-xp 00000000 00:05 1031  (deleted)\n";
	struct ms_maps_entry e;

	assert_int_equal(ms_maps_parse_line(spaces, strlen(spaces), &e), 0);
	check_path(&e, "/tmp/my dir/lib  two.so");
	assert_int_equal(e.maj, 8);
	assert_int_equal(e.min, 2);
	assert_false(e.deleted);

	assert_int_equal(ms_maps_parse_line(deleted, strlen(deleted), &e), 0);
	check_path(&e, "/memfd:jit (deleted)");
	assert_true(e.deleted);
	assert_int_equal(e.flags, MAP_SHARED);

	/* A file literally named "(deleted)" is not a deleted file. */
	assert_int_equal(ms_maps_parse_line(just_deleted, strlen(just_deleted), &e), 0);
	assert_false(e.deleted);
}

static void test_maps_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"7f00-7e00 r-xp 00000000 00:00 0\n",		/* end before start */
		"7f00 r-xp 00000000 00:00 0\n",			/* no end */
		"7f00-7f10 rwxq 00000000 00:00 0\n",		/* bad sharing flag */
		"7f00-7f10 r-x 00000000 00:00 0\n",		/* short perms */
		"7f00-7f10 r-xp 0000g000 00:00 0\n",		/* bad offset */
		"7f00-7f10 r-xp 00000000 0000 0\n",		/* no colon in dev */
		"7f00-7f10 r-xp 00000000 00:00\n",		/* no inode */
		"7f00-7f10 r-xp 00000000 00:00 12x /a\n",	/* junk after inode */
		"1ffffffffffffffff-2 r-xp 00000000 00:00 0\n",	/* overflow */
	};
	struct ms_maps_entry e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ms_maps_parse_line(bad[i], strlen(bad[i]), &e), -1);
}

static int count_exec(const struct ms_maps_entry *e, void *data)
{
	if (e->prot & PROT_EXEC)
		(*(int *)data)++;
	return 0;
}

static void test_maps_read_self(void **state)
{
	int n = 0;

	assert_int_equal(ms_maps_read(getpid(), count_exec, &n), 0);
	assert_true(n >= 2);	/* this program and libc at least */
}

/* ---- /proc threads, names, cmdline; CPU lists ---- */

static void test_tasks_self(void **state)
{
	pid_t *tids = NULL;
	size_t alloc = 0;
	int n = ms_tasks_list(getpid(), &tids, &alloc);
	char comm[64];
	char buf[4096];
	char *argv[8];

	assert_true(n >= 1);
	assert_int_equal(tids[0], getpid());	/* sorted: the leader has the lowest id */
	free(tids);
	char name[17] = "";

	assert_true(ms_task_comm(getpid(), getpid(), comm, sizeof(comm)) > 0);
	prctl(PR_GET_NAME, name);	/* "collect-test", or valgrind's name */
	assert_string_equal(comm, name);
	assert_true(ms_proc_cmdline(getpid(), buf, sizeof(buf), argv, 8) >= 1);
	assert_non_null(strstr(argv[0], "collect-test"));
}

static void test_tasks_gone(void **state)
{
	pid_t *tids = NULL;
	size_t alloc = 0;
	pid_t child = fork();
	int status;
	char comm[16];

	assert_true(child >= 0);
	if (!child)
		_exit(0);
	waitpid(child, &status, 0);
	errno = 0;
	assert_int_equal(ms_tasks_list(child, &tids, &alloc), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(ms_task_comm(child, child, comm, sizeof(comm)), -1);
	free(tids);
}

static void test_cpu_lists(void **state)
{
	int cpus[16];

	assert_int_equal(ms_cpu_list_parse("0-1\n", cpus, 16), 2);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[1], 1);
	assert_int_equal(ms_cpu_list_parse("0,2-4,7", cpus, 16), 5);
	assert_int_equal(cpus[1], 2);
	assert_int_equal(cpus[3], 4);
	assert_int_equal(cpus[4], 7);
	assert_int_equal(ms_cpu_list_parse("3", cpus, 16), 1);
	assert_int_equal(cpus[0], 3);
	assert_int_equal(ms_cpu_list_parse("", cpus, 16), -1);
	assert_int_equal(ms_cpu_list_parse("3-1", cpus, 16), -1);
	assert_int_equal(ms_cpu_list_parse("0-", cpus, 16), -1);
	assert_int_equal(ms_cpu_list_parse("0,,1", cpus, 16), -1);
	assert_int_equal(ms_cpu_list_parse("a", cpus, 16), -1);
	assert_int_equal(ms_cpu_list_parse("0-16", cpus, 16), -1);	/* 17 CPUs */
	assert_true(ms_cpus_online(cpus, 16) >= 1);
}

/* ---- options ---- */

static void test_parse_numbers(void **state)
{
	uint64_t v, ns;

	assert_int_equal(ms_parse_u64("999", "-F", 100000, &v), 0);
	assert_int_equal(v, 999);
	assert_int_equal(ms_parse_u64("100001", "-F", 100000, &v), -1);
	assert_int_equal(ms_parse_u64("", "-F", 10, &v), -1);
	assert_int_equal(ms_parse_u64("-1", "-F", 10, &v), -1);
	assert_int_equal(ms_parse_u64("12k", "-F", 100000, &v), -1);
	assert_int_equal(ms_parse_u64("99999999999999999999999", "-c", UINT64_MAX, &v), -1);

	assert_int_equal(ms_parse_seconds("2", "--duration", &ns), 0);
	assert_int_equal(ns, 2000000000ull);
	assert_int_equal(ms_parse_seconds("0.25", "--duration", &ns), 0);
	assert_int_equal(ns, 250000000ull);
	assert_int_equal(ms_parse_seconds("1.0000000019", "--duration", &ns), 0);
	assert_int_equal(ns, 1000000001ull);	/* beyond ns: dropped */
	assert_int_equal(ms_parse_seconds("0", "--duration", &ns), -1);
	assert_int_equal(ms_parse_seconds(".5", "--duration", &ns), -1);
	assert_int_equal(ms_parse_seconds("1.", "--duration", &ns), -1);
	assert_int_equal(ms_parse_seconds("1s", "--duration", &ns), -1);
	assert_int_equal(ms_parse_seconds("2000000", "--duration", &ns), -1);
}

static void test_collect_check(void **state)
{
	char *cmd[] = { "true", NULL };
	struct ms_collect_opts o = {
		.event = "cpu-clock", .freq = 999, .stack_size = 8192, .argv = cmd,
	};

	assert_int_equal(ms_collect_check(&o), 0);
	o.pid = 1;
	assert_int_equal(ms_collect_check(&o), -1);	/* both a pid and a command */
	o.argv = NULL;
	assert_int_equal(ms_collect_check(&o), 0);
	o.pid = 0;
	assert_int_equal(ms_collect_check(&o), -1);	/* neither */
	o.argv = cmd;
	o.period = 1000;
	assert_int_equal(ms_collect_check(&o), -1);	/* -F and -c */
	o.period = 0;
	o.stack_size = 12;
	assert_int_equal(ms_collect_check(&o), -1);
	o.stack_size = 65536;
	assert_int_equal(ms_collect_check(&o), -1);
	o.stack_size = 65528;
	assert_int_equal(ms_collect_check(&o), 0);
	o.stack_size = 0;
	assert_int_equal(ms_collect_check(&o), 0);
	o.data_pages = 3;
	assert_int_equal(ms_collect_check(&o), -1);
	o.data_pages = 64;
	assert_int_equal(ms_collect_check(&o), 0);
	o.event = "nonsense";
	assert_int_equal(ms_collect_check(&o), -1);
	o.event = "cycles";	/* known: refused later, by the kernel, if it must be */
	assert_int_equal(ms_collect_check(&o), 0);

	/* --off-cpu: a switch-out copy only with a sample copy, of a size the kernel takes. */
	o.off_cpu = true;
	o.stack_size = 0;
	o.off_cpu_stack_size = 0;
	assert_int_equal(ms_collect_check(&o), 0);
	o.off_cpu_stack_size = 8192;
	assert_int_equal(ms_collect_check(&o), -1);
	o.stack_size = 32768;
	assert_int_equal(ms_collect_check(&o), 0);
	o.off_cpu_stack_size = 0;
	assert_int_equal(ms_collect_check(&o), -1);
	o.off_cpu_stack_size = 8190;
	assert_int_equal(ms_collect_check(&o), -1);
	o.off_cpu_stack_size = 65536;
	assert_int_equal(ms_collect_check(&o), -1);
	o.off_cpu_stack_size = 65528;
	assert_int_equal(ms_collect_check(&o), 0);
	/* The default: the measured size, or the sample copy when smaller. */
	assert_int_equal(ms_collect_off_cpu_stack_default(32768), MS_COLLECT_OFF_CPU_STACK_DEFAULT);
	assert_int_equal(ms_collect_off_cpu_stack_default(4096), 4096);
	assert_int_equal(ms_collect_off_cpu_stack_default(0), 0);
}

static void test_event_lookup(void **state)
{
	const struct ms_event_spec *e;

	e = ms_event_lookup("cpu-clock");
	assert_non_null(e);
	assert_int_equal(e->type, PERF_TYPE_SOFTWARE);
	assert_int_equal(e->config, PERF_COUNT_SW_CPU_CLOCK);
	e = ms_event_lookup("task-clock");
	assert_non_null(e);
	assert_int_equal(e->config, PERF_COUNT_SW_TASK_CLOCK);
	e = ms_event_lookup("instructions");
	assert_non_null(e);
	assert_int_equal(e->type, PERF_TYPE_HARDWARE);
	assert_null(ms_event_lookup("cpu_clock"));
	assert_null(ms_event_lookup(""));
}

/* ---- ATTR records ---- */

static void test_attr_records_split(void **state)
{
	struct ms_session s;
	struct ms_attr *a = malloc(sizeof(*a));

	assert_non_null(a);
	memset(&s, 0, sizeof(s));
	s.attr.type = PERF_TYPE_SOFTWARE;
	s.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	s.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	s.attr.sample_regs_user = MS_REGS_USER_MASK;
	s.attr.sample_stack_user = 8192;
	s.attr.freq = 1;
	s.attr.sample_id_all = 1;
	s.attr.build_id = 1;
	s.n_events = MS_ATTR_IDS_MAX + 476;
	s.events = calloc(s.n_events, sizeof(*s.events));
	assert_non_null(s.events);
	for (size_t i = 0; i < s.n_events; i++)
		s.events[i].id = 1000 + i;

	assert_int_equal(ms_session_attr_record(&s, false, 0, a), 1);
	assert_int_equal(a->n_ids, MS_ATTR_IDS_MAX);
	assert_int_equal(a->ids[0], 1000);
	assert_int_equal(a->sample_regs_user, MS_REGS_USER_MASK);
	assert_int_equal(a->sample_stack_user, 8192);
	assert_int_equal(a->flags, MS_ATTR_SAMPLE_ID_ALL | MS_ATTR_FREQ | MS_ATTR_BUILD_ID);
	assert_int_equal(ms_session_attr_record(&s, false, 1, a), 1);
	assert_int_equal(a->n_ids, 476);
	assert_int_equal(a->ids[0], 1000 + MS_ATTR_IDS_MAX);
	assert_int_equal(a->ids[475], 1000 + s.n_events - 1);
	assert_int_equal(ms_session_attr_record(&s, false, 2, a), 0);

	s.attr.exclude_kernel = 1;
	s.attr.freq = 0;
	s.n_events = 2;
	assert_int_equal(ms_session_attr_record(&s, false, 0, a), 1);
	assert_int_equal(a->n_ids, 2);
	assert_int_equal(a->flags, MS_ATTR_SAMPLE_ID_ALL | MS_ATTR_EXCLUDE_KERNEL | MS_ATTR_BUILD_ID);
	/* Without --off-cpu there are no switch events: no record of them. */
	assert_int_equal(ms_session_attr_record(&s, true, 0, a), 0);
	free(s.events);
	free(a);
}

/*
 * --off-cpu: sampler and switch events interleave (one of each per task
 * and CPU); each kind's ATTR lists its own ids only, split alike, with
 * its own type, config and layout.
 */
static void test_attr_records_switches(void **state)
{
	struct ms_session s;
	struct ms_attr *a = malloc(sizeof(*a));
	size_t n_switch = 0;

	assert_non_null(a);
	memset(&s, 0, sizeof(s));
	s.config.off_cpu = true;
	s.attr.type = PERF_TYPE_SOFTWARE;
	s.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	s.attr.sample_stack_user = 32768;
	s.attr.freq = 1;
	s.attr.sample_id_all = 1;
	s.switch_attr = s.attr;
	s.switch_attr.type = PERF_TYPE_TRACEPOINT;
	s.switch_attr.config = 372;
	s.switch_attr.sample_type |= PERF_SAMPLE_RAW;
	s.switch_attr.sample_stack_user = 8192;
	s.switch_attr.freq = 0;
	s.n_events = 2 * (MS_ATTR_IDS_MAX + 10);
	s.events = calloc(s.n_events, sizeof(*s.events));
	assert_non_null(s.events);
	for (size_t i = 0; i < s.n_events; i++) {
		s.events[i].id = 1000 + i;
		s.events[i].is_switch = i % 2;
	}

	assert_int_equal(ms_session_attr_record(&s, true, 0, a), 1);
	assert_int_equal(a->type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(a->config, 372);
	assert_int_equal(a->sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_RAW);
	assert_int_equal(a->sample_stack_user, 8192);
	assert_int_equal(a->flags, MS_ATTR_SAMPLE_ID_ALL);
	assert_int_equal(a->n_ids, MS_ATTR_IDS_MAX);
	for (uint32_t i = 0; i < a->n_ids; i++)
		assert_int_equal(a->ids[i] % 2, 1);
	n_switch += a->n_ids;
	assert_int_equal(ms_session_attr_record(&s, true, 1, a), 1);
	assert_int_equal(a->n_ids, 10);
	assert_int_equal(a->ids[9], 1000 + s.n_events - 1);
	n_switch += a->n_ids;
	assert_int_equal(ms_session_attr_record(&s, true, 2, a), 0);
	assert_int_equal(n_switch, s.n_events / 2);

	assert_int_equal(ms_session_attr_record(&s, false, 0, a), 1);
	assert_int_equal(a->type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a->sample_stack_user, 32768);
	assert_int_equal(a->n_ids, MS_ATTR_IDS_MAX);
	assert_int_equal(a->ids[0], 1000);
	assert_int_equal(a->ids[1], 1002);
	assert_int_equal(ms_session_attr_record(&s, false, 1, a), 1);
	assert_int_equal(a->n_ids, 10);
	assert_int_equal(a->ids[9], 1000 + s.n_events - 2);
	assert_int_equal(ms_session_attr_record(&s, false, 2, a), 0);
	free(s.events);
	free(a);
}

/* ---- launch gate and exit codes ---- */

static void test_exit_codes(void **state)
{
	int status;
	pid_t p;

	p = fork();
	if (!p)
		_exit(3);
	waitpid(p, &status, 0);
	assert_int_equal(ms_exit_code_of(status), 3);
	p = fork();
	if (!p) {
		raise(SIGKILL);
		_exit(0);
	}
	waitpid(p, &status, 0);
	assert_int_equal(ms_exit_code_of(status), 128 + SIGKILL);
	assert_int_equal(ms_exec_failure_code(ENOENT), 127);
	assert_int_equal(ms_exec_failure_code(EACCES), 126);
}

static void test_launch_runs_at_gate(void **state)
{
	char *argv[] = { "sh", "-c", "exit 7", NULL };
	struct ms_launch l;
	int status;

	assert_int_equal(ms_launch_start(&l, argv, -1), 0);
	/* Held at the gate: it has not run. */
	assert_int_equal(ms_child_reap(l.pid, true, &status), 0);
	assert_int_equal(ms_launch_go(&l), 0);
	assert_int_equal(ms_child_reap(l.pid, false, &status), 1);
	assert_int_equal(ms_exit_code_of(status), 7);
}

static void test_launch_not_found(void **state)
{
	char *argv[] = { "/nonexistent/ms-no-such-program", NULL };
	struct ms_launch l;
	int status;

	assert_int_equal(ms_launch_start(&l, argv, -1), 0);
	assert_int_equal(ms_launch_go(&l), ENOENT);
	assert_int_equal(ms_child_reap(l.pid, false, &status), 1);
	assert_int_equal(ms_exit_code_of(status), 127);
}

static void test_launch_abort(void **state)
{
	char *argv[] = { "sleep", "100", NULL };
	struct ms_launch l;

	assert_int_equal(ms_launch_start(&l, argv, -1), 0);
	pid_t pid = l.pid;
	ms_launch_abort(&l);
	/* Reaped: no such child any more. */
	assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_terminate_ignoring_child(void **state)
{
	char *argv[] = { "sh", "-c", "trap '' TERM; echo ready; while :; do :; done", NULL };
	struct ms_launch l;
	int status, out[2];
	char buf[6];

	/* Its stdout is our pipe: it says when the trap is set. */
	assert_int_equal(pipe(out), 0);
	assert_int_equal(ms_launch_start(&l, argv, out[1]), 0);
	close(out[1]);
	assert_int_equal(ms_launch_go(&l), 0);
	assert_int_equal(read(out[0], buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "ready\n", 6);
	close(out[0]);
	/* It ignores SIGTERM: SIGKILL after the grace period. */
	assert_int_equal(ms_child_terminate(l.pid, SIGTERM, 100, &status), 0);
	assert_int_equal(ms_exit_code_of(status), 128 + SIGKILL);
}

/* For --stream-stats: what the switch events wrote. */
#define SWITCH_IDS_MAX 65536
static uint64_t switch_ids[SWITCH_IDS_MAX];
static uint32_t n_switch_ids;
static struct ms_tracepoint tracepoint;
static int state_at = -1, prev_pid_at = -1;
static uint64_t switch_outs[1 << 22], switches[2][1 << 22], states[0x200];
static uint64_t kernel_lost;
static uint64_t n_switch_outs, other_thread, unreadable, unknown_switch_ids, switch_out_bytes;

static bool is_switch_id(uint64_t id)
{
	for (uint32_t i = 0; i < n_switch_ids; i++)
		if (switch_ids[i] == id)
			return true;
	return false;
}

/*
 * A sample of a switch event: counted for its tid, its RAW read with the
 * TRACEPOINT record's offsets (ms-collect's layout: IP TID TIME ID CPU
 * PERIOD CALLCHAIN RAW): prev_state counted, prev_pid checked.
 */
static void switch_out(const struct ms_raw *raw, uint32_t tid)
{
	size_t at = 8 + 6 * 8;	/* header, IP TID TIME ID CPU PERIOD */
	uint64_t nr, state = 0;
	uint32_t raw_size;
	int32_t prev_pid;

	n_switch_outs++;
	switch_out_bytes += raw->len;
	if (tid < (1u << 22))
		switch_outs[tid]++;
	if (raw->len < at + 8)
		goto bad;
	memcpy(&nr, raw->data + at, 8);
	if (nr > raw->len / 8)
		goto bad;
	at += 8 + nr * 8;
	if (raw->len < at + 4)
		goto bad;
	memcpy(&raw_size, raw->data + at, 4);
	at += 4;
	if (state_at < 0 || prev_pid_at < 0 || raw_size > raw->len - at ||
	    (size_t)state_at + 8 > raw_size || (size_t)prev_pid_at + 4 > raw_size)
		goto bad;
	memcpy(&state, raw->data + at + state_at, 8);
	memcpy(&prev_pid, raw->data + at + prev_pid_at, 4);
	states[state < 0x200 ? state : 0x1ff]++;
	if ((uint32_t)prev_pid != tid)
		other_thread++;
	return;
bad:
	unreadable++;
}

/*
 * Not a test: `collect-test --stream-stats < STREAM` prints what an
 * ms-collect stream holds, one fact per line, for the bats tests (which
 * must not depend on ms-decode): record kinds, kernel record types, samples
 * per tid (raw, and typed after ms-decode), forks, comm names, target,
 * lost counts, problems, the trailer.
 * Exits 0 for a complete stream, 3 when cut short, 1 when malformed.
 */
static int stream_stats(void)
{
	struct ms_reader *r = ms_reader_open(0, "stdin");
	struct ms_record rec;
	static uint64_t kinds[64], types[32], per_tid[1 << 22], decoded[1 << 22];
	static struct ms_sample sample;
	uint64_t records = 0;
	int got;

	if (!r)
		return 1;
	while ((got = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		records++;
		if (rec.kind < 64)
			kinds[rec.kind]++;
		if (rec.kind == MS_REC_RAW) {
			struct ms_raw raw;
			struct perf_event_header h;
			uint32_t v[4];

			if (ms_raw_unpack(&rec, &raw) < 0 || raw.len < sizeof(h))
				return 1;
			memcpy(&h, raw.data, sizeof(h));
			if (h.type < 32)
				types[h.type]++;
			/* Samples start with IP then pid, tid (this stage's layout). */
			if (h.type == PERF_RECORD_SAMPLE && raw.len >= 40) {
				uint64_t id;

				memcpy(v, raw.data + 16, 8);
				memcpy(&id, raw.data + 32, 8);	/* IP TID TIME, then ID */
				if (is_switch_id(id))
					switch_out(&raw, v[1]);
				else if (v[1] < (1u << 22))
					per_tid[v[1]]++;
			} else if (h.type == PERF_RECORD_SWITCH && raw.len >= 40) {
				uint64_t id;

				/* The sample_id trailer: pid, tid, time, id, cpu. */
				memcpy(v, raw.data + raw.len - 32, 8);
				memcpy(&id, raw.data + raw.len - 16, 8);
				if (!is_switch_id(id))
					unknown_switch_ids++;
				if (v[1] < (1u << 22))
					switches[h.misc & PERF_RECORD_MISC_SWITCH_OUT ? 1 : 0][v[1]]++;
			} else if (h.type == PERF_RECORD_LOST && raw.len >= 24) {
				uint64_t n;

				memcpy(&n, raw.data + 16, 8);	/* id, then lost */
				kernel_lost += n;
			} else if (h.type == PERF_RECORD_FORK && raw.len >= 24) {
				memcpy(v, raw.data + 8, 16);
				printf("fork pid %u ppid %u tid %u\n", v[0], v[1], v[2]);
			} else if (h.type == PERF_RECORD_COMM && raw.len > 16) {
				memcpy(v, raw.data + 8, 8);
				printf("comm tid %u %.*s\n", v[1], (int)strnlen((const char *)raw.data + 16,
						raw.len - 16), (const char *)raw.data + 16);
			}
		} else if (rec.kind == MS_REC_SAMPLE) {
			/* After ms-decode: typed samples. */
			if (ms_sample_unpack(&rec, &sample) < 0)
				return 1;
			if (sample.tid < (1u << 22))
				decoded[sample.tid]++;
		} else if (rec.kind == MS_REC_TARGET) {
			struct ms_target t;

			if (ms_target_unpack(&rec, &t) < 0)
				return 1;
			printf("target pid %u launched %d argc %u\n", t.pid, t.launched, t.argc);
		} else if (rec.kind == MS_REC_TARGET_EXIT) {
			struct ms_target_exit t;

			if (ms_target_exit_unpack(&rec, &t) < 0)
				return 1;
			printf("target-exit pid %u code %u\n", t.pid, t.exit_code);
		} else if (rec.kind == MS_REC_COMM) {
			struct ms_comm c;

			if (ms_comm_unpack(&rec, &c) < 0)
				return 1;
			printf("synth-comm tid %u %.*s synthesized %d\n", c.tid, (int)c.comm.len,
			       c.comm.ptr, c.synthesized);
		} else if (rec.kind == MS_REC_MMAP) {
			struct ms_mmap m;

			if (ms_mmap_unpack(&rec, &m) < 0)
				return 1;
			printf("synth-mmap %.*s synthesized %d\n", (int)m.filename.len,
			       m.filename.ptr, m.synthesized);
		} else if (rec.kind == MS_REC_LOST) {
			struct ms_lost l;

			if (ms_lost_unpack(&rec, &l) < 0)
				return 1;
			printf("lost source %u count %llu\n", l.source, (unsigned long long)l.count);
		} else if (rec.kind == MS_REC_PROBLEM) {
			struct ms_problem p;

			if (ms_problem_unpack(&rec, &p) < 0)
				return 1;
			printf("problem %.*s %llu\n", (int)p.code.len, p.code.ptr,
			       (unsigned long long)p.count);
		} else if (rec.kind == MS_REC_INFO) {
			struct ms_info i;

			if (ms_info_unpack(&rec, &i) < 0)
				return 1;
			if (i.is_text)
				printf("info %.*s %.*s\n", (int)i.key.len, i.key.ptr,
				       (int)i.text.len, i.text.ptr);
			else
				printf("info %.*s %llu\n", (int)i.key.len, i.key.ptr,
				       (unsigned long long)i.number);
		} else if (rec.kind == MS_REC_ATTR) {
			struct ms_attr *a = malloc(sizeof(*a));

			if (!a || ms_attr_unpack(&rec, a) < 0)
				return 1;
			printf("attr ids %u sample_type %#llx flags %#x\n", a->n_ids,
			       (unsigned long long)a->sample_type, a->flags);
			printf("attr-type %u config %llu ids %u stack %u\n", a->type,
			       (unsigned long long)a->config, a->n_ids, a->sample_stack_user);
			if (a->type == PERF_TYPE_TRACEPOINT)
				for (uint32_t i = 0; i < a->n_ids && n_switch_ids < SWITCH_IDS_MAX; i++)
					switch_ids[n_switch_ids++] = a->ids[i];
			free(a);
		} else if (rec.kind == MS_REC_TRACEPOINT) {
			if (ms_tracepoint_unpack(&rec, &tracepoint) < 0)
				return 1;
			printf("tracepoint %.*s config %llu fields %u\n", (int)tracepoint.name.len,
			       tracepoint.name.ptr, (unsigned long long)tracepoint.config,
			       tracepoint.n_fields);
			for (uint32_t i = 0; i < tracepoint.n_fields; i++) {
				if (tracepoint.fields[i].len == 10 &&
				    !memcmp(tracepoint.fields[i].ptr, "prev_state", 10))
					state_at = (int)tracepoint.offsets[i];
				if (tracepoint.fields[i].len == 8 &&
				    !memcmp(tracepoint.fields[i].ptr, "prev_pid", 8))
					prev_pid_at = (int)tracepoint.offsets[i];
			}
		}
	}
	for (uint32_t k = 0; k < 64; k++)
		if (kinds[k])
			printf("kind %s %llu\n", ms_record_kind_name(k), (unsigned long long)kinds[k]);
	for (uint32_t t = 0; t < 32; t++)
		if (types[t])
			printf("raw-type %u %llu\n", t, (unsigned long long)types[t]);
	for (uint32_t t = 0; t < (1u << 22); t++)
		if (per_tid[t])
			printf("samples tid %u %llu\n", t, (unsigned long long)per_tid[t]);
	for (uint32_t t = 0; t < (1u << 22); t++)
		if (switch_outs[t])
			printf("switch-outs tid %u %llu\n", t, (unsigned long long)switch_outs[t]);
	for (uint32_t t = 0; t < (1u << 22); t++)
		if (switches[0][t] || switches[1][t])
			printf("switches tid %u out %llu in %llu\n", t,
			       (unsigned long long)switches[1][t], (unsigned long long)switches[0][t]);
	for (uint32_t i = 0; i < 0x200; i++)
		if (states[i])
			printf("switch-out-state %#x %llu\n", i, (unsigned long long)states[i]);
	if (n_switch_outs)
		printf("switch-outs-of-another-thread %llu\nswitch-outs-unreadable %llu\n"
		       "switch-out-bytes %llu\n", (unsigned long long)other_thread,
		       (unsigned long long)unreadable, (unsigned long long)switch_out_bytes);
	if (unknown_switch_ids)
		printf("switches-unknown-id %llu\n", (unsigned long long)unknown_switch_ids);
	for (uint32_t t = 0; t < (1u << 22); t++)
		if (decoded[t])
			printf("decoded-samples tid %u %llu\n", t, (unsigned long long)decoded[t]);
	printf("kernel-lost %llu\n", (unsigned long long)kernel_lost);
	printf("records %llu\n", (unsigned long long)records);
	if (got == MS_READ_END)
		printf("trailer complete %d\n", ms_reader_trailer(r)->complete);
	ms_reader_free(r);
	return got == MS_READ_END ? 0 : got == MS_READ_TRUNCATED ? 3 : 1;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_in_place),
		cmocka_unit_test(test_ring_wraps_through_bounce),
		cmocka_unit_test(test_ring_header_wraps),
		cmocka_unit_test(test_ring_many_passes),
		cmocka_unit_test(test_ring_peek_then_read),
		cmocka_unit_test(test_ring_snapshot_bounds_pass),
		cmocka_unit_test(test_ring_bad_sizes),
		cmocka_unit_test(test_ring_head_beyond_size),
		cmocka_unit_test(test_ring_pages_fit),
		cmocka_unit_test(test_maps_file),
		cmocka_unit_test(test_maps_anonymous),
		cmocka_unit_test(test_maps_named_regions),
		cmocka_unit_test(test_maps_odd_paths),
		cmocka_unit_test(test_maps_malformed),
		cmocka_unit_test(test_maps_read_self),
		cmocka_unit_test(test_tasks_self),
		cmocka_unit_test(test_tasks_gone),
		cmocka_unit_test(test_cpu_lists),
		cmocka_unit_test(test_parse_numbers),
		cmocka_unit_test(test_collect_check),
		cmocka_unit_test(test_attr_records_switches),
		cmocka_unit_test(test_event_lookup),
		cmocka_unit_test(test_attr_records_split),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_launch_runs_at_gate),
		cmocka_unit_test(test_launch_not_found),
		cmocka_unit_test(test_launch_abort),
		cmocka_unit_test(test_terminate_ignoring_child),
	};

	if (argc > 1 && !strcmp(argv[1], "--stream-stats"))
		return stream_stats();
	return cmocka_run_group_tests(tests, NULL, NULL);
}

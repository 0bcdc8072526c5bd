/*
 * mkstream: write a synthetic record stream on stdout, for the ms-capture
 * tests (the stages that make real streams are tested on their own).
 *
 *   mkstream [--samples N] [--reverse] [--no-trailer] [--incomplete]
 *            [--major N] [--oversize] [--lines] [--deferred] [--duty]
 *            [--no-lost] [--off-cpu] [--jit] [--jit-object]
 *
 * The stream holds every kind ms-capture uses (info, target, comm, fork,
 * exit, module, frame, stack, lost, throttle, problem, target exit) and
 * some it ignores (attr, round, sample, mmap). --reverse writes the same
 * stacks in the opposite order, which must give the same capture.
 * --no-trailer stops where a killed producer would; --incomplete writes a
 * trailer that says an upstream stage salvaged the stream. --major N
 * writes only a header of that stream version; --oversize a header and a
 * record larger than any reader takes. --lines gives burn_60's frames and
 * main's an inline chain (burn_60 inlines burn_inner); --deferred writes no
 * frame facts and the info symbolize=deferred, as
 * `microscope record --symbolize=deferred` does. --duty writes the duty
 * records of a recording held to a budget of 2% of one CPU (DUTY below),
 * each right before the stack at its time, as ms-decode orders them.
 * --no-lost leaves out the two lost records (a recording that lost
 * nothing), which ms-capture otherwise keeps as loss rows (format 1.4).
 * --off-cpu adds what `microscope record --off-cpu` records (OFF_CPU below):
 * the info "off-cpu", a switch-out stack (stack-def 0), off-cpu and switch
 * records of four threads, and a tracepoint and a switch-out record that
 * ms-capture does not hold (counted as ignored).
 * --jit adds what a recording of a JIT writing a perf map holds (JIT
 * below): a perf-map module with its base, its functions' jit-func
 * records (ignored by ms-capture, counted), the frame facts ms-unwind
 * writes for it, samples whose innermost frame is in it, and jit-read
 * records of two processes, the later of process 1000 replacing the
 * earlier.
 * --jit-object adds what a recording of a JIT registering objects through
 * the GDB JIT interface holds (JIT_OBJECT below): a jit-object module with
 * its base, the object's jit-object records (its chunks and its
 * unregistration, ignored by ms-capture, counted), the frame facts
 * ms-unwind writes for it (one address in no symbol of it), samples whose
 * innermost frame is in it, and a problem of ms-collect (a process gone
 * before its objects were read).
 */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <msgpack.h>

#include "stream/protocols.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })

static struct ms_writer *w;

static void check(int rc)
{
	if (rc < 0)
		exit(1);
}

static void write_raw(const char *buf, size_t len)
{
	if (write(1, buf, len) != (ssize_t)len) {
		perror("mkstream: write");
		exit(1);
	}
}

/* A header of another major version, written by hand (the writer won't). */
static void header_major(unsigned major)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 5);
	msgpack_pack_uint32(&pk, MS_REC_HEADER);
	msgpack_pack_str_with_body(&pk, MS_STREAM_MAGIC, strlen(MS_STREAM_MAGIC));
	msgpack_pack_uint32(&pk, major);
	msgpack_pack_uint32(&pk, 0);
	msgpack_pack_array(&pk, 1);
	msgpack_pack_array(&pk, 2);
	msgpack_pack_str_with_body(&pk, "mkstream", 8);
	msgpack_pack_str_with_body(&pk, "1", 1);
	msgpack_pack_array(&pk, 2);
	msgpack_pack_uint32(&pk, MS_REC_TRAILER);
	msgpack_pack_uint32(&pk, 0);
	write_raw(sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
}

/* [11, 0, bin of 200 KiB]: over MS_RECORD_MAX. */
static void oversize(void)
{
	size_t n = 200 * 1024;
	char *zeros = calloc(1, n);
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 3);
	msgpack_pack_uint32(&pk, MS_REC_RAW);
	msgpack_pack_uint32(&pk, 0);
	msgpack_pack_bin_with_body(&pk, zeros, n);
	write_raw(sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	free(zeros);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_random(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33);
}

static void info_text(const char *key, const char *value)
{
	struct ms_info i = { { key, strlen(key) }, true, { value, strlen(value) }, 0 };

	check(ms_info_pack(w, &i));
}

static void info_number(const char *key, uint64_t value)
{
	struct ms_info i = { { key, strlen(key) }, false, { "", 0 }, value };

	check(ms_info_pack(w, &i));
}

static void module(uint32_t id, uint32_t kind, struct ms_str path, uint8_t build_id_byte)
{
	struct ms_module m;

	memset(&m, 0, sizeof(m));
	m.id = id;
	m.kind = kind;
	m.path = path;
	if (build_id_byte) {
		m.build_id_len = 20;
		memset(m.build_id, build_id_byte, 20);
	}
	m.dev_maj = 8;
	m.dev_min = 1;
	m.ino = 1000 + id;
	m.size = 4096 * (id + 1);
	m.mtime = 1700000000 + id;
	check(ms_module_pack(w, &m));
}

static bool with_lines;
static bool with_jit;
static bool with_jit_object;

/*
 * --jit: process 1000's perf map names two functions in one anonymous
 * range, module 3 (its base JIT_BASE); every eleventh sample runs in the
 * first, called from burn_10's caller. Process 1000's map was read twice
 * (bounded, then to its end: the later counts are its totals); process
 * 1005's map was older than the process (stale).
 */
#define JIT_BASE 0x7f0000100000ull
#define JIT_MAP "/tmp/perf-1000.map"

static void jit_records(void)
{
	struct ms_module m;
	struct ms_jit_func fn = { 1000, 4500000000ull, JIT_BASE, JIT_BASE + 0x40,
				  S("py::spin:/srv/app.py"), MS_JIT_PERF_MAP, 1, 0,
				  (const uint8_t *)"\x01", 1 };
	struct ms_jit_read r = { 1000, 4500000000ull, S(JIT_MAP), MS_JIT_READ_BOUNDED, 0,
				 16u << 20, 1, 0, 0, 0, 0, 64 };
	struct ms_frame f;

	memset(&m, 0, sizeof(m));
	m.id = 3;
	m.kind = MS_MODULE_PERF_MAP;
	m.path = S(JIT_MAP);
	m.size = 0x100;
	m.base = JIT_BASE;
	check(ms_module_pack(w, &m));
	check(ms_jit_func_pack(w, &fn));
	check(ms_jit_read_pack(w, &r));
	fn = (struct ms_jit_func){ 1000, 4600000000ull, JIT_BASE + 0x40, JIT_BASE + 0x100,
				   S("py::idle:/srv/app.py"), MS_JIT_PERF_MAP, 2, MS_JIT_NO_CODE,
				   NULL, 0 };
	check(ms_jit_func_pack(w, &fn));
	r = (struct ms_jit_read){ 1000, 4600000000ull, S(JIT_MAP), MS_JIT_READ_OK, 0,
				  (16u << 20) + 4096, 2, 3, 1, 1, 0, 64 };
	check(ms_jit_read_pack(w, &r));
	r = (struct ms_jit_read){ 1005, 4700000000ull, S("/tmp/perf-1005.map"),
				  MS_JIT_READ_STALE, 0, 0, 0, 0, 0, 0, 0, 0 };
	check(ms_jit_read_pack(w, &r));
	/* the names ms-unwind gives the frames, as the map said when it was read */
	memset(&f, 0, sizeof(f));
	f.module = 3;
	f.address = JIT_BASE + 0x10;
	f.name = S("py::spin:/srv/app.py");
	f.symbol_start = JIT_BASE;
	f.reason = MS_SYM_OK;
	check(ms_frame_pack(w, &f));
}

static void set_line(struct ms_frame_line *l, const char *function, uint32_t line,
		     uint32_t function_line)
{
	l->function = (struct ms_str){ function, strlen(function) };
	l->system_name = (struct ms_str){ "", 0 };
	l->file = S("/src/burn.c");
	l->line = line;
	l->function_line = function_line;
}

static void frame(uint32_t module_id, uint64_t address, const char *name, uint64_t start,
		  uint32_t reason)
{
	static struct ms_frame f;

	memset(&f, 0, sizeof(f));
	f.module = module_id;
	f.address = address;
	f.name = (struct ms_str){ name, strlen(name) };
	f.symbol_start = start;
	f.reason = reason;
	if (with_lines && module_id == 0 && !strcmp(name, "burn_60")) {
		/* burn_inner inlined into burn_60 */
		set_line(&f.lines[0], "burn_inner", 21, 20);
		set_line(&f.lines[1], "burn_60", 31, 30);
		f.n_lines = 2;
	} else if (with_lines && module_id == 0 && !strcmp(name, "main")) {
		set_line(&f.lines[0], "main", 51, 50);
		f.n_lines = 1;
	}
	check(ms_frame_pack(w, &f));
}

/* Functions of module 0 by weight, like the burn fixture. */
/*
 * --off-cpu: thread 1001 sleeps from 5.2 s to 5.5 s (a complete interval),
 * 1004, never forked, first comes back at 5.3 s (off CPU since before the
 * recording), 1002 is preempted from 5.6 s to 5.61 s (its sched_switch
 * sample lost: the switch record alone), 1000 blocks at 5.9 s and the
 * kernel's loss at 6 s gives its end up (with --no-lost, it is still off
 * CPU at the end), and 1001 sleeps again at 6.05 s until the end.
 */
static void switch_record(uint32_t tid, uint64_t time, bool out, bool preempt)
{
	struct ms_switch sw = { 1000, tid, time, tid % 2, out, preempt };

	check(ms_switch_pack(w, &sw));
}

static void off_cpu(uint32_t tid, uint64_t time, uint64_t state, uint32_t cause)
{
	struct ms_off_cpu o = { 1000, tid, time, tid % 2, state, cause, 0 };

	check(ms_off_cpu_pack(w, &o));
	switch_record(tid, time + 300, true, false);
}

static void off_cpu_before_losses(void)
{
	struct ms_stack *st = calloc(1, sizeof(*st));
	struct ms_tracepoint *tp = calloc(1, sizeof(*tp));
	struct ms_switch_out *so = calloc(1, sizeof(*so));

	tp->name = S("sched:sched_switch");
	check(ms_tracepoint_pack(w, tp));
	so->sample.pid = 1000;
	so->sample.tid = 1001;
	so->state = 1;
	so->cause = MS_CAUSE_SLEEPING;
	check(ms_switch_out_pack(w, so));
	/* the stack they left with: in nanosleep's caller, burn_10 */
	st->pid = 1000;
	st->tid = 1001;
	st->reason = MS_END_FP_CHAIN;
	st->frames[0] = (struct ms_stack_frame){ 0, 0, 0x1300 };
	st->frames[1] = (struct ms_stack_frame){ 0, MS_FRAME_RETURN, 0x1034 + 16 };
	st->frames[2] = (struct ms_stack_frame){ 2, MS_FRAME_RETURN, 0x29d90 };
	st->n_frames = 3;
	check(ms_stack_def_pack(w, 0, st));
	off_cpu(1001, 5200000000ull, 1, MS_CAUSE_SLEEPING);
	switch_record(1004, 5300000000ull, false, false);
	switch_record(1001, 5500000000ull, false, false);
	switch_record(1002, 5600000000ull, true, true);
	switch_record(1002, 5610000000ull, false, false);
	off_cpu(1000, 5900000000ull, 2, MS_CAUSE_BLOCKED);
	free(st);
	free(tp);
	free(so);
}

static void off_cpu_after_losses(void)
{
	off_cpu(1001, 6050000000ull, 1, MS_CAUSE_SLEEPING);
}

/*
 * --jit-object: process 1000 registered one object (entry JO_ENTRY, its
 * image of 192 bytes at JO_IMAGE) whose code, module 4, is
 * [JO_BASE, JO_BASE + 0x40): jit_leaf at its start, 0x21 bytes, and
 * nothing named past it. Of every thirteen samples one runs in jit_leaf
 * (at +0x11) and one at +0x38, called from burn_10's caller.
 */
#define JO_BASE 0x7f2000001000ull
#define JO_ENTRY 0x55d0c0a02e80ull
#define JO_IMAGE 0x55d0c0b00000ull
#define JO_PATH "[jit-object 0x55d0c0a02e80]"

static void jit_object_records(void)
{
	static const uint8_t image[192] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	struct ms_jit_object o = { 1000, 4800000000ull, JO_ENTRY, JO_IMAGE, sizeof(image), 0,
				   image, 128 };
	struct ms_module m;
	struct ms_frame f;

	check(ms_jit_object_pack(w, &o));
	o.offset = 128;
	o.chunk = image + 128;
	o.chunk_len = sizeof(image) - 128;
	check(ms_jit_object_pack(w, &o));
	memset(&m, 0, sizeof(m));
	m.id = 4;
	m.kind = MS_MODULE_JIT_OBJECT;
	m.path = S(JO_PATH);
	m.size = 0x40;
	m.base = JO_BASE;
	check(ms_module_pack(w, &m));
	memset(&f, 0, sizeof(f));
	f.module = 4;
	f.address = JO_BASE + 0x11;
	f.name = S("jit_leaf");
	f.symbol_start = JO_BASE;
	f.reason = MS_SYM_OK;
	check(ms_frame_pack(w, &f));
	memset(&f, 0, sizeof(f));
	f.module = 4;
	f.address = JO_BASE + 0x38;
	f.reason = MS_SYM_NO_SYMBOL;
	check(ms_frame_pack(w, &f));
	/* unregistered later: the code stays the module's for the samples before */
	o = (struct ms_jit_object){ 1000, 6200000000ull, JO_ENTRY, 0, 0, 0, NULL, 0 };
	check(ms_jit_object_pack(w, &o));
}

static const struct {
	const char *name;
	uint64_t start;
} funcs[] = {
	{ "burn_60", 0x1100 }, { "burn_30", 0x1200 }, { "burn_10", 0x1300 },
};

static void make_stack(struct ms_stack *s, uint32_t i)
{
	static const uint32_t tids[] = { 1000, 1001, 1002 };
	uint32_t r = next_random() % 100, f = r < 60 ? 0 : r < 90 ? 1 : 2, n = 0;
	bool jitted = true;	/* a JIT frame under the leaf's, which returns to it */

	memset(s, 0, sizeof(*s));
	s->pid = 1000;
	s->tid = tids[next_random() % 3];
	s->time = 5000000000ull + (uint64_t)i * 1001000;
	s->cpu = next_random() % 2;
	s->period = 1001000;
	s->reason = MS_END_FP_CHAIN;
	if (i % 17 == 5) {
		/* A kernel thread's sample: no user frames. */
		s->reason = MS_END_KERNEL_ONLY;
		return;
	}
	if (i % 7 == 3) {
		s->frames[n++] = (struct ms_stack_frame){ 1, MS_FRAME_KERNEL, 0xffffffff81000010ull };
	}
	if (i % 23 == 11) {
		/* An address in no module, and a module id never described. */
		s->frames[n++] = (struct ms_stack_frame){ UINT32_MAX, 0, 0x7f0000001234ull };
		s->frames[n++] = (struct ms_stack_frame){ 7, MS_FRAME_RETURN, 0x42 };
		s->reason = MS_END_NO_MODULE;
	}
	/* the JIT function called from the leaf: its caller's frame is a return address */
	if (with_jit && i % 11 == 4)
		s->frames[n++] = (struct ms_stack_frame){ 3, 0, JIT_BASE + 0x10 };
	else if (with_jit_object && (i % 13 == 6 || i % 13 == 9))
		s->frames[n++] = (struct ms_stack_frame){ 4, 0, JO_BASE + (i % 13 == 6 ? 0x11 : 0x38) };
	else
		jitted = false;
	s->frames[n] = (struct ms_stack_frame){ 0, jitted ? MS_FRAME_RETURN : 0,
						funcs[f].start + 4 * (next_random() % 8) };
	n++;
	s->frames[n++] = (struct ms_stack_frame){ 0, MS_FRAME_RETURN, 0x1034 + 8 * f };
	s->frames[n++] = (struct ms_stack_frame){ 2, MS_FRAME_RETURN, 0x29d90 };
	s->n_frames = n;
}

/*
 * --duty: at these sample indexes (when there are that many) the duty
 * changes to duty_ppm: halved, quartered, then back to always on.
 */
static const struct {
	uint32_t at;
	uint32_t duty_ppm, share_ppm;
} duty_changes[] = {
	{ 25, 500000, 31000 }, { 50, 250000, 24000 }, { 75, 1000000, 9000 },
};
#define N_DUTY (sizeof(duty_changes) / sizeof(duty_changes[0]))

/* The duty records due right before stack i (times as make_stack's). */
static void duty_before(uint32_t i)
{
	for (uint32_t k = 0; k < N_DUTY; k++)
		if (duty_changes[k].at == i) {
			struct ms_duty d = {
				.time = 5000000000ull + (uint64_t)i * 1001000,
				.duty_ppm = duty_changes[k].duty_ppm,
				.rate = 999ull * duty_changes[k].duty_ppm / 1000000,
				.share_ppm = duty_changes[k].share_ppm,
				.budget_ppm = 20000,
			};

			check(ms_duty_pack(w, &d));
		}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "samples", required_argument, NULL, 'n' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "no-trailer", no_argument, NULL, 't' },
		{ "incomplete", no_argument, NULL, 'i' },
		{ "major", required_argument, NULL, 'm' },
		{ "oversize", no_argument, NULL, 'O' },
		{ "lines", no_argument, NULL, 'l' },
		{ "deferred", no_argument, NULL, 'd' },
		{ "duty", no_argument, NULL, 'D' },
		{ "no-lost", no_argument, NULL, 'L' },
		{ "off-cpu", no_argument, NULL, 'o' },
		{ "jit", no_argument, NULL, 'j' },
		{ "jit-object", no_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	bool reverse = false, trailer = true, complete = true, big = false, deferred = false;
	bool duty = false, lost_records = true, with_off_cpu = false;
	uint32_t n_samples = 100, i;
	int major = -1, c;
	struct ms_stack *stacks;
	struct ms_target t;
	struct ms_comm comm;
	struct ms_task task;
	struct ms_lost lost;
	struct ms_throttle th;
	struct ms_problem problem;
	struct ms_target_exit te;
	struct ms_sample *sample;

	ms_set_progname("mkstream");
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': n_samples = strtoul(optarg, NULL, 10); break;
		case 'r': reverse = true; break;
		case 't': trailer = false; break;
		case 'i': complete = false; break;
		case 'm': major = atoi(optarg); break;
		case 'O': big = true; break;
		case 'l': with_lines = true; break;
		case 'd': deferred = true; break;
		case 'D': duty = true; break;
		case 'L': lost_records = false; break;
		case 'o': with_off_cpu = true; break;
		case 'j': with_jit = true; break;
		case 'g': with_jit_object = true; break;
		default: return 2;
		}
	}
	if (major >= 0) {
		header_major(major);
		return 0;
	}
	w = ms_writer_open(1, "stdout", 0);
	if (!w)
		return 1;
	check(ms_writer_header(w, NULL, "mkstream", PACKAGE_VERSION));
	if (big) {
		check(ms_writer_flush(w));
		oversize();
		return 0;
	}
	info_text("hostname", "testhost");
	info_text("event", "cpu-clock");
	info_number("frequency", 999);
	if (deferred)
		info_text("symbolize", "deferred");
	if (with_off_cpu)
		info_text("off-cpu", "sched_switch tracepoint, context switches");

	memset(&t, 0, sizeof(t));
	t.pid = 1000;
	t.launched = true;
	t.argc = 3;
	t.argv[0] = S("./burn");
	t.argv[1] = S("--seconds");
	t.argv[2] = S("2");
	check(ms_target_pack(w, &t));
	check(ms_round_pack(w));

	comm = (struct ms_comm){ 1000, 1000, 4000000000ull, true, false, S("sh") };
	check(ms_comm_pack(w, &comm));
	comm.comm = S("burn");
	check(ms_comm_pack(w, &comm));
	task = (struct ms_task){ 1000, 1000, 1001, 1000, 4100000000ull };
	check(ms_task_pack(w, MS_REC_FORK, &task));
	task = (struct ms_task){ 1000, 1000, 1002, 1000, 4200000000ull };
	check(ms_task_pack(w, MS_REC_FORK, &task));
	comm = (struct ms_comm){ 1000, 1002, 4300000000ull, false, false, S("worker") };
	check(ms_comm_pack(w, &comm));
	/* A thread that never ran a sample. */
	task = (struct ms_task){ 1000, 1000, 1003, 1000, 4400000000ull };
	check(ms_task_pack(w, MS_REC_FORK, &task));
	check(ms_task_pack(w, MS_REC_EXIT, &task));

	/* Ignored by a capture v1, but counted. */
	sample = calloc(1, sizeof(*sample));
	sample->pid = 1000;
	sample->tid = 1000;
	for (i = 0; i < 3; i++)
		check(ms_sample_pack(w, sample));
	free(sample);

	module(0, MS_MODULE_FILE, S("/usr/bin/burn"), 0xab);
	module(1, MS_MODULE_KERNEL, S("[kernel.kallsyms]"), 0);
	module(2, MS_MODULE_FILE, S("/lib/x86_64-linux-gnu/libc.so.6"), 0xcd);
	for (i = 0; i < 3 && !deferred; i++)
		for (uint64_t a = funcs[i].start; a < funcs[i].start + 32; a += 4)
			frame(0, a, funcs[i].name, funcs[i].start, MS_SYM_OK);
	for (i = 0; i < 3 && !deferred; i++)
		frame(0, 0x1034 + 8 * i, "main", 0x1000, MS_SYM_OK);
	if (!deferred) {
		frame(2, 0x29d90, "__libc_start_call_main", 0x29d10, MS_SYM_OK);
		frame(1, 0xffffffff81000010ull, "", 0, MS_SYM_NO_FILE);
		frame(UINT32_MAX, 0x7f0000001234ull, "", 0, MS_SYM_NO_MODULE);
	}
	if (with_jit)
		jit_records();
	if (with_jit_object)
		jit_object_records();

	stacks = calloc(n_samples ? n_samples : 1, sizeof(*stacks));
	for (i = 0; i < n_samples; i++)
		make_stack(&stacks[i], i);
	for (i = 0; i < n_samples; i++) {
		uint32_t k = reverse ? n_samples - 1 - i : i;

		if (duty)
			duty_before(k);
		check(ms_stack_pack(w, &stacks[k]));
	}
	free(stacks);

	if (with_off_cpu)
		off_cpu_before_losses();
	if (lost_records) {
		lost = (struct ms_lost){ MS_LOST_KERNEL, 6000000000ull, 1, 3 };
		check(ms_lost_pack(w, &lost));
		lost = (struct ms_lost){ MS_LOST_COLLECTOR, 6000000001ull, 0, 2 };
		check(ms_lost_pack(w, &lost));
	}
	if (with_off_cpu)
		off_cpu_after_losses();
	for (i = 0; i < 4; i++) {
		th = (struct ms_throttle){ 6100000000ull + i, 1, i % 2 == 1 };
		check(ms_throttle_pack(w, &th));
	}
	problem = (struct ms_problem){ S("ms-decode"), S("truncated-sample"), 4,
				       S("the first at byte 1234") };
	check(ms_problem_pack(w, &problem));
	if (with_jit_object) {
		problem = (struct ms_problem){ S("ms-collect"), S("jit-process-gone"), 1,
					       S("pid 1007 ended before its JIT objects were read") };
		check(ms_problem_pack(w, &problem));
	}
	te = (struct ms_target_exit){ 1000, 0, 0 };
	check(ms_target_exit_pack(w, &te));

	if (trailer)
		check(ms_writer_trailer(w, complete));
	else
		check(ms_writer_flush(w));
	check(ms_writer_close(w));
	return 0;
}

/*
 * formats-mkcapture: write a synthetic capture straight through the
 * capture builder, for the formats tests and the formats benchmark.
 *
 *   formats-mkcapture [--samples N] [--threads T] [--lines] [--cut K] OUT.msc
 *
 * N samples (default 1000) spread over T threads (default 4) of one
 * process, 1 ms apart, with stacks 3 to 12 frames deep drawn from 64
 * functions in two modules (a pseudo-random but fixed sequence, so the
 * same arguments give the same file). Some samples have no frames (a
 * kernel thread's), some land in the kernel. Stacks are whole (they end
 * at the thread's entry); with --cut K, every K-th sample with frames
 * ends where its stack copy did instead (reason stack-copy). --lines
 * gives every frame source lines, with an inlined callee on some.
 *
 * --off-cpu FILE also writes FILE, the pprof of that capture with off-CPU
 * intervals added in memory (the .msc has none), of known durations, per
 * thread i (0-based), on the stack of the thread's first sample with
 * frames: 10 sleeping of (i + 1) * 100 us, 2 blocked of 300 us, 1
 * preempted of 50 us, one incomplete of each missing end (no duration);
 * and thread 0 sleeping 5 ms with no switch-out stack ("[no stack]").
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/builder.h"
#include "capture/capture.h"
#include "formats/formats.h"
#include "stream/records.h"
#include "util/error.h"

#define FUNCS 64

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static struct ms_str str(const char *s)
{
	return (struct ms_str){ s, (uint32_t)strlen(s) };
}

static void check(int rc)
{
	if (rc < 0)
		exit(1);
}

static int cmp_intervals(const void *a, const void *b)
{
	const struct ms_cap_interval *x = a, *y = b;
	uint64_t tx = x->start ? x->start : x->end, ty = y->start ? y->start : y->end;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* The pprof of cap with the off-CPU intervals of --off-cpu, to path. */
static int write_off_cpu(struct ms_capture *cap, const char *path)
{
	static struct ms_cap_evidence ev[] = {
		{ MS_CAUSE_SLEEPING, MS_EVIDENCE_STATE, 1, 0 },
		{ MS_CAUSE_BLOCKED, MS_EVIDENCE_STATE, 2, 0 },
		{ MS_CAUSE_PREEMPTED, MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH, 0x100, 1 },
		{ MS_CAUSE_UNKNOWN, 0, 0, 0 },
	};
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	uint32_t per = 15, n = 0, i, k;
	struct ms_cap_interval *iv = calloc((size_t)cap->n_threads * per + 1, sizeof(*iv));
	uint64_t t0 = 1000000000ull;
	int rc;

	if (!iv)
		return -1;
	for (i = 0; i < cap->n_threads; i++) {
		uint32_t stack = MS_NONE;
		uint64_t at = t0 + 250000;

		for (k = 0; k < cap->n_samples && stack == MS_NONE; k++)
			if (cap->samples[k].thread == i)
				stack = cap->samples[k].stack;
#define IV(s, e, ev_, miss) iv[n++] = (struct ms_cap_interval){ (s), (e), i, 0, stack, \
		MS_END_OUTERMOST, (miss), (ev_) }
		for (k = 0; k < 10; k++, at += 1000000)
			IV(at, at + (i + 1) * 100000ull, 0, MS_INTERVAL_COMPLETE);
		for (k = 0; k < 2; k++, at += 1000000)
			IV(at, at + 300000, 1, MS_INTERVAL_COMPLETE);
		IV(at, at + 50000, 2, MS_INTERVAL_COMPLETE);
		IV(0, t0 - 1, 3, MS_INTERVAL_BEGAN_INSIDE);
		IV(at + 1000000, 0, 0, MS_INTERVAL_ENDED_INSIDE);
#undef IV
	}
	iv[n++] = (struct ms_cap_interval){ t0 + 100, t0 + 100 + 5000000, 0, 0, MS_NONE,
					    MS_END_UNKNOWN, MS_INTERVAL_COMPLETE, 0 };
	qsort(iv, n, sizeof(*iv), cmp_intervals);
	cap->flags |= MS_CAPTURE_OFF_CPU;
	cap->intervals = iv;
	cap->n_intervals = n;
	cap->evidence = ev;
	cap->n_evidence = sizeof(ev) / sizeof(ev[0]);
	o.producer = "formats-mkcapture";
	rc = ms_export_file(path, cap, MS_FORMAT_PPROF, &o);
	/* the arrays are this program's, not the capture's storage */
	cap->intervals = NULL;
	cap->n_intervals = cap->n_evidence = 0;
	cap->evidence = NULL;
	free(iv);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "samples", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "lines", no_argument, NULL, 'l' },
		{ "cut", required_argument, NULL, 'c' },
		{ "off-cpu", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t n_samples = 1000;
	uint32_t n_threads = 4, cut = 0, i, k;
	bool lines = false;
	const char *off_cpu = NULL;
	struct ms_capture_builder *b;
	struct ms_capture *cap;
	struct ms_stack *st;
	struct ms_module m;
	struct ms_frame *f;
	static char names[FUNCS][32];
	int c;

	ms_set_progname("formats-mkcapture");
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': n_samples = strtoull(optarg, NULL, 10); break;
		case 't': n_threads = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'l': lines = true; break;
		case 'c': cut = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'o': off_cpu = optarg; break;
		default: return 2;
		}
	}
	if (optind + 1 != argc || !n_threads) {
		fprintf(stderr, "usage: formats-mkcapture [--samples N] [--threads T] [--lines] "
			"[--cut K] [--off-cpu PPROF] OUT.msc\n");
		return 2;
	}
	b = ms_capture_builder_new();
	st = calloc(1, sizeof(*st));
	f = calloc(1, sizeof(*f));
	if (!b || !st || !f)
		return 1;
	{
		struct ms_info info = { str("event"), true, str("cpu-clock"), 0 };
		struct ms_info freq = { str("frequency"), false, str(""), 1000 };
		struct ms_info cmd = { str("command"), true, str("./synthetic --work"), 0 };

		check(ms_capture_builder_info(b, &info));
		check(ms_capture_builder_info(b, &freq));
		check(ms_capture_builder_info(b, &cmd));
	}
	memset(&m, 0, sizeof(m));
	m.id = 0;
	m.kind = MS_MODULE_FILE;
	m.path = str("/opt/synthetic/bin/synthetic");
	m.build_id_len = 20;
	memset(m.build_id, 0x5a, 20);
	check(ms_capture_builder_module(b, &m));
	m.id = 1;
	m.path = str("/lib/x86_64-linux-gnu/libc.so.6");
	memset(m.build_id, 0xc3, 20);
	check(ms_capture_builder_module(b, &m));
	memset(&m, 0, sizeof(m));
	m.id = 2;
	m.kind = MS_MODULE_KERNEL;
	m.path = str("[kernel.kallsyms]");
	check(ms_capture_builder_module(b, &m));

	for (i = 0; i < FUNCS; i++) {
		snprintf(names[i], sizeof(names[i]), i < 56 ? "work_%02u" : "libc_%02u", i);
		memset(f, 0, sizeof(*f));
		f->module = i < 56 ? 0 : 1;
		f->address = 0x10000 + 0x100 * i;
		f->name = str(names[i]);
		f->symbol_start = f->address;
		if (lines) {
			f->n_lines = 1;
			if (i % 8 == 3) {
				/* an inlined callee first, then the function that holds it */
				f->lines[0] = (struct ms_frame_line){ str("inlined_helper"), str(""),
								      str("src/helper.h"), 12, 10 };
				f->n_lines = 2;
			}
			f->lines[f->n_lines - 1] = (struct ms_frame_line){
				str(names[i]), str(""), str("src/work.c"), 100 + 10 * i + 3, 100 + 10 * i };
		}
		check(ms_capture_builder_frame(b, f));
	}
	memset(f, 0, sizeof(*f));
	f->module = 2;
	f->address = 0xffffffff81000100ull;
	f->name = str("do_syscall_64");
	check(ms_capture_builder_frame(b, f));

	for (i = 0; i < n_threads; i++) {
		char name[32];
		struct ms_comm comm;

		snprintf(name, sizeof(name), i ? "worker-%u" : "synthetic", i);
		memset(&comm, 0, sizeof(comm));
		comm.pid = 4242;
		comm.tid = 4242 + i;
		comm.comm = str(name);
		check(ms_capture_builder_comm(b, &comm));
	}
	for (uint64_t s = 0; s < n_samples; s++) {
		uint32_t r = next_random(), depth = 3 + r % 10, n = 0;

		memset(st, 0, offsetof(struct ms_stack, frames));
		st->pid = 4242;
		st->tid = 4242 + (uint32_t)(s % n_threads);
		st->time = 1000000000ull + s * 1000000ull;
		st->cpu = (uint32_t)(s % 2);
		st->period = 1000000;
		st->reason = cut && s % cut == cut - 1 ? MS_END_STACK_COPY : MS_END_OUTERMOST;
		if (s % 97 == 13) {
			st->reason = MS_END_KERNEL_ONLY;
		} else {
			if (s % 11 == 5)
				st->frames[n++] = (struct ms_stack_frame){ 2, MS_FRAME_KERNEL,
									   0xffffffff81000100ull };
			/* innermost first: a hot leaf, then callers from a narrow set */
			for (k = 0; k < depth; k++) {
				uint32_t fn = k == 0 ? next_random() % FUNCS : (k * 7 + (r >> 8) % 4) % 56;

				st->frames[n++] = (struct ms_stack_frame){
					fn < 56 ? 0u : 1u, k ? MS_FRAME_RETURN : 0u,
					0x10000 + 0x100 * (uint64_t)fn };
			}
		}
		st->n_frames = n;
		check(ms_capture_builder_stack(b, st));
	}
	cap = ms_capture_builder_seal(b);
	if (!cap || ms_capture_write(cap, argv[optind]) < 0)
		return 1;
	if (off_cpu && write_off_cpu(cap, off_cpu) < 0)
		return 1;
	ms_capture_free(cap);
	free(st);
	free(f);
	return 0;
}

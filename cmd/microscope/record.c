/* microscope record: the stage pipeline from a live program to a capture. */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include "capture/capture.h"
#include "cmd/microscope/microscope.h"
#include "cmd/microscope/options.h"
#include "stream/stream.h"
#include "unwind/unwind.h"
#include "util/error.h"
#include "util/pipeline.h"
#include "util/publish.h"

#define DEFAULT_OUTPUT MS_DEFAULT_CAPTURE

/* Remove the temporary capture, if one was made: the output stays as it was. */
static void discard(struct ms_publish *pub)
{
	if (pub->tmp)
		ms_publish_abort(pub);
	pub->tmp = NULL;
}

/* What became of output after a failure, for the message. */
static const char *kept(const char *output, char *buf, size_t len)
{
	struct stat st;

	if (!stat(output, &st) && S_ISREG(st.st_mode))
		snprintf(buf, len, "'%s' was left as it was", output);
	else
		snprintf(buf, len, "no capture was written to '%s'", output);
	return buf;
}

static const char usage_record[] =
	"usage: microscope record [--preset NAME] [-o FILE] [-F HZ | -c PERIOD] [-e EVENT]\n"
	"                         [--stack-size BYTES] [--duration SECONDS] [--mmap-pages N]\n"
	"                         [--symbolize=immediate|deferred] [--unwind dwarf|fp|dwarf+fp]\n"
	"                         [--debug-dir DIR]... [--budget PCT|off] [--defer]\n"
	"                         [--off-cpu | --no-off-cpu] [--no-perf-map] [--print-options]\n"
	"                         [--no-jit-objects] [--python bpf|snapshot|off]\n"
	"                         [--python-interval MS]\n"
	"                         (-p PID | -- CMD ARGS...)\n"
	"\n"
	"      --preset NAME       a starting point the flags below override:\n"
	"%s"
	"  -o, --output FILE       capture to write (default " DEFAULT_OUTPUT ")\n"
	"  -F, --freq HZ           samples per second per thread\n"
	"  -c, --period PERIOD     sample every PERIOD nanoseconds of the event instead\n"
	"  -e, --event EVENT       cpu-clock (default) or task-clock\n"
	"      --stack-size BYTES  user stack bytes copied per sample (max 65528)\n"
	"      --duration SECONDS  stop after SECONDS (a launched program gets SIGTERM)\n"
	"      --mmap-pages N      ring buffer pages per CPU (power of two)\n"
	"  -p, --pid PID           attach to a running process and all its threads\n"
	"      --symbolize=WHEN    immediate (default): name the frames now; deferred:\n"
	"                          keep module identities and addresses only, for\n"
	"                          `microscope symbolize` later (here or elsewhere)\n"
	"      --unwind POLICY     user stacks from dwarf (call-frame information over\n"
	"                          the stack copy; the default with a copy), fp (the\n"
	"                          frame-pointer chain; the default without) or\n"
	"                          dwarf+fp (dwarf, continued by proved frame pointers)\n"
	"      --debug-dir DIR     look for debug files in DIR first (repeatable), for\n"
	"                          ms-unwind's call-frame information and ms-symbolize's\n"
	"                          names alike: DIR/.build-id/xx/rest.debug,\n"
	"                          DIR/DEBUGLINK, DIR/NAME.debug, DIR/NAME\n"
	"      --budget PCT|off    keep the recording's own CPU time under PCT %% of one\n"
	"                          CPU by sampling part of the time (off: the preset's\n"
	"                          budget dropped); off-CPU recording is never paused\n"
	"      --off-cpu           also record when and why each thread was off the CPU\n"
	"                          (sleeping, blocked, preempted) with the stack it left\n"
	"                          with, for off-CPU and wall-clock views (the wall\n"
	"                          preset); needs root. --no-off-cpu: the preset's dropped\n"
	"      --no-perf-map       read no JIT's perf map (/tmp/perf-PID.map): by default\n"
	"                          code a JIT names there (python3.12 -X perf, node\n"
	"                          --perf-basic-prof) is read when samples land in it\n"
	"      --no-jit-objects    read no object a JIT registered through the GDB JIT\n"
	"                          interface (LLVM's lli, CPython 3.15): by default they\n"
	"                          are copied when samples land in code nothing names\n"
	"      --python bpf|off    bpf: name the Python functions and lines each sample\n"
	"                          ran (CPython 3.11-3.13; a BPF program walks the\n"
	"                          frames as the sample is taken; the python preset);\n"
	"                          needs root, outside containers (the program may be\n"
	"                          in one). snapshot: no BPF; every --python-interval\n"
	"                          ms (1-1000, default 10) read each thread's Python\n"
	"                          frames from the process: snapshots beside native\n"
	"                          samples. off: the preset's dropped\n"
	"      --defer             while the program runs, only record (compressed, to a\n"
	"                          private file beside FILE); process after it ends\n"
	"      --print-options     print the options as they will be used, and stop\n"
	"\n"
	"The capture is written under a temporary name, made before the program\n"
	"starts, and renamed when complete; when the recording fails or the program\n"
	"cannot be started, an existing FILE is left as it was. A launched program\n"
	"keeps microscope's stdout and stderr, and its exit status becomes\n"
	"microscope's (128+N for a signal).\n"
	MS_EXIT_CODES_HELP;

static void print_usage(FILE *out)
{
	char presets[1024];
	size_t used = 0;

	presets[0] = '\0';
	for (size_t i = 0; i < ms_record_n_presets && used < sizeof(presets); i++)
		used += (size_t)snprintf(presets + used, sizeof(presets) - used,
					 "                            %-8s %s\n",
					 ms_record_presets[i].name, ms_record_presets[i].why);
	fprintf(out, usage_record, presets);
}

/* Argument vectors handed to the stages; built once, freed at exit. */
struct argv_builder {
	unsigned n;
	char *v[256];
};

static void push(struct argv_builder *a, const char *s)
{
	if (a->n + 1 >= sizeof(a->v) / sizeof(a->v[0]))
		ms_die(MS_EXIT_USAGE, "too many arguments: at most %zu are accepted",
		       sizeof(a->v) / sizeof(a->v[0]) - 2);
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

/*
 * Read back the capture made at path: 1 when the program never started
 * (ms-collect said so in the stream, and the capture keeps its problems),
 * 0 after the one-line summary for output, -1 after a message.
 */
static int check_written(const char *path, const char *output, bool off_cpu)
{
	struct ms_capture *cap = ms_capture_load(path);
	char intervals[64] = "", snapshots[96] = "";

	if (!cap)
		return -1;
	for (uint32_t i = 0; i < cap->n_problems; i++) {
		if (!strcmp(cap->strings[cap->problems[i].code], "target-not-started")) {
			ms_capture_free(cap);
			return 1;
		}
	}
	if (off_cpu)
		snprintf(intervals, sizeof(intervals), ", %u off-CPU interval%s", cap->n_intervals,
			 cap->n_intervals == 1 ? "" : "s");
	if (cap->n_tasks)
		snprintf(snapshots, sizeof(snapshots), ", %u snapshot%s of %u task%s (--unit snapshots)",
			 cap->n_waits, cap->n_waits == 1 ? "" : "s", cap->n_tasks,
			 cap->n_tasks == 1 ? "" : "s");
	fprintf(stderr, "microscope: wrote '%s': %u sample%s%s%s, %u thread%s%s\n", output,
		cap->n_samples, cap->n_samples == 1 ? "" : "s", intervals, snapshots, cap->n_threads,
		cap->n_threads == 1 ? "" : "s",
		cap->lost_kernel + cap->lost_collector ? " (some records were lost: see the report)" : "");
	ms_capture_free(cap);
	return 0;
}

/*
 * Where ms-capture writes: a temporary next to output, made now so that
 * a path that cannot be written fails before the program starts, and
 * renamed over output only when the recording succeeded (*pub); output
 * itself when it is not a regular file (a FIFO, a device: written in
 * place). NULL after a message.
 */
static const char *open_output(const char *output, struct ms_publish *pub)
{
	struct stat st;

	pub->tmp = NULL;
	pub->fd = -1;
	pub->path = NULL;
	if (!stat(output, &st) && S_ISDIR(st.st_mode)) {
		ms_error("cannot write the capture to '%s': it is a directory; "
			 "give a file name, e.g. -o '%s/" DEFAULT_OUTPUT "'", output, output);
		return NULL;
	}
	if (ms_publish_open(pub, output) < 0)
		return NULL;
	return pub->tmp ? pub->tmp : output;
}

/* The stages after ms-collect: decode, unwind, symbolize unless deferred, capture. */
static void add_processing(struct ms_pipeline *p, const struct ms_record_options *o,
			   struct argv_builder *decode, struct argv_builder *unwind,
			   struct argv_builder *symbolize, struct argv_builder *capture)
{
	p->stages[p->n++] = (struct ms_stage){ .name = "ms-decode", .argv = decode->v };
	p->stages[p->n++] = (struct ms_stage){ .name = "ms-unwind", .argv = unwind->v };
	if (!o->deferred)
		p->stages[p->n++] = (struct ms_stage){ .name = "ms-symbolize", .argv = symbolize->v };
	p->stages[p->n++] = (struct ms_stage){ .name = "ms-capture", .argv = capture->v };
}

/*
 * Run p to its end: -1 when every stage did its part, else the exit
 * status to leave with, after one message naming the stage that failed
 * (the temporary capture removed, the output left as it was).
 */
static int run_stages(struct ms_pipeline *p, bool source_is_target, const char *output,
		      struct ms_publish *pub)
{
	char what[256], msg[PATH_MAX + 64];
	int culprit, st;

	if (ms_pipeline_start(p)) {
		discard(pub);
		return MS_EXIT_ERROR;
	}
	ms_pipeline_wait(p);
	culprit = ms_pipeline_culprit(p, source_is_target);
	if (culprit < 0)
		return -1;
	ms_pipeline_describe(p, (unsigned)culprit, what, sizeof(what));
	st = p->stages[culprit].status;
	discard(pub);
	ms_error("recording failed: %s; %s", what, kept(output, msg, sizeof(msg)));
	if (WIFEXITED(st) && WEXITSTATUS(st) == MS_EXIT_USAGE)
		return MS_EXIT_USAGE;
	if (WIFEXITED(st) && WEXITSTATUS(st) == MS_EXIT_SYSTEM)
		return MS_EXIT_SYSTEM;
	return MS_EXIT_ERROR;
}

/*
 * --defer: while the program runs, only ms-collect, writing its stream
 * compressed to a private file beside the output; the other stages run
 * once it has ended, from that file, which is then removed. -1 when all
 * went well (*st: ms-collect's status), else the exit status after a message.
 */
static int record_then_process(const struct ms_record_options *o, struct argv_builder *collect,
			       struct argv_builder *decode, struct argv_builder *unwind,
			       struct argv_builder *symbolize, struct argv_builder *capture,
			       const char *output, struct ms_publish *pub, int *st)
{
	struct argv_builder head = { 0 };
	struct ms_pipeline p = { 0 };
	char raw[PATH_MAX], what[256], msg[PATH_MAX + 64], size[32];
	struct stat sb;
	int fd, rc;

	if ((size_t)snprintf(raw, sizeof(raw), "%s.raw-XXXXXX", output) >= sizeof(raw))
		return ms_error("the output path '%s' is too long", output), MS_EXIT_ERROR;
	/* 0600: a raw stream holds copies of the program's stack (ms-collect(1)). */
	if ((fd = mkostemp(raw, O_CLOEXEC)) < 0) {
		ms_error_errno("cannot create the raw stream next to '%s'", output);
		discard(pub);
		return MS_EXIT_ERROR;
	}
	close(fd);
	push(&head, "ms-collect");
	push(&head, "--lz4");
	push(&head, "-o");
	push(&head, raw);
	for (unsigned i = 0; i < collect->n; i++)
		push(&head, collect->v[i]);
	p.stages[p.n++] = (struct ms_stage){ .name = "ms-collect", .argv = head.v };
	if (ms_pipeline_start(&p)) {
		unlink(raw);
		discard(pub);
		return MS_EXIT_ERROR;
	}
	ms_pipeline_wait(&p);
	*st = p.stages[0].status;
	/* ms-collect publishes its file only whole: an empty one means it failed and said why. */
	if (stat(raw, &sb) < 0 || sb.st_size == 0) {
		unlink(raw);
		discard(pub);
		ms_pipeline_describe(&p, 0, what, sizeof(what));
		ms_error("recording failed: %s; %s", what, kept(output, msg, sizeof(msg)));
		return WIFEXITED(*st) && WEXITSTATUS(*st) == MS_EXIT_SYSTEM ? MS_EXIT_SYSTEM :
		       WIFEXITED(*st) && WEXITSTATUS(*st) == MS_EXIT_USAGE ? MS_EXIT_USAGE :
		       WIFEXITED(*st) && WEXITSTATUS(*st) >= 126 ? WEXITSTATUS(*st) : MS_EXIT_ERROR;
	}
	snprintf(size, sizeof(size), "%.1f MB", (double)sb.st_size / 1e6);
	fprintf(stderr, "microscope: the program ended; processing the recording (%s compressed)\n",
		size);
	p = (struct ms_pipeline){ 0 };
	push(decode, raw);
	add_processing(&p, o, decode, unwind, symbolize, capture);
	rc = run_stages(&p, false, output, pub);
	unlink(raw);
	return rc;
}

/* A number as a stage's argument: kept for the stages' lifetime. */
static const char *num(struct argv_builder *keep, uint64_t v)
{
	char buf[32], *s;

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	if (!(s = strdup(buf)))
		ms_die(MS_EXIT_ERROR, "out of memory");
	push(keep, s);
	return s;
}

/* What ms-collect is started with once the stages after it run (ms_pipeline.before_source). */
struct source_args {
	struct argv_builder *head, *collect, *keep;
	bool budget;
};

/*
 * ms-collect's argv, now that the later stages run: under a budget each
 * of them is named, so that their CPU time counts toward it.
 */
static void source_argv(struct ms_pipeline *p, void *arg)
{
	struct source_args *a = arg;

	push(a->head, "ms-collect");
	/* The stream leaves ms-collect on descriptor 3: the program keeps our stdout. */
	push(a->head, "--output-fd");
	push(a->head, "3");
	for (unsigned i = 1; a->budget && i < p->n; i++) {
		push(a->head, "--budget-pid");
		push(a->head, num(a->keep, (uint64_t)p->stages[i].pid));
	}
	for (unsigned i = 0; i < a->collect->n; i++)
		push(a->head, a->collect->v[i]);
}

int ms_front_record(int argc, char **argv)
{
	struct argv_builder collect = { 0 }, collect_head = { 0 }, decode = { 0 }, unwind = { 0 },
			    symbolize = { 0 }, capture = { 0 }, keep = { 0 };
	struct ms_record_options o;
	struct ms_pipeline p = { 0 };
	struct ms_publish pub;
	const char *output, *capture_path;
	char msg[PATH_MAX + 64], desc[512], duration[48], info[600], budget[32], interval[16];
	struct source_args source = { &collect_head, &collect, &keep, false };
	int st = 0, written, rc;
	bool attach;

	if (ms_record_options_parse(&o, argc, argv) < 0) {
		fputs("Try 'microscope record --help'.\n", stderr);
		return MS_EXIT_USAGE;
	}
	if (o.help) {
		print_usage(stdout);
		return MS_EXIT_OK;
	}
	ms_record_options_describe(&o, desc, sizeof(desc));
	if (o.print_options) {
		printf("%s\n", desc);
		return fflush(stdout) ? MS_EXIT_ERROR : MS_EXIT_OK;
	}
	output = o.output;
	attach = o.pid != 0;

	/* Each stage gets exactly what it needs; all of it was checked above. */
	if (o.period) {
		push(&collect, "-c");
		push(&collect, num(&keep, o.period));
	} else {
		push(&collect, "-F");
		push(&collect, num(&keep, o.freq));
	}
	push(&collect, "-e");
	push(&collect, o.event);
	push(&collect, "--stack-size");
	push(&collect, num(&keep, o.stack_size));
	if (o.mmap_pages) {
		push(&collect, "--mmap-pages");
		push(&collect, num(&keep, o.mmap_pages));
	}
	if (o.budget_ppm) {
		snprintf(budget, sizeof(budget), "%" PRIu32 ".%04" PRIu32, o.budget_ppm / 10000,
			 o.budget_ppm % 10000);
		push(&collect, "--budget");
		push(&collect, budget);
		source.budget = true;
	}
	if (o.off_cpu)
		push(&collect, "--off-cpu");
	if (o.no_perf_map)
		push(&collect, "--no-perf-map");
	if (o.no_jit_objects)
		push(&collect, "--no-jit-objects");
	if (o.python) {
		push(&collect, "--python");
		push(&collect, o.python == MS_RECORD_PYTHON_SNAPSHOT ? "snapshot" : "bpf");
	}
	if (o.python_interval_ms) {
		snprintf(interval, sizeof(interval), "%" PRIu32, o.python_interval_ms);
		push(&collect, "--python-interval");
		push(&collect, interval);
	}
	if (o.duration_ns) {
		snprintf(duration, sizeof(duration), "%" PRIu64 ".%09" PRIu64,
			 o.duration_ns / 1000000000u, o.duration_ns % 1000000000u);
		push(&collect, "--duration");
		push(&collect, duration);
	}
	if (attach) {
		push(&collect, "-p");
		push(&collect, num(&keep, (uint64_t)o.pid));
	} else {
		push(&collect, "--");
		for (char **a = o.argv; *a; a++)
			push(&collect, *a);
	}
	push(&decode, "ms-decode");
	push(&unwind, "ms-unwind");
	if (o.unwind != MS_UNWIND_AUTO) {
		push(&unwind, "--unwind");
		push(&unwind, ms_unwind_policy_name(o.unwind));
	}
	push(&symbolize, "ms-symbolize");
	/* Both stages get each one, in the order given. */
	for (unsigned i = 0; i < o.n_debug_dirs; i++) {
		push(&unwind, "--debug-dir");
		push(&unwind, o.debug_dirs[i]);
		push(&symbolize, "--debug-dir");
		push(&symbolize, o.debug_dirs[i]);
	}
	if (!(capture_path = open_output(output, &pub)))
		return MS_EXIT_ERROR;
	push(&capture, "ms-capture");
	push(&capture, "-o");
	push(&capture, capture_path);
	/* Deferred: no symbolize stage; the capture says why frames are bare. */
	if (o.deferred) {
		push(&capture, "--info");
		push(&capture, "symbolize=deferred");
	}
	/* The options as used, for ms-analyze summary. */
	snprintf(info, sizeof(info), "record-options=%s", desc);
	push(&capture, "--info");
	push(&capture, info);
	/* An empty input means ms-collect failed and said why: the others keep quiet. */
	setenv(MS_QUIET_EMPTY_INPUT, "1", 1);

	if (o.defer) {
		rc = record_then_process(&o, &collect, &decode, &unwind, &symbolize, &capture,
					 output, &pub, &st);
	} else {
		p.n = 0;
		p.stages[p.n++] = (struct ms_stage){ .name = "ms-collect", .argv = collect_head.v,
						     .out_fd = 3 };
		add_processing(&p, &o, &decode, &unwind, &symbolize, &capture);
		p.before_source = source_argv;
		p.before_source_arg = &source;
		rc = run_stages(&p, !attach, output, &pub);
		st = p.stages[0].status;
	}
	if (rc >= 0)
		return rc;
	/* The collector's status is the launched program's. */
	written = check_written(capture_path, output, o.off_cpu);
	if (written != 0) {
		discard(&pub);
		if (written > 0)
			ms_error("nothing was recorded: the program could not be started; %s",
				 kept(output, msg, sizeof(msg)));
		return written > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : MS_EXIT_ERROR;
	}
	if (pub.tmp && ms_publish_commit(&pub) < 0)
		return MS_EXIT_ERROR;
	return WIFEXITED(st) ? WEXITSTATUS(st) : MS_EXIT_ERROR;
}

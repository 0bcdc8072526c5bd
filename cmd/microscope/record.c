/* microscope record: the stage pipeline from a live program to a capture. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "capture/capture.h"
#include "cmd/microscope/microscope.h"
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
	"usage: microscope record [-o FILE] [-F HZ | -c PERIOD] [-e EVENT] [--stack-size BYTES]\n"
	"                         [--duration SECONDS] [--mmap-pages N]\n"
	"                         [--symbolize=immediate|deferred] [--unwind dwarf|fp|dwarf+fp]\n"
	"                         [--debug-dir DIR]... (-p PID | -- CMD ARGS...)\n"
	"\n"
	"  -o, --output FILE       capture to write (default " DEFAULT_OUTPUT ")\n"
	"  -F, --freq HZ           samples per second per thread (default 999)\n"
	"  -c, --period PERIOD     sample every PERIOD nanoseconds of the event instead\n"
	"  -e, --event EVENT       cpu-clock (default) or task-clock\n"
	"      --stack-size BYTES  user stack bytes copied per sample (default 8192, max 65528)\n"
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
	"\n"
	"The capture is written under a temporary name, made before the program\n"
	"starts, and renamed when complete; when the recording fails or the program\n"
	"cannot be started, an existing FILE is left as it was. A launched program\n"
	"keeps microscope's stdout and stderr, and its exit status becomes\n"
	"microscope's (128+N for a signal).\n"
	MS_EXIT_CODES_HELP;

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
static int check_written(const char *path, const char *output)
{
	struct ms_capture *cap = ms_capture_load(path);

	if (!cap)
		return -1;
	for (uint32_t i = 0; i < cap->n_problems; i++) {
		if (!strcmp(cap->strings[cap->problems[i].code], "target-not-started")) {
			ms_capture_free(cap);
			return 1;
		}
	}
	fprintf(stderr, "microscope: wrote '%s': %u samples, %u threads%s\n", output,
		cap->n_samples, cap->n_threads,
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

int ms_front_record(int argc, char **argv)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "freq", required_argument, NULL, 'F' },
		{ "period", required_argument, NULL, 'c' },
		{ "event", required_argument, NULL, 'e' },
		{ "pid", required_argument, NULL, 'p' },
		{ "stack-size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "symbolize", required_argument, NULL, 'S' },
		{ "unwind", required_argument, NULL, 'U' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* Recording flags are checked by ms-collect, which gets them as given. */
	static const char *const collect_short[256] = {
		['F'] = "-F", ['c'] = "-c", ['e'] = "-e", ['p'] = "-p",
	};
	static const char *const collect_long[256] = {
		['s'] = "--stack-size", ['d'] = "--duration", ['m'] = "--mmap-pages",
	};
	struct argv_builder collect = { 0 }, collect_head = { 0 }, decode = { 0 }, unwind = { 0 },
			    symbolize = { 0 }, capture = { 0 }, debug_dirs = { 0 };
	struct ms_pipeline p = { 0 };
	struct ms_publish pub;
	const char *output = DEFAULT_OUTPUT, *capture_path;
	char msg[PATH_MAX + 64];
	bool attach = false, deferred = false;
	const char *unwind_policy = NULL;
	char what[256];
	int c, culprit, st, written;

	push(&collect_head, "ms-collect");
	while ((c = getopt_long(argc, argv, "+o:F:c:e:p:h", options, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'F': case 'c': case 'e': case 'p':
			if (c == 'p')
				attach = true;
			push(&collect, collect_short[c]);
			push(&collect, optarg);
			break;
		case 's': case 'd': case 'm':
			push(&collect, collect_long[c]);
			push(&collect, optarg);
			break;
		case 'S':
			if (!strcmp(optarg, "deferred") || !strcmp(optarg, "immediate")) {
				deferred = optarg[0] == 'd';
				break;
			}
			ms_error("--symbolize wants immediate or deferred, not '%s'", optarg);
			fputs(usage_record, stderr);
			return MS_EXIT_USAGE;
		case 'U':
			if (ms_unwind_policy_parse(optarg) <= MS_UNWIND_AUTO) {
				ms_error("--unwind wants dwarf, fp or dwarf+fp, not '%s'", optarg);
				fputs(usage_record, stderr);
				return MS_EXIT_USAGE;
			}
			unwind_policy = optarg;
			break;
		case 'D':
			/* Both stages get each one, in the order given. */
			push(&debug_dirs, "--debug-dir");
			push(&debug_dirs, optarg);
			break;
		case 'h':
			fputs(usage_record, stdout);
			return MS_EXIT_OK;
		default:
			fputs(usage_record, stderr);
			return MS_EXIT_USAGE;
		}
	}
	if (attach == (optind < argc)) {
		ms_error("record needs either -p PID or -- CMD ARGS..., not %s",
			 attach ? "both" : "neither");
		fputs(usage_record, stderr);
		return MS_EXIT_USAGE;
	}
	if (!attach) {
		push(&collect, "--");
		for (int i = optind; i < argc; i++)
			push(&collect, argv[i]);
	}
	push(&decode, "ms-decode");
	push(&unwind, "ms-unwind");
	if (unwind_policy) {
		push(&unwind, "--unwind");
		push(&unwind, unwind_policy);
	}
	push(&symbolize, "ms-symbolize");
	for (unsigned i = 0; i < debug_dirs.n; i++) {
		push(&unwind, debug_dirs.v[i]);
		push(&symbolize, debug_dirs.v[i]);
	}
	if (!strcmp(output, "-")) {
		/* As microscope convert: stdout is the program's (see below). */
		ms_error("a capture is written to a file, not to stdout ('-'): give -o FILE");
		fputs(usage_record, stderr);
		return MS_EXIT_USAGE;
	}
	if (!(capture_path = open_output(output, &pub)))
		return MS_EXIT_ERROR;
	/* The stream leaves ms-collect on descriptor 3: a launched program keeps our stdout. */
	push(&collect_head, "--output-fd");
	push(&collect_head, "3");
	for (unsigned i = 0; i < collect.n; i++)
		push(&collect_head, collect.v[i]);
	push(&capture, "ms-capture");
	push(&capture, "-o");
	push(&capture, capture_path);
	/* Deferred: no symbolize stage; the capture says why frames are bare. */
	if (deferred) {
		push(&capture, "--info");
		push(&capture, "symbolize=deferred");
	}

	p.n = 0;
	p.stages[p.n++] = (struct ms_stage){ .name = "ms-collect", .argv = collect_head.v,
					     .out_fd = 3 };
	p.stages[p.n++] = (struct ms_stage){ .name = "ms-decode", .argv = decode.v };
	p.stages[p.n++] = (struct ms_stage){ .name = "ms-unwind", .argv = unwind.v };
	if (!deferred)
		p.stages[p.n++] = (struct ms_stage){ .name = "ms-symbolize", .argv = symbolize.v };
	p.stages[p.n++] = (struct ms_stage){ .name = "ms-capture", .argv = capture.v };
	/* An empty input means ms-collect failed and said why: the others keep quiet. */
	setenv(MS_QUIET_EMPTY_INPUT, "1", 1);
	if (ms_pipeline_start(&p)) {
		discard(&pub);
		return MS_EXIT_ERROR;
	}
	ms_pipeline_wait(&p);

	culprit = ms_pipeline_culprit(&p, !attach);
	if (culprit >= 0) {
		ms_pipeline_describe(&p, (unsigned)culprit, what, sizeof(what));
		st = p.stages[culprit].status;
		discard(&pub);
		ms_error("recording failed: %s; %s", what, kept(output, msg, sizeof(msg)));
		if (WIFEXITED(st) && WEXITSTATUS(st) == MS_EXIT_USAGE)
			return MS_EXIT_USAGE;
		if (WIFEXITED(st) && WEXITSTATUS(st) == MS_EXIT_SYSTEM)
			return MS_EXIT_SYSTEM;
		return MS_EXIT_ERROR;
	}
	/* The collector's status is the launched program's. */
	st = p.stages[0].status;
	written = check_written(capture_path, output);
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

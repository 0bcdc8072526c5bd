/*
 * ms-export: write a capture in a format other tools read (pprof, folded
 * stacks, Chrome trace, speedscope). The converters live in formats/.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "formats/formats.h"
#include "util/error.h"

static const char usage_text[] =
	"usage: ms-export (--pprof | --folded | --chrome | --speedscope) [-o FILE]\n"
	"                 [--weight samples|time|off-cpu|snapshots] [--cause CAUSE,...]\n"
	"                 [--thread-root]\n"
	"                 [--chrome-form events|samples] [--look mixed|native|python]\n"
	"                 [--quiet] CAPTURE\n"
	"\n"
	"Write capture CAPTURE in a format other tools read, to FILE (replaced only\n"
	"when complete) or to stdout.\n"
	"\n"
	"  --pprof               gzip-compressed pprof profile (go tool pprof)\n"
	"  --folded              folded stacks, one line per stack (flamegraph.pl)\n"
	"  --chrome              Trace Event Format JSON (chrome://tracing, Perfetto)\n"
	"  --speedscope          speedscope JSON, a sampled profile per thread\n"
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"  --weight WHAT         folded, speedscope: weigh stacks by 'samples'\n"
	"                        (the default), by 'time' (the samples' periods), by\n"
	"                        'off-cpu' (nanoseconds of complete off-CPU intervals)\n"
	"                        or by 'snapshots' (one per thread snapshot, record\n"
	"                        --python snapshot; pprof has them as a sample type)\n"
	"  --cause CAUSE,...     pprof, --weight off-cpu: only the off-CPU intervals of\n"
	"                        these causes: preempted, sleeping, blocked, unknown\n"
	"  --thread-root         folded: start each stack with its thread\n"
	"  --chrome-form FORM    chrome: 'events' (complete events, the default) or\n"
	"                        'samples' (stackFrames and samples)\n"
	"  --look LOOK           how each stack is seen: 'mixed' (the default: as\n"
	"                        recorded, Python frames among native ones), 'native'\n"
	"                        (without Python frames) or 'python' (from the\n"
	"                        outermost Python frame in, without the interpreter's)\n"
	"  -q, --quiet           do not say which facts the format drops, nor warn\n"
	"                        of a Chrome trace past 1 GiB\n"
	"  -h, --help            show this help and exit\n"
	"      --version         show the version and exit\n"
	"\n"
	MS_EXIT_CODES_HELP;

int main(int argc, char **argv)
{
	enum { OPT_PPROF = 256, OPT_FOLDED, OPT_CHROME, OPT_SPEEDSCOPE, OPT_WEIGHT,
	       OPT_THREAD_ROOT, OPT_CHROME_FORM, OPT_CAUSE, OPT_LOOK, OPT_VERSION };
	static const struct option longopts[] = {
		{ "pprof", no_argument, NULL, OPT_PPROF },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "chrome", no_argument, NULL, OPT_CHROME },
		{ "speedscope", no_argument, NULL, OPT_SPEEDSCOPE },
		{ "output", required_argument, NULL, 'o' },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "thread-root", no_argument, NULL, OPT_THREAD_ROOT },
		{ "chrome-form", required_argument, NULL, OPT_CHROME_FORM },
		{ "cause", required_argument, NULL, OPT_CAUSE },
		{ "look", required_argument, NULL, OPT_LOOK },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	enum ms_format f = MS_FORMAT_NONE;
	const char *output = NULL;
	bool quiet = false, weight_set = false, form_set = false;
	struct ms_capture *cap;
	int c, rc;

	ms_set_progname(argv[0]);
	signal(SIGPIPE, SIG_IGN);
	o.producer = "microscope " PACKAGE_VERSION;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
		enum ms_format want = MS_FORMAT_NONE;

		switch (c) {
		case OPT_PPROF: want = MS_FORMAT_PPROF; break;
		case OPT_FOLDED: want = MS_FORMAT_FOLDED; break;
		case OPT_CHROME: want = MS_FORMAT_CHROME; break;
		case OPT_SPEEDSCOPE: want = MS_FORMAT_SPEEDSCOPE; break;
		case 'o':
			output = optarg;
			break;
		case OPT_WEIGHT:
			if (ms_weight_by_name(optarg, &o.weight))
				ms_usage_error("--weight is 'samples', 'time', 'off-cpu' or "
					       "'snapshots', not '%s'", optarg);
			weight_set = true;
			break;
		case OPT_CAUSE:
			if (ms_causes_by_name(optarg, &o.causes))
				ms_usage_error("--cause is a list of preempted, sleeping, blocked or "
					       "unknown, not '%s'", optarg);
			break;
		case OPT_LOOK:
			if (ms_look_by_name(optarg, &o.look))
				ms_usage_error("--look is 'mixed', 'native' or 'python', not '%s'", optarg);
			break;
		case OPT_THREAD_ROOT:
			o.thread_root = true;
			break;
		case OPT_CHROME_FORM:
			if (ms_chrome_form_by_name(optarg, &o.chrome_form))
				ms_usage_error("--chrome-form is 'events' or 'samples', not '%s'", optarg);
			form_set = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return fclose(stdout) ? MS_EXIT_ERROR : MS_EXIT_OK;
		case OPT_VERSION:
			printf("ms-export %s\n", PACKAGE_VERSION);
			return fclose(stdout) ? MS_EXIT_ERROR : MS_EXIT_OK;
		case ':':
			ms_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			ms_usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (want != MS_FORMAT_NONE) {
			if (f != MS_FORMAT_NONE && f != want)
				ms_usage_error("one format at a time: --%s or --%s", ms_format_name(f),
					    ms_format_name(want));
			f = want;
		}
	}
	if (f == MS_FORMAT_NONE)
		ms_usage_error("name a format: --pprof, --folded, --chrome or --speedscope");
	if (weight_set && f != MS_FORMAT_FOLDED && f != MS_FORMAT_SPEEDSCOPE)
		ms_usage_error("--weight goes with --folded or --speedscope");
	if (o.thread_root && f != MS_FORMAT_FOLDED)
		ms_usage_error("--thread-root goes with --folded");
	if (form_set && f != MS_FORMAT_CHROME)
		ms_usage_error("--chrome-form goes with --chrome");
	if (o.causes && f != MS_FORMAT_PPROF && o.weight != MS_WEIGHT_OFF_CPU)
		ms_usage_error("--cause goes with --pprof, or with --weight off-cpu");
	if (optind == argc)
		ms_usage_error("name the capture to export");
	if (argc - optind > 1)
		ms_usage_error("unexpected argument '%s'", argv[optind + 1]);

	cap = ms_capture_load(argv[optind]);
	if (!cap)
		return MS_EXIT_ERROR;
	if (ms_export_check(cap, f, &o, argv[optind]) < 0) {
		ms_capture_free(cap);
		return MS_EXIT_ERROR;
	}
	if (!quiet) {
		ms_export_note_loss(cap, f, &o, argv[optind]);
		ms_export_warn_size(cap, f, &o, argv[optind], MS_EXPORT_WARN_BYTES);
	}
	rc = ms_export_file(output, cap, f, &o);

	ms_capture_free(cap);
	return rc < 0 ? MS_EXIT_ERROR : MS_EXIT_OK;
}

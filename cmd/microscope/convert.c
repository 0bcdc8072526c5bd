/*
 * microscope convert IN OUT: between a capture and the formats of
 * formats/formats.h, in either direction, or from pprof or folded to any
 * export format through a capture in memory. Formats come from --from and
 * --to, else from the file names, else (input only) from its first bytes.
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
#include "cmd/microscope/microscope.h"
#include "util/error.h"

static const char usage_convert[] =
	"usage: microscope convert [--from FORMAT] [--to FORMAT] [--weight samples|time|off-cpu]\n"
	"                          [--cause CAUSE,...] [--thread-root]\n"
	"                          [--chrome-form events|samples] [-q] IN OUT\n"
	"\n"
	"Converts IN to OUT. One side is a capture (.msc), or both are profiles:\n"
	"capture to pprof (.pb.gz), folded (.folded), Chrome trace (.json) or\n"
	"speedscope (.speedscope.json); pprof or folded to a capture or to any of\n"
	"those. '-' is stdin or stdout (then --to is needed).\n"
	"\n"
	"  --from FORMAT        read IN as capture, pprof or folded\n"
	"  --to FORMAT          write OUT as capture, pprof, folded, chrome or speedscope\n"
	"  --weight WHAT        folded, speedscope: 'samples' (default), 'time' or\n"
	"                       'off-cpu' (nanoseconds of complete off-CPU intervals)\n"
	"  --cause CAUSE,...    pprof, --weight off-cpu: only the off-CPU intervals of\n"
	"                       these causes: preempted, sleeping, blocked, unknown\n"
	"  --thread-root        folded: start each stack with its thread\n"
	"  --chrome-form FORM   chrome: 'events' (default) or 'samples'\n"
	"  -q, --quiet          do not say which facts the output format drops, nor\n"
	"                       warn of a Chrome trace over 1 GiB\n"
	"\n"
	MS_EXIT_CODES_HELP;

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ms_error("%s", msg);
	fputs(usage_convert, stderr);
	return MS_EXIT_USAGE;
}

/* The input's format: by name, else by its first bytes; stdin is sniffed. */
static enum ms_format input_format(const char *path)
{
	enum ms_format f = ms_format_by_extension(path);
	unsigned char head[8];
	size_t n = 0;
	FILE *in;

	if (f != MS_FORMAT_NONE || !strcmp(path, "-"))
		return f;
	in = fopen(path, "rb");
	if (!in)
		return MS_FORMAT_NONE;
	n = fread(head, 1, sizeof(head), in);
	fclose(in);
	f = ms_format_by_magic(head, n);
	/* text that is neither: the one text format microscope reads */
	return f == MS_FORMAT_NONE && n ? MS_FORMAT_FOLDED : f;
}

static struct ms_capture *read_input(const char *path, enum ms_format f)
{
	unsigned char *buf;
	size_t len;
	struct ms_capture *cap;

	if (f == MS_FORMAT_CAPTURE)
		return ms_capture_load(path);	/* "-" too: it reads stdin whole */
	if (f != MS_FORMAT_NONE && f != MS_FORMAT_CAPTURE)
		return ms_import_file(path, f, "microscope " PACKAGE_VERSION);
	/* stdin without --from: read it whole and look at it */
	if (ms_read_file(path, MS_IMPORT_PPROF_MAX, &buf, &len) < 0)
		return NULL;
	f = ms_format_by_magic(buf, len);
	if (f == MS_FORMAT_CAPTURE)
		cap = ms_capture_load_buffer(buf, len, "stdin");
	else if (f == MS_FORMAT_PPROF)
		cap = ms_pprof_import(buf, len, "stdin", "microscope " PACKAGE_VERSION);
	else
		cap = ms_folded_import(buf, len, "stdin", "microscope " PACKAGE_VERSION);
	free(buf);
	return cap;
}

int ms_front_convert(int argc, char **argv)
{
	enum { OPT_FROM = 256, OPT_TO, OPT_WEIGHT, OPT_THREAD_ROOT, OPT_CHROME_FORM, OPT_CAUSE };
	static const struct option options[] = {
		{ "from", required_argument, NULL, OPT_FROM },
		{ "to", required_argument, NULL, OPT_TO },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "thread-root", no_argument, NULL, OPT_THREAD_ROOT },
		{ "chrome-form", required_argument, NULL, OPT_CHROME_FORM },
		{ "cause", required_argument, NULL, OPT_CAUSE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	enum ms_format from = MS_FORMAT_NONE, to = MS_FORMAT_NONE;
	const char *in, *out;
	bool quiet = false;
	struct ms_capture *cap;
	int c, rc;

	o.producer = "microscope " PACKAGE_VERSION;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qh", options, NULL)) != -1) {
		switch (c) {
		case OPT_FROM:
			from = ms_format_by_name(optarg);
			if (from != MS_FORMAT_CAPTURE && from != MS_FORMAT_PPROF && from != MS_FORMAT_FOLDED)
				return usage("--from is capture, pprof or folded, not '%s'", optarg);
			break;
		case OPT_TO:
			to = ms_format_by_name(optarg);
			if (to == MS_FORMAT_NONE)
				return usage("--to is capture, pprof, folded, chrome or speedscope, not '%s'", optarg);
			break;
		case OPT_WEIGHT:
			if (ms_weight_by_name(optarg, &o.weight))
				return usage("--weight is 'samples', 'time' or 'off-cpu', not '%s'",
					     optarg);
			break;
		case OPT_CAUSE:
			if (ms_causes_by_name(optarg, &o.causes))
				return usage("--cause is a list of preempted, sleeping, blocked or "
					     "unknown, not '%s'", optarg);
			break;
		case OPT_THREAD_ROOT:
			o.thread_root = true;
			break;
		case OPT_CHROME_FORM:
			if (ms_chrome_form_by_name(optarg, &o.chrome_form))
				return usage("--chrome-form is 'events' or 'samples', not '%s'", optarg);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(usage_convert, stdout);
			return MS_EXIT_OK;
		case ':':
			return usage("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return usage("convert needs IN and OUT");
	in = argv[optind];
	out = argv[optind + 1];
	if (from == MS_FORMAT_NONE)
		from = input_format(in);
	if (to == MS_FORMAT_NONE && strcmp(out, "-"))
		to = ms_format_by_extension(out);
	if (to == MS_FORMAT_NONE)
		return usage("cannot tell the format of '%s' from its name: name it with --to", out);
	if (to == MS_FORMAT_CAPTURE && !strcmp(out, "-"))
		return usage("a capture is written to a file, not to stdout ('%s')", out);
	if (from != MS_FORMAT_CAPTURE && to != MS_FORMAT_CAPTURE && from != MS_FORMAT_NONE &&
	    from == to)
		return usage("'%s' is already in that format", in);

	/* A reader of stdout that went away is told by EPIPE, and is no error. */
	signal(SIGPIPE, SIG_IGN);
	cap = read_input(in, from);
	if (!cap) {
		if (to == MS_FORMAT_CAPTURE)
			ms_error("no capture written to '%s'", out);
		return MS_EXIT_ERROR;
	}
	if (to == MS_FORMAT_CAPTURE) {
		rc = ms_capture_write(cap, out);
	} else if (ms_export_check(cap, to, &o, in) < 0) {
		rc = -1;
	} else {
		if (!quiet) {
			ms_export_note_loss(cap, to, &o, in);
			ms_export_warn_size(cap, to, &o, in, MS_EXPORT_WARN_BYTES);
		}
		rc = ms_export_file(out, cap, to, &o);
	}
	ms_capture_free(cap);
	return rc < 0 ? MS_EXIT_ERROR : MS_EXIT_OK;
}

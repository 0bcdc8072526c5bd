/*
 * ms-capture: the last stage. Seals a record stream into a capture file,
 * or writes a capture back out as a stream (--dump). The work is in
 * libcommon/capture/ (stage.c, dump.c); this file parses options and wires.
 */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture/convert.h"
#include "formats/formats.h"
#include "util/error.h"
#include "util/input.h"

static const char usage_text[] =
	"usage: ms-capture -o FILE [--salvage] [--info KEY=VALUE]... [--keep-names CAPTURE] [INPUT]\n"
	"       ms-capture --dump FILE [--omit-failed]\n"
	"       ms-capture -o FILE --import pprof|folded [INPUT]\n"
	"\n"
	"Read a microscope record stream from INPUT (default: stdin) and write it\n"
	"as a capture FILE, or write capture FILE back out as a stream on stdout.\n"
	"\n"
	"  -o, --output FILE     write the capture to FILE (replaced only when complete)\n"
	"      --salvage         write a capture even when the stream was cut short;\n"
	"                        it is marked incomplete\n"
	"      --info KEY=VALUE  set the info KEY to the text VALUE, over what the\n"
	"                        stream says (repeatable)\n"
	"      --keep-names CAPTURE\n"
	"                        where the stream's frame facts name less than those\n"
	"                        of CAPTURE (whose dump the stream is), keep CAPTURE's:\n"
	"                        symbolizing again never loses a name\n"
	"      --dump FILE       write capture FILE as a record stream on stdout\n"
	"      --import FORMAT   read INPUT as a pprof or folded file, not a stream\n"
	"      --omit-failed     with --dump: leave out the frame facts whose\n"
	"                        symbolization failed, so that ms-symbolize tries again\n"
	"  -h, --help            show this help and exit\n"
	"      --version         show the version and exit\n"
	"\n"
	MS_EXIT_CODES_HELP;

#define INFO_MAX 32

int main(int argc, char **argv)
{
	enum { OPT_SALVAGE = 256, OPT_DUMP, OPT_VERSION, OPT_INFO, OPT_OMIT_FAILED, OPT_IMPORT,
	       OPT_KEEP_NAMES };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "salvage", no_argument, NULL, OPT_SALVAGE },
		{ "info", required_argument, NULL, OPT_INFO },
		{ "keep-names", required_argument, NULL, OPT_KEEP_NAMES },
		{ "dump", required_argument, NULL, OPT_DUMP },
		{ "omit-failed", no_argument, NULL, OPT_OMIT_FAILED },
		{ "import", required_argument, NULL, OPT_IMPORT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *dump_path = NULL, *keep_names = NULL, *eq;
	static struct ms_info info[INFO_MAX];
	uint32_t n_info = 0;
	unsigned flags = 0, dump_flags = 0;
	enum ms_format import = MS_FORMAT_NONE;
	int c;

	ms_set_progname(argv[0]);
	/* A closed downstream must show up as EPIPE, not kill us silently. */
	signal(SIGPIPE, SIG_IGN);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_SALVAGE:
			flags |= MS_CAPTURE_SALVAGE;
			break;
		case OPT_DUMP:
			dump_path = optarg;
			break;
		case OPT_IMPORT:
			import = ms_format_by_name(optarg);
			if (import != MS_FORMAT_PPROF && import != MS_FORMAT_FOLDED)
				ms_usage_error("--import takes 'pprof' or 'folded', not '%s'", optarg);
			break;
		case OPT_OMIT_FAILED:
			dump_flags |= MS_DUMP_OMIT_FAILED;
			break;
		case OPT_KEEP_NAMES:
			keep_names = optarg;
			break;
		case OPT_INFO:
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg)
				ms_usage_error("--info wants KEY=VALUE, not '%s'", optarg);
			if (n_info == INFO_MAX)
				ms_usage_error("--info: at most %d of them", INFO_MAX);
			info[n_info].key = (struct ms_str){ optarg, (uint32_t)(eq - optarg) };
			info[n_info].is_text = true;
			info[n_info].text = (struct ms_str){ eq + 1, (uint32_t)strlen(eq + 1) };
			n_info++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return fclose(stdout) ? MS_EXIT_ERROR : MS_EXIT_OK;
		case OPT_VERSION:
			printf("ms-capture %s\n", PACKAGE_VERSION);
			return fclose(stdout) ? MS_EXIT_ERROR : MS_EXIT_OK;
		case ':':
			ms_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			ms_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (dump_path) {
		if (output || flags || n_info || import || keep_names || optind < argc)
			ms_usage_error("--dump takes one capture FILE and no other option but --omit-failed");
		return ms_capture_dump_stage(dump_path, dump_flags, STDOUT_FILENO, "stdout");
	}
	if (dump_flags)
		ms_usage_error("--omit-failed goes with --dump");
	if (!output)
		ms_usage_error("-o FILE is required (or --dump FILE)");
	if (argc - optind > 1)
		ms_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (import) {
		if (flags || n_info || keep_names)
			ms_usage_error("--import takes no --salvage, --info or --keep-names");
		return ms_import_write(optind < argc ? argv[optind] : NULL, import, output,
				       "ms-capture " PACKAGE_VERSION) < 0 ? MS_EXIT_ERROR : MS_EXIT_OK;
	}
	{
		struct ms_capture_stage_options o = {
			.output = output,
			.keep_names = keep_names,
			.stream = { .flags = flags, .info = info, .n_info = n_info },
		};
		const char *name;
		int fd = ms_open_input(optind < argc ? argv[optind] : NULL, &name), code;

		if (fd < 0)
			return MS_EXIT_ERROR;
		code = ms_capture_stage(fd, name, &o);
		ms_close_input(fd);
		return code;
	}
}

/*
 * ms-decode: the stage that turns ms-collect's raw kernel records into
 * typed records, in time order. The work is in libcommon/perf/decode.c.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/decode.h"
#include "util/error.h"
#include "util/input.h"

static const char usage_text[] = "usage: ms-decode [--stack-bytes=auto|copy|refer] [FILE]\n";

static const char help_text[] =
	"\n"
	"Decode the raw kernel records of a stream written by ms-collect into\n"
	"sample, mmap, comm, fork, exit, lost, throttle, switch and switch-out\n"
	"records (a thread left or came back to its CPU), ordered by\n"
	"time, and pass every other record through. Reads FILE, or standard\n"
	"input when FILE is absent or '-'; writes the stream to standard output.\n"
	"Malformed kernel records are skipped and counted as problems.\n"
	"\n"
	"  --stack-bytes=HOW   where samples keep their copied stacks: 'copy' (in\n"
	"                      the record), 'refer' (their place in FILE, which\n"
	"                      ms-unwind maps after checking its identity), or\n"
	"                      'auto' (default: refer when FILE is a regular file\n"
	"                      and the output is not one)\n"
	"  -h, --help          print this help and exit\n"
	"  --version           print the version and exit\n"
	"\n" MS_EXIT_CODES_HELP;

enum {
	OPT_VERSION = 256,
	OPT_STATS,
	OPT_STACK_BYTES,
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "stack-bytes", required_argument, NULL, OPT_STACK_BYTES },
		/* not in --help: counts per record kind, for tests (man page) */
		{ "stats", no_argument, NULL, OPT_STATS },
		{ NULL, 0, NULL, 0 },
	};
	struct ms_decode_options opt = { .version = PACKAGE_VERSION };
	const char *name;
	int c, fd, code;

	ms_set_progname(argv[0]);
	/* a closed downstream shows as EPIPE from the writer */
	signal(SIGPIPE, SIG_IGN);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			fputs(help_text, stdout);
			return fclose(stdout) ? MS_EXIT_ERROR : MS_EXIT_OK;
		case OPT_VERSION:
			printf("ms-decode %s\n", PACKAGE_VERSION);
			return fclose(stdout) ? MS_EXIT_ERROR : MS_EXIT_OK;
		case OPT_STATS:
			opt.stats = true;
			break;
		case OPT_STACK_BYTES:
			if (!strcmp(optarg, "auto"))
				opt.stack_bytes = MS_STACK_BYTES_AUTO;
			else if (!strcmp(optarg, "copy"))
				opt.stack_bytes = MS_STACK_BYTES_COPY;
			else if (!strcmp(optarg, "refer"))
				opt.stack_bytes = MS_STACK_BYTES_REFER;
			else
				ms_usage_error("--stack-bytes must be auto, copy or refer, not '%s'",
					       optarg);
			break;
		default:
			ms_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		ms_usage_error("more than one input: '%s'", argv[optind + 1]);
	fd = ms_open_input(optind < argc ? argv[optind] : NULL, &name);
	if (fd < 0)
		return MS_EXIT_ERROR;
	code = ms_decode_stage(fd, name, STDOUT_FILENO, "stdout", &opt);
	ms_close_input(fd);
	return code;
}

/*
 * ms-symbolize: name the frames of stacks from the modules' symbol tables.
 * The work is in libcommon/symbols/; this file parses options and wires.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbolize.h"
#include "util/error.h"

static const char usage_text[] =
	"usage: ms-symbolize [--stats] [--text] [--kallsyms FILE] [FILE]\n"
	"\n"
	"Read a record stream with stacks (from ms-unwind) from FILE or standard\n"
	"input and write it to standard output with a frame record before each\n"
	"stack for every (module, address) not seen before: the function's name\n"
	"from the module's ELF .symtab or .dynsym (kernel frames: kallsyms), or\n"
	"the reason there is none. A module's file is read only when its build id\n"
	"(or device, inode, size and mtime) proves it is the module that ran.\n"
	"\n"
	"  --stats            print counts (stacks, frames, unique frames by\n"
	"                     reason, modules) to standard error at exit\n"
	"  --text             instead of a stream, print one line per stack:\n"
	"                     PID TID TIME END FRAME;FRAME;... (outermost first)\n"
	"  --kallsyms FILE    read kernel symbols from FILE (default /proc/kallsyms)\n"
	"  -h, --help         show this help\n"
	"  --version          show the version\n"
	"\n"
	MS_EXIT_CODES_HELP;

static void print_stats(const struct ms_symbolize_stats *s)
{
	uint32_t i;

	fprintf(stderr, "ms-symbolize: stacks %llu frames %llu unique %llu modules %llu "
		"loaded %llu\n",
		(unsigned long long)s->stacks, (unsigned long long)s->frames,
		(unsigned long long)s->unique, (unsigned long long)s->modules,
		(unsigned long long)s->modules_loaded);
	for (i = 0; i <= MS_SYM_NO_MODULE; i++)
		if (s->reasons[i])
			fprintf(stderr, "ms-symbolize: unique %s %llu\n", ms_frame_reason_name(i),
				(unsigned long long)s->reasons[i]);
}

int main(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_STATS, OPT_TEXT, OPT_KALLSYMS };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "text", no_argument, NULL, OPT_TEXT },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ NULL, 0, NULL, 0 },
	};
	struct ms_symbolize_options opts = { 0 };
	struct ms_symbolize_stats stats = { 0 };
	const char *path = NULL;
	int c, fd = STDIN_FILENO, stats_wanted = 0, code;

	ms_set_progname("ms-symbolize");
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return MS_EXIT_OK;
		case OPT_VERSION:
			printf("ms-symbolize %s\n", PACKAGE_VERSION);
			return MS_EXIT_OK;
		case OPT_STATS:
			stats_wanted = 1;
			break;
		case OPT_TEXT:
			opts.text = true;
			break;
		case OPT_KALLSYMS:
			opts.kallsyms = optarg;
			break;
		default:
			fputs(usage_text, stderr);
			return MS_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		ms_error("too many arguments; see 'ms-symbolize --help'");
		return MS_EXIT_USAGE;
	}
	if (optind < argc && strcmp(argv[optind], "-")) {
		path = argv[optind];
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ms_error_errno("cannot open '%s'", path);
			return MS_EXIT_ERROR;
		}
	}
	/* A closed downstream is seen as EPIPE and ends the stage with one message. */
	signal(SIGPIPE, SIG_IGN);
	code = ms_symbolize_stage(fd, path ? path : "stdin", STDOUT_FILENO, &opts, &stats);
	if (stats_wanted)
		print_stats(&stats);
	if (path)
		close(fd);
	return code;
}

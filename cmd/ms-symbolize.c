/*
 * ms-symbolize: name the frames of stacks: functions, inline chains and
 * source lines from DWARF, else ELF symbols and .eh_frame.
 * The work is in libcommon/symbols/; this file parses options and wires.
 */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbolize.h"
#include "util/error.h"
#include "util/input.h"

static const char usage_text[] =
	"usage: ms-symbolize [--stats] [--text [--lines]] [--debug-dir DIR]...\n"
	"                    [--kallsyms FILE] [--kernel-notes FILE] [FILE]\n"
	"       ms-symbolize --batch ELF [--debug-dir DIR]... < ADDRESSES\n"
	"\n"
	"Read a record stream with stacks (from ms-unwind) from FILE or standard\n"
	"input and write it to standard output with a frame record before each\n"
	"stack for every (module, address) not seen before: the function\n"
	"(demangled), the chain of inlined calls with source files and lines from\n"
	"DWARF, the function's start, and the reason for what is missing. Debug\n"
	"information comes from the module itself or a separate debug file that\n"
	"its build id proves (--debug-dir, /usr/lib/debug/.build-id,\n"
	".gnu_debuglink, debuginfod when DEBUGINFOD_URLS is set); names otherwise\n"
	"from .symtab and .dynsym, function starts from .eh_frame. A module's file\n"
	"is read only when its build id (or device, inode, size and mtime) proves\n"
	"it is the module that ran.\n"
	"\n"
	"  --stats            print counts (stacks, frames, unique frames by\n"
	"                     reason, modules) to standard error at exit\n"
	"  --text             instead of a stream, print one line per stack:\n"
	"                     PID TID TIME END FRAME;FRAME;... (outermost first,\n"
	"                     inlined calls as frames of their own)\n"
	"  --lines            with --text, each function followed by (FILE:LINE),\n"
	"                     or (REASON) when it has no lines\n"
	"  --debug-dir DIR    look for debug files in DIR first (repeatable):\n"
	"                     DIR/.build-id/xx/rest.debug, DIR/DEBUGLINK,\n"
	"                     DIR/NAME.debug, DIR/NAME\n"
	"  --kallsyms FILE    read kernel symbols from FILE (default /proc/kallsyms)\n"
	"  --kernel-notes FILE\n"
	"                     the running kernel's notes, whose build id must equal\n"
	"                     the kernel module's (default /sys/kernel/notes)\n"
	"  --batch ELF        read hex addresses of ELF, one per line, from standard\n"
	"                     input and print each like 'addr2line -f -i': function\n"
	"                     and FILE:LINE per inlined call, innermost first\n"
	"  -h, --help         show this help\n"
	"  --version          show the version\n"
	"\n"
	MS_EXIT_CODES_HELP;

static void print_stats(const struct ms_symbolize_stats *s)
{
	uint32_t i;

	fprintf(stderr, "ms-symbolize: stacks %llu frames %llu unique %llu modules %llu "
		"loaded %llu debug %llu units %llu\n",
		(unsigned long long)s->stacks, (unsigned long long)s->frames,
		(unsigned long long)s->unique, (unsigned long long)s->modules,
		(unsigned long long)s->modules_loaded, (unsigned long long)s->debug_files,
		(unsigned long long)s->units_indexed);
	for (i = 0; i < MS_SYM_REASONS; i++)
		if (s->reasons[i])
			fprintf(stderr, "ms-symbolize: unique %s %llu\n", ms_frame_reason_name(i),
				(unsigned long long)s->reasons[i]);
}

int main(int argc, char **argv)
{
	enum {
		OPT_VERSION = 256, OPT_STATS, OPT_TEXT, OPT_LINES, OPT_KALLSYMS, OPT_NOTES,
		OPT_DEBUG_DIR, OPT_BATCH,
	};
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "text", no_argument, NULL, OPT_TEXT },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "kernel-notes", required_argument, NULL, OPT_NOTES },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ NULL, 0, NULL, 0 },
	};
	struct ms_symbolize_options opts = { 0 };
	struct ms_symbolize_stats stats = { 0 };
	const char **dirs = NULL;
	const char *name, *batch = NULL;
	int c, fd, stats_wanted = 0, code;

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
		case OPT_LINES:
			opts.text_lines = true;
			break;
		case OPT_KALLSYMS:
			opts.kallsyms = optarg;
			break;
		case OPT_NOTES:
			opts.kernel_notes = optarg;
			break;
		case OPT_DEBUG_DIR:
			/* At most argc of them: one allocation, freed at exit. */
			if (!dirs && !(dirs = calloc((size_t)argc, sizeof(*dirs))))
				ms_die(MS_EXIT_ERROR, "out of memory");
			dirs[opts.n_debug_dirs++] = optarg;
			break;
		case OPT_BATCH:
			batch = optarg;
			break;
		default:
			fputs(usage_text, stderr);
			return MS_EXIT_USAGE;
		}
	}
	opts.debug_dirs = dirs;
	opts.exiting = true;	/* main returns right after the stage */
	if (opts.text_lines && !opts.text) {
		ms_error("--lines goes with --text; see 'ms-symbolize --help'");
		return MS_EXIT_USAGE;
	}
	if (argc - optind > (batch ? 0 : 1)) {
		ms_error("too many arguments; see 'ms-symbolize --help'");
		return MS_EXIT_USAGE;
	}
	/* A closed downstream is seen as EPIPE and ends the stage with one message. */
	signal(SIGPIPE, SIG_IGN);
	if (batch) {
		code = ms_symbolize_batch(batch, stdin, stdout, &opts, &stats) < 0 ? MS_EXIT_ERROR :
										   MS_EXIT_OK;
		if (fflush(stdout) != 0 || ferror(stdout)) {
			ms_error_errno("cannot write to 'stdout'");
			code = MS_EXIT_ERROR;
		}
	} else {
		fd = ms_open_input(optind < argc ? argv[optind] : NULL, &name);
		if (fd < 0) {
			free(dirs);
			return MS_EXIT_ERROR;
		}
		code = ms_symbolize_stage(fd, name, STDOUT_FILENO, &opts, &stats);
		ms_close_input(fd);
	}
	if (stats_wanted)
		print_stats(&stats);
	free(dirs);
	return code;
}

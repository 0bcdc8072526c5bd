/*
 * ms-unwind: turn decoded samples into stacks of (module, address) frames.
 * The work is in libcommon/unwind/; this file parses options and wires.
 */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/unwind.h"
#include "util/error.h"
#include "util/input.h"

static const char usage_text[] =
	"usage: ms-unwind [--unwind dwarf|fp|dwarf+fp] [--debug-dir DIR]... [--stats] [FILE]\n"
	"\n"
	"Read a decoded record stream (from ms-decode) from FILE or standard input\n"
	"and write it to standard output with every sample replaced by a stack:\n"
	"kernel frames, then user frames, each bound to its module (build id, file\n"
	"identity) through the mappings active at the sample's time. Module records\n"
	"precede the first stack that uses them.\n"
	"\n"
	"  --unwind POLICY  how user frames are found: dwarf (call-frame information\n"
	"                   over the copied stack), fp (the kernel's frame-pointer\n"
	"                   chain) or dwarf+fp (dwarf, continued by frame pointers\n"
	"                   where the CFI proves them); default dwarf when samples\n"
	"                   carry a stack copy, else fp\n"
	"  --debug-dir DIR  look for debug files in DIR first (repeatable), as\n"
	"                   ms-symbolize does: DIR/.build-id/xx/rest.debug,\n"
	"                   DIR/DEBUGLINK, DIR/NAME.debug, DIR/NAME; then\n"
	"                   /usr/lib/debug/.build-id, .gnu_debuglink, debuginfod\n"
	"                   (DEBUGINFOD_URLS). A module's .debug_frame may come\n"
	"                   from the debug file ms-symbolize reads; a module whose\n"
	"                   file is gone or rebuilt is unwound from the file there\n"
	"                   that its build id proves (a copy of the binary)\n"
	"  --stats          print counts (samples, frames, end reasons, modules,\n"
	"                   caches) to standard error at exit\n"
	"  -h, --help       show this help\n"
	"  --version        show the version\n"
	"\n"
	MS_EXIT_CODES_HELP;

static void print_stats(const struct ms_unwind_stats *s)
{
	uint32_t i;

	fprintf(stderr, "ms-unwind: samples %llu stacks %llu kernel-frames %llu user-frames %llu "
		"switch-outs %llu\n",
		(unsigned long long)s->samples, (unsigned long long)s->stacks,
		(unsigned long long)s->kernel_frames, (unsigned long long)s->user_frames,
		(unsigned long long)s->switch_outs);
	fprintf(stderr, "ms-unwind: mmaps %llu exec-mmaps %llu execs %llu forks %llu exits %llu "
		"processes %llu\n",
		(unsigned long long)s->mmaps, (unsigned long long)s->exec_mmaps,
		(unsigned long long)s->execs, (unsigned long long)s->forks,
		(unsigned long long)s->exits, (unsigned long long)s->processes);
	fprintf(stderr, "ms-unwind: modules %llu unverified %llu found-by-build-id %llu\n",
		(unsigned long long)s->modules, (unsigned long long)s->modules_unverified,
		(unsigned long long)s->modules_found);
	fprintf(stderr, "ms-unwind: dwarf-frames %llu fp-frames %llu pc-cache hits %llu misses %llu "
		"cfi-modules %llu cfi-rules %llu cfi-cached %llu\n",
		(unsigned long long)s->dwarf_frames, (unsigned long long)s->fp_frames,
		(unsigned long long)s->pc_cache_hits, (unsigned long long)s->pc_cache_misses,
		(unsigned long long)s->cfi_modules, (unsigned long long)s->cfi_rules,
		(unsigned long long)s->cfi_cached);
	fprintf(stderr, "ms-unwind: walk-cache replayed %llu kept %llu emptied %llu\n",
		(unsigned long long)s->walks_replayed, (unsigned long long)s->walks_kept,
		(unsigned long long)s->walk_cache_resets);
	if (s->jit_funcs || s->jit_ended)
		fprintf(stderr, "ms-unwind: jit-functions %llu without-rows %llu ended %llu "
			"frames-named %llu\n",
			(unsigned long long)s->jit_funcs, (unsigned long long)s->jit_funcs_no_rows,
			(unsigned long long)s->jit_ended, (unsigned long long)s->jit_frames_named);
	if (s->jit_objects || s->jit_objects_ended)
		fprintf(stderr, "ms-unwind: jit-objects %llu read-again %llu ended %llu "
			"frames-named %llu\n",
			(unsigned long long)s->jit_objects, (unsigned long long)s->jit_objects_again,
			(unsigned long long)s->jit_objects_ended,
			(unsigned long long)s->jit_object_frames_named);
	if (s->py_stacks || s->py_codes || s->py_unknown)
		fprintf(stderr, "ms-unwind: python-stacks %llu unpaired %llu placed %llu "
			"truncated %llu unplaced %llu unknown %llu cut %llu frames %llu "
			"codes %llu again %llu refused %llu keys %llu unknown-code %llu "
			"bad-lines %llu\n",
			(unsigned long long)s->py_stacks, (unsigned long long)s->py_unpaired,
			(unsigned long long)s->py_placed, (unsigned long long)s->py_truncated,
			(unsigned long long)s->py_unplaced, (unsigned long long)s->py_unknown,
			(unsigned long long)s->py_cut, (unsigned long long)s->py_frames,
			(unsigned long long)s->py_codes, (unsigned long long)s->py_codes_again,
			(unsigned long long)s->py_codes_refused, (unsigned long long)s->py_keys,
			(unsigned long long)s->py_unknown_frames, (unsigned long long)s->py_bad_lines);
	if (s->py_snapshots || s->py_snapshots_bad)
		fprintf(stderr, "ms-unwind: python-snapshots %llu complete %llu changed %llu "
			"dropped %llu malformed %llu frames %llu\n",
			(unsigned long long)s->py_snapshots,
			(unsigned long long)s->py_snapshots_complete,
			(unsigned long long)s->py_snapshots_changed,
			(unsigned long long)s->py_snapshots_dropped,
			(unsigned long long)s->py_snapshots_bad,
			(unsigned long long)s->py_snapshot_frames);
	if (s->py_spans || s->py_spans_full)
		fprintf(stderr, "ms-unwind: label-spans %llu threads-full %llu\n",
			(unsigned long long)s->py_spans, (unsigned long long)s->py_spans_full);
	for (i = 0; i <= MS_END_KERNEL_ONLY; i++)
		if (s->ends[i])
			fprintf(stderr, "ms-unwind: end %s %llu\n", ms_stack_end_name(i),
				(unsigned long long)s->ends[i]);
}

int main(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_STATS, OPT_UNWIND, OPT_DEBUG_DIR };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ NULL, 0, NULL, 0 },
	};
	struct ms_unwind_options opts = { 0 };
	struct ms_unwind_stats stats = { 0 };
	const char **dirs = NULL;
	const char *name;
	int c, fd, stats_wanted = 0, code;

	ms_set_progname("ms-unwind");
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return MS_EXIT_OK;
		case OPT_VERSION:
			printf("ms-unwind %s\n", PACKAGE_VERSION);
			return MS_EXIT_OK;
		case OPT_STATS:
			stats_wanted = 1;
			break;
		case OPT_UNWIND:
			opts.policy = ms_unwind_policy_parse(optarg);
			if (opts.policy < 0) {
				ms_error("unknown unwind policy '%s': use dwarf, fp or dwarf+fp", optarg);
				return MS_EXIT_USAGE;
			}
			break;
		case OPT_DEBUG_DIR:
			/* At most argc of them: one allocation, freed at exit. */
			if (!dirs && !(dirs = calloc((size_t)argc, sizeof(*dirs))))
				ms_die(MS_EXIT_ERROR, "out of memory");
			dirs[opts.n_debug_dirs++] = optarg;
			break;
		default:
			fputs(usage_text, stderr);
			return MS_EXIT_USAGE;
		}
	}
	opts.debug_dirs = dirs;
	if (argc - optind > 1) {
		ms_error("too many arguments; see 'ms-unwind --help'");
		free(dirs);
		return MS_EXIT_USAGE;
	}
	fd = ms_open_input(optind < argc ? argv[optind] : NULL, &name);
	if (fd < 0) {
		free(dirs);
		return MS_EXIT_ERROR;
	}
	/* A closed downstream is seen as EPIPE and ends the stage with one message. */
	signal(SIGPIPE, SIG_IGN);
	code = ms_unwind_stage(fd, name, STDOUT_FILENO, &opts, &stats);
	if (stats_wanted)
		print_stats(&stats);
	ms_close_input(fd);
	free(dirs);
	return code;
}

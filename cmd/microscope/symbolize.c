/*
 * microscope symbolize: name the frames of a capture after the recording
 * (recorded with --symbolize=deferred, or to try again with more debug
 * files), through the stages:
 *
 *   ms-capture --dump IN --omit-failed | ms-symbolize [--debug-dir D]... |
 *       ms-capture --keep-names IN -o TMP
 *
 * then TMP is renamed to the output, so that the output (the input itself
 * by default) is replaced only by a complete capture, and only when every
 * stage succeeded. Frames whose symbolization failed or was incomplete are
 * looked up again (--omit-failed); where the new lookup names less, the
 * input's fact stays (--keep-names): symbolizing again never loses a name.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "cmd/microscope/microscope.h"
#include "util/pipeline.h"
#include "util/error.h"
#include "util/publish.h"

static const char usage_symbolize[] =
	"usage: microscope symbolize [--debug-dir DIR]... [-o FILE] CAPTURE\n"
	"\n"
	"Symbolize the frames of CAPTURE that have no name yet (recorded with\n"
	"--symbolize=deferred, or whose symbolization failed), finding modules and\n"
	"debug files by build id, and write the capture again.\n"
	"\n"
	"  -o, --output FILE   write to FILE (default: replace CAPTURE)\n"
	"      --debug-dir DIR look for the modules' files and debug files in DIR\n"
	"                      (repeatable): DIR/.build-id/xx/rest.debug, or the\n"
	"                      module's name in DIR (ms-symbolize(1) lists them)\n"
	"  -h, --help          show this help\n"
	"\n"
	"The output is written under a temporary name and renamed only when every\n"
	"stage succeeded: a failure leaves it as it was.\n"
	MS_EXIT_CODES_HELP;

#define DEBUG_DIRS_MAX 64

/* One line on stderr: what the new capture holds, and what is still bare. */
static int report_symbolized(const char *output)
{
	struct ms_capture *cap = ms_capture_load(output);
	uint64_t bare = 0, samples;

	if (!cap || ms_unsymbolized_samples(cap, &bare)) {
		ms_capture_free(cap);
		return -1;
	}
	/* samples, not rows: an imported row may stand for many */
	samples = ms_capture_sample_count(cap);
	if (bare)
		fprintf(stderr, "microscope: wrote '%s': %" PRIu64 " samples, %.1f%% with a frame "
			"still without a name (see ms-analyze problems)\n", output, samples,
			ms_percent(bare, samples));
	else
		fprintf(stderr, "microscope: wrote '%s': %" PRIu64 " samples, every frame named\n",
			output, samples);
	ms_capture_free(cap);
	return 0;
}

static int exit_code_of(const struct ms_pipeline *p, int culprit)
{
	int st = p->stages[culprit].status;

	if (WIFEXITED(st) && WEXITSTATUS(st) == MS_EXIT_USAGE)
		return MS_EXIT_USAGE;
	if (WIFEXITED(st) && WEXITSTATUS(st) == MS_EXIT_SYSTEM)
		return MS_EXIT_SYSTEM;
	return MS_EXIT_ERROR;
}

int ms_front_symbolize(int argc, char **argv)
{
	enum { OPT_DEBUG_DIR = 256 };
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *dump_argv[] = { "ms-capture", "--dump", NULL, "--omit-failed", NULL };
	char *symbolize_argv[2 * DEBUG_DIRS_MAX + 2] = { "ms-symbolize" };
	char *capture_argv[] = { "ms-capture", "--keep-names", NULL, "-o", NULL, NULL };
	struct ms_pipeline p = { 0 };
	const char *input, *output = NULL;
	unsigned n_sym = 1;
	char *tmp = NULL, what[256];
	int c, culprit, ret = MS_EXIT_ERROR;
	size_t tmp_len;

	while ((c = getopt_long(argc, argv, "+o:h", options, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_DEBUG_DIR:
			if (n_sym + 2 >= sizeof(symbolize_argv) / sizeof(symbolize_argv[0])) {
				ms_error("--debug-dir: at most %d directories", DEBUG_DIRS_MAX);
				return MS_EXIT_USAGE;
			}
			symbolize_argv[n_sym++] = "--debug-dir";
			symbolize_argv[n_sym++] = optarg;
			break;
		case 'h':
			fputs(usage_symbolize, stdout);
			return MS_EXIT_OK;
		default:
			fputs(usage_symbolize, stderr);
			return MS_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		ms_error("symbolize needs exactly one capture file");
		fputs(usage_symbolize, stderr);
		return MS_EXIT_USAGE;
	}
	input = argv[optind];
	/* Its stages read the input by name, and the output replaces a file. */
	if (!strcmp(input, "-") || (output && !strcmp(output, "-"))) {
		ms_error("symbolize reads a capture file and writes one: '-' (stdin or stdout) is "
			 "not taken; give file names");
		fputs("Try 'microscope symbolize --help'.\n", stderr);
		return MS_EXIT_USAGE;
	}
	if (!output)
		output = input;

	/* Beside the output, so that the rename stays on one file system. */
	tmp_len = strlen(output) + 48;
	tmp = malloc(tmp_len);
	if (!tmp) {
		ms_error("out of memory");
		return MS_EXIT_ERROR;
	}
	snprintf(tmp, tmp_len, "%s.tmp.symbolize.%ld", output, (long)getpid());
	dump_argv[2] = (char *)input;
	capture_argv[2] = (char *)input;
	capture_argv[4] = tmp;

	p.n = 3;
	p.stages[0] = (struct ms_stage){ .name = "ms-capture", .argv = dump_argv };
	p.stages[1] = (struct ms_stage){ .name = "ms-symbolize", .argv = symbolize_argv };
	p.stages[2] = (struct ms_stage){ .name = "ms-capture", .argv = capture_argv };
	if (ms_pipeline_start(&p))
		goto out;
	ms_pipeline_wait(&p);

	culprit = ms_pipeline_culprit(&p, false);
	if (culprit >= 0) {
		ms_pipeline_describe(&p, (unsigned)culprit, what, sizeof(what));
		ms_error("symbolization failed: %s; '%s' was not %s", what, output,
			 output == input ? "changed" : "written");
		ret = exit_code_of(&p, culprit);
		goto out;
	}
	if (rename(tmp, output) < 0) {
		ms_error_errno("cannot rename '%s' to '%s'", tmp, output);
		goto out;
	}
	ms_sync_dir_of(output);
	ret = report_symbolized(output) ? MS_EXIT_ERROR : MS_EXIT_OK;
out:
	/* Nothing under the temporary name survives a failure. */
	if (ret != MS_EXIT_OK && unlink(tmp) < 0 && errno != ENOENT)
		ms_error_errno("cannot remove '%s'", tmp);
	free(tmp);
	return ret;
}

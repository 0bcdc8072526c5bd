/*
 * microscope: the front command. `record` runs the stage pipeline
 * (ms-collect | ms-decode | ms-unwind | ms-symbolize | ms-capture), `report`
 * prints a capture's summary, hottest functions and call tree, `symbolize`
 * names a capture's frames after the recording, `serve` shows captures to
 * a browser.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd/microscope/microscope.h"
#include "util/error.h"

static const char usage_main[] =
	"usage: microscope <command> [options]\n"
	"\n"
	"commands:\n"
	"  record    run or attach to a program and write a capture\n"
	"  report    print a capture's summary, hottest functions and call tree\n"
	"  convert   convert between a capture and pprof, folded, Chrome trace, speedscope\n"
	"  symbolize name the frames of a capture recorded with --symbolize=deferred\n"
	"  serve     serve captures to a browser: the page and the views as JSON\n"
	"\n"
	"microscope <command> --help shows the options of one command.\n"
	MS_EXIT_CODES_HELP;

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "record", ms_front_record },
	{ "report", ms_front_report },
	{ "convert", ms_front_convert },
	{ "symbolize", ms_front_symbolize },
	{ "serve", ms_front_serve },
};

int main(int argc, char **argv)
{
	const char *cmd;

	ms_set_progname("microscope");
	if (argc < 2) {
		fputs(usage_main, stderr);
		return MS_EXIT_USAGE;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("microscope %s\n", PACKAGE_VERSION);
		return MS_EXIT_OK;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage_main, stdout);
		return MS_EXIT_OK;
	}
	/* Subcommands parse their own options from argv[1]. */
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	ms_error("unknown command '%s'", cmd);
	fputs(usage_main, stderr);
	return MS_EXIT_USAGE;
}

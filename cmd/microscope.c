/* microscope: front command (placeholder until the stages exist). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"

int main(int argc, char **argv)
{
	ms_set_progname(argv[0]);
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("microscope %s\n", PACKAGE_VERSION);
		return 0;
	}
	fprintf(stderr, "usage: microscope record|report ...\n");
	return MS_EXIT_USAGE;
}

/*
 * ms-debuginfod-find: fetch the debug file of a build id from the servers
 * in DEBUGINFOD_URLS and print the path of the copy libdebuginfod keeps.
 * ms-symbolize runs it when no local directory has a module's debug file:
 * ms-symbolize is linked statically (a process starts faster), and a
 * static program cannot load libdebuginfod.so.1; this small dynamic one
 * can. The library is loaded with dlopen(), so that it stays optional.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUILD_ID_MAX 64

static const char usage_text[] =
	"usage: ms-debuginfod-find BUILD-ID\n"
	"\n"
	"Ask the debuginfod servers listed in DEBUGINFOD_URLS for the debug file\n"
	"of BUILD-ID (hexadecimal) and print the path of the local copy that\n"
	"libdebuginfod.so.1 keeps (DEBUGINFOD_CACHE_PATH, else\n"
	"~/.cache/debuginfod_client). ms-symbolize runs it; run it by hand to\n"
	"see why a build id is not served.\n"
	"\n"
	"  -h, --help         show this help\n"
	"  --version          show the version\n"
	"\n"
	"Exit status: 0 printed the path, 1 not served or no libdebuginfod,\n"
	"2 usage error.\n";

/* elfutils/debuginfod.h's functions, loaded at run time. */
typedef struct debuginfod_client debuginfod_client;

static int parse_hex(const char *s, unsigned char *out, int *len)
{
	size_t n = strlen(s);

	if (n < 2 || n % 2 || n / 2 > BUILD_ID_MAX)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		unsigned int v;

		if (!strchr("0123456789abcdefABCDEF", s[i]) || !strchr("0123456789abcdefABCDEF", s[i + 1]) ||
		    sscanf(s + i, "%2x", &v) != 1)
			return -1;
		out[i / 2] = (unsigned char)v;
	}
	*len = (int)(n / 2);
	return 0;
}

int main(int argc, char **argv)
{
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	int (*find)(debuginfod_client *, const unsigned char *, int, char **);
	unsigned char bid[BUILD_ID_MAX];
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *client;
	char *path = NULL;
	void *lib;
	int len, fd;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("ms-debuginfod-find %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (argc == 2 && argv[1][0] == '-') {
		fprintf(stderr, "ms-debuginfod-find: unknown option '%s'\n%s", argv[1], usage_text);
		return 2;
	}
	if (argc != 2 || parse_hex(argv[1], bid, &len) < 0) {
		fprintf(stderr, "ms-debuginfod-find: expected one build id in hexadecimal (an even "
			"number of digits, at most %d bytes)\n%s", BUILD_ID_MAX, usage_text);
		return 2;
	}
	if (!urls || !*urls) {
		fprintf(stderr, "ms-debuginfod-find: DEBUGINFOD_URLS is not set: no server to ask "
			"for build id %s\n", argv[1]);
		return 1;
	}
	if (!(lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "ms-debuginfod-find: cannot load libdebuginfod.so.1 (%s): install "
			"the Debian package 'libdebuginfod1'\n", dlerror());
		return 1;
	}
	*(void **)&begin = dlsym(lib, "debuginfod_begin");
	*(void **)&end = dlsym(lib, "debuginfod_end");
	*(void **)&find = dlsym(lib, "debuginfod_find_debuginfo");
	if (!begin || !end || !find || !(client = begin())) {
		fprintf(stderr, "ms-debuginfod-find: libdebuginfod.so.1 lacks debuginfod_begin, "
			"debuginfod_end or debuginfod_find_debuginfo, or could not start\n");
		return 1;
	}
	fd = find(client, bid, len, &path);
	end(client);
	if (fd < 0 || !path) {
		fprintf(stderr, "ms-debuginfod-find: build id %s: %s (servers: %s)\n", argv[1],
			fd < 0 ? strerror(-fd) : "no path given", urls);
		free(path);
		return 1;
	}
	close(fd);
	printf("%s\n", path);
	free(path);
	return fflush(stdout) == 0 ? 0 : 1;
}

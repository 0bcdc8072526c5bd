/*
 * microscope serve [--port N] [--listen ADDR] [--open] CAPTURE...: every
 * capture loaded and validated first, then the browser view over HTTP
 * (libcommon/serve, web/API.md) until SIGINT or SIGTERM.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "cmd/microscope/microscope.h"
#include "serve/serve.h"
#include "util/error.h"

extern char **environ;

static const char usage_serve[] =
	"usage: microscope serve [--port N] [--listen ADDR] [--open] CAPTURE...\n"
	"\n"
	"Serves the captures, read-only, to a browser: the page (embedded) and the\n"
	"views of ms-analyze as JSON (web/API.md). Every capture is loaded and\n"
	"checked first: one that fails is refused and nothing is served. Prints the\n"
	"URL on stdout and serves until SIGINT (Ctrl-C) or SIGTERM.\n"
	"\n"
	"  --port N       the port (default 8080; 0: any free port)\n"
	"  --listen ADDR  a numeric address other than the loopback (127.0.0.1 and\n"
	"                 ::1): anyone who can reach it can then read the profile\n"
	"  --open         open the URL in the desktop's browser (xdg-open)\n"
	"  -h, --help     print this help and exit\n"
	"\n"
	MS_EXIT_CODES_HELP;

#define DEFAULT_PORT 8080

struct serve_cli {
	struct ms_serve_options opts;
	bool open;
	uint32_t n_caps;
};

static void open_browser(const char *url)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = { "xdg-open", (char *)url, NULL };
	pid_t pid;
	int rc;

	/* its words go to stderr: stdout is the URL alone */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	/* not waited for: reaped by the kernel */
	signal(SIGCHLD, SIG_IGN);
	rc = posix_spawnp(&pid, "xdg-open", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc == ENOENT)
		ms_warn("--open: xdg-open is not installed (Debian's package xdg-utils has it): "
			"open %s in a browser yourself", url);
	else if (rc)
		ms_warn("--open: starting xdg-open failed (%s): open %s in a browser yourself",
			strerror(rc), url);
}

static void serving(const char *url, void *arg)
{
	const struct serve_cli *c = arg;

	printf("%s\n", url);
	fflush(stdout);
	fprintf(stderr, "%s: serving %u capture%s at %s\n", ms_progname(), (unsigned)c->n_caps,
		c->n_caps == 1 ? "" : "s", url);
	if (c->open)
		open_browser(url);
}

static bool loopback_address(const char *a)
{
	return !strncmp(a, "127.", 4) || !strcmp(a, "::1");
}

/* The file's base name: a page is never told where the file lies. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!strcmp(path, "-"))
		return "stdin";
	return slash && slash[1] ? slash + 1 : path;
}

enum { OPT_PORT = 256, OPT_LISTEN, OPT_OPEN };

static const struct option longopts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "open", no_argument, NULL, OPT_OPEN },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void parse_options(struct serve_cli *c, int argc, char **argv)
{
	struct in6_addr addr;	/* room for either family */
	char *end;
	unsigned long port;
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_PORT:
			errno = 0;
			port = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || optarg[0] == '+' ||
			    port > 65535)
				ms_usage_error("--port wants a port from 0 to 65535 (0: any free port), "
					       "not '%s'", optarg);
			c->opts.port = (uint16_t)port;
			break;
		case OPT_LISTEN:
			if (inet_pton(AF_INET, optarg, &addr) != 1 &&
			    inet_pton(AF_INET6, optarg, &addr) != 1)
				ms_usage_error("--listen wants a numeric IPv4 or IPv6 address (127.0.0.1, "
					       "0.0.0.0, ::1, ::), not '%s'", optarg);
			c->opts.listen = optarg;
			break;
		case OPT_OPEN: c->open = true; break;
		case 'h':
			fputs(usage_serve, stdout);
			exit(ms_finish_stdout("the help"));
		case ':':
			ms_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			ms_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
}

int ms_front_serve(int argc, char **argv)
{
	struct serve_cli c = { .opts = { .port = DEFAULT_PORT } };
	struct ms_serve_capture *caps;
	bool system = false;
	int n, rc = MS_EXIT_OK;

	parse_options(&c, argc, argv);
	n = argc - optind;
	if (n < 1)
		ms_usage_error("which captures? give one or more .msc files");
	if (n > 1024)
		ms_usage_error("%d captures: serve at most 1024 at once", n);
	if (!(caps = calloc((size_t)n, sizeof(*caps)))) {
		ms_error("out of memory for %d captures", n);
		return MS_EXIT_ERROR;
	}
	/* every capture checked before anything is served */
	for (int i = 0; i < n; i++) {
		const char *path = argv[optind + i];

		caps[i].name = base_name(path);
		if (!(caps[i].cap = ms_capture_load(path))) {
			ms_error("'%s' is refused: nothing is served (fix or leave out that capture)",
				 path);
			rc = MS_EXIT_ERROR;
			goto out;
		}
		c.n_caps++;
	}
	if (c.opts.listen && !loopback_address(c.opts.listen))
		ms_warn("--listen %s: anyone who can reach this address can read the profile "
			"(the default, 127.0.0.1, keeps it to this machine)", c.opts.listen);
	if (ms_serve_run(caps, c.n_caps, &c.opts, serving, &c, &system))
		rc = system ? MS_EXIT_SYSTEM : MS_EXIT_ERROR;
out:
	for (uint32_t i = 0; i < c.n_caps; i++)
		ms_capture_free((struct ms_capture *)caps[i].cap);
	free(caps);
	return rc;
}

#include "util/error.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *progname = "microscope";

void ms_set_progname(const char *name)
{
	const char *slash = strrchr(name, '/');
	progname = slash ? slash + 1 : name;
}

const char *ms_progname(void)
{
	return progname;
}

/* This thread's catcher (ms_error_catch()), or NULL: stderr. */
static _Thread_local struct ms_error_catcher *catcher;

struct ms_error_catcher *ms_error_catch(struct ms_error_catcher *c)
{
	struct ms_error_catcher *old = catcher;

	if (c) {
		c->caught = 0;
		if (c->len)
			c->buf[0] = '\0';
	}
	catcher = c;
	return old;
}

static void vreport(const char *prefix, const char *fmt, va_list ap, const char *suffix)
{
	char buf[4096];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (catcher) {
		/* the first message is the cause: later ones only say what it stopped */
		if (!catcher->caught++ && catcher->len)
			snprintf(catcher->buf, catcher->len, "%s%s%s%s", prefix, buf,
				 suffix ? ": " : "", suffix ? suffix : "");
		return;
	}
	fprintf(stderr, "%s: %s%s%s%s\n", progname, prefix, buf,
		suffix ? ": " : "", suffix ? suffix : "");
}

int ms_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	return -1;
}

int ms_error_errno(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
	return -1;
}

/* Whether fd is a pipe or socket nobody reads any more (Linux: POLLERR on a pipe's writer). */
static bool reader_gone(int fd)
{
	struct pollfd p = { .fd = fd };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

int ms_finish_stdout(const char *what)
{
	int fd = fileno(stdout), err;
	bool failed = fflush(stdout) != 0 || ferror(stdout), gone;

	/* An earlier write may have failed: stdio keeps the error, not errno. */
	err = errno;
	gone = failed && (err == EPIPE || reader_gone(fd));
	if (fclose(stdout) != 0 && !failed) {
		failed = true;
		err = errno;
		gone = err == EPIPE;
	}
	if (!failed || gone)
		return MS_EXIT_OK;
	errno = err;
	ms_error_errno("cannot write %s to stdout", what);
	return MS_EXIT_ERROR;
}

void ms_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap, NULL);
	va_end(ap);
}

void ms_usage_error(const char *fmt, ...)
{
	va_list ap;

	catcher = NULL;		/* it exits: said where people see it */
	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", progname);
	exit(MS_EXIT_USAGE);
}

void ms_die(int code, const char *fmt, ...)
{
	va_list ap;

	catcher = NULL;
	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	exit(code);
}

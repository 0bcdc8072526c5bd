/*
 * Unit tests: capture what a call prints on stderr, to check that a failure
 * says one clear message. Include after <cmocka.h>; one capture at a time.
 */
#ifndef MS_TESTS_STDERR_CAPTURE_H
#define MS_TESTS_STDERR_CAPTURE_H

#include <stdio.h>
#include <unistd.h>

static char errbuf[8192];
static int saved_fd = -1;
static FILE *errfile;

static void stderr_begin(void)
{
	fflush(stderr);
	errfile = tmpfile();
	assert_non_null(errfile);
	saved_fd = dup(2);
	dup2(fileno(errfile), 2);
}

/* What was printed since stderr_begin(); valid until the next capture. */
static const char *stderr_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	rewind(errfile);
	n = fread(errbuf, 1, sizeof(errbuf) - 1, errfile);
	errbuf[n] = '\0';
	fclose(errfile);
	return errbuf;
}

static __attribute__((unused)) unsigned count_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#endif

#include "util/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"

int ms_open_input(const char *arg, const char **name)
{
	int fd;

	if (!arg || !strcmp(arg, "-")) {
		*name = "stdin";
		return STDIN_FILENO;
	}
	*name = arg;
	fd = open(arg, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ms_error_errno("cannot open '%s'", arg);
	return fd;
}

void ms_close_input(int fd)
{
	if (fd > STDIN_FILENO)
		close(fd);
}

int ms_read_file(const char *path, size_t max, unsigned char **bufp, size_t *lenp)
{
	const char *name;
	int fd = ms_open_input(path, &name);
	unsigned char *buf = NULL;
	size_t len = 0, alloc = 0;
	int ret = -1;

	*bufp = NULL;
	*lenp = 0;
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n;

		if (len == alloc) {
			/* one byte past max is enough to tell a file too large */
			size_t grow = alloc ? (alloc > max / 2 ? max + 1 : alloc * 2) : 1 << 16;
			unsigned char *p;

			if (alloc > max) {
				ms_error("'%s' is larger than %zu bytes: refused", name, max);
				goto out;
			}
			p = realloc(buf, grow + 1);
			if (!p) {
				ms_error("out of memory reading '%s'", name);
				goto out;
			}
			buf = p;
			alloc = grow;
		}
		n = read(fd, buf + len, alloc - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ms_error_errno("cannot read '%s'", name);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		ms_error("'%s' is larger than %zu bytes: refused", name, max);
		goto out;
	}
	if (!buf && !(buf = malloc(1))) {
		ms_error("out of memory reading '%s'", name);
		goto out;
	}
	buf[len] = '\0';	/* room was kept: text parsers may rely on it */
	*bufp = buf;
	*lenp = len;
	buf = NULL;
	ret = 0;
out:
	free(buf);
	ms_close_input(fd);
	return ret;
}

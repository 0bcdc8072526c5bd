#include "util/input.h"

#include <fcntl.h>
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

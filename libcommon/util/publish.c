#include "util/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

static void release(struct ms_publish *p)
{
	free(p->path);
	free(p->tmp);
	p->path = p->tmp = NULL;
	p->fd = -1;
}

int ms_publish_open(struct ms_publish *p, const char *path)
{
	struct stat st;
	size_t n;

	p->path = strdup(path);
	p->tmp = NULL;
	p->fd = -1;
	if (!p->path)
		return ms_error("out of memory opening '%s'", path);
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		p->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (p->fd < 0) {
			ms_error_errno("cannot open '%s'", path);
			release(p);
			return -1;
		}
		return p->fd;
	}
	n = strlen(path) + sizeof(".tmp-XXXXXX");
	p->tmp = malloc(n);
	if (!p->tmp) {
		release(p);
		return ms_error("out of memory opening '%s'", path);
	}
	snprintf(p->tmp, n, "%s.tmp-XXXXXX", path);
	p->fd = mkostemp(p->tmp, O_CLOEXEC);
	if (p->fd < 0) {
		ms_error_errno("cannot create a temporary file next to '%s'", path);
		release(p);
		return -1;
	}
	/* mkostemp makes 0600; an output is as readable as any new file. */
	{
		mode_t mask = umask(0);

		umask(mask);
		fchmod(p->fd, 0666 & ~mask);
	}
	return p->fd;
}

/* Make the rename itself durable; a failure here loses nothing written. */
static void sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

int ms_publish_commit(struct ms_publish *p)
{
	int ret = 0;

	if (!p->tmp) {
		if (close(p->fd) < 0)
			ret = ms_error_errno("cannot write '%s'", p->path);
		release(p);
		return ret;
	}
	if (fsync(p->fd) < 0) {
		ms_error_errno("cannot write '%s'", p->tmp);
		ms_publish_abort(p);
		return -1;
	}
	if (close(p->fd) < 0) {
		p->fd = -1;
		ms_error_errno("cannot write '%s'", p->tmp);
		ms_publish_abort(p);
		return -1;
	}
	p->fd = -1;
	if (rename(p->tmp, p->path) < 0) {
		ms_error_errno("cannot rename '%s' to '%s'", p->tmp, p->path);
		ms_publish_abort(p);
		return -1;
	}
	sync_dir(p->path);
	release(p);
	return 0;
}

void ms_publish_abort(struct ms_publish *p)
{
	if (p->fd >= 0)
		close(p->fd);
	if (p->tmp)
		unlink(p->tmp);
	release(p);
}

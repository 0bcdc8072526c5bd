/* The file STACK_FILE records name: see stackfile.h. */
#include "stream/stackfile.h"
#include "util/mapguard.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/error.h"
#include "util/prefault.h"
#include "util/safeopen.h"

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
}

int ms_stack_file_describe(int fd, struct ms_stack_file *f, char *path, size_t cap,
			   const char **why)
{
	static const char deleted[] = " (deleted)";
	char link[64];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "the input is not a regular file";
		return -1;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, cap - 1);
	if (n <= 0 || (size_t)n >= cap - 1 || path[0] != '/') {
		*why = "the input file's path is unknown (is /proc mounted?)";
		return -1;
	}
	path[n] = '\0';
	if ((size_t)n > sizeof(deleted) - 1 &&
	    !strcmp(path + n - (sizeof(deleted) - 1), deleted)) {
		*why = "the input file was deleted";
		return -1;
	}
	f->path.ptr = path;
	f->path.len = (uint32_t)n;
	f->dev_maj = major(st.st_dev);
	f->dev_min = minor(st.st_dev);
	f->ino = st.st_ino;
	f->size = (uint64_t)st.st_size;
	f->mtime = mtime_ns(&st);
	return 0;
}

int ms_stack_map_open(struct ms_stack_map *m, const struct ms_stack_file *f,
		      const char *in_name)
{
	static const char fix[] = "run ms-decode with --stack-bytes=copy to get a stream that "
				  "carries its stack copies";
	char path[4096];
	const char *why;
	struct stat st;
	void *p;
	int fd;

	ms_stack_map_close(m);
	m->guard = -1;
	m->cut_said = false;
	if (!f->path.len || f->path.len >= sizeof(path) || memchr(f->path.ptr, 0, f->path.len))
		return ms_error("'%s': the stack-file record names no usable path: %s",
				in_name, fix);
	memcpy(path, f->path.ptr, f->path.len);
	path[f->path.len] = '\0';
	/*
	 * The path is the stream's word: a FIFO there must not hang the stage
	 * (non-blocking, refused), and a link is not the file ms-decode read,
	 * whose path came from /proc/self/fd and so holds none.
	 */
	fd = ms_open_regular(AT_FDCWD, path, MS_OPEN_NOFOLLOW, SIZE_MAX, &st, &why);
	if (fd < 0)
		return ms_error("'%s': the stack copies of its samples are in '%s', which cannot "
				"be opened here (%s): %s", in_name, path, why, fix);
	if (major(st.st_dev) != f->dev_maj ||
	    minor(st.st_dev) != f->dev_min || st.st_ino != f->ino ||
	    (uint64_t)st.st_size != f->size || mtime_ns(&st) != f->mtime) {
		close(fd);
		return ms_error("'%s': the stack copies of its samples are in '%s', but the file "
				"there is not the one ms-decode read (device, inode, size or "
				"modification time differ): %s", in_name, path, fix);
	}
	if (!f->size) {
		close(fd);
		m->bytes = (const uint8_t *)"";
		m->len = 0;
		return 0;
	}
	p = mmap(NULL, (size_t)f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return ms_error("'%s': cannot map '%s' (%" PRIu64 " bytes), where the stack copies "
				"of its samples are: %s", in_name, path, f->size, strerror(errno));
	m->bytes = p;
	m->len = (size_t)f->size;
	/* Guarded before anything reads it: a truncation is an error, not SIGBUS. */
	m->guard = ms_mapguard_add(p, m->len);
	/* ahead of the walk: a fault per 64 KiB as it reaches each copy cost more */
	m->prefault = ms_prefault_start(m->bytes, m->len);
	return 0;
}

bool ms_stack_map_cut(struct ms_stack_map *m, const char *in_name)
{
	size_t at;

	if (!m->bytes || !m->len || !ms_mapguard_cut(m->guard, &at))
		return false;
	if (!m->cut_said)
		ms_error("'%s': its stack file was cut short while being read: it ends before "
			 "byte %zu now (another process truncated or rewrote it); run ms-decode "
			 "again with --stack-bytes=copy", in_name, at);
	m->cut_said = true;
	return true;
}

void ms_stack_map_close(struct ms_stack_map *m)
{
	ms_prefault_wait(m->prefault);
	m->prefault = NULL;
	if (m->bytes && m->len) {
		ms_mapguard_remove(m->guard);
		munmap((void *)m->bytes, m->len);
	}
	m->bytes = NULL;
	m->len = 0;
}

/*
 * Reading the perf map from a file descriptor: the bounded read the
 * parser (perfmap.c) is fed from. The caller opens the map (safely: it is
 * another process's file) and keeps the descriptor or reopens it; each
 * call goes on from where the last stopped.
 */
#include "jit/perfmapread.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/error.h"

/* The read's buffer: one feed's worth, kept in the table. */
#define READ_CHUNK (64u * 1024u)

int ms_perfmap_read(struct ms_perfmap *t, int fd, const char *path,
		    struct ms_perfmap_readres *res)
{
	uint32_t before = t->n;
	uint64_t taken = 0;

	*res = (struct ms_perfmap_readres){ 0 };
	if (!t->readbuf && !(t->readbuf = malloc(READ_CHUNK)))
		return ms_error("cannot read the perf map '%s': out of memory", path);
	while (taken < MS_PERFMAP_READ_MAX) {
		uint64_t want = MS_PERFMAP_READ_MAX - taken;
		ssize_t got;

		if (want > READ_CHUNK)
			want = READ_CHUNK;
		got = pread(fd, t->readbuf, (size_t)want, (off_t)t->consumed);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return ms_error_errno("cannot read the perf map '%s' at offset %llu",
					      path, (unsigned long long)t->consumed);
		if (got == 0)
			break;
		if (ms_perfmap_feed(t, t->readbuf, (size_t)got) < 0)
			return -1;
		taken += (uint64_t)got;
	}
	res->bytes = taken;
	res->bounded = taken == MS_PERFMAP_READ_MAX;
	res->funcs = t->n - before;
	return ms_perfmap_index(t);
}

/*
 * One read of a perf map (perfmap.h) from a file descriptor: at most
 * MS_PERFMAP_READ_MAX bytes from where the last read stopped
 * (t->consumed), fed to the parser and indexed.
 */
#ifndef MS_JIT_PERFMAPREAD_H
#define MS_JIT_PERFMAPREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "jit/perfmap.h"

struct ms_perfmap_readres {
	uint64_t bytes;		/* taken from the map by this read */
	uint32_t funcs;		/* new functions: 0 is "found nothing new" */
	bool bounded;		/* stopped at MS_PERFMAP_READ_MAX: more may follow */
};

/*
 * Read the map open as fd (path names it in messages) from t->consumed on,
 * to its end or MS_PERFMAP_READ_MAX bytes, and index what came. 0 and
 * *res, or -1 after a message (a failed read, or out of memory).
 */
int ms_perfmap_read(struct ms_perfmap *t, int fd, const char *path,
		    struct ms_perfmap_readres *res);

#endif

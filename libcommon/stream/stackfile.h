/*
 * The file a STACK_FILE record names (records.h): the saved stream whose
 * stack copies SAMPLE records refer to instead of carrying them.
 *
 * ms-decode describes its input file; ms-unwind opens the file by its path
 * and uses it only when its identity (device, inode, size, modification
 * time) is the one described: a stream saved again, edited or replaced at
 * the same path is not the one the samples point into.
 */
#ifndef MS_STREAM_STACKFILE_H
#define MS_STREAM_STACKFILE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "stream/records.h"

/*
 * Describe the regular file open on fd into f, its path (absolute, from
 * /proc/self/fd) in path[cap]. Returns 0, or -1 with *why (not a regular
 * file, deleted, no path) and no message.
 */
int ms_stack_file_describe(int fd, struct ms_stack_file *f, char *path, size_t cap,
			   const char **why);

struct ms_stack_map {
	const uint8_t *bytes;	/* the whole file, read-only; NULL when none */
	size_t len;
	struct ms_prefault *prefault;	/* faulting it in (util/prefault.h) */
	int guard;		/* its SIGBUS guard (util/mapguard.h), or -1 */
	bool cut_said;
};

/*
 * Map the file f names after proving it is that file. in_name names the
 * stream that referred to it, for the message. Returns 0, or -1 after a
 * message that says how to get a stream that stands alone.
 */
int ms_stack_map_open(struct ms_stack_map *m, const struct ms_stack_file *f,
		      const char *in_name);
/*
 * The len bytes at offset, or NULL when they are not all in the file
 * (bounds are checked without overflow).
 */
static inline const uint8_t *ms_stack_map_at(const struct ms_stack_map *m, uint64_t offset,
					     uint32_t len)
{
	if (!m->bytes || offset > m->len || len > m->len - offset)
		return NULL;
	return m->bytes + offset;
}
/*
 * Whether the file was cut short under us (another process truncated it):
 * the bytes read past the cut were zeros. Says so once, naming in_name's
 * stack file; then true.
 */
bool ms_stack_map_cut(struct ms_stack_map *m, const char *in_name);
void ms_stack_map_close(struct ms_stack_map *m);

#endif

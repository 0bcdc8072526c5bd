/*
 * When to read a JIT's descriptions again (a perf map, the GDB JIT
 * interface's objects): a read that found nothing new is not made again
 * for MS_JIT_RETRY_NS of the samples' time, unless the process mapped
 * something since. A foreign-function library's callbacks run in
 * anonymous code nothing names, and would otherwise make the recorder
 * open the process's files at every sample landing there.
 */
#ifndef MS_JIT_THROTTLE_H
#define MS_JIT_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

#define MS_JIT_RETRY_NS (20ull * 1000 * 1000)

struct ms_jit_throttle {
	bool empty;		/* the last read found nothing new */
	uint64_t empty_at;	/* then: the sample time it was made at, ns */
};

/*
 * Whether to read at sample time now_ns: yes when no read found nothing
 * yet, when the process mapped something since that read (mapped_since),
 * or when MS_JIT_RETRY_NS passed since it. A time before that read's (the
 * rings of several CPUs interleave) is within the wait. Pure.
 */
bool ms_jit_read_due(const struct ms_jit_throttle *th, uint64_t now_ns, bool mapped_since);

/* Note a read made at sample time now_ns, and whether it found anything new. */
void ms_jit_read_done(struct ms_jit_throttle *th, uint64_t now_ns, bool found_new);

#endif

/*
 * Stack copies cut to what the kernel could read (ms-collect).
 *
 * perf writes a sample's whole requested copy (sample_stack_user bytes)
 * and says in dyn_size how many of them it could read: a stack near the
 * top of its mapping (a main thread a few calls deep, python's interpreter
 * loop) fills an 8 KiB copy with far fewer bytes that mean anything, and
 * the rest costs the ring, the pipe, the saved stream and every stage that
 * maps it. ms-collect cuts the copy to dyn_size rounded up to 8 and sets
 * the copy's size field and the record's size to match (a copy of which
 * nothing was readable loses its dyn_size field too, as the kernel writes
 * a copy of size 0); every other byte stays the kernel's. A record that is
 * not a sample with something to cut, or that does not decode, is left as
 * it is, for ms-decode to judge.
 */
#ifndef MS_PERF_TRIM_H
#define MS_PERF_TRIM_H

#include <stdbool.h>
#include <stdint.h>

#include "perf/decode.h"

/*
 * The decoder knows every attr and tracepoint the collector wrote, so it
 * picks each sample's layout by its id: the sampler's samples and the
 * sched_switch samples (switch-outs) are cut alike.
 */
struct ms_trimmer {
	bool off;		/* an attr or tracepoint did not fit: records go as they are */
	/*
	 * Decode mappings, comms, forks and exits too, for a watch of the
	 * recording (perf/collect.h): samples are decoded anyway.
	 */
	bool decode_all;
	/* What the last ms_trim() decoded into d: MS_DECODE_*, MS_DECODE_SKIP if nothing. */
	int decoded;
	struct ms_decoder dec;
	struct ms_decoded d;
	uint8_t buf[65536];	/* the cut record (perf records are at most 64 KiB) */
};

/* NULL when out of memory. */
struct ms_trimmer *ms_trimmer_new(void);
/* Learn an ATTR the collector wrote; one too many turns trimming off. */
void ms_trimmer_attr(struct ms_trimmer *t, const struct ms_attr *a);
/* Learn a TRACEPOINT the collector wrote (before its ATTR); one too many turns trimming off. */
void ms_trimmer_tracepoint(struct ms_trimmer *t, const struct ms_tracepoint *tp);
/*
 * The record to write for the kernel record rec of *len bytes from the
 * ring of CPU cpu: rec itself, or the cut copy in t's buffer with *len
 * updated (valid until the next call). t->decoded and t->d say what it
 * decoded (a sample's stack copy borrows from rec).
 */
const uint8_t *ms_trim(struct ms_trimmer *t, uint32_t cpu, const uint8_t *rec, uint32_t *len);
void ms_trimmer_free(struct ms_trimmer *t);

#endif

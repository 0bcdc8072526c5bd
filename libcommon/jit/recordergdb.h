/*
 * ms-collect's JIT recorder (jit/recorder.h), the GDB JIT interface part:
 * per process, where its descriptors are (gdbjitfind.h), the objects
 * shipped as MS_REC_JIT_OBJECT records, the code they cover, and what
 * waits for room in the output.
 *
 * When the recorder's trigger fires for a process (a sample in anonymous
 * code nothing read names, an ip in no mapping the recorder saw, or an ip
 * in an object's code: it may have been unregistered), ms_gdb_check():
 *  - held back by the throttle (throttle.h): 20 ms of samples' time after
 *    a check that found nothing new, unless the process mapped something;
 *  - searches the process's files for __jit_debug_descriptor, once per
 *    set of file mappings (a file mapping record asks for a new search);
 *    a process without it is never read until it maps another file;
 *  - reads each descriptor's 24 bytes, and walks the entry lists only when
 *    they changed since the last walk or a mapping replaced an object's
 *    code since;
 *  - queues an unregistration for each entry shipped that left the list
 *    (only after a complete walk), and each new entry (by entry address,
 *    image address and size), or one whose code a mapping replaced.
 * ms_gdb_flush() then writes the queue as room allows: an object's image
 * is read from the process when its turn comes (time: then, and after
 * every mapping the process made), sanity-checked, and written in chunks
 * of MS_JIT_OBJECT_CHUNK, all of them: once its first chunk is out the
 * rest follow before anything else the recorder writes, the sample
 * waiting for room if needed. Its executable sections' ranges then count
 * as covered (no perf-map read fires there).
 *
 * Failures are counted problems of ms-collect naming the pid and address:
 * jit-process-gone, jit-module-unproved, jit-descriptors-max,
 * jit-descriptor-unreadable, jit-descriptor-version, jit-entry-unreadable,
 * jit-entries-cycle, jit-objects-max, jit-object-too-large,
 * jit-object-unreadable, jit-object-not-elf. An object that failed is not
 * tried again while its entry stays (its problem is counted once).
 *
 * Allocation: per search, walk and object, never per sample.
 */
#ifndef MS_JIT_RECORDERGDB_H
#define MS_JIT_RECORDERGDB_H

#include <stdbool.h>
#include <stdint.h>

#include "jit/gdbjit.h"
#include "jit/gdbjitfind.h"
#include "jit/recorderanon.h"
#include "jit/throttle.h"
#include "perf/collect.h"

/* An object shipped (or tried), beside its entry. */
struct ms_gdb_obj {
	uint64_t read_at;	/* its records' time; 0 while queued */
	bool failed;		/* not shipped (too large, unreadable, not ELF) */
	bool ended;		/* a mapping made after read_at replaced its code */
	uint32_t n_ranges;
	struct ms_gdbjit_range *ranges;	/* its executable sections, merged */
};

struct ms_gdb_item {
	struct ms_gdbjit_entry e;
	bool unreg;
};

struct ms_gdb_proc {
	bool searched;		/* since its file mappings last changed */
	uint32_t n_desc;
	uint64_t desc[MS_GDBJIT_DESCS_MAX];
	uint8_t last[MS_GDBJIT_DESCS_MAX][MS_GDBJIT_DESC_SIZE];	/* at the last walk */
	bool walked;		/* last[] holds a walk's bytes */
	bool replaced;		/* a mapping replaced an object's code since the last walk */
	bool mapped_since;	/* for the throttle */
	struct ms_jit_throttle th;
	/* Shipped, sorted by entry: ent[i] and obj[i]. */
	struct ms_gdbjit_entry *ent;
	struct ms_gdb_obj *obj;
	uint32_t n, alloc_ent, alloc_obj;
	struct ms_anon_set cov;	/* the code of the objects shipped and not ended */
	/* Waiting for room: q[head, n_q). */
	struct ms_gdb_item *q;
	uint32_t head, n_q, alloc_q;
	bool inflight;		/* q[head]'s image is in the shared buffer, off bytes of it out */
	uint64_t off;
	uint64_t inflight_time;
};

/* What every process shares: the files' answers, the walk, one image at a time. */
struct ms_gdb_shared {
	struct ms_gdbjit_files *files;
	struct ms_gdbjit_walk walk;
	struct ms_gdbjit_entry *list;	/* the walks of a process's descriptors, together */
	uint32_t n_list, alloc_list;
	uint8_t *img;
	uint32_t img_alloc;
	struct ms_gdb_proc *owner;	/* whose object is in img */
	struct ms_gdbjit_range *ranges;	/* scratch for an image's sections */
	uint32_t alloc_ranges;
	/* scratch for a diff: the new shipped set */
	struct ms_gdbjit_entry *nent;
	struct ms_gdb_obj *nobj;
	uint32_t nn, alloc_nent, alloc_nobj;
	struct ms_gdb_proc *diff_proc;
	uint32_t diff_pid;
	struct ms_problems *diff_problems;
	/* counts */
	uint64_t checks, throttled, searches, files_opened, desc_reads, walks;
	uint64_t objects, unregs, dropped;
};

int ms_gdb_shared_init(struct ms_gdb_shared *s);
void ms_gdb_shared_release(struct ms_gdb_shared *s);

void ms_gdb_proc_init(struct ms_gdb_proc *g);
/* Forget everything (an exec; a new process): what waited is counted dropped. */
void ms_gdb_proc_forget(struct ms_gdb_shared *s, struct ms_gdb_proc *g);
void ms_gdb_proc_release(struct ms_gdb_shared *s, struct ms_gdb_proc *g);

/*
 * A mapping [start, end) made at time: a file's asks for a new search;
 * one over an object's code read before it ends that object. True when
 * g->cov changed.
 */
bool ms_gdb_on_mmap(struct ms_gdb_proc *g, uint64_t start, uint64_t end, bool file, uint64_t time);

/* Whether nothing could be read of the process: searched, no descriptor, no file mapped since. */
static inline bool ms_gdb_never(const struct ms_gdb_proc *g)
{
	return g->searched && !g->n_desc;
}

static inline bool ms_gdb_waits(const struct ms_gdb_proc *g)
{
	return g->head < g->n_q;
}

/*
 * The trigger fired for process pid at sample time: see above. True when
 * something was queued. unnamed: the sample was in code nothing names (not
 * only in a shipped object's, checked for its unregistration), so that a
 * process that ended first is a loss, counted (jit-process-gone).
 */
bool ms_gdb_check(struct ms_gdb_shared *s, struct ms_gdb_proc *g, uint32_t pid,
		  uint64_t sample_time, bool unnamed, struct ms_problems *problems);

/*
 * Write what waits, as room allows: MS_WATCH_WRITE when all went out,
 * MS_WATCH_WAIT when the rest waits, MS_WATCH_ERROR when writing failed.
 * mapped_at: the process's latest mapping record's time. *cov_changed
 * is set when g->cov changed.
 */
enum ms_watch_verdict ms_gdb_flush(struct ms_gdb_shared *s, struct ms_gdb_proc *g, uint32_t pid,
				   uint64_t mapped_at, const struct ms_collect_out *out,
				   bool *cov_changed);

#endif

/*
 * The thread of an imported pprof sample, from its labels (pprof import
 * only; formats/pprof/threads.c says which labels and why).
 *
 * Two passes over the samples, as the importer makes them: first
 * ms_pprof_threads_check() on every sample (it learns the largest thread
 * id the file gives), then ms_pprof_threads_of() on every sample in the
 * same order, which gives each its (pid, tid) and names new threads
 * through the builder. ms_pprof_threads_finish() adds the problem row of
 * conflicting names, if any. Nothing here fails on what the labels say:
 * only memory can run out (-1 after a message).
 */
#ifndef MS_FORMATS_PPROF_THREADS_H
#define MS_FORMATS_PPROF_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/builder.h"
#include "pprof/profile.pb-c.h"
#include "util/hashindex.h"
#include "util/pairmap.h"

/* The longest thread name kept, in bytes; longer ones are cut at a character. */
#define MS_PPROF_THREAD_NAME_MAX 255

/* What the labels said that the capture does not keep (for the loss line). */
enum {
	MS_PPROF_THREADS_LOSS_IDS = 1 << 0,	/* ids that are no thread id: numbered */
	MS_PPROF_THREADS_LOSS_NAMES = 1 << 1,	/* names cut at MS_PPROF_THREAD_NAME_MAX */
};

struct ms_pprof_threads {
	char *const *strings;		/* the profile's string table */
	size_t n_strings;
	uint32_t *canon;		/* per string: the first string of its bytes, or MS_NONE */
	struct ms_index canon_ix;
	uint32_t next_tid;		/* the first tid past every tid a label gives */
	struct ms_pairmap big_ids;	/* ids past MS_PPROF_TID_MAX, by halves */
	struct ms_pairmap numbered;	/* (pid, key) of threads numbered here */
	struct ms_pairmap named;	/* (pid, tid) of threads named, ... */
	uint32_t *names;		/* ... and the canonical name each got */
	uint32_t alloc_names;
	uint64_t renamed;		/* samples that name their thread otherwise */
	uint32_t renamed_pid, renamed_tid, renamed_first, renamed_other;
	unsigned loss;			/* MS_PPROF_THREADS_LOSS_* */
};

/* For the profile's string table (which must outlive t). -1 after a message. */
int ms_pprof_threads_init(struct ms_pprof_threads *t, char *const *strings, size_t n_strings);
void ms_pprof_threads_release(struct ms_pprof_threads *t);
/* The first pass, over every sample. Labels are checked against the string table already. */
void ms_pprof_threads_check(struct ms_pprof_threads *t, const Perftools__Profiles__Sample *s);
/* Whether label key names a thread or its process (so it is not lost). */
bool ms_pprof_threads_key(const char *key);
/* The second pass: s's (pid, tid), its thread named when new. 0 or -1. */
int ms_pprof_threads_of(struct ms_pprof_threads *t, struct ms_capture_builder *b,
			const Perftools__Profiles__Sample *s, uint32_t *pid, uint32_t *tid);
/* The problem row of names in conflict, if there were any. 0 or -1. */
int ms_pprof_threads_finish(struct ms_pprof_threads *t, struct ms_capture_builder *b);

#endif

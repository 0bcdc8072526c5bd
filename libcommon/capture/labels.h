/*
 * Label spans of a loaded capture (capture.h: ms_cap_label_span) looked
 * up by sample: which value of a key a thread had at a time. The spans
 * are sorted by (thread, key, start) and those of one thread and key do
 * not overlap (the reader checks it), so a lookup is a binary search in
 * the thread's rows.
 */
#ifndef MS_CAPTURE_LABELS_H
#define MS_CAPTURE_LABELS_H

#include <stdint.h>

#include "capture/capture.h"

struct ms_labels {
	const struct ms_capture *cap;
	uint32_t *thread_start;	/* n_threads + 1: thread t's spans are [start[t], start[t+1]) */
};

/* 0, or -1 after a message (out of memory). A capture without spans allocates nothing. */
int ms_labels_init(struct ms_labels *x, const struct ms_capture *cap);
void ms_labels_release(struct ms_labels *x);
/*
 * The span of key (a string id) of thread that covers time (start <= time
 * <= end), or MS_NONE.
 */
uint32_t ms_labels_at(const struct ms_labels *x, uint32_t thread, uint32_t key, uint64_t time);
/* The id of the string s (len bytes) in cap, or MS_NONE. */
uint32_t ms_capture_find_string(const struct ms_capture *cap, const char *s, size_t len);

#endif

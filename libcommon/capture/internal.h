/*
 * Shared by the builder, the reader and the writer of captures; not for
 * consumers, which see only capture.h.
 */
#ifndef MS_CAPTURE_INTERNAL_H
#define MS_CAPTURE_INTERNAL_H

#include "capture/capture.h"

/* Blocks a capture owns (its tables and string storage), freed together. */
#define MS_CAPTURE_BLOCKS 24
struct ms_capture_storage {
	void *blocks[MS_CAPTURE_BLOCKS];
	unsigned n;
};

/* An empty capture (version, target_exit_code -1). NULL after a message. */
struct ms_capture *ms_capture_new(void);
/* Hand block to cap, to be freed by ms_capture_free(); returns block. */
void *ms_capture_keep(struct ms_capture *cap, void *block);

#endif

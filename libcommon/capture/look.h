/*
 * Looks: how a query (analysis/query.h) or an export (formats/formats.h)
 * sees each stack of a capture, as a pure function of the capture.
 *
 *  - mixed: the stack as recorded, interpreted frames (a module of kind
 *    MS_MODULE_INTERPRETED) spliced among the native ones;
 *  - native: the interpreted frames dropped: the interpreter's own frames
 *    (MS_FRAME_INTERPRETER), which ran them, stand for them;
 *  - python: a stack with an interpreted frame becomes the part from its
 *    outermost interpreted frame inward, without MS_FRAME_INTERPRETER
 *    frames, so the segments that successive activations of the
 *    interpreter's loop ran join, and native code called from Python
 *    stays where it was called; a stack without interpreted frames is
 *    unchanged.
 *
 * A look other than mixed is a capture of its own that shares every table
 * of the original but its stacks (a new prefix tree of the stacks the
 * look gives), samples, intervals and waits (their stack renumbered; their order
 * kept, so they stay sorted by time, thread and cpu, but not always by
 * stack among equals). Every view and export reads it as it reads a
 * loaded capture. A stack the look leaves without frames (native, over a
 * stack of interpreted frames alone) has no node (MS_NONE).
 */
#ifndef MS_CAPTURE_LOOK_H
#define MS_CAPTURE_LOOK_H

#include "capture/capture.h"

enum ms_look {
	MS_LOOK_MIXED = 0,
	MS_LOOK_NATIVE,
	MS_LOOK_PYTHON,
	MS_LOOK_COUNT,
};
/* "mixed", "native", "python", as options and JSON spell them. */
extern const char *const ms_look_names[MS_LOOK_COUNT];
/* The name of l, or NULL out of range. */
const char *ms_look_name(enum ms_look l);
/* The look named name: 0, or -1 (no message). */
int ms_look_by_name(const char *name, enum ms_look *out);

struct ms_look_view {
	const struct ms_capture *seen;	/* what views read: the original, or &own */
	struct ms_capture own;		/* shares the original's tables but four */
	struct ms_cap_stack *stacks;
	struct ms_cap_sample *samples;
	struct ms_cap_interval *intervals;
	struct ms_cap_wait *waits;
};

/* cap through look into v (cap must outlive it). 0, or -1 after a message. */
int ms_look_build(struct ms_look_view *v, const struct ms_capture *cap, enum ms_look look);
void ms_look_release(struct ms_look_view *v);

#endif

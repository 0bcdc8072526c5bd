/*
 * Helpers the converters share: the synthetic frames of stacks cut short,
 * sample rows keyed by (stack, thread, cut), a buffered writer, and the
 * import side's frame keys. Not an API outside formats/.
 */
#ifndef MS_FORMATS_INTERNAL_H
#define MS_FORMATS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/funcs.h"
#include "formats/formats.h"
#include "stream/records.h"
#include "util/grow.h"
#include "util/pairmap.h"

/*
 * Frames an importer knows by name only get MS_FRAME_NO_ADDRESS and an
 * address made from this base and a dense ordinal. The base lies in the
 * hole between x86-64's canonical halves, so no real address has it; a
 * hostile file that uses one anyway only makes two frames share a name.
 */
#define MS_IMPORT_KEY_BASE 0x8000000000000000ull


/*
 * Stacks cut short (capture/funcs.h): every export puts a synthetic
 * outermost frame named ms_truncated_label(end) on a stack whose end
 * ms_stack_end_truncated() says was cut, so no viewer draws a cut stack's
 * outermost frame as a root. struct ms_cuts gives each label used a dense
 * id (a "cut"), in order of first use, so that rows can be keyed by it
 * and each label written once. MS_CUTS_MAX is room for every label
 * ms_truncated_label() gives (a unit test holds it so).
 */
#define MS_CUTS_MAX 16
struct ms_cuts {
	uint32_t n;			/* labels used */
	const char *labels[MS_CUTS_MAX];	/* the label of each cut */
	bool have_last;			/* a one-entry cache: runs share an end */
	uint32_t last_end, last_id;
};
#define MS_CUTS_INIT { 0, { NULL }, false, 0, 0 }
/* The cut of a stack that ended with end, added when new; MS_NONE when it was not cut. */
uint32_t ms_cuts_id(struct ms_cuts *c, uint32_t end);

/*
 * Off-CPU intervals (capture.h: ms_cap_interval) in exports. What one
 * weighs: its duration in nanoseconds when it is complete and its cause
 * is one o chose (o->causes), else 0: an interval with an end missing
 * has no duration, and is never closed at a time the capture does not
 * know. It stands on its switch-out stack as a sample does, cut labels
 * and all; an interval with no switch-out stack at all (the stack's
 * sample was lost, or the thread left before the recording began: stack
 * MS_NONE, end unknown) stands on the synthetic frame MS_NO_STACK_LABEL.
 */
uint64_t ms_interval_weight(const struct ms_capture *cap, const struct ms_export_options *o,
			    const struct ms_cap_interval *iv);
#define MS_NO_STACK_LABEL "[no stack]"
static inline bool ms_interval_no_stack(const struct ms_cap_interval *iv)
{
	return iv->stack == MS_NONE && iv->stack_end == MS_END_UNKNOWN;
}
/*
 * The cut of an interval's stack as ms_cuts_id() gives it, or
 * MS_CUT_NO_STACK for one without a switch-out stack.
 */
#define MS_CUT_NO_STACK MS_CUTS_MAX
static inline uint32_t ms_interval_cut(struct ms_cuts *c, const struct ms_cap_interval *iv)
{
	return ms_interval_no_stack(iv) ? MS_CUT_NO_STACK : ms_cuts_id(c, iv->stack_end);
}

/*
 * Thread snapshots (capture.h: ms_cap_wait) in exports: each wait row
 * weighs one snapshot at its stack, on its task's thread (MS_NONE: the
 * task has no thread row), with no cut (a whole read ended where its
 * runtime says its stack ends).
 */
static inline uint32_t ms_export_wait_thread(const struct ms_capture *cap, uint32_t i)
{
	uint32_t t = cap->waits[i].task;

	return t < cap->n_tasks ? cap->tasks[t].thread : MS_NONE;
}

/*
 * Sample rows keyed by (stack, thread, cut), dense ids in order of first
 * insertion: what folded and pprof sum samples by. thread and cut may be
 * MS_NONE.
 */
struct ms_rows {
	struct ms_pairmap pairs;	/* (stack, thread) -> pair */
	struct ms_pairmap rows;		/* (pair, cut) -> row */
};
#define MS_ROWS_INIT { MS_PAIRMAP_INIT, MS_PAIRMAP_INIT }
/* The row of the key, added when new (*added says so); MS_NONE after a message. */
uint32_t ms_rows_get(struct ms_rows *r, uint32_t stack, uint32_t thread, uint32_t cut,
		     bool *added);
void ms_rows_key(const struct ms_rows *r, uint32_t row, uint32_t *stack, uint32_t *thread,
		 uint32_t *cut);
void ms_rows_release(struct ms_rows *r);

/*
 * A buffered writer for exporters' hot loops: blocks of 1 MiB written with
 * one fwrite each, no allocation per call. With out NULL it writes nothing
 * and only counts, so the same code gives a file's exact size. Write
 * errors are left on out (formats.h).
 */
struct ms_outbuf {
	FILE *out;		/* NULL: count only */
	char *buf;
	size_t len, size;
	uint64_t bytes;		/* written (or counted) in all */
};
/* 0, or -1 after a message (out of memory). */
int ms_outbuf_init(struct ms_outbuf *b, FILE *out);
void ms_outbuf_write(struct ms_outbuf *b, const void *p, size_t n);
static inline void ms_outbuf_str(struct ms_outbuf *b, const char *s)
{
	ms_outbuf_write(b, s, strlen(s));
}
static inline void ms_outbuf_char(struct ms_outbuf *b, char c)
{
	if (b->out && b->len < b->size) {
		b->buf[b->len++] = c;
		b->bytes++;
		return;
	}
	ms_outbuf_write(b, &c, 1);
}
/* v in decimal. */
void ms_outbuf_u64(struct ms_outbuf *b, uint64_t v);
/* How many decimal digits v has. */
unsigned ms_u64_digits(uint64_t v);
/* Write what is buffered to out. */
void ms_outbuf_flush(struct ms_outbuf *b);
/* Flush and free. */
void ms_outbuf_release(struct ms_outbuf *b);

/* The header an importer names itself with in the capture's producers. */
void ms_import_header(struct ms_header *h, const char *producer, const char *format);

/* ms_str of a NUL-terminated string. */
struct ms_str ms_str_of(const char *s);

#endif

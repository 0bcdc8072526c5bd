/*
 * What the two forms of the Chrome export share (export.c writes the
 * document, events.c and samples.c the body of each form). Internal to
 * formats/chrome.
 *
 * Each form writes its body through a struct ms_outbuf (internal.h): the
 * text of each function is quoted once, numbers are formatted by hand, and
 * nothing is allocated per sample. With a counting outbuf the same code
 * gives the exact size of the body, which is how ms_chrome_estimate()
 * measures a trace without writing it.
 */
#ifndef MS_FORMATS_CHROME_H
#define MS_FORMATS_CHROME_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/capture.h"
#include "capture/funcs.h"
#include "formats/formats.h"
#include "formats/internal.h"

/* A sample's span when its period is unknown (0): 1 ms, like 1000 Hz. */
#define CHROME_DEFAULT_SPAN_NS 1000000ull

/*
 * Codes of what a frame of either form is: a function's id (0..funcs.n-1),
 * then funcs.n + cut for a cut's synthetic frame, then "[no frames]".
 */
struct chrome {
	const struct ms_capture *cap;
	struct ms_funcs funcs;
	struct ms_cuts cuts;		/* every cut the samples use */
	uint32_t n_codes;
	/* each code's label and category, JSON-quoted, in text */
	char *text;
	uint64_t *name_off, *cat_off;
	uint32_t *name_len, *cat_len;
	unsigned us_digits;		/* the most a time in microseconds needs, "." and
					   three decimals included (whole ones need less) */
};

/* Build the functions, the cuts and the quoted text: 0, or -1 after a message. */
int chrome_init(struct chrome *c, const struct ms_capture *cap);
void chrome_release(struct chrome *c);

static inline uint32_t chrome_code_cut(const struct chrome *c, uint32_t cut)
{
	return c->funcs.n + cut;
}

static inline uint32_t chrome_code_no_frames(const struct chrome *c)
{
	return c->funcs.n + MS_CUTS_MAX;
}

/* A time in microseconds with three decimals (the samples form): no nanosecond rounded away. */
void chrome_us(struct ms_outbuf *b, uint64_t ns);

/*
 * The events form's "X" events, each after a comma when comma (the
 * events follow metadata) and between them; progress is drawn under
 * label. Returns 0, or -1 after a message.
 */
int chrome_events_write(struct chrome *c, struct ms_outbuf *b, bool comma, const char *label);
/* Never less than what chrome_events_write() writes; from the stacks' depths. */
uint64_t chrome_events_bound(const struct chrome *c);

/*
 * The samples form's "stackFrames" and "samples" members, after a comma:
 * the object's other members come before. Returns 0, or -1 after a message.
 */
int chrome_samples_write(struct chrome *c, struct ms_outbuf *b, const char *label);
/* Never less than what chrome_samples_write() writes. */
uint64_t chrome_samples_bound(const struct chrome *c);

/* When sample row s's span ends (saturating: a hostile row may claim any period or count). */
static inline uint64_t chrome_span_end(const struct ms_cap_sample *s)
{
	uint64_t span = s->period, end;

	if (!span && __builtin_mul_overflow(s->count, CHROME_DEFAULT_SPAN_NS, &span))
		return UINT64_MAX;
	return __builtin_add_overflow(s->time, span, &end) ? UINT64_MAX : end;
}

/* a + b, at most UINT64_MAX */
static inline uint64_t chrome_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static inline uint64_t chrome_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif

/*
 * A progress line on stderr for work that takes more than a second:
 *
 *     struct ms_progress p;
 *     ms_progress_start(&p, "writing the chrome trace", n_rows);
 *     for (i = 0; i < n_rows; i++) {
 *             ms_progress_update(&p, i);
 *             ...
 *     }
 *     ms_progress_finish(&p);
 *
 * The line ("ms-export: writing the chrome trace  42%  3 s") is drawn only
 * when stderr is a terminal, and only once a second has passed, so quick
 * work and output to a file or a pipe show nothing; finish clears it. An
 * update is one comparison: the clock is read only every so many rows, a
 * stride that adapts so that it is read a few dozen times a second.
 */
#ifndef MS_UTIL_PROGRESS_H
#define MS_UTIL_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MS_PROGRESS_DELAY_NS 1000000000ull	/* nothing is drawn before this */
#define MS_PROGRESS_REDRAW_NS 200000000ull	/* a line is redrawn at most this often */
#define MS_PROGRESS_CHECK_NS 50000000ull	/* the clock is read about this often */

struct ms_progress {
	FILE *out;		/* NULL: draw nothing */
	uint64_t (*clock)(void);	/* nanoseconds, monotonic */
	const char *label;	/* borrowed */
	uint64_t total;		/* rows in all; 0 when unknown; may be raised as
				   work is found */
	uint64_t next;		/* the row count at which the clock is read next */
	uint64_t stride;	/* rows between reads of the clock */
	uint64_t start_ns, checked_ns, drawn_ns;
	uint64_t clock_reads;	/* for tests: how often the clock was read */
	size_t width;		/* length of the line on screen, 0 when none */
};

/* Start work of total rows, drawn on stderr when it is a terminal. */
void ms_progress_start(struct ms_progress *p, const char *label, uint64_t total);
/*
 * The same, drawn on out (NULL: nowhere) with clock as the time: what
 * ms_progress_start() calls, and what tests call with their own clock.
 */
void ms_progress_start_on(struct ms_progress *p, FILE *out, uint64_t (*clock)(void),
			  const char *label, uint64_t total);
/* The slow half of ms_progress_update(): read the clock, maybe draw. */
void ms_progress_tick(struct ms_progress *p, uint64_t done);
/* done rows of total are done: cheap enough to call per row. */
static inline void ms_progress_update(struct ms_progress *p, uint64_t done)
{
	if (done >= p->next)
		ms_progress_tick(p, done);
}
/* The work ended: clear the line, if one was drawn. */
void ms_progress_finish(struct ms_progress *p);

/*
 * The line for done of total rows after elapsed_ns, without a line end:
 * "PROGRAM: LABEL  42%  3 s", or "PROGRAM: LABEL  1234567  3 s" when total
 * is 0. snprintf()'s contract: returns the length it needs.
 */
int ms_progress_format(char *buf, size_t size, const char *label, uint64_t done,
		       uint64_t total, uint64_t elapsed_ns);
/*
 * The next stride: rows_per_read rows were done in elapsed_ns since the
 * clock was last read; aim at a read every MS_PROGRESS_CHECK_NS, changing
 * by at most a factor of 4 at a time, between 1 and 2^24 rows.
 */
uint64_t ms_progress_next_stride(uint64_t stride, uint64_t elapsed_ns);

#endif

/*
 * The progress line (progress.h): drawn with a carriage return over
 * itself, padded with spaces over a longer line drawn before.
 */
#include "config.h"

#include "util/progress.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"

#define STRIDE_FIRST 64
#define STRIDE_MAX (1ull << 24)

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ms_progress_start_on(struct ms_progress *p, FILE *out, uint64_t (*clock)(void),
			  const char *label, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->clock = clock ? clock : monotonic_ns;
	p->label = label;
	p->total = total;
	p->stride = STRIDE_FIRST;
	if (!out) {
		/* never tick: an update stays one comparison */
		p->next = UINT64_MAX;
		return;
	}
	p->start_ns = p->checked_ns = p->clock();
	p->clock_reads = 1;
	p->next = p->stride;
}

void ms_progress_start(struct ms_progress *p, const char *label, uint64_t total)
{
	ms_progress_start_on(p, isatty(STDERR_FILENO) ? stderr : NULL, NULL, label, total);
}

uint64_t ms_progress_next_stride(uint64_t stride, uint64_t elapsed_ns)
{
	uint64_t want;

	if (!stride)
		stride = 1;
	if (!elapsed_ns)
		want = stride * 4;
	else if (elapsed_ns >= MS_PROGRESS_CHECK_NS * 4)
		want = stride / 4;
	else
		want = (uint64_t)((double)stride * MS_PROGRESS_CHECK_NS / (double)elapsed_ns);
	/* at most a factor of 4 a step: one slow row must not stall the line */
	if (want > stride * 4)
		want = stride * 4;
	if (want < stride / 4)
		want = stride / 4;
	if (want < 1)
		want = 1;
	return want > STRIDE_MAX ? STRIDE_MAX : want;
}

int ms_progress_format(char *buf, size_t size, const char *label, uint64_t done,
		       uint64_t total, uint64_t elapsed_ns)
{
	unsigned secs = (unsigned)(elapsed_ns / 1000000000ull);

	if (total) {
		unsigned pct = done >= total ? 100 : (unsigned)((double)done * 100 / (double)total);

		return snprintf(buf, size, "%s: %s  %u%%  %u s", ms_progname(), label, pct, secs);
	}
	return snprintf(buf, size, "%s: %s  %" PRIu64 "  %u s", ms_progname(), label, done, secs);
}

static void draw(struct ms_progress *p, uint64_t done, uint64_t now)
{
	char line[256];
	int n = ms_progress_format(line, sizeof(line), p->label, done, p->total,
				   now - p->start_ns);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;

	/* spaces over what a longer line left */
	fprintf(p->out, "\r%s%*s", line, p->width > len ? (int)(p->width - len) : 0, "");
	fflush(p->out);
	if (len > p->width)
		p->width = len;
	p->drawn_ns = now;
}

void ms_progress_tick(struct ms_progress *p, uint64_t done)
{
	uint64_t now;

	if (!p->out) {
		p->next = UINT64_MAX;
		return;
	}
	now = p->clock();
	p->clock_reads++;
	p->stride = ms_progress_next_stride(p->stride, now - p->checked_ns);
	p->checked_ns = now;
	p->next = done + p->stride;
	if (now - p->start_ns >= MS_PROGRESS_DELAY_NS &&
	    (!p->width || now - p->drawn_ns >= MS_PROGRESS_REDRAW_NS))
		draw(p, done, now);
}

void ms_progress_finish(struct ms_progress *p)
{
	if (p->out && p->width) {
		fprintf(p->out, "\r%*s\r", (int)p->width, "");
		fflush(p->out);
	}
	p->width = 0;
	p->next = UINT64_MAX;
}

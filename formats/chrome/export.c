/*
 * Chrome's Trace Event Format (the JSON object form) that chrome://tracing
 * and Perfetto open. Times are microseconds of the capture's clock: whole
 * ones in the events form (events.c says why), with three decimals in the
 * samples form so that no nanosecond is rounded away.
 *
 *   {"traceEvents": [metadata..., events...], "displayTimeUnit": "ns",
 *    "otherData": {...}, ["stackFrames": {...}, "samples": [...]]}
 *
 * Metadata ("ph": "M") names each process and thread. Then the events
 * form (events.c: "X" events on each thread's time line, the default) or
 * the samples form (samples.c: "stackFrames" and "samples").
 *
 * A stack cut short starts with its synthetic frame ("[truncated:
 * stack-copy]", internal.h) in both forms: an event of its own, or the
 * root of its stack frames; a sample without frames whose end was cut is
 * that frame alone.
 *
 * Memory: one open path per thread, each function's text, and the stack
 * frames; samples are written as they are read.
 */
#include "config.h"

#include "formats/chrome/chrome.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/json.h"

#define CUT_CATEGORY "[truncated]"
#define NO_FRAMES_LABEL "[no frames]"
#define NO_FRAMES_CATEGORY "[unknown]"

/* ---- what both forms share ---- */

static const char *code_label(const struct chrome *c, uint32_t code)
{
	if (code < c->funcs.n)
		return c->funcs.funcs[code].qualified;
	if (code == chrome_code_no_frames(c))
		return NO_FRAMES_LABEL;
	return code - c->funcs.n < c->cuts.n ? c->cuts.labels[code - c->funcs.n] : "";
}

static const char *code_category(const struct chrome *c, uint32_t code)
{
	if (code < c->funcs.n)
		return c->funcs.funcs[code].module_label;
	return code == chrome_code_no_frames(c) ? NO_FRAMES_CATEGORY : CUT_CATEGORY;
}

/* Each code's label and category quoted, into c->text. */
static int quote_codes(struct chrome *c)
{
	size_t size = 0;
	FILE *f = open_memstream(&c->text, &size);
	off_t at;

	c->name_off = calloc(c->n_codes, sizeof(*c->name_off));
	c->cat_off = calloc(c->n_codes, sizeof(*c->cat_off));
	c->name_len = calloc(c->n_codes, sizeof(*c->name_len));
	c->cat_len = calloc(c->n_codes, sizeof(*c->cat_len));
	if (!f || !c->name_off || !c->cat_off || !c->name_len || !c->cat_len) {
		if (f)
			fclose(f);
		return ms_error("out of memory");
	}
	for (uint32_t i = 0; i < c->n_codes; i++) {
		at = ftello(f);
		ms_json_quote(f, code_label(c, i));
		c->name_off[i] = (uint64_t)at;
		c->name_len[i] = (uint32_t)(ftello(f) - at);
		at = ftello(f);
		ms_json_quote(f, code_category(c, i));
		c->cat_off[i] = (uint64_t)at;
		c->cat_len[i] = (uint32_t)(ftello(f) - at);
	}
	if (fclose(f) || !c->text)
		return ms_error("out of memory");
	return 0;
}

int chrome_init(struct chrome *c, const struct ms_capture *cap)
{
	uint64_t latest = 0;

	memset(c, 0, sizeof(*c));
	c->cap = cap;
	c->cuts = (struct ms_cuts)MS_CUTS_INIT;
	if (ms_funcs_build(&c->funcs, cap) < 0)
		return -1;
	/* codes past the functions' (chrome_code_no_frames()) stay below MS_NONE */
	if (c->funcs.n >= MS_NONE - MS_CUTS_MAX - 1)
		return ms_error("cannot write a Chrome trace of %" PRIu32 " functions: more than "
				"it numbers; export pprof instead", c->funcs.n);
	c->n_codes = c->funcs.n + MS_CUTS_MAX + 1;
	/* every cut, so each code's text is known; the latest time, for the widest number */
	for (uint32_t i = 0; i < cap->n_samples; i++) {
		uint64_t end = chrome_span_end(&cap->samples[i]);

		ms_cuts_id(&c->cuts, cap->samples[i].end);
		if (end > latest)
			latest = end;
	}
	c->us_digits = ms_u64_digits(latest / 1000) + 4;
	return quote_codes(c);
}

void chrome_release(struct chrome *c)
{
	ms_funcs_release(&c->funcs);
	free(c->text);
	free(c->name_off);
	free(c->cat_off);
	free(c->name_len);
	free(c->cat_len);
}

void chrome_us(struct ms_outbuf *b, uint64_t ns)
{
	unsigned frac = (unsigned)(ns % 1000);
	char f[4] = { '.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
		      (char)('0' + frac % 10) };

	ms_outbuf_u64(b, ns / 1000);
	ms_outbuf_write(b, f, 4);
}

/* ---- metadata ---- */

static void meta(struct ms_json *j, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	ms_json_object_begin(j);
	ms_json_key(j, "name");
	ms_json_string(j, what);
	ms_json_key(j, "ph");
	ms_json_string(j, "M");
	ms_json_key(j, "pid");
	ms_json_uint(j, pid);
	ms_json_key(j, "tid");
	ms_json_uint(j, tid);
	ms_json_key(j, "args");
	ms_json_object_begin(j);
	ms_json_key(j, "name");
	ms_json_string(j, name);
	ms_json_object_end(j);
	ms_json_object_end(j);
}

static void write_metadata(struct ms_json *j, const struct ms_capture *cap)
{
	const char *command = ms_capture_info_text(cap, "command");
	char buf[64];

	for (uint32_t i = 0; i < cap->n_threads; i++) {
		const struct ms_cap_thread *t = &cap->threads[i];
		const char *name = t->name ? cap->strings[t->name] : NULL;

		/* threads are sorted by (pid, tid): the first of each pid names it */
		if (i == 0 || cap->threads[i - 1].pid != t->pid) {
			const char *pname = NULL;

			for (uint32_t k = i; k < cap->n_threads && cap->threads[k].pid == t->pid; k++)
				if (cap->threads[k].tid == t->pid && cap->threads[k].name)
					pname = cap->strings[cap->threads[k].name];
			if (!pname)
				pname = command && *command ? command : name;
			if (!pname) {
				snprintf(buf, sizeof(buf), "process %" PRIu32, t->pid);
				pname = buf;
			}
			meta(j, "process_name", t->pid, t->pid, pname);
		}
		if (!name) {
			snprintf(buf, sizeof(buf), "thread %" PRIu32, t->tid);
			name = buf;
		}
		meta(j, "thread_name", t->pid, t->tid, name);
	}
}

/* ---- the document ---- */

enum body {
	BODY_WRITE,	/* write it to out */
	BODY_COUNT,	/* count its bytes, writing nothing */
	BODY_BOUND,	/* bound its bytes from the stacks, without a pass */
};

/*
 * The trace, to out; the body (events, or stack frames and samples) as
 * mode says, its bytes in *body_bytes. Returns 0, or -1 after a message.
 */
static int document(FILE *out, struct chrome *c, const struct ms_export_options *o,
		    enum body mode, uint64_t *body_bytes)
{
	const struct ms_capture *cap = c->cap;
	const char *command = ms_capture_info_text(cap, "command");
	bool samples = o && o->chrome_form == MS_CHROME_SAMPLES;
	struct ms_outbuf b;
	struct ms_json j;
	int ret = -1;

	if (ms_outbuf_init(&b, mode == BODY_WRITE ? out : NULL) < 0)
		return -1;
	ms_json_init(&j, out);
	ms_json_object_begin(&j);
	ms_json_key(&j, "traceEvents");
	ms_json_array_begin(&j);
	write_metadata(&j, cap);
	if (!samples) {
		if (mode == BODY_BOUND) {
			b.bytes = chrome_events_bound(c);
		} else {
			/* the buffer goes to out after what ms_json wrote there */
			if (chrome_events_write(c, &b, j.need_comma, mode == BODY_COUNT ?
						"measuring the Chrome trace" :
						"writing the Chrome trace") < 0)
				goto out;
			ms_outbuf_flush(&b);
		}
		j.need_comma = true;
	}
	ms_json_array_end(&j);
	ms_json_key(&j, "displayTimeUnit");
	ms_json_string(&j, "ns");
	ms_json_key(&j, "otherData");
	ms_json_object_begin(&j);
	if (o && o->producer) {
		ms_json_key(&j, "exporter");
		ms_json_string(&j, o->producer);
	}
	if (command) {
		ms_json_key(&j, "command");
		ms_json_string(&j, command);
	}
	ms_json_object_end(&j);
	if (samples) {
		if (mode == BODY_BOUND) {
			b.bytes = chrome_samples_bound(c);
		} else {
			if (chrome_samples_write(c, &b, mode == BODY_COUNT ?
						 "measuring the Chrome trace" :
						 "writing the Chrome trace") < 0)
				goto out;
			ms_outbuf_flush(&b);
		}
	}
	ms_json_object_end(&j);
	fputc('\n', out);
	ret = 0;
out:
	*body_bytes = b.bytes;
	ms_outbuf_release(&b);
	return ret;
}

int ms_chrome_export(FILE *out, const struct ms_capture *cap, const struct ms_export_options *o)
{
	struct chrome c;
	uint64_t body;
	int ret = -1;

	if (chrome_init(&c, cap) == 0)
		ret = document(out, &c, o, BODY_WRITE, &body);
	chrome_release(&c);
	return ret;
}

/* ---- its size, unwritten ---- */

static ssize_t count_write(void *cookie, const char *buf, size_t size)
{
	(void)buf;
	*(uint64_t *)cookie += size;
	return (ssize_t)size;
}

/* The bytes of the trace, with the body as mode says; UINT64_MAX when it cannot tell. */
static uint64_t measure(struct chrome *c, const struct ms_export_options *o, enum body mode)
{
	static const cookie_io_functions_t counter = { NULL, count_write, NULL, NULL };
	uint64_t head = 0, body = 0;
	FILE *f = fopencookie(&head, "w", counter);
	int rc;

	if (!f)
		return UINT64_MAX;
	rc = document(f, c, o, mode, &body);
	if (fclose(f) || rc < 0)
		return UINT64_MAX;
	return chrome_add(head, body);
}

uint64_t ms_chrome_estimate(const struct ms_capture *cap, const struct ms_export_options *o,
			    uint64_t limit)
{
	struct chrome c;
	uint64_t bytes = UINT64_MAX;

	if (chrome_init(&c, cap) == 0) {
		bytes = measure(&c, o, BODY_BOUND);
		/* a bound past the limit may be far above the truth: count it */
		if (bytes > limit)
			bytes = measure(&c, o, BODY_COUNT);
	}
	chrome_release(&c);
	return bytes;
}

/*
 * Folded import: "outer;...;inner COUNT" lines into a capture.
 *
 * A folded file says only names and counts, so each distinct name becomes
 * one frame in no module, flagged MS_FRAME_NO_ADDRESS, keyed by the order
 * its name first appears; each line becomes one sample row of count
 * COUNT (capture.h), of one thread (pid 0, tid 0) at time 0 with period 0;
 * a line of count 0 makes none. The line "[no frames] COUNT" (what
 * ms-export writes for samples without frames) gives samples without
 * frames.
 *
 * A row per line, never a row per sample: what the import holds is
 * bounded by the file's size, whatever the counts say. So a count may be
 * anything up to UINT64_MAX, as folded files weighted by period
 * (`perf script | stackcollapse-perf.pl` with periods, 111500000 a line)
 * have; only the counts of the whole file must add up to at most that,
 * so that every view's sum fits in 64 bits.
 *
 * Every line is checked before it counts: a count that is missing, signed,
 * not a whole number or too large, an empty frame name, a NUL byte, a line
 * too long or too deep is an error naming the line (and column).
 */
#include "config.h"

#include "formats/formats.h"
#include "formats/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "capture/builder.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/progress.h"

struct name {
	size_t off;
	uint32_t len;
};

struct fi {
	const char *text;
	const char *src;	/* the input's name */
	struct ms_index ix;
	struct name *names;
	uint32_t n_names, alloc_names;
	struct ms_frame fact;
};

struct key {
	const char *p;
	uint32_t len;
};

static bool name_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct fi *fi = ctx;
	const struct key *k = key;

	return fi->names[e].len == k->len && !memcmp(fi->text + fi->names[e].off, k->p, k->len);
}

/* The frame of name p[0..len), described to the builder when new. */
static int frame_of(struct fi *fi, struct ms_capture_builder *b, const char *p, uint32_t len,
		    struct ms_stack_frame *out)
{
	struct key k = { p, len };
	uint32_t h = ms_hash_bytes(p, len);
	uint32_t e = ms_index_find(&fi->ix, h, name_eq, fi, &k);

	if (e == MS_INDEX_EMPTY) {
		if (MS_GROW(fi->names, fi->n_names, fi->alloc_names) < 0)
			return -1;
		e = fi->n_names++;
		fi->names[e].off = (size_t)(p - fi->text);
		fi->names[e].len = len;
		if (ms_index_add(&fi->ix, h, e) < 0)
			return ms_error("out of memory");
		fi->fact.module = MS_NONE;
		fi->fact.address = MS_IMPORT_KEY_BASE + e;
		fi->fact.name = (struct ms_str){ p, len };
		fi->fact.reason = MS_SYM_OK;
		if (ms_capture_builder_frame(b, &fi->fact) < 0)
			return -1;
	}
	out->module = MS_NONE;
	out->flags = MS_FRAME_NO_ADDRESS;
	out->address = MS_IMPORT_KEY_BASE + e;
	return 0;
}

static int line_error(const struct fi *fi, uint64_t lineno, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int line_error(const struct fi *fi, uint64_t lineno, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ms_error("'%s' line %" PRIu64 ": %s", fi->src, lineno, msg);
}

/* Parse one line p[0..len) (no newline) into st and *count; 1 for a blank line. */
static int parse_line(struct fi *fi, struct ms_capture_builder *b, const char *p, size_t len,
		      uint64_t lineno, struct ms_stack *st, uint64_t *count)
{
	const char *sp, *q, *end;
	uint64_t c = 0;
	size_t i;

	for (i = 0; i < len && (p[i] == ' ' || p[i] == '\t'); i++)
		;
	if (i == len)
		return 1;
	if (len > MS_IMPORT_LINE_MAX)
		return line_error(fi, lineno, "the line is longer than %u bytes", MS_IMPORT_LINE_MAX);
	if (memchr(p, '\0', len))
		return line_error(fi, lineno, "the line holds a NUL byte (is this a folded file?)");
	sp = memrchr(p, ' ', len);
	if (!sp || sp + 1 == p + len)
		return line_error(fi, lineno,
				  "no count after the stack (a folded line is 'outer;inner COUNT')");
	q = sp + 1;
	end = p + len;
	if (*q == '-')
		return line_error(fi, lineno, "the count '%.*s' is negative", (int)(end - q), q);
	for (; q < end; q++) {
		if (*q < '0' || *q > '9')
			return line_error(fi, lineno, "the count '%.*s' is not a whole number",
					  (int)(end - sp - 1 > 32 ? 32 : end - sp - 1), sp + 1);
		if (c > (UINT64_MAX - (uint64_t)(*q - '0')) / 10)
			return line_error(fi, lineno,
					  "the count '%.*s' is over %" PRIu64 ", the most a count can be",
					  (int)(end - sp - 1 > 32 ? 32 : end - sp - 1), sp + 1,
					  UINT64_MAX);
		c = c * 10 + (uint64_t)(*q - '0');
	}
	if (sp == p)
		return line_error(fi, lineno, "no frames before the count");
	*count = c;
	st->n_frames = 0;
	if ((size_t)(sp - p) == strlen("[no frames]") && !memcmp(p, "[no frames]", (size_t)(sp - p)))
		return 0;
	/* frames outermost first; the stack wants them innermost first */
	for (q = p; q <= sp;) {
		const char *semi = memchr(q, ';', (size_t)(sp - q));
		const char *stop = semi ? semi : sp;

		if (stop == q)
			return line_error(fi, lineno, "column %zu: an empty frame name",
					  (size_t)(q - p) + 1);
		if (st->n_frames == MS_FRAMES_MAX)
			return line_error(fi, lineno, "more than %u frames", MS_FRAMES_MAX);
		if (frame_of(fi, b, q, (uint32_t)(stop - q), &st->frames[st->n_frames++]) < 0)
			return -1;
		q = stop + 1;
	}
	for (i = 0; i < st->n_frames / 2; i++) {
		struct ms_stack_frame t = st->frames[i];

		st->frames[i] = st->frames[st->n_frames - 1 - i];
		st->frames[st->n_frames - 1 - i] = t;
	}
	return 0;
}

struct ms_capture *ms_folded_import(const void *buf, size_t len, const char *name,
				    const char *producer)
{
	struct fi fi;
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_stack *st = calloc(1, sizeof(*st));
	const char *text = buf, *p = text, *end = text + len;
	struct ms_header h;
	struct ms_info info = { ms_str_of("import"), true, ms_str_of("folded"), 0 };
	uint64_t lineno = 0, total = 0;
	struct ms_capture *cap = NULL;
	struct ms_progress progress = { 0 };

	memset(&fi, 0, sizeof(fi));
	fi.text = text;
	fi.src = name;
	if (!b || !st) {
		ms_error("out of memory");
		goto out;
	}
	ms_import_header(&h, producer, "folded");
	if (ms_capture_builder_producers(b, &h) < 0 || ms_capture_builder_info(b, &info) < 0)
		goto out;
	/* where it came from, for the report */
	info.key = ms_str_of("import-file");
	info.text = ms_str_of(name ? name : "");
	if (name && *name && ms_capture_builder_info(b, &info) < 0)
		goto out;
	/* a UTF-8 byte order mark is not part of the first frame's name */
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	ms_progress_start(&progress, "importing the folded profile", len);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		uint64_t count = 0;
		int rc;

		ms_progress_update(&progress, (uint64_t)(p - text));
		lineno++;
		if (n && p[n - 1] == '\r')
			n--;
		rc = parse_line(&fi, b, p, n, lineno, st, &count);
		if (rc < 0)
			goto out;
		if (rc == 0 && count) {
			if (count > UINT64_MAX - total) {
				line_error(&fi, lineno, "the counts add up past %" PRIu64 ", the most "
					   "samples a capture counts: scale the counts down", UINT64_MAX);
				goto out;
			}
			total += count;
			st->reason = MS_END_UNKNOWN;
			if (ms_capture_builder_stack_import(b, st, count) < 0)
				goto out;
		}
		p = nl ? nl + 1 : end;
	}
	ms_progress_finish(&progress);
	cap = ms_capture_builder_seal(b);
	b = NULL;
out:
	ms_progress_finish(&progress);
	ms_capture_builder_free(b);
	ms_index_release(&fi.ix);
	free(fi.names);
	free(st);
	return cap;
}

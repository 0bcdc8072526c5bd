/* Stack copies cut to dyn_size: see trim.h. */
#include "perf/trim.h"

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct ms_trimmer *ms_trimmer_new(void)
{
	struct ms_trimmer *t = calloc(1, sizeof(struct ms_trimmer));

	if (t)
		ms_decoder_init(&t->dec);
	return t;
}

void ms_trimmer_attr(struct ms_trimmer *t, const struct ms_attr *a)
{
	if (t->dec.n_attrs >= MS_DECODE_ATTRS_MAX || ms_decoder_add_attr(&t->dec, a) < 0)
		t->off = true;
}

void ms_trimmer_tracepoint(struct ms_trimmer *t, const struct ms_tracepoint *tp)
{
	if (t->dec.n_tracepoints >= MS_DECODE_TRACEPOINTS_MAX ||
	    ms_decoder_add_tracepoint(&t->dec, tp) < 0)
		t->off = true;
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);	/* the kernel's byte order: this host's */
}

const uint8_t *ms_trim(struct ms_trimmer *t, uint32_t cpu, const uint8_t *rec, uint32_t *len)
{
	const struct ms_sample *s = &t->d.u.sample;
	uint64_t size, keep;
	uint32_t at, tail, out;
	uint16_t size16;
	uint32_t type;
	int r;

	t->decoded = MS_DECODE_SKIP;
	if (t->off || !t->dec.n_attrs || *len < sizeof(struct perf_event_header) ||
	    *len > sizeof(t->buf))
		return rec;
	type = ((const struct perf_event_header *)rec)->type;
	if (type != PERF_RECORD_SAMPLE) {
		/* Rare records, decoded only for a watch. */
		if (t->decode_all && (type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
				      type == PERF_RECORD_COMM || type == PERF_RECORD_FORK ||
				      type == PERF_RECORD_EXIT)) {
			r = ms_decode(&t->dec, cpu, rec, *len, &t->d);
			t->decoded = r > 0 ? r : MS_DECODE_SKIP;
		}
		return rec;
	}
	/* A switch-out's sample is the same memory as a sample's (decode.h). */
	r = ms_decode(&t->dec, cpu, rec, *len, &t->d);
	t->decoded = r > 0 ? r : MS_DECODE_SKIP;
	if ((r != MS_DECODE_SAMPLE && r != MS_DECODE_SWITCH_OUT) || !s->stack)
		return rec;
	/* The copy's size field is just before its bytes, dyn_size just after them. */
	at = (uint32_t)(s->stack - rec);
	memcpy(&size, rec + at - 8, 8);
	keep = ((uint64_t)s->stack_len + 7) & ~(uint64_t)7;
	if (keep >= size)
		return rec;
	/* What follows the copy (dyn_size, then any later field) stays. */
	tail = *len - at - (uint32_t)size;
	if (!keep)
		tail -= 8;	/* nothing readable: a copy of size 0 has no dyn_size */
	out = at + (uint32_t)keep + tail;
	memcpy(t->buf, rec, at + keep);
	if (keep)
		memset(t->buf + at + s->stack_len, 0, keep - s->stack_len);
	memcpy(t->buf + at + keep, rec + *len - tail, tail);
	put_u64(t->buf + at - 8, keep);
	size16 = (uint16_t)out;
	memcpy(t->buf + offsetof(struct perf_event_header, size), &size16, 2);
	*len = out;
	return t->buf;
}

void ms_trimmer_free(struct ms_trimmer *t)
{
	free(t);
}

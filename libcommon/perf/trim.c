/* Stack copies cut to dyn_size: see trim.h. */
#include "perf/trim.h"

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct ms_trimmer *ms_trimmer_new(void)
{
	return calloc(1, sizeof(struct ms_trimmer));
}

/* Where a sample of this layout has its id: after the fixed fields before ID; 0: none. */
static uint32_t id_offset(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return sizeof(struct perf_event_header);
	if (!(st & PERF_SAMPLE_ID))
		return 0;
	return (uint32_t)(sizeof(struct perf_event_header) +
			  8 * __builtin_popcountll(st & (PERF_SAMPLE_IP | PERF_SAMPLE_TID |
							 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)));
}

void ms_trimmer_attr(struct ms_trimmer *t, const struct ms_attr *a)
{
	uint32_t i;

	for (i = 0; i < t->n_dec; i++) {
		const struct ms_attr *b = &t->dec[i].attrs[0];

		if (a->sample_type == b->sample_type && a->read_format == b->read_format &&
		    a->sample_regs_user == b->sample_regs_user &&
		    (a->flags & MS_ATTR_SAMPLE_ID_ALL) == (b->flags & MS_ATTR_SAMPLE_ID_ALL))
			break;
	}
	if (i == t->n_dec) {
		if (i == MS_TRIM_LAYOUTS) {
			t->off = true;
			return;
		}
		ms_decoder_init(&t->dec[i]);
		t->id_at[i] = id_offset(a->sample_type);
		t->n_dec++;
	}
	if (t->dec[i].n_attrs >= MS_DECODE_ATTRS_MAX || ms_decoder_add_attr(&t->dec[i], a) < 0)
		t->off = true;
}

/* Whether a lists id: the decoder keeps an attr's ids sorted. */
static bool has_id(const struct ms_attr *a, uint64_t id)
{
	uint32_t lo = 0, hi = a->n_ids;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a->ids[mid] == id)
			return true;
		if (a->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The decoder of the sample rec of len bytes: by its id when layouts differ; NULL: none. */
static const struct ms_decoder *decoder_of(const struct ms_trimmer *t, const uint8_t *rec,
					   uint32_t len)
{
	if (t->n_dec == 1)
		return &t->dec[0];
	for (uint32_t i = 0; i < t->n_dec; i++) {
		const struct ms_decoder *d = &t->dec[i];
		uint64_t id;

		if (!t->id_at[i] || t->id_at[i] + 8 > len)
			continue;
		memcpy(&id, rec + t->id_at[i], 8);
		for (uint32_t k = 0; k < d->n_attrs; k++)
			if (has_id(&d->attrs[k], id))
				return d;
	}
	return NULL;
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
	const struct ms_decoder *dec;

	if (t->off || !t->n_dec || *len < sizeof(struct perf_event_header) ||
	    *len > sizeof(t->buf) ||
	    ((const struct perf_event_header *)rec)->type != PERF_RECORD_SAMPLE ||
	    !(dec = decoder_of(t, rec, *len)) ||
	    ms_decode(dec, cpu, rec, *len, &t->d) != MS_DECODE_SAMPLE || !s->stack)
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

/*
 * The hand-written fast paths of the per-sample records: SAMPLE (what
 * ms-unwind reads), STACK and STACK_DEF (their frames), STACK_REF (what
 * ms-symbolize and ms-capture read). Each decodes the form the stages
 * write in one pass and gives way to the generic codec (stream/schema.c)
 * for anything else, which then gives the verdict and the message; unit
 * tests and tests/fuzz/fuzz-stream.c hold the two to the same values.
 */
#include "stream/records.h"
#include "stream/fastpack.h"
#include "stream/schema.h"
#include "util/bits.h"
#include "util/error.h"

#include <inttypes.h>
#include <string.h>

/* ---- sample ---- */

int ms_sample_pack(struct ms_writer *w, const struct ms_sample *s)
{
	char *p0;

	if (s->n_kchain <= MS_CHAIN_MAX && s->n_uchain <= MS_CHAIN_MAX &&
	    s->n_regs <= MS_REGS_MAX && s->stack_len <= MS_STACK_MAX) {
		/* Packed in place, by the encoder ms-decode uses too. */
		ms_writer_begin(w, MS_REC_SAMPLE);
		if ((p0 = ms_writer_reserve(w, fp_sample_bound(s)))) {
			ms_writer_advance(w, (size_t)(fp_sample(p0, s) - p0));
			return ms_writer_end(w);
		}
		/* (the bound is over the limit: measured exactly, below) */
		ms_writer_cancel(w);
	}
	return ms_schema_pack(&ms_sample_schema, MS_REC_SAMPLE, w, s);
}

/* An unsigned encoding within [*pp, end): false (nothing consumed) otherwise. */
static inline __attribute__((always_inline)) bool bounded_uint(const unsigned char **pp, const unsigned char *end, uint64_t *v)
{
	const unsigned char *p = *pp;
	int w;

	if (p >= end)
		return false;
	if (p[0] <= 0x7f) {
		*v = p[0];
		*pp = p + 1;
		return true;
	}
	if (p[0] < 0xcc || p[0] > 0xcf)
		return false;
	w = 1 << (p[0] - 0xcc);
	if (end - p < 1 + w)
		return false;
	*v = fp_get_be(p + 1, w);
	*pp = p + 1 + w;
	return true;
}

/*
 * A sample as ms-decode writes it, decoded in one pass without calls from
 * the avail bytes at bytes: 14 or 15 fields, unsigned integers, chains of
 * up to 15, the registers as one bin and the stack as [offset, length] or
 * a bin. Returns the length of the first 14 fields with s holding exactly
 * what the checked path below would decode; 0 for anything else (an
 * unusual encoding, a wrong value, too few bytes), which then takes that
 * path and gets its verdict and message. (A sample is most of what
 * ms-unwind reads: the checked path took a thousand instructions.)
 */
static inline __attribute__((always_inline)) size_t
sample_fast(const char *bytes, size_t avail, struct ms_sample *s)
{
	const unsigned char *p = (const unsigned char *)bytes, *end = p + avail;
	uint64_t v[7], len, off;
	uint32_t n;

	/* The header, the kind and seven integers of at most 9 bytes each. */
	if (avail < 2 + 7 * 9 + 9 || (p[0] != 0x9e && p[0] != 0x9f) || p[1] != MS_REC_SAMPLE)
		return 0;
	p += 2;
#pragma GCC unroll 7
	for (int i = 0; i < 7; i++)
		if (!ms_uint_fast(&p, &v[i]))
			return 0;
	if ((v[0] | v[1] | v[3] | v[6]) > UINT32_MAX)
		return 0;
	s->pid = (uint32_t)v[0];
	s->tid = (uint32_t)v[1];
	s->time = v[2];
	s->cpu = (uint32_t)v[3];
	s->period = v[4];
	s->ip = v[5];
	s->cpumode = (uint32_t)v[6];
	/* The chains: fixarrays (15 is under MS_CHAIN_MAX). */
	if (p >= end || (*p & 0xf0) != 0x90)
		return 0;
	n = *p++ & 0x0f;
	for (uint32_t i = 0; i < n; i++)
		if (end - p < 9 || !ms_uint_fast(&p, &s->kchain[i]))
			return 0;
	s->n_kchain = n;
	if (p >= end || (*p & 0xf0) != 0x90)
		return 0;
	n = *p++ & 0x0f;
	for (uint32_t i = 0; i < n; i++)
		if (end - p < 9 || !ms_uint_fast(&p, &s->uchain[i]))
			return 0;
	s->n_uchain = n;
	/* regs_abi, regs_mask, then the registers as a bin 8. */
	if (end - p < 9 || !ms_uint_fast(&p, &v[0]) || v[0] > UINT32_MAX ||
	    end - p < 9 || !ms_uint_fast(&p, &v[1]) || end - p < 2 || p[0] != 0xc4)
		return 0;
	s->regs_abi = (uint32_t)v[0];
	s->regs_mask = v[1];
	len = p[1];
	if (len % 8 || len > 8 * MS_REGS_MAX || (uint64_t)(end - p - 2) < len)
		return 0;
	s->n_regs = (uint32_t)(len / 8);
	if ((s->regs_abi || s->n_regs) &&
	    s->n_regs != (uint32_t)ms_popcount64(s->regs_mask))
		return 0;
	p += 2;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	{
		/* Four registers a turn: for a length gcc does not know it emits rep movsb. */
		uint32_t i = 0;

		for (; i + 4 <= s->n_regs; i += 4)
			memcpy(&s->regs[i], p + 8 * i, 32);
		for (; i < s->n_regs; i++)
			memcpy(&s->regs[i], p + 8 * i, 8);
		p += len;
	}
#else
	for (uint32_t i = 0; i < s->n_regs; i++, p += 8)
		s->regs[i] = ms_get_le64(p);
#endif
	if (p >= end)
		return 0;
	if (*p == 0x92) {
		/* [offset, length] in the stack file */
		p++;
		if (!bounded_uint(&p, end, &off) || !bounded_uint(&p, end, &len) ||
		    len > MS_STACK_MAX)
			return 0;
		s->stack_len = (uint32_t)len;
		s->stack = NULL;
		s->stack_offset = off;
		s->stack_in_file = true;
		return (size_t)(p - (const unsigned char *)bytes);
	}
	if (*p < 0xc4 || *p > 0xc6)
		return 0;
	{
		int w = 1 << (*p - 0xc4);

		if (end - p < 1 + w)
			return 0;
		len = fp_get_be(p + 1, w);
		p += 1 + w;
		if (len > MS_STACK_MAX || (uint64_t)(end - p) < len)
			return 0;
	}
	s->stack = p;
	s->stack_len = (uint32_t)len;
	s->stack_offset = 0;
	s->stack_in_file = false;
	return (size_t)(p + len - (const unsigned char *)bytes);
}

size_t ms_sample_frame(const char *bytes, size_t avail, struct ms_sample *s)
{
	/* 14 fields: the record ends with the last one sample_fast() reads. */
	if (avail < 1 || (unsigned char)bytes[0] != 0x9e)
		return 0;
	return sample_fast(bytes, avail, s);
}

int ms_sample_unpack(const struct ms_record *rec, struct ms_sample *s)
{
	if (rec->kind == MS_REC_SAMPLE && sample_fast(rec->bytes, rec->len, s))
		return 0;
	return ms_schema_unpack(&ms_sample_schema, 0, rec, s);
}

/* ---- the frames of STACK and STACK_DEF: a flat array of (module, address, flags) ---- */

/* One frame the fast loop could not take: element by element, as ms_cur_uint() sees them. */
static int __attribute__((noinline)) frame_slow(struct ms_cursor *c, const struct ms_record *rec,
						struct ms_stack_frame *f, uint32_t i)
{
	uint64_t m = 0, a = 0, fl = 0;
	int r0, r1 = 0, r2 = 0;

	if ((r0 = ms_cur_uint_quick(c, &m)) > 0 && m <= UINT32_MAX &&
	    (r1 = ms_cur_uint_quick(c, &a)) > 0 &&
	    (r2 = ms_cur_uint_quick(c, &fl)) > 0 && fl <= UINT32_MAX) {
		f->module = m;
		f->address = a;
		f->flags = fl;
		return 0;
	}
	if (r0 < 0 || r1 < 0 || r2 < 0)
		return ms_field_short(rec);
	return ms_field_bad(rec, "frames",
			    "frame %u is not three unsigned integers (module, address, flags)", i);
}

static int frames_unpack(struct ms_cursor *c, const struct ms_field *f,
			 const struct ms_record *rec, void *obj)
{
	struct ms_stack *s = obj;
	const unsigned char *p, *fast_end;
	uint32_t n;

	if (ms_field_array(c, rec, f->name, &n, 3 * MS_FRAMES_MAX) < 0)
		return -1;
	if (n % 3)
		return ms_field_bad(rec, f->name, "has %u elements, not a multiple of 3 "
				    "(module, address, flags)", n);
	s->n_frames = n / 3;
	p = c->p;
	/* Most frames: three plain unsigned integers, 27 bytes at most. */
	fast_end = c->end - p >= 27 ? c->end - 27 : p - 1;
	for (uint32_t i = 0; i < s->n_frames; i++) {
		struct ms_stack_frame *fr = &s->frames[i];
		const unsigned char *q = p;
		uint64_t fm, fa, ff;

		if (q <= fast_end && ms_uint_fast(&q, &fm) && ms_uint_fast(&q, &fa) &&
		    ms_uint_fast(&q, &ff) && fm <= UINT32_MAX && ff <= UINT32_MAX) {
			fr->module = fm;
			fr->address = fa;
			fr->flags = ff;
			p = q;
			continue;
		}
		c->p = p;
		if (frame_slow(c, rec, fr, i) < 0)
			return -1;
		p = c->p;
	}
	c->p = p;
	return 0;
}

static size_t frames_size(const struct ms_field *f, uint32_t kind, const void *obj)
{
	const struct ms_stack *s = obj;
	size_t size;

	(void)f;
	if (s->n_frames > MS_FRAMES_MAX) {
		ms_field_too_many(kind, "frames", s->n_frames, MS_FRAMES_MAX);
		return SIZE_MAX;
	}
	size = ms_array_size(3 * s->n_frames);
	for (uint32_t i = 0; i < s->n_frames; i++)
		size += ms_uint_size(s->frames[i].module) + ms_uint_size(s->frames[i].address) +
			ms_uint_size(s->frames[i].flags);
	return size;
}

static char *frames_pack(char *p, const struct ms_field *f, const void *obj)
{
	const struct ms_stack *s = obj;

	(void)f;
	p = fp_array(p, 3 * s->n_frames);
	for (uint32_t i = 0; i < s->n_frames; i++) {
		p = fp_uint(p, s->frames[i].module);
		p = fp_uint(p, s->frames[i].address);
		p = fp_uint(p, s->frames[i].flags);
	}
	return p;
}

const struct ms_field_codec ms_frames_codec = {
	frames_unpack, frames_size, frames_pack,
};

/* ---- stack ---- */

/* The most a STACK or STACK_DEF's fields before the frames take, and a frame. */
#define STACK_HEAD_MAX (2 + 5 + 5 + 9 + 5 + 9 + 5 + 5)
#define FRAME_MAX 19

int ms_stack_pack(struct ms_writer *w, const struct ms_stack *s)
{
	char *p0, *p;

	if (s->n_frames <= MS_FRAMES_MAX) {
		/* Packed in place at once when the bound fits. */
		ms_writer_begin(w, MS_REC_STACK);
		if ((p = p0 = ms_writer_reserve(w, STACK_HEAD_MAX + (size_t)s->n_frames * FRAME_MAX))) {
			*p++ = (char)(0x90 | 8);
			*p++ = (char)MS_REC_STACK;
			p = fp_uint(p, s->pid);
			p = fp_uint(p, s->tid);
			p = fp_uint(p, s->time);
			p = fp_uint(p, s->cpu);
			p = fp_uint(p, s->period);
			p = fp_uint(p, s->reason);
			p = frames_pack(p, NULL, s);
			ms_writer_advance(w, (size_t)(p - p0));
			return ms_writer_end(w);
		}
		ms_writer_cancel(w);
	}
	return ms_schema_pack(&ms_stack_schema, MS_REC_STACK, w, s);
}

int ms_stack_unpack(const struct ms_record *rec, struct ms_stack *s)
{
	return ms_schema_unpack(&ms_stack_schema, 0, rec, s);
}

/*
 * [32, id, reason, frames]: the id is not the stack's, so no table
 * describes the struct it unpacks into; the frames are the STACK's.
 */
int ms_stack_def_pack(struct ms_writer *w, uint32_t id, const struct ms_stack *s)
{
	static const struct ms_field frames = { "frames", MS_F_CUSTOM, 0, 0, 0, 0, NULL,
						&ms_frames_codec };
	size_t size;
	char *p0, *p;

	ms_writer_begin(w, MS_REC_STACK_DEF);
	/* In place at once when the bound fits (a definition per unique stack); else measured. */
	if (s->n_frames > MS_FRAMES_MAX ||
	    !(p = p0 = ms_writer_reserve(w, 2 + 5 + 5 + (size_t)s->n_frames * FRAME_MAX))) {
		ms_writer_cancel(w);
		if ((size = frames_size(&frames, MS_REC_STACK_DEF, s)) == SIZE_MAX)
			return -1;
		size += 2 + ms_uint_size(id) + ms_uint_size(s->reason);
		ms_writer_begin(w, MS_REC_STACK_DEF);
		if (!(p = p0 = ms_writer_reserve(w, size)))
			return ms_writer_end(w);
	}
	*p++ = (char)(0x90 | 4);
	*p++ = (char)MS_REC_STACK_DEF;
	p = fp_uint(p, id);
	p = fp_uint(p, s->reason);
	p = frames_pack(p, &frames, s);
	ms_writer_advance(w, (size_t)(p - p0));
	return ms_writer_end(w);
}

int ms_stack_def_unpack(const struct ms_record *rec, uint32_t *id, struct ms_stack *s)
{
	static const struct ms_field frames = { "frames", MS_F_CUSTOM, 0, 0, 0, 0, NULL,
						&ms_frames_codec };
	struct ms_cursor c;
	uint32_t n;

	s->pid = s->tid = s->cpu = 0;
	s->time = s->period = 0;
	if (ms_record_start(&c, rec, MS_REC_STACK_DEF, MS_REC_STACK_DEF, &n) < 0)
		return -1;
	if (n < 1)
		return ms_field_missing(rec, "id", n);
	if (ms_field_u32(&c, rec, "id", id) < 0)
		return -1;
	if (n < 2)
		return ms_field_missing(rec, "reason", n);
	if (ms_field_u32(&c, rec, "reason", &s->reason) < 0)
		return -1;
	if (n < 3)
		return ms_field_missing(rec, "frames", n);
	return frames_unpack(&c, &frames, rec, s);
}

/* ---- stack-ref ---- */

int ms_stack_ref_pack(struct ms_writer *w, const struct ms_stack_ref *r)
{
	/* One per sample and small: encoded here, then copied in (the writer's fast path). */
	char buf[2 + 5 + 5 + 9 + 5 + 9 + 5], *p = buf;

	*p++ = (char)(0x90 | 7);
	*p++ = (char)MS_REC_STACK_REF;
	p = fp_uint(p, r->pid);
	p = fp_uint(p, r->tid);
	p = fp_uint(p, r->time);
	p = fp_uint(p, r->cpu);
	p = fp_uint(p, r->period);
	p = fp_uint(p, r->id);
	return ms_writer_copy(w, buf, (size_t)(p - buf));
}

/*
 * A STACK_REF as ms-unwind writes it, a fixarray of its kind and six
 * unsigned integers that end the record: true with r filled. Anything
 * else (false) takes the generic codec, which gives the verdict. ms-capture
 * reads one per sample: the checked path cost about 200 instructions.
 */
static bool stack_ref_fast(const struct ms_record *rec, struct ms_stack_ref *r)
{
	const unsigned char *p = (const unsigned char *)rec->bytes, *end = p + rec->len;
	uint64_t v[6];

	if (rec->len < 8 || p[0] != 0x97 || p[1] != MS_REC_STACK_REF)
		return false;
	p += 2;
	for (int i = 0; i < 6; i++)
		if (!bounded_uint(&p, end, &v[i]))
			return false;
	if (p != end || (v[0] | v[1] | v[3] | v[5]) > UINT32_MAX)
		return false;
	r->pid = (uint32_t)v[0];
	r->tid = (uint32_t)v[1];
	r->time = v[2];
	r->cpu = (uint32_t)v[3];
	r->period = v[4];
	r->id = (uint32_t)v[5];
	return true;
}

int ms_stack_ref_unpack(const struct ms_record *rec, struct ms_stack_ref *r)
{
	if (rec->kind == MS_REC_STACK_REF && stack_ref_fast(rec, r))
		return 0;
	return ms_schema_unpack(&ms_stack_ref_schema, 0, rec, r);
}

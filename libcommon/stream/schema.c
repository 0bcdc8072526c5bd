/*
 * The generic record codec over the field tables: see stream/schema.h.
 */
#include "stream/schema.h"
#include "stream/fastpack.h"
#include "util/error.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ---- */

int ms_field_bad(const struct ms_record *rec, const char *field, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return ms_error("malformed %s record at byte %" PRIu64 ": field '%s' %s",
			ms_record_kind_name(rec->kind), rec->offset, field, why);
}

int ms_field_short(const struct ms_record *rec)
{
	return ms_error("malformed %s record at byte %" PRIu64 ": it ends inside a field",
			ms_record_kind_name(rec->kind), rec->offset);
}

int ms_field_missing(const struct ms_record *rec, const char *field, uint32_t n_fields)
{
	return ms_field_bad(rec, field, "is missing (the record has %u fields)", n_fields);
}

int ms_field_too_many(uint32_t kind, const char *what, uint32_t n, uint32_t max)
{
	return ms_error("internal error: a %s record with %u %s (at most %u)",
			ms_record_kind_name(kind), n, what, max);
}

/* ---- reading fields ---- */

int ms_record_start(struct ms_cursor *c, const struct ms_record *rec, uint32_t kind,
		    uint32_t kind2, uint32_t *n)
{
	uint64_t k;

	if (rec->kind != kind && rec->kind != kind2)
		return ms_error("internal error: a %s record at byte %" PRIu64
				" was given to the %s decoder", ms_record_kind_name(rec->kind),
				rec->offset, ms_record_kind_name(kind));
	ms_cur_init(c, rec->bytes, rec->len);
	if (ms_cur_array(c, n) <= 0 || *n < 1)
		return ms_error("malformed %s record at byte %" PRIu64 ": not an array",
				ms_record_kind_name(rec->kind), rec->offset);
	/* The reader checked the kind; a record built by hand may differ. */
	if (ms_cur_uint(c, &k) <= 0 || k != rec->kind)
		return ms_error("malformed %s record at byte %" PRIu64
				": it does not start with its kind",
				ms_record_kind_name(rec->kind), rec->offset);
	(*n)--;
	return 0;
}

int ms_field_u64(struct ms_cursor *c, const struct ms_record *rec, const char *name,
		 uint64_t *v)
{
	int r = ms_cur_uint_quick(c, v);

	if (r < 0)
		return ms_field_short(rec);
	if (!r)
		return ms_field_bad(rec, name, "is not an unsigned integer");
	return 0;
}

int ms_field_u32(struct ms_cursor *c, const struct ms_record *rec, const char *name,
		 uint32_t *v)
{
	uint64_t u = 0;

	if (ms_field_u64(c, rec, name, &u) < 0)
		return -1;
	if (u > UINT32_MAX)
		return ms_field_bad(rec, name, "is %" PRIu64 ", more than 32 bits", u);
	*v = (uint32_t)u;
	return 0;
}

int ms_field_array(struct ms_cursor *c, const struct ms_record *rec, const char *name,
		   uint32_t *n, uint32_t max)
{
	int r = ms_cur_array(c, n);

	if (r < 0)
		return ms_field_short(rec);
	if (!r)
		return ms_field_bad(rec, name, "is not an array");
	if (*n > max)
		return ms_field_bad(rec, name, "has %u elements, more than %u", *n, max);
	return 0;
}

static int field_body(struct ms_cursor *c, const struct ms_record *rec, const struct ms_field *f,
		      bool bin, const unsigned char **ptr, uint32_t *len)
{
	int r = ms_cur_body(c, bin, ptr, len);

	if (r < 0)
		return ms_field_short(rec);
	if (!r)
		return ms_field_bad(rec, f->name, bin ? "is not a bin" : "is not a string");
	if (bin && *len > f->max)
		return ms_field_bad(rec, f->name, "holds %u bytes, more than %u", *len, f->max);
	if (bin && !*len && (f->flags & MS_F_NONEMPTY))
		return ms_field_bad(rec, f->name, "is empty");
	return 0;
}

#define AT(obj, off, type) ((type *)((char *)(obj) + (off)))
#define CAT(obj, off, type) ((const type *)((const char *)(obj) + (off)))

static int unpack_field(struct ms_cursor *c, const struct ms_record *rec,
			const struct ms_field *f, void *obj)
{
	const unsigned char *ptr;
	uint32_t n;
	int r;

	switch (f->type) {
	case MS_F_U32:
		return ms_field_u32(c, rec, f->name, AT(obj, f->off, uint32_t));
	case MS_F_U64:
		return ms_field_u64(c, rec, f->name, AT(obj, f->off, uint64_t));
	case MS_F_BOOL:
		if ((r = ms_cur_bool(c, AT(obj, f->off, bool))) < 0)
			return ms_field_short(rec);
		return r ? 0 : ms_field_bad(rec, f->name, "is not a boolean");
	case MS_F_STR:
		if (field_body(c, rec, f, false, &ptr, &n) < 0)
			return -1;
		*AT(obj, f->off, struct ms_str) = (struct ms_str){ (const char *)ptr, n };
		return 0;
	case MS_F_BIN:
	case MS_F_BIN_COPY:
		if (field_body(c, rec, f, true, &ptr, &n) < 0)
			return -1;
		*AT(obj, f->n_off, uint32_t) = n;
		if (f->type == MS_F_BIN)
			*AT(obj, f->off, const uint8_t *) = ptr;
		else if (n)
			memcpy(AT(obj, f->off, uint8_t), ptr, n);
		return 0;
	case MS_F_U64S: {
		uint64_t *out = AT(obj, f->off, uint64_t);

		if (ms_field_array(c, rec, f->name, &n, f->max) < 0)
			return -1;
		for (uint32_t i = 0; i < n; i++) {
			if ((r = ms_cur_uint_quick(c, &out[i])) < 0)
				return ms_field_short(rec);
			if (!r)
				return ms_field_bad(rec, f->name,
						    "element %u is not an unsigned integer", i);
		}
		*AT(obj, f->n_off, uint32_t) = n;
		return 0;
	}
	case MS_F_STRS: {
		struct ms_str *out = AT(obj, f->off, struct ms_str);

		if (ms_field_array(c, rec, f->name, &n, f->max) < 0)
			return -1;
		for (uint32_t i = 0; i < n; i++) {
			if ((r = ms_cur_body(c, false, &ptr, &out[i].len)) < 0)
				return ms_field_short(rec);
			if (!r)
				return ms_field_bad(rec, f->name, "element %u is not a string", i);
			out[i].ptr = (const char *)ptr;
		}
		*AT(obj, f->n_off, uint32_t) = n;
		return 0;
	}
	case MS_F_CUSTOM:
		return f->codec->unpack(c, f, rec, obj);
	}
	return ms_error("internal error: field '%s' of unknown type %u", f->name, f->type);
}

int ms_schema_unpack(const struct ms_schema *s, uint32_t kind, const struct ms_record *rec,
		     void *obj)
{
	struct ms_cursor c;
	uint32_t n;

	if (ms_record_start(&c, rec, kind ? kind : s->kind, kind ? kind : s->kind, &n) < 0)
		return -1;
	for (uint32_t i = 0; i < s->n_fields; i++) {
		const struct ms_field *f = &s->fields[i];

		if (i >= n) {
			if (!(f->flags & MS_F_OPTIONAL))
				return ms_field_missing(rec, f->name, n);
			/* absent: counted fields hold nothing */
			if (f->type != MS_F_CUSTOM)
				*AT(obj, f->n_off, uint32_t) = 0;
			else if (f->codec->unpack(NULL, f, rec, obj) < 0)
				return -1;
			continue;
		}
		if (unpack_field(&c, rec, f, obj) < 0)
			return -1;
	}
	return 0;
}

/* ---- writing fields ---- */

char *ms_put_str(char *p, const char *s, uint32_t len)
{
	if (len < 32)
		*p++ = (char)(0xa0 | len);
	else if (len < 256) {
		*p++ = (char)0xd9;
		*p++ = (char)len;
	} else if (len < 65536)
		p = fp_be16(p, 0xda, (uint16_t)len);
	else
		p = fp_be32(p, 0xdb, len);
	if (len)
		memcpy(p, s, len);
	return p + len;
}

char *ms_put_bin(char *p, const void *b, uint32_t len)
{
	p = fp_bin(p, len);
	if (len)
		memcpy(p, b, len);
	return p + len;
}

/* A counted field's count, checked against its bound: SIZE_MAX after a message. */
static size_t counted(const struct ms_field *f, uint32_t kind, const void *obj, uint32_t *n)
{
	*n = *CAT(obj, f->n_off, uint32_t);
	if (*n > f->max) {
		ms_field_too_many(kind, f->what ? f->what : f->name, *n, f->max);
		return SIZE_MAX;
	}
	return 0;
}

static size_t field_size(const struct ms_field *f, uint32_t kind, const void *obj)
{
	size_t size;
	uint32_t n;

	switch (f->type) {
	case MS_F_U32:
		return ms_uint_size(*CAT(obj, f->off, uint32_t));
	case MS_F_U64:
		return ms_uint_size(*CAT(obj, f->off, uint64_t));
	case MS_F_BOOL:
		return 1;
	case MS_F_STR:
		return ms_str_size(CAT(obj, f->off, struct ms_str)->len);
	case MS_F_BIN:
	case MS_F_BIN_COPY:
		if (counted(f, kind, obj, &n) == SIZE_MAX)
			return SIZE_MAX;
		if (!n && (f->flags & MS_F_NONEMPTY)) {
			ms_error("internal error: a %s record with an empty %s", ms_record_kind_name(kind),
				 f->name);
			return SIZE_MAX;
		}
		return ms_bin_size(n);
	case MS_F_U64S:
		if (counted(f, kind, obj, &n) == SIZE_MAX)
			return SIZE_MAX;
		size = ms_array_size(n);
		for (uint32_t i = 0; i < n; i++)
			size += ms_uint_size(CAT(obj, f->off, uint64_t)[i]);
		return size;
	case MS_F_STRS:
		if (counted(f, kind, obj, &n) == SIZE_MAX)
			return SIZE_MAX;
		size = ms_array_size(n);
		for (uint32_t i = 0; i < n; i++)
			size += ms_str_size(CAT(obj, f->off, struct ms_str)[i].len);
		return size;
	case MS_F_CUSTOM:
		return f->codec->size(f, kind, obj);
	}
	return SIZE_MAX;
}

static char *pack_field(char *p, const struct ms_field *f, const void *obj)
{
	uint32_t n;

	switch (f->type) {
	case MS_F_U32:
		return fp_uint(p, *CAT(obj, f->off, uint32_t));
	case MS_F_U64:
		return fp_uint(p, *CAT(obj, f->off, uint64_t));
	case MS_F_BOOL:
		*p++ = *CAT(obj, f->off, bool) ? (char)0xc3 : (char)0xc2;
		return p;
	case MS_F_STR: {
		const struct ms_str *s = CAT(obj, f->off, struct ms_str);

		return ms_put_str(p, s->ptr, s->len);
	}
	case MS_F_BIN:
		return ms_put_bin(p, *CAT(obj, f->off, const uint8_t *),
				  *CAT(obj, f->n_off, uint32_t));
	case MS_F_BIN_COPY:
		return ms_put_bin(p, CAT(obj, f->off, uint8_t), *CAT(obj, f->n_off, uint32_t));
	case MS_F_U64S:
		n = *CAT(obj, f->n_off, uint32_t);
		p = fp_array(p, n);
		for (uint32_t i = 0; i < n; i++)
			p = fp_uint(p, CAT(obj, f->off, uint64_t)[i]);
		return p;
	case MS_F_STRS:
		n = *CAT(obj, f->n_off, uint32_t);
		p = fp_array(p, n);
		for (uint32_t i = 0; i < n; i++) {
			const struct ms_str *s = &CAT(obj, f->off, struct ms_str)[i];

			p = ms_put_str(p, s->ptr, s->len);
		}
		return p;
	case MS_F_CUSTOM:
		return f->codec->pack(p, f, obj);
	}
	return p;
}

int ms_schema_pack(const struct ms_schema *s, uint32_t kind, struct ms_writer *w,
		   const void *obj)
{
	size_t size = ms_array_size(s->n_fields + 1) + ms_uint_size(kind), fs;
	char *p0, *p;

	for (uint32_t i = 0; i < s->n_fields; i++) {
		if ((fs = field_size(&s->fields[i], kind, obj)) == SIZE_MAX)
			return -1;
		size += fs;
	}
	ms_writer_begin(w, kind);
	/* NULL: too large, or the writer failed; ms_writer_end() says which. */
	if (!(p0 = ms_writer_reserve(w, size)))
		return ms_writer_end(w);
	p = fp_array(p0, s->n_fields + 1);
	p = fp_uint(p, kind);
	for (uint32_t i = 0; i < s->n_fields; i++)
		p = pack_field(p, &s->fields[i], obj);
	/* A table whose measure and encoding disagree is a bug that corrupts the stream. */
	if ((size_t)(p - p0) != size) {
		ms_error("internal error: a %s record measured %zu bytes but took %zu",
			 ms_record_kind_name(kind), size, (size_t)(p - p0));
		abort();
	}
	ms_writer_advance(w, (size_t)(p - p0));
	return ms_writer_end(w);
}

/*
 * Internal to the stream: the one description of each record kind's
 * fields (a table per kind, in records.c) and the one generic codec over
 * it. Packing measures the record exactly, reserves it in the writer's
 * buffer and encodes it there (the smallest encoding of each value, as
 * msgpack-c would write it); unpacking walks the bytes with a cursor
 * (stream/cursor.h) that checks each field's type and bound and names the
 * field when one is wrong. Extra trailing fields (a later minor version)
 * are ignored. SAMPLE and STACK records have hand-written fast paths
 * besides (stream/fastrec.c), held to this codec by tests and fuzzers.
 */
#ifndef MS_STREAM_SCHEMA_H
#define MS_STREAM_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "stream/cursor.h"
#include "stream/records.h"

enum ms_field_type {
	MS_F_U32,	/* uint32_t */
	MS_F_U64,	/* uint64_t */
	MS_F_BOOL,	/* bool */
	MS_F_STR,	/* struct ms_str */
	MS_F_BIN,	/* const uint8_t *, its uint32_t length at n_off; at most max */
	MS_F_BIN_COPY,	/* uint8_t[max], its uint32_t length at n_off */
	MS_F_U64S,	/* array: uint64_t[max], its uint32_t count at n_off */
	MS_F_STRS,	/* array: struct ms_str[max], its uint32_t count at n_off */
	MS_F_CUSTOM,	/* the field's own codec (struct ms_field_codec) */
};

enum ms_field_flags {
	/* May be absent at the record's end (came with a later minor version): count 0. */
	MS_F_OPTIONAL = 1 << 0,
	MS_F_NONEMPTY = 1 << 1,	/* a bin that must hold bytes */
};

struct ms_field;

/* A field that the types above cannot say (a union, a variant, a nested table). */
struct ms_field_codec {
	/* Decode from c into rec; 0, or -1 after ms_field_bad()/ms_field_short(). */
	int (*unpack)(struct ms_cursor *c, const struct ms_field *f, const struct ms_record *rec,
		      void *obj);
	/* Exact encoded size, or SIZE_MAX after a message when obj cannot be written. */
	size_t (*size)(const struct ms_field *f, uint32_t kind, const void *obj);
	char *(*pack)(char *p, const struct ms_field *f, const void *obj);
};

struct ms_field {
	const char *name;	/* in messages: the struct member's name */
	uint8_t type;		/* enum ms_field_type */
	uint8_t flags;		/* enum ms_field_flags */
	uint16_t off;		/* of the value in the record's struct */
	uint16_t n_off;		/* of the count or length, for the counted types */
	uint32_t max;
	const char *what;	/* counted types: what a count names in messages ("ids") */
	const struct ms_field_codec *codec;	/* MS_F_CUSTOM */
};

struct ms_schema {
	uint32_t kind;
	uint32_t n_fields;
	const struct ms_field *fields;
};

/* The tables the fast paths (stream/fastrec.c) give way to, and the frames' codec. */
extern const struct ms_schema ms_sample_schema, ms_stack_schema, ms_stack_ref_schema;
extern const struct ms_field_codec ms_frames_codec;

/*
 * Unpack rec (of schema->kind, or of kind when that is not 0: FORK and
 * EXIT share a table) into obj. 0, or -1 after a message.
 */
int ms_schema_unpack(const struct ms_schema *s, uint32_t kind, const struct ms_record *rec,
		     void *obj);
/* Pack obj as a record of kind through w (begin..end included): 0 or -1. */
int ms_schema_pack(const struct ms_schema *s, uint32_t kind, struct ms_writer *w,
		   const void *obj);

/*
 * For codecs: check the record's array header and kind, and take a field.
 * ms_record_start(): the array header and kind consumed, *n the fields
 * after the kind; -1 after a message.
 */
int ms_record_start(struct ms_cursor *c, const struct ms_record *rec, uint32_t kind,
		    uint32_t kind2, uint32_t *n);
/* Messages naming the record and field; both return -1. */
int ms_field_bad(const struct ms_record *rec, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ms_field_short(const struct ms_record *rec);
int ms_field_missing(const struct ms_record *rec, const char *field, uint32_t n_fields);
/* "internal error: a %s record with %u %s (at most %u)" */
int ms_field_too_many(uint32_t kind, const char *what, uint32_t n, uint32_t max);
/* An unsigned integer field, judged and named as the generic codec does. */
int ms_field_u64(struct ms_cursor *c, const struct ms_record *rec, const char *name,
		 uint64_t *v);
int ms_field_u32(struct ms_cursor *c, const struct ms_record *rec, const char *name,
		 uint32_t *v);
/* An array header of at most max elements. */
int ms_field_array(struct ms_cursor *c, const struct ms_record *rec, const char *name,
		   uint32_t *n, uint32_t max);

/* Encoders for codecs: sizes and bytes exactly as msgpack-c writes them. */
static inline size_t ms_uint_size(uint64_t v)
{
	return v < 128 ? 1 : v < 256 ? 2 : v < 65536 ? 3 : v <= UINT32_MAX ? 5 : 9;
}

static inline size_t ms_array_size(uint32_t n)
{
	return n < 16 ? 1 : n < 65536 ? 3 : 5;
}

/* header and body */
static inline size_t ms_str_size(uint32_t len)
{
	return (len < 32 ? 1 : len < 256 ? 2 : len < 65536 ? 3 : 5) + (size_t)len;
}

static inline size_t ms_bin_size(uint32_t len)
{
	return (len < 256 ? 2 : len < 65536 ? 3 : 5) + (size_t)len;
}

char *ms_put_str(char *p, const char *s, uint32_t len);
char *ms_put_bin(char *p, const void *b, uint32_t len);

#endif

/*
 * Packing and unpacking of each record kind. The layouts are the comments
 * in records.h and the spec in man/microscope-stream.5.
 *
 * Unpacking walks the record's fields in order with a cursor that checks
 * each field's type and bound and names the field when one is wrong. Extra
 * trailing fields (a later minor version) are ignored.
 */
#include "stream/records.h"
#include "stream/fastpack.h"
#include "util/bits.h"
#include "util/error.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[] = {
	[MS_REC_HEADER] = "header",
	[MS_REC_TRAILER] = "trailer",
	[MS_REC_PROBLEM] = "problem",
	[MS_REC_INFO] = "info",
	[MS_REC_ATTR] = "attr",
	[MS_REC_RAW] = "raw",
	[MS_REC_TARGET] = "target",
	[MS_REC_TARGET_EXIT] = "target-exit",
	[MS_REC_ROUND] = "round",
	[MS_REC_VDSO] = "vdso",
	[MS_REC_SAMPLE] = "sample",
	[MS_REC_MMAP] = "mmap",
	[MS_REC_COMM] = "comm",
	[MS_REC_FORK] = "fork",
	[MS_REC_EXIT] = "exit",
	[MS_REC_LOST] = "lost",
	[MS_REC_THROTTLE] = "throttle",
	[MS_REC_STACK_FILE] = "stack-file",
	[MS_REC_MODULE] = "module",
	[MS_REC_STACK] = "stack",
	[MS_REC_STACK_DEF] = "stack-def",
	[MS_REC_STACK_REF] = "stack-ref",
	[MS_REC_FRAME] = "frame",
};

const char *ms_record_kind_name(uint32_t kind)
{
	if (kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

static const char *const stack_end_names[] = {
	[MS_END_OUTERMOST] = "outermost",
	[MS_END_FP_CHAIN] = "fp-chain",
	[MS_END_NO_CFI] = "no-cfi",
	[MS_END_MISSING_REGISTER] = "missing-register",
	[MS_END_STACK_COPY] = "stack-copy",
	[MS_END_CFA_NOT_OUTWARDS] = "cfa-not-outwards",
	[MS_END_NO_MODULE] = "no-module",
	[MS_END_DEPTH] = "depth",
	[MS_END_KERNEL_ONLY] = "kernel-only",
};

const char *ms_stack_end_name(uint32_t reason)
{
	if (reason < sizeof(stack_end_names) / sizeof(stack_end_names[0]) &&
	    stack_end_names[reason])
		return stack_end_names[reason];
	return "unknown";
}

static const char *const frame_reason_names[] = {
	[MS_SYM_OK] = "ok",
	[MS_SYM_NO_FILE] = "no-file",
	[MS_SYM_NO_SYMBOL] = "no-symbol",
	[MS_SYM_IDENTITY] = "identity",
	[MS_SYM_BAD_ELF] = "bad-elf",
	[MS_SYM_NO_MODULE] = "no-module",
	[MS_SYM_NO_DEBUG] = "no-debug-file",
	[MS_SYM_DEBUG_MISMATCH] = "build-id-mismatch",
	[MS_SYM_BAD_DWARF] = "bad-dwarf",
	[MS_SYM_NOT_IN_DEBUG] = "not-in-debug-info",
	[MS_SYM_FDE_ONLY] = "fde-only",
};

const char *ms_frame_reason_name(uint32_t reason)
{
	if (reason < sizeof(frame_reason_names) / sizeof(frame_reason_names[0]) &&
	    frame_reason_names[reason])
		return frame_reason_names[reason];
	return "unknown";
}

/* ---- unpacking ---- */

struct cursor {
	const struct ms_record *rec;
	const msgpack_object *f;
	uint32_t n, i;
};

static int bad(const struct cursor *c, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(const struct cursor *c, const char *field, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return ms_error("malformed %s record at byte %" PRIu64 ": field '%s' %s",
			ms_record_kind_name(c->rec->kind), c->rec->offset, field, why);
}

static int start(struct cursor *c, const struct ms_record *rec, uint32_t kind1, uint32_t kind2)
{
	c->rec = rec;
	if (rec->kind != kind1 && rec->kind != kind2)
		return ms_error("internal error: a %s record at byte %" PRIu64
				" was given to the %s decoder", ms_record_kind_name(rec->kind),
				rec->offset, ms_record_kind_name(kind1));
	if (!rec->obj || rec->obj->type != MSGPACK_OBJECT_ARRAY || rec->obj->via.array.size < 1)
		return ms_error("malformed %s record at byte %" PRIu64 ": not an array",
				ms_record_kind_name(rec->kind), rec->offset);
	c->f = rec->obj->via.array.ptr;
	c->n = rec->obj->via.array.size;
	c->i = 1;
	return 0;
}

/* The next field, or NULL after a message when the record has no more. */
static const msgpack_object *field(struct cursor *c, const char *name)
{
	if (c->i >= c->n) {
		bad(c, name, "is missing (the record has %u fields)", c->n - 1);
		return NULL;
	}
	return &c->f[c->i++];
}

static int get_u64(struct cursor *c, const char *name, uint64_t *v)
{
	const msgpack_object *o = field(c, name);

	if (!o)
		return -1;
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return bad(c, name, "is not an unsigned integer");
	*v = o->via.u64;
	return 0;
}

static int get_u32(struct cursor *c, const char *name, uint32_t *v)
{
	const msgpack_object *o = field(c, name);

	if (!o)
		return -1;
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return bad(c, name, "is not an unsigned integer");
	if (o->via.u64 > UINT32_MAX)
		return bad(c, name, "is %" PRIu64 ", more than 32 bits", o->via.u64);
	*v = o->via.u64;
	return 0;
}

static int get_bool(struct cursor *c, const char *name, bool *v)
{
	const msgpack_object *o = field(c, name);

	if (!o)
		return -1;
	if (o->type != MSGPACK_OBJECT_BOOLEAN)
		return bad(c, name, "is not a boolean");
	*v = o->via.boolean;
	return 0;
}

static int get_str(struct cursor *c, const char *name, struct ms_str *s)
{
	const msgpack_object *o = field(c, name);

	if (!o)
		return -1;
	if (o->type != MSGPACK_OBJECT_STR)
		return bad(c, name, "is not a string");
	s->ptr = o->via.str.ptr;
	s->len = o->via.str.size;
	return 0;
}

static int get_bin(struct cursor *c, const char *name, const uint8_t **ptr, uint32_t *len,
		   uint32_t max)
{
	const msgpack_object *o = field(c, name);

	if (!o)
		return -1;
	if (o->type != MSGPACK_OBJECT_BIN)
		return bad(c, name, "is not a bin");
	if (o->via.bin.size > max)
		return bad(c, name, "holds %u bytes, more than %u", o->via.bin.size, max);
	*ptr = (const uint8_t *)o->via.bin.ptr;
	*len = o->via.bin.size;
	return 0;
}

static int get_array(struct cursor *c, const char *name, const msgpack_object **items,
		     uint32_t *n, uint32_t max)
{
	const msgpack_object *o = field(c, name);

	if (!o)
		return -1;
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return bad(c, name, "is not an array");
	if (o->via.array.size > max)
		return bad(c, name, "has %u elements, more than %u", o->via.array.size, max);
	*items = o->via.array.ptr;
	*n = o->via.array.size;
	return 0;
}

/*
 * The byte cursor: STACK and SAMPLE records decoded straight from their
 * encoding, without msgpack objects (a reader may not build them: see
 * ms_reader_defer_objects()). Each field is judged exactly as the object
 * path judges it, with the same messages. The reader's framing scan has
 * checked every header against the record's length already; the cursor
 * still checks its own bounds, for a record built by hand.
 */
struct bcursor {
	struct cursor cur;	/* for bad(): only its rec */
	const struct ms_record *rec;
	const unsigned char *p, *end;
	uint32_t n, i;		/* fields (kind included), the next field */
};

static int bc_short(const struct bcursor *c)
{
	return ms_error("malformed %s record at byte %" PRIu64 ": it ends inside a field",
			ms_record_kind_name(c->rec->kind), c->rec->offset);
}

/*
 * An unsigned integer as msgpack-c sees one (a signed type holding a
 * value >= 0 included): 1 and *v set; 0 when the next object is something
 * else (not consumed); -1 after a message when the bytes end.
 */
static inline int bc_uint(struct bcursor *c, uint64_t *v)
{
	unsigned char t;
	int w;

	if (c->p >= c->end)
		return bc_short(c);
	t = *c->p;
	if (t <= 0x7f) {
		*v = t;
		c->p++;
		return 1;
	}
	if (t >= 0xcc && t <= 0xcf)
		w = 1 << (t - 0xcc);
	else if (t >= 0xd0 && t <= 0xd3)
		w = 1 << (t - 0xd0);
	else
		return 0;
	if ((size_t)(c->end - c->p) < 1 + (size_t)w)
		return bc_short(c);
	*v = fp_get_be(c->p + 1, w);
	if (t >= 0xd0) {
		int64_t sv = w == 8 ? (int64_t)*v :
			(int64_t)(*v << (64 - 8 * w)) >> (64 - 8 * w);

		if (sv < 0)
			return 0;
		*v = (uint64_t)sv;
	}
	c->p += 1 + w;
	return 1;
}

/*
 * The unsigned encodings, with no bounds check: the caller has made sure 9
 * bytes are left. False (nothing consumed) for any other type byte; the
 * caller then takes bc_uint(), which judges it.
 */
static inline __attribute__((always_inline)) bool uint_fast(const unsigned char **pp, uint64_t *v)
{
	const unsigned char *p = *pp;
	unsigned t = p[0], w;
	uint64_t v64;

	if (t <= 0x7f) {
		*v = t;
		*pp = p + 1;
		return true;
	}
	if (t - 0xcc > 3)
		return false;
	/* uint8..uint64: the 8 bytes after the type byte, shifted to width. */
	w = 1u << (t - 0xcc);
	memcpy(&v64, p + 1, 8);
	*v = __builtin_bswap64(v64) >> (64 - 8 * w);
	*pp = p + 1 + w;
	return true;
}

/* An array header: 1 and *n; 0 when not an array; -1 when the bytes end. */
static int bc_array_hdr(struct bcursor *c, uint32_t *n)
{
	unsigned char t;
	int w;

	if (c->p >= c->end)
		return bc_short(c);
	t = *c->p;
	if (t >= 0x90 && t <= 0x9f) {
		*n = t & 0x0f;
		c->p++;
		return 1;
	}
	if (t != 0xdc && t != 0xdd)
		return 0;
	w = t == 0xdc ? 2 : 4;
	if ((size_t)(c->end - c->p) < 1 + (size_t)w)
		return bc_short(c);
	*n = (uint32_t)fp_get_be(c->p + 1, w);
	c->p += 1 + w;
	return 1;
}

static int bc_start(struct bcursor *c, const struct ms_record *rec, uint32_t kind)
{
	uint64_t k;

	c->rec = c->cur.rec = rec;
	c->p = (const unsigned char *)rec->bytes;
	c->end = c->p + rec->len;
	if (rec->kind != kind)
		return ms_error("internal error: a %s record at byte %" PRIu64
				" was given to the %s decoder", ms_record_kind_name(rec->kind),
				rec->offset, ms_record_kind_name(kind));
	if (rec->len == 0 || bc_array_hdr(c, &c->n) <= 0 || c->n < 1)
		return ms_error("malformed %s record at byte %" PRIu64 ": not an array",
				ms_record_kind_name(rec->kind), rec->offset);
	/* The reader checked the kind; a record built by hand may differ. */
	if (bc_uint(c, &k) <= 0 || k != kind)
		return ms_error("malformed %s record at byte %" PRIu64
				": it does not start with its kind",
				ms_record_kind_name(rec->kind), rec->offset);
	c->i = 1;
	return 0;
}

static inline int bc_field(struct bcursor *c, const char *name)
{
	if (c->i >= c->n) {
		bad(&c->cur, name,
		    "is missing (the record has %u fields)", c->n - 1);
		return -1;
	}
	c->i++;
	return 0;
}

static int bc_u64(struct bcursor *c, const char *name, uint64_t *v)
{
	int r;

	if (bc_field(c, name) < 0)
		return -1;
	if (c->end - c->p >= 9 && uint_fast(&c->p, v))
		return 0;
	if ((r = bc_uint(c, v)) < 0)
		return -1;
	if (!r)
		return bad(&c->cur, name, "is not an unsigned integer");
	return 0;
}

static int bc_u32(struct bcursor *c, const char *name, uint32_t *v)
{
	uint64_t u = 0;

	if (bc_u64(c, name, &u) < 0)
		return -1;
	if (u > UINT32_MAX)
		return bad(&c->cur, name,
			   "is %" PRIu64 ", more than 32 bits", u);
	*v = u;
	return 0;
}

static int bc_array(struct bcursor *c, const char *name, uint32_t *n, uint32_t max)
{
	int r;

	if (bc_field(c, name) < 0 || (r = bc_array_hdr(c, n)) < 0)
		return -1;
	if (!r)
		return bad(&c->cur, name, "is not an array");
	if (*n > max)
		return bad(&c->cur, name,
			   "has %u elements, more than %u", *n, max);
	return 0;
}

static int bc_u64_array(struct bcursor *c, const char *name, uint64_t *out, uint32_t *n,
			uint32_t max)
{
	int r;

	const unsigned char *p;
	uint32_t i = 0, cnt;

	if (bc_array(c, name, n, max) < 0)
		return -1;
	/* In a local while 9 bytes are left: the cursor lives in memory. */
	cnt = *n;
	p = c->p;
	if (c->end - p >= 9) {
		const unsigned char *fast_end = c->end - 9;

		while (i < cnt && p <= fast_end && uint_fast(&p, &out[i]))
			i++;
	}
	c->p = p;
	for (; i < cnt; i++) {
		if ((r = bc_uint(c, &out[i])) < 0)
			return -1;
		if (!r)
			return bad(&c->cur, name,
				   "element %u is not an unsigned integer", i);
	}
	return 0;
}

static int bc_bin(struct bcursor *c, const char *name, const uint8_t **ptr, uint32_t *len,
		  uint32_t max)
{
	unsigned char t;
	int w;

	if (bc_field(c, name) < 0)
		return -1;
	if (c->p >= c->end)
		return bc_short(c);
	t = *c->p;
	if (t < 0xc4 || t > 0xc6)
		return bad(&c->cur, name, "is not a bin");
	w = 1 << (t - 0xc4);
	if ((size_t)(c->end - c->p) < 1 + (size_t)w)
		return bc_short(c);
	*len = (uint32_t)fp_get_be(c->p + 1, w);
	if (*len > max)
		return bad(&c->cur, name,
			   "holds %u bytes, more than %u", *len, max);
	if ((size_t)(c->end - c->p) - 1 - w < *len)
		return bc_short(c);
	*ptr = c->p + 1 + w;
	c->p += 1 + w + *len;
	return 0;
}

/* An array of unsigned integers into out[max]. */
static int get_u64_array(struct cursor *c, const char *name, uint64_t *out, uint32_t *n,
			 uint32_t max)
{
	const msgpack_object *items;

	if (get_array(c, name, &items, n, max) < 0)
		return -1;
	for (uint32_t i = 0; i < *n; i++) {
		if (items[i].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return bad(c, name, "element %u is not an unsigned integer", i);
		out[i] = items[i].via.u64;
	}
	return 0;
}

static int get_build_id(struct cursor *c, const char *name, uint8_t *out, uint32_t *len)
{
	const uint8_t *p;

	if (get_bin(c, name, &p, len, MS_BUILD_ID_MAX) < 0)
		return -1;
	if (*len)
		memcpy(out, p, *len);
	return 0;
}

/* ---- packing ---- */

static void pack_str(msgpack_packer *pk, const struct ms_str *s)
{
	msgpack_pack_str_with_body(pk, s->len ? s->ptr : "", s->len);
}

static void pack_bool(msgpack_packer *pk, bool b)
{
	if (b)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
}

static msgpack_packer *begin(struct ms_writer *w, uint32_t kind, uint32_t n_fields)
{
	msgpack_packer *pk = ms_writer_packer(w);

	ms_writer_begin(w);
	msgpack_pack_array(pk, n_fields + 1);
	msgpack_pack_uint32(pk, kind);
	return pk;
}

static int too_many(uint32_t kind, const char *field, uint32_t n, uint32_t max)
{
	return ms_error("internal error: a %s record with %u %s (at most %u)",
			ms_record_kind_name(kind), n, field, max);
}

/* ---- problem ---- */

int ms_problem_pack(struct ms_writer *w, const struct ms_problem *p)
{
	msgpack_packer *pk = begin(w, MS_REC_PROBLEM, 4);

	pack_str(pk, &p->stage);
	pack_str(pk, &p->code);
	msgpack_pack_uint64(pk, p->count);
	pack_str(pk, &p->detail);
	return ms_writer_end(w);
}

int ms_problem_unpack(const struct ms_record *rec, struct ms_problem *p)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_PROBLEM, MS_REC_PROBLEM) < 0 ||
	    get_str(&c, "stage", &p->stage) < 0 ||
	    get_str(&c, "code", &p->code) < 0 ||
	    get_u64(&c, "count", &p->count) < 0 ||
	    get_str(&c, "detail", &p->detail) < 0)
		return -1;
	return 0;
}

/* ---- info ---- */

int ms_info_pack(struct ms_writer *w, const struct ms_info *i)
{
	msgpack_packer *pk = begin(w, MS_REC_INFO, 2);

	pack_str(pk, &i->key);
	if (i->is_text)
		pack_str(pk, &i->text);
	else
		msgpack_pack_uint64(pk, i->number);
	return ms_writer_end(w);
}

int ms_info_unpack(const struct ms_record *rec, struct ms_info *i)
{
	struct cursor c;
	const msgpack_object *v;

	if (start(&c, rec, MS_REC_INFO, MS_REC_INFO) < 0 ||
	    get_str(&c, "key", &i->key) < 0 ||
	    !(v = field(&c, "value")))
		return -1;
	i->text.ptr = NULL;
	i->text.len = 0;
	i->number = 0;
	if (v->type == MSGPACK_OBJECT_STR) {
		i->is_text = true;
		i->text.ptr = v->via.str.ptr;
		i->text.len = v->via.str.size;
	} else if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		i->is_text = false;
		i->number = v->via.u64;
	} else {
		return bad(&c, "value", "is neither a string nor an unsigned integer");
	}
	return 0;
}

/* ---- attr ---- */

int ms_attr_pack(struct ms_writer *w, const struct ms_attr *a)
{
	msgpack_packer *pk;

	if (a->n_ids > MS_ATTR_IDS_MAX)
		return too_many(MS_REC_ATTR, "ids", a->n_ids, MS_ATTR_IDS_MAX);
	pk = begin(w, MS_REC_ATTR, 8);
	msgpack_pack_uint32(pk, a->type);
	msgpack_pack_uint64(pk, a->config);
	msgpack_pack_uint64(pk, a->sample_type);
	msgpack_pack_uint64(pk, a->read_format);
	msgpack_pack_uint64(pk, a->sample_regs_user);
	msgpack_pack_uint32(pk, a->sample_stack_user);
	msgpack_pack_uint32(pk, a->flags);
	msgpack_pack_array(pk, a->n_ids);
	for (uint32_t i = 0; i < a->n_ids; i++)
		msgpack_pack_uint64(pk, a->ids[i]);
	return ms_writer_end(w);
}

int ms_attr_unpack(const struct ms_record *rec, struct ms_attr *a)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_ATTR, MS_REC_ATTR) < 0 ||
	    get_u32(&c, "type", &a->type) < 0 ||
	    get_u64(&c, "config", &a->config) < 0 ||
	    get_u64(&c, "sample_type", &a->sample_type) < 0 ||
	    get_u64(&c, "read_format", &a->read_format) < 0 ||
	    get_u64(&c, "sample_regs_user", &a->sample_regs_user) < 0 ||
	    get_u32(&c, "sample_stack_user", &a->sample_stack_user) < 0 ||
	    get_u32(&c, "flags", &a->flags) < 0 ||
	    get_u64_array(&c, "ids", a->ids, &a->n_ids, MS_ATTR_IDS_MAX) < 0)
		return -1;
	return 0;
}

/* ---- raw ---- */

int ms_raw_pack(struct ms_writer *w, const struct ms_raw *r)
{
	msgpack_packer *pk = begin(w, MS_REC_RAW, 2);

	msgpack_pack_uint32(pk, r->cpu);
	msgpack_pack_bin_with_body(pk, r->len ? (const void *)r->data : "", r->len);
	return ms_writer_end(w);
}

int ms_raw_unpack(const struct ms_record *rec, struct ms_raw *r)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_RAW, MS_REC_RAW) < 0 ||
	    get_u32(&c, "cpu", &r->cpu) < 0 ||
	    get_bin(&c, "data", &r->data, &r->len, UINT32_MAX) < 0)
		return -1;
	return 0;
}

/* ---- target ---- */

int ms_target_pack(struct ms_writer *w, const struct ms_target *t)
{
	msgpack_packer *pk;

	if (t->argc > MS_ARGV_MAX)
		return too_many(MS_REC_TARGET, "arguments", t->argc, MS_ARGV_MAX);
	pk = begin(w, MS_REC_TARGET, 3);
	msgpack_pack_uint32(pk, t->pid);
	pack_bool(pk, t->launched);
	msgpack_pack_array(pk, t->argc);
	for (uint32_t i = 0; i < t->argc; i++)
		pack_str(pk, &t->argv[i]);
	return ms_writer_end(w);
}

int ms_target_unpack(const struct ms_record *rec, struct ms_target *t)
{
	struct cursor c;
	const msgpack_object *argv;

	if (start(&c, rec, MS_REC_TARGET, MS_REC_TARGET) < 0 ||
	    get_u32(&c, "pid", &t->pid) < 0 ||
	    get_bool(&c, "launched", &t->launched) < 0 ||
	    get_array(&c, "argv", &argv, &t->argc, MS_ARGV_MAX) < 0)
		return -1;
	for (uint32_t i = 0; i < t->argc; i++) {
		if (argv[i].type != MSGPACK_OBJECT_STR)
			return bad(&c, "argv", "element %u is not a string", i);
		t->argv[i].ptr = argv[i].via.str.ptr;
		t->argv[i].len = argv[i].via.str.size;
	}
	return 0;
}

/* ---- target exit ---- */

int ms_target_exit_pack(struct ms_writer *w, const struct ms_target_exit *t)
{
	msgpack_packer *pk = begin(w, MS_REC_TARGET_EXIT, 3);

	msgpack_pack_uint32(pk, t->pid);
	msgpack_pack_uint32(pk, t->wait_status);
	msgpack_pack_uint32(pk, t->exit_code);
	return ms_writer_end(w);
}

int ms_target_exit_unpack(const struct ms_record *rec, struct ms_target_exit *t)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_TARGET_EXIT, MS_REC_TARGET_EXIT) < 0 ||
	    get_u32(&c, "pid", &t->pid) < 0 ||
	    get_u32(&c, "wait_status", &t->wait_status) < 0 ||
	    get_u32(&c, "exit_code", &t->exit_code) < 0)
		return -1;
	return 0;
}

/* ---- round ---- */

int ms_round_pack(struct ms_writer *w)
{
	begin(w, MS_REC_ROUND, 0);
	return ms_writer_end(w);
}

/* ---- vdso ---- */

int ms_vdso_pack(struct ms_writer *w, const struct ms_vdso *v)
{
	msgpack_packer *pk;

	if (!v->len || v->len > MS_VDSO_MAX)
		return ms_error("internal error: a vdso record with an image of %u bytes "
				"(1 to %u)", v->len, MS_VDSO_MAX);
	pk = begin(w, MS_REC_VDSO, 1);
	msgpack_pack_bin_with_body(pk, v->image, v->len);
	return ms_writer_end(w);
}

int ms_vdso_unpack(const struct ms_record *rec, struct ms_vdso *v)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_VDSO, MS_REC_VDSO) < 0 ||
	    get_bin(&c, "image", &v->image, &v->len, MS_VDSO_MAX) < 0)
		return -1;
	if (!v->len)
		return bad(&c, "image", "is empty");
	return 0;
}

/* ---- sample ---- */

/* Registers in a bin: little-endian u64s, whatever the host. */
static inline void put_le64(char *p, uint64_t v)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

static inline uint64_t get_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

int ms_sample_pack(struct ms_writer *w, const struct ms_sample *s)
{
	msgpack_packer *pk;

	if (s->n_kchain > MS_CHAIN_MAX)
		return too_many(MS_REC_SAMPLE, "kernel frames", s->n_kchain, MS_CHAIN_MAX);
	if (s->n_uchain > MS_CHAIN_MAX)
		return too_many(MS_REC_SAMPLE, "user frames", s->n_uchain, MS_CHAIN_MAX);
	if (s->n_regs > MS_REGS_MAX)
		return too_many(MS_REC_SAMPLE, "registers", s->n_regs, MS_REGS_MAX);
	if (s->stack_len > MS_STACK_MAX)
		return too_many(MS_REC_SAMPLE, "stack bytes", s->stack_len, MS_STACK_MAX);
	ms_writer_begin(w);
	{
		/* Fixed schema: packed in place, by the encoder ms-decode uses too. */
		char *p0 = ms_writer_reserve(w, fp_sample_bound(s)), *p;

		if (p0) {
			p = fp_sample(p0, s);
			ms_writer_advance(w, (size_t)(p - p0));
			return ms_writer_end(w);
		}
	}
	pk = ms_writer_packer(w);
	msgpack_pack_array(pk, 14);
	msgpack_pack_uint32(pk, MS_REC_SAMPLE);
	msgpack_pack_uint32(pk, s->pid);
	msgpack_pack_uint32(pk, s->tid);
	msgpack_pack_uint64(pk, s->time);
	msgpack_pack_uint32(pk, s->cpu);
	msgpack_pack_uint64(pk, s->period);
	msgpack_pack_uint64(pk, s->ip);
	msgpack_pack_uint32(pk, s->cpumode);
	msgpack_pack_array(pk, s->n_kchain);
	for (uint32_t i = 0; i < s->n_kchain; i++)
		msgpack_pack_uint64(pk, s->kchain[i]);
	msgpack_pack_array(pk, s->n_uchain);
	for (uint32_t i = 0; i < s->n_uchain; i++)
		msgpack_pack_uint64(pk, s->uchain[i]);
	msgpack_pack_uint32(pk, s->regs_abi);
	msgpack_pack_uint64(pk, s->regs_mask);
	{
		char le[8 * MS_REGS_MAX];

		for (uint32_t i = 0; i < s->n_regs; i++)
			put_le64(le + 8 * i, s->regs[i]);
		msgpack_pack_bin_with_body(pk, le, 8 * s->n_regs);
	}
	if (s->stack_in_file) {
		msgpack_pack_array(pk, 2);
		msgpack_pack_uint64(pk, s->stack_offset);
		msgpack_pack_uint32(pk, s->stack_len);
	} else {
		msgpack_pack_bin_with_body(pk, s->stack_len ? (const void *)s->stack : "",
					   s->stack_len);
	}
	return ms_writer_end(w);
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
		if (!uint_fast(&p, &v[i]))
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
		if (end - p < 9 || !uint_fast(&p, &s->kchain[i]))
			return 0;
	s->n_kchain = n;
	if (p >= end || (*p & 0xf0) != 0x90)
		return 0;
	n = *p++ & 0x0f;
	for (uint32_t i = 0; i < n; i++)
		if (end - p < 9 || !uint_fast(&p, &s->uchain[i]))
			return 0;
	s->n_uchain = n;
	/* regs_abi, regs_mask, then the registers as a bin 8. */
	if (end - p < 9 || !uint_fast(&p, &v[0]) || v[0] > UINT32_MAX ||
	    end - p < 9 || !uint_fast(&p, &v[1]) || end - p < 2 || p[0] != 0xc4)
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
		s->regs[i] = get_le64(p);
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



static int sample_unpack_bytes(const struct ms_record *rec, struct ms_sample *s)
{
	struct bcursor c;

	if (rec->kind == MS_REC_SAMPLE && sample_fast(rec->bytes, rec->len, s))
		return 0;
	if (bc_start(&c, rec, MS_REC_SAMPLE) < 0 ||
	    bc_u32(&c, "pid", &s->pid) < 0 ||
	    bc_u32(&c, "tid", &s->tid) < 0 ||
	    bc_u64(&c, "time", &s->time) < 0 ||
	    bc_u32(&c, "cpu", &s->cpu) < 0 ||
	    bc_u64(&c, "period", &s->period) < 0 ||
	    bc_u64(&c, "ip", &s->ip) < 0 ||
	    bc_u32(&c, "cpumode", &s->cpumode) < 0 ||
	    bc_u64_array(&c, "kchain", s->kchain, &s->n_kchain, MS_CHAIN_MAX) < 0 ||
	    bc_u64_array(&c, "uchain", s->uchain, &s->n_uchain, MS_CHAIN_MAX) < 0 ||
	    bc_u32(&c, "regs_abi", &s->regs_abi) < 0 ||
	    bc_u64(&c, "regs_mask", &s->regs_mask) < 0)
		return -1;
	if (c.i < c.n && c.p < c.end && *c.p >= 0xc4 && *c.p <= 0xc6) {
		const uint8_t *le;
		uint32_t n;

		if (bc_bin(&c, "regs", &le, &n, 8 * MS_REGS_MAX) < 0)
			return -1;
		if (n % 8)
			return bad(&c.cur, "regs", "holds %u bytes, not a multiple of 8", n);
		s->n_regs = n / 8;
		for (uint32_t i = 0; i < s->n_regs; i++)
			s->regs[i] = get_le64(le + 8 * i);
	} else if (bc_u64_array(&c, "regs", s->regs, &s->n_regs, MS_REGS_MAX) < 0) {
		return -1;
	}
	if ((s->regs_abi || s->n_regs) &&
	    s->n_regs != (uint32_t)ms_popcount64(s->regs_mask))
		return bad(&c.cur, "regs",
			   "has %u registers but regs_mask 0x%" PRIx64 " has %d bits",
			   s->n_regs, s->regs_mask, ms_popcount64(s->regs_mask));
	s->stack_in_file = false;
	s->stack_offset = 0;
	/* [offset, length] in the STACK_FILE (minor 2), else the bytes */
	if (c.i < c.n && c.p < c.end && ((*c.p & 0xf0) == 0x90 || *c.p == 0xdc || *c.p == 0xdd)) {
		uint64_t len = 0;
		uint32_t n;
		int r1, r2 = 0;

		if (bc_array(&c, "stack", &n, 2) < 0)
			return -1;
		if (n != 2)
			return bad(&c.cur, "stack", "is neither a bin nor [offset, length]");
		if ((r1 = bc_uint(&c, &s->stack_offset)) < 0 ||
		    (r1 && (r2 = bc_uint(&c, &len)) < 0))
			return -1;
		if (!r1 || !r2)
			return bad(&c.cur, "stack", "is neither a bin nor [offset, length]");
		if (len > MS_STACK_MAX)
			return bad(&c.cur, "stack", "refers to %" PRIu64 " bytes, more than %u",
				   len, MS_STACK_MAX);
		s->stack_len = (uint32_t)len;
		s->stack = NULL;
		s->stack_in_file = true;
		return 0;
	}
	return bc_bin(&c, "stack", &s->stack, &s->stack_len, MS_STACK_MAX);
}

int ms_sample_unpack(const struct ms_record *rec, struct ms_sample *s)
{
	struct cursor c;

	/* The bytes when there are any: a deferring reader built no object. */
	if (rec->bytes && rec->len)
		return sample_unpack_bytes(rec, s);
	if (start(&c, rec, MS_REC_SAMPLE, MS_REC_SAMPLE) < 0 ||
	    get_u32(&c, "pid", &s->pid) < 0 ||
	    get_u32(&c, "tid", &s->tid) < 0 ||
	    get_u64(&c, "time", &s->time) < 0 ||
	    get_u32(&c, "cpu", &s->cpu) < 0 ||
	    get_u64(&c, "period", &s->period) < 0 ||
	    get_u64(&c, "ip", &s->ip) < 0 ||
	    get_u32(&c, "cpumode", &s->cpumode) < 0 ||
	    get_u64_array(&c, "kchain", s->kchain, &s->n_kchain, MS_CHAIN_MAX) < 0 ||
	    get_u64_array(&c, "uchain", s->uchain, &s->n_uchain, MS_CHAIN_MAX) < 0 ||
	    get_u32(&c, "regs_abi", &s->regs_abi) < 0 ||
	    get_u64(&c, "regs_mask", &s->regs_mask) < 0)
		return -1;
	if (c.i < c.n && c.f[c.i].type == MSGPACK_OBJECT_BIN) {
		const uint8_t *le;
		uint32_t n;

		if (get_bin(&c, "regs", &le, &n, 8 * MS_REGS_MAX) < 0)
			return -1;
		if (n % 8)
			return bad(&c, "regs", "holds %u bytes, not a multiple of 8", n);
		s->n_regs = n / 8;
		for (uint32_t i = 0; i < s->n_regs; i++)
			s->regs[i] = get_le64(le + 8 * i);
	} else if (get_u64_array(&c, "regs", s->regs, &s->n_regs, MS_REGS_MAX) < 0) {
		return -1;
	}
	/* No registers at all (abi 0) is allowed whatever the mask asked for. */
	if ((s->regs_abi || s->n_regs) &&
	    s->n_regs != (uint32_t)ms_popcount64(s->regs_mask))
		return bad(&c, "regs", "has %u registers but regs_mask 0x%" PRIx64 " has %d bits",
			   s->n_regs, s->regs_mask, ms_popcount64(s->regs_mask));
	s->stack_in_file = false;
	s->stack_offset = 0;
	if (c.i < c.n && c.f[c.i].type == MSGPACK_OBJECT_ARRAY) {
		const msgpack_object *ref;
		uint32_t n;

		if (get_array(&c, "stack", &ref, &n, 2) < 0)
			return -1;
		if (n != 2 || ref[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
		    ref[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return bad(&c, "stack", "is neither a bin nor [offset, length]");
		if (ref[1].via.u64 > MS_STACK_MAX)
			return bad(&c, "stack", "refers to %" PRIu64 " bytes, more than %u",
				   ref[1].via.u64, MS_STACK_MAX);
		s->stack = NULL;
		s->stack_len = (uint32_t)ref[1].via.u64;
		s->stack_offset = ref[0].via.u64;
		s->stack_in_file = true;
		return 0;
	}
	if (get_bin(&c, "stack", &s->stack, &s->stack_len, MS_STACK_MAX) < 0)
		return -1;
	return 0;
}

/* ---- stack file ---- */

int ms_stack_file_pack(struct ms_writer *w, const struct ms_stack_file *f)
{
	msgpack_packer *pk = begin(w, MS_REC_STACK_FILE, 6);

	pack_str(pk, &f->path);
	msgpack_pack_uint32(pk, f->dev_maj);
	msgpack_pack_uint32(pk, f->dev_min);
	msgpack_pack_uint64(pk, f->ino);
	msgpack_pack_uint64(pk, f->size);
	msgpack_pack_uint64(pk, f->mtime);
	return ms_writer_end(w);
}

int ms_stack_file_unpack(const struct ms_record *rec, struct ms_stack_file *f)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_STACK_FILE, MS_REC_STACK_FILE) < 0 ||
	    get_str(&c, "path", &f->path) < 0 ||
	    get_u32(&c, "dev_maj", &f->dev_maj) < 0 ||
	    get_u32(&c, "dev_min", &f->dev_min) < 0 ||
	    get_u64(&c, "ino", &f->ino) < 0 ||
	    get_u64(&c, "size", &f->size) < 0 ||
	    get_u64(&c, "mtime", &f->mtime) < 0)
		return -1;
	return 0;
}

/* ---- mmap ---- */

int ms_mmap_pack(struct ms_writer *w, const struct ms_mmap *m)
{
	msgpack_packer *pk;

	if (m->build_id_len > MS_BUILD_ID_MAX)
		return too_many(MS_REC_MMAP, "build id bytes", m->build_id_len, MS_BUILD_ID_MAX);
	pk = begin(w, MS_REC_MMAP, 16);
	msgpack_pack_uint32(pk, m->pid);
	msgpack_pack_uint32(pk, m->tid);
	msgpack_pack_uint64(pk, m->time);
	msgpack_pack_uint64(pk, m->start);
	msgpack_pack_uint64(pk, m->len);
	msgpack_pack_uint64(pk, m->pgoff);
	msgpack_pack_uint32(pk, m->maj);
	msgpack_pack_uint32(pk, m->min);
	msgpack_pack_uint64(pk, m->ino);
	msgpack_pack_uint64(pk, m->ino_generation);
	msgpack_pack_uint32(pk, m->prot);
	msgpack_pack_uint32(pk, m->flags);
	msgpack_pack_uint32(pk, m->cpumode);
	pack_bool(pk, m->synthesized);
	pack_str(pk, &m->filename);
	msgpack_pack_bin_with_body(pk, m->build_id, m->build_id_len);
	return ms_writer_end(w);
}

int ms_mmap_unpack(const struct ms_record *rec, struct ms_mmap *m)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_MMAP, MS_REC_MMAP) < 0 ||
	    get_u32(&c, "pid", &m->pid) < 0 ||
	    get_u32(&c, "tid", &m->tid) < 0 ||
	    get_u64(&c, "time", &m->time) < 0 ||
	    get_u64(&c, "start", &m->start) < 0 ||
	    get_u64(&c, "len", &m->len) < 0 ||
	    get_u64(&c, "pgoff", &m->pgoff) < 0 ||
	    get_u32(&c, "maj", &m->maj) < 0 ||
	    get_u32(&c, "min", &m->min) < 0 ||
	    get_u64(&c, "ino", &m->ino) < 0 ||
	    get_u64(&c, "ino_generation", &m->ino_generation) < 0 ||
	    get_u32(&c, "prot", &m->prot) < 0 ||
	    get_u32(&c, "flags", &m->flags) < 0 ||
	    get_u32(&c, "cpumode", &m->cpumode) < 0 ||
	    get_bool(&c, "synthesized", &m->synthesized) < 0 ||
	    get_str(&c, "filename", &m->filename) < 0 ||
	    get_build_id(&c, "build_id", m->build_id, &m->build_id_len) < 0)
		return -1;
	return 0;
}

/* ---- comm ---- */

int ms_comm_pack(struct ms_writer *w, const struct ms_comm *cm)
{
	msgpack_packer *pk = begin(w, MS_REC_COMM, 6);

	msgpack_pack_uint32(pk, cm->pid);
	msgpack_pack_uint32(pk, cm->tid);
	msgpack_pack_uint64(pk, cm->time);
	pack_bool(pk, cm->exec);
	pack_bool(pk, cm->synthesized);
	pack_str(pk, &cm->comm);
	return ms_writer_end(w);
}

int ms_comm_unpack(const struct ms_record *rec, struct ms_comm *cm)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_COMM, MS_REC_COMM) < 0 ||
	    get_u32(&c, "pid", &cm->pid) < 0 ||
	    get_u32(&c, "tid", &cm->tid) < 0 ||
	    get_u64(&c, "time", &cm->time) < 0 ||
	    get_bool(&c, "exec", &cm->exec) < 0 ||
	    get_bool(&c, "synthesized", &cm->synthesized) < 0 ||
	    get_str(&c, "comm", &cm->comm) < 0)
		return -1;
	return 0;
}

/* ---- fork, exit ---- */

int ms_task_pack(struct ms_writer *w, uint32_t kind, const struct ms_task *t)
{
	msgpack_packer *pk;

	if (kind != MS_REC_FORK && kind != MS_REC_EXIT)
		return ms_error("internal error: a task record of kind %u", kind);
	pk = begin(w, kind, 5);
	msgpack_pack_uint32(pk, t->pid);
	msgpack_pack_uint32(pk, t->ppid);
	msgpack_pack_uint32(pk, t->tid);
	msgpack_pack_uint32(pk, t->ptid);
	msgpack_pack_uint64(pk, t->time);
	return ms_writer_end(w);
}

int ms_task_unpack(const struct ms_record *rec, struct ms_task *t)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_FORK, MS_REC_EXIT) < 0 ||
	    get_u32(&c, "pid", &t->pid) < 0 ||
	    get_u32(&c, "ppid", &t->ppid) < 0 ||
	    get_u32(&c, "tid", &t->tid) < 0 ||
	    get_u32(&c, "ptid", &t->ptid) < 0 ||
	    get_u64(&c, "time", &t->time) < 0)
		return -1;
	return 0;
}

/* ---- lost ---- */

int ms_lost_pack(struct ms_writer *w, const struct ms_lost *l)
{
	msgpack_packer *pk = begin(w, MS_REC_LOST, 4);

	msgpack_pack_uint32(pk, l->source);
	msgpack_pack_uint64(pk, l->time);
	msgpack_pack_uint64(pk, l->id);
	msgpack_pack_uint64(pk, l->count);
	return ms_writer_end(w);
}

int ms_lost_unpack(const struct ms_record *rec, struct ms_lost *l)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_LOST, MS_REC_LOST) < 0 ||
	    get_u32(&c, "source", &l->source) < 0 ||
	    get_u64(&c, "time", &l->time) < 0 ||
	    get_u64(&c, "id", &l->id) < 0 ||
	    get_u64(&c, "count", &l->count) < 0)
		return -1;
	return 0;
}

/* ---- throttle ---- */

int ms_throttle_pack(struct ms_writer *w, const struct ms_throttle *t)
{
	msgpack_packer *pk = begin(w, MS_REC_THROTTLE, 3);

	msgpack_pack_uint64(pk, t->time);
	msgpack_pack_uint64(pk, t->id);
	pack_bool(pk, t->unthrottle);
	return ms_writer_end(w);
}

int ms_throttle_unpack(const struct ms_record *rec, struct ms_throttle *t)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_THROTTLE, MS_REC_THROTTLE) < 0 ||
	    get_u64(&c, "time", &t->time) < 0 ||
	    get_u64(&c, "id", &t->id) < 0 ||
	    get_bool(&c, "unthrottle", &t->unthrottle) < 0)
		return -1;
	return 0;
}

/* ---- module ---- */

int ms_module_pack(struct ms_writer *w, const struct ms_module *m)
{
	msgpack_packer *pk;

	if (m->build_id_len > MS_BUILD_ID_MAX)
		return too_many(MS_REC_MODULE, "build id bytes", m->build_id_len, MS_BUILD_ID_MAX);
	pk = begin(w, MS_REC_MODULE, 9);
	msgpack_pack_uint32(pk, m->id);
	msgpack_pack_uint32(pk, m->kind);
	pack_str(pk, &m->path);
	msgpack_pack_bin_with_body(pk, m->build_id, m->build_id_len);
	msgpack_pack_uint32(pk, m->dev_maj);
	msgpack_pack_uint32(pk, m->dev_min);
	msgpack_pack_uint64(pk, m->ino);
	msgpack_pack_uint64(pk, m->size);
	msgpack_pack_uint64(pk, m->mtime);
	return ms_writer_end(w);
}

int ms_module_unpack(const struct ms_record *rec, struct ms_module *m)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_MODULE, MS_REC_MODULE) < 0 ||
	    get_u32(&c, "id", &m->id) < 0 ||
	    get_u32(&c, "kind", &m->kind) < 0 ||
	    get_str(&c, "path", &m->path) < 0 ||
	    get_build_id(&c, "build_id", m->build_id, &m->build_id_len) < 0 ||
	    get_u32(&c, "dev_maj", &m->dev_maj) < 0 ||
	    get_u32(&c, "dev_min", &m->dev_min) < 0 ||
	    get_u64(&c, "ino", &m->ino) < 0 ||
	    get_u64(&c, "size", &m->size) < 0 ||
	    get_u64(&c, "mtime", &m->mtime) < 0)
		return -1;
	return 0;
}

/* ---- stack ---- */

/* A stack's frames as one flat array of (module, address, flags). */
static char *fp_frames(char *p, const struct ms_stack *s)
{
	p = fp_array(p, 3 * s->n_frames);
	for (uint32_t i = 0; i < s->n_frames; i++) {
		p = fp_uint(p, s->frames[i].module);
		p = fp_uint(p, s->frames[i].address);
		p = fp_uint(p, s->frames[i].flags);
	}
	return p;
}

static void pack_frames(msgpack_packer *pk, const struct ms_stack *s)
{
	msgpack_pack_array(pk, 3 * s->n_frames);
	for (uint32_t i = 0; i < s->n_frames; i++) {
		msgpack_pack_uint32(pk, s->frames[i].module);
		msgpack_pack_uint64(pk, s->frames[i].address);
		msgpack_pack_uint32(pk, s->frames[i].flags);
	}
}

int ms_stack_pack(struct ms_writer *w, const struct ms_stack *s)
{
	msgpack_packer *pk;

	if (s->n_frames > MS_FRAMES_MAX)
		return too_many(MS_REC_STACK, "frames", s->n_frames, MS_FRAMES_MAX);
	ms_writer_begin(w);
	{
		/* Fixed schema: packed in place (fastpack.h), 19 bytes a frame at most. */
		size_t max = 2 + 5 + 5 + 9 + 5 + 9 + 5 + 5 + (size_t)s->n_frames * 19;
		char *p0 = ms_writer_reserve(w, max), *p = p0;

		if (p) {
			*p++ = (char)(0x90 | 8);
			*p++ = (char)MS_REC_STACK;
			p = fp_uint(p, s->pid);
			p = fp_uint(p, s->tid);
			p = fp_uint(p, s->time);
			p = fp_uint(p, s->cpu);
			p = fp_uint(p, s->period);
			p = fp_uint(p, s->reason);
			p = fp_frames(p, s);
			ms_writer_advance(w, (size_t)(p - p0));
			return ms_writer_end(w);
		}
	}
	pk = ms_writer_packer(w);
	msgpack_pack_array(pk, 8);
	msgpack_pack_uint32(pk, MS_REC_STACK);
	msgpack_pack_uint32(pk, s->pid);
	msgpack_pack_uint32(pk, s->tid);
	msgpack_pack_uint64(pk, s->time);
	msgpack_pack_uint32(pk, s->cpu);
	msgpack_pack_uint64(pk, s->period);
	msgpack_pack_uint32(pk, s->reason);
	pack_frames(pk, s);
	return ms_writer_end(w);
}

/* bc_uint(), taking the unchecked path while 9 bytes are left. */
static inline int bc_uint_near_end(struct bcursor *c, uint64_t *v)
{
	if (c->end - c->p >= 9 && uint_fast(&c->p, v))
		return 1;
	return bc_uint(c, v);
}

/* One frame the fast path could not take: element by element, as bc_uint() sees them. */
static int __attribute__((noinline)) stack_frame_slow(struct bcursor *c,
						      struct ms_stack_frame *f, uint32_t i)
{
	uint64_t m = 0, a = 0, fl = 0;
	int r0, r1 = 0, r2 = 0;

	if ((r0 = bc_uint_near_end(c, &m)) > 0 && m <= UINT32_MAX &&
	    (r1 = bc_uint_near_end(c, &a)) > 0 &&
	    (r2 = bc_uint_near_end(c, &fl)) > 0 && fl <= UINT32_MAX) {
		f->module = m;
		f->address = a;
		f->flags = fl;
		return 0;
	}
	if (r0 < 0 || r1 < 0 || r2 < 0)
		return -1;
	return bad(&c->cur, "frames",
		   "frame %u is not three unsigned integers (module, address, flags)", i);
}

static int bc_frames(struct bcursor *cp, struct ms_stack *s);

static int stack_unpack_bytes(const struct ms_record *rec, struct ms_stack *s)
{
	struct bcursor c;

	if (bc_start(&c, rec, MS_REC_STACK) < 0 ||
	    bc_u32(&c, "pid", &s->pid) < 0 ||
	    bc_u32(&c, "tid", &s->tid) < 0 ||
	    bc_u64(&c, "time", &s->time) < 0 ||
	    bc_u32(&c, "cpu", &s->cpu) < 0 ||
	    bc_u64(&c, "period", &s->period) < 0 ||
	    bc_u32(&c, "reason", &s->reason) < 0)
		return -1;
	return bc_frames(&c, s);
}

/* The frames field: a flat array of (module, address, flags) triples. */
static int bc_frames(struct bcursor *cp, struct ms_stack *s)
{
	struct bcursor c = *cp;
	const unsigned char *p, *fast_end;
	uint32_t n;

	if (bc_array(&c, "frames", &n, 3 * MS_FRAMES_MAX) < 0)
		return -1;
	if (n % 3)
		return bad(&c.cur, "frames",
			   "has %u elements, not a multiple of 3 (module, address, flags)", n);
	s->n_frames = n / 3;
	p = c.p;
	/* Most frames: three plain unsigned integers, 27 bytes at most. */
	fast_end = c.end - p >= 27 ? c.end - 27 : p - 1;
	for (uint32_t i = 0; i < s->n_frames; i++) {
		struct ms_stack_frame *f = &s->frames[i];
		const unsigned char *q = p;
		uint64_t fm, fa, ff;

		if (q <= fast_end && uint_fast(&q, &fm) && uint_fast(&q, &fa) &&
		    uint_fast(&q, &ff) && fm <= UINT32_MAX && ff <= UINT32_MAX) {
			f->module = fm;
			f->address = fa;
			f->flags = ff;
			p = q;
			continue;
		}
		c.p = p;
		if (stack_frame_slow(&c, f, i) < 0)
			return -1;
		p = c.p;
	}
	return 0;
}

static int get_frames(struct cursor *cp, struct ms_stack *s);

int ms_stack_unpack(const struct ms_record *rec, struct ms_stack *s)
{
	struct cursor c;

	/* The bytes when there are any: a deferring reader built no object. */
	if (rec->bytes && rec->len)
		return stack_unpack_bytes(rec, s);
	if (start(&c, rec, MS_REC_STACK, MS_REC_STACK) < 0 ||
	    get_u32(&c, "pid", &s->pid) < 0 ||
	    get_u32(&c, "tid", &s->tid) < 0 ||
	    get_u64(&c, "time", &s->time) < 0 ||
	    get_u32(&c, "cpu", &s->cpu) < 0 ||
	    get_u64(&c, "period", &s->period) < 0 ||
	    get_u32(&c, "reason", &s->reason) < 0)
		return -1;
	return get_frames(&c, s);
}

static int get_frames(struct cursor *cp, struct ms_stack *s)
{
	struct cursor c = *cp;
	const msgpack_object *items;
	uint32_t n;

	if (get_array(&c, "frames", &items, &n, 3 * MS_FRAMES_MAX) < 0)
		return -1;
	if (n % 3)
		return bad(&c, "frames", "has %u elements, not a multiple of 3 "
			   "(module, address, flags)", n);
	s->n_frames = n / 3;
	for (uint32_t i = 0; i < s->n_frames; i++) {
		const msgpack_object *f = &items[3 * i];

		if (f[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER || f[0].via.u64 > UINT32_MAX ||
		    f[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
		    f[2].type != MSGPACK_OBJECT_POSITIVE_INTEGER || f[2].via.u64 > UINT32_MAX)
			return bad(&c, "frames", "frame %u is not three unsigned integers "
				   "(module, address, flags)", i);
		s->frames[i].module = f[0].via.u64;
		s->frames[i].address = f[1].via.u64;
		s->frames[i].flags = f[2].via.u64;
	}
	return 0;
}

/* ---- stack-def, stack-ref ---- */

int ms_stack_def_pack(struct ms_writer *w, uint32_t id, const struct ms_stack *s)
{
	msgpack_packer *pk;

	if (s->n_frames > MS_FRAMES_MAX)
		return too_many(MS_REC_STACK_DEF, "frames", s->n_frames, MS_FRAMES_MAX);
	ms_writer_begin(w);
	{
		size_t max = 2 + 5 + 5 + 5 + (size_t)s->n_frames * 19;
		char *p0 = ms_writer_reserve(w, max), *p = p0;

		if (p) {
			*p++ = (char)(0x90 | 4);
			*p++ = (char)MS_REC_STACK_DEF;
			p = fp_uint(p, id);
			p = fp_uint(p, s->reason);
			p = fp_frames(p, s);
			ms_writer_advance(w, (size_t)(p - p0));
			return ms_writer_end(w);
		}
	}
	pk = ms_writer_packer(w);
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint32(pk, MS_REC_STACK_DEF);
	msgpack_pack_uint32(pk, id);
	msgpack_pack_uint32(pk, s->reason);
	pack_frames(pk, s);
	return ms_writer_end(w);
}

int ms_stack_def_unpack(const struct ms_record *rec, uint32_t *id, struct ms_stack *s)
{
	s->pid = s->tid = s->cpu = 0;
	s->time = s->period = 0;
	if (rec->bytes && rec->len) {
		struct bcursor c;

		if (bc_start(&c, rec, MS_REC_STACK_DEF) < 0 ||
		    bc_u32(&c, "id", id) < 0 ||
		    bc_u32(&c, "reason", &s->reason) < 0)
			return -1;
		return bc_frames(&c, s);
	} else {
		struct cursor c;

		if (start(&c, rec, MS_REC_STACK_DEF, MS_REC_STACK_DEF) < 0 ||
		    get_u32(&c, "id", id) < 0 ||
		    get_u32(&c, "reason", &s->reason) < 0)
			return -1;
		return get_frames(&c, s);
	}
}

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
 * else (false) takes the checked path, which gives the verdict. ms-capture
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
	if (rec->bytes && rec->len && stack_ref_fast(rec, r))
		return 0;
	if (rec->bytes && rec->len) {
		struct bcursor c;

		if (bc_start(&c, rec, MS_REC_STACK_REF) < 0 ||
		    bc_u32(&c, "pid", &r->pid) < 0 ||
		    bc_u32(&c, "tid", &r->tid) < 0 ||
		    bc_u64(&c, "time", &r->time) < 0 ||
		    bc_u32(&c, "cpu", &r->cpu) < 0 ||
		    bc_u64(&c, "period", &r->period) < 0 ||
		    bc_u32(&c, "id", &r->id) < 0)
			return -1;
	} else {
		struct cursor c;

		if (start(&c, rec, MS_REC_STACK_REF, MS_REC_STACK_REF) < 0 ||
		    get_u32(&c, "pid", &r->pid) < 0 ||
		    get_u32(&c, "tid", &r->tid) < 0 ||
		    get_u64(&c, "time", &r->time) < 0 ||
		    get_u32(&c, "cpu", &r->cpu) < 0 ||
		    get_u64(&c, "period", &r->period) < 0 ||
		    get_u32(&c, "id", &r->id) < 0)
			return -1;
	}
	return 0;
}

/* ---- frame ---- */

int ms_frame_pack(struct ms_writer *w, const struct ms_frame *f)
{
	msgpack_packer *pk;

	if (f->n_lines > MS_FRAME_LINES_MAX)
		return too_many(MS_REC_FRAME, "lines", f->n_lines, MS_FRAME_LINES_MAX);
	pk = begin(w, MS_REC_FRAME, 6);
	msgpack_pack_uint32(pk, f->module);
	msgpack_pack_uint64(pk, f->address);
	pack_str(pk, &f->name);
	msgpack_pack_uint64(pk, f->symbol_start);
	msgpack_pack_uint32(pk, f->reason);
	msgpack_pack_array(pk, f->n_lines);
	for (uint32_t i = 0; i < f->n_lines; i++) {
		const struct ms_frame_line *l = &f->lines[i];

		msgpack_pack_array(pk, 5);
		pack_str(pk, &l->function);
		pack_str(pk, &l->system_name);
		pack_str(pk, &l->file);
		msgpack_pack_uint32(pk, l->line);
		msgpack_pack_uint32(pk, l->function_line);
	}
	return ms_writer_end(w);
}

/* One entry of a frame's inline chain: [function, system_name, file, line, function_line]. */
static int get_frame_line(struct cursor *c, const msgpack_object *o, uint32_t i,
			  struct ms_frame_line *l)
{
	const msgpack_object *e;

	/* Later minor versions may add fields to an entry: extra ones are ignored. */
	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 5)
		return bad(c, "lines", "entry %u is not an array of 5 fields "
			   "(function, system_name, file, line, function_line)", i);
	e = o->via.array.ptr;
	if (e[0].type != MSGPACK_OBJECT_STR || e[1].type != MSGPACK_OBJECT_STR ||
	    e[2].type != MSGPACK_OBJECT_STR)
		return bad(c, "lines", "entry %u: function, system_name and file must be "
			   "strings", i);
	if (e[3].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[3].via.u64 > UINT32_MAX ||
	    e[4].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[4].via.u64 > UINT32_MAX)
		return bad(c, "lines", "entry %u: line and function_line must be unsigned "
			   "32-bit integers", i);
	l->function = (struct ms_str){ e[0].via.str.ptr, e[0].via.str.size };
	l->system_name = (struct ms_str){ e[1].via.str.ptr, e[1].via.str.size };
	l->file = (struct ms_str){ e[2].via.str.ptr, e[2].via.str.size };
	l->line = (uint32_t)e[3].via.u64;
	l->function_line = (uint32_t)e[4].via.u64;
	return 0;
}

int ms_frame_unpack(const struct ms_record *rec, struct ms_frame *f)
{
	struct cursor c;

	if (start(&c, rec, MS_REC_FRAME, MS_REC_FRAME) < 0 ||
	    get_u32(&c, "module", &f->module) < 0 ||
	    get_u64(&c, "address", &f->address) < 0 ||
	    get_str(&c, "name", &f->name) < 0 ||
	    get_u64(&c, "symbol_start", &f->symbol_start) < 0 ||
	    get_u32(&c, "reason", &f->reason) < 0)
		return -1;
	f->n_lines = 0;
	/* lines came with minor version 1: a record without them has none. */
	if (c.i < c.n) {
		const msgpack_object *items;
		uint32_t n;

		if (get_array(&c, "lines", &items, &n, MS_FRAME_LINES_MAX) < 0)
			return -1;
		for (uint32_t i = 0; i < n; i++)
			if (get_frame_line(&c, &items[i], i, &f->lines[i]) < 0)
				return -1;
		f->n_lines = n;
	}
	return 0;
}

/* ---- counted problems ---- */

#define OTHER_PROBLEMS "other-problems"

void ms_problems_init(struct ms_problems *p, const char *stage)
{
	memset(p, 0, sizeof(*p));
	p->stage = stage;
}

void ms_problems_add(struct ms_problems *p, const char *code, const char *detail_fmt, ...)
{
	const char *orig = code;
	uint32_t i;
	bool fold = false;
	va_list ap;
	char *detail;
	int off = 0;

	for (i = 0; i < p->n; i++) {
		if (!strcmp(p->entries[i].code, code)) {
			p->entries[i].count++;
			return;
		}
	}
	/* The last slot is kept for the codes that find no slot of their own. */
	if (p->n >= MS_PROBLEM_CODES_MAX - 1) {
		fold = true;
		if (p->n == MS_PROBLEM_CODES_MAX) {
			p->entries[MS_PROBLEM_CODES_MAX - 1].count++;
			return;
		}
		code = OTHER_PROBLEMS;
	}
	/* Formatting happens once per code: later occurrences only count. */
	i = p->n++;
	snprintf(p->entries[i].code, sizeof(p->entries[i].code), "%s", code);
	p->entries[i].count = 1;
	detail = p->entries[i].detail;
	if (fold) {
		off = snprintf(detail, sizeof(p->entries[i].detail), "%s: ", orig);
		if (off < 0 || (size_t)off >= sizeof(p->entries[i].detail))
			off = 0;
	}
	va_start(ap, detail_fmt);
	vsnprintf(detail + off, sizeof(p->entries[i].detail) - off, detail_fmt, ap);
	va_end(ap);
}

uint64_t ms_problems_total(const struct ms_problems *p)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < p->n; i++)
		total += p->entries[i].count;
	return total;
}

int ms_problems_write(struct ms_writer *w, const struct ms_problems *p)
{
	for (uint32_t i = 0; i < p->n; i++) {
		struct ms_problem rec = {
			.stage = { p->stage, strlen(p->stage) },
			.code = { p->entries[i].code, strlen(p->entries[i].code) },
			.count = p->entries[i].count,
			.detail = { p->entries[i].detail, strlen(p->entries[i].detail) },
		};

		if (ms_problem_pack(w, &rec) < 0)
			return -1;
	}
	return 0;
}

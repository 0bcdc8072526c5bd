/*
 * Fuzz target of the stream reader (stream/stream.h) and the record
 * decoders (stream/records.h): any bytes, read as a stream in each of the
 * ways the stages read one, every record unpacked by every path that can
 * unpack it.
 *
 * The ways (each a run over the whole input):
 *  - a mapped file (a memfd, the stream ending on a page boundary so that
 *    a read past it faults), record after record;
 *  - the same, samples unpacked while framed, the next sample peeked
 *    before each read (as ms-unwind) and runs of stack references taken
 *    whole (as ms-symbolize);
 *  - both again from a socket that hands the bytes over in chunks of a
 *    size the input chooses, so that records arrive in pieces;
 *  - a mapped file read with a record limit the input chooses;
 *  - the ms-decode stage (ms_decode_stage()), whose fast path and
 *    checked path must write the same bytes, a stream that reads back
 *    whole (with a trailer exactly when the stage succeeded).
 * The first four must see the same header, the same records (kind,
 * offset, bytes) and the same end; msgpack-c, a framing of its own, must
 * read each record as one whole object of the same length; and each
 * record must unpack to the same values, or fail, by every path: its
 * kind's unpack (the fast paths of SAMPLE and the stack records), the
 * generic codec over its field table alone (stream/schema.h), both on an
 * exact copy of the record (so that a read past the record is a read past
 * the allocation), the sample framed by the reader and the one it peeked.
 * What unpacks holds to records.h: counts within their MAX, strings and
 * bins inside the record. Anything else aborts.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <msgpack.h>

#include "perf/decode.h"
#include "stream/protocols.h"
#include "stream/records.h"
#include "stream/schema.h"
#include "stream/stream.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz-io.h"
#include "util/bits.h"
#include "util/error.h"

#define INPUT_MAX (1u << 20)

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "fuzz-stream: check failed at line %d: %s\n", \
				__LINE__, #cond);                                 \
			abort();                                                  \
		}                                                                 \
	} while (0)

enum {
	RUN_PROTOCOLS = 1 << 0,	/* samples framed, peeks, runs (stream/protocols.h) */
	RUN_CHUNKS = 1 << 1,	/* from a socket, in chunks */
	RUN_LIMIT = 1 << 2,	/* with a record limit of its own: not compared */
};

/* What a run saw: compared between runs. */
struct trace {
	int opened;
	struct ms_header header;
	uint64_t n, h;		/* records, and a hash of them and of what they unpacked to */
	int end;		/* the last ms_reader_next() result */
	uint64_t next_offset;
	size_t limit;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_bytes(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t f = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		f = (f ^ b[i]) * 0x100000001b3ull;
	return mix(mix(h, len), f);
}

/* [p, p + n) lies within [lo, lo + len). */
static bool within(const void *p, size_t n, const void *lo, size_t len)
{
	const char *a = p, *b = lo;

	return a >= b && (size_t)(a - b) <= len && n <= len - (size_t)(a - b);
}

/* ---- msgpack-c's objects ---- */

/* Every string, bin and ext of o lies within [lo, lo + len). */
static void check_object_within(const msgpack_object *o, const char *lo, size_t len)
{
	switch (o->type) {
	case MSGPACK_OBJECT_STR:
		CHECK(within(o->via.str.ptr, o->via.str.size, lo, len));
		break;
	case MSGPACK_OBJECT_BIN:
		CHECK(within(o->via.bin.ptr, o->via.bin.size, lo, len));
		break;
	case MSGPACK_OBJECT_EXT:
		CHECK(within(o->via.ext.ptr, o->via.ext.size, lo, len));
		break;
	case MSGPACK_OBJECT_ARRAY:
		for (uint32_t i = 0; i < o->via.array.size; i++)
			check_object_within(&o->via.array.ptr[i], lo, len);
		break;
	case MSGPACK_OBJECT_MAP:
		for (uint32_t i = 0; i < o->via.map.size; i++) {
			check_object_within(&o->via.map.ptr[i].key, lo, len);
			check_object_within(&o->via.map.ptr[i].val, lo, len);
		}
		break;
	default:
		break;
	}
}

/* ---- unpacking every kind, by every path ---- */

/* Where the record's bytes are for one path: strings must lie within. */
struct base {
	const char *p;
	size_t len;
};

static uint64_t sum_str(uint64_t h, const struct ms_str *s, const struct base *b)
{
	CHECK(!s->len || within(s->ptr, s->len, b->p, b->len));
	return mix_bytes(h, s->len ? s->ptr : "", s->len);
}

static uint64_t sum_sample(const struct ms_sample *s, const struct base *b)
{
	uint64_t h = 0x5a;

	CHECK(s->n_kchain <= MS_CHAIN_MAX && s->n_uchain <= MS_CHAIN_MAX);
	CHECK(s->n_regs <= MS_REGS_MAX && s->stack_len <= MS_STACK_MAX);
	/* no registers at all (abi 0) whatever the mask; else one per bit */
	if (s->regs_abi || s->n_regs)
		CHECK(s->n_regs == ms_popcount64(s->regs_mask));
	h = mix(mix(mix(h, s->pid), s->tid), s->time);
	h = mix(mix(mix(h, s->cpu), s->period), s->ip);
	h = mix(mix(h, s->cpumode), s->regs_abi);
	h = mix(h, s->regs_mask);
	h = mix_bytes(h, s->kchain, 8 * (size_t)s->n_kchain);
	h = mix_bytes(h, s->uchain, 8 * (size_t)s->n_uchain);
	h = mix_bytes(h, s->regs, 8 * (size_t)s->n_regs);
	h = mix(h, s->stack_in_file);
	if (s->stack_in_file) {
		CHECK(!s->stack);
		return mix(mix(h, s->stack_offset), s->stack_len);
	}
	CHECK(!s->stack_len || within(s->stack, s->stack_len, b->p, b->len));
	return mix_bytes(h, s->stack_len ? (const void *)s->stack : "", s->stack_len);
}

static uint64_t sum_stack(const struct ms_stack *s)
{
	uint64_t h = 0x31;

	CHECK(s->n_frames <= MS_FRAMES_MAX);
	h = mix(mix(mix(h, s->pid), s->tid), s->time);
	h = mix(mix(mix(h, s->cpu), s->period), s->reason);
	for (uint32_t i = 0; i < s->n_frames; i++)
		h = mix(mix(mix(h, s->frames[i].module), s->frames[i].address), s->frames[i].flags);
	return mix(h, s->n_frames);
}

static uint64_t sum_ref(const struct ms_stack_ref *r)
{
	return mix(mix(mix(mix(mix(mix(0x33, r->pid), r->tid), r->time), r->cpu), r->period),
		   r->id);
}

/* Scratch for the unpackers: large (a sample is 13 KiB), so static. */
static struct {
	struct ms_sample sample;
	struct ms_stack stack;
	struct ms_attr attr;
	struct ms_target target;
	struct ms_frame frame;
} u;

/*
 * One kind's unpack: 0 for a refusal, else a hash of what it unpacked to
 * (pointers by content, checked within b).
 */
static uint64_t by_kind(const struct ms_record *rec, const struct base *b)
{
	uint64_t h = mix(0x0b, rec->kind);

	switch (rec->kind) {
	case MS_REC_PROBLEM: {
		struct ms_problem p;

		if (ms_problem_unpack(rec, &p) < 0)
			return 0;
		h = sum_str(sum_str(h, &p.stage, b), &p.code, b);
		return sum_str(mix(h, p.count), &p.detail, b);
	}
	case MS_REC_INFO: {
		struct ms_info i;

		if (ms_info_unpack(rec, &i) < 0)
			return 0;
		h = mix(sum_str(h, &i.key, b), i.is_text);
		return i.is_text ? sum_str(h, &i.text, b) : mix(h, i.number);
	}
	case MS_REC_ATTR: {
		struct ms_attr *a = &u.attr;

		if (ms_attr_unpack(rec, a) < 0)
			return 0;
		CHECK(a->n_ids <= MS_ATTR_IDS_MAX);
		h = mix(mix(mix(mix(h, a->type), a->config), a->sample_type), a->read_format);
		h = mix(mix(mix(h, a->sample_regs_user), a->sample_stack_user), a->flags);
		return mix_bytes(h, a->ids, 8 * (size_t)a->n_ids);
	}
	case MS_REC_RAW: {
		struct ms_raw r;

		if (ms_raw_unpack(rec, &r) < 0)
			return 0;
		CHECK(!r.len || within(r.data, r.len, b->p, b->len));
		return mix_bytes(mix(h, r.cpu), r.len ? (const void *)r.data : "", r.len);
	}
	case MS_REC_TARGET: {
		struct ms_target *t = &u.target;

		if (ms_target_unpack(rec, t) < 0)
			return 0;
		CHECK(t->argc <= MS_ARGV_MAX);
		h = mix(mix(h, t->pid), t->launched);
		for (uint32_t i = 0; i < t->argc; i++)
			h = sum_str(h, &t->argv[i], b);
		return mix(h, t->argc);
	}
	case MS_REC_TARGET_EXIT: {
		struct ms_target_exit t;

		if (ms_target_exit_unpack(rec, &t) < 0)
			return 0;
		return mix(mix(mix(h, t.pid), t.wait_status), t.exit_code);
	}
	case MS_REC_VDSO: {
		struct ms_vdso v;

		if (ms_vdso_unpack(rec, &v) < 0)
			return 0;
		CHECK(v.len >= 1 && v.len <= MS_VDSO_MAX && within(v.image, v.len, b->p, b->len));
		return mix_bytes(h, v.image, v.len);
	}
	case MS_REC_SAMPLE:
		if (ms_sample_unpack(rec, &u.sample) < 0)
			return 0;
		return mix(h, sum_sample(&u.sample, b));
	case MS_REC_MMAP: {
		struct ms_mmap m;

		if (ms_mmap_unpack(rec, &m) < 0)
			return 0;
		CHECK(m.build_id_len <= MS_BUILD_ID_MAX);
		h = mix(mix(mix(mix(h, m.pid), m.tid), m.time), m.start);
		h = mix(mix(mix(mix(h, m.len), m.pgoff), m.maj), m.min);
		h = mix(mix(mix(mix(h, m.ino), m.ino_generation), m.prot), m.flags);
		h = mix(mix(h, m.cpumode), m.synthesized);
		return mix_bytes(sum_str(h, &m.filename, b), m.build_id, m.build_id_len);
	}
	case MS_REC_COMM: {
		struct ms_comm c;

		if (ms_comm_unpack(rec, &c) < 0)
			return 0;
		h = mix(mix(mix(mix(mix(h, c.pid), c.tid), c.time), c.exec), c.synthesized);
		return sum_str(h, &c.comm, b);
	}
	case MS_REC_FORK:
	case MS_REC_EXIT: {
		struct ms_task t;

		if (ms_task_unpack(rec, &t) < 0)
			return 0;
		return mix(mix(mix(mix(mix(h, t.pid), t.ppid), t.tid), t.ptid), t.time);
	}
	case MS_REC_LOST: {
		struct ms_lost l;

		if (ms_lost_unpack(rec, &l) < 0)
			return 0;
		return mix(mix(mix(mix(h, l.source), l.time), l.id), l.count);
	}
	case MS_REC_THROTTLE: {
		struct ms_throttle t;

		if (ms_throttle_unpack(rec, &t) < 0)
			return 0;
		return mix(mix(mix(h, t.time), t.id), t.unthrottle);
	}
	case MS_REC_STACK_FILE: {
		struct ms_stack_file f;

		if (ms_stack_file_unpack(rec, &f) < 0)
			return 0;
		h = mix(mix(mix(mix(sum_str(h, &f.path, b), f.dev_maj), f.dev_min), f.ino), f.size);
		return mix(h, f.mtime);
	}
	case MS_REC_MODULE: {
		struct ms_module m;

		if (ms_module_unpack(rec, &m) < 0)
			return 0;
		CHECK(m.build_id_len <= MS_BUILD_ID_MAX);
		h = mix(mix(sum_str(mix(mix(h, m.id), m.kind), &m.path, b), m.dev_maj), m.dev_min);
		h = mix(mix(mix(h, m.ino), m.size), m.mtime);
		return mix_bytes(h, m.build_id, m.build_id_len);
	}
	case MS_REC_STACK:
		if (ms_stack_unpack(rec, &u.stack) < 0)
			return 0;
		return mix(h, sum_stack(&u.stack));
	case MS_REC_STACK_DEF: {
		uint32_t id;

		if (ms_stack_def_unpack(rec, &id, &u.stack) < 0)
			return 0;
		CHECK(!u.stack.pid && !u.stack.tid && !u.stack.time && !u.stack.cpu &&
		      !u.stack.period);
		return mix(mix(h, id), sum_stack(&u.stack));
	}
	case MS_REC_STACK_REF: {
		struct ms_stack_ref r;

		if (ms_stack_ref_unpack(rec, &r) < 0)
			return 0;
		return mix(h, sum_ref(&r));
	}
	case MS_REC_FRAME: {
		struct ms_frame *f = &u.frame;

		if (ms_frame_unpack(rec, f) < 0)
			return 0;
		CHECK(f->n_lines <= MS_FRAME_LINES_MAX);
		h = sum_str(mix(mix(h, f->module), f->address), &f->name, b);
		h = mix(mix(h, f->symbol_start), f->reason);
		for (uint32_t i = 0; i < f->n_lines; i++) {
			const struct ms_frame_line *l = &f->lines[i];

			h = sum_str(sum_str(sum_str(h, &l->function, b), &l->system_name, b),
				    &l->file, b);
			h = mix(mix(h, l->line), l->function_line);
		}
		return mix(h, f->n_lines);
	}
	default:
		/* ROUND, and kinds this build does not know: nothing to unpack */
		return h;
	}
}

/*
 * The generic codec alone, for the kinds whose unpack has a fast path in
 * front of it (see by_kind()); else 1.
 */
static uint64_t by_generic(const struct ms_record *rec, const struct base *b)
{
	uint64_t h = mix(0x0b, rec->kind);

	switch (rec->kind) {
	case MS_REC_SAMPLE:
		if (ms_schema_unpack(&ms_sample_schema, 0, rec, &u.sample) < 0)
			return 0;
		return mix(h, sum_sample(&u.sample, b));
	case MS_REC_STACK:
		if (ms_schema_unpack(&ms_stack_schema, 0, rec, &u.stack) < 0)
			return 0;
		return mix(h, sum_stack(&u.stack));
	case MS_REC_STACK_REF: {
		struct ms_stack_ref r;

		if (ms_schema_unpack(&ms_stack_ref_schema, 0, rec, &r) < 0)
			return 0;
		return mix(h, sum_ref(&r));
	}
	default:
		return 1;
	}
}

/*
 * One record, by every path. framed is the sample the reader unpacked
 * while framing it, or NULL. Returns the verdict's hash, the same for
 * every path.
 */
static uint64_t visit(const struct ms_record *rec, const struct ms_sample *framed)
{
	struct ms_record c = *rec;
	struct base rb = { rec->bytes, rec->len }, cb;
	msgpack_unpacked mp;
	size_t off = 0;
	char *copy;
	uint64_t v_generic, v, fh;

	CHECK(rec->len >= 1 && rec->len <= MS_RECORD_MAX * 2);
	copy = malloc(rec->len);
	CHECK(copy);
	memcpy(copy, rec->bytes, rec->len);
	cb = (struct base){ copy, rec->len };

	/* msgpack-c reads the record as one whole object */
	msgpack_unpacked_init(&mp);
	CHECK(msgpack_unpack_next(&mp, copy, rec->len, &off) == MSGPACK_UNPACK_SUCCESS);
	CHECK(off == rec->len);
	CHECK(mp.data.type == MSGPACK_OBJECT_ARRAY && mp.data.via.array.size >= 1);
	CHECK(mp.data.via.array.ptr[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	      mp.data.via.array.ptr[0].via.u64 == rec->kind);
	check_object_within(&mp.data, copy, rec->len);

	/* each kind's unpack and the generic codec, on the exact copy */
	c.bytes = copy;
	v = by_kind(&c, &cb);
	v_generic = by_generic(&c, &cb);
	if (v_generic != 1)
		CHECK(v == v_generic);
	/* and in the reader's buffer */
	CHECK(by_kind(rec, &rb) == v);
	/* the reader's framed sample is what the decoders make of it */
	if (framed) {
		CHECK(rec->kind == MS_REC_SAMPLE && v != 0);
		CHECK(mix(mix(0x0b, rec->kind), sum_sample(framed, &rb)) == v);
	}
	if (rec->kind == MS_REC_SAMPLE) {
		size_t n = ms_sample_frame(copy, rec->len, &u.sample);

		if (n) {
			CHECK(n == rec->len && v != 0);
			fh = mix(mix(0x0b, rec->kind), sum_sample(&u.sample, &cb));
			CHECK(fh == v);
		}
	}
	msgpack_unpacked_destroy(&mp);
	free(copy);
	return v;
}

static void note(struct trace *t, const struct ms_record *rec, uint64_t verdict)
{
	/* records follow each other, numbered from 0 */
	CHECK(rec->index == t->n);
	if (t->n)
		CHECK(rec->offset == t->next_offset);
	CHECK(rec->len <= t->limit);
	t->next_offset = rec->offset + rec->len;
	t->h = mix(mix(mix(mix_bytes(t->h, rec->bytes, rec->len), rec->kind), rec->offset),
		   verdict);
	t->n++;
}

/* A run of stack references the reader handed out whole, split and visited. */
static void visit_run(struct trace *t, const char *bytes, size_t len, uint64_t n,
		      uint64_t offset, uint64_t index)
{
	size_t pos = 0;

	CHECK(n > 0 && len > 0 && len <= MS_RECORD_MAX && len <= t->limit);
	for (uint64_t i = 0; i < n; i++) {
		struct ms_record rec = { .kind = MS_REC_STACK_REF };
		msgpack_unpacked mp;
		size_t off = pos;

		msgpack_unpacked_init(&mp);
		CHECK(msgpack_unpack_next(&mp, bytes, len, &off) == MSGPACK_UNPACK_SUCCESS);
		msgpack_unpacked_destroy(&mp);
		rec.bytes = bytes + pos;
		rec.len = off - pos;
		rec.offset = offset + pos;
		rec.index = index + i;
		note(t, &rec, visit(&rec, NULL));
		pos = off;
	}
	CHECK(pos == len);
}

/* ---- the inputs ---- */

/* The bytes in a memfd, after zeros that end them on a page boundary. */
static int mapped_input(const uint8_t *data, size_t size)
{
	static const uint8_t zeros[4096];
	int fd = memfd_create("fuzz-stream", MFD_CLOEXEC);
	off_t pad = (off_t)((4096 - size % 4096) % 4096);

	CHECK(fd >= 0);
	if (pad)
		CHECK(pwrite(fd, zeros, (size_t)pad, 0) == pad);
	if (size)
		CHECK(pwrite(fd, data, size, pad) == (ssize_t)size);
	CHECK(lseek(fd, pad, SEEK_SET) == pad);
	return fd;
}

static struct ms_sample main_sample, ahead[2];

static void run(int fd, unsigned how, size_t limit, struct trace *t)
{
	struct ms_reader *r = ms_reader_open(fd, "fuzz");
	bool fast = how & RUN_PROTOCOLS;
	struct ms_record rec;
	int ret, again;

	memset(t, 0, sizeof(*t));
	t->limit = MS_RECORD_MAX;
	if (!r) {
		t->end = 2;
		return;
	}
	t->opened = 1;
	t->header = *ms_reader_header(r);
	CHECK(t->header.n_producers >= 1 && t->header.n_producers <= MS_PRODUCERS_MAX);
	for (uint32_t i = 0; i < t->header.n_producers; i++)
		CHECK(memchr(t->header.producers[i].name, 0, MS_NAME_MAX) &&
		      memchr(t->header.producers[i].version, 0, MS_NAME_MAX));
	if (limit) {
		ms_reader_set_limit(r, limit);
		t->limit = limit < 16 ? 16 : limit;
	}
	if (fast)
		ms_reader_unpack_samples(r, &main_sample);
	for (;;) {
		const struct ms_sample *peeked = NULL, *framed;
		const char *run_bytes;
		size_t run_len;
		uint64_t n, offset = ms_reader_offset(r), index = ms_reader_records(r);

		if (fast && (n = ms_reader_stack_ref_run(r, &run_bytes, &run_len))) {
			CHECK(ms_reader_records(r) == index + n);
			CHECK(ms_reader_offset(r) == offset + run_len);
			visit_run(t, run_bytes, run_len, n, offset, index);
			continue;
		}
		if (fast) {
			/* not the buffer of the sample in use (ms-unwind's two, in turn) */
			struct ms_sample *next = t->n % 2 ? &ahead[0] : &ahead[1];

			peeked = ms_reader_peek_sample(r, next);
			CHECK(!peeked || peeked == next);
			/* a second peek is the same */
			CHECK(ms_reader_peek_sample(r, next) == peeked);
		}
		ret = ms_reader_next(r, &rec);
		t->end = ret;
		if (ret != MS_READ_RECORD) {
			CHECK(!peeked);
			break;
		}
		CHECK(rec.offset == offset && rec.index == index);
		framed = fast ? ms_reader_sample(r, &rec) : NULL;
		if (peeked)
			CHECK(rec.kind == MS_REC_SAMPLE && framed == peeked);
		note(t, &rec, visit(&rec, framed));
	}
	/* later calls say the same, without reading */
	again = ms_reader_next(r, &rec);
	CHECK(again == (t->end == MS_READ_END ? MS_READ_END : MS_READ_ERROR));
	if (t->end == MS_READ_END)
		CHECK(ms_reader_trailer(r)->records == t->n && ms_reader_records(r) == t->n);
	ms_reader_free(r);
}

static void check_same(const struct trace *a, const struct trace *b)
{
	CHECK(a->opened == b->opened && a->end == b->end);
	CHECK(a->n == b->n && a->h == b->h);
	if (!a->opened)
		return;
	CHECK(a->header.major == b->header.major && a->header.minor == b->header.minor);
	CHECK(a->header.n_producers == b->header.n_producers);
	CHECK(!memcmp(a->header.producers, b->header.producers,
		      a->header.n_producers * sizeof(a->header.producers[0])));
}

/* ---- the ms-decode stage over the stream ---- */

static int stage(int fd, off_t at, bool checked, uint8_t **bytes, size_t *len)
{
	struct ms_decode_options opt = {
		.version = "fuzz", .stack_bytes = MS_STACK_BYTES_COPY, .checked_only = checked,
	};
	struct ms_fuzz_drain d;
	int out = ms_fuzz_drain_start(&d), code;

	CHECK(lseek(fd, at, SEEK_SET) == at);
	code = ms_decode_stage(fd, "fuzz", out, "output", &opt);
	*bytes = ms_fuzz_drain_end(&d, out, len);
	return code;
}

static void check_stage(int fd, off_t at)
{
	uint8_t *fast, *checked;
	size_t fast_len, checked_len;
	int code = stage(fd, at, false, &fast, &fast_len), ofd;
	struct trace t;

	CHECK(stage(fd, at, true, &checked, &checked_len) == code);
	CHECK(fast_len == checked_len && !memcmp(fast, checked, fast_len));
	/* what it wrote reads back: nothing (it refused the header), or a stream */
	if (code == MS_EXIT_OK || fast_len) {
		ofd = mapped_input(fast, fast_len);
		run(ofd, RUN_PROTOCOLS, 0, &t);
		close(ofd);
		CHECK(t.opened);
		CHECK(t.end == (code == MS_EXIT_OK ? MS_READ_END : MS_READ_TRUNCATED));
	}
	free(fast);
	free(checked);
}

static uint64_t input_hash(const uint8_t *data, size_t size)
{
	return mix_bytes(0, data, size);
}

int ms_fuzz_stream(const uint8_t *data, size_t size)
{
	static const size_t chunks[] = { 1, 3, 16, 100, 1000, 4096, 70000 };
	static const size_t limits[] = { 1, 16, 64, 1000, 65536, MS_RECORD_MAX - 1,
					 2 * MS_RECORD_MAX };
	struct trace base, t;
	uint64_t h;
	size_t chunk, min_chunk, limit;
	struct ms_fuzz_feed f;
	off_t pad;
	int fd;

	if (size > INPUT_MAX)
		return 0;
	h = input_hash(data, size);

	fd = mapped_input(data, size);
	run(fd, 0, 0, &base);
	run(fd, RUN_PROTOCOLS, 0, &t);
	check_same(&base, &t);

	chunk = chunks[h % (sizeof(chunks) / sizeof(chunks[0]))];
	min_chunk = size / 1024 + 1;
	if (chunk < min_chunk)
		chunk = min_chunk;
	for (unsigned how = RUN_CHUNKS; how <= (RUN_CHUNKS | RUN_PROTOCOLS); how++) {
		int sfd = ms_fuzz_feed_start(&f, data, size, chunk);

		run(sfd, how, 0, &t);
		ms_fuzz_feed_end(&f, sfd);
		check_same(&base, &t);
	}

	/*
	 * A limit of its own: the records it takes are within it. (From the
	 * socket, a limit above the buffer's size grows it; a record longer
	 * than the room then left may lose bytes of a message, which only
	 * changes what is read.)
	 */
	pad = (off_t)((4096 - size % 4096) % 4096);
	CHECK(lseek(fd, pad, SEEK_SET) == pad);
	limit = limits[(h >> 8) % (sizeof(limits) / sizeof(limits[0]))];
	if ((h >> 17) & 1) {
		int sfd = ms_fuzz_feed_start(&f, data, size, chunk);

		run(sfd, RUN_LIMIT | RUN_CHUNKS | ((h >> 16) & 1 ? RUN_PROTOCOLS : 0), limit, &t);
		ms_fuzz_feed_end(&f, sfd);
	} else {
		run(fd, RUN_LIMIT | ((h >> 16) & 1 ? RUN_PROTOCOLS : 0), limit, &t);
	}
	if (base.opened)
		check_stage(fd, pad);
	close(fd);
	return 0;
}

MS_FUZZ_TARGET("fuzz-stream", ms_fuzz_stream)

/*
 * The stream reader. Input is read in large blocks into one buffer. Each
 * record is framed by our own scan of the msgpack type bytes, which checks
 * every length a header claims against what the record limit leaves, and
 * the nesting depth. A record that passed the scan and is wholly in the
 * buffer is handed out as its bytes, which each kind's decoder reads
 * (stream/schema.c; no object model is built: msgpack-c's unpacker was a
 * third of a filter stage's time). A mapped input is scanned a
 * few records ahead of the one handed out (scout()), so that the bytes a
 * stage reads first are in the cache when it gets there.
 */
#include "stream/stream.h"
#include "stream/compress.h"
#include "stream/cursor.h"
#include "stream/fastpack.h"
#include "stream/protocols.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/mapguard.h"
#include "util/prefault.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define READER_BUF_MIN (256u * 1024u)

/*
 * A mapped input is framed a few records ahead of the one handed out
 * (scout()): each upcoming record's scan is kept for frame(), so that every
 * record is still scanned once, and the cache lines its decoder reads first
 * are prefetched: its first SCOUT_HEAD bytes (a raw sample's fixed fields,
 * callchain and registers) and its last 8 (the dyn_size after a raw
 * sample's stack copy). Records lie at distances that vary with their
 * stacks, so only a scan finds the next one. Without it, ms-decode waited
 * longer for those bytes to come from memory than it took to decode them.
 */
#define SCOUT_AHEAD 4u
#define SCOUT_HEAD 320u
#define CACHE_LINE 64u

enum reader_state {
	READER_OPEN,
	READER_END,
	READER_FAILED,
};

struct ms_reader {
	int fd;
	char *name;
	size_t limit;
	char *buf;
	size_t cap;
	size_t start, end;	/* unconsumed bytes are buf[start, end) */
	uint64_t buf_offset;	/* stream offset of buf[0] */
	bool eof;
	enum reader_state state;
	uint64_t records;	/* records returned, not counting header */
	struct ms_trailer trailer;
	struct ms_header header;
	char last_producer[2 * MS_NAME_MAX + 1];
	struct ms_writer *flush_first;
	void *map;		/* a regular file's mapping (buf points into it), or NULL */
	size_t map_len;
	struct ms_prefault *prefault;	/* faulting map in */
	struct ms_lz4_in *lz4;		/* a compressed input (stream/compress.h), or NULL */
	int guard;			/* the map's SIGBUS guard (util/mapguard.h), or -1 */
	bool cut_said;
	uint32_t fast_kind;	/* the last framed record's kind when a fast path framed it */
	struct ms_sample *sample;	/* ms_reader_unpack_samples()'s, or NULL */
	const char *sample_at;	/* the last framed record's bytes when sample_in is its */
	struct ms_sample *sample_in;	/* that record's sample: sample, or a peek's */
	/* The next record, framed by ms_reader_peek_sample() into *peek_in. */
	const char *peek_at;
	size_t peek_len;
	struct ms_sample *peek_in;
	/*
	 * Mapped input: records scanned ahead, in order, the first at
	 * buf[scouted[sc_first].start]; the scout goes on at buf[sc_next]
	 * unless it stopped at a record that did not scan (frame() reports it
	 * when it gets there) or at the end.
	 */
	struct scouted {
		size_t start, len;
		uint32_t fast_kind;	/* framed by a fast path, or 0 */
	} scouted[SCOUT_AHEAD];
	unsigned sc_first, sc_n;
	size_t sc_next;
	bool sc_stopped;
};

/* Outcome of scanning for one record. */
enum scan_result {
	SCAN_DONE,
	SCAN_MORE,	/* the bytes so far are a valid prefix; read more */
	SCAN_TOO_BIG,	/* a header claims more than the limit leaves */
	SCAN_TOO_DEEP,
	SCAN_BAD_BYTE,	/* 0xc1, never used by msgpack */
};

struct scan {
	size_t len;		/* SCAN_DONE: the record's length */
	size_t at;		/* errors: offset in the record of the bad header */
	int type;		/* SCAN_TOO_BIG: the claiming type byte */
	uint64_t claim;		/* SCAN_TOO_BIG: what the header claimed */
	const char *what;	/* "elements", "bytes", NULL: just too long */
};

/* Length of an integer by its type byte; 0 for other types. */
static const unsigned char int_len[256] = {
	[0x00 ... 0x7f] = 1, [0xe0 ... 0xff] = 1,
	[0xcc] = 2, [0xcd] = 3, [0xce] = 5, [0xcf] = 9,
	[0xd0] = 2, [0xd1] = 3, [0xd2] = 5, [0xd3] = 9,
};

/*
 * The common records in one pass: a fixarray (p[0]) of integers, strings,
 * bins and arrays of integers (a RAW record, most of what ms-collect
 * writes; a SAMPLE with its chains and [offset, length]; a STACK), wholly
 * within the first end bytes. True with s filled as scan_record() would
 * fill it: a record accepted here lies within the limit and the input, so
 * its general loop accepts it too, with the same length and elements.
 * False for anything else, at any point: the caller scans again.
 */
static bool scan_flat(const unsigned char *p, size_t end, unsigned max_depth, struct scan *s)
{
	unsigned n = p[0] & 0x0f, i = 0;
	size_t pos = 1, hdr;
	/* Below stop, 9 bytes (the longest integer) are within end. */
	size_t stop = end >= 9 ? end - 9 : 0;

	for (;;) {
		unsigned char t;
		uint64_t body = 0;
		size_t w = 0;

		/* Runs of integers in a tight loop: the checks below could not fail. */
		while (i < n && pos < stop && (hdr = int_len[p[pos]])) {
			pos += hdr;
			i++;
		}
		if (i == n)
			break;
		if (pos >= end)
			return false;
		t = p[pos];
		if ((hdr = int_len[t])) {
			/* an integer: hdr is all of it */
		} else if ((t & 0xf0) == 0x90 || t == 0xdc) {
			/* an array of integers, one level down */
			uint64_t elems = t & 0x0f, k = 0;

			if (max_depth < 2)
				return false;
			if (t == 0xdc) {
				if (3 > end - pos)
					return false;
				elems = fp_get_be(p + pos + 1, 2);
				pos += 3;
			} else {
				pos++;
			}
			while (k < elems && pos < stop && (hdr = int_len[p[pos]])) {
				pos += hdr;
				k++;
			}
			for (; k < elems; k++) {
				if (pos >= end || !(hdr = int_len[p[pos]]) || hdr > end - pos)
					return false;
				pos += hdr;
			}
			i++;
			continue;
		} else if (t >= 0xa0 && t <= 0xbf) {
			hdr = 1;
			body = t & 0x1f;
		} else if (t == 0xc4 || t == 0xd9) {
			w = 1;
		} else if (t == 0xc5 || t == 0xda) {
			w = 2;
		} else if (t == 0xc6 || t == 0xdb) {
			w = 4;
		} else {
			return false;
		}
		if (w) {
			hdr = 1 + w;
			if (hdr > end - pos)
				return false;
			body = fp_get_be(p + pos + 1, (int)w);
		}
		if (hdr > end - pos || body > end - pos - hdr)
			return false;
		pos += hdr + body;
		i++;
	}
	s->len = pos;
	s->what = NULL;
	return true;
}

/*
 * Scan one msgpack object at p (avail bytes present) that may be at most
 * limit bytes long. Every claimed length is checked against the bytes the
 * limit leaves before anything waits for those bytes, and every pending
 * element needs at least one byte, so a header can never promise more than
 * the record could hold.
 */
static enum scan_result scan_record(const unsigned char *p, size_t avail, size_t limit,
				    unsigned max_depth, struct scan *s)
{
	uint64_t pending[MS_RECORD_DEPTH + 1];	/* elements left per level */
	uint64_t outstanding = 1;		/* elements left at all levels */
	unsigned depth = 0;
	size_t pos = 0;

	if (max_depth > MS_RECORD_DEPTH)
		max_depth = MS_RECORD_DEPTH;
	/*
	 * Fast path: see scan_flat(). Anything else, or anything wrong, is
	 * scanned below from the start, so that what a bad record reports does
	 * not change.
	 */
	if (p[0] >= 0x91 && p[0] <= 0x9f && max_depth >= 1 &&
	    scan_flat(p, limit < avail ? limit : avail, max_depth, s))
		return SCAN_DONE;
	pending[0] = 1;
	s->what = NULL;
	for (;;) {
		struct ms_mp_head head;
		unsigned char t;
		size_t hdr;		/* header bytes */
		uint64_t body = 0;	/* payload bytes after the header */
		uint64_t elems = 0;	/* child elements (maps: keys + values) */
		bool container;

		/*
		 * Runs of integers (a stack's frames, a sample's chains) in a
		 * tight loop while 9 bytes, the longest, are within both the
		 * limit and the input: the checks below could not fail.
		 */
		if (pending[depth]) {
			size_t end = limit < avail ? limit : avail;
			size_t stop = end >= 9 ? end - 9 : 0;
			uint64_t left = pending[depth], k = 0;
			unsigned char l;

			while (k < left && pos <= stop && (l = int_len[p[pos]])) {
				pos += l;
				k++;
			}
			pending[depth] -= k;
			outstanding -= k;
		}
		while (pending[depth] == 0) {
			if (depth == 0) {
				s->len = pos;
				return SCAN_DONE;
			}
			depth--;
		}
		if (pos >= limit || pos >= avail) {
			s->at = pos;
			return pos >= limit ? SCAN_TOO_BIG : SCAN_MORE;
		}
		t = p[pos];
		/* Fast path: fixints, most of a record's elements. */
		if (t <= 0x7f || t >= 0xe0) {
			pending[depth]--;
			outstanding--;
			pos++;
			continue;
		}
		s->at = pos;
		s->type = t;
		if (!ms_mp_head(t, &head))
			return SCAN_BAD_BYTE;
		hdr = head.hdr;
		container = head.container;
		if (pos + hdr > limit)
			return SCAN_TOO_BIG;
		if (pos + hdr > avail)
			return SCAN_MORE;
		if (container)
			elems = ms_mp_count(p + pos, &head);
		else
			body = ms_mp_count(p + pos, &head);
		pending[depth]--;
		outstanding--;
		pos += hdr;
		if (container) {
			/* Each element takes at least one byte. */
			if (outstanding + elems > limit - pos) {
				s->claim = elems;
				s->what = "elements";
				return SCAN_TOO_BIG;
			}
			if (depth + 1 > max_depth)
				return SCAN_TOO_DEEP;
			outstanding += elems;
			pending[++depth] = elems;
			continue;
		}
		if (body > limit - pos) {
			s->at = pos - hdr;
			s->claim = body;
			s->what = "bytes";
			return SCAN_TOO_BIG;
		}
		if (body > avail - pos) {
			/* Not present yet; the claim is within the limit. */
			return SCAN_MORE;
		}
		pos += body;
	}
}

static const char *type_name(unsigned char t)
{
	if (t <= 0x7f || t >= 0xe0 || (t >= 0xcc && t <= 0xd3))
		return "an integer";
	if ((t >= 0xa0 && t <= 0xbf) || (t >= 0xd9 && t <= 0xdb))
		return "a string";
	if ((t >= 0x80 && t <= 0x8f) || t == 0xde || t == 0xdf)
		return "a map";
	if ((t >= 0x90 && t <= 0x9f) || t == 0xdc || t == 0xdd)
		return "an array";
	if (t >= 0xc4 && t <= 0xc6)
		return "a bin";
	if (t == 0xc0)
		return "nil";
	if (t == 0xc2 || t == 0xc3)
		return "a boolean";
	if (t == 0xca || t == 0xcb)
		return "a float";
	if ((t >= 0xc7 && t <= 0xc9) || (t >= 0xd4 && t <= 0xd8))
		return "an ext";
	return "an unused type byte";
}

static bool is_array_byte(unsigned char t)
{
	return (t >= 0x90 && t <= 0x9f) || t == 0xdc || t == 0xdd;
}

/*
 * Whether the mapped file was cut short under us (another process
 * truncated it: util/mapguard.h): then what was read past the cut is
 * zeros, and the input ends there, said once.
 */
static bool cut_short(struct ms_reader *r)
{
	size_t at;

	if (r->guard < 0 || !ms_mapguard_cut(r->guard, &at))
		return false;
	if (!r->cut_said)
		ms_error("'%s' was cut short while being read: it ends before byte %zu now "
			 "(another process truncated or rewrote it); read a copy that nothing "
			 "writes to", r->name, at);
	r->cut_said = true;
	return true;
}

static int fail(struct ms_reader *r)
{
	r->state = READER_FAILED;
	return MS_READ_ERROR;
}

/*
 * Read more input, keeping buf[start, end). Before a read that would block,
 * flush the writer the stage registered so that downstream is never left
 * waiting for output we hold while we wait for input.
 */
static int fill(struct ms_reader *r)
{
	ssize_t n;

	if (r->map) {
		/* The whole file is in buf already. */
		r->eof = true;
		return 0;
	}
	if (r->start > 0) {
		r->peek_at = NULL;	/* (never while the peeked record is whole) */
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->buf_offset += r->start;
		r->end -= r->start;
		r->start = 0;
	}
	if (r->flush_first) {
		struct pollfd p = { .fd = r->fd, .events = POLLIN };

		if (poll(&p, 1, 0) == 0)
			ms_writer_flush(r->flush_first);
	}
	if (r->lz4) {
		bool whole;

		n = ms_lz4_in_read(r->lz4, r->fd, r->buf + r->end, r->cap - r->end, &whole);
		if (n < 0)
			return -1;
		if (n == 0)
			r->eof = true;
		r->end += (size_t)n;
		return 0;
	}
	for (;;) {
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (n > 0) {
			r->end += n;
			return 0;
		}
		if (n == 0) {
			r->eof = true;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd p = { .fd = r->fd, .events = POLLIN };

			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return ms_error_errno("cannot wait for '%s'", r->name);
			continue;
		}
		return ms_error_errno("cannot read '%s' at byte %" PRIu64, r->name,
				      r->buf_offset + r->end);
	}
}

/*
 * The kind of a framed record (element 0, an unsigned integer of 32 bits),
 * or -1 after a message.
 */
static int64_t record_kind(struct ms_reader *r, const unsigned char *p, size_t len,
			   uint64_t off)
{
	struct ms_cursor c;
	uint32_t n;
	uint64_t k;

	ms_cur_init(&c, p, len);
	if (ms_cur_array(&c, &n) <= 0 || n == 0 || ms_cur_uint(&c, &k) <= 0 || k > UINT32_MAX) {
		ms_error("'%s': the record at byte %" PRIu64 " does not start with a record "
			 "kind (an unsigned integer)", r->name, off);
		return -1;
	}
	return (int64_t)k;
}

/* Prefetch the lines of buf[from, to), within the mapping. */
static void prefetch_lines(const struct ms_reader *r, size_t from, size_t to)
{
	uintptr_t a = (uintptr_t)(r->buf + from) & ~(uintptr_t)(CACHE_LINE - 1);
	uintptr_t e = (uintptr_t)(r->buf + (to < r->end ? to : r->end));

	for (; a < e; a += CACHE_LINE)
		__builtin_prefetch((const void *)a, 0, 3);
}

/*
 * A STACK_REF as ms-unwind writes it, a fixarray of its kind and six
 * integers: its length (what scan_record() finds), or 0 for anything else
 * (the general scan then decides; the values are ms_stack_ref_unpack()'s
 * to judge). Most of what ms-symbolize reads: the general scan took about
 * 130 instructions a record.
 */
static inline size_t stack_ref_len(const unsigned char *p, size_t avail)
{
	size_t pos = 2, l;

	/* (Within 2 + 6 * 9 bytes, the reads below cannot pass avail.) */
	if (avail < 2 + 6 * 9 || p[0] != 0x97 || p[1] != MS_REC_STACK_REF)
		return 0;
	for (int i = 0; i < 6; i++, pos += l)
		if (!(l = int_len[p[pos]]))
			return 0;
	return pos;
}

/*
 * A RAW record as ms-collect writes it, [11, cpu, bin]: its length, or 0
 * for anything else (the general scan then decides). ms-decode reads one
 * per kernel record; the general scan cost about 110 instructions each.
 */
static inline size_t raw_len(const unsigned char *p, size_t avail)
{
	static const unsigned char uint_len[4] = { 2, 3, 5, 9 };
	size_t pos = 2, w;
	uint64_t len;

	if (avail < 2 + 9 + 5 || p[0] != 0x93 || p[1] != MS_REC_RAW)
		return 0;
	if (p[pos] <= 0x7f)
		pos++;
	else if (p[pos] >= 0xcc && p[pos] <= 0xce)
		pos += uint_len[p[pos] - 0xcc];
	else
		return 0;
	/* (Within 2 + 9 + 5 bytes, the header below is in avail.) */
	if (p[pos] < 0xc4 || p[pos] > 0xc6)
		return 0;
	w = (size_t)1 << (p[pos] - 0xc4);
	len = fp_get_be(p + pos + 1, (int)w);
	pos += 1 + w;
	return len <= avail - pos ? pos + (size_t)len : 0;
}

/*
 * The length of the record at p when a fast path frames it (a RAW or a
 * STACK_REF), with *kind; else 0.
 */
static inline size_t fast_len(const struct ms_reader *r, const unsigned char *p, size_t avail,
			      uint32_t *kind)
{
	size_t l;

	if ((l = raw_len(p, avail)))
		*kind = MS_REC_RAW;
	else if ((l = stack_ref_len(p, avail)))
		*kind = MS_REC_STACK_REF;
	return l <= r->limit ? l : 0;
}

/*
 * Scan the records after the last scouted one, up to SCOUT_AHEAD of them,
 * exactly as frame() would (the mapping is the whole input: what a scan
 * may read ends at r->end), keep what it found and prefetch their first
 * and last lines. A record that does not scan stops the scout: frame()
 * scans it again when it gets there and reports what is wrong, as without
 * a scout.
 */
static void scout(struct ms_reader *r)
{
	while (r->sc_n < SCOUT_AHEAD && !r->sc_stopped) {
		size_t at = r->sc_next;
		const unsigned char *p = (const unsigned char *)r->buf + at;
		struct scouted *e;
		struct scan s;
		uint32_t kind = 0;

		if (at < r->end && (s.len = fast_len(r, p, r->end - at, &kind))) {
			/* framed */
		} else if (at >= r->end || !is_array_byte(p[0]) ||
			   scan_record(p, r->end - at, r->limit, MS_RECORD_DEPTH, &s) != SCAN_DONE) {
			r->sc_stopped = true;
			break;
		}
		e = &r->scouted[(r->sc_first + r->sc_n++) % SCOUT_AHEAD];
		e->start = at;
		e->len = s.len;
		e->fast_kind = kind;
		r->sc_next = at + s.len;
		prefetch_lines(r, at, at + (s.len < SCOUT_HEAD ? s.len : SCOUT_HEAD));
		/* its last 8 bytes, and the next record's first, which the next scan reads */
		prefetch_lines(r, r->sc_next - (s.len < 8 ? s.len : 8), r->sc_next + 1);
	}
}

/*
 * Mapped input: the scan of the record at buf[start] if the scout made it,
 * then the scout goes on; else the scout restarts after this record, once
 * frame() scanned it.
 */
static bool scouted_scan(struct ms_reader *r, struct scan *s, uint32_t *fast_kind)
{
	struct scouted *e = &r->scouted[r->sc_first];

	if (!r->sc_n || e->start != r->start) {
		r->sc_n = 0;
		return false;
	}
	s->len = e->len;
	*fast_kind = e->fast_kind;
	r->sc_first = (r->sc_first + 1) % SCOUT_AHEAD;
	r->sc_n--;
	scout(r);
	return true;
}

static void scout_from(struct ms_reader *r, size_t next)
{
	r->sc_first = 0;
	r->sc_n = 0;
	r->sc_next = next;
	r->sc_stopped = false;
	scout(r);
}

enum frame_result {
	FRAME_OK,
	FRAME_EOF,		/* clean EOF between records */
	FRAME_TRUNCATED,	/* EOF inside a record; message printed */
	FRAME_ERROR,		/* message printed */
};

/*
 * Find the next record in the input and frame it. On FRAME_OK
 * the record is buf[start, start + *len) and start is not yet advanced.
 */
static enum frame_result frame(struct ms_reader *r, size_t *len)
{
	const unsigned char *p;
	struct scan s;

	r->sample_at = NULL;
	r->fast_kind = 0;
	for (;;) {
		size_t avail = r->end - r->start;
		uint64_t off = r->buf_offset + r->start;
		enum scan_result res;

		p = (const unsigned char *)r->buf + r->start;
		if (avail == 0) {
			if (r->eof)
				return FRAME_EOF;
			if (fill(r) < 0)
				return FRAME_ERROR;
			continue;
		}
		if (r->peek_at == (const char *)p) {
			struct scan ignored;
			uint32_t ignored_kind;

			/* Framed and unpacked already; the scout moves past it. */
			s.len = r->peek_len;
			r->fast_kind = MS_REC_SAMPLE;
			r->sample_at = (const char *)p;
			r->sample_in = r->peek_in;
			r->peek_at = NULL;
			if (r->map && !scouted_scan(r, &ignored, &ignored_kind))
				scout_from(r, r->start + s.len);
			break;
		}
		if (r->map && scouted_scan(r, &s, &r->fast_kind))
			break;
		if (r->sample &&
		    (s.len = ms_sample_frame((const char *)p, avail < r->limit ? avail : r->limit,
					     r->sample))) {
			r->fast_kind = MS_REC_SAMPLE;
			r->sample_at = (const char *)p;
			r->sample_in = r->sample;
			if (r->map)
				scout_from(r, r->start + s.len);
			break;
		}
		if ((s.len = fast_len(r, p, avail, &r->fast_kind))) {
			if (r->map)
				scout_from(r, r->start + s.len);
			break;
		}
		if (cut_short(r))
			return FRAME_TRUNCATED;
		if (!is_array_byte(p[0])) {
			ms_error("'%s': the record at byte %" PRIu64 " is %s (0x%02x), "
				 "not an array: the input is not a microscope stream or is corrupt",
				 r->name, off, type_name(p[0]), p[0]);
			return FRAME_ERROR;
		}
		res = scan_record(p, avail, r->limit, MS_RECORD_DEPTH, &s);
		if (res != SCAN_DONE && res != SCAN_MORE && cut_short(r))
			return FRAME_TRUNCATED;
		switch (res) {
		case SCAN_DONE:
			break;
		case SCAN_MORE:
			if (r->eof && cut_short(r))
				return FRAME_TRUNCATED;
			if (r->eof) {
				ms_error("'%s': stream cut short inside the record at byte %" PRIu64
					 " after %" PRIu64 " records: the producer (%s) did not finish",
					 r->name, off, r->records, r->last_producer);
				return FRAME_TRUNCATED;
			}
			if (fill(r) < 0)
				return FRAME_ERROR;
			continue;
		case SCAN_TOO_BIG:
			if (!s.what)
				ms_error("'%s': the record at byte %" PRIu64 " exceeds the limit "
					 "of %zu bytes", r->name, off, r->limit);
			else
				ms_error("'%s': the record at byte %" PRIu64 " exceeds the limit "
					 "of %zu bytes (%s header at byte %" PRIu64 " claims %"
					 PRIu64 " %s)", r->name, off, r->limit, type_name(s.type),
					 off + s.at, s.claim, s.what);
			return FRAME_ERROR;
		case SCAN_TOO_DEEP:
			ms_error("'%s': the record at byte %" PRIu64 " nests deeper than %d levels "
				 "(at byte %" PRIu64 ")", r->name, off, MS_RECORD_DEPTH, off + s.at);
			return FRAME_ERROR;
		case SCAN_BAD_BYTE:
			ms_error("'%s': invalid msgpack type byte 0xc1 at byte %" PRIu64
				 " in the record at byte %" PRIu64, r->name, off + s.at, off);
			return FRAME_ERROR;
		}
		if (r->map)
			scout_from(r, r->start + s.len);
		break;
	}
	*len = s.len;
	return FRAME_OK;
}

/* A producer's name or version: a string under MS_NAME_MAX bytes without NULs. */
static bool copy_name(char *dst, struct ms_cursor *c)
{
	const unsigned char *ptr;
	uint32_t len;

	if (ms_cur_body(c, false, &ptr, &len) <= 0 || len >= MS_NAME_MAX || memchr(ptr, 0, len))
		return false;
	memcpy(dst, ptr, len);
	dst[len] = '\0';
	return true;
}

/* [0, magic, major, minor, [[name, version, ...], ...], ...] */
static int parse_header(struct ms_reader *r, const unsigned char *p, size_t len)
{
	struct ms_header *h = &r->header;
	size_t magic_len = strlen(MS_STREAM_MAGIC);
	const unsigned char *magic;
	struct ms_cursor c;
	uint64_t kind, major, minor;
	uint32_t n, n_prods, mlen;
	int res;

	ms_cur_init(&c, p, len);
	if (ms_cur_array(&c, &n) <= 0 || n < 5 || ms_cur_uint(&c, &kind) <= 0 ||
	    kind != MS_REC_HEADER || ms_cur_body(&c, false, &magic, &mlen) <= 0 ||
	    mlen != magic_len || memcmp(magic, MS_STREAM_MAGIC, magic_len))
		return ms_error("'%s' is not a microscope stream: it does not start with a "
				"\"%s\" header", r->name, MS_STREAM_MAGIC);
	if (ms_cur_uint(&c, &major) <= 0 || major > UINT32_MAX ||
	    ms_cur_uint(&c, &minor) <= 0 || minor > UINT32_MAX)
		return ms_error("'%s': malformed header: the version is not two unsigned integers",
				r->name);
	h->major = (uint32_t)major;
	h->minor = (uint32_t)minor;
	if (h->major > MS_STREAM_MAJOR)
		return ms_error("'%s' is a version %u.%u stream, newer than this build reads "
				"(%d.%d): upgrade microscope", r->name, h->major, h->minor,
				MS_STREAM_MAJOR, MS_STREAM_MINOR);
	if (h->major != MS_STREAM_MAJOR)
		return ms_error("'%s' is a version %u.%u stream; this build reads only major "
				"version %d", r->name, h->major, h->minor, MS_STREAM_MAJOR);
	if (ms_cur_array(&c, &n_prods) <= 0)
		return ms_error("'%s': malformed header: the producers are not an array", r->name);
	if (n_prods == 0 || n_prods > MS_PRODUCERS_MAX)
		return ms_error("'%s': malformed header: %u producers (expected 1 to %d)",
				r->name, n_prods, MS_PRODUCERS_MAX);
	h->n_producers = n_prods;
	for (uint32_t i = 0; i < h->n_producers; i++) {
		res = ms_cur_array(&c, &n) > 0 && n >= 2 &&
		      copy_name(h->producers[i].name, &c) &&
		      copy_name(h->producers[i].version, &c);
		/* later minor versions may say more of a producer */
		for (uint32_t k = 2; res && k < n; k++)
			res = ms_cur_skip(&c) > 0;
		if (!res)
			return ms_error("'%s': malformed header: producer %u is not "
					"[name, version] (strings under %d bytes)",
					r->name, i, MS_NAME_MAX);
	}
	snprintf(r->last_producer, sizeof(r->last_producer), "%s %s",
		 h->producers[h->n_producers - 1].name,
		 h->producers[h->n_producers - 1].version);
	return 0;
}

/*
 * A regular file (a saved stream: `ms-decode run.msr`) is mapped from the
 * fd's position to its end rather than read: the copy into buf was the
 * largest single cost of a stage reading a big saved stream. Everything
 * else is as with reads (limits, truncation); the fd's position is left
 * where it was. A file that cannot be mapped is read.
 */
static void map_file(struct ms_reader *r)
{
	struct stat st;
	off_t pos;
	void *m;

	if (fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX / 2 ||
	    (pos = lseek(r->fd, 0, SEEK_CUR)) < 0 || pos >= st.st_size)
		return;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (m == MAP_FAILED)
		return;
	/* Faulted in ahead of the reader (a fault per 64 KiB cost a quarter of it). */
	/* Guarded before anything reads it, the prefault thread included. */
	r->guard = ms_mapguard_add(m, (size_t)st.st_size);
	r->prefault = ms_prefault_start(m, (size_t)st.st_size);
	r->map = m;
	r->map_len = (size_t)st.st_size;
	r->buf = (char *)m + pos;
	r->cap = r->end = (size_t)(st.st_size - pos);
}

static void unmap_file(struct ms_reader *r)
{
	ms_prefault_wait(r->prefault);
	r->prefault = NULL;
	ms_mapguard_remove(r->guard);
	r->guard = -1;
	munmap(r->map, r->map_len);
	r->map = NULL;
	r->buf = NULL;
	r->cap = r->end = 0;
}

/*
 * The input's first bytes, read: an LZ4 frame (ms-collect --lz4) is
 * decompressed from then on (stream/compress.h). 0, or -1 after a message.
 */
static int sniff_lz4(struct ms_reader *r)
{
	while (r->end < 4 && !r->eof)
		if (fill(r) < 0)
			return -1;
	if (!ms_lz4_is_frame(r->buf, r->end))
		return 0;
	if (!(r->lz4 = ms_lz4_in_new(r->name, r->buf, r->end)))
		return -1;
	r->end = 0;
	r->eof = false;
	return 0;
}

const char *ms_reader_map(const struct ms_reader *r, size_t *len)
{
	*len = r->map ? r->map_len : 0;
	return r->map;
}

struct ms_reader *ms_reader_open(int fd, const char *name)
{
	struct ms_reader *r = calloc(1, sizeof(*r));
	size_t len;
	enum frame_result fr;

	if (!r || !(r->name = strdup(name))) {
		ms_error("out of memory opening '%s'", name);
		goto fail;
	}
	r->fd = fd;
	r->guard = -1;
	ms_pipe_grow(fd);
	/*
	 * The buffer only when not mapped: one given and freed at once cost
	 * two system calls, and malloc then kept chunks of its size off mmap.
	 */
	map_file(r);
	if (r->map && ms_lz4_is_frame(r->buf, r->end))
		unmap_file(r);		/* compressed: read and decompressed instead */
	if (!r->map) {
		if (!(r->buf = malloc(READER_BUF_MIN))) {
			ms_error("out of memory opening '%s'", name);
			goto fail;
		}
		r->cap = READER_BUF_MIN;
		ms_populate(r->buf, r->cap);	/* reads fill it whole */
		if (sniff_lz4(r) < 0)
			goto fail;
	}
	r->limit = MS_RECORD_MAX;
	snprintf(r->last_producer, sizeof(r->last_producer), "unknown");

	fr = frame(r, &len);
	if (fr == FRAME_EOF) {
		/* The front command's first stage failed and said why (stream.h). */
		if (r->lz4)
			ms_error("'%s' is a compressed stream cut short before its header: "
				 "the producer did not finish", name);
		else if (!getenv(MS_QUIET_EMPTY_INPUT))
			ms_error("'%s' is empty: no stream header (did the producer fail?)", name);
		ms_reader_free(r);
		errno = ENODATA;
		return NULL;
	}
	if (fr != FRAME_OK || cut_short(r))
		goto fail;
	if (parse_header(r, (const unsigned char *)r->buf + r->start, len) < 0)
		goto fail;
	r->start += len;
	r->state = READER_OPEN;
	return r;
fail:
	ms_reader_free(r);
	return NULL;
}

void ms_reader_set_limit(struct ms_reader *r, size_t max_record)
{
	if (max_record < 16)
		max_record = 16;
	if (max_record > r->cap && !r->map) {
		char *nbuf = realloc(r->buf, max_record);

		if (!nbuf) {
			ms_warn("out of memory raising the record limit of '%s'; "
				"keeping %zu bytes", r->name, r->limit);
			return;
		}
		r->buf = nbuf;
		r->cap = max_record;
	}
	r->limit = max_record;
	/* what the scout found was judged by the old limit */
	r->sc_n = 0;
}

void ms_reader_flush_before_read(struct ms_reader *r, struct ms_writer *w)
{
	r->flush_first = w;
}

const struct ms_header *ms_reader_header(const struct ms_reader *r)
{
	return &r->header;
}

/* After the trailer: the input must end here. */
static int expect_eof(struct ms_reader *r)
{
	while (r->end == r->start && !r->eof) {
		if (fill(r) < 0)
			return -1;
	}
	if (r->end > r->start)
		return ms_error("'%s': unexpected data at byte %" PRIu64 " after the trailer",
				r->name, r->buf_offset + r->start);
	return 0;
}

/* [1, records, complete, ...] */
static int parse_trailer(struct ms_reader *r, const unsigned char *p, size_t len, uint64_t off)
{
	struct ms_cursor c;
	uint32_t n;
	uint64_t kind;

	ms_cur_init(&c, p, len);
	if (ms_cur_array(&c, &n) <= 0 || n < 3 || ms_cur_uint(&c, &kind) <= 0 ||
	    ms_cur_uint(&c, &r->trailer.records) <= 0 ||
	    ms_cur_bool(&c, &r->trailer.complete) <= 0)
		return ms_error("'%s': malformed trailer at byte %" PRIu64
				": expected [1, records, complete]", r->name, off);
	if (r->trailer.records != r->records)
		return ms_error("'%s': the trailer at byte %" PRIu64 " counts %" PRIu64
				" records but %" PRIu64 " came before it: records were lost or added",
				r->name, off, r->trailer.records, r->records);
	return 0;
}

int ms_reader_next(struct ms_reader *r, struct ms_record *rec)
{
	const unsigned char *p;
	size_t len;
	uint64_t off;
	int64_t kind;

	if (r->state == READER_END)
		return MS_READ_END;
	if (r->state == READER_FAILED)
		return MS_READ_ERROR;

	switch (frame(r, &len)) {
	case FRAME_OK:
		/* Nothing read past a cut is handed out (util/mapguard.h). */
		if (cut_short(r)) {
			r->state = READER_FAILED;
			return MS_READ_TRUNCATED;
		}
		break;
	case FRAME_EOF:
		if (cut_short(r)) {
			r->state = READER_FAILED;
			return MS_READ_TRUNCATED;
		}
		ms_error("'%s': stream cut short after %" PRIu64 " records (byte %" PRIu64
			 "): the producer (%s) did not finish",
			 r->name, r->records, r->buf_offset + r->start, r->last_producer);
		r->state = READER_FAILED;
		return MS_READ_TRUNCATED;
	case FRAME_TRUNCATED:
		r->state = READER_FAILED;
		return MS_READ_TRUNCATED;
	case FRAME_ERROR:
		return fail(r);
	}
	off = r->buf_offset + r->start;
	p = (const unsigned char *)r->buf + r->start;
	kind = r->fast_kind ? r->fast_kind : record_kind(r, p, len, off);
	if (kind < 0)
		return fail(r);
	if (kind == MS_REC_HEADER) {
		ms_error("'%s': a second header at byte %" PRIu64 " (streams cannot be "
			 "concatenated)", r->name, off);
		return fail(r);
	}
	if (kind == MS_REC_TRAILER) {
		r->start += len;
		if (parse_trailer(r, p, len, off) < 0 || expect_eof(r) < 0)
			return fail(r);
		r->state = READER_END;
		return MS_READ_END;
	}
	rec->kind = kind;
	rec->bytes = r->buf + r->start;
	rec->len = len;
	rec->offset = off;
	rec->index = r->records++;
	r->start += len;
	return MS_READ_RECORD;
}

void ms_reader_unpack_samples(struct ms_reader *r, struct ms_sample *s)
{
	r->sample = s;
	r->sample_at = NULL;
	r->peek_at = NULL;
}

struct ms_sample *ms_reader_sample(const struct ms_reader *r, const struct ms_record *rec)
{
	return r->sample_at && rec->bytes == r->sample_at && r->state == READER_OPEN ?
	       r->sample_in : NULL;
}

const struct ms_sample *ms_reader_peek_sample(struct ms_reader *r, struct ms_sample *ahead)
{
	const char *p = r->buf + r->start;
	size_t avail = r->end - r->start, n;

	if (!r->sample || r->state != READER_OPEN || !avail)
		return NULL;
	if (r->peek_at == p)
		return r->peek_in;
	n = ms_sample_frame(p, avail < r->limit ? avail : r->limit, ahead);
	if (!n)
		return NULL;
	r->peek_at = p;
	r->peek_len = n;
	r->peek_in = ahead;
	return ahead;
}

uint64_t ms_reader_stack_ref_run(struct ms_reader *r, const char **bytes, size_t *len)
{
	const unsigned char *p = (const unsigned char *)r->buf + r->start, *q = p;
	size_t avail = r->end - r->start, max = r->limit < MS_RECORD_MAX ? r->limit : MS_RECORD_MAX;
	uint64_t n = 0;
	size_t l;

	if (r->state != READER_OPEN)
		return 0;
	while ((l = stack_ref_len(q, avail)) && (size_t)(q - p) + l <= max) {
		q += l;
		avail -= l;
		n++;
	}
	if (!n)
		return 0;
	*bytes = (const char *)p;
	*len = (size_t)(q - p);
	r->start += *len;
	r->records += n;
	r->peek_at = NULL;
	return n;
}

const struct ms_trailer *ms_reader_trailer(const struct ms_reader *r)
{
	return r->state == READER_END ? &r->trailer : NULL;
}

const char *ms_reader_name(const struct ms_reader *r)
{
	return r->name;
}

uint64_t ms_reader_offset(const struct ms_reader *r)
{
	return r->buf_offset + r->start;
}

uint64_t ms_reader_records(const struct ms_reader *r)
{
	return r->records;
}

bool ms_reader_cut_short(struct ms_reader *r)
{
	return cut_short(r);
}

void ms_reader_free(struct ms_reader *r)
{
	if (!r)
		return;
	ms_prefault_wait(r->prefault);
	if (r->map) {
		ms_mapguard_remove(r->guard);
		munmap(r->map, r->map_len);
	} else {
		free(r->buf);
	}
	ms_lz4_in_free(r->lz4);
	free(r->name);
	free(r);
}

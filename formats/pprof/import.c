/*
 * pprof import: a gzip-compressed (or plain) perftools.profiles.Profile
 * into a capture, through the capture builder.
 *
 * The file is hostile. In order:
 *  1. zlib inflates it, refusing a cut-short or corrupt stream and more
 *     than MS_IMPORT_PPROF_MAX bytes of output;
 *  2. a walk over the protobuf wire format checks every tag, wire type,
 *     varint and length against profile.proto (the descriptors protoc-c
 *     made), down to the innermost message, and notes where each
 *     top-level row starts so later messages can give a byte position;
 *  3. protobuf-c decodes it: every field but the samples whole, each
 *     sample alone into a reused arena when it is needed (decoded whole,
 *     the samples took six times their bytes);
 *  4. every reference is checked: string indexes inside the table, ids
 *     non-zero and unique, every location, mapping and function a row
 *     names defined, one value per sample type, counts not negative and
 *     their sum at most UINT64_MAX (no reference can cycle: a sample
 *     lists locations, a location names a mapping and functions; a
 *     repeated id, which would make a reference ambiguous, is refused);
 *  5. only then is the capture built: each pprof sample is one sample
 *     row whose count is its number of samples and whose period is its
 *     time (capture.h), never a row per sample, so memory follows the
 *     file's size and not the counts it claims (a sample of value 2^62
 *     is one row). Its labels give its thread: threads.c says which
 *     labels real producers write and how they become (pid, tid) and a
 *     name.
 * A failure at any step prints one message with the position and
 * returns NULL.
 */
#include "config.h"

#include "formats/formats.h"
#include "formats/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "capture/builder.h"
#include "formats/pprof/threads.h"
#include "pprof/profile.pb-c.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/progress.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;

/* Profile's repeated fields whose rows get positions. */
enum { F_SAMPLE_TYPE = 1, F_SAMPLE = 2, F_MAPPING = 3, F_LOCATION = 4, F_FUNCTION = 5,
       F_STRING_TABLE = 6, F_ROWS = 7 };

/* Facts of the input the capture cannot hold, for the one loss line. */
enum {
	LOSS_COLUMNS = 1 << 0, LOSS_LABELS = 1 << 1, LOSS_BUILD_IDS = 1 << 2,
	LOSS_OFFSETS = 1 << 3, LOSS_FILTERS = 1 << 4, LOSS_LINES = 1 << 5,
	LOSS_FOLDED = 1 << 6, LOSS_COLUMN_NUMBERS = 1 << 7, LOSS_COMMENTS = 1 << 8,
	LOSS_THREAD_IDS = 1 << 9, LOSS_THREAD_NAMES = 1 << 10,
};
static const char *const loss_names[] = {
	"sample types other than the count and the time",
	"labels other than a thread's and its process's ids and names",
	"build ids that are not hexadecimal", "mapping file offsets", "drop and keep frame filters",
	"inline chains past 32 entries", "folded-location marks", "line columns", "comments",
	"thread and process ids that are not whole numbers up to 2^31-1 (those threads are numbered)",
	"ends of thread names past 255 bytes",
};

/* An id -> row index, sorted by id. */
struct id_row {
	uint64_t id;
	uint32_t row;
};

/* An id -> row lookup: direct when the ids are dense enough, else by search. */
struct id_index {
	struct id_row *sorted;		/* by id */
	size_t n;
	uint32_t *direct;		/* row of each id up to n_direct, or MS_NONE */
	uint64_t n_direct;
};

/*
 * Where protobuf-c puts one decoded sample: a buffer reused from sample to
 * sample, so decoding a profile's samples allocates nothing per sample
 * once the largest has been seen.
 */
struct arena {
	unsigned char *buf;
	size_t len, used;
	void **extra;			/* blocks past buf, freed at the next reset */
	uint32_t n_extra, alloc_extra;
	size_t extra_len;
};

struct pi {
	const char *name;
	const unsigned char *data;	/* the profile, unzipped */
	size_t len;
	uint64_t *row_off[F_ROWS];	/* byte of each top-level row, per field */
	uint32_t n_rows[F_ROWS], alloc_rows[F_ROWS];

	/* every field but the samples, decoded whole; the samples one at a time */
	Profile *p;
	unsigned char *rest;		/* the bytes p was decoded from, when copied */
	size_t n_samples;
	struct arena arena;
	ProtobufCAllocator alloc;

	struct id_index mappings, locations, functions;
	struct ms_pprof_threads threads;
	unsigned loss;
	int count_col, time_col;	/* Sample.value columns used; -1 when none */
	bool period_ns;			/* the period is in nanoseconds */
};

/* ---- 1. gzip ---- */

static int gunzip(const char *name, const unsigned char *in, size_t in_len,
		  unsigned char **outp, size_t *out_len)
{
	z_stream z;
	unsigned char *out = NULL;
	size_t alloc = 0, len = 0;
	int zr = Z_OK, ret = -1;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return ms_error("out of memory");
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)(in_len > UINT32_MAX ? UINT32_MAX : in_len);
	for (;;) {
		if (len == alloc) {
			size_t want = alloc ? alloc * 2 : (in_len < (1 << 20) ? 1 << 16 : in_len * 4);
			unsigned char *p;

			if (alloc >= MS_IMPORT_PPROF_MAX) {
				ms_error("'%s': the profile unzips to more than %u bytes: refused",
					 name, MS_IMPORT_PPROF_MAX);
				goto out;
			}
			if (want > MS_IMPORT_PPROF_MAX)
				want = MS_IMPORT_PPROF_MAX;
			p = realloc(out, want);
			if (!p) {
				ms_error("out of memory unzipping '%s'", name);
				goto out;
			}
			out = p;
			alloc = want;
		}
		z.next_out = out + len;
		z.avail_out = (uInt)(alloc - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = alloc - z.avail_out;
		if (zr == Z_STREAM_END) {
			size_t used = (size_t)(z.next_in - in);

			if (used == in_len)
				break;
			/* gzip allows members one after another */
			if (in_len - used >= 2 && in[used] == 0x1f && in[used + 1] == 0x8b) {
				inflateReset(&z);
				continue;
			}
			ms_error("'%s': %zu bytes of something else follow the gzip data at byte %zu",
				 name, in_len - used, used);
			goto out;
		}
		if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) {
			ms_error("'%s': corrupt gzip data near byte %zu: %s", name,
				 (size_t)(z.next_in - in), z.msg ? z.msg : "bad data");
			goto out;
		}
		if (zr == Z_MEM_ERROR) {
			ms_error("out of memory unzipping '%s'", name);
			goto out;
		}
		if (z.avail_in == 0 && (size_t)(z.next_in - in) == in_len && z.avail_out) {
			ms_error("'%s': the gzip data is cut short after %zu bytes (a partial download?)",
				 name, in_len);
			goto out;
		}
		if (zr == Z_BUF_ERROR && z.avail_out) {
			ms_error("'%s': the gzip data is cut short after %zu bytes", name, in_len);
			goto out;
		}
	}
	*outp = out;
	*out_len = len;
	out = NULL;
	ret = 0;
out:
	inflateEnd(&z);
	free(out);
	return ret;
}

/* ---- 2. the wire format ---- */

static int wire_error(struct pi *pi, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int wire_error(struct pi *pi, size_t at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ms_error("'%s': malformed profile at byte %zu (of the unzipped protobuf): %s",
			pi->name, at, msg);
}

/* Read a varint at *pos below end; -1 when it is cut short or too long. */
static int varint(const unsigned char *d, size_t *pos, size_t end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*pos >= end)
			return -1;
		r |= (uint64_t)(d[*pos] & 0x7f) << shift;
		if (!(d[(*pos)++] & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

static int scalar_wire(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 1;
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return 5;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return 2;
	default:
		return 0;
	}
}

static int note_row(struct pi *pi, uint32_t field, size_t at)
{
	if (field >= F_ROWS)
		return 0;
	if (ms_grow(&pi->row_off[field], &pi->alloc_rows[field], pi->n_rows[field],
		    sizeof(uint64_t)) < 0)
		return -1;
	pi->row_off[field][pi->n_rows[field]++] = at;
	return 0;
}

static int wire_walk(struct pi *pi, const ProtobufCMessageDescriptor *md, size_t pos,
		     size_t end, int depth)
{
	const unsigned char *d = pi->data;

	while (pos < end) {
		size_t at = pos, body;
		uint64_t key, v;
		uint32_t field;
		unsigned wire;
		const ProtobufCFieldDescriptor *fd;

		if (varint(d, &pos, end, &key) < 0)
			return wire_error(pi, at, "a field's tag is cut short");
		field = key >> 3 > UINT32_MAX ? 0 : (uint32_t)(key >> 3);
		wire = key & 7;
		if (field == 0)
			return wire_error(pi, at, "field number 0 does not exist in protobuf");
		fd = protobuf_c_message_descriptor_get_field(md, field);
		if (fd) {
			int want = scalar_wire(fd->type);
			bool packed = fd->label == PROTOBUF_C_LABEL_REPEATED && want != 2 && wire == 2;

			if ((int)wire != want && !packed)
				return wire_error(pi, at,
						  "%s.%s (field %u) has wire type %u; profile.proto makes it %d",
						  md->short_name, fd->name, field, wire, want);
		}
		switch (wire) {
		case 0:
			if (varint(d, &pos, end, &v) < 0)
				return wire_error(pi, at, "the varint of field %u is cut short or longer than 10 bytes", field);
			break;
		case 1:
		case 5:
			if (end - pos < (wire == 1 ? 8u : 4u))
				return wire_error(pi, at, "the fixed-size value of field %u is cut short", field);
			pos += wire == 1 ? 8 : 4;
			break;
		case 2:
			if (varint(d, &pos, end, &v) < 0)
				return wire_error(pi, at, "the length of field %u is cut short", field);
			if (v > end - pos)
				return wire_error(pi, at,
						  "field %u claims %" PRIu64 " bytes, past the end of its message at byte %zu",
						  field, v, end);
			body = pos;
			pos += (size_t)v;
			if (depth == 0 && note_row(pi, field, at) < 0)
				return -1;
			if (!fd)
				break;
			if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (depth >= 8)
					return wire_error(pi, at, "messages nest too deep");
				if (wire_walk(pi, fd->descriptor, body, pos, depth + 1) < 0)
					return -1;
			} else if (fd->type == PROTOBUF_C_TYPE_STRING) {
				if (memchr(d + body, '\0', pos - body))
					return wire_error(pi, at, "a string of %s.%s holds a NUL byte",
							  md->short_name, fd->name);
			} else if (scalar_wire(fd->type) == 0) {
				/* packed varints: each must be whole */
				size_t q = body, q0;

				while ((q0 = q) < pos)
					if (varint(d, &q, pos, &v) < 0)
						return wire_error(pi, q0, "a packed varint of %s.%s is cut short",
								  md->short_name, fd->name);
			} else if (scalar_wire(fd->type) != 2 &&
				   (pos - body) % (scalar_wire(fd->type) == 1 ? 8 : 4)) {
				return wire_error(pi, at, "packed %s.%s is not a whole number of values",
						  md->short_name, fd->name);
			}
			break;
		case 3:
		case 4:
			return wire_error(pi, at, "field %u uses a group wire type, which profile.proto never does",
					  field);
		default:
			return wire_error(pi, at, "field %u has wire type %u, which does not exist",
					  field, wire);
		}
	}
	return 0;
}

/* ---- 3. decoding ---- */

static void *arena_alloc(void *data, size_t size)
{
	struct arena *a = data;
	size_t need = (size + 15) & ~(size_t)15;
	void *p;

	if (need < size)
		return NULL;
	if (a->len - a->used >= need) {
		p = a->buf + a->used;
		a->used += need;
		return p;
	}
	/* past the buffer: a block of its own until the next reset, which grows the buffer */
	/* no message here: protobuf-c fails, and sample_at() says so once */
	if (!ms_reserve((void **)&a->extra, &a->alloc_extra, (uint64_t)a->n_extra + 1,
			sizeof(*a->extra)))
		return NULL;
	p = malloc(size ? size : 1);
	if (!p)
		return NULL;
	a->extra[a->n_extra++] = p;
	a->extra_len += need;
	return p;
}

static void arena_free(void *data, void *ptr)
{
	/* everything goes at the next reset */
	(void)data;
	(void)ptr;
}

/* Forget what the arena holds; a buffer that overflowed grows to hold it all. */
static int arena_reset(struct arena *a)
{
	size_t want = a->len;

	if (a->n_extra) {
		for (uint32_t i = 0; i < a->n_extra; i++)
			free(a->extra[i]);
		want = 2 * (a->used + a->extra_len);
		a->n_extra = 0;
		a->extra_len = 0;
	}
	if (want < 4096)
		want = 4096;
	if (want != a->len) {
		free(a->buf);
		a->len = 0;
		a->buf = malloc(want);
		if (!a->buf)
			return ms_error("out of memory");
		a->len = want;
	}
	a->used = 0;
	return 0;
}

static void arena_release(struct arena *a)
{
	for (uint32_t i = 0; i < a->n_extra; i++)
		free(a->extra[i]);
	free(a->extra);
	free(a->buf);
	memset(a, 0, sizeof(*a));
}

/* Start and length of the body of the top-level row at *pos, which wire_walk() checked. */
static void row_body(const struct pi *pi, size_t *pos, uint64_t *field, size_t *len)
{
	uint64_t key = 0, v = 0;

	(void)varint(pi->data, pos, pi->len, &key);
	*field = key >> 3;
	*len = 0;
	switch (key & 7) {
	case 0:
		(void)varint(pi->data, pos, pi->len, &v);
		break;
	case 1:
		*len = 8;
		break;
	case 5:
		*len = 4;
		break;
	default:
		(void)varint(pi->data, pos, pi->len, &v);
		*len = (size_t)v;
		break;
	}
}

/*
 * Decode every field but the samples with protobuf-c, whose decoded form
 * of a sample is six times its bytes (120 MB for 300,000 samples of 24
 * frames): the samples are decoded one at a time instead (sample_at()).
 */
static int decode_profile(struct pi *pi)
{
	const unsigned char *bytes = pi->data;
	size_t len = pi->len, pos = 0, at, body_len;
	uint64_t field;

	pi->n_samples = pi->n_rows[F_SAMPLE];
	if (pi->n_samples) {
		pi->rest = malloc(pi->len);
		if (!pi->rest)
			return ms_error("out of memory decoding '%s'", pi->name);
		len = 0;
		while (pos < pi->len) {
			at = pos;
			row_body(pi, &pos, &field, &body_len);
			pos += body_len;
			if (field == F_SAMPLE)
				continue;
			memcpy(pi->rest + len, pi->data + at, pos - at);
			len += pos - at;
		}
		bytes = pi->rest;
	}
	pi->p = perftools__profiles__profile__unpack(NULL, len, bytes);
	free(pi->rest);
	pi->rest = NULL;
	if (!pi->p)
		return ms_error("'%s': protobuf-c could not decode the profile (out of memory?)",
				pi->name);
	pi->alloc.alloc = arena_alloc;
	pi->alloc.free = arena_free;
	pi->alloc.allocator_data = &pi->arena;
	return 0;
}

static const char *at_row(struct pi *pi, uint32_t field, size_t i);

/* Sample i, valid until the next call; NULL after a message. */
static const Sample *sample_at(struct pi *pi, size_t i)
{
	size_t pos = pi->row_off[F_SAMPLE][i], len;
	uint64_t field;
	const Sample *s;

	if (arena_reset(&pi->arena) < 0)
		return NULL;
	row_body(pi, &pos, &field, &len);
	s = perftools__profiles__sample__unpack(&pi->alloc, len, pi->data + pos);
	if (!s)
		ms_error("'%s': protobuf-c could not decode sample %zu%s (out of memory?)",
			 pi->name, i, at_row(pi, F_SAMPLE, i));
	return s;
}

/* ---- 4. references ---- */

/* " (byte N)" for row i of field, or "". */
static const char *at_row(struct pi *pi, uint32_t field, size_t i)
{
	static char buf[48];

	if (field >= F_ROWS || i >= pi->n_rows[field])
		return "";
	snprintf(buf, sizeof(buf), " (byte %" PRIu64 ")", pi->row_off[field][i]);
	return buf;
}

static int check_str(struct pi *pi, int64_t s, const char *what, uint32_t field, size_t row)
{
	if (s >= 0 && (uint64_t)s < pi->p->n_string_table)
		return 0;
	return ms_error("'%s': %s%s names string %" PRId64 ", past the end of the string table (%zu strings)",
			pi->name, what, at_row(pi, field, row), s, pi->p->n_string_table);
}

static int cmp_id_row(const void *a, const void *b)
{
	const struct id_row *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/*
 * The id index of n rows; refuses id 0 and an id given twice. Ids that
 * are dense (the largest at most 4 n + 1024, as producers number them)
 * get a direct table, so a sample's locations cost a load each and not a
 * binary search (a third of importing 7 million frames).
 */
static int index_ids(struct pi *pi, struct id_index *x, const char *what, uint32_t field,
		     size_t n, uint64_t (*id_of)(const Profile *, size_t))
{
	struct id_row *ix = calloc(n ? n : 1, sizeof(*ix));

	memset(x, 0, sizeof(*x));
	if (!ix)
		return ms_error("out of memory");
	for (size_t i = 0; i < n; i++) {
		ix[i].id = id_of(pi->p, i);
		ix[i].row = (uint32_t)i;
		if (!ix[i].id) {
			ms_error("'%s': %s %zu%s has id 0; ids must be non-zero", pi->name, what, i,
				 at_row(pi, field, i));
			free(ix);
			return -1;
		}
	}
	qsort(ix, n, sizeof(*ix), cmp_id_row);
	for (size_t i = 1; i < n; i++)
		if (ix[i].id == ix[i - 1].id) {
			ms_error("'%s': %s %u%s reuses id %" PRIu64 " of %s %u: ids must be unique",
				 pi->name, what, ix[i].row, at_row(pi, field, ix[i].row), ix[i].id,
				 what, ix[i - 1].row);
			free(ix);
			return -1;
		}
	x->sorted = ix;
	x->n = n;
	if (n && ix[n - 1].id <= 4 * (uint64_t)n + 1024) {
		x->n_direct = ix[n - 1].id + 1;
		x->direct = malloc(x->n_direct * sizeof(*x->direct));
		if (!x->direct)
			return ms_error("out of memory");
		for (uint64_t id = 0; id < x->n_direct; id++)
			x->direct[id] = MS_NONE;
		for (size_t i = 0; i < n; i++)
			x->direct[ix[i].id] = ix[i].row;
	}
	return 0;
}

static void id_index_release(struct id_index *x)
{
	free(x->sorted);
	free(x->direct);
	memset(x, 0, sizeof(*x));
}

/* The row of id, or MS_NONE. */
static uint32_t find_id(const struct id_index *x, uint64_t id)
{
	size_t lo = 0, hi = x->n;

	if (x->direct)
		return id < x->n_direct ? x->direct[id] : MS_NONE;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->sorted[mid].id == id)
			return x->sorted[mid].row;
		if (x->sorted[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return MS_NONE;
}

static uint64_t mapping_id(const Profile *p, size_t i) { return p->mapping[i]->id; }
static uint64_t location_id(const Profile *p, size_t i) { return p->location[i]->id; }
static uint64_t function_id(const Profile *p, size_t i) { return p->function[i]->id; }

static const char *str(const struct pi *pi, int64_t s)
{
	return pi->p->string_table[s];
}

/* Which value columns mean a count of samples and a time. */
static void choose_columns(struct pi *pi)
{
	const Profile *p = pi->p;

	pi->count_col = pi->time_col = -1;
	for (size_t i = 0; i < p->n_sample_type; i++) {
		const char *type = str(pi, p->sample_type[i]->type);
		const char *unit = str(pi, p->sample_type[i]->unit);

		if (!strcmp(unit, "count") &&
		    (pi->count_col < 0 || (!strcmp(type, "samples") &&
					   strcmp(str(pi, p->sample_type[pi->count_col]->type), "samples"))))
			pi->count_col = (int)i;
		/* microscope's off-CPU time is no time of the samples' */
		if (!strcmp(unit, "nanoseconds") && pi->time_col < 0 && strcmp(type, "off-cpu"))
			pi->time_col = (int)i;
	}
	pi->period_ns = p->period_type && !strcmp(str(pi, p->period_type->unit), "nanoseconds");
	if (pi->count_col < 0 && pi->time_col < 0)
		pi->count_col = (int)p->n_sample_type - 1;	/* pprof's default: the last */
	if ((size_t)(pi->count_col >= 0) + (size_t)(pi->time_col >= 0) < p->n_sample_type)
		pi->loss |= LOSS_COLUMNS;
}

/* How many samples pprof sample s stands for: its row's count (0: no row). */
static uint64_t sample_count(const struct pi *pi, const Sample *s)
{
	if (pi->count_col >= 0)
		return (uint64_t)s->value[pi->count_col];
	/* time only: so many periods, rounded to the nearest */
	if (pi->p->period > 0 && pi->period_ns)
		return ((uint64_t)s->value[pi->time_col] + (uint64_t)pi->p->period / 2) /
		       (uint64_t)pi->p->period;
	return (uint64_t)s->value[pi->time_col];
}

/*
 * The period of the row of s, which stands for count samples: the sum of
 * theirs, its time value, or count periods when only the profile's
 * period (in nanoseconds) says. false when that product overflows.
 */
static bool sample_period(const struct pi *pi, const Sample *s, uint64_t count, uint64_t *out)
{
	*out = 0;
	if (pi->time_col >= 0)
		*out = (uint64_t)s->value[pi->time_col];
	else if (pi->period_ns)
		return !__builtin_mul_overflow(count, (uint64_t)pi->p->period, out);
	return true;
}

static int check_refs(struct pi *pi)
{
	const Profile *p = pi->p;
	uint64_t total = 0;
	size_t i, k;

	if (!p->n_string_table || p->string_table[0][0])
		return ms_error("'%s': the string table must start with the empty string (pprof's rule); %s",
				pi->name, p->n_string_table ? "it starts with another" : "it is empty");
	if (!p->n_sample_type)
		return ms_error("'%s': the profile has no sample types: its values mean nothing",
				pi->name);
	for (i = 0; i < p->n_sample_type; i++)
		if (check_str(pi, p->sample_type[i]->type, "a sample type", F_SAMPLE_TYPE, i) < 0 ||
		    check_str(pi, p->sample_type[i]->unit, "a sample type's unit", F_SAMPLE_TYPE, i) < 0)
			return -1;
	if (p->period_type &&
	    (check_str(pi, p->period_type->type, "the period type", F_ROWS, 0) < 0 ||
	     check_str(pi, p->period_type->unit, "the period unit", F_ROWS, 0) < 0))
		return -1;
	if (check_str(pi, p->drop_frames, "drop_frames", F_ROWS, 0) < 0 ||
	    check_str(pi, p->keep_frames, "keep_frames", F_ROWS, 0) < 0 ||
	    check_str(pi, p->default_sample_type, "default_sample_type", F_ROWS, 0) < 0 ||
	    check_str(pi, p->doc_url, "doc_url", F_ROWS, 0) < 0)
		return -1;
	if (p->drop_frames || p->keep_frames)
		pi->loss |= LOSS_FILTERS;
	for (i = 0; i < p->n_comment; i++)
		if (check_str(pi, p->comment[i], "a comment", F_ROWS, 0) < 0)
			return -1;
	if (p->period < 0)
		return ms_error("'%s': the period is negative (%" PRId64 ")", pi->name, p->period);

	for (i = 0; i < p->n_mapping; i++) {
		const Mapping *m = p->mapping[i];

		if (check_str(pi, m->filename, "a mapping's file name", F_MAPPING, i) < 0 ||
		    check_str(pi, m->build_id, "a mapping's build id", F_MAPPING, i) < 0)
			return -1;
		if (m->file_offset)
			pi->loss |= LOSS_OFFSETS;
	}
	for (i = 0; i < p->n_function; i++) {
		const Function *f = p->function[i];

		if (check_str(pi, f->name, "a function's name", F_FUNCTION, i) < 0 ||
		    check_str(pi, f->system_name, "a function's system name", F_FUNCTION, i) < 0 ||
		    check_str(pi, f->filename, "a function's file name", F_FUNCTION, i) < 0)
			return -1;
		if (f->start_line < 0 || f->start_line > UINT32_MAX)
			return ms_error("'%s': function %zu%s starts at line %" PRId64 ", out of range",
					pi->name, i, at_row(pi, F_FUNCTION, i), f->start_line);
	}
	if (index_ids(pi, &pi->mappings, "mapping", F_MAPPING, p->n_mapping, mapping_id) < 0 ||
	    index_ids(pi, &pi->functions, "function", F_FUNCTION, p->n_function, function_id) < 0 ||
	    index_ids(pi, &pi->locations, "location", F_LOCATION, p->n_location, location_id) < 0)
		return -1;
	for (i = 0; i < p->n_location; i++) {
		const Location *l = p->location[i];

		if (l->mapping_id && find_id(&pi->mappings, l->mapping_id) == MS_NONE)
			return ms_error("'%s': location %zu%s names mapping %" PRIu64 ", which is not defined",
					pi->name, i, at_row(pi, F_LOCATION, i), l->mapping_id);
		for (k = 0; k < l->n_line; k++) {
			const Perftools__Profiles__Line *ln = l->line[k];

			if (!ln->function_id)
				return ms_error("'%s': location %zu%s: line %zu names function id 0",
						pi->name, i, at_row(pi, F_LOCATION, i), k);
			if (find_id(&pi->functions, ln->function_id) == MS_NONE)
				return ms_error("'%s': location %zu%s: line %zu names function %" PRIu64 ", which is not defined",
						pi->name, i, at_row(pi, F_LOCATION, i), k, ln->function_id);
			if (ln->line < 0 || ln->line > UINT32_MAX)
				return ms_error("'%s': location %zu%s: line number %" PRId64 " is out of range",
						pi->name, i, at_row(pi, F_LOCATION, i), ln->line);
			if (ln->column)
				pi->loss |= LOSS_COLUMN_NUMBERS;
		}
		if (l->n_line > MS_FRAME_LINES_MAX)
			pi->loss |= LOSS_LINES;
		if (l->is_folded)
			pi->loss |= LOSS_FOLDED;
	}
	choose_columns(pi);
	if (ms_pprof_threads_init(&pi->threads, p->string_table, p->n_string_table) < 0)
		return -1;
	for (i = 0; i < pi->n_samples; i++) {
		const Sample *s = sample_at(pi, i);
		uint64_t count, period;

		if (!s)
			return -1;
		if (s->n_value != p->n_sample_type)
			return ms_error("'%s': sample %zu%s has %zu values for %zu sample types",
					pi->name, i, at_row(pi, F_SAMPLE, i), s->n_value, p->n_sample_type);
		for (k = 0; k < s->n_value; k++)
			if (s->value[k] < 0 && ((int)k == pi->count_col || (int)k == pi->time_col))
				return ms_error("'%s': sample %zu%s has a negative value (%" PRId64 ") of type '%s': a capture counts samples, it cannot subtract them",
						pi->name, i, at_row(pi, F_SAMPLE, i), s->value[k],
						str(pi, p->sample_type[k]->type));
		for (k = 0; k < s->n_location_id; k++) {
			if (!s->location_id[k])
				return ms_error("'%s': sample %zu%s: frame %zu names location id 0",
						pi->name, i, at_row(pi, F_SAMPLE, i), k);
			if (find_id(&pi->locations, s->location_id[k]) == MS_NONE)
				return ms_error("'%s': sample %zu%s: frame %zu names location %" PRIu64 ", which is not defined",
						pi->name, i, at_row(pi, F_SAMPLE, i), k, s->location_id[k]);
		}
		for (k = 0; k < s->n_label; k++) {
			const Perftools__Profiles__Label *lb = s->label[k];
			const char *key;

			if (check_str(pi, lb->key, "a label's key", F_SAMPLE, i) < 0 ||
			    check_str(pi, lb->str, "a label's value", F_SAMPLE, i) < 0 ||
			    check_str(pi, lb->num_unit, "a label's unit", F_SAMPLE, i) < 0)
				return -1;
			key = str(pi, lb->key);
			if (!ms_pprof_threads_key(key))
				pi->loss |= LOSS_LABELS;
		}
		ms_pprof_threads_check(&pi->threads, s);
		count = sample_count(pi, s);
		/* every view adds counts up: their sum must fit in 64 bits */
		if (count > UINT64_MAX - total)
			return ms_error("'%s': sample %zu%s brings the count of samples past %" PRIu64 ", the most a capture counts",
					pi->name, i, at_row(pi, F_SAMPLE, i), UINT64_MAX);
		total += count;
		if (!sample_period(pi, s, count, &period))
			return ms_error("'%s': sample %zu%s: %" PRIu64 " samples of period %" PRId64 " ns add up past %" PRIu64 " ns",
					pi->name, i, at_row(pi, F_SAMPLE, i), count, p->period, UINT64_MAX);
	}
	return 0;
}

/* ---- 5. the capture ---- */

static uint32_t module_kind(const char *file)
{
	if (!strncmp(file, "[kernel", 7))
		return MS_MODULE_KERNEL;
	if (!strcmp(file, "[vdso]"))
		return MS_MODULE_VDSO;
	if (!strcmp(file, "[anon]"))
		return MS_MODULE_ANON;
	if (!*file || !strcmp(file, "[unknown]"))
		return MS_MODULE_UNKNOWN;
	return MS_MODULE_FILE;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int build_modules(struct pi *pi, struct ms_capture_builder *b)
{
	for (size_t i = 0; i < pi->p->n_mapping; i++) {
		const Mapping *m = pi->p->mapping[i];
		const char *file = str(pi, m->filename), *bid = str(pi, m->build_id);
		size_t n = strlen(bid);
		struct ms_module mod;

		memset(&mod, 0, sizeof(mod));
		mod.id = (uint32_t)i;
		mod.kind = module_kind(file);
		mod.path = ms_str_of(file);
		if (n && n % 2 == 0 && n <= 2 * MS_BUILD_ID_MAX) {
			size_t k;

			for (k = 0; k < n; k += 2) {
				int hi = hexval(bid[k]), lo = hexval(bid[k + 1]);

				if (hi < 0 || lo < 0)
					break;
				mod.build_id[k / 2] = (uint8_t)(hi << 4 | lo);
			}
			if (k == n)
				mod.build_id_len = (uint32_t)(n / 2);
			else
				memset(mod.build_id, 0, sizeof(mod.build_id));
		}
		if (n && !mod.build_id_len)
			pi->loss |= LOSS_BUILD_IDS;
		if (ms_capture_builder_module(b, &mod) < 0)
			return -1;
	}
	return 0;
}

static void line_of(struct pi *pi, const Perftools__Profiles__Line *ln, struct ms_frame_line *fl)
{
	const Function *f = pi->p->function[find_id(&pi->functions, ln->function_id)];
	const char *name = str(pi, f->name), *sys = str(pi, f->system_name);

	fl->function = ms_str_of(*name ? name : sys);
	fl->system_name = ms_str_of(strcmp(sys, name) && *name ? sys : "");
	fl->file = ms_str_of(str(pi, f->filename));
	fl->line = (uint32_t)ln->line;
	fl->function_line = (uint32_t)f->start_line;
}

/*
 * Each location becomes a frame: its mapping's module and its address, or,
 * with no address, a key made from its row (MS_FRAME_NO_ADDRESS). Its lines
 * become the frame's fact. frames[i] is location i's stack frame.
 */
static int build_frames(struct pi *pi, struct ms_capture_builder *b,
			struct ms_stack_frame *frames)
{
	const Profile *p = pi->p;
	struct ms_frame *fact = calloc(1, sizeof(*fact));

	if (!fact)
		return ms_error("out of memory");
	for (size_t i = 0; i < p->n_location; i++) {
		const Location *l = p->location[i];
		uint32_t m = l->mapping_id ? find_id(&pi->mappings, l->mapping_id)
					   : MS_NONE;
		struct ms_stack_frame *f = &frames[i];
		size_t first, k;

		f->module = m;
		f->flags = 0;
		f->address = l->address;
		if (!l->address) {
			f->flags |= MS_FRAME_NO_ADDRESS;
			f->address = MS_IMPORT_KEY_BASE + i;
		}
		if (m != MS_NONE && module_kind(str(pi, p->mapping[m]->filename)) == MS_MODULE_KERNEL)
			f->flags |= MS_FRAME_KERNEL;
		/* no lines: the file does not say why, so no fact (unsymbolized) */
		if (!l->n_line)
			continue;
		memset(fact, 0, sizeof(*fact));
		fact->module = m;
		fact->address = f->address;
		fact->reason = MS_SYM_OK;
		/* keep the outermost entries: the last names the function at the address */
		first = l->n_line > MS_FRAME_LINES_MAX ? l->n_line - MS_FRAME_LINES_MAX : 0;
		for (k = first; k < l->n_line; k++)
			line_of(pi, l->line[k], &fact->lines[fact->n_lines++]);
		fact->name = fact->lines[fact->n_lines - 1].function;
		if (ms_capture_builder_frame(b, fact) < 0) {
			free(fact);
			return -1;
		}
	}
	free(fact);
	return 0;
}

static int build_samples(struct pi *pi, struct ms_capture_builder *b,
			 const struct ms_stack_frame *frames)
{
	struct ms_stack *st = calloc(1, sizeof(*st));
	struct ms_progress progress = { 0 };
	uint64_t too_deep = 0;
	int ret = -1;

	if (!st)
		return ms_error("out of memory");
	ms_progress_start(&progress, "importing the pprof's samples", pi->n_samples);
	for (size_t i = 0; i < pi->n_samples; i++) {
		const Sample *s = sample_at(pi, i);
		uint64_t count;
		size_t n, k;

		ms_progress_update(&progress, i);
		if (!s)
			goto out;
		count = sample_count(pi, s);
		n = s->n_location_id;
		memset(st, 0, offsetof(struct ms_stack, frames));
		/* checked by check_refs() */
		(void)sample_period(pi, s, count, &st->period);
		if (ms_pprof_threads_of(&pi->threads, b, s, &st->pid, &st->tid) < 0)
			goto out;
		st->reason = MS_END_UNKNOWN;
		if (n > MS_FRAMES_MAX) {
			/* keep the innermost frames, as an unwinder that hit its depth does */
			n = MS_FRAMES_MAX;
			st->reason = MS_END_DEPTH;
			too_deep += count;
		}
		for (k = 0; k < n; k++)
			st->frames[k] = frames[find_id(&pi->locations, s->location_id[k])];
		st->n_frames = (uint32_t)n;
		/* count 0: no samples, no row (its time, if any, is lost, as before) */
		if (count && ms_capture_builder_stack_import(b, st, count) < 0)
			goto out;
	}
	ms_progress_finish(&progress);
	if (ms_pprof_threads_finish(&pi->threads, b) < 0)
		goto out;
	if (too_deep) {
		char detail[128];
		struct ms_problem pr = { ms_str_of("ms-capture"), ms_str_of("import-stack-too-deep"),
					 too_deep, { detail, 0 } };

		snprintf(detail, sizeof(detail), "pprof samples deeper than %u frames kept their innermost %u",
			 MS_FRAMES_MAX, MS_FRAMES_MAX);
		pr.detail.len = (uint32_t)strlen(detail);
		if (ms_capture_builder_problem(b, &pr) < 0)
			goto out;
	}
	ret = 0;
out:
	ms_progress_finish(&progress);
	free(st);
	return ret;
}

static int info_number(struct ms_capture_builder *b, const char *key, uint64_t v)
{
	struct ms_info i = { ms_str_of(key), false, { "", 0 }, v };

	return ms_capture_builder_info(b, &i);
}

static int info_text(struct ms_capture_builder *b, const char *key, const char *v)
{
	struct ms_info i = { ms_str_of(key), true, ms_str_of(v), 0 };

	return ms_capture_builder_info(b, &i);
}

static int build_info(struct pi *pi, struct ms_capture_builder *b, const char *producer)
{
	const Profile *p = pi->p;
	struct ms_header h;

	ms_import_header(&h, producer, "pprof");
	if (ms_capture_builder_producers(b, &h) < 0 || info_text(b, "import", "pprof") < 0 ||
	    (pi->name && *pi->name && info_text(b, "import-file", pi->name) < 0))
		return -1;
	if (p->period_type && *str(pi, p->period_type->type) &&
	    info_text(b, "event", str(pi, p->period_type->type)) < 0)
		return -1;
	if (p->period > 0 && info_number(b, "period", (uint64_t)p->period) < 0)
		return -1;
	if (p->time_nanos > 0 && info_number(b, "start-wall-time", (uint64_t)p->time_nanos) < 0)
		return -1;
	if (p->duration_nanos > 0 &&
	    (info_number(b, "start-time", 0) < 0 ||
	     info_number(b, "end-time", (uint64_t)p->duration_nanos) < 0))
		return -1;
	for (size_t i = 0; i < p->n_comment; i++) {
		const char *c = str(pi, p->comment[i]);

		/* ms-export writes the command as a comment "command: ..." */
		if (!strncmp(c, "command: ", 9)) {
			if (info_text(b, "command", c + 9) < 0)
				return -1;
		} else if (strncmp(c, "written by ", 11)) {
			pi->loss |= LOSS_COMMENTS;
		}
	}
	return 0;
}

static void note_loss(const struct pi *pi)
{
	char list[1024];
	size_t len = 0;

	if (!pi->loss)
		return;
	list[0] = '\0';
	for (unsigned i = 0; i < sizeof(loss_names) / sizeof(loss_names[0]); i++) {
		int n;

		if (!(pi->loss & (1u << i)))
			continue;
		n = snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "", loss_names[i]);
		if (n < 0 || (size_t)n >= sizeof(list) - len)
			break;
		len += (size_t)n;
	}
	fprintf(stderr, "%s: note: a capture keeps none of the %s of '%s' (see ms-export(1))\n",
		ms_progname(), list, pi->name);
}

/* What the import holds besides the builder; safe to call twice. */
static void pi_release(struct pi *pi)
{
	if (pi->p)
		perftools__profiles__profile__free_unpacked(pi->p, NULL);
	pi->p = NULL;
	for (int f = 0; f < F_ROWS; f++) {
		free(pi->row_off[f]);
		pi->row_off[f] = NULL;
	}
	free(pi->rest);
	pi->rest = NULL;
	arena_release(&pi->arena);
	id_index_release(&pi->mappings);
	id_index_release(&pi->locations);
	id_index_release(&pi->functions);
	if (pi->threads.loss & MS_PPROF_THREADS_LOSS_IDS)
		pi->loss |= LOSS_THREAD_IDS;
	if (pi->threads.loss & MS_PPROF_THREADS_LOSS_NAMES)
		pi->loss |= LOSS_THREAD_NAMES;
	ms_pprof_threads_release(&pi->threads);
}

struct ms_capture *ms_pprof_import(const void *buf, size_t len, const char *name,
				   const char *producer)
{
	struct pi pi;
	unsigned char *unzipped = NULL;
	struct ms_stack_frame *frames = NULL;
	struct ms_capture_builder *b = NULL;
	struct ms_capture *cap = NULL;
	const unsigned char *bytes = buf;

	memset(&pi, 0, sizeof(pi));
	pi.name = name;
	if (len >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
		if (gunzip(name, bytes, len, &unzipped, &pi.len) < 0)
			goto out;
		pi.data = unzipped;
	} else {
		pi.data = bytes;
		pi.len = len;
	}
	if (pi.len == 0) {
		ms_error("'%s' holds no profile (it is empty)", name);
		goto out;
	}
	if (wire_walk(&pi, &perftools__profiles__profile__descriptor, 0, pi.len, 0) < 0 ||
	    decode_profile(&pi) < 0 || check_refs(&pi) < 0)
		goto out;
	frames = calloc(pi.p->n_location ? pi.p->n_location : 1, sizeof(*frames));
	b = ms_capture_builder_new();
	if (!frames || !b) {
		if (!frames)
			ms_error("out of memory");
		goto out;
	}
	if (build_info(&pi, b, producer) < 0 || build_modules(&pi, b) < 0 ||
	    build_frames(&pi, b, frames) < 0 || build_samples(&pi, b, frames) < 0)
		goto out;
	/* the builder copied what it keeps: the profile goes before the tables are sealed */
	pi_release(&pi);
	free(frames);
	frames = NULL;
	free(unzipped);
	unzipped = NULL;
	cap = ms_capture_builder_seal(b);
	b = NULL;
	if (cap)
		note_loss(&pi);
out:
	ms_capture_builder_free(b);
	pi_release(&pi);
	free(frames);
	free(unzipped);
	return cap;
}

/*
 * Fuzz target of the perf record decoder (perf/decode.h): ms_decode() on
 * kernel records laid out by attrs the input chooses, then the ms-decode
 * stage (ms_decode_stage()) over a stream of the same records.
 *
 * Input (integers little-endian): a mode byte; an attr of 48 bytes
 * (sample_type, read_format, sample_regs_user, u32 sample_stack_user,
 * u32 flags, two ids, 0 for none); then items, each a prefix byte and
 * what it announces:
 *   prefix & 0x40: another attr (48 bytes);
 *   else one raw record from the ring prefix & 0x1f: with prefix & 0x80
 *   a u16 length and that many bytes, else the record's header.size
 *   bytes (all that is left when it says less than 8 or more than that);
 *   prefix & 0x20 adds a ROUND after the record.
 * Mode bits: MODE_* below.
 *
 * Checks (abort on failure):
 *  - ms_decode() reads nothing outside the record (each is given an
 *    exact copy) and its result holds to decode.h: counts within their
 *    MAX, the stack copy and strings inside the record, a problem code
 *    and detail for every skip; a decoded sample packs and unpacks back
 *    to itself;
 *  - the stage's fast path and its checked path (checked_only) write the
 *    same bytes, in copy and in refer mode, and from a socket as from a
 *    file;
 *  - every output reads back through the stream reader, each record
 *    unpacking, with a trailer exactly when the stage succeeded, and
 *    holds what ms_decode() made of the records one by one: as many of
 *    each kind, the same samples, a problem counted for each skip;
 *  - in refer mode, each sample's [offset, length] lies in the input and
 *    its bytes are those the copy mode carries.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf/decode.h"
#include "stream/fastpack.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz-io.h"
#include "util/bits.h"
#include "util/error.h"

#define INPUT_MAX (1u << 20)
#define ITEMS_MAX 1024
#define ATTR_BYTES 48
#define RAW_MAX 65536u

enum {
	MODE_NO_TRAILER = 1 << 0,	/* the input is cut short */
	MODE_NO_FIRST_ATTR = 1 << 1,	/* raw records may come before any attr */
	MODE_SMALL_ORDER = 1 << 2,	/* one chunk of ordering memory: forced output */
	MODE_REFER = 1 << 3,		/* the refer pair of runs too */
	MODE_UNMAPPED = 1 << 4,		/* a run from a socket too */
};

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "fuzz-decode: check failed at line %d: %s\n", \
				__LINE__, #cond);                                 \
			abort();                                                  \
		}                                                                 \
	} while (0)

struct item {
	bool is_attr, round;
	uint32_t cpu;
	const uint8_t *p;
	size_t len;
};

/* What ms_decode() made of the records, one by one: what the stage must write. */
struct expect {
	uint64_t n[MS_REC_SWITCH_OUT + 1];	/* decoded, by record kind */
	uint64_t attrs, skipped, foreign;
	uint64_t sample_hash;	/* sum of the hashes of the SAMPLEs packed */
	bool error;		/* the stage must stop: too many attrs, or no attr yet */
};

/* What an output held. */
struct outcome {
	uint64_t n[MS_REC_SWITCH_OUT + 1];
	uint64_t attrs, decode_problems, foreign;
	uint64_t sample_hash;
};

static struct ms_decoder dec;
static struct ms_decoded out;
static struct ms_attr attr;
static struct ms_sample back, smp_a, smp_b;
static struct item items[ITEMS_MAX];
static char pack_buf[MS_RECORD_MAX];

static uint64_t hash(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void attr_from(const uint8_t *p, struct ms_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_type = ms_load64(p);
	a->read_format = ms_load64(p + 8);
	a->sample_regs_user = ms_load64(p + 16);
	a->sample_stack_user = ms_load32(p + 24);
	a->flags = ms_load32(p + 28);
	for (int i = 0; i < 2; i++)
		if (ms_load64(p + 32 + 8 * i))
			a->ids[a->n_ids++] = ms_load64(p + 32 + 8 * i);
}

static size_t parse(const uint8_t *data, size_t size)
{
	size_t pos = 1 + ATTR_BYTES, n = 0;

	items[n++] = (struct item){ .is_attr = true, .p = data + 1 };
	while (pos < size && n < ITEMS_MAX) {
		uint8_t c = data[pos++];
		size_t left = size - pos, len;

		if (c & 0x40) {
			if (left < ATTR_BYTES)
				break;
			items[n++] = (struct item){ .is_attr = true, .p = data + pos };
			pos += ATTR_BYTES;
			continue;
		}
		if (c & 0x80) {
			if (left < 2)
				break;
			len = ms_load16(data + pos);
			pos += 2;
			left -= 2;
			if (len > left)
				len = left;
		} else {
			len = left;
			if (left >= 8 && ms_load16(data + pos + 6) >= 8 && ms_load16(data + pos + 6) <= left)
				len = ms_load16(data + pos + 6);
		}
		if (len > RAW_MAX)
			len = RAW_MAX;
		items[n++] = (struct item){ .round = c & 0x20, .cpu = c & 0x1f, .p = data + pos,
					    .len = len };
		pos += len;
	}
	return n;
}

/* [p, p + n) lies within [lo, lo + len). */
static bool within(const void *p, size_t n, const void *lo, size_t len)
{
	const uint8_t *a = p, *b = lo;

	return a >= b && (size_t)(a - b) <= len && n <= len - (size_t)(a - b);
}

/* A string of the record: inside it, NUL-terminated there, no NUL before. */
static void check_string(const struct ms_str *s, const uint8_t *data, size_t len)
{
	CHECK(within(s->ptr, (size_t)s->len + 1, data, len));
	CHECK(s->ptr[s->len] == '\0');
	CHECK(!memchr(s->ptr, 0, s->len));
}

static void check_sample_counts(const struct ms_sample *s)
{
	CHECK(s->n_kchain <= MS_CHAIN_MAX && s->n_uchain <= MS_CHAIN_MAX);
	CHECK(s->n_regs <= MS_REGS_MAX && s->stack_len <= MS_STACK_MAX);
	CHECK(s->cpumode <= MS_CPUMODE_GUEST_USER);
}

static void check_same_sample(const struct ms_sample *a, const struct ms_sample *b)
{
	CHECK(a->pid == b->pid && a->tid == b->tid && a->time == b->time);
	CHECK(a->cpu == b->cpu && a->period == b->period && a->ip == b->ip);
	CHECK(a->cpumode == b->cpumode && a->regs_abi == b->regs_abi);
	CHECK(a->regs_mask == b->regs_mask);
	CHECK(a->n_kchain == b->n_kchain && a->n_uchain == b->n_uchain && a->n_regs == b->n_regs);
	CHECK(!memcmp(a->kchain, b->kchain, 8 * (size_t)a->n_kchain));
	CHECK(!memcmp(a->uchain, b->uchain, 8 * (size_t)a->n_uchain));
	CHECK(!memcmp(a->regs, b->regs, 8 * (size_t)a->n_regs));
	CHECK(a->stack_len == b->stack_len);
}

/* A decoded sample packs as the stage packs it, and unpacks back to itself. */
static uint64_t pack_and_back(struct ms_sample *s)
{
	struct ms_record rec = { .kind = MS_REC_SAMPLE };
	size_t len;
	char *copy;
	uint64_t h;

	s->stack_in_file = false;
	s->stack_offset = 0;
	CHECK(fp_sample_bound(s) <= sizeof(pack_buf));
	len = (size_t)(fp_sample(pack_buf, s) - pack_buf);
	CHECK(len <= fp_sample_bound(s));
	h = hash(pack_buf, len);
	copy = malloc(len);
	CHECK(copy);
	memcpy(copy, pack_buf, len);
	rec.bytes = copy;
	rec.len = len;
	CHECK(ms_sample_unpack(&rec, &back) == 0);
	check_same_sample(s, &back);
	CHECK(!back.stack_in_file);
	CHECK(!s->stack_len || !memcmp(s->stack, back.stack, s->stack_len));
	/* and the reader's one-pass framing, when it takes it, agrees */
	if (ms_sample_frame(copy, len, &back)) {
		CHECK(ms_sample_frame(copy, len, &back) == len);
		check_same_sample(s, &back);
	}
	free(copy);
	return h;
}

static void check_decoded(int ret, const uint8_t *data, size_t len, struct expect *e)
{
	switch (ret) {
	case MS_DECODE_FATAL:
		CHECK(dec.n_attrs == 0);
		/* fall through */
	case MS_DECODE_SKIP:
		CHECK(out.problem && out.problem[0] && out.detail[0]);
		return;
	case MS_DECODE_SAMPLE: {
		struct ms_sample *s = &out.u.sample;

		check_sample_counts(s);
		if (s->regs_abi)
			CHECK(s->n_regs == ms_popcount64(s->regs_mask));
		else
			CHECK(s->n_regs == 0);
		if (s->stack)
			CHECK(within(s->stack, s->stack_len, data, len));
		else
			CHECK(s->stack_len == 0);
		e->sample_hash += pack_and_back(s);
		break;
	}
	case MS_DECODE_MMAP:
		check_string(&out.u.mmap.filename, data, len);
		CHECK(out.u.mmap.build_id_len <= MS_BUILD_ID_MAX);
		break;
	case MS_DECODE_COMM:
		check_string(&out.u.comm.comm, data, len);
		break;
	case MS_DECODE_FORK:
	case MS_DECODE_EXIT:
	case MS_DECODE_LOST:
	case MS_DECODE_THROTTLE:
		break;
	case MS_DECODE_SWITCH:
		CHECK(out.u.sw.out || !out.u.sw.preempt);
		break;
	case MS_DECODE_SWITCH_OUT:
		/* the inputs' attrs are the sampler's: no tracepoint event */
		CHECK(!"a switch-out of an attr that is no tracepoint's");
		break;
	default:
		CHECK(!"a result ms_decode() does not return");
	}
	CHECK(out.type == ms_load32(data));
}

/* ms_decode() on each record in turn, as the stage will see them. */
static void decode_each(size_t n, uint8_t mode, struct expect *e)
{
	ms_decoder_init(&dec);
	for (size_t i = (mode & MODE_NO_FIRST_ATTR) ? 1 : 0; i < n; i++) {
		uint8_t *copy;
		int ret;

		if (items[i].is_attr) {
			attr_from(items[i].p, &attr);
			if (ms_decoder_add_attr(&dec, &attr) < 0) {
				e->error = true;
				return;
			}
			e->attrs++;
			continue;
		}
		/* an exact copy: a read past the record is a read past the allocation */
		copy = malloc(items[i].len ? items[i].len : 1);
		CHECK(copy);
		memcpy(copy, items[i].p, items[i].len);
		ret = ms_decode(&dec, items[i].cpu, copy, items[i].len, &out);
		check_decoded(ret, copy, items[i].len, e);
		free(copy);
		if (ret == MS_DECODE_FATAL) {
			e->error = true;
			return;
		}
		if (ret == MS_DECODE_SKIP) {
			e->skipped++;
		} else {
			e->n[ret]++;
			e->foreign += out.foreign_frames != 0;
		}
	}
}

/* ---- streams in files ---- */

/*
 * A private folder for the input file, made for each input and removed
 * with it: libFuzzer leaves some of its modes (-merge) by _Exit(), which
 * runs no atexit() handler.
 */
static void private_dir(char *dir, size_t cap)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, cap, "%s/ms-fuzz-decode.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	CHECK(mkdtemp(dir));
}

static uint8_t *read_all(int fd, size_t *len)
{
	struct stat st;
	uint8_t *b;

	CHECK(fstat(fd, &st) == 0);
	b = malloc(st.st_size ? (size_t)st.st_size : 1);
	CHECK(b);
	CHECK(pread(fd, b, (size_t)st.st_size, 0) == st.st_size);
	*len = (size_t)st.st_size;
	return b;
}

static void write_at(int fd, const void *p, size_t len, off_t at)
{
	CHECK(pwrite(fd, p, len, at) == (ssize_t)len);
}

/*
 * bytes in fd after zeros that end them on a page boundary: a read past
 * the end of the reader's mapping of it faults. fd is left at the bytes.
 */
static off_t fill_padded(int fd, const void *bytes, size_t len)
{
	static const uint8_t zeros[4096];
	off_t pad = (off_t)((4096 - len % 4096) % 4096);

	CHECK(ftruncate(fd, 0) == 0);
	if (pad)
		write_at(fd, zeros, (size_t)pad, 0);
	write_at(fd, bytes, len, pad);
	CHECK(lseek(fd, pad, SEEK_SET) == pad);
	return pad;
}

/* The stream ms-collect would have written of the items. */
static uint8_t *make_stream(size_t n, uint8_t mode, size_t *len)
{
	struct ms_writer *w;
	struct ms_fuzz_drain d;
	int fd = ms_fuzz_drain_start(&d);

	w = ms_writer_open(fd, "input", 0);
	CHECK(w);
	CHECK(ms_writer_header(w, NULL, "ms-collect", "fuzz") == 0);
	for (size_t i = (mode & MODE_NO_FIRST_ATTR) ? 1 : 0; i < n; i++) {
		if (items[i].is_attr) {
			attr_from(items[i].p, &attr);
			CHECK(ms_attr_pack(w, &attr) == 0);
		} else {
			struct ms_raw raw = { items[i].cpu, items[i].p, (uint32_t)items[i].len };

			CHECK(ms_raw_pack(w, &raw) == 0);
			if (items[i].round)
				CHECK(ms_round_pack(w) == 0);
		}
	}
	if (!(mode & MODE_NO_TRAILER))
		CHECK(ms_writer_trailer(w, true) == 0);
	CHECK(ms_writer_close(w) == 0);
	return ms_fuzz_drain_end(&d, fd, len);
}

/*
 * The stage, its output into a pipe (a writer to a pipe buffers 256 KiB,
 * to a file 2 MiB more): in_fd from at (-1: as it is).
 */
static int run_stage(int in_fd, off_t at, const char *in_name, enum ms_stack_bytes how,
		     bool checked, uint8_t mode, uint8_t **bytes, size_t *len)
{
	struct ms_decode_options opt = {
		.version = "fuzz", .stack_bytes = how, .checked_only = checked,
		.order_bytes = (mode & MODE_SMALL_ORDER) ? 1 : 0,
	};
	struct ms_fuzz_drain d;
	int fd = ms_fuzz_drain_start(&d), code;

	if (at >= 0)
		CHECK(lseek(in_fd, at, SEEK_SET) == at);
	code = ms_decode_stage(in_fd, in_name, fd, "output", &opt);
	*bytes = ms_fuzz_drain_end(&d, fd, len);
	return code;
}

static bool is_order_problem(const struct ms_str *code)
{
	static const char *const codes[] = { "out-of-order", "order-memory-full" };

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (code->len == strlen(codes[i]) && !memcmp(code->ptr, codes[i], code->len))
			return true;
	return false;
}

static bool str_is(const struct ms_str *s, const char *lit)
{
	return s->len == strlen(lit) && !memcmp(s->ptr, lit, s->len);
}

/* A reader on a copy of bytes; *fd to close after ms_reader_free(). */
static struct ms_reader *open_bytes(const uint8_t *bytes, size_t len, int *fd)
{
	struct ms_reader *r;

	*fd = memfd_create("fuzz-decode-back", MFD_CLOEXEC);
	CHECK(*fd >= 0);
	fill_padded(*fd, bytes, len);
	r = ms_reader_open(*fd, "output");
	/* the stage wrote its header whatever came after */
	CHECK(r);
	return r;
}

/*
 * Read an output of the stage back: every record whole, of a kind the
 * stage writes, unpacking; a trailer exactly when it succeeded. In refer
 * mode, file is the input file the samples point into.
 */
static void check_output(const uint8_t *bytes, size_t len, int code, bool refer,
			 const uint8_t *file, size_t file_len, struct outcome *o)
{
	static union {
		struct ms_mmap mmap;
		struct ms_comm comm;
		struct ms_task task;
		struct ms_lost lost;
		struct ms_throttle throttle;
		struct ms_switch sw;
		struct ms_problem problem;
		struct ms_stack_file sf;
	} u;
	struct ms_record rec;
	struct ms_reader *r;
	const struct ms_header *h;
	int fd, ret;

	memset(o, 0, sizeof(*o));
	r = open_bytes(bytes, len, &fd);
	h = ms_reader_header(r);
	CHECK(h->n_producers == 2 && !strcmp(h->producers[1].name, "ms-decode"));
	while ((ret = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		switch (rec.kind) {
		case MS_REC_SAMPLE:
			CHECK(ms_sample_unpack(&rec, &smp_a) == 0);
			check_sample_counts(&smp_a);
			if (refer && smp_a.stack_in_file)
				CHECK(smp_a.stack_offset <= file_len &&
				      smp_a.stack_len <= file_len - smp_a.stack_offset);
			if (!refer) {
				CHECK(!smp_a.stack_in_file);
				o->sample_hash += hash(rec.bytes, rec.len);
			}
			break;
		case MS_REC_MMAP:
			CHECK(ms_mmap_unpack(&rec, &u.mmap) == 0);
			break;
		case MS_REC_COMM:
			CHECK(ms_comm_unpack(&rec, &u.comm) == 0);
			break;
		case MS_REC_FORK:
		case MS_REC_EXIT:
			CHECK(ms_task_unpack(&rec, &u.task) == 0);
			break;
		case MS_REC_LOST:
			CHECK(ms_lost_unpack(&rec, &u.lost) == 0);
			break;
		case MS_REC_THROTTLE:
			CHECK(ms_throttle_unpack(&rec, &u.throttle) == 0);
			break;
		case MS_REC_SWITCH:
			CHECK(ms_switch_unpack(&rec, &u.sw) == 0);
			break;
		case MS_REC_ATTR:
			CHECK(ms_attr_unpack(&rec, &attr) == 0);
			o->attrs++;
			break;
		case MS_REC_PROBLEM:
			CHECK(ms_problem_unpack(&rec, &u.problem) == 0);
			CHECK(str_is(&u.problem.stage, "ms-decode") && u.problem.count > 0);
			if (str_is(&u.problem.code, "foreign-callchain-frames"))
				o->foreign += u.problem.count;
			else if (!is_order_problem(&u.problem.code))
				o->decode_problems += u.problem.count;
			break;
		case MS_REC_STACK_FILE:
			/* first, and only when referring */
			CHECK(refer && rec.index == 0);
			CHECK(ms_stack_file_unpack(&rec, &u.sf) == 0 && u.sf.size == file_len);
			break;
		default:
			CHECK(!"a record kind ms-decode does not write");
		}
		if (rec.kind <= MS_REC_THROTTLE || rec.kind == MS_REC_SWITCH)
			o->n[rec.kind]++;
	}
	CHECK(ret == (code == MS_EXIT_OK ? MS_READ_END : MS_READ_TRUNCATED));
	ms_reader_free(r);
	close(fd);
}

static void check_expected(const struct outcome *o, const struct expect *e, bool copy_mode)
{
	for (int k = MS_REC_SAMPLE; k <= MS_REC_SWITCH_OUT; k++)
		CHECK(o->n[k] == e->n[k]);
	CHECK(o->attrs == e->attrs);
	CHECK(o->decode_problems == e->skipped);
	CHECK(o->foreign == e->foreign);
	if (copy_mode)
		CHECK(o->sample_hash == e->sample_hash);
}

/*
 * The refer output against the copy output: the same records in the same
 * order after refer's STACK_FILE, samples the same but for where their
 * stack bytes are.
 */
static void compare_refer(const uint8_t *copy, size_t copy_len, const uint8_t *refer,
			  size_t refer_len, const uint8_t *file, size_t file_len)
{
	struct ms_reader *rc, *rr;
	struct ms_record a, b;
	int fa, fb, ra, rb;

	rc = open_bytes(copy, copy_len, &fa);
	rr = open_bytes(refer, refer_len, &fb);
	CHECK(ms_reader_next(rr, &b) == MS_READ_RECORD && b.kind == MS_REC_STACK_FILE);
	for (;;) {
		ra = ms_reader_next(rc, &a);
		rb = ms_reader_next(rr, &b);
		CHECK(ra == rb);
		if (ra != MS_READ_RECORD)
			break;
		CHECK(a.kind == b.kind);
		if (a.kind != MS_REC_SAMPLE) {
			CHECK(a.len == b.len && !memcmp(a.bytes, b.bytes, a.len));
			continue;
		}
		CHECK(ms_sample_unpack(&a, &smp_a) == 0 && ms_sample_unpack(&b, &smp_b) == 0);
		check_same_sample(&smp_a, &smp_b);
		if (smp_b.stack_in_file)
			CHECK(smp_b.stack_offset <= file_len &&
			      smp_b.stack_len <= file_len - smp_b.stack_offset &&
			      !memcmp(file + smp_b.stack_offset, smp_a.stack, smp_a.stack_len));
		else
			CHECK(!smp_b.stack_len || !memcmp(smp_a.stack, smp_b.stack, smp_b.stack_len));
	}
	ms_reader_free(rc);
	ms_reader_free(rr);
	close(fa);
	close(fb);
}

static void check_same_bytes(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
	CHECK(a_len == b_len && !memcmp(a, b, a_len));
}

/* The stage from a socket (not mapped: every sample packed at once). */
static int run_unmapped(const uint8_t *stream, size_t len, uint8_t mode, uint8_t **bytes,
			size_t *out_len)
{
	struct ms_fuzz_feed f;
	int fd = ms_fuzz_feed_start(&f, stream, len, 0), code;

	code = run_stage(fd, -1, "socket", MS_STACK_BYTES_COPY, false, mode, bytes, out_len);
	ms_fuzz_feed_end(&f, fd);
	return code;
}

int ms_fuzz_decode(const uint8_t *data, size_t size)
{
	struct expect e;
	struct outcome o;
	char dir[4096], path[4096 + 32];
	uint8_t mode, *stream, *file, *copy_fast, *copy_checked;
	size_t n, stream_len, file_len, fast_len, checked_len;
	int fd, code, expect_code;
	off_t at;

	if (size < 1 + ATTR_BYTES || size > INPUT_MAX)
		return 0;
	memset(&e, 0, sizeof(e));
	mode = data[0];
	n = parse(data, size);
	decode_each(n, mode, &e);

	stream = make_stream(n, mode, &stream_len);
	private_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/in.msr", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	at = fill_padded(fd, stream, stream_len);
	file = read_all(fd, &file_len);
	expect_code = e.error ? MS_EXIT_ERROR :
		      (mode & MODE_NO_TRAILER) ? MS_EXIT_TRUNCATED : MS_EXIT_OK;

	/* copy mode: the fast path and ms_decode() for every sample */
	code = run_stage(fd, at, path, MS_STACK_BYTES_COPY, false, mode, &copy_fast, &fast_len);
	CHECK(code == expect_code);
	check_output(copy_fast, fast_len, code, false, NULL, 0, &o);
	check_expected(&o, &e, true);
	code = run_stage(fd, at, path, MS_STACK_BYTES_COPY, true, mode, &copy_checked, &checked_len);
	CHECK(code == expect_code);
	check_output(copy_checked, checked_len, code, false, NULL, 0, &o);
	check_expected(&o, &e, true);
	/* with memory short, what goes out early depends on what the paths keep */
	if (!(mode & MODE_SMALL_ORDER))
		check_same_bytes(copy_fast, fast_len, copy_checked, checked_len);

	if (mode & MODE_REFER) {
		uint8_t *ref_fast, *ref_checked;
		size_t rf_len, rc_len;

		code = run_stage(fd, at, path, MS_STACK_BYTES_REFER, false, mode, &ref_fast, &rf_len);
		CHECK(code == expect_code);
		check_output(ref_fast, rf_len, code, true, file, file_len, &o);
		check_expected(&o, &e, false);
		code = run_stage(fd, at, path, MS_STACK_BYTES_REFER, true, mode, &ref_checked,
				 &rc_len);
		CHECK(code == expect_code);
		check_output(ref_checked, rc_len, code, true, file, file_len, &o);
		check_expected(&o, &e, false);
		if (!(mode & MODE_SMALL_ORDER)) {
			check_same_bytes(ref_fast, rf_len, ref_checked, rc_len);
			compare_refer(copy_fast, fast_len, ref_fast, rf_len, file, file_len);
		}
		free(ref_fast);
		free(ref_checked);
	}
	if (mode & MODE_UNMAPPED) {
		uint8_t *unmapped;
		size_t unmapped_len;

		code = run_unmapped(stream, stream_len, mode, &unmapped, &unmapped_len);
		CHECK(code == expect_code);
		check_output(unmapped, unmapped_len, code, false, NULL, 0, &o);
		check_expected(&o, &e, true);
		if (!(mode & MODE_SMALL_ORDER))
			check_same_bytes(copy_fast, fast_len, unmapped, unmapped_len);
		free(unmapped);
	}
	free(copy_fast);
	free(copy_checked);
	free(file);
	free(stream);
	close(fd);
	unlink(path);
	rmdir(dir);
	return 0;
}

MS_FUZZ_TARGET("fuzz-decode", ms_fuzz_decode)

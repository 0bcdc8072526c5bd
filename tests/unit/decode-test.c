/*
 * Unit tests of libcommon/perf: the decoder of kernel records (decode.c)
 * fed hand-built records, valid and malformed, the time ordering
 * (order.c), and the ms-decode stage over a stream in a temporary file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <msgpack.h>

#include "perf/decode.h"
#include "perf/order.h"
#include "perf/trim.h"
#include "stream/fastpack.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

/* ---- building kernel records ---- */

struct rec {
	uint8_t buf[70000];
	size_t len;
};

static void put(struct rec *r, const void *p, size_t n)
{
	assert_true(r->len + n <= sizeof(r->buf));
	memcpy(r->buf + r->len, p, n);
	r->len += n;
}

static void u64(struct rec *r, uint64_t v)
{
	put(r, &v, 8);
}

static void u32(struct rec *r, uint32_t v)
{
	put(r, &v, 4);
}

static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	r->len = 0;
	put(r, &h, sizeof(h));
}

/* A NUL-terminated string padded with zeros to 8 bytes, as the kernel does. */
static void str8(struct rec *r, const char *s)
{
	size_t n = strlen(s) + 1, padded = (n + 7) & ~(size_t)7;
	uint8_t zero[8] = { 0 };

	put(r, s, n);
	put(r, zero, padded - n);
}

/* Set header.size to the bytes written. */
static void finish(struct rec *r)
{
	uint16_t size = (uint16_t)r->len;

	memcpy(r->buf + 6, &size, 2);
}

/* The sample_id trailer for the attr below: TID, TIME, ID, CPU. */
static void trailer(struct rec *r, uint32_t pid, uint32_t tid, uint64_t time, uint64_t id)
{
	u32(r, pid);
	u32(r, tid);
	u64(r, time);
	u64(r, id);
	u32(r, 1);
	u32(r, 0);
}

/* What ms-collect asks for on this machine. */
#define REGS_MASK 0xff01ffull	/* 17 registers */
#define COLLECT_SAMPLE_TYPE                                                          \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |      \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |              \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

static struct ms_decoder dec;
static struct ms_decoded out;
static struct rec r;

static void attr_init(struct ms_attr *a, uint64_t sample_type, uint64_t id1, uint64_t id2)
{
	memset(a, 0, sizeof(*a));
	a->sample_type = sample_type;
	a->sample_regs_user = REGS_MASK;
	a->sample_stack_user = 8192;
	a->flags = MS_ATTR_SAMPLE_ID_ALL | MS_ATTR_BUILD_ID;
	a->n_ids = 2;
	a->ids[0] = id2;	/* unsorted on purpose */
	a->ids[1] = id1;
}

static int setup_collect_attr(void **state)
{
	static struct ms_attr a;

	attr_init(&a, COLLECT_SAMPLE_TYPE, 42, 43);
	ms_decoder_init(&dec);
	assert_int_equal(ms_decoder_add_attr(&dec, &a), 0);
	return 0;
}

static int decode(void)
{
	/* a copy of exactly len bytes, so that a tool like valgrind sees any overread */
	uint8_t *copy = malloc(r.len ? r.len : 1);
	int ret;

	memcpy(copy, r.buf, r.len);
	ret = ms_decode(&dec, 1, copy, r.len, &out);
	/* borrowed pointers: point them back into r.buf before freeing */
	if (ret == MS_DECODE_SAMPLE && out.u.sample.stack)
		out.u.sample.stack = r.buf + (out.u.sample.stack - copy);
	if (ret == MS_DECODE_MMAP)
		out.u.mmap.filename.ptr = (const char *)r.buf + ((const uint8_t *)out.u.mmap.filename.ptr - copy);
	if (ret == MS_DECODE_COMM)
		out.u.comm.comm.ptr = (const char *)r.buf + ((const uint8_t *)out.u.comm.comm.ptr - copy);
	free(copy);
	return ret;
}

static void assert_skip(const char *code)
{
	int ret = decode();

	if (ret != MS_DECODE_SKIP)
		fail_msg("expected a skip with '%s', got result %d", code, ret);
	assert_non_null(out.problem);
	if (strcmp(out.problem, code))
		fail_msg("expected problem '%s', got '%s' (%s)", code, out.problem, out.detail);
	assert_true(out.detail[0] != '\0');
}

/*
 * A sample as ms-collect's events write it: ip, pid/tid, time, id, cpu,
 * period, a callchain of nchain entries, regs (abi 2 and nregs values),
 * a stack copy of stack_size bytes of which dyn are kept.
 */
static void collect_sample(uint64_t id, const uint64_t *chain, uint64_t nchain,
			   unsigned nregs, uint64_t stack_size, uint64_t dyn)
{
	begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(&r, 0x401000);		/* ip */
	u32(&r, 100);			/* pid */
	u32(&r, 101);			/* tid */
	u64(&r, 5000);			/* time */
	u64(&r, id);
	u32(&r, 1);			/* cpu */
	u32(&r, 0);
	u64(&r, 250000);		/* period */
	u64(&r, nchain);
	for (uint64_t i = 0; i < nchain && chain; i++)
		u64(&r, chain[i]);
	u64(&r, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned i = 0; i < nregs; i++)
		u64(&r, 0x1000 + i);
	u64(&r, stack_size);
	if (stack_size) {
		for (uint64_t i = 0; i < stack_size / 8; i++)
			u64(&r, 0xabc0000 + i);
		u64(&r, dyn);
	}
	finish(&r);
}

static const uint64_t kuchain[] = {
	PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, 0xffffffff81000020ull,
	PERF_CONTEXT_USER, 0x401000, 0x401100, 0x401200,
};

/* ---- samples ---- */

static void test_sample_collect_layout(void **state)
{
	const struct ms_sample *s = &out.u.sample;

	collect_sample(42, kuchain, 7, 17, 64, 48);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(s->pid, 100);
	assert_int_equal(s->tid, 101);
	assert_int_equal(s->time, 5000);
	assert_int_equal(out.time, 5000);
	assert_int_equal(s->cpu, 1);
	assert_int_equal(s->period, 250000);
	assert_int_equal(s->ip, 0x401000);
	assert_int_equal(s->cpumode, MS_CPUMODE_USER);
	assert_int_equal(s->n_kchain, 2);
	assert_int_equal(s->kchain[0], 0xffffffff81000010ull);
	assert_int_equal(s->kchain[1], 0xffffffff81000020ull);
	assert_int_equal(s->n_uchain, 3);
	assert_int_equal(s->uchain[0], 0x401000);
	assert_int_equal(s->uchain[2], 0x401200);
	assert_int_equal(s->regs_abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s->regs_mask, REGS_MASK);
	assert_int_equal(s->n_regs, 17);
	assert_int_equal(s->regs[0], 0x1000);
	assert_int_equal(s->regs[16], 0x1010);
	assert_int_equal(s->stack_len, 48);
	assert_non_null(s->stack);
	{
		uint64_t first;

		memcpy(&first, s->stack, 8);
		assert_int_equal(first, 0xabc0000);
	}
	assert_int_equal(out.foreign_frames, 0);
}

/* ---- ms-collect's cut of stack copies (perf/trim.h) ---- */

static void test_trim_stack_copy(void **state)
{
	struct ms_trimmer *t = ms_trimmer_new();
	const struct ms_sample *s = &out.u.sample;
	static struct ms_attr a;
	static uint8_t orig[70000];
	const uint8_t *cut;
	uint32_t len, olen;
	uint64_t v;

	(void)state;
	assert_non_null(t);
	attr_init(&a, COLLECT_SAMPLE_TYPE, 42, 43);
	ms_trimmer_attr(t, &a);

	/* 8 KiB copied, 100 bytes readable: cut to 104, all else the kernel's */
	collect_sample(42, kuchain, 7, 17, 8192, 100);
	memcpy(orig, r.buf, r.len);
	olen = len = (uint32_t)r.len;
	cut = ms_trim(t, 1, orig, &len);
	assert_ptr_not_equal(cut, orig);
	assert_int_equal(len, olen - 8192 + 104);
	memcpy(r.buf, cut, len);
	r.len = len;
	assert_int_equal(((const struct perf_event_header *)r.buf)->size, len);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(s->stack_len, 100);
	assert_int_equal(s->n_regs, 17);
	assert_int_equal(s->n_kchain, 2);
	assert_int_equal(s->n_uchain, 3);
	assert_memory_equal(s->stack, orig + (s->stack - r.buf), 100);
	memcpy(&v, s->stack - 8, 8);
	assert_int_equal(v, 104);		/* the copy's size field */
	assert_int_equal(s->stack[100] | s->stack[103], 0);	/* padding zeroed */

	/* nothing readable: a copy of size 0, without bytes or dyn_size */
	collect_sample(42, kuchain, 7, 17, 8192, 0);
	memcpy(orig, r.buf, r.len);
	olen = len = (uint32_t)r.len;
	cut = ms_trim(t, 1, orig, &len);
	assert_int_equal(len, olen - 8192 - 8);
	memcpy(r.buf, cut, len);
	r.len = len;
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(s->stack_len, 0);
	assert_null(s->stack);
	memcpy(&v, r.buf + len - 8, 8);
	assert_int_equal(v, 0);

	/* nothing to cut: the same bytes, not a copy */
	collect_sample(42, kuchain, 7, 17, 64, 64);
	len = (uint32_t)r.len;
	assert_ptr_equal(ms_trim(t, 1, r.buf, &len), r.buf);
	assert_int_equal(len, r.len);
	collect_sample(42, kuchain, 7, 17, 64, 60);	/* 60 rounds up to 64 */
	len = (uint32_t)r.len;
	assert_ptr_equal(ms_trim(t, 1, r.buf, &len), r.buf);

	/* what does not decode goes as it is, for ms-decode to judge */
	collect_sample(99, kuchain, 7, 17, 8192, 100);	/* unknown id */
	len = (uint32_t)r.len;
	assert_ptr_equal(ms_trim(t, 1, r.buf, &len), r.buf);
	collect_sample(42, kuchain, 7, 17, 8192, 9000);	/* dyn_size over the copy */
	len = (uint32_t)r.len;
	assert_ptr_equal(ms_trim(t, 1, r.buf, &len), r.buf);
	collect_sample(42, kuchain, 7, 17, 8192, 100);
	len = (uint32_t)r.len - 8;			/* cut short */
	assert_ptr_equal(ms_trim(t, 1, r.buf, &len), r.buf);
	begin(&r, PERF_RECORD_COMM, 0);
	u32(&r, 1);
	u32(&r, 1);
	str8(&r, "x");
	trailer(&r, 1, 1, 5, 42);
	finish(&r);
	len = (uint32_t)r.len;
	assert_ptr_equal(ms_trim(t, 1, r.buf, &len), r.buf);
	ms_trimmer_free(t);
}

/* Every field the decoder knows, in the kernel's order. */
static void test_sample_every_field(void **state)
{
	static struct ms_attr a;
	const struct ms_sample *s = &out.u.sample;
	uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		      PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
		      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
		      PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
		      PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

	attr_init(&a, st, 7, 8);
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_LOST;
	a.sample_regs_user = 0x7;	/* 3 registers */
	ms_decoder_init(&dec);
	assert_int_equal(ms_decoder_add_attr(&dec, &a), 0);

	begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(&r, 8);			/* identifier */
	u64(&r, 0xffffffff81234567ull);	/* ip */
	u32(&r, 7); u32(&r, 9);		/* pid tid */
	u64(&r, 123456789);		/* time */
	u64(&r, 0xdead);		/* addr */
	u64(&r, 8);			/* id */
	u64(&r, 8);			/* stream id */
	u32(&r, 3); u32(&r, 0);		/* cpu */
	u64(&r, 1000);			/* period */
	u64(&r, 2);			/* read: nr */
	u64(&r, 11); u64(&r, 12);	/* enabled running */
	u64(&r, 1); u64(&r, 7); u64(&r, 0);	/* value id lost */
	u64(&r, 2); u64(&r, 8); u64(&r, 0);
	u64(&r, 3);			/* callchain: 3 entries, no user part */
	u64(&r, PERF_CONTEXT_KERNEL);
	u64(&r, 0xffffffff81234567ull);
	u64(&r, 0xffffffff81000000ull);
	u32(&r, 12);			/* raw: 12 bytes, so 4 + 12 ends aligned */
	put(&r, "0123456789ab", 12);
	u64(&r, PERF_SAMPLE_REGS_ABI_64);
	u64(&r, 1); u64(&r, 2); u64(&r, 3);
	u64(&r, 16);			/* stack copy */
	u64(&r, 0x1111); u64(&r, 0x2222);
	u64(&r, 16);			/* dyn_size */
	finish(&r);

	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(s->ip, 0xffffffff81234567ull);
	assert_int_equal(s->pid, 7);
	assert_int_equal(s->tid, 9);
	assert_int_equal(s->time, 123456789);
	assert_int_equal(s->cpu, 3);		/* PERF_SAMPLE_CPU wins over the ring */
	assert_int_equal(s->period, 1000);
	assert_int_equal(s->cpumode, MS_CPUMODE_KERNEL);
	assert_int_equal(s->n_kchain, 2);
	assert_int_equal(s->n_uchain, 0);
	assert_int_equal(s->n_regs, 3);
	assert_int_equal(s->regs[2], 3);
	assert_int_equal(s->stack_len, 16);

	/* the same with an unaligned raw part is refused */
	r.len = 0;
	begin(&r, PERF_RECORD_SAMPLE, 0);
	u64(&r, 8); u64(&r, 1); u32(&r, 7); u32(&r, 9); u64(&r, 1); u64(&r, 0);
	u64(&r, 8); u64(&r, 8); u32(&r, 3); u32(&r, 0); u64(&r, 1);
	u64(&r, 1); u64(&r, 11); u64(&r, 12); u64(&r, 1); u64(&r, 8); u64(&r, 0);
	u64(&r, 0);			/* empty callchain */
	u32(&r, 8);			/* raw: 4 + 8 is not a multiple of 8 */
	put(&r, "01234567", 8);
	put(&r, "\0\0\0\0", 4);
	u64(&r, 0);			/* abi none */
	u64(&r, 0);			/* no stack */
	finish(&r);
	assert_skip("truncated-sample");
}

static void test_callchain_contexts(void **state)
{
	const struct ms_sample *s = &out.u.sample;
	/* no marker first: frames belong to the sample's mode (user) */
	const uint64_t bare[] = { 0x400001, 0x400002 };
	const uint64_t guest[] = { PERF_CONTEXT_USER, 0x400001, PERF_CONTEXT_GUEST_KERNEL,
				   0x1, 0x2, PERF_CONTEXT_USER, 0x400003 };

	collect_sample(42, kuchain, 7, 17, 0, 0);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(s->n_kchain, 2);
	assert_int_equal(s->n_uchain, 3);
	for (unsigned i = 0; i < s->n_kchain; i++)
		assert_true(s->kchain[i] < (uint64_t)PERF_CONTEXT_MAX);
	for (unsigned i = 0; i < s->n_uchain; i++)
		assert_true(s->uchain[i] < (uint64_t)PERF_CONTEXT_MAX);

	collect_sample(42, bare, 2, 17, 0, 0);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(s->n_kchain, 0);
	assert_int_equal(s->n_uchain, 2);
	assert_int_equal(s->uchain[1], 0x400002);

	collect_sample(42, guest, 7, 17, 0, 0);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(s->n_uchain, 2);
	assert_int_equal(s->uchain[1], 0x400003);
	assert_int_equal(out.foreign_frames, 2);
}

static void test_callchain_nr_past_the_end(void **state)
{
	/* claims 1000 entries, holds 7 and the rest */
	collect_sample(42, kuchain, 7, 17, 0, 0);
	memcpy(r.buf + 8 + 48, &(uint64_t){ 1000 }, 8);
	assert_skip("truncated-sample");
	/* a count near 2^64 must not wrap any arithmetic */
	memcpy(r.buf + 8 + 48, &(uint64_t){ UINT64_MAX / 4 + 1 }, 8);
	assert_skip("truncated-sample");
}

static void test_callchain_too_long(void **state)
{
	static uint64_t chain[MS_CHAIN_MAX + 1];

	for (unsigned i = 0; i < MS_CHAIN_MAX + 1; i++)
		chain[i] = 0x400000 + i;
	collect_sample(42, chain, MS_CHAIN_MAX + 1, 17, 0, 0);
	assert_skip("callchain-too-long");
	collect_sample(42, chain, MS_CHAIN_MAX, 17, 0, 0);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(out.u.sample.n_uchain, MS_CHAIN_MAX);
}

static void test_regs_count_mismatch(void **state)
{
	/* 3 registers where the mask says 17, and nothing after them */
	begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(&r, 0x401000); u32(&r, 100); u32(&r, 101); u64(&r, 5000); u64(&r, 42);
	u32(&r, 1); u32(&r, 0); u64(&r, 1); u64(&r, 0);
	u64(&r, PERF_SAMPLE_REGS_ABI_64);
	u64(&r, 1); u64(&r, 2); u64(&r, 3);
	finish(&r);
	assert_skip("truncated-sample");

	/*
	 * 18 registers, the last 0, and an empty stack: the 18th is taken
	 * for the stack size, and the sample is longer than its fields
	 */
	collect_sample(42, NULL, 0, 18, 0, 0);
	memcpy(r.buf + 8 + 64 + 17 * 8, &(uint64_t){ 0 }, 8);
	assert_skip("sample-size-mismatch");

	/* 16 registers: the stack size is read from where the last one is */
	collect_sample(42, NULL, 0, 16, 0, 0);
	assert_int_not_equal(decode(), MS_DECODE_SAMPLE);

	/* an ABI the kernel does not have */
	collect_sample(42, NULL, 0, 17, 0, 0);
	memcpy(r.buf + 8 + 56, &(uint64_t){ 3 }, 8);
	assert_skip("bad-regs-abi");
}

static void test_regs_abi_none_and_no_stack(void **state)
{
	const struct ms_sample *s = &out.u.sample;

	/* a kernel thread's sample: ABI none, no registers, stack size 0 */
	begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(&r, 0xffffffff81000000ull); u32(&r, 0); u32(&r, 0); u64(&r, 5000); u64(&r, 43);
	u32(&r, 0); u32(&r, 0); u64(&r, 1); u64(&r, 0);
	u64(&r, PERF_SAMPLE_REGS_ABI_NONE);
	u64(&r, 0);
	finish(&r);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(s->regs_abi, 0);
	assert_int_equal(s->regs_mask, 0);
	assert_int_equal(s->n_regs, 0);
	assert_int_equal(s->stack_len, 0);
	assert_null(s->stack);
	assert_int_equal(s->cpumode, MS_CPUMODE_KERNEL);
}

static void test_dyn_size_over_size(void **state)
{
	collect_sample(42, kuchain, 7, 17, 64, 72);
	assert_skip("bad-stack-size");
	/* dyn_size equal to size is fine */
	collect_sample(42, kuchain, 7, 17, 64, 64);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(out.u.sample.stack_len, 64);
}

static void test_stack_past_the_end(void **state)
{
	size_t at;

	collect_sample(42, kuchain, 7, 17, 64, 64);
	/* the stack size field follows the 17 registers */
	at = 8 + 48 + 8 + 7 * 8 + 8 + 17 * 8;
	memcpy(r.buf + at, &(uint64_t){ 72 }, 8);
	assert_skip("truncated-sample");
	memcpy(r.buf + at, &(uint64_t){ 1ull << 40 }, 8);
	assert_skip("bad-stack-size");
	memcpy(r.buf + at, &(uint64_t){ 60 }, 8);	/* not a multiple of 8 */
	assert_skip("bad-stack-size");
	/* every cut of a valid sample is refused, never read past */
	collect_sample(42, kuchain, 7, 17, 64, 64);
	for (size_t cut = 8; cut < r.len; cut += 8) {
		size_t full = r.len;

		r.len = cut;
		finish(&r);
		assert_int_equal(decode(), MS_DECODE_SKIP);
		r.len = full;
	}
}

static void test_bad_sizes(void **state)
{
	collect_sample(42, kuchain, 7, 17, 0, 0);
	/* odd size: header and bytes agree but are not a multiple of 8 */
	r.len -= 4;
	finish(&r);
	assert_skip("bad-record-size");
	/* header says more than the raw record holds */
	collect_sample(42, kuchain, 7, 17, 0, 0);
	r.len -= 8;
	assert_skip("bad-record-size");
	/* smaller than a header */
	r.len = 4;
	assert_skip("bad-record-size");
	/* a header that claims 4 bytes */
	begin(&r, PERF_RECORD_SAMPLE, 0);
	finish(&r);
	memcpy(r.buf + 6, &(uint16_t){ 4 }, 2);
	assert_skip("bad-record-size");
	/* just a header: a sample with no fields */
	begin(&r, PERF_RECORD_SAMPLE, 0);
	finish(&r);
	assert_skip("truncated-sample");
}

static void test_unknown_id(void **state)
{
	collect_sample(99, kuchain, 7, 17, 0, 0);
	assert_skip("unknown-id");
	assert_non_null(strstr(out.detail, "99"));
	collect_sample(43, kuchain, 7, 17, 0, 0);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
}

static void test_no_attr_is_fatal(void **state)
{
	ms_decoder_init(&dec);
	collect_sample(42, kuchain, 7, 17, 0, 0);
	assert_int_equal(decode(), MS_DECODE_FATAL);
	assert_string_equal(out.problem, "no-attr");
}

/* Two attrs of different layouts: IDENTIFIER picks the one to decode with. */
static void test_identifier_picks_attr(void **state)
{
	static struct ms_attr a, b;

	attr_init(&a, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME, 1, 2);
	attr_init(&b, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, 3, 4);
	a.flags = b.flags = 0;
	ms_decoder_init(&dec);
	assert_int_equal(ms_decoder_add_attr(&dec, &a), 0);
	assert_int_equal(ms_decoder_add_attr(&dec, &b), 0);

	begin(&r, PERF_RECORD_SAMPLE, 0);
	u64(&r, 2);		/* a's */
	u64(&r, 777);
	finish(&r);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(out.time, 777);

	begin(&r, PERF_RECORD_SAMPLE, 0);
	u64(&r, 3);		/* b's */
	u32(&r, 5); u32(&r, 6);
	u64(&r, 888);
	finish(&r);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(out.u.sample.tid, 6);
	assert_int_equal(out.time, 888);

	begin(&r, PERF_RECORD_SAMPLE, 0);
	u64(&r, 5);		/* nobody's */
	u64(&r, 1);
	finish(&r);
	assert_skip("unknown-id");
}

static void test_decoder_capacity(void **state)
{
	static struct ms_attr a;

	attr_init(&a, COLLECT_SAMPLE_TYPE, 1, 2);
	ms_decoder_init(&dec);
	for (int i = 0; i < MS_DECODE_ATTRS_MAX; i++)
		assert_int_equal(ms_decoder_add_attr(&dec, &a), 0);
	assert_int_equal(ms_decoder_add_attr(&dec, &a), -1);
}

/* ---- other records ---- */

static void mmap2(uint16_t misc, const char *filename, bool build_id)
{
	begin(&r, PERF_RECORD_MMAP2, misc | (build_id ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0));
	u32(&r, 100); u32(&r, 100);
	u64(&r, 0x400000); u64(&r, 0x2000); u64(&r, 0x1000);
	if (build_id) {
		uint8_t id[24] = { 20, 0, 0, 0 };

		for (int i = 0; i < 20; i++)
			id[4 + i] = (uint8_t)(0xa0 + i);
		put(&r, id, sizeof(id));
	} else {
		u32(&r, 8); u32(&r, 1);		/* maj min */
		u64(&r, 123456); u64(&r, 7);	/* ino ino_generation */
	}
	u32(&r, 5); u32(&r, 2);			/* prot flags */
	if (filename)
		str8(&r, filename);
	trailer(&r, 100, 100, 4000, 42);
	finish(&r);
}

static void test_mmap2_without_build_id(void **state)
{
	const struct ms_mmap *m = &out.u.mmap;

	mmap2(PERF_RECORD_MISC_USER, "/usr/bin/burn", false);
	assert_int_equal(decode(), MS_DECODE_MMAP);
	assert_int_equal(m->pid, 100);
	assert_int_equal(m->start, 0x400000);
	assert_int_equal(m->len, 0x2000);
	assert_int_equal(m->pgoff, 0x1000);
	assert_int_equal(m->maj, 8);
	assert_int_equal(m->min, 1);
	assert_int_equal(m->ino, 123456);
	assert_int_equal(m->ino_generation, 7);
	assert_int_equal(m->prot, 5);
	assert_int_equal(m->flags, 2);
	assert_int_equal(m->cpumode, MS_CPUMODE_USER);
	assert_int_equal(m->build_id_len, 0);
	assert_false(m->synthesized);
	assert_int_equal(m->time, 4000);
	assert_int_equal(out.time, 4000);
	assert_int_equal(m->filename.len, strlen("/usr/bin/burn"));
	assert_memory_equal(m->filename.ptr, "/usr/bin/burn", m->filename.len);
}

static void test_mmap2_with_build_id(void **state)
{
	const struct ms_mmap *m = &out.u.mmap;

	mmap2(PERF_RECORD_MISC_USER, "/usr/lib/libc.so.6", true);
	assert_int_equal(decode(), MS_DECODE_MMAP);
	assert_int_equal(m->build_id_len, 20);
	assert_int_equal(m->build_id[0], 0xa0);
	assert_int_equal(m->build_id[19], 0xa0 + 19);
	assert_int_equal(m->maj, 0);
	assert_int_equal(m->ino, 0);
	assert_int_equal(m->prot, 5);
	assert_memory_equal(m->filename.ptr, "/usr/lib/libc.so.6", m->filename.len);
	/* a build id longer than 20 bytes */
	r.buf[8 + 32] = 21;
	assert_skip("bad-build-id");
}

static void test_mmap_v1(void **state)
{
	begin(&r, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	u32(&r, 100); u32(&r, 102);
	u64(&r, 0x7f0000000000ull); u64(&r, 0x1000); u64(&r, 0);
	str8(&r, "//anon");
	trailer(&r, 100, 102, 4100, 43);
	finish(&r);
	assert_int_equal(decode(), MS_DECODE_MMAP);
	assert_int_equal(out.u.mmap.tid, 102);
	assert_int_equal(out.u.mmap.start, 0x7f0000000000ull);
	assert_int_equal(out.u.mmap.prot, 0);
	assert_memory_equal(out.u.mmap.filename.ptr, "//anon", 6);
	assert_int_equal(out.u.mmap.filename.len, 6);
}

static void test_filename_not_terminated(void **state)
{
	begin(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	u32(&r, 100); u32(&r, 100);
	u64(&r, 0x400000); u64(&r, 0x2000); u64(&r, 0);
	u32(&r, 8); u32(&r, 1); u64(&r, 1); u64(&r, 1);
	u32(&r, 5); u32(&r, 2);
	put(&r, "/usr/bin/burnXXX", 16);	/* no NUL */
	trailer(&r, 100, 100, 4000, 42);
	finish(&r);
	assert_skip("unterminated-string");
	/* the NUL may not be found inside the trailer either */
	begin(&r, PERF_RECORD_COMM, 0);
	u32(&r, 100); u32(&r, 100);
	put(&r, "burnburn", 8);
	trailer(&r, 0, 0, 0, 42);	/* pid 0: zero bytes right after */
	finish(&r);
	assert_skip("unterminated-string");
	/* no room at all for a name */
	begin(&r, PERF_RECORD_COMM, 0);
	u32(&r, 100); u32(&r, 100);
	trailer(&r, 100, 100, 1, 42);
	finish(&r);
	assert_skip("unterminated-string");
}

static void test_comm_exec(void **state)
{
	begin(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	u32(&r, 200); u32(&r, 201);
	str8(&r, "burn");
	trailer(&r, 200, 201, 6000, 42);
	finish(&r);
	assert_int_equal(decode(), MS_DECODE_COMM);
	assert_true(out.u.comm.exec);
	assert_false(out.u.comm.synthesized);
	assert_int_equal(out.u.comm.pid, 200);
	assert_int_equal(out.u.comm.tid, 201);
	assert_int_equal(out.u.comm.time, 6000);
	assert_int_equal(out.u.comm.comm.len, 4);
	assert_memory_equal(out.u.comm.comm.ptr, "burn", 4);

	/* a thread renamed: no exec flag */
	r.buf[4] = 0;
	r.buf[5] = 0;
	assert_int_equal(decode(), MS_DECODE_COMM);
	assert_false(out.u.comm.exec);
}

static void task(uint32_t type, uint64_t body_time, uint64_t trailer_time)
{
	begin(&r, type, 0);
	u32(&r, 300); u32(&r, 1);
	u32(&r, 301); u32(&r, 1);
	u64(&r, body_time);
	trailer(&r, 300, 301, trailer_time, 43);
	finish(&r);
}

static void test_fork_exit(void **state)
{
	task(PERF_RECORD_FORK, 7000, 7001);
	assert_int_equal(decode(), MS_DECODE_FORK);
	assert_int_equal(out.u.task.pid, 300);
	assert_int_equal(out.u.task.ppid, 1);
	assert_int_equal(out.u.task.tid, 301);
	assert_int_equal(out.u.task.ptid, 1);
	assert_int_equal(out.u.task.time, 7001);
	assert_int_equal(out.time, 7001);

	task(PERF_RECORD_EXIT, 8000, 8000);
	assert_int_equal(decode(), MS_DECODE_EXIT);
	assert_int_equal(out.u.task.tid, 301);
}

static void test_trailer_missing_bytes(void **state)
{
	/* an exit record whose trailer lost its last 8 bytes */
	task(PERF_RECORD_EXIT, 8000, 8000);
	r.len -= 8;
	finish(&r);
	assert_skip("truncated-record");
	/* a comm with no trailer at all */
	begin(&r, PERF_RECORD_COMM, 0);
	u32(&r, 1); u32(&r, 1);
	str8(&r, "x");
	finish(&r);
	assert_skip("truncated-record");
	/* a trailer naming an unknown event */
	begin(&r, PERF_RECORD_EXIT, 0);
	u32(&r, 1); u32(&r, 1); u32(&r, 1); u32(&r, 1); u64(&r, 1);
	trailer(&r, 1, 1, 1, 1234);
	finish(&r);
	assert_skip("unknown-id");
}

static void test_lost(void **state)
{
	begin(&r, PERF_RECORD_LOST, 0);
	u64(&r, 42); u64(&r, 17);
	trailer(&r, 0, 0, 9000, 42);
	finish(&r);
	assert_int_equal(decode(), MS_DECODE_LOST);
	assert_int_equal(out.u.lost.source, MS_LOST_KERNEL);
	assert_int_equal(out.u.lost.id, 42);
	assert_int_equal(out.u.lost.count, 17);
	assert_int_equal(out.u.lost.time, 9000);

	/* the body's id must be known too */
	begin(&r, PERF_RECORD_LOST, 0);
	u64(&r, 77); u64(&r, 17);
	trailer(&r, 0, 0, 9000, 42);
	finish(&r);
	assert_skip("unknown-id");

	begin(&r, PERF_RECORD_LOST_SAMPLES, 0);
	u64(&r, 5);
	trailer(&r, 0, 0, 9100, 43);
	finish(&r);
	assert_int_equal(decode(), MS_DECODE_LOST);
	assert_int_equal(out.u.lost.count, 5);
	assert_int_equal(out.u.lost.id, 43);
}

static void test_throttle(void **state)
{
	begin(&r, PERF_RECORD_THROTTLE, 0);
	u64(&r, 9500); u64(&r, 42); u64(&r, 42);
	trailer(&r, 0, 0, 9501, 42);
	finish(&r);
	assert_int_equal(decode(), MS_DECODE_THROTTLE);
	assert_false(out.u.throttle.unthrottle);
	assert_int_equal(out.u.throttle.id, 42);
	assert_int_equal(out.u.throttle.time, 9501);

	r.buf[0] = PERF_RECORD_UNTHROTTLE;
	assert_int_equal(decode(), MS_DECODE_THROTTLE);
	assert_true(out.u.throttle.unthrottle);
}

static void test_unknown_type(void **state)
{
	/* a cgroup record: known to the kernel, not decoded here */
	begin(&r, PERF_RECORD_CGROUP, 0);
	u64(&r, 7);
	str8(&r, "/a");
	trailer(&r, 1, 1, 1, 42);
	finish(&r);
	assert_skip("unknown-kernel-record");
	assert_non_null(strstr(out.detail, "19"));
	assert_int_equal(out.type, PERF_RECORD_CGROUP);

	begin(&r, PERF_RECORD_KSYMBOL, 0);
	u64(&r, 0xffffffffc0000000ull); u32(&r, 64); u32(&r, 1);
	str8(&r, "bpf_prog_x");
	trailer(&r, 1, 1, 1, 42);
	finish(&r);
	assert_skip("unknown-kernel-record");
	assert_non_null(strstr(out.detail, "17"));

	begin(&r, 250, 0);
	u64(&r, 0);
	finish(&r);
	assert_skip("unknown-kernel-record");
	assert_non_null(strstr(out.detail, "250"));
}

/* Random bytes behind a valid header: never a crash, never a bad result. */
static void test_noise(void **state)
{
	srand(12345);
	for (int i = 0; i < 20000; i++) {
		uint32_t types[] = { PERF_RECORD_SAMPLE, PERF_RECORD_MMAP2, PERF_RECORD_COMM,
				     PERF_RECORD_MMAP, PERF_RECORD_LOST, PERF_RECORD_FORK };
		size_t n = 8 * (1 + rand() % 40);
		int ret;

		begin(&r, types[rand() % 6], (uint16_t)rand());
		while (r.len < n) {
			/* small numbers so that counts sometimes fit */
			uint64_t v = rand() % 4 ? (uint64_t)(rand() % 64) : ((uint64_t)rand() << 32 | rand());

			u64(&r, v);
		}
		finish(&r);
		ret = decode();
		assert_true(ret == MS_DECODE_SKIP || (ret >= MS_DECODE_SAMPLE && ret <= MS_DECODE_THROTTLE));
		if (ret == MS_DECODE_SAMPLE) {
			assert_true(out.u.sample.n_kchain + out.u.sample.n_uchain <= MS_CHAIN_MAX);
			assert_true(out.u.sample.stack_len <= r.len);
		}
	}
}

/* ---- off-CPU: sched_switch samples and switch records ---- */

#define TP_CONFIG 372
#define TP_SAMPLE_TYPE (COLLECT_SAMPLE_TYPE | PERF_SAMPLE_RAW)

/* sched_switch's format on this kernel: 64 bytes of raw data. */
static const char *const tp_names[] = {
	"common_type", "common_flags", "common_preempt_count", "common_pid", "prev_comm",
	"prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio",
};
static const uint64_t tp_offsets[] = { 0, 2, 3, 4, 8, 24, 28, 32, 40, 56, 60 };
static const uint64_t tp_sizes[] = { 2, 1, 1, 4, 16, 4, 4, 8, 16, 4, 4 };
static const uint64_t tp_signed[] = { 0, 0, 0, 1, 0, 1, 1, 1, 0, 1, 1 };
#define TP_FIELDS 11
#define TP_PREV_STATE 7
#define TP_PREV_PID 5

static void tracepoint_init(struct ms_tracepoint *t, const char *name)
{
	memset(t, 0, sizeof(*t));
	t->config = TP_CONFIG;
	t->name = (struct ms_str){ name, (uint32_t)strlen(name) };
	t->n_fields = t->n_offsets = t->n_sizes = t->n_signed = TP_FIELDS;
	for (int i = 0; i < TP_FIELDS; i++) {
		t->fields[i] = (struct ms_str){ tp_names[i], (uint32_t)strlen(tp_names[i]) };
		t->offsets[i] = tp_offsets[i];
		t->sizes[i] = tp_sizes[i];
		t->is_signed[i] = tp_signed[i];
	}
}

/* The tracepoint's events (ids 50, 51), then the sampler's (42, 43), as ms-collect writes. */
static void setup_off_cpu_decoder(const struct ms_tracepoint *t)
{
	static struct ms_attr tp, sampler;

	attr_init(&tp, TP_SAMPLE_TYPE, 50, 51);
	tp.type = PERF_TYPE_TRACEPOINT;
	tp.config = TP_CONFIG;
	attr_init(&sampler, COLLECT_SAMPLE_TYPE, 42, 43);
	ms_decoder_init(&dec);
	if (t)
		assert_int_equal(ms_decoder_add_tracepoint(&dec, t), 0);
	assert_int_equal(ms_decoder_add_attr(&dec, &tp), 0);
	assert_int_equal(ms_decoder_add_attr(&dec, &sampler), 0);
}

static int setup_off_cpu(void **state)
{
	static struct ms_tracepoint t;

	tracepoint_init(&t, "sched:sched_switch");
	setup_off_cpu_decoder(&t);
	return 0;
}

/*
 * A sched_switch sample of thread 101 with the fields of collect_sample()
 * and raw data of raw_len bytes (the kernel's: 68, which with its u32 size
 * makes 72) whose prev_pid is prev_pid and prev_state state; raw_size is
 * the size the record claims, usually raw_len.
 */
static void switch_out_sample(uint64_t id, uint32_t prev_pid, uint64_t state, uint32_t raw_len,
			      uint32_t raw_size, uint64_t stack_size)
{
	uint8_t raw[256] = { 0 };

	assert_true(raw_len <= sizeof(raw) && (raw_len + 4) % 8 == 0);
	memcpy(raw + 24, &prev_pid, 4);
	memcpy(raw + 32, &state, 8);
	memcpy(raw + 56, &(uint32_t){ 0 }, 4);	/* next_pid: the idle task */
	begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(&r, 0xffffffff81000030ull);	/* ip: in the kernel's __schedule */
	u32(&r, 100);
	u32(&r, 101);
	u64(&r, 6000);
	u64(&r, id);
	u32(&r, 1);
	u32(&r, 0);
	u64(&r, 1);			/* period */
	u64(&r, 7);
	for (int i = 0; i < 7; i++)
		u64(&r, kuchain[i]);
	u32(&r, raw_size);
	put(&r, raw, raw_len);
	u64(&r, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned i = 0; i < 17; i++)
		u64(&r, 0x1000 + i);
	u64(&r, stack_size);
	if (stack_size) {
		for (uint64_t i = 0; i < stack_size / 8; i++)
			u64(&r, 0xabc0000 + i);
		u64(&r, stack_size);
	}
	finish(&r);
}

static int decode_switch_out(void)
{
	int ret = decode();

	if (ret == MS_DECODE_SWITCH_OUT && out.u.switch_out.sample.stack)
		out.u.switch_out.sample.stack = NULL;	/* pointed into the freed copy */
	return ret;
}

static void test_switch_out_sample(void **state)
{
	const struct ms_switch_out *so = &out.u.switch_out;
	static const struct {
		uint64_t state;
		uint32_t cause;
	} cases[] = {
		{ 1, MS_CAUSE_SLEEPING }, { 2, MS_CAUSE_BLOCKED }, { 0, MS_CAUSE_PREEMPTED },
		{ 0x100, MS_CAUSE_PREEMPTED }, { 0x80, MS_CAUSE_UNKNOWN },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		switch_out_sample(51, 101, cases[i].state, 68, 68, 64);
		assert_int_equal(decode_switch_out(), MS_DECODE_SWITCH_OUT);
		assert_int_equal(so->state, cases[i].state);
		assert_int_equal(so->cause, cases[i].cause);
	}
	/* the sample's fields, as a SAMPLE's */
	assert_int_equal(so->sample.pid, 100);
	assert_int_equal(so->sample.tid, 101);
	assert_int_equal(so->sample.time, 6000);
	assert_int_equal(out.time, 6000);
	assert_int_equal(so->sample.period, 1);
	assert_int_equal(so->sample.cpumode, MS_CPUMODE_KERNEL);
	assert_int_equal(so->sample.n_kchain, 2);
	assert_int_equal(so->sample.n_uchain, 3);
	assert_int_equal(so->sample.uchain[0], 0x401000);
	assert_int_equal(so->sample.n_regs, 17);
	assert_int_equal(so->sample.regs[16], 0x1000 + 16);
	assert_int_equal(so->sample.stack_len, 64);
	/* the sampler's samples are samples still */
	collect_sample(43, kuchain, 7, 17, 64, 48);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	assert_int_equal(out.u.sample.stack_len, 48);
}

/* A prev_state of 4 bytes (a 32-bit kernel's long) is read as such. */
static void test_switch_out_state_of_4_bytes(void **state)
{
	static struct ms_tracepoint t;

	tracepoint_init(&t, "sched:sched_switch");
	t.sizes[TP_PREV_STATE] = 4;
	setup_off_cpu_decoder(&t);
	switch_out_sample(50, 101, 0xffffffff00000002ull, 68, 68, 0);
	assert_int_equal(decode_switch_out(), MS_DECODE_SWITCH_OUT);
	assert_int_equal(out.u.switch_out.state, 2);
	assert_int_equal(out.u.switch_out.cause, MS_CAUSE_BLOCKED);
}

static void test_switch_out_raw_too_short(void **state)
{
	/* 28 bytes of raw data: prev_pid (24..28) in, prev_state (32..40) out */
	switch_out_sample(50, 101, 1, 28, 28, 0);
	assert_skip("truncated-raw");
	assert_non_null(strstr(out.detail, "28 bytes of raw data"));
	/* 36: prev_state cut in half */
	switch_out_sample(50, 101, 1, 36, 36, 0);
	assert_skip("truncated-raw");
}

static void test_switch_out_raw_size_past_record(void **state)
{
	switch_out_sample(50, 101, 1, 68, 2000, 0);
	assert_skip("truncated-sample");
	assert_non_null(strstr(out.detail, "raw data of 2000 bytes"));
	/* one byte more than there is: the u32 and the data no longer end aligned either */
	switch_out_sample(50, 101, 1, 68, 69, 0);
	assert_skip("truncated-sample");
}

static void test_switch_out_prev_pid_mismatch(void **state)
{
	switch_out_sample(50, 999, 1, 68, 68, 0);
	assert_skip("switch-out-tid-mismatch");
	assert_non_null(strstr(out.detail, "999"));
}

static void test_switch_out_bad_formats(void **state)
{
	static struct ms_tracepoint t;

	/* prev_state of 2 bytes */
	tracepoint_init(&t, "sched:sched_switch");
	t.sizes[TP_PREV_STATE] = 2;
	setup_off_cpu_decoder(&t);
	switch_out_sample(50, 101, 1, 68, 68, 0);
	assert_skip("bad-tracepoint-format");
	assert_non_null(strstr(out.detail, "2 bytes wide"));
	/* no prev_state */
	tracepoint_init(&t, "sched:sched_switch");
	t.fields[TP_PREV_STATE] = (struct ms_str){ "prev_stat", 9 };
	setup_off_cpu_decoder(&t);
	switch_out_sample(50, 101, 1, 68, 68, 0);
	assert_skip("bad-tracepoint-format");
	/* prev_state far past any record */
	tracepoint_init(&t, "sched:sched_switch");
	t.offsets[TP_PREV_STATE] = 1ull << 40;
	setup_off_cpu_decoder(&t);
	switch_out_sample(50, 101, 1, 68, 68, 0);
	assert_skip("bad-tracepoint-format");
	/* prev_pid of 8 bytes */
	tracepoint_init(&t, "sched:sched_switch");
	t.sizes[TP_PREV_PID] = 8;
	setup_off_cpu_decoder(&t);
	switch_out_sample(50, 101, 1, 68, 68, 0);
	assert_skip("bad-tracepoint-format");
	/* without prev_pid the tid is not checked */
	tracepoint_init(&t, "sched:sched_switch");
	t.fields[TP_PREV_PID] = (struct ms_str){ "prev_tid", 8 };
	setup_off_cpu_decoder(&t);
	switch_out_sample(50, 999, 1, 68, 68, 0);
	assert_int_equal(decode_switch_out(), MS_DECODE_SWITCH_OUT);
	/* a later record for the same config replaces the earlier */
	tracepoint_init(&t, "sched:sched_switch");
	t.sizes[TP_PREV_STATE] = 2;
	assert_int_equal(ms_decoder_add_tracepoint(&dec, &t), 0);
	assert_int_equal(dec.n_tracepoints, 1);
	assert_skip("bad-tracepoint-format");
}

static void test_switch_out_unknown_tracepoint(void **state)
{
	static struct ms_tracepoint t;

	tracepoint_init(&t, "sched:sched_wakeup");
	setup_off_cpu_decoder(&t);
	switch_out_sample(50, 101, 1, 68, 68, 0);
	assert_skip("unknown-tracepoint");
	assert_non_null(strstr(out.detail, "sched:sched_wakeup"));
}

static void test_switch_out_no_tracepoint_record(void **state)
{
	setup_off_cpu_decoder(NULL);
	switch_out_sample(50, 101, 1, 68, 68, 0);
	assert_skip("no-tracepoint-format");
	assert_non_null(strstr(out.detail, "372"));
	/* the sampler's samples still decode */
	collect_sample(42, kuchain, 7, 17, 0, 0);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
}

static void test_tracepoint_capacity(void **state)
{
	static struct ms_tracepoint t;

	tracepoint_init(&t, "sched:sched_switch");
	ms_decoder_init(&dec);
	for (int i = 0; i < MS_DECODE_TRACEPOINTS_MAX; i++) {
		t.config = (uint64_t)i;
		assert_int_equal(ms_decoder_add_tracepoint(&dec, &t), 0);
	}
	t.config = 3;	/* known: replaced */
	assert_int_equal(ms_decoder_add_tracepoint(&dec, &t), 0);
	t.config = 100;
	assert_int_equal(ms_decoder_add_tracepoint(&dec, &t), -1);
}

/* The id chooses the layout: RAW or not; an id nobody lists is a problem. */
static void test_id_chooses_layout(void **state)
{
	switch_out_sample(50, 101, 1, 68, 68, 16);
	assert_int_equal(decode_switch_out(), MS_DECODE_SWITCH_OUT);
	collect_sample(42, kuchain, 7, 17, 16, 16);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	/* the same bytes with an id of nobody's */
	switch_out_sample(77, 101, 1, 68, 68, 16);
	assert_skip("unknown-id");
	assert_non_null(strstr(out.detail, "77"));
	/* a sampler's sample that claims a tracepoint id: read as one, it does not fit */
	collect_sample(51, kuchain, 7, 17, 16, 16);
	assert_int_equal(decode(), MS_DECODE_SKIP);
}

/* Attrs that put the id in different places: the latest's layout, as before. */
static void test_id_places_differ(void **state)
{
	static struct ms_attr a, b;

	attr_init(&a, TP_SAMPLE_TYPE | PERF_SAMPLE_ADDR, 50, 51);
	a.type = PERF_TYPE_TRACEPOINT;
	attr_init(&b, COLLECT_SAMPLE_TYPE, 42, 43);
	ms_decoder_init(&dec);
	assert_int_equal(ms_decoder_add_attr(&dec, &a), 0);
	assert_int_equal(ms_decoder_add_attr(&dec, &b), 0);
	assert_int_equal(dec.sample_id_at, 0);
	collect_sample(42, kuchain, 7, 17, 0, 0);
	assert_int_equal(decode(), MS_DECODE_SAMPLE);
	/* an id of the other layout's attr cannot be read where b puts it */
	collect_sample(50, kuchain, 7, 17, 0, 0);
	assert_skip("unknown-id");
	assert_non_null(strstr(out.detail, "lays records out differently"));
}

/* A switch record: the trailer only (TID, TIME, ID, CPU of the sampler's layout). */
static void switch_record(uint32_t type, uint16_t misc, uint64_t id)
{
	begin(&r, type, misc);
	if (type == PERF_RECORD_SWITCH_CPU_WIDE) {
		u32(&r, 300);	/* next_prev_pid */
		u32(&r, 301);
	}
	trailer(&r, 100, 101, 7000, id);
	finish(&r);
}

static void test_switch_records(void **state)
{
	const struct ms_switch *sw = &out.u.sw;

	switch_record(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 50);
	assert_int_equal(decode(), MS_DECODE_SWITCH);
	assert_int_equal(sw->pid, 100);
	assert_int_equal(sw->tid, 101);
	assert_int_equal(sw->time, 7000);
	assert_int_equal(out.time, 7000);
	assert_int_equal(sw->cpu, 1);
	assert_true(sw->out);
	assert_false(sw->preempt);

	switch_record(PERF_RECORD_SWITCH,
		      PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, 51);
	assert_int_equal(decode(), MS_DECODE_SWITCH);
	assert_true(sw->out);
	assert_true(sw->preempt);

	/* in: never preempted, whatever the bit says */
	switch_record(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, 42);
	assert_int_equal(decode(), MS_DECODE_SWITCH);
	assert_false(sw->out);
	assert_false(sw->preempt);

	/* the cpu-wide kind: the body names the other task, the trailer this one */
	switch_record(PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, 50);
	assert_int_equal(decode(), MS_DECODE_SWITCH);
	assert_int_equal(sw->tid, 101);
	assert_true(sw->out);

	/* an id nobody lists */
	switch_record(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 77);
	assert_skip("unknown-id");
}

static void test_switch_record_malformed(void **state)
{
	static struct ms_attr a;

	/* a short trailer */
	switch_record(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 50);
	r.len -= 8;
	finish(&r);
	assert_skip("truncated-record");
	/* a cpu-wide record without its body */
	switch_record(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 50);
	memcpy(r.buf, &(uint32_t){ PERF_RECORD_SWITCH_CPU_WIDE }, 4);
	assert_skip("truncated-record");
	/* a word more than the trailer */
	begin(&r, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	u64(&r, 0);
	trailer(&r, 100, 101, 7000, 50);
	finish(&r);
	assert_skip("bad-record-size");
	/* no trailer to say who and when */
	attr_init(&a, COLLECT_SAMPLE_TYPE, 42, 43);
	a.flags = 0;
	ms_decoder_init(&dec);
	assert_int_equal(ms_decoder_add_attr(&dec, &a), 0);
	begin(&r, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	finish(&r);
	assert_skip("switch-without-sample-id");
}

/* Other records' trailers: one layout across attrs whose samples differ. */
static void test_trailer_of_tracepoint_event(void **state)
{
	static struct ms_attr a;

	/* a lost record of the tracepoint event: its trailer is the sampler's */
	begin(&r, PERF_RECORD_LOST, 0);
	u64(&r, 50);
	u64(&r, 3);
	trailer(&r, 100, 101, 7000, 50);
	finish(&r);
	assert_int_equal(decode(), MS_DECODE_LOST);
	/* an attr whose trailer differs (no CPU): its ids are refused in trailers */
	attr_init(&a, TP_SAMPLE_TYPE & ~(uint64_t)PERF_SAMPLE_CPU, 60, 61);
	a.type = PERF_TYPE_TRACEPOINT;
	ms_decoder_init(&dec);
	assert_int_equal(ms_decoder_add_attr(&dec, &a), 0);
	attr_init(&a, COLLECT_SAMPLE_TYPE, 42, 43);
	assert_int_equal(ms_decoder_add_attr(&dec, &a), 0);
	switch_record(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 60);
	assert_skip("unknown-id");
	assert_non_null(strstr(out.detail, "lays records out differently"));
}

/* A valid switch-out or switch record spoiled at random: never a crash, never a bad result. */
static void test_off_cpu_noise(void **state)
{
	srand(4242);
	for (int i = 0; i < 20000; i++) {
		int ret;

		switch (rand() % 3) {
		case 0:
			switch_out_sample(rand() % 2 ? 50 : 42, 101, (uint64_t)rand() % 0x200,
					  rand() % 2 ? 68 : 4 + 8 * (uint32_t)(rand() % 8),
					  68, 8 * (uint64_t)(rand() % 4));
			break;
		case 1:
			switch_record(PERF_RECORD_SWITCH, (uint16_t)rand(), 50);
			break;
		default:
			switch_record(PERF_RECORD_SWITCH_CPU_WIDE, (uint16_t)rand(), 42);
			break;
		}
		for (int k = rand() % 4; k > 0; k--) {
			size_t at = 8 + 4 * (size_t)(rand() % ((r.len - 8) / 4));
			uint32_t v = rand() % 2 ? (uint32_t)rand() : (uint32_t)(rand() % 128);

			memcpy(r.buf + at, &v, 4);
		}
		if (rand() % 8 == 0) {
			r.len -= 8;
			finish(&r);
		}
		ret = decode_switch_out();
		assert_true(ret == MS_DECODE_SKIP || ret == MS_DECODE_SAMPLE ||
			    ret == MS_DECODE_SWITCH || ret == MS_DECODE_SWITCH_OUT);
		if (ret == MS_DECODE_SWITCH_OUT) {
			assert_true(out.u.switch_out.cause < MS_CAUSE_COUNT);
			assert_true(out.u.switch_out.sample.stack_len <= r.len);
		}
	}
}

/* ---- time ordering ---- */

struct sink {
	uint64_t times[4096];
	size_t n;
	bool fail;
};

struct item {
	uint64_t time;
	char pad[40];	/* with the entry's bookkeeping: 64 bytes */
};

static int sink_emit(void *ctx, const void *data, size_t len)
{
	struct sink *s = ctx;
	struct item it;

	if (s->fail)
		return -1;
	assert_int_equal(len, sizeof(it));
	memcpy(&it, data, sizeof(it));
	assert_true(s->n < 4096);
	s->times[s->n++] = it.time;
	return 0;
}

static int add(struct ms_order *o, enum ms_order_time how, uint64_t time, uint64_t tag)
{
	struct item it = { .time = tag };

	return ms_order_add(o, how, time, &it, sizeof(it));
}

static uint64_t problem_count(const struct ms_problems *p, const char *code)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (!strcmp(p->entries[i].code, code))
			return p->entries[i].count;
	return 0;
}

static void test_order_two_rings(void **state)
{
	static struct sink s;
	static struct ms_problems pr;
	struct ms_order o;
	uint64_t a = 1, b = 2;

	memset(&s, 0, sizeof(s));
	ms_problems_init(&pr, "test");
	ms_order_init(&o, 1 << 20, 64 << 10, sink_emit, &s, &pr);
	/* pass 1: ring A gives 1 3 5, ring B 2 4 6 */
	for (int pass = 0; pass < 10; pass++) {
		for (int i = 0; i < 3; i++, a += 2)
			assert_int_equal(add(&o, MS_ORDER_TIMED, a, a), 0);
		for (int i = 0; i < 3; i++, b += 2)
			assert_int_equal(add(&o, MS_ORDER_TIMED, b, b), 0);
		assert_int_equal(ms_order_round(&o), 0);
		if (pass == 0) {
			/* nothing is safe before a second round */
			assert_int_equal(s.n, 0);
		} else {
			/* up to the greatest time seen before the previous round */
			assert_int_equal(s.n, 6 * pass);
			assert_int_equal(s.times[s.n - 1], 6 * pass);
		}
	}
	assert_int_equal(ms_order_flush(&o), 0);
	assert_int_equal(s.n, 60);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.times[i], i + 1);
	assert_int_equal(ms_order_pending(&o), 0);
	assert_int_equal(pr.n, 0);
	ms_order_release(&o);
}

static void test_order_time_zero_and_untimed(void **state)
{
	static struct sink s;
	static struct ms_problems pr;
	struct ms_order o;

	memset(&s, 0, sizeof(s));
	ms_problems_init(&pr, "test");
	ms_order_init(&o, 1 << 20, 64 << 10, sink_emit, &s, &pr);
	add(&o, MS_ORDER_UNTIMED, 0, 100);	/* an attr: first */
	add(&o, MS_ORDER_TIMED, 50, 50);
	add(&o, MS_ORDER_TIMED, 0, 101);	/* synthesized: before 50 */
	add(&o, MS_ORDER_TIMED, 0, 102);
	add(&o, MS_ORDER_TIMED, 40, 40);
	add(&o, MS_ORDER_UNTIMED, 0, 103);	/* after 50, the greatest seen */
	add(&o, MS_ORDER_TIMED, 45, 45);
	add(&o, MS_ORDER_TIMED, 60, 60);
	assert_int_equal(ms_order_flush(&o), 0);
	{
		const uint64_t expect[] = { 100, 101, 102, 40, 45, 50, 103, 60 };

		assert_int_equal(s.n, 8);
		for (size_t i = 0; i < 8; i++)
			assert_int_equal(s.times[i], expect[i]);
	}
	/* a synthesized record after times went out: next, no problem */
	add(&o, MS_ORDER_TIMED, 70, 70);
	add(&o, MS_ORDER_TIMED, 0, 104);
	assert_int_equal(ms_order_flush(&o), 0);
	assert_int_equal(s.times[8], 104);
	assert_int_equal(s.times[9], 70);
	assert_int_equal(pr.n, 0);
	ms_order_release(&o);
}

static void test_order_out_of_order(void **state)
{
	static struct sink s;
	static struct ms_problems pr;
	struct ms_order o;

	memset(&s, 0, sizeof(s));
	ms_problems_init(&pr, "test");
	ms_order_init(&o, 1 << 20, 64 << 10, sink_emit, &s, &pr);
	add(&o, MS_ORDER_TIMED, 10, 10);
	add(&o, MS_ORDER_TIMED, 20, 20);
	ms_order_round(&o);
	add(&o, MS_ORDER_TIMED, 30, 30);
	ms_order_round(&o);		/* emits up to 20 */
	assert_int_equal(s.n, 2);
	add(&o, MS_ORDER_TIMED, 20, 21);	/* equal to the last out: still in order */
	add(&o, MS_ORDER_TIMED, 15, 15);	/* too late: out at once */
	assert_int_equal(s.n, 3);
	assert_int_equal(s.times[2], 15);
	assert_int_equal(problem_count(&pr, "out-of-order"), 1);
	assert_int_equal(ms_order_flush(&o), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.times[3], 21);
	assert_int_equal(s.times[4], 30);
	ms_order_release(&o);
}

static void test_order_memory_bound(void **state)
{
	static struct sink s;
	static struct ms_problems pr;
	struct ms_order o;
	size_t held;

	memset(&s, 0, sizeof(s));
	ms_problems_init(&pr, "test");
	/* 2 chunks of 1 KiB: entries of 64 bytes, 16 per chunk */
	ms_order_init(&o, 2048, 1024, sink_emit, &s, &pr);
	for (uint64_t t = 1; t <= 32; t++)
		assert_int_equal(add(&o, MS_ORDER_TIMED, t, t), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(problem_count(&pr, "order-memory-full"), 0);
	/* no round came: the next entry forces the oldest out */
	assert_int_equal(add(&o, MS_ORDER_TIMED, 33, 33), 0);
	assert_true(s.n > 0);
	held = ms_order_pending(&o);
	assert_int_equal(s.n + held, 33);
	assert_int_equal(problem_count(&pr, "order-memory-full"), 1);
	for (uint64_t t = 34; t <= 200; t++)
		assert_int_equal(add(&o, MS_ORDER_TIMED, t, t), 0);
	assert_true(ms_order_pending(&o) <= 32);
	assert_int_equal(ms_order_flush(&o), 0);
	assert_int_equal(s.n, 200);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.times[i], i + 1);
	/* memory was reused, not grown */
	assert_int_equal(o.n_chunks, 2);
	assert_true(problem_count(&pr, "order-memory-full") >= 2);
	/* an entry larger than a chunk is refused */
	{
		char big[2048] = { 0 };

		assert_int_equal(ms_order_add(&o, MS_ORDER_TIMED, 1, big, sizeof(big)), -1);
	}
	ms_order_release(&o);
}

static void test_order_emit_failure(void **state)
{
	static struct sink s;
	struct ms_order o;

	memset(&s, 0, sizeof(s));
	ms_order_init(&o, 1 << 20, 64 << 10, sink_emit, &s, NULL);
	add(&o, MS_ORDER_TIMED, 1, 1);
	add(&o, MS_ORDER_TIMED, 2, 2);
	s.fail = true;
	assert_int_equal(ms_order_flush(&o), -1);
	assert_int_equal(add(&o, MS_ORDER_TIMED, 3, 3), -1);
	ms_order_release(&o);
}

/*
 * A model of the ordering's rules, slow and plain: pending entries in
 * arrival order, a round emits the oldest (first on a tie) while it is
 * within the limit.
 */
struct model {
	uint64_t time[4096], tag[4096];
	size_t n;
	uint64_t max_seen, round_limit, last_emitted, late;
	struct sink out;
};

static void model_emit_upto(struct model *m, uint64_t limit)
{
	for (;;) {
		size_t best = m->n;

		for (size_t i = 0; i < m->n; i++)
			if (m->time[i] <= limit && (best == m->n || m->time[i] < m->time[best]))
				best = i;
		if (best == m->n)
			return;
		m->out.times[m->out.n++] = m->tag[best];
		if (m->time[best] > m->last_emitted)
			m->last_emitted = m->time[best];
		memmove(&m->time[best], &m->time[best + 1], (m->n - best - 1) * sizeof(m->time[0]));
		memmove(&m->tag[best], &m->tag[best + 1], (m->n - best - 1) * sizeof(m->tag[0]));
		m->n--;
	}
}

static void model_add(struct model *m, enum ms_order_time how, uint64_t time, uint64_t tag)
{
	if (how == MS_ORDER_UNTIMED) {
		time = m->max_seen;
	} else if (!time) {
		time = m->last_emitted;
	} else if (time < m->last_emitted) {
		m->late++;
		m->out.times[m->out.n++] = tag;
		return;
	}
	if (time > m->max_seen)
		m->max_seen = time;
	m->time[m->n] = time;
	m->tag[m->n++] = tag;
}

static void model_round(struct model *m)
{
	uint64_t limit = m->round_limit;

	m->round_limit = m->max_seen;
	model_emit_upto(m, limit);
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/*
 * Rings drained in passes, with ties across rings, synthesized and
 * untimed records, records from a ring that fell behind (late), and a
 * pass cut short: the same output as the model, tag for tag.
 */
static void test_order_against_model(void **state)
{
	static struct sink s;
	static struct model m;
	static struct ms_problems pr;
	struct ms_order o;
	uint64_t x = 42, tag = 0, ring_time[5] = { 0 };

	for (int trial = 0; trial < 6; trial++) {
		unsigned rings = 1 + trial % 5;

		memset(&s, 0, sizeof(s));
		memset(&m, 0, sizeof(m));
		memset(ring_time, 0, sizeof(ring_time));
		ms_problems_init(&pr, "test");
		ms_order_init(&o, 1 << 20, 64 << 10, sink_emit, &s, &pr);
		while (m.out.n + m.n < 3000) {
			for (unsigned ring = 0; ring < rings; ring++) {
				unsigned k = (unsigned)(lcg(&x) % 12);

				for (unsigned i = 0; i < k; i++) {
					uint64_t roll = lcg(&x) % 100, t;
					enum ms_order_time how = MS_ORDER_TIMED;

					/* steps of 0 make ties within and across rings */
					ring_time[ring] += lcg(&x) % 4;
					t = ring_time[ring] + 1;
					if (roll < 3) {
						how = MS_ORDER_UNTIMED;
						t = 0;
					} else if (roll < 6) {
						t = 0;
					} else if (roll < 9 && t > 40) {
						t -= 40;	/* behind: maybe late */
					}
					assert_int_equal(add(&o, how, t, tag), 0);
					model_add(&m, how, t, tag);
					tag++;
				}
			}
			if (lcg(&x) % 8) {
				assert_int_equal(ms_order_round(&o), 0);
				model_round(&m);
			}
			assert_int_equal(s.n, m.out.n);
			assert_int_equal(ms_order_pending(&o), m.n);
		}
		assert_int_equal(ms_order_flush(&o), 0);
		model_emit_upto(&m, UINT64_MAX);
		assert_int_equal(s.n, m.out.n);
		for (size_t i = 0; i < s.n; i++)
			assert_int_equal(s.times[i], m.out.times[i]);
		assert_int_equal(problem_count(&pr, "out-of-order"), m.late);
		assert_int_equal(ms_order_pending(&o), 0);
		ms_order_release(&o);
	}
	assert_true(m.late > 0);
}

/* Equal times go out in order of arrival, whichever ring they came from. */
static void test_order_ties(void **state)
{
	static struct sink s;
	struct ms_order o;
	/* three rings of one pass: (time, tag) */
	static const uint64_t in[][2] = {
		{ 5, 0 }, { 7, 1 }, { 7, 2 }, { 9, 3 },		/* ring A */
		{ 5, 4 }, { 6, 5 }, { 7, 6 },			/* ring B */
		{ 4, 7 }, { 7, 8 }, { 9, 9 }, { 9, 10 },	/* ring C */
	};
	static const uint64_t expect[] = { 7, 0, 4, 5, 1, 2, 6, 8, 3, 9, 10 };

	memset(&s, 0, sizeof(s));
	ms_order_init(&o, 1 << 20, 64 << 10, sink_emit, &s, NULL);
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		assert_int_equal(add(&o, MS_ORDER_TIMED, in[i][0], in[i][1]), 0);
	assert_int_equal(ms_order_round(&o), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(add(&o, MS_ORDER_TIMED, 100, 11), 0);
	assert_int_equal(ms_order_round(&o), 0);	/* up to 9 */
	assert_int_equal(s.n, 11);
	for (size_t i = 0; i < 11; i++)
		assert_int_equal(s.times[i], expect[i]);
	assert_int_equal(ms_order_pending(&o), 1);
	assert_int_equal(ms_order_flush(&o), 0);
	assert_int_equal(s.times[11], 11);
	ms_order_release(&o);
}

/*
 * Memory short while rounds go on: entries leave one at a time from a
 * heap, then rounds sort again. Every entry goes out once, and apart from
 * those counted late, in (time, arrival) order.
 */
static void test_order_memory_short_then_rounds(void **state)
{
	static struct sink s;
	static struct ms_problems pr;
	static uint64_t time_of[4096];
	struct ms_order o;
	uint64_t x = 7, tag = 0, ring_time[3] = { 0 }, late = 0;
	uint64_t prev_time = 0, prev_tag = 0, max_out = 0;
	bool seen[4096] = { false };

	memset(&s, 0, sizeof(s));
	ms_problems_init(&pr, "test");
	/* 4 chunks of 16 entries of 64 bytes */
	ms_order_init(&o, 4096, 1024, sink_emit, &s, &pr);
	for (int pass = 0; pass < 40; pass++) {
		/* passes of up to 90 entries: more than the memory holds */
		unsigned k = pass % 4 == 0 ? 30 : 6;

		for (unsigned ring = 0; ring < 3; ring++) {
			for (unsigned i = 0; i < k; i++) {
				ring_time[ring] += 1 + lcg(&x) % 3;
				time_of[tag] = ring_time[ring];
				assert_int_equal(add(&o, MS_ORDER_TIMED, ring_time[ring], tag), 0);
				tag++;
			}
		}
		assert_int_equal(ms_order_round(&o), 0);
	}
	assert_int_equal(ms_order_flush(&o), 0);
	assert_int_equal(s.n, tag);
	for (size_t i = 0; i < s.n; i++) {
		uint64_t t = s.times[i], tm = time_of[t];

		assert_false(seen[t]);
		seen[t] = true;
		if (tm < max_out) {
			late++;
			continue;
		}
		if (i && tm == prev_time)
			assert_true(t > prev_tag);
		prev_time = tm;
		prev_tag = t;
		max_out = tm;
	}
	assert_int_equal(problem_count(&pr, "out-of-order"), late);
	assert_true(problem_count(&pr, "order-memory-full") >= 10);
	assert_true(o.n_chunks <= 4);
	ms_order_release(&o);
}

/* fastpack.h: the smallest encoding, as msgpack-c's msgpack_pack_uint64. */
static void test_fastpack_uint_like_msgpack(void **state)
{
	static const uint64_t base[] = {
		0, 1, 127, 128, 255, 256, 65535, 65536, 0x400000, UINT32_MAX,
		(uint64_t)UINT32_MAX + 1, 0x7f0012345678ull, 0xffffffff81000000ull, UINT64_MAX,
	};

	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
		for (int d = -1; d <= 1; d++) {
			uint64_t v = base[i] + (uint64_t)(int64_t)d;
			msgpack_sbuffer sb;
			msgpack_packer pk;
			char a[16], b[16];
			char *ea, *eb;

			msgpack_sbuffer_init(&sb);
			msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
			msgpack_pack_uint64(&pk, v);
			ea = fp_uint(a, v);
			eb = fp_addr(b, v);
			assert_int_equal(ea - a, sb.size);
			assert_int_equal(eb - b, sb.size);
			assert_memory_equal(a, sb.data, sb.size);
			assert_memory_equal(b, sb.data, sb.size);
			msgpack_sbuffer_destroy(&sb);
		}
	}
}

/* ---- the stage, over streams in temporary files ---- */

/* An anonymous file in $TMPDIR, gone when closed. */
static int tmpfile_fd(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/ms-decode-test.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

static void write_raw(struct ms_writer *w, uint32_t cpu)
{
	struct ms_raw raw = { .cpu = cpu, .data = r.buf, .len = (uint32_t)r.len };

	assert_int_equal(ms_raw_pack(w, &raw), 0);
}

static void sample_at(uint64_t time, uint64_t id)
{
	collect_sample(id, kuchain, 7, 17, 16, 16);
	memcpy(r.buf + 8 + 16, &time, 8);
}

/* ATTR, a synthesized comm, two rings' raws with rounds; complete or cut. */
static int make_input(bool complete)
{
	static struct ms_attr a;
	int fd = tmpfile_fd();
	struct ms_writer *w = ms_writer_open(fd, "input", 0);
	struct ms_comm cm = { .pid = 100, .tid = 100, .synthesized = true,
			      .comm = { "burn", 4 } };

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-collect", "0.1.0"), 0);
	attr_init(&a, COLLECT_SAMPLE_TYPE, 42, 43);
	assert_int_equal(ms_attr_pack(w, &a), 0);
	assert_int_equal(ms_comm_pack(w, &cm), 0);
	/* ring 0: 10 30; ring 1: 20 40, an unknown record, a bad one */
	sample_at(10, 42); write_raw(w, 0);
	sample_at(30, 42); write_raw(w, 0);
	sample_at(20, 43); write_raw(w, 1);
	sample_at(40, 43); write_raw(w, 1);
	begin(&r, PERF_RECORD_CGROUP, 0);
	u64(&r, 7);
	str8(&r, "/a");
	trailer(&r, 1, 1, 41, 43);
	finish(&r);
	write_raw(w, 1);
	sample_at(42, 99); write_raw(w, 1);
	assert_int_equal(ms_round_pack(w), 0);
	/* ring 0: 35 (earlier than ring 1's 40, later than the round) */
	sample_at(35, 42); write_raw(w, 0);
	task(PERF_RECORD_EXIT, 50, 50); write_raw(w, 0);
	assert_int_equal(ms_round_pack(w), 0);
	if (complete)
		assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static int run_stage(int in_fd, int *out_fd)
{
	struct ms_decode_options opt = { .version = "test" };
	int code;

	*out_fd = tmpfile_fd();
	code = ms_decode_stage(in_fd, "input", *out_fd, "output", &opt);
	close(in_fd);
	assert_int_equal(lseek(*out_fd, 0, SEEK_SET), 0);
	return code;
}

static void check_output(int fd, bool complete)
{
	static struct ms_sample smp;
	struct ms_reader *rd = ms_reader_open(fd, "output");
	const struct ms_header *h;
	struct ms_record rec;
	uint32_t kinds[32];
	uint64_t times[32];
	size_t n = 0;
	int ret;
	uint64_t problems = 0;

	assert_non_null(rd);
	h = ms_reader_header(rd);
	assert_int_equal(h->n_producers, 2);
	assert_string_equal(h->producers[0].name, "ms-collect");
	assert_string_equal(h->producers[1].name, "ms-decode");
	while ((ret = ms_reader_next(rd, &rec)) == MS_READ_RECORD) {
		assert_true(n < 32);
		kinds[n] = rec.kind;
		times[n] = 0;
		if (rec.kind == MS_REC_SAMPLE) {
			assert_int_equal(ms_sample_unpack(&rec, &smp), 0);
			times[n] = smp.time;
			assert_int_equal(smp.n_kchain, 2);
			assert_int_equal(smp.n_uchain, 3);
			assert_int_equal(smp.n_regs, 17);
			assert_int_equal(smp.stack_len, 16);
		} else if (rec.kind == MS_REC_PROBLEM) {
			struct ms_problem p;

			assert_int_equal(ms_problem_unpack(&rec, &p), 0);
			assert_int_equal(p.stage.len, strlen("ms-decode"));
			assert_int_equal(p.count, 1);
			problems++;
		}
		n++;
	}
	assert_int_equal(ret, complete ? MS_READ_END : MS_READ_TRUNCATED);
	{
		/* attr, comm (time 0), samples 10 20 30 35 40, exit, 2 problems */
		const uint32_t expect_kinds[] = {
			MS_REC_ATTR, MS_REC_COMM, MS_REC_SAMPLE, MS_REC_SAMPLE, MS_REC_SAMPLE,
			MS_REC_SAMPLE, MS_REC_SAMPLE, MS_REC_EXIT, MS_REC_PROBLEM, MS_REC_PROBLEM,
		};
		const uint64_t expect_times[] = { 0, 0, 10, 20, 30, 35, 40, 0, 0, 0 };

		assert_int_equal(n, 10);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(kinds[i], expect_kinds[i]);
			assert_int_equal(times[i], expect_times[i]);
		}
	}
	assert_int_equal(problems, 2);	/* unknown-kernel-record, unknown-id */
	ms_reader_free(rd);
}

static void test_stage_complete(void **state)
{
	int out_fd;

	assert_int_equal(run_stage(make_input(true), &out_fd), MS_EXIT_OK);
	check_output(out_fd, true);
	close(out_fd);
}

static void test_stage_truncated(void **state)
{
	int out_fd;

	assert_int_equal(run_stage(make_input(false), &out_fd), MS_EXIT_TRUNCATED);
	check_output(out_fd, false);
	close(out_fd);
}

static void test_stage_raw_before_attr(void **state)
{
	int fd = tmpfile_fd(), out_fd;
	struct ms_writer *w = ms_writer_open(fd, "input", 0);

	assert_int_equal(ms_writer_header(w, NULL, "ms-collect", "0.1.0"), 0);
	sample_at(10, 42);
	write_raw(w, 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(run_stage(fd, &out_fd), MS_EXIT_ERROR);
	close(out_fd);
}

/*
 * A raw record encoded otherwise than ms_raw_pack() does: the stage reads
 * the usual layout from its bytes and leaves the rest to ms_raw_unpack(),
 * with the same result.
 */
static void write_raw_as(struct ms_writer *w, const char *cpu, size_t cpu_len, bool extra)
{
	static char rec[65536];
	size_t n = 0;

	rec[n++] = (char)(extra ? 0x94 : 0x93);
	rec[n++] = MS_REC_RAW;
	memcpy(rec + n, cpu, cpu_len);
	n += cpu_len;
	rec[n++] = (char)0xc5;
	rec[n++] = (char)(r.len >> 8);
	rec[n++] = (char)r.len;
	memcpy(rec + n, r.buf, r.len);
	n += r.len;
	if (extra)
		rec[n++] = 0x7f;
	assert_int_equal(ms_writer_copy(w, rec, n), 0);
}

static int raw_input(int variant)
{
	static struct ms_attr a;
	int fd = tmpfile_fd();
	struct ms_writer *w = ms_writer_open(fd, "input", 0);

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-collect", "0.1.0"), 0);
	attr_init(&a, COLLECT_SAMPLE_TYPE, 42, 43);
	assert_int_equal(ms_attr_pack(w, &a), 0);
	for (uint64_t t = 10; t <= 40; t += 10) {
		sample_at(t, 42);
		if (variant == 0)
			write_raw(w, 1);
		else if (t == 10)
			write_raw_as(w, "\xcf\x00\x00\x00\x00\x00\x00\x00\x01", 9, false);
		else if (t == 20)
			write_raw_as(w, "\xd0\x01", 2, false);
		else if (t == 30)
			write_raw_as(w, "\x01", 1, true);
		else if (variant == 2)
			write_raw_as(w, "\xa1" "1", 2, false);	/* a string: malformed */
		else
			write_raw_as(w, "\xcc\x01", 2, false);
	}
	assert_int_equal(ms_round_pack(w), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static void test_stage_raw_encodings(void **state)
{
	int out0, out1, out2;
	struct stat st0, st1;
	char *b0, *b1;

	assert_int_equal(run_stage(raw_input(0), &out0), MS_EXIT_OK);
	assert_int_equal(run_stage(raw_input(1), &out1), MS_EXIT_OK);
	assert_int_equal(fstat(out0, &st0), 0);
	assert_int_equal(fstat(out1, &st1), 0);
	assert_int_equal(st0.st_size, st1.st_size);
	b0 = malloc(st0.st_size);
	b1 = malloc(st1.st_size);
	assert_int_equal(pread(out0, b0, st0.st_size, 0), st0.st_size);
	assert_int_equal(pread(out1, b1, st1.st_size, 0), st1.st_size);
	assert_memory_equal(b0, b1, st0.st_size);
	free(b0);
	free(b1);
	/* what ms_raw_unpack() refuses stops the stage, as before */
	assert_int_equal(run_stage(raw_input(2), &out2), MS_EXIT_ERROR);
	close(out0);
	close(out1);
	close(out2);
}

/*
 * ---- the stage's fast path for samples ----
 *
 * Samples of the usual layout are checked and packed in one pass, without
 * ms_decode(); anything it doubts goes to ms_decode(). Whatever the input,
 * the output must be byte for byte what ms_decode() alone gives (samples,
 * skips, problems and their details), with stack copies small (packed at
 * once) and large (packed when they go out), copied or referred to.
 */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A named temporary file (refer mode needs the input's path). */
static int named_tmpfile(char *path, size_t cap)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, cap, "%s/ms-decode-fast.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	return fd;
}

/* Where random_sample() put the fields with a size or a code. */
static size_t at_nr, at_abi, at_stack, at_dyn;

/* A sample of the collect layout with a random chain, registers and stack. */
static void random_sample(uint64_t time)
{
	static const uint64_t ids[] = { 42, 43, 42, 43, 42, 99 };
	uint64_t nchain = rnd() % 14, stack = 0, dyn = 0;
	bool kernel_mode = rnd() % 4 == 0, regs = rnd() % 8 != 0;

	begin(&r, PERF_RECORD_SAMPLE, kernel_mode ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	u64(&r, rnd() % 3 ? 0x7f0000000000ull + rnd() % 0x100000 : rnd() % 300);	/* ip */
	u32(&r, (uint32_t)(rnd() % 3 ? 4242 : rnd() % 200));			/* pid */
	u32(&r, (uint32_t)(rnd() % 3 ? 4243 : rnd()));				/* tid */
	u64(&r, time);
	u64(&r, ids[rnd() % 6]);
	u32(&r, (uint32_t)(rnd() % 3));						/* cpu */
	u32(&r, 0);
	u64(&r, rnd() % 2 ? 250000 : rnd() % 100);				/* period */
	if (rnd() % 64 == 0)
		nchain = MS_CHAIN_MAX - 1 + rnd() % 3;	/* at the limit */
	at_nr = r.len;
	u64(&r, nchain);
	for (uint64_t i = 0; i < nchain; i++) {
		uint64_t x = rnd() % 16;

		if (x == 0)
			u64(&r, PERF_CONTEXT_KERNEL);
		else if (x == 1)
			u64(&r, PERF_CONTEXT_USER);
		else if (x == 2 && rnd() % 8 == 0)
			u64(&r, PERF_CONTEXT_GUEST_USER);
		else if (x < 6)
			u64(&r, 0xffffffff81000000ull + rnd() % 0x100000);
		else
			u64(&r, rnd() % 4 ? 0x7f0000000000ull + rnd() % 0x100000 : rnd() % 70000);
	}
	at_abi = r.len;
	if (regs) {
		u64(&r, PERF_SAMPLE_REGS_ABI_64);
		for (unsigned i = 0; i < 17; i++)
			u64(&r, rnd());
	} else {
		u64(&r, PERF_SAMPLE_REGS_ABI_NONE);
	}
	switch (rnd() % 4) {
	case 0:
		stack = 0;
		break;
	case 1:
		stack = 8 * (1 + rnd() % 64);	/* packed at once */
		break;
	default:
		stack = 8 * (128 + rnd() % 512);	/* packed when it goes out */
		break;
	}
	at_stack = r.len;
	at_dyn = 0;
	u64(&r, stack);
	if (stack) {
		for (uint64_t i = 0; i < stack / 8; i++)
			u64(&r, rnd());
		uint64_t cut = 8 * (rnd() % 4);

		dyn = rnd() % 4 ? (cut < stack ? stack - cut : stack) : rnd() % (stack + 1);
		at_dyn = r.len;
		u64(&r, dyn);
	}
	finish(&r);
}

/* Spoil the sample in r as a hostile stream could, in a way chosen at random. */
static void mutate(void)
{
	static const uint64_t odd[] = {
		0, 1, 3, 7, 8, 16, 17, 136, 512, 513, 4096, 65528, 65536, 1ull << 32, UINT64_MAX,
		PERF_CONTEXT_USER, PERF_CONTEXT_KERNEL, PERF_CONTEXT_HV, PERF_CONTEXT_MAX,
		PERF_SAMPLE_REGS_ABI_32, 3,
	};
	size_t words = r.len / 8;
	uint64_t v = odd[rnd() % (sizeof(odd) / sizeof(odd[0]))];
	uint16_t size;

	switch (rnd() % 7) {
	case 6: { /* a size or code off by a little, or at a limit */
		size_t at[] = { at_nr, at_abi, at_stack, at_dyn ? at_dyn : at_stack };
		size_t where = at[rnd() % 4];
		uint64_t old;

		memcpy(&old, r.buf + where, 8);
		switch (rnd() % 4) {
		case 0:
			v = old + 1 + rnd() % 8;
			break;
		case 1:
			v = old - 1 - rnd() % 8;
			break;
		case 2:
			v = rnd() % 2 ? MS_CHAIN_MAX + rnd() % 2 : MS_STACK_MAX + 8 * (rnd() % 2);
			break;
		default:
			break;	/* one of odd[] */
		}
		memcpy(r.buf + where, &v, 8);
		break;
	}
	case 0:	/* a word anywhere (the header's too) */
	case 1: {
		size_t at = 8 * (rnd() % words);

		memcpy(r.buf + at, &v, 8);
		break;
	}
	case 2:	/* a word near a size field: before or after the chain, the registers */
		if (words > 12) {
			size_t at = 8 * (6 + rnd() % 7);

			memcpy(r.buf + at, &v, 8);
		}
		break;
	case 3:	/* cut short, header said or not */
		r.len -= 8 * (1 + rnd() % (words - 1));
		if (rnd() % 4)
			finish(&r);
		break;
	case 4:	/* grown: bytes after the last field */
		u64(&r, v);
		if (rnd() % 4)
			finish(&r);
		break;
	default: /* the header's size or type */
		if (rnd() % 2) {
			memcpy(&size, r.buf + 6, 2);
			size = (uint16_t)(size + (rnd() % 2 ? 4 : 8));
			memcpy(r.buf + 6, &size, 2);
		} else {
			uint32_t type = (uint32_t)(rnd() % 20);

			memcpy(r.buf, &type, 4);
		}
		break;
	}
}

/*
 * n samples, at random valid or spoiled, with rounds; when attr_change,
 * a second attr of another layout comes while large samples are pending,
 * and the samples after it have its layout: 1, without CPU; 2, with an
 * identifier too (which the fast path leaves to ms_decode() when there are
 * two attrs).
 */
static int fast_input(int fd, unsigned n, int attr_change)
{
	static struct ms_attr a, b;
	struct ms_writer *w = ms_writer_open(fd, "input", 0);

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-collect", "0.1.0"), 0);
	attr_init(&a, COLLECT_SAMPLE_TYPE, 42, 43);
	assert_int_equal(ms_attr_pack(w, &a), 0);
	for (unsigned i = 0; i < n; i++) {
		/* two rings, each in time order, interleaved */
		uint64_t time = rnd() % 16 == 0 ? 0 : 1000 + 10 * (uint64_t)i + (i % 2) * 5;

		if (attr_change && i == n / 2) {
			uint64_t st = COLLECT_SAMPLE_TYPE & ~(uint64_t)PERF_SAMPLE_CPU;

			if (attr_change == 2)
				st |= PERF_SAMPLE_IDENTIFIER;
			attr_init(&b, st, 44, 42);
			assert_int_equal(ms_attr_pack(w, &b), 0);
		}
		random_sample(time);
		if (attr_change && i >= n / 2) {
			uint64_t id;

			/* the cpu word (at 40) dropped */
			memmove(r.buf + 40, r.buf + 48, r.len - 48);
			r.len -= 8;
			if (attr_change == 2) {
				/* the identifier first: ip, tid, time move up */
				memcpy(&id, r.buf + 32, 8);
				memmove(r.buf + 16, r.buf + 8, 24);
				memcpy(r.buf + 8, &id, 8);
				memcpy(r.buf + 40, &id, 8);
			}
			finish(&r);
		}
		if (rnd() % 3 == 0)
			mutate();
		write_raw(w, (uint32_t)(i % 2));
		if (i % 37 == 36)
			assert_int_equal(ms_round_pack(w), 0);
	}
	assert_int_equal(ms_round_pack(w), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	return fd;
}

/*
 * The stage's output for the input file in_fd, given as it is or, with
 * through_pipe, through a pipe (not mapped: every sample packed at once).
 */
static char *run_to_bytes(int in_fd, const char *in_name, enum ms_stack_bytes how,
			  bool through_pipe, bool checked_only, uint64_t *n_fast, size_t *len)
{
	struct ms_decode_options opt = {
		.version = "test", .stack_bytes = how, .checked_only = checked_only,
		.fast_samples = n_fast,
	};
	int out_fd = tmpfile_fd(), fd = in_fd, pipefd[2], status;
	pid_t child = -1;
	struct stat sb;
	char *bytes;

	assert_int_equal(lseek(in_fd, 0, SEEK_SET), 0);
	if (through_pipe) {
		assert_int_equal(pipe(pipefd), 0);
		child = fork();
		assert_true(child >= 0);
		if (!child) {
			char buf[65536];
			ssize_t n;

			close(pipefd[0]);
			while ((n = read(in_fd, buf, sizeof(buf))) > 0)
				if (write(pipefd[1], buf, (size_t)n) != n)
					_exit(1);
			_exit(n < 0);
		}
		close(pipefd[1]);
		fd = pipefd[0];
	}
	assert_int_equal(ms_decode_stage(fd, in_name, out_fd, "output", &opt), MS_EXIT_OK);
	if (through_pipe) {
		close(fd);
		assert_int_equal(waitpid(child, &status, 0), child);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(fstat(out_fd, &sb), 0);
	bytes = malloc(sb.st_size ? sb.st_size : 1);
	assert_non_null(bytes);
	assert_int_equal(pread(out_fd, bytes, sb.st_size, 0), sb.st_size);
	close(out_fd);
	*len = (size_t)sb.st_size;
	return bytes;
}

static void check_fast_same(unsigned n, int attr_change, enum ms_stack_bytes how,
			    bool through_pipe)
{
	char path[4096];
	int fd = named_tmpfile(path, sizeof(path));
	uint64_t n_fast = 0, n_none = 0;
	size_t len_fast, len_checked;
	char *fast, *checked;

	fast_input(fd, n, attr_change);
	fast = run_to_bytes(fd, path, how, through_pipe, false, &n_fast, &len_fast);
	checked = run_to_bytes(fd, path, how, through_pipe, true, &n_none, &len_checked);
	assert_int_equal(n_none, 0);
	/* most samples are valid: the fast path took them */
	if (n_fast < n / 5)
		fail_msg("the fast path took %" PRIu64 " of %u samples", n_fast, n);
	assert_int_equal(len_fast, len_checked);
	assert_memory_equal(fast, checked, len_fast);
	free(fast);
	free(checked);
	close(fd);
	unlink(path);
}

static void test_fast_path_copy(void **state)
{
	check_fast_same(3000, 0, MS_STACK_BYTES_COPY, false);
	check_fast_same(1000, 0, MS_STACK_BYTES_COPY, true);
}

static void test_fast_path_refer(void **state)
{
	check_fast_same(3000, 0, MS_STACK_BYTES_REFER, false);
}

static void test_fast_path_attr_change(void **state)
{
	for (int change = 1; change <= 2; change++) {
		check_fast_same(1000, change, MS_STACK_BYTES_COPY, false);
		check_fast_same(1000, change, MS_STACK_BYTES_REFER, false);
	}
}

/*
 * ---- the stage over an off-CPU recording ----
 *
 * TRACEPOINT, the tracepoint's ATTR, the sampler's ATTR, then switch-outs,
 * switch records and samples from two rings: all decoded and in time
 * order, the switch-outs' stack copies carried or referred to as samples'.
 */
static int off_cpu_input(int fd)
{
	static struct ms_attr tp, sampler;
	static struct ms_tracepoint t;
	struct ms_writer *w = ms_writer_open(fd, "input", 0);

	assert_non_null(w);
	assert_int_equal(ms_writer_header(w, NULL, "ms-collect", "0.1.0"), 0);
	tracepoint_init(&t, "sched:sched_switch");
	assert_int_equal(ms_tracepoint_pack(w, &t), 0);
	attr_init(&tp, TP_SAMPLE_TYPE, 50, 51);
	tp.type = PERF_TYPE_TRACEPOINT;
	tp.config = TP_CONFIG;
	assert_int_equal(ms_attr_pack(w, &tp), 0);
	attr_init(&sampler, COLLECT_SAMPLE_TYPE, 42, 43);
	assert_int_equal(ms_attr_pack(w, &sampler), 0);
	/* ring 0: a switch-out at 30 (stack of 2 KiB), its switch record at 31 */
	switch_out_sample(50, 101, 1, 68, 68, 2048);
	memcpy(r.buf + 24, &(uint64_t){ 30 }, 8);
	write_raw(w, 0);
	begin(&r, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	trailer(&r, 100, 101, 31, 50);
	finish(&r);
	write_raw(w, 0);
	/* ring 1: a sample at 10, a preempted switch-out at 20 (small stack), one spoiled */
	sample_at(10, 43);
	write_raw(w, 1);
	switch_out_sample(51, 101, 0x100, 68, 68, 64);
	memcpy(r.buf + 24, &(uint64_t){ 20 }, 8);
	write_raw(w, 1);
	switch_out_sample(51, 101, 1, 28, 28, 64);
	write_raw(w, 1);
	assert_int_equal(ms_round_pack(w), 0);
	/* ring 1: back on the CPU at 40 */
	begin(&r, PERF_RECORD_SWITCH, 0);
	trailer(&r, 100, 101, 40, 51);
	finish(&r);
	write_raw(w, 1);
	assert_int_equal(ms_round_pack(w), 0);
	assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	return fd;
}

static void check_off_cpu_output(const char *bytes, size_t len, int in_fd, bool refer)
{
	static struct ms_switch_out so;
	static const uint32_t kinds[] = {
		MS_REC_TRACEPOINT, MS_REC_ATTR, MS_REC_ATTR, MS_REC_SAMPLE, MS_REC_SWITCH_OUT,
		MS_REC_SWITCH_OUT, MS_REC_SWITCH, MS_REC_SWITCH, MS_REC_PROBLEM,
	};
	static const uint64_t times[] = { 0, 0, 0, 10, 20, 30, 31, 40, 0 };
	int fd = tmpfile_fd();
	struct ms_reader *rd;
	struct ms_record rec;
	size_t n = 0;
	int ret;

	assert_int_equal(pwrite(fd, bytes, len, 0), (ssize_t)len);
	rd = ms_reader_open(fd, "output");
	assert_non_null(rd);
	while ((ret = ms_reader_next(rd, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_STACK_FILE)
			continue;
		assert_true(n < sizeof(kinds) / sizeof(kinds[0]));
		if (rec.kind != kinds[n])
			fail_msg("record %zu is a %s, not a %s", n, ms_record_kind_name(rec.kind),
				 ms_record_kind_name(kinds[n]));
		if (rec.kind == MS_REC_SWITCH_OUT) {
			uint8_t copy[2048];

			assert_int_equal(ms_switch_out_unpack(&rec, &so), 0);
			assert_int_equal(so.sample.time, times[n]);
			assert_int_equal(so.sample.tid, 101);
			assert_int_equal(so.sample.n_kchain, 2);
			assert_int_equal(so.sample.n_uchain, 3);
			assert_int_equal(so.sample.n_regs, 17);
			assert_int_equal(so.state, times[n] == 20 ? 0x100 : 1);
			assert_int_equal(so.cause, times[n] == 20 ? MS_CAUSE_PREEMPTED :
					 MS_CAUSE_SLEEPING);
			assert_int_equal(so.sample.stack_len, times[n] == 20 ? 64 : 2048);
			/* the large copy is referred to in refer mode, carried otherwise */
			assert_int_equal(so.sample.stack_in_file, refer);
			if (refer) {
				assert_int_equal(pread(in_fd, copy, so.sample.stack_len,
						       (off_t)so.sample.stack_offset),
						 so.sample.stack_len);
			} else {
				memcpy(copy, so.sample.stack, so.sample.stack_len);
			}
			for (uint32_t i = 0; i < so.sample.stack_len / 8; i++) {
				uint64_t v;

				memcpy(&v, copy + 8 * i, 8);
				assert_int_equal(v, 0xabc0000 + i);
			}
		} else if (rec.kind == MS_REC_SWITCH) {
			struct ms_switch sw;

			assert_int_equal(ms_switch_unpack(&rec, &sw), 0);
			assert_int_equal(sw.time, times[n]);
			assert_int_equal(sw.tid, 101);
			assert_int_equal(sw.out, times[n] == 31);
		} else if (rec.kind == MS_REC_PROBLEM) {
			struct ms_problem p;

			assert_int_equal(ms_problem_unpack(&rec, &p), 0);
			assert_int_equal(p.code.len, strlen("truncated-raw"));
			assert_memory_equal(p.code.ptr, "truncated-raw", p.code.len);
		}
		n++;
	}
	assert_int_equal(ret, MS_READ_END);
	assert_int_equal(n, sizeof(kinds) / sizeof(kinds[0]));
	ms_reader_free(rd);
	close(fd);
}

static void test_stage_off_cpu(void **state)
{
	char path[4096];
	int fd = named_tmpfile(path, sizeof(path));
	uint64_t n_fast = 0;
	size_t len, len_checked;
	char *bytes, *checked;

	off_cpu_input(fd);
	for (int refer = 0; refer <= 1; refer++) {
		enum ms_stack_bytes how = refer ? MS_STACK_BYTES_REFER : MS_STACK_BYTES_COPY;

		bytes = run_to_bytes(fd, path, how, false, false, &n_fast, &len);
		/* the sampler's sample took the fast path, the switch-outs did not */
		assert_int_equal(n_fast, 1);
		check_off_cpu_output(bytes, len, fd, refer);
		checked = run_to_bytes(fd, path, how, false, true, &n_fast, &len_checked);
		assert_int_equal(len, len_checked);
		assert_memory_equal(bytes, checked, len);
		free(bytes);
		free(checked);
	}
	/* through a pipe: copies */
	bytes = run_to_bytes(fd, path, MS_STACK_BYTES_AUTO, true, false, &n_fast, &len);
	check_off_cpu_output(bytes, len, fd, false);
	free(bytes);
	close(fd);
	unlink(path);
}

/* A SWITCH_OUT as the stage packs it is what ms_switch_out_pack() writes. */
static void test_switch_out_bytes_like_pack(void **state)
{
	char path[4096];
	int fd = named_tmpfile(path, sizeof(path)), fd2 = tmpfile_fd();
	static struct ms_switch_out so;
	struct ms_reader *rd;
	struct ms_writer *w;
	struct ms_record rec;
	char *bytes, *packed;
	size_t len;
	bool seen = false;

	off_cpu_input(fd);
	bytes = run_to_bytes(fd, path, MS_STACK_BYTES_COPY, false, false, NULL, &len);
	assert_int_equal(pwrite(fd2, bytes, len, 0), (ssize_t)len);
	rd = ms_reader_open(fd2, "output");
	assert_non_null(rd);
	while (ms_reader_next(rd, &rec) == MS_READ_RECORD) {
		int out_fd;
		struct stat sb;

		if (rec.kind != MS_REC_SWITCH_OUT)
			continue;
		assert_int_equal(ms_switch_out_unpack(&rec, &so), 0);
		out_fd = tmpfile_fd();
		w = ms_writer_open(out_fd, "packed", 0);
		assert_non_null(w);
		assert_int_equal(ms_writer_header(w, NULL, "test", "0"), 0);
		assert_int_equal(ms_switch_out_pack(w, &so), 0);
		assert_int_equal(ms_writer_close(w), 0);
		/* the record is what follows the header, at the end */
		assert_int_equal(fstat(out_fd, &sb), 0);
		assert_true((size_t)sb.st_size > rec.len);
		packed = malloc(rec.len);
		assert_int_equal(pread(out_fd, packed, rec.len, sb.st_size - (off_t)rec.len),
				 (ssize_t)rec.len);
		assert_memory_equal(packed, rec.bytes, rec.len);
		free(packed);
		close(out_fd);
		seen = true;
	}
	assert_true(seen);
	ms_reader_free(rd);
	free(bytes);
	close(fd2);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_sample_collect_layout, setup_collect_attr),
		cmocka_unit_test_setup(test_trim_stack_copy, setup_collect_attr),
		cmocka_unit_test(test_sample_every_field),
		cmocka_unit_test_setup(test_callchain_contexts, setup_collect_attr),
		cmocka_unit_test_setup(test_callchain_nr_past_the_end, setup_collect_attr),
		cmocka_unit_test_setup(test_callchain_too_long, setup_collect_attr),
		cmocka_unit_test_setup(test_regs_count_mismatch, setup_collect_attr),
		cmocka_unit_test_setup(test_regs_abi_none_and_no_stack, setup_collect_attr),
		cmocka_unit_test_setup(test_dyn_size_over_size, setup_collect_attr),
		cmocka_unit_test_setup(test_stack_past_the_end, setup_collect_attr),
		cmocka_unit_test_setup(test_bad_sizes, setup_collect_attr),
		cmocka_unit_test_setup(test_unknown_id, setup_collect_attr),
		cmocka_unit_test(test_no_attr_is_fatal),
		cmocka_unit_test(test_identifier_picks_attr),
		cmocka_unit_test(test_decoder_capacity),
		cmocka_unit_test_setup(test_mmap2_without_build_id, setup_collect_attr),
		cmocka_unit_test_setup(test_mmap2_with_build_id, setup_collect_attr),
		cmocka_unit_test_setup(test_mmap_v1, setup_collect_attr),
		cmocka_unit_test_setup(test_filename_not_terminated, setup_collect_attr),
		cmocka_unit_test_setup(test_comm_exec, setup_collect_attr),
		cmocka_unit_test_setup(test_fork_exit, setup_collect_attr),
		cmocka_unit_test_setup(test_trailer_missing_bytes, setup_collect_attr),
		cmocka_unit_test_setup(test_lost, setup_collect_attr),
		cmocka_unit_test_setup(test_throttle, setup_collect_attr),
		cmocka_unit_test_setup(test_unknown_type, setup_collect_attr),
		cmocka_unit_test_setup(test_noise, setup_collect_attr),
		cmocka_unit_test_setup(test_switch_out_sample, setup_off_cpu),
		cmocka_unit_test(test_switch_out_state_of_4_bytes),
		cmocka_unit_test_setup(test_switch_out_raw_too_short, setup_off_cpu),
		cmocka_unit_test_setup(test_switch_out_raw_size_past_record, setup_off_cpu),
		cmocka_unit_test_setup(test_switch_out_prev_pid_mismatch, setup_off_cpu),
		cmocka_unit_test(test_switch_out_bad_formats),
		cmocka_unit_test(test_switch_out_unknown_tracepoint),
		cmocka_unit_test(test_switch_out_no_tracepoint_record),
		cmocka_unit_test(test_tracepoint_capacity),
		cmocka_unit_test_setup(test_id_chooses_layout, setup_off_cpu),
		cmocka_unit_test(test_id_places_differ),
		cmocka_unit_test_setup(test_switch_records, setup_off_cpu),
		cmocka_unit_test_setup(test_switch_record_malformed, setup_off_cpu),
		cmocka_unit_test_setup(test_trailer_of_tracepoint_event, setup_off_cpu),
		cmocka_unit_test_setup(test_off_cpu_noise, setup_off_cpu),
		cmocka_unit_test(test_order_two_rings),
		cmocka_unit_test(test_order_time_zero_and_untimed),
		cmocka_unit_test(test_order_out_of_order),
		cmocka_unit_test(test_order_memory_bound),
		cmocka_unit_test(test_order_emit_failure),
		cmocka_unit_test(test_order_against_model),
		cmocka_unit_test(test_order_ties),
		cmocka_unit_test(test_order_memory_short_then_rounds),
		cmocka_unit_test(test_fastpack_uint_like_msgpack),
		cmocka_unit_test(test_stage_complete),
		cmocka_unit_test(test_stage_truncated),
		cmocka_unit_test(test_stage_raw_before_attr),
		cmocka_unit_test(test_stage_raw_encodings),
		cmocka_unit_test(test_fast_path_copy),
		cmocka_unit_test(test_fast_path_refer),
		cmocka_unit_test(test_fast_path_attr_change),
		cmocka_unit_test(test_stage_off_cpu),
		cmocka_unit_test(test_switch_out_bytes_like_pack),
	};

	ms_set_progname("decode-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

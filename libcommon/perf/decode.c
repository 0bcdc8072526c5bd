/*
 * Kernel perf records to typed stream records (see decode.h), and the
 * ms-decode stage: a filter loop over the stream that decodes RAW records,
 * reorders everything by time at each ROUND (perf/order.h) and passes the
 * rest through.
 */
#include "perf/decode.h"
#include "perf/order.h"
#include "perf/pypair.h"
#include "stream/cursor.h"
#include "stream/fastpack.h"
#include "stream/protocols.h"
#include "stream/stackfile.h"
#include "stream/stage.h"
#include "stream/stream.h"
#include "util/bits.h"
#include "util/error.h"

#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the decoder ------------------------------------------------------ */

/* Fields of a sample this decoder reads, in the kernel's order. */
#define PARSED_SAMPLE_BITS \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* The sample_id_all trailer's fields. */
#define TRAILER_BITS \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static const char *const record_names[] = {
	[PERF_RECORD_MMAP] = "mmap",
	[PERF_RECORD_LOST] = "lost",
	[PERF_RECORD_COMM] = "comm",
	[PERF_RECORD_EXIT] = "exit",
	[PERF_RECORD_THROTTLE] = "throttle",
	[PERF_RECORD_UNTHROTTLE] = "unthrottle",
	[PERF_RECORD_FORK] = "fork",
	[PERF_RECORD_READ] = "read",
	[PERF_RECORD_SAMPLE] = "sample",
	[PERF_RECORD_MMAP2] = "mmap2",
	[PERF_RECORD_AUX] = "aux",
	[PERF_RECORD_ITRACE_START] = "itrace_start",
	[PERF_RECORD_LOST_SAMPLES] = "lost_samples",
	[PERF_RECORD_SWITCH] = "switch",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "switch_cpu_wide",
	[PERF_RECORD_NAMESPACES] = "namespaces",
	[PERF_RECORD_KSYMBOL] = "ksymbol",
	[PERF_RECORD_BPF_EVENT] = "bpf_event",
	[PERF_RECORD_CGROUP] = "cgroup",
	[PERF_RECORD_TEXT_POKE] = "text_poke",
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = "aux_output_hw_id",
};

const char *ms_perf_record_name(uint32_t type)
{
	if (type < sizeof(record_names) / sizeof(record_names[0]) && record_names[type])
		return record_names[type];
	return "unknown";
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void ms_decoder_init(struct ms_decoder *d)
{
	d->n_attrs = 0;
	d->sample_id_at = 0;
	d->n_tracepoints = 0;
}

/* Where a's samples have their id (header included); 0: they have none. */
static uint32_t sample_id_at(const struct ms_attr *a)
{
	uint64_t st = a->sample_type;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 8;
	if (!(st & PERF_SAMPLE_ID))
		return 0;
	return 8 + 8 * (uint32_t)ms_popcount64(st & (PERF_SAMPLE_IP | PERF_SAMPLE_TID |
						       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR));
}

int ms_decoder_add_attr(struct ms_decoder *d, const struct ms_attr *a)
{
	struct ms_attr *slot;

	if (d->n_attrs == MS_DECODE_ATTRS_MAX)
		return ms_error("more than %d attr records: this decoder keeps at most %d",
				MS_DECODE_ATTRS_MAX, MS_DECODE_ATTRS_MAX);
	slot = &d->attrs[d->n_attrs++];
	*slot = *a;
	if (slot->n_ids > MS_ATTR_IDS_MAX)
		slot->n_ids = MS_ATTR_IDS_MAX;
	qsort(slot->ids, slot->n_ids, sizeof(slot->ids[0]), cmp_u64);
	/* once two attrs put the id in different places, it chooses nothing */
	if (d->n_attrs == 1)
		d->sample_id_at = sample_id_at(slot);
	else if (sample_id_at(slot) != d->sample_id_at)
		d->sample_id_at = 0;
	return 0;
}

#define SCHED_SWITCH "sched:sched_switch"

static bool str_is(const struct ms_str *s, const char *lit)
{
	return s->len == strlen(lit) && !memcmp(s->ptr, lit, s->len);
}

static int field_index(const struct ms_tracepoint *t, const char *name)
{
	for (uint32_t i = 0; i < t->n_fields; i++)
		if (str_is(&t->fields[i], name))
			return (int)i;
	return -1;
}

/* Judge a format once: what its samples need is where, or why it is unusable. */
static void tracepoint_learn(struct ms_decode_tracepoint *tp, const struct ms_tracepoint *t)
{
	int state, pid;

	memset(tp, 0, sizeof(*tp));
	tp->config = t->config;
	if (!str_is(&t->name, SCHED_SWITCH)) {
		tp->bad = "unknown-tracepoint";
		snprintf(tp->why, sizeof(tp->why), "its tracepoint record names '%.*s', not "
			 SCHED_SWITCH, (int)(t->name.len < 40 ? t->name.len : 40), t->name.ptr);
		return;
	}
	tp->bad = "bad-tracepoint-format";
	state = field_index(t, "prev_state");
	pid = field_index(t, "prev_pid");
	/* a perf record is at most 64 KiB: so is any place in its raw data */
	if (state < 0) {
		snprintf(tp->why, sizeof(tp->why), "its format has no prev_state field");
	} else if (t->sizes[state] != 4 && t->sizes[state] != 8) {
		snprintf(tp->why, sizeof(tp->why), "its prev_state field is %" PRIu64
			 " bytes wide (4 or 8 are read)", t->sizes[state]);
	} else if (t->offsets[state] > 65535) {
		snprintf(tp->why, sizeof(tp->why), "its prev_state field is at offset %" PRIu64
			 ", past any record", t->offsets[state]);
	} else if (pid >= 0 && (t->sizes[pid] != 4 || t->offsets[pid] > 65535)) {
		snprintf(tp->why, sizeof(tp->why), "its prev_pid field is %" PRIu64
			 " bytes at offset %" PRIu64 " (4 bytes in a record are read)",
			 t->sizes[pid], t->offsets[pid]);
	} else {
		tp->bad = NULL;
		tp->state_at = (uint32_t)t->offsets[state];
		tp->state_size = (uint32_t)t->sizes[state];
		if (pid >= 0) {
			tp->pid_at = (uint32_t)t->offsets[pid];
			tp->pid_size = 4;
		}
	}
}

int ms_decoder_add_tracepoint(struct ms_decoder *d, const struct ms_tracepoint *t)
{
	uint32_t i;

	for (i = 0; i < d->n_tracepoints && d->tracepoints[i].config != t->config; i++)
		;
	if (i == MS_DECODE_TRACEPOINTS_MAX)
		return ms_error("more than %d tracepoint records: this decoder keeps at most %d",
				MS_DECODE_TRACEPOINTS_MAX, MS_DECODE_TRACEPOINTS_MAX);
	if (i == d->n_tracepoints)
		d->n_tracepoints++;
	tracepoint_learn(&d->tracepoints[i], t);
	return 0;
}

static const struct ms_decode_tracepoint *tracepoint_of(const struct ms_decoder *d,
							uint64_t config)
{
	for (uint32_t i = 0; i < d->n_tracepoints; i++)
		if (d->tracepoints[i].config == config)
			return &d->tracepoints[i];
	return NULL;
}

static bool attr_has_id(const struct ms_attr *a, uint64_t id)
{
	size_t lo = 0, hi = a->n_ids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->ids[mid] == id)
			return true;
		if (a->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static const struct ms_attr *attr_of_id(const struct ms_decoder *d, uint64_t id)
{
	/* latest first: an id reused by a later attr belongs to it */
	for (uint32_t i = d->n_attrs; i-- > 0;)
		if (attr_has_id(&d->attrs[i], id))
			return &d->attrs[i];
	return NULL;
}

/* Whether the sample_id_all trailers of a's and b's records are laid out alike. */
static bool same_trailer(const struct ms_attr *a, const struct ms_attr *b)
{
	return (a->sample_type & TRAILER_BITS) == (b->sample_type & TRAILER_BITS) &&
	       (a->flags & MS_ATTR_SAMPLE_ID_ALL) == (b->flags & MS_ATTR_SAMPLE_ID_ALL);
}

/* Whether records of a and b are laid out alike. */
static bool same_layout(const struct ms_attr *a, const struct ms_attr *b)
{
	return a->sample_type == b->sample_type && a->read_format == b->read_format &&
	       a->sample_regs_user == b->sample_regs_user &&
	       (a->flags & MS_ATTR_SAMPLE_ID_ALL) == (b->flags & MS_ATTR_SAMPLE_ID_ALL);
}

static int problem(struct ms_decoded *out, int result, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int problem(struct ms_decoded *out, int result, const char *code, const char *fmt, ...)
{
	va_list ap;

	out->problem = code;
	va_start(ap, fmt);
	vsnprintf(out->detail, sizeof(out->detail), fmt, ap);
	va_end(ap);
	return result;
}

#define skip(out, code, ...) problem(out, MS_DECODE_SKIP, code, __VA_ARGS__)

/* Reads within [pos, end) of one record; callers check room first. */
struct cursor {
	const uint8_t *data;
	size_t pos, end;
};

static bool room(const struct cursor *c, size_t n)
{
	return c->end - c->pos >= n;
}

static uint64_t take_u64(struct cursor *c)
{
	uint64_t v;

	memcpy(&v, c->data + c->pos, 8);
	c->pos += 8;
	return v;
}

static uint32_t take_u32(struct cursor *c)
{
	uint32_t v;

	memcpy(&v, c->data + c->pos, 4);
	c->pos += 4;
	return v;
}

static uint32_t cpumode_of(uint16_t misc)
{
	uint32_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mode <= MS_CPUMODE_GUEST_USER ? mode : MS_CPUMODE_UNKNOWN;
}

/* Skip the sample unless n bytes are left (uses the caller's size and out). */
#define NEED(c, n, what)                                                        \
	do {                                                                    \
		if (!room(c, n))                                                \
			return skip(out, "truncated-sample",                    \
				    "sample of %zu bytes ends inside its %s (byte %zu)", \
				    size, what, (c)->pos);                      \
	} while (0)

/* Step over a struct read_format, checking its size against what is left. */
static int skip_read_format(const struct ms_attr *a, struct cursor *c, size_t size,
			    struct ms_decoded *out)
{
	uint64_t rf = a->read_format;
	uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	uint64_t head = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			!!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t nr = 1, words;

	if (rf & PERF_FORMAT_GROUP) {
		NEED(c, 8, "read group size");
		nr = take_u64(c);
		/* size is at most 65535: compare before multiplying */
		if (nr > (c->end - c->pos) / 8)
			return skip(out, "truncated-sample",
				    "sample of %zu bytes: a read group of %" PRIu64
				    " counters does not fit (byte %zu)", size, nr, c->pos);
	}
	words = head + nr * per;
	if (words > (c->end - c->pos) / 8)
		return skip(out, "truncated-sample",
			    "sample of %zu bytes ends inside its read values (byte %zu)",
			    size, c->pos);
	c->pos += words * 8;
	return 1;
}

/*
 * Split a callchain at the kernel's context markers. Frames before any
 * marker belong to the sample's own mode.
 */
static void split_chain(struct cursor *c, uint64_t nr, struct ms_sample *s,
			struct ms_decoded *out)
{
	enum { CTX_KERNEL, CTX_USER, CTX_OTHER } ctx;

	ctx = s->cpumode == MS_CPUMODE_KERNEL ? CTX_KERNEL : CTX_USER;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = take_u64(c);

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
				ctx = CTX_KERNEL;
			else if (ip == (uint64_t)PERF_CONTEXT_USER)
				ctx = CTX_USER;
			else
				ctx = CTX_OTHER;
			continue;
		}
		if (ctx == CTX_KERNEL)
			s->kchain[s->n_kchain++] = ip;
		else if (ctx == CTX_USER)
			s->uchain[s->n_uchain++] = ip;
		else
			out->foreign_frames++;
	}
}

static int check_id(const struct ms_decoder *d, const struct ms_attr *a, uint64_t id,
		    struct ms_decoded *out)
{
	const struct ms_attr *owner;

	/*
	 * The common case: the latest attr, with one id per ring, owns it.
	 * A look at its first few ids is cheaper than the search below.
	 */
	if (a == &d->attrs[d->n_attrs - 1])
		for (uint32_t i = 0; i < a->n_ids && i < 8; i++)
			if (a->ids[i] == id)
				return 1;
	owner = attr_of_id(d, id);

	if (!owner)
		return skip(out, "unknown-id", "%s record with event id %" PRIu64
			    ", which no attr record lists", ms_perf_record_name(out->type), id);
	/* a sample's whole layout is its attr's; another record's, only its trailer */
	if (owner != a && (out->type == PERF_RECORD_SAMPLE ? !same_layout(owner, a) :
			   !same_trailer(owner, a)))
		return skip(out, "unknown-id", "%s record with event id %" PRIu64
			    ", whose attr lays records out differently",
			    ms_perf_record_name(out->type), id);
	return 1;
}

/* A value of size 4 or 8 in the kernel's byte order, little-endian here. */
static uint64_t load_le(const uint8_t *p, uint32_t size)
{
	uint64_t v = 0;

	for (uint32_t i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/*
 * A sched:sched_switch sample, its fields decoded as a sample's: its
 * evidence from the raw data (raw_len bytes at raw, NULL when it has none).
 */
static int decode_switch_out(const struct ms_decoder *d, const struct ms_attr *a,
			     const uint8_t *raw, uint32_t raw_len, struct ms_decoded *out)
{
	const struct ms_decode_tracepoint *tp = tracepoint_of(d, a->config);
	struct ms_switch_out *so = &out->u.switch_out;
	uint32_t pid;

	if (!tp)
		return skip(out, "no-tracepoint-format",
			    "sample of tracepoint %" PRIu64 ", whose format no tracepoint "
			    "record gave before it: its prev_state cannot be read", a->config);
	if (tp->bad)
		return skip(out, tp->bad, "sample of tracepoint %" PRIu64 ": %s", a->config,
			    tp->why);
	if (!raw)
		return skip(out, "truncated-raw", "sample of tracepoint %" PRIu64
			    " without raw data (sample_type 0x%" PRIx64 ")", a->config,
			    a->sample_type);
	if ((uint64_t)tp->state_at + tp->state_size > raw_len ||
	    (tp->pid_size && (uint64_t)tp->pid_at + tp->pid_size > raw_len))
		return skip(out, "truncated-raw", "sample of tracepoint %" PRIu64 " with %u "
			    "bytes of raw data: its prev_state (%u bytes at %u)%s lies past them",
			    a->config, raw_len, tp->state_size, tp->state_at,
			    tp->pid_size ? " or prev_pid" : "");
	if (tp->pid_size && (pid = (uint32_t)load_le(raw + tp->pid_at, 4)) != so->sample.tid)
		return skip(out, "switch-out-tid-mismatch", "sample of tracepoint %" PRIu64
			    " of thread %u whose prev_pid is %u: not the thread that left its CPU",
			    a->config, so->sample.tid, pid);
	so->state = load_le(raw + tp->state_at, tp->state_size);
	so->cause = ms_off_cpu_cause_of_state(so->state);
	return MS_DECODE_SWITCH_OUT;
}

bool ms_attr_is_bpf_output(const struct ms_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_BPF_OUTPUT;
}

/*
 * A sample of a BPF output event: its raw data (raw_len bytes at raw,
 * NULL when it has none) is a record of the BPF sampler, written on the
 * sample's CPU by its thread (see bpf/sampler.h).
 */
static int decode_bpf(const uint8_t *raw, uint32_t raw_len, struct ms_decoded *out)
{
	struct ms_bpf_record *r = &out->u.bpf.rec;
	const struct ms_sample *s = &out->u.bpf.sample;
	const char *code;

	if (!raw)
		return skip(out, "truncated-raw", "sample of a bpf output event without raw data");
	if (ms_bpf_record_check(raw, raw_len, r, &code, out->detail, sizeof(out->detail)) < 0) {
		out->problem = code;
		return MS_DECODE_SKIP;
	}
	if (r->h.cpu != s->cpu || r->h.tid != s->tid)
		return skip(out, "bpf-record-mismatch", "bpf record of thread %u on cpu %u in a "
			    "sample of thread %u on cpu %u", r->h.tid, r->h.cpu, s->tid, s->cpu);
	return MS_DECODE_BPF;
}

static int decode_sample(const struct ms_decoder *d, const struct ms_attr *a, uint32_t cpu,
			 const uint8_t *data, size_t size, uint16_t misc, struct ms_decoded *out)
{
	struct cursor cur = { data, 8, size }, *c = &cur;
	/* a switch-out begins with its sample: u.switch_out.sample */
	struct ms_sample *s = &out->u.switch_out.sample;
	uint64_t st = a->sample_type, id = 0;
	const uint8_t *raw = NULL;
	uint32_t raw_len = 0;
	bool has_id = false;
	int ret;

	/* the arrays are filled up to their counts only: no memset of 13 KiB */
	s->pid = s->tid = 0;
	s->time = 0;
	s->cpu = cpu;
	s->period = 0;
	s->ip = 0;
	s->cpumode = cpumode_of(misc);
	s->n_kchain = s->n_uchain = 0;
	s->regs_abi = 0;
	s->regs_mask = 0;
	s->n_regs = 0;
	s->stack_len = 0;
	s->stack = NULL;

	if (st & PERF_SAMPLE_IDENTIFIER) {
		NEED(c, 8, "identifier");
		id = take_u64(c);
		has_id = true;
	}
	if (st & PERF_SAMPLE_IP) {
		NEED(c, 8, "ip");
		s->ip = take_u64(c);
	}
	if (st & PERF_SAMPLE_TID) {
		NEED(c, 8, "pid and tid");
		s->pid = take_u32(c);
		s->tid = take_u32(c);
	}
	if (st & PERF_SAMPLE_TIME) {
		NEED(c, 8, "time");
		s->time = take_u64(c);
	}
	if (st & PERF_SAMPLE_ADDR) {
		NEED(c, 8, "addr");
		c->pos += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		NEED(c, 8, "id");
		id = take_u64(c);
		has_id = true;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		NEED(c, 8, "stream id");
		c->pos += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		NEED(c, 8, "cpu");
		s->cpu = take_u32(c);
		c->pos += 4;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		NEED(c, 8, "period");
		s->period = take_u64(c);
	}
	if (st & PERF_SAMPLE_READ) {
		ret = skip_read_format(a, c, size, out);
		if (ret <= 0)
			return ret;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;

		NEED(c, 8, "callchain size");
		nr = take_u64(c);
		if (nr > (c->end - c->pos) / 8)
			return skip(out, "truncated-sample",
				    "sample of %zu bytes: a callchain of %" PRIu64
				    " entries does not fit in the %zu bytes left",
				    size, nr, c->end - c->pos);
		if (nr > MS_CHAIN_MAX)
			return skip(out, "callchain-too-long",
				    "sample with a callchain of %" PRIu64 " entries (at most %d)",
				    nr, MS_CHAIN_MAX);
		split_chain(c, nr, s, out);
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t raw_size;

		NEED(c, 4, "raw data size");
		raw_size = take_u32(c);
		if (raw_size > c->end - c->pos)
			return skip(out, "truncated-sample",
				    "sample of %zu bytes: raw data of %u bytes does not fit in the %zu left",
				    size, raw_size, c->end - c->pos);
		raw = data + c->pos;
		raw_len = raw_size;
		c->pos += raw_size;
		/* the kernel pads raw data so that what follows is aligned */
		if (c->pos % 8)
			return skip(out, "truncated-sample",
				    "sample of %zu bytes: raw data of %u bytes leaves the next field unaligned",
				    size, raw_size);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK)
		/* its layout depends on branch_sample_type, which ATTR lacks */
		return skip(out, "unsupported-sample-type",
			    "samples with a branch stack (sample_type 0x%" PRIx64 ") are not decoded", st);
	if (st & PERF_SAMPLE_REGS_USER) {
		uint64_t abi;

		NEED(c, 8, "register ABI");
		abi = take_u64(c);
		if (abi > PERF_SAMPLE_REGS_ABI_64)
			return skip(out, "bad-regs-abi", "sample with register ABI %" PRIu64
				    " (known: 0 none, 1 32-bit, 2 64-bit)", abi);
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			unsigned n = ms_popcount64(a->sample_regs_user);

			if ((size_t)n * 8 > c->end - c->pos)
				return skip(out, "truncated-sample",
					    "sample of %zu bytes: %u registers (mask 0x%" PRIx64
					    ") do not fit in the %zu bytes left",
					    size, n, a->sample_regs_user, c->end - c->pos);
			/*
			 * One word at a time: a memcpy of n * 8 is inlined as
			 * "rep movsq", which more than doubled the time of
			 * ms_decode(), and copies of 32 bytes were slower too.
			 */
			for (unsigned i = 0; i < n; i++)
				s->regs[i] = take_u64(c);
			s->regs_abi = (uint32_t)abi;
			s->regs_mask = a->sample_regs_user;
			s->n_regs = n;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t stack_size, dyn_size;

		NEED(c, 8, "stack size");
		stack_size = take_u64(c);
		if (stack_size) {
			if (stack_size > MS_STACK_MAX || stack_size % 8)
				return skip(out, "bad-stack-size",
					    "sample with a stack copy of %" PRIu64
					    " bytes (a multiple of 8, at most %d)",
					    stack_size, MS_STACK_MAX);
			if (stack_size + 8 > c->end - c->pos)
				return skip(out, "truncated-sample",
					    "sample of %zu bytes: a stack copy of %" PRIu64
					    " bytes and its dyn_size do not fit in the %zu bytes left",
					    size, stack_size, c->end - c->pos);
			s->stack = data + c->pos;
			c->pos += stack_size;
			dyn_size = take_u64(c);
			if (dyn_size > stack_size)
				return skip(out, "bad-stack-size",
					    "sample whose stack dyn_size %" PRIu64
					    " exceeds its copy of %" PRIu64 " bytes",
					    dyn_size, stack_size);
			s->stack_len = (uint32_t)dyn_size;
		}
	}
	/* a sample of only these fields ends where they do */
	if (!(st & ~(uint64_t)PARSED_SAMPLE_BITS) && c->pos != size)
		return skip(out, "sample-size-mismatch",
			    "sample of %zu bytes whose fields end at byte %zu "
			    "(sample_type 0x%" PRIx64 ", regs mask 0x%" PRIx64 ")",
			    size, c->pos, st, a->sample_regs_user);
	if (has_id && (ret = check_id(d, a, id, out)) <= 0)
		return ret;
	out->time = s->time;
	if (a->type == PERF_TYPE_TRACEPOINT)
		return decode_switch_out(d, a, raw, raw_len, out);
	if (ms_attr_is_bpf_output(a))
		return decode_bpf(raw, raw_len, out);
	return MS_DECODE_SAMPLE;
}

/* Fixed part after the header, or -1 for a record kind not decoded. */
static int fixed_size(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:		return 32;	/* pid tid addr len pgoff */
	case PERF_RECORD_MMAP2:		return 64;	/* ... maj min ino ino_gen prot flags */
	case PERF_RECORD_COMM:		return 8;	/* pid tid */
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:		return 24;	/* pid ppid tid ptid time */
	case PERF_RECORD_LOST:		return 16;	/* id lost */
	case PERF_RECORD_LOST_SAMPLES:	return 8;	/* lost */
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:	return 24;	/* time id stream_id */
	case PERF_RECORD_SWITCH:	return 0;	/* the trailer only */
	case PERF_RECORD_SWITCH_CPU_WIDE: return 8;	/* next_prev_pid next_prev_tid */
	default:			return -1;
	}
}

struct trailer {
	bool has_tid, has_time, has_id, has_cpu;
	uint32_t pid, tid, cpu;
	uint64_t time, id;
};

/* A NUL-terminated string in [c->pos, c->end). */
static int take_string(struct cursor *c, size_t size, const char *what, struct ms_str *s,
		       struct ms_decoded *out)
{
	const uint8_t *p = c->data + c->pos;
	const uint8_t *nul = memchr(p, 0, c->end - c->pos);

	if (!nul)
		return skip(out, "unterminated-string",
			    "%s record of %zu bytes: its %s has no NUL before byte %zu",
			    ms_perf_record_name(out->type), size, what, c->end);
	s->ptr = (const char *)p;
	s->len = (uint32_t)(nul - p);
	return 1;
}

static int decode_other(const struct ms_decoder *d, const struct ms_attr *a, uint32_t cpu,
			const uint8_t *data, size_t size, uint16_t misc, struct ms_decoded *out)
{
	uint32_t type = out->type;
	int fixed = fixed_size(type);
	size_t trailer_size = 0;
	struct trailer t = { 0 };
	struct cursor cur, *c = &cur;
	int ret;

	if (fixed < 0)
		return skip(out, "unknown-kernel-record",
			    "kernel record type %u (%s) is not decoded", type,
			    ms_perf_record_name(type));
	if (a->flags & MS_ATTR_SAMPLE_ID_ALL)
		trailer_size = 8 * (size_t)ms_popcount64(a->sample_type & TRAILER_BITS);
	if (size < 8 + (size_t)fixed + trailer_size)
		return skip(out, "truncated-record",
			    "%s record of %zu bytes cannot hold its %d bytes of fields "
			    "and a %zu-byte sample_id trailer",
			    ms_perf_record_name(type), size, fixed, trailer_size);

	if (trailer_size) {
		uint64_t st = a->sample_type;
		struct cursor tc = { data, size - trailer_size, size };

		if (st & PERF_SAMPLE_TID) {
			t.pid = take_u32(&tc);
			t.tid = take_u32(&tc);
			t.has_tid = true;
		}
		if (st & PERF_SAMPLE_TIME) {
			t.time = take_u64(&tc);
			t.has_time = true;
		}
		if (st & PERF_SAMPLE_ID) {
			t.id = take_u64(&tc);
			t.has_id = true;
		}
		if (st & PERF_SAMPLE_STREAM_ID)
			tc.pos += 8;
		if (st & PERF_SAMPLE_CPU) {
			t.cpu = take_u32(&tc);
			tc.pos += 4;
			t.has_cpu = true;
		}
		if (st & PERF_SAMPLE_IDENTIFIER) {
			t.id = take_u64(&tc);
			t.has_id = true;
		}
	}
	if (t.has_id && (ret = check_id(d, a, t.id, out)) <= 0)
		return ret;

	cur = (struct cursor){ data, 8, size - trailer_size };
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct ms_mmap *m = &out->u.mmap;

		memset(m, 0, sizeof(*m));
		m->pid = take_u32(c);
		m->tid = take_u32(c);
		m->start = take_u64(c);
		m->len = take_u64(c);
		m->pgoff = take_u64(c);
		if (type == PERF_RECORD_MMAP2) {
			if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				uint8_t n = data[c->pos];

				if (n > MS_BUILD_ID_MAX)
					return skip(out, "bad-build-id",
						    "mmap2 record with a build id of %u bytes (at most %d)",
						    n, MS_BUILD_ID_MAX);
				m->build_id_len = n;
				memcpy(m->build_id, data + c->pos + 4, n);
				c->pos += 24;
			} else {
				m->maj = take_u32(c);
				m->min = take_u32(c);
				m->ino = take_u64(c);
				m->ino_generation = take_u64(c);
			}
			m->prot = take_u32(c);
			m->flags = take_u32(c);
		}
		m->cpumode = cpumode_of(misc);
		if ((ret = take_string(c, size, "filename", &m->filename, out)) <= 0)
			return ret;
		m->time = t.time;
		out->time = t.time;
		return MS_DECODE_MMAP;
	}
	case PERF_RECORD_COMM: {
		struct ms_comm *cm = &out->u.comm;

		memset(cm, 0, sizeof(*cm));
		cm->pid = take_u32(c);
		cm->tid = take_u32(c);
		cm->exec = !!(misc & PERF_RECORD_MISC_COMM_EXEC);
		if ((ret = take_string(c, size, "comm", &cm->comm, out)) <= 0)
			return ret;
		cm->time = t.time;
		out->time = t.time;
		return MS_DECODE_COMM;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		struct ms_task *tk = &out->u.task;

		tk->pid = take_u32(c);
		tk->ppid = take_u32(c);
		tk->tid = take_u32(c);
		tk->ptid = take_u32(c);
		tk->time = take_u64(c);
		/* the trailer's time is what every other record is ordered by */
		if (t.has_time)
			tk->time = t.time;
		out->time = tk->time;
		return type == PERF_RECORD_FORK ? MS_DECODE_FORK : MS_DECODE_EXIT;
	}
	case PERF_RECORD_LOST: {
		struct ms_lost *l = &out->u.lost;

		l->source = MS_LOST_KERNEL;
		l->id = take_u64(c);
		l->count = take_u64(c);
		if ((ret = check_id(d, a, l->id, out)) <= 0)
			return ret;
		l->time = t.time;
		out->time = t.time;
		return MS_DECODE_LOST;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		struct ms_lost *l = &out->u.lost;

		l->source = MS_LOST_KERNEL;
		l->count = take_u64(c);
		l->id = t.has_id ? t.id : 0;
		l->time = t.time;
		out->time = t.time;
		return MS_DECODE_LOST;
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		struct ms_switch *sw = &out->u.sw;

		/* who and when are in the trailer only: without it the record says nothing */
		if (!t.has_tid || !t.has_time)
			return skip(out, "switch-without-sample-id",
				    "%s record without the tid and time of a sample_id_all "
				    "trailer (sample_type 0x%" PRIx64 ")", ms_perf_record_name(type),
				    a->sample_type);
		if (size != 8 + (size_t)fixed + trailer_size)
			return skip(out, "bad-record-size",
				    "%s record of %zu bytes, not its %d bytes of fields and a "
				    "%zu-byte sample_id trailer", ms_perf_record_name(type), size,
				    fixed, trailer_size);
		/* the cpu-wide kind's body names the other task: not recorded */
		sw->pid = t.pid;
		sw->tid = t.tid;
		sw->time = t.time;
		sw->cpu = t.has_cpu ? t.cpu : cpu;
		sw->out = !!(misc & PERF_RECORD_MISC_SWITCH_OUT);
		sw->preempt = sw->out && (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		out->time = t.time;
		return MS_DECODE_SWITCH;
	}
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE: {
		struct ms_throttle *th = &out->u.throttle;

		th->time = take_u64(c);
		th->id = take_u64(c);
		if ((ret = check_id(d, a, th->id, out)) <= 0)
			return ret;
		if (t.has_time)
			th->time = t.time;
		th->unthrottle = type == PERF_RECORD_UNTHROTTLE;
		out->time = th->time;
		return MS_DECODE_THROTTLE;
	}
	}
	return skip(out, "unknown-kernel-record", "kernel record type %u is not decoded", type);
}

/*
 * The attr to lay the record out with: for a sample, the one that lists
 * its id when every attr puts the id in the same place; when the latest
 * carries PERF_SAMPLE_IDENTIFIER, the one owning the id at its fixed
 * place; else the latest.
 */
static const struct ms_attr *pick_attr(const struct ms_decoder *d, const uint8_t *data,
				       size_t size, uint32_t type, struct ms_decoded *out)
{
	const struct ms_attr *latest = &d->attrs[d->n_attrs - 1], *owner;
	size_t at;
	uint64_t id;

	if (d->n_attrs == 1)
		return latest;
	if (!(latest->sample_type & PERF_SAMPLE_IDENTIFIER)) {
		/* a sample's id, where every attr puts it, names its attr */
		if (type != PERF_RECORD_SAMPLE || !d->sample_id_at || size < d->sample_id_at + 8)
			return latest;
		memcpy(&id, data + d->sample_id_at, 8);
		owner = attr_of_id(d, id);
		if (!owner)
			skip(out, "unknown-id", "%s record with event id %" PRIu64
			     ", which no attr record lists", ms_perf_record_name(type), id);
		return owner;
	}
	if (type == PERF_RECORD_SAMPLE)
		at = 8;
	else if (latest->flags & MS_ATTR_SAMPLE_ID_ALL)
		at = size - 8;
	else
		return latest;
	if (size < 16) {
		skip(out, "truncated-record", "%s record of %zu bytes has no room for its identifier",
		     ms_perf_record_name(type), size);
		return NULL;
	}
	memcpy(&id, data + at, 8);
	owner = attr_of_id(d, id);
	if (!owner || !(owner->sample_type & PERF_SAMPLE_IDENTIFIER)) {
		skip(out, "unknown-id", "%s record with identifier %" PRIu64
		     ", which no attr with identifiers lists", ms_perf_record_name(type), id);
		return NULL;
	}
	return owner;
}

int ms_decode(const struct ms_decoder *d, uint32_t cpu, const uint8_t *data, size_t len,
	      struct ms_decoded *out)
{
	struct perf_event_header h;
	const struct ms_attr *a;

	out->type = 0;
	out->time = 0;
	out->problem = NULL;
	out->detail[0] = '\0';
	out->foreign_frames = 0;
	if (!d->n_attrs)
		return problem(out, MS_DECODE_FATAL, "no-attr",
			       "a raw record came before any attr record");
	if (len < sizeof(h))
		return skip(out, "bad-record-size",
			    "raw record of %zu bytes is shorter than a perf_event_header", len);
	memcpy(&h, data, sizeof(h));
	out->type = h.type;
	if (h.size != len)
		return skip(out, "bad-record-size",
			    "%s record whose header says %u bytes in a raw record of %zu",
			    ms_perf_record_name(h.type), h.size, len);
	if (h.size % 8)
		return skip(out, "bad-record-size",
			    "%s record of %u bytes, not a multiple of 8",
			    ms_perf_record_name(h.type), h.size);
	if (h.type != PERF_RECORD_SAMPLE && fixed_size(h.type) < 0)
		return skip(out, "unknown-kernel-record",
			    "kernel record type %u (%s) is not decoded", h.type,
			    ms_perf_record_name(h.type));
	a = pick_attr(d, data, len, h.type, out);
	if (!a)
		return MS_DECODE_SKIP;
	if (h.type == PERF_RECORD_SAMPLE)
		return decode_sample(d, a, cpu, data, len, h.misc, out);
	return decode_other(d, a, cpu, data, len, h.misc, out);
}

/* ---- the stage ------------------------------------------------------------ */

/*
 * What the ordering holds: a head, then either an encoded record to write
 * as it is (a record passed through, or a sample, packed when it was
 * decoded), or a decoded record in a compact form that is packed when it
 * goes out.
 */
struct stored_head {
	uint32_t kind;
	uint32_t len;		/* an encoded record's bytes; 0: a decoded record */
};

#define KINDS_COUNTED 64

/*
 * Where the fields of a sample are for the latest attr, when its samples
 * are words at fixed places, then the callchain, the registers and the
 * stack copy (what ms-collect asks for): see fast_sample().
 */
struct fast_layout {
	bool on;
	/* offsets in the record, 0 when absent */
	uint16_t ip, tid, time, id, cpu, period;
	uint16_t words_end;		/* after the fixed words */
	bool chain, regs, stack;
	uint32_t n_regs;		/* popcount(sample_regs_user) */
	uint64_t regs_mask;
	const struct ms_attr *attr;
};

struct stage {
	const char *in_name;
	struct ms_reader *r;
	struct ms_writer *w;
	struct ms_order order;
	struct ms_problems problems;
	const char *map;		/* the input file's bytes, when samples refer to them */
	size_t map_len;
	uint64_t offset;		/* of the record being handled */
	uint64_t n_in[KINDS_COUNTED + 1], n_out[KINDS_COUNTED + 1];
	uint64_t n_skipped;
	uint64_t n_bpf;		/* good records of the BPF sampler */
	struct ms_py_pair pair;	/* Python walker records waiting for their samples */
	struct ms_raw raw;
	struct ms_attr attr;
	struct ms_tracepoint tracepoint;
	struct ms_decoded d;
	union {
		struct ms_mmap mmap;
		struct ms_comm comm;
	} scratch;
	struct ms_decoder dec;
	struct fast_layout fast;
	bool checked_only;
	enum ms_stack_bytes stack_bytes;
	uint64_t n_fast;
	/* the input, when mapped: fast samples in it are packed when they go out */
	const char *in_map;
	size_t in_map_len;
	struct ms_sample emit_scratch;	/* counts for fp_sample_bound() */
};

static unsigned kind_slot(uint32_t kind)
{
	return kind < KINDS_COUNTED ? kind : KINDS_COUNTED;
}

/* Whether sample s's stack bytes are referred to in the input, not copied. */
static bool in_file(const struct stage *st, const struct ms_sample *s)
{
	return st->map && s->stack_len && (const char *)s->stack >= st->map &&
	       (size_t)((const char *)s->stack - st->map) <= st->map_len - s->stack_len;
}

/* ---- the fast path for samples ---- */

/* The fields fast_check() handles: no READ, RAW or BRANCH_STACK. */
#define FAST_SAMPLE_BITS \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | \
	 PERF_SAMPLE_STACK_USER)

/* The layout of the latest attr's samples, when fast_check() can take them. */
static void fast_layout_set(struct fast_layout *L, const struct ms_decoder *d, bool off)
{
	const struct ms_attr *a;
	uint64_t st;
	uint16_t pos = 8;

	memset(L, 0, sizeof(*L));
	if (off || !d->n_attrs || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return;
	a = &d->attrs[d->n_attrs - 1];
	st = a->sample_type;
	/* with several attrs, an identifier chooses the attr: pick_attr() */
	if ((st & ~(uint64_t)FAST_SAMPLE_BITS) || a->type == PERF_TYPE_TRACEPOINT ||
	    (d->n_attrs > 1 && (st & PERF_SAMPLE_IDENTIFIER)))
		return;
	/* decode_sample()'s order; a later ID is the id it checks */
	if (st & PERF_SAMPLE_IDENTIFIER)
		L->id = pos, pos += 8;
	if (st & PERF_SAMPLE_IP)
		L->ip = pos, pos += 8;
	if (st & PERF_SAMPLE_TID)
		L->tid = pos, pos += 8;
	if (st & PERF_SAMPLE_TIME)
		L->time = pos, pos += 8;
	if (st & PERF_SAMPLE_ADDR)
		pos += 8;
	if (st & PERF_SAMPLE_ID)
		L->id = pos, pos += 8;
	if (st & PERF_SAMPLE_STREAM_ID)
		pos += 8;
	if (st & PERF_SAMPLE_CPU)
		L->cpu = pos, pos += 8;
	if (st & PERF_SAMPLE_PERIOD)
		L->period = pos, pos += 8;
	L->words_end = pos;
	L->chain = st & PERF_SAMPLE_CALLCHAIN;
	L->regs = st & PERF_SAMPLE_REGS_USER;
	L->stack = st & PERF_SAMPLE_STACK_USER;
	L->n_regs = ms_popcount64(a->sample_regs_user);
	L->regs_mask = a->sample_regs_user;
	L->attr = a;
	L->on = true;
}

/*
 * A sample that passed fast_check(): where its fields are in its record
 * (offsets, 0 when absent; the record is at most 65535 bytes), and what
 * the checks worked out. fast_pack() writes its SAMPLE from this and the
 * record's bytes.
 */
struct fast_ref {
	const uint8_t *data;
	uint64_t regs_mask;
	uint32_t cpu;
	uint32_t stack_len;
	uint16_t tid, time, period, ip;
	uint16_t chain, nr;		/* the callchain's entries */
	uint16_t n_k, k_end;		/* kernel frames, all before entry k_end */
	uint16_t n_u, u_from;		/* user frames, none before entry u_from */
	uint16_t regs, stack;
	uint8_t n_regs, abi, cpumode;
	bool kernel_first;		/* the context before any marker */
	bool in_file;			/* the stack is referred to in the input */
};

/*
 * The checks decode_sample() makes, for a sample of the fast layout L,
 * and nothing else: true when it would decode the sample, with R filled.
 * False for a sample it would skip, and for what is unusual (frames of a
 * guest or hypervisor, an id that is not among the latest attr's first
 * few): ms_decode() judges those, and reports.
 */
/* Inlined in each of its callers: the samples' hot path (see fast_sample_paired()). */
static inline __attribute__((always_inline)) bool
fast_check(const struct fast_layout *L, uint32_t cpu, const uint8_t *data, size_t len,
	   struct fast_ref *R)
{
	size_t pos = L->words_end;
	struct perf_event_header h;

	if (len < pos)
		return false;
	memcpy(&h, data, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE || h.size != len || len % 8)
		return false;
	R->data = data;
	R->cpu = L->cpu ? ms_load32(data + L->cpu) : cpu;
	R->tid = L->tid;
	R->time = L->time;
	R->period = L->period;
	R->ip = L->ip;
	R->cpumode = (uint8_t)cpumode_of(h.misc);
	R->kernel_first = R->cpumode == MS_CPUMODE_KERNEL;
	R->nr = R->n_k = R->k_end = R->n_u = R->u_from = 0;
	if (L->chain) {
		bool kernel = R->kernel_first;
		uint32_t nr, n_k = 0, n_u = 0, k_end = 0, u_from = 0;
		uint64_t n;

		if (len - pos < 8)
			return false;
		n = ms_load64(data + pos);
		pos += 8;
		if (n > (len - pos) / 8 || n > MS_CHAIN_MAX)
			return false;
		nr = (uint32_t)n;
		R->chain = (uint16_t)pos;
		for (uint32_t i = 0; i < nr; i++) {
			uint64_t ip = ms_load64(data + pos + 8 * (size_t)i);

			if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
				if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
					kernel = true;
				else if (ip == (uint64_t)PERF_CONTEXT_USER)
					kernel = false;
				else
					return false;	/* foreign frames: counted there */
			} else if (kernel) {
				n_k++;
				k_end = i + 1;
			} else if (!n_u++) {
				u_from = i;
			}
		}
		pos += (size_t)nr * 8;
		R->nr = (uint16_t)nr;
		R->n_k = (uint16_t)n_k;
		R->k_end = (uint16_t)k_end;
		R->n_u = (uint16_t)n_u;
		R->u_from = (uint16_t)u_from;
	}
	R->abi = 0;
	R->n_regs = 0;
	if (L->regs) {
		uint64_t abi;

		if (len - pos < 8)
			return false;
		abi = ms_load64(data + pos);
		pos += 8;
		if (abi > PERF_SAMPLE_REGS_ABI_64)
			return false;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if ((size_t)L->n_regs * 8 > len - pos)
				return false;
			R->abi = (uint8_t)abi;
			R->n_regs = (uint8_t)L->n_regs;
			R->regs = (uint16_t)pos;
			pos += (size_t)L->n_regs * 8;
		}
	}
	R->regs_mask = R->n_regs ? L->regs_mask : 0;
	R->stack_len = 0;
	R->stack = 0;
	if (L->stack) {
		uint64_t size, dyn;

		if (len - pos < 8)
			return false;
		size = ms_load64(data + pos);
		pos += 8;
		if (size) {
			if (size > MS_STACK_MAX || size % 8 || size + 8 > len - pos)
				return false;
			R->stack = (uint16_t)pos;
			pos += size;
			dyn = ms_load64(data + pos);
			pos += 8;
			if (dyn > size)
				return false;
			R->stack_len = (uint32_t)dyn;
		}
	}
	if (pos != len)
		return false;
	if (L->id) {
		/* check_id()'s common case; anything else is judged there */
		const struct ms_attr *a = L->attr;
		uint64_t id = ms_load64(data + L->id);
		uint32_t i, n = a->n_ids < 8 ? a->n_ids : 8;

		for (i = 0; i < n && a->ids[i] != id; i++)
			;
		if (i == n)
			return false;
	}
	return true;
}

/* fp_sample_bound() of the sample R describes. */
static size_t fast_bound(struct ms_sample *scratch, const struct fast_ref *R)
{
	scratch->n_kchain = R->n_k;
	scratch->n_uchain = R->n_u;
	scratch->n_regs = R->n_regs;
	scratch->stack_len = R->stack_len;
	scratch->stack_in_file = R->in_file;
	return fp_sample_bound(scratch);
}

/*
 * Pack the frames of chain entries [from, to) in the kernel's context
 * (kernel true) or the user's, starting in context kernel_at_from. The
 * only markers are PERF_CONTEXT_KERNEL and _USER (fast_check()).
 */
static char *pack_frames(char *p, const uint8_t *chain, uint32_t from, uint32_t to,
			 bool kernel_at_from, bool kernel)
{
	bool in = kernel_at_from;

	for (uint32_t i = from; i < to; i++) {
		uint64_t ip = ms_load64(chain + 8 * (size_t)i);

		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			in = ip == (uint64_t)PERF_CONTEXT_KERNEL;
		else if (in == kernel)
			p = fp_addr(p, ip);
	}
	return p;
}

/* The bytes fp_sample() makes of what ms_decode() makes of the sample R describes. */
static char *fast_pack(char *p, const struct fast_ref *R, const char *map)
{
	const uint8_t *data = R->data;
	size_t n;

	*p++ = (char)(0x90 | 14);
	*p++ = (char)MS_REC_SAMPLE;
	p = fp_uint(p, R->tid ? ms_load32(data + R->tid) : 0);
	p = fp_uint(p, R->tid ? ms_load32(data + R->tid + 4) : 0);
	p = fp_addr(p, R->time ? ms_load64(data + R->time) : 0);
	p = fp_uint(p, R->cpu);
	p = fp_uint(p, R->period ? ms_load64(data + R->period) : 0);
	p = fp_addr(p, R->ip ? ms_load64(data + R->ip) : 0);
	*p++ = (char)R->cpumode;	/* fp_uint() of a value below 128 */
	p = fp_array(p, R->n_k);
	if (R->n_k)
		p = pack_frames(p, data + R->chain, 0, R->k_end, R->kernel_first, true);
	p = fp_array(p, R->n_u);
	if (R->n_u)
		p = pack_frames(p, data + R->chain, R->u_from, R->nr, false, false);
	*p++ = (char)R->abi;		/* at most 2 */
	p = fp_uint(p, R->regs_mask);
	n = 8 * (size_t)R->n_regs;
	p = fp_bin(p, (uint32_t)n);
	/*
	 * The registers as they are (this host's order: fast_layout_set()),
	 * in blocks of fixed sizes: a memcpy of a variable size is inlined
	 * as "rep movsq", slow to start for 136 bytes.
	 */
	{
		const uint8_t *src = data + R->regs;
		size_t i = 0;

		for (; i + 64 <= n; i += 64)
			memcpy(p + i, src + i, 64);
		for (; i + 16 <= n; i += 16)
			memcpy(p + i, src + i, 16);
		if (i < n)
			memcpy(p + i, src + i, 8);
	}
	p += n;
	if (R->in_file) {
		*p++ = (char)(0x90 | 2);
		p = fp_uint(p, (uint64_t)((const char *)data + R->stack - map));
		p = fp_uint(p, R->stack_len);
	} else {
		p = fp_bin(p, R->stack_len);
		if (R->stack_len)
			memcpy(p, data + R->stack, R->stack_len);
		p += R->stack_len;
	}
	return p;
}

/*
 * A sample of the fast layout, checked and packed straight from its
 * bytes: the SAMPLE store_sample() would have queued after ms_decode(),
 * without a struct ms_sample between. When the SAMPLE carries a copy of
 * the stack (kilobytes) and the record lies in the mapped input, which
 * stays until the end, only R is queued and the SAMPLE is packed in the
 * writer's buffer when it goes out: the copy is not copied through the
 * ordering. (For a small SAMPLE, packing in the writer costs more than
 * copying the bytes from the ordering.) Returns 1 when the sample was
 * queued, 0 when ms_decode() must judge it, -1 on an error of the
 * ordering.
 */
#define FAST_DEFER_STACK 1024

static inline __attribute__((always_inline)) int
fast_sample(struct stage *st, uint32_t cpu, const uint8_t *data, size_t len)
{
	struct stored_head *h;
	struct fast_ref R;
	uint64_t time;

	if (!fast_check(&st->fast, cpu, data, len, &R))
		return 0;
	R.in_file = false;
	if (st->map && R.stack_len) {
		const char *stack = (const char *)data + R.stack;

		R.in_file = stack >= st->map &&
			    (size_t)(stack - st->map) <= st->map_len - R.stack_len;
	}
	time = R.time ? ms_load64(data + R.time) : 0;
	if (!R.in_file && R.stack_len >= FAST_DEFER_STACK && st->in_map &&
	    (const char *)data >= st->in_map &&
	    len <= st->in_map_len - (size_t)((const char *)data - st->in_map)) {
		h = ms_order_reserve(&st->order, sizeof(*h) + sizeof(R));
		if (!h)
			return -1;
		h->kind = MS_REC_SAMPLE;
		h->len = 0;
		memcpy(h + 1, &R, sizeof(R));
	} else {
		char *end;

		h = ms_order_reserve(&st->order, sizeof(*h) + fast_bound(&st->d.u.sample, &R));
		if (!h)
			return -1;
		end = fast_pack((char *)(h + 1), &R, st->map);
		h->kind = MS_REC_SAMPLE;
		h->len = (uint32_t)(end - (char *)(h + 1));
	}
	return ms_order_commit(&st->order, MS_ORDER_TIMED, time) < 0 ? -1 : 1;
}

/*
 * A sample paired with a Python walker record (perf/pypair.h) is queued
 * in one entry with its PY_STACK: a stored_head of kind PY_STACK and the
 * record's bytes, padded to 8, then the sample's own stored_head and
 * bytes. Both leave the ordering together, the PY_STACK first, whatever
 * else it holds or must let out early (emit_stored()).
 */
static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t py_prefix_bound(const struct ms_py_pending *py)
{
	return py ? sizeof(struct stored_head) + pad8(ms_py_stack_bound(py)) : 0;
}

/* Pack py's PY_STACK for the sample (pid, tid, time, cpu) at h: where the sample's head goes. */
static struct stored_head *py_prefix(struct stored_head *h, const struct ms_py_pending *py,
				     uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	char *end = ms_py_stack_fp((char *)(h + 1), py, pid, tid, time, cpu);

	h->kind = MS_REC_PY_STACK;
	h->len = (uint32_t)(end - (char *)(h + 1));
	return (struct stored_head *)((char *)(h + 1) + pad8(h->len));
}

/*
 * fast_sample() while walker records wait: a sample whose thread has one
 * on its ring is packed after its PY_STACK (its stack copied or referred
 * to, never deferred); any other is fast_sample()'s. The caller chooses
 * it, so that fast_sample() is what it was when no record waits.
 */
static __attribute__((noinline)) int fast_sample_paired(struct stage *st, uint32_t cpu,
							const uint8_t *data, size_t len)
{
	const struct ms_py_pending *py;
	struct stored_head *h;
	struct fast_ref R;
	uint64_t time;
	char *end;

	if (!fast_check(&st->fast, cpu, data, len, &R))
		return 0;
	if (!R.tid || !(py = ms_py_pair_take(&st->pair, cpu, ms_load32(data + R.tid + 4))))
		return fast_sample(st, cpu, data, len);
	R.in_file = false;
	if (st->map && R.stack_len) {
		const char *stack = (const char *)data + R.stack;

		R.in_file = stack >= st->map &&
			    (size_t)(stack - st->map) <= st->map_len - R.stack_len;
	}
	time = R.time ? ms_load64(data + R.time) : 0;
	h = ms_order_reserve(&st->order, py_prefix_bound(py) + sizeof(*h) +
			     fast_bound(&st->d.u.sample, &R));
	if (!h)
		return -1;
	h = py_prefix(h, py, ms_load32(data + R.tid), ms_load32(data + R.tid + 4), time, R.cpu);
	end = fast_pack((char *)(h + 1), &R, st->map);
	h->kind = MS_REC_SAMPLE;
	h->len = (uint32_t)(end - (char *)(h + 1));
	return ms_order_commit(&st->order, MS_ORDER_TIMED, time) < 0 ? -1 : 1;
}

/* A sample queued as a fast_ref goes out: packed in the writer's buffer. */
static int emit_ref(struct stage *st, const unsigned char *p)
{
	struct fast_ref R;
	size_t bound;
	char *p0, *end;

	memcpy(&R, p, sizeof(R));
	bound = fast_bound(&st->emit_scratch, &R);
	ms_writer_begin(st->w, MS_REC_SAMPLE);
	p0 = ms_writer_reserve(st->w, bound);
	if (p0) {
		end = fast_pack(p0, &R, st->map);
		ms_writer_advance(st->w, (size_t)(end - p0));
		return ms_writer_end(st->w);
	}
	/* only a failed writer has no room (the bound is below MS_RECORD_MAX) */
	ms_writer_end(st->w);
	return -1;
}

_Static_assert(2 + 5 + 5 + 9 + 5 + 9 + 9 + 5 + 5 + 5 + 9 * MS_CHAIN_MAX + 5 + 9 + 5 +
	       8 * MS_REGS_MAX + 5 + MS_STACK_MAX <= MS_RECORD_MAX,
	       "a SAMPLE of the fast path may not fit in a record");

static size_t stored_size(const struct ms_decoded *d, int kind)
{
	size_t n = sizeof(struct stored_head);

	switch (kind) {
	case MS_REC_MMAP:
		return n + sizeof(struct ms_mmap) + d->u.mmap.filename.len;
	case MS_REC_COMM:
		return n + sizeof(struct ms_comm) + d->u.comm.comm.len;
	case MS_REC_FORK:
	case MS_REC_EXIT:
		return n + sizeof(struct ms_task);
	case MS_REC_LOST:
		return n + sizeof(struct ms_lost);
	case MS_REC_SWITCH:
		return n + sizeof(struct ms_switch);
	default:
		return n + sizeof(struct ms_throttle);
	}
}

static void store(unsigned char *p, const struct ms_decoded *d, int kind)
{
	struct stored_head *h = (struct stored_head *)p;

	h->kind = (uint32_t)kind;
	h->len = 0;
	p += sizeof(*h);
	switch (kind) {
	case MS_REC_MMAP:
		memcpy(p, &d->u.mmap, sizeof(d->u.mmap));
		memcpy(p + sizeof(d->u.mmap), d->u.mmap.filename.ptr, d->u.mmap.filename.len);
		break;
	case MS_REC_COMM:
		memcpy(p, &d->u.comm, sizeof(d->u.comm));
		memcpy(p + sizeof(d->u.comm), d->u.comm.comm.ptr, d->u.comm.comm.len);
		break;
	case MS_REC_FORK:
	case MS_REC_EXIT:
		memcpy(p, &d->u.task, sizeof(d->u.task));
		break;
	case MS_REC_LOST:
		memcpy(p, &d->u.lost, sizeof(d->u.lost));
		break;
	case MS_REC_SWITCH:
		memcpy(p, &d->u.sw, sizeof(d->u.sw));
		break;
	default:
		memcpy(p, &d->u.throttle, sizeof(d->u.throttle));
		break;
	}
}

/* ms_order's emit: one stored entry to the writer. */
static int emit_stored(void *ctx, const void *data, size_t len)
{
	struct stage *st = ctx;
	const struct stored_head *h = data;
	const unsigned char *p = (const unsigned char *)data + sizeof(*h);
	int ret;

	if (h->len) {
		ret = ms_writer_copy(st->w, (const char *)p, h->len);
		if (__builtin_expect(h->kind == MS_REC_PY_STACK, 0) && ret == 0) {
			/* a sample's paired PY_STACK went first: its sample right after */
			size_t skip = sizeof(*h) + pad8(h->len);

			st->n_out[MS_REC_PY_STACK]++;
			return emit_stored(ctx, (const unsigned char *)data + skip, len - skip);
		}
	} else if (h->kind == MS_REC_SAMPLE) {
		ret = emit_ref(st, p);
	} else {
		switch (h->kind) {
		case MS_REC_MMAP: {
			struct ms_mmap *m = &st->scratch.mmap;

			memcpy(m, p, sizeof(*m));
			m->filename.ptr = (const char *)p + sizeof(*m);
			ret = ms_mmap_pack(st->w, m);
			break;
		}
		case MS_REC_COMM: {
			struct ms_comm *cm = &st->scratch.comm;

			memcpy(cm, p, sizeof(*cm));
			cm->comm.ptr = (const char *)p + sizeof(*cm);
			ret = ms_comm_pack(st->w, cm);
			break;
		}
		case MS_REC_FORK:
		case MS_REC_EXIT: {
			struct ms_task t;

			memcpy(&t, p, sizeof(t));
			ret = ms_task_pack(st->w, h->kind, &t);
			break;
		}
		case MS_REC_LOST: {
			struct ms_lost l;

			memcpy(&l, p, sizeof(l));
			ret = ms_lost_pack(st->w, &l);
			break;
		}
		case MS_REC_SWITCH: {
			struct ms_switch sw;

			memcpy(&sw, p, sizeof(sw));
			ret = ms_switch_pack(st->w, &sw);
			break;
		}
		default: {
			struct ms_throttle t;

			memcpy(&t, p, sizeof(t));
			ret = ms_throttle_pack(st->w, &t);
			break;
		}
		}
	}
	if (ret < 0)
		return -1;
	st->n_out[kind_slot(h->kind)]++;
	return 0;
}

/*
 * A sample is packed into the ordering as the record it will be written
 * as: one pass over its fields instead of a compact copy now and a copy
 * back and packing when it goes out.
 */
static int store_sample(struct stage *st, uint32_t ring, struct ms_sample *s)
{
	const struct ms_py_pending *py = NULL;
	struct stored_head *h;
	char *end;

	if (!ms_py_pair_idle(&st->pair))
		py = ms_py_pair_take(&st->pair, ring, s->tid);
	s->stack_in_file = in_file(st, s);
	s->stack_offset = s->stack_in_file ? (uint64_t)((const char *)s->stack - st->map) : 0;
	h = ms_order_reserve(&st->order, py_prefix_bound(py) + sizeof(*h) + fp_sample_bound(s));
	if (!h)
		return -1;
	if (py)
		h = py_prefix(h, py, s->pid, s->tid, s->time, s->cpu);
	end = fp_sample((char *)(h + 1), s);
	h->kind = MS_REC_SAMPLE;
	h->len = (uint32_t)(end - (char *)(h + 1));
	return ms_order_commit(&st->order, MS_ORDER_TIMED, s->time);
}

/*
 * The bytes ms_switch_out_pack() writes, by the encoder of a SAMPLE's
 * fields: a SWITCH_OUT is [29, <a SAMPLE's fields>, state, cause], an
 * array of 16 (a 3-byte header where a SAMPLE's 14 take one).
 */
static size_t fp_switch_out_bound(const struct ms_switch_out *so)
{
	return 2 + fp_sample_bound(&so->sample) + 9 + 5;
}

static char *fp_switch_out(char *p, const struct ms_switch_out *so)
{
	char *end = fp_sample(p + 2, &so->sample);

	/* over the SAMPLE's header and kind, which fp_sample() put at p + 2 */
	p[0] = (char)0xdc;
	p[1] = 0;
	p[2] = 16;
	p[3] = (char)MS_REC_SWITCH_OUT;
	end = fp_uint(end, so->state);
	return fp_uint(end, so->cause);
}

/* A switch-out is held for ordering as a sample is: packed, its stack as the sample's. */
static int store_switch_out(struct stage *st, struct ms_switch_out *so)
{
	struct ms_sample *s = &so->sample;
	struct stored_head *h;
	char *end;

	s->stack_in_file = in_file(st, s);
	s->stack_offset = s->stack_in_file ? (uint64_t)((const char *)s->stack - st->map) : 0;
	h = ms_order_reserve(&st->order, sizeof(*h) + fp_switch_out_bound(so));
	if (!h)
		return -1;
	end = fp_switch_out((char *)(h + 1), so);
	h->kind = MS_REC_SWITCH_OUT;
	h->len = (uint32_t)(end - (char *)(h + 1));
	return ms_order_commit(&st->order, MS_ORDER_TIMED, s->time);
}

static int pass_through(struct stage *st, const struct ms_record *rec, enum ms_order_time how,
			uint64_t time)
{
	struct stored_head *h = ms_order_reserve(&st->order, sizeof(*h) + rec->len);

	if (!h)
		return -1;
	h->kind = rec->kind;
	h->len = (uint32_t)rec->len;
	memcpy(h + 1, rec->bytes, rec->len);
	return ms_order_commit(&st->order, how, time);
}

/*
 * Where the time of a typed record is, for those ordered by time; 0 for
 * the rest, which keep their place.
 */
static unsigned time_field(uint32_t kind)
{
	switch (kind) {
	case MS_REC_SAMPLE:
	case MS_REC_MMAP:
	case MS_REC_COMM:
	case MS_REC_SWITCH:
	case MS_REC_SWITCH_OUT:
	case MS_REC_OFF_CPU:
		return 3;
	case MS_REC_FORK:
	case MS_REC_EXIT:
		return 5;
	case MS_REC_LOST:
		return 2;
	case MS_REC_THROTTLE:
	case MS_REC_DUTY:
		return 1;
	default:
		return 0;
	}
}

static int handle_typed(struct stage *st, const struct ms_record *rec)
{
	unsigned at = time_field(rec->kind);
	struct ms_cursor c;
	uint32_t n;
	uint64_t time;

	/*
	 * What ms-collect read of a JIT goes ahead of every record still held
	 * (time 0: as early as it can), so that every sample not yet passed
	 * on, the one that made it read included, is unwound with it (see
	 * stream/records.h). Its own time stays in it for ms-unwind.
	 */
	if (rec->kind == MS_REC_JIT_FUNC || rec->kind == MS_REC_JIT_READ ||
	    rec->kind == MS_REC_JIT_OBJECT || rec->kind == MS_REC_PY_PROCESS ||
	    rec->kind == MS_REC_PY_CODE || rec->kind == MS_REC_PY_SNAPSHOT)
		return pass_through(st, rec, MS_ORDER_TIMED, 0);
	/* ms-collect dropped records, of rings it does not name: a sample may be among them */
	if (rec->kind == MS_REC_LOST)
		ms_py_pair_lost(&st->pair, UINT32_MAX);
	/* not validated here: the record goes on unchanged, and is checked downstream */
	ms_cur_init(&c, rec->bytes, rec->len);
	if (at && ms_cur_array(&c, &n) > 0 && n > at) {
		unsigned i = 0;

		while (i < at && ms_cur_skip(&c) > 0)
			i++;
		if (i == at && ms_cur_uint(&c, &time) > 0)
			return pass_through(st, rec, MS_ORDER_TIMED, time);
	}
	return pass_through(st, rec, MS_ORDER_UNTIMED, 0);
}

/*
 * A raw record laid out as ms-collect writes it, [11, cpu, data] with cpu
 * an unsigned integer, read from its bytes (the reader's scan checked their
 * lengths); false for anything else, which ms_raw_unpack() judges.
 */
static bool raw_from_bytes(const struct ms_record *rec, struct ms_raw *raw)
{
	const unsigned char *p = (const unsigned char *)rec->bytes;
	const unsigned char *end = p + rec->len;
	uint64_t cpu;
	size_t w;

	/* what ms_raw_pack() writes for a cpu below 128 and a sample: at once */
	if (rec->len >= 6 && p[0] == 0x93 && p[1] == MS_REC_RAW && p[2] <= 0x7f &&
	    p[3] == 0xc5 && (size_t)(p[4] << 8 | p[5]) == rec->len - 6) {
		raw->cpu = p[2];
		raw->data = p + 6;
		raw->len = (uint32_t)(rec->len - 6);
		return true;
	}
	if (rec->len < 4 || p[0] != 0x93 || p[1] != MS_REC_RAW)
		return false;
	p += 2;
	if (p[0] <= 0x7f) {
		cpu = *p++;
	} else if (p[0] >= 0xcc && p[0] <= 0xce) {
		w = (size_t)1 << (p[0] - 0xcc);
		if ((size_t)(end - p) < 1 + w)
			return false;
		cpu = 0;
		for (size_t i = 1; i <= w; i++)
			cpu = cpu << 8 | p[i];
		p += 1 + w;
	} else {
		return false;
	}
	if (p >= end || p[0] < 0xc4 || p[0] > 0xc6)
		return false;
	w = (size_t)1 << (p[0] - 0xc4);
	if ((size_t)(end - p) < 1 + w)
		return false;
	{
		uint64_t n = 0;

		for (size_t i = 1; i <= w; i++)
			n = n << 8 | p[i];
		p += 1 + w;
		if (n != (uint64_t)(end - p))
			return false;
		raw->len = (uint32_t)n;
	}
	raw->cpu = (uint32_t)cpu;
	raw->data = p;
	return true;
}

static int handle_raw(struct stage *st, const struct ms_record *rec)
{
	struct ms_decoded *d = &st->d;
	unsigned char *p;
	int kind;

	/* Anything unusual is judged by the generic codec. */
	if (!raw_from_bytes(rec, &st->raw) && ms_raw_unpack(rec, &st->raw) < 0)
		return -1;
	if (st->fast.on) {
		/* one test when no walker record waits */
		int ret = __builtin_expect(ms_py_pair_idle(&st->pair), 1) ?
			  fast_sample(st, st->raw.cpu, st->raw.data, st->raw.len) :
			  fast_sample_paired(st, st->raw.cpu, st->raw.data, st->raw.len);

		if (ret > 0) {
			st->n_fast++;
			return 0;
		}
		if (ret < 0)
			return -1;
	}
	kind = ms_decode(&st->dec, st->raw.cpu, st->raw.data, st->raw.len, d);
	if (kind == MS_DECODE_FATAL)
		return ms_error("'%s': the raw record at byte %" PRIu64
				" comes before any attr record: cannot decode it (was the stream "
				"written by ms-collect?)", st->in_name, rec->offset);
	if (kind == MS_DECODE_SKIP) {
		st->n_skipped++;
		ms_problems_add(&st->problems, d->problem, "%s (raw record at byte %" PRIu64 ")",
				d->detail, rec->offset);
		return 0;
	}
	if (d->foreign_frames)
		ms_problems_add(&st->problems, "foreign-callchain-frames",
				"%u hypervisor or guest frames left out of the sample "
				"at byte %" PRIu64, d->foreign_frames, rec->offset);
	if (kind == MS_DECODE_SAMPLE)
		return store_sample(st, st->raw.cpu, &d->u.sample);
	if (kind == MS_DECODE_SWITCH_OUT)
		return store_switch_out(st, &d->u.switch_out);
	if (kind == MS_DECODE_BPF) {
		/* to wait for its sample (perf/pypair.h); the output event's sample goes no further */
		st->n_bpf++;
		return ms_py_pair_record(&st->pair, st->raw.cpu, &d->u.bpf.rec, d->time);
	}
	/* nothing is written between a walker record and its sample but the sample */
	if (kind == MS_DECODE_LOST)
		ms_py_pair_lost(&st->pair, st->raw.cpu);
	p = ms_order_reserve(&st->order, stored_size(d, kind));
	if (!p)
		return -1;
	store(p, d, kind);
	return ms_order_commit(&st->order, MS_ORDER_TIMED, d->time);
}

/* ---- the stage's callbacks (stream/stage.h) ---- */

static int on_raw(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	(void)io;
	return handle_raw(ctx, rec);
}

/* The loop flushes what went out before it waits for input. */
static int on_round(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct stage *st = ctx;
	uint64_t emitted = st->order.round_limit;	/* what this round lets out */

	(void)io;
	(void)rec;
	if (ms_order_round(&st->order) < 0)
		return -1;
	ms_py_pair_expire(&st->pair, emitted);
	return 0;
}

static int on_attr(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct stage *st = ctx;

	(void)io;
	if (ms_attr_unpack(rec, &st->attr) < 0 || ms_decoder_add_attr(&st->dec, &st->attr) < 0)
		return -1;
	fast_layout_set(&st->fast, &st->dec, st->checked_only);
	return pass_through(st, rec, MS_ORDER_UNTIMED, 0);
}

/* A tracepoint's format, for the switch-outs of its samples; it goes on too. */
static int on_tracepoint(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	struct stage *st = ctx;

	(void)io;
	if (ms_tracepoint_unpack(rec, &st->tracepoint) < 0 ||
	    ms_decoder_add_tracepoint(&st->dec, &st->tracepoint) < 0)
		return -1;
	return pass_through(st, rec, MS_ORDER_UNTIMED, 0);
}

/* Every other kind goes on through the ordering, in its place in time. */
static int on_other(void *ctx, struct ms_stage_io *io, const struct ms_record *rec)
{
	(void)io;
	return handle_typed(ctx, rec);
}

static void print_stats(const struct stage *st)
{
	const char *me = ms_progname();

	for (unsigned k = 0; k <= KINDS_COUNTED; k++)
		if (st->n_in[k])
			fprintf(stderr, "%s: stats: in %s %" PRIu64 "\n", me,
				k < KINDS_COUNTED ? ms_record_kind_name(k) : "other", st->n_in[k]);
	for (unsigned k = 0; k <= KINDS_COUNTED; k++)
		if (st->n_out[k])
			fprintf(stderr, "%s: stats: out %s %" PRIu64 "\n", me,
				k < KINDS_COUNTED ? ms_record_kind_name(k) : "other", st->n_out[k]);
	if (st->n_bpf) {
		const struct ms_py_pair_counts *n = &st->pair.n;

		fprintf(stderr, "%s: stats: bpf records %" PRIu64 "\n", me, st->n_bpf);
		fprintf(stderr, "%s: stats: python records %" PRIu64 " paired %" PRIu64
			" unpaired %" PRIu64 " lost %" PRIu64 " full %" PRIu64 " expired %" PRIu64
			" at-end %" PRIu64 " bad-ring %" PRIu64 "\n", me, n->records, n->paired,
			n->unpaired, n->lost, n->full, n->expired, n->at_end, n->bad_ring);
	}
	fprintf(stderr, "%s: stats: skipped %" PRIu64 "\n", me, st->n_skipped);
}

/*
 * Whether samples refer to their stack copies in the input file (then
 * announced by a STACK_FILE record) or carry them. Auto refers only when
 * the input is a mapped file and the output is not a file: a pipe to
 * ms-unwind on this host.
 */
static int choose_stack_bytes(struct stage *st, int in_fd, int out_fd, enum ms_stack_bytes how)
{
	struct ms_stack_file f;
	char path[4096];
	const char *why;
	struct stat out;

	if (how == MS_STACK_BYTES_COPY)
		return 0;
	if (how == MS_STACK_BYTES_AUTO && fstat(out_fd, &out) == 0 && S_ISREG(out.st_mode))
		return 0;
	if (!ms_reader_map(st->r, &st->map_len)) {
		why = "it is not a regular file that could be mapped";
	} else if (ms_stack_file_describe(in_fd, &f, path, sizeof(path), &why) == 0) {
		st->map = ms_reader_map(st->r, &st->map_len);
		st->n_out[MS_REC_STACK_FILE]++;
		return ms_stack_file_pack(st->w, &f);
	}
	if (how == MS_STACK_BYTES_AUTO)
		return 0;
	return ms_error("'%s': cannot refer to the stack copies in the input: %s; use "
			"--stack-bytes=copy (or auto)", st->in_name, why);
}

static int on_header(void *ctx, struct ms_stage_io *io)
{
	struct stage *st = ctx;

	st->r = io->reader;
	st->w = io->writer;
	st->in_map = ms_reader_map(st->r, &st->in_map_len);
	return choose_stack_bytes(st, io->in_fd, io->out_fd, st->stack_bytes);
}

/*
 * The input ended: with its trailer, cut short, or at an error. What was
 * decoded goes on in every case; the loop gives a trailer only to a
 * complete input, so that downstream sees a stream cut short too.
 */
static int on_end(void *ctx, struct ms_stage_io *io, enum ms_stage_end how)
{
	struct stage *st = ctx;

	(void)how;
	memcpy(st->n_in, io->in, sizeof(st->n_in));
	ms_py_pair_end(&st->pair);
	if (ms_order_flush(&st->order) < 0 || ms_problems_write(st->w, &st->problems) < 0)
		return -1;
	st->n_out[MS_REC_PROBLEM] += st->problems.n;
	return 0;
}

_Static_assert(KINDS_COUNTED == MS_STAGE_KINDS, "n_in is the loop's counts per kind");

static const struct ms_stage_desc decode_stage = {
	.name = "ms-decode",
	/* ms-decode has never said how many records went out of a cut input */
	.flags = MS_STAGE_QUIET_CUT,
	.header = on_header,
	.on = {
		[MS_REC_RAW] = on_raw,
		[MS_REC_ROUND] = on_round,
		[MS_REC_ATTR] = on_attr,
		[MS_REC_TRACEPOINT] = on_tracepoint,
	},
	.other = on_other,
	.end = on_end,
};

int ms_decode_stage(int in_fd, const char *in_name, int out_fd, const char *out_name,
		    const struct ms_decode_options *opt)
{
	struct ms_stage_desc desc = decode_stage;
	struct stage *st = calloc(1, sizeof(*st));
	int code;

	if (!st) {
		ms_error("out of memory");
		return MS_EXIT_ERROR;
	}
	st->in_name = in_name;
	st->checked_only = opt->checked_only;
	st->stack_bytes = opt->stack_bytes;
	ms_decoder_init(&st->dec);
	ms_problems_init(&st->problems, "ms-decode");
	ms_py_pair_init(&st->pair, &st->problems);
	/*
	 * Chunks that hold the largest record passed through, and little
	 * more: the arena cycles through a few of them, and each first use
	 * of one costs a fault per page.
	 */
	ms_order_init(&st->order, opt->order_bytes ? opt->order_bytes : MS_DECODE_ORDER_BYTES,
		      MS_RECORD_MAX + 96 * 1024, emit_stored, st, &st->problems);
	desc.version = opt->version;
	desc.ctx = st;
	code = ms_stage_run(&desc, in_fd, in_name, out_fd, out_name);
	if (opt->stats)
		print_stats(st);
	if (opt->fast_samples)
		*opt->fast_samples = st->n_fast;
	ms_order_release(&st->order);
	ms_py_pair_release(&st->pair);
	free(st);
	return code;
}

/*
 * Decoding kernel perf records into the stream's typed records, and the
 * ms-decode stage built on it (libcommon/perf/decode.c).
 *
 * A raw record's bytes come from a stream, so from anywhere: ms_decode()
 * treats them as hostile. Before it reads a field it has checked that:
 *  - header.size equals the bytes given, is at least the header and a
 *    multiple of 8;
 *  - every field the event's sample_type implies fits in what is left, in
 *    the kernel's order (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU,
 *    PERIOD, READ, CALLCHAIN, RAW, BRANCH_STACK, REGS_USER, STACK_USER);
 *  - the callchain's nr fits in the bytes left and in MS_CHAIN_MAX, the
 *    registers are popcount(sample_regs_user) when the ABI is not NONE, the
 *    stack copy's size fits and dyn_size <= size <= MS_STACK_MAX;
 *  - a sample whose sample_type has nothing after STACK_USER ends exactly
 *    where its last field does;
 *  - strings (mmap filename, comm) end with a NUL inside the record, before
 *    the sample_id_all trailer, which must itself fit;
 *  - the event id, where the record carries one, was listed by an ATTR;
 *  - a sample of a tracepoint event (an ATTR of type PERF_TYPE_TRACEPOINT)
 *    has a TRACEPOINT record for its config naming "sched:sched_switch",
 *    whose prev_state field (size 4 or 8) lies inside the sample's RAW
 *    data, and whose prev_pid, when the format has one, is the sample's
 *    tid;
 *  - a sample of a BPF output event (an ATTR of PERF_TYPE_SOFTWARE,
 *    PERF_COUNT_SW_BPF_OUTPUT) has RAW data that is a good record of the
 *    BPF sampler (perf/bpfrecord.h) whose cpu and tid are the sample's;
 *  - a switch record (PERF_RECORD_SWITCH, _SWITCH_CPU_WIDE) is exactly its
 *    body and a sample_id_all trailer that gives its tid and time.
 * A record that fails a check is skipped with a stable problem code and a
 * detail; no byte outside [data, data + len) is ever read.
 *
 * Memory: struct ms_decoder holds the ATTR records seen, with fixed
 * capacity. ms_decode() allocates nothing; the pointers in its output (the
 * stack copy, strings) borrow from the raw bytes it was given.
 */
#ifndef MS_PERF_DECODE_H
#define MS_PERF_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/bpfrecord.h"
#include "stream/records.h"

#define MS_DECODE_ATTRS_MAX 16
#define MS_DECODE_TRACEPOINTS_MAX 8

/*
 * What a TRACEPOINT record says of where a switch-out's evidence is in
 * the RAW data of its samples, checked once when it is learnt: bad names
 * what makes it unusable (then every sample of it is skipped with that).
 */
struct ms_decode_tracepoint {
	uint64_t config;
	const char *bad;		/* a stable problem code, or NULL */
	char why[96];			/* bad's detail */
	uint32_t state_at, state_size;	/* prev_state */
	uint32_t pid_at, pid_size;	/* prev_pid; size 0: not in the format */
};

/*
 * The ATTR records seen, in order of arrival, each with its ids sorted
 * (for lookup), and the TRACEPOINT records. A sample is decoded with the
 * layout of the ATTR that lists its id, when the ATTRs agree on where a
 * sample's id is (the fields before PERF_SAMPLE_ID: IP, TID, TIME, ADDR;
 * or PERF_SAMPLE_IDENTIFIER first in each); else with the latest's. Other
 * records are decoded with the latest ATTR's sample_id_all trailer, and
 * their id must belong to an ATTR with the same trailer; a sample's id
 * must belong to an ATTR of the same layout.
 */
struct ms_decoder {
	uint32_t n_attrs;
	/* where every ATTR's samples have their id; 0 when they differ or lack one */
	uint32_t sample_id_at;
	struct ms_attr attrs[MS_DECODE_ATTRS_MAX];
	uint32_t n_tracepoints;
	struct ms_decode_tracepoint tracepoints[MS_DECODE_TRACEPOINTS_MAX];
};

/*
 * What ms_decode() made of a record. The decoded values are the record
 * kinds of records.h, so the result names the member of ms_decoded.u
 * that was filled.
 */
enum ms_decode_result {
	MS_DECODE_FATAL = -1,	/* the stage cannot go on: no ATTR yet */
	MS_DECODE_SKIP = 0,	/* skipped: problem and detail say why */
	MS_DECODE_SAMPLE = MS_REC_SAMPLE,	/* u.sample */
	MS_DECODE_MMAP = MS_REC_MMAP,		/* u.mmap (MMAP and MMAP2) */
	MS_DECODE_COMM = MS_REC_COMM,		/* u.comm */
	MS_DECODE_FORK = MS_REC_FORK,		/* u.task */
	MS_DECODE_EXIT = MS_REC_EXIT,		/* u.task */
	MS_DECODE_LOST = MS_REC_LOST,		/* u.lost (LOST, LOST_SAMPLES) */
	MS_DECODE_THROTTLE = MS_REC_THROTTLE,	/* u.throttle (both kinds) */
	MS_DECODE_SWITCH = MS_REC_SWITCH,	/* u.sw (SWITCH, SWITCH_CPU_WIDE) */
	MS_DECODE_SWITCH_OUT = MS_REC_SWITCH_OUT, /* u.switch_out (sched:sched_switch) */
	/*
	 * u.bpf: a record of ms-collect's BPF sampler (--bpf-sampler,
	 * --python bpf). It has no stream record of its own: the stage
	 * pairs a Python walker record with its sample (perf/pypair.h) and
	 * writes it as the PY_STACK just before that SAMPLE.
	 */
	MS_DECODE_BPF = 1000,
};

struct ms_decoded {
	/* Kernel record type (PERF_RECORD_*), once the header was read. */
	uint32_t type;
	/* Time for ordering: the sample's or trailer's TIME, else 0. */
	uint64_t time;
	/*
	 * MS_DECODE_SKIP and _FATAL: a stable code ("truncated-sample") and
	 * a detail naming what failed. Nothing is printed.
	 */
	const char *problem;
	char detail[200];
	/*
	 * A sample decoded with frames in a callchain context other than
	 * kernel or user (hypervisor, guest): they are left out and counted
	 * here so that the caller can report them.
	 */
	uint32_t foreign_frames;
	union {
		/* Its stack copy, if any, points into the record; stack_in_file
		 * and stack_offset are left for the stage to set. */
		struct ms_sample sample;
		struct ms_mmap mmap;
		struct ms_comm comm;
		struct ms_task task;
		struct ms_lost lost;
		struct ms_throttle throttle;
		struct ms_switch sw;
		/* its sample first: u.sample and u.switch_out.sample are one */
		struct ms_switch_out switch_out;
		/* its sample first too: the output event's IP, TID, TIME, ID, CPU */
		struct {
			struct ms_sample sample;
			struct ms_bpf_record rec;
		} bpf;
	} u;
};

void ms_decoder_init(struct ms_decoder *d);
/*
 * Learn an ATTR. Returns -1 after a message when MS_DECODE_ATTRS_MAX are
 * already known.
 */
int ms_decoder_add_attr(struct ms_decoder *d, const struct ms_attr *a);
/*
 * Learn a TRACEPOINT record (one for a config known replaces it). A format
 * that is not sched:sched_switch's, or whose fields cannot be read, is kept
 * to name the problem of its samples. Returns -1 after a message when
 * MS_DECODE_TRACEPOINTS_MAX others are already known.
 */
int ms_decoder_add_tracepoint(struct ms_decoder *d, const struct ms_tracepoint *t);

/*
 * Decode one kernel record of len bytes at data (struct perf_event_header
 * first, any alignment), read from the ring of CPU cpu (a sample's cpu when
 * its sample_type has no PERF_SAMPLE_CPU). Returns an enum
 * ms_decode_result; out->u is valid only for a decoded result and borrows
 * from data.
 */
int ms_decode(const struct ms_decoder *d, uint32_t cpu, const uint8_t *data, size_t len,
	      struct ms_decoded *out);

/* Whether a's events are BPF output events (their samples carry BPF records). */
bool ms_attr_is_bpf_output(const struct ms_attr *a);

/* Name of a kernel record type for messages ("mmap2"), or "unknown". */
const char *ms_perf_record_name(uint32_t type);

/*
 * The ms-decode stage: read a stream from in_fd, decode its RAW records
 * with the ATTR records before them, reorder by time at each ROUND (see
 * perf/order.h), pass every other record through, and write the stream to
 * out_fd with "ms-decode" appended to the producers. Samples of the layout
 * ms-collect asks for are checked and packed in one pass, without
 * ms_decode() (which judges any sample that pass doubts); when the input
 * is a mapped file, one that will carry its stack copy is held for
 * ordering as a reference into the file and packed when it goes out.
 * TRACEPOINT records teach the decoder (and pass on); switch-outs take
 * ms_decode() and are held packed, their stack copied or referred to as a
 * sample's. A Python walker record (BPF output event) waits for the next
 * sample of its thread from its ring (perf/pypair.h: a switch-out is not
 * one), which then goes into the ordering in one entry with its PY_STACK,
 * written just before it; the records ms-collect writes of a Python
 * process (PY_PROCESS, PY_CODE, PY_SNAPSHOT) go ahead of everything held,
 * as JIT_FUNC does (a snapshot after the PY_CODE records it names, which
 * ms-collect wrote before it).
 * Messages name in_name and out_name. Runs on the stage loop
 * (stream/stage.h), whose exit status it returns: what was decoded goes
 * out whatever the input's end, with a trailer only after a complete one.
 */
enum ms_stack_bytes {
	/* refer when the input is a mapped file and the output not a file */
	MS_STACK_BYTES_AUTO,
	MS_STACK_BYTES_COPY,	/* always copy the stack bytes into SAMPLE */
	MS_STACK_BYTES_REFER,	/* refer to them in the input (error if it cannot) */
};
struct ms_decode_options {
	const char *version;	/* written in the header's producer chain */
	bool stats;		/* print counts per record kind (and BPF records, pairing) to stderr */
	size_t order_bytes;	/* ordering memory bound; 0: the default */
	/*
	 * A saved stream's stack copies are most of its bytes: when the
	 * input is a regular file, SAMPLE records may give their place in
	 * it (a STACK_FILE record names the file) instead of carrying them
	 * through the pipe to ms-unwind. A file output always gets copies,
	 * so that it stands alone.
	 */
	enum ms_stack_bytes stack_bytes;
	/*
	 * Tests: decode every sample with ms_decode(), not the fast path
	 * that checks and packs the usual layout in one pass (its output
	 * must be the same); and, when not NULL, count the samples the fast
	 * path took.
	 */
	bool checked_only;
	uint64_t *fast_samples;
};
#define MS_DECODE_ORDER_BYTES (64u * 1024u * 1024u)

int ms_decode_stage(int in_fd, const char *in_name, int out_fd, const char *out_name,
		     const struct ms_decode_options *opt);

#endif

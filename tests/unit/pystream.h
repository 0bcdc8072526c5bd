/*
 * Builds ms-collect streams of a --python bpf recording by hand, for the
 * pairing tests (pypair-test, mkpairstream): the ATTR records ms-collect
 * writes (the BPF output event's first, the sampler's last), and RAW
 * records of the rings: the sampler's samples (with registers and a stack
 * copy, as ms-collect asks), the walker's records in output event
 * samples, kernel LOST records, ROUNDs. Header-only; errors abort.
 *
 * Ring c's sampler event has id SAMPLER_ID + c, its output event
 * OUTPUT_ID + c (rings below PYS_RINGS). A walker record of n frames
 * gives frame i the code base + i, stamp base + 0x100 + i, instr
 * base + 0x200 + i, and ENTRY on its last.
 */
#ifndef MS_TESTS_PYSTREAM_H
#define MS_TESTS_PYSTREAM_H

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/sampler.h"
#include "perf/pypair.h"
#include "stream/records.h"
#include "stream/stream.h"

#define PYS_RINGS 4
#define PYS_SAMPLER_ID 40
#define PYS_OUTPUT_ID 70
#define PYS_PID 1000
#define PYS_REGS_MASK 0x1c0ull	/* bp, sp, ip */
#define PYS_STACK 2048u		/* a stack copy ms-decode may defer (mapped input) */
#define PYS_SAMPLER_ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
			PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | \
			PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define PYS_OUTPUT_ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		       PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)

static struct {
	uint8_t buf[8192 + PYS_STACK];
	size_t len;
} pys_r;

static void pys_check(int rc)
{
	if (rc < 0) {
		fprintf(stderr, "pystream: writing the stream failed\n");
		abort();
	}
}

static void pys_u64(uint64_t v)
{
	memcpy(pys_r.buf + pys_r.len, &v, 8);
	pys_r.len += 8;
}

static void pys_begin(uint32_t type)
{
	struct perf_event_header h = { .type = type, .misc = PERF_RECORD_MISC_USER };

	memcpy(pys_r.buf, &h, sizeof(h));
	pys_r.len = sizeof(h);
}

static void pys_end(struct ms_writer *w, uint32_t ring)
{
	struct perf_event_header h;
	struct ms_raw raw = { .cpu = ring, .data = pys_r.buf, .len = 0 };

	memcpy(&h, pys_r.buf, sizeof(h));
	h.size = (uint16_t)pys_r.len;
	memcpy(pys_r.buf, &h, sizeof(h));
	raw.len = (uint32_t)pys_r.len;
	pys_check(ms_raw_pack(w, &raw));
}

/* The output events' attr, then the sampler's: ids of PYS_RINGS rings each. */
static void pys_attrs(struct ms_writer *w)
{
	static struct ms_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_type = PYS_OUTPUT_ST;
	a.flags = MS_ATTR_SAMPLE_ID_ALL;
	a.n_ids = PYS_RINGS;
	for (uint32_t i = 0; i < PYS_RINGS; i++)
		a.ids[i] = PYS_OUTPUT_ID + i;
	pys_check(ms_attr_pack(w, &a));
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_type = PYS_SAMPLER_ST;
	a.sample_regs_user = PYS_REGS_MASK;
	a.sample_stack_user = PYS_STACK;
	a.flags = MS_ATTR_SAMPLE_ID_ALL;
	a.n_ids = PYS_RINGS;
	for (uint32_t i = 0; i < PYS_RINGS; i++)
		a.ids[i] = PYS_SAMPLER_ID + i;
	pys_check(ms_attr_pack(w, &a));
}

/* A sample of the sampler on ring ring; with a stack copy when stack is set. */
static void pys_sample(struct ms_writer *w, uint32_t ring, uint32_t tid, uint64_t time,
		       bool stack)
{
	pys_begin(PERF_RECORD_SAMPLE);
	pys_u64(0x401000 + tid);			/* ip */
	pys_u64((uint64_t)tid << 32 | PYS_PID);		/* pid, tid */
	pys_u64(time);
	pys_u64(PYS_SAMPLER_ID + ring);			/* id */
	pys_u64(ring);					/* cpu, res */
	pys_u64(1000000);				/* period */
	pys_u64(3);					/* callchain */
	pys_u64((uint64_t)PERF_CONTEXT_USER);
	pys_u64(0x401000 + tid);
	pys_u64(0x402000);
	pys_u64(PERF_SAMPLE_REGS_ABI_64);
	pys_u64(0x7ffd0000);				/* bp, sp, ip */
	pys_u64(0x7ffc0000);
	pys_u64(0x401000 + tid);
	if (stack) {
		pys_u64(PYS_STACK);
		for (uint32_t i = 0; i < PYS_STACK / 8; i++)
			pys_u64(time + i);
		pys_u64(PYS_STACK);			/* dyn_size */
	} else {
		pys_u64(0);
	}
	pys_end(w, ring);
}

/*
 * The walker's record of thread tid on ring ring, in its output event's
 * sample: kind PYTHON with n frames from base, or kind SAMPLE (n ignored).
 */
static void pys_record(struct ms_writer *w, uint32_t ring, uint32_t tid, uint64_t time,
		       uint16_t kind, uint32_t status, uint32_t gil, uint32_t n, uint64_t base)
{
	struct ms_bpf_header h = { .magic = MS_BPF_MAGIC, .version = MS_BPF_VERSION,
				   .kind = kind, .cpu = ring, .pid = PYS_PID, .tid = tid,
				   .time = time };
	struct ms_bpf_py_head py = { .status = status, .n_frames = n,
				     .tstate = 0x7f0000000000ull + tid, .gil = gil };
	uint32_t size = sizeof(h), raw;

	if (kind == MS_BPF_KIND_PYTHON)
		size += (uint32_t)(sizeof(py) + n * sizeof(struct ms_bpf_py_frame));
	h.size = size;
	/* RAW: its u32 size, then the data, padded so that the record ends 8-aligned */
	raw = size + 4;
	raw = (raw + 7) / 8 * 8 - 4;
	pys_begin(PERF_RECORD_SAMPLE);
	pys_u64(0x401000 + tid);
	pys_u64((uint64_t)tid << 32 | PYS_PID);
	pys_u64(time);
	pys_u64(PYS_OUTPUT_ID + ring);
	pys_u64(ring);
	memcpy(pys_r.buf + pys_r.len, &raw, 4);
	pys_r.len += 4;
	memcpy(pys_r.buf + pys_r.len, &h, sizeof(h));
	pys_r.len += sizeof(h);
	if (kind == MS_BPF_KIND_PYTHON) {
		memcpy(pys_r.buf + pys_r.len, &py, sizeof(py));
		pys_r.len += sizeof(py);
		for (uint32_t i = 0; i < n; i++) {
			struct ms_bpf_py_frame f = { base + i, base + 0x100 + i, base + 0x200 + i,
						     i + 1 == n ? MS_BPF_PY_ENTRY : 0, 0 };

			memcpy(pys_r.buf + pys_r.len, &f, sizeof(f));
			pys_r.len += sizeof(f);
		}
	}
	memset(pys_r.buf + pys_r.len, 0, raw - size);
	pys_r.len += raw - size;
	pys_end(w, ring);
}

/* A PYTHON record of a complete walk, the thread holding the GIL. */
static void pys_py(struct ms_writer *w, uint32_t ring, uint32_t tid, uint64_t time, uint32_t n,
		   uint64_t base)
{
	pys_record(w, ring, tid, time, MS_BPF_KIND_PYTHON, MS_BPF_PY_COMPLETE,
		   MS_BPF_PY_GIL_HELD, n, base);
}

/* The kernel's LOST record on ring ring (its trailer: the sampler's id there). */
static void pys_lost(struct ms_writer *w, uint32_t ring, uint64_t time)
{
	pys_begin(PERF_RECORD_LOST);
	pys_u64(PYS_SAMPLER_ID + ring);			/* id */
	pys_u64(3);					/* lost */
	pys_u64((uint64_t)PYS_PID << 32 | PYS_PID);	/* trailer: tid */
	pys_u64(time);
	pys_u64(PYS_SAMPLER_ID + ring);
	pys_u64(ring);
	pys_end(w, ring);
}

/*
 * The pairing's cases, as the rings give them in the order ms-collect
 * reads them (see each case's comment); frames' bases name the record
 * (0x101001: thread 101's first). What ms-decode must make of them:
 * tests/unit/pypair-test.c's want[], tests/0765-python-pairing.bats.
 */
#define PYS_T0 5000000000ull	/* times in ns, past the slack */
#define PYS_MS 1000000ull

static void pys_scenario(struct ms_writer *w)
{
	/* 1. a record, then its sample (stamped later), with a stack copy */
	pys_py(w, 0, 101, PYS_T0, 3, 0x101001);
	pys_sample(w, 0, 101, PYS_T0 + 1, true);
	/* 2. the kernel stamped the sample first: still its pair (ring order) */
	pys_py(w, 0, 102, PYS_T0 + 20, 2, 0x102001);
	pys_sample(w, 0, 102, PYS_T0 + 10, false);
	/* 3. a sample before any record pairs nothing; the record then pairs the next */
	pys_sample(w, 1, 103, PYS_T0 + 5, false);
	pys_py(w, 1, 103, PYS_T0 + 6, 1, 0x103001);
	/* another thread's sample in between takes nothing */
	pys_sample(w, 1, 104, PYS_T0 + 7, false);
	pys_sample(w, 1, 103, PYS_T0 + 8, true);
	/* 4. a LOST between a record and its sample */
	pys_py(w, 1, 105, PYS_T0 + 30, 2, 0x105001);
	pys_lost(w, 1, PYS_T0 + 31);
	pys_sample(w, 1, 105, PYS_T0 + 32, false);
	/* 5. a record whose sample ring 2's reader reaches only after two ROUNDs */
	pys_py(w, 2, 106, PYS_T0 + 40, 4, 0x106001);
	/* 6. a record whose sample never comes */
	pys_py(w, 3, 107, PYS_T0 + 41, 1, 0x107001);
	pys_check(ms_round_pack(w));
	/* ring 0 runs ahead in time: the watermark passes ring 2's record */
	pys_py(w, 0, 108, PYS_T0 + 100 * PYS_MS, 1, 0x108001);
	pys_sample(w, 0, 108, PYS_T0 + 100 * PYS_MS + 1, false);
	pys_check(ms_round_pack(w));
	pys_sample(w, 0, 109, PYS_T0 + 200 * PYS_MS, false);
	pys_check(ms_round_pack(w));
	/* 5. its sample: out of order by now, still paired */
	pys_sample(w, 2, 106, PYS_T0 + 42, false);
	/* the recording goes on past ring 3's record by more than the slack */
	pys_sample(w, 0, 109, PYS_T0 + 2 * MS_PY_PAIRING_SLACK_NS, false);
	pys_check(ms_round_pack(w));
	pys_sample(w, 0, 109, PYS_T0 + 3 * MS_PY_PAIRING_SLACK_NS, false);
	pys_check(ms_round_pack(w));
	/* 6. too late: it was dropped */
	pys_sample(w, 3, 107, PYS_T0 + 3 * MS_PY_PAIRING_SLACK_NS + 1, false);
	/* 7. a record the stream ends before the sample of */
	pys_py(w, 3, 110, PYS_T0 + 3 * MS_PY_PAIRING_SLACK_NS + 2, 1, 0x110001);
	pys_check(ms_round_pack(w));
}

#endif

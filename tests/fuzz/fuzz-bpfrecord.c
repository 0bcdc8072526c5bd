/*
 * Fuzz target: the BPF sampler's records (perf/bpfrecord.h), the Python
 * walker's above all, and what the pairing (perf/pypair.h) makes of a
 * record it accepts.
 *
 * The input: a ring byte, then the RAW data of one record (copied to a
 * buffer of exactly its length, so that a sanitizer sees any over-read).
 * Checked (abort() when broken):
 *  - a refused record has a problem code and a detail;
 *  - an accepted one: its size within the RAW data, at least the header,
 *    at most MS_BPF_RECORD_MAX and under 8 bytes short of the data; its
 *    payload inside the data; a PYTHON record's n_frames at most
 *    MS_BPF_PY_FRAMES_MAX, its payload exactly the head and its frames,
 *    its status and GIL state known, no frame after a walk that found no
 *    thread state, no unknown frame flag;
 *  - paired with a sample of its thread on its ring, a PYTHON record
 *    comes back whole, once; its PY_STACK packs within its bound and
 *    unpacks to the record's fields and the sample's; a SAMPLE record
 *    leaves nothing waiting.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/bpfrecord.h"
#include "perf/pypair.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "fuzz-bpfrecord: %s:%d: broken: %s\n", __FILE__,  \
				__LINE__, #cond);                                          \
			abort();                                                           \
		}                                                                          \
	} while (0)

static void check_python(const struct ms_bpf_record *r)
{
	CHECK(r->py.n_frames <= MS_BPF_PY_FRAMES_MAX);
	CHECK(r->payload_len == sizeof(struct ms_bpf_py_head) +
				r->py.n_frames * sizeof(struct ms_bpf_py_frame));
	CHECK(r->py.status < MS_BPF_PY_STATUS_COUNT && r->py.gil < MS_BPF_PY_GIL_COUNT);
	CHECK(r->py.status < MS_BPF_PY_NO_THREAD || r->py.n_frames == 0);
	CHECK(r->py_frames == r->payload + sizeof(struct ms_bpf_py_head));
	for (uint32_t i = 0; i < r->py.n_frames; i++) {
		struct ms_bpf_py_frame f;

		ms_bpf_py_frame_get(r, i, &f);
		CHECK(!(f.flags & ~(uint32_t)MS_BPF_PY_ENTRY));
	}
}

/* The record through the pairing, and its PY_STACK's bytes back. */
static void check_pairing(const struct ms_bpf_record *r, uint32_t ring)
{
	static struct ms_problems problems;
	static struct ms_py_pair pair;
	static struct ms_py_stack got, want;
	static char buf[8192];
	const struct ms_py_pending *py;
	struct ms_record rec = { .kind = MS_REC_PY_STACK };
	char *end;

	ms_problems_init(&problems, "fuzz");
	ms_py_pair_init(&pair, &problems);
	CHECK(ms_py_pair_record(&pair, ring, r, r->h.time) == 0);
	if (r->h.kind != MS_BPF_KIND_PYTHON) {
		CHECK(ms_py_pair_idle(&pair));
		ms_py_pair_release(&pair);
		return;
	}
	CHECK(!ms_py_pair_idle(&pair));
	CHECK(!ms_py_pair_take(&pair, ring, r->h.tid + 1));
	py = ms_py_pair_take(&pair, ring, r->h.tid);
	CHECK(py && py->tid == r->h.tid && py->time == r->h.time);
	CHECK(memcmp(&py->head, &r->py, sizeof(r->py)) == 0);
	CHECK(memcmp(py->frames, r->py_frames,
		     r->py.n_frames * sizeof(struct ms_bpf_py_frame)) == 0);
	CHECK(ms_py_pair_idle(&pair) && !ms_py_pair_take(&pair, ring, r->h.tid));
	end = ms_py_stack_fp(buf, py, r->h.pid, r->h.tid, r->h.time, r->h.cpu);
	CHECK((size_t)(end - buf) <= ms_py_stack_bound(py));
	rec.bytes = buf;
	rec.len = (size_t)(end - buf);
	CHECK(ms_py_stack_unpack(&rec, &got) == 0);
	ms_py_stack_of(py, r->h.pid, r->h.tid, r->h.time, r->h.cpu, &want);
	CHECK(got.pid == want.pid && got.tid == want.tid && got.time == want.time &&
	      got.cpu == want.cpu && got.status == want.status && got.gil == want.gil &&
	      got.tstate == want.tstate && got.n_words == want.n_words &&
	      got.n_words == 4 * r->py.n_frames);
	CHECK(memcmp(got.words, want.words, got.n_words * sizeof(got.words[0])) == 0);
	ms_py_pair_release(&pair);
}

int ms_fuzz_bpfrecord(const uint8_t *data, size_t size)
{
	struct ms_bpf_record r;
	const char *code = NULL;
	char detail[200] = "";
	uint8_t *raw;
	size_t len;
	uint32_t ring;

	if (size < 1)
		return 0;
	ring = data[0];
	len = size - 1;
	raw = malloc(len ? len : 1);
	CHECK(raw);
	memcpy(raw, data + 1, len);
	if (ms_bpf_record_check(raw, len, &r, &code, detail, sizeof(detail)) < 0) {
		CHECK(code && code[0] && detail[0]);
		free(raw);
		return 0;
	}
	CHECK(r.h.size >= sizeof(r.h) && r.h.size <= len && r.h.size <= MS_BPF_RECORD_MAX &&
	      len - r.h.size < 8);
	CHECK(r.payload == raw + sizeof(r.h) && r.payload_len == r.h.size - sizeof(r.h));
	CHECK(r.h.kind == MS_BPF_KIND_SAMPLE || r.h.kind == MS_BPF_KIND_PYTHON);
	if (r.h.kind == MS_BPF_KIND_PYTHON)
		check_python(&r);
	check_pairing(&r, ring);
	free(raw);
	return 0;
}

MS_FUZZ_TARGET("fuzz-bpfrecord", ms_fuzz_bpfrecord)

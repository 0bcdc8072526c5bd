/*
 * Pairing the Python walker's records with their samples (ms-decode,
 * --python bpf; bpf/sampler.h).
 *
 * The walker runs as the sampler's sample is taken and writes its record
 * into the same ring just before perf writes the sample (the program runs
 * in the overflow handler, before the sample's output). So a record pairs
 * with the NEXT sample of its thread read from its ring, never by time:
 * either may carry the earlier stamp. A sample read before any record of
 * its thread pairs nothing (its record, if any, would come after it only
 * on a kernel that writes the sample first, which this reader does not
 * assume: such a record waits for the thread's next sample and is then
 * replaced or expires, counted). Pairing is done as records arrive, before
 * ms-decode's time ordering, so a record held back past the ordering's
 * watermark keeps its pairing: the PY_STACK goes into the ordering in the
 * same entry as its sample.
 *
 * Per ring, the records waiting for their samples are a fixed table of
 * MS_PY_PAIR_SLOTS, keyed by thread. Each is dropped, counted with a
 * stable problem code and the first example, when:
 *  - a second record of its thread comes on its ring before a sample (or
 *    a record of kind SAMPLE, which the program writes for a sample too):
 *    its sample was lost ("py-record-unpaired");
 *  - a LOST record comes on its ring: the kernel wrote nothing between a
 *    record and its sample but that sample, so the sample was lost
 *    ("py-record-lost"); or ms-collect says it dropped records, of any
 *    ring ("py-record-lost" too: whose, it does not say);
 *  - the table of its ring is full and a record of another thread comes:
 *    the oldest goes ("py-pairing-full");
 *  - the ordering's watermark passes its time by MS_PY_PAIRING_SLACK_NS
 *    ("py-record-expired");
 *  - the stream ends ("py-record-at-end").
 * A record from a ring numbered MS_PY_PAIR_CPUS or above is dropped
 * ("py-record-ring").
 *
 * Memory: a table per ring that carried a record, allocated when its first
 * record comes (warm-up); nothing per record after that.
 */
#ifndef MS_PERF_PYPAIR_H
#define MS_PERF_PYPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/bpfrecord.h"
#include "stream/records.h"

/*
 * How far the ordering's watermark (the greatest time read before the
 * previous ROUND: perf/order.h) may pass a record before it is dropped
 * as a record whose sample never comes. Its sample follows it on the same
 * ring, written microseconds later, so it is read in the same drain pass
 * or the next; the watermark can lead a record read late in a pass by at
 * most that pass's length (ms-collect copies what the rings hold: a few
 * MiB, milliseconds; its poll wakes every 100 ms). Half a second is many
 * times that; holding a record longer costs only its slot.
 */
#define MS_PY_PAIRING_SLACK_NS (500ull * 1000 * 1000)
/*
 * Records waiting per ring. One at a time is the rule (a record, then its
 * sample); more wait only while samples are lost or across threads
 * preempted between the two writes.
 */
#define MS_PY_PAIR_SLOTS 8
/* Rings are CPUs: ids below this (the kernel's NR_CPUS is at most 8192). */
#define MS_PY_PAIR_CPUS 8192

/* A record waiting for its sample. */
struct ms_py_pending {
	bool used;
	uint32_t tid;
	uint64_t seq;			/* arrival: the oldest goes first */
	uint64_t time;			/* its output event's sample time (the ordering's clock) */
	struct ms_bpf_py_head head;
	struct ms_bpf_py_frame frames[MS_BPF_PY_FRAMES_MAX];
};

struct ms_py_ring {
	uint32_t cpu;
	uint32_t n_used;
	struct ms_py_pending slots[MS_PY_PAIR_SLOTS];
};

struct ms_py_pair_counts {
	uint64_t records;		/* PYTHON records taken */
	uint64_t bare;			/* SAMPLE records: nothing to pair */
	uint64_t paired;
	uint64_t unpaired, lost, full, expired, at_end, bad_ring;
};

struct ms_py_pair {
	uint16_t *ring_of;		/* MS_PY_PAIR_CPUS: 1 + index in rings, 0 none */
	struct ms_py_ring **rings;
	uint32_t n_rings, rings_alloc;
	uint64_t n_pending;		/* over every ring: 0 means no sample can pair */
	uint64_t seq;
	struct ms_py_pair_counts n;
	struct ms_problems *problems;
};

void ms_py_pair_init(struct ms_py_pair *p, struct ms_problems *problems);
void ms_py_pair_release(struct ms_py_pair *p);

/*
 * A checked record (bpfrecord.h) read from ring ring, time its output
 * sample's time. PYTHON records wait for their sample; a SAMPLE record
 * ends its thread's waiting one. Returns 0, or -1 after a message (out of
 * memory for a new ring's table).
 */
int ms_py_pair_record(struct ms_py_pair *p, uint32_t ring, const struct ms_bpf_record *r,
		      uint64_t time);

/* Whether no record waits: then no sample pairs (the samples' fast path). */
static inline bool ms_py_pair_idle(const struct ms_py_pair *p)
{
	return p->n_pending == 0;
}

/*
 * A sample of the sampler's event, of thread tid, read from ring ring:
 * the record it pairs with, taken out of the table, or NULL. The pointer
 * is good until the next ms_py_pair_record().
 */
const struct ms_py_pending *ms_py_pair_take(struct ms_py_pair *p, uint32_t ring, uint32_t tid);

/* A LOST record read from ring ring; UINT32_MAX: ms-collect's, of no ring. */
void ms_py_pair_lost(struct ms_py_pair *p, uint32_t ring);
/* The ordering's watermark moved to watermark: drop what it passed by the slack. */
void ms_py_pair_expire(struct ms_py_pair *p, uint64_t watermark);
/* The stream ended: drop every record still waiting. */
void ms_py_pair_end(struct ms_py_pair *p);

/*
 * The PY_STACK of record py paired with the sample (pid, tid, time, cpu):
 * the struct (tests, and whoever packs it with ms_py_stack_pack()), and
 * the same record's bytes packed at p (at most ms_py_stack_bound() of
 * them; stream/fastpack.h's encoding, which ms_py_stack_unpack() reads).
 */
void ms_py_stack_of(const struct ms_py_pending *py, uint32_t pid, uint32_t tid, uint64_t time,
		    uint32_t cpu, struct ms_py_stack *out);
size_t ms_py_stack_bound(const struct ms_py_pending *py);
char *ms_py_stack_fp(char *p, const struct ms_py_pending *py, uint32_t pid, uint32_t tid,
		     uint64_t time, uint32_t cpu);

#endif

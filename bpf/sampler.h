/*
 * The records bpf/sampler.bpf.c writes and ms-decode reads: the one
 * layout both sides share (kernel side: BPF C; user side: C11).
 *
 * Each record is the RAW data of a sample of a PERF_COUNT_SW_BPF_OUTPUT
 * event, written with bpf_perf_event_output() into the ring of the CPU
 * the sampler's sample was taken on, just before (or after: the kernel
 * decides) that sample. It begins with a fixed header; size counts the
 * header and the payload after it, so a later version (the Python walker)
 * grows the payload without moving the header. The kernel pads RAW data
 * to 8 bytes: a reader takes size, not the RAW length, and checks that
 * the padding is under 8 bytes.
 *
 * Invariants a reader checks before using a field (perf/bpfrecord.h):
 * magic, version (a newer major is refused), size within the RAW data and
 * at least the header, kind known.
 */
#ifndef MS_BPF_SAMPLER_H
#define MS_BPF_SAMPLER_H

#include <linux/types.h>

#define MS_BPF_MAGIC 0x5042534du	/* "MSBP" in memory on a little-endian host */
#define MS_BPF_VERSION 1u

/* What follows the header. */
enum ms_bpf_kind {
	/* no payload yet: the sample's identity only (issue 20 item 1 adds frames) */
	MS_BPF_KIND_SAMPLE = 1,
};

struct ms_bpf_header {
	__u32 magic;		/* MS_BPF_MAGIC */
	__u16 version;		/* MS_BPF_VERSION */
	__u16 kind;		/* enum ms_bpf_kind */
	__u32 size;		/* bytes of the record: this header and its payload */
	__u32 cpu;		/* bpf_get_smp_processor_id() */
	/* bpf_get_current_pid_tgid(): ids in the initial pid namespace */
	__u32 pid;
	__u32 tid;
	__u64 time;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

/* The largest record the program writes (header and payload). */
#define MS_BPF_RECORD_MAX 4096u

#endif

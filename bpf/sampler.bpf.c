// SPDX-License-Identifier: GPL-2.0
/*
 * ms-collect's sampler program (--bpf-sampler): attached with
 * PERF_EVENT_IOC_SET_BPF to every sampler event, it runs as each sample is
 * taken. In a process with a py_layout it walks the thread's CPython
 * frames (python.bpf.h) and writes one MS_BPF_KIND_PYTHON record
 * (sampler.h) through this CPU's BPF output event, which ms-collect points
 * at the CPU's ring; in any other process it writes nothing. It returns 1
 * so the kernel writes the sample as always.
 *
 * A record the ring cannot take is counted in output_failed (read by
 * ms-collect at the end), never retried.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "sampler.h"
#include "python.bpf.h"

/* One BPF_OUTPUT event per CPU, keyed by CPU number: set by ms-collect. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} outputs SEC(".maps");

/* The processes whose frames are walked: tgid (initial namespace) -> layout. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ms_bpf_py_layout);
} py_layouts SEC(".maps");

/* A thread's state as ms-collect last read it: tid (initial namespace) -> address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u64);
} py_threads SEC(".maps");

/* Where the record is built, and the walker's windows: one per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ms_py_scratch);
} py_scratch SEC(".maps");

/* Records bpf_perf_event_output() refused (a full ring, no output event). */
__u64 output_failed = 0;

SEC("perf_event")
int ms_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), hint = 0, *hp;
	__u32 pid = (__u32)(id >> 32), tid = (__u32)id, zero = 0, n;
	const struct ms_bpf_py_layout *l;
	struct ms_py_scratch *s;
	struct bpf_pidns_info ns = {};

	l = bpf_map_lookup_elem(&py_layouts, &pid);
	if (!l)
		return 1;
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s)
		return 1;
	hp = bpf_map_lookup_elem(&py_threads, &tid);
	if (hp)
		hint = *hp;
	if (bpf_get_ns_current_pid_tgid(l->pidns_dev, l->pidns_ino, &ns, sizeof(ns))) {
		s->r.head.status = MS_BPF_PY_NO_NAMESPACE;
		s->r.head.n_frames = 0;
		s->r.head.tstate = 0;
		s->r.head.gil = MS_BPF_PY_GIL_UNKNOWN;
		s->r.head.pad = 0;
	} else {
		ms_py_walk(s, l, hint, ns.pid);
	}
	n = s->r.head.n_frames;
	if (n > MS_BPF_PY_FRAMES_MAX)
		n = 0;
	s->r.h.magic = MS_BPF_MAGIC;
	s->r.h.version = MS_BPF_VERSION;
	s->r.h.kind = MS_BPF_KIND_PYTHON;
	s->r.h.size = sizeof(s->r.h) + sizeof(s->r.head) + n * sizeof(s->r.frames[0]);
	s->r.h.cpu = bpf_get_smp_processor_id();
	s->r.h.pid = pid;
	s->r.h.tid = tid;
	s->r.h.time = bpf_ktime_get_ns();
	if (bpf_perf_event_output(ctx, &outputs, BPF_F_CURRENT_CPU, &s->r,
				  sizeof(s->r.h) + sizeof(s->r.head) + n * sizeof(s->r.frames[0])) < 0)
		__sync_fetch_and_add(&output_failed, 1);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";

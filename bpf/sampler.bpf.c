// SPDX-License-Identifier: GPL-2.0
/*
 * ms-collect's sampler program (--bpf-sampler): attached with
 * PERF_EVENT_IOC_SET_BPF to every sampler event, it runs as each sample is
 * taken and writes one record (sampler.h) through this CPU's BPF output
 * event, which ms-collect points at the CPU's ring; it returns 1 so the
 * kernel writes the sample as always. The Python walker will fill the
 * record's payload; for now the record is the header alone.
 *
 * A record the ring cannot take is counted in output_failed (read by
 * ms-collect at the end), never retried.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "sampler.h"

/* One BPF_OUTPUT event per CPU, keyed by CPU number: set by ms-collect. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} outputs SEC(".maps");

/* Records bpf_perf_event_output() refused (a full ring, no output event). */
__u64 output_failed = 0;

SEC("perf_event")
int ms_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ms_bpf_header h = {
		.magic = MS_BPF_MAGIC,
		.version = MS_BPF_VERSION,
		.kind = MS_BPF_KIND_SAMPLE,
		.size = sizeof(h),
		.cpu = bpf_get_smp_processor_id(),
		.pid = (__u32)(id >> 32),
		.tid = (__u32)id,
		.time = bpf_ktime_get_ns(),
	};

	if (bpf_perf_event_output(ctx, &outputs, BPF_F_CURRENT_CPU, &h, sizeof(h)) < 0)
		__sync_fetch_and_add(&output_failed, 1);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";

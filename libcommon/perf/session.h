/*
 * The perf events of one recording and their rings.
 *
 * Shape, forced by this kernel (see the architecture guide): an inherit=1
 * event on cpu=-1 cannot be mmapped, so every task is followed by one
 * event per online CPU (pid=task, cpu=c, inherit=1), and there is one ring
 * per CPU. The first event opened on a CPU owns that CPU's ring; the events
 * of further tasks (attach mode: one task per existing thread) are
 * redirected into it with PERF_EVENT_IOC_SET_OUTPUT, which is what perf
 * does for -p. Threads and processes a followed task creates later inherit
 * its events, and write to the same ring.
 *
 * The attr: a software clock (cpu-clock or task-clock) or, where the
 * machine has counters, a hardware event; frequency or period; samples
 * carry IP, TID, TIME, ID, CPU, PERIOD, CALLCHAIN and, with a stack size,
 * REGS_USER (0xff01ff: AX..IP, R8..R15) and STACK_USER; mmap2 with build
 * ids, comm (exec), task, sample_id_all; the monotonic clock. Refusals are
 * handled once, at the first open: kernel samples refused by
 * perf_event_paranoid fall back to exclude_kernel=1 with a warning;
 * build_id or use_clockid refused with EINVAL are dropped.
 *
 * Off-CPU (config.off_cpu): beside each sampler event, a sched:sched_switch
 * tracepoint event on the same task and CPU (the switch event): period 1,
 * inherit, the sampler's sample_type with RAW (prev_state), the same
 * registers and a stack copy of switch_stack_size, context_switch (so the
 * kernel's PERF_RECORD_SWITCH in/out records of the task come with it),
 * the same clock and exec handling, and no side-band records (mmap, comm,
 * task: the sampler writes them once). It writes into the ring of its
 * CPU's sampler with PERF_EVENT_IOC_SET_OUTPUT: one ring per CPU keeps
 * switch-outs and samples in time order for ms-decode's merge, and the
 * copies of the events that threads created later inherit write there
 * too (checked on this kernel: tests/0200-ms-collect.bats). A tracepoint
 * is a kernel event: with kernel samples refused there is none.
 *
 * BPF sampler (config.bpf, ms-collect --bpf-sampler): the program
 * config.bpf_prog_fd is attached with PERF_EVENT_IOC_SET_BPF to every
 * sampler event as it is opened, so the copies threads inherit run it
 * too. As a CPU's ring is made, a BPF output event is opened on that CPU
 * (pid -1: always on it, as bpf_perf_event_output(BPF_F_CURRENT_CPU)
 * needs), redirected into the ring with PERF_EVENT_IOC_SET_OUTPUT (a CPU
 * event into a CPU's ring: the kernel allows it, and it stays in the
 * ring's time order) and stored in the program's PERF_EVENT_ARRAY
 * config.bpf_outputs_fd at its CPU number. Its samples carry IP, TID,
 * TIME, ID, CPU and RAW (the program's record): the id where the
 * sampler's samples have theirs, so that ms-decode finds each sample's
 * attr by it, and the sampler's sample_id_all trailer and clock.
 *
 * Errors: functions return -1 after one message and set s->refused when
 * the system refused (permissions, no such hardware, limits), so that the
 * stage can say so in its exit status.
 */
#ifndef MS_PERF_SESSION_H
#define MS_PERF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "perf/ring.h"
#include "stream/records.h"

#define MS_CPUS_MAX 1024
/* perf's register mask for AX..IP and R8..R15 (no segments, no XMM). */
#define MS_REGS_USER_MASK 0xff01ffull

/* An event a user may name with -e. */
struct ms_event_spec {
	const char *name;
	uint32_t type;		/* PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE */
	uint64_t config;
};
/* The event called name, or NULL. */
const struct ms_event_spec *ms_event_lookup(const char *name);
/* kernel.perf_event_max_sample_rate now, or -1 when unreadable. */
long ms_perf_max_sample_rate(void);
/* The names ms_event_lookup() knows, comma-separated, for messages. */
const char *ms_event_names(void);

struct ms_session_config {
	const struct ms_event_spec *event;
	uint64_t freq;		/* samples per second, or 0 when period is set */
	uint64_t period;	/* events per sample, or 0 when freq is set */
	uint32_t stack_size;	/* bytes of user stack per sample; 0: none */
	uint32_t data_pages;	/* per ring, a power of two */
	/*
	 * Non-zero: data_pages is a default, which shrinks (down to this, a
	 * power of two) to rings this user may lock, with a warning.
	 */
	uint32_t data_pages_min;
	/* Launch mode: events start disabled and turn on when the task execs. */
	bool enable_on_exec;
	/* Off-CPU: a switch event beside each sampler event (see above). */
	bool off_cpu;
	uint64_t switch_config;		/* the tracepoint's id (tracefs) */
	uint32_t switch_stack_size;	/* bytes of user stack per switch-out */
	/* BPF sampler (see above): a loaded perf_event program and its outputs map. */
	bool bpf;
	int bpf_prog_fd;
	int bpf_outputs_fd;
};

struct ms_session_event {
	int fd;
	uint32_t cpu_index;	/* into cpus[] and rings[] */
	pid_t tid;
	uint64_t id;		/* PERF_EVENT_IOC_ID */
	bool is_switch;		/* the sched_switch event, not the sampler */
	bool is_output;		/* a BPF output event (pid -1), not the sampler */
};

struct ms_session {
	struct ms_session_config config;
	struct perf_event_attr attr;
	struct perf_event_attr switch_attr;	/* off_cpu: made from attr once it is probed */
	struct perf_event_attr output_attr;	/* bpf: made from attr once it is probed */
	bool attr_probed;	/* the fallbacks below were decided */
	bool exclude_kernel;	/* kernel samples refused: fell back */
	bool build_id;		/* mmap2 records carry build ids */
	bool clock_monotonic;	/* sample times are CLOCK_MONOTONIC */
	bool refused;		/* the last failure was the system's refusal */

	uint32_t n_cpus;
	int cpus[MS_CPUS_MAX];
	struct ms_ring *rings;	/* n_cpus; map == NULL until a task opened one */
	int *ring_owner;	/* fd that owns each ring, or -1 */
	uint8_t *bounce;	/* MS_RING_RECORD_MAX bytes shared by every ring */

	struct ms_session_event *events;
	size_t n_events, alloc_events;
};

/* Reads the online CPUs and prepares the attr. */
int ms_session_init(struct ms_session *s, const struct ms_session_config *c);
/*
 * Open one event per CPU for task tid (a process, or a thread of one).
 * Returns 0; 1 when the task no longer exists (nothing was opened, no
 * message); -1 after a message.
 */
int ms_session_open_task(struct ms_session *s, pid_t tid);
/* Stop sampling on every event (and the events inherited from them). */
void ms_session_disable(struct ms_session *s);
/*
 * Fill the stream's ATTR records of the sampler's events, or of the
 * switch events (switches): the ids are split into records of at most
 * MS_ATTR_IDS_MAX. Call with part = 0, 1, ... while it returns 1; it
 * returns 0 when there is no such part (switches without off_cpu: none).
 */
int ms_session_attr_record(const struct ms_session *s, bool switches, uint32_t part,
			   struct ms_attr *a);
/* The same for the BPF output events (none without config.bpf). */
int ms_session_output_attr_record(const struct ms_session *s, uint32_t part, struct ms_attr *a);
/*
 * Turn the sampler's events (and their inherited copies) off or on,
 * leaving the switch events as they are: --budget with --off-cpu. 0, or
 * -1 with errno when one could not be switched.
 */
int ms_session_samplers_enable(struct ms_session *s, bool on);
/* Close every event, unmap every ring. */
void ms_session_release(struct ms_session *s);

#endif

/*
 * ms-collect's work: record a launched or attached process into a stream.
 *
 * The stream it writes (see man/ms-collect.1 and microscope-stream.5):
 *   header; INFO records (command, hostname, kernel, event, frequency or
 *   period, stack-size, with --off-cpu off-cpu "sched:sched_switch" and
 *   off-cpu-stack-size, with --python python "bpf" or "snapshot" (and
 *   python-interval with snapshot), cpus, mmap-pages,
 *   clock, start-time); TARGET;
 *   with --off-cpu, the TRACEPOINT record (sched_switch's id and RAW
 *   layout) and the ATTR record(s) of the switch events (type
 *   PERF_TYPE_TRACEPOINT, sample_type with RAW), after those of the BPF
 *   output events with --bpf-sampler (PERF_COUNT_SW_BPF_OUTPUT, sample_type
 *   with RAW); then the sampler's ATTR
 *   record(s), always last, as ms-decode lays samples out with the latest
 *   ATTR (the ids of every event, split when there are more than fit one
 *   record); VDSO; when attaching, synthesized COMM and MMAP records (time 0)
 *   from /proc; then RAW records, one per kernel record, copied unparsed,
 *   with a ROUND after each pass over the rings that copied something;
 *   LOST records (source collector) for records the output could not take;
 *   at the end TARGET_EXIT (launched), the remaining LOST count, PROBLEM
 *   records, INFO end-time, and the trailer.
 *
 * The loop reads rings with poll and never blocks on the output: when the
 * pipe is full and the writer's bounded buffer cannot take a record, the
 * record is dropped and counted. Nothing is allocated per record.
 */
#ifndef MS_PERF_COLLECT_H
#define MS_PERF_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MS_COLLECT_FREQ_DEFAULT 999
/* microscope record's default preset's copy: see cmd/microscope/options.c. */
#define MS_COLLECT_STACK_DEFAULT 32768
#define MS_COLLECT_STACK_MAX 65528
/* Data pages per ring: 1 MiB, or 4 MiB for stack copies above 16 KiB. */
#define MS_COLLECT_PAGES_DEFAULT 256
#define MS_COLLECT_PAGES_BIG_STACK 1024
#define MS_COLLECT_PAGES_MAX (1u << 20)
/*
 * The stack copy of a switch-out (--off-cpu), when no --off-cpu-stack-size
 * is given: this, or the sampler's copy when smaller. See
 * man/ms-collect.1 for the measurement behind it.
 */
#define MS_COLLECT_OFF_CPU_STACK_DEFAULT 8192
/* How long a launched program may take to end after SIGTERM or SIGINT. */
#define MS_COLLECT_GRACE_MS 3000

struct ms_writer;
struct ms_problems;
struct ms_sample;

/*
 * Where a watch (below) writes: into w, and only len bytes that room()
 * said the output takes now (while recording it never blocks; after the
 * end it waits). problems collects what the stream's PROBLEM records say.
 */
struct ms_collect_out {
	struct ms_writer *w;
	struct ms_problems *problems;
	bool (*room)(void *ctx, size_t len);
	void *ctx;
};

/* What a watch's sample() asks of the sample's own RAW record. */
enum ms_watch_verdict {
	MS_WATCH_ERROR = -1,	/* writing failed: the recording ends */
	MS_WATCH_WRITE = 0,	/* write it now */
	/*
	 * What must go before it found no room: keep it in its ring and ask
	 * again later, as for a record the output cannot take (past half a
	 * ring it is dropped and counted, and the next sample asks again).
	 */
	MS_WATCH_WAIT = 1,
};

/*
 * A watch of the recording (jit/recorder.h and python/pyrecorder.h are
 * two): told of what the collector decodes anyway (its trimmer decodes
 * every record, perf/trim.h) and allowed to write records of its own ahead
 * of a sample's. Every callback may be NULL.
 *  record(): a mapping, comm, fork or exit of a recorded task, as kind
 *   MS_REC_MMAP (struct ms_mmap), MS_REC_COMM (struct ms_comm),
 *   MS_REC_FORK or MS_REC_EXIT (struct ms_task): the MMAP and COMM
 *   records synthesized from /proc when attaching (time 0), then each
 *   kernel record once it left its ring, written or dropped. Borrowed.
 *  sample(): a sample or switch-out (its sample), before its RAW record is
 *   written; its stack copy borrows from the kernel's record.
 *  bpf(): a record of the BPF sampler (--bpf-sampler, --python bpf), as
 *   perf/bpfrecord.h checked it (header copied, payload borrowed from the
 *   kernel's record), before the RAW record of its output event's sample
 *   is written: what the watch writes goes ahead of it. Same verdicts as
 *   sample().
 *  tick(): about every tick_ms (0: MS_COLLECT_TICK_MS) while recording,
 *   after a drain pass (never during one), with the monotonic time; what
 *   it writes goes where the stream is then. The next is due tick_ms
 *   after this one was called (a late tick makes no backlog). Returns 0,
 *   or -1 when writing failed (the recording ends).
 *  finish(): after the last drain, before the stream's epilogue: the
 *   output may block now, so what waited for room goes out.
 * Several watches may run (ms_collect_opts.watches): each callback is
 * called in their order; a sample or BPF record one tells to wait is asked
 * of every watch again later, so a watch must not write twice what it
 * wrote for it already.
 */
struct ms_bpf_record;
struct ms_collect_watch {
	void *arg;
	void (*record)(void *arg, uint32_t kind, const void *rec);
	enum ms_watch_verdict (*sample)(void *arg, const struct ms_sample *s,
					const struct ms_collect_out *out);
	enum ms_watch_verdict (*bpf)(void *arg, const struct ms_bpf_record *r,
				     const struct ms_collect_out *out);
	int (*tick)(void *arg, uint64_t now_ns, const struct ms_collect_out *out);
	int (*finish)(void *arg, const struct ms_collect_out *out);
	uint32_t tick_ms;	/* tick()'s period, 1 to 1000; 0: MS_COLLECT_TICK_MS */
};
#define MS_COLLECT_WATCHES_MAX 4
/* How often tick() is called (the loop sleeps no longer while a watch has one). */
#define MS_COLLECT_TICK_MS 20

/*
 * --bpf-sampler (internal, experimental): a loaded BPF sampler program
 * (perf/bpfload.h) that the session attaches to every sampler event, and
 * the map of its output events (perf/session.h). failed(arg) gives the
 * records the program could not write, said at the end as a PROBLEM.
 */
struct ms_collect_bpf {
	int prog_fd;
	int outputs_fd;
	uint64_t (*failed)(void *arg);
	void *arg;
};

struct ms_collect_opts {
	const char *output;	/* NULL: stdout (or output_fd) */
	/*
	 * > 0: write the stream to this open descriptor instead of stdout
	 * (microscope record), and let a launched program keep our stdout.
	 */
	int output_fd;
	bool lz4;		/* compress the stream into an LZ4 frame (--lz4) */
	const char *event;	/* "cpu-clock" */
	uint64_t freq;		/* samples per second, or 0 with period */
	uint64_t period;
	uint32_t stack_size;
	uint32_t data_pages;	/* 0: the default above */
	uint64_t duration_ns;	/* 0: until the target ends or a signal */
	pid_t pid;		/* attach to this process, or 0 */
	/*
	 * --budget: hold the recording's own CPU time (this process and
	 * budget_pids, the live stages of its pipeline) to budget_ppm
	 * millionths of one CPU by pausing the events (perf/governor.h); 0:
	 * no budget.
	 */
	uint32_t budget_ppm;
	const pid_t *budget_pids;
	uint32_t n_budget_pids;
	char **argv;		/* launch this command (NULL-terminated), or NULL */
	const char *version;	/* for the stream header */
	/*
	 * --off-cpu: record each switch-out of the target's threads (the
	 * sched:sched_switch tracepoint, with registers, a stack copy of
	 * off_cpu_stack_size bytes and prev_state) and their switches in and
	 * out (PERF_RECORD_SWITCH). --budget pauses the sampler only.
	 */
	bool off_cpu;
	uint32_t off_cpu_stack_size;
	/* --bpf-sampler (above), or NULL. */
	const struct ms_collect_bpf *bpf;
	/* Told of what is recorded (above), in this order: n_watches of them. */
	const struct ms_collect_watch *watches[MS_COLLECT_WATCHES_MAX];
	uint32_t n_watches;
	/*
	 * The recording's Python engine ("bpf" or "snapshot"), written as
	 * INFO "python" with the others; NULL: none, and no such INFO.
	 */
	const char *python;
	/* The snapshot engine's interval in ms, INFO "python-interval"; 0: none. */
	uint32_t python_interval_ms;
};

/* The switch-out copy when none is given: see MS_COLLECT_OFF_CPU_STACK_DEFAULT. */
uint32_t ms_collect_off_cpu_stack_default(uint32_t stack_size);

/*
 * Check option values and combinations. Returns 0, or -1 after a message
 * (the caller exits with MS_EXIT_USAGE).
 */
int ms_collect_check(const struct ms_collect_opts *o);

/* Record. Returns the process exit code (see man/ms-collect.1). */
int ms_collect_run(const struct ms_collect_opts *o);

/*
 * Option parsers: 0, or -1 after a message naming the option. An unsigned
 * decimal at most max; seconds as a decimal with an optional fraction
 * ("2", "0.5"), more than 0 and at most 10^6.
 */
int ms_parse_u64(const char *s, const char *option, uint64_t max, uint64_t *out);
int ms_parse_seconds(const char *s, const char *option, uint64_t *out_ns);
/* A percentage of one CPU, 0.01 to 100, with an optional '%' ("2", "0.5%"), in ppm. */
int ms_parse_percent(const char *s, const char *option, uint32_t *out_ppm);

#endif

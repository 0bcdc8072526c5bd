#include "perf/collect.h"
#include "perf/kernel.h"
#include "perf/trim.h"
#include "perf/procfs.h"
#include "perf/governor.h"
#include "perf/ratewatch.h"
#include "perf/ring.h"
#include "perf/session.h"
#include "perf/target.h"
#include "perf/tracefs.h"
#include "perf/vdso.h"
#include "stream/protocols.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"
#include "util/publish.h"
#include "util/text.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STAGE "ms-collect"
/* Poll timeout: rings are drained at least this often. */
#define POLL_MS 100
/* Passes over /proc/PID/task while attaching, until no thread is new. */
#define ATTACH_ROUNDS 100
/* Slots of the poll set before the event fds. */
enum { PFD_SIGNAL, PFD_TIMER, PFD_PIDFD, PFD_OUTPUT, PFD_EVENTS };

enum stop_reason {
	STOP_NONE,
	STOP_EXIT,	/* the target ended */
	STOP_SIGNAL,	/* SIGINT, SIGTERM or SIGHUP */
	STOP_DURATION,	/* --duration elapsed */
	STOP_OUTPUT,	/* the output failed or downstream closed the pipe */
	STOP_ERROR,
};

struct collector {
	const struct ms_collect_opts *o;
	const struct ms_event_spec *event;
	struct ms_session s;
	struct ms_writer *w;
	struct ms_problems problems;
	struct ms_attr *attr;		/* big: on the heap */
	struct ms_tracepoint_file *switch_tp;	/* --off-cpu: sched_switch's format */
	struct ms_trimmer *trim;	/* samples' stack copies cut to dyn_size */
	/* o->watches, when the trimmer could be told to decode for them */
	const struct ms_collect_watch *const *lookers;
	uint32_t n_lookers;
	struct ms_collect_out watch_out;
	bool ticking;			/* a watch has a tick() */
	uint64_t next_tick_ns;		/* the earliest of tick_due */
	uint64_t tick_due[MS_COLLECT_WATCHES_MAX];	/* each watch's next tick (0: at once) */

	/* output */
	int out_fd;
	const char *out_name;
	struct ms_publish publish;	/* -o FILE: renamed into place when complete */
	bool publishing;
	int out_flags;			/* stdout's or output_fd's, to restore: the writer sets O_NONBLOCK */
	char out_fd_name[32];

	/* target */
	bool launched;
	bool misused;			/* a setup failure that is a usage error */
	bool refused;			/* a setup failure that is the system's refusal */
	pid_t pid;
	struct ms_launch launch;
	bool reaped;
	int status;
	int exec_errno;
	pid_t *tids;
	size_t n_tids, alloc_tids;

	/* loop */
	int sig_fd, timer_fd, pid_fd;
	struct pollfd *pfds;
	size_t n_pfds;
	enum stop_reason stop;
	bool terminating;		/* launched target told to end; waiting */
	/* The last stopping signal taken, to know an echo of it (handle_signals()). */
	uint32_t last_signo;
	bool last_from_parent;
	struct timespec last_at;
	bool duration_done;
	uint64_t end_ns;	/* when the events were disabled at the duration's end; 0: not yet */
	bool final;			/* draining after the end: may block on output */
	bool output_failed;
	bool output_blocked;		/* records wait in the rings for the output */
	bool poll_alive;		/* no pidfd: look at /proc after each poll */

	/* counts */
	uint64_t copied, kernel_lost, throttled;
	struct ms_rate_watch watch;	/* is the rate kept? (perf/ratewatch.h) */
	/* --budget (perf/governor.h): a change of duty waits here for room in the output. */
	struct ms_governor *gov;
	struct ms_duty duty;
	bool duty_waiting;
	bool stderr_tty;
	uint64_t dropped, dropped_pending;
};

int ms_parse_u64(const char *s, const char *option, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return ms_error("option '%s' needs a number", option);
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return ms_error("option '%s': '%s' is not a decimal number", option, s);
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10 || v * 10 + (uint64_t)(*p - '0') > max)
			return ms_error("option '%s': '%s' is larger than %llu", option, s,
					(unsigned long long)max);
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

/*
 * A decimal with an optional fraction ("2", "0.5") at its start, in units
 * of 1/unit (digits past that are dropped), into *out; *end after it.
 * 0, -1 when it is not one, -2 when its whole part is above max.
 */
static int parse_decimal(const char *s, uint64_t max, uint64_t unit, uint64_t *out,
			 const char **end)
{
	uint64_t whole = 0, frac = 0, scale = unit;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > max)
			return -2;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*p - '0') * scale;
			}
		}
	}
	*out = whole * unit + frac;
	*end = p;
	return 0;
}

int ms_parse_percent(const char *s, const char *option, uint32_t *out_ppm)
{
	const char *end;
	uint64_t ppm;
	int r = parse_decimal(s, 100, 10000, &ppm, &end);

	if (r == 0 && *end == '%')
		end++;
	if (r == -1 || (r == 0 && *end))
		return ms_error("option '%s': '%s' is not a percentage (like 2 or 0.5)", option, s);
	/* 0.01 %: below that a recording takes no samples worth having. */
	if (r == -2 || ppm < 100 || ppm > 1000000)
		return ms_error("option '%s': '%s' is not between 0.01 and 100 (percent of one "
				"CPU)", option, s);
	*out_ppm = (uint32_t)ppm;
	return 0;
}

int ms_parse_seconds(const char *s, const char *option, uint64_t *out_ns)
{
	const char *end;
	int r = parse_decimal(s, 1000000, 1000000000ull, out_ns, &end);

	if (r == -1 || (r == 0 && *end))
		return ms_error("option '%s': '%s' is not a number of seconds (like 2 or 0.5)",
				option, s);
	if (r == -2 || *out_ns > 1000000ull * 1000000000ull)
		return ms_error("option '%s': '%s' is more than 1000000 seconds", option, s);
	if (!*out_ns)
		return ms_error("option '%s': the duration must be more than 0", option);
	return 0;
}

int ms_collect_check(const struct ms_collect_opts *o)
{
	if (!o->pid && (!o->argv || !o->argv[0]))
		return ms_error("nothing to record: give -p PID or a command after --");
	if (o->pid && o->argv && o->argv[0])
		return ms_error("give either -p PID or a command, not both");
	if (o->pid < 0 || (o->pid == 0 && !o->argv))
		return ms_error("-p: '%d' is not a process id", (int)o->pid);
	if (o->freq && o->period)
		return ms_error("give either -F HZ or -c PERIOD, not both");
	if (!o->freq && !o->period)
		return ms_error("the sampling frequency (-F) or period (-c) must be more than 0");
	if (o->stack_size % 8 || o->stack_size > MS_COLLECT_STACK_MAX)
		return ms_error("--stack-size %u: must be a multiple of 8 and at most %u "
				"(0 copies no stack)", o->stack_size, MS_COLLECT_STACK_MAX);
	if (o->data_pages && ((o->data_pages & (o->data_pages - 1)) ||
			      o->data_pages > MS_COLLECT_PAGES_MAX))
		return ms_error("--mmap-pages %u: must be a power of two, at most %u",
				o->data_pages, MS_COLLECT_PAGES_MAX);
	if (!ms_event_lookup(o->event))
		return ms_error("unknown event '%s'; known events: %s", o->event, ms_event_names());
	if (o->off_cpu && !o->stack_size && o->off_cpu_stack_size)
		return ms_error("--off-cpu-stack-size %u: switch-outs copy a stack only when "
				"samples do, and --stack-size is 0", o->off_cpu_stack_size);
	if (o->off_cpu && o->stack_size && (!o->off_cpu_stack_size ||
					     o->off_cpu_stack_size % 8 ||
					     o->off_cpu_stack_size > MS_COLLECT_STACK_MAX))
		return ms_error("--off-cpu-stack-size %u: must be a multiple of 8, more than 0 "
				"and at most %u", o->off_cpu_stack_size, MS_COLLECT_STACK_MAX);
	if (o->n_budget_pids && !o->budget_ppm)
		return ms_error("--budget-pid counts a process toward a budget: give --budget PCT "
				"too");
	return 0;
}

uint32_t ms_collect_off_cpu_stack_default(uint32_t stack_size)
{
	return stack_size < MS_COLLECT_OFF_CPU_STACK_DEFAULT ? stack_size
							      : MS_COLLECT_OFF_CPU_STACK_DEFAULT;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wall-clock time, for viewers that show when a profile was taken. */
static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- output ---- */

static int output_open(struct collector *c)
{
	const char *out = c->o->output;
	struct stat st;

	c->out_flags = -1;
	if (out && strcmp(out, "-") && stat(out, &st) == 0 && S_ISDIR(st.st_mode))
		return ms_error("cannot write '%s': it is a directory", out);
	if (c->o->output_fd > 0) {
		/* The front command's pipe: our stdout stays the program's. */
		if (fcntl(c->o->output_fd, F_GETFL) < 0) {
			c->misused = true;
			return ms_error_errno("--output-fd %d: not an open descriptor",
					      c->o->output_fd);
		}
		c->out_fd = c->o->output_fd;
		/* The launched program must not hold the pipe open after us. */
		fcntl(c->out_fd, F_SETFD, FD_CLOEXEC);
		snprintf(c->out_fd_name, sizeof(c->out_fd_name), "descriptor %d", c->out_fd);
		c->out_name = c->out_fd_name;
		c->out_flags = fcntl(c->out_fd, F_GETFL);
	} else if (!out || !strcmp(out, "-")) {
		if (isatty(STDOUT_FILENO)) {
			c->misused = true;
			return ms_error("refusing to write a binary stream to a terminal; "
					"use -o FILE or a pipe");
		}
		c->out_fd = STDOUT_FILENO;
		c->out_name = "stdout";
		c->out_flags = fcntl(STDOUT_FILENO, F_GETFL);
	} else {
		/*
		 * A file is renamed into place when complete; a FIFO or device is
		 * written. Only its owner may read it: it holds copies of the
		 * program's stack, environment strings and all (ms-collect(1)).
		 */
		c->out_fd = ms_publish_open_private(&c->publish, out);
		if (c->out_fd < 0)
			return -1;
		c->publishing = true;
		c->out_name = out;
	}
	c->w = ms_writer_open(c->out_fd, c->out_name,
			      MS_WRITER_NONBLOCK | (c->o->lz4 ? MS_WRITER_LZ4 : 0));
	return c->w ? 0 : -1;
}

/* Finish the output: rename when complete, remove when not. */
static int output_close(struct collector *c, bool complete)
{
	int ret = 0;

	if (c->w && ms_writer_close(c->w) < 0)
		ret = -1;
	c->w = NULL;
	if (c->out_flags >= 0)
		fcntl(c->out_fd, F_SETFL, c->out_flags);
	if (!c->publishing)
		return ret;
	c->publishing = false;
	if (complete && !ret)
		return ms_publish_commit(&c->publish);
	ms_publish_abort(&c->publish);
	return ret;
}

static int info_text(struct collector *c, const char *key, const char *text)
{
	struct ms_info i = {
		.key = { key, (uint32_t)strlen(key) },
		.is_text = true,
		.text = { text, (uint32_t)strlen(text) },
	};

	return ms_info_pack(c->w, &i);
}

static int info_number(struct collector *c, const char *key, uint64_t n)
{
	struct ms_info i = { .key = { key, (uint32_t)strlen(key) }, .number = n };

	return ms_info_pack(c->w, &i);
}

/* argv joined by spaces, truncated to size. */
static void join_args(char *buf, size_t size, char *const *argv, int argc)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < argc && len + 1 < size; i++) {
		int n = snprintf(buf + len, size - len, "%s%s", i ? " " : "", argv[i]);

		if (n < 0)
			break;
		len += (size_t)n < size - len ? (size_t)n : size - len - 1;
	}
}

/*
 * The vdso image, for ms-unwind's call-frame information: ms-collect's own
 * is the target's (see perf/vdso.h). A vdso that cannot be copied is a
 * problem, not a failure: only its frames lose their callers.
 */
static int write_vdso(struct collector *c)
{
	struct ms_vdso v;
	const char *why = NULL;
	int r = ms_vdso_own(&v, &why);

	if (r < 0)
		ms_problems_add(&c->problems, "vdso-not-copied",
				"the vdso image could not be copied (%s): stacks that end "
				"in [vdso] are not unwound past it", why);
	return r > 0 ? ms_vdso_pack(c->w, &v) : 0;
}

static int write_preamble(struct collector *c)
{
	char command[4096], cmdline[8192], host[256], kbid[MS_BUILD_ID_HEX];
	uint8_t bid[MS_BUILD_ID_MAX];
	uint32_t bid_len;
	char *args[MS_ARGV_MAX];
	int argc = 0;
	struct utsname u;
	struct ms_target t = { .pid = (uint32_t)c->pid, .launched = c->launched };

	if (ms_writer_header(c->w, NULL, STAGE, c->o->version) < 0)
		return -1;
	if (c->launched) {
		while (c->o->argv[argc])
			argc++;
		join_args(command, sizeof(command), c->o->argv, argc);
		for (int i = 0; i < argc && i < MS_ARGV_MAX; i++)
			args[i] = c->o->argv[i];
		argc = argc < MS_ARGV_MAX ? argc : MS_ARGV_MAX;
	} else {
		argc = ms_proc_cmdline(c->pid, cmdline, sizeof(cmdline), args, MS_ARGV_MAX);
		if (argc > 0) {
			join_args(command, sizeof(command), args, argc);
		} else {
			char comm[64];

			argc = 0;
			if (ms_task_comm(c->pid, c->pid, comm, sizeof(comm)) < 0)
				comm[0] = '\0';
			snprintf(command, sizeof(command), "[%s]", comm);
		}
	}
	if (gethostname(host, sizeof(host)) < 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	if (uname(&u) < 0)
		u.release[0] = '\0';
	bid_len = ms_kernel_build_id(NULL, bid);
	ms_build_id_hex(bid, bid_len, kbid);
	if (info_text(c, "command", command) < 0 ||
	    info_text(c, "hostname", host) < 0 ||
	    info_text(c, "kernel", u.release) < 0 ||
	    (kbid[0] && info_text(c, "kernel-build-id", kbid) < 0) ||
	    info_text(c, "event", c->event->name) < 0 ||
	    (c->o->freq ? info_number(c, "frequency", c->o->freq)
			: info_number(c, "period", c->o->period)) < 0 ||
	    info_number(c, "stack-size", c->o->stack_size) < 0 ||
	    (c->o->python && info_text(c, "python", c->o->python) < 0) ||
	    (c->o->python_interval_ms &&
	     info_number(c, "python-interval", c->o->python_interval_ms) < 0) ||
	    (c->o->off_cpu && (info_text(c, "off-cpu", c->switch_tp->name) < 0 ||
			       info_number(c, "off-cpu-stack-size",
					   c->s.switch_attr.sample_stack_user) < 0)) ||
	    (c->o->budget_ppm && info_number(c, "budget-ppm", c->o->budget_ppm) < 0) ||
	    info_number(c, "cpus", c->s.n_cpus) < 0 ||
	    info_number(c, "mmap-pages", c->s.config.data_pages) < 0 ||
	    info_text(c, "clock", c->s.clock_monotonic ? "monotonic" : "perf") < 0 ||
	    info_number(c, "start-time", now_ns()) < 0 ||
	    info_number(c, "start-wall-time", wall_ns()) < 0)
		return -1;

	t.argc = (uint32_t)argc;
	for (int i = 0; i < argc; i++) {
		t.argv[i].ptr = args[i];
		t.argv[i].len = (uint32_t)strlen(args[i]);
	}
	if (ms_target_pack(c->w, &t) < 0)
		return -1;
	if (c->o->off_cpu) {
		if (ms_tracepoint_pack(c->w, &c->switch_tp->tp) < 0)
			return -1;
		ms_trimmer_tracepoint(c->trim, &c->switch_tp->tp);
	}
	/* The BPF output events' first, the sampler's last: see collect.h. */
	for (uint32_t part = 0; ms_session_output_attr_record(&c->s, part, c->attr); part++) {
		if (ms_attr_pack(c->w, c->attr) < 0)
			return -1;
		ms_trimmer_attr(c->trim, c->attr);
	}
	/* The switch events' first, the sampler's last: see collect.h. */
	for (int switches = c->o->off_cpu; switches >= 0; switches--)
		for (uint32_t part = 0; ms_session_attr_record(&c->s, switches, part, c->attr);
		     part++) {
			if (ms_attr_pack(c->w, c->attr) < 0)
				return -1;
			ms_trimmer_attr(c->trim, c->attr);
		}
	return write_vdso(c);
}

/* ---- attach: threads and /proc synthesis ---- */

static bool tid_known(const struct collector *c, pid_t tid)
{
	size_t lo = 0, hi = c->n_tids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->tids[mid] == tid)
			return true;
		if (c->tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * Mark in fresh[] (negate) the threads whose FORK record is already in a
 * ring: they were created by a thread we follow and inherited its events,
 * so opening events for them too would sample them twice. The rings are
 * only peeked at: the records stay for the loop to copy. Returns how many
 * are still unmarked.
 */
static size_t drop_inherited(struct collector *c, pid_t *fresh, size_t n)
{
	size_t left = n;

	for (uint32_t i = 0; i < c->s.n_cpus && left; i++) {
		struct ms_ring *r = &c->s.rings[i];
		const uint8_t *rec;
		uint32_t len;

		if (!r->map)
			continue;
		ms_ring_begin(r);
		while (left && ms_ring_next(r, &rec, &len) == 1) {
			const struct perf_event_header *h = (const void *)rec;
			uint32_t child;

			if (h->type != PERF_RECORD_FORK || len < sizeof(*h) + 16)
				continue;
			memcpy(&child, rec + sizeof(*h) + 8, sizeof(child));	/* tid */
			for (size_t k = 0; k < n; k++)
				if (fresh[k] == (pid_t)child) {
					fresh[k] = -fresh[k];
					left--;
				}
		}
	}
	return left;
}

static int attach_threads(struct collector *c)
{
	pid_t *list = NULL, *fresh = NULL;
	size_t alloc = 0;
	int ret = -1, round;

	for (round = 0; round < ATTACH_ROUNDS; round++) {
		int n = ms_tasks_list(c->pid, &list, &alloc);
		size_t n_fresh = 0;

		if (n < 0) {
			if (errno == ESRCH)
				ms_error("pid %d exited while ms-collect attached to it", (int)c->pid);
			goto out;
		}
		free(fresh);
		fresh = malloc(((size_t)n + 1) * sizeof(*fresh));
		if (!fresh) {
			ms_error("out of memory attaching to %d threads", n);
			goto out;
		}
		for (int i = 0; i < n; i++)
			if (!tid_known(c, list[i]))
				fresh[n_fresh++] = list[i];
		if (!n_fresh)
			break;
		if (round > 0 && drop_inherited(c, fresh, n_fresh)) {
			/* A FORK record follows a new thread's birth closely: look again. */
			struct timespec ms2 = { 0, 2 * 1000 * 1000 };

			nanosleep(&ms2, NULL);
			drop_inherited(c, fresh, n_fresh);
		}
		if (c->n_tids + n_fresh > c->alloc_tids) {
			size_t grow = (c->n_tids + n_fresh) * 2;
			pid_t *p = realloc(c->tids, grow * sizeof(*p));

			if (!p) {
				ms_error("out of memory attaching to %zu threads", grow);
				goto out;
			}
			c->tids = p;
			c->alloc_tids = grow;
		}
		for (size_t k = 0; k < n_fresh; k++) {
			/* Negative: inherited, known from now on but not opened. */
			c->tids[c->n_tids++] = fresh[k] < 0 ? -fresh[k] : fresh[k];
			if (fresh[k] > 0 && ms_session_open_task(&c->s, fresh[k]) < 0)
				goto out;
		}
		qsort(c->tids, c->n_tids, sizeof(*c->tids), cmp_pid);
	}
	if (round == ATTACH_ROUNDS)
		ms_problems_add(&c->problems, "threads-missed",
				"pid %d kept creating threads while ms-collect attached; "
				"threads created by threads it did not follow yet may be missing",
				(int)c->pid);
	if (!c->s.n_events) {
		ms_error("pid %d exited while ms-collect attached to it", (int)c->pid);
		goto out;
	}
	ret = 0;
out:
	free(list);
	free(fresh);
	return ret;
}

/* A mapping, comm, fork or exit, for every watch. */
static void tell(struct collector *c, uint32_t kind, const void *rec)
{
	for (uint32_t i = 0; i < c->n_lookers; i++)
		if (c->lookers[i]->record)
			c->lookers[i]->record(c->lookers[i]->arg, kind, rec);
}

static int synth_mmap(const struct ms_maps_entry *e, void *data)
{
	struct collector *c = data;
	struct ms_mmap m = {
		.pid = (uint32_t)c->pid,
		.tid = (uint32_t)c->pid,
		.start = e->start,
		.len = e->end - e->start,
		.pgoff = e->pgoff,
		.maj = e->maj,
		.min = e->min,
		.ino = e->ino,
		.prot = e->prot,
		.flags = e->flags,
		.cpumode = MS_CPUMODE_USER,
		.synthesized = true,
		.filename = { e->path, e->path_len },
	};

	/* As perf does without --data: code only. */
	if (!(e->prot & PROT_EXEC))
		return 0;
	if (ms_mmap_pack(c->w, &m) < 0)
		return -1;
	tell(c, MS_REC_MMAP, &m);
	return 0;
}

static int write_synthesized(struct collector *c)
{
	char comm[64];

	for (size_t i = 0; i < c->n_tids; i++) {
		int n = ms_task_comm(c->pid, c->tids[i], comm, sizeof(comm));
		struct ms_comm rec = {
			.pid = (uint32_t)c->pid,
			.tid = (uint32_t)c->tids[i],
			.synthesized = true,
			.comm = { comm, n > 0 ? (uint32_t)n : 0 },
		};

		if (n < 0)
			continue;	/* the thread is gone */
		if (ms_comm_pack(c->w, &rec) < 0)
			return -1;
		tell(c, MS_REC_COMM, &rec);
	}
	if (ms_maps_read(c->pid, synth_mmap, c) < 0) {
		if (ms_writer_broken_pipe(c->w))
			return -1;
		/* Samples are still worth having; later stages say what is unknown. */
		ms_problems_add(&c->problems, "maps-unreadable",
				"/proc/%d/maps could not be read: no mappings were synthesized",
				(int)c->pid);
	}
	return 0;
}

/* ---- the loop ---- */

static void write_lost(struct collector *c)
{
	struct ms_lost l = {
		.source = MS_LOST_COLLECTOR,
		.time = now_ns(),
		.count = c->dropped_pending,
	};

	if (ms_lost_pack(c->w, &l) == 0)
		c->dropped_pending = 0;
}

static void write_round(struct collector *c)
{
	if (ms_round_pack(c->w) < 0)
		c->output_failed = true;
}

static void count_kernel_lost(struct collector *c, const uint8_t *rec, uint32_t len)
{
	const struct perf_event_header *h = (const void *)rec;

	if (h->type == PERF_RECORD_THROTTLE)
		c->throttled++;
	if (h->type == PERF_RECORD_LOST && len >= sizeof(*h) + 16) {
		uint64_t lost;

		memcpy(&lost, rec + sizeof(*h) + 8, sizeof(lost));
		c->kernel_lost += lost;
	}
}

/*
 * Whether the output takes len more bytes now. While recording it never
 * blocks; after the end (c->final) nothing is lost by waiting for it.
 */
static bool room(struct collector *c, size_t len)
{
	if (ms_writer_room(c->w, len))
		return true;
	if (!c->final)
		return false;
	if (ms_writer_flush(c->w) < 0)
		return true;	/* the next write reports it */
	return ms_writer_room(c->w, len);
}

/* room() for a watch (perf/collect.h: struct ms_collect_out). */
static bool watch_room(void *ctx, size_t len)
{
	return room(ctx, len);
}

/*
 * What the trimmer decoded of a record, for the watches: a sample's or a
 * BPF record's verdict. The first that is not WRITE is the record's: the
 * watches after it are asked when it is asked again.
 */
static enum ms_watch_verdict watch_sample(struct collector *c)
{
	int k = c->trim->decoded;
	enum ms_watch_verdict v = MS_WATCH_WRITE;

	for (uint32_t i = 0; i < c->n_lookers && v == MS_WATCH_WRITE; i++) {
		const struct ms_collect_watch *w = c->lookers[i];

		/* A switch-out's sample is its first member (perf/decode.h). */
		if ((k == MS_DECODE_SAMPLE || k == MS_DECODE_SWITCH_OUT) && w->sample)
			v = w->sample(w->arg, &c->trim->d.u.sample, &c->watch_out);
		else if (k == MS_DECODE_BPF && w->bpf)
			v = w->bpf(w->arg, &c->trim->d.u.bpf.rec, &c->watch_out);
	}
	return v;
}

/* A mapping, comm, fork or exit that left its ring, for the watches. */
static void watch_record(struct collector *c)
{
	const struct ms_decoded *d = &c->trim->d;

	switch (c->trim->decoded) {
	case MS_DECODE_MMAP:
		tell(c, MS_REC_MMAP, &d->u.mmap);
		break;
	case MS_DECODE_COMM:
		tell(c, MS_REC_COMM, &d->u.comm);
		break;
	case MS_DECODE_FORK:
	case MS_DECODE_EXIT:
		tell(c, (uint32_t)c->trim->decoded, &d->u.task);
		break;
	default:
		break;
	}
}

/* The watches' tick(), each every its tick_ms (MS_COLLECT_TICK_MS when 0). */
static void watch_tick(struct collector *c)
{
	uint64_t now = now_ns(), next = UINT64_MAX;

	if (!c->ticking || now < c->next_tick_ns)
		return;
	for (uint32_t i = 0; i < c->n_lookers; i++) {
		const struct ms_collect_watch *w = c->lookers[i];
		uint32_t ms = w->tick_ms ? w->tick_ms : MS_COLLECT_TICK_MS;

		if (!w->tick)
			continue;
		if (now >= c->tick_due[i]) {
			/* from now, not from when it was due: a late tick makes no backlog */
			c->tick_due[i] = now + ms * 1000000ull;
			if (w->tick(w->arg, now, &c->watch_out) < 0)
				c->output_failed = true;
		}
		if (c->tick_due[i] < next)
			next = c->tick_due[i];
	}
	c->next_tick_ns = next;
}

static void drop(struct collector *c)
{
	c->dropped++;
	c->dropped_pending++;
	/* Formats once; later calls only count. */
	ms_problems_add(&c->problems, "records-dropped",
			"the output could not keep up and records were dropped; "
			"LOST records of source collector say when");
}

/*
 * One pass over every ring, up to what each had published when the pass
 * reached it. Returns the records copied.
 *
 * When the output cannot take a record, the ring keeps it (the kernel's
 * ring is the bounded buffer) until the ring is half full; past that the
 * oldest records are dropped and counted, so that the kernel keeps room
 * for new ones. A ROUND follows only a pass that drained every ring to its
 * snapshot: ms-decode relies on a ROUND meaning exactly that.
 */
static uint64_t drain_pass(struct collector *c)
{
	uint64_t copied = 0;
	bool complete = true;

	c->output_blocked = false;
	for (uint32_t i = 0; i < c->s.n_cpus; i++) {
		struct ms_ring *r = &c->s.rings[i];
		const uint8_t *rec;
		uint32_t len;
		int got;

		if (!r->map)
			continue;
		ms_ring_begin(r);
		while ((got = ms_ring_next(r, &rec, &len)) == 1) {
			struct ms_raw raw = { .cpu = (uint32_t)c->s.cpus[i] };
			enum ms_watch_verdict v;

			raw.len = len;
			raw.data = ms_trim(c->trim, raw.cpu, rec, &raw.len);
			len = raw.len;
			/* What a watch writes goes before the sample it was written for. */
			v = watch_sample(c);
			if (v == MS_WATCH_ERROR) {
				c->output_failed = true;
				return copied;
			}

			/* array, kind, cpu, bin header: at most 16 bytes around the data */
			if (v == MS_WATCH_WRITE && room(c, (size_t)len + 16)) {
				if (ms_raw_pack(c->w, &raw) < 0) {
					c->output_failed = true;
					return copied;
				}
				copied++;
			} else if (ms_ring_used(r) > r->size / 2) {
				drop(c);
			} else {
				ms_ring_unread(r);
				c->output_blocked = true;
				complete = false;
				break;
			}
			count_kernel_lost(c, rec, len);
			watch_record(c);
			ms_ring_commit(r);
		}
		if (got < 0) {
			ms_problems_add(&c->problems, "ring-corrupt",
					"the ring of cpu %d held a record with an impossible size; "
					"the rest of what it held was skipped", c->s.cpus[i]);
			ms_ring_commit(r);
		}
	}
	if (copied && complete) {
		if (room(c, 8))
			write_round(c);
		else
			drop(c);
	}
	if (c->dropped_pending && room(c, 64))
		write_lost(c);
	c->copied += copied;
	return copied;
}

/* Each change of duty is written, never dropped: it waits for room instead. */
static void write_duty(struct collector *c)
{
	if (!c->duty_waiting || !room(c, 64))
		return;
	if (ms_duty_pack(c->w, &c->duty) < 0)
		c->output_failed = true;
	c->duty_waiting = false;
}

/* Hold the recording to its budget: observe, decide, turn the events off or on. */
static void govern(struct collector *c)
{
	struct ms_duty d;

	/* (the events stay off once the duration ended) */
	if (!c->gov || c->duration_done)
		return;
	/* No new decision while one waits for the output: every change is in the stream. */
	if (ms_governor_step(c->gov, now_ns(), !c->duty_waiting, &d)) {
		c->duty = d;
		c->duty_waiting = true;
	}
	write_duty(c);
}

/*
 * Whether the budget is about to pause the events: then they go off before
 * the drain, so that the work on what the rings hold (here and in every
 * later stage) falls in the time they are off. Done while they sample, it
 * took the CPU from the target exactly when it was being sampled: with 16
 * busy threads on 2 CPUs the samples counted some 6 % too little CPU time.
 */
static bool events_due_off(const struct collector *c)
{
	return c->gov && !c->duration_done && c->gov->slicer.on &&
	       c->gov->slicer.duty_ppm < MS_DUTY_FULL && now_ns() >= c->gov->next_toggle_ns;
}

static void arm_timer(struct collector *c, uint64_t ns)
{
	struct itimerspec it = {
		.it_value = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) },
	};

	timerfd_settime(c->timer_fd, 0, &it, NULL);
}

/* Ask a launched target to end, and give it MS_COLLECT_GRACE_MS to do so. */
static void terminate_target(struct collector *c, int sig)
{
	/* (never kill(0, ...): that is our whole process group) */
	if (c->reaped || c->pid <= 0)
		return;
	if (c->terminating) {
		kill(c->pid, SIGKILL);
		return;
	}
	if (sig)
		kill(c->pid, sig);
	c->terminating = true;
	arm_timer(c, (uint64_t)MS_COLLECT_GRACE_MS * 1000000ull);
}

static void reap_target(struct collector *c)
{
	if (c->launched && !c->reaped && ms_child_reap(c->pid, true, &c->status) == 1) {
		c->reaped = true;
		c->stop = c->stop ? c->stop : STOP_EXIT;
	}
}

/*
 * Whether si is the same stop as the last signal taken, delivered twice:
 * a signal to the whole process group (the terminal, timeout, a service
 * manager) reaches ms-collect both directly and through the front command
 * that forwards what it gets. The same signal within a second, one copy
 * from the parent and one not, is one event, not the second signal that
 * kills the program at once.
 */
static bool echo(struct collector *c, const struct signalfd_siginfo *si)
{
	bool from_parent = (pid_t)si->ssi_pid == getppid() && si->ssi_code <= 0;
	struct timespec now;
	bool same;

	clock_gettime(CLOCK_MONOTONIC, &now);
	same = c->last_signo == si->ssi_signo && from_parent != c->last_from_parent &&
	       (now.tv_sec - c->last_at.tv_sec) * 1000000000ll +
	       (now.tv_nsec - c->last_at.tv_nsec) < 1000000000ll;
	if (same)
		return true;
	c->last_signo = si->ssi_signo;
	c->last_from_parent = from_parent;
	c->last_at = now;
	return false;
}

static void handle_signals(struct collector *c)
{
	struct signalfd_siginfo si;

	while (read(c->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap_target(c);
			continue;
		}
		if (echo(c, &si))
			continue;
		/* SIGINT, SIGTERM, SIGHUP */
		if (!c->launched) {
			c->stop = STOP_SIGNAL;
			continue;
		}
		/*
		 * A signal from the terminal reached the program too (same
		 * process group); one sent to ms-collect alone is passed on.
		 */
		terminate_target(c, si.ssi_code <= 0 ? (int)si.ssi_signo : 0);
		if (!c->stop)
			c->stop = STOP_SIGNAL;
	}
}

static void handle_timer(struct collector *c)
{
	uint64_t ticks;

	if (read(c->timer_fd, &ticks, sizeof(ticks)) != (ssize_t)sizeof(ticks))
		return;
	if (c->terminating) {
		/* The grace period is over. */
		if (c->pid > 0)
			kill(c->pid, SIGKILL);
		return;
	}
	c->duration_done = true;
	if (!c->launched) {
		c->stop = STOP_DURATION;
		return;
	}
	c->stop = STOP_DURATION;
	/*
	 * The recording ends here, before the program is ended: how it dies
	 * is not part of it, and a thread asleep now stays asleep in the
	 * capture (an off-CPU interval without an end), not woken by SIGTERM.
	 */
	ms_session_disable(&c->s);
	c->end_ns = now_ns();
	terminate_target(c, SIGTERM);
}

static int setup_poll(struct collector *c)
{
	c->n_pfds = PFD_EVENTS + c->s.n_events;
	c->pfds = calloc(c->n_pfds, sizeof(*c->pfds));
	if (!c->pfds)
		return ms_error("out of memory for %zu poll entries", c->n_pfds);
	c->pfds[PFD_SIGNAL] = (struct pollfd){ .fd = c->sig_fd, .events = POLLIN };
	c->pfds[PFD_TIMER] = (struct pollfd){ .fd = c->timer_fd, .events = POLLIN };
	c->pfds[PFD_PIDFD] = (struct pollfd){ .fd = c->pid_fd, .events = POLLIN };
	c->pfds[PFD_OUTPUT] = (struct pollfd){ .fd = -1, .events = POLLOUT };
	/*
	 * Every event fd, not only the ring owners: an owner whose thread
	 * ended reports POLLHUP for good while others still write its ring.
	 */
	for (size_t i = 0; i < c->s.n_events; i++)
		c->pfds[PFD_EVENTS + i] = (struct pollfd){ .fd = c->s.events[i].fd, .events = POLLIN };
	return 0;
}

/* Record until the target ends, a signal, --duration, or the output fails. */
/* Say at once when the rate is not being kept (perf/ratewatch.h). */
static void watch_rate(struct collector *c)
{
	struct ms_rate_counts n = {
		.records = c->copied, .kernel_lost = c->kernel_lost, .dropped = c->dropped,
		.throttled = c->throttled,
	};
	enum ms_rate_say say = ms_rate_watch_step(&c->watch, &n, now_ns(), c->stderr_tty);
	char words[256];

	if (say == MS_RATE_QUIET)
		return;
	ms_rate_watch_words(say, &n, words, sizeof(words));
	if (say == MS_RATE_LINE)
		/* rewritten in place: carriage return, then clear to the line's end */
		fprintf(stderr, "\r%s: %s\033[K", ms_progname(), words);
	else
		ms_warn("%s", words);
}

/* A status line on the terminal ends before anything else is said there. */
static void end_rate_line(struct collector *c)
{
	if (c->watch.line_shown)
		fputc('\n', stderr);
	c->watch.line_shown = false;
}

/*
 * How long the loop may sleep: POLL_MS, or less when the budget turns the
 * events off or on, or a watch's tick is due.
 */
static struct timespec sleep_for(const struct collector *c)
{
	uint64_t ns = POLL_MS * 1000000ull, now, due;

	if (c->ticking) {
		now = now_ns();
		due = c->next_tick_ns;
		ns = due <= now ? 0 : due - now < ns ? due - now : ns;
	}
	if (c->gov) {
		now = now_ns();
		due = ms_governor_deadline(c->gov);
		if (due <= now)
			ns = 0;
		else if (due - now < ns)
			ns = due - now;
	}
	return (struct timespec){ (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
}

static void record_loop(struct collector *c)
{
	/* A launched program that ended before the loop started. */
	reap_target(c);
	while (c->stop == STOP_NONE || (c->terminating && !c->reaped)) {
		struct timespec wait = sleep_for(c);
		int n;

		/* Wake when the output can take more, while records wait for it. */
		c->pfds[PFD_OUTPUT].fd = c->output_blocked ? c->out_fd : -1;
		n = ppoll(c->pfds, c->n_pfds, &wait, NULL);

		if (n < 0 && errno != EINTR) {
			ms_error_errno("poll");
			c->stop = STOP_ERROR;
			break;
		}
		if (n > 0) {
			if (c->pfds[PFD_SIGNAL].revents)
				handle_signals(c);
			if (c->pfds[PFD_TIMER].revents)
				handle_timer(c);
			if (c->pfds[PFD_PIDFD].fd >= 0 && c->pfds[PFD_PIDFD].revents) {
				c->pfds[PFD_PIDFD].fd = -1;
				if (!c->stop)
					c->stop = STOP_EXIT;
			}
			for (size_t i = PFD_EVENTS; i < c->n_pfds; i++)
				if (c->pfds[i].revents & (POLLHUP | POLLERR | POLLNVAL))
					c->pfds[i].fd = -1;
		}
		if (c->poll_alive && !c->stop && !ms_proc_alive(c->pid))
			c->stop = STOP_EXIT;
		if (events_due_off(c))
			govern(c);
		drain_pass(c);
		watch_tick(c);
		govern(c);
		watch_rate(c);
		if (c->output_failed || ms_writer_drain(c->w) < 0) {
			c->stop = STOP_OUTPUT;
			break;
		}
	}
	end_rate_line(c);
}

/* After the loop: stop the events and copy what the rings still hold. */
static void final_drain(struct collector *c)
{
	ms_session_disable(&c->s);
	c->final = true;
	for (int pass = 0; pass < 64; pass++)
		if (!drain_pass(c) || c->output_failed)
			break;
	/* A change of duty still waiting: now the output may block for it. */
	write_duty(c);
	/* What a watch kept for room goes out now. */
	for (uint32_t i = 0; i < c->n_lookers && !c->output_failed; i++)
		if (c->lookers[i]->finish && c->lookers[i]->finish(c->lookers[i]->arg, &c->watch_out) < 0)
			c->output_failed = true;
}

static int write_epilogue(struct collector *c)
{
	if (c->launched && c->reaped) {
		struct ms_target_exit te = {
			.pid = (uint32_t)c->pid,
			.wait_status = (uint32_t)c->status,
			.exit_code = c->exec_errno ? (uint32_t)ms_exec_failure_code(c->exec_errno)
						   : (uint32_t)ms_exit_code_of(c->status),
		};

		if (ms_target_exit_pack(c->w, &te) < 0)
			return -1;
	}
	if (c->dropped_pending)
		write_lost(c);
	if (c->o->bpf && c->o->bpf->failed) {
		uint64_t n = c->o->bpf->failed(c->o->bpf->arg);

		if (n)
			ms_problems_add(&c->problems, "bpf-output-failed",
					"the BPF sampler could not write %" PRIu64 " records "
					"(a full ring, or a CPU without its output event): their "
					"samples have no BPF record", n);
	}
	if (ms_problems_write(c->w, &c->problems) < 0 ||
	    (c->gov && info_number(c, "budget-used-ppm",
				   ms_governor_share(c->gov, now_ns())) < 0) ||
	    info_number(c, "end-time", c->end_ns ? c->end_ns : now_ns()) < 0)
		return -1;
	return ms_writer_trailer(c->w, true);
}

static void summary(struct collector *c)
{
	if (c->gov) {
		char used[32], budget[32], lowest[32];

		ms_format_ppm(used, sizeof(used), ms_governor_share(c->gov, now_ns()));
		ms_format_ppm(budget, sizeof(budget), c->gov->config.budget_ppm);
		ms_format_ppm(lowest, sizeof(lowest), c->gov->lowest_ppm);
		fprintf(stderr, "%s: budget: the recording used %s of one CPU (budget %s); ",
			ms_progname(), used, budget);
		if (c->gov->changes)
			fprintf(stderr, "sampled as little as %s of the time, %u change%s\n", lowest,
				c->gov->changes, c->gov->changes == 1 ? "" : "s");
		else
			fprintf(stderr, "sampled all the time\n");
	}
	if (c->dropped)
		ms_warn("%llu of %llu records dropped: the output could not keep up "
			"(counted in LOST records)",
			(unsigned long long)c->dropped,
			(unsigned long long)(c->dropped + c->copied));
	if (c->kernel_lost)
		ms_warn("the kernel lost %llu records because a ring was full; "
			"try a larger --mmap-pages or a lower -F",
			(unsigned long long)c->kernel_lost);
}

static int setup_signals(struct collector *c)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return ms_error_errno("cannot block signals");
	c->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (c->sig_fd < 0)
		return ms_error_errno("cannot create a signalfd");
	c->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->timer_fd < 0)
		return ms_error_errno("cannot create a timerfd");
	return 0;
}

static int open_target(struct collector *c)
{
	struct rlimit nofile;

	if (c->launched) {
		/*
		 * The stream may be on our stdout: the program writes to stderr
		 * then. On a file or --output-fd it keeps our stdout.
		 */
		if (ms_launch_start(&c->launch, c->o->argv,
				    c->out_fd == STDOUT_FILENO ? STDERR_FILENO : -1) < 0)
			return -1;
		c->pid = c->launch.pid;
		switch (ms_session_open_task(&c->s, c->pid)) {
		case 0:
			return 0;
		case 1:
			ms_error("pid %d, forked to run '%s', ended before its events were opened",
				 (int)c->pid, c->o->argv[0]);
			/* fall through */
		default:
			ms_launch_abort(&c->launch);
			c->pid = 0;
			return -1;
		}
	}
	/*
	 * One fd per thread and CPU: allow as many as we may (not when
	 * launching: the program would inherit the raised limit).
	 */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	c->pid = c->o->pid;
	if (c->pid == getpid()) {
		c->misused = true;
		return ms_error("-p %d: ms-collect cannot record itself", (int)c->pid);
	}
	c->pid_fd = ms_pidfd_open(c->pid);
	if (c->pid_fd == -2) {
		c->pid_fd = -1;
		c->poll_alive = true;
	} else if (c->pid_fd < 0) {
		if (errno == ESRCH)
			ms_error("-p %d: no such process", (int)c->pid);
		return -1;
	}
	return attach_threads(c);
}

/*
 * --off-cpu: sched:sched_switch's id and format from tracefs (mounted
 * first when it is not and we are root), for the session and the stream.
 */
static int load_switch_tracepoint(struct collector *c, struct ms_session_config *sc)
{
	char dir[256];
	bool mounted;

	c->refused = true;
	if (ms_tracefs_find(dir, sizeof(dir), &mounted) < 0)
		return -1;
	if (mounted)
		fprintf(stderr, "%s: mounted tracefs at %s to find the sched:sched_switch "
			"tracepoint (--off-cpu)\n", ms_progname(), dir);
	c->switch_tp = malloc(sizeof(*c->switch_tp));
	if (!c->switch_tp)
		return ms_error("out of memory for a tracepoint format");
	if (ms_tracepoint_load(dir, "sched", "sched_switch", c->switch_tp) < 0)
		return -1;
	/* Why a thread left its CPU is read from it (records.h: ms_off_cpu_cause_of_state). */
	if (ms_tracepoint_field(&c->switch_tp->tp, "prev_state") < 0)
		return ms_error("%s has no field prev_state: this kernel's sched_switch does not "
				"say why a thread left its CPU, which --off-cpu records",
				c->switch_tp->path);
	c->refused = false;
	sc->off_cpu = true;
	sc->switch_config = c->switch_tp->tp.config;
	sc->switch_stack_size = c->o->off_cpu_stack_size;
	return 0;
}

/* --budget with --off-cpu pauses the sampler only: see collect.h. */
static int toggle_samplers(void *arg, bool on)
{
	return ms_session_samplers_enable(arg, on);
}

static void collector_release(struct collector *c)
{
	if (c->launched && c->pid > 0 && !c->reaped) {
		/* Whatever went wrong, no process is left behind. */
		if (c->launch.gate_fd >= 0)
			ms_launch_abort(&c->launch);
		else
			ms_child_terminate(c->pid, SIGTERM, 1000, &c->status);
		c->reaped = true;
	}
	ms_session_release(&c->s);
	if (c->sig_fd >= 0)
		close(c->sig_fd);
	if (c->timer_fd >= 0)
		close(c->timer_fd);
	if (c->pid_fd >= 0)
		close(c->pid_fd);
	free(c->pfds);
	free(c->tids);
	free(c->attr);
	free(c->switch_tp);
	free(c->gov);
	ms_trimmer_free(c->trim);
}

int ms_collect_run(const struct ms_collect_opts *o)
{
	struct collector c = {
		.o = o,
		.sig_fd = -1,
		.timer_fd = -1,
		.pid_fd = -1,
		.out_fd = -1,
		.launch = { .pid = -1, .gate_fd = -1, .err_fd = -1 },
		.launched = !o->pid,
	};
	struct ms_session_config sc = {
		.freq = o->freq,
		.period = o->period,
		.stack_size = o->stack_size,
		.data_pages = o->data_pages ? o->data_pages :
			      o->stack_size > 16384 ? MS_COLLECT_PAGES_BIG_STACK :
						      MS_COLLECT_PAGES_DEFAULT,
		.data_pages_min = o->data_pages ? 0 : MS_COLLECT_PAGES_DEFAULT,
		.enable_on_exec = !o->pid,
		.bpf = o->bpf != NULL,
		.bpf_prog_fd = o->bpf ? o->bpf->prog_fd : -1,
		.bpf_outputs_fd = o->bpf ? o->bpf->outputs_fd : -1,
	};
	int code = MS_EXIT_ERROR;
	bool complete = false;

	ms_problems_init(&c.problems, STAGE);
	{
		char words[400];

		/* Before anything starts: a rate the kernel cannot keep is said at once. */
		if (ms_rate_precheck(o->freq, ms_perf_max_sample_rate(), words, sizeof(words)))
			ms_warn("%s", words);
	}
	c.stderr_tty = isatty(STDERR_FILENO);
	c.event = sc.event = ms_event_lookup(o->event);
	if (!c.event) {
		ms_error("unknown event '%s'; known events: %s", o->event, ms_event_names());
		return MS_EXIT_USAGE;
	}
	c.attr = malloc(sizeof(*c.attr));
	c.trim = ms_trimmer_new();
	if (c.trim && o->n_watches) {
		c.lookers = o->watches;
		c.n_lookers = o->n_watches < MS_COLLECT_WATCHES_MAX ? o->n_watches
								    : MS_COLLECT_WATCHES_MAX;
		c.trim->decode_all = true;
		for (uint32_t i = 0; i < c.n_lookers; i++)
			c.ticking |= c.lookers[i]->tick != NULL;
	}
	if (!c.attr || !c.trim) {
		free(c.attr);
		ms_trimmer_free(c.trim);
		ms_error("out of memory");
		return MS_EXIT_ERROR;
	}
	/* Before the target starts: a pid that cannot be measured is a usage error. */
	if (o->budget_ppm) {
		c.gov = malloc(sizeof(*c.gov));
		code = !c.gov ? ms_error("out of memory"), MS_EXIT_ERROR :
		       ms_governor_init(c.gov, o->budget_ppm, o->freq,
					(uint32_t)sysconf(_SC_NPROCESSORS_ONLN), o->budget_pids,
					o->n_budget_pids, now_ns()) < 0 ? MS_EXIT_USAGE : MS_EXIT_OK;
		if (code != MS_EXIT_OK) {
			free(c.gov);
			free(c.attr);
			ms_trimmer_free(c.trim);
			return code;
		}
		code = MS_EXIT_ERROR;
	}
	if (c.gov && o->off_cpu) {
		c.gov->toggle = toggle_samplers;
		c.gov->toggle_arg = &c.s;
	}
	c.watch_out = (struct ms_collect_out){
		.problems = &c.problems, .room = watch_room, .ctx = &c,
	};
	if (setup_signals(&c) < 0 || output_open(&c) < 0 ||
	    (o->off_cpu && load_switch_tracepoint(&c, &sc) < 0) ||
	    ms_session_init(&c.s, &sc) < 0 || open_target(&c) < 0) {
		code = c.misused ? MS_EXIT_USAGE : c.refused || c.s.refused ? MS_EXIT_SYSTEM :
		       MS_EXIT_ERROR;
		goto out;
	}
	c.watch_out.w = c.w;
	if (c.s.exclude_kernel)
		ms_problems_add(&c.problems, "kernel-samples-excluded",
				"kernel.perf_event_paranoid refused kernel samples; samples "
				"that landed in the kernel were not recorded");
	if (write_preamble(&c) < 0)
		goto out;
	if (!c.launched && write_synthesized(&c) < 0)
		goto out;
	if (setup_poll(&c) < 0)
		goto out;
	if (c.launched) {
		int err = ms_launch_go(&c.launch);

		if (err < 0)
			goto out;
		if (err > 0) {
			ms_error("cannot run '%s': %s", o->argv[0], strerror(err));
			/* Said in the stream too: a front command then keeps its old output. */
			ms_problems_add(&c.problems, "target-not-started", "cannot run '%s': %s",
					o->argv[0], strerror(err));
			c.exec_errno = err;
			ms_child_reap(c.pid, false, &c.status);
			c.reaped = true;
			c.stop = STOP_EXIT;
		}
	}
	if (o->duration_ns && !c.exec_errno)
		arm_timer(&c, o->duration_ns);
	ms_rate_watch_start(&c.watch, now_ns());
	if (!c.exec_errno)
		record_loop(&c);
	if (c.launched && !c.reaped) {
		/* The output failed or poll did: end the program before leaving. */
		ms_child_terminate(c.pid, SIGTERM, 1000, &c.status);
		c.reaped = true;
	}
	if (c.stop != STOP_OUTPUT)
		final_drain(&c);
	if (c.stop == STOP_OUTPUT || c.output_failed) {
		code = ms_writer_broken_pipe(c.w) ? MS_EXIT_PIPE : MS_EXIT_ERROR;
		goto out;
	}
	if (write_epilogue(&c) < 0) {
		code = ms_writer_broken_pipe(c.w) ? MS_EXIT_PIPE : MS_EXIT_ERROR;
		goto out;
	}
	/* A file for a program that never ran is not published: an old one is kept. */
	complete = !(c.exec_errno && c.publishing);
	if (c.stop == STOP_ERROR)
		code = MS_EXIT_ERROR;
	else if (!c.launched || c.duration_done)
		code = MS_EXIT_OK;
	else if (c.exec_errno)
		code = ms_exec_failure_code(c.exec_errno);
	else
		code = ms_exit_code_of(c.status);
out:
	summary(&c);
	collector_release(&c);
	if (c.w || c.publishing) {
		if (output_close(&c, complete) < 0 && complete)
			code = MS_EXIT_ERROR;
	} else if (c.out_flags >= 0) {
		fcntl(c.out_fd, F_SETFL, c.out_flags);
	}
	return code;
}

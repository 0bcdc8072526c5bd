#include "perf/session.h"
#include "perf/procfs.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const struct ms_event_spec events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
};

const struct ms_event_spec *ms_event_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(events[i].name, name))
			return &events[i];
	return NULL;
}

const char *ms_event_names(void)
{
	return "cpu-clock, task-clock, cycles, cpu-cycles, instructions, cache-references, "
	       "cache-misses, branches, branch-instructions, branch-misses, bus-cycles, "
	       "ref-cycles, stalled-cycles-frontend, stalled-cycles-backend";
}

/* A small integer from a /proc/sys file, or -1. */
static long read_sysctl(const char *path)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* Whether this process may lock memory at will (CAP_IPC_LOCK in CapEff). */
static bool has_ipc_lock(void)
{
	char line[256];
	unsigned long long caps;
	bool yes = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			yes = caps & (1ull << 14);
			break;
		}
	fclose(f);
	return yes;
}

/*
 * The pages this user may lock for n_cpus rings, as perf_mmap() counts
 * them: kernel.perf_event_mlock_kb per online CPU, then RLIMIT_MEMLOCK;
 * no limit with CAP_IPC_LOCK or kernel.perf_event_paranoid -1. Unknown
 * (unreadable) is no limit: the mapping then says what failed. Rings the
 * user holds in other processes are not counted.
 */
static uint64_t lockable_pages(uint32_t n_cpus)
{
	long kb = read_sysctl("/proc/sys/kernel/perf_event_mlock_kb");
	long page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;

	if (read_sysctl("/proc/sys/kernel/perf_event_paranoid") == -1 || has_ipc_lock() ||
	    kb < 0 || page <= 0 || getrlimit(RLIMIT_MEMLOCK, &rl) < 0 ||
	    rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)kb * 1024 / (uint64_t)page * n_cpus + rl.rlim_cur / (uint64_t)page;
}

long ms_perf_max_sample_rate(void)
{
	return read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate");
}

int ms_session_init(struct ms_session *s, const struct ms_session_config *c)
{
	struct perf_event_attr *a = &s->attr;
	int n;

	memset(s, 0, sizeof(*s));
	s->config = *c;
	if (c->freq) {
		long max = ms_perf_max_sample_rate();

		if (max > 0 && c->freq > (uint64_t)max) {
			s->refused = true;
			return ms_error("a frequency of %llu Hz is above this kernel's limit of %ld "
					"(kernel.perf_event_max_sample_rate); use -F %ld or less",
					(unsigned long long)c->freq, max, max);
		}
	}
	n = ms_cpus_online(s->cpus, MS_CPUS_MAX);
	if (n <= 0)
		return -1;
	s->n_cpus = (uint32_t)n;
	s->rings = calloc(s->n_cpus, sizeof(*s->rings));
	s->ring_owner = malloc(s->n_cpus * sizeof(*s->ring_owner));
	s->bounce = malloc(MS_RING_RECORD_MAX);
	if (!s->rings || !s->ring_owner || !s->bounce) {
		ms_session_release(s);
		return ms_error("out of memory for %u rings", s->n_cpus);
	}
	for (uint32_t i = 0; i < s->n_cpus; i++)
		s->ring_owner[i] = -1;
	/* A default ring an unprivileged user may not lock would fail the recording. */
	if (c->data_pages_min && c->data_pages_min < c->data_pages) {
		uint64_t lockable = lockable_pages(s->n_cpus);
		uint32_t fit = ms_ring_pages_fit(c->data_pages, c->data_pages_min, s->n_cpus,
						 lockable);
		long page = sysconf(_SC_PAGESIZE);

		/* (When not even the floor fits, the mapping says so.) */
		if (fit < c->data_pages && (uint64_t)s->n_cpus * (fit + 1u) <= lockable)
			ms_warn("rings of %ld KiB per CPU instead of %ld KiB: this user may lock no "
				"more for %u CPUs, and more records may be lost under load; raise "
				"kernel.perf_event_mlock_kb or ulimit -l, or give --mmap-pages",
				(long)fit * page / 1024, (long)c->data_pages * page / 1024, s->n_cpus);
		s->config.data_pages = fit;
	}

	a->size = sizeof(*a);
	a->type = c->event->type;
	a->config = c->event->config;
	if (c->freq) {
		a->freq = 1;
		a->sample_freq = c->freq;
	} else {
		a->sample_period = c->period;
	}
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_CALLCHAIN;
	if (c->stack_size) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = MS_REGS_USER_MASK;
		a->sample_stack_user = c->stack_size;
	}
	a->disabled = c->enable_on_exec;
	a->enable_on_exec = c->enable_on_exec;
	a->inherit = 1;
	a->exclude_kernel = 0;
	a->exclude_hv = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->build_id = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* Wake the reader when a quarter of the ring is full. */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((uint64_t)s->config.data_pages *
					 (uint64_t)sysconf(_SC_PAGESIZE) / 4);
	s->build_id = true;
	s->clock_monotonic = true;
	return 0;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * The first open decides what this kernel and these permissions allow:
 * kernel samples, build ids in mmap2, the monotonic clock.
 */
static int open_probe(struct ms_session *s, pid_t tid, int cpu)
{
	struct perf_event_attr *a = &s->attr;

	for (;;) {
		int fd = perf_event_open(a, tid, cpu);

		if (fd >= 0) {
			s->attr_probed = true;
			return fd;
		}
		if ((errno == EACCES || errno == EPERM) && !a->exclude_kernel) {
			a->exclude_kernel = 1;
			s->exclude_kernel = true;
			continue;
		}
		if (errno == EINVAL && a->build_id) {
			a->build_id = 0;
			s->build_id = false;
			continue;
		}
		if (errno == EINVAL && a->use_clockid) {
			a->use_clockid = 0;
			s->clock_monotonic = false;
			continue;
		}
		return -1;
	}
}

static int open_failed(struct ms_session *s, pid_t tid, int cpu)
{
	int err = errno;
	const char *name = s->config.event->name;

	s->refused = true;
	if (s->config.event->type == PERF_TYPE_HARDWARE &&
	    (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL))
		return ms_error("event '%s' needs a hardware performance counter and this "
				"machine has none (perf_event_open: %s); use -e cpu-clock "
				"or -e task-clock", name, strerror(err));
	if (err == EACCES || err == EPERM)
		return ms_error("not allowed to profile pid %d (perf_event_open: %s): run as "
				"root, or profile a process of your own with "
				"kernel.perf_event_paranoid at 2 or lower (it is %ld; see "
				"/proc/sys/kernel/perf_event_paranoid)", (int)tid, strerror(err),
				read_sysctl("/proc/sys/kernel/perf_event_paranoid"));
	if (err == EMFILE || err == ENFILE)
		return ms_error("out of file descriptors after %zu events (one per thread "
				"and CPU); raise the limit with ulimit -n", s->n_events);
	if (err == ENOENT || err == EOPNOTSUPP)
		return ms_error("event '%s' is not supported by this kernel (perf_event_open: %s)",
				name, strerror(err));
	return ms_error("cannot open event '%s' for pid %d on cpu %d (perf_event_open: %s)",
			name, (int)tid, cpu, strerror(err));
}

/* The switch event's attr: the sampler's, once its first open decided the fallbacks. */
static void make_switch_attr(struct ms_session *s)
{
	struct perf_event_attr *a = &s->switch_attr;

	*a = s->attr;
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = s->config.switch_config;
	a->freq = 0;
	a->sample_period = 1;
	a->sample_type |= PERF_SAMPLE_RAW;
	if (a->sample_type & PERF_SAMPLE_STACK_USER)
		a->sample_stack_user = s->config.switch_stack_size;
	/* The sampler writes the side-band records once. */
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = a->build_id = 0;
	a->context_switch = 1;
	/* The ring is the sampler's: its owner's watermark wakes the reader. */
	a->watermark = 0;
	a->wakeup_watermark = 0;
}

static int switch_open_failed(struct ms_session *s, pid_t tid, int cpu)
{
	int err = errno;

	s->refused = true;
	if (err == EACCES || err == EPERM)
		return ms_error("cannot open the sched:sched_switch tracepoint for --off-cpu "
				"(perf_event_open: %s): a tracepoint's raw data needs root or "
				"CAP_PERFMON, or kernel.perf_event_paranoid -1 (it is %ld); run as "
				"root, or record without --off-cpu", strerror(err),
				read_sysctl("/proc/sys/kernel/perf_event_paranoid"));
	if (err == EMFILE || err == ENFILE)
		return ms_error("out of file descriptors after %zu events (two per thread and CPU "
				"with --off-cpu); raise the limit with ulimit -n", s->n_events);
	if (err == ENOENT || err == ENODEV || err == EOPNOTSUPP || err == EINVAL)
		return ms_error("this kernel refused the sched:sched_switch tracepoint (id %llu) "
				"as a perf event for pid %d on cpu %d (perf_event_open: %s): it "
				"needs CONFIG_PERF_EVENTS with tracepoints; record without --off-cpu",
				(unsigned long long)s->config.switch_config, (int)tid, cpu,
				strerror(err));
	return ms_error("cannot open the sched:sched_switch tracepoint for pid %d on cpu %d "
			"(perf_event_open: %s)", (int)tid, cpu, strerror(err));
}

/* The BPF output event's attr: see session.h. */
static void make_output_attr(struct ms_session *s)
{
	struct perf_event_attr *a = &s->output_attr;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	a->sample_id_all = 1;
	/* SET_OUTPUT needs the ring's clock */
	a->use_clockid = s->attr.use_clockid;
	a->clockid = s->attr.clockid;
}

static int bpf_map_set(int map_fd, uint32_t key, uint32_t value)
{
	union bpf_attr b;

	memset(&b, 0, sizeof(b));
	b.map_fd = (uint32_t)map_fd;
	b.key = (uint64_t)(uintptr_t)&key;
	b.value = (uint64_t)(uintptr_t)&value;
	b.flags = BPF_ANY;
	return (int)syscall(SYS_bpf, BPF_MAP_UPDATE_ELEM, &b, sizeof(b));
}

static int push_event(struct ms_session *s, const struct ms_session_event *e);

/*
 * The BPF output event of CPU index i, into its ring (just made) and the
 * program's map. 0, or -1 after a message.
 */
static int open_output(struct ms_session *s, uint32_t i)
{
	struct ms_session_event e = { .fd = -1, .cpu_index = i, .tid = -1, .is_output = true };
	int cpu = s->cpus[i];

	if (!s->output_attr.size)
		make_output_attr(s);
	e.fd = perf_event_open(&s->output_attr, -1, cpu);
	if (e.fd < 0) {
		s->refused = errno == EACCES || errno == EPERM;
		return ms_error_errno("--bpf-sampler: cannot open the BPF output event of cpu %d "
				      "(perf_event_open%s)", cpu, s->refused ?
				      "; a CPU-wide event needs root or CAP_PERFMON" : "");
	}
	if (ioctl(e.fd, PERF_EVENT_IOC_ID, &e.id) < 0) {
		ms_error_errno("--bpf-sampler: cannot read the id of the BPF output event of cpu %d",
			       cpu);
		goto fail;
	}
	if (ioctl(e.fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring_owner[i]) < 0) {
		ms_error_errno("--bpf-sampler: cannot direct the BPF output event of cpu %d into "
			       "the ring of that cpu (PERF_EVENT_IOC_SET_OUTPUT)", cpu);
		goto fail;
	}
	if (bpf_map_set(s->config.bpf_outputs_fd, (uint32_t)cpu, (uint32_t)e.fd) < 0) {
		ms_error_errno("--bpf-sampler: cannot store the BPF output event of cpu %d in the "
			       "program's map 'outputs' (bpf BPF_MAP_UPDATE_ELEM)", cpu);
		goto fail;
	}
	if (push_event(s, &e) < 0)
		goto fail;
	return 0;
fail:
	close(e.fd);
	return -1;
}

/* Attach the BPF sampler program to a sampler event: 0, or -1 after a message. */
static int attach_program(struct ms_session *s, int fd, pid_t tid, int cpu)
{
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, s->config.bpf_prog_fd) == 0)
		return 0;
	s->refused = errno == EACCES || errno == EPERM;
	return ms_error_errno("--bpf-sampler: cannot attach the BPF program to the event of pid "
			      "%d on cpu %d (PERF_EVENT_IOC_SET_BPF)%s", (int)tid, cpu,
			      s->refused ? "; it needs root, or CAP_BPF with CAP_PERFMON" : "");
}

static int push_event(struct ms_session *s, const struct ms_session_event *e)
{
	if (s->n_events == s->alloc_events) {
		size_t grow = s->alloc_events ? s->alloc_events * 2 : 64;
		struct ms_session_event *p = realloc(s->events, grow * sizeof(*p));

		if (!p)
			return ms_error("out of memory for %zu events", grow);
		s->events = p;
		s->alloc_events = grow;
	}
	s->events[s->n_events++] = *e;
	return 0;
}

/* Close the events from index first on, and the rings they owned. */
static void close_from(struct ms_session *s, size_t first)
{
	while (s->n_events > first) {
		struct ms_session_event *e = &s->events[--s->n_events];

		if (s->ring_owner[e->cpu_index] == e->fd) {
			ms_ring_release(&s->rings[e->cpu_index]);
			s->ring_owner[e->cpu_index] = -1;
		}
		close(e->fd);
	}
}

/*
 * The switch event of task tid on CPU index i, into the ring its sampler
 * event owns or writes to. 0; 1 when the task is gone; -1 after a message.
 */
static int open_switch(struct ms_session *s, pid_t tid, uint32_t i)
{
	struct ms_session_event e = { .fd = -1, .cpu_index = i, .tid = tid, .is_switch = true };
	int cpu = s->cpus[i];

	if (s->exclude_kernel) {
		s->refused = true;
		return ms_error("--off-cpu needs kernel events, and kernel.perf_event_paranoid "
				"(%ld) refused them: the sched:sched_switch tracepoint is one; run "
				"as root, or record without --off-cpu",
				read_sysctl("/proc/sys/kernel/perf_event_paranoid"));
	}
	if (!s->switch_attr.type)
		make_switch_attr(s);
	e.fd = perf_event_open(&s->switch_attr, tid, cpu);
	if (e.fd < 0)
		return errno == ESRCH ? 1 : switch_open_failed(s, tid, cpu);
	if (ioctl(e.fd, PERF_EVENT_IOC_ID, &e.id) < 0) {
		ms_error_errno("cannot read the id of the sched_switch event for pid %d on cpu %d",
			       (int)tid, cpu);
		close(e.fd);
		return -1;
	}
	if (ioctl(e.fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring_owner[i]) < 0) {
		ms_error_errno("cannot direct the sched_switch event for pid %d into the ring of "
			       "cpu %d", (int)tid, cpu);
		close(e.fd);
		return -1;
	}
	if (push_event(s, &e) < 0) {
		close(e.fd);
		return -1;
	}
	return 0;
}

int ms_session_open_task(struct ms_session *s, pid_t tid)
{
	size_t first = s->n_events;

	s->refused = false;
	for (uint32_t i = 0; i < s->n_cpus; i++) {
		struct ms_session_event e = { .fd = -1, .cpu_index = i, .tid = tid };
		int cpu = s->cpus[i];

		e.fd = s->attr_probed ? perf_event_open(&s->attr, tid, cpu) : open_probe(s, tid, cpu);
		if (e.fd < 0) {
			if (errno == ESRCH)
				goto gone;
			open_failed(s, tid, cpu);
			goto fail;
		}
		if (ioctl(e.fd, PERF_EVENT_IOC_ID, &e.id) < 0) {
			ms_error_errno("cannot read the id of the event for pid %d on cpu %d",
				       (int)tid, cpu);
			close(e.fd);
			goto fail;
		}
		if (s->ring_owner[i] < 0) {
			if (ms_ring_mmap(&s->rings[i], e.fd, s->config.data_pages, s->bounce, cpu) < 0) {
				s->refused = true;
				close(e.fd);
				goto fail;
			}
			s->ring_owner[i] = e.fd;
			/* (close_from() closes it with the ring's owner on failure) */
			if (s->config.bpf && open_output(s, i) < 0) {
				close(e.fd);
				ms_ring_release(&s->rings[i]);
				s->ring_owner[i] = -1;
				goto fail;
			}
		} else if (ioctl(e.fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring_owner[i]) < 0) {
			ms_error_errno("cannot direct the event for pid %d into the ring of cpu %d",
				       (int)tid, cpu);
			close(e.fd);
			goto fail;
		}
		/* before the event runs on its own: enable_on_exec, or the caller's gate */
		if (s->config.bpf && attach_program(s, e.fd, tid, cpu) < 0) {
			close(e.fd);
			goto fail;
		}
		if (push_event(s, &e) < 0) {
			close(e.fd);
			goto fail;
		}
		if (s->config.off_cpu) {
			int r = open_switch(s, tid, i);

			if (r > 0)
				goto gone;
			if (r < 0)
				goto fail;
		}
	}
	if (s->exclude_kernel && first == 0)
		ms_warn("kernel samples refused (kernel.perf_event_paranoid is %ld): recording "
			"user space only; samples that land in the kernel are lost",
			read_sysctl("/proc/sys/kernel/perf_event_paranoid"));
	return 0;

gone:
	close_from(s, first);
	return 1;
fail:
	close_from(s, first);
	return -1;
}

void ms_session_disable(struct ms_session *s)
{
	for (size_t i = 0; i < s->n_events; i++)
		ioctl(s->events[i].fd, PERF_EVENT_IOC_DISABLE, 0);
}

enum event_kind { KIND_SAMPLER, KIND_SWITCH, KIND_OUTPUT };

static enum event_kind kind_of(const struct ms_session_event *e)
{
	return e->is_output ? KIND_OUTPUT : e->is_switch ? KIND_SWITCH : KIND_SAMPLER;
}

static int attr_record(const struct ms_session *s, enum event_kind kind, uint32_t part,
		       struct ms_attr *a)
{
	const struct perf_event_attr *pa = kind == KIND_SWITCH ? &s->switch_attr :
					   kind == KIND_OUTPUT ? &s->output_attr : &s->attr;
	size_t skip = (size_t)part * MS_ATTR_IDS_MAX, n = 0, i;

	if ((kind == KIND_SWITCH && !s->config.off_cpu) || (kind == KIND_OUTPUT && !s->config.bpf))
		return 0;
	/* Part 0 always (an ATTR with no ids yet); later parts while ids are left. */
	for (i = 0; i < s->n_events; i++)
		n += kind_of(&s->events[i]) == kind;
	if (part && skip >= n)
		return 0;
	memset(a, 0, sizeof(*a));
	a->type = pa->type;
	a->config = pa->config;
	a->sample_type = pa->sample_type;
	a->read_format = pa->read_format;
	a->sample_regs_user = pa->sample_regs_user;
	a->sample_stack_user = pa->sample_stack_user;
	a->flags = (pa->sample_id_all ? MS_ATTR_SAMPLE_ID_ALL : 0) |
		   (pa->freq ? MS_ATTR_FREQ : 0) |
		   (pa->exclude_kernel ? MS_ATTR_EXCLUDE_KERNEL : 0) |
		   (pa->build_id ? MS_ATTR_BUILD_ID : 0);
	for (i = 0; i < s->n_events && a->n_ids < MS_ATTR_IDS_MAX; i++) {
		if (kind_of(&s->events[i]) != kind)
			continue;
		if (skip) {
			skip--;
			continue;
		}
		a->ids[a->n_ids++] = s->events[i].id;
	}
	return 1;
}

int ms_session_attr_record(const struct ms_session *s, bool switches, uint32_t part,
			   struct ms_attr *a)
{
	return attr_record(s, switches ? KIND_SWITCH : KIND_SAMPLER, part, a);
}

int ms_session_output_attr_record(const struct ms_session *s, uint32_t part, struct ms_attr *a)
{
	return attr_record(s, KIND_OUTPUT, part, a);
}

int ms_session_samplers_enable(struct ms_session *s, bool on)
{
	int ret = 0;

	/* On a parent event, the ioctl reaches the copies its task's children inherited. */
	for (size_t i = 0; i < s->n_events; i++)
		if (kind_of(&s->events[i]) == KIND_SAMPLER &&
		    ioctl(s->events[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
			ret = -1;
	return ret;
}

void ms_session_release(struct ms_session *s)
{
	for (size_t i = 0; i < s->n_events; i++)
		close(s->events[i].fd);
	if (s->rings)
		for (uint32_t i = 0; i < s->n_cpus; i++)
			ms_ring_release(&s->rings[i]);
	free(s->rings);
	free(s->ring_owner);
	free(s->bounce);
	free(s->events);
	s->rings = NULL;
	s->ring_owner = NULL;
	s->bounce = NULL;
	s->events = NULL;
	s->n_events = s->alloc_events = 0;
}

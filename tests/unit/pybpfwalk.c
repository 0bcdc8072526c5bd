/*
 * pybpfwalk [OPTIONS] -- PYTHON ARGS...: the BPF walker on the real kernel,
 * for tests/0770-python-walker.bats. As root it loads the sampler program
 * (perf/bpfload.h), starts PYTHON ARGS behind a gate with one sampling
 * event per CPU on it (inherit, the program attached, a BPF output event
 * per CPU into the same ring: perf/session.h), fills py_layouts once the
 * interpreter is mapped (python/bpflayout.h) and py_threads every 20 ms
 * from the userspace walker's thread list, and reads the rings. Each
 * record is checked (perf/bpfrecord.h) and each frame's code named
 * through the userspace walker (python/walk.h) while the program runs.
 *
 * Options: --seconds S (sampling after the fixture's "ready", default 2),
 * --freq F (default 999), --no-threads (py_threads left empty: py_find
 * finds every thread), --switches (sample each context switch instead of
 * cpu-clock, so a sleeping thread is seen), --no-layout (py_layouts left
 * empty: the program must write nothing), --shuffle-threads (py_threads
 * gives each thread the next thread's state: stale entries the walker must
 * refuse, finding the thread's own through py_find), --find-bound N
 * (py_find's bound: the layout's find_bound).
 *
 * The process walked is PYTHON's, or the first child of a launcher such as
 * `unshare -p -f --kill-child` (a target in its own pid namespace).
 *
 * Output: "target PID" (in the tool's namespace), "layout ...", the fixture's lines as "fixture: LINE", then one
 * line per record taken after "ready":
 *   rec TID CPU STATUS GIL N STACK
 * STACK the frames outermost first, "func@file:line" joined by ';' ('!'
 * after a frame marked ENTRY), "-" for none; then per thread
 * "thread TID samples S records R", and
 *   sizes MIN MAX records N unresolved U stale S
 *   prog verified_insns V run_cnt C run_time_ns T ns_per_run A
 * (the runs and their time counted from "ready" on).
 * Exits 0 when everything ran and every record was good; 1 otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "bpf/pywindow.h"
#include "bpf/sampler.h"
#include "perf/bpfload.h"
#include "perf/bpfrecord.h"
#include "perf/session.h"
#include "python/bpflayout.h"
#include "python/layout.h"
#include "python/pymem.h"
#include "python/walk.h"

#define TIDS_MAX 256

struct tidcount {
	uint32_t tid;
	uint64_t samples, records;
};

struct tool {
	struct ms_session s;
	struct ms_bpf_sampler *b;
	pid_t child;
	pid_t target;			/* the process walked: child, or its first child */
	struct ms_py_layout *layout;
	struct ms_py_walker *w;
	uint64_t ready_ns;		/* CLOCK_MONOTONIC when "ready" was read; 0 before */
	struct tidcount tids[TIDS_MAX];
	unsigned n_tids;
	uint64_t records, unresolved, stale, bad;
	uint32_t state_tid[TIDS_MAX];
	uint64_t state[TIDS_MAX];
	unsigned n_states;
	uint32_t size_min, size_max;
	char stack[1 << 16];
};

static const char *status_name(uint32_t st)
{
	static const char *const names[] = {
		"complete", "too-deep", "unreadable", "no-thread", "ambiguous", "search-bound",
		"no-namespace",
	};
	return st < sizeof(names) / sizeof(names[0]) ? names[st] : "?";
}

static const char *gil_name(uint32_t g)
{
	return g == MS_BPF_PY_GIL_HELD ? "held" : g == MS_BPF_PY_GIL_RELEASED ? "released" :
	       g == MS_BPF_PY_GIL_UNKNOWN ? "unknown" : "?";
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct tidcount *tid_of(struct tool *t, uint32_t tid)
{
	for (unsigned i = 0; i < t->n_tids; i++)
		if (t->tids[i].tid == tid)
			return &t->tids[i];
	if (t->n_tids == TIDS_MAX)
		return NULL;
	t->tids[t->n_tids] = (struct tidcount){ .tid = tid };
	return &t->tids[t->n_tids++];
}

/* The payload of a Python record, checked: the head and its frames. */
static int python_record(struct tool *t, const struct ms_bpf_record *r)
{
	struct ms_bpf_py_head head;
	char err[256];
	size_t used = 0;

	if (r->h.kind != MS_BPF_KIND_PYTHON || r->payload_len < sizeof(head)) {
		printf("bad record: kind %u, %u bytes of payload\n", r->h.kind, r->payload_len);
		return -1;
	}
	memcpy(&head, r->payload, sizeof(head));
	if (head.status >= MS_BPF_PY_STATUS_COUNT || head.gil >= MS_BPF_PY_GIL_COUNT ||
	    head.n_frames > MS_BPF_PY_FRAMES_MAX ||
	    r->payload_len != sizeof(head) + head.n_frames * sizeof(struct ms_bpf_py_frame) ||
	    (head.n_frames && head.status > MS_BPF_PY_UNREADABLE)) {
		printf("bad record: status %u gil %u %u frames in %u bytes\n", head.status, head.gil,
		       head.n_frames, r->payload_len);
		return -1;
	}
	if (r->h.size < t->size_min || !t->size_min)
		t->size_min = r->h.size;
	if (r->h.size > t->size_max)
		t->size_max = r->h.size;
	t->stack[0] = '\0';
	for (uint32_t i = head.n_frames; i-- > 0;) {
		struct ms_bpf_py_frame f;
		const struct ms_py_thread *th;
		uint64_t stamp = 0;
		int n;

		memcpy(&f, r->payload + sizeof(head) + i * sizeof(f), sizeof(f));
		th = ms_py_walk_code(t->w, f.code, f.instr, err, sizeof(err));
		if (!th) {
			t->unresolved++;
			n = snprintf(t->stack + used, sizeof(t->stack) - used, "%s?0x%llx",
				     used ? ";" : "", (unsigned long long)f.code);
		} else {
			const struct ms_py_frame *pf = &th->frames[0];

			if (ms_py_read(t->target, f.code + t->layout->off.co_linetable, &stamp,
				       sizeof(stamp)) < 0 || stamp != f.stamp)
				t->stale++;
			n = snprintf(t->stack + used, sizeof(t->stack) - used, "%s%s@%s:%d%s",
				     used ? ";" : "", ms_py_thread_str(th, pf->func),
				     ms_py_thread_str(th, pf->file), pf->line,
				     f.flags & MS_BPF_PY_ENTRY ? "!" : "");
		}
		if (n < 0 || (size_t)n >= sizeof(t->stack) - used)
			break;
		used += (size_t)n;
	}
	printf("rec %u %u %s %s %u %s\n", r->h.tid, r->h.cpu, status_name(head.status),
	       gil_name(head.gil), head.n_frames, used ? t->stack : "-");
	return 0;
}

/* The program's run count and time so far (BPF stats): 0, or -1. */
static int prog_stats(const struct tool *t, struct bpf_prog_info *info)
{
	uint32_t len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(ms_bpf_sampler_prog_fd(t->b), info, &len);
}

static bool is_output(const struct tool *t, uint64_t id)
{
	for (size_t i = 0; i < t->s.n_events; i++)
		if (t->s.events[i].id == id)
			return t->s.events[i].is_output;
	return false;
}

/* Read every ring: samples counted, records checked and printed. */
static void drain(struct tool *t)
{
	for (uint32_t c = 0; c < t->s.n_cpus; c++) {
		struct ms_ring *ring = &t->s.rings[c];
		const uint8_t *rec;
		uint32_t len;

		if (t->s.ring_owner[c] < 0)
			continue;
		ms_ring_begin(ring);
		while (ms_ring_next(ring, &rec, &len) == 1) {
			struct perf_event_header h;
			uint64_t id, time;
			uint32_t tid, raw_len;

			memcpy(&h, rec, sizeof(h));
			/* ip, pid/tid, time, id, cpu: both kinds begin so */
			if (h.type != PERF_RECORD_SAMPLE || len < 48)
				continue;
			memcpy(&tid, rec + 20, 4);
			memcpy(&time, rec + 24, 8);
			memcpy(&id, rec + 32, 8);
			if (!t->ready_ns || time < t->ready_ns)
				continue;
			struct tidcount *tc = tid_of(t, tid);
			if (!is_output(t, id)) {
				if (tc)
					tc->samples++;
				continue;
			}
			struct ms_bpf_record r;
			const char *code;
			char detail[256];

			memcpy(&raw_len, rec + 48, 4);
			if (len < 52 || raw_len > len - 52 ||
			    ms_bpf_record_check(rec + 52, raw_len, &r, &code, detail,
						sizeof(detail)) < 0) {
				printf("bad record: %s\n", len < 52 || raw_len > len - 52 ?
				       "raw data past the perf record" : detail);
				t->bad++;
				continue;
			}
			if (tc)
				tc->records++;
			t->records++;
			if (python_record(t, &r) < 0)
				t->bad++;
		}
		ms_ring_commit(ring);
	}
}

static int set_threads(const struct ms_py_thread *th, void *data)
{
	struct tool *t = data;

	if (th->native_tid && th->native_tid <= UINT32_MAX && t->n_states < TIDS_MAX) {
		t->state_tid[t->n_states] = (uint32_t)th->native_tid;
		t->state[t->n_states++] = th->tstate;
	}
	return 0;
}

/*
 * The thread of the target whose id in its own pid namespace is ns_tid, as
 * the tool's (initial) namespace numbers it: NSpid in each task's status.
 * 0 when none.
 */
static uint32_t host_tid(const struct tool *t, uint32_t ns_tid)
{
	char path[320], line[256];
	uint32_t found = 0;
	DIR *d;
	struct dirent *e;

	if (t->target == t->child)
		return ns_tid;	/* launched directly: the tool's namespace */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->target);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		unsigned long host, ns;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)t->target, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "NSpid: %lu %lu", &host, &ns) == 2 && ns == ns_tid)
				found = (uint32_t)host;
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * py_threads from the thread list: each thread's own state, or (shuffle)
 * the next thread's, a stale entry the walker must see through.
 */
static void refresh_threads(struct tool *t, bool shuffle)
{
	char err[256];

	t->n_states = 0;
	if (ms_py_walk(t->w, set_threads, t, err, sizeof(err)) < 0)
		return;
	for (unsigned i = 0; i < t->n_states; i++) {
		uint32_t tid = host_tid(t, t->state_tid[i]);

		if (tid)
			ms_bpf_sampler_set_thread(t->b, tid,
						  t->state[shuffle ? (i + 1) % t->n_states : i]);
	}
}

/* The fixture's output, line by line; "ready" starts the window. */
static void read_fixture(struct tool *t, int fd, char *buf, size_t *have, size_t cap)
{
	ssize_t n = read(fd, buf + *have, cap - 1 - *have);
	char *nl;

	if (n <= 0)
		return;
	*have += (size_t)n;
	buf[*have] = '\0';
	while ((nl = strchr(buf, '\n'))) {
		*nl = '\0';
		printf("fixture: %s\n", buf);
		if (!t->ready_ns && strncmp(buf, "ready", 5) == 0)
			t->ready_ns = now_ns();
		*have -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, *have + 1);
	}
}

/* The first child of process pid (a launcher such as unshare -f), or 0. */
static pid_t first_child(pid_t pid)
{
	char path[64];
	long c = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &c) != 1)
		c = 0;
	fclose(f);
	return (pid_t)c;
}

static void usage(void)
{
	fprintf(stderr, "usage: pybpfwalk [--seconds S] [--freq F] [--no-threads] [--switches] "
		"[--no-layout] [--shuffle-threads] [--find-bound N] -- PYTHON ARGS...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct tool t;
	double seconds = 2;
	uint64_t freq = 999;
	uint32_t find_bound = MS_BPF_PY_FIND_MAX;
	bool no_threads = false, switches = false, no_layout = false, shuffle = false;
	int i, gate[2], out[2], stats_fd;
	char err[512];

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--freq") && i + 1 < argc)
			freq = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-threads"))
			no_threads = true;
		else if (!strcmp(argv[i], "--switches"))
			switches = true;
		else if (!strcmp(argv[i], "--no-layout"))
			no_layout = true;
		else if (!strcmp(argv[i], "--shuffle-threads"))
			shuffle = true;
		else if (!strcmp(argv[i], "--find-bound") && i + 1 < argc)
			find_bound = (uint32_t)strtoul(argv[++i], NULL, 10);
		else
			usage();
	}
	if (i + 1 >= argc)
		usage();
	char **cmd = argv + i + 1;
	setvbuf(stdout, NULL, _IOLBF, 0);

	bool refused;
	t.b = ms_bpf_sampler_load(&refused);
	if (!t.b)
		return 1;
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		fprintf(stderr, "pybpfwalk: cannot enable BPF run-time stats (%s): no cost measured\n",
			strerror(errno));

	static const struct ms_event_spec cswitch = { "context-switches", PERF_TYPE_SOFTWARE,
						      PERF_COUNT_SW_CONTEXT_SWITCHES };
	struct ms_session_config cfg = {
		.event = switches ? &cswitch : ms_event_lookup("cpu-clock"),
		.freq = switches ? 0 : freq, .period = switches ? 1 : 0,
		.data_pages = 256, .enable_on_exec = true, .bpf = true,
		.bpf_prog_fd = ms_bpf_sampler_prog_fd(t.b),
		.bpf_outputs_fd = ms_bpf_sampler_outputs_fd(t.b),
	};
	if (ms_session_init(&t.s, &cfg) < 0)
		return 1;
	if (pipe(gate) < 0 || pipe(out) < 0) {
		perror("pybpfwalk: pipe");
		return 1;
	}
	t.child = fork();
	if (t.child < 0) {
		perror("pybpfwalk: fork");
		return 1;
	}
	if (t.child == 0) {
		char c;

		close(gate[1]);
		close(out[0]);
		dup2(out[1], 1);
		/* the fixture spins forever: it must not outlive the tool */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(127);
		if (read(gate[0], &c, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		fprintf(stderr, "pybpfwalk: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	close(out[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	int rc = 1;
	if (ms_session_open_task(&t.s, t.child) != 0)
		goto out;
	if (write(gate[1], "g", 1) != 1)
		goto out;
	close(gate[1]);

	t.layout = malloc(sizeof(*t.layout));
	if (!t.layout)
		goto out;
	char line[4096];
	size_t have = 0;
	uint64_t start = now_ns(), end = 0;
	bool have_layout = false;
	struct bpf_prog_info at_ready = { 0 };
	for (;;) {
		struct pollfd p = { .fd = out[0], .events = POLLIN };
		int status;

		poll(&p, 1, 20);
		read_fixture(&t, out[0], line, &have, sizeof(line));
		if (waitpid(t.child, &status, WNOHANG) == t.child) {
			fprintf(stderr, "pybpfwalk: %s exited (status 0x%x) before the end\n", cmd[0],
				status);
			t.child = 0;
			goto out;
		}
		if (!have_layout) {
			struct ms_bpf_py_layout bl;
			uint64_t dev, ino;

			/* the child itself, or the one a launcher started */
			t.target = t.child;
			if (ms_py_layout_find(t.target, t.layout, err, sizeof(err)) < 0 &&
			    (!(t.target = first_child(t.child)) ||
			     ms_py_layout_find(t.target, t.layout, err, sizeof(err)) < 0)) {
				if (now_ns() - start > 10000000000ull) {
					fprintf(stderr, "pybpfwalk: no layout after 10 s: %s\n", err);
					goto out;
				}
				continue;
			}
			if (ms_bpf_py_pidns(t.target, &dev, &ino, err, sizeof(err)) < 0 ||
			    ms_bpf_py_layout_make(t.layout, dev, ino, find_bound, &bl, err,
						  sizeof(err)) < 0) {
				fprintf(stderr, "pybpfwalk: %s\n", err);
				goto out;
			}
			if (!no_layout && ms_bpf_sampler_set_layout(t.b, (uint32_t)t.target, &bl) < 0)
				goto out;
			t.w = ms_py_walker_new(t.target, t.layout);
			if (!t.w) {
				fprintf(stderr, "pybpfwalk: cannot set up the userspace walker\n");
				goto out;
			}
			printf("target %d\n", (int)t.target);
			printf("layout %u.%u %s gil %s %s\n", t.layout->major, t.layout->minor,
			       ms_py_source_name(t.layout->source),
			       bl.gil_in_runtime >= 0 ? "runtime" :
			       bl.gil_ptr_in_interp >= 0 ? "interp" : "none", t.layout->module);
			have_layout = true;
		}
		if (!no_threads)
			refresh_threads(&t, shuffle);
		drain(&t);
		if (t.ready_ns && !end) {
			end = t.ready_ns + (uint64_t)(seconds * 1e9);
			prog_stats(&t, &at_ready);
		}
		if (!t.ready_ns && now_ns() - start > 20000000000ull) {
			fprintf(stderr, "pybpfwalk: %s never said ready\n", cmd[0]);
			goto out;
		}
		if (end && now_ns() >= end)
			break;
	}
	ms_session_disable(&t.s);
	drain(&t);
	for (unsigned k = 0; k < t.n_tids; k++)
		printf("thread %u samples %llu records %llu\n", t.tids[k].tid,
		       (unsigned long long)t.tids[k].samples, (unsigned long long)t.tids[k].records);
	printf("sizes %u %u records %llu unresolved %llu stale %llu bad %llu failed %llu\n",
	       t.size_min, t.size_max, (unsigned long long)t.records,
	       (unsigned long long)t.unresolved, (unsigned long long)t.stale,
	       (unsigned long long)t.bad, (unsigned long long)ms_bpf_sampler_failed(t.b));
	struct bpf_prog_info info;
	if (prog_stats(&t, &info) == 0) {
		uint64_t cnt = info.run_cnt - at_ready.run_cnt;
		uint64_t ns = info.run_time_ns - at_ready.run_time_ns;

		printf("prog verified_insns %u run_cnt %llu run_time_ns %llu ns_per_run %llu\n",
		       info.verified_insns, (unsigned long long)cnt, (unsigned long long)ns,
		       (unsigned long long)(cnt ? ns / cnt : 0));
	}
	rc = t.bad ? 1 : 0;
out:
	if (t.target > 0 && t.target != t.child)
		kill(t.target, SIGKILL);
	if (t.child > 0) {
		kill(t.child, SIGKILL);
		waitpid(t.child, NULL, 0);
	}
	ms_session_release(&t.s);
	ms_py_walker_free(t.w);
	free(t.layout);
	ms_bpf_sampler_free(t.b);
	if (stats_fd >= 0)
		close(stats_fd);
	return rc;
}

/* The BPF sampler, loaded: see bpfload.h. */
#include "perf/bpfload.h"
#include "bpf/sampler.h"
#include "perf/pidns.h"
#include "util/error.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/sampler.skel.h"

struct ms_bpf_sampler {
	struct ms_sampler *skel;
};

/*
 * What libbpf says while loading (the verifier's log among it), kept for
 * the message of a failure: its last LOG_MAX bytes.
 */
#define LOG_MAX 8192
static char log_buf[LOG_MAX];
static size_t log_len;

static int keep_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n <= 0)
		return 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (log_len + (size_t)n >= LOG_MAX) {
		size_t drop = log_len + (size_t)n - LOG_MAX + 1;

		drop = drop < log_len ? drop : log_len;
		memmove(log_buf, log_buf + drop, log_len - drop);
		log_len -= drop;
	}
	memcpy(log_buf + log_len, line, (size_t)n);
	log_len += (size_t)n;
	log_buf[log_len] = '\0';
	return 0;
}

struct ms_bpf_sampler *ms_bpf_sampler_load(bool *refused)
{
	struct ms_bpf_sampler *b;
	libbpf_print_fn_t old;
	char why[256];
	int ns, err;

	*refused = false;
	ns = ms_pidns_is_initial(NULL, why, sizeof(why));
	if (ns <= 0) {
		*refused = true;
		ms_error("the BPF sampler: %s; the BPF sampler needs the recorder in the initial "
			 "pid namespace (perf gives a sample's thread ids in the recorder's "
			 "namespace, the BPF program in the initial one, and they must agree): "
			 "run ms-collect on the host, outside containers or unshare -p (the "
			 "target may be in a nested namespace), or record without --python bpf",
			 why);
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		ms_error("out of memory for the BPF sampler");
		return NULL;
	}
	log_len = 0;
	log_buf[0] = '\0';
	old = libbpf_set_print(keep_log);
	b->skel = ms_sampler__open();
	if (!b->skel) {
		err = errno;
		libbpf_set_print(old);
		ms_error("the BPF sampler: cannot open the embedded BPF object (libbpf: %s)%s%s",
			 strerror(err), log_len ? "; libbpf said:\n" : "", log_buf);
		free(b);
		return NULL;
	}
	err = ms_sampler__load(b->skel);
	libbpf_set_print(old);
	if (err) {
		err = err < 0 ? -err : err;
		*refused = err == EPERM || err == EACCES;
		if (*refused)
			ms_error("the BPF sampler: not allowed to load the BPF program (bpf: %s): it "
				 "needs root, or CAP_BPF with CAP_PERFMON; run as root, or record "
				 "without --python bpf", strerror(err));
		else
			ms_error("the BPF sampler: this kernel refused the BPF program (bpf: %s): "
				 "the verifier or the kernel said:\n%s", strerror(err),
				 log_len ? log_buf : "(nothing)\n");
		ms_sampler__destroy(b->skel);
		free(b);
		return NULL;
	}
	return b;
}

int ms_bpf_sampler_prog_fd(const struct ms_bpf_sampler *b)
{
	return bpf_program__fd(b->skel->progs.ms_sample);
}

int ms_bpf_sampler_outputs_fd(const struct ms_bpf_sampler *b)
{
	return bpf_map__fd(b->skel->maps.outputs);
}

uint64_t ms_bpf_sampler_failed(const struct ms_bpf_sampler *b)
{
	return b->skel->bss ? __atomic_load_n(&b->skel->bss->output_failed, __ATOMIC_RELAXED) : 0;
}

void ms_bpf_sampler_free(struct ms_bpf_sampler *b)
{
	if (!b)
		return;
	ms_sampler__destroy(b->skel);
	free(b);
}

int ms_bpf_sampler_set_layout(struct ms_bpf_sampler *b, uint32_t pid,
			      const struct ms_bpf_py_layout *l)
{
	if (bpf_map__update_elem(b->skel->maps.py_layouts, &pid, sizeof(pid), l, sizeof(*l),
				 BPF_ANY) < 0)
		return ms_error_errno("the BPF sampler: cannot store the Python layout of process %u "
				      "in the map py_layouts (%u processes at most)", pid,
				      bpf_map__max_entries(b->skel->maps.py_layouts));
	return 0;
}

/* Delete key from map; absent is no error. 0, or -1 with errno. */
static int map_delete(const struct bpf_map *map, uint32_t key)
{
	if (bpf_map__delete_elem(map, &key, sizeof(key), 0) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

/*
 * py_threads is keyed by tid alone: a thread's entry goes when its process
 * is dropped while the thread still shows in /proc/PID/task, or when the
 * thread is gone altogether (every thread of a process that has exited).
 */
static bool thread_of(uint32_t pid, uint32_t tid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	if (stat(path, &st) == 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%u", tid);
	return stat(path, &st) < 0 && errno == ENOENT;
}

int ms_bpf_sampler_drop_layout(struct ms_bpf_sampler *b, uint32_t pid)
{
	const struct bpf_map *threads = b->skel->maps.py_threads;
	uint32_t key, next;
	bool first = true;

	if (map_delete(b->skel->maps.py_layouts, pid) < 0)
		return ms_error_errno("the BPF sampler: cannot delete process %u from the map "
				      "py_layouts", pid);
	/* Deleting the key just returned lets get_next_key go on from the start. */
	while (bpf_map__get_next_key(threads, first ? NULL : &key, &next, sizeof(next)) == 0) {
		if (thread_of(pid, next)) {
			if (map_delete(threads, next) < 0)
				return ms_error_errno("the BPF sampler: cannot delete thread %u of process "
						      "%u from the map py_threads", next, pid);
			first = true;
			continue;
		}
		key = next;
		first = false;
	}
	if (errno != ENOENT)
		return ms_error_errno("the BPF sampler: cannot list the map py_threads to forget the "
				      "threads of process %u", pid);
	return 0;
}

int ms_bpf_sampler_set_thread(struct ms_bpf_sampler *b, uint32_t tid, uint64_t tstate)
{
	if (bpf_map__update_elem(b->skel->maps.py_threads, &tid, sizeof(tid), &tstate,
				 sizeof(tstate), BPF_ANY) < 0)
		return ms_error_errno("the BPF sampler: cannot store the thread state of thread %u in "
				      "the map py_threads (%u threads at most)", tid,
				      bpf_map__max_entries(b->skel->maps.py_threads));
	return 0;
}

int ms_bpf_sampler_drop_thread(struct ms_bpf_sampler *b, uint32_t tid)
{
	if (map_delete(b->skel->maps.py_threads, tid) < 0)
		return ms_error_errno("the BPF sampler: cannot delete thread %u from the map "
				      "py_threads", tid);
	return 0;
}

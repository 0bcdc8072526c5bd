/*
 * The Python recorder's sink for a loaded BPF sampler (pyrecorder.h): its
 * own file, so that only ms-collect, which loads the program, pulls
 * libbpf's calls out of libcommon.a.
 */
#include "bpf/pywindow.h"
#include "perf/bpfload.h"
#include "python/bpflayout.h"
#include "python/pyrecorder.h"
#include "util/error.h"

static int set_layout(void *arg, uint32_t pid, const struct ms_py_layout *l, uint64_t pidns_dev,
		      uint64_t pidns_ino)
{
	struct ms_bpf_py_layout b;
	char err[256];

	if (ms_bpf_py_layout_make(l, pidns_dev, pidns_ino, MS_BPF_PY_FIND_MAX, &b, err,
				  sizeof(err)) < 0)
		return ms_error("--python bpf: process %u: %s", pid, err);
	return ms_bpf_sampler_set_layout(arg, pid, &b);
}

static int drop_layout(void *arg, uint32_t pid)
{
	return ms_bpf_sampler_drop_layout(arg, pid);
}

static int set_thread(void *arg, uint32_t tid, uint64_t tstate)
{
	return ms_bpf_sampler_set_thread(arg, tid, tstate);
}

static int drop_thread(void *arg, uint32_t tid)
{
	return ms_bpf_sampler_drop_thread(arg, tid);
}

void ms_py_recorder_bpf_sink(struct ms_bpf_sampler *b, struct ms_py_sink *out)
{
	*out = (struct ms_py_sink){
		.arg = b,
		.set_layout = set_layout,
		.drop_layout = drop_layout,
		.set_thread = set_thread,
		.drop_thread = drop_thread,
	};
}

/*
 * Loading ms-collect's BPF sampler (bpf/sampler.bpf.c, embedded as its
 * bpftool skeleton) through libbpf, for perf/session.h to attach.
 *
 * Only ms-collect calls this, and only it links libbpf: the stages that
 * never load a program do not pull this file out of libcommon.a.
 *
 * Errors name the step that failed: the pid namespace check (pidns.h),
 * opening the embedded object, loading it (a refusal for want of
 * permission, or the verifier's rejection with the log libbpf printed).
 */
#ifndef MS_PERF_BPFLOAD_H
#define MS_PERF_BPFLOAD_H

#include <stdbool.h>
#include <stdint.h>

struct ms_bpf_sampler;

/*
 * Check the pid namespace, then open and load the program. Returns it, or
 * NULL after one message; *refused is set when the system refused (a
 * namespace that cannot work, no permission), as against a fault.
 */
struct ms_bpf_sampler *ms_bpf_sampler_load(bool *refused);
/* The loaded perf_event program, for PERF_EVENT_IOC_SET_BPF. */
int ms_bpf_sampler_prog_fd(const struct ms_bpf_sampler *b);
/* Its PERF_EVENT_ARRAY of BPF output events, keyed by CPU number. */
int ms_bpf_sampler_outputs_fd(const struct ms_bpf_sampler *b);
/* Records the program could not write so far (a full ring, a CPU without output). */
uint64_t ms_bpf_sampler_failed(const struct ms_bpf_sampler *b);
void ms_bpf_sampler_free(struct ms_bpf_sampler *b);

/*
 * The Python walker's maps (bpf/sampler.h). pid and tid are ids in the
 * initial pid namespace (the recorder's, checked at load). Each returns
 * 0, or -1 after a message naming the map, the key and the errno.
 */
struct ms_bpf_py_layout;
/* Walk the Python frames of process pid through l (replacing any before). */
int ms_bpf_sampler_set_layout(struct ms_bpf_sampler *b, uint32_t pid,
			      const struct ms_bpf_py_layout *l);
/* Stop walking pid's frames, and forget its threads' states. Absent: 0. */
int ms_bpf_sampler_drop_layout(struct ms_bpf_sampler *b, uint32_t pid);
/* Thread tid's state is at tstate (its process has a layout). */
int ms_bpf_sampler_set_thread(struct ms_bpf_sampler *b, uint32_t tid, uint64_t tstate);
/* Forget thread tid's state. Absent: 0. */
int ms_bpf_sampler_drop_thread(struct ms_bpf_sampler *b, uint32_t tid);

#endif

/*
 * The GIL as label spans (ms-unwind): each thread's samples in stream
 * order, with the GIL state of their walker record, become runs of one
 * value; each run ends as one LABEL_SPAN (stream/records.h: key "gil",
 * value "held" or "released") when the thread's next sample has another
 * value, an unknown one, or none (no PY_STACK), when the thread exits,
 * and at the end of the stream.
 *
 * Thread snapshots (--python snapshot) give a value per snapshot instead
 * (ms_py_labels_snapshot(), on a table of their own): a snapshot's value
 * holds from the thread's snapshot before to this one, so a run that
 * follows another starts 1 ns after the end of the one before (spans
 * never overlap) and a thread's first run starts at its own snapshot. An
 * unknown value ends the run and is no value: the next run starts at its
 * own snapshot (when the value began is not known). The span's samples
 * are the run's snapshots.
 *
 * Bounded: at most MS_PY_LABELS_THREADS_MAX threads hold an open run at
 * once, in one table allocated at the first sample with a value (a
 * stream without Python allocates nothing); a sample with a value of a
 * thread past the bound makes no span and is counted (threads_full). No
 * allocation per sample after that.
 */
#ifndef MS_PYTHON_LABELS_H
#define MS_PYTHON_LABELS_H

#include <stdbool.h>
#include <stdint.h>

#include "stream/records.h"

#define MS_PY_LABELS_THREADS_MAX 4096u

/* The value of a sample without a walker record (no PY_STACK came with it). */
#define MS_PY_LABELS_NONE UINT32_MAX

struct ms_py_labels_stats {
	uint64_t spans;		/* spans given out */
	uint64_t threads_full;	/* samples with a value that made no span: table full */
};

struct ms_py_labels;

/* NULL after a message (out of memory). */
struct ms_py_labels *ms_py_labels_new(void);
void ms_py_labels_free(struct ms_py_labels *l);

/*
 * A sample of (pid, tid) at time, its GIL state gil (enum ms_bpf_py_gil,
 * or MS_PY_LABELS_NONE). Returns 1 with *out filled when it ends the
 * thread's run (write it; its strings are static), 0 when it ends none,
 * -1 after a message (out of memory).
 */
int ms_py_labels_sample(struct ms_py_labels *l, uint32_t pid, uint32_t tid, uint64_t time,
			uint32_t gil, struct ms_label_span *out);
/*
 * A snapshot of (pid, tid) at time with GIL state gil (a value, or
 * MS_BPF_PY_GIL_UNKNOWN / MS_PY_LABELS_NONE: none), as described above;
 * returns as ms_py_labels_sample(). Give a table either samples or
 * snapshots, never both.
 */
int ms_py_labels_snapshot(struct ms_py_labels *l, uint32_t pid, uint32_t tid, uint64_t time,
			  uint32_t gil, struct ms_label_span *out);
/* The thread (pid, tid) exited: 1 with *out when it ends its run, else 0. */
int ms_py_labels_exit(struct ms_py_labels *l, uint32_t pid, uint32_t tid,
		      struct ms_label_span *out);
/*
 * At the end: 1 with *out for each run still open (then forgotten), in
 * (pid, tid) order, 0 when none is left.
 */
int ms_py_labels_next_open(struct ms_py_labels *l, struct ms_label_span *out);
const struct ms_py_labels_stats *ms_py_labels_stats(const struct ms_py_labels *l);

#endif

/*
 * The Python recorder's code objects (pyrecorder.h): each (pid, code,
 * stamp) a walker record or a thread snapshot names is read, proved and
 * written as a PY_CODE record once, ahead of the first record that names
 * it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf/bpfrecord.h"
#include "python/pyrecorderint.h"
#include "stream/records.h"

/* A PY_CODE record past its names and table: eleven numbers and headers. */
#define CODE_RECORD_FIXED 160

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The slot of (code, stamp) in p's table: its own, or the empty one it would take. */
static struct pyrec_code *slot_of(struct pyrec_proc *p, uint64_t code, uint64_t stamp)
{
	uint64_t h = (code ^ (stamp * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	uint32_t i = (uint32_t)(h >> 40) & (PYREC_CODE_SLOTS - 1);

	/* never full: at most half the slots are taken */
	while (p->codes[i].code && (p->codes[i].code != code || p->codes[i].stamp != stamp))
		i = (i + 1) & (PYREC_CODE_SLOTS - 1);
	return &p->codes[i];
}

static int write_code(struct ms_py_recorder *r, const struct pyrec_proc *p, uint64_t code,
		      uint64_t stamp, const struct ms_collect_out *out)
{
	const struct ms_py_code_info *in = r->info;
	bool named = in->status == MS_PY_CODE_OK || in->status == MS_PY_CODE_NO_LINES;
	struct ms_py_code c = {
		.pid = p->pid,
		.time = mono_ns(),
		.code = code,
		.stamp = stamp,
		.status = in->status,
		.qualname = { in->qualname, named ? in->qualname_len : 0 },
		.file = { in->file, named ? in->file_len : 0 },
		.firstlineno = named ? (uint32_t)in->firstlineno : 0,
		.code_start = named ? in->code_start : 0,
		.linetable = in->linetable,
		.linetable_len = in->status == MS_PY_CODE_OK ? in->linetable_len : 0,
	};

	r->n.codes++;
	if (in->status == MS_PY_CODE_OK)
		r->n.codes_ok++;
	/* The record has no room for why: the first reason of each kind is a problem's detail. */
	else if (in->status == MS_PY_CODE_UNREADABLE)
		ms_problems_add(out->problems, "python-code-unreadable",
				"process %u: %s (freed since the sample, or the process ended)",
				p->pid, in->reason[0] ? in->reason : "the walker read no stamp");
	else if (in->status == MS_PY_CODE_INVALID)
		ms_problems_add(out->problems, "python-code-invalid", "process %u: %s", p->pid,
				in->reason);
	else
		ms_problems_add(out->problems, "python-code-no-lines", "process %u: %s", p->pid,
				in->reason);
	return ms_py_code_pack(out->w, &c);
}

enum ms_watch_verdict pyrec_code_name(struct ms_py_recorder *r, struct pyrec_proc *p, uint64_t code,
				      uint64_t stamp, const struct ms_collect_out *out)
{
	struct ms_py_code_info *in = r->info;
	struct pyrec_code *slot;

	if (!p->codes && !(p->codes = calloc(PYREC_CODE_SLOTS, sizeof(*p->codes)))) {
		ms_problems_add(out->problems, "python-code-table-full",
				"out of memory for process %u's code table: its frames show "
				"as unknown code", p->pid);
		r->n.table_full++;
		return MS_WATCH_WRITE;
	}
	slot = slot_of(p, code, stamp);
	if (slot->code)
		return MS_WATCH_WRITE;
	if (p->n_codes >= r->codes_max) {
		ms_problems_add(out->problems, "python-code-table-full",
				"process %u ran more than %u code objects: the code at 0x%llx and "
				"those after it were not named (their frames show as unknown code)",
				p->pid, r->codes_max, (unsigned long long)code);
		r->n.table_full++;
		return MS_WATCH_WRITE;
	}
	if (!(r->info_waiting && r->info_pid == p->pid && r->info_code == code &&
	      r->info_stamp == stamp)) {
		if (!stamp) {
			memset(in, 0, offsetof(struct ms_py_code_info, linetable));
			in->status = MS_PY_CODE_UNREADABLE;
		} else {
			if (r->tick_bytes >= MS_PYREC_TICK_BYTES) {
				ms_problems_add(out->problems, "python-code-bounded",
						"%u bytes of code objects were read in one tick (20 ms): "
						"the code at 0x%llx of process %u was named later, or not",
						MS_PYREC_TICK_BYTES, (unsigned long long)code, p->pid);
				r->n.bounded++;
				return MS_WATCH_WRITE;
			}
			ms_py_code_read((pid_t)p->pid, &p->l, code, stamp, in);
			r->tick_bytes += in->bytes;
			r->n.code_bytes += in->bytes;
		}
		r->info_pid = p->pid;
		r->info_code = code;
		r->info_stamp = stamp;
	}
	if (!out->room(out->ctx, CODE_RECORD_FIXED + in->qualname_len + in->file_len +
				      in->linetable_len)) {
		r->info_waiting = true;
		return MS_WATCH_WAIT;
	}
	r->info_waiting = false;
	if (write_code(r, p, code, stamp, out) < 0)
		return MS_WATCH_ERROR;
	slot->code = code;
	slot->stamp = stamp;
	p->n_codes++;
	return MS_WATCH_WRITE;
}

enum ms_watch_verdict pyrec_codes_name(struct ms_py_recorder *r, const struct ms_bpf_record *rec,
				       const struct ms_collect_out *out)
{
	struct ms_bpf_py_head head;
	struct pyrec_proc *p;

	/* A malformed payload is ms-decode's to judge: its record goes as it is. */
	if (rec->payload_len < sizeof(head))
		return MS_WATCH_WRITE;
	memcpy(&head, rec->payload, sizeof(head));
	if (head.n_frames > MS_BPF_PY_FRAMES_MAX ||
	    sizeof(head) + (size_t)head.n_frames * sizeof(struct ms_bpf_py_frame) > rec->payload_len)
		return MS_WATCH_WRITE;
	r->n.records++;
	if (!(p = pyrec_layout_of(r, rec->h.pid)))
		return MS_WATCH_WRITE;
	for (uint32_t i = 0; i < head.n_frames; i++) {
		struct ms_bpf_py_frame f;
		enum ms_watch_verdict v;

		memcpy(&f, rec->payload + sizeof(head) + i * sizeof(f), sizeof(f));
		if (!f.code)
			continue;
		if ((v = pyrec_code_name(r, p, f.code, f.stamp, out)) != MS_WATCH_WRITE)
			return v;
	}
	return MS_WATCH_WRITE;
}

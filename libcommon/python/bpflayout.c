/* The BPF walker's layout of a CPython process: see bpflayout.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "bpf/pywindow.h"
#include "python/bpflayout.h"

/* A field the walker reads from a window: its name, offset, width, window. */
struct wfield {
	const char *name;
	int64_t off;
	uint32_t width, window;
};

int ms_bpf_py_layout_make(const struct ms_py_layout *l, uint64_t pidns_dev, uint64_t pidns_ino,
			  uint32_t find_bound, struct ms_bpf_py_layout *out, char *err,
			  size_t errlen)
{
	const struct ms_py_offsets *o = &l->off;
	const char *why = ms_py_offsets_check(o);

	if (why) {
		snprintf(err, errlen, "python bpf layout: %s: %s", l->module, why);
		return -1;
	}
	if (find_bound == 0 || find_bound > MS_BPF_PY_FIND_MAX) {
		snprintf(err, errlen, "python bpf layout: py_find's bound of %u thread states is "
			 "not within 1 to %u", find_bound, MS_BPF_PY_FIND_MAX);
		return -1;
	}
	bool gil = o->gil_in_runtime >= 0 || o->gil_ptr_in_interp >= 0;
	const struct wfield w[] = {
		{ "PyThreadState.next", o->ts_next, 8, MS_BPF_PY_TS_WINDOW },
		{ "PyThreadState.native_thread_id", o->ts_native_tid, 8, MS_BPF_PY_TS_WINDOW },
		{ "PyThreadState's frame", o->ts_frame, 8, MS_BPF_PY_TS_WINDOW },
		{ "_PyInterpreterFrame.previous", o->fr_previous, 8, MS_BPF_PY_FRAME_WINDOW },
		{ "_PyInterpreterFrame's code", o->fr_code, 8, MS_BPF_PY_FRAME_WINDOW },
		{ "_PyInterpreterFrame's instruction", o->fr_instr, 8, MS_BPF_PY_FRAME_WINDOW },
		{ "_PyInterpreterFrame.owner", o->fr_owner, 1, MS_BPF_PY_FRAME_WINDOW },
		{ "_PyInterpreterFrame.is_entry", o->fr_is_entry, 1, MS_BPF_PY_FRAME_WINDOW },
		{ "_gil_runtime_state.locked", gil ? o->gil_locked : -1, 4, MS_BPF_PY_GIL_WINDOW },
		{ "_gil_runtime_state.last_holder", gil ? o->gil_holder : -1, 8, MS_BPF_PY_GIL_WINDOW },
	};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		/* -1: a field this version does not have (checked by ms_py_offsets_check) */
		if (w[i].off == -1 && i >= 7)
			continue;
		if (w[i].off < 0 || w[i].off + w[i].width > w[i].window) {
			snprintf(err, errlen, "python bpf layout: %s: %s at offset %lld is outside "
				 "the %u bytes the BPF walker reads of its structure (a build this "
				 "walker does not know)", l->module, w[i].name, (long long)w[i].off,
				 w[i].window);
			return -1;
		}
	}
	if (o->owner_cstack > 255) {
		snprintf(err, errlen, "python bpf layout: %s: FRAME_OWNED_BY_CSTACK %d is not a byte",
			 l->module, o->owner_cstack);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->runtime = l->runtime;
	out->pidns_dev = pidns_dev;
	out->pidns_ino = pidns_ino;
	out->version_hex = l->version_hex;
	out->find_bound = find_bound;
	out->rt_interp_head = o->rt_interp_head;
	out->is_next = o->is_next;
	out->is_threads_head = o->is_threads_head;
	out->ts_next = o->ts_next;
	out->ts_native_tid = o->ts_native_tid;
	out->ts_frame = o->ts_frame;
	out->cf_current_frame = o->cf_current_frame;
	out->fr_previous = o->fr_previous;
	out->fr_code = o->fr_code;
	out->fr_instr = o->fr_instr;
	out->fr_owner = o->fr_owner;
	out->fr_is_entry = o->fr_is_entry;
	out->owner_cstack = o->owner_cstack;
	out->co_linetable = o->co_linetable;
	out->gil_in_runtime = gil ? o->gil_in_runtime : -1;
	out->gil_ptr_in_interp = gil ? o->gil_ptr_in_interp : -1;
	out->gil_locked = gil ? (uint32_t)o->gil_locked : 0;
	out->gil_holder = gil ? (uint32_t)o->gil_holder : 0;
	return 0;
}

int ms_bpf_py_pidns(pid_t pid, uint64_t *dev, uint64_t *ino, char *err, size_t errlen)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "python bpf layout: cannot stat %s: %s (has process %d "
			 "exited, or may we not look at it?)", path, strerror(errno), (int)pid);
		return -1;
	}
	/* The kernel's dev_t (MINORBITS 20), not the one stat gives. */
	*dev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
	*ino = st.st_ino;
	return 0;
}

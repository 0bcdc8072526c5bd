/*
 * What the Python walker (python.bpf.h) reads in one bpf_probe_read_user,
 * shared with the code that fills its py_layouts (python/bpflayout.h),
 * which refuses a layout whose fields fall outside these windows.
 *
 * Each window is a fixed size, so the verifier sees constant reads, and
 * each lies inside its structure on every supported version (3.11-3.13:
 * a thread state is 288 bytes or more, an _PyInterpreterFrame 80, a
 * struct _gil_runtime_state 208), so a read never strays past its object.
 */
#ifndef MS_BPF_PYWINDOW_H
#define MS_BPF_PYWINDOW_H

/* A thread state from its start: .next, .native_thread_id, .cframe/.current_frame. */
#define MS_BPF_PY_TS_WINDOW 192u
/* An _PyInterpreterFrame from its start: .previous, code, instr, owner, is_entry. */
#define MS_BPF_PY_FRAME_WINDOW 72u
/* A struct _gil_runtime_state from its start: .last_holder, .locked. */
#define MS_BPF_PY_GIL_WINDOW 24u
/* The most thread states py_find may look through (find_bound's ceiling). */
#define MS_BPF_PY_FIND_MAX 256u
/* The most interpreters py_find steps through. */
#define MS_BPF_PY_INTERPS_MAX 16u

#endif

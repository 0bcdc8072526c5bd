/*
 * The BPF walker's view of a CPython process (bpf/sampler.h's struct
 * ms_bpf_py_layout, the value of the map py_layouts), made from its
 * layout (layout.h) and its pid namespace.
 *
 * ms_bpf_py_layout_make is pure: it copies the offsets and refuses a
 * layout the walker could not read as it stands (a field outside the
 * window the walker reads of its structure, bpf/pywindow.h), so that a
 * process is never walked through offsets the program would misread.
 * ms_bpf_py_pidns is the one lookup of the system: the pid namespace of a
 * process, as bpf_get_ns_current_pid_tgid wants it.
 */
#ifndef MS_PYTHON_BPFLAYOUT_H
#define MS_PYTHON_BPFLAYOUT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/sampler.h"
#include "python/layout.h"

/*
 * Fill out from l, the process's pid namespace (pidns_dev in the kernel's
 * encoding, as ms_bpf_py_pidns gives it, and pidns_ino) and the thread
 * states py_find may look through (1 to MS_BPF_PY_FIND_MAX). Returns 0, or
 * -1 with what is wrong in err (the field, its offset, the limit).
 */
int ms_bpf_py_layout_make(const struct ms_py_layout *l, uint64_t pidns_dev, uint64_t pidns_ino,
			  uint32_t find_bound, struct ms_bpf_py_layout *out, char *err,
			  size_t errlen);

/*
 * The pid namespace of process pid: stat of /proc/PID/ns/pid, its device
 * in the kernel's encoding (major << 20 | minor, which the BPF helper
 * compares) and its inode. Returns 0, or -1 with the reason in err.
 */
int ms_bpf_py_pidns(pid_t pid, uint64_t *dev, uint64_t *ino, char *err, size_t errlen);

#endif

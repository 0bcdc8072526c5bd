/*
 * Whether this process is in the initial pid namespace, as the BPF sampler
 * needs: perf reports a sample's ids in the namespace of the event's
 * creator, bpf_get_current_pid_tgid() in the initial one, and the two
 * must name the same thread (issue 20, item 8).
 *
 * The check goes through the namespace file itself (/proc/self/ns/pid): it
 * must be an nsfs file (fstatfs: NSFS_MAGIC) and its inode the initial pid
 * namespace's, PROC_PID_INIT_INO, which the kernel has fixed since 3.8.
 * Comparing with /proc/1/ns/pid is not enough: a recorder started by
 * `unshare -p -f --mount-proc` is pid 1 of its own namespace, and its
 * /proc/1 is itself.
 */
#ifndef MS_PERF_PIDNS_H
#define MS_PERF_PIDNS_H

#include <stdbool.h>

/* include/linux/proc_ns.h (not in the uapi headers) */
#define MS_PROC_PID_INIT_INO 0xEFFFFFFCu

/*
 * 1 when the pid namespace file at path (NULL: /proc/self/ns/pid) is the
 * initial namespace's; 0 when it is another's, with why (why_size bytes)
 * saying so; -1 when it cannot be told, with why naming what failed.
 */
int ms_pidns_is_initial(const char *path, char *why, unsigned why_size);

#endif

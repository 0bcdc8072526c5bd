/*
 * What ms-collect reads from /proc and /sys about a target and the machine:
 * the mappings and thread names it synthesizes records from when it
 * attaches, the threads to open events for, the online CPUs.
 *
 * Parsers take text and are pure (unit-tested); the readers around them
 * open the files. Readers return -1 after a message naming the file, except
 * where said otherwise.
 */
#ifndef MS_PERF_PROCFS_H
#define MS_PERF_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * One line of /proc/PID/maps:
 *   start-end perms offset maj:min inode   path
 * path is everything after the inode and its padding, up to the end of the
 * line (it may contain spaces; the kernel escapes newlines as \012). It is
 * empty for anonymous memory and "[heap]", "[stack]", "[vdso]" ... for the
 * kernel's named regions. A file removed since it was mapped keeps the
 * kernel's " (deleted)" suffix in path, and deleted is true.
 */
struct ms_maps_entry {
	uint64_t start, end, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint32_t flags;		/* MAP_PRIVATE or MAP_SHARED */
	const char *path;	/* borrowed from the line, not NUL-terminated */
	uint32_t path_len;
	bool deleted;
};

/*
 * Parse one line (without or with its newline). Returns 0, or -1 when the
 * line is not in the format above (no message: the caller names the file).
 */
int ms_maps_parse_line(const char *line, size_t len, struct ms_maps_entry *e);

/*
 * Call fn for each line of /proc/PID/maps. A line that does not parse is
 * reported and skipped. fn returning non-zero stops the walk and is
 * returned. Returns 0, or -1 when the file cannot be read.
 */
typedef int (*ms_maps_fn)(const struct ms_maps_entry *e, void *data);
int ms_maps_read(pid_t pid, ms_maps_fn fn, void *data);

/*
 * The thread ids in /proc/PID/task, sorted ascending, into a buffer the
 * caller owns and this grows (*tids, *alloc; free() it). Returns the count,
 * or -1: with errno ESRCH and no message when the process is gone, after a
 * message otherwise.
 */
int ms_tasks_list(pid_t pid, pid_t **tids, size_t *alloc);

/*
 * The name of thread tid of pid (/proc/PID/task/TID/comm) without its
 * newline, NUL-terminated. Returns its length, or -1 without a message when
 * the thread is gone.
 */
int ms_task_comm(pid_t pid, pid_t tid, char *buf, size_t size);

/*
 * /proc/PID/cmdline split at its NULs into argv (pointers into buf, which
 * the caller owns). At most max_args are stored; the rest is dropped.
 * Returns the count (0 for a kernel thread), or -1 without a message when
 * the process is gone.
 */
int ms_proc_cmdline(pid_t pid, char *buf, size_t size, char **argv, int max_args);

/*
 * Whether process pid still runs: it exists and is neither a zombie nor
 * dead (/proc/PID/stat). For kernels without pidfds.
 */
bool ms_proc_alive(pid_t pid);

/* The process a task belongs to (Tgid in /proc/TID/status), or -1 when gone. */
pid_t ms_proc_tgid(pid_t tid);

/*
 * Parse a kernel CPU list ("0-3,5,7-8\n") into cpus[], ascending as
 * written. Returns the count, or -1 when the text is malformed or holds
 * more than max CPUs.
 */
int ms_cpu_list_parse(const char *s, int *cpus, int max);
/* The online CPUs (/sys/devices/system/cpu/online). */
int ms_cpus_online(int *cpus, int max);

#endif

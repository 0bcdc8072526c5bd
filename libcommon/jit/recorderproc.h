/*
 * ms-collect's JIT recorder (jit/recorder.h): what it reads of a live
 * target process to read its perf map. The process's own view: its map is
 * /tmp/perf-NSPID.map in its root and with its pid in its own pid
 * namespace, so the recorder opens /proc/PID/root/tmp/perf-NSPID.map
 * (NSPID the last field of NSpid: in /proc/PID/status). When the process
 * began (for the staleness rule, perfmap.h) comes from /proc/PID/stat.
 *
 * The parsers are pure over the text given (unit-tested); the readers
 * open the files and print nothing: a process that ended or a file that
 * cannot be opened is a status the caller records, not a message.
 */
#ifndef MS_JIT_RECORDERPROC_H
#define MS_JIT_RECORDERPROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * How far the start time (clock ticks of /proc/PID/stat, 10 ms) and a
 * file system's coarse mtime clock may put a map written as the process
 * began before its start: two ticks and 10 ms more.
 */
#define MS_JIT_START_SLACK_NS (30ull * 1000 * 1000)

/*
 * From /proc/PID/status: the pid in the process's own namespace (the last
 * field of "NSpid:", or of "Pid:" on kernels without NSpid) and its
 * effective uid (the second field of "Uid:"). 0, or -1 when a field is
 * missing or not a number.
 */
int ms_jit_parse_status(const char *text, size_t len, uint32_t *nspid, uint32_t *euid);

/*
 * From /proc/PID/stat: starttime (field 22, clock ticks after boot). The
 * command name, field 2, may hold spaces and parentheses: fields are
 * counted from its last ')'. 0, or -1 when malformed.
 */
int ms_jit_parse_starttime(const char *text, size_t len, uint64_t *ticks);

struct ms_jit_proc {
	uint32_t nspid, euid;
	uint64_t start_boot_ns;	/* when it began, CLOCK_BOOTTIME */
	uint64_t start_real_ns;	/* the same, CLOCK_REALTIME (as file mtimes) */
	uint64_t boot_minus_mono;	/* CLOCK_BOOTTIME - CLOCK_MONOTONIC now */
};

/* Read the facts of process pid. 0, or -1 with errno (ESRCH when it is gone). */
int ms_jit_proc_read(pid_t pid, struct ms_jit_proc *p);

/*
 * Open the process's perf map as it sees it: /proc/PID/root, then
 * tmp/perf-NSPID.map below it with no symbolic link on the way (a link
 * in the target's root points into its root, not ours) and only when it
 * is a regular file (util/safeopen.h). The fd and its status in *st, or
 * -1 with errno (ENOENT: no map).
 */
int ms_jit_map_open(pid_t pid, uint32_t nspid, struct stat *st);

/*
 * Read len bytes of the process's memory at addr into buf, page by page
 * (process_vm_readv takes an element whole or not at all): the bytes of
 * the leading pages that could be read, or -1 with errno when none.
 */
long ms_jit_read_code(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif

/*
 * The recording's own CPU time, for the budget (perf/budget.h): the sum of
 * the CPU clocks (clock_getcpuclockid(3): user and system time of every
 * thread, ended ones included, in ns) of ms-collect and of the processes
 * it is told are the live stages of its pipeline. It is the total that
 * /proc/PID/stat gives in clock ticks, read at the kernel's precision, so
 * that a window of 200 ms can be measured to a share of a percent.
 *
 * A process that has ended keeps counting with the time last read: the
 * sum never goes back. Not counted: the kernel's work at each sample (the
 * interrupt and the stack copy), which is charged to the target.
 */
#ifndef MS_PERF_CPUMETER_H
#define MS_PERF_CPUMETER_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define MS_CPUMETER_PIDS_MAX 16

struct ms_cpumeter {
	uint32_t n;
	pid_t pids[MS_CPUMETER_PIDS_MAX];	/* [0] is 0: this process */
	clockid_t clocks[MS_CPUMETER_PIDS_MAX];
	uint64_t last[MS_CPUMETER_PIDS_MAX];
	uint32_t gone;		/* processes whose clock could not be read (ended) */
};

/*
 * This process and pids[0..n) (at most MS_CPUMETER_PIDS_MAX - 1). Returns
 * 0, or -1 after a message naming a pid whose clock cannot be had (no such
 * process, or not allowed).
 */
int ms_cpumeter_init(struct ms_cpumeter *m, const pid_t *pids, uint32_t n);
/* The CPU time so far, in ns: monotonic. */
uint64_t ms_cpumeter_read(struct ms_cpumeter *m);

#endif

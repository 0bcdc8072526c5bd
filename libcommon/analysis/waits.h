/*
 * Wait sites of off-CPU time (analysis/waits.c): what the off-cpu view
 * lists per cause before the functions.
 */
#ifndef MS_ANALYSIS_WAITS_H
#define MS_ANALYSIS_WAITS_H

#include <stdint.h>

#include "analysis/select.h"

/*
 * The complete off-CPU intervals s selects with one cause, system call
 * and innermost two user functions, summed.
 */
struct ms_wait_site {
	uint32_t cause;		/* enum ms_off_cpu_cause */
	/*
	 * The capture string naming the kernel's entry of the system call the
	 * stack entered the kernel by ("__x64_sys_futex"), or MS_NONE: the
	 * thread left its CPU from an interrupt, or its stack has no kernel
	 * frames.
	 */
	uint32_t syscall;
	/* keys of s: the innermost user function and its caller; MS_NONE when none */
	uint32_t key[2];
	uint64_t ns;		/* their off-CPU time */
	uint64_t intervals;
};

/*
 * The sites of s's selected complete intervals, by time (most first; ties
 * by cause, then by the keys' names), into a malloc'd *out of *n entries
 * (NULL, 0 when none). 0, or -1 after a message.
 */
int ms_wait_sites(const struct ms_select *s, struct ms_wait_site **out, uint32_t *n);
/* The length of the system-call prefix of a kernel symbol ("__x64_sys_"), or 0: not one. */
uint32_t ms_wait_syscall_name(const char *name);

#endif

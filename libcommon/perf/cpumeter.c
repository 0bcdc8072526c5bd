/* The recording's own CPU time: see perf/cpumeter.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "perf/cpumeter.h"
#include "util/error.h"

int ms_cpumeter_init(struct ms_cpumeter *m, const pid_t *pids, uint32_t n)
{
	memset(m, 0, sizeof(*m));
	if (n > MS_CPUMETER_PIDS_MAX - 1)
		return ms_error("--budget-pid: at most %d processes besides ms-collect, not %u",
				MS_CPUMETER_PIDS_MAX - 1, n);
	m->clocks[0] = CLOCK_PROCESS_CPUTIME_ID;
	m->n = 1;
	for (uint32_t i = 0; i < n; i++) {
		int err = clock_getcpuclockid(pids[i], &m->clocks[m->n]);

		if (err)
			return ms_error("--budget-pid: cannot read the CPU time of process %d "
					"(%s): give the pid of a running stage of this recording",
					(int)pids[i], strerror(err));
		m->pids[m->n++] = pids[i];
	}
	return 0;
}

uint64_t ms_cpumeter_read(struct ms_cpumeter *m)
{
	uint64_t sum = 0;
	struct timespec ts;

	m->gone = 0;
	for (uint32_t i = 0; i < m->n; i++) {
		if (clock_gettime(m->clocks[i], &ts) == 0) {
			uint64_t v = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;

			if (v > m->last[i])
				m->last[i] = v;
		} else {
			m->gone++;
		}
		sum += m->last[i];
	}
	return sum;
}

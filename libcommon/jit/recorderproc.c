/* What the JIT recorder reads of a live process: see recorderproc.h. */
#include "jit/recorderproc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "util/safeopen.h"

/* The unsigned decimal at *p (after blanks), *p moved past it. -1 when none or too large. */
static int number(const char **p, const char *end, uint64_t *v)
{
	const char *q = *p;

	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q == end || *q < '0' || *q > '9')
		return -1;
	*v = 0;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (*v > (UINT64_MAX - 9) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(*q - '0');
	}
	*p = q;
	return 0;
}

/* The line of text that starts with key (at the start of a line), past key; NULL when none. */
static const char *line_of(const char *text, size_t len, const char *key, const char **eol)
{
	size_t k = strlen(key);

	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			nl = end;
		if ((size_t)(nl - p) >= k && !memcmp(p, key, k)) {
			*eol = nl;
			return p + k;
		}
		p = nl + 1;
	}
	return NULL;
}

int ms_jit_parse_status(const char *text, size_t len, uint32_t *nspid, uint32_t *euid)
{
	const char *p, *eol;
	uint64_t v, last = 0;
	int n = 0;

	/* NSpid lists the pid in each namespace, outermost first: the process's own is last. */
	if (!(p = line_of(text, len, "NSpid:", &eol)) && !(p = line_of(text, len, "Pid:", &eol)))
		return -1;
	while (number(&p, eol, &v) == 0) {
		last = v;
		n++;
	}
	if (!n || !last || last > UINT32_MAX)
		return -1;
	*nspid = (uint32_t)last;
	/* Uid: real, effective, saved, file system. */
	if (!(p = line_of(text, len, "Uid:", &eol)) || number(&p, eol, &v) < 0 ||
	    number(&p, eol, &v) < 0 || v > UINT32_MAX)
		return -1;
	*euid = (uint32_t)v;
	return 0;
}

int ms_jit_parse_starttime(const char *text, size_t len, uint64_t *ticks)
{
	const char *p = NULL, *end = text + len;

	for (const char *q = text; q < end; q++)
		if (*q == ')')
			p = q + 1;
	if (!p)
		return -1;
	/* Past the name: field 3 (state) on; starttime is field 22, the 20th after it. */
	for (int field = 3; field < 22; field++) {
		while (p < end && *p == ' ')
			p++;
		while (p < end && *p != ' ')
			p++;
		if (p == end)
			return -1;
	}
	return number(&p, end, ticks) < 0 || (p < end && *p != ' ' && *p != '\n') ? -1 : 0;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A small /proc file into buf (NUL-terminated): its length, or -1 with errno. */
static long read_proc(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	size_t got = 0;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? (errno = ESRCH, -1) : -1;
	while (got < size - 1) {
		ssize_t n = read(fd, buf + got, size - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (long)got;
}

int ms_jit_proc_read(pid_t pid, struct ms_jit_proc *p)
{
	char buf[4096];
	long n, hz = sysconf(_SC_CLK_TCK);
	uint64_t ticks, mono, boot, real;

	if ((n = read_proc(pid, "status", buf, sizeof(buf))) < 0)
		return -1;
	if (ms_jit_parse_status(buf, (size_t)n, &p->nspid, &p->euid) < 0)
		return errno = EPROTO, -1;
	if ((n = read_proc(pid, "stat", buf, sizeof(buf))) < 0)
		return -1;
	if (ms_jit_parse_starttime(buf, (size_t)n, &ticks) < 0 || hz <= 0 ||
	    ticks > UINT64_MAX / 1000000000ull)
		return errno = EPROTO, -1;
	p->start_boot_ns = ticks * (1000000000ull / (uint64_t)hz);
	/* The clocks read together: boot and real time differ by a constant (but for steps). */
	mono = clock_ns(CLOCK_MONOTONIC);
	boot = clock_ns(CLOCK_BOOTTIME);
	real = clock_ns(CLOCK_REALTIME);
	p->boot_minus_mono = boot > mono ? boot - mono : 0;
	p->start_real_ns = real - boot + p->start_boot_ns;
	return 0;
}

int ms_jit_map_open(pid_t pid, uint32_t nspid, struct stat *st)
{
	char path[64];
	int root, fd, err;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	if ((root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? (errno = ESRCH, -1) : -1;
	snprintf(path, sizeof(path), "tmp/perf-%u.map", nspid);
	/* The map grows without bound; each read takes a bounded part of it. */
	fd = ms_open_regular(root, path, MS_OPEN_NO_LINKS, UINT64_MAX, st, NULL);
	err = errno;
	close(root);
	errno = err;
	return fd;
}

long ms_jit_read_code(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	enum { PIECES = 32 };	/* MS_PROVE_STOP_MAX spans at most 17 pages */
	struct iovec local, remote[PIECES];
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), at = addr;
	unsigned n = 0;
	ssize_t got;

	if (!len || addr + len < addr)
		return errno = EINVAL, -1;
	/* One element per page: a page that cannot be read ends the bytes read there. */
	while (at < addr + len && n < PIECES) {
		uint64_t next = (at / page + 1) * page, stop = next < addr + len ? next : addr + len;

		remote[n++] = (struct iovec){ (void *)(uintptr_t)at, (size_t)(stop - at) };
		at = stop;
	}
	local = (struct iovec){ buf, (size_t)(at - addr) };
	got = process_vm_readv(pid, &local, 1, remote, n, 0);
	if (got <= 0)
		return got == 0 ? (errno = EFAULT, -1) : -1;
	return (long)got;
}

#include "perf/procfs.h"
#include "util/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A cursor over one line: every parser checks it stays inside. */
struct cursor {
	const char *p, *end;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* At least one digit in base 16 or 10, no overflow. */
static int number(struct cursor *c, unsigned base, uint64_t *out)
{
	uint64_t v = 0;
	const char *start = c->p;

	while (c->p < c->end) {
		int d = base == 16 ? hexval(*c->p) : (*c->p >= '0' && *c->p <= '9' ? *c->p - '0' : -1);

		if (d < 0)
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -1;
		v = v * base + (uint64_t)d;
		c->p++;
	}
	if (c->p == start)
		return -1;
	*out = v;
	return 0;
}

static int expect(struct cursor *c, char ch)
{
	if (c->p >= c->end || *c->p != ch)
		return -1;
	c->p++;
	return 0;
}

int ms_maps_parse_line(const char *line, size_t len, struct ms_maps_entry *e)
{
	static const char deleted[] = " (deleted)";
	struct cursor c = { line, line + len };
	uint64_t maj, min;

	memset(e, 0, sizeof(*e));
	if (len && line[len - 1] == '\n')
		c.end--;
	if (number(&c, 16, &e->start) || expect(&c, '-') || number(&c, 16, &e->end) ||
	    expect(&c, ' ') || e->end < e->start)
		return -1;
	if (c.end - c.p < 5 || c.p[4] != ' ')
		return -1;
	if ((c.p[0] != 'r' && c.p[0] != '-') || (c.p[1] != 'w' && c.p[1] != '-') ||
	    (c.p[2] != 'x' && c.p[2] != '-') || (c.p[3] != 'p' && c.p[3] != 's'))
		return -1;
	e->prot = (c.p[0] == 'r' ? PROT_READ : 0) | (c.p[1] == 'w' ? PROT_WRITE : 0) |
		  (c.p[2] == 'x' ? PROT_EXEC : 0);
	e->flags = c.p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	c.p += 5;
	if (number(&c, 16, &e->pgoff) || expect(&c, ' ') ||
	    number(&c, 16, &maj) || expect(&c, ':') || number(&c, 16, &min) ||
	    expect(&c, ' ') || number(&c, 10, &e->ino))
		return -1;
	if (maj > UINT32_MAX || min > UINT32_MAX)
		return -1;
	e->maj = (uint32_t)maj;
	e->min = (uint32_t)min;
	if (c.p < c.end && *c.p != ' ')
		return -1;
	while (c.p < c.end && *c.p == ' ')
		c.p++;
	e->path = c.p;
	e->path_len = (uint32_t)(c.end - c.p);
	e->deleted = e->path_len > sizeof(deleted) - 1 &&
		     !memcmp(c.end - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1);
	return 0;
}

int ms_maps_read(pid_t pid, ms_maps_fn fn, void *data)
{
	char path[64];
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return ms_error_errno("cannot open '%s'", path);
	while ((n = getline(&line, &cap, f)) > 0) {
		struct ms_maps_entry e;

		lineno++;
		if (ms_maps_parse_line(line, (size_t)n, &e) < 0) {
			ms_warn("'%s' line %u: not a mapping; skipped", path, lineno);
			continue;
		}
		ret = fn(&e, data);
		if (ret)
			break;
	}
	if (!ret && ferror(f))
		ret = ms_error_errno("cannot read '%s'", path);
	free(line);
	fclose(f);
	return ret;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int ms_tasks_list(pid_t pid, pid_t **tids, size_t *alloc)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		if (errno == ENOENT)
			errno = ESRCH;
		if (errno == ESRCH)
			return -1;
		return ms_error_errno("cannot list '%s'", path);
	}
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || *end || tid <= 0)
			continue;
		if (n == *alloc) {
			size_t grow = *alloc ? *alloc * 2 : 64;
			pid_t *p = realloc(*tids, grow * sizeof(**tids));

			if (!p) {
				closedir(d);
				return ms_error("out of memory listing '%s'", path);
			}
			*tids = p;
			*alloc = grow;
		}
		(*tids)[n++] = (pid_t)tid;
	}
	closedir(d);
	qsort(*tids, n, sizeof(**tids), cmp_pid);
	return (int)n;
}

/* Read a small /proc file whole; -1 without a message when it is gone. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -1;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && !got) {
				close(fd);
				return -1;
			}
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	return (ssize_t)got;
}

int ms_task_comm(pid_t pid, pid_t tid, char *buf, size_t size)
{
	char path[80];
	ssize_t n;

	if (!size)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	n = read_small(path, buf, size - 1);
	if (n < 0)
		return -1;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return (int)n;
}

int ms_proc_cmdline(pid_t pid, char *buf, size_t size, char **argv, int max_args)
{
	char path[64];
	ssize_t n;
	int argc = 0;
	size_t i = 0;

	if (!size)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_small(path, buf, size - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	while (i < (size_t)n && argc < max_args) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	return argc;
}

bool ms_proc_alive(pid_t pid)
{
	char path[64], buf[512];
	ssize_t n;
	const char *paren;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = read_small(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold ')' itself; the state follows the last. */
	paren = strrchr(buf, ')');
	if (!paren || paren[1] != ' ' || !paren[2])
		return true;
	return paren[2] != 'Z' && paren[2] != 'X' && paren[2] != 'x';
}

pid_t ms_proc_tgid(pid_t tid)
{
	char path[64], buf[4096];
	ssize_t n;
	const char *line;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	n = read_small(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	line = strstr(buf, "\nTgid:");
	if (!line)
		return -1;
	return (pid_t)strtol(line + 6, NULL, 10);
}

int ms_cpu_list_parse(const char *s, int *cpus, int max)
{
	struct cursor c = { s, s + strlen(s) };
	int n = 0;

	while (c.end > c.p && (c.end[-1] == '\n' || c.end[-1] == ' '))
		c.end--;
	if (c.p == c.end)
		return -1;
	for (;;) {
		uint64_t lo, hi;

		if (number(&c, 10, &lo) < 0)
			return -1;
		hi = lo;
		if (c.p < c.end && *c.p == '-') {
			c.p++;
			if (number(&c, 10, &hi) < 0 || hi < lo)
				return -1;
		}
		if (hi > 1u << 20)
			return -1;
		for (uint64_t cpu = lo; cpu <= hi; cpu++) {
			if (n == max)
				return -1;
			cpus[n++] = (int)cpu;
		}
		if (c.p == c.end)
			return n;
		if (expect(&c, ',') < 0)
			return -1;
	}
}

int ms_cpus_online(int *cpus, int max)
{
	static const char path[] = "/sys/devices/system/cpu/online";
	char buf[4096];
	ssize_t n = read_small(path, buf, sizeof(buf) - 1);
	int count;

	if (n < 0)
		return ms_error_errno("cannot read '%s'", path);
	buf[n] = '\0';
	count = ms_cpu_list_parse(buf, cpus, max);
	if (count < 0)
		return ms_error("'%s': cannot parse the CPU list '%.40s' (at most %d CPUs)",
				path, buf, max);
	return count;
}

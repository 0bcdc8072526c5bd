/* Populating a mapping from a thread: see prefault.h. */
#include "util/prefault.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct ms_prefault {
	void *p;
	size_t len;
	pthread_t tid;
};

#ifdef MADV_POPULATE_READ
/*
 * MADV_POPULATE_READ faults like a read but returns EFAULT where a read
 * would raise SIGBUS (a file cut short). Populating a whole range walks
 * and pins every page after faulting it, a third more CPU time than the
 * mapping itself; so the thread populates one page where one fault maps
 * many, and the whole range only where it finds that one did not:
 *  - a read fault on a file maps the pages around it that are in the page
 *    cache (the kernel's fault-around, 64 KiB): one page per FAULT_STEP;
 *  - a file written in large blocks (as the stream writer does) is cached
 *    in 2 MiB folios, which one fault maps whole with a single PMD: one
 *    page per PMD, when the PMD's last page is present after its first
 *    was populated (/proc/self/pagemap tells, without a fault).
 * Where pagemap shows that stepping left pages out (no fault-around, as
 * in anonymous memory), the PMD's range is populated whole. Without
 * pagemap the thread steps, and what it left out faults when read.
 */
#define FAULT_STEP (64u * 1024u)

static bool populate(char *p, size_t len)
{
	return madvise(p, len, MADV_POPULATE_READ) == 0;
}

/* Whether the page at p is mapped; false when pagemap cannot tell. */
static bool present(int pagemap, const char *p, size_t page)
{
	uint64_t e;

	return pagemap >= 0 &&
	       pread(pagemap, &e, sizeof(e), (off_t)((uintptr_t)p / page * sizeof(e))) ==
		       (ssize_t)sizeof(e) &&
	       (e >> 63) & 1;
}

/*
 * Whether a file just written in large blocks is cached in 2 MiB folios,
 * judged where probed: each of the mapping's first, middle and last whole
 * PMDs maps as one after a fault on its first page. The reader then
 * faults a PMD each 2 MiB, which costs less than a thread doing it (in
 * ms-decode and ms-unwind on a fresh 170 MB stream, 1 to 2 ms of CPU time
 * less each). A file left in small folios (written in small pieces, or
 * split since, as memory reclaim does to a file left idle for minutes)
 * faults each 64 KiB, and the thread is worth it.
 */
static bool pmd_mapped(const void *p, size_t len)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t page = ps > 0 ? (size_t)ps : 4096;
	size_t pmd = page * (page / 8);
	uintptr_t first = ((uintptr_t)p + pmd - 1) / pmd * pmd;
	uintptr_t end = ((uintptr_t)p + len) / pmd * pmd;	/* of whole PMDs */
	uintptr_t probe[3];
	int pagemap;
	bool yes = true;

	if (end <= first)
		return false;
	probe[0] = first;
	probe[1] = first + (end - first) / pmd / 2 * pmd;
	probe[2] = end - pmd;
	if ((pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	for (int i = 0; i < 3 && yes; i++)
		yes = populate((char *)probe[i], page) &&
		      present(pagemap, (const char *)probe[i] + pmd - page, page);
	close(pagemap);
	return yes;
}

static void *populate_thread(void *arg)
{
	struct ms_prefault *pf = arg;
	long ps = sysconf(_SC_PAGESIZE);
	size_t page = ps > 0 ? (size_t)ps : 4096;
	size_t pmd = page * (page / 8);	/* what one page-table page maps */
	size_t step = page > FAULT_STEP ? page : FAULT_STEP;
	char *p = (char *)((uintptr_t)pf->p / page * page), *end = (char *)pf->p + pf->len;
	int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	while (p < end) {
		/* to the next PMD boundary */
		char *next = (char *)(((uintptr_t)p / pmd + 1) * pmd);
		char *last;

		if (next > end || next < p)
			next = end;
		last = (char *)((uintptr_t)(next - 1) / page * page);
		if (!populate(p, page))
			break;
		if (last > p && !present(pagemap, last, page)) {
			for (char *q = p + step; q < next; q += step)
				if (!populate(q, page))
					goto out;
			/* no fault-around (anonymous memory): every page */
			if (pagemap >= 0 && !present(pagemap, p + page, page) &&
			    !populate(p, (size_t)(next - p)))
				break;
		}
		p = next;
	}
out:
	if (pagemap >= 0)
		close(pagemap);
	return NULL;
}
#endif

struct ms_prefault *ms_prefault_start(const void *p, size_t len)
{
#ifdef MADV_POPULATE_READ
	/* a smaller mapping faults in faster than a thread starts and ends */
	struct ms_prefault *pf = len >= MS_PREFAULT_MIN && !pmd_mapped(p, len) ?
					 malloc(sizeof(*pf)) : NULL;

	if (!pf)
		return NULL;
	pf->p = (void *)p;
	pf->len = len;
	if (pthread_create(&pf->tid, NULL, populate_thread, pf) != 0) {
		free(pf);
		return NULL;
	}
	return pf;
#else
	(void)p;
	(void)len;
	return NULL;
#endif
}

void ms_prefault_wait(struct ms_prefault *pf)
{
	if (!pf)
		return;
	pthread_join(pf->tid, NULL);
	free(pf);
}

void ms_populate(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	long ps = sysconf(_SC_PAGESIZE);
	uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096;
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t e = ((uintptr_t)p + len) & ~(page - 1);

	if (e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

void *ms_pages_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void ms_pages_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

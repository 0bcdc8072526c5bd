/* Populating a mapping from a thread: see prefault.h. */
#include "util/prefault.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

struct ms_prefault {
	void *p;
	size_t len;
	pthread_t tid;
};

static void *populate(void *arg)
{
	struct ms_prefault *pf = arg;

	madvise(pf->p, pf->len, MADV_POPULATE_READ);
	return NULL;
}

struct ms_prefault *ms_prefault_start(const void *p, size_t len)
{
#ifdef MADV_POPULATE_READ
	struct ms_prefault *pf = len ? malloc(sizeof(*pf)) : NULL;

	if (!pf)
		return NULL;
	pf->p = (void *)p;
	pf->len = len;
	if (pthread_create(&pf->tid, NULL, populate, pf) != 0) {
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

/* The SIGBUS guard of mapped inputs: see util/mapguard.h. */
#include "util/mapguard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * The slots are read by the handler, which may run on any thread at any
 * time: plain atomics, no locks. start 0 marks a free slot; cut 0 means
 * not cut (a mapping never starts at address 0).
 */
struct guard {
	_Atomic uintptr_t start, end, cut;
};

static struct guard guards[MS_MAPGUARD_MAX];
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction previous;	/* the handler before ours: faults not ours go there */
static _Atomic uintptr_t page_mask;

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	int saved = errno;

	(void)uctx;
	for (int i = 0; i < MS_MAPGUARD_MAX; i++) {
		uintptr_t start = atomic_load(&guards[i].start), end = atomic_load(&guards[i].end);
		uintptr_t page = a & atomic_load(&page_mask), cut;

		if (!start || a < start || a >= end)
			continue;
		/*
		 * Zeros from the faulting page on, in place of the file's pages
		 * that are gone; the read that faulted is made again and finds them.
		 */
		if (mmap((void *)page, end - page, PROT_READ,
			 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
			break;
		cut = atomic_load(&guards[i].cut);
		while ((!cut || page < cut) &&
		       !atomic_compare_exchange_weak(&guards[i].cut, &cut, page))
			;
		errno = saved;
		return;
	}
	/* Not ours: the handler before us, else the default action when the fault repeats. */
	errno = saved;
	if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction)
		previous.sa_sigaction(sig, si, uctx);
	else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
		 previous.sa_handler)
		previous.sa_handler(sig);
	else
		signal(sig, SIG_DFL);
}

/*
 * Ours unless it is already: checked at every guard, since a test harness
 * (cmocka) puts its own handler in place around each test; the one it had
 * is kept and called for faults that are not ours.
 */
static bool install(void)
{
	struct sigaction sa, cur;
	bool ok = true;

	pthread_mutex_lock(&install_lock);
	if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_sigbus)
		goto out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	atomic_store(&page_mask, ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1));
	ok = sigaction(SIGBUS, &sa, &previous) == 0;
out:
	pthread_mutex_unlock(&install_lock);
	return ok;
}

int ms_mapguard_add(const void *addr, size_t len)
{
	if (!addr || !len || !install())
		return -1;
	for (int i = 0; i < MS_MAPGUARD_MAX; i++) {
		uintptr_t none = 0;

		/* Claimed by its start; end and cut are set before the mapping is read. */
		if (atomic_compare_exchange_strong(&guards[i].start, &none, (uintptr_t)-1)) {
			atomic_store(&guards[i].cut, 0);
			atomic_store(&guards[i].end, (uintptr_t)addr + len);
			atomic_store(&guards[i].start, (uintptr_t)addr);
			return i;
		}
	}
	return -1;
}

void ms_mapguard_remove(int handle)
{
	if (handle < 0 || handle >= MS_MAPGUARD_MAX)
		return;
	atomic_store(&guards[handle].end, 0);
	atomic_store(&guards[handle].cut, 0);
	atomic_store(&guards[handle].start, 0);
}

bool ms_mapguard_cut(int handle, size_t *offset)
{
	uintptr_t cut;

	if (handle < 0 || handle >= MS_MAPGUARD_MAX)
		return false;
	cut = atomic_load_explicit(&guards[handle].cut, memory_order_acquire);
	if (!cut)
		return false;
	*offset = cut - atomic_load(&guards[handle].start);
	return true;
}

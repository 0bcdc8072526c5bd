/* process_vm_readv, all or nothing (pymem.h). */
#include <errno.h>
#include <sys/uio.h>
#include "python/pymem.h"

int ms_py_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (addr == 0 || addr + len < addr) {
		errno = EFAULT;
		return -1;
	}
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

/* process_vm_readv, all or nothing (pymem.h). */
#include <errno.h>
#include <limits.h>
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

int ms_py_readv(pid_t pid, const uint64_t *addrs, uint32_t n, size_t len, void *buf)
{
	enum { CHUNK = 256 };	/* under IOV_MAX: a stack's iovecs */
	struct iovec local = { buf, 0 }, remote[CHUNK];

	for (uint32_t at = 0; at < n;) {
		uint32_t k = n - at < CHUNK ? n - at : CHUNK;

		for (uint32_t i = 0; i < k; i++) {
			uint64_t a = addrs[at + i];

			if (a == 0 || a + len < a) {
				errno = EFAULT;
				return -1;
			}
			remote[i] = (struct iovec){ (void *)(uintptr_t)a, len };
		}
		local.iov_base = (char *)buf + (size_t)at * len;
		local.iov_len = (size_t)k * len;
		ssize_t got = process_vm_readv(pid, &local, 1, remote, k, 0);
		if (got < 0)
			return -1;
		if ((size_t)got != local.iov_len) {
			errno = EFAULT;
			return -1;
		}
		at += k;
	}
	return 0;
}

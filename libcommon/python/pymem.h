/*
 * Reading another process's memory with process_vm_readv: all of a
 * range or nothing (a partial read is a failure, the caller never uses
 * bytes it did not get).
 */
#ifndef MS_PYTHON_PYMEM_H
#define MS_PYTHON_PYMEM_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read len bytes at addr of pid into buf: 0, or -1 (errno set; EFAULT for a short read). */
int ms_py_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/*
 * Read len bytes at each of n addresses, one after another into buf (n x
 * len bytes), in as few calls as the kernel takes (one per IOV_MAX
 * ranges): 0, or -1 (errno set; EFAULT for a short read).
 */
int ms_py_readv(pid_t pid, const uint64_t *addrs, uint32_t n, size_t len, void *buf);

#endif

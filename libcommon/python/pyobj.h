/*
 * Reading a live CPython process's memory and its str and bytes objects
 * through a layout (layout.h), shared by the frame walker (walk.h) and
 * the code reader (codeobj.h). Every read is all or nothing (pymem.h) and
 * counted against a budget; every object is proved by its ob_type and its
 * size bounded before its bytes are believed. A failure leaves what
 * failed, on which address, in the reader's reason.
 */
#ifndef MS_PYTHON_PYOBJ_H
#define MS_PYTHON_PYOBJ_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "python/layout.h"

/* The largest object header read: offsets are below MS_PY_OFFSET_MAX, structures far smaller. */
#define MS_PY_OBJ_HDR_MAX 1024

enum ms_py_read {
	MS_PY_READ_OK = 0,
	MS_PY_READ_UNREADABLE,		/* a read failed: the memory changed or is gone */
	MS_PY_READ_INVALID,		/* not what the layout says (type, size, encoding) */
	MS_PY_READ_BUDGET,		/* the reader's budget of bytes is spent */
};

/*
 * Where a reader's bytes come from: NULL, the process (ms_py_read); a
 * test gives a fake memory. Same contract as ms_py_read: all or nothing,
 * 0 or -1 with errno set.
 */
typedef int (*ms_py_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

struct ms_py_reader {
	pid_t pid;
	const struct ms_py_layout *l;
	ms_py_read_fn read;		/* NULL: process_vm_readv of pid */
	void *read_arg;
	uint64_t bytes;			/* read so far */
	uint64_t budget;		/* a read past this many bytes fails: MS_PY_READ_BUDGET */
	uint8_t *scratch;		/* a str's characters: 4 * MS_PY_STR_MAX bytes (walk.h) */
	char reason[200];
};

/* Read len bytes at addr (what names them in the reason). */
enum ms_py_read ms_py_read_mem(struct ms_py_reader *r, uint64_t addr, void *buf, size_t len,
			       const char *what);
/* Read len bytes at each of n addresses into buf, n x len bytes (pymem.h's ms_py_readv). */
enum ms_py_read ms_py_read_many(struct ms_py_reader *r, const uint64_t *addrs, uint32_t n,
				size_t len, void *buf, const char *what);
/*
 * The str object at addr as UTF-8 into out (cap bytes, NUL-terminated),
 * *len its bytes: proved a str of at most MS_PY_STR_MAX characters.
 */
enum ms_py_read ms_py_read_str(struct ms_py_reader *r, uint64_t addr, const char *what, char *out,
			       size_t cap, uint32_t *len);
/*
 * The bytes object at addr: proved bytes of at most max bytes; *n its
 * size, *data where its bytes begin (read them with ms_py_read_mem).
 */
enum ms_py_read ms_py_read_bytes_head(struct ms_py_reader *r, uint64_t addr, const char *what,
				      uint64_t max, uint64_t *n, uint64_t *data);

/* How much of an object to read for fields of width bytes at offs. */
uint32_t ms_py_fields_end(const uint32_t *offs, size_t n, uint32_t width);

/* Little-endian fields of a header read. */
uint64_t ms_py_u64(const uint8_t *b, uint32_t off);
uint32_t ms_py_u32(const uint8_t *b, uint32_t off);

#endif

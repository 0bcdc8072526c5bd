/* Reading a live CPython process's memory, str and bytes objects (pyobj.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "python/pyobj.h"
#include "python/pymem.h"
#include "python/pyparse.h"
#include "python/walk.h"

/* Say why, return status. */
static enum ms_py_read fail(struct ms_py_reader *r, enum ms_py_read status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	return status;
}

uint32_t ms_py_fields_end(const uint32_t *offs, size_t n, uint32_t width)
{
	uint32_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (offs[i] + width > m)
			m = offs[i] + width;
	return m;
}

uint64_t ms_py_u64(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

uint32_t ms_py_u32(const uint8_t *b, uint32_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

enum ms_py_read ms_py_read_mem(struct ms_py_reader *r, uint64_t addr, void *buf, size_t len,
			       const char *what)
{
	if (r->bytes + len > r->budget)
		return fail(r, MS_PY_READ_BUDGET, "%llu bytes read before %s",
			    (unsigned long long)r->budget, what);
	r->bytes += len;
	if ((r->read ? r->read(r->read_arg, addr, buf, len) : ms_py_read(r->pid, addr, buf, len)) < 0) {
		int e = errno;

		fail(r, MS_PY_READ_UNREADABLE, "%s at 0x%llx of process %d: %s", what,
		     (unsigned long long)addr, (int)r->pid, strerror(e));
		errno = e;	/* the caller may tell a process gone (ESRCH) */
		return MS_PY_READ_UNREADABLE;
	}
	return MS_PY_READ_OK;
}

enum ms_py_read ms_py_read_many(struct ms_py_reader *r, const uint64_t *addrs, uint32_t n,
				size_t len, void *buf, const char *what)
{
	uint64_t total = (uint64_t)n * len;

	if (r->bytes + total > r->budget)
		return fail(r, MS_PY_READ_BUDGET, "%llu bytes read before %s",
			    (unsigned long long)r->budget, what);
	r->bytes += total;
	if (!r->read) {
		if (ms_py_readv(r->pid, addrs, n, len, buf) == 0)
			return MS_PY_READ_OK;
		return fail(r, MS_PY_READ_UNREADABLE, "%s (%u ranges) of process %d: %s", what, n,
			    (int)r->pid, strerror(errno));
	}
	for (uint32_t i = 0; i < n; i++)
		if (r->read(r->read_arg, addrs[i], (uint8_t *)buf + (size_t)i * len, len) < 0)
			return fail(r, MS_PY_READ_UNREADABLE, "%s at 0x%llx of process %d: %s", what,
				    (unsigned long long)addrs[i], (int)r->pid, strerror(errno));
	return MS_PY_READ_OK;
}

enum ms_py_read ms_py_read_str(struct ms_py_reader *r, uint64_t addr, const char *what, char *out,
			       size_t cap, uint32_t *len)
{
	const struct ms_py_offsets *o = &r->l->off;
	uint8_t h[MS_PY_OBJ_HDR_MAX];
	uint32_t data_off;
	enum ms_py_ukind kind;
	enum ms_py_read s;
	uint64_t n;
	int got;

	if (o->uni_ascii_size > sizeof(h))
		return fail(r, MS_PY_READ_INVALID, "the layout's str header is too large");
	if ((s = ms_py_read_mem(r, addr, h, o->uni_ascii_size, what)) != MS_PY_READ_OK)
		return s;
	if (ms_py_u64(h, o->ob_type) != r->l->unicode_type)
		return fail(r, MS_PY_READ_INVALID, "%s at 0x%llx is not a str", what,
			    (unsigned long long)addr);
	n = ms_py_u64(h, o->uni_length);
	if (n > MS_PY_STR_MAX)
		return fail(r, MS_PY_READ_INVALID, "%s at 0x%llx has %llu characters (more than %u)",
			    what, (unsigned long long)addr, (unsigned long long)n, MS_PY_STR_MAX);
	if (ms_py_unicode_data(o, ms_py_u32(h, o->uni_state), &data_off, &kind) < 0)
		return fail(r, MS_PY_READ_INVALID, "%s at 0x%llx: a str state not read (0x%x)", what,
			    (unsigned long long)addr, ms_py_u32(h, o->uni_state));
	if ((s = ms_py_read_mem(r, addr + data_off, r->scratch, n * kind, what)) != MS_PY_READ_OK)
		return s;
	got = ms_py_unicode_utf8(kind, r->scratch, n, out, cap);
	if (got < 0)
		return fail(r, MS_PY_READ_INVALID, "%s at 0x%llx does not fit", what,
			    (unsigned long long)addr);
	*len = (uint32_t)got;
	return MS_PY_READ_OK;
}

enum ms_py_read ms_py_read_bytes_head(struct ms_py_reader *r, uint64_t addr, const char *what,
				      uint64_t max, uint64_t *n, uint64_t *data)
{
	const struct ms_py_offsets *o = &r->l->off;
	uint8_t h[MS_PY_OBJ_HDR_MAX];
	enum ms_py_read s;

	if (o->bytes_sval > sizeof(h))
		return fail(r, MS_PY_READ_INVALID, "the layout's bytes header is too large");
	if ((s = ms_py_read_mem(r, addr, h, o->bytes_sval, what)) != MS_PY_READ_OK)
		return s;
	if (ms_py_u64(h, o->ob_type) != r->l->bytes_type)
		return fail(r, MS_PY_READ_INVALID, "%s at 0x%llx is not bytes", what,
			    (unsigned long long)addr);
	*n = ms_py_u64(h, o->bytes_size);
	if (*n > max)
		return fail(r, MS_PY_READ_INVALID, "%s at 0x%llx has %llu bytes (more than %llu)", what,
			    (unsigned long long)addr, (unsigned long long)*n, (unsigned long long)max);
	*data = addr + o->bytes_sval;
	return MS_PY_READ_OK;
}

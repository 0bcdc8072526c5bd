/* Reading and proving one code object by its address (codeobj.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "python/codeobj.h"
#include "python/pyobj.h"
#include "python/pyparse.h"

#define HDR_MAX MS_PY_OBJ_HDR_MAX
#define u64 ms_py_u64
#define u32 ms_py_u32

/* Set status and reason; returns the status. */
static uint32_t fail(struct ms_py_code_info *o, uint32_t status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	o->status = status;
	vsnprintf(o->reason, sizeof(o->reason), fmt, ap);
	va_end(ap);
	return status;
}

/* A status of the shared reader as a code status, with its reason: -1. */
static int read_failed(struct ms_py_code_info *o, const struct ms_py_reader *r, enum ms_py_read s)
{
	fail(o, s == MS_PY_READ_UNREADABLE ? MS_PY_CODE_UNREADABLE : MS_PY_CODE_INVALID, "%s",
	     r->reason);
	return -1;
}

/* A counted read: 0, or -1 after fail(). */
static int rd(struct ms_py_reader *r, struct ms_py_code_info *o, uint64_t addr, void *buf,
	      size_t len, const char *what)
{
	enum ms_py_read s = ms_py_read_mem(r, addr, buf, len, what);

	return s == MS_PY_READ_OK ? 0 : read_failed(o, r, s);
}

/* The str object at addr into out (MS_PY_CODE_STR_BYTES), *len its bytes: 0 or -1 after fail(). */
static int read_str(struct ms_py_reader *r, struct ms_py_code_info *o, uint64_t addr, char *out,
		    uint32_t *len, const char *what)
{
	enum ms_py_read s = ms_py_read_str(r, addr, what, out, MS_PY_CODE_STR_BYTES, len);

	return s == MS_PY_READ_OK ? 0 : read_failed(o, r, s);
}

uint32_t ms_py_code_read(pid_t pid, const struct ms_py_layout *l, uint64_t code, uint64_t stamp,
			 struct ms_py_code_info *o)
{
	const struct ms_py_offsets *off = &l->off;
	const uint32_t fields[] = { off->ob_type, off->co_filename, off->co_qualname,
				    off->co_firstlineno, off->co_linetable };
	uint32_t hdr = ms_py_fields_end(fields, sizeof(fields) / sizeof(fields[0]), 8);
	/* a name's characters go through the table's buffer, free until the table is read */
	struct ms_py_reader r = { .pid = pid, .l = l, .budget = UINT64_MAX, .scratch = o->linetable };
	uint8_t h[HDR_MAX];
	uint64_t tab, n, data;
	enum ms_py_read s;

	o->status = MS_PY_CODE_OK;
	o->reason[0] = '\0';
	o->qualname[0] = o->file[0] = '\0';
	o->qualname_len = o->file_len = o->linetable_len = 0;
	o->firstlineno = 0;
	o->code_start = 0;
	o->bytes = 0;
	if (ms_py_offsets_check(off) || hdr > HDR_MAX || off->uni_ascii_size > HDR_MAX ||
	    off->bytes_sval > HDR_MAX)
		return fail(o, MS_PY_CODE_INVALID, "the layout's offsets are out of range");
	if (rd(&r, o, code, h, hdr, "code object") < 0)
		goto out;
	if (u64(h, off->ob_type) != l->code_type) {
		fail(o, MS_PY_CODE_INVALID, "0x%llx is not a code object (its type is 0x%llx)",
		     (unsigned long long)code, (unsigned long long)u64(h, off->ob_type));
		goto out;
	}
	tab = u64(h, off->co_linetable);
	if (tab != stamp) {
		fail(o, MS_PY_CODE_INVALID,
		     "the code object at 0x%llx has co_linetable 0x%llx, not the walker's 0x%llx "
		     "(freed and replaced since)", (unsigned long long)code,
		     (unsigned long long)tab, (unsigned long long)stamp);
		goto out;
	}
	o->firstlineno = (int32_t)u32(h, off->co_firstlineno);
	if (o->firstlineno < 0) {
		fail(o, MS_PY_CODE_INVALID, "the code object at 0x%llx begins at line %d",
		     (unsigned long long)code, o->firstlineno);
		goto out;
	}
	if (read_str(&r, o, u64(h, off->co_qualname), o->qualname, &o->qualname_len,
		     "co_qualname") < 0 ||
	    read_str(&r, o, u64(h, off->co_filename), o->file, &o->file_len, "co_filename") < 0)
		goto out;
	o->code_start = code + off->co_code_adaptive;
	s = ms_py_read_bytes_head(&r, tab, "co_linetable", MS_PY_LINETABLE_MAX, &n, &data);
	if (s != MS_PY_READ_OK) {
		read_failed(o, &r, s);
		goto out;
	}
	if (n > MS_PY_LINETABLE_STREAM_MAX) {
		fail(o, MS_PY_CODE_NO_LINES,
		     "co_linetable at 0x%llx has %llu bytes (a stream carries at most %u)",
		     (unsigned long long)tab, (unsigned long long)n, MS_PY_LINETABLE_STREAM_MAX);
		goto out;
	}
	if (rd(&r, o, data, o->linetable, n, "co_linetable") < 0)
		goto out;
	o->linetable_len = (uint32_t)n;
out:
	o->bytes = r.bytes;
	return o->status;
}

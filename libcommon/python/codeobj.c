/* Reading and proving one code object by its address (codeobj.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "python/codeobj.h"
#include "python/pymem.h"
#include "python/pyparse.h"

/* The largest object header read: offsets are below MS_PY_OFFSET_MAX, structures far smaller. */
#define HDR_MAX 1024

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

/* A counted read: 0, or -1 after fail(UNREADABLE). */
static int rd(pid_t pid, struct ms_py_code_info *o, uint64_t addr, void *buf, size_t len,
	      const char *what)
{
	o->bytes += len;
	if (ms_py_read(pid, addr, buf, len) == 0)
		return 0;
	fail(o, MS_PY_CODE_UNREADABLE, "%s at 0x%llx of process %d: %s", what,
	     (unsigned long long)addr, (int)pid, strerror(errno));
	return -1;
}

static uint64_t u64(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static uint32_t u32(const uint8_t *b, uint32_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

/* The str object at addr into out (MS_PY_CODE_STR_BYTES), *len its bytes: 0 or -1 after fail(). */
static int read_str(pid_t pid, const struct ms_py_layout *l, struct ms_py_code_info *o,
		    uint64_t addr, char *out, uint32_t *len, const char *what)
{
	const struct ms_py_offsets *off = &l->off;
	/* the characters: at most MS_PY_STR_MAX of 4 bytes (the linetable buffer is free now) */
	uint8_t *data = o->linetable;
	uint8_t h[HDR_MAX];
	uint32_t data_off;
	enum ms_py_ukind kind;
	uint64_t n;
	int got;

	if (rd(pid, o, addr, h, off->uni_ascii_size, what) < 0)
		return -1;
	if (u64(h, off->ob_type) != l->unicode_type) {
		fail(o, MS_PY_CODE_INVALID, "%s at 0x%llx is not a str", what, (unsigned long long)addr);
		return -1;
	}
	n = u64(h, off->uni_length);
	if (n > MS_PY_STR_MAX) {
		fail(o, MS_PY_CODE_INVALID, "%s at 0x%llx has %llu characters (more than %u)", what,
		     (unsigned long long)addr, (unsigned long long)n, MS_PY_STR_MAX);
		return -1;
	}
	if (ms_py_unicode_data(off, u32(h, off->uni_state), &data_off, &kind) < 0) {
		fail(o, MS_PY_CODE_INVALID, "%s at 0x%llx: a str state not read (0x%x)", what,
		     (unsigned long long)addr, u32(h, off->uni_state));
		return -1;
	}
	if (rd(pid, o, addr + data_off, data, n * kind, what) < 0)
		return -1;
	got = ms_py_unicode_utf8(kind, data, n, out, MS_PY_CODE_STR_BYTES);
	if (got < 0) {
		fail(o, MS_PY_CODE_INVALID, "%s at 0x%llx does not fit", what, (unsigned long long)addr);
		return -1;
	}
	*len = (uint32_t)got;
	return 0;
}

static uint32_t max_end(const uint32_t *offs, size_t n, uint32_t width)
{
	uint32_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (offs[i] + width > m)
			m = offs[i] + width;
	return m;
}

uint32_t ms_py_code_read(pid_t pid, const struct ms_py_layout *l, uint64_t code, uint64_t stamp,
			 struct ms_py_code_info *o)
{
	const struct ms_py_offsets *off = &l->off;
	const uint32_t fields[] = { off->ob_type, off->co_filename, off->co_qualname,
				    off->co_firstlineno, off->co_linetable };
	uint32_t hdr = max_end(fields, sizeof(fields) / sizeof(fields[0]), 8);
	uint8_t h[HDR_MAX], bh[HDR_MAX];
	uint64_t tab, n;

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
	if (rd(pid, o, code, h, hdr, "code object") < 0)
		return o->status;
	if (u64(h, off->ob_type) != l->code_type)
		return fail(o, MS_PY_CODE_INVALID, "0x%llx is not a code object (its type is 0x%llx)",
			    (unsigned long long)code, (unsigned long long)u64(h, off->ob_type));
	tab = u64(h, off->co_linetable);
	if (tab != stamp)
		return fail(o, MS_PY_CODE_INVALID,
			    "the code object at 0x%llx has co_linetable 0x%llx, not the walker's 0x%llx "
			    "(freed and replaced since)", (unsigned long long)code,
			    (unsigned long long)tab, (unsigned long long)stamp);
	o->firstlineno = (int32_t)u32(h, off->co_firstlineno);
	if (o->firstlineno < 0)
		return fail(o, MS_PY_CODE_INVALID, "the code object at 0x%llx begins at line %d",
			    (unsigned long long)code, o->firstlineno);
	if (read_str(pid, l, o, u64(h, off->co_qualname), o->qualname, &o->qualname_len,
		     "co_qualname") < 0 ||
	    read_str(pid, l, o, u64(h, off->co_filename), o->file, &o->file_len, "co_filename") < 0)
		return o->status;
	o->code_start = code + off->co_code_adaptive;
	if (rd(pid, o, tab, bh, off->bytes_sval, "co_linetable") < 0)
		return o->status;
	if (u64(bh, off->ob_type) != l->bytes_type)
		return fail(o, MS_PY_CODE_INVALID, "co_linetable at 0x%llx is not bytes",
			    (unsigned long long)tab);
	n = u64(bh, off->bytes_size);
	if (n > MS_PY_LINETABLE_MAX)
		return fail(o, MS_PY_CODE_INVALID, "co_linetable at 0x%llx has %llu bytes (more than %u)",
			    (unsigned long long)tab, (unsigned long long)n, MS_PY_LINETABLE_MAX);
	if (n > MS_PY_LINETABLE_STREAM_MAX)
		return fail(o, MS_PY_CODE_NO_LINES,
			    "co_linetable at 0x%llx has %llu bytes (a stream carries at most %u)",
			    (unsigned long long)tab, (unsigned long long)n, MS_PY_LINETABLE_STREAM_MAX);
	if (rd(pid, o, tab + off->bytes_sval, o->linetable, n, "co_linetable") < 0)
		return o->status;
	o->linetable_len = (uint32_t)n;
	return MS_PY_CODE_OK;
}

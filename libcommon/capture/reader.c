/*
 * The one loader of captures. Everything a consumer may rely on (capture.h
 * lists the invariants) is checked here, before the capture is returned;
 * a file that fails any check gets one message naming it and the section.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>
#include <zlib.h>

#include "capture/format.h"
#include "capture/funcs.h"
#include "capture/internal.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/input.h"

struct load {
	const char *name;
	const unsigned char *buf;
	size_t len;
	void *owned;		/* buf when the loader read it: freed once decompressed */
	struct ms_capture *cap;
	/* decompressed known sections, by id */
	unsigned char *raw[MS_CAPF_SECTION_LAST + 1];
	uint64_t raw_len[MS_CAPF_SECTION_LAST + 1];
};

static int bad(struct load *l, const char *section, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(struct load *l, const char *section, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ms_error("capture '%s' is damaged in section '%s': %s", l->name, section, msg);
}

static const char *section_label(uint32_t id)
{
	const char *name = ms_capf_section_name(id);

	return name ? name : "unknown";
}

/* Which part of the file holds byte offset at: for "truncated" messages. */
static const char *where(const struct load *l, uint64_t at, uint32_t n_sections)
{
	uint32_t i;

	if (at < MS_CAPF_HEADER_SIZE)
		return "header";
	if (at < MS_CAPF_HEADER_SIZE + (uint64_t)n_sections * MS_CAPF_DIR_SIZE_BYTES)
		return "directory";
	for (i = 0; i < n_sections; i++) {
		const unsigned char *d = l->buf + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES;
		uint64_t off = ms_get_u64(d + MS_CAPF_DIR_OFFSET);
		uint64_t size = ms_get_u64(d + MS_CAPF_DIR_SIZE);

		if (at >= off && at - off < size)
			return section_label(ms_get_u32(d + MS_CAPF_DIR_ID));
	}
	return "directory";
}

/* Majors a later microscope may plausibly have reached; beyond is damage. */
#define MAJORS_AHEAD 64

/*
 * Whether b starts as a stream does: an LZ4 frame (ms-collect --lz4), or
 * the header record, an array whose kind 0 is followed by the stream's
 * name (microscope-stream(5)). For a hint only: nothing is read as one.
 */
static bool stream_bytes(const unsigned char *b, size_t len)
{
	static const unsigned char lz4[4] = { 0x04, 0x22, 0x4d, 0x18 };
	static const char name[] = "\xb1" "microscope-stream";

	if (len >= 4 && !memcmp(b, lz4, 4))
		return true;
	/* fixarray or array16, then 0, then the name as a fixstr of 17 bytes */
	for (size_t at = 2; at <= 4; at++)
		if (len >= at + sizeof(name) - 1 && b[at - 1] == 0 &&
		    !memcmp(b + at, name, sizeof(name) - 1))
			return true;
	return false;
}

static int check_header(struct load *l, uint32_t *n_sections)
{
	const unsigned char *b = l->buf;
	uint32_t major, flags, crc;
	uint64_t dir_end, file_size;

	if (l->len < 8 || memcmp(b, MS_CAPTURE_MAGIC, 8)) {
		if (l->len < 8 && !memcmp(b, MS_CAPTURE_MAGIC, l->len))
			return ms_error("capture '%s' is truncated: %zu bytes, in section 'header'",
					l->name, l->len);
		if (stream_bytes(b, l->len))
			return ms_error("'%s' is a microscope stream (what ms-collect and the other "
					"stages write), not a capture: make one with 'ms-decode %s | "
					"ms-unwind | ms-symbolize | ms-capture -o p.msc'", l->name,
					l->name);
		return ms_error("'%s' is not a microscope capture (no capture magic at byte 0)",
				l->name);
	}
	if (l->len < MS_CAPF_HEADER_SIZE)
		return ms_error("capture '%s' is truncated: %zu bytes, in section 'header'",
				l->name, l->len);
	/*
	 * The version comes first: a newer major may lay out the rest
	 * differently. One that no microscope could have written (0, or far
	 * beyond this one) is damage after the magic, not a newer format.
	 */
	major = ms_get_u32(b + MS_CAPF_MAJOR);
	if (major == 0 || major > MS_CAPTURE_MAJOR + MAJORS_AHEAD)
		return bad(l, "header", "the format version at byte %d reads %u, which is no "
			   "version of the format", MS_CAPF_MAJOR, major);
	if (major != MS_CAPTURE_MAJOR)
		return ms_error("capture '%s' is format %u.x; this microscope reads %u.x%s",
				l->name, major, MS_CAPTURE_MAJOR,
				major > MS_CAPTURE_MAJOR ? " (a newer microscope wrote it)" : "");
	*n_sections = ms_get_u32(b + MS_CAPF_N_SECTIONS);
	if (*n_sections > MS_CAPF_SECTIONS_MAX)
		return bad(l, "header", "%u sections (at most %u)", *n_sections,
			   MS_CAPF_SECTIONS_MAX);
	dir_end = MS_CAPF_HEADER_SIZE + (uint64_t)*n_sections * MS_CAPF_DIR_SIZE_BYTES;
	if (l->len < dir_end)
		return ms_error("capture '%s' is truncated: %zu bytes, in section 'directory'",
				l->name, l->len);
	crc = crc32_z(0, b, MS_CAPF_CHECKSUM);
	crc = crc32_z(crc, b + MS_CAPF_HEADER_SIZE, dir_end - MS_CAPF_HEADER_SIZE);
	if (crc != ms_get_u32(b + MS_CAPF_CHECKSUM))
		return bad(l, "directory", "checksum mismatch in the header or directory");
	file_size = ms_get_u64(b + MS_CAPF_FILE_SIZE);
	if (l->len < file_size)
		return ms_error("capture '%s' is truncated: %zu of %" PRIu64
				" bytes, in section '%s'", l->name, l->len, file_size,
				where(l, l->len, *n_sections));
	if (l->len > file_size)
		return bad(l, "header", "%zu bytes follow the end of the capture at byte %" PRIu64,
			   l->len - file_size, file_size);
	if (ms_get_u32(b + MS_CAPF_RESERVED))
		return bad(l, "header", "reserved field is not zero");
	flags = ms_get_u32(b + MS_CAPF_FLAGS);
	if (flags & MS_CAPF_FLAGS_REQUIRED & ~MS_CAPF_FLAGS_KNOWN)
		return ms_error("capture '%s' needs features this microscope lacks (flags 0x%08x); "
				"use a newer microscope", l->name, flags);
	l->cap->major = major;
	l->cap->minor = ms_get_u32(b + MS_CAPF_MINOR);
	l->cap->flags = flags;
	return 0;
}

static int decompress(struct load *l, const char *name, const unsigned char *src,
		      uint64_t size, unsigned char *dst, uint64_t raw_size)
{
	LZ4F_decompressionContext_t dctx;
	size_t in_pos = 0, out_pos = 0, ret = 1;
	LZ4F_errorCode_t err = LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION);

	if (LZ4F_isError(err))
		return ms_error("cannot decompress '%s': %s", l->name, LZ4F_getErrorName(err));
	while (in_pos < size) {
		size_t in_n = size - in_pos, out_n = raw_size - out_pos;

		ret = LZ4F_decompress(dctx, dst + out_pos, &out_n, src + in_pos, &in_n, NULL);
		if (LZ4F_isError(ret)) {
			LZ4F_freeDecompressionContext(dctx);
			return bad(l, name, "lz4 data is corrupt: %s", LZ4F_getErrorName(ret));
		}
		in_pos += in_n;
		out_pos += out_n;
		if (!ret || (!in_n && !out_n))
			break;
	}
	LZ4F_freeDecompressionContext(dctx);
	if (ret || in_pos != size)
		return bad(l, name, "lz4 data %s", in_pos != size && !ret ?
			   "has bytes after its end" : "holds more or less than the size the directory gives");
	if (out_pos != raw_size)
		return bad(l, name, "decompressed to %zu bytes, the directory says %" PRIu64,
			   out_pos, raw_size);
	return 0;
}

static int load_sections(struct load *l, uint32_t n_sections)
{
	uint64_t dir_end = MS_CAPF_HEADER_SIZE + (uint64_t)n_sections * MS_CAPF_DIR_SIZE_BYTES;
	uint32_t i, prev_id = 0, id;

	for (i = 0; i < n_sections; i++) {
		const unsigned char *d = l->buf + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES;
		uint64_t off = ms_get_u64(d + MS_CAPF_DIR_OFFSET);
		uint64_t size = ms_get_u64(d + MS_CAPF_DIR_SIZE);
		uint64_t raw_size = ms_get_u64(d + MS_CAPF_DIR_RAW_SIZE);
		uint32_t codec = ms_get_u32(d + MS_CAPF_DIR_CODEC);
		const char *name;

		id = ms_get_u32(d + MS_CAPF_DIR_ID);
		name = section_label(id);
		if (i && id <= prev_id)
			return bad(l, "directory", "section ids are not in increasing order (%u after %u)",
				   id, prev_id);
		prev_id = id;
		if (ms_get_u32(d + MS_CAPF_DIR_RESERVED))
			return bad(l, "directory", "reserved field of section %u is not zero", id);
		if (off < dir_end || off > l->len || size > l->len - off)
			return bad(l, name, "lies outside the file (offset %" PRIu64 ", %" PRIu64
				   " bytes; the file has %zu)", off, size, l->len);
		if (crc32_z(0, l->buf + off, size) != ms_get_u32(d + MS_CAPF_DIR_CHECKSUM))
			return bad(l, name, "checksum mismatch");
		/* Sections this version does not know come from a later minor: skip. */
		if (!ms_capf_section_name(id))
			continue;
		if (codec != MS_CAPF_CODEC_LZ4F)
			return bad(l, name, "unknown compression %u", codec);
		/*
		 * LZ4 expands at most about 255 times: a larger raw size is a lie
		 * that would make us allocate memory the data cannot fill.
		 */
		if (raw_size < MS_CAPF_TABLE_HEADER || raw_size / 256 > size + 64)
			return bad(l, name, "implausible size (%" PRIu64 " bytes from %" PRIu64 ")",
				   raw_size, size);
		l->raw[id] = malloc(raw_size);
		if (!l->raw[id])
			return ms_error("out of memory loading section '%s' of '%s' (%" PRIu64 " bytes)",
					name, l->name, raw_size);
		l->raw_len[id] = raw_size;
		if (decompress(l, name, l->buf + off, size, l->raw[id], raw_size) < 0)
			return -1;
	}
	/* Sections added by minor 1 are absent from a 1.0 file: empty tables. */
	for (id = 1; id <= MS_CAPF_SECTION_LAST_1_1; id++)
		if (!l->raw[id] && (l->cap->minor >= 1 || id <= MS_CAPF_SECTION_LAST_1_0))
			return bad(l, section_label(id), "the section is missing");
	/*
	 * Counts come with the required flag that makes an older reader
	 * refuse the file; counts without it would be read as 1 by one.
	 */
	if ((l->cap->flags & MS_CAPTURE_WEIGHTED) && l->cap->minor < 2)
		return bad(l, "header", "the weighted flag (0x%08x) in a file of format 1.%u: "
			   "it came with 1.2", (unsigned)MS_CAPTURE_WEIGHTED, l->cap->minor);
	if ((l->cap->flags & MS_CAPTURE_WEIGHTED) && !l->raw[MS_CAPF_COUNTS])
		return bad(l, "counts", "the section is missing (the header sets the weighted flag)");
	if (!(l->cap->flags & MS_CAPTURE_WEIGHTED) && l->raw[MS_CAPF_COUNTS])
		return bad(l, "counts", "the header does not set the weighted flag (0x%08x) that "
			   "the section needs", (unsigned)MS_CAPTURE_WEIGHTED);
	/* Duty rows likewise: skipped by an older reader, time would be undercounted. */
	if ((l->cap->flags & MS_CAPTURE_DUTY) && l->cap->minor < 3)
		return bad(l, "header", "the duty flag (0x%08x) in a file of format 1.%u: "
			   "it came with 1.3", (unsigned)MS_CAPTURE_DUTY, l->cap->minor);
	if ((l->cap->flags & MS_CAPTURE_DUTY) && !l->raw[MS_CAPF_DUTY])
		return bad(l, "duty", "the section is missing (the header sets the duty flag)");
	if (!(l->cap->flags & MS_CAPTURE_DUTY) && l->raw[MS_CAPF_DUTY])
		return bad(l, "duty", "the header does not set the duty flag (0x%08x) that "
			   "the section needs", (unsigned)MS_CAPTURE_DUTY);
	/* Loss rows need no flag (an older reader skips them), but came with 1.4. */
	if (l->raw[MS_CAPF_LOSSES] && l->cap->minor < MS_CAPTURE_MINOR_LOSSES)
		return bad(l, "losses", "the section in a file of format 1.%u: it came with 1.%u",
			   l->cap->minor, MS_CAPTURE_MINOR_LOSSES);
	/*
	 * Intervals and evidence need no required flag (an older reader skips
	 * them and keeps the samples), but come with 1.5 and exactly with the
	 * off-cpu flag, which tells "nothing was off CPU" from "not recorded".
	 */
	if ((l->cap->flags & MS_CAPTURE_OFF_CPU) && l->cap->minor < MS_CAPTURE_MINOR_OFF_CPU)
		return bad(l, "header", "the off-cpu flag (0x%08x) in a file of format 1.%u: "
			   "it came with 1.%u", (unsigned)MS_CAPTURE_OFF_CPU, l->cap->minor,
			   MS_CAPTURE_MINOR_OFF_CPU);
	/* Perf-map rows need no flag either (an older reader skips them), but came with 1.6. */
	if (l->raw[MS_CAPF_PERF_MAPS] && l->cap->minor < MS_CAPTURE_MINOR_JIT)
		return bad(l, "perf-maps", "the section in a file of format 1.%u: it came with 1.%u",
			   l->cap->minor, MS_CAPTURE_MINOR_JIT);
	if (l->raw[MS_CAPF_PY_PROCESSES] && l->cap->minor < MS_CAPTURE_MINOR_PYTHON)
		return bad(l, "py-processes", "the section in a file of format 1.%u: it came with 1.%u",
			   l->cap->minor, MS_CAPTURE_MINOR_PYTHON);
	if (l->raw[MS_CAPF_LABEL_SPANS] && l->cap->minor < MS_CAPTURE_MINOR_PYTHON)
		return bad(l, "label-spans", "the section in a file of format 1.%u: it came with 1.%u",
			   l->cap->minor, MS_CAPTURE_MINOR_PYTHON);
	for (id = MS_CAPF_TASKS; id <= MS_CAPF_WAITS; id++)
		if (l->raw[id] && l->cap->minor < MS_CAPTURE_MINOR_TASKS)
			return bad(l, section_label(id), "the section in a file of format 1.%u: it "
				   "came with 1.%u", l->cap->minor, MS_CAPTURE_MINOR_TASKS);
	if (l->raw[MS_CAPF_WAITS] && !l->raw[MS_CAPF_TASKS])
		return bad(l, "waits", "the section without a tasks section (wait rows are reads "
			   "of tasks)");
	for (id = MS_CAPF_INTERVALS; id <= MS_CAPF_EVIDENCE; id++) {
		if ((l->cap->flags & MS_CAPTURE_OFF_CPU) && !l->raw[id])
			return bad(l, section_label(id), "the section is missing (the header sets "
				   "the off-cpu flag)");
		if (!(l->cap->flags & MS_CAPTURE_OFF_CPU) && l->raw[id])
			return bad(l, section_label(id), "the header does not set the off-cpu flag "
				   "(0x%08x) that the section needs", (unsigned)MS_CAPTURE_OFF_CPU);
	}
	return 0;
}

/*
 * The rows of table section id: *n rows of *row_size bytes, at least
 * min_row, starting at the returned pointer. NULL after a message.
 */
static const unsigned char *rows(struct load *l, uint32_t id, uint32_t min_row,
				 uint32_t *n, uint32_t *row_size)
{
	static const unsigned char none[1];
	const unsigned char *raw = l->raw[id];
	const char *name = section_label(id);

	if (!raw) {
		/* a section of a later minor, absent from an earlier file */
		*n = 0;
		*row_size = min_row;
		return none;
	}
	*n = ms_get_u32(raw);
	*row_size = ms_get_u32(raw + 4);
	if (*row_size < min_row || *row_size > MS_CAPF_ROW_MAX) {
		bad(l, name, "rows of %u bytes (this version needs %u to %u)", *row_size,
		    min_row, MS_CAPF_ROW_MAX);
		return NULL;
	}
	if (*n == MS_NONE ||
	    l->raw_len[id] - MS_CAPF_TABLE_HEADER != (uint64_t)*n * *row_size) {
		bad(l, name, "%u rows of %u bytes do not fill its %" PRIu64 " bytes", *n,
		    *row_size, l->raw_len[id] - MS_CAPF_TABLE_HEADER);
		return NULL;
	}
	return raw + MS_CAPF_TABLE_HEADER;
}

/* calloc for a table of n rows, kept by the capture; NULL after a message. */
static void *table(struct load *l, uint32_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		ms_error("out of memory loading '%s'", l->name);
		return NULL;
	}
	return ms_capture_keep(l->cap, p);
}

static int decode_strings(struct load *l)
{
	unsigned char *raw = l->raw[MS_CAPF_STRINGS];
	uint64_t len = l->raw_len[MS_CAPF_STRINGS] - MS_CAPF_TABLE_HEADER, at;
	uint32_t n = ms_get_u32(raw), i = 0;
	char *blob = (char *)raw + MS_CAPF_TABLE_HEADER;
	const char **ptrs;

	if (ms_get_u32(raw + 4))
		return bad(l, "strings", "reserved field is not zero");
	/* Each string takes at least its NUL: n is bounded by the data. */
	if (n == 0 || n == MS_NONE || n > len)
		return bad(l, "strings", "%u strings in %" PRIu64 " bytes", n, len);
	if (blob[len - 1] != '\0')
		return bad(l, "strings", "the last string is not terminated");
	if (blob[0] != '\0')
		return bad(l, "strings", "string 0 is not the empty string");
	ptrs = table(l, n, sizeof(*ptrs));
	if (!ptrs)
		return -1;
	for (at = 0; at < len; at += strlen(blob + at) + 1) {
		if (i == n)
			return bad(l, "strings", "holds more than the %u strings it counts", n);
		ptrs[i++] = blob + at;
	}
	if (i != n)
		return bad(l, "strings", "holds %u strings, not the %u it counts", i, n);
	/* The blob is now the capture's. */
	ms_capture_keep(l->cap, raw);
	l->raw[MS_CAPF_STRINGS] = NULL;
	l->cap->strings = ptrs;
	l->cap->n_strings = n;
	return 0;
}

#define CHECK_STRING(section, row, field, value) \
	do { \
		if ((value) >= cap->n_strings) \
			return bad(l, section, "row %u: %s is string %u of %u", (row), field, \
				   (value), cap->n_strings); \
	} while (0)

static int decode_info(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p = rows(l, MS_CAPF_INFO, MS_CAPF_ROW_INFO, &n, &size);

	if (!p || !(cap->info = table(l, n, sizeof(*cap->info))))
		return -1;
	cap->n_info = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_info *r = &cap->info[i];

		r->key = ms_get_u32(p);
		r->value_text = ms_get_u32(p + 4);
		r->value_number = ms_get_u64(p + 8);
		CHECK_STRING("info", i, "key", r->key);
		CHECK_STRING("info", i, "value", r->value_text);
		if (i && strcmp(cap->strings[cap->info[i - 1].key], cap->strings[r->key]) >= 0)
			return bad(l, "info", "row %u: keys are not sorted and unique (\"%s\" after \"%s\")",
				   i, cap->strings[r->key], cap->strings[cap->info[i - 1].key]);
	}
	return 0;
}

/*
 * A module's base (minor 6): a perf-map or jit-object module's range lies
 * in the address space, every other module's base is 0. NULL when m is
 * right, else what is wrong, said after "a KIND module".
 */
static const char *module_base_wrong(const struct ms_cap_module *m, uint32_t minor)
{
	const char *wrong;

	if (ms_module_kind_has_base(m->kind) && minor < MS_CAPTURE_MINOR_JIT)
		return "in a file before format 1.6, which brought the kind";
	if (m->kind == MS_MODULE_INTERPRETED && minor < MS_CAPTURE_MINOR_PYTHON)
		return "in a file before format 1.7, which brought the kind";
	if ((wrong = ms_module_identity_wrong(m->kind, m->build_id_len, m->dev_maj, m->dev_min,
					      m->ino, m->size, m->mtime)))
		return wrong;
	return ms_module_base_wrong(m->kind, m->base, m->size);
}

static int decode_modules(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	bool v1_1 = cap->minor >= 1, base;
	const unsigned char *p = rows(l, MS_CAPF_MODULES,
				      v1_1 ? MS_CAPF_ROW_MODULES : MS_CAPF_ROW_MODULES_1_0,
				      &n, &size);

	if (!p || !(cap->modules = table(l, n, sizeof(*cap->modules))))
		return -1;
	/*
	 * The base came with 1.6, whose writer makes rows of 80 bytes when the
	 * file holds JIT data; shorter rows hold none, so no perf-map or
	 * jit-object module.
	 */
	base = cap->minor >= MS_CAPTURE_MINOR_JIT && size >= MS_CAPF_ROW_MODULES_1_6;
	cap->n_modules = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_module *m = &cap->modules[i];
		const char *wrong;

		m->path = ms_get_u32(p);
		m->kind = ms_get_u32(p + 4);
		m->build_id_len = ms_get_u32(p + 8);
		CHECK_STRING("modules", i, "path", m->path);
		if (m->build_id_len > sizeof(m->build_id))
			return bad(l, "modules", "row %u: build id of %u bytes (at most %zu)", i,
				   m->build_id_len, sizeof(m->build_id));
		memcpy(m->build_id, p + 12, m->build_id_len);
		m->dev_maj = ms_get_u32(p + 32);
		m->dev_min = ms_get_u32(p + 36);
		m->ino = ms_get_u64(p + 40);
		m->size = ms_get_u64(p + 48);
		m->mtime = ms_get_u64(p + 56);
		/* Any status: one this version does not know comes from a later minor. */
		if (v1_1) {
			m->status = ms_get_u32(p + 64);
			m->status_reason = ms_get_u32(p + 68);
		}
		if (base)
			m->base = ms_get_u64(p + 72);
		if ((wrong = module_base_wrong(m, cap->minor)))
			return bad(l, "modules", "row %u: a%s %s module %s (base 0x%" PRIx64
				   ", size %" PRIu64 ")", i, m->kind == MS_MODULE_ANON ||
				   m->kind == MS_MODULE_UNKNOWN || m->kind == MS_MODULE_INTERPRETED ? "n" : "", ms_module_kind_name(m->kind),
				   wrong, m->base, m->size);
	}
	return 0;
}

/*
 * The perf-map settings (minor 6): one row per pid in increasing order,
 * each path a string, a known status (the builder refuses any other, so
 * that every row loaded dumps and captures again) and an errno that is one.
 */
static int decode_perf_maps(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p;

	if (!l->raw[MS_CAPF_PERF_MAPS])
		return 0;
	p = rows(l, MS_CAPF_PERF_MAPS, MS_CAPF_ROW_PERF_MAPS, &n, &size);
	if (!p || !(cap->perf_maps = table(l, n, sizeof(*cap->perf_maps))))
		return -1;
	cap->n_perf_maps = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_perf_map *x = &cap->perf_maps[i];

		x->pid = ms_get_u32(p);
		x->path = ms_get_u32(p + 4);
		x->status = ms_get_u32(p + 8);
		x->err = ms_get_u32(p + 12);
		x->time = ms_get_u64(p + 16);
		x->offset = ms_get_u64(p + 24);
		x->functions = ms_get_u64(p + 32);
		x->malformed = ms_get_u64(p + 40);
		x->over_max = ms_get_u64(p + 48);
		x->no_code = ms_get_u64(p + 56);
		x->code_unread = ms_get_u64(p + 64);
		x->code_bytes = ms_get_u64(p + 72);
		CHECK_STRING("perf-maps", i, "path", x->path);
		if (x->status >= MS_JIT_READ_STATUS_COUNT)
			return bad(l, "perf-maps", "row %u: status %u (0 to %d)", i, x->status,
				   MS_JIT_READ_STATUS_COUNT - 1);
		if (x->err > MS_CAP_ERRNO_MAX)
			return bad(l, "perf-maps", "row %u: err %u is no errno (at most %u)", i,
				   x->err, MS_CAP_ERRNO_MAX);
		if (i && x[-1].pid >= x->pid)
			return bad(l, "perf-maps", "row %u: pid %u is not after pid %u (one row per "
				   "pid, sorted)", i, x->pid, x[-1].pid);
	}
	return 0;
}

/* Whether Python process row a sorts strictly before b (the builder's order). */
static bool py_before(const struct ms_cap_py_process *a, const struct ms_cap_py_process *b)
{
	const uint32_t x[] = { a->pid, a->status, a->version_hex, a->source, a->path, a->engine,
			       a->reason };
	const uint32_t y[] = { b->pid, b->status, b->version_hex, b->source, b->path, b->engine,
			       b->reason };

	if (a->pid != b->pid)
		return a->pid < b->pid;
	if (a->time != b->time)
		return a->time < b->time;
	for (size_t k = 1; k < sizeof(x) / sizeof(x[0]); k++)
		if (x[k] != y[k])
			return x[k] < y[k];
	return false;
}

/*
 * The Python processes (minor 7): at most MS_CAPTURE_PY_PROCESSES_MAX
 * rows, each distinct and in the builder's order, strings that are ones,
 * a known status (the builder refuses any other, so every row loaded
 * dumps and captures again).
 */
static int decode_py_processes(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p;

	if (!l->raw[MS_CAPF_PY_PROCESSES])
		return 0;
	p = rows(l, MS_CAPF_PY_PROCESSES, MS_CAPF_ROW_PY_PROCESSES, &n, &size);
	if (!p)
		return -1;
	if (n > MS_CAPTURE_PY_PROCESSES_MAX)
		return bad(l, "py-processes", "%u rows (at most %u)", n, MS_CAPTURE_PY_PROCESSES_MAX);
	if (!(cap->py_processes = table(l, n, sizeof(*cap->py_processes))))
		return -1;
	cap->n_py_processes = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_py_process *x = &cap->py_processes[i];

		x->pid = ms_get_u32(p);
		x->status = ms_get_u32(p + 4);
		x->version_hex = ms_get_u32(p + 8);
		x->source = ms_get_u32(p + 12);
		x->time = ms_get_u64(p + 16);
		x->path = ms_get_u32(p + 24);
		x->engine = ms_get_u32(p + 28);
		x->reason = ms_get_u32(p + 32);
		CHECK_STRING("py-processes", i, "path", x->path);
		CHECK_STRING("py-processes", i, "engine", x->engine);
		CHECK_STRING("py-processes", i, "reason", x->reason);
		if (x->status >= MS_PY_PROCESS_STATUS_COUNT)
			return bad(l, "py-processes", "row %u: status %u (0 to %d)", i, x->status,
				   MS_PY_PROCESS_STATUS_COUNT - 1);
		if (i && !py_before(&x[-1], x))
			return bad(l, "py-processes", "row %u (pid %u) is not after row %u (rows are "
				   "distinct, sorted by pid and time)", i, x->pid, i - 1);
	}
	return 0;
}

/*
 * The label spans (minor 7), after the threads: at most
 * MS_CAPTURE_LABEL_SPANS_MAX rows, each of a known thread, with a key and
 * a value that are strings other than "", start <= end, samples >= 1,
 * sorted by (thread, key, start), and each after the end of the one
 * before it of its thread and key (capture.h), so a sample has at most
 * one value per key.
 */
static int decode_label_spans(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p;

	if (!l->raw[MS_CAPF_LABEL_SPANS])
		return 0;
	p = rows(l, MS_CAPF_LABEL_SPANS, MS_CAPF_ROW_LABEL_SPANS, &n, &size);
	if (!p)
		return -1;
	if (n > MS_CAPTURE_LABEL_SPANS_MAX)
		return bad(l, "label-spans", "%u rows (at most %u)", n, MS_CAPTURE_LABEL_SPANS_MAX);
	if (!(cap->label_spans = table(l, n, sizeof(*cap->label_spans))))
		return -1;
	cap->n_label_spans = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_label_span *x = &cap->label_spans[i];
		const struct ms_cap_label_span *prev = i ? &x[-1] : NULL;

		x->thread = ms_get_u32(p);
		x->key = ms_get_u32(p + 4);
		x->value = ms_get_u32(p + 8);
		x->start = ms_get_u64(p + 16);
		x->end = ms_get_u64(p + 24);
		x->samples = ms_get_u64(p + 32);
		if (x->thread >= cap->n_threads)
			return bad(l, "label-spans", "row %u: thread %u of %u", i, x->thread,
				   cap->n_threads);
		CHECK_STRING("label-spans", i, "key", x->key);
		CHECK_STRING("label-spans", i, "value", x->value);
		if (!x->key || !x->value)
			return bad(l, "label-spans", "row %u: an empty %s", i, x->key ? "value" : "key");
		if (x->start > x->end)
			return bad(l, "label-spans", "row %u: ends at %" PRIu64 ", before its start %"
				   PRIu64, i, x->end, x->start);
		if (!x->samples)
			return bad(l, "label-spans", "row %u: no samples", i);
		if (!prev)
			continue;
		if (prev->thread > x->thread ||
		    (prev->thread == x->thread && prev->key > x->key) ||
		    (prev->thread == x->thread && prev->key == x->key && prev->start >= x->start))
			return bad(l, "label-spans", "row %u is not after row %u (rows are sorted by "
				   "thread, key and start)", i, i - 1);
		if (prev->thread == x->thread && prev->key == x->key && x->start <= prev->end)
			return bad(l, "label-spans", "row %u starts at %" PRIu64 ", inside row %u, "
				   "which ends at %" PRIu64 " (spans of a thread and key do not "
				   "overlap)", i, x->start, i - 1, prev->end);
	}
	return 0;
}

/*
 * The tasks (minor 8), after the threads: at most MS_CAPTURE_TASKS_MAX
 * rows, sorted by (pid, kind's text, id), one each; a kind that is a
 * string other than ""; a "thread" task's thread row the thread (pid,
 * id), another kind's none; first_time <= last_time; at least one read,
 * and its counts' sum in 64 bits. The waits section checks the rest.
 */
static int decode_tasks(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p;

	if (!l->raw[MS_CAPF_TASKS])
		return 0;
	p = rows(l, MS_CAPF_TASKS, MS_CAPF_ROW_TASKS, &n, &size);
	if (!p)
		return -1;
	if (n > MS_CAPTURE_TASKS_MAX)
		return bad(l, "tasks", "%u rows (at most %u)", n, MS_CAPTURE_TASKS_MAX);
	if (!(cap->tasks = table(l, n, sizeof(*cap->tasks))))
		return -1;
	cap->n_tasks = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_task *x = &cap->tasks[i];
		const struct ms_cap_task *prev = i ? &x[-1] : NULL;
		bool thread;
		int c;

		x->pid = ms_get_u32(p);
		x->thread = ms_get_u32(p + 4);
		x->kind = ms_get_u32(p + 8);
		x->zero = ms_get_u32(p + 12);
		x->id = ms_get_u64(p + 16);
		x->first_time = ms_get_u64(p + 24);
		x->last_time = ms_get_u64(p + 32);
		x->waits = ms_get_u64(p + 40);
		x->changed = ms_get_u64(p + 48);
		x->dropped = ms_get_u64(p + 56);
		CHECK_STRING("tasks", i, "kind", x->kind);
		if (!x->kind)
			return bad(l, "tasks", "row %u: an empty kind", i);
		if (x->zero)
			return bad(l, "tasks", "row %u: its reserved field is not zero", i);
		thread = !strcmp(cap->strings[x->kind], "thread");
		if (x->thread != MS_NONE && x->thread >= cap->n_threads)
			return bad(l, "tasks", "row %u: thread %u of %u", i, x->thread,
				   cap->n_threads);
		if (thread && (x->thread == MS_NONE || cap->threads[x->thread].pid != x->pid ||
			       cap->threads[x->thread].tid != x->id))
			return bad(l, "tasks", "row %u: a thread task of process %u numbered %" PRIu64
				   " whose thread row is not that thread", i, x->pid, x->id);
		if (!thread && x->thread != MS_NONE)
			return bad(l, "tasks", "row %u: a %s task with a thread row (only thread "
				   "tasks have one)", i, cap->strings[x->kind]);
		if (x->first_time > x->last_time)
			return bad(l, "tasks", "row %u: first read at %" PRIu64 ", after its last at %"
				   PRIu64, i, x->first_time, x->last_time);
		if (x->waits > MS_CAPTURE_WAITS_MAX || x->dropped > UINT64_MAX / 2 ||
		    x->changed > UINT64_MAX / 2 - x->dropped ||
		    !(x->waits + x->changed + x->dropped))
			return bad(l, "tasks", "row %u: %" PRIu64 " complete, %" PRIu64 " changed and %"
				   PRIu64 " dropped reads (at least one, at most %u complete)", i,
				   x->waits, x->changed, x->dropped, MS_CAPTURE_WAITS_MAX);
		if (!prev)
			continue;
		c = strcmp(cap->strings[prev->kind], cap->strings[x->kind]);
		if (prev->pid > x->pid || (prev->pid == x->pid && c > 0) ||
		    (prev->pid == x->pid && !c && prev->id >= x->id))
			return bad(l, "tasks", "row %u is not after row %u (rows are sorted by pid, "
				   "kind and id, one each)", i, i - 1);
	}
	return 0;
}

/*
 * Whether task t's first and last read are reads it counts: a wait row
 * at each end (lo, hi: its rows' first and last time; no rows when
 * n_rows is 0), or a changed or dropped read for each end no row is at.
 */
static bool task_ends_read(const struct ms_cap_task *t, uint64_t n_rows, uint64_t lo, uint64_t hi)
{
	uint64_t need;

	if (!n_rows)
		need = t->first_time == t->last_time ? 1 : 2;
	else
		need = (lo > t->first_time) + (hi < t->last_time);
	return t->changed + t->dropped >= need;
}

/*
 * The wait rows (minor 8), after the tasks and stacks: at most
 * MS_CAPTURE_WAITS_MAX, each of a task, a stack or none, a reason that is
 * a string other than "" or none, a time inside its task's first and last
 * read; sorted by (task, time), one row per (task, time); each task's
 * rows as many as its complete reads, and its first and last read a read
 * it counts (task_ends_read()).
 */
static int decode_waits(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i, task = 0;
	uint64_t in_task = 0, lo = 0, hi = 0;
	const unsigned char *p = rows(l, MS_CAPF_WAITS, MS_CAPF_ROW_WAITS, &n, &size);

	if (!p)
		return -1;
	if (n > MS_CAPTURE_WAITS_MAX)
		return bad(l, "waits", "%u rows (at most %u)", n, MS_CAPTURE_WAITS_MAX);
	if (!(cap->waits = table(l, n, sizeof(*cap->waits))))
		return -1;
	cap->n_waits = n;
	/* A walk of the tasks beside the rows (both sorted by task): task is the rows' task. */
	for (i = 0; i <= n; i++, p += size) {
		struct ms_cap_wait *x = &cap->waits[i < n ? i : 0];
		const struct ms_cap_task *t;

		if (i < n) {
			x->task = ms_get_u32(p);
			x->stack = ms_get_u32(p + 4);
			x->reason = ms_get_u32(p + 8);
			x->zero = ms_get_u32(p + 12);
			x->time = ms_get_u64(p + 16);
			if (x->task >= cap->n_tasks)
				return bad(l, "waits", "row %u: task %u of %u", i, x->task,
					   cap->n_tasks);
			if (i && (x[-1].task > x->task ||
				  (x[-1].task == x->task && x[-1].time >= x->time)))
				return bad(l, "waits", "row %u is not after row %u (rows are sorted by "
					   "task and time, one per task and time)", i, i - 1);
		}
		/* the tasks before this row's (all of them after the last row) are done */
		for (; task < (i < n ? x->task : cap->n_tasks); task++, in_task = 0) {
			t = &cap->tasks[task];
			if (in_task != t->waits)
				return bad(l, "tasks", "row %u: counts %" PRIu64 " complete reads, but "
					   "the waits section has %" PRIu64 " rows of it", task, t->waits,
					   in_task);
			if (!task_ends_read(t, in_task, lo, hi))
				return bad(l, "tasks", "row %u: its first or last read (%" PRIu64 ", %"
					   PRIu64 ") is no wait row, and it counts no other read "
					   "there", task, t->first_time, t->last_time);
		}
		if (i == n)
			break;
		t = &cap->tasks[x->task];
		if (x->stack != MS_NONE && x->stack >= cap->n_stacks)
			return bad(l, "waits", "row %u: stack %u of %u", i, x->stack, cap->n_stacks);
		if (x->reason != MS_NONE) {
			CHECK_STRING("waits", i, "reason", x->reason);
			if (!x->reason)
				return bad(l, "waits", "row %u: an empty reason (none is %u)", i,
					   MS_NONE);
		}
		if (x->zero)
			return bad(l, "waits", "row %u: its reserved field is not zero", i);
		if (x->time < t->first_time || x->time > t->last_time)
			return bad(l, "waits", "row %u: at %" PRIu64 ", outside its task's reads (%"
				   PRIu64 " to %" PRIu64 ")", i, x->time, t->first_time, t->last_time);
		if (!in_task)
			lo = x->time;
		hi = x->time;
		in_task++;
	}
	return 0;
}

/* Whether function a sorts strictly before function b (the writer's order). */
static bool function_before(const struct ms_cap_function *a, const struct ms_cap_function *b)
{
	if (a->name != b->name)
		return a->name < b->name;
	if (a->system_name != b->system_name)
		return a->system_name < b->system_name;
	if (a->file != b->file)
		return a->file < b->file;
	return a->start_line < b->start_line;
}

static int decode_functions(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p = rows(l, MS_CAPF_FUNCTIONS, MS_CAPF_ROW_FUNCTIONS, &n, &size);

	if (!p || !(cap->functions = table(l, n, sizeof(*cap->functions))))
		return -1;
	cap->n_functions = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_function *f = &cap->functions[i];

		f->name = ms_get_u32(p);
		f->system_name = ms_get_u32(p + 4);
		f->file = ms_get_u32(p + 8);
		f->start_line = ms_get_u32(p + 12);
		CHECK_STRING("functions", i, "name", f->name);
		CHECK_STRING("functions", i, "system_name", f->system_name);
		CHECK_STRING("functions", i, "file", f->file);
		if (i && !function_before(f - 1, f))
			return bad(l, "functions", "row %u is not after row %u (by name, system_name, "
				   "file, start_line): rows are sorted and unique", i, i - 1);
	}
	return 0;
}

static int decode_lines(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p = rows(l, MS_CAPF_LINES, MS_CAPF_ROW_LINES, &n, &size);

	if (!p || !(cap->lines = table(l, n, sizeof(*cap->lines))))
		return -1;
	cap->n_lines = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_line *r = &cap->lines[i];

		r->function = ms_get_u32(p);
		r->line = ms_get_u32(p + 4);
		if (r->function >= cap->n_functions)
			return bad(l, "lines", "row %u: function %u of %u", i, r->function,
				   cap->n_functions);
	}
	return 0;
}

static int decode_frames(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	bool v1_1 = cap->minor >= 1;
	const unsigned char *p = rows(l, MS_CAPF_FRAMES,
				      v1_1 ? MS_CAPF_ROW_FRAMES : MS_CAPF_ROW_FRAMES_1_0,
				      &n, &size);

	if (!p || !(cap->frames = table(l, n, sizeof(*cap->frames))))
		return -1;
	cap->n_frames = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_frame *f = &cap->frames[i];

		f->module = ms_get_u32(p);
		f->flags = ms_get_u32(p + 4);
		f->address = ms_get_u64(p + 8);
		f->name = ms_get_u32(p + 16);
		f->reason = ms_get_u32(p + 20);
		f->symbol_start = ms_get_u64(p + 24);
		if (f->module != MS_NONE && f->module >= cap->n_modules)
			return bad(l, "frames", "row %u: module %u of %u", i, f->module,
				   cap->n_modules);
		CHECK_STRING("frames", i, "name", f->name);
		/* an interpreted frame's address is its text's key (capture.h) */
		if (f->module != MS_NONE && cap->modules[f->module].kind == MS_MODULE_INTERPRETED &&
		    (!(f->flags & MS_FRAME_NO_ADDRESS) || !f->address))
			return bad(l, "frames", "row %u: a frame of interpreted module %u %s", i,
				   f->module, f->address ? "without the flag no-address" :
				   "with key 0 (keys start at 1)");
		if (!v1_1)
			continue;
		f->first_line = ms_get_u32(p + 32);
		f->n_lines = ms_get_u32(p + 36);
		if ((uint64_t)f->first_line + f->n_lines > cap->n_lines)
			return bad(l, "frames", "row %u: %u lines from line %u, of %u", i,
				   f->n_lines, f->first_line, cap->n_lines);
		/*
		 * A stream's frame fact holds at most MS_FRAME_LINES_MAX lines, so
		 * no writer makes a longer chain. Unbounded, frames sharing one
		 * long range made every view expand each of them: a 110 KB file
		 * of 6000 frames on one 6000-line range took ms-analyze top 20 s
		 * and 1.1 GB, tree 44 s.
		 */
		if (f->n_lines > MS_FRAME_LINES_MAX)
			return bad(l, "frames", "row %u: %u lines (at most %d)", i, f->n_lines,
				   MS_FRAME_LINES_MAX);
	}
	return 0;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define STACK_ROWS_IN_PLACE (MS_CAPF_ROW_STACKS == sizeof(struct ms_cap_stack) && \
			     offsetof(struct ms_cap_stack, parent) == 0 && \
			     offsetof(struct ms_cap_stack, frame) == 4 && \
			     offsetof(struct ms_cap_stack, depth) == 8)
#else
#define STACK_ROWS_IN_PLACE 0
#endif

static int decode_stacks(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p = rows(l, MS_CAPF_STACKS, MS_CAPF_ROW_STACKS, &n, &size);

	if (!p)
		return -1;
	/*
	 * Rows of this version are the struct itself on a little-endian host:
	 * the section becomes the table, checked where it lies, so the
	 * largest table of a capture with deep, varied stacks (86 MB for 7
	 * million nodes) is not held twice.
	 */
	if (STACK_ROWS_IN_PLACE && size == sizeof(*cap->stacks)) {
		cap->stacks = (struct ms_cap_stack *)(l->raw[MS_CAPF_STACKS] + MS_CAPF_TABLE_HEADER);
		ms_capture_keep(cap, l->raw[MS_CAPF_STACKS]);
		l->raw[MS_CAPF_STACKS] = NULL;
	} else if (!(cap->stacks = table(l, n, sizeof(*cap->stacks)))) {
		return -1;
	}
	cap->n_stacks = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_stack *s = &cap->stacks[i];
		uint32_t depth;

		s->parent = ms_get_u32(p);
		s->frame = ms_get_u32(p + 4);
		s->depth = ms_get_u32(p + 8);
		/* parent < i makes the tree acyclic and lets consumers walk it in one pass. */
		if (s->parent != MS_NONE && s->parent >= i)
			return bad(l, "stacks", "row %u: parent %u is not an earlier row", i,
				   s->parent);
		if (s->frame >= cap->n_frames)
			return bad(l, "stacks", "row %u: frame %u of %u", i, s->frame,
				   cap->n_frames);
		depth = s->parent == MS_NONE ? 1 : cap->stacks[s->parent].depth + 1;
		if (s->depth != depth)
			return bad(l, "stacks", "row %u: depth %u, its parent makes it %u", i,
				   s->depth, depth);
		/*
		 * No stream, import or dump makes a deeper stack; unbounded, the
		 * views that walk each sampled node to its root are quadratic:
		 * one chain of 20,000 sampled nodes (351 KB) took top 0.7 s.
		 */
		if (depth > MS_FRAMES_MAX)
			return bad(l, "stacks", "row %u: depth %u (at most %d frames)", i, depth,
				   MS_FRAMES_MAX);
	}
	return 0;
}

static int decode_threads(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p = rows(l, MS_CAPF_THREADS, MS_CAPF_ROW_THREADS, &n, &size);

	if (!p || !(cap->threads = table(l, n, sizeof(*cap->threads))))
		return -1;
	cap->n_threads = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_thread *t = &cap->threads[i];

		t->pid = ms_get_u32(p);
		t->tid = ms_get_u32(p + 4);
		t->name = ms_get_u32(p + 8);
		t->first_time = ms_get_u64(p + 16);
		t->last_time = ms_get_u64(p + 24);
		CHECK_STRING("threads", i, "name", t->name);
		if (i && (t[-1].pid > t->pid || (t[-1].pid == t->pid && t[-1].tid >= t->tid)))
			return bad(l, "threads", "row %u: (pid %u, tid %u) is not after (%u, %u)",
				   i, t->pid, t->tid, t[-1].pid, t[-1].tid);
		if (t->first_time > t->last_time)
			return bad(l, "threads", "row %u: first time after last time", i);
	}
	return 0;
}

static int decode_samples(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p = rows(l, MS_CAPF_SAMPLES, MS_CAPF_ROW_SAMPLES, &n, &size);

	if (!p || !(cap->samples = table(l, n, sizeof(*cap->samples))))
		return -1;
	cap->n_samples = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_sample *s = &cap->samples[i], *prev = s - 1;

		s->time = ms_get_u64(p);
		s->thread = ms_get_u32(p + 8);
		s->cpu = ms_get_u32(p + 12);
		s->stack = ms_get_u32(p + 16);
		s->end = ms_get_u32(p + 20);
		s->period = ms_get_u64(p + 24);
		s->count = 1;	/* unless the counts section says otherwise */
		if (s->thread >= cap->n_threads)
			return bad(l, "samples", "row %u: thread %u of %u", i, s->thread,
				   cap->n_threads);
		if (s->stack != MS_NONE && s->stack >= cap->n_stacks)
			return bad(l, "samples", "row %u: stack %u of %u", i, s->stack,
				   cap->n_stacks);
		if (i && (prev->time > s->time ||
			  (prev->time == s->time &&
			   (prev->thread > s->thread ||
			    (prev->thread == s->thread &&
			     (prev->cpu > s->cpu ||
			      (prev->cpu == s->cpu && prev->stack > s->stack)))))))
			return bad(l, "samples", "row %u is out of order (by time, thread, cpu, stack)", i);
	}
	return 0;
}

/* The samples' counts (minor 2, weighted files only): every other file's are 1. */
static int decode_counts(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	uint64_t sum = 0;
	const unsigned char *p;

	if (!l->raw[MS_CAPF_COUNTS])
		return 0;
	p = rows(l, MS_CAPF_COUNTS, MS_CAPF_ROW_COUNTS, &n, &size);
	if (!p)
		return -1;
	if (n != cap->n_samples)
		return bad(l, "counts", "%u rows for %u samples", n, cap->n_samples);
	for (i = 0; i < n; i++, p += size) {
		uint64_t c = ms_get_u64(p);

		if (!c)
			return bad(l, "counts", "row %u: count 0 (a row stands for at least one sample)", i);
		/* Views add counts up: their sum must fit in 64 bits. */
		if (c > UINT64_MAX - sum)
			return bad(l, "counts", "row %u: the counts add up past %" PRIu64, i, UINT64_MAX);
		sum += c;
		cap->samples[i].count = c;
	}
	return 0;
}

/*
 * The duty rows (minor 3, only with the duty flag): each a duty of 1 to
 * 1000000 millionths, by strictly increasing time, so that the duty in
 * force at any time is one row, found by binary search.
 */
static int decode_duty(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p;

	if (!l->raw[MS_CAPF_DUTY])
		return 0;
	p = rows(l, MS_CAPF_DUTY, MS_CAPF_ROW_DUTY, &n, &size);
	if (!p)
		return -1;
	if (!n)
		return bad(l, "duty", "no rows, though the header sets the duty flag (a capture "
			   "without duty changes has neither)");
	if (!(cap->duty = table(l, n, sizeof(*cap->duty))))
		return -1;
	cap->n_duty = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_duty *d = &cap->duty[i];

		d->time = ms_get_u64(p);
		d->duty_ppm = ms_get_u32(p + 8);
		d->share_ppm = ms_get_u32(p + 12);
		d->rate = ms_get_u64(p + 16);
		d->budget_ppm = ms_get_u32(p + 24);
		/* 0 would weigh a sample infinitely, more than 1000000 less than its period */
		if (!d->duty_ppm || d->duty_ppm > 1000000)
			return bad(l, "duty", "row %u: a duty of %u millionths (1 to 1000000)", i,
				   d->duty_ppm);
		if (i && d->time <= d[-1].time)
			return bad(l, "duty", "row %u: time %" PRIu64 " is not after row %u's %" PRIu64
				   " (rows are sorted by time, one per time)", i, d->time, i - 1,
				   d[-1].time);
	}
	return 0;
}

/*
 * The loss rows (minor 4): one per (time, source), in that order, each a
 * count of at least 1 at a time other than 0 from a source this version
 * knows, and per source no more than the totals say (capture.h): a
 * consumer may add them up, and take the rest of the total as losses of
 * unknown time. Needs the totals decoded.
 */
static int decode_losses(struct load *l)
{
	static const char *const source_name[] = {
		[MS_LOST_KERNEL] = "kernel", [MS_LOST_COLLECTOR] = "collector",
	};
	struct ms_capture *cap = l->cap;
	uint64_t total[2] = { cap->lost_kernel, cap->lost_collector }, sum[2] = { 0, 0 };
	uint32_t n, size, i;
	const unsigned char *p;

	if (!l->raw[MS_CAPF_LOSSES])
		return 0;
	p = rows(l, MS_CAPF_LOSSES, MS_CAPF_ROW_LOSSES, &n, &size);
	if (!p)
		return -1;
	if (!n)
		return bad(l, "losses", "no rows (a capture whose losses have no time has no "
			   "such section)");
	if (n > MS_CAPTURE_LOSSES_MAX)
		return bad(l, "losses", "%u rows (at most %u)", n, MS_CAPTURE_LOSSES_MAX);
	if (!(cap->losses = table(l, n, sizeof(*cap->losses))))
		return -1;
	cap->n_losses = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_loss *x = &cap->losses[i];

		x->time = ms_get_u64(p);
		x->count = ms_get_u64(p + 8);
		x->source = ms_get_u32(p + 16);
		if (x->source != MS_LOST_KERNEL && x->source != MS_LOST_COLLECTOR)
			return bad(l, "losses", "row %u: source %u (0 kernel, 1 collector)", i,
				   x->source);
		/* 0 is how a stream says a loss has no time: a dump could not keep it */
		if (!x->time)
			return bad(l, "losses", "row %u: time 0 (a loss of unknown time has no row)", i);
		if (!x->count)
			return bad(l, "losses", "row %u: count 0 (a row stands for at least one "
				   "lost record)", i);
		if (i && (x->time < x[-1].time ||
			  (x->time == x[-1].time && x->source <= x[-1].source)))
			return bad(l, "losses", "row %u: (time %" PRIu64 ", source %u) is not after "
				   "row %u's (%" PRIu64 ", %u) (rows are sorted by time and source, "
				   "one per pair)", i, x->time, x->source, i - 1, x[-1].time,
				   x[-1].source);
		/* Never past the total, so no sum of rows can overflow. */
		if (x->count > total[x->source] - sum[x->source])
			return bad(l, "losses", "row %u: the %s's rows add up to more than the "
				   "%" PRIu64 " records its total in section 'totals' says were lost",
				   i, source_name[x->source], total[x->source]);
		sum[x->source] += x->count;
	}
	return 0;
}

/*
 * Why threads left their CPUs (minor 5, only with the off-cpu flag): each
 * row a known cause, known sources, preempt 0 or 1, and state and preempt
 * 0 unless a source gives them, unique and sorted, so that one set of
 * facts has one row.
 */
static int decode_evidence(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p;

	if (!l->raw[MS_CAPF_EVIDENCE])
		return 0;
	p = rows(l, MS_CAPF_EVIDENCE, MS_CAPF_ROW_EVIDENCE, &n, &size);
	if (!p || !(cap->evidence = table(l, n, sizeof(*cap->evidence))))
		return -1;
	cap->n_evidence = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_evidence *e = &cap->evidence[i], *prev = e - 1;

		e->cause = ms_get_u32(p);
		e->sources = ms_get_u32(p + 4);
		e->state = ms_get_u64(p + 8);
		e->preempt = ms_get_u32(p + 16);
		if (e->cause >= MS_CAUSE_COUNT)
			return bad(l, "evidence", "row %u: cause %u (0 to %d)", i, e->cause,
				   MS_CAUSE_COUNT - 1);
		if (e->sources & ~(uint32_t)(MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH))
			return bad(l, "evidence", "row %u: sources 0x%x (1 state, 2 switch)", i,
				   e->sources);
		if (e->preempt > 1)
			return bad(l, "evidence", "row %u: preempt %u (0 or 1)", i, e->preempt);
		if (e->state && !(e->sources & MS_EVIDENCE_STATE))
			return bad(l, "evidence", "row %u: a state without the state source", i);
		if (e->preempt && !(e->sources & MS_EVIDENCE_SWITCH))
			return bad(l, "evidence", "row %u: preempt without the switch source", i);
		if (i && (prev->cause > e->cause ||
			  (prev->cause == e->cause &&
			   (prev->sources > e->sources ||
			    (prev->sources == e->sources &&
			     (prev->state > e->state ||
			      (prev->state == e->state && prev->preempt >= e->preempt)))))))
			return bad(l, "evidence", "row %u is not after row %u (rows are unique and "
				   "sorted by cause, sources, state, preempt)", i, i - 1);
	}
	return 0;
}

/* The time an interval sorts by: its start, or its end when the start is missing. */
static uint64_t interval_key(const struct ms_cap_interval *r)
{
	return r->start ? r->start : r->end;
}

/*
 * Time off CPU (minor 5, only with the off-cpu flag): each row's thread,
 * stack and evidence in their tables, the times its missing value says
 * (capture.h), no CPU or stack without a start, and rows in order. Needs
 * threads, stacks and evidence decoded.
 */
static int decode_intervals(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p;

	if (!l->raw[MS_CAPF_INTERVALS])
		return 0;
	p = rows(l, MS_CAPF_INTERVALS, MS_CAPF_ROW_INTERVALS, &n, &size);
	if (!p || !(cap->intervals = table(l, n, sizeof(*cap->intervals))))
		return -1;
	cap->n_intervals = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_interval *x = &cap->intervals[i], *prev = x - 1;
		bool no_start, no_end;
		uint64_t k, pk;

		x->start = ms_get_u64(p);
		x->end = ms_get_u64(p + 8);
		x->thread = ms_get_u32(p + 16);
		x->cpu = ms_get_u32(p + 20);
		x->stack = ms_get_u32(p + 24);
		x->stack_end = ms_get_u32(p + 28);
		x->missing = ms_get_u32(p + 32);
		x->evidence = ms_get_u32(p + 36);
		if (x->thread >= cap->n_threads)
			return bad(l, "intervals", "row %u: thread %u of %u", i, x->thread,
				   cap->n_threads);
		if (x->stack != MS_NONE && x->stack >= cap->n_stacks)
			return bad(l, "intervals", "row %u: stack %u of %u", i, x->stack,
				   cap->n_stacks);
		if (x->evidence >= cap->n_evidence)
			return bad(l, "intervals", "row %u: evidence %u of %u", i, x->evidence,
				   cap->n_evidence);
		if (x->missing >= MS_INTERVAL_MISSING_COUNT)
			return bad(l, "intervals", "row %u: missing %u (0 to %d)", i, x->missing,
				   MS_INTERVAL_MISSING_COUNT - 1);
		no_start = x->missing == MS_INTERVAL_BEGAN_INSIDE ||
			   x->missing == MS_INTERVAL_LOST_START;
		no_end = x->missing == MS_INTERVAL_ENDED_INSIDE || x->missing == MS_INTERVAL_LOST_END;
		if (!no_start && !no_end && (!x->start || x->end < x->start))
			return bad(l, "intervals", "row %u: complete from %" PRIu64 " to %" PRIu64
				   " (0 < start <= end)", i, x->start, x->end);
		if ((no_start && (x->start || !x->end)) || (no_end && (!x->start || x->end)))
			return bad(l, "intervals", "row %u: %s from %" PRIu64 " to %" PRIu64
				   " (exactly the missing time is 0)", i,
				   ms_interval_missing_name(x->missing), x->start, x->end);
		if (no_start && (x->cpu != MS_NONE || x->stack != MS_NONE))
			return bad(l, "intervals", "row %u: %s with a CPU or stack (none without a "
				   "start)", i, ms_interval_missing_name(x->missing));
		if (!i)
			continue;
		k = interval_key(x);
		pk = interval_key(prev);
		if (pk > k ||
		    (pk == k &&
		     (prev->thread > x->thread ||
		      (prev->thread == x->thread &&
		       (prev->end > x->end ||
			(prev->end == x->end && prev->stack > x->stack))))))
			return bad(l, "intervals", "row %u is out of order (by start or else end, "
				   "thread, end, stack)", i);
	}
	return 0;
}

static int decode_problems(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size, i;
	const unsigned char *p = rows(l, MS_CAPF_PROBLEMS, MS_CAPF_ROW_PROBLEMS, &n, &size);

	if (!p || !(cap->problems = table(l, n, sizeof(*cap->problems))))
		return -1;
	cap->n_problems = n;
	for (i = 0; i < n; i++, p += size) {
		struct ms_cap_problem *r = &cap->problems[i];

		r->stage = ms_get_u32(p);
		r->code = ms_get_u32(p + 4);
		r->detail = ms_get_u32(p + 8);
		r->count = ms_get_u64(p + 16);
		CHECK_STRING("problems", i, "stage", r->stage);
		CHECK_STRING("problems", i, "code", r->code);
		CHECK_STRING("problems", i, "detail", r->detail);
	}
	return 0;
}

static int decode_totals(struct load *l)
{
	struct ms_capture *cap = l->cap;
	uint32_t n, size;
	const unsigned char *p = rows(l, MS_CAPF_TOTALS, MS_CAPF_ROW_TOTALS, &n, &size);

	if (!p)
		return -1;
	if (n != 1)
		return bad(l, "totals", "%u rows, not 1", n);
	cap->lost_kernel = ms_get_u64(p);
	cap->lost_collector = ms_get_u64(p + 8);
	cap->throttled = ms_get_u64(p + 16);
	cap->start_time = ms_get_u64(p + 24);
	cap->end_time = ms_get_u64(p + 32);
	cap->target_exit_code = (int32_t)ms_get_u32(p + 40);
	if (cap->start_time > cap->end_time)
		return bad(l, "totals", "start time %" PRIu64 " after end time %" PRIu64,
			   cap->start_time, cap->end_time);
	return 0;
}

/* Decode section id with fn, then free what is left of its bytes. */
static int decode(struct load *l, uint32_t id, int (*fn)(struct load *))
{
	int ret = fn(l);

	free(l->raw[id]);
	l->raw[id] = NULL;
	return ret;
}

/*
 * Load l's buffer (freed once its sections are decompressed when the
 * loader owns it: they hold all that is needed). Each section's bytes go
 * once decoded, so at most one is held beside the tables.
 */
static struct ms_capture *load(struct load *l)
{
	uint32_t n_sections = 0, i;
	int ret = -1;

	l->cap = ms_capture_new();
	if (!l->cap) {
		free(l->owned);
		return NULL;
	}
	if (check_header(l, &n_sections) == 0 && load_sections(l, n_sections) == 0) {
		free(l->owned);
		l->owned = NULL;
		l->buf = NULL;
		/* Strings first: every other table refers to them. */
		if (decode(l, MS_CAPF_STRINGS, decode_strings) == 0 &&
		    decode(l, MS_CAPF_INFO, decode_info) == 0 &&
		    decode(l, MS_CAPF_MODULES, decode_modules) == 0 &&
		    decode(l, MS_CAPF_PERF_MAPS, decode_perf_maps) == 0 &&
		    decode(l, MS_CAPF_PY_PROCESSES, decode_py_processes) == 0 &&
		    decode(l, MS_CAPF_FUNCTIONS, decode_functions) == 0 &&
		    decode(l, MS_CAPF_LINES, decode_lines) == 0 &&
		    decode(l, MS_CAPF_FRAMES, decode_frames) == 0 &&
		    decode(l, MS_CAPF_STACKS, decode_stacks) == 0 &&
		    decode(l, MS_CAPF_THREADS, decode_threads) == 0 &&
		    decode(l, MS_CAPF_LABEL_SPANS, decode_label_spans) == 0 &&
		    decode(l, MS_CAPF_TASKS, decode_tasks) == 0 &&
		    decode(l, MS_CAPF_WAITS, decode_waits) == 0 &&
		    decode(l, MS_CAPF_SAMPLES, decode_samples) == 0 &&
		    decode(l, MS_CAPF_COUNTS, decode_counts) == 0 &&
		    decode(l, MS_CAPF_PROBLEMS, decode_problems) == 0 &&
		    decode(l, MS_CAPF_TOTALS, decode_totals) == 0 &&
		    decode(l, MS_CAPF_DUTY, decode_duty) == 0 &&
		    decode(l, MS_CAPF_LOSSES, decode_losses) == 0 &&
		    decode(l, MS_CAPF_EVIDENCE, decode_evidence) == 0 &&
		    decode(l, MS_CAPF_INTERVALS, decode_intervals) == 0)
			ret = 0;
	}
	free(l->owned);
	for (i = 0; i <= MS_CAPF_SECTION_LAST; i++)
		free(l->raw[i]);
	if (ret < 0) {
		ms_capture_free(l->cap);
		return NULL;
	}
	return l->cap;
}

struct ms_capture *ms_capture_load_buffer(const void *buf, size_t len, const char *name)
{
	struct load l = { .name = name, .buf = buf, .len = len };

	return load(&l);
}

/* A capture read whole from standard input ("-"): a pipe has no size to read up to. */
static struct ms_capture *load_stdin(void)
{
	struct load l = { .name = "stdin" };
	unsigned char *buf;
	size_t len;

	if (ms_read_file("-", SIZE_MAX / 2, &buf, &len) < 0)
		return NULL;
	l.buf = l.owned = buf;
	l.len = len;
	return load(&l);
}

struct ms_capture *ms_capture_load(const char *path)
{
	struct ms_capture *cap = NULL;
	unsigned char *buf = NULL;
	struct stat st;
	size_t len = 0;
	int fd;

	if (!strcmp(path, "-"))
		return load_stdin();
	fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		ms_error_errno("cannot open capture '%s'", path);
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		ms_error_errno("cannot stat capture '%s'", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ms_error("capture '%s' is not a regular file", path);
		goto out;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		ms_error("out of memory reading capture '%s' (%jd bytes)", path, (intmax_t)st.st_size);
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ms_error_errno("cannot read capture '%s'", path);
			goto out;
		}
		if (n == 0)
			break;
		len += n;
	}
	{
		struct load l = { .name = path, .buf = buf, .owned = buf, .len = len };

		buf = NULL;
		close(fd);
		return load(&l);
	}
out:
	free(buf);
	close(fd);
	return cap;
}

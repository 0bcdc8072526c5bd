/*
 * Each record kind's fields, as one table per kind (the layouts are the
 * comments in records.h and the spec in man/microscope-stream.5), and its
 * pack and unpack through the generic codec (stream/schema.c). SAMPLE and
 * the stack records have their fast paths in stream/fastrec.c.
 */
#include "stream/records.h"
#include "stream/fastpack.h"
#include "stream/schema.h"
#include "bpf/sampler.h"
#include "util/bits.h"
#include "util/error.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[] = {
	[MS_REC_HEADER] = "header",
	[MS_REC_TRAILER] = "trailer",
	[MS_REC_PROBLEM] = "problem",
	[MS_REC_INFO] = "info",
	[MS_REC_PY_PROCESS] = "py-process",
	[MS_REC_PY_CODE] = "py-code",
	[MS_REC_JIT_OBJECT] = "jit-object",
	[MS_REC_ATTR] = "attr",
	[MS_REC_RAW] = "raw",
	[MS_REC_TARGET] = "target",
	[MS_REC_TARGET_EXIT] = "target-exit",
	[MS_REC_ROUND] = "round",
	[MS_REC_VDSO] = "vdso",
	[MS_REC_DUTY] = "duty",
	[MS_REC_TRACEPOINT] = "tracepoint",
	[MS_REC_JIT_FUNC] = "jit-func",
	[MS_REC_JIT_READ] = "jit-read",
	[MS_REC_SAMPLE] = "sample",
	[MS_REC_MMAP] = "mmap",
	[MS_REC_COMM] = "comm",
	[MS_REC_FORK] = "fork",
	[MS_REC_EXIT] = "exit",
	[MS_REC_LOST] = "lost",
	[MS_REC_THROTTLE] = "throttle",
	[MS_REC_STACK_FILE] = "stack-file",
	[MS_REC_SWITCH] = "switch",
	[MS_REC_SWITCH_OUT] = "switch-out",
	[MS_REC_MODULE] = "module",
	[MS_REC_STACK] = "stack",
	[MS_REC_STACK_DEF] = "stack-def",
	[MS_REC_STACK_REF] = "stack-ref",
	[MS_REC_OFF_CPU] = "off-cpu",
	[MS_REC_INTERVAL] = "interval",
	[MS_REC_PY_STACK] = "py-stack",
	[MS_REC_LABEL_SPAN] = "label-span",
	[MS_REC_PY_SNAPSHOT] = "py-snapshot",
	[MS_REC_TASK_WAIT] = "task-wait",
	[MS_REC_FRAME] = "frame",
};

const char *ms_record_kind_name(uint32_t kind)
{
	if (kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

static const char *const jit_read_status_names[] = {
	[MS_JIT_READ_OK] = "ok",
	[MS_JIT_READ_BOUNDED] = "bounded",
	[MS_JIT_READ_MISSING] = "missing",
	[MS_JIT_READ_STALE] = "stale",
	[MS_JIT_READ_FAILED] = "failed",
};

const char *ms_jit_read_status_name(uint32_t status)
{
	return status < MS_JIT_READ_STATUS_COUNT ? jit_read_status_names[status] : "unknown";
}

static const char *const py_process_status_names[] = {
	[MS_PY_PROCESS_OK] = "ok",
	[MS_PY_PROCESS_UNSUPPORTED] = "unsupported",
	[MS_PY_PROCESS_FAILED] = "failed",
};

const char *ms_py_process_status_name(uint32_t status)
{
	return status < MS_PY_PROCESS_STATUS_COUNT ? py_process_status_names[status] : "unknown";
}

static const char *const py_code_status_names[] = {
	[MS_PY_CODE_OK] = "ok",
	[MS_PY_CODE_UNREADABLE] = "unreadable",
	[MS_PY_CODE_INVALID] = "invalid",
	[MS_PY_CODE_NO_LINES] = "no-lines",
};

const char *ms_py_code_status_name(uint32_t status)
{
	return status < MS_PY_CODE_STATUS_COUNT ? py_code_status_names[status] : "unknown";
}

static const char *const py_snapshot_status_names[] = {
	[MS_PY_SNAPSHOT_COMPLETE] = "complete",
	[MS_PY_SNAPSHOT_CHANGED] = "changed",
};

const char *ms_py_snapshot_status_name(uint32_t status)
{
	return status < MS_PY_SNAPSHOT_STATUS_COUNT ? py_snapshot_status_names[status] : "unknown";
}

static const char *const task_wait_status_names[] = {
	[MS_TASK_WAIT_COMPLETE] = "complete",
	[MS_TASK_WAIT_CHANGED] = "changed",
	[MS_TASK_WAIT_DROPPED] = "dropped",
};

const char *ms_task_wait_status_name(uint32_t status)
{
	return status < MS_TASK_WAIT_STATUS_COUNT ? task_wait_status_names[status] : "unknown";
}

static const char *const stack_end_names[] = {
	[MS_END_OUTERMOST] = "outermost",
	[MS_END_FP_CHAIN] = "fp-chain",
	[MS_END_NO_CFI] = "no-cfi",
	[MS_END_MISSING_REGISTER] = "missing-register",
	[MS_END_STACK_COPY] = "stack-copy",
	[MS_END_CFA_NOT_OUTWARDS] = "cfa-not-outwards",
	[MS_END_NO_MODULE] = "no-module",
	[MS_END_DEPTH] = "depth",
	[MS_END_KERNEL_ONLY] = "kernel-only",
	[MS_END_INTERPRETED_UNKNOWN] = "interpreted-unknown",
	[MS_END_INTERPRETED_UNPLACED] = "interpreted-unplaced",
	[MS_END_INTERPRETED_TRUNCATED] = "interpreted-truncated",
};

const char *ms_stack_end_name(uint32_t reason)
{
	if (reason < sizeof(stack_end_names) / sizeof(stack_end_names[0]) &&
	    stack_end_names[reason])
		return stack_end_names[reason];
	return "unknown";
}

static const char *const cause_names[] = {
	[MS_CAUSE_UNKNOWN] = "unknown",
	[MS_CAUSE_PREEMPTED] = "preempted",
	[MS_CAUSE_SLEEPING] = "sleeping",
	[MS_CAUSE_BLOCKED] = "blocked",
};

const char *ms_off_cpu_cause_name(uint32_t cause)
{
	return cause < MS_CAUSE_COUNT ? cause_names[cause] : "unknown";
}

/* TASK_REPORT_MAX, TASK_INTERRUPTIBLE and TASK_UNINTERRUPTIBLE as sched_switch reports them. */
#define PREV_STATE_PREEMPTED 0x100u
#define PREV_STATE_S 0x1u
#define PREV_STATE_D 0x2u

uint32_t ms_off_cpu_cause_of_state(uint64_t prev_state)
{
	if (prev_state == 0 || prev_state == PREV_STATE_PREEMPTED)
		return MS_CAUSE_PREEMPTED;
	if (prev_state == PREV_STATE_S)
		return MS_CAUSE_SLEEPING;
	if (prev_state == PREV_STATE_D)
		return MS_CAUSE_BLOCKED;
	return MS_CAUSE_UNKNOWN;
}

static const char *const frame_reason_names[] = {
	[MS_SYM_OK] = "ok",
	[MS_SYM_NO_FILE] = "no-file",
	[MS_SYM_NO_SYMBOL] = "no-symbol",
	[MS_SYM_IDENTITY] = "identity",
	[MS_SYM_BAD_ELF] = "bad-elf",
	[MS_SYM_NO_MODULE] = "no-module",
	[MS_SYM_NO_DEBUG] = "no-debug-file",
	[MS_SYM_DEBUG_MISMATCH] = "build-id-mismatch",
	[MS_SYM_BAD_DWARF] = "bad-dwarf",
	[MS_SYM_NOT_IN_DEBUG] = "not-in-debug-info",
	[MS_SYM_FDE_ONLY] = "fde-only",
};

const char *ms_frame_reason_name(uint32_t reason)
{
	if (reason < sizeof(frame_reason_names) / sizeof(frame_reason_names[0]) &&
	    frame_reason_names[reason])
		return frame_reason_names[reason];
	return "unknown";
}

/* ---- field codecs the generic types cannot say ---- */

/* INFO's value: a string or an unsigned integer. */
static int info_value_unpack(struct ms_cursor *c, const struct ms_field *f,
			     const struct ms_record *rec, void *obj)
{
	struct ms_info *i = obj;
	const unsigned char *ptr;
	uint32_t len;
	int r;

	i->text.ptr = NULL;
	i->text.len = 0;
	i->number = 0;
	if ((r = ms_cur_body(c, false, &ptr, &len)) > 0) {
		i->is_text = true;
		i->text.ptr = (const char *)ptr;
		i->text.len = len;
		return 0;
	}
	if (!r && (r = ms_cur_uint(c, &i->number)) > 0) {
		i->is_text = false;
		return 0;
	}
	if (r < 0)
		return ms_field_short(rec);
	return ms_field_bad(rec, f->name, "is neither a string nor an unsigned integer");
}

static size_t info_value_size(const struct ms_field *f, uint32_t kind, const void *obj)
{
	const struct ms_info *i = obj;

	(void)f;
	(void)kind;
	return i->is_text ? ms_str_size(i->text.len) : ms_uint_size(i->number);
}

static char *info_value_pack(char *p, const struct ms_field *f, const void *obj)
{
	const struct ms_info *i = obj;

	(void)f;
	return i->is_text ? ms_put_str(p, i->text.ptr, i->text.len) : fp_uint(p, i->number);
}

static const struct ms_field_codec info_value = {
	info_value_unpack, info_value_size, info_value_pack,
};

/*
 * A SAMPLE's registers: one bin of little-endian u64s (minor 2), or an
 * array of unsigned integers; as many as regs_mask has bits, unless there
 * are none at all (abi 0 is allowed whatever the mask asked for).
 */
static int sample_regs_unpack(struct ms_cursor *c, const struct ms_field *f,
			      const struct ms_record *rec, void *obj)
{
	struct ms_sample *s = obj;
	int r;

	if (ms_cur_next_is_bin(c)) {
		const unsigned char *le;
		uint32_t n;

		if ((r = ms_cur_body(c, true, &le, &n)) < 0)
			return ms_field_short(rec);
		if (n > 8 * MS_REGS_MAX)
			return ms_field_bad(rec, f->name, "holds %u bytes, more than %u", n,
					    8 * MS_REGS_MAX);
		if (n % 8)
			return ms_field_bad(rec, f->name, "holds %u bytes, not a multiple of 8", n);
		s->n_regs = n / 8;
		for (uint32_t i = 0; i < s->n_regs; i++)
			s->regs[i] = ms_get_le64(le + 8 * i);
	} else {
		if (ms_field_array(c, rec, f->name, &s->n_regs, MS_REGS_MAX) < 0)
			return -1;
		for (uint32_t i = 0; i < s->n_regs; i++) {
			if ((r = ms_cur_uint_quick(c, &s->regs[i])) < 0)
				return ms_field_short(rec);
			if (!r)
				return ms_field_bad(rec, f->name,
						    "element %u is not an unsigned integer", i);
		}
	}
	if ((s->regs_abi || s->n_regs) &&
	    s->n_regs != (uint32_t)ms_popcount64(s->regs_mask))
		return ms_field_bad(rec, f->name,
				    "has %u registers but regs_mask 0x%" PRIx64 " has %d bits",
				    s->n_regs, s->regs_mask, ms_popcount64(s->regs_mask));
	return 0;
}

static size_t sample_regs_size(const struct ms_field *f, uint32_t kind, const void *obj)
{
	const struct ms_sample *s = obj;

	(void)f;
	if (s->n_regs > MS_REGS_MAX) {
		ms_field_too_many(kind, "registers", s->n_regs, MS_REGS_MAX);
		return SIZE_MAX;
	}
	return ms_bin_size(8 * s->n_regs);
}

static char *sample_regs_pack(char *p, const struct ms_field *f, const void *obj)
{
	const struct ms_sample *s = obj;

	(void)f;
	p = fp_bin(p, 8 * s->n_regs);
	for (uint32_t i = 0; i < s->n_regs; i++, p += 8) {
		uint64_t v = s->regs[i];

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
		v = __builtin_bswap64(v);
#endif
		memcpy(p, &v, 8);
	}
	return p;
}

static const struct ms_field_codec sample_regs = {
	sample_regs_unpack, sample_regs_size, sample_regs_pack,
};

/* A SAMPLE's stack: the copied bytes, or [offset, length] in the STACK_FILE (minor 2). */
static int sample_stack_unpack(struct ms_cursor *c, const struct ms_field *f,
			       const struct ms_record *rec, void *obj)
{
	struct ms_sample *s = obj;
	const unsigned char *ptr;
	uint64_t len = 0;
	uint32_t n;
	int r1, r2 = 0;

	s->stack_in_file = false;
	s->stack_offset = 0;
	if (!ms_cur_next_is_array(c)) {
		if ((r1 = ms_cur_body(c, true, &ptr, &n)) < 0)
			return ms_field_short(rec);
		if (!r1)
			return ms_field_bad(rec, f->name, "is not a bin");
		if (n > MS_STACK_MAX)
			return ms_field_bad(rec, f->name, "holds %u bytes, more than %u", n,
					    MS_STACK_MAX);
		s->stack = ptr;
		s->stack_len = n;
		return 0;
	}
	if (ms_field_array(c, rec, f->name, &n, 2) < 0)
		return -1;
	if (n != 2)
		return ms_field_bad(rec, f->name, "is neither a bin nor [offset, length]");
	if ((r1 = ms_cur_uint(c, &s->stack_offset)) < 0 ||
	    (r1 && (r2 = ms_cur_uint(c, &len)) < 0))
		return ms_field_short(rec);
	if (!r1 || !r2)
		return ms_field_bad(rec, f->name, "is neither a bin nor [offset, length]");
	if (len > MS_STACK_MAX)
		return ms_field_bad(rec, f->name, "refers to %" PRIu64 " bytes, more than %u",
				    len, MS_STACK_MAX);
	s->stack_len = (uint32_t)len;
	s->stack = NULL;
	s->stack_in_file = true;
	return 0;
}

static size_t sample_stack_size(const struct ms_field *f, uint32_t kind, const void *obj)
{
	const struct ms_sample *s = obj;

	(void)f;
	if (s->stack_len > MS_STACK_MAX) {
		ms_field_too_many(kind, "stack bytes", s->stack_len, MS_STACK_MAX);
		return SIZE_MAX;
	}
	if (s->stack_in_file)
		return 1 + ms_uint_size(s->stack_offset) + ms_uint_size(s->stack_len);
	return ms_bin_size(s->stack_len);
}

static char *sample_stack_pack(char *p, const struct ms_field *f, const void *obj)
{
	const struct ms_sample *s = obj;

	(void)f;
	if (!s->stack_in_file)
		return ms_put_bin(p, s->stack, s->stack_len);
	*p++ = (char)(0x90 | 2);
	p = fp_uint(p, s->stack_offset);
	return fp_uint(p, s->stack_len);
}

static const struct ms_field_codec sample_stack = {
	sample_stack_unpack, sample_stack_size, sample_stack_pack,
};

/* One entry of a frame's inline chain: [function, system_name, file, line, function_line]. */
static int frame_line_unpack(struct ms_cursor *c, const struct ms_record *rec, uint32_t i,
			     struct ms_frame_line *l)
{
	struct ms_str *strs[3] = { &l->function, &l->system_name, &l->file };
	uint64_t nums[2];
	uint32_t n;
	int r;

	/* Later minor versions may add fields to an entry: extra ones are ignored. */
	if ((r = ms_cur_array(c, &n)) < 0)
		return ms_field_short(rec);
	if (!r || n < 5)
		return ms_field_bad(rec, "lines", "entry %u is not an array of 5 fields "
				    "(function, system_name, file, line, function_line)", i);
	for (int k = 0; k < 3; k++) {
		const unsigned char *ptr;

		if ((r = ms_cur_body(c, false, &ptr, &strs[k]->len)) < 0)
			return ms_field_short(rec);
		if (!r)
			return ms_field_bad(rec, "lines", "entry %u: function, system_name and "
					    "file must be strings", i);
		strs[k]->ptr = (const char *)ptr;
	}
	for (int k = 0; k < 2; k++) {
		if ((r = ms_cur_uint(c, &nums[k])) < 0)
			return ms_field_short(rec);
		if (!r || nums[k] > UINT32_MAX)
			return ms_field_bad(rec, "lines", "entry %u: line and function_line must "
					    "be unsigned 32-bit integers", i);
	}
	l->line = (uint32_t)nums[0];
	l->function_line = (uint32_t)nums[1];
	for (uint32_t k = 5; k < n; k++)
		if (ms_cur_skip(c) < 0)
			return ms_field_short(rec);
	return 0;
}

static int frame_lines_unpack(struct ms_cursor *c, const struct ms_field *f,
			      const struct ms_record *rec, void *obj)
{
	struct ms_frame *fr = obj;
	uint32_t n;

	fr->n_lines = 0;
	/* lines came with minor version 1: a record without them has none. */
	if (!c)
		return 0;
	if (ms_field_array(c, rec, f->name, &n, MS_FRAME_LINES_MAX) < 0)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (frame_line_unpack(c, rec, i, &fr->lines[i]) < 0)
			return -1;
	fr->n_lines = n;
	return 0;
}

static size_t frame_lines_size(const struct ms_field *f, uint32_t kind, const void *obj)
{
	const struct ms_frame *fr = obj;
	size_t size;

	(void)f;
	if (fr->n_lines > MS_FRAME_LINES_MAX) {
		ms_field_too_many(kind, "lines", fr->n_lines, MS_FRAME_LINES_MAX);
		return SIZE_MAX;
	}
	size = ms_array_size(fr->n_lines);
	for (uint32_t i = 0; i < fr->n_lines; i++) {
		const struct ms_frame_line *l = &fr->lines[i];

		size += 1 + ms_str_size(l->function.len) + ms_str_size(l->system_name.len) +
			ms_str_size(l->file.len) + ms_uint_size(l->line) +
			ms_uint_size(l->function_line);
	}
	return size;
}

static char *frame_lines_pack(char *p, const struct ms_field *f, const void *obj)
{
	const struct ms_frame *fr = obj;

	(void)f;
	p = fp_array(p, fr->n_lines);
	for (uint32_t i = 0; i < fr->n_lines; i++) {
		const struct ms_frame_line *l = &fr->lines[i];

		*p++ = (char)(0x90 | 5);
		p = ms_put_str(p, l->function.ptr, l->function.len);
		p = ms_put_str(p, l->system_name.ptr, l->system_name.len);
		p = ms_put_str(p, l->file.ptr, l->file.len);
		p = fp_uint(p, l->line);
		p = fp_uint(p, l->function_line);
	}
	return p;
}

static const struct ms_field_codec frame_lines = {
	frame_lines_unpack, frame_lines_size, frame_lines_pack,
};

/* A module's base (minor 5): absent in older streams, 0 then. */
static int module_base_unpack(struct ms_cursor *c, const struct ms_field *f,
			      const struct ms_record *rec, void *obj)
{
	struct ms_module *m = obj;
	int r;

	m->base = 0;
	if (!c)
		return 0;
	if ((r = ms_cur_uint(c, &m->base)) <= 0)
		return r < 0 ? ms_field_bad(rec, f->name, "is not an unsigned integer") :
			       ms_field_short(rec);
	return 0;
}

static size_t module_base_size(const struct ms_field *f, uint32_t kind, const void *obj)
{
	(void)f;
	(void)kind;
	return ms_uint_size(((const struct ms_module *)obj)->base);
}

static char *module_base_pack(char *p, const struct ms_field *f, const void *obj)
{
	(void)f;
	return fp_uint(p, ((const struct ms_module *)obj)->base);
}

static const struct ms_field_codec module_base = {
	module_base_unpack, module_base_size, module_base_pack,
};

/* ---- the field tables: one per kind, in the order of records.h ---- */

#define U32(T, m) { #m, MS_F_U32, 0, offsetof(T, m), 0, 0, NULL, NULL }
#define U64(T, m) { #m, MS_F_U64, 0, offsetof(T, m), 0, 0, NULL, NULL }
#define BOOL(T, m) { #m, MS_F_BOOL, 0, offsetof(T, m), 0, 0, NULL, NULL }
#define STR(T, m) { #m, MS_F_STR, 0, offsetof(T, m), 0, 0, NULL, NULL }
#define COUNTED(T, type, m, n, max, what, flags) \
	{ #m, type, flags, offsetof(T, m), offsetof(T, n), max, what, NULL }
#define CUSTOM(name, codec, flags) { name, MS_F_CUSTOM, flags, 0, 0, 0, NULL, &codec }
#define SCHEMA(k, table) { k, sizeof(table) / sizeof(table[0]), table }

static const struct ms_field problem_fields[] = {
	STR(struct ms_problem, stage),
	STR(struct ms_problem, code),
	U64(struct ms_problem, count),
	STR(struct ms_problem, detail),
};

static const struct ms_field info_fields[] = {
	STR(struct ms_info, key),
	CUSTOM("value", info_value, 0),
};

static const struct ms_field attr_fields[] = {
	U32(struct ms_attr, type),
	U64(struct ms_attr, config),
	U64(struct ms_attr, sample_type),
	U64(struct ms_attr, read_format),
	U64(struct ms_attr, sample_regs_user),
	U32(struct ms_attr, sample_stack_user),
	U32(struct ms_attr, flags),
	COUNTED(struct ms_attr, MS_F_U64S, ids, n_ids, MS_ATTR_IDS_MAX, "ids", 0),
};

static const struct ms_field raw_fields[] = {
	U32(struct ms_raw, cpu),
	COUNTED(struct ms_raw, MS_F_BIN, data, len, UINT32_MAX, "data bytes", 0),
};

static const struct ms_field target_fields[] = {
	U32(struct ms_target, pid),
	BOOL(struct ms_target, launched),
	COUNTED(struct ms_target, MS_F_STRS, argv, argc, MS_ARGV_MAX, "arguments", 0),
};

static const struct ms_field target_exit_fields[] = {
	U32(struct ms_target_exit, pid),
	U32(struct ms_target_exit, wait_status),
	U32(struct ms_target_exit, exit_code),
};

static const struct ms_field duty_fields[] = {
	U64(struct ms_duty, time),
	U32(struct ms_duty, duty_ppm),
	U64(struct ms_duty, rate),
	U32(struct ms_duty, share_ppm),
	U32(struct ms_duty, budget_ppm),
};

static const struct ms_field jit_func_fields[] = {
	U32(struct ms_jit_func, pid),
	U64(struct ms_jit_func, time),
	U64(struct ms_jit_func, start),
	U64(struct ms_jit_func, end),
	STR(struct ms_jit_func, name),
	U32(struct ms_jit_func, source),
	U32(struct ms_jit_func, line),
	U32(struct ms_jit_func, flags),
	COUNTED(struct ms_jit_func, MS_F_BIN, rows, rows_len, MS_JIT_ROWS_MAX, "row bytes", 0),
};

static const struct ms_field py_process_fields[] = {
	U32(struct ms_py_process, pid),
	U64(struct ms_py_process, time),
	U32(struct ms_py_process, status),
	U32(struct ms_py_process, version_hex),
	U32(struct ms_py_process, source),
	STR(struct ms_py_process, path),
	STR(struct ms_py_process, engine),
	STR(struct ms_py_process, reason),
};

static const struct ms_field py_code_fields[] = {
	U32(struct ms_py_code, pid),
	U64(struct ms_py_code, time),
	U64(struct ms_py_code, code),
	U64(struct ms_py_code, stamp),
	U32(struct ms_py_code, status),
	STR(struct ms_py_code, qualname),
	STR(struct ms_py_code, file),
	U32(struct ms_py_code, firstlineno),
	U64(struct ms_py_code, code_start),
	COUNTED(struct ms_py_code, MS_F_BIN, linetable, linetable_len, MS_PY_LINETABLE_STREAM_MAX,
		"locations table bytes", 0),
};

static const struct ms_field py_stack_fields[] = {
	U32(struct ms_py_stack, pid),
	U32(struct ms_py_stack, tid),
	U64(struct ms_py_stack, time),
	U32(struct ms_py_stack, cpu),
	U32(struct ms_py_stack, status),
	U32(struct ms_py_stack, gil),
	U64(struct ms_py_stack, tstate),
	COUNTED(struct ms_py_stack, MS_F_U64S, words, n_words, 4 * MS_PY_STACK_FRAMES_MAX,
		"frame words", 0),
};

static const struct ms_field py_snapshot_fields[] = {
	U32(struct ms_py_snapshot, pid),
	U32(struct ms_py_snapshot, tid),
	U64(struct ms_py_snapshot, time),
	U64(struct ms_py_snapshot, round),
	U32(struct ms_py_snapshot, status),
	U32(struct ms_py_snapshot, gil),
	U64(struct ms_py_snapshot, tstate),
	STR(struct ms_py_snapshot, reason),
	COUNTED(struct ms_py_snapshot, MS_F_U64S, words, n_words, 4 * MS_PY_SNAPSHOT_FRAMES_MAX,
		"frame words", 0),
};

static const struct ms_field task_wait_fields[] = {
	U32(struct ms_task_wait, pid),
	U32(struct ms_task_wait, tid),
	U64(struct ms_task_wait, time),
	STR(struct ms_task_wait, kind),
	U64(struct ms_task_wait, id),
	U32(struct ms_task_wait, status),
	U32(struct ms_task_wait, stack),
	STR(struct ms_task_wait, reason),
};

static const struct ms_field label_span_fields[] = {
	U32(struct ms_label_span, pid),
	U32(struct ms_label_span, tid),
	U64(struct ms_label_span, start),
	U64(struct ms_label_span, end),
	U64(struct ms_label_span, samples),
	STR(struct ms_label_span, key),
	STR(struct ms_label_span, value),
};

static const struct ms_field jit_object_fields[] = {
	U32(struct ms_jit_object, pid),
	U64(struct ms_jit_object, time),
	U64(struct ms_jit_object, entry),
	U64(struct ms_jit_object, addr),
	U64(struct ms_jit_object, size),
	U64(struct ms_jit_object, offset),
	COUNTED(struct ms_jit_object, MS_F_BIN, chunk, chunk_len, MS_JIT_OBJECT_CHUNK, "chunk bytes", 0),
};

static const struct ms_field jit_read_fields[] = {
	U32(struct ms_jit_read, pid),
	U64(struct ms_jit_read, time),
	STR(struct ms_jit_read, path),
	U32(struct ms_jit_read, status),
	U32(struct ms_jit_read, err),
	U64(struct ms_jit_read, offset),
	U64(struct ms_jit_read, functions),
	U64(struct ms_jit_read, malformed),
	U64(struct ms_jit_read, over_max),
	U64(struct ms_jit_read, no_code),
	U64(struct ms_jit_read, code_unread),
	U64(struct ms_jit_read, code_bytes),
};

static const struct ms_field tracepoint_fields[] = {
	U64(struct ms_tracepoint, config),
	STR(struct ms_tracepoint, name),
	COUNTED(struct ms_tracepoint, MS_F_STRS, fields, n_fields, MS_TRACEPOINT_FIELDS_MAX,
		"fields", 0),
	COUNTED(struct ms_tracepoint, MS_F_U64S, offsets, n_offsets, MS_TRACEPOINT_FIELDS_MAX,
		"offsets", 0),
	COUNTED(struct ms_tracepoint, MS_F_U64S, sizes, n_sizes, MS_TRACEPOINT_FIELDS_MAX,
		"sizes", 0),
	COUNTED(struct ms_tracepoint, MS_F_U64S, is_signed, n_signed, MS_TRACEPOINT_FIELDS_MAX,
		"signed flags", 0),
};

static const struct ms_field vdso_fields[] = {
	COUNTED(struct ms_vdso, MS_F_BIN, image, len, MS_VDSO_MAX, "image bytes", MS_F_NONEMPTY),
};

static const struct ms_field sample_fields[] = {
	U32(struct ms_sample, pid),
	U32(struct ms_sample, tid),
	U64(struct ms_sample, time),
	U32(struct ms_sample, cpu),
	U64(struct ms_sample, period),
	U64(struct ms_sample, ip),
	U32(struct ms_sample, cpumode),
	COUNTED(struct ms_sample, MS_F_U64S, kchain, n_kchain, MS_CHAIN_MAX, "kernel frames", 0),
	COUNTED(struct ms_sample, MS_F_U64S, uchain, n_uchain, MS_CHAIN_MAX, "user frames", 0),
	U32(struct ms_sample, regs_abi),
	U64(struct ms_sample, regs_mask),
	CUSTOM("regs", sample_regs, 0),
	CUSTOM("stack", sample_stack, 0),
};

/* A switch-out: the sample's fields, the struct's first member, then its evidence. */
#define SW(m) sample.m
static const struct ms_field switch_out_fields[] = {
	U32(struct ms_switch_out, SW(pid)),
	U32(struct ms_switch_out, SW(tid)),
	U64(struct ms_switch_out, SW(time)),
	U32(struct ms_switch_out, SW(cpu)),
	U64(struct ms_switch_out, SW(period)),
	U64(struct ms_switch_out, SW(ip)),
	U32(struct ms_switch_out, SW(cpumode)),
	COUNTED(struct ms_switch_out, MS_F_U64S, SW(kchain), SW(n_kchain), MS_CHAIN_MAX,
		"kernel frames", 0),
	COUNTED(struct ms_switch_out, MS_F_U64S, SW(uchain), SW(n_uchain), MS_CHAIN_MAX,
		"user frames", 0),
	U32(struct ms_switch_out, SW(regs_abi)),
	U64(struct ms_switch_out, SW(regs_mask)),
	CUSTOM("regs", sample_regs, 0),
	CUSTOM("stack", sample_stack, 0),
	U64(struct ms_switch_out, state),
	U32(struct ms_switch_out, cause),
};
#undef SW

static const struct ms_field switch_fields[] = {
	U32(struct ms_switch, pid),
	U32(struct ms_switch, tid),
	U64(struct ms_switch, time),
	U32(struct ms_switch, cpu),
	BOOL(struct ms_switch, out),
	BOOL(struct ms_switch, preempt),
};

static const struct ms_field stack_file_fields[] = {
	STR(struct ms_stack_file, path),
	U32(struct ms_stack_file, dev_maj),
	U32(struct ms_stack_file, dev_min),
	U64(struct ms_stack_file, ino),
	U64(struct ms_stack_file, size),
	U64(struct ms_stack_file, mtime),
};

static const struct ms_field mmap_fields[] = {
	U32(struct ms_mmap, pid),
	U32(struct ms_mmap, tid),
	U64(struct ms_mmap, time),
	U64(struct ms_mmap, start),
	U64(struct ms_mmap, len),
	U64(struct ms_mmap, pgoff),
	U32(struct ms_mmap, maj),
	U32(struct ms_mmap, min),
	U64(struct ms_mmap, ino),
	U64(struct ms_mmap, ino_generation),
	U32(struct ms_mmap, prot),
	U32(struct ms_mmap, flags),
	U32(struct ms_mmap, cpumode),
	BOOL(struct ms_mmap, synthesized),
	STR(struct ms_mmap, filename),
	COUNTED(struct ms_mmap, MS_F_BIN_COPY, build_id, build_id_len, MS_BUILD_ID_MAX,
		"build id bytes", 0),
};

static const struct ms_field comm_fields[] = {
	U32(struct ms_comm, pid),
	U32(struct ms_comm, tid),
	U64(struct ms_comm, time),
	BOOL(struct ms_comm, exec),
	BOOL(struct ms_comm, synthesized),
	STR(struct ms_comm, comm),
};

static const struct ms_field task_fields[] = {
	U32(struct ms_task, pid),
	U32(struct ms_task, ppid),
	U32(struct ms_task, tid),
	U32(struct ms_task, ptid),
	U64(struct ms_task, time),
};

static const struct ms_field lost_fields[] = {
	U32(struct ms_lost, source),
	U64(struct ms_lost, time),
	U64(struct ms_lost, id),
	U64(struct ms_lost, count),
};

static const struct ms_field throttle_fields[] = {
	U64(struct ms_throttle, time),
	U64(struct ms_throttle, id),
	BOOL(struct ms_throttle, unthrottle),
};

static const struct ms_field module_fields[] = {
	U32(struct ms_module, id),
	U32(struct ms_module, kind),
	STR(struct ms_module, path),
	COUNTED(struct ms_module, MS_F_BIN_COPY, build_id, build_id_len, MS_BUILD_ID_MAX,
		"build id bytes", 0),
	U32(struct ms_module, dev_maj),
	U32(struct ms_module, dev_min),
	U64(struct ms_module, ino),
	U64(struct ms_module, size),
	U64(struct ms_module, mtime),
	CUSTOM("base", module_base, MS_F_OPTIONAL),
};

static const struct ms_field stack_fields[] = {
	U32(struct ms_stack, pid),
	U32(struct ms_stack, tid),
	U64(struct ms_stack, time),
	U32(struct ms_stack, cpu),
	U64(struct ms_stack, period),
	U32(struct ms_stack, reason),
	CUSTOM("frames", ms_frames_codec, 0),
};

static const struct ms_field stack_ref_fields[] = {
	U32(struct ms_stack_ref, pid),
	U32(struct ms_stack_ref, tid),
	U64(struct ms_stack_ref, time),
	U32(struct ms_stack_ref, cpu),
	U64(struct ms_stack_ref, period),
	U32(struct ms_stack_ref, id),
};

static const struct ms_field off_cpu_fields[] = {
	U32(struct ms_off_cpu, pid),
	U32(struct ms_off_cpu, tid),
	U64(struct ms_off_cpu, time),
	U32(struct ms_off_cpu, cpu),
	U64(struct ms_off_cpu, state),
	U32(struct ms_off_cpu, cause),
	U32(struct ms_off_cpu, id),
};

static const struct ms_field interval_fields[] = {
	U32(struct ms_interval, pid),
	U32(struct ms_interval, tid),
	U64(struct ms_interval, start),
	U64(struct ms_interval, end),
	U32(struct ms_interval, cpu),
	U32(struct ms_interval, missing),
	U32(struct ms_interval, stack),
	U32(struct ms_interval, cause),
	U32(struct ms_interval, sources),
	U64(struct ms_interval, state),
	U32(struct ms_interval, preempt),
};

static const struct ms_field frame_fields[] = {
	U32(struct ms_frame, module),
	U64(struct ms_frame, address),
	STR(struct ms_frame, name),
	U64(struct ms_frame, symbol_start),
	U32(struct ms_frame, reason),
	CUSTOM("lines", frame_lines, MS_F_OPTIONAL),
};

static const struct ms_schema problem_schema = SCHEMA(MS_REC_PROBLEM, problem_fields);
static const struct ms_schema info_schema = SCHEMA(MS_REC_INFO, info_fields);
static const struct ms_schema attr_schema = SCHEMA(MS_REC_ATTR, attr_fields);
static const struct ms_schema raw_schema = SCHEMA(MS_REC_RAW, raw_fields);
static const struct ms_schema target_schema = SCHEMA(MS_REC_TARGET, target_fields);
static const struct ms_schema target_exit_schema = SCHEMA(MS_REC_TARGET_EXIT, target_exit_fields);
static const struct ms_schema round_schema = { MS_REC_ROUND, 0, NULL };
static const struct ms_schema vdso_schema = SCHEMA(MS_REC_VDSO, vdso_fields);
static const struct ms_schema duty_schema = SCHEMA(MS_REC_DUTY, duty_fields);
const struct ms_schema ms_sample_schema = SCHEMA(MS_REC_SAMPLE, sample_fields);
static const struct ms_schema stack_file_schema = SCHEMA(MS_REC_STACK_FILE, stack_file_fields);
static const struct ms_schema mmap_schema = SCHEMA(MS_REC_MMAP, mmap_fields);
static const struct ms_schema comm_schema = SCHEMA(MS_REC_COMM, comm_fields);
static const struct ms_schema task_schema = SCHEMA(MS_REC_FORK, task_fields);
static const struct ms_schema lost_schema = SCHEMA(MS_REC_LOST, lost_fields);
static const struct ms_schema throttle_schema = SCHEMA(MS_REC_THROTTLE, throttle_fields);
static const struct ms_schema module_schema = SCHEMA(MS_REC_MODULE, module_fields);
/* Modules other than perf-map ones are written without base, as before minor 5. */
static const struct ms_schema module_schema_v4 = {
	MS_REC_MODULE, sizeof(module_fields) / sizeof(module_fields[0]) - 1, module_fields
};
static const struct ms_schema jit_func_schema = SCHEMA(MS_REC_JIT_FUNC, jit_func_fields);
static const struct ms_schema jit_read_schema = SCHEMA(MS_REC_JIT_READ, jit_read_fields);
static const struct ms_schema jit_object_schema = SCHEMA(MS_REC_JIT_OBJECT, jit_object_fields);
static const struct ms_schema py_process_schema = SCHEMA(MS_REC_PY_PROCESS, py_process_fields);
static const struct ms_schema py_code_schema = SCHEMA(MS_REC_PY_CODE, py_code_fields);
static const struct ms_schema py_stack_schema = SCHEMA(MS_REC_PY_STACK, py_stack_fields);
static const struct ms_schema label_span_schema = SCHEMA(MS_REC_LABEL_SPAN, label_span_fields);
static const struct ms_schema py_snapshot_schema = SCHEMA(MS_REC_PY_SNAPSHOT, py_snapshot_fields);
static const struct ms_schema task_wait_schema = SCHEMA(MS_REC_TASK_WAIT, task_wait_fields);
const struct ms_schema ms_stack_schema = SCHEMA(MS_REC_STACK, stack_fields);
const struct ms_schema ms_stack_ref_schema = SCHEMA(MS_REC_STACK_REF, stack_ref_fields);
static const struct ms_schema frame_schema = SCHEMA(MS_REC_FRAME, frame_fields);
static const struct ms_schema tracepoint_schema = SCHEMA(MS_REC_TRACEPOINT, tracepoint_fields);
static const struct ms_schema switch_schema = SCHEMA(MS_REC_SWITCH, switch_fields);
static const struct ms_schema switch_out_schema = SCHEMA(MS_REC_SWITCH_OUT, switch_out_fields);
static const struct ms_schema off_cpu_schema = SCHEMA(MS_REC_OFF_CPU, off_cpu_fields);
static const struct ms_schema interval_schema = SCHEMA(MS_REC_INTERVAL, interval_fields);


/* ---- each kind's pack and unpack: the generic codec over its table ---- */

#define CODEC(name, type, schema)						\
	int ms_##name##_pack(struct ms_writer *w, const type *v)		\
	{									\
		return ms_schema_pack(&schema, schema.kind, w, v);		\
	}									\
	int ms_##name##_unpack(const struct ms_record *rec, type *v)		\
	{									\
		return ms_schema_unpack(&schema, 0, rec, v);			\
	}

CODEC(problem, struct ms_problem, problem_schema)
CODEC(info, struct ms_info, info_schema)
CODEC(attr, struct ms_attr, attr_schema)
CODEC(raw, struct ms_raw, raw_schema)
CODEC(target, struct ms_target, target_schema)
CODEC(target_exit, struct ms_target_exit, target_exit_schema)
CODEC(vdso, struct ms_vdso, vdso_schema)
CODEC(stack_file, struct ms_stack_file, stack_file_schema)
CODEC(mmap, struct ms_mmap, mmap_schema)
CODEC(comm, struct ms_comm, comm_schema)
CODEC(lost, struct ms_lost, lost_schema)
CODEC(throttle, struct ms_throttle, throttle_schema)
CODEC(duty, struct ms_duty, duty_schema)
CODEC(jit_read, struct ms_jit_read, jit_read_schema)

int ms_module_pack(struct ms_writer *w, const struct ms_module *m)
{
	return ms_schema_pack(m->kind == MS_MODULE_PERF_MAP || m->kind == MS_MODULE_JIT_OBJECT ?
			      &module_schema : &module_schema_v4,
			      MS_REC_MODULE, w, m);
}

int ms_module_unpack(const struct ms_record *rec, struct ms_module *m)
{
	return ms_schema_unpack(&module_schema, 0, rec, m);
}

/* A chunk that fits its object: what every reader relies on. */
static const char *jit_object_wrong(const struct ms_jit_object *o)
{
	if (o->size > MS_JIT_OBJECT_MAX)
		return "size is over MS_JIT_OBJECT_MAX";
	if (!o->size)
		return o->chunk_len || o->offset ? "an unregistration holds bytes" : NULL;
	if (!o->chunk_len)
		return "a chunk of a registered object is empty";
	if (o->offset >= o->size || o->chunk_len > o->size - o->offset)
		return "the chunk lies outside the object";
	return NULL;
}

int ms_jit_object_pack(struct ms_writer *w, const struct ms_jit_object *o)
{
	const char *why = jit_object_wrong(o);

	if (why)
		return ms_error("internal error: a JIT object record whose %s", why);
	return ms_schema_pack(&jit_object_schema, MS_REC_JIT_OBJECT, w, o);
}

int ms_jit_object_unpack(const struct ms_record *rec, struct ms_jit_object *o)
{
	const char *why;

	if (ms_schema_unpack(&jit_object_schema, 0, rec, o) < 0)
		return -1;
	if ((why = jit_object_wrong(o)))
		return ms_field_bad(rec, "size", "is %" PRIu64 " with a chunk of %" PRIu32
				    " bytes at %" PRIu64 ": %s", o->size, o->chunk_len, o->offset, why);
	return 0;
}

int ms_jit_func_pack(struct ms_writer *w, const struct ms_jit_func *f)
{
	if (f->start >= f->end || !f->name.len)
		return ms_error("internal error: a JIT function record with an empty range or name");
	return ms_schema_pack(&jit_func_schema, MS_REC_JIT_FUNC, w, f);
}

int ms_jit_func_unpack(const struct ms_record *rec, struct ms_jit_func *f)
{
	if (ms_schema_unpack(&jit_func_schema, 0, rec, f) < 0)
		return -1;
	if (f->start >= f->end)
		return ms_field_bad(rec, "end", "is not past start (0x%" PRIx64 " to 0x%" PRIx64 ")",
				    f->start, f->end);
	if (!f->name.len)
		return ms_field_bad(rec, "name", "is empty");
	if (f->source >= MS_JIT_SOURCE_COUNT)
		return ms_field_bad(rec, "source", "is %" PRIu32 ", not a known source",
				    f->source);
	return 0;
}

int ms_py_process_pack(struct ms_writer *w, const struct ms_py_process *p)
{
	return ms_schema_pack(&py_process_schema, MS_REC_PY_PROCESS, w, p);
}

int ms_py_process_unpack(const struct ms_record *rec, struct ms_py_process *p)
{
	if (ms_schema_unpack(&py_process_schema, 0, rec, p) < 0)
		return -1;
	if (p->status >= MS_PY_PROCESS_STATUS_COUNT)
		return ms_field_bad(rec, "status", "is %" PRIu32 ", not a known status", p->status);
	return 0;
}

int ms_py_code_pack(struct ms_writer *w, const struct ms_py_code *c)
{
	return ms_schema_pack(&py_code_schema, MS_REC_PY_CODE, w, c);
}

int ms_py_code_unpack(const struct ms_record *rec, struct ms_py_code *c)
{
	if (ms_schema_unpack(&py_code_schema, 0, rec, c) < 0)
		return -1;
	if (c->status >= MS_PY_CODE_STATUS_COUNT)
		return ms_field_bad(rec, "status", "is %" PRIu32 ", not a known status", c->status);
	if ((c->status == MS_PY_CODE_OK || c->status == MS_PY_CODE_NO_LINES) && !c->qualname.len)
		return ms_field_bad(rec, "qualname", "is empty for a code object read whole");
	return 0;
}

int ms_py_stack_pack(struct ms_writer *w, const struct ms_py_stack *s)
{
	if (s->n_words % 4)
		return ms_error("internal error: a py-stack record of %" PRIu32 " frame words, "
				"not four a frame", s->n_words);
	return ms_schema_pack(&py_stack_schema, MS_REC_PY_STACK, w, s);
}

int ms_py_stack_unpack(const struct ms_record *rec, struct ms_py_stack *s)
{
	if (ms_schema_unpack(&py_stack_schema, 0, rec, s) < 0)
		return -1;
	if (s->n_words % 4)
		return ms_field_bad(rec, "frames", "has %" PRIu32 " words, not four a frame",
				    s->n_words);
	if (s->status >= MS_BPF_PY_STATUS_COUNT)
		return ms_field_bad(rec, "status", "is %" PRIu32 ", not a known status", s->status);
	if (s->gil >= MS_BPF_PY_GIL_COUNT)
		return ms_field_bad(rec, "gil", "is %" PRIu32 ", not a known state", s->gil);
	return 0;
}

int ms_label_span_pack(struct ms_writer *w, const struct ms_label_span *l)
{
	if (l->start > l->end || !l->samples || !l->key.len || !l->value.len)
		return ms_error("internal error: a label span with an empty key or value, no "
				"samples, or an end before its start");
	return ms_schema_pack(&label_span_schema, MS_REC_LABEL_SPAN, w, l);
}

int ms_py_snapshot_pack(struct ms_writer *w, const struct ms_py_snapshot *s)
{
	if (s->n_words % 4 || (s->n_words && s->status != MS_PY_SNAPSHOT_COMPLETE))
		return ms_error("internal error: a py-snapshot record of %" PRIu32 " frame words "
				"and status %" PRIu32 " (four words a frame, frames only when "
				"complete)", s->n_words, s->status);
	return ms_schema_pack(&py_snapshot_schema, MS_REC_PY_SNAPSHOT, w, s);
}

int ms_py_snapshot_unpack(const struct ms_record *rec, struct ms_py_snapshot *s)
{
	if (ms_schema_unpack(&py_snapshot_schema, 0, rec, s) < 0)
		return -1;
	if (s->n_words % 4)
		return ms_field_bad(rec, "frames", "has %" PRIu32 " words, not four a frame",
				    s->n_words);
	if (s->status >= MS_PY_SNAPSHOT_STATUS_COUNT)
		return ms_field_bad(rec, "status", "is %" PRIu32 ", not a known status", s->status);
	if (s->n_words && s->status != MS_PY_SNAPSHOT_COMPLETE)
		return ms_field_bad(rec, "frames", "are given for a read that is not complete");
	if (s->gil >= MS_BPF_PY_GIL_COUNT)
		return ms_field_bad(rec, "gil", "is %" PRIu32 ", not a known state", s->gil);
	if (!s->round)
		return ms_field_bad(rec, "round", "is 0 (rounds count from 1)");
	return 0;
}

int ms_task_wait_pack(struct ms_writer *w, const struct ms_task_wait *t)
{
	if (!t->kind.len || t->status >= MS_TASK_WAIT_STATUS_COUNT ||
	    (t->status != MS_TASK_WAIT_COMPLETE && t->stack != UINT32_MAX))
		return ms_error("internal error: a task-wait record with an empty kind, status "
				"%" PRIu32 ", or a stack for a read that kept none", t->status);
	return ms_schema_pack(&task_wait_schema, MS_REC_TASK_WAIT, w, t);
}

int ms_task_wait_unpack(const struct ms_record *rec, struct ms_task_wait *t)
{
	if (ms_schema_unpack(&task_wait_schema, 0, rec, t) < 0)
		return -1;
	if (!t->kind.len)
		return ms_field_bad(rec, "kind", "is empty");
	if (t->status >= MS_TASK_WAIT_STATUS_COUNT)
		return ms_field_bad(rec, "status", "is %" PRIu32 ", not a known status", t->status);
	if (t->status != MS_TASK_WAIT_COMPLETE && t->stack != UINT32_MAX)
		return ms_field_bad(rec, "stack", "is %" PRIu32 " for a %s read, which keeps none",
				    t->stack, ms_task_wait_status_name(t->status));
	return 0;
}

int ms_label_span_unpack(const struct ms_record *rec, struct ms_label_span *l)
{
	if (ms_schema_unpack(&label_span_schema, 0, rec, l) < 0)
		return -1;
	if (l->start > l->end)
		return ms_field_bad(rec, "end", "is before start (%" PRIu64 " < %" PRIu64 ")",
				    l->end, l->start);
	if (!l->samples)
		return ms_field_bad(rec, "samples", "is 0");
	if (!l->key.len)
		return ms_field_bad(rec, "key", "is empty");
	if (!l->value.len)
		return ms_field_bad(rec, "value", "is empty");
	return 0;
}

CODEC(frame, struct ms_frame, frame_schema)
CODEC(switch, struct ms_switch, switch_schema)
CODEC(off_cpu, struct ms_off_cpu, off_cpu_schema)
CODEC(interval, struct ms_interval, interval_schema)

int ms_tracepoint_pack(struct ms_writer *w, const struct ms_tracepoint *t)
{
	if (t->n_offsets != t->n_fields || t->n_sizes != t->n_fields ||
	    t->n_signed != t->n_fields)
		return ms_error("internal error: a tracepoint record whose field arrays differ in "
				"length");
	return ms_schema_pack(&tracepoint_schema, MS_REC_TRACEPOINT, w, t);
}

int ms_tracepoint_unpack(const struct ms_record *rec, struct ms_tracepoint *t)
{
	if (ms_schema_unpack(&tracepoint_schema, 0, rec, t) < 0)
		return -1;
	if (t->n_offsets != t->n_fields || t->n_sizes != t->n_fields ||
	    t->n_signed != t->n_fields)
		return ms_field_bad(rec, "offsets", "has %u entries, sizes %u and signed flags %u "
				    "for %u fields: the arrays must be parallel", t->n_offsets,
				    t->n_sizes, t->n_signed, t->n_fields);
	return 0;
}

int ms_switch_out_pack(struct ms_writer *w, const struct ms_switch_out *s)
{
	return ms_schema_pack(&switch_out_schema, MS_REC_SWITCH_OUT, w, s);
}

int ms_switch_out_unpack(const struct ms_record *rec, struct ms_switch_out *s)
{
	return ms_schema_unpack(&switch_out_schema, 0, rec, s);
}


int ms_round_pack(struct ms_writer *w)
{
	return ms_schema_pack(&round_schema, MS_REC_ROUND, w, NULL);
}

int ms_task_pack(struct ms_writer *w, uint32_t kind, const struct ms_task *t)
{
	if (kind != MS_REC_FORK && kind != MS_REC_EXIT)
		return ms_error("internal error: a task record of kind %u", kind);
	return ms_schema_pack(&task_schema, kind, w, t);
}

int ms_task_unpack(const struct ms_record *rec, struct ms_task *t)
{
	/* fork and exit share the table */
	return ms_schema_unpack(&task_schema, rec->kind == MS_REC_EXIT ? MS_REC_EXIT : MS_REC_FORK,
				rec, t);
}

/* ---- counted problems ---- */

#define OTHER_PROBLEMS "other-problems"

void ms_problems_init(struct ms_problems *p, const char *stage)
{
	memset(p, 0, sizeof(*p));
	p->stage = stage;
}

void ms_problems_add(struct ms_problems *p, const char *code, const char *detail_fmt, ...)
{
	const char *orig = code;
	uint32_t i;
	bool fold = false;
	va_list ap;
	char *detail;
	int off = 0;

	for (i = 0; i < p->n; i++) {
		if (!strcmp(p->entries[i].code, code)) {
			p->entries[i].count++;
			return;
		}
	}
	/* The last slot is kept for the codes that find no slot of their own. */
	if (p->n >= MS_PROBLEM_CODES_MAX - 1) {
		fold = true;
		if (p->n == MS_PROBLEM_CODES_MAX) {
			p->entries[MS_PROBLEM_CODES_MAX - 1].count++;
			return;
		}
		code = OTHER_PROBLEMS;
	}
	/* Formatting happens once per code: later occurrences only count. */
	i = p->n++;
	snprintf(p->entries[i].code, sizeof(p->entries[i].code), "%s", code);
	p->entries[i].count = 1;
	detail = p->entries[i].detail;
	if (fold) {
		off = snprintf(detail, sizeof(p->entries[i].detail), "%s: ", orig);
		if (off < 0 || (size_t)off >= sizeof(p->entries[i].detail))
			off = 0;
	}
	va_start(ap, detail_fmt);
	vsnprintf(detail + off, sizeof(p->entries[i].detail) - off, detail_fmt, ap);
	va_end(ap);
}

uint64_t ms_problems_total(const struct ms_problems *p)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < p->n; i++)
		total += p->entries[i].count;
	return total;
}

int ms_problems_write(struct ms_writer *w, const struct ms_problems *p)
{
	for (uint32_t i = 0; i < p->n; i++) {
		struct ms_problem rec = {
			.stage = { p->stage, strlen(p->stage) },
			.code = { p->entries[i].code, strlen(p->entries[i].code) },
			.count = p->entries[i].count,
			.detail = { p->entries[i].detail, strlen(p->entries[i].detail) },
		};

		if (ms_problem_pack(w, &rec) < 0)
			return -1;
	}
	return 0;
}

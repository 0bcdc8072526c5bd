#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4frame.h>
#include <zlib.h>

#include "capture/format.h"
#include "capture/internal.h"
#include "util/error.h"
#include "util/publish.h"

struct section {
	uint32_t id;
	unsigned char *raw;
	size_t raw_len;
	unsigned char *stored;
	size_t stored_len;
	uint32_t checksum;
};

/* A table section: its header, with room for n rows of row_size bytes. */
static unsigned char *table(struct section *s, uint32_t id, uint32_t n, uint32_t row_size)
{
	s->id = id;
	s->raw_len = MS_CAPF_TABLE_HEADER + (size_t)n * row_size;
	s->raw = calloc(1, s->raw_len);
	if (!s->raw)
		return NULL;
	ms_put_u32(s->raw, n);
	ms_put_u32(s->raw + 4, row_size);
	return s->raw + MS_CAPF_TABLE_HEADER;
}

static int put_strings(struct section *s, const struct ms_capture *cap)
{
	size_t len = MS_CAPF_TABLE_HEADER, at;
	uint32_t i;

	for (i = 0; i < cap->n_strings; i++)
		len += strlen(cap->strings[i]) + 1;
	s->id = MS_CAPF_STRINGS;
	s->raw_len = len;
	s->raw = calloc(1, len);
	if (!s->raw)
		return -1;
	ms_put_u32(s->raw, cap->n_strings);
	at = MS_CAPF_TABLE_HEADER;
	for (i = 0; i < cap->n_strings; i++) {
		size_t n = strlen(cap->strings[i]) + 1;

		memcpy(s->raw + at, cap->strings[i], n);
		at += n;
	}
	return 0;
}

static int put_info(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p = table(s, MS_CAPF_INFO, cap->n_info, MS_CAPF_ROW_INFO);
	uint32_t i;

	if (!p)
		return -1;
	for (i = 0; i < cap->n_info; i++, p += MS_CAPF_ROW_INFO) {
		ms_put_u32(p, cap->info[i].key);
		ms_put_u32(p + 4, cap->info[i].value_text);
		ms_put_u64(p + 8, cap->info[i].value_number);
	}
	return 0;
}

/* Rows of 80 bytes, with base, in a file of minor 6 (one holding JIT data); 72 before. */
static int put_modules(struct section *s, const struct ms_capture *cap)
{
	bool jit = ms_capture_has_jit(cap);
	uint32_t row = jit ? MS_CAPF_ROW_MODULES_1_6 : MS_CAPF_ROW_MODULES;
	unsigned char *p = table(s, MS_CAPF_MODULES, cap->n_modules, row);
	uint32_t i;

	if (!p)
		return -1;
	for (i = 0; i < cap->n_modules; i++, p += row) {
		const struct ms_cap_module *m = &cap->modules[i];
		uint32_t len = m->build_id_len <= 20 ? m->build_id_len : 20;

		ms_put_u32(p, m->path);
		ms_put_u32(p + 4, m->kind);
		ms_put_u32(p + 8, m->build_id_len);
		/* Bytes past build_id_len stay zero: the same module, the same bytes. */
		memcpy(p + 12, m->build_id, len);
		ms_put_u32(p + 32, m->dev_maj);
		ms_put_u32(p + 36, m->dev_min);
		ms_put_u64(p + 40, m->ino);
		ms_put_u64(p + 48, m->size);
		ms_put_u64(p + 56, m->mtime);
		ms_put_u32(p + 64, m->status);
		ms_put_u32(p + 68, m->status_reason);
		if (jit)
			ms_put_u64(p + 72, m->base);
	}
	return 0;
}

static int put_frames(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p = table(s, MS_CAPF_FRAMES, cap->n_frames, MS_CAPF_ROW_FRAMES);
	uint32_t i;

	if (!p)
		return -1;
	for (i = 0; i < cap->n_frames; i++, p += MS_CAPF_ROW_FRAMES) {
		const struct ms_cap_frame *f = &cap->frames[i];

		ms_put_u32(p, f->module);
		ms_put_u32(p + 4, f->flags);
		ms_put_u64(p + 8, f->address);
		ms_put_u32(p + 16, f->name);
		ms_put_u32(p + 20, f->reason);
		ms_put_u64(p + 24, f->symbol_start);
		ms_put_u32(p + 32, f->first_line);
		ms_put_u32(p + 36, f->n_lines);
	}
	return 0;
}

static int put_functions(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p = table(s, MS_CAPF_FUNCTIONS, cap->n_functions, MS_CAPF_ROW_FUNCTIONS);
	uint32_t i;

	if (!p)
		return -1;
	for (i = 0; i < cap->n_functions; i++, p += MS_CAPF_ROW_FUNCTIONS) {
		const struct ms_cap_function *f = &cap->functions[i];

		ms_put_u32(p, f->name);
		ms_put_u32(p + 4, f->system_name);
		ms_put_u32(p + 8, f->file);
		ms_put_u32(p + 12, f->start_line);
	}
	return 0;
}

static int put_lines(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p = table(s, MS_CAPF_LINES, cap->n_lines, MS_CAPF_ROW_LINES);
	uint32_t i;

	if (!p)
		return -1;
	for (i = 0; i < cap->n_lines; i++, p += MS_CAPF_ROW_LINES) {
		ms_put_u32(p, cap->lines[i].function);
		ms_put_u32(p + 4, cap->lines[i].line);
	}
	return 0;
}

static int put_stacks(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p = table(s, MS_CAPF_STACKS, cap->n_stacks, MS_CAPF_ROW_STACKS);
	uint32_t i;

	if (!p)
		return -1;
	for (i = 0; i < cap->n_stacks; i++, p += MS_CAPF_ROW_STACKS) {
		ms_put_u32(p, cap->stacks[i].parent);
		ms_put_u32(p + 4, cap->stacks[i].frame);
		ms_put_u32(p + 8, cap->stacks[i].depth);
	}
	return 0;
}

static int put_threads(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p = table(s, MS_CAPF_THREADS, cap->n_threads, MS_CAPF_ROW_THREADS);
	uint32_t i;

	if (!p)
		return -1;
	for (i = 0; i < cap->n_threads; i++, p += MS_CAPF_ROW_THREADS) {
		const struct ms_cap_thread *t = &cap->threads[i];

		ms_put_u32(p, t->pid);
		ms_put_u32(p + 4, t->tid);
		ms_put_u32(p + 8, t->name);
		ms_put_u64(p + 16, t->first_time);
		ms_put_u64(p + 24, t->last_time);
	}
	return 0;
}

static int put_samples(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p = table(s, MS_CAPF_SAMPLES, cap->n_samples, MS_CAPF_ROW_SAMPLES);
	uint32_t i;

	if (!p)
		return -1;
	for (i = 0; i < cap->n_samples; i++, p += MS_CAPF_ROW_SAMPLES) {
		const struct ms_cap_sample *x = &cap->samples[i];

		ms_put_u64(p, x->time);
		ms_put_u32(p + 8, x->thread);
		ms_put_u32(p + 12, x->cpu);
		ms_put_u32(p + 16, x->stack);
		ms_put_u32(p + 20, x->end);
		ms_put_u64(p + 24, x->period);
	}
	return 0;
}

/* Whether some sample row stands for other than one sample. */
static bool weighted(const struct ms_capture *cap)
{
	for (uint32_t i = 0; i < cap->n_samples; i++)
		if (cap->samples[i].count != 1)
			return true;
	return false;
}

/*
 * The counts section, only in a weighted capture (1 when absent): a
 * recording, every count 1, keeps the bytes of a 1.1 file.
 */
static int put_counts(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!weighted(cap))
		return 1;
	p = table(s, MS_CAPF_COUNTS, cap->n_samples, MS_CAPF_ROW_COUNTS);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_samples; i++, p += MS_CAPF_ROW_COUNTS)
		ms_put_u64(p, cap->samples[i].count);
	return 0;
}

/*
 * The duty section, only when sampling was paused (absent otherwise): a
 * recording without a budget keeps the bytes it always had.
 */
static int put_duty(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!cap->n_duty)
		return 1;
	p = table(s, MS_CAPF_DUTY, cap->n_duty, MS_CAPF_ROW_DUTY);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_duty; i++, p += MS_CAPF_ROW_DUTY) {
		const struct ms_cap_duty *d = &cap->duty[i];

		ms_put_u64(p, d->time);
		ms_put_u32(p + 8, d->duty_ppm);
		ms_put_u32(p + 12, d->share_ppm);
		ms_put_u64(p + 16, d->rate);
		ms_put_u32(p + 24, d->budget_ppm);
	}
	return 0;
}

/*
 * The losses section, only when some loss has a time (absent otherwise): a
 * recording that lost nothing keeps the bytes it always had.
 */
static int put_losses(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!cap->n_losses)
		return 1;
	p = table(s, MS_CAPF_LOSSES, cap->n_losses, MS_CAPF_ROW_LOSSES);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_losses; i++, p += MS_CAPF_ROW_LOSSES) {
		const struct ms_cap_loss *x = &cap->losses[i];

		ms_put_u64(p, x->time);
		ms_put_u64(p + 8, x->count);
		ms_put_u32(p + 16, x->source);
	}
	return 0;
}

/*
 * The intervals and evidence sections, only in a capture that recorded
 * off-CPU time (MS_CAPTURE_OFF_CPU), rows or none: every other capture
 * keeps the bytes it always had.
 */
static int put_intervals(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!(cap->flags & MS_CAPTURE_OFF_CPU))
		return 1;
	p = table(s, MS_CAPF_INTERVALS, cap->n_intervals, MS_CAPF_ROW_INTERVALS);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_intervals; i++, p += MS_CAPF_ROW_INTERVALS) {
		const struct ms_cap_interval *x = &cap->intervals[i];

		ms_put_u64(p, x->start);
		ms_put_u64(p + 8, x->end);
		ms_put_u32(p + 16, x->thread);
		ms_put_u32(p + 20, x->cpu);
		ms_put_u32(p + 24, x->stack);
		ms_put_u32(p + 28, x->stack_end);
		ms_put_u32(p + 32, x->missing);
		ms_put_u32(p + 36, x->evidence);
	}
	return 0;
}

static int put_evidence(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!(cap->flags & MS_CAPTURE_OFF_CPU))
		return 1;
	p = table(s, MS_CAPF_EVIDENCE, cap->n_evidence, MS_CAPF_ROW_EVIDENCE);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_evidence; i++, p += MS_CAPF_ROW_EVIDENCE) {
		const struct ms_cap_evidence *x = &cap->evidence[i];

		ms_put_u32(p, x->cause);
		ms_put_u32(p + 4, x->sources);
		ms_put_u64(p + 8, x->state);
		ms_put_u32(p + 16, x->preempt);
	}
	return 0;
}

/* The perf-map settings (minor 6), only when some process has one. */
static int put_perf_maps(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!cap->n_perf_maps)
		return 1;
	p = table(s, MS_CAPF_PERF_MAPS, cap->n_perf_maps, MS_CAPF_ROW_PERF_MAPS);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_perf_maps; i++, p += MS_CAPF_ROW_PERF_MAPS) {
		const struct ms_cap_perf_map *x = &cap->perf_maps[i];

		ms_put_u32(p, x->pid);
		ms_put_u32(p + 4, x->path);
		ms_put_u32(p + 8, x->status);
		ms_put_u32(p + 12, x->err);
		ms_put_u64(p + 16, x->time);
		ms_put_u64(p + 24, x->offset);
		ms_put_u64(p + 32, x->functions);
		ms_put_u64(p + 40, x->malformed);
		ms_put_u64(p + 48, x->over_max);
		ms_put_u64(p + 56, x->no_code);
		ms_put_u64(p + 64, x->code_unread);
		ms_put_u64(p + 72, x->code_bytes);
	}
	return 0;
}

/* The Python processes (minor 7), only when there are some. */
static int put_py_processes(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!cap->n_py_processes)
		return 1;
	p = table(s, MS_CAPF_PY_PROCESSES, cap->n_py_processes, MS_CAPF_ROW_PY_PROCESSES);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_py_processes; i++, p += MS_CAPF_ROW_PY_PROCESSES) {
		const struct ms_cap_py_process *x = &cap->py_processes[i];

		ms_put_u32(p, x->pid);
		ms_put_u32(p + 4, x->status);
		ms_put_u32(p + 8, x->version_hex);
		ms_put_u32(p + 12, x->source);
		ms_put_u64(p + 16, x->time);
		ms_put_u32(p + 24, x->path);
		ms_put_u32(p + 28, x->engine);
		ms_put_u32(p + 32, x->reason);
	}
	return 0;
}

/* The label spans (minor 7), only when there are some. */
static int put_label_spans(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!cap->n_label_spans)
		return 1;
	p = table(s, MS_CAPF_LABEL_SPANS, cap->n_label_spans, MS_CAPF_ROW_LABEL_SPANS);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_label_spans; i++, p += MS_CAPF_ROW_LABEL_SPANS) {
		const struct ms_cap_label_span *x = &cap->label_spans[i];

		ms_put_u32(p, x->thread);
		ms_put_u32(p + 4, x->key);
		ms_put_u32(p + 8, x->value);
		ms_put_u32(p + 12, 0);
		ms_put_u64(p + 16, x->start);
		ms_put_u64(p + 24, x->end);
		ms_put_u64(p + 32, x->samples);
	}
	return 0;
}

/* The tasks (minor 8), only when there are some. */
static int put_tasks(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!cap->n_tasks)
		return 1;
	p = table(s, MS_CAPF_TASKS, cap->n_tasks, MS_CAPF_ROW_TASKS);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_tasks; i++, p += MS_CAPF_ROW_TASKS) {
		const struct ms_cap_task *x = &cap->tasks[i];

		ms_put_u32(p, x->pid);
		ms_put_u32(p + 4, x->thread);
		ms_put_u32(p + 8, x->kind);
		ms_put_u32(p + 12, 0);
		ms_put_u64(p + 16, x->id);
		ms_put_u64(p + 24, x->first_time);
		ms_put_u64(p + 32, x->last_time);
		ms_put_u64(p + 40, x->waits);
		ms_put_u64(p + 48, x->changed);
		ms_put_u64(p + 56, x->dropped);
	}
	return 0;
}

/* The wait rows (minor 8), only when there are some. */
static int put_waits(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p;
	uint32_t i;

	if (!cap->n_waits)
		return 1;
	p = table(s, MS_CAPF_WAITS, cap->n_waits, MS_CAPF_ROW_WAITS);
	if (!p)
		return -1;
	for (i = 0; i < cap->n_waits; i++, p += MS_CAPF_ROW_WAITS) {
		const struct ms_cap_wait *x = &cap->waits[i];

		ms_put_u32(p, x->task);
		ms_put_u32(p + 4, x->stack);
		ms_put_u32(p + 8, x->reason);
		ms_put_u32(p + 12, 0);
		ms_put_u64(p + 16, x->time);
	}
	return 0;
}

static int put_problems(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p = table(s, MS_CAPF_PROBLEMS, cap->n_problems, MS_CAPF_ROW_PROBLEMS);
	uint32_t i;

	if (!p)
		return -1;
	for (i = 0; i < cap->n_problems; i++, p += MS_CAPF_ROW_PROBLEMS) {
		ms_put_u32(p, cap->problems[i].stage);
		ms_put_u32(p + 4, cap->problems[i].code);
		ms_put_u32(p + 8, cap->problems[i].detail);
		ms_put_u64(p + 16, cap->problems[i].count);
	}
	return 0;
}

static int put_totals(struct section *s, const struct ms_capture *cap)
{
	unsigned char *p = table(s, MS_CAPF_TOTALS, 1, MS_CAPF_ROW_TOTALS);

	if (!p)
		return -1;
	ms_put_u64(p, cap->lost_kernel);
	ms_put_u64(p + 8, cap->lost_collector);
	ms_put_u64(p + 16, cap->throttled);
	ms_put_u64(p + 24, cap->start_time);
	ms_put_u64(p + 32, cap->end_time);
	ms_put_u32(p + 40, (uint32_t)cap->target_exit_code);
	return 0;
}

/* In the order of their ids. Each returns 0, 1 when the section is absent, or -1. */
static int (*const put_section[])(struct section *, const struct ms_capture *) = {
	put_strings, put_info, put_modules, put_frames, put_stacks,
	put_threads, put_samples, put_problems, put_totals, put_functions, put_lines,
	put_counts, put_duty, put_losses, put_intervals, put_evidence, put_perf_maps,
	put_py_processes, put_label_spans, put_tasks, put_waits,
};
#define N_SECTIONS (sizeof(put_section) / sizeof(put_section[0]))

/* One LZ4 frame: fixed preferences, so the same bytes compress the same. */
static int compress_section(struct section *s)
{
	LZ4F_preferences_t prefs;
	unsigned char *shrunk;
	size_t bound, n;

	memset(&prefs, 0, sizeof(prefs));
	prefs.frameInfo.blockSizeID = LZ4F_max4MB;
	prefs.frameInfo.blockMode = LZ4F_blockLinked;
	prefs.frameInfo.contentSize = s->raw_len;
	prefs.compressionLevel = 0;
	bound = LZ4F_compressFrameBound(s->raw_len, &prefs);
	s->stored = malloc(bound);
	if (!s->stored)
		return ms_error("out of memory writing the capture");
	n = LZ4F_compressFrame(s->stored, bound, s->raw, s->raw_len, &prefs);
	if (LZ4F_isError(n))
		return ms_error("cannot compress section '%s': %s",
				ms_capf_section_name(s->id), LZ4F_getErrorName(n));
	s->stored_len = n;
	s->checksum = crc32_z(0, s->stored, n);
	/*
	 * The raw bytes are done with, and the bound is far larger than what
	 * compression made: keeping either would hold every section twice
	 * until the file is assembled (an import's peak of memory).
	 */
	free(s->raw);
	s->raw = NULL;
	shrunk = realloc(s->stored, n ? n : 1);
	if (shrunk)
		s->stored = shrunk;
	return 0;
}

int ms_capture_encode(const struct ms_capture *cap, unsigned char **buf, size_t *len)
{
	struct section sections[N_SECTIONS];
	bool counts = weighted(cap), duty = cap->n_duty > 0;
	/* The required flags say what the file holds, whatever cap->flags says. */
	uint32_t flags = (cap->flags & ~(uint32_t)(MS_CAPTURE_WEIGHTED | MS_CAPTURE_DUTY)) |
			 (counts ? (uint32_t)MS_CAPTURE_WEIGHTED : 0) |
			 (duty ? (uint32_t)MS_CAPTURE_DUTY : 0);
	/*
	 * The oldest minor that holds it. Loss rows need 1.4, intervals 1.5,
	 * JIT data 1.6, Python data 1.7 and tasks 1.8, but no required flag: a reader
	 * before them skips their sections (and the modules' base) and keeps
	 * the rest (capture.h says what it shows).
	 */
	uint32_t minor = ms_capture_has_tasks(cap) ? MS_CAPTURE_MINOR_TASKS :
			 ms_capture_has_python(cap) ? MS_CAPTURE_MINOR_PYTHON :
			 ms_capture_has_jit(cap) ? MS_CAPTURE_MINOR_JIT :
			 (cap->flags & MS_CAPTURE_OFF_CPU) ? MS_CAPTURE_MINOR_OFF_CPU :
			 cap->n_losses ? MS_CAPTURE_MINOR_LOSSES :
			 duty ? MS_CAPTURE_MINOR_DUTY :
			 counts ? MS_CAPTURE_MINOR_WEIGHTED : MS_CAPTURE_MINOR_UNWEIGHTED;
	size_t dir_len, total, at;
	unsigned char *out = NULL, *d;
	unsigned i, n = 0;
	int ret = -1, r;
	uint32_t crc;

	memset(sections, 0, sizeof(sections));
	for (i = 0; i < N_SECTIONS; i++) {
		r = put_section[i](&sections[n], cap);
		if (r < 0) {
			ms_error("out of memory writing the capture");
			goto out;
		}
		if (r > 0)
			continue;
		if (compress_section(&sections[n++]) < 0)
			goto out;
	}
	dir_len = n * MS_CAPF_DIR_SIZE_BYTES;
	total = MS_CAPF_HEADER_SIZE + dir_len;
	for (i = 0; i < n; i++)
		total += sections[i].stored_len;
	out = calloc(1, total);
	if (!out) {
		ms_error("out of memory writing the capture");
		goto out;
	}
	memcpy(out + MS_CAPF_MAGIC, MS_CAPTURE_MAGIC, 8);
	ms_put_u32(out + MS_CAPF_MAJOR, MS_CAPTURE_MAJOR);
	ms_put_u32(out + MS_CAPF_MINOR, minor);
	ms_put_u32(out + MS_CAPF_FLAGS, flags);
	ms_put_u32(out + MS_CAPF_N_SECTIONS, n);
	ms_put_u64(out + MS_CAPF_FILE_SIZE, total);
	at = MS_CAPF_HEADER_SIZE + dir_len;
	for (i = 0; i < n; i++) {
		d = out + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES;
		ms_put_u32(d + MS_CAPF_DIR_ID, sections[i].id);
		ms_put_u32(d + MS_CAPF_DIR_CODEC, MS_CAPF_CODEC_LZ4F);
		ms_put_u64(d + MS_CAPF_DIR_OFFSET, at);
		ms_put_u64(d + MS_CAPF_DIR_SIZE, sections[i].stored_len);
		ms_put_u64(d + MS_CAPF_DIR_RAW_SIZE, sections[i].raw_len);
		ms_put_u32(d + MS_CAPF_DIR_CHECKSUM, sections[i].checksum);
		memcpy(out + at, sections[i].stored, sections[i].stored_len);
		at += sections[i].stored_len;
		free(sections[i].stored);
		sections[i].stored = NULL;
	}
	crc = crc32_z(0, out, MS_CAPF_CHECKSUM);
	crc = crc32_z(crc, out + MS_CAPF_HEADER_SIZE, dir_len);
	ms_put_u32(out + MS_CAPF_CHECKSUM, crc);
	*buf = out;
	*len = total;
	out = NULL;
	ret = 0;
out:
	for (i = 0; i < N_SECTIONS; i++) {
		free(sections[i].raw);
		free(sections[i].stored);
	}
	free(out);
	return ret;
}

int ms_capture_write(const struct ms_capture *cap, const char *path)
{
	struct ms_publish pub;
	unsigned char *buf;
	size_t len;
	int fd;

	if (ms_capture_encode(cap, &buf, &len) < 0)
		return -1;
	fd = ms_publish_open(&pub, path);
	if (fd < 0) {
		free(buf);
		return -1;
	}
	if (ms_write_all(fd, buf, len) < 0) {
		ms_error_errno("cannot write '%s'", pub.tmp ? pub.tmp : path);
		ms_publish_abort(&pub);
		free(buf);
		return -1;
	}
	free(buf);
	return ms_publish_commit(&pub);
}

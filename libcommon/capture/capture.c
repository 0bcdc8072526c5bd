#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "capture/format.h"
#include "capture/internal.h"
#include "stream/records.h"
#include "util/error.h"

struct ms_capture *ms_capture_new(void)
{
	struct ms_capture *cap = calloc(1, sizeof(*cap));
	struct ms_capture_storage *st = calloc(1, sizeof(*st));

	if (!cap || !st) {
		free(cap);
		free(st);
		ms_error("out of memory making a capture");
		return NULL;
	}
	cap->major = MS_CAPTURE_MAJOR;
	/* the builder raises it when it seals a capture with counts, duty, loss rows or intervals */
	cap->minor = MS_CAPTURE_MINOR_UNWEIGHTED;
	cap->target_exit_code = -1;
	cap->storage = st;
	return cap;
}

void *ms_capture_keep(struct ms_capture *cap, void *block)
{
	struct ms_capture_storage *st = cap->storage;

	assert(st->n < MS_CAPTURE_BLOCKS);
	st->blocks[st->n++] = block;
	return block;
}

void ms_capture_free(struct ms_capture *cap)
{
	struct ms_capture_storage *st;
	unsigned i;

	if (!cap)
		return;
	st = cap->storage;
	if (st) {
		for (i = 0; i < st->n; i++)
			free(st->blocks[i]);
		free(st);
	}
	free(cap);
}

uint64_t ms_capture_sample_count(const struct ms_capture *cap)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < cap->n_samples; i++)
		n += cap->samples[i].count;
	return n;
}

static const struct ms_cap_info *find_info(const struct ms_capture *cap, const char *key)
{
	uint32_t lo = 0, hi = cap->n_info;

	/* info is sorted by key string (the loader checks it). */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(cap->strings[cap->info[mid].key], key);

		if (!c)
			return &cap->info[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *ms_capture_info_text(const struct ms_capture *cap, const char *key)
{
	const struct ms_cap_info *i = find_info(cap, key);

	return i && i->value_text ? cap->strings[i->value_text] : NULL;
}

bool ms_capture_info_number(const struct ms_capture *cap, const char *key, uint64_t *out)
{
	const struct ms_cap_info *i = find_info(cap, key);

	if (!i || i->value_text)
		return false;
	*out = i->value_number;
	return true;
}

const char *ms_capf_section_name(uint32_t id)
{
	static const char *const names[] = {
		[MS_CAPF_STRINGS] = "strings",
		[MS_CAPF_INFO] = "info",
		[MS_CAPF_MODULES] = "modules",
		[MS_CAPF_FRAMES] = "frames",
		[MS_CAPF_STACKS] = "stacks",
		[MS_CAPF_THREADS] = "threads",
		[MS_CAPF_SAMPLES] = "samples",
		[MS_CAPF_PROBLEMS] = "problems",
		[MS_CAPF_TOTALS] = "totals",
		[MS_CAPF_FUNCTIONS] = "functions",
		[MS_CAPF_LINES] = "lines",
		[MS_CAPF_COUNTS] = "counts",
		[MS_CAPF_DUTY] = "duty",
		[MS_CAPF_LOSSES] = "losses",
		[MS_CAPF_INTERVALS] = "intervals",
		[MS_CAPF_EVIDENCE] = "evidence",
		[MS_CAPF_PERF_MAPS] = "perf-maps",
		[MS_CAPF_PY_PROCESSES] = "py-processes",
		[MS_CAPF_LABEL_SPANS] = "label-spans",
		[MS_CAPF_TASKS] = "tasks",
		[MS_CAPF_WAITS] = "waits",
	};

	return id < sizeof(names) / sizeof(names[0]) ? names[id] : NULL;
}

const char *ms_cap_module_status_name(uint32_t status)
{
	static const char *const names[] = {
		[MS_CAP_MODULE_OK] = "ok",
		[MS_CAP_MODULE_DEFERRED] = "deferred",
		[MS_CAP_MODULE_NO_BUILD_ID] = "no-build-id",
		[MS_CAP_MODULE_NOT_SYMBOLIZED] = "not-symbolized",
		[MS_CAP_MODULE_FAILED] = "failed",
		[MS_CAP_MODULE_PARTIAL] = "partial",
	};

	return status < sizeof(names) / sizeof(names[0]) ? names[status] : "unknown";
}

void ms_capture_span(const struct ms_capture *cap, uint64_t *start, uint64_t *end)
{
	uint64_t s, e;

	if (ms_capture_info_number(cap, "start-time", &s) &&
	    ms_capture_info_number(cap, "end-time", &e) && e >= s) {
		*start = s;
		*end = e;
		return;
	}
	*start = cap->start_time;
	*end = cap->end_time;
}

bool ms_module_kind_has_base(uint32_t kind)
{
	return kind == MS_MODULE_PERF_MAP || kind == MS_MODULE_JIT_OBJECT;
}

const char *ms_module_base_wrong(uint32_t kind, uint64_t base, uint64_t size)
{
	if (!ms_module_kind_has_base(kind))
		return base ? "with a base, which only perf-map and jit-object modules have" : NULL;
	if (!base)
		return "without a base";
	if (!size)
		return "of size 0";
	if (base > UINT64_MAX - size)
		return "whose range passes the end of the address space";
	return NULL;
}

bool ms_capture_has_jit(const struct ms_capture *cap)
{
	if (cap->n_perf_maps)
		return true;
	for (uint32_t i = 0; i < cap->n_modules; i++)
		if (ms_module_kind_has_base(cap->modules[i].kind))
			return true;
	return false;
}

bool ms_capture_has_python(const struct ms_capture *cap)
{
	uint32_t i;

	if (cap->n_py_processes || cap->n_label_spans)
		return true;
	for (i = 0; i < cap->n_modules; i++)
		if (cap->modules[i].kind == MS_MODULE_INTERPRETED)
			return true;
	for (i = 0; i < cap->n_frames; i++)
		if (cap->frames[i].flags & MS_FRAME_INTERPRETER)
			return true;
	for (i = 0; i < cap->n_samples; i++)
		if (ms_stack_end_interpreted(cap->samples[i].end))
			return true;
	for (i = 0; i < cap->n_intervals; i++)
		if (ms_stack_end_interpreted(cap->intervals[i].stack_end))
			return true;
	return false;
}

bool ms_capture_has_tasks(const struct ms_capture *cap)
{
	/* (wait rows come only with their tasks) */
	return cap->n_tasks != 0;
}

bool ms_stack_end_interpreted(uint32_t end)
{
	return end == MS_END_INTERPRETED_UNKNOWN || end == MS_END_INTERPRETED_UNPLACED ||
	       end == MS_END_INTERPRETED_TRUNCATED;
}

const char *ms_module_identity_wrong(uint32_t kind, uint32_t build_id_len, uint32_t dev_maj,
				     uint32_t dev_min, uint64_t ino, uint64_t size, uint64_t mtime)
{
	if (kind != MS_MODULE_INTERPRETED)
		return NULL;
	if (build_id_len)
		return "with a build id, which interpreted code has not";
	if (dev_maj || dev_min || ino || size || mtime)
		return "with a file identity (device, inode, size or mtime), which interpreted code has not";
	return NULL;
}

bool ms_frame_interpreted(const struct ms_capture *cap, const struct ms_cap_frame *f)
{
	return f->module != MS_NONE && f->module < cap->n_modules &&
	       cap->modules[f->module].kind == MS_MODULE_INTERPRETED;
}

const struct ms_cap_perf_map *ms_capture_perf_map(const struct ms_capture *cap, uint32_t pid)
{
	uint32_t lo = 0, hi = cap->n_perf_maps;

	/* sorted by pid (the loader checks it) */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cap->perf_maps[mid].pid == pid)
			return &cap->perf_maps[mid];
		if (cap->perf_maps[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *ms_interval_missing_name(uint32_t missing)
{
	static const char *const names[] = {
		[MS_INTERVAL_COMPLETE] = "complete",
		[MS_INTERVAL_BEGAN_INSIDE] = "began-inside",
		[MS_INTERVAL_ENDED_INSIDE] = "ended-inside",
		[MS_INTERVAL_LOST_START] = "lost-start",
		[MS_INTERVAL_LOST_END] = "lost-end",
	};

	return missing < sizeof(names) / sizeof(names[0]) ? names[missing] : "unknown";
}

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/builder.h"
#include "capture/funcs.h"
#include "capture/intervals.h"
#include "util/hashindex.h"
#include "util/radix.h"
#include "capture/internal.h"
#include "util/error.h"

#define STAGE "ms-capture"
#define DETAIL_MAX 256
/* Rows per table: ids are uint32_t and MS_NONE is reserved. */
#define ROWS_MAX (MS_NONE - 1)

struct strref {
	size_t off;
	uint32_t len;
};

struct module_entry {
	struct ms_cap_module m;
	uint32_t sid;		/* the stream's module id */
	bool defined;		/* a module record described it */
};

/* What symbolization said about (module, address). */
struct fact {
	uint32_t module;
	uint64_t address;
	uint32_t name;
	uint64_t symbol_start;
	uint32_t reason;
	uint32_t first_line, n_lines;	/* in the builder's lines */
};

/* Problems the builder finds itself; rows of stage ms-capture at seal. */
enum own_code {
	OWN_NUL_STRING,
	OWN_UNDEFINED_MODULE,
	OWN_MODULE_REDEFINED,
	OWN_FACT_REDEFINED,
	OWN_LOST_SOURCE,
	OWN_BAD_SAMPLE_COUNT,
	OWN_UNUSED_SAMPLE_COUNT,
	OWN_BAD_DUTY,
	OWN_DUTY_SAME_TIME,
	OWN_LOST_OVERFLOW,
	OWN_LOSS_ROWS_FULL,
	/* the off-CPU pairing's (capture/intervals.h), in its order */
	OWN_SWITCH_IN_UNPAIRED,
	OWN_ENDS_BEFORE_START,
	OWN_INTERVAL_TIME_ZERO,
	OWN_BAD_INTERVAL,
	OWN_PY_PROCESS_ROWS_FULL,
	OWN_INTERPRETED_TEXT_REPEATED,
	OWN_INTERPRETED_NO_TEXT,
	OWN_LABEL_SPAN_ROWS_FULL,
	OWN_BAD_LABEL_SPAN,
	OWN_LABEL_SPAN_OVERLAPS,
	OWN_TASK_ROWS_FULL,
	OWN_WAIT_ROWS_FULL,
	OWN_BAD_TASK_WAIT,
	OWN_WAIT_SAME_TIME,
	OWN_COUNT,
};
static const char *const own_codes[OWN_COUNT] = {
	[OWN_NUL_STRING] = "nul-in-string",
	[OWN_UNDEFINED_MODULE] = "undefined-module",
	[OWN_MODULE_REDEFINED] = "module-redefined",
	[OWN_FACT_REDEFINED] = "frame-fact-redefined",
	[OWN_LOST_SOURCE] = "unknown-lost-source",
	[OWN_BAD_SAMPLE_COUNT] = "bad-sample-count",
	[OWN_UNUSED_SAMPLE_COUNT] = "unused-sample-count",
	[OWN_BAD_DUTY] = "bad-duty",
	[OWN_DUTY_SAME_TIME] = "duty-same-time",
	[OWN_LOST_OVERFLOW] = "lost-count-overflow",
	[OWN_LOSS_ROWS_FULL] = "loss-rows-full",
	[OWN_SWITCH_IN_UNPAIRED] = "switch-in-unpaired",
	[OWN_ENDS_BEFORE_START] = "interval-ends-before-start",
	[OWN_INTERVAL_TIME_ZERO] = "interval-time-zero",
	[OWN_BAD_INTERVAL] = "bad-interval",
	[OWN_PY_PROCESS_ROWS_FULL] = "py-process-rows-full",
	[OWN_INTERPRETED_TEXT_REPEATED] = "interpreted-text-repeated",
	[OWN_INTERPRETED_NO_TEXT] = "interpreted-frame-without-text",
	[OWN_LABEL_SPAN_ROWS_FULL] = "label-span-rows-full",
	[OWN_BAD_LABEL_SPAN] = "bad-label-span",
	[OWN_LABEL_SPAN_OVERLAPS] = "label-span-overlaps",
	[OWN_TASK_ROWS_FULL] = "task-rows-full",
	[OWN_WAIT_ROWS_FULL] = "wait-rows-full",
	[OWN_BAD_TASK_WAIT] = "bad-task-wait",
	[OWN_WAIT_SAME_TIME] = "wait-same-time",
};

/*
 * Loss rows held before seal: twice the rows a capture keeps, so that
 * compacting them (sort, merge, keep the earliest MS_CAPTURE_LOSSES_MAX)
 * happens at most once every MS_CAPTURE_LOSSES_MAX records.
 */
#define LOSS_BUFFER (2 * MS_CAPTURE_LOSSES_MAX)

struct ms_capture_builder {
	bool failed;
	void *tmp;		/* for GROW */

	char *pool;		/* string bytes, each NUL-terminated */
	size_t pool_len, pool_alloc;
	struct strref *strs;
	uint32_t n_strs, alloc_strs;
	struct ms_index str_ix;

	struct ms_cap_info *info;
	uint32_t n_info, alloc_info;
	struct ms_index info_ix;

	struct module_entry *modules;
	uint32_t n_modules, alloc_modules;
	struct ms_index module_ix;

	struct ms_cap_frame *frames;
	uint32_t n_frames, alloc_frames;
	struct ms_index frame_ix;

	struct fact *facts;
	uint32_t n_facts, alloc_facts;
	struct ms_index fact_ix;

	/* inline chains of the facts, and the functions they name */
	struct ms_cap_line *lines;
	uint32_t n_lines, alloc_lines;
	struct ms_cap_function *functions;
	uint32_t n_functions, alloc_functions;
	struct ms_index function_ix;

	struct ms_cap_stack *stacks;
	uint32_t n_stacks, alloc_stacks;
	struct ms_index stack_ix;

	struct ms_cap_thread *threads;
	uint32_t n_threads, alloc_threads;
	struct ms_index thread_ix;

	struct ms_cap_sample *samples;
	uint32_t n_samples, alloc_samples;
	uint64_t sample_count;	/* the rows' counts added up */
	/*
	 * The count an info "sample-count" gave the next stack or stack-ref
	 * (builder.h); 0 when none is pending.
	 */
	uint64_t next_count;

	/*
	 * Rows of ms_capture_builder_stack_import(): their frames (builder
	 * frame ids, outermost first, row after row), whose nodes are made
	 * at seal.
	 */
	uint32_t *path_frames;
	size_t n_path_frames, alloc_path_frames;
	struct path {
		size_t first;
		uint32_t n;
		uint32_t sample;	/* its sample row */
	} *paths;
	uint32_t n_paths, alloc_paths;

	/* The stream's STACK_DEFs: id -> (stack node, end reason). */
	struct stack_def {
		uint32_t node, reason;
	} *defs;
	uint32_t n_defs, alloc_defs;

	struct ms_cap_problem *problems;
	uint32_t n_problems, alloc_problems;
	struct ms_index problem_ix;

	/* duty changes in the order given; sorted by time at seal */
	struct ms_cap_duty *duty;
	uint32_t n_duty, alloc_duty;

	/*
	 * Loss rows, at most LOSS_BUFFER, in the order given (those of one
	 * (time, source) in a row merged); sorted, merged and cut to the
	 * earliest MS_CAPTURE_LOSSES_MAX pairs when full and at seal. Once cut,
	 * a loss after loss_cut (time, source) gets no row: it would be cut
	 * again. loss_first_cut is the earliest pair that lost its row, and
	 * losses_cut the records lost that have no row because of the bound.
	 */
	struct ms_cap_loss *losses;
	uint32_t n_losses, alloc_losses;
	bool loss_is_cut;
	struct ms_cap_loss loss_cut, loss_first_cut;
	uint64_t losses_cut;

	/*
	 * Off-CPU intervals (threads, stack nodes and evidence rows the
	 * builder's until seal) and the pairing that ends them; evidence
	 * rows are unique, found through evidence_ix.
	 */
	struct ms_pairing *pairing;
	struct ms_cap_interval *intervals;
	uint32_t n_intervals, alloc_intervals;
	struct ms_cap_evidence *evidence;
	uint32_t n_evidence, alloc_evidence;
	struct ms_index evidence_ix;

	/* perf-map settings, one per pid (the last record wins), sorted at seal */
	struct ms_cap_perf_map *perf_maps;
	uint32_t n_perf_maps, alloc_perf_maps;
	struct ms_index perf_map_ix;

	/* Python process rows (minor 7), at most MS_CAPTURE_PY_PROCESSES_MAX, sorted at seal */
	struct ms_cap_py_process *py;
	uint32_t n_py, alloc_py;
	/*
	 * At seal, per builder frame: the key its text gives it when it is a
	 * frame of an interpreted module (from 1), else 0.
	 */
	uint64_t *text_key;

	/*
	 * Label spans (minor 7), at most MS_CAPTURE_LABEL_SPANS_MAX, in the
	 * order given; at seal those overlapping an earlier one of their
	 * thread and key go (a problem), the rest are sorted.
	 */
	struct ms_cap_label_span *spans;
	uint32_t n_spans, alloc_spans;

	/*
	 * Tasks (minor 8), one per (pid, kind, id), at most
	 * MS_CAPTURE_TASKS_MAX, found through task_ix; their wait rows (task:
	 * the builder's row, stack: its node), at most MS_CAPTURE_WAITS_MAX.
	 * Sorted, and the waits of one (task, time) made one, at seal.
	 */
	struct ms_cap_task *tasks;
	uint32_t n_tasks, alloc_tasks;
	struct ms_index task_ix;
	struct ms_cap_wait *waits;
	uint32_t n_waits, alloc_waits;

	struct {
		uint64_t count;
		char detail[DETAIL_MAX];
	} own[OWN_COUNT];

	uint32_t flags;
	uint64_t lost_kernel, lost_collector, throttled;
	int32_t target_exit_code;

	char *scratch;		/* joined argv, the producer chain */
	size_t scratch_alloc;

	bool *function_used;	/* at seal: functions some kept line names */

	/* the record being added, for messages (ms_capture_builder_at()) */
	const char *at_input;
	uint64_t at_offset;
};

static int fail(struct ms_capture_builder *b, const char *what)
{
	if (!b->failed && b->at_input)
		ms_error("cannot build the capture: %s (the record at byte %" PRIu64 " of '%s')",
			 what, b->at_offset, b->at_input);
	else if (!b->failed)
		ms_error("cannot build the capture: %s", what);
	b->failed = true;
	return -1;
}

void ms_capture_builder_at(struct ms_capture_builder *b, const char *input, uint64_t offset)
{
	b->at_input = input;
	b->at_offset = offset;
}

static void *grow_array(struct ms_capture_builder *b, void *arr, uint32_t *alloc, size_t size)
{
	uint64_t n = *alloc ? (uint64_t)*alloc * 2 : 64;
	void *p;

	if (*alloc >= ROWS_MAX) {
		fail(b, "a table is full (2^32-1 rows)");
		return NULL;
	}
	if (n > ROWS_MAX)
		n = ROWS_MAX;
	if (n > SIZE_MAX / size || !(p = realloc(arr, n * size))) {
		fail(b, "out of memory");
		return NULL;
	}
	*alloc = n;
	return p;
}

/* Make room for row n of arr; 0 or -1. */
#define GROW(b, arr, n, alloc) \
	((n) < (alloc) ? 0 : \
	 ((b)->tmp = grow_array((b), (arr), &(alloc), sizeof(*(arr)))) ? ((arr) = (b)->tmp, 0) : -1)

static void own(struct ms_capture_builder *b, enum own_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void own(struct ms_capture_builder *b, enum own_code code, const char *fmt, ...)
{
	va_list ap;

	if (b->own[code].count++)
		return;
	va_start(ap, fmt);
	vsnprintf(b->own[code].detail, sizeof(b->own[code].detail), fmt, ap);
	va_end(ap);
}

static char *scratch(struct ms_capture_builder *b, size_t len)
{
	if (len > b->scratch_alloc) {
		char *p = realloc(b->scratch, len);

		if (!p) {
			fail(b, "out of memory");
			return NULL;
		}
		b->scratch = p;
		b->scratch_alloc = len;
	}
	return b->scratch;
}

/* ---- strings ---- */

struct str_key {
	const char *p;
	uint32_t len;
};

static bool str_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;
	const struct str_key *k = key;

	return b->strs[e].len == k->len && !memcmp(b->pool + b->strs[e].off, k->p, k->len);
}

/* The id of the string p[0..len), added when new; MS_NONE on failure. */
static uint32_t intern(struct ms_capture_builder *b, const char *p, size_t len)
{
	const char *nul = len ? memchr(p, 0, len) : NULL;
	struct str_key k;
	uint32_t h, e;

	if (nul) {
		/* Strings are NUL-terminated in the capture. */
		own(b, OWN_NUL_STRING, "a string held a NUL byte after \"%.*s\": it was cut there",
		    (int)(nul - p > 64 ? 64 : nul - p), p);
		len = nul - p;
	}
	if (len >= UINT32_MAX) {
		fail(b, "a string is longer than 4 GiB");
		return MS_NONE;
	}
	k.p = p;
	k.len = len;
	h = ms_hash_bytes(p, len);
	e = ms_index_find(&b->str_ix, h, str_eq, b, &k);
	if (e != MS_INDEX_EMPTY)
		return e;
	if (GROW(b, b->strs, b->n_strs, b->alloc_strs) < 0)
		return MS_NONE;
	if (b->pool_len + len + 1 > b->pool_alloc) {
		size_t n = b->pool_alloc ? b->pool_alloc : 4096;
		char *np;

		while (n < b->pool_len + len + 1)
			n *= 2;
		np = realloc(b->pool, n);
		if (!np) {
			fail(b, "out of memory");
			return MS_NONE;
		}
		b->pool = np;
		b->pool_alloc = n;
	}
	e = b->n_strs;
	b->strs[e].off = b->pool_len;
	b->strs[e].len = len;
	if (len)
		memcpy(b->pool + b->pool_len, p, len);
	b->pool[b->pool_len + len] = '\0';
	if (ms_index_add(&b->str_ix, h, e) < 0) {
		fail(b, "out of memory");
		return MS_NONE;
	}
	b->pool_len += len + 1;
	b->n_strs++;
	return e;
}

static uint32_t intern_str(struct ms_capture_builder *b, struct ms_str s)
{
	return intern(b, s.ptr ? s.ptr : "", s.ptr ? s.len : 0);
}

static uint32_t intern_c(struct ms_capture_builder *b, const char *s)
{
	return intern(b, s, strlen(s));
}

static const char *str_at(const struct ms_capture_builder *b, uint32_t id)
{
	return b->pool + b->strs[id].off;
}

/* ---- builder ---- */

static int pairing_interval(void *ctx, const struct ms_pairing_interval *iv);
static void pairing_problem(void *ctx, enum ms_pairing_problem code, uint32_t pid, uint32_t tid,
			    uint64_t time);

struct ms_capture_builder *ms_capture_builder_new(void)
{
	struct ms_capture_builder *b = calloc(1, sizeof(*b));
	struct ms_pairing_sink sink = { .interval = pairing_interval, .problem = pairing_problem };

	if (!b) {
		ms_error("cannot build the capture: out of memory");
		return NULL;
	}
	b->target_exit_code = -1;
	sink.ctx = b;
	/* Forks count before any switch: the pairing follows every stream. */
	if (intern(b, "", 0) != 0 || !(b->pairing = ms_pairing_new(&sink))) {
		ms_capture_builder_free(b);
		return NULL;
	}
	return b;
}

void ms_capture_builder_free(struct ms_capture_builder *b)
{
	if (!b)
		return;
	free(b->pool);
	free(b->strs);
	ms_index_release(&b->str_ix);
	free(b->info);
	ms_index_release(&b->info_ix);
	free(b->modules);
	ms_index_release(&b->module_ix);
	free(b->frames);
	ms_index_release(&b->frame_ix);
	free(b->facts);
	ms_index_release(&b->fact_ix);
	free(b->lines);
	free(b->functions);
	ms_index_release(&b->function_ix);
	free(b->stacks);
	ms_index_release(&b->stack_ix);
	free(b->threads);
	ms_index_release(&b->thread_ix);
	free(b->samples);
	free(b->path_frames);
	free(b->paths);
	free(b->defs);
	free(b->problems);
	ms_index_release(&b->problem_ix);
	free(b->duty);
	free(b->losses);
	ms_pairing_free(b->pairing);
	free(b->intervals);
	free(b->evidence);
	ms_index_release(&b->evidence_ix);
	free(b->perf_maps);
	ms_index_release(&b->perf_map_ix);
	free(b->py);
	free(b->text_key);
	free(b->spans);
	free(b->tasks);
	ms_index_release(&b->task_ix);
	free(b->waits);
	free(b->scratch);
	free(b->function_used);
	free(b);
}

/* ---- info ---- */

static bool info_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;

	return b->info[e].key == *(const uint32_t *)key;
}

/* The info row of key, made (numeric 0) when absent; MS_NONE on failure. */
static uint32_t info_row(struct ms_capture_builder *b, uint32_t key)
{
	uint32_t h = ms_hash_u64(key);
	uint32_t e = ms_index_find(&b->info_ix, h, info_eq, b, &key);

	if (e != MS_INDEX_EMPTY)
		return e;
	if (GROW(b, b->info, b->n_info, b->alloc_info) < 0)
		return MS_NONE;
	e = b->n_info;
	b->info[e].key = key;
	b->info[e].value_text = 0;
	b->info[e].value_number = 0;
	if (ms_index_add(&b->info_ix, h, e) < 0) {
		fail(b, "out of memory");
		return MS_NONE;
	}
	b->n_info++;
	return e;
}

static int info_set(struct ms_capture_builder *b, const char *key, uint32_t text, uint64_t number)
{
	uint32_t k = intern_c(b, key), e;

	if (k == MS_NONE || (e = info_row(b, k)) == MS_NONE)
		return -1;
	b->info[e].value_text = text;
	b->info[e].value_number = text ? 0 : number;
	return 0;
}

/*
 * Info "sample-count": not a fact of the recording but the count of the
 * sample row the next stack record makes (a dump's way of passing a
 * weighted row through a stream: capture/convert.h).
 */
static int next_sample_count(struct ms_capture_builder *b, const struct ms_info *i)
{
	if (b->next_count)
		own(b, OWN_UNUSED_SAMPLE_COUNT, "a sample count of %" PRIu64 " was followed by "
		    "another before any stack", b->next_count);
	b->next_count = 0;
	if (i->is_text || !i->number) {
		own(b, OWN_BAD_SAMPLE_COUNT, "info %s holds %s, not a count of at least 1: "
		    "the next stack counts once", MS_CAPTURE_INFO_SAMPLE_COUNT,
		    i->is_text ? "text" : "0");
		return 0;
	}
	b->next_count = i->number;
	return 0;
}

int ms_capture_builder_info(struct ms_capture_builder *b, const struct ms_info *i)
{
	uint32_t k, e, text = 0;

	if (b->failed)
		return -1;
	if (i->key.len == strlen(MS_CAPTURE_INFO_SAMPLE_COUNT) &&
	    !memcmp(i->key.ptr, MS_CAPTURE_INFO_SAMPLE_COUNT, i->key.len))
		return next_sample_count(b, i);
	/* What recorded the switches: the capture holds off-CPU intervals. */
	if (i->key.len == strlen(MS_CAPTURE_INFO_OFF_CPU) &&
	    !memcmp(i->key.ptr, MS_CAPTURE_INFO_OFF_CPU, i->key.len))
		b->flags |= MS_CAPTURE_OFF_CPU;
	k = intern_str(b, i->key);
	if (k == MS_NONE)
		return -1;
	if (i->is_text && (text = intern_str(b, i->text)) == MS_NONE)
		return -1;
	e = info_row(b, k);
	if (e == MS_NONE)
		return -1;
	b->info[e].value_text = text;
	b->info[e].value_number = i->is_text ? 0 : i->number;
	return 0;
}

int ms_capture_builder_producers(struct ms_capture_builder *b, const struct ms_header *h)
{
	size_t len = 1, at = 0;
	uint32_t i, n, text;
	char *s;

	if (b->failed)
		return -1;
	n = h->n_producers < MS_PRODUCERS_MAX ? h->n_producers : MS_PRODUCERS_MAX;
	for (i = 0; i < n; i++)
		len += strnlen(h->producers[i].name, MS_NAME_MAX) +
		       strnlen(h->producers[i].version, MS_NAME_MAX) + 4;
	s = scratch(b, len);
	if (!s)
		return -1;
	for (i = 0; i < n; i++)
		at += snprintf(s + at, len - at, "%s%.*s %.*s", i ? " | " : "",
			       MS_NAME_MAX, h->producers[i].name,
			       MS_NAME_MAX, h->producers[i].version);
	s[at] = '\0';
	text = intern(b, s, at);
	if (text == MS_NONE)
		return -1;
	return info_set(b, "producers", text, 0);
}

int ms_capture_builder_target(struct ms_capture_builder *b, const struct ms_target *t)
{
	uint32_t i, argc = t->argc < MS_ARGV_MAX ? t->argc : MS_ARGV_MAX, text;
	size_t len = 1, at = 0;
	char *s;

	if (b->failed)
		return -1;
	for (i = 0; i < argc; i++)
		len += t->argv[i].len + 1;
	s = scratch(b, len);
	if (!s)
		return -1;
	for (i = 0; i < argc; i++) {
		if (i)
			s[at++] = ' ';
		if (t->argv[i].len)
			memcpy(s + at, t->argv[i].ptr, t->argv[i].len);
		at += t->argv[i].len;
	}
	text = intern(b, s, at);
	if (text == MS_NONE || info_set(b, "command", text, 0) < 0 ||
	    info_set(b, "pid", 0, t->pid) < 0 ||
	    info_set(b, "launched", 0, t->launched) < 0)
		return -1;
	return 0;
}

int ms_capture_builder_target_exit(struct ms_capture_builder *b, const struct ms_target_exit *t)
{
	if (b->failed)
		return -1;
	b->target_exit_code = (int32_t)t->exit_code;
	return 0;
}

int ms_capture_builder_ignored(struct ms_capture_builder *b, const char *what, uint64_t count)
{
	size_t len = strlen(what) + sizeof("ignored-records.");
	uint32_t k, e;
	char *s;

	if (b->failed)
		return -1;
	if (!count)
		return 0;
	s = scratch(b, len);
	if (!s)
		return -1;
	snprintf(s, len, "ignored-records.%s", what);
	k = intern(b, s, len - 1);
	if (k == MS_NONE || (e = info_row(b, k)) == MS_NONE)
		return -1;
	/* Add to what an upstream capture (dumped as a stream) counted. */
	if (b->info[e].value_text) {
		b->info[e].value_text = 0;
		b->info[e].value_number = 0;
	}
	b->info[e].value_number += count;
	return 0;
}

/* ---- threads ---- */

static bool thread_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;
	const uint32_t *k = key;

	return b->threads[e].pid == k[0] && b->threads[e].tid == k[1];
}

static uint32_t thread_find(struct ms_capture_builder *b, uint32_t pid, uint32_t tid)
{
	uint32_t k[2] = { pid, tid };

	return ms_index_find(&b->thread_ix, ms_hash_u64((uint64_t)pid << 32 | tid),
			     thread_eq, b, k);
}

/* The thread (pid, tid), made when new; MS_NONE on failure. */
static uint32_t thread_get(struct ms_capture_builder *b, uint32_t pid, uint32_t tid)
{
	uint32_t e = thread_find(b, pid, tid);

	if (e != MS_INDEX_EMPTY)
		return e;
	if (GROW(b, b->threads, b->n_threads, b->alloc_threads) < 0)
		return MS_NONE;
	e = b->n_threads;
	memset(&b->threads[e], 0, sizeof(b->threads[e]));
	b->threads[e].pid = pid;
	b->threads[e].tid = tid;
	if (ms_index_add(&b->thread_ix, ms_hash_u64((uint64_t)pid << 32 | tid), e) < 0) {
		fail(b, "out of memory");
		return MS_NONE;
	}
	b->n_threads++;
	return e;
}

int ms_capture_builder_comm(struct ms_capture_builder *b, const struct ms_comm *c)
{
	uint32_t t, name;

	if (b->failed)
		return -1;
	name = intern_str(b, c->comm);
	if (name == MS_NONE || (t = thread_get(b, c->pid, c->tid)) == MS_NONE)
		return -1;
	b->threads[t].name = name;
	return 0;
}

int ms_capture_builder_task(struct ms_capture_builder *b, uint32_t kind, const struct ms_task *t)
{
	uint32_t child, parent;

	if (b->failed)
		return -1;
	child = thread_get(b, t->pid, t->tid);
	if (child == MS_NONE)
		return -1;
	if ((kind == MS_REC_FORK ? ms_pairing_fork(b->pairing, t->pid, t->tid) :
	     ms_pairing_exit(b->pairing, t->pid, t->tid)) < 0) {
		b->failed = true;
		return -1;
	}
	/* A new task runs under its parent's name until it gets its own. */
	if (kind == MS_REC_FORK && !b->threads[child].name) {
		parent = thread_find(b, t->ppid, t->ptid);
		if (parent != MS_INDEX_EMPTY)
			b->threads[child].name = b->threads[parent].name;
	}
	return 0;
}

/* ---- modules ---- */

static bool module_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;

	return b->modules[e].sid == *(const uint32_t *)key;
}

/* Module index of stream id sid (MS_NONE stays MS_NONE); -1 on failure. */
static int module_ref(struct ms_capture_builder *b, uint32_t sid, uint32_t *out)
{
	uint32_t h = ms_hash_u64(sid), e;

	if (sid == MS_NONE) {
		*out = MS_NONE;
		return 0;
	}
	e = ms_index_find(&b->module_ix, h, module_eq, b, &sid);
	if (e == MS_INDEX_EMPTY) {
		if (GROW(b, b->modules, b->n_modules, b->alloc_modules) < 0)
			return -1;
		e = b->n_modules;
		memset(&b->modules[e], 0, sizeof(b->modules[e]));
		b->modules[e].sid = sid;
		b->modules[e].m.kind = MS_MODULE_UNKNOWN;
		if (ms_index_add(&b->module_ix, h, e) < 0)
			return fail(b, "out of memory");
		b->n_modules++;
	}
	*out = e;
	return 0;
}

static bool module_same(const struct ms_cap_module *a, const struct ms_cap_module *c)
{
	return a->path == c->path && a->kind == c->kind && a->build_id_len == c->build_id_len &&
	       !memcmp(a->build_id, c->build_id, a->build_id_len) &&
	       a->dev_maj == c->dev_maj && a->dev_min == c->dev_min &&
	       a->ino == c->ino && a->size == c->size && a->mtime == c->mtime &&
	       a->base == c->base;
}

int ms_capture_builder_module(struct ms_capture_builder *b, const struct ms_module *m)
{
	struct ms_cap_module cm;
	uint32_t e;

	const char *wrong;
	char msg[192];

	if (b->failed)
		return -1;
	if ((wrong = ms_module_base_wrong(m->kind, m->base, m->size))) {
		snprintf(msg, sizeof(msg), "module record %u (kind %u, base 0x%" PRIx64 ", size %"
			 PRIu64 ") is a%s %s module %s", m->id, m->kind, m->base, m->size,
			 m->kind == MS_MODULE_ANON || m->kind == MS_MODULE_UNKNOWN ||
			 m->kind == MS_MODULE_INTERPRETED ? "n" : "",
			 ms_module_kind_name(m->kind), wrong);
		return fail(b, msg);
	}
	if ((wrong = ms_module_identity_wrong(m->kind, m->build_id_len, m->dev_maj, m->dev_min,
					      m->ino, m->size, m->mtime))) {
		snprintf(msg, sizeof(msg), "module record %u (path \"%.*s\") is an %s module %s",
			 m->id, (int)(m->path.len < 64 ? m->path.len : 64), m->path.ptr,
			 ms_module_kind_name(m->kind), wrong);
		return fail(b, msg);
	}
	memset(&cm, 0, sizeof(cm));
	cm.path = intern_str(b, m->path);
	if (cm.path == MS_NONE || module_ref(b, m->id, &e) < 0)
		return -1;
	if (e == MS_NONE) {
		own(b, OWN_UNDEFINED_MODULE, "a module record used the reserved id %u", m->id);
		return 0;
	}
	cm.kind = m->kind;
	cm.build_id_len = m->build_id_len < MS_BUILD_ID_MAX ? m->build_id_len : MS_BUILD_ID_MAX;
	memcpy(cm.build_id, m->build_id, cm.build_id_len);
	cm.dev_maj = m->dev_maj;
	cm.dev_min = m->dev_min;
	cm.ino = m->ino;
	cm.size = m->size;
	cm.mtime = m->mtime;
	cm.base = m->base;
	if (!b->modules[e].defined) {
		b->modules[e].m = cm;
		b->modules[e].defined = true;
	} else if (!module_same(&b->modules[e].m, &cm)) {
		own(b, OWN_MODULE_REDEFINED,
		    "module %u was described again differently (path \"%s\"); the first description was kept",
		    m->id, str_at(b, cm.path));
	}
	return 0;
}

/* ---- perf-map settings ---- */

static bool perf_map_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;

	return b->perf_maps[e].pid == *(const uint32_t *)key;
}

int ms_capture_builder_jit_read(struct ms_capture_builder *b, const struct ms_jit_read *r)
{
	struct ms_cap_perf_map x;
	uint32_t h = ms_hash_u64(r->pid), e;
	char msg[160];

	if (b->failed)
		return -1;
	if (r->status >= MS_JIT_READ_STATUS_COUNT) {
		snprintf(msg, sizeof(msg), "the jit-read record of pid %" PRIu32 " has status %"
			 PRIu32 " (0 to %d)", r->pid, r->status, MS_JIT_READ_STATUS_COUNT - 1);
		return fail(b, msg);
	}
	if (r->err > MS_CAP_ERRNO_MAX) {
		snprintf(msg, sizeof(msg), "the jit-read record of pid %" PRIu32 " has err %"
			 PRIu32 ", which is no errno (at most %u)", r->pid, r->err, MS_CAP_ERRNO_MAX);
		return fail(b, msg);
	}
	memset(&x, 0, sizeof(x));
	x.pid = r->pid;
	if ((x.path = intern_str(b, r->path)) == MS_NONE)
		return -1;
	x.status = r->status;
	x.err = r->err;
	x.time = r->time;
	x.offset = r->offset;
	x.functions = r->functions;
	x.malformed = r->malformed;
	x.over_max = r->over_max;
	x.no_code = r->no_code;
	x.code_unread = r->code_unread;
	x.code_bytes = r->code_bytes;
	/* Its counts are the process's totals so far: the last record is its setting. */
	e = ms_index_find(&b->perf_map_ix, h, perf_map_eq, b, &r->pid);
	if (e != MS_INDEX_EMPTY) {
		b->perf_maps[e] = x;
		return 0;
	}
	if (GROW(b, b->perf_maps, b->n_perf_maps, b->alloc_perf_maps) < 0)
		return -1;
	b->perf_maps[b->n_perf_maps] = x;
	if (ms_index_add(&b->perf_map_ix, h, b->n_perf_maps) < 0)
		return fail(b, "out of memory");
	b->n_perf_maps++;
	return 0;
}

/* ---- Python processes ---- */

int ms_capture_builder_py_process(struct ms_capture_builder *b, const struct ms_py_process *p)
{
	struct ms_cap_py_process x;
	char msg[160];

	if (b->failed)
		return -1;
	if (p->status >= MS_PY_PROCESS_STATUS_COUNT) {
		snprintf(msg, sizeof(msg), "the py-process record of pid %" PRIu32 " has status %"
			 PRIu32 " (0 to %d)", p->pid, p->status, MS_PY_PROCESS_STATUS_COUNT - 1);
		return fail(b, msg);
	}
	if (b->n_py == MS_CAPTURE_PY_PROCESSES_MAX) {
		own(b, OWN_PY_PROCESS_ROWS_FULL, "py-process records past %u were not kept, the "
		    "first of pid %" PRIu32 " at time %" PRIu64, MS_CAPTURE_PY_PROCESSES_MAX,
		    p->pid, p->time);
		return 0;
	}
	memset(&x, 0, sizeof(x));
	x.pid = p->pid;
	x.status = p->status;
	x.version_hex = p->version_hex;
	x.source = p->source;
	x.time = p->time;
	if ((x.path = intern_str(b, p->path)) == MS_NONE ||
	    (x.engine = intern_str(b, p->engine)) == MS_NONE ||
	    (x.reason = intern_str(b, p->reason)) == MS_NONE)
		return -1;
	if (GROW(b, b->py, b->n_py, b->alloc_py) < 0)
		return -1;
	b->py[b->n_py++] = x;
	return 0;
}

/* ---- label spans ---- */

int ms_capture_builder_label_span(struct ms_capture_builder *b, const struct ms_label_span *l)
{
	struct ms_cap_label_span x;

	if (b->failed)
		return -1;
	if (l->start > l->end || !l->samples || !l->key.len || !l->value.len) {
		own(b, OWN_BAD_LABEL_SPAN, "a label span of thread %" PRIu32 "/%" PRIu32 " (start %"
		    PRIu64 ", end %" PRIu64 ", %" PRIu64 " samples) was left out: it has an empty "
		    "key or value, no samples, or an end before its start", l->pid, l->tid,
		    l->start, l->end, l->samples);
		return 0;
	}
	if (b->n_spans == MS_CAPTURE_LABEL_SPANS_MAX) {
		own(b, OWN_LABEL_SPAN_ROWS_FULL, "label spans past %u were not kept, the first of "
		    "thread %" PRIu32 "/%" PRIu32 " at time %" PRIu64, MS_CAPTURE_LABEL_SPANS_MAX,
		    l->pid, l->tid, l->start);
		return 0;
	}
	memset(&x, 0, sizeof(x));
	x.start = l->start;
	x.end = l->end;
	x.samples = l->samples;
	if ((x.thread = thread_get(b, l->pid, l->tid)) == MS_NONE ||
	    (x.key = intern_str(b, l->key)) == MS_NONE ||
	    (x.value = intern_str(b, l->value)) == MS_NONE)
		return -1;
	if (GROW(b, b->spans, b->n_spans, b->alloc_spans) < 0)
		return -1;
	b->spans[b->n_spans++] = x;
	return 0;
}

/* ---- tasks and their waits ---- */

static bool task_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;
	const struct ms_cap_task *k = key, *x = &b->tasks[e];

	return x->pid == k->pid && x->kind == k->kind && x->id == k->id;
}

static uint32_t task_hash(const struct ms_cap_task *k)
{
	return ms_hash_mix(ms_hash_u64(k->id), (uint64_t)k->pid << 32 | k->kind);
}

/* Why TASK_WAIT t cannot be a read of a task, or NULL. */
static const char *task_wait_wrong(const struct ms_task_wait *t)
{
	if (!t->kind.len)
		return "its kind is empty";
	if (t->status >= MS_TASK_WAIT_STATUS_COUNT)
		return "its status is none the format knows";
	if (t->status != MS_TASK_WAIT_COMPLETE && t->stack != UINT32_MAX)
		return "it refers to a stack for a read that keeps none";
	if (t->kind.len == 6 && !memcmp(t->kind.ptr, "thread", 6) && t->id != t->tid)
		return "a thread task's id is not its tid";
	return NULL;
}

int ms_capture_builder_task_wait(struct ms_capture_builder *b, const struct ms_task_wait *t)
{
	struct ms_cap_task k, *x;
	const char *wrong;
	uint32_t e, h;

	if (b->failed)
		return -1;
	if ((wrong = task_wait_wrong(t))) {
		own(b, OWN_BAD_TASK_WAIT, "a task-wait record of thread %" PRIu32 "/%" PRIu32
		    " at %" PRIu64 " was left out: %s", t->pid, t->tid, t->time, wrong);
		return 0;
	}
	if (t->stack != UINT32_MAX && t->stack >= b->n_defs) {
		char what[120];

		snprintf(what, sizeof(what), "a task-wait record refers to stack %u, which no "
			 "stack-def before it defines", t->stack);
		return fail(b, what);
	}
	memset(&k, 0, sizeof(k));
	k.pid = t->pid;
	k.id = t->id;
	if ((k.kind = intern_str(b, t->kind)) == MS_NONE)
		return -1;
	h = task_hash(&k);
	e = ms_index_find(&b->task_ix, h, task_eq, b, &k);
	if (e == MS_INDEX_EMPTY) {
		if (b->n_tasks == MS_CAPTURE_TASKS_MAX) {
			own(b, OWN_TASK_ROWS_FULL, "tasks past %u were not kept, the first a %s of "
			    "process %" PRIu32 " numbered %" PRIu64, MS_CAPTURE_TASKS_MAX,
			    str_at(b, k.kind), t->pid, t->id);
			return 0;
		}
		/* A thread's task names its thread, which COMM records name. */
		k.thread = MS_NONE;
		if (t->kind.len == 6 && !memcmp(t->kind.ptr, "thread", 6) &&
		    (k.thread = thread_get(b, t->pid, t->tid)) == MS_NONE)
			return -1;
		k.first_time = k.last_time = t->time;
		if (GROW(b, b->tasks, b->n_tasks, b->alloc_tasks) < 0)
			return -1;
		e = b->n_tasks;
		b->tasks[e] = k;
		if (ms_index_add(&b->task_ix, h, e) < 0)
			return fail(b, "out of memory");
		b->n_tasks++;
	}
	x = &b->tasks[e];
	x->first_time = t->time < x->first_time ? t->time : x->first_time;
	x->last_time = t->time > x->last_time ? t->time : x->last_time;
	if (t->status == MS_TASK_WAIT_CHANGED) {
		x->changed++;
		return 0;
	}
	if (t->status == MS_TASK_WAIT_DROPPED) {
		x->dropped++;
		return 0;
	}
	if (b->n_waits == MS_CAPTURE_WAITS_MAX) {
		/* whole, its stack not kept: what dropped counts */
		own(b, OWN_WAIT_ROWS_FULL, "wait rows past %u were not kept (counted as dropped "
		    "on their task), the first of a %s of process %" PRIu32 " numbered %" PRIu64
		    " at %" PRIu64, MS_CAPTURE_WAITS_MAX, str_at(b, x->kind), t->pid, t->id,
		    t->time);
		x->dropped++;
		return 0;
	}
	if (GROW(b, b->waits, b->n_waits, b->alloc_waits) < 0)
		return -1;
	b->waits[b->n_waits] = (struct ms_cap_wait){
		.task = e, .stack = t->stack == UINT32_MAX ? MS_NONE : b->defs[t->stack].node,
		.reason = MS_NONE, .time = t->time,
	};
	if (t->reason.len && (b->waits[b->n_waits].reason = intern_str(b, t->reason)) == MS_NONE)
		return -1;
	b->n_waits++;
	b->tasks[e].waits++;
	return 0;
}

/* ---- frames and frame facts ---- */

struct frame_key {
	uint32_t module, flags;
	uint64_t address;
};

static bool frame_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;
	const struct frame_key *k = key;
	const struct ms_cap_frame *f = &b->frames[e];

	return f->module == k->module && f->flags == k->flags && f->address == k->address;
}

static uint32_t frame_get(struct ms_capture_builder *b, uint32_t module, uint32_t flags,
			  uint64_t address)
{
	struct frame_key k = { module, flags, address };
	uint32_t h = ms_hash_mix(ms_hash_mix(ms_hash_u64(address), module), flags);
	uint32_t e = ms_index_find(&b->frame_ix, h, frame_eq, b, &k);

	if (e != MS_INDEX_EMPTY)
		return e;
	if (GROW(b, b->frames, b->n_frames, b->alloc_frames) < 0)
		return MS_NONE;
	e = b->n_frames;
	memset(&b->frames[e], 0, sizeof(b->frames[e]));
	b->frames[e].module = module;
	b->frames[e].flags = flags;
	b->frames[e].address = address;
	b->frames[e].reason = MS_CAP_UNSYMBOLIZED;
	if (ms_index_add(&b->frame_ix, h, e) < 0) {
		fail(b, "out of memory");
		return MS_NONE;
	}
	b->n_frames++;
	return e;
}

static bool fact_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;
	const struct frame_key *k = key;

	return b->facts[e].module == k->module && b->facts[e].address == k->address;
}

static uint32_t fact_hash(uint32_t module, uint64_t address)
{
	return ms_hash_mix(ms_hash_u64(address), module);
}

static bool function_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;

	return !memcmp(&b->functions[e], key, sizeof(struct ms_cap_function));
}

/* The function row of fn (builder string ids), added when new; MS_NONE on failure. */
static uint32_t function_get(struct ms_capture_builder *b, const struct ms_cap_function *fn)
{
	uint32_t h = ms_hash_mix(ms_hash_mix(ms_hash_u64((uint64_t)fn->name << 32 | fn->system_name),
					     fn->file), fn->start_line);
	uint32_t e = ms_index_find(&b->function_ix, h, function_eq, b, fn);

	if (e != MS_INDEX_EMPTY)
		return e;
	if (GROW(b, b->functions, b->n_functions, b->alloc_functions) < 0)
		return MS_NONE;
	e = b->n_functions;
	b->functions[e] = *fn;
	if (ms_index_add(&b->function_ix, h, e) < 0) {
		fail(b, "out of memory");
		return MS_NONE;
	}
	b->n_functions++;
	return e;
}

/*
 * Intern the inline chain of f and append it to the builder's lines; its
 * range in *first, *n. 0 or -1.
 */
static int chain_add(struct ms_capture_builder *b, const struct ms_frame *f, uint32_t *first,
		     uint32_t *n)
{
	uint32_t count = f->n_lines < MS_FRAME_LINES_MAX ? f->n_lines : MS_FRAME_LINES_MAX, i;

	*first = b->n_lines;
	*n = 0;
	for (i = 0; i < count; i++) {
		const struct ms_frame_line *l = &f->lines[i];
		struct ms_cap_function fn;
		uint32_t id;

		/* Padding and all: compared with memcmp. */
		memset(&fn, 0, sizeof(fn));
		fn.name = intern_str(b, l->function);
		fn.system_name = intern_str(b, l->system_name);
		fn.file = intern_str(b, l->file);
		fn.start_line = l->function_line;
		if (fn.name == MS_NONE || fn.system_name == MS_NONE || fn.file == MS_NONE)
			return -1;
		id = function_get(b, &fn);
		if (id == MS_NONE || GROW(b, b->lines, b->n_lines, b->alloc_lines) < 0)
			return -1;
		b->lines[b->n_lines].function = id;
		b->lines[b->n_lines].line = l->line;
		b->n_lines++;
	}
	*n = count;
	return 0;
}

/* Whether the chain of fact old is the one f[first..first+n) of the builder holds. */
static bool chain_same(const struct ms_capture_builder *b, const struct fact *old,
		       uint32_t first, uint32_t n)
{
	return old->n_lines == n &&
	       (!n || !memcmp(&b->lines[old->first_line], &b->lines[first], n * sizeof(*b->lines)));
}

int ms_capture_builder_frame(struct ms_capture_builder *b, const struct ms_frame *f)
{
	struct frame_key k = { 0, 0, f->address };
	uint32_t name, h, e, first, n;

	if (b->failed)
		return -1;
	name = intern_str(b, f->name);
	if (name == MS_NONE || module_ref(b, f->module, &k.module) < 0)
		return -1;
	if (chain_add(b, f, &first, &n) < 0)
		return -1;
	h = fact_hash(k.module, k.address);
	e = ms_index_find(&b->fact_ix, h, fact_eq, b, &k);
	if (e != MS_INDEX_EMPTY) {
		struct fact *old = &b->facts[e];

		if (old->name != name || old->symbol_start != f->symbol_start ||
		    old->reason != f->reason || !chain_same(b, old, first, n))
			own(b, OWN_FACT_REDEFINED,
			    "module %u address 0x%" PRIx64 " was symbolized again differently (\"%s\", then \"%s\"); the first was kept",
			    f->module, f->address, str_at(b, old->name), str_at(b, name));
		/* The chain just added is not kept: the lines are the last rows. */
		b->n_lines = first;
		return 0;
	}
	if (GROW(b, b->facts, b->n_facts, b->alloc_facts) < 0)
		return -1;
	e = b->n_facts;
	b->facts[e].module = k.module;
	b->facts[e].address = k.address;
	b->facts[e].name = name;
	b->facts[e].symbol_start = f->symbol_start;
	b->facts[e].reason = f->reason;
	b->facts[e].first_line = first;
	b->facts[e].n_lines = n;
	if (ms_index_add(&b->fact_ix, h, e) < 0)
		return fail(b, "out of memory");
	b->n_facts++;
	return 0;
}

/* How much a fact names: 2 lines, 1 a name alone, 0 nothing. */
static int fact_rank(const struct ms_capture_builder *b, const struct fact *fa)
{
	return fa->n_lines ? 2 : b->strs[fa->name].len ? 1 : 0;
}

int ms_capture_builder_frame_fallback(struct ms_capture_builder *b, const struct ms_frame *f)
{
	struct frame_key k = { 0, 0, f->address };
	struct fact *fa;
	uint32_t name, h, e, first, n;

	if (b->failed)
		return -1;
	if (!f->n_lines && !f->name.len)
		return 0;	/* names nothing: never better */
	if (module_ref(b, f->module, &k.module) < 0)
		return -1;
	h = fact_hash(k.module, k.address);
	e = ms_index_find(&b->fact_ix, h, fact_eq, b, &k);
	if (e == MS_INDEX_EMPTY)
		return ms_capture_builder_frame(b, f);
	fa = &b->facts[e];
	if (fact_rank(b, fa) >= (f->n_lines ? 2 : 1))
		return 0;
	/* The stream's fact names less: this one takes its place. */
	name = intern_str(b, f->name);
	if (name == MS_NONE || chain_add(b, f, &first, &n) < 0)
		return -1;
	fa = &b->facts[e];
	fa->name = name;
	fa->symbol_start = f->symbol_start;
	fa->reason = f->reason;
	fa->first_line = first;
	fa->n_lines = n;
	return 0;
}

/* ---- stacks and samples ---- */

static bool stack_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;
	const uint32_t *k = key;

	return b->stacks[e].parent == k[0] && b->stacks[e].frame == k[1];
}

/*
 * The node (parent, frame), made when new. *fresh says parent was made by
 * this stack: a node that new has no children, so its child is not looked
 * for (a stack unlike any before costs one probe a frame, not two).
 */
static uint32_t stack_get(struct ms_capture_builder *b, uint32_t parent, uint32_t frame,
			  bool *fresh)
{
	uint32_t k[2] = { parent, frame };
	uint32_t h = ms_hash_u64((uint64_t)parent << 32 | frame);
	uint32_t e;

	if (!*fresh) {
		e = ms_index_find(&b->stack_ix, h, stack_eq, b, k);
		if (e != MS_INDEX_EMPTY)
			return e;
	}
	*fresh = true;
	if (GROW(b, b->stacks, b->n_stacks, b->alloc_stacks) < 0)
		return MS_NONE;
	e = b->n_stacks;
	b->stacks[e].parent = parent;
	b->stacks[e].frame = frame;
	b->stacks[e].depth = parent == MS_NONE ? 1 : b->stacks[parent].depth + 1;
	if (ms_index_add(&b->stack_ix, h, e) < 0) {
		fail(b, "out of memory");
		return MS_NONE;
	}
	b->n_stacks++;
	return e;
}

/* The node of s's frames in the stack tree (MS_NONE for no frames), or -1. */
static int stack_node(struct ms_capture_builder *b, const struct ms_stack *s, uint32_t *out)
{
	uint32_t n = s->n_frames < MS_FRAMES_MAX ? s->n_frames : MS_FRAMES_MAX;
	uint32_t node = MS_NONE, module, frame, i;
	bool fresh = false;

	/* The stream lists frames innermost first; the tree's root is outermost. */
	for (i = n; i-- > 0;) {
		const struct ms_stack_frame *f = &s->frames[i];

		if (module_ref(b, f->module, &module) < 0)
			return -1;
		frame = frame_get(b, module, f->flags, f->address);
		if (frame == MS_NONE)
			return -1;
		node = stack_get(b, node, frame, &fresh);
		if (node == MS_NONE)
			return -1;
	}
	*out = node;
	return 0;
}

/* The count of the next sample row: what an info "sample-count" said, else 1. */
static uint64_t take_count(struct ms_capture_builder *b)
{
	uint64_t c = b->next_count ? b->next_count : 1;

	b->next_count = 0;
	return c;
}

static int add_sample(struct ms_capture_builder *b, uint32_t pid, uint32_t tid, uint64_t time,
		      uint32_t cpu, uint64_t period, uint32_t node, uint32_t reason,
		      uint64_t count)
{
	uint32_t thread;
	struct ms_cap_sample *sample;

	/* What views add up must fit in 64 bits (capture.h), as the reader checks. */
	if (count > UINT64_MAX - b->sample_count)
		return fail(b, "the samples' counts add up past 2^64-1");
	thread = thread_get(b, pid, tid);
	if (thread == MS_NONE)
		return -1;
	if (GROW(b, b->samples, b->n_samples, b->alloc_samples) < 0)
		return -1;
	b->sample_count += count;
	sample = &b->samples[b->n_samples++];
	sample->time = time;
	sample->thread = thread;
	sample->cpu = cpu;
	sample->stack = node;
	sample->end = reason;
	sample->period = period;
	sample->count = count;
	return 0;
}

int ms_capture_builder_stack_count(struct ms_capture_builder *b, const struct ms_stack *s,
				   uint64_t count)
{
	uint32_t node;

	if (b->failed)
		return -1;
	if (!count)
		return fail(b, "a sample row of count 0 (a row stands for at least one sample)");
	if (stack_node(b, s, &node) < 0)
		return -1;
	return add_sample(b, s->pid, s->tid, s->time, s->cpu, s->period, node, s->reason, count);
}

int ms_capture_builder_stack(struct ms_capture_builder *b, const struct ms_stack *s)
{
	if (b->failed)
		return -1;
	return ms_capture_builder_stack_count(b, s, take_count(b));
}

int ms_capture_builder_stack_import(struct ms_capture_builder *b, const struct ms_stack *s,
				    uint64_t count)
{
	uint32_t n = s->n_frames < MS_FRAMES_MAX ? s->n_frames : MS_FRAMES_MAX, module, frame, i;
	size_t first = b->n_path_frames;

	if (b->failed)
		return -1;
	if (!count)
		return fail(b, "a sample row of count 0 (a row stands for at least one sample)");
	if (!n)
		return add_sample(b, s->pid, s->tid, s->time, s->cpu, s->period, MS_NONE,
				  s->reason, count);
	if (first + n > b->alloc_path_frames) {
		size_t want = b->alloc_path_frames ? b->alloc_path_frames : 4096;
		uint32_t *p;

		while (want < first + n)
			want *= 2;
		if (want > SIZE_MAX / sizeof(*p) ||
		    !(p = realloc(b->path_frames, want * sizeof(*p))))
			return fail(b, "out of memory");
		b->path_frames = p;
		b->alloc_path_frames = want;
	}
	if (GROW(b, b->paths, b->n_paths, b->alloc_paths) < 0)
		return -1;
	/* The stream lists frames innermost first; a path is outermost first. */
	for (i = n; i-- > 0;) {
		const struct ms_stack_frame *f = &s->frames[i];

		if (module_ref(b, f->module, &module) < 0)
			return -1;
		frame = frame_get(b, module, f->flags, f->address);
		if (frame == MS_NONE)
			return -1;
		b->path_frames[b->n_path_frames++] = frame;
	}
	if (add_sample(b, s->pid, s->tid, s->time, s->cpu, s->period, MS_NONE, s->reason,
		       count) < 0)
		return -1;
	b->paths[b->n_paths].first = first;
	b->paths[b->n_paths].n = n;
	b->paths[b->n_paths].sample = b->n_samples - 1;
	b->n_paths++;
	return 0;
}

int ms_capture_builder_stack_def(struct ms_capture_builder *b, uint32_t id,
				 const struct ms_stack *s)
{
	uint32_t node;

	if (b->failed)
		return -1;
	if (id != b->n_defs) {
		char what[120];

		snprintf(what, sizeof(what), "a stack-def numbers its stack %u where %u comes next",
			 id, b->n_defs);
		return fail(b, what);
	}
	if (stack_node(b, s, &node) < 0 || GROW(b, b->defs, b->n_defs, b->alloc_defs) < 0)
		return -1;
	b->defs[b->n_defs].node = node;
	b->defs[b->n_defs++].reason = s->reason;
	return 0;
}

int ms_capture_builder_stack_ref(struct ms_capture_builder *b, const struct ms_stack_ref *r)
{
	if (b->failed)
		return -1;
	if (r->id >= b->n_defs) {
		char what[120];

		snprintf(what, sizeof(what), "a stack-ref refers to stack %u, which no stack-def "
			 "before it defines", r->id);
		return fail(b, what);
	}
	return add_sample(b, r->pid, r->tid, r->time, r->cpu, r->period, b->defs[r->id].node,
			  b->defs[r->id].reason, take_count(b));
}

/* ---- off-CPU intervals ---- */

static bool evidence_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;
	const struct ms_cap_evidence *k = key, *x = &b->evidence[e];

	return x->cause == k->cause && x->sources == k->sources && x->state == k->state &&
	       x->preempt == k->preempt;
}

/* The evidence row of ev, added when new; MS_NONE on failure. */
static uint32_t evidence_get(struct ms_capture_builder *b, const struct ms_cap_evidence *ev)
{
	uint32_t h = ms_hash_mix(ms_hash_mix(ms_hash_u64(ev->state),
					     (uint64_t)ev->cause << 32 | ev->sources), ev->preempt);
	uint32_t e = ms_index_find(&b->evidence_ix, h, evidence_eq, b, ev);

	if (e != MS_INDEX_EMPTY)
		return e;
	if (GROW(b, b->evidence, b->n_evidence, b->alloc_evidence) < 0)
		return MS_NONE;
	e = b->n_evidence;
	memset(&b->evidence[e], 0, sizeof(b->evidence[e]));
	b->evidence[e].cause = ev->cause;
	b->evidence[e].sources = ev->sources;
	b->evidence[e].state = ev->state;
	b->evidence[e].preempt = ev->preempt;
	if (ms_index_add(&b->evidence_ix, h, e) < 0) {
		fail(b, "out of memory");
		return MS_NONE;
	}
	b->n_evidence++;
	return e;
}

/* An interval row (stack: the builder's node); the thread is made known. */
static int add_interval(struct ms_capture_builder *b, const struct ms_pairing_interval *iv)
{
	uint32_t thread = thread_get(b, iv->pid, iv->tid), evidence;
	struct ms_cap_interval *r;

	if (thread == MS_NONE || (evidence = evidence_get(b, &iv->evidence)) == MS_NONE ||
	    GROW(b, b->intervals, b->n_intervals, b->alloc_intervals) < 0)
		return -1;
	r = &b->intervals[b->n_intervals++];
	r->start = iv->start;
	r->end = iv->end;
	r->thread = thread;
	r->cpu = iv->cpu;
	r->stack = iv->stack;
	r->stack_end = iv->stack_end;
	r->missing = iv->missing;
	r->evidence = evidence;
	return 0;
}

static int pairing_interval(void *ctx, const struct ms_pairing_interval *iv)
{
	return add_interval(ctx, iv);
}

static void pairing_problem(void *ctx, enum ms_pairing_problem code, uint32_t pid, uint32_t tid,
			    uint64_t time)
{
	struct ms_capture_builder *b = ctx;

	switch (code) {
	case MS_PAIRING_SWITCH_IN_UNPAIRED:
		own(b, OWN_SWITCH_IN_UNPAIRED, "thread %" PRIu32 "/%" PRIu32 " came back to a CPU "
		    "at %" PRIu64 " without leaving one, and no records were lost before: no "
		    "interval", pid, tid, time);
		break;
	case MS_PAIRING_ENDS_BEFORE_START:
		own(b, OWN_ENDS_BEFORE_START, "an off-CPU interval of thread %" PRIu32 "/%" PRIu32
		    " ended at %" PRIu64 ", before it began: left out", pid, tid, time);
		break;
	default:
		own(b, OWN_INTERVAL_TIME_ZERO, "an off-CPU interval of thread %" PRIu32 "/%" PRIu32
		    " has a time of 0 where it needs one: left out", pid, tid);
		break;
	}
}

/* The pairing failed: its message (or the builder's, from the sink) is out. */
static int pairing_failed(struct ms_capture_builder *b)
{
	b->failed = true;
	return -1;
}

int ms_capture_builder_switch(struct ms_capture_builder *b, const struct ms_switch *s)
{
	if (b->failed)
		return -1;
	b->flags |= MS_CAPTURE_OFF_CPU;
	if (thread_get(b, s->pid, s->tid) == MS_NONE)
		return -1;
	return ms_pairing_switch(b->pairing, s) < 0 ? pairing_failed(b) : 0;
}

int ms_capture_builder_off_cpu(struct ms_capture_builder *b, const struct ms_off_cpu *o)
{
	if (b->failed)
		return -1;
	if (o->id >= b->n_defs) {
		char what[120];

		snprintf(what, sizeof(what), "an off-cpu record refers to stack %u, which no "
			 "stack-def before it defines", o->id);
		return fail(b, what);
	}
	b->flags |= MS_CAPTURE_OFF_CPU;
	if (thread_get(b, o->pid, o->tid) == MS_NONE)
		return -1;
	return ms_pairing_off_cpu(b->pairing, o, b->defs[o->id].node, b->defs[o->id].reason) < 0 ?
	       pairing_failed(b) : 0;
}

/* Why interval record i cannot be a row (capture.h's invariants), or NULL. */
static const char *interval_wrong(const struct ms_interval *i)
{
	bool no_start = i->missing == MS_INTERVAL_BEGAN_INSIDE || i->missing == MS_INTERVAL_LOST_START;

	if (i->missing >= MS_INTERVAL_MISSING_COUNT)
		return "its missing end is none the format knows";
	if (i->missing == MS_INTERVAL_COMPLETE && (!i->start || i->end < i->start))
		return "it is complete but does not start (after time 0) before it ends";
	if (no_start && (i->start || !i->end))
		return "its start is missing but its start is not 0 or its end is";
	if (!no_start && i->missing != MS_INTERVAL_COMPLETE && (!i->start || i->end))
		return "its end is missing but its end is not 0 or its start is";
	if (no_start && (i->cpu != MS_NONE || i->stack != MS_NONE))
		return "its start is missing but it names the CPU or stack it left with";
	if (i->cause >= MS_CAUSE_COUNT)
		return "its cause is none the format knows";
	if (i->sources & ~(uint32_t)(MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH))
		return "its evidence names sources the format does not know";
	if (i->preempt > 1)
		return "its preempt flag is not 0 or 1";
	if ((i->state && !(i->sources & MS_EVIDENCE_STATE)) ||
	    (i->preempt && !(i->sources & MS_EVIDENCE_SWITCH)))
		return "it holds a state or preempt flag its sources do not give";
	return NULL;
}

int ms_capture_builder_interval(struct ms_capture_builder *b, const struct ms_interval *i)
{
	struct ms_pairing_interval iv;
	const char *wrong;

	if (b->failed)
		return -1;
	b->flags |= MS_CAPTURE_OFF_CPU;
	if (i->stack != MS_NONE && i->stack >= b->n_defs) {
		char what[120];

		snprintf(what, sizeof(what), "an interval record refers to stack %u, which no "
			 "stack-def before it defines", i->stack);
		return fail(b, what);
	}
	if ((wrong = interval_wrong(i))) {
		own(b, OWN_BAD_INTERVAL, "an interval record of thread %" PRIu32 "/%" PRIu32
		    " (start %" PRIu64 ", end %" PRIu64 ") was left out: %s", i->pid, i->tid,
		    i->start, i->end, wrong);
		return 0;
	}
	memset(&iv, 0, sizeof(iv));
	iv.pid = i->pid;
	iv.tid = i->tid;
	iv.start = i->start;
	iv.end = i->end;
	iv.cpu = i->cpu;
	iv.stack = i->stack == MS_NONE ? MS_NONE : b->defs[i->stack].node;
	iv.stack_end = i->stack == MS_NONE ? MS_END_UNKNOWN : b->defs[i->stack].reason;
	iv.missing = i->missing;
	iv.evidence.cause = i->cause;
	iv.evidence.sources = i->sources;
	iv.evidence.state = i->state;
	iv.evidence.preempt = i->preempt;
	return add_interval(b, &iv);
}

/* ---- totals and problems ---- */

/* Whether loss row a's (time, source) comes before c's. */
static bool loss_before(const struct ms_cap_loss *a, const struct ms_cap_loss *c)
{
	return a->time != c->time ? a->time < c->time : a->source < c->source;
}

static int cmp_losses(const void *x, const void *y)
{
	const struct ms_cap_loss *a = x, *c = y;

	return loss_before(a, c) ? -1 : loss_before(c, a) ? 1 : 0;
}

/* Losses of pair x that get no row because of the bound. */
static void cut_loss(struct ms_capture_builder *b, const struct ms_cap_loss *x)
{
	if (!b->losses_cut || loss_before(x, &b->loss_first_cut))
		b->loss_first_cut = *x;
	b->losses_cut += x->count;	/* at most the totals: no overflow */
}

/*
 * Sort the rows by (time, source), merge those of one pair (their counts
 * add up to at most the totals), and keep the earliest
 * MS_CAPTURE_LOSSES_MAX pairs. Which pairs are kept does not depend on the
 * order the records came in: a pair loses its row only when as many
 * earlier ones have rows, and every later record of it is cut as well.
 */
static void compact_losses(struct ms_capture_builder *b)
{
	uint32_t i, n = 0;

	if (b->n_losses > 1)
		qsort(b->losses, b->n_losses, sizeof(*b->losses), cmp_losses);
	for (i = 0; i < b->n_losses; i++) {
		if (n && !cmp_losses(&b->losses[n - 1], &b->losses[i]))
			b->losses[n - 1].count += b->losses[i].count;
		else
			b->losses[n++] = b->losses[i];
	}
	b->n_losses = n;
	if (n <= MS_CAPTURE_LOSSES_MAX)
		return;
	for (i = MS_CAPTURE_LOSSES_MAX; i < n; i++)
		cut_loss(b, &b->losses[i]);
	b->n_losses = MS_CAPTURE_LOSSES_MAX;
	b->loss_is_cut = true;
	b->loss_cut = b->losses[MS_CAPTURE_LOSSES_MAX - 1];
}

int ms_capture_builder_lost(struct ms_capture_builder *b, const struct ms_lost *l)
{
	struct ms_cap_loss x = { .time = l->time, .count = l->count, .source = l->source };
	uint64_t *total;

	if (b->failed)
		return -1;
	/* Whatever the source: some thread's switches may be among them. */
	if (l->count && ms_pairing_lost(b->pairing, l->time) < 0) {
		b->failed = true;
		return -1;
	}
	switch (l->source) {
	case MS_LOST_KERNEL:
		total = &b->lost_kernel;
		break;
	case MS_LOST_COLLECTOR:
		total = &b->lost_collector;
		break;
	default:
		own(b, OWN_LOST_SOURCE, "%" PRIu64 " records lost by unknown source %u",
		    l->count, l->source);
		return 0;
	}
	/* A total stays within 64 bits, and so does any sum of its rows. */
	if (x.count > UINT64_MAX - *total) {
		own(b, OWN_LOST_OVERFLOW, "the records the %s lost add up past 2^64-1 (%" PRIu64
		    " more at time %" PRIu64 "): the total stays at 2^64-1",
		    l->source == MS_LOST_KERNEL ? "kernel" : "collector", x.count, x.time);
		x.count = UINT64_MAX - *total;
	}
	*total += x.count;
	/* Nothing lost; or lost at a time the stream does not know: the total alone. */
	if (!x.count || !x.time)
		return 0;
	if (b->loss_is_cut && loss_before(&b->loss_cut, &x)) {
		cut_loss(b, &x);
		return 0;
	}
	/* A stream in time order gives a pair's records one after another. */
	if (b->n_losses && !cmp_losses(&b->losses[b->n_losses - 1], &x)) {
		b->losses[b->n_losses - 1].count += x.count;
		return 0;
	}
	if (b->n_losses == LOSS_BUFFER) {
		compact_losses(b);
		if (b->loss_is_cut && loss_before(&b->loss_cut, &x)) {
			cut_loss(b, &x);
			return 0;
		}
	}
	if (GROW(b, b->losses, b->n_losses, b->alloc_losses) < 0)
		return -1;
	b->losses[b->n_losses++] = x;
	return 0;
}

int ms_capture_builder_throttle(struct ms_capture_builder *b, const struct ms_throttle *t)
{
	if (b->failed)
		return -1;
	if (!t->unthrottle)
		b->throttled++;
	return 0;
}

int ms_capture_builder_duty(struct ms_capture_builder *b, const struct ms_duty *d)
{
	struct ms_cap_duty *r;

	if (b->failed)
		return -1;
	/* A duty of 0 would make its samples weigh infinitely much. */
	if (!d->duty_ppm || d->duty_ppm > 1000000) {
		own(b, OWN_BAD_DUTY, "a duty record at time %" PRIu64 " says %" PRIu32
		    " millionths, not 1 to 1000000: left out", d->time, d->duty_ppm);
		return 0;
	}
	if (GROW(b, b->duty, b->n_duty, b->alloc_duty) < 0)
		return -1;
	r = &b->duty[b->n_duty++];
	r->time = d->time;
	r->duty_ppm = d->duty_ppm;
	r->share_ppm = d->share_ppm;
	r->rate = d->rate;
	r->budget_ppm = d->budget_ppm;
	return 0;
}

static bool problem_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_capture_builder *b = ctx;
	const uint32_t *k = key;

	return b->problems[e].stage == k[0] && b->problems[e].code == k[1];
}

static int problem_add(struct ms_capture_builder *b, uint32_t stage, uint32_t code,
		       uint32_t detail, uint64_t count)
{
	uint32_t k[2] = { stage, code };
	uint32_t h = ms_hash_u64((uint64_t)stage << 32 | code);
	uint32_t e = ms_index_find(&b->problem_ix, h, problem_eq, b, k);

	if (e != MS_INDEX_EMPTY) {
		b->problems[e].count += count;
		return 0;
	}
	if (GROW(b, b->problems, b->n_problems, b->alloc_problems) < 0)
		return -1;
	e = b->n_problems;
	b->problems[e].stage = stage;
	b->problems[e].code = code;
	b->problems[e].detail = detail;
	b->problems[e].count = count;
	if (ms_index_add(&b->problem_ix, h, e) < 0)
		return fail(b, "out of memory");
	b->n_problems++;
	return 0;
}

int ms_capture_builder_problem(struct ms_capture_builder *b, const struct ms_problem *p)
{
	uint32_t stage, code, detail;

	if (b->failed)
		return -1;
	stage = intern_str(b, p->stage);
	code = intern_str(b, p->code);
	detail = intern_str(b, p->detail);
	if (stage == MS_NONE || code == MS_NONE || detail == MS_NONE)
		return -1;
	return problem_add(b, stage, code, detail, p->count);
}

static int own_problem(struct ms_capture_builder *b, const char *code, const char *detail,
		       uint64_t count)
{
	uint32_t s = intern_c(b, STAGE), c = intern_c(b, code), d = intern_c(b, detail);

	if (s == MS_NONE || c == MS_NONE || d == MS_NONE)
		return -1;
	return problem_add(b, s, c, d, count);
}

int ms_capture_builder_incomplete(struct ms_capture_builder *b, const char *detail)
{
	if (b->failed)
		return -1;
	b->flags |= MS_CAPTURE_INCOMPLETE;
	return detail ? own_problem(b, "stream-cut-short", detail, 1) : 0;
}

/* ---- seal ---- */

static int cmp_frames(const void *x, const void *y, void *ctx)
{
	const struct ms_cap_frame *frames = ctx;
	const struct ms_cap_frame *a = &frames[*(const uint32_t *)x];
	const struct ms_cap_frame *c = &frames[*(const uint32_t *)y];

	if (a->module != c->module)
		return a->module < c->module ? -1 : 1;
	if (a->address != c->address)
		return a->address < c->address ? -1 : 1;
	if (a->flags != c->flags)
		return a->flags < c->flags ? -1 : 1;
	return 0;
}

static int cmp_threads(const void *x, const void *y, void *ctx)
{
	const struct ms_cap_thread *threads = ctx;
	const struct ms_cap_thread *a = &threads[*(const uint32_t *)x];
	const struct ms_cap_thread *c = &threads[*(const uint32_t *)y];

	if (a->pid != c->pid)
		return a->pid < c->pid ? -1 : 1;
	if (a->tid != c->tid)
		return a->tid < c->tid ? -1 : 1;
	return 0;
}

#define CMP_FIELD(a, c, f) \
	do { if ((a)->f != (c)->f) return (a)->f < (c)->f ? -1 : 1; } while (0)

static int cmp_samples(const void *x, const void *y)
{
	const struct ms_cap_sample *a = x, *c = y;

	CMP_FIELD(a, c, time);
	CMP_FIELD(a, c, thread);
	CMP_FIELD(a, c, cpu);
	CMP_FIELD(a, c, stack);
	/* Beyond the documented order, so equal keys still sort one way. */
	CMP_FIELD(a, c, end);
	CMP_FIELD(a, c, period);
	CMP_FIELD(a, c, count);
	return 0;
}

/*
 * Whether the samples are in cmp_samples() order already: they come from
 * ms-decode in time order, and glibc's merge sort compares n log n times
 * even then (a fifth of ms-capture on 5,000 samples).
 */
static bool samples_in_order(const struct ms_cap_sample *s, uint64_t n)
{
	for (uint64_t i = 1; i < n; i++)
		if (cmp_samples(&s[i - 1], &s[i]) > 0)
			return false;
	return true;
}

static int cmp_strings(const void *x, const void *y, void *ctx)
{
	const struct ms_capture_builder *b = ctx;
	const struct strref *a = &b->strs[*(const uint32_t *)x];
	const struct strref *c = &b->strs[*(const uint32_t *)y];
	uint32_t n = a->len < c->len ? a->len : c->len;
	int r = memcmp(b->pool + a->off, b->pool + c->off, n);

	if (r)
		return r;
	return a->len < c->len ? -1 : a->len > c->len;
}

static int cmp_info(const void *x, const void *y)
{
	const struct ms_cap_info *a = x, *c = y;

	CMP_FIELD(a, c, key);
	return 0;
}

static int cmp_problems(const void *x, const void *y)
{
	const struct ms_cap_problem *a = x, *c = y;

	CMP_FIELD(a, c, stage);
	CMP_FIELD(a, c, code);
	return 0;
}

static uint32_t *alloc_ids(struct ms_capture_builder *b, uint32_t n)
{
	uint32_t *p = malloc((size_t)(n ? n : 1) * sizeof(*p));

	if (!p)
		fail(b, "out of memory");
	return p;
}

/*
 * Lay out the lines of the sorted frames: frames at one (module, address)
 * share their fact's chain, written once. Function ids stay the builder's
 * until seal_functions(); the functions used are marked.
 */
static int seal_lines(struct ms_capture_builder *b, struct ms_capture *cap, const uint32_t *fact_of)
{
	struct ms_cap_frame *frames = cap->frames;
	struct ms_cap_line *lines;
	uint64_t total = 0;
	uint32_t i, prev = MS_INDEX_EMPTY, at = 0;

	b->function_used = calloc(b->n_functions ? b->n_functions : 1, sizeof(*b->function_used));
	if (!b->function_used)
		return fail(b, "out of memory");
	for (i = 0; i < cap->n_frames; i++) {
		if (fact_of[i] != MS_INDEX_EMPTY && fact_of[i] != prev)
			total += b->facts[fact_of[i]].n_lines;
		prev = fact_of[i];
	}
	if (total > ROWS_MAX)
		return fail(b, "a table is full (2^32-1 rows)");
	lines = malloc((size_t)(total ? total : 1) * sizeof(*lines));
	if (!lines)
		return fail(b, "out of memory");
	prev = MS_INDEX_EMPTY;
	for (i = 0; i < cap->n_frames; i++) {
		const struct fact *fa;
		uint32_t k;

		if (fact_of[i] == MS_INDEX_EMPTY || !b->facts[fact_of[i]].n_lines)
			continue;
		if (fact_of[i] == prev) {
			frames[i].first_line = frames[i - 1].first_line;
			frames[i].n_lines = frames[i - 1].n_lines;
			continue;
		}
		prev = fact_of[i];
		fa = &b->facts[fact_of[i]];
		frames[i].first_line = at;
		frames[i].n_lines = fa->n_lines;
		for (k = 0; k < fa->n_lines; k++) {
			lines[at] = b->lines[fa->first_line + k];
			b->function_used[lines[at].function] = true;
			at++;
		}
	}
	cap->lines = ms_capture_keep(cap, lines);
	cap->n_lines = at;
	return 0;
}

/* Whether builder frame i is in an interpreted module. */
static bool frame_interpreted(const struct ms_capture_builder *b, uint32_t i)
{
	uint32_t m = b->frames[i].module;

	return m != MS_NONE && b->modules[m].m.kind == MS_MODULE_INTERPRETED;
}

/* An interpreted (module, address) of the stream, and its fact. */
struct text_entry {
	uint32_t module;
	uint64_t address;
	uint32_t fact;		/* MS_INDEX_EMPTY: the stream gave it no text */
	uint32_t frame;		/* the builder frame */
};

static int cmp_bytes(const struct ms_capture_builder *b, uint32_t x, uint32_t y)
{
	uint32_t lx = b->strs[x].len, ly = b->strs[y].len;
	int c = memcmp(b->pool + b->strs[x].off, b->pool + b->strs[y].off, lx < ly ? lx : ly);

	return c ? c : lx < ly ? -1 : lx > ly;
}

/* Compare the texts of two interpreted facts: file, function, line, first line. */
static int cmp_text(const struct ms_capture_builder *b, uint32_t fx, uint32_t fy)
{
	const struct fact *x = &b->facts[fx], *y = &b->facts[fy];
	const struct ms_cap_line *lx = x->n_lines ? &b->lines[x->first_line] : NULL;
	const struct ms_cap_line *ly = y->n_lines ? &b->lines[y->first_line] : NULL;
	const struct ms_cap_function *gx = lx ? &b->functions[lx->function] : NULL;
	const struct ms_cap_function *gy = ly ? &b->functions[ly->function] : NULL;
	int c;

	if (!gx != !gy)
		return gx ? 1 : -1;
	if (gx && (c = cmp_bytes(b, gx->file, gy->file)))
		return c;
	if ((c = cmp_bytes(b, x->name, y->name)))
		return c;
	if (gx && (c = cmp_bytes(b, gx->name, gy->name)))
		return c;
	if (lx && lx->line != ly->line)
		return lx->line < ly->line ? -1 : 1;
	if (gx && gx->start_line != gy->start_line)
		return gx->start_line < gy->start_line ? -1 : 1;
	return 0;
}

static int cmp_text_entries(const void *a, const void *c, void *ctx)
{
	const struct ms_capture_builder *b = ctx;
	const struct text_entry *x = a, *y = c;
	int r;

	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	/* a frame the stream gave no text goes after those it did */
	if ((x->fact == MS_INDEX_EMPTY) != (y->fact == MS_INDEX_EMPTY))
		return x->fact == MS_INDEX_EMPTY ? 1 : -1;
	if (x->fact != MS_INDEX_EMPTY && (r = cmp_text(b, x->fact, y->fact)))
		return r;
	return x->address < y->address ? -1 : x->address > y->address;
}

/*
 * Key the frames of interpreted modules by their text (capture.h:
 * ms_cap_frame.address): every (module, address) of the stream, sorted
 * by its fact's file, function, line and first line, gets its rank in its
 * module from 1, into text_key, so the keys the stream gave (ms-unwind's,
 * or another capture's) leave no trace. Two addresses of one text (a
 * stream that broke the rule that each text has one key) stay two keys,
 * a problem; so does a frame the stream gave no text, keyed after the
 * others by its address. A frame of such a module without
 * MS_FRAME_NO_ADDRESS fails the builder. Runs before the builder's own
 * problems become rows.
 */
static int key_interpreted(struct ms_capture_builder *b)
{
	struct text_entry *e;
	uint32_t n = 0, i, j;
	uint64_t rank = 0;
	char msg[200];

	for (i = 0; i < b->n_frames; i++) {
		if (!frame_interpreted(b, i))
			continue;
		if (!(b->frames[i].flags & MS_FRAME_NO_ADDRESS)) {
			snprintf(msg, sizeof(msg), "a frame of interpreted module %u (key %" PRIu64
				 ") lacks the flag no-address: interpreted frames are keyed by "
				 "their text, never an address", b->modules[b->frames[i].module].sid,
				 b->frames[i].address);
			return fail(b, msg);
		}
		n++;
	}
	if (!n)
		return 0;
	b->text_key = calloc(b->n_frames, sizeof(*b->text_key));
	e = malloc((size_t)n * sizeof(*e));
	if (!b->text_key || !e) {
		free(e);
		return fail(b, "out of memory");
	}
	for (i = j = 0; i < b->n_frames; i++) {
		const struct ms_cap_frame *f = &b->frames[i];
		struct frame_key k = { f->module, 0, f->address };

		if (!frame_interpreted(b, i))
			continue;
		e[j].module = f->module;
		e[j].address = f->address;
		e[j].fact = ms_index_find(&b->fact_ix, fact_hash(f->module, f->address), fact_eq, b,
					  &k);
		e[j].frame = i;
		j++;
	}
	qsort_r(e, n, sizeof(*e), cmp_text_entries, b);
	for (i = 0; i < n; i++) {
		/* frames of one address (other flags) are neighbours: one key */
		if (i && e[i].module == e[i - 1].module && e[i].address == e[i - 1].address) {
			b->text_key[e[i].frame] = rank;
			continue;
		}
		if (i && e[i].module != e[i - 1].module)
			rank = 0;
		rank++;
		b->text_key[e[i].frame] = rank;
		if (e[i].fact == MS_INDEX_EMPTY)
			own(b, OWN_INTERPRETED_NO_TEXT, "interpreted module %u key %" PRIu64 " has "
			    "no frame record: keyed after the frames with text",
			    b->modules[e[i].module].sid, e[i].address);
		else if (i && e[i].module == e[i - 1].module && e[i - 1].fact != MS_INDEX_EMPTY &&
			 !cmp_text(b, e[i - 1].fact, e[i].fact))
			own(b, OWN_INTERPRETED_TEXT_REPEATED, "interpreted module %u keys %" PRIu64
			    " and %" PRIu64 " have one text (\"%s\"): they stay two frames",
			    b->modules[e[i].module].sid, e[i - 1].address, e[i].address,
			    str_at(b, b->facts[e[i].fact].name));
	}
	free(e);
	return 0;
}

/* Number frames by (module, address, flags) and fill in their facts. */
static int seal_frames(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t *order = alloc_ids(b, b->n_frames), *new_id = alloc_ids(b, b->n_frames), i;
	uint32_t *fact_of = alloc_ids(b, b->n_frames);
	struct ms_cap_frame *frames = malloc((size_t)(b->n_frames ? b->n_frames : 1) * sizeof(*frames));
	int ret;

	if (!order || !new_id || !frames || !fact_of) {
		free(order);
		free(new_id);
		free(frames);
		free(fact_of);
		return fail(b, "out of memory");
	}
	for (i = 0; i < b->n_frames; i++) {
		struct ms_cap_frame *f = &b->frames[i];
		struct frame_key k = { f->module, 0, f->address };
		uint32_t e = ms_index_find(&b->fact_ix, fact_hash(f->module, f->address),
					   fact_eq, b, &k);

		if (e != MS_INDEX_EMPTY) {
			f->name = b->facts[e].name;
			f->symbol_start = b->facts[e].symbol_start;
			f->reason = b->facts[e].reason;
		}
		new_id[i] = e;	/* the fact, until the frames are sorted */
		order[i] = i;
		if (b->text_key && b->text_key[i])
			f->address = b->text_key[i];
	}
	qsort_r(order, b->n_frames, sizeof(*order), cmp_frames, b->frames);
	for (i = 0; i < b->n_frames; i++) {
		fact_of[i] = new_id[order[i]];
		frames[i] = b->frames[order[i]];
		frames[i].first_line = frames[i].n_lines = 0;
	}
	for (i = 0; i < b->n_frames; i++)
		new_id[order[i]] = i;
	for (i = 0; i < b->n_stacks; i++)
		b->stacks[i].frame = new_id[b->stacks[i].frame];
	for (size_t k = 0; k < b->n_path_frames; k++)
		b->path_frames[k] = new_id[b->path_frames[k]];
	free(order);
	free(new_id);
	cap->frames = ms_capture_keep(cap, frames);
	cap->n_frames = b->n_frames;
	ret = seal_lines(b, cap, fact_of);
	free(fact_of);
	return ret;
}

static int cmp_functions(const void *x, const void *y, void *ctx)
{
	const struct ms_cap_function *functions = ctx;
	const struct ms_cap_function *a = &functions[*(const uint32_t *)x];
	const struct ms_cap_function *c = &functions[*(const uint32_t *)y];

	CMP_FIELD(a, c, name);
	CMP_FIELD(a, c, system_name);
	CMP_FIELD(a, c, file);
	CMP_FIELD(a, c, start_line);
	return 0;
}

/*
 * The functions some line uses, sorted by their strings (whose ids are in
 * byte order by now), then start line; lines renumbered to match.
 */
static int seal_functions(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t n = 0, *order = alloc_ids(b, b->n_functions), *new_id = alloc_ids(b, b->n_functions), i;
	struct ms_cap_function *functions;

	if (!order || !new_id) {
		free(order);
		free(new_id);
		return fail(b, "out of memory");
	}
	for (i = 0; i < b->n_functions; i++)
		if (b->function_used[i])
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), cmp_functions, b->functions);
	functions = malloc((size_t)(n ? n : 1) * sizeof(*functions));
	if (!functions) {
		free(order);
		free(new_id);
		return fail(b, "out of memory");
	}
	for (i = 0; i < n; i++) {
		new_id[order[i]] = i;
		functions[i] = b->functions[order[i]];
	}
	for (i = 0; i < cap->n_lines; i++)
		cap->lines[i].function = new_id[cap->lines[i].function];
	free(order);
	free(new_id);
	cap->functions = ms_capture_keep(cap, functions);
	cap->n_functions = n;
	return 0;
}

/*
 * Rows of stack_import() beside nodes made otherwise (stack, stack_def):
 * their nodes are made as stack_count() makes them, before the indexes
 * go. Importers never mix; this keeps a mixed builder right.
 */
static int intern_paths(struct ms_capture_builder *b)
{
	for (uint32_t r = 0; r < b->n_paths; r++) {
		const struct path *p = &b->paths[r];
		uint32_t node = MS_NONE;
		bool fresh = false;

		for (uint32_t k = 0; k < p->n; k++) {
			node = stack_get(b, node, b->path_frames[p->first + k], &fresh);
			if (node == MS_NONE)
				return -1;
		}
		b->samples[p->sample].stack = node;
	}
	free(b->paths);
	free(b->path_frames);
	b->paths = NULL;
	b->path_frames = NULL;
	b->n_paths = b->alloc_paths = 0;
	b->n_path_frames = b->alloc_path_frames = 0;
	return 0;
}

/*
 * The stack nodes of an import, every row of stack_import() at once, in
 * the order seal_stacks() gives (depth by depth, each depth by parent's
 * new id and frame): depth by depth, the rows that reach it are sorted
 * (radix) on (their node at the depth above, their frame there), and each
 * distinct key is the next node. No node index is built: for 7 million
 * frames of 300,000 random stacks, hashing each into one took 40 % of the
 * import and 16 bytes a node. Frames are renumbered by now.
 */
static int seal_paths(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t rows = b->n_paths, n_active = 0, d, r, i, m;
	size_t bound = b->n_path_frames < ROWS_MAX ? b->n_path_frames : ROWS_MAX, n = 0;
	uint32_t *cur = alloc_ids(b, rows), *active = alloc_ids(b, rows);
	struct ms_rkey *keys = malloc((size_t)(rows ? rows : 1) * sizeof(*keys));
	struct ms_rkey *tmp = malloc((size_t)(rows ? rows : 1) * sizeof(*tmp)), *sorted;
	struct ms_cap_stack *stacks = malloc((bound ? bound : 1) * sizeof(*stacks)), *p;
	int ret = -1;

	if (!cur || !active || !keys || !tmp || !stacks) {
		fail(b, "out of memory");
		goto out;
	}
	for (r = 0; r < rows; r++) {
		cur[r] = MS_NONE;
		active[n_active++] = r;		/* every path has a frame */
	}
	for (d = 1; n_active; d++) {
		for (i = 0; i < n_active; i++) {
			r = active[i];
			keys[i].key = (uint64_t)cur[r] << 32 | b->path_frames[b->paths[r].first + d - 1];
			keys[i].pos = r;
			keys[i].aux = 0;
		}
		sorted = ms_radix_sort(keys, tmp, n_active);
		for (i = 0; i < n_active; i++) {
			if (!i || sorted[i].key != sorted[i - 1].key) {
				if (n == bound) {
					fail(b, "a table is full (2^32-1 rows)");
					goto out;
				}
				stacks[n].parent = (uint32_t)(sorted[i].key >> 32);
				stacks[n].frame = (uint32_t)sorted[i].key;
				stacks[n].depth = d;
				n++;
			}
			cur[sorted[i].pos] = (uint32_t)(n - 1);
		}
		/* the rows deeper than d go on */
		for (i = m = 0; i < n_active; i++)
			if (b->paths[active[i]].n > d)
				active[m++] = active[i];
		n_active = m;
	}
	for (r = 0; r < rows; r++)
		b->samples[b->paths[r].sample].stack = cur[r];
	/* nodes are at most the frames: give back what no node took */
	p = realloc(stacks, (n ? n : 1) * sizeof(*stacks));
	if (p)
		stacks = p;
	cap->stacks = ms_capture_keep(cap, stacks);
	cap->n_stacks = (uint32_t)n;
	stacks = NULL;
	ret = 0;
out:
	free(cur);
	free(active);
	free(keys);
	free(tmp);
	free(stacks);
	return ret;
}

/*
 * Number stack nodes depth by depth, each depth sorted by (parent's new
 * id, frame): the numbering depends on the tree, not on the order in which
 * samples arrived. Samples are renumbered to match.
 *
 * A counting sort by depth, then one radix sort per depth on the key
 * (parent's new id, frame), unique within a depth, whose sorted keys are
 * the new rows themselves, written in order: qsort_r with compare
 * callbacks took 40 % of importing 7 million nodes, and moving the rows
 * in place (one cache miss after another) a quarter of what was left.
 * Only one depth's keys exist at a time.
 */
static int seal_stacks(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t n = b->n_stacks, max_depth = 0, widest = 0, i, d;
	uint32_t *order = NULL, *new_id = NULL, *at = NULL;
	struct ms_rkey *keys = NULL, *tmp = NULL, *sorted;
	const struct ms_cap_stack *old = b->stacks;
	struct ms_cap_stack *stacks = NULL;
	int ret = -1;

	for (i = 0; i < n; i++)
		if (old[i].depth > max_depth)
			max_depth = old[i].depth;
	/* at[d]: first the count of depth d, then where it starts, then where it ends */
	at = calloc((size_t)max_depth + 2, sizeof(*at));
	order = alloc_ids(b, n);
	new_id = alloc_ids(b, n);
	stacks = malloc((size_t)(n ? n : 1) * sizeof(*stacks));
	if (!at || !order || !new_id || !stacks)
		goto out;
	for (i = 0; i < n; i++)
		at[old[i].depth]++;
	for (d = 0; d <= max_depth; d++)
		if (at[d] > widest)
			widest = at[d];
	for (d = 0; d <= max_depth; d++)
		at[d + 1] += at[d];
	for (d = max_depth + 1; d > 0; d--)
		at[d] = at[d - 1];
	at[0] = 0;
	for (i = 0; i < n; i++)
		order[at[old[i].depth]++] = i;
	keys = malloc((size_t)(widest ? widest : 1) * sizeof(*keys));
	tmp = malloc((size_t)(widest ? widest : 1) * sizeof(*tmp));
	if (!keys || !tmp)
		goto out;
	for (d = 1; d <= max_depth; d++) {
		uint32_t first = at[d - 1], len = at[d] - first;

		for (i = 0; i < len; i++) {
			const struct ms_cap_stack *s = &old[order[first + i]];
			/* MS_NONE (the roots') sorts after every id, as the compare did */
			uint64_t parent = s->parent == MS_NONE ? MS_NONE : new_id[s->parent];

			keys[i].key = parent << 32 | s->frame;
			keys[i].pos = order[first + i];
			keys[i].aux = 0;
		}
		sorted = ms_radix_sort(keys, tmp, len);
		for (i = 0; i < len; i++) {
			new_id[sorted[i].pos] = first + i;
			stacks[first + i].parent = (uint32_t)(sorted[i].key >> 32);
			stacks[first + i].frame = (uint32_t)sorted[i].key;
			stacks[first + i].depth = d;
		}
	}
	for (i = 0; i < b->n_samples; i++)
		if (b->samples[i].stack != MS_NONE)
			b->samples[i].stack = new_id[b->samples[i].stack];
	for (i = 0; i < b->n_intervals; i++)
		if (b->intervals[i].stack != MS_NONE)
			b->intervals[i].stack = new_id[b->intervals[i].stack];
	for (i = 0; i < b->n_waits; i++)
		if (b->waits[i].stack != MS_NONE)
			b->waits[i].stack = new_id[b->waits[i].stack];
	free(b->stacks);
	b->stacks = NULL;
	b->n_stacks = b->alloc_stacks = 0;
	cap->stacks = ms_capture_keep(cap, stacks);
	cap->n_stacks = n;
	stacks = NULL;
	ret = 0;
out:
	if (ret < 0 && !b->failed)
		fail(b, "out of memory");
	free(at);
	free(order);
	free(new_id);
	free(keys);
	free(tmp);
	free(stacks);
	return ret;
}

/* Threads by (pid, tid); samples renumbered, sorted, and timed. */
static int seal_threads_samples(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t n = b->n_threads, *order = alloc_ids(b, n), *new_id = alloc_ids(b, n), i;
	struct ms_cap_thread *threads = calloc(n ? n : 1, sizeof(*threads));
	bool *seen = calloc(n ? n : 1, sizeof(*seen));

	if (!order || !new_id || !threads || !seen) {
		free(order);
		free(new_id);
		free(threads);
		free(seen);
		return fail(b, "out of memory");
	}
	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_threads, b->threads);
	for (i = 0; i < n; i++) {
		new_id[order[i]] = i;
		threads[i] = b->threads[order[i]];
		threads[i].first_time = threads[i].last_time = 0;
	}
	for (i = 0; i < b->n_samples; i++)
		b->samples[i].thread = new_id[b->samples[i].thread];
	for (i = 0; i < b->n_intervals; i++)
		b->intervals[i].thread = new_id[b->intervals[i].thread];
	for (i = 0; i < b->n_spans; i++)
		b->spans[i].thread = new_id[b->spans[i].thread];
	for (i = 0; i < b->n_tasks; i++)
		if (b->tasks[i].thread != MS_NONE)
			b->tasks[i].thread = new_id[b->tasks[i].thread];
	if (b->n_samples > 1 && !samples_in_order(b->samples, b->n_samples))
		qsort(b->samples, b->n_samples, sizeof(*b->samples), cmp_samples);
	for (i = 0; i < b->n_samples; i++) {
		struct ms_cap_thread *t = &threads[b->samples[i].thread];

		/* Samples are in time order: the first seen is the earliest. */
		if (!seen[b->samples[i].thread]) {
			seen[b->samples[i].thread] = true;
			t->first_time = b->samples[i].time;
		}
		t->last_time = b->samples[i].time;
	}
	if (b->n_samples) {
		cap->start_time = b->samples[0].time;
		cap->end_time = b->samples[b->n_samples - 1].time;
	}
	free(order);
	free(new_id);
	free(seen);
	cap->threads = ms_capture_keep(cap, threads);
	cap->n_threads = n;
	cap->samples = ms_capture_keep(cap, b->samples);
	cap->n_samples = b->n_samples;
	b->samples = NULL;
	/* Counts need a 1.2 reader; without them the file is the 1.1 one it was. */
	for (i = 0; i < cap->n_samples; i++)
		if (cap->samples[i].count != 1) {
			cap->flags |= MS_CAPTURE_WEIGHTED;
			if (cap->minor < MS_CAPTURE_MINOR_WEIGHTED)
				cap->minor = MS_CAPTURE_MINOR_WEIGHTED;
			break;
		}
	return 0;
}

/* By time, then by the order given, so that the last of one time is last. */
static int cmp_duty(const void *x, const void *y, void *ctx)
{
	const struct ms_cap_duty *duty = ctx;
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;

	if (duty[a].time != duty[c].time)
		return duty[a].time < duty[c].time ? -1 : 1;
	return a < c ? -1 : a > c;
}

/*
 * Duty rows by time, one per time: of several at one time the last given
 * is the one in force, the others never were (a problem says so). Rows
 * make the capture 1.3 with the flag that an older reader refuses.
 */
static int seal_duty(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t *order, i, n = 0;
	struct ms_cap_duty *duty;

	if (!b->n_duty)
		return 0;
	order = alloc_ids(b, b->n_duty);
	duty = malloc((size_t)b->n_duty * sizeof(*duty));
	if (!order || !duty) {
		free(order);
		free(duty);
		return fail(b, "out of memory");
	}
	for (i = 0; i < b->n_duty; i++)
		order[i] = i;
	qsort_r(order, b->n_duty, sizeof(*order), cmp_duty, b->duty);
	for (i = 0; i < b->n_duty; i++) {
		const struct ms_cap_duty *d = &b->duty[order[i]];

		if (n && duty[n - 1].time == d->time) {
			own(b, OWN_DUTY_SAME_TIME, "duty records of %" PRIu32 " and %" PRIu32
			    " millionths at one time (%" PRIu64 "): the later was kept",
			    duty[n - 1].duty_ppm, d->duty_ppm, d->time);
			duty[n - 1] = *d;
			continue;
		}
		duty[n++] = *d;
	}
	free(order);
	cap->duty = ms_capture_keep(cap, duty);
	cap->n_duty = n;
	cap->flags |= MS_CAPTURE_DUTY;
	if (cap->minor < MS_CAPTURE_MINOR_DUTY)
		cap->minor = MS_CAPTURE_MINOR_DUTY;
	return 0;
}

/*
 * Loss rows by (time, source), one per pair, the earliest
 * MS_CAPTURE_LOSSES_MAX pairs; the losses of the others are in the totals
 * alone, and a problem says how many and from when. Rows make the capture
 * 1.4, which needs no flag.
 */
static int seal_losses(struct ms_capture_builder *b, struct ms_capture *cap)
{
	compact_losses(b);
	if (b->losses_cut) {
		b->own[OWN_LOSS_ROWS_FULL].count = b->losses_cut;
		snprintf(b->own[OWN_LOSS_ROWS_FULL].detail, sizeof(b->own[OWN_LOSS_ROWS_FULL].detail),
			 "records were lost at more than %u (time, source) pairs: those lost from "
			 "time %" PRIu64 " on have no loss row, only their totals",
			 MS_CAPTURE_LOSSES_MAX, b->loss_first_cut.time);
	}
	if (!b->n_losses)
		return 0;
	cap->losses = ms_capture_keep(cap, b->losses);
	cap->n_losses = b->n_losses;
	b->losses = NULL;
	b->n_losses = b->alloc_losses = 0;
	if (cap->minor < MS_CAPTURE_MINOR_LOSSES)
		cap->minor = MS_CAPTURE_MINOR_LOSSES;
	return 0;
}

static int cmp_evidence(const void *x, const void *y, void *ctx)
{
	const struct ms_cap_evidence *ev = ctx;
	const struct ms_cap_evidence *a = &ev[*(const uint32_t *)x], *c = &ev[*(const uint32_t *)y];

	CMP_FIELD(a, c, cause);
	CMP_FIELD(a, c, sources);
	CMP_FIELD(a, c, state);
	CMP_FIELD(a, c, preempt);
	return 0;
}

/* The time an interval sorts by: its start, or its end when the start is missing. */
static uint64_t interval_key(const struct ms_cap_interval *r)
{
	return r->start ? r->start : r->end;
}

static int cmp_intervals(const void *x, const void *y)
{
	const struct ms_cap_interval *a = x, *c = y;
	uint64_t ka = interval_key(a), kc = interval_key(c);

	if (ka != kc)
		return ka < kc ? -1 : 1;
	CMP_FIELD(a, c, thread);
	CMP_FIELD(a, c, end);
	CMP_FIELD(a, c, stack);
	/* Beyond the documented order, so equal keys still sort one way. */
	CMP_FIELD(a, c, start);
	CMP_FIELD(a, c, missing);
	CMP_FIELD(a, c, cpu);
	CMP_FIELD(a, c, stack_end);
	CMP_FIELD(a, c, evidence);
	return 0;
}

/*
 * Evidence rows sorted by (cause, sources, state, preempt), intervals by
 * (start or else end, thread, end, stack, then every other field), once
 * threads and stacks have their final numbers. With MS_CAPTURE_OFF_CPU
 * the capture is 1.5, whose sections an older reader skips.
 */
static int seal_intervals(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t n = b->n_evidence, *order, *new_id, i;
	struct ms_cap_evidence *evidence;

	if (!(b->flags & MS_CAPTURE_OFF_CPU))
		return 0;
	if (cap->minor < MS_CAPTURE_MINOR_OFF_CPU)
		cap->minor = MS_CAPTURE_MINOR_OFF_CPU;
	order = alloc_ids(b, n);
	new_id = alloc_ids(b, n);
	evidence = malloc((size_t)(n ? n : 1) * sizeof(*evidence));
	if (!order || !new_id || !evidence) {
		free(order);
		free(new_id);
		free(evidence);
		return fail(b, "out of memory");
	}
	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_evidence, b->evidence);
	for (i = 0; i < n; i++) {
		new_id[order[i]] = i;
		evidence[i] = b->evidence[order[i]];
	}
	for (i = 0; i < b->n_intervals; i++)
		b->intervals[i].evidence = new_id[b->intervals[i].evidence];
	free(order);
	free(new_id);
	if (b->n_intervals > 1)
		qsort(b->intervals, b->n_intervals, sizeof(*b->intervals), cmp_intervals);
	cap->evidence = ms_capture_keep(cap, evidence);
	cap->n_evidence = n;
	cap->intervals = b->intervals ? ms_capture_keep(cap, b->intervals) : NULL;
	cap->n_intervals = b->n_intervals;
	b->intervals = NULL;
	b->n_intervals = b->alloc_intervals = 0;
	return 0;
}

/*
 * A capture with off-CPU facts but no info "off-cpu" (a stream that did
 * not say what recorded the switches) gets "unknown" there, so that its
 * dump, which carries the flag through that key, captures again to the
 * same file.
 */
static int seal_off_cpu_info(struct ms_capture_builder *b)
{
	uint32_t k, text;

	if (!(b->flags & MS_CAPTURE_OFF_CPU))
		return 0;
	k = intern_c(b, MS_CAPTURE_INFO_OFF_CPU);
	if (k == MS_NONE)
		return -1;
	if (ms_index_find(&b->info_ix, ms_hash_u64(k), info_eq, b, &k) != MS_INDEX_EMPTY)
		return 0;
	text = intern_c(b, "unknown");
	return text == MS_NONE ? -1 : info_set(b, MS_CAPTURE_INFO_OFF_CPU, text, 0);
}

#define MARK(id) (used[(id)] = true)
#define REMAP(field) ((field) = new_id[(field)])

/*
 * Keep only the strings some row uses, sorted by their bytes, so that the
 * table depends on what the capture says, not on what the stream said
 * first (an overwritten thread name, a replaced info value).
 */
static int seal_strings(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t n = b->n_strs, *order = alloc_ids(b, n), *new_id = alloc_ids(b, n), n_used = 0, i;
	bool *used = calloc(n, sizeof(*used));
	size_t blob_len = 0;
	const char **ptrs;
	char *blob;

	if (!order || !new_id || !used) {
		free(order);
		free(new_id);
		free(used);
		return fail(b, "out of memory");
	}
	MARK(0);
	for (i = 0; i < b->n_info; i++) {
		MARK(b->info[i].key);
		MARK(b->info[i].value_text);
	}
	for (i = 0; i < b->n_modules; i++)
		MARK(b->modules[i].m.path);
	for (i = 0; i < cap->n_frames; i++)
		MARK(cap->frames[i].name);
	for (i = 0; i < b->n_functions; i++)
		if (b->function_used[i]) {
			MARK(b->functions[i].name);
			MARK(b->functions[i].system_name);
			MARK(b->functions[i].file);
		}
	for (i = 0; i < cap->n_threads; i++)
		MARK(cap->threads[i].name);
	for (i = 0; i < b->n_perf_maps; i++)
		MARK(b->perf_maps[i].path);
	for (i = 0; i < b->n_spans; i++) {
		MARK(b->spans[i].key);
		MARK(b->spans[i].value);
	}
	for (i = 0; i < b->n_tasks; i++)
		MARK(b->tasks[i].kind);
	for (i = 0; i < b->n_waits; i++)
		if (b->waits[i].reason != MS_NONE)
			MARK(b->waits[i].reason);
	for (i = 0; i < b->n_py; i++) {
		MARK(b->py[i].path);
		MARK(b->py[i].engine);
		MARK(b->py[i].reason);
	}
	for (i = 0; i < b->n_problems; i++) {
		MARK(b->problems[i].stage);
		MARK(b->problems[i].code);
		MARK(b->problems[i].detail);
	}
	for (i = 0; i < n; i++)
		if (used[i]) {
			order[n_used++] = i;
			blob_len += b->strs[i].len + 1;
		}
	qsort_r(order, n_used, sizeof(*order), cmp_strings, b);
	ptrs = malloc(n_used * sizeof(*ptrs));
	blob = malloc(blob_len);
	if (!ptrs || !blob) {
		free(order);
		free(new_id);
		free(used);
		free(ptrs);
		free(blob);
		return fail(b, "out of memory");
	}
	blob_len = 0;
	for (i = 0; i < n_used; i++) {
		const struct strref *s = &b->strs[order[i]];

		new_id[order[i]] = i;
		memcpy(blob + blob_len, b->pool + s->off, s->len + 1);
		ptrs[i] = blob + blob_len;
		blob_len += s->len + 1;
	}
	for (i = 0; i < b->n_info; i++) {
		REMAP(b->info[i].key);
		REMAP(b->info[i].value_text);
	}
	for (i = 0; i < b->n_modules; i++)
		REMAP(b->modules[i].m.path);
	for (i = 0; i < cap->n_frames; i++)
		REMAP(cap->frames[i].name);
	for (i = 0; i < b->n_functions; i++)
		if (b->function_used[i]) {
			REMAP(b->functions[i].name);
			REMAP(b->functions[i].system_name);
			REMAP(b->functions[i].file);
		}
	for (i = 0; i < cap->n_threads; i++)
		REMAP(cap->threads[i].name);
	for (i = 0; i < b->n_perf_maps; i++)
		REMAP(b->perf_maps[i].path);
	for (i = 0; i < b->n_spans; i++) {
		REMAP(b->spans[i].key);
		REMAP(b->spans[i].value);
	}
	for (i = 0; i < b->n_tasks; i++)
		REMAP(b->tasks[i].kind);
	for (i = 0; i < b->n_waits; i++)
		if (b->waits[i].reason != MS_NONE)
			REMAP(b->waits[i].reason);
	for (i = 0; i < b->n_py; i++) {
		REMAP(b->py[i].path);
		REMAP(b->py[i].engine);
		REMAP(b->py[i].reason);
	}
	for (i = 0; i < b->n_problems; i++) {
		REMAP(b->problems[i].stage);
		REMAP(b->problems[i].code);
		REMAP(b->problems[i].detail);
	}
	free(order);
	free(new_id);
	free(used);
	cap->strings = ms_capture_keep(cap, ptrs);
	ms_capture_keep(cap, blob);
	cap->n_strings = n_used;
	return 0;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;

	return a < c ? -1 : a > c;
}

/* Whether info "symbolize" is "deferred" (strings are the capture's by now). */
static bool deferred(const struct ms_capture_builder *b, const struct ms_capture *cap)
{
	uint32_t i;

	for (i = 0; i < b->n_info; i++)
		if (!strcmp(cap->strings[b->info[i].key], "symbolize"))
			return !strcmp(cap->strings[b->info[i].value_text], "deferred");
	return false;
}

/*
 * The status of module m from its frames frames[first..end) (frames are
 * sorted by module): capture.h gives the rules. reasons is scratch room
 * for end - first reasons.
 */
/* The value most of reasons[0..n) have, the lowest on a tie; sorts them. */
static uint32_t most_common(uint32_t *reasons, uint32_t n)
{
	uint32_t i, run, best = 0, best_n = 0;

	qsort(reasons, n, sizeof(*reasons), cmp_u32);
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && reasons[i + run] == reasons[i]; run++)
			;
		if (run > best_n) {
			best_n = run;
			best = reasons[i];
		}
	}
	return best;
}

/*
 * Whether a frame reason speaks of the module's files as a whole (no debug
 * file, a file that is not the module, ...) rather than of one address (no
 * symbol there, an address the debug information does not describe).
 */
static bool module_wide(uint32_t reason)
{
	switch (reason) {
	case MS_SYM_NO_FILE:
	case MS_SYM_IDENTITY:
	case MS_SYM_BAD_ELF:
	case MS_SYM_NO_DEBUG:
	case MS_SYM_DEBUG_MISMATCH:
	case MS_SYM_BAD_DWARF:
		return true;
	default:
		return false;
	}
}

static void module_status(struct ms_cap_module *m, const struct ms_cap_frame *frames,
			  uint32_t first, uint32_t end, bool is_deferred, uint32_t *reasons)
{
	uint32_t i, n = 0;
	bool named = false;

	m->status = MS_CAP_MODULE_OK;
	m->status_reason = 0;
	for (i = first; i < end; i++)
		if (frames[i].reason == MS_CAP_UNSYMBOLIZED) {
			m->status = !is_deferred ? MS_CAP_MODULE_NOT_SYMBOLIZED :
				    m->build_id_len ? MS_CAP_MODULE_DEFERRED : MS_CAP_MODULE_NO_BUILD_ID;
			return;
		}
	/* What counts: frames without a name, and reasons about the whole module. */
	for (i = first; i < end; i++) {
		if (frames[i].name || frames[i].n_lines) {
			named = true;
			if (!module_wide(frames[i].reason))
				continue;
		}
		reasons[n++] = frames[i].reason;
	}
	if (!n)
		return;
	m->status = named ? MS_CAP_MODULE_PARTIAL : MS_CAP_MODULE_FAILED;
	m->status_reason = most_common(reasons, n);
	/* Symbolized after the recording and failed: the missing build id is why. */
	if (m->status == MS_CAP_MODULE_FAILED && is_deferred && !m->build_id_len)
		m->status = MS_CAP_MODULE_NO_BUILD_ID;
}

static int seal_modules(struct ms_capture_builder *b, struct ms_capture *cap)
{
	struct ms_cap_module *modules = malloc((size_t)(b->n_modules ? b->n_modules : 1) *
					       sizeof(*modules));
	uint32_t *reasons = alloc_ids(b, cap->n_frames);
	bool is_deferred = deferred(b, cap);
	uint32_t i, f = 0, end;

	if (!modules || !reasons) {
		free(modules);
		free(reasons);
		return fail(b, "out of memory");
	}
	for (i = 0; i < b->n_modules; i++)
		modules[i] = b->modules[i].m;
	/* Frames are sorted by module: each module's frames are one run. */
	while (f < cap->n_frames && cap->frames[f].module != MS_NONE) {
		for (end = f; end < cap->n_frames && cap->frames[end].module == cap->frames[f].module; end++)
			;
		module_status(&modules[cap->frames[f].module], cap->frames, f, end, is_deferred,
			      reasons);
		f = end;
	}
	free(reasons);
	cap->modules = ms_capture_keep(cap, modules);
	cap->n_modules = b->n_modules;
	return 0;
}

static int cmp_perf_maps(const void *x, const void *y)
{
	uint32_t a = ((const struct ms_cap_perf_map *)x)->pid;
	uint32_t c = ((const struct ms_cap_perf_map *)y)->pid;

	return a < c ? -1 : a > c;
}

/* Perf-map rows by pid; they, or a perf-map or jit-object module, make the capture 1.6. */
static void seal_perf_maps(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t i;

	if (b->n_perf_maps) {
		qsort(b->perf_maps, b->n_perf_maps, sizeof(*b->perf_maps), cmp_perf_maps);
		cap->perf_maps = ms_capture_keep(cap, b->perf_maps);
		cap->n_perf_maps = b->n_perf_maps;
		b->perf_maps = NULL;
		b->n_perf_maps = b->alloc_perf_maps = 0;
	}
	for (i = 0; i < cap->n_modules; i++)
		if (ms_module_kind_has_base(cap->modules[i].kind))
			break;
	if ((cap->n_perf_maps || i < cap->n_modules) && cap->minor < MS_CAPTURE_MINOR_JIT)
		cap->minor = MS_CAPTURE_MINOR_JIT;
}

static int cmp_py(const void *x, const void *y)
{
	const struct ms_cap_py_process *a = x, *c = y;

	CMP_FIELD(a, c, pid);
	CMP_FIELD(a, c, time);
	CMP_FIELD(a, c, status);
	CMP_FIELD(a, c, version_hex);
	CMP_FIELD(a, c, source);
	CMP_FIELD(a, c, path);
	CMP_FIELD(a, c, engine);
	CMP_FIELD(a, c, reason);
	return 0;
}

/*
 * Python process rows sorted (string ids are in byte order by now), one
 * of each; they, or any Python fact (ms_capture_has_python()), make the
 * capture 1.7.
 */
static void seal_py(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t i, n = 0;

	if (b->n_py) {
		qsort(b->py, b->n_py, sizeof(*b->py), cmp_py);
		for (i = 0; i < b->n_py; i++)
			if (!n || cmp_py(&b->py[n - 1], &b->py[i]))
				b->py[n++] = b->py[i];
		cap->py_processes = ms_capture_keep(cap, b->py);
		cap->n_py_processes = n;
		b->py = NULL;
		b->n_py = b->alloc_py = 0;
	}
	if (ms_capture_has_python(cap) && cap->minor < MS_CAPTURE_MINOR_PYTHON)
		cap->minor = MS_CAPTURE_MINOR_PYTHON;
}

static int cmp_spans(const void *x, const void *y)
{
	const struct ms_cap_label_span *a = x, *c = y;

	CMP_FIELD(a, c, thread);
	CMP_FIELD(a, c, key);
	CMP_FIELD(a, c, start);
	CMP_FIELD(a, c, end);
	CMP_FIELD(a, c, value);
	CMP_FIELD(a, c, samples);
	return 0;
}

/*
 * Label spans that overlap an earlier one of their thread and key (by
 * start) go, counted: a sample has at most one value per key. Runs
 * before the builder's own problems become rows, on the builder's ids.
 */
static void prune_spans(struct ms_capture_builder *b)
{
	uint32_t i, n = 0;

	if (b->n_spans > 1)
		qsort(b->spans, b->n_spans, sizeof(*b->spans), cmp_spans);
	for (i = 0; i < b->n_spans; i++) {
		const struct ms_cap_label_span *x = &b->spans[i], *p = n ? &b->spans[n - 1] : NULL;

		if (p && p->thread == x->thread && p->key == x->key && x->start <= p->end) {
			own(b, OWN_LABEL_SPAN_OVERLAPS, "a label span \"%s\" of thread %" PRIu32 "/%"
			    PRIu32 " from %" PRIu64 " to %" PRIu64 " overlaps the one before it, "
			    "which ends at %" PRIu64 ": left out", str_at(b, x->key),
			    b->threads[x->thread].pid, b->threads[x->thread].tid, x->start, x->end,
			    p->end);
			continue;
		}
		b->spans[n++] = *x;
	}
	b->n_spans = n;
}

/*
 * Label spans sorted by (thread, key, start) once threads and strings
 * have their final numbers (string ids in byte order); any makes the
 * capture 1.7.
 */
static void seal_spans(struct ms_capture_builder *b, struct ms_capture *cap)
{
	if (!b->n_spans)
		return;
	if (b->n_spans > 1)
		qsort(b->spans, b->n_spans, sizeof(*b->spans), cmp_spans);
	cap->label_spans = ms_capture_keep(cap, b->spans);
	cap->n_label_spans = b->n_spans;
	b->spans = NULL;
	b->n_spans = b->alloc_spans = 0;
	if (cap->minor < MS_CAPTURE_MINOR_PYTHON)
		cap->minor = MS_CAPTURE_MINOR_PYTHON;
}

static int cmp_waits(const void *x, const void *y)
{
	const struct ms_cap_wait *a = x, *c = y;

	CMP_FIELD(a, c, task);
	CMP_FIELD(a, c, time);
	CMP_FIELD(a, c, stack);
	CMP_FIELD(a, c, reason);
	return 0;
}

/*
 * A task has one wait row a time: a read of a (task, time) that has one
 * goes, counted (its task's reads too), before the builder's own problems
 * become rows, on the builder's ids.
 */
static void prune_waits(struct ms_capture_builder *b)
{
	uint32_t i, n = 0;

	if (b->n_waits > 1)
		qsort(b->waits, b->n_waits, sizeof(*b->waits), cmp_waits);
	for (i = 0; i < b->n_waits; i++) {
		const struct ms_cap_wait *x = &b->waits[i];
		struct ms_cap_task *t = &b->tasks[x->task];

		if (n && b->waits[n - 1].task == x->task && b->waits[n - 1].time == x->time) {
			own(b, OWN_WAIT_SAME_TIME, "a %s of process %" PRIu32 " numbered %" PRIu64
			    " was read whole twice at %" PRIu64 ": the second read left out",
			    str_at(b, t->kind), t->pid, t->id, x->time);
			t->waits--;
			continue;
		}
		b->waits[n++] = *x;
	}
	b->n_waits = n;
}

static int cmp_tasks(const void *x, const void *y, void *ctx)
{
	const struct ms_cap_task *t = ctx, *a = &t[*(const uint32_t *)x], *c = &t[*(const uint32_t *)y];

	CMP_FIELD(a, c, pid);
	CMP_FIELD(a, c, kind);
	CMP_FIELD(a, c, id);
	return 0;
}

/*
 * Tasks sorted by (pid, kind's text, id) once strings have their final
 * numbers (in byte order), waits by (task, time) on the new task ids;
 * any task makes the capture 1.8.
 */
static int seal_tasks(struct ms_capture_builder *b, struct ms_capture *cap)
{
	uint32_t n = b->n_tasks, *order, *new_id, i;
	struct ms_cap_task *tasks;

	if (!n)
		return 0;
	order = alloc_ids(b, n);
	new_id = alloc_ids(b, n);
	tasks = malloc((size_t)n * sizeof(*tasks));
	if (!order || !new_id || !tasks) {
		free(order);
		free(new_id);
		free(tasks);
		return fail(b, "out of memory");
	}
	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_tasks, b->tasks);
	for (i = 0; i < n; i++) {
		new_id[order[i]] = i;
		tasks[i] = b->tasks[order[i]];
	}
	for (i = 0; i < b->n_waits; i++)
		b->waits[i].task = new_id[b->waits[i].task];
	free(order);
	free(new_id);
	if (b->n_waits > 1)
		qsort(b->waits, b->n_waits, sizeof(*b->waits), cmp_waits);
	cap->tasks = ms_capture_keep(cap, tasks);
	cap->n_tasks = n;
	cap->waits = b->waits ? ms_capture_keep(cap, b->waits) : NULL;
	cap->n_waits = b->n_waits;
	b->waits = NULL;
	b->n_waits = b->alloc_waits = 0;
	if (cap->minor < MS_CAPTURE_MINOR_TASKS)
		cap->minor = MS_CAPTURE_MINOR_TASKS;
	return 0;
}

/* Problems the builder counted itself become rows. */
static int seal_own_problems(struct ms_capture_builder *b)
{
	uint32_t i;

	for (i = 0; i < b->n_modules; i++)
		if (!b->modules[i].defined)
			own(b, OWN_UNDEFINED_MODULE,
			    "frames used module id %u but no module record described it",
			    b->modules[i].sid);
	if (b->next_count)
		own(b, OWN_UNUSED_SAMPLE_COUNT, "a sample count of %" PRIu64 " was given after "
		    "the last stack", b->next_count);
	for (i = 0; i < OWN_COUNT; i++)
		if (b->own[i].count &&
		    own_problem(b, own_codes[i], b->own[i].detail, b->own[i].count) < 0)
			return -1;
	return 0;
}

/*
 * Nothing is interned after the builder's own problems are rows, so the
 * indexes go before the tables are sealed (the stack nodes' index is the
 * largest thing the builder holds: 128 MB for 7 million nodes). The fact
 * index stays: seal_frames() looks facts up.
 */
static void release_indexes(struct ms_capture_builder *b)
{
	ms_index_release(&b->str_ix);
	ms_index_release(&b->info_ix);
	ms_index_release(&b->module_ix);
	ms_index_release(&b->frame_ix);
	ms_index_release(&b->function_ix);
	ms_index_release(&b->stack_ix);
	ms_index_release(&b->thread_ix);
	ms_index_release(&b->problem_ix);
	ms_index_release(&b->evidence_ix);
	ms_index_release(&b->perf_map_ix);
	ms_index_release(&b->task_ix);
	free(b->defs);
	b->defs = NULL;
	b->n_defs = b->alloc_defs = 0;
}

struct ms_capture *ms_capture_builder_seal(struct ms_capture_builder *b)
{
	struct ms_capture *cap = NULL;

	if (b->failed)
		goto fail;
	cap = ms_capture_new();
	/*
	 * The intervals still open end first, then duty and losses: each may
	 * be a problem of its own.
	 */
	if (!cap || ms_pairing_end(b->pairing) < 0)
		goto fail;
	if (seal_off_cpu_info(b) < 0 || seal_duty(b, cap) < 0 || seal_losses(b, cap) < 0 ||
	    key_interpreted(b) < 0)
		goto fail;
	prune_spans(b);
	prune_waits(b);
	if (seal_own_problems(b) < 0)
		goto fail;
	if (b->n_paths && b->n_stacks && intern_paths(b) < 0)
		goto fail;
	release_indexes(b);
	cap->flags |= b->flags;
	cap->lost_kernel = b->lost_kernel;
	cap->lost_collector = b->lost_collector;
	cap->throttled = b->throttled;
	cap->target_exit_code = b->target_exit_code;
	if (seal_frames(b, cap) < 0 ||
	    (b->n_paths ? seal_paths(b, cap) : seal_stacks(b, cap)) < 0 ||
	    seal_threads_samples(b, cap) < 0 || seal_intervals(b, cap) < 0 ||
	    seal_strings(b, cap) < 0 ||
	    seal_functions(b, cap) < 0 || seal_modules(b, cap) < 0)
		goto fail;
	seal_perf_maps(b, cap);
	seal_spans(b, cap);
	seal_py(b, cap);
	if (seal_tasks(b, cap) < 0)
		goto fail;
	/* Sorted by key string: the string ids are in string order now. */
	if (b->n_info > 1)
		qsort(b->info, b->n_info, sizeof(*b->info), cmp_info);
	if (b->n_problems > 1)
		qsort(b->problems, b->n_problems, sizeof(*b->problems), cmp_problems);
	cap->info = b->info ? ms_capture_keep(cap, b->info) : NULL;
	cap->n_info = b->n_info;
	b->info = NULL;
	cap->problems = b->problems ? ms_capture_keep(cap, b->problems) : NULL;
	cap->n_problems = b->n_problems;
	b->problems = NULL;
	ms_capture_builder_free(b);
	return cap;
fail:
	ms_capture_free(cap);
	ms_capture_builder_free(b);
	return NULL;
}

/*
 * pprof export: a capture as a gzip-compressed perftools.profiles.Profile.
 *
 * The Profile is streamed: each top-level field (a sample, a location, a
 * string, ...) is packed on its own with protobuf-c into one reused buffer
 * and written through zlib, as protobuf lets a message's fields come one
 * after another. What is held besides the capture is one row per unique
 * (stack, thread) pair and per-module facts.
 *
 * Ids: mapping m + 1 is module m, location f + 1 is frame f, function
 * f + 1 is the capture's function f (frames with a name and no source
 * lines get functions numbered after those). The string table is the
 * capture's strings (string 0 is "" in both) followed by the few this
 * writer adds (sample types, label keys, hex build ids).
 *
 * A stack cut short ends, outermost, in a synthetic frame naming why
 * ("[truncated: stack-copy]", internal.h): a location in no mapping, ids
 * after the frames', with a function of that name, ids after all others.
 * Samples are rows of (stack, thread, cut).
 *
 * A capture with label spans (capture.h: ms_cap_label_span; the GIL)
 * gives each CPU sample a string label per key whose span covers it
 * ("gil": "held"): rows are then (stack, thread, cut, labels), the
 * labels one of at most LABEL_SETS_MAX sets (past it a sample keeps
 * none, and a note says how many), of at most LABEL_KEYS_MAX keys.
 *
 * A capture that recorded off-CPU time (MS_CAPTURE_OFF_CPU) gets a sample
 * type of its own, "off-cpu" in nanoseconds, last: its complete intervals
 * (internal.h: ms_interval_weight()) are samples on their switch-out
 * stacks, rows of (stack, thread, cut, cause) labelled "cause", valued
 * their durations there and 0 in the CPU columns; the CPU samples are 0
 * in it. default_sample_type keeps pprof on the CPU's. Incomplete
 * intervals have no duration and are no samples.
 *
 * A capture with thread snapshots (capture.h: ms_cap_wait, record
 * --python snapshot) gets a sample type "snapshots" (count), last: a
 * sample per (stack, thread) of its wait rows, valued how many there
 * (0 in every other column), as the off-CPU samples are.
 */
#include "config.h"

#include "formats/formats.h"
#include "formats/internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "capture/funcs.h"
#include "capture/labels.h"
#include "capture/weight.h"
#include "pprof/profile.pb-c.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/progress.h"

/* Profile's field numbers (formats/pprof/profile.proto). */
enum {
	F_SAMPLE_TYPE = 1, F_SAMPLE = 2, F_MAPPING = 3, F_LOCATION = 4,
	F_FUNCTION = 5, F_STRING_TABLE = 6, F_TIME_NANOS = 9,
	F_DURATION_NANOS = 10, F_PERIOD_TYPE = 11, F_PERIOD = 12, F_COMMENT = 13,
	F_DEFAULT_SAMPLE_TYPE = 14,
};

/* The sample type of off-CPU time (nanoseconds), beside the samples'. */
#define OFF_CPU_TYPE "off-cpu"
/* The sample type of thread snapshots (count), after every other. */
#define SNAPSHOTS_TYPE "snapshots"
#define WIRE_VARINT 0
#define WIRE_LEN 2

#define GZ_CHUNK (256 * 1024)

/* Label keys written per sample, and distinct sets of their values. */
#define LABEL_KEYS_MAX 4
#define LABEL_SETS_MAX 64
/* A row's third key: the cut (0 none, else cut + 1) and the label set. */
#define CUT_SLOTS (MS_CUTS_MAX + 2)

struct pw {
	FILE *out;
	const struct ms_capture *cap;
	z_stream z;
	bool z_open;
	unsigned char in[GZ_CHUNK];
	size_t in_len;
	unsigned char zout[GZ_CHUNK];
	int failed;

	unsigned char *pack;	/* reused buffer for one packed message */
	size_t pack_alloc;

	/* strings this writer adds after the capture's */
	const char **extra;
	uint32_t n_extra, alloc_extra;
	char (*build_id_hex)[2 * 20 + 1];	/* per module */
	/* frames without a name: the function of each, and the labels named so */
	uint32_t *unnamed_func;		/* per frame; 0: none */
	struct label_func {
		char *label;		/* ms_frame_label(), malloc'd */
		uint32_t func;
	} *labels;
	uint32_t n_labels, alloc_labels;
	struct ms_cuts cuts;		/* the cuts the samples use */
	uint64_t cut_func0;		/* the function id of cut 0 */
	bool no_stack;			/* an off-CPU sample stands on "[no stack]" */
	int64_t k_pid, k_tid, k_thread;	/* label keys */
	/*
	 * Label spans: the keys (capture string ids, which are the profile's),
	 * the sets of values seen (set 0: none), samples past LABEL_SETS_MAX
	 * sets or with keys past LABEL_KEYS_MAX left without.
	 */
	struct ms_labels spans;
	uint32_t n_lkeys, lkeys[LABEL_KEYS_MAX];
	uint32_t n_sets, sets[LABEL_SETS_MAX][LABEL_KEYS_MAX];
	uint64_t sets_full;
	bool keys_cut;
};

/*
 * "[no stack]" (internal.h) is a location and a function after any cut's
 * could be, whatever cuts the intervals add after the samples'.
 */
#define NO_STACK_LOCATION(w) ((uint64_t)(w)->cap->n_frames + 1 + MS_CUTS_MAX)
#define NO_STACK_FUNCTION(w) ((w)->cut_func0 + MS_CUTS_MAX)

/* ---- gzip ---- */

static int gz_deflate(struct pw *w, int flush)
{
	w->z.next_in = w->in;
	w->z.avail_in = (uInt)w->in_len;
	do {
		int zr;
		size_t have;

		w->z.next_out = w->zout;
		w->z.avail_out = sizeof(w->zout);
		zr = deflate(&w->z, flush);
		if (zr == Z_STREAM_ERROR)
			return ms_error("zlib refused to compress the profile");
		have = sizeof(w->zout) - w->z.avail_out;
		if (have && fwrite(w->zout, 1, have, w->out) != have)
			return -1;	/* left on out for the caller */
	} while (w->z.avail_out == 0);
	w->in_len = 0;
	return 0;
}

static void put(struct pw *w, const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len && !w->failed) {
		size_t n = sizeof(w->in) - w->in_len;

		if (n > len)
			n = len;
		memcpy(w->in + w->in_len, b, n);
		w->in_len += n;
		b += n;
		len -= n;
		if (w->in_len == sizeof(w->in) && gz_deflate(w, Z_NO_FLUSH) < 0)
			w->failed = 1;
	}
}

static void put_varint(struct pw *w, uint64_t v)
{
	unsigned char b[10];
	size_t n = 0;

	do {
		b[n] = v & 0x7f;
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	put(w, b, n);
}

static void put_tag(struct pw *w, unsigned field, unsigned wire)
{
	put_varint(w, (uint64_t)field << 3 | wire);
}

/* A varint field; proto3 leaves out zeros. */
static void put_int(struct pw *w, unsigned field, int64_t v)
{
	if (!v)
		return;
	put_tag(w, field, WIRE_VARINT);
	put_varint(w, (uint64_t)v);
}

static void put_bytes(struct pw *w, unsigned field, const void *p, size_t len)
{
	put_tag(w, field, WIRE_LEN);
	put_varint(w, len);
	put(w, p, len);
}

/* A packed repeated varint field (proto3's encoding of repeated scalars). */
static void put_packed(struct pw *w, unsigned field, const int64_t *v, uint32_t n)
{
	size_t len = 0;
	uint32_t i;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		uint64_t u = (uint64_t)v[i];

		do {
			len++;
			u >>= 7;
		} while (u);
	}
	put_tag(w, field, WIRE_LEN);
	put_varint(w, len);
	for (i = 0; i < n; i++)
		put_varint(w, (uint64_t)v[i]);
}

static void put_message(struct pw *w, unsigned field, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);

	if (w->failed)
		return;
	if (len > w->pack_alloc) {
		size_t want = len > 4096 ? len : 4096;
		unsigned char *p = realloc(w->pack, want);

		if (!p) {
			ms_error("out of memory");
			w->failed = 1;
			return;
		}
		w->pack = p;
		w->pack_alloc = want;
	}
	protobuf_c_message_pack(m, w->pack);
	put_bytes(w, field, w->pack, len);
}

/* ---- strings ---- */

/* The index of s in the string table, added after the capture's when new. */
static int64_t str_extra(struct pw *w, const char *s)
{
	for (uint32_t i = 0; i < w->n_extra; i++)
		if (!strcmp(w->extra[i], s))
			return (int64_t)w->cap->n_strings + i;
	if (MS_GROW(w->extra, w->n_extra, w->alloc_extra) < 0) {
		w->failed = 1;
		return 0;
	}
	w->extra[w->n_extra] = s;
	return (int64_t)w->cap->n_strings + w->n_extra++;
}

/* ---- tables ---- */

static const char *module_kind_name(uint32_t kind)
{
	switch (kind) {
	case MS_MODULE_KERNEL: return "[kernel.kallsyms]";
	case MS_MODULE_VDSO: return "[vdso]";
	case MS_MODULE_ANON: return "[anon]";
	case MS_MODULE_PERF_MAP: return "[perf-map]";
	case MS_MODULE_JIT_OBJECT: return "[jit-object]";
	default: return "[unknown]";
	}
}

static void write_mappings(struct pw *w)
{
	const struct ms_capture *cap = w->cap;
	uint32_t nm = cap->n_modules, i;
	uint64_t *lo = calloc(nm ? nm : 1, sizeof(*lo)), *hi = calloc(nm ? nm : 1, sizeof(*hi));
	uint8_t *facts = calloc(nm ? nm : 1, 1);
	enum { LINES = 1, INLINE = 2 };

	if (!lo || !hi || !facts) {
		ms_error("out of memory");
		w->failed = 1;
		goto out;
	}
	for (i = 0; i < nm; i++)
		lo[i] = UINT64_MAX;
	for (i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *f = &cap->frames[i];

		if (f->module == MS_NONE)
			continue;
		if (!(f->flags & MS_FRAME_NO_ADDRESS)) {
			if (f->address < lo[f->module])
				lo[f->module] = f->address;
			if (f->address >= hi[f->module])
				hi[f->module] = f->address == UINT64_MAX ? f->address : f->address + 1;
		}
		if (f->n_lines)
			facts[f->module] |= LINES;
		if (f->n_lines > 1)
			facts[f->module] |= INLINE;
	}
	for (i = 0; i < nm; i++) {
		const struct ms_cap_module *m = &cap->modules[i];
		Perftools__Profiles__Mapping mp = PERFTOOLS__PROFILES__MAPPING__INIT;

		/* interpreted code is no memory: its locations name no mapping */
		if (m->kind == MS_MODULE_INTERPRETED)
			continue;
		mp.id = i + 1;
		if (lo[i] != UINT64_MAX) {
			mp.memory_start = lo[i];
			mp.memory_limit = hi[i];
		}
		/*
		 * A perf-map or jit-object module's range is known, and its
		 * addresses are the process's: the mapping is that range (a
		 * return address may sit at its end), its file the map that
		 * named it or "[jit-object 0xENTRY]".
		 */
		if (ms_module_kind_has_base(m->kind)) {
			mp.memory_start = m->base;
			mp.memory_limit = lo[i] != UINT64_MAX && hi[i] > m->base + m->size ?
					  hi[i] : m->base + m->size;
		}
		mp.filename = m->path && *cap->strings[m->path] ? (int64_t)m->path
				: str_extra(w, module_kind_name(m->kind));
		if (m->build_id_len) {
			for (uint32_t b = 0; b < m->build_id_len && b < 20; b++)
				snprintf(w->build_id_hex[i] + 2 * b, 3, "%02x", m->build_id[b]);
			mp.build_id = str_extra(w, w->build_id_hex[i]);
		}
		/*
		 * pprof symbolizes mappings that claim no functions, taking
		 * addresses as run-time ones; these are module-relative, so it
		 * would name the wrong code: every mapping claims them.
		 */
		mp.has_functions = true;
		mp.has_filenames = mp.has_line_numbers = !!(facts[i] & LINES);
		mp.has_inline_frames = !!(facts[i] & INLINE);
		put_message(w, F_MAPPING, &mp.base);
	}
out:
	free(lo);
	free(hi);
	free(facts);
}

/*
 * Frames without a name (no symbol, no lines) get a function named as
 * every view of microscope names them (ms_frame_label(): "libc.so.6+0x26000",
 * at the function's start for an FDE's), one per label, ids from next: so
 * pprof's tools show the name ms-analyze shows, and a profile read back
 * groups the same frames. w->unnamed_func[f] is frame f's.
 */
static uint64_t write_unnamed_functions(struct pw *w, uint64_t next)
{
	const struct ms_capture *cap = w->cap;
	char buf[256];

	w->unnamed_func = calloc(cap->n_frames ? cap->n_frames : 1, sizeof(*w->unnamed_func));
	if (!w->unnamed_func) {
		ms_error("out of memory");
		w->failed = 1;
		return next;
	}
	for (uint32_t i = 0; i < cap->n_frames && !w->failed; i++) {
		const struct ms_cap_frame *f = &cap->frames[i];
		Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
		struct label_func *lf;
		uint32_t k;

		if (f->n_lines || (f->name && *cap->strings[f->name]))
			continue;
		ms_frame_label(buf, sizeof(buf), cap, f);
		/* (Few: the frames no symbol named. The frames of one FDE share one.) */
		for (k = 0; k < w->n_labels && strcmp(w->labels[k].label, buf); k++)
			;
		if (k == w->n_labels) {
			if (MS_GROW(w->labels, w->n_labels, w->alloc_labels) < 0) {
				w->failed = 1;
				return next;
			}
			lf = &w->labels[k];
			if (!(lf->label = strdup(buf))) {
				ms_error("out of memory");
				w->failed = 1;
				return next;
			}
			w->n_labels++;
			lf->func = (uint32_t)next;
			fn.id = next++;
			fn.name = fn.system_name = str_extra(w, lf->label);
			put_message(w, F_FUNCTION, &fn.base);
		}
		w->unnamed_func[i] = w->labels[k].func;
	}
	return next;
}

/*
 * One function per cut the samples use, named by it, ids from next; then
 * "[no stack]"'s when an off-CPU sample stands on it.
 */
static void write_cut_functions(struct pw *w, uint64_t next)
{
	w->cut_func0 = next;
	for (uint32_t c = 0; c < w->cuts.n && !w->failed; c++) {
		Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;

		fn.id = next + c;
		fn.name = fn.system_name = str_extra(w, w->cuts.labels[c]);
		put_message(w, F_FUNCTION, &fn.base);
	}
	if (w->no_stack && !w->failed) {
		Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;

		fn.id = NO_STACK_FUNCTION(w);
		fn.name = fn.system_name = str_extra(w, MS_NO_STACK_LABEL);
		put_message(w, F_FUNCTION, &fn.base);
	}
}

/*
 * Functions: the capture's own, then one per name of a frame that has a
 * name but no source lines. name_func[s] is the id made for name string s.
 */
static uint32_t *write_functions(struct pw *w)
{
	const struct ms_capture *cap = w->cap;
	uint32_t *name_func = calloc(cap->n_strings ? cap->n_strings : 1, sizeof(*name_func));
	uint64_t next = (uint64_t)cap->n_functions + 1;
	uint32_t i;

	if (!name_func) {
		ms_error("out of memory");
		w->failed = 1;
		return NULL;
	}
	for (i = 0; i < cap->n_functions; i++) {
		const struct ms_cap_function *cf = &cap->functions[i];
		Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;

		fn.id = i + 1;
		fn.name = cf->name;
		fn.system_name = cf->system_name ? cf->system_name : cf->name;
		fn.filename = cf->file;
		fn.start_line = cf->start_line;
		put_message(w, F_FUNCTION, &fn.base);
	}
	for (i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *f = &cap->frames[i];
		Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;

		if (f->n_lines || !f->name || name_func[f->name])
			continue;
		name_func[f->name] = (uint32_t)next;
		fn.id = next++;
		fn.name = fn.system_name = f->name;
		put_message(w, F_FUNCTION, &fn.base);
	}
	write_cut_functions(w, write_unnamed_functions(w, next));
	return name_func;
}

static void write_locations(struct pw *w, const uint32_t *name_func)
{
	const struct ms_capture *cap = w->cap;
	uint32_t max_lines = 1, i, k;
	Perftools__Profiles__Line *lines, **line_ptrs;

	for (i = 0; i < cap->n_frames; i++)
		if (cap->frames[i].n_lines > max_lines)
			max_lines = cap->frames[i].n_lines;
	lines = calloc(max_lines, sizeof(*lines));
	line_ptrs = calloc(max_lines, sizeof(*line_ptrs));
	if (!lines || !line_ptrs) {
		ms_error("out of memory");
		w->failed = 1;
		goto out;
	}
	for (i = 0; i < cap->n_frames && !w->failed; i++) {
		const struct ms_cap_frame *f = &cap->frames[i];
		Perftools__Profiles__Location loc = PERFTOOLS__PROFILES__LOCATION__INIT;

		loc.id = i + 1;
		/* an interpreted frame: its function and line, no mapping, no address */
		loc.mapping_id = f->module == MS_NONE || ms_frame_interpreted(cap, f) ? 0 :
				 (uint64_t)f->module + 1;
		loc.address = f->flags & MS_FRAME_NO_ADDRESS ? 0 : f->address;
		for (k = 0; k < f->n_lines; k++) {
			const struct ms_cap_line *l = &cap->lines[f->first_line + k];

			perftools__profiles__line__init(&lines[k]);
			lines[k].function_id = (uint64_t)l->function + 1;
			lines[k].line = l->line;
			line_ptrs[k] = &lines[k];
		}
		loc.n_line = f->n_lines;
		if (!f->n_lines && (f->name || w->unnamed_func[i])) {
			perftools__profiles__line__init(&lines[0]);
			lines[0].function_id = w->unnamed_func[i] ? w->unnamed_func[i] :
					       name_func[f->name];
			line_ptrs[0] = &lines[0];
			loc.n_line = 1;
		}
		loc.line = line_ptrs;
		put_message(w, F_LOCATION, &loc.base);
	}
	/* the cuts' and "[no stack]": no mapping, no address, one line naming it */
	for (i = 0; i < w->cuts.n && !w->failed; i++) {
		Perftools__Profiles__Location loc = PERFTOOLS__PROFILES__LOCATION__INIT;

		loc.id = (uint64_t)cap->n_frames + 1 + i;
		perftools__profiles__line__init(&lines[0]);
		lines[0].function_id = w->cut_func0 + i;
		line_ptrs[0] = &lines[0];
		loc.n_line = 1;
		loc.line = line_ptrs;
		put_message(w, F_LOCATION, &loc.base);
	}
	if (w->no_stack && !w->failed) {
		Perftools__Profiles__Location loc = PERFTOOLS__PROFILES__LOCATION__INIT;

		loc.id = NO_STACK_LOCATION(w);
		perftools__profiles__line__init(&lines[0]);
		lines[0].function_id = NO_STACK_FUNCTION(w);
		line_ptrs[0] = &lines[0];
		loc.n_line = 1;
		loc.line = line_ptrs;
		put_message(w, F_LOCATION, &loc.base);
	}
out:
	free(lines);
	free(line_ptrs);
}

/*
 * The value columns: samples, the samples' time (when any), off-CPU time
 * (when recorded), snapshots (when any); off_cpu_at and snapshots_at say
 * where the last two are.
 */
struct columns {
	bool time, off_cpu, snapshots;
	uint32_t n, off_cpu_at, snapshots_at;
};
#define COLUMNS_MAX 4

/* The label keys of the capture's spans (LABEL_KEYS_MAX of them), and the empty set. */
static int labels_init(struct pw *w)
{
	const struct ms_capture *cap = w->cap;
	uint32_t i, k;

	w->n_sets = 1;
	memset(w->sets[0], 0, sizeof(w->sets[0]));
	for (i = 0; i < cap->n_label_spans; i++) {
		uint32_t key = cap->label_spans[i].key;

		for (k = 0; k < w->n_lkeys && w->lkeys[k] != key; k++)
			;
		if (k < w->n_lkeys)
			continue;
		if (w->n_lkeys == LABEL_KEYS_MAX) {
			w->keys_cut = true;
			continue;
		}
		w->lkeys[w->n_lkeys++] = key;
	}
	return w->n_lkeys ? ms_labels_init(&w->spans, cap) : 0;
}

/* The label set of sample s: each key's value where a span covers it. */
static uint32_t label_set(struct pw *w, const struct ms_cap_sample *s)
{
	uint32_t v[LABEL_KEYS_MAX] = { 0 }, k, i;

	if (!w->n_lkeys)
		return 0;
	for (k = 0; k < w->n_lkeys; k++) {
		uint32_t sp = ms_labels_at(&w->spans, s->thread, w->lkeys[k], s->time);

		v[k] = sp == MS_NONE ? 0 : w->cap->label_spans[sp].value;
	}
	for (i = 0; i < w->n_sets; i++)
		if (!memcmp(w->sets[i], v, sizeof(v)))
			return i;
	if (w->n_sets == LABEL_SETS_MAX) {
		w->sets_full += s->count;
		return 0;
	}
	memcpy(w->sets[w->n_sets], v, sizeof(v));
	return w->n_sets++;
}

/*
 * One sample: the stack's locations leaf first, then the cut's (or "[no
 * stack]"'s when cut is MS_CUT_NO_STACK); labels pid, tid, thread (its
 * name), for an off-CPU sample cause (cause_key 0: none), and the values
 * of label set lset (0: none).
 */
static void write_sample(struct pw *w, uint32_t stack, uint32_t thread, uint32_t cut,
			 int64_t *values, uint32_t n_values, int64_t cause_key, const char *cause,
			 uint32_t lset, uint32_t *nodes, uint64_t *locs)
{
	const struct ms_capture *cap = w->cap;
	/* a snapshot's task may have no thread row: no thread labels then */
	const struct ms_cap_thread *t = thread < cap->n_threads ? &cap->threads[thread] : NULL;
	Perftools__Profiles__Sample smp = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Label lab[4 + LABEL_KEYS_MAX], *labp[4 + LABEL_KEYS_MAX];
	uint32_t n, k, n_label = 0;

	n = ms_stack_nodes(cap, stack, nodes);
	/* pprof lists the leaf first */
	for (k = 0; k < n; k++)
		locs[k] = (uint64_t)cap->stacks[nodes[n - 1 - k]].frame + 1;
	if (cut == MS_CUT_NO_STACK) {
		w->no_stack = true;
		locs[n++] = NO_STACK_LOCATION(w);
	} else if (cut != MS_NONE) {
		locs[n++] = (uint64_t)cap->n_frames + 1 + cut;
	}
	smp.n_location_id = n;
	smp.location_id = locs;
	smp.n_value = n_values;
	smp.value = values;
	for (k = 0; k < 4 + LABEL_KEYS_MAX; k++) {
		perftools__profiles__label__init(&lab[k]);
		labp[k] = &lab[k];
	}
	if (t) {
		lab[n_label].key = w->k_pid;
		lab[n_label++].num = t->pid;
		lab[n_label].key = w->k_tid;
		lab[n_label++].num = t->tid;
	}
	if (t && t->name) {
		lab[n_label].key = w->k_thread;
		lab[n_label++].str = t->name;
	}
	if (cause_key) {
		lab[n_label].key = cause_key;
		lab[n_label++].str = str_extra(w, cause);
	}
	/* the capture's strings are the profile's first: their ids are the same */
	for (k = 0; lset && k < w->n_lkeys; k++) {
		if (!w->sets[lset][k])
			continue;
		lab[n_label].key = w->lkeys[k];
		lab[n_label++].str = w->sets[lset][k];
	}
	smp.n_label = n_label;
	smp.label = labp;
	put_message(w, F_SAMPLE, &smp.base);
}

/*
 * Off-CPU samples, after the CPU ones: one per unique (stack, thread,
 * cut, cause) of the complete intervals o chose, valued their durations'
 * sum in the off-CPU column (0 in the others), labelled with their cause.
 * Rows come in the order of their first interval.
 */
static void write_off_cpu_samples(struct pw *w, const struct ms_export_options *o,
				  const struct columns *col, uint32_t *nodes, uint64_t *locs,
				  struct ms_progress *progress)
{
	const struct ms_capture *cap = w->cap;
	struct ms_rows rows = MS_ROWS_INIT;
	uint64_t *ns = NULL, done = progress->total;
	uint32_t alloc = 0, i;
	int64_t k_cause = str_extra(w, "cause");

	progress->total += cap->n_intervals;
	for (i = 0; i < cap->n_intervals; i++) {
		const struct ms_cap_interval *iv = &cap->intervals[i];
		uint64_t weight = ms_interval_weight(cap, o, iv);
		uint32_t cut, r;
		bool added;

		ms_progress_update(progress, done + i);
		if (!weight)
			continue;
		cut = ms_interval_cut(&w->cuts, iv);
		/* the cause in the key beside the cut: both are small */
		cut = (cut == MS_NONE ? MS_CUT_NO_STACK + 1 : cut) * MS_CAUSE_COUNT +
		      cap->evidence[iv->evidence].cause;
		r = ms_rows_get(&rows, iv->stack, iv->thread, cut, &added);
		if (r == MS_NONE || (added && ms_grow(&ns, &alloc, r, sizeof(*ns)) < 0))
			goto fail;
		if (added)
			ns[r] = 0;
		ns[r] = ms_weight_add(ns[r], weight);
	}
	progress->total += rows.rows.n;
	done = progress->total - rows.rows.n;
	for (i = 0; i < rows.rows.n && !w->failed; i++) {
		uint32_t stack, thread, key, cut, cause;
		int64_t values[COLUMNS_MAX] = { 0 };

		ms_progress_update(progress, done + i);
		ms_rows_key(&rows, i, &stack, &thread, &key);
		cut = key / MS_CAUSE_COUNT;
		cause = key % MS_CAUSE_COUNT;
		if (ns[i] > INT64_MAX) {
			ms_error("cannot write pprof: one stack was off CPU for %" PRIu64 " ns, more "
				 "than pprof's values hold (%" PRId64 "); export it as folded "
				 "--weight off-cpu instead", ns[i], INT64_MAX);
			goto fail;
		}
		values[col->off_cpu_at] = (int64_t)ns[i];
		write_sample(w, stack, thread, cut == MS_CUT_NO_STACK + 1 ? MS_NONE : cut, values,
			     col->n, k_cause, ms_off_cpu_cause_name(cause), 0, nodes, locs);
	}
	goto out;
fail:
	w->failed = 1;
out:
	ms_rows_release(&rows);
	free(ns);
}

/*
 * Snapshot samples, last: one per unique (stack, thread) of the wait
 * rows, valued their count in the snapshots column (0 in the others).
 * Rows come in the order of their first wait.
 */
static void write_snapshot_samples(struct pw *w, const struct columns *col, uint32_t *nodes,
				   uint64_t *locs, struct ms_progress *progress)
{
	const struct ms_capture *cap = w->cap;
	struct ms_rows rows = MS_ROWS_INIT;
	uint64_t *count = NULL, done = progress->total;
	uint32_t alloc = 0, i;

	progress->total += cap->n_waits;
	for (i = 0; i < cap->n_waits; i++) {
		uint32_t r;
		bool added;

		ms_progress_update(progress, done + i);
		r = ms_rows_get(&rows, cap->waits[i].stack, ms_export_wait_thread(cap, i), MS_NONE, &added);
		if (r == MS_NONE || (added && ms_grow(&count, &alloc, r, sizeof(*count)) < 0))
			goto fail;
		if (added)
			count[r] = 0;
		count[r]++;
	}
	for (i = 0; i < rows.rows.n && !w->failed; i++) {
		uint32_t stack, thread, cut;
		int64_t values[COLUMNS_MAX] = { 0 };

		ms_rows_key(&rows, i, &stack, &thread, &cut);
		values[col->snapshots_at] = (int64_t)count[i];	/* at most 2^26 rows */
		write_sample(w, stack, thread, MS_NONE, values, col->n, 0, NULL, 0, nodes, locs);
	}
	goto out;
fail:
	w->failed = 1;
out:
	ms_rows_release(&rows);
	free(count);
}

/*
 * Samples: one per unique (stack, thread, cut), values [count, time] where time
 * is the sum of the periods scaled by the duty in force at each sample
 * (capture/weight.h: what the samples stand for under a CPU budget),
 * labels pid, tid and thread (its name), locations leaf first and the
 * cut's last. Rows come in the order of their first sample, so the output
 * follows the capture's order. Then the off-CPU samples, when recorded.
 */
static void write_samples(struct pw *w, const struct ms_export_options *o,
			  const struct columns *col)
{
	const struct ms_capture *cap = w->cap;
	struct ms_rows rows = MS_ROWS_INIT;
	uint64_t *count = NULL, *period = NULL;
	uint32_t alloc = 0, max_depth = ms_stacks_max_depth(cap), i;
	uint32_t *nodes = calloc(max_depth ? max_depth : 1, sizeof(*nodes));
	uint64_t *locs = calloc((size_t)max_depth + 1, sizeof(*locs));
	struct ms_progress progress;

	w->k_pid = str_extra(w, "pid");
	w->k_tid = str_extra(w, "tid");
	w->k_thread = str_extra(w, "thread");
	/* the samples summed, then a row each written and compressed */
	ms_progress_start(&progress, "writing the pprof profile", cap->n_samples);
	if (!nodes || !locs || labels_init(w) < 0) {
		ms_error("out of memory");
		w->failed = 1;
		goto out;
	}
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];
		bool added;
		uint32_t r, cut;

		ms_progress_update(&progress, i);
		cut = ms_cuts_id(&w->cuts, s->end);
		cut = (cut == MS_NONE ? 0 : cut + 1) + CUT_SLOTS * label_set(w, s);
		r = ms_rows_get(&rows, s->stack, s->thread, cut, &added);

		if (r == MS_NONE)
			goto fail;
		if (added) {
			uint32_t a = alloc;

			if (ms_grow(&count, &a, r, sizeof(*count)) < 0 ||
			    ms_grow(&period, &alloc, r, sizeof(*period)) < 0)
				goto fail;
			count[r] = period[r] = 0;
		}
		count[r] += s->count;
		period[r] = ms_weight_add(period[r], ms_capture_sample_weight(cap, s));
	}
	progress.total += rows.rows.n;
	for (i = 0; i < rows.rows.n && !w->failed; i++) {
		uint32_t stack, thread, cut, lset;
		int64_t values[COLUMNS_MAX] = { 0 };

		ms_progress_update(&progress, (uint64_t)cap->n_samples + i);
		ms_rows_key(&rows, i, &stack, &thread, &cut);
		lset = cut / CUT_SLOTS;
		cut = cut % CUT_SLOTS ? cut % CUT_SLOTS - 1 : MS_NONE;
		/*
		 * pprof's values are int64: the rows of an import weighted by
		 * period can count past them, and a negative count is nonsense.
		 */
		if (count[i] > INT64_MAX) {
			ms_error("cannot write pprof: one stack counts %" PRIu64 " samples, more "
				 "than pprof's values hold (%" PRId64 "); export it as folded or "
				 "speedscope instead", count[i], INT64_MAX);
			goto fail;
		}
		/* scaled by a low duty, a time can pass them too */
		if (col->time && period[i] > INT64_MAX) {
			ms_error("cannot write pprof: one stack stands for %" PRIu64 " (its periods "
				 "scaled by the sampling duty), more than pprof's values hold (%"
				 PRId64 "); export it as folded or speedscope instead", period[i],
				 INT64_MAX);
			goto fail;
		}
		values[0] = (int64_t)count[i];
		values[1] = col->time ? (int64_t)period[i] : 0;
		/* the off-CPU and snapshots columns, when there are, stay 0 */
		write_sample(w, stack, thread, cut, values, col->n, 0, NULL, lset, nodes, locs);
	}
	if (w->sets_full || w->keys_cut)
		fprintf(stderr, "%s: note: pprof labels: %s%" PRIu64 " samples past %d sets of "
			"label values are written without labels\n", ms_progname(),
			w->keys_cut ? "label keys past the first 4 are left out; " : "",
			w->sets_full, LABEL_SETS_MAX);
	if (col->off_cpu && !w->failed)
		write_off_cpu_samples(w, o, col, nodes, locs, &progress);
	if (col->snapshots && !w->failed)
		write_snapshot_samples(w, col, nodes, locs, &progress);
	goto out;
fail:
	w->failed = 1;
out:
	ms_progress_finish(&progress);
	ms_rows_release(&rows);
	ms_labels_release(&w->spans);
	free(count);
	free(period);
	free(nodes);
	free(locs);
}

static void write_value_type(struct pw *w, unsigned field, const char *type, const char *unit)
{
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;

	vt.type = str_extra(w, type);
	vt.unit = str_extra(w, unit);
	put_message(w, field, &vt.base);
}

int ms_pprof_export(FILE *out, const struct ms_capture *cap, const struct ms_export_options *o)
{
	struct pw *w = calloc(1, sizeof(*w));
	const char *event = ms_capture_info_text(cap, "event");
	bool time_event = ms_capture_time_event(cap);
	const char *type = time_event ? "cpu" : event, *unit = time_event ? "nanoseconds" : "events";
	uint64_t period = 0, freq, total = 0, start, end, wall;
	struct columns col;
	uint32_t *name_func = NULL, i;
	char comment[512], command[4096];
	int64_t comments[2];
	uint32_t n_comments = 0;
	int ret = -1;

	if (!w)
		return ms_error("out of memory");
	w->out = out;
	w->cap = cap;
	w->build_id_hex = calloc(cap->n_modules ? cap->n_modules : 1, sizeof(*w->build_id_hex));
	if (!w->build_id_hex || deflateInit2(&w->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
					    Z_DEFAULT_STRATEGY) != Z_OK) {
		ms_error("out of memory");
		goto out;
	}
	w->z_open = true;

	for (i = 0; i < cap->n_samples; i++)
		total = ms_weight_add(total, ms_capture_sample_weight(cap, &cap->samples[i]));
	col.time = total > 0;
	col.off_cpu = cap->flags & MS_CAPTURE_OFF_CPU;
	col.snapshots = cap->n_waits > 0;
	col.off_cpu_at = 1 + col.time;
	col.snapshots_at = col.off_cpu_at + col.off_cpu;
	col.n = col.snapshots_at + col.snapshots;
	write_value_type(w, F_SAMPLE_TYPE, "samples", "count");
	if (col.time)
		write_value_type(w, F_SAMPLE_TYPE, type, unit);
	if (col.off_cpu)
		write_value_type(w, F_SAMPLE_TYPE, OFF_CPU_TYPE, "nanoseconds");
	if (col.snapshots)
		write_value_type(w, F_SAMPLE_TYPE, SNAPSHOTS_TYPE, "count");
	write_samples(w, o, &col);
	write_mappings(w);
	name_func = write_functions(w);
	if (name_func)
		write_locations(w, name_func);

	/* the period between samples: as set, or from the frequency */
	if (!ms_capture_info_number(cap, "period", &period) &&
	    ms_capture_info_number(cap, "frequency", &freq) && freq && time_event)
		period = 1000000000ull / freq;
	if (!period && cap->n_samples)
		period = total / ms_capture_sample_count(cap);
	write_value_type(w, F_PERIOD_TYPE, type, unit);
	put_int(w, F_PERIOD, (int64_t)period);
	/*
	 * pprof shows the last sample type unless told: with off-CPU time
	 * last, tell it the CPU's (samples' time, else their count), unless
	 * there are no samples at all (a recording of sleepers).
	 */
	if (col.off_cpu || col.snapshots)
		put_int(w, F_DEFAULT_SAMPLE_TYPE,
			str_extra(w, cap->n_samples ? (col.time ? type : "samples") :
				  col.off_cpu ? OFF_CPU_TYPE : SNAPSHOTS_TYPE));
	if (ms_capture_info_number(cap, "start-wall-time", &wall))
		put_int(w, F_TIME_NANOS, (int64_t)wall);
	if (ms_capture_info_number(cap, "start-time", &start) &&
	    ms_capture_info_number(cap, "end-time", &end) && end >= start)
		put_int(w, F_DURATION_NANOS, (int64_t)(end - start));
	else
		put_int(w, F_DURATION_NANOS, (int64_t)(cap->end_time - cap->start_time));
	if (o && o->producer) {
		snprintf(comment, sizeof(comment), "written by %s", o->producer);
		comments[n_comments++] = str_extra(w, comment);
	}
	if (ms_capture_info_text(cap, "command")) {
		/* ms_pprof_import() reads it back as info "command" */
		snprintf(command, sizeof(command), "command: %s", ms_capture_info_text(cap, "command"));
		comments[n_comments++] = str_extra(w, command);
	}
	put_packed(w, F_COMMENT, comments, n_comments);

	/* the strings last: every extra is known by now */
	for (i = 0; i < cap->n_strings && !w->failed; i++)
		put_bytes(w, F_STRING_TABLE, cap->strings[i], strlen(cap->strings[i]));
	for (i = 0; i < w->n_extra && !w->failed; i++)
		put_bytes(w, F_STRING_TABLE, w->extra[i], strlen(w->extra[i]));
	if (!w->failed && gz_deflate(w, Z_FINISH) < 0)
		w->failed = 1;
	ret = w->failed ? -1 : 0;
out:
	if (w->z_open)
		deflateEnd(&w->z);
	free(name_func);
	free(w->pack);
	free(w->extra);
	free(w->build_id_hex);
	free(w->unnamed_func);
	for (uint32_t l = 0; l < w->n_labels; l++)
		free(w->labels[l].label);
	free(w->labels);
	free(w);
	return ret;
}

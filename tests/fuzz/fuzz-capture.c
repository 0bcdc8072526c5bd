/*
 * Fuzz target: the capture reader (ms_capture_load(), what ms-analyze,
 * ms-export and microscope report open a .msc with) on any bytes (see
 * fuzz.h). A load either fails with a message or gives a capture that
 * holds every invariant capture.h promises; then everything a consumer
 * does with it must work: the accessors, every analysis view and its
 * writers, every exporter, encoding it (the same tables, loaded back, and
 * the same bytes when encoded again), and dumping it as a stream and
 * capturing that again as microscope symbolize does (ms-capture --dump
 * --omit-failed, then ms-capture --keep-names): the same samples, duty
 * rows, loss rows and totals; and the capture that gives, made by the builder, must dump and
 * capture again to the same file byte for byte, and lose no name when
 * symbolized again; with off-CPU time, the same intervals. Anything else aborts.
 *
 * The first byte of an input chooses how its bytes become a file:
 *  - 'M' (the first byte of the magic): the input is the file;
 *  - anything else: the rest is a file whose sections are stored raw, and
 *    the target seals it (compresses each section with the codec its
 *    directory entry names when that is LZ4F, then sets the sections'
 *    offsets, stored sizes, raw sizes and checksums, the file size and the
 *    header checksum), so that mutations reach the checks behind the
 *    checksums and the compression. With bit 0 of that byte set, the raw
 *    sizes are left as the input gives them.
 * The reader itself is never weakened: a sealed file is an ordinary file.
 * To look at one with the tools, run the target on the input with
 * MS_FUZZ_CAPTURE_SAVE=FILE in the environment: it writes the file it
 * loads there.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <lz4frame.h>
#include <zlib.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/convert.h"
#include "capture/format.h"
#include "capture/funcs.h"
#include "capture/weight.h"
#include "formats/formats.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

/* Larger inputs are skipped: each input must stay fast. */
#define FUZZ_CAPTURE_MAX (1u << 20)
/* At most this many sections are sealed (the reader allows more). */
#define FUZZ_SEAL_SECTIONS_MAX 64
/*
 * A dump writes a record per throttle event: captures with more than this
 * (and at most MS_DUMP_THROTTLE_MAX, which a dump refuses) are not dumped.
 */
#define FUZZ_DUMP_THROTTLE_MAX 4096

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "fuzz-capture: %s:%d: broken: %s\n", \
				__FILE__, __LINE__, #cond);                \
			abort();                                           \
		}                                                          \
	} while (0)

/* ---- files: memfds, made once, emptied after each input ---- */

struct memfile {
	int fd;
	char path[64];
};

static void memfile_open(struct memfile *m, const char *name)
{
	if (m->path[0])
		return;
	m->fd = memfd_create(name, MFD_CLOEXEC);
	CHECK(m->fd >= 0);
	snprintf(m->path, sizeof(m->path), "/proc/self/fd/%d", m->fd);
}

static void memfile_empty(struct memfile *m)
{
	CHECK(ftruncate(m->fd, 0) == 0);
	CHECK(lseek(m->fd, 0, SEEK_SET) == 0);
}

static void memfile_put(struct memfile *m, const void *buf, size_t len)
{
	memfile_empty(m);
	CHECK(pwrite(m->fd, buf, len, 0) == (ssize_t)len);
}

static struct memfile input_file, dump_file;
static FILE *null_out;

/* ---- the sealing mode ---- */

/* One LZ4 frame, as the writer makes them. NULL when it cannot. */
static unsigned char *lz4(const unsigned char *src, size_t len, size_t *out_len)
{
	LZ4F_preferences_t prefs;
	unsigned char *dst;
	size_t bound, n;

	memset(&prefs, 0, sizeof(prefs));
	prefs.frameInfo.blockSizeID = LZ4F_max4MB;
	prefs.frameInfo.blockMode = LZ4F_blockLinked;
	prefs.frameInfo.contentSize = len;
	bound = LZ4F_compressFrameBound(len, &prefs);
	dst = malloc(bound);
	CHECK(dst);
	n = LZ4F_compressFrame(dst, bound, src, len, &prefs);
	CHECK(!LZ4F_isError(n));
	*out_len = n;
	return dst;
}

/*
 * The file that in (len bytes, sections stored raw) describes, sealed as
 * the file comment says; NULL when in has no whole header and directory
 * (it is then loaded as it is).
 */
static unsigned char *seal(const unsigned char *in, size_t len, bool keep_raw_sizes,
			   size_t *out_len)
{
	unsigned char *stored[FUZZ_SEAL_SECTIONS_MAX], *out, *d;
	size_t stored_len[FUZZ_SEAL_SECTIONS_MAX], raw_len[FUZZ_SEAL_SECTIONS_MAX];
	size_t dir_end, total, at;
	uint32_t n, i, crc;

	if (len < MS_CAPF_HEADER_SIZE)
		return NULL;
	n = ms_get_u32(in + MS_CAPF_N_SECTIONS);
	if (n > FUZZ_SEAL_SECTIONS_MAX)
		return NULL;
	dir_end = MS_CAPF_HEADER_SIZE + (size_t)n * MS_CAPF_DIR_SIZE_BYTES;
	if (len < dir_end)
		return NULL;
	total = dir_end;
	for (i = 0; i < n; i++) {
		const unsigned char *e = in + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES;
		uint64_t off = ms_get_u64(e + MS_CAPF_DIR_OFFSET);
		uint64_t size = ms_get_u64(e + MS_CAPF_DIR_SIZE);

		/* The raw bytes: what of the entry's range lies in the input. */
		if (off > len)
			off = len;
		if (size > len - off)
			size = len - off;
		raw_len[i] = size;
		if (ms_get_u32(e + MS_CAPF_DIR_CODEC) == MS_CAPF_CODEC_LZ4F) {
			stored[i] = lz4(in + off, size, &stored_len[i]);
		} else {
			stored[i] = malloc(size ? size : 1);
			CHECK(stored[i]);
			memcpy(stored[i], in + off, size);
			stored_len[i] = size;
		}
		total += stored_len[i];
	}
	out = malloc(total);
	CHECK(out);
	memcpy(out, in, dir_end);
	at = dir_end;
	for (i = 0; i < n; i++) {
		d = out + MS_CAPF_HEADER_SIZE + i * MS_CAPF_DIR_SIZE_BYTES;
		ms_put_u64(d + MS_CAPF_DIR_OFFSET, at);
		ms_put_u64(d + MS_CAPF_DIR_SIZE, stored_len[i]);
		if (!keep_raw_sizes)
			ms_put_u64(d + MS_CAPF_DIR_RAW_SIZE, raw_len[i]);
		ms_put_u32(d + MS_CAPF_DIR_CHECKSUM, crc32_z(0, stored[i], stored_len[i]));
		memcpy(out + at, stored[i], stored_len[i]);
		at += stored_len[i];
		free(stored[i]);
	}
	ms_put_u64(out + MS_CAPF_FILE_SIZE, total);
	crc = crc32_z(0, out, MS_CAPF_CHECKSUM);
	crc = crc32_z(crc, out + MS_CAPF_HEADER_SIZE, dir_end - MS_CAPF_HEADER_SIZE);
	ms_put_u32(out + MS_CAPF_CHECKSUM, crc);
	*out_len = total;
	return out;
}

/* ---- the invariants of a loaded capture (capture.h, microscope-capture.5) ---- */

static void check_invariants(const struct ms_capture *cap)
{
	uint32_t i, k;
	uint64_t sum = 0;

	CHECK(cap->major == MS_CAPTURE_MAJOR);
	CHECK(cap->n_strings >= 1 && cap->strings[0][0] == '\0');
	for (i = 0; i < cap->n_strings; i++)
		(void)strlen(cap->strings[i]);	/* each terminated, in bounds */
	if (cap->minor < 1)
		CHECK(!cap->n_functions && !cap->n_lines);

	for (i = 0; i < cap->n_info; i++) {
		const struct ms_cap_info *r = &cap->info[i];
		const char *key;
		uint64_t v;

		CHECK(r->key < cap->n_strings && r->value_text < cap->n_strings);
		key = cap->strings[r->key];
		if (i)
			CHECK(strcmp(cap->strings[cap->info[i - 1].key], key) < 0);
		/* the lookups find this row */
		if (r->value_text) {
			CHECK(ms_capture_info_text(cap, key) == cap->strings[r->value_text]);
			CHECK(!ms_capture_info_number(cap, key, &v));
		} else {
			CHECK(!ms_capture_info_text(cap, key));
			CHECK(ms_capture_info_number(cap, key, &v) && v == r->value_number);
		}
	}
	for (i = 0; i < cap->n_modules; i++) {
		const struct ms_cap_module *m = &cap->modules[i];

		CHECK(m->path < cap->n_strings);
		CHECK(m->build_id_len <= sizeof(m->build_id));
		CHECK(ms_cap_module_status_name(m->status));
	}
	for (i = 0; i < cap->n_functions; i++) {
		const struct ms_cap_function *f = &cap->functions[i];

		CHECK(f->name < cap->n_strings && f->system_name < cap->n_strings &&
		      f->file < cap->n_strings);
		if (i) {
			const struct ms_cap_function *p = f - 1;

			CHECK(p->name < f->name ||
			      (p->name == f->name &&
			       (p->system_name < f->system_name ||
				(p->system_name == f->system_name &&
				 (p->file < f->file ||
				  (p->file == f->file && p->start_line < f->start_line))))));
		}
	}
	for (i = 0; i < cap->n_lines; i++)
		CHECK(cap->lines[i].function < cap->n_functions);
	for (i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *f = &cap->frames[i];

		CHECK(f->module == MS_NONE || f->module < cap->n_modules);
		CHECK(f->name < cap->n_strings);
		CHECK((uint64_t)f->first_line + f->n_lines <= cap->n_lines);
		CHECK(f->n_lines <= MS_FRAME_LINES_MAX);
	}
	for (i = 0; i < cap->n_stacks; i++) {
		const struct ms_cap_stack *s = &cap->stacks[i];

		CHECK(s->parent == MS_NONE || s->parent < i);
		CHECK(s->frame < cap->n_frames);
		CHECK(s->depth == (s->parent == MS_NONE ? 1 : cap->stacks[s->parent].depth + 1));
	}
	for (i = 0; i < cap->n_threads; i++) {
		const struct ms_cap_thread *t = &cap->threads[i];

		CHECK(t->name < cap->n_strings);
		CHECK(t->first_time <= t->last_time);
		if (i)
			CHECK(t[-1].pid < t->pid || (t[-1].pid == t->pid && t[-1].tid < t->tid));
	}
	for (i = 0, k = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i], *p = s - 1;

		CHECK(s->thread < cap->n_threads);
		CHECK(s->stack == MS_NONE || s->stack < cap->n_stacks);
		/* counts: at least 1, and their sum fits (capture.h) */
		CHECK(s->count >= 1);
		k += s->count != 1;
		CHECK(!__builtin_add_overflow(sum, s->count, &sum));
		if (i)
			CHECK(p->time < s->time ||
			      (p->time == s->time &&
			       (p->thread < s->thread ||
				(p->thread == s->thread &&
				 (p->cpu < s->cpu ||
				  (p->cpu == s->cpu && p->stack <= s->stack))))));
	}
	for (i = 0; i < cap->n_problems; i++) {
		const struct ms_cap_problem *p = &cap->problems[i];

		CHECK(p->stage < cap->n_strings && p->code < cap->n_strings &&
		      p->detail < cap->n_strings);
	}
	CHECK(cap->start_time <= cap->end_time);
	/* counts other than 1 come only with the flag that needs a 1.2 reader */
	CHECK(!k || ((cap->flags & MS_CAPTURE_WEIGHTED) && cap->minor >= 2));
	/* duty rows only with theirs (1.3), each a duty of 1..1000000, by time */
	CHECK(!cap->n_duty || ((cap->flags & MS_CAPTURE_DUTY) && cap->minor >= 3));
	for (i = 0; i < cap->n_duty; i++) {
		CHECK(cap->duty[i].duty_ppm >= 1 && cap->duty[i].duty_ppm <= 1000000);
		if (i)
			CHECK(cap->duty[i - 1].time < cap->duty[i].time);
	}
	/*
	 * loss rows (1.4, no flag): at most the bound, one per (time, source)
	 * in that order, time and count at least 1, a known source, and per
	 * source no more than its total
	 */
	CHECK(!cap->n_losses || cap->minor >= 4);
	CHECK(cap->n_losses <= MS_CAPTURE_LOSSES_MAX);
	{
		uint64_t left[2] = { cap->lost_kernel, cap->lost_collector };

		for (i = 0; i < cap->n_losses; i++) {
			const struct ms_cap_loss *x = &cap->losses[i];

			CHECK(x->source == MS_LOST_KERNEL || x->source == MS_LOST_COLLECTOR);
			CHECK(x->time >= 1 && x->count >= 1);
			CHECK(x->count <= left[x->source]);
			left[x->source] -= x->count;
			if (i)
				CHECK(x[-1].time < x->time ||
				      (x[-1].time == x->time && x[-1].source < x->source));
		}
	}
	/*
	 * intervals and evidence (1.5, only with the off-cpu flag): every
	 * reference in its table, the times missing says, evidence unique and
	 * sorted, intervals in order
	 */
	CHECK(!(cap->n_intervals || cap->n_evidence) ||
	      ((cap->flags & MS_CAPTURE_OFF_CPU) && cap->minor >= 5));
	for (i = 0; i < cap->n_evidence; i++) {
		const struct ms_cap_evidence *e = &cap->evidence[i], *p = e - 1;

		CHECK(e->cause < MS_CAUSE_COUNT && e->preempt <= 1);
		CHECK(!(e->sources & ~(uint32_t)(MS_EVIDENCE_STATE | MS_EVIDENCE_SWITCH)));
		CHECK(!e->state || (e->sources & MS_EVIDENCE_STATE));
		CHECK(!e->preempt || (e->sources & MS_EVIDENCE_SWITCH));
		if (i)
			CHECK(p->cause < e->cause || (p->cause == e->cause &&
			      (p->sources < e->sources || (p->sources == e->sources &&
			       (p->state < e->state || (p->state == e->state &&
				p->preempt < e->preempt))))));
	}
	for (i = 0; i < cap->n_intervals; i++) {
		const struct ms_cap_interval *x = &cap->intervals[i], *p = x - 1;
		bool no_start = x->missing == MS_INTERVAL_BEGAN_INSIDE ||
				x->missing == MS_INTERVAL_LOST_START;
		uint64_t key = x->start ? x->start : x->end, pkey;

		CHECK(x->thread < cap->n_threads && x->evidence < cap->n_evidence);
		CHECK(x->stack == MS_NONE || x->stack < cap->n_stacks);
		CHECK(x->missing < MS_INTERVAL_MISSING_COUNT);
		if (x->missing == MS_INTERVAL_COMPLETE)
			CHECK(x->start && x->start <= x->end);
		else if (no_start)
			CHECK(!x->start && x->end && x->cpu == MS_NONE && x->stack == MS_NONE);
		else
			CHECK(x->start && !x->end);
		if (!i)
			continue;
		pkey = p->start ? p->start : p->end;
		CHECK(pkey < key || (pkey == key && (p->thread < x->thread ||
		      (p->thread == x->thread && (p->end < x->end ||
		       (p->end == x->end && p->stack <= x->stack))))));
	}
	/*
	 * JIT data (1.6, no flag): a perf-map or jit-object module's range in
	 * the address space and no base on any other; perf-map rows one per
	 * pid, sorted, each a known status and an errno
	 */
	for (i = 0; i < cap->n_modules; i++) {
		const struct ms_cap_module *m = &cap->modules[i];

		if (ms_module_kind_has_base(m->kind))
			CHECK(cap->minor >= MS_CAPTURE_MINOR_JIT && m->base && m->size &&
			      m->base <= UINT64_MAX - m->size);
		else
			CHECK(!m->base);
	}
	CHECK(!cap->n_perf_maps || cap->minor >= MS_CAPTURE_MINOR_JIT);
	for (i = 0; i < cap->n_perf_maps; i++) {
		const struct ms_cap_perf_map *x = &cap->perf_maps[i];

		CHECK(x->path < cap->n_strings && x->status < MS_JIT_READ_STATUS_COUNT &&
		      x->err <= MS_CAP_ERRNO_MAX);
		CHECK(!i || x[-1].pid < x->pid);
		CHECK(ms_capture_perf_map(cap, x->pid) == x);
	}
	/*
	 * The duty in force, by binary search, is the last row at or before a
	 * time (found here by a walk: samples are sorted by time too).
	 */
	for (i = 0, k = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];

		while (k < cap->n_duty && cap->duty[k].time <= s->time)
			k++;
		CHECK(ms_capture_duty_at(cap, s->time) ==
		      (k ? cap->duty[k - 1].duty_ppm : MS_DUTY_FULL));
		CHECK(ms_capture_sample_weight(cap, s) >= s->period);
	}
	for (i = 0; i < cap->n_duty; i++) {
		CHECK(ms_capture_duty_at(cap, cap->duty[i].time) == cap->duty[i].duty_ppm);
		if (cap->duty[i].time)
			CHECK(ms_capture_duty_at(cap, cap->duty[i].time - 1) ==
			      (i ? cap->duty[i - 1].duty_ppm : MS_DUTY_FULL));
	}

	/* The accessors consumers call per row. */
	for (i = 0; i < cap->n_modules; i++) {
		CHECK(ms_module_basename(cap, i));
		CHECK(*ms_module_label(cap, i));
	}
	for (i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *f = &cap->frames[i];
		int need = ms_frame_label(NULL, 0, cap, f);
		char *label;

		CHECK(need > 0);
		label = malloc(need + 1);
		CHECK(label);
		CHECK(ms_frame_label(label, need + 1, cap, f) == need);
		CHECK(strlen(label) == (size_t)need);
		free(label);
		CHECK(ms_frame_chain_len(f) >= 1);
		CHECK(ms_cap_reason_name(f->reason));
		(void)ms_frame_unnamed(cap, f);
		for (k = 0; k < f->n_lines; k++)
			(void)strlen(cap->strings[cap->functions[cap->lines[f->first_line + k].function].name]);
	}
	for (i = 0; i < cap->n_samples; i++)
		CHECK(ms_stack_end_name(cap->samples[i].end));

	/* tasks and waits (minor 8): references in range, rows per task, times inside */
	CHECK(!cap->n_tasks || cap->minor >= MS_CAPTURE_MINOR_TASKS);
	CHECK(!cap->n_waits || cap->n_tasks);
	for (i = 0, k = 0; i < cap->n_tasks; i++) {
		const struct ms_cap_task *t = &cap->tasks[i];
		uint64_t rows = 0;

		CHECK(t->kind && t->kind < cap->n_strings && t->first_time <= t->last_time);
		CHECK(t->thread == MS_NONE || (t->thread < cap->n_threads &&
					       cap->threads[t->thread].pid == t->pid));
		CHECK(t->waits + t->changed + t->dropped >= 1);
		for (; k < cap->n_waits && cap->waits[k].task == i; k++, rows++) {
			const struct ms_cap_wait *x = &cap->waits[k];

			CHECK(x->stack == MS_NONE || x->stack < cap->n_stacks);
			CHECK(x->reason == MS_NONE || (x->reason && x->reason < cap->n_strings));
			CHECK(x->time >= t->first_time && x->time <= t->last_time);
			CHECK(!rows || x[-1].time < x->time);
		}
		CHECK(rows == t->waits);
	}
	CHECK(k == cap->n_waits);
}

/* ---- the analysis views, what a report and ms-analyze compute ---- */

static void check_funcs(const struct ms_funcs *f, const struct ms_capture *cap)
{
	uint32_t i;

	if (!cap->n_frames) {
		CHECK(f->n == 0);
		return;
	}
	CHECK(f->chain_start[0] == 0);
	for (i = 0; i < cap->n_frames; i++) {
		CHECK(f->chain_start[i + 1] - f->chain_start[i] ==
		      ms_frame_chain_len(&cap->frames[i]));
		CHECK(f->frame_func[i] == f->chain[f->chain_start[i + 1] - 1]);
	}
	for (i = 0; i < f->chain_start[cap->n_frames]; i++)
		CHECK(f->chain[i] < f->n);
	for (i = 0; i < f->n; i++)
		CHECK(f->funcs[i].label && f->funcs[i].module_name && *f->funcs[i].module_label &&
		      f->funcs[i].file_name);
}

static void check_views(const struct ms_capture *cap)
{
	struct ms_summary s;
	struct ms_top top;
	struct ms_tree tree;
	struct ms_query tq;
	struct ms_sym_problems pr;
	uint64_t sum, framed = 0, bare = 0, unsym, samples = ms_capture_sample_count(cap);
	uint32_t i, k;

	/* every view counts a row count times; rows without frames of a cut stack are not the root's */
	for (i = 0; i < cap->n_samples; i++)
		if (cap->samples[i].stack != MS_NONE)
			framed += cap->samples[i].count;
		else if (!ms_stack_end_truncated(cap->samples[i].end))
			bare += cap->samples[i].count;

	CHECK(ms_summary_compute(&s, cap) == 0);
	CHECK(s.samples == samples && s.n_threads == cap->n_threads);
	CHECK(s.unsymbolized <= framed);
	for (i = 0, sum = 0; i < s.n_threads; i++)
		sum += s.threads[i].samples;
	CHECK(sum == samples);
	for (i = 0, sum = 0; i < s.n_ends; i++) {
		sum += s.ends[i].samples;
		if (i)
			CHECK(s.ends[i - 1].samples > s.ends[i].samples ||
			      (s.ends[i - 1].samples == s.ends[i].samples &&
			       s.ends[i - 1].reason < s.ends[i].reason));
	}
	CHECK(sum == samples);
	CHECK(ms_unsymbolized_samples(cap, &unsym) == 0 && unsym == s.unsymbolized);
	ms_summary_release(&s);

	for (int sort = MS_SORT_SELF; sort <= MS_SORT_TOTAL; sort++) {
		struct ms_query q;

		ms_query_init(&q, MS_VIEW_TOP);
		q.sort = (enum ms_sort)sort;
		CHECK(ms_top_compute(&top, cap, &q) == 0);
		check_funcs(&top.sel.keys.funcs, cap);
		CHECK(top.sel.selected == samples && top.n <= top.sel.keys.n);
		for (i = 0, sum = 0; i < top.n; i++) {
			const struct ms_top_entry *e = &top.entries[i], *p = e - 1;

			CHECK(e->key < top.sel.keys.n);
			CHECK(e->self <= e->total && e->total <= framed && e->total);
			sum += e->self;
			if (!i)
				continue;
			if (sort == MS_SORT_SELF)
				CHECK(p->self > e->self || (p->self == e->self && p->total >= e->total));
			else
				CHECK(p->total > e->total || (p->total == e->total && p->self >= e->self));
		}
		CHECK(sum == framed);
		ms_top_release(&top);
	}

	ms_query_init(&tq, MS_VIEW_TREE);
	CHECK(ms_tree_build(&tree, cap, &tq) == 0);
	check_funcs(&tree.sel.keys.funcs, cap);
	CHECK(tree.n >= 1 && tree.sel.selected == samples);
	CHECK(tree.nodes[0].total == samples);
	CHECK(tree.nodes[0].self == bare);
	for (i = 0; i < tree.n; i++) {
		const struct ms_tree_node *nd = &tree.nodes[i];

		if (i) {
			CHECK(nd->parent < i && nd->key < tree.sel.keys.n);
			CHECK(nd->depth == tree.nodes[nd->parent].depth + 1);
		}
		CHECK(nd->self <= nd->total);
		CHECK(!nd->n_children || nd->first_child + nd->n_children <= tree.n - 1);
		for (k = 0, sum = nd->self; k < nd->n_children; k++) {
			uint32_t c = tree.children[nd->first_child + k];

			CHECK(c < tree.n && tree.nodes[c].parent == i);
			sum += tree.nodes[c].total;
		}
		CHECK(sum == nd->total);
	}
	ms_tree_release(&tree);

	CHECK(ms_sym_problems_compute(&pr, cap) == 0);
	CHECK(pr.samples == samples && pr.unsymbolized == unsym);
	for (i = 0, sum = 0; i < pr.n_modules; i++) {
		const struct ms_sym_problem_module *m = &pr.modules[i];

		CHECK(m->module == MS_NONE || m->module < cap->n_modules);
		CHECK(m->samples <= framed);
		CHECK(m->first_address + (uint64_t)m->n_addresses <= pr.n_addresses);
		for (k = m->first_address; k < m->first_address + m->n_addresses; k++) {
			CHECK(pr.addresses[k].frame < cap->n_frames);
			CHECK(pr.addresses[k].samples <= m->samples);
		}
		sum += m->n_addresses;
	}
	CHECK(sum == pr.n_addresses);
	ms_sym_problems_release(&pr);
}

/* What ms-analyze and microscope report print, in every form. */
static void write_views(const struct ms_capture *cap)
{
	struct ms_query report, top, tree, threads, timeline;

	ms_query_init(&report, MS_VIEW_REPORT);
	ms_query_init(&top, MS_VIEW_TOP);
	top.sort = MS_SORT_TOTAL;
	ms_query_init(&tree, MS_VIEW_TREE);
	ms_query_init(&threads, MS_VIEW_THREADS);
	ms_query_init(&timeline, MS_VIEW_TIMELINE);
	for (int json = 0; json <= 1; json++) {
		struct ms_view_out o = { .f = null_out, .json = json };

		CHECK(ms_report_write(&o, cap, &report) == 0);
		CHECK(ms_summary_write(null_out, cap, json) == 0);
		CHECK(ms_top_write(&o, cap, &top) == 0);
		CHECK(ms_tree_write(&o, cap, &tree) == 0);
		CHECK(ms_threads_write(&o, cap, &threads) == 0);
		/* a capture whose samples carry no times (a folded import) has no timeline */
		CHECK(ms_timeline_write(&o, cap, &timeline) == 0 ||
		      (cap->n_samples && !cap->samples[cap->n_samples - 1].time));
		CHECK(ms_sym_problems_write(null_out, cap, json) == 0);
	}
}

/* The time all samples stand for, saturating (order does not change it). */
static uint64_t weight_sum(const struct ms_capture *cap)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < cap->n_samples; i++)
		sum = ms_weight_add(sum, ms_capture_sample_weight(cap, &cap->samples[i]));
	return sum;
}

/* What ms-export writes. */
static void export_all(const struct ms_capture *cap)
{
	struct ms_export_options o = MS_EXPORT_OPTIONS_INIT;
	/* pprof's values are int64: a capture counting or weighing more may be refused */
	bool pprof_fits = ms_capture_sample_count(cap) <= INT64_MAX &&
			  weight_sum(cap) <= INT64_MAX;

	for (enum ms_format f = MS_FORMAT_PPROF; f <= MS_FORMAT_SPEEDSCOPE; f++)
		CHECK(ms_export(null_out, cap, f, &o) == 0 || (f == MS_FORMAT_PPROF && !pprof_fits));
	o.weight = MS_WEIGHT_TIME;
	o.thread_root = true;
	o.chrome_form = MS_CHROME_SAMPLES;
	o.producer = "fuzz 1";
	for (enum ms_format f = MS_FORMAT_FOLDED; f <= MS_FORMAT_SPEEDSCOPE; f++)
		CHECK(ms_export(null_out, cap, f, &o) == 0);
	(void)ms_capture_facts(cap);
}

/* ---- round trips ---- */

/* Whether a and b hold the same tables (their versions aside), field by field. */
static bool same_tables(const struct ms_capture *a, const struct ms_capture *b)
{
	uint32_t i;

#define SAME(field) (x->field == y->field)
#define EACH(n, rows) \
	for (i = 0; i < a->n; i++) { \
		const __typeof__(*a->rows) *x = &a->rows[i], *y = &b->rows[i];
#define END }
	if (a->flags != b->flags || a->n_strings != b->n_strings || a->n_info != b->n_info ||
	    a->n_modules != b->n_modules || a->n_frames != b->n_frames ||
	    a->n_functions != b->n_functions || a->n_lines != b->n_lines ||
	    a->n_stacks != b->n_stacks || a->n_threads != b->n_threads ||
	    a->n_samples != b->n_samples || a->n_problems != b->n_problems ||
	    a->n_duty != b->n_duty || a->n_losses != b->n_losses ||
	    a->n_intervals != b->n_intervals || a->n_evidence != b->n_evidence ||
	    a->n_perf_maps != b->n_perf_maps || a->n_tasks != b->n_tasks ||
	    a->n_waits != b->n_waits)
		return false;
	for (i = 0; i < a->n_strings; i++)
		if (strcmp(a->strings[i], b->strings[i]))
			return false;
	EACH(n_info, info)
		if (!SAME(key) || !SAME(value_text) || !SAME(value_number))
			return false;
	END
	EACH(n_modules, modules)
		if (!SAME(path) || !SAME(kind) || !SAME(build_id_len) ||
		    memcmp(x->build_id, y->build_id, x->build_id_len) || !SAME(dev_maj) ||
		    !SAME(dev_min) || !SAME(ino) || !SAME(size) || !SAME(mtime) ||
		    !SAME(status) || !SAME(status_reason) || !SAME(base))
			return false;
	END
	EACH(n_perf_maps, perf_maps)
		if (!SAME(pid) || !SAME(path) || !SAME(status) || !SAME(err) || !SAME(time) ||
		    !SAME(offset) || !SAME(functions) || !SAME(malformed) || !SAME(over_max) ||
		    !SAME(no_code) || !SAME(code_unread) || !SAME(code_bytes))
			return false;
	END
	EACH(n_frames, frames)
		if (!SAME(module) || !SAME(flags) || !SAME(address) || !SAME(name) ||
		    !SAME(symbol_start) || !SAME(reason) || !SAME(first_line) || !SAME(n_lines))
			return false;
	END
	EACH(n_functions, functions)
		if (!SAME(name) || !SAME(system_name) || !SAME(file) || !SAME(start_line))
			return false;
	END
	EACH(n_lines, lines)
		if (!SAME(function) || !SAME(line))
			return false;
	END
	EACH(n_stacks, stacks)
		if (!SAME(parent) || !SAME(frame) || !SAME(depth))
			return false;
	END
	EACH(n_threads, threads)
		if (!SAME(pid) || !SAME(tid) || !SAME(name) || !SAME(first_time) || !SAME(last_time))
			return false;
	END
	EACH(n_samples, samples)
		if (!SAME(time) || !SAME(thread) || !SAME(cpu) || !SAME(stack) || !SAME(end) ||
		    !SAME(period) || !SAME(count))
			return false;
	END
	EACH(n_problems, problems)
		if (!SAME(stage) || !SAME(code) || !SAME(detail) || !SAME(count))
			return false;
	END
	EACH(n_duty, duty)
		if (!SAME(time) || !SAME(duty_ppm) || !SAME(share_ppm) || !SAME(rate) ||
		    !SAME(budget_ppm))
			return false;
	END
	EACH(n_losses, losses)
		if (!SAME(time) || !SAME(count) || !SAME(source))
			return false;
	END
	EACH(n_intervals, intervals)
		if (!SAME(start) || !SAME(end) || !SAME(thread) || !SAME(cpu) || !SAME(stack) ||
		    !SAME(stack_end) || !SAME(missing) || !SAME(evidence))
			return false;
	END
	EACH(n_evidence, evidence)
		if (!SAME(cause) || !SAME(sources) || !SAME(state) || !SAME(preempt))
			return false;
	END
	EACH(n_tasks, tasks)
		if (!SAME(pid) || !SAME(thread) || !SAME(kind) || !SAME(id) || !SAME(first_time) ||
		    !SAME(last_time) || !SAME(waits) || !SAME(changed) || !SAME(dropped))
			return false;
	END
	EACH(n_waits, waits)
		if (!SAME(task) || !SAME(stack) || !SAME(reason) || !SAME(time))
			return false;
	END
#undef SAME
#undef EACH
#undef END
	return a->lost_kernel == b->lost_kernel && a->lost_collector == b->lost_collector &&
	       a->throttled == b->throttled && a->start_time == b->start_time &&
	       a->end_time == b->end_time && a->target_exit_code == b->target_exit_code;
}

/* Encode cap; the bytes load back to the same tables and encode the same. */
static void check_encode(const struct ms_capture *cap, unsigned char **out, size_t *out_len)
{
	unsigned char *buf, *again;
	size_t len, again_len;
	struct ms_capture *back;

	CHECK(ms_capture_encode(cap, &buf, &len) == 0);
	back = ms_capture_load_buffer(buf, len, "fuzz encoded");
	CHECK(back);
	/*
	 * the oldest minor that holds it: 1.8 only with tasks, 1.7 only with Python data (a
	 * frame flagged interpreter or an interpreted end, whatever minor it
	 * was read from, included), 1.6 only with JIT data, 1.5 only
	 * with the off-cpu flag, 1.4 with loss rows, 1.3 with duty rows, 1.2
	 * with counts
	 */
	CHECK(back->major == MS_CAPTURE_MAJOR &&
	      back->minor == (ms_capture_has_tasks(back) ? MS_CAPTURE_MINOR_TASKS :
			      ms_capture_has_python(back) ? MS_CAPTURE_MINOR_PYTHON :
			      ms_capture_has_jit(back) ? MS_CAPTURE_MINOR_JIT :
			      back->flags & MS_CAPTURE_OFF_CPU ? MS_CAPTURE_MINOR_OFF_CPU :
			      back->n_losses ? MS_CAPTURE_MINOR_LOSSES :
			      back->flags & MS_CAPTURE_DUTY ? MS_CAPTURE_MINOR_DUTY :
			      back->flags & MS_CAPTURE_WEIGHTED ? MS_CAPTURE_MINOR_WEIGHTED :
			      MS_CAPTURE_MINOR_UNWEIGHTED));
	CHECK(same_tables(cap, back));
	CHECK(ms_capture_encode(back, &again, &again_len) == 0);
	CHECK(again_len == len && !memcmp(again, buf, len));
	free(again);
	ms_capture_free(back);
	if (out) {
		*out = buf;
		*out_len = len;
	} else {
		free(buf);
	}
}

/*
 * ms-capture --dump, then ms-capture: the capture the stream gives. With
 * a fallback, what microscope symbolize does around ms-symbolize (the
 * dump leaves out failed frame facts; the capture takes the fallback's
 * where the stream names less). A capture the builder made (built) always
 * goes through; any other may be refused with a message (NULL), by the
 * dump (a stack deeper than a stream record holds, say) or by the capture
 * (a module kind of a later version).
 */
static struct ms_capture *dump_and_capture(const struct ms_capture *cap, bool built,
					   const struct ms_capture *fallback)
{
	struct ms_capture_stream_options o = { .fallback = fallback };
	struct ms_capture *back = NULL;
	struct ms_writer *w;
	struct ms_reader *r;
	int rc;

	memfile_empty(&dump_file);
	w = ms_writer_open(dump_file.fd, "fuzz dump", 0);
	CHECK(w);
	rc = ms_capture_dump(cap, w, "fuzz", "1", fallback ? MS_DUMP_OMIT_FAILED : 0);
	if (ms_writer_close(w) < 0 || rc < 0) {
		CHECK(!built);
		return NULL;
	}
	CHECK(lseek(dump_file.fd, 0, SEEK_SET) == 0);
	r = ms_reader_open(dump_file.fd, "fuzz dump");
	CHECK(r);
	rc = ms_capture_from_stream(r, &o, &back);
	ms_reader_free(r);
	CHECK(rc == 0 ? back != NULL : !built);
	return back;
}

static void check_dump(const struct ms_capture *cap)
{
	struct ms_capture *once, *again;
	unsigned char *a, *b;
	size_t a_len, b_len;
	uint64_t period_cap = 0, period_once = 0, count_cap = 0, count_once = 0;
	uint64_t unsym_once, unsym_again;
	uint32_t i;

	/* microscope symbolize with nothing new to find: */
	once = dump_and_capture(cap, false, cap);
	if (!once)
		return;
	/* the same recording: every sample, its weight, the totals. */
	CHECK(once->n_samples == cap->n_samples);
	for (i = 0; i < cap->n_samples; i++) {
		period_cap += cap->samples[i].period;
		period_once += once->samples[i].period;
		count_cap += cap->samples[i].count;
		count_once += once->samples[i].count;
	}
	CHECK(period_once == period_cap);
	CHECK(count_once == count_cap);
	/* the same duty rows, so the same time (samples of a time may change places) */
	CHECK(once->n_duty == cap->n_duty);
	for (i = 0; i < cap->n_duty; i++)
		CHECK(once->duty[i].time == cap->duty[i].time &&
		      once->duty[i].duty_ppm == cap->duty[i].duty_ppm);
	CHECK(weight_sum(once) == weight_sum(cap));
	/* the same loss rows (a dump writes each at its time, the rest at time 0) */
	CHECK(once->n_losses == cap->n_losses);
	for (i = 0; i < cap->n_losses; i++)
		CHECK(once->losses[i].time == cap->losses[i].time &&
		      once->losses[i].count == cap->losses[i].count &&
		      once->losses[i].source == cap->losses[i].source);
	CHECK(once->lost_kernel == cap->lost_kernel && once->lost_collector == cap->lost_collector &&
	      once->throttled == cap->throttled);
	CHECK((once->flags & MS_CAPTURE_INCOMPLETE) == (cap->flags & MS_CAPTURE_INCOMPLETE));
	/* every interval (a row the reader took is one the builder takes), the flag with them */
	CHECK((once->flags & MS_CAPTURE_OFF_CPU) == (cap->flags & MS_CAPTURE_OFF_CPU));
	CHECK(once->n_intervals == cap->n_intervals);
	for (i = 0; i < cap->n_intervals; i++)
		CHECK(once->intervals[i].start == cap->intervals[i].start &&
		      once->intervals[i].end == cap->intervals[i].end &&
		      once->intervals[i].missing == cap->intervals[i].missing);
	/* every perf-map setting, and every module's base (modules keep their order) */
	CHECK(once->n_perf_maps == cap->n_perf_maps);
	for (i = 0; i < cap->n_perf_maps; i++)
		CHECK(once->perf_maps[i].pid == cap->perf_maps[i].pid &&
		      once->perf_maps[i].status == cap->perf_maps[i].status &&
		      once->perf_maps[i].functions == cap->perf_maps[i].functions &&
		      !strcmp(once->strings[once->perf_maps[i].path],
			      cap->strings[cap->perf_maps[i].path]));
	CHECK(once->n_modules == cap->n_modules);
	for (i = 0; i < cap->n_modules; i++)
		CHECK(once->modules[i].base == cap->modules[i].base);
	/* every task with its reads and times, every wait row at its time */
	CHECK(once->n_tasks == cap->n_tasks && once->n_waits == cap->n_waits);
	for (i = 0; i < cap->n_tasks; i++)
		CHECK(once->tasks[i].pid == cap->tasks[i].pid && once->tasks[i].id == cap->tasks[i].id &&
		      once->tasks[i].first_time == cap->tasks[i].first_time &&
		      once->tasks[i].last_time == cap->tasks[i].last_time &&
		      once->tasks[i].waits == cap->tasks[i].waits &&
		      once->tasks[i].changed == cap->tasks[i].changed &&
		      once->tasks[i].dropped == cap->tasks[i].dropped &&
		      !strcmp(once->strings[once->tasks[i].kind], cap->strings[cap->tasks[i].kind]));
	for (i = 0; i < cap->n_waits; i++)
		CHECK(once->waits[i].task == cap->waits[i].task &&
		      once->waits[i].time == cap->waits[i].time &&
		      (once->waits[i].stack == MS_NONE) == (cap->waits[i].stack == MS_NONE));
	check_invariants(once);

	/* The builder's capture: dumped and captured again, the same file; */
	again = dump_and_capture(once, true, NULL);
	check_encode(once, &a, &a_len);
	check_encode(again, &b, &b_len);
	CHECK(a_len == b_len && !memcmp(a, b, a_len));
	free(a);
	free(b);
	ms_capture_free(again);
	/*
	 * symbolized again, it loses no name (a capture the builder did not
	 * make can: two frames at one address with different facts, say).
	 */
	again = dump_and_capture(once, true, once);
	CHECK(ms_unsymbolized_samples(once, &unsym_once) == 0);
	CHECK(ms_unsymbolized_samples(again, &unsym_again) == 0);
	CHECK(unsym_again <= unsym_once);
	ms_capture_free(again);
	ms_capture_free(once);
}

int ms_fuzz_capture(const uint8_t *data, size_t size)
{
	struct ms_capture *cap;
	unsigned char *sealed = NULL;
	const unsigned char *file = data;
	size_t file_len = size;
	const char *save = getenv("MS_FUZZ_CAPTURE_SAVE");

	if (size > FUZZ_CAPTURE_MAX)
		return 0;
	memfile_open(&input_file, "fuzz-capture.msc");
	memfile_open(&dump_file, "fuzz-capture.msr");
	if (!null_out) {
		null_out = fopen("/dev/null", "w");
		CHECK(null_out);
	}
	/* Too short to seal: loaded as it is (and refused). */
	if (size && data[0] != 'M' && (sealed = seal(data + 1, size - 1, data[0] & 1, &file_len)))
		file = sealed;
	memfile_put(&input_file, file, file_len);
	if (save) {
		FILE *f = fopen(save, "wb");

		CHECK(f && fwrite(file, 1, file_len, f) == file_len && fclose(f) == 0);
	}
	cap = ms_capture_load(input_file.path);
	memfile_empty(&input_file);
	free(sealed);
	if (!cap)
		return 0;
	check_invariants(cap);
	check_views(cap);
	write_views(cap);
	export_all(cap);
	check_encode(cap, NULL, NULL);
	if (cap->throttled <= FUZZ_DUMP_THROTTLE_MAX || cap->throttled > MS_DUMP_THROTTLE_MAX)
		check_dump(cap);
	ms_capture_free(cap);
	fflush(null_out);
	return 0;
}

MS_FUZZ_TARGET("fuzz-capture", ms_fuzz_capture)

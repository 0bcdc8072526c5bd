/*
 * problems: the modules and addresses that could not be symbolized, known
 * by the module's identity, with why and how many samples they touch.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "analysis/intervals.h"
#include "util/text.h"
#include "util/json.h"
#include "stream/records.h"
#include "util/error.h"

const char *ms_cap_reason_name(uint32_t reason)
{
	return reason == MS_CAP_UNSYMBOLIZED ? "not-symbolized" : ms_frame_reason_name(reason);
}

int ms_unsymbolized_samples(const struct ms_capture *cap, uint64_t *out)
{
	bool *bad;
	uint32_t i;

	*out = 0;
	if (!cap->n_stacks)
		return 0;
	bad = malloc(cap->n_stacks * sizeof(*bad));
	if (!bad)
		return ms_error("out of memory counting %" PRIu32 " stacks", cap->n_stacks);
	/* A parent comes before its children: one pass marks whole paths. */
	for (i = 0; i < cap->n_stacks; i++) {
		const struct ms_cap_stack *st = &cap->stacks[i];

		bad[i] = ms_frame_unnamed(cap, &cap->frames[st->frame]) ||
			 (st->parent != MS_NONE && bad[st->parent]);
	}
	for (i = 0; i < cap->n_samples; i++)
		if (cap->samples[i].stack < cap->n_stacks && bad[cap->samples[i].stack])
			*out += cap->samples[i].count;
	free(bad);
	return 0;
}

/* Samples ending at each stack node (*out has n_stacks entries, or NULL). */
static int stack_samples(uint64_t **out, const struct ms_capture *cap)
{
	uint64_t *counts;
	uint32_t i;

	*out = NULL;
	if (!cap->n_stacks)
		return 0;
	counts = calloc(cap->n_stacks, sizeof(*counts));
	if (!counts)
		return ms_error("out of memory counting %" PRIu32 " stacks", cap->n_stacks);
	for (i = 0; i < cap->n_samples; i++)
		if (cap->samples[i].stack < cap->n_stacks)
			counts[cap->samples[i].stack] += cap->samples[i].count;
	*out = counts;
	return 0;
}

/* Module m (MS_NONE: in no module) as an index of per-module arrays. */
static uint32_t slot_of(const struct ms_capture *cap, uint32_t m)
{
	return m < cap->n_modules ? m : cap->n_modules;
}

static int cmp_frame_address(const void *a, const void *b, void *data)
{
	const struct ms_capture *cap = data;
	const struct ms_cap_frame *x = &cap->frames[*(const uint32_t *)a];
	const struct ms_cap_frame *y = &cap->frames[*(const uint32_t *)b];
	uint32_t mx = slot_of(cap, x->module), my = slot_of(cap, y->module);

	if (mx != my)
		return mx < my ? -1 : 1;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return *(const uint32_t *)a == *(const uint32_t *)b ? 0 :
	       *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int cmp_module(const void *a, const void *b)
{
	const struct ms_sym_problem_module *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->module == y->module ? 0 : x->module < y->module ? -1 : 1;
}

static int cmp_address(const void *a, const void *b)
{
	const struct ms_sym_problem_address *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->address == y->address ? 0 : x->address < y->address ? -1 : 1;
}

/* Temporary bookkeeping of ms_sym_problems_compute(). */
struct work {
	uint32_t *order;	/* unnamed frames by (module slot, address) */
	uint32_t *frame_addr;	/* per frame: address entry, or MS_NONE */
	uint32_t *frame_mod;	/* per frame: module slot counted for it, or MS_NONE */
	uint32_t *addr_slot;	/* per address entry: its module slot */
	uint32_t *mod_entry;	/* per module slot: module entry, or MS_NONE */
	uint32_t *seen_addr, *seen_mod;
	uint64_t *node_samples;
	uint64_t *slot_samples;
};

static void work_release(struct work *w)
{
	free(w->order);
	free(w->frame_addr);
	free(w->frame_mod);
	free(w->addr_slot);
	free(w->mod_entry);
	free(w->seen_addr);
	free(w->seen_mod);
	free(w->node_samples);
	free(w->slot_samples);
}

int ms_sym_problems_compute(struct ms_sym_problems *v, const struct ms_capture *cap)
{
	uint32_t n_slots = cap->n_modules + 1, n_unnamed = 0, n_addr = 0, i, k, at;
	struct ms_sym_problem_address *addrs = NULL;
	struct work w = { 0 };

	memset(v, 0, sizeof(*v));
	v->samples = ms_capture_sample_count(cap);
	if (ms_unsymbolized_samples(cap, &v->unsymbolized) ||
	    stack_samples(&w.node_samples, cap))
		goto fail;
	w.order = malloc((cap->n_frames ? cap->n_frames : 1) * sizeof(*w.order));
	w.frame_addr = malloc((cap->n_frames ? cap->n_frames : 1) * sizeof(*w.frame_addr));
	w.frame_mod = malloc((cap->n_frames ? cap->n_frames : 1) * sizeof(*w.frame_mod));
	w.addr_slot = malloc((cap->n_frames ? cap->n_frames : 1) * sizeof(*w.addr_slot));
	w.seen_addr = malloc((cap->n_frames ? cap->n_frames : 1) * sizeof(*w.seen_addr));
	addrs = calloc(cap->n_frames ? cap->n_frames : 1, sizeof(*addrs));
	w.mod_entry = malloc(n_slots * sizeof(*w.mod_entry));
	w.seen_mod = malloc(n_slots * sizeof(*w.seen_mod));
	w.slot_samples = calloc(n_slots, sizeof(*w.slot_samples));
	if (!w.order || !w.frame_addr || !w.frame_mod || !w.addr_slot || !w.seen_addr ||
	    !addrs || !w.mod_entry || !w.seen_mod || !w.slot_samples)
		goto oom;

	/* Addresses: unnamed frames, one entry per (module, address). */
	for (i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *fr = &cap->frames[i];

		w.frame_addr[i] = MS_NONE;
		w.frame_mod[i] = fr->reason != MS_SYM_OK || ms_frame_unnamed(cap, fr) ?
				 slot_of(cap, fr->module) : MS_NONE;
		if (ms_frame_unnamed(cap, fr))
			w.order[n_unnamed++] = i;
	}
	qsort_r(w.order, n_unnamed, sizeof(*w.order), cmp_frame_address, (void *)cap);
	for (i = 0; i < n_unnamed; i++) {
		const struct ms_cap_frame *fr = &cap->frames[w.order[i]];

		if (!i || slot_of(cap, fr->module) != w.addr_slot[n_addr - 1] ||
		    fr->address != addrs[n_addr - 1].address) {
			addrs[n_addr].address = fr->address;
			addrs[n_addr].frame = w.order[i];
			addrs[n_addr].reason = fr->reason;
			w.addr_slot[n_addr] = slot_of(cap, fr->module);
			n_addr++;
		}
		w.frame_addr[w.order[i]] = n_addr - 1;
	}

	/* Modules: a status to report, or an unnamed frame. */
	for (i = 0; i < n_slots; i++)
		w.mod_entry[i] = MS_NONE;
	for (i = 0; i < cap->n_modules; i++)
		if (cap->modules[i].status != MS_CAP_MODULE_OK)
			w.mod_entry[i] = 0;
	for (i = 0; i < n_addr; i++)
		w.mod_entry[w.addr_slot[i]] = 0;
	for (i = 0; i < n_slots; i++)
		if (w.mod_entry[i] != MS_NONE)
			v->n_modules++;

	/*
	 * Per stack node, along its path: every sample ending at a node has
	 * the same path; seen_* make each count once per sample.
	 */
	memset(w.seen_addr, 0xff, (cap->n_frames ? cap->n_frames : 1) * sizeof(*w.seen_addr));
	memset(w.seen_mod, 0xff, n_slots * sizeof(*w.seen_mod));
	for (i = 0; i < cap->n_stacks; i++) {
		uint64_t n = w.node_samples[i];
		uint32_t node;

		if (!n)
			continue;
		for (node = i; node != MS_NONE; node = cap->stacks[node].parent) {
			uint32_t f = cap->stacks[node].frame, a = w.frame_addr[f], m = w.frame_mod[f];

			if (a != MS_NONE && w.seen_addr[a] != i) {
				w.seen_addr[a] = i;
				addrs[a].samples += n;
			}
			if (m != MS_NONE && w.seen_mod[m] != i) {
				w.seen_mod[m] = i;
				w.slot_samples[m] += n;
			}
		}
	}

	if (v->n_modules && !(v->modules = calloc(v->n_modules, sizeof(*v->modules))))
		goto oom;
	if (n_addr && !(v->addresses = malloc(n_addr * sizeof(*v->addresses))))
		goto oom;
	for (i = 0, k = 0; i < n_slots; i++)
		if (w.mod_entry[i] != MS_NONE) {
			v->modules[k].module = i < cap->n_modules ? i : MS_NONE;
			v->modules[k].samples = w.slot_samples[i];
			k++;
		}
	if (v->n_modules)
		qsort(v->modules, v->n_modules, sizeof(*v->modules), cmp_module);
	/* Each module's addresses, in the modules' order. */
	for (i = 0, at = 0; i < v->n_modules; i++) {
		uint32_t slot = slot_of(cap, v->modules[i].module);

		v->modules[i].first_address = at;
		for (k = 0; k < n_addr; k++)
			if (w.addr_slot[k] == slot)
				v->addresses[at++] = addrs[k];
		v->modules[i].n_addresses = at - v->modules[i].first_address;
		if (v->modules[i].n_addresses > 1)
			qsort(v->addresses + v->modules[i].first_address, v->modules[i].n_addresses,
			      sizeof(*v->addresses), cmp_address);
	}
	v->n_addresses = at;
	free(addrs);
	work_release(&w);
	return 0;
oom:
	ms_error("out of memory listing the symbolization problems of %" PRIu32 " frames",
		 cap->n_frames);
fail:
	free(addrs);
	work_release(&w);
	ms_sym_problems_release(v);
	return -1;
}

void ms_sym_problems_release(struct ms_sym_problems *v)
{
	free(v->modules);
	free(v->addresses);
	memset(v, 0, sizeof(*v));
}

static void put_build_id(FILE *out, const struct ms_cap_module *m)
{
	for (uint32_t i = 0; i < m->build_id_len; i++)
		fprintf(out, "%02x", m->build_id[i]);
}

/* "/usr/bin/burn: failed (no-symbol), 3 samples (9.1%)" and its identity. */
static void write_module_text(FILE *out, const struct ms_capture *cap,
			      const struct ms_sym_problem_module *pm, uint64_t samples)
{
	const struct ms_cap_module *m;
	const char *path;

	if (pm->module == MS_NONE) {
		fprintf(out, "[no module]: %" PRIu64 " sample%s (%.1f%%)\n", pm->samples,
			pm->samples == 1 ? "" : "s", ms_percent(pm->samples, samples));
		return;
	}
	m = &cap->modules[pm->module];
	path = cap->strings[m->path];
	ms_text_put(out, *path ? path : ms_module_label(cap, pm->module));
	fprintf(out, ": %s", ms_cap_module_status_name(m->status));
	if (m->status_reason)
		fprintf(out, " (%s)", ms_cap_reason_name(m->status_reason));
	fprintf(out, ", %" PRIu64 " sample%s (%.1f%%)\n", pm->samples,
		pm->samples == 1 ? "" : "s", ms_percent(pm->samples, samples));
	fprintf(out, "  identity: %s, ", ms_module_kind_name(m->kind));
	if (m->build_id_len) {
		fputs("build id ", out);
		put_build_id(out, m);
	} else {
		fputs("no build id", out);
	}
	/* a perf-map or jit-object module is code in the process, no file: its range says which */
	if (ms_module_kind_has_base(m->kind))
		fprintf(out, ", range 0x%" PRIx64 "..0x%" PRIx64, m->base, m->base + m->size);
	else if (m->dev_maj || m->dev_min || m->ino || m->size || m->mtime)
		fprintf(out, ", device %" PRIu32 ":%" PRIu32 ", inode %" PRIu64 ", size %" PRIu64
			", mtime %" PRIu64, m->dev_maj, m->dev_min, m->ino, m->size, m->mtime);
	fputc('\n', out);
}

static void write_text(FILE *out, const struct ms_capture *cap, const struct ms_sym_problems *v)
{
	size_t wsamples = 7, wreason = 6;
	uint32_t i, k;

	if (v->unsymbolized)
		fprintf(out, "unsymbolized: %" PRIu64 " of %" PRIu64 " samples (%.1f%%) have a "
			"frame without a name\n", v->unsymbolized, v->samples,
			ms_percent(v->unsymbolized, v->samples));
	else
		fputs("unsymbolized: none\n", out);
	if (!v->n_modules) {
		fputs("no module or address to report\n", out);
		return;
	}
	fprintf(out, "%" PRIu32 " module%s to report, %" PRIu32 " address%s without a name\n",
		v->n_modules, v->n_modules == 1 ? "" : "s", v->n_addresses,
		v->n_addresses == 1 ? "" : "es");
	for (i = 0; i < v->n_addresses; i++) {
		const struct ms_sym_problem_address *a = &v->addresses[i];

		if (ms_digits(a->samples) > wsamples)
			wsamples = ms_digits(a->samples);
		if (strlen(ms_cap_reason_name(a->reason)) > wreason)
			wreason = strlen(ms_cap_reason_name(a->reason));
	}
	for (i = 0; i < v->n_modules; i++) {
		const struct ms_sym_problem_module *pm = &v->modules[i];

		fputc('\n', out);
		write_module_text(out, cap, pm, v->samples);
		if (!pm->n_addresses)
			continue;
		fprintf(out, "  %*s  %6s  %-*s  address\n", (int)wsamples, "samples", "share",
			(int)wreason, "reason");
		for (k = pm->first_address; k < pm->first_address + pm->n_addresses; k++) {
			const struct ms_sym_problem_address *a = &v->addresses[k];

			fprintf(out, "  %*" PRIu64 "  %5.1f%%  %-*s  0x%" PRIx64 "\n", (int)wsamples,
				a->samples, ms_percent(a->samples, v->samples), (int)wreason,
				ms_cap_reason_name(a->reason), a->address);
		}
	}
}

static void json_hex(struct ms_json *j, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	ms_json_string(j, buf);
}

static void write_json(FILE *out, const struct ms_capture *cap, const struct ms_sym_problems *v)
{
	struct ms_json j;
	char id[2 * 20 + 1];
	uint32_t i, k;

	ms_json_init(&j, out);
	ms_json_object_begin(&j);
	ms_json_key(&j, "samples");
	ms_json_uint(&j, v->samples);
	ms_json_key(&j, "unsymbolized");
	ms_json_uint(&j, v->unsymbolized);
	ms_json_key(&j, "unsymbolized_percent");
	ms_json_double(&j, ms_percent(v->unsymbolized, v->samples), 2);
	ms_json_key(&j, "modules");
	ms_json_array_begin(&j);
	for (i = 0; i < v->n_modules; i++) {
		const struct ms_sym_problem_module *pm = &v->modules[i];
		const struct ms_cap_module *m = pm->module == MS_NONE ? NULL : &cap->modules[pm->module];
		bool why = m && m->status_reason;

		ms_json_object_begin(&j);
		ms_json_key(&j, "path");
		ms_json_string(&j, m ? cap->strings[m->path] : "");
		ms_json_key(&j, "kind");
		ms_json_string(&j, m ? ms_module_kind_name(m->kind) : "none");
		ms_json_key(&j, "build_id");
		id[0] = '\0';
		for (k = 0; m && k < m->build_id_len; k++)
			snprintf(id + 2 * k, sizeof(id) - 2 * k, "%02x", m->build_id[k]);
		ms_json_string(&j, id);
		ms_json_key(&j, "dev_major");
		ms_json_uint(&j, m ? m->dev_maj : 0);
		ms_json_key(&j, "dev_minor");
		ms_json_uint(&j, m ? m->dev_min : 0);
		ms_json_key(&j, "inode");
		ms_json_uint(&j, m ? m->ino : 0);
		ms_json_key(&j, "size");
		ms_json_uint(&j, m ? m->size : 0);
		ms_json_key(&j, "mtime");
		ms_json_uint(&j, m ? m->mtime : 0);
		ms_json_key(&j, "status");
		ms_json_string(&j, m ? ms_cap_module_status_name(m->status) : "");
		ms_json_key(&j, "reason");
		ms_json_string(&j, why ? ms_cap_reason_name(m->status_reason) : "");
		ms_json_key(&j, "samples");
		ms_json_uint(&j, pm->samples);
		ms_json_key(&j, "addresses");
		ms_json_array_begin(&j);
		for (k = pm->first_address; k < pm->first_address + pm->n_addresses; k++) {
			const struct ms_sym_problem_address *a = &v->addresses[k];

			ms_json_object_begin(&j);
			ms_json_key(&j, "address");
			json_hex(&j, a->address);
			ms_json_key(&j, "reason");
			ms_json_string(&j, ms_cap_reason_name(a->reason));
			ms_json_key(&j, "samples");
			ms_json_uint(&j, a->samples);
			ms_json_object_end(&j);
		}
		ms_json_array_end(&j);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	/* left open: write_recording_json() adds its keys and closes it */
}

/*
 * The off-CPU intervals with an end missing, per reason, and the problem
 * rows the stages counted (a switch-in with no switch-out, say): what
 * limits trust in off-CPU time.
 */
static void write_recording_text(FILE *out, const struct ms_capture *cap,
				 const struct ms_off_cpu_view *v)
{
	const char *meaning;
	char a[32];
	uint32_t m, i;

	if (v->recorded && !v->n_incomplete) {
		fprintf(out, "\noff-CPU intervals: none incomplete (%" PRIu64 " complete)\n", v->intervals);
	} else if (v->recorded) {
		fprintf(out, "\noff-CPU intervals: %" PRIu64 " of %" PRIu64 " incomplete: an end is "
			"missing, so they add no time to any view\n", v->n_incomplete,
			v->n_incomplete + v->intervals);
		fprintf(out, "  %8s  %-12s  what it means\n", "count", "missing");
		for (m = 0; m < MS_INTERVAL_MISSING_COUNT; m++) {
			if (!v->incomplete[m])
				continue;
			fprintf(out, "  %8" PRIu64 "  %-12s  %s", v->incomplete[m],
				m ? ms_interval_missing_name(m) : "unknown",
				m ? ms_interval_missing_words(m) : "an end is missing");
			if (v->incomplete_known[m]) {
				ms_format_ns(a, sizeof(a), v->incomplete_known[m]);
				fprintf(out, " (at least %s inside the recording)", a);
			}
			fputc('\n', out);
		}
	}
	if (!cap->n_problems)
		return;		/* the summary says "problems: none" */
	fprintf(out, "\nrecording problems: %" PRIu32 " kind%s the stages counted\n", cap->n_problems,
		cap->n_problems == 1 ? "" : "s");
	for (i = 0; i < cap->n_problems; i++) {
		const struct ms_cap_problem *p = &cap->problems[i];

		fputs("  ", out);
		ms_text_put(out, cap->strings[p->stage]);
		fputs("  ", out);
		ms_text_put(out, cap->strings[p->code]);
		fprintf(out, "  %" PRIu64 "  ", p->count);
		ms_text_put(out, cap->strings[p->detail]);
		fputc('\n', out);
		if ((meaning = ms_jit_problem_meaning(cap->strings[p->stage], cap->strings[p->code])))
			fprintf(out, "    what it means: %s\n", meaning);
	}
}

/* ,"off_cpu":null|{..},"recording":[..] after the modules, closing the object. */
static void write_recording_json(FILE *out, const struct ms_capture *cap,
				 const struct ms_off_cpu_view *v)
{
	struct ms_json j;

	ms_json_init(&j, out);
	j.need_comma = true;
	ms_json_key(&j, "off_cpu");
	if (v->recorded) {
		ms_json_object_begin(&j);
		ms_json_key(&j, "intervals");
		ms_json_uint(&j, v->intervals + v->n_incomplete);
		ms_json_key(&j, "incomplete");
		ms_off_cpu_json_incomplete(&j, v);
		ms_json_object_end(&j);
	} else {
		ms_json_null(&j);
	}
	/* only with perf-map settings, so that every other capture's JSON stays as it was */
	if (cap->n_perf_maps) {
		ms_json_key(&j, "perf_maps");
		ms_perf_maps_json(&j, cap, true);
	}
	/* only with Python processes whose frames were not walked, likewise */
	if (ms_py_processes_any_problem(cap)) {
		ms_json_key(&j, "python");
		ms_py_processes_json(&j, cap, true);
	}
	ms_json_key(&j, "recording");
	ms_view_json_problem_rows(&j, cap);
}

int ms_sym_problems_write(FILE *out, const struct ms_capture *cap, bool json)
{
	struct ms_sym_problems v;
	struct ms_off_cpu_view off;
	struct ms_query q;

	ms_query_init(&q, MS_VIEW_PROBLEMS);
	if (ms_sym_problems_compute(&v, cap))
		return -1;
	if (ms_off_cpu_view_compute(&off, cap, &q)) {
		ms_sym_problems_release(&v);
		return -1;
	}
	if (json) {
		write_json(out, cap, &v);
		write_recording_json(out, cap, &off);
		fputs("}\n", out);
	} else {
		write_text(out, cap, &v);
		ms_perf_maps_problems_text(out, cap);
		ms_py_processes_problems_text(out, cap);
		write_recording_text(out, cap, &off);
	}
	ms_off_cpu_view_release(&off);
	ms_sym_problems_release(&v);
	return 0;
}

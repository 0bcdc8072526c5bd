/*
 * top: the flat profile, self and total samples per function.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "util/text.h"
#include "util/json.h"
#include "util/error.h"

void ms_func_put_location(FILE *out, const struct ms_func *fn)
{
	ms_text_put(out, fn->file_name);
	if (fn->line)
		fprintf(out, ":%" PRIu32, fn->line);
}

void ms_func_json_location(struct ms_json *j, const struct ms_capture *cap,
			   const struct ms_func *fn)
{
	ms_json_key(j, "file");
	ms_json_string(j, cap->strings[fn->file]);
	ms_json_key(j, "line");
	ms_json_uint(j, fn->line);
}

int ms_func_cmp_label(const struct ms_funcs *f, uint32_t a, uint32_t b)
{
	int c = strcmp(f->funcs[a].label, f->funcs[b].label);

	if (!c)
		c = strcmp(f->funcs[a].module_label, f->funcs[b].module_label);
	if (!c && a != b)
		c = a < b ? -1 : 1;
	return c;
}

struct sort_ctx {
	const struct ms_funcs *funcs;
	enum ms_top_sort sort;
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a == b ? 0 : a > b ? -1 : 1;
}

static int cmp_entry(const void *pa, const void *pb, void *data)
{
	const struct sort_ctx *ctx = data;
	const struct ms_top_entry *a = pa, *b = pb;
	int c;

	if (ctx->sort == MS_TOP_SORT_TOTAL) {
		if (!(c = cmp_u64_desc(a->total, b->total)))
			c = cmp_u64_desc(a->self, b->self);
	} else {
		if (!(c = cmp_u64_desc(a->self, b->self)))
			c = cmp_u64_desc(a->total, b->total);
	}
	return c ? c : ms_func_cmp_label(ctx->funcs, a->func, b->func);
}

int ms_stack_samples(uint64_t **out, const struct ms_capture *cap)
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

int ms_top_compute(struct ms_top *t, const struct ms_capture *cap, enum ms_top_sort sort)
{
	uint64_t *node_samples = NULL, *self = NULL, *total = NULL;
	uint32_t *seen = NULL;
	struct sort_ctx ctx;
	uint32_t i, nf;

	memset(t, 0, sizeof(*t));
	t->samples = ms_capture_sample_count(cap);
	if (ms_funcs_build(&t->funcs, cap))
		return -1;
	if (ms_stack_samples(&node_samples, cap))
		goto fail;
	nf = t->funcs.n;
	if (!nf)
		goto done;
	self = calloc(nf, sizeof(*self));
	total = calloc(nf, sizeof(*total));
	seen = malloc(nf * sizeof(*seen));
	if (!self || !total || !seen)
		goto oom;
	memset(seen, 0xff, nf * sizeof(*seen));

	/*
	 * Per stack node rather than per sample: every sample ending at a node
	 * has the same path. seen[] marks the functions already counted on the
	 * current path, so recursion counts once. Each frame counts every
	 * function of its inline chain; self goes to the innermost.
	 */
	for (i = 0; i < cap->n_stacks; i++) {
		uint64_t n = node_samples[i];
		uint32_t node, k;

		if (!n)
			continue;
		self[t->funcs.frame_func[cap->stacks[i].frame]] += n;
		for (node = i; node != MS_NONE; node = cap->stacks[node].parent) {
			uint32_t frame = cap->stacks[node].frame;

			for (k = t->funcs.chain_start[frame]; k < t->funcs.chain_start[frame + 1]; k++) {
				uint32_t fn = t->funcs.chain[k];

				if (seen[fn] == i)
					continue;
				seen[fn] = i;
				total[fn] += n;
			}
		}
	}

	for (i = 0; i < nf; i++)
		if (total[i])
			t->n++;
	if (t->n && !(t->entries = malloc(t->n * sizeof(*t->entries))))
		goto oom;
	t->n = 0;
	for (i = 0; i < nf; i++)
		if (total[i])
			t->entries[t->n++] = (struct ms_top_entry){ i, self[i], total[i] };
	ctx.funcs = &t->funcs;
	ctx.sort = sort;
	if (t->n)
		qsort_r(t->entries, t->n, sizeof(*t->entries), cmp_entry, &ctx);
done:
	free(node_samples);
	free(self);
	free(total);
	free(seen);
	return 0;
oom:
	ms_error("out of memory counting %" PRIu32 " functions", nf);
fail:
	free(node_samples);
	free(self);
	free(total);
	free(seen);
	ms_top_release(t);
	return -1;
}

void ms_top_release(struct ms_top *t)
{
	ms_funcs_release(&t->funcs);
	free(t->entries);
	memset(t, 0, sizeof(*t));
}

static void write_text(FILE *out, const struct ms_top *t, uint32_t rows)
{
	size_t wself = 4, wtotal = 5, wmod = 6;
	uint32_t i;

	for (i = 0; i < rows; i++) {
		const struct ms_top_entry *e = &t->entries[i];
		size_t w;

		if (ms_digits(e->self) > wself)
			wself = ms_digits(e->self);
		if (ms_digits(e->total) > wtotal)
			wtotal = ms_digits(e->total);
		if ((w = ms_text_width(t->funcs.funcs[e->func].module_label)) > wmod)
			wmod = w;
	}
	fprintf(out, "%" PRIu64 " samples, %" PRIu32 " functions", t->samples, t->n);
	if (rows < t->n)
		fprintf(out, " (the first %" PRIu32 " shown)", rows);
	fputc('\n', out);
	fprintf(out, "%6s  %*s  %6s  %*s  %-*s  function\n", "self%", (int)wself, "self",
		"total%", (int)wtotal, "total", (int)wmod, "module");
	for (i = 0; i < rows; i++) {
		const struct ms_top_entry *e = &t->entries[i];
		const struct ms_func *fn = &t->funcs.funcs[e->func];

		fprintf(out, "%5.1f%%  %*" PRIu64 "  %5.1f%%  %*" PRIu64 "  ",
			ms_percent(e->self, t->samples), (int)wself, e->self,
			ms_percent(e->total, t->samples), (int)wtotal, e->total);
		ms_text_pad(out, fn->module_label, wmod, 0);
		fputs("  ", out);
		ms_text_put(out, fn->label);
		if (*fn->file_name) {
			fputs(" (", out);
			ms_func_put_location(out, fn);
			fputc(')', out);
		}
		fputc('\n', out);
	}
}

static void write_json(FILE *out, const struct ms_capture *cap, const struct ms_top *t,
		       uint32_t rows)
{
	struct ms_json j;
	uint32_t i;

	ms_json_init(&j, out);
	ms_json_object_begin(&j);
	ms_json_key(&j, "samples");
	ms_json_uint(&j, t->samples);
	ms_json_key(&j, "functions");
	ms_json_array_begin(&j);
	for (i = 0; i < rows; i++) {
		const struct ms_top_entry *e = &t->entries[i];
		const struct ms_func *fn = &t->funcs.funcs[e->func];

		ms_json_object_begin(&j);
		ms_json_key(&j, "name");
		ms_json_string(&j, fn->label);
		ms_json_key(&j, "module");
		ms_json_string(&j, fn->module_name);
		ms_func_json_location(&j, cap, fn);
		ms_json_key(&j, "self");
		ms_json_uint(&j, e->self);
		ms_json_key(&j, "self_percent");
		ms_json_double(&j, ms_percent(e->self, t->samples), 2);
		ms_json_key(&j, "total");
		ms_json_uint(&j, e->total);
		ms_json_key(&j, "total_percent");
		ms_json_double(&j, ms_percent(e->total, t->samples), 2);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	ms_json_object_end(&j);
	fputc('\n', out);
}

int ms_top_write(FILE *out, const struct ms_capture *cap, const struct ms_top_options *o)
{
	struct ms_top t;
	uint32_t rows;

	if (ms_top_compute(&t, cap, o->sort))
		return -1;
	rows = o->limit && o->limit < t.n ? o->limit : t.n;
	if (o->json)
		write_json(out, cap, &t, rows);
	else
		write_text(out, &t, rows);
	ms_top_release(&t);
	return 0;
}

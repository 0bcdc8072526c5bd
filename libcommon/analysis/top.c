/*
 * top: the flat profile, self and total per key.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "analysis/present.h"
#include "capture/weight.h"
#include "util/error.h"
#include "util/json.h"
#include "util/text.h"

struct sort_ctx {
	const struct ms_keys *keys;
	enum ms_sort sort;
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

	if (ctx->sort == MS_SORT_TOTAL) {
		if (!(c = cmp_u64_desc(a->total, b->total)))
			c = cmp_u64_desc(a->self, b->self);
	} else {
		if (!(c = cmp_u64_desc(a->self, b->self)))
			c = cmp_u64_desc(a->total, b->total);
	}
	return c ? c : ms_key_cmp(ctx->keys, a->key, b->key);
}

/*
 * One walk over the stack nodes from the outermost in, depth first, with
 * the weight at each node and below: a key counts a node's weight in its
 * total when no node above it on the path has the key (cnt[key] counts
 * them), so recursion counts once; a node's own weight is self of the
 * innermost key on its path. Each node is visited once, whatever the
 * depth, and classes are summed first: they differ only in their
 * truncated key, which is not a row.
 */
static int count_paths(struct ms_select *s, uint64_t *self, uint64_t *total)
{
	const struct ms_capture *cap = s->cap;
	uint32_t n = cap->n_stacks, depth = 0, c, i, max;
	uint32_t *cnt = NULL, *st_node = NULL, *st_next = NULL, *st_last = NULL;
	uint64_t *sub = NULL;

	ms_select_subtree(s);
	for (c = 0; c < s->n_classes; c++) {
		if (!s->self[c])
			continue;
		if (!sub) {
			sub = s->self[c];
			continue;
		}
		for (i = 0; i < n; i++)
			sub[i] = ms_weight_add(sub[i], s->self[c][i]);
		free(s->self[c]);
		s->self[c] = NULL;
	}
	if (!sub)
		return 0;
	if (ms_select_children(s))
		return -1;
	max = ms_stacks_max_depth(cap) + 2;
	cnt = calloc(s->keys.n + 1, sizeof(*cnt));
	st_node = malloc(max * sizeof(*st_node));
	st_next = malloc(max * sizeof(*st_next));
	st_last = malloc(max * sizeof(*st_last));
	if (!cnt || !st_node || !st_next || !st_last) {
		free(cnt);
		free(st_node);
		free(st_next);
		free(st_last);
		return ms_error("out of memory walking %" PRIu32 " stacks", n);
	}
	st_node[0] = n;		/* the virtual parent of the roots */
	st_next[0] = ms_select_child_lo(s, n);
	st_last[0] = MS_NONE;
	depth = 1;
	while (depth) {
		uint32_t top = depth - 1, v = st_node[top], nk, k;
		const uint32_t *keys;

		if (st_next[top] < ms_select_child_hi(s, v)) {
			uint32_t m = ms_select_child(s, st_next[top]++), last;
			uint64_t own = sub[m];

			if (!own)
				continue;
			keys = ms_select_node_keys(s, m, &nk);
			last = nk ? keys[nk - 1] : st_last[top];
			for (k = 0; k < nk; k++)
				if (cnt[keys[k]]++ == 0)
					total[keys[k]] = ms_weight_add(total[keys[k]], sub[m]);
			for (i = ms_select_child_lo(s, m); i < ms_select_child_hi(s, m); i++)
				own = own > sub[ms_select_child(s, i)] ? own - sub[ms_select_child(s, i)] : 0;
			if (own && last != MS_NONE)
				self[last] = ms_weight_add(self[last], own);
			st_node[depth] = m;
			st_next[depth] = ms_select_child_lo(s, m);
			st_last[depth] = last;
			depth++;
			continue;
		}
		if (v != n) {
			keys = ms_select_node_keys(s, v, &nk);
			for (k = 0; k < nk; k++)
				cnt[keys[k]]--;
		}
		depth--;
	}
	free(cnt);
	free(st_node);
	free(st_next);
	free(st_last);
	return 0;
}

int ms_top_compute(struct ms_top *t, const struct ms_capture *cap, const struct ms_query *q)
{
	uint64_t *self = NULL, *total = NULL;
	struct sort_ctx ctx;
	uint32_t i, nk;

	memset(t, 0, sizeof(*t));
	if (ms_select_build(&t->sel, cap, q))
		return -1;
	nk = t->sel.keys.n;
	if (!nk)
		return 0;
	self = calloc(nk, sizeof(*self));
	total = calloc(nk, sizeof(*total));
	if (!self || !total)
		goto oom;
	if (count_paths(&t->sel, self, total))
		goto fail;

	for (i = 0; i < nk; i++)
		if (total[i] && t->sel.keys.keys[i].kind != MS_KEY_TRUNCATED)
			t->n++;
	if (t->n && !(t->entries = malloc(t->n * sizeof(*t->entries))))
		goto oom;
	t->n = 0;
	for (i = 0; i < nk; i++)
		if (total[i] && t->sel.keys.keys[i].kind != MS_KEY_TRUNCATED)
			t->entries[t->n++] = (struct ms_top_entry){ i, self[i], total[i] };
	ctx.keys = &t->sel.keys;
	ctx.sort = q->sort;
	if (t->n)
		qsort_r(t->entries, t->n, sizeof(*t->entries), cmp_entry, &ctx);
	free(self);
	free(total);
	return 0;
oom:
	ms_error("out of memory counting %" PRIu32 " keys", nk);
fail:
	free(self);
	free(total);
	ms_top_release(t);
	return -1;
}

void ms_top_release(struct ms_top *t)
{
	ms_select_release(&t->sel);
	free(t->entries);
	memset(t, 0, sizeof(*t));
}

/* Rows shown: the first limit, and none under hide_below percent of the sort's measure. */
static uint32_t shown_rows(const struct ms_top *t, const struct ms_query *q)
{
	uint32_t rows = q->limit && q->limit < t->n ? q->limit : t->n, i;

	if (q->hide_below <= 0)
		return rows;
	for (i = 0; i < rows; i++) {
		const struct ms_top_entry *e = &t->entries[i];
		uint64_t v = q->sort == MS_SORT_TOTAL ? e->total : e->self;

		if (ms_select_percent(&t->sel, v) < q->hide_below)
			break;
	}
	return i;
}

static const char *rows_noun(enum ms_by by)
{
	switch (by) {
	case MS_BY_LINE: return "lines";
	case MS_BY_ADDRESS: return "addresses";
	case MS_BY_MODULE: return "modules";
	default: return "functions";
	}
}

/* The module column's least width: its heading's. */
#define MOD_MIN 6

static void write_text(const struct ms_view_out *o, const struct ms_top *t, uint32_t rows)
{
	const struct ms_select *s = &t->sel;
	size_t wself = 4, wtotal = 5, wmod = MOD_MIN, prefix;
	char a[32], b[32], cut[MS_NAME_SIZE(256)];
	FILE *out = o->f;
	uint32_t i;

	for (i = 0; i < rows; i++) {
		const struct ms_top_entry *e = &t->entries[i];
		size_t w;

		ms_view_value(a, sizeof(a), s, e->self);
		ms_view_value(b, sizeof(b), s, e->total);
		if (strlen(a) > wself)
			wself = strlen(a);
		if (strlen(b) > wtotal)
			wtotal = strlen(b);
		if ((w = ms_text_width(ms_key_module_label(&s->keys, s->cap, e->key))) > wmod)
			wmod = w;
	}
	ms_view_value(a, sizeof(a), s, s->selected);
	fprintf(out, "%s%s, %" PRIu32 " %s", a, ms_unit_words(s->unit),
		t->n, rows_noun(s->keys.by));
	if (rows < t->n)
		fprintf(out, " (the first %" PRIu32 " shown)", rows);
	fputc('\n', out);
	ms_view_selection_line(out, s);
	prefix = 6 + 2 + wself + 2 + 6 + 2 + wtotal + 2 + (s->keys.by == MS_BY_MODULE ? 0 : wmod + 2);
	/*
	 * The module column gives way first (down to its heading's width),
	 * so that a long module name (ld-linux-x86-64.so.2) does not push
	 * every line past --width with the name at its least.
	 */
	if (o->width && s->keys.by != MS_BY_MODULE && prefix + MS_VIEW_MIN_NAME > o->width) {
		size_t over = prefix + MS_VIEW_MIN_NAME - o->width, give = wmod - MOD_MIN;

		give = over < give ? over : give;
		wmod -= give;
		prefix -= give;
	}
	ms_style_put(out, o->color, MS_STYLE_HEADER);
	fprintf(out, "%6s  %*s  %6s  %*s  ", "self%", (int)wself, "self", "total%", (int)wtotal,
		"total");
	if (s->keys.by != MS_BY_MODULE)
		fprintf(out, "%-*s  ", (int)wmod, "module");
	fputs(s->keys.by == MS_BY_MODULE ? "module" : s->keys.by == MS_BY_LINE ? "line" :
	      s->keys.by == MS_BY_ADDRESS ? "address" : "function", out);
	ms_style_put(out, o->color, MS_STYLE_RESET);
	fputc('\n', out);
	for (i = 0; i < rows; i++) {
		const struct ms_top_entry *e = &t->entries[i];

		ms_view_value(a, sizeof(a), s, e->self);
		ms_view_value(b, sizeof(b), s, e->total);
		ms_view_put_percent(o, ms_select_percent(s, e->self));
		fprintf(out, "  %*s  ", (int)wself, a);
		ms_view_put_percent(o, ms_select_percent(s, e->total));
		fprintf(out, "  %*s  ", (int)wtotal, b);
		if (s->keys.by != MS_BY_MODULE) {
			ms_style_put(out, o->color, MS_STYLE_DIM);
			const char *m = ms_key_module_label(&s->keys, s->cap, e->key);

			if (ms_text_width(m) > wmod && wmod <= 256) {
				ms_name_shorten(cut, sizeof(cut), m, wmod);
				m = cut;
			}
			ms_text_pad(out, m, wmod, 0);
			ms_style_put(out, o->color, MS_STYLE_RESET);
			fputs("  ", out);
		}
		ms_view_put_key(o, s, e->key, o->width > prefix ? o->width - prefix : o->width ? 1 : 0, false);
		fputc('\n', out);
	}
}

static void write_json(const struct ms_view_out *o, const struct ms_top *t, uint32_t rows)
{
	const struct ms_select *s = &t->sel;
	struct ms_json j;
	uint32_t i;

	ms_json_init(&j, o->f);
	ms_json_object_begin(&j);
	ms_view_json_head(&j, s);
	ms_json_key(&j, "functions");
	ms_json_array_begin(&j);
	for (i = 0; i < rows; i++) {
		const struct ms_top_entry *e = &t->entries[i];

		ms_json_object_begin(&j);
		ms_key_json(&j, s->cap, &s->keys, e->key);
		ms_json_key(&j, "self");
		ms_json_uint(&j, e->self);
		ms_json_key(&j, "self_percent");
		ms_json_double(&j, ms_select_percent(s, e->self), 2);
		ms_json_key(&j, "total");
		ms_json_uint(&j, e->total);
		ms_json_key(&j, "total_percent");
		ms_json_double(&j, ms_select_percent(s, e->total), 2);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	ms_json_object_end(&j);
	fputc('\n', o->f);
}

int ms_top_write(const struct ms_view_out *o, const struct ms_capture *cap, const struct ms_query *q)
{
	struct ms_top t;
	uint32_t rows;

	if (ms_top_compute(&t, cap, q))
		return -1;
	rows = shown_rows(&t, q);
	if (o->json)
		write_json(o, &t, rows);
	else
		write_text(o, &t, rows);
	ms_top_release(&t);
	return 0;
}

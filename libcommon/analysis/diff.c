/*
 * diff: two flat profiles under one query, matched key by key by their
 * identity (module file name, name, file, line), since ids and string
 * numbers differ between captures.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "capture/look.h"
#include "util/error.h"
#include "util/json.h"
#include "util/text.h"

struct side {
	struct ms_top top;
	char **ids;		/* identity per entry, sorted with order[] */
	uint32_t *order;	/* entries by identity */
};

struct row {
	int32_t a, b;		/* entry in each side, -1 when absent */
	uint64_t a_self, a_total, b_self, b_total;
	double change;		/* points of share of the sorted measure */
	int64_t delta;		/* b - a of the sorted measure, saturated */
};

static int cmp_id(const void *pa, const void *pb, void *data)
{
	char **ids = data;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = strcmp(ids[a], ids[b]);

	return c ? c : a < b ? -1 : a > b;
}

static void side_release(struct side *s)
{
	uint32_t i;

	if (s->ids)
		for (i = 0; i < s->top.n; i++)
			free(s->ids[i]);
	free(s->ids);
	free(s->order);
	ms_top_release(&s->top);
}

static int side_build(struct side *s, const struct ms_capture *cap, const struct ms_query *q)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	if (ms_top_compute(&s->top, cap, q))
		return -1;
	s->ids = calloc(s->top.n + 1, sizeof(*s->ids));
	s->order = malloc((s->top.n + 1) * sizeof(*s->order));
	if (!s->ids || !s->order)
		goto oom;
	for (i = 0; i < s->top.n; i++) {
		int len = ms_key_identity(NULL, 0, cap, &s->top.sel.keys, s->top.entries[i].key);

		if (len < 0 || !(s->ids[i] = malloc((size_t)len + 1)))
			goto oom;
		ms_key_identity(s->ids[i], (size_t)len + 1, cap, &s->top.sel.keys, s->top.entries[i].key);
		s->order[i] = i;
	}
	if (s->top.n)
		qsort_r(s->order, s->top.n, sizeof(*s->order), cmp_id, s->ids);
	return 0;
oom:
	side_release(s);
	return ms_error("out of memory matching the functions of two captures");
}

static const char *event_of(const struct ms_capture *cap)
{
	const char *e = ms_capture_info_text(cap, "event");

	return e ? e : "cpu-clock";
}

/* Different units, or samples of different events, cannot be compared. */
static int check_compatible(const struct ms_capture *a, const char *an, const struct ms_capture *b,
			    const char *bn, const struct ms_query *q)
{
	if (ms_query_check_capture(q, a, an) || ms_query_check_capture(q, b, bn))
		return -1;
	if (q->unit == MS_UNIT_SAMPLES && strcmp(event_of(a), event_of(b)))
		return ms_error("cannot compare '%s' and '%s': one counts samples of '%s', the other "
				"of '%s', which are different units; record both on one event",
				an, bn, event_of(a), event_of(b));
	return 0;
}

static double share(const struct ms_select *s, uint64_t w)
{
	return ms_select_percent(s, w);
}

struct sort_ctx {
	const struct side *a, *b;
};

static const char *row_label(const struct sort_ctx *x, const struct row *r)
{
	if (r->b >= 0)
		return x->b->ids[r->b];
	return x->a->ids[r->a];
}

static int cmp_row(const void *pa, const void *pb, void *data)
{
	const struct row *r = pa, *s = pb;
	double m = fabs(r->change), n = fabs(s->change);
	uint64_t dm = r->delta < 0 ? -(uint64_t)r->delta : (uint64_t)r->delta;
	uint64_t dn = s->delta < 0 ? -(uint64_t)s->delta : (uint64_t)s->delta;

	if (m != n)
		return m > n ? -1 : 1;
	if (dm != dn)
		return dm > dn ? -1 : 1;
	return strcmp(row_label(data, r), row_label(data, s));
}

static int64_t saturated_delta(uint64_t b, uint64_t a)
{
	if (b >= a)
		return b - a > INT64_MAX ? INT64_MAX : (int64_t)(b - a);
	return a - b > INT64_MAX ? -INT64_MAX : -(int64_t)(a - b);
}

static void fill(struct row *r, const struct side *a, const struct side *b, enum ms_sort sort)
{
	const struct ms_top_entry *ea = r->a >= 0 ? &a->top.entries[r->a] : NULL;
	const struct ms_top_entry *eb = r->b >= 0 ? &b->top.entries[r->b] : NULL;
	uint64_t va, vb;

	r->a_self = ea ? ea->self : 0;
	r->a_total = ea ? ea->total : 0;
	r->b_self = eb ? eb->self : 0;
	r->b_total = eb ? eb->total : 0;
	va = sort == MS_SORT_TOTAL ? r->a_total : r->a_self;
	vb = sort == MS_SORT_TOTAL ? r->b_total : r->b_self;
	r->change = share(&b->top.sel, vb) - share(&a->top.sel, va);
	r->delta = saturated_delta(vb, va);
}

/* The rows of both sides merged by identity; *n rows. */
static struct row *merge(const struct side *a, const struct side *b, enum ms_sort sort, uint32_t *n)
{
	struct row *rows = malloc(((size_t)a->top.n + b->top.n + 1) * sizeof(*rows));
	uint32_t i = 0, k = 0, m = 0;

	if (!rows)
		return NULL;
	while (i < a->top.n || k < b->top.n) {
		int c = i == a->top.n ? 1 : k == b->top.n ? -1 :
			strcmp(a->ids[a->order[i]], b->ids[b->order[k]]);
		struct row *r = &rows[m++];

		r->a = c <= 0 ? (int32_t)a->order[i++] : -1;
		r->b = c >= 0 ? (int32_t)b->order[k++] : -1;
		fill(r, a, b, sort);
	}
	*n = m;
	return rows;
}

static void put_change(FILE *out, const struct row *r)
{
	if (r->a < 0)
		fprintf(out, "%7s", "new");
	else if (r->b < 0)
		fprintf(out, "%7s", "gone");
	else
		fprintf(out, "%+7.1f", r->change);
}

static void write_text(const struct ms_view_out *o, const struct side *a, const char *an,
		       const struct side *b, const char *bn, const struct row *rows, uint32_t n,
		       uint32_t changed, const struct ms_query *q)
{
	const struct ms_select *sa = &a->top.sel, *sb = &b->top.sel;
	FILE *out = o->f;
	char x[32], y[32];
	uint32_t i;

	ms_view_value(x, sizeof(x), sa, sa->selected);
	ms_view_value(y, sizeof(y), sb, sb->selected);
	fputs("A: ", out);
	ms_text_put(out, an);
	fprintf(out, " (%s%s)\nB: ", x, ms_unit_words(sa->unit));
	ms_text_put(out, bn);
	fprintf(out, " (%s%s)\n", y, ms_unit_words(sb->unit));
	ms_view_selection_line(out, sb);
	fprintf(out, "%" PRIu32 " changed", changed);
	if (n < changed)
		fprintf(out, " (the first %" PRIu32 " shown)", n);
	fprintf(out, "; by %s share, largest change first (change: points of each capture's "
		"total)\n", q->sort == MS_SORT_TOTAL ? "total" : "self");
	fprintf(out, "%7s  %6s  %6s  %10s  %10s  function\n", "change", "A%", "B%", "A", "B");
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		uint64_t va = q->sort == MS_SORT_TOTAL ? r->a_total : r->a_self;
		uint64_t vb = q->sort == MS_SORT_TOTAL ? r->b_total : r->b_self;

		put_change(out, r);
		ms_view_value(x, sizeof(x), sa, va);
		ms_view_value(y, sizeof(y), sb, vb);
		fprintf(out, "  %5.1f%%  %5.1f%%  %10s  %10s  ", share(sa, va), share(sb, vb), x, y);
		if (r->b >= 0)
			ms_view_put_key(o, sb, b->top.entries[r->b].key, 0, true);
		else
			ms_view_put_key(o, sa, a->top.entries[r->a].key, 0, true);
		fputc('\n', out);
	}
}

static void write_json(const struct ms_view_out *o, const struct side *a, const char *an,
		       const struct side *b, const char *bn, const struct row *rows, uint32_t n,
		       const struct ms_query *q)
{
	struct ms_json j;
	uint32_t i;

	ms_json_init(&j, o->f);
	ms_json_object_begin(&j);
	ms_json_key(&j, "source");
	ms_json_string(&j, ms_unit_source(q->unit));
	ms_json_key(&j, "unit");
	ms_json_string(&j, ms_unit_measure(q->unit));
	ms_json_key(&j, "by");
	ms_json_string(&j, ms_by_name(q->by));
	ms_json_key(&j, "look");
	ms_json_string(&j, ms_look_name(q->look));
	ms_json_key(&j, "sort");
	ms_json_string(&j, q->sort == MS_SORT_TOTAL ? "total" : "self");
	ms_json_key(&j, "a");
	ms_json_object_begin(&j);
	ms_json_key(&j, "file");
	ms_json_string(&j, an);
	ms_json_key(&j, "total");
	ms_json_uint(&j, a->top.sel.selected);
	ms_json_object_end(&j);
	ms_json_key(&j, "b");
	ms_json_object_begin(&j);
	ms_json_key(&j, "file");
	ms_json_string(&j, bn);
	ms_json_key(&j, "total");
	ms_json_uint(&j, b->top.sel.selected);
	ms_json_object_end(&j);
	ms_json_key(&j, "functions");
	ms_json_array_begin(&j);
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		ms_json_object_begin(&j);
		if (r->b >= 0)
			ms_key_json(&j, b->top.sel.cap, &b->top.sel.keys, b->top.entries[r->b].key);
		else
			ms_key_json(&j, a->top.sel.cap, &a->top.sel.keys, a->top.entries[r->a].key);
		ms_json_key(&j, "status");
		ms_json_string(&j, r->a < 0 ? "new" : r->b < 0 ? "gone" : "both");
		ms_json_key(&j, "a_self");
		ms_json_uint(&j, r->a_self);
		ms_json_key(&j, "a_total");
		ms_json_uint(&j, r->a_total);
		ms_json_key(&j, "b_self");
		ms_json_uint(&j, r->b_self);
		ms_json_key(&j, "b_total");
		ms_json_uint(&j, r->b_total);
		ms_json_key(&j, "delta");
		ms_json_int(&j, r->delta);
		ms_json_key(&j, "change_points");
		ms_json_double(&j, r->change, 2);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	ms_json_object_end(&j);
	fputc('\n', o->f);
}

static int diff_write_seen(const struct ms_view_out *o, const struct ms_capture *a,
			   const char *a_name, const struct ms_capture *b, const char *b_name,
			   const struct ms_query *q)
{
	struct side sa, sb;
	struct sort_ctx ctx;
	struct row *rows;
	uint32_t n, shown, changed, i;

	if (check_compatible(a, a_name, b, b_name, q))
		return -1;
	if (side_build(&sa, a, q))
		return -1;
	if (side_build(&sb, b, q)) {
		side_release(&sa);
		return -1;
	}
	rows = merge(&sa, &sb, q->sort, &n);
	if (!rows) {
		side_release(&sa);
		side_release(&sb);
		return ms_error("out of memory comparing two captures");
	}
	ctx = (struct sort_ctx){ &sa, &sb };
	if (n)
		qsort_r(rows, n, sizeof(*rows), cmp_row, &ctx);
	/*
	 * unchanged rows (as many, the same share) say nothing; --hide-below
	 * drops small changes; --limit caps
	 */
	for (shown = 0, i = 0; i < n; i++)
		if ((rows[i].delta || rows[i].change != 0) && fabs(rows[i].change) >= q->hide_below)
			rows[shown++] = rows[i];
	changed = shown;
	if (q->limit && shown > q->limit)
		shown = q->limit;
	if (o->json)
		write_json(o, &sa, a_name, &sb, b_name, rows, shown, q);
	else
		write_text(o, &sa, a_name, &sb, b_name, rows, shown, changed, q);
	free(rows);
	side_release(&sa);
	side_release(&sb);
	return 0;
}

int ms_diff_write(const struct ms_view_out *o, const struct ms_capture *a, const char *a_name,
		  const struct ms_capture *b, const char *b_name, const struct ms_query *q)
{
	struct ms_look_view la, lb;
	int rc;

	if (ms_look_build(&la, a, q->look) < 0)
		return -1;
	if (ms_look_build(&lb, b, q->look) < 0) {
		ms_look_release(&la);
		return -1;
	}
	rc = diff_write_seen(o, la.seen, a_name, lb.seen, b_name, q);
	ms_look_release(&la);
	ms_look_release(&lb);
	return rc;
}

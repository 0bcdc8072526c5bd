/*
 * Unit tests of what the imports' speed work must not change: the stack
 * tree the builder seals (numbered depth by depth, each depth by parent
 * and frame, the same whatever order the samples came in, and every
 * sample's stack the one its line or pprof sample gave), the same whether
 * its nodes are made through the hash index (stack_count), by sorting at
 * seal (stack_import) or both, and the pprof import's two ways
 * of finding a location (a direct table for dense ids, a search for
 * others) and its samples decoded one at a time (a sample larger than the
 * reused buffer among small ones).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/builder.h"
#include "capture/capture.h"
#include "formats/formats.h"
#include "stream/records.h"
#include "util/error.h"

#include "tests/unit/pprof-build.h"

#define MS_FRAMES_MAX_TEST 1100
#include "tests/unit/stderr-capture.h"

/* Park-Miller, as scripts/bench/folded-stacks.awk: the same lines every run. */
static uint64_t seed;

static unsigned rnd(unsigned n)
{
	seed = seed * 16807 % 2147483647;
	return (unsigned)(seed % n);
}

/*
 * n folded lines over funcs functions, depth 1 to 12; lines share
 * prefixes (a few roots, then a choice among few) so that stacks meet.
 */
static char **make_lines(unsigned n, unsigned funcs)
{
	char **lines = calloc(n, sizeof(*lines));

	assert_non_null(lines);
	seed = 17;
	for (unsigned i = 0; i < n; i++) {
		char buf[512];
		size_t at = 0;
		unsigned d = 1 + rnd(12);

		for (unsigned k = 0; k < d; k++)
			at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%sf%u", k ? ";" : "",
					       k < 3 ? rnd(3) : rnd(funcs));
		snprintf(buf + at, sizeof(buf) - at, " %u", 1 + rnd(5));
		lines[i] = strdup(buf);
		assert_non_null(lines[i]);
	}
	return lines;
}

static char *join(char **lines, unsigned n)
{
	size_t len = 1;
	char *text;

	for (unsigned i = 0; i < n; i++)
		len += strlen(lines[i]) + 1;
	text = malloc(len);
	assert_non_null(text);
	len = 0;
	for (unsigned i = 0; i < n; i++) {
		size_t k = strlen(lines[i]);

		memcpy(text + len, lines[i], k);
		text[len + k] = '\n';
		len += k + 1;
	}
	text[len] = '\0';
	return text;
}

/* The folded line of sample row i: its stack's names, outermost first, and its count. */
static void line_of(const struct ms_capture *cap, uint32_t i, char *out, size_t size)
{
	const char *names[MS_FRAMES_MAX_TEST];
	unsigned n = 0;
	size_t at = 0;

	for (uint32_t s = cap->samples[i].stack; s != MS_NONE; s = cap->stacks[s].parent) {
		assert_true(n < MS_FRAMES_MAX_TEST);
		names[n++] = cap->strings[cap->frames[cap->stacks[s].frame].name];
	}
	while (n--)
		at += (size_t)snprintf(out + at, size - at, "%s%s", at ? ";" : "", names[n]);
	snprintf(out + at, size - at, " %llu", (unsigned long long)cap->samples[i].count);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The capture's stack table is in its documented order, with no node twice. */
static void assert_stack_order(const struct ms_capture *cap)
{
	for (uint32_t i = 0; i < cap->n_stacks; i++) {
		const struct ms_cap_stack *s = &cap->stacks[i], *p = s - 1;

		assert_true(s->parent == MS_NONE || s->parent < i);
		if (!i)
			continue;
		assert_true(p->depth <= s->depth);
		if (p->depth == s->depth)
			/* by (parent, frame), the roots' MS_NONE alike: strictly, so no node twice */
			assert_true(p->parent < s->parent ||
				    (p->parent == s->parent && p->frame < s->frame));
	}
}

static void test_folded_tree(void **state)
{
	enum { LINES = 3000 };
	char **lines = make_lines(LINES, 40), *text, **got;
	struct ms_capture *a;
	unsigned n = 0;

	(void)state;
	text = join(lines, LINES);
	a = ms_folded_import(text, strlen(text), "t.folded", "test 1");
	assert_non_null(a);
	assert_stack_order(a);
	/* every line comes back as a sample row, whatever the tree shares */
	got = calloc(a->n_samples, sizeof(*got));
	assert_non_null(got);
	for (uint32_t i = 0; i < a->n_samples; i++) {
		char buf[512];

		line_of(a, i, buf, sizeof(buf));
		got[n++] = strdup(buf);
	}
	assert_int_equal(n, LINES);
	qsort(got, n, sizeof(*got), cmp_str);
	qsort(lines, LINES, sizeof(*lines), cmp_str);
	for (unsigned i = 0; i < LINES; i++)
		assert_string_equal(got[i], lines[i]);
	for (unsigned i = 0; i < LINES; i++) {
		free(lines[i]);
		free(got[i]);
	}
	free(lines);
	free(got);
	free(text);
	ms_capture_free(a);
}

/*
 * A profile of 201 samples, its location ids multiplied by mul (1: dense),
 * its samples in reverse order when reverse says so.
 */
static unsigned char *pprof_of(unsigned mul, bool reverse, size_t *len)
{
	struct pbuild b;
	unsigned char *buf;
	char deep[1024 * 6];
	size_t at = 0;

	pb_begin(&b);
	seed = 5;
	for (int i = 0; i < 200; i++) {
		char stack[128];

		snprintf(stack, sizeof(stack), "main;f%u;g%u;h%u", rnd(4), rnd(9), rnd(30));
		pb_sample(&b, stack, 1 + i % 7, "tid", 'n', (int64_t)(1 + i % 3), NULL);
		if (i == 100) {
			/* one sample far larger than the rest: 1000 frames, 300 labels */
			Perftools__Profiles__Sample *s;

			for (int k = 0; k < 1000; k++)
				at += (size_t)snprintf(deep + at, sizeof(deep) - at, "%sd%d", k ? ";" : "", k % 50);
			s = pb_sample(&b, deep, 3, "tid", 'n', (int64_t)9, NULL);
			for (int k = 0; k < 300; k++) {
				Perftools__Profiles__Label *lb = pb_alloc(sizeof(*lb));

				perftools__profiles__label__init(lb);
				lb->key = pb_str(&b, "span id");
				lb->num = k;
				s->label = pb_grow(s->label, s->n_label + 1, sizeof(*s->label));
				s->label[s->n_label++] = lb;
			}
		}
	}
	if (reverse)
		for (size_t i = 0; i < b.p.n_sample / 2; i++) {
			Perftools__Profiles__Sample *t = b.p.sample[i];

			b.p.sample[i] = b.p.sample[b.p.n_sample - 1 - i];
			b.p.sample[b.p.n_sample - 1 - i] = t;
		}
	buf = pb_pack(&b, len);
	pb_free(&b);
	if (mul == 1)
		return buf;
	/* the same profile with sparse ids: packed again with every id times mul */
	{
		Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, *len, buf);

		assert_non_null(p);
		for (size_t i = 0; i < p->n_location; i++)
			p->location[i]->id *= mul;
		for (size_t i = 0; i < p->n_sample; i++)
			for (size_t k = 0; k < p->sample[i]->n_location_id; k++)
				p->sample[i]->location_id[k] *= mul;
		free(buf);
		*len = perftools__profiles__profile__get_packed_size(p);
		buf = pb_alloc(*len);
		perftools__profiles__profile__pack(p, buf);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	return buf;
}

static void test_pprof_ids_and_arena(void **state)
{
	size_t ld, ls, lr, la, lb, lc;
	unsigned char *dense = pprof_of(1, false, &ld), *sparse = pprof_of(1000003, false, &ls);
	unsigned char *reversed = pprof_of(1, true, &lr), *ba, *bb, *bc;
	struct ms_capture *a, *b, *c;
	char line[8192];
	bool saw_deep = false;

	uint64_t want = 3;

	(void)state;
	for (int i = 0; i < 200; i++)
		want += 1 + i % 7;
	/* (the large sample's labels make a loss line) */
	stderr_begin();
	a = ms_pprof_import(dense, ld, "t.pb", "test 1");
	b = ms_pprof_import(sparse, ls, "t.pb", "test 1");
	c = ms_pprof_import(reversed, lr, "t.pb", "test 1");
	stderr_end();
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_stack_order(a);
	assert_int_equal(ms_capture_sample_count(a), want);
	assert_int_equal(ms_capture_encode(a, &ba, &la), 0);
	assert_int_equal(ms_capture_encode(b, &bb, &lb), 0);
	assert_int_equal(ms_capture_encode(c, &bc, &lc), 0);
	/* a search or a table, samples in any order: the same capture */
	assert_int_equal(la, lb);
	assert_memory_equal(ba, bb, la);
	assert_int_equal(la, lc);
	assert_memory_equal(ba, bc, la);
	/* the large sample's stack came through whole, on its thread */
	for (uint32_t i = 0; i < a->n_samples; i++) {
		line_of(a, i, line, sizeof(line));
		if (a->threads[a->samples[i].thread].tid != 9)
			continue;
		assert_int_equal(strncmp(line, "d0;d1;d2;", 9), 0);
		assert_int_equal(a->stacks[a->samples[i].stack].depth, 1000);
		saw_deep = true;
	}
	assert_true(saw_deep);
	free(ba);
	free(bb);
	free(bc);
	free(dense);
	free(sparse);
	free(reversed);
	ms_capture_free(a);
	ms_capture_free(b);
	ms_capture_free(c);
}

enum { BY_COUNT, BY_IMPORT, MIXED };

/*
 * A capture of the same stacks (times and threads varied) built by
 * stack_count (nodes through the hash index), stack_import (nodes made
 * at seal by sorting) or both, row by row.
 */
static struct ms_capture *built(int how)
{
	struct ms_capture_builder *b = ms_capture_builder_new();
	struct ms_stack *st = calloc(1, sizeof(*st));
	struct ms_capture *cap;

	assert_non_null(b);
	assert_non_null(st);
	seed = 99;
	for (int i = 0; i < 4000; i++) {
		st->pid = 1;
		st->tid = 1 + rnd(3);
		st->time = rnd(50);
		st->reason = MS_END_UNKNOWN;
		st->n_frames = rnd(14);	/* 0 too: a sample without frames */
		for (uint32_t k = 0; k < st->n_frames; k++) {
			/* innermost first; the outer frames from few, so stacks meet */
			uint32_t outer = st->n_frames - 1 - k;

			st->frames[k].module = MS_NONE;
			st->frames[k].flags = 0;
			st->frames[k].address = 0x1000 + (outer < 3 ? rnd(2) : rnd(25));
		}
		if (how == BY_COUNT || (how == MIXED && i % 2))
			assert_int_equal(ms_capture_builder_stack_count(b, st, 1 + rnd(4)), 0);
		else
			assert_int_equal(ms_capture_builder_stack_import(b, st, 1 + rnd(4)), 0);
	}
	free(st);
	cap = ms_capture_builder_seal(b);
	assert_non_null(cap);
	return cap;
}

static void test_builder_ways_agree(void **state)
{
	struct ms_capture *cap[3];
	unsigned char *buf[3];
	size_t len[3];

	(void)state;
	for (int how = BY_COUNT; how <= MIXED; how++) {
		cap[how] = built(how);
		assert_stack_order(cap[how]);
		assert_int_equal(ms_capture_encode(cap[how], &buf[how], &len[how]), 0);
	}
	assert_true(cap[BY_COUNT]->n_stacks > 1000);
	for (int how = BY_IMPORT; how <= MIXED; how++) {
		assert_int_equal(len[how], len[BY_COUNT]);
		assert_memory_equal(buf[how], buf[BY_COUNT], len[BY_COUNT]);
	}
	for (int how = BY_COUNT; how <= MIXED; how++) {
		free(buf[how]);
		ms_capture_free(cap[how]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_tree),
		cmocka_unit_test(test_pprof_ids_and_arena),
		cmocka_unit_test(test_builder_ways_agree),
	};

	ms_set_progname("import-tables-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

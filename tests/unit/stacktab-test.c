/*
 * The table of unique stacks (libcommon/unwind/stacktab.c): ids in order of
 * first appearance, keyed by end reason and frames only, bounded.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "unwind/stacktab.h"

static struct ms_stack *stack_of(uint32_t n, uint64_t base, uint32_t reason)
{
	struct ms_stack *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->reason = reason;
	s->n_frames = n;
	for (uint32_t i = 0; i < n; i++) {
		s->frames[i].module = i % 3;
		s->frames[i].address = base + 16 * i;
		s->frames[i].flags = i ? 1 : 0;
	}
	return s;
}

static void test_ids_by_content(void **state)
{
	struct ms_stacktab *t = ms_stacktab_new(100, 1000);
	struct ms_stack *a = stack_of(5, 0x1000, 0), *b = stack_of(5, 0x1000, 0);
	uint32_t id;

	(void)state;
	assert_int_equal(ms_stacktab_intern(t, a, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 0);
	/* another sample of the same stack: other thread, time, cpu, period */
	b->pid = 9;
	b->tid = 10;
	b->time = 11;
	b->cpu = 1;
	b->period = 7;
	assert_int_equal(ms_stacktab_intern(t, b, &id), MS_STACKTAB_FOUND);
	assert_int_equal(id, 0);
	/* any difference of reason, frame count, module, address or flags is another stack */
	b->reason = 2;
	assert_int_equal(ms_stacktab_intern(t, b, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 1);
	b->reason = 0;
	b->n_frames = 4;
	assert_int_equal(ms_stacktab_intern(t, b, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 2);
	b->n_frames = 5;
	b->frames[4].module = 7;
	assert_int_equal(ms_stacktab_intern(t, b, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 3);
	b->frames[4].module = a->frames[4].module;
	b->frames[2].flags = 4;
	assert_int_equal(ms_stacktab_intern(t, b, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 4);
	b->frames[2].flags = a->frames[2].flags;
	b->frames[0].address++;
	assert_int_equal(ms_stacktab_intern(t, b, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 5);
	/* an empty stack is a stack too */
	b->n_frames = 0;
	assert_int_equal(ms_stacktab_intern(t, b, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 6);
	assert_int_equal(ms_stacktab_intern(t, a, &id), MS_STACKTAB_FOUND);
	assert_int_equal(id, 0);
	assert_int_equal(ms_stacktab_count(t), 7);
	assert_int_equal(ms_stacktab_refused(t), 0);
	ms_stacktab_free(t);
	free(a);
	free(b);
}

static void test_growth_keeps_ids(void **state)
{
	struct ms_stacktab *t = ms_stacktab_new(MS_STACKTAB_STACKS_MAX, MS_STACKTAB_FRAMES_MAX);
	struct ms_stack *s = stack_of(20, 0, 0);
	uint32_t id;

	(void)state;
	for (uint32_t i = 0; i < 5000; i++) {
		s->frames[7].address = i;
		assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_ADDED);
		assert_int_equal(id, i);
	}
	for (uint32_t i = 5000; i-- > 0;) {
		s->frames[7].address = i;
		assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_FOUND);
		assert_int_equal(id, i);
	}
	assert_int_equal(ms_stacktab_count(t), 5000);
	ms_stacktab_free(t);
	free(s);
}

/*
 * The entries and frames live in mappings grown by mremap: a stack of the
 * most frames, then stacks that grow both mappings five times over, all
 * still found with their frames (compared whole) after every move.
 */
static void test_growth_moves_frames(void **state)
{
	struct ms_stacktab *t = ms_stacktab_new(MS_STACKTAB_STACKS_MAX, MS_STACKTAB_FRAMES_MAX);
	struct ms_stack *big = stack_of(MS_FRAMES_MAX, 0x7000, 1), *s = stack_of(3, 0, 0);
	uint32_t id;

	(void)state;
	assert_int_equal(ms_stacktab_intern(t, big, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 0);
	for (uint32_t i = 1; i <= 40000; i++) {
		s->frames[2].address = i;
		assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_ADDED);
		assert_int_equal(id, i);
		if (i % 9973 == 0) {
			assert_int_equal(ms_stacktab_intern(t, big, &id), MS_STACKTAB_FOUND);
			assert_int_equal(id, 0);
		}
	}
	big->frames[MS_FRAMES_MAX - 1].address++;
	assert_int_equal(ms_stacktab_intern(t, big, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 40001);
	big->frames[MS_FRAMES_MAX - 1].address--;
	assert_int_equal(ms_stacktab_intern(t, big, &id), MS_STACKTAB_FOUND);
	assert_int_equal(id, 0);
	s->frames[2].address = 1;
	assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_FOUND);
	assert_int_equal(id, 1);
	assert_int_equal(ms_stacktab_count(t), 40002);
	ms_stacktab_free(t);
	free(big);
	free(s);
}

static void test_bounds(void **state)
{
	struct ms_stacktab *t = ms_stacktab_new(2, 12);
	struct ms_stack *s = stack_of(5, 0, 0);
	uint32_t id;

	(void)state;
	assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_ADDED);
	s->frames[0].address = 1;
	assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 1);
	/* two stacks kept: a third is refused, the known ones still found */
	s->frames[0].address = 2;
	assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_FULL);
	s->frames[0].address = 1;
	assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_FOUND);
	assert_int_equal(id, 1);
	ms_stacktab_free(t);

	/* the frame bound: 12 frames hold two stacks of 5, not a third of 3 */
	t = ms_stacktab_new(100, 12);
	s->n_frames = 5;
	assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_ADDED);
	s->frames[0].address = 3;
	assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_ADDED);
	s->n_frames = 3;
	assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_FULL);
	s->n_frames = 2;
	assert_int_equal(ms_stacktab_intern(t, s, &id), MS_STACKTAB_ADDED);
	assert_int_equal(id, 2);
	assert_int_equal(ms_stacktab_refused(t), 1);
	ms_stacktab_free(t);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_by_content),
		cmocka_unit_test(test_growth_keeps_ids),
		cmocka_unit_test(test_growth_moves_frames),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

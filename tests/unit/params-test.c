/*
 * A typed query from named parameters (analysis/params.h): every
 * parameter lands where ms-analyze's option puts it, and every refusal
 * says what ms-analyze says (caught with ms_error_catch()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/options.h"
#include "analysis/params.h"
#include "util/error.h"

#define P(k, v) { (k), (v) }
#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static const char *const skip_capture[] = { "capture", NULL };

static char caught[1024];

/* ms_query_from_params for view, its message caught: the return value. */
static int from(struct ms_query *q, enum ms_view view, const struct ms_param *p, uint32_t n)
{
	struct ms_error_catcher c = { .buf = caught, .len = sizeof(caught) };
	struct ms_error_catcher *old = ms_error_catch(&c);
	int rc;

	ms_query_init(q, view);
	rc = ms_query_from_params(q, p, n, skip_capture);
	ms_error_catch(old);
	/* one message on a refusal, none on success */
	assert_int_equal(c.caught, rc ? 1 : 0);
	return rc;
}

/* Refused with exactly message. */
static void refused(enum ms_view view, const struct ms_param *p, uint32_t n, const char *message)
{
	struct ms_query q;

	assert_int_equal(from(&q, view, p, n), -1);
	assert_string_equal(caught, message);
}

static void test_every_parameter(void **state)
{
	const struct ms_param top[] = {
		P("capture", "3"), P("by", "line"), P("look", "native"), P("unit", "cpu-time"),
		P("tid", "12,13"), P("tid", "14"), P("thread", "worker"), P("thread", "main x"),
		P("time", "1.5s..2500ms"), P("module", "libc.so.6"), P("focus", "^work"),
		P("ignore", "idle|sleep"), P("label", "gil=held"), P("hide-below", "2.5"),
		P("sort", "total"), P("limit", "7"),
	};
	const struct ms_param callers[] = { P("function", "hot"), P("by", "address") };
	const struct ms_param timeline[] = { P("buckets", "120"), P("unit", "off-cpu"),
					     P("cause", "sleeping,blocked") };
	const struct ms_param diff[] = { P("sort", "self"), P("limit", "0"), P("look", "python") };
	struct ms_query q;

	assert_int_equal(from(&q, MS_VIEW_TOP, top, N(top)), 0);
	assert_int_equal(q.view, MS_VIEW_TOP);
	assert_int_equal(q.by, MS_BY_LINE);
	assert_int_equal(q.look, MS_LOOK_NATIVE);
	assert_int_equal(q.unit, MS_UNIT_CPU_TIME);
	assert_int_equal(q.n_tids, 3);
	assert_int_equal(q.tids[0], 12);
	assert_int_equal(q.tids[1], 13);
	assert_int_equal(q.tids[2], 14);
	assert_int_equal(q.n_thread_names, 2);
	assert_string_equal(q.thread_names[0], "worker");
	assert_string_equal(q.thread_names[1], "main x");
	assert_true(q.has_time_start && q.has_time_end);
	assert_int_equal(q.time_start, 1500000000ull);
	assert_int_equal(q.time_end, 2500000000ull);
	assert_string_equal(q.module, "libc.so.6");
	assert_string_equal(q.focus, "^work");
	assert_string_equal(q.ignore, "idle|sleep");
	assert_string_equal(q.label, "gil=held");
	assert_int_equal(q.label_key_len, 3);
	assert_true(q.hide_below == 2.5);
	assert_int_equal(q.sort, MS_SORT_TOTAL);
	assert_int_equal(q.limit, 7);
	/* strings borrow from the parameters */
	assert_ptr_equal(q.module, top[9].value);

	assert_int_equal(from(&q, MS_VIEW_CALLERS, callers, N(callers)), 0);
	assert_ptr_equal(q.function, callers[0].value);
	assert_int_equal(q.by, MS_BY_ADDRESS);
	assert_int_equal(from(&q, MS_VIEW_CALLEES, callers, 1), 0);
	assert_string_equal(q.function, "hot");

	assert_int_equal(from(&q, MS_VIEW_OFF_CPU, timeline + 2, 1), 0);
	assert_int_equal(q.causes, (1u << MS_CAUSE_SLEEPING) | (1u << MS_CAUSE_BLOCKED));
	/* the timeline takes buckets (its off-CPU lanes are its own: no unit) */
	assert_int_equal(from(&q, MS_VIEW_TIMELINE, timeline, 1), 0);
	assert_int_equal(q.buckets, 120);

	assert_int_equal(from(&q, MS_VIEW_DIFF, diff, N(diff)), 0);
	assert_int_equal(q.sort, MS_SORT_SELF);
	assert_int_equal(q.limit, 0);
	assert_int_equal(q.look, MS_LOOK_PYTHON);

	/* nothing at all: the defaults, as ms-analyze --json has them */
	assert_int_equal(from(&q, MS_VIEW_TREE, NULL, 0), 0);
	{
		struct ms_query d;

		ms_query_init(&d, MS_VIEW_TREE);
		assert_memory_equal(&q, &d, sizeof(q));
	}
}

/* Bad values: the words ms-analyze prints for the same option and value. */
static void test_bad_values(void **state)
{
	static const struct {
		enum ms_view view;
		const char *key, *value, *message;
	} cases[] = {
		{ MS_VIEW_TOP, "by", "x", "unknown granularity for --by 'x': use function, line, address, module" },
		{ MS_VIEW_TOP, "look", "x", "unknown look 'x': use mixed, native, python" },
		{ MS_VIEW_TOP, "unit", "bytes", "unknown unit 'bytes': use samples, cpu-time, off-cpu, snapshots" },
		{ MS_VIEW_TOP, "limit", "-1", "--limit wants a count of rows (0 to 4294967295), not '-1'" },
		{ MS_VIEW_TOP, "limit", "", "--limit wants a count of rows (0 to 4294967295), not ''" },
		{ MS_VIEW_TOP, "limit", "4294967296", "--limit wants a count of rows (0 to 4294967295), not '4294967296'" },
		{ MS_VIEW_TOP, "sort", "name", "--sort wants self or total, not 'name'" },
		{ MS_VIEW_TOP, "hide-below", "101", "--hide-below wants a number from 0 to 100, not '101'" },
		{ MS_VIEW_TOP, "hide-below", "nan", "--hide-below wants a number from 0 to 100, not 'nan'" },
		{ MS_VIEW_TIMELINE, "buckets", "0", "--buckets wants at least 1" },
		{ MS_VIEW_TIMELINE, "buckets", "10001", "--buckets wants a count of buckets (0 to 10000), not '10001'" },
		{ MS_VIEW_TOP, "tid", "12x", "--tid wants thread ids such as 1234 or 1234,1240; not '12x'" },
		{ MS_VIEW_TOP, "cause", "idle", NULL },
		{ MS_VIEW_TOP, "label", "gil", "--label wants KEY=VALUE, such as gil=held; not 'gil'" },
		{ MS_VIEW_TOP, "time", "2s..1s", "--time ends before it starts: give START..END with END after START" },
		{ MS_VIEW_TOP, "time", "soon", NULL },
		{ MS_VIEW_TOP, "focus", "(", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ms_param p[] = { P(cases[i].key, cases[i].value) };
		struct ms_query q;

		assert_int_equal(from(&q, cases[i].view, p, 1), -1);
		if (cases[i].message)
			assert_string_equal(caught, cases[i].message);
		else
			/* the option's own words, whatever they are: named, with the value */
			assert_non_null(strstr(caught, cases[i].value));
	}
	{
		const struct ms_param p[] = { P("focus", "(") };

		assert_int_equal(from(&(struct ms_query){ 0 }, MS_VIEW_TOP, p, 1), -1);
		assert_true(!strncmp(caught, "--focus '(' is not a regular expression: ", 41));
	}
}

static void test_refusals(void **state)
{
	const struct ms_param twice[] = { P("by", "line"), P("by", "function") };
	const struct ms_param twice_fn[] = { P("function", "a"), P("function", "b") };
	const struct ms_param buckets[] = { P("buckets", "10") };
	const struct ms_param limit[] = { P("limit", "10") };
	const struct ms_param tid[] = { P("tid", "1") };
	const struct ms_param unknown[] = { P("json", "1") };
	const struct ms_param min_percent[] = { P("min-percent", "1") };
	const struct ms_param dashed[] = { P("--by", "line") };
	const struct ms_param novalue[] = { P("by", NULL) };
	const struct ms_param function[] = { P("function", "hot") };
	const struct ms_param cause_alone[] = { P("cause", "sleeping") };
	const struct ms_param nokey[] = { P(NULL, "x") };
	char want[1024];

	refused(MS_VIEW_TOP, twice, N(twice),
		"parameter 'by' given twice: give it once (only tid and thread may be repeated)");
	refused(MS_VIEW_CALLERS, twice_fn, N(twice_fn), "parameter 'function' given twice: give it once");
	refused(MS_VIEW_TOP, buckets, 1, "--buckets applies to timeline, not top");
	refused(MS_VIEW_TREE, limit, 1, "--limit applies to top, diff, report and off-cpu, not tree");
	refused(MS_VIEW_SUMMARY, tid, 1, "--tid applies to every view but summary and problems, not summary");
	snprintf(want, sizeof(want), "unknown parameter 'json': the parameters are ms-analyze's options "
		 "without their dashes: by, look, unit, tid, thread, time, module, focus, ignore, "
		 "cause, label, hide-below, function (callers, callees), sort, limit, buckets");
	refused(MS_VIEW_TOP, unknown, 1, want);
	assert_non_null(strstr(want, "'json'"));
	/* the terminal's second name of hide-below is not a parameter */
	assert_int_equal(from(&(struct ms_query){ 0 }, MS_VIEW_TREE, min_percent, 1), -1);
	assert_true(!strncmp(caught, "unknown parameter 'min-percent': ", 33));
	assert_int_equal(from(&(struct ms_query){ 0 }, MS_VIEW_TOP, dashed, 1), -1);
	assert_true(!strncmp(caught, "unknown parameter '--by': ", 26));
	refused(MS_VIEW_TOP, novalue, 1, "parameter 'by' needs a value: by=VALUE");
	refused(MS_VIEW_TOP, function, 1, "function applies to callers and callees, not top");
	refused(MS_VIEW_CALLEES, NULL, 0, "callees needs the function to start from");
	/* ms_query_check() refuses what no capture could answer */
	assert_int_equal(from(&(struct ms_query){ 0 }, MS_VIEW_TOP, cause_alone, 1), -1);
	assert_true(!strncmp(caught, "--cause selects off-CPU intervals", 33));
	refused(MS_VIEW_TOP, nokey, 1, "a parameter without a name");
}

/* The caller's keys are left alone, wherever they are and however often. */
static void test_skip(void **state)
{
	const struct ms_param p[] = { P("a", "0"), P("b", "1"), P("a", "x"), P("limit", "3") };
	const char *const skip[] = { "a", "b", NULL };
	struct ms_query q;

	ms_query_init(&q, MS_VIEW_DIFF);
	assert_int_equal(ms_query_from_params(&q, p, N(p), skip), 0);
	assert_int_equal(q.limit, 3);
	/* without the skip list they are unknown */
	assert_int_equal(from(&q, MS_VIEW_DIFF, p, N(p)), -1);
	assert_true(!strncmp(caught, "unknown parameter 'a': ", 23));
}

/* The table of options: names round-trip, and only tid and thread repeat. */
static void test_options_table(void **state)
{
	for (int i = 0; i < MS_QOPT_COUNT; i++) {
		enum ms_qopt o;

		assert_non_null(ms_qopt_name((enum ms_qopt)i));
		assert_int_equal(ms_qopt_find(ms_qopt_name((enum ms_qopt)i), &o), 0);
		assert_int_equal(o, i);
		assert_int_equal(ms_qopt_repeats(o), o == MS_QOPT_TID || o == MS_QOPT_THREAD);
	}
	assert_null(ms_qopt_name(MS_QOPT_COUNT));
	assert_int_equal(ms_qopt_find("json", &(enum ms_qopt){ 0 }), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_parameter),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_options_table),
	};

	ms_set_progname("params-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

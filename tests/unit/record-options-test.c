/*
 * microscope record's options (cmd/microscope/options.c): each preset and
 * its overrides give the documented value, every contradiction and bad
 * value is refused in one line naming the option, and the description
 * the capture keeps is exact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cmd/microscope/options.h"
#include "unwind/unwind.h"
#include "util/error.h"

#include "stderr-capture.h"

/* Parse "record" and the NULL-terminated words ap holds (o->argv points into them). */
static int vparse(struct ms_record_options *o, const char *first, va_list ap)
{
	static char *argv[64];
	int argc = 0;

	argv[argc++] = "record";
	for (const char *w = first; w; w = va_arg(ap, const char *))
		argv[argc++] = (char *)w;
	argv[argc] = NULL;
	return ms_record_options_parse(o, argc, argv);
}

static int parse(struct ms_record_options *o, const char *first, ...)
{
	va_list ap;
	int r;

	va_start(ap, first);
	r = vparse(o, first, ap);
	va_end(ap);
	return r;
}

static const char *describe(const struct ms_record_options *o)
{
	static char buf[512];

	ms_record_options_describe(o, buf, sizeof(buf));
	return buf;
}

static void test_default(void **state)
{
	struct ms_record_options o;

	(void)state;
	assert_int_equal(parse(&o, "--", "true", NULL), 0);
	assert_string_equal(o.preset->name, "default");
	assert_int_equal(o.freq, 999);
	assert_int_equal(o.period, 0);
	assert_int_equal(o.stack_size, 32768);
	assert_int_equal(o.unwind, MS_UNWIND_AUTO);
	assert_string_equal(o.argv[0], "true");
	assert_string_equal(describe(&o), "preset=default freq=999 event=cpu-clock stack-size=32768 "
			    "unwind=auto symbolize=immediate duration=none mmap-pages=auto "
			    "budget=off");
	assert_int_equal(o.budget_ppm, 0);
}

static void test_presets(void **state)
{
	struct ms_record_options o;

	(void)state;
	assert_int_equal(parse(&o, "--preset", "light", "--", "true", NULL), 0);
	assert_int_equal(o.freq, 99);
	assert_int_equal(o.stack_size, 8192);
	assert_int_equal(o.unwind, MS_UNWIND_DWARF_FP);
	assert_int_equal(o.budget_ppm, 10000);
	assert_true(strstr(describe(&o), " budget=1.0%") != NULL);
	assert_int_equal(parse(&o, "--preset", "deep", "-p", "1", NULL), 0);
	assert_int_equal(o.freq, 999);
	assert_int_equal(o.stack_size, 65528);
	assert_int_equal(o.mmap_pages, 1024);
	assert_int_equal(o.unwind, MS_UNWIND_DWARF);
	assert_int_equal(o.pid, 1);
	assert_string_equal(describe(&o), "preset=deep freq=999 event=cpu-clock stack-size=65528 "
			    "unwind=dwarf symbolize=immediate duration=none mmap-pages=1024 "
			    "budget=off");
}

/* Flags override the preset, wherever they stand. */
static void test_overrides(void **state)
{
	struct ms_record_options o;

	(void)state;
	assert_int_equal(parse(&o, "-F", "250", "--stack-size", "16384", "--preset", "deep",
			       "--unwind", "fp", "--mmap-pages", "64", "--duration", "1.5",
			       "--symbolize=deferred", "--", "true", NULL), 0);
	assert_int_equal(o.freq, 250);
	assert_int_equal(o.stack_size, 16384);
	assert_int_equal(o.mmap_pages, 64);
	assert_int_equal(o.unwind, MS_UNWIND_FP);
	assert_true(o.deferred);
	assert_string_equal(describe(&o), "preset=deep freq=250 event=cpu-clock stack-size=16384 "
			    "unwind=fp symbolize=deferred duration=1.500000000s mmap-pages=64 "
			    "budget=off");
	/* A budget given, or the preset's taken off. */
	assert_int_equal(parse(&o, "--budget", "2.5%", "--", "true", NULL), 0);
	assert_int_equal(o.budget_ppm, 25000);
	assert_true(strstr(describe(&o), " budget=2.5%") != NULL);
	assert_int_equal(parse(&o, "--budget", "0.25", "--preset", "light", "--", "true", NULL), 0);
	assert_int_equal(o.budget_ppm, 2500);
	assert_int_equal(parse(&o, "--preset", "light", "--budget", "off", "--", "true", NULL), 0);
	assert_int_equal(o.budget_ppm, 0);
	assert_int_equal(parse(&o, "--budget", "0", "--", "true", NULL), -1);
	assert_int_equal(parse(&o, "--budget", "101", "--", "true", NULL), -1);
	assert_int_equal(parse(&o, "--budget", "2x", "--", "true", NULL), -1);
	assert_int_equal(parse(&o, "--budget", "", "--", "true", NULL), -1);
	/* a period replaces the preset's rate */
	assert_int_equal(parse(&o, "--preset", "light", "-c", "5000000", "--", "true", NULL), 0);
	assert_int_equal(o.freq, 0);
	assert_int_equal(o.period, 5000000);
	assert_true(strstr(describe(&o), " period=5000000 ") != NULL);
}

/* One message naming the option, for each refusal. */
static void refused(const char *want, const char *first, ...)
{
	struct ms_record_options o;
	const char *err;
	va_list ap;
	int r;

	va_start(ap, first);
	stderr_begin();
	r = vparse(&o, first, ap);
	err = stderr_end();
	va_end(ap);
	assert_int_equal(r, -1);
	if (!strstr(err, want))
		fail_msg("expected \"%s\" in \"%s\"", want, err);
	assert_non_null(strchr(err, '\n'));
	assert_null(strchr(strchr(err, '\n') + 1, '\n'));
}

static void test_refusals(void **state)
{
	(void)state;
	refused("--unwind dwarf needs a stack copy, but --stack-size is 0",
		"--unwind", "dwarf", "--stack-size", "0", "--", "true", NULL);
	refused("--unwind dwarf+fp needs a stack copy",
		"--preset", "light", "--stack-size", "0", "--", "true", NULL);
	refused("-F: the frequency must be more than 0", "-F", "0", "--", "true", NULL);
	refused("give either -F HZ or -c PERIOD, not both", "-F", "9", "-c", "9", "--", "x", NULL);
	refused("unknown option '--bogus'", "--bogus", "--", "true", NULL);
	refused("unknown option '-z'", "-z", "--", "true", NULL);
	refused("option '-F' needs a value", "-F", NULL);
	refused("--preset: no preset 'fast'", "--preset", "fast", "--", "true", NULL);
	refused("nothing to record", NULL);
	refused("give either -p PID or a command, not both", "-p", "3", "--", "true", NULL);
	refused("-o: a capture is written to a file, not to stdout", "-o", "-", "--", "true", NULL);
	refused("--stack-size 100: must be a multiple of 8", "--stack-size", "100", "--", "x", NULL);
	refused("--mmap-pages 3: must be a power of two", "--mmap-pages", "3", "--", "x", NULL);
	refused("unknown event 'cycles-ish'", "-e", "cycles-ish", "--", "x", NULL);
	refused("--unwind wants dwarf, fp or dwarf+fp, not 'both'", "--unwind", "both", "--", "x",
		NULL);
	refused("--symbolize wants immediate or deferred, not 'later'", "--symbolize=later", "--",
		"x", NULL);
}

/* --unwind fp without a copy is fine; so is the default with none (fp then). */
/* Blocked-time collection: the wall preset turns it on, the flags either way over any preset. */
static void test_off_cpu(void **state)
{
	struct ms_record_options o;

	(void)state;
	assert_int_equal(parse(&o, "--", "true", NULL), 0);
	assert_false(o.off_cpu);
	assert_null(strstr(describe(&o), "off-cpu"));
	assert_int_equal(parse(&o, "--preset", "wall", "--", "true", NULL), 0);
	assert_true(o.off_cpu);
	assert_int_equal(o.freq, 999);
	assert_int_equal(o.stack_size, 32768);
	assert_int_equal(o.unwind, MS_UNWIND_AUTO);
	assert_int_equal(o.budget_ppm, 0);
	assert_string_equal(describe(&o), "preset=wall freq=999 event=cpu-clock stack-size=32768 "
			    "unwind=auto symbolize=immediate duration=none mmap-pages=auto "
			    "budget=off off-cpu");
	assert_int_equal(parse(&o, "--no-off-cpu", "--preset", "wall", "--", "true", NULL), 0);
	assert_false(o.off_cpu);
	assert_int_equal(parse(&o, "--off-cpu", "--preset", "light", "-p", "1", NULL), 0);
	assert_true(o.off_cpu);
	assert_int_equal(o.freq, 99);
	assert_true(strstr(describe(&o), " budget=1.0% off-cpu") != NULL);
	/* Without a sample copy, switch-outs copy none either: still valid. */
	assert_int_equal(parse(&o, "--off-cpu", "--stack-size", "0", "--unwind", "fp", "--", "true",
			       NULL), 0);
	assert_true(o.off_cpu);
	assert_int_equal(parse(&o, "--off-cpu=yes", "--", "true", NULL), -1);
}

/* JIT perf maps are read unless --no-perf-map, whatever the preset; the description says so. */
static void test_no_perf_map(void **state)
{
	struct ms_record_options o;

	(void)state;
	assert_int_equal(parse(&o, "--", "true", NULL), 0);
	assert_false(o.no_perf_map);
	assert_null(strstr(describe(&o), "perf-map"));
	assert_int_equal(parse(&o, "--no-perf-map", "--preset", "wall", "--", "true", NULL), 0);
	assert_true(o.no_perf_map);
	assert_string_equal(describe(&o), "preset=wall freq=999 event=cpu-clock stack-size=32768 "
			    "unwind=auto symbolize=immediate duration=none mmap-pages=auto "
			    "budget=off off-cpu no-perf-map");
	assert_int_equal(parse(&o, "--no-perf-map", "-p", "1", NULL), 0);
	assert_true(o.no_perf_map);
	assert_int_equal(parse(&o, "--no-perf-map=yes", "--", "true", NULL), -1);
	assert_int_equal(parse(&o, "--perf-map", "--", "true", NULL), -1);
}

/* GDB JIT objects are read unless --no-jit-objects, apart from perf maps; the description says so. */
static void test_no_jit_objects(void **state)
{
	struct ms_record_options o;

	(void)state;
	assert_int_equal(parse(&o, "--", "true", NULL), 0);
	assert_false(o.no_jit_objects);
	assert_null(strstr(describe(&o), "jit-objects"));
	assert_int_equal(parse(&o, "--no-jit-objects", "--", "true", NULL), 0);
	assert_true(o.no_jit_objects);
	assert_false(o.no_perf_map);
	assert_string_equal(describe(&o), "preset=default freq=999 event=cpu-clock stack-size=32768 "
			    "unwind=auto symbolize=immediate duration=none mmap-pages=auto "
			    "budget=off no-jit-objects");
	assert_int_equal(parse(&o, "--no-perf-map", "--no-jit-objects", "-p", "1", NULL), 0);
	assert_true(o.no_perf_map);
	assert_true(o.no_jit_objects);
	assert_true(strstr(describe(&o), " no-perf-map no-jit-objects") != NULL);
	assert_int_equal(parse(&o, "--no-jit-objects=yes", "--", "true", NULL), -1);
}

static void test_no_copy(void **state)
{
	struct ms_record_options o;

	(void)state;
	assert_int_equal(parse(&o, "--stack-size", "0", "--unwind", "fp", "--", "true", NULL), 0);
	assert_int_equal(parse(&o, "--stack-size", "0", "--", "true", NULL), 0);
	assert_int_equal(o.unwind, MS_UNWIND_AUTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_no_copy),
		cmocka_unit_test(test_off_cpu),
		cmocka_unit_test(test_no_perf_map),
		cmocka_unit_test(test_no_jit_objects),
	};

	ms_set_progname("record-options-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

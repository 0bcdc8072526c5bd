/*
 * Unit tests of the pprof import's threads (formats/pprof/threads.c): the
 * labels real producers write give imported threads their ids and names;
 * hostile labels (a name of 1 MB, thousands of threads, labels in
 * conflict) import within bounds, and the same file gives the same bytes.
 * Profiles are built with protobuf-c (tests/unit/pprof-build.h).
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

#include "capture/capture.h"
#include "formats/formats.h"
#include "util/error.h"

#include "tests/unit/pprof-build.h"
#include "tests/unit/stderr-capture.h"

#define N(v) ((int64_t)(v))

/* Import b's profile; what the import printed in *msg (NULL: no message expected). */
static struct ms_capture *import(struct pbuild *b, const char **msg)
{
	size_t len;
	unsigned char *buf = pb_pack(b, &len);
	struct ms_capture *cap;
	const char *said;

	stderr_begin();
	cap = ms_pprof_import(buf, len, "t.pb", "test 1");
	said = stderr_end();
	free(buf);
	if (msg)
		*msg = said;
	else if (*said)
		fail_msg("the import said: %s", said);
	assert_non_null(cap);
	return cap;
}

/* The row of thread (pid, tid), which must exist. */
static const struct ms_cap_thread *thread(const struct ms_capture *cap, uint32_t pid, uint32_t tid)
{
	for (uint32_t i = 0; i < cap->n_threads; i++)
		if (cap->threads[i].pid == pid && cap->threads[i].tid == tid)
			return &cap->threads[i];
	fail_msg("no thread %u/%u among %u", pid, tid, cap->n_threads);
	return NULL;
}

static const char *name_of(const struct ms_capture *cap, uint32_t pid, uint32_t tid)
{
	return cap->strings[thread(cap, pid, tid)->name];
}

/* Samples (counted) of thread (pid, tid). */
static uint64_t samples_of(const struct ms_capture *cap, uint32_t pid, uint32_t tid)
{
	const struct ms_cap_thread *t = thread(cap, pid, tid);
	uint64_t n = 0;

	for (uint32_t i = 0; i < cap->n_samples; i++)
		if (&cap->threads[cap->samples[i].thread] == t)
			n += cap->samples[i].count;
	return n;
}

/* The count of problem code, 0 when absent; its detail in *detail. */
static uint64_t problem(const struct ms_capture *cap, const char *code, const char **detail)
{
	for (uint32_t i = 0; i < cap->n_problems; i++)
		if (!strcmp(cap->strings[cap->problems[i].code], code)) {
			if (detail)
				*detail = cap->strings[cap->problems[i].detail];
			return cap->problems[i].count;
		}
	return 0;
}

static void test_producers_labels(void **state)
{
	struct pbuild b;
	struct ms_capture *cap;
	const char *detail = NULL, *msg;

	(void)state;
	pb_begin(&b);
	/* microscope, perf_to_profile: numbers */
	pb_sample(&b, "main;run", 3, "pid", 'n', N(1), "tid", 'n', N(10), "thread", 's', "main", NULL);
	/* Pyroscope's py-spy backend: ids as text */
	pb_sample(&b, "main;work", 2, "pid", 's', "1", "thread_id", 's', "55", "thread_name", 's',
		  "worker", NULL);
	/* Datadog: the OS id before the runtime's (a pthread_t address) */
	pb_sample(&b, "main;py", 5, "thread id", 'n', N(140234567890123), "thread native id", 'n',
		  N(77), "thread name", 's', "MainThread", NULL);
	/* async-profiler, pprof-rs: a name only; OpenTelemetry's key, another's */
	pb_sample(&b, "main;gc", 7, "thread", 's', "GC Thread#0 [tid=4242]", NULL);
	pb_sample(&b, "main;gc", 1, "thread.name", 's', "GC Thread#0 [tid=4242]", NULL);
	/* a runtime's handle alone */
	pb_sample(&b, "main;idle", 4, "thread id", 'n', N(140234567890999), NULL);
	/* perf_to_profile's thread_comm; threadname */
	pb_sample(&b, "main;io", 6, "pid", 'n', N(2), "tid", 'n', N(20), "thread_comm", 's', "io", NULL);
	pb_sample(&b, "main;x", 1, "threadname", 's', "pool-1", NULL);
	/* no labels: thread 0/0 as before */
	pb_sample(&b, "main", 9, NULL);
	cap = import(&b, &msg);

	assert_string_equal(name_of(cap, 1, 10), "main");
	assert_int_equal(samples_of(cap, 1, 10), 3);
	assert_string_equal(name_of(cap, 1, 55), "worker");
	assert_int_equal(samples_of(cap, 1, 55), 2);
	assert_string_equal(name_of(cap, 0, 77), "MainThread");
	assert_int_equal(samples_of(cap, 0, 77), 5);
	assert_string_equal(name_of(cap, 2, 20), "io");
	/* numbered past the largest tid (77), in the order first shown */
	assert_string_equal(name_of(cap, 0, 78), "GC Thread#0 [tid=4242]");
	assert_int_equal(samples_of(cap, 0, 78), 8);
	assert_string_equal(name_of(cap, 0, 79), "");
	assert_int_equal(samples_of(cap, 0, 79), 4);
	assert_string_equal(name_of(cap, 0, 80), "pool-1");
	assert_string_equal(name_of(cap, 0, 0), "");
	assert_int_equal(samples_of(cap, 0, 0), 9);
	assert_int_equal(cap->n_threads, 8);
	assert_int_equal(problem(cap, "import-thread-renamed", &detail), 0);
	/* the runtime's handle alone is the one id not kept as a tid */
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "thread and process ids that are not whole numbers"));
	ms_capture_free(cap);
	pb_free(&b);
}

static void test_conflicting_labels(void **state)
{
	struct pbuild b;
	struct ms_capture *cap;
	const char *detail = NULL, *msg;

	(void)state;
	pb_begin(&b);
	/* one thread, two names: the first kept, the other counted */
	pb_sample(&b, "a", 1, "tid", 'n', N(5), "thread", 's', "first", NULL);
	pb_sample(&b, "b", 2, "tid", 'n', N(5), "thread", 's', "second", NULL);
	pb_sample(&b, "c", 4, "tid", 'n', N(5), "thread_name", 's', "third", NULL);
	/* two ids in one sample: "tid" before "thread_id"; two names: "thread" first */
	pb_sample(&b, "d", 1, "thread_id", 'n', N(7), "tid", 'n', N(6), "thread_name", 's', "no",
		  "thread", 's', "six", NULL);
	/* the same key twice: the first */
	pb_sample(&b, "e", 1, "tid", 'n', N(8), "tid", 'n', N(9), "thread", 's', "eight",
		  "thread", 's', "nine", NULL);
	/* ids that are no ids: text, negative; a pid past 2^31-1; a numeric name */
	pb_sample(&b, "f", 1, "tid", 's', "main", "thread", 's', "named-by-text-id", NULL);
	pb_sample(&b, "g", 1, "tid", 'n', N(-1), "thread", 's', "negative", NULL);
	pb_sample(&b, "h", 1, "pid", 'n', N(1) << 40, "tid", 'n', N(3), NULL);
	pb_sample(&b, "i", 1, "tid", 'n', N(4), "thread", 'n', N(12), NULL);
	pb_sample(&b, "j", 1, "tid", 's', "012", "thread", 's', "", NULL);
	pb_sample(&b, "k", 1, "tid", 's', "99999999999999999999999", NULL);
	cap = import(&b, &msg);

	assert_string_equal(name_of(cap, 0, 5), "first");
	assert_int_equal(samples_of(cap, 0, 5), 7);
	assert_int_equal(problem(cap, "import-thread-renamed", &detail), 2);
	assert_non_null(strstr(detail, "thread 0/5 is named \"first\" by a sample's labels and "
				       "\"second\" by another's"));
	assert_string_equal(name_of(cap, 0, 6), "six");
	assert_string_equal(name_of(cap, 0, 8), "eight");
	/* numbered past 12 (text "012" is 12) in the order first shown */
	assert_string_equal(name_of(cap, 0, 13), "named-by-text-id");
	assert_string_equal(name_of(cap, 0, 14), "negative");
	assert_int_equal(samples_of(cap, 0, 3), 1);	/* pid 2^40 is no pid */
	assert_string_equal(name_of(cap, 0, 4), "");	/* a number is no name */
	assert_string_equal(name_of(cap, 0, 12), "");	/* "" names nothing */
	/* an id past 2^64 is text like any other: no id, no name, thread 0 */
	assert_int_equal(samples_of(cap, 0, 0), 1);
	assert_int_equal(cap->n_threads, 9);
	/* the loss line says what was not kept */
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "thread and process ids that are not whole numbers up to "
				    "2^31-1 (those threads are numbered)"));
	assert_null(strstr(msg, "labels other than"));
	ms_capture_free(cap);
	pb_free(&b);
}

static void test_long_names(void **state)
{
	struct pbuild b;
	struct ms_capture *cap;
	size_t big = 1 << 20;
	char *name = malloc(big + 1);
	const char *msg, *kept;

	(void)state;
	assert_non_null(name);
	/* 1 MiB of two-byte characters: 255 bytes would cut one in half */
	for (size_t i = 0; i < big; i += 2)
		memcpy(name + i, "\xc3\xa9", 2);
	name[big] = '\0';
	pb_begin(&b);
	for (int i = 0; i < 1000; i++)
		pb_sample(&b, "a;b", 1, "tid", 'n', N(5), "thread", 's', name, NULL);
	/* the same bytes twice in the string table: one thread known by that name */
	pb_sample(&b, "a;c", 1, "thread", 's', name, NULL);
	pb_sample(&b, "a;c", 2, "thread", 'S', name, NULL);
	cap = import(&b, &msg);
	kept = name_of(cap, 0, 5);
	assert_int_equal(strlen(kept), 254);
	assert_memory_equal(kept, name, 254);
	assert_int_equal(samples_of(cap, 0, 5), 1000);
	assert_int_equal(samples_of(cap, 0, 6), 3);
	assert_int_equal(strlen(name_of(cap, 0, 6)), 254);
	assert_int_equal(cap->n_threads, 2);
	assert_int_equal(problem(cap, "import-thread-renamed", NULL), 0);
	assert_non_null(strstr(msg, "ends of thread names past 255 bytes"));
	ms_capture_free(cap);
	pb_free(&b);
	free(name);
}

/* The encoded capture of b's profile. */
static unsigned char *encoded(struct pbuild *b, size_t *len)
{
	struct ms_capture *cap = import(b, NULL);
	unsigned char *buf;

	assert_int_equal(ms_capture_encode(cap, &buf, len), 0);
	ms_capture_free(cap);
	return buf;
}

static void test_thousands_of_threads(void **state)
{
	struct pbuild b;
	struct ms_capture *cap;
	unsigned char *one, *two;
	size_t len1, len2;
	char name[32];
	enum { THREADS = 5000 };

	(void)state;
	pb_begin(&b);
	/* in an order that is neither by tid nor by name */
	for (int i = 0; i < THREADS; i++) {
		int k = (i * 7919) % THREADS;

		snprintf(name, sizeof(name), "t%d", k);
		pb_sample(&b, "main;work", 1 + k % 3, "pid", 'n', N(100), "tid", 'n', N(1000 + k),
			  "thread", 's', name, NULL);
		snprintf(name, sizeof(name), "named-only-%d", k);
		pb_sample(&b, "main;idle", 1, "pid", 'n', N(100), "thread_name", 's', name, NULL);
	}
	cap = import(&b, NULL);
	assert_int_equal(cap->n_threads, 2 * THREADS);
	for (int k = 0; k < THREADS; k += 499) {
		snprintf(name, sizeof(name), "t%d", k);
		assert_string_equal(name_of(cap, 100, 1000 + k), name);
		assert_int_equal(samples_of(cap, 100, 1000 + k), 1 + k % 3);
	}
	/* named-only threads numbered past the largest tid, as the file shows them */
	assert_string_equal(name_of(cap, 100, 1000 + THREADS), "named-only-0");
	snprintf(name, sizeof(name), "named-only-%d", 7919 % THREADS);
	assert_string_equal(name_of(cap, 100, 1000 + THREADS + 1), name);
	ms_capture_free(cap);
	/* the same file, the same bytes */
	one = encoded(&b, &len1);
	two = encoded(&b, &len2);
	assert_int_equal(len1, len2);
	assert_memory_equal(one, two, len1);
	free(one);
	free(two);
	pb_free(&b);
}

/* Labels other than the thread's still make the loss line; the thread's do not. */
static void test_loss_line(void **state)
{
	struct pbuild b;
	struct ms_capture *cap;
	const char *msg;

	(void)state;
	pb_begin(&b);
	pb_sample(&b, "a", 1, "tid", 'n', N(1), "thread", 's', "x", NULL);
	cap = import(&b, NULL);
	ms_capture_free(cap);
	pb_sample(&b, "a", 1, "tid", 'n', N(1), "span id", 'n', N(42), NULL);
	cap = import(&b, &msg);
	assert_non_null(strstr(msg, "labels other than a thread's and its process's ids and names"));
	ms_capture_free(cap);
	pb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_producers_labels),
		cmocka_unit_test(test_conflicting_labels),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_thousands_of_threads),
		cmocka_unit_test(test_loss_line),
	};

	ms_set_progname("pprof-threads-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

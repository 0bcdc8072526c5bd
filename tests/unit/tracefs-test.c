/*
 * Unit tests of the tracepoint format parser (perf/tracefs.h): the real
 * format of sched:sched_switch on Linux 6.18 (copied from
 * /sys/kernel/tracing/events/sched/sched_switch/format), one with a
 * dynamic array, and malformed texts, each refused with the line named.
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

#include "perf/tracefs.h"
#include "stream/records.h"
#include "stream/stream.h"

#define FIELD(decl, off, size, sgn) \
	"\tfield:" decl ";\toffset:" #off ";\tsize:" #size ";\tsigned:" #sgn ";\n"

static const char sched_switch_6_18[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
	"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
	"(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 "
	"| 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state "
	"& ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
	"0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, "
	"\"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { "
	"0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", "
	"REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
	"0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, "
	"REC->next_pid, REC->next_prio\n";

static struct ms_tracepoint tp;
static char why[256];

static int parse(const char *text, const char *name)
{
	return ms_tracepoint_parse(text, strlen(text), name, &tp, why, sizeof(why));
}

static void check_field(const char *name, uint64_t offset, uint64_t size, uint64_t sgn)
{
	int i = ms_tracepoint_field(&tp, name);

	assert_true(i >= 0);
	assert_int_equal(tp.offsets[i], offset);
	assert_int_equal(tp.sizes[i], size);
	assert_int_equal(tp.is_signed[i], sgn);
}

static void test_real_sched_switch(void **state)
{
	(void)state;
	assert_int_equal(parse(sched_switch_6_18, "sched:sched_switch"), 0);
	assert_int_equal(tp.config, 372);
	assert_int_equal(tp.name.len, strlen("sched:sched_switch"));
	assert_memory_equal(tp.name.ptr, "sched:sched_switch", tp.name.len);
	/* Common fields included, in the file's order. */
	assert_int_equal(tp.n_fields, 11);
	assert_int_equal(tp.n_offsets, 11);
	assert_int_equal(tp.n_sizes, 11);
	assert_int_equal(tp.n_signed, 11);
	assert_int_equal(tp.fields[0].len, strlen("common_type"));
	assert_memory_equal(tp.fields[0].ptr, "common_type", tp.fields[0].len);
	check_field("common_pid", 4, 4, 1);
	/* An array is named without its bounds. */
	check_field("prev_comm", 8, 16, 0);
	check_field("prev_pid", 24, 4, 1);
	check_field("prev_state", 32, 8, 1);
	check_field("next_pid", 56, 4, 1);
	check_field("next_prio", 60, 4, 1);
	assert_int_equal(ms_tracepoint_field(&tp, "prev"), -1);
	assert_int_equal(ms_tracepoint_field(&tp, "prev_state_"), -1);
}

/* The record it makes goes through the stream codec and back whole. */
static void test_record_round_trip(void **state)
{
	static struct ms_tracepoint back;
	struct ms_writer *w;
	struct ms_reader *r;
	struct ms_record rec;

	(void)state;
	assert_int_equal(parse(sched_switch_6_18, "sched:sched_switch"), 0);
	{
		char path[] = "/tmp/tracefs-test-XXXXXX";
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		unlink(path);
		w = ms_writer_open(fd, "tmp", 0);
		assert_non_null(w);
		assert_int_equal(ms_writer_header(w, NULL, "tracefs-test", "0"), 0);
		assert_int_equal(ms_tracepoint_pack(w, &tp), 0);
		assert_int_equal(ms_writer_trailer(w, true), 0);
		assert_int_equal(ms_writer_close(w), 0);
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		r = ms_reader_open(fd, "tmp");
		assert_non_null(r);
		assert_int_equal(ms_reader_next(r, &rec), MS_READ_RECORD);
		assert_int_equal(rec.kind, MS_REC_TRACEPOINT);
		assert_int_equal(ms_tracepoint_unpack(&rec, &back), 0);
		assert_int_equal(back.config, 372);
		assert_int_equal(back.n_fields, 11);
		assert_int_equal(back.offsets[7], 32);
		assert_int_equal(back.fields[7].len, strlen("prev_state"));
		assert_memory_equal(back.fields[7].ptr, "prev_state", back.fields[7].len);
		ms_reader_free(r);
		close(fd);
	}
}

static void test_dynamic_array(void **state)
{
	static const char text[] =
		"name: sched_process_exec\n"
		"ID: 365\n"
		"format:\n"
		FIELD("unsigned short common_type", 0, 2, 0)
		"\n"
		FIELD("__data_loc char[] filename", 8, 4, 0)
		FIELD("pid_t pid", 12, 4, 1)
		"\n"
		"print fmt: \"filename=%s\", __get_str(filename)\n";

	(void)state;
	assert_int_equal(parse(text, "sched:sched_process_exec"), 0);
	assert_int_equal(tp.n_fields, 3);
	check_field("filename", 8, 4, 0);
	check_field("pid", 12, 4, 1);
}

/* Unknown header lines are a later kernel's: left alone. No "print fmt:" at the end is fine. */
static void test_tolerated(void **state)
{
	static const char text[] =
		"name: e\n"
		"ID: 7\n"
		"flags: something new\n"
		"format:\n"
		"field:int x ;offset:0;size:4;signed:1;   \n";

	(void)state;
	assert_int_equal(parse(text, "s:e"), 0);
	check_field("x", 0, 4, 1);
}

/* Each malformed text is refused, and why names the trouble. */
static void refused(const char *text, const char *name, const char *want)
{
	int r = parse(text, name);

	if (r == 0 || !strstr(why, want))
		fail_msg("text %s: got %d, '%s'; want -1 and '%s'", text, r, why, want);
}

#define HEAD "name: e\nID: 1\nformat:\n"

static void test_malformed(void **state)
{
	(void)state;
	refused("", "s:e", "no 'name:' line");
	refused("name: e\nformat:\n" FIELD("int x", 0, 4, 1), "s:e", "no 'ID:' line");
	refused("name: e\nID: 1\n", "s:e", "no 'format:' line");
	refused(HEAD "\nprint fmt: \"\"\n", "s:e", "no fields");
	refused("name: other\nID: 1\nformat:\n" FIELD("int x", 0, 4, 1), "s:e",
		"line 1: the format is of 'other', not of 'e'");
	refused("name: e\nID: 12x\nformat:\n", "s:e", "line 2: the ID is not a decimal");
	refused("name: e\nID: 99999999999\nformat:\n", "s:e", "line 2: the ID is not");
	refused("name: e\nID: \nformat:\n", "s:e", "line 2: the ID");
	refused(HEAD "\tfield:int x\n", "s:e", "line 4: a field's declaration does not end with ';'");
	refused(HEAD "\tfield:int x\toffset:0;\tsize:4;\tsigned:1;\n", "s:e",
		"line 4: a field's declaration does not end with a name");
	refused(HEAD FIELD("int", 0, 4, 1), "s:e", "line 4: the field 'int' has no type");
	refused(HEAD FIELD("int 9x", 0, 4, 1), "s:e", "does not end with a name");
	refused(HEAD FIELD("char x]", 0, 4, 1), "s:e", "']' without '['");
	refused(HEAD FIELD("char [4]", 0, 4, 1), "s:e", "the field 'char' has no type");
	refused(HEAD FIELD("int x", 0, 4, 1) FIELD("long x", 8, 8, 1), "s:e",
		"line 5: the field 'x' is listed twice");
	refused(HEAD "\tfield:int x;\tsize:4;\toffset:0;\tsigned:1;\n", "s:e",
		"line 4: expected 'offset:'");
	refused(HEAD FIELD("int x", -1, 4, 1), "s:e", "'offset:' is not a decimal");
	refused(HEAD FIELD("int x", 0, 4, 2), "s:e", "'signed:' is not a decimal number of at most 1");
	refused(HEAD FIELD("int x", 70000, 4, 0), "s:e", "'offset:' is not a decimal");
	refused(HEAD FIELD("int x", 65534, 4, 0), "s:e", "ends at byte 65538");
	refused(HEAD "\tfield:int x;\toffset:0\tsize:4;\tsigned:1;\n", "s:e",
		"'offset:' is not followed by ';'");
	refused(HEAD "\tfield:int x;\toffset:0;\tsize:4;\tsigned:1; junk\n", "s:e",
		"unexpected text after");
	refused(HEAD "\tfield:int x;\toffset:0;\tsize:4;\n", "s:e", "expected 'signed:'");
	refused(HEAD "\tgarbage\n", "s:e", "line 4: expected a 'field:' line or 'print fmt:'");
}

static void test_malformed_bounds(void **state)
{
	static char text[MS_TRACEFS_FORMAT_MAX + 64];
	size_t n;

	(void)state;
	/* A line longer than the bound. */
	n = (size_t)snprintf(text, sizeof(text), HEAD "\tfield:int ");
	memset(text + n, 'a', MS_TRACEFS_LINE_MAX);
	snprintf(text + n + MS_TRACEFS_LINE_MAX, 64, ";\toffset:0;\tsize:4;\tsigned:1;\n");
	refused(text, "s:e", "line 4: longer than 1024 bytes");
	/* A name longer than the bound. */
	n = (size_t)snprintf(text, sizeof(text), HEAD "\tfield:int ");
	memset(text + n, 'a', MS_TRACEFS_NAME_MAX);
	snprintf(text + n + MS_TRACEFS_NAME_MAX, 64, ";\toffset:0;\tsize:4;\tsigned:1;\n");
	refused(text, "s:e", "a field name of 64 bytes");
	/* More fields than a record holds. */
	n = (size_t)snprintf(text, sizeof(text), HEAD);
	for (int i = 0; i <= MS_TRACEPOINT_FIELDS_MAX; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "\tfield:int f%d;\toffset:%d;\tsize:4;\tsigned:1;\n", i, 4 * i);
	refused(text, "s:e", "line 68: more than 64 fields");
	/* A NUL byte inside the text. */
	assert_int_equal(ms_tracepoint_parse(HEAD "\tfield:int x\0;", sizeof(HEAD) + 13, "s:e", &tp,
					     why, sizeof(why)), -1);
	assert_non_null(strstr(why, "NUL byte"));
	/* Too long a text. */
	assert_int_equal(ms_tracepoint_parse(text, MS_TRACEFS_FORMAT_MAX + 1, "s:e", &tp, why,
					     sizeof(why)), -1);
	assert_non_null(strstr(why, "more than 65536"));
}

/* The format of this host, when it can be read (root, tracefs mounted): it parses. */
static void test_this_host(void **state)
{
	static struct ms_tracepoint_file f;

	(void)state;
	if (access(MS_TRACEFS_DIR "/events/sched/sched_switch/format", R_OK) != 0)
		skip();
	assert_int_equal(ms_tracepoint_load(MS_TRACEFS_DIR, "sched", "sched_switch", &f), 0);
	assert_true(f.tp.config > 0);
	assert_true(ms_tracepoint_field(&f.tp, "prev_state") >= 0);
	assert_true(ms_tracepoint_field(&f.tp, "prev_pid") >= 0);
}

static void test_load_missing(void **state)
{
	static struct ms_tracepoint_file f;

	(void)state;
	assert_int_equal(ms_tracepoint_load("/nonexistent", "sched", "sched_switch", &f), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_sched_switch),
		cmocka_unit_test(test_record_round_trip),
		cmocka_unit_test(test_dynamic_array),
		cmocka_unit_test(test_tolerated),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_malformed_bounds),
		cmocka_unit_test(test_this_host),
		cmocka_unit_test(test_load_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * mkpairstream: the ms-collect stream of a --python bpf recording's pairing
 * cases (tests/unit/pystream.h: pys_scenario()), written on stdout; and,
 * with --list, what ms-decode made of one, read on stdin, for
 * tests/0765-python-pairing.bats:
 *
 *   sample TID cpu CPU +TIME [py FRAMES 0xCODE]   (in order; TIME after PYS_T0)
 *   problem CODE COUNT
 *
 * "py" follows a sample whose PY_STACK came just before it, with the
 * number of its frames and the first one's code. --list fails (status 1,
 * a message) when a PY_STACK is followed by anything but a SAMPLE, or by
 * a SAMPLE whose pid, tid, time or cpu differ from its own, or when its
 * thread state or its last frame's flags are not what pystream.h wrote.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "stream/records.h"
#include "stream/stream.h"
#include "tests/unit/pystream.h"
#include "util/error.h"

static int write_stream(void)
{
	struct ms_writer *w = ms_writer_open(1, "stdout", 0);

	if (!w || ms_writer_header(w, NULL, "ms-collect", "0.1.0") < 0)
		return 1;
	pys_attrs(w);
	pys_scenario(w);
	if (ms_writer_trailer(w, true) < 0 || ms_writer_close(w) < 0)
		return 1;
	return 0;
}

static int bad(const char *what, uint64_t index)
{
	fprintf(stderr, "mkpairstream: record %" PRIu64 ": %s\n", index, what);
	return 1;
}

static int list(void)
{
	static struct ms_sample s;
	static struct ms_py_stack py;
	struct ms_reader *r = ms_reader_open(0, "stdin");
	struct ms_record rec;
	bool held = false;
	int got;

	if (!r)
		return 1;
	while ((got = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_PY_STACK) {
			if (held)
				return bad("two py-stack records in a row", rec.index);
			if (ms_py_stack_unpack(&rec, &py) < 0)
				return 1;
			held = true;
			continue;
		}
		if (held && rec.kind != MS_REC_SAMPLE)
			return bad("a py-stack record not followed by its sample", rec.index);
		if (rec.kind == MS_REC_PROBLEM) {
			struct ms_problem p;

			if (ms_problem_unpack(&rec, &p) < 0)
				return 1;
			printf("problem %.*s %" PRIu64 "\n", (int)p.code.len, p.code.ptr, p.count);
			continue;
		}
		if (rec.kind != MS_REC_SAMPLE)
			continue;
		if (ms_sample_unpack(&rec, &s) < 0)
			return 1;
		printf("sample %u cpu %u +%" PRIu64, s.tid, s.cpu, (uint64_t)(s.time - PYS_T0));
		if (held) {
			if (py.pid != s.pid || py.tid != s.tid || py.time != s.time || py.cpu != s.cpu)
				return bad("a sample whose pid, tid, time or cpu are not its "
					   "py-stack's", rec.index);
			if (py.tstate != 0x7f0000000000ull + s.tid || py.n_words < 4 ||
			    py.words[py.n_words - 1] != MS_BPF_PY_ENTRY ||
			    py.status != MS_BPF_PY_COMPLETE || py.gil != MS_BPF_PY_GIL_HELD)
				return bad("a py-stack record not as its walker record was",
					   rec.index);
			printf(" py %u 0x%" PRIx64, py.n_words / 4, py.words[0]);
			held = false;
		}
		printf("\n");
	}
	if (got != MS_READ_END)
		return 1;
	if (held)
		return bad("a py-stack record at the end", 0);
	ms_reader_free(r);
	return fclose(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	ms_set_progname("mkpairstream");
	if (argc == 2 && !strcmp(argv[1], "--list"))
		return list();
	if (argc == 1)
		return write_stream();
	fprintf(stderr, "usage: mkpairstream [--list]\n");
	return 2;
}

/*
 * caplabels: the LABEL_SPAN records of the stream on stdin (what ms-unwind
 * or ms-capture --dump writes), one a line, in stream order, for the bats
 * tests (tests/0785-python-gil.bats):
 *
 *   pid tid start end samples key value
 *
 * Exit 1 after a message when the stream is refused.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

int main(int argc, char **argv)
{
	struct ms_reader *r;
	struct ms_record rec;
	struct ms_label_span l;
	int rr;

	(void)argv;
	ms_set_progname("caplabels");
	if (argc != 1) {
		fprintf(stderr, "usage: caplabels < STREAM\n");
		return 2;
	}
	if (!(r = ms_reader_open(0, "stdin")))
		return 1;
	while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind != MS_REC_LABEL_SPAN)
			continue;
		if (ms_label_span_unpack(&rec, &l) < 0) {
			ms_reader_free(r);
			return 1;
		}
		printf("%" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %.*s %.*s\n",
		       l.pid, l.tid, l.start, l.end, l.samples, (int)l.key.len, l.key.ptr,
		       (int)l.value.len, l.value.ptr);
	}
	ms_reader_free(r);
	return rr == MS_READ_END ? 0 : 1;
}

/*
 * capjit: print a capture's JIT data one fact a line, for the bats tests:
 *
 *   capjit FILE        the perf-map and jit-object modules and perf-map
 *                      settings of capture FILE, in its order
 *   capjit --stream    the perf-map and jit-object module and jit-read
 *                      records of the stream on stdin (what ms-capture
 *                      --dump writes)
 *
 * Lines (numbers in decimal, base in hex):
 *   module PATH 0xBASE SIZE
 *   read PID PATH STATUS ERR OFFSET FUNCTIONS MALFORMED OVER_MAX NO_CODE CODE_UNREAD CODE_BYTES
 * with STATUS by name ("ok", "stale"). Exit 1 after a message when the
 * file or stream is refused.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "capture/capture.h"
#include "stream/records.h"
#include "stream/stream.h"
#include "util/error.h"

static void module_line(const char *path, size_t len, uint64_t base, uint64_t size)
{
	printf("module %.*s 0x%" PRIx64 " %" PRIu64 "\n", (int)len, path, base, size);
}

static void read_line(uint32_t pid, const char *path, size_t len, uint32_t status, uint32_t err,
		      const uint64_t n[7])
{
	printf("read %" PRIu32 " %.*s %s %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
	       " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", pid, (int)len, path,
	       ms_jit_read_status_name(status), err, n[0], n[1], n[2], n[3], n[4], n[5], n[6]);
}

static int from_stream(void)
{
	struct ms_reader *r = ms_reader_open(0, "stdin");
	struct ms_module m;
	struct ms_jit_read j;
	struct ms_record rec;
	int res;

	if (!r)
		return 1;
	while ((res = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_MODULE) {
			if (ms_module_unpack(&rec, &m) < 0)
				break;
			if (ms_module_kind_has_base(m.kind))
				module_line(m.path.ptr, m.path.len, m.base, m.size);
		} else if (rec.kind == MS_REC_JIT_READ) {
			uint64_t n[7];

			if (ms_jit_read_unpack(&rec, &j) < 0)
				break;
			n[0] = j.offset, n[1] = j.functions, n[2] = j.malformed, n[3] = j.over_max;
			n[4] = j.no_code, n[5] = j.code_unread, n[6] = j.code_bytes;
			read_line(j.pid, j.path.ptr, j.path.len, j.status, j.err, n);
		}
	}
	ms_reader_free(r);
	return res == MS_READ_END ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct ms_capture *cap;
	uint32_t i;

	ms_set_progname("capjit");
	if (argc != 2) {
		fprintf(stderr, "usage: capjit FILE | --stream\n");
		return 2;
	}
	if (!strcmp(argv[1], "--stream"))
		return from_stream() || fflush(stdout) ? 1 : 0;
	cap = ms_capture_load(argv[1]);
	if (!cap)
		return 1;
	for (i = 0; i < cap->n_modules; i++) {
		const struct ms_cap_module *m = &cap->modules[i];
		const char *path = cap->strings[m->path];

		if (ms_module_kind_has_base(m->kind))
			module_line(path, strlen(path), m->base, m->size);
	}
	for (i = 0; i < cap->n_perf_maps; i++) {
		const struct ms_cap_perf_map *x = &cap->perf_maps[i];
		const char *path = cap->strings[x->path];
		uint64_t n[7] = { x->offset, x->functions, x->malformed, x->over_max, x->no_code,
				  x->code_unread, x->code_bytes };

		read_line(x->pid, path, strlen(path), x->status, x->err, n);
	}
	ms_capture_free(cap);
	return fflush(stdout) ? 1 : 0;
}

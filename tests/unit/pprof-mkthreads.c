/*
 * Writes pprof files whose samples carry thread labels, for the bats tests
 * of the pprof import (tests/0910, tests/0960):
 *   pprof-mkthreads producers OUT   the labels of several producers
 *   pprof-mkthreads hostile OUT     a 1 MiB name, 5000 threads, names in conflict
 * OUT is plain protobuf (the importer reads it as it reads gzip).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/pprof-build.h"

#define N(v) ((int64_t)(v))

static void producers(struct pbuild *b)
{
	pb_sample(b, "main;run", 3, "pid", 'n', N(1), "tid", 'n', N(10), "thread", 's', "main", NULL);
	pb_sample(b, "main;work", 2, "pid", 's', "1", "thread_id", 's', "55", "thread_name", 's',
		  "worker", NULL);
	pb_sample(b, "main;py", 5, "thread id", 'n', N(140234567890123), "thread native id", 'n',
		  N(77), "thread name", 's', "MainThread", NULL);
	pb_sample(b, "main;gc", 7, "thread", 's', "GC Thread#0 [tid=4242]", NULL);
	pb_sample(b, "main;io", 6, "pid", 'n', N(2), "tid", 'n', N(20), "thread_comm", 's', "io", NULL);
}

static void hostile(struct pbuild *b)
{
	size_t big = 1 << 20;
	char *name = malloc(big + 1), small[32];

	if (!name)
		abort();
	memset(name, 'x', big);
	name[big] = '\0';
	pb_sample(b, "main;big", 1, "tid", 'n', N(1), "thread", 's', name, NULL);
	free(name);
	for (int i = 0; i < 5000; i++) {
		snprintf(small, sizeof(small), "t%d", i);
		pb_sample(b, "main;many", 1, "tid", 'n', N(100 + i), "thread", 's', small, NULL);
	}
	pb_sample(b, "main;renamed", 1, "tid", 'n', N(100), "thread", 's', "not-t0", NULL);
}

int main(int argc, char **argv)
{
	struct pbuild b;
	unsigned char *buf;
	size_t len;
	FILE *out;

	if (argc != 3 || (strcmp(argv[1], "producers") && strcmp(argv[1], "hostile"))) {
		fprintf(stderr, "usage: pprof-mkthreads producers|hostile OUT\n");
		return 2;
	}
	pb_begin(&b);
	if (!strcmp(argv[1], "producers"))
		producers(&b);
	else
		hostile(&b);
	buf = pb_pack(&b, &len);
	out = fopen(argv[2], "wb");
	if (!out || fwrite(buf, 1, len, out) != len || fclose(out)) {
		fprintf(stderr, "pprof-mkthreads: cannot write '%s'\n", argv[2]);
		return 1;
	}
	free(buf);
	pb_free(&b);
	return 0;
}

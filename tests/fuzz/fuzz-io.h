/*
 * Fuzz targets: a stage's input and output through real descriptors
 * without files. A drain thread reads a pipe to its end (an output of any
 * size, without the writer blocking); a feed thread sends bytes into a
 * socket (an input that cannot be mapped). Failures to set either up
 * abort, as a target's broken check does.
 */
#ifndef MS_TESTS_FUZZ_IO_H
#define MS_TESTS_FUZZ_IO_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct ms_fuzz_drain {
	int fd;
	uint8_t *bytes;
	size_t len, cap;
	pthread_t thread;
};

/* Start draining a new pipe: its write end, for the stage's output. */
int ms_fuzz_drain_start(struct ms_fuzz_drain *d);
/* Close wfd, wait for the drain: the bytes read (malloc'd), their length in *len. */
uint8_t *ms_fuzz_drain_end(struct ms_fuzz_drain *d, int wfd, size_t *len);

struct ms_fuzz_feed {
	int fd;
	const uint8_t *bytes;
	size_t len, chunk;
	pthread_t thread;
};

/*
 * Start feeding len bytes (kept by the caller until ms_fuzz_feed_end())
 * into a socket: its other end, to read from. chunk 0: a stream socket, as
 * fast as it takes them; otherwise messages of chunk bytes, so that each
 * read gets one and records come in pieces, always the same. The thread
 * stops early when the reader's end is closed.
 */
int ms_fuzz_feed_start(struct ms_fuzz_feed *f, const uint8_t *bytes, size_t len, size_t chunk);
/* Close rfd and wait for the feed. */
void ms_fuzz_feed_end(struct ms_fuzz_feed *f, int rfd);

#endif

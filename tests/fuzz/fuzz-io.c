/* Drain and feed threads of the fuzz targets: see fuzz-io.h. */
#include "tests/fuzz/fuzz-io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void need(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz: %s failed: %s\n", what, strerror(errno));
		abort();
	}
}

static void *drain_main(void *arg)
{
	struct ms_fuzz_drain *d = arg;
	ssize_t k;

	for (;;) {
		if (d->len == d->cap) {
			d->bytes = realloc(d->bytes, d->cap *= 2);
			need(d->bytes != NULL, "growing the drain's buffer");
		}
		k = read(d->fd, d->bytes + d->len, d->cap - d->len);
		if (k > 0)
			d->len += (size_t)k;
		else if (k == 0)
			return NULL;
		else
			need(errno == EINTR, "reading the drained pipe");
	}
}

int ms_fuzz_drain_start(struct ms_fuzz_drain *d)
{
	int p[2];

	need(pipe2(p, O_CLOEXEC) == 0, "pipe2");
	d->fd = p[0];
	d->len = 0;
	d->cap = 65536;
	d->bytes = malloc(d->cap);
	need(d->bytes != NULL, "the drain's buffer");
	need(pthread_create(&d->thread, NULL, drain_main, d) == 0, "starting the drain");
	return p[1];
}

uint8_t *ms_fuzz_drain_end(struct ms_fuzz_drain *d, int wfd, size_t *len)
{
	close(wfd);
	need(pthread_join(d->thread, NULL) == 0, "joining the drain");
	close(d->fd);
	*len = d->len;
	return d->bytes;
}

static void *feed_main(void *arg)
{
	struct ms_fuzz_feed *f = arg;
	size_t pos = 0;

	while (pos < f->len) {
		size_t k = f->len - pos;
		ssize_t n;

		if (f->chunk && k > f->chunk)
			k = f->chunk;
		n = send(f->fd, f->bytes + pos, k, MSG_NOSIGNAL);
		if (n > 0)
			pos += (size_t)n;
		else if (n < 0 && errno != EINTR)
			break;	/* the reader stopped */
	}
	close(f->fd);
	return NULL;
}

int ms_fuzz_feed_start(struct ms_fuzz_feed *f, const uint8_t *bytes, size_t len, size_t chunk)
{
	int sv[2];

	need(socketpair(AF_UNIX, (chunk ? SOCK_SEQPACKET : SOCK_STREAM) | SOCK_CLOEXEC, 0, sv) == 0,
	     "socketpair");
	f->fd = sv[0];
	f->bytes = bytes;
	f->len = len;
	f->chunk = chunk;
	need(pthread_create(&f->thread, NULL, feed_main, f) == 0, "starting the feed");
	return sv[1];
}

void ms_fuzz_feed_end(struct ms_fuzz_feed *f, int rfd)
{
	close(rfd);
	need(pthread_join(f->thread, NULL) == 0, "joining the feed");
}

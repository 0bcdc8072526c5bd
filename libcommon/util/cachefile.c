#include "util/cachefile.h"

#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/crc32c.h"
#include "util/publish.h"
#include "util/selfid.h"

_Static_assert(sizeof(struct ms_cachefile) == 64 && sizeof(struct ms_cachefile) % 8 == 0,
	       "the common header's layout; the cache's own header stays 8-byte aligned");

static uint8_t producer[MS_CACHEFILE_PRODUCER];
static pthread_once_t producer_once = PTHREAD_ONCE_INIT;

/* The build id, else "v" and the version: never all zeros, never another build's id. */
static void producer_init(void)
{
	if (!ms_self_build_id(producer, sizeof(producer)))
		snprintf((char *)producer, sizeof(producer), "v%s", PACKAGE_VERSION);
}

const uint8_t *ms_cachefile_producer(void)
{
	pthread_once(&producer_once, producer_init);
	return producer;
}

/* magic NUL-padded to its 8 bytes. */
static void magic_of(char out[MS_CACHEFILE_MAGIC], const char *magic)
{
	memset(out, 0, MS_CACHEFILE_MAGIC);
	memcpy(out, magic, strnlen(magic, MS_CACHEFILE_MAGIC));
}

void ms_cachefile_init(struct ms_cachefile *h, const char *magic, uint32_t version,
		       uint32_t specific_size, uint64_t file_len)
{
	memset(h, 0, sizeof(*h));
	magic_of(h->magic, magic);
	h->version = version;
	h->abi = MS_CACHEFILE_ABI;
	h->header_size = sizeof(*h);
	h->specific_size = specific_size;
	h->file_len = file_len;
	memcpy(h->producer, ms_cachefile_producer(), sizeof(h->producer));
}

void ms_cachefile_seal(void *file, size_t len)
{
	struct ms_cachefile *h = file;
	const uint8_t *body = (const uint8_t *)file + sizeof(*h);
	size_t body_len = len - sizeof(*h);

	h->head_crc = ms_crc32c(0, body, h->specific_size < body_len ? h->specific_size : body_len);
	h->body_crc = ms_crc32c(0, body, body_len);
}

/*
 * The checks of a header's fields (a copy of it: a trailer may be
 * unaligned), for a file of len bytes whose body is body_len bytes.
 */
static enum ms_cachefile_fault check_fields(const struct ms_cachefile *h, size_t len,
					    size_t body_len, const char *magic, uint32_t version,
					    uint32_t specific_size)
{
	char want[MS_CACHEFILE_MAGIC];

	magic_of(want, magic);
	/* The magic first: another kind of file is refused as such, whatever follows. */
	if (memcmp(h->magic, want, sizeof(want)))
		return MS_CACHEFILE_BAD_MAGIC;
	if (h->abi != MS_CACHEFILE_ABI)
		return MS_CACHEFILE_BAD_ABI;
	if (h->version != version)
		return MS_CACHEFILE_BAD_VERSION;
	if (h->header_size != sizeof(*h))
		return MS_CACHEFILE_BAD_HEADER_SIZE;
	if (h->specific_size != specific_size)
		return MS_CACHEFILE_BAD_SPECIFIC_SIZE;
	if (body_len < specific_size)
		return MS_CACHEFILE_SHORT;
	if (h->file_len != len)
		return MS_CACHEFILE_BAD_LENGTH;
	if (memcmp(h->producer, ms_cachefile_producer(), sizeof(h->producer)))
		return MS_CACHEFILE_BAD_PRODUCER;
	return MS_CACHEFILE_OK;
}

/* The checks of both ms_cachefile_check*(): the header's fields, then the CRCs asked for. */
static const void *check(const void *file, size_t len, const char *magic, uint32_t version,
			 uint32_t specific_size, bool body, enum ms_cachefile_fault *fault)
{
	const struct ms_cachefile *h = file;
	const uint8_t *own = (const uint8_t *)file + sizeof(*h);
	enum ms_cachefile_fault why;

	if (len < sizeof(*h))
		why = MS_CACHEFILE_SHORT;
	else
		why = check_fields(h, len, len - sizeof(*h), magic, version, specific_size);
	if (!why && (ms_crc32c(0, own, specific_size) != h->head_crc ||
		     (body && ms_crc32c(0, own, len - sizeof(*h)) != h->body_crc)))
		why = MS_CACHEFILE_BAD_CRC;
	if (fault)
		*fault = why;
	return why == MS_CACHEFILE_OK ? own : NULL;
}

const void *ms_cachefile_check(const void *file, size_t len, const char *magic, uint32_t version,
			       uint32_t specific_size, enum ms_cachefile_fault *fault)
{
	return check(file, len, magic, version, specific_size, true, fault);
}

const void *ms_cachefile_check_head(const void *file, size_t len, const char *magic,
				    uint32_t version, uint32_t specific_size,
				    enum ms_cachefile_fault *fault)
{
	return check(file, len, magic, version, specific_size, false, fault);
}

bool ms_cachefile_check_trailer(const void *file, size_t len, const char *magic,
				uint32_t version, enum ms_cachefile_fault *fault)
{
	struct ms_cachefile h;
	enum ms_cachefile_fault why;

	if (len < sizeof(h)) {
		why = MS_CACHEFILE_SHORT;
	} else {
		memcpy(&h, (const uint8_t *)file + len - sizeof(h), sizeof(h));
		why = check_fields(&h, len, len - sizeof(h), magic, version, 0);
		if (!why && (h.head_crc || ms_crc32c(0, file, len - sizeof(h)) != h.body_crc))
			why = MS_CACHEFILE_BAD_CRC;
	}
	if (fault)
		*fault = why;
	return why == MS_CACHEFILE_OK;
}

int ms_cachefile_append_trailer(int fd, const char *magic, uint32_t version)
{
	static const size_t chunk = 1 << 20;
	struct ms_cachefile h;
	uint8_t *buf = malloc(chunk);
	uint32_t crc = 0;
	off_t off = 0;
	struct stat st;
	ssize_t n = 0;

	if (!buf || fstat(fd, &st) < 0) {
		free(buf);
		return -1;
	}
	/* What the writer wrote (libelf, here), read back from the page cache. */
	while (off < st.st_size && (n = pread(fd, buf, chunk, off)) > 0) {
		crc = ms_crc32c(crc, buf, (size_t)n);
		off += n;
	}
	free(buf);
	if (off != st.st_size) {
		if (n >= 0)
			errno = EIO;
		return -1;
	}
	ms_cachefile_init(&h, magic, version, 0, (uint64_t)st.st_size + sizeof(h));
	h.body_crc = crc;
	return pwrite(fd, &h, sizeof(h), st.st_size) == (ssize_t)sizeof(h) ? 0 : -1;
}

int ms_cachefile_begin(struct ms_cachefile_out *o, int fd, const char *magic, uint32_t version,
		       uint32_t specific_size)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	ms_cachefile_init(&o->h, magic, version, specific_size, 0);
	o->len = sizeof(o->h);
	/* Its place only: end() writes it once the lengths and CRCs are known. */
	{
		struct ms_cachefile zero = { 0 };

		if (ms_write_all(fd, &zero, sizeof(zero)) < 0) {
			o->err = true;
			o->err_no = errno;
			return -1;
		}
	}
	return 0;
}

int ms_cachefile_put(struct ms_cachefile_out *o, const void *p, size_t len)
{
	uint64_t body = o->len - sizeof(o->h);

	if (o->err) {
		errno = o->err_no;
		return -1;
	}
	/* The own header is the body's first specific_size bytes: its CRC is the body's then. */
	if (body < o->h.specific_size && len >= o->h.specific_size - body) {
		size_t head = (size_t)(o->h.specific_size - body);

		o->crc = ms_crc32c(o->crc, p, head);
		o->h.head_crc = o->crc;
		o->crc = ms_crc32c(o->crc, (const uint8_t *)p + head, len - head);
	} else {
		o->crc = ms_crc32c(o->crc, p, len);
	}
	if (ms_write_all(o->fd, p, len) < 0) {
		o->err = true;
		o->err_no = errno;
		return -1;
	}
	o->len += len;
	return 0;
}

int ms_cachefile_end(struct ms_cachefile_out *o)
{
	ssize_t n;

	if (o->err) {
		errno = o->err_no;
		return -1;
	}
	if (o->len - sizeof(o->h) < o->h.specific_size) {
		errno = EINVAL;	/* a writer that forgot its own header: never published */
		return -1;
	}
	o->h.file_len = o->len;
	o->h.body_crc = o->crc;
	while ((n = pwrite(o->fd, &o->h, sizeof(o->h), 0)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(o->h)) {
		if (n >= 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

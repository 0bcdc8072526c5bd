/*
 * The stream writer: records are packed straight into one fixed buffer
 * that is written to the fd in large blocks. A record under construction
 * stays contiguous in the buffer, so its size can be checked against the
 * record limit before any of it leaves, and an oversized record is dropped
 * whole instead of corrupting the stream.
 */
#include "stream/stream.h"
#include "stream/compress.h"
#include "stream/fastpack.h"
#include "stream/protocols.h"
#include "stream/records.h"
#include "stream/schema.h"
#include "util/error.h"
#include "util/prefault.h"
#include "util/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Larger than MS_RECORD_MAX, so a record always fits after a flush. */
#define WRITER_BUF_SIZE (256u * 1024u)
/*
 * A regular file is written in whole blocks of FILE_BLOCK bytes at file
 * offsets that are multiples of it (the rest when the stream is flushed):
 * the page cache then holds the file in large folios, and each later
 * reader that maps it (ms-decode, ms-unwind reading stack copies from it)
 * maps a few large folios instead of one 4 KiB page at a time. Written
 * in arbitrary pieces, a 169 MB stream cost each reader about 10 ms of
 * kernel time to map and unmap; in 2 MiB blocks, under 1 ms.
 */
#define FILE_BLOCK MS_PAGE_BLOCK
/*
 * Into a pipe (blocking), complete records go out once this many bytes of
 * them wait, not only when the buffer is full: the next stage starts on
 * them, and on the modules its start-up loads, while this one goes on.
 * With 256 KiB at a time, ms-symbolize got its first bytes when ms-unwind
 * was half done (ms-unwind writes 577 KB for 20,000 samples) and finished
 * alone after it. Pipeline of 20k python3 samples, 100 alternated runs,
 * p10: 48.5 -> 45.5 ms with 64 KiB (32 KiB the same, 8 KiB a little less).
 */
#define PIPE_SOON (64u * 1024u)

struct ms_writer {
	int fd;
	unsigned flags;
	char *name;
	char *buf;
	size_t cap, len;
	size_t rec_start;	/* where the open record starts in buf */
	uint64_t block;		/* FILE_BLOCK for a regular file, else 0 */
	uint64_t file_off;	/* a regular file's offset of buf[0] */
	bool in_record;
	uint32_t rec_kind;	/* the open record's, for messages */
	bool oversize;		/* the open record outgrew MS_RECORD_MAX */
	bool header_done, trailer_done;
	size_t soon;		/* write complete records once this many bytes wait (PIPE_SOON) */
	bool failed;		/* an error was reported: refuse everything */
	bool broken;		/* EPIPE: downstream is gone */
	struct ms_lz4_out *lz4;	/* MS_WRITER_LZ4: compressing, else NULL */
	uint64_t records;
};

enum write_mode {
	WRITE_BLOCKING,
	WRITE_NONBLOCKING,
};

/*
 * Write buf[0, upto) and keep the rest. Nonblocking mode stops at EAGAIN
 * and keeps what was not written. Returns -1 after reporting a failure
 * (EPIPE is reported once as a closed pipe, not as an error).
 */
/*
 * Write p[0, len) to fd: the bytes written (all of them, but in
 * non-blocking mode what the pipe took). A failure is reported and sets
 * failed (EPIPE is reported once as a closed pipe, not as an error).
 */
static size_t write_raw(struct ms_writer *w, const char *p, size_t len, enum write_mode mode)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(w->fd, p + done, len - done);

		if (n > 0) {
			done += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pf = { .fd = w->fd, .events = POLLOUT };

			if (mode == WRITE_NONBLOCKING)
				break;
			if (poll(&pf, 1, -1) < 0 && errno != EINTR) {
				ms_error_errno("cannot wait to write to '%s'", w->name);
				w->failed = true;
				break;
			}
			continue;
		}
		if (n < 0 && errno == EPIPE) {
			ms_error("downstream closed the pipe (%s)", w->name);
			w->broken = true;
		} else if (n < 0) {
			ms_error_errno("cannot write to '%s'", w->name);
		} else {
			ms_error("cannot write to '%s': write returned 0", w->name);
		}
		w->failed = true;
		break;
	}
	return done;
}

/*
 * Write buf[0, upto) and keep the rest. Nonblocking mode stops at EAGAIN
 * and keeps what was not written. Compressed output (MS_WRITER_LZ4) goes
 * out whole, compressed, waiting for the descriptor. Returns -1 after
 * reporting a failure.
 */
static int write_out(struct ms_writer *w, size_t upto, enum write_mode mode)
{
	size_t done = 0;

	if (w->failed)
		return -1;
	if (w->lz4 && upto) {
		const void *out;
		size_t out_len;

		if (ms_lz4_out_put(w->lz4, w->buf, upto, &out, &out_len) < 0)
			w->failed = true;
		else if (write_raw(w, out, out_len, WRITE_BLOCKING) == out_len)
			done = upto;
	} else {
		done = write_raw(w, w->buf, upto, mode);
	}
	if (done) {
		memmove(w->buf, w->buf + done, w->len - done);
		w->len -= done;
		w->file_off += done;
		if (w->in_record)
			w->rec_start -= done;
	}
	return w->failed ? -1 : 0;
}

/* The buffered bytes of complete records: all but the open record. */
static size_t complete(const struct ms_writer *w)
{
	return w->in_record ? w->rec_start : w->len;
}

/*
 * What of buf[0, upto) to write when nothing forces it all out: for a
 * regular file, up to the last FILE_BLOCK boundary (see FILE_BLOCK).
 */
static size_t whole_blocks(const struct ms_writer *w, size_t upto)
{
	uint64_t end = w->file_off + upto;

	if (!w->block)
		return upto;
	end -= end % w->block;
	return end > w->file_off ? end - w->file_off : 0;
}

/* Make room for n more bytes, writing out complete records (blocking). */
static int make_room(struct ms_writer *w, size_t n)
{
	if (w->cap - w->len >= n)
		return 0;
	if (write_out(w, whole_blocks(w, complete(w)), WRITE_BLOCKING) < 0)
		return -1;
	/* (A file's buffer holds a block and a record: this is for safety.) */
	if (w->cap - w->len < n && write_out(w, complete(w), WRITE_BLOCKING) < 0)
		return -1;
	return w->cap - w->len >= n ? 0 : -1;
}

/* Append bytes to the open record (ms_writer_copy()'s slow path). */
static int append(void *data, const char *bytes, size_t n)
{
	struct ms_writer *w = data;

	/* Fast path: an element of a record that has room (most calls). */
	if (__builtin_expect(n <= 9 && w->cap - w->len >= 16 && !w->failed && !w->oversize &&
			     w->in_record && w->len - w->rec_start + n <= MS_RECORD_MAX, 1)) {
		char *d = w->buf + w->len;

		/* Constant-size copies: no call for the 1-9 bytes of a scalar. */
		switch (n) {
		case 1: d[0] = bytes[0]; break;
		case 2: memcpy(d, bytes, 2); break;
		case 3: memcpy(d, bytes, 3); break;
		case 5: memcpy(d, bytes, 5); break;
		case 9: memcpy(d, bytes, 9); break;
		default: memcpy(d, bytes, n); break;
		}
		w->len += n;
		return 0;
	}
	if (w->failed || w->oversize)
		return -1;
	if (w->in_record && w->len - w->rec_start + n > MS_RECORD_MAX) {
		w->oversize = true;
		return -1;
	}
	if (make_room(w, n) < 0) {
		if (!w->failed)
			w->oversize = true;
		return -1;
	}
	memcpy(w->buf + w->len, bytes, n);
	w->len += n;
	return 0;
}

char *ms_writer_reserve(struct ms_writer *w, size_t n)
{
	if (w->failed || w->oversize || !w->in_record)
		return NULL;
	if (w->len - w->rec_start + n > MS_RECORD_MAX || make_room(w, n) < 0) {
		/* ms_writer_end() reports it (a failed write was reported already) */
		if (!w->failed)
			w->oversize = true;
		return NULL;
	}
	return w->buf + w->len;
}

void ms_writer_cancel(struct ms_writer *w)
{
	if (w->in_record)
		w->len = w->rec_start;
	w->in_record = false;
	w->oversize = false;
}

void ms_writer_advance(struct ms_writer *w, size_t n)
{
	w->len += n;
}

void ms_pipe_grow(int fd)
{
	struct stat st;

	/*
	 * A 64 KiB pipe (the default) between two stages moving ~8 KiB
	 * samples makes them switch every few records; 1 MiB (the default
	 * limit for anyone) lets each run for a whole buffer. Only a pipe of
	 * the default size grows: one sized on purpose is left alone, and so
	 * is one the user's pipe quota refuses.
	 */
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && fcntl(fd, F_GETPIPE_SZ) == 65536)
		fcntl(fd, F_SETPIPE_SZ, 1 << 20);
}

struct ms_writer *ms_writer_open(int fd, const char *name, unsigned flags)
{
	struct ms_writer *w = calloc(1, sizeof(*w));
	struct stat st;
	off_t off;

	if (!w) {
		ms_error("out of memory opening '%s'", name);
		return NULL;
	}
	/* (Compressed output has no block alignment to keep.) */
	if (!(flags & MS_WRITER_LZ4) && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    !(fcntl(fd, F_GETFL) & O_APPEND) && (off = lseek(fd, 0, SEEK_CUR)) >= 0) {
		w->block = FILE_BLOCK;
		w->file_off = (uint64_t)off;
	}
	w->cap = w->block + WRITER_BUF_SIZE;
	if (!(w->name = strdup(name)) || !(w->buf = malloc(w->cap))) {
		ms_error("out of memory opening '%s'", name);
		goto fail;
	}
	ms_populate(w->buf, WRITER_BUF_SIZE);	/* a file's block fills as it comes */
	w->fd = fd;
	w->flags = flags;
	if ((flags & MS_WRITER_LZ4) && !(w->lz4 = ms_lz4_out_new(name)))
		goto fail;
	if (flags & MS_WRITER_NONBLOCK) {
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
			ms_error_errno("cannot make '%s' non-blocking", name);
			goto fail;
		}
	}
	w->soon = !(flags & MS_WRITER_NONBLOCK) && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) ?
		  PIPE_SOON : SIZE_MAX;
	return w;
fail:
	if (w) {
		free(w->buf);
		free(w->name);
		free(w);
	}
	return NULL;
}

void ms_writer_begin(struct ms_writer *w, uint32_t kind)
{
	w->rec_kind = kind;
	w->in_record = true;
	w->oversize = false;
	w->rec_start = w->len;
}

/* Close the open record; counted unless it is the header or trailer. */
static int end_record(struct ms_writer *w, bool count)
{
	size_t len = w->len - w->rec_start;

	if (!w->in_record)
		return ms_error("internal error: record ended on '%s' without a begin", w->name);
	w->in_record = false;
	if (w->failed) {
		w->len = w->rec_start;
		return -1;
	}
	if (w->oversize) {
		w->len = w->rec_start;
		w->oversize = false;
		return ms_error("'%s': a %s record is larger than the limit of %u bytes; "
				"it was not written", w->name, ms_record_kind_name(w->rec_kind),
				MS_RECORD_MAX);
	}
	if (!len) {
		return ms_error("internal error: empty record on '%s'", w->name);
	}
	if (count)
		w->records++;
	return 0;
}

static int check_open(struct ms_writer *w)
{
	if (w->failed)
		return -1;
	if (!w->header_done)
		return ms_error("internal error: record written to '%s' before the header", w->name);
	if (w->trailer_done)
		return ms_error("internal error: record written to '%s' after the trailer", w->name);
	return 0;
}

/* After records end: once PIPE_SOON bytes of them wait in a pipe's buffer, out they go. */
static inline int records_done(struct ms_writer *w)
{
	return __builtin_expect(w->len >= w->soon, 0) ?
	       write_out(w, complete(w), WRITE_BLOCKING) : 0;
}

int ms_writer_end(struct ms_writer *w)
{
	if (check_open(w) < 0) {
		if (w->in_record) {
			w->len = w->rec_start;
			w->in_record = false;
		}
		return -1;
	}
	return end_record(w, true) < 0 ? -1 : records_done(w);
}

int ms_writer_copy(struct ms_writer *w, const char *bytes, size_t len)
{
	/* Fast path: what the path below does when the record fits as it is. */
	if (__builtin_expect(!w->failed && w->header_done && !w->trailer_done && len &&
			     len <= MS_RECORD_MAX && w->cap - w->len >= len, 1)) {
		memcpy(w->buf + w->len, bytes, len);
		w->len += len;
		w->in_record = false;
		w->oversize = false;
		w->records++;
		return records_done(w);
	}
	if (check_open(w) < 0)
		return -1;
	if (len > MS_RECORD_MAX)
		return ms_error("'%s': a record of %zu bytes is larger than the limit of %u bytes; "
				"it was not written", w->name, len, MS_RECORD_MAX);
	ms_writer_begin(w, UINT32_MAX);	/* (a kind it does not read) */
	append(w, bytes, len);
	return end_record(w, true) < 0 ? -1 : records_done(w);
}

int ms_writer_copy_records(struct ms_writer *w, const char *bytes, size_t len, uint64_t n)
{
	if (check_open(w) < 0)
		return -1;
	if (w->in_record || len > MS_RECORD_MAX || !n || !len)
		return ms_error("internal error: %" PRIu64 " records of %zu bytes copied to '%s'",
				n, len, w->name);
	if (make_room(w, len) < 0)
		return -1;
	memcpy(w->buf + w->len, bytes, len);
	w->len += len;
	w->records += n;
	return records_done(w);
}

int ms_writer_header(struct ms_writer *w, const struct ms_header *upstream,
		     const char *stage, const char *version)
{
	uint32_t n = upstream ? upstream->n_producers : 0;
	size_t stage_len = strnlen(stage, MS_NAME_MAX - 1);
	size_t version_len = strnlen(version, MS_NAME_MAX - 1);
	char *p;

	if (w->failed)
		return -1;
	if (w->header_done)
		return ms_error("internal error: second header written to '%s'", w->name);
	if (n + 1 > MS_PRODUCERS_MAX)
		return ms_error("the stream already passed through %u stages; "
				"at most %d producers fit in a header", n, MS_PRODUCERS_MAX);
	ms_writer_begin(w, MS_REC_HEADER);
	/* names are under MS_NAME_MAX bytes: a str8 each at most */
	p = ms_writer_reserve(w, 64 + (size_t)(n + 1) * (1 + 2 * (2 + MS_NAME_MAX)));
	if (p) {
		char *p0 = p;

		*p++ = (char)(0x90 | 5);
		p = fp_uint(p, MS_REC_HEADER);
		p = ms_put_str(p, MS_STREAM_MAGIC, strlen(MS_STREAM_MAGIC));
		p = fp_uint(p, MS_STREAM_MAJOR);
		p = fp_uint(p, MS_STREAM_MINOR);
		p = fp_array(p, n + 1);
		for (uint32_t i = 0; i < n; i++) {
			const struct ms_producer *pr = &upstream->producers[i];

			*p++ = (char)(0x90 | 2);
			p = ms_put_str(p, pr->name, strlen(pr->name));
			p = ms_put_str(p, pr->version, strlen(pr->version));
		}
		*p++ = (char)(0x90 | 2);
		p = ms_put_str(p, stage, stage_len);
		p = ms_put_str(p, version, version_len);
		ms_writer_advance(w, (size_t)(p - p0));
	}
	if (end_record(w, false) < 0)
		return -1;
	w->header_done = true;
	return 0;
}

int ms_writer_trailer(struct ms_writer *w, bool complete)
{
	char *p, *p0;

	if (check_open(w) < 0)
		return -1;
	ms_writer_begin(w, MS_REC_TRAILER);
	if ((p = p0 = ms_writer_reserve(w, 2 + 9 + 1))) {
		*p++ = (char)(0x90 | 3);
		p = fp_uint(p, MS_REC_TRAILER);
		p = fp_uint(p, w->records);
		*p++ = complete ? (char)0xc3 : (char)0xc2;
		ms_writer_advance(w, (size_t)(p - p0));
	}
	if (end_record(w, false) < 0)
		return -1;
	w->trailer_done = true;
	return ms_writer_flush(w);
}

bool ms_writer_room(struct ms_writer *w, size_t len)
{
	/* A dead writer says yes so that the caller's next write reports it. */
	if (w->failed)
		return true;
	if (len > MS_RECORD_MAX)
		return false;
	if (w->cap - w->len >= len)
		return true;
	if (write_out(w, whole_blocks(w, complete(w)), WRITE_NONBLOCKING) < 0)
		return true;
	return w->cap - w->len >= len;
}

int ms_writer_drain(struct ms_writer *w)
{
	return write_out(w, whole_blocks(w, complete(w)), WRITE_NONBLOCKING);
}

size_t ms_writer_pending(const struct ms_writer *w)
{
	return w->len;
}

int ms_writer_flush(struct ms_writer *w)
{
	return write_out(w, complete(w), WRITE_BLOCKING);
}

uint64_t ms_writer_records(const struct ms_writer *w)
{
	return w->records;
}

bool ms_writer_broken_pipe(const struct ms_writer *w)
{
	return w->broken;
}

int ms_writer_close(struct ms_writer *w)
{
	int ret;

	if (!w)
		return 0;
	ret = w->failed ? -1 : ms_writer_flush(w);
	if (w->lz4) {
		const void *out;
		size_t out_len;

		/* The frame's end: a reader knows the compressed stream whole. */
		if (!ret && (ms_lz4_out_end(w->lz4, &out, &out_len) < 0 ||
			     write_raw(w, out, out_len, WRITE_BLOCKING) != out_len))
			ret = -1;
		ms_lz4_out_free(w->lz4);
	}
	free(w->buf);
	free(w->name);
	free(w);
	return ret;
}

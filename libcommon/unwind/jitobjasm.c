/* JIT object images put together from their chunks: see jitobj.h. */
#include "unwind/jitobj.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

struct pending {
	uint32_t pid;
	uint64_t entry, addr, size, time;
	uint64_t got;		/* bytes [0, got) came */
	uint8_t *bytes;
	uint64_t alloc;		/* grows with the chunks, up to size */
	uint64_t seq;		/* when it began: the oldest goes first */
};

struct ms_jitobj_asm {
	struct pending p[MS_JITOBJ_PENDING_MAX];
	uint32_t n;
	uint64_t seq;
};

struct ms_jitobj_asm *ms_jitobj_asm_new(void)
{
	struct ms_jitobj_asm *a = calloc(1, sizeof(*a));

	if (!a)
		ms_error("out of memory for JIT objects");
	return a;
}

static void drop(struct ms_jitobj_asm *a, uint32_t i)
{
	free(a->p[i].bytes);
	a->p[i] = a->p[--a->n];
}

/* A pending image given up: counted, with why. */
static void broken(struct ms_jitobj_asm *a, uint32_t i, struct ms_problems *problems,
		   const char *why)
{
	const struct pending *p = &a->p[i];

	ms_problems_add(problems, "jit-object-broken",
			"pid %" PRIu32 ": the JIT object of entry 0x%" PRIx64 " (%" PRIu64
			" bytes at 0x%" PRIx64 ") %s after %" PRIu64 " bytes: it is dropped, and "
			"its code's frames stay anonymous; the stream is corrupt or cut",
			p->pid, p->entry, p->size, p->addr, why, p->got);
	drop(a, i);
}

void ms_jitobj_asm_free(struct ms_jitobj_asm *a)
{
	if (!a)
		return;
	while (a->n)
		drop(a, 0);
	free(a);
}

static uint32_t find(const struct ms_jitobj_asm *a, uint32_t pid, uint64_t entry)
{
	uint32_t i;

	for (i = 0; i < a->n; i++)
		if (a->p[i].pid == pid && a->p[i].entry == entry)
			break;
	return i;
}

int ms_jitobj_asm_chunk(struct ms_jitobj_asm *a, const struct ms_jit_object *o,
			struct ms_problems *problems, uint8_t **image, uint64_t *time)
{
	uint32_t i = find(a, o->pid, o->entry);
	struct pending *p;

	if (o->offset == 0) {
		if (i < a->n)
			broken(a, i, problems, "was followed by another image's first chunk");
		if (a->n == MS_JITOBJ_PENDING_MAX) {
			uint32_t oldest = 0;

			for (uint32_t k = 1; k < a->n; k++)
				if (a->p[k].seq < a->p[oldest].seq)
					oldest = k;
			broken(a, oldest, problems, "was one image too many coming at once");
		}
		p = &a->p[a->n++];
		*p = (struct pending){ .pid = o->pid, .entry = o->entry, .addr = o->addr,
				       .size = o->size, .time = o->time, .seq = ++a->seq };
	} else {
		if (i == a->n) {
			ms_problems_add(problems, "jit-object-broken",
					"pid %" PRIu32 ": a chunk at offset %" PRIu64 " of the JIT "
					"object of entry 0x%" PRIx64 " has no image before it: it "
					"is dropped; the stream is corrupt or cut",
					o->pid, o->offset, o->entry);
			return 0;
		}
		p = &a->p[i];
		if (o->offset != p->got) {
			broken(a, i, problems, "went on at another offset");
			return 0;
		}
		/* (The first chunk's time is the image's: a read may span a tick.) */
		if (o->addr != p->addr || o->size != p->size) {
			broken(a, i, problems, "went on with another address or size");
			return 0;
		}
	}
	/* (ms_jit_object_unpack() checked the chunk lies within size, and size's bound.) */
	if (p->got + o->chunk_len > p->alloc) {
		uint64_t want = p->alloc ? p->alloc : 64 << 10;
		uint8_t *b;

		while (want < p->got + o->chunk_len)
			want *= 2;
		if (want > p->size)
			want = p->size;
		if (!(b = realloc(p->bytes, want)))
			return ms_error("out of memory for a JIT object of %" PRIu64 " bytes",
					p->size);
		p->bytes = b;
		p->alloc = want;
	}
	memcpy(p->bytes + p->got, o->chunk, o->chunk_len);
	p->got += o->chunk_len;
	if (p->got < p->size)
		return 0;
	*image = p->bytes;
	*time = p->time;
	p->bytes = NULL;
	drop(a, (uint32_t)(p - a->p));
	return 1;
}

void ms_jitobj_asm_cut(struct ms_jitobj_asm *a, uint32_t pid, uint64_t entry,
		       struct ms_problems *problems)
{
	uint32_t i = find(a, pid, entry);

	if (i < a->n)
		broken(a, i, problems, "was unregistered before its last chunk");
}

void ms_jitobj_asm_end(struct ms_jitobj_asm *a, struct ms_problems *problems)
{
	while (a->n)
		broken(a, 0, problems, "was cut short by the stream's end");
}

#include "util/strpool.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_SIZE (64u * 1024u)

struct ms_strpool_block {
	struct ms_strpool_block *next;
	size_t size;
	max_align_t data[];
};

void ms_strpool_init(struct ms_strpool *p)
{
	memset(p, 0, sizeof(*p));
}

void ms_strpool_release(struct ms_strpool *p)
{
	struct ms_strpool_block *b = p->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	ms_strpool_init(p);
}

void *ms_strpool_alloc(struct ms_strpool *p, size_t size)
{
	const size_t align = _Alignof(max_align_t);
	size_t off = (p->used + align - 1) & ~(align - 1);
	struct ms_strpool_block *b;

	if (p->head && off <= p->head->size && size <= p->head->size - off) {
		p->used = off + size;
		p->total += size;
		return (char *)p->head->data + off;
	}
	/* A large request gets a block of its own, kept behind the current one. */
	if (size > BLOCK_SIZE / 4) {
		if (!(b = malloc(sizeof(*b) + size)))
			return NULL;
		b->size = size;
		if (p->head) {
			b->next = p->head->next;
			p->head->next = b;
		} else {
			b->next = NULL;
			p->head = b;
			p->used = size;
		}
		p->total += size;
		return b->data;
	}
	if (!(b = malloc(sizeof(*b) + BLOCK_SIZE)))
		return NULL;
	b->size = BLOCK_SIZE;
	b->next = p->head;
	p->head = b;
	p->used = size;
	p->total += size;
	return b->data;
}

const char *ms_strpool_add(struct ms_strpool *p, const char *s, size_t len)
{
	char *d = ms_strpool_alloc(p, len + 1);

	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

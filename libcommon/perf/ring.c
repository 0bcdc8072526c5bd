#include "perf/ring.h"
#include "util/error.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int ms_ring_mmap(struct ms_ring *r, int fd, uint32_t data_pages, uint8_t *bounce, int cpu)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len;
	void *map;
	struct perf_event_mmap_page *meta;
	uint64_t off, size;

	memset(r, 0, sizeof(*r));
	if (!data_pages || (data_pages & (data_pages - 1)))
		return ms_error("ring of cpu %d: %u data pages is not a power of two",
				cpu, data_pages);
	len = (1 + (size_t)data_pages) * page;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		if (errno == EPERM || errno == ENOMEM)
			return ms_error_errno("cannot map the %zu KiB ring of cpu %d "
					      "(lower --mmap-pages or raise kernel.perf_event_mlock_kb)",
					      len / 1024, cpu);
		return ms_error_errno("cannot map the %zu KiB ring of cpu %d", len / 1024, cpu);
	}
	meta = map;
	/* Kernels since 4.1 say where the data is; older ones put it at page 1. */
	off = meta->data_offset ? meta->data_offset : page;
	size = meta->data_size ? meta->data_size : (uint64_t)data_pages * page;
	if (off + size > len || (size & (size - 1))) {
		munmap(map, len);
		return ms_error("ring of cpu %d: the kernel reports data at %llu+%llu "
				"in a %zu-byte mapping", cpu, (unsigned long long)off,
				(unsigned long long)size, len);
	}
	ms_ring_init_mem(r, meta, (const uint8_t *)map + off, size, bounce);
	r->map = map;
	r->map_len = len;
	return 0;
}

uint32_t ms_ring_pages_fit(uint32_t want, uint32_t floor, uint32_t n_rings, uint64_t lockable)
{
	while (want > floor && (uint64_t)n_rings * (want + 1u) > lockable)
		want /= 2;
	return want;
}

void ms_ring_init_mem(struct ms_ring *r, struct perf_event_mmap_page *meta,
		      const uint8_t *data, uint64_t size, uint8_t *bounce)
{
	memset(r, 0, sizeof(*r));
	r->meta = meta;
	r->data = data;
	r->size = size;
	r->bounce = bounce;
	r->tail = __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED);
	r->pos = r->last = r->head = r->tail;
}

void ms_ring_release(struct ms_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	memset(r, 0, sizeof(*r));
}

uint64_t ms_ring_begin(struct ms_ring *r)
{
	/* Pairs with the kernel's store of data_head after writing records. */
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	r->pos = r->last = r->tail;
	return r->head - r->pos;
}

/* Copy len bytes starting at ring position pos, across the end if needed. */
static void copy_out(const struct ms_ring *r, uint64_t pos, void *dst, size_t len)
{
	uint64_t off = pos & (r->size - 1);
	size_t first = r->size - off < len ? r->size - off : len;

	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, len - first);
}

int ms_ring_next(struct ms_ring *r, const uint8_t **rec, uint32_t *len)
{
	struct perf_event_header hdr;
	uint64_t avail = r->head - r->pos;
	uint64_t off;

	if (!avail)
		return 0;
	if (avail > r->size || avail < sizeof(hdr)) {
		ms_error("perf ring: %llu bytes published at offset %llu do not fit a "
			 "%llu-byte ring; skipping them", (unsigned long long)avail,
			 (unsigned long long)r->pos, (unsigned long long)r->size);
		r->pos = r->head;
		return -1;
	}
	copy_out(r, r->pos, &hdr, sizeof(hdr));
	if (hdr.size < sizeof(hdr) || hdr.size % 8 || hdr.size > avail) {
		ms_error("perf ring: record of type %u at offset %llu has size %u "
			 "(%llu bytes published); skipping the rest", hdr.type,
			 (unsigned long long)r->pos, hdr.size, (unsigned long long)avail);
		r->pos = r->head;
		return -1;
	}
	off = r->pos & (r->size - 1);
	if (off + hdr.size <= r->size) {
		*rec = r->data + off;
	} else {
		copy_out(r, r->pos, r->bounce, hdr.size);
		*rec = r->bounce;
	}
	*len = hdr.size;
	r->last = r->pos;
	r->pos += hdr.size;
	return 1;
}

void ms_ring_unread(struct ms_ring *r)
{
	r->pos = r->last;
}

uint64_t ms_ring_used(const struct ms_ring *r)
{
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE) - r->tail;
}

void ms_ring_commit(struct ms_ring *r)
{
	if (r->pos == r->tail)
		return;
	r->tail = r->pos;
	/* Our reads of the records happen before the kernel may reuse them. */
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

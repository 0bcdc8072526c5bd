/* The GDB JIT interface's structures, read from hostile bytes: see gdbjit.h. */
#include "jit/gdbjit.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/grow.h"

static uint64_t le64(const uint8_t *b)
{
	uint64_t v;

	memcpy(&v, b, 8);
	return v;
}

static uint32_t le32(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return v;
}

void ms_gdbjit_desc_parse(const uint8_t b[MS_GDBJIT_DESC_SIZE], struct ms_gdbjit_desc *d)
{
	d->version = le32(b);
	d->action = le32(b + 4);
	d->relevant = le64(b + 8);
	d->first = le64(b + 16);
}

/* ---- the walk ---- */

void ms_gdbjit_walk_init(struct ms_gdbjit_walk *w)
{
	memset(w, 0, sizeof(*w));
}

void ms_gdbjit_walk_release(struct ms_gdbjit_walk *w)
{
	free(w->e);
	free(w->seen);
	ms_gdbjit_walk_init(w);
}

static uint32_t hash64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (uint32_t)v;
}

/* Add addr to the seen set: false when it was there. The set has room (cap > 2 n). */
static bool seen_add(struct ms_gdbjit_walk *w, uint64_t addr)
{
	uint32_t mask = w->seen_cap - 1;

	for (uint32_t i = hash64(addr) & mask;; i = (i + 1) & mask) {
		if (w->seen[i] == addr)
			return false;
		if (!w->seen[i]) {
			w->seen[i] = addr;
			return true;
		}
	}
}

int ms_gdbjit_walk(struct ms_gdbjit_walk *w, uint64_t first, uint32_t max,
		   ms_gdbjit_read_fn read, void *ctx)
{
	uint8_t b[MS_GDBJIT_ENTRY_SIZE];
	uint64_t at = first;

	if (!max || max > MS_GDBJIT_WALK_MAX)
		max = MS_GDBJIT_WALK_MAX;
	w->n = 0;
	w->end = MS_GDBJIT_WALK_DONE;
	w->end_at = 0;
	w->err = 0;
	if (w->seen)
		memset(w->seen, 0, w->seen_cap * sizeof(*w->seen));
	while (at) {
		if (at & 7) {
			w->end = MS_GDBJIT_WALK_MISALIGNED;
			break;
		}
		if (w->n == max) {
			w->end = MS_GDBJIT_WALK_MAX_REACHED;
			break;
		}
		/* The set stays under half full: it doubles (and is refilled) as the list grows. */
		if ((uint64_t)(w->n + 1) * 2 > w->seen_cap) {
			uint32_t cap = w->seen_cap ? w->seen_cap * 2 : 64;
			uint64_t *s = calloc(cap, sizeof(*s));

			if (!s)
				return ms_error("out of memory walking %u GDB JIT entries", w->n);
			free(w->seen);
			w->seen = s;
			w->seen_cap = cap;
			for (uint32_t i = 0; i < w->n; i++)
				seen_add(w, w->e[i].entry);
		}
		if (!seen_add(w, at)) {
			w->end = MS_GDBJIT_WALK_CYCLE;
			break;
		}
		if (read(ctx, at, b, sizeof(b)) != (long)sizeof(b)) {
			w->end = MS_GDBJIT_WALK_UNREADABLE;
			w->err = errno ? errno : EFAULT;
			break;
		}
		if (MS_GROW(w->e, w->n, w->alloc) < 0)
			return -1;
		w->e[w->n++] = (struct ms_gdbjit_entry){ at, le64(b + 16), le64(b + 24) };
		at = le64(b);
	}
	if (w->end != MS_GDBJIT_WALK_DONE)
		w->end_at = at;
	return 0;
}

/* ---- the image ---- */

const char *ms_gdbjit_image_wrong(const uint8_t *img, size_t len)
{
	Elf64_Ehdr eh;

	if (len < sizeof(eh))
		return "it is shorter than an ELF header";
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return "it does not start with the ELF magic";
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return "it is not a 64-bit little-endian ELF image";
	if (eh.e_machine != EM_X86_64)
		return "it is not for x86-64";
	if (eh.e_shnum && eh.e_shentsize != sizeof(Elf64_Shdr))
		return "its section headers are not ELF64's size";
	if (eh.e_shoff > len || (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > len - eh.e_shoff)
		return "its section headers lie outside it";
	return NULL;
}

static int range_cmp(const void *a, const void *b)
{
	const struct ms_gdbjit_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int ms_gdbjit_exec_ranges(const uint8_t *img, size_t len, struct ms_gdbjit_range *out,
			  uint32_t max)
{
	Elf64_Ehdr eh;
	uint32_t n = 0, m = 0;

	if (ms_gdbjit_image_wrong(img, len))
		return -1;
	memcpy(&eh, img, sizeof(eh));
	for (uint32_t i = 0; i < eh.e_shnum && n < max; i++) {
		Elf64_Shdr sh;

		memcpy(&sh, img + eh.e_shoff + (uint64_t)i * sizeof(sh), sizeof(sh));
		if (!(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size || sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		out[n++] = (struct ms_gdbjit_range){ sh.sh_addr, sh.sh_addr + sh.sh_size };
	}
	qsort(out, n, sizeof(*out), range_cmp);
	for (uint32_t i = 0; i < n; i++) {
		if (m && out[i].start <= out[m - 1].end) {
			if (out[i].end > out[m - 1].end)
				out[m - 1].end = out[i].end;
			continue;
		}
		out[m++] = out[i];
	}
	return (int)m;
}

bool ms_gdbjit_bias(const struct ms_elf_load *loads, uint32_t n, uint64_t start, uint64_t pgoff,
		    uint64_t page, uint64_t *bias)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct ms_elf_load *l = &loads[i];
		uint64_t from = l->offset & ~(page - 1);

		/* The mapping starts at pgoff: in the segment's bytes or in the page they start in. */
		if (!l->filesz || pgoff < from || (pgoff > l->offset && pgoff - l->offset >= l->filesz))
			continue;
		/* start is the virtual address p_vaddr - p_offset + pgoff, biased (modulo 2^64). */
		*bias = start - (l->vaddr - l->offset + pgoff);
		return true;
	}
	return false;
}

/* ---- the diff ---- */

static int entry_cmp(const void *a, const void *b)
{
	const struct ms_gdbjit_entry *x = a, *y = b;

	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

void ms_gdbjit_diff(const struct ms_gdbjit_entry *old, uint32_t n_old,
		    struct ms_gdbjit_entry *now, uint32_t n_now, bool complete,
		    const struct ms_gdbjit_diff_fns *fns, void *ctx)
{
	uint32_t i = 0, j = 0;

	qsort(now, n_now, sizeof(*now), entry_cmp);
	while (i < n_old || j < n_now) {
		if (j == n_now || (i < n_old && old[i].entry < now[j].entry)) {
			if (complete)
				fns->gone(ctx, &old[i]);
			i++;
		} else if (i == n_old || now[j].entry < old[i].entry) {
			fns->added(ctx, &now[j++]);
		} else {
			if (old[i].addr == now[j].addr && old[i].size == now[j].size) {
				fns->kept(ctx, i);
			} else {
				fns->gone(ctx, &old[i]);
				fns->added(ctx, &now[j]);
			}
			i++;
			j++;
		}
	}
}

/* The running program's build id: see selfid.h. */
#include "util/selfid.h"

#include <elf.h>
#include <link.h>
#include <string.h>

struct want {
	uint8_t *out;
	size_t cap, len;
};

/* The GNU build id in the notes at p (size bytes, notes aligned to align), or 0. */
static size_t note_build_id(const uint8_t *p, size_t size, size_t align, struct want *w)
{
	size_t off = 0;

	while (size - off >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) nh;
		size_t name_at, desc_at, next;

		memcpy(&nh, p + off, sizeof(nh));
		name_at = off + sizeof(nh);
		desc_at = name_at + ((nh.n_namesz + align - 1) & ~(align - 1));
		next = desc_at + ((nh.n_descsz + align - 1) & ~(align - 1));
		/* Each bound is checked: the sums cannot pass size unnoticed. */
		if (nh.n_namesz > size || nh.n_descsz > size || desc_at > size || next > size ||
		    nh.n_descsz > size - desc_at)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + name_at, "GNU", 4) && nh.n_descsz) {
			w->len = nh.n_descsz < w->cap ? nh.n_descsz : w->cap;
			memcpy(w->out, p + desc_at, w->len);
			return w->len;
		}
		off = next;
	}
	return 0;
}

/* The first object dl_iterate_phdr() reports is the executable itself. */
static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct want *w = arg;

	(void)size;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE &&
		    note_build_id((const uint8_t *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz,
				  ph->p_align == 8 ? 8 : 4, w))
			break;
	}
	return 1;
}

size_t ms_self_build_id(uint8_t *out, size_t cap)
{
	struct want w = { out, cap, 0 };

	dl_iterate_phdr(first_object, &w);
	return w.len;
}

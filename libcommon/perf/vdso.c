#include "perf/vdso.h"
#include "perf/procfs.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

struct find {
	uint64_t start, end;
	bool found;
};

static int find_mapping(const struct ms_maps_entry *e, void *data)
{
	struct find *f = data;

	if (e->start != f->start)
		return 0;
	f->end = e->end;
	f->found = e->path_len == 6 && !memcmp(e->path, "[vdso]", 6);
	return 1;
}

/* a + b * c when it is at most limit; false otherwise (no overflow). */
static bool within(uint64_t a, uint64_t b, uint64_t c, uint64_t limit, uint64_t *out)
{
	if (a > limit || (c && b > (limit - a) / c))
		return false;
	*out = a + b * c;
	return true;
}

/*
 * How many bytes of the image at base (a mapping of map_len bytes) the ELF
 * file spans: its headers, segments and section headers. 0 when the
 * headers are not those of an ELF file of this process's class.
 */
static uint64_t elf_extent(const unsigned char *base, uint64_t map_len)
{
	const ElfW(Ehdr) *eh = (const void *)base;
	uint64_t end = sizeof(*eh), e;

	if (map_len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
		return 0;
	if (eh->e_phnum) {
		if (eh->e_phentsize != sizeof(ElfW(Phdr)) ||
		    !within(eh->e_phoff, eh->e_phnum, sizeof(ElfW(Phdr)), map_len, &e))
			return 0;
		end = e > end ? e : end;
		for (unsigned i = 0; i < eh->e_phnum; i++) {
			ElfW(Phdr) ph;

			memcpy(&ph, base + eh->e_phoff + i * sizeof(ph), sizeof(ph));
			if (!within(ph.p_offset, ph.p_filesz, 1, UINT64_MAX, &e))
				return 0;
			end = e > end ? e : end;
		}
	}
	if (eh->e_shnum && within(eh->e_shoff, eh->e_shnum, eh->e_shentsize, UINT64_MAX, &e))
		end = e > end ? e : end;
	return end;
}

int ms_vdso_own(struct ms_vdso *out, const char **why)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct find f = { .start = base };
	uint64_t len;

	if (!base)
		return 0;
	/* The mapping bounds every read: nothing past it is touched. */
	if (ms_maps_read(getpid(), find_mapping, &f) < 0) {
		*why = "/proc/self/maps cannot be read";
		return -1;
	}
	if (!f.found) {
		*why = "no [vdso] mapping starts where the auxiliary vector says";
		return -1;
	}
	len = elf_extent((const unsigned char *)base, f.end - f.start);
	if (!len) {
		*why = "the mapping does not start with ELF headers of this process's class";
		return -1;
	}
	/* Headers that claim more than is mapped: the mapping is the image. */
	if (len > f.end - f.start)
		len = f.end - f.start;
	if (len > MS_VDSO_MAX) {
		*why = "the image is larger than 64 KiB";
		return -1;
	}
	out->image = (const uint8_t *)base;
	out->len = (uint32_t)len;
	return 1;
}

/*
 * Where a symbol of an ELF file runs when the file is mapped whole, from
 * its offset 0, at base: for the stream generators (mkjitstream,
 * mkpystream) and, through elf-helpers.h's pc_mapped_at(), unit tests.
 */
#ifndef MS_TESTS_ELF_MAP_H
#define MS_TESTS_ELF_MAP_H

#include <gelf.h>
#include <string.h>

#include "elf/elffile.h"

/* 0 when no .symtab symbol is called name, or its value is in no PT_LOAD of l. */
static inline uint64_t elf_pc_at(Elf *e, const struct ms_elf_loads *l, uint64_t base,
				 const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) ||
			    !(n = elf_strptr(e, sh.sh_link, s.st_name)) || strcmp(n, name))
				continue;
			for (uint32_t j = 0; j < l->n; j++)
				if (s.st_value >= l->load[j].vaddr &&
				    s.st_value - l->load[j].vaddr < l->load[j].filesz)
					return base + s.st_value - l->load[j].vaddr + l->load[j].offset;
		}
	}
	return 0;
}

#endif

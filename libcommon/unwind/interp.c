/* Finding a Python interpreter's loop in an ELF file's symbols (interp.h). */
#include "unwind/interp.h"

#include <string.h>

/* NAME, or NAME.suffix (a part the compiler split off: .cold, .part.0). */
static bool loop_name(const char *n)
{
	size_t len = sizeof(MS_INTERP_LOOP) - 1;

	return !strncmp(n, MS_INTERP_LOOP, len) && (n[len] == '\0' || n[len] == '.');
}

/* A part of the loop; the function itself displaces a split-off part when full. */
static void add(struct ms_interp *out, uint64_t lo, uint64_t hi, bool whole)
{
	uint32_t i;

	for (i = 0; i < out->n; i++)
		if (out->lo[i] == lo && out->hi[i] == hi)
			return;
	if (out->n < MS_INTERP_RANGES)
		i = out->n++;
	else if (whole)
		i = MS_INTERP_RANGES - 1;
	else
		return;
	out->lo[i] = lo;
	out->hi[i] = hi;
}

bool ms_interp_scan(Elf *elf, struct ms_interp *out)
{
	Elf_Scn *scn = NULL;
	bool whole = false;

	memset(out, 0, sizeof(*out));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 1; i < n; i++) {
			GElf_Sym s;
			const char *name;
			bool is_whole;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || !s.st_size ||
			    !(name = elf_strptr(elf, sh.sh_link, s.st_name)) || name[0] != '_' ||
			    !loop_name(name))
				continue;
			is_whole = name[sizeof(MS_INTERP_LOOP) - 1] == '\0';
			whole |= is_whole;
			add(out, s.st_value, s.st_value + s.st_size, is_whole);
		}
	}
	/* Split-off parts alone (a .cold of a static copy) make no interpreter. */
	if (!whole)
		out->n = 0;
	return out->n > 0;
}

/*
 * Test helper: an object as a JIT registers it through the GDB JIT
 * interface (tests/fixtures/jitgdb.c's shape: ELF64 ET_REL for x86-64,
 * relocated in place), built in memory at chosen addresses:
 *   [1] .text      SHF_ALLOC|SHF_EXECINSTR at text_addr: code[]
 *   [2] .eh_frame  at image_addr + its offset (FDE pointers pcrel|sdata4
 *                  relative to it): one CIE (CFA rsp+8, rip at CFA-8),
 *                  an FDE per entry of fdes[]
 *   [3] .symtab    an STT_FUNC per entry of syms[] (section 1, value its
 *                  offset in .text)
 *   [4] .strtab    [5] .shstrtab
 * jo_build() returns the image's size and where each part lies (struct
 * jo_layout), so a test can spoil a chosen field.
 */
#ifndef TESTS_UNIT_JITOBJ_IMAGE_H
#define TESTS_UNIT_JITOBJ_IMAGE_H

#include <elf.h>
#include <stdint.h>
#include <string.h>

/*
 * jit_gdb_func of tests/fixtures/jitgdb.c: sub rsp,0x18; a loop from 0xa
 * to the jne at 0x1a; add rsp,0x18; ret. No frame pointer.
 */
static const uint8_t jo_func[] = {
	0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0xf9, 0x48, 0x89, 0xf8,
	0x48, 0x69, 0xc0, 0x0d, 0x66, 0x19, 0x00, 0x48, 0x05, 0x5f,
	0xf3, 0x6e, 0x3c, 0x48, 0xff, 0xc9, 0x75, 0xee, 0x48, 0x83,
	0xc4, 0x18, 0xc3,
};
/* Its CFA: rsp+32 from 4, rsp+8 again from 0x20. */
static const uint8_t jo_func_cfa[] = { 0x44, 0x0e, 0x20, 0x5c, 0x0e, 0x08 };

struct jo_fde {
	uint32_t offset, size;		/* in .text */
	const uint8_t *program;		/* call-frame instructions after the CIE's */
	uint32_t len;
};

struct jo_sym {
	const char *name;
	uint32_t offset, size;		/* in .text */
};

struct jo_layout {
	size_t text, eh, eh_size, symtab, strtab, shstrtab, shdrs, size;
};

enum { JO_TEXT = 1, JO_EH, JO_SYMTAB, JO_STRTAB, JO_SHSTRTAB, JO_SH_N };
static const char jo_shstrtab[] = "\0.text\0.eh_frame\0.symtab\0.strtab\0.shstrtab";
static const unsigned jo_sh_names[JO_SH_N] = { 0, 1, 7, 17, 25, 33 };

static inline size_t jo_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * Build the object into buf (at least 4096 bytes): code (len bytes) runs
 * at text_addr, the image lies at image_addr. Returns its size.
 */
static inline size_t jo_build(uint8_t *buf, uint64_t text_addr, uint64_t image_addr,
			      const uint8_t *code, uint32_t len, const struct jo_fde *fdes,
			      uint32_t n_fdes, const struct jo_sym *syms, uint32_t n_syms,
			      struct jo_layout *l)
{
	static const uint8_t cie[] = {
		0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b,
		0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0,
	};
	Elf64_Ehdr eh;
	Elf64_Shdr sh[JO_SH_N];
	size_t p, str_len = 1;

	memset(buf, 0, 4096);
	l->text = sizeof(Elf64_Ehdr);
	memcpy(buf + l->text, code, len);
	l->eh = jo_align8(l->text + len);
	memcpy(buf + l->eh, cie, sizeof(cie));
	p = l->eh + sizeof(cie);
	for (uint32_t i = 0; i < n_fdes; i++) {
		/* length, CIE pointer, pc_begin, pc_range, aug 0, program, padded to 4 */
		uint32_t body = 4 + 4 + 4 + 1 + fdes[i].len, total = (body + 3) & ~3u;
		uint32_t cie_ptr = (uint32_t)(p + 4 - l->eh);
		int32_t pc = (int32_t)(int64_t)(text_addr + fdes[i].offset -
						  (image_addr + p + 8));

		memcpy(buf + p, &total, 4);
		memcpy(buf + p + 4, &cie_ptr, 4);
		memcpy(buf + p + 8, &pc, 4);
		memcpy(buf + p + 12, &fdes[i].size, 4);
		memcpy(buf + p + 17, fdes[i].program, fdes[i].len);
		p += 4 + total;
	}
	p += 4;		/* the terminator */
	l->eh_size = p - l->eh;
	l->symtab = jo_align8(p);
	l->strtab = l->symtab + (1 + n_syms) * sizeof(Elf64_Sym);
	for (uint32_t i = 0; i < n_syms; i++) {
		Elf64_Sym s = { .st_name = (uint32_t)str_len,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = JO_TEXT, .st_value = syms[i].offset,
				.st_size = syms[i].size };

		memcpy(buf + l->symtab + (1 + i) * sizeof(s), &s, sizeof(s));
		memcpy(buf + l->strtab + str_len, syms[i].name, strlen(syms[i].name) + 1);
		str_len += strlen(syms[i].name) + 1;
	}
	l->shstrtab = l->strtab + str_len;
	memcpy(buf + l->shstrtab, jo_shstrtab, sizeof(jo_shstrtab));
	l->shdrs = jo_align8(l->shstrtab + sizeof(jo_shstrtab));
	l->size = l->shdrs + JO_SH_N * sizeof(Elf64_Shdr);

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = l->shdrs;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = JO_SH_N;
	eh.e_shstrndx = JO_SHSTRTAB;
	memcpy(buf, &eh, sizeof(eh));

	memset(sh, 0, sizeof(sh));
	for (int i = 1; i < JO_SH_N; i++)
		sh[i].sh_name = jo_sh_names[i];
	sh[JO_TEXT] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
				    .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = text_addr,
				    .sh_offset = l->text, .sh_size = len, .sh_addralign = 16 };
	sh[JO_EH] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
				  .sh_addr = image_addr + l->eh, .sh_offset = l->eh,
				  .sh_size = l->eh_size, .sh_addralign = 8 };
	sh[JO_SYMTAB] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_SYMTAB,
				      .sh_offset = l->symtab,
				      .sh_size = (1 + n_syms) * sizeof(Elf64_Sym),
				      .sh_link = JO_STRTAB, .sh_info = 1, .sh_addralign = 8,
				      .sh_entsize = sizeof(Elf64_Sym) };
	sh[JO_STRTAB] = (Elf64_Shdr){ .sh_name = 25, .sh_type = SHT_STRTAB,
				      .sh_offset = l->strtab, .sh_size = str_len,
				      .sh_addralign = 1 };
	sh[JO_SHSTRTAB] = (Elf64_Shdr){ .sh_name = 33, .sh_type = SHT_STRTAB,
					.sh_offset = l->shstrtab, .sh_size = sizeof(jo_shstrtab),
					.sh_addralign = 1 };
	memcpy(buf + l->shdrs, sh, sizeof(sh));
	return l->size;
}

/* Section header i of the image in buf (to spoil it). */
static inline Elf64_Shdr *jo_shdr(uint8_t *buf, const struct jo_layout *l, int i)
{
	return (Elf64_Shdr *)(buf + l->shdrs + (size_t)i * sizeof(Elf64_Shdr));
}

#endif

/* One registered JIT object, checked and read from its ELF image: see jitobj.h. */
#include "unwind/jitobj.h"

#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf/cfi.h"
#include "util/error.h"
#include "util/grow.h"

struct sym {
	uint64_t start, end;
	uint32_t name;		/* in names */
};

struct ms_jitobj {
	uint32_t refs;
	uint32_t module;
	uint64_t serial, entry;
	uint8_t *image;
	uint32_t len;
	struct ms_jitobj_code *code;
	uint32_t n_code;
	struct sym *syms;
	uint32_t n_syms;
	char *names;
	struct ms_cfi *cfi;
};

/* Serials come from one counter; images alive are counted against MS_JITOBJ_LIVE_MAX. */
static uint64_t last_serial;
static uint64_t live_bytes;

/* The image's section headers, checked. */
struct image {
	const uint8_t *b;
	uint32_t len;
	bool rel;		/* ET_REL: symbol values are offsets in their section */
	uint32_t shnum, shstrndx;
	Elf64_Shdr *sh;		/* copied: aligned */
};

/* Whether [off, off + size) lies within the image. */
static bool within(const struct image *im, uint64_t off, uint64_t size)
{
	return off <= im->len && size <= im->len - off;
}

/* NULL, or what is wrong with the headers (im->sh then malloc'd; free it). */
static const char *read_headers(struct image *im, bool *oom)
{
	Elf64_Ehdr eh;
	const Elf64_Shdr *str;

	*oom = false;
	im->sh = NULL;
	if (im->len < sizeof(eh))
		return "it is shorter than an ELF header";
	memcpy(&eh, im->b, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return "it is not ELF";
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return "it is not ELF64 for x86-64, little-endian";
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum || eh.e_shnum >= SHN_LORESERVE ||
	    !within(im, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)))
		return "its section headers are missing or lie outside it";
	if (!eh.e_shstrndx || eh.e_shstrndx >= eh.e_shnum)
		return "it names no section name table";
	im->rel = eh.e_type == ET_REL;
	im->shnum = eh.e_shnum;
	im->shstrndx = eh.e_shstrndx;
	if (!(im->sh = malloc((size_t)eh.e_shnum * sizeof(*im->sh)))) {
		*oom = true;
		return "out of memory";
	}
	memcpy(im->sh, im->b + eh.e_shoff, (size_t)eh.e_shnum * sizeof(*im->sh));
	for (uint32_t i = 1; i < im->shnum; i++)
		if (im->sh[i].sh_type != SHT_NOBITS && im->sh[i].sh_type != SHT_NULL &&
		    !within(im, im->sh[i].sh_offset, im->sh[i].sh_size))
			return "a section's bytes lie outside it";
	str = &im->sh[eh.e_shstrndx];
	if (str->sh_type != SHT_STRTAB || !str->sh_size ||
	    im->b[str->sh_offset + str->sh_size - 1] != '\0')
		return "its section name table is not a string table";
	for (uint32_t i = 1; i < im->shnum; i++)
		if (im->sh[i].sh_name >= str->sh_size)
			return "a section's name lies outside the section name table";
	return NULL;
}

static int code_cmp(const void *a, const void *b)
{
	const struct ms_jitobj_code *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool is_code(const Elf64_Shdr *sh)
{
	return (sh->sh_flags & SHF_EXECINSTR) && sh->sh_type != SHT_NOBITS &&
	       sh->sh_type != SHT_NULL && sh->sh_size;
}

/* The executable sections into o->code. NULL, or what is wrong. */
static const char *read_code(struct ms_jitobj *o, const struct image *im, bool *oom)
{
	uint32_t n = 0;

	for (uint32_t i = 1; i < im->shnum; i++) {
		if (!is_code(&im->sh[i]))
			continue;
		if (im->sh[i].sh_addr + im->sh[i].sh_size < im->sh[i].sh_addr)
			return "an executable section's addresses wrap around";
		n++;
	}
	if (!n)
		return "it has no executable section with bytes";
	if (n > MS_JITOBJ_CODE_MAX)
		return "it has more than MS_JITOBJ_CODE_MAX executable sections";
	if (!(o->code = malloc(n * sizeof(*o->code)))) {
		*oom = true;
		return "out of memory";
	}
	for (uint32_t i = 1; i < im->shnum; i++)
		if (is_code(&im->sh[i]))
			o->code[o->n_code++] = (struct ms_jitobj_code){
				im->sh[i].sh_addr, im->sh[i].sh_addr + im->sh[i].sh_size };
	qsort(o->code, n, sizeof(*o->code), code_cmp);
	for (uint32_t i = 1; i < n; i++)
		if (o->code[i].start < o->code[i - 1].end)
			return "its executable sections overlap";
	return NULL;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * Function symbol s of section sec, its name at strtab's name: appended
 * to o when valid (invalid ones are left out). 0, or -1 when out of
 * memory.
 */
static int add_sym(struct ms_jitobj *o, const struct image *im, const Elf64_Sym *s,
		   const Elf64_Shdr *strtab, uint32_t *alloc, uint32_t *names_alloc,
		   uint32_t *names_len)
{
	const Elf64_Shdr *sec;
	const char *name;
	uint64_t start, size = s->st_size;
	size_t len;

	if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || !s->st_shndx || s->st_shndx >= im->shnum ||
	    !is_code(sec = &im->sh[s->st_shndx]) || !s->st_name || s->st_name >= strtab->sh_size)
		return 0;
	name = (const char *)im->b + strtab->sh_offset + s->st_name;
	/* (The table ends with a NUL: checked by the caller.) */
	len = strlen(name);
	if (im->rel) {
		if (s->st_value > sec->sh_size || size > sec->sh_size - s->st_value)
			return 0;
		start = sec->sh_addr + s->st_value;
	} else {
		if (s->st_value < sec->sh_addr || s->st_value - sec->sh_addr > sec->sh_size ||
		    size > sec->sh_size - (s->st_value - sec->sh_addr))
			return 0;
		start = s->st_value;
	}
	if (start == sec->sh_addr + sec->sh_size)
		return 0;	/* at the section's end: holds nothing */
	if (len > MS_JITOBJ_NAME_MAX)
		len = MS_JITOBJ_NAME_MAX;
	if (o->n_syms >= MS_JITOBJ_SYMS_MAX)
		return 0;
	if (!ms_reserve((void **)&o->syms, alloc, (uint64_t)o->n_syms + 1, sizeof(*o->syms)) ||
	    !ms_reserve((void **)&o->names, names_alloc, (uint64_t)*names_len + len + 1, 1))
		return -1;
	memcpy(o->names + *names_len, name, len);
	o->names[*names_len + len] = '\0';
	/* Size 0: to the next symbol or the section's end (settled after sorting). */
	o->syms[o->n_syms++] = (struct sym){ start, size ? start + size : 0, *names_len };
	*names_len += (uint32_t)len + 1;
	return 0;
}

/* Where a symbol of size 0 at start ends: the next symbol's start, else its section's end. */
static uint64_t open_end(const struct ms_jitobj *o, uint32_t i)
{
	uint64_t start = o->syms[i].start, end = 0;

	for (uint32_t k = 0; k < o->n_code; k++)
		if (start >= o->code[k].start && start < o->code[k].end)
			end = o->code[k].end;
	for (uint32_t j = i + 1; j < o->n_syms; j++)
		if (o->syms[j].start > start) {
			if (o->syms[j].start < end)
				end = o->syms[j].start;
			break;
		}
	return end;
}

/* The function symbols of every .symtab. 0, or -1 when out of memory. */
static int read_syms(struct ms_jitobj *o, const struct image *im)
{
	uint32_t alloc = 0, names_alloc = 0, names_len = 0;

	for (uint32_t i = 1; i < im->shnum; i++) {
		const Elf64_Shdr *sh = &im->sh[i], *str;
		uint64_t n;

		if (sh->sh_type != SHT_SYMTAB || sh->sh_entsize != sizeof(Elf64_Sym) ||
		    sh->sh_link == 0 || sh->sh_link >= im->shnum)
			continue;
		str = &im->sh[sh->sh_link];
		if (str->sh_type != SHT_STRTAB || !str->sh_size ||
		    im->b[str->sh_offset + str->sh_size - 1] != '\0')
			continue;
		n = sh->sh_size / sizeof(Elf64_Sym);
		for (uint64_t k = 1; k < n; k++) {
			Elf64_Sym s;

			memcpy(&s, im->b + sh->sh_offset + k * sizeof(s), sizeof(s));
			if (add_sym(o, im, &s, str, &alloc, &names_alloc, &names_len) < 0)
				return -1;
		}
	}
	if (o->n_syms)
		qsort(o->syms, o->n_syms, sizeof(*o->syms), sym_cmp);
	for (uint32_t i = 0; i < o->n_syms; i++)
		if (!o->syms[i].end)
			o->syms[i].end = open_end(o, i);
	return 0;
}

/* Whether section i is named name (read_headers() checked every name's offset). */
static bool named(const struct image *im, const Elf64_Shdr *str, uint32_t i, const char *name)
{
	const char *n = (const char *)im->b + str->sh_offset + im->sh[i].sh_name;

	return !strcmp(n, name);
}

/*
 * Where symbol k of the symbol table sym lies (S of a relocation): an
 * ET_REL symbol's value is an offset in its section, so that section's
 * address is added. False when there is none (undefined, out of bounds).
 */
static bool symbol_at(const struct image *im, const Elf64_Shdr *sym, uint64_t k, uint64_t *s)
{
	Elf64_Sym e;

	if (sym->sh_type != SHT_SYMTAB || sym->sh_entsize != sizeof(e) ||
	    k >= sym->sh_size / sizeof(e))
		return false;
	memcpy(&e, im->b + sym->sh_offset + k * sizeof(e), sizeof(e));
	if (e.st_shndx == SHN_UNDEF)
		return false;
	*s = e.st_value;
	if (e.st_shndx == SHN_ABS || !im->rel)
		return true;
	if (e.st_shndx >= im->shnum)
		return false;
	*s += im->sh[e.st_shndx].sh_addr;
	return true;
}

/*
 * An object a JIT registers may still hold the relocations of its
 * call-frame information: LLVM's RuntimeDyld gives GDB a copy whose
 * sections have their run-time addresses but whose .eh_frame still reads
 * 0 where each FDE's pc is (R_X86_64_PC64 against .text, in .rela.eh_frame),
 * as GDB applies them when it reads an ET_REL object. So are they here, on
 * the object's own copy, before its CFI is read: S + A (- P) for the types
 * CFI uses, each symbol at its section's address (symbol_at()). A RELA
 * relocation writes its field whatever it held, so an object already
 * relocated in place comes out the same. A relocation out of bounds, of
 * another type or against an undefined symbol is left alone: its FDE then
 * covers nothing the object's code holds, and those frames end no-cfi.
 */
static void relocate_cfi(uint8_t *b, const struct image *im, const Elf64_Shdr *shstr)
{
	for (uint32_t i = 1; i < im->shnum; i++) {
		const Elf64_Shdr *rs = &im->sh[i], *t, *sym;
		uint64_t n;

		if (rs->sh_type != SHT_RELA || rs->sh_entsize != sizeof(Elf64_Rela) ||
		    !rs->sh_info || rs->sh_info >= im->shnum || !rs->sh_link ||
		    rs->sh_link >= im->shnum)
			continue;
		t = &im->sh[rs->sh_info];
		if (t->sh_type == SHT_NOBITS || (!named(im, shstr, rs->sh_info, ".eh_frame") &&
						 !named(im, shstr, rs->sh_info, ".debug_frame")))
			continue;
		sym = &im->sh[rs->sh_link];
		n = rs->sh_size / sizeof(Elf64_Rela);
		for (uint64_t k = 0; k < n; k++) {
			Elf64_Rela r;
			uint64_t s, v, p;
			uint32_t width;

			memcpy(&r, im->b + rs->sh_offset + k * sizeof(r), sizeof(r));
			switch (ELF64_R_TYPE(r.r_info)) {
			case R_X86_64_64: case R_X86_64_PC64: width = 8; break;
			case R_X86_64_PC32: case R_X86_64_32: case R_X86_64_32S: width = 4; break;
			default: continue;
			}
			if (r.r_offset > t->sh_size || width > t->sh_size - r.r_offset ||
			    !symbol_at(im, sym, ELF64_R_SYM(r.r_info), &s))
				continue;
			v = s + (uint64_t)r.r_addend;
			p = t->sh_addr + r.r_offset;
			if (ELF64_R_TYPE(r.r_info) == R_X86_64_PC64 ||
			    ELF64_R_TYPE(r.r_info) == R_X86_64_PC32)
				v -= p;
			if (width == 8) {
				memcpy(b + t->sh_offset + r.r_offset, &v, 8);
			} else {
				uint32_t v32 = (uint32_t)v;

				memcpy(b + t->sh_offset + r.r_offset, &v32, 4);
			}
		}
	}
}

static void destroy(struct ms_jitobj *o)
{
	ms_cfi_free(o->cfi);
	free(o->image);
	free(o->code);
	free(o->syms);
	free(o->names);
	free(o);
}

struct ms_jitobj *ms_jitobj_new(uint8_t *image, uint32_t len, uint64_t entry, const char **why,
				const char **code)
{
	struct image im = { .b = image, .len = len };
	struct ms_jitobj *o;
	char name[64];
	bool oom = false;

	*why = NULL;
	*code = "jit-object-bad-elf";
	if (live_bytes + len > MS_JITOBJ_LIVE_MAX) {
		free(image);
		*code = "jit-objects-max";
		*why = "the objects kept hold MS_JITOBJ_LIVE_MAX bytes already";
		return NULL;
	}
	if (!(o = calloc(1, sizeof(*o)))) {
		free(image);
		ms_error("out of memory for a JIT object of %u bytes", len);
		return NULL;
	}
	o->refs = 1;
	o->module = UINT32_MAX;
	o->entry = entry;
	o->image = image;
	o->len = len;
	if ((*why = read_headers(&im, &oom)) || (*why = read_code(o, &im, &oom)) ||
	    read_syms(o, &im) < 0) {
		free(im.sh);
		destroy(o);
		if (oom || !*why) {
			*why = NULL;
			ms_error("out of memory for a JIT object of %u bytes", len);
		}
		return NULL;
	}
	relocate_cfi(image, &im, &im.sh[im.shstrndx]);
	free(im.sh);
	snprintf(name, sizeof(name), "[jit-object 0x%" PRIx64 "]", entry);
	if (!(o->cfi = ms_cfi_open_object(o->image, len, name))) {
		destroy(o);
		return NULL;
	}
	o->serial = ++last_serial;
	live_bytes += len;
	return o;
}

void ms_jitobj_ref(struct ms_jitobj *o)
{
	o->refs++;
}

void ms_jitobj_unref(struct ms_jitobj *o)
{
	if (!o || --o->refs)
		return;
	live_bytes -= o->len;
	destroy(o);
}

const struct ms_jitobj_code *ms_jitobj_code(const struct ms_jitobj *o, uint32_t *n)
{
	*n = o->n_code;
	return o->code;
}

bool ms_jitobj_holds(const struct ms_jitobj *o, uint64_t pc)
{
	for (uint32_t i = 0; i < o->n_code; i++)
		if (pc >= o->code[i].start && pc < o->code[i].end)
			return true;
	return false;
}

uint64_t ms_jitobj_entry(const struct ms_jitobj *o)
{
	return o->entry;
}

uint64_t ms_jitobj_serial(const struct ms_jitobj *o)
{
	return o->serial;
}

bool ms_jitobj_is(const struct ms_jitobj *o, uint64_t entry, const uint8_t *image, uint32_t len)
{
	return o->entry == entry && o->len == len && !memcmp(o->image, image, len);
}

const char *ms_jitobj_symbol(const struct ms_jitobj *o, uint64_t pc, uint64_t *start)
{
	uint32_t lo = 0, hi = o->n_syms;

	/* Past the last symbol starting at or below pc. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->syms[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* (A symbol nested in a larger one: a few steps back at most.) */
	for (uint32_t k = 0; lo > 0 && k < 8; k++) {
		lo--;
		if (pc < o->syms[lo].end) {
			*start = o->syms[lo].start;
			return o->names + o->syms[lo].name;
		}
	}
	return NULL;
}

struct ms_cfi *ms_jitobj_cfi(const struct ms_jitobj *o)
{
	return o->cfi;
}

uint32_t *ms_jitobj_module(struct ms_jitobj *o)
{
	return &o->module;
}

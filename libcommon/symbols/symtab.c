#include "symbols/symtab.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void ms_symtab_init(struct ms_symtab *t)
{
	memset(t, 0, sizeof(*t));
}

void ms_symtab_release(struct ms_symtab *t)
{
	int i;

	if (t->map) {
		munmap(t->map, t->map_len);
		ms_symtab_init(t);
		return;
	}
	for (i = 0; i < MS_SYMS_TIERS; i++)
		free(t->tier[i].syms);
	free(t->names);
	ms_symtab_init(t);
}

uint32_t ms_symtab_count(const struct ms_symtab *t)
{
	return t->tier[0].n + t->tier[1].n + t->tier[2].n;
}

/* Copy name into the arena; its offset, or UINT32_MAX when out of memory. */
static uint32_t add_name(struct ms_symtab *t, const char *name, size_t len)
{
	size_t off = t->names_len;

	if (off + len + 1 > t->names_alloc) {
		size_t alloc = t->names_alloc ? t->names_alloc : 4096;
		char *p;

		while (alloc < off + len + 1)
			alloc *= 2;
		if (alloc > UINT32_MAX || !(p = realloc(t->names, alloc)))
			return UINT32_MAX;
		t->names = p;
		t->names_alloc = alloc;
	}
	memcpy(t->names + off, name, len);
	t->names[off + len] = '\0';
	t->names_len = off + len + 1;
	return (uint32_t)off;
}

static int add_sym(struct ms_symlist *l, const struct ms_sym *s)
{
	if (l->n == l->alloc) {
		uint32_t alloc = l->alloc ? l->alloc * 2 : 256;
		struct ms_sym *p = realloc(l->syms, (size_t)alloc * sizeof(*p));

		if (!p)
			return -1;
		l->syms = p;
		l->alloc = alloc;
	}
	l->syms[l->n++] = *s;
	return 0;
}

static int cmp_sym(const void *a, const void *b, void *arena)
{
	const struct ms_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp((const char *)arena + x->name, (const char *)arena + y->name);
}

/* Sort a tier and keep one symbol per start (the first after sorting). */
static void finish_tier(struct ms_symtab *t, struct ms_symlist *l)
{
	uint32_t i, out = 0;

	if (!l->n)
		return;
	qsort_r(l->syms, l->n, sizeof(*l->syms), cmp_sym, t->names);
	for (i = 0; i < l->n; i++)
		if (!out || l->syms[out - 1].start != l->syms[i].start)
			l->syms[out++] = l->syms[i];
	l->n = out;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted, unique boundaries: the first one above addr, or UINT64_MAX. */
static uint64_t next_boundary(const uint64_t *b, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n ? b[lo] : UINT64_MAX;
}

static size_t sort_unique(uint64_t *b, size_t n)
{
	size_t i, out = 0;

	qsort(b, n, sizeof(*b), cmp_u64);
	for (i = 0; i < n; i++)
		if (!out || b[out - 1] != b[i])
			b[out++] = b[i];
	return out;
}

/* A symbol before its size is known, with the end of its section. */
struct cand {
	struct ms_sym sym;
	uint64_t sec_end;
	int tier;
};

struct cands {
	struct cand *c;
	size_t n, alloc;
	uint64_t *bounds;
	size_t n_bounds, alloc_bounds;
};

static int push_cand(struct cands *cs, const struct cand *c)
{
	if (cs->n == cs->alloc) {
		size_t alloc = cs->alloc ? cs->alloc * 2 : 1024;
		struct cand *p = realloc(cs->c, alloc * sizeof(*p));

		if (!p)
			return -1;
		cs->c = p;
		cs->alloc = alloc;
	}
	cs->c[cs->n++] = *c;
	return 0;
}

static int push_bound(struct cands *cs, uint64_t b)
{
	if (cs->n_bounds == cs->alloc_bounds) {
		size_t alloc = cs->alloc_bounds ? cs->alloc_bounds * 2 : 1024;
		uint64_t *p = realloc(cs->bounds, alloc * sizeof(*p));

		if (!p)
			return -1;
		cs->bounds = p;
		cs->alloc_bounds = alloc;
	}
	cs->bounds[cs->n_bounds++] = b;
	return 0;
}

/*
 * Give each candidate its tier. Unsized ones reach up to the next boundary,
 * capped at their section's end; those that then cover nothing are dropped.
 */
static int place_cands(struct ms_symtab *t, struct cands *cs)
{
	size_t i;
	int k;

	cs->n_bounds = sort_unique(cs->bounds, cs->n_bounds);
	for (i = 0; i < cs->n; i++) {
		struct cand *c = &cs->c[i];

		if (!c->sym.size) {
			uint64_t end = next_boundary(cs->bounds, cs->n_bounds, c->sym.start);

			if (end > c->sec_end)
				end = c->sec_end;
			if (end == UINT64_MAX || end <= c->sym.start)
				continue;
			c->sym.size = end - c->sym.start;
		}
		if (add_sym(&t->tier[c->tier], &c->sym) < 0)
			return -1;
	}
	for (k = 0; k < MS_SYMS_TIERS; k++)
		finish_tier(t, &t->tier[k]);
	return 0;
}

static void free_cands(struct cands *cs)
{
	free(cs->c);
	free(cs->bounds);
}

static uint32_t bind_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static int read_symbols(struct ms_symtab *t, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			const uint64_t *sec_end, size_t n_sec, struct cands *cs)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i;

	if (!data || !sh->sh_entsize)
		return -1;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;
		struct cand c = { 0 };

		if (!gelf_getsym(data, (int)i, &sym))
			return -1;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !sym.st_value ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS ||
		    (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (push_bound(cs, sym.st_value) < 0)
			return -1;
		c.sym.start = sym.st_value;
		c.sym.size = sym.st_size;
		c.sym.rank = bind_rank(sym.st_info);
		c.sym.name = add_name(t, name, strlen(name));
		if (c.sym.name == UINT32_MAX)
			return -1;
		c.sec_end = sym.st_shndx < n_sec ? sec_end[sym.st_shndx] : UINT64_MAX;
		c.tier = !sym.st_size ? MS_SYMS_UNSIZED :
			 sh->sh_type == SHT_SYMTAB ? MS_SYMS_SYMTAB : MS_SYMS_DYNSYM;
		if (push_cand(cs, &c) < 0)
			return -1;
	}
	return 0;
}

int ms_symtab_load_elf(struct ms_symtab *t, Elf *elf)
{
	struct cands cs = { 0 };
	uint64_t *sec_end = NULL;
	size_t n_sec = 0, i;
	Elf_Scn *scn;
	int ret = -1;

	if (elf_getshdrnum(elf, &n_sec) != 0)
		return -1;
	if (n_sec && !(sec_end = calloc(n_sec, sizeof(*sec_end))))
		return -1;
	for (i = 0; i < n_sec; i++) {
		GElf_Shdr sh;

		scn = elf_getscn(elf, i);
		sec_end[i] = scn && gelf_getshdr(scn, &sh) ? sh.sh_addr + sh.sh_size : UINT64_MAX;
	}
	for (scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		if (read_symbols(t, elf, scn, &sh, sec_end, n_sec, &cs) < 0)
			goto out;
	}
	ret = place_cands(t, &cs);
out:
	free(sec_end);
	free_cands(&cs);
	return ret;
}

int ms_symtab_load_kallsyms(struct ms_symtab *t, FILE *f)
{
	struct cands cs = { 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	bool nonzero = false;
	int ret = -1;

	while ((len = getline(&line, &cap, f)) > 0) {
		char *end, *name, type;
		uint64_t addr = strtoull(line, &end, 16);
		size_t name_len;
		struct cand c = { 0 };

		/* "ffffffff81000000 T _stext" optionally followed by "\t[module]" */
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		name = end + 3;
		name_len = strcspn(name, " \t\n");
		if (!addr || !name_len)
			continue;
		nonzero = true;
		if (push_bound(&cs, addr) < 0)
			goto out;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		c.sym.start = addr;
		c.sym.rank = type == 'T' ? 0 : type == 'W' || type == 'w' ? 1 : 2;
		c.sym.name = add_name(t, name, name_len);
		if (c.sym.name == UINT32_MAX)
			goto out;
		c.sec_end = UINT64_MAX;
		c.tier = MS_SYMS_SYMTAB;
		if (push_cand(&cs, &c) < 0)
			goto out;
	}
	if (!nonzero || !cs.n)
		goto out;
	ret = place_cands(t, &cs);
out:
	free(line);
	free_cands(&cs);
	return ret;
}

static const struct ms_sym *lookup_tier(const struct ms_symlist *l, uint64_t addr)
{
	uint32_t lo = 0, hi = l->n, k, stop;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (l->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo symbols start at or below addr; a few back may still cover it (nesting). */
	stop = lo > 8 ? lo - 8 : 0;
	for (k = lo; k > stop; k--) {
		const struct ms_sym *s = &l->syms[k - 1];

		if (addr - s->start < s->size)
			return s;
	}
	return NULL;
}

const struct ms_sym *ms_symtab_lookup(const struct ms_symtab *t, uint64_t addr)
{
	int k;

	for (k = 0; k < MS_SYMS_TIERS; k++) {
		const struct ms_sym *s = lookup_tier(&t->tier[k], addr);

		if (s)
			return s;
	}
	return NULL;
}

#include "symbols/symtab.h"

#include <ctype.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "util/crc32c.h"
#include "util/radix.h"
#include "util/grow.h"
#include "util/prefault.h"

/* Symbols counted in a file's tables above which no room is reserved ahead. */
#define MS_SYMTAB_RESERVE_MAX (1u << 24)

void ms_symtab_init(struct ms_symtab *t)
{
	memset(t, 0, sizeof(*t));
}

void ms_symtab_release(struct ms_symtab *t)
{
	int i;

	if (t->map) {
		munmap(t->map, t->map_len);
		free(t->checked);
		ms_symtab_init(t);
		return;
	}
	for (i = 0; i < MS_SYMS_TIERS; i++)
		free(t->tier[i].syms);
	free(t->names);
	ms_symtab_init(t);
}

void *ms_symtab_detach(struct ms_symtab *t, size_t *len)
{
	void *map = t->map;

	*len = t->map_len;
	if (!map) {
		ms_symtab_release(t);
		return NULL;
	}
	free(t->checked);
	ms_symtab_init(t);
	return map;
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
	if (l->n == l->alloc && !ms_reserve((void **)&l->syms, &l->alloc, (uint64_t)l->n + 1,
					    sizeof(*l->syms)))
		return -1;
	l->syms[l->n++] = *s;
	return 0;
}

/*
 * Room for need elements at once (ms_reserve()), the pages up to need
 * given now (ms_populate()): grown by doubling as they filled, python3's
 * arrays had each page written fresh several times over, a page fault each
 * time. False when memory runs out.
 */
static bool reserve_ahead(void **arr, uint32_t *alloc, uint64_t need, size_t size)
{
	uint32_t had = *alloc;

	if (need <= had)
		return true;
	if (!ms_reserve(arr, alloc, need, size))
		return false;
	ms_populate((char *)*arr + (size_t)had * size, (size_t)(need - had) * size);
	return true;
}

/* Keys of l's symbols by start, sorted (stably); NULL when out of memory. *buf is to free. */
static struct ms_rkey *sorted_starts(const struct ms_symlist *l, struct ms_rkey **buf)
{
	struct ms_rkey *k = malloc(2 * (size_t)l->n * sizeof(*k));
	bool sorted = true;
	uint32_t i;

	*buf = k;
	if (!k)
		return NULL;
	for (i = 0; i < l->n; i++) {
		k[i] = (struct ms_rkey){ l->syms[i].start, i, 0 };
		if (i && k[i].key < k[i - 1].key)
			sorted = false;
	}
	return sorted ? k : ms_radix_sort(k, k + l->n, l->n);
}

/* Of symbols at the same start: global before weak before local, then the smallest name. */
static bool better(const struct ms_symtab *t, const struct ms_sym *x, const struct ms_sym *y)
{
	if (x->rank != y->rank)
		return x->rank < y->rank;
	return strcmp(t->names + x->name, t->names + y->name) < 0;
}

/*
 * Sort a tier by start and keep one symbol per start, the best (the first
 * in the tier's order among equals). 0, or -1 when out of memory.
 */
static int finish_tier(struct ms_symtab *t, struct ms_symlist *l)
{
	struct ms_rkey *buf, *k;
	struct ms_sym *out;
	uint32_t i, j, n = 0;

	if (!l->n)
		return 0;
	if (!(k = sorted_starts(l, &buf)) || !(out = malloc((size_t)l->n * sizeof(*out)))) {
		free(buf);
		return -1;
	}
	for (i = 0; i < l->n; i = j) {
		const struct ms_sym *best = &l->syms[k[i].pos];

		for (j = i + 1; j < l->n && k[j].key == k[i].key; j++)
			if (better(t, &l->syms[k[j].pos], best))
				best = &l->syms[k[j].pos];
		out[n++] = *best;
	}
	free(buf);
	free(l->syms);
	l->syms = out;
	l->alloc = l->n;
	l->n = n;
	return 0;
}

/* Sort b[0..n) and drop repeats: the new count, or -1 when out of memory. */
static ssize_t sort_unique(uint64_t *b, size_t n)
{
	struct ms_rkey *k = malloc(2 * n * sizeof(*k) + 1), *sorted;
	size_t i, out = 0;

	if (!k)
		return -1;
	for (i = 0; i < n; i++)
		k[i] = (struct ms_rkey){ b[i], 0, 0 };
	sorted = ms_radix_sort(k, k + n, n);
	for (i = 0; i < n; i++)
		if (!out || b[out - 1] != sorted[i].key)
			b[out++] = sorted[i].key;
	free(k);
	return (ssize_t)out;
}

/* A symbol before its size is known, with the end of its section. */
struct cand {
	struct ms_sym sym;
	uint64_t sec_end;
	uint64_t next;		/* without a size: the first boundary above start */
	int tier;
};

struct cands {
	struct cand *c;
	uint32_t n, alloc;
	uint64_t *bounds;
	uint32_t n_bounds, alloc_bounds;
};

static int push_cand(struct cands *cs, const struct cand *c)
{
	if (cs->n == cs->alloc &&
	    !ms_reserve((void **)&cs->c, &cs->alloc, (uint64_t)cs->n + 1, sizeof(*cs->c)))
		return -1;
	cs->c[cs->n++] = *c;
	return 0;
}

static int push_bound(struct cands *cs, uint64_t b)
{
	if (cs->n_bounds == cs->alloc_bounds &&
	    !ms_reserve((void **)&cs->bounds, &cs->alloc_bounds, (uint64_t)cs->n_bounds + 1,
			sizeof(*cs->bounds)))
		return -1;
	cs->bounds[cs->n_bounds++] = b;
	return 0;
}

/*
 * Each candidate without a size gets the first boundary above its start:
 * the n of them sorted by start meet the sorted boundaries in one pass (a
 * binary search each cost kallsyms' 150,000 a search of 200,000). 0, or -1
 * when out of memory.
 */
static int next_boundaries(struct cands *cs, size_t n)
{
	struct ms_rkey *keys = malloc(2 * n * sizeof(*keys)), *sorted;
	ssize_t nb = keys ? sort_unique(cs->bounds, cs->n_bounds) : -1;
	size_t i, k = 0, j = 0;

	if (nb < 0) {
		free(keys);
		return -1;
	}
	cs->n_bounds = (size_t)nb;
	for (i = 0; i < cs->n; i++)
		if (!cs->c[i].sym.size)
			keys[k++] = (struct ms_rkey){ cs->c[i].sym.start, (uint32_t)i, 0 };
	sorted = ms_radix_sort(keys, keys + n, n);
	for (k = 0; k < n; k++) {
		struct cand *c = &cs->c[sorted[k].pos];

		while (j < cs->n_bounds && cs->bounds[j] <= c->sym.start)
			j++;
		c->next = j < cs->n_bounds ? cs->bounds[j] : UINT64_MAX;
	}
	free(keys);
	return 0;
}

/*
 * Give each candidate its tier. Unsized ones reach up to the next boundary,
 * capped at their section's end; those that then cover nothing are dropped.
 */
static int place_cands(struct ms_symtab *t, struct cands *cs)
{
	size_t unsized = 0, i;
	uint32_t per_tier[MS_SYMS_TIERS] = { 0 };
	int k;

	/* Boundaries are only needed by symbols without a size. */
	for (i = 0; i < cs->n; i++)
		unsized += !cs->c[i].sym.size;
	if (unsized && next_boundaries(cs, unsized) < 0)
		return -1;
	for (i = 0; i < cs->n; i++)
		per_tier[cs->c[i].tier]++;
	for (k = 0; k < MS_SYMS_TIERS; k++)
		if (!reserve_ahead((void **)&t->tier[k].syms, &t->tier[k].alloc,
				   (uint64_t)t->tier[k].n + per_tier[k], sizeof(struct ms_sym)))
			return -1;
	for (i = 0; i < cs->n; i++) {
		struct cand *c = &cs->c[i];

		if (!c->sym.size) {
			uint64_t end = c->next;

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
		if (finish_tier(t, &t->tier[k]) < 0)
			return -1;
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
	size_t n_sec = 0, n_syms = 0, raw_len = 0, i;
	Elf_Scn *scn;
	int ret = -1;

	if (elf_getshdrnum(elf, &n_sec) != 0)
		return -1;
	if (!elf_rawfile(elf, &raw_len))
		raw_len = 0;	/* no hint (nor for an image in memory, whose length libelf gives as 0) */
	if (n_sec && !(sec_end = calloc(n_sec, sizeof(*sec_end))))
		return -1;
	for (i = 0; i < n_sec; i++) {
		GElf_Shdr sh;
		bool ok;

		scn = elf_getscn(elf, i);
		ok = scn && gelf_getshdr(scn, &sh);
		sec_end[i] = ok ? sh.sh_addr + sh.sh_size : UINT64_MAX;
		/* (A table's size is only believed as far as the file reaches.) */
		if (ok && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) &&
		    sh.sh_entsize && sh.sh_offset <= raw_len && sh.sh_size <= raw_len - sh.sh_offset)
			n_syms += sh.sh_size / sh.sh_entsize;
	}
	/* A bound on what the tables hold: a wrong size only costs the hint. */
	if (n_syms && n_syms <= MS_SYMTAB_RESERVE_MAX &&
	    (!reserve_ahead((void **)&cs.c, &cs.alloc, n_syms, sizeof(*cs.c)) ||
	     !reserve_ahead((void **)&cs.bounds, &cs.alloc_bounds, n_syms, sizeof(*cs.bounds))))
		goto out;
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

/* f's bytes, NUL-terminated, in *buf (malloc'd); their count, or -1 when out of memory. */
static ssize_t read_whole(FILE *f, char **buf)
{
	size_t len = 0, cap = 1 << 20, n;
	char *p = malloc(cap + 1);

	*buf = p;
	if (!p)
		return -1;
	while ((n = fread(p + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *q = cap < ((size_t)1 << 40) ? realloc(p, 2 * cap + 1) : NULL;

			if (!q)
				return -1;
			*buf = p = q;
			cap *= 2;
		}
	}
	p[len] = '\0';
	return (ssize_t)len;
}

/*
 * The address that starts a kallsyms line, as strtoull(line, end, 16)
 * reads it: its usual 16 hex digits here (strtoull's locale and prefix
 * rules cost a third of the read), anything else by strtoull itself.
 */
static uint64_t line_address(char *line, char **end)
{
	uint64_t v = 0;
	char *p = line;

	for (; p - line < 16; p++) {
		unsigned int c = (unsigned char)*p, d;

		if (c - '0' < 10)
			d = c - '0';
		else if ((c | 0x20) - 'a' < 6)
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		v = v << 4 | d;
	}
	if (p == line || (p - line == 16 && isxdigit((unsigned char)*p)) ||
	    (line[0] == '0' && (line[1] | 0x20) == 'x'))
		return strtoull(line, end, 16);
	*end = p;
	return v;
}

int ms_symtab_load_kallsyms(struct ms_symtab *t, FILE *f)
{
	struct cands cs = { 0 };
	char *text = NULL, *line, *next;
	ssize_t len;
	bool nonzero = false;
	int ret = -1;

	/* Read whole, then cut in lines: getline's per-line work was a third of the read. */
	if ((len = read_whole(f, &text)) < 0)
		goto out;
	for (line = text; line < text + len; line = next) {
		char *end, *name, type, *nl = memchr(line, '\n', (size_t)(text + len - line));
		uint64_t addr;
		size_t name_len;
		struct cand c = { 0 };

		/* As getline gives it, but ended at the newline (no use reads past one). */
		next = nl ? nl + 1 : text + len;
		if (nl)
			*nl = '\0';
		addr = line_address(line, &end);

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
	free(text);
	free_cands(&cs);
	return ret;
}

/* The first of syms[lo, hi) that starts above addr (hi when none): they are sorted by start. */
static uint32_t first_above(const struct ms_sym *syms, uint32_t lo, uint32_t hi, uint64_t addr)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct ms_sym *lookup_tier(const struct ms_symlist *l, uint64_t addr)
{
	uint32_t lo = first_above(l->syms, 0, l->n, addr), k, stop;

	/* lo symbols start at or below addr; a few back may still cover it (nesting). */
	stop = lo > 8 ? lo - 8 : 0;
	for (k = lo; k > stop; k--) {
		const struct ms_sym *s = &l->syms[k - 1];

		if (addr - s->start < s->size)
			return s;
	}
	return NULL;
}

/* Symbols a tier's n need fences for: one per span, the last maybe partial. */
static uint32_t tier_fences(const struct ms_symlist *l)
{
	return (uint32_t)(((uint64_t)l->n + MS_SYMS_SPAN - 1) / MS_SYMS_SPAN);
}

/*
 * Whether span k of a mapped module table's tier l is as written: its
 * symbols and their names against its check. Once per span and run: a
 * byte in t->checked remembers a span that passed (span_ok()).
 */
static __attribute__((noinline)) bool span_check(const struct ms_symtab *t,
						 const struct ms_symlist *l, uint32_t k)
{
	const struct ms_span_check *c = &t->checks[l->fence + k];
	uint32_t first = k * MS_SYMS_SPAN, m, lo;
	uint32_t crc;

	m = l->n - first < MS_SYMS_SPAN ? l->n - first : MS_SYMS_SPAN;
	lo = l->syms[first].name;
	if (lo > c->names_end || c->names_end > t->names_len)
		return false;
	crc = ms_crc32c(0, &l->syms[first], (size_t)m * sizeof(struct ms_sym));
	crc = ms_crc32c(crc, t->names + lo, c->names_end - lo);
	if (crc != c->crc)
		return false;
	t->checked[l->fence + k] = 1;
	return true;
}

static inline bool span_ok(const struct ms_symtab *t, const struct ms_symlist *l, uint32_t k)
{
	return t->checked[l->fence + k] || span_check(t, l, k);
}

/*
 * syms[i] of a mapped table, in a span that passed its check, well
 * formed, and starting before the next (starts are unique in a tier).
 * Nesting is allowed: ELF tiers have it.
 */
static bool nested_sym_ok(const struct ms_symtab *t, const struct ms_symlist *l, uint32_t i)
{
	const struct ms_sym *s = &l->syms[i];

	if (!span_ok(t, l, i / MS_SYMS_SPAN))
		return false;
	if (s->name >= t->names_len || !s->size || s->start + s->size < s->start || s->rank > 2)
		return false;
	return i + 1 >= l->n || s->start < l->syms[i + 1].start;
}

/*
 * One tier of a mapped table: sorted symbols, each tier with its fences.
 * The fences narrow the search to one span (one page of symbols), and only
 * what the search ends on is checked, so that a lookup touches a page of
 * fences and a page of symbols, not all of the file. The checks at the
 * end are those of a search of the whole array: a fence that lies makes
 * the table bad, never the answer wrong.
 *
 * A module's symbols may nest: as lookup_tier() does, the 8 symbols below
 * are tried too, each checked (the kernel's do not overlap: for them only
 * the last one starting at or below addr can cover it, the search alike).
 */
static const struct ms_sym *lookup_mapped_tier(const struct ms_symtab *t,
					       const struct ms_symlist *l, uint64_t addr,
					       bool *bad)
{
	const uint64_t *fences = t->fences + l->fence;
	uint32_t lo = 0, hi = tier_fences(l), k, stop;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (fences[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* No fence at or below addr: lo stays 0, checked against syms[0] below. */
	if (lo) {
		uint32_t first = (lo - 1) * MS_SYMS_SPAN;

		/* The symbol the fence copies is on the page searched next. */
		if (!span_ok(t, l, lo - 1) || fences[lo - 1] != l->syms[first].start) {
			*bad = true;
			return NULL;
		}
		lo = first_above(l->syms, first + 1,
				 l->n - first > MS_SYMS_SPAN ? first + MS_SYMS_SPAN : l->n, addr);
	}
	/* syms[lo] may be the next span's first: its span is checked before it is believed. */
	if ((lo < l->n && (!span_ok(t, l, lo / MS_SYMS_SPAN) || l->syms[lo].start <= addr)) ||
	    (lo && l->syms[lo - 1].start > addr)) {
		*bad = true;
		return NULL;
	}
	stop = lo > 8 ? lo - 8 : 0;
	for (k = lo; k > stop; k--) {
		const struct ms_sym *s = &l->syms[k - 1];

		if (!nested_sym_ok(t, l, k - 1)) {
			*bad = true;
			return NULL;
		}
		if (addr - s->start < s->size)
			return s;
	}
	return NULL;
}

/* A mapped table's tiers in order, as ms_symtab_lookup() searches them. */
static const struct ms_sym *lookup_mapped(const struct ms_symtab *t, uint64_t addr, bool *bad)
{
	int k;

	for (k = 0; k < MS_SYMS_TIERS; k++) {
		const struct ms_sym *s;

		if (!t->tier[k].n)
			continue;
		s = lookup_mapped_tier(t, &t->tier[k], addr, bad);
		if (s || *bad)
			return s;
	}
	return NULL;
}

const struct ms_sym *ms_symtab_lookup_checked(const struct ms_symtab *t, uint64_t addr,
					      bool *bad)
{
	int k;

	*bad = false;
	if (t->map)
		return lookup_mapped(t, addr, bad);
	for (k = 0; k < MS_SYMS_TIERS; k++) {
		const struct ms_sym *s = lookup_tier(&t->tier[k], addr);

		if (s)
			return s;
	}
	return NULL;
}

const struct ms_sym *ms_symtab_lookup(const struct ms_symtab *t, uint64_t addr)
{
	bool bad;

	return ms_symtab_lookup_checked(t, addr, &bad);
}

#include "dwarf/cfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/debugfind.h"
#include "elf/elffile.h"
#include "util/cachedir.h"
#include "util/cachefile.h"
#include "util/cachelayout.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/publish.h"

#define SLOT_EMPTY UINT32_MAX
#define RULE_NONE (UINT32_MAX - 1)	/* looked up: no CFI covers the address */

struct slot {
	uint64_t addr;
	uint32_t rule;
};

/*
 * Part of a row of .eh_frame's table, [start, end): every address in it
 * has the same rule (rows change only where the FDE's program advances),
 * and the FDE that holds it is the one .eh_frame gives for each of them
 * (FDEs do not overlap), so a rule made at one address of it is the rule
 * of all. start is an address a rule was made at, not the row's start as
 * libdw reports it: after DW_CFA_restore_state libdw reports an older
 * row's start. Its end (where the program next advances) is the row's.
 * Kept sorted and disjoint; a rule made lower in a row kept extends it.
 */
struct row {
	uint64_t start, end;
	uint32_t rule;
	bool cached;		/* read from the cache (stats only) */
};

/* One source of frame descriptions, opened when first needed. */
struct source {
	bool tried;
	Dwarf_CFI *cfi;		/* NULL: the file has none */
	Dwarf *dw;		/* owns cfi for .debug_frame sources */
	struct ms_elf_file file;	/* the separate debug file, when opened */
};

#define RULE_BLOCK 256

struct ms_cfi {
	char *path;		/* the file read (the image's module path for an image) */
	char *modpath;		/* the module's path, for the finder's candidates */
	struct ms_debugfind *finder;	/* borrowed; NULL: no separate debug file */
	char *debug_path;	/* the separate debug file used, once found */
	struct ms_module mod;	/* identity; path not kept */
	struct ms_elf_file file;
	bool opened;
	uint8_t *image;		/* an image in memory (the vdso's): file is over it */
	bool image_borrowed;	/* the caller's (ms_cfi_open_object()): not freed here */

	struct source src[MS_CFI_SOURCES];

	/* Blocks of RULE_BLOCK rules: a rule never moves, so callers may keep pointers. */
	struct ms_cfi_rule **rule_blocks;
	uint32_t n_rules, alloc_rules, n_blocks;
	struct ms_dwarf_op *ops;
	uint32_t n_ops, alloc_ops;

	struct slot *slots;
	uint32_t mask, n_slots;
	struct row *rows;
	uint32_t n_rows, alloc_rows;
	bool no_rows;		/* ms_cfi_no_rows() */
	bool cache_tried;	/* the cache of rows was looked for (first lookup) */
	bool cache_dirty;	/* a row the cache can hold was learned or grown */

	struct ms_cfi_stats stats;
};

/*
 * The file stays mapped for the module's life; its descriptor is closed,
 * so that a stream of many modules does not run out of descriptors.
 */
static void drop_fd(struct ms_elf_file *f)
{
	if (f->fd >= 0 && elf_cntl(f->elf, ELF_C_FDDONE) == 0) {
		close(f->fd);
		f->fd = -1;
	}
}

/* A new object for module m: its strings and identity; NULL after a message. */
static struct ms_cfi *cfi_new(const char *path, size_t path_len, const struct ms_module *m,
			      struct ms_debugfind *finder)
{
	struct ms_cfi *c = calloc(1, sizeof(*c));

	if (!c) {
		ms_error("out of memory");
		return NULL;
	}
	c->file.fd = -1;
	for (int i = 0; i < MS_CFI_SOURCES; i++)
		c->src[i].file.fd = -1;
	c->path = strndup(path, path_len);
	c->modpath = m->path.len ? strndup(m->path.ptr, m->path.len) : strndup(path, path_len);
	if (!c->path || !c->modpath) {
		ms_cfi_free(c);
		ms_error("out of memory");
		return NULL;
	}
	c->finder = finder;
	c->mod = *m;
	c->mod.path = (struct ms_str){ 0 };
	return c;
}

struct ms_cfi *ms_cfi_open(const char *path, const struct ms_module *m,
			   struct ms_debugfind *finder)
{
	struct ms_cfi *c = cfi_new(path, strlen(path), m, finder);

	if (!c)
		return NULL;
	/* The file is proved again: it may have changed since the module was probed. */
	c->opened = ms_elf_file_open_module(&c->file, path, m) == MS_SYM_OK;
	if (c->opened)
		drop_fd(&c->file);
	return c;
}

struct ms_cfi *ms_cfi_open_image(const uint8_t *image, size_t len, const struct ms_module *m,
				 struct ms_debugfind *finder)
{
	struct ms_cfi *c = m->path.len ? cfi_new(m->path.ptr, m->path.len, m, finder)
				       : cfi_new("[image]", 7, m, finder);

	if (!c)
		return NULL;
	c->image = len ? malloc(len) : NULL;
	if (len && !c->image) {
		ms_cfi_free(c);
		ms_error("out of memory");
		return NULL;
	}
	if (len)
		memcpy(c->image, image, len);
	/* The same proof as for a file: the image's build id is the module's. */
	c->opened = ms_elf_memory_open(&c->file, c->image, len) == MS_SYM_OK;
	if (c->opened && ms_elf_file_is_module(&c->file, m) != MS_SYM_OK) {
		ms_elf_file_close(&c->file);
		c->opened = false;
	}
	return c;
}

struct ms_cfi *ms_cfi_open_object(const uint8_t *image, size_t len, const char *name)
{
	struct ms_module m = { .kind = MS_MODULE_JIT_OBJECT };
	struct ms_cfi *c = cfi_new(name, strlen(name), &m, NULL);

	if (!c)
		return NULL;
	/* (libelf reads the bytes only: the cast drops nothing it writes.) */
	c->image = (uint8_t *)image;
	c->image_borrowed = true;
	c->opened = ms_elf_memory_open(&c->file, c->image, len) == MS_SYM_OK;
	return c;
}

static void cache_store(struct ms_cfi *c);

void ms_cfi_free(struct ms_cfi *c)
{
	if (!c)
		return;
	cache_store(c);
	if (c->src[MS_CFI_EH_FRAME].cfi)
		dwarf_cfi_end(c->src[MS_CFI_EH_FRAME].cfi);
	for (int i = MS_CFI_DEBUG_FRAME; i < MS_CFI_SOURCES; i++) {
		if (c->src[i].dw)
			dwarf_end(c->src[i].dw);
		ms_elf_file_close(&c->src[i].file);
	}
	ms_elf_file_close(&c->file);
	if (!c->image_borrowed)
		free(c->image);
	free(c->path);
	free(c->modpath);
	free(c->debug_path);
	for (uint32_t i = 0; i < c->n_blocks; i++)
		free(c->rule_blocks[i]);
	free(c->rule_blocks);
	free(c->ops);
	free(c->slots);
	free(c->rows);
	free(c);
}

const struct ms_cfi_rule *ms_cfi_rule(const struct ms_cfi *c, uint32_t rule)
{
	return &c->rule_blocks[rule / RULE_BLOCK][rule % RULE_BLOCK];
}

const struct ms_dwarf_op *ms_cfi_ops(const struct ms_cfi *c)
{
	return c->ops;
}

const struct ms_cfi_stats *ms_cfi_stats(const struct ms_cfi *c)
{
	return &c->stats;
}

const char *ms_cfi_debug_file(const struct ms_cfi *c)
{
	return c->debug_path;
}

/* Sources ------------------------------------------------------------------ */

/* Whether elf has a section name with bytes (a debug file's may be NOBITS). */
static bool has_section(Elf *elf, const char *name)
{
	GElf_Shdr sh;

	return ms_elf_section(elf, name, &sh) && sh.sh_type != SHT_NOBITS;
}

/* .debug_frame of an open ELF file, or NULL. */
static Dwarf_CFI *debug_frame(Elf *elf, Dwarf **dw)
{
	if (!has_section(elf, ".debug_frame"))
		return NULL;
	*dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	return *dw ? dwarf_getcfi(*dw) : NULL;
}

/*
 * The separate debug file's .debug_frame: the file the finder gives for
 * the module (the one ms-symbolize reads its DWARF from), unless that is
 * the module file itself (found as DIR/BASE), whose .debug_frame was the
 * source before.
 */
static void open_debug_file(struct ms_cfi *c, struct source *s)
{
	struct ms_debug_file df;

	if (!c->finder)
		return;
	/* An image in memory has no directory, so no path and no debuglink. */
	ms_debugfind_find(c->finder, c->image ? NULL : c->modpath,
			  c->image ? NULL : ms_elf_debuglink(c->file.elf), c->mod.build_id,
			  c->mod.build_id_len, &df);
	if (df.reason != MS_SYM_OK)
		return;
	s->file = df.file;
	if (!c->image && s->file.st.st_dev == c->file.st.st_dev &&
	    s->file.st.st_ino == c->file.st.st_ino) {
		ms_elf_file_close(&s->file);
		return;
	}
	s->cfi = debug_frame(s->file.elf, &s->dw);
	if (!s->cfi) {
		if (s->dw)
			dwarf_end(s->dw);
		s->dw = NULL;
		ms_elf_file_close(&s->file);
		return;
	}
	drop_fd(&s->file);
	/* Out of memory only loses the name, for ms_cfi_debug_file(). */
	c->debug_path = strdup(df.path);
}

static Dwarf_CFI *source_cfi(struct ms_cfi *c, int which)
{
	struct source *s = &c->src[which];

	if (s->tried)
		return s->cfi;
	s->tried = true;
	if (!c->opened)
		return NULL;
	switch (which) {
	case MS_CFI_EH_FRAME:
		s->cfi = dwarf_getcfi_elf(c->file.elf);
		c->stats.has_eh_frame = s->cfi != NULL;
		break;
	case MS_CFI_DEBUG_FRAME:
		s->cfi = debug_frame(c->file.elf, &s->dw);
		c->stats.has_debug_frame = s->cfi != NULL;
		break;
	case MS_CFI_DEBUG_FILE:
		open_debug_file(c, s);
		c->stats.has_debug_file = s->cfi != NULL;
		break;
	}
	return s->cfi;
}

/* Rules -------------------------------------------------------------------- */

/* Copy n operations into the module's pool; their index in *arg. */
static int add_ops(struct ms_cfi *c, const Dwarf_Op *ops, size_t n, int32_t *arg, uint16_t *len)
{
	if (n > UINT16_MAX || c->n_ops + n > INT32_MAX)
		return ms_error("'%s': an unwind expression is too long", c->path);
	if (!ms_reserve((void **)&c->ops, &c->alloc_ops, c->n_ops + (uint64_t)n, sizeof(*c->ops)))
		return ms_error("out of memory for the unwind expressions of '%s'", c->path);
	*arg = (int32_t)c->n_ops;
	*len = (uint16_t)n;
	for (size_t i = 0; i < n; i++)
		c->ops[c->n_ops++] = (struct ms_dwarf_op){
			.atom = ops[i].atom, .offset = (uint32_t)ops[i].offset,
			.number = ops[i].number, .number2 = ops[i].number2,
		};
	return 0;
}

static bool fits_i32(uint64_t v)
{
	return (int64_t)v >= INT32_MIN && (int64_t)v <= INT32_MAX;
}

/* The rule of register reg in frame f, as (kind, arg, len); 0 kind means "same value". */
static int reg_rule(struct ms_cfi *c, Dwarf_Frame *f, int reg, struct ms_reg_rule *out)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	*out = (struct ms_reg_rule){ .reg = (uint8_t)reg };
	if (dwarf_frame_register(f, reg, mem, &ops, &n) < 0) {
		out->kind = MS_REG_UNDEF;
		return 0;
	}
	if (!n) {
		out->kind = ops ? MS_REG_UNDEF : 0;
		return 0;
	}
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		bool value = ops[n - 1].atom == DW_OP_stack_value;
		size_t m = n - value;

		if (m == 1 ||
		    (m == 2 && ops[1].atom == DW_OP_plus_uconst && fits_i32(ops[1].number))) {
			out->kind = value ? MS_REG_VAL_OFFSET : MS_REG_OFFSET;
			out->arg = m == 2 ? (int32_t)(int64_t)ops[1].number : 0;
			return 0;
		}
	}
	if (n == 1 && ops[0].atom == DW_OP_regx) {
		out->kind = MS_REG_REGISTER;
		out->arg = ops[0].number < MS_DWARF_REGS ? (int32_t)ops[0].number : -1;
		return 0;
	}
	if (ops[n - 1].atom == DW_OP_stack_value) {
		out->kind = MS_REG_VAL_EXPR;
		n--;
	} else {
		out->kind = MS_REG_EXPR;
	}
	return add_ops(c, ops, n, &out->arg, &out->len);
}

static bool callee_saved(int reg)
{
	return reg == MS_DW_RBX || reg == MS_DW_RBP || (reg >= 12 && reg <= 15);
}

/*
 * (cfi.h) Shared by rules made from libdw, rules read from the cache and
 * rules proved from JIT code (jit/prove.h), so that no rule can carry a
 * step its registers deny.
 */
void ms_cfi_rule_finish(struct ms_cfi_rule *r)
{
	const struct ms_reg_rule *rbp = NULL, *ra = NULL;

	r->flags &= MS_CFI_SIGNAL;
	r->saved = r->valued = 0;
	r->fast = false;
	r->ra_off = 0;
	r->clear = r->set_known = r->set_saved = 0;
	if (r->undef & (1u << MS_DW_RA))
		r->flags |= MS_CFI_OUTERMOST;
	for (uint32_t i = 0; i < r->n; i++) {
		const struct ms_reg_rule *g = &r->regs[i];

		if (g->reg == MS_DW_RBP)
			rbp = g;
		else if (g->reg == MS_DW_RA)
			ra = g;
		if (g->kind == MS_REG_OFFSET)
			r->saved |= 1u << g->reg;
		else if (g->kind == MS_REG_VAL_OFFSET)
			r->valued |= 1u << g->reg;
	}
	if (r->cfa_kind == MS_CFA_REG && r->cfa_reg == MS_DW_RBP && r->cfa_arg == 16 &&
	    rbp && rbp->kind == MS_REG_OFFSET && rbp->arg == -16 &&
	    ra && ra->kind == MS_REG_OFFSET && ra->arg == -8)
		r->flags |= MS_CFI_FRAME_POINTER;
	if (r->cfa_kind == MS_CFA_REG && (r->saved & (1u << MS_DW_RA)) &&
	    __builtin_popcount(r->saved | r->valued) == r->n)
		r->flags |= MS_CFI_SIMPLE;
	/* Listed in register order, so the return address (16) is last. */
	if ((r->flags & (MS_CFI_SIMPLE | MS_CFI_OUTERMOST)) == MS_CFI_SIMPLE &&
	    r->cfa_reg < MS_DWARF_REGS && r->regs[r->n - 1].reg == MS_DW_RA) {
		r->fast = true;
		r->ra_off = r->regs[r->n - 1].arg;
		r->clear = r->undef | r->saved | r->valued;
		r->set_known = r->valued | 1u << MS_DW_RA;
		r->set_saved = r->saved & ~(1u << MS_DW_RA);
	}
}

/*
 * Make rule *r from libdw's frame f. Returns 1, 0 when the frame is not
 * usable (no CFA, another return address column), -1 after a message.
 */
static int make_rule(struct ms_cfi *c, Dwarf_Frame *f, struct ms_cfi_rule *r)
{
	struct ms_reg_rule rr[MS_DWARF_REGS];
	Dwarf_Addr start, end;
	Dwarf_Op *ops;
	size_t n;
	bool signal = false;
	int ra = dwarf_frame_info(f, &start, &end, &signal);

	memset(r, 0, sizeof(*r));
	if (ra != MS_DW_RA || dwarf_frame_cfa(f, &ops, &n) < 0 || !n)
		return 0;
	if (n == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < MS_DWARF_REGS &&
	    fits_i32(ops[0].number2)) {
		r->cfa_kind = MS_CFA_REG;
		r->cfa_reg = (uint8_t)ops[0].number;
		r->cfa_arg = (int32_t)(int64_t)ops[0].number2;
	} else {
		r->cfa_kind = MS_CFA_EXPR;
		if (add_ops(c, ops, n, &r->cfa_arg, &r->cfa_len) < 0)
			return -1;
	}
	for (int reg = 0; reg < MS_DWARF_REGS; reg++)
		if (reg_rule(c, f, reg, &rr[reg]) < 0)
			return -1;
	/* psABI defaults; see cfi.h about libdw's. */
	if (rr[MS_DW_RAX].kind == 0)
		rr[MS_DW_RAX].kind = MS_REG_UNDEF;
	for (int reg = 0; reg < MS_DWARF_REGS; reg++)
		if (callee_saved(reg) && rr[reg].kind == MS_REG_UNDEF)
			rr[reg].kind = 0;
	if (rr[MS_DW_RSP].kind == 0 || rr[MS_DW_RSP].kind == MS_REG_UNDEF)
		rr[MS_DW_RSP] = (struct ms_reg_rule){ .reg = MS_DW_RSP, .kind = MS_REG_VAL_OFFSET };

	if (signal)
		r->flags |= MS_CFI_SIGNAL;
	for (int reg = 0; reg < MS_DWARF_REGS; reg++) {
		if (rr[reg].kind == MS_REG_UNDEF)
			r->undef |= 1u << reg;
		else if (rr[reg].kind)
			r->regs[r->n++] = rr[reg];
	}
	ms_cfi_rule_finish(r);
	return 1;
}

/* Whether the cache can hold rule r: no expression (the ops pool is not kept). */
static bool rule_cacheable(const struct ms_cfi_rule *r)
{
	if (r->cfa_kind != MS_CFA_REG)
		return false;
	for (uint32_t i = 0; i < r->n; i++)
		if (r->regs[i].kind == MS_REG_EXPR || r->regs[i].kind == MS_REG_VAL_EXPR)
			return false;
	return true;
}

/* Hash table of looked-up addresses ---------------------------------------- */

static uint32_t slot_of(uint64_t addr, uint32_t mask)
{
	return (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static int slots_grow(struct ms_cfi *c)
{
	uint32_t size = c->mask ? (c->mask + 1) * 2 : 256, i;
	struct slot *s = malloc((size_t)size * sizeof(*s));

	if (!s)
		return ms_error("out of memory for %u unwind rule slots", size);
	for (i = 0; i < size; i++)
		s[i].rule = SLOT_EMPTY;
	if (c->mask) {
		for (i = 0; i <= c->mask; i++) {
			uint32_t pos;

			if (c->slots[i].rule == SLOT_EMPTY)
				continue;
			for (pos = slot_of(c->slots[i].addr, size - 1); s[pos].rule != SLOT_EMPTY;
			     pos = (pos + 1) & (size - 1))
				;
			s[pos] = c->slots[i];
		}
	}
	free(c->slots);
	c->slots = s;
	c->mask = size - 1;
	return 0;
}

static int slot_put(struct ms_cfi *c, uint64_t addr, uint32_t rule)
{
	uint32_t pos;

	if ((c->n_slots + 1) * 2 > c->mask + 1 && slots_grow(c) < 0)
		return -1;
	for (pos = slot_of(addr, c->mask); c->slots[pos].rule != SLOT_EMPTY;
	     pos = (pos + 1) & c->mask)
		;
	c->slots[pos] = (struct slot){ .addr = addr, .rule = rule };
	c->n_slots++;
	return 0;
}

/* The first row at or after addr (n_rows when none). */
static uint32_t row_at(const struct ms_cfi *c, uint64_t addr)
{
	uint32_t lo = 0, hi = c->n_rows;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->rows[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Keep [start, end) of .eh_frame's row of rule; out of memory only costs time. */
static void row_put(struct ms_cfi *c, uint64_t start, uint64_t end, uint32_t rule)
{
	uint32_t i = row_at(c, start);

	if (c->no_rows || end <= start)
		return;
	if (i < c->n_rows && c->rows[i].start < end) {
		/* The same row, from lower down: the row kept reaches start now. */
		if (c->rows[i].end == end && c->rows[i].start > start) {
			c->rows[i].start = start;
			c->cache_dirty |= rule_cacheable(ms_cfi_rule(c, c->rows[i].rule));
		}
		return;
	}
	if (!ms_reserve((void **)&c->rows, &c->alloc_rows, (uint64_t)c->n_rows + 1,
			sizeof(*c->rows)))
		return;
	memmove(&c->rows[i + 1], &c->rows[i], (c->n_rows - i) * sizeof(*c->rows));
	c->rows[i] = (struct row){ .start = start, .end = end, .rule = rule };
	c->n_rows++;
	c->cache_dirty |= rule_cacheable(ms_cfi_rule(c, rule));
}

/* Room for rule n_rules (not counted yet): its block allocated. False when out of memory. */
static bool rule_room(struct ms_cfi *c)
{
	struct ms_cfi_rule *b;

	if (c->n_rules / RULE_BLOCK < c->n_blocks)
		return true;
	if (!ms_reserve((void **)&c->rule_blocks, &c->alloc_rules, (uint64_t)c->n_blocks + 1,
			sizeof(*c->rule_blocks)) ||
	    !(b = malloc(RULE_BLOCK * sizeof(*b))))
		return false;
	c->rule_blocks[c->n_blocks++] = b;
	return true;
}

static void cache_load(struct ms_cfi *c);

/* Make the rule at addr from the first source that covers it. */
static int lookup_sources(struct ms_cfi *c, uint64_t addr, uint32_t *rule)
{
	uint32_t i;

	/* Only here, past the hash table: the hot path does not pay for it. */
	if (!c->cache_tried)
		cache_load(c);
	i = row_at(c, addr);
	/* In a row of .eh_frame (the first source) made before: its rule. */
	if (i < c->n_rows && c->rows[i].start <= addr) {
		c->stats.from_rows++;
		c->stats.from_cache += c->rows[i].cached;
		*rule = c->rows[i].rule;
		return 1;
	}
	for (int which = 0; which < MS_CFI_SOURCES; which++) {
		Dwarf_CFI *cfi = source_cfi(c, which);
		Dwarf_Frame *f = NULL;
		int r;

		if (!cfi || dwarf_cfi_addrframe(cfi, addr, &f) < 0)
			continue;
		if (!rule_room(c)) {
			free(f);
			ms_error("out of memory for %u unwind rules", c->n_rules + 1);
			return -1;
		}
		r = make_rule(c, f, &c->rule_blocks[c->n_rules / RULE_BLOCK][c->n_rules % RULE_BLOCK]);
		if (r > 0 && which == MS_CFI_EH_FRAME) {
			Dwarf_Addr start, end;
			bool signal;

			if (dwarf_frame_info(f, &start, &end, &signal) >= 0 && start <= addr &&
			    addr < end)
				row_put(c, addr, end, c->n_rules);
		}
		free(f);
		if (r < 0)
			return -1;
		if (!r)
			continue;
		c->stats.made++;
		c->stats.from[which]++;
		*rule = c->n_rules++;
		return 1;
	}
	c->stats.none++;
	*rule = RULE_NONE;
	return 0;
}

void ms_cfi_no_rows(struct ms_cfi *c)
{
	c->no_rows = true;
}

int ms_cfi_find(struct ms_cfi *c, uint64_t addr, uint32_t *rule)
{
	uint32_t pos, r;
	int found;

	c->stats.lookups++;
	if (c->mask) {
		for (pos = slot_of(addr, c->mask); c->slots[pos].rule != SLOT_EMPTY;
		     pos = (pos + 1) & c->mask) {
			if (c->slots[pos].addr == addr) {
				*rule = c->slots[pos].rule;
				return *rule != RULE_NONE;
			}
		}
	}
	if ((found = lookup_sources(c, addr, &r)) < 0 || slot_put(c, addr, r) < 0)
		return -1;
	*rule = r;
	return found;
}

/* The cache of rows ---------------------------------------------------------- */

/*
 * Layout of cfi/BUILDID.rows (host byte order, written and read by this
 * code only): the common header of every cache file (util/cachefile.h,
 * magic "MSCFIRW"), this cache's own (struct cache_header), n_rules
 * rules, then n_rows rows sorted by start, disjoint, each naming one of
 * the rules. The file is exactly that long.
 */
#define CACHE_MAGIC "MSCFIRW"
/*
 * 3: the common header's producer and CRCs (util/cachefile.h). The file is
 * small and read whole, so it is checked whole: a damaged byte that
 * passed the checks below changed stacks silently (issue 15).
 */
#define CACHE_VERSION 3
#define CACHE_MAX_ROWS (1u << 20)

/* The cache's own header, after the common one. */
struct cache_header {
	uint32_t rule_size, row_size;	/* sizeof of the structs here */
	uint32_t n_rules, n_rows;
	uint64_t file_size;	/* the module file's */
	uint32_t build_id_len;
	uint8_t build_id[MS_BUILD_ID_MAX];
};

struct cache_reg {
	uint8_t reg, kind;
	uint16_t zero;
	int32_t arg;
};

/* What a rule is made of; the rest follows from it (ms_cfi_rule_finish()). */
struct cache_rule {
	int32_t cfa_arg;
	uint32_t undef;
	uint8_t cfa_reg, signal, n, zero;
	struct cache_reg regs[MS_RULE_REGS];
	uint32_t pad;		/* rows after the rules stay 8-byte aligned */
};

struct cache_row {
	uint64_t start, end;
	uint32_t rule, zero;
};

/* Where the rules start: after both headers. */
#define CACHE_RULES_AT (sizeof(struct ms_cachefile) + sizeof(struct cache_header))

_Static_assert(CACHE_RULES_AT % 8 == 0 && sizeof(struct cache_rule) % 8 == 0,
	       "the rows of the file are 8-byte aligned");

/*
 * Only a module file proved by build id: the key names what the rows were
 * read from. (Not the vdso's image: it costs one module a few rules.)
 */
static bool cache_usable(const struct ms_cfi *c)
{
	return c->opened && !c->image && !c->no_rows && c->mod.build_id_len &&
	       c->mod.build_id_len <= MS_BUILD_ID_MAX;
}

static char *cache_path(const struct ms_cfi *c)
{
	return ms_cache_path(MS_CACHE_CFI_ROWS, c->mod.build_id, c->mod.build_id_len);
}

static void cache_header_of(const struct ms_cfi *c, struct cache_header *h, uint32_t n_rules,
			    uint32_t n_rows)
{
	memset(h, 0, sizeof(*h));
	h->rule_size = sizeof(struct cache_rule);
	h->row_size = sizeof(struct cache_row);
	h->n_rules = n_rules;
	h->n_rows = n_rows;
	h->file_size = (uint64_t)c->file.st.st_size;
	h->build_id_len = c->mod.build_id_len;
	memcpy(h->build_id, c->mod.build_id, c->mod.build_id_len);
}

/*
 * Rule *r from cached rule *k, when every field is one make_rule() can
 * give a cacheable rule: false otherwise.
 */
static bool cache_rule_read(const struct cache_rule *k, struct ms_cfi_rule *r)
{
	uint32_t listed = 0;

	if (k->cfa_reg >= MS_DWARF_REGS || k->signal > 1 || k->n > MS_RULE_REGS || k->zero || k->pad ||
	    k->undef >> MS_DWARF_REGS)
		return false;
	memset(r, 0, sizeof(*r));
	r->cfa_kind = MS_CFA_REG;
	r->cfa_reg = k->cfa_reg;
	r->cfa_arg = k->cfa_arg;
	r->undef = k->undef;
	r->flags = k->signal ? MS_CFI_SIGNAL : 0;
	r->n = k->n;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct cache_reg *g = &k->regs[i];

		/* In register order, each once, never also undefined. */
		if (g->reg >= MS_DWARF_REGS || (i && g->reg <= k->regs[i - 1].reg) ||
		    (k->undef & (1u << g->reg)) || g->zero)
			return false;
		if (g->kind != MS_REG_OFFSET && g->kind != MS_REG_VAL_OFFSET &&
		    g->kind != MS_REG_REGISTER)
			return false;
		if (g->kind == MS_REG_REGISTER && (g->arg < -1 || g->arg >= MS_DWARF_REGS))
			return false;
		listed |= 1u << g->reg;
		r->regs[i] = (struct ms_reg_rule){ .reg = g->reg, .kind = g->kind, .arg = g->arg };
	}
	/* make_rule() always gives %rsp a rule. */
	if (!(listed & (1u << MS_DW_RSP)))
		return false;
	ms_cfi_rule_finish(r);
	return true;
}

/*
 * Preload the rows (and their rules) of the cache, when it is valid for
 * this module, before the first rule is made. Every field is checked
 * before anything is taken: a cache that fails is ignored (and rewritten
 * at the end), silently.
 */
static void cache_load(struct ms_cfi *c)
{
	const struct cache_header *h;
	const struct cache_rule *kr;
	const struct cache_row *kw;
	struct cache_header want;
	struct ms_cfi_rule *rules = NULL;
	uint64_t max_len = CACHE_RULES_AT + (uint64_t)CACHE_MAX_ROWS *
				(sizeof(*kr) + sizeof(*kw));
	size_t len = 0;
	uint8_t *map;
	char *path;
	uint32_t i;

	c->cache_tried = true;
	if (!cache_usable(c) || c->n_rules || c->n_rows || !(path = cache_path(c)))
		return;
	map = ms_cache_map(path, CACHE_RULES_AT, max_len, &len);
	free(path);
	if (!map)
		return;
	if (!(h = ms_cachefile_check(map, len, CACHE_MAGIC, CACHE_VERSION, sizeof(*h), NULL)))
		goto out;
	cache_header_of(c, &want, h->n_rules, h->n_rows);
	if (memcmp(h, &want, sizeof(want)) || !h->n_rows || h->n_rows > CACHE_MAX_ROWS ||
	    h->n_rules > h->n_rows ||
	    len != CACHE_RULES_AT + (uint64_t)h->n_rules * sizeof(*kr) +
			   (uint64_t)h->n_rows * sizeof(*kw))
		goto out;
	kr = (const struct cache_rule *)(map + CACHE_RULES_AT);
	kw = (const struct cache_row *)(map + CACHE_RULES_AT + (size_t)h->n_rules * sizeof(*kr));
	for (i = 0; i < h->n_rows; i++) {
		if (kw[i].start >= kw[i].end || kw[i].rule >= h->n_rules || kw[i].zero ||
		    (i && kw[i].start < kw[i - 1].end))
			goto out;
	}
	if (!(rules = malloc((size_t)h->n_rules * sizeof(*rules))))
		goto out;
	for (i = 0; i < h->n_rules; i++)
		if (!cache_rule_read(&kr[i], &rules[i]))
			goto out;
	/* Checked: now taken, all or (out of memory) nothing. */
	if (!ms_reserve((void **)&c->rows, &c->alloc_rows, h->n_rows, sizeof(*c->rows)))
		goto out;
	for (i = 0; i < h->n_rules; i++) {
		if (!rule_room(c)) {
			c->n_rules = 0;
			goto out;
		}
		c->rule_blocks[c->n_rules / RULE_BLOCK][c->n_rules % RULE_BLOCK] = rules[i];
		c->n_rules++;
	}
	for (i = 0; i < h->n_rows; i++)
		c->rows[i] = (struct row){
			.start = kw[i].start, .end = kw[i].end, .rule = kw[i].rule, .cached = true,
		};
	c->n_rows = h->n_rows;
	c->stats.cached_rows = h->n_rows;
out:
	free(rules);
	munmap(map, len);
}

/* A buffered writer of the cache file (a failed write fails ms_cachefile_end()). */
struct cache_out {
	struct ms_cachefile_out file;
	size_t n;
	uint8_t buf[1 << 16];
};

static void cache_put(struct cache_out *o, const void *p, size_t len)
{
	if (o->n + len > sizeof(o->buf)) {
		ms_cachefile_put(&o->file, o->buf, o->n);
		o->n = 0;
	}
	memcpy(o->buf + o->n, p, len);
	o->n += len;
}

/*
 * Write the rows whose rules have no expression, with those rules, when
 * this run learned one. A cache that cannot be written costs the next run
 * only the libdw work.
 */
static void cache_store(struct ms_cfi *c)
{
	struct cache_header h;
	struct cache_out *o = NULL;
	struct ms_publish pub;
	uint32_t *idx = NULL, n_rules = 0, n_rows = 0, i;
	char *path = NULL;
	int fd;

	if (!c->cache_dirty || !cache_usable(c) || c->n_rows > CACHE_MAX_ROWS ||
	    !(path = cache_path(c)))
		return;
	/* The rules rows use, numbered in the file in their order here. */
	if (!(idx = malloc((size_t)c->n_rules * sizeof(*idx))) || !(o = malloc(sizeof(*o))))
		goto out;
	for (i = 0; i < c->n_rules; i++)
		idx[i] = UINT32_MAX;
	for (i = 0; i < c->n_rows; i++) {
		uint32_t r = c->rows[i].rule;

		if (!rule_cacheable(ms_cfi_rule(c, r)))
			continue;
		idx[r] = 0;
		n_rows++;
	}
	for (i = 0; i < c->n_rules; i++)
		if (idx[i] != UINT32_MAX)
			idx[i] = n_rules++;
	if (!n_rows || (fd = ms_cache_publish(&pub, path)) < 0)
		goto out;
	o->n = 0;
	cache_header_of(c, &h, n_rules, n_rows);
	ms_cachefile_begin(&o->file, fd, CACHE_MAGIC, CACHE_VERSION, sizeof(h));
	cache_put(o, &h, sizeof(h));
	for (i = 0; i < c->n_rules; i++) {
		const struct ms_cfi_rule *r = ms_cfi_rule(c, i);
		struct cache_rule k = { 0 };

		if (idx[i] == UINT32_MAX)
			continue;
		k.cfa_arg = r->cfa_arg;
		k.undef = r->undef;
		k.cfa_reg = r->cfa_reg;
		k.signal = !!(r->flags & MS_CFI_SIGNAL);
		k.n = r->n;
		for (uint32_t j = 0; j < r->n; j++)
			k.regs[j] = (struct cache_reg){
				.reg = r->regs[j].reg, .kind = r->regs[j].kind, .arg = r->regs[j].arg,
			};
		cache_put(o, &k, sizeof(k));
	}
	for (i = 0; i < c->n_rows; i++) {
		struct cache_row w = {
			.start = c->rows[i].start, .end = c->rows[i].end,
			.rule = idx[c->rows[i].rule],
		};

		if (w.rule != UINT32_MAX)
			cache_put(o, &w, sizeof(w));
	}
	if ((o->n && ms_cachefile_put(&o->file, o->buf, o->n) < 0) ||
	    ms_cachefile_end(&o->file) < 0) {
		ms_publish_abort(&pub);
		goto out;
	}
	/* A cache (checked before use), mapped by every later run: see publish.h. */
	pub.cache = true;
	ms_publish_commit(&pub);
out:
	free(o);
	free(idx);
	free(path);
}

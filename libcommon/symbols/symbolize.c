#include "symbols/symbolize.h"

#include <elfutils/libdw.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/debugfind.h"
#include "util/demangle.h"
#include "dwarf/dwarfidx.h"
#include "elf/dcache.h"
#include "dwarf/ehframe.h"
#include "symbols/kcache.h"
#include "perf/kernel.h"
#include "util/strpool.h"
#include "symbols/symcache.h"
#include "symbols/symtab.h"
#include "elf/elffile.h"
#include "util/cachelayout.h"
#include "util/error.h"

#define NONE UINT32_MAX
/* Module ids are dense; a larger one is not from ms-unwind. */
#define MODULE_ID_MAX (1u << 24)
#define MODULE_ID_SLACK 4096u

struct smodule {
	bool defined;
	bool tried;		/* the files were looked for (found or not) */
	uint32_t reason;	/* MS_SYM_OK when something names its frames */
	uint32_t debug_reason;	/* MS_SYM_OK when there is DWARF, else why not */
	struct ms_module rec;	/* rec.path borrows path */
	char *path;
	struct ms_elf_file file;	/* the module's file, when proved */
	struct ms_elf_file debug;	/* its separate debug file, when found */
	struct ms_elf_file inflated;	/* the DWARF file's cached inflated copy (dcache.h) */
	struct ms_dwarfidx *dwarf;
	Elf *dwelf;		/* the file dwarf reads (or whose copy it reads) */
	bool key_from_file;	/* its caches are keyed by the file's build id, not rec's */
	/*
	 * Indexes of copies their check refused (replace_refused()), with the
	 * copies: kept until the module is released, names handed out borrow
	 * from their caches. A fresh copy, then the file itself: two at most.
	 */
	struct {
		struct ms_dwarfidx *dwarf;
		struct ms_elf_file copy;
	} refused[2];
	uint32_t n_refused;
	bool bad_dwarf_told;	/* the problem was counted (once per module) */
	struct ms_ehframe eh;	/* the file's .eh_frame: function starts */
	struct ms_symtab syms;
	bool syms_pending;	/* syms not read yet (load_syms()) */
	/*
	 * A cached table (symcache.h) that proved corrupt: unmapped only when
	 * the module is released, since facts borrow names from it.
	 */
	void *old_syms;
	size_t old_syms_len;
	bool has_loads;
	struct ms_elf_loads loads;
};

/* What is known of one (module, address). name is NULL when unnamed. */
struct fact {
	uint64_t address;
	uint32_t module;
	uint32_t reason;
	uint64_t symbol_start;
	const char *name;
	uint32_t name_len;
	uint32_t n_lines;
	const struct ms_frame_line *lines;	/* in the pool */
	bool used;
	bool owned;		/* name was copied from an upstream record */
};

struct ms_symbolizer {
	struct smodule *mods;
	uint32_t n_mods;
	struct ms_debugfind *finder;
	struct ms_strpool pool;	/* demangled names and inline chains */

	const char *kallsyms_path;
	const char *kernel_notes;
	int kallsyms_state;	/* 0 not read, 1 read, -1 unusable */
	struct ms_symtab ksyms;
	bool kallsyms_thread;	/* a reader thread runs: join before use */
	pthread_t kallsyms_tid;
	int kallsyms_result;	/* the thread's, valid after the join */
	bool kcache_tried;	/* map_kcache() ran */
	void *old_kcache;	/* a dropped kallsyms cache's mapping (as old_syms) */
	size_t old_kcache_len;
	char *kcache;		/* the kallsyms cache's path, when there is one */
	struct ms_kcache_key kcache_key;
	bool kernel_identity_checked;

	struct fact *facts;
	uint32_t mask;		/* slots - 1 */
	uint32_t n_facts;

	struct ms_srcline chain[MS_FRAME_LINES_MAX];	/* one lookup's, reused */

	bool have_last;		/* the last pair ms_symbolizer_frame_if_new() saw */
	uint32_t last_module;
	uint64_t last_address;

	struct ms_symbolize_stats stats;
	struct ms_problems problems;

	const char *in_name;	/* where the current record came from, for messages */
	uint64_t in_offset;

	uint8_t *vdso;		/* the vdso's image, from the stream; NULL when none came */
	uint32_t vdso_len;
};

void ms_symbolizer_set_origin(struct ms_symbolizer *s, const char *name, uint64_t offset)
{
	s->in_name = name;
	s->in_offset = offset;
}

struct ms_symbolizer *ms_symbolizer_new(const struct ms_symbolize_options *opts)
{
	struct ms_symbolizer *s = calloc(1, sizeof(*s));
	struct ms_debug_search search = { 0 };

	if (!s || ms_elf_setup() < 0) {
		free(s);
		ms_error("out of memory");
		return NULL;
	}
	if (opts) {
		search.dirs = opts->debug_dirs;
		search.n_dirs = opts->n_debug_dirs;
		search.system_dir = opts->system_debug_dir;
	}
	s->kallsyms_path = opts && opts->kallsyms ? opts->kallsyms : "/proc/kallsyms";
	s->kernel_notes = opts && opts->kernel_notes ? opts->kernel_notes : MS_KERNEL_NOTES;
	s->in_name = "input";
	ms_symtab_init(&s->ksyms);
	ms_strpool_init(&s->pool);
	ms_problems_init(&s->problems, "ms-symbolize");
	s->mask = 1023;
	s->facts = calloc(s->mask + 1, sizeof(*s->facts));
	s->finder = ms_debugfind_new(&search);
	if (!s->facts || !s->finder) {
		ms_error("out of memory");
		ms_symbolizer_free(s);
		return NULL;
	}
	return s;
}

static void module_release(struct smodule *m)
{
	free(m->path);
	ms_symtab_release(&m->syms);
	if (m->old_syms)
		munmap(m->old_syms, m->old_syms_len);
	ms_elf_loads_release(&m->loads);
	if (m->dwarf)
		ms_dwarfidx_save(m->dwarf);
	ms_dwarfidx_free(m->dwarf);
	for (uint32_t i = 0; i < m->n_refused; i++) {
		ms_dwarfidx_free(m->refused[i].dwarf);
		ms_elf_file_close(&m->refused[i].copy);
	}
	ms_ehframe_release(&m->eh);
	if (m->tried) {
		ms_elf_file_close(&m->debug);
		ms_elf_file_close(&m->file);
		ms_elf_file_close(&m->inflated);
	}
}

void ms_symbolizer_free(struct ms_symbolizer *s)
{
	uint32_t i;

	if (!s)
		return;
	if (s->kallsyms_thread)
		pthread_join(s->kallsyms_tid, NULL);
	for (i = 0; i < s->n_mods; i++)
		module_release(&s->mods[i]);
	free(s->mods);
	ms_symtab_release(&s->ksyms);
	if (s->old_kcache)
		munmap(s->old_kcache, s->old_kcache_len);
	free(s->kcache);
	if (s->facts)
		for (i = 0; i <= s->mask; i++)
			if (s->facts[i].used && s->facts[i].owned)
				free((char *)s->facts[i].name);
	free(s->facts);
	ms_debugfind_free(s->finder);
	ms_strpool_release(&s->pool);
	free(s->vdso);	/* after the modules: a vdso module's ELF reads it */
	free(s);
}

/* What ms_symbolizer_leave() keeps: reachable, so not a leak to LeakSanitizer. */
static struct ms_symbolizer *left;

void ms_symbolizer_leave(struct ms_symbolizer *s)
{
	if (!s)
		return;
	if (s->kallsyms_thread) {
		pthread_join(s->kallsyms_tid, NULL);
		s->kallsyms_thread = false;
	}
	if (left)
		ms_symbolizer_free(left);	/* one kept at a time */
	/* The units indexed in this run go to the cache (dwarfidx.h), as ms_symbolizer_free() does. */
	for (uint32_t i = 0; i < s->n_mods; i++)
		if (s->mods[i].dwarf)
			ms_dwarfidx_save(s->mods[i].dwarf);
	left = s;
}

int ms_symbolizer_vdso(struct ms_symbolizer *s, const struct ms_vdso *v)
{
	if (s->vdso)
		return 0;	/* ms-unwind counts an image that changed */
	if (!(s->vdso = malloc(v->len)))
		return ms_error("out of memory for the vdso's image (%u bytes)", v->len);
	memcpy(s->vdso, v->image, v->len);
	s->vdso_len = v->len;
	return 0;
}

const struct ms_symbolize_stats *ms_symbolizer_stats(const struct ms_symbolizer *s)
{
	/* The DWARF counts live in each module's index: gathered on demand. */
	struct ms_symbolize_stats *st = (struct ms_symbolize_stats *)&s->stats;
	struct ms_dwarfidx_stats ds;

	st->units_indexed = 0;
	for (uint32_t i = 0; i < s->n_mods; i++) {
		if (!s->mods[i].dwarf)
			continue;
		ms_dwarfidx_stats(s->mods[i].dwarf, &ds);
		st->units_indexed += ds.units_indexed;
	}
	return st;
}

struct ms_problems *ms_symbolizer_problems(struct ms_symbolizer *s)
{
	return &s->problems;
}

int ms_symbolizer_module(struct ms_symbolizer *s, const struct ms_module *m)
{
	struct smodule *mod;

	/* Ids are dense: a far larger one is corrupt, and must not make us allocate. */
	if (m->id >= MODULE_ID_MAX || m->id > s->stats.modules + MODULE_ID_SLACK)
		return ms_error("'%s': the module record at byte %llu has id %u, out of range: "
				"%llu modules were described before it and ids are dense",
				s->in_name, (unsigned long long)s->in_offset, m->id,
				(unsigned long long)s->stats.modules);
	if (m->id >= s->n_mods) {
		uint32_t n = s->n_mods ? s->n_mods : 64;
		struct smodule *p;

		while (n <= m->id)
			n *= 2;
		if (!(p = realloc(s->mods, (size_t)n * sizeof(*p))))
			return ms_error("out of memory for %u modules", n);
		memset(p + s->n_mods, 0, (size_t)(n - s->n_mods) * sizeof(*p));
		s->mods = p;
		s->n_mods = n;
	}
	mod = &s->mods[m->id];
	if (mod->defined)
		return ms_error("'%s': the module record at byte %llu describes module %u again",
				s->in_name, (unsigned long long)s->in_offset, m->id);
	if (!(mod->path = malloc((size_t)m->path.len + 1)))
		return ms_error("out of memory");
	memcpy(mod->path, m->path.ptr, m->path.len);
	mod->path[m->path.len] = '\0';
	mod->defined = true;
	mod->rec = *m;
	mod->rec.path.ptr = mod->path;
	ms_symtab_init(&mod->syms);
	s->stats.modules++;
	/* ms-unwind describes the kernel only when a stack has a kernel frame. */
	if (m->kind == MS_MODULE_KERNEL)
		ms_symbolizer_preload_kernel(s);
	return 0;
}

const char *ms_symbolizer_module_path(const struct ms_symbolizer *s, uint32_t id)
{
	return id < s->n_mods && s->mods[id].defined ? s->mods[id].path : NULL;
}

/* ---- loading a module ---- */

static const char *reason_text(uint32_t reason)
{
	switch (reason) {
	case MS_SYM_NO_FILE:
		return "cannot be opened";
	case MS_SYM_IDENTITY:
		return "the file at the path is not the module that ran "
		       "(build id or device, inode, size, mtime differ)";
	case MS_SYM_BAD_ELF:
		return "is not an ELF file or its symbol tables are corrupt";
	default:
		return "cannot be used";
	}
}

/* libelf keeps the mapping; the descriptor is not needed after this. */
static void drop_fd(struct ms_elf_file *f)
{
	if (f->fd >= 0 && f->elf && elf_cntl(f->elf, ELF_C_FDREAD) == 0) {
		close(f->fd);
		f->fd = -1;
	}
}

static void build_id_text(const uint8_t *bid, uint32_t len, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (uint32_t i = 0; i < len && o + 2 < size; i++) {
		out[o++] = hex[bid[i] >> 4];
		out[o++] = hex[bid[i] & 15];
	}
	out[o] = '\0';
}

/*
 * Count a module whose DWARF is corrupt once, when the index first meets
 * the damage (reading the list of units, or walking a unit on a lookup).
 */
static void tell_bad_dwarf(struct ms_symbolizer *s, uint32_t id, struct smodule *mod)
{
	const char *what = mod->dwarf ? ms_dwarfidx_problem(mod->dwarf) : NULL;

	if (mod->bad_dwarf_told || !what)
		return;
	mod->bad_dwarf_told = true;
	ms_problems_add(&s->problems, "bad-dwarf", "module %u '%s': %s; its addresses there "
			"are named from symbols, without lines", id, mod->path, what);
}

/* The gate of an index over an inflated copy: the copy's CRC, at its first DWARF read. */
static bool copy_sealed(void *copy)
{
	return ms_dcache_sealed(copy);
}

enum copy_use { COPY_CACHED, COPY_FRESH, COPY_NONE };

/*
 * Index mod->dwelf's DWARF into mod->dwarf: from its inflated copy when
 * its sections are compressed (dcache.h), the cached one or one written
 * anew as use says, else from the file. NULL dwarf when it cannot be read
 * (*why says why).
 */
static void index_dwarf(struct smodule *mod, enum copy_use use, const char **why)
{
	const uint8_t *bid = mod->key_from_file ? mod->file.build_id : mod->rec.build_id;
	uint32_t bid_len = mod->key_from_file ? mod->file.build_id_len : mod->rec.build_id_len;
	struct ms_dwarfidx_gate gate = { 0 };
	Elf *elf = mod->dwelf;
	char *path;

	if (use != COPY_NONE && bid_len && ms_elf_debug_compressed(elf) &&
	    ms_dcache_open(&mod->inflated, elf, bid, bid_len, use == COPY_FRESH) == 0) {
		drop_fd(&mod->inflated);
		elf = mod->inflated.elf;
		gate = (struct ms_dwarfidx_gate){ copy_sealed, elf };
	}
	/* The list of units is kept beside the inflated copy (dwarfidx.h). */
	path = ms_cache_path(MS_CACHE_UNITS, bid, bid_len);
	mod->dwarf = ms_dwarfidx_new_cached(elf, path, bid, bid_len, &gate, why);
	free(path);
	/* So are the units indexed, written back when the module is released or left. */
	if (mod->dwarf && (path = ms_cache_path(MS_CACHE_INDEX, bid, bid_len))) {
		ms_dwarfidx_index_cache(mod->dwarf, path, bid, bid_len);
		free(path);
	}
}

/*
 * The module's inflated copy failed its check at the first read of its
 * DWARF (damaged in place since it was written): index the DWARF again
 * from a copy written anew, or after a second failure from the file
 * itself. Cache damage is mended, not reported. True when there is a new
 * index to ask.
 */
static bool replace_refused(struct smodule *mod)
{
	const char *why;

	if (mod->n_refused == 2)
		return false;
	mod->refused[mod->n_refused].dwarf = mod->dwarf;
	mod->refused[mod->n_refused].copy = mod->inflated;
	mod->n_refused++;
	memset(&mod->inflated, 0, sizeof(mod->inflated));
	mod->inflated.fd = -1;
	index_dwarf(mod, mod->n_refused == 1 ? COPY_FRESH : COPY_NONE, &why);
	if (!mod->dwarf)
		mod->debug_reason = MS_SYM_BAD_DWARF;
	return mod->dwarf != NULL;
}

/* Find and open the module's debug information: its own, or a proved debug file. */
static void load_debug(struct ms_symbolizer *s, uint32_t id, struct smodule *mod, bool have_file)
{
	const uint8_t *bid = mod->rec.build_id;
	uint32_t bid_len = mod->rec.build_id_len;
	struct ms_debug_file df;
	const char *why = NULL;
	Elf *dwelf = NULL;
	char hex[2 * MS_BUILD_ID_MAX + 1];

	/* A module proved by device and inode may still carry a build id. */
	if (!bid_len && have_file) {
		bid = mod->file.build_id;
		bid_len = mod->file.build_id_len;
		mod->key_from_file = true;
	}
	if (have_file && ms_elf_has_dwarf(mod->file.elf)) {
		dwelf = mod->file.elf;
	} else {
		ms_debugfind_find(s->finder, mod->path,
				  have_file ? ms_elf_debuglink(mod->file.elf) : NULL, bid, bid_len,
				  &df);
		mod->debug_reason = df.reason;
		build_id_text(bid, bid_len, hex, sizeof(hex));
		if (df.reason == MS_SYM_OK) {
			mod->debug = df.file;
			drop_fd(&mod->debug);
			if (df.has_dwarf) {
				dwelf = mod->debug.elf;
			} else {
				mod->debug_reason = MS_SYM_NO_DEBUG;
				ms_problems_add(&s->problems, "no-debug-file",
						"module %u '%s' (build id %s): the debug file '%s' has "
						"symbols but no DWARF", id, mod->path, hex, df.path);
			}
		} else if (df.reason == MS_SYM_DEBUG_MISMATCH) {
			ms_problems_add(&s->problems, "debug-build-id-mismatch",
					"module %u '%s' (build id %s): the debug file '%s' (%s) has "
					"another build id and is not used", id, mod->path, hex,
					df.path, df.how);
		} else {
			ms_problems_add(&s->problems, "no-debug-file",
					"module %u '%s' (build id %s): no debug file found%s", id,
					mod->path, bid_len ? hex : "none",
					bid_len ? "" : " (without a build id none can be proved)");
		}
	}
	if (!dwelf)
		return;
	mod->dwelf = dwelf;
	index_dwarf(mod, COPY_CACHED, &why);
	/* A copy refused as its units were read: its damage is known already. */
	while (mod->dwarf && ms_dwarfidx_refused(mod->dwarf) && replace_refused(mod))
		;
	if (!mod->dwarf) {
		mod->debug_reason = MS_SYM_BAD_DWARF;
		mod->bad_dwarf_told = true;
		ms_problems_add(&s->problems, "bad-dwarf", "module %u '%s': its DWARF cannot be read: %s",
				id, mod->path, why ? why : "unknown error");
		return;
	}
	mod->debug_reason = MS_SYM_OK;
	s->stats.debug_files++;
	tell_bad_dwarf(s, id, mod);
}

/*
 * The module's symbols from its ELF files: the debug file's .symtab (what
 * strip removed), then the file's. 0, or -1 when they are corrupt (the
 * table stays empty).
 */
static int read_syms(struct ms_symbolizer *s, uint32_t id, struct smodule *mod)
{
	if ((mod->debug.elf && ms_symtab_load_elf(&mod->syms, mod->debug.elf) < 0) ||
	    (mod->file.elf && ms_symtab_load_elf(&mod->syms, mod->file.elf) < 0)) {
		ms_symtab_release(&mod->syms);
		ms_symtab_init(&mod->syms);
		ms_problems_add(&s->problems, "module-bad-symtab",
				"module %u '%s': its symbol tables are corrupt and not used",
				id, mod->path);
		return -1;
	}
	return 0;
}

/*
 * Where the module's table is cached (symcache.h) and under which key: the
 * path (malloc'd), or NULL when it is not (no build id, no cache dir, a
 * file read without a build id).
 */
static char *syms_cache(const struct smodule *mod, struct ms_symcache_key *k)
{
	struct ms_symcache_src debug = { mod->debug.build_id, mod->debug.build_id_len,
					 (uint64_t)mod->debug.st.st_size };
	struct ms_symcache_src file = { mod->file.build_id, mod->file.build_id_len,
					(uint64_t)mod->file.st.st_size };
	const uint8_t *bid = mod->rec.build_id;
	uint32_t bid_len = mod->rec.build_id_len;

	/* Named as the module's other caches are (load_debug()). */
	if (!bid_len && mod->file.elf) {
		bid = mod->file.build_id;
		bid_len = mod->file.build_id_len;
	}
	if (ms_symcache_key(k, mod->debug.elf ? &debug : NULL, mod->file.elf ? &file : NULL) < 0)
		return NULL;
	return ms_symcache_path(bid, bid_len);
}

/*
 * The module's symbols, once: mapped from the cache when it holds this
 * module's, else read from the ELF files (and the cache written). With
 * use_cache false the cache is only written (the mapped one proved
 * corrupt). 0, or -1 when the files' tables are corrupt (the table stays
 * empty).
 */
static int load_syms_from(struct ms_symbolizer *s, uint32_t id, struct smodule *mod,
			  bool use_cache)
{
	struct ms_symcache_key key;
	char *path;
	int r;

	if (!mod->syms_pending)
		return 0;
	mod->syms_pending = false;
	if (!(path = syms_cache(mod, &key)))
		return read_syms(s, id, mod);
	if (use_cache && ms_symcache_load(&mod->syms, path, &key) == 0) {
		free(path);
		return 0;
	}
	r = read_syms(s, id, mod);
	if (r == 0 && ms_symtab_count(&mod->syms))
		ms_symcache_store(&mod->syms, path, &key);
	free(path);
	return r;
}

static int load_syms(struct ms_symbolizer *s, uint32_t id, struct smodule *mod)
{
	return load_syms_from(s, id, mod, true);
}

/*
 * The symbol that covers addr in a loaded module, or NULL. A cached table
 * that proves corrupt where the lookup met it is dropped for the ELF
 * files' own tables (and the cache rewritten).
 */
static const struct ms_sym *module_sym(struct ms_symbolizer *s, uint32_t id, struct smodule *mod,
				       uint64_t addr)
{
	const struct ms_sym *sym;
	bool bad;

	load_syms(s, id, mod);
	sym = ms_symtab_lookup_checked(&mod->syms, addr, &bad);
	if (!bad)
		return sym;
	mod->old_syms = ms_symtab_detach(&mod->syms, &mod->old_syms_len);
	mod->syms_pending = true;
	load_syms_from(s, id, mod, false);
	return ms_symtab_lookup(&mod->syms, addr);
}

/* Open the module's file, prove it, find its debug file, read its symbols: once. */
static void load_module(struct ms_symbolizer *s, uint32_t id, struct smodule *mod)
{
	uint32_t r;
	bool have_file, have_debug;

	mod->tried = true;
	mod->file.fd = mod->debug.fd = mod->inflated.fd = -1;
	r = (uint32_t)ms_elf_file_open_module(&mod->file, mod->path, &mod->rec);
	have_file = r == MS_SYM_OK;
	if (have_file)
		drop_fd(&mod->file);
	/*
	 * A file that is gone or not the one that ran can still be symbolized
	 * from a debug file that the module's own build id proves.
	 */
	if (have_file || mod->rec.build_id_len)
		load_debug(s, id, mod, have_file);
	have_debug = mod->debug.elf != NULL;
	if (!have_file && !have_debug) {
		mod->reason = r;
		ms_problems_add(&s->problems,
				r == MS_SYM_IDENTITY ? "module-identity" :
				r == MS_SYM_BAD_ELF ? "module-bad-elf" : "module-no-file",
				"module %u '%s' %s; its frames are not named", id, mod->path,
				reason_text(r));
		return;
	}
	/*
	 * Symbols: with DWARF they only name what it does not (libc6-dbg's
	 * 10,000 symbols are a third of loading libc), so they are read on
	 * first need; without, now, since a corrupt table leaves nothing.
	 */
	mod->syms_pending = true;
	if (!mod->dwarf && load_syms(s, id, mod) < 0) {
		mod->reason = MS_SYM_BAD_ELF;
		return;
	}
	mod->has_loads = ms_elf_loads_read(have_file ? mod->file.elf : mod->debug.elf,
					   &mod->loads) == 0;
	/*
	 * Function starts: the file's .eh_frame, else the debug file's when it
	 * holds one (a copy of the binary standing in for a file that is
	 * gone; a debug-only file's is NOBITS and gives none).
	 */
	ms_ehframe_elf(&mod->eh, have_file ? mod->file.elf : mod->debug.elf);
	mod->reason = MS_SYM_OK;
	s->stats.modules_loaded++;
}

/* ---- the kernel ---- */

/*
 * Map the kallsyms cache (kcache.h) into s->ksyms when it holds the
 * running kernel's: 0, or -1 (then s->kcache says where to write one).
 * Tried once.
 */
static int map_kcache(struct ms_symbolizer *s)
{
	if (s->kcache_tried)
		return -1;
	s->kcache_tried = true;
	/* Only the running kernel's own kallsyms is cached. */
	if (strcmp(s->kallsyms_path, "/proc/kallsyms"))
		return -1;
	if (!(s->kcache = ms_kcache_path()))
		return -1;
	if (ms_kcache_key(&s->kcache_key, s->kernel_notes, NULL, NULL) < 0) {
		free(s->kcache);
		s->kcache = NULL;
		return -1;
	}
	return ms_kcache_load(&s->ksyms, s->kcache, &s->kcache_key);
}

/*
 * Read kallsyms itself into s->ksyms, and the cache when there is one to
 * write: 0, or -1 when it is unusable. Touches nothing else (a thread runs it).
 */
static int read_kallsyms(struct ms_symbolizer *s)
{
	FILE *f;
	int r = -1;

	if ((f = fopen(s->kallsyms_path, "re"))) {
		/* Large reads: each read of /proc/kallsyms costs a walk in the kernel. */
		setvbuf(f, NULL, _IOFBF, 1 << 20);
		r = ms_symtab_load_kallsyms(&s->ksyms, f);
		fclose(f);
	}
	if (r == 0 && s->kcache)
		ms_kcache_store(&s->ksyms, s->kcache, &s->kcache_key);
	return r;
}

static void *kallsyms_thread(void *arg)
{
	struct ms_symbolizer *s = arg;

	s->kallsyms_result = read_kallsyms(s);
	return NULL;
}

int ms_symbolizer_preload_kernel(struct ms_symbolizer *s)
{
	if (s->kallsyms_state || s->kallsyms_thread)
		return 0;
	/* The cache maps in less time than a thread takes to start. */
	if (map_kcache(s) == 0) {
		s->kallsyms_state = 1;
		return 0;
	}
	if (pthread_create(&s->kallsyms_tid, NULL, kallsyms_thread, s) != 0)
		return 0;	/* read later, in line */
	s->kallsyms_thread = true;
	return 0;
}

bool ms_symbolizer_kernel_loading(const struct ms_symbolizer *s)
{
	return s->kallsyms_thread || s->kallsyms_state;
}

static void kallsyms_unusable(struct ms_symbolizer *s)
{
	s->kallsyms_state = -1;
	ms_symtab_release(&s->ksyms);
	ms_problems_add(&s->problems, "kallsyms-unreadable",
			"'%s' is unreadable or its addresses are hidden "
			"(kernel.kptr_restrict): kernel frames are not named",
			s->kallsyms_path);
}

static void load_kallsyms(struct ms_symbolizer *s)
{
	int r;

	if (s->kallsyms_thread) {
		pthread_join(s->kallsyms_tid, NULL);
		s->kallsyms_thread = false;
		r = s->kallsyms_result;
	} else {
		r = map_kcache(s) == 0 ? 0 : read_kallsyms(s);
	}
	s->kallsyms_state = 1;
	if (r < 0)
		kallsyms_unusable(s);
}

/*
 * The kernel symbol that covers addr. A cache that proves corrupt where
 * the lookup met it is dropped for kallsyms itself (and rewritten).
 */
static const struct ms_sym *kernel_sym(struct ms_symbolizer *s, uint64_t addr)
{
	const struct ms_sym *sym;
	bool bad;

	sym = ms_symtab_lookup_checked(&s->ksyms, addr, &bad);
	if (!bad)
		return sym;
	/* Facts borrow names from the mapping: kept until the end (it is dropped once). */
	s->old_kcache = ms_symtab_detach(&s->ksyms, &s->old_kcache_len);
	if (read_kallsyms(s) == 0)
		return ms_symtab_lookup(&s->ksyms, addr);
	kallsyms_unusable(s);
	return NULL;
}

/*
 * Whether the running kernel is the module that ran: when the module
 * carries a build id (ms-unwind reads it from the kernel's notes), the
 * running kernel's must equal it. Without one nothing can be checked.
 */
static uint32_t kernel_identity(struct ms_symbolizer *s, struct smodule *mod)
{
	uint8_t bid[MS_BUILD_ID_MAX];
	uint32_t len;
	char want[2 * MS_BUILD_ID_MAX + 1], have[2 * MS_BUILD_ID_MAX + 1];

	if (mod->tried)
		return mod->reason;
	mod->tried = true;
	mod->file.fd = mod->debug.fd = mod->inflated.fd = -1;
	mod->reason = MS_SYM_OK;
	if (!mod->rec.build_id_len)
		return MS_SYM_OK;
	len = ms_kernel_build_id(s->kernel_notes, bid);
	if (len == mod->rec.build_id_len && !memcmp(bid, mod->rec.build_id, len))
		return MS_SYM_OK;
	mod->reason = MS_SYM_IDENTITY;
	build_id_text(mod->rec.build_id, mod->rec.build_id_len, want, sizeof(want));
	build_id_text(bid, len, have, sizeof(have));
	ms_problems_add(&s->problems, "kernel-identity",
			"the kernel that ran has build id %s, the running kernel ('%s') %s: "
			"kernel frames are not named", want, s->kernel_notes,
			len ? have : "none readable");
	return mod->reason;
}

/* ---- one address ---- */

/* A symbol's name for people: demangled once, kept in the pool. */
static const char *display_name(struct ms_symbolizer *s, struct ms_symtab *t,
				const struct ms_sym *sym)
{
	const char *raw = ms_symtab_name(t, sym);
	char *dem;
	const char *out;

	if (!ms_is_mangled(raw))
		return raw;
	if (!t->map && sym->display)
		return sym->display;
	if (!(dem = ms_demangle(raw)))
		out = raw;
	else if (!(out = ms_strpool_add(&s->pool, dem, strlen(dem))))
		out = raw;
	free(dem);
	/* A mapped table is read-only: its names are demangled at each new frame. */
	if (!t->map)
		((struct ms_sym *)sym)->display = out;
	return out;
}

/*
 * The text of one FRAME record must fit in a record (MS_RECORD_MAX) with
 * room to spare: template-heavy C++ names run to kilobytes, and a chain
 * has up to MS_FRAME_LINES_MAX entries of three strings. Past this budget
 * every string of the record is cut to an equal share.
 */
#define FRAME_TEXT_BUDGET (96u * 1024u)

static struct ms_str mstr(const char *p, size_t cap)
{
	size_t len = p ? strlen(p) : 0;

	return (struct ms_str){ p ? p : "", (uint32_t)(len < cap ? len : cap) };
}

/* Copy the lookup's chain into the pool as the fact's lines; *cap gets the cut. */
static int keep_lines(struct ms_symbolizer *s, struct fact *out, uint32_t n, size_t *cap)
{
	struct ms_frame_line *l = ms_strpool_alloc(&s->pool, n * sizeof(*l));
	size_t total = 0;
	uint32_t i;

	if (!l)
		return ms_error("out of memory");
	for (i = 0; i < n; i++) {
		const struct ms_srcline *c = &s->chain[i];

		total += (c->function ? strlen(c->function) : 0) + strlen(c->system_name) +
			 strlen(c->file);
	}
	*cap = total > FRAME_TEXT_BUDGET ? FRAME_TEXT_BUDGET / (3 * n + 1) : SIZE_MAX;
	for (i = 0; i < n; i++) {
		const struct ms_srcline *c = &s->chain[i];

		l[i].function = mstr(c->function, *cap);
		l[i].system_name = mstr(c->system_name, *cap);
		l[i].file = mstr(c->file, *cap);
		l[i].line = c->line;
		l[i].function_line = c->function_line;
	}
	out->lines = l;
	out->n_lines = n;
	return 0;
}

/* A name alone (no lines), within the same bound. */
static uint32_t name_len(const char *name)
{
	size_t len = strlen(name);

	return (uint32_t)(len < FRAME_TEXT_BUDGET ? len : FRAME_TEXT_BUDGET);
}

/*
 * No name from DWARF or symbols: the start of the .eh_frame FDE that
 * covers addr, if any (ehframe.h): the function's, so that all its
 * addresses are one function.
 */
static void fde_start(struct smodule *mod, uint64_t addr, struct fact *out)
{
	uint64_t start;

	out->reason = MS_SYM_NO_SYMBOL;
	if (ms_ehframe_start(&mod->eh, addr, &start)) {
		out->reason = MS_SYM_FDE_ONLY;
		out->symbol_start = start;
	}
}

/*
 * A vdso frame: named from the image ms-collect recorded, once its build id
 * is proved the module's (the vdso has no debug information to give lines).
 */
static int look_up_vdso(struct ms_symbolizer *s, const struct ms_stack_frame *f,
			uint32_t id, struct smodule *mod, struct fact *out)
{
	const struct ms_sym *sym;
	uint64_t addr = f->address;

	if (!mod->tried) {
		mod->tried = true;
		mod->file.fd = mod->debug.fd = mod->inflated.fd = -1;
		mod->reason = MS_SYM_NO_FILE;
		if (!s->vdso) {
			ms_problems_add(&s->problems, "vdso-no-image", "module %u '%s': the "
					"stream holds no vdso image (recorded before ms-collect "
					"kept it, or symbolized from a capture): its frames are "
					"not named", id, mod->path);
		} else if (ms_elf_memory_open(&mod->file, s->vdso, s->vdso_len) != MS_SYM_OK) {
			mod->reason = MS_SYM_BAD_ELF;
			ms_problems_add(&s->problems, "module-bad-elf", "module %u '%s': the "
					"vdso image is not an ELF file", id, mod->path);
		} else if (!mod->rec.build_id_len || mod->file.build_id_len != mod->rec.build_id_len ||
			   memcmp(mod->file.build_id, mod->rec.build_id, mod->rec.build_id_len)) {
			mod->reason = MS_SYM_IDENTITY;
			ms_problems_add(&s->problems, "module-identity", "module %u '%s': the vdso "
					"image's build id is not the module's: its frames are not "
					"named", id, mod->path);
		} else {
			mod->syms_pending = true;
			mod->reason = load_syms(s, id, mod) < 0 ? MS_SYM_BAD_ELF : MS_SYM_OK;
			if (mod->reason == MS_SYM_OK) {
				/* its static functions are in .eh_frame, not .dynsym */
				ms_ehframe_elf(&mod->eh, mod->file.elf);
				s->stats.modules_loaded++;
			}
		}
	}
	if (mod->reason != MS_SYM_OK) {
		out->reason = mod->reason;
		return 0;
	}
	if ((f->flags & MS_FRAME_RETURN) && addr)
		addr--;
	sym = module_sym(s, id, mod, addr);
	if (!sym) {
		fde_start(mod, addr, out);
		return 0;
	}
	out->reason = MS_SYM_OK;
	out->name = display_name(s, &mod->syms, sym);
	out->name_len = name_len(out->name);
	out->symbol_start = sym->start;
	return 0;
}

static int look_up_file(struct ms_symbolizer *s, const struct ms_stack_frame *f,
			struct smodule *mod, struct fact *out)
{
	const struct ms_sym *sym;
	uint64_t addr = f->address, start = 0;
	uint32_t n = 0, r;
	size_t cap = SIZE_MAX;

	if (!mod->tried)
		load_module(s, f->module, mod);
	if (mod->reason != MS_SYM_OK) {
		out->reason = mod->reason;
		return 0;
	}
	if ((f->flags & MS_FRAME_FILE_OFFSET) &&
	    (!mod->has_loads || !ms_elf_loads_vaddr(&mod->loads, addr, &addr))) {
		out->reason = MS_SYM_NO_SYMBOL;
		return 0;
	}
	/* A return address points after the call: look at the call itself. */
	if ((f->flags & MS_FRAME_RETURN) && addr)
		addr--;
	r = mod->debug_reason;
	if (mod->dwarf) {
		r = (uint32_t)ms_dwarfidx_lookup(mod->dwarf, addr, s->chain, MS_FRAME_LINES_MAX,
						 &n, &start);
		/* Its copy damaged: the same lookup in an index that reads sound bytes. */
		while (r == MS_SYM_BAD_DWARF && ms_dwarfidx_refused(mod->dwarf) &&
		       replace_refused(mod))
			r = (uint32_t)ms_dwarfidx_lookup(mod->dwarf, addr, s->chain,
							 MS_FRAME_LINES_MAX, &n, &start);
		if (r == MS_SYM_BAD_DWARF)
			tell_bad_dwarf(s, f->module, mod);
	}
	if (r == MS_SYM_OK && n) {
		struct ms_srcline *outer = &s->chain[n - 1];

		/* The symbol is needed only where DWARF names no function or start. */
		sym = !outer->function || !start ? module_sym(s, f->module, mod, addr) : NULL;
		/* Assembly, or a function DWARF leaves unnamed: the symbol names it. */
		if (!outer->function && sym) {
			outer->function = display_name(s, &mod->syms, sym);
			outer->system_name = strcmp(outer->function, ms_symtab_name(&mod->syms, sym)) ?
					     ms_symtab_name(&mod->syms, sym) : "";
		}
		if (!start && sym)
			start = sym->start;
		if (keep_lines(s, out, n, &cap) < 0)
			return -1;
		if (outer->function && *outer->function) {
			out->name = outer->function;
			out->name_len = mstr(outer->function, cap).len;
			out->symbol_start = start;
			out->reason = MS_SYM_OK;
			return 0;
		}
		/* Lines, but nothing names the function. */
		fde_start(mod, addr, out);
		return 0;
	}
	if ((sym = module_sym(s, f->module, mod, addr))) {
		out->name = display_name(s, &mod->syms, sym);
		out->name_len = name_len(out->name);
		out->symbol_start = sym->start;
		out->reason = r == MS_SYM_OK ? MS_SYM_NOT_IN_DEBUG : r;
		return 0;
	}
	fde_start(mod, addr, out);
	return 0;
}

/* Fill fact (module, address already set) for frame f. */
static int look_up(struct ms_symbolizer *s, const struct ms_stack_frame *f, struct fact *out)
{
	struct smodule *mod = f->module < s->n_mods && s->mods[f->module].defined ?
			      &s->mods[f->module] : NULL;
	const struct ms_sym *sym;
	uint64_t addr = f->address;

	out->name = NULL;
	out->name_len = 0;
	out->symbol_start = 0;
	out->lines = NULL;
	out->n_lines = 0;
	if (!mod) {
		out->reason = MS_SYM_NO_MODULE;
		ms_problems_add(&s->problems, "undefined-module",
				"a frame names module %u, which no module record described",
				f->module);
		return 0;
	}
	switch (mod->rec.kind) {
	case MS_MODULE_UNKNOWN:
		out->reason = MS_SYM_NO_MODULE;
		return 0;
	case MS_MODULE_FILE:
		return look_up_file(s, f, mod, out);
	case MS_MODULE_VDSO:
		return look_up_vdso(s, f, f->module, mod, out);
	case MS_MODULE_KERNEL:
		break;
	case MS_MODULE_PERF_MAP:
	case MS_MODULE_JIT_OBJECT:
	case MS_MODULE_INTERPRETED:
		/*
		 * A JIT function's frame, a registered JIT object's, or an
		 * interpreted (Python) frame: ms-unwind named it when it was
		 * recorded (a FRAME record, known already). No file proves what
		 * code a perf map, an object in the process's memory or a
		 * Python code object described, so none is read: an address it
		 * did not name has no symbol.
		 */
		out->reason = MS_SYM_NO_SYMBOL;
		return 0;
	default:
		/* anonymous memory: no file to read. */
		out->reason = MS_SYM_NO_FILE;
		return 0;
	}
	if (kernel_identity(s, mod) != MS_SYM_OK) {
		out->reason = mod->reason;
		return 0;
	}
	if (!s->kallsyms_state)
		load_kallsyms(s);
	if (s->kallsyms_state < 0) {
		out->reason = MS_SYM_NO_FILE;
		return 0;
	}
	if ((f->flags & MS_FRAME_RETURN) && addr)
		addr--;
	sym = kernel_sym(s, addr);
	if (!sym) {
		out->reason = s->kallsyms_state < 0 ? MS_SYM_NO_FILE : MS_SYM_NO_SYMBOL;
		return 0;
	}
	out->reason = MS_SYM_OK;
	out->name = display_name(s, &s->ksyms, sym);
	out->name_len = name_len(out->name);
	out->symbol_start = sym->start;
	return 0;
}

/* ---- the table of facts ---- */

static uint32_t fact_hash(uint32_t module, uint64_t address)
{
	uint64_t h = (address ^ ((uint64_t)module << 48) ^ module) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

/* The slot of (module, address): its fact, or the empty slot it would take. */
static struct fact *fact_slot(struct ms_symbolizer *s, uint32_t module, uint64_t address)
{
	uint32_t pos = fact_hash(module, address) & s->mask;

	while (s->facts[pos].used &&
	       (s->facts[pos].module != module || s->facts[pos].address != address))
		pos = (pos + 1) & s->mask;
	return &s->facts[pos];
}

/* Keep the table at most half full; done before an insert. */
static int facts_reserve(struct ms_symbolizer *s)
{
	struct fact *old = s->facts;
	uint32_t old_size = s->mask + 1, i;

	if ((s->n_facts + 1) * 2 <= old_size)
		return 0;
	s->facts = calloc((size_t)old_size * 2, sizeof(*s->facts));
	if (!s->facts) {
		s->facts = old;
		return ms_error("out of memory for %u frames", old_size);
	}
	s->mask = old_size * 2 - 1;
	for (i = 0; i < old_size; i++)
		if (old[i].used)
			*fact_slot(s, old[i].module, old[i].address) = old[i];
	free(old);
	return 0;
}

static void fact_to_frame(const struct fact *fa, struct ms_frame *out)
{
	out->module = fa->module;
	out->address = fa->address;
	out->name.ptr = fa->name ? fa->name : "";
	out->name.len = fa->name_len;
	out->symbol_start = fa->symbol_start;
	out->reason = fa->reason;
	out->n_lines = fa->n_lines;
	if (fa->n_lines)
		memcpy(out->lines, fa->lines, fa->n_lines * sizeof(*fa->lines));
}

int ms_symbolizer_frame(struct ms_symbolizer *s, const struct ms_stack_frame *f,
			struct ms_frame *out, bool *is_new)
{
	struct fact *fa = fact_slot(s, f->module, f->address);

	s->stats.frames++;
	if (fa->used) {
		*is_new = false;
		fact_to_frame(fa, out);
		return 0;
	}
	if (facts_reserve(s) < 0)
		return -1;
	fa = fact_slot(s, f->module, f->address);
	fa->module = f->module;
	fa->address = f->address;
	if (look_up(s, f, fa) < 0)
		return -1;
	fa->used = true;
	fa->owned = false;
	s->n_facts++;
	s->stats.unique++;
	if (fa->reason < MS_SYM_REASONS)
		s->stats.reasons[fa->reason]++;
	*is_new = true;
	fact_to_frame(fa, out);
	return 0;
}

/* ms_symbolizer_frame_if_new() past its first test, out of line so that test costs no spills. */
static __attribute__((noinline)) int frame_if_new(struct ms_symbolizer *s,
						  const struct ms_stack_frame *f,
						  struct ms_frame *out)
{
	bool is_new = false;

	if (fact_slot(s, f->module, f->address)->used)
		s->stats.frames++;
	else if (ms_symbolizer_frame(s, f, out, &is_new) < 0)
		return -1;
	/* Facts are never removed: the pair stays known. */
	s->have_last = true;
	s->last_module = f->module;
	s->last_address = f->address;
	return is_new;
}

int ms_symbolizer_frame_if_new(struct ms_symbolizer *s, const struct ms_stack_frame *f,
			       struct ms_frame *out)
{
	/* Recursion repeats a frame: the previous pair asked about costs a compare. */
	if (s->have_last && f->address == s->last_address && f->module == s->last_module) {
		s->stats.frames++;
		return 0;
	}
	return frame_if_new(s, f, out);
}

int ms_symbolizer_known(struct ms_symbolizer *s, const struct ms_frame *f)
{
	struct fact *fa = fact_slot(s, f->module, f->address);
	char *name = NULL;

	if (fa->used)
		return 0;
	if (f->name.len) {
		if (!(name = malloc((size_t)f->name.len + 1)))
			return ms_error("out of memory");
		memcpy(name, f->name.ptr, f->name.len);
		name[f->name.len] = '\0';
	}
	if (facts_reserve(s) < 0) {
		free(name);
		return -1;
	}
	fa = fact_slot(s, f->module, f->address);
	*fa = (struct fact){
		.address = f->address, .module = f->module, .reason = f->reason,
		.symbol_start = f->symbol_start, .name = name, .name_len = f->name.len,
		.used = true, .owned = true,
	};
	s->n_facts++;
	return 0;
}

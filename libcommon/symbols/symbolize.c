#include "symbols/symbolize.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab.h"
#include "unwind/elffile.h"
#include "util/error.h"

#define NONE UINT32_MAX
/* Module ids are dense; a larger one is not from ms-unwind. */
#define MODULE_ID_MAX (1u << 24)
#define MODULE_ID_SLACK 4096u

struct smodule {
	bool defined;
	bool tried;		/* the file was opened (or failed to) */
	uint32_t reason;	/* MS_SYM_OK once symbols are loaded */
	struct ms_module rec;	/* rec.path borrows path */
	char *path;
	struct ms_symtab syms;
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
	bool used;
	bool owned;		/* name was copied from an upstream record */
};

struct ms_symbolizer {
	struct smodule *mods;
	uint32_t n_mods;

	const char *kallsyms_path;
	int kallsyms_state;	/* 0 not read, 1 read, -1 unusable */
	struct ms_symtab ksyms;
	bool kallsyms_thread;	/* a reader thread runs: join before use */
	pthread_t kallsyms_tid;
	int kallsyms_result;	/* the thread's, valid after the join */

	struct fact *facts;
	uint32_t mask;		/* slots - 1 */
	uint32_t n_facts;

	struct ms_symbolize_stats stats;
	struct ms_problems problems;

	const char *in_name;	/* where the current record came from, for messages */
	uint64_t in_offset;
};

void ms_symbolizer_set_origin(struct ms_symbolizer *s, const char *name, uint64_t offset)
{
	s->in_name = name;
	s->in_offset = offset;
}

struct ms_symbolizer *ms_symbolizer_new(const struct ms_symbolize_options *opts)
{
	struct ms_symbolizer *s = calloc(1, sizeof(*s));

	if (!s || ms_elf_setup() < 0) {
		free(s);
		ms_error("out of memory");
		return NULL;
	}
	s->kallsyms_path = opts && opts->kallsyms ? opts->kallsyms : "/proc/kallsyms";
	s->in_name = "input";
	ms_symtab_init(&s->ksyms);
	ms_problems_init(&s->problems, "ms-symbolize");
	s->mask = 1023;
	s->facts = calloc(s->mask + 1, sizeof(*s->facts));
	if (!s->facts) {
		ms_error("out of memory");
		free(s);
		return NULL;
	}
	return s;
}

void ms_symbolizer_free(struct ms_symbolizer *s)
{
	uint32_t i;

	if (!s)
		return;
	if (s->kallsyms_thread)
		pthread_join(s->kallsyms_tid, NULL);
	for (i = 0; i < s->n_mods; i++) {
		free(s->mods[i].path);
		ms_symtab_release(&s->mods[i].syms);
		ms_elf_loads_release(&s->mods[i].loads);
	}
	free(s->mods);
	ms_symtab_release(&s->ksyms);
	for (i = 0; i <= s->mask; i++)
		if (s->facts[i].used && s->facts[i].owned)
			free((char *)s->facts[i].name);
	free(s->facts);
	free(s);
}

const struct ms_symbolize_stats *ms_symbolizer_stats(const struct ms_symbolizer *s)
{
	return &s->stats;
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
	return 0;
}

const char *ms_symbolizer_module_path(const struct ms_symbolizer *s, uint32_t id)
{
	return id < s->n_mods && s->mods[id].defined ? s->mods[id].path : NULL;
}

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

/* Open the module's file, prove it, and read its symbols: once. */
static void load_module(struct ms_symbolizer *s, uint32_t id, struct smodule *mod)
{
	struct ms_elf_file f;
	uint32_t r;

	mod->tried = true;
	r = (uint32_t)ms_elf_file_open_module(&f, mod->path, &mod->rec);
	if (r == MS_SYM_OK) {
		if (ms_symtab_load_elf(&mod->syms, f.elf) < 0) {
			ms_symtab_release(&mod->syms);
			r = MS_SYM_BAD_ELF;
		} else {
			mod->has_loads = ms_elf_loads_read(f.elf, &mod->loads) == 0;
			s->stats.modules_loaded++;
		}
		ms_elf_file_close(&f);
	}
	mod->reason = r;
	if (r != MS_SYM_OK)
		ms_problems_add(&s->problems,
				r == MS_SYM_IDENTITY ? "module-identity" :
				r == MS_SYM_BAD_ELF ? "module-bad-elf" : "module-no-file",
				"module %u '%s' %s; its frames are not named", id, mod->path,
				reason_text(r));
}

/* Read kallsyms into s->ksyms: 0, or -1 when it is unusable. Touches nothing else. */
static int read_kallsyms(struct ms_symbolizer *s)
{
	FILE *f = fopen(s->kallsyms_path, "re");
	int r = -1;

	if (f) {
		/* Large reads: each read of /proc/kallsyms costs a walk in the kernel. */
		setvbuf(f, NULL, _IOFBF, 1 << 20);
		r = ms_symtab_load_kallsyms(&s->ksyms, f);
		fclose(f);
	}
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
	if (pthread_create(&s->kallsyms_tid, NULL, kallsyms_thread, s) != 0)
		return 0;	/* read later, in line */
	s->kallsyms_thread = true;
	return 0;
}

static void load_kallsyms(struct ms_symbolizer *s)
{
	int r;

	if (s->kallsyms_thread) {
		pthread_join(s->kallsyms_tid, NULL);
		s->kallsyms_thread = false;
		r = s->kallsyms_result;
	} else {
		r = read_kallsyms(s);
	}
	s->kallsyms_state = r == 0 ? 1 : -1;
	if (s->kallsyms_state < 0) {
		ms_symtab_release(&s->ksyms);
		ms_problems_add(&s->problems, "kallsyms-unreadable",
				"'%s' is unreadable or its addresses are hidden "
				"(kernel.kptr_restrict): kernel frames are not named",
				s->kallsyms_path);
	}
}

/* Fill fact (module, address already set) for frame f. */
static void look_up(struct ms_symbolizer *s, const struct ms_stack_frame *f, struct fact *out)
{
	const struct ms_symtab *tab = NULL;
	struct smodule *mod = f->module < s->n_mods && s->mods[f->module].defined ?
			      &s->mods[f->module] : NULL;
	const struct ms_sym *sym;
	uint64_t addr = f->address;

	out->name = NULL;
	out->name_len = 0;
	out->symbol_start = 0;
	if (!mod) {
		out->reason = MS_SYM_NO_MODULE;
		ms_problems_add(&s->problems, "undefined-module",
				"a frame names module %u, which no module record described",
				f->module);
		return;
	}
	switch (mod->rec.kind) {
	case MS_MODULE_UNKNOWN:
		out->reason = MS_SYM_NO_MODULE;
		return;
	case MS_MODULE_KERNEL:
		if (!s->kallsyms_state)
			load_kallsyms(s);
		if (s->kallsyms_state < 0) {
			out->reason = MS_SYM_NO_FILE;
			return;
		}
		tab = &s->ksyms;
		break;
	case MS_MODULE_FILE:
		if (!mod->tried)
			load_module(s, f->module, mod);
		if (mod->reason != MS_SYM_OK) {
			out->reason = mod->reason;
			return;
		}
		if ((f->flags & MS_FRAME_FILE_OFFSET) &&
		    (!mod->has_loads || !ms_elf_loads_vaddr(&mod->loads, addr, &addr))) {
			out->reason = MS_SYM_NO_SYMBOL;
			return;
		}
		tab = &mod->syms;
		break;
	default:
		/* vdso and anonymous memory: no file to read yet. */
		out->reason = MS_SYM_NO_FILE;
		return;
	}
	/* A return address points after the call: look at the call itself. */
	if ((f->flags & MS_FRAME_RETURN) && addr)
		addr--;
	sym = ms_symtab_lookup(tab, addr);
	if (!sym) {
		out->reason = MS_SYM_NO_SYMBOL;
		return;
	}
	out->reason = MS_SYM_OK;
	out->name = ms_symtab_name(tab, sym);
	out->name_len = (uint32_t)strlen(out->name);
	out->symbol_start = sym->start;
}

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
	fa->used = true;
	fa->owned = false;
	fa->module = f->module;
	fa->address = f->address;
	look_up(s, f, fa);
	s->n_facts++;
	s->stats.unique++;
	if (fa->reason <= MS_SYM_NO_MODULE)
		s->stats.reasons[fa->reason]++;
	*is_new = true;
	fact_to_frame(fa, out);
	return 0;
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

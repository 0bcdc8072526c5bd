#include "unwind/unwind.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "elf/debugfind.h"
#include "elf/elffile.h"
#include "perf/kernel.h"
#include "unwind/interp.h"
#include "unwind/jit.h"
#include "unwind/jitobj.h"
#include "unwind/jitobjtab.h"
#include "util/error.h"
#include "util/grow.h"

#define NONE UINT32_MAX
#define TAGGED_BITS 11
#define TAGGED_SIZE (1u << TAGGED_BITS)
_Static_assert(MS_FRAMES_MAX <= UINT16_MAX, "user frames fit a tagged stack's count");

/*
 * A file entry: what a mapping record names (kind, path, device, inode,
 * record build id). Mappings point to entries; an entry is probed on first
 * use and then points to its module. Several entries can resolve to one
 * module: a synthesized record (device, inode) and a kernel one (build id)
 * for the same file.
 */
struct fentry {
	uint64_t hash;
	uint32_t kind;
	char *path;
	uint32_t path_len;	/* may hold NULs (then kind is anon) */
	uint32_t maj, min;
	uint64_t ino;
	uint32_t bid_len;
	uint8_t bid[MS_BUILD_ID_MAX];
	uint32_t module;	/* NONE until probed */
};

struct module {
	uint64_t hash;
	struct ms_module rec;	/* rec.path borrows path */
	/*
	 * A perf-map module's naming epoch (unwind/jit.h), a jit-object
	 * module's object serial: part of its identity; else 0.
	 */
	uint64_t epoch;
	/* A jit-object module's object: kept (a reference) for the unwinder's life. */
	struct ms_jitobj *jitobj;
	char *path;
	/* The file its build id proved when the file at path is not the module; NULL: path's. */
	char *found;
	uint32_t stream_id;	/* NONE until a stack uses it */
	bool has_loads;
	struct ms_elf_loads loads;
	void *method_data;	/* the unwind method's (CFI); see module_free */
	/* A Python interpreter's module (unwind/interp.h): its loop; n 0 for any other. */
	struct ms_interp interp;
};

/* index_add() reads an entry's hash at its start. */
_Static_assert(offsetof(struct fentry, hash) == 0, "fentry hash first");
_Static_assert(offsetof(struct module, hash) == 0, "module hash first");

struct ms_process {
	uint32_t pid;
	struct ms_process *next;	/* hash chain */
	struct ms_addrspace as;
	uint32_t *tids;
	uint32_t n_tids, alloc_tids;
	/* Its JIT functions (NULL: none came), and the perf-map module used last. */
	struct ms_jit_table *jit;
	uint64_t jit_mod_start, jit_mod_end, jit_mod_epoch;
	uint32_t jit_mod;	/* NONE: none */
	/* Its JIT objects (NULL: none came), and the earliest time one of them ends. */
	struct ms_jitobj_table *objs;
	uint64_t objs_end;	/* UINT64_MAX: none ends */
};

/* A (module, address) whose FRAME record ms-unwind wrote or will write. */
struct named_pair {
	uint64_t address;
	uint32_t module;	/* stream id + 1; 0: empty slot */
};

/* A FRAME record to write after the last sample's modules. */
struct pending_frame {
	uint32_t module;	/* stream id */
	uint64_t address;
	const char *name;	/* the process's JIT table's: valid until it changes */
	uint64_t start;
	bool named;
};

/* Open addressing over indices into an array; the entries keep their hash. */
struct index {
	uint32_t *slots;
	uint32_t mask;		/* slots - 1; 0 when empty */
	uint32_t n;
};

struct ms_unwinder {
	const struct ms_unwind_method *method;
	void *method_state;
	struct ms_debugfind *finder;

	struct ms_process **buckets;
	uint32_t bucket_mask;
	uint32_t n_procs;
	struct ms_process *last_proc;

	struct fentry *fentries;
	uint32_t n_fentries, alloc_fentries;
	struct index fentry_index;

	struct module *modules;
	uint32_t n_modules, alloc_modules;
	struct index module_index;
	uint32_t next_stream_id;
	uint32_t kernel_module, unknown_module;
	/* The interpreted module ("[python]"): NONE until asked for; any interpreter module seen. */
	uint32_t interpreted_module;
	bool any_interp;

	uint32_t *by_stream;	/* stream id -> module index */
	uint32_t n_stream, alloc_stream;
	uint32_t *pending;	/* modules first used by the last sample */
	uint32_t n_pending, pending_pos, alloc_pending;

	/* JIT functions: their rules, the pairs named, and the last sample's new ones. */
	struct ms_jit_rules *jit_rules;
	struct named_pair *named;
	uint32_t named_mask, n_named;
	struct pending_frame *frames;
	uint32_t n_frames, frames_pos, alloc_frames;
	/* JIT objects' images being put together from their chunks. */
	struct ms_jitobj_asm *jitobj_asm;

	struct ms_user_stack ustack;	/* reused for every sample */
	/*
	 * Stacks tagged by their user walk's token (ms_unwinder_tag()), and
	 * what the last sample would tag: its token (0: none), user frames
	 * and reason.
	 */
	struct tagged {
		uint64_t token;		/* 0: empty */
		uint32_t tag;
		uint16_t user_frames, reason;
	} tagged[TAGGED_SIZE];
	uint64_t last_token;
	uint32_t last_user_frames, last_reason;
	bool any_tagged;
	struct ms_unwind_stats stats;
	struct ms_problems problems;

	/*
	 * The vdso image from the stream's VDSO record, kept only when it is
	 * an ELF image with a build id and readable program headers: then
	 * [vdso] mappings are a module known by that build id, whose CFI the
	 * method reads from the image.
	 */
	bool vdso_seen;
	uint8_t *vdso;
	uint32_t vdso_len;
	uint32_t vdso_bid_len;
	uint8_t vdso_bid[MS_BUILD_ID_MAX];
	struct ms_elf_loads vdso_loads;
};

/* FNV-1a, for the small identity keys. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return hash_bytes(h, &v, sizeof(v));
}

#define HASH_INIT 0xcbf29ce484222325ull

static int index_grow(struct index *ix)
{
	uint32_t size = ix->mask ? (ix->mask + 1) * 2 : 64;
	uint32_t *slots = malloc((size_t)size * sizeof(*slots));

	if (!slots)
		return ms_error("out of memory for an index of %u slots", size);
	memset(slots, 0xff, (size_t)size * sizeof(*slots));
	free(ix->slots);
	ix->slots = slots;
	ix->mask = size - 1;
	return 0;
}

static void index_put(struct index *ix, uint64_t hash, uint32_t value)
{
	uint32_t pos = (uint32_t)hash & ix->mask;

	while (ix->slots[pos] != NONE)
		pos = (pos + 1) & ix->mask;
	ix->slots[pos] = value;
	ix->n++;
}

/*
 * Put value i with hash h, growing first when half full. array holds the
 * entries indexed so far (each starts with its uint64_t hash) for the
 * rehash.
 */
static int index_add(struct index *ix, uint64_t h, uint32_t i, const void *array, size_t stride)
{
	if (!ix->mask || (ix->n + 1) * 2 > ix->mask + 1) {
		uint32_t j;

		if (index_grow(ix) < 0)
			return -1;
		ix->n = 0;
		for (j = 0; j < i; j++)
			index_put(ix, *(const uint64_t *)((const char *)array + j * stride), j);
	}
	index_put(ix, h, i);
	return 0;
}

/* ptr grown to hold need (util/grow.h), or NULL after a message. */
static void *grow_array(void *ptr, uint32_t *alloc, uint32_t need, size_t size)
{
	if (!ms_reserve(&ptr, alloc, need, size)) {
		ms_error("out of memory for %u entries", need);
		return NULL;
	}
	return ptr;
}

static char *dup_str(const struct ms_str *s)
{
	char *p = malloc((size_t)s->len + 1);

	if (!p) {
		ms_error("out of memory");
		return NULL;
	}
	memcpy(p, s->ptr, s->len);
	p[s->len] = '\0';
	return p;
}

/* Modules --------------------------------------------------------------- */

static uint64_t module_hash(const struct ms_module *m, const char *path, uint64_t epoch)
{
	uint64_t h = HASH_INIT;

	if (m->kind == MS_MODULE_PERF_MAP || m->kind == MS_MODULE_JIT_OBJECT) {
		h = hash_u64(h, m->base);
		h = hash_u64(h, epoch);
	}

	h = hash_u64(h, m->kind);
	h = hash_bytes(h, path, strlen(path));
	h = hash_bytes(h, m->build_id, m->build_id_len);
	h = hash_u64(h, m->dev_maj);
	h = hash_u64(h, m->dev_min);
	h = hash_u64(h, m->ino);
	h = hash_u64(h, m->size);
	return hash_u64(h, m->mtime);
}

static bool module_equal(const struct module *a, const struct ms_module *m, const char *path,
			 uint64_t epoch)
{
	const struct ms_module *r = &a->rec;

	return r->kind == m->kind && r->base == m->base && a->epoch == epoch &&
	       !strcmp(a->path, path) &&
	       r->build_id_len == m->build_id_len &&
	       !memcmp(r->build_id, m->build_id, m->build_id_len) &&
	       r->dev_maj == m->dev_maj && r->dev_min == m->dev_min && r->ino == m->ino &&
	       r->size == m->size && r->mtime == m->mtime;
}

/*
 * The module with this identity, made if new. loads, when not NULL, is
 * taken over by a new module (freed otherwise), and so is found (the file
 * its build id proved, malloc'd; NULL: none). Returns its index or NONE.
 */
static uint32_t module_get_epoch(struct ms_unwinder *u, const struct ms_module *m,
				 const char *path, struct ms_elf_loads *loads, char *found,
				 uint64_t epoch)
{
	uint64_t h = module_hash(m, path, epoch);
	struct module *mod;
	uint32_t pos, i;

	if (u->module_index.mask) {
		for (pos = (uint32_t)h & u->module_index.mask;
		     (i = u->module_index.slots[pos]) != NONE;
		     pos = (pos + 1) & u->module_index.mask) {
			if (u->modules[i].hash == h &&
			    module_equal(&u->modules[i], m, path, epoch)) {
				if (loads)
					ms_elf_loads_release(loads);
				free(found);
				return i;
			}
		}
	}
	if (!(u->modules = grow_array(u->modules, &u->alloc_modules, u->n_modules + 1,
				      sizeof(*u->modules)))) {
		free(found);
		return NONE;
	}
	mod = &u->modules[u->n_modules];
	memset(mod, 0, sizeof(*mod));
	mod->path = strdup(path);
	if (!mod->path) {
		free(found);
		ms_error("out of memory");
		return NONE;
	}
	mod->found = found;
	mod->hash = h;
	mod->epoch = epoch;
	mod->rec = *m;
	mod->rec.path.ptr = mod->path;
	mod->rec.path.len = (uint32_t)strlen(mod->path);
	mod->stream_id = NONE;
	if (loads) {
		mod->loads = *loads;
		mod->has_loads = true;
		memset(loads, 0, sizeof(*loads));
	}
	i = u->n_modules++;
	if (index_add(&u->module_index, h, i, u->modules, sizeof(*u->modules)) < 0)
		return NONE;
	return i;
}

static uint32_t module_get(struct ms_unwinder *u, const struct ms_module *m, const char *path,
			   struct ms_elf_loads *loads, char *found)
{
	return module_get_epoch(u, m, path, loads, found, 0);
}

static uint32_t special_module(struct ms_unwinder *u, uint32_t kind, const char *path)
{
	struct ms_module m = { .kind = kind };

	return module_get(u, &m, path, NULL, NULL);
}

/* Note that a stack uses module i: give it a stream id on first use. */
static int module_first_use(struct ms_unwinder *u, uint32_t i)
{
	struct module *mod = &u->modules[i];

	if (!(u->pending = grow_array(u->pending, &u->alloc_pending, u->n_pending + 1,
				      sizeof(*u->pending))) ||
	    !(u->by_stream = grow_array(u->by_stream, &u->alloc_stream, u->next_stream_id + 1,
					sizeof(*u->by_stream))))
		return -1;
	u->by_stream[u->next_stream_id] = i;
	u->n_stream = u->next_stream_id + 1;
	mod->stream_id = u->next_stream_id++;
	mod->rec.id = mod->stream_id;
	u->pending[u->n_pending++] = i;
	u->stats.modules++;
	return 0;
}

/* Once per frame: the check inline, the first use out of line. */
static inline int module_use(struct ms_unwinder *u, uint32_t i)
{
	if (__builtin_expect(u->modules[i].stream_id != NONE, 1))
		return 0;
	return module_first_use(u, i);
}

bool ms_unwinder_next_module(struct ms_unwinder *u, struct ms_module *out)
{
	if (u->pending_pos >= u->n_pending)
		return false;
	*out = u->modules[u->pending[u->pending_pos++]].rec;
	return true;
}

/* JIT frames ------------------------------------------------------------- */

static uint32_t pair_slot(const struct ms_unwinder *u, uint32_t id, uint64_t address)
{
	uint64_t h = (address ^ (uint64_t)id << 40) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & u->named_mask;
}

/* Whether (stream id, address) was named already (1); if not (0), it now is. -1 after a message. */
static int pair_add(struct ms_unwinder *u, uint32_t id, uint64_t address)
{
	struct named_pair *p;
	uint32_t pos;

	if (!u->named || (u->n_named + 1) * 2 > u->named_mask + 1) {
		uint32_t old_size = u->named ? u->named_mask + 1 : 0, size = old_size ? old_size * 2 : 256;
		struct named_pair *old = u->named, *n = calloc(size, sizeof(*n));

		if (!n)
			return ms_error("out of memory for %u named JIT frames", size);
		u->named = n;
		u->named_mask = size - 1;
		for (uint32_t i = 0; i < old_size; i++) {
			if (!old[i].module)
				continue;
			for (pos = pair_slot(u, old[i].module - 1, old[i].address); n[pos].module;
			     pos = (pos + 1) & u->named_mask)
				;
			n[pos] = old[i];
		}
		free(old);
	}
	for (pos = pair_slot(u, id, address); (p = &u->named[pos])->module;
	     pos = (pos + 1) & u->named_mask)
		if (p->module == id + 1 && p->address == address)
			return 1;
	*p = (struct named_pair){ .address = address, .module = id + 1 };
	u->n_named++;
	return 0;
}

/*
 * The pending FRAME record of (module id, address) when the pair is new:
 * 1 and *pf (unnamed yet), 0 when it was seen before, -1 after a message.
 */
static int pending(struct ms_unwinder *u, uint32_t id, uint64_t address,
		   struct pending_frame **pf)
{
	int r;

	if ((r = pair_add(u, id, address)) != 0)
		return r < 0 ? -1 : 0;
	if (!(u->frames = grow_array(u->frames, &u->alloc_frames, u->n_frames + 1,
				     sizeof(*u->frames))))
		return -1;
	*pf = &u->frames[u->n_frames++];
	**pf = (struct pending_frame){ .module = id, .address = address };
	return 1;
}

/*
 * A frame of proc at address (flags: MS_FRAME_RETURN or 0) bound to the
 * perf-map module of stream id: its FRAME record goes out before the stack
 * the first time the pair is seen, named by the function that holds it
 * (a return address: its call, address - 1). 0, or -1 after a message.
 */
static __attribute__((noinline)) int jit_frame(struct ms_unwinder *u, struct ms_process *proc,
					       uint32_t id, uint64_t address, uint32_t flags)
{
	struct ms_jit_fn fn;
	struct pending_frame *pf;
	int r;

	if ((r = pending(u, id, address, &pf)) <= 0)
		return r;
	/* (The module was chosen from the same table: a function is there.) */
	r = proc && proc->jit ? ms_jit_table_find(proc->jit, address - (flags & MS_FRAME_RETURN),
						   &fn) : 0;
	if (r < 0)
		return -1;
	if (r) {
		pf->name = fn.name;
		pf->start = fn.start;
		pf->named = true;
		ms_jit_table_named(proc->jit, fn.id);
		u->stats.jit_frames_named++;
	}
	return 0;
}

/*
 * A frame at address (flags: MS_FRAME_RETURN or 0) of the jit-object
 * module of stream id, whose object is o: as jit_frame(), named by the
 * object's symbol that holds it, or with no name. 0, or -1 after a
 * message.
 */
static int jitobj_frame(struct ms_unwinder *u, const struct ms_jitobj *o, uint32_t id,
			uint64_t address, uint32_t flags)
{
	struct pending_frame *pf;
	uint64_t start;
	const char *name;
	int r;

	if ((r = pending(u, id, address, &pf)) <= 0)
		return r;
	if ((name = ms_jitobj_symbol(o, address - (flags & MS_FRAME_RETURN), &start))) {
		pf->name = name;
		pf->start = start;
		pf->named = true;
		u->stats.jit_object_frames_named++;
	}
	return 0;
}

/* The perf-map and jit-object frames among frames[0, n) of a process with JIT code. */
static __attribute__((noinline)) int jit_frames(struct ms_unwinder *u, struct ms_process *proc,
						const struct ms_stack_frame *frames, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = frames[i].module;
		const struct module *mod;

		if (id >= u->n_stream)
			continue;
		mod = &u->modules[u->by_stream[id]];
		if (mod->rec.kind == MS_MODULE_PERF_MAP &&
		    jit_frame(u, proc, id, frames[i].address, frames[i].flags) < 0)
			return -1;
		if (mod->rec.kind == MS_MODULE_JIT_OBJECT &&
		    jitobj_frame(u, mod->jitobj, id, frames[i].address, frames[i].flags) < 0)
			return -1;
	}
	return 0;
}

bool ms_unwinder_next_frame(struct ms_unwinder *u, struct ms_frame *out)
{
	const struct pending_frame *pf;

	if (u->frames_pos >= u->n_frames)
		return false;
	pf = &u->frames[u->frames_pos++];
	out->module = pf->module;
	out->address = pf->address;
	out->name.ptr = pf->named ? pf->name : "";
	out->name.len = pf->named ? (uint32_t)strlen(pf->name) : 0;
	out->symbol_start = pf->named ? pf->start : 0;
	out->reason = pf->named ? MS_SYM_OK : MS_SYM_NO_SYMBOL;
	out->n_lines = 0;
	return true;
}

/*
 * pc lies in an anonymous mapping of proc, *out bound to it: when a JIT
 * function holds it, bind *out to the perf-map module of (proc, the
 * mapping's range, the table's epoch) and give *rule (when not NULL) the
 * rule of the function's rows at pc (NULL: none). 1, or -1 after a
 * message.
 */
static __attribute__((noinline)) int jit_resolve(struct ms_unwinder *u, struct ms_process *proc,
						 uint64_t pc, struct ms_code_loc *out,
						 const struct ms_cfi_rule **rule)
{
	const struct ms_mapping *map = ms_addrspace_find(&proc->as, pc);
	struct ms_jit_fn fn;
	uint64_t epoch, lo = map->start, hi = map->end;
	int r = ms_jit_table_find(proc->jit, pc, &fn);

	if (r <= 0)
		return r < 0 ? -1 : 1;
	/* Registered objects' code is theirs alone: the module stops short of it. */
	if (proc->objs && ms_jitobj_table_gap(proc->objs, pc, &lo, &hi) < 0)
		return -1;
	epoch = ms_jit_table_epoch(proc->jit);
	if (proc->jit_mod == NONE || proc->jit_mod_start != lo ||
	    proc->jit_mod_end != hi || proc->jit_mod_epoch != epoch) {
		struct ms_module m = { .kind = MS_MODULE_PERF_MAP, .size = hi - lo, .base = lo };
		const char *path = ms_jit_table_path(proc->jit);
		char def[64];
		uint32_t i;

		if (!*path) {
			snprintf(def, sizeof(def), "/tmp/perf-%u.map", proc->pid);
			path = def;
		}
		if ((i = module_get_epoch(u, &m, path, NULL, NULL, epoch)) == NONE)
			return -1;
		proc->jit_mod = i;
		proc->jit_mod_start = lo;
		proc->jit_mod_end = hi;
		proc->jit_mod_epoch = epoch;
	}
	out->module = proc->jit_mod;
	out->kind = MS_MODULE_PERF_MAP;
	out->path = u->modules[proc->jit_mod].path;
	out->file = out->path;
	if (rule)
		*rule = ms_jit_fn_rule(u->jit_rules, &fn, pc);
	return 1;
}

/*
 * Whether pc is in the code of one of proc's JIT objects: then 1 with
 * *out bound to the object's module (made the first time), 0 when it is
 * in none, -1 after a message.
 */
static __attribute__((noinline)) int jitobj_resolve(struct ms_unwinder *u,
						    struct ms_process *proc, uint64_t pc,
						    struct ms_code_loc *out)
{
	struct ms_jitobj *o;
	uint32_t *mi;
	int r = ms_jitobj_table_find(proc->objs, pc, &o);

	if (r <= 0)
		return r;
	mi = ms_jitobj_module(o);
	if (*mi == NONE) {
		uint32_t n, i;
		const struct ms_jitobj_code *c = ms_jitobj_code(o, &n);
		struct ms_module m = { .kind = MS_MODULE_JIT_OBJECT, .base = c[0].start,
				       .size = c[n - 1].end - c[0].start };
		char path[64];

		snprintf(path, sizeof(path), "[jit-object 0x%" PRIx64 "]", ms_jitobj_entry(o));
		if ((i = module_get_epoch(u, &m, path, NULL, NULL, ms_jitobj_serial(o))) == NONE)
			return -1;
		if (!u->modules[i].jitobj) {
			ms_jitobj_ref(o);
			u->modules[i].jitobj = o;
		}
		*mi = i;
	}
	memset(out, 0, sizeof(*out));
	out->module = *mi;
	out->kind = MS_MODULE_JIT_OBJECT;
	out->address = pc;
	out->path = u->modules[*mi].path;
	out->file = out->path;
	/* (The image is its own identity.) */
	out->verified = true;
	return 1;
}

struct ms_cfi *ms_unwinder_module_cfi(const struct ms_unwinder *u, uint32_t module)
{
	return module < u->n_modules && u->modules[module].jitobj ?
	       ms_jitobj_cfi(u->modules[module].jitobj) : NULL;
}

/* File entries ---------------------------------------------------------- */

static uint64_t fentry_hash(uint32_t kind, const struct ms_str *path, uint32_t maj, uint32_t min,
			    uint64_t ino, const uint8_t *bid, uint32_t bid_len)
{
	uint64_t h = HASH_INIT;

	h = hash_u64(h, kind);
	h = hash_bytes(h, path->ptr, path->len);
	h = hash_u64(h, maj);
	h = hash_u64(h, min);
	h = hash_u64(h, ino);
	return hash_bytes(h, bid, bid_len);
}

static uint32_t classify(const struct ms_str *path)
{
	static const char vdso[] = "[vdso]";

	if (path->len == sizeof(vdso) - 1 && !memcmp(path->ptr, vdso, path->len))
		return MS_MODULE_VDSO;
	/*
	 * "//anon", "[heap]", "[stack]", "[anon:name]", "": no file behind.
	 * A path with a NUL inside cannot name a file either.
	 */
	if (!path->len || path->ptr[0] != '/' || (path->len >= 6 && !memcmp(path->ptr, "//anon", 6)) ||
	    memchr(path->ptr, '\0', path->len))
		return MS_MODULE_ANON;
	return MS_MODULE_FILE;
}

static uint32_t fentry_get(struct ms_unwinder *u, const struct ms_mmap *m)
{
	uint32_t kind = classify(&m->filename);
	uint32_t bid_len = m->build_id_len > MS_BUILD_ID_MAX ? MS_BUILD_ID_MAX : m->build_id_len;
	uint64_t h = fentry_hash(kind, &m->filename, m->maj, m->min, m->ino, m->build_id, bid_len);
	struct fentry *fe;
	uint32_t pos, i;

	if (u->fentry_index.mask) {
		for (pos = (uint32_t)h & u->fentry_index.mask;
		     (i = u->fentry_index.slots[pos]) != NONE;
		     pos = (pos + 1) & u->fentry_index.mask) {
			fe = &u->fentries[i];
			if (fe->hash == h && fe->kind == kind && fe->maj == m->maj &&
			    fe->min == m->min && fe->ino == m->ino && fe->bid_len == bid_len &&
			    !memcmp(fe->bid, m->build_id, bid_len) &&
			    fe->path_len == m->filename.len &&
			    !memcmp(fe->path, m->filename.ptr, m->filename.len))
				return i;
		}
	}
	if (!(u->fentries = grow_array(u->fentries, &u->alloc_fentries, u->n_fentries + 1,
				       sizeof(*u->fentries))))
		return NONE;
	fe = &u->fentries[u->n_fentries];
	memset(fe, 0, sizeof(*fe));
	if (!(fe->path = dup_str(&m->filename)))
		return NONE;
	fe->hash = h;
	fe->kind = kind;
	fe->path_len = m->filename.len;
	fe->maj = m->maj;
	fe->min = m->min;
	fe->ino = m->ino;
	fe->bid_len = bid_len;
	memcpy(fe->bid, m->build_id, bid_len);
	fe->module = NONE;
	i = u->n_fentries++;
	if (index_add(&u->fentry_index, h, i, u->fentries, sizeof(*u->fentries)) < 0)
		return NONE;
	return i;
}

/*
 * The module of a [vdso] mapping: known by the build id of the image the
 * stream holds, with its segments; without an image, a module that is
 * only a name.
 */
static uint32_t vdso_probe(struct ms_unwinder *u, struct fentry *fe)
{
	struct ms_module m = { .kind = MS_MODULE_VDSO };
	struct ms_elf_loads loads;

	if (!u->vdso) {
		if (!u->vdso_seen)
			ms_problems_add(&u->problems, "no-vdso-image",
					"the stream holds no vdso image (it was recorded by an "
					"older ms-collect): [vdso] frames have no build id and "
					"no call-frame information");
		return special_module(u, MS_MODULE_VDSO, fe->path);
	}
	m.build_id_len = u->vdso_bid_len;
	memcpy(m.build_id, u->vdso_bid, u->vdso_bid_len);
	loads.n = u->vdso_loads.n;
	loads.load = malloc((loads.n ? loads.n : 1) * sizeof(*loads.load));
	if (!loads.load) {
		ms_error("out of memory");
		return NONE;
	}
	if (loads.n)
		memcpy(loads.load, u->vdso_loads.load, loads.n * sizeof(*loads.load));
	return module_get(u, &m, fe->path, &loads, NULL);
}

/*
 * For a module whose file at the path is not the module: the file the
 * debug-file finder gives for the mapping's build id (the one ms-symbolize
 * reads for the module: same arguments, no .gnu_debuglink since the
 * module's own file is not read), when it holds code and its segments are
 * readable. Returns 1 with *found (malloc'd) and *loads, 0 with *refused
 * naming a debug-only file found (else empty), or -1 after a message.
 */
static int find_by_build_id(struct ms_unwinder *u, const struct fentry *fe, char **found,
			    struct ms_elf_loads *loads, struct ms_interp *interp, char *refused,
			    size_t refused_size)
{
	struct ms_debug_file df;
	int r = 0;

	*found = NULL;
	refused[0] = '\0';
	if (!fe->bid_len)
		return 0;
	ms_debugfind_find(u->finder, fe->path, NULL, fe->bid, fe->bid_len, &df);
	if (df.reason != MS_SYM_OK)
		return 0;
	if (!ms_elf_has_code(df.file.elf)) {
		snprintf(refused, refused_size, "%s", df.path);
	} else if (ms_elf_loads_read(df.file.elf, loads) == 0) {
		if ((*found = strdup(df.path))) {
			ms_interp_scan(df.file.elf, interp);
			r = 1;
		} else {
			ms_elf_loads_release(loads);
			r = ms_error("out of memory");
		}
	}
	ms_elf_file_close(&df.file);
	return r;
}

/*
 * Prove the file at fe's path is the mapped file and describe the module.
 * See unwind.h for the rule.
 */
static uint32_t fentry_probe(struct ms_unwinder *u, struct fentry *fe)
{
	struct ms_module m = { .kind = fe->kind };
	struct ms_elf_loads loads = { 0 };
	struct ms_interp interp = { 0 };
	struct ms_elf_file f;
	bool proved = false, have_loads = false;
	const char *why = NULL;
	char *found = NULL, refused[PATH_MAX];
	uint32_t i;

	if (fe->kind == MS_MODULE_VDSO)
		return vdso_probe(u, fe);
	if (fe->kind == MS_MODULE_ANON)
		return special_module(u, MS_MODULE_ANON, fe->path);

	m.build_id_len = fe->bid_len;
	memcpy(m.build_id, fe->bid, fe->bid_len);
	m.dev_maj = fe->maj;
	m.dev_min = fe->min;
	m.ino = fe->ino;

	switch (ms_elf_file_open(&f, fe->path)) {
	case MS_SYM_OK:
		if (fe->maj || fe->min || fe->ino) {
			proved = major(f.st.st_dev) == fe->maj && minor(f.st.st_dev) == fe->min &&
				 (uint64_t)f.st.st_ino == fe->ino;
			if (!proved)
				why = "the file at the path is another file (device or inode differ)";
		} else if (fe->bid_len) {
			proved = f.build_id_len == fe->bid_len &&
				 !memcmp(f.build_id, fe->bid, fe->bid_len);
			if (!proved)
				why = "the file's build id differs from the mapping's";
		} else {
			why = "the mapping record has neither device and inode nor build id";
		}
		/* Same inode rewritten in place: the build id tells. */
		if (proved && fe->bid_len && f.build_id_len &&
		    (f.build_id_len != fe->bid_len || memcmp(f.build_id, fe->bid, fe->bid_len))) {
			proved = false;
			why = "the file's build id differs from the mapping's";
		}
		if (proved) {
			if (!m.build_id_len) {
				m.build_id_len = f.build_id_len;
				memcpy(m.build_id, f.build_id, f.build_id_len);
			}
			m.dev_maj = major(f.st.st_dev);
			m.dev_min = minor(f.st.st_dev);
			m.ino = (uint64_t)f.st.st_ino;
			m.size = (uint64_t)f.st.st_size;
			m.mtime = ms_stat_mtime_ns(&f.st);
			have_loads = ms_elf_loads_read(f.elf, &loads) == 0;
			if (!have_loads)
				why = "its program headers are unreadable";
			else
				ms_interp_scan(f.elf, &interp);
		}
		ms_elf_file_close(&f);
		break;
	case MS_SYM_BAD_ELF:
		why = "it is not an ELF file";
		break;
	default:
		why = "it cannot be opened";
		break;
	}
	/* Gone, or another file: a file the module's build id proves may stand in. */
	refused[0] = '\0';
	if (!proved) {
		int r = find_by_build_id(u, fe, &found, &loads, &interp, refused, sizeof(refused));

		if (r < 0)
			return NONE;
		have_loads = r > 0;
	}
	i = module_get(u, &m, fe->path, have_loads ? &loads : NULL, found);
	/* (Only a module whose addresses are the file's can say where its loop is.) */
	if (i != NONE && have_loads && interp.n) {
		u->modules[i].interp = interp;
		u->any_interp = true;
	}
	if (i == NONE || !why)
		return i;
	if (u->modules[i].found) {
		u->stats.modules_found++;
	} else if (!u->modules[i].has_loads) {
		/* What a copy of the binary in --debug-dir would mend. */
		static const char mend[] = "its frames keep file offsets and DWARF stacks end at "
					   "them: to unwind them, give ms-unwind and ms-symbolize "
					   "--debug-dir DIR with a copy of the binary as DIR/NAME";

		u->stats.modules_unverified++;
		if (refused[0])
			ms_problems_add(&u->problems, "unverified-module",
					"'%s': %s, and '%s', which its build id proves, is a "
					"debug file without the code; %s", fe->path, why, refused,
					mend);
		else if (!proved && fe->bid_len)
			ms_problems_add(&u->problems, "unverified-module",
					"'%s': %s, and no file with its build id was found; %s",
					fe->path, why, mend);
		else
			ms_problems_add(&u->problems, "unverified-module",
					"'%s': %s; its frames keep file offsets and are not "
					"symbolized from it", fe->path, why);
	}
	return i;
}

/* Processes ------------------------------------------------------------- */

struct ms_process *ms_unwinder_process(struct ms_unwinder *u, uint32_t pid)
{
	struct ms_process *p;

	if (u->last_proc && u->last_proc->pid == pid)
		return u->last_proc;
	for (p = u->buckets[pid & u->bucket_mask]; p; p = p->next)
		if (p->pid == pid)
			return u->last_proc = p;
	return NULL;
}

struct ms_addrspace *ms_process_addrspace(struct ms_process *proc)
{
	return &proc->as;
}

static int rehash_processes(struct ms_unwinder *u)
{
	uint32_t size = (u->bucket_mask + 1) * 2, i;
	struct ms_process **b = calloc(size, sizeof(*b));

	if (!b)
		return ms_error("out of memory for %u processes", size);
	for (i = 0; i <= u->bucket_mask; i++) {
		struct ms_process *p = u->buckets[i], *next;

		for (; p; p = next) {
			next = p->next;
			p->next = b[p->pid & (size - 1)];
			b[p->pid & (size - 1)] = p;
		}
	}
	free(u->buckets);
	u->buckets = b;
	u->bucket_mask = size - 1;
	return 0;
}

static struct ms_process *process_get(struct ms_unwinder *u, uint32_t pid)
{
	struct ms_process *p = ms_unwinder_process(u, pid);

	if (p)
		return p;
	if (u->n_procs + 1 > (u->bucket_mask + 1) * 2 && rehash_processes(u) < 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		ms_error("out of memory for process %u", pid);
		return NULL;
	}
	p->pid = pid;
	p->jit_mod = NONE;
	p->objs_end = UINT64_MAX;
	ms_addrspace_init(&p->as);
	p->next = u->buckets[pid & u->bucket_mask];
	u->buckets[pid & u->bucket_mask] = p;
	u->n_procs++;
	u->stats.processes++;
	return p;
}

static void process_free(struct ms_process *p)
{
	ms_jit_table_free(p->jit);
	ms_jitobj_table_free(p->objs);
	ms_addrspace_release(&p->as);
	free(p->tids);
	free(p);
}

static void process_drop(struct ms_unwinder *u, struct ms_process *p)
{
	struct ms_process **link = &u->buckets[p->pid & u->bucket_mask];

	while (*link != p)
		link = &(*link)->next;
	*link = p->next;
	if (u->last_proc == p)
		u->last_proc = NULL;
	u->n_procs--;
	u->stats.processes_dropped++;
	process_free(p);
}

static int thread_add(struct ms_process *p, uint32_t tid)
{
	uint32_t i;

	for (i = 0; i < p->n_tids; i++)
		if (p->tids[i] == tid)
			return 0;
	if (!(p->tids = grow_array(p->tids, &p->alloc_tids, p->n_tids + 1, sizeof(*p->tids))))
		return -1;
	p->tids[p->n_tids++] = tid;
	return 0;
}

/* Remove tid; true when it was the last known thread. */
static bool thread_remove(struct ms_process *p, uint32_t tid)
{
	uint32_t i;

	for (i = 0; i < p->n_tids; i++) {
		if (p->tids[i] == tid) {
			p->tids[i] = p->tids[--p->n_tids];
			return p->n_tids == 0;
		}
	}
	/* An unknown thread: only the leader's exit ends a process we never saw threads of. */
	return p->n_tids == 0 && tid == p->pid;
}

/* Setup ----------------------------------------------------------------- */

struct ms_unwinder *ms_unwinder_new(const struct ms_unwind_options *opts)
{
	struct ms_unwinder *u = calloc(1, sizeof(*u));

	if (!u) {
		ms_error("out of memory");
		return NULL;
	}
	ms_problems_init(&u->problems, "ms-unwind");
	{
		struct ms_debug_search search = { 0 };

		if (opts) {
			search.dirs = opts->debug_dirs;
			search.n_dirs = opts->n_debug_dirs;
			search.system_dir = opts->system_debug_dir;
		}
		if (!(u->finder = ms_debugfind_new(&search))) {
			ms_error("out of memory");
			goto fail;
		}
	}
	u->bucket_mask = 63;
	u->buckets = calloc(u->bucket_mask + 1, sizeof(*u->buckets));
	if (!u->buckets || ms_elf_setup() < 0 || !(u->jit_rules = ms_jit_rules_new()) ||
	    !(u->jitobj_asm = ms_jitobj_asm_new()))
		goto fail;
	{
		/* The kernel is known by its build id (issue 4), as files are. */
		struct ms_module km = { .kind = MS_MODULE_KERNEL };

		km.build_id_len = ms_kernel_build_id(NULL, km.build_id);
		u->kernel_module = module_get(u, &km, "[kernel.kallsyms]", NULL, NULL);
	}
	u->unknown_module = special_module(u, MS_MODULE_UNKNOWN, "[unknown]");
	u->interpreted_module = NONE;
	if (u->kernel_module == NONE || u->unknown_module == NONE)
		goto fail;
	if (ms_unwinder_set_method(u, opts && opts->method ? opts->method : &ms_unwind_method_fp) < 0)
		goto fail;
	return u;
fail:
	ms_unwinder_free(u);
	return NULL;
}

/* Free what the current method keeps: its state and its module slots. */
static void method_release(struct ms_unwinder *u)
{
	uint32_t i;

	if (!u->method)
		return;
	for (i = 0; i < u->n_modules; i++) {
		if (u->modules[i].method_data && u->method->module_free)
			u->method->module_free(u->modules[i].method_data);
		u->modules[i].method_data = NULL;
	}
	if (u->method_state && u->method->state_free)
		u->method->state_free(u->method_state);
	u->method_state = NULL;
	u->method = NULL;
}

int ms_unwinder_set_method(struct ms_unwinder *u, const struct ms_unwind_method *m)
{
	if (u->method == m)
		return 0;
	method_release(u);
	/* Tokens were the old method's (touched only when some were kept). */
	if (u->any_tagged)
		memset(u->tagged, 0, sizeof(u->tagged));
	u->any_tagged = false;
	u->last_token = 0;
	u->method = m;
	if (m->init && m->init(u, &u->method_state) < 0) {
		u->method = &ms_unwind_method_fp;
		return -1;
	}
	return 0;
}

const struct ms_unwind_method *ms_unwinder_method(const struct ms_unwinder *u)
{
	return u->method;
}

void *ms_unwinder_method_state(struct ms_unwinder *u)
{
	return u->method_state;
}

struct ms_debugfind *ms_unwinder_debugfind(struct ms_unwinder *u)
{
	return u->finder;
}

void ms_unwinder_free(struct ms_unwinder *u)
{
	uint32_t i;

	if (!u)
		return;
	method_release(u);
	if (u->buckets) {
		for (i = 0; i <= u->bucket_mask; i++) {
			struct ms_process *p = u->buckets[i], *next;

			for (; p; p = next) {
				next = p->next;
				process_free(p);
			}
		}
	}
	free(u->buckets);
	for (i = 0; i < u->n_fentries; i++)
		free(u->fentries[i].path);
	free(u->fentries);
	free(u->fentry_index.slots);
	for (i = 0; i < u->n_modules; i++) {
		free(u->modules[i].path);
		free(u->modules[i].found);
		ms_elf_loads_release(&u->modules[i].loads);
		ms_jitobj_unref(u->modules[i].jitobj);
	}
	free(u->modules);
	free(u->module_index.slots);
	free(u->pending);
	free(u->named);
	free(u->frames);
	free(u->by_stream);
	ms_jit_rules_free(u->jit_rules);
	ms_jitobj_asm_free(u->jitobj_asm);
	/* After the method's module data: their CFI borrows it. */
	ms_debugfind_free(u->finder);
	free(u->vdso);
	ms_elf_loads_release(&u->vdso_loads);
	free(u);
}

const struct ms_unwind_stats *ms_unwinder_stats(const struct ms_unwinder *u)
{
	return &u->stats;
}

struct ms_unwind_stats *ms_unwinder_counters(struct ms_unwinder *u)
{
	return &u->stats;
}

struct ms_problems *ms_unwinder_problems(struct ms_unwinder *u)
{
	return &u->problems;
}

/* Policies -------------------------------------------------------------- */

static const char *const policy_names[] = {
	[MS_UNWIND_AUTO] = "auto",
	[MS_UNWIND_DWARF] = "dwarf",
	[MS_UNWIND_FP] = "fp",
	[MS_UNWIND_DWARF_FP] = "dwarf+fp",
};

int ms_unwind_policy_parse(const char *name)
{
	for (int i = 0; i < (int)(sizeof(policy_names) / sizeof(policy_names[0])); i++)
		if (!strcmp(name, policy_names[i]))
			return i;
	return -1;
}

const char *ms_unwind_policy_name(int policy)
{
	if (policy >= 0 && policy < (int)(sizeof(policy_names) / sizeof(policy_names[0])))
		return policy_names[policy];
	return "unknown";
}

const struct ms_unwind_method *ms_unwind_policy_method(int policy)
{
	switch (policy) {
	case MS_UNWIND_DWARF:
		return &ms_unwind_method_dwarf;
	case MS_UNWIND_DWARF_FP:
		return &ms_unwind_method_dwarf_fp;
	case MS_UNWIND_FP:
		return &ms_unwind_method_fp;
	default:
		return NULL;
	}
}

/* Records --------------------------------------------------------------- */

int ms_unwinder_mmap(struct ms_unwinder *u, const struct ms_mmap *m)
{
	struct ms_process *p;
	uint32_t fe;

	u->stats.mmaps++;
	if (m->pid == UINT32_MAX || m->cpumode == MS_CPUMODE_KERNEL) {
		u->stats.kernel_mmaps++;
		return 0;
	}
	if (!m->len || m->start + m->len < m->start) {
		ms_problems_add(&u->problems, "bad-mapping",
				"pid %u: mapping at 0x%llx of length 0x%llx is empty or wraps around",
				m->pid, (unsigned long long)m->start, (unsigned long long)m->len);
		return 0;
	}
	if (!(p = process_get(u, m->pid)))
		return -1;
	/* JIT functions read before the mapping was made: their code is gone. */
	if (p->jit) {
		int n = ms_jit_table_unmap(p->jit, m->start, m->start + m->len, m->time);

		if (n < 0)
			return -1;
		if (n) {
			u->stats.jit_ended += (uint64_t)n;
			ms_addrspace_touch(&p->as);
		}
	}
	/* Objects read before it: they end at its time (the next sample's, see sample()). */
	if (p->objs) {
		u->stats.jit_objects_ended +=
			ms_jitobj_table_unmap(p->objs, m->start, m->start + m->len, m->time);
		p->objs_end = ms_jitobj_table_next_end(p->objs);
	}
	if (!(m->prot & PROT_EXEC))
		return ms_addrspace_remove(&p->as, m->start, m->start + m->len);
	u->stats.exec_mmaps++;
	if ((fe = fentry_get(u, m)) == NONE)
		return -1;
	return ms_addrspace_insert(&p->as, m->start, m->start + m->len, m->pgoff, fe);
}

int ms_unwinder_jit_func(struct ms_unwinder *u, const struct ms_jit_func *f)
{
	struct ms_process *p = process_get(u, f->pid);
	int r;

	if (!p || (!p->jit && !(p->jit = ms_jit_table_new())))
		return -1;
	if ((r = ms_jit_table_add(p->jit, u->jit_rules, f, &u->problems)) < 0)
		return -1;
	if (r == MS_JIT_DROPPED)
		return 0;
	u->stats.jit_funcs++;
	if (r == MS_JIT_ADDED_NO_ROWS || !f->rows_len)
		u->stats.jit_funcs_no_rows++;
	/* What the caches answered for the process's anonymous code may change. */
	ms_addrspace_touch(&p->as);
	return 0;
}

int ms_unwinder_jit_read(struct ms_unwinder *u, const struct ms_jit_read *r)
{
	struct ms_process *p = process_get(u, r->pid);
	const char *cur;

	if (!p || (!p->jit && !(p->jit = ms_jit_table_new())))
		return -1;
	cur = ms_jit_table_path(p->jit);
	if (!r->path.len || (strlen(cur) == r->path.len && !memcmp(cur, r->path.ptr, r->path.len)))
		return 0;
	/* Modules bound from now on carry it: what the caches hold goes. */
	p->jit_mod = NONE;
	ms_addrspace_touch(&p->as);
	return ms_jit_table_set_path(p->jit, &r->path);
}

/* A new object of p's from image (len bytes, taken over) read at time. 0, or -1. */
static int jitobj_add(struct ms_unwinder *u, struct ms_process *p, const struct ms_jit_object *r,
		      uint8_t *image, uint32_t len, uint64_t time)
{
	struct ms_jitobj *o;
	const char *why, *code;
	int k;

	if (!p->objs && !(p->objs = ms_jitobj_table_new())) {
		free(image);
		return -1;
	}
	/* Read again (another object came, or a mapping over it): the same object. */
	if (ms_jitobj_table_same(p->objs, r->entry, image, len)) {
		free(image);
		u->stats.jit_objects_again++;
		return 0;
	}
	if (!(o = ms_jitobj_new(image, len, r->entry, &why, &code))) {
		if (!why)
			return -1;
		ms_problems_add(&u->problems, code,
				"pid %" PRIu32 ": the JIT object of entry 0x%" PRIx64 " (%u bytes "
				"at 0x%" PRIx64 ") cannot be used: %s; its code's frames stay "
				"anonymous", r->pid, r->entry, len, r->addr, why);
		return 0;
	}
	k = ms_jitobj_table_add(p->objs, o, time);
	ms_jitobj_unref(o);
	if (k < 0)
		return -1;
	u->stats.jit_objects++;
	p->objs_end = ms_jitobj_table_next_end(p->objs);
	/* What the caches answered for its code changes. */
	ms_addrspace_touch(&p->as);
	return 0;
}

int ms_unwinder_jit_object(struct ms_unwinder *u, const struct ms_jit_object *r)
{
	struct ms_process *p;
	uint8_t *image;
	uint64_t time;
	int k;

	if (!r->size) {
		ms_jitobj_asm_cut(u->jitobj_asm, r->pid, r->entry, &u->problems);
		p = ms_unwinder_process(u, r->pid);
		if (p && p->objs) {
			u->stats.jit_objects_ended +=
				ms_jitobj_table_unregister(p->objs, r->entry, r->time);
			p->objs_end = ms_jitobj_table_next_end(p->objs);
		}
		return 0;
	}
	if ((k = ms_jitobj_asm_chunk(u->jitobj_asm, r, &u->problems, &image, &time)) <= 0)
		return k;
	if (!(p = process_get(u, r->pid))) {
		free(image);
		return -1;
	}
	return jitobj_add(u, p, r, image, (uint32_t)r->size, time);
}

void ms_unwinder_end(struct ms_unwinder *u)
{
	ms_jitobj_asm_end(u->jitobj_asm, &u->problems);
}

/* A sample of p at now: the objects that ended by then go. */
static __attribute__((noinline)) void jitobj_expire(struct ms_process *p, uint64_t now)
{
	if (p->objs && ms_jitobj_table_expire(p->objs, now))
		ms_addrspace_touch(&p->as);
	p->objs_end = p->objs ? ms_jitobj_table_next_end(p->objs) : UINT64_MAX;
}

/* Whether elf has segments, all readable and with their bytes within size. */
static bool segments_within(Elf *elf, uint64_t size)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n) != 0 || !n)
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_offset > size ||
		    ph.p_filesz > size - ph.p_offset)
			return false;
	}
	return true;
}

/*
 * Read u's vdso fields from image (len bytes): NULL, or why it cannot be
 * the vdso's module with *code the problem's.
 */
static const char *vdso_read(struct ms_unwinder *u, uint8_t *image, uint32_t len,
			     const char **code)
{
	struct ms_elf_file f;
	const char *why = NULL;

	*code = "bad-vdso-image";
	if (ms_elf_memory_open(&f, image, len) != MS_SYM_OK)
		return "it is not an ELF image";
	if (!segments_within(f.elf, len)) {
		why = "it is cut short or corrupt: its program headers are unreadable or "
		      "describe bytes past its end";
	} else if (!f.build_id_len) {
		*code = "vdso-no-build-id";
		why = "it has no build id to know it by";
	} else if (ms_elf_loads_read(f.elf, &u->vdso_loads) < 0) {
		why = "its program headers are unreadable";
	} else {
		u->vdso_bid_len = f.build_id_len;
		memcpy(u->vdso_bid, f.build_id, f.build_id_len);
	}
	ms_elf_file_close(&f);
	return why;
}

int ms_unwinder_info(struct ms_unwinder *u, const struct ms_info *i)
{
	static const char key[] = "kernel-build-id";
	struct module *km = &u->modules[u->kernel_module];
	uint8_t bid[MS_BUILD_ID_MAX];
	uint32_t len;

	if (i->key.len != sizeof(key) - 1 || memcmp(i->key.ptr, key, i->key.len))
		return 0;
	len = i->is_text ? ms_build_id_unhex(i->text.ptr, i->text.len, bid) : 0;
	if (!len) {
		ms_problems_add(&u->problems, "kernel-identity-unreadable",
				"the stream's kernel-build-id is not a build id: kernel frames "
				"are taken to be the running kernel's");
		return 0;
	}
	if (km->stream_id != NONE)
		return 0;	/* written already: a stream that gives it late keeps the first */
	memcpy(km->rec.build_id, bid, len);
	km->rec.build_id_len = len;
	return 0;
}

int ms_unwinder_vdso(struct ms_unwinder *u, const struct ms_vdso *v)
{
	const char *why, *code;
	uint8_t *image;

	if (u->vdso_seen) {
		/* One host, one image: a different second one cannot be told apart. */
		if (!u->vdso || v->len != u->vdso_len || memcmp(v->image, u->vdso, v->len))
			ms_problems_add(&u->problems, "vdso-image-changed",
					"a second vdso record holds another image (%u bytes); "
					"the first one is used", v->len);
		return 0;
	}
	u->vdso_seen = true;
	if (!v->len || v->len > MS_VDSO_MAX) {
		ms_problems_add(&u->problems, "bad-vdso-image",
				"the vdso image is %u bytes, not 1 to %u: [vdso] frames have "
				"no call-frame information", v->len, MS_VDSO_MAX);
		return 0;
	}
	if (!(image = malloc(v->len)))
		return ms_error("out of memory for the vdso image of %u bytes", v->len);
	memcpy(image, v->image, v->len);
	if ((why = vdso_read(u, image, v->len, &code))) {
		ms_problems_add(&u->problems, code,
				"the vdso image in the stream cannot be used (%s): [vdso] "
				"frames have no build id and no call-frame information", why);
		free(image);
		return 0;
	}
	u->vdso = image;
	u->vdso_len = v->len;
	return 0;
}

const uint8_t *ms_unwinder_vdso_image(const struct ms_unwinder *u, uint32_t *len)
{
	*len = u->vdso_len;
	return u->vdso;
}

int ms_unwinder_comm(struct ms_unwinder *u, const struct ms_comm *c)
{
	struct ms_process *p = process_get(u, c->pid);

	if (!p)
		return -1;
	if (c->exec) {
		/* The new image's mappings follow; its other threads are gone. */
		u->stats.execs++;
		ms_addrspace_clear(&p->as);
		p->n_tids = 0;
		/* JIT functions read after the exec (their records come early) are the new image's. */
		if (p->jit && ms_jit_table_exec(p->jit, c->time) < 0)
			return -1;
		if (p->objs) {
			ms_jitobj_table_exec(p->objs, c->time);
			p->objs_end = ms_jitobj_table_next_end(p->objs);
		}
	}
	return thread_add(p, c->tid);
}

int ms_unwinder_fork(struct ms_unwinder *u, const struct ms_task *t)
{
	struct ms_process *child, *parent;

	u->stats.forks++;
	if (t->pid == t->ppid) {
		/* A new thread: same space. */
		if (!(child = process_get(u, t->pid)))
			return -1;
		return thread_add(child, t->tid);
	}
	if (!(child = process_get(u, t->pid)))
		return -1;
	/* A reused pid starts over with its parent's space. */
	child->n_tids = 0;
	parent = ms_unwinder_process(u, t->ppid);
	if (parent) {
		if (ms_addrspace_copy(&child->as, &parent->as) < 0)
			return -1;
	} else {
		ms_addrspace_clear(&child->as);
	}
	/* The child runs its parent's JIT code until it writes its own map. */
	if ((parent && parent->jit) || child->jit) {
		if (!child->jit && !(child->jit = ms_jit_table_new()))
			return -1;
		if (ms_jit_table_fork(child->jit, parent ? parent->jit : NULL, t->time) < 0)
			return -1;
		child->jit_mod = NONE;
	}
	/* And its parent's registered objects (the same memory), then its own. */
	if ((parent && parent->objs) || child->objs) {
		if (!child->objs && !(child->objs = ms_jitobj_table_new()))
			return -1;
		if (ms_jitobj_table_fork(child->objs, parent ? parent->objs : NULL, t->time) < 0)
			return -1;
		child->objs_end = ms_jitobj_table_next_end(child->objs);
	}
	return thread_add(child, t->tid);
}

int ms_unwinder_exit(struct ms_unwinder *u, const struct ms_task *t)
{
	struct ms_process *p = ms_unwinder_process(u, t->pid);

	u->stats.exits++;
	if (p && thread_remove(p, t->tid))
		process_drop(u, p);
	return 0;
}

const struct ms_mapping *ms_unwinder_lookup(struct ms_unwinder *u, struct ms_process *proc,
					    uint64_t pc)
{
	(void)u;
	return proc ? ms_addrspace_find(&proc->as, pc) : NULL;
}

/* Inlined in both callers: ms_unwinder_resolve() (rule NULL) stays the non-JIT path it was. */
static inline __attribute__((always_inline)) int resolve(struct ms_unwinder *u,
							 struct ms_process *proc, uint64_t pc,
							 struct ms_code_loc *out,
							 const struct ms_cfi_rule **rule)
{
	const struct ms_mapping *map;
	struct fentry *fe;
	struct module *mod;
	uint64_t off;

	/* A registered object's code is its own, mapped or not (a lost record). */
	if (__builtin_expect(proc != NULL && proc->objs != NULL, 0)) {
		int r = jitobj_resolve(u, proc, pc, out);

		if (r)
			return r;
	}
	map = ms_unwinder_lookup(u, proc, pc);
	memset(out, 0, sizeof(*out));
	if (!map) {
		out->module = u->unknown_module;
		out->kind = MS_MODULE_UNKNOWN;
		out->address = pc;
		return 0;
	}
	fe = &u->fentries[map->ref];
	if (fe->module == NONE && (fe->module = fentry_probe(u, fe)) == NONE)
		return -1;
	mod = &u->modules[fe->module];
	out->module = fe->module;
	out->kind = mod->rec.kind;
	out->path = mod->path;
	out->verified = mod->has_loads;
	out->found = mod->found != NULL;
	out->file = mod->found ? mod->found : mod->path;
	off = pc - map->start + map->pgoff;
	switch (mod->rec.kind) {
	case MS_MODULE_FILE:
		if (!mod->has_loads || !ms_elf_loads_vaddr(&mod->loads, off, &out->address)) {
			out->address = off;
			out->flags = MS_FRAME_FILE_OFFSET;
		}
		break;
	case MS_MODULE_VDSO:
		/* With its image: the image's virtual addresses, as for a file. */
		if (!mod->has_loads || !ms_elf_loads_vaddr(&mod->loads, off, &out->address))
			out->address = off;
		break;
	default:
		out->address = pc;
		/* (A tail call, so that the paths above keep the registers they had.) */
		if (__builtin_expect(proc->jit != NULL, 0) && mod->rec.kind == MS_MODULE_ANON)
			return jit_resolve(u, proc, pc, out, rule);
		break;
	}
	return 1;
}

int ms_unwinder_resolve(struct ms_unwinder *u, struct ms_process *proc, uint64_t pc,
			struct ms_code_loc *out)
{
	return resolve(u, proc, pc, out, NULL);
}

int ms_unwinder_resolve_rule(struct ms_unwinder *u, struct ms_process *proc, uint64_t pc,
			     struct ms_code_loc *out, const struct ms_cfi_rule **rule)
{
	*rule = NULL;
	return resolve(u, proc, pc, out, rule);
}

void **ms_unwinder_module_slot(struct ms_unwinder *u, uint32_t module)
{
	return module < u->n_modules ? &u->modules[module].method_data : NULL;
}

const struct ms_module *ms_unwinder_module(const struct ms_unwinder *u, uint32_t module)
{
	return module < u->n_modules ? &u->modules[module].rec : NULL;
}

static inline struct tagged *tagged_slot(struct ms_unwinder *u, uint64_t token)
{
	return &u->tagged[(token * 0x9e3779b97f4a7c15ull) >> (64 - TAGGED_BITS)];
}

bool ms_unwinder_tagged(const struct ms_unwinder *u, uint64_t token)
{
	return token && tagged_slot((struct ms_unwinder *)u, token)->token == token;
}

void ms_unwinder_tag(struct ms_unwinder *u, uint32_t tag)
{
	if (!u->last_token)
		return;
	u->any_tagged = true;
	*tagged_slot(u, u->last_token) = (struct tagged){
		.token = u->last_token, .tag = tag,
		.user_frames = (uint16_t)u->last_user_frames, .reason = (uint16_t)u->last_reason,
	};
}

static int sample(struct ms_unwinder *u, const struct ms_sample *s, struct ms_stack *out,
		  uint32_t *tag)
{
	struct ms_user_stack *us = &u->ustack;
	struct ms_process *proc;
	struct ms_code_loc loc;
	uint32_t n = 0, i, last_module = NONE, last_id = 0, last_flags = 0;
	bool broke = false;
	int r;

	u->last_token = 0;
	u->n_pending = u->pending_pos = 0;
	u->n_frames = u->frames_pos = 0;
	u->stats.samples++;
	out->pid = s->pid;
	out->tid = s->tid;
	out->time = s->time;
	out->cpu = s->cpu;
	out->period = s->period;

	for (i = 0; i < s->n_kchain && n < MS_FRAMES_MAX; i++) {
		out->frames[n++] = (struct ms_stack_frame){
			.flags = MS_FRAME_KERNEL | (i ? MS_FRAME_RETURN : 0),
			.address = s->kchain[i],
		};
	}
	/* No callchain sampled: the kernel IP alone. */
	if (!s->n_kchain && !s->n_uchain && s->cpumode == MS_CPUMODE_KERNEL && s->ip) {
		out->frames[n++] = (struct ms_stack_frame){
			.flags = MS_FRAME_KERNEL, .address = s->ip,
		};
	}
	u->stats.kernel_frames += n;
	if (n) {
		if (module_use(u, u->kernel_module) < 0)
			return -1;
		for (i = 0; i < n; i++)
			out->frames[i].module = u->modules[u->kernel_module].stream_id;
	}

	if (!s->n_uchain && s->cpumode != MS_CPUMODE_USER) {
		out->reason = MS_END_KERNEL_ONLY;
		goto done;
	}
	proc = ms_unwinder_process(u, s->pid);
	if (__builtin_expect(proc != NULL && s->time >= proc->objs_end, 0))
		jitobj_expire(proc, s->time);
	us->n = 0;
	us->end = MS_END_FP_CHAIN;
	us->token = 0;
	us->token_enough = tag && !n;
	if (u->method->walk(u, proc, s, MS_FRAMES_MAX - n, us) < 0)
		return -1;
	out->reason = us->end;
	/* Without kernel frames, the stack is the walk's: the same token, the same stack. */
	if (tag && us->token && !n) {
		const struct tagged *t = tagged_slot(u, us->token);

		if (t->token == us->token) {
			*tag = t->tag;
			out->reason = t->reason;
			out->n_frames = 0;
			u->stats.user_frames += t->user_frames;
			u->stats.stacks++;
			u->stats.ends[t->reason]++;
			return 1;
		}
		u->last_token = us->token;
	}
	{
		/* Locals: the frames' stores cannot then alias what the loop reads. */
		const struct ms_uframe *uf = us->frames;
		struct ms_stack_frame *f = &out->frames[n];
		uint32_t take = us->n < MS_FRAMES_MAX - n ? us->n : MS_FRAMES_MAX - n;
		uint32_t n_modules = u->n_modules, unknown = u->unknown_module;

		for (i = 0; i < take; i++, uf++, f++) {
			uint32_t module = uf->module, flags = uf->loc_flags;
			uint64_t address = uf->address;

			if (!uf->resolved || module >= n_modules) {
				/* Not bound by the method: look it up. */
				if ((r = ms_unwinder_resolve(u, proc, uf->pc, &loc)) < 0)
					return -1;
				n_modules = u->n_modules;
				module = loc.module;
				flags = loc.flags;
				address = loc.address;
			} else {
				r = module != unknown;
			}
			/* Callers tend to be in the callee's module: its id is at hand. */
			if (module != last_module) {
				if (module_use(u, module) < 0)
					return -1;
				last_module = module;
				last_id = u->modules[module].stream_id;
				last_flags = u->modules[module].interp.n ? MS_FRAME_INTERPRETER : 0;
			}
			f->module = last_id;
			f->address = address;
			f->flags = (uf->flags & MS_FRAME_RETURN) | flags | last_flags;
			if (!r) {
				out->reason = MS_END_NO_MODULE;
				broke = true;
				break;
			}
		}
		/* JIT code's frames are named here, once (unwind/jit.h, jitobj.h). */
		if (__builtin_expect(proc && (proc->jit || proc->objs), 0) &&
		    jit_frames(u, proc, &out->frames[n], i + broke) < 0)
			return -1;
		n += i + broke;
	}
	u->stats.user_frames += i + broke;	/* the frame that broke out counts */
	if (i < us->n && out->reason != MS_END_NO_MODULE)
		out->reason = MS_END_DEPTH;
	u->last_user_frames = i + broke;
	u->last_reason = out->reason;
	/* (Only stacks whose reason is counted are tagged.) */
	if (out->reason > MS_END_KERNEL_ONLY)
		u->last_token = 0;
done:
	out->n_frames = n;
	u->stats.stacks++;
	if (out->reason <= MS_END_KERNEL_ONLY)
		u->stats.ends[out->reason]++;
	return 0;
}

void ms_unwinder_prefetch(struct ms_unwinder *u, const struct ms_sample *s)
{
	struct ms_process *proc;

	/* (Before the first sample settles the method, nothing: as sample() would.) */
	if (!u->method || !u->method->prefetch ||
	    (!s->n_uchain && s->cpumode != MS_CPUMODE_USER) || !(proc = ms_unwinder_process(u, s->pid)))
		return;
	u->method->prefetch(u, proc, s);
}

int ms_unwinder_sample(struct ms_unwinder *u, const struct ms_sample *s, struct ms_stack *out)
{
	return sample(u, s, out, NULL);
}

int ms_unwinder_sample_tagged(struct ms_unwinder *u, const struct ms_sample *s,
			      struct ms_stack *out, uint32_t *tag)
{
	return sample(u, s, out, tag);
}

bool ms_unwinder_any_interpreter(const struct ms_unwinder *u)
{
	return u->any_interp;
}

bool ms_unwinder_activation(const struct ms_unwinder *u, const struct ms_stack_frame *f)
{
	const struct module *mod;

	if (!(f->flags & MS_FRAME_INTERPRETER) || f->module >= u->n_stream)
		return false;
	mod = &u->modules[u->by_stream[f->module]];
	/* A return address is its call's: the byte before it. */
	return ms_interp_in_loop(&mod->interp, f->address - (f->flags & MS_FRAME_RETURN ? 1 : 0));
}

int ms_unwinder_interpreted_module(struct ms_unwinder *u, uint32_t *id)
{
	if (u->interpreted_module == NONE &&
	    (u->interpreted_module = special_module(u, MS_MODULE_INTERPRETED, "[python]")) == NONE)
		return -1;
	if (module_use(u, u->interpreted_module) < 0)
		return -1;
	*id = u->modules[u->interpreted_module].stream_id;
	return 0;
}

/*
 * Finding a CPython process's layout (layout.h): its interpreter module
 * in /proc/PID/maps, proved by device and inode, its symbols and load
 * bias, its version from Py_Version, and its offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include <gelf.h>
#include "python/layout.h"
#include "python/pydwarf.h"
#include "python/pymem.h"
#include "python/pyparse.h"
#include "elf/debugfind.h"
#include "elf/elffile.h"
#include "perf/procfs.h"

const char *ms_py_source_name(enum ms_py_source s)
{
	switch (s) {
	case MS_PY_SRC_DEBUG_OFFSETS: return "debug-offsets";
	case MS_PY_SRC_TABLE_DWARF: return "table+dwarf";
	case MS_PY_SRC_TABLE: return "table";
	}
	return "?";
}

/*
 * The tables, from the DWARF of pyenv's 3.11.7 and 3.12.1 builds and
 * CPython's headers (Include/internal/pycore_{runtime,interp,frame}.h,
 * cpython/{pystate,code,unicodeobject,bytesobject}.h); each run checks
 * them against the interpreter's own DWARF when it has some.
 */
static const struct ms_py_offsets table311 = {
	.rt_interp_head = 40, .is_next = 0, .is_threads_head = 16,
	.ts_next = 8, .ts_native_tid = 160, .ts_frame = 56, .cf_current_frame = 8,
	.fr_previous = 48, .fr_code = 32, .fr_instr = 56, .fr_owner = 69, .owner_cstack = -1,
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 72,
	.co_linetable = 136, .co_code_adaptive = 184,
	.ob_type = 8, .uni_length = 16, .uni_state = 32, .uni_ascii_size = 48,
	.uni_compact_size = 72, .bytes_size = 16, .bytes_sval = 32,
	.fr_is_entry = 68, .gil_in_runtime = 360, .gil_ptr_in_interp = -1,
	.gil_locked = 16, .gil_holder = 8,
};
static const struct ms_py_offsets table312 = {
	.rt_interp_head = 40, .is_next = 0, .is_threads_head = 72,
	.ts_next = 8, .ts_native_tid = 144, .ts_frame = 56, .cf_current_frame = 0,
	.fr_previous = 8, .fr_code = 0, .fr_instr = 56, .fr_owner = 70, .owner_cstack = 3,
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 68,
	.co_linetable = 136, .co_code_adaptive = 192,
	.ob_type = 8, .uni_length = 16, .uni_state = 32, .uni_ascii_size = 40,
	.uni_compact_size = 56, .bytes_size = 16, .bytes_sval = 32,
	.fr_is_entry = -1, .gil_in_runtime = -1, .gil_ptr_in_interp = 384,
	.gil_locked = 16, .gil_holder = 8,
};

int ms_py_table(unsigned minor, struct ms_py_offsets *out)
{
	if (minor == 11)
		*out = table311;
	else if (minor == 12)
		*out = table312;
	else
		return -1;
	return 0;
}

const char *ms_py_offsets_check(const struct ms_py_offsets *o)
{
	const uint32_t *u = (const uint32_t *)o;
	for (size_t i = 0; i < sizeof(*o) / sizeof(uint32_t); i++)
		if (u[i] >= MS_PY_OFFSET_MAX && (int32_t)u[i] != -1)
			return "an offset is out of range";
	if (o->uni_ascii_size < o->uni_state + 4 || o->uni_compact_size < o->uni_ascii_size)
		return "the unicode object sizes are out of order";
	if (o->gil_in_runtime >= 0 && o->gil_ptr_in_interp >= 0)
		return "the GIL is both in _PyRuntime and behind each interpreter";
	if ((o->gil_in_runtime >= 0 || o->gil_ptr_in_interp >= 0) &&
	    (o->gil_locked < 0 || o->gil_holder < 0))
		return "the GIL has no .locked or .last_holder";
	return NULL;
}

/* A candidate module: a file whose name says python, its first mapping. */
struct cand {
	uint64_t start, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	char path[PATH_MAX];
};
#define MAX_CANDS 8

struct scan {
	struct cand c[MAX_CANDS];
	unsigned n;
};

/* python3.X (the executable) or libpython3.X.so* */
static bool python_name(const char *b, size_t n)
{
	bool lib = n > 3 && memcmp(b, "lib", 3) == 0;
	if (lib)
		b += 3, n -= 3;
	if (n < 9 || memcmp(b, "python3.", 8) != 0)
		return false;
	size_t i = 8;
	while (i < n && b[i] >= '0' && b[i] <= '9')
		i++;
	if (i == 8)
		return false;
	if (!lib)
		return i == n;
	return n - i >= 3 && memcmp(b + i, ".so", 3) == 0;
}

static int scan_fn(const struct ms_maps_entry *e, void *data)
{
	struct scan *s = data;
	if (e->path_len == 0 || e->path[0] != '/' || e->deleted || e->path_len >= PATH_MAX)
		return 0;
	const char *base = memrchr(e->path, '/', e->path_len) + 1;
	if (!python_name(base, e->path_len - (size_t)(base - e->path)))
		return 0;
	for (unsigned i = 0; i < s->n; i++)
		if (s->c[i].maj == e->maj && s->c[i].min == e->min && s->c[i].ino == e->ino) {
			if (e->pgoff < s->c[i].pgoff) {
				s->c[i].pgoff = e->pgoff;
				s->c[i].start = e->start;
			}
			return 0;
		}
	if (s->n == MAX_CANDS)
		return 0;
	struct cand *c = &s->c[s->n++];
	c->start = e->start;
	c->pgoff = e->pgoff;
	c->maj = e->maj;
	c->min = e->min;
	c->ino = e->ino;
	memcpy(c->path, e->path, e->path_len);
	c->path[e->path_len] = '\0';
	return 0;
}

enum { SYM_RUNTIME, SYM_VERSION, SYM_CODE, SYM_UNICODE, SYM_BYTES, N_SYMS };
static const char *const sym_names[N_SYMS] = {
	"_PyRuntime", "Py_Version", "PyCode_Type", "PyUnicode_Type", "PyBytes_Type",
};

/* The defined symbols of sym_names in .dynsym and .symtab. */
static void find_syms(Elf *elf, uint64_t val[N_SYMS])
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    sh.sh_entsize == 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || s.st_value == 0)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || (name[0] != '_' && name[0] != 'P'))
				continue;
			for (int k = 0; k < N_SYMS; k++)
				if (!val[k] && strcmp(name, sym_names[k]) == 0)
					val[k] = s.st_value;
		}
	}
}

/* Check the table against the module's DWARF, or its debug file's. */
static int check_dwarf(const struct ms_elf_file *f, const char *path, unsigned minor,
		       const struct ms_py_offsets *o, char *err, size_t errlen)
{
	char why[256] = "";
	int rc = ms_elf_has_dwarf(f->elf) ? ms_py_dwarf_check(f->fd, minor, o, why, sizeof(why)) : 0;
	if (rc == 0 && f->build_id_len) {
		struct ms_debug_search opts = { .no_debuginfod = true };
		struct ms_debugfind *df = ms_debugfind_new(&opts);
		if (df) {
			struct ms_debug_file dbg;
			ms_debugfind_find(df, path, ms_elf_debuglink(f->elf), f->build_id,
					  f->build_id_len, &dbg);
			if (dbg.reason == MS_SYM_OK) {
				if (dbg.has_dwarf)
					rc = ms_py_dwarf_check(dbg.file.fd, minor, o, why, sizeof(why));
				ms_elf_file_close(&dbg.file);
			}
			ms_debugfind_free(df);
		}
	}
	if (rc < 0)
		snprintf(err, errlen, "python layout: %s: %s; refusing to read this interpreter", path, why);
	return rc;
}

/* Fill l from candidate c if its file defines _PyRuntime: 1, 0 (not it), -1 (err). */
static int try_cand(pid_t pid, const struct cand *c, struct ms_py_layout *l, char *err,
		    size_t errlen)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, c->path);
	struct ms_elf_file f;
	if (ms_elf_file_open(&f, path) != MS_SYM_OK)
		return 0;
	int rc = 0;
	if (major(f.st.st_dev) != c->maj || minor(f.st.st_dev) != c->min ||
	    (uint64_t)f.st.st_ino != c->ino) {
		snprintf(err, errlen,
			 "python layout: %s is not the file process %d mapped (replaced since; restart the program)",
			 c->path, (int)pid);
		rc = -1;
		goto out;
	}
	uint64_t sym[N_SYMS] = { 0 };
	find_syms(f.elf, sym);
	if (!sym[SYM_RUNTIME])
		goto out;
	for (int k = 1; k < N_SYMS; k++)
		if (!sym[k]) {
			snprintf(err, errlen, "python layout: %s defines _PyRuntime but not %s (not a CPython 3.11+ interpreter)",
				 c->path, sym_names[k]);
			rc = -1;
			goto out;
		}
	struct ms_elf_loads loads;
	uint64_t vaddr;
	if (ms_elf_loads_read(f.elf, &loads) < 0 || !ms_elf_loads_vaddr(&loads, c->pgoff, &vaddr)) {
		if (loads.load)
			ms_elf_loads_release(&loads);
		snprintf(err, errlen, "python layout: %s: no segment holds its first mapping (a corrupt file?)", c->path);
		rc = -1;
		goto out;
	}
	ms_elf_loads_release(&loads);
	memset(l, 0, sizeof(*l));
	l->bias = c->start - vaddr;
	snprintf(l->module, sizeof(l->module), "%s", c->path);
	l->runtime = sym[SYM_RUNTIME] + l->bias;
	l->code_type = sym[SYM_CODE] + l->bias;
	l->unicode_type = sym[SYM_UNICODE] + l->bias;
	l->bytes_type = sym[SYM_BYTES] + l->bias;
	uint64_t version;
	if (ms_py_read(pid, sym[SYM_VERSION] + l->bias, &version, sizeof(version)) < 0) {
		snprintf(err, errlen, "python layout: cannot read Py_Version of %s in process %d: %s",
			 c->path, (int)pid, strerror(errno));
		rc = -1;
		goto out;
	}
	l->version_hex = (uint32_t)version;
	l->major = (uint8_t)(version >> 24);
	l->minor = (uint8_t)(version >> 16);
	if (version >> 32 || l->major != 3 || l->minor < 11 || l->minor > 13) {
		snprintf(err, errlen,
			 "python layout: %s is CPython version 0x%llx; only 3.11, 3.12 and 3.13 are read",
			 c->path, (unsigned long long)version);
		rc = -1;
		goto out;
	}
	const char *why;
	if (l->minor >= 13) {
		uint8_t buf[MS_PY_DEBUG_OFFSETS_READ];
		if (ms_py_read(pid, l->runtime, buf, sizeof(buf)) < 0) {
			snprintf(err, errlen, "python layout: cannot read _PyRuntime of %s in process %d: %s",
				 c->path, (int)pid, strerror(errno));
			rc = -1;
			goto out;
		}
		why = ms_py_debug_offsets_parse(buf, sizeof(buf), l->version_hex, &l->off);
		l->source = MS_PY_SRC_DEBUG_OFFSETS;
	} else {
		ms_py_table(l->minor, &l->off);
		why = ms_py_offsets_check(&l->off);
		int d = why ? 1 : check_dwarf(&f, c->path, l->minor, &l->off, err, errlen);
		if (d < 0) {
			rc = -1;
			goto out;
		}
		l->source = d > 0 ? MS_PY_SRC_TABLE_DWARF : MS_PY_SRC_TABLE;
	}
	if (why) {
		snprintf(err, errlen, "python layout: %s: %s; refusing to read this interpreter", c->path, why);
		rc = -1;
		goto out;
	}
	rc = 1;
out:
	ms_elf_file_close(&f);
	return rc;
}

int ms_py_layout_find(pid_t pid, struct ms_py_layout *l, char *err, size_t errlen)
{
	if (ms_elf_setup() < 0) {
		snprintf(err, errlen, "python layout: libelf does not start");
		return -1;
	}
	struct scan s = { .n = 0 };
	if (ms_maps_read(pid, scan_fn, &s) < 0) {
		snprintf(err, errlen, "python layout: cannot read /proc/%d/maps (is the process alive, and may we read it?)",
			 (int)pid);
		return -1;
	}
	for (unsigned i = 0; i < s.n; i++) {
		int rc = try_cand(pid, &s.c[i], l, err, errlen);
		if (rc != 0)
			return rc > 0 ? 0 : -1;
	}
	snprintf(err, errlen,
		 "python layout: process %d maps no CPython interpreter (no python3.X or libpython3.X file defining _PyRuntime)",
		 (int)pid);
	return -1;
}

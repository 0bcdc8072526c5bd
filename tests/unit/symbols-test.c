/*
 * Unit tests of ms-symbolize's model (libcommon/symbols): symbol tables
 * from .symtab, .dynsym and kallsyms, the identity rule that decides
 * whether a module's file may be read, reasons instead of guesses, the
 * (module, address) cache, and the stage over a whole stream.
 *
 * Then source facts: inline chains with lines, demangled C++ names, debug
 * files found by build id in a --debug-dir (and refused with another build
 * id), function starts from .eh_frame in a stripped file, and the kernel's
 * identity and on-demand kallsyms.
 *
 * Files: tests/unit/data/elf-tiny and elf-tiny-stripped (built by the
 * suite from tiny.c), the fixtures tests/fixtures/inline and cxxtemplate,
 * and this test binary itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stream/records.h"
#include "stream/stream.h"
#include "symbols/symbolize.h"
#include "symbols/symtab.h"
#include "elf/elffile.h"
#include "util/error.h"
#include "elf-helpers.h"

static const uint8_t tiny_build_id[20] = {
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23,
	0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67,
};

/*
 * A symbol's value and size read straight from the file's tables (a plain
 * scan, independent of the code under test).
 */
static void elf_symbol(const char *path, const char *want, uint64_t *value, uint64_t *size)
{
	struct ms_elf_file f;
	Elf_Scn *scn = NULL;

	assert_int_equal(ms_elf_file_open(&f, path), MS_SYM_OK);
	while ((scn = elf_nextscn(f.elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			gelf_getsym(d, (int)i, &sym);
			name = elf_strptr(f.elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, want)) {
				*value = sym.st_value;
				*size = sym.st_size;
				ms_elf_file_close(&f);
				return;
			}
		}
	}
	ms_elf_file_close(&f);
	fail_msg("symbol %s not in %s", want, path);
}

static void load_symtab(struct ms_symtab *t, const char *path)
{
	struct ms_elf_file f;

	ms_symtab_init(t);
	assert_int_equal(ms_elf_file_open(&f, path), MS_SYM_OK);
	assert_int_equal(ms_symtab_load_elf(t, f.elf), 0);
	ms_elf_file_close(&f);
}

static void assert_names(const struct ms_symtab *t, uint64_t addr, const char *want)
{
	const struct ms_sym *s = ms_symtab_lookup(t, addr);

	if (!want) {
		if (s)
			fail_msg("0x%llx named %s, expected nothing", (unsigned long long)addr,
				 ms_symtab_name(t, s));
		return;
	}
	if (!s)
		fail_msg("0x%llx not named, expected %s", (unsigned long long)addr, want);
	assert_string_equal(ms_symtab_name(t, s), want);
}

static void test_symtab_tiny(void **state)
{
	const char *path = data_path("elf-tiny");
	uint64_t a, a_size, b, b_size, l, l_size, z, z_size;
	struct ms_symtab t;

	(void)state;
	elf_symbol(path, "tiny_alpha", &a, &a_size);
	elf_symbol(path, "tiny_beta", &b, &b_size);
	elf_symbol(path, "tiny_local", &l, &l_size);
	elf_symbol(path, "tiny_unsized", &z, &z_size);
	assert_true(a_size > 0);
	assert_int_equal(z_size, 0);
	load_symtab(&t, path);
	assert_names(&t, a, "tiny_alpha");
	assert_names(&t, a + a_size - 1, "tiny_alpha");
	assert_names(&t, b, "tiny_beta");
	assert_names(&t, b + b_size - 1, "tiny_beta");
	assert_names(&t, l, "tiny_local");
	/* The symbol without a size covers its own bytes (last resort). */
	assert_names(&t, z, "tiny_unsized");
	assert_names(&t, z + 1, "tiny_unsized");
	/* Nothing below the first function, nothing far past the text. */
	assert_names(&t, 1, NULL);
	assert_names(&t, 1ull << 40, NULL);
	assert_true(ms_symtab_count(&t) > 4);
	ms_symtab_release(&t);
}

static void test_symtab_stripped(void **state)
{
	const char *path = data_path("elf-tiny-stripped");
	uint64_t a, a_size;
	struct ms_symtab t;

	(void)state;
	elf_symbol(path, "tiny_alpha", &a, &a_size);
	load_symtab(&t, path);
	assert_int_equal(t.tier[MS_SYMS_SYMTAB].n, 0);
	assert_true(t.tier[MS_SYMS_DYNSYM].n > 0);
	assert_names(&t, a + 1, "tiny_alpha");
	ms_symtab_release(&t);
}

/* A kallsyms file in memory. */
static FILE *text_file(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	return f;
}

/*
 * A .symtab whose header claims 8M entries (192 MB) in a file of a few
 * kilobytes: loading it must not size its arrays by that claim (unbounded,
 * it populated 470 MB before libelf refused the section). Loaded in a
 * child, whose peak memory tells.
 */
static void test_symtab_claims_past_file(void **state)
{
	const char *path = data_path("elf-tiny");
	static unsigned char img[1 << 20];
	struct rusage ru;
	ssize_t len;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t idx = 0;
	int fd = open(path, O_RDONLY), status;
	pid_t pid;

	(void)state;
	assert_true(fd >= 0);
	len = read(fd, img, sizeof(img));
	close(fd);
	assert_true(len > 0 && len < (ssize_t)sizeof(img));
	elf_version(EV_CURRENT);
	assert_non_null(elf = elf_memory((char *)img, (size_t)len));
	assert_non_null(gelf_getehdr(elf, &eh));
	assert_int_equal(eh.e_ident[EI_CLASS], ELFCLASS64);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (sh.sh_type == SHT_SYMTAB)
			idx = elf_ndxscn(scn);
	}
	elf_end(elf);
	assert_true(idx > 0);
	{
		Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh.e_shoff + idx * eh.e_shentsize);

		sh->sh_size = (uint64_t)(8u << 20) * sizeof(Elf64_Sym);
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ms_symtab t;
		Elf *bad = elf_memory((char *)img, (size_t)len);

		ms_symtab_init(&t);
		/* refused or not, it must not have sized anything by the claim */
		(void)ms_symtab_load_elf(&t, bad);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &ru), 0);
	assert_true(ru.ru_maxrss < 64 * 1024);	/* KiB */
}

static void test_kallsyms(void **state)
{
	struct ms_symtab t;
	FILE *f = text_file(
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 t local_fn\n"
		"ffffffff81000080 T startup\n"
		"ffffffff81000200 d some_data\n"
		"ffffffff81000300 W weak_fn\n"
		"ffffffff81000300 T strong_fn\n"
		"ffffffffc0000000 t mod_fn\t[ext4]\n"
		"ffffffffc0000100 t mod_end\t[ext4]\n"
		"garbage line\n");

	(void)state;
	ms_symtab_init(&t);
	assert_int_equal(ms_symtab_load_kallsyms(&t, f), 0);
	fclose(f);
	assert_names(&t, 0xffffffff81000000, "_stext");
	assert_names(&t, 0xffffffff8100007f, "_stext");
	/* Out of order in the file; sorted in the table. */
	assert_names(&t, 0xffffffff81000090, "startup");
	assert_names(&t, 0xffffffff810001ff, "local_fn");
	/* Data ends the text symbol before it. */
	assert_names(&t, 0xffffffff81000200, NULL);
	/* Same address: global before weak. */
	assert_names(&t, 0xffffffff81000300, "strong_fn");
	assert_names(&t, 0xffffffffc0000010, "mod_fn");
	/* The last symbol covers nothing. */
	assert_names(&t, 0xffffffffc0000110, NULL);
	ms_symtab_release(&t);

	/* kptr_restrict: every address reads as 0. */
	f = text_file("0000000000000000 T _stext\n0000000000000000 t other\n");
	ms_symtab_init(&t);
	assert_int_equal(ms_symtab_load_kallsyms(&t, f), -1);
	ms_symtab_release(&t);
	fclose(f);
}

/* ---- the symbolizer ---- */

static struct ms_module file_module(uint32_t id, const char *path)
{
	struct ms_module m = {
		.id = id, .kind = MS_MODULE_FILE,
		.path = { path, (uint32_t)strlen(path) },
	};
	return m;
}

static struct ms_module stat_module(uint32_t id, const char *path)
{
	struct ms_module m = file_module(id, path);
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	m.dev_maj = major(sb.st_dev);
	m.dev_min = minor(sb.st_dev);
	m.ino = sb.st_ino;
	m.size = sb.st_size;
	m.mtime = ms_stat_mtime_ns(&sb);
	return m;
}

static bool has_problem(struct ms_symbolizer *s, const char *code)
{
	const struct ms_problems *p = ms_symbolizer_problems(s);

	for (uint32_t i = 0; i < p->n; i++)
		if (!strcmp(p->entries[i].code, code))
			return true;
	return false;
}

static struct ms_frame frame_of(struct ms_symbolizer *s, uint32_t module, uint64_t address,
				uint32_t flags, bool *is_new)
{
	struct ms_stack_frame f = { .module = module, .address = address, .flags = flags };
	struct ms_frame out;
	bool dummy;

	assert_int_equal(ms_symbolizer_frame(s, &f, &out, is_new ? is_new : &dummy), 0);
	assert_int_equal(out.module, module);
	assert_int_equal(out.address, address);
	return out;
}

static void assert_frame(const struct ms_frame *f, uint32_t reason, const char *name)
{
	assert_int_equal(f->reason, reason);
	if (!name) {
		assert_int_equal(f->name.len, 0);
		return;
	}
	assert_int_equal(f->name.len, strlen(name));
	assert_memory_equal(f->name.ptr, name, f->name.len);
}

static void test_symbolizer_build_id(void **state)
{
	const char *path = data_path("elf-tiny");
	struct ms_symbolizer *s = ms_symbolizer_new(NULL);
	struct ms_module good = file_module(0, path), wrong = file_module(1, path);
	uint64_t a, a_size, b, b_size;
	struct ms_frame f;
	bool is_new;

	(void)state;
	elf_symbol(path, "tiny_alpha", &a, &a_size);
	elf_symbol(path, "tiny_beta", &b, &b_size);
	good.build_id_len = 20;
	memcpy(good.build_id, tiny_build_id, 20);
	wrong.build_id_len = 20;
	memcpy(wrong.build_id, tiny_build_id, 20);
	wrong.build_id[19] ^= 1;
	assert_int_equal(ms_symbolizer_module(s, &good), 0);
	assert_int_equal(ms_symbolizer_module(s, &wrong), 0);

	f = frame_of(s, 0, a + 1, 0, &is_new);
	assert_true(is_new);
	assert_frame(&f, MS_SYM_OK, "tiny_alpha");
	assert_int_equal(f.symbol_start, a);
	/* Seen before: not new, same fact. */
	f = frame_of(s, 0, a + 1, 0, &is_new);
	assert_false(is_new);
	assert_frame(&f, MS_SYM_OK, "tiny_alpha");

	/* A return address just past tiny_beta's end names tiny_beta (the
	 * call), while the same address as an exact IP does not. */
	f = frame_of(s, 0, b + b_size, MS_FRAME_RETURN, NULL);
	assert_frame(&f, MS_SYM_OK, "tiny_beta");
	assert_int_equal(f.address, b + b_size);

	/* Same file, another build id: refused, never named. */
	f = frame_of(s, 1, a + 1, 0, NULL);
	assert_frame(&f, MS_SYM_IDENTITY, NULL);
	assert_int_equal(ms_symbolizer_stats(s)->unique, 3);
	assert_int_equal(ms_symbolizer_stats(s)->reasons[MS_SYM_IDENTITY], 1);
	assert_true(has_problem(s, "module-identity"));
	assert_int_equal(ms_symbolizer_stats(s)->modules_loaded, 1);
	ms_symbolizer_free(s);
}

static void test_symbolizer_file_identity(void **state)
{
	const char *path = data_path("elf-tiny");
	struct ms_symbolizer *s = ms_symbolizer_new(NULL);
	struct ms_module ok = stat_module(0, path), size0 = stat_module(1, path),
			 inode = stat_module(2, path), mtime = stat_module(3, path),
			 gone = stat_module(4, path);
	uint64_t a, a_size;
	struct ms_frame f;

	(void)state;
	elf_symbol(path, "tiny_alpha", &a, &a_size);
	size0.size = 0;		/* ms-unwind could not prove the file */
	inode.ino++;
	mtime.mtime++;
	gone.path.ptr = "/nonexistent/elf-tiny";
	gone.path.len = strlen(gone.path.ptr);
	assert_int_equal(ms_symbolizer_module(s, &ok), 0);
	assert_int_equal(ms_symbolizer_module(s, &size0), 0);
	assert_int_equal(ms_symbolizer_module(s, &inode), 0);
	assert_int_equal(ms_symbolizer_module(s, &mtime), 0);
	assert_int_equal(ms_symbolizer_module(s, &gone), 0);
	/* Described twice: refused. */
	assert_int_equal(ms_symbolizer_module(s, &ok), -1);

	f = frame_of(s, 0, a, 0, NULL);
	assert_frame(&f, MS_SYM_OK, "tiny_alpha");
	f = frame_of(s, 1, a, 0, NULL);
	assert_frame(&f, MS_SYM_IDENTITY, NULL);
	f = frame_of(s, 2, a, 0, NULL);
	assert_frame(&f, MS_SYM_IDENTITY, NULL);
	f = frame_of(s, 3, a, 0, NULL);
	assert_frame(&f, MS_SYM_IDENTITY, NULL);
	f = frame_of(s, 4, a, 0, NULL);
	assert_frame(&f, MS_SYM_NO_FILE, NULL);
	/* No symbol covers an address past the code. */
	f = frame_of(s, 0, 1ull << 40, 0, NULL);
	assert_frame(&f, MS_SYM_NO_SYMBOL, NULL);
	ms_symbolizer_free(s);
}

static void test_symbolizer_bad_elf(void **state)
{
	int fd = memfd_create("not-elf", 0);
	char path[64];
	struct ms_symbolizer *s = ms_symbolizer_new(NULL);
	struct ms_module m;
	struct ms_frame f;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an elf file at all\n", 23), 23);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	m = stat_module(0, path);
	assert_int_equal(ms_symbolizer_module(s, &m), 0);
	f = frame_of(s, 0, 0x10, 0, NULL);
	assert_frame(&f, MS_SYM_BAD_ELF, NULL);
	close(fd);
	ms_symbolizer_free(s);
}

static void test_symbolizer_kinds(void **state)
{
	int fd = memfd_create("kallsyms", 0);
	char path[64];
	static const char ksyms[] = "ffffffff81000000 T _stext\nffffffff81000100 T next_fn\n";
	struct ms_symbolize_options opts = { .kallsyms = path };
	struct ms_symbolizer *s;
	struct ms_module k = { .id = 0, .kind = MS_MODULE_KERNEL, .path = { "[kernel.kallsyms]", 17 } };
	struct ms_module v = { .id = 1, .kind = MS_MODULE_VDSO, .path = { "[vdso]", 6 } };
	struct ms_module a = { .id = 2, .kind = MS_MODULE_ANON, .path = { "//anon", 6 } };
	struct ms_module u = { .id = 3, .kind = MS_MODULE_UNKNOWN, .path = { "[unknown]", 9 } };
	struct ms_frame f;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, ksyms, sizeof(ksyms) - 1), (ssize_t)sizeof(ksyms) - 1);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	s = ms_symbolizer_new(&opts);
	ms_symbolizer_module(s, &k);
	ms_symbolizer_module(s, &v);
	ms_symbolizer_module(s, &a);
	ms_symbolizer_module(s, &u);
	f = frame_of(s, 0, 0xffffffff81000010, MS_FRAME_KERNEL, NULL);
	assert_frame(&f, MS_SYM_OK, "_stext");
	/* A kernel return address at the next function's start is the call in _stext. */
	f = frame_of(s, 0, 0xffffffff81000100, MS_FRAME_KERNEL | MS_FRAME_RETURN, NULL);
	assert_frame(&f, MS_SYM_OK, "_stext");
	f = frame_of(s, 1, 0x100, 0, NULL);
	assert_frame(&f, MS_SYM_NO_FILE, NULL);
	f = frame_of(s, 2, 0x7f0000001000, 0, NULL);
	assert_frame(&f, MS_SYM_NO_FILE, NULL);
	f = frame_of(s, 3, 0x1234, 0, NULL);
	assert_frame(&f, MS_SYM_NO_MODULE, NULL);
	/* A module no record described. */
	f = frame_of(s, 99, 0x1234, 0, NULL);
	assert_frame(&f, MS_SYM_NO_MODULE, NULL);
	ms_symbolizer_free(s);

	/* Unreadable kallsyms: kernel frames have no file. */
	close(fd);
	s = ms_symbolizer_new(&opts);
	ms_symbolizer_module(s, &k);
	f = frame_of(s, 0, 0xffffffff81000010, MS_FRAME_KERNEL, NULL);
	assert_frame(&f, MS_SYM_NO_FILE, NULL);
	assert_true(has_problem(s, "kallsyms-unreadable"));
	ms_symbolizer_free(s);
}

static void test_symbolizer_file_offset(void **state)
{
	const char *path = data_path("elf-tiny");
	struct ms_symbolizer *s = ms_symbolizer_new(NULL);
	struct ms_module m = file_module(0, path);
	struct ms_elf_file ef;
	struct ms_elf_loads loads;
	uint64_t a, a_size, off = 0;
	uint32_t i;
	struct ms_frame f;

	(void)state;
	elf_symbol(path, "tiny_alpha", &a, &a_size);
	/* The file offset of tiny_alpha, from the segment that holds it. */
	assert_int_equal(ms_elf_file_open(&ef, path), MS_SYM_OK);
	assert_int_equal(ms_elf_loads_read(ef.elf, &loads), 0);
	for (i = 0; i < loads.n; i++)
		if (a >= loads.load[i].vaddr && a - loads.load[i].vaddr < loads.load[i].filesz)
			off = a - loads.load[i].vaddr + loads.load[i].offset;
	ms_elf_loads_release(&loads);
	ms_elf_file_close(&ef);
	m.build_id_len = 20;
	memcpy(m.build_id, tiny_build_id, 20);
	ms_symbolizer_module(s, &m);
	f = frame_of(s, 0, off, MS_FRAME_FILE_OFFSET, NULL);
	assert_frame(&f, MS_SYM_OK, "tiny_alpha");
	assert_int_equal(f.address, off);
	ms_symbolizer_free(s);
}

/* A function of this program, named through its own .symtab. */
__attribute__((noinline)) int symbols_test_marker(int x);
__attribute__((noinline)) int symbols_test_marker(int x)
{
	return x * 5 + 1;
}

static void test_symbolizer_self(void **state)
{
	struct ms_symbolizer *s = ms_symbolizer_new(NULL);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint64_t pc = (uint64_t)(uintptr_t)&symbols_test_marker;
	struct ms_module m;
	struct ms_frame f;
	Dl_info dl;

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	m = stat_module(0, exe);
	assert_int_equal(ms_symbolizer_module(s, &m), 0);
	assert_true(dladdr((void *)(uintptr_t)pc, &dl) != 0);
	f = frame_of(s, 0, pc + 2 - (uint64_t)(uintptr_t)dl.dli_fbase, 0, NULL);
	assert_frame(&f, MS_SYM_OK, "symbols_test_marker");
	ms_symbolizer_free(s);
}

/* ---- source facts ---- */

static const char *fixture_path(const char *name)
{
	return beside_test("../fixtures", name);
}

/* The module record ms-unwind would write for path: its build id. */
static struct ms_module proved_module(uint32_t id, const char *path)
{
	struct ms_module m = file_module(id, path);
	struct ms_elf_file f;

	assert_int_equal(ms_elf_file_open(&f, path), MS_SYM_OK);
	assert_true(f.build_id_len > 0);
	m.build_id_len = f.build_id_len;
	memcpy(m.build_id, f.build_id, f.build_id_len);
	ms_elf_file_close(&f);
	return m;
}

/* Options that see no system debug directory and no debuginfod. */
static struct ms_symbolize_options isolated(const char *const *dirs, uint32_t n)
{
	struct ms_symbolize_options o = { .debug_dirs = dirs, .n_debug_dirs = n,
					  .system_debug_dir = "" };
	return o;
}

static void assert_line(const struct ms_frame_line *l, const char *function, const char *file_end)
{
	size_t n = strlen(file_end);

	if (l->function.len != strlen(function) || memcmp(l->function.ptr, function, l->function.len))
		fail_msg("function '%.*s', expected '%s'", (int)l->function.len, l->function.ptr,
			 function);
	if (l->file.len < n || memcmp(l->file.ptr + l->file.len - n, file_end, n))
		fail_msg("file '%.*s' does not end with '%s'", (int)l->file.len, l->file.ptr,
			 file_end);
	assert_true(l->line > 0);
}

static void test_symbolizer_inline_lines(void **state)
{
	const char *path = fixture_path("inline");
	struct ms_symbolize_options o = isolated(NULL, 0);
	struct ms_symbolizer *s = ms_symbolizer_new(&o);
	struct ms_module m = proved_module(0, path);
	uint64_t work, size, a;
	struct ms_frame f;
	bool found = false;

	(void)state;
	elf_symbol(path, "inline_work", &work, &size);
	assert_int_equal(ms_symbolizer_module(s, &m), 0);
	for (a = work; a < work + size && !found; a++) {
		f = frame_of(s, 0, a, 0, NULL);
		assert_frame(&f, MS_SYM_OK, "inline_work");
		assert_int_equal(f.symbol_start, work);
		assert_true(f.n_lines >= 1);
		assert_line(&f.lines[f.n_lines - 1], "inline_work", "tests/fixtures/inline.c");
		if (f.n_lines != 3)
			continue;
		found = true;
		assert_line(&f.lines[0], "mix", "tests/fixtures/inline.c");
		assert_line(&f.lines[1], "round_sum", "tests/fixtures/inline.c");
		assert_true(f.lines[0].function_line > 0);
	}
	assert_true(found);
	/* A return address at the function's end is the call before it. */
	f = frame_of(s, 0, work + size, MS_FRAME_RETURN, NULL);
	assert_frame(&f, MS_SYM_OK, "inline_work");
	assert_true(ms_symbolizer_stats(s)->debug_files == 1);
	ms_symbolizer_free(s);
}

static void test_symbolizer_cxx(void **state)
{
	const char *path = fixture_path("cxxtemplate");
	struct ms_symbolize_options o = isolated(NULL, 0);
	struct ms_symbolizer *s = ms_symbolizer_new(&o);
	struct ms_module m = proved_module(0, path);
	uint64_t a, size;
	struct ms_frame f;
	const struct ms_frame_line *outer;

	(void)state;
	assert_int_equal(ms_symbolizer_module(s, &m), 0);
	elf_symbol(path, "_ZNK4demo11AccumulatorIdE5totalEi", &a, &size);
	f = frame_of(s, 0, a + 1, 0, NULL);
	assert_frame(&f, MS_SYM_OK, "demo::Accumulator<double>::total(int) const");
	outer = &f.lines[f.n_lines - 1];
	assert_line(outer, "demo::Accumulator<double>::total(int) const", "cxxtemplate.cc");
	assert_int_equal(outer->system_name.len, strlen("_ZNK4demo11AccumulatorIdE5totalEi"));
	assert_memory_equal(outer->system_name.ptr, "_ZNK4demo11AccumulatorIdE5totalEi",
			    outer->system_name.len);
	elf_symbol(path, "_ZN4demo5scaleIlEET_S1_i", &a, &size);
	f = frame_of(s, 0, a + 1, 0, NULL);
	assert_frame(&f, MS_SYM_OK, "long demo::scale<long>(long, int)");
	ms_symbolizer_free(s);
}

/* A scratch directory with files copied in; removed by scratch_free(). */
struct scratch {
	char dir[64];
	char files[8][PATH_MAX];
	char dirs[8][PATH_MAX];
	int n_files, n_dirs;
};

static void scratch_mkdir(struct scratch *sc, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", sc->dir, rel);
	memcpy(sc->dirs[sc->n_dirs], path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);
	sc->n_dirs++;
}

static void scratch_copy(struct scratch *sc, const char *from, const char *rel)
{
	char buf[65536], path[PATH_MAX];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", sc->dir, rel);
	memcpy(sc->files[sc->n_files], path, sizeof(path));
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	close(in);
	close(out);
	sc->n_files++;
}

static void scratch_new(struct scratch *sc)
{
	memset(sc, 0, sizeof(*sc));
	snprintf(sc->dir, sizeof(sc->dir), "/tmp/symbols-test.XXXXXX");
	assert_non_null(mkdtemp(sc->dir));
}

static void scratch_free(struct scratch *sc)
{
	while (sc->n_files)
		unlink(sc->files[--sc->n_files]);
	while (sc->n_dirs)
		rmdir(sc->dirs[--sc->n_dirs]);
	rmdir(sc->dir);
}

static void test_symbolizer_debug_dir(void **state)
{
	const char *tiny = data_path("elf-tiny");
	const char *stripped = data_path("elf-tiny-stripped");
	struct scratch sc;
	const char *dirs[1];
	struct ms_symbolize_options o;
	struct ms_symbolizer *s;
	struct ms_module gone = file_module(0, "/nonexistent/elf-tiny");
	struct ms_module strip;
	uint64_t a, a_size;
	struct ms_frame f;

	(void)state;
	elf_symbol(tiny, "tiny_alpha", &a, &a_size);
	scratch_new(&sc);
	dirs[0] = sc.dir;
	o = isolated(dirs, 1);
	scratch_mkdir(&sc, ".build-id");
	scratch_mkdir(&sc, ".build-id/01");
	/* The tiny ELF as the debug file of its own build id... */
	scratch_copy(&sc, tiny, ".build-id/01/23456789abcdef0123456789abcdef01234567.debug");
	/* ...and, at the stripped build's path, a file of another build. */
	scratch_copy(&sc, tiny, ".build-id/01/23456789abcdef0123456789abcdef01234589.debug");

	s = ms_symbolizer_new(&o);
	/* The module's file is gone: its build id still proves the debug file. */
	gone.build_id_len = 20;
	memcpy(gone.build_id, tiny_build_id, 20);
	assert_int_equal(ms_symbolizer_module(s, &gone), 0);
	strip = proved_module(1, stripped);
	assert_int_equal(ms_symbolizer_module(s, &strip), 0);
	f = frame_of(s, 0, a + 1, 0, NULL);
	assert_frame(&f, MS_SYM_OK, "tiny_alpha");
	assert_true(f.n_lines >= 1);
	assert_line(&f.lines[f.n_lines - 1], "tiny_alpha", "tiny.c");

	/* The wrong build id is refused: names from .dynsym, and the reason. */
	elf_symbol(stripped, "tiny_alpha", &a, &a_size);
	f = frame_of(s, 1, a + 1, 0, NULL);
	assert_frame(&f, MS_SYM_DEBUG_MISMATCH, "tiny_alpha");
	assert_int_equal(f.n_lines, 0);
	assert_true(has_problem(s, "debug-build-id-mismatch"));
	ms_symbolizer_free(s);

	/* Without the directory: no debug file, no lines, named all the same. */
	o = isolated(NULL, 0);
	s = ms_symbolizer_new(&o);
	strip = proved_module(0, stripped);
	assert_int_equal(ms_symbolizer_module(s, &strip), 0);
	f = frame_of(s, 0, a + 1, 0, NULL);
	assert_frame(&f, MS_SYM_NO_DEBUG, "tiny_alpha");
	assert_true(has_problem(s, "no-debug-file"));
	ms_symbolizer_free(s);
	scratch_free(&sc);
}

/*
 * Every byte of [lo, hi) of module 0: a name (reason named_as), a function
 * start from .eh_frame (fde-only: the addresses of one function share its
 * start), or no-symbol. Counts the first two.
 */
static void walk_text(struct ms_symbolizer *s, uint64_t lo, uint64_t hi, uint32_t named_as,
		      uint32_t *named, uint32_t *fde_only)
{
	uint64_t fde = 0;
	struct ms_frame f;

	*named = *fde_only = 0;
	for (uint64_t a = lo; a < hi; a++) {
		f = frame_of(s, 0, a, 0, NULL);
		if (f.reason == named_as) {
			assert_true(f.name.len > 0);
			(*named)++;
		} else if (f.reason == MS_SYM_FDE_ONLY) {
			assert_int_equal(f.name.len, 0);
			assert_true(f.symbol_start <= a && f.symbol_start >= lo);
			if (fde && f.symbol_start != fde)
				assert_true(f.symbol_start > fde);
			fde = f.symbol_start;
			(*fde_only)++;
		} else if (f.reason == MS_SYM_NO_SYMBOL) {
			assert_int_equal(f.name.len, 0);
			assert_int_equal(f.symbol_start, 0);
		} else {
			fail_msg("0x%llx: reason %s", (unsigned long long)a,
				 ms_frame_reason_name(f.reason));
		}
	}
}

static void test_symbolizer_fde_only(void **state)
{
	const char *path = data_path("elf-tiny-stripped");
	struct ms_symbolize_options o = isolated(NULL, 0);
	struct ms_symbolizer *s = ms_symbolizer_new(&o);
	struct ms_module m = proved_module(0, path);
	uint64_t lo = 0, hi = 0;
	uint32_t named = 0, fde_only = 0;

	(void)state;
	text_range(path, &lo, &hi);
	assert_true(hi > lo);
	assert_int_equal(ms_symbolizer_module(s, &m), 0);
	/* Every byte of .text (a stripped file: names from .dynsym, no debug file). */
	walk_text(s, lo, hi, MS_SYM_NO_DEBUG, &named, &fde_only);
	/* tiny_local is static: not in .dynsym, but its FDE gives its start. */
	assert_true(named > 0);
	assert_true(fde_only > 0);
	ms_symbolizer_free(s);
}

/*
 * The vdso, from the image in the stream (here a stripped file's bytes):
 * .dynsym names its exported functions and .eh_frame gives the start of
 * its static ones (some kernels' vdso calls its own clock reader).
 */
static void test_symbolizer_vdso_image(void **state)
{
	const char *path = data_path("elf-tiny-stripped");
	struct ms_symbolizer *s;
	struct ms_module v = proved_module(0, path);
	uint64_t lo = 0, hi = 0;
	uint32_t named = 0, fde_only = 0;
	static uint8_t image[1 << 16];
	struct ms_vdso img = { .image = image };
	struct ms_frame f;
	struct stat st;
	int fd = open(path, O_RDONLY);

	(void)state;
	assert_true(fd >= 0 && fstat(fd, &st) == 0 && st.st_size <= (off_t)sizeof(image));
	assert_int_equal(read(fd, image, (size_t)st.st_size), st.st_size);
	close(fd);
	img.len = (uint32_t)st.st_size;
	text_range(path, &lo, &hi);
	v.kind = MS_MODULE_VDSO;
	s = ms_symbolizer_new(NULL);
	assert_int_equal(ms_symbolizer_vdso(s, &img), 0);
	assert_int_equal(ms_symbolizer_module(s, &v), 0);
	walk_text(s, lo, hi, MS_SYM_OK, &named, &fde_only);
	/* tiny_local is static: its FDE names it, as in a stripped file. */
	assert_true(named > 0);
	assert_true(fde_only > 0);
	ms_symbolizer_free(s);

	/* An image that is not the module's (another build id) names nothing. */
	v.build_id[0] ^= 0xff;
	s = ms_symbolizer_new(NULL);
	assert_int_equal(ms_symbolizer_vdso(s, &img), 0);
	assert_int_equal(ms_symbolizer_module(s, &v), 0);
	f = frame_of(s, 0, lo, 0, NULL);
	assert_frame(&f, MS_SYM_IDENTITY, NULL);
	assert_true(has_problem(s, "module-identity"));
	ms_symbolizer_free(s);
}

static void test_symbolizer_kernel(void **state)
{
	int kfd = memfd_create("kallsyms", 0), nfd = memfd_create("notes", 0);
	static const char ksyms[] = "ffffffff81000000 T _stext\nffffffff81000100 T next_fn\n";
	/* An ELF note: namesz 4, descsz 4, type 3 (GNU build id), "GNU", 4 bytes. */
	static const uint8_t notes[] = { 4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
					 0xde, 0xad, 0xbe, 0xef };
	char kpath[64], npath[64];
	struct ms_symbolize_options o = { .kallsyms = kpath, .kernel_notes = npath };
	struct ms_symbolizer *s;
	struct ms_module file = file_module(0, "/nonexistent/file");
	struct ms_module k = { .id = 1, .kind = MS_MODULE_KERNEL, .path = { "[kernel.kallsyms]", 17 },
			       .build_id_len = 4, .build_id = { 0xde, 0xad, 0xbe, 0xef } };
	struct ms_frame f;

	(void)state;
	assert_true(kfd >= 0 && nfd >= 0);
	assert_int_equal(write(kfd, ksyms, sizeof(ksyms) - 1), (ssize_t)sizeof(ksyms) - 1);
	assert_int_equal(write(nfd, notes, sizeof(notes)), (ssize_t)sizeof(notes));
	snprintf(kpath, sizeof(kpath), "/proc/self/fd/%d", kfd);
	snprintf(npath, sizeof(npath), "/proc/self/fd/%d", nfd);

	/* kallsyms is read only once a kernel module is described. */
	s = ms_symbolizer_new(&o);
	assert_false(ms_symbolizer_kernel_loading(s));
	assert_int_equal(ms_symbolizer_module(s, &file), 0);
	assert_false(ms_symbolizer_kernel_loading(s));
	assert_int_equal(ms_symbolizer_module(s, &k), 0);
	assert_true(ms_symbolizer_kernel_loading(s));
	/* The running kernel's build id is the module's: named. */
	f = frame_of(s, 1, 0xffffffff81000010, MS_FRAME_KERNEL, NULL);
	assert_frame(&f, MS_SYM_OK, "_stext");
	ms_symbolizer_free(s);

	/* Another kernel ran: its frames are refused, with a problem. */
	k.build_id[3] = 0xee;
	s = ms_symbolizer_new(&o);
	assert_int_equal(ms_symbolizer_module(s, &k), 0);
	f = frame_of(s, 1, 0xffffffff81000010, MS_FRAME_KERNEL, NULL);
	assert_frame(&f, MS_SYM_IDENTITY, NULL);
	assert_true(has_problem(s, "kernel-identity"));
	ms_symbolizer_free(s);

	/* A kernel module without a build id cannot be checked: kallsyms names it. */
	k.build_id_len = 0;
	s = ms_symbolizer_new(&o);
	assert_int_equal(ms_symbolizer_module(s, &k), 0);
	f = frame_of(s, 1, 0xffffffff81000020, MS_FRAME_KERNEL, NULL);
	assert_frame(&f, MS_SYM_OK, "_stext");
	ms_symbolizer_free(s);
	close(kfd);
	close(nfd);
}

/* ---- the stage ---- */

static int memfd(void)
{
	int fd = memfd_create("symbols-test", 0);

	assert_true(fd >= 0);
	return fd;
}

static int write_stacks(bool trailer)
{
	const char *path = data_path("elf-tiny");
	int fd = memfd();
	struct ms_writer *w = ms_writer_open(fd, "input", 0);
	struct ms_module m = file_module(0, path);
	struct ms_stack *st = calloc(1, sizeof(*st));
	uint64_t a, a_size, b, b_size;

	elf_symbol(path, "tiny_alpha", &a, &a_size);
	elf_symbol(path, "tiny_beta", &b, &b_size);
	m.build_id_len = 20;
	memcpy(m.build_id, tiny_build_id, 20);
	assert_non_null(w);
	assert_non_null(st);
	assert_int_equal(ms_writer_header(w, NULL, "symbols-test", "1"), 0);
	assert_int_equal(ms_module_pack(w, &m), 0);
	st->pid = st->tid = 5;
	st->reason = MS_END_FP_CHAIN;
	st->n_frames = 2;
	st->frames[0] = (struct ms_stack_frame){ .module = 0, .address = a + 1 };
	st->frames[1] = (struct ms_stack_frame){ .module = 0, .address = b + 4,
						 .flags = MS_FRAME_RETURN };
	assert_int_equal(ms_stack_pack(w, st), 0);
	assert_int_equal(ms_stack_pack(w, st), 0);
	if (trailer)
		assert_int_equal(ms_writer_trailer(w, true), 0);
	assert_int_equal(ms_writer_close(w), 0);
	lseek(fd, 0, SEEK_SET);
	free(st);
	return fd;
}

static void test_stage_stream(void **state)
{
	int in = write_stacks(true), out = memfd(), rr, n = 0;
	struct ms_symbolize_stats stats;
	struct ms_reader *r;
	struct ms_record rec;
	uint32_t kinds[16];
	struct ms_frame f;
	char names[2][32] = { "", "" };

	(void)state;
	assert_int_equal(ms_symbolize_stage(in, "input", out, NULL, &stats), MS_EXIT_OK);
	lseek(out, 0, SEEK_SET);
	r = ms_reader_open(out, "output");
	assert_non_null(r);
	while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD) {
		if (rec.kind == MS_REC_FRAME) {
			assert_int_equal(ms_frame_unpack(&rec, &f), 0);
			assert_true(f.name.len < 32);
			/* elf-tiny has debug information: each fact has its lines. */
			assert_true(f.n_lines >= 1);
			assert_int_equal(f.reason, MS_SYM_OK);
			memcpy(names[n == 1 ? 0 : 1], f.name.ptr, f.name.len);
		}
		if (n < 16)
			kinds[n] = rec.kind;
		n++;
	}
	assert_int_equal(rr, MS_READ_END);
	/* module, frame, frame, stack, stack: facts once, before their first stack. */
	assert_int_equal(n, 5);
	assert_int_equal(kinds[0], MS_REC_MODULE);
	assert_int_equal(kinds[1], MS_REC_FRAME);
	assert_int_equal(kinds[2], MS_REC_FRAME);
	assert_int_equal(kinds[3], MS_REC_STACK);
	assert_int_equal(kinds[4], MS_REC_STACK);
	assert_string_equal(names[0], "tiny_alpha");
	assert_string_equal(names[1], "tiny_beta");
	assert_int_equal(stats.stacks, 2);
	assert_int_equal(stats.frames, 4);
	assert_int_equal(stats.unique, 2);
	ms_reader_free(r);
	close(in);
	close(out);
}

static void test_stage_text_and_truncated(void **state)
{
	struct ms_symbolize_options opts = { .text = true };
	int in = write_stacks(true), out = memfd();
	char buf[512];
	ssize_t n;

	(void)state;
	assert_int_equal(ms_symbolize_stage(in, "input", out, &opts, NULL), MS_EXIT_OK);
	lseek(out, 0, SEEK_SET);
	n = read(out, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "5 5 0 fp-chain tiny_beta;tiny_alpha\n"
				 "5 5 0 fp-chain tiny_beta;tiny_alpha\n");
	close(in);
	close(out);

	/* Cut short: what was read is written, without a trailer, exit 3. */
	in = write_stacks(false);
	out = memfd();
	assert_int_equal(ms_symbolize_stage(in, "input", out, NULL, NULL), MS_EXIT_TRUNCATED);
	{
		struct ms_reader *r;
		struct ms_record rec;
		int rr, count = 0;

		lseek(out, 0, SEEK_SET);
		r = ms_reader_open(out, "output");
		assert_non_null(r);
		while ((rr = ms_reader_next(r, &rec)) == MS_READ_RECORD)
			count++;
		assert_int_equal(rr, MS_READ_TRUNCATED);
		assert_int_equal(count, 5);
		ms_reader_free(r);
	}
	close(in);
	close(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symtab_tiny),
		cmocka_unit_test(test_symtab_claims_past_file),
		cmocka_unit_test(test_symtab_stripped),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_symbolizer_build_id),
		cmocka_unit_test(test_symbolizer_file_identity),
		cmocka_unit_test(test_symbolizer_bad_elf),
		cmocka_unit_test(test_symbolizer_kinds),
		cmocka_unit_test(test_symbolizer_file_offset),
		cmocka_unit_test(test_symbolizer_self),
		cmocka_unit_test(test_symbolizer_inline_lines),
		cmocka_unit_test(test_symbolizer_cxx),
		cmocka_unit_test(test_symbolizer_debug_dir),
		cmocka_unit_test(test_symbolizer_fde_only),
		cmocka_unit_test(test_symbolizer_vdso_image),
		cmocka_unit_test(test_symbolizer_kernel),
		cmocka_unit_test(test_stage_stream),
		cmocka_unit_test(test_stage_text_and_truncated),
	};

	ms_set_progname("symbols-test");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

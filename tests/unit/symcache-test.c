/*
 * Unit tests of the module symbol cache (libcommon/symbols/symcache.h): a
 * table read from a small ELF file (sized .symtab functions, some nested,
 * some at one address; sized .dynsym functions, some shadowed by .symtab
 * ones at the same address; functions of both without a size) stored and
 * mapped again answers every lookup as the table in memory does: at each
 * symbol's start, end - 1, the gaps, and a sweep over the whole text. A
 * cache of another key (build id, size, files read) or cut short or grown
 * is refused; one damaged in a symbol, a name, a fence or a check makes
 * the lookups that meet the damage report it, never answer with another
 * symbol. Then the symbolizer: it fills the cache, maps it, drops a
 * damaged one for the ELF file (naming every frame the same) and rewrites
 * it, and writes nothing without a cache directory.
 *
 * Files: temporary ones under $TMPDIR, the ELF file written here with
 * libelf.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/records.h"
#include "symbols/symbolize.h"
#include "symbols/symcache.h"
#include "symbols/symfile.h"
#include "symbols/symtab.h"
#include "util/cachefile.h"
#include "elf/elffile.h"
#include "util/error.h"
#include "tmpdir.h"

#define TEXT 0x10000ull
#define TEXT_SIZE 0x40000ull
#define N_FUNCS 300u

static char dir[256];
static char elf_path[300];

static const uint8_t bid[20] = {
	0x5e, 0x1f, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01, 0x02,
};

struct symbuf {
	Elf64_Sym syms[1024];
	size_t n;
	char str[32768];
	size_t str_len;
};

static void add(struct symbuf *b, const char *name, uint64_t value, uint64_t size, int bind)
{
	Elf64_Sym *s = &b->syms[b->n++];
	size_t len = strlen(name) + 1;

	assert_true(b->n <= 1024 && b->str_len + len <= sizeof(b->str));
	memset(s, 0, sizeof(*s));
	s->st_name = (Elf64_Word)b->str_len;
	s->st_value = value;
	s->st_size = size;
	s->st_info = ELF64_ST_INFO(bind, STT_FUNC);
	s->st_shndx = 1;	/* .text */
	memcpy(b->str + b->str_len, name, len);
	b->str_len += len;
}

static void init_buf(struct symbuf *b)
{
	memset(b, 0, sizeof(*b));
	b->n = 1;		/* the null symbol */
	b->str_len = 1;	/* the empty name */
}

static Elf_Scn *section(Elf *e, uint32_t name, uint32_t type, void *buf, size_t size,
			Elf_Type dtype, uint64_t addr, uint32_t link, uint64_t entsize, uint64_t flags)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d;
	Elf64_Shdr *sh;

	assert_non_null(scn);
	assert_non_null(d = elf_newdata(scn));
	d->d_buf = buf;
	d->d_size = size;
	d->d_type = dtype;
	d->d_align = type == SHT_NOTE ? 4 : 8;	/* a note of 4-byte alignment */
	d->d_version = EV_CURRENT;
	assert_non_null(sh = elf64_getshdr(scn));
	sh->sh_name = name;
	sh->sh_type = type;
	sh->sh_flags = flags;
	sh->sh_addr = addr;
	sh->sh_link = link;
	sh->sh_entsize = entsize;
	if (type == SHT_NOBITS)
		sh->sh_size = size;
	return scn;
}

/*
 * The test's ELF file. .symtab: s<i> every 0x100 bytes, 0x80 long (every
 * tenth from 5 0x300 long: nesting the next two), global, weak and local
 * in turn; a_dup<i> at the same start as every 25th; u<i> without a size
 * in the gap of some. .dynsym: d<i> at every other s<i> (shadowed), g<i>
 * in some gaps, v<i> without a size in others; "tail" without a size near
 * the text's end (cut there). extra_size grows the file (another size).
 */
static void write_elf(const char *path, const uint8_t *id, size_t extra_size)
{
	static const char shstr[] = "\0.text\0.note.gnu.build-id\0.symtab\0.strtab\0"
				    ".dynsym\0.dynstr\0.shstrtab\0.comment";
	static struct symbuf st, dy;
	uint8_t note[16 + 20];
	uint32_t nh[3] = { 4, 20, NT_GNU_BUILD_ID };
	static char pad[8192];
	char name[32];
	Elf64_Ehdr *eh;
	Elf *e;
	int fd;
	uint32_t i;

	init_buf(&st);
	init_buf(&dy);
	for (i = 0; i < N_FUNCS; i++) {
		uint64_t at = TEXT + i * 0x100ull;
		static const int binds[3] = { STB_GLOBAL, STB_WEAK, STB_LOCAL };

		snprintf(name, sizeof(name), "s%u", i);
		add(&st, name, at, i % 10 == 5 ? 0x300 : 0x80, binds[i % 3]);
		if (i % 25 == 0) {
			snprintf(name, sizeof(name), "a_dup%u", i);
			add(&st, name, at, 0x40, STB_LOCAL);
		}
		if (i % 7 == 3) {
			snprintf(name, sizeof(name), "u%u", i);
			add(&st, name, at + 0xc0, 0, STB_LOCAL);
		}
		if (i % 2 == 0) {
			snprintf(name, sizeof(name), "d%u", i);
			add(&dy, name, at, 0x80, STB_GLOBAL);
		}
		if (i % 4 == 1) {
			snprintf(name, sizeof(name), "g%u", i);
			add(&dy, name, at + 0x90, 0x20, STB_GLOBAL);
		}
		if (i % 11 == 4) {
			snprintf(name, sizeof(name), "v%u", i);
			add(&dy, name, at + 0xe0, 0, STB_GLOBAL);
		}
	}
	add(&st, "tail", TEXT + TEXT_SIZE - 0x20, 0, STB_GLOBAL);
	memcpy(note, nh, sizeof(nh));
	memcpy(note + 12, "GNU", 4);
	memcpy(note + 16, id, 20);

	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_non_null(e = elf_begin(fd, ELF_C_WRITE, NULL));
	assert_non_null(eh = elf64_newehdr(e));
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	/* 1 .text, 2 note, 3 .symtab, 4 .strtab, 5 .dynsym, 6 .dynstr, 7 .shstrtab, 8 padding */
	section(e, 1, SHT_NOBITS, NULL, TEXT_SIZE, ELF_T_BYTE, TEXT, 0, 0,
		SHF_ALLOC | SHF_EXECINSTR);
	section(e, 7, SHT_NOTE, note, sizeof(note), ELF_T_BYTE, 0, 0, 0, SHF_ALLOC);
	section(e, 26, SHT_SYMTAB, st.syms, st.n * sizeof(Elf64_Sym), ELF_T_SYM, 0, 4,
		sizeof(Elf64_Sym), 0);
	section(e, 34, SHT_STRTAB, st.str, st.str_len, ELF_T_BYTE, 0, 0, 0, 0);
	section(e, 42, SHT_DYNSYM, dy.syms, dy.n * sizeof(Elf64_Sym), ELF_T_SYM, 0, 6,
		sizeof(Elf64_Sym), SHF_ALLOC);
	section(e, 50, SHT_STRTAB, dy.str, dy.str_len, ELF_T_BYTE, 0, 0, 0, SHF_ALLOC);
	section(e, 58, SHT_STRTAB, (void *)shstr, sizeof(shstr), ELF_T_BYTE, 0, 0, 0, 0);
	section(e, 68, SHT_PROGBITS, pad, extra_size, ELF_T_BYTE, 0, 0, 0, 0);
	eh->e_shstrndx = 7;
	assert_true(elf_update(e, ELF_C_WRITE) > 0);
	elf_end(e);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	tmpdir_make(dir, sizeof(dir), "symcache-test");
	snprintf(elf_path, sizeof(elf_path), "%s/mod.so", dir);
	write_elf(elf_path, bid, 16);
	unsetenv("DEBUGINFOD_URLS");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

/* The in-memory table of path, and its file's key (the module's file alone). */
static void load(struct ms_symtab *t, struct ms_symcache_key *k, const char *path)
{
	struct ms_elf_file f;
	struct ms_symcache_src src;

	assert_int_equal(ms_elf_file_open(&f, path), MS_SYM_OK);
	assert_int_equal(f.build_id_len, 20);
	ms_symtab_init(t);
	assert_int_equal(ms_symtab_load_elf(t, f.elf), 0);
	src = (struct ms_symcache_src){ f.build_id, f.build_id_len, (uint64_t)f.st.st_size };
	assert_int_equal(ms_symcache_key(k, NULL, &src), 0);
	ms_elf_file_close(&f);
}

static void cache_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static bool same(const struct ms_symtab *a, const struct ms_sym *x, const struct ms_symtab *b,
		 const struct ms_sym *y)
{
	if (!x || !y)
		return x == y;
	return x->start == y->start && x->size == y->size && x->rank == y->rank &&
	       !strcmp(ms_symtab_name(a, x), ms_symtab_name(b, y));
}

/*
 * Look addr up in m (mapped) and t (memory). With strict, the answers must
 * be the same and m must not report damage; else m may report damage
 * (answering NULL) but never answer otherwise than t. Returns whether m
 * reported damage.
 */
static bool check_at(const struct ms_symtab *t, const struct ms_symtab *m, uint64_t addr,
		     bool strict)
{
	const struct ms_sym *x = ms_symtab_lookup(t, addr), *y;
	bool bad;

	y = ms_symtab_lookup_checked(m, addr, &bad);
	if (bad) {
		if (strict)
			fail_msg("0x%llx: the mapped table reports damage", (unsigned long long)addr);
		assert_null(y);
		return true;
	}
	if (!same(t, x, m, y))
		fail_msg("0x%llx: in memory %s, mapped %s", (unsigned long long)addr,
			 x ? ms_symtab_name(t, x) : "none", y ? ms_symtab_name(m, y) : "none");
	return false;
}

/* Every symbol's edges and a sweep over the text; the count of lookups reporting damage. */
static uint32_t check_all(const struct ms_symtab *t, const struct ms_symtab *m, bool strict)
{
	uint32_t bad = 0, k, i;
	uint64_t a;

	for (k = 0; k < MS_SYMS_TIERS; k++) {
		for (i = 0; i < t->tier[k].n; i++) {
			const struct ms_sym *s = &t->tier[k].syms[i];

			bad += check_at(t, m, s->start, strict);
			bad += check_at(t, m, s->start + s->size - 1, strict);
			bad += check_at(t, m, s->start + s->size, strict);
			bad += check_at(t, m, s->start - 1, strict);
		}
	}
	for (a = TEXT - 0x100; a < TEXT + TEXT_SIZE + 0x100; a += 8)
		bad += check_at(t, m, a, strict);
	bad += check_at(t, m, 0, strict);
	bad += check_at(t, m, UINT64_MAX, strict);
	return bad;
}

static void test_round_trip(void **state)
{
	struct ms_symtab t, m;
	struct ms_symcache_key k;
	char path[400];
	uint32_t i;
	const struct ms_sym *s;

	(void)state;
	load(&t, &k, elf_path);
	/* The table has what the test is about: three tiers, several spans, shadowing. */
	assert_true(t.tier[MS_SYMS_SYMTAB].n > 2 * MS_SYMS_SPAN);
	assert_true(t.tier[MS_SYMS_DYNSYM].n > MS_SYMS_SPAN);
	assert_true(t.tier[MS_SYMS_UNSIZED].n > 0);
	s = ms_symtab_lookup(&t, TEXT + 2 * 0x100);
	assert_non_null(s);
	assert_string_equal(ms_symtab_name(&t, s), "s2");	/* not d2 */
	s = ms_symtab_lookup(&t, TEXT + 6 * 0x100 + 0x10);
	assert_string_equal(ms_symtab_name(&t, s), "s6");	/* inner of nested s5 */
	s = ms_symtab_lookup(&t, TEXT + 6 * 0x100 + 0x90);
	assert_string_equal(ms_symtab_name(&t, s), "s5");	/* outer, past the inner's end */
	s = ms_symtab_lookup(&t, TEXT + 9 * 0x100 + 0x98);
	assert_string_equal(ms_symtab_name(&t, s), "g9");	/* a .dynsym gap */
	s = ms_symtab_lookup(&t, TEXT + 3 * 0x100 + 0xd0);
	assert_string_equal(ms_symtab_name(&t, s), "u3");	/* no size */
	s = ms_symtab_lookup(&t, TEXT + 25 * 0x100);
	assert_string_equal(ms_symtab_name(&t, s), "s25");	/* global s25 over local a_dup25 */

	cache_path(path, sizeof(path), "rt.syms");
	assert_int_equal(ms_symcache_store(&t, path, &k), 0);
	assert_int_equal(ms_symcache_load(&m, path, &k), 0);
	assert_non_null(m.map);
	for (i = 0; i < MS_SYMS_TIERS; i++) {
		assert_int_equal(m.tier[i].n, t.tier[i].n);
		/* Each tier on its own pages: a span is one page. */
		assert_int_equal(((char *)m.tier[i].syms - (char *)m.map) % 4096, 0);
	}
	assert_int_equal(check_all(&t, &m, true), 0);
	ms_symtab_release(&m);
	assert_null(m.map);
	/* A mapped table is not stored again. */
	ms_symtab_release(&t);
}

static void test_key(void **state)
{
	struct ms_symtab t, m;
	struct ms_symcache_key k, k2;
	struct ms_symcache_src a = { bid, 20, 1000 }, b = a;
	uint8_t other[20];
	char path[400], other_elf[400];

	(void)state;
	/* Nothing read, or a file read without a build id: no key, no cache. */
	assert_int_equal(ms_symcache_key(&k2, NULL, NULL), -1);
	b.build_id_len = 0;
	assert_int_equal(ms_symcache_key(&k2, &a, &b), -1);
	assert_int_equal(ms_symcache_key(&k2, &b, NULL), -1);
	/* Debug file and module file are told apart. */
	assert_int_equal(ms_symcache_key(&k, &a, NULL), 0);
	assert_int_equal(ms_symcache_key(&k2, NULL, &a), 0);
	assert_memory_not_equal(&k, &k2, sizeof(k));
	assert_null(ms_symcache_path(bid, 0));

	load(&t, &k, elf_path);
	cache_path(path, sizeof(path), "key.syms");
	assert_int_equal(ms_symcache_store(&t, path, &k), 0);
	/* The file of another build id. */
	memcpy(other, bid, sizeof(other));
	other[19] ^= 1;
	snprintf(other_elf, sizeof(other_elf), "%s/other-id.so", dir);
	write_elf(other_elf, other, 16);
	ms_symtab_release(&t);
	load(&t, &k2, other_elf);
	assert_memory_not_equal(&k, &k2, sizeof(k));
	assert_int_equal(ms_symcache_load(&m, path, &k2), -1);
	ms_symtab_release(&t);
	/* The same build id, another size. */
	snprintf(other_elf, sizeof(other_elf), "%s/other-size.so", dir);
	write_elf(other_elf, bid, 32);
	load(&t, &k2, other_elf);
	assert_memory_not_equal(&k, &k2, sizeof(k));
	assert_int_equal(ms_symcache_load(&m, path, &k2), -1);
	/* The same file read as a debug file, or with a debug file besides. */
	memcpy(&k2, &k, sizeof(k));
	k2.files = 1;
	assert_int_equal(ms_symcache_load(&m, path, &k2), -1);
	k2.files = 3;
	assert_int_equal(ms_symcache_load(&m, path, &k2), -1);
	/* The right key still loads. */
	assert_int_equal(ms_symcache_load(&m, path, &k), 0);
	ms_symtab_release(&m);
	ms_symtab_release(&t);
	/* Missing file. */
	cache_path(path, sizeof(path), "missing.syms");
	assert_int_equal(ms_symcache_load(&m, path, &k), -1);
}

static size_t file_bytes(const char *path, uint8_t **out)
{
	struct stat st;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	*out = malloc((size_t)st.st_size + 8192);
	assert_non_null(*out);
	assert_int_equal(fread(*out, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	return (size_t)st.st_size;
}

static void put_file(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/*
 * The common header's version (util/cachefile.h); the fields of the own
 * header of symbols/symfile.h, which follows it (u32 sym_size, span,
 * key_len, 0, the key in MS_SYMFILE_KEY_MAX bytes, the counts).
 */
#define COMMON ((int)sizeof(struct ms_cachefile))
#define OFF_VERSION offsetof(struct ms_cachefile, version)
#define OFF_SYM_SIZE (COMMON + 0)
#define OFF_SPAN (COMMON + 4)
#define OFF_N (COMMON + 16 + MS_SYMFILE_KEY_MAX)
#define OFF_N_FENCES (OFF_N + 8 * MS_SYMS_TIERS)
#define OFF_NAMES_LEN (OFF_N_FENCES + 8)

static void test_sizes(void **state)
{
	struct ms_symtab t, m;
	struct ms_symcache_key k;
	char path[400], cut[400];
	uint8_t *buf;
	size_t len;
	uint64_t v;
	static const long deltas[] = { -1, -8, -4096, 1, 8, 4096 };

	(void)state;
	load(&t, &k, elf_path);
	cache_path(path, sizeof(path), "sizes.syms");
	cache_path(cut, sizeof(cut), "sizes-cut.syms");
	assert_int_equal(ms_symcache_store(&t, path, &k), 0);
	len = file_bytes(path, &buf);
	memset(buf + len, 0, 8192);
	/* Cut short or grown, by a byte, a word, a page: refused. */
	for (size_t i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
		put_file(cut, buf, (size_t)((long)len + deltas[i]));
		assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
	}
	put_file(cut, buf, len / 2);
	assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
	put_file(cut, buf, 4096);
	assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
	put_file(cut, buf, 100);
	assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
	put_file(cut, buf, 0);
	assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
	/* The whole file loads: the offsets below are the header's. */
	put_file(cut, buf, len);
	assert_int_equal(ms_symcache_load(&m, cut, &k), 0);
	memcpy(&v, buf + OFF_N, 8);
	assert_int_equal(v, m.tier[0].n);
	memcpy(&v, buf + OFF_NAMES_LEN, 8);
	assert_int_equal(v, m.names_len);
	ms_symtab_release(&m);
	/*
	 * Each count off by one: refused, but for a symbol count that the
	 * padding of its tier's last page hides: then lookups that meet that
	 * span report it (its check covers as many symbols as were written).
	 */
	for (int off = OFF_N; off <= OFF_NAMES_LEN; off += 8) {
		for (int d = -1; d <= 1; d += 2) {
			uint8_t *c = malloc(len);

			memcpy(c, buf, len);
			memcpy(&v, c + off, 8);
			v += (uint64_t)(int64_t)d;
			memcpy(c + off, &v, 8);
			/* Sealed again: the header's CRC must not be what refuses it. */
			ms_cachefile_seal(c, len);
			put_file(cut, c, len);
			if (ms_symcache_load(&m, cut, &k) == 0) {
				assert_true(off < OFF_N_FENCES);
				assert_true(check_all(&t, &m, false) > 0);
				ms_symtab_release(&m);
			}
			free(c);
		}
	}
	/* A count off by one, not sealed again: the header's CRC refuses it. */
	{
		uint8_t *c = malloc(len);

		memcpy(c, buf, len);
		c[OFF_NAMES_LEN] ^= 1;
		put_file(cut, c, len);
		assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
		free(c);
	}
	/* The version, the record's size, the span. */
	buf[OFF_VERSION] ^= 0x40;
	put_file(cut, buf, len);
	assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
	buf[OFF_VERSION] ^= 0x40;
	buf[OFF_SYM_SIZE] ^= 0x40;
	put_file(cut, buf, len);
	assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
	buf[OFF_SYM_SIZE] ^= 0x40;
	buf[OFF_SPAN] ^= 0x40;
	put_file(cut, buf, len);
	assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
	buf[OFF_SPAN] ^= 0x40;
	put_file(cut, buf, len);
	assert_int_equal(ms_symcache_load(&m, cut, &k), 0);
	ms_symtab_release(&m);
	/* The names' last NUL. */
	buf[len - 1] = 'x';
	put_file(cut, buf, len);
	assert_int_equal(ms_symcache_load(&m, cut, &k), -1);
	free(buf);
	ms_symtab_release(&t);
}

/*
 * A copy of the cache with the bytes at off replaced; every lookup either
 * answers as memory does or reports damage, and at least one near the
 * damage (at want, unless 0) reports it.
 */
static void damaged(const struct ms_symtab *t, const struct ms_symcache_key *k, const uint8_t *buf,
		    size_t len, size_t off, const void *bytes, size_t n, uint64_t want)
{
	struct ms_symtab m;
	char path[400];
	uint8_t *c = malloc(len);
	bool bad;

	assert_non_null(c);
	memcpy(c, buf, len);
	assert_memory_not_equal(c + off, bytes, n);
	memcpy(c + off, bytes, n);
	cache_path(path, sizeof(path), "damaged.syms");
	put_file(path, c, len);
	free(c);
	assert_int_equal(ms_symcache_load(&m, path, k), 0);
	if (want && (ms_symtab_lookup_checked(&m, want, &bad) || !bad))
		fail_msg("damage at byte %zu: the lookup at 0x%llx does not report it", off,
			 (unsigned long long)want);
	assert_true(check_all(t, &m, false) > 0);
	ms_symtab_release(&m);
}

/*
 * A symbol of tier k of m, from index i on, that a lookup at its start
 * gets from that tier (not from one before it).
 */
static const struct ms_sym *pick(const struct ms_symtab *t, const struct ms_symtab *m, int k,
				 uint32_t i)
{
	for (; i < m->tier[k].n; i++) {
		const struct ms_sym *s = ms_symtab_lookup(t, m->tier[k].syms[i].start);

		if (s >= t->tier[k].syms && s < t->tier[k].syms + t->tier[k].n)
			return &m->tier[k].syms[i];
	}
	fail_msg("no symbol of tier %d from %u answers for itself", k, i);
	return NULL;
}

static void test_corrupt(void **state)
{
	struct ms_symtab t, m;
	struct ms_symcache_key k;
	char path[400];
	uint8_t *buf;
	size_t len;
	const struct ms_sym *s;
	struct ms_sym sym;
	uint64_t v;
	uint32_t u;
	char ch;

	(void)state;
	load(&t, &k, elf_path);
	cache_path(path, sizeof(path), "corrupt.syms");
	assert_int_equal(ms_symcache_store(&t, path, &k), 0);
	len = file_bytes(path, &buf);
	assert_int_equal(ms_symcache_load(&m, path, &k), 0);
#define AT(p) ((size_t)((const uint8_t *)(p) - (const uint8_t *)m.map))

	/* .symtab s150 (second span) 0x40 longer: over its gap, a plausible nesting. */
	s = pick(&t, &m, MS_SYMS_SYMTAB, 150);
	sym = *s;
	sym.size += 0x40;
	damaged(&t, &k, buf, len, AT(s), &sym, sizeof(sym), s->start + 0x90);
	/* Its start 8 later: still in order. */
	sym = *s;
	sym.start += 8;
	damaged(&t, &k, buf, len, AT(s), &sym, sizeof(sym), s->start + 0x10);
	/* Its rank. */
	sym = *s;
	sym.rank = (sym.rank + 1) % 3;
	damaged(&t, &k, buf, len, AT(s), &sym, sizeof(sym), s->start);
	/* A .dynsym symbol's name one byte on: another name, still inside the names. */
	s = pick(&t, &m, MS_SYMS_DYNSYM, 140);
	u = s->name + 1;
	damaged(&t, &k, buf, len, AT(&s->name), &u, sizeof(u), s->start);
	/* A byte of that name. */
	ch = ms_symtab_name(&m, s)[0] == 'x' ? 'y' : 'x';
	damaged(&t, &k, buf, len, AT(ms_symtab_name(&m, s)), &ch, 1, s->start);
	/* A symbol without a size, its size. */
	s = pick(&t, &m, MS_SYMS_UNSIZED, 3);
	sym = *s;
	sym.size += 0x10;
	damaged(&t, &k, buf, len, AT(s), &sym, sizeof(sym), s->start);
	/* No size. */
	s = pick(&t, &m, MS_SYMS_SYMTAB, 20);
	sym = *s;
	sym.size = 0;
	damaged(&t, &k, buf, len, AT(s), &sym, sizeof(sym), s->start);
	/* The fence of .symtab's third span, a little lower (above the symbol before it). */
	v = m.fences[m.tier[MS_SYMS_SYMTAB].fence + 2] - 0x10;
	damaged(&t, &k, buf, len, AT(&m.fences[m.tier[MS_SYMS_SYMTAB].fence + 2]), &v, sizeof(v),
		m.tier[MS_SYMS_SYMTAB].syms[2 * MS_SYMS_SPAN].start);
	/* ... and higher: an address of the span's first symbol is searched in the span before. */
	v = m.fences[m.tier[MS_SYMS_SYMTAB].fence + 2] + 0x10;
	damaged(&t, &k, buf, len, AT(&m.fences[m.tier[MS_SYMS_SYMTAB].fence + 2]), &v, sizeof(v),
		m.tier[MS_SYMS_SYMTAB].syms[2 * MS_SYMS_SPAN].start);
	/* .dynsym's second fence. */
	v = m.fences[m.tier[MS_SYMS_DYNSYM].fence + 1] + 1;
	damaged(&t, &k, buf, len, AT(&m.fences[m.tier[MS_SYMS_DYNSYM].fence + 1]), &v, sizeof(v),
		pick(&t, &m, MS_SYMS_DYNSYM, MS_SYMS_SPAN)->start);
	/* A span's check. */
	u = m.checks[m.tier[MS_SYMS_DYNSYM].fence].crc ^ 0x100;
	damaged(&t, &k, buf, len, AT(&m.checks[m.tier[MS_SYMS_DYNSYM].fence].crc), &u, sizeof(u),
		pick(&t, &m, MS_SYMS_DYNSYM, 0)->start);
	/* Its names' end. */
	u = m.checks[m.tier[MS_SYMS_SYMTAB].fence].names_end - 1;
	damaged(&t, &k, buf, len, AT(&m.checks[m.tier[MS_SYMS_SYMTAB].fence].names_end), &u,
		sizeof(u), m.tier[MS_SYMS_SYMTAB].syms[1].start);
#undef AT
	ms_symtab_release(&m);
	free(buf);
	ms_symtab_release(&t);
}

/* ---- the symbolizer ---- */

static struct ms_module module_rec(void)
{
	struct ms_module m = {
		.id = 0, .kind = MS_MODULE_FILE,
		.path = { elf_path, (uint32_t)strlen(elf_path) },
		.build_id_len = 20,
	};

	memcpy(m.build_id, bid, 20);
	return m;
}

/* Name every 8th address of the text through a new symbolizer into names (malloc'd). */
static char *name_all(void)
{
	struct ms_symbolize_options o = { .system_debug_dir = "" };
	struct ms_symbolizer *s = ms_symbolizer_new(&o);
	struct ms_module rec = module_rec();
	size_t cap = 1 << 20, len = 0;
	char *out = malloc(cap);
	uint64_t a;

	assert_non_null(s);
	assert_non_null(out);
	assert_int_equal(ms_symbolizer_module(s, &rec), 0);
	for (a = TEXT - 0x40; a < TEXT + TEXT_SIZE + 0x40; a += 8) {
		struct ms_stack_frame f = { .module = 0, .address = a };
		struct ms_frame fr;
		bool is_new;

		assert_int_equal(ms_symbolizer_frame(s, &f, &fr, &is_new), 0);
		assert_true(len + fr.name.len + 32 < cap);
		len += (size_t)snprintf(out + len, cap - len, "%u %.*s\n", fr.reason,
					(int)fr.name.len, fr.name.ptr);
	}
	/* Facts borrow names from the table: asked again, they are still there. */
	for (a = TEXT; a < TEXT + 0x1000; a += 0x40) {
		struct ms_stack_frame f = { .module = 0, .address = a };
		struct ms_frame fr;
		bool is_new;

		assert_int_equal(ms_symbolizer_frame(s, &f, &fr, &is_new), 0);
		assert_false(is_new);
		assert_true(len + fr.name.len + 32 < cap);
		len += (size_t)snprintf(out + len, cap - len, "%u %.*s\n", fr.reason,
					(int)fr.name.len, fr.name.ptr);
	}
	ms_symbolizer_free(s);
	return out;
}

static size_t count_files(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_symbolizer(void **state)
{
	char cache[400], sub[500], path[600];
	char *none, *cold, *warm, *again;
	struct ms_symcache_key k;
	struct ms_symtab t, m;
	struct stat st1, st2;
	uint8_t *buf;
	size_t len;
	struct ms_sym sym;
	const struct ms_sym *s;

	(void)state;
	snprintf(cache, sizeof(cache), "%s/xdg", dir);
	snprintf(sub, sizeof(sub), "%s/microscope/debug", cache);
	snprintf(path, sizeof(path), "%s/5e1f00112233445566778899aabbccddeeff0102.syms", sub);
	/* No cache directory: nothing written anywhere. */
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	assert_null(ms_symcache_path(bid, 20));
	none = name_all();
	/* Cold: the table is read and the cache written. */
	setenv("XDG_CACHE_HOME", cache, 1);
	cold = name_all();
	assert_string_equal(none, cold);
	assert_int_equal(count_files(sub), 1);
	assert_int_equal(stat(path, &st1), 0);
	/* Warm: mapped, not written again. */
	warm = name_all();
	assert_string_equal(none, warm);
	assert_int_equal(stat(path, &st2), 0);
	assert_int_equal(st1.st_ino, st2.st_ino);
	/* It holds what the ELF file gives. */
	load(&t, &k, elf_path);
	assert_int_equal(ms_symcache_load(&m, path, &k), 0);
	assert_int_equal(check_all(&t, &m, true), 0);
	/*
	 * Damaged in its second span: the symbolizer drops it where a lookup
	 * meets it, after facts named from it, names as before, rewrites it.
	 */
	s = &m.tier[MS_SYMS_SYMTAB].syms[200];
	sym = *s;
	sym.size += 0x200;
	len = file_bytes(path, &buf);
	memcpy(buf + ((const uint8_t *)s - (const uint8_t *)m.map), &sym, sizeof(sym));
	ms_symtab_release(&m);
	unlink(path);
	put_file(path, buf, len);
	free(buf);
	assert_int_equal(ms_symcache_load(&m, path, &k), 0);
	assert_true(check_all(&t, &m, false) > 0);
	ms_symtab_release(&m);
	again = name_all();
	assert_string_equal(none, again);
	assert_int_equal(ms_symcache_load(&m, path, &k), 0);
	assert_int_equal(check_all(&t, &m, true), 0);
	ms_symtab_release(&m);
	ms_symtab_release(&t);
	unsetenv("XDG_CACHE_HOME");
	free(none);
	free(cold);
	free(warm);
	free(again);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_symbolizer),
	};

	ms_set_progname("symcache-test");
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * Fuzz target: the cache of CFI rows (dwarf/cfi.h, cfi.c's cache_load()):
 * any bytes as cfi/BUILDID.rows of this program's own file, in a cache
 * directory of this target's own (a temporary folder, removed at exit),
 * then the file's CFI opened and looked up across its code.
 *
 * The input: a mode byte, a lookup byte, then the file's bytes.
 *   mode bits 0-1: 0, the file as it is; 1, its module identity (file
 *   size, build id) and producer (util/cachefile.h) made this file's and
 *   its CRCs made its own (ms_cachefile_seal()), so that a cache written
 *   for an earlier build is read and mutations meet the checks past the
 *   CRCs; 2, every header field but the counts made a
 *   genuine header's (one this target writes at start), and the length in
 *   the common header (util/cachefile.h) the file's; 3, as 2 with the
 *   count of rows made what the length holds after the rules, and the file
 *   cut to the length the counts give, so that mutations reach the rules
 *   and rows past the header's checks. Bit 2: also walk (ms_dwarf_walk())
 *   over the rules, from a row's start, with the file's bytes as the copied
 *   stack (words 0xc0de... moved into the code, 0x57ac... around the
 *   sampled %rsp, as fuzz-unwind.c does).
 *   The lookup byte moves the addresses looked up across the code.
 *
 * Looked up: each row's start, last address and the address before it
 * (up to 24 rows, as the file's counts place them), and 32 addresses
 * spread over the code. Checked (abort() when broken):
 *  - every rule ms_cfi_find() returns is well-formed as cfi.h documents
 *    it: registers in range, listed in order and never also undefined,
 *    %rsp listed, the flags and the precomputed step those fields imply;
 *  - one step by it (ms_dwarf_step()) from a state of the input's bytes
 *    succeeds with the caller's PC, or ends with a reason a step gives
 *    (outermost exactly for an outermost rule);
 *  - the walk makes at most its max frames, the first the exact PC, each
 *    next a return address unless the rule before is a signal frame's,
 *    and a second walk (from the walk cache) is the same;
 *  - a file the module's ms_cfi_free() wrote is one the next open reads:
 *    all its rows.
 *
 * The cache home is this target's only while an input runs: XDG_CACHE_HOME
 * is restored after each (fuzz-unwind.c, replayed in the same process,
 * reads no cache). MS_FUZZ_SEEDS=DIR writes DIR/genuine-rows, the seed of
 * tests/fuzz/corpus/cfirows: the cache this target writes at start.
 */
#include "config.h"

#include <elf.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "stream/records.h"
#include "tests/fuzz/fuzz.h"
#include "dwarf/cfi.h"
#include "unwind/dwarf.h"
#include "elf/elffile.h"
#include "unwind/unwind.h"
#include "util/cachedir.h"
#include "util/cachefile.h"
#include "util/error.h"
#include "util/bits.h"

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "fuzz-cfirows: %s:%d: broken: %s\n", __FILE__, \
				__LINE__, #cond);                                    \
			abort();                                                     \
		}                                                                    \
	} while (0)

/*
 * Where the headers keep the sizes and counts (u32 each): the common one
 * (util/cachefile.h) its own size, the size of cfi.c's, which follows, and
 * the file's length (u64); cfi.c's the sizes of a rule and a row and the
 * counts. The rest of the layout is read from the genuine header.
 */
#define H_COMMON_SIZE offsetof(struct ms_cachefile, header_size)
#define H_OWN_SIZE offsetof(struct ms_cachefile, specific_size)
#define H_FILE_LEN offsetof(struct ms_cachefile, file_len)
#define H_PRODUCER offsetof(struct ms_cachefile, producer)
#define H_OWN sizeof(struct ms_cachefile)
#define H_RULE_SIZE (H_OWN + 0)
#define H_ROW_SIZE (H_OWN + 4)
#define H_N_RULES (H_OWN + 8)
#define H_N_ROWS (H_OWN + 12)
#define H_IDENTITY (H_OWN + 16)	/* file size, build id: to the header's end */

#define SPW 0x7ffd00000000ull	/* the walk's sampled %rsp */
#define PERF_REGS_DWARF 0xff01ffull
#define WALK_MAX 64
#define ROWS_LOOKED 24
#define SPREAD 32

static char dir[PATH_MAX];		/* the cache home: XDG_CACHE_HOME */
static char *file_path;			/* DIR/microscope/cfi/BUILDID.rows */
static char exe[PATH_MAX];
static struct ms_module rec;
static uint64_t code_vaddr, code_len;
static uint8_t *genuine;		/* a cache this target wrote at start */
static size_t genuine_len;
static uint32_t header_size, rule_size, row_size;
static struct ms_walk_cache *wcache;
static uint64_t epochs;

/* The whole file at path (malloc'd) in *len, or NULL. */
static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void write_all(const char *path, const uint8_t *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, len, f) != len || fclose(f) != 0)
		abort();
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void rm_dir(void)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The cache home, restored after each input (fuzz-unwind.c wants none). */
static char *saved_home;
static bool had_home;

static void enter(void)
{
	const char *h = getenv("XDG_CACHE_HOME");

	had_home = h != NULL;
	free(saved_home);
	saved_home = h ? strdup(h) : NULL;
	setenv("XDG_CACHE_HOME", dir, 1);
}

static void leave(void)
{
	if (had_home && saved_home)
		setenv("XDG_CACHE_HOME", saved_home, 1);
	else
		unsetenv("XDG_CACHE_HOME");
}

static void setup(void)
{
	static bool done;
	const char *tmp = getenv("TMPDIR");
	char hex[2 * MS_BUILD_ID_MAX + 1];
	struct ms_elf_file f;
	struct ms_cfi *c;
	size_t n;

	if (done)
		return;
	done = true;
	ms_elf_setup();
	snprintf(dir, sizeof(dir), "%s/ms-fuzz-cfirows.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(rm_dir);
	if (!realpath("/proc/self/exe", exe) || ms_elf_file_open(&f, exe) != MS_SYM_OK)
		abort();
	rec = (struct ms_module){ .kind = MS_MODULE_FILE };
	rec.build_id_len = f.build_id_len;
	memcpy(rec.build_id, f.build_id, f.build_id_len);
	rec.dev_maj = major(f.st.st_dev);
	rec.dev_min = minor(f.st.st_dev);
	rec.ino = f.st.st_ino;
	rec.size = (uint64_t)f.st.st_size;
	rec.mtime = ms_stat_mtime_ns(&f.st);
	if (elf_getphdrnum(f.elf, &n) != 0)
		abort();
	for (size_t i = 0; i < n && !code_len; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(f.elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && ph.p_filesz) {
			code_vaddr = ph.p_vaddr;
			code_len = ph.p_filesz;
		}
	}
	ms_elf_file_close(&f);
	if (!rec.build_id_len || !code_len)
		abort();
	for (uint32_t i = 0; i < rec.build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", rec.build_id[i]);
	if (asprintf(&file_path, "%s/microscope/cfi/%s.rows", dir, hex) < 0)
		abort();
	if (!(wcache = ms_walk_cache_new()))
		abort();
	/* A genuine cache: rows of 64 addresses spread over the code. */
	enter();
	if (!(c = ms_cfi_open(exe, &rec, NULL)))
		abort();
	for (uint64_t k = 0; k < 64; k++) {
		uint32_t r;

		CHECK(ms_cfi_find(c, code_vaddr + k * (code_len / 64), &r) >= 0);
	}
	ms_cfi_free(c);
	leave();
	genuine = read_all(file_path, &genuine_len);
	CHECK(genuine && genuine_len >= H_IDENTITY + 8);
	header_size = ms_load32(genuine + H_COMMON_SIZE) + ms_load32(genuine + H_OWN_SIZE);
	rule_size = ms_load32(genuine + H_RULE_SIZE);
	row_size = ms_load32(genuine + H_ROW_SIZE);
	CHECK(header_size > H_IDENTITY && rule_size && row_size >= 16 &&
	      genuine_len == header_size + (uint64_t)ms_load32(genuine + H_N_RULES) * rule_size +
				     (uint64_t)ms_load32(genuine + H_N_ROWS) * row_size &&
	      ms_load64(genuine + H_FILE_LEN) == genuine_len);
}

/* Rules ------------------------------------------------------------------------ */

/* Rule r is well-formed (cfi.h). */
static void check_rule(const struct ms_cfi_rule *r)
{
	uint32_t listed = 0, offset = 0, value = 0, simple_kinds = 1;
	const struct ms_reg_rule *rbp = NULL, *ra = NULL;

	CHECK(r->cfa_kind == MS_CFA_REG || r->cfa_kind == MS_CFA_EXPR);
	if (r->cfa_kind == MS_CFA_REG)
		CHECK(r->cfa_reg < MS_DWARF_REGS && r->cfa_len == 0);
	else
		CHECK(r->cfa_arg >= 0 && r->cfa_len > 0);
	CHECK(r->n <= MS_RULE_REGS);
	CHECK(!(r->undef >> MS_DWARF_REGS));
	CHECK(!(r->flags & ~(MS_CFI_SIGNAL | MS_CFI_FRAME_POINTER | MS_CFI_OUTERMOST |
			     MS_CFI_SIMPLE)));
	for (uint32_t i = 0; i < r->n; i++) {
		const struct ms_reg_rule *g = &r->regs[i];

		CHECK(g->reg < MS_DWARF_REGS);
		CHECK(!i || g->reg > r->regs[i - 1].reg);
		CHECK(!(r->undef & (1u << g->reg)));
		CHECK(g->kind >= MS_REG_OFFSET && g->kind <= MS_REG_VAL_EXPR);
		if (g->kind == MS_REG_REGISTER)
			CHECK(g->arg >= -1 && g->arg < MS_DWARF_REGS);
		if (g->kind == MS_REG_EXPR || g->kind == MS_REG_VAL_EXPR)
			CHECK(g->arg >= 0 && g->len > 0);
		listed |= 1u << g->reg;
		if (g->kind == MS_REG_OFFSET)
			offset |= 1u << g->reg;
		else if (g->kind == MS_REG_VAL_OFFSET)
			value |= 1u << g->reg;
		else
			simple_kinds = 0;
		if (g->reg == MS_DW_RBP)
			rbp = g;
		if (g->reg == MS_DW_RA)
			ra = g;
	}
	/* %rsp always has a rule: the psABI's default is the CFA. */
	CHECK(listed & (1u << MS_DW_RSP));
	CHECK(!(r->flags & MS_CFI_OUTERMOST) == !(r->undef & (1u << MS_DW_RA)));
	CHECK(!(r->flags & MS_CFI_SIMPLE) ==
	      !(r->cfa_kind == MS_CFA_REG && (offset & (1u << MS_DW_RA)) && simple_kinds));
	if (r->flags & MS_CFI_SIMPLE)
		CHECK(r->saved == offset && r->valued == value);
	if (r->flags & MS_CFI_FRAME_POINTER)
		CHECK(r->cfa_kind == MS_CFA_REG && r->cfa_reg == MS_DW_RBP && r->cfa_arg == 16 &&
		      rbp && rbp->kind == MS_REG_OFFSET && rbp->arg == -16 && ra &&
		      ra->kind == MS_REG_OFFSET && ra->arg == -8);
	if (r->fast) {
		CHECK((r->flags & (MS_CFI_SIMPLE | MS_CFI_OUTERMOST)) == MS_CFI_SIMPLE);
		CHECK(r->n && r->regs[r->n - 1].reg == MS_DW_RA);
		CHECK(r->ra_off == r->regs[r->n - 1].arg);
		CHECK(r->clear == (r->undef | r->saved | r->valued));
		CHECK(r->set_known == (r->valued | 1u << MS_DW_RA));
		CHECK(r->set_saved == (r->saved & ~(1u << MS_DW_RA)));
	}
}

/* A reader over bytes of the input, at SPW: a heap block of exactly len. */
struct mem_reader {
	struct ms_state_reader r;
	const uint8_t *bytes;
	uint64_t len;
};

static int mem_read(const struct ms_state_reader *r, uint64_t addr, uint64_t *out)
{
	const struct mem_reader *m = (const struct mem_reader *)r;
	uint64_t off = addr - SPW;

	if (off >= m->len || m->len - off < 8)
		return -1;
	memcpy(out, m->bytes + off, 8);
	return 0;
}

/* One step by rule r from registers of the input's bytes. */
static void step(const struct ms_cfi_rule *r, const struct ms_dwarf_op *ops,
		 const struct mem_reader *mem)
{
	struct ms_regstate rs = { .known = (1u << MS_DWARF_REGS) - 1 };
	uint64_t cfa = 0;
	uint32_t end = UINT32_MAX;

	for (unsigned i = 0; i < MS_DWARF_REGS; i++)
		rs.val[i] = SPW + 8 * i;
	rs.val[MS_DW_RA] = code_vaddr;
	if (ms_dwarf_step(&rs, &mem->r, r, ops, SPW, &cfa, &end)) {
		CHECK(rs.known & (1u << MS_DW_RA));
		CHECK(cfa > SPW);
		CHECK(!(r->flags & MS_CFI_OUTERMOST));
		return;
	}
	CHECK((end == MS_END_OUTERMOST) == !!(r->flags & MS_CFI_OUTERMOST));
	CHECK(end == MS_END_OUTERMOST || end == MS_END_MISSING_REGISTER ||
	      end == MS_END_STACK_COPY || end == MS_END_CFA_NOT_OUTWARDS || end == MS_END_NO_CFI);
}

/* Look addr up; check and step what is found. */
static void look(struct ms_cfi *c, uint64_t addr, const struct mem_reader *mem)
{
	uint32_t idx;
	int r = ms_cfi_find(c, addr, &idx);

	CHECK(r == 0 || r == 1);
	if (r) {
		const struct ms_cfi_rule *rule = ms_cfi_rule(c, idx);

		check_rule(rule);
		step(rule, ms_cfi_ops(c), mem);
	}
}

/* The walk ----------------------------------------------------------------------- */

/* A rule source over one ms_cfi: module addresses are the PCs. */
struct source {
	struct ms_rule_source src;	/* first: find() gets it back */
	struct ms_cfi *cfi;
};

static int find(struct ms_rule_source *src, struct ms_uframe *f, uint64_t lookup,
		const struct ms_cfi_rule **rule, const struct ms_dwarf_op **ops, uint32_t *end)
{
	struct source *s = (struct source *)src;
	uint32_t idx;
	int r = ms_cfi_find(s->cfi, lookup, &idx);

	f->resolved = true;
	f->module = 0;
	f->address = f->pc;
	f->loc_flags = 0;
	if (r < 0)
		return -1;
	if (!r) {
		*end = MS_END_NO_CFI;
		return 0;
	}
	*rule = ms_cfi_rule(s->cfi, idx);
	*ops = ms_cfi_ops(s->cfi);
	check_rule(*rule);
	return 1;
}

static struct source source;
static struct ms_uframe frames[2][WALK_MAX];

static void check_walk(struct ms_cfi *c, uint64_t pc0, const struct ms_walk *w,
		       const struct ms_uframe *fr)
{
	CHECK(w->n >= 1 && w->n <= WALK_MAX);
	CHECK(w->end <= MS_END_DEPTH && w->end != MS_END_FP_CHAIN && w->end != MS_END_NO_MODULE);
	CHECK(w->end != MS_END_DEPTH || w->n == WALK_MAX);
	CHECK(fr[0].pc == pc0 && fr[0].flags == 0);
	for (uint32_t i = 0; i + 1 < w->n; i++) {
		uint32_t idx;
		const struct ms_cfi_rule *r;

		CHECK(ms_cfi_find(c, fr[i].pc - fr[i].flags, &idx) == 1);
		r = ms_cfi_rule(c, idx);
		CHECK(!(r->flags & MS_CFI_OUTERMOST));
		CHECK(fr[i + 1].flags == (r->flags & MS_CFI_SIGNAL ? 0u : (uint32_t)MS_FRAME_RETURN));
		CHECK(fr[i + 1].pc != 0);
	}
}

static uint64_t reloc(uint64_t v)
{
	switch (v >> 48) {
	case 0xc0de:
		return code_vaddr + (v & ((1ull << 44) - 1)) % code_len;
	case 0x57ac:
		return SPW + (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	default:
		return v;
	}
}

/* Two walks from pc0 over the stack made of bytes: the second the first. */
static void walk(struct ms_cfi *c, uint64_t pc0, const uint8_t *bytes, size_t len)
{
	static struct ms_sample s;
	struct ms_sampled_state ss;
	struct ms_regstate rs;
	struct ms_walk w[2];
	uint8_t *copy;

	if (len > MS_STACK_MAX)
		len = MS_STACK_MAX;
	if (!(copy = malloc(len ? len : 1)))
		abort();
	memcpy(copy, bytes, len);
	for (size_t o = 0; o + 8 <= len; o += 8) {
		uint64_t v = reloc(ms_load64(copy + o));

		memcpy(copy + o, &v, 8);
	}
	memset(&s, 0, sizeof(s));
	s.regs_abi = 2;
	s.regs_mask = PERF_REGS_DWARF;
	s.n_regs = 17;
	for (uint32_t i = 0; i < 17; i++)
		s.regs[i] = SPW + 64 + 8 * i;
	s.regs[7] = SPW;
	s.regs[8] = s.ip = pc0;
	s.cpumode = MS_CPUMODE_USER;
	s.stack = copy;
	s.stack_len = (uint32_t)len;
	source.src.find = find;
	source.src.cache = wcache;
	/* Answers hold for this ms_cfi only: an epoch of its own. */
	source.src.epoch = ++epochs;
	source.cfi = c;
	for (int k = 0; k < 2; k++) {
		ms_sampled_state_init(&ss, &rs, &s);
		CHECK(ms_dwarf_walk(&rs, &ss.reader, &source.src, frames[k], WALK_MAX, &w[k]) == 0);
		check_walk(c, pc0, &w[k], frames[k]);
	}
	CHECK(w[0].n == w[1].n && w[0].end == w[1].end && w[0].rule == w[1].rule);
	CHECK(!w[0].token || !w[1].token || w[0].token == w[1].token);
	for (uint32_t i = 0; i < w[0].n; i++)
		CHECK(frames[0][i].pc == frames[1][i].pc && frames[0][i].flags == frames[1][i].flags);
	free(copy);
}

/* The target ------------------------------------------------------------------- */

/* The file the input makes (see the top): malloc'd, its length in *len. */
static uint8_t *make_file(uint8_t mode, const uint8_t *body, size_t n, size_t *len)
{
	size_t cap = n < header_size && mode >= 2 ? header_size : n;
	uint8_t *f = calloc(1, cap ? cap : 1);

	if (!f)
		abort();
	memcpy(f, body, n);
	*len = n;
	if (mode >= 1 && cap >= header_size) {
		memcpy(f + H_IDENTITY, genuine + H_IDENTITY, header_size - H_IDENTITY);
		memcpy(f + H_PRODUCER, genuine + H_PRODUCER, MS_CACHEFILE_PRODUCER);
	}
	if (mode >= 2) {
		uint64_t rules, rows;

		*len = cap;
		memcpy(f, genuine, H_N_RULES);
		if (mode == 3) {
			rules = ms_load32(f + H_N_RULES);
			if (rules > (cap - header_size) / rule_size)
				rules = (cap - header_size) / rule_size;
			rows = (cap - header_size - rules * rule_size) / row_size;
			ms_store32(f + H_N_RULES, (uint32_t)rules);
			ms_store32(f + H_N_ROWS, (uint32_t)rows);
			*len = header_size + rules * rule_size + rows * row_size;
		}
		ms_store64(f + H_FILE_LEN, *len);
	}
	if (mode >= 1 && *len >= header_size)
		ms_cachefile_seal(f, *len);
	return f;
}

/* The lookups of one open: rows as the file's counts place them, and the spread. */
static void lookups(struct ms_cfi *c, const uint8_t *f, size_t len, uint8_t shift,
		    const struct mem_reader *mem)
{
	if (len >= header_size) {
		uint64_t rows = header_size + (uint64_t)ms_load32(f + H_N_RULES) * rule_size;

		for (uint32_t i = 0; i < ROWS_LOOKED && rows + (i + 1) * (uint64_t)row_size <= len;
		     i++) {
			const uint8_t *w = f + rows + i * (uint64_t)row_size;
			uint64_t start = ms_load64(w), end = ms_load64(w + 8);

			look(c, start, mem);
			look(c, end - 1, mem);
			look(c, start - 1, mem);
		}
	}
	for (uint64_t k = 0; k < SPREAD; k++)
		look(c, code_vaddr + (k * (code_len / SPREAD) + shift * 97ull) % code_len, mem);
}

int ms_fuzz_cfirows(const uint8_t *data, size_t size)
{
	struct mem_reader mem = { .r.read = mem_read };
	uint8_t mode, shift, *f, *back;
	size_t len, back_len;
	struct ms_cfi *c;

	setup();
#ifndef MS_FUZZ_REPLAY
	{
		/* With MS_FUZZ_SEEDS=DIR: DIR/genuine-rows, this target's own cache. */
		static bool seeded;
		const char *seeds = getenv("MS_FUZZ_SEEDS");

		if (seeds && !seeded) {
			char path[PATH_MAX];
			FILE *out;

			seeded = true;
			snprintf(path, sizeof(path), "%s/genuine-rows", seeds);
			if (!(out = fopen(path, "wb")))
				abort();
			fputc(5, out);	/* identity made this file's; walked */
			fputc(0, out);
			fwrite(genuine, 1, genuine_len, out);
			if (fclose(out) != 0)
				abort();
		}
	}
#endif
	if (size < 2)
		return 0;
	mode = data[0];
	shift = data[1];
	f = make_file(mode & 3, data + 2, size - 2, &len);
	enter();
	if (ms_cache_mkdir(file_path) < 0)
		abort();
	write_all(file_path, f, len);
	mem.bytes = f;
	mem.len = len;
	if (!(c = ms_cfi_open(exe, &rec, NULL)))
		abort();
	lookups(c, f, len, shift, &mem);
	if ((mode & 4) && len >= header_size) {
		/* From the first row's start (as the counts place it), else the code's. */
		uint64_t rows = header_size + (uint64_t)ms_load32(f + H_N_RULES) * rule_size;
		uint64_t pc0 = rows + 8 <= len ? ms_load64(f + rows) : code_vaddr;

		walk(c, pc0, f, len);
	}
	ms_cfi_free(c);
	/* What ms_cfi_free() wrote (if it wrote) the next open reads, whole. */
	back = read_all(file_path, &back_len);
	if (back && (back_len != len || memcmp(back, f, len))) {
		CHECK(back_len >= header_size);
		if (!(c = ms_cfi_open(exe, &rec, NULL)))
			abort();
		look(c, code_vaddr, &mem);
		CHECK(ms_cfi_stats(c)->cached_rows == ms_load32(back + H_N_ROWS));
		lookups(c, back, back_len, shift, &mem);
		ms_cfi_free(c);
	}
	free(back);
	free(f);
	leave();
	return 0;
}

MS_FUZZ_TARGET("fuzz-cfirows", ms_fuzz_cfirows)

/*
 * Fuzz target: the DWARF unwind methods (unwind/unwind.h, unwind/dwarf.h)
 * over a sample made from any bytes, against modules with real call-frame
 * information: this program's own file, the C library it runs with and
 * the vdso, each mapped whole at a fixed address of one process, beside
 * anonymous code and unmapped holes.
 *
 * The input (every field optional: bytes past the end read as 0):
 *   flags      bit 0: also walk with dwarf+fp; bit 1: registers by the
 *              mask that follows (else the 17 ms-record asks for); bit 2:
 *              a kernel-mode sample; bit 3: the copy is "in a file"
 *              (prefetch paths); bit 4: tag the stack and replay it;
 *              bit 5: a DWARF expression follows the chain (below); bit 6:
 *              it may use DW_OP_call_frame_cfa; bit 7: regs_abi 32-bit
 *              (the registers are then not used)
 *   max        frames asked of a direct walk (255: MS_FRAMES_MAX)
 *   n_uchain   words of the user frame-pointer chain
 *   n_kchain   kernel frames, twice this
 *   cut (2)    a shorter copy, cut % (length + 1) bytes, whose stack must
 *              be a prefix of the whole copy's
 *   pc_module  bits 0-1: the module the IP lands in (at its code's start
 *              + value % its code's size); bit 2: the IP is as any word
 *   (reserved)
 *   regs_mask  (8 bytes, with flags bit 1)
 *   registers  8 bytes each, in perf's order; then the chain's words;
 *   expression (flags bit 5) a count (modulo 33), then per operation its
 *              atom, its length in bytes (1 + modulo 16: the next one's
 *              offset), its two operands (8 bytes each); then how the
 *              step rule below gets the return address (modulo 4) and
 *              its undefined registers (4 bytes)
 *   stack      the rest: the copied stack (at most MS_STACK_MAX bytes),
 *              the sampled %rsp its first byte
 * Words (registers, chain, each 8-aligned word of the copy) are moved by
 * their top 16 bits: 0xc0de puts the low 44 bits (modulo the size) into
 * the code of module bits 44-45 (this file, the C library, the vdso,
 * anonymous code), 0x57ac puts the low 32 bits, signed, around SP0 (where
 * the sampled %rsp is put the same way), so that a few mutated bytes
 * build a plausible stack. The copy is a heap block of exactly its length:
 * a read outside it is an AddressSanitizer report.
 *
 * What is checked (abort() when broken), from the contract of unwind.h
 * and dwarf.h:
 *  - a walk makes at most max frames and ends with a reason a method can
 *    give; MS_END_DEPTH only with max frames; no frame without a PC;
 *  - the first frame is the exact sampled PC; each frame after it is a
 *    return address (looked up at -1) unless the rule of the frame
 *    before is a signal frame's, and never 0;
 *  - every frame is bound to the module that holds its lookup address,
 *    as ms_unwinder_resolve() says; a frame the walk stepped from has
 *    CFI (this target's own ms_cfi of the module finds a rule there, not
 *    outermost, and the rule an ms_cfi without rows makes at that very
 *    address: a row's rule is each of its addresses'); MS_END_NO_CFI and
 *    MS_END_NO_MODULE are what the last frame's lookup gives;
 *  - a walk with a token has the frames and end of every walk with it;
 *  - ms_unwinder_sample() makes the kernel frames, then the walk's frames
 *    bound as the walk bound them; an unknown module only last, with
 *    MS_END_NO_MODULE; the same sample again gives the same stack
 *    (tagged: the same tag and reason);
 *  - a copy cut short gives a prefix of the stack, ended by the copy
 *    (or a register the copy held);
 *  - dwarf+fp is the DWARF walk unless that ended with the copy, and then
 *    its walk followed by frame-pointer chain entries, taken only where
 *    each rule before is a standard frame;
 *  - the input's expression, evaluated in the sampled state and used as
 *    the CFA rule of one step (ms_dwarf_expr_eval(), ms_dwarf_step()),
 *    gives a value, or the reasons dwarf.h lists.
 *
 * The two unwinders (dwarf, dwarf+fp) are kept from one input to the
 * next, as ms-unwind keeps one for a whole stream: each input empties the
 * process (an exec) and maps the modules again, a new address-space
 * generation, so nothing an earlier input cached answers for it, and a
 * crash found after other inputs replays alone. Every module is known
 * to both in one order at start, so module indices never depend on the
 * inputs before.
 *
 * Nothing is written: no cache directory is set (the rows cache has its
 * own target, fuzz-cfirows.c). MS_FUZZ_SEEDS=DIR writes the seeds of
 * tests/fuzz/corpus/unwind (see write_seeds()).
 */
#include "config.h"

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "perf/vdso.h"
#include "stream/records.h"
#include "tests/fuzz/fuzz.h"
#include "dwarf/cfi.h"
#include "unwind/dwarf.h"
#include "elf/debugfind.h"
#include "elf/elffile.h"
#include "unwind/unwind.h"
#include "util/bits.h"
#include "util/error.h"

#define PID 4242
#define SP0 0x7ffd00000000ull		/* where 0x57ac words point around */
#define PERF_REGS_DWARF 0xff01ffull	/* AX..IP, R8..R15 */
#define PERF_IP 8
#define KERNEL_PC 0xffffffff81000000ull
#define TAG_CODE 0xc0deull
#define TAG_STACK 0x57acull
#define CODE_BITS 44

#define CHECK(cond)                                                                 \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "fuzz-unwind: %s:%d: broken: %s\n", __FILE__, \
				__LINE__, #cond);                                   \
			abort();                                                    \
		}                                                                   \
	} while (0)

enum { MOD_EXE, MOD_LIBC, MOD_VDSO, MOD_ANON, MODS };

/* A module of the process, mapped whole from file offset 0 at `at`. */
struct mod {
	bool ok;
	char path[PATH_MAX];
	uint64_t at, len;
	/* its code: the first executable segment's file bytes */
	uint64_t code_off, code_len;
	struct ms_module rec;		/* identity (kind, build id, file) */
	struct ms_cfi *cfi;		/* this target's own, for the checks */
	struct ms_cfi *plain;		/* and one without rows: every rule made at its address */
	uint64_t live_code;		/* where this process runs that code (seeds) */
};

static struct mod mods[MODS];
static uint8_t vdso_image[MS_VDSO_MAX];
static uint32_t vdso_len;

/* Walks by token (a walk cache's): the first one's frames and end, hashed. */
#define TOKENS 4096

/* A unwinder of each method, kept: every input maps the process anew. */
struct side {
	struct ms_unwinder *u;
	const struct ms_unwind_method *method;
	uint32_t kinds[64];		/* stream module id -> kind */
	struct {
		uint64_t token, hash;
	} tokens[TOKENS];
};

static struct side dw = { .method = &ms_unwind_method_dwarf };
static struct side dwfp = { .method = &ms_unwind_method_dwarf_fp };

/* Large: kept out of the fuzzer's stack. */
static struct ms_sample sample;
static struct ms_user_stack dw_first, dw_full, fp_first, fp_full;
static struct ms_stack stack_a, stack_b;

/* Module setup ---------------------------------------------------------------- */

/* The first executable segment of elf into m. */
static bool code_of(Elf *elf, struct mod *m)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && ph.p_filesz) {
			m->code_off = ph.p_offset;
			m->code_len = ph.p_filesz;
			return true;
		}
	}
	return false;
}

/*
 * The debug-file finder the unwinders' options make (no directory but the
 * modules' own), for the reference CFI: the same separate debug files.
 */
static struct ms_debugfind *finder(void)
{
	static struct ms_debugfind *f;
	struct ms_debug_search s = { .system_dir = "" };

	if (!f && !(f = ms_debugfind_new(&s)))
		abort();
	return f;
}

static void file_mod(struct mod *m, const char *path, uint64_t at)
{
	struct ms_elf_file f;

	if (!realpath(path, m->path) || ms_elf_file_open(&f, m->path) != MS_SYM_OK)
		return;
	m->rec = (struct ms_module){ .kind = MS_MODULE_FILE };
	m->rec.build_id_len = f.build_id_len;
	memcpy(m->rec.build_id, f.build_id, f.build_id_len);
	m->rec.dev_maj = major(f.st.st_dev);
	m->rec.dev_min = minor(f.st.st_dev);
	m->rec.ino = f.st.st_ino;
	m->rec.size = (uint64_t)f.st.st_size;
	m->rec.mtime = ms_stat_mtime_ns(&f.st);
	m->at = at;
	m->len = ((uint64_t)f.st.st_size + 0xfff) & ~0xfffull;
	m->ok = code_of(f.elf, m) && f.build_id_len;
	ms_elf_file_close(&f);
	if (m->ok && (!(m->cfi = ms_cfi_open(m->path, &m->rec, finder())) ||
		      !(m->plain = ms_cfi_open(m->path, &m->rec, finder()))))
		abort();
	if (m->ok)
		ms_cfi_no_rows(m->plain);
}

static void vdso_mod(struct mod *m, uint64_t at)
{
	struct ms_elf_file f;
	struct ms_vdso v;
	const char *why;

	if (ms_vdso_own(&v, &why) != 1)
		return;
	memcpy(vdso_image, v.image, v.len);
	vdso_len = v.len;
	m->live_code = (uint64_t)(uintptr_t)v.image;
	if (ms_elf_memory_open(&f, vdso_image, vdso_len) != MS_SYM_OK)
		return;
	snprintf(m->path, sizeof(m->path), "[vdso]");
	m->rec = (struct ms_module){ .kind = MS_MODULE_VDSO };
	m->rec.build_id_len = f.build_id_len;
	memcpy(m->rec.build_id, f.build_id, f.build_id_len);
	m->at = at;
	m->len = ((uint64_t)vdso_len + 0xfff) & ~0xfffull;
	m->ok = code_of(f.elf, m) && f.build_id_len;
	ms_elf_file_close(&f);
	/* (where it runs here: the image's start plus the segment's offset) */
	m->live_code += m->code_off;
	if (m->ok &&
	    (!(m->cfi = ms_cfi_open_image(vdso_image, vdso_len, &m->rec, finder())) ||
	     !(m->plain = ms_cfi_open_image(vdso_image, vdso_len, &m->rec, finder()))))
		abort();
	if (m->ok)
		ms_cfi_no_rows(m->plain);
}

/* The C library this program runs with, and where its code and ours run. */
static int find_live(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct mod *m;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!info->dlpi_name[0])
			m = &mods[MOD_EXE];
		else if (strstr(info->dlpi_name, "/libc.so"))
			m = &mods[MOD_LIBC];
		else
			break;
		if (m == &mods[MOD_LIBC] && !m->path[0])
			snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
		m->live_code = info->dlpi_addr + ph->p_vaddr;
		break;
	}
	return 0;
}

static void map_all(struct side *sd)
{
	static const char anon[] = "//anon";
	struct ms_comm c = { .pid = PID, .tid = PID, .exec = true, .comm = { "fuzz", 4 } };

	if (ms_unwinder_comm(sd->u, &c) < 0)
		abort();
	for (int i = 0; i < MODS; i++) {
		const struct mod *m = &mods[i];
		struct ms_mmap r = {
			.pid = PID, .tid = PID, .start = m->at, .len = m->len,
			.prot = PROT_READ | PROT_EXEC, .cpumode = MS_CPUMODE_USER,
		};

		if (!m->ok)
			continue;
		if (i == MOD_ANON) {
			r.filename = (struct ms_str){ anon, sizeof(anon) - 1 };
		} else {
			r.filename = (struct ms_str){ m->path, (uint32_t)strlen(m->path) };
			if (i != MOD_VDSO) {
				r.maj = m->rec.dev_maj;
				r.min = m->rec.dev_min;
				r.ino = m->rec.ino;
			}
		}
		if (ms_unwinder_mmap(sd->u, &r) < 0)
			abort();
	}
}

static void side_init(struct side *sd)
{
	struct ms_unwind_options o = { .method = sd->method, .system_debug_dir = "" };

	if (!(sd->u = ms_unwinder_new(&o)))
		abort();
	if (mods[MOD_VDSO].ok) {
		struct ms_vdso v = { .image = vdso_image, .len = vdso_len };

		if (ms_unwinder_vdso(sd->u, &v) < 0)
			abort();
	}
}

static uint64_t code_at(unsigned i, uint64_t x);

static void setup(void)
{
	static bool done;
	char libc[PATH_MAX];

	if (done)
		return;
	done = true;
	/* No cache of CFI rows: this target reads and writes none. */
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	/* Nor any debuginfod server. */
	unsetenv("DEBUGINFOD_URLS");
	ms_elf_setup();
	dl_iterate_phdr(find_live, NULL);
	snprintf(libc, sizeof(libc), "%s", mods[MOD_LIBC].path);
	file_mod(&mods[MOD_EXE], "/proc/self/exe", 0x555500000000ull);
	if (libc[0])
		file_mod(&mods[MOD_LIBC], libc, 0x7f0000000000ull);
	vdso_mod(&mods[MOD_VDSO], 0x7fff00000000ull);
	mods[MOD_ANON] = (struct mod){
		.ok = true, .at = 0x7e0000000000ull, .len = 0x10000, .code_len = 0x10000,
		.rec = { .kind = MS_MODULE_ANON },
	};
	if (!mods[MOD_EXE].ok)
		abort();	/* every check below needs this file's CFI */
	side_init(&dw);
	side_init(&dwfp);
	/*
	 * Each module known to both unwinders in one order: the same module
	 * indices whatever the inputs (and a crash found after others is one
	 * input's).
	 */
	for (int k = 0; k < 2; k++) {
		struct side *sd = k ? &dwfp : &dw;

		map_all(sd);
		for (unsigned i = 0; i < MODS; i++) {
			struct ms_code_loc loc;

			if (ms_unwinder_resolve(sd->u, ms_unwinder_process(sd->u, PID),
						code_at(i, 0), &loc) < 0)
				abort();
		}
	}
}

/* The input ------------------------------------------------------------------- */

struct cursor {
	const uint8_t *p;
	size_t left;
};

static uint64_t take(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n && c->left; i++, c->left--)
		v |= (uint64_t)*c->p++ << (8 * i);
	return v;
}

/* Offset x into the code of module i. */
static uint64_t code_at(unsigned i, uint64_t x)
{
	const struct mod *m = &mods[i % MODS];

	if (!m->ok)
		m = &mods[MOD_EXE];
	return m->at + m->code_off + x % m->code_len;
}

static uint64_t reloc(uint64_t v)
{
	switch (v >> 48) {
	case TAG_CODE:
		return code_at((unsigned)(v >> CODE_BITS) & 3, v & ((1ull << CODE_BITS) - 1));
	case TAG_STACK:
		return SP0 + (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	default:
		return v;
	}
}

#define EXPR_OPS 32

struct params {
	uint8_t flags;
	uint32_t max;
	uint32_t cut;
	uint8_t *copy;
	/* the expression and the step rule that uses it */
	uint32_t n_ops;
	struct ms_dwarf_op ops[EXPR_OPS];
	struct ms_cfi_rule rule;
};

/* The step rule: CFA by the expression; %rsp the CFA; the return address as ra_how says. */
static void make_rule(struct params *pa, unsigned ra_how, uint32_t undef)
{
	struct ms_cfi_rule *r = &pa->rule;
	struct ms_reg_rule *ra;

	memset(r, 0, sizeof(*r));
	r->cfa_kind = MS_CFA_EXPR;
	r->cfa_arg = 0;
	r->cfa_len = (uint16_t)pa->n_ops;
	r->regs[0] = (struct ms_reg_rule){ .reg = MS_DW_RSP, .kind = MS_REG_VAL_OFFSET };
	ra = &r->regs[1];
	r->n = 2;
	*ra = (struct ms_reg_rule){ .reg = MS_DW_RA };
	switch (ra_how % 4) {
	case 0:
		ra->kind = MS_REG_OFFSET;
		ra->arg = -8;
		break;
	case 1:
		ra->kind = MS_REG_VAL_EXPR;
		ra->len = (uint16_t)pa->n_ops;
		break;
	case 2:
		ra->kind = MS_REG_EXPR;
		ra->len = (uint16_t)pa->n_ops;
		break;
	default:
		ra->kind = MS_REG_REGISTER;
		ra->arg = (int32_t)(undef >> 24) % (MS_DWARF_REGS + 1) - 1;
		break;
	}
	r->undef = undef & ((1u << MS_DWARF_REGS) - 1) & ~(1u << MS_DW_RSP | 1u << MS_DW_RA);
}

static void make_sample(const uint8_t *data, size_t size, struct params *pa)
{
	struct ms_sample *s = &sample;
	struct cursor c = { data, size };
	uint32_t n_uchain, n_kchain, cut, len;
	uint8_t pc_mod, max;
	uint64_t mask;

	memset(s, 0, sizeof(*s));
	pa->flags = (uint8_t)take(&c, 1);
	max = (uint8_t)take(&c, 1);
	n_uchain = (uint32_t)take(&c, 1);
	n_kchain = 2 * (uint32_t)take(&c, 1);
	cut = (uint32_t)take(&c, 2);
	pc_mod = (uint8_t)take(&c, 1);
	take(&c, 1);
	pa->max = max == 255 ? MS_FRAMES_MAX : max;

	s->pid = s->tid = PID;
	s->time = s->period = 1;
	s->cpumode = pa->flags & 4 ? MS_CPUMODE_KERNEL : MS_CPUMODE_USER;
	s->regs_abi = pa->flags & 0x80 ? 1 : 2;
	mask = pa->flags & 2 ? take(&c, 8) : PERF_REGS_DWARF;
	s->regs_mask = mask;
	s->n_regs = ms_popcount64(mask);	/* what the stream reader promises */
	for (uint32_t i = 0; mask; mask &= mask - 1, i++) {
		uint64_t raw = take(&c, 8);

		if (__builtin_ctzll(mask) != PERF_IP)
			s->regs[i] = reloc(raw);
		else
			s->ip = s->regs[i] = pc_mod & 4 ? reloc(raw) : code_at(pc_mod & 3, raw);
	}
	if (!(s->regs_mask & (1ull << PERF_IP)))
		s->ip = code_at(pc_mod & 3, take(&c, 8));
	s->n_uchain = n_uchain;
	for (uint32_t i = 0; i < n_uchain; i++)
		s->uchain[i] = reloc(take(&c, 8));
	pa->n_ops = 0;
	if (pa->flags & 32) {
		uint32_t offset = 0, how;

		pa->n_ops = (uint32_t)take(&c, 1) % (EXPR_OPS + 1);
		for (uint32_t i = 0; i < pa->n_ops; i++) {
			struct ms_dwarf_op *op = &pa->ops[i];

			op->atom = (uint8_t)take(&c, 1);
			op->offset = offset;
			offset += 1 + (uint32_t)take(&c, 1) % 16;
			op->number = take(&c, 8);
			op->number2 = take(&c, 8);
		}
		how = (uint32_t)take(&c, 1);
		make_rule(pa, how, (uint32_t)take(&c, 4));
	}
	s->n_kchain = n_kchain;
	for (uint32_t i = 0; i < n_kchain; i++)
		s->kchain[i] = KERNEL_PC + 16 * i;
	len = c.left < MS_STACK_MAX ? (uint32_t)c.left : MS_STACK_MAX;
	/* Exactly len bytes: AddressSanitizer reports any read outside them. */
	pa->copy = malloc(len ? len : 1);
	if (!pa->copy)
		abort();
	memcpy(pa->copy, c.p, len);
	for (uint32_t o = 0; o + 8 <= len; o += 8) {
		uint64_t w;

		memcpy(&w, pa->copy + o, 8);
		w = reloc(w);
		memcpy(pa->copy + o, &w, 8);
	}
	s->stack = pa->copy;
	s->stack_len = len;
	s->stack_in_file = pa->flags & 8;
	pa->cut = cut % (len + 1);
}

#ifndef MS_FUZZ_REPLAY
/* Seeds ------------------------------------------------------------------------ */

/*
 * With MS_FUZZ_SEEDS=DIR, the first input also writes DIR/real-stack and
 * DIR/signal-stack: this process's own registers and stack (the second
 * from inside a signal handler, through the C library's signal frame),
 * its words moved back into the tags above, so that they replay here at
 * any address and after a rebuild (the C library's frames exactly, this
 * file's wherever its code then lies).
 */
static const char *seed_dir;
static uint64_t seed_stack_end;

static uint64_t encode(uint64_t w, uint64_t sp)
{
	if (w >= sp - 65536 && w < seed_stack_end)
		return TAG_STACK << 48 | (uint32_t)(w - sp);
	for (int i = MOD_EXE; i <= MOD_VDSO; i++) {
		const struct mod *m = &mods[i];

		if (m->ok && m->live_code && w - m->live_code < m->code_len)
			return TAG_CODE << 48 | (uint64_t)i << CODE_BITS | (w - m->live_code);
	}
	return w;
}

/* The stack is other frames' memory: read it around the sanitizer. */
__attribute__((no_sanitize("address"))) static uint64_t peek(uint64_t addr)
{
	return *(const volatile uint64_t *)(uintptr_t)addr;
}

static void put64(FILE *f, uint64_t v)
{
	fwrite(&v, 8, 1, f);
}

static __attribute__((noinline)) void capture(const char *name)
{
	/* perf's order: AX BX CX DX SI DI BP SP IP R8..R15 */
	uint64_t r[17] = { 0 }, uchain[64], len, fp;
	uint32_t nu = 0;
	char path[PATH_MAX];
	FILE *f;

	__asm__ volatile("mov %%rbx, 8(%0)\n\t"
			 "mov %%rbp, 48(%0)\n\t"
			 "mov %%rsp, 56(%0)\n\t"
			 "lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, 64(%0)\n\t"
			 "mov %%r12, 104(%0)\n\t"
			 "mov %%r13, 112(%0)\n\t"
			 "mov %%r14, 120(%0)\n\t"
			 "mov %%r15, 128(%0)\n\t"
			 : : "r"(r) : "rax", "memory");
	len = seed_stack_end - r[7] < 32768 ? (seed_stack_end - r[7]) & ~7ull : 32768;
	/* The kernel's frame-pointer chain, as far as the copy holds it. */
	uchain[nu++] = r[8];
	for (fp = r[6]; nu < 64 && fp >= r[7] && fp + 16 <= r[7] + len && !(fp & 7);) {
		uint64_t next = peek(fp);

		uchain[nu++] = peek(fp + 8);
		if (next <= fp)
			break;
		fp = next;
	}
	snprintf(path, sizeof(path), "%s/%s", seed_dir, name);
	if (!(f = fopen(path, "wb")))
		abort();
	/* dwarf+fp too, tagged, all frames, the IP as a word; cut in half */
	fputc(0x11, f);
	fputc(255, f);
	fputc((int)nu, f);
	fputc(0, f);
	fputc((int)(len / 2 & 0xff), f);
	fputc((int)(len / 2 >> 8), f);
	fputc(4, f);
	fputc(0, f);
	for (int i = 0; i < 17; i++)
		put64(f, encode(r[i], r[7]));
	for (uint32_t i = 0; i < nu; i++)
		put64(f, encode(uchain[i], r[7]));
	for (uint64_t o = 0; o < len; o += 8)
		put64(f, encode(peek(r[7] + o), r[7]));
	if (fclose(f) != 0)
		abort();
}

static void on_signal(int sig)
{
	(void)sig;
	capture("signal-stack");
}

static void write_seeds(void)
{
	static bool done;
	char line[512];
	FILE *maps;

	if (done || !(seed_dir = getenv("MS_FUZZ_SEEDS")))
		return;
	done = true;
	if (!(maps = fopen("/proc/self/maps", "r")))
		abort();
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long lo, hi;

		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			seed_stack_end = hi;
	}
	fclose(maps);
	capture("real-stack");
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	signal(SIGUSR1, SIG_DFL);
}
#endif

/* Checks ---------------------------------------------------------------------- */

static uint64_t walk_hash(const struct ms_user_stack *w)
{
	uint64_t h = 0xcbf29ce484222325ull ^ w->n ^ ((uint64_t)w->end << 32);

	for (uint32_t i = 0; i < w->n; i++) {
		const struct ms_uframe *f = &w->frames[i];
		uint64_t parts[4] = { f->pc, f->flags | (uint64_t)f->loc_flags << 32, f->module,
				      f->address };

		for (int k = 0; k < 4; k++)
			h = (h ^ parts[k]) * 0x100000001b3ull;
	}
	return h;
}

/* One of this target's modules (with its CFI) that module index idx is, or NULL. */
static const struct mod *mod_of(struct ms_unwinder *u, uint32_t idx)
{
	const struct ms_module *r = ms_unwinder_module(u, idx);

	if (!r)
		return NULL;
	for (int i = 0; i < MODS; i++) {
		const struct mod *m = &mods[i];

		if (m->ok && m->cfi && m->rec.kind == r->kind &&
		    m->rec.build_id_len == r->build_id_len &&
		    !memcmp(m->rec.build_id, r->build_id, r->build_id_len))
			return m;
	}
	return NULL;
}

/*
 * The rule this target's own CFI of the frame's module gives its lookup
 * address: 1 with *rule, 0 when none covers it, -1 when the frame is in
 * no module with CFI (anonymous, unknown, an address that is a file
 * offset).
 */
static int rule_of(struct ms_unwinder *u, const struct ms_uframe *f,
		   const struct ms_cfi_rule **rule)
{
	const struct mod *m = mod_of(u, f->module);
	uint64_t addr = f->address - (f->flags & MS_FRAME_RETURN);
	const struct ms_cfi_rule *a, *b;
	uint32_t ia, ib;
	int r;

	if (!m || (f->loc_flags & MS_FRAME_FILE_OFFSET))
		return -1;
	r = ms_cfi_find(m->cfi, addr, &ia);
	CHECK(r >= 0);
	/* A rule from a row made at another address is the one made at this one (cfi.h). */
	CHECK(ms_cfi_find(m->plain, addr, &ib) == r);
	if (!r)
		return 0;
	a = ms_cfi_rule(m->cfi, ia);
	b = ms_cfi_rule(m->plain, ib);
	CHECK(a->cfa_kind == b->cfa_kind && a->cfa_reg == b->cfa_reg && a->flags == b->flags &&
	      a->n == b->n && a->cfa_len == b->cfa_len && a->undef == b->undef &&
	      a->fast == b->fast && a->ra_off == b->ra_off);
	CHECK(a->cfa_kind == MS_CFA_EXPR || a->cfa_arg == b->cfa_arg);
	for (uint32_t i = 0; i < a->n; i++)
		CHECK(a->regs[i].reg == b->regs[i].reg && a->regs[i].kind == b->regs[i].kind &&
		      a->regs[i].len == b->regs[i].len &&
		      (a->regs[i].kind >= MS_REG_EXPR || a->regs[i].arg == b->regs[i].arg));
	*rule = a;
	return 1;
}

/* The frame is bound to the module of its lookup address, as resolve says. */
static void check_binding(struct ms_unwinder *u, struct ms_process *proc,
			  const struct ms_uframe *f)
{
	uint64_t ret = f->flags & MS_FRAME_RETURN, lookup = f->pc - ret;
	struct ms_code_loc loc;
	int r = ms_unwinder_resolve(u, proc, lookup, &loc);

	CHECK(r >= 0);
	CHECK(f->resolved);
	CHECK(f->module == loc.module);
	CHECK(f->address == loc.address + ret);
	CHECK(f->loc_flags == loc.flags);
}

static bool has_pc(const struct ms_sample *s, uint64_t *pc)
{
	struct ms_sampled_state ss;
	struct ms_regstate rs;

	ms_sampled_state_init(&ss, &rs, s);
	*pc = rs.val[MS_DW_RA];
	return rs.known & (1u << MS_DW_RA);
}

/*
 * What every walk of a DWARF method promises (dwarf.h). Frames [0, n_dwarf)
 * are the DWARF loop's (dwarf+fp's chain frames after them are checked by
 * check_merge()), and loop_end says the walk's end is the loop's.
 */
static void check_walk(struct side *sd, const struct ms_sample *s, uint32_t max,
		       const struct ms_user_stack *w, uint32_t n_dwarf, bool loop_end)
{
	struct ms_process *proc = ms_unwinder_process(sd->u, PID);
	const struct ms_cfi_rule *rule;
	uint64_t pc;

	CHECK(w->n <= max);
	CHECK(w->end <= MS_END_DEPTH);
	CHECK(w->end != MS_END_FP_CHAIN || sd->method == &ms_unwind_method_dwarf_fp);
	CHECK(w->end != MS_END_DEPTH || w->n == max);
	if (!has_pc(s, &pc)) {
		CHECK(w->n == 0 && w->end == MS_END_MISSING_REGISTER);
		return;
	}
	if (!max) {
		CHECK(w->n == 0 && w->end == MS_END_DEPTH);
		return;
	}
	CHECK(w->n >= 1 && n_dwarf >= 1 && n_dwarf <= w->n);
	CHECK(w->frames[0].pc == pc && w->frames[0].flags == 0);
	for (uint32_t i = 0; i < w->n; i++) {
		const struct ms_uframe *f = &w->frames[i];

		CHECK(!(f->flags & ~(uint32_t)MS_FRAME_RETURN));
		check_binding(sd->u, proc, f);
		if (i + 1 < n_dwarf) {
			/* The loop stepped from f: by a rule of its module's CFI. */
			CHECK(rule_of(sd->u, f, &rule) == 1);
			CHECK(!(rule->flags & MS_CFI_OUTERMOST));
			/* The caller's PC: exact after a signal frame, else a return address. */
			CHECK(w->frames[i + 1].flags ==
			      (rule->flags & MS_CFI_SIGNAL ? 0u : (uint32_t)MS_FRAME_RETURN));
			CHECK(w->frames[i + 1].pc != 0);
		}
	}
	if (loop_end && w->n == n_dwarf && w->end != MS_END_DEPTH) {
		const struct ms_uframe *f = &w->frames[w->n - 1];
		struct ms_code_loc loc;
		int r = rule_of(sd->u, f, &rule);

		switch (w->end) {
		case MS_END_NO_MODULE:
			CHECK(ms_unwinder_resolve(sd->u, proc, f->pc - (f->flags & 1), &loc) == 0);
			break;
		case MS_END_NO_CFI:
			CHECK(r <= 0);
			break;
		case MS_END_OUTERMOST:
			/* The rule says so, or the return address read was 0. */
			CHECK(r == 1);
			break;
		case MS_END_MISSING_REGISTER:
		case MS_END_STACK_COPY:
		case MS_END_CFA_NOT_OUTWARDS:
			CHECK(r == 1 && !(rule->flags & MS_CFI_OUTERMOST));
			break;
		default:
			CHECK(!"a reason the DWARF loop does not give");
		}
	}
	if (w->token) {
		uint64_t h = walk_hash(w);
		uint32_t slot = (uint32_t)(w->token % TOKENS);

		if (sd->tokens[slot].token == w->token)
			CHECK(sd->tokens[slot].hash == h);
		sd->tokens[slot].token = w->token;
		sd->tokens[slot].hash = h;
	}
}

/* Whether module a of side sa is module b of side sb: indices are each unwinder's own. */
static bool same_module(const struct side *sa, uint32_t a, const struct side *sb, uint32_t b)
{
	const struct ms_module *ma = ms_unwinder_module(sa->u, a), *mb = ms_unwinder_module(sb->u, b);

	return ma && mb && ma->kind == mb->kind && ma->build_id_len == mb->build_id_len &&
	       !memcmp(ma->build_id, mb->build_id, ma->build_id_len) && ma->ino == mb->ino &&
	       ma->path.len == mb->path.len &&
	       (!ma->path.len || !memcmp(ma->path.ptr, mb->path.ptr, ma->path.len));
}

static bool same_frame(const struct side *sa, const struct ms_uframe *a, const struct side *sb,
		       const struct ms_uframe *b)
{
	return a->pc == b->pc && a->flags == b->flags && same_module(sa, a->module, sb, b->module) &&
	       a->address == b->address && a->loc_flags == b->loc_flags;
}

/*
 * dwarf+fp's walk f against the DWARF walk d of the same sample and max
 * (sample.c's rules): the same unless d ended with the copy; then d's
 * frames and chain entries, each taken past a standard frame.
 */
static void check_merge(struct side *sd, const struct ms_sample *s,
			const struct ms_user_stack *d, const struct ms_user_stack *f)
{
	const struct ms_cfi_rule *rule;
	uint32_t j0;

	CHECK(f->n >= d->n);
	for (uint32_t i = 0; i < d->n; i++)
		CHECK(same_frame(&dw, &d->frames[i], sd, &f->frames[i]));
	if (d->end != MS_END_STACK_COPY) {
		CHECK(f->n == d->n && f->end == d->end);
		return;
	}
	if (f->n == d->n && f->end == MS_END_STACK_COPY)
		return;
	/* Something was taken from the chain: the walk's last rule is a standard frame. */
	CHECK(d->n >= 1 && rule_of(dw.u, &d->frames[d->n - 1], &rule) == 1);
	CHECK(rule->flags & MS_CFI_FRAME_POINTER);
	if (f->n == d->n) {
		CHECK(f->end == MS_END_FP_CHAIN || f->end == MS_END_DEPTH);
		return;
	}
	/* Chain entries, in order, from one past the sampled PC's. */
	for (j0 = 1; j0 < s->n_uchain; j0++) {
		uint32_t k;

		for (k = d->n; k < f->n && j0 + k - d->n < s->n_uchain &&
			       f->frames[k].pc == s->uchain[j0 + k - d->n]; k++)
			;
		if (k == f->n)
			break;
	}
	CHECK(j0 < s->n_uchain);
	for (uint32_t k = d->n; k < f->n; k++) {
		CHECK(f->frames[k].flags == MS_FRAME_RETURN);
		if (k + 1 < f->n) {
			CHECK(rule_of(sd->u, &f->frames[k], &rule) == 1);
			CHECK(rule->flags & MS_CFI_FRAME_POINTER);
			CHECK(!(rule->flags & MS_CFI_OUTERMOST));
		}
	}
	switch (f->end) {
	case MS_END_FP_CHAIN:
	case MS_END_DEPTH:
	case MS_END_NO_CFI:
	case MS_END_NO_MODULE:
	case MS_END_OUTERMOST:
		break;
	case MS_END_STACK_COPY:
		/* The last entry's rule is neither a standard frame nor outermost. */
		CHECK(rule_of(sd->u, &f->frames[f->n - 1], &rule) == 1);
		CHECK(!(rule->flags & (MS_CFI_FRAME_POINTER | MS_CFI_OUTERMOST)));
		break;
	default:
		CHECK(!"a reason dwarf+fp does not give");
	}
}

/* The input's expression, evaluated and stepped by in the sampled state. */
static void check_expr(const struct ms_sample *s, const struct params *pa)
{
	struct ms_sampled_state ss;
	struct ms_regstate rs;
	uint64_t out, cfa, above;
	uint32_t end = UINT32_MAX;

	ms_sampled_state_init(&ss, &rs, s);
	above = rs.val[MS_DW_RSP];
	if (!ms_dwarf_expr_eval(pa->ops, pa->n_ops, &rs, &ss.reader, pa->flags & 64,
				above + 16, &out, &end))
		CHECK(end == MS_END_MISSING_REGISTER || end == MS_END_STACK_COPY ||
		      end == MS_END_NO_CFI);
	ms_sampled_state_init(&ss, &rs, s);
	end = UINT32_MAX;
	if (ms_dwarf_step(&rs, &ss.reader, &pa->rule, pa->ops, above, &cfa, &end)) {
		CHECK(rs.known & (1u << MS_DW_RA));
		CHECK(cfa > above);
	} else {
		CHECK(end == MS_END_MISSING_REGISTER || end == MS_END_STACK_COPY ||
		      end == MS_END_NO_CFI || end == MS_END_CFA_NOT_OUTWARDS);
	}
}

/* A direct walk of the side's method. */
static void walk(struct side *sd, const struct ms_sample *s, uint32_t max,
		 struct ms_user_stack *w)
{
	struct ms_process *proc = ms_unwinder_process(sd->u, PID);

	CHECK(proc);
	w->n = 0;
	w->end = MS_END_FP_CHAIN;
	w->token = 0;
	w->token_enough = false;
	CHECK(sd->method->walk(sd->u, proc, s, max, w) == 0);
}

static void learn_modules(struct side *sd)
{
	struct ms_module m;

	while (ms_unwinder_next_module(sd->u, &m)) {
		CHECK(m.id < sizeof(sd->kinds) / sizeof(sd->kinds[0]));
		sd->kinds[m.id] = m.kind;
	}
}

/* The kernel frames ms_unwinder_sample() puts first. */
static uint32_t kernel_frames(const struct ms_sample *s)
{
	if (s->n_kchain)
		return s->n_kchain;
	return !s->n_uchain && s->cpumode == MS_CPUMODE_KERNEL && s->ip;
}

/* ms_unwinder_sample()'s stack st of s, whose walk with the same max is w. */
static void check_stack(struct side *sd, const struct ms_sample *s, const struct ms_stack *st,
			const struct ms_user_stack *w)
{
	uint32_t nk = kernel_frames(s);

	CHECK(st->n_frames <= MS_FRAMES_MAX && st->n_frames >= nk);
	CHECK(st->reason <= MS_END_KERNEL_ONLY);
	for (uint32_t i = 0; i < nk; i++) {
		CHECK(sd->kinds[st->frames[i].module] == MS_MODULE_KERNEL);
		CHECK(st->frames[i].flags == (MS_FRAME_KERNEL | (i ? MS_FRAME_RETURN : 0)));
	}
	if (!s->n_uchain && s->cpumode != MS_CPUMODE_USER) {
		CHECK(st->reason == MS_END_KERNEL_ONLY && st->n_frames == nk);
		return;
	}
	CHECK(st->reason != MS_END_KERNEL_ONLY);
	CHECK(st->reason != MS_END_DEPTH || st->n_frames == MS_FRAMES_MAX);
	/* The walk's frames, bound as it bound them. */
	CHECK(st->n_frames - nk == w->n && st->reason == w->end);
	for (uint32_t i = nk; i < st->n_frames; i++) {
		const struct ms_stack_frame *f = &st->frames[i];
		const struct ms_uframe *uf = &w->frames[i - nk];
		uint32_t kind = sd->kinds[f->module];

		CHECK(f->address == uf->address);
		CHECK(f->flags == ((uf->flags & MS_FRAME_RETURN) | uf->loc_flags));
		CHECK(kind != MS_MODULE_KERNEL);
		CHECK(kind != MS_MODULE_UNKNOWN ||
		      (i + 1 == st->n_frames && st->reason == MS_END_NO_MODULE));
	}
}

static void check_same_stack(const struct ms_stack *a, const struct ms_stack *b)
{
	CHECK(a->reason == b->reason && a->n_frames == b->n_frames);
	for (uint32_t i = 0; i < a->n_frames; i++)
		CHECK(a->frames[i].module == b->frames[i].module &&
		      a->frames[i].address == b->frames[i].address &&
		      a->frames[i].flags == b->frames[i].flags);
}

/* A copy cut short: a prefix of the whole copy's stack a, ended by the copy. */
static void check_prefix(const struct ms_stack *a, const struct ms_stack *c)
{
	CHECK(c->n_frames <= a->n_frames);
	for (uint32_t i = 0; i < c->n_frames; i++)
		CHECK(c->frames[i].module == a->frames[i].module &&
		      c->frames[i].address == a->frames[i].address &&
		      c->frames[i].flags == a->frames[i].flags);
	/*
	 * Ended where the whole copy's walk read past the cut: by the copy,
	 * or a register whose saved value or expression the cut removed.
	 */
	if (c->n_frames < a->n_frames || c->reason != a->reason)
		CHECK(c->reason == MS_END_STACK_COPY || c->reason == MS_END_MISSING_REGISTER);
}

/*
 * What one method's unwinder makes of sample s: a direct walk with the
 * input's max (first) and one with what the kernel frames leave (full),
 * then the stack, again, tagged, and (DWARF) from a copy cut short.
 */
static void run_side(struct side *sd, struct ms_sample *s, const struct params *pa,
		     struct ms_user_stack *first, struct ms_user_stack *full)
{
	uint32_t nk = kernel_frames(s), tag = 0;
	int r;

	map_all(sd);
	walk(sd, s, pa->max, first);
	walk(sd, s, MS_FRAMES_MAX - nk, full);
	ms_unwinder_prefetch(sd->u, s);
	CHECK(ms_unwinder_sample(sd->u, s, &stack_a) == 0);
	learn_modules(sd);
	check_stack(sd, s, &stack_a, full);
	/* Again: from the caches, the same stack. */
	CHECK(ms_unwinder_sample(sd->u, s, &stack_b) == 0);
	check_same_stack(&stack_a, &stack_b);
	if (pa->flags & 16) {
		r = ms_unwinder_sample_tagged(sd->u, s, &stack_b, &tag);
		CHECK(r == 0);
		check_same_stack(&stack_a, &stack_b);
		ms_unwinder_tag(sd->u, 7);
		r = ms_unwinder_sample_tagged(sd->u, s, &stack_b, &tag);
		CHECK(r == 0 || r == 1);
		if (r == 1)
			CHECK(tag == 7 && stack_b.reason == stack_a.reason && !nk);
		else
			check_same_stack(&stack_a, &stack_b);
	}
	if (sd->method == &ms_unwind_method_dwarf && pa->cut < s->stack_len) {
		uint32_t len = s->stack_len;

		s->stack_len = pa->cut;
		CHECK(ms_unwinder_sample(sd->u, s, &stack_b) == 0);
		learn_modules(sd);
		s->stack_len = len;
		check_prefix(&stack_a, &stack_b);
	}
}

int ms_fuzz_unwind(const uint8_t *data, size_t size)
{
	static struct params pa;
	uint32_t nk;

	setup();
#ifndef MS_FUZZ_REPLAY
	write_seeds();
#endif
	make_sample(data, size, &pa);
	if (pa.flags & 32)
		check_expr(&sample, &pa);
	nk = kernel_frames(&sample);
	run_side(&dw, &sample, &pa, &dw_first, &dw_full);
	check_walk(&dw, &sample, pa.max, &dw_first, dw_first.n, true);
	check_walk(&dw, &sample, MS_FRAMES_MAX - nk, &dw_full, dw_full.n, true);
	if (pa.flags & 1) {
		/* dwarf+fp against the DWARF walks of the same max. */
		run_side(&dwfp, &sample, &pa, &fp_first, &fp_full);
		check_merge(&dwfp, &sample, &dw_first, &fp_first);
		check_merge(&dwfp, &sample, &dw_full, &fp_full);
		check_walk(&dwfp, &sample, pa.max, &fp_first, dw_first.n,
			   fp_first.n == dw_first.n && fp_first.end == dw_first.end);
		check_walk(&dwfp, &sample, MS_FRAMES_MAX - nk, &fp_full, dw_full.n,
			   fp_full.n == dw_full.n && fp_full.end == dw_full.end);
	}
	free(pa.copy);
	return 0;
}

MS_FUZZ_TARGET("fuzz-unwind", ms_fuzz_unwind)

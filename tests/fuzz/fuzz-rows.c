/*
 * Fuzz target: a JIT function's rows (jit/rows.h), proved from any code
 * and decoded from any bytes.
 *
 * The input's first byte chooses. Even: the rest is a function's code (at
 * most MAX_CODE bytes, copied to end at a page that cannot be read, since
 * Zydis is not sanitized and an over-read must fault to be seen), proved
 * into rows. Odd: the rest is an encoded table, decoded.
 *
 * Checked (abort() when broken):
 *  - proved rows: at most MS_PROVE_ROWS_MAX, offsets strictly increasing
 *    from 0 below stop <= len, each unlike the row before; at every pc
 *    from the entry to 16 bytes past the end, ms_prove() agrees: a proved
 *    pc has a row with its frame and ms_proved_rule()'s rule, a
 *    mid-instruction pc the row of the boundary before, any other pc is
 *    at or past stop, not covered, and fails for the table's reason (a
 *    full table aside: past its stop pcs may be proved but are not
 *    covered); the table encodes within MS_ROWS_ENCODED_MAX and decodes
 *    back the same;
 *  - decoded bytes: no crash; a table accepted keeps the documented
 *    invariants, encodes to the very bytes decoded, and each of its rows
 *    gives a simple rule with the return address at CFA - 8.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jit/prove.h"
#include "jit/rows.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "fuzz-rows: %s:%d: broken: %s\n", __FILE__,   \
				__LINE__, #cond);                                    \
			abort();                                                     \
		}                                                                    \
	} while (0)

#define ENTRY 0x7f00deadb000ull
/* ms_prove() at every pc costs the square of the code: kept small. */
#define MAX_CODE 1024u
#define PAGE 4096u

static struct ms_prover *prover;
static uint8_t *area;		/* a page of code, then the guard page */
static struct ms_prove_rows table, again;
static uint8_t enc[MS_ROWS_ENCODED_MAX];

static bool rule_equal(const struct ms_cfi_rule *a, const struct ms_cfi_rule *b)
{
	if (a->cfa_kind != b->cfa_kind || a->cfa_reg != b->cfa_reg || a->flags != b->flags ||
	    a->n != b->n || a->cfa_len != b->cfa_len || a->fast != b->fast ||
	    a->cfa_arg != b->cfa_arg || a->undef != b->undef || a->saved != b->saved ||
	    a->valued != b->valued || a->ra_off != b->ra_off || a->clear != b->clear ||
	    a->set_known != b->set_known || a->set_saved != b->set_saved)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (a->regs[i].reg != b->regs[i].reg || a->regs[i].kind != b->regs[i].kind ||
		    a->regs[i].len != b->regs[i].len || a->regs[i].arg != b->regs[i].arg)
			return false;
	return true;
}

/* The invariants of any table, proved or decoded. */
static void check_table(const struct ms_prove_rows *t)
{
	CHECK(t->n <= MS_PROVE_ROWS_MAX);
	CHECK(t->stop <= MS_PROVE_STOP_MAX);
	CHECK((t->n == 0) == (t->stop == 0));
	CHECK(t->why != MS_PROVE_OK && t->why != MS_PROVE_MID_INSN && t->why < MS_PROVE_RESULTS);
	for (uint32_t i = 0; i < t->n; i++) {
		const struct ms_prove_row *row = &t->row[i];
		struct ms_cfi_rule r;

		CHECK(i == 0 ? row->offset == 0 : row->offset > t->row[i - 1].offset);
		CHECK(row->offset < t->stop);
		CHECK(i == 0 || !ms_prove_row_same(row, &t->row[i - 1]));
		CHECK(ms_rows_find(t->row, t->n, t->stop, row->offset) == row);
		CHECK(ms_rows_find(t->row, t->n, t->stop,
				   i + 1 < t->n ? t->row[i + 1].offset - 1 : t->stop - 1) == row);
		ms_rows_rule(row, &r);
		CHECK(r.flags & MS_CFI_SIMPLE);
		CHECK(r.cfa_reg == row->cfa_reg && r.cfa_arg == row->cfa_off);
		CHECK(r.n >= 2 && r.regs[r.n - 1].reg == MS_DW_RA &&
		      r.regs[r.n - 1].arg == MS_PROVE_RA_OFF);
		CHECK((r.undef & row->lost) == row->lost);
	}
	CHECK(!ms_rows_find(t->row, t->n, t->stop, t->stop));
}

static void prove_code(const uint8_t *data, size_t size)
{
	size_t len = size < MAX_CODE ? size : MAX_CODE, n;
	uint8_t *code = area + PAGE - len;
	const struct ms_prove_row *last = NULL;
	enum ms_prove_result why;

	memcpy(code, data, len);
	why = ms_prove_rows(prover, code, len, &table);
	CHECK(why == table.why);
	CHECK(table.stop <= len);
	check_table(&table);
	for (uint64_t off = 0; off < len + 16; off++) {
		struct ms_proved_frame f;
		struct ms_prove_row want;
		struct ms_cfi_rule rf, rr;
		enum ms_prove_result r = ms_prove(prover, code, len, ENTRY, ENTRY + off, &f);
		const struct ms_prove_row *row = ms_rows_find(table.row, table.n, table.stop, off);

		if (off >= table.stop && table.why == MS_PROVE_TOO_MANY_ROWS) {
			/* past a full table: proved or not, not covered */
			CHECK(!row);
		} else if (r == MS_PROVE_OK) {
			CHECK(row);
			ms_prove_row_of(&f, row->offset, &want);
			CHECK(ms_prove_row_same(row, &want));
			ms_proved_rule(&f, &rf);
			ms_rows_rule(row, &rr);
			CHECK(rule_equal(&rf, &rr));
			last = row;
		} else if (r == MS_PROVE_MID_INSN) {
			CHECK(row && row == last);
		} else {
			CHECK(off >= table.stop && !row);
			CHECK(off >= len || r == table.why);
		}
	}
	n = ms_rows_encode(&table, enc, sizeof(enc));
	CHECK(n >= MS_ROWS_HEADER && n <= MS_ROWS_ENCODED_MAX);
	CHECK(ms_rows_decode(enc, n, &again, "fuzz-rows") == 0);
	CHECK(again.n == table.n && again.stop == table.stop && again.why == table.why);
	CHECK(memcmp(again.row, table.row, table.n * sizeof(table.row[0])) == 0);
}

static void decode_bytes(const uint8_t *data, size_t size)
{
	size_t n;

	if (ms_rows_decode(data, size, &table, "fuzz-rows input") < 0)
		return;
	check_table(&table);
	n = ms_rows_encode(&table, enc, sizeof(enc));
	CHECK(n == size && memcmp(enc, data, size) == 0);
}

int ms_fuzz_rows(const uint8_t *data, size_t size)
{
	if (!prover) {
		prover = ms_prover_new();
		CHECK(prover);
		area = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		CHECK(area != MAP_FAILED);
		CHECK(mprotect(area + PAGE, PAGE, PROT_NONE) == 0);
	}
	if (size < 1)
		return 0;
	if (data[0] % 2 == 0)
		prove_code(data + 1, size - 1);
	else
		decode_bytes(data + 1, size - 1);
	return 0;
}

MS_FUZZ_TARGET("fuzz-rows", ms_fuzz_rows)

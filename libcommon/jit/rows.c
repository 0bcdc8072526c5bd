/*
 * A JIT function's table of proved rows (jit/rows.h): its rules, look-up,
 * encoding and checked decoding. Nothing here decodes machine code, so
 * the statically linked stages use it without Zydis.
 */
#include "jit/rows.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

void ms_prove_row_of(const struct ms_proved_frame *f, uint32_t offset, struct ms_prove_row *row)
{
	memset(row, 0, sizeof(*row));
	row->offset = offset;
	row->cfa_reg = f->cfa_reg;
	row->cfa_off = f->cfa_off;
	row->saved = (uint16_t)(f->saved & MS_PROVE_CALLEE_SAVED);
	row->lost = (uint16_t)(f->lost & MS_PROVE_CALLEE_SAVED);
	for (unsigned r = 0; r < MS_DWARF_REGS; r++)
		if (row->saved & (1u << r))
			row->save_off[ms_prove_save_slot(r)] = f->save_off[r];
}

const struct ms_prove_row *ms_rows_find(const struct ms_prove_row *row, uint32_t n,
					uint32_t stop, uint64_t off)
{
	uint32_t lo = 0, hi = n;

	if (n == 0 || off >= stop)
		return NULL;
	/* The last row whose offset is <= off; row[0].offset is 0. */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (row[mid].offset <= off)
			lo = mid;
		else
			hi = mid;
	}
	return &row[lo];
}

void ms_rows_rule(const struct ms_prove_row *row, struct ms_cfi_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->cfa_kind = MS_CFA_REG;
	r->cfa_reg = row->cfa_reg;
	r->cfa_arg = row->cfa_off;
	/* psABI: the caller-saved registers have no value in the caller (as ms_proved_rule()). */
	r->undef = (0xffffu & ~MS_PROVE_CALLEE_SAVED & ~(1u << MS_DW_RSP)) | row->lost;
	for (unsigned reg = 0; reg < MS_DWARF_REGS; reg++) {
		struct ms_reg_rule *g = &r->regs[r->n];

		if (row->saved & (1u << reg))
			*g = (struct ms_reg_rule){ .reg = (uint8_t)reg, .kind = MS_REG_OFFSET,
						   .arg = row->save_off[ms_prove_save_slot(reg)] };
		else if (reg == MS_DW_RSP)
			*g = (struct ms_reg_rule){ .reg = MS_DW_RSP, .kind = MS_REG_VAL_OFFSET };
		else if (reg == MS_DW_RA)
			*g = (struct ms_reg_rule){ .reg = MS_DW_RA, .kind = MS_REG_OFFSET,
						   .arg = MS_PROVE_RA_OFF };
		else
			continue;
		r->n++;
	}
	ms_cfi_rule_finish(r);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t row_size(const struct ms_prove_row *row)
{
	unsigned saves = 0;

	for (unsigned r = 0; r < MS_DWARF_REGS; r++)
		saves += (row->saved >> r) & 1u;
	return MS_ROWS_ROW_MIN + 4 * saves;
}

size_t ms_rows_encode(const struct ms_prove_rows *t, uint8_t *buf, size_t cap)
{
	size_t size = MS_ROWS_HEADER, at;

	if (t->n > MS_PROVE_ROWS_MAX)
		return 0;
	for (uint32_t i = 0; i < t->n; i++)
		size += row_size(&t->row[i]);
	if (size > cap)
		return 0;
	buf[0] = MS_ROWS_VERSION;
	buf[1] = (uint8_t)t->why;
	put16(buf + 2, (uint16_t)t->n);
	put32(buf + 4, t->stop);
	at = MS_ROWS_HEADER;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct ms_prove_row *row = &t->row[i];

		put32(buf + at, row->offset);
		put32(buf + at + 4, (uint32_t)row->cfa_off);
		buf[at + 8] = row->cfa_reg;
		put16(buf + at + 9, row->saved);
		put16(buf + at + 11, row->lost);
		at += MS_ROWS_ROW_MIN;
		/* The saves in register order, as the mask lists them. */
		for (unsigned r = 0; r < MS_DWARF_REGS; r++) {
			if (!(row->saved & (1u << r)))
				continue;
			put32(buf + at, (uint32_t)row->save_off[ms_prove_save_slot(r)]);
			at += 4;
		}
	}
	return at;
}

static bool good_cfa(uint8_t reg, int32_t off)
{
	return (reg == MS_DW_RSP || reg == MS_DW_RBP) && off > 0 && off % 8 == 0 &&
	       off <= MS_PROVE_MAX_DEPTH;
}

bool ms_prove_row_same(const struct ms_prove_row *a, const struct ms_prove_row *b)
{
	return a->cfa_reg == b->cfa_reg && a->cfa_off == b->cfa_off && a->saved == b->saved &&
	       a->lost == b->lost && !memcmp(a->save_off, b->save_off, sizeof(a->save_off));
}

/* Row i at buf + *at, of len bytes in all: checked alone and against the row before. */
/*
 * Where a refusal goes: printed as an error (buf NULL), or kept in buf
 * for the caller to count (ms_rows_decode_quiet(): a hostile stream may
 * hold a million bad tables, and one line each would flood the terminal).
 */
struct sink {
	char *buf;
	size_t n;
};

static int __attribute__((format(printf, 2, 3))) bad(const struct sink *k, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->buf ? k->buf : line, k->buf ? k->n : sizeof(line), fmt, ap);
	va_end(ap);
	return k->buf ? -1 : ms_error("%s", line);
}

static int decode_row(const uint8_t *buf, size_t len, size_t *at, struct ms_prove_rows *t,
		      uint32_t i, const char *what, const struct sink *k)
{
	struct ms_prove_row *row = &t->row[i];

	if (len - *at < MS_ROWS_ROW_MIN)
		return bad(k, "%s: row %u of %u is cut short at byte %zu of %zu: "
				"the record is truncated or corrupt", what, i, t->n, *at, len);
	memset(row, 0, sizeof(*row));
	row->offset = get32(buf + *at);
	row->cfa_off = (int32_t)get32(buf + *at + 4);
	row->cfa_reg = buf[*at + 8];
	row->saved = get16(buf + *at + 9);
	row->lost = get16(buf + *at + 11);
	*at += MS_ROWS_ROW_MIN;
	if (i == 0 ? row->offset != 0 : row->offset <= t->row[i - 1].offset)
		return bad(k, "%s: row %u starts at offset %u, %s: the rows are corrupt", what, i,
				row->offset, i == 0 ? "not at the entry (0)" :
				"not past the row before");
	if (row->offset >= t->stop)
		return bad(k, "%s: row %u starts at offset %u, not below where the proofs "
				"stop (%u): the rows are corrupt", what, i, row->offset, t->stop);
	if (!good_cfa(row->cfa_reg, row->cfa_off))
		return bad(k, "%s: row %u has the CFA at DWARF register %u %+d, not %%rsp "
				"or %%rbp + a positive multiple of 8 up to %d: the rows are corrupt",
				what, i, row->cfa_reg, row->cfa_off, MS_PROVE_MAX_DEPTH);
	if ((row->saved | row->lost) & ~MS_PROVE_CALLEE_SAVED || (row->saved & row->lost))
		return bad(k, "%s: row %u saves registers 0x%x and loses 0x%x: only "
				"callee-saved registers (0x%x), none both: the rows are corrupt",
				what, i, row->saved, row->lost, MS_PROVE_CALLEE_SAVED);
	for (unsigned r = 0; r < MS_DWARF_REGS; r++) {
		int32_t off;

		if (!(row->saved & (1u << r)))
			continue;
		if (len - *at < 4)
			return bad(k, "%s: row %u is cut short in its saves at byte %zu of %zu: "
					"the record is truncated or corrupt", what, i, *at, len);
		off = (int32_t)get32(buf + *at);
		*at += 4;
		/* Below the return address, inside the frame. */
		if (off % 8 || off > 2 * MS_PROVE_RA_OFF || off < -MS_PROVE_MAX_DEPTH ||
		    (row->cfa_reg == MS_DW_RSP && off < -row->cfa_off))
			return bad(k, "%s: row %u saves DWARF register %u at CFA %+d, not a "
					"multiple of 8 in the frame below the return address: "
					"the rows are corrupt", what, i, r, off);
		row->save_off[ms_prove_save_slot(r)] = off;
	}
	if (i > 0 && ms_prove_row_same(row, &t->row[i - 1]))
		return bad(k, "%s: row %u is the frame of the row before: the rows are corrupt",
				what, i);
	return 0;
}

static int decode(const uint8_t *buf, size_t len, struct ms_prove_rows *t, const char *what,
		  const struct sink *k)
{
	size_t at = MS_ROWS_HEADER;

	if (len < MS_ROWS_HEADER)
		return bad(k, "%s: %zu bytes, less than the %d of a row table's header: "
				"the record is truncated or corrupt", what, len, MS_ROWS_HEADER);
	if (buf[0] != MS_ROWS_VERSION)
		return bad(k, "%s: row table version %u, this build reads version %d: "
				"use the ms-unwind of the ms-collect that wrote the stream",
				what, buf[0], MS_ROWS_VERSION);
	t->why = (enum ms_prove_result)buf[1];
	t->n = get16(buf + 2);
	t->stop = get32(buf + 4);
	if (buf[1] >= MS_PROVE_RESULTS || t->why == MS_PROVE_OK || t->why == MS_PROVE_MID_INSN)
		return bad(k, "%s: the proofs stop for reason %u, which no proof gives: "
				"the rows are corrupt", what, buf[1]);
	if (t->n > MS_PROVE_ROWS_MAX)
		return bad(k, "%s: %u rows, more than the %d a table holds: the rows are corrupt",
				what, t->n, MS_PROVE_ROWS_MAX);
	if (t->stop > MS_PROVE_STOP_MAX || (t->n == 0) != (t->stop == 0))
		return bad(k, "%s: %u rows cover offsets up to %u: not both 0, nor some up "
				"to at most %d: the rows are corrupt",
				what, t->n, t->stop, MS_PROVE_STOP_MAX);
	if (t->n == 0 && t->why != MS_PROVE_OUT_OF_BOUNDS)
		return bad(k, "%s: no rows, yet the proofs stop for reason %u, not for the "
				"end of the code: the rows are corrupt", what, buf[1]);
	if (t->why == MS_PROVE_TOO_MANY_ROWS && t->n != MS_PROVE_ROWS_MAX)
		return bad(k, "%s: %u rows said to be too many (%d are): the rows are corrupt",
				what, t->n, MS_PROVE_ROWS_MAX);
	for (uint32_t i = 0; i < t->n; i++)
		if (decode_row(buf, len, &at, t, i, what, k) < 0)
			return -1;
	if (at != len)
		return bad(k, "%s: %zu bytes follow the %u rows: the record is corrupt",
				what, len - at, t->n);
	return 0;
}

int ms_rows_decode(const uint8_t *buf, size_t len, struct ms_prove_rows *t, const char *what)
{
	const struct sink k = { NULL, 0 };

	return decode(buf, len, t, what, &k);
}

int ms_rows_decode_quiet(const uint8_t *buf, size_t len, struct ms_prove_rows *t,
			 const char *what, char *why, size_t why_size)
{
	const struct sink k = { why, why_size };

	if (why_size)
		why[0] = '\0';
	return why_size ? decode(buf, len, t, what, &k) : ms_rows_decode(buf, len, t, what);
}

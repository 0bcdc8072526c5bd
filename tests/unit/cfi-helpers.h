/*
 * Unit tests of CFI (dwarf/cfi.h): the module record of an ELF file, and
 * whether two rules say the same, expressions compared by their
 * operations. Include after <cmocka.h>.
 */
#ifndef MS_TESTS_CFI_HELPERS_H
#define MS_TESTS_CFI_HELPERS_H

#include <string.h>
#include <sys/sysmacros.h>

#include "dwarf/cfi.h"
#include "elf/elffile.h"

/* The module record of the file at path, as a proved mapping has it; false when unreadable. */
static inline bool module_at(const char *path, struct ms_module *m)
{
	struct ms_elf_file f;

	if (ms_elf_file_open(&f, path) != MS_SYM_OK)
		return false;
	*m = (struct ms_module){ .kind = MS_MODULE_FILE };
	m->build_id_len = f.build_id_len;
	memcpy(m->build_id, f.build_id, f.build_id_len);
	m->dev_maj = major(f.st.st_dev);
	m->dev_min = minor(f.st.st_dev);
	m->ino = f.st.st_ino;
	m->size = (uint64_t)f.st.st_size;
	m->mtime = ms_stat_mtime_ns(&f.st);
	ms_elf_file_close(&f);
	return true;
}

static inline void assert_same_rule(const struct ms_cfi *ca, const struct ms_cfi_rule *a,
			     const struct ms_cfi *cb, const struct ms_cfi_rule *b)
{
	const struct ms_dwarf_op *oa = ms_cfi_ops(ca), *ob = ms_cfi_ops(cb);

	assert_int_equal(a->cfa_kind, b->cfa_kind);
	assert_int_equal(a->cfa_reg, b->cfa_reg);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->cfa_len, b->cfa_len);
	assert_int_equal(a->fast, b->fast);
	assert_int_equal(a->undef, b->undef);
	assert_int_equal(a->saved, b->saved);
	assert_int_equal(a->valued, b->valued);
	assert_int_equal(a->ra_off, b->ra_off);
	assert_int_equal(a->clear, b->clear);
	assert_int_equal(a->set_known, b->set_known);
	assert_int_equal(a->set_saved, b->set_saved);
	if (a->cfa_kind == MS_CFA_EXPR)
		for (uint32_t k = 0; k < a->cfa_len; k++) {
			assert_int_equal(oa[a->cfa_arg + k].atom, ob[b->cfa_arg + k].atom);
			assert_true(oa[a->cfa_arg + k].number == ob[b->cfa_arg + k].number);
			assert_true(oa[a->cfa_arg + k].number2 == ob[b->cfa_arg + k].number2);
		}
	else
		assert_int_equal(a->cfa_arg, b->cfa_arg);
	for (uint32_t i = 0; i < a->n; i++) {
		const struct ms_reg_rule *ra = &a->regs[i], *rb = &b->regs[i];

		assert_int_equal(ra->reg, rb->reg);
		assert_int_equal(ra->kind, rb->kind);
		assert_int_equal(ra->len, rb->len);
		if (ra->kind == MS_REG_EXPR || ra->kind == MS_REG_VAL_EXPR)
			for (uint32_t k = 0; k < ra->len; k++)
				assert_int_equal(oa[ra->arg + k].atom, ob[rb->arg + k].atom);
		else
			assert_int_equal(ra->arg, rb->arg);
	}
}

#endif

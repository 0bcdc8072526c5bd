/*
 * A JIT function's rows proved in one pass (jit/rows.h): a row where the
 * frame that ms_prove_walk() gives at a boundary differs from the last.
 */
#include "jit/rows.h"


static enum ms_prove_result add_row(void *arg, uint32_t off, const struct ms_proved_frame *f)
{
	struct ms_prove_rows *t = arg;
	struct ms_prove_row row;

	ms_prove_row_of(f, off, &row);
	if (t->n > 0 && ms_prove_row_same(&row, &t->row[t->n - 1]))
		return MS_PROVE_OK;
	if (t->n == MS_PROVE_ROWS_MAX)
		return MS_PROVE_TOO_MANY_ROWS;
	t->row[t->n++] = row;
	return MS_PROVE_OK;
}

enum ms_prove_result ms_prove_rows(const struct ms_prover *p, const uint8_t *code, size_t len,
				   struct ms_prove_rows *out)
{
	out->n = 0;
	out->why = ms_prove_walk(p, code, len, add_row, out, &out->stop);
	return out->why;
}

/*
 * Sample rows keyed by (stack, thread, cut) (internal.h): two pair maps,
 * so the common key, (stack, thread), is one hash and the cut another.
 */
#include "config.h"

#include "formats/internal.h"

uint32_t ms_rows_get(struct ms_rows *r, uint32_t stack, uint32_t thread, uint32_t cut,
		     bool *added)
{
	uint32_t pair = ms_pairmap_get(&r->pairs, stack, thread, NULL);

	if (pair == MS_NONE)
		return MS_NONE;
	return ms_pairmap_get(&r->rows, pair, cut, added);
}

void ms_rows_key(const struct ms_rows *r, uint32_t row, uint32_t *stack, uint32_t *thread,
		 uint32_t *cut)
{
	uint32_t pair = r->rows.keys[row][0];

	*stack = r->pairs.keys[pair][0];
	*thread = r->pairs.keys[pair][1];
	*cut = r->rows.keys[row][1];
}

void ms_rows_release(struct ms_rows *r)
{
	ms_pairmap_release(&r->pairs);
	ms_pairmap_release(&r->rows);
}

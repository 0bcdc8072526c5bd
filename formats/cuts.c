/*
 * The synthetic outermost frames of stacks cut short (internal.h): each
 * label ms_truncated_label() gives gets a dense id in order of first use.
 */
#include "config.h"

#include "formats/internal.h"

#include <string.h>

#include "capture/funcs.h"

uint32_t ms_cuts_id(struct ms_cuts *c, uint32_t end)
{
	const char *label;
	uint32_t i;

	/* runs of samples share their end: one comparison for most */
	if (c->have_last && end == c->last_end)
		return c->last_id;
	if (!ms_stack_end_truncated(end)) {
		i = MS_NONE;
	} else {
		label = ms_truncated_label(end);
		for (i = 0; i < c->n && strcmp(c->labels[i], label); i++)
			;
		if (i == c->n) {
			/* funcs.c names 8; tests hold them to MS_CUTS_MAX */
			if (c->n == MS_CUTS_MAX)
				i = MS_CUTS_MAX - 1;
			else
				c->labels[c->n++] = label;
		}
	}
	c->have_last = true;
	c->last_end = end;
	c->last_id = i;
	return i;
}

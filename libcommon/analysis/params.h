/*
 * A typed query from named parameters, as a URL's query string gives them
 * (web/API.md): the options of ms-analyze without their dashes, the same
 * values and the same checks, so the page and the terminal ask the same
 * questions. Messages go through ms_error() (a server catches them with
 * ms_error_catch() and answers 400 with the text).
 */
#ifndef MS_ANALYSIS_PARAMS_H
#define MS_ANALYSIS_PARAMS_H

#include <stdint.h>

#include "analysis/query.h"

/* One parameter, percent-decoded. */
struct ms_param {
	const char *key, *value;
};

/*
 * Fill q (ms_query_init()ed for view) from params, passing over the keys
 * the caller reads itself, listed in skip and ended by NULL (the route's
 * "capture", "a" and "b").
 * Strings in q borrow from params. 0, or -1 after one message: an
 * unknown key, a key the view does not take, a value the option refuses,
 * a key given twice that may not be, or a query ms_query_check() refuses.
 */
int ms_query_from_params(struct ms_query *q, const struct ms_param *params, uint32_t n,
			 const char *const *skip);

#endif

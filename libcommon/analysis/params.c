/*
 * A typed query from a URL's named parameters (web/API.md): each one an
 * option of ms-analyze without its dashes, checked and parsed by
 * analysis/options.c as the command line's are, so both refuse the same
 * values with the same words.
 */
#include "analysis/params.h"

#include <string.h>

#include "analysis/options.h"
#include "util/error.h"

static bool skipped(const char *key, const char *const *skip)
{
	for (; skip && *skip; skip++)
		if (!strcmp(key, *skip))
			return true;
	return false;
}

static int unknown(const char *key)
{
	return ms_error("unknown parameter '%s': the parameters are ms-analyze's options without "
			"their dashes: by, look, unit, tid, thread, time, module, focus, ignore, "
			"cause, label, hide-below, function (callers, callees), sort, limit, buckets",
			key);
}

int ms_query_from_params(struct ms_query *q, const struct ms_param *params, uint32_t n,
			 const char *const *skip)
{
	uint32_t seen = 0;
	bool function_seen = false;

	for (uint32_t i = 0; i < n; i++) {
		const char *key = params[i].key, *value = params[i].value;
		enum ms_qopt o;

		if (!key)
			return ms_error("a parameter without a name");
		if (skipped(key, skip))
			continue;
		if (!value)
			return ms_error("parameter '%s' needs a value: %s=VALUE", key, key);
		if (!strcmp(key, "function")) {
			/* ms-analyze takes it as the word after the view */
			if (q->view != MS_VIEW_CALLERS && q->view != MS_VIEW_CALLEES)
				return ms_error("function applies to callers and callees, not %s",
						ms_view_name(q->view));
			if (function_seen)
				return ms_error("parameter 'function' given twice: give it once");
			function_seen = true;
			q->function = value;
			continue;
		}
		/* min-percent is the terminal's other name of hide-below: one name here */
		if (ms_qopt_find(key, &o) || o == MS_QOPT_MIN_PERCENT)
			return unknown(key);
		if (ms_qopt_check_view(q->view, o))
			return -1;
		if ((seen & (1u << o)) && !ms_qopt_repeats(o))
			return ms_error("parameter '%s' given twice: give it once (only tid and thread "
					"may be repeated)", key);
		seen |= 1u << o;
		if (ms_qopt_apply(q, o, value))
			return -1;
	}
	return ms_query_check(q);
}

/*
 * The options that shape a query, as ms-analyze spells them (--NAME) and
 * the web's parameters (NAME): which views take each, and their values
 * parsed into a query. One place for the checks and their messages, so
 * cmd/analyze/cli.c and analysis/params.c refuse the same values with the
 * same words. Output options (--json, --color, --width) are the
 * command's, not a query's, and are not here.
 */
#ifndef MS_ANALYSIS_OPTIONS_H
#define MS_ANALYSIS_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/query.h"

enum ms_qopt {
	MS_QOPT_LIMIT = 0,
	MS_QOPT_SORT,
	MS_QOPT_MIN_PERCENT,
	MS_QOPT_HIDE_BELOW,
	MS_QOPT_BY,
	MS_QOPT_LOOK,
	MS_QOPT_UNIT,
	MS_QOPT_TID,
	MS_QOPT_THREAD,
	MS_QOPT_TIME,
	MS_QOPT_MODULE,
	MS_QOPT_FOCUS,
	MS_QOPT_IGNORE,
	MS_QOPT_BUCKETS,
	MS_QOPT_CAUSE,
	MS_QOPT_LABEL,
	MS_QOPT_COUNT,
};

/* "limit", "hide-below", ...: the option without its dashes. */
const char *ms_qopt_name(enum ms_qopt o);
/* The option named name (without dashes): 0, or -1 without a message. */
int ms_qopt_find(const char *name, enum ms_qopt *out);
/* Whether the option may be given more than once (its values add up: tid, thread). */
bool ms_qopt_repeats(enum ms_qopt o);
/* Whether view v takes the option. */
bool ms_qopt_applies(enum ms_view v, enum ms_qopt o);
/* 0 when v takes o, else -1 after "--NAME applies to VIEWS, not VIEW". */
int ms_qopt_check_view(enum ms_view v, enum ms_qopt o);
/*
 * Parse arg, the option's value, into q (strings borrowed: arg must
 * outlive q): 0, or -1 after the message ms-analyze prints for it.
 */
int ms_qopt_apply(struct ms_query *q, enum ms_qopt o, const char *arg);

/*
 * A count from 0 to max in decimal, for the option opt ("--limit") of
 * nouns ("rows"): 0, or -1 after "OPT wants a count of NOUN (0 to MAX),
 * not 'ARG'".
 */
int ms_qopt_parse_count(const char *opt, const char *noun, const char *arg, uint32_t max,
			uint32_t *out);

#endif

/*
 * The report of `microscope report FILE`: summary, top, tree, in that
 * order, so that what limits trust in the numbers is read first.
 */
#include "analysis/analysis.h"

int ms_report_write(FILE *out, const struct ms_capture *cap, const struct ms_report_options *opts)
{
	struct ms_report_options def = {
		.top_limit = MS_REPORT_TOP_LIMIT,
		.tree_min_percent = MS_REPORT_TREE_MIN_PERCENT,
	};
	struct ms_top_options top;
	struct ms_tree_options tree;

	if (!opts)
		opts = &def;
	top = (struct ms_top_options){ .sort = MS_TOP_SORT_SELF, .limit = opts->top_limit };
	tree = (struct ms_tree_options){ .min_percent = opts->tree_min_percent };

	if (ms_summary_write(out, cap, false))
		return -1;
	fputs("\nhottest functions\n", out);
	if (ms_top_write(out, cap, &top))
		return -1;
	fputs("\ncall tree\n", out);
	return ms_tree_write(out, cap, &tree);
}

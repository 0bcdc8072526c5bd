/*
 * The report of `microscope report FILE`: summary, top, tree, in that
 * order, so that what limits trust in the numbers is read first. The
 * query's filters apply to top and tree.
 */
#include "analysis/analysis.h"

int ms_report_write(const struct ms_view_out *o, const struct ms_capture *cap,
		    const struct ms_query *q)
{
	struct ms_query top = *q, tree = *q;

	if (o->json) {
		/* one object of the three views' objects (their newlines are JSON whitespace) */
		top.view = MS_VIEW_TOP;
		tree.view = MS_VIEW_TREE;
		fputs("{\"summary\":", o->f);
		if (ms_summary_write(o->f, cap, true))
			return -1;
		fputs(",\"top\":", o->f);
		if (ms_top_write(o, cap, &top))
			return -1;
		fputs(",\"tree\":", o->f);
		if (ms_tree_write(o, cap, &tree))
			return -1;
		fputs("}\n", o->f);
		return 0;
	}
	top.view = MS_VIEW_TOP;
	if (!top.limit)
		top.limit = MS_REPORT_TOP_LIMIT;
	tree.view = MS_VIEW_TREE;
	if (tree.hide_below <= 0)
		tree.hide_below = MS_REPORT_TREE_HIDE_BELOW;
	if (ms_summary_write(o->f, cap, false))
		return -1;
	fputs("\nhottest functions\n", o->f);
	if (ms_top_write(o, cap, &top))
		return -1;
	fputs("\ncall tree\n", o->f);
	return ms_tree_write(o, cap, &tree);
}

/*
 * The report of `microscope report FILE`: summary, top, tree, in that
 * order, so that what limits trust in the numbers is read first. The
 * query's filters apply to top and tree.
 */
#include "analysis/analysis.h"

#include <stdlib.h>

#include "util/error.h"

/* One view's JSON object written into the report's, without its newline. */
static int json_part(const struct ms_view_out *o, const char *key, const struct ms_capture *cap,
		     const struct ms_query *q)
{
	struct ms_view_out part = *o;
	char *buf = NULL;
	size_t len = 0;
	int rc;

	part.f = open_memstream(&buf, &len);
	if (!part.f)
		return ms_error("out of memory writing the report's %s", key);
	rc = q->view == MS_VIEW_SUMMARY ? ms_summary_write(part.f, cap, true) : ms_view_write(&part, cap, q);
	if (fclose(part.f) || rc) {
		free(buf);
		return rc ? -1 : ms_error("out of memory writing the report's %s", key);
	}
	while (len && buf[len - 1] == '\n')
		len--;
	fprintf(o->f, "\"%s\":", key);
	fwrite(buf, 1, len, o->f);
	free(buf);
	return 0;
}

int ms_report_write(const struct ms_view_out *o, const struct ms_capture *cap,
		    const struct ms_query *q)
{
	struct ms_query summary = *q, top = *q, tree = *q;

	/* the command line set the report's defaults; --hide-below is the tree's */
	summary.view = MS_VIEW_SUMMARY;
	top.view = MS_VIEW_TOP;
	top.hide_below = 0;
	tree.view = MS_VIEW_TREE;
	if (o->json) {
		/* one object of the three views' objects, on one line */
		fputc('{', o->f);
		if (json_part(o, "summary", cap, &summary))
			return -1;
		fputc(',', o->f);
		if (json_part(o, "top", cap, &top))
			return -1;
		fputc(',', o->f);
		if (json_part(o, "tree", cap, &tree))
			return -1;
		fputs("}\n", o->f);
		return 0;
	}
	if (ms_summary_write_out(o, cap))
		return -1;
	fputs("\nhottest functions\n", o->f);
	if (ms_top_write(o, cap, &top))
		return -1;
	fputs("\ncall tree\n", o->f);
	return ms_tree_write(o, cap, &tree);
}

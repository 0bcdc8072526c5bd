/*
 * The route of microscope serve (serve/serve.h) over two small captures
 * (imported from folded stacks): each path's status, content type and
 * body, the body of a view byte for byte what ms_view_write() writes for
 * ms-analyze --json, refusals with their reasons, and the embedded page.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "formats/formats.h"
#include "serve/serve.h"
#include "util/error.h"

#define P(k, v) { (k), (v) }
#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static const char folded_a[] =
	"main;work;hot 60\n"
	"main;work;cold 30\n"
	"main;idle 10\n";
static const char folded_b[] =
	"main;work;hot 20\n"
	"main;work;cold 70\n"
	"main;fresh 10\n";

static struct ms_serve_capture caps[2];

static int setup(void **state)
{
	caps[0].cap = ms_folded_import(folded_a, sizeof(folded_a) - 1, "a.folded", "test 1");
	caps[1].cap = ms_folded_import(folded_b, sizeof(folded_b) - 1, "b.folded", "test 1");
	caps[0].name = "a.msc";
	caps[1].name = "b.msc";
	if (!caps[0].cap || !caps[1].cap)
		return -1;
	/* folded has no times: give the rows some, in their order, for the timeline */
	for (int c = 0; c < 2; c++)
		for (uint32_t i = 0; i < caps[c].cap->n_samples; i++)
			caps[c].cap->samples[i].time = (i + 1) * 400000000ull;
	return 0;
}

static int teardown(void **state)
{
	ms_capture_free((struct ms_capture *)caps[0].cap);
	ms_capture_free((struct ms_capture *)caps[1].cap);
	return 0;
}

static struct ms_response get(const char *method, const char *path, const struct ms_param *p,
			      uint32_t n)
{
	struct ms_response r;

	assert_int_equal(ms_serve_route(caps, 2, method, path, p, n, &r), 0);
	assert_non_null(r.body);
	assert_non_null(r.content_type);
	return r;
}

/* What ms-analyze VIEW --json writes for q over cap (b: diff of cap and b). */
static char *expected(const struct ms_query *q, int a, int b, size_t *len)
{
	struct ms_view_out o = { .json = true };
	char *buf = NULL;

	o.f = open_memstream(&buf, len);
	assert_non_null(o.f);
	if (b >= 0)
		assert_int_equal(ms_diff_write(&o, caps[a].cap, caps[a].name, caps[b].cap,
					       caps[b].name, q), 0);
	else
		assert_int_equal(ms_view_write(&o, caps[a].cap, q), 0);
	assert_int_equal(fclose(o.f), 0);
	return buf;
}

static void assert_view(const char *path, const struct ms_param *p, uint32_t n,
			const struct ms_query *q, int a, int b)
{
	struct ms_response r = get("GET", path, p, n);
	size_t len;
	char *want = expected(q, a, b, &len);

	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "application/json");
	assert_true(r.immutable);
	assert_false(r.body_static);
	assert_true(len > 2);
	assert_int_equal(r.len, len);
	assert_memory_equal(r.body, want, len);
	free(want);
	ms_response_release(&r);
	assert_null(r.body);
}

/* A refusal: its status and {"error":"MESSAGE"} with exactly message (NULL: any). */
static void assert_refused(const char *method, const char *path, const struct ms_param *p,
			   uint32_t n, int status, const char *message)
{
	struct ms_response r = get(method, path, p, n);
	char want[2048];

	assert_int_equal(r.status, status);
	assert_string_equal(r.content_type, "application/json");
	assert_false(r.immutable);
	if (message) {
		snprintf(want, sizeof(want), "{\"error\":\"%s\"}\n", message);
		assert_int_equal(r.len, strlen(want));
		assert_memory_equal(r.body, want, r.len);
	} else {
		assert_true(r.len > 12 && !memcmp(r.body, "{\"error\":\"", 10));
	}
	ms_response_release(&r);
}

static void test_views(void **state)
{
	const struct ms_param top[] = { P("capture", "1"), P("limit", "2"), P("sort", "total") };
	const struct ms_param tree[] = { P("hide-below", "15"), P("focus", "work") };
	const struct ms_param callers[] = { P("function", "hot"), P("capture", "0") };
	const struct ms_param timeline[] = { P("buckets", "5"), P("time", "0..1s") };
	const struct ms_param diff[] = { P("b", "1"), P("sort", "total"), P("a", "0") };
	struct ms_query q;

	ms_query_init(&q, MS_VIEW_SUMMARY);
	assert_view("/api/summary", top, 1, &q, 1, -1);
	/* capture 0 when none is named */
	assert_view("/api/summary", NULL, 0, &q, 0, -1);

	ms_query_init(&q, MS_VIEW_TOP);
	q.limit = 2;
	q.sort = MS_SORT_TOTAL;
	assert_view("/api/view/top", top, N(top), &q, 1, -1);

	ms_query_init(&q, MS_VIEW_TREE);
	q.hide_below = 15;
	q.focus = "work";
	assert_view("/api/view/tree", tree, N(tree), &q, 0, -1);

	ms_query_init(&q, MS_VIEW_CALLERS);
	q.function = "hot";
	assert_view("/api/view/callers", callers, N(callers), &q, 0, -1);
	ms_query_init(&q, MS_VIEW_CALLEES);
	q.function = "hot";
	assert_view("/api/view/callees", callers, N(callers), &q, 0, -1);

	ms_query_init(&q, MS_VIEW_TIMELINE);
	q.buckets = 5;
	assert_int_equal(ms_query_parse_time(&q, "0..1s"), 0);
	assert_view("/api/view/timeline", timeline, N(timeline), &q, 0, -1);

	for (enum ms_view v = MS_VIEW_REPORT; v < MS_VIEW_COUNT; v++) {
		char path[64];

		if (v == MS_VIEW_SUMMARY || v == MS_VIEW_DIFF || v == MS_VIEW_CALLERS ||
		    v == MS_VIEW_CALLEES || v == MS_VIEW_OFF_CPU || v == MS_VIEW_WALL ||
		    v == MS_VIEW_TASKS)
			continue;
		ms_query_init(&q, v);
		snprintf(path, sizeof(path), "/api/view/%s", ms_view_name(v));
		assert_view(path, NULL, 0, &q, 0, -1);
	}

	ms_query_init(&q, MS_VIEW_DIFF);
	q.sort = MS_SORT_TOTAL;
	assert_view("/api/diff", diff, N(diff), &q, 0, 1);
	/* HEAD is GET without the body, which the server leaves out */
	{
		struct ms_response r = get("HEAD", "/api/view/top", NULL, 0);

		assert_int_equal(r.status, 200);
		ms_response_release(&r);
	}
}

static void test_captures(void **state)
{
	struct ms_response r = get("GET", "/api/captures", NULL, 0);
	const char *want_a = "{\"captures\":[{\"id\":0,\"name\":\"a.msc\",\"samples\":100,"
			     "\"has_off_cpu\":false,\"has_snapshots\":false,\"has_python\":false,"
			     "\"start_ns\":";
	const char *want_b = "},{\"id\":1,\"name\":\"b.msc\",\"samples\":100,";
	char *body;

	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "application/json");
	body = strndup((const char *)r.body, r.len);
	assert_non_null(body);
	assert_true(!strncmp(body, want_a, strlen(want_a)));
	assert_non_null(strstr(body, want_b));
	assert_non_null(strstr(body, "\"end_ns\":"));
	assert_true(r.len >= 4 && !memcmp(r.body + r.len - 4, "}]}\n", 4));
	free(body);
	ms_response_release(&r);
}

static void test_not_found(void **state)
{
	static const char *const paths[] = {
		"/etc/passwd", "/../x", "/assets/../index.html", "/%2e%2e/%2e%2e/etc/passwd",
		"/assets/%2e%2e/index.html", "/assets/", "/assets/nope.js", "/index.html",
		"/api", "/api/", "/api/nope", "/api/captures/", "/api/view", "//api/captures",
		"", "api/captures", "/assets/../../../../etc/passwd", "/API/captures",
	};
	char want[512];

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		snprintf(want, sizeof(want), "no such path: %s (the API: /api/captures, "
			 "/api/summary, /api/view/VIEW, /api/diff)", paths[i]);
		assert_refused("GET", paths[i], NULL, 0, 404, want);
	}
	assert_refused("GET", "/api/view/nope", NULL, 0, 404,
		       "no such view: nope (the views: report, top, tree, callers, callees, "
		       "threads, timeline, problems, off-cpu, wall, tasks)");
	/* summary and diff have their own paths */
	assert_refused("GET", "/api/view/diff", NULL, 0, 404, NULL);
	assert_refused("GET", "/api/view/summary", NULL, 0, 404, NULL);
	/* a path's bytes are quoted in JSON, whatever they are */
	assert_refused("GET", "/\"x\\\n", NULL, 0, 404,
		       "no such path: /\\\"x\\\\\\n (the API: /api/captures, /api/summary, "
		       "/api/view/VIEW, /api/diff)");
}

static void test_methods(void **state)
{
	assert_refused("POST", "/api/captures", NULL, 0, 405,
		       "POST is not allowed: the API is read-only (GET and HEAD)");
	assert_refused("DELETE", "/", NULL, 0, 405,
		       "DELETE is not allowed: the API is read-only (GET and HEAD)");
	assert_refused("get", "/", NULL, 0, 405, NULL);
}

static void test_bad_requests(void **state)
{
	const struct ms_param limit[] = { P("limit", "x") };
	const struct ms_param out_of_range[] = { P("capture", "2") };
	const struct ms_param not_number[] = { P("capture", "-1") };
	const struct ms_param twice[] = { P("capture", "0"), P("capture", "1") };
	const struct ms_param unknown[] = { P("json", "") };
	const struct ms_param buckets[] = { P("buckets", "3") };
	const struct ms_param only_a[] = { P("a", "0") };
	const struct ms_param diff_bad[] = { P("a", "0"), P("b", "9") };
	const struct ms_param look[] = { P("look", "x") };
	const struct ms_param nofunc[] = { P("function", "nowhere") };
	const struct ms_param offcpu[] = { P("unit", "off-cpu") };

	assert_refused("GET", "/api/view/top", limit, 1, 400,
		       "--limit wants a count of rows (0 to 4294967295), not 'x'");
	assert_refused("GET", "/api/view/top", out_of_range, 1, 400,
		       "capture wants a capture number from 0 to 1 (/api/captures lists them), not '2'");
	assert_refused("GET", "/api/summary", not_number, 1, 400,
		       "capture wants a capture number from 0 to 1 (/api/captures lists them), not '-1'");
	assert_refused("GET", "/api/view/tree", twice, 2, 400,
		       "parameter 'capture' given twice: give it once");
	assert_refused("GET", "/api/view/top", unknown, 1, 400, NULL);
	assert_refused("GET", "/api/view/top", buckets, 1, 400, "--buckets applies to timeline, not top");
	assert_refused("GET", "/api/summary", look, 1, 400, "unknown look 'x': use mixed, native, python");
	assert_refused("GET", "/api/diff", only_a, 1, 400,
		       "diff compares two captures: give a=N&b=M, each a capture number from 0 to 1 "
		       "(/api/captures lists them)");
	assert_refused("GET", "/api/diff", diff_bad, 2, 400,
		       "b wants a capture number from 0 to 1 (/api/captures lists them), not '9'");
	assert_refused("GET", "/api/captures", limit, 1, 400,
		       "/api/captures takes no parameters, not 'limit'");
	/* what the capture cannot answer, and what the view cannot find, with their reasons */
	assert_refused("GET", "/api/view/top", offcpu, 1, 400, NULL);
	assert_refused("GET", "/api/view/callers", nofunc, 1, 400, NULL);
	assert_refused("GET", "/api/view/callers", NULL, 0, 400, "callers needs the function to start from");
}

static const char *type_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!strcmp(path, "/"))
		return "text/html; charset=utf-8";
	if (dot && !strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (dot && !strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (dot && !strcmp(dot, ".svg"))
		return "image/svg+xml";
	return NULL;
}

static void test_assets(void **state)
{
	const struct ms_param deep_link[] = { P("view", "top"), P("capture", "7") };
	bool saw_root = false;

	assert_true(ms_web_n_assets >= 1);
	for (size_t i = 0; i < ms_web_n_assets; i++) {
		const struct ms_web_asset *a = &ms_web_assets[i];
		struct ms_response r = get("GET", a->path, NULL, 0);

		assert_true(!strcmp(a->path, "/") || !strncmp(a->path, "/assets/", 8));
		assert_null(strstr(a->path, ".."));
		saw_root |= !strcmp(a->path, "/");
		assert_int_equal(r.status, 200);
		assert_string_equal(r.content_type, a->content_type);
		if (type_of(a->path))
			assert_string_equal(r.content_type, type_of(a->path));
		assert_true(r.body_static);
		assert_true(r.immutable);
		assert_ptr_equal(r.body, a->data);
		assert_int_equal(r.len, a->len);
		ms_response_release(&r);
	}
	assert_true(saw_root);
	/* the page's own parameters (a deep link) are the page's: it is served */
	{
		struct ms_response r = get("GET", "/", deep_link, N(deep_link));

		assert_int_equal(r.status, 200);
		assert_string_equal(r.content_type, "text/html; charset=utf-8");
		assert_non_null(memmem(r.body, r.len, "<", 1));
		ms_response_release(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_captures),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_assets),
	};

	ms_set_progname("serve-route-test");
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * The route of microscope serve (web/API.md): a request and the loaded
 * captures give an answer, with no socket and no file. Views answer with
 * the bytes ms-analyze VIEW --json prints, from the same ms_view_write()
 * and ms_diff_write(); a refused request answers {"error": MESSAGE} with
 * the message the analysis gave (caught with ms_error_catch()).
 */
#include "serve/serve.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/params.h"
#include "util/error.h"
#include "util/json.h"

static const char json_type[] = "application/json";

/* Messages are cut here: a reason, not a transcript. */
#define MESSAGE_MAX 1024

/* An answer's bytes, written through a FILE. */
struct body {
	FILE *f;
	char *buf;
	size_t len;
};

static int body_open(struct body *b)
{
	b->buf = NULL;
	b->len = 0;
	if (!(b->f = open_memstream(&b->buf, &b->len)))
		return ms_error_errno("a buffer for an answer");
	return 0;
}

static void body_drop(struct body *b)
{
	fclose(b->f);
	free(b->buf);
}

/* Close b into out as a 200 JSON answer that never changes while served. */
static int body_answer(struct body *b, struct ms_response *out)
{
	bool bad = ferror(b->f);

	if (fclose(b->f) || bad) {
		free(b->buf);
		return ms_error("writing an answer of %zu bytes: out of memory", b->len);
	}
	out->status = 200;
	out->content_type = json_type;
	out->body = (unsigned char *)b->buf;
	out->len = b->len;
	out->immutable = true;
	return 0;
}

/*
 * A refusal: why (the caught message) as {"error": ...}. -1 only when
 * even that could not be written.
 */
static int answer_error(struct ms_response *out, int status, const char *message)
{
	struct body b;
	struct ms_json j;

	if (body_open(&b))
		return -1;
	ms_json_init(&j, b.f);
	ms_json_object_begin(&j);
	ms_json_key(&j, "error");
	ms_json_string(&j, message);
	ms_json_object_end(&j);
	fputc('\n', b.f);
	if (body_answer(&b, out))
		return -1;
	out->status = status;
	out->immutable = false;
	return 0;
}

/*
 * What the inner functions return: 0 answered; REFUSED after one
 * message that says why (*status set: 400, 404, 405); FAILED after one
 * message when the server itself failed (out of memory).
 */
enum { REFUSED = -1, FAILED = -2 };

static int refuse(int *status, int code)
{
	*status = code;
	return REFUSED;
}

static int no_such_path(int *status, const char *path)
{
	ms_error("no such path: %s (the API: /api/captures, /api/summary, /api/view/VIEW, /api/diff)",
		 path);
	return refuse(status, 404);
}

/* The page's files: only what the table holds, so no name reaches a file system. */
static int answer_asset(const char *path, struct ms_response *out, int *status)
{
	for (size_t i = 0; i < ms_web_n_assets; i++) {
		const struct ms_web_asset *a = &ms_web_assets[i];

		if (strcmp(path, a->path))
			continue;
		out->status = 200;
		out->content_type = a->content_type;
		/* never written through: body_static says it is the table's */
		out->body = (unsigned char *)(uintptr_t)a->data;
		out->len = a->len;
		out->body_static = true;
		out->immutable = true;
		return 0;
	}
	return no_such_path(status, path);
}

static int answer_captures(const struct ms_serve_capture *caps, uint32_t n_caps,
			   struct ms_response *out)
{
	struct body b;
	struct ms_json j;

	if (body_open(&b))
		return FAILED;
	ms_json_init(&j, b.f);
	ms_json_object_begin(&j);
	ms_json_key(&j, "captures");
	ms_json_array_begin(&j);
	for (uint32_t i = 0; i < n_caps; i++) {
		const struct ms_capture *cap = caps[i].cap;
		uint64_t start, end, origin = ms_query_origin(cap);

		ms_capture_span(cap, &start, &end);
		ms_json_object_begin(&j);
		ms_json_key(&j, "id");
		ms_json_uint(&j, i);
		ms_json_key(&j, "name");
		ms_json_string(&j, caps[i].name);
		ms_json_key(&j, "samples");
		ms_json_uint(&j, ms_capture_sample_count(cap));
		ms_json_key(&j, "has_off_cpu");
		ms_json_bool(&j, cap->flags & MS_CAPTURE_OFF_CPU);
		ms_json_key(&j, "has_snapshots");
		ms_json_bool(&j, ms_capture_has_tasks(cap));
		ms_json_key(&j, "has_python");
		ms_json_bool(&j, ms_capture_has_python(cap));
		/* start_ns is time 0 of the time parameter (ms_query_origin()) */
		ms_json_key(&j, "start_ns");
		ms_json_uint(&j, origin);
		ms_json_key(&j, "end_ns");
		ms_json_uint(&j, end > origin ? end : origin);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);
	ms_json_object_end(&j);
	fputc('\n', b.f);
	return body_answer(&b, out) ? FAILED : 0;
}

/* The capture number key names: absent is 0 when optional. */
static int capture_param(const struct ms_param *params, uint32_t n, const char *key,
			 uint32_t n_caps, bool optional, uint32_t *out, int *status)
{
	const char *value = NULL;
	unsigned long v;
	char *end;

	for (uint32_t i = 0; i < n; i++) {
		if (!params[i].key || strcmp(params[i].key, key))
			continue;
		if (value) {
			ms_error("parameter '%s' given twice: give it once", key);
			return refuse(status, 400);
		}
		value = params[i].value ? params[i].value : "";
	}
	if (!value && optional) {
		*out = 0;
		return 0;
	}
	if (!value) {
		ms_error("diff compares two captures: give a=N&b=M, each a capture number from 0 "
			 "to %u (/api/captures lists them)", n_caps - 1);
		return refuse(status, 400);
	}
	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || end == value || *end || !isdigit((unsigned char)*value) || v >= n_caps) {
		ms_error("%s wants a capture number from 0 to %u (/api/captures lists them), not '%s'",
			 key, n_caps - 1, value);
		return refuse(status, 400);
	}
	*out = (uint32_t)v;
	return 0;
}

/* Check the query against each capture, then write the view or the diff. */
static int answer_view(const struct ms_serve_capture *a, const struct ms_serve_capture *b,
		       const struct ms_query *q, struct ms_response *out, int *status)
{
	struct ms_view_out o = { .json = true };
	struct body body;
	int rc;

	if (ms_query_check_capture(q, a->cap, a->name) ||
	    (b && ms_query_check_capture(q, b->cap, b->name)))
		return refuse(status, 400);
	if (body_open(&body))
		return FAILED;
	o.f = body.f;
	rc = b ? ms_diff_write(&o, a->cap, a->name, b->cap, b->name, q) : ms_view_write(&o, a->cap, q);
	if (rc) {
		/* a pure view refuses what the query asks (a function it cannot find) */
		body_drop(&body);
		return refuse(status, 400);
	}
	return body_answer(&body, out) ? FAILED : 0;
}

static int route(const struct ms_serve_capture *caps, uint32_t n_caps, const char *path,
		 const struct ms_param *params, uint32_t n_params, struct ms_response *out,
		 int *status)
{
	static const char *const skip_capture[] = { "capture", NULL };
	static const char *const skip_diff[] = { "a", "b", NULL };
	const char *view_name;
	struct ms_query q;
	enum ms_view view;
	uint32_t ia, ib;

	/* the page's own URL carries the page's state: its parameters are the page's */
	if (!strcmp(path, "/") || !strncmp(path, "/assets/", 8))
		return answer_asset(path, out, status);
	if (!strcmp(path, "/api/captures")) {
		if (n_params) {
			ms_error("/api/captures takes no parameters, not '%s'",
				 params[0].key ? params[0].key : "");
			return refuse(status, 400);
		}
		return answer_captures(caps, n_caps, out);
	}
	if (!strcmp(path, "/api/diff")) {
		ms_query_init(&q, MS_VIEW_DIFF);
		if (capture_param(params, n_params, "a", n_caps, false, &ia, status) ||
		    capture_param(params, n_params, "b", n_caps, false, &ib, status))
			return REFUSED;
		if (ms_query_from_params(&q, params, n_params, skip_diff))
			return refuse(status, 400);
		return answer_view(&caps[ia], &caps[ib], &q, out, status);
	}
	if (!strcmp(path, "/api/summary"))
		view = MS_VIEW_SUMMARY;
	else if (!strncmp(path, "/api/view/", 10)) {
		view_name = path + 10;
		/* summary and diff have paths of their own */
		if (ms_view_parse_quiet(view_name, &view) || view == MS_VIEW_SUMMARY ||
		    view == MS_VIEW_DIFF) {
			ms_error("no such view: %s (the views: report, top, tree, callers, callees, "
				 "threads, timeline, problems, off-cpu, wall, tasks)", view_name);
			return refuse(status, 404);
		}
	} else {
		return no_such_path(status, path);
	}
	ms_query_init(&q, view);
	if (capture_param(params, n_params, "capture", n_caps, true, &ia, status))
		return REFUSED;
	if (ms_query_from_params(&q, params, n_params, skip_capture))
		return refuse(status, 400);
	return answer_view(&caps[ia], NULL, &q, out, status);
}

int ms_serve_route(const struct ms_serve_capture *caps, uint32_t n_caps, const char *method,
		   const char *path, const struct ms_param *params, uint32_t n_params,
		   struct ms_response *out)
{
	char message[MESSAGE_MAX];
	struct ms_error_catcher catcher = { .buf = message, .len = sizeof(message) };
	struct ms_error_catcher *old;
	int status = 500, rc;

	memset(out, 0, sizeof(*out));
	old = ms_error_catch(&catcher);
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		ms_error("%s is not allowed: the API is read-only (GET and HEAD)", method);
		rc = refuse(&status, 405);
	} else if (!n_caps) {
		ms_error("no captures are loaded");
		rc = FAILED;
	} else {
		rc = route(caps, n_caps, path, params, n_params, out, &status);
	}
	if (rc == REFUSED && !catcher.caught)
		snprintf(message, sizeof(message), "refused, for a reason not said (a defect)");
	if (rc == REFUSED && answer_error(out, status, message))
		rc = FAILED;
	ms_error_catch(old);
	if (rc == FAILED) {
		memset(out, 0, sizeof(*out));
		return ms_error("answering %s %s: %s", method, path,
				catcher.caught ? message : "a defect: no reason given");
	}
	return 0;
}

void ms_response_release(struct ms_response *r)
{
	if (r && !r->body_static)
		free(r->body);
	if (r)
		r->body = NULL;
}

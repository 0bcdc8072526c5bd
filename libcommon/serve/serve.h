/*
 * microscope serve (web/API.md): the captures, read-only, over HTTP.
 *
 * The route is pure and has no sockets: a request (method, path and its
 * decoded parameters) and the loaded captures give a status, a content
 * type and a body, which unit tests check without a server. server.c
 * puts it behind libmicrohttpd with the bounds of web/API.md.
 */
#ifndef MS_SERVE_SERVE_H
#define MS_SERVE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/params.h"
#include "capture/capture.h"

#define MS_SERVE_URL_MAX 8192
#define MS_SERVE_PARAMS_MAX 64
#define MS_SERVE_CONNECTIONS_MAX 32
#define MS_SERVE_IDLE_SECONDS 10

struct ms_serve_capture {
	const struct ms_capture *cap;
	const char *name;	/* the file's base name: never a path */
};

struct ms_response {
	int status;			/* 200, 400, 404, 405, ... */
	const char *content_type;	/* static */
	unsigned char *body;		/* malloc'd, or static when body_static */
	size_t len;
	bool body_static;
	bool immutable;			/* may be cached for ever */
};

/*
 * Answer one request: 0 with *out filled (an error answer too: 4xx with
 * {"error": ...}), or -1 after a message when the server itself failed
 * (out of memory): then 500.
 */
int ms_serve_route(const struct ms_serve_capture *caps, uint32_t n_caps, const char *method,
		   const char *path, const struct ms_param *params, uint32_t n_params,
		   struct ms_response *out);
void ms_response_release(struct ms_response *r);

/* The page's files, embedded at build time from web/dist (assets.c, generated). */
struct ms_web_asset {
	const char *path;		/* "/", "/assets/app.js" */
	const char *content_type;
	const unsigned char *data;
	size_t len;
};
extern const struct ms_web_asset ms_web_assets[];
extern const size_t ms_web_n_assets;

struct ms_serve_options {
	const char *listen;		/* NULL: loopback */
	uint16_t port;			/* 0: any free port */
};

/*
 * Serve until SIGINT or SIGTERM; the URL goes to url_out as soon as it
 * listens. 0 on a clean end; -1 after a message (MS_EXIT_SYSTEM when the
 * address or port could not be had: *system set).
 */
int ms_serve_run(const struct ms_serve_capture *caps, uint32_t n_caps,
		 const struct ms_serve_options *o, void (*url_out)(const char *url, void *arg),
		 void *arg, bool *system);

#endif

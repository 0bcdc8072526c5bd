/*
 * microscope serve's HTTP server: the pure route (route.c) behind
 * libmicrohttpd, with the bounds of web/API.md. A thread per connection,
 * at most MS_SERVE_CONNECTIONS_MAX of them, each closed after
 * MS_SERVE_IDLE_SECONDS idle; the listening sockets are bound here (so a
 * port in use is told as such), loopback unless --listen says otherwise.
 */
#include "serve/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "util/error.h"

/* 127.0.0.1 and ::1, or the one --listen address */
#define LISTENERS_MAX 2

struct server {
	const struct ms_serve_capture *caps;
	uint32_t n_caps;
	/* loopback: only a Host naming this machine (no page of another site may read it) */
	bool loopback;
	uint16_t port;
	atomic_uint connections;	/* open, over every listener */
};

/* One request: the length of its request target, known before it is parsed. */
struct request {
	size_t target_len;
};

static void *request_start(void *cls, const char *uri, struct MHD_Connection *con)
{
	struct request *r = calloc(1, sizeof(*r));

	if (r)
		r->target_len = strlen(uri);
	return r;
}

static void request_done(void *cls, struct MHD_Connection *con, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	free(*con_cls);
	*con_cls = NULL;
}

static void connection_notify(void *cls, struct MHD_Connection *con, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	struct server *s = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		atomic_fetch_add(&s->connections, 1);
	else
		atomic_fetch_sub(&s->connections, 1);
}

/* One count over both listeners: a connection past it is closed at once. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct server *s = cls;

	return atomic_load(&s->connections) < MS_SERVE_CONNECTIONS_MAX ? MHD_YES : MHD_NO;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * %HH decoded in place, but %00 kept as it is: a NUL would cut the path
 * or a value short where the route sees it, and "/x%00y" is not "/x".
 */
static size_t unescape(void *cls, struct MHD_Connection *con, char *s)
{
	char *w = s;

	for (const char *r = s; *r; ) {
		int hi, lo;

		if (r[0] == '%' && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0 &&
		    (hi || lo)) {
			*w++ = (char)(hi << 4 | lo);
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

struct params {
	struct ms_param p[MS_SERVE_PARAMS_MAX];
	uint32_t n;
	bool over;
};

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	struct params *ps = cls;

	if (ps->n == MS_SERVE_PARAMS_MAX) {
		ps->over = true;
		return MHD_NO;
	}
	ps->p[ps->n].key = key;
	ps->p[ps->n].value = value;
	ps->n++;
	return MHD_YES;
}

/* The 64-bit FNV-1a of the bytes: an ETag names them. */
static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static enum MHD_Result send_response(struct MHD_Connection *con, struct ms_response *r,
				     const char *method)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char etag[24];
	const char *match;
	int status = r->status;
	bool not_modified = false;

	if (r->immutable) {
		snprintf(etag, sizeof(etag), "\"%016" PRIx64 "\"", fnv1a(r->body, r->len));
		match = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
		not_modified = match && !strcmp(match, etag);
	}
	if (not_modified) {
		ms_response_release(r);
		resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_NOT_MODIFIED;
	} else if (r->body_static) {
		resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_PERSISTENT);
	} else {
		/* MHD frees the body with free() once sent */
		resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
		if (!resp)
			ms_response_release(r);
	}
	if (!resp)
		return MHD_NO;
	if (status != MHD_HTTP_NOT_MODIFIED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
	if (r->immutable) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
		/*
		 * web/API.md says "max-age=31536000, immutable", but a browser would
		 * then keep the answers of this server's captures for a year and show
		 * them when another run serves other captures on the same port: they
		 * are revalidated by their ETag instead (304: no bytes sent again).
		 */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	} else {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	}
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	(void)method;
	ret = MHD_queue_response(con, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* An answer the server gives itself, before the route: {"error": ...}. */
static enum MHD_Result send_error(struct MHD_Connection *con, int status, const char *message)
{
	struct ms_response r = { .status = status, .content_type = "application/json" };
	size_t cap = strlen(message) + 16;
	char *body = malloc(cap);

	if (!body)
		return MHD_NO;
	/* the messages here are this file's own: no character to escape */
	r.len = (size_t)snprintf(body, cap, "{\"error\":\"%s\"}\n", message);
	r.body = (unsigned char *)body;
	return send_response(con, &r, "");
}

/* Whether host (the Host header) names this machine's loopback at our port. */
static bool host_ok(const struct server *s, const char *host)
{
	static const char *const names[] = { "127.0.0.1", "localhost", "[::1]" };
	char port[8];

	snprintf(port, sizeof(port), ":%u", (unsigned)s->port);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		if (!strncmp(host, names[i], n) && (!host[n] || !strcmp(host + n, port)))
			return true;
	}
	return false;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *con, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;
	struct request *req = *con_cls;
	struct params ps = { .n = 0 };
	struct ms_response r;
	const char *host, *length;

	if (!req)
		return send_error(con, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory: try again");
	if (req->target_len > MS_SERVE_URL_MAX)
		return send_error(con, MHD_HTTP_URI_TOO_LONG,
				  "the path and query are over 8192 bytes");
	length = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (*upload_data_size ||
	    MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
	    (length && strcmp(length, "0"))) {
		*upload_data_size = 0;
		return send_error(con, MHD_HTTP_CONTENT_TOO_LARGE,
				  "a request may have no body: the API is read-only");
	}
	host = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (s->loopback && host && !host_ok(s, host))
		return send_error(con, MHD_HTTP_MISDIRECTED_REQUEST,
				  "this server answers requests for 127.0.0.1, localhost and [::1] only");
	MHD_get_connection_values(con, MHD_GET_ARGUMENT_KIND, collect_param, &ps);
	if (ps.over)
		return send_error(con, MHD_HTTP_BAD_REQUEST, "more than 64 parameters");
	if (ms_serve_route(s->caps, s->n_caps, method, url, ps.p, ps.n, &r))
		return send_error(con, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "the server failed to answer: see its messages");
	return send_response(con, &r, method);
}

/* Bind and listen on addr: the socket, or -1 after a message (*in_use when the port is taken). */
static int listen_on(const struct sockaddr *addr, socklen_t len, const char *shown,
		     uint16_t port, bool *in_use)
{
	int fd, one = 1;

	*in_use = false;
	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ms_error_errno("a socket for %s", shown);
	/* a port of a server that just ended (TIME_WAIT) is free; one that listens is not */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, addr, len)) {
		int e = errno;

		close(fd);
		errno = e;
		if (e == EADDRINUSE) {
			*in_use = true;
			return ms_error("port %u on %s is in use: stop what holds it, or serve on "
					"another with --port N (0: any free port)", (unsigned)port, shown);
		}
		return ms_error_errno("binding %s port %u", shown, (unsigned)port);
	}
	if (listen(fd, MS_SERVE_CONNECTIONS_MAX)) {
		int e = errno;

		close(fd);
		errno = e;
		return ms_error_errno("listening on %s port %u", shown, (unsigned)port);
	}
	return fd;
}

static uint16_t bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
}

static struct MHD_Daemon *start(struct server *s, int fd)
{
	return MHD_start_daemon(MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD |
				MHD_USE_THREAD_PER_CONNECTION,
				0, accept_policy, s, handle, s,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)MS_SERVE_CONNECTIONS_MAX,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)MS_SERVE_IDLE_SECONDS,
				MHD_OPTION_URI_LOG_CALLBACK, request_start, s,
				MHD_OPTION_NOTIFY_COMPLETED, request_done, s,
				MHD_OPTION_NOTIFY_CONNECTION, connection_notify, s,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape, s,
				MHD_OPTION_END);
}

/*
 * The addresses to listen on: o->listen, or 127.0.0.1 and then ::1 (the
 * second only when it binds: a machine without IPv6 serves on the first).
 * The URL names the first, a wildcard as the loopback one reaches it.
 */
static int open_listeners(const struct ms_serve_options *o, int *fds, int *n, char *url,
			  size_t url_len, bool *loopback, bool *system)
{
	struct sockaddr_in v4 = { .sin_family = AF_INET, .sin_port = htons(o->port) };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6, .sin6_port = htons(o->port) };
	bool in_use;
	uint16_t port;
	int fd;

	*n = 0;
	*loopback = !o->listen;
	if (o->listen) {
		bool is6 = strchr(o->listen, ':') != NULL;
		char shown[INET6_ADDRSTRLEN + 2];

		if (is6 ? inet_pton(AF_INET6, o->listen, &v6.sin6_addr) != 1
			: inet_pton(AF_INET, o->listen, &v4.sin_addr) != 1)
			return ms_error("--listen wants a numeric IPv4 or IPv6 address (127.0.0.1, "
					"0.0.0.0, ::1, ::), not '%s'", o->listen);
		snprintf(shown, sizeof(shown), is6 ? "[%s]" : "%s", o->listen);
		fd = is6 ? listen_on((struct sockaddr *)&v6, sizeof(v6), shown, o->port, &in_use)
			 : listen_on((struct sockaddr *)&v4, sizeof(v4), shown, o->port, &in_use);
		if (fd < 0) {
			*system = true;
			return -1;
		}
		fds[(*n)++] = fd;
		port = bound_port(fd);
		if (is6 && IN6_IS_ADDR_UNSPECIFIED(&v6.sin6_addr))
			snprintf(url, url_len, "http://[::1]:%u/", (unsigned)port);
		else if (!is6 && v4.sin_addr.s_addr == htonl(INADDR_ANY))
			snprintf(url, url_len, "http://127.0.0.1:%u/", (unsigned)port);
		else
			snprintf(url, url_len, "http://%s:%u/", shown, (unsigned)port);
		return 0;
	}
	v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = listen_on((struct sockaddr *)&v4, sizeof(v4), "127.0.0.1", o->port, &in_use);
	if (fd < 0) {
		*system = true;
		return -1;
	}
	fds[(*n)++] = fd;
	port = bound_port(fd);
	snprintf(url, url_len, "http://127.0.0.1:%u/", (unsigned)port);
	/* ::1 on the same port, when this machine has it and the port is free there */
	v6.sin6_addr = in6addr_loopback;
	v6.sin6_port = htons(port);
	{
		struct ms_error_catcher quiet = { 0 }, *old = ms_error_catch(&quiet);

		fd = listen_on((struct sockaddr *)&v6, sizeof(v6), "[::1]", port, &in_use);
		ms_error_catch(old);
	}
	if (fd >= 0)
		fds[(*n)++] = fd;
	return 0;
}

int ms_serve_run(const struct ms_serve_capture *caps, uint32_t n_caps,
		 const struct ms_serve_options *o, void (*url_out)(const char *url, void *arg),
		 void *arg, bool *system)
{
	struct server s = { .caps = caps, .n_caps = n_caps };
	struct MHD_Daemon *daemons[LISTENERS_MAX] = { NULL };
	int fds[LISTENERS_MAX] = { -1, -1 }, n_fds = 0, rc = -1, sig;
	sigset_t stop, old;
	char url[96];

	*system = false;
	atomic_init(&s.connections, 0);
	if (open_listeners(o, fds, &n_fds, url, sizeof(url), &s.loopback, system))
		return -1;
	s.port = bound_port(fds[0]);
	/*
	 * SIGINT and SIGTERM are waited for here: blocked before MHD's threads
	 * start, so they inherit the mask and never take them.
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < n_fds; i++) {
		if (!(daemons[i] = start(&s, fds[i]))) {
			ms_error("starting the HTTP server on %s failed", url);
			for (int k = i; k < n_fds; k++)
				close(fds[k]);
			goto out;
		}
	}
	url_out(url, arg);
	do {
		if (sigwait(&stop, &sig)) {
			ms_error("waiting for SIGINT or SIGTERM failed");
			goto out;
		}
	} while (sig != SIGINT && sig != SIGTERM);
	rc = 0;
out:
	/* MHD closes the listening sockets it was given */
	for (int i = 0; i < n_fds; i++)
		if (daemons[i])
			MHD_stop_daemon(daemons[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

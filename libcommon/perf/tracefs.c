/* tracefs and tracepoint format files: see tracefs.h. */
#include "perf/tracefs.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the format file's text ---- */

struct parse {
	struct ms_tracepoint *tp;
	char *why;
	size_t why_len;
	unsigned line;
};

static int bad(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct parse *p, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->why, p->why_len, "line %u: ", p->line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->why_len)
		vsnprintf(p->why + n, p->why_len - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static bool starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* A decimal at *s (of n bytes left), at most max: advances *s and *n. 0 or -1. */
static int take_number(const char **s, size_t *n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < *n && (*s)[i] >= '0' && (*s)[i] <= '9') {
		v = v * 10 + (uint64_t)((*s)[i] - '0');
		if (v > max)
			return -1;
		i++;
	}
	if (!i)
		return -1;
	*out = v;
	*s += i;
	*n -= i;
	return 0;
}

/* "KEY:N;" after optional blanks, N at most max. 0 or -1 after a message. */
static int take_item(struct parse *p, const char **s, size_t *n, const char *key, uint64_t max,
		     uint64_t *out)
{
	while (*n && is_space(**s)) {
		(*s)++;
		(*n)--;
	}
	if (!starts(*s, *n, key))
		return bad(p, "expected '%s' in a field line", key);
	*s += strlen(key);
	*n -= strlen(key);
	if (take_number(s, n, max, out) < 0)
		return bad(p, "'%s' is not a decimal number of at most %llu", key,
			   (unsigned long long)max);
	if (!*n || **s != ';')
		return bad(p, "'%s' is not followed by ';'", key);
	(*s)++;
	(*n)--;
	return 0;
}

/* One "field:TYPE NAME;<TAB>offset:N;<TAB>size:N;<TAB>signed:N;" line, "field:" gone. */
static int parse_field(struct parse *p, const char *s, size_t n)
{
	struct ms_tracepoint *tp = p->tp;
	const char *semi = memchr(s, ';', n), *end, *name;
	uint64_t offset, size, is_signed;
	size_t name_len;

	if (!semi)
		return bad(p, "a field's declaration does not end with ';'");
	end = semi;
	while (end > s && is_space(end[-1]))
		end--;
	/* An array: "char prev_comm[16]" names prev_comm. */
	if (end > s && end[-1] == ']') {
		while (end > s && end[-1] != '[')
			end--;
		if (end == s)
			return bad(p, "a field's declaration has ']' without '['");
		end--;
		while (end > s && is_space(end[-1]))
			end--;
	}
	name = end;
	while (name > s && is_ident(name[-1]))
		name--;
	name_len = (size_t)(end - name);
	if (!name_len || (name[0] >= '0' && name[0] <= '9'))
		return bad(p, "a field's declaration does not end with a name");
	if (name_len >= MS_TRACEFS_NAME_MAX)
		return bad(p, "a field name of %zu bytes (at most %d)", name_len,
			   MS_TRACEFS_NAME_MAX - 1);
	{
		const char *t = s;

		while (t < name && is_space(*t))
			t++;
		if (t == name)
			return bad(p, "the field '%.*s' has no type", (int)name_len, name);
	}
	for (uint32_t i = 0; i < tp->n_fields; i++)
		if (tp->fields[i].len == name_len && !memcmp(tp->fields[i].ptr, name, name_len))
			return bad(p, "the field '%.*s' is listed twice", (int)name_len, name);
	if (tp->n_fields == MS_TRACEPOINT_FIELDS_MAX)
		return bad(p, "more than %d fields", MS_TRACEPOINT_FIELDS_MAX);

	n -= (size_t)(semi + 1 - s);
	s = semi + 1;
	if (take_item(p, &s, &n, "offset:", MS_TRACEFS_OFFSET_MAX, &offset) < 0 ||
	    take_item(p, &s, &n, "size:", MS_TRACEFS_OFFSET_MAX, &size) < 0 ||
	    take_item(p, &s, &n, "signed:", 1, &is_signed) < 0)
		return -1;
	while (n && is_space(*s)) {
		s++;
		n--;
	}
	if (n)
		return bad(p, "unexpected text after a field's 'signed:'");
	if (offset + size > MS_TRACEFS_OFFSET_MAX)
		return bad(p, "the field '%.*s' ends at byte %llu, past %u", (int)name_len, name,
			   (unsigned long long)(offset + size), MS_TRACEFS_OFFSET_MAX);

	tp->fields[tp->n_fields] = (struct ms_str){ name, (uint32_t)name_len };
	tp->offsets[tp->n_fields] = offset;
	tp->sizes[tp->n_fields] = size;
	tp->is_signed[tp->n_fields] = is_signed;
	tp->n_fields++;
	tp->n_offsets = tp->n_sizes = tp->n_signed = tp->n_fields;
	return 0;
}

int ms_tracepoint_parse(const char *text, size_t len, const char *name,
			struct ms_tracepoint *tp, char *why, size_t why_len)
{
	struct parse p = { tp, why, why_len, 0 };
	const char *event = strchr(name, ':');
	enum { HEADER, FORMAT, DONE } at = HEADER;
	bool have_name = false, have_id = false;
	size_t pos = 0;

	event = event ? event + 1 : name;
	memset(tp, 0, sizeof(*tp));
	tp->name = (struct ms_str){ name, (uint32_t)strlen(name) };
	if (why_len)
		why[0] = '\0';
	if (len > MS_TRACEFS_FORMAT_MAX)
		return bad(&p, "the text is %zu bytes, more than %d", len, MS_TRACEFS_FORMAT_MAX);
	if (memchr(text, '\0', len))
		return bad(&p, "the text holds a NUL byte");
	while (pos < len && at != DONE) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;

		p.line++;
		pos += n + (nl ? 1 : 0);
		if (n > MS_TRACEFS_LINE_MAX)
			return bad(&p, "longer than %d bytes", MS_TRACEFS_LINE_MAX);
		if (at == HEADER) {
			if (starts(s, n, "name: ")) {
				if (n - 6 != strlen(event) || memcmp(s + 6, event, n - 6))
					return bad(&p, "the format is of '%.*s', not of '%s'",
						   (int)(n - 6), s + 6, event);
				have_name = true;
			} else if (starts(s, n, "ID: ")) {
				const char *v = s + 4;
				size_t k = n - 4;
				uint64_t id;

				if (take_number(&v, &k, UINT32_MAX, &id) < 0 || k)
					return bad(&p, "the ID is not a decimal number of at most %u",
						   UINT32_MAX);
				tp->config = id;
				have_id = true;
			} else if (n == 7 && starts(s, n, "format:")) {
				at = FORMAT;
			}
			/* Other lines of the header are not ours to judge. */
			continue;
		}
		while (n && is_space(*s)) {
			s++;
			n--;
		}
		if (!n)
			continue;
		if (starts(s, n, "field:")) {
			if (parse_field(&p, s + 6, n - 6) < 0)
				return -1;
		} else if (starts(s, n, "print fmt:")) {
			at = DONE;
		} else {
			return bad(&p, "expected a 'field:' line or 'print fmt:'");
		}
	}
	p.line = 0;
	if (!have_name)
		return snprintf(why, why_len, "no 'name:' line"), -1;
	if (!have_id)
		return snprintf(why, why_len, "no 'ID:' line"), -1;
	if (at == HEADER)
		return snprintf(why, why_len, "no 'format:' line"), -1;
	if (!tp->n_fields)
		return snprintf(why, why_len, "no fields"), -1;
	return 0;
}

int ms_tracepoint_field(const struct ms_tracepoint *tp, const char *field)
{
	size_t n = strlen(field);

	for (uint32_t i = 0; i < tp->n_fields; i++)
		if (tp->fields[i].len == n && !memcmp(tp->fields[i].ptr, field, n))
			return (int)i;
	return -1;
}

/* ---- tracefs on this host ---- */

#define MOUNT_HINT "mount it as root with: mount -t tracefs nodev " MS_TRACEFS_DIR

/* 0 when dir/events exists, else -1 with errno. */
static int has_events(const char *dir)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", dir);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

int ms_tracefs_find(char *dir, size_t len, bool *mounted)
{
	static const char *const dirs[] = { MS_TRACEFS_DIR, MS_TRACEFS_DEBUG_DIR };

	*mounted = false;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (has_events(dirs[i]) == 0) {
			snprintf(dir, len, "%s", dirs[i]);
			return 0;
		}
		if (errno == EACCES)
			return ms_error("cannot look into %s/events (%s): tracefs is readable by "
					"root only; run as root", dirs[i], strerror(errno));
	}
	if (geteuid() != 0)
		return ms_error("tracefs is not mounted (neither %s/events nor %s/events "
				"exists), and the tracepoints are found there; " MOUNT_HINT,
				MS_TRACEFS_DIR, MS_TRACEFS_DEBUG_DIR);
	if (mount("nodev", MS_TRACEFS_DIR, "tracefs", 0, NULL) < 0)
		return ms_error("tracefs is not mounted and cannot be mounted at %s (mount: %s); "
				"mount it by hand (mount -t tracefs nodev %s), or check that the "
				"kernel has CONFIG_TRACING", MS_TRACEFS_DIR, strerror(errno),
				MS_TRACEFS_DIR);
	if (has_events(MS_TRACEFS_DIR) < 0)
		return ms_error("tracefs, mounted at %s, has no events directory: this kernel "
				"has no tracepoints (CONFIG_EVENT_TRACING)", MS_TRACEFS_DIR);
	*mounted = true;
	snprintf(dir, len, "%s", MS_TRACEFS_DIR);
	return 0;
}

int ms_tracepoint_load(const char *dir, const char *system, const char *event,
		       struct ms_tracepoint_file *f)
{
	char why[256];
	size_t got = 0;
	ssize_t n;
	int fd;

	snprintf(f->name, sizeof(f->name), "%s:%s", system, event);
	if ((size_t)snprintf(f->path, sizeof(f->path), "%s/events/%s/%s/format", dir, system,
			     event) >= sizeof(f->path))
		return ms_error("the path of the format of tracepoint %s is too long", f->name);
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return ms_error("this kernel has no tracepoint %s (%s does not exist): it "
					"needs CONFIG_TRACEPOINTS and the scheduler's events",
					f->name, f->path);
		return ms_error_errno("cannot read the format of tracepoint %s, %s%s", f->name,
				      f->path, errno == EACCES ? " (run as root)" : "");
	}
	/* A file that fills the buffer is refused, not cut. */
	while (got < sizeof(f->text) && (n = read(fd, f->text + got, sizeof(f->text) - got))) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return ms_error_errno("cannot read %s", f->path);
		}
		got += (size_t)n;
	}
	close(fd);
	if (got >= sizeof(f->text))
		return ms_error("%s is more than %d bytes: not a tracepoint format this reader "
				"takes", f->path, MS_TRACEFS_FORMAT_MAX - 1);
	if (ms_tracepoint_parse(f->text, got, f->name, &f->tp, why, sizeof(why)) < 0)
		return ms_error("%s does not read as a tracepoint format: %s", f->path, why);
	return 0;
}

/*
 * present: colour, terminal width, short names, numbers in words and
 * recursion folding for the text reports (see present.h for the rules).
 */
#include "analysis/present.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/error.h"
#include "util/text.h"

/* Colour */

int ms_color_mode_parse(const char *value, enum ms_color_mode *mode)
{
	if (!value) {
		*mode = MS_COLOR_ALWAYS;
		return 0;
	}
	if (!strcmp(value, "auto"))
		*mode = MS_COLOR_AUTO;
	else if (!strcmp(value, "always"))
		*mode = MS_COLOR_ALWAYS;
	else if (!strcmp(value, "never"))
		*mode = MS_COLOR_NEVER;
	else
		return ms_error("--color: unknown value '%s' (choose auto, always or never)",
				value);
	return 0;
}

bool ms_color_choose(enum ms_color_mode mode, bool is_terminal, const char *term,
		     const char *no_color, const char *clicolor_force)
{
	if (mode == MS_COLOR_ALWAYS)
		return true;
	if (mode == MS_COLOR_NEVER)
		return false;
	if (no_color && *no_color)
		return false;
	if (clicolor_force && *clicolor_force && strcmp(clicolor_force, "0"))
		return true;
	return is_terminal && term && *term && strcmp(term, "dumb");
}

bool ms_color_decide(enum ms_color_mode mode, int fd)
{
	if (mode == MS_COLOR_ALWAYS || mode == MS_COLOR_NEVER)
		return mode == MS_COLOR_ALWAYS;
	return ms_color_choose(mode, isatty(fd), getenv("TERM"), getenv("NO_COLOR"),
			       getenv("CLICOLOR_FORCE"));
}

static const char *const sgr[] = {
	[MS_STYLE_PLAIN] = "",
	[MS_STYLE_HEADER] = "\033[1m",
	[MS_STYLE_DIM] = "\033[2m",
	[MS_STYLE_HOT] = "\033[31m",
	[MS_STYLE_WARM] = "\033[33m",
	[MS_STYLE_WARN] = "\033[1;33m",
	[MS_STYLE_RESET] = "\033[0m",
};

enum ms_style ms_heat_style(uint32_t ppm)
{
	if (ppm >= MS_HEAT_HOT_PPM)
		return MS_STYLE_HOT;
	if (ppm >= MS_HEAT_WARM_PPM)
		return MS_STYLE_WARM;
	return MS_STYLE_PLAIN;
}

const char *ms_style_sgr(bool color, enum ms_style style)
{
	if (!color || (unsigned)style >= sizeof(sgr) / sizeof(sgr[0]))
		return "";
	return sgr[style];
}

void ms_style_put(FILE *out, bool color, enum ms_style style)
{
	fputs(ms_style_sgr(color, style), out);
}

void ms_styled_put(FILE *out, bool color, enum ms_style style, const char *text)
{
	const char *on = ms_style_sgr(color, style);

	fputs(on, out);
	ms_text_put(out, text);
	if (*on)
		fputs(sgr[MS_STYLE_RESET], out);
}

/* Terminal width */

size_t ms_columns_parse(const char *s)
{
	size_t v = 0;

	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (size_t)(*s - '0');
		if (v > 65535)
			return 0;
	}
	return v;
}

size_t ms_term_width(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return ms_columns_parse(getenv("COLUMNS"));
}

/* Names */

#define ELLIPSIS "\xe2\x80\xa6"	/* U+2026, one column */
#define NONE SIZE_MAX

/*
 * Where a shortened name goes: the first skip columns are left out, the
 * rest fills buf as snprintf would; len and cols count the whole result.
 */
struct sink {
	char *buf;
	size_t size;
	size_t kept;		/* bytes in buf */
	size_t len;		/* bytes of the whole result */
	size_t cols;		/* its columns */
	size_t skip;		/* columns still to leave out */
	bool full;		/* a character did not fit: the rest is counted only */
};

static void sink_char(struct sink *k, const char *c, size_t n)
{
	if (k->skip) {
		k->skip--;
		return;
	}
	if (!k->full && k->kept + n < k->size) {
		memcpy(k->buf + k->kept, c, n);
		k->kept += n;
	} else {
		k->full = true;
	}
	k->len += n;
	k->cols++;
}

/* s[0, n) one character at a time, as ms_text_put() shows it. */
static void sink_text(struct sink *k, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const unsigned char *u = (const unsigned char *)s + i;
		int c = ms_utf8_len(u);

		if (c > 1 && (size_t)c <= n - i) {
			sink_char(k, s + i, (size_t)c);
			i += (size_t)c;
			continue;
		}
		sink_char(k, c == 1 && *u >= 0x20 && *u != 0x7f ? s + i : "?", 1);
		i++;
	}
}

/*
 * An elided "<…>": never cut in two. A cut that ends inside it takes it
 * whole, so a cut name can be up to two columns narrower than its width.
 */
static void sink_group(struct sink *k, const char *s, size_t n, size_t cols)
{
	if (k->skip)
		k->skip = k->skip > cols ? k->skip - cols : 0;
	else
		sink_text(k, s, n);
}

static bool ident(char c)
{
	unsigned char u = (unsigned char)c;

	return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
	       u == '_' || u == '$' || u >= 0x80;
}

/* The C++ operator tokens, longest first where one starts another. */
static const char *const op_tokens[] = {
	"<=>", "<<=", ">>=", "->*",
	"()", "[]", "<<", ">>", "<=", ">=", "->", "==", "!=", "&&", "||", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"<", ">", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", ",",
};

/*
 * Length of "operator" and its symbol when they start a word at name + i
 * ("operator<<" is 10; "operator new" is 8: the rest is words), else 0.
 */
static size_t operator_len(const char *name, size_t i)
{
	size_t t;

	if ((i > 0 && ident(name[i - 1])) || strncmp(name + i, "operator", 8) || ident(name[i + 8]))
		return 0;
	for (t = 0; t < sizeof(op_tokens) / sizeof(op_tokens[0]); t++) {
		size_t n = strlen(op_tokens[t]);

		if (!strncmp(name + i + 8, op_tokens[t], n))
			return 8 + n;
	}
	return 8;
}

/* op_end: just past the last operator symbol, NONE when there is none. */
static bool opens_template(const char *name, size_t i, size_t op_end)
{
	return (i > 0 && ident(name[i - 1])) ||
	       (i >= 2 && name[i - 1] == ':' && name[i - 2] == ':') ||
	       i == op_end || (op_end != NONE && i == op_end + 1 && name[op_end] == ' ');
}

static bool opens_params(const char *name, size_t i, size_t op_end)
{
	return i == op_end ||
	       (i > 0 && (ident(name[i - 1]) || strchr(">)]'", name[i - 1])));
}

/* The ">" that closes the "<" at i, or len when none does. */
static size_t close_angle(const char *name, size_t i, size_t len)
{
	size_t depth = 0, parens = 0, j, op;

	for (j = i; j < len; j++) {
		if (name[j] == 'o' && (op = operator_len(name, j))) {
			j += op - 1;
			continue;
		}
		if (name[j] == '(') {
			parens++;
		} else if (name[j] == ')') {
			if (!parens)
				return len;
			parens--;
		} else if (!parens && name[j] == '<') {
			depth++;
		} else if (!parens && name[j] == '>' && --depth == 0) {
			return j;
		}
	}
	return len;
}

/* The ")" that closes the "(" at i, or len when none does. */
static size_t close_paren(const char *name, size_t i, size_t len)
{
	size_t depth = 0, j;

	for (j = i; j < len; j++)
		if (name[j] == '(')
			depth++;
		else if (name[j] == ')' && --depth == 0)
			return j;
	return len;
}

/* Past the qualifiers of a member function after its parameters at i. */
static size_t skip_qualifiers(const char *name, size_t i, size_t len)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
	size_t q;

again:
	for (q = 0; q < sizeof(quals) / sizeof(quals[0]); q++) {
		size_t n = strlen(quals[q]);

		if (len - i >= n && !memcmp(name + i, quals[q], n) && !ident(name[i + n])) {
			i += n;
			goto again;
		}
	}
	return i;
}

#define ANON "(anonymous namespace)::"
#define ANON_LEN (sizeof(ANON) - 1)

/*
 * Where the name starts after a function template's return type: past
 * the last space outside brackets (and before any operator) when the
 * first parameter list follows a template argument list; else 0.
 */
static size_t name_start(const char *name, size_t len)
{
	size_t i = 0, start = 0, braces = 0, op_end = NONE, j;
	bool after_template = false;

	while (i < len) {
		char c = name[i];

		if (c == 'o' && (j = operator_len(name, i))) {
			i += j;
			op_end = i;
			after_template = false;
			continue;
		}
		if (c == '<' && opens_template(name, i, op_end)) {
			j = close_angle(name, i, len);
			if (j == len)
				return 0;
			i = j + 1;
			after_template = true;
			continue;
		}
		if (c == '(') {
			j = close_paren(name, i, len);
			if (j == len)
				return 0;
			if (!braces && opens_params(name, i, op_end))
				return after_template ? start : 0;
			i = j + 1;
			after_template = false;
			continue;
		}
		if (c == '{')
			braces++;
		else if (c == '}' && braces)
			braces--;
		else if (c == ' ' && !braces && op_end == NONE)
			start = i + 1;
		after_template = false;
		i++;
	}
	return 0;
}

/* The name with template arguments elided and parameters dropped. */
static void elide(struct sink *k, const char *name, size_t len)
{
	size_t i = name_start(name, len), run = i, op_end = NONE, j;

	while (i < len) {
		char c = name[i];

		if (c == 'o' && (j = operator_len(name, i))) {
			i += j;
			op_end = i;
			continue;
		}
		if (c == '(' && !strncmp(name + i, ANON, ANON_LEN)) {
			sink_text(k, name + run, i - run);
			i += ANON_LEN;
			run = i;
			continue;
		}
		if (c == '<' && opens_template(name, i, op_end)) {
			j = close_angle(name, i, len);
			if (j == len)
				break;	/* unmatched: the rest as it is */
			sink_text(k, name + run, i - run);
			if (j == i + 1)
				sink_text(k, "<>", 2);
			else
				sink_group(k, "<" ELLIPSIS ">", 5, 3);
			i = j + 1;
			run = i;
			continue;
		}
		if (c == '(' && opens_params(name, i, op_end)) {
			j = close_paren(name, i, len);
			if (j == len)
				break;
			sink_text(k, name + run, i - run);
			i = skip_qualifiers(name, j + 1, len);
			run = i;
			continue;
		}
		i++;
	}
	sink_text(k, name + run, len - run);
}

size_t ms_name_shorten(char *buf, size_t size, const char *name, size_t width)
{
	struct sink k = { .buf = buf, .size = size };
	size_t len;

	if (!name)
		name = "";
	len = strlen(name);
	elide(&k, name, len);
	if (width && k.cols > width) {
		size_t cols = k.cols;

		k = (struct sink){ .buf = buf, .size = size };
		sink_text(&k, ELLIPSIS, 3);
		k.skip = cols - (width - 1);
		elide(&k, name, len);
	}
	if (size)
		buf[k.kept] = '\0';
	return k.len;
}

/* Numbers */

static size_t put(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static size_t put(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0) {	/* not seen with these formats; keep the contract anyway */
		if (size)
			buf[0] = '\0';
		return 0;
	}
	return (size_t)n;
}

size_t ms_format_count(char *buf, size_t size, uint64_t n)
{
	char tmp[32];		/* 20 digits, 6 commas, NUL */
	size_t i = sizeof(tmp), digits = 0;

	tmp[--i] = '\0';
	do {
		if (digits && digits % 3 == 0)
			tmp[--i] = ',';
		tmp[--i] = (char)('0' + n % 10);
		n /= 10;
		digits++;
	} while (n);
	return put(buf, size, "%s", tmp + i);
}

/* v / unit rounded half up, in tenths and in whole units (unit <= 2^60). */
static uint64_t tenths(uint64_t v, uint64_t unit)
{
	return v / unit * 10 + (v % unit * 10 + unit / 2) / unit;
}

static uint64_t whole(uint64_t v, uint64_t unit)
{
	return v / unit + (v % unit >= unit - v % unit);
}

/*
 * v in the first of units[] (scales of one another, each scale[u] base
 * units) where it stays below limit after rounding; the last takes all.
 */
static size_t put_scaled(char *buf, size_t size, uint64_t v, const uint64_t *scale,
			 const char *const *names, size_t n_units, uint64_t limit)
{
	size_t u;

	for (u = 0; u < n_units; u++) {
		uint64_t t = tenths(v, scale[u]), w = whole(v, scale[u]);

		if (t < 1000)
			return put(buf, size, "%" PRIu64 ".%" PRIu64 " %s", t / 10, t % 10,
				   names[u]);
		if (w < limit || u + 1 == n_units)
			return put(buf, size, "%" PRIu64 " %s", w, names[u]);
	}
	return put(buf, size, "?");	/* n_units is never 0 */
}

#define NS_PER_S 1000000000ull

size_t ms_format_duration(char *buf, size_t size, uint64_t ns)
{
	static const uint64_t scale[] = { 1000ull, 1000000ull };
	static const char *const names[] = { "\xc2\xb5s", "ms" };
	uint64_t s, min;

	if (ns < 1000)
		return put(buf, size, "%" PRIu64 " ns", ns);
	if (whole(ns, 1000000ull) < 1000)	/* below a second once rounded */
		return put_scaled(buf, size, ns, scale, names, 2, 1000);
	if (tenths(ns, NS_PER_S) < 600)
		return put(buf, size, "%" PRIu64 ".%" PRIu64 " s", tenths(ns, NS_PER_S) / 10,
			   tenths(ns, NS_PER_S) % 10);
	s = whole(ns, NS_PER_S);
	if (s < 3600)
		return put(buf, size, "%" PRIu64 " min %" PRIu64 " s", s / 60, s % 60);
	min = whole(ns, 60 * NS_PER_S);
	return put(buf, size, "%" PRIu64 " h %" PRIu64 " min", min / 60, min % 60);
}

size_t ms_format_rate(char *buf, size_t size, double hz)
{
	static const char *const names[] = { "kHz", "MHz", "GHz", "THz" };
	double unit = 1000.0;
	size_t u;

	if (!(hz >= 0.0) || hz > 1e300)	/* NaN, negative, infinite */
		return put(buf, size, "? Hz");
	if (hz + 0.5 < 1000.0)
		return put(buf, size, "%" PRIu64 " Hz", (uint64_t)(hz + 0.5));
	for (u = 0; u < 4; u++, unit *= 1000.0) {
		double t = hz * 10.0 / unit + 0.5, w = hz / unit + 0.5;

		if (t < 1000.0)
			return put(buf, size, "%" PRIu64 ".%" PRIu64 " %s", (uint64_t)t / 10,
				   (uint64_t)t % 10, names[u]);
		if (w < 1000.0)
			return put(buf, size, "%" PRIu64 " %s", (uint64_t)w, names[u]);
	}
	return put(buf, size, "%.0f THz", hz / 1e12);
}

size_t ms_format_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const uint64_t scale[] = { 1ull << 10, 1ull << 20, 1ull << 30, 1ull << 40,
					  1ull << 50, 1ull << 60 };
	static const char *const names[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };

	if (bytes < 1024)
		return put(buf, size, "%" PRIu64 " B", bytes);
	return put_scaled(buf, size, bytes, scale, names, 6, 1024);
}

/* Recursion folding */

size_t ms_fold_at(const uint32_t *ids, size_t n, size_t pos, struct ms_fold *fold)
{
	struct ms_fold best = { 1, 1 };
	size_t best_frames = 1, L;

	if (!ids || pos >= n) {
		if (fold)
			*fold = (struct ms_fold){ 0, 0 };
		return 0;
	}
	for (L = 1; L <= MS_FOLD_MAX_CYCLE && L <= (n - pos) / 2; L++) {
		size_t m = 0, r;

		while (pos + m + L < n && ids[pos + m] == ids[pos + m + L])
			m++;
		r = 1 + m / L;
		if (r >= 2 && r * L > best_frames) {
			best = (struct ms_fold){ (uint32_t)L, r };
			best_frames = r * L;
		}
	}
	if (fold)
		*fold = best;
	return best_frames;
}

#include "util/json.h"
#include "util/text.h"

#include <math.h>
#include <inttypes.h>
#include <string.h>

void ms_json_init(struct ms_json *j, FILE *out)
{
	j->out = out;
	j->need_comma = false;
}

/* Before any value or key: separate it from the previous sibling. */
static void sep(struct ms_json *j)
{
	if (j->need_comma)
		fputc(',', j->out);
	j->need_comma = false;
}

void ms_json_object_begin(struct ms_json *j)
{
	sep(j);
	fputc('{', j->out);
}

void ms_json_object_end(struct ms_json *j)
{
	fputc('}', j->out);
	j->need_comma = true;
}

void ms_json_array_begin(struct ms_json *j)
{
	sep(j);
	fputc('[', j->out);
}

void ms_json_array_end(struct ms_json *j)
{
	fputc(']', j->out);
	j->need_comma = true;
}

void ms_json_key(struct ms_json *j, const char *key)
{
	sep(j);
	ms_json_quote(j->out, key);
	fputc(':', j->out);
}

void ms_json_quote(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		int n = ms_utf8_len(s);

		if (!n) {
			fputs("\\ufffd", out);
			s++;
			continue;
		}
		if (n > 1) {
			fwrite(s, 1, n, out);
			s += n;
			continue;
		}
		switch (*s) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		case '\b': fputs("\\b", out); break;
		case '\f': fputs("\\f", out); break;
		default:
			if (*s < 0x20)
				fprintf(out, "\\u%04x", *s);
			else
				fputc(*s, out);
		}
		s++;
	}
	fputc('"', out);
}

void ms_json_string(struct ms_json *j, const char *s)
{
	sep(j);
	ms_json_quote(j->out, s ? s : "");
	j->need_comma = true;
}

void ms_json_uint(struct ms_json *j, uint64_t v)
{
	sep(j);
	fprintf(j->out, "%" PRIu64, v);
	j->need_comma = true;
}

void ms_json_int(struct ms_json *j, int64_t v)
{
	sep(j);
	fprintf(j->out, "%" PRId64, v);
	j->need_comma = true;
}

void ms_json_double(struct ms_json *j, double v, int decimals)
{
	char buf[64];
	size_t len;

	if (!isfinite(v)) {
		ms_json_null(j);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	len = strlen(buf);
	if (strchr(buf, '.')) {
		while (len && buf[len - 1] == '0')
			buf[--len] = '\0';
		if (len && buf[len - 1] == '.')
			buf[--len] = '\0';
	}
	if (!strcmp(buf, "-0"))		/* a tiny negative rounds to -0 */
		memmove(buf, buf + 1, 2);
	sep(j);
	fputs(buf, j->out);
	j->need_comma = true;
}

void ms_json_bool(struct ms_json *j, bool v)
{
	sep(j);
	fputs(v ? "true" : "false", j->out);
	j->need_comma = true;
}

void ms_json_null(struct ms_json *j)
{
	sep(j);
	fputs("null", j->out);
	j->need_comma = true;
}

#include "util/text.h"

int ms_utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void ms_text_put(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		int n = ms_utf8_len(s);

		if (n > 1) {
			fwrite(s, 1, n, out);
			s += n;
			continue;
		}
		fputc(n == 1 && *s >= 0x20 && *s != 0x7f ? *s : '?', out);
		s++;
	}
}

size_t ms_text_width(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t w = 0;

	while (*s) {
		int n = ms_utf8_len(s);

		s += n > 1 ? n : 1;
		w++;
	}
	return w;
}

void ms_text_pad(FILE *out, const char *s, size_t width, int right_align)
{
	size_t w = ms_text_width(s);

	if (right_align)
		for (; w < width; w++)
			fputc(' ', out);
	ms_text_put(out, s);
	if (!right_align)
		for (; w < width; w++)
			fputc(' ', out);
}

size_t ms_digits(uint64_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

void ms_format_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, size, "%.3f s", ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, size, "%.3f ms", ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, size, "%.3f us", ns / 1e3);
	else
		snprintf(buf, size, "%u ns", (unsigned)ns);
}

void ms_format_ppm(char *buf, size_t size, uint32_t ppm)
{
	snprintf(buf, size, ppm < 10000 && ppm % 1000 ? "%.2f%%" : "%.1f%%", ppm / 10000.0);
}

/*
 * Text helpers shared by the analysis writers (internal to the layer).
 * Names come from symbol tables of files that may be hostile: text output
 * never passes a control character or a broken UTF-8 sequence through to
 * the terminal.
 */
#ifndef MS_UTIL_TEXT_H
#define MS_UTIL_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Length of the valid UTF-8 sequence at s (1-4), or 0 when the bytes there
 * are not one (overlong forms, surrogates, past U+10FFFF, a NUL inside).
 */
int ms_utf8_len(const unsigned char *s);

/* Write s with control characters and invalid bytes shown as '?'. */
void ms_text_put(FILE *out, const char *s);
/* Columns s takes on a terminal: one per character as ms_text_put shows it. */
size_t ms_text_width(const char *s);
/* s padded with spaces to width, on the right (left-aligned) or the left. */
void ms_text_pad(FILE *out, const char *s, size_t width, int right_align);
/* Decimal digits of v. */
size_t ms_digits(uint64_t v);
/* "1.234 s", "12.345 ms", "850 us" or "120 ns" into buf. */
void ms_format_ns(char *buf, size_t size, uint64_t ns);
/* Millionths as a percentage: "2.0%", "61.3%", "0.25%" under 1 % into buf. */
void ms_format_ppm(char *buf, size_t size, uint32_t ppm);

#endif

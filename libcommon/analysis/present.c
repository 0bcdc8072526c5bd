/*
 * present: colour and terminal width for the
 * text reports (see present.h for the rules).
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

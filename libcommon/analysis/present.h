/*
 * Presentation for the terminal reports of ms-analyze and microscope
 * report: colour and the terminal's width.
 *
 * Pure: nothing here keeps state, and only ms_color_decide() and
 * ms_term_width() look at the process (environment, ioctl). A command
 * calls those two once and passes their answers down as values, so every
 * view stays a deterministic function of (capture, query, these values).
 * Nothing allocates: the caller passes the buffers. JSON output keeps full
 * names and raw numbers; all of this is for people reading text.
 */
#ifndef MS_ANALYSIS_PRESENT_H
#define MS_ANALYSIS_PRESENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Colour: --color=auto|always|never.
 */
enum ms_color_mode {
	MS_COLOR_AUTO = 0,
	MS_COLOR_ALWAYS = 1,
	MS_COLOR_NEVER = 2,
};

/*
 * The value of --color. NULL (a bare --color) means always, as for ls,
 * grep and git. Anything else but "auto", "always" or "never" is refused
 * with one message naming the value and the choices: -1, *mode unchanged.
 */
int ms_color_mode_parse(const char *value, enum ms_color_mode *mode);

/*
 * Whether to colour, from the facts (pure, for tests). always: yes;
 * never: no; auto: no when NO_COLOR is set and not empty (no-color.org);
 * else yes when CLICOLOR_FORCE is set, not empty and not "0"
 * (bixense.com/clicolors, honoured by BSD ls, CMake and Ninja, so that
 * `| less -R` can keep colour without a flag; NO_COLOR wins over it as
 * that page says); else yes only on a terminal whose TERM is set and not
 * "dumb" (git treats an unset TERM as dumb too). The strings may be NULL:
 * unset.
 */
bool ms_color_choose(enum ms_color_mode mode, bool is_terminal, const char *term,
		     const char *no_color, const char *clicolor_force);
/* ms_color_choose() for fd with this process's environment. Call once. */
bool ms_color_decide(enum ms_color_mode mode, int fd);

/*
 * A small set of styles, each one SGR sequence. Heat marks a share of all
 * samples: hot (red) from 10 %, warm (yellow) from 1 %, plain below. 1 % is
 * where the report's tree already stops printing nodes (report.c), so a
 * coloured row is one worth reading; 10 % is a function that by itself
 * could make the program a tenth faster: the first place to look.
 */
enum ms_style {
	MS_STYLE_PLAIN = 0,	/* writes nothing */
	MS_STYLE_HEADER,	/* bold: a section's title, a table's header */
	MS_STYLE_DIM,		/* faint: a module, a file and line */
	MS_STYLE_HOT,		/* red */
	MS_STYLE_WARM,		/* yellow */
	MS_STYLE_WARN,		/* bold yellow: truncation, lost records, warnings */
	MS_STYLE_RESET,		/* back to the terminal's default */
};
#define MS_HEAT_HOT_PPM 100000u		/* 10 % */
#define MS_HEAT_WARM_PPM 10000u		/* 1 % */

/* The style for a share in millionths (util/text.h's ppm). */
enum ms_style ms_heat_style(uint32_t ppm);
/* The SGR sequence of style, or "" when !color or the style is plain. */
const char *ms_style_sgr(bool color, enum ms_style style);
/* Write ms_style_sgr(color, style) to out. */
void ms_style_put(FILE *out, bool color, enum ms_style style);
/*
 * text in style, then back to the default when a sequence was written;
 * text as ms_text_put() shows it (no control character gets through).
 */
void ms_styled_put(FILE *out, bool color, enum ms_style style, const char *text);

/*
 * Terminal width.
 */

/*
 * COLUMNS as a width: its value when it is all digits from 1 to 65535 (a
 * terminal's width fits struct winsize's 16 bits), else 0. NULL: 0.
 */
size_t ms_columns_parse(const char *columns);
/*
 * Columns to fit the report in: fd's width when it is a terminal that
 * knows its width (TIOCGWINSZ), else COLUMNS when valid, else 0: no limit
 * (a pipe or a file gets full names). Call once.
 */
size_t ms_term_width(int fd);

#endif

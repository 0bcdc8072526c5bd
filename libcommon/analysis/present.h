/*
 * Presentation for the terminal reports of ms-analyze and microscope
 * report: colour, the terminal's width, names shortened to it, numbers in
 * plain words and recursion folded in a call tree.
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

/*
 * Names shortened for text.
 *
 * First the name is made short to read, always:
 *  - template argument lists are elided: "<" right after an identifier
 *    character (a letter, digit, '_', '$' or a byte of a UTF-8 character)
 *    or after "::" (Rust's "::<"), up to its matching ">" (nested "<>" and
 *    "()" inside counted), becomes "<…>"; "<>" stays. A "<" anywhere else
 *    (Rust's "<T as Trait>", Java's ".<init>") is text;
 *  - parameter lists are dropped: "(" right after an identifier character,
 *    ">", ")", "]" or "'" (clang's 'lambda'), up to its matching ")",
 *    with the qualifiers after it (" const", " volatile", " &", " &&",
 *    " noexcept"). An enclosing function's list goes too
 *    ("f()::{lambda(int)#1}" -> "f::{lambda#1}"). A "(" elsewhere (Go's
 *    "main.(*T).M", "(anonymous namespace)" inside a name) is text;
 *  - every "(anonymous namespace)::" is dropped (pprof drops a leading one;
 *    everywhere is as true and shorter);
 *  - an operator's own brackets are its name and stay: operator(),
 *    operator[], operator<, operator<<, operator<=, operator<=>,
 *    operator<<=, operator>, operator>>, operator>=, operator>>=,
 *    operator->, operator->*; template arguments after one (GCC writes
 *    "operator< <int>") are elided as above;
 *  - a function template's return type, which GCC's demangler writes
 *    first, is dropped: when the first parameter list follows a template
 *    argument list, the text up to the last space outside brackets before
 *    it (and before any "operator") goes ("int const& std::max<int>(int
 *    const&, int const&)" -> "std::max<…>");
 *  - GCC's clone suffixes (" [clone .cold]") stay: a cold part is code
 *    of its own.
 * Namespaces stay (pprof's ShortenFunctionName drops them for graph
 * labels; here the cut below drops them only when the width needs it).
 * A "<" or a parameter "(" without its match ends the shortening: the rest
 * is copied as it is. Control characters and bytes that are not UTF-8 are
 * written as '?' (as ms_text_put() shows them), so the result is printable
 * as it is and its width is its count of characters (ms_text_width()).
 *
 * Then, when width is not 0 and the result is wider than width columns,
 * its start is cut: "…" followed by the last width - 1 columns, so the
 * function itself stays and the namespace goes ("…r<…>::push_back"). Width
 * 1 gives "…". An elided "<…>" is never cut in two: a cut that would end
 * inside one takes it whole ("…::push_back", not "…>::push_back"), so the
 * result can be up to two columns narrower than width.
 *
 * buf gets the result as snprintf would: the longest prefix of whole
 * characters that fits, NUL-terminated when size is not 0 (buf may be
 * NULL when size is 0). Returns the bytes of the whole result (without
 * the NUL): a value >= size says buf was too small. MS_NAME_SIZE(width)
 * bytes always hold a result cut to width > 0. Linear in the name's
 * length; name NULL is "".
 */
#define MS_NAME_SIZE(width) ((size_t)(width) * 4 + 1)
size_t ms_name_shorten(char *buf, size_t size, const char *name, size_t width);

/*
 * Numbers in plain words. Each writes into buf as snprintf does and
 * returns the length of the whole text.
 *
 * Scaled values have one decimal below 100 of their unit and none from
 * 100 ("12.5 µs", "350 ms"), rounded half up; a value that rounds to 1000
 * of its unit (1024 for bytes) is written in the next unit ("1.0 ms", not
 * "1000 µs"). Values in the base unit (ns, B, Hz) are whole.
 */

/* Thousands separated by commas: "0", "2,001", "9,000,000". */
size_t ms_format_count(char *buf, size_t size, uint64_t n);
/*
 * "850 ns", "12.5 µs", "350 ms", "2.0 s", "59.9 s", then whole seconds
 * from a minute: "3 min 20 s", then whole minutes from an hour:
 * "2 h 5 min". "µs", the SI symbol, rather than "us": these lines are for
 * people, the text reports are UTF-8 already ("…", "×"), and Go's and
 * pprof's durations write µs too. ("us" stays in util/text.h's
 * ms_format_ns for the tables that use it.)
 */
size_t ms_format_duration(char *buf, size_t size, uint64_t ns);
/*
 * A rate: "999 Hz", "1.2 kHz", "4.0 kHz", "250 kHz", "1.5 MHz"; "? Hz"
 * when hz is negative or not a number.
 */
size_t ms_format_rate(char *buf, size_t size, double hz);
/*
 * A size in binary units: "512 B", "1.5 KiB", "51.3 MiB", "2.0 GiB" up to
 * EiB. Binary (1024) rather than decimal (1000) because the sizes shown
 * are of memory and buffers, counted in pages and powers of two, and the
 * project says KiB and MiB everywhere else (stack copies of 64 KiB, rings
 * of 2-4 MiB); the "i" says which is meant.
 */
size_t ms_format_bytes(char *buf, size_t size, uint64_t bytes);

/*
 * Recursion folding for a call-tree printer.
 *
 * ids is a path of function ids, outermost first. At pos, for each cycle
 * length L from 1 to MS_FOLD_MAX_CYCLE, R(L) is the largest count with
 * pos + R * L <= n and ids[pos + i] == ids[pos + i + L] for every
 * 0 <= i < (R - 1) * L: the block ids[pos, pos + L) followed by R - 1
 * copies of itself (a partial copy at the end does not count). The fold
 * is the L that covers the most frames (R * L) among those with R >= 2,
 * the smaller L on a tie: "A A A A" is A ×4, not (A A) ×2; "A B A B A" is
 * (A B) ×2, then A; "A A B A A B" is (A A B) ×2. When no L repeats, the
 * fold is the one frame at pos (L = 1, R = 1). Cycles longer than
 * MS_FOLD_MAX_CYCLE are not looked for: a printer shows them as they are.
 *
 * Returns the frames the fold covers, R * L, and fills *fold when not
 * NULL; 0, with *fold zeroed, when pos >= n or ids is NULL. A printer
 * shows ids[pos, pos + L) once with "×R" (or not, below a count it
 * chooses) and goes on at pos + R * L. A call takes at most
 * MS_FOLD_MAX_CYCLE * (R * L + MS_FOLD_MAX_CYCLE) comparisons, so a walk
 * that goes on after each fold is linear in the path's length.
 */
#define MS_FOLD_MAX_CYCLE 4
struct ms_fold {
	uint32_t cycle;		/* L: 1 for direct recursion, 2..4 for a cycle */
	size_t repeats;		/* R: 1 when nothing repeats at pos */
};
size_t ms_fold_at(const uint32_t *ids, size_t n, size_t pos, struct ms_fold *fold);

#endif

/*
 * Unit tests of libcommon/analysis/present: colour and terminal width,
 * with known answers and hostile inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "analysis/present.h"
#include "util/text.h"
#include "stderr-capture.h"

/* ---- colour ---- */

static void test_color_parse(void **state)
{
	enum ms_color_mode m = MS_COLOR_NEVER;
	const char *err;

	(void)state;
	assert_int_equal(ms_color_mode_parse("auto", &m), 0);
	assert_int_equal(m, MS_COLOR_AUTO);
	assert_int_equal(ms_color_mode_parse("always", &m), 0);
	assert_int_equal(m, MS_COLOR_ALWAYS);
	assert_int_equal(ms_color_mode_parse("never", &m), 0);
	assert_int_equal(m, MS_COLOR_NEVER);
	/* a bare --color: always, as ls, grep and git */
	assert_int_equal(ms_color_mode_parse(NULL, &m), 0);
	assert_int_equal(m, MS_COLOR_ALWAYS);

	/* refused: one message naming the value and the choices, mode kept */
	m = MS_COLOR_NEVER;
	stderr_begin();
	assert_int_equal(ms_color_mode_parse("sometimes", &m), -1);
	err = stderr_end();
	assert_int_equal(m, MS_COLOR_NEVER);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "--color"));
	assert_non_null(strstr(err, "'sometimes'"));
	assert_non_null(strstr(err, "auto, always or never"));
	{
		static const char *const bad[] = {
			"", "Always", "AUTO", "yes", "auto ", " never", "1",
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			stderr_begin();
			assert_int_equal(ms_color_mode_parse(bad[i], &m), -1);
			err = stderr_end();
			assert_int_equal(count_lines(err), 1);
			assert_int_equal(m, MS_COLOR_NEVER);
		}
	}
}

static void test_color_choose(void **state)
{
	(void)state;
	/* always and never ignore every fact */
	assert_true(ms_color_choose(MS_COLOR_ALWAYS, false, "dumb", "1", NULL));
	assert_true(ms_color_choose(MS_COLOR_ALWAYS, false, NULL, NULL, "0"));
	assert_false(ms_color_choose(MS_COLOR_NEVER, true, "xterm", NULL, "1"));
	assert_false(ms_color_choose(MS_COLOR_NEVER, true, "xterm-256color", NULL, NULL));

	/* auto: a terminal with a TERM that is not dumb */
	assert_true(ms_color_choose(MS_COLOR_AUTO, true, "xterm-256color", NULL, NULL));
	assert_true(ms_color_choose(MS_COLOR_AUTO, true, "linux", NULL, NULL));
	assert_false(ms_color_choose(MS_COLOR_AUTO, false, "xterm", NULL, NULL));
	assert_false(ms_color_choose(MS_COLOR_AUTO, true, "dumb", NULL, NULL));
	assert_false(ms_color_choose(MS_COLOR_AUTO, true, NULL, NULL, NULL));
	assert_false(ms_color_choose(MS_COLOR_AUTO, true, "", NULL, NULL));
	/* "dumb" exactly: another name that starts with it is a terminal's */
	assert_true(ms_color_choose(MS_COLOR_AUTO, true, "dumber", NULL, NULL));

	/* NO_COLOR set and not empty: off; empty counts as unset */
	assert_false(ms_color_choose(MS_COLOR_AUTO, true, "xterm", "1", NULL));
	assert_false(ms_color_choose(MS_COLOR_AUTO, true, "xterm", "0", NULL));
	assert_false(ms_color_choose(MS_COLOR_AUTO, true, "xterm", "no", NULL));
	assert_true(ms_color_choose(MS_COLOR_AUTO, true, "xterm", "", NULL));

	/* CLICOLOR_FORCE: on without a terminal, even dumb; "0" and "" are unset */
	assert_true(ms_color_choose(MS_COLOR_AUTO, false, NULL, NULL, "1"));
	assert_true(ms_color_choose(MS_COLOR_AUTO, false, "dumb", NULL, "yes"));
	assert_false(ms_color_choose(MS_COLOR_AUTO, false, "xterm", NULL, "0"));
	assert_false(ms_color_choose(MS_COLOR_AUTO, false, "xterm", NULL, ""));
	/* ... and NO_COLOR wins over it */
	assert_false(ms_color_choose(MS_COLOR_AUTO, true, "xterm", "1", "1"));
	assert_true(ms_color_choose(MS_COLOR_AUTO, true, "xterm", "", "1"));

	/* a mode that is no mode acts as auto */
	assert_false(ms_color_choose((enum ms_color_mode)7, false, "xterm", NULL, NULL));
	assert_true(ms_color_choose((enum ms_color_mode)7, true, "xterm", NULL, NULL));
}

/* The environment variables the tests change, put back after each. */
struct saved_env {
	char *term, *no_color, *force, *columns;
};

static char *dup_env(const char *name)
{
	const char *v = getenv(name);

	return v ? strdup(v) : NULL;
}

static void env_save(struct saved_env *e)
{
	e->term = dup_env("TERM");
	e->no_color = dup_env("NO_COLOR");
	e->force = dup_env("CLICOLOR_FORCE");
	e->columns = dup_env("COLUMNS");
}

static void env_put(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static void env_restore(struct saved_env *e)
{
	env_put("TERM", e->term);
	env_put("NO_COLOR", e->no_color);
	env_put("CLICOLOR_FORCE", e->force);
	env_put("COLUMNS", e->columns);
	free(e->term);
	free(e->no_color);
	free(e->force);
	free(e->columns);
}

/* A pseudo-terminal: *master and *slave, or false when the system has none. */
static bool open_pty(int *master, int *slave)
{
	const char *name;

	*master = posix_openpt(O_RDWR | O_NOCTTY);
	if (*master < 0)
		return false;
	if (grantpt(*master) || unlockpt(*master) || !(name = ptsname(*master)) ||
	    (*slave = open(name, O_RDWR | O_NOCTTY)) < 0) {
		close(*master);
		return false;
	}
	return true;
}

static void test_color_decide(void **state)
{
	struct saved_env env;
	int p[2];

	(void)state;
	env_save(&env);
	assert_int_equal(pipe(p), 0);
	unsetenv("NO_COLOR");
	unsetenv("CLICOLOR_FORCE");
	setenv("TERM", "xterm", 1);

	/* a pipe */
	assert_true(ms_color_decide(MS_COLOR_ALWAYS, p[1]));
	assert_false(ms_color_decide(MS_COLOR_NEVER, p[1]));
	assert_false(ms_color_decide(MS_COLOR_AUTO, p[1]));
	setenv("CLICOLOR_FORCE", "1", 1);
	assert_true(ms_color_decide(MS_COLOR_AUTO, p[1]));
	setenv("NO_COLOR", "1", 1);
	assert_false(ms_color_decide(MS_COLOR_AUTO, p[1]));
	assert_true(ms_color_decide(MS_COLOR_ALWAYS, p[1]));
	unsetenv("CLICOLOR_FORCE");
	unsetenv("NO_COLOR");
	/* not a file at all */
	assert_false(ms_color_decide(MS_COLOR_AUTO, -1));
	close(p[0]);
	close(p[1]);
	env_restore(&env);
}

static void test_color_decide_terminal(void **state)
{
	struct saved_env env;
	int master, slave;

	(void)state;
	if (!open_pty(&master, &slave))
		skip();		/* no pseudo-terminals here */
	env_save(&env);
	unsetenv("NO_COLOR");
	unsetenv("CLICOLOR_FORCE");
	setenv("TERM", "xterm", 1);
	assert_true(ms_color_decide(MS_COLOR_AUTO, slave));
	setenv("TERM", "dumb", 1);
	assert_false(ms_color_decide(MS_COLOR_AUTO, slave));
	unsetenv("TERM");
	assert_false(ms_color_decide(MS_COLOR_AUTO, slave));
	setenv("TERM", "xterm", 1);
	setenv("NO_COLOR", "", 1);
	assert_true(ms_color_decide(MS_COLOR_AUTO, slave));
	setenv("NO_COLOR", "1", 1);
	assert_false(ms_color_decide(MS_COLOR_AUTO, slave));
	assert_false(ms_color_decide(MS_COLOR_NEVER, slave));
	close(slave);
	close(master);
	env_restore(&env);
}

/* What f, an open_memstream() on *mem, wrote. */
static const char *captured(FILE *f, char **mem)
{
	fclose(f);
	return *mem;
}

static void test_styles(void **state)
{
	char *mem = NULL;
	size_t n;
	FILE *f;

	(void)state;
	/* heat: the boundaries themselves belong to the hotter side */
	assert_int_equal(ms_heat_style(0), MS_STYLE_PLAIN);
	assert_int_equal(ms_heat_style(9999), MS_STYLE_PLAIN);
	assert_int_equal(ms_heat_style(10000), MS_STYLE_WARM);
	assert_int_equal(ms_heat_style(99999), MS_STYLE_WARM);
	assert_int_equal(ms_heat_style(100000), MS_STYLE_HOT);
	assert_int_equal(ms_heat_style(1000000), MS_STYLE_HOT);
	assert_int_equal(ms_heat_style(UINT32_MAX), MS_STYLE_HOT);

	/* sequences only with colour on */
	assert_string_equal(ms_style_sgr(true, MS_STYLE_HEADER), "\033[1m");
	assert_string_equal(ms_style_sgr(true, MS_STYLE_DIM), "\033[2m");
	assert_string_equal(ms_style_sgr(true, MS_STYLE_HOT), "\033[31m");
	assert_string_equal(ms_style_sgr(true, MS_STYLE_WARM), "\033[33m");
	assert_string_equal(ms_style_sgr(true, MS_STYLE_WARN), "\033[1;33m");
	assert_string_equal(ms_style_sgr(true, MS_STYLE_RESET), "\033[0m");
	assert_string_equal(ms_style_sgr(true, MS_STYLE_PLAIN), "");
	assert_string_equal(ms_style_sgr(true, (enum ms_style)99), "");
	assert_string_equal(ms_style_sgr(true, (enum ms_style)-1), "");
	for (int s = MS_STYLE_PLAIN; s <= MS_STYLE_RESET; s++)
		assert_string_equal(ms_style_sgr(false, (enum ms_style)s), "");

	f = open_memstream(&mem, &n);
	ms_style_put(f, true, MS_STYLE_HEADER);
	fputs("top", f);
	ms_style_put(f, true, MS_STYLE_RESET);
	ms_style_put(f, false, MS_STYLE_HOT);
	assert_string_equal(captured(f, &mem), "\033[1mtop\033[0m");
	free(mem);

	f = open_memstream(&mem, &n);
	ms_styled_put(f, true, MS_STYLE_HOT, "61.3%");
	fputc('|', f);
	ms_styled_put(f, false, MS_STYLE_HOT, "61.3%");
	fputc('|', f);
	ms_styled_put(f, true, MS_STYLE_PLAIN, "0.2%");
	fputc('|', f);
	/* text is shown as ms_text_put shows it: an escape in a name is no escape */
	ms_styled_put(f, true, MS_STYLE_DIM, "libx.so\033[31m\n");
	assert_string_equal(captured(f, &mem),
			    "\033[31m61.3%\033[0m|61.3%|0.2%|\033[2mlibx.so?[31m?\033[0m");
	free(mem);
}

/* ---- terminal width ---- */

static void test_columns_parse(void **state)
{
	(void)state;
	assert_int_equal(ms_columns_parse(NULL), 0);
	assert_int_equal(ms_columns_parse(""), 0);
	assert_int_equal(ms_columns_parse("80"), 80);
	assert_int_equal(ms_columns_parse("1"), 1);
	assert_int_equal(ms_columns_parse("007"), 7);
	assert_int_equal(ms_columns_parse("65535"), 65535);
	assert_int_equal(ms_columns_parse("65536"), 0);
	assert_int_equal(ms_columns_parse("0"), 0);
	assert_int_equal(ms_columns_parse("-1"), 0);
	assert_int_equal(ms_columns_parse("+80"), 0);
	assert_int_equal(ms_columns_parse(" 80"), 0);
	assert_int_equal(ms_columns_parse("80 "), 0);
	assert_int_equal(ms_columns_parse("80x"), 0);
	assert_int_equal(ms_columns_parse("0x50"), 0);
	assert_int_equal(ms_columns_parse("99999999999999999999999999999"), 0);
}

static void test_term_width(void **state)
{
	struct saved_env env;
	int p[2];

	(void)state;
	env_save(&env);
	assert_int_equal(pipe(p), 0);
	/* a pipe: COLUMNS when valid, else no limit */
	unsetenv("COLUMNS");
	assert_int_equal(ms_term_width(p[1]), 0);
	setenv("COLUMNS", "120", 1);
	assert_int_equal(ms_term_width(p[1]), 120);
	setenv("COLUMNS", "wide", 1);
	assert_int_equal(ms_term_width(p[1]), 0);
	setenv("COLUMNS", "", 1);
	assert_int_equal(ms_term_width(-1), 0);
	close(p[0]);
	close(p[1]);
	env_restore(&env);
}

/* A terminal: its own width, whatever COLUMNS says. */
static void test_term_width_terminal(void **state)
{
	struct winsize ws = { .ws_row = 24, .ws_col = 97 };
	struct saved_env env;
	int master, slave;

	(void)state;
	if (!open_pty(&master, &slave))
		skip();		/* no pseudo-terminals here */
	env_save(&env);
	assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
	setenv("COLUMNS", "120", 1);
	assert_int_equal(ms_term_width(slave), 97);
	unsetenv("COLUMNS");
	assert_int_equal(ms_term_width(slave), 97);
	/* one that does not know its width: COLUMNS after all */
	ws.ws_col = 0;
	assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
	assert_int_equal(ms_term_width(slave), 0);
	setenv("COLUMNS", "132", 1);
	assert_int_equal(ms_term_width(slave), 132);
	close(slave);
	close(master);
	env_restore(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_color_parse),
		cmocka_unit_test(test_color_choose),
		cmocka_unit_test(test_color_decide),
		cmocka_unit_test(test_color_decide_terminal),
		cmocka_unit_test(test_styles),
		cmocka_unit_test(test_columns_parse),
		cmocka_unit_test(test_term_width),
		cmocka_unit_test(test_term_width_terminal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

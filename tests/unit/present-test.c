/*
 * Unit tests of libcommon/analysis/present: colour, terminal width, short
 * names, numbers in words and recursion folding, with known answers and
 * hostile inputs (broken brackets, bad UTF-8, 1 MB names).
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

/* ---- names ---- */

static char short_buf[4096];

/* name shortened into short_buf; checks the returned length and the width. */
static const char *shorten(const char *name, size_t width)
{
	size_t n = ms_name_shorten(short_buf, sizeof(short_buf), name, width);

	assert_int_equal(n, strlen(short_buf));
	if (width)
		assert_true(ms_text_width(short_buf) <= width);
	return short_buf;
}

struct name_case {
	const char *name, *want;
};

/* Each name shortened without a width limit. */
static void check_names(const struct name_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		assert_string_equal(shorten(c[i].name, 0), c[i].want);
}

#define STD_VECTOR_PUSH "std::vector<int, std::allocator<int> >::push_back(int const&)"

static void test_name_templates(void **state)
{
	static const struct name_case cases[] = {
		{ STD_VECTOR_PUSH, "std::vector<…>::push_back" },
		{ "std::map<std::string, std::vector<int> >::find(std::string const&) const",
		  "std::map<…>::find" },
		{ "Foo<T>::bar", "Foo<…>::bar" },
		/* an empty list stays: "<…>" would be longer and say less */
		{ "std::tuple<>::tuple()", "std::tuple<>::tuple" },
		/* function pointers and expressions inside template arguments */
		{ "std::function<void (int)>::operator()(int) const",
		  "std::function<…>::operator()" },
		{ "A<(1>2)>::f()", "A<…>::f" },
		{ "std::_Function_handler<bool (char), "
		  "std::__detail::_AnyMatcher<std::__cxx11::regex_traits<char>, false, false, "
		  "true> >::_M_invoke(std::_Any_data const&, char&&)",
		  "std::_Function_handler<…>::_M_invoke" },
		/* several lists in one name */
		{ "a<b>::c<d<e>, f>::g<h>", "a<…>::c<…>::g<…>" },
		/* Rust: a generic's arguments go, a qualified path's "<T as Trait>" is the name */
		{ "core::ptr::drop_in_place<alloc::vec::Vec<u8>>", "core::ptr::drop_in_place<…>" },
		{ "core::ptr::drop_in_place::<alloc::string::String>",
		  "core::ptr::drop_in_place::<…>" },
		{ "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop",
		  "<alloc::vec::Vec<…> as core::ops::drop::Drop>::drop" },
		{ "<impl core::fmt::Debug for foo::Bar>::fmt",
		  "<impl core::fmt::Debug for foo::Bar>::fmt" },
		{ "foo::bar::{{closure}}", "foo::bar::{{closure}}" },
		/* Java's constructor and Go's receivers are not C++ */
		{ "java.lang.Object.<init>", "java.lang.Object.<init>" },
		{ "main.(*T).Method", "main.(*T).Method" },
		{ "pkg.F[...]", "pkg.F[...]" },
	};

	(void)state;
	check_names(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_name_params(void **state)
{
	static const struct name_case cases[] = {
		{ "foo(int)", "foo" },
		{ "foo()", "foo" },
		{ "ns::A::get() const", "ns::A::get" },
		{ "A::f() &&", "A::f" },
		{ "A::f() const &", "A::f" },
		{ "A::f() const volatile noexcept", "A::f" },
		/* a word that only starts like a qualifier is not one */
		{ "A::f() constant", "A::f constant" },
		{ "qsort(void*, unsigned long, unsigned long, int (*)(void const*, void const*))",
		  "qsort" },
		/* an enclosing function's list and a lambda's go too */
		{ "foo()::{lambda(int)#1}::operator()(int) const", "foo::{lambda#1}::operator()" },
		{ "A::f() const::{lambda()#1}::operator()() const",
		  "A::f::{lambda#1}::operator()" },
		{ "foo()::'lambda'(int)::operator()(int) const", "foo::'lambda'::operator()" },
		/* GCC's clone suffixes stay: a cold part is code of its own */
		{ "foo(int) [clone .cold]", "foo [clone .cold]" },
		{ "foo() [clone .constprop.0] [clone .isra.0]",
		  "foo [clone .constprop.0] [clone .isra.0]" },
		/* the anonymous namespace goes wherever it is */
		{ "(anonymous namespace)::helper(int)", "helper" },
		{ "a::(anonymous namespace)::b::c()", "a::b::c" },
		{ "(anonymous namespace)", "(anonymous namespace)" },
		/* names that are not C++ keep their parentheses */
		{ "func (file.py:12)", "func (file.py:12)" },
		{ "[truncated: stack-copy]", "[truncated: stack-copy]" },
		{ "sqlite3+0x8e70", "sqlite3+0x8e70" },
		{ "__vfprintf_internal", "__vfprintf_internal" },
	};

	(void)state;
	check_names(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_name_operators(void **state)
{
	static const struct name_case cases[] = {
		{ "operator<(A const&, A const&)", "operator<" },
		{ "operator<<(std::ostream&, A const&)", "operator<<" },
		{ "operator<=(A, A)", "operator<=" },
		{ "operator<=>(A const&, A const&)", "operator<=>" },
		{ "A::operator<<=(int)", "A::operator<<=" },
		{ "operator>(A, A)", "operator>" },
		{ "operator>>(std::istream&, A&)", "operator>>" },
		{ "operator>=(A, A)", "operator>=" },
		{ "A::operator>>=(int)", "A::operator>>=" },
		{ "A::operator->() const", "A::operator->" },
		{ "A::operator->*(int)", "A::operator->*" },
		{ "Foo::operator()(int) const", "Foo::operator()" },
		{ "Foo::operator[](unsigned long)", "Foo::operator[]" },
		{ "operator==(A const&, A const&)", "operator==" },
		{ "operator,(A, B)", "operator," },
		{ "operator new[](unsigned long)", "operator new[]" },
		{ "operator delete(void*, unsigned long)", "operator delete" },
		{ "A::operator bool() const", "A::operator bool" },
		{ "A::operator std::vector<int, std::allocator<int> >() const",
		  "A::operator std::vector<…>" },
		{ "operator\"\" _km(unsigned long long)", "operator\"\" _km" },
		/* a name that only starts with the word */
		{ "operators<int>(int)", "operators<…>" },
		{ "my_operator<int>(int)", "my_operator<…>" },
		/* an operator template: GCC writes a space, clang does not */
		{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
		  "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> "
		  ">&, char const*)",
		  "std::operator<< <…>" },
		{ "bool operator< <int>(A<int> const&, A<int> const&)", "operator< <…>" },
		{ "bool operator<<int>(A<int> const&)", "bool operator<<int>" },
		{ "void Foo::operator()<int>(int)", "Foo::operator()<…>" },
		/* operators inside template arguments do not end them */
		/* (libiberty writes "> >" where two would close) */
		{ "f<&A::operator<, &A::operator> >::g(int)", "f<…>::g" },
		{ "f<&A::operator-> >::g()", "f<…>::g" },
		/* without the space the ">>" is the operator's, and the list has no end */
		{ "f<&A::operator>>::g(int)", "f<&A::operator>>::g(int)" },
		{ "std::set<int, std::less<int> >::insert(int&&)", "std::set<…>::insert" },
	};

	(void)state;
	check_names(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_name_return_types(void **state)
{
	static const struct name_case cases[] = {
		{ "int const& std::max<int>(int const&, int const&)", "std::max<…>" },
		{ "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int "
		  "const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, "
		  "std::allocator<int> > >, int const&)",
		  "std::vector<…>::_M_realloc_insert<…>" },
		{ "unsigned long std::__detail::__mod<unsigned long, 4294967291ul, 1ul, "
		  "0ul>(unsigned long)",
		  "std::__detail::__mod<…>" },
		{ "decltype ({parm#1}.begin()) std::begin<std::vector<int> >(std::vector<int>&)",
		  "std::begin<…>" },
		{ "(anonymous namespace)::Foo<int> (anonymous namespace)::make<int>()", "make<…>" },
		/* no template list before the parameters: no return type to drop */
		{ "std::vector<int, std::allocator<int> >::vector(unsigned long)",
		  "std::vector<…>::vector" },
		{ "operator new(unsigned long)", "operator new" },
		{ "a b c", "a b c" },
		/* a space inside a lambda's braces is not a return type's */
		{ "f()::{lambda(int, int)#1}::operator()<int>(int) const",
		  "f::{lambda#1}::operator()<…>" },
	};

	(void)state;
	check_names(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_name_malformed(void **state)
{
	char big[64];

	(void)state;
	assert_string_equal(shorten("", 0), "");
	assert_string_equal(shorten("", 5), "");
	assert_string_equal(shorten(NULL, 0), "");
	assert_string_equal(shorten("main", 0), "main");
	/* a "<" or a parameter "(" without its match: the rest as it is */
	assert_string_equal(shorten("foo<int", 0), "foo<int");
	assert_string_equal(shorten("a<b<c>", 0), "a<b<c>");
	assert_string_equal(shorten("x<a)b>", 0), "x<a)b>");
	assert_string_equal(shorten("foo(int", 0), "foo(int");
	assert_string_equal(shorten("std::vector<int>::f(int, A<", 0), "std::vector<…>::f(int, A<");
	assert_string_equal(shorten("f(a(b)", 0), "f(a(b)");
	/* closers without openers are text */
	assert_string_equal(shorten("foo)bar", 0), "foo)bar");
	assert_string_equal(shorten("a>b>>c", 0), "a>b>>c");
	assert_string_equal(shorten(">", 0), ">");
	assert_string_equal(shorten("<", 0), "<");
	assert_string_equal(shorten("(", 0), "(");
	assert_string_equal(shorten("<>", 0), "<>");
	assert_string_equal(shorten("()", 0), "()");
	assert_string_equal(shorten("operator", 0), "operator");
	assert_string_equal(shorten("operator(", 0), "operator(");
	assert_string_equal(shorten("::<", 0), "::<");
	assert_string_equal(shorten("::<>", 0), "::<>");
	assert_string_equal(shorten("a::<b>", 0), "a::<…>");
	/* control characters and bytes that are not UTF-8: '?' */
	assert_string_equal(shorten("a\tb\x7f", 0), "a?b?");
	assert_string_equal(shorten("bad\xff", 0), "bad?");
	assert_string_equal(shorten("cut\xe2\x80", 0), "cut??");
	assert_string_equal(shorten("\xc0\xaf", 0), "??");	/* overlong '/' */
	assert_string_equal(shorten("\xed\xa0\x80", 0), "???");	/* a surrogate */
	assert_string_equal(shorten("caf\xc3\xa9::na\xc3\xafve<\xc3\xa9>", 0), "café::naïve<…>");
	/* pieces that would make a character once joined stay apart */
	assert_string_equal(shorten("f\xe2\x80(int)\xa6", 0), "f???");
	assert_string_equal(shorten("g\xe2\x80<int>\xa6", 0), "g??" "<…>?");

	/* the buffer: the longest prefix of whole characters, as snprintf */
	assert_int_equal(ms_name_shorten(big, 8, "abcdefghij", 0), 10);
	assert_string_equal(big, "abcdefg");
	assert_int_equal(ms_name_shorten(big, 4, "\xc3\xa9\xc3\xa9\xc3\xa9", 0), 6);
	assert_string_equal(big, "\xc3\xa9");
	assert_int_equal(ms_name_shorten(big, 2, "\xc3\xa9" "a", 0), 3);
	assert_string_equal(big, "");
	assert_int_equal(ms_name_shorten(big, 1, "abc", 0), 3);
	assert_string_equal(big, "");
	assert_int_equal(ms_name_shorten(NULL, 0, STD_VECTOR_PUSH, 0),
			 strlen("std::vector<…>::push_back"));
	assert_int_equal(ms_name_shorten(NULL, 0, STD_VECTOR_PUSH, 12), strlen("…::push_back"));
	assert_int_equal(ms_name_shorten(big, 6, STD_VECTOR_PUSH, 0),
			 strlen("std::vector<…>::push_back"));
	assert_string_equal(big, "std::");
	/* "<…>" cut by the buffer keeps its "<" */
	assert_int_equal(ms_name_shorten(big, 13, "std::vector<int>", 0), 16);
	assert_string_equal(big, "std::vector<");
	assert_int_equal(ms_name_shorten(big, sizeof(big), "x", 0), 1);
	assert_string_equal(big, "x");
}

static void test_name_width(void **state)
{
	char buf[MS_NAME_SIZE(8)];
	size_t w;

	(void)state;
	/* "std::vector<…>::push_back" is 25 columns */
	assert_string_equal(shorten(STD_VECTOR_PUSH, 0), "std::vector<…>::push_back");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 100), "std::vector<…>::push_back");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 25), "std::vector<…>::push_back");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 24), "…d::vector<…>::push_back");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 16), "…r<…>::push_back");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 15), "…<…>::push_back");
	/* a cut inside "<…>" takes it whole */
	assert_string_equal(shorten(STD_VECTOR_PUSH, 14), "…::push_back");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 13), "…::push_back");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 12), "…::push_back");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 11), "…:push_back");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 4), "…ack");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 3), "…ck");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 2), "…k");
	assert_string_equal(shorten(STD_VECTOR_PUSH, 1), "…");
	assert_string_equal(shorten("abc", 3), "abc");
	assert_string_equal(shorten("abcd", 3), "…cd");
	assert_string_equal(shorten("ab", 1), "…");
	assert_string_equal(shorten("a", 1), "a");
	/* columns, not bytes: each of these characters is one column */
	assert_string_equal(shorten("naïve::café::función", 0), "naïve::café::función");
	assert_string_equal(shorten("naïve::café::función", 20), "naïve::café::función");
	assert_string_equal(shorten("naïve::café::función", 8), "…función");
	assert_string_equal(shorten("ααααα", 3), "…αα");
	/* a '?' for a bad byte is a column too */
	assert_string_equal(shorten("ab\xff\xfe" "cd", 4), "…?cd");

	/* MS_NAME_SIZE(width) always holds a cut name */
	w = ms_name_shorten(buf, sizeof(buf), "ααααααααααα::ββββββββββ", 8);
	assert_true(w < sizeof(buf));
	assert_string_equal(buf, "…βββββββ");
	/* nine characters of four bytes each */
	w = ms_name_shorten(buf, sizeof(buf), "😀😀😀😀😀😀😀😀😀", 8);
	assert_true(w < sizeof(buf));
	assert_int_equal(ms_text_width(buf), 8);
}

/* CPU seconds since t0: a quadratic walk over 1 MB would take minutes. */
static double cpu_since(clock_t t0)
{
	return (double)(clock() - t0) / CLOCKS_PER_SEC;
}

static void test_name_huge(void **state)
{
	size_t mb = 1 << 20, i, n;
	char *name = malloc(mb + 64), *out = malloc(2 * mb + 64);
	clock_t t0 = clock();

	(void)state;
	assert_non_null(name);
	assert_non_null(out);

	/* 1 MB of one identifier */
	memset(name, 'a', mb);
	name[mb] = '\0';
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 0), mb);
	assert_int_equal(strlen(out), mb);
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 80), 79 + 3);
	assert_int_equal(ms_text_width(out), 80);
	assert_memory_equal(out, "…aaa", 6);

	/* 1 MB of template arguments */
	n = (size_t)snprintf(name, 8, "f<");
	memset(name + n, 'x', mb);
	n += mb;
	n += (size_t)snprintf(name + n, 32, ">::g(int)");
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 0), strlen("f<…>::g"));
	assert_string_equal(out, "f<…>::g");

	/* nested half a million deep */
	name[0] = 'f';
	for (i = 1; i <= mb / 2; i++)
		name[i] = '<';
	for (; i <= mb; i++)
		name[i] = '>';
	name[i] = '\0';
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 0), strlen("f<…>"));
	assert_string_equal(out, "f<…>");

	/* unmatched all the way: "a<a<a<..." and "a(a(a(..." */
	for (i = 0; i < mb; i += 2) {
		name[i] = 'a';
		name[i + 1] = '<';
	}
	name[mb] = '\0';
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 0), mb);
	assert_memory_equal(out, name, mb);
	for (i = 0; i < mb; i += 2)
		name[i + 1] = '(';
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 0), mb);
	assert_memory_equal(out, name, mb);
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 10), 9 + 3);
	assert_string_equal(out, "…(a(a(a(a(");

	/* many small lists, and many operators */
	for (i = 0; i + 4 <= mb; i += 4)
		memcpy(name + i, "a<b>", 4);
	name[i] = '\0';
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 0), mb / 4 * 6);
	assert_memory_equal(out, "a<…>a<…>", 10);
	for (i = 0; i + 9 <= mb; i += 9)
		memcpy(name + i, "operator<", 9);
	name[i] = '\0';
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 0), i);
	assert_string_equal(out, name);
	/* 1 MB of bytes that are not UTF-8 */
	memset(name, 0xff, mb);
	name[mb] = '\0';
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 0), mb);
	assert_true(out[0] == '?' && out[mb - 1] == '?');
	assert_int_equal(ms_name_shorten(out, 2 * mb, name, 3), 3 + 2);
	assert_string_equal(out, "…??");

	assert_true(cpu_since(t0) < 10.0);
	free(name);
	free(out);
}

/*
 * Random names from pieces that matter: the result is printable UTF-8,
 * its length is what was returned, a cut keeps a suffix of the uncut
 * result after "…" within the width (at most two columns short), and a
 * small buffer gets a prefix of whole characters.
 */
static void test_name_random(void **state)
{
	static const char *const pieces[] = {
		"<", ">", "(", ")", "operator", " ", "::", " const", "é", "\xff", "a", "b_1",
		"(anonymous namespace)::", "{", "}", "'", " [clone .cold]", "-", "=", "\t",
		"\xe2\x80", "\xa6", "operator<", "operator()", "ααα", "$", ",", "&",
	};
	char name[256], full[1024], cut[1024], small[1024];
	uint32_t x = 7;
	unsigned round;

	(void)state;
	for (round = 0; round < 20000; round++) {
		size_t len = 0, n_pieces, i, n_full, n_cut, width, size, w_full;
		const unsigned char *u;

		x = x * 1103515245u + 12345u;
		n_pieces = (x >> 16) % 24;
		for (i = 0; i < n_pieces; i++) {
			const char *piece;

			x = x * 1103515245u + 12345u;
			piece = pieces[(x >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
			memcpy(name + len, piece, strlen(piece));
			len += strlen(piece);
		}
		name[len] = '\0';

		n_full = ms_name_shorten(full, sizeof(full), name, 0);
		assert_int_equal(n_full, strlen(full));
		for (u = (const unsigned char *)full; *u;) {
			int c = ms_utf8_len(u);

			assert_true(c > 0);
			assert_true(*u >= 0x20 && *u != 0x7f);
			u += c;
		}
		/* the same every time */
		assert_int_equal(ms_name_shorten(cut, sizeof(cut), name, 0), n_full);
		assert_string_equal(cut, full);

		x = x * 1103515245u + 12345u;
		width = 1 + (x >> 16) % 30;
		w_full = ms_text_width(full);
		n_cut = ms_name_shorten(cut, sizeof(cut), name, width);
		assert_int_equal(n_cut, strlen(cut));
		if (w_full <= width) {
			assert_string_equal(cut, full);
		} else {
			assert_true(ms_text_width(cut) <= width);
			assert_true(ms_text_width(cut) + 2 >= width);
			assert_memory_equal(cut, "…", 3);
			assert_string_equal(full + n_full - (n_cut - 3), cut + 3);
		}

		x = x * 1103515245u + 12345u;
		size = (x >> 16) % (n_full + 2);
		assert_int_equal(ms_name_shorten(small, size, name, 0), n_full);
		if (size) {
			size_t k = strlen(small);

			assert_true(k < size);
			assert_memory_equal(small, full, k);
			/* whole characters: the next one starts where it stopped and did not fit */
			if (k < n_full) {
				size_t next = (size_t)ms_utf8_len((const unsigned char *)full + k);

				assert_true(((unsigned char)full[k] & 0xc0) != 0x80);
				assert_true(k + next >= size);
			}
		}
	}
}

/* ---- numbers ---- */

struct num_case {
	uint64_t v;
	const char *want;
};

static void test_format_count(void **state)
{
	static const struct num_case cases[] = {
		{ 0, "0" }, { 7, "7" }, { 999, "999" }, { 1000, "1,000" }, { 2001, "2,001" },
		{ 12345, "12,345" }, { 999999, "999,999" }, { 1000000, "1,000,000" },
		{ 9000000, "9,000,000" }, { 1234567890, "1,234,567,890" },
		{ UINT64_MAX, "18,446,744,073,709,551,615" },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ms_format_count(buf, sizeof(buf), cases[i].v),
				 strlen(cases[i].want));
		assert_string_equal(buf, cases[i].want);
	}
	/* snprintf's contract */
	assert_int_equal(ms_format_count(buf, 4, 2001), 5);
	assert_string_equal(buf, "2,0");
	assert_int_equal(ms_format_count(NULL, 0, 9000000), 9);
}

static void test_format_duration(void **state)
{
	static const struct num_case cases[] = {
		{ 0, "0 ns" }, { 1, "1 ns" }, { 850, "850 ns" }, { 999, "999 ns" },
		{ 1000, "1.0 µs" }, { 1049, "1.0 µs" }, { 1050, "1.1 µs" },
		{ 12500, "12.5 µs" }, { 99949, "99.9 µs" }, { 99950, "100 µs" },
		{ 350000, "350 µs" }, { 999499, "999 µs" },
		{ 999500, "1.0 ms" }, { 12345678, "12.3 ms" }, { 350000000, "350 ms" },
		{ 999499999, "999 ms" }, { 999500000, "1.0 s" },
		{ 2000000000ull, "2.0 s" }, { 2049999999ull, "2.0 s" }, { 2050000000ull, "2.1 s" },
		{ 59949999999ull, "59.9 s" }, { 59950000000ull, "1 min 0 s" },
		{ 60000000000ull, "1 min 0 s" }, { 200000000000ull, "3 min 20 s" },
		{ 200499999999ull, "3 min 20 s" }, { 200500000000ull, "3 min 21 s" },
		{ 3599499999999ull, "59 min 59 s" }, { 3599500000000ull, "1 h 0 min" },
		{ 7500000000000ull, "2 h 5 min" }, { 86400000000000ull, "24 h 0 min" },
		{ UINT64_MAX, "5124095 h 35 min" },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ms_format_duration(buf, sizeof(buf), cases[i].v),
				 strlen(cases[i].want));
		assert_string_equal(buf, cases[i].want);
	}
	assert_int_equal(ms_format_duration(buf, 4, 12500), strlen("12.5 µs"));
	assert_string_equal(buf, "12.");
	assert_int_equal(ms_format_duration(NULL, 0, 200000000000ull), strlen("3 min 20 s"));
}

static void test_format_rate(void **state)
{
	static const struct {
		double hz;
		const char *want;
	} cases[] = {
		{ 0.0, "0 Hz" }, { 0.4, "0 Hz" }, { 0.5, "1 Hz" }, { 99.0, "99 Hz" },
		{ 999.0, "999 Hz" }, { 999.4, "999 Hz" }, { 999.5, "1.0 kHz" },
		{ 1200.0, "1.2 kHz" }, { 1249.0, "1.2 kHz" }, { 1250.0, "1.3 kHz" },
		{ 4000.0, "4.0 kHz" }, { 99949.0, "99.9 kHz" }, { 99950.0, "100 kHz" },
		{ 250000.0, "250 kHz" }, { 999499.0, "999 kHz" }, { 999500.0, "1.0 MHz" },
		{ 1.5e6, "1.5 MHz" }, { 2.5e9, "2.5 GHz" }, { 1e12, "1.0 THz" },
		{ 5e14, "500 THz" }, { 1e18, "1000000 THz" },
		{ -1.0, "? Hz" }, { -0.0, "0 Hz" }, { NAN, "? Hz" }, { INFINITY, "? Hz" },
		{ -INFINITY, "? Hz" },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ms_format_rate(buf, sizeof(buf), cases[i].hz),
				 strlen(cases[i].want));
		assert_string_equal(buf, cases[i].want);
	}
	assert_int_equal(ms_format_rate(buf, 3, 1200.0), strlen("1.2 kHz"));
	assert_string_equal(buf, "1.");
}

static void test_format_bytes(void **state)
{
	static const struct num_case cases[] = {
		{ 0, "0 B" }, { 1, "1 B" }, { 512, "512 B" }, { 1023, "1023 B" },
		{ 1024, "1.0 KiB" }, { 1536, "1.5 KiB" }, { 102348, "99.9 KiB" },
		{ 102349, "100 KiB" }, { 1048063, "1023 KiB" }, { 1048064, "1.0 MiB" },
		{ 1048576, "1.0 MiB" }, { 53791539, "51.3 MiB" }, { 2147483648ull, "2.0 GiB" },
		{ 1ull << 40, "1.0 TiB" }, { 1ull << 50, "1.0 PiB" }, { 1ull << 60, "1.0 EiB" },
		{ UINT64_MAX, "16.0 EiB" },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ms_format_bytes(buf, sizeof(buf), cases[i].v),
				 strlen(cases[i].want));
		assert_string_equal(buf, cases[i].want);
	}
	assert_int_equal(ms_format_bytes(buf, 1, 53791539), strlen("51.3 MiB"));
	assert_string_equal(buf, "");
}

/* ---- recursion folding ---- */

/* The rule of present.h written the slow, obvious way. */
static size_t fold_reference(const uint32_t *ids, size_t n, size_t pos, struct ms_fold *f)
{
	size_t L, best = 1;

	*f = (struct ms_fold){ 1, 1 };
	if (pos >= n) {
		*f = (struct ms_fold){ 0, 0 };
		return 0;
	}
	for (L = 1; L <= MS_FOLD_MAX_CYCLE; L++) {
		size_t r = 1;

		/* one more block fits and equals the first */
		while (pos + (r + 1) * L <= n &&
		       !memcmp(ids + pos, ids + pos + r * L, L * sizeof(*ids)))
			r++;
		if (r >= 2 && r * L > best) {
			best = r * L;
			*f = (struct ms_fold){ (uint32_t)L, r };
		}
	}
	return best;
}

/* ms_fold_at on a path written as letters, "ABAB" */
static size_t fold_letters(const char *path, size_t pos, struct ms_fold *f)
{
	uint32_t ids[64];
	size_t n = strlen(path), i;

	for (i = 0; i < n; i++)
		ids[i] = (uint32_t)path[i];
	return ms_fold_at(ids, n, pos, f);
}

#define ASSERT_FOLD(path, pos, frames, L, R)                                 \
	do {                                                                 \
		struct ms_fold f_;                                           \
		assert_int_equal(fold_letters(path, pos, &f_), frames);      \
		assert_int_equal(f_.cycle, L);                               \
		assert_int_equal(f_.repeats, R);                             \
	} while (0)

static void test_fold_known(void **state)
{
	struct ms_fold f = { 9, 9 };
	uint32_t one = 5;

	(void)state;
	/* nothing, and past the end */
	assert_int_equal(ms_fold_at(NULL, 0, 0, &f), 0);
	assert_int_equal(f.cycle, 0);
	assert_int_equal(f.repeats, 0);
	assert_int_equal(ms_fold_at(NULL, 5, 0, NULL), 0);
	assert_int_equal(ms_fold_at(&one, 0, 0, &f), 0);
	assert_int_equal(ms_fold_at(&one, 1, 1, &f), 0);
	assert_int_equal(ms_fold_at(&one, 1, 7, NULL), 0);
	/* one frame */
	assert_int_equal(ms_fold_at(&one, 1, 0, NULL), 1);
	ASSERT_FOLD("A", 0, 1, 1, 1);
	ASSERT_FOLD("AB", 0, 1, 1, 1);
	/* direct recursion */
	ASSERT_FOLD("AA", 0, 2, 1, 2);
	ASSERT_FOLD("AAA", 0, 3, 1, 3);
	ASSERT_FOLD("AAAA", 0, 4, 1, 4);	/* not (A A) x2 */
	ASSERT_FOLD("XAAAY", 1, 3, 1, 3);
	ASSERT_FOLD("XAAAY", 0, 1, 1, 1);
	ASSERT_FOLD("AABB", 0, 2, 1, 2);
	ASSERT_FOLD("AABB", 2, 2, 1, 2);
	/* cycles */
	ASSERT_FOLD("ABAB", 0, 4, 2, 2);
	ASSERT_FOLD("ABABA", 0, 4, 2, 2);	/* a partial block does not count */
	ASSERT_FOLD("ABABA", 4, 1, 1, 1);
	ASSERT_FOLD("ABABABAB", 0, 8, 2, 4);	/* not (A B A B) x2 */
	ASSERT_FOLD("ABCABCABC", 0, 9, 3, 3);
	ASSERT_FOLD("ABCDABCD", 0, 8, 4, 2);
	ASSERT_FOLD("ABCDEABCDE", 0, 1, 1, 1);	/* a cycle of 5 is not folded */
	ASSERT_FOLD("AABAAB", 0, 6, 3, 2);	/* covers more than A A */
	ASSERT_FOLD("AABAABX", 0, 6, 3, 2);
	ASSERT_FOLD("AAAB", 0, 3, 1, 3);
	ASSERT_FOLD("ABBB", 0, 1, 1, 1);
	ASSERT_FOLD("ABBB", 1, 3, 1, 3);
	ASSERT_FOLD("ABAC", 0, 1, 1, 1);
	ASSERT_FOLD("AAAAAB", 1, 4, 1, 4);
	/* NULL fold: the count alone */
	assert_int_equal(fold_letters("ABAB", 0, NULL), 4);
}

static void test_fold_long(void **state)
{
	size_t n = 100000, i, pos, frames, total;
	uint32_t *ids = malloc(n * sizeof(*ids)), *back = malloc(n * sizeof(*ids));
	struct ms_fold f;
	clock_t t0 = clock();

	(void)state;
	assert_non_null(ids);
	assert_non_null(back);
	/* 100,000 frames of one function: one line, x100000 */
	for (i = 0; i < n; i++)
		ids[i] = 42;
	assert_int_equal(ms_fold_at(ids, n, 0, &f), n);
	assert_int_equal(f.cycle, 1);
	assert_int_equal(f.repeats, n);
	assert_int_equal(ms_fold_at(ids, n, n - 1, &f), 1);
	assert_int_equal(f.repeats, 1);
	/* A B A B ... */
	for (i = 0; i < n; i++)
		ids[i] = (uint32_t)(i % 2);
	assert_int_equal(ms_fold_at(ids, n, 0, &f), n);
	assert_int_equal(f.cycle, 2);
	assert_int_equal(f.repeats, n / 2);
	/* A B C A B C ... A: 33,333 blocks and one frame over */
	for (i = 0; i < n; i++)
		ids[i] = (uint32_t)(i % 3);
	assert_int_equal(ms_fold_at(ids, n, 0, &f), n - 1);
	assert_int_equal(f.cycle, 3);
	assert_int_equal(f.repeats, n / 3);
	assert_int_equal(ms_fold_at(ids, n, n - 1, &f), 1);

	/*
	 * A walk over a path with runs of every kind: each fold matches the
	 * reference, the folds expand back to the path, and the walk is linear.
	 */
	{
		uint32_t x = 12345;

		for (i = 0; i < n;) {
			size_t len, L, k;

			x = x * 1103515245u + 12345u;
			L = 1 + (x >> 16) % 5;		/* cycles of 1..5 */
			len = 1 + (x >> 8) % 40;	/* repeated up to 40 times */
			for (k = 0; k < L * len && i < n; k++, i++)
				ids[i] = (uint32_t)((x >> 20) % 4 + k % L);
		}
	}
	total = 0;
	for (pos = 0; pos < n; pos += frames) {
		struct ms_fold r;

		frames = ms_fold_at(ids, n, pos, &f);
		assert_int_equal(fold_reference(ids, n, pos, &r), frames);
		assert_int_equal(f.cycle, r.cycle);
		assert_int_equal(f.repeats, r.repeats);
		assert_int_equal(frames, f.cycle * f.repeats);
		for (i = 0; i < frames; i++)
			back[pos + i] = ids[pos + i % f.cycle];
		total += frames;
	}
	assert_int_equal(total, n);
	assert_memory_equal(back, ids, n * sizeof(*ids));
	assert_true(cpu_since(t0) < 10.0);
	free(ids);
	free(back);
}

/* Every position of every path of length 0..8 over three functions. */
static void test_fold_exhaustive(void **state)
{
	uint32_t ids[8];
	size_t n, pos;
	unsigned code, limit, k;

	(void)state;
	for (n = 0, limit = 1; n <= 8; n++, limit *= 3) {
		for (code = 0; code < limit; code++) {
			unsigned c = code;

			for (k = 0; k < n; k++, c /= 3)
				ids[k] = c % 3;
			for (pos = 0; pos <= n; pos++) {
				struct ms_fold f, r;

				assert_int_equal(ms_fold_at(ids, n, pos, &f),
						 fold_reference(ids, n, pos, &r));
				assert_int_equal(f.cycle, r.cycle);
				assert_int_equal(f.repeats, r.repeats);
			}
		}
	}
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
		cmocka_unit_test(test_name_templates),
		cmocka_unit_test(test_name_params),
		cmocka_unit_test(test_name_operators),
		cmocka_unit_test(test_name_return_types),
		cmocka_unit_test(test_name_malformed),
		cmocka_unit_test(test_name_width),
		cmocka_unit_test(test_name_huge),
		cmocka_unit_test(test_name_random),
		cmocka_unit_test(test_format_count),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_format_rate),
		cmocka_unit_test(test_format_bytes),
		cmocka_unit_test(test_fold_known),
		cmocka_unit_test(test_fold_long),
		cmocka_unit_test(test_fold_exhaustive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

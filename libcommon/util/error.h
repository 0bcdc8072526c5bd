/*
 * Messages and exit codes shared by every microscope command.
 *
 * Library code reports a failure once, with ms_error(), and returns -1 (or
 * a value with a documented error indicator); only the runners of stages
 * (stream/stage.h) return an exit status, and only cmd/ decides to exit.
 * Every message goes to stderr as "PROGRAM: message", lowercase, naming the
 * input and position that failed and, where there is one, what to do about
 * it. stdout carries data only.
 */
#ifndef MS_UTIL_ERROR_H
#define MS_UTIL_ERROR_H

#include <stdarg.h>
#include <stdnoreturn.h>

/*
 * One exit-code table for every ms-* command and microscope itself; --help
 * and each man page print it.
 */
enum ms_exit {
	MS_EXIT_OK = 0,
	MS_EXIT_ERROR = 1,	/* bad input, I/O failure, corrupt data */
	MS_EXIT_USAGE = 2,	/* bad command line */
	MS_EXIT_TRUNCATED = 3,	/* input stream cut short (no trailer) */
	MS_EXIT_SYSTEM = 4,	/* environment refuses: permissions, no hardware counters */
	MS_EXIT_PIPE = 5,	/* downstream closed its end of the pipe */
};

/* Text for --help and man pages, one line per code. */
#define MS_EXIT_CODES_HELP \
	"Exit status: 0 success, 1 error in input or I/O, 2 usage error,\n" \
	"3 input stream cut short, 4 refused by the system (permissions,\n" \
	"missing hardware), 5 downstream closed the pipe.\n"

/* Name printed before every message; defaults to "microscope". */
void ms_set_progname(const char *name);
const char *ms_progname(void);

/*
 * Catching this thread's messages instead of printing them, for a server
 * that answers a request with the reason it failed (microscope serve):
 * while c is set, ms_error(), ms_error_errno() and ms_warn() keep the
 * first message in c->buf (without "PROGRAM: ", cut at len) and count
 * them all in c->caught. ms_error_catch(c) sets c (emptied) and returns
 * the catcher it replaces; ms_error_catch(NULL) goes back to stderr.
 * ms_usage_error() and ms_die() still print: they exit.
 */
struct ms_error_catcher {
	char *buf;
	unsigned long len;
	unsigned long caught;
};
struct ms_error_catcher *ms_error_catch(struct ms_error_catcher *c);

/* Print "PROGRAM: message" to stderr and return -1. */
int ms_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, with ": strerror(errno)" appended. */
int ms_error_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "PROGRAM: warning: message". */
void ms_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * A bad command line: "PROGRAM: message" and "Try 'PROGRAM --help'." on
 * stderr, exit MS_EXIT_USAGE. Only for cmd/.
 */
noreturn void ms_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * End a command whose stdout is read by a person or a viewer (a report, a
 * view, an export): flush and close it. A reader that went away (| head)
 * is no error: MS_EXIT_OK, quietly, as git does; stages of a pipeline,
 * whose output must be whole, say MS_EXIT_PIPE instead. Any other failure:
 * a message naming what was written, MS_EXIT_ERROR.
 */
int ms_finish_stdout(const char *what);
/* Print the message and exit with code. Only for cmd/. */
noreturn void ms_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

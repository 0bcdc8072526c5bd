/*
 * The input of a stage: a path given on the command line, or stdin when the
 * argument is absent or "-".
 */
#ifndef MS_UTIL_INPUT_H
#define MS_UTIL_INPUT_H

#include <stddef.h>

/*
 * Open arg for reading; *name is set to arg or "stdin" for messages.
 * Returns the fd (STDIN_FILENO for stdin), or -1 after a message.
 * Close it with ms_close_input().
 */
int ms_open_input(const char *arg, const char **name);
void ms_close_input(int fd);
/*
 * Read path whole into *buf (malloc'd, with a NUL after the last byte; the
 * caller frees), at most max bytes; "-" or NULL reads stdin. Returns 0 or
 * -1 after a message.
 */
int ms_read_file(const char *path, size_t max, unsigned char **buf, size_t *len);

#endif

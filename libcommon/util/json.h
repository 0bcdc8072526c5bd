/*
 * A small streaming JSON writer: compact output (no spaces), keys in the
 * order the caller writes them, strings escaped so the result is valid
 * JSON whatever bytes a name holds (control characters as \uXXXX, bytes
 * that are not UTF-8 as U+FFFD).
 *
 * The writer keeps one flag, not a stack, so nesting depth is unbounded:
 * callers are trusted to balance begin/end and to put a key before each
 * value inside an object. Write errors are left on the FILE (check ferror).
 */
#ifndef MS_UTIL_JSON_H
#define MS_UTIL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ms_json {
	FILE *out;
	bool need_comma;	/* a value was written in the open container */
};

void ms_json_init(struct ms_json *j, FILE *out);
void ms_json_object_begin(struct ms_json *j);
void ms_json_object_end(struct ms_json *j);
void ms_json_array_begin(struct ms_json *j);
void ms_json_array_end(struct ms_json *j);
void ms_json_key(struct ms_json *j, const char *key);
void ms_json_string(struct ms_json *j, const char *s);
void ms_json_uint(struct ms_json *j, uint64_t v);
void ms_json_int(struct ms_json *j, int64_t v);
/* Fixed decimals with trailing zeros dropped: 60, 33.33; null if not finite. */
void ms_json_double(struct ms_json *j, double v, int decimals);
void ms_json_bool(struct ms_json *j, bool v);
void ms_json_null(struct ms_json *j);

/* Write s to out as a JSON string literal, quotes included. */
void ms_json_quote(FILE *out, const char *s);

#endif

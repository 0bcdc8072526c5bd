/*
 * Helpers the converters share: stack paths, a (key, key) -> row map, and
 * the import side's frame keys. Not an API outside formats/.
 */
#ifndef MS_FORMATS_INTERNAL_H
#define MS_FORMATS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/builder.h"
#include "capture/capture.h"
#include "capture/funcs.h"
#include "util/grow.h"
#include "util/pairmap.h"

/*
 * Frames an importer knows by name only get MS_FRAME_NO_ADDRESS and an
 * address made from this base and a dense ordinal. The base lies in the
 * hole between x86-64's canonical halves, so no real address has it; a
 * hostile file that uses one anyway only makes two frames share a name.
 */
#define MS_IMPORT_KEY_BASE 0x8000000000000000ull


/* The header an importer names itself with in the capture's producers. */
void ms_import_header(struct ms_header *h, const char *producer, const char *format);

/* ms_str of a NUL-terminated string. */
struct ms_str ms_str_of(const char *s);

#endif

/*
 * Checking a 3.11 or 3.12 offsets table against the interpreter's DWARF
 * (libdw): each field the walker reads is looked up by its structure's
 * name and member path, and must be where the table says.
 */
#ifndef MS_PYTHON_PYDWARF_H
#define MS_PYTHON_PYDWARF_H
#include <stddef.h>
#include "python/layout.h"

/*
 * Check o (for minor 11 or 12) against the DWARF of the ELF file open at
 * fd. Returns 1 when every field matched, 0 when the file has no DWARF
 * describing these structures (nothing to check), -1 when a field differs
 * or is missing, with what in err.
 */
int ms_py_dwarf_check(int fd, unsigned minor, const struct ms_py_offsets *o, char *err,
		      size_t errlen);

#endif

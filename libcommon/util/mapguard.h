/*
 * Guarding a mapped input against truncation. A read of a mapped file
 * beyond its end raises SIGBUS, and another process may truncate or
 * rewrite a file while a stage reads it. A guarded mapping is watched by
 * one SIGBUS handler: a fault inside it replaces the pages from the
 * faulting one to the mapping's end by zeros (the read goes on and finds
 * garbage, not a signal) and records where the file was cut, for the
 * reader to report as a cut-short input before it hands out anything read
 * after that point. A fault anywhere else kills the process as before.
 */
#ifndef MS_UTIL_MAPGUARD_H
#define MS_UTIL_MAPGUARD_H

#include <stdbool.h>
#include <stddef.h>

/* At most this many mappings are guarded at once; more go unguarded. */
#define MS_MAPGUARD_MAX 16

/*
 * Guard [addr, addr + len) (page-aligned addr, a mapping of a file).
 * Returns a handle >= 0, or -1 when every slot is taken or the handler
 * cannot be installed (the mapping then works as before, unguarded).
 */
int ms_mapguard_add(const void *addr, size_t len);
/* Stop guarding (before munmap). A handle of -1 is ignored. */
void ms_mapguard_remove(int handle);
/*
 * Whether a read of the guarded mapping found the file cut short: true
 * with *offset, the mapping's first byte that is no longer the file's.
 */
bool ms_mapguard_cut(int handle, size_t *offset);

#endif

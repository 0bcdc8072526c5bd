/*
 * A cache of each module's parsed and sorted symbol table (symtab.h), so
 * that ms-symbolize maps a file instead of reading every symbol of the
 * module's .symtab and .dynsym (and of its debug file), copying their
 * names and sorting them: on a short python3 profile that was ~40% of the
 * symbolizer's instructions, plus the first touch of every page of the
 * ELF files' symbol and string tables.
 *
 * The file ("debug/BUILDID.syms" under microscope's cache directory, beside
 * the inflated copies of dcache.h) is written only for a module with a
 * build id, and keyed by what went into the table: for each of the files
 * read (the debug file, then the module's file), its build id and size.
 * A table read from a file without a build id is not cached.
 *
 * The file is symfile.h's (magic "MSSYMS", the key struct
 * ms_symcache_key's bytes), as the kernel's is (kcache.h): only what holds
 * for the whole file is checked when it is loaded, each span of symbols
 * against its CRC-32C when a lookup first meets it (ELF symbols may nest,
 * so order alone cannot tell a damaged size from a true one). One that
 * fails makes the symbolizer drop the table and read the ELF files again
 * (and rewrite the cache).
 */
#ifndef MS_SYMBOLS_SYMCACHE_H
#define MS_SYMBOLS_SYMCACHE_H

#include <stdint.h>

#include "stream/records.h"
#include "symbols/symtab.h"

/* A file read into a table: its build id and size. */
struct ms_symcache_src {
	const uint8_t *build_id;
	uint32_t build_id_len;
	uint64_t size;
};

/* Fixed layout, zero-filled: compared with memcmp. */
struct ms_symcache_key {
	uint8_t files;		/* bit 0: a debug file was read, bit 1: the module's file */
	uint8_t build_id_len[2];
	uint8_t pad[5];
	uint64_t size[2];
	uint8_t build_id[2][MS_BUILD_ID_MAX];
};

/*
 * The key of a table read from debug, then file (either NULL when not
 * read). Returns 0, or -1 when nothing was read or a file read has no
 * build id (no cache then).
 */
int ms_symcache_key(struct ms_symcache_key *k, const struct ms_symcache_src *debug,
		    const struct ms_symcache_src *file);
/* The cache file's path (malloc'd) for build id bid, or NULL (no cache dir, no build id). */
char *ms_symcache_path(const uint8_t *bid, uint32_t bid_len);
/*
 * Map the cache at path into t (empty) when its header is valid and has
 * key k. Returns 0, or -1 (t untouched) when it is missing, stale or
 * invalid. No message: a bad cache is rebuilt, not reported.
 */
int ms_symcache_load(struct ms_symtab *t, const char *path, const struct ms_symcache_key *k);
/*
 * Write t (a table in memory with symbols) as the cache at path under key
 * k, creating its directory. Returns 0, or -1 (a message only when writing
 * the file failed).
 */
int ms_symcache_store(const struct ms_symtab *t, const char *path, const struct ms_symcache_key *k);

#endif

/*
 * Finding a module's separate debug file the way gdb, perf and elfutils
 * do, and proving it: a candidate is used only when its GNU build id
 * equals the module's. A module without a build id gets no separate debug
 * file (nothing could prove it); its own sections may still carry DWARF.
 *
 * Candidates, in order (the first proved one with DWARF wins; one with
 * only a symbol table is kept in case nothing better comes):
 *  1. each --debug-dir DIR, in the order given:
 *     DIR/.build-id/xx/rest.debug, DIR/LINK, DIR/MODDIR/LINK,
 *     DIR/BASE.debug, DIR/BASE (an unstripped copy)
 *  2. the system directory (/usr/lib/debug): .build-id/xx/rest.debug
 *  3. the module's .gnu_debuglink name LINK: MODDIR/LINK,
 *     MODDIR/.debug/LINK, /usr/lib/debug/MODDIR/LINK
 *  4. debuginfod, when DEBUGINFOD_URLS is set, through ms-debuginfod-find
 *     (run on first use; it and libdebuginfod.so.1 are never required).
 * xx/rest is the build id in hex split after its first byte; MODDIR and
 * BASE are the directory and name of the module's path.
 *
 * A candidate that exists with another build id is refused and
 * remembered: when nothing is found, the result says MS_SYM_DEBUG_MISMATCH
 * and names it, rather than MS_SYM_NO_DEBUG.
 */
#ifndef MS_ELF_DEBUGFIND_H
#define MS_ELF_DEBUGFIND_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <libelf.h>

#include "elf/elffile.h"

struct ms_debug_search {
	const char *const *dirs;	/* --debug-dir, in order */
	uint32_t n_dirs;
	const char *system_dir;		/* NULL: /usr/lib/debug; "" for none */
	bool no_debuginfod;		/* never ask debuginfod */
};

struct ms_debugfind;

struct ms_debugfind *ms_debugfind_new(const struct ms_debug_search *opts);
void ms_debugfind_free(struct ms_debugfind *f);

struct ms_debug_file {
	int reason;		/* MS_SYM_OK, MS_SYM_NO_DEBUG or MS_SYM_DEBUG_MISMATCH */
	struct ms_elf_file file;	/* open when MS_SYM_OK; close with ms_elf_file_close() */
	bool has_dwarf;		/* MS_SYM_OK: the file has .debug_info */
	char path[PATH_MAX];	/* the file used, or the first refused for its build id */
	const char *how;	/* "debug-dir", "build-id", "debuglink", "debuginfod" */
};

/*
 * Look for the debug file of the module whose file is (or was) at
 * module_path, with build id bid (bid_len 0: none) and, when its file was
 * readable, .gnu_debuglink name link (NULL: none). Fills out; never fails
 * otherwise (problems are out->reason).
 */
void ms_debugfind_find(struct ms_debugfind *f, const char *module_path, const char *link,
		       const uint8_t *bid, uint32_t bid_len, struct ms_debug_file *out);

/* The .gnu_debuglink name of elf, or NULL. Borrowed from elf. */
const char *ms_elf_debuglink(Elf *elf);
/* Whether elf has a .debug_info section with contents. */
bool ms_elf_has_dwarf(Elf *elf);
/* Whether elf has a .symtab. */
bool ms_elf_has_symtab(Elf *elf);

#endif

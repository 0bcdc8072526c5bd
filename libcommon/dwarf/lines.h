/*
 * A compilation unit's line table, read from .debug_line without libdw.
 *
 * libdw's dwarf_getsrclines() allocates each row, sorts them with qsort and
 * keeps fields no symbolizer asks for: for the units a profile of python3
 * touches in libc6-dbg that was a third of ms-symbolize's work. This reader
 * keeps what a lookup needs (address, file, line, end of sequence) in one
 * array, sorted once by address with a radix sort, and answers exactly as
 * dwarf_getsrc_die() and dwarf_linesrc() would:
 *  - rows sorted by address, an end of sequence before the other rows at
 *    the same address, rows otherwise in the program's order;
 *  - an address takes the last row at or below it, none when that row ends
 *    a sequence or is the table's last (libdw marks its last row so);
 *  - file names as libdw makes them: absolute ones as written, others
 *    joined to their directory ("DIR/NAME"; for DWARF < 5 directory 0 is
 *    the unit's DW_AT_comp_dir, and without one the name stays relative);
 *    index 0 is "???" before DWARF 5 (and in a DWARF 5 table with no file).
 *
 * It reads only what all versions of libdw read alike: a table with
 * anything else (DW_LNE_define_file, vendor opcodes, several operations
 * per instruction, a form it does not know, a value libdw would cut or
 * refuse, bytes left over, a header that does not add up) is refused, and
 * the caller asks libdw, so the answers never depend on which reader ran.
 */
#ifndef MS_DWARF_LINES_H
#define MS_DWARF_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/radix.h"
#include "util/strpool.h"

/* The sections a line table refers to, as the file holds them. */
struct ms_line_sections {
	const uint8_t *line;		/* .debug_line */
	size_t line_size;
	const uint8_t *str;		/* .debug_str, NULL when absent */
	size_t str_size;
	const uint8_t *line_str;	/* .debug_line_str, NULL when absent */
	size_t line_str_size;
	bool big_endian;		/* the file's byte order */
};

struct ms_linetab {
	uint64_t offset;		/* of the table in .debug_line */
	/* Rows by address: key the address, pos the file << 1 | end of sequence, aux the line. */
	struct ms_rkey *rows;
	uint32_t n_rows;
	const char **files;		/* index as in the rows and DW_AT_call_file */
	uint32_t n_files;
};

/*
 * Room a reader reuses from table to table, so that reading many tables
 * does not allocate (and fault in) fresh memory for each. Zeroed before
 * the first use; ms_line_scratch_release() frees it.
 */
struct ms_line_scratch {
	struct ms_rkey *rows, *tmp;
	uint32_t alloc_rows, alloc_tmp;
};
void ms_line_scratch_release(struct ms_line_scratch *s);

/*
 * Read the table at offset of sec->line for a unit with addresses of
 * addr_size bytes and compilation directory comp_dir (NULL when none).
 * Names it makes are kept in pool; scratch may be NULL. Returns 0; 1 when
 * the table has something this reader leaves to libdw (t is then empty);
 * -1 when out of memory.
 */
int ms_linetab_read(struct ms_linetab *t, const struct ms_line_sections *sec, uint64_t offset,
		    unsigned int addr_size, const char *comp_dir, struct ms_strpool *pool,
		    struct ms_line_scratch *scratch);
void ms_linetab_release(struct ms_linetab *t);

/*
 * The file and line of addr, as dwarf_getsrc_die() with dwarf_linesrc()
 * and dwarf_lineno() give them: false when no row covers addr; *file is
 * NULL when the row's file index is past the table's files.
 */
bool ms_linetab_find(const struct ms_linetab *t, uint64_t addr, const char **file, int *line);

/*
 * The name the table gives a file it does not name (index 0 before DWARF
 * 5): one string, so that a copy of a table (dwarfidx.c's cache) can give
 * back the same pointer.
 */
extern const char ms_linetab_unknown[];

/* The name of file idx, as dwarf_filesrc() gives it; NULL past the end. */
const char *ms_linetab_file(const struct ms_linetab *t, uint64_t idx);

#endif

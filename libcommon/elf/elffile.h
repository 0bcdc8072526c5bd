/*
 * Module files on disk: opening an ELF file, reading its build id and its
 * PT_LOAD segments, and proving that the file is the module that ran.
 *
 * Identity rule (shared by ms-unwind, ms-symbolize and the DWARF unwinder):
 * a file is used for a module only when
 *  - the module has a build id and the file's NT_GNU_BUILD_ID note equals
 *    it, or
 *  - the module has no build id, its size is not 0, and the file's device,
 *    inode and size (and mtime, when the module records one) equal the
 *    module's.
 * ms-unwind writes size 0 for a module whose file it could not prove (the
 * file at the path was replaced or rebuilt, or is gone), so such a module
 * is never opened by path alone.
 *
 * Library code: failures are returned as enum ms_frame_reason codes
 * (stream/records.h) rather than printed; they are data, not errors.
 */
#ifndef MS_ELF_ELFFILE_H
#define MS_ELF_ELFFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include <gelf.h>
#include <libelf.h>

#include "stream/records.h"

/* Call before any other libelf use; idempotent. Returns 0 or -1. */
int ms_elf_setup(void);

/*
 * The file's GNU build id: PT_NOTE segments first, then SHT_NOTE sections.
 * Returns its length (1..MS_BUILD_ID_MAX; longer ids are cut) or 0 if none.
 */
uint32_t ms_elf_build_id(Elf *elf, uint8_t out[MS_BUILD_ID_MAX]);

/* A PT_LOAD segment's file-backed part. */
struct ms_elf_load {
	uint64_t offset, filesz;
	uint64_t vaddr;
};

/* The PT_LOAD segments of a file, in program-header order. */
struct ms_elf_loads {
	uint32_t n;
	struct ms_elf_load *load;	/* owned */
};

/*
 * The first section named want, with its header in *sh; NULL when there
 * is none (or the names cannot be read). Any type, NOBITS included.
 */
Elf_Scn *ms_elf_section(Elf *elf, const char *want, GElf_Shdr *sh);

/* Read the segments; 0, or -1 when the headers are unreadable (no message). */
int ms_elf_loads_read(Elf *elf, struct ms_elf_loads *out);
void ms_elf_loads_release(struct ms_elf_loads *l);
/*
 * Whether the file holds code: a PT_LOAD segment with PF_X has bytes in
 * the file. False for a debug file made by objcopy --only-keep-debug or
 * eu-strip -f, whose segments keep their addresses but not their bytes
 * (nor their file offsets).
 */
bool ms_elf_has_code(Elf *elf);
/*
 * The virtual address (as symbol tables use) of file offset off:
 * p_vaddr + (off - p_offset) for the segment holding off. False when no
 * segment's file bytes hold it.
 */
bool ms_elf_loads_vaddr(const struct ms_elf_loads *l, uint64_t off, uint64_t *vaddr);

/* An open ELF file. */
struct ms_elf_file {
	int fd;
	Elf *elf;
	struct stat st;
	uint32_t build_id_len;
	uint8_t build_id[MS_BUILD_ID_MAX];
};

/*
 * The largest module or debug file opened: 64 GiB (the largest debug
 * files known, a browser's, are a few GiB); anything larger is refused.
 */
#define MS_ELF_FILE_MAX ((uint64_t)1 << 36)

/*
 * Open path as an ELF file and read its build id. Only a regular file of
 * at most MS_ELF_FILE_MAX bytes is opened (a link to one is followed; a
 * FIFO or device is refused without blocking). Returns MS_SYM_OK,
 * MS_SYM_NO_FILE (cannot open, or not such a file) or MS_SYM_BAD_ELF (not
 * an ELF file); f is usable only after MS_SYM_OK.
 */
int ms_elf_file_open(struct ms_elf_file *f, const char *path);
/*
 * The same for a file the caller opened (ms_open_regular(), util/safeopen.h):
 * f owns fd from now on, whatever the result.
 */
int ms_elf_file_open_fd(struct ms_elf_file *f, int fd);
void ms_elf_file_close(struct ms_elf_file *f);
/*
 * Whether the open file f is module m by the identity rule above:
 * MS_SYM_OK or MS_SYM_IDENTITY.
 */
int ms_elf_file_is_module(const struct ms_elf_file *f, const struct ms_module *m);
/* Open path and check it is m: MS_SYM_OK or the reason it is not usable. */
int ms_elf_file_open_module(struct ms_elf_file *f, const char *path, const struct ms_module *m);
/*
 * Open the len bytes at image (an ELF file's image in memory, such as the
 * vdso's from the stream; the caller keeps it until the close) and read its
 * build id. No descriptor: fd is -1 and st is zero but for st_size.
 * Returns MS_SYM_OK, or MS_SYM_BAD_ELF when the bytes are not an ELF file.
 * libelf checks every header, section and segment against len, so a
 * truncated or corrupt image fails lookups, it is never read past.
 */
int ms_elf_memory_open(struct ms_elf_file *f, void *image, size_t len);

/* Modification time as ms-unwind records it: nanoseconds since the epoch. */
uint64_t ms_stat_mtime_ns(const struct stat *st);

#endif

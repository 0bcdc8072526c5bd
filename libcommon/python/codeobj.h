/*
 * One code object of a live CPython process, read by its address and
 * proved before anything in it is believed (what ms-collect writes as a
 * PY_CODE record, stream/records.h): its ob_type is the layout's code
 * type, its co_linetable pointer is the stamp the BPF walker read beside
 * the address (so the object was not freed and replaced since), its
 * qualified name and file are str objects (proved by their type) of at
 * most MS_PY_STR_MAX characters, and its locations table a bytes object.
 *
 * The process runs on: a read that fails is UNREADABLE (freed and
 * unmapped, or the process is gone); memory that reads but is not what
 * the layout says is INVALID. A table longer than
 * MS_PY_LINETABLE_STREAM_MAX is not copied: the code is named, NO_LINES.
 * Every read is all or nothing (pymem.h) and counted in bytes.
 */
#ifndef MS_PYTHON_CODEOBJ_H
#define MS_PYTHON_CODEOBJ_H
#include <stdint.h>
#include <sys/types.h>
#include "python/layout.h"
#include "python/walk.h"
#include "stream/records.h"

/* UTF-8 of one name at most (4 bytes a character) and its NUL. */
#define MS_PY_CODE_STR_BYTES (4 * MS_PY_STR_MAX + 1)

/* What one read found: big (some 74 KiB), so kept and reused by the caller. */
struct ms_py_code_info {
	uint32_t status;		/* enum ms_py_code_status (stream/records.h) */
	char reason[200];		/* what made it not OK, with the addresses */
	char qualname[MS_PY_CODE_STR_BYTES];
	char file[MS_PY_CODE_STR_BYTES];
	uint32_t qualname_len, file_len;
	int32_t firstlineno;
	uint64_t code_start;		/* code + co_code_adaptive */
	uint32_t linetable_len;		/* of linetable; 0 unless status is OK */
	uint64_t bytes;			/* read from the process by this call */
	uint8_t linetable[MS_PY_LINETABLE_STREAM_MAX];
};

/*
 * Read and prove the code object at code in process pid through layout l,
 * whose co_linetable must be stamp. Fills *out (status and, unless OK,
 * reason); returns its status. The names are filled for OK and NO_LINES.
 */
uint32_t ms_py_code_read(pid_t pid, const struct ms_py_layout *l, uint64_t code, uint64_t stamp,
			 struct ms_py_code_info *out);

#endif

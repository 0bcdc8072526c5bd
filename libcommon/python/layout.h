/*
 * Where a CPython process keeps what a frame walker reads: the
 * interpreter's module, its version, the address of _PyRuntime and the
 * offset of every field the walker follows. The layout is a plain struct
 * of numbers, so that a BPF program can later get it in a map.
 *
 * Supported: CPython 3.11, 3.12 and 3.13 on x86-64 (the versions with
 * _PyInterpreterFrame and the 3.11+ locations table). The offsets come
 *  - on 3.13+, from _Py_DebugOffsets at the start of _PyRuntime (its
 *    cookie, version and sizes checked, py_debug_offsets.c);
 *  - on 3.11 and 3.12, from a table per minor version, checked against
 *    the interpreter's DWARF when its module or its debug file (found by
 *    build id) carries DWARF, and refused when any field differs.
 * The version is read from the module (Py_Version in the process), never
 * from a path.
 */
#ifndef MS_PYTHON_LAYOUT_H
#define MS_PYTHON_LAYOUT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <limits.h>

/* Offsets in bytes of the fields a walker reads. */
struct ms_py_offsets {
	uint32_t rt_interp_head;	/* _PyRuntime.interpreters.head */
	uint32_t is_next;		/* PyInterpreterState.next */
	uint32_t is_threads_head;	/* PyInterpreterState.threads.head */
	uint32_t ts_next;		/* PyThreadState.next */
	uint32_t ts_native_tid;		/* PyThreadState.native_thread_id */
	uint32_t ts_frame;		/* 3.11/3.12: .cframe; 3.13: .current_frame */
	int32_t cf_current_frame;	/* _PyCFrame.current_frame; -1 on 3.13 (no cframe) */
	uint32_t fr_previous;		/* _PyInterpreterFrame.previous */
	uint32_t fr_code;		/* .f_code (3.11/3.12), .f_executable (3.13) */
	uint32_t fr_instr;		/* .prev_instr (3.11/3.12), .instr_ptr (3.13) */
	uint32_t fr_owner;		/* .owner (one byte) */
	int32_t owner_cstack;		/* FRAME_OWNED_BY_CSTACK; -1 on 3.11 (none) */
	uint32_t co_filename, co_name, co_qualname;
	uint32_t co_firstlineno;	/* int */
	uint32_t co_linetable;		/* bytes object */
	uint32_t co_code_adaptive;	/* the code units start here, in the object */
	uint32_t ob_type;		/* PyObject.ob_type */
	uint32_t uni_length, uni_state;	/* PyASCIIObject.length, .state (4 bytes) */
	uint32_t uni_ascii_size;	/* sizeof(PyASCIIObject): compact ASCII data */
	uint32_t uni_compact_size;	/* sizeof(PyCompactUnicodeObject): other kinds */
	uint32_t bytes_size, bytes_sval;	/* PyBytesObject.ob_size, .ob_sval */
	int32_t fr_is_entry;		/* 3.11's _PyInterpreterFrame.is_entry (a byte); -1 on 3.12+ */
	/*
	 * The GIL (struct _gil_runtime_state): 3.11 embeds it in _PyRuntime
	 * (.ceval.gil, gil_in_runtime); 3.12+ point to it from each
	 * interpreter (.ceval.gil, gil_ptr_in_interp). -1 where the version
	 * has none; all four -1 when nothing proves where it is.
	 */
	int32_t gil_in_runtime, gil_ptr_in_interp;
	int32_t gil_locked;		/* .locked (an int) */
	int32_t gil_holder;		/* .last_holder (a thread state pointer) */
};

/* Where the offsets came from. */
enum ms_py_source {
	MS_PY_SRC_DEBUG_OFFSETS = 1,	/* 3.13+: _Py_DebugOffsets */
	MS_PY_SRC_TABLE_DWARF,		/* 3.11/3.12 table, checked against DWARF */
	MS_PY_SRC_TABLE,		/* 3.11/3.12 table, no DWARF to check it */
};
const char *ms_py_source_name(enum ms_py_source s);

struct ms_py_layout {
	uint32_t version_hex;		/* PY_VERSION_HEX, e.g. 0x030b02f0 */
	uint8_t major, minor;
	enum ms_py_source source;
	uint64_t runtime;		/* &_PyRuntime in the process */
	/* The type objects, in the process: an object is proved by its ob_type. */
	uint64_t code_type, unicode_type, bytes_type;
	struct ms_py_offsets off;
	uint64_t bias;			/* load bias of the module */
	char module[PATH_MAX];		/* the module's path as the process maps it */
};

/* The largest offset a layout may name: the structures are a few KiB. */
#define MS_PY_OFFSET_MAX 65536u

/*
 * The checked table for 3.11 or 3.12 (minor 11 or 12): 0, or -1 for
 * another version (no table).
 */
int ms_py_table(unsigned minor, struct ms_py_offsets *out);

/*
 * Every offset of o is below MS_PY_OFFSET_MAX and the unicode sizes are
 * ordered (ascii size >= state + 4, compact size >= ascii size). Returns
 * NULL, or what is wrong.
 */
const char *ms_py_offsets_check(const struct ms_py_offsets *o);

/*
 * Fill l for process pid: find the interpreter's module in its maps
 * (a file named python3.X or libpython3.X*.so*, proved the mapped file
 * by device and inode), its symbols, its version, and the offsets.
 * Returns 0, or -1 with the reason in err (what failed, on which file,
 * what to do): no interpreter mapped, unsupported version, a check failed.
 */
int ms_py_layout_find(pid_t pid, struct ms_py_layout *l, char *err, size_t errlen);

#endif

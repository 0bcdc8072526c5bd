/*
 * A 3.11/3.12 offsets table checked against DWARF (pydwarf.h). One pass
 * over the top-level entries of every unit; each structure is taken from
 * its first definition (declarations skipped), and the pass ends once all
 * are found.
 */
#include <stdio.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <dwarf.h>
#include "python/pydwarf.h"

/*
 * A field: the structure (struct or typedef name), a member path ("" for
 * its size), the minor versions whose table has it (bit minor - 11).
 */
struct want {
	const char *type, *path;
	size_t field;	/* offsetof in struct ms_py_offsets */
	unsigned minors;
};
#define V11 1u
#define V12 2u
#define W(t, p, m) { t, p, offsetof(struct ms_py_offsets, m), V11 | V12 }
#define WV(t, p, m, v) { t, p, offsetof(struct ms_py_offsets, m), v }
static const struct want wants[] = {
	W("pyruntimestate", "interpreters.head", rt_interp_head),
	W("_is", "next", is_next), W("_is", "threads.head", is_threads_head),
	W("_ts", "next", ts_next), W("_ts", "native_thread_id", ts_native_tid),
	W("_ts", "cframe", ts_frame),
	W("_PyCFrame", "current_frame", cf_current_frame),
	W("_PyInterpreterFrame", "previous", fr_previous), W("_PyInterpreterFrame", "f_code", fr_code),
	W("_PyInterpreterFrame", "prev_instr", fr_instr), W("_PyInterpreterFrame", "owner", fr_owner),
	W("PyCodeObject", "co_filename", co_filename), W("PyCodeObject", "co_name", co_name),
	W("PyCodeObject", "co_qualname", co_qualname),
	W("PyCodeObject", "co_firstlineno", co_firstlineno),
	W("PyCodeObject", "co_linetable", co_linetable),
	W("PyCodeObject", "co_code_adaptive", co_code_adaptive),
	W("_object", "ob_type", ob_type),
	W("PyASCIIObject", "length", uni_length), W("PyASCIIObject", "state", uni_state),
	W("PyASCIIObject", "", uni_ascii_size), W("PyCompactUnicodeObject", "", uni_compact_size),
	W("PyBytesObject", "ob_base.ob_size", bytes_size), W("PyBytesObject", "ob_sval", bytes_sval),
	/* what the BPF walker reads besides */
	WV("_PyInterpreterFrame", "is_entry", fr_is_entry, V11),
	WV("pyruntimestate", "ceval.gil", gil_in_runtime, V11),
	WV("_is", "ceval.gil", gil_ptr_in_interp, V12),
	WV("_gil_runtime_state", "locked", gil_locked, V11 | V12),
	WV("_gil_runtime_state", "last_holder", gil_holder, V11 | V12),
};
#undef W
#undef WV
#define N_WANTS (sizeof(wants) / sizeof(wants[0]))

/* Strip typedefs and qualifiers down to a structure; false when it is none. */
static bool to_struct(Dwarf_Die *die)
{
	for (int depth = 0; depth < 16; depth++) {
		int tag = dwarf_tag(die);
		if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type)
			return !dwarf_hasattr(die, DW_AT_declaration);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
			return false;
		Dwarf_Attribute a;
		if (!dwarf_attr(die, DW_AT_type, &a) || !dwarf_formref_die(&a, die))
			return false;
	}
	return false;
}

/* The offset of path in structure st (size when path is ""): 0, or -1. */
static int member_offset(Dwarf_Die st, const char *path, uint64_t *out)
{
	uint64_t total = 0;
	Dwarf_Die cur = st;
	if (!*path) {
		Dwarf_Word sz;
		if (dwarf_aggregate_size(&cur, &sz) != 0)
			return -1;
		*out = sz;
		return 0;
	}
	while (*path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		Dwarf_Die m;
		bool found = false;
		if (dwarf_child(&cur, &m) == 0) {
			do {
				const char *name = dwarf_diename(&m);
				if (dwarf_tag(&m) == DW_TAG_member && name && strlen(name) == n &&
				    memcmp(name, path, n) == 0) {
					found = true;
					break;
				}
			} while (dwarf_siblingof(&m, &m) == 0);
		}
		if (!found)
			return -1;
		Dwarf_Attribute a;
		Dwarf_Word off = 0;
		if (dwarf_attr(&m, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &off) != 0)
			return -1;
		total += off;
		path += n;
		if (*path == '.') {
			path++;
			if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &cur) ||
			    !to_struct(&cur))
				return -1;
		}
	}
	*out = total;
	return 0;
}

int ms_py_dwarf_check(int fd, unsigned minor, const struct ms_py_offsets *o, char *err,
		      size_t errlen)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw)
		return 0;
	/* The distinct structure names, each found once. */
	const char *names[N_WANTS];
	Dwarf_Die dies[N_WANTS];
	bool have[N_WANTS];
	size_t n_names = 0, n_have = 0;
	unsigned bit = minor >= 11 && minor <= 13 ? 1u << (minor - 11) : 0;
	for (size_t i = 0; i < N_WANTS; i++) {
		if (!(wants[i].minors & bit))
			continue;
		size_t k = 0;
		while (k < n_names && strcmp(names[k], wants[i].type) != 0)
			k++;
		if (k == n_names) {
			names[n_names] = wants[i].type;
			have[n_names++] = false;
		}
	}
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (n_have < n_names && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &d) == 0) {
			do {
				int tag = dwarf_tag(&d);
				if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef)
					continue;
				const char *name = dwarf_diename(&d);
				if (!name)
					continue;
				for (size_t k = 0; k < n_names; k++) {
					Dwarf_Die s = d;
					if (!have[k] && strcmp(name, names[k]) == 0 && to_struct(&s)) {
						dies[k] = s;
						have[k] = true;
						n_have++;
					}
				}
			} while (n_have < n_names && dwarf_siblingof(&d, &d) == 0);
		}
		off = next;
	}
	int rc = 1;
	if (n_have == 0) {
		rc = 0;
		goto out;
	}
	for (size_t i = 0; i < N_WANTS; i++) {
		if (!(wants[i].minors & bit))
			continue;
		size_t k = 0;
		while (strcmp(names[k], wants[i].type) != 0)
			k++;
		int32_t want;
		memcpy(&want, (const char *)o + wants[i].field, sizeof(want));
		uint64_t got;
		if (!have[k] || member_offset(dies[k], wants[i].path, &got) < 0) {
			snprintf(err, errlen, "its DWARF has no %s%s%s (the table for 3.%u does not fit this build)",
				 wants[i].type, *wants[i].path ? "." : "", wants[i].path, minor);
			rc = -1;
			goto out;
		}
		if (got != (uint64_t)(int64_t)want) {
			snprintf(err, errlen,
				 "its DWARF puts %s%s%s at %llu where the table for 3.%u has %d (this build differs)",
				 wants[i].type, *wants[i].path ? "." : "", wants[i].path,
				 (unsigned long long)got, minor, (int)want);
			rc = -1;
			goto out;
		}
	}
out:
	dwarf_end(dw);
	return rc;
}

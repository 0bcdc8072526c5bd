/*
 * Unit tests over ELF files: the files built next to the test binary
 * (data/NAME, ../fixtures/NAME), a file's .text range and a symbol's value.
 * Include after <cmocka.h>.
 */
#ifndef MS_TESTS_ELF_HELPERS_H
#define MS_TESTS_ELF_HELPERS_H

#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elf/elffile.h"
#include "elf-map.h"

/* The path of SUB/NAME from the folder of this test binary; the last four stay valid. */
static inline const char *beside_test(const char *sub, const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int next;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *out = buf[next++ & 3];

	assert_true(n > 0);
	exe[n] = '\0';
	snprintf(out, PATH_MAX + 64, "%s/%s/%s", dirname(exe), sub, name);
	return out;
}

/* The test data built next to this test binary: data/NAME. */
static inline const char *data_path(const char *name)
{
	return beside_test("data", name);
}

/* The .text of the file at path: [*lo, *hi), which must not be empty. */
static inline void text_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	struct ms_elf_file f;
	GElf_Shdr sh;

	*lo = *hi = 0;
	assert_int_equal(ms_elf_file_open(&f, path), MS_SYM_OK);
	if (ms_elf_section(f.elf, ".text", &sh)) {
		*lo = sh.sh_addr;
		*hi = sh.sh_addr + sh.sh_size;
	}
	ms_elf_file_close(&f);
	assert_true(*hi > *lo);
}

/* The value of symbol name in data/FILE, from its .symtab; fails the test when absent. */
static inline uint64_t sym_in(const char *file, const char *name)
{
	struct ms_elf_file f;
	Elf_Scn *scn = NULL;
	uint64_t value = 0;
	bool found = false;

	assert_int_equal(ms_elf_file_open(&f, data_path(file)), MS_SYM_OK);
	while ((scn = elf_nextscn(f.elf, scn)) && !found) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(f.elf, sh.sh_link, s.st_name)) &&
			    !strcmp(n, name)) {
				value = s.st_value;
				found = true;
				break;
			}
		}
	}
	ms_elf_file_close(&f);
	if (!found)
		fail_msg("no symbol '%s' in %s", name, file);
	return value;
}

/* Where symbol name of data/FILE runs when the file is mapped whole at base. */
static inline uint64_t pc_mapped_at(const char *file, uint64_t base, const char *name)
{
	struct ms_elf_file f;
	struct ms_elf_loads l;
	uint64_t pc;

	assert_int_equal(ms_elf_file_open(&f, data_path(file)), MS_SYM_OK);
	assert_int_equal(ms_elf_loads_read(f.elf, &l), 0);
	pc = elf_pc_at(f.elf, &l, base, name);
	ms_elf_loads_release(&l);
	ms_elf_file_close(&f);
	assert_true(pc != 0);
	return pc;
}

#endif

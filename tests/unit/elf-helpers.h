/*
 * Unit tests over ELF files: the files built next to the test binary
 * (data/NAME, ../fixtures/NAME), and a file's .text range. Include after <cmocka.h>.
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
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*lo = *hi = 0;
	assert_int_equal(ms_elf_file_open(&f, path), MS_SYM_OK);
	assert_int_equal(elf_getshdrstrndx(f.elf, &shstrndx), 0);
	while ((scn = elf_nextscn(f.elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(f.elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".text")) {
			*lo = sh.sh_addr;
			*hi = sh.sh_addr + sh.sh_size;
		}
	}
	ms_elf_file_close(&f);
	assert_true(*hi > *lo);
}

#endif

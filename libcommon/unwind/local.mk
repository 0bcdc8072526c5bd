# libcommon/unwind: address spaces, modules and stacks (ms-unwind).
libcommon_a_SOURCES += \
	libcommon/unwind/addrspace.c libcommon/unwind/addrspace.h \
	libcommon/unwind/elffile.c libcommon/unwind/elffile.h \
	libcommon/unwind/unwind.c libcommon/unwind/unwind.h \
	libcommon/unwind/fp.c libcommon/unwind/stage.c

bin_PROGRAMS += ms-unwind
ms_unwind_SOURCES = cmd/ms-unwind.c
ms_unwind_LDADD = $(MS_LIBS)
man_MANS += man/ms-unwind.1

UNIT_TESTS += tests/unit/unwind-test
tests_unit_unwind_test_SOURCES = tests/unit/unwind-test.c
tests_unit_unwind_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_unwind_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# A tiny ELF with a known build id for the unwind and symbols unit tests,
# and a stripped copy that names its functions in .dynsym only.
TINY_CFLAGS = -O1 -fno-inline -fno-omit-frame-pointer
check_PROGRAMS += tests/unit/data/elf-tiny tests/unit/data/elf-tiny-stripped
tests_unit_data_elf_tiny_SOURCES = tests/unit/data/tiny.c
tests_unit_data_elf_tiny_CFLAGS = $(TINY_CFLAGS)
tests_unit_data_elf_tiny_LDFLAGS = -Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567
tests_unit_data_elf_tiny_stripped_SOURCES = tests/unit/data/tiny.c
tests_unit_data_elf_tiny_stripped_CFLAGS = $(TINY_CFLAGS)
tests_unit_data_elf_tiny_stripped_LDFLAGS = -s -rdynamic \
	-Wl,--build-id=0x0123456789abcdef0123456789abcdef01234589

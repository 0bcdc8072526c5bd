# libcommon/elf: ELF files on disk and in memory: opening them, sections,
# build ids, .gnu_debuglink, the one finder of separate debug files that
# ms-unwind and ms-symbolize share, and the cache of decompressed debug
# files.
libcommon_a_SOURCES += \
	libcommon/elf/elffile.c libcommon/elf/elffile.h \
	libcommon/elf/debugfind.c libcommon/elf/debugfind.h \
	libcommon/elf/dcache.c libcommon/elf/dcache.h

# The one debug-file search, as both stages use it: a module with several
# candidate debug files, where ms-unwind (its CFI) and ms-symbolize (its
# names) must read the same one; a module whose file is gone or another,
# unwound and named from the file its build id proves. The module is
# tests/unit/data/pick.c built with one build id in builds whose name and
# CFI differ: pick (stripped, .gnu_debuglink pick.debug), its debug files
# pick-b and pick-c (each with DWARF), pick-b.debug (a debug-only copy of
# pick-b: no code), and pick-wrong (another build id).
UNIT_TESTS += tests/unit/debugfind-test
tests_unit_debugfind_test_SOURCES = tests/unit/debugfind-test.c tests/unit/elf-helpers.h \
	tests/unit/tmpdir.h
tests_unit_debugfind_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_debugfind_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_unit_debugfind_test_DEPENDENCIES = tests/unit/data/pick \
	tests/unit/data/pick-b$(EXEEXT) tests/unit/data/pick-c$(EXEEXT) \
	tests/unit/data/pick-b.debug tests/unit/data/pick-wrong$(EXEEXT)

PICK_CFLAGS = -fPIC -g
PICK_LINK = -shared -nostdlib -Wl,--build-id=0x5e1ec7ed0000000000000000000000000000
check_PROGRAMS += tests/unit/data/pick-a tests/unit/data/pick-b tests/unit/data/pick-c \
	tests/unit/data/pick-wrong
tests_unit_data_pick_a_SOURCES = tests/unit/data/pick.c
tests_unit_data_pick_a_CFLAGS = $(PICK_CFLAGS) -DNAME=pick_a -DCFA=16
tests_unit_data_pick_a_LDFLAGS = $(PICK_LINK)0001
tests_unit_data_pick_b_SOURCES = tests/unit/data/pick.c
tests_unit_data_pick_b_CFLAGS = $(PICK_CFLAGS) -DNAME=pick_b -DCFA=32
tests_unit_data_pick_b_LDFLAGS = $(PICK_LINK)0001
tests_unit_data_pick_c_SOURCES = tests/unit/data/pick.c
tests_unit_data_pick_c_CFLAGS = $(PICK_CFLAGS) -DNAME=pick_c -DCFA=48
tests_unit_data_pick_c_LDFLAGS = $(PICK_LINK)0001
tests_unit_data_pick_wrong_SOURCES = tests/unit/data/pick.c
tests_unit_data_pick_wrong_CFLAGS = $(PICK_CFLAGS) -DNAME=pick_wrong -DCFA=64
tests_unit_data_pick_wrong_LDFLAGS = $(PICK_LINK)0002
# objcopy reads the file a debuglink names: pick.debug exists while it runs.
tests/unit/data/pick: tests/unit/data/pick-a$(EXEEXT)
	$(AM_V_GEN)mkdir -p $@.tmp.d && cp $< $@.tmp.d/pick.debug && \
	$(OBJCOPY) --strip-all --add-gnu-debuglink=$@.tmp.d/pick.debug $< $@ && \
	rm -rf $@.tmp.d
tests/unit/data/pick-b.debug: tests/unit/data/pick-b$(EXEEXT)
	$(AM_V_GEN)$(OBJCOPY) --only-keep-debug $< $@
CLEANFILES += tests/unit/data/pick tests/unit/data/pick-b.debug

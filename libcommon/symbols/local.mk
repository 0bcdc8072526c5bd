# libcommon/symbols: function names, inline chains and source lines for
# stack frames (ms-symbolize).
libcommon_a_SOURCES += \
	libcommon/symbols/symtab.c libcommon/symbols/symtab.h \
	libcommon/symbols/kcache.c libcommon/symbols/kcache.h \
	libcommon/symbols/symfile.c libcommon/symbols/symfile.h \
	libcommon/symbols/symcache.c libcommon/symbols/symcache.h \
	libcommon/symbols/symbolize.c libcommon/symbols/symbolize.h \
	libcommon/symbols/stage.c libcommon/symbols/batch.c

bin_PROGRAMS += ms-symbolize
ms_symbolize_SOURCES = cmd/ms-symbolize.c
ms_symbolize_LDADD = $(STAGE_LIBS)
ms_symbolize_LDFLAGS = $(STAGE_LINK)
man_MANS += man/ms-symbolize.1

# debuginfod for a static ms-symbolize: a dynamic program that loads
# libdebuginfod.so.1 (libcommon/elf/debugfind.c runs it).
bin_PROGRAMS += ms-debuginfod-find
ms_debuginfod_find_SOURCES = cmd/ms-debuginfod-find.c
ms_debuginfod_find_LDADD = -ldl
man_MANS += man/ms-debuginfod-find.1

UNIT_TESTS += tests/unit/symbols-test
tests_unit_symbols_test_SOURCES = tests/unit/symbols-test.c tests/unit/elf-helpers.h
tests_unit_symbols_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_symbols_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
# The files it reads, so that `make tests/unit/symbols-test` alone makes them.
EXTRA_tests_unit_symbols_test_DEPENDENCIES = tests/unit/data/elf-tiny$(EXEEXT) \
	tests/unit/data/elf-tiny-stripped$(EXEEXT) tests/fixtures/inline$(EXEEXT) \
	tests/fixtures/cxxtemplate$(EXEEXT)

UNIT_TESTS += tests/unit/symbols-dwarf-test
tests_unit_symbols_dwarf_test_SOURCES = tests/unit/symbols-dwarf-test.c
tests_unit_symbols_dwarf_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_symbols_dwarf_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_unit_symbols_dwarf_test_DEPENDENCIES = tests/fixtures/inline$(EXEEXT) \
	tests/unit/data/elf-tiny-stripped$(EXEEXT)

UNIT_TESTS += tests/unit/kcache-test
tests_unit_kcache_test_SOURCES = tests/unit/kcache-test.c tests/unit/tmpdir.h
tests_unit_kcache_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_kcache_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_unit_kcache_test_DEPENDENCIES = tests/unit/data/elf-tiny$(EXEEXT)

UNIT_TESTS += tests/unit/symbols-index-test
tests_unit_symbols_index_test_SOURCES = tests/unit/symbols-index-test.c tests/unit/symbols-index-aux.c
# -g whatever the build's flags: the test reads its own two units' DWARF.
tests_unit_symbols_index_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -g
tests_unit_symbols_index_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/symbols-die-test
tests_unit_symbols_die_test_SOURCES = tests/unit/symbols-die-test.c tests/unit/dwarf-bytes.h
tests_unit_symbols_die_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_symbols_die_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/symbols-ehframe-test
tests_unit_symbols_ehframe_test_SOURCES = tests/unit/symbols-ehframe-test.c
tests_unit_symbols_ehframe_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_symbols_ehframe_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/symcache-test
tests_unit_symcache_test_SOURCES = tests/unit/symcache-test.c tests/unit/tmpdir.h
tests_unit_symcache_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_symcache_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

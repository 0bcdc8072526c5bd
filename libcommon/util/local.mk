# libcommon/util: the lowest layer, generic blocks every other layer may
# use: messages and exit codes, banned functions, growth, a hash index,
# CRCs, a radix sort, a string pool, text and JSON writers, demangling,
# output publication, opening files others named (safeopen), the cache
# folder, its layout and the header every cache file starts with, the
# running program's build id, running stages as a pipeline, and the
# progress line of long work.
libcommon_a_SOURCES += \
	libcommon/util/banned.h \
	libcommon/util/bits.h \
	libcommon/util/error.c libcommon/util/error.h \
	libcommon/util/input.c libcommon/util/input.h \
	libcommon/util/safeopen.c libcommon/util/safeopen.h \
	libcommon/util/selfid.c libcommon/util/selfid.h \
	libcommon/util/publish.c libcommon/util/publish.h \
	libcommon/util/cachedir.c libcommon/util/cachedir.h \
	libcommon/util/cacheclean.c \
	libcommon/util/cachelayout.c libcommon/util/cachelayout.h \
	libcommon/util/cachefile.c libcommon/util/cachefile.h \
	libcommon/util/prefault.c libcommon/util/prefault.h \
	libcommon/util/mapguard.c libcommon/util/mapguard.h \
	libcommon/util/grow.c libcommon/util/grow.h \
	libcommon/util/hashindex.c libcommon/util/hashindex.h \
	libcommon/util/pairmap.c libcommon/util/pairmap.h \
	libcommon/util/crc32c.c libcommon/util/crc32c.h \
	libcommon/util/radix.c libcommon/util/radix.h \
	libcommon/util/strpool.c libcommon/util/strpool.h \
	libcommon/util/demangle.c libcommon/util/demangle.h \
	libcommon/util/text.c libcommon/util/text.h \
	libcommon/util/json.c libcommon/util/json.h \
	libcommon/util/progress.c libcommon/util/progress.h \
	libcommon/util/pipeline.c libcommon/util/pipeline.h

UNIT_TESTS += tests/unit/util-test
tests_unit_util_test_SOURCES = tests/unit/util-test.c
tests_unit_util_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_util_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/progress-test
tests_unit_progress_test_SOURCES = tests/unit/progress-test.c
tests_unit_progress_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_progress_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/safeopen-test
tests_unit_safeopen_test_SOURCES = tests/unit/safeopen-test.c tests/unit/tmpdir.h
tests_unit_safeopen_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_safeopen_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/cacheclean-test
tests_unit_cacheclean_test_SOURCES = tests/unit/cacheclean-test.c tests/unit/tmpdir.h \
	tests/unit/stderr-capture.h
tests_unit_cacheclean_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cacheclean_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/cachefile-test
tests_unit_cachefile_test_SOURCES = tests/unit/cachefile-test.c
tests_unit_cachefile_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cachefile_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

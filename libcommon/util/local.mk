# libcommon/util: messages, exit codes, banned functions.
libcommon_a_SOURCES += \
	libcommon/util/banned.h \
	libcommon/util/bits.h \
	libcommon/util/error.c libcommon/util/error.h \
	libcommon/util/input.c libcommon/util/input.h \
	libcommon/util/publish.c libcommon/util/publish.h \
	libcommon/util/cachedir.c libcommon/util/cachedir.h \
	libcommon/util/cacheclean.c \
	libcommon/util/prefault.c libcommon/util/prefault.h \
	libcommon/util/grow.c libcommon/util/grow.h

UNIT_TESTS += tests/unit/util-test
tests_unit_util_test_SOURCES = tests/unit/util-test.c
tests_unit_util_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_util_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/cacheclean-test
tests_unit_cacheclean_test_SOURCES = tests/unit/cacheclean-test.c tests/unit/tmpdir.h
tests_unit_cacheclean_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cacheclean_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

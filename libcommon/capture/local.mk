# libcommon/capture: sources, programs, unit tests and man pages of this layer.
libcommon_a_SOURCES += \
	libcommon/capture/capture.c libcommon/capture/capture.h \
	libcommon/capture/funcs.c libcommon/capture/funcs.h \
	libcommon/capture/builder.c libcommon/capture/builder.h \
	libcommon/capture/intervals.c libcommon/capture/intervals.h \
	libcommon/capture/convert.h libcommon/capture/stage.c libcommon/capture/dump.c \
	libcommon/capture/format.h libcommon/capture/internal.h \
	libcommon/capture/reader.c libcommon/capture/writer.c \
	libcommon/capture/weight.c libcommon/capture/weight.h \
	libcommon/capture/look.c libcommon/capture/look.h \
	libcommon/capture/labels.c libcommon/capture/labels.h

# Section checksums are zlib's crc32 (liblz4 does not export its xxhash).
AM_CFLAGS += $(ZLIB_CFLAGS)
MS_LIBS += $(ZLIB_LIBS)

bin_PROGRAMS += ms-capture
ms_capture_SOURCES = cmd/ms-capture.c
ms_capture_LDADD = $(STAGE_LIBS)
ms_capture_LDFLAGS = $(STAGE_LINK)
man_MANS += man/ms-capture.1 man/microscope-capture.5

UNIT_TESTS += tests/unit/capture-test
tests_unit_capture_test_SOURCES = tests/unit/capture-test.c tests/unit/stderr-capture.h
tests_unit_capture_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
# The committed captures it checks are read from the source tree.
tests_unit_capture_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_SRCDIR='"$(abs_top_srcdir)"'

# Writes synthetic streams for tests/0600-ms-capture.bats.
check_PROGRAMS += tests/unit/mkstream
tests_unit_mkstream_SOURCES = tests/unit/mkstream.c
tests_unit_mkstream_LDADD = $(MS_LIBS)

# Prints a capture's (or a dumped stream's) off-CPU intervals, for the bats tests.
check_PROGRAMS += tests/unit/capintervals
tests_unit_capintervals_SOURCES = tests/unit/capintervals.c
tests_unit_capintervals_LDADD = $(MS_LIBS)

# Prints a capture's (or a dumped stream's) perf-map modules and settings, for the bats tests.
check_PROGRAMS += tests/unit/capjit
tests_unit_capjit_SOURCES = tests/unit/capjit.c
tests_unit_capjit_LDADD = $(MS_LIBS)

# Prints a capture's loss rows and totals as JSON, for the bats tests.
check_PROGRAMS += tests/unit/caplosses
tests_unit_caplosses_SOURCES = tests/unit/caplosses.c
tests_unit_caplosses_LDADD = $(MS_LIBS)

# The capture reader's fuzz corpus (tests/fuzz/corpus/capture), replayed
# through its fuzz target in `make check`.
UNIT_TESTS += tests/unit/capture-corpus-test
tests_unit_capture_corpus_test_SOURCES = tests/unit/capture-corpus-test.c tests/unit/corpus-replay.h \
	tests/fuzz/fuzz.h tests/fuzz/fuzz-capture.c
tests_unit_capture_corpus_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_FUZZ_REPLAY \
	-DMS_FUZZ_CORPUS='"$(abs_top_srcdir)/tests/fuzz/corpus"'
tests_unit_capture_corpus_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_capture_corpus_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# The off-CPU pairing (intervals.h) on hand-made sequences.
UNIT_TESTS += tests/unit/intervals-test
tests_unit_intervals_test_SOURCES = tests/unit/intervals-test.c
tests_unit_intervals_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# Capture 1.8's tasks and waits: builder, reader refusals, dump round trip.
UNIT_TESTS += tests/unit/captasks-test
tests_unit_captasks_test_SOURCES = tests/unit/captasks-test.c tests/unit/stderr-capture.h
tests_unit_captasks_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS) $(ZLIB_LIBS)
tests_unit_captasks_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# Prints a capture's tasks and waits, for tests/0777-snapshot-capture.bats.
check_PROGRAMS += tests/unit/captasks
tests_unit_captasks_SOURCES = tests/unit/captasks.c
tests_unit_captasks_LDADD = $(MS_LIBS)

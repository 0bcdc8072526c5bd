# libcommon/jit, the perf map part: the parser and table of functions of
# /tmp/perf-PID.map (perfmap.h), its bounded read from a file descriptor
# (perfmapread.h), and when to read a JIT's descriptions again (throttle.h).
libcommon_a_SOURCES += \
	libcommon/jit/perfmap.c libcommon/jit/perfmap.h \
	libcommon/jit/perfmapidx.c \
	libcommon/jit/perfmapread.c libcommon/jit/perfmapread.h \
	libcommon/jit/throttle.c libcommon/jit/throttle.h

# Hand-written maps, a real one (python3.12 -X perf), the index against a
# brute-force answer, the code budget, the staleness rule and the throttle.
UNIT_TESTS += tests/unit/perfmap-test
tests_unit_perfmap_test_SOURCES = tests/unit/perfmap-test.c
tests_unit_perfmap_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_perfmap_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_perfmap_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_DIST += tests/unit/data/perf-python312.map

# The fuzz corpus of the perf map reader (tests/fuzz/corpus/perfmap),
# replayed through its fuzz target in `make check`.
UNIT_TESTS += tests/unit/perfmap-corpus-test
tests_unit_perfmap_corpus_test_SOURCES = tests/unit/perfmap-corpus-test.c \
	tests/unit/corpus-replay.h tests/fuzz/fuzz.h tests/fuzz/fuzz-perfmap.c
tests_unit_perfmap_corpus_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_FUZZ_REPLAY \
	-DMS_FUZZ_CORPUS='"$(abs_top_srcdir)/tests/fuzz/corpus"'
tests_unit_perfmap_corpus_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_perfmap_corpus_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

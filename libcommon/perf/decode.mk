# libcommon/perf: the decoder of kernel records, time ordering and ms-decode.
libcommon_a_SOURCES += \
	libcommon/perf/decode.c libcommon/perf/decode.h \
	libcommon/perf/order.c libcommon/perf/order.h \
	libcommon/perf/pypair.c libcommon/perf/pypair.h

bin_PROGRAMS += ms-decode
ms_decode_SOURCES = cmd/ms-decode.c
ms_decode_LDADD = $(STAGE_LIBS)
ms_decode_LDFLAGS = $(STAGE_LINK)
man_MANS += man/ms-decode.1

UNIT_TESTS += tests/unit/decode-test
tests_unit_decode_test_SOURCES = tests/unit/decode-test.c
tests_unit_decode_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_decode_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# The pairing of Python walker records with their samples (perf/pypair.h):
# its rules, and the stage over synthetic rings (tests/unit/pystream.h).
UNIT_TESTS += tests/unit/pypair-test
tests_unit_pypair_test_SOURCES = tests/unit/pypair-test.c tests/unit/pystream.h
tests_unit_pypair_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_pypair_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# The fuzz corpus of the BPF sampler's records and their pairing
# (tests/fuzz/corpus/bpfrecord), replayed through its fuzz target in
# `make check`.
UNIT_TESTS += tests/unit/bpfrecord-corpus-test
tests_unit_bpfrecord_corpus_test_SOURCES = tests/unit/bpfrecord-corpus-test.c \
	tests/unit/corpus-replay.h tests/fuzz/fuzz.h tests/fuzz/fuzz-bpfrecord.c
tests_unit_bpfrecord_corpus_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_FUZZ_REPLAY \
	-DMS_FUZZ_CORPUS='"$(abs_top_srcdir)/tests/fuzz/corpus"'
tests_unit_bpfrecord_corpus_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_bpfrecord_corpus_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# The pairing's cases as an ms-collect stream, and a listing of what
# ms-decode made of it: tests/0765-python-pairing.bats.
check_PROGRAMS += tests/unit/mkpairstream
tests_unit_mkpairstream_SOURCES = tests/unit/mkpairstream.c tests/unit/pystream.h
tests_unit_mkpairstream_LDADD = $(MS_LIBS)

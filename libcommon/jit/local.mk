# libcommon/jit: code that JIT compilers write into anonymous memory: the
# frames of its functions proved from their machine code (prove.h, with
# the Zydis decoder).
libcommon_a_SOURCES += \
	libcommon/jit/prove.c libcommon/jit/prove.h

UNIT_TESTS += tests/unit/prove-test
tests_unit_prove_test_SOURCES = tests/unit/prove-test.c
tests_unit_prove_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_prove_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# The fuzz corpus of the prover (tests/fuzz/corpus/prove), replayed through
# its fuzz target in `make check`.
UNIT_TESTS += tests/unit/prove-corpus-test
tests_unit_prove_corpus_test_SOURCES = tests/unit/prove-corpus-test.c tests/unit/corpus-replay.h \
	tests/fuzz/fuzz.h tests/fuzz/fuzz-prove.c
tests_unit_prove_corpus_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_FUZZ_REPLAY \
	-DMS_FUZZ_CORPUS='"$(abs_top_srcdir)/tests/fuzz/corpus"'
tests_unit_prove_corpus_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_prove_corpus_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# libcommon/jit: code that JIT compilers write into anonymous memory: the
# frames of its functions proved from their machine code (prove.h, with
# the Zydis decoder).
libcommon_a_SOURCES += \
	libcommon/jit/prove.c libcommon/jit/prove.h

UNIT_TESTS += tests/unit/prove-test
tests_unit_prove_test_SOURCES = tests/unit/prove-test.c tests/unit/jit-code.h
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

# The rows of a JIT function proved once (rows.h): rowsprove.c proves
# them with the prover (Zydis), rows.c has what the statically linked
# ms-unwind needs (rules, look-up, the encoding), without Zydis.
libcommon_a_SOURCES += \
	libcommon/jit/rows.c libcommon/jit/rows.h libcommon/jit/rowsprove.c

UNIT_TESTS += tests/unit/rows-test
tests_unit_rows_test_SOURCES = tests/unit/rows-test.c tests/unit/jit-code.h
tests_unit_rows_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_rows_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# Rows decoded and stepped as ms-unwind will, linked without Zydis: the
# link fails if rows.c comes to need the prover.
UNIT_TESTS += tests/unit/rows-static-test
tests_unit_rows_static_test_SOURCES = tests/unit/rows-static-test.c
tests_unit_rows_static_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_rows_static_test_LDADD = $(filter-out $(ZYDIS_LIBS),$(MS_LIBS)) $(CMOCKA_LIBS)

# The fuzz corpus of the row tables (tests/fuzz/corpus/rows), replayed
# through its fuzz target in `make check`.
UNIT_TESTS += tests/unit/rows-corpus-test
tests_unit_rows_corpus_test_SOURCES = tests/unit/rows-corpus-test.c tests/unit/corpus-replay.h \
	tests/fuzz/fuzz.h tests/fuzz/fuzz-rows.c
tests_unit_rows_corpus_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_FUZZ_REPLAY \
	-DMS_FUZZ_CORPUS='"$(abs_top_srcdir)/tests/fuzz/corpus"'
tests_unit_rows_corpus_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_rows_corpus_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

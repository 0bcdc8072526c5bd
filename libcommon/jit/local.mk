# libcommon/jit: code that JIT compilers write into anonymous memory: the
# frames of its functions proved from their machine code (prove.h, with
# the Zydis decoder).
libcommon_a_SOURCES += \
	libcommon/jit/prove.c libcommon/jit/prove.h

UNIT_TESTS += tests/unit/prove-test
tests_unit_prove_test_SOURCES = tests/unit/prove-test.c
tests_unit_prove_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_prove_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)


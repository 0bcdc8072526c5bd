# libcommon/jit, ms-collect's part: the recorder that reads a target's perf
# map when a sample lands in JIT code nothing read names, proves each new
# function's frame from the process's code and writes JIT_FUNC and JIT_READ
# records ahead of the sample (recorder.h); the pure parts apart: the
# anonymous code ranges and the trigger (recorderanon.h), the /proc facts
# and the map's opening (recorderproc.h).
libcommon_a_SOURCES += \
	libcommon/jit/recorder.c libcommon/jit/recorder.h \
	libcommon/jit/recorderanon.c libcommon/jit/recorderanon.h \
	libcommon/jit/recorderproc.c libcommon/jit/recorderproc.h

# The range set against a brute-force model, the trigger over hand-built
# samples, the /proc parsers, and the recorder driven as the collector
# drives it against a child process with its own perf map.
UNIT_TESTS += tests/unit/jit-recorder-test
tests_unit_jit_recorder_test_SOURCES = tests/unit/jit-recorder-test.c tests/unit/jit-code.h
tests_unit_jit_recorder_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_jit_recorder_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# The GDB JIT interface (gdbjit.h: the descriptor, the entry walk, an
# object's sections, the load bias, the diff; gdbjitfind.h: the descriptor
# found in a process's files) and the recorder's part that ships the
# objects (recordergdb.h).
libcommon_a_SOURCES += \
	libcommon/jit/gdbjit.c libcommon/jit/gdbjit.h \
	libcommon/jit/gdbjitfind.c libcommon/jit/gdbjitfind.h \
	libcommon/jit/recordergdb.c libcommon/jit/recordergdb.h

# The pure parts over fake memory and hand-made images, and the recorder
# against a child process registering an object as jitgdb does.
UNIT_TESTS += tests/unit/jit-gdb-test
tests_unit_jit_gdb_test_SOURCES = tests/unit/jit-gdb-test.c
tests_unit_jit_gdb_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_jit_gdb_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# libcommon/python: a runtime reader of CPython processes (3.11-3.13):
# where the interpreter keeps its state and how its structures are laid
# out (layout.h), the pure parsers of its locations tables, strings and
# _Py_DebugOffsets (pyparse.h), a userspace walker of every thread's
# interpreted frames over process_vm_readv (walk.h); for ms-collect a
# reader of one code object by its address (codeobj.h) and the Python
# recorder (pyrecorder.h), which feeds the BPF walker its maps or takes
# thread snapshots (pysnapshot.h); and for
# ms-unwind the code objects and frame keys of PY_CODE records (pycode.h)
# and the splice of Python frames into native stacks (splice.h).
libcommon_a_SOURCES += \
	libcommon/python/bpflayout.c libcommon/python/bpflayout.h \
	libcommon/python/codeobj.c libcommon/python/codeobj.h \
	libcommon/python/pyrecorder.c libcommon/python/pyrecorder.h \
	libcommon/python/pyrecorderint.h libcommon/python/pyrecordercode.c \
	libcommon/python/pyrecorderthreads.c libcommon/python/pyrecorderbpf.c \
	libcommon/python/pysnapshot.c libcommon/python/pysnapshot.h \
	libcommon/python/pysnapshotround.c \
	libcommon/python/layout.c libcommon/python/layout.h \
	libcommon/python/pydwarf.c libcommon/python/pydwarf.h \
	libcommon/python/pymem.c libcommon/python/pymem.h \
	libcommon/python/pyobj.c libcommon/python/pyobj.h \
	libcommon/python/pyparse.c libcommon/python/pyparse.h \
	libcommon/python/pycode.c libcommon/python/pycode.h \
	libcommon/python/labels.c libcommon/python/labels.h \
	libcommon/python/splice.c libcommon/python/splice.h \
	libcommon/python/walk.c libcommon/python/walk.h

UNIT_TESTS += tests/unit/pyparse-test
tests_unit_pyparse_test_SOURCES = tests/unit/pyparse-test.c
tests_unit_pyparse_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_pyparse_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# pywalk PID: each thread's Python stack, outermost first, for
# tests/0750-python-layout.bats.
check_PROGRAMS += tests/unit/pywalk
tests_unit_pywalk_SOURCES = tests/unit/pywalk.c
tests_unit_pywalk_LDADD = $(MS_LIBS)

# The code reader and the recorder against live Pythons (a fake sink).
UNIT_TESTS += tests/unit/pyrecorder-test
tests_unit_pyrecorder_test_SOURCES = tests/unit/pyrecorder-test.c
tests_unit_pyrecorder_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_pyrecorder_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_pyrecorder_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# The snapshot engine's pure parts and the light walker over a fake memory.
UNIT_TESTS += tests/unit/pysnapshot-test
tests_unit_pysnapshot_test_SOURCES = tests/unit/pysnapshot-test.c
tests_unit_pysnapshot_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_pysnapshot_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# ms-unwind's Python pieces: code objects and frame keys over real
# locations tables, and the splice of Python frames into native stacks.
UNIT_TESTS += tests/unit/pycode-test tests/unit/pysplice-test
tests_unit_pycode_test_SOURCES = tests/unit/pycode-test.c
tests_unit_pycode_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_pycode_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_pysplice_test_SOURCES = tests/unit/pysplice-test.c
tests_unit_pysplice_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_pysplice_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# pybpfwalk [--no-threads] [--switches] -- PYTHON ARGS: the BPF walker on
# the real kernel, each record's frames named, for tests/0770-python-walker.bats.
check_PROGRAMS += tests/unit/pybpfwalk
tests_unit_pybpfwalk_SOURCES = tests/unit/pybpfwalk.c
tests_unit_pybpfwalk_LDADD = $(MS_LIBS) $(LIBBPF_LIBS)

UNIT_TESTS += tests/unit/bpflayout-test
tests_unit_bpflayout_test_SOURCES = tests/unit/bpflayout-test.c
tests_unit_bpflayout_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_bpflayout_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# ms-unwind's GIL runs as label spans (python/labels.h), alone and in the stage.
UNIT_TESTS += tests/unit/gil-labels-test
tests_unit_gil_labels_test_SOURCES = tests/unit/gil-labels-test.c
tests_unit_gil_labels_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_gil_labels_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# caplabels < STREAM: its LABEL_SPAN records as text, for tests/0785-python-gil.bats.
check_PROGRAMS += tests/unit/caplabels
tests_unit_caplabels_SOURCES = tests/unit/caplabels.c
tests_unit_caplabels_LDADD = $(MS_LIBS)

# ms-unwind's thread snapshots: TASK_WAIT, STACK_DEF, FRAME records and GIL spans.
UNIT_TESTS += tests/unit/snapshot-unwind-test
tests_unit_snapshot_unwind_test_SOURCES = tests/unit/snapshot-unwind-test.c
tests_unit_snapshot_unwind_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_snapshot_unwind_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

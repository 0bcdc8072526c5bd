# formats: converters between a capture and the formats other tools read
# (pprof, folded stacks, Chrome trace, speedscope), ms-export, and their
# tests and fuzz targets.

# profile.proto becomes C at build time (protoc-c, from protobuf-c-compiler).
PPROF_GEN = formats/pprof/profile.pb-c.c formats/pprof/profile.pb-c.h
BUILT_SOURCES = $(PPROF_GEN)
CLEANFILES += $(PPROF_GEN)
EXTRA_DIST += formats/pprof/profile.proto
$(PPROF_GEN): $(srcdir)/formats/pprof/profile.proto
	$(AM_V_GEN)$(MKDIR_P) formats/pprof && \
	$(PROTOC_C) --proto_path=$(srcdir)/formats/pprof --c_out=formats/pprof \
		$(srcdir)/formats/pprof/profile.proto

AM_CPPFLAGS += -I$(top_builddir)/formats
AM_CFLAGS += $(PROTOBUF_C_CFLAGS)
MS_LIBS += $(PROTOBUF_C_LIBS)

libcommon_a_SOURCES += \
	formats/formats.h formats/internal.h formats/common.c \
	formats/cuts.c formats/rows.c formats/outbuf.c \
	formats/pprof/export.c formats/pprof/import.c formats/pprof/threads.c formats/pprof/threads.h \
	formats/folded/export.c formats/folded/import.c \
	formats/chrome/chrome.h formats/chrome/export.c formats/chrome/events.c \
	formats/chrome/samples.c \
	formats/speedscope/export.c
nodist_libcommon_a_SOURCES = $(PPROF_GEN)

bin_PROGRAMS += ms-export
ms_export_SOURCES = cmd/ms-export.c
ms_export_LDADD = $(STAGE_LIBS)
ms_export_LDFLAGS = $(STAGE_LINK)
man_MANS += man/ms-export.1

UNIT_TESTS += tests/unit/formats-test
tests_unit_formats_test_SOURCES = tests/unit/formats-test.c tests/unit/stderr-capture.h
tests_unit_formats_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_formats_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

UNIT_TESTS += tests/unit/formats-cut-test
tests_unit_formats_cut_test_SOURCES = tests/unit/formats-cut-test.c
tests_unit_formats_cut_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_formats_cut_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

UNIT_TESTS += tests/unit/formats-offcpu-test
tests_unit_formats_offcpu_test_SOURCES = tests/unit/formats-offcpu-test.c tests/unit/stderr-capture.h
tests_unit_formats_offcpu_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_formats_offcpu_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

UNIT_TESTS += tests/unit/formats-size-test
tests_unit_formats_size_test_SOURCES = tests/unit/formats-size-test.c tests/unit/stderr-capture.h
tests_unit_formats_size_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_formats_size_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# Writes synthetic captures for the formats tests and scripts/bench/40-formats.sh.
check_PROGRAMS += tests/unit/formats-mkcapture
tests_unit_formats_mkcapture_SOURCES = tests/unit/formats-mkcapture.c
tests_unit_formats_mkcapture_LDADD = $(MS_LIBS)

# The fuzz corpus, replayed through the fuzz targets in `make check`.
UNIT_TESTS += tests/unit/formats-corpus-test
tests_unit_formats_corpus_test_SOURCES = tests/unit/formats-corpus-test.c tests/unit/corpus-replay.h \
	tests/fuzz/fuzz.h tests/fuzz/fuzz-common.c tests/fuzz/fuzz-pprof.c tests/fuzz/fuzz-folded.c
tests_unit_formats_corpus_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_FUZZ_REPLAY \
	-DMS_FUZZ_CORPUS='"$(abs_top_srcdir)/tests/fuzz/corpus"'
tests_unit_formats_corpus_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_formats_corpus_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_DIST += tests/fuzz/corpus tests/fuzz/fuzz.h \
	tests/formats/package.json tests/formats/package-lock.json \
	tests/formats/pprof-decode.js tests/formats/speedscope-import.js \
	tests/formats/speedscope-schema.js tests/formats/chrome-check.js tests/formats/chrome-tree.mjs \
	tests/formats/go-runtime-cpu.go tests/formats/go-runtime-cpu.pprof \
	scripts/bench/40-formats.sh

# The pprof import's threads, from the labels producers write.
UNIT_TESTS += tests/unit/pprof-threads-test
tests_unit_pprof_threads_test_SOURCES = tests/unit/pprof-threads-test.c tests/unit/pprof-build.h \
	tests/unit/stderr-capture.h
tests_unit_pprof_threads_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_pprof_threads_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
# Writes pprof files with thread labels for tests/0910 and tests/0960.
check_PROGRAMS += tests/unit/pprof-mkthreads
tests_unit_pprof_mkthreads_SOURCES = tests/unit/pprof-mkthreads.c tests/unit/pprof-build.h
tests_unit_pprof_mkthreads_LDADD = $(MS_LIBS)

# What the imports' speed work must keep: the sealed stack tree, both ways
# of finding a pprof location, samples decoded one at a time.
UNIT_TESTS += tests/unit/import-tables-test
tests_unit_import_tables_test_SOURCES = tests/unit/import-tables-test.c tests/unit/pprof-build.h \
	tests/unit/stderr-capture.h
tests_unit_import_tables_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_import_tables_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# What analysis and the exporters make of a capture's JIT data.
UNIT_TESTS += tests/unit/jit-views-test
tests_unit_jit_views_test_SOURCES = tests/unit/jit-views-test.c
tests_unit_jit_views_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_jit_views_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# Python data in the capture (minor 7) and the looks over it, hand-built.
UNIT_TESTS += tests/unit/pylooks-test
tests_unit_pylooks_test_SOURCES = tests/unit/pylooks-test.c tests/unit/pycapture-build.h
tests_unit_pylooks_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_pylooks_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# Label spans (the GIL) from the capture to every view and pprof.
UNIT_TESTS += tests/unit/caplabels-test
tests_unit_caplabels_test_SOURCES = tests/unit/caplabels-test.c
tests_unit_caplabels_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_caplabels_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

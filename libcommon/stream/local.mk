# libcommon/stream: the record stream every stage reads and writes.
libcommon_a_SOURCES += \
	libcommon/stream/stream.h libcommon/stream/protocols.h libcommon/stream/records.h \
	libcommon/stream/fastpack.h libcommon/stream/cursor.h libcommon/stream/cursor.c \
	libcommon/stream/schema.h libcommon/stream/schema.c libcommon/stream/fastrec.c \
	libcommon/stream/compress.h libcommon/stream/compress.c \
	libcommon/stream/reader.c libcommon/stream/writer.c libcommon/stream/records.c \
	libcommon/stream/stackfile.h libcommon/stream/stackfile.c \
	libcommon/stream/stage.h libcommon/stream/stage.c

UNIT_TESTS += tests/unit/stream-test
tests_unit_stream_test_SOURCES = tests/unit/stream-test.c
tests_unit_stream_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_stream_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/stage-test
tests_unit_stage_test_SOURCES = tests/unit/stage-test.c tests/unit/stderr-capture.h
tests_unit_stage_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_stage_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/sample-unpack-test
tests_unit_sample_unpack_test_SOURCES = tests/unit/sample-unpack-test.c tests/unit/stderr-capture.h
tests_unit_sample_unpack_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_sample_unpack_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/writer-blocks-test
tests_unit_writer_blocks_test_SOURCES = tests/unit/writer-blocks-test.c
tests_unit_writer_blocks_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_writer_blocks_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

man_MANS += man/microscope-stream.5

# The fuzz corpus of the stream reader and the perf decoder, replayed
# through their fuzz targets in `make check` (tests/fuzz/local.mk).
UNIT_TESTS += tests/unit/stream-corpus-test
tests_unit_stream_corpus_test_SOURCES = tests/unit/stream-corpus-test.c tests/unit/corpus-replay.h \
	tests/fuzz/fuzz.h tests/fuzz/fuzz-io.h tests/fuzz/fuzz-io.c tests/fuzz/fuzz-decode.c \
	tests/fuzz/fuzz-stream.c
tests_unit_stream_corpus_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_FUZZ_REPLAY \
	-DMS_FUZZ_CORPUS='"$(abs_top_srcdir)/tests/fuzz/corpus"'
tests_unit_stream_corpus_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_stream_corpus_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

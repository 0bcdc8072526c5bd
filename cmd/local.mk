# cmd/microscope: the front command. cmd/microscope.c dispatches to one
# file per subcommand in cmd/microscope/, each an adapter that parses its
# options and runs stages or library calls. Stage commands are listed in
# their layer's local.mk next to the library code they wire.
bin_PROGRAMS += microscope
microscope_SOURCES = cmd/microscope.c cmd/microscope/microscope.h \
	cmd/microscope/record.c cmd/microscope/options.c cmd/microscope/options.h \
	cmd/microscope/report.c cmd/analyze/cli.c cmd/analyze/cli.h \
	cmd/microscope/symbolize.c cmd/microscope/convert.c cmd/microscope/serve.c
microscope_LDADD = $(MS_LIBS) $(MHD_LIBS)
man_MANS += man/microscope.1

UNIT_TESTS += tests/unit/pipeline-test
tests_unit_pipeline_test_SOURCES = tests/unit/pipeline-test.c
tests_unit_pipeline_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/record-options-test
tests_unit_record_options_test_SOURCES = tests/unit/record-options-test.c \
	cmd/microscope/options.c cmd/microscope/options.h tests/unit/stderr-capture.h
tests_unit_record_options_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_record_options_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

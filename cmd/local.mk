# cmd/microscope: the front command, dispatching to libcommon/front/ (one
# file per subcommand). Stage commands are listed in their layer's local.mk
# next to the library code they wire.
bin_PROGRAMS += microscope
microscope_SOURCES = cmd/microscope.c
microscope_LDADD = $(MS_LIBS)
man_MANS += man/microscope.1

libcommon_a_SOURCES += \
	libcommon/front/front.h \
	libcommon/front/record.c \
	libcommon/front/report.c \
	libcommon/front/symbolize.c \
	libcommon/pipeline/pipeline.c libcommon/pipeline/pipeline.h

UNIT_TESTS += tests/unit/pipeline-test
tests_unit_pipeline_test_SOURCES = tests/unit/pipeline-test.c
tests_unit_pipeline_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# libcommon/analysis: pure views of a loaded capture (summary, top, tree,
# problems, the report) and ms-analyze, which prints them.
libcommon_a_SOURCES += \
	libcommon/analysis/analysis.h libcommon/analysis/analysis-internal.h \
	libcommon/analysis/query.h libcommon/analysis/query.c \
	libcommon/analysis/options.h libcommon/analysis/options.c \
	libcommon/analysis/params.h libcommon/analysis/params.c \
	libcommon/analysis/keys.h libcommon/analysis/keys.c \
	libcommon/analysis/select.h libcommon/analysis/select.c \
	libcommon/analysis/view.c \
	libcommon/analysis/summary.c \
	libcommon/analysis/problems.c \
	libcommon/analysis/perfmaps.c \
	libcommon/analysis/pyprocs.c \
	libcommon/analysis/labelsum.c \
	libcommon/analysis/jitobjects.c \
	libcommon/analysis/top.c \
	libcommon/analysis/tree.c \
	libcommon/analysis/threads.c \
	libcommon/analysis/timeline.c \
	libcommon/analysis/diff.c \
	libcommon/analysis/intervals.h libcommon/analysis/intervals.c \
	libcommon/analysis/offcpu.c \
	libcommon/analysis/wall.c \
	libcommon/analysis/waits.h libcommon/analysis/waits.c \
	libcommon/analysis/report.c \
	libcommon/analysis/tasks.c

UNIT_TESTS += tests/unit/analysis-test
tests_unit_analysis_test_SOURCES = tests/unit/analysis-test.c
tests_unit_analysis_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_analysis_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# The off-CPU views over hand-built captures with known truth.
UNIT_TESTS += tests/unit/offcpu-test
tests_unit_offcpu_test_SOURCES = tests/unit/offcpu-test.c
tests_unit_offcpu_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_offcpu_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# The views in snapshots over hand-built captures with known truth.
UNIT_TESTS += tests/unit/snapshots-view-test
tests_unit_snapshots_view_test_SOURCES = tests/unit/snapshots-view-test.c tests/unit/pycapture-build.h
tests_unit_snapshots_view_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_snapshots_view_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

bin_PROGRAMS += ms-analyze
ms_analyze_SOURCES = cmd/ms-analyze.c cmd/analyze/cli.c cmd/analyze/cli.h
ms_analyze_LDADD = $(STAGE_LIBS)
ms_analyze_LDFLAGS = $(STAGE_LINK)
man_MANS += man/ms-analyze.1

# Presentation for the text reports: colour, width, short names, numbers.
libcommon_a_SOURCES += libcommon/analysis/present.h libcommon/analysis/present.c
UNIT_TESTS += tests/unit/present-test
tests_unit_present_test_SOURCES = tests/unit/present-test.c
tests_unit_present_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_present_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# A typed query from named parameters: every one, and every refusal.
UNIT_TESTS += tests/unit/params-test
tests_unit_params_test_SOURCES = tests/unit/params-test.c
tests_unit_params_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_params_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

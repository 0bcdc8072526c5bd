# libcommon/perf (collection side): perf events, rings, the target, /proc
# synthesis, and ms-collect built on them. decode.mk holds the decoder.
libcommon_a_SOURCES += \
	libcommon/perf/ring.c libcommon/perf/ring.h \
	libcommon/perf/procfs.c libcommon/perf/procfs.h \
	libcommon/perf/session.c libcommon/perf/session.h \
	libcommon/perf/target.c libcommon/perf/target.h \
	libcommon/perf/collect.c libcommon/perf/collect.h \
	libcommon/perf/vdso.c libcommon/perf/vdso.h \
	libcommon/perf/trim.c libcommon/perf/trim.h \
	libcommon/perf/ratewatch.c libcommon/perf/ratewatch.h \
	libcommon/perf/budget.c libcommon/perf/budget.h \
	libcommon/perf/duty.c libcommon/perf/duty.h \
	libcommon/perf/cpumeter.c libcommon/perf/cpumeter.h \
	libcommon/perf/governor.c libcommon/perf/governor.h \
	libcommon/perf/kernel.c libcommon/perf/kernel.h \
	libcommon/perf/tracefs.c libcommon/perf/tracefs.h

bin_PROGRAMS += ms-collect
ms_collect_SOURCES = cmd/ms-collect.c
ms_collect_LDADD = $(MS_LIBS)
man_MANS += man/ms-collect.1

UNIT_TESTS += tests/unit/collect-test
tests_unit_collect_test_SOURCES = tests/unit/collect-test.c
tests_unit_collect_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_collect_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/ratewatch-test
tests_unit_ratewatch_test_SOURCES = tests/unit/ratewatch-test.c
tests_unit_ratewatch_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_ratewatch_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/budget-test
tests_unit_budget_test_SOURCES = tests/unit/budget-test.c
tests_unit_budget_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_budget_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/tracefs-test
tests_unit_tracefs_test_SOURCES = tests/unit/tracefs-test.c
tests_unit_tracefs_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_tracefs_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# tests: fixtures (real programs whose profile is known), unit tests and
# bats end-to-end tests. Unit tests are listed in each layer's local.mk
# (UNIT_TESTS += tests/unit/foo-test); bats files here.

# Fixtures keep frame pointers and debug info unless a test says otherwise.
FIXTURE_CFLAGS = -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline-functions-called-once
check_PROGRAMS += tests/fixtures/burn tests/fixtures/threads tests/fixtures/forkexec
tests_fixtures_burn_SOURCES = tests/fixtures/burn.c
tests_fixtures_burn_CFLAGS = $(FIXTURE_CFLAGS)
tests_fixtures_threads_SOURCES = tests/fixtures/threads.c
tests_fixtures_threads_CFLAGS = $(FIXTURE_CFLAGS) -pthread
tests_fixtures_threads_LDADD = -lpthread
tests_fixtures_forkexec_SOURCES = tests/fixtures/forkexec.c
tests_fixtures_forkexec_CFLAGS = $(FIXTURE_CFLAGS)
# Fixed work, for scripts/profile-overhead: what a recorder costs the program.
check_PROGRAMS += tests/fixtures/fixedwork
tests_fixtures_fixedwork_SOURCES = tests/fixtures/fixedwork.c
tests_fixtures_fixedwork_CFLAGS = $(FIXTURE_CFLAGS) -pthread
tests_fixtures_fixedwork_LDADD = -lpthread

check_PROGRAMS += tests/fixtures/offcpu
tests_fixtures_offcpu_SOURCES = tests/fixtures/offcpu.c
tests_fixtures_offcpu_CFLAGS = $(FIXTURE_CFLAGS) -pthread
tests_fixtures_offcpu_LDADD = -lpthread

# Two threads handing a token over pipes, ~20,000 switch-outs a second:
# off-CPU recording's cost (scripts/bench-smoke) and completeness (tests/0200).
check_PROGRAMS += tests/fixtures/switcher
tests_fixtures_switcher_SOURCES = tests/fixtures/switcher.c
tests_fixtures_switcher_CFLAGS = $(FIXTURE_CFLAGS) -pthread
tests_fixtures_switcher_LDADD = -lpthread

check_PROGRAMS += tests/fixtures/phases
tests_fixtures_phases_SOURCES = tests/fixtures/phases.c
tests_fixtures_phases_CFLAGS = $(FIXTURE_CFLAGS) -pthread
tests_fixtures_phases_LDADD = -lpthread

BATS_TESTS += $(sort $(wildcard $(srcdir)/tests/*.bats))
# The page in a real browser (tests/0965-web.bats): npm ci installs playwright-core.
EXTRA_DIST += tests/browser/package.json tests/browser/package-lock.json tests/browser/page-test.mjs
EXTRA_DIST += tests/test_helper.bash tests/pywork_helper.bash tests/golden

check_PROGRAMS += $(UNIT_TESTS)

check-local: $(check_PROGRAMS) $(bin_PROGRAMS)
	@$(SHELL) $(srcdir)/tests/run-tests $(builddir) $(srcdir) -- $(UNIT_TESTS) -- \
		$(patsubst $(srcdir)/%,%,$(BATS_TESTS))

# Fixtures of later capabilities, one fragment each.
include tests/fixtures/unwind.mk
include tests/fixtures/symbols.mk
include tests/fixtures/jit.mk
include tests/fixtures/pysplice.mk

# shellcheck shell=bash
# Complete stacks: the share of samples whose stack reaches the thread's
# entry at the default preset's copy size, on two real programs (a recursive
# sqlite3 query and bzip2 -9), and what that copy costs next to perf record
# at the same rate and size: the short run of scripts/stack-completeness
# (its --help says what each column is).
# Set by scripts/bench-smoke, which sources this file.
: "${build:?}" "${top:?}"
if [ ! -x "$build/tests/fixtures/fixedwork" ]; then
	echo "bench-smoke: stacks part skipped: build tests/fixtures/fixedwork (make check builds it)"
	return 0
fi
stack=$("$build/microscope" record --print-options -- true | sed -n 's/.*stack-size=\([0-9]*\).*/\1/p')
MS_BUILDDIR=$build "$top/scripts/stack-completeness" --short --size "$stack" --workload sqlite --workload bzip2

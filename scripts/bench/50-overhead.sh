# shellcheck shell=bash
# Overhead: what recording costs a fixed-work program, under microscope and
# under perf record with the same settings, at the default preset: the short
# run of scripts/profile-overhead (its --help says what each figure is), and
# its comparison with the baseline in bench/overhead.json.
# Set by scripts/bench-smoke, which sources this file.
: "${build:?}" "${top:?}"
if [ ! -x "$build/tests/fixtures/fixedwork" ]; then
	echo "bench-smoke: overhead part skipped: build tests/fixtures/fixedwork (make check builds it)"
	return 0
fi
MS_BUILDDIR=$build "$top/scripts/profile-overhead" --short --preset default

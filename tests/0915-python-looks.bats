#!/usr/bin/env bats
# Looks over a capture with Python frames (tests/unit/pylooks-test --write:
# the interpreter running f in a.py, which calls g and h through
# builtin_map into a C extension; another f in b.py; a thread without
# Python frames), through the commands and real viewers' importers.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	"$MS_BUILDDIR/tests/unit/pylooks-test" --write p.msc
}

@test "ms-analyze --look: every look by name, the default mixed, a wrong one refused" {
	run -0 --separate-stderr ms-analyze top --json p.msc
	[[ "$output" == *'"look":"mixed"'* ]]
	run -0 --separate-stderr ms-analyze top --look python p.msc
	[[ "$output" == *"f (a.py:1)"* && "$output" == *"f (b.py:1)"* ]]
	[[ "$output" != *_PyEval_EvalFrameDefault* && "$output" != *builtin_map* ]]
	run -0 --separate-stderr ms-analyze tree --look native --json p.msc
	[[ "$output" == *'"look":"native"'* && "$output" != *'[python]'* ]]
	run -2 --separate-stderr ms-analyze top --look pyhton p.msc
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *"unknown look 'pyhton': use mixed, native, python"* ]]
	[ -z "$output" ]
	# summary and problems name the Python processes
	run -0 --separate-stderr ms-analyze summary p.msc
	[[ "$output" == *"python:      pid 100 /usr/bin/python3.11: ok, Python 3.11.7"* ]]
	run -0 --separate-stderr ms-analyze problems p.msc
	[[ "$output" == *"pid 200  /usr/bin/python3.10 (Python 3.10.12): unsupported: Python 3.10 is not supported"* ]]
}

@test "ms-export --look: folded stacks of each look; a wrong look is a usage error" {
	run -0 --separate-stderr ms-export -q --folded --look python p.msc
	[ "$output" = "[truncated: interpreted-unknown];main;hash_update 1
f (a.py:1);g (a.py:6);h (b.py:1);hash_update 2
f (b.py:1) 1" ]
	run -0 --separate-stderr ms-export -q --folded --look native p.msc
	[[ "$output" != *"a.py"* ]]
	run -2 --separate-stderr ms-export --folded --look all p.msc
	[[ "$stderr" == *"--look is 'mixed', 'native' or 'python', not 'all'"* ]]
}

@test "go tool pprof: the python look's interpreted functions by name, with their files and lines" {
	command -v go >/dev/null || { echo "go is not installed (scripts/install-deps installs golang-go)" >&2; return 1; }
	export HOME=$BATS_TEST_TMPDIR PPROF_TMPDIR=$BATS_TEST_TMPDIR
	export GOCACHE=$BATS_TEST_TMPDIR/go-cache PPROF_BINARY_PATH=/nonexistent
	ms-export -q --pprof --look python -o p.pb.gz p.msc
	run -0 --separate-stderr go tool pprof -traces p.pb.gz
	# the python stacks, innermost first, no interpreter frame
	grep -q -z -P '2ms +hash_update\n +h\n +g\n +f\n' <<<"$output"
	[[ "$output" != *_PyEval_EvalFrameDefault* ]]
	run -0 --separate-stderr go tool pprof -lines -top p.pb.gz
	grep -q -E ' g a\.py:8$' <<<"$output"
	grep -q -E ' h b\.py:2$' <<<"$output"
	grep -q -E ' f b\.py:3$' <<<"$output"
}

@test "pprof import: interpreted functions come back as named frames with their lines" {
	ms-export -q --pprof -o p.pb.gz p.msc
	run -0 --separate-stderr microscope convert -q p.pb.gz back.msc
	run -0 --separate-stderr ms-export -q --folded back.msc
	[[ "$output" == *";f;builtin_map;_PyEval_EvalFrameDefault;g;h;hash_update 2"* ]]
}

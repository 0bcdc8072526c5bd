#!/usr/bin/env bats
# Unwinding where the program's binary is not: a stream recorded here and
# processed after the binary was moved away or rebuilt (as on another host)
# gives the same stacks and names as in place when --debug-dir, or a
# debuginfod server, holds a file with the module's build id; with no such
# file, the stacks end with no-cfi at a frame of the missing module, and
# the problem names it. The fixture is a copy of recurse (-O2 without frame
# pointers: only its call-frame information walks its stacks), run from this
# test's folder so that moving it disturbs nothing else.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	cd "$BATS_TEST_TMPDIR" || return
	# The caches (CFI rows, symbols by build id) stay in the test's folder.
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
	unset DEBUGINFOD_URLS
	require_built "$MS_BUILDDIR/tests/fixtures/recurse"
	mkdir bin
	cp "$MS_BUILDDIR/tests/fixtures/recurse" bin/recurse
	ID=$(readelf -n bin/recurse | awk '/Build ID/ { print $3; exit }')
	[ "${#ID}" -eq 40 ]
}

teardown() {
	if [ -n "${SERVER_PID:-}" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
}

# Record the fixture to run.msr, then process it with the binary in place:
# in.txt (ms-symbolize --text: one line per stack, its end and frames) and
# the views of in.msc.
record_in_place() {
	ms-collect -F 2000 -o run.msr -- bin/recurse 0.6 20 2> collect.err || {
		cat collect.err >&2
		return 1
	}
	process in
	# The comparison means something: complete stacks through the program's frames.
	grep -q ';main;run;recurse;' in.txt
	[ "$(awk '$4 == "outermost"' in.txt | wc -l)" -gt 100 ]
}

# process NAME [OPTIONS]: the whole pipeline over run.msr, with OPTIONS for
# ms-unwind and ms-symbolize; NAME.txt, NAME.msc, NAME.tree, NAME.top.
process() {
	local name=$1
	shift
	ms-decode run.msr | ms-unwind --stats "$@" 2> "$name.unwind.err" |
		ms-symbolize --text "$@" > "$name.txt"
	ms-decode run.msr | ms-unwind "$@" | ms-symbolize "$@" | ms-capture -o "$name.msc"
	ms-analyze tree "$name.msc" > "$name.tree"
	ms-analyze top "$name.msc" > "$name.top"
}

# The processing NAME gave what processing in place gave; else the first
# differences and the stacks' ends on each side.
same_as_in_place() {
	local f
	for f in txt tree top; do
		cmp -s "in.$f" "$1.$f" && continue
		echo "$1.$f differs from in.$f (in place):" >&2
		diff "in.$f" "$1.$f" | cut -c1-160 | head -n 8 >&2
		echo "ends in place: $(awk '{ print $4 }' in.txt | sort | uniq -c | xargs)" >&2
		echo "ends in $1: $(awk '{ print $4 }' "$1.txt" | sort | uniq -c | xargs)" >&2
		return 1
	done
}

@test "elsewhere: the binary moved to --debug-dir's .build-id path: the same stacks and names" {
	record_in_place
	mkdir -p "dbg/.build-id/${ID:0:2}"
	mv bin/recurse "dbg/.build-id/${ID:0:2}/${ID:2}.debug"
	process moved --debug-dir "$BATS_TEST_TMPDIR/dbg"
	same_as_in_place moved
	grep -q 'modules [0-9]* unverified 0 found-by-build-id 1$' moved.unwind.err
}

@test "elsewhere: a rebuilt binary at the path, the one that ran as --debug-dir/NAME: the same" {
	record_in_place
	mkdir dbg
	mv bin/recurse dbg/recurse
	# Another program where it was: its build id is not the module's.
	cp "$MS_BUILDDIR/ms-decode" bin/recurse
	process rebuilt --debug-dir "$BATS_TEST_TMPDIR/nothing-here" --debug-dir "$BATS_TEST_TMPDIR/dbg"
	same_as_in_place rebuilt
}

@test "elsewhere: with no file of its build id, stacks end with no-cfi in the missing module" {
	record_in_place
	mv bin/recurse recurse.away
	process gone
	# Every stack that reaches the program ends there with no-cfi, at its
	# outermost frame, which names the module's path.
	awk -v m="$BATS_TEST_TMPDIR/bin/recurse+0x" '
		index($5, m) { n++; if ($4 != "no-cfi" || index($5, m) != 1) bad++ }
		END { exit !(n > 100 && !bad) }' gone.txt
	grep -q 'unverified 1 found-by-build-id 0$' gone.unwind.err
	ms-analyze summary gone.msc > summary.txt
	grep -q "unverified-module .*'$BATS_TEST_TMPDIR/bin/recurse': it cannot be opened" summary.txt
	# A debug-only file (objcopy --only-keep-debug: no code, no .eh_frame
	# bytes, and gcc wrote no .debug_frame): the same end, and the problem
	# names that file too.
	mkdir -p "dbg/.build-id/${ID:0:2}"
	objcopy --only-keep-debug recurse.away "dbg/.build-id/${ID:0:2}/${ID:2}.debug"
	process keep --debug-dir "$BATS_TEST_TMPDIR/dbg"
	awk -v m="$BATS_TEST_TMPDIR/bin/recurse+0x" '
		index($5, m) { n++; if ($4 != "no-cfi" || index($5, m) != 1) bad++ }
		END { exit !(n > 100 && !bad) }' keep.txt
	ms-analyze summary keep.msc > summary.txt
	grep -q "dbg/.build-id/${ID:0:2}/${ID:2}.debug', which its build id proves, is a debug file without the code" summary.txt
}

@test "elsewhere: debuginfod (a local server) serves the binary: the same stacks and names" {
	record_in_place
	mkdir -p "srv/buildid/$ID"
	mv bin/recurse "srv/buildid/$ID/debuginfo"
	start_debuginfod_server srv
	DEBUGINFOD_URLS=http://127.0.0.1:$DEBUGINFOD_PORT DEBUGINFOD_CACHE_PATH=$BATS_TEST_TMPDIR/dcache \
		process served
	same_as_in_place served
}

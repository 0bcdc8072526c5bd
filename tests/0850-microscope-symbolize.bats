#!/usr/bin/env bats
# End-to-end, on the real kernel: recording with symbolization deferred,
# then `microscope symbolize` after the binary moved, proved by build id;
# what the capture says of a module it cannot prove; atomic replacement.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	mkdir rec moved dbg
	# The fixture has debug information (-g): keep it apart, strip the copy that runs.
	cp "$FIXTURES/burn" burn.full
	objcopy --only-keep-debug burn.full burn.debug
	objcopy --strip-all --add-gnu-debuglink=burn.debug burn.full rec/burn
	BUILD_ID=$(readelf -n burn.full | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	[ -n "$BUILD_ID" ]
}

teardown() {
	local pids
	pids=$(leftover_processes)
	# shellcheck disable=SC2086 # one word per process id
	[ -z "$pids" ] || { kill -9 $pids 2>/dev/null; echo "left behind: $pids" >&2; return 1; }
}

# The user functions with at least 5% of the samples in total, as "name
# file:line", sorted: what must not depend on when or where the frames were
# symbolized. (Kernel functions come and go with the machine's load: an
# interrupt's share can pass 5 % in one run and not in the next.)
top_functions() {
	ms-analyze top --json "$1" |
		jq -r '.functions[] | select(.total_percent >= 5 and .module != "[kernel.kallsyms]") |
			"\(.name) \(.file | split("/") | last // ""):\(.line)"' | sort
}

# Addresses of the module whose path ends in /$2 that have no name.
unnamed_in() {
	ms-analyze problems --json "$1" |
		jq --arg m "/$2" '[.modules[] | select(.path | endswith($m)) | .addresses[]] | length'
}

@test "microscope symbolize: usage" {
	run --separate-stderr microscope symbolize --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "usage: microscope symbolize [--debug-dir DIR]... [-o FILE] CAPTURE" ]
	[[ "$output" == *"Exit status"* ]]
	run --separate-stderr microscope symbolize
	[ "$status" -eq 2 ]
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *"needs exactly one capture file"* ]]
	run --separate-stderr microscope symbolize a.msc b.msc
	[ "$status" -eq 2 ]
	run --separate-stderr microscope symbolize --bogus a.msc
	[ "$status" -eq 2 ]
	run --separate-stderr microscope record --symbolize=later -- true
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--symbolize wants immediate or deferred, not 'later'"* ]]
	# both man pages know the new options
	man -l "$MS_SRCDIR/man/microscope.1" 2>/dev/null | col -b >page
	grep -q -- '--debug-dir' page
	grep -q -- '--symbolize=immediate|deferred' page
}

@test "deferred, moved, symbolized by build id: the frames of an immediate recording" {
	microscope record --symbolize=deferred -o "$PWD/d.msc" -- "$PWD/rec/burn" 0.5 2>/dev/null
	# Nothing is named yet; the capture says the frames wait.
	ms-analyze summary --json d.msc >s.json
	[ "$(jq '.unsymbolized.percent' s.json)" = 100 ]
	[ "$(jq '.unsymbolized.deferred' s.json)" = true ]
	[ "$(ms-analyze problems --json d.msc | jq -r '.modules[] | select(.path | endswith("/rec/burn")) | "\(.status) \(.build_id)"')" = \
	  "deferred $BUILD_ID" ]
	microscope report d.msc >report.txt
	[[ "$(sed -n 2p report.txt)" == "names:       100.0% of samples "*" have a frame without a name; symbolization was deferred: run microscope symbolize" ]]

	# The binary moves; its debug file is known only by its build id.
	mv rec/burn moved/burn
	mkdir -p "dbg/.build-id/${BUILD_ID:0:2}"
	mv burn.debug "dbg/.build-id/${BUILD_ID:0:2}/${BUILD_ID:2}.debug"
	cp d.msc before.msc
	run --separate-stderr microscope symbolize --debug-dir "$PWD/dbg" d.msc
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[[ "$stderr" == "microscope: wrote 'd.msc': "* ]]
	run -1 cmp -s d.msc before.msc
	assert_no_files '*.tmp[.-]*'
	[ "$(unnamed_in d.msc burn)" -eq 0 ]
	[ "$(ms-analyze summary --json d.msc | jq '.unsymbolized.deferred')" = false ]

	# The unstripped binary, recorded with immediate symbolization, where it is.
	microscope record -o "$PWD/i.msc" -- "$PWD/burn.full" 0.5 2>/dev/null
	top_functions d.msc >deferred.txt
	top_functions i.msc >immediate.txt
	cat deferred.txt
	diff -u immediate.txt deferred.txt
	grep -q '^burn_60 burn.c:[0-9]' deferred.txt
	grep -q '^main burn.c:[0-9]' deferred.txt
	# The hottest functions in the same order.
	[ "$(ms-analyze top --json d.msc | jq -r '[.functions[0:3][].name] | join(" ")')" = "burn_60 burn_30 burn_10" ]
	[ "$(ms-analyze top --json i.msc | jq -r '[.functions[0:3][].name] | join(" ")')" = "burn_60 burn_30 burn_10" ]
}

@test "a debug directory holding the unstripped binary under its name will do, into -o" {
	microscope record --symbolize=deferred -o "$PWD/d.msc" -- "$PWD/rec/burn" 0.3 2>/dev/null
	# Moved away, and the unstripped copy (the same build id) is in another directory.
	mv rec/burn moved/burn
	cp burn.full dbg/burn
	rm burn.debug
	cp d.msc before.msc
	microscope symbolize --debug-dir "$PWD/dbg" -o "$PWD/out.msc" d.msc 2>/dev/null
	cmp d.msc before.msc
	[ "$(unnamed_in out.msc burn)" -eq 0 ]
	ms-analyze top out.msc | grep -q ' burn_60 (burn.c:[0-9]*)$'
	# Symbolized again where the files are gone: what was found stays.
	rm dbg/burn
	top_functions out.msc >first.txt
	microscope symbolize out.msc 2>/dev/null
	top_functions out.msc >again.txt
	diff -u first.txt again.txt
	[ "$(unnamed_in out.msc burn)" -eq 0 ]
	# Without the directory, nothing proves a file: the frames stay unnamed, with a reason.
	microscope symbolize -o "$PWD/bare.msc" d.msc 2>/dev/null
	[ "$(unnamed_in bare.msc burn)" -gt 0 ]
	ms-analyze problems --json bare.msc |
		jq -e '.modules[] | select(.path | endswith("/rec/burn")) | .status == "failed" and .reason != ""' >/dev/null
}

@test "a module without a build id can be deferred but not proved later: the capture says why" {
	objcopy --remove-section .note.gnu.build-id burn.full rec/nobid
	microscope record --symbolize=deferred -o "$PWD/d.msc" -- "$PWD/rec/nobid" 0.3 2>/dev/null
	ms-analyze problems --json d.msc >p.json
	[ "$(jq -r '.modules[] | select(.path | endswith("/rec/nobid")) | "\(.status) \(.build_id)"' p.json)" = "no-build-id " ]
	ms-analyze problems d.msc | grep -q '^  identity: file, no build id, device '
	# Copied elsewhere (another inode): no file proves itself the one that ran.
	cp rec/nobid dbg/nobid
	rm rec/nobid
	microscope symbolize --debug-dir "$PWD/dbg" d.msc 2>/dev/null
	ms-analyze problems --json d.msc >p.json
	jq -e '.modules[] | select(.path | endswith("/rec/nobid")) | .status == "no-build-id" and .reason != ""' p.json >/dev/null
	[ "$(unnamed_in d.msc nobid)" -gt 0 ]
}

@test "symbolize replaces nothing when it fails, and leaves no temporary file" {
	microscope record --symbolize=deferred -o "$PWD/d.msc" -- "$PWD/rec/burn" 0.2 2>/dev/null
	cp d.msc before.msc
	# a damaged input: the first stage fails, and says so
	head -c 300 d.msc >cut.msc
	cp cut.msc cut.before
	run --separate-stderr microscope symbolize cut.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'cut.msc' is truncated"* ]]
	[[ "$stderr" == *"microscope: symbolization failed: ms-capture exited with status 1; 'cut.msc' was not changed"* ]]
	cmp cut.msc cut.before
	# an output that cannot be written: the last stage fails
	run --separate-stderr microscope symbolize -o "$PWD/no/such/dir/out.msc" d.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'$PWD/no/such/dir/out.msc' was not written"* ]]
	cmp d.msc before.msc
	assert_no_files '*.tmp[.-]*'
}

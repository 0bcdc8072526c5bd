#!/usr/bin/env bats
# Thread snapshots (--python snapshot) from ms-unwind to the capture, over
# the stream ms-decode would give (tests/unit/mkpystream --snapshot:
# PY_CODE and PY_SNAPSHOT records of two threads in three rounds, and a
# sample whose native stack runs the interpreter's loop), so no collector
# is needed. Each snapshot is a TASK_WAIT of kind thread; complete ones
# are wait rows at their interpreted stack, a changed one a count; the
# GIL makes label spans; the sample stays native; the capture is 1.8 and
# its dump captures again to the same bytes.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	MKPY=$MS_BUILDDIR/tests/unit/mkpystream
	CAPTASKS=$MS_BUILDDIR/tests/unit/captasks
	ELF=$(cd "$MS_BUILDDIR/tests/unit/data" && pwd)/fakepy
	cd "$BATS_TEST_TMPDIR" || return
}

@test "with the snapshot engine a sample that ran the interpreter's loop stays native" {
	"$MKPY" --snapshot "$ELF" > in.msr
	run --separate-stderr bash -c 'ms-unwind < in.msr | ms-symbolize --text'
	[ "$status" -eq 0 ]
	[ "$output" = "88 88 2500 outermost py_main;_PyEval_EvalFrameDefault;c_leaf" ]
	[ -z "$stderr" ]
}

@test "ms-unwind turns each snapshot into a task-wait and counts them" {
	"$MKPY" --snapshot "$ELF" > in.msr
	ms-unwind --stats < in.msr > out.msr 2> stats
	grep -q '^ms-unwind: python-snapshots 6 complete 5 changed 1 dropped 0 malformed 0 frames 7$' stats
	grep -q '^ms-unwind: label-spans 4 threads-full 0$' stats
	run "$MKPY" --stacks < out.msr
	# the interpreted stacks, each once, ending outermost; the sample's native one between
	[ "${lines[0]}" = "module 0 kind 7 [python]" ]
	[ "${lines[1]}" = "stack 0 outermost PP" ]
	[ "${lines[3]}" = "stack 1 outermost LLL" ]
	[ "${lines[4]}" = "stack 2 outermost PP" ]
	[ "${lines[5]}" = "stack 3 outermost P" ]
	[ "${#lines[@]}" -eq 6 ]
}

@test "snapshots become the capture's tasks and waits, and GIL spans from the snapshot before" {
	"$MKPY" --snapshot "$ELF" | ms-unwind | ms-symbolize | ms-capture -o p.msc
	run "$CAPTASKS" p.msc
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "minor 8" ]
	[ "${lines[1]}" = "task 88 thread 88 python3 2000-4000 w3 c0 d0" ]
	[ "${lines[2]}" = "task 88 thread 90 worker 2000-4000 w2 c1 d0" ]
	[ "${lines[3]}" = "wait 0 2000 Worker.run;<module> -" ]
	[ "${lines[4]}" = "wait 0 3000 Worker.run;<module> -" ]
	[ "${lines[5]}" = "wait 0 4000 Worker.run;<module> -" ]
	[ "${lines[6]}" = "wait 1 2000 - -" ]
	[ "${lines[7]}" = "wait 1 4000 [unknown code] -" ]
	[ "${#lines[@]}" -eq 8 ]
	ms-capture --dump p.msc | "$MS_BUILDDIR/tests/unit/caplabels" > spans
	grep -qx '88 88 2000 3000 2 gil held' spans
	grep -qx '88 88 3001 4000 1 gil released' spans
	grep -qx '88 90 2000 3000 2 gil released' spans
	grep -qx '88 90 3001 4000 1 gil held' spans
	[ "$(wc -l < spans)" -eq 4 ]
}

@test "a capture with tasks dumps and captures again to the same bytes" {
	"$MKPY" --snapshot "$ELF" | ms-unwind | ms-symbolize | ms-capture -o p.msc
	ms-capture --dump p.msc | ms-capture -o q.msc
	ms-capture --dump q.msc | ms-capture -o r.msc
	cmp q.msc r.msc
	[ "$("$CAPTASKS" q.msc)" = "$("$CAPTASKS" p.msc)" ]
}

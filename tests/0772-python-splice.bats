#!/usr/bin/env bats
# Python frames spliced into native stacks by ms-unwind, end to end over
# the stream ms-decode would give (tests/unit/mkpystream: PY_CODE and
# PY_STACK records, samples unwound by DWARF through a stand-in
# interpreter module, tests/unit/data/fakepy), so no collector is needed.
# Segments go before the loop's activations; counts that differ,
# truncated walks and unknown frames end the stack with their reason;
# interpreted frames are named by ms-unwind and left alone by ms-symbolize.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	MKPY=$MS_BUILDDIR/tests/unit/mkpystream
	ELF=$(cd "$MS_BUILDDIR/tests/unit/data" && pwd)/fakepy
	cd "$BATS_TEST_TMPDIR" || return
}

@test "ms-unwind splices Python segments before the loop's activations" {
	"$MKPY" "$ELF" > in.msr
	run --separate-stderr bash -c 'ms-unwind < in.msr | ms-symbolize --text'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "88 88 1001 outermost py_main;_PyEval_EvalFrameDefault;<module>;Worker.run;c_leaf" ]
	# two activations (one in the loop's .cold part), interp_helper between them runs none
	[ "${lines[1]}" = "88 88 1002 outermost py_main;_PyEval_EvalFrameDefault.cold;<module>;Worker.run;interp_helper;_PyEval_EvalFrameDefault;Worker.run;c_leaf" ]
	[ "${lines[2]}" = "88 88 1003 interpreted-unplaced <module>;Worker.run;py_main;_PyEval_EvalFrameDefault;c_leaf" ]
	[ "${lines[3]}" = "88 88 1004 interpreted-truncated py_main;_PyEval_EvalFrameDefault.cold;interp_helper;_PyEval_EvalFrameDefault;[unknown code];Worker.run;c_leaf" ]
	[ "${lines[4]}" = "88 88 1005 interpreted-unknown py_main;_PyEval_EvalFrameDefault;c_leaf" ]
	[ "${lines[5]}" = "88 88 1006 interpreted-unknown py_main;_PyEval_EvalFrameDefault;c_leaf" ]
	# the native stack of 1005 and 1006, with a walker record: spliced, never their stack
	[ "${lines[6]}" = "88 88 1007 outermost py_main;_PyEval_EvalFrameDefault;<module>;Worker.run;c_leaf" ]
	# its walker record was another thread's: unknown
	[ "${lines[7]}" = "88 88 1009 interpreted-unknown py_main;_PyEval_EvalFrameDefault;c_leaf" ]
	# no activation: the stack never changes
	[ "${lines[8]}" = "88 88 1010 outermost py_main;c_leaf" ]
	[ "${#lines[@]}" -eq 9 ]
	[ -z "$stderr" ]
}

@test "without a Python engine a stack with activations and no walker record is left as it was" {
	"$MKPY" --no-engine "$ELF" > in.msr
	run --separate-stderr bash -c 'ms-unwind < in.msr | ms-symbolize --text'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "88 88 1001 outermost py_main;_PyEval_EvalFrameDefault;<module>;Worker.run;c_leaf" ]
	[ "${lines[4]}" = "88 88 1005 outermost py_main;_PyEval_EvalFrameDefault;c_leaf" ]
	[ "${lines[6]}" = "88 88 1007 outermost py_main;_PyEval_EvalFrameDefault;<module>;Worker.run;c_leaf" ]
	[ "${lines[7]}" = "88 88 1009 outermost py_main;_PyEval_EvalFrameDefault;c_leaf" ]
}

@test "interpreted frames: one module, keyed without addresses, flags on the interpreter's frames, stacks once" {
	"$MKPY" "$ELF" | ms-unwind > out.msr
	run "$MKPY" --stacks < out.msr
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "module 0 kind 0 $ELF" ]
	[ "${lines[1]}" = "module 1 kind 7 [python]" ]
	[ "${lines[2]}" = "stack 0 outermost LPPLL" ]
	[ "${lines[3]}" = "stack 1 outermost LPLLPPLL" ]
	[ "${lines[4]}" = "stack 2 interpreted-unplaced LLLPP" ]
	[ "${lines[5]}" = "stack 3 interpreted-truncated LPPLLLL" ]
	[ "${lines[6]}" = "stack 4 interpreted-unknown LLL" ]
	[ "${lines[7]}" = "stack 5 outermost LL" ]
	[ "${#lines[@]}" -eq 8 ]
}

@test "ms-unwind consumes PY_CODE and PY_STACK, names each interpreted frame once, counts what it drops" {
	"$MKPY" "$ELF" > in.msr
	ms-unwind --stats < in.msr > out.msr 2> stats
	grep -q '^ms-unwind: python-stacks 8 unpaired 2 placed 3 truncated 1 unplaced 1 unknown 3 cut 0 frames 11 codes 4 again 0 refused 0 keys 6 unknown-code 1 bad-lines 0$' stats
	# the codes' records are gone; each (file, function, line, first line) has one FRAME record
	[ "$(grep -a -o '/srv/app/other.py' in.msr | wc -l)" -eq 1 ]
	[ "$(grep -a -o '/srv/app/other.py' out.msr | wc -l)" -eq 1 ]
	[ "$(grep -a -o '/srv/app/main.py' out.msr | wc -l)" -eq 4 ]
	ms-symbolize < out.msr | ms-capture -o p.msc
	run ms-analyze top p.msc
	[ "$status" -eq 0 ]
	[[ "$output" == *"[python]  Worker.run (main.py:10)"* ]]
	[[ "$output" == *"[python]  Worker.run (other.py:30)"* ]]
	[[ "$output" == *"[python]  [unknown code]"* ]]
	run ms-analyze problems p.msc
	[[ "$output" == *"ms-unwind  python-stack-unpaired  2"*"pid 88 tid 89 time 1009"* ]]
}

@test "ms-symbolize reads no file for the interpreted module: a frame ms-unwind did not name has no symbol" {
	"$MKPY" --unnamed > in.msr
	run --separate-stderr ms-symbolize --text --lines < in.msr
	[ "$status" -eq 0 ]
	[ "$output" = "88 88 1 interpreted-unplaced [python]+0x1(no-symbol)" ]
	[ -z "$stderr" ]
}

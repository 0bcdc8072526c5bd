#!/usr/bin/env bats
# Unwinding through the vdso: ms-collect records the kernel's vdso image
# (no file on disk holds it) and ms-unwind reads the vdso's call-frame
# information from it, so that samples taken in clock_gettime's vdso code
# reach their callers, main and _start instead of ending there (no-cfi).

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	VDSOCLOCK=$FIXTURES/vdsoclock
	cd "$BATS_TEST_TMPDIR" || return
}

teardown() {
	# A test that failed while its fixture ran leaves no process behind.
	if [ -n "${fixture:-}" ]; then
		kill "$fixture" 2> /dev/null || true
		wait "$fixture" 2> /dev/null || true
	fi
}

# Record "$@" with ms-collect (options first, then the command after --),
# decode it, unwind and symbolize it as text into stacks.txt:
# "pid tid time reason frame;frame;..." per stack, outermost frame first.
record_stacks() {
	ms-collect "$@" > run.msr 2> collect.err || { cat collect.err >&2; return 1; }
	ms-decode --stats run.msr > decoded.msr 2> decode.err || { cat decode.err >&2; return 1; }
	ms-unwind --stats decoded.msr > unwound.msr 2> unwind.err || { cat unwind.err >&2; return 1; }
	ms-symbolize --text unwound.msr > stacks.txt 2> symbolize.err || {
		cat symbolize.err >&2
		return 1
	}
}

# Samples taken in the vdso (or in the kernel, called from it): a frame is
# [vdso] code not symbolized by name, or there is a frame below the C
# library's __clock_gettime (whatever names the vdso's code gets).
vdso_stacks() {
	awk '$5 ~ /(^|;)\[vdso\]/ || $5 ~ /(^|;)__clock_gettime;/' stacks.txt
}

@test "vdso: ms-collect writes the vdso image once, and ms-decode passes it on" {
	require_built "$VDSOCLOCK"
	record_stacks -F 500 -- "$VDSOCLOCK" 0.2
	grep -q -x 'ms-decode: stats: in vdso 1' decode.err
	grep -q -x 'ms-decode: stats: out vdso 1' decode.err
	# ms-unwind keeps it in the stream for the stages after it.
	ms-decode --stats unwound.msr > /dev/null 2> again.err
	grep -q -x 'ms-decode: stats: in vdso 1' again.err
	# The vdso module is known by the image's build id (a bin of 20 bytes).
	LC_ALL=C grep -a -q -P '\[vdso\]\xc4\x14' unwound.msr
}

@test "vdso: -O2 -fomit-frame-pointer clock_gettime callers unwind through the vdso to main and _start" {
	require_built "$VDSOCLOCK"
	record_stacks -F 2000 -- "$VDSOCLOCK" 1.5
	cat unwind.err >&2
	total=$(wc -l < stacks.txt)
	[ "$total" -gt 1000 ]
	vdso=$(vdso_stacks | wc -l)
	# Complete: ends as outermost, at _start, through main, run and poll_clock.
	complete=$(vdso_stacks | awk '$4 == "outermost" && $5 ~ /^_start;.*;main;run;poll_clock;/' | wc -l)
	all=$(awk '$4 == "outermost" && $5 ~ /^_start;.*;main;run;poll_clock(;|$)/' stacks.txt | wc -l)
	echo "vdso samples: $vdso of $total; complete: $complete; all complete: $all" >&2
	# Most of the fixture's time is in the vdso ...
	[ $((vdso * 100)) -ge $((total * 50)) ]
	# ... and those samples reach main and _start, as the others do.
	[ $((complete * 100)) -ge $((vdso * 99)) ]
	[ $((all * 100)) -ge $((total * 97)) ]
	# None of them ends at the vdso for want of call-frame information.
	[ "$(awk '$4 == "no-cfi" && $5 ~ /(^|;)\[vdso\]/' stacks.txt | wc -l)" -le $((vdso / 100)) ]
}

@test "vdso: an attached process's vdso samples unwind too" {
	require_built "$VDSOCLOCK"
	"$VDSOCLOCK" 30 &
	fixture=$!
	sleep 0.3
	record_stacks -F 2000 --duration 1 -p "$fixture"
	kill "$fixture"
	wait "$fixture" || true
	fixture=
	grep -q -x 'ms-decode: stats: in vdso 1' decode.err
	vdso=$(vdso_stacks | wc -l)
	complete=$(vdso_stacks | awk '$4 == "outermost" && $5 ~ /^_start;.*;main;run;poll_clock;/' | wc -l)
	echo "attached: vdso samples $vdso, complete $complete" >&2
	[ "$vdso" -gt 500 ]
	[ $((complete * 100)) -ge $((vdso * 99)) ]
	[ -z "$(leftover_processes)" ]
}

@test "vdso: Debian's python3 reading time.monotonic() reaches Py_RunMain through the vdso" {
	require_built /usr/bin/python3
	cat > mono.py <<'PY'
import time
end = time.monotonic() + 1
while time.monotonic() < end:
    pass
PY
	record_stacks -F 999 -- /usr/bin/python3 mono.py
	vdso=$(vdso_stacks | wc -l)
	complete=$(vdso_stacks | awk '$4 == "outermost" && $5 ~ /^_start;.*;Py_RunMain;.*;__clock_gettime;/' | wc -l)
	echo "python3: vdso samples $vdso, complete $complete" >&2
	[ "$vdso" -gt 100 ]
	[ $((complete * 100)) -ge $((vdso * 99)) ]
}

@test "vdso: ms-symbolize names vdso frames from the recorded image, proved by its build id" {
	require_built "$VDSOCLOCK"
	record_stacks -F 1000 -- "$VDSOCLOCK" 0.5
	# Some kernels' vdso calls a static function of its own (a clock
	# reader), which has no symbol: it is named by its FDE's start.
	named=$(grep -c -E ';__clock_gettime;__vdso_clock_gettime(;\[vdso\]\+0x[0-9a-f]+\(fde-only\))?$' \
		stacks.txt || true)
	vdso=$(vdso_stacks | wc -l)
	echo "vdso samples: $vdso; ending in __vdso_clock_gettime or below it: $named" >&2
	[ "$vdso" -gt 100 ]
	[ $((named * 100)) -ge $((vdso * 90)) ]
	# No vdso frame is left unnamed.
	run -1 grep '\[vdso\]+0x[0-9a-f]*(no-symbol)' stacks.txt
	# Without the image (a stream of an older ms-collect), they stay unnamed, said once.
	ms-decode unwound.msr > /dev/null	# still a valid stream
	LC_ALL=C perl -0777 -pe 's/\x92\x0f\xc5/\x92\x7f\xc5/' unwound.msr > noimage.msr
	cmp -s unwound.msr noimage.msr && { echo "the vdso record was not found" >&2; false; }
	ms-symbolize --text noimage.msr > stacks2.txt 2> symbolize2.err
	grep -q '\[vdso\]+0x[0-9a-f]*(no-file)' stacks2.txt
}

#!/usr/bin/env bats
# microscope record's options (issue 16): validated whole before any stage
# starts, one line for a bad one, presets, and the value the capture keeps.

# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
load test_helper
bats_require_minimum_version 1.5.0

setup() {
	cp "$FIXTURES/burn" "$BATS_TEST_TMPDIR/"
	cd "$BATS_TEST_TMPDIR" || return
	export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
}

teardown() {
	local pids
	pids=$(leftover_processes)
	# shellcheck disable=SC2086 # one word per process id
	[ -z "$pids" ] || { kill -9 $pids 2>/dev/null; echo "left behind: $pids" >&2; return 1; }
}

# A refused command line: exit 2, the message and the hint, no stage run, nothing written.
refused() {
	local want=$1
	shift
	run -2 --separate-stderr microscope record -o "$PWD/c.msc" "$@" -- sh -c "touch '$PWD/ran'"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 2 ] || { echo "$stderr"; false; }
	[[ "$stderr" == *"$want"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"Try 'microscope record --help'."* ]]
	[ ! -e ran ]
	[ ! -e c.msc ]
	assert_no_files 'c.msc.tmp-*'
}

@test "a mistyped option is one line and a hint, exit 2, and nothing runs" {
	refused "-F: the frequency must be more than 0" -F 0
	refused "unknown option '--freqq'" --freqq 99
	refused "--unwind dwarf needs a stack copy, but --stack-size is 0" --unwind dwarf --stack-size 0
	refused "unknown event 'cycels'" -e cycels
	refused "--preset: no preset 'fastest'" --preset fastest
}

@test "--print-options prints the value a preset and flags make, and records nothing" {
	run --separate-stderr microscope record --preset deep -F 250 --print-options -- \
		sh -c "touch '$PWD/ran'"
	[ "$status" -eq 0 ]
	[ "$output" = "preset=deep freq=250 event=cpu-clock stack-size=65528 unwind=dwarf symbolize=immediate duration=none mmap-pages=1024" ]
	[ ! -e ran ]
	[ ! -e microscope.msc ]
}

@test "the capture keeps the options it was recorded with; the summary shows them" {
	microscope record --preset light -o "$PWD/p.msc" -- "$PWD/burn" 0.3 2>/dev/null
	ms-analyze summary p.msc | grep -qx "options:     preset=light freq=99 event=cpu-clock stack-size=8192 unwind=dwarf+fp symbolize=immediate duration=none mmap-pages=auto"
	[ "$(ms-analyze summary --json p.msc | jq -r .record_options)" = \
	  "preset=light freq=99 event=cpu-clock stack-size=8192 unwind=dwarf+fp symbolize=immediate duration=none mmap-pages=auto" ]
	# and ms-collect was given its rate: 0.3 s at 99 Hz is some 30 samples, not 300
	samples=$(ms-analyze summary --json p.msc | jq .samples)
	[ "$samples" -ge 10 ] && [ "$samples" -le 60 ] || { echo "$samples samples"; false; }
}

@test "a rate near the kernel's ceiling is warned about before recording" {
	max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	rate=$(( max * 3 / 4 ))
	run --separate-stderr ms-collect -F "$rate" -o "$PWD/r.msr" -- true
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"-F $rate is near the kernel's limit of $max samples per second per CPU"* ]]
	# the default rate says nothing of the kind
	run --separate-stderr ms-collect -o "$PWD/r.msr" -- true
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"near the kernel's limit"* ]]
}

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
	no_leftover_processes
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
	refused "option '--budget': '0' is not between 0.01 and 100" --budget 0
	refused "option '--budget': '2x' is not a percentage" --budget 2x
	refused "option '--off-cpu=yes' takes no value" --off-cpu=yes
}

@test "--off-cpu and the wall preset turn blocked-time collection on; --no-off-cpu off" {
	run -0 --separate-stderr microscope record --preset wall --print-options -- \
		sh -c "touch '$PWD/ran'"
	[ "$output" = "preset=wall freq=999 event=cpu-clock stack-size=32768 unwind=auto symbolize=immediate duration=none mmap-pages=auto budget=off off-cpu" ]
	run -0 --separate-stderr microscope record --no-off-cpu --preset wall --print-options -- true
	[ "$output" = "preset=wall freq=999 event=cpu-clock stack-size=32768 unwind=auto symbolize=immediate duration=none mmap-pages=auto budget=off" ]
	run -0 --separate-stderr microscope record --preset light --off-cpu --print-options -- true
	[ "$output" = "preset=light freq=99 event=cpu-clock stack-size=8192 unwind=dwarf+fp symbolize=immediate duration=none mmap-pages=auto budget=1.0% off-cpu" ]
	run -0 --separate-stderr microscope record --print-options -- true
	[[ "$output" != *off-cpu* ]]
	[ ! -e ran ]
	# --help lists them, with the preset
	run -0 microscope record --help
	[[ "$output" == *"--off-cpu"* ]]
	[[ "$output" == *"--no-off-cpu"* ]]
	[[ "$output" == *"wall     default + off-CPU (blocked) time"* ]]
}

@test "record --off-cpu hands --off-cpu to ms-collect" {
	[ "$(id -u)" -eq 0 ] || skip "--off-cpu needs root"
	# Beside a copy of microscope (where it looks for its stages first), an
	# ms-collect that says what it was given; the other stages from PATH.
	mkdir bin
	cp "$MS_BUILDDIR/microscope" bin/
	printf '#!/bin/sh\necho "$@" > "%s/collect-args"\nexec "%s/ms-collect" "$@"\n' \
		"$PWD" "$MS_BUILDDIR" > bin/ms-collect
	chmod +x bin/ms-collect
	PATH=$MS_BUILDDIR:$PATH bin/microscope record --preset wall -o "$PWD/w.msc" -- sleep 0.1 2>/dev/null
	grep -q -- "--off-cpu" collect-args
	ms-analyze summary w.msc | grep -q "options: .* off-cpu$"
}

@test "--print-options prints the value a preset and flags make, and records nothing" {
	run --separate-stderr microscope record --preset deep -F 250 --print-options -- \
		sh -c "touch '$PWD/ran'"
	[ "$status" -eq 0 ]
	[ "$output" = "preset=deep freq=250 event=cpu-clock stack-size=65528 unwind=dwarf symbolize=immediate duration=none mmap-pages=1024 budget=off" ]
	[ ! -e ran ]
	[ ! -e microscope.msc ]
}

@test "the capture keeps the options it was recorded with; the summary shows them" {
	microscope record --preset light -o "$PWD/p.msc" -- "$PWD/burn" 0.3 2>/dev/null
	ms-analyze summary p.msc | grep -qx "options:     preset=light freq=99 event=cpu-clock stack-size=8192 unwind=dwarf+fp symbolize=immediate duration=none mmap-pages=auto budget=1.0%"
	[ "$(ms-analyze summary --json p.msc | jq -r .record_options)" = \
	  "preset=light freq=99 event=cpu-clock stack-size=8192 unwind=dwarf+fp symbolize=immediate duration=none mmap-pages=auto budget=1.0%" ]
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

@test "--lz4 streams read as the uncompressed ones do: the same captures" {
	require_built lz4
	ms-collect -o "$PWD/raw.msr" -- "$PWD/burn" 0.3
	lz4 -q -c raw.msr > raw.lz4
	ms-collect --lz4 -o "$PWD/own.lz4" -- "$PWD/burn" 0.3
	# an LZ4 frame, a fraction of the size
	[ "$(head -c 4 own.lz4 | od -An -tx1 | tr -d ' ')" = 04224d18 ]
	ms-decode raw.msr | ms-unwind | ms-capture -o plain.msc
	ms-decode raw.lz4 | ms-unwind | ms-capture -o mapped.msc
	ms-decode < raw.lz4 | ms-unwind | ms-capture -o piped.msc
	cmp plain.msc mapped.msc
	cmp plain.msc piped.msc
	# ms-collect's own frames decompress with the lz4 tool, and read alike
	lz4 -q -d -c own.lz4 > own.msr
	ms-decode own.msr | ms-unwind | ms-capture -o own1.msc
	ms-decode own.lz4 | ms-unwind | ms-capture -o own2.msc
	cmp own1.msc own2.msc
	# a frame cut short is a stream cut short, said so
	head -c $(( $(stat -c %s own.lz4) * 3 / 5 )) own.lz4 > cut.lz4
	run -3 --separate-stderr ms-decode cut.lz4
	[[ "$stderr" == *"stream cut short"* ]]
	head -c 20 own.lz4 > cut.lz4
	run -1 --separate-stderr ms-decode cut.lz4
	[[ "$stderr" == *"is a compressed stream cut short before its header"* ]]
}

@test "--defer records first, processes after the program ends, and leaves no raw stream" {
	run --separate-stderr bash -c \
		"microscope record --defer -o '$PWD/p.msc' -- sh -c 'echo out; exec \"$PWD/burn\" 0.5' > out.txt"
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(cat out.txt)" = out ]
	[[ "$stderr" == *"processing the recording"* ]]
	assert_no_files 'p.msc.raw-*'
	samples=$(ms-analyze summary --json p.msc | jq .samples)
	[ "$samples" -gt 300 ]
	[[ "$(ms-analyze summary --json p.msc | jq -r .record_options)" == *" defer" ]]
	ms-analyze top --json p.msc | jq -e '[.functions[] | select(.name == "burn_60")] | length == 1' >/dev/null
	# a program that cannot be started: nothing written, no raw stream left
	run -127 --separate-stderr microscope record --defer -o "$PWD/q.msc" -- ./nosuch
	[ ! -e q.msc ]
	assert_no_files 'q.msc.raw-*' 'q.msc.tmp-*'
}

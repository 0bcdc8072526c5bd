#!/usr/bin/env bats
# ms-unwind as a command: a hand-written stream (msgpack bytes, so each test
# says exactly what goes in) becomes modules and stacks; bad input ends in a
# controlled error; a cut stream is passed on without a trailer (status 3);
# a closed downstream is status 5; and, where ms-collect exists, a real
# recording of the burn fixture unwinds.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	cd "$BATS_TEST_TMPDIR" || return
}

# [0, "microscope-stream", 1, 0, [["test", "1.0"]]]
header() {
	printf '\x95\x00\xb1microscope-stream\x01\x00\x91\x92\xa4test\xa31.0'
}

# [1, N, true] for N < 128
trailer() {
	printf '%b' "\\x93\\x01\\x$(printf %02x "$1")\\xc3"
}

# [21, pid 7, tid 7, time 1, start 0x10000, len 0x1000, pgoff 0, maj 0, min 0,
#  ino 0, ino_generation 0, prot R|X, flags 2, cpumode user, false, "//anon", bin ""]
mmap_anon() {
	printf '\xdc\x00\x11\x15\x07\x07\x01\xce\x00\x01\x00\x00\xcd\x10\x00'
	printf '\x00\x00\x00\x00\x00\x05\x02\x02\xc2\xa6//anon\xc4\x00'
}

# [20, pid 7, tid 7, time 2, cpu 0, period 1000, ip 0x10010, cpumode user,
#  [], [0x10010, 0x10020, 0x99999], 0, 0, [], bin ""]: a user sample whose
# third frame is in no mapping
sample() {
	printf '\x9e\x14\x07\x07\x02\x00\xcd\x03\xe8\xce\x00\x01\x00\x10\x02\x90'
	printf '\x93\xce\x00\x01\x00\x10\xce\x00\x01\x00\x20\xce\x00\x09\x99\x99'
	printf '\x00\x00\x90\xc4\x00'
}

# [22, pid 7, tid 7, time 3, exec false, synthesized false, "seven"]
comm() {
	printf '\x97\x16\x07\x07\x03\xc2\xc2\xa5seven'
}

# Run ms-unwind with the arguments, its stream going to out.msr.
unwind_to_file() {
	run --separate-stderr sh -c 'exec ms-unwind "$@" > out.msr' ms-unwind "$@"
}

good_stream() {
	{ header; mmap_anon; comm; sample; sample; trailer 4; } > "$1"
}

@test "ms-unwind --version and --help" {
	run --separate-stderr ms-unwind --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^ms-unwind\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	run --separate-stderr ms-unwind --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: ms-unwind [--unwind dwarf|fp|dwarf+fp] [--debug-dir DIR]... [--stats] [FILE]"* ]]
	[[ "$output" == *"Exit status"* ]]
	man -l "$MS_SRCDIR/man/ms-unwind.1" 2>/dev/null | col -b | grep -q -e '--stats'
}

@test "ms-unwind: an unknown option and two inputs are usage errors" {
	run --separate-stderr ms-unwind --frobnicate
	[ "$status" -eq 2 ]
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *frobnicate* ]]
	run --separate-stderr ms-unwind a b
	[ "$status" -eq 2 ]
}

@test "ms-unwind: samples become stacks, the rest passes through" {
	good_stream in.msr
	unwind_to_file --stats in.msr
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"samples 2 stacks 2 kernel-frames 0 user-frames 6"* ]]
	[[ "$stderr" == *"end no-module 2"* ]]
	[[ "$stderr" == *"modules 2 unverified 0"* ]]
	# stdin works too, and gives the same bytes
	ms-unwind < in.msr > out1.msr
	ms-unwind in.msr > out2.msr
	cmp out1.msr out2.msr
	# the comm record passes through byte for byte
	grep -q -a seven out1.msr
}

@test "ms-unwind: the stacks read back through ms-symbolize" {
	require_built ms-symbolize
	good_stream in.msr
	ms-unwind in.msr > out.msr
	run --separate-stderr ms-symbolize --text out.msr
	[ "$status" -eq 0 ]
	expect='7 7 2 no-module [unknown]+0x99999(no-module);//anon+0x10020(no-file);//anon+0x10010(no-file)'
	[ "${lines[0]}" = "$expect" ]
	[ "${lines[1]}" = "$expect" ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "ms-unwind: garbage and empty input are errors naming the stage and input" {
	printf 'hello, world\n' > garbage
	run --separate-stderr ms-unwind garbage
	[ "$status" -eq 1 ]
	[[ "$stderr" == *ms-unwind:* ]]
	[[ "$stderr" == *garbage* ]]
	[[ "$stderr" == *"byte 0"* ]]
	[ -z "$output" ]
	: > empty
	run --separate-stderr ms-unwind < empty
	[ "$status" -eq 1 ]
	[[ "$stderr" == *stdin* ]]
	# a broken record after good ones
	{ header; mmap_anon; printf '\xc1\xc1'; } > broken
	unwind_to_file broken
	[ "$status" -eq 1 ]
	[[ "$stderr" == *broken* ]]
}

@test "ms-unwind: a stream cut short is passed on without a trailer, status 3" {
	{ header; mmap_anon; sample; } > cut.msr
	unwind_to_file cut.msr
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"cut short"* ]]
	[[ "$stderr" == *"without a trailer"* ]]
	# what was processed went out, and the next stage sees the cut too
	[ -s out.msr ]
	mv out.msr first.msr
	unwind_to_file first.msr
	[ "$status" -eq 3 ]
	# a record cut in its middle
	{ header; mmap_anon; sample | head -c 10; } > cut2.msr
	unwind_to_file cut2.msr
	[ "$status" -eq 3 ]
}

@test "ms-unwind: a newer major version is refused" {
	{ printf '\x95\x00\xb1microscope-stream\x09\x00\x91\x92\xa4test\xa31.0'; trailer 0; } > v9.msr
	run --separate-stderr ms-unwind v9.msr
	[ "$status" -eq 1 ]
	[[ "$stderr" == *v9.msr* ]]
}

@test "ms-unwind: a closed downstream ends it with status 5 and one message" {
	good_stream in.msr
	# shellcheck disable=SC2016 # PIPESTATUS is the inner bash's
	run --separate-stderr bash -c '{ sleep 0.3; cat in.msr; } | ms-unwind | true; echo "${PIPESTATUS[1]}"'
	[ "${lines[-1]}" = 5 ]
	[ "$(grep -c 'downstream closed the pipe' <<<"$stderr")" -eq 1 ]
}

@test "ms-unwind: a real recording of the burn fixture unwinds" {
	require_built ms-collect
	require_built ms-decode
	require_built "$MS_BUILDDIR/tests/fixtures/burn"
	ms-collect -- "$MS_BUILDDIR/tests/fixtures/burn" 0.5 > run.msr 2> collect.err || {
		cat collect.err >&2
		false
	}
	ms-decode run.msr > decoded.msr
	unwind_to_file --stats decoded.msr
	[ "$status" -eq 0 ]
	echo "$stderr" >&2
	samples=$(sed -n 's/^ms-unwind: samples \([0-9]*\) .*/\1/p' <<<"$stderr")
	# 0.5 s at 999 Hz; records the collector could not pass on are lost
	[ "$samples" -gt 20 ]
	[[ "$stderr" == *"stacks $samples "* ]]
	# user frames bound to the fixture's file, proved by its identity
	[[ "$stderr" == *"unverified 0"* ]]
	[[ "$stderr" == *"exec-mmaps"* ]]
	# a stack copy: DWARF by default, walked to the thread's entry
	[[ "$stderr" == *"end outermost"* ]]
	unwind_to_file --stats --unwind fp decoded.msr
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"end fp-chain"* ]]
}

# ---- off-CPU records ----

# The stream's bytes as one line of hex digits.
hexdump() {
	od -An -v -tx1 "$1" | tr -d ' \n'
}

# [29, <sample's fields: pid 7, tid 7, time $1, cpu 0, period 1, ip 0x10010,
#  user, [], [0x10010, 0x10020, 0x99999], 0, 0, [], bin "">, state 1,
#  sleeping]: the thread left its CPU with the sample's stack
switch_out_same() {
	printf '%b' "\\xdc\\x00\\x10\\x1d\\x07\\x07\\x$(printf %02x "$1")"
	printf '\x00\x01\xce\x00\x01\x00\x10\x02\x90'
	printf '\x93\xce\x00\x01\x00\x10\xce\x00\x01\x00\x20\xce\x00\x09\x99\x99'
	printf '\x00\x00\x90\xc4\x00\x01\x02'
}

# The same at time 5 with user frames [0x10030], state 2, blocked
switch_out_other() {
	printf '\xdc\x00\x10\x1d\x07\x07\x05\x00\x01\xce\x00\x01\x00\x30\x02\x90'
	printf '\x91\xce\x00\x01\x00\x30\x00\x00\x90\xc4\x00\x02\x03'
}

# [28, 7, 7, time 6, cpu 0, out, not preempted]
switch() {
	printf '\x97\x1c\x07\x07\x06\x00\xc3\xc2'
}

# [34, 7, 7, time 7, cpu 0, state 1, sleeping, stack 0]
off_cpu() {
	printf '\x98\x22\x07\x07\x07\x00\x01\x02\x00'
}

# [35, 7, 7, start 1, end 8, cpu 0, nothing missing, stack 0, sleeping, sources 1, state 1, 0]
interval() {
	printf '\x9c\x23\x07\x07\x01\x08\x00\x00\x00\x02\x01\x01\x00'
}

# [17, 372, "sched:sched_switch", ["prev_state"], [16], [8], [1]]
tracepoint() {
	printf '\x97\x11\xcd\x01\x74\xb2sched:sched_switch\x91\xaaprev_state\x91\x10\x91\x08\x91\x01'
}

off_cpu_stream() {
	{ header; tracepoint; mmap_anon; comm; sample; switch_out_same 4; switch_out_other
	  switch; off_cpu; interval; trailer 9; } > "$1"
}

@test "ms-unwind: switch-outs are unwound as samples into off-cpu records; off-CPU kinds pass through" {
	off_cpu_stream in.msr
	unwind_to_file --stats in.msr
	[ "$status" -eq 0 ]
	# three walks: one sample, two switch-outs
	[[ "$stderr" == *"samples 3 stacks 3 kernel-frames 0 user-frames 7 switch-outs 2"* ]]
	out=$(hexdump out.msr)
	# [34, 7, 7, 4, 0, 1, sleeping, stack 0] and [34, 7, 7, 5, 0, 2, blocked, stack 1]:
	# the first switch-out's stack is the sample's, defined once
	[[ "$out" == *"98220707040001""02""00"* ]]
	[[ "$out" == *"98220707050002""03""01"* ]]
	# no switch-out goes on; the switch, off-cpu, interval and tracepoint records do, as they were
	[[ "$out" != *"dc00101d"* ]]
	[[ "$out" == *"$(switch | od -An -v -tx1 | tr -d ' \n')"* ]]
	[[ "$out" == *"$(off_cpu | od -An -v -tx1 | tr -d ' \n')"* ]]
	[[ "$out" == *"$(interval | od -An -v -tx1 | tr -d ' \n')"* ]]
	[[ "$out" == *"$(tracepoint | od -An -v -tx1 | tr -d ' \n')"* ]]
}

@test "ms-unwind: ms-symbolize gives facts for frames only switch-outs use, and passes off-CPU records" {
	require_built ms-symbolize
	off_cpu_stream in.msr
	ms-unwind in.msr > unwound.msr
	ms-symbolize --stats unwound.msr > out.msr 2> symbolize.err
	out=$(hexdump out.msr)
	# a frame fact [40, module, 0x10030, ...] for the frame only the blocked switch-out has
	[[ "$out" =~ 28..ce00010030 ]]
	[[ "$out" == *"98220707050002""03""01"* ]]
	[[ "$out" == *"$(switch | od -An -v -tx1 | tr -d ' \n')"* ]]
	[[ "$out" == *"$(interval | od -An -v -tx1 | tr -d ' \n')"* ]]
}

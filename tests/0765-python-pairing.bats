#!/usr/bin/env bats
# ms-decode pairs the Python walker's records with their samples
# (perf/pypair.h), end to end over a hand-built ms-collect stream
# (tests/unit/mkpairstream: the cases of tests/unit/pystream.h's
# pys_scenario()): each PY_STACK goes just before its SAMPLE with the
# sample's pid, tid, time and cpu (mkpairstream --list fails otherwise), the
# record pairs with the next sample of its thread on its ring, and every
# record dropped is a counted problem. The same from a file (samples
# deferred or referring to it) and from a pipe.
#
# Run by hand: MS_BUILDDIR=$PWD MS_SRCDIR=$PWD bats tests/0765-python-pairing.bats

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	PATH=$MS_BUILDDIR:$PATH
	MKPY=$MS_BUILDDIR/tests/unit/mkpairstream
	T=$BATS_TEST_TMPDIR
	"$MKPY" > "$T/in.msr"
	cat > "$T/want" <<'WANT'
sample 101 cpu 0 +1 py 3 0x101001
sample 103 cpu 1 +5
sample 104 cpu 1 +7
sample 103 cpu 1 +8 py 1 0x103001
sample 102 cpu 0 +10 py 2 0x102001
sample 105 cpu 1 +32
sample 108 cpu 0 +100000001 py 1 0x108001
sample 106 cpu 2 +42 py 4 0x106001
sample 109 cpu 0 +200000000
sample 109 cpu 0 +1000000000
sample 109 cpu 0 +1500000000
sample 107 cpu 3 +1500000001
problem py-record-lost 1
problem out-of-order 1
problem py-record-expired 1
problem py-record-at-end 1
WANT
}

@test "ms-decode writes each PY_STACK just before its sample, from a file" {
	ms-decode "$T/in.msr" > "$T/out.msr"
	"$MKPY" --list < "$T/out.msr" > "$T/got"
	diff -u "$T/want" "$T/got"
}

@test "ms-decode pairs the same through a pipe, and with the stacks referred to" {
	ms-decode < "$T/in.msr" | "$MKPY" --list > "$T/got"
	diff -u "$T/want" "$T/got"
	ms-decode --stack-bytes=refer "$T/in.msr" | "$MKPY" --list > "$T/got"
	diff -u "$T/want" "$T/got"
}

@test "ms-decode --stats counts the walker's records and what became of them" {
	# shellcheck disable=SC2016 # $1: the inner shell's argument
	run --separate-stderr bash -c 'ms-decode --stats "$1" > /dev/null' _ "$T/in.msr"
	[ "$status" -eq 0 ]
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	echo "$stderr"
	grep -qx 'ms-decode: stats: bpf records 8' <<< "$stderr"
	grep -qx 'ms-decode: stats: python records 8 paired 5 unpaired 0 lost 1 full 0 expired 1 at-end 1 bad-ring 0' <<< "$stderr"
	grep -qx 'ms-decode: stats: out py-stack 5' <<< "$stderr"
	grep -qx 'ms-decode: stats: out sample 12' <<< "$stderr"
}

@test "a dropped record's problem names its thread, its cpu and its time" {
	ms-decode "$T/in.msr" > "$T/out.msr"
	# the problems' first examples, as msgpack strings in the stream
	grep -aq 'lost after a python walker record of thread 105 on cpu 1 (time 5000000030)' "$T/out.msr"
	grep -aq 'python walker record of thread 107 on cpu 3 (time 5000000041) had not come' "$T/out.msr"
	grep -aq 'ended between a python walker record of thread 110 on cpu 3' "$T/out.msr"
}

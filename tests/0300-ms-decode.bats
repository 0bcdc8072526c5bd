#!/usr/bin/env bats
# ms-decode as a command: bad input of every kind ends in a controlled error
# naming the stage, the input and the position; good input passes through;
# and, where ms-collect exists, the real kernel's records decode to samples.
# Streams are written byte by byte here (msgpack), so that each test says
# exactly what it feeds in.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	cd "$BATS_TEST_TMPDIR" || return
}

# [0, "microscope-stream", MAJOR, 0, [["test", "1.0"]]]
header() {
	printf '\x95\x00\xb1microscope-stream'
	printf '%b' "\\x$(printf %02x "${1:-1}")"
	printf '\x00\x91\x92\xa4test\xa31.0'
}

# [1, N, true] for N < 65536
trailer() {
	if [ "$1" -lt 128 ]; then
		printf '%b' "\\x93\\x01\\x$(printf %02x "$1")\\xc3"
	else
		printf '%b' "\\x93\\x01\\xcd\\x$(printf %02x $(($1 >> 8)))\\x$(printf %02x $(($1 & 255)))\\xc3"
	fi
}

# [3, "k", 1]: an info record
info() {
	printf '\x93\x03\xa1k\x01'
}

# [10, 1, 0, sample_type TIME, 0, 0, 0, 0, []]: samples hold only a time
attr() {
	printf '\x99\x0a\x01\x00\x04\x00\x00\x00\x00\x90'
}

# [11, cpu 0, bin]: a PERF_RECORD_SAMPLE of 16 bytes with time $1 (< 256)
raw_sample() {
	printf '\x93\x0b\x00\xc4\x10'
	printf '\x09\x00\x00\x00\x02\x00\x10\x00'
	printf '%b' "\\x$(printf %02x "$1")\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
}

# [11, cpu 0, bin]: a PERF_RECORD_SAMPLE whose header claims 24 bytes of 16
raw_bad_size() {
	printf '\x93\x0b\x00\xc4\x10'
	printf '\x09\x00\x00\x00\x02\x00\x18\x00'
	printf '\x01\x00\x00\x00\x00\x00\x00\x00'
}

# [14]
round() {
	printf '\x91\x0e'
}

@test "ms-decode --version and --help" {
	run --separate-stderr ms-decode --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^ms-decode\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	run --separate-stderr ms-decode --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: ms-decode [--stack-bytes=auto|copy|refer] [FILE]"* ]]
	[[ "$output" == *"Exit status"* ]]
	# --stats is for tests: documented in the man page, not in --help
	[[ "$output" != *--stats* ]]
	man -l "$MS_SRCDIR/man/ms-decode.1" 2>/dev/null | col -b | grep -q -e '--stats'
}

@test "ms-decode: an unknown option and two inputs are usage errors" {
	run --separate-stderr ms-decode --frobnicate
	[ "$status" -eq 2 ]
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *frobnicate* ]]
	run --separate-stderr ms-decode a b
	[ "$status" -eq 2 ]
}

@test "ms-decode: garbage input is an error naming the stage and the input" {
	printf 'this is not a stream\n' > garbage
	run --separate-stderr ms-decode garbage
	[ "$status" -eq 1 ]
	[[ "$stderr" == ms-decode:* ]]
	[[ "$stderr" == *garbage* ]]
	[ -z "$output" ]
	# random bytes on stdin
	head -c 4096 /dev/urandom > noise
	run --separate-stderr ms-decode < noise
	[ "$status" -eq 1 ]
	[[ "$stderr" == ms-decode:*stdin* ]]
}

@test "ms-decode: an empty input and a missing file are errors" {
	: > empty
	run --separate-stderr ms-decode empty
	[ "$status" -eq 1 ]
	[[ "$stderr" == ms-decode:*empty* ]]
	run --separate-stderr ms-decode no-such-file
	[ "$status" -eq 1 ]
	[[ "$stderr" == *no-such-file* ]]
}

@test "ms-decode: a stream of a newer major version is refused" {
	{ header 2; trailer 0; } > newer
	run --separate-stderr ms-decode newer
	[ "$status" -eq 1 ]
	[[ "$stderr" == ms-decode:*newer* ]]
	[[ "$stderr" == *"version 2"* ]]
}

@test "ms-decode: garbage after a good header names the byte offset" {
	{ header; info; printf '\xc1\xc1\xc1'; } > bad
	run --separate-stderr ms-decode bad
	[ "$status" -eq 1 ]
	[[ "$stderr" == ms-decode:*bad* ]]
	# the header takes 33 bytes, the info record 5
	[[ "$stderr" == *"byte 38"* ]]
}

@test "ms-decode: a stream cut short passes on what was decoded, without a trailer, and exits 3" {
	{ header; attr; raw_sample 5; round; raw_sample 7; } > cut.msr
	run --separate-stderr ms-decode --stats cut.msr
	[ "$status" -eq 3 ]
	[[ "$stderr" == ms-decode:*"'cut.msr'"* ]]
	[[ "$stderr" == *"cut short"* ]]
	[[ "$stderr" =~ byte\ [0-9]+ ]]
	[[ "$stderr" == *"stats: out sample 2"* ]]
	# the output is a stream cut short too: the next stage says so
	ms-decode cut.msr > out 2>/dev/null || true
	run --separate-stderr ms-decode out
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"cut short"* ]]
	# a record cut in the middle
	{ header; attr; raw_sample 5; } | head -c -3 > cut2
	run --separate-stderr ms-decode cut2
	[ "$status" -eq 3 ]
	[[ "$stderr" == ms-decode:*cut2* ]]
}

@test "ms-decode: records it does not consume pass through, the header names it" {
	{ header; info; attr; info; trailer 3; } > in
	run --separate-stderr ms-decode --stats in
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"stats: in info 2"* ]]
	[[ "$stderr" == *"stats: out info 2"* ]]
	[[ "$stderr" == *"stats: out attr 1"* ]]
	ms-decode in > out
	grep -a -q 'ms-decode' out
	grep -a -q 'test' out
	# its output is a complete stream that ms-decode reads again
	run --separate-stderr ms-decode --stats out
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"stats: out info 2"* ]]
}

@test "ms-decode: raw records are decoded in time order, rounds consumed, bad ones counted" {
	# ring order 9 3 | round | 5 1 (1 came late: out of order) | a bad record
	{ header; attr; raw_sample 9; raw_sample 3; round; raw_sample 5; round
	  raw_sample 1; raw_bad_size; trailer 8; } > in
	run --separate-stderr ms-decode --stats in
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"stats: in raw 5"* ]]
	[[ "$stderr" == *"stats: in round 2"* ]]
	[[ "$stderr" == *"stats: out sample 4"* ]]
	[[ "$stderr" == *"stats: out problem 2"* ]]
	[[ "$stderr" == *"stats: skipped 1"* ]]
	[[ "$stderr" != *"out round"* ]]
	ms-decode in > out
	grep -a -q 'bad-record-size' out
	grep -a -q 'out-of-order' out
}

@test "ms-decode: a raw record before any attr record is an error with its offset" {
	{ header; raw_sample 1; trailer 1; } > in
	run --separate-stderr ms-decode in
	[ "$status" -eq 1 ]
	[[ "$stderr" == ms-decode:*in*"byte 33"*attr* ]]
}

@test "ms-decode: a closed downstream ends it with status 5 and one message" {
	{ header; for _ in $(seq 20000); do info; done; trailer 20000; } > big
	# shellcheck disable=SC2016 # PIPESTATUS is the inner bash's
	run --separate-stderr bash -c 'ms-decode big | head -c 1 > /dev/null; exit ${PIPESTATUS[0]}'
	[ "$status" -eq 5 ]
	[ "$(grep -c . <<<"$stderr")" -eq 1 ]
	[[ "$stderr" == ms-decode:*pipe* ]]
}

@test "ms-decode: ms-collect's records of a real run decode to samples" {
	require_built ms-collect
	require_built "$MS_BUILDDIR/tests/fixtures/burn"
	ms-collect -- "$MS_BUILDDIR/tests/fixtures/burn" 0.5 > run.msr 2> collect.err || {
		cat collect.err >&2
		false
	}
	run --separate-stderr ms-decode --stats run.msr
	[ "$status" -eq 0 ] || { echo "$stderr" >&2; false; }
	samples=$(sed -n 's/^ms-decode: stats: out sample \([0-9]*\)$/\1/p' <<<"$stderr")
	raws=$(sed -n 's/^ms-decode: stats: in raw \([0-9]*\)$/\1/p' <<<"$stderr")
	skipped=$(sed -n 's/^ms-decode: stats: skipped \([0-9]*\)$/\1/p' <<<"$stderr")
	echo "raw $raws, samples $samples, skipped $skipped" >&2
	# about 500 at ms-collect's default rate; 0.5 s of burning at least
	[ "${samples:-0}" -gt 100 ]
	[[ "$stderr" == *"stats: out mmap "* ]]
	[[ "$stderr" == *"stats: out comm "* ]]
	# nothing the kernel wrote for this run is malformed
	[[ "$stderr" != *truncated* ]]
	[[ "$stderr" != *"out-of-order"* ]]
	# and the same through a pipe
	ms-collect -- "$MS_BUILDDIR/tests/fixtures/burn" 0.3 2>/dev/null | ms-decode > piped
	[ -s piped ]
}

# A saved stream of the recursion fixture (stack copies of 8 KiB).
recorded() {
	require_built ms-collect
	require_built "$MS_BUILDDIR/tests/fixtures/recurse"
	ms-collect -F 999 -- "$MS_BUILDDIR/tests/fixtures/recurse" 0.3 40 > run.msr 2> collect.err || {
		cat collect.err >&2
		false
	}
}

@test "ms-decode: through a pipe, samples refer to the saved stream's stack copies; into a file they carry them" {
	recorded
	ms-decode run.msr | ms-unwind > piped.unw
	ms-decode --stack-bytes=copy run.msr | ms-unwind > copied.unw
	ms-decode run.msr > run.dec
	ms-unwind run.dec > saved.unw
	ms-decode --stack-bytes=refer run.msr > run.ref
	ms-unwind run.ref > referred.unw
	# the same stacks whichever way the bytes went
	cmp piped.unw copied.unw
	cmp piped.unw saved.unw
	cmp piped.unw referred.unw
	# a stream that refers is a small fraction of one that carries
	echo "carrying $(stat -c %s run.dec) bytes, referring $(stat -c %s run.ref)" >&2
	[ $(($(stat -c %s run.ref) * 10)) -lt "$(stat -c %s run.dec)" ]
	ms-decode --stats run.msr 2> file.err > /dev/null
	[[ "$(cat file.err)" == *"out stack-file 1"* ]]
	ms-decode --stats run.msr 2> file.err > out.dec
	[[ "$(cat file.err)" != *"out stack-file"* ]]
}

@test "ms-unwind: stack copies in a file that changed or went away are refused, saying how to carry them" {
	recorded
	ms-decode --stack-bytes=refer run.msr > run.ref
	touch -d '2001-02-03' run.msr
	run --separate-stderr ms-unwind run.ref
	[ "$status" -eq 1 ]
	[ "$(grep -c . <<<"$stderr")" -eq 1 ]
	[[ "$stderr" == "ms-unwind: 'run.ref': "*"$PWD/run.msr"*"not the one ms-decode read"*"--stack-bytes=copy"* ]]
	ms-decode --stack-bytes=refer run.msr > run.ref
	mv run.msr moved.msr
	run --separate-stderr ms-unwind run.ref
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cannot be opened here"*"--stack-bytes=copy"* ]]
}

@test "ms-decode: --stack-bytes=refer needs a file input; a bad value is a usage error" {
	recorded
	run --separate-stderr bash -c 'cat run.msr | ms-decode --stack-bytes=refer > out'
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-decode: 'stdin': cannot refer to the stack copies in the input: "*"--stack-bytes=copy"* ]]
	# auto carries them when it cannot refer
	# shellcheck disable=SC2002 # ms-decode reads a pipe here, not a file
	cat run.msr | ms-decode | ms-unwind > a.unw
	ms-decode --stack-bytes=copy run.msr | ms-unwind > b.unw
	cmp a.unw b.unw
	run --separate-stderr ms-decode --stack-bytes=some run.msr
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--stack-bytes must be auto, copy or refer, not 'some'"* ]]
}

# ---- off-CPU: sched_switch samples and switch records ----

# Bytes from hex digits ("0a1b" -> \x0a\x1b).
hex() {
	# shellcheck disable=SC2001 # one substitution per pair of digits: sed says it simply
	printf '%b' "$(sed 's/../\\x&/g' <<<"$1")"
}

# The stream's bytes as one line of hex digits.
hexdump() {
	od -An -v -tx1 "$1" | tr -d ' \n'
}

# A little-endian u64 of $1 (< 256) as hex.
le64() {
	printf '%02x00000000000000' "$1"
}

# [17, 372, "sched:sched_switch", ["prev_pid", "prev_state"], [8, 16], [4, 8], [1, 1]]
tracepoint() {
	printf '\x97\x11\xcd\x01\x74\xb2sched:sched_switch\x92\xa8prev_pid\xaaprev_state'
	printf '\x92\x08\x10\x92\x04\x08\x92\x01\x01'
}

# [10, PERF_TYPE_TRACEPOINT, 372, TID|TIME|ID|RAW, 0, 0, 0, sample_id_all, [50]]
tp_attr() {
	printf '\x99\x0a\x02\xcd\x01\x74\xcd\x04\x46\x00\x00\x00\x01\x91\x32'
}

# [10, 1, 0, TID|TIME|ID, 0, 0, 0, sample_id_all, [42]]: the sampler, last
sampler_attr() {
	printf '\x99\x0a\x01\x00\x46\x00\x00\x00\x01\x91\x2a'
}

# [11, cpu 0, bin]: a sched_switch sample of pid 100 tid 101 at time $1
# (< 256), id ${4:-50}, whose 28 bytes of raw data hold prev_pid $2 at 8
# and prev_state $3 at 16
raw_switch_out() {
	hex "930b00c440""090000000100400064000000650000""00$(le64 "$1")$(le64 "${4:-50}")"
	hex "1c000000""0000000000000000""$(printf %02x "$2")000000""00000000"
	hex "$(printf %04x "$3" | sed 's/\(..\)\(..\)/\2\1/')000000000000""00000000"
}

# [11, cpu 0, bin]: a PERF_RECORD_SWITCH with misc $1 (hex, as its two bytes)
# at time $2, of pid 100 tid 101, event 50: the trailer only
raw_switch() {
	hex "930b00c420""0e000000$1""2000""6400000065000000$(le64 "$2")$(le64 50)"
}

# [11, cpu 0, bin]: a sample of the sampler at time $1
raw_cpu_sample() {
	hex "930b00c420""0900000002002000""6400000065000000$(le64 "$1")$(le64 42)"
}

@test "ms-decode: sched_switch samples become switch-outs, switch records switches, in time order" {
	{ header; tracepoint; tp_attr; sampler_attr
	  # ring 0, then ring 1 (cpu 0 both: the order is by time), then a round
	  raw_switch_out 30 101 1; raw_switch 0020 31; raw_switch_out 50 101 256
	  raw_switch 0060 51
	  raw_cpu_sample 20; raw_switch 0000 40
	  raw_switch_out 60 99 1; raw_switch_out 70 101 1 51
	  round; trailer 12; } > in
	run --separate-stderr sh -c 'exec ms-decode --stats in > /dev/null'
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"stats: out tracepoint 1"* ]]
	[[ "$stderr" == *"stats: out sample 1"* ]]
	[[ "$stderr" == *"stats: out switch 3"* ]]
	[[ "$stderr" == *"stats: out switch-out 2"* ]]
	[[ "$stderr" == *"stats: skipped 2"* ]]
	ms-decode in > out
	grep -a -q 'switch-out-tid-mismatch' out
	grep -a -q 'unknown-id' out
	# sample 20; switch-out 30 (state 1, sleeping); switch out 31; switch in
	# 40; switch-out 50 (state 0x100, preempted); switch out preempted 51:
	# one run of records, in this order
	expect="9e14""6465""14""00""00""00""02""90""90""00""00""c400""c400"
	expect+="dc0010""1d""6465""1e""00""00""00""01""90""90""00""00""c400""c400""01""02"
	expect+="971c""6465""1f""00""c3""c2"
	expect+="971c""6465""28""00""c2""c2"
	expect+="dc0010""1d""6465""32""00""00""00""01""90""90""00""00""c400""c400""cd0100""01"
	expect+="971c""6465""33""00""c3""c3"
	[[ "$(hexdump out)" == *"$expect"* ]]
}

@test "ms-decode: a switch-out without its tracepoint's format, or cut short, is counted and skipped" {
	# no TRACEPOINT record
	{ header; tp_attr; sampler_attr; raw_switch_out 30 101 1; raw_cpu_sample 20
	  trailer 4; } > in
	run --separate-stderr sh -c 'exec ms-decode --stats in > /dev/null'
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"stats: out sample 1"* ]]
	[[ "$stderr" == *"stats: skipped 1"* ]]
	ms-decode in > out
	grep -a -q 'no-tracepoint-format' out
	# a switch record cut to its header and 16 bytes: no room for the trailer
	{ header; tracepoint; tp_attr; sampler_attr
	  hex "930b00c418""0e00000000201800""6400000065000000$(le64 31)"
	  trailer 4; } > in2
	run --separate-stderr sh -c 'exec ms-decode --stats in2 > /dev/null'
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"stats: skipped 1"* ]]
	[[ "$stderr" != *"out switch "* ]]
	ms-decode in2 > out2
	grep -a -q 'truncated-record' out2
}

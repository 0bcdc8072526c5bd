#!/usr/bin/env bats
# ms-collect --bpf-sampler on the real kernel: the BPF program loads (the
# verifier accepts it, the Python walker included) and is attached to
# every sampler event, those threads inherit after the attach included,
# and the samples are written as always; a process without a py_layout
# (no Python walked: every process until ms-collect fills py_layouts) gets
# no record; a recorder outside the initial pid namespace is refused
# before anything starts. Per thread and CPU counts come from
# `bpfrecord-test --pairs` (tests/unit/bpfrecord-test.c), which decodes
# the stream with ms_decode(). The walker's records, one beside each
# sample of a Python process, are tests/0770-python-walker.bats's.
#
# Run by hand: MS_BUILDDIR=$PWD MS_SRCDIR=$PWD bats tests/0760-bpf-sampler.bats

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T=$BATS_TEST_TMPDIR
	PAIRS=$MS_BUILDDIR/tests/unit/bpfrecord-test
}

# $1 samples or more in all, no BPF record (no process has a py_layout),
# nothing skipped.
check_no_records() {
	local min=$1
	"$PAIRS" --pairs < "$T/s.msr" > "$T/pairs"
	awk -v min="$min" '
		$1 == "tid" && $8 != 0 { print "thread " $2 " on cpu " $4 ": " $8 " records"; bad = 1 }
		$1 == "samples" {
			if ($2 < min) { print "only " $2 " samples"; bad = 1 }
			if ($4 != 0) { print $4 " records"; bad = 1 }
			if ($6 != 0) { print $6 " records skipped"; bad = 1 }
			done = 1
		}
		END { exit bad || !done }' "$T/pairs" || { cat "$T/pairs"; return 1; }
}

@test "ms-collect --help says --bpf-sampler is internal and experimental" {
	run --separate-stderr ms-collect --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--bpf-sampler"*"internal, experimental"* ]]
}

@test "the program loads, and writes nothing for a program that is not Python" {
	run --separate-stderr ms-collect --bpf-sampler -F 999 -o "$T/s.msr" -- "$FIXTURES/burn"
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	echo "$stderr"
	[ "$status" -eq 0 ]
	check_no_records 500
	[ "$(grep -c '^tid' "$T/pairs")" -ge 1 ]
	run --separate-stderr ms-decode --stats "$T/s.msr"
	[ "$status" -eq 0 ]
	grep -q '^ms-decode: stats: skipped 0$' <<< "$stderr"
}

@test "threads created after the attach are sampled as always (inherited events)" {
	run --separate-stderr ms-collect --bpf-sampler -F 499 -o "$T/s.msr" -- \
		"$FIXTURES/threads" 4 1
	echo "$stderr"
	[ "$status" -eq 0 ]
	# (a loaded machine may give far fewer than 4 x 499)
	check_no_records 200
	# the main thread and its four workers, each created after the gate
	[ "$(awk '$1 == "tid" { print $2 }' "$T/pairs" | sort -u | wc -l)" -ge 4 ]
}

@test "attached to a running process: its threads are sampled as always" {
	"$FIXTURES/threads" 2 20 > "$T/bg.out" 3>&- &
	bg=$!
	for _ in $(seq 50); do grep -q ready "$T/bg.out" && break; sleep 0.1; done
	run --separate-stderr ms-collect --bpf-sampler --duration 1 -o "$T/s.msr" -p "$bg"
	kill "$bg"
	wait "$bg" || true
	echo "$stderr"
	[ "$status" -eq 0 ]
	check_no_records 300
}

@test "a recorder in a nested pid namespace is refused before the program starts" {
	command -v unshare > /dev/null || skip "no unshare"
	run --separate-stderr unshare -p -f --mount-proc \
		ms-collect --bpf-sampler -o "$T/s.msr" -- sh -c ": > '$T/ran'"
	echo "$stderr"
	[ "$status" -eq 4 ]
	[[ "$stderr" == *"is pid namespace"*"not the initial one"* ]]
	[[ "$stderr" == *"needs the recorder in the initial pid namespace"* ]]
	[ ! -e "$T/ran" ]
	[ ! -e "$T/s.msr" ]
}

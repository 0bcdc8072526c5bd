#!/usr/bin/env bats
# ms-collect --bpf-sampler on the real kernel: the BPF program loads (the
# verifier accepts it), runs on every sample of every thread, those
# created after it was attached included (inherited events), and writes
# one record beside each sample into the same ring; ms-decode checks and
# counts them; a recorder outside the initial pid namespace is refused
# before anything starts. Per thread and CPU counts come from
# `bpfrecord-test --pairs` (tests/unit/bpfrecord-test.c), which decodes
# the stream with ms_decode().
#
# Run by hand: MS_BUILDDIR=$PWD MS_SRCDIR=$PWD bats tests/0760-bpf-sampler.bats

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T=$BATS_TEST_TMPDIR
	PAIRS=$MS_BUILDDIR/tests/unit/bpfrecord-test
}

# Every (thread, cpu) has as many BPF records as samples, within $2, and
# $1 samples or more in all; nothing was skipped.
check_pairs() {
	local min=$1 slack=$2
	"$PAIRS" --pairs < "$T/s.msr" > "$T/pairs"
	awk -v min="$min" -v slack="$slack" '
		$1 == "tid" {
			d = $6 - $8; if (d < 0) d = -d
			if (d > slack) { print "thread " $2 " on cpu " $4 ": " $6 " samples, " $8 " records"; bad = 1 }
			if ($8 == 0) { print "thread " $2 " on cpu " $4 ": no record"; bad = 1 }
		}
		$1 == "samples" {
			if ($2 < min) { print "only " $2 " samples"; bad = 1 }
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

@test "the program loads and writes one record per sample of a one-thread program" {
	run --separate-stderr ms-collect --bpf-sampler -F 999 -o "$T/s.msr" -- "$FIXTURES/burn"
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	echo "$stderr"
	[ "$status" -eq 0 ]
	check_pairs 500 2
	# at least one thread
	[ "$(grep -c '^tid' "$T/pairs")" -ge 1 ]
	run --separate-stderr ms-decode --stats "$T/s.msr"
	[ "$status" -eq 0 ]
	samples=$(sed -n 's/^ms-decode: stats: out sample //p' <<< "$stderr")
	records=$(sed -n 's/^ms-decode: stats: bpf records //p' <<< "$stderr")
	[ -n "$records" ]
	assert_near "$records" "$samples" 2 "bpf records against samples"
	grep -q '^ms-decode: stats: skipped 0$' <<< "$stderr"
}

@test "threads created after the attach run the program too (inherited events)" {
	run --separate-stderr ms-collect --bpf-sampler -F 499 -o "$T/s.msr" -- \
		"$FIXTURES/threads" 4 1
	echo "$stderr"
	[ "$status" -eq 0 ]
	check_pairs 600 2
	# the main thread and its four workers, each created after the gate
	[ "$(awk '$1 == "tid" { print $2 }' "$T/pairs" | sort -u | wc -l)" -ge 4 ]
}

@test "attached to a running process: its threads' samples have their records" {
	"$FIXTURES/threads" 2 20 > "$T/bg.out" 3>&- &
	bg=$!
	for _ in $(seq 50); do grep -q ready "$T/bg.out" && break; sleep 0.1; done
	run --separate-stderr ms-collect --bpf-sampler --duration 1 -o "$T/s.msr" -p "$bg"
	kill "$bg"
	wait "$bg" || true
	echo "$stderr"
	[ "$status" -eq 0 ]
	# samples taken between an event's open and the program's attach have none
	check_pairs 300 3
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

#!/usr/bin/env bats
# The GIL as label spans end to end (issue 20 item 6): `microscope record
# --python bpf` over pywork.py's spinning threads, whose Python code runs
# only while they hold the GIL. ms-unwind makes the spans (unit tests:
# tests/unit/gil-labels-test), the capture keeps them and every view
# reads them (tests/unit/caplabels-test).

# shellcheck disable=SC2154 # output, status: set by bats's run
bats_require_minimum_version 1.5.0
load test_helper

PY311=/usr/bin/python3.11
PY312=/root/.pyenv/versions/3.12.1/bin/python3.12

setup() {
	CAPLABELS="$MS_BUILDDIR/tests/unit/caplabels"
	require_built microscope ms-analyze ms-capture "$CAPLABELS"
	cd "$BATS_TEST_TMPDIR" || return
	export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
	WORK=$MS_SRCDIR/tests/fixtures/pywork.py
}

teardown() {
	no_leftover_processes
}

# record CAPTURE PYTHON: pywork.py's three spinning threads for 1.5 s.
record() {
	[ -x "$2" ] || { echo "no interpreter at $2 (scripts/install-deps installs it)" >&2; return 1; }
	microscope record --python bpf -o "$1" -- "$2" "$WORK" threads 3 1.5 > out.txt 2> record.err ||
		{ cat record.err >&2; return 1; }
	grep -q '^ready ' out.txt
}

# gil_check PYTHON: the truth of the GIL's spans in one recording.
gil_check() {
	local total held spinners
	record t.msc "$1"
	# The spinning threads: those whose Python stacks show spin_I.
	ms-export --folded --look python --thread-root t.msc 2>/dev/null |
		awk '/spin_[0-9]+/ { split($1, f, ";"); print f[1] }' | sort -u > spinners.txt
	spinners=$(wc -l < spinners.txt)
	[ "$spinners" -ge 3 ] || { echo "$1: only $spinners threads ran spin_I" >&2; return 1; }
	# Most samples of each spinning thread lie under gil=held spans.
	ms-analyze threads --json t.msc > threads.json
	jq -r '.threads[] | "\(.tid) \(.samples) \([.labels[]? | select(.key == "gil" and
		.value == "held") | .total] | add // 0)"' threads.json > held.txt
	cat held.txt >&2
	while read -r root; do
		awk -v root="$root" '{ r = root; sub(/.*[^0-9]/, "", r) }
			$1 == r { found = 1; if ($3 * 100 < $2 * 75) { print "thread " r ": " $3 " of " $2 \
				" samples under gil=held"; bad = 1 } }
			END { if (!found) { print "no thread row for " root; bad = 1 } exit bad }' held.txt >&2
	done < spinners.txt
	# The spans of one thread never overlap (the dump's records, by their own times).
	ms-capture --dump t.msc | "$CAPLABELS" > spans.txt
	[ -s spans.txt ] || { echo "$1: no label spans" >&2; return 1; }
	sort -n -k2,2 -k3,3 spans.txt | awk '$6 != "gil" || ($7 != "held" && $7 != "released") {
			print "span of another label:", $0; bad = 1 }
		$3 > $4 || $5 < 1 { print "bad span:", $0; bad = 1 }
		$2 == tid && $3 <= end { print "overlaps the one before:", $0; bad = 1 }
		{ tid = $2; end = $4 } END { exit bad }' >&2
	# --label selects no more samples than there are, and all of those held.
	total=$(ms-analyze top --json t.msc | jq '.samples')
	held=$(ms-analyze top --label gil=held --json t.msc | jq '.samples')
	echo "$1: $held of $total samples under gil=held" >&2
	[ "$held" -gt 0 ] && [ "$held" -le "$total" ]
	[ "$held" -eq "$(jq '[.threads[].labels[]? | select(.value == "held") | .total] | add' threads.json)" ]
}

@test "spinning threads' samples lie under gil=held spans (python 3.12)" {
	gil_check "$PY312"
}

@test "spinning threads' samples lie under gil=held spans (Debian's python 3.11)" {
	gil_check "$PY311"
}

@test "--label: a key the capture lacks is refused with the reason; a malformed one is a usage error" {
	record t.msc "$PY312"
	run --separate-stderr ms-analyze top --label task=x t.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"has no label spans of the key 'task'"* ]]
	run --separate-stderr ms-analyze top --label gil t.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--label wants KEY=VALUE"* ]]
	run --separate-stderr ms-analyze summary --label gil=held t.msc
	[ "$status" -eq 2 ]
}

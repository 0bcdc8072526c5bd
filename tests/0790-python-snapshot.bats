#!/usr/bin/env bats
# Thread snapshots end to end (issue 20 item 7): `microscope record
# --python snapshot` reads every thread's Python frames from the live
# process every interval, without BPF, over real interpreters running
# tests/fixtures/pywork.py, whose call structure is known. Each thread
# is a task, each whole read a wait row at its stack; analysis weighs
# them in the unit "snapshots". The parts have their own tests: the
# collector (0776), ms-unwind and the capture (0777, unit tests), the
# views and exports (unit tests).

# shellcheck disable=SC2154 # output, status: set by bats's run
bats_require_minimum_version 1.5.0
load test_helper
load pywork_helper

setup() {
	require_built microscope ms-analyze ms-export ms-capture "$MS_BUILDDIR/tests/unit/captasks" \
		"$MS_BUILDDIR/tests/unit/caplabels"
	cd "$BATS_TEST_TMPDIR" || return
	export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
	WORK=$MS_SRCDIR/tests/fixtures/pywork.py
}

teardown() {
	no_leftover_processes
}

# record CAPTURE VERSION [--python-interval MS] -- ARGS...: pywork.py ARGS under --python snapshot.
record() {
	local cap=$1 py opts=()
	py=$(python_of "$2") || return 1
	shift 2
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	microscope record --python snapshot "${opts[@]}" -o "$cap" -- "$py" "$WORK" "$@" \
		> out.txt 2> record.err || { cat record.err >&2; return 1; }
	grep -q '^ready ' out.txt
}

# chain_check VERSION: the chain mode's truth in the snapshots.
chain_check() {
	local total chain line share h_all h_loop
	record c.msc "$1" -- chain 1.5
	ms-export --folded --weight snapshots --look python c.msc > python.folded 2>/dev/null
	total=$(awk '{ n += $NF } END { print n + 0 }' python.folded)
	# 1.5 s at 10 ms: some 150 rounds; a loaded machine runs fewer.
	[ "$total" -ge 40 ] || { echo "$1: only $total snapshots" >&2; return 1; }
	chain=$(awk -v f="$WORK" 'index($0, "<module> (" f ":") == 1 &&
		/;main \([^)]*\);f \([^)]*\);g \([^)]*\);h \([^)]*\) [0-9]+$/ { n += $NF } END { print n + 0 }' python.folded)
	echo "$1: $chain of $total snapshots are <module> > main > f > g > h" >&2
	at_least "$chain" "$total" 90
	# No native frame at all: a snapshot holds the thread's Python frames
	# only (or none, as the thread starts or ends: "[no frames]").
	run ! grep -v -e '^[^;]* ([^;]*:[0-9]*)\(;[^;]* ([^;]*:[0-9]*)\)* [0-9]*$' -e '^\[no frames\] [0-9]*$' python.folded
	# Lines: each caller on the line of its call, h in its loop.
	ms-analyze top --unit snapshots --by line --look python --json c.msc > lines.json
	for f in main:main-chain f:f g:g; do
		# (a sample may catch main in ready() before the chain, on its line)
		read -r line share < <(jq -r --arg n "${f%%:*}" '[.functions[] | select(.name == $n and
			(.file | endswith("/pywork.py")))] | group_by(.line) | map({line: .[0].line,
			total: (map(.total) | add)}) | (map(.total) | add) as $all | max_by(.total) |
			"\(.line) \(100 * .total / $all | floor)"' lines.json)
		if [ "$line" != "$(mark "${f#*:}")" ] || [ "$share" -lt 95 ]; then
			echo "$1: ${f%%:*} on line $line in $share%, not on $(mark "${f#*:}")" >&2
			return 1
		fi
	done
	h_all=$(jq '[.functions[] | select(.name == "h" and (.file | endswith("/pywork.py"))) | .self] | add' lines.json)
	h_loop=$(jq --argjson l "$(mark h)" '[.functions[] | select(.name == "h" and (.file | endswith("/pywork.py")) and (.line == $l or .line == $l - 1)) | .self] | add' lines.json)
	echo "$1: h on its loop's two lines in $h_loop of $h_all snapshots" >&2
	at_least "$h_loop" "$h_all" 90
	# The CPU samples stay native: the snapshot engine splices nothing into
	# them, and marks none as interpreted code it should have read.
	ms-export --folded c.msc > samples.folded 2>/dev/null
	run ! grep -q 'pywork\.py:' samples.folded
	run ! grep -q 'interpreted' samples.folded
	grep -q '_PyEval_EvalFrameDefault' samples.folded
}

@test "snapshots: Debian's python3.11 shows the script's functions and lines" {
	chain_check debian
}

@test "snapshots: pyenv's 3.11 shows the script's functions and lines" {
	chain_check 3.11
}

@test "snapshots: pyenv's 3.12 shows the script's functions and lines" {
	chain_check 3.12
}

@test "snapshots: pyenv's 3.13 shows the script's functions and lines" {
	chain_check 3.13
}

@test "snapshots: each thread's stacks name its own function only, and a sleeping thread is seen waiting" {
	local v threads pid main_all main_sleep
	for v in 3.12 debian; do
		record t.msc "$v" -- threads 4 1.5
		grep -q "snapshots of 5 tasks (--unit snapshots)" record.err
		ms-export --folded --weight snapshots --look python --thread-root t.msc > threads.folded 2>/dev/null
		awk '{ split($0, f, ";"); root = f[1]
			while (match($0, /spin_[0-9]+/)) { s = substr($0, RSTART, RLENGTH)
				if (!((root, s) in seen)) { seen[root, s] = 1; n[root]++; name[root] = name[root] " " s }
				$0 = substr($0, RSTART + RLENGTH) } }
			END { for (r in n) print r, n[r], name[r] }' threads.folded > spins.txt
		cat spins.txt >&2
		threads=$(wc -l < spins.txt)
		[ "$threads" -eq 4 ] || { echo "$v: $threads threads ran spin_I, not 4" >&2; return 1; }
		awk '$2 != 1 { print "a thread shows frames of several threads:", $0; bad = 1 } END { exit bad }' spins.txt >&2
		# The main thread sleeps in time.sleep, off CPU: CPU samples hardly
		# see it, snapshots find it waiting on its line.
		pid=$(sed -n 's/^ready //p' out.txt)
		ms-analyze top --unit snapshots --by line --look python --tid "$pid" --json t.msc > main.json
		main_all=$(jq '.snapshots' main.json)
		main_sleep=$(jq --argjson l "$(mark main-sleep)" '[.functions[] | select(.name == "main" and
			(.file | endswith("/pywork.py")) and .line == $l) | .self] | add // 0' main.json)
		echo "$v: the main thread waits on its sleep line in $main_sleep of $main_all snapshots" >&2
		at_least "$main_sleep" "$main_all" 80
	done
}

@test "snapshots: the GIL's held spans of two threads never overlap (one holder a round)" {
	local held
	record t.msc 3.12 -- threads 3 1.5
	ms-capture --dump t.msc | "$MS_BUILDDIR/tests/unit/caplabels" > spans.txt
	[ -s spans.txt ] || { echo "no label spans" >&2; return 1; }
	# Every span a gil label, start <= end; runs of one thread apart.
	sort -n -k2,2 -k3,3 spans.txt | awk '$6 != "gil" || ($7 != "held" && $7 != "released") {
			print "span of another label:", $0; bad = 1 }
		$3 > $4 || $5 < 1 { print "bad span:", $0; bad = 1 }
		$2 == tid && $3 <= end { print "overlaps the one before:", $0; bad = 1 }
		{ tid = $2; end = $4 } END { exit bad }' >&2
	# Held spans of all threads, by start: each starts after the last ended.
	awk '$7 == "held"' spans.txt | sort -n -k3,3 | awk '$3 <= end {
			print "held by two threads at once:", prev, "and", $0; bad = 1 }
		{ if ($4 > end) end = $4; prev = $0 } END { exit bad }' >&2
	held=$(awk '$7 == "held"' spans.txt | wc -l)
	[ "$held" -gt 0 ] || { echo "no thread was ever seen holding the GIL" >&2; return 1; }
	# The summary counts the spans' snapshots, not samples.
	ms-analyze summary t.msc | grep -q '^labels: .*gil=held ([0-9]* snapshots)'
	[ "$(ms-analyze summary --json t.msc | jq -r .labels.counts)" = snapshots ]
}

@test "snapshots: --python-interval spaces the rounds" {
	local gap
	record s.msc 3.12 --python-interval 50 -- chain 1.5
	# The main thread's snapshot times (its only thread); the median gap between two, in ms.
	"$MS_BUILDDIR/tests/unit/captasks" s.msc > waits.txt
	gap=$(awk '$1 == "wait" { print $3 }' waits.txt | sort -n | awk 'NR > 1 { print int(($1 - p) / 1000000) } { p = $1 }' |
		sort -n | awk '{ g[NR] = $1 } END { print g[int((NR + 1) / 2)] + 0 }')
	echo "median gap between rounds: $gap ms" >&2
	[ "$gap" -ge 45 ]
	run microscope record --python snapshot --python-interval 0 -o x.msc -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--python-interval"* ]]
}

@test "snapshots: a program without Python records as always, and the snapshot unit says there are none" {
	microscope record --python snapshot -o b.msc -- "$MS_BUILDDIR/tests/fixtures/burn" 0.3 > /dev/null 2> record.err ||
		{ cat record.err >&2; return 1; }
	ms-analyze top b.msc > /dev/null
	run ms-analyze top --unit snapshots b.msc
	[ "$status" -ne 0 ]
	[[ "$output" == *"--python snapshot"* ]]
}

@test "snapshots: every level of a recursion, in order, under main" {
	local total whole
	record r.msc 3.12 -- recurse 30 1.5
	ms-export --folded --weight snapshots --look python r.msc > python.folded 2>/dev/null
	total=$(awk '{ n += $NF } END { print n + 0 }' python.folded)
	whole=$(awk '/;main \([^)]*\);rec \(/ && /;rec \([^)]*\);h \([^)]*\) [0-9]+$/ {
		s = $0; k = gsub(/;rec \([^)]*\)/, "", s)
		if (k == 31 && s ~ /;main \([^)]*\);h \(/) n += $NF } END { print n + 0 }' python.folded)
	echo "$whole of $total snapshots are main > rec x31 > h" >&2
	at_least "$whole" "$total" 90
}

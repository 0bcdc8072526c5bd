#!/usr/bin/env bats
# Off-CPU time on the real kernel: `microscope record --off-cpu` over
# fixtures whose waits are known (tests/fixtures/offcpu: half asleep; a
# pipe reader, a mutex waiter, a lock holder; one long sleep), CPU-bound
# threads outnumbering the cores (preempted, not sleeping), a recording
# that ends while a thread sleeps, an attached process whose threads were
# already waiting, and rings too small to keep every record. The exact
# arithmetic over hand-built captures is tests/unit/offcpu-test.c's and
# intervals-test.c's.

# shellcheck disable=SC2154 # output, status: set by bats's run
load test_helper
bats_require_minimum_version 1.5.0

setup_file() {
	require_built microscope ms-analyze ms-export "$MS_BUILDDIR/tests/fixtures/offcpu" \
		"$MS_BUILDDIR/tests/unit/capintervals" "$MS_BUILDDIR/tests/unit/caplosses" \
		"$MS_BUILDDIR/tests/fixtures/threads" "$MS_BUILDDIR/tests/fixtures/switcher"
	cd "$BATS_FILE_TMPDIR" || return
	microscope record --off-cpu -o half.msc -- "$MS_BUILDDIR/tests/fixtures/offcpu" half 1 >half.out
	microscope record --preset wall -o waits.msc -- "$MS_BUILDDIR/tests/fixtures/offcpu" waits 1 >/dev/null
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return
}

teardown() {
	no_leftover_processes
}

# total_of JSON FUNCTION: the total of FUNCTION in ms-analyze top --json output.
total_of() {
	jq -r --arg f "$2" '[.functions[] | select(.name == $f) | .total] | add // 0' "$1"
}

# at_least A B PERCENT: A is at least PERCENT % of B.
at_least() {
	[ "$(( $1 * 100 ))" -ge "$(( $2 * $3 ))" ] || { echo "$1 is under $3% of $2" >&2; return 1; }
}

# points A B: |A - B| in percentage points, A and B shares from 0 to 1.
points() { awk -v a="$1" -v b="$2" 'BEGIN { d = (a - b) * 100; printf "%d\n", d < 0 ? -d : d }'; }

@test "half asleep: off CPU about half the time, sleeping, on a stack from the sleep call to main" {
	# the fixture's truth: its loop's wall time, its CPU time, its time in nap
	read -r _ wall_s _ cpu_s _ napped_s < <(grep '^wall ' half.out)
	ms-analyze wall --json half.msc > wall.json
	[ "$(jq '.threads | length' wall.json)" -eq 1 ]
	[ "$(jq -r '.unit' wall.json)" = ns ]
	[ "$(jq -r '.source' wall.json)" = cpu-sampling+intervals ]
	wall=$(jq '.threads[0].wall' wall.json)
	off=$(jq '.threads[0].off_cpu' wall.json)
	ms-analyze off-cpu --json half.msc > off.json
	sleeping=$(jq '.causes[] | select(.cause == "sleeping") | .total' off.json)
	off_share=$(awk -v o="$off" -v w="$wall" 'BEGIN { print o / w }')
	sleep_share=$(awk -v o="$sleeping" -v w="$wall" 'BEGIN { print o / w }')
	true_off=$(awk -v c="$cpu_s" -v w="$wall_s" 'BEGIN { print 1 - c / w }')
	true_sleep=$(awk -v n="$napped_s" -v w="$wall_s" 'BEGIN { print n / w }')
	echo "off CPU $off_share (truth $true_off), sleeping $sleep_share (truth $true_sleep)" >&2
	# within 5 points of the truth; alone on the machine the truth is 50 %
	[ "$(points "$off_share" "$true_off")" -le 5 ]
	[ "$(points "$sleep_share" "$true_sleep")" -le 5 ]
	[ "$(points "$true_sleep" 0.5)" -le 15 ]
	[ "$(jq '.incomplete.intervals' off.json)" -eq 0 ]
	# every sleeping interval's stack holds the sleep call, nap and main
	ms-analyze top --unit off-cpu --cause sleeping --json half.msc > top.json
	[ "$(jq -r '.source' top.json)" = intervals ]
	total=$(jq '.total' top.json)
	[ "$total" -eq "$sleeping" ]
	for f in __clock_nanosleep nap main; do
		[ "$(total_of top.json "$f")" -eq "$total" ] || { echo "$f: $(total_of top.json "$f") of $total" >&2; return 1; }
	done
	# the computing half is not off CPU
	[ "$(total_of top.json compute_slice)" -eq 0 ]
}

@test "a pipe reader and a mutex waiter: each thread's blocked time lands on its own wait" {
	for t in reader waiter holder; do
		ms-analyze top --unit off-cpu --thread "$t" --json waits.msc > "$t.json"
	done
	r=$(jq '.total' reader.json)
	w=$(jq '.total' waiter.json)
	h=$(jq '.total' holder.json)
	echo "off CPU: reader $r, waiter $w, holder $h ns" >&2
	# a 1 s run: each waits most of it
	for v in "$r" "$w" "$h"; do [ "$v" -ge 700000000 ]; done
	# the reader on read_pipe's read, in the kernel's pipe read
	at_least "$(total_of reader.json read_pipe)" "$r" 95
	at_least "$(total_of reader.json anon_pipe_read)" "$r" 95
	[ "$(total_of reader.json lock_mutex)" -eq 0 ]
	# the waiter on lock_mutex's futex wait
	at_least "$(total_of waiter.json lock_mutex)" "$w" 90
	at_least "$(total_of waiter.json __lll_lock_wait)" "$w" 90
	[ "$(total_of waiter.json read_pipe)" -eq 0 ]
	# the holder sleeps holding the lock: its time is hold_lock's, not a wait for the lock
	at_least "$(total_of holder.json hold_lock)" "$h" 90
	[ "$(total_of holder.json lock_mutex)" -eq 0 ]
	# the off-cpu view's wait sites: the system call and where the program made it
	ms-analyze off-cpu --json --thread reader waits.msc > reader-off.json
	jq -e '.causes[] | select(.cause == "sleeping") | .sites[0] |
	       .syscall == "read" and (.functions | map(.name) | index("read_pipe") != null)' reader-off.json
	ms-analyze off-cpu --json --thread waiter waits.msc > waiter-off.json
	jq -e '.causes[] | select(.cause == "sleeping") | .sites[0] |
	       .syscall == "futex" and (.functions | map(.name) | index("lock_mutex") != null)' waiter-off.json
	# none of it is called I/O or lock: the scheduler said sleeping
	ms-analyze off-cpu --json waits.msc > off.json
	for t in reader waiter holder; do
		s=$(jq --arg t "$t" '.threads[] | select(.name == $t) | .causes.sleeping' off.json)
		at_least "$s" "$(jq --arg t "$t" '.threads[] | select(.name == $t) | .total' off.json)" 90
	done
}

@test "CPU-bound threads outnumbering the cores are preempted, not sleeping" {
	n=$(( $(nproc) * 2 ))
	microscope record --off-cpu -o busy.msc -- "$MS_BUILDDIR/tests/fixtures/threads" "$n" 1 >/dev/null
	ms-analyze off-cpu --json busy.msc > off.json
	jq -c '.threads[]' off.json >&2
	workers=$(jq '[.threads[] | select(.name | startswith("worker-"))] | length' off.json)
	[ "$workers" -eq "$n" ]
	# each worker: preempted time and intervals, more of it than any sleep
	jq -e '[.threads[] | select(.name | startswith("worker-"))] |
	       all(.causes.preempted > 0 and .causes.preempted > .causes.sleeping and .intervals >= 5)' off.json
	# the main thread only waits for them (pthread_join): sleeping
	jq -e '.threads[] | select(.name == "threads") | .causes.sleeping > .causes.preempted' off.json
}

@test "recording stopped while a thread sleeps: an interval with its end missing, in no total" {
	microscope record --off-cpu --duration 0.4 -o asleep.msc -- \
		"$MS_BUILDDIR/tests/fixtures/offcpu" sleep 5 >/dev/null
	# (starting up, the thread may have been preempted: complete intervals of their own)
	ms-analyze off-cpu --cause sleeping --json asleep.msc > off.json
	[ "$(jq '.total' off.json)" -eq 0 ]
	[ "$(jq '.incomplete.intervals' off.json)" -eq 1 ]
	[ "$(jq -r '.incomplete.reasons[0].missing' off.json)" = ended-inside ]
	# what is known of it: from its start to the recording's end, about 0.4 s
	least=$(jq '.incomplete.reasons[0].at_least_ns' off.json)
	[ "$least" -ge 300000000 ]
	[ "$least" -le 500000000 ]
	run -0 ms-analyze problems asleep.msc
	[[ "$output" == *"ended-inside"* ]] || [[ "$output" == *"still off CPU when the recording ended"* ]]
	# exports give it no time
	ms-export --folded --weight off-cpu --cause sleeping asleep.msc > asleep.folded
	[ ! -s asleep.folded ] || [ "$(awk '{ s += $NF } END { print s + 0 }' asleep.folded)" -eq 0 ]
}

@test "attached to threads already waiting: intervals without a start, named so" {
	# a copy under the test's folder: teardown finds it if the test fails early
	cp "$MS_BUILDDIR/tests/fixtures/offcpu" "$BATS_TEST_TMPDIR/offcpu"
	"$BATS_TEST_TMPDIR/offcpu" waits 4 > fixture.out &
	fixture=$!
	for _ in $(seq 50); do grep -q '^ready' fixture.out && break; sleep 0.1; done
	grep -q '^ready' fixture.out
	microscope record --off-cpu -p "$fixture" --duration 0.5 -o attached.msc >/dev/null
	kill "$fixture" 2>/dev/null || true
	wait "$fixture" || true
	ms-analyze off-cpu --json attached.msc > off.json
	jq -c '.incomplete' off.json >&2
	began=$(jq '[.incomplete.reasons[] | select(.missing == "began-inside") | .intervals] | add // 0' off.json)
	[ "$began" -ge 1 ]
	# and the waits inside the recording are whole
	[ "$(jq '.intervals' off.json)" -ge 20 ]
}

@test "records lost: intervals that cannot be closed are incomplete and counted" {
	# rings of two pages cannot keep up with 20,000 switch-outs a second
	microscope record --off-cpu --mmap-pages 2 -o lossy.msc -- \
		"$MS_BUILDDIR/tests/fixtures/switcher" 0.5 >/dev/null 2>lossy.err
	ms-analyze summary --json lossy.msc > sum.json
	lost=$(jq '.lost.kernel + .lost.collector' sum.json)
	echo "lost $lost records" >&2
	[ "$lost" -gt 0 ]
	lost_ends=$(jq '.off_cpu.missing["lost-end"] + .off_cpu.missing["lost-start"]' sum.json)
	[ "$lost_ends" -gt 0 ]
	# counted apart, never in the total
	jq -e '.off_cpu.incomplete == (.off_cpu.missing | add)' sum.json
	ms-analyze off-cpu --json lossy.msc > off.json
	[ "$(jq '.incomplete.intervals' off.json)" -eq "$(jq '.off_cpu.incomplete' sum.json)" ]
	run -0 ms-analyze problems lossy.msc
	[[ "$output" == *lost-end* ]] || [[ "$output" == *"records were lost while it was off CPU"* ]]
	# no interval closed across a loss: the switch-in after it may not be its own
	"$MS_BUILDDIR/tests/unit/caplosses" lossy.msc | jq -r '.losses[].time' > losses.txt
	"$MS_BUILDDIR/tests/unit/capintervals" lossy.msc | awk '$4 == "complete" { print $2, $3 }' > complete.txt
	[ -s losses.txt ]
	[ -s complete.txt ]
	awk 'NR == FNR { t[++n] = $1; next }
	     { for (i = 1; i <= n; i++) if (t[i] > $1 && t[i] < $2) { print "closed across a loss at " t[i] ": " $0; exit 1 } }' \
		losses.txt complete.txt
}

@test "exports: pprof carries off-CPU time as its own sample type, folded weighs by it" {
	# go is installed by scripts/install-deps: its absence is a failure, not a skip
	command -v go >/dev/null || { echo "go is not installed (scripts/install-deps installs golang-go)" >&2; return 1; }
	ms-export --pprof waits.msc > waits.pb.gz
	run -0 go tool pprof -raw -sample_index=off-cpu waits.pb.gz
	[[ "$output" == *"off-cpu/nanoseconds"* ]]
	run -0 go tool pprof -top -sample_index=off-cpu -tagfocus=thread=reader waits.pb.gz
	[[ "$output" == *read_pipe* ]]
	[[ "$output" != *lock_mutex* ]]
	ms-export --folded --weight off-cpu waits.msc > waits.folded
	reader=$(grep ';read_pipe;' waits.folded | awk '{ s += $NF } END { print s + 0 }')
	r=$(ms-analyze top --unit off-cpu --thread reader --json waits.msc | jq '.total')
	# the reader's read time, in ns, with nothing else on read_pipe's lines
	[ "$reader" -eq "$(ms-analyze top --unit off-cpu --json waits.msc | jq '[.functions[] | select(.name == "read_pipe") | .total] | add')" ]
	at_least "$reader" "$r" 95
}

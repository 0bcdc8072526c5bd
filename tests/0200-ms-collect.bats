#!/usr/bin/env bats
# ms-collect on the real kernel: launch and attach, exit statuses, signals,
# --duration, refusals, and the output file. Streams are inspected with
# `collect-test --stream-stats` (tests/unit/collect-test.c), which reads
# RAW records itself, so these tests do not depend on ms-decode; one test
# also runs the stream through ms-decode when it is built.
#
# Run by hand: MS_BUILDDIR=/path/to/build PATH=$MS_BUILDDIR:$PATH bats tests/0200-ms-collect.bats

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?set MS_BUILDDIR to the build directory}"
	FIX=$MS_BUILDDIR/tests/fixtures
	T=$BATS_TEST_TMPDIR
	: > "$T/pids"
}

teardown() {
	# No process is left behind, whatever the test did.
	local p pids
	pids=$(cat "$T/pids" 2>/dev/null)
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null || true
	done
	for p in $pids; do
		wait "$p" 2>/dev/null || true
	done
}

# Print what a stream holds (see collect-test.c); fails if it does not parse.
stats() {
	"$MS_BUILDDIR/tests/unit/collect-test" --stream-stats < "$1" > "$T/stats"
}

# Start a fixture in the background, remembered for teardown.
start_bg() {
	"$@" > "$T/bg.out" 2>&1 3>&- &
	BG=$!
	echo "$BG" >> "$T/pids"
}

wait_ready() {
	local i
	for i in $(seq 200); do
		grep -q '^ready' "$T/bg.out" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "fixture never said ready" >&2
	return 1
}

# The number after "samples tid TID" in the stats, or 0.
samples_of() {
	awk -v tid="$1" '$1 == "samples" && $3 == tid { n = $4 } END { print n + 0 }' "$T/stats"
}

# Whether pid runs (exists and is neither a zombie nor dead).
proc_running() {
	[ -d "/proc/$1" ] || return 1
	grep -q -E '^State:[[:space:]]*[ZX]' "/proc/$1/status" 2>/dev/null && return 1
	return 0
}

# Fails when pid still runs, after waiting up to 2.5 s for it to end.
gone() {
	local i
	for i in $(seq 50); do
		proc_running "$1" || return 0
		sleep 0.05
	done
	echo "pid $1 still runs" >&2
	return 1
}

# Fails when the stats hold a line matching the pattern.
lacks() {
	if grep -q -E "$1" "$T/stats"; then
		echo "unexpected: $(grep -E "$1" "$T/stats" | head -1)" >&2
		return 1
	fi
}

@test "--help shows the synopsis, every option and the exit codes" {
	run -0 ms-collect --help
	[[ "$output" == *"usage: ms-collect [-o FILE] [-F HZ | -c PERIOD]"* ]]
	[[ "$output" == *"Exit status: 0 success"* ]]
	for opt in --output --freq --period --event --stack-size --duration --mmap-pages --pid; do
		[[ "$output" == *"$opt"* ]] || { echo "missing $opt"; return 1; }
	done
}

@test "the man page documents every option of --help" {
	man=$BATS_TEST_DIRNAME/../man/ms-collect.1
	# roff escapes hyphens: compare without the backslashes.
	sed 's/\\//g' "$man" > "$T/man.txt"
	run -0 ms-collect --help
	for opt in $(printf '%s\n' "$output" | grep -o -E -- '--[a-z-]+' | sort -u); do
		grep -q -F -- "$opt" "$T/man.txt" || { echo "man page lacks $opt"; return 1; }
	done
}

@test "--version prints the name and version" {
	run -0 ms-collect --version
	[[ "$output" =~ ^ms-collect\ [0-9]+\.[0-9]+ ]]
}

@test "launch: a complete stream with samples of the program, to a file" {
	run --separate-stderr -0 ms-collect -o "$T/run.msr" -- "$FIX/burn" 0.5
	stats "$T/run.msr"
	grep -q '^trailer complete 1$' "$T/stats"
	pid=$(awk '$1 == "target" { print $3 }' "$T/stats")
	grep -q "^target pid $pid launched 1 argc 2$" "$T/stats"
	grep -q "^target-exit pid $pid code 0$" "$T/stats"
	[ "$(samples_of "$pid")" -gt 20 ]
	# The preamble: facts, one ATTR with one id per CPU.
	for key in command hostname kernel event frequency stack-size cpus start-time end-time; do
		grep -q "^info $key " "$T/stats" || { echo "no info $key"; return 1; }
	done
	grep -q "^info event cpu-clock$" "$T/stats"
	grep -q "^info frequency 999$" "$T/stats"
	grep -q "^attr ids $(nproc) " "$T/stats"
	# Kernel comm record of the exec, rounds between passes.
	grep -q "^comm tid $pid burn$" "$T/stats"
	grep -q '^kind round ' "$T/stats"
	# Written under a temporary name, renamed: nothing else is left.
	[ -f "$T/run.msr" ]
	assert_no_files "$T/*run?msr?*"
}

@test "launch: the stream can go to a pipe; the program's stdout goes to stderr" {
	# shellcheck disable=SC2016 # $0 is the inner bash's
	run --separate-stderr -0 bash -c \
		'ms-collect -- sh -c "echo hello-from-target" | "$0" --stream-stats' \
		"$MS_BUILDDIR/tests/unit/collect-test"
	[[ "$output" == *"trailer complete 1"* ]]
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *"hello-from-target"* ]]
}

@test "launch: the stream goes through ms-decode" {
	require_built ms-decode
	ms-collect -o "$T/run.msr" -- "$FIX/burn" 0.5
	ms-decode < "$T/run.msr" > "$T/dec.msr"
	stats "$T/dec.msr"
	grep -q '^trailer complete 1$' "$T/stats"
	grep -q '^decoded-samples tid ' "$T/stats"
}

@test "launch: --stack-size 0 records no registers and no stack" {
	ms-collect --stack-size 0 -o "$T/run.msr" -- "$FIX/burn" 0.2
	stats "$T/run.msr"
	# IP TID TIME ID CPU PERIOD CALLCHAIN, without REGS_USER and STACK_USER
	grep -q '^attr ids [0-9]* sample_type 0x1e7 ' "$T/stats"
	grep -q '^info stack-size 0$' "$T/stats"
}

@test "launch: task-clock and a period" {
	ms-collect -e task-clock -c 1000000 -o "$T/run.msr" -- "$FIX/burn" 0.3
	stats "$T/run.msr"
	grep -q '^info event task-clock$' "$T/stats"
	grep -q '^info period 1000000$' "$T/stats"
	grep -q '^samples tid ' "$T/stats"
}

@test "launch: threads and children of the program are followed" {
	ms-collect -o "$T/run.msr" -- "$FIX/forkexec" "$FIX/burn" 0.3
	stats "$T/run.msr"
	parent=$(awk '$1 == "target" { print $3 }' "$T/stats")
	child=$(awk '$1 == "fork" { print $3; exit }' "$T/stats")
	[ -n "$child" ]
	[ "$(samples_of "$parent")" -gt 0 ]
	[ "$(samples_of "$child")" -gt 0 ]
	grep -q "^comm tid $child burn$" "$T/stats"
}

@test "launch: the program's exit status becomes ms-collect's" {
	run --separate-stderr -3 ms-collect -o "$T/run.msr" -- "$FIX/forkexec" /bin/sh -c 'exit 3'
	stats "$T/run.msr"
	grep -q '^target-exit pid [0-9]* code 3$' "$T/stats"
	grep -q '^trailer complete 1$' "$T/stats"
}

@test "launch: a program killed by a signal gives 128+N" {
	run --separate-stderr -137 ms-collect -o "$T/run.msr" -- /bin/sh -c 'kill -KILL $$'
	stats "$T/run.msr"
	grep -q '^target-exit pid [0-9]* code 137$' "$T/stats"
	run --separate-stderr -139 ms-collect -o "$T/run.msr" -- /bin/sh -c 'kill -SEGV $$'
}

@test "launch: a command that does not exist exits 127 with a message" {
	run --separate-stderr -127 ms-collect -o "$T/run.msr" -- ms-no-such-command-here
	[[ "$stderr" == *"cannot run 'ms-no-such-command-here': No such file or directory"* ]]
	# Nothing is published for a program that never ran (tests/0965 keeps an old file).
	[ ! -e "$T/run.msr" ]
	# On stdout, still a complete stream that says so.
	run -127 --separate-stderr bash -c "ms-collect -- ms-no-such-command-here > '$T/pipe.msr'"
	stats "$T/pipe.msr"
	grep -q '^target-exit pid [0-9]* code 127$' "$T/stats"
	grep -q '^trailer complete 1$' "$T/stats"
}

@test "launch: a file that cannot be executed exits 126" {
	printf 'not a program\n' > "$T/data"
	chmod -x "$T/data"
	run --separate-stderr -126 ms-collect -o "$T/run.msr" -- "$T/data"
	[[ "$stderr" == *"cannot run"*"Permission denied"* ]]
}

@test "launch: SIGINT ends the recording with a trailer; the program is not left behind" {
	ms-collect -o "$T/run.msr" -- "$FIX/burn" 30 3>&- &
	mc=$!
	echo "$mc" >> "$T/pids"
	sleep 0.7
	target=$(pgrep -P "$mc" || true)
	[ -n "$target" ]
	kill -INT "$mc"
	status=0
	wait "$mc" || status=$?
	[ "$status" -eq 130 ]	# the program died of the forwarded SIGINT
	gone "$target"
	[ -f "$T/run.msr" ]
	assert_no_files "$T/*run?msr?*"
	stats "$T/run.msr"
	grep -q '^trailer complete 1$' "$T/stats"
	grep -q "^target-exit pid $target code 130$" "$T/stats"
	[ "$(samples_of "$target")" -gt 0 ]
}

@test "launch: --duration stops the program with SIGTERM and exits 0" {
	start=$(date +%s%N)
	run --separate-stderr -0 ms-collect --duration 0.5 -o "$T/run.msr" -- "$FIX/burn" 30
	elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
	[ "$elapsed" -lt 5000 ]
	stats "$T/run.msr"
	grep -q '^target-exit pid [0-9]* code 143$' "$T/stats"
	grep -q '^trailer complete 1$' "$T/stats"
}

@test "launch: SIGKILL of ms-collect leaves no file under the final name and no program" {
	ms-collect -o "$T/run.msr" -- "$FIX/burn" 30 3>&- &
	mc=$!
	echo "$mc" >> "$T/pids"
	sleep 0.5
	target=$(pgrep -P "$mc" || true)
	[ -n "$target" ]
	kill -KILL "$mc"
	wait "$mc" || true
	[ ! -e "$T/run.msr" ]
	gone "$target"
}

@test "launch: downstream closing the pipe exits 5 and ends the program" {
	# shellcheck disable=SC2016 # $0 and PIPESTATUS are the inner bash's
	run --separate-stderr bash -c 'ms-collect -- "$0" 30 | head -c 100 > /dev/null; echo "${PIPESTATUS[0]}"' \
		"$FIX/burn"
	[ "$output" = 5 ]
	[[ "$stderr" == *"downstream closed the pipe"* ]]
	[ -z "$(pgrep -f "^$FIX/burn 30\$" || true)" ]
}

@test "attach: every thread is sampled, with synthesized names and mappings" {
	start_bg "$FIX/threads" 3 30
	wait_ready
	tids=$(ls "/proc/$BG/task")
	run --separate-stderr -0 ms-collect -p "$BG" --duration 1 -o "$T/run.msr"
	stats "$T/run.msr"
	grep -q "^target pid $BG launched 0 argc 3$" "$T/stats"
	grep -q '^trailer complete 1$' "$T/stats"
	lacks '^target-exit'

	# One event per thread and CPU.
	grep -q "^attr ids $(( $(echo "$tids" | wc -w) * $(nproc) )) " "$T/stats"
	for tid in $tids; do
		grep -q "^synth-comm tid $tid .* synthesized 1$" "$T/stats"
	done
	for i in 0 1 2; do
		tid=$(awk -v n="worker-$i" '$1 == "synth-comm" && $4 == n { print $3 }' "$T/stats")
		[ -n "$tid" ]
		[ "$(samples_of "$tid")" -gt 0 ] || { echo "no samples for worker-$i ($tid)"; return 1; }
	done
	grep -q -F "synth-mmap $(realpath "$FIX/threads") synthesized 1" "$T/stats"
	grep -q -F 'synth-mmap [vdso] synthesized 1' "$T/stats"
	# Only executable mappings: no [heap], no [stack].
	lacks '^synth-mmap \[(heap|stack)\]'
	# The target runs on, neither stopped nor killed.
	proc_running "$BG"
	run -1 grep -q -E '^State:[[:space:]]*[tT]' "/proc/$BG/status"
}

@test "attach: samples through ms-decode come from every worker thread" {
	require_built ms-decode
	start_bg "$FIX/threads" 2 30
	wait_ready
	ms-collect -p "$BG" --duration 1 -o "$T/run.msr"
	ms-decode < "$T/run.msr" > "$T/dec.msr"
	stats "$T/dec.msr"
	for task in "/proc/$BG/task"/*; do
		tid=${task##*/}
		[ "$tid" = "$BG" ] && continue	# the main thread waits in pthread_join
		grep -q "^decoded-samples tid $tid " "$T/stats" || { echo "no samples of $tid"; return 1; }
	done
}

@test "attach: a process started after the attach is followed" {
	start_bg sh -c "echo ready; sleep 0.5; \"$FIX/burn\" 0.5; sleep 0.3"
	wait_ready
	run --separate-stderr -0 ms-collect -p "$BG" -o "$T/run.msr"
	stats "$T/run.msr"
	# sh forks sleep, burn, sleep: the one that execs burn says so in a comm record.
	child=$(awk '$1 == "comm" && $4 == "burn" { print $3; exit }' "$T/stats")
	[ -n "$child" ]
	grep -q "^fork pid $child ppid $BG tid $child$" "$T/stats"
	[ "$(samples_of "$child")" -gt 0 ]
	grep -q '^trailer complete 1$' "$T/stats"
}

@test "attach: SIGINT ends the recording with a trailer and exits 0" {
	start_bg "$FIX/threads" 2 30
	wait_ready
	ms-collect -p "$BG" -o "$T/run.msr" 3>&- &
	mc=$!
	echo "$mc" >> "$T/pids"
	sleep 0.7
	kill -INT "$mc"
	status=0
	wait "$mc" || status=$?
	[ "$status" -eq 0 ]
	stats "$T/run.msr"
	grep -q '^trailer complete 1$' "$T/stats"
	grep -q '^samples tid ' "$T/stats"
	proc_running "$BG"
}

@test "attach: a pid that does not exist is a clear error" {
	run --separate-stderr -1 ms-collect -p 2147483646 -o "$T/run.msr"
	[[ "$stderr" == *"-p 2147483646: no such process"* ]]
	assert_no_files "$T/*run?msr*"
}

@test "attach: a thread id names its process" {
	start_bg "$FIX/threads" 2 30
	wait_ready
	for task in "/proc/$BG/task"/*; do
		tid=${task##*/}
		[ "$tid" != "$BG" ] && break
	done
	[ "$tid" != "$BG" ]
	run --separate-stderr -1 ms-collect -p "$tid" -o "$T/run.msr"
	[[ "$stderr" == *"$tid is a thread of process $BG"* ]]
}

@test "a hardware event is refused with exit 4 and says why" {
	run --separate-stderr -4 ms-collect -e cycles -o "$T/run.msr" -- "$FIX/burn" 0.1
	[[ "$stderr" == *"event 'cycles' needs a hardware performance counter"* ]]
	[[ "$stderr" == *"-e cpu-clock"* ]]
	assert_no_files "$T/*run?msr*"
}

@test "usage errors exit 2" {
	run --separate-stderr -2 ms-collect
	[[ "$stderr" == *"nothing to record"* ]]
	run --separate-stderr -2 ms-collect -F 99 -c 100 -- true
	run --separate-stderr -2 ms-collect --stack-size 100 -- true
	[[ "$stderr" == *"multiple of 8"* ]]
	run --separate-stderr -2 ms-collect --stack-size 65536 -- true
	run --separate-stderr -2 ms-collect -e no-such-event -- true
	[[ "$stderr" == *"unknown event 'no-such-event'"* ]]
	run --separate-stderr -2 ms-collect --mmap-pages 3 -- true
	run --separate-stderr -2 ms-collect -p 1 -- true
	run --separate-stderr -2 ms-collect --duration soon -- true
	run --separate-stderr -2 ms-collect --no-such-option
}

@test "losses are shown while recording: a status line on a terminal, none elsewhere" {
	command -v script >/dev/null || skip "script(1) (util-linux) is not installed"
	# 64 KiB copies into 64 KiB rings: most samples cannot be kept.
	script -qec "ms-collect --mmap-pages 16 -F 4000 --stack-size 65528 -o '$T/tty.msr' -- \
		'$FIX/threads' 2 1.5 >/dev/null" /dev/null > "$T/tty.out" 2>&1
	# Rewritten in place: carriage return, the line, clear to its end.
	grep -a -q "$(printf '\r')ms-collect: recording: [0-9]* records, [1-9][0-9]* lost by the kernel" \
		"$T/tty.out" || { cat -v "$T/tty.out"; false; }
	ms-collect --mmap-pages 16 -F 4000 --stack-size 65528 -o "$T/pipe.msr" -- \
		"$FIX/threads" 2 1.5 > /dev/null 2> "$T/pipe.err"
	grep -q "the kernel lost [0-9]* records because a ring was full" "$T/pipe.err"
	run -1 grep -q "recording: " "$T/pipe.err"
}

@test "an unprivileged user's default rings shrink to what it may lock, and say so" {
	[ "$(id -u)" -eq 0 ] || skip "needs root, to run ms-collect as the user nobody"
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	[ "$paranoid" -ge 0 ] && [ "$paranoid" -le 2 ] ||
		skip "kernel.perf_event_paranoid is $paranoid: an unprivileged user records nothing, or locks without limit"
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$MS_BUILDDIR/ms-collect" -a -x "$FIX/burn" ||
		skip "the user nobody cannot run programs in $MS_BUILDDIR"
	mlock_kb=$(cat /proc/sys/kernel/perf_event_mlock_kb)
	cpus=$(getconf _NPROCESSORS_ONLN)
	page_kb=$(($(getconf PAGESIZE) / 1024))
	# 300 pages a CPU in all (perf_event_mlock_kb's, then ulimit -l): rings
	# of 256 data pages fit (257 pages each), of 512 (the default's half) not.
	limit_kb=$((cpus * (300 * page_kb - mlock_kb)))
	[ "$limit_kb" -gt 0 ] ||
		skip "kernel.perf_event_mlock_kb is $mlock_kb: the default rings fit whatever ulimit -l says"
	record() {
		bash -c 'ulimit -l "$1" && shift && exec "$@"' _ "$limit_kb" "$@" \
			"$MS_BUILDDIR/ms-collect" -F 99 -- "$FIX/burn" 0.1 > "$T/run.msr"
	}
	run --separate-stderr record setpriv --reuid=65534 --regid=65534 --clear-groups
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[[ "$stderr" == *"rings of $((256 * page_kb)) KiB per CPU instead of $((1024 * page_kb)) KiB"* ]]
	stats "$T/run.msr"
	grep -qx 'info mmap-pages 256' "$T/stats"
	grep -q '^samples tid ' "$T/stats"
	# Root (CAP_IPC_LOCK) locks what it asks for: the default's rings, said nothing.
	run --separate-stderr record env
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"rings of"* ]]
	stats "$T/run.msr"
	grep -qx 'info mmap-pages 1024' "$T/stats"
}

# ---- --off-cpu: the sched:sched_switch events (issue 18) ----

require_off_cpu() {
	[ "$(id -u)" -eq 0 ] || skip "--off-cpu needs root (a tracepoint's raw data)"
}

# Line number of the first line of the stats matching the pattern, or 0.
line_of() {
	grep -n -m1 -E "$1" "$T/stats" | cut -d: -f1 || echo 0
}

# Checks every thread the fixture named ("thread TID voluntary V involuntary I")
# had its switch-outs and its switches in and out recorded: at least pct % of
# its own count, less what the kernel said it lost (a full ring is counted,
# never a switch missing without trace).
switches_of_every_thread() {
	local pct=$1 tid vol invol outs sw_out sw_in want n=0 lost
	lost=$(awk '$1 == "kernel-lost" { print $2 }' "$T/stats")
	while read -r _ tid _ vol _ invol; do
		n=$((n + 1))
		want=$(((vol + invol) * pct / 100 - lost))
		outs=$(awk -v t="$tid" '$1 == "switch-outs" && $3 == t { print $4 }' "$T/stats")
		sw_out=$(awk -v t="$tid" '$1 == "switches" && $3 == t { print $5 }' "$T/stats")
		sw_in=$(awk -v t="$tid" '$1 == "switches" && $3 == t { print $7 }' "$T/stats")
		if ! { [ "${outs:-0}" -ge "$want" ] && [ "${sw_out:-0}" -ge "$want" ] &&
			[ "${sw_in:-0}" -ge "$want" ]; }; then
			echo "thread $tid: $((vol + invol)) switches by its count, $lost records lost;" \
				"recorded $outs switch-outs, $sw_out out, $sw_in in"
			return 1
		fi
	done < <(grep '^thread ' "$2")
	[ "$n" -eq 2 ]
}

@test "off-cpu: a launched program's switch-outs and switches, from threads made after exec" {
	require_off_cpu
	run --separate-stderr -0 ms-collect --off-cpu --mmap-pages 2048 -o "$T/run.msr" -- \
		"$FIX/switcher" 0.5
	printf '%s\n' "$output" > "$T/fixture.out"
	stats "$T/run.msr"
	grep -q '^trailer complete 1$' "$T/stats"
	id=$(cat /sys/kernel/tracing/events/sched/sched_switch/id)
	# The TRACEPOINT record, then the switch events' ATTR, the sampler's last.
	grep -q "^tracepoint sched:sched_switch config $id fields [0-9]" "$T/stats"
	grep -q "^attr-type 2 config $id ids $(nproc) stack 8192$" "$T/stats"
	grep -q "^attr-type 1 config 0 ids $(nproc) stack 32768$" "$T/stats"
	[ "$(line_of '^tracepoint ')" -lt "$(line_of '^attr ')" ]
	[ "$(line_of '^attr-type 2 ')" -lt "$(line_of '^attr-type 1 ')" ]
	# IP TID TIME ID CPU PERIOD CALLCHAIN RAW REGS_USER STACK_USER
	grep -q '^attr ids [0-9]* sample_type 0x35e7 ' "$T/stats"
	grep -q '^info off-cpu sched:sched_switch$' "$T/stats"
	grep -q '^info off-cpu-stack-size 8192$' "$T/stats"
	# Both threads were created after exec: each one's switches are there,
	# all of them but what a full ring lost, which is counted.
	lacks '^lost source'
	switches_of_every_thread 98 "$T/fixture.out"
	# Each switch-out is its own thread's (prev_pid), readable with the format's offsets.
	grep -q '^switch-outs-of-another-thread 0$' "$T/stats"
	grep -q '^switch-outs-unreadable 0$' "$T/stats"
	lacks '^switches-unknown-id'
	# Waits on the pipe are sleeps (prev_state S).
	grep -q '^switch-out-state 0x1 [1-9]' "$T/stats"
}

@test "off-cpu: a sleeping program's switch-outs say S, and its samples are still taken" {
	require_off_cpu
	ms-collect --off-cpu -o "$T/run.msr" -- sh -c "sleep 0.2; exec '$FIX/burn' 0.2"
	stats "$T/run.msr"
	grep -q '^switch-out-state 0x1 [1-9]' "$T/stats"
	grep -q '^samples tid ' "$T/stats"
	grep -q '^switch-outs tid ' "$T/stats"
}

@test "off-cpu: attach follows each thread's switch-outs and switches" {
	require_off_cpu
	start_bg "$FIX/switcher" 30
	wait_ready
	run --separate-stderr -0 ms-collect --off-cpu -p "$BG" --duration 0.5 -o "$T/run.msr"
	stats "$T/run.msr"
	# One sampler and one switch event per thread (3) and CPU.
	grep -q "^attr-type 2 config [0-9]* ids $((3 * $(nproc))) stack 8192$" "$T/stats"
	for task in "/proc/$BG/task"/*; do
		tid=${task##*/}
		[ "$tid" = "$BG" ] && continue	# the main thread waits in pthread_join
		[ "$(awk -v t="$tid" '$1 == "switch-outs" && $3 == t { print $4 }' "$T/stats")" -gt 100 ] ||
			{ echo "few switch-outs of $tid"; return 1; }
		grep -q "^switches tid $tid out [1-9][0-9]* in [1-9]" "$T/stats"
	done
	grep -q '^switch-outs-of-another-thread 0$' "$T/stats"
}

@test "off-cpu: --budget pauses the sampler only: no switch goes unrecorded" {
	require_off_cpu
	run --separate-stderr -0 ms-collect --off-cpu --budget 0.5 --mmap-pages 2048 \
		-o "$T/run.msr" -- "$FIX/switcher" 1
	printf '%s\n' "$output" > "$T/fixture.out"
	stats "$T/run.msr"
	# The budget was at work (the sampler turned off part of the time)...
	grep -q '^kind duty ' "$T/stats"
	# ...and every switch is there all the same.
	lacks '^lost source'
	switches_of_every_thread 98 "$T/fixture.out"
}

@test "off-cpu: the switch-out copy: --off-cpu-stack-size, none without a sample copy" {
	require_off_cpu
	ms-collect --off-cpu --off-cpu-stack-size 4096 -o "$T/run.msr" -- sleep 0.1
	stats "$T/run.msr"
	grep -q '^attr-type 2 config [0-9]* ids [0-9]* stack 4096$' "$T/stats"
	grep -q '^info off-cpu-stack-size 4096$' "$T/stats"
	# a sample copy smaller than the default: the switch-outs' is no larger
	ms-collect --off-cpu --stack-size 2048 -o "$T/run.msr" -- sleep 0.1
	stats "$T/run.msr"
	grep -q '^attr-type 2 config [0-9]* ids [0-9]* stack 2048$' "$T/stats"
	# no registers and no copy, for either: IP TID TIME ID CPU PERIOD CALLCHAIN RAW
	ms-collect --off-cpu --stack-size 0 -o "$T/run.msr" -- sleep 0.1
	stats "$T/run.msr"
	grep -q '^attr ids [0-9]* sample_type 0x5e7 ' "$T/stats"
	grep -q '^switch-outs tid ' "$T/stats"
	run --separate-stderr -2 ms-collect --off-cpu-stack-size 4096 -- true
	[[ "$stderr" == *"--off-cpu-stack-size is the copy of a switch-out: give --off-cpu too"* ]]
	run --separate-stderr -2 ms-collect --off-cpu --off-cpu-stack-size 100 -- true
	[[ "$stderr" == *"must be a multiple of 8"* ]]
	run --separate-stderr -2 ms-collect --off-cpu --stack-size 0 --off-cpu-stack-size 4096 -- true
	[[ "$stderr" == *"--stack-size is 0"* ]]
	run --separate-stderr -2 ms-collect --off-cpu=yes -- true
	[[ "$stderr" == *"option '--off-cpu=yes' takes no value"* ]]
}

# In a mount namespace of its own, where tracefs is not mounted: the host keeps its mounts.
without_tracefs() {
	unshare --mount --propagation private sh -c '
		umount -l /sys/kernel/tracing 2>/dev/null
		umount -l /sys/kernel/debug/tracing 2>/dev/null
		umount -l /sys/kernel/debug 2>/dev/null
		[ ! -e /sys/kernel/tracing/events ] || { echo "tracefs still mounted" >&2; exit 99; }
		exec "$@"' _ "$@"
}

@test "off-cpu: root mounts tracefs when it is not, and says so once" {
	require_off_cpu
	command -v unshare >/dev/null ||
		{ echo "unshare(1) is missing: util-linux, essential on Debian, provides it" >&2; return 1; }
	run --separate-stderr -0 without_tracefs ms-collect --off-cpu -o "$T/run.msr" -- sleep 0.1
	[ "$(printf '%s\n' "$stderr" | grep -c 'mounted tracefs at /sys/kernel/tracing')" -eq 1 ]
	stats "$T/run.msr"
	grep -q '^tracepoint sched:sched_switch config ' "$T/stats"
	grep -q '^switch-outs tid ' "$T/stats"
}

@test "off-cpu: without root or tracefs, a clear refusal that says what to do" {
	require_off_cpu
	command -v unshare >/dev/null ||
		{ echo "unshare(1) is missing: util-linux, essential on Debian, provides it" >&2; return 1; }
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$MS_BUILDDIR/ms-collect" || {
		echo "the user nobody cannot run $MS_BUILDDIR/ms-collect: make its folders readable by all" >&2
		return 1
	}
	# shellcheck disable=SC2016 # $0 is the inner shell's: the program to run
	run --separate-stderr -4 without_tracefs setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh -c '"$0" --off-cpu -- true > /dev/null' "$MS_BUILDDIR/ms-collect"
	[[ "$stderr" == *"tracefs is not mounted"* ]]
	[[ "$stderr" == *"mount -t tracefs nodev /sys/kernel/tracing"* ]]
	# With tracefs there, the tracepoint's raw data is what a user may not have.
	# shellcheck disable=SC2016 # $0 is the inner shell's: the program to run
	run --separate-stderr -4 setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh -c '"$0" --off-cpu -- true > /dev/null' "$MS_BUILDDIR/ms-collect"
	[[ "$stderr" == *"run as root"* ]]
}

# shellcheck shell=bash
# Shared by the bench-smoke parts, scripts/profile-overhead and
# scripts/stack-completeness (sourced): paths, timing and sizes.
# Each part prints its figures next to the peer's, measured in the same run,
# and the ratio between them.
# Set by the script that sources this file.
: "${runs:?}"

# Best of $runs wall times of a shell command line, in seconds. The clock
# is bash's $EPOCHREALTIME, read in the shell itself: $(date) forked a
# process at each end, about 1 ms in every figure (a tenth of a 10 ms run).
best() {
	local best='' t0 t1 t
	for _ in $(seq "$runs"); do
		t0=${EPOCHREALTIME/,/.}; eval "$1" >/dev/null 2>&1; t1=${EPOCHREALTIME/,/.}
		t=$(echo "$t1 - $t0" | bc -l)
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
	done
	echo "$best"
}
size() { stat -c %s "$1"; }
# ratio A B: A / B with enough digits.
ratio() { echo "$1 / $2" | bc -l; }

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# timed_run ERR HOW CMD...: run CMD, whose program of interest is
# tests/fixtures/fixedwork (it times its own work, or with "exec" a real
# program's run, and says so on stderr), with CMD's stdout discarded and its
# stderr kept in file ERR. HOW is alone when CMD is the fixture itself, else
# what records it. Prints "elapsed_ns cpu_share ready_ms": the fixture's
# elapsed time; the CPU time of every other process of CMD as a share of
# one CPU over it (0 alone); the time from the end of the work to CMD's exit.
timed_run() {
	local err=$1 how=$2 out t1 line st=0
	local TIMEFORMAT='%R %U %S'
	shift 2
	out=$( { time "$@" >/dev/null 2>"$err"; } 2>&1 ) || st=$?
	t1=$(date +%s%N)
	line=$(grep '^elapsed_ns ' "$err" | tail -1)
	if [ "$st" -ne 0 ] || [ -z "$line" ]; then
		echo "${0##*/}: $how: '$*' failed (exit status $st) or did not time its work; its stderr:" >&2
		cat "$err" >&2
		return 1
	fi
	# elapsed_ns E cpu_ns C end_realtime_ns R; out: wall user sys of the whole command
	echo "$line $out $t1" | awk -v how="$how" '{
		e = $2; c = $4; r = $6; wall = $7; u = $8; s = $9; t1 = $10
		share = (u + s) * 1e9 - c; if (share < 0) share = 0
		printf "%d %.4f %.1f\n", e, (how == "alone" ? 0 : share / e), (t1 - r) / 1e6
	}'
}

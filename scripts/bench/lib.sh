# shellcheck shell=bash
# Shared by the bench-smoke parts (sourced): paths, timing and sizes.
# Each part prints its figures next to the peer's, measured in the same run,
# and the ratio between them.
# Set by scripts/bench-smoke, which sources this file.
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

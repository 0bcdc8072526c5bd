#!/usr/bin/env bats
# --budget (issue 16): the recording's own CPU time held to a share of one
# CPU by pausing its events part of the time (perf/governor.h), measured
# here from outside by the kernel's accounting, not by microscope's word.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	require_built "$FIXTURES/threads"
	cp "$FIXTURES/threads" "$BATS_TEST_TMPDIR/"
	cd "$BATS_TEST_TMPDIR" || return
	export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
	BG=
}

teardown() {
	if [ -n "$BG" ]; then
		kill "$BG" 2>/dev/null || true
		wait "$BG" 2>/dev/null || true
	fi
	no_leftover_processes
}

# The fixture, 16 busy threads, running on its own (not a child of what is measured).
start_fixture() {
	./threads 16 60 > fixture.out 2>&1 &
	BG=$!
	for _ in $(seq 200); do
		grep -q '^ready' fixture.out 2>/dev/null && return 0
		sleep 0.05
	done
	echo "the fixture never said ready" >&2
	return 1
}

# CPU time of every thread of process $1 so far, in seconds (schedstat: ns).
cpu_of() {
	awk '{ ns += $1 } END { printf "%.6f\n", ns / 1e9 }' /proc/"$1"/task/*/schedstat
}

# Run a command; print "CPU WALL": the user and system time of every
# process it started and waited for (bash's time: getrusage(RUSAGE_CHILDREN),
# the total /proc/PID/stat counts), and its elapsed time.
measured() {
	local TIMEFORMAT='%3U %3S %3R'
	{ time "$@" >/dev/null 2>>record.err; } 2> time.txt
	awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' time.txt
}

@test "budget: 16 busy threads at 10 kHz with a 2 % budget cost the recording at most 2.5 % of a CPU" {
	start_fixture
	# The caches filled once first (libc's debug copy, unit indexes): a first
	# recording's cost, which sampling less cannot lower (microscope(1)).
	microscope record -p "$BG" --duration 0.3 -o warm.msc 2>/dev/null
	# Attached: the fixture is not the recording's child, so everything the
	# measured command's processes used is the recording's.
	before=$(cpu_of "$BG")
	# 4 MiB rings: at 10 kHz on both CPUs a 1 MiB ring fills in a few
	# milliseconds of a busy machine, and a lost sample is time not counted.
	measured microscope record -p "$BG" --duration 8 -F 10000 --budget 2 --mmap-pages 1024 \
		-o b.msc > used.txt
	read -r cpu wall < used.txt
	after=$(cpu_of "$BG")
	cat record.err >&2
	share=$(awk -v c="$cpu" -v w="$wall" 'BEGIN { printf "%.3f", c / w * 100 }')
	fixture=$(awk -v a="$after" -v b="$before" -v w="$wall" 'BEGIN { printf "%.3f", (a - b) / w }')
	echo "the recording: $cpu s of CPU in $wall s, $share % of one CPU;" \
		"the fixture: $fixture CPUs" >&2
	awk -v s="$share" 'BEGIN { exit !(s <= 2.5) }'
	# It did have to hold back: at the full rate it would cost several times that.
	grep -q "budget: the recording used .* sampled as little as" record.err
	# Each change of duty is in the capture, and time stays time: the CPU
	# time the report gives (each sample 1/duty times its period) is the
	# fixture's, as a rate, within 10 %.
	ms-analyze summary --json b.msc > summary.json
	jq -e '.budget.budget_ppm == 20000 and .budget.duty_changes >= 1 and
		.budget.lowest_duty_ppm < 1000000' summary.json
	reported=$(jq '.cpu_time_ns / .duration_ns' summary.json)
	echo "reported: $reported CPUs, lost: $(jq -c .lost summary.json)" >&2
	awk -v r="$reported" -v f="$fixture" 'BEGIN { exit !(r >= f * 0.9 && r <= f * 1.1) }'
}

#!/usr/bin/env bats
# The unit snapshots, the tasks view and --weight snapshots through the
# commands. The views' numbers over thread snapshots are checked on
# hand-built captures in tests/unit/snapshots-view-test.c; here a capture
# without them (tests/unit/pylooks-test --write: CPU samples alone) must
# be refused with what to do, and the options placed where they apply.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	"$MS_BUILDDIR/tests/unit/pylooks-test" --write p.msc
}

@test "ms-analyze --unit snapshots and tasks: a capture without snapshots is refused with what to do" {
	run -1 --separate-stderr ms-analyze top --unit snapshots p.msc
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *"'p.msc' has no thread snapshots to weigh: record it with microscope record --python snapshot"* ]]
	[ -z "$output" ]
	run -1 --separate-stderr microscope report --unit snapshots p.msc
	[[ "$stderr" == *"has no thread snapshots to weigh"* ]]
	run -1 --separate-stderr ms-analyze tasks p.msc
	[[ "$stderr" == *"'p.msc' has no tasks: thread snapshots make them; record it with microscope record --python snapshot"* ]]
	# the samples' views are as they were
	run -0 --separate-stderr ms-analyze top --unit samples p.msc
	[[ "$output" == *hash_update* ]]
}

@test "ms-analyze tasks: its own units and only the thread filters" {
	run -2 --separate-stderr ms-analyze tasks --unit snapshots p.msc
	[[ "$stderr" == *"--unit applies to every view but summary, problems, off-cpu, wall and tasks, not tasks"* ]]
	run -2 --separate-stderr ms-analyze tasks --time 1s.. p.msc
	[[ "$stderr" == *"--time applies to every view but summary, problems and tasks, not tasks"* ]]
	run -2 --separate-stderr ms-analyze tasks --focus f p.msc
	[[ "$stderr" == *"--focus applies to"*"not tasks"* ]]
	run -2 --separate-stderr ms-analyze off-cpu --unit snapshots p.msc
	[[ "$stderr" == *"--unit applies to"* ]]
	run -0 --separate-stderr ms-analyze --help
	[[ "$output" == *"tasks               per task of thread snapshots"* ]]
	[[ "$output" == *"--unit samples|cpu-time|off-cpu|snapshots"* ]]
}

@test "ms-export --weight snapshots: folded and speedscope only, and a capture with snapshots" {
	run -1 --separate-stderr ms-export --folded --weight snapshots p.msc
	[[ "$stderr" == *"'p.msc' has no thread snapshots to weigh: record it with microscope record --python snapshot"* ]]
	[ -z "$output" ]
	run -1 --separate-stderr ms-export --speedscope --weight snapshots -o s.json p.msc
	[[ "$stderr" == *"has no thread snapshots to weigh"* ]]
	[ ! -e s.json ]
	run -2 --separate-stderr ms-export --pprof --weight snapshots p.msc
	[[ "$stderr" == *"--weight goes with --folded or --speedscope"* ]]
	run -2 --separate-stderr ms-export --folded --weight snapshot p.msc
	[[ "$stderr" == *"--weight is 'samples', 'time', 'off-cpu' or 'snapshots', not 'snapshot'"* ]]
}

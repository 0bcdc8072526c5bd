#!/usr/bin/env bats
# Complete stacks by default: real programs whose stacks run deeper than
# 8 KiB (scripts/bench/workloads.sh), recorded at the default preset, reach
# the thread's entry in at least 95 % of their samples. At 8 KiB copies
# the rest ended where the copy did: complete were sqlite3 0 %, bzip2 -9
# 23 %, git log -p 84 %, python3.11 89-92 % (scripts/stack-completeness
# measures every size).

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	require_built microscope ms-analyze
	# shellcheck source=scripts/bench/workloads.sh
	. "${MS_SRCDIR:-$BATS_TEST_DIRNAME/..}/scripts/bench/workloads.sh"
	cd "$BATS_TEST_TMPDIR" || return
}

teardown() {
	no_leftover_processes
}

# (A program a workload needs that is missing fails the test, naming it:
# scripts/install-deps installs bzip2, git and sqlite3.)

# Record workload $1 (WORKLOAD, set by workload) at the default preset; fail
# unless at least 150 samples were taken and 95 % of them end at the
# thread's entry.
assert_complete_at_default() {
	local name=$1 samples complete
	microscope record -o "$PWD/p.msc" -- "${WORKLOAD[@]}" >/dev/null 2>err ||
		{ cat err >&2; return 1; }
	ms-analyze summary --json p.msc > summary.json
	samples=$(jq .samples summary.json)
	complete=$(jq '[.stack_ends[] | select(.reason == "outermost") | .samples] | add // 0' summary.json)
	echo "$name: $complete of $samples samples complete; stack ends $(jq -c .stack_ends summary.json)" >&2
	[ "$samples" -ge 150 ]
	[ $((complete * 100)) -ge $((samples * 95)) ]
}

@test "default preset: a recursive sqlite3 query read by .read has complete stacks" {
	workload sqlite "$PWD/in" 0.5
	assert_complete_at_default sqlite
}

@test "default preset: bzip2 -9 has complete stacks" {
	workload bzip2 "$PWD/in" 0.5
	assert_complete_at_default bzip2
}

@test "default preset: git log -p has complete stacks" {
	git -C "${MS_SRCDIR:-$BATS_TEST_DIRNAME/..}" rev-parse --git-dir >/dev/null 2>&1 ||
		skip "the source tree is not a git checkout: no history for git log -p"
	workload git "$PWD/in" 0.5
	assert_complete_at_default git
}

@test "default preset: pyenv's python3.11 with regular expressions and JSON has complete stacks" {
	pyenv_python311 >/dev/null ||
		skip "pyenv's python3.11 is absent (${PYENV_ROOT:-$HOME/.pyenv}/versions/3.11*/bin/python3.11): nothing to record"
	workload python "$PWD/in" 0.5
	assert_complete_at_default python
}

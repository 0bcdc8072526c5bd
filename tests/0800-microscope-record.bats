#!/usr/bin/env bats
# End-to-end: microscope record and report on the real kernel, with fixtures
# whose profile is known.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	cp "$FIXTURES/burn" "$FIXTURES/threads" "$FIXTURES/forkexec" "$BATS_TEST_TMPDIR/"
	cd "$BATS_TEST_TMPDIR" || return
}

teardown() {
	local pids
	pids=$(leftover_processes)
	# shellcheck disable=SC2086 # one word per process id
	[ -z "$pids" ] || { kill -9 $pids 2>/dev/null; echo "left behind: $pids" >&2; return 1; }
}

# Self percentage of function $1 in the top JSON of capture $2.
self_percent() {
	ms-analyze top --json "$2" | jq -r --arg f "$1" \
		'[.functions[] | select(.name == $f) | .self_percent] | add // 0'
}

@test "record: three functions at 60/30/10 % are reported within 5 points" {
	run --separate-stderr microscope record -o "$PWD/p.msc" -- "$PWD/burn" 3
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ -f p.msc ]
	ms-analyze top --json p.msc > top.json
	samples=$(jq .samples top.json)
	[ "$samples" -gt 1500 ]
	assert_near "$(self_percent burn_60 p.msc)" 60 5 burn_60
	assert_near "$(self_percent burn_30 p.msc)" 30 5 burn_30
	assert_near "$(self_percent burn_10 p.msc)" 10 5 burn_10
	# The frame-pointer chain reaches main through run.
	total_run=$(jq -r '[.functions[] | select(.name == "run") | .total_percent] | add // 0' top.json)
	assert_near "$total_run" 100 5 "run (total)"
}

@test "report: summary first, then the hottest functions and the call tree" {
	microscope record -o "$PWD/p.msc" -- "$PWD/burn" 1 2>/dev/null
	run --separate-stderr microscope report p.msc
	[ "$status" -eq 0 ]
	[[ "$output" == *burn_60* ]]
	[[ "$output" == *main* ]]
	# Nothing about truncation is hidden: the share of stack ends is stated.
	[[ "$output" == *"stacks:      complete "* ]]
}

@test "record: a launched program's exit status becomes microscope's" {
	cat > fail.sh <<'SH'
#!/bin/sh
exit 3
SH
	chmod +x fail.sh
	run microscope record -o "$PWD/p.msc" -- "$PWD/fail.sh"
	[ "$status" -eq 3 ]
	[ -f p.msc ]
}

@test "record -p: attaching for 2 s samples every thread, names from comm" {
	"$PWD/threads" 3 30 > ready.txt &
	target=$!
	for _ in $(seq 50); do grep -q ready ready.txt 2>/dev/null && break; sleep 0.1; done
	run --separate-stderr microscope record -o "$PWD/p.msc" -p "$target" --duration 2
	kill "$target"; wait "$target" || true
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	ms-analyze summary --json p.msc > summary.json
	for n in 0 1 2; do
		samples=$(jq --arg n "worker-$n" '[.threads[] | select(.name == $n) | .samples] | add // 0' summary.json)
		[ "$samples" -gt 100 ] || { echo "worker-$n has $samples samples" >&2; cat summary.json >&2; false; }
	done
}

@test "record: samples of a child after exec belong to the new image" {
	run --separate-stderr microscope record -o "$PWD/p.msc" -- "$PWD/forkexec" "$PWD/burn" 1
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	ms-analyze tree --json p.msc > tree.json
	# Every path through burn_60 runs in burn's image, none in forkexec's.
	jq -e '[.. | objects | select(.name? == "burn_60")] | length > 0' tree.json
	bad=$(jq '[paths(objects and .name? == "burn_60") as $p
		| [range(0; $p | length) as $i | getpath($p[:$i]) | objects | .module?]
		| .[] | select(. == "forkexec")] | length' tree.json)
	[ "$bad" -eq 0 ]
	ms-analyze top --json p.msc > top.json
	jq -e '[.functions[] | select(.name == "child_before_exec" and .module == "forkexec")] | length == 1' top.json
	jq -e '[.functions[] | select(.name == "burn_60" and .module == "burn")] | length == 1' top.json
}

@test "capture: the same stream gives the same capture bytes" {
	ms-collect -o run.msr -- "$PWD/burn" 0.5
	ms-decode < run.msr | ms-unwind | ms-symbolize | ms-capture -o a.msc
	ms-decode < run.msr | ms-unwind | ms-symbolize | ms-capture -o b.msc
	cmp a.msc b.msc
}

@test "record: SIGINT publishes a complete capture" {
	microscope record -o "$PWD/p.msc" -- "$PWD/burn" 30 2> err.txt &
	rec=$!
	sleep 1.5
	kill -INT "$rec"
	status=0; wait "$rec" || status=$?
	# burn died of the forwarded SIGINT: 128 + 2.
	[ "$status" -eq 130 ] || { cat err.txt; false; }
	ms-analyze summary --json p.msc > summary.json
	jq -e '.incomplete == false and .samples > 500' summary.json
}

@test "record: SIGKILL of ms-collect leaves no file under the final name and no process" {
	microscope record -o "$PWD/p.msc" -- "$PWD/burn" 30 2> err.txt &
	rec=$!
	collect=
	for _ in $(seq 50); do
		collect=$(pgrep -P "$rec" -x ms-collect) && break
		sleep 0.1
	done
	[ -n "$collect" ]
	sleep 1
	kill -KILL "$collect"
	status=0; wait "$rec" || status=$?
	[ "$status" -ne 0 ]
	grep -q "ms-collect was killed by signal 9" err.txt
	[ ! -e p.msc ]
	assert_no_files 'p.msc.*'
	# The launched program dies with its collector.
	for _ in $(seq 50); do [ -z "$(leftover_processes)" ] && break; sleep 0.1; done
	[ -z "$(leftover_processes)" ]
}

@test "salvage: a stream whose collector was killed becomes an incomplete capture" {
	ms-collect -o "$PWD/run.msr" -- "$PWD/burn" 30 2>/dev/null &
	collect=$!
	sleep 1.5
	kill -KILL "$collect"
	wait "$collect" || true
	[ ! -e run.msr ]
	partial=$(ls run.msr.tmp*)
	[ -s "$partial" ]
	# The stages before ms-capture report the cut and pass on what they had;
	# the pipeline's status is ms-capture's.
	ms-decode "$partial" 2>err.txt | ms-unwind 2>>err.txt | ms-symbolize 2>>err.txt |
		ms-capture --salvage -o p.msc 2>>err.txt
	grep -q "ms-decode: .*stream cut short.*ms-collect" err.txt
	[ -f p.msc ]
	microscope report p.msc > report.txt
	head -1 report.txt | grep -q "incomplete"
	jq -e '.incomplete == true and .samples > 100' <(ms-analyze summary --json p.msc)
}

# Percent of the samples of capture $1 whose stack ended with reason $2.
end_percent() {
	ms-analyze summary --json "$1" | jq -r --arg r "$2" \
		'[.stack_ends[] | select(.reason == $r) | .percent] | add // 0'
}

@test "record --debug-dir: both ms-unwind and ms-symbolize read a stripped program's debug file there" {
	require_built "$FIXTURES/recurse-debugframe"
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
	# Its call-frame information is in .debug_frame only: moved with the
	# DWARF into a separate debug file, the program keeps none.
	objcopy --only-keep-debug "$FIXTURES/recurse-debugframe" prog.debug
	objcopy --strip-debug "$FIXTURES/recurse-debugframe" prog
	id=$(readelf -n prog | awk '/Build ID/ { print $3; exit }')
	mkdir -p "dbg/.build-id/${id:0:2}"
	mv prog.debug "dbg/.build-id/${id:0:2}/${id:2}.debug"
	run --separate-stderr microscope record -F 2000 -o "$PWD/with.msc" --debug-dir "$PWD/dbg" \
		-- "$PWD/prog" 0.5 20
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	# ms-unwind walked the program by the debug file's rules: complete stacks
	# through main and run; ms-symbolize named them with its lines.
	assert_near "$(end_percent with.msc outermost)" 100 5 "outermost stacks (%)"
	ms-analyze tree with.msc > tree.txt
	grep -q 'main (recurse.c:[0-9]*, prog)' tree.txt
	grep -q 'run (recurse.c:[0-9]*, prog)' tree.txt
	# Without it, the same program's stacks end there with no-cfi.
	microscope record -F 2000 -o "$PWD/without.msc" -- "$PWD/prog" 0.5 20 2>/dev/null
	assert_near "$(end_percent without.msc no-cfi)" 100 5 "no-cfi stacks (%)"
	# A directory that holds nothing is no error.
	run --separate-stderr microscope record -o "$PWD/empty.msc" --debug-dir "$PWD/none" --debug-dir "$PWD/dbg" \
		-- /bin/true
	[ "$status" -eq 0 ]
}

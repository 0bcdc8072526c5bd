#!/usr/bin/env bats
# ms-analyze: the command line, bad input, and the views over a synthetic
# capture (tests/unit/mkstream | ms-capture), so these tests need no kernel.
# The numbers themselves are tested in tests/unit/analysis-test.c.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?set MS_BUILDDIR to the build directory}"
	MKSTREAM="$MS_BUILDDIR/tests/unit/mkstream"
	SRCDIR="${MS_SRCDIR:-$BATS_TEST_DIRNAME/..}"
	mkdir "$BATS_TEST_TMPDIR/work"
	cd "$BATS_TEST_TMPDIR/work" || return
}

# A capture of N synthetic samples (burn_60/30/10 in those proportions).
make_capture() {
	require_built "$MKSTREAM"
	require_built ms-capture
	"$MKSTREAM" --samples "${2:-1000}" >"$1.msr"
	ms-capture -o "$1" "$1.msr"
}

# A usage error: exit 2, the message and where to look on stderr, no output.
assert_usage_error() {
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == "ms-analyze: $1"* ]]
	[[ "$stderr" == *"Try 'ms-analyze --help'."* ]]
}

@test "ms-analyze --help shows the synopsis, options and exit codes" {
	run --separate-stderr ms-analyze --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "usage: ms-analyze VIEW [options] FILE" ]
	[ "${lines[1]}" = "   or: ms-analyze callers|callees FUNCTION [options] FILE" ]
	[ "${lines[2]}" = "   or: ms-analyze diff [options] A B" ]
	[[ "$output" == *"Exit status: 0 success"* ]]
	[ -z "$stderr" ]
	# after a view too
	run --separate-stderr ms-analyze top --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "usage: ms-analyze VIEW [options] FILE" ]
}

@test "ms-analyze --version prints the name and version" {
	run --separate-stderr ms-analyze --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^ms-analyze\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	[ -z "$stderr" ]
}

@test "every option in --help is in the man page, and the synopsis matches" {
	ms-analyze --help >help
	grep -o -E -- '--[a-z][a-z-]+' help | sort -u >options
	[ -s options ]
	while read -r opt; do
		grep -q -F -- "${opt//-/\\-}" "$SRCDIR/man/ms-analyze.1" || {
			echo "man page lacks $opt"
			return 1
		}
	done <options
	# The man page's SYNOPSIS, with roff markup removed, is --help's usage.
	sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$SRCDIR/man/ms-analyze.1" |
		grep -v '^\.' | sed 's/\\-/-/g; s/\\f[BIRP]//g' >man-synopsis
	sed -n '1,3p' help | sed 's/^usage: //; s/^   or: //' >help-synopsis
	diff -u help-synopsis man-synopsis
}

@test "ms-analyze without arguments is a usage error" {
	run --separate-stderr ms-analyze
	assert_usage_error "which view?"
}

@test "an unknown view is a usage error" {
	run --separate-stderr ms-analyze flame p.msc
	assert_usage_error "unknown view 'flame'"
}

@test "a view without a file is a usage error" {
	run --separate-stderr ms-analyze top
	assert_usage_error "no capture file given"
	run --separate-stderr ms-analyze summary --json
	assert_usage_error "no capture file given"
}

@test "two files, unknown options and bad values are usage errors" {
	run --separate-stderr ms-analyze top a.msc b.msc
	assert_usage_error "one capture file at a time"
	run --separate-stderr ms-analyze top --frobnicate a.msc
	assert_usage_error "unknown option '--frobnicate'"
	run --separate-stderr ms-analyze top --limit
	assert_usage_error "option '--limit' needs a value"
	run --separate-stderr ms-analyze top --limit -3 a.msc
	assert_usage_error "--limit wants a count"
	run --separate-stderr ms-analyze top --sort name a.msc
	assert_usage_error "--sort wants self or total"
	run --separate-stderr ms-analyze tree --min-percent 101 a.msc
	assert_usage_error "--min-percent wants a number from 0 to 100"
}

@test "an option of another view is a usage error" {
	run --separate-stderr ms-analyze summary --limit 3 a.msc
	assert_usage_error "--limit applies to top, diff, report and off-cpu, not summary"
	run --separate-stderr ms-analyze top --min-percent 1 a.msc
	assert_usage_error "--min-percent applies to tree, callers, callees and report, not top"
	run --separate-stderr ms-analyze tree --sort total a.msc
	assert_usage_error "--sort applies to top, diff, report and off-cpu, not tree"
	run --separate-stderr ms-analyze problems --focus main a.msc
	assert_usage_error "--focus applies to every view but summary, problems, wall and tasks, not problems"
	run --separate-stderr ms-analyze top --buckets 10 a.msc
	assert_usage_error "--buckets applies to timeline, not top"
}

@test "off-CPU options: --cause values, and the views and units they apply to" {
	run --separate-stderr ms-analyze top --unit off-cpu --cause io a.msc
	assert_usage_error "--cause wants preempted, sleeping, blocked or unknown"
	run --separate-stderr ms-analyze top --cause sleeping a.msc
	assert_usage_error "--cause selects off-CPU intervals: use it with --unit off-cpu"
	run --separate-stderr ms-analyze wall --cause sleeping a.msc
	assert_usage_error "--cause applies to every view but summary, problems, wall and tasks, not wall"
	run --separate-stderr ms-analyze wall --focus main a.msc
	assert_usage_error "--focus applies to every view but summary, problems, wall and tasks, not wall"
	run --separate-stderr ms-analyze off-cpu --unit cpu-time a.msc
	assert_usage_error "--unit applies to every view but summary, problems, off-cpu, wall and tasks, not off-cpu"
	run --separate-stderr ms-analyze timeline --unit off-cpu a.msc
	assert_usage_error "the timeline draws off-CPU lanes of its own"
}

@test "off-CPU time asked of a capture that did not record it: what to do" {
	make_capture p.msc 100
	for args in "off-cpu" "wall" "top --unit off-cpu" "tree --unit off-cpu --cause blocked"; do
		# shellcheck disable=SC2086
		run --separate-stderr ms-analyze $args p.msc
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ "$stderr" = "ms-analyze: 'p.msc' has no off-CPU intervals: record it with microscope record --off-cpu" ]
	done
	# the CPU views stay as they were: no off-CPU lanes, and null in JSON
	run --separate-stderr ms-analyze timeline --json p.msc
	[ "$status" -eq 0 ]
	[ "$(jq -c .off_cpu <<<"$output")" = null ]
	run --separate-stderr ms-analyze summary --json p.msc
	[ "$(jq -c .off_cpu <<<"$output")" = null ]
}

@test "a missing file is an error naming it" {
	run --separate-stderr ms-analyze summary missing.msc
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == "ms-analyze: "*"'missing.msc'"* ]]
}

@test "a file that is not a capture is a clear error, not a crash" {
	printf 'this is not a capture, just some text\n' >text.msc
	for view in summary top tree problems; do
		run --separate-stderr ms-analyze "$view" text.msc
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[[ "$stderr" == "ms-analyze: "*"'text.msc'"*"not a microscope capture"* ]]
	done
	: >empty.msc
	run --separate-stderr ms-analyze top empty.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-analyze: "*"'empty.msc'"* ]]
}

@test "a record stream is not taken for a capture" {
	make_capture p.msc 10
	run --separate-stderr ms-analyze top p.msc.msr
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == "ms-analyze: "*"'p.msc.msr'"* ]]
}

@test "a truncated capture is an error, not a crash" {
	make_capture p.msc
	head -c 200 p.msc >cut.msc
	run --separate-stderr ms-analyze top cut.msc
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == "ms-analyze: "*"'cut.msc'"* ]]
}

@test "top over a synthetic capture: the burn functions in order, valid JSON" {
	make_capture p.msc
	ms-analyze top --json p.msc >top.json
	jq -e . top.json >/dev/null
	[ "$(jq '.samples' top.json)" -eq 1000 ]
	jq -r '[.functions[] | select(.self > 0) | .name][0:2] | join(" ")' top.json >first
	[ "$(cat first)" = "burn_60 burn_30" ]
	# self shares add up to the samples with frames; totals never under self
	[ "$(jq '[.functions[].self] | add' top.json)" -le 1000 ]
	[ "$(jq '[.functions[] | select(.total < .self)] | length' top.json)" -eq 0 ]
	[ "$(jq -r '.functions[0] | keys_unsorted | join(",")' top.json)" = \
	  "name,module,file,line,self,self_percent,total,total_percent" ]
	[ "$(jq -r '.functions[] | select(.name == "burn_60") | .module' top.json)" = "burn" ]

	ms-analyze top --limit 2 p.msc >top.txt
	[ "$(wc -l <top.txt)" -eq 4 ]
	[[ "$(sed -n 3p top.txt)" == *"  burn_60" ]]
	[ "$(ms-analyze top --json --limit 1 p.msc | jq '.functions | length')" -eq 1 ]
	ms-analyze top --sort total --json p.msc | jq -e '
		[.functions[].total] as $t | $t == ($t | sort | reverse)' >/dev/null
}

@test "summary over a synthetic capture" {
	make_capture p.msc
	ms-analyze summary --json p.msc >summary.json
	jq -e . summary.json >/dev/null
	[ "$(jq -r '.command' summary.json)" = "./burn --seconds 2" ]
	[ "$(jq '.pid' summary.json)" -eq 1000 ]
	[ "$(jq '.incomplete' summary.json)" = false ]
	[ "$(jq '.samples' summary.json)" -eq 1000 ]
	[ "$(jq '[.threads[].samples] | add' summary.json)" -eq 1000 ]
	[ "$(jq '[.stack_ends[].samples] | add' summary.json)" -eq 1000 ]
	[ "$(jq -r '.stack_ends[0].reason' summary.json)" = "fp-chain" ]
	[ "$(jq -r 'keys_unsorted | join(",")' summary.json)" = \
	  "command,pid,record_options,incomplete,duration_ns,start_time_ns,end_time_ns,samples,period,cpu_time_ns,off_cpu,budget,threads,lost,throttled,exit_code,stack_ends,unsymbolized,problems" ]
	# no budget: the CPU time is the periods' sum
	[ "$(jq '.cpu_time_ns == .period and .budget == null' summary.json)" = true ]

	ms-analyze summary p.msc >summary.txt
	# the synthetic stream lost records: said first, then the stack ends
	[[ "$(sed -n 1p summary.txt)" == "warning: 3 records were lost by the kernel "* ]]
	[[ "$(sed -n 2p summary.txt)" == "warning: 2 records were lost by the collector "* ]]
	[[ "$(sed -n 3p summary.txt)" == "stacks:      cut short "*"; frame-pointer chain "* ]]
	grep -q '^recorded:    .*, 1,000 samples at 999 Hz, 3 threads$' summary.txt
	# in plain words: no raw clock values or period sums
	run -1 grep -E '[0-9]{7}' summary.txt
}

@test "summary of a recording held to a budget: the duty it sampled at, and the CPU time that makes" {
	"$MKSTREAM" --duty | ms-capture -o b.msc
	ms-analyze summary --json b.msc >summary.json
	# mkstream --duty: 25 samples at each of 100%, 50%, 25%, 100%, 1.001 ms apart
	[ "$(jq -c .budget summary.json)" = \
	  '{"budget_ppm":20000,"duty_changes":3,"lowest_duty_ppm":250000,"mean_duty_ppm":684343}' ]
	[ "$(jq .period summary.json)" -eq 100100000 ]
	[ "$(jq .cpu_time_ns summary.json)" -eq $((25 * 1001000 * (1 + 2 + 4 + 1))) ]
	ms-analyze summary b.msc >summary.txt
	grep -q '^cpu time: *200 ms, from the samples'"'"' periods, scaled up where sampling was paused$' summary.txt
	grep -q '^budget: *2.0% of one CPU; sampling was on 68.4% of the time on average, 25.0% at the least (3 changes)$' summary.txt
}

@test "tree over a synthetic capture: the root holds every sample" {
	make_capture p.msc
	ms-analyze tree --json p.msc >tree.json
	jq -e . tree.json >/dev/null
	[ "$(jq '.root.total' tree.json)" -eq 1000 ]
	[ "$(jq -r '.root.name' tree.json)" = "[root]" ]
	# every node's total is its self plus its children's totals
	[ "$(jq '[.root | .. | objects | select(has("children")) |
		  select(.total != .self + ([.children[].total] | add // 0))] | length' tree.json)" -eq 0 ]
	ms-analyze tree --min-percent 50 p.msc >tree.txt
	[[ "$(sed -n 3p tree.txt)" == *"[root]" ]]
	[ "$(grep -c burn_30 tree.txt)" -eq 0 ]
}

@test "an incomplete capture says so on the first line of the summary" {
	require_built "$MKSTREAM"
	"$MKSTREAM" --samples 200 --no-trailer >cut.msr
	ms-capture --salvage -o cut.msc cut.msr 2>/dev/null
	ms-analyze summary cut.msc >summary.txt
	[ "$(head -n 1 summary.txt)" = \
	  "warning: this capture is incomplete: the recording was cut short" ]
	# (then the synthetic stream's two lines of lost records)
	[[ "$(sed -n 4p summary.txt)" == "stacks: "* ]]
	[ "$(ms-analyze summary --json cut.msc | jq '.incomplete')" = true ]
}

@test "the same capture gives the same output, byte for byte" {
	make_capture p.msc
	for view in summary top tree problems; do
		ms-analyze "$view" p.msc >"$view.1"
		ms-analyze "$view" p.msc >"$view.2"
		cmp "$view.1" "$view.2"
		ms-analyze "$view" --json p.msc >"$view.j1"
		ms-analyze "$view" --json p.msc >"$view.j2"
		cmp "$view.j1" "$view.j2"
	done
}

@test "a reader that went away (| head) ends ms-analyze and microscope report quietly, status 0" {
	make_capture p.msc
	# the reader exits at once; the command writes after it has gone
	(
		sleep 0.5
		rc=0
		ms-analyze tree p.msc 2>err || rc=$?
		echo "$rc" >status
	) | true
	[ "$(cat status)" -eq 0 ]
	[ ! -s err ]
	(
		sleep 0.5
		rc=0
		microscope report p.msc 2>err || rc=$?
		echo "$rc" >status
	) | true
	[ "$(cat status)" -eq 0 ]
	[ ! -s err ]
	# as people write it: the first line, then nothing more is wanted
	# shellcheck disable=SC2016 # PIPESTATUS is the inner bash's
	run --separate-stderr bash -c 'ms-analyze tree p.msc | head -1 >/dev/null; echo "${PIPESTATUS[0]}"'
	[ "$output" = 0 ]
	[ -z "$stderr" ]
}

@test "a write error on stdout is an error" {
	[ -w /dev/full ] || skip "no /dev/full"
	make_capture p.msc
	run --separate-stderr sh -c 'ms-analyze top p.msc >/dev/full'
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-analyze: cannot write the view to stdout: "* ]]
}

@test "problems over a synthetic capture: the unnamed addresses by module, with identity" {
	make_capture p.msc 1000
	ms-analyze problems p.msc >problems.txt
	ms-analyze summary --json p.msc >summary.json
	n=$(jq '.unsymbolized.samples' summary.json)
	[ "$n" -gt 0 ]
	[[ "$(head -n 1 problems.txt)" == "unsymbolized: $n of 1000 samples ("*"%) have a frame without a name" ]]
	grep -q '^\[kernel.kallsyms\]: failed (no-file), ' problems.txt
	grep -q '^  identity: kernel, no build id, device 8:1, inode 1001' problems.txt
	grep -q '^\[no module\]: ' problems.txt
	grep -q '  no-module  *0x7f0000001234$' problems.txt

	ms-analyze problems --json p.msc >problems.json
	jq -e . problems.json >/dev/null
	[ "$(jq -r 'keys_unsorted | join(",")' problems.json)" = "samples,unsymbolized,unsymbolized_percent,modules,off_cpu,recording" ]
	[ "$(jq '.unsymbolized' problems.json)" -eq "$n" ]
	[ "$(jq -r '.modules[0] | keys_unsorted | join(",")' problems.json)" = \
	  "path,kind,build_id,dev_major,dev_minor,inode,size,mtime,status,reason,samples,addresses" ]
	# module 7 of the stream was never described: unknown, not symbolized
	[ "$(jq -r '.modules[] | select(.kind == "unknown") | "\(.status) \(.addresses[0].address) \(.addresses[0].reason)"' problems.json)" = \
	  "not-symbolized 0x42 not-symbolized" ]
	# a sample counts once per module and address; never more than all samples
	[ "$(jq '[.modules[] | select(.samples > 1000)] | length' problems.json)" -eq 0 ]
	# the named modules are not listed
	[ "$(jq '[.modules[] | select(.path == "/usr/bin/burn")] | length' problems.json)" -eq 0 ]
}

@test "the summary and the report show the unsymbolized share" {
	require_built "$MKSTREAM"
	"$MKSTREAM" --deferred --samples 300 >d.msr
	ms-capture -o d.msc d.msr
	ms-analyze summary d.msc >summary.txt
	# (after the synthetic stream's two lines of lost records and the stack ends)
	[[ "$(sed -n 4p summary.txt)" == "names:       "*"% of samples ("*" of 300) have a frame without a name; symbolization was deferred: run microscope symbolize" ]]
	[ "$(ms-analyze summary --json d.msc | jq '.unsymbolized.deferred')" = true ]
	microscope report d.msc >report.txt
	[ "$(sed -n 4p report.txt)" = "$(sed -n 4p summary.txt)" ]
	# every module waits: the problems list says why for each
	ms-analyze problems --json d.msc >p.json
	[ "$(jq -r '[.modules[] | .status] | join(" ")' p.json)" = "deferred deferred no-build-id no-build-id " ]
}

@test "inline frames are functions of their own, with their file and line" {
	require_built "$MKSTREAM"
	"$MKSTREAM" --lines --samples 500 >l.msr
	ms-capture -o l.msc l.msr
	ms-analyze top --json l.msc >top.json
	# burn_inner is inlined into burn_60: self goes to it, total to both
	inner=$(jq -c '.functions[] | select(.name == "burn_inner") | [.self, .total, .file, .line]' top.json)
	outer=$(jq -c '.functions[] | select(.name == "burn_60") | [.self, .total, .file, .line]' top.json)
	[ "$(jq '.[1]' <<<"$inner")" -eq "$(jq '.[1]' <<<"$outer")" ]
	[ "$(jq '.[0]' <<<"$outer")" -eq 0 ]
	[ "$(jq -r '.[2]' <<<"$inner")" = /src/burn.c ]
	[ "$(jq '.[3]' <<<"$inner")" -eq 20 ]
	[ "$(jq '.[3]' <<<"$outer")" -eq 30 ]
	ms-analyze top l.msc | grep -q ' burn_inner (burn.c:20)$'
	# in the tree, burn_inner is a child of burn_60, under main
	ms-analyze tree --min-percent 0 l.msc >tree.txt
	grep -A1 '^.*  main (burn.c:50, burn)$' tree.txt | grep -q 'burn_60 (burn.c:30, burn)$'
	grep -A1 'burn_60 (burn.c:30, burn)$' tree.txt | grep -q '  burn_inner (burn.c:20, burn)$'
	# (burn_60 is under the root, and under [truncated: no-module] too)
	ms-analyze tree --json l.msc | jq -e '[.. | objects | select(.name? == "burn_60") |
		.children[0].name] | unique == ["burn_inner"]' >/dev/null
}

@test "a stream given for a capture gets a hint, not only 'not a capture'" {
	ms-collect -F 99 -o s.msr -- true
	ms-collect --lz4 -F 99 -o z.msr -- true
	for f in s.msr z.msr; do
		run --separate-stderr ms-analyze summary "$f"
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"'$f' is a microscope stream"*"not a capture: make one with 'ms-decode $f | ms-unwind | ms-symbolize | ms-capture -o p.msc'" ]]
		run --separate-stderr microscope report "$f"
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"is a microscope stream"* ]]
	done
	printf 'hello' > text
	run --separate-stderr ms-analyze summary text
	[[ "$stderr" == *"'text' is not a microscope capture (no capture magic at byte 0)" ]]
}

@test "'-' reads the capture from stdin: ms-analyze, microscope report, ms-export" {
	make_capture p.msc
	ms-analyze top p.msc > from-file.txt
	ms-analyze top - < p.msc > from-stdin.txt
	cmp from-file.txt from-stdin.txt
	microscope report p.msc > report-file.txt
	microscope report - < p.msc > report-stdin.txt
	cmp report-file.txt report-stdin.txt
	ms-export -q --folded p.msc > f1
	ms-export -q --folded - < p.msc > f2
	cmp f1 f2
	# damaged input on stdin is named as such
	run --separate-stderr ms-analyze summary - < /dev/null
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-analyze: capture 'stdin' is truncated"* ]]
	# symbolize replaces a file: '-' is refused as a usage error
	run --separate-stderr microscope symbolize - < p.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'-' (stdin or stdout) is not taken"* ]]
}

# mkstream --jit: process 1000 read its perf map to its end (3 malformed
# lines, 1 function over the bound, 1 past the code budget); 1005's map
# was stale.
@test "problems and summary: each process's perf map, what was kept out and what it means" {
	"$MKSTREAM" --jit | ms-capture -o jit.msc
	run --separate-stderr ms-analyze problems jit.msc
	[ "$status" -eq 0 ]
	grep -q -x 'perf maps: 2 processes read, 2 with something to report' <<<"$output"
	grep -q -x '  pid 1000  /tmp/perf-1000.map: ok, 2 functions, 16781312 bytes read' <<<"$output"
	grep -q -x '    3 lines not START SIZE NAME: .*' <<<"$output"
	grep -q -x '    1 function past the 64 MiB code budget: .*' <<<"$output"
	grep -q -x '    stale: written by an earlier process with this pid; not read, .*' <<<"$output"
	run --separate-stderr ms-analyze problems --json jit.msc
	[ "$(jq -c '[.perf_maps[] | [.pid, .status, (.issues | map(.what + "=" + (.count | tostring)))]]' <<<"$output")" = \
		'[[1000,"ok",["malformed=3","over_max=1","no_code=1"]],[1005,"stale",[]]]' ]
	run --separate-stderr ms-analyze summary jit.msc
	[ "$status" -eq 0 ]
	grep -q -x 'perf maps:   pid 1000 /tmp/perf-1000.map: 2 functions, ok (ms-analyze problems says more)' <<<"$output"
	run --separate-stderr ms-analyze summary --json jit.msc
	[ "$(jq -c '.perf_maps' <<<"$output")" = \
		'[{"pid":1000,"path":"/tmp/perf-1000.map","status":"ok","functions":2},{"pid":1005,"path":"/tmp/perf-1005.map","status":"stale","functions":0}]' ]
	# a capture without perf maps has neither the lines nor the key
	"$MKSTREAM" | ms-capture -o p.msc
	run --separate-stderr ms-analyze summary --json p.msc
	[ "$(jq 'has("perf_maps")' <<<"$output")" = false ]
}

# mkstream --jit-object: process 1000 ran in one registered object
# (module "[jit-object 0x55d0c0a02e80]" over [0x7f2000001000,
# 0x7f2000001040)): jit_leaf named, +0x38 in no symbol; ms-collect counted
# a process gone before its objects were read.
@test "problems and summary: jit-object modules, their range, and what the GDB JIT interface's problems mean" {
	"$MKSTREAM" --jit-object | ms-capture -o jo.msc
	run --separate-stderr ms-analyze problems jo.msc
	[ "$status" -eq 0 ]
	grep -q -x '\[jit-object 0x55d0c0a02e80\]: partial (no-symbol), [0-9]* samples (.*)' <<<"$output"
	grep -q -x '  identity: jit-object, no build id, range 0x7f2000001000..0x7f2000001040' <<<"$output"
	grep -q -x '  ms-collect  jit-process-gone  1  pid 1007 ended before its JIT objects were read' <<<"$output"
	grep -A1 'jit-process-gone' <<<"$output" | grep -q -x '    what it means: the process ended before its JIT objects were read: .*'
	# a row of another code has no such line
	[ "$(grep -A1 'truncated-sample' <<<"$output" | grep -c 'what it means')" = 0 ]
	run --separate-stderr ms-analyze problems --json jo.msc
	[ "$(jq -c '[.modules[] | select(.kind == "jit-object") | [.path, .status, .addresses[0].address]]' <<<"$output")" = \
		'[["[jit-object 0x55d0c0a02e80]","partial","0x7f2000001038"]]' ]
	[ "$(jq -c '[.recording[] | [.code, has("meaning")]]' <<<"$output")" = \
		'[["undefined-module",false],["jit-process-gone",true],["truncated-sample",false]]' ]
	run --separate-stderr ms-analyze summary jo.msc
	[ "$status" -eq 0 ]
	grep -q -x 'jit objects: pid 1000: 1 object sampled, [0-9]* samples in their code' <<<"$output"
	run --separate-stderr ms-analyze summary --json jo.msc
	[ "$(jq -c '.jit_objects | map([.pid, .objects])' <<<"$output")" = '[[1000,1]]' ]
	# top names the object's function and its unnamed code by the kind, not the entry
	run --separate-stderr ms-analyze top jo.msc
	grep -q -E '^ .* \[jit-object\] +jit_leaf$' <<<"$output"
	grep -q -E '^ .* \[jit-object\] +\[jit-object\]\+0x7f2000001038$' <<<"$output"
	# a capture without jit-object modules has neither the line nor the key
	"$MKSTREAM" --jit | ms-capture -o p.msc
	run --separate-stderr ms-analyze summary --json p.msc
	[ "$(jq 'has("jit_objects")' <<<"$output")" = false ]
}

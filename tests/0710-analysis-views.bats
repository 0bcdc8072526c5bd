#!/usr/bin/env bats
# The analysis views, filters and granularities over real recordings of
# fixtures whose shape is known: phases (phase_one alone, then phase_two
# beside a worker thread), and recurse (a deep recursion, cut short by a
# small stack copy). The exact numbers over hand-built captures are
# tests/unit/analysis-test.c's.

# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
load test_helper
bats_require_minimum_version 1.5.0

setup_file() {
	require_built microscope ms-analyze "$MS_BUILDDIR/tests/fixtures/phases" \
		"$MS_BUILDDIR/tests/fixtures/recurse"
	cd "$BATS_FILE_TMPDIR" || return
	# A: 300 ms in phase_one, 100 in phase_two; B the other way round
	microscope record -o a.msc -- "$MS_BUILDDIR/tests/fixtures/phases" 300 100 >/dev/null 2>&1
	microscope record -o b.msc -- "$MS_BUILDDIR/tests/fixtures/phases" 100 300 >/dev/null 2>&1
	microscope record --stack-size 1024 -o deep.msc -- \
		"$MS_BUILDDIR/tests/fixtures/recurse" 0.3 200
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return
}

teardown() {
	no_leftover_processes
}

# The total of function $2 in ms-analyze top --json output $1.
total_of() {
	jq -r --arg f "$2" '[.functions[] | select(.name == $f) | .total] | add // 0' "$1"
}

@test "timeline: phase_one's samples all come before phase_two's and the worker's" {
	ms-analyze timeline --json --buckets 40 --focus '^phase_one$' a.msc > one.json
	ms-analyze timeline --json --buckets 40 --focus '^(phase_two|worker_two)$' a.msc > two.json
	# the last bucket holding phase_one, the first holding phase two
	last_one=$(jq '[.lanes[].buckets | to_entries[] | select(.value > 0) | .key] | max' one.json)
	first_two=$(jq '[.lanes[].buckets | to_entries[] | select(.value > 0) | .key] | min' two.json)
	echo "phase_one ends in bucket $last_one, phase two starts in $first_two" >&2
	[ "$last_one" -le "$first_two" ]
	# phase_one takes about three quarters of the main thread's CPU: past a third of the buckets
	[ "$last_one" -ge 13 ]
	# the worker has a lane of its own, empty in phase one
	[ "$(jq '.lanes | length' two.json)" -eq 2 ]
	[ "$(jq '.lanes | length' one.json)" -eq 1 ]
	# text: one line per lane, as wide as asked
	ms-analyze timeline --buckets 30 a.msc > tl.txt
	[ "$(grep -c '^[0-9]* phases ' tl.txt)" -eq 2 ]
	grep '^[0-9]* phases ' tl.txt | while read -r line; do
		bar=${line#*|}
		bar=${bar%%|*}
		[ "${#bar}" -eq 30 ] || { echo "lane of ${#bar} columns: $line"; return 1; }
	done
}

@test "--time selects the samples of a part of the recording" {
	ms-analyze top --json a.msc > all.json
	ms-analyze top --json --time ..120ms a.msc > early.json
	# the last 60 ms: phase two only
	end_ms=$(( $(ms-analyze timeline --json a.msc | jq .end) / 1000000 ))
	ms-analyze top --json --time "$((end_ms - 60))ms.." a.msc > late.json
	early_one=$(total_of early.json phase_one)
	early_two=$(total_of early.json phase_two)
	echo "first 120 ms: phase_one $early_one, phase_two $early_two" >&2
	[ "$early_one" -ge 50 ]
	[ "$early_two" -eq 0 ]
	[ "$(total_of late.json phase_one)" -eq 0 ]
	[ "$(total_of late.json phase_two)" -gt 0 ]
	# the selection is stated, and the shares are of it
	[ "$(jq .samples early.json)" -lt "$(jq .samples all.json)" ]
	[ "$(jq .capture_total early.json)" -eq "$(jq .samples all.json)" ]
	ms-analyze top --time ..120ms a.msc | grep -q '^selected [0-9]* of [0-9]* samples: time ..120.000 ms$'
}

@test "--tid and --thread select threads; threads lists them" {
	ms-analyze threads --json a.msc > threads.json
	[ "$(jq '.threads | length' threads.json)" -eq 2 ]
	pid=$(jq '.threads[0].pid' threads.json)
	worker=$(jq --argjson p "$pid" '.threads[] | select(.tid != $p) | .tid' threads.json)
	ms-analyze top --json --tid "$worker" a.msc > w.json
	[ "$(total_of w.json worker_two)" -gt 0 ]
	[ "$(total_of w.json phase_one)" -eq 0 ]
	[ "$(jq .samples w.json)" -eq "$(jq --argjson t "$worker" '.threads[] | select(.tid == $t) | .samples' threads.json)" ]
	ms-analyze top --json --tid "$pid,$worker" a.msc > both.json
	ms-analyze top --json --thread phases a.msc > named.json
	[ "$(jq .samples both.json)" -eq "$(jq .samples named.json)" ]
	ms-analyze top --json --thread nosuchthread a.msc > none.json
	[ "$(jq .samples none.json)" -eq 0 ]
	[ "$(jq '.functions | length' none.json)" -eq 0 ]
}

@test "diff A B puts the functions that changed most first, with the sign of the change" {
	ms-analyze diff --json a.msc b.msc > d.json
	echo "first rows: $(jq -c '[.functions[0:3][] | [.name, .change_points]]' d.json)" >&2
	# phase_one lost most; phase_two and the worker (which runs as long as it) gained
	[ "$(jq -r '.functions[0].name' d.json)" = phase_one ]
	[ "$(jq -r '[.functions[1:3][].name] | sort | join(",")' d.json)" = phase_two,worker_two ]
	jq -e '.functions[] | select(.name == "phase_one") | .change_points < -20' d.json >/dev/null
	jq -e '.functions[] | select(.name == "phase_two") | .change_points > 20' d.json >/dev/null
	# text says which capture is which
	ms-analyze diff a.msc b.msc > d.txt
	grep -q '^A: a.msc' d.txt
	grep -q '^B: b.msc' d.txt
	# the same capture twice: nothing changed
	ms-analyze diff --json a.msc a.msc | jq -e '.functions == []' >/dev/null
}

@test "callers and callees: rooted at the function, each sample once" {
	ms-analyze top --json a.msc > top.json
	ms-analyze callers --json phase_one a.msc > callers.json
	[ "$(jq .root.total callers.json)" -eq "$(total_of top.json phase_one)" ]
	[ "$(jq -r .root.name callers.json)" = phase_one ]
	[ "$(jq -r '.root.children[0].name' callers.json)" = main ]
	ms-analyze callees --json main a.msc > callees.json
	[ "$(jq .root.total callees.json)" -eq "$(total_of top.json main)" ]
	jq -e '[.root.children[].name] | index("phase_one") != null and index("phase_two") != null' callees.json >/dev/null
	# recursion: the root counts each sample once
	ms-analyze top --json deep.msc > deeptop.json
	ms-analyze callers --json recurse deep.msc > rc.json
	[ "$(jq .root.total rc.json)" -eq "$(total_of deeptop.json recurse)" ]
	ms-analyze callees --json recurse deep.msc > re.json
	[ "$(jq .root.total re.json)" -eq "$(total_of deeptop.json recurse)" ]
	# names no function, or several
	run --separate-stderr ms-analyze callers nosuchfunction a.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no function matches 'nosuchfunction'"* ]]
	run --separate-stderr ms-analyze callers 'phase_' a.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"matches more than one function"* ]]
}

@test "a stack cut short starts with [truncated: stack-copy], never with a frame posing as a root" {
	ms-analyze summary --json deep.msc > s.json
	cut=$(jq '[.stack_ends[] | select(.reason == "stack-copy") | .samples] | add // 0' s.json)
	echo "stack-copy ends: $cut of $(jq .samples s.json)" >&2
	[ "$cut" -gt 0 ]
	ms-analyze tree --json deep.msc > t.json
	[ "$(jq '.root.children[] | select(.name == "[truncated: stack-copy]") | .total' t.json)" -eq "$cut" ]
	# only the entry and truncation frames are children of the root
	jq -r '.root.children[].name' t.json > roots
	cat roots >&2
	run ! grep -v -E '^(_start|\[truncated: [a-z-]+\])$' roots
	# callers of leaf reach the truncated frame on the cut stacks
	ms-analyze callers --json --hide-below 0 leaf deep.msc | jq -e '[.. | objects | select(.name? == "[truncated: stack-copy]")] | length > 0' >/dev/null
}

@test "--by line, address and module; --ignore drops frames; --focus keeps stacks through one" {
	ms-analyze top --json --by line a.msc > line.json
	jq -e '.by == "line" and ([.functions[] | select(.name == "phase_one")] | length) >= 1 and
		all(.functions[] | select(.name == "phase_one"); .line > 0 and (.file | endswith("phases.c")))' line.json >/dev/null
	ms-analyze top --json --by address a.msc > addr.json
	jq -e 'all(.functions[]; .kind == "address")' addr.json >/dev/null
	ms-analyze top --json --by module a.msc > mod.json
	[ "$(jq -r '.functions[0].name' mod.json)" = phases ]
	# module runs are one key: no module is its own parent in the tree
	ms-analyze tree --json --by module a.msc > modtree.json
	jq -e '[.. | objects | select(.children?) | . as $p | .children[] | select(.name == $p.name)] == []' modtree.json >/dev/null
	# --ignore: phase_one's self moves to its caller
	ms-analyze top --json a.msc > top.json
	ms-analyze top --json --ignore '^phase_one$' a.msc > ign.json
	[ "$(total_of ign.json phase_one)" -eq 0 ]
	main_self=$(jq '.functions[] | select(.name == "main") | .self' ign.json)
	[ "$main_self" -ge "$(jq '.functions[] | select(.name == "phase_one") | .self' top.json)" ]
	# --focus: only stacks through phase_two (and the shares are of those)
	ms-analyze top --json --focus '^phase_two$' a.msc > foc.json
	[ "$(jq .samples foc.json)" -eq "$(total_of top.json phase_two)" ]
	[ "$(total_of foc.json phase_one)" -eq 0 ]
	# --module: samples whose innermost frame is in the module
	ms-analyze top --json --module phases a.msc > inmod.json
	jq -e 'all(.functions[] | select(.self > 0); .module == "phases")' inmod.json >/dev/null
}

@test "every view, twice, gives the same bytes; microscope report takes the same views" {
	for view in summary top tree threads timeline problems "callers phase_one" "callees main"; do
		for json in "" --json; do
			# shellcheck disable=SC2086
			ms-analyze $view $json --focus 'phase|main' a.msc > once 2>/dev/null ||
				ms-analyze $view $json a.msc > once
			# shellcheck disable=SC2086
			ms-analyze $view $json --focus 'phase|main' a.msc > twice 2>/dev/null ||
				ms-analyze $view $json a.msc > twice
			cmp once twice || { echo "$view $json differs"; return 1; }
			[ -s once ]
		done
	done
	ms-analyze diff a.msc b.msc > once
	ms-analyze diff a.msc b.msc > twice
	cmp once twice
	ms-analyze top --tid "$(jq '.threads[0].tid' <(ms-analyze threads --json a.msc))" a.msc > ms.txt
	microscope report top --tid "$(jq '.threads[0].tid' <(ms-analyze threads --json a.msc))" a.msc > report.txt
	cmp ms.txt report.txt
	microscope report --json a.msc | jq -e 'keys == ["summary", "top", "tree"]' >/dev/null
	# the plain report: summary, then top and tree under the same filters
	microscope report --thread phases a.msc > r.txt
	grep -q '^hottest functions$' r.txt
	grep -q '^call tree$' r.txt
}

@test "bad query values are usage errors that name the value" {
	run --separate-stderr ms-analyze top --time 3..1 a.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--time ends before it starts"* ]]
	run --separate-stderr ms-analyze top --time soon a.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--time wants START..END"*"not 'soon'"* ]]
	run --separate-stderr ms-analyze top --by file a.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown granularity for --by 'file': use function, line, address, module"* ]]
	run --separate-stderr ms-analyze top --focus '(' a.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--focus '(' is not a regular expression"* ]]
	run --separate-stderr ms-analyze top --tid x a.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--tid wants thread ids"* ]]
	run --separate-stderr ms-analyze callers a.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"callers needs the function to start from, then the capture"* ]]
	run --separate-stderr ms-analyze diff a.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"diff needs two captures"* ]]
	# a folded file has no times: no timeline rather than one bucket of 1 ns
	printf 'main;work 3\nmain 1\n' > f.folded
	microscope convert -q f.folded f.msc
	run --separate-stderr ms-analyze timeline f.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"carry no times (it was imported from folded): there is no timeline to draw"* ]]
}

@test "colour: on with --color=always, off when piped, with --color=never or NO_COLOR" {
	esc=$'\033['
	ms-analyze top --color=always a.msc > always.txt
	grep -qF "$esc" always.txt
	ms-analyze top a.msc > piped.txt
	run ! grep -qF "$esc" piped.txt
	ms-analyze top --color=never a.msc > never.txt
	run ! grep -qF "$esc" never.txt
	# the colours are only added: without them the text is the same
	sed "s/${esc}[0-9;]*m//g" always.txt | cmp - piped.txt
	# NO_COLOR wins over auto, and JSON is never coloured
	NO_COLOR=1 ms-analyze top --color=auto a.msc > nocolor.txt
	run ! grep -qF "$esc" nocolor.txt
	ms-analyze top --json --color=always a.msc | jq -e . >/dev/null
	run --separate-stderr ms-analyze top --color=sometimes a.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--color: unknown value 'sometimes' (choose auto, always or never)"* ]]
}

@test "names fit --width, recursion is folded, JSON keeps everything" {
	# (columns, not bytes: "…" is one column of three bytes)
	ms-analyze top --width 60 a.msc > narrow.txt
	[ "$(tail -n +3 narrow.txt | LC_ALL=C.UTF-8 wc -L)" -le 60 ] || { cat narrow.txt >&2; false; }
	grep -qF '…' narrow.txt
	ms-analyze tree --width 70 deep.msc > tree.txt
	# every line fits, but where the indentation leaves a name fewer than its
	# 12 columns (a name is never cut shorter)
	python3 - tree.txt <<-'PY'
		import re, sys
		lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
		start = lines[1].index("function")
		for line in lines[2:]:
		    name = start + len(line[start:]) - len(line[start:].lstrip(" "))
		    fold = re.search(r"  \[(recursion|a cycle).*folded\]$", line)
		    room = 70 - name - (len(fold.group(0)) if fold else 0)
		    if room >= 12 and len(line) > 70:
		        sys.exit("too wide: " + line)
		PY
	# recurse 0.3 200 under a 1 KiB copy: about 20 levels of recursion, one line
	grep -q ' recurse\( (recurse.c:[0-9]*[^)]*)\)\{0,1\}  \[recursion ×[0-9]* folded\]$' tree.txt
	[ "$(grep -c 'recurse (recurse.c' tree.txt)" -lt 5 ]
	ms-analyze tree --json deep.msc | jq -e '[.. | objects | select(.name? == "recurse")] | length > 15' >/dev/null
}

#!/usr/bin/env bats
# Real clients read what ms-export writes: go tool pprof (Debian's
# golang-go), the npm packages pprof-format, speedscope (its own importers
# and its JSON schema, through ajv) and @paulirish/trace_engine (Chrome
# DevTools' trace engine), and a Trace Event Format check of the Chrome
# traces. Inputs: recordings of the burn fixture, of the threads fixture
# and of a recursion cut short by a 1 KiB stack copy, and a synthetic
# capture with inline source lines. npm installs the packages from
# tests/formats/package-lock.json once per run of this file; a test that
# needs a client skips, saying why, only when it cannot be had.

load test_helper
bats_require_minimum_version 1.5.0

setup_file() {
	local d=$BATS_FILE_TMPDIR
	cp "$FIXTURES/burn" "$FIXTURES/threads" "$FIXTURES/recurse" "$d/"
	microscope record -o "$d/burn.msc" -- "$d/burn" 1 2>"$d/record.log"
	microscope record -o "$d/threads.msc" -- "$d/threads" 3 0.5 2>>"$d/record.log" >/dev/null
	microscope record --stack-size 1024 -o "$d/cut.msc" -- "$d/recurse" 0.5 2>>"$d/record.log"
	"$MS_BUILDDIR/tests/unit/formats-mkcapture" --samples 3000 --threads 3 --lines "$d/lines.msc"
	mkdir -p "$d/node" "$d/home"
	if ! command -v npm >/dev/null; then
		echo "npm is not installed (scripts/install-deps installs nodejs and npm)" > "$d/node/why"
	else
		cp "$MS_SRCDIR"/tests/formats/package.json "$MS_SRCDIR"/tests/formats/package-lock.json \
			"$MS_SRCDIR"/tests/formats/*.js "$MS_SRCDIR"/tests/formats/*.mjs "$d/node/"
		if (cd "$d/node" && HOME="$d/home" npm ci --no-audit --no-fund --ignore-scripts) >"$d/node/npm.log" 2>&1; then
			touch "$d/node/ok"
		else
			echo "npm ci of tests/formats failed (no registry?): $(tail -n 3 "$d/node/npm.log" | tr '\n' ' ')" > "$d/node/why"
		fi
	fi
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	cp "$BATS_FILE_TMPDIR"/{burn,lines,threads,cut}.msc .
	export HOME=$BATS_FILE_TMPDIR/home PPROF_TMPDIR=$BATS_FILE_TMPDIR/home
	export GOCACHE=$BATS_FILE_TMPDIR/home/go-cache PPROF_BINARY_PATH=/nonexistent
}

teardown() {
	local pids
	pids=$(leftover_processes)
	# shellcheck disable=SC2086 # one word per process id
	[ -z "$pids" ] || { kill -9 $pids 2>/dev/null; echo "left behind: $pids" >&2; return 1; }
}

need_go() {
	command -v go >/dev/null || skip "go is not installed (scripts/install-deps installs golang-go)"
}

need_node() {
	[ -f "$BATS_FILE_TMPDIR/node/ok" ] || skip "$(cat "$BATS_FILE_TMPDIR/node/why")"
}

node_run() {
	local script=$1
	shift
	NODE_PATH=$BATS_FILE_TMPDIR/node/node_modules node "$BATS_FILE_TMPDIR/node/$script" "$@"
}

# "name self" of the named functions, summed by name (pprof shows a
# function once whatever its module), sorted.
ms_self_by_name() {
	ms-analyze top --json "$1" |
		jq -r '[.functions[] | select(.name | test("^\\[") | not)] | group_by(.name)[] |
			"\(.[0].name) \(map(.self) | add)"' | sort
}

# "name flat" of go tool pprof -top by samples, named functions only, sorted.
go_top() {
	go tool pprof -top -sample_index=samples -nodecount=100000 -nodefraction=0 -edgefraction=0 "$1" 2>/dev/null |
		awk '/^ *[0-9]+ +[0-9.]+% +[0-9.]+% +[0-9]+ +[0-9.]+% / {
			name = $6; for (i = 7; i <= NF; i++) if ($i != "(inline)") name = name " " $i
			if (name !~ /^(\[|0x|<unknown>)/ && $1 > 0) print name, $1 }' | sort
}

@test "go tool pprof -top reads every pprof, and its top functions are ms-analyze's" {
	need_go
	for c in burn lines; do
		ms-export -q --pprof -o $c.pb.gz $c.msc
		run --separate-stderr go tool pprof -top -sample_index=samples -nodecount=100000 $c.pb.gz
		# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
		[ "$status" -eq 0 ] || { echo "$stderr"; false; }
		samples=$(ms-analyze summary --json $c.msc | jq .samples)
		[[ "$output" == *"Total samples = $samples"* ]] || { echo "$output" | head; false; }
		# flat counts of named functions: "flat flat% sum% cum cum% name [(inline)]"
		go_top $c.pb.gz > go.top
		ms_self_by_name $c.msc | awk '$2 > 0' > ms.top
		diff -u ms.top go.top
		[ "$(wc -l < ms.top)" -ge 3 ]
	done
	# the recording's hottest function is the fixture's burn_60, for both
	[ "$(ms-analyze top --json burn.msc | jq -r '.functions[0].name')" = burn_60 ]
	go tool pprof -top -sample_index=samples burn.pb.gz 2>/dev/null | grep -m1 -E '^ +[0-9]' | grep -q burn_60
}

@test "go tool pprof -traces reads them: threads as labels, inline frames marked" {
	need_go
	ms-export -q --pprof -o burn.pb.gz burn.msc
	ms-export -q --pprof -o lines.pb.gz lines.msc
	run --separate-stderr go tool pprof -traces burn.pb.gz
	[ "$status" -eq 0 ]
	[[ "$output" == *"thread:  burn"* ]]
	[[ "$output" == *burn_60* ]]
	[[ "$output" == *"Type: cpu"* ]]
	run --separate-stderr go tool pprof -traces lines.pb.gz
	[ "$status" -eq 0 ]
	[[ "$output" == *"thread:  worker-1"* ]]
	[[ "$output" == *"inlined_helper (inline)"* ]]
	# pprof's own re-encoding (which drops samples without frames) keeps every function's count
	go tool pprof -proto lines.pb.gz > lines2.pb.gz 2>/dev/null
	diff -u <(go_top lines.pb.gz) <(go_top lines2.pb.gz)
	[ "$(go_top lines2.pb.gz | wc -l)" -gt 10 ]
}

@test "go tool pprof -traces shows a stack cut short ending in its [truncated: stack-copy] frame, and only there" {
	need_go
	ms-export -q --pprof -o cut.pb.gz cut.msc
	run --separate-stderr go tool pprof -traces cut.pb.gz
	[ "$status" -eq 0 ]
	# each trace as "leaf;caller;...;outermost": after each separator, labels
	# ("thread:  recurse"), the weight and the leaf, then one caller a line
	traces=$(printf '%s\n' "$output" | awk '
		/^-+\+-+$/ { if (f != "") print f; f = ""; in_trace = 1; next }
		!in_trace || /^ +[a-z_]+: / { next }
		/^ +[0-9.]+[a-zµ]*s +/ { sub(/^ +[0-9.]+[a-zµ]*s +/, ""); f = $0; next }
		/^ +[^ ]/ { sub(/^ +/, ""); f = f ";" $0 }
		END { if (f != "") print f }')
	# the cut ones end with the frame; it is never anywhere else
	[ "$(grep -c ';\[truncated: stack-copy\]$' <<<"$traces")" -gt 0 ]
	[ "$(grep -c '\[truncated' <<<"$traces")" -eq "$(grep -c ';\[truncated: stack-copy\]$' <<<"$traces")" ]
	# and every other ends at _start
	[ "$(grep -v -c '\[truncated' <<<"$traces")" -eq "$(grep -c ';_start$' <<<"$traces")" ]
}

@test "go tool pprof: a Go profile imported and exported keeps its time, duration and counts" {
	need_go
	ms-capture -o go.msc --import pprof "$MS_SRCDIR/tests/formats/go-runtime-cpu.pprof"
	ms-export -q --pprof -o go.pb.gz go.msc
	go tool pprof -raw "$MS_SRCDIR/tests/formats/go-runtime-cpu.pprof" 2>/dev/null |
		grep -E '^(Time|Duration|PeriodType|Period):' > want
	go tool pprof -raw go.pb.gz 2>/dev/null | grep -E '^(Time|Duration|PeriodType|Period):' > got
	diff -u want got
	diff -u <(go_top "$MS_SRCDIR/tests/formats/go-runtime-cpu.pprof") <(go_top go.pb.gz)
}

@test "pprof-format (npm) decodes every pprof, with ms-analyze's counts" {
	need_node
	ms-export -q --pprof -o burn.pb.gz burn.msc
	ms-export -q --pprof -o lines.pb.gz lines.msc
	ms-capture -o back.msc --import pprof lines.pb.gz
	ms-export -q --pprof -o back.pb.gz back.msc
	microscope convert -q lines.msc folded.folded
	microscope convert -q folded.folded folded.pb.gz
	node_run pprof-decode.js burn.pb.gz lines.pb.gz back.pb.gz folded.pb.gz > decoded
	[ "$(wc -l < decoded)" -eq 4 ]
	for c in burn lines; do
		line=$(grep "\"file\":\"$c.pb.gz\"" decoded)
		samples=$(ms-analyze summary --json $c.msc | jq .samples)
		jq -e --argjson n "$samples" '.totals[0] == $n and .sampleTypes[0] == ["samples","count"]
			and .sampleTypes[1] == ["cpu","nanoseconds"] and .periodType == ["cpu","nanoseconds"]' <<<"$line" >/dev/null
		jq -r '.self | to_entries[] | select(.key | test("^\\[") | not) | "\(.key) \(.value)"' <<<"$line" |
			sort > npm.self
		ms_self_by_name $c.msc | awk '$2 > 0' > ms.self
		diff -u ms.self npm.self
	done
	# a folded file has no times: its pprof has only counts
	jq -e '.sampleTypes == [["samples","count"]] and .totals == [3000]' <<<"$(grep folded.pb.gz decoded)" >/dev/null
}

@test "speedscope's importers read the folded and speedscope files; its schema validates them" {
	need_node
	ms-export -q --folded -o burn.folded burn.msc
	ms-export -q --folded --thread-root -o lines.folded lines.msc
	ms-export -q --speedscope -o burn.speedscope.json burn.msc
	ms-export -q --speedscope --weight time -o lines.speedscope.json lines.msc
	run --separate-stderr node_run speedscope-import.js burn.folded lines.folded burn.speedscope.json lines.speedscope.json
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	burn=$(ms-analyze summary --json burn.msc | jq .samples)
	# folded: one profile with every sample
	jq -e --argjson n "$burn" '.profiles | length == 1 and .[0].total == $n' <<<"${lines[0]}" >/dev/null
	jq -e '.profiles[0].total == 3000' <<<"${lines[1]}" >/dev/null
	# speedscope: a profile per thread; samples, or nanoseconds of 1 ms each
	jq -e --argjson n "$burn" '[.profiles[].total] | add == $n' <<<"${lines[2]}" >/dev/null
	jq -e '(.profiles | length == 3) and ([.profiles[].total] | add == 3000000000)
		and .profiles[0].unit == "nanoseconds"' <<<"${lines[3]}" >/dev/null
	node_run speedscope-schema.js burn.speedscope.json lines.speedscope.json
}

@test "Chrome traces are JSON with every field the Trace Event Format requires" {
	need_node
	for c in burn lines; do
		ms-export -q --chrome -o $c.events.json $c.msc
		ms-export -q --chrome --chrome-form samples -o $c.samples.json $c.msc
		run --separate-stderr node_run chrome-check.js $c.events.json $c.samples.json
		[ "$status" -eq 0 ] || { echo "$stderr"; false; }
		samples=$(ms-analyze summary --json $c.msc | jq .samples)
		threads=$(ms-analyze summary --json $c.msc | jq '[.threads[]] | length')
		jq -e --argjson t "$threads" '.X > 0 and .threads == $t and .processes >= 1' <<<"${lines[0]}" >/dev/null
		jq -e --argjson n "$samples" '.samples == $n and .stackFrames > 0 and .X == 0' <<<"${lines[1]}" >/dev/null
	done
}

# The first frame of each folded line of a capture: its stacks' outermost frames, as JSON.
outermost_frames() {
	ms-export -q --folded "$1" | sed 's/ [0-9]*$//' | cut -d';' -f1 | sort -u | jq -R . | jq -s -c .
}

# The frames right under a [truncated: REASON] root, as JSON: a cut stack's
# outermost real frame, which may be an entry elsewhere (a parent thread
# sampled inside clone3's system call, where glibc's clone3 has no CFI).
cut_frames() {
	ms-export -q --folded "$1" | sed -n 's/^\[truncated: [^]]*\];\([^;]*\).*/\1/p' |
		sed 's/ [0-9]*$//' | sort -u | jq -R . | jq -s -c .
}

@test "Chrome events: speedscope's and Chrome DevTools' importers draw each thread from its entry, the hot leaf a leaf" {
	need_node
	for c in burn threads cut; do
		ms-export -q --chrome -o $c.events.json $c.msc
	done
	run --separate-stderr node_run chrome-tree.mjs burn.events.json threads.events.json cut.events.json
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "${#lines[@]}" -eq 3 ]
	i=0
	for c in burn threads cut; do
		tree=${lines[$i]}
		i=$((i + 1))
		# every tree's roots are its stacks' outermost frames (_start, clone3, a cut's
		# [truncated: REASON]), and none of those is ever called by another frame
		# (but where a cut stack's outermost real frame is one)
		jq -e --argjson outer "$(outermost_frames $c.msc)" --argjson cut "$(cut_frames $c.msc)" '
			[.speedscope[], .trace_engine[]] as $t | ($outer - $cut) as $never |
			($t | length) > 0 and
			all($t[]; (.roots | length) > 0 and ((.roots | keys) - $outer) == [] and
				((.inner | keys) - $never) == (.inner | keys))' <<<"$tree" >/dev/null ||
			{ echo "$c: roots or inner frames wrong: $(jq -c '[.speedscope[], .trace_engine[]] |
				map({roots, inner: (.inner | keys)})' <<<"$tree")" >&2; false; }
	done
	# burn: _start the one root; the hot function burn_60 a leaf, never a root
	jq -e 'all(.speedscope[], .trace_engine[]; (.roots | keys) == ["_start"] and .leaves.burn_60 > 0)' \
		<<<"${lines[0]}" >/dev/null
	# threads: each worker from the thread entry, its loop a leaf (and a
	# thread sampled inside clone3's system call from a truncation root,
	# when the frame under every such root is clone3: see cut_frames)
	jq -e --argjson outer "$(outermost_frames threads.msc)" --argjson cut "$(cut_frames threads.msc)" '
		(["clone3", "clone", "start_thread", "_start"] +
		 (if ($cut - ["clone3", "clone"]) == [] then
			[$outer[] | select(startswith("[truncated: "))] else [] end)) as $entries |
		(.speedscope | length) >= 3 and (.trace_engine | length) >= 3 and
		all(.speedscope[], .trace_engine[]; (.roots | keys - $entries) == [])
		and ([.speedscope[], .trace_engine[] | select(.leaves.thread_work > 0)] | length) >= 6' \
		<<<"${lines[1]}" >/dev/null
	# the recursion cut short: its stacks from [truncated: stack-copy], the leaf a leaf
	jq -e 'all(.speedscope[], .trace_engine[]; .roots["[truncated: stack-copy]"] > 0 and .leaves.leaf > 0
		and (.roots.recurse // 0) == 0)' <<<"${lines[2]}" >/dev/null
}

@test "round trips of a recording: pprof keeps functions, modules and shares; folded names and shares" {
	ms-export -q --pprof -o burn.pb.gz burn.msc
	ms-capture -o p.msc --import pprof burn.pb.gz
	diff -u <(ms-analyze top --json burn.msc | jq -c '.functions[] | [.name, .module, .self, .total]' | sort) \
		<(ms-analyze top --json p.msc | jq -c '.functions[] | [.name, .module, .self, .total]' | sort)
	diff -u <(ms-analyze summary --json burn.msc | jq -c '[.samples, .period, [.threads[] | select(.samples > 0) | [.tid, .name, .samples]]]') \
		<(ms-analyze summary --json p.msc | jq -c '[.samples, .period, [.threads[] | select(.samples > 0) | [.tid, .name, .samples]]]')
	ms-export -q --folded -o burn.folded burn.msc
	ms-capture -o f.msc --import folded burn.folded
	diff -u <(ms_self_by_name burn.msc) <(ms_self_by_name f.msc)
	ms-export -q --folded f.msc | cmp - burn.folded
}

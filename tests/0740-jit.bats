#!/usr/bin/env bats
# JIT code end to end (issue 19): `microscope record` over real JITs and
# the jitmap fixture, asserting on the profile. What each program runs is
# known: tests/fixtures/jitwork.py (outer > middle > leaf, nearly all the
# time in leaf), jitwork.js (the same in JavaScript), and jitmap's modes
# (tests/fixtures/README-jit.txt). The stream-level checks are
# 0730-jit-collect's (the collector) and 0735-jit-unwind's (the unwinder).

# shellcheck disable=SC2154 # output, status: set by bats's run
bats_require_minimum_version 1.5.0
load test_helper

PY312=/root/.pyenv/versions/3.12.1/bin/python3.12
PY313=/root/.pyenv/versions/3.13.0/bin/python3.13

setup() {
	require_built microscope ms-analyze ms-export "$FIXTURES/jitmap"
	cd "$BATS_TEST_TMPDIR" || return
	export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
	MAPS=()
}

teardown() {
	local m
	# CPython and node leave their maps behind; a killed fixture would too.
	for m in "${MAPS[@]}"; do
		rm -f "$m"
	done
	no_leftover_processes
}

# record OUT CAPTURE ARGS...: microscope record ARGS into CAPTURE, the
# program's output in OUT; the map of the pid it printed ("ready PID") is
# removed at teardown.
record() {
	local out=$1 cap=$2 pid
	shift 2
	microscope record -o "$cap" "$@" > "$out" 2> record.err || { cat record.err >&2; return 1; }
	pid=$(awk '$1 == "ready" { print $2; exit }' "$out")
	[ -n "$pid" ] || { echo "the program printed no ready line" >&2; return 1; }
	MAPS+=("/tmp/perf-$pid.map")
}

# python_shares FOLDED: "PY NAMED COMPLETE": samples with an interpreter
# loop on the stack, those of them naming a Python function (py::), and
# those of them whose stack reached the thread's entry (no synthetic
# [truncated: ...] root).
python_shares() {
	awk '/_PyEval_EvalFrameDefault/ { n = $NF; py += n; if (/py::/) named += n
		if (!/^\[truncated/) complete += n }
		END { print py + 0, named + 0, complete + 0 }' "$1"
}

# at_least A B PERCENT: A is at least PERCENT % of B.
at_least() {
	[ "$(( $1 * 100 ))" -ge "$(( $2 * $3 ))" ] || { echo "$1 is under $3% of $2" >&2; return 1; }
}

# The heaviest folded stack of $1, one frame a line, outermost first.
heaviest() {
	sort -t' ' -k2 -n "$1" | tail -1 | sed 's/ [0-9]*$//' | tr ';' '\n'
}

python_test() {
	local py=$1 n named complete file
	[ -x "$py" ] || { echo "$py is missing: pyenv's interpreters are part of this machine" >&2; return 1; }
	file=$BATS_TEST_TMPDIR/jitwork.py
	cp "$MS_SRCDIR/tests/fixtures/jitwork.py" "$file"
	record out.txt p.msc -- "$py" -X perf "$file" 2
	ms-export --folded p.msc > p.folded 2>/dev/null
	read -r n named complete < <(python_shares p.folded)
	echo "python samples $n, naming Python code $named, complete $complete" >&2
	[ "$n" -ge 1000 ]
	at_least "$named" "$n" 95
	at_least "$complete" "$n" 95
	# The heaviest stack: from the entry through each trampoline, in call order.
	heaviest p.folded > heavy.txt
	cat heavy.txt >&2
	[ "$(head -1 heavy.txt)" = _start ]
	grep -x "py::outer:$file" heavy.txt
	[ "$(grep '^py::' heavy.txt | tail -3 | tr '\n' ' ')" = \
		"py::outer:$file py::middle:$file py::leaf:$file " ]
	# The map was read, and says so.
	ms-analyze summary p.msc > summary.txt
	grep -E "^perf maps: +pid [0-9]+ /tmp/perf-[0-9]+\.map: [0-9]+ functions, ok$" summary.txt
}

@test "python3.12 -X perf: Python names in at least 95 % of the Python samples, stacks whole through the trampolines" {
	python_test "$PY312"
}

@test "python3.13 -X perf: Python names in at least 95 % of the Python samples, stacks whole through the trampolines" {
	python_test "$PY313"
}

@test "python -X perf, deferred symbolization: the JIT names are in the capture from the start and stay" {
	cp "$MS_SRCDIR/tests/fixtures/jitwork.py" .
	record out.txt d.msc --symbolize=deferred -- "$PY312" -X perf jitwork.py 1
	# samples under py::leaf, before the native frames are named and after
	ms-export --folded d.msc 2>/dev/null | awk '/py::leaf:/ { n += $NF } END { print n + 0 }' > before.txt
	[ "$(cat before.txt)" -ge 500 ]
	microscope symbolize d.msc 2> symbolize.err || { cat symbolize.err >&2; false; }
	ms-export --folded d.msc 2>/dev/null | awk '/py::leaf:/ { n += $NF } END { print n + 0 }' > after.txt
	[ "$(cat after.txt)" -eq "$(cat before.txt)" ]
}

@test "jitmap basic: main > run_jit > jit_outer > jit_inner, named from the map and unwound by proved frames" {
	local total inner
	record out.txt j.msc -- "$FIXTURES/jitmap" basic 1
	ms-export --folded j.msc > j.folded 2>/dev/null
	total=$(awk '{ n += $NF } END { print n }' j.folded)
	inner=$(awk '/;main;run_jit;jit_outer;jit_inner [0-9]+$/ && !/^\[truncated/ { n += $NF }
		END { print n + 0 }' j.folded)
	echo "samples $total, complete through jit_outer in jit_inner $inner" >&2
	at_least "$inner" "$total" 90
}

@test "jitmap remap: after the mapping over jit_remap_old, nothing is named jit_remap_old; the new code is named and proved" {
	local start ns after_ms
	record out.txt r.msc -- "$FIXTURES/jitmap" remap 1
	ns=$(awk '$1 == "remapped" { print $2 }' out.txt)
	start=$(ms-analyze summary --json r.msc | jq .start_time_ns)
	after_ms=$(( (ns - start) / 1000000 + 1 ))
	ms-analyze top --json --time "${after_ms}ms.." r.msc > after.json
	[ "$(jq '[.functions[] | select(.name == "jit_remap_old")] | length' after.json)" -eq 0 ]
	[ "$(jq '[.functions[] | select(.name == "jit_remap_new") | .self] | add' after.json)" -ge 100 ]
	ms-analyze top --json --time "..$(( after_ms - 2 ))ms" r.msc > before.json
	[ "$(jq '[.functions[] | select(.name == "jit_remap_old") | .self] | add' before.json)" -ge 100 ]
	# The new code keeps a frame pointer, and its proof finds run_remap through it.
	ms-export --folded r.msc 2>/dev/null | grep -E '^_start;.*;main;run_remap;jit_remap_new [0-9]+$'
}

@test "jitmap big: a function past the 64 MiB code budget is named, its stacks end there for want of code, and problems says why" {
	record out.txt b.msc -- "$FIXTURES/jitmap" big 1
	ms-export --folded b.msc > b.folded 2>/dev/null
	grep -E '^_start;.*;main;run_big;jit_big_0 [0-9]+$' b.folded
	grep -E '^\[truncated: no-cfi\];jit_big_1099 [0-9]+$' b.folded
	run ! grep -E '^[^[].*;jit_big_1099 [0-9]+$' b.folded
	ms-analyze problems b.msc > problems.txt
	cat problems.txt >&2
	grep -i "64 MiB" problems.txt
}

@test "jitmap stale: a map older than the process is never read: its code stays unnamed and problems says why" {
	local pid
	mkfifo go
	microscope record -o s.msc -- "$FIXTURES/jitmap" stale 0.5 < go > out.txt 2> record.err &
	local rec=$!
	exec 4> go
	for _ in $(seq 200); do
		grep -q '^ready' out.txt 2>/dev/null && break
		sleep 0.05
	done
	pid=$(awk '$1 == "ready" { print $2 }' out.txt)
	MAPS+=("/tmp/perf-$pid.map")
	sed -n 's/^would //p' out.txt > "/tmp/perf-$pid.map"
	touch -d '1 hour ago' "/tmp/perf-$pid.map"
	echo go >&4
	exec 4>&-
	wait "$rec"
	run ! grep -E 'jit_inner|jit_outer' <(ms-export --folded s.msc 2>/dev/null)
	ms-analyze problems s.msc > problems.txt
	cat problems.txt >&2
	grep -i "stale" problems.txt
}

@test "node --perf-basic-prof: JavaScript names the samples; a JS frame the proof does not reach ends its stack, saying so" {
	local total named cut
	command -v node || { echo "node is missing: it is part of this machine" >&2; return 1; }
	cp "$MS_SRCDIR/tests/fixtures/jitwork.js" .
	record out.txt n.msc -- node --perf-basic-prof jitwork.js 2
	ms-export --folded n.msc > n.folded 2>/dev/null
	# The samples in JavaScript: a JS: frame innermost.
	total=$(awk '/;JS:[^;]* [0-9]+$/ { n += $NF } END { print n + 0 }' n.folded)
	named=$(awk '/;JS:[*^~]?(leaf|middle|outer) [^;]*jitwork\.js:[0-9:]+ [0-9]+$/ { n += $NF }
		END { print n + 0 }' n.folded)
	cut=$(awk '/^\[truncated: no-cfi\];JS:[^;]* [0-9]+$/ { n += $NF } END { print n + 0 }' n.folded)
	echo "JS samples $total, in jitwork.js's functions $named, cut at the JS frame $cut" >&2
	[ "$total" -ge 1000 ]
	at_least "$named" "$total" 95
	# V8 begins every function with a conditional branch, and a proof goes
	# no further than the first: the JS frame ends the stack, with its
	# reason, and no native caller is guessed past it.
	at_least "$cut" "$total" 90
}

@test "lli: the objects LLVM registers for GDB name main > outer > middle > leaf, unwound by their own CFI to _start" {
	local total leaf
	command -v lli || { echo "lli (Debian's llvm) is missing: install-deps installs it" >&2; return 1; }
	record out.txt l.msc -- lli "$MS_SRCDIR/tests/fixtures/jitwork.ll" 2
	ms-export --folded l.msc > l.folded 2>/dev/null
	total=$(awk '{ n += $NF } END { print n }' l.folded)
	leaf=$(awk '/^_start;.*;main;outer;middle;leaf [0-9]+$/ { n += $NF } END { print n + 0 }' l.folded)
	echo "samples $total, complete through the JIT's main to leaf $leaf" >&2
	at_least "$leaf" "$total" 90
	ms-analyze top --json l.msc > top.json
	jq -r '[.functions[] | select(.name == "leaf")][0].module' top.json | grep -E '^\[jit-object 0x[0-9a-f]+\]$'
	ms-analyze problems l.msc > problems.txt
	run ! grep jit- problems.txt
}

@test "jitgdb: a hand-registered object names and unwinds its code; unregistered, the code is nobody's" {
	local ns start after_ms
	record out.txt g.msc -- "$FIXTURES/jitgdb" basic 1
	ms-export --folded g.msc > g.folded 2>/dev/null
	grep -E '^_start;.*;main;run_gdb;jit_gdb_func [0-9]+$' g.folded
	record out2.txt u.msc -- "$FIXTURES/jitgdb" unregister 1
	ns=$(awk '$1 == "unregistered" { print $2 }' out2.txt)
	start=$(ms-analyze summary --json u.msc | jq .start_time_ns)
	after_ms=$(( (ns - start) / 1000000 + 25 ))
	ms-analyze top --json --time "..$(( after_ms - 30 ))ms" u.msc > before.json
	[ "$(jq '[.functions[] | select(.name == "jit_gdb_func") | .self] | add' before.json)" -ge 100 ]
	# (the recorder notices the unregistration at most 20 ms of samples later)
	ms-analyze top --json --time "${after_ms}ms.." u.msc > after.json
	[ "$(jq '[.functions[] | select(.name == "jit_gdb_func")] | length' after.json)" -eq 0 ]
	ms-analyze tree --json --time "${after_ms}ms.." u.msc > tree.json
	[ "$(jq '.total' tree.json)" -ge 100 ]
}

#!/usr/bin/env bats
# The BPF Python walker (bpf/python.bpf.h) on the real kernel, through
# tests/unit/pybpfwalk: the sampler program attached to cpu-clock (or
# context-switch) events on a Python fixture, py_layouts filled from the
# layout (python/bpflayout.h), py_threads from the userspace walker every
# 20 ms (or left empty: py_find), each record checked and its frames named
# by the userspace walker while the fixture runs. On every Python of this
# machine (Debian's 3.11, pyenv's 3.11.7, 3.12.1, 3.13.0); one missing is
# a failure.
#
# pybpfwalk prints one line per record taken after the fixture's "ready":
#   rec TID CPU STATUS GIL N STACK
# STACK outermost first, "func@file:line" joined by ';', '!' after a frame
# marked ENTRY (the first its activation of the interpreter's loop ran).
#
# Run by hand: MS_BUILDDIR=$PWD MS_SRCDIR=$PWD bats tests/0770-python-walker.bats

# shellcheck disable=SC2154 # output, status: set by bats's run
bats_require_minimum_version 1.5.0
load test_helper

PY_DEBIAN=/usr/bin/python3.11
PY311=/root/.pyenv/versions/3.11.7/bin/python3.11
PY312=/root/.pyenv/versions/3.12.1/bin/python3.12
PY313=/root/.pyenv/versions/3.13.0/bin/python3.13

setup() {
	require_built "$MS_BUILDDIR/tests/unit/pybpfwalk"
	cd "$BATS_TEST_TMPDIR" || return
	cp "$MS_SRCDIR/tests/fixtures/pystack.py" "$MS_SRCDIR/tests/fixtures/pygil.py" .
	SCRIPT=$BATS_TEST_TMPDIR/pystack.py
	GIL=$BATS_TEST_TMPDIR/pygil.py
}

teardown() {
	no_leftover_processes
}

need_python() {
	[ -x "$1" ] || { echo "$1 is missing: this machine's Pythons are listed in ARCHITECTURE.md (reinstall it)" >&2; return 1; }
}

# walk [OPTIONS] -- PYTHON ARGS: pybpfwalk into the file walk.
walk() {
	local py
	for py in "$@"; do [ "$py" = -- ] && break; done
	"$MS_BUILDDIR/tests/unit/pybpfwalk" "$@" >walk 2>walkerr || {
		echo "pybpfwalk $* failed:" >&2
		cat walk walkerr >&2
		return 1
	}
	grep -q '^sizes .* bad 0 failed [0-9]*$' walk || { grep '^sizes' walk >&2; return 1; }
	# A record the ring had no room for (the tool drains it slowly on a
	# starved machine) is the kernel's loss, counted, not the walker's fault:
	# at most 1 % of them.
	awk '$1 == "sizes" { exit !($NF * 100 <= $5) }' walk || { grep '^sizes' walk >&2; return 1; }
	grep -q '^sizes .* unresolved 0 stale 0 ' walk || { grep '^sizes' walk >&2; return 1; }
}

# line FILE MARK: the line of "# mark-MARK" in FILE.
line() {
	grep -n -- "# mark-$2\$" "$1" | cut -d: -f1
}

# fr FILE FUNC MARK: a frame as pybpfwalk prints it.
fr() {
	echo "$3@$1:$(line "$1" "$2")"
}

# inner(STACK) in awk: its innermost frame, without its ENTRY mark.
INNER='function inner(s, a, n) { n = split(s, a, ";"); sub(/!$/, "", a[n]); return a[n] } '

# at_least PART WHOLE PERCENT WHAT
at_least() {
	awk -v p="$1" -v w="$2" -v pc="$3" 'BEGIN { exit !(w > 0 && p * 100 >= w * pc) }' || {
		echo "$4: $1 of $2, under $3 %" >&2
		return 1
	}
}

check_chain() {
	need_python "$1" || return 1
	walk --seconds 2 -- "$1" "$SCRIPT" chain || return 1
	local pid want all good other
	pid=$(sed -n 's/^fixture: ready //p' walk)
	# <module> is the one frame its activation of the loop began with.
	want="$(fr "$SCRIPT" module '<module>')!;$(fr "$SCRIPT" main-chain main);$(fr "$SCRIPT" f f)"
	want="$want;$(fr "$SCRIPT" g g);$(fr "$SCRIPT" h h)"
	all=$(awk -v t="$pid" '$1 == "rec" && $2 == t' walk | wc -l)
	good=$(awk -v t="$pid" -v w="$want" '$1 == "rec" && $2 == t && $4 == "complete" && $6 == 5 && $7 == w' walk | wc -l)
	# Frames that are not the script's are never written.
	other=$(awk -v t="$pid" -v w="$want" '$1 == "rec" && $2 == t && $6 > 0 && $7 != w' walk | wc -l)
	[ "$all" -ge 300 ] || { echo "under $1: only $all records" >&2; cat walk >&2; return 1; }
	at_least "$good" "$all" 95 "under $1, records with f > g > h" || { grep -v '^fixture' walk | sort | uniq -c | sort -rn | head >&2; return 1; }
	[ "$other" = 0 ] || { echo "under $1, wanted $want; got:" >&2; awk -v w="$want" '$1 == "rec" && $7 != w' walk | head >&2; return 1; }
	# One record beside each sample of the thread.
	awk -v t="$pid" '$1 == "thread" && $2 == t { d = $4 - $6; exit !(d <= 2 && d >= -2) }' walk || {
		grep '^thread' walk >&2; return 1
	}
}

# check_threads PYTHON [--no-threads | --shuffle-threads]: each thread shows
# only its own frames, and nearly always has them.
check_threads() {
	need_python "$1" || return 1
	local n=4 tid name all good wrong pid
	walk --seconds 2 ${2:+"$2"} -- "$1" "$SCRIPT" threads "$n" || return 1
	pid=$(sed -n 's/^fixture: ready //p' walk)
	[ "$(grep -c '^fixture: thread [0-9]* spin_' walk)" = "$n" ] || { cat walk >&2; return 1; }
	while read -r tid name; do
		all=$(awk -v t="$tid" '$1 == "rec" && $2 == t' walk | wc -l)
		good=$(awk -v t="$tid" -v w="$name@$SCRIPT:$(line "$SCRIPT" spin)" \
			"$INNER"'$1 == "rec" && $2 == t && $4 == "complete" && inner($7) == w' walk | wc -l)
		wrong=$(awk -v t="$tid" -v w="$name@" \
			'$1 == "rec" && $2 == t && $6 > 0 && index($7, w) == 0' walk | wc -l)
		[ "$all" -ge 20 ] || { echo "under $1 $2: thread $tid ($name) has $all records" >&2; grep '^thread' walk >&2; return 1; }
		at_least "$good" "$all" 95 "under $1 $2, thread $tid's records with $name" || { awk -v t="$tid" '$1 == "rec" && $2 == t' walk | head >&2; return 1; }
		[ "$wrong" = 0 ] || { echo "under $1 $2: thread $tid shows frames not its own:" >&2; awk -v t="$tid" -v w="$name@" '$1 == "rec" && $2 == t && $6 > 0 && index($7, w) == 0' walk | head >&2; return 1; }
	done < <(sed -n 's/^fixture: thread \([0-9]*\) \(spin_[0-9]*\)$/\1 \2/p' walk)
	# The main thread: main_spin, never a spinner's frames.
	all=$(awk -v t="$pid" '$1 == "rec" && $2 == t' walk | wc -l)
	good=$(awk -v t="$pid" -v w="main_spin@$SCRIPT:$(line "$SCRIPT" main-spin)" \
		"$INNER"'$1 == "rec" && $2 == t && $4 == "complete" && inner($7) == w' walk | wc -l)
	[ "$all" -ge 20 ] || { echo "under $1 $2: the main thread has $all records" >&2; return 1; }
	at_least "$good" "$all" 95 "under $1 $2, main thread's records in main_spin" || return 1
	run ! grep -E "^rec $pid .*spin_[0-9]" walk
}

# check_gil PYTHON: the busy thread holds the GIL as it runs; the sleeper,
# seen as it is switched out, has released it.
check_gil() {
	need_python "$1" || return 1
	local pid sleeper all held released
	walk --seconds 2 -- "$1" "$GIL" || return 1
	pid=$(sed -n 's/^fixture: ready //p' walk)
	all=$(awk -v t="$pid" '$1 == "rec" && $2 == t' walk | wc -l)
	held=$(awk -v t="$pid" -v w="busy@$GIL:$(line "$GIL" busy)" \
		"$INNER"'$1 == "rec" && $2 == t && $5 == "held" && inner($7) == w' walk | wc -l)
	[ "$all" -ge 300 ] || { echo "under $1: the busy thread has $all records" >&2; return 1; }
	at_least "$held" "$all" 90 "under $1, busy thread's records holding the GIL" || return 1
	walk --seconds 2 --switches -- "$1" "$GIL" || return 1
	sleeper=$(sed -n 's/^fixture: thread \([0-9]*\) sleeper$/\1/p' walk)
	all=$(awk -v t="$sleeper" '$1 == "rec" && $2 == t' walk | wc -l)
	released=$(awk -v t="$sleeper" -v w="sleeper@$GIL:$(line "$GIL" sleep)" \
		"$INNER"'$1 == "rec" && $2 == t && $5 == "released" && inner($7) == w' walk | wc -l)
	[ "$all" -ge 200 ] || { echo "under $1: the sleeper has $all records" >&2; return 1; }
	at_least "$released" "$all" 90 "under $1, sleeper's records with the GIL released" || return 1
}

@test "Debian's python3.11: f > g > h in the walker's records" { check_chain "$PY_DEBIAN"; }
@test "pyenv's 3.11.7: f > g > h in the walker's records" { check_chain "$PY311"; }
@test "pyenv's 3.12.1: f > g > h in the walker's records" { check_chain "$PY312"; }
@test "pyenv's 3.13.0: f > g > h in the walker's records" { check_chain "$PY313"; }

@test "Debian's python3.11: threads, from py_threads, from py_find, and past stale py_threads" {
	check_threads "$PY_DEBIAN"
	check_threads "$PY_DEBIAN" --no-threads
	check_threads "$PY_DEBIAN" --shuffle-threads
}
@test "pyenv's 3.11.7: threads, from py_threads, from py_find, and past stale py_threads" {
	check_threads "$PY311"
	check_threads "$PY311" --no-threads
	check_threads "$PY311" --shuffle-threads
}
@test "pyenv's 3.12.1: threads, from py_threads, from py_find, and past stale py_threads" {
	check_threads "$PY312"
	check_threads "$PY312" --no-threads
	check_threads "$PY312" --shuffle-threads
}
@test "pyenv's 3.13.0: threads, from py_threads, from py_find, and past stale py_threads" {
	check_threads "$PY313"
	check_threads "$PY313" --no-threads
	check_threads "$PY313" --shuffle-threads
}

@test "Debian's python3.11: the GIL held by the busy thread, released by the sleeper" { check_gil "$PY_DEBIAN"; }
@test "pyenv's 3.11.7: the GIL held by the busy thread, released by the sleeper" { check_gil "$PY311"; }
@test "pyenv's 3.12.1: the GIL held by the busy thread, released by the sleeper" { check_gil "$PY312"; }
@test "pyenv's 3.13.0: the GIL held by the busy thread, released by the sleeper" { check_gil "$PY313"; }

# check_nested PYTHON [--no-threads]: a target in its own pid namespace (the
# walker matches native_thread_id with the thread's id there): each thread
# (numbered in the initial namespace) shows one function, its own.
check_nested() {
	need_python "$1" || return 1
	command -v unshare > /dev/null || { echo "unshare is missing (util-linux)" >&2; return 1; }
	walk --seconds 2 ${2:+"$2"} -- unshare -p -f --kill-child "$1" "$SCRIPT" threads 2 || return 1
	# the fixture sees itself as pid 1 in its namespace
	grep -qx 'fixture: ready 1' walk || { cat walk >&2; return 1; }
	awk "$INNER"'$1 == "rec" && $6 > 0 { f = inner($7); sub(/@.*/, "", f); print $2, f }' walk |
		sort | uniq -c > funcs
	# per thread: one function in at least 95 % of its records, and each
	# function the main thread's or a spinner's, once
	awk '{ all[$2] += $1; if ($1 > top[$2]) { top[$2] = $1; fn[$2] = $3 } }
		END {
			for (t in all) {
				if (top[t] * 100 < all[t] * 95 || all[t] < 20) { print "thread " t; bad = 1 }
				seen[fn[t]]++
			}
			if (seen["main_spin"] != 1 || seen["spin_0"] != 1 || seen["spin_1"] != 1) bad = 1
			exit bad
		}' funcs || { echo "under $1 $2 in a nested pid namespace:" >&2; cat funcs >&2; return 1; }
	# never another thread's frames: no thread shows two functions
	[ "$(awk '{ print $2 }' funcs | sort | uniq -d)" = "" ] || { cat funcs >&2; return 1; }
}

@test "Debian's python3.11 in its own pid namespace: each thread its own frames" {
	check_nested "$PY_DEBIAN"
	check_nested "$PY_DEBIAN" --no-threads
}

@test "pyenv's 3.13.0 in its own pid namespace: each thread its own frames" {
	check_nested "$PY313"
	check_nested "$PY313" --no-threads
}

@test "py_find past its bound gives the status and no frames, never a guess" {
	need_python "$PY312"
	# five thread states, a bound of two: no search can prove its match unique
	walk --seconds 1 --no-threads --find-bound 2 -- "$PY312" "$SCRIPT" threads 4
	awk '$1 == "rec" { n++; if ($4 != "search-bound" || $6 != 0 || $7 != "-") bad++ }
		END { exit !(n >= 50 && bad == 0) }' walk || { grep '^rec' walk | sort | uniq -c | head >&2; false; }
	# a bound of five is enough
	walk --seconds 1 --no-threads --find-bound 5 -- "$PY312" "$SCRIPT" threads 4
	run ! grep -E '^rec .* search-bound ' walk
}

@test "a process without a py_layout gets no record" {
	need_python "$PY312"
	walk --seconds 1 --no-layout -- "$PY312" "$SCRIPT" chain
	grep -E '^sizes 0 0 records 0 ' walk
	# (the program ran on every sample: the samples are there)
	awk '$1 == "thread" && $4 >= 300 { ok = 1 } END { exit !ok }' walk
	grep -E '^prog verified_insns [0-9]+ run_cnt [1-9][0-9]* ' walk
}

@test "a full record's size: 5 frames of the chain take 216 bytes" {
	need_python "$PY312"
	walk --seconds 1 -- "$PY312" "$SCRIPT" chain
	grep -E '^sizes 216 216 records [1-9]' walk
}

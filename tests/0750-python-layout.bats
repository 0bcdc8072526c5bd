#!/usr/bin/env bats
# CPython's layout and the userspace frame walker (issue 20's foundation,
# libcommon/python/): tests/unit/pywalk over tests/fixtures/pystack.py on
# every Python of this machine (ARCHITECTURE.md: Debian's 3.11, pyenv's
# 3.11.7, 3.12.1 and 3.13.0). Each thread's stack must be exactly the
# script's functions, outermost first, on the lines the fixture marks
# ("# mark-NAME", found with grep -n), and nothing from another thread.

# shellcheck disable=SC2154 # output, status: set by bats's run
bats_require_minimum_version 1.5.0
load test_helper

PY_DEBIAN=/usr/bin/python3.11
PY311=/root/.pyenv/versions/3.11.7/bin/python3.11
PY312=/root/.pyenv/versions/3.12.1/bin/python3.12
PY313=/root/.pyenv/versions/3.13.0/bin/python3.13

setup() {
	require_built "$MS_BUILDDIR/tests/unit/pywalk"
	cd "$BATS_TEST_TMPDIR" || return
	# The script runs from the test's folder, so leftover checks see it.
	cp "$MS_SRCDIR/tests/fixtures/pystack.py" .
	SCRIPT=$BATS_TEST_TMPDIR/pystack.py
	PYPID=
}

teardown() {
	[ -z "$PYPID" ] || { kill "$PYPID" 2>/dev/null; wait "$PYPID" 2>/dev/null || true; }
	no_leftover_processes
}

# The Pythons are part of this machine: one missing is a failure.
need_python() {
	[ -x "$1" ] || { echo "$1 is missing: this machine's Pythons are listed in ARCHITECTURE.md (reinstall it)" >&2; return 1; }
}

# start PYTHON MODE [ARG]: run the fixture until it says ready.
start() {
	need_python "$1" || return 1
	# Emptied here, not by the child's redirection, which may come after the
	# first look: the last mode's "ready" would pass for this one's.
	: >out
	"$1" "$SCRIPT" "$2" ${3:+"$3"} >>out 2>err &
	PYPID=$!
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q '^ready ' out && return 0
		sleep 0.05
	done
	echo "the fixture under $1 never said ready:" >&2
	cat out err >&2
	return 1
}

stop() {
	kill "$PYPID"
	wait "$PYPID" 2>/dev/null || true
	PYPID=
}

# line MARK: the line of "# mark-MARK".
line() {
	grep -n -- "# mark-$1\$" "$SCRIPT" | cut -d: -f1
}

# frame FUNC MARK: the line pywalk prints for a frame.
frame() {
	echo "$SCRIPT:$1:$(line "$2")"
}

# thread_block TID: the lines pywalk printed for thread TID, "thread" to "end".
thread_block() {
	awk -v t="thread $1" '$0 == t { on = 1 } on { print } on && /^end / { exit }' walk
}

walk() {
	"$MS_BUILDDIR/tests/unit/pywalk" "$PYPID" >walk 2>walkerr || {
		echo "pywalk failed:" >&2
		cat walk walkerr >&2
		return 1
	}
}

check_chain() {
	start "$1" chain || return 1
	walk || return 1
	local want
	want=$(printf '%s\n' "thread $PYPID" "$(frame '<module>' module)" "$(frame main main-chain)" \
		"$(frame f f)" "$(frame g g)" "$(frame h h)" "end complete")
	[ "$(thread_block "$PYPID")" = "$want" ] || {
		echo "under $1, wanted:" >&2; echo "$want" >&2; echo "got:" >&2; cat walk >&2; return 1
	}
	# One thread only.
	[ "$(grep -c '^thread ' walk)" = 1 ] || { cat walk >&2; return 1; }
	stop
}

check_recurse() {
	start "$1" recurse 4 || return 1
	walk || return 1
	local want
	want=$(printf '%s\n' "thread $PYPID" "$(frame '<module>' module)" "$(frame main main-recurse)" \
		"$(frame rec rec)" "$(frame rec rec)" "$(frame rec rec)" "$(frame rec rec)" \
		"$(frame rec rec-spin)" "end complete")
	[ "$(thread_block "$PYPID")" = "$want" ] || {
		echo "under $1, wanted:" >&2; echo "$want" >&2; echo "got:" >&2; cat walk >&2; return 1
	}
	stop
}

check_threads() {
	local n=6 tid name want
	start "$1" threads "$n" || return 1
	walk || return 1
	want=$(printf '%s\n' "thread $PYPID" "$(frame '<module>' module)" "$(frame main main-threads)" \
		"$(frame main_spin main-spin)" "end complete")
	[ "$(thread_block "$PYPID")" = "$want" ] || {
		echo "under $1, main thread: wanted:" >&2; echo "$want" >&2; echo "got:" >&2; cat walk >&2; return 1
	}
	[ "$(grep -c '^thread [0-9]* spin_' out)" = "$n" ] || { cat out >&2; return 1; }
	while read -r _ tid name; do
		want=$(printf '%s\n' "thread $tid" "$SCRIPT:$name:$(line spin)" "end complete")
		[ "$(thread_block "$tid")" = "$want" ] || {
			echo "under $1, thread $tid: wanted:" >&2; echo "$want" >&2; echo "got:" >&2; cat walk >&2; return 1
		}
	done < <(grep '^thread [0-9]* spin_' out)
	# Every thread once, and no other.
	[ "$(grep -c '^thread ' walk)" = $((n + 1)) ] || { cat walk >&2; return 1; }
	[ "$(grep -c '^end complete$' walk)" = $((n + 1)) ] || { cat walk >&2; return 1; }
	stop
}

@test "Debian's python3.11: f > g > h, recursion and threads walked exactly" {
	check_chain "$PY_DEBIAN"
	check_recurse "$PY_DEBIAN"
	check_threads "$PY_DEBIAN"
}

@test "pyenv's 3.11.7: f > g > h, recursion and threads walked exactly" {
	check_chain "$PY311"
	check_recurse "$PY311"
	check_threads "$PY311"
}

@test "pyenv's 3.12.1: f > g > h, recursion and threads walked exactly" {
	check_chain "$PY312"
	check_recurse "$PY312"
	check_threads "$PY312"
}

@test "pyenv's 3.13.0: f > g > h, recursion and threads walked exactly" {
	check_chain "$PY313"
	check_recurse "$PY313"
	check_threads "$PY313"
}

@test "the layout's version comes from the module and its offsets from the best source" {
	start "$PY313" chain
	walk
	grep -qx "layout 3.13 0x030d00f0 debug-offsets /root/.pyenv/versions/3.13.0/lib/libpython3.13.so.1.0" walk
	stop
	# pyenv's builds carry DWARF: their tables are checked against it.
	start "$PY312" chain
	walk
	grep -qx "layout 3.12 0x030c01f0 table+dwarf /root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0" walk
	stop
	start "$PY311" chain
	walk
	grep -qx "layout 3.11 0x030b07f0 table+dwarf /root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0" walk
	stop
	# Debian's has DWARF only with python3.11-dbg; without it, the table alone.
	start "$PY_DEBIAN" chain
	walk
	grep -Eqx "layout 3.11 0x030b[0-9a-f]{4} (table|table\+dwarf) /usr/bin/python3.11" walk
	stop
}

@test "a process with no CPython is refused with the reason" {
	sleep 30 &
	PYPID=$!
	run ! "$MS_BUILDDIR/tests/unit/pywalk" "$PYPID"
	[[ "$output" == *"process $PYPID maps no CPython interpreter"* ]]
}

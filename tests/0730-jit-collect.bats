#!/usr/bin/env bats
# ms-collect reads a JIT's perf map (libcommon/jit/recorder.h): the
# jitmap fixture's modes (tests/fixtures/README-jit.txt states each one's
# truth), CPython 3.12 under -X perf, --no-perf-map, and a program with no
# JIT code. Streams are read with `jit-recorder-test --stream-jit`
# (tests/unit/jit-recorder-test.c), which prints each JIT_FUNC and
# JIT_READ record and whether the sample right after a read's records
# holds an address in a function it wrote (the sample that made it read).

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	require_built ms-collect "$FIXTURES/jitmap" "$FIXTURES/burn" \
		"$MS_BUILDDIR/tests/unit/jit-recorder-test"
	cd "$BATS_TEST_TMPDIR" || return
}

teardown() {
	local m
	# A map a killed fixture or the stale test left (listed by forget_map).
	if [ -f "$BATS_TEST_TMPDIR/maps" ]; then
		while read -r m; do
			rm -f "$m"
		done < "$BATS_TEST_TMPDIR/maps"
	fi
	no_leftover_processes
}

# Remove /tmp/perf-$1.map at the end, whatever the test did.
forget_map() {
	echo "/tmp/perf-$1.map" >> "$BATS_TEST_TMPDIR/maps"
}

# The JIT records of stream $1, into jit.txt.
jit_records() {
	"$MS_BUILDDIR/tests/unit/jit-recorder-test" --stream-jit < "$1" > jit.txt
}

# Record jitmap MODE SECONDS into run.msr; its output in fixture.out.
record_jitmap() {
	ms-collect -o run.msr -- "$FIXTURES/jitmap" "$@" > fixture.out 2> collect.err ||
		{ cat collect.err >&2; return 1; }
	jit_records run.msr
}

# The field after word $2 in line $1.
field() {
	awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' <<< "$1"
}

@test "basic: jit_inner and jit_outer read with the fixture's exact ranges, proved, before the sample that made the read" {
	local pid name start size line
	record_jitmap basic 1
	pid=$(awk '$1 == "ready" { print $2 }' fixture.out)
	[ -n "$pid" ]
	for name in jit_inner jit_outer; do
		read -r start size < <(awk -v n="$name" '$1 == "map" && $4 == n { print $2, $3 }' fixture.out)
		line=$(grep " name $name " jit.txt)
		echo "$line" >&2
		[ "$(grep -c " name $name " jit.txt)" -eq 1 ]
		[ "$(field "$line" pid)" = "$pid" ]
		[ "$(field "$line" start)" = "0x$start" ]
		[ "$(field "$line" size)" = "0x$size" ]
		[ "$(field "$line" flags)" = 0 ]
		# Rows proved from the code: more than the 8-byte header of an empty table.
		[ "$(field "$line" rows)" -gt 8 ]
		# Read after every mapping record seen before it.
		[ "$(field "$line" after-mmap)" = 1 ]
	done
	[ "$(field "$(grep ' name jit_inner ' jit.txt)" line)" = 1 ]
	[ "$(field "$(grep ' name jit_outer ' jit.txt)" line)" = 2 ]
	# One read, to the map's end.
	[ "$(grep -c '^jit-read ' jit.txt)" -eq 1 ]
	grep -q "^jit-read pid $pid path /tmp/perf-$pid.map status ok err 0 .* functions 2 " jit.txt
	# The sample that made it read follows its records.
	[ "$(grep -c '^jit-next-sample ' jit.txt)" -eq 1 ]
	grep -q '^jit-next-sample holds$' jit.txt
}

@test "stale: a map older than the process is not read, and the read says so" {
	local pid
	mkfifo go
	ms-collect -o run.msr -- "$FIXTURES/jitmap" stale 0.5 < go > fixture.out 2> collect.err &
	local collect=$!
	exec 4> go
	for _ in $(seq 100); do grep -q '^ready' fixture.out && break; sleep 0.05; done
	pid=$(awk '$1 == "ready" { print $2 }' fixture.out)
	[ -n "$pid" ] || { exec 4>&-; wait "$collect"; false; }
	forget_map "$pid"
	sed -n 's/^would //p' fixture.out > "/tmp/perf-$pid.map"
	touch -d '1 hour ago' "/tmp/perf-$pid.map"
	echo go >&4
	exec 4>&-
	wait "$collect" || { cat collect.err >&2; false; }
	jit_records run.msr
	cat jit.txt >&2
	run ! grep -q '^jit-func ' jit.txt
	[ "$(grep -c '^jit-read ' jit.txt)" -eq 1 ]
	grep -q "^jit-read pid $pid path /tmp/perf-$pid.map status stale err 0 offset 0 functions 0 " jit.txt
}

@test "big: the functions past the 64 MiB code budget have no code read, and the read counts them" {
	local line
	record_jitmap big 1
	[ "$(grep -c '^jit-func ' jit.txt)" -eq 1100 ]
	# In line order the first 1024 take the budget; 1025 on have no code (flag 1), no rows.
	[ "$(awk '$1 == "jit-func" && $13 == 0 && $11 <= 1024' jit.txt | wc -l)" -eq 1024 ]
	[ "$(awk '$1 == "jit-func" && $13 == 1 && $15 == 0 && $11 > 1024' jit.txt | wc -l)" -eq 76 ]
	grep -q ' name jit_big_1099 line 1100 flags 1 rows 0 ' jit.txt
	line=$(grep '^jit-read ' jit.txt | tail -1)
	[ "$(field "$line" functions)" = 1100 ]
	[ "$(field "$line" no-code)" = 76 ]
	[ "$(field "$line" code-bytes)" = $((64 << 20)) ]
	[ "$(field "$line" code-unread)" = 0 ]
}

@test "grow: functions that arrive while recording are read as samples land in them" {
	local n k
	record_jitmap grow 1
	n=$(awk '$1 == "done" { print $4 }' fixture.out)
	[ "$n" -ge 5 ]
	# Each function but perhaps the last (it may end unsampled) is read once, in line order.
	for k in $(seq 0 $((n - 2))); do
		[ "$(grep -c " name jit_grow_$k line $((k + 1)) flags 0 " jit.txt)" -eq 1 ] ||
			{ grep -E "jit_grow_$k |^jit-read" jit.txt >&2; false; }
	done
	# Read as they came: a read per function, not one at the end.
	[ "$(grep -c '^jit-read .* status ok ' jit.txt)" -ge $((n - 1)) ]
	# Each read's records come right before the sample that made it, so the
	# sample before them held none of the new code, but where it was drained
	# before its mapping's record, from another CPU's ring (nothing then says
	# the address is JIT code): seen once in five runs.
	run ! grep -q '^jit-next-sample misses' jit.txt
	local holds misses
	holds=$(grep -c '^jit-prev-sample holds$' jit.txt || true)
	misses=$(grep -c '^jit-prev-sample misses$' jit.txt || true)
	echo "samples before a read's records: $holds held its code, $misses did not" >&2
	[ "$misses" -gt $((2 * holds)) ]
}

@test "remap: the new code's line is read after the mapping made over the old function" {
	local remapped line
	record_jitmap remap 1
	remapped=$(awk '$1 == "remapped" { print $2 }' fixture.out)
	line=$(grep ' name jit_remap_new ' jit.txt)
	[ -n "$line" ]
	[ "$(field "$line" time)" -gt "$remapped" ]
	[ "$(field "$(grep ' name jit_remap_old ' jit.txt)" time)" -lt "$remapped" ]
}

@test "--no-perf-map: no map is read, no JIT record written" {
	ms-collect --no-perf-map -o run.msr -- "$FIXTURES/jitmap" basic 0.3 > fixture.out
	jit_records run.msr
	run ! grep -q '^jit-' jit.txt
	grep -q '^samples [1-9]' jit.txt
}

@test "a program without JIT code: nothing is read" {
	ms-collect -o run.msr -- "$FIXTURES/burn" 0.3 > /dev/null
	jit_records run.msr
	run ! grep -q '^jit-' jit.txt
	grep -q '^samples [1-9]' jit.txt
}

@test "python3.12 -X perf: its trampolines are read and named py::" {
	local py=${PYENV_ROOT:-$HOME/.pyenv}/versions/3.12.1/bin/python3.12
	[ -x "$py" ] || skip "pyenv's python3.12 is absent ($py): nothing to record"
	# CPython leaves its map behind: the shell says its pid, then becomes python.
	# shellcheck disable=SC2016 # $$, $0 and $@ are the inner shell's
	ms-collect -o run.msr -- sh -c 'echo $$ > pid; exec "$0" "$@"' "$py" -X perf -c '
def work(n):
    s = 0
    for i in range(n):
        s += i
    return s
def outer():
    for _ in range(300):
        work(20000)
outer()' 2> collect.err || { forget_map "$(cat pid)"; cat collect.err >&2; false; }
	forget_map "$(cat pid)"
	jit_records run.msr
	grep -q ' name py::work:<string> ' jit.txt
	grep -q ' name py::outer:<string> ' jit.txt
	[ "$(grep -c '^jit-func .* flags 0 rows [1-9]' jit.txt)" -gt 10 ]
	grep -q '^jit-read .* status ok ' jit.txt
	grep -q '^jit-next-sample holds$' jit.txt
}

@test "microscope record reads perf maps by default and hands --no-perf-map to ms-collect" {
	require_built microscope ms-analyze
	# Beside a copy of microscope (where it looks for its stages first), an
	# ms-collect that says what it was given; the other stages from PATH.
	mkdir bin
	cp "$MS_BUILDDIR/microscope" bin/
	printf '#!/bin/sh\necho "$@" > "%s/collect-args"\nexec "%s/ms-collect" "$@"\n' \
		"$PWD" "$MS_BUILDDIR" > bin/ms-collect
	chmod +x bin/ms-collect
	PATH=$MS_BUILDDIR:$PATH bin/microscope record -o "$PWD/a.msc" -- \
		"$FIXTURES/jitmap" basic 0.3 > /dev/null 2> record.err || { cat record.err >&2; false; }
	run ! grep -q -- "--no-perf-map" collect-args
	PATH=$MS_BUILDDIR:$PATH bin/microscope record --no-perf-map -o "$PWD/b.msc" -- \
		"$FIXTURES/jitmap" basic 0.3 > /dev/null 2> record.err || { cat record.err >&2; false; }
	grep -q -- "--no-perf-map" collect-args
	ms-analyze summary b.msc | grep -q "options: .* no-perf-map$"
	run -0 microscope record --help
	[[ "$output" == *"--no-perf-map"* ]]
}

@test "attach: the anonymous code /proc/PID/maps shows is JIT code; the map is read" {
	local pid start
	"$FIXTURES/jitmap" basic 3 > fixture.out 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q '^ready' fixture.out && break; sleep 0.05; done
	grep -q '^ready' fixture.out || { kill "$pid"; wait "$pid"; false; }
	forget_map "$pid"
	ms-collect -p "$pid" --duration 0.5 -o run.msr 2> collect.err || { cat collect.err >&2; kill "$pid"; false; }
	kill "$pid"
	wait "$pid" || true
	jit_records run.msr
	start=$(awk '$1 == "map" && $4 == "jit_inner" { print $2 }' fixture.out)
	grep -q "^jit-func pid $pid start 0x$start size 0x21 name jit_inner line 1 flags 0 " jit.txt
	grep -q "^jit-read pid $pid path /tmp/perf-$pid.map status ok err 0 .* functions 2 " jit.txt
	grep -q '^jit-next-sample holds$' jit.txt
}

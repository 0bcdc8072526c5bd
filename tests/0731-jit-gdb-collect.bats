#!/usr/bin/env bats
# ms-collect copies the objects a process registered through the GDB JIT
# interface (libcommon/jit/recordergdb.h): the jitgdb fixture's modes
# (tests/fixtures/README-jit.txt states each one's truth), Debian's lli
# (LLVM 14) running tests/fixtures/jitwork.ll, --no-jit-objects, and
# programs without the descriptor. Streams are read with
# `jit-recorder-test --stream-jit` (tests/unit/jit-recorder-test.c), which
# puts each object's JIT_OBJECT chunks together and prints one line per
# object with its executable sections, and one per unregistration.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	require_built ms-collect "$FIXTURES/jitgdb" "$FIXTURES/jitmap" "$FIXTURES/burn" \
		"$MS_BUILDDIR/tests/unit/jit-recorder-test"
	cd "$BATS_TEST_TMPDIR" || return
}

teardown() {
	local m
	if [ -f "$BATS_TEST_TMPDIR/maps" ]; then
		while read -r m; do
			rm -f "$m"
		done < "$BATS_TEST_TMPDIR/maps"
	fi
	no_leftover_processes
}

# The JIT records of stream $1, into jit.txt.
jit_records() {
	"$MS_BUILDDIR/tests/unit/jit-recorder-test" --stream-jit < "$1" > jit.txt
	cat jit.txt >&2
}

# The field after word $2 in line $1.
field() {
	awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' <<< "$1"
}

# Record jitgdb MODE SECONDS into run.msr (more ms-collect options first: $COLLECT_OPTS).
record_jitgdb() {
	# shellcheck disable=SC2086 # options, split on purpose
	ms-collect ${COLLECT_OPTS:-} -o run.msr -- "$FIXTURES/jitgdb" "$@" > fixture.out 2> collect.err ||
		{ cat collect.err >&2; return 1; }
	cat fixture.out >&2
	jit_records run.msr
}

@test "basic: the object is copied whole, once, with its code's range, before the sample that made the read" {
	local pid obj size text tsize line
	record_jitgdb basic 1
	pid=$(awk '$1 == "ready" { print $2 }' fixture.out)
	read -r obj size < <(awk '$1 == "object" { print $2, $3 }' fixture.out)
	read -r text tsize < <(awk '$1 == "text" { print $2, $3 }' fixture.out)
	[ "$(grep -c '^jit-object ' jit.txt)" -eq 1 ]
	line=$(grep '^jit-object ' jit.txt)
	[ "$(field "$line" pid)" = "$pid" ]
	[ "$(field "$line" addr)" = "0x$obj" ]
	[ "$(field "$line" size)" = "$((16#$size))" ]
	[ "$(field "$line" chunks)" = 1 ]
	[ "$(field "$line" after-mmap)" = 1 ]
	# Its one executable section is the running code, exactly.
	[ "$(field "$line" text)" = "$(printf '0x%x-0x%x' "$((16#$text))" "$((16#$text + 16#$tsize))")" ]
	grep -q '^jit-next-sample holds$' jit.txt
	run ! grep -q -e '^jit-object-unregister' -e '^jit-object-broken' jit.txt
	# Samples drained after the fixture ended may find it gone, nothing else goes wrong.
	[ "$(grep '^problem' jit.txt | grep -vc '^problem jit-process-gone ')" -eq 0 ]
	# The objects' code is named: no perf map is read over it.
	run ! grep -q -e '^jit-read ' -e '^jit-func ' jit.txt
}

@test "unregister: the unregistration is written after the fixture made it, for the entry copied" {
	local unregistered entry line
	record_jitgdb unregister 1
	unregistered=$(awk '$1 == "unregistered" { print $2 }' fixture.out)
	[ -n "$unregistered" ]
	[ "$(grep -c '^jit-object ' jit.txt)" -eq 1 ]
	entry=$(field "$(grep '^jit-object ' jit.txt)" entry)
	[ "$(field "$(grep '^jit-object ' jit.txt)" time)" -lt "$unregistered" ]
	[ "$(grep -c '^jit-object-unregister ' jit.txt)" -eq 1 ]
	line=$(grep '^jit-object-unregister ' jit.txt)
	[ "$(field "$line" entry)" = "$entry" ]
	[ "$(field "$line" time)" -gt "$unregistered" ]
	# Seen within the throttle's 20 ms of samples (and a drain) of the change.
	[ "$(field "$line" time)" -lt $((unregistered + 200000000)) ]
	# Unregistered, the code is unnamed, and a perf map is looked for there (none).
	run ! grep -q '^jit-func ' jit.txt
}

@test "lli: each module LLVM registers is copied, with its code's range, before the sample in it" {
	local pid
	[ -x /usr/bin/lli ] || skip "Debian's lli (llvm-14) is absent"
	ms-collect -o run.msr -- /usr/bin/lli "$MS_SRCDIR/tests/fixtures/jitwork.ll" 1 > fixture.out 2> collect.err ||
		{ cat collect.err >&2; false; }
	jit_records run.msr
	pid=$(awk '$1 == "ready" { print $2 }' fixture.out)
	[ -n "$pid" ]
	[ "$(grep -c "^jit-object pid $pid .* chunks 1 after-mmap 1 .* text 0x" jit.txt)" -ge 1 ]
	# No sample in the object's code came before it. (The sample right after
	# it made it read, but need not be in it: lli's lazy JIT runs call-through
	# stubs in anonymous memory no object holds, and a sample there reads
	# the descriptor too, finding the object just registered.)
	grep -q '^jit-prev-sample \(none\|misses\)$' jit.txt
	run ! grep -q -e '^jit-object-broken' -e '^jit-read ' -e '^jit-func ' jit.txt
	# Most samples are in the JIT's code: after the object, they hold its range.
	[ "$(awk '$1 == "samples-holding-last-read" { print $2 }' jit.txt)" -gt 500 ]
}

@test "--no-jit-objects: no object is read; the anonymous code then makes a perf-map read" {
	COLLECT_OPTS=--no-jit-objects record_jitgdb basic 0.3
	run ! grep -q '^jit-object' jit.txt
	grep -q '^jit-read .* status missing ' jit.txt
	COLLECT_OPTS="--no-jit-objects --no-perf-map" record_jitgdb basic 0.3
	run ! grep -q '^jit-' jit.txt
	# And --no-perf-map alone still reads the objects.
	COLLECT_OPTS=--no-perf-map record_jitgdb basic 0.3
	[ "$(grep -c '^jit-object ' jit.txt)" -eq 1 ]
}

# ms-collect's syscalls (not the target's) into trace.
trace_collect() {
	command -v strace > /dev/null || skip "strace is absent"
	strace -qq -o trace -e trace=openat,process_vm_readv ms-collect -o run.msr -- "$@" \
		> fixture.out 2> collect.err || { cat collect.err >&2; return 1; }
}

@test "a program without the descriptor: searched once per set of file mappings, its memory never read for it" {
	local pid
	# No JIT code at all: at most one search (a sample drained from one CPU's ring before
	# the mapping record in another's is in no mapping known), never a read of its memory.
	# (ms-collect reads its own maps too, for its vdso.)
	# shellcheck disable=SC2016 # $$, $0 and $@ are the inner shell's
	trace_collect sh -c 'echo $$ > pid; exec "$0" "$@"' "$FIXTURES/burn" 0.5
	pid=$(cat pid)
	grep -e "/proc/$pid/" -e process_vm_readv trace >&2 || true
	[ "$(grep -c "/proc/$pid/maps\"" trace)" -le 1 ]
	run ! grep -q process_vm_readv trace
	# Anonymous code in many new mappings (a perf map names it): one search, no descriptor read.
	trace_collect "$FIXTURES/jitmap" grow 0.5
	pid=$(awk '$1 == "ready" { print $2 }' fixture.out)
	echo "/tmp/perf-$pid.map" >> "$BATS_TEST_TMPDIR/maps"
	grep -c "/proc/$pid/maps\"" trace >&2
	[ "$(grep -c "/proc/$pid/maps\"" trace)" -eq 1 ]
	run ! grep -q 'iov_len=24}\], 1, 0) = ' trace
	jit_records run.msr
	[ "$(grep -c '^jit-func ' jit.txt)" -ge 3 ]
}

@test "a process with the descriptor: one 24-byte read per check, the list walked only when it changed" {
	local reads walks
	trace_collect "$FIXTURES/jitgdb" basic 1
	# The search, once.
	[ "$(grep -c "/proc/$(awk '$1 == "ready" { print $2 }' fixture.out)/maps\"" trace)" -eq 1 ]
	# One walk (one 32-byte entry read) and one object read; descriptor reads held by the
	# throttle to one per 20 ms of samples in the object's code, at most.
	walks=$(grep -c 'iov_len=32}\], 1, 0) = 32$' trace || true)
	reads=$(grep -c 'iov_len=24}\], 1, 0) = 24$' trace || true)
	echo "walks $walks descriptor reads $reads" >&2
	[ "$walks" -eq 1 ]
	[ "$reads" -ge 2 ]
	[ "$reads" -le 100 ]
}

@test "microscope record reads JIT objects by default and hands --no-jit-objects to ms-collect" {
	require_built microscope ms-analyze
	mkdir bin
	cp "$MS_BUILDDIR/microscope" bin/
	printf '#!/bin/sh\necho "$@" > "%s/collect-args"\nexec "%s/ms-collect" "$@"\n' \
		"$PWD" "$MS_BUILDDIR" > bin/ms-collect
	chmod +x bin/ms-collect
	PATH=$MS_BUILDDIR:$PATH bin/microscope record -o "$PWD/a.msc" -- \
		"$FIXTURES/jitgdb" basic 0.3 > /dev/null 2> record.err || { cat record.err >&2; false; }
	run ! grep -q -- "--no-jit-objects" collect-args
	PATH=$MS_BUILDDIR:$PATH bin/microscope record --no-jit-objects -o "$PWD/b.msc" -- \
		"$FIXTURES/jitgdb" basic 0.3 > /dev/null 2> record.err || { cat record.err >&2; false; }
	grep -q -- "--no-jit-objects" collect-args
	ms-analyze summary b.msc | grep -q "options: .* no-jit-objects$"
	run -0 microscope record --help
	[[ "$output" == *"--no-jit-objects"* ]]
}

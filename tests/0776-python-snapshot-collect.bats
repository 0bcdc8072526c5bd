#!/usr/bin/env bats
# ms-collect --python snapshot (libcommon/python/pysnapshot.h): no BPF;
# every --python-interval ms each thread state of a real CPython is read
# from the process and written as a PY_SNAPSHOT record, after the PY_CODE
# records of its codes. Streams are read with `pyrecorder-test
# --stream-python` (tests/unit/pyrecorder-test.c), which prints each
# Python record, a snapshot's frames named by the PY_CODE records before
# it ("?" for one none named yet):
#   snapshot PID TID ROUND TIME STATUS GIL N: NAME... | REASON
#
# Run by hand: MS_BUILDDIR=$PWD MS_SRCDIR=$PWD bats tests/0776-python-snapshot-collect.bats

# shellcheck disable=SC2154 # output, status: set by bats's run
bats_require_minimum_version 1.5.0
load test_helper

PY_DEBIAN=/usr/bin/python3.11
PY311=/root/.pyenv/versions/3.11.7/bin/python3.11
PY312=/root/.pyenv/versions/3.12.1/bin/python3.12
PY313=/root/.pyenv/versions/3.13.0/bin/python3.13

setup() {
	require_built ms-collect ms-decode "$MS_BUILDDIR/tests/unit/pyrecorder-test"
	cd "$BATS_TEST_TMPDIR" || return
	cp "$MS_SRCDIR/tests/fixtures/pystack.py" "$MS_SRCDIR/tests/fixtures/pywork.py" .
}

teardown() {
	no_leftover_processes
}

need_python() {
	[ -x "$1" ] || { echo "$1 is missing: this machine's Pythons are listed in ARCHITECTURE.md (reinstall it)" >&2; return 1; }
}

# records STREAM: its Python records (and each sample's ids), into py.txt.
records() {
	"$MS_BUILDDIR/tests/unit/pyrecorder-test" --stream-python --samples < "$1" > py.txt || {
		echo "the stream $1 does not read" >&2
		return 1
	}
}

# check_named PID: no snapshot names a code no PY_CODE record named before it.
check_named() {
	if grep -E "^snapshot $1 .*( \?( |$))" py.txt > unnamed; then
		echo "snapshots before the PY_CODE of their code:" >&2
		head unnamed >&2
		return 1
	fi
}

# check_chain PYTHON: record pystack.py's chain, its snapshots name main>f>g>h.
check_chain() {
	need_python "$1" || return 1
	ms-collect --python snapshot --duration 1.5 -o run.msr -- "$1" pystack.py chain > fixture.out 2> collect.err || {
		echo "ms-collect under $1 failed:" >&2
		cat collect.err >&2
		return 1
	}
	records run.msr || return 1
	local pid good all
	pid=$(sed -n 's/^ready //p' fixture.out)
	grep -qx 'info python snapshot' py.txt || { echo "no INFO python snapshot" >&2; return 1; }
	grep -qx 'info python-interval 10' py.txt || { echo "no INFO python-interval 10" >&2; return 1; }
	[ "$(grep -c '^process ' py.txt)" = 1 ] || { grep '^process' py.txt >&2; return 1; }
	grep -qE "^process $pid ok 0x30[bcd].* \| engine snapshot$" py.txt || {
		grep '^process' py.txt >&2; return 1; }
	check_named "$pid" || return 1
	# The chain innermost first, the GIL held by the one thread
	good=$(grep -cE "^snapshot $pid $pid [0-9]+ [0-9]+ complete 1 5: h g f main <module> \| $" py.txt)
	all=$(grep -c "^snapshot $pid " py.txt)
	if [ "$good" -lt 60 ] || [ "$good" -lt $((all * 8 / 10)) ]; then
		echo "under $1: $good of $all snapshots are h < g < f < main < <module>" >&2
		grep '^snapshot' py.txt | cut -d' ' -f6- | sort | uniq -c | sort -rn | head >&2
		return 1
	fi
	# Never a shorter stack: a complete one in h is the whole chain
	if grep -E "^snapshot $pid .* complete [0-9] [0-9]+: h( |$)" py.txt | grep -v ': h g f main <module> |'; then
		echo "under $1: a complete snapshot in h without its callers" >&2
		return 1
	fi
	# changed ones carry no frames and say why
	if grep -E "^snapshot .* changed [0-9] " py.txt | grep -vE ' changed [0-9] 0: \| [a-z-]+: .+'; then
		echo "under $1: a changed snapshot with frames or no reason" >&2
		return 1
	fi
}

@test "--python snapshot on pyenv's 3.12.1: the chain innermost first, its codes named before, rounds every interval" {
	check_chain "$PY312"
	local pid gaps
	pid=$(sed -n 's/^ready //p' fixture.out)
	# One snapshot a round for the one thread; rounds about 10 ms apart
	[ -z "$(awk -v p="$pid" '$1 == "snapshot" && $2 == p { print $4 }' py.txt | uniq -d)" ]
	gaps=$(awk -v p="$pid" '$1 == "snapshot" && $2 == p { if (t) print $5 - t; t = $5 }' py.txt | sort -n)
	awk '{ g[NR] = $1 } END {
		m = g[int((NR + 1) / 2)]
		if (NR < 60 || m < 9000000 || m > 15000000) { print NR " gaps, median " m " ns" > "/dev/stderr"; exit 1 }
	}' <<< "$gaps"
	# Round numbers count up from 1
	[ "$(awk '$1 == "snapshot" { print $4; exit }' py.txt)" -ge 1 ]
	awk '$1 == "snapshot" { if ($4 < r) exit 1; r = $4 }' py.txt
}

@test "--python snapshot on Debian's python3.11, pyenv's 3.11.7 and 3.13.0" {
	check_chain "$PY_DEBIAN"
	check_chain "$PY311"
	check_chain "$PY313"
}

@test "--python-interval 50: rounds 50 ms apart" {
	need_python "$PY312"
	ms-collect --python snapshot --python-interval 50 --duration 1 -o run.msr -- "$PY312" pystack.py chain > fixture.out 2> collect.err ||
		{ cat collect.err >&2; false; }
	records run.msr
	grep -qx 'info python-interval 50' py.txt
	local n
	n=$(grep -c '^snapshot ' py.txt)
	[ "$n" -ge 12 ] && [ "$n" -le 21 ] || { echo "$n snapshots in 1 s at 50 ms" >&2; false; }
}

@test "--python snapshot with threads: every thread with its own tid, each naming its own function only" {
	need_python "$PY312"
	ms-collect --python snapshot --duration 1.5 -o run.msr -- "$PY312" pystack.py threads 3 > fixture.out 2> collect.err ||
		{ cat collect.err >&2; false; }
	records run.msr
	local pid tid name mine others
	pid=$(sed -n 's/^ready //p' fixture.out)
	check_named "$pid"
	[ "$(grep -c '^thread [0-9]* spin_' fixture.out)" = 3 ]
	while read -r _ tid name; do
		mine=$(grep -cE "^snapshot $pid $tid [0-9]+ [0-9]+ complete [0-2] 1: $name \| \$" py.txt)
		others=$(grep -E "^snapshot $pid $tid .* complete" py.txt | grep -cvE " (1: $name|0:) \|" || true)
		[ "$mine" -ge 40 ] || { echo "thread $tid ($name): $mine snapshots" >&2; false; }
		[ "$others" = 0 ] || { echo "thread $tid shows other frames" >&2; grep "^snapshot $pid $tid " py.txt | cut -d' ' -f6- | sort | uniq -c >&2; false; }
	done < <(grep '^thread [0-9]* spin_' fixture.out)
	grep -qE "^snapshot $pid $pid .* complete [0-2] 3: main_spin main <module> \| \$" py.txt
	run ! grep -E "^snapshot $pid $pid .*spin_[0-9]" py.txt
	# four threads, no other id
	[ "$(awk -v p="$pid" '$1 == "snapshot" && $2 == p { print $3 }' py.txt | sort -u | wc -l)" = 4 ]
	# the GIL held by one thread at a time: never two helds in one round
	[ -z "$(awk '$1 == "snapshot" && $7 == 1 { print $4 }' py.txt | sort | uniq -d)" ]
}

@test "--python snapshot of a target in a nested pid namespace: its threads by their ids here" {
	[ "$(id -u)" = 0 ] || { echo "unshare --pid needs root: run the tests as root" >&2; false; }
	need_python "$PY312"
	ms-collect --python snapshot --duration 1.5 -o run.msr -- unshare --pid --fork --kill-child "$PY312" pystack.py threads 3 > fixture.out 2> collect.err ||
		{ cat collect.err >&2; false; }
	records run.msr
	local pid tids nstids tid name n
	# python is pid 1 there: its pid here is the process of the PY_PROCESS record
	grep -qx 'ready 1' fixture.out
	pid=$(awk '$1 == "process" && $3 == "ok" { print $2 }' py.txt)
	[ -n "$pid" ] && [ "$pid" != 1 ]
	check_named "$pid"
	tids=$(awk -v p="$pid" '$1 == "snapshot" && $2 == p { print $3 }' py.txt | sort -u)
	[ "$(wc -l <<< "$tids")" = 4 ]
	nstids=$(awk '$1 == "thread" { print $2 }' fixture.out)
	for tid in $tids; do
		# a thread of the process as perf saw it, not its id in the namespace
		grep -qx "sample $pid $tid" py.txt || { echo "tid $tid has no sample of process $pid" >&2; false; }
		run ! grep -qx "$tid" <<< "$nstids"
	done
	# each spinner's snapshots name its function only
	for name in spin_0 spin_1 spin_2; do
		n=$(grep -E "^snapshot $pid .* complete [0-2] 1: $name \| \$" py.txt | awk '{ print $3 }' | sort -u | wc -l)
		[ "$n" = 1 ] || { echo "$name: snapshots under $n tids" >&2; false; }
	done
}

@test "--python snapshot with ms-collect in a nested pid namespace: allowed with its own /proc, refused without" {
	[ "$(id -u)" = 0 ] || { echo "unshare --pid needs root: run the tests as root" >&2; false; }
	need_python "$PY312"
	unshare --pid --fork --mount-proc "$MS_BUILDDIR/ms-collect" --python snapshot --duration 1 -o run.msr -- "$PY312" pystack.py chain > fixture.out 2> collect.err ||
		{ cat collect.err >&2; false; }
	records run.msr
	local pid
	pid=$(sed -n 's/^ready //p' fixture.out)
	[ "$(grep -cE "^snapshot $pid $pid .* complete 1 5: h g f main <module> \| \$" py.txt)" -ge 30 ]
	# /proc of the parent's namespace: its numbers name other processes
	run -1 unshare --pid --fork "$MS_BUILDDIR/ms-collect" --python snapshot -o run2.msr -- touch ran
	[[ "$output" == *"--python snapshot: /proc is not of ms-collect's pid namespace"* ]]
	[[ "$output" == *"--mount-proc"* ]]
	[ ! -e ran ]
	[ ! -e run2.msr ]
}

@test "--python snapshot: a process's snapshots stop when it exits" {
	need_python "$PY312"
	ms-collect --python snapshot -o run.msr -- sh -c "'$PY312' pywork.py chain 0.5; sleep 0.7" > fixture.out 2> collect.err ||
		{ cat collect.err >&2; false; }
	records run.msr
	local pid end last n
	pid=$(sed -n 's/^ready //p' fixture.out)
	end=$(awk -v p="$pid" '$1 == "exit" && $2 == p && $3 == p { print $4 }' py.txt)
	[ -n "$end" ]
	n=$(grep -c "^snapshot $pid " py.txt)
	[ "$n" -ge 30 ] || { echo "$n snapshots" >&2; false; }
	last=$(awk -v p="$pid" '$1 == "snapshot" && $2 == p { t = $5 } END { print t }' py.txt)
	[ "$last" -lt "$end" ] || { echo "a snapshot at $last, after the exit at $end" >&2; false; }
	# none of its threads written changed for its end, and no problem for it
	run ! grep -E '^problem python-snapshot-(unreadable|no-thread)' py.txt
}

@test "--python snapshot loads no BPF program (--python bpf does)" {
	need_python "$PY312"
	command -v strace > /dev/null || { echo "strace is missing: apt-get install strace" >&2; false; }
	strace -f -e trace=bpf -o snapshot.strace ms-collect --python snapshot --duration 0.5 -o run.msr -- "$PY312" pystack.py chain > /dev/null 2> collect.err ||
		{ cat collect.err >&2; false; }
	run ! grep -q 'bpf(' snapshot.strace
	records run.msr
	[ "$(grep -c '^snapshot ' py.txt)" -ge 10 ]
	# the check sees a BPF engine's program
	strace -f -e trace=bpf -o bpf.strace ms-collect --python bpf --duration 0.3 -o run.msr -- true > /dev/null 2>&1
	grep -q 'BPF_PROG_LOAD' bpf.strace
}

@test "ms-decode lets PY_SNAPSHOT go ahead as PY_CODE: every snapshot through, after its codes" {
	need_python "$PY312"
	ms-collect --python snapshot --duration 1 -o run.msr -- "$PY312" pystack.py threads 2 > fixture.out 2> collect.err ||
		{ cat collect.err >&2; false; }
	records run.msr
	grep '^snapshot ' py.txt > before.txt
	ms-decode < run.msr > decoded.msr
	records decoded.msr
	grep '^snapshot ' py.txt > after.txt
	[ "$(wc -l < before.txt)" -ge 50 ]
	cmp before.txt after.txt
	check_named "$(sed -n 's/^ready //p' fixture.out)"
	# Ahead of the samples still held for ordering: some snapshot comes out
	# before a sample taken before it (kept in its place, none would)
	awk '$1 == "decoded-sample" { if ($4 < snap) ahead++; seen++ }
	     $1 == "snapshot" && $5 > snap { snap = $5 }
	     END { if (!seen || !ahead) { print seen " samples, " ahead + 0 " after a later snapshot" > "/dev/stderr"; exit 1 } }' py.txt
}

@test "--python-interval: 1 to 1000 ms, with --python snapshot only" {
	run -2 ms-collect --python snapshot --python-interval 0 -o run.msr -- touch ran
	[[ "$output" == *"--python-interval: 0 ms is out of range: a round of thread snapshots every 1 to 1000 ms"* ]]
	run -2 ms-collect --python snapshot --python-interval 1001 -o run.msr -- touch ran
	[[ "$output" == *"--python-interval: 1001 ms is out of range"* ]]
	run -2 ms-collect --python snapshot --python-interval 5ms -o run.msr -- touch ran
	[[ "$output" == *"'5ms' is not a decimal number"* ]]
	run -2 ms-collect --python bpf --python-interval 5 -o run.msr -- touch ran
	[[ "$output" == *"--python-interval is the snapshot engine's: give --python snapshot too"* ]]
	run -2 microscope record --python snapshot --python-interval 1001 -- touch ran
	[[ "$output" == *"--python-interval: 1001 ms is out of range"* ]]
	run -2 microscope record --python-interval 5 -- touch ran
	[[ "$output" == *"give --python snapshot too"* ]]
	[ ! -e ran ]
	[ ! -e run.msr ]
}

@test "microscope record --python snapshot: the options and the capture say snapshot" {
	run -0 --separate-stderr microscope record --python snapshot --print-options -- true
	[[ "$output" == "preset=default "*" python=snapshot python-interval=10" ]]
	run -0 --separate-stderr microscope record --preset python --python snapshot --python-interval 20 --print-options -- true
	[[ "$output" == "preset=python "*" python=snapshot python-interval=20" ]]
	need_python "$PY312"
	microscope record --python snapshot --duration 1 -o "$PWD/p.msc" -- "$PY312" pystack.py chain > fixture.out 2> record.err ||
		{ cat record.err >&2; false; }
	run -0 ms-analyze summary p.msc
	[[ "$output" == *"engine snapshot"* ]]
	[[ "$output" == *"python=snapshot python-interval=10"* ]]
}

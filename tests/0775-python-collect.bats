#!/usr/bin/env bats
# ms-collect --python bpf (libcommon/python/pyrecorder.h): the BPF walker
# run on the sampler's events, its maps filled by the recorder, and the
# stream's Python records: INFO python "bpf", one PY_PROCESS per process,
# and a PY_CODE record for each code object before the first walker
# record that names it. Streams are read with
# `pyrecorder-test --stream-python` (tests/unit/pyrecorder-test.c), which
# prints each Python record, and each walker record's frames named by the
# PY_CODE records before it ("?" for one none named yet).
#
# Run by hand: MS_BUILDDIR=$PWD MS_SRCDIR=$PWD bats tests/0775-python-collect.bats

# shellcheck disable=SC2154 # output, status: set by bats's run
bats_require_minimum_version 1.5.0
load test_helper

PY_DEBIAN=/usr/bin/python3.11
PY311=/root/.pyenv/versions/3.11.7/bin/python3.11
PY312=/root/.pyenv/versions/3.12.1/bin/python3.12
PY313=/root/.pyenv/versions/3.13.0/bin/python3.13

setup() {
	require_built ms-collect "$MS_BUILDDIR/tests/unit/pyrecorder-test"
	cd "$BATS_TEST_TMPDIR" || return
	cp "$MS_SRCDIR/tests/fixtures/pystack.py" .
	SCRIPT=$BATS_TEST_TMPDIR/pystack.py
	PYPID=
}

teardown() {
	[ -z "$PYPID" ] || { kill "$PYPID" 2>/dev/null; wait "$PYPID" 2>/dev/null || true; }
	no_leftover_processes
}

need_python() {
	[ -x "$1" ] || { echo "$1 is missing: this machine's Pythons are listed in ARCHITECTURE.md (reinstall it)" >&2; return 1; }
}

# records STREAM: its Python records, into py.txt.
records() {
	"$MS_BUILDDIR/tests/unit/pyrecorder-test" --stream-python < "$1" > py.txt || {
		echo "the stream $1 does not read" >&2
		return 1
	}
}

# def FUNC: the line of "def FUNC(" in the fixture.
def() {
	grep -n "^def $1(" "$SCRIPT" | cut -d: -f1
}

# at_least PART WHOLE PERCENT WHAT
at_least() {
	awk -v p="$1" -v w="$2" -v pc="$3" 'BEGIN { exit !(w > 0 && p * 100 >= w * pc) }' || {
		echo "$4: $1 of $2, under $3 %" >&2
		return 1
	}
}

# check_named PID: no walker record of the stream names a code no PY_CODE
# record named before it.
check_named() {
	if grep -E "^walker $1 .*( \?( |$))" py.txt > unnamed; then
		echo "walker records before the PY_CODE of their code:" >&2
		head unnamed >&2
		return 1
	fi
}

# check_chain PYTHON: record the chain, and find its functions named.
check_chain() {
	need_python "$1" || return 1
	ms-collect --python bpf --duration 2 -o run.msr -- "$1" "$SCRIPT" chain > fixture.out 2> collect.err || {
		echo "ms-collect under $1 failed:" >&2
		cat collect.err >&2
		return 1
	}
	records run.msr || return 1
	local pid samples walkers good in_h f
	pid=$(sed -n 's/^ready //p' fixture.out)
	grep -qx 'info python bpf' py.txt || { echo "no INFO python bpf" >&2; return 1; }
	# One finding, ok, for the one process
	[ "$(grep -c '^process ' py.txt)" = 1 ] || { grep '^process' py.txt >&2; return 1; }
	grep -qE "^process $pid ok 0x30b|^process $pid ok 0x30c|^process $pid ok 0x30d" py.txt || {
		grep '^process' py.txt >&2; return 1; }
	for f in h g f main; do
		grep -qE "^code $pid 0x[0-9a-f]+ 0x[0-9a-f]+ ok $f $SCRIPT $(def "$f") [1-9]" py.txt || {
			echo "under $1: no PY_CODE ok for $f at line $(def "$f"):" >&2
			grep "^code $pid .* $SCRIPT " py.txt >&2
			return 1
		}
	done
	grep -qE "^code $pid 0x[0-9a-f]+ 0x[0-9a-f]+ ok <module> $SCRIPT 1 " py.txt || return 1
	# Each code once
	[ -z "$(awk '$1 == "code" { print $2, $3, $4 }' py.txt | sort | uniq -d)" ] || {
		echo "a code named twice" >&2; return 1; }
	check_named "$pid" || return 1
	samples=$(sed -n 's/^samples \([0-9]*\) .*/\1/p' py.txt)
	walkers=$(sed -n 's/^samples [0-9]* walkers \([0-9]*\)/\1/p' py.txt)
	good=$(grep -c "^walker $pid $pid 0 5: h g f main <module>\$" py.txt)
	in_h=$(grep -c "^walker $pid $pid [0-9]* [0-9]*: h\( \|\$\)" py.txt)
	[ "$samples" -ge 50 ] || { echo "under $1: only $samples samples" >&2; return 1; }
	# Only the samples before the layout was found go without a record.
	at_least "$walkers" "$samples" 90 "under $1, samples with a walker record" || return 1
	# (the start, imports, takes a share that depends on the machine's load)
	if [ "$good" -lt 40 ] || [ "$good" != "$in_h" ]; then
		echo "under $1: $good walker records of h < g < f < main < <module>, $in_h in h" >&2
		grep '^walker' py.txt | sort | uniq -c | sort -rn | head >&2
		return 1
	fi
}

@test "--python bpf on pyenv's 3.12.1: the chain's codes named before the records that need them" {
	check_chain "$PY312"
}

@test "--python bpf on Debian's python3.11, pyenv's 3.11.7 and 3.13.0" {
	check_chain "$PY_DEBIAN"
	check_chain "$PY311"
	check_chain "$PY313"
}

@test "--python bpf attached to a running Python (-p): its layout from /proc, its codes named" {
	need_python "$PY312"
	"$PY312" "$SCRIPT" recurse 3 > fixture.out 2>&1 &
	PYPID=$!
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q '^ready ' fixture.out && break
		sleep 0.05
	done
	ms-collect --python bpf -p "$PYPID" --duration 1 -o run.msr 2> collect.err || { cat collect.err >&2; false; }
	records run.msr
	grep -qE "^process $PYPID ok " py.txt
	grep -qE "^code $PYPID 0x[0-9a-f]+ 0x[0-9a-f]+ ok rec $SCRIPT $(def rec) " py.txt
	check_named "$PYPID"
	grep -q "^walker $PYPID $PYPID 0 6: rec rec rec rec main <module>\$" py.txt
}

@test "--python bpf with threads: each thread's records name its own function only" {
	need_python "$PY312"
	ms-collect --python bpf --duration 1.5 -o run.msr -- "$PY312" "$SCRIPT" threads 3 > fixture.out 2> collect.err ||
		{ cat collect.err >&2; false; }
	records run.msr
	local pid tid name all wrong
	pid=$(sed -n 's/^ready //p' fixture.out)
	check_named "$pid"
	[ "$(grep -c '^thread [0-9]* spin_' fixture.out)" = 3 ]
	while read -r _ tid name; do
		all=$(grep -c "^walker $pid $tid 0 1: $name\$" py.txt)
		wrong=$(grep "^walker $pid $tid " py.txt | grep -c 'spin_' | awk -v a="$all" '{ print $1 - a }')
		[ "$all" -ge 20 ] || { echo "thread $tid ($name): $all records" >&2; false; }
		[ "$wrong" = 0 ] || { echo "thread $tid shows another's frames" >&2; grep "^walker $pid $tid " py.txt | sort | uniq -c >&2; false; }
	done < <(grep '^thread [0-9]* spin_' fixture.out)
	run ! grep -E "^walker $pid $pid .*spin_" py.txt
}

@test "--python bpf in a nested pid namespace: refused with the reason, the program never run" {
	[ "$(id -u)" = 0 ] || { echo "unshare --pid needs root: run the tests as root" >&2; false; }
	run -4 unshare --pid --fork "$MS_BUILDDIR/ms-collect" --python bpf -o run.msr -- touch ran
	[[ "$output" == *"--python bpf: "*"initial pid namespace"* ]]
	[[ "$output" == *"run ms-collect on the host"* ]]
	[ ! -e ran ]
	[ ! -e run.msr ]
}

@test "an unknown --python engine is a usage error" {
	run -2 ms-collect --python pyspy -o run.msr -- touch ran
	[[ "$output" == *"--python: unknown engine 'pyspy'"* ]]
	run -2 ms-collect --python
	[ ! -e ran ]
}

@test "microscope record: the python preset and --python bpf|off; the capture keeps python=bpf" {
	local want="preset=python freq=999 event=cpu-clock stack-size=32768 unwind=auto symbolize=immediate duration=none mmap-pages=auto budget=off"
	run -0 --separate-stderr microscope record --preset python --print-options -- true
	[ "$output" = "$want python=bpf" ]
	run -0 --separate-stderr microscope record --python off --preset python --print-options -- true
	[ "$output" = "$want" ]
	run -0 --separate-stderr microscope record --python bpf --print-options -- true
	[[ "$output" == "preset=default "*" python=bpf" ]]
	run -2 microscope record --python pyspy -- touch ran
	[[ "$output" == *"--python wants bpf, snapshot or off, not 'pyspy'"* ]]
	[ ! -e ran ]
	need_python "$PY312"
	microscope record --preset python --duration 1 -o "$PWD/p.msc" -- "$PY312" "$SCRIPT" chain > fixture.out 2> record.err ||
		{ cat record.err >&2; false; }
	ms-analyze summary p.msc | grep -q "^options: .* python=bpf$"
}

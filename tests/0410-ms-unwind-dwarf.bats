#!/usr/bin/env bats
# DWARF unwinding on real recordings: the recursion fixture built without
# frame pointers unwinds completely to main and _start at its exact depth,
# Debian's python3 reaches Py_RunMain and _start, the policy is chosen by
# --unwind and stored in the capture, and the function-level stacks agree
# with perf's own DWARF unwinding (skipped where perf is absent).

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	RECURSE=$MS_BUILDDIR/tests/fixtures/recurse
	cd "$BATS_TEST_TMPDIR" || return
}

teardown() {
	# A test that failed while its fixture ran leaves no process behind.
	if [ -n "${fixture:-}" ]; then
		kill "$fixture" 2> /dev/null || true
		wait "$fixture" 2> /dev/null || true
	fi
	if [ -n "${perf_pid:-}" ]; then
		kill "$perf_pid" 2> /dev/null || true
		wait "$perf_pid" 2> /dev/null || true
	fi
}

# Record "$@" with ms-collect (options first, then the command after --)
# and decode it to decoded.msr.
record() {
	ms-collect "$@" > run.msr 2> collect.err || { cat collect.err >&2; return 1; }
	ms-decode run.msr > decoded.msr
}

# Unwind decoded.msr with the options given and symbolize it as text:
# "pid tid time reason frame;frame;..." per stack, outermost frame first.
stacks() {
	ms-unwind --stats "$@" decoded.msr > unwound.msr 2> unwind.err || {
		cat unwind.err >&2
		return 1
	}
	ms-symbolize --text unwound.msr > stacks.txt 2> symbolize.err || {
		cat symbolize.err >&2
		return 1
	}
}

@test "ms-unwind: an unknown --unwind policy is a usage error" {
	run --separate-stderr ms-unwind --unwind frames
	[ "$status" -eq 2 ]
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *"unknown unwind policy 'frames'"* ]]
}

@test "dwarf: -O2 -fomit-frame-pointer recursion unwinds to main and _start at its depth" {
	require_built "$RECURSE"
	record -F 2000 -- "$RECURSE" 1.5 40
	stacks
	cat unwind.err >&2
	total=$(wc -l < stacks.txt)
	[ "$total" -gt 500 ]
	# Complete: ends as outermost, at _start, through main and run.
	complete=$(awk '$4 == "outermost" && $5 ~ /^_start;.*;main;run(;|$)/' stacks.txt | wc -l)
	echo "complete: $complete of $total" >&2
	[ $((complete * 100)) -ge $((total * 99)) ]
	# Every complete stack through leaf holds exactly 40 frames of recurse.
	awk '$4 == "outermost" && $5 ~ /;leaf(;|$)/ {
		n = split($5, f, ";"); r = 0
		for (i = 1; i <= n; i++) r += f[i] == "recurse"
		print r
	}' stacks.txt | sort | uniq -c > depths.txt
	cat depths.txt >&2
	[ "$(wc -l < depths.txt)" -eq 1 ]
	[ "$(awk '{print $2}' depths.txt)" -eq 40 ]
	# The same few walks over and over: most are replayed from the walk cache.
	read -r replayed kept < <(sed -n 's/^ms-unwind: walk-cache replayed \([0-9]*\) kept \([0-9]*\) .*/\1 \2/p' unwind.err)
	[ $((replayed * 2)) -gt "$total" ]
	[ $((replayed + kept)) -le "$total" ]
	# The libc call at the leaf is unwound through too.
	grep -q -E ';leaf;__mem(set|chr)[a-z0-9_]*$' stacks.txt
	# The frame-pointer chain of the same samples says nothing of the kind.
	stacks --unwind fp
	[ "$(awk '$4 == "outermost"' stacks.txt | wc -l)" -eq 0 ]
}

@test "dwarf: a second run answers from the first's CFI rows, with the same stacks" {
	require_built "$RECURSE"
	record -F 2000 -- "$RECURSE" 0.5 40
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
	ms-unwind --stats decoded.msr > cold.msr 2> cold.err
	ls "$XDG_CACHE_HOME"/microscope/cfi/*.rows
	ms-unwind --stats decoded.msr > warm.msr 2> warm.err
	cmp cold.msr warm.msr
	read -r made_cold cached_cold < <(sed -n 's/.* cfi-rules \([0-9]*\) cfi-cached \([0-9]*\)$/\1 \2/p' cold.err)
	read -r made_warm cached_warm < <(sed -n 's/.* cfi-rules \([0-9]*\) cfi-cached \([0-9]*\)$/\1 \2/p' warm.err)
	echo "cold: made $made_cold cached $cached_cold; warm: made $made_warm cached $cached_warm" >&2
	[ "$made_cold" -gt 0 ]
	[ "$cached_cold" -eq 0 ]
	[ "$cached_warm" -gt 0 ]
	[ "$made_warm" -lt "$made_cold" ]
	# No cache directory: the same stacks, nothing kept.
	XDG_CACHE_HOME='' HOME='' ms-unwind decoded.msr > none.msr
	cmp cold.msr none.msr
}

@test "dwarf: a deeper recursion than the copy holds ends with stack-copy, never more" {
	require_built "$RECURSE"
	record -F 2000 --stack-size 1024 -- "$RECURSE" 0.5 40
	stacks
	cat unwind.err >&2
	total=$(wc -l < stacks.txt)
	copy=$(awk '$4 == "stack-copy"' stacks.txt | wc -l)
	[ $((copy * 100)) -ge $((total * 90)) ]
	# What a cut stack holds is its innermost frames: never _start, and
	# through leaf fewer than the 40 frames of recurse that ran.
	[ "$(awk '$4 == "stack-copy" && $5 ~ /^_start;/' stacks.txt | wc -l)" -eq 0 ]
	awk '$4 == "stack-copy" && $5 ~ /;leaf(;|$)/ {
		n = split($5, f, ";"); r = 0
		for (i = 1; i <= n; i++) r += f[i] == "recurse"
		if (r >= 40 || f[1] != "recurse") bad++
	} END { exit bad > 0 }' stacks.txt
	# dwarf+fp takes nothing from a chain this code does not keep: every
	# stack through recurse is the same as with dwarf alone. (The dynamic
	# loader's start-up code keeps frame pointers, so a sample taken there
	# may rightly be continued.)
	cp stacks.txt dwarf.txt
	stacks --unwind dwarf+fp
	grep -q ';recurse' dwarf.txt
	diff <(grep ';recurse' dwarf.txt) <(grep ';recurse' stacks.txt)
}

@test "dwarf: Debian's python3 running Python code reaches Py_RunMain and _start" {
	require_built /usr/bin/python3
	cat > loop.py <<'PY'
import time
def inner(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
end = time.process_time() + 1.5
while time.process_time() < end:
    inner(20000)
PY
	record -F 999 -- /usr/bin/python3 loop.py
	stacks
	cat unwind.err >&2
	total=$(wc -l < stacks.txt)
	[ "$total" -gt 300 ]
	# main tail-calls Py_BytesMain: its caller's frame is the libc one.
	good=$(awk '$4 == "outermost" && $5 ~ /^_start;.*;__libc_start_call_main;(main;)?(Py_BytesMain;)?Py_RunMain;/' \
		stacks.txt | wc -l)
	echo "outermost through Py_RunMain to _start: $good of $total" >&2
	[ $((good * 100)) -ge $((total * 95)) ]
	grep -q '_PyEval_EvalFrameDefault' stacks.txt
}

@test "dwarf: the policy is written once and kept in the capture" {
	require_built "$RECURSE"
	record -F 500 -- "$RECURSE" 0.2 10
	for policy in dwarf fp dwarf+fp; do
		ms-unwind --unwind "$policy" decoded.msr | ms-symbolize | ms-capture -o "p-$policy.msc"
		ms-capture --dump "p-$policy.msc" > dump.msr
		# msgpack: the key, then the value as a fixstr
		[ "$(LC_ALL=C grep -a -o -c "unwind-policy.$policy" dump.msr)" -eq 1 ]
	done
	# The default with a stack copy is dwarf, without one fp.
	ms-unwind decoded.msr > default.msr
	[ "$(LC_ALL=C grep -a -o "unwind-policy.[a-z+]*" default.msr | cut -c15-)" = dwarf ]
	record -F 500 --stack-size 0 -- "$RECURSE" 0.2 10
	ms-unwind decoded.msr > default.msr
	[ "$(LC_ALL=C grep -a -o "unwind-policy.[a-z+]*" default.msr | cut -c15-)" = fp ]
}

# Function-level stacks (outermost first, ";"-joined) and their share of
# the samples, from ms-symbolize --text or from perf script.
ms_shares() {
	awk '{ n++; c[$5]++ } END { for (k in c) printf "%.4f %s\n", 100 * c[k] / n, k }' "$1"
}

# perf script lists frames innermost first, one per line, an inlined
# function's lines ("(inlined)") before the line of the function whose code
# holds the address: keep the last line of each such group.
perf_shares() {
	perf script -i "$1" -F ip,sym 2>/dev/null | awk '
		function flush() {
			if (!nf) return
			s = f[nf]; for (i = nf - 1; i >= 1; i--) s = s ";" f[i]
			n++; c[s]++; nf = 0; last = ""
		}
		/^[[:space:]]*$/ { flush(); next }
		{
			ip = $1; name = $2; sub(/\+0x[0-9a-f]+$/, "", name)
			if (ip == last && inl) f[nf] = name; else f[++nf] = name
			last = ip; inl = / \(inlined\)$/
		}
		END { flush(); for (k in c) printf "%.4f %s\n", 100 * c[k] / n, k }'
}

@test "dwarf: the top 20 stacks have perf --call-graph dwarf's shares within 3 points" {
	require_built "$RECURSE"
	command -v perf > /dev/null || skip "perf is not installed: nothing to compare with"
	# The same seconds of one run sampled by both: the fixture's split of
	# time between its own loop and libc drifts from run to run, and within
	# a run, by more than the tolerance.
	"$RECURSE" 60 40 &
	fixture=$!
	sleep 0.3
	perf record -q -F 4000 --call-graph dwarf,8192 -o perf.data -p "$fixture" -- sleep 3 \
		> /dev/null 2> perf.err &
	perf_pid=$!
	record -F 4000 --duration 3 -p "$fixture"
	perf_status=0
	wait "$perf_pid" || perf_status=$?
	kill "$fixture" || true
	wait "$fixture" || true
	[ "$perf_status" -eq 0 ] || { echo "perf record failed: $(head -c 200 perf.err)" >&2; false; }
	stacks
	ms_shares stacks.txt | sort -rn > ms.txt
	perf_shares perf.data | sort -rn > perf.txt
	[ "$(wc -l < perf.txt)" -gt 0 ]
	# Each side's top 20, compared with the other's share (0 when absent).
	{ head -n 20 ms.txt; head -n 20 perf.txt; } | cut -d' ' -f2 | sort -u > keys.txt
	awk 'FILENAME == ARGV[1] { ms[$2] = $1; next }
	     FILENAME == ARGV[2] { pf[$2] = $1; next }
	     {
		d = ms[$1] - pf[$1]; if (d < 0) d = -d
		printf "%6.2f %6.2f %s\n", ms[$1] + 0, pf[$1] + 0, substr($1, length($1) - 80)
		if (d > 3) bad++
	     }
	     END { exit bad > 0 }' ms.txt perf.txt keys.txt > compare.txt || {
		cat compare.txt >&2
		false
	}
	cat compare.txt >&2
	# The three stacks that hold nearly all samples are among them.
	[ "$(wc -l < keys.txt)" -ge 3 ]
}

# shellcheck shell=bash
# DWARF unwinding (sourced by scripts/bench-smoke: $build $work $runs $seconds,
# PATH, best/size/ratio). Debian's python3 running Python code and the
# recursion fixture built without frame pointers, each recorded by
# microscope and by perf at 4000 Hz with 8 KiB stack copies:
#  - samples/s through ms-decode | ms-unwind | ms-symbolize on the saved
#    stream vs perf script (full output: what makes perf unwind) on the
#    perf.data of the same workload, as a ratio, and each stage alone (on
#    the files the pipeline would pass it: ms-unwind reads samples that
#    refer to their stack copies in the .msr, as ms-decode writes them into
#    a pipe);
#  - each workload at two lengths ($seconds s and 4x that), and the cost of
#    one more sample from the difference: both tools pay a fixed cost
#    (starting processes, reading symbols: ~30 ms for the pipeline, ~0.4 s
#    for perf script here) that a short run's rate includes whole;
#  - completeness (the share of stacks that reach the thread's entry) at
#    copy sizes of 8, 16, 32 and 64 KiB.
# Set by scripts/bench-smoke, which sources this file.
: "${build:?}" "${work:?}" "${runs:?}" "${seconds:?}"
recurse=$build/tests/fixtures/recurse
python=/usr/bin/python3
if [ ! -x "$recurse" ]; then
	echo "bench-smoke: '$recurse' is not built (make tests/fixtures/recurse): no unwinding figures" >&2
	return 0
fi
cat > "$work/loop.py" <<'PY'
import sys, time
def inner(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    inner(20000)
PY

# Samples in a stream after ms-unwind (the --stats count).
unwound_samples() {
	ms-unwind --stats "$1" 2>&1 >/dev/null | sed -n 's/^ms-unwind: samples \([0-9]*\) .*/\1/p'
}

# Share of stacks ending "outermost", in percent, of decoded stream $1.
complete_percent() {
	ms-unwind --stats "$1" 2>&1 >/dev/null | awk '
		/^ms-unwind: samples / { n = $3 }
		/^ms-unwind: end outermost / { o = $4 }
		END { printf "%.1f", n ? 100 * o / n : 0 }'
}

unwind_row() {	# name, seconds, command... (which runs for those seconds)
	local key=${1%% *} name="$1, $2 s" ms_n perf_n t_ms t_perf t_dec t_unw t_sym t_cold cold
	shift 2
	echo "bench-smoke: recording $name at 4000 Hz (8 KiB stack copies)"
	ms-collect -F 4000 --stack-size 8192 -o "$work/$name.msr" -- "$@" 2>/dev/null
	perf record -q -F 4000 --call-graph dwarf,8192 -o "$work/$name.data" -- "$@" \
		>/dev/null 2>&1
	ms-decode "$work/$name.msr" > "$work/$name.dec"
	# as in the pipeline: samples refer to their stack copies in the .msr
	ms-decode --stack-bytes=refer "$work/$name.msr" > "$work/$name.ref"
	ms-unwind "$work/$name.ref" > "$work/$name.unw"
	ms_n=$(unwound_samples "$work/$name.dec")
	perf_n=$(perf script -i "$work/$name.data" -F tid 2>/dev/null | wc -l)
	# The stages cache what later runs would make again (kallsyms, symbol
	# tables, inflated debug files, CFI rows: util/cachedir.h): the first
	# run fills an empty cache, the best of the others reads it; both shown.
	rm -rf "$work/cold-cache"
	# (Each stage its own assignment: one before the first reaches it alone.)
	cold="XDG_CACHE_HOME='$work/cold-cache'"
	t_cold=$(runs=1 best "$cold ms-decode '$work/$name.msr' | $cold ms-unwind | $cold ms-symbolize")
	rm -rf "$work/cold-cache"
	# A 40 ms run meets the machine's noise whole where perf script's 1.5 s
	# averages it out: the short runs get more tries (short_runs), each
	# still the best one.
	t_ms=$(runs=$short_runs best "ms-decode '$work/$name.msr' | ms-unwind | ms-symbolize")
	# the same three processes doing nothing: what starting them costs here
	t_floor=$(runs=$short_runs best "ms-decode --version | ms-unwind --version | ms-symbolize --version")
	t_perf=$(best "perf script -i '$work/$name.data'")
	t_dec=$(runs=$short_runs best "ms-decode '$work/$name.msr'")
	t_unw=$(runs=$short_runs best "ms-unwind '$work/$name.ref'")
	t_sym=$(runs=$short_runs best "ms-symbolize '$work/$name.unw'")
	rate_ms=$(ratio "$ms_n" "$t_ms")
	rate_perf=$(ratio "$perf_n" "$t_perf")
	echo "$ms_n $t_ms $perf_n $t_perf" >> "$work/unwind.raw.$key"
	printf '%-42s %9d %9d %11.0f %11.0f %7.1fx\n' "$name" "$ms_n" "$perf_n" \
		"$rate_ms" "$rate_perf" "$(ratio "$rate_ms" "$rate_perf")" >> "$work/unwind.rates"
	printf '%-42s %11.0f %11.0f %11.0f %11.0f\n' "$name" "$(ratio "$ms_n" "$t_dec")" \
		"$(ratio "$ms_n" "$t_unw")" "$(ratio "$ms_n" "$t_sym")" \
		"$(ratio "$ms_n" "$t_cold")" >> "$work/unwind.stages"
	printf '%-42s %8.1f ms %8.1f ms %8.1f ms\n' "$name" "$(ratio "$t_ms" 0.001)" \
		"$(ratio "$t_floor" 0.001)" "$(ratio "$t_perf" 0.001)" >> "$work/unwind.times"
}

# The cost of one more sample, in microseconds, for microscope and perf, and
# their ratio, from the two lengths of workload key (unwind.raw.KEY).
per_sample_row() {	# key, label
	[ -s "$work/unwind.raw.$1" ] || return 0
	awk -v label="$2" '
		NR == 1 { n = $1; t = $2; pn = $3; pt = $4 }
		NR == 2 { us = 1e6 * ($2 - t) / ($1 - n); pus = 1e6 * ($4 - pt) / ($3 - pn)
			printf "%-42s %11.2f %11.1f %7.1fx\n", label, us, pus, pus / us }
	' "$work/unwind.raw.$1"
}

short_runs=$((runs * 3))
long=$((seconds * 4))
: > "$work/unwind.rates"
: > "$work/unwind.stages"
: > "$work/unwind.times"
rm -f "$work"/unwind.raw.*
for len in "$seconds" "$long"; do
	unwind_row "recurse (C, -O2, no frame pointers)" "$len" "$recurse" "$len" 40
	[ -x "$python" ] && unwind_row "python3 (Debian, pure Python loop)" "$len" \
		"$python" "$work/loop.py" "$len"
done

printf '\n%-42s %9s %9s %11s %11s %8s\n' "workload" "samples" "perf" "samples/s" "perf/s" "ratio"
cat "$work/unwind.rates"
echo "microscope: ms-decode | ms-unwind | ms-symbolize on the saved stream; perf: perf script"
echo "(full output) on perf.data (--call-graph dwarf,8192); best of $short_runs runs of"
echo "microscope's pipeline (40-130 ms each), of $runs of perf script (1.5-12 s each)."
printf '\n%-42s %11s %11s %8s\n' "one more sample (from $seconds s to $long s)" "us" "perf us" "ratio"
per_sample_row recurse "recurse (C, -O2, no frame pointers)"
per_sample_row python3 "python3 (Debian, pure Python loop)"
echo "(the difference of the two lengths' times over that of their samples: what a"
echo "sample costs beyond the fixed cost of starting and reading symbols)"
printf '\n%-42s %11s %11s %11s %11s\n' "each stage alone, samples/s" "ms-decode" "ms-unwind" \
	"ms-symbolize" "cold cache"
cat "$work/unwind.stages"
echo "(cold cache: the whole pipeline once, with an empty cache directory: kallsyms,"
echo "symbol tables, debug copies, CFI rows)"
printf '\n%-42s %11s %11s %11s\n' "wall time, best" "pipeline" "start only" "perf script"
cat "$work/unwind.times"
echo "(start only: ms-decode --version | ms-unwind --version | ms-symbolize --version,"
echo "the cost of starting the three processes from this shell, within the pipeline's time)"

# Completeness by copy size: the recursion at depth 40 (about 2 KiB of
# stack) and 400 (about 20 KiB), and python3.
printf '\n%-42s %8s %8s %8s %8s\n' "stacks complete (outermost), %" "8 KiB" "16 KiB" "32 KiB" "64 KiB"
for w in "recurse depth 40" "recurse depth 400" "python3"; do
	line=$(printf '%-42s' "$w")
	for kib in 8 16 32 64; do
		bytes=$((kib * 1024))
		[ "$bytes" -gt 65528 ] && bytes=65528
		case $w in
		"recurse depth 40") cmd=("$recurse" 1 40) ;;
		"recurse depth 400") cmd=("$recurse" 1 400) ;;
		python3) [ -x "$python" ] || continue; cmd=("$python" "$work/loop.py" 1) ;;
		esac
		ms-collect -F 999 --stack-size "$bytes" -o "$work/c.msr" -- "${cmd[@]}" 2>/dev/null
		ms-decode "$work/c.msr" > "$work/c.dec"
		line="$line $(printf '%8s' "$(complete_percent "$work/c.dec")")"
	done
	echo "$line"
done
echo "(1 s at 999 Hz each; a copy of 64 KiB is 65528 bytes, the kernel's limit)"

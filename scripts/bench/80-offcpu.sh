# shellcheck shell=bash
# Off-CPU recording: what it costs a program that leaves its CPU about
# 20,000 times a second (tests/fixtures/switcher: two threads handing a
# token back and forth), under `microscope record --off-cpu` (which also
# samples CPU at its default rate) and under perf's own off-CPU recording,
# `perf record -e sched:sched_switch --call-graph dwarf`, alone and with
# cpu-clock samples at microscope's rate too (the same work); and what
# each keeps per switch-out. The program's hand-off rate is its throughput: the
# slowdown is the rate alone over the rate recorded (runs alternate; the
# median of each is taken). perf's --off-cpu needs a perf built with BPF
# skeletons; where this perf lacks it, the line says so. The program runs
# on CPU 0 and the recorders on CPU 1 (with two or more CPUs): unpinned,
# where the two threads happen to run swings the hand-off rate twofold
# from run to run.
# Set by scripts/bench-smoke, which sources this file.
: "${build:?}" "${work:?}" "${seconds:?}"
sw=$build/tests/fixtures/switcher
if [ ! -x "$sw" ]; then
	echo "bench-smoke: off-cpu part skipped: build tests/fixtures/switcher (make check builds it)"
	return 0
fi
offcpu_secs=$(echo "if ($seconds < 2) 2 else $seconds / 2" | bc)
prog=() rec=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	prog=(taskset -c 0) rec=(taskset -c 1)
fi

# rate_of FILE: the hand-off rate the fixture printed.
rate_of() { sed -n 's/^handoffs .* rate \([0-9.]*\).*/\1/p' "$1"; }

for f in alone ms perf perf-both perf-offcpu; do : >"$work/oc-$f"; done
perf_offcpu=yes
for _ in 1 2 3; do
	"${prog[@]}" "$sw" "$offcpu_secs" >"$work/o" 2>/dev/null && rate_of "$work/o" >>"$work/oc-alone"
	"${rec[@]}" microscope record --off-cpu -o "$work/oc.msc" -- "${prog[@]}" "$sw" "$offcpu_secs" \
		>"$work/o" 2>/dev/null && rate_of "$work/o" >>"$work/oc-ms"
	"${rec[@]}" perf record -q -e sched:sched_switch --call-graph dwarf -o "$work/oc.data" -- \
		"${prog[@]}" "$sw" "$offcpu_secs" >"$work/o" 2>/dev/null && rate_of "$work/o" >>"$work/oc-perf"
	"${rec[@]}" perf record -q -e cpu-clock/freq=999/ -e sched:sched_switch --call-graph dwarf \
		-o "$work/oc-both.data" -- "${prog[@]}" "$sw" "$offcpu_secs" >"$work/o" 2>/dev/null &&
		rate_of "$work/o" >>"$work/oc-perf-both"
	if [ "$perf_offcpu" = yes ]; then
		if "${rec[@]}" perf record -q --off-cpu -o "$work/oc-off.data" -- "${prog[@]}" "$sw" "$offcpu_secs" \
			>"$work/o" 2>"$work/oc-off.err" && ! grep -qi 'off-cpu.*\(not\|ignored\|BUILD_BPF\)' "$work/oc-off.err"; then
			rate_of "$work/o" >>"$work/oc-perf-offcpu"
		else
			perf_offcpu=no
		fi
	fi
done
for f in alone ms perf perf-both; do
	[ -s "$work/oc-$f" ] || { echo "bench-smoke: off-cpu part: the '$f' runs failed"; return 0; }
done
alone=$(median <"$work/oc-alone")
ms=$(median <"$work/oc-ms")
pf=$(median <"$work/oc-perf")
pb=$(median <"$work/oc-perf-both")
ms_bytes=$(size "$work/oc.msc")
pf_bytes=$(size "$work/oc.data")
intervals=$(ms-analyze off-cpu --json "$work/oc.msc" | jq '.intervals')
switches=$(perf script -F tid -i "$work/oc.data" 2>/dev/null | wc -l)
printf '%-44s %12s %12s %8s\n' "switcher, ${offcpu_secs} s (hand-offs/s)" microscope perf ratio
printf '%-44s %12.0f %12.0f\n' "rate alone" "$alone" "$alone"
printf '%-44s %12.0f %12.0f %8.2f\n' "rate recorded" "$ms" "$pf" "$(ratio "$ms" "$pf")"
printf '%-44s %12.3f %12.3f %8.2f\n' "slowdown (alone / recorded)" "$(ratio "$alone" "$ms")" \
	"$(ratio "$alone" "$pf")" "$(ratio "$(ratio "$alone" "$ms")" "$(ratio "$alone" "$pf")")"
printf '%-44s %12.3f %12.3f %8.2f\n' "slowdown, perf with cpu-clock -F 999 too" "$(ratio "$alone" "$ms")" \
	"$(ratio "$alone" "$pb")" "$(ratio "$(ratio "$alone" "$ms")" "$(ratio "$alone" "$pb")")"
printf '%-44s %12d %12d\n' "switch-outs kept (intervals / samples)" "$intervals" "$switches"
printf '%-44s %12d %12d %8.4f\n' "file bytes" "$ms_bytes" "$pf_bytes" "$(ratio "$ms_bytes" "$pf_bytes")"
printf '%-44s %12.1f %12.1f %8.4f\n' "bytes per switch-out" "$(ratio "$ms_bytes" "$intervals")" \
	"$(ratio "$pf_bytes" "$switches")" \
	"$(ratio "$(ratio "$ms_bytes" "$intervals")" "$(ratio "$pf_bytes" "$switches")")"
if [ "$perf_offcpu" = yes ] && [ -s "$work/oc-perf-offcpu" ]; then
	po=$(median <"$work/oc-perf-offcpu")
	printf '%-44s %12.3f %12.3f %8.2f\n' "slowdown vs perf --off-cpu" "$(ratio "$alone" "$ms")" \
		"$(ratio "$alone" "$po")" "$(ratio "$(ratio "$alone" "$ms")" "$(ratio "$alone" "$po")")"
else
	echo "perf --off-cpu: not in this perf (built without BPF skeletons): compared with sched:sched_switch only"
fi
rm -f "$work/oc.msc" "$work/oc.data" "$work/oc-both.data" "$work/oc-off.data"

# shellcheck shell=bash
# Pipeline: processing stages on a saved stream vs perf report on perf.data,
# and bytes per sample of the capture and the raw stream vs perf.data.
# Set by scripts/bench-smoke, which sources this file.
: "${seconds:?}" "${work:?}" "${runs:?}"
echo "bench-smoke: recording burn for ${seconds}s at 999 Hz (8 KiB stack copies)"
ms-collect -F 999 -o "$work/run.msr" -- "$work/burn" "$seconds"
perf record -q -F 999 -g -o "$work/perf-fp.data" -- "$work/burn" "$seconds" 2>/dev/null
perf record -q -F 999 --call-graph dwarf,8192 -o "$work/perf-dwarf.data" -- "$work/burn" "$seconds" 2>/dev/null

ms-decode < "$work/run.msr" | ms-unwind | ms-symbolize | ms-capture -o "$work/p.msc"
ms_samples=$(ms-analyze summary --json "$work/p.msc" | jq .samples)
perf_samples=$(perf script -i "$work/perf-fp.data" -F tid 2>/dev/null | wc -l)

t_ms=$(best "ms-decode < '$work/run.msr' | ms-unwind | ms-symbolize | ms-capture -o '$work/q.msc'")
t_perf=$(best "perf report -i '$work/perf-fp.data' --stdio --no-children")

rate_ms=$(echo "$ms_samples / $t_ms" | bc -l)
rate_perf=$(echo "$perf_samples / $t_perf" | bc -l)

printf '\n%-44s %14s %14s %8s\n' "figure" "microscope" "perf" "ratio"
printf '%-44s %14d %14d\n' "samples recorded" "$ms_samples" "$perf_samples"
printf '%-44s %14.0f %14.0f %7.1fx\n' "processing, samples/s (higher is better)" \
	"$rate_ms" "$rate_perf" "$(echo "$rate_ms / $rate_perf" | bc -l)"
b_msc=$(echo "$(size "$work/p.msc") / $ms_samples" | bc -l)
b_fp=$(echo "$(size "$work/perf-fp.data") / $perf_samples" | bc -l)
printf '%-44s %14.1f %14.1f %7.2fx\n' "capture bytes/sample vs perf.data -g" \
	"$b_msc" "$b_fp" "$(echo "$b_msc / $b_fp" | bc -l)"
b_msr=$(echo "$(size "$work/run.msr") / $ms_samples" | bc -l)
b_dw=$(echo "$(size "$work/perf-dwarf.data") / $perf_samples" | bc -l)
printf '%-44s %14.1f %14.1f %7.2fx\n' "raw stream bytes/sample vs perf.data dwarf,8K" \
	"$b_msr" "$b_dw" "$(echo "$b_msr / $b_dw" | bc -l)"
echo
echo "processing: ms-decode|ms-unwind|ms-symbolize|ms-capture on the saved stream vs"
echo "perf report --stdio on perf.data (-g); best of $runs runs each."

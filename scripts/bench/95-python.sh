# shellcheck shell=bash
# Python stacks: a pure-Python workload (tests/fixtures/pywork.py: main >
# f > g > h, a fixed amount of work) on pyenv's python3.12, recorded by
# `microscope record --python bpf` (the BPF walker on the sampler's
# events) and by the one peer here that names Python frames: perf record
# --call-graph dwarf over python3.12 -X perf (its trampolines in a perf
# map name functions, with no lines). Figures, each side by side in one
# run: the target's slowdown (its run time recorded over its time alone,
# median of $runs runs), the share of the samples running Python code (an
# interpreter loop on the stack) whose stack holds Python frames, and the
# cost per sample of turning each recording into named stacks (the
# pipeline on the saved stream vs perf script on perf.data). A third
# column is microscope's other engine, thread snapshots (--python
# snapshot: every thread's frames read from the process every interval,
# no BPF), at 1 ms (1000 reads a second, as many as the samplers take) and
# at its default 10 ms: its share is of the main thread's reads, whole or
# not, and its cost per record (samples and snapshots).
# Set by scripts/bench-smoke, which sources this file.
: "${top:?}" "${build:?}" "${work:?}" "${seconds:?}" "${runs:?}"
py=${MS_BENCH_PYTHON312:-/root/.pyenv/versions/3.12.1/bin/python3.12}
if [ ! -x "$py" ]; then
	echo "bench-smoke: python part skipped: no python3.12 at $py (set MS_BENCH_PYTHON312)"
	return 0
fi
pywork=$top/tests/fixtures/pywork.py
# About $seconds of work alone: 500 steps (5000 loop iterations each)
# timed once, scaled.
t0=${EPOCHREALTIME/,/.}; "$py" "$pywork" steps 500 >/dev/null; t1=${EPOCHREALTIME/,/.}
steps=$(echo "500 * $seconds / ($t1 - $t0)" | bc)

# wall_of CMD...: the wall time of CMD in seconds, its output discarded.
wall_of() {
	local t0 t1
	t0=${EPOCHREALTIME/,/.}; "$@" >/dev/null 2>&1; t1=${EPOCHREALTIME/,/.}
	echo "$t1 - $t0" | bc -l
}

# median_wall CMD...: the median of $runs wall times of CMD.
median_wall() {
	for _ in $(seq "$runs"); do wall_of "$@"; done | median
}

# python3.12 -X perf leaves its map in /tmp: remove the ones these runs made.
find /tmp -maxdepth 1 -name "perf-*.map" | sort >"$work/py-maps-before"
t_alone=$(median_wall "$py" "$pywork" steps "$steps")
t_alone_xperf=$(median_wall "$py" -X perf "$pywork" steps "$steps")
t_ms=$(median_wall microscope record --python bpf -F 999 -o "$work/py-t.msc" -- "$py" "$pywork" steps "$steps")
t_ms_native=$(median_wall microscope record -F 999 -o "$work/py-n.msc" -- "$py" "$pywork" steps "$steps")
t_snap=$(median_wall microscope record --python snapshot --python-interval 1 -F 999 -o "$work/py-s.msc" -- \
	"$py" "$pywork" steps "$steps")
t_snap10=$(median_wall microscope record --python snapshot -F 999 -o "$work/py-s10.msc" -- \
	"$py" "$pywork" steps "$steps")
t_perf=$(median_wall perf record -q -F 999 --call-graph dwarf,8192 -o "$work/py-t.data" -- \
	"$py" -X perf "$pywork" steps "$steps")

# One recording of each, kept for the shares and the processing cost.
ms-collect --python bpf -F 999 -o "$work/py.msr" -- "$py" "$pywork" steps "$steps" >"$work/py-ms.out"
perf record -q -F 999 --call-graph dwarf,8192 -o "$work/py.data" -- \
	"$py" -X perf "$pywork" steps "$steps" >"$work/py-perf.out" 2>/dev/null
perf_pid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$work/py-perf.out")
ms-decode <"$work/py.msr" | ms-unwind | ms-symbolize | ms-capture -o "$work/py.msc"
t_proc_ms=$(best "ms-decode < '$work/py.msr' | ms-unwind | ms-symbolize | ms-capture -o '$work/py2.msc'")
t_proc_perf=$(best "perf script -i '$work/py.data' -F ip,sym")
ms-collect --python snapshot --python-interval 1 -F 999 -o "$work/py-s.msr" -- "$py" "$pywork" steps "$steps" \
	>/dev/null
ms-decode <"$work/py-s.msr" | ms-unwind | ms-symbolize | ms-capture -o "$work/py-s.msc"
t_proc_snap=$(best "ms-decode < '$work/py-s.msr' | ms-unwind | ms-symbolize | ms-capture -o '$work/py-s2.msc'")
perf script -i "$work/py.data" -F ip,sym 2>/dev/null >"$work/py-perf.txt"
rm -f "/tmp/perf-$perf_pid.map"
find /tmp -maxdepth 1 -name "perf-*.map" | sort | comm -13 "$work/py-maps-before" - | xargs -r rm -f

ms_samples=$(ms-analyze summary --json "$work/py.msc" | jq .samples)
perf_samples=$(perf script -i "$work/py.data" -F tid 2>/dev/null | wc -l)

# Of the samples with an interpreter loop on the stack, those with Python
# frames (microscope: an interpreted frame of pywork.py; perf: a py::
# trampoline's name), and those whose Python stack holds the whole chain.
ms-export --folded "$work/py.msc" 2>/dev/null >"$work/py.folded"
read -r ms_py ms_named ms_chain < <(awk '/_PyEval_EvalFrameDefault/ { n = $NF; p += n
	if (/pywork\.py:/) k += n; if (/main \([^)]*\);.*f \([^)]*\);.*g \([^)]*\);.*h \(/) c += n }
	END { print p + 0, k + 0, c + 0 }' "$work/py.folded")
read -r pf_py pf_named pf_chain < <(awk 'function end() { if (py) { p++; if (named) k++; if (chain == 4) c++ }
		py = named = chain = 0 }
	NF == 0 { end(); next }
	/_PyEval_EvalFrameDefault/ { py = 1 }
	/py::/ { named = 1 }
	/py::main:/ { chain++ } /py::f:/ { chain++ } /py::g:/ { chain++ } /py::h:/ { chain++ }
	END { end(); print p + 0, k + 0, c + 0 }' "$work/py-perf.txt")

# Snapshots: of the main thread's reads (whole, changed or dropped), those
# with Python frames, and those whose stack is the whole chain.
read -r sn_reads sn_named < <(ms-analyze tasks --json "$work/py-s.msc" |
	jq -r '[.rows | max_by(.snapshots)] | .[0] | "\(.snapshots + .changed + .dropped) \(.with_frames)"')
sn_chain=$(ms-export --folded --weight snapshots --look python "$work/py-s.msc" 2>/dev/null |
	awk '/main \([^)]*\);f \([^)]*\);g \([^)]*\);h \(/ { n += $NF } END { print n + 0 }')
sn_records=$(( $(ms-analyze summary --json "$work/py-s.msc" | jq .samples) + sn_reads ))

pct() { echo "100 * $1 / ($2 + ($2 == 0))" | bc -l; }
per_ms=$(echo "$t_proc_ms / $ms_samples * 1000000" | bc -l)
per_pf=$(echo "$t_proc_perf / $perf_samples * 1000000" | bc -l)
slow_ms=$(ratio "$t_ms" "$t_alone")
slow_ms_native=$(ratio "$t_ms_native" "$t_alone")
slow_pf=$(ratio "$t_perf" "$t_alone_xperf")
slow_snap=$(ratio "$t_snap" "$t_alone")
slow_snap10=$(ratio "$t_snap10" "$t_alone")
per_snap=$(echo "$t_proc_snap / $sn_records * 1000000" | bc -l)
printf '\n%-44s %11s %11s %12s %10s\n' "figure (python3.12, pure Python)" "ms bpf" "ms snapshot" \
	"perf -X perf" "bpf/perf"
printf '%-44s %10.3fx %10.3fx %11.3fx %9.2fx\n' "target slowdown (run time / alone; lower better)" \
	"$slow_ms" "$slow_snap" "$slow_pf" "$(ratio "$slow_ms" "$slow_pf")"
printf '%-44s %10.3fx %10.3fx\n' "  without --python / snapshots every 10 ms" "$slow_ms_native" "$slow_snap10"
printf '%-44s %11d %11d %12d\n' "samples (snapshot: main thread's reads)" "$ms_samples" "$sn_reads" \
	"$perf_samples"
printf '%-44s %10.1f%% %10.1f%% %11.1f%%\n' "Python samples with Python frames" \
	"$(pct "$ms_named" "$ms_py")" "$(pct "$sn_named" "$sn_reads")" "$(pct "$pf_named" "$pf_py")"
printf '%-44s %10.1f%% %10.1f%% %11.1f%%\n' "Python samples with main > f > g > h whole" \
	"$(pct "$ms_chain" "$ms_py")" "$(pct "$sn_chain" "$sn_reads")" "$(pct "$pf_chain" "$pf_py")"
printf '%-44s %11.2f %11.2f %12.2f %9.2fx\n' "processing, us/record (lower is better)" \
	"$per_ms" "$per_snap" "$per_pf" "$(ratio "$per_ms" "$per_pf")"
echo
echo "slowdown: median of $runs runs of pywork.py steps $steps ($(printf '%.2f' "$t_alone") s alone; under"
echo "-X perf $(printf '%.2f' "$t_alone_xperf") s alone), recorded at 999 Hz: microscope record --python bpf,"
echo "--python snapshot --python-interval 1 (and 10), and perf record --call-graph dwarf,8192 over"
echo "python3.12 -X perf. microscope names functions with their lines; perf's py:: names have"
echo "no lines. processing: the pipeline on the saved stream (per sample; snapshot: per sample"
echo "and snapshot) vs perf script -F ip,sym; best of $runs runs each."

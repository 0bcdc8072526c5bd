# shellcheck shell=bash
# JIT code: a Python 3.12 program under -X perf (each Python call runs
# through a trampoline its /tmp/perf-PID.map names), recorded by ms-collect
# and by perf record --call-graph dwarf (the method that unwinds code
# built without frame pointers, as pyenv's CPython is). Figures: the cost
# per sample of turning each recording into named stacks (the pipeline on
# the saved stream vs perf script on perf.data, which reads the map at that
# time), and the share of the samples running Python code (an interpreter
# loop on the stack) whose stack holds a Python function's name.
# Set by scripts/bench-smoke, which sources this file.
: "${top:?}" "${build:?}" "${work:?}" "${seconds:?}" "${runs:?}"
py=${MS_BENCH_PYTHON312:-/root/.pyenv/versions/3.12.1/bin/python3.12}
if [ ! -x "$py" ]; then
	echo "bench-smoke: jit part skipped: no python3.12 at $py (set MS_BENCH_PYTHON312)"
	return 0
fi
work_py=$top/tests/fixtures/jitwork.py
jit_secs=$(echo "if ($seconds < 2) 2 else $seconds / 2" | bc)

# pid_of FILE: the pid the workload printed; its map is removed once read.
pid_of() { sed -n 's/^ready \([0-9]*\)$/\1/p' "$1"; }

ms-collect -F 999 -o "$work/jit.msr" -- "$py" -X perf "$work_py" "$jit_secs" >"$work/jit-ms.out"
ms_map=/tmp/perf-$(pid_of "$work/jit-ms.out").map
perf record -q -F 999 --call-graph dwarf,8192 -o "$work/jit.data" -- \
	"$py" -X perf "$work_py" "$jit_secs" >"$work/jit-perf.out" 2>/dev/null
perf_map=/tmp/perf-$(pid_of "$work/jit-perf.out").map

ms-decode <"$work/jit.msr" | ms-unwind | ms-symbolize | ms-capture -o "$work/jit.msc"
rm -f "$ms_map"
t_ms=$(best "ms-decode < '$work/jit.msr' | ms-unwind | ms-symbolize | ms-capture -o '$work/jit2.msc'")
t_perf=$(best "perf script -i '$work/jit.data' -F ip,sym")
perf script -i "$work/jit.data" -F ip,sym 2>/dev/null >"$work/jit-perf.txt"
rm -f "$perf_map"

ms_samples=$(ms-analyze summary --json "$work/jit.msc" | jq .samples)
perf_samples=$(perf script -i "$work/jit.data" -F tid 2>/dev/null | wc -l)

# Of the samples with an interpreter loop on the stack, those naming Python
# code, and those whose stack reached the thread's entry (_start).
ms-export --folded "$work/jit.msc" 2>/dev/null >"$work/jit.folded"
read -r ms_py ms_named ms_whole < <(awk '/_PyEval_EvalFrameDefault/ { n = $NF; py += n
	if (/py::/) named += n; if (/^_start;/) whole += n }
	END { print py + 0, named + 0, whole + 0 }' "$work/jit.folded")
read -r pf_py pf_named pf_whole < <(awk 'function end() { if (py) { p++; if (named) nm++; if (last == "_start") wh++ }
		py = named = 0; last = "" }
	NF == 0 { end(); next }
	/_PyEval_EvalFrameDefault/ { py = 1 } /py::/ { named = 1 } { last = $2 }
	END { end(); print p + 0, nm + 0, wh + 0 }' "$work/jit-perf.txt")

per_ms=$(echo "$t_ms / $ms_samples * 1000000" | bc -l)
per_pf=$(echo "$t_perf / $perf_samples * 1000000" | bc -l)
printf '\n%-48s %12s %12s %8s\n' "figure (python3.12 -X perf)" "microscope" "perf" "ratio"
printf '%-48s %12d %12d\n' "samples recorded" "$ms_samples" "$perf_samples"
printf '%-48s %12.2f %12.2f %7.2fx\n' "processing, us/sample (lower is better)" \
	"$per_ms" "$per_pf" "$(ratio "$per_ms" "$per_pf")"
printf '%-48s %11.1f%% %11.1f%%\n' "Python samples naming Python code" \
	"$(echo "100 * $ms_named / ($ms_py + ($ms_py == 0))" | bc -l)" \
	"$(echo "100 * $pf_named / ($pf_py + ($pf_py == 0))" | bc -l)"
printf '%-48s %11.1f%% %11.1f%%\n' "Python samples whose stack reaches _start" \
	"$(echo "100 * $ms_whole / ($ms_py + ($ms_py == 0))" | bc -l)" \
	"$(echo "100 * $pf_whole / ($pf_py + ($pf_py == 0))" | bc -l)"
echo
echo "processing: ms-decode|ms-unwind|ms-symbolize|ms-capture on the saved stream vs"
echo "perf script -F ip,sym on perf.data (--call-graph dwarf,8192); best of $runs runs each."
echo "The perf map is read by ms-collect while recording, by perf script at report time."

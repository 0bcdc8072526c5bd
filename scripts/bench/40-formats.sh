# shellcheck shell=bash
# Formats: export a capture of 1 M samples to pprof and folded and import
# both back, in samples per second, next to go tool pprof -proto decoding
# and re-encoding the same pprof (Debian's golang-go), as a ratio.
# Set by scripts/bench-smoke, which sources this file.
: "${build:?}" "${work:?}" "${runs:?}"
mkcapture=$build/tests/unit/formats-mkcapture
if [ ! -x "$mkcapture" ] || ! command -v ms-export >/dev/null; then
	echo "bench-smoke: formats part skipped: build ms-export and tests/unit/formats-mkcapture (make check builds both)"
	return 0
fi
n=1000000
echo "bench-smoke: synthesizing a capture of $n samples (4 threads, stacks 3-12 deep, inline lines)"
"$mkcapture" --samples "$n" --threads 4 --lines "$work/fmt.msc"
ms-export -q --pprof -o "$work/fmt.pb.gz" "$work/fmt.msc"
ms-export -q --folded -o "$work/fmt.folded" "$work/fmt.msc"

t_xp=$(best "ms-export -q --pprof -o '$work/x.pb.gz' '$work/fmt.msc'")
t_xf=$(best "ms-export -q --folded -o '$work/x.folded' '$work/fmt.msc'")
t_ip=$(best "ms-capture -o '$work/ip.msc' --import pprof '$work/fmt.pb.gz'")
t_if=$(best "ms-capture -o '$work/if.msc' --import folded '$work/fmt.folded'")
t_go=
if command -v go >/dev/null; then
	export HOME=${HOME:-$work} PPROF_TMPDIR=$work PPROF_BINARY_PATH=/nonexistent
	go tool pprof -proto "$work/fmt.pb.gz" > "$work/go.pb.gz" 2>/dev/null
	t_go=$(best "go tool pprof -proto '$work/fmt.pb.gz' > '$work/go.pb.gz'")
fi

rate() { echo "$n / $1" | bc -l; }
printf '\n%-44s %14s %14s %8s\n' "figure (samples/s, higher is better)" "microscope" "go pprof" "ratio"
for row in "export pprof:$t_xp" "export folded:$t_xf" "import pprof:$t_ip" "import folded:$t_if"; do
	what=${row%%:*} t=${row#*:}
	if [ -n "$t_go" ]; then
		printf '%-44s %14.0f %14.0f %7.2fx\n' "$what" "$(rate "$t")" "$(rate "$t_go")" \
			"$(ratio "$t_go" "$t")"
	else
		printf '%-44s %14.0f %14s\n' "$what" "$(rate "$t")" "-"
	fi
done
printf '%-44s %14d %14s\n' "pprof bytes (unique stacks x threads)" "$(size "$work/fmt.pb.gz")" \
	"$( [ -n "$t_go" ] && size "$work/go.pb.gz" || echo -)"
printf '%-44s %14d\n' "folded bytes" "$(size "$work/fmt.folded")"
echo
echo "go pprof: go tool pprof -proto on the same pprof (decode and re-encode);"
[ -n "$t_go" ] || echo "go is not installed (golang-go): no peer figure."
echo "best of $runs runs each; the pprof holds one sample per unique stack and thread."

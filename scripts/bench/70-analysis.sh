# shellcheck shell=bash
# Analysis at scale (issue 17's benchmark): 300,000 random folded stacks of
# 8-40 frames over 3,000 functions, weighing 9,000,000 samples, made the
# same on every run (folded-stacks.awk). Imported with `microscope convert`,
# exported to pprof with ms-export, then:
#  - imports (folded and pprof) next to `go tool pprof -proto` reading the
#    pprof and writing it again (decode, check, gzip: read one profile,
#    write another, as an import reads one and writes a capture);
#  - `ms-analyze top --limit 0` (every function) next to `go tool pprof
#    -top`, and `ms-analyze tree` next to `go tool pprof -tree`: at
#    --min-percent 0.5 (pprof's default -nodefraction=0.005 trims the
#    same) and at --min-percent 0 (every one of the 7 million nodes);
#  - the peak memory (max RSS) of each microscope step, next to the
#    capture's decompressed size (its sections' raw sizes added up).
# Text goes to /dev/null. Wall times are the best of MS_BENCH_RUNS runs
# (default 3) of GNU time's %e, max RSS that of the same runs. Not run by
# make check: `scripts/bench-smoke 5 70` runs it alone (2-4 minutes here).
# Set by scripts/bench-smoke, which sources this file.
: "${build:?}" "${work:?}" "${top:?}"
aruns=${MS_BENCH_RUNS:-3}
stacks=${MS_BENCH_STACKS:-300000}
gnu_time=/usr/bin/time
if [ ! -x "$gnu_time" ] || ! command -v microscope >/dev/null || ! command -v ms-export >/dev/null; then
	echo "bench-smoke: analysis part skipped: it needs GNU time ($gnu_time, Debian's 'time': scripts/install-deps), microscope and ms-export (scripts/build)"
	return 0
fi
have_go=
if command -v go >/dev/null; then
	have_go=1
	export HOME=${HOME:-$work} PPROF_TMPDIR=$work PPROF_BINARY_PATH=/nonexistent
fi

# measure NAME CMD: best wall time and the max RSS (KiB) of that run, as
# "seconds kib", of $aruns runs of the shell command line CMD; stdout of
# CMD to /dev/null unless CMD redirects it.
measure() {
	local name=$1 cmd=$2 best='' rss='' t m
	for _ in $(seq "$aruns"); do
		if ! "$gnu_time" -o "$work/time.$name" -f '%e %M' sh -c "$cmd" >/dev/null 2>"$work/err.$name"; then
			echo "bench-smoke: analysis: '$cmd' failed; its stderr:" >&2
			cat "$work/err.$name" >&2
			return 1
		fi
		read -r t m < <(tail -n 1 "$work/time.$name")
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then
			best=$t
			rss=$m
		fi
	done
	echo "$best $rss"
}

# The capture's decompressed size: the raw sizes of its directory's
# sections (man 5 microscope-capture: n_sections at byte 20, entries of
# 40 bytes from byte 40, the raw size at +24; little-endian).
raw_size() {
	local f=$1 n i total=0
	n=$(od -An -tu4 -j20 -N4 "$f" | tr -d ' ')
	for ((i = 0; i < n; i++)); do
		total=$((total + $(od -An -tu8 -j$((40 + 40 * i + 24)) -N8 "$f" | tr -d ' ')))
	done
	echo "$total"
}

echo "bench-smoke: $stacks random folded stacks of 8-40 frames over 3000 functions"
awk -v stacks="$stacks" -v funcs=3000 -f "$top/scripts/bench/folded-stacks.awk" > "$work/big.folded"
microscope convert -q "$work/big.folded" "$work/big.msc"
ms-export -q --pprof -o "$work/big.pb.gz" "$work/big.msc"
raw=$(raw_size "$work/big.msc")

res=$(measure if "microscope convert -q '$work/big.folded' '$work/if.msc'")
read -r t_if m_if <<< "$res"
res=$(measure ip "microscope convert -q '$work/big.pb.gz' '$work/ip.msc'")
read -r t_ip m_ip <<< "$res"
res=$(measure xp "ms-export -q --pprof -o '$work/x.pb.gz' '$work/big.msc'")
read -r t_xp m_xp <<< "$res"
res=$(measure top "ms-analyze top --limit 0 '$work/big.msc'")
read -r t_top m_top <<< "$res"
res=$(measure tree "ms-analyze tree '$work/big.msc'")
read -r t_tree m_tree <<< "$res"
res=$(measure tree0 "ms-analyze tree --min-percent 0 '$work/big.msc'")
read -r t_tree0 m_tree0 <<< "$res"
if [ -n "$have_go" ]; then
	res=$(measure gread "go tool pprof -proto '$work/big.pb.gz' > '$work/go.pb.gz'")
read -r g_read g_m_read <<< "$res"
	res=$(measure gtop "go tool pprof -top '$work/big.pb.gz'")
read -r g_top g_m_top <<< "$res"
	res=$(measure gtree "go tool pprof -tree '$work/big.pb.gz'")
read -r g_tree g_m_tree <<< "$res"
fi

mib() { echo "$1 / 1024" | bc -l; }
# row WHAT SECONDS GO_SECONDS GOAL: a time, go's, go's / ours, the goal.
row() {
	if [ -n "$have_go" ]; then
		printf '%-40s %9.2f s %9.2f s %7.2fx  %s\n' "$1" "$2" "$3" "$(ratio "$3" "$2")" "$4"
	else
		printf '%-40s %9.2f s %11s %8s  %s\n' "$1" "$2" "-" "-" "$4"
	fi
}
printf '\n%-40s %11s %11s %8s  %s\n' "time (wall, lower is better)" "microscope" "go pprof" "speedup" "goal"
row "import folded (vs pprof -proto)" "$t_if" "${g_read:-0}" ">= 1x"
row "import pprof (vs pprof -proto)" "$t_ip" "${g_read:-0}" ">= 1x"
row "export pprof (vs pprof -proto)" "$t_xp" "${g_read:-0}" ""
row "top, every function (vs pprof -top)" "$t_top" "${g_top:-0}" ">= 20x"
row "tree, 0.5 % (vs pprof -tree)" "$t_tree" "${g_tree:-0}" ">= 20x"
row "tree, every node (vs pprof -tree)" "$t_tree0" "${g_tree:-0}" ""

printf '\n%-40s %11s %12s  %s\n' "peak memory (max RSS)" "MiB" "/ raw size" "goal"
printf '%-40s %11.1f\n' "capture decompressed (raw size)" "$(echo "$raw / 1048576" | bc -l)"
for r in "import folded:$m_if" "import pprof:$m_ip" "export pprof:$m_xp" "top:$m_top" \
	"tree, 0.5 %:$m_tree" "tree, every node:$m_tree0"; do
	what=${r%%:*} kib=${r#*:}
	printf '%-40s %11.1f %11.2fx  %s\n' "$what" "$(mib "$kib")" "$(echo "$kib * 1024 / $raw" | bc -l)" "< 2x"
done
if [ -n "$have_go" ]; then
	printf '%-40s %11.1f\n' "go pprof -proto" "$(mib "$g_m_read")"
	printf '%-40s %11.1f\n' "go pprof -top" "$(mib "$g_m_top")"
	printf '%-40s %11.1f\n' "go pprof -tree" "$(mib "$g_m_tree")"
fi
printf '\n%-40s %11d\n' "capture bytes" "$(size "$work/big.msc")"
printf '%-40s %11d\n' "pprof bytes" "$(size "$work/big.pb.gz")"
printf '%-40s %11d\n' "folded bytes" "$(size "$work/big.folded")"
echo
echo "speedup: go's time / microscope's, best of $aruns runs each. pprof -proto decodes,"
echo "checks and gzips the profile again; pprof -tree lists callers and callees per"
echo "function (trimmed at 0.5 %), ms-analyze tree the call tree of stacks."
[ -n "$have_go" ] || echo "go is not installed (golang-go): no peer figures."

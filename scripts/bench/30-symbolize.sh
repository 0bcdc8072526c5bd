# shellcheck shell=bash
# Symbolization: unique addresses per second on large binaries with full
# debug information, ms-symbolize --batch side by side with eu-addr2line and
# binutils' addr2line given the same address list (-f -i: function names
# and inline chains). Each tool starts cold (one process per run), so the
# figure includes reading and indexing the debug information, as a
# profile's symbolization does.
#
# Targets, when present: pyenv's libpython3.11 (built with -g: 2.3 MB of
# code, 9 MB of .debug_info) and Debian's libc with libc6-dbg's debug file
# (found by build id). Sourced by scripts/bench-smoke ($build $work $runs).
# Set by scripts/bench-smoke, which sources this file.
: "${build:?}" "${work:?}" "${runs:?}"

sym_addresses=${MS_BENCH_SYM_ADDRESSES:-10000}

# N random unique addresses inside function symbols of $1 (an ELF file with
# a symbol table), one per line in hex: the same list for every tool.
sym_address_list() {
	nm -S --defined-only "$1" 2>/dev/null |
		awk -v n="$2" '($3 == "T" || $3 == "t" || $3 == "W" || $3 == "i") && $2 != "" {
			s[++k] = $1; z[k] = $2
		}
		function hex(h,   i, v) {
			v = 0
			for (i = 1; i <= length(h); i++)
				v = v * 16 + index("0123456789abcdef", substr(tolower(h), i, 1)) - 1
			return v
		}
		END {
			srand(42)
			if (!k) exit
			while (got < n && tries++ < n * 50) {
				i = int(rand() * k) + 1
				size = hex(z[i])
				if (size <= 0) continue
				a = sprintf("0x%x", hex(s[i]) + int(rand() * size))
				if (!(a in seen)) { seen[a] = 1; got++; print a }
			}
		}'
}

sym_bench_target() {
	local label=$1 elf=$2 symbols=$3 list=$work/sym-$1.txt n t_ms t_bu t_eu eu_runs=1
	sym_address_list "$symbols" "$sym_addresses" > "$list"
	n=$(wc -l < "$list")
	if [ "$n" -lt 100 ]; then
		echo "bench-smoke: $label: too few function symbols in '$symbols'; skipped"
		return 0
	fi
	t_ms=$(best "ms-symbolize --batch '$elf' < '$list'")
	if command -v addr2line >/dev/null; then
		t_bu=$(best "addr2line -f -i -e '$elf' < '$list'")
	fi
	if command -v eu-addr2line >/dev/null; then
		# eu-addr2line walks a unit's DIEs for every address: one run is enough.
		t_eu=$(runs=$eu_runs best "eu-addr2line -f -i -e '$elf' < '$list'")
	fi
	ms-symbolize --batch "$elf" < "$list" > "$work/sym-$label.ms"
	printf '%-44s %14s %14s %14s\n' "$label ($n addresses)" "microscope" "addr2line" "eu-addr2line"
	printf '%-44s %14.0f %14s %14s\n' "  unique addresses/s (higher is better)" \
		"$(echo "$n / $t_ms" | bc -l)" \
		"${t_bu:+$(printf %.0f "$(echo "$n / $t_bu" | bc -l)")}" \
		"${t_eu:+$(printf %.0f "$(echo "$n / $t_eu" | bc -l)")}"
	printf '%-44s %14s %13.1fx %13.1fx\n' "  microscope's speed as a multiple of" "" \
		"$(echo "${t_bu:-0} / $t_ms" | bc -l)" "$(echo "${t_eu:-0} / $t_ms" | bc -l)"
	printf '%-44s %14d\n' "  inline-chain entries printed" "$(($(wc -l < "$work/sym-$label.ms") / 2))"
}

echo "bench-smoke: symbolizing $sym_addresses random addresses per target (one process per run)"
echo
sym_any=
for lp in "$HOME"/.pyenv/versions/3.11*/lib/libpython3.11.so.1.0; do
	[ -f "$lp" ] || continue
	if readelf -S "$lp" 2>/dev/null | grep -q '\.debug_info'; then
		sym_bench_target libpython3.11 "$lp" "$lp"
		sym_any=1
		break
	fi
done
# the system's libc, as the shell loads it (ms-symbolize is linked statically)
sym_libc=$(readlink -f "$(ldd "$BASH" 2>/dev/null | awk '/libc.so/ { print $3 }')")
sym_bid=$(readelf -n "$sym_libc" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
sym_dbg=/usr/lib/debug/.build-id/${sym_bid:0:2}/${sym_bid:2}.debug
if [ -n "$sym_bid" ] && [ -f "$sym_dbg" ]; then
	[ -n "$sym_any" ] && echo
	sym_bench_target libc+libc6-dbg "$sym_libc" "$sym_dbg"
	sym_any=1
fi
if [ -z "$sym_any" ]; then
	echo "bench-smoke: no large binary with debug information here (pyenv's libpython3.11,"
	echo "or libc with libc6-dbg installed): symbolization not measured"
fi
echo
echo "symbolize: the same address list to each tool (-f -i), best of $runs runs"
echo "(eu-addr2line: 1 run); ratios above 1 mean microscope is faster."

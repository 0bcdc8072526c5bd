#!/usr/bin/env bats
# ms-symbolize's source facts: inline chains with files and lines, C++ names
# demangled, debug files found by build id (--debug-dir, .gnu_debuglink,
# debuginfod on 127.0.0.1) and refused with another build id, corrupt DWARF
# as recorded failures, and names from .eh_frame when there are no symbols.
# Addresses come from the fixtures' own symbol tables (nm), so the checks
# do not depend on a recording; one test records the inline fixture.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	FIX=$MS_BUILDDIR/tests/fixtures
	cd "$BATS_TEST_TMPDIR" || return
}

teardown() {
	if [ -n "${SERVER_PID:-}" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
}

# Bytes from hex digits.
hex() {
	# shellcheck disable=SC2001 # a backslash-x before every two digits: beyond ${var//}
	printf '%b' "$(sed 's/../\\x&/g' <<<"$1")"
}

u64() {
	printf '\xcf'
	hex "$(printf %016x "$1")"
}

str() {
	printf '\xda'
	hex "$(printf %04x "${#1}")"
	printf '%s' "$1"
}

header() {
	printf '\x95\x00\xb1microscope-stream\x01\x00\x91\x92\xa4test\xa31.0'
}

trailer() {
	hex "9301$(printf %02x "$1")c3"
}

# module ID PATH BUILD_ID_HEX (an ELF file module)
module() {
	printf '\x9a\x1e'
	hex "$(printf %02x00 "$1")"
	str "$2"
	hex "c4$(printf %02x $((${#3} / 2)))$3"
	printf '\x00\x00\x00\x00\x00'
}

# stack MODULE ADDRESS FLAGS [...], innermost first
stack() {
	printf '\x98\x1f\x05\x05\x09\x00\xcd\x03\xe8\x01'
	hex "dc$(printf %04x $#)"
	while [ $# -gt 0 ]; do
		hex "$(printf %02x "$1")"
		u64 "$2"
		hex "$(printf %02x "$3")"
		shift 3
	done
}

build_id() {
	readelf -n "$1" | awk '/Build ID/ { print $3; exit }'
}

# Symbol $2's value in $1, as a decimal number.
sym() {
	printf '%d' "0x$(nm "$1" | awk -v n="$2" '$3 == n { print $1; exit }')"
}

# Line of the fixture source holding marker $1.
mark() {
	grep -n -- "$1" "$BATS_TEST_DIRNAME/fixtures/inline.c" | cut -d: -f1
}

need() {
	require_built "$FIX/$1"
}

# The inline fixture's addresses where mix() is inlined (three entries).
inline_addresses() {
	local f=$1 start size
	read -r start size < <(nm -S "$f" | awk '$4 == "inline_work" { print $1, $2 }')
	for ((a = 16#$start; a < 16#$start + 16#$size; a++)); do
		printf '0x%x\n' "$a"
	done
}

@test "ms-symbolize: inlined calls are frames of their own, with files and lines" {
	need inline
	decl=$(mark MARK_MIX_DECL) call_mix=$(mark MARK_CALL_MIX) call_round=$(mark MARK_CALL_ROUND)
	inline_addresses "$FIX/inline" > addrs
	ms-symbolize --batch "$FIX/inline" < addrs > out
	# addr2line's shape: mix at its own line, round_sum at the call of mix,
	# inline_work at the call of round_sum
	grep -A5 -x mix out > chains
	grep -q -E "^/.*/tests/fixtures/inline.c:($((decl + 1))|$((decl + 2))|$((decl + 3))|$((decl + 4))|$((decl + 5)))$" chains
	grep -A1 -x round_sum chains | grep -q -x ".*/tests/fixtures/inline.c:$call_mix"
	grep -A1 -x inline_work chains | grep -q -x ".*/tests/fixtures/inline.c:$call_round"
	# the same facts in a stream, at an address where mix is inlined
	while read -r a; do
		[ "$(ms-symbolize --batch "$FIX/inline" <<<"$a" | wc -l)" -eq 6 ] && break
	done < addrs
	{
		header
		module 0 "$FIX/inline" "$(build_id "$FIX/inline")"
		stack 0 $((a)) 0
		trailer 2
	} > in.msr
	run --separate-stderr ms-symbolize --text --lines in.msr
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^"5 5 9 fp-chain inline_work (/".*"/tests/fixtures/inline.c:$call_round);round_sum (/".*"/tests/fixtures/inline.c:$call_mix);mix (/".*"/tests/fixtures/inline.c:"[0-9]+")"$ ]]
	# one frame record: the name, the mangled-name slot empty for C
	ms-symbolize in.msr > out.msr
	[ "$(grep -a -o -c 'round_sum' out.msr)" -ge 1 ]
}

@test "ms-symbolize: a recording of the inline fixture shows its inline chain" {
	need inline
	require_built ms-collect
	call_mix=$(mark MARK_CALL_MIX) call_round=$(mark MARK_CALL_ROUND)
	ms-collect -F 499 -- "$FIX/inline" 0.6 2> collect.err | ms-decode | ms-unwind |
		ms-symbolize --text --lines > text
	[ "${PIPESTATUS[*]}" = "0 0 0 0" ] || { cat collect.err >&2; false; }
	pattern="inline_work \\(/[^()]*/tests/fixtures/inline.c:$call_round\\);round_sum \\(/[^()]*/tests/fixtures/inline.c:$call_mix\\);mix \\(/[^()]*/tests/fixtures/inline.c:[0-9]+\\)"
	n=$(grep -c -E "$pattern" text)
	total=$(wc -l < text)
	echo "inline chains: $n of $total stacks" >&2
	[ "$n" -gt 0 ]
	# most samples are in the inlined loop
	[ $((n * 100 / total)) -ge 40 ]
}

@test "ms-symbolize: C++ names are demangled, the mangled name is kept" {
	need cxxtemplate
	f=$FIX/cxxtemplate
	id=$(build_id "$f")
	total=$(sym "$f" _ZNK4demo11AccumulatorIdE5totalEi)
	scale=$(sym "$f" _ZN4demo5scaleIlEET_S1_i)
	{
		header
		module 0 "$f" "$id"
		stack 0 $((total + 4)) 0 0 $((scale + 4)) 1
		trailer 2
	} > in.msr
	run --separate-stderr ms-symbolize --text in.msr
	[ "$status" -eq 0 ]
	# the caller first; the callee with what the library inlined into it
	[[ "$output" == "5 5 9 fp-chain long demo::scale<long>(long, int);demo::Accumulator<double>::total(int) const"* ]]
	ms-symbolize in.msr > out.msr
	grep -q -a -F 'demo::Accumulator<double>::total(int) const' out.msr
	grep -q -a -F '_ZNK4demo11AccumulatorIdE5totalEi' out.msr
	printf '0x%x\n' $((total + 4)) | ms-symbolize --batch "$f" > batch.txt
	# innermost first: the outermost function is the last entry
	[ "$(tail -2 batch.txt | head -1)" = "demo::Accumulator<double>::total(int) const" ]
	[[ "$(tail -1 batch.txt)" == */tests/fixtures/cxxtemplate.cc:* ]]
}

# A stripped copy of the inline fixture in bin/, its debug file in dbg/.
split_debug() {
	need inline
	mkdir -p bin dbg
	cp "$FIX/inline" full
	objcopy --only-keep-debug full dbg/inline.debug
	objcopy --strip-debug --add-gnu-debuglink=dbg/inline.debug full bin/inline
	ID=$(build_id bin/inline)
	WORK=$(sym full inline_work)
	{
		header
		module 0 "$BATS_TEST_TMPDIR/bin/inline" "$ID"
		stack 0 $((WORK + 0x21)) 0
		trailer 2
	} > in.msr
}

@test "ms-symbolize: a debug file is found by build id in --debug-dir" {
	split_debug
	run --separate-stderr ms-symbolize --text --lines in.msr
	[ "$status" -eq 0 ]
	[[ "$output" == *"inline_work (no-debug-file)" ]]
	mkdir -p "dd/.build-id/${ID:0:2}"
	cp dbg/inline.debug "dd/.build-id/${ID:0:2}/${ID:2}.debug"
	run --separate-stderr ms-symbolize --text --lines --debug-dir dd in.msr
	[ "$status" -eq 0 ]
	[[ "$output" == *"inline_work (/"*"/tests/fixtures/inline.c:"* ]]
	# by its debuglink name in a --debug-dir, and beside the file in .debug/
	run --separate-stderr ms-symbolize --text --lines --debug-dir "$BATS_TEST_TMPDIR/dbg" in.msr
	[[ "$output" == *"inline_work (/"*"/tests/fixtures/inline.c:"* ]]
	mkdir bin/.debug
	cp dbg/inline.debug bin/.debug/
	run --separate-stderr ms-symbolize --text --lines in.msr
	[[ "$output" == *"inline_work (/"*"/tests/fixtures/inline.c:"* ]]
}

@test "ms-symbolize: a debug file with the wrong build id is refused and recorded" {
	split_debug
	need cxxtemplate
	# another program's debug file where this one's is looked for
	objcopy --only-keep-debug "$FIX/cxxtemplate" wrong.debug
	mkdir -p "dd/.build-id/${ID:0:2}"
	cp wrong.debug "dd/.build-id/${ID:0:2}/${ID:2}.debug"
	cp wrong.debug bin/inline.debug
	objcopy --remove-section=.gnu_debuglink --add-gnu-debuglink=bin/inline.debug bin/inline bin/inline2
	mv bin/inline2 bin/inline
	run --separate-stderr ms-symbolize --text --lines --debug-dir dd in.msr
	[ "$status" -eq 0 ]
	[[ "$output" == "5 5 9 fp-chain inline_work (build-id-mismatch)" ]]
	[[ "$output" != *cxxtemplate* ]]
	# the stream carries the reason and the problem, naming the refused file
	ms-symbolize --debug-dir dd in.msr > out.msr
	grep -q -a debug-build-id-mismatch out.msr
	grep -q -a -F "dd/.build-id/${ID:0:2}/${ID:2}.debug" out.msr
	run --separate-stderr ms-symbolize --stats --debug-dir dd in.msr
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *"unique build-id-mismatch 1"* ]]
}

@test "ms-symbolize: debuginfod (a local server) serves the debug file" {
	split_debug
	mkdir -p "srv/buildid/$ID"
	cp dbg/inline.debug "srv/buildid/$ID/debuginfo"
	start_debuginfod_server srv
	export DEBUGINFOD_URLS=http://127.0.0.1:$DEBUGINFOD_PORT DEBUGINFOD_CACHE_PATH=$BATS_TEST_TMPDIR/cache
	run --separate-stderr ms-symbolize --text --lines in.msr
	[ "$status" -eq 0 ]
	[[ "$output" == *"inline_work (/"*"/tests/fixtures/inline.c:"* ]]
	# without the variable it is never asked
	DEBUGINFOD_URLS='' run --separate-stderr ms-symbolize --text --lines in.msr
	[[ "$output" == *"inline_work (no-debug-file)" ]]
}

@test "ms-symbolize: a truncated .debug_info gives recorded failures, not a crash" {
	need inline
	cp "$FIX/inline" cut
	objcopy --dump-section .debug_info=info.bin cut
	head -c $(($(stat -c %s info.bin) / 2)) info.bin > half.bin
	objcopy --update-section .debug_info=half.bin cut
	id=$(build_id cut)
	work=$(sym cut inline_work) main=$(sym cut main)
	{
		header
		module 0 "$BATS_TEST_TMPDIR/cut" "$id"
		stack 0 $((work + 0x21)) 0 0 $((main + 4)) 1
		trailer 2
	} > in.msr
	run --separate-stderr ms-symbolize --text --lines in.msr
	[ "$status" -eq 0 ]
	# named from .symtab, with the reason for the missing lines
	[ "$output" = "5 5 9 fp-chain main (bad-dwarf);inline_work (bad-dwarf)" ]
	ms-symbolize in.msr > out.msr
	grep -q -a bad-dwarf out.msr
	# garbage in the middle of the section: the same, never a crash
	cp "$FIX/inline" garbage
	objcopy --dump-section .debug_info=info2.bin garbage
	size=$(stat -c %s info2.bin)
	{ head -c 12 info2.bin; head -c $((size - 12)) /dev/zero | tr '\0' '\377'; } > bad.bin
	objcopy --update-section .debug_info=bad.bin garbage
	{
		header
		module 0 "$BATS_TEST_TMPDIR/garbage" "$(build_id garbage)"
		stack 0 $((work + 0x21)) 0 0 $((main + 4)) 1
		trailer 2
	} > in2.msr
	run --separate-stderr ms-symbolize --text --lines in2.msr
	[ "$status" -eq 0 ]
	[ "$output" = "5 5 9 fp-chain main (bad-dwarf);inline_work (bad-dwarf)" ]
}

@test "ms-symbolize: libc's internal functions with files and lines from libc6-dbg" {
	libc=$(ldd "$FIX/qsortcb" 2>/dev/null | awk '/libc.so/ { print $3 }')
	[ -n "$libc" ] || { echo "ldd found no libc for qsortcb" >&2; false; }
	libc=$(readlink -f "$libc")
	id=$(build_id "$libc")
	debug=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -f "$debug" ] || { echo "libc6-dbg is not installed (no $debug): run scripts/install-deps" >&2; false; }
	msort=$(nm "$debug" | awk '$3 ~ /^msort_with_tmp/ { print $1; exit }')
	[ -n "$msort" ] || { echo "libc6-dbg has no msort_with_tmp" >&2; false; }
	printf '0x%x\n' $((16#$msort + 8)) | ms-symbolize --batch "$libc" > out
	grep -q -E '^msort_with_tmp$' out
	grep -q -E '/?stdlib/msort.c:[0-9]+$' out
}

@test "ms-symbolize: a recording of qsort with a callback shows libc's internals" {
	need qsortcb
	require_built ms-collect
	libc=$(readlink -f "$(ldd "$FIX/qsortcb" | awk '/libc.so/ { print $3 }')")
	id=$(build_id "$libc")
	[ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] || { echo "libc6-dbg is not installed: run scripts/install-deps" >&2; false; }
	ms-collect -F 499 -- "$FIX/qsortcb" 0.6 2> collect.err | ms-decode | ms-unwind |
		ms-symbolize --text --lines > text
	[ "${PIPESTATUS[*]}" = "0 0 0 0" ] || { cat collect.err >&2; false; }
	grep -o -E '[A-Za-z_0-9]+ \([^()]*stdlib/msort.c:[0-9]+\)' text | sort | uniq -c | sort -rn | head -5 >&2
	grep -q -E 'msort_with_tmp \([^()]*stdlib/msort.c:[0-9]+\)' text
	grep -q -E 'cmp_ints \(/[^()]*/tests/fixtures/qsortcb.c:[0-9]+\)' text
}

@test "ms-symbolize: a stripped Debian binary (xz): every frame has a name or module+offset and a reason" {
	require_built ms-collect
	xz=$(command -v xz) || { echo "xz is not installed (xz-utils)" >&2; false; }
	xz=$(readlink -f "$xz")
	# compressible but not trivial input: about a second of work
	seq 1 400000 | sed 's/$/ microscope symbolization test line/' > input
	ms-collect -F 499 -o run.msr -- "$xz" -6 -k -f input 2> collect.err || { cat collect.err >&2; false; }
	ms-decode run.msr | ms-unwind | ms-symbolize --text > text
	[ "${PIPESTATUS[*]}" = "0 0 0" ]
	[ "$(wc -l < text)" -gt 20 ]
	# frames of every stack: FUNCTION, or PATH+0xHEX(REASON); never bare
	cut -d' ' -f5- text | tr ';' '\n' | sort | uniq -c | sort -rn > frames
	head -15 frames >&2
	run -1 grep -E '^ *[0-9]+ (\?\?|\[unknown\]|)$' frames
	run -1 grep -E '^ *[0-9]+ .*\+0x[0-9a-f]+$' frames
	run -1 grep -E '^ *[0-9]+ .*\+0x[0-9a-f]+\((ok)?\)$' frames
	# the functions of stripped liblzma have no symbol: .eh_frame names their starts
	grep -q -E 'liblzma[^ ]*\+0x[0-9a-f]+\(fde-only\)$' frames
}

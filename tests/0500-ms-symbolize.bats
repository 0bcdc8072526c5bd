#!/usr/bin/env bats
# ms-symbolize as a command: hand-written streams (msgpack bytes) of modules
# and stacks over the suite's tiny ELF get names, or reasons, never guesses;
# bad input ends in a controlled error; a cut stream is passed on without a
# trailer (status 3); and, where ms-collect exists, a real recording of the
# burn fixture names burn_60, burn_30, burn_10, run and main.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	TINY=$MS_BUILDDIR/tests/unit/data/elf-tiny
	cd "$BATS_TEST_TMPDIR" || return
}

# Bytes from hex digits.
hex() {
	# shellcheck disable=SC2001 # a backslash-x before every two digits: beyond ${var//}
	printf '%b' "$(sed 's/../\\x&/g' <<<"$1")"
}

# msgpack uint64 and str8.
u64() {
	printf '\xcf'
	hex "$(printf %016x "$1")"
}

str() {
	printf '\xd9'
	hex "$(printf %02x "${#1}")"
	printf '%s' "$1"
}

# [0, "microscope-stream", 1, 0, [["test", "1.0"]]]
header() {
	printf '\x95\x00\xb1microscope-stream\x01\x00\x91\x92\xa4test\xa31.0'
}

# [1, N, true] for N < 128
trailer() {
	hex "9301$(printf %02x "$1")c3"
}

# [30, id, kind, path, bin build_id, 0, 0, 0, 0, 0]: module ID KIND PATH BUILD_ID_HEX
module() {
	printf '\x9a\x1e'
	hex "$(printf %02x%02x "$1" "$2")"
	str "$3"
	hex "c4$(printf %02x $((${#4} / 2)))$4"
	printf '\x00\x00\x00\x00\x00'
}

# [31, 5, 5, 9, 0, 1000, reason fp-chain, [module, address, flags, ...]]:
# stack MODULE ADDRESS FLAGS [MODULE ADDRESS FLAGS...], innermost first
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

TINY_ID=0123456789abcdef0123456789abcdef01234567

# The value of symbol $1 in the tiny ELF.
sym() {
	printf '%d' "0x$(nm "$TINY" | awk -v n="$1" '$3 == n { print $1 }')"
}

@test "ms-symbolize --version and --help" {
	run --separate-stderr ms-symbolize --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^ms-symbolize\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	run --separate-stderr ms-symbolize --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: ms-symbolize [--stats] [--text [--lines]] [--debug-dir DIR]..."* ]]
	[[ "$output" == *"ms-symbolize --batch ELF"* ]]
	[[ "$output" == *"Exit status"* ]]
}

@test "ms-symbolize: an unknown option and two inputs are usage errors" {
	run --separate-stderr ms-symbolize --frobnicate
	[ "$status" -eq 2 ]
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *frobnicate* ]]
	run --separate-stderr ms-symbolize a b
	[ "$status" -eq 2 ]
	run --separate-stderr ms-symbolize --kallsyms
	[ "$status" -eq 2 ]
}

@test "ms-symbolize: frames of a module proved by build id get names" {
	require_built "$TINY"
	alpha=$(sym tiny_alpha) beta=$(sym tiny_beta)
	{
		header
		module 0 0 "$TINY" "$TINY_ID"
		# tiny_alpha's IP, and a return address in tiny_beta
		stack 0 $((alpha + 1)) 0 0 $((beta + 4)) 1
		stack 0 $((alpha + 1)) 0 0 $((beta + 4)) 1
		trailer 3
	} > in.msr
	run --separate-stderr ms-symbolize --text in.msr
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "5 5 9 fp-chain tiny_beta;tiny_alpha" ]
	[ "${#lines[@]}" -eq 2 ]
	# the stream form: two unique frames, both named
	run --separate-stderr sh -c 'ms-symbolize --stats in.msr > out.msr'
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"stacks 2 frames 4 unique 2 modules 1 loaded 1"* ]]
	[[ "$stderr" == *"unique ok 2"* ]]
	grep -q -a tiny_alpha out.msr
	# a stage after it sees the frames as known: no new lookups
	run --separate-stderr sh -c 'ms-symbolize --stats out.msr > again.msr'
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"unique 0 "* ]]
}

@test "ms-symbolize: a file that is not the module is refused, never named" {
	require_built "$TINY"
	alpha=$(sym tiny_alpha)
	{
		header
		module 0 0 "$TINY" "${TINY_ID%??}ff"
		module 1 0 "$BATS_TEST_TMPDIR/gone" "$TINY_ID"
		module 2 4 "[unknown]" ""
		stack 0 "$alpha" 0 1 "$alpha" 0 2 4096 1
		trailer 4
	} > in.msr
	run --separate-stderr ms-symbolize --text in.msr
	[ "$status" -eq 0 ]
	[[ "$output" == *"[unknown]+0x1000(no-module);$BATS_TEST_TMPDIR/gone+0x"*"(no-file);$TINY+0x"*"(identity)" ]]
	[[ "$output" != *tiny_alpha* ]]
}

@test "ms-symbolize: kernel frames from kallsyms, or no-file without it" {
	printf 'ffffffff81000000 T _stext\nffffffff81000400 T do_work\nffffffff81000800 T end\n' > ksyms
	{
		header
		module 0 1 "[kernel.kallsyms]" ""
		stack 0 $((0xffffffff81000410)) 2 0 $((0xffffffff81000400)) 3
		trailer 2
	} > in.msr
	run --separate-stderr ms-symbolize --text --kallsyms ksyms in.msr
	[ "$status" -eq 0 ]
	# the return address at do_work's first byte belongs to the call in _stext
	[ "$output" = "5 5 9 fp-chain _stext;do_work" ]
	run --separate-stderr ms-symbolize --text --kallsyms "$BATS_TEST_TMPDIR/none" in.msr
	[ "$status" -eq 0 ]
	[ "$output" = "5 5 9 fp-chain [kernel.kallsyms]+0xffffffff81000400(no-file);[kernel.kallsyms]+0xffffffff81000410(no-file)" ]
}

@test "ms-symbolize: garbage, empty and cut input" {
	printf 'hello, world\n' > garbage
	run --separate-stderr ms-symbolize garbage
	[ "$status" -eq 1 ]
	[[ "$stderr" == *ms-symbolize:* ]]
	[[ "$stderr" == *garbage* ]]
	[ -z "$output" ]
	run --separate-stderr ms-symbolize < /dev/null
	[ "$status" -eq 1 ]
	[[ "$stderr" == *stdin* ]]
	{ header; module 0 4 "[unknown]" ""; stack 0 4096 0; } > cut.msr
	run --separate-stderr sh -c 'ms-symbolize cut.msr > out.msr'
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"cut short"* ]]
	[ -s out.msr ]
	run --separate-stderr sh -c 'ms-symbolize out.msr > out2.msr'
	[ "$status" -eq 3 ]
	# a module id described twice is malformed input
	{ header; module 0 4 "[unknown]" ""; module 0 4 "[unknown]" ""; trailer 2; } > twice.msr
	run --separate-stderr sh -c 'ms-symbolize twice.msr > out3.msr'
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"twice.msr': the module record at byte "*" describes module 0 again"* ]]
}

@test "ms-symbolize: a closed downstream ends it with status 5 and one message" {
	{ header; module 0 4 "[unknown]" ""; stack 0 4096 0; trailer 2; } > in.msr
	# shellcheck disable=SC2016 # PIPESTATUS is the inner bash's
	run --separate-stderr bash -c '{ sleep 0.3; cat in.msr; } | ms-symbolize | true; echo "${PIPESTATUS[1]}"'
	[ "${lines[-1]}" = 5 ]
	[ "$(grep -c 'downstream closed the pipe' <<<"$stderr")" -eq 1 ]
	# shellcheck disable=SC2016 # PIPESTATUS is the inner bash's
	run --separate-stderr bash -c '{ sleep 0.3; cat in.msr; } | ms-symbolize --text | true; echo "${PIPESTATUS[1]}"'
	[ "${lines[-1]}" = 5 ]
}

# The whole pipeline over the burn fixture, once per file.
record_burn() {
	[ -s "$BATS_FILE_TMPDIR/burn.txt" ] && return 0
	require_built ms-collect
	require_built ms-decode
	require_built "$MS_BUILDDIR/tests/fixtures/burn"
	ms-collect -- "$MS_BUILDDIR/tests/fixtures/burn" 1 2> "$BATS_FILE_TMPDIR/collect.err" |
		ms-decode | ms-unwind | ms-symbolize --text > "$BATS_FILE_TMPDIR/burn.txt"
	local st=("${PIPESTATUS[@]}")
	[ "${st[*]}" = "0 0 0 0" ] || {
		echo "pipeline statuses: ${st[*]}" >&2
		cat "$BATS_FILE_TMPDIR/collect.err" >&2
		false
	}
}

@test "ms-symbolize: a real recording names burn_60, burn_30, burn_10 and main" {
	record_burn
	f=$BATS_FILE_TMPDIR/burn.txt
	head -3 "$f" >&2
	for fn in burn_60 burn_30 burn_10; do
		grep -q -E "(^| |;)main;(run;)?$fn(;|$)" "$f" || { echo "no main..$fn stack" >&2; false; }
	done
	# every fixture frame is named: no frame of the fixture without a name
	run -1 grep "fixtures/burn+0x" "$f"
	# shares near 60/30/10 %
	total=$(grep -c -E ";burn_(60|30|10)" "$f")
	n60=$(grep -c ";burn_60" "$f")
	[ "$total" -gt 20 ]
	[ $((n60 * 100 / total)) -ge 45 ]
	[ $((n60 * 100 / total)) -le 75 ]
}

@test "ms-symbolize: a real recording has run between main and the burners" {
	record_burn
	# burn's functions are built to keep a frame (they call publish()), so
	# the caller of each is on the chain whichever unwinder runs.
	grep -q ";run;burn_60" "$BATS_FILE_TMPDIR/burn.txt"
}

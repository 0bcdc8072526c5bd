#!/usr/bin/env bats
# ms-capture: a stream sealed into a capture, a capture dumped as a stream,
# and every way the input can be bad. Input streams come from
# tests/unit/mkstream (a synthetic stream), so these tests need no kernel.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?set MS_BUILDDIR to the build directory}"
	MKSTREAM="$MS_BUILDDIR/tests/unit/mkstream"
	SRCDIR="${MS_SRCDIR:-$BATS_TEST_DIRNAME/..}"
	# A directory of our own: bats keeps files of its own in BATS_TEST_TMPDIR.
	mkdir "$BATS_TEST_TMPDIR/work"
	cd "$BATS_TEST_TMPDIR/work" || return
}

# The 4 bytes of the capture header's flags field, as an unsigned integer.
header_flags() {
	od -An -tu4 -j16 -N4 "$1" | tr -d ' '
}

# Nothing under the output name, and no temporary left beside it.
assert_no_output() {
	[ ! -e "$1" ]
	assert_no_files "$1.tmp-*"
}

@test "ms-capture --help shows the synopsis, options and exit codes" {
	run --separate-stderr ms-capture --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "usage: ms-capture -o FILE [--salvage] [--info KEY=VALUE]... [--keep-names CAPTURE] [INPUT]" ]
	[ "${lines[1]}" = "       ms-capture --dump FILE [--omit-failed]" ]
	[[ "$output" == *"Exit status: 0 success"* ]]
	[ -z "$stderr" ]
}

@test "ms-capture --version prints the name and version" {
	run --separate-stderr ms-capture --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^ms-capture\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "every option in --help is in the man page, and the synopsis matches" {
	ms-capture --help >help
	grep -o -E -- '--[a-z][a-z-]+' help | sort -u >options
	[ -s options ]
	while read -r opt; do
		grep -q -F -- "${opt//-/\\-}" "$SRCDIR/man/ms-capture.1" || {
			echo "man page lacks $opt"
			return 1
		}
	done <options
	# The man page's SYNOPSIS, with roff markup removed, is --help's usage.
	sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$SRCDIR/man/ms-capture.1" |
		grep -v '^\.SH\|^\.br' | sed 's/^\.[BIR]* //; s/\\-/-/g; s/\\f[BIRP]//g' |
		tr -s ' \n' ' ' >man-synopsis
	sed -n '1,3p' help | sed 's/^usage: //; s/^ *//' | tr -s ' \n' ' ' >help-synopsis
	diff -u help-synopsis man-synopsis
}

@test "usage errors exit 2 with a message" {
	run --separate-stderr ms-capture
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"-o FILE is required"* ]]
	run --separate-stderr ms-capture --bogus
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown option '--bogus'"* ]]
	run --separate-stderr ms-capture -o a.msc x y
	[ "$status" -eq 2 ]
	run --separate-stderr ms-capture --dump a.msc -o b.msc
	[ "$status" -eq 2 ]
	run --separate-stderr ms-capture -o a.msc --info nokey
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--info wants KEY=VALUE, not 'nokey'"* ]]
	run --separate-stderr ms-capture -o a.msc --info =v
	[ "$status" -eq 2 ]
	run --separate-stderr ms-capture -o a.msc --omit-failed
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--omit-failed goes with --dump"* ]]
	run --separate-stderr ms-capture --dump a.msc --info a=b
	[ "$status" -eq 2 ]
	run --separate-stderr ms-capture --dump a.msc --keep-names b.msc
	[ "$status" -eq 2 ]
	assert_no_output a.msc
	assert_no_output b.msc
}

@test "a stream becomes a capture: from a file, stdin, or -" {
	"$MKSTREAM" >s.msr
	run --separate-stderr ms-capture -o a.msc s.msr
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(head -c 8 a.msc | tr -d '\r\n')" = "MSCAPT" ]
	[ "$(header_flags a.msc)" = 0 ]
	ms-capture -o b.msc <s.msr
	ms-capture -o c.msc - <s.msr
	cmp a.msc b.msc
	cmp a.msc c.msc
	[ "$(ls)" = "$(printf 'a.msc\nb.msc\nc.msc\ns.msr')" ]
}

@test "the same stream gives the same bytes; so do the same stacks in another order" {
	"$MKSTREAM" --samples 500 >s.msr
	"$MKSTREAM" --samples 500 --reverse >r.msr
	run -1 cmp -s s.msr r.msr
	ms-capture -o a.msc s.msr
	ms-capture -o b.msc s.msr
	ms-capture -o c.msc r.msr
	cmp a.msc b.msc
	cmp a.msc c.msc
}

@test "--dump writes a stream that captures to the same bytes" {
	"$MKSTREAM" --samples 300 >s.msr
	ms-capture -o a.msc s.msr
	ms-capture --dump a.msc >d.msr
	[ -s d.msr ]
	ms-capture -o b.msc d.msr
	cmp a.msc b.msc
	# and again, through a pipe
	ms-capture --dump b.msc | ms-capture -o c.msc
	cmp a.msc c.msc
}

@test "a stream without a trailer: no file, exit 3, the message names input and byte" {
	"$MKSTREAM" --no-trailer >cut.msr
	echo old >keep.msc
	run --separate-stderr ms-capture -o a.msc cut.msr
	[ "$status" -eq 3 ]
	[[ "$stderr" == "ms-capture: 'cut.msr': stream cut short"*"byte "* ]]
	[[ "$stderr" == *"--salvage"* ]]
	assert_no_output a.msc
	# an existing capture is left alone
	run --separate-stderr ms-capture -o keep.msc cut.msr
	[ "$status" -eq 3 ]
	[ "$(cat keep.msc)" = old ]
	assert_no_files 'keep.msc.tmp-*'
}

@test "a stream cut inside a record: no file, exit 3" {
	"$MKSTREAM" >s.msr
	head -c $(($(stat -c %s s.msr) * 2 / 3)) s.msr >cut.msr
	run --separate-stderr ms-capture -o a.msc <cut.msr
	[ "$status" -eq 3 ]
	[[ "$stderr" == "ms-capture: 'stdin': stream cut short inside the record at byte "* ]]
	assert_no_output a.msc
}

@test "--salvage writes a stream cut short as an incomplete capture" {
	"$MKSTREAM" >s.msr
	head -c $(($(stat -c %s s.msr) * 2 / 3)) s.msr >cut.msr
	run --separate-stderr ms-capture --salvage -o a.msc cut.msr
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"stream cut short"* ]]
	[[ "$stderr" == *"warning: wrote 'a.msc' marked incomplete"* ]]
	[ "$(header_flags a.msc)" = 1 ]
	ms-capture --dump a.msc >d.msr
	grep -a -q 'stream-cut-short' d.msr
	grep -a -q 'the stream ended at byte [0-9]* after [0-9]* records' d.msr
	# still incomplete, and the same bytes, after a round trip
	ms-capture -o b.msc d.msr
	cmp a.msc b.msc
	# --salvage changes nothing for a complete stream
	ms-capture -o c.msc s.msr
	ms-capture --salvage -o d.msc s.msr
	cmp c.msc d.msc
	[ "$(header_flags d.msc)" = 0 ]
}

@test "a trailer that says an upstream stage salvaged the stream marks the capture incomplete" {
	"$MKSTREAM" --incomplete >s.msr
	run --separate-stderr ms-capture -o a.msc s.msr
	[ "$status" -eq 0 ]
	[ "$(header_flags a.msc)" = 1 ]
}

@test "garbage input: no file, exit 1, the message names the input and byte" {
	printf 'this is not a stream at all\n' >g.msr
	run --separate-stderr ms-capture -o a.msc g.msr
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: 'g.msr': "*"byte 0"* ]]
	assert_no_output a.msc
	head -c 4096 /dev/urandom >r.msr
	run --separate-stderr ms-capture -o a.msc r.msr
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: 'r.msr'"* ]]
	assert_no_output a.msc
	# garbage after a good start
	"$MKSTREAM" --no-trailer >s.msr
	head -c 100 /dev/zero | tr '\0' '\301' >>s.msr
	run --separate-stderr ms-capture --salvage -o a.msc s.msr
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: 's.msr': "*"byte "* ]]
	assert_no_output a.msc
}

@test "empty input: no file, exit 1" {
	run --separate-stderr ms-capture -o a.msc </dev/null
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: 'stdin' is empty"* ]]
	assert_no_output a.msc
}

@test "a stream of a newer major version: no file, exit 1" {
	"$MKSTREAM" --major 2 >new.msr
	run --separate-stderr ms-capture -o a.msc new.msr
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: 'new.msr' is a version 2.0 stream, newer than"* ]]
	assert_no_output a.msc
}

@test "an oversized record: no file, exit 1, the message names the byte" {
	"$MKSTREAM" --oversize >big.msr
	run --separate-stderr ms-capture -o a.msc big.msr
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: 'big.msr': the record at byte "*" exceeds the limit"* ]]
	assert_no_output a.msc
}

@test "an unwritable output: exit 1, no temporary left" {
	"$MKSTREAM" >s.msr
	run --separate-stderr ms-capture -o no/such/dir/a.msc s.msr
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: cannot create a temporary file next to 'no/such/dir/a.msc'"* ]]
	[ "$(ls)" = s.msr ]
}

@test "--dump refuses a damaged capture and names the section" {
	"$MKSTREAM" >s.msr
	ms-capture -o a.msc s.msr
	size=$(stat -c %s a.msc)
	head -c $((size - 1)) a.msc >cut.msc
	run --separate-stderr ms-capture --dump cut.msc
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	# the last section: the loss rows (mkstream's stream lost records)
	[ "$stderr" = "ms-capture: capture 'cut.msc' is truncated: $((size - 1)) of $size bytes, in section 'losses'" ]
	cp a.msc flip.msc
	printf '\377' | dd of=flip.msc bs=1 seek=$((size - 10)) conv=notrunc status=none
	run --separate-stderr ms-capture --dump flip.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: capture 'flip.msc' is damaged in section 'losses': checksum mismatch" ]]
	printf 'MSCAPT\r\n\002\000\000\000' >new.msc
	head -c 100 /dev/zero >>new.msc
	run --separate-stderr ms-capture --dump new.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: capture 'new.msc' is format 2.x; this microscope reads 1.x"* ]]
	run --separate-stderr ms-capture --dump s.msr
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: 's.msr' is a microscope stream"*"not a capture: make one with"* ]]
	run --separate-stderr ms-capture --dump missing.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ms-capture: cannot open capture 'missing.msc': "* ]]
}

@test "--dump into a closed pipe stops with exit 5 and one message" {
	"$MKSTREAM" --samples 50000 | ms-capture -o a.msc
	# shellcheck disable=SC2016 # PIPESTATUS is the inner bash's
	run --separate-stderr bash -c 'ms-capture --dump a.msc | head -c 1 >/dev/null; exit ${PIPESTATUS[0]}'
	[ "$status" -eq 5 ]
	[[ "$stderr" == "ms-capture: "*"downstream closed"* ]]
	# shellcheck disable=SC2154 # stderr_lines: set by bats's run --separate-stderr
	[ "${#stderr_lines[@]}" -eq 1 ]
}

# The 4 bytes of the capture header's minor version.
header_minor() {
	od -An -tu4 -j12 -N4 "$1" | tr -d ' '
}

@test "a capture that lost nothing is format 1.1, with the functions and lines sections" {
	"$MKSTREAM" --lines --no-lost >s.msr
	ms-capture -o a.msc s.msr
	[ "$(od -An -tu4 -j8 -N4 a.msc | tr -d ' ')" = 1 ]
	[ "$(header_minor a.msc)" = 1 ]
	# 11 sections in the directory
	[ "$(od -An -tu4 -j20 -N4 a.msc | tr -d ' ')" = 11 ]
}

@test "duty records become the duty section: format 1.3 with its required flag, the same bytes through --dump" {
	"$MKSTREAM" --duty --no-lost >s.msr
	"$MKSTREAM" --duty --no-lost --reverse >r.msr
	ms-capture -o a.msc s.msr
	ms-capture -o b.msc r.msr
	cmp a.msc b.msc
	[ "$(header_minor a.msc)" = 3 ]
	# flag 17, duty: a reader before 1.3 refuses the file
	[ "$(header_flags a.msc)" = $((1 << 17)) ]
	# 12 sections, the last of them id 13
	[ "$(od -An -tu4 -j20 -N4 a.msc | tr -d ' ')" = 12 ]
	[ "$(od -An -tu4 -j$((40 + 11 * 40)) -N4 a.msc | tr -d ' ')" = 13 ]
	ms-capture --dump a.msc >d.msr
	ms-capture -o c.msc d.msr
	cmp a.msc c.msc
	ms-capture --dump c.msc | ms-capture -o e.msc
	cmp a.msc e.msc
	# without duty records the capture is the 1.1 file it always was
	"$MKSTREAM" --no-lost >p.msr
	ms-capture -o p.msc p.msr
	[ "$(header_minor p.msc)" = 1 ]
	[ "$(header_flags p.msc)" = 0 ]
}

# The loss rows of capture $1 as "time source count" lines (tests/unit/caplosses).
loss_rows() {
	"$MS_BUILDDIR/tests/unit/caplosses" "$1" | jq -r '.losses[] | "\(.time) \(.source) \(.count)"'
}

@test "lost records become the losses section: format 1.4 without a required flag, the same bytes through --dump" {
	"$MKSTREAM" >s.msr
	"$MKSTREAM" --reverse >r.msr
	ms-capture -o a.msc s.msr
	ms-capture -o b.msc r.msr
	cmp a.msc b.msc
	[ "$(header_minor a.msc)" = 4 ]
	# no flag: a reader before 1.4 skips the section and keeps the totals
	[ "$(header_flags a.msc)" = 0 ]
	# 12 sections, the last of them id 14
	[ "$(od -An -tu4 -j20 -N4 a.msc | tr -d ' ')" = 12 ]
	[ "$(od -An -tu4 -j$((40 + 11 * 40)) -N4 a.msc | tr -d ' ')" = 14 ]
	# mkstream's two lost records, a row each at its time
	[ "$(loss_rows a.msc)" = "6000000000 0 3
6000000001 1 2" ]
	[ "$(ms-analyze summary --json a.msc | jq -c .lost)" = '{"kernel":3,"collector":2}' ]
	ms-capture --dump a.msc >d.msr
	ms-capture -o c.msc d.msr
	cmp a.msc c.msc
	ms-capture --dump c.msc | ms-capture -o e.msc
	cmp a.msc e.msc
	# with duty rows too: 1.4 with the duty flag, 13 sections
	"$MKSTREAM" --duty | ms-capture -o f.msc
	[ "$(header_minor f.msc)" = 4 ]
	[ "$(header_flags f.msc)" = $((1 << 17)) ]
	[ "$(od -An -tu4 -j20 -N4 f.msc | tr -d ' ')" = 13 ]
	ms-capture --dump f.msc | ms-capture -o g.msc
	cmp f.msc g.msc
}

@test "off-CPU records become intervals and evidence: format 1.5 without a required flag, shown by --dump" {
	CAPINTERVALS="$MS_BUILDDIR/tests/unit/capintervals"
	"$MKSTREAM" --off-cpu >s.msr
	"$MKSTREAM" --off-cpu --reverse >r.msr
	ms-capture -o a.msc s.msr
	ms-capture -o b.msc r.msr
	cmp a.msc b.msc
	[ "$(header_minor a.msc)" = 5 ]
	# flag 1, off-cpu: one a reader before 1.5 may ignore (it skips the sections)
	[ "$(header_flags a.msc)" = 2 ]
	# 14 sections, the last two ids 15 (intervals) and 16 (evidence)
	[ "$(od -An -tu4 -j20 -N4 a.msc | tr -d ' ')" = 14 ]
	[ "$(od -An -tu4 -j$((40 + 12 * 40)) -N4 a.msc | tr -d ' ')" = 15 ]
	[ "$(od -An -tu4 -j$((40 + 13 * 40)) -N4 a.msc | tr -d ' ')" = 16 ]
	# tid start end missing cause sources state preempt: a complete sleep,
	# a thread off CPU since before the recording, a preemption known from
	# the switch record alone, a block whose end the loss at 6 s gave up,
	# a sleep the recording ended inside
	run "$CAPINTERVALS" a.msc
	[ "$status" -eq 0 ]
	[ "$output" = "flag 1
1001 5200000000 5500000000 complete sleeping 3 1 0
1004 0 5300000000 began-inside unknown 0 0 0
1002 5600000000 5610000000 complete preempted 2 0 1
1000 5900000000 0 lost-end blocked 3 2 0
1001 6050000000 0 ended-inside sleeping 3 1 0" ]
	# --dump writes them as interval records, and they capture to the same bytes
	ms-capture --dump a.msc >d.msr
	[ "$("$CAPINTERVALS" --stream <d.msr)" = "$(printf '%s\n' "$output" | tail -n +2)" ]
	ms-capture -o c.msc d.msr
	cmp a.msc c.msc
	ms-capture --dump c.msc | ms-capture -o e.msc
	cmp a.msc e.msc
	# the samples are those of the stream without off-CPU records
	"$MKSTREAM" >p.msr
	ms-capture -o p.msc p.msr
	[ "$(ms-analyze top --json a.msc)" = "$(ms-analyze top --json p.msc)" ]
	# nothing lost: the block is still open at the end
	"$MKSTREAM" --off-cpu --no-lost | ms-capture -o n.msc
	[ "$("$CAPINTERVALS" n.msc | grep '^1000 ')" = "1000 5900000000 0 ended-inside blocked 3 2 0" ]
	# without off-CPU records, the 1.4 file it always was: no flag, no sections
	[ "$(header_minor p.msc)" = 4 ]
	[ "$(header_flags p.msc)" = 0 ]
	[ "$("$CAPINTERVALS" p.msc)" = "flag 0" ]
}

@test "JIT records become perf-map modules and settings: format 1.6 without a flag, the same bytes through --dump" {
	CAPJIT="$MS_BUILDDIR/tests/unit/capjit"
	"$MKSTREAM" --jit >s.msr
	"$MKSTREAM" --jit --reverse | ms-capture -o b.msc
	ms-capture -o a.msc s.msr
	cmp a.msc b.msc
	[ "$(header_minor a.msc)" = 6 ]
	[ "$(header_flags a.msc)" = 0 ]
	# 13 sections (mkstream's lost records: losses), the last id 17 (perf-maps)
	[ "$(od -An -tu4 -j20 -N4 a.msc | tr -d ' ')" = 13 ]
	[ "$(od -An -tu4 -j$((40 + 12 * 40)) -N4 a.msc | tr -d ' ')" = 17 ]
	# the module with its base; of process 1000's two reads the last
	run "$CAPJIT" a.msc
	[ "$status" -eq 0 ]
	[ "$output" = "module /tmp/perf-1000.map 0x7f0000100000 256
read 1000 /tmp/perf-1000.map ok 0 16781312 2 3 1 1 0 64
read 1005 /tmp/perf-1005.map stale 0 0 0 0 0 0 0 0" ]
	# the dump writes them so: the module with its base, one jit-read per process
	ms-capture --dump a.msc >d.msr
	[ "$("$CAPJIT" --stream <d.msr)" = "$output" ]
	ms-capture -o c.msc d.msr
	cmp a.msc c.msc
	ms-capture --dump c.msc | ms-capture -o e.msc
	cmp a.msc e.msc
	# jit-func records are counted, not kept
	run ms-analyze summary --json a.msc
	[ "$(jq -c '.samples' <<<"$output")" = 100 ]
	# without JIT records, the 1.4 file it always was, and no JIT data
	"$MKSTREAM" | ms-capture -o p.msc
	[ "$(header_minor p.msc)" = 4 ]
	[ -z "$("$CAPJIT" p.msc)" ]
}

@test "microscope symbolize keeps the names of JIT frames, which no file could give again" {
	require_built microscope
	"$MKSTREAM" --jit | ms-capture -o a.msc
	microscope symbolize -o s.msc a.msc 2>/dev/null
	[ "$(header_minor s.msc)" = 6 ]
	ms-analyze top --json a.msc | jq -c '[.functions[] | select(.name | startswith("py::"))]' >want
	[ "$(jq length want)" = 1 ]
	ms-analyze top --json s.msc | jq -c '[.functions[] | select(.name | startswith("py::"))]' >got
	cmp want got
	ms-capture --dump a.msc --omit-failed | ms-capture -o o.msc
	ms-analyze top --json o.msc | jq -c '[.functions[] | select(.name | startswith("py::"))]' >got
	cmp want got
}

# mkstream --jit-object: process 1000's object (entry 0x55d0c0a02e80) is
# module 4 over [0x7f2000001000, 0x7f2000001040): jit_leaf named, +0x38 in
# no symbol; two chunks and an unregistration of jit-object records.
@test "jit-object modules keep their base: format 1.6 without a flag, the same bytes through --dump, jit-object records counted" {
	CAPJIT="$MS_BUILDDIR/tests/unit/capjit"
	"$MKSTREAM" --jit-object >s.msr
	"$MKSTREAM" --jit-object --reverse | ms-capture -o b.msc
	ms-capture -o a.msc s.msr
	cmp a.msc b.msc
	[ "$(header_minor a.msc)" = 6 ]
	[ "$(header_flags a.msc)" = 0 ]
	run "$CAPJIT" a.msc
	[ "$status" -eq 0 ]
	[ "$output" = "module [jit-object 0x55d0c0a02e80] 0x7f2000001000 64" ]
	ms-capture --dump a.msc >d.msr
	[ "$("$CAPJIT" --stream <d.msr)" = "$output" ]
	ms-capture -o c.msc d.msr
	cmp a.msc c.msc
	# the object's records are counted (unit-tested), not kept
	run ms-analyze summary --json a.msc
	[ "$(jq -c '.samples' <<<"$output")" = 100 ]
	# with perf-map data beside it: both modules with their base
	"$MKSTREAM" --jit --jit-object | ms-capture -o j.msc
	run "$CAPJIT" j.msc
	[ "$output" = "module /tmp/perf-1000.map 0x7f0000100000 256
module [jit-object 0x55d0c0a02e80] 0x7f2000001000 64
read 1000 /tmp/perf-1000.map ok 0 16781312 2 3 1 1 0 64
read 1005 /tmp/perf-1005.map stale 0 0 0 0 0 0 0 0" ]
}

@test "microscope symbolize keeps the names of jit-object frames, which no file could give again" {
	require_built microscope
	"$MKSTREAM" --jit-object | ms-capture -o a.msc
	microscope symbolize -o s.msc a.msc 2>/dev/null
	[ "$(header_minor s.msc)" = 6 ]
	ms-analyze top --json a.msc | jq -c '[.functions[] | select(.name | startswith("jit_") or startswith("[jit-object]"))]' >want
	[ "$(jq length want)" = 2 ]
	ms-analyze top --json s.msc | jq -c '[.functions[] | select(.name | startswith("jit_") or startswith("[jit-object]"))]' >got
	cmp want got
	ms-capture --dump a.msc --omit-failed | ms-capture -o o.msc
	ms-analyze top --json o.msc | jq -c '[.functions[] | select(.name | startswith("jit_"))]' >got
	[ "$(jq -c '.[0].name' got)" = '"jit_leaf"' ]
}

@test "the duty rows survive microscope symbolize and convert, and so does the time they give" {
	require_built ms-analyze
	require_built microscope
	"$MKSTREAM" --duty --deferred | ms-capture -o d.msc
	microscope symbolize -o s.msc d.msc 2>/dev/null
	microscope convert d.msc c.msc
	cmp d.msc c.msc
	[ "$(header_flags s.msc)" = $((1 << 17)) ]
	ms-analyze summary --json d.msc | jq -c '[.cpu_time_ns, .budget]' >want
	[ "$(cat want)" = '[200200000,{"budget_ppm":20000,"duty_changes":3,"lowest_duty_ppm":250000,"mean_duty_ppm":684343}]' ]
	ms-analyze summary --json s.msc | jq -c '[.cpu_time_ns, .budget]' >got
	cmp want got
}

@test "inline chains survive --dump: the same bytes, through a file and a pipe" {
	"$MKSTREAM" --lines --samples 300 >s.msr
	ms-capture -o a.msc s.msr
	ms-capture --dump a.msc >d.msr
	ms-capture -o b.msc d.msr
	cmp a.msc b.msc
	ms-capture --dump b.msc | ms-capture -o c.msc
	cmp a.msc c.msc
	# and the chains are there to be seen
	require_built ms-analyze
	ms-analyze top --json c.msc >top.json
	[ "$(jq -r '.functions[] | select(.name == "burn_inner") | "\(.file):\(.line)"' top.json)" = "/src/burn.c:20" ]
}

@test "--info sets an info key over the stream: symbolize=deferred changes module statuses" {
	require_built ms-analyze
	"$MKSTREAM" --samples 200 >s.msr
	ms-capture -o plain.msc s.msr
	ms-capture --info symbolize=deferred --info note=x=y -o deferred.msc s.msr
	# module 7 of the stream has frames without facts, and no build id
	[ "$(ms-analyze problems --json plain.msc | jq -r '.modules[] | select(.kind == "unknown") | .status')" = not-symbolized ]
	[ "$(ms-analyze problems --json deferred.msc | jq -r '.modules[] | select(.kind == "unknown") | .status')" = no-build-id ]
	# the key stays through a round trip
	ms-capture --dump deferred.msc | ms-capture -o again.msc
	cmp deferred.msc again.msc
}

@test "a deferred stream (no frame facts) round-trips, and its modules wait" {
	require_built ms-analyze
	"$MKSTREAM" --deferred --samples 200 >s.msr
	ms-capture -o a.msc s.msr
	ms-capture --dump a.msc | ms-capture -o b.msc
	cmp a.msc b.msc
	ms-analyze problems --json a.msc >p.json
	[ "$(jq -r '.modules[] | select(.path == "/usr/bin/burn") | .status' p.json)" = deferred ]
	[ "$(jq -r '.modules[] | select(.path == "[kernel.kallsyms]") | .status' p.json)" = no-build-id ]
	[ "$(jq '.unsymbolized_percent' p.json)" = "$(ms-analyze summary --json a.msc | jq '.unsymbolized.percent')" ]
}

@test "--dump --omit-failed leaves out the failed frame facts, and only those" {
	require_built ms-analyze
	"$MKSTREAM" --samples 300 >s.msr
	ms-capture -o a.msc s.msr
	ms-capture --dump a.msc --omit-failed | ms-capture -o b.msc
	run -1 cmp -s a.msc b.msc
	# the kernel frame failed (no-file): now it is not symbolized at all
	[ "$(ms-analyze problems --json a.msc | jq -r '.modules[] | select(.kind == "kernel") | .addresses[0].reason')" = no-file ]
	[ "$(ms-analyze problems --json b.msc | jq -r '.modules[] | select(.kind == "kernel") | .addresses[0].reason')" = not-symbolized ]
	# the named frames are the same
	diff <(ms-analyze top --json a.msc | jq -c '[.functions[] | select(.module == "burn")]') \
	     <(ms-analyze top --json b.msc | jq -c '[.functions[] | select(.module == "burn")]')
}

@test "--keep-names: the named facts of the capture the stream was dumped from stay" {
	require_built ms-analyze
	"$MKSTREAM" --lines --samples 300 >s.msr
	ms-capture -o a.msc s.msr
	# a stream that lost every frame fact (as if symbolized where nothing is found)
	"$MKSTREAM" --deferred --samples 300 >d.msr
	ms-capture -o b.msc --keep-names a.msc d.msr
	diff <(ms-analyze top --json a.msc | jq -c '[.functions[] | select(.module == "burn")]') \
	     <(ms-analyze top --json b.msc | jq -c '[.functions[] | select(.module == "burn")]')
	# a capture that cannot be read: no output
	run --separate-stderr ms-capture -o c.msc --keep-names missing.msc s.msr
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cannot open capture 'missing.msc'"* ]]
	assert_no_output c.msc
}

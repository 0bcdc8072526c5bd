#!/usr/bin/env bats
# JIT code named by a perf map, through ms-unwind and ms-symbolize: the
# stream ms-decode would give (tests/unit/mkjitstream: JIT_FUNC records
# with rows proved from hand-assembled code, samples in it, callers in
# tests/unit/data/dwarf-frames), so no collector is needed. Frames in JIT
# functions are unwound by their proved rows and named by ms-unwind;
# ms-symbolize reads no file for them; a mapping made after the read ends
# them; malformed records are counted problems, never the stream's end.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	MKJIT=$MS_BUILDDIR/tests/unit/mkjitstream
	ELF=$(cd "$MS_BUILDDIR/tests/unit/data" && pwd)/dwarf-frames
	cd "$BATS_TEST_TMPDIR" || return
}

@test "ms-unwind unwinds and names JIT frames; ms-symbolize --text prints them" {
	"$MKJIT" "$ELF" > in.msr
	run --separate-stderr bash -c 'ms-unwind < in.msr | ms-symbolize --text'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "77 77 901 outermost t_outer;t_fp;py::tramp" ]
	[ "${lines[1]}" = "77 77 902 outermost t_outer;t_fp;js::classic;py::tramp" ]
	# outside every function, and after a mapping made over them: anonymous
	[ "${lines[2]}" = "77 77 903 no-cfi //anon+0x7f5500000800(no-file)" ]
	[ "${lines[3]}" = "77 77 1002 no-cfi //anon+0x7f5500000104(no-file)" ]
	[ "${#lines[@]}" -eq 4 ]
	[ -z "$stderr" ]
}

@test "ms-unwind consumes JIT_FUNC records, passes JIT_READ on, and names each frame once" {
	"$MKJIT" "$ELF" > in.msr
	ms-unwind --stats < in.msr > out.msr 2> stats
	grep -q '^ms-unwind: jit-functions 2 without-rows 0 ended 2 frames-named 2$' stats
	# each name once: the FRAME record (the JIT_FUNC records are gone)
	[ "$(grep -a -o 'js::classic' in.msr | wc -l)" -eq 1 ]
	[ "$(grep -a -o 'js::classic' out.msr | wc -l)" -eq 1 ]
	# the map's path: the JIT_READ record and the perf-map module
	[ "$(grep -a -o '/tmp/perf-77.map' out.msr | wc -l)" -eq 2 ]
	# a capture of it names the functions under the map's module
	ms-symbolize < out.msr | ms-capture -o p.msc
	run ms-analyze top p.msc
	[ "$status" -eq 0 ]
	[[ "$output" == *"perf-77.map   py::tramp"* ]]
	[[ "$output" == *"perf-77.map   js::classic"* ]]
}

@test "ms-symbolize reads no file for a perf-map module: a frame ms-unwind did not name has no symbol" {
	# The module's path holds an ELF whose function covers the address: read
	# as a file, it would name the frame.
	cp "$ELF" perf-77.map
	addr=$(nm perf-77.map | awk '$3 == "t_fp" { print $1 }')
	"$MKJIT" --unnamed "$PWD/perf-77.map" "$addr" > in.msr
	run --separate-stderr ms-symbolize --text --lines < in.msr
	[ "$status" -eq 0 ]
	[ "$output" = "77 77 1 no-cfi $PWD/perf-77.map+0x$(printf %x $((16#$addr)))(no-symbol)" ]
}

@test "malformed JIT_FUNC records are counted problems; the stream goes on" {
	"$MKJIT" --bad "$ELF" > in.msr
	run --separate-stderr bash -c 'ms-unwind < in.msr > out.msr'
	[ "$status" -eq 0 ]
	# malformed rows are counted, not printed: a hostile stream may hold millions
	[[ "$stderr" != *"rows of JIT function"* ]]
	[[ "$stderr" == *"field 'source' is 9"* ]]
	run --separate-stderr ms-symbolize --text < out.msr
	[ "$status" -eq 0 ]
	[ "${lines[3]}" = "77 77 904 no-cfi py::badrows" ]
	ms-symbolize < out.msr | ms-capture -o p.msc
	run ms-analyze problems p.msc
	[[ "$output" == *"ms-unwind  bad-jit-function  1"* ]]
	[[ "$output" == *"ms-unwind  jit-bad-rows  1"*"rows of JIT function at 0x7f5500000300"*"corrupt"* ]]
	# the function whose record was refused is not named anywhere
	[ "$(grep -a -o 'py::badsource' out.msr | wc -l)" -eq 0 ]
}

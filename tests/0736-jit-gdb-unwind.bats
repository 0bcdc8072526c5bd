#!/usr/bin/env bats
# JIT code registered through the GDB JIT interface, through ms-unwind and
# ms-symbolize without a collector: tests/unit/mkjitstream --gdb writes
# the stream ms-decode would give for a process that registered the
# object `jitgdb dump` writes (tests/fixtures/jitgdb: jit_gdb_func, no
# frame pointer, described by the object's .eh_frame and .symtab), called
# from tests/unit/data/dwarf-frames. The object's frames are unwound by
# its CFI and named from its symbols by ms-unwind; ms-symbolize reads no
# file for them; its unregistration ends it; broken chunk sequences and
# corrupt images are counted problems, never the stream's end.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	MKJIT=$MS_BUILDDIR/tests/unit/mkjitstream
	JITGDB=$MS_BUILDDIR/tests/fixtures/jitgdb
	ELF=$(cd "$MS_BUILDDIR/tests/unit/data" && pwd)/dwarf-frames
	cd "$BATS_TEST_TMPDIR" || return
	run "$JITGDB" dump obj
	[ "$status" -eq 0 ]
	TEXT=$(awk '{ print $4 }' <<< "$output")
	[ -n "$TEXT" ]
}

@test "ms-unwind unwinds a registered object's code by its CFI and names it from its symbols" {
	"$MKJIT" --gdb obj "$ELF" > in.msr
	run --separate-stderr bash -c 'ms-unwind < in.msr | ms-symbolize --text'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "77 77 901 outermost t_outer;t_fp;jit_gdb_func" ]
	[ "${lines[1]}" = "77 77 902 outermost t_outer;t_fp;jit_gdb_func" ]
	# unregistered at 3000: the code is in no module, the stack ends there
	[ "${lines[2]}" = "77 77 3001 no-cfi //anon+0x$TEXT(no-file)" ]
	[ "${#lines[@]}" -eq 3 ]
	[ -z "$stderr" ]
}

@test "ms-unwind consumes JIT_OBJECT records and writes the jit-object module and its frames" {
	"$MKJIT" --gdb obj "$ELF" > in.msr
	ms-unwind --stats < in.msr > out.msr 2> stats
	grep -q '^ms-unwind: jit-objects 1 read-again 0 ended 1 frames-named 2$' stats
	# the image (its .strtab names the function) is consumed; the FRAME
	# records name it, once per address
	[ "$(grep -a -c 'ELF' in.msr)" -ge 1 ]
	[ "$(grep -a -c 'ELF' out.msr)" -eq 0 ]
	[ "$(grep -a -o 'jit_gdb_func' out.msr | wc -l)" -eq 2 ]
	[ "$(grep -a -o '\[jit-object 0x5555aaaa0010\]' out.msr | wc -l)" -eq 1 ]
}

@test "ms-symbolize reads no file for a jit-object module: a frame ms-unwind did not name has no symbol" {
	# The module's path holds an ELF whose function covers the address: read
	# as a file, it would name the frame.
	cp "$ELF" object
	addr=$(nm object | awk '$3 == "t_fp" { print $1 }')
	"$MKJIT" --unnamed-object "$PWD/object" "$addr" > in.msr
	run --separate-stderr ms-symbolize --text --lines < in.msr
	[ "$status" -eq 0 ]
	[ "$output" = "77 77 1 no-cfi $PWD/object+0x$(printf %x $((16#$addr)))(no-symbol)" ]
}

@test "broken chunk sequences, malformed records and corrupt images are counted problems; the stream goes on" {
	"$MKJIT" --gdb --bad obj "$ELF" > in.msr
	run --separate-stderr bash -c 'ms-unwind < in.msr > out.msr'
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"jit-object record"*"the chunk lies outside the object"* ]]
	run --separate-stderr ms-symbolize --text < out.msr
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "77 77 901 outermost t_outer;t_fp;jit_gdb_func" ]
	[ "${#lines[@]}" -eq 3 ]
	# the problems, in the stream for the capture
	grep -a -q 'jit-object-broken' out.msr
	grep -a -q 'went on at another offset' out.msr
	grep -a -q 'jit-object-bad-elf' out.msr
	grep -a -q 'its section headers are missing or lie outside it' out.msr
	grep -a -q 'bad-jit-object' out.msr
}

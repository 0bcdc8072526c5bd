#!/usr/bin/env bats
# The layers of libcommon (scripts/check-layers): the tree as it is passes,
# and a copy with an include against the order, across one rank, or in a
# loop fails naming the file.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	tree=$BATS_TEST_TMPDIR/tree
	mkdir -p "$tree/scripts"
	cp -R "$MS_SRCDIR/libcommon" "$MS_SRCDIR/formats" "$MS_SRCDIR/cmd" "$tree/"
	cp "$MS_SRCDIR/scripts/check-layers" "$tree/scripts/"
}

# Add an include of $2 at the top of source file $1 of the copy.
plant() {
	sed -i "1i #include \"$2\"" "$tree/$1"
}

@test "the source tree keeps its layers" {
	run --separate-stderr "$MS_SRCDIR/scripts/check-layers" "$MS_SRCDIR"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "an include up the layers fails and names the file" {
	plant libcommon/util/grow.c capture/capture.h
	run --separate-stderr "$tree/scripts/check-layers" "$tree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"libcommon/util/grow.c includes libcommon/capture/capture.h: util may not include capture"* ]]
}

@test "an include across one rank fails (unwind and symbols)" {
	plant libcommon/unwind/fp.c symbols/symtab.h
	run --separate-stderr "$tree/scripts/check-layers" "$tree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"unwind may not include symbols"* ]]
}

@test "formats may not include analysis" {
	plant formats/common.c analysis/analysis.h
	run --separate-stderr "$tree/scripts/check-layers" "$tree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"formats may not include analysis"* ]]
}

@test "the stream's internal headers stay inside libcommon" {
	plant cmd/ms-capture.c stream/protocols.h
	plant formats/common.c stream/schema.h
	run --separate-stderr "$tree/scripts/check-layers" "$tree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cmd/ms-capture.c includes libcommon/stream/protocols.h: the stream's internal headers are for libcommon only"* ]]
	[[ "$output" == *"formats/common.c includes libcommon/stream/schema.h"* ]]
}

@test "two files of one folder that include each other fail" {
	plant libcommon/util/hashindex.h util/pairmap.h
	run --separate-stderr "$tree/scripts/check-layers" "$tree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"loop"* ]]
	[[ "$output" == *"libcommon/util/pairmap.h"* ]]
	[[ "$output" == *"libcommon/util/hashindex.h"* ]]
}

@test "a folder outside every layer is named" {
	mkdir "$tree/libcommon/newthing"
	echo '#include "util/grow.h"' > "$tree/libcommon/newthing/x.c"
	run --separate-stderr "$tree/scripts/check-layers" "$tree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"folder newthing is in no layer"* ]]
}

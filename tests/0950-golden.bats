#!/usr/bin/env bats
# Golden streams (tests/golden/README): the views the stages make of a
# committed saved stream are byte-identical to the committed ones.

load test_helper
bats_require_minimum_version 1.5.0

GOLDEN=$MS_SRCDIR/tests/golden

setup() {
	# shellcheck source=tests/golden/views.sh
	. "$GOLDEN/views.sh"
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
	gzip -d -c "$GOLDEN/data/spin.msr.gz" > "$BATS_TEST_TMPDIR/spin.msr"
	mkdir "$BATS_TEST_TMPDIR/views"
}

@test "the recorded path of the golden program is absent, as on another host" {
	[ ! -e /tmp/microscope-golden/spin ]
}

@test "every view of the golden stream is byte-identical to the committed one" {
	golden_views "$BATS_TEST_TMPDIR/spin.msr" "$GOLDEN/data" "$BATS_TEST_TMPDIR/views"
	local expected got differ=0
	for expected in "$GOLDEN"/expected/*; do
		got=$BATS_TEST_TMPDIR/views/$(basename "$expected")
		if ! cmp -s "$expected" "$got"; then
			echo "differs: $(basename "$expected")" >&2
			case $expected in
			*.txt | *.json | *.folded) diff -u "$expected" "$got" | head -40 >&2 ;;
			esac
			differ=1
		fi
	done
	[ "$(find "$BATS_TEST_TMPDIR/views" -type f | wc -l)" -eq "$(find "$GOLDEN/expected" -type f | wc -l)" ]
	[ "$differ" -eq 0 ]
}

@test "the golden tree has the program's known shape: outer_b three times outer_a" {
	tree=$GOLDEN/expected/spin.tree.txt
	grep -q 'spin_main' "$tree"
	a=$(awk '$NF == "spin)" && $(NF-2) == "outer_a" { print $3 }' "$tree")
	b=$(awk '$NF == "spin)" && $(NF-2) == "outer_b" { print $3 }' "$tree")
	[ -n "$a" ]
	[ -n "$b" ]
	# 3:1 within sampling noise
	assert_near "$((b * 100 / (a + b)))" 75 6 "outer_b's share"
	grep -q '^stacks:      complete 100.0%$' "$GOLDEN/expected/spin.summary.txt"
}

#!/usr/bin/env bats
# Every stage given garbage, a stream cut short, an oversized record or a
# stream from a newer major version exits non-zero with a message naming the
# stage, the input and the position, and ms-capture leaves no file behind.

load test_helper
bats_require_minimum_version 1.5.0

MKSTREAM=$MS_BUILDDIR/tests/unit/mkstream
stages="ms-decode ms-unwind ms-symbolize ms-capture"

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	"$MKSTREAM" --samples 20 > good.msr
	"$MKSTREAM" --samples 20 --no-trailer > cut.msr
	"$MKSTREAM" --oversize > oversize.msr
	"$MKSTREAM" --major 2 > major2.msr
	printf 'GET / HTTP/1.1\r\nHost: example\r\n\r\n' > garbage.msr
}

# Run stage $1 on input file $2; ms-capture writes out.msc.
run_stage() {
	if [ "$1" = ms-capture ]; then
		run --separate-stderr ms-capture -o out.msc "$2"
	else
		run --separate-stderr "$1" "$2"
	fi
}

no_output_file() {
	[ ! -e out.msc ] && ! ls out.msc.* 2>/dev/null
}

@test "every stage passes a good stream" {
	for s in $stages; do
		run_stage "$s" good.msr
		# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
		[ "$status" -eq 0 ] || { echo "$s: $status: $stderr" >&2; false; }
	done
	[ -f out.msc ]
}

@test "garbage: exit 1, the message names the stage, the input and the byte" {
	for s in $stages; do
		run_stage "$s" garbage.msr
		[ "$status" -eq 1 ] || { echo "$s: status $status" >&2; false; }
		[[ "$stderr" == "$s: "* ]] || { echo "$s: '$stderr'" >&2; false; }
		[[ "$stderr" == *garbage.msr* ]] || { echo "$s: no input name: '$stderr'" >&2; false; }
		[[ "$stderr" == *byte* ]] || { echo "$s: no position: '$stderr'" >&2; false; }
		[ "$(grep -c . <<<"$stderr")" -le 2 ] || { echo "$s: too chatty: '$stderr'" >&2; false; }
	done
	no_output_file
}

@test "a stream cut short: exit 3, the message says where and who did not finish" {
	for s in $stages; do
		run_stage "$s" cut.msr
		[ "$status" -eq 3 ] || { echo "$s: status $status: $stderr" >&2; false; }
		[[ "$stderr" == *"$s: "*cut\ short* ]] || { echo "$s: '$stderr'" >&2; false; }
		[[ "$stderr" == *byte* ]] || { echo "$s: no position: '$stderr'" >&2; false; }
	done
	no_output_file
}

@test "an oversized record is refused before it is read, exit 1" {
	for s in $stages; do
		run_stage "$s" oversize.msr
		[ "$status" -eq 1 ] || { echo "$s: status $status" >&2; false; }
		[[ "$stderr" == "$s: "*oversize.msr* ]] || { echo "$s: '$stderr'" >&2; false; }
		[[ "$stderr" == *limit* ]] || { echo "$s: no limit named: '$stderr'" >&2; false; }
	done
	no_output_file
}

@test "a stream of a newer major version is refused naming both versions, exit 1" {
	for s in $stages; do
		run_stage "$s" major2.msr
		[ "$status" -eq 1 ] || { echo "$s: status $status" >&2; false; }
		[[ "$stderr" == "$s: "*major2.msr* ]] || { echo "$s: '$stderr'" >&2; false; }
		[[ "$stderr" == *2* && "$stderr" == *1* ]] || { echo "$s: '$stderr'" >&2; false; }
	done
	no_output_file
}

#!/usr/bin/env bats
# Every command has --help, --version and a man page that agrees with its
# --help (as git's t0450 checks): no option is documented in one place only.

load test_helper
bats_require_minimum_version 1.5.0

commands="microscope ms-collect ms-decode ms-unwind ms-symbolize ms-debuginfod-find ms-capture ms-analyze ms-export"

@test "every command answers --version with its name and version" {
	for c in $commands; do
		run "$c" --version
		[ "$status" -eq 0 ] || { echo "$c --version: status $status" >&2; false; }
		[[ "$output" =~ ^$c\ [0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "$c --version: '$output'" >&2; false; }
	done
}

@test "every command's --help shows usage and the exit codes, on stdout, status 0" {
	for c in $commands; do
		run --separate-stderr "$c" --help
		[ "$status" -eq 0 ] || { echo "$c --help: status $status" >&2; false; }
		[[ "$output" == *usage:* ]] || { echo "$c --help has no usage line" >&2; false; }
		[[ "$output" == *"Exit status"* ]] || { echo "$c --help does not list exit codes" >&2; false; }
	done
}

@test "every long option in --help is in the man page, and every command has one" {
	for c in $commands; do
		page=$MS_SRCDIR/man/$c.1
		[ -f "$page" ] || { echo "no man page $page" >&2; false; }
		text=$(man -l "$page" 2>/dev/null | col -b)
		grep -q "EXIT STATUS" <<<"$text" || { echo "$page has no EXIT STATUS" >&2; false; }
		for opt in $("$c" --help | grep -o -E -- '--[a-z][a-z-]+' | sort -u); do
			grep -q -F -- "$opt" <<<"$text" || { echo "$c: $opt is in --help, not in $page" >&2; false; }
		done
	done
}

@test "an unknown option is a usage error (status 2) naming the option" {
	for c in $commands; do
		run --separate-stderr "$c" --no-such-option
		[ "$status" -eq 2 ] || { echo "$c: status $status" >&2; false; }
		# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
		[[ "$stderr" == *no-such-option* ]] || { echo "$c: '$stderr'" >&2; false; }
	done
}

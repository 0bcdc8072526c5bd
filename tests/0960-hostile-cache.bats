#!/usr/bin/env bats
# Hostile surroundings (issue 15, items 1, 4 and 5): a cache folder that is a
# link to another folder, or that others may write, is neither cleaned,
# read nor written; a FIFO where a stream, a cache or a debug folder names
# a file hangs no stage; a damaged cache never changes a stack. Each case
# runs the stages with a time limit, so that a hang fails the test instead
# of stopping the suite. Nothing here touches the real ~/.cache.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	cd "$BATS_TEST_TMPDIR" || return
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
	unset DEBUGINFOD_URLS
	RECURSE=$MS_BUILDDIR/tests/fixtures/recurse
	require_built "$RECURSE"
}

teardown() {
	# No FIFO outlives its test, nor any stage (timeout killed any that hung).
	find "$BATS_TEST_TMPDIR" -type p -delete 2>/dev/null || true
	[ -z "$(leftover_processes)" ]
}

# Record the recursion fixture (DWARF-only stacks through it and libc) and
# decode it: run.msr, decoded.msr (whose samples point into run.msr).
record() {
	ms-collect -F 999 -o run.msr -- "$RECURSE" 0.3 20 2> collect.err || {
		cat collect.err >&2
		return 1
	}
	ms-decode run.msr > decoded.msr
}

# Named stacks of decoded.msr with the cache as it is now, into $1; fails
# when a stage takes more than 20 s (a hang) or fails.
named() {
	timeout 20 ms-unwind decoded.msr 2> "$1.unwind.err" > "$1.msr" || {
		echo "ms-unwind: status $?" >&2
		cat "$1.unwind.err" >&2
		return 1
	}
	timeout 20 ms-symbolize --text --lines "$1.msr" > "$1" 2> "$1.symbolize.err" || {
		echo "ms-symbolize: status $?" >&2
		cat "$1.symbolize.err" >&2
		return 1
	}
}

# The same without any cache: the reference.
named_without_cache() {
	XDG_CACHE_HOME='' HOME='' named "$1"
}

# A folder of files named as the cache names its own, unused for a month,
# under a stamp that makes the next cache write clean: what a clean of it
# would remove.
victim_folder() {
	mkdir -p "$1/debug" "$1/cfi"
	echo precious > "$1/kallsyms"
	echo precious > "$1/debug/0123456789abcdef.syms"
	echo precious > "$1/cfi/0123456789abcdef.rows"
	echo precious > "$1/notes.txt"
	touch -d '40 days ago' "$1/kallsyms" "$1/debug/0123456789abcdef.syms" \
		"$1/cfi/0123456789abcdef.rows" "$1/notes.txt"
	touch -d '2 days ago' "$1/last_clean"
	# What is newer than this was written since (a clean touches the stamp).
	touch "$1.made"
}

assert_victim_intact() {
	[ "$(cat "$1/kallsyms")" = precious ]
	[ "$(cat "$1/debug/0123456789abcdef.syms")" = precious ]
	[ "$(cat "$1/cfi/0123456789abcdef.rows")" = precious ]
	[ "$(cat "$1/notes.txt")" = precious ]
	# Nothing was written there either, not even the clean's stamp.
	[ -z "$(find "$1" -newer "$1.made" -print -quit)" ] ||
		{ find "$1" -newer "$1.made" >&2; return 1; }
}

@test "hostile cache: a cache folder that is a link is not followed: nothing cleaned, a warning, caches off" {
	record
	named_without_cache none.txt
	victim_folder victim
	mkdir cache
	ln -s "$PWD/victim" cache/microscope
	named linked.txt
	cmp none.txt linked.txt
	assert_victim_intact victim
	[ -L cache/microscope ]
	for stage in unwind symbolize; do
		[ "$(grep -c "warning: the cache folder '$PWD/cache/microscope' is a symbolic link" \
			"linked.txt.$stage.err")" -eq 1 ]
		grep -q 'caches are off for this run' "linked.txt.$stage.err"
	done
}

@test "hostile cache: a cache folder others may write, or another user's, is not used" {
	record
	named_without_cache none.txt
	victim_folder cache/microscope
	chmod 0777 cache/microscope
	named open.txt
	cmp none.txt open.txt
	assert_victim_intact cache/microscope
	grep -q "may be written by its group or others (mode 777)" open.txt.unwind.err
	[ "$(id -u)" -eq 0 ] || return 0
	chmod 0700 cache/microscope
	chown 65534:65534 cache/microscope
	named foreign.txt
	cmp none.txt foreign.txt
	assert_victim_intact cache/microscope
	grep -q "belongs to user 65534, not to this one (0)" foreign.txt.symbolize.err
}

# The samples of decoded.msr point into run.msr (a STACK_FILE record names it).
record_refer() {
	record
	ms-decode --stack-bytes=refer run.msr > decoded.msr
}

@test "hostile cache: the stack file a stream names is a FIFO: a clear error, no hang" {
	record_refer
	mv run.msr saved.msr
	mkfifo run.msr
	run -1 --separate-stderr timeout 20 ms-unwind decoded.msr
	rm run.msr
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	[[ "$stderr" == *"the stack copies of its samples are in '"*"/run.msr', which cannot be opened here (not a regular file"* ]]
	[[ "$stderr" == *"--stack-bytes=copy"* ]]
}

@test "hostile cache: the stack file a stream names is a link: refused" {
	record_refer
	mv run.msr saved.msr
	ln -s saved.msr run.msr
	run -1 --separate-stderr timeout 20 ms-unwind decoded.msr
	[[ "$stderr" == *"/run.msr', which cannot be opened here (a symbolic link"* ]]
}

@test "hostile cache: FIFOs in place of every cache file hang no stage, and change nothing" {
	record
	named_without_cache none.txt
	named cold.txt
	cmp none.txt cold.txt
	ls cache/microscope/cfi/*.rows >/dev/null
	# Each cache file, and the kernel's symbols whether made or not, a FIFO.
	while IFS= read -r f; do
		rm "$f"
		mkfifo "$f"
	done < <(find cache/microscope -type f ! -name last_clean)
	[ -p cache/microscope/kallsyms ] || mkfifo cache/microscope/kallsyms
	named fifo.txt
	cmp none.txt fifo.txt
	# The FIFOs of the caches the stages rewrote are files again; none left half-written.
	[ -n "$(find cache/microscope/cfi -name '*.rows' -type f)" ]
	[ -z "$(find cache/microscope/cfi -name '*.rows' -type p)" ]
	assert_no_files 'cache/microscope/*/*.tmp-*'
}

@test "hostile cache: a FIFO or a folder in a --debug-dir hangs nothing; a link there is followed" {
	record
	named_without_cache none.txt
	id=$(readelf -n "$RECURSE" | awk '/Build ID/ { print $3; exit }')
	[ "${#id}" -eq 40 ]
	mkdir -p dbg/.build-id/"${id:0:2}" links/.build-id/"${id:0:2}"
	mkfifo dbg/.build-id/"${id:0:2}/${id:2}.debug" dbg/recurse.debug
	mkdir dbg/recurse
	ln -s "$RECURSE" links/.build-id/"${id:0:2}/${id:2}.debug"
	timeout 20 ms-unwind --debug-dir "$PWD/dbg" decoded.msr > dbg.msr
	timeout 20 ms-symbolize --debug-dir "$PWD/dbg" --text --lines dbg.msr > dbg.txt
	cmp none.txt dbg.txt
	XDG_CACHE_HOME='' HOME='' timeout 20 ms-symbolize --debug-dir "$PWD/links" --text --lines \
		dbg.msr > links.txt
	cmp none.txt links.txt
}

@test "hostile cache: single-byte flips of the program's CFI rows leave the stacks as without a cache" {
	local -a bytes
	record
	XDG_CACHE_HOME='' HOME='' timeout 20 ms-unwind decoded.msr > none.msr
	timeout 20 ms-unwind decoded.msr > cold.msr
	cmp none.msr cold.msr
	id=$(readelf -n "$RECURSE" | awk '/Build ID/ { print $3; exit }')
	rows=cache/microscope/cfi/$id.rows
	[ -s "$rows" ]
	# Only the program's rows: each run reads that one file from the cache.
	find cache/microscope/cfi -name '*.rows' ! -name "$id.rows" -delete
	cp "$rows" good.rows
	read -r -a bytes < <(od -An -tu1 -v good.rows | tr '\n' ' '; echo)
	size=${#bytes[@]}
	echo "$rows: $size bytes" >&2
	[ "$size" -le 8192 ]
	# Every byte of the headers (the common one and cfi.c's, 112 bytes), then
	# every 11th: a run a flip (tests/unit/cficache-test.c flips every byte).
	changed=0 runs=0
	for ((i = 0; i < size; i += i < 112 ? 1 : 11)); do
		cp good.rows "$rows"
		# shellcheck disable=SC2059 # the format is the flipped byte, in octal
		printf "$(printf '\\%03o' $(( bytes[i] ^ (1 << (i % 8)) )))" |
			dd of="$rows" bs=1 seek="$i" conv=notrunc 2>/dev/null
		cmp -s good.rows "$rows" && { echo "byte $i: not flipped" >&2; return 1; }
		timeout 20 ms-unwind decoded.msr > flipped.msr
		cmp -s none.msr flipped.msr || { echo "byte $i: stacks changed" >&2; changed=$((changed + 1)); }
		runs=$((runs + 1))
	done
	echo "$runs flips" >&2
	[ "$changed" -eq 0 ]
}

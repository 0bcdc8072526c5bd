#!/usr/bin/env bats
# ms-symbolize's caches (libcommon/symbols/kcache.h, dcache.h): the parsed
# kallsyms and inflated copies of debug files with compressed sections,
# under $XDG_CACHE_HOME/microscope. A run that fills the cache, a run that
# reads it, a run with a damaged cache and a run without any cache all
# name every frame the same way.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
	PATH=$MS_BUILDDIR:$PATH
	cd "$BATS_TEST_TMPDIR" || return
}

# The recursion fixture (a libc call at the leaf, kernel frames from its
# system calls) recorded, decoded and unwound into unwound.msr.
unwound() {
	local recurse=$MS_BUILDDIR/tests/fixtures/recurse

	require_built "$recurse"
	ms-collect -F 999 -- "$recurse" 0.3 40 > run.msr 2> collect.err || {
		cat collect.err >&2
		return 1
	}
	ms-decode run.msr | ms-unwind > unwound.msr
}

# Text stacks with lines, cache at $1 ("" for none: no HOME, no XDG_CACHE_HOME).
named() {
	if [ -z "$1" ]; then
		env -u HOME -u XDG_CACHE_HOME ms-symbolize --text --lines unwound.msr
	else
		XDG_CACHE_HOME=$1 ms-symbolize --text --lines unwound.msr
	fi
}

@test "ms-symbolize: cold, warm, damaged and no cache name every frame the same" {
	unwound
	named "" > none.txt
	[ -s none.txt ]
	named "$PWD/cache" > cold.txt
	named "$PWD/cache" > warm.txt
	cmp none.txt cold.txt
	cmp none.txt warm.txt
	# Every cache file is the user's alone and nothing is left half-written.
	# (Without kernel frames or compressed debug sections nothing is cached.)
	if [ -d cache/microscope ]; then
		[ "$(stat -c %a cache/microscope)" = 700 ]
	fi
	[ -z "$(find cache -name '*.tmp-*' 2>/dev/null)" ]
	# Inflated copies leave out what is never read (location lists): empty, not inflated.
	for f in cache/microscope/debug/*.debug; do
		[ -e "$f" ] || continue
		readelf -SW "$f" > sections
		run -1 grep -E '\.debug_loclists +PROGBITS' sections
	done
	# Damaged: each cache file cut to half; they are refused and rewritten.
	while IFS= read -r f; do
		truncate -s $(($(stat -c %s "$f") / 2)) "$f"
	done < <(find cache -type f 2>/dev/null)
	named "$PWD/cache" > damaged.txt
	cmp none.txt damaged.txt
	named "$PWD/cache" > rewritten.txt
	cmp none.txt rewritten.txt
}

@test "ms-symbolize: the kallsyms cache is written for the running kernel only" {
	grep -q . /proc/kallsyms 2>/dev/null || skip "/proc/kallsyms is unreadable"
	[ "$(awk 'NR == 1 { print $1 }' /proc/kallsyms)" != 0000000000000000 ] ||
		skip "kernel addresses are hidden (kptr_restrict)"
	# dd spends its time in the kernel: its stacks have kernel frames.
	ms-collect -F 999 -- dd if=/dev/zero of=/dev/null bs=64k count=100000 > run.msr 2>/dev/null
	ms-decode run.msr | ms-unwind > unwound.msr
	ms-decode run.msr | ms-unwind --stats 2>&1 >/dev/null | grep -q 'kernel-frames [1-9]' ||
		skip "no kernel frame was sampled"
	named "" > none.txt
	named "$PWD/cache" > cold.txt
	[ -s cache/microscope/kallsyms ]
	named "$PWD/cache" > warm.txt
	cmp none.txt cold.txt
	cmp none.txt warm.txt
	# The cache of another boot (its key differs) is refused and rewritten:
	# the boot id is at 24 in the key, which follows the common header (64
	# bytes, util/cachefile.h) and four u32 (symbols/symfile.h). (The CRC of
	# that header refuses the patched file first.)
	printf 'x' | dd of=cache/microscope/kallsyms bs=1 seek=104 conv=notrunc 2>/dev/null
	named "$PWD/cache" > stale.txt
	cmp none.txt stale.txt
	# Another kallsyms file (--kallsyms) is neither cached nor read from the cache.
	cp /proc/kallsyms mine
	XDG_CACHE_HOME=$PWD/cache2 ms-symbolize --kallsyms "$PWD/mine" --text unwound.msr >/dev/null
	[ ! -e cache2/microscope/kallsyms ]
}

# Replace every "$2" in file $1 with "$3" (as long) in place: its size, its
# trailer, everything else stays.
patch_in_place() {
	local off
	[ "${#2}" -eq "${#3}" ] || return 1
	grep -obUaF -- "$2" "$1" | cut -d: -f1 > offsets
	[ -s offsets ] || { echo "'$2' is not in $1" >&2; return 1; }
	while read -r off; do
		printf '%s' "$3" | dd of="$1" bs=1 seek="$off" conv=notrunc 2>/dev/null
	done < offsets
}

@test "ms-symbolize: a debug copy damaged in place is checked when read, never when the caches answer" {
	unwound
	named "" > none.txt
	grep -q '__libc_start_call_main (' none.txt ||
		skip "libc's DWARF names no frame (libc6-dbg is not installed: run scripts/install-deps)"
	named "$PWD/cache" > cold.txt
	cmp none.txt cold.txt
	# libc's copy (a sample in ld.so's start-up makes a second one, ld.so's)
	id=$(readelf -n "$(ldd "$MS_BUILDDIR/tests/fixtures/recurse" | awk '$1 ~ /^libc\.so/ { print $3 }')" |
		awk '/Build ID/ { print $3 }')
	[ -n "$id" ]
	copy=cache/microscope/debug/$id.debug
	[ -f "$copy" ]
	[ -s "cache/microscope/debug/$id.index" ]
	# A name in the copy's strings changed, same length: only the CRC can tell.
	patch_in_place "$copy" __libc_start_call_main __libc_start_CALL_main
	cp "$copy" damaged.debug
	# The units' cache answers every lookup: the copy is not read, so not checked.
	named "$PWD/cache" > warm.txt
	cmp none.txt warm.txt
	cmp damaged.debug "$copy"
	# Without the units' caches its DWARF is read: checked first, refused and
	# written anew; not one name comes from the damaged bytes.
	rm "cache/microscope/debug/$id.index" "cache/microscope/debug/$id.units"
	named "$PWD/cache" > read.txt
	run -1 grep -c __libc_start_CALL_main read.txt
	cmp none.txt read.txt
	run -1 grep -c -aF __libc_start_CALL_main "$copy"
	named "$PWD/cache" > again.txt
	cmp none.txt again.txt
}

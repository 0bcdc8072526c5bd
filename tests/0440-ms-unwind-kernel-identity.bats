#!/usr/bin/env bats
# The kernel of a stream is the kernel that ran: ms-collect records its
# build id (info kernel-build-id) and ms-unwind gives it to the kernel
# module, so a stream processed under another kernel does not have its
# kernel frames named by the wrong one.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
	# dd of one byte at a time: most of its samples are in the kernel
	ms-collect -F 2000 -o run.msr -- dd if=/dev/zero of=/dev/null bs=1 count=300000 2>/dev/null
	bid=$(od -A n -t x1 -j 16 -N 20 /sys/kernel/notes | tr -d ' \n')
}

# The capture of stream $1 as $2, all stages.
process() {
	ms-decode "$1" | ms-unwind | ms-symbolize | ms-capture -o "$2"
}

@test "ms-collect records the running kernel's build id" {
	[ "${#bid}" -eq 40 ]
	grep -q "$bid" run.msr
}

@test "the kernel that ran names the kernel frames when it is the running one" {
	process run.msr same.msc
	ms-analyze top same.msc > top.txt
	grep -q '\[kernel' top.txt
	run -1 grep '\[kernel.kallsyms\]+0x' top.txt
}

@test "a stream from another kernel leaves kernel frames unnamed and says why" {
	other=$(echo "$bid" | tr '0-9a-f' '1-9a-f0')
	LC_ALL=C perl -pe "s/$bid/$other/" run.msr > other.msr
	run -1 cmp -s run.msr other.msr
	process other.msr other.msc
	ms-analyze top other.msc > top.txt
	grep -q '\[kernel.kallsyms\]+0x' top.txt
	ms-analyze problems other.msc > problems.txt
	grep -q "identity" problems.txt
	grep -q "$other" problems.txt
}

#!/usr/bin/env bats
# Hostile imports (issue 15, item 7). A folded line or a pprof sample says
# "this stack, N times" in a few bytes; 13 bytes once made the importer
# take 4.2 GB for 12 s (32 s here), and every reader of the 8.4 MB capture
# 4.2 GB again, one sample row per sample. Now a count is the count of one row:
# the import, the capture and every reader stay within the input's size
# times a small constant, and the views count what the file said. Each
# command here runs under an address-space limit far below what the
# expansion took.

load test_helper
bats_require_minimum_version 1.5.0

# KiB of address space each command may map: 256 MiB. The static stages
# need a few MiB; one row per sample of the bomb below needs 2 GiB.
LIMIT_KB=262144

setup() {
	cd "$BATS_TEST_TMPDIR" || return
}

# Run "$@" under the address-space limit.
bounded() {
	(
		ulimit -v "$LIMIT_KB"
		"$@"
	)
}

# The peak resident set of "$@" in KiB (GNU time), its output discarded.
max_rss_kb() {
	/usr/bin/time -f %M -o rss.txt "$@" >/dev/null
	cat rss.txt
}

@test "hostile import: 'a;b 67108864' (13 bytes) is one row, bounded everywhere, counted in full" {
	printf 'a;b 67108864\n' > bomb.folded
	[ "$(stat -c %s bomb.folded)" -eq 13 ]
	run --separate-stderr bounded ms-capture -o bomb.msc --import folded bomb.folded
	[ "$status" -eq 0 ]
	# a capture of a few hundred bytes, not 8.4 MB of rows
	[ "$(stat -c %s bomb.msc)" -lt 4096 ]
	rss=$(max_rss_kb ms-capture -o again.msc --import folded bomb.folded)
	echo "ms-capture --import peak RSS: $rss KiB"
	[ "$rss" -lt 65536 ]
	# every view counts the 67108864 samples
	bounded ms-analyze summary --json bomb.msc | jq -e '.samples == 67108864' >/dev/null
	bounded ms-analyze top --json bomb.msc |
		jq -e '.samples == 67108864 and (.functions[] | select(.name == "b") | .self == 67108864 and .total == 67108864)' >/dev/null
	bounded ms-analyze top bomb.msc | grep -q '^67108864 samples, 2 functions$'
	bounded ms-analyze tree --json bomb.msc | jq -e '.samples == 67108864' >/dev/null
	rss=$(max_rss_kb ms-analyze top bomb.msc)
	echo "ms-analyze top peak RSS: $rss KiB"
	[ "$rss" -lt 65536 ]
	# every export writes the count as its weight, in a few bytes
	[ "$(bounded ms-export -q --folded bomb.msc)" = "a;b 67108864" ]
	bounded ms-export -q --speedscope bomb.msc | jq -e '.profiles[0].weights == [67108864]' >/dev/null
	bounded ms-export -q --chrome --chrome-form samples bomb.msc |
		jq -e '[.samples[].weight] == [67108864]' >/dev/null
	bounded ms-export -q --chrome bomb.msc | jq -e '[.traceEvents[] | select(.ph == "X")] | length == 2' >/dev/null
	bounded ms-export -q --pprof -o bomb.pb.gz bomb.msc
	[ "$(stat -c %s bomb.pb.gz)" -lt 4096 ]
	# and back: the pprof sample is one row again
	run --separate-stderr bounded ms-capture -o back.msc --import pprof bomb.pb.gz
	[ "$status" -eq 0 ]
	bounded ms-analyze summary --json back.msc | jq -e '.samples == 67108864' >/dev/null
	# a dump (microscope symbolize's stream) carries the count, not 2^26 records
	bounded ms-capture --dump bomb.msc > bomb.msr
	[ "$(stat -c %s bomb.msr)" -lt 4096 ]
	bounded ms-capture -o dumped.msc < bomb.msr
	cmp bomb.msc dumped.msc
}

@test "hostile import: a folded file weighted by period imports, its counts as they are" {
	# perf script | stackcollapse-perf.pl, with periods: counts like 111500000
	cat > periods.folded <<-'EOF'
		burn;main;burn_60 111500000
		burn;main;burn_30 55750000
		burn;main;burn_60 111500000
		burn;[unknown] 250000
	EOF
	run --separate-stderr bounded microscope convert -q periods.folded periods.msc
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	bounded ms-analyze top --json periods.msc | jq -r '.samples, (.functions[] | "\(.name) \(.self) \(.total)")' > top.txt
	cat > want.txt <<-'EOF'
		279000000
		burn_60 223000000 223000000
		burn_30 55750000 55750000
		[unknown] 250000 250000
		burn 0 279000000
		main 0 278750000
	EOF
	diff -u want.txt top.txt
	# the largest count a line may have imports; one past it, or a sum past it, is refused
	printf 'a 18446744073709551615\n' > max.folded
	bounded ms-capture -o max.msc --import folded max.folded
	# (jq reads numbers as doubles: the bytes are checked)
	bounded ms-analyze summary --json max.msc | grep -qF '"samples":18446744073709551615,'
	printf 'a 18446744073709551616\n' > over.folded
	run --separate-stderr ms-capture -o over.msc --import folded over.folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'over.folded' line 1: the count '18446744073709551616' is over 18446744073709551615"* ]]
	printf 'a 18446744073709551615\nb 1\n' > sum.folded
	run --separate-stderr ms-capture -o sum.msc --import folded sum.folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'sum.folded' line 2: the counts add up past 18446744073709551615"* ]]
	[ ! -e over.msc ]
	[ ! -e sum.msc ]
	# pprof cannot hold that count (int64): refused with what to do instead
	run --separate-stderr ms-export --pprof -o max.pb.gz max.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"export it as folded or speedscope instead"* ]]
	[ ! -e max.pb.gz ]
}

@test "hostile import: a pprof sample of 2^62 samples is one row" {
	printf 'main;work 4611686018427387904\nmain 1\n' > huge.folded
	bounded ms-capture -o huge.msc --import folded huge.folded
	bounded ms-export -q --pprof -o huge.pb.gz huge.msc
	run --separate-stderr bounded ms-capture -o back.msc --import pprof huge.pb.gz
	[ "$status" -eq 0 ]
	[ "$(stat -c %s back.msc)" -lt 4096 ]
	bounded ms-analyze top --json back.msc |
		grep -qF '{"name":"work","module":"","file":"","line":0,"self":4611686018427387904,'
}

@test "hostile import: counts need a 1.2 reader; a capture without them stays 1.1" {
	printf 'a;b 5\n' > five.folded
	ms-capture -o five.msc --import folded five.folded
	# minor 2 and the required flag 0x00010000 (bytes 12-19): a 1.1 reader refuses it
	[ "$(od -An -tu4 -j12 -N8 five.msc | tr -s ' ')" = " 2 65536" ]
	printf 'a;b 1\n' > one.folded
	ms-capture -o one.msc --import folded one.folded
	[ "$(od -An -tu4 -j12 -N8 one.msc | tr -s ' ')" = " 1 0" ]
}

@test "hostile import: a pprof thread name of 1 MiB, 5000 threads and names in conflict stay bounded" {
	"$MS_BUILDDIR/tests/unit/pprof-mkthreads" hostile host.pb
	run --separate-stderr bounded ms-capture -o host.msc --import pprof host.pb
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"a capture keeps none of the ends of thread names past 255 bytes of 'host.pb'"* ]]
	# the name is kept to 255 bytes: the capture holds 5001 threads, not the MiB
	[ "$(stat -c %s host.msc)" -lt 131072 ]
	ms-analyze summary --json host.msc > summary.json
	jq -e '(.threads | length) == 5001' summary.json >/dev/null
	jq -e '.threads[] | select(.tid == 1) | .name | length == 255' summary.json >/dev/null
	# a thread keeps its first name; the sample that names it otherwise is a problem
	jq -e '.threads[] | select(.tid == 100) | .name == "t0"' summary.json >/dev/null
	jq -e '.problems[] | select(.code == "import-thread-renamed") | .count == 1' summary.json >/dev/null
	rss=$(max_rss_kb ms-capture -o again.msc --import pprof host.pb)
	echo "ms-capture --import peak RSS: $rss KiB"
	[ "$rss" -lt 65536 ]
	cmp host.msc again.msc
}

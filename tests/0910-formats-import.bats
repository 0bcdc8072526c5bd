#!/usr/bin/env bats
# Imports (ms-capture --import pprof|folded) and microscope convert: they
# build the same validated capture that ms-analyze and ms-export read, and a
# hostile input is an error naming its position that writes nothing.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	"$MS_BUILDDIR/tests/unit/formats-mkcapture" --samples 400 --threads 2 --lines p.msc
	ms-export -q --pprof -o p.pb.gz p.msc
	ms-export -q --folded -o p.folded p.msc
}

# "name self total" of every function, sorted: what must survive a trip.
shares() {
	ms-analyze top --json "$1" | jq -r '.functions[] | "\(.name) \(.module) \(.self) \(.total)"' | sort
}

# The same by name only, summed over modules: what a folded file can say.
shares_by_name() {
	ms-analyze top --json "$1" |
		jq -r '[.functions | group_by(.name)[] | {n: .[0].name, s: (map(.self) | add)}] | .[] | "\(.n) \(.s)"' |
		sort
}

@test "ms-capture --import pprof: the capture ms-analyze reads has the same functions and shares" {
	run --separate-stderr ms-capture -o back.msc --import pprof p.pb.gz
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	diff -u <(shares p.msc) <(shares back.msc)
	ms-analyze summary --json back.msc | jq -e '.samples == 400' >/dev/null
	# lines come back: an inlined function is still its own entry
	ms-analyze top --json back.msc | jq -e '[.functions[] | select(.name == "inlined_helper")] | length > 0' >/dev/null
	# and it exports again to the same pprof
	ms-export -q --pprof back.msc | gzip -dc > again.pb
	ms-export -q --pprof -o back2.pb.gz back.msc
	gzip -dc back2.pb.gz | cmp - again.pb
}

@test "ms-capture --import folded: names and shares survive, modules and times do not" {
	run --separate-stderr ms-capture -o back.msc --import folded p.folded
	[ "$status" -eq 0 ]
	diff -u <(shares_by_name p.msc) <(shares_by_name back.msc)
	# the folded file comes out again unchanged
	ms-export -q --folded back.msc | diff -u p.folded -
}

@test "microscope convert: picks the converter from the file names, in every direction" {
	microscope convert -q p.msc a.pb.gz
	cmp a.pb.gz p.pb.gz
	microscope convert a.pb.gz b.msc
	diff -u <(shares p.msc) <(shares b.msc)
	microscope convert -q p.folded c.msc
	diff -u <(shares_by_name p.msc) <(shares_by_name c.msc)
	microscope convert -q a.pb.gz d.folded
	cmp d.folded p.folded
	microscope convert -q p.msc e.speedscope.json
	jq -e '.profiles | length == 2' e.speedscope.json >/dev/null
	microscope convert -q p.msc f.json
	jq -e '.traceEvents | length > 0' f.json >/dev/null
	# no extension: --to, or the input's first bytes
	cp a.pb.gz profile
	microscope convert -q --to folded profile - | cmp - p.folded
	microscope convert -q --from pprof --to folded - - < a.pb.gz | cmp - p.folded
	microscope convert -q - --to folded - < a.pb.gz | cmp - p.folded
}

@test "microscope convert: usage errors exit 2" {
	run --separate-stderr microscope convert p.msc out.unknown
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--to"* ]]
	run --separate-stderr microscope convert p.msc - --to capture
	[ "$status" -eq 2 ]
	run --separate-stderr microscope convert --from chrome p.msc x.folded
	[ "$status" -eq 2 ]
	run --separate-stderr microscope convert p.msc
	[ "$status" -eq 2 ]
	run --separate-stderr microscope convert p.pb.gz again.pb.gz
	[ "$status" -eq 2 ]
	run --separate-stderr microscope convert --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: microscope convert"* ]]
}

@test "imports: a cut-short or corrupt pprof is an error with its position, and no capture" {
	head -c 500 p.pb.gz > cut.pb.gz
	run --separate-stderr ms-capture -o out.msc --import pprof cut.pb.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'cut.pb.gz': the gzip data is cut short after 500 bytes"* ]]
	[[ "$stderr" == *"no capture written to 'out.msc'"* ]]
	[ ! -e out.msc ]
	# a sample (field 2) written as a varint
	printf '\x32\x00\x10\x01' > wire.pb
	run --separate-stderr microscope convert wire.pb out.msc --from pprof
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"malformed profile at byte 2"*"Profile.sample (field 2) has wire type 0"* ]]
	[ ! -e out.msc ]
	# a sample naming a location that is not there
	printf '\x32\x00\x0a\x02\x08\x00\x12\x05\x0a\x01\x07\x10\x01' > ref.pb
	run --separate-stderr ms-capture -o out.msc --import pprof ref.pb
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"sample 0 (byte 6): frame 0 names location 7, which is not defined"* ]]
	[ ! -e out.msc ]
	assert_no_files '*tmp*'
}

@test "imports: bad folded lines are errors naming the line, and no capture" {
	printf 'main;a 2\nmain;b\n' > nocount.folded
	printf 'main;a 2\nmain;b -1\n' > negative.folded
	printf 'main;a 18446744073709551616\n' > huge.folded
	printf 'main;;a 1\n' > empty.folded
	for f in nocount negative huge empty; do
		run --separate-stderr ms-capture -o out.msc --import folded $f.folded
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"'$f.folded' line "* ]]
		[ ! -e out.msc ]
	done
	run --separate-stderr ms-capture -o out.msc --import folded nocount.folded
	[[ "$stderr" == *"line 2: no count after the stack"* ]]
	run --separate-stderr ms-capture -o out.msc --import folded negative.folded
	[[ "$stderr" == *"line 2: the count '-1' is negative"* ]]
}

@test "ms-capture --import: usage" {
	run --separate-stderr ms-capture -o out.msc --import perf p.folded
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'perf'"* ]]
	run --separate-stderr ms-capture -o out.msc --import folded --salvage p.folded
	[ "$status" -eq 2 ]
	# from stdin
	ms-capture -o in.msc --import folded < p.folded
	diff -u <(shares_by_name p.msc) <(shares_by_name in.msc)
}

@test "ms-capture --import pprof: a CPU profile that Go's runtime/pprof wrote" {
	run --separate-stderr ms-capture -o go.msc --import pprof "$MS_SRCDIR/tests/formats/go-runtime-cpu.pprof"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	ms-analyze top --json go.msc > top.json
	jq -e '.samples == 105 and .functions[0].name == "main.spin" and .functions[0].self == 69' top.json >/dev/null
	# Go's source lines come through as functions with their files
	ms-analyze top go.msc | grep -q 'main.spin (main.go)'
	# its time and duration survive an export
	ms-export -q --pprof go.msc | gzip -dc > again.pb
	microscope convert -q --from pprof again.pb again.folded
	[ "$(awk '{ n += $NF } END { print n }' again.folded)" -eq 105 ]
}

@test "the report of an imported profile says where it came from, and not 'unknown 100 %'" {
	ms-capture -o back.msc --import pprof p.pb.gz 2>/dev/null
	ms-analyze summary back.msc > pprof.txt
	grep -qx "stacks:      how they end is not known (pprof keeps none)" pprof.txt
	grep -qx "source:      imported from pprof ('p.pb.gz')" pprof.txt
	run -1 grep -q "unknown 100" pprof.txt
	ms-capture -o f.msc --import folded p.folded 2>/dev/null
	ms-analyze summary f.msc > folded.txt
	grep -qx "stacks:      how they end is not known (folded keeps none)" folded.txt
	grep -qx "source:      imported from folded ('p.folded')" folded.txt
	# a folded file has counts, not times: no "0 ns" for a duration or a CPU time
	grep -q "^recorded:    for a time not known (the samples carry no times), " folded.txt
	grep -qx "cpu time:    not known (the samples carry no periods)" folded.txt
	grep -qx "command:     (not known)" folded.txt
	# a recording is not said to be imported
	run -1 grep -q "^source:" <(ms-analyze summary p.msc)
}

@test "ms-capture --import pprof: threads and their names from the labels producers write" {
	# microscope's and perf_to_profile's pid/tid/thread, Pyroscope's text ids, Datadog's
	# OS and runtime ids, async-profiler's name alone, perf_to_profile's thread_comm
	"$MS_BUILDDIR/tests/unit/pprof-mkthreads" producers prod.pb
	run --separate-stderr ms-capture -o prod.msc --import pprof prod.pb
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	ms-analyze summary --json prod.msc | jq -r '.threads[] | "\(.pid)/\(.tid) \(.samples) \(.name)"' > threads.txt
	# a thread known by name only is numbered past the largest tid (77)
	cat > want.txt <<-'EOF'
		0/77 5 MainThread
		0/78 7 GC Thread#0 [tid=4242]
		1/10 3 main
		1/55 2 worker
		2/20 6 io
	EOF
	diff -u want.txt threads.txt
	ms-analyze summary prod.msc | grep -q '^ *0 *78 *7 .*GC Thread#0 \[tid=4242\]$'
	# the same file gives the same capture, and its pprof export the same threads
	ms-capture -o again.msc --import pprof prod.pb
	cmp prod.msc again.msc
	ms-export -q --pprof -o back.pb.gz prod.msc
	ms-capture -o back.msc --import pprof back.pb.gz
	diff -u threads.txt <(ms-analyze summary --json back.msc | jq -r '.threads[] | "\(.pid)/\(.tid) \(.samples) \(.name)"')
}

#!/usr/bin/env bats
# ms-export: each format to a file and to stdout, its options, the one line
# naming what a format drops, and failures that leave no file behind.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	"$MS_BUILDDIR/tests/unit/formats-mkcapture" --samples 300 --threads 3 --lines p.msc
}

@test "ms-export: --help lists every option the man page documents, --version" {
	run --separate-stderr ms-export --help
	[ "$status" -eq 0 ]
	[[ "$output" == *usage:* ]]
	[[ "$output" == *"Exit status"* ]]
	text=$(man -l "$MS_SRCDIR/man/ms-export.1" 2>/dev/null | col -b)
	grep -q "EXIT STATUS" <<<"$text"
	for opt in $(ms-export --help | grep -o -E -- '--[a-z][a-z-]+' | sort -u); do
		grep -q -F -- "$opt" <<<"$text" || { echo "$opt is in --help, not in ms-export.1" >&2; false; }
	done
	run ms-export --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^ms-export\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "ms-export: every format to a file equals the same format on stdout, byte for byte" {
	for f in pprof folded chrome speedscope; do
		ms-export -q --$f -o out.$f p.msc
		ms-export -q --$f p.msc > stdout.$f
		cmp out.$f stdout.$f
		# and again: the same capture gives the same bytes
		ms-export -q --$f p.msc | cmp - out.$f
	done
	# pprof is gzip, the JSON formats are JSON, folded is "stack count" lines
	gzip -t out.pprof
	jq -e .traceEvents out.chrome >/dev/null
	jq -e '.profiles | length == 3' out.speedscope >/dev/null
	run -1 grep -v -E '^[^ ].* [0-9]+$' out.folded
	# 300 samples in all, whatever the stacks
	[ "$(awk '{ n += $NF } END { print n }' out.folded)" -eq 300 ]
}

@test "ms-export: one line on stderr names the facts a format drops; --quiet leaves it out" {
	run --separate-stderr ms-export --folded p.msc
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[ "$stderr" = "ms-export: note: folded drops times, CPUs, threads, periods, addresses, modules, frame marks, info of 'p.msc' (ms-export(1))" ]
	run --separate-stderr ms-export --folded --thread-root --weight time p.msc
	[[ "$stderr" != *threads* ]]
	[[ "$stderr" != *periods* ]]
	[[ "$stderr" == *" counts"* ]]
	run --separate-stderr ms-export --quiet --pprof -o q.pb.gz p.msc
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "ms-export: --thread-root and --weight time shape the folded lines" {
	ms-export -q --folded --thread-root p.msc > roots
	# every line starts with one of the three threads
	[ "$(cut -d';' -f1 roots | sed 's/ [0-9]*$//' | sort -u | tr '\n' ' ')" = \
		"synthetic-4242/4242 worker-1-4242/4243 worker-2-4242/4244 " ]
	ms-export -q --folded --weight time p.msc > times.folded
	# every sample weighs 1 ms
	[ "$(awk '{ n += $NF } END { print n }' times.folded)" -eq 300000000 ]
}

@test "ms-export: usage errors exit 2 and name the problem" {
	run --separate-stderr ms-export p.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"name a format"* ]]
	run --separate-stderr ms-export --pprof --folded p.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"one format at a time"* ]]
	run --separate-stderr ms-export --pprof --thread-root p.msc
	[ "$status" -eq 2 ]
	run --separate-stderr ms-export --folded --weight bytes p.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'bytes'"* ]]
	run --separate-stderr ms-export --chrome --chrome-form flame p.msc
	[ "$status" -eq 2 ]
	run --separate-stderr ms-export --folded
	[ "$status" -eq 2 ]
	run --separate-stderr ms-export --folded p.msc extra
	[ "$status" -eq 2 ]
}

@test "ms-export: a bad capture or an unwritable output is an error and leaves no file" {
	head -c 200 p.msc > cut.msc
	run --separate-stderr ms-export --pprof -o out.pb.gz cut.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *cut.msc* ]]
	[ ! -e out.pb.gz ]
	run --separate-stderr ms-export --pprof -o no/such/dir/out.pb.gz p.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *no/such/dir* ]]
	# a full stdout is an error
	if [ -w /dev/full ]; then
		run --separate-stderr sh -c 'ms-export -q --folded p.msc > /dev/full'
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"cannot write the export to stdout"* ]]
	fi
	# an output that is not a regular file (here a FIFO) is written in place, never replaced
	mkfifo fifo
	cat fifo > from-fifo &
	ms-export -q --folded -o fifo p.msc
	wait
	[ -p fifo ]
	ms-export -q --folded p.msc | cmp - from-fifo
	run --separate-stderr ms-export --pprof -o out.pb.gz missing.msc
	[ "$status" -eq 1 ]
	[ ! -e out.pb.gz ]
	assert_no_files '*tmp*'
}

@test "ms-export and microscope convert: a reader that closes the pipe early ends them quietly, status 0" {
	"$MS_BUILDDIR/tests/unit/formats-mkcapture" --samples 200000 big.msc
	# shellcheck disable=SC2016 # PIPESTATUS is the inner bash's
	run --separate-stderr bash -c 'ms-export -q --chrome --chrome-form samples big.msc | head -c 100 >/dev/null; echo "${PIPESTATUS[0]}"'
	[ "$output" = 0 ]
	[ -z "$stderr" ]
	# shellcheck disable=SC2016
	run --separate-stderr bash -c 'microscope convert -q --to folded big.msc - | head -c 100 >/dev/null; echo "${PIPESTATUS[0]}"'
	[ "$output" = 0 ]
	[ -z "$stderr" ]
}

@test "ms-export: a Chrome trace past 1 GiB is announced before it is written, with smaller ways; -q silences it" {
	"$MS_BUILDDIR/tests/unit/formats-mkcapture" --samples 2000000 --threads 4 --lines big.msc
	# the warning comes first: the reader may stop after a few bytes
	# shellcheck disable=SC2016 # PIPESTATUS is the inner bash's
	run --separate-stderr bash -c 'ms-export --chrome big.msc | head -c 100 >/dev/null; echo "${PIPESTATUS[0]}"'
	[ "$output" = 0 ]
	grep -q -x -F "ms-export: warning: the Chrome trace of 'big.msc' will be about 1.5 GiB; --chrome-form samples writes at most 180 MiB, --pprof or --speedscope far less (-q: no warning)" <<<"$stderr"
	# shellcheck disable=SC2016
	run --separate-stderr bash -c 'ms-export -q --chrome big.msc | head -c 100 >/dev/null; echo "${PIPESTATUS[0]}"'
	[ "$output" = 0 ]
	[ -z "$stderr" ]
	# the samples form and a small capture: no warning
	run --separate-stderr ms-export --chrome --chrome-form samples -o /dev/null big.msc
	[ "$status" -eq 0 ]
	[[ "$stderr" != *warning* ]]
	run --separate-stderr ms-export --chrome -o /dev/null p.msc
	[[ "$stderr" != *warning* ]]
}

@test "ms-export: work past a second shows a progress line on a terminal, cleared at the end, and nowhere else" {
	command -v script >/dev/null || skip "script (util-linux) is not installed: no terminal to test on"
	"$MS_BUILDDIR/tests/unit/formats-mkcapture" --samples 2000000 --threads 4 big.msc
	# stderr a terminal (script's), stdout a reader slow to start: the export takes over a second
	run script -qec 'ms-export -q --chrome big.msc | (sleep 1.5; cat >/dev/null)' /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == $'\r'"ms-export: writing the Chrome trace  "*%*" s"$'\r'* ]]
	# the last thing drawn: spaces over the line, the cursor back at its start
	[[ "$output" =~ $'\r'\ +$'\r'$ ]]
	[[ "$output" != *$'\n'* ]]
	# stderr not a terminal: nothing
	run --separate-stderr bash -c 'ms-export -q --chrome big.msc | (sleep 1.5; cat >/dev/null)'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

# "tid ts dur name" of the complete events, a thread's in time order, enclosing ones
# first: of two with one start and end, the one written first (as viewers take it).
chrome_events() {
	jq -r '.traceEvents[] | select(.ph == "X") | "\(.tid) \(.ts) \(.dur) \(.name)"' "$1" |
		sort -s -k1,1n -k2,2g -k3,3gr
}

@test "ms-export: a stack cut short starts with [truncated: stack-copy] in every format, and only such a stack" {
	# a 1 KiB stack copy cuts the recursion 40 deep: most stacks end early, some reach _start
	cp "$FIXTURES/recurse" .
	microscope record --stack-size 1024 -o cut.msc -- ./recurse 0.5 2>/dev/null
	ends=$(ms-analyze summary --json cut.msc | jq -c '[.stack_ends[] | {(.reason): .samples}] | add')
	cut=$(jq '."stack-copy" // 0' <<<"$ends")
	whole=$(jq '.outermost // 0' <<<"$ends")
	samples=$(ms-analyze summary --json cut.msc | jq .samples)
	[ "$cut" -gt 50 ] || { echo "too few cut stacks: $ends" >&2; false; }
	[ $((cut + whole)) -eq "$samples" ] || { echo "other ends: $ends" >&2; false; }

	# folded: a cut stack's line starts with the frame, once; every other with _start
	ms-export -q --folded -o cut.folded cut.msc
	[ "$(grep -c '\[truncated' cut.folded)" -eq "$(grep -c '^\[truncated: stack-copy\];' cut.folded)" ]
	[ "$(grep '^\[truncated: stack-copy\];' cut.folded | grep -c -v '^\[truncated: stack-copy\];.*\[truncated')" -eq \
		"$(grep -c '^\[truncated' cut.folded)" ]
	[ "$(awk '/^\[truncated: stack-copy\];/ { n += $NF } END { print n + 0 }' cut.folded)" -eq "$cut" ]
	[ "$(awk '/^_start;/ { n += $NF } END { print n + 0 }' cut.folded)" -eq "$whole" ]

	# pprof: read back, its stacks are the same lines (the frame is last, the outermost)
	ms-export -q --pprof -o cut.pb.gz cut.msc
	ms-capture -o back.msc --import pprof cut.pb.gz
	ms-export -q --folded back.msc | cmp - cut.folded

	# speedscope: the frame first in each cut stack, and nowhere else
	ms-export -q --speedscope -o cut.speedscope.json cut.msc
	jq -e --argjson cut "$cut" '
		([.shared.frames | to_entries[] | select(.value.name | startswith("[truncated")) | .key]) as $t |
		($t | length == 1) and
		([.profiles[] | . as $p | range(0; $p.samples | length) |
			select($p.samples[.] | index($t[0]) != null) |
			if $p.samples[.][0] == $t[0] and ($p.samples[.][1:] | index($t[0]) == null)
			then $p.weights[.] else error("cut frame not outermost") end] | add) == $cut' \
		cut.speedscope.json >/dev/null

	# chrome samples form: the frame has no parent, and the cut samples' stacks end there
	ms-export -q --chrome --chrome-form samples -o cut.samples.json cut.msc
	jq -e --argjson cut "$cut" '
		.stackFrames as $f |
		def root(id): if $f[id].parent then root($f[id].parent) else id end;
		([$f[] | select(.name | startswith("[truncated")) | select(.parent)] | length == 0) and
		([.samples[] | select($f[root(.sf)].name == "[truncated: stack-copy]") | .weight] | add) == $cut' \
		cut.samples.json >/dev/null

	# chrome events: each cut event encloses its stack, none encloses it; _start likewise
	ms-export -q --chrome -o cut.events.json cut.msc
	chrome_events cut.events.json | awk -v cut="$cut" '
		$1 != tid { tid = $1; n = 0 }
		{ while (n && stack[n] <= $2 + 0.0005) n--
		  name = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", name)
		  if ((name ~ /^\[truncated/ || name == "_start") && n) { print "enclosed: " $0; bad = 1 }
		  if (name ~ /^\[truncated/) cuts++
		  stack[++n] = $2 + $3 }
		END { if (bad || !cuts) exit 1 }'
}

@test "ms-export, microscope convert: --weight off-cpu and --cause need a capture with off-CPU time, and say so" {
	run --separate-stderr ms-export --folded --weight off-cpu -o out.folded p.msc
	[ "$status" -eq 1 ]
	[ "$stderr" = "ms-export: 'p.msc' has no off-CPU intervals: record it with microscope record --off-cpu" ]
	[ ! -e out.folded ]
	run --separate-stderr ms-export --pprof --cause sleeping -o out.pb.gz p.msc
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'p.msc' has no off-CPU intervals"* ]]
	[ ! -e out.pb.gz ]
	run --separate-stderr microscope convert --weight off-cpu p.msc out.folded
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"'p.msc' has no off-CPU intervals: record it with microscope record --off-cpu"* ]]
	[ ! -e out.folded ]
	# usage: causes by name only, where off-CPU time is written
	run --separate-stderr ms-export --pprof --cause io p.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--cause is a list of preempted, sleeping, blocked or unknown, not 'io'"* ]]
	run --separate-stderr ms-export --chrome --cause sleeping p.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--cause goes with --pprof, or with --weight off-cpu"* ]]
	run --separate-stderr ms-export --pprof --weight off-cpu p.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--weight goes with --folded or --speedscope"* ]]
	run --separate-stderr microscope convert --cause lock p.msc out.pb.gz
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"not 'lock'"* ]]
	assert_no_files '*tmp*'
}

# The pprof of formats-mkcapture --off-cpu: 3 threads, each i (0-based)
# 10 sleeping intervals of (i + 1) * 100 us, 2 blocked of 300 us, 1
# preempted of 50 us, 2 incomplete ones; thread 0 also 5 ms sleeping
# with no switch-out stack. Complete: 12.95 ms; incomplete: nothing.
@test "go tool pprof: off-CPU time is its own sample type, by cause, and leaves the CPU's as it was" {
	command -v go >/dev/null || { echo "go is not installed (scripts/install-deps installs golang-go)" >&2; return 1; }
	export HOME=$BATS_TEST_TMPDIR PPROF_TMPDIR=$BATS_TEST_TMPDIR
	export GOCACHE=$BATS_TEST_TMPDIR/go-cache PPROF_BINARY_PATH=/nonexistent
	"$MS_BUILDDIR/tests/unit/formats-mkcapture" --samples 300 --threads 3 --lines \
		--off-cpu off.pb.gz p.msc
	# pprof opens on the CPU's type
	go tool pprof -top off.pb.gz 2>/dev/null | grep -q -x 'Type: cpu'
	run --separate-stderr go tool pprof -top -sample_index=off-cpu -unit=ns off.pb.gz
	[ "$status" -eq 0 ]
	grep -q -x 'Type: off-cpu' <<<"$output"
	grep -q 'Showing nodes accounting for 12950000ns, 100% of 12950000ns total' <<<"$output"
	# the 5 ms without a switch-out stack stand on a frame of their own
	grep -q -E '^ +5000000ns +[0-9.]+% +[0-9.]+% +5000000ns +[0-9.]+% +\[no stack\]$' <<<"$output"
	# per cause, as labels
	run --separate-stderr go tool pprof -tags -sample_index=off-cpu -unit=ns off.pb.gz
	[ "$status" -eq 0 ]
	grep -q -E '^ +11000000\.0ns \( *[0-9.]+%\): sleeping$' <<<"$output"
	grep -q -E '^ +1800000\.0ns \( *[0-9.]+%\): blocked$' <<<"$output"
	grep -q -E '^ +150000\.0ns \( *[0-9.]+%\): preempted$' <<<"$output"
	# no interval was unknown, and none is called I/O or a lock
	run -1 grep -w -i -E 'unknown|I/O|io|lock|mutex' <<<"$output"
	go tool pprof -top -sample_index=off-cpu -unit=ns -tagfocus=cause=blocked off.pb.gz 2>/dev/null |
		grep -q 'Showing nodes accounting for 1800000ns, 13.90% of 12950000ns total'
	# the CPU samples' types read as ms-export writes them without intervals
	ms-export -q --pprof -o cpu.pb.gz p.msc
	for t in samples cpu; do
		diff -u <(go tool pprof -top -sample_index=$t cpu.pb.gz 2>/dev/null | grep -v '^written by') \
			<(go tool pprof -top -sample_index=$t off.pb.gz 2>/dev/null | grep -v '^written by')
	done
}

# mkstream --jit: process 1000's perf map names the JIT function
# py::spin at 0x7f0000100010, in a perf-map module over
# [0x7f0000100000, 0x7f0000100100); 9 of its 100 samples run there, 8
# with it innermost (one in the kernel under it).
jit_pprof() {
	HOME=$BATS_TEST_TMPDIR PPROF_TMPDIR=$BATS_TEST_TMPDIR GOCACHE=$BATS_TEST_TMPDIR/go-cache \
		PPROF_BINARY_PATH=/nonexistent go tool pprof "$@"
}

@test "go tool pprof: a perf-map module is a mapping over its range, named by its map, its functions named as recorded" {
	command -v go >/dev/null || { echo "go is not installed (scripts/install-deps installs golang-go)" >&2; return 1; }
	"$MS_BUILDDIR/tests/unit/mkstream" --jit | ms-capture -o jit.msc
	ms-export -q --pprof -o jit.pb.gz jit.msc
	run --separate-stderr jit_pprof -raw jit.pb.gz
	[ "$status" -eq 0 ]
	# claiming its functions ([FN]): pprof looks nothing up in the map
	grep -q -x '4: 0x7f0000100000/0x7f0000100100/0x0 /tmp/perf-1000.map  \[FN\]' <<<"$output"
	run --separate-stderr jit_pprof -top -sample_index=samples jit.pb.gz
	[ "$status" -eq 0 ]
	grep -q -E '^ +8 +8\.00% +[0-9.]+% +9 +9\.00% +py::spin:/srv/app\.py$' <<<"$output"
	# folded and speedscope name it from its frame fact too
	[ "$(ms-export -q --folded jit.msc | grep -c 'py::spin:/srv/app.py 1$')" -ge 1 ]
	ms-export -q --speedscope jit.msc | jq -e '[.shared.frames[].name] | index("py::spin:/srv/app.py")' >/dev/null
}

# mkstream --jit-object: process 1000's object "[jit-object 0x55d0c0a02e80]"
# is module 4 over [0x7f2000001000, 0x7f2000001040): jit_leaf at +0x11
# (7 samples innermost, 8 in all), +0x38 in no symbol (5 and 6).
@test "go tool pprof: a jit-object module is a mapping over its range, named by its path, its functions named as recorded" {
	command -v go >/dev/null || { echo "go is not installed (scripts/install-deps installs golang-go)" >&2; return 1; }
	"$MS_BUILDDIR/tests/unit/mkstream" --jit-object | ms-capture -o jo.msc
	ms-export -q --pprof -o jo.pb.gz jo.msc
	run --separate-stderr jit_pprof -raw jo.pb.gz
	[ "$status" -eq 0 ]
	grep -q -x '4: 0x7f2000001000/0x7f2000001040/0x0 \[jit-object 0x55d0c0a02e80\]  \[FN\]' <<<"$output"
	run --separate-stderr jit_pprof -top -sample_index=samples jo.pb.gz
	[ "$status" -eq 0 ]
	grep -q -E '^ +7 +7\.00% +[0-9.]+% +8 +8\.00% +jit_leaf$' <<<"$output"
	grep -q -E '^ +5 +5\.00% +[0-9.]+% +6 +6\.00% +\[jit-object\]\+0x7f2000001038$' <<<"$output"
	# folded and speedscope name them from their frame facts too
	[ "$(ms-export -q --folded jo.msc | grep -c ';jit_leaf [0-9]*$')" -ge 1 ]
	[ "$(ms-export -q --folded jo.msc | grep -c ';\[jit-object\]+0x7f2000001038 [0-9]*$')" -ge 1 ]
	ms-export -q --speedscope jo.msc | jq -e '[.shared.frames[].name] | index("jit_leaf")' >/dev/null
	ms-export -q --speedscope jo.msc | jq -e '[.shared.frames[].name] | index("[jit-object]+0x7f2000001038")' >/dev/null
}

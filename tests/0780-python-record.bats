#!/usr/bin/env bats
# Python stacks end to end (issue 20): `microscope record --python bpf`
# over real interpreters running tests/fixtures/pywork.py, whose call
# structure is known (its docstring), asserting on the profile in each
# look. The pieces have their own tests: the walker (0770), the pairing
# (0765), the splice (0772), the collector (0775), the looks (0915).

# shellcheck disable=SC2154 # output, status: set by bats's run
bats_require_minimum_version 1.5.0
load test_helper
load pywork_helper

setup() {
	require_built microscope ms-analyze ms-export
	cd "$BATS_TEST_TMPDIR" || return
	export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
	WORK=$MS_SRCDIR/tests/fixtures/pywork.py
}

teardown() {
	no_leftover_processes
}

# record CAPTURE VERSION ARGS...: pywork.py ARGS under --python bpf.
record() {
	local cap=$1 py
	py=$(python_of "$2") || return 1
	shift 2
	microscope record --python bpf -o "$cap" -- "$py" "$WORK" "$@" > out.txt 2> record.err ||
		{ cat record.err >&2; return 1; }
	grep -q '^ready ' out.txt
}

# chain_check VERSION: the chain mode's truth in every look.
chain_check() {
	local py_samples named total chain h_self h_loop line share
	record c.msc "$1" chain 1.5
	# Of the samples running the interpreter's loop, those with Python frames.
	ms-export --folded c.msc > mixed.folded 2>/dev/null
	read -r py_samples named < <(awk '/_PyEval_EvalFrameDefault/ { n = $NF; p += n
		if (/pywork\.py:/) k += n } END { print p + 0, k + 0 }' mixed.folded)
	echo "$1: $named of $py_samples samples in the loop have Python frames" >&2
	at_least "$named" "$py_samples" 95
	# The Python look: the script's chain, from its outermost frame in.
	ms-export --folded --look python c.msc > python.folded 2>/dev/null
	total=$(awk '{ n += $NF } END { print n + 0 }' python.folded)
	chain=$(awk -v f="$WORK" 'index($0, "<module> (" f ":1);main (" f ":") == 1 &&
		/;f \([^)]*\);g \([^)]*\);h \([^)]*\)( |;)/ { n += $NF } END { print n + 0 }' python.folded)
	echo "$1: $chain of $total samples run <module> > main > f > g > h" >&2
	at_least "$chain" "$total" 90
	# No interpreter frame is left among Python frames in the Python look
	# (a stack without any, one whose Python frames are unknown, is left
	# whole), none of Python's in the native one.
	run ! grep 'pywork\.py:.*_PyEval_EvalFrameDefault\|_PyEval_EvalFrameDefault.*pywork\.py:' python.folded
	ms-export --folded --look native c.msc > native.folded 2>/dev/null
	run ! grep -q 'pywork\.py:' native.folded
	# Lines: each caller on the line of its call, h spinning in its loop.
	ms-analyze top --by line --look python --json c.msc > lines.json
	for f in main:main-chain f:f g:g; do
		# (a sample may catch main in ready() before the chain, on its line)
		read -r line share < <(jq -r --arg n "${f%%:*}" '[.functions[] | select(.name == $n and
			(.file | endswith("/pywork.py")))] | group_by(.line) | map({line: .[0].line,
			total: (map(.total) | add)}) | (map(.total) | add) as $all | max_by(.total) |
			"\(.line) \(100 * .total / $all | floor)"' lines.json)
		if [ "$line" != "$(mark "${f#*:}")" ] || [ "$share" -lt 95 ]; then
			echo "$1: ${f%%:*} on line $line in $share%, not on $(mark "${f#*:}")" >&2
			return 1
		fi
	done
	h_self=$(jq '[.functions[] | select(.name == "h" and (.file | endswith("/pywork.py"))) | .self] | add' lines.json)
	h_loop=$(jq --argjson l "$(mark h)" '[.functions[] | select(.name == "h" and (.file | endswith("/pywork.py")) and (.line == $l or .line == $l - 1)) | .self] | add' lines.json)
	echo "$1: h on its loop's two lines in $h_loop of $h_self samples" >&2
	at_least "$h_loop" "$h_self" 90
}

@test "Debian's python3.11: the script's functions and lines, in each look" {
	chain_check debian
}

@test "pyenv's 3.11: the script's functions and lines, in each look" {
	chain_check 3.11
}

@test "pyenv's 3.12: the script's functions and lines, in each look" {
	chain_check 3.12
}

@test "pyenv's 3.13: the script's functions and lines, in each look" {
	chain_check 3.13
}

@test "a generator's frame runs inside the frame that iterates it" {
	local total gen
	record g.msc 3.12 gen 1.5
	ms-export --folded --look python g.msc > python.folded 2>/dev/null
	total=$(awk '{ n += $NF } END { print n + 0 }' python.folded)
	gen=$(awk '/;main \([^)]*\);consume \([^)]*\);squares \([^)]*\)( |$)/ { n += $NF }
		END { print n + 0 }' python.folded)
	at_least "$gen" "$total" 80
}

@test "C code called from Python stays where Python called it" {
	local digest native
	record n.msc 3.12 native 1.5
	ms-export --folded --look python n.msc > python.folded 2>/dev/null
	# digest's samples, and those in native code it called (libcrypto's SHA-256)
	read -r digest native < <(awk '/;digest \([^)]*\)/ { n = $NF; d += n
		if (/;digest \([^)]*\);[^;]*libcrypto|;digest \([^)]*\);[^;(]*(sha|SHA|EVP)/) c += n }
		END { print d + 0, c + 0 }' python.folded)
	echo "digest: $digest samples, $native of them in C code it called" >&2
	at_least "$native" "$digest" 50
	ms-export --folded --look native n.msc > native.folded 2>/dev/null
	run ! grep -q 'pywork\.py:' native.folded
}

@test "many threads: each thread's samples name its own function only" {
	local v threads
	for v in 3.12 debian; do
		record t.msc "$v" threads 4 1.5
		ms-export --folded --look python --thread-root t.msc > threads.folded 2>/dev/null
		# thread root -> the spin_I functions its stacks show
		awk '{ split($0, f, ";"); root = f[1]
			while (match($0, /spin_[0-9]+/)) { s = substr($0, RSTART, RLENGTH)
				if (!((root, s) in seen)) { seen[root, s] = 1; n[root]++; name[root] = name[root] " " s }
				$0 = substr($0, RSTART + RLENGTH) } }
			END { for (r in n) print r, n[r], name[r] }' threads.folded > spins.txt
		cat spins.txt >&2
		threads=$(wc -l < spins.txt)
		[ "$threads" -ge 3 ] || { echo "$v: only $threads threads ran spin_I" >&2; return 1; }
		awk '$2 != 1 { print "a thread shows frames of several threads:", $0; bad = 1 } END { exit bad }' spins.txt >&2
	done
}

@test "two functions of one name in two files stay apart" {
	local here there total
	record w.msc 3.13 twins 1.5
	ms-analyze top --look python --json w.msc > top.json
	total=$(jq '.samples' top.json)
	here=$(jq '[.functions[] | select(.name == "step" and (.file | endswith("pywork.py"))) | .self] | add // 0' top.json)
	there=$(jq '[.functions[] | select(.name == "step" and .file == "twin.py") | .self] | add // 0' top.json)
	echo "step: $here in pywork.py, $there in twin.py, of $total" >&2
	at_least "$here" "$total" 25
	at_least "$there" "$total" 25
}

@test "recursion: every level of rec, in order, under main" {
	local total whole
	record r.msc 3.12 recurse 30 1.5
	ms-export --folded --look python r.msc > python.folded 2>/dev/null
	total=$(awk '{ n += $NF } END { print n + 0 }' python.folded)
	# main > rec (31 times: depth 30 to 0) > h, nothing between
	whole=$(awk '/;main \([^)]*\);rec \(/ && /;rec \([^)]*\);h \([^)]*\)( |;)/ {
		s = $0; k = gsub(/;rec \([^)]*\)/, "", s)
		if (k == 31 && s ~ /;main \([^)]*\);h \(/) n += $NF } END { print n + 0 }' python.folded)
	echo "$whole of $total samples run main > rec x31 > h" >&2
	at_least "$whole" "$total" 90
}

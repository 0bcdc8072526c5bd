# shellcheck shell=bash
# Real programs whose stacks run deeper than a few KiB, for
# scripts/stack-completeness and tests/0975-complete-stacks.bats (sourced).
#
#   workload NAME DIR SECONDS
#       sets the array WORKLOAD to the command that runs workload NAME for
#       about SECONDS of this machine's time alone, its input made in DIR
#       (once); returns 1 after a message naming what is missing, or 2
#       when NAME is python and pyenv's python3.11 is absent (said too)
#   WORKLOADS   the names, in order
#
# The commands write to stdout: callers send it to /dev/null.
# shellcheck disable=SC2034 # WORKLOADS and WORKLOAD are for the caller
WORKLOADS=(bzip2 git sqlite python threads)

# pyenv's python3.11 interpreter itself (the shim is a bash script that
# would be profiled first), the newest 3.11 pyenv holds; fails when none.
pyenv_python311() {
	local p found=
	for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11*/bin/python3.11; do
		[ -x "$p" ] && found=$p
	done
	[ -n "$found" ] && echo "$found"
}

workload() {
	local name=$1 dir=$2 seconds=$3 n p top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	mkdir -p "$dir"
	case $name in
	bzip2)
		# Words drawn from a fixed seed, some 17 MB for a second of bzip2 -9:
		# text, so that bzip2 sorts blocks rather than runs.
		command -v bzip2 >/dev/null || { echo "workload bzip2: bzip2 is not installed (scripts/install-deps)" >&2; return 1; }
		n=$(awk -v s="$seconds" 'BEGIN { printf "%d", 3500000 * s }')
		if [ ! -s "$dir/words-$n.txt" ]; then
			awk -v n="$n" 'BEGIN {
				srand(1)
				k = split("the of and a to in is was that for on with as by at from it his " \
					"an were are which be this has or had not but first one their its new " \
					"after who they have her she two been other when there all during into " \
					"school time may years more most only over city some world would where " \
					"later up such used many can state about national out known university " \
					"united then made", w, " ")
				for (i = 0; i < n; i++)
					printf "%s%s", w[int(rand() * k) + 1], (i % 13 == 12 ? "\n" : " ")
			}' > "$dir/words-$n.txt"
		fi
		WORKLOAD=(bzip2 -9 -c "$dir/words-$n.txt")
		;;
	git)
		# git log -p over a clone of this repository, as many times as a
		# second takes (about 0.15 s a pass in 2026), its last 300 commits
		# at most, so that a pass does not grow with the history.
		command -v git >/dev/null || { echo "workload git: git is not installed (scripts/install-deps)" >&2; return 1; }
		if [ ! -d "$dir/repo" ]; then
			git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
				{ echo "workload git: $top is not a git checkout: no history to log" >&2; return 1; }
			git clone -q --no-hardlinks "$top" "$dir/repo" ||
				{ echo "workload git: cannot clone $top into $dir/repo" >&2; return 1; }
		fi
		n=$(awk -v s="$seconds" 'BEGIN { n = int(7 * s + 0.5); print (n < 1 ? 1 : n) }')
		# shellcheck disable=SC2016 # expanded by that shell
		WORKLOAD=(sh -c 'i=0; while [ $i -lt "$1" ]; do git -C "$2" log -p -n 300 || exit; i=$((i + 1)); done' \
			sh "$n" "$dir/repo")
		;;
	sqlite)
		# A recursive query (the Mandelbrot set of SQLite's documentation),
		# read by the shell's .read: main, the dot-command and the input
		# loop hold some 14 KiB of the stack before the library's frames.
		command -v sqlite3 >/dev/null || { echo "workload sqlite: sqlite3 is not installed (scripts/install-deps)" >&2; return 1; }
		n=$(awk -v s="$seconds" 'BEGIN { printf "%.6f", 0.0075 / s }')
		cat > "$dir/mandelbrot-$n.sql" <<EOF
WITH RECURSIVE
  xaxis(x) AS (VALUES(-2.0) UNION ALL SELECT x + 0.005 FROM xaxis WHERE x < 1.2),
  yaxis(y) AS (VALUES(-1.0) UNION ALL SELECT y + $n FROM yaxis WHERE y < 1.0),
  m(iter, cx, cy, x, y) AS (
    SELECT 0, x, y, 0.0, 0.0 FROM xaxis, yaxis
    UNION ALL
    SELECT iter + 1, cx, cy, x * x - y * y + cx, 2.0 * x * y + cy FROM m
     WHERE (x * x + y * y) < 4.0 AND iter < 28
  )
SELECT count(*), sum(iter) FROM m;
EOF
		WORKLOAD=(sqlite3 -batch :memory: ".read $dir/mandelbrot-$n.sql")
		;;
	python)
		# Regular expressions and JSON over documents nested up to 24 deep,
		# walked by Python code that builtins call back (sum, map): each
		# level is a C-level recursion of the interpreter.
		if ! p=$(pyenv_python311); then
			echo "workload python: pyenv's python3.11 is absent (no ${PYENV_ROOT:-$HOME/.pyenv}/versions/3.11*/bin/python3.11)" >&2
			return 2
		fi
		n=$(awk -v s="$seconds" 'BEGIN { n = int(720 * s + 0.5); print (n < 1 ? 1 : n) }')
		cat > "$dir/regexjson.py" <<'EOF'
import json, re, sys

def doc(i, depth):
    d = {"id": i, "name": "item-%d" % i, "tags": ["a%d" % (i % 7), "b%d" % (i % 11)]}
    for k in range(depth):
        d = {"level": k, "child": d, "note": "x" * (k % 5)}
    return d

def walk(v):
    if isinstance(v, dict):
        return sum(walk(x) for x in v.values())
    if isinstance(v, list):
        return sum(map(walk, v))
    return 1

word = re.compile(r"([a-z]+)-(\d+)")
total = 0
for r in range(int(sys.argv[1])):
    docs = [doc(i, 1 + i % 24) for i in range(50)]
    text = json.dumps(docs, sort_keys=True)
    total += walk(json.loads(text))
    total += len(word.sub(lambda m: m.group(2) + m.group(1), text))
    total += sum(1 for _ in re.finditer(r'"level": (\d+)', text))
print(total)
EOF
		WORKLOAD=("$p" "$dir/regexjson.py" "$n")
		;;
	threads)
		# The suite's multithreaded fixture: 8 threads, on stacks of their own.
		p=${MS_BUILDDIR:-$top}/tests/fixtures/fixedwork
		[ -x "$p" ] || { echo "workload threads: $p is not built: make tests/fixtures/fixedwork" >&2; return 1; }
		n=$(awk -v s="$seconds" 'BEGIN { printf "%d", 480000 * s }')
		WORKLOAD=("$p" threads 8 "$n")
		;;
	*)
		echo "workload: no workload '$name' (known: ${WORKLOADS[*]})" >&2
		return 1
		;;
	esac
}

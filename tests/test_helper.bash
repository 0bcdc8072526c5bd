# Shared setup for microscope's bats tests: where the build and the fixtures
# are, and checks that every test leaves no process behind.

: "${MS_BUILDDIR:?run through make check, or set MS_BUILDDIR to the build directory}"
# shellcheck disable=SC2034 # for the bats files that load this helper
FIXTURES=$MS_BUILDDIR/tests/fixtures
PATH=$MS_BUILDDIR:$PATH
# Caches go with the test file's folder, never into the real ~/.cache (a
# test that sets XDG_CACHE_HOME or HOME itself keeps its own).
export XDG_CACHE_HOME="${BATS_FILE_TMPDIR:?}/cache"

# Fail unless $1 (a number) is within $3 of $2.
assert_near() {
	local actual=$1 expect=$2 tolerance=$3 what=${4:-value}
	if ! awk -v a="$actual" -v e="$expect" -v t="$tolerance" \
		'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= t) }'; then
		echo "$what: $actual is not within $tolerance of $expect" >&2
		return 1
	fi
}

# Wait up to $2 seconds (default 10) for process $1 to be gone.
wait_gone() {
	local pid=$1 tries=$(( ${2:-10} * 10 ))
	while kill -0 "$pid" 2>/dev/null && [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	! kill -0 "$pid" 2>/dev/null
}

# Fail, naming them, when files match the glob pattern $1 (quoted by the
# caller: this function expands it): what a run must not leave behind, such
# as the temporaries FILE.tmp-XXXXXX (libcommon/util/publish.c).
assert_no_files() {
	local left
	if left=$(compgen -G "$1"); then
		echo "left behind, matching '$1':" >&2
		echo "$left" >&2
		return 1
	fi
}

# Processes whose command line mentions this test's temporary directory:
# anything the test started with files there must be gone at the end.
leftover_processes() {
	pgrep -f -- "$BATS_TEST_TMPDIR" || true
}

# For teardown(): kill what a test left running under its folder, and fail naming it.
no_leftover_processes() {
	local pids
	pids=$(leftover_processes)
	# shellcheck disable=SC2086 # one word per process id
	[ -z "$pids" ] || { kill -9 $pids 2>/dev/null; echo "left behind: $pids" >&2; return 1; }
}

# Fail (never skip) when a program or fixture the build makes is missing:
# under make check everything is built, so a missing one is a build defect.
require_built() {
	local what
	for what in "$@"; do
		if [[ "$what" == */* ]]; then
			[ -x "$what" ] && continue
		else
			command -v "$what" >/dev/null && continue
		fi
		echo "'$what' is not built: run make check (or make) in the build directory" >&2
		return 1
	done
}

# Serve folder $1 over HTTP on 127.0.0.1 as a debuginfod server would
# (buildid/ID/debuginfo), with Debian's python3; sets SERVER_PID (the test's
# teardown kills it) and DEBUGINFOD_PORT. Fails when libdebuginfod.so.1, which
# ms-debuginfod-find loads, is missing.
start_debuginfod_server() {
	local dir=$1 py=/usr/bin/python3 portfile
	require_built "$py"
	ldconfig -p | grep -q 'libdebuginfod.so.1 ' || {
		echo "libdebuginfod.so.1 is not installed: run scripts/install-deps" >&2
		return 1
	}
	portfile=$(mktemp -u "$BATS_TEST_TMPDIR/port.XXXXXX")
	(cd "$dir" && exec "$py" -c '
import http.server, os, socketserver, sys
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
with socketserver.TCPServer(("127.0.0.1", 0), H) as s:
    open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    s.serve_forever()
' "$portfile") 3>&- &
	# shellcheck disable=SC2034 # for the calling test and its teardown
	SERVER_PID=$!
	for _ in $(seq 50); do [ -s "$portfile" ] && break; sleep 0.1; done
	[ -s "$portfile" ] || { echo "the debuginfod server did not start" >&2; return 1; }
	# shellcheck disable=SC2034 # for the calling test
	DEBUGINFOD_PORT=$(cat "$portfile")
}

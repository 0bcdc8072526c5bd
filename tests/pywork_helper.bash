# shellcheck shell=bash
# Helpers of the tests that record tests/fixtures/pywork.py on real
# interpreters (0780 --python bpf, 0790 --python snapshot): load it after
# test_helper, with WORK set to pywork.py's path.

PY311=/usr/bin/python3.11
PYENV=/root/.pyenv/versions

# python_of VERSION: the interpreter's path ("debian" is Debian's 3.11); a
# missing one fails the test: every one named here is on the machine.
python_of() {
	local py
	case $1 in
	debian) py=$PY311 ;;
	3.11) py=$PYENV/3.11.7/bin/python3.11 ;;
	3.12) py=$PYENV/3.12.1/bin/python3.12 ;;
	3.13) py=$PYENV/3.13.0/bin/python3.13 ;;
	esac
	[ -x "$py" ] || { echo "no interpreter at $py (scripts/install-deps installs it)" >&2; return 1; }
	echo "$py"
}

# mark NAME: the line of pywork.py marked "# mark-NAME".
mark() {
	grep -n "# mark-$1\$" "$WORK" | cut -d: -f1
}

# at_least A B PERCENT: A is at least PERCENT % of B (and B is not 0).
at_least() {
	[ "$2" -gt 0 ] || { echo "nothing to compare ($1 of $2)" >&2; return 1; }
	[ "$(( $1 * 100 ))" -ge "$(( $2 * $3 ))" ] || { echo "$1 is under $3% of $2" >&2; return 1; }
}

#!/usr/bin/env bats
# microscope serve against the real server on a free loopback port (curl):
# its answers are ms-analyze --json's bytes, its bounds hold (traversal,
# long URLs, bad queries, many clients), it refuses a bad capture before
# listening, says when the port is taken, and ends cleanly on a signal.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	: "${MS_BUILDDIR:?set MS_BUILDDIR to the build directory}"
	require_built microscope ms-analyze ms-capture "$MS_BUILDDIR/tests/unit/mkstream" curl
	mkdir "$BATS_TEST_TMPDIR/work"
	cd "$BATS_TEST_TMPDIR/work" || return
	SERVER_PID=
}

teardown() {
	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -KILL "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	no_leftover_processes
}

# A capture of N synthetic samples (burn_60/30/10 in those proportions).
make_capture() {
	"$MS_BUILDDIR/tests/unit/mkstream" --samples "${2:-1000}" >"$1.msr"
	ms-capture -o "$1" "$1.msr"
}

# Start microscope serve on a free port with these arguments (captures by
# their whole path, so that the leftover check finds the server by the
# test's folder), with PATH=$SERVE_PATH when that is set; URL is what it
# printed on stdout, PORT its port.
start_server() {
	rm -f "$BATS_TEST_TMPDIR/url"
	env ${SERVE_PATH:+PATH="$SERVE_PATH"} "$MS_BUILDDIR/microscope" serve --port 0 "$@" \
		>"$BATS_TEST_TMPDIR/url" 2>"$BATS_TEST_TMPDIR/err" &
	SERVER_PID=$!
	local tries=100
	while [ ! -s "$BATS_TEST_TMPDIR/url" ] && [ "$tries" -gt 0 ]; do
		kill -0 "$SERVER_PID" 2>/dev/null || { cat "$BATS_TEST_TMPDIR/err" >&2; return 1; }
		sleep 0.1
		tries=$((tries - 1))
	done
	URL=$(cat "$BATS_TEST_TMPDIR/url")
	[[ "$URL" =~ ^http://127\.0\.0\.1:[0-9]+/$ ]]
	PORT=${URL##*:}
	PORT=${PORT%/}
}

# GET path (with its query) into file $2; the status on stdout.
get() {
	curl -s -g --path-as-is --max-time 20 -o "$2" -w '%{http_code}' "$URL${1#/}"
}

@test "the API's answers are ms-analyze --json's bytes: summary, top, tree, callers, timeline with a time range, diff" {
	make_capture a.msc 2000
	make_capture b.msc 3000
	start_server "$PWD/a.msc" "$PWD/b.msc"
	# stdout is the URL alone; stderr says what is served
	[ "$(wc -l <"$BATS_TEST_TMPDIR/url")" -eq 1 ]
	grep -qx "microscope: serving 2 captures at $URL" "$BATS_TEST_TMPDIR/err"

	[ "$(get '/api/summary?capture=1' got)" = 200 ]
	ms-analyze summary --json b.msc >want
	cmp got want

	[ "$(get '/api/view/top?capture=0&limit=3&sort=total' got)" = 200 ]
	ms-analyze top --json --limit 3 --sort total a.msc >want
	cmp got want
	grep -q '"functions":\[{"name":"[^"]*",.*"name":"burn_60"' got

	[ "$(get '/api/view/tree?capture=1&hide-below=5' got)" = 200 ]
	ms-analyze tree --json --hide-below 5 b.msc >want
	cmp got want

	[ "$(get '/api/view/callers?capture=0&function=burn_30' got)" = 200 ]
	ms-analyze callers burn_30 --json a.msc >want
	cmp got want

	[ "$(get '/api/view/timeline?capture=1&time=0.5s..1500ms&buckets=10' got)" = 200 ]
	ms-analyze timeline --json --time 0.5s..1500ms --buckets 10 b.msc >want
	cmp got want
	# the range changed the answer: it is not the whole timeline
	ms-analyze timeline --json --buckets 10 b.msc >whole
	run cmp -s got whole
	[ "$status" -ne 0 ]

	[ "$(get '/api/diff?a=0&b=1&sort=total&limit=3' got)" = 200 ]
	ms-analyze diff --json --sort total --limit 3 a.msc b.msc >want
	cmp got want

	# a thread name with a space and a regex, percent-encoded ('+' is a space too)
	[ "$(get '/api/view/top?focus=burn_%5B36%5D0&thread=no+such' got)" = 200 ]
	ms-analyze top --json --focus 'burn_[36]0' --thread 'no such' a.msc >want
	cmp got want

	[ "$(get '/api/captures' got)" = 200 ]
	grep -q '^{"captures":\[{"id":0,"name":"a.msc","samples":2000,.*{"id":1,"name":"b.msc","samples":3000,' got
	# the page: HTML, and its assets with their types
	[ "$(curl -s -o page -w '%{http_code} %{content_type}' "$URL")" = "200 text/html; charset=utf-8" ]
	grep -qi '<html' page
	grep -o 'assets/[A-Za-z0-9._-]*\.js' page | head -1 >js
	if [ -s js ]; then
		[ "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$URL$(cat js)")" = \
			"200 text/javascript; charset=utf-8" ]
	fi
}

@test "answers carry an ETag and are revalidated: 304 with no body; HEAD has no body" {
	make_capture a.msc
	start_server "$PWD/a.msc"
	curl -s -D headers -o body "${URL}api/view/top"
	grep -qi '^etag: "[0-9a-f]\{16\}"' headers
	grep -qi '^content-type: application/json' headers
	etag=$(grep -i '^etag:' headers | cut -d' ' -f2 | tr -d '\r')
	[ "$(curl -s -o again -w '%{http_code}' -H "If-None-Match: $etag" "${URL}api/view/top")" = 304 ]
	[ ! -s again ]
	[ "$(curl -s -o again -w '%{http_code}' -H 'If-None-Match: "0000000000000000"' "${URL}api/view/top")" = 200 ]
	cmp body again
	[ "$(curl -s -I -o head -w '%{http_code}' "${URL}api/view/top")" = 200 ]
	grep -qi "^content-length: $(wc -c <body)" head
}

@test "no request reaches the file system: traversal attempts are 404" {
	make_capture a.msc
	start_server "$PWD/a.msc"
	for path in /etc/passwd /../../../../etc/passwd /assets/../index.html \
		/assets/../../../etc/passwd '/%2e%2e/%2e%2e/etc/passwd' '/assets/%2e%2e/index.html' \
		'/assets/%2e%2e%2f%2e%2e%2fetc%2fpasswd' '/assets/..%2f..%2fetc/passwd' \
		'/%2fetc%2fpasswd' /index.html /api /api/nope /api/view/nope '/api/captures%00x' \
		/assets/ "/assets/$(basename "$BATS_TEST_TMPDIR")" /work/a.msc; do
		[ "$(get "$path" got)" = 404 ] || { echo "$path: not 404" >&2; cat got >&2; return 1; }
		grep -q '^{"error":"no such [a-z]*: ' got
		run ! grep -q 'root:' got
	done
}

@test "a request over 8192 bytes is 414, a bad query 400 with ms-analyze's message, another method 405, a body 413" {
	make_capture a.msc
	start_server "$PWD/a.msc"
	long=$(head -c 9000 /dev/zero | tr '\0' a)
	[ "$(get "/api/view/top?focus=$long" got)" = 414 ]
	grep -q '"error":"the path and query are over 8192 bytes"' got
	# just under the bound is answered
	[ "$(get "/api/view/top?focus=$(head -c 8100 /dev/zero | tr '\0' a)" got)" = 200 ]

	[ "$(get '/api/view/top?limit=x' got)" = 400 ]
	run --separate-stderr ms-analyze top --limit x a.msc
	[ "$status" -eq 2 ]
	# shellcheck disable=SC2154 # stderr: set by bats's run --separate-stderr
	want=$(head -1 <<<"$stderr")
	[ "$(cat got)" = "{\"error\":\"${want#ms-analyze: }\"}" ]

	[ "$(get '/api/view/top?look=sideways' got)" = 400 ]
	run --separate-stderr ms-analyze top --look sideways a.msc
	want=$(head -1 <<<"$stderr")
	[ "$(cat got)" = "{\"error\":\"${want#ms-analyze: }\"}" ]

	[ "$(get '/api/view/top?capture=1' got)" = 400 ]
	grep -q '"error":"capture wants a capture number from 0 to 0' got
	[ "$(get '/api/view/top?by=line&by=module' got)" = 400 ]
	grep -q "given twice" got
	[ "$(get '/api/view/top?buckets=4' got)" = 400 ]
	grep -q '"error":"--buckets applies to timeline, not top"' got
	[ "$(get '/api/view/top?nonsense=1' got)" = 400 ]
	grep -q "unknown parameter 'nonsense'" got
	[ "$(get "/api/view/top?$(for i in $(seq 65); do printf 'tid=%d&' "$i"; done)" got)" = 400 ]
	grep -q '"error":"more than 64 parameters"' got

	[ "$(curl -s -o got -w '%{http_code}' -X POST "${URL}api/captures")" = 405 ]
	grep -q '"error":"POST is not allowed' got
	[ "$(curl -s -o got -w '%{http_code}' -X GET --data-binary 'x=1' "${URL}api/captures")" = 413 ]
	# and it still answers
	[ "$(get /api/captures got)" = 200 ]
}

@test "64 clients at once are all answered or cleanly refused within 30 s, and the server answers after" {
	make_capture a.msc 20000
	start_server "$PWD/a.msc"
	start=$(date +%s)
	pids=()
	for i in $(seq 64); do
		curl -s --max-time 25 -o "body.$i" -w '%{http_code}' "${URL}api/view/tree?capture=0" \
			>"code.$i" 2>/dev/null &
		pids+=($!)
	done
	# curl's own status says nothing here: its code does
	wait "${pids[@]}" || true
	elapsed=$(( $(date +%s) - start ))
	[ "$elapsed" -lt 30 ]
	answered=0
	for i in $(seq 64); do
		code=$(cat "code.$i")
		case "$code" in
		200) answered=$((answered + 1)); [ -s "body.$i" ] ;;
		000) ;;		# refused: closed at once, over the bound
		*) echo "client $i: $code" >&2; return 1 ;;
		esac
	done
	[ "$answered" -ge 32 ]
	[ "$(get /api/view/top got)" = 200 ]
	kill -0 "$SERVER_PID"
}

@test "32 idle connections fill the server: the next is closed at once; after 10 s idle they are closed and it answers" {
	make_capture a.msc
	start_server "$PWD/a.msc"
	fds=()
	for _ in $(seq 32); do
		exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
		fds+=("$fd")
	done
	sleep 0.5
	run curl -s --max-time 5 -o got -w '%{http_code}' "${URL}api/captures"
	[ "$output" = 000 ]
	# not a wait for the 5 s: closed at once
	[ "$status" -eq 52 ] || [ "$status" -eq 56 ]
	sleep 11
	[ "$(get /api/captures got)" = 200 ]
	for fd in "${fds[@]}"; do exec {fd}>&-; done
}

@test "a capture that fails validation is refused at start: exit 1, nothing served" {
	make_capture a.msc
	head -c 100 a.msc >cut.msc
	printf 'not a capture at all' >text.msc
	for bad in cut.msc text.msc missing.msc; do
		# bounded: a server that took it would serve until killed
		run --separate-stderr timeout 10 microscope serve --port 0 a.msc "$bad"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[[ "$stderr" == *"microscope: '$bad' is refused: nothing is served"* ]]
		[[ "$stderr" != *serving* ]]
	done
}

@test "a port in use: exit 4 with a message naming it" {
	make_capture a.msc
	start_server "$PWD/a.msc"
	run --separate-stderr microscope serve --port "$PORT" a.msc
	[ "$status" -eq 4 ]
	[ -z "$output" ]
	[ "$stderr" = "microscope: port $PORT on 127.0.0.1 is in use: stop what holds it, or serve on another with --port N (0: any free port)" ]
}

@test "SIGINT and SIGTERM end it with 0 and nothing left" {
	make_capture a.msc
	for sig in INT TERM; do
		start_server "$PWD/a.msc"
		# a connection open when the signal comes does not hold it up
		curl -s --max-time 20 "${URL}api/view/top" >/dev/null
		kill -"$sig" "$SERVER_PID"
		# within a bound (a background job of a script ignores SIGINT unless it waits for it)
		wait_gone "$SERVER_PID" 10
		status=0
		wait "$SERVER_PID" || status=$?
		[ "$status" -eq 0 ]
		[ -z "$(leftover_processes)" ]
		run curl -s --max-time 5 "${URL}api/captures"
		[ "$status" -ne 0 ]
	done
}

@test "--listen 0.0.0.0 warns that anyone who can reach it can read the profile" {
	make_capture a.msc
	start_server --listen 0.0.0.0 "$PWD/a.msc"
	grep -q "^microscope: warning: --listen 0.0.0.0: anyone who can reach this address can read the profile" \
		"$BATS_TEST_TMPDIR/err"
	[ "$(get /api/captures got)" = 200 ]
	run --separate-stderr microscope serve --listen nowhere a.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--listen wants a numeric IPv4 or IPv6 address"* ]]
}

@test "the loopback server answers only for a loopback Host (no other site's page reads it)" {
	make_capture a.msc
	start_server "$PWD/a.msc"
	[ "$(curl -s -o got -w '%{http_code}' -H 'Host: attacker.example' "${URL}api/captures")" = 421 ]
	[ "$(curl -s -o got -w '%{http_code}' -H "Host: localhost:$PORT" "${URL}api/captures")" = 200 ]
}

@test "--open runs xdg-open on the URL, and says so when there is none" {
	make_capture a.msc
	mkdir bin
	# shellcheck disable=SC2016 # $1 is the script's
	printf '#!/bin/sh\necho "$1" >"%s/opened"\n' "$PWD" >bin/xdg-open
	chmod +x bin/xdg-open
	SERVE_PATH="$PWD/bin:$PATH" start_server --open "$PWD/a.msc"
	for _ in $(seq 50); do [ -s opened ] && break; sleep 0.1; done
	[ "$(cat opened)" = "$URL" ]
	kill -INT "$SERVER_PID"
	wait "$SERVER_PID"

	mkdir empty
	SERVE_PATH="$PWD/empty" start_server --open "$PWD/a.msc"
	grep -q "^microscope: warning: --open: xdg-open is not installed (Debian's package xdg-utils has it): open $URL in a browser yourself" \
		"$BATS_TEST_TMPDIR/err"
	[ "$(get /api/captures got)" = 200 ]
}

@test "microscope serve --help, and its usage errors" {
	run --separate-stderr microscope serve --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "usage: microscope serve [--port N] [--listen ADDR] [--open] CAPTURE..." ]]
	for opt in --port --listen --open; do
		[[ "$output" == *"$opt"* ]]
		grep -q -F -- "${opt//-/\\-}" "${MS_SRCDIR:-$BATS_TEST_DIRNAME/..}/man/microscope.1"
	done
	run --separate-stderr microscope serve
	[ "$status" -eq 2 ]
	[[ "$stderr" == "microscope: which captures? give one or more .msc files"* ]]
	run --separate-stderr microscope serve --port 65536 x.msc
	[ "$status" -eq 2 ]
	[[ "$stderr" == "microscope: --port wants a port from 0 to 65535 (0: any free port), not '65536'"* ]]
	run --separate-stderr microscope --help
	[[ "$output" == *"serve "* ]]
}

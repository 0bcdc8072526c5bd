#!/usr/bin/env bats
# The page of microscope serve in a real browser: Debian's chromium,
# headless, driven by playwright-core (tests/browser/page-test.mjs, which
# never lets a tool download a browser of its own). The fixture's truth:
# burn spends 60/30/10 % in burn_60/burn_30/burn_10 under run; every
# number the page shows must be the one ms-analyze --json gives for the
# same query. npm installs tests/browser/package-lock.json once per run
# of this file. Each page's screenshot is kept under the test's folder,
# and copied to $MS_TEST_ARTIFACTS/0965-web when that is set.
# Named .bats.pending (out of make check) until `microscope serve` is on
# main: rename it to 0965-web.bats when the server lands.

load test_helper
bats_require_minimum_version 1.5.0

CHROMIUM=${MS_CHROMIUM:-/usr/bin/chromium}

setup_file() {
	local d=$BATS_FILE_TMPDIR
	cp "$FIXTURES/burn" "$d/"
	microscope record -o "$d/burn.msc" -- "$d/burn" 1 2>"$d/record.log"
	microscope record -o "$d/burn2.msc" -- "$d/burn" 0.5 2>>"$d/record.log"
	mkdir -p "$d/node" "$d/home"
	if ! command -v npm >/dev/null; then
		echo "npm is not installed (scripts/install-deps installs nodejs and npm)" > "$d/node/why"
	else
		cp "$MS_SRCDIR"/tests/browser/package.json "$MS_SRCDIR"/tests/browser/package-lock.json \
			"$MS_SRCDIR"/tests/browser/page-test.mjs "$d/node/"
		if (cd "$d/node" && HOME="$d/home" npm ci --no-audit --no-fund --ignore-scripts) >"$d/node/npm.log" 2>&1; then
			touch "$d/node/ok"
		else
			echo "npm ci of tests/browser failed (no registry?): $(tail -n 3 "$d/node/npm.log" | tr '\n' ' ')" > "$d/node/why"
		fi
	fi
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	cp "$BATS_FILE_TMPDIR"/burn.msc "$BATS_FILE_TMPDIR"/burn2.msc .
	export HOME=$BATS_FILE_TMPDIR/home
	[ -f "$BATS_FILE_TMPDIR/node/ok" ] || skip "$(cat "$BATS_FILE_TMPDIR/node/why")"
	[ -x "$CHROMIUM" ] || {
		echo "$CHROMIUM is missing: the browser tests need Debian's chromium (scripts/install-deps installs it)" >&2
		return 1
	}
	SERVER_PID=
}

teardown() {
	if [ -n "${SERVER_PID:-}" ]; then
		kill -INT "$SERVER_PID" 2>/dev/null || true
		wait_gone "$SERVER_PID" 10 || kill -9 "$SERVER_PID" 2>/dev/null || true
	fi
	if [ -n "${MS_TEST_ARTIFACTS:-}" ] && compgen -G "$BATS_TEST_TMPDIR/shots/*.png" >/dev/null; then
		mkdir -p "$MS_TEST_ARTIFACTS/0965-web"
		cp "$BATS_TEST_TMPDIR"/shots/*.png "$MS_TEST_ARTIFACTS/0965-web/"
	fi
	no_leftover_processes
}

# microscope serve on a free port of 127.0.0.1 over the captures given;
# sets SERVER_PID and URL (the line it prints on stdout).
serve() {
	microscope serve --port 0 "$@" >"$BATS_TEST_TMPDIR/url" 2>"$BATS_TEST_TMPDIR/serve.log" 3>&- &
	SERVER_PID=$!
	local tries=100
	while [ ! -s "$BATS_TEST_TMPDIR/url" ] && [ "$tries" -gt 0 ]; do
		kill -0 "$SERVER_PID" 2>/dev/null || { cat "$BATS_TEST_TMPDIR/serve.log" >&2; return 1; }
		sleep 0.1
		tries=$((tries - 1))
	done
	URL=$(head -n 1 "$BATS_TEST_TMPDIR/url")
	[[ "$URL" == http://127.0.0.1:*/ ]] || { echo "serve printed '$URL'" >&2; return 1; }
}

# Run page-test.mjs SCENARIO on $URL; its JSON in $BATS_TEST_TMPDIR/page.json.
page() {
	mkdir -p "$BATS_TEST_TMPDIR/shots"
	TMPDIR=$BATS_TEST_TMPDIR NODE_PATH=$BATS_FILE_TMPDIR/node/node_modules MS_CHROMIUM=$CHROMIUM \
		node "$BATS_FILE_TMPDIR/node/page-test.mjs" "$1" "$URL" "$BATS_TEST_TMPDIR/shots" \
		>"$BATS_TEST_TMPDIR/page.json" 3>&-
	cat "$BATS_TEST_TMPDIR/page.json"
	# the page showed no error and logged none
	[ "$(jq -r '.error' page.json)" = "" ]
	[ "$(jq -r '.logs | length' page.json)" = 0 ]
}

@test "the flame graph's widest child of main is burn_60 with top's percentage; a click shows its callers, a double-click zooms" {
	serve burn.msc
	page flame
	[ "$(jq -r .parent page.json)" = run ]
	[ "$(jq -r .widest page.json)" = burn_60 ]
	# wider than burn_30 by the fixture's 2:1, drawn from the tree's totals
	jq -e '.widest_width > 1.5 * .next_width' page.json
	# its width is its share of its parent's, to the pixel (laid out, not re-counted)
	jq -e '(.widest_width - .parent_width * .widest_total / .parent_total) | fabs < 1' page.json
	want=$(ms-analyze top --json burn.msc | jq -r '.functions[] | select(.name == "burn_60") | .total_percent')
	[ -n "$want" ]
	[ "$(jq -r .total_percent page.json)" = "$want" ]
	[ "$(jq -r .shown_percent page.json)" = "$want%" ]
	[ "$(jq -r .widest_total page.json)" = "$(ms-analyze tree --json burn.msc |
		jq '[.. | objects | select(.name? == "burn_60")][0].total')" ]
	# the click: burn_60 selected, its callers from it outwards, as ms-analyze says
	[ "$(jq -r .name page.json)" = burn_60 ]
	[ "$(jq -r .tab page.json)" = callers ]
	[ "$(jq -c '.callers[0:3]' page.json)" = "$(ms-analyze callers burn_60 --json burn.msc |
		jq -c '[.root.name, .root.children[0].name, .root.children[0].children[0].name]')" ]
	[ "$(jq -r '.callers[1]' page.json)" = run ]
	# a double-click zoomed into burn_30 (its path under run), drawn full width; Esc unzoomed
	[ "$(jq -r '.zoom.path[-2:] | join(" ")' page.json)" = "run burn_30" ]
	jq -e '.zoom.full - .zoom.width < 1 and .zoom.after_escape == ""' page.json
	[ -s shots/flame.png ] && [ -s shots/flame-callers.png ] && [ -s shots/flame-wide.png ] && [ -s shots/flame-zoom.png ]
}

@test "a time range dragged in the timeline changes the top table to ms-analyze top --time's" {
	serve burn.msc
	page time
	range=$(jq -r .time page.json)
	[[ "$range" =~ ^[0-9]+ns\.\.[0-9]+ns$ ]]
	want=$(ms-analyze top --time "$range" --json burn.msc)
	all=$(ms-analyze top --json burn.msc)
	# the table's selection: the whole capture before, the range's after
	[[ "$(jq -r .before.head page.json)" == "burn.msc: $(jq .total <<<"$all") samples selected of "* ]]
	[[ "$(jq -r .after.head page.json)" == "burn.msc: $(jq .total <<<"$want") samples selected of "* ]]
	[ "$(jq .total <<<"$want")" -lt "$(jq .total <<<"$all")" ]
	[ "$(jq .total <<<"$want")" -gt 0 ]
	# every row as ms-analyze gives it, in its order
	[ "$(jq -c .after.rows page.json)" = "$(jq -c '[.functions[] |
		[.name, .module, "\(.self)", "\(.self_percent)%", "\(.total)", "\(.total_percent)%"]]' <<<"$want")" ]
	[ "$(jq -c .before.rows page.json)" != "$(jq -c .after.rows page.json)" ]
	[ -s shots/time.png ]
}

@test "two captures loaded: the diff table is ms-analyze diff's, red and blue" {
	serve burn.msc burn2.msc
	page diff
	[ "$(jq -r .tab page.json)" = diff ]
	[[ "$(jq -r .title page.json)" == *"red grew, blue shrank"* ]]
	[ "$(jq -r '.rows | length' page.json)" -gt 2 ]
	[ "$(jq -c .rows page.json)" = "$(ms-analyze diff --json burn.msc burn2.msc | jq -c '[.functions[] |
		[.name, .status, "\(.a_self)", "\(.a_total)", "\(.b_self)", "\(.b_total)",
		 (if .delta > 0 then "+\(.delta)" else "\(.delta)" end),
		 (if .change_points > 0 then "+\(.change_points)" else "\(.change_points)" end)]]')" ]
	[[ "$(jq -r .hash page.json)" == *"b=1"* ]]
	[ -s shots/diff.png ]
}

@test "a deep link restores the view; / searches and Esc clears the search" {
	serve burn.msc
	MS_LINK='#fn=run&tab=callees&time=0.1s..0.6s&mode=icicle&focus=burn' page link
	jq -e '.state.fn == "run" and .state.tab == "callees" and .state.mode == "icicle" and .state.focus == "burn" and .state.time == "0.1s..0.6s"' page.json
	jq -e '.controls.time == "0.1s..0.6s" and .controls.focus == "burn" and .controls.mode == "icicle" and .controls.tab == "callees"' page.json
	[ "$(jq -r .detail page.json)" = run ]
	# the callees the page shows: ms-analyze's for the same query
	want=$(ms-analyze callees run --time 0.1s..0.6s --focus burn --json burn.msc)
	[ "$(jq -c '.callees[0:2]' page.json)" = "$(jq -c '[.root.name, .root.children[0].name]' <<<"$want")" ]
	[ "$(jq -r '.callees[1]' page.json)" = burn_60 ]
	[ "$(jq -r .search_focus page.json)" = search ]
	[ "$(jq -c .matched page.json)" = '["burn_10"]' ]
	jq -e '.cleared.q == "" and .cleared.matched == 0' page.json
	[ -s shots/link.png ] && [ -s shots/link-search.png ]
}

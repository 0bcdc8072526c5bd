# shellcheck shell=bash
# The golden views of a saved stream (sourced by tests/golden/regen and
# tests/0950-golden.bats): golden_views STREAM DEBUGDIR OUTDIR writes into
# OUTDIR one file per view, each made by the stages from the stream alone
# (plus the module files in DEBUGDIR, found by build id). Stops at the
# first stage that fails.
golden_views() {
	local stream=$1 dbg=$2 out=$3 name
	name=$(basename "$stream" .msr)
	ms-decode "$stream" | ms-unwind --debug-dir "$dbg" | ms-symbolize --debug-dir "$dbg" |
		ms-capture -o "$out/$name.msc" || return 1
	ms-decode "$stream" | ms-unwind --unwind fp --debug-dir "$dbg" |
		ms-symbolize --debug-dir "$dbg" | ms-capture -o "$out/$name-fp.msc" || return 1
	ms-capture --dump "$out/$name.msc" > "$out/$name.dump.msr" || return 1
	local view
	for view in summary top tree problems; do
		ms-analyze "$view" "$out/$name.msc" > "$out/$name.$view.txt" || return 1
		ms-analyze "$view" --json "$out/$name.msc" > "$out/$name.$view.json" || return 1
	done
	ms-analyze tree "$out/$name-fp.msc" > "$out/$name-fp.tree.txt" || return 1
	ms-export --folded "$out/$name.msc" > "$out/$name.folded" 2>/dev/null || return 1
	ms-export --pprof "$out/$name.msc" > "$out/$name.pb.gz" 2>/dev/null || return 1
	ms-export --speedscope "$out/$name.msc" > "$out/$name.speedscope.json" 2>/dev/null || return 1
	ms-export --chrome "$out/$name.msc" > "$out/$name.chrome.json" 2>/dev/null || return 1
}

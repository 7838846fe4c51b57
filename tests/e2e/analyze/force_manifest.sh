#!/usr/bin/env bash
# --force replaces only what profopt wrote: a report directory is marked by its
# .profopt-report manifest; a directory without one is refused (exit 2, one line naming it)
# and nothing in it is touched; in a report directory the user's other files stay; a failed
# run leaves the earlier report as it was.
set -u
bin=$1
work=$(mktemp -d /tmp/profopt-force.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

no_staging() { ls -a "$work" | grep -q '\.profopt-' && fail "a staging directory was left: $(ls -a "$work")" || ok "no staging directory left"; }
# snapshot DIR: every file below DIR with its checksum, sorted.
snapshot() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha1sum); }

"$bin/profopt-record" -o "$work/trace" -- "$bin/profopt-sim" --workers 1 --steps 25 \
	--load-ms 1 --forward-ms 1 --gpu-ms 1 --kernels 2 >/dev/null 2>&1 || { echo "FAIL record"; exit 1; }

# Another tool's directory that happens to hold a summary.json: refused even with --force.
mkdir -p "$work/theirs/sub"
echo '{"tool": "not profopt"}' >"$work/theirs/summary.json"
echo "my notes" >"$work/theirs/notes.txt"
echo "data" >"$work/theirs/sub/data.csv"
snapshot "$work/theirs" >"$work/theirs.before"
expect_exit 2 "--force into a directory without a manifest" "$work/trace" -o "$work/theirs" --force
contains "$work/err" "$work/theirs" "the error names the directory"
contains "$work/err" "no .profopt-report manifest" "the error gives the cause"
snapshot "$work/theirs" | cmp -s - "$work/theirs.before" && ok "their files are untouched" ||
	fail "their files changed: $(ls -la "$work/theirs")"
no_staging

# A first report is marked by a manifest listing every file it wrote.
expect_exit 0 "first report" "$work/trace" -o "$work/report"
report_files=$( (cd "$work/report" && find . -type f ! -name .profopt-report | sed 's|^\./||' | sort))
listed=$(tail -n +2 "$work/report/.profopt-report")
[ "$(head -n 1 "$work/report/.profopt-report")" = "profopt-report/1" ] && [ "$listed" = "$report_files" ] &&
	ok "the manifest lists the $(echo "$listed" | wc -l) files of the report" ||
	fail "manifest and report differ: $listed / $report_files"

# The user's own files in a report directory stay; the report is replaced.
echo "keep me" >"$work/report/notes.txt"
mkdir -p "$work/report/mine" && echo "also mine" >"$work/report/mine/plot.py"
echo "stale" >>"$work/report/timeline.json" # a report file: replaced
expect_exit 0 "--force with the user's files beside the report" "$work/trace" -o "$work/report" --force
[ "$(cat "$work/report/notes.txt")" = "keep me" ] && [ "$(cat "$work/report/mine/plot.py")" = "also mine" ] &&
	ok "the user's files are kept" || fail "the user's files are gone: $(ls -la "$work/report")"
grep -q stale "$work/report/timeline.json" && fail "timeline.json was not replaced" || ok "the report files were replaced"
grep -qx notes.txt "$work/report/.profopt-report" && fail "the manifest lists the user's file" ||
	ok "the manifest lists only the report's files"
no_staging

# --json-only: the earlier report's index.html, PDF and charts go; the user's files stay.
expect_exit 0 "--force --json-only over a full report" "$work/trace" -o "$work/report" --force --json-only
[ ! -e "$work/report/index.html" ] && [ ! -e "$work/report/charts" ] && [ ! -e "$work/report/report.pdf" ] &&
	[ -f "$work/report/summary.json" ] && ok "only the new report's files remain" ||
	fail "left from the earlier report: $(ls "$work/report")"
[ -f "$work/report/notes.txt" ] && [ -f "$work/report/mine/plot.py" ] && ok "the user's files are still kept" ||
	fail "the user's files are gone after --json-only"

# A file of the user's named like one the new report writes (not in the manifest): refused.
echo "<p>my page</p>" >"$work/report/index.html"
snapshot "$work/report" >"$work/report.before"
expect_exit 2 "a file of the user's where the report writes one" "$work/trace" -o "$work/report" --force
contains "$work/err" "$work/report/index.html is not part of the earlier report" "the error names the file"
snapshot "$work/report" | cmp -s - "$work/report.before" && ok "nothing changed" || fail "the directory changed"
rm "$work/report/index.html"

# A file of the user's inside a directory the report made.
expect_exit 0 "full report again" "$work/trace" -o "$work/report" --force
echo "x" >"$work/report/charts/mine.txt"
expect_exit 2 "a file of the user's inside charts/" "$work/trace" -o "$work/report" --force
contains "$work/err" "charts/mine.txt" "the error names charts/mine.txt"
rm "$work/report/charts/mine.txt"

# A damaged manifest (a path outside the report): refused, nothing removed.
cp "$work/report/.profopt-report" "$work/manifest.good"
echo "outside" >"$work/outside.txt"
printf 'profopt-report/1\n../outside.txt\nsummary.json\n' >"$work/report/.profopt-report"
snapshot "$work/report" >"$work/report.before"
expect_exit 2 "a damaged manifest" "$work/trace" -o "$work/report" --force
contains "$work/err" ".profopt-report: line 2" "the error names the manifest line"
[ -f "$work/outside.txt" ] && snapshot "$work/report" | cmp -s - "$work/report.before" &&
	ok "nothing was removed" || fail "files were removed"
cp "$work/manifest.good" "$work/report/.profopt-report"

# A run that fails after its analysis started (a bad baseline) leaves the earlier report.
snapshot "$work/report" >"$work/report.before"
echo '{"schema": "profopt.summary/1", "step_series": [{"wall_ms": 1e999}]}' >"$work/bad.json"
expect_exit 7 "a failing run over an earlier report" "$work/trace" -o "$work/report" --force --baseline "$work/bad.json"
snapshot "$work/report" | cmp -s - "$work/report.before" && ok "the earlier report is intact" ||
	fail "the earlier report changed"
no_staging

# A run killed in the middle of its commit: the earlier report sits in its staging
# directory (named after a pid no process has) with a file of the user's and the mark the
# commit put on it. The next run removes the earlier report's files, moves the user's file
# back, and removes the directory. Without the mark it is not provably profopt's: the run
# leaves it alone and says so.
sh -c 'exit 0' &
dead_pid=$!
wait "$dead_pid"
stale="$work/.report.profopt-$dead_pid-1-AbCdEf"
mkdir -p "$stale/charts" && chmod 755 "$stale" # whatever the umask: a real one is 0700
printf 'profopt-report/1\ncharts/old.svg\nsummary.json\n' >"$stale/.profopt-report"
echo old >"$stale/summary.json" && echo old >"$stale/charts/old.svg"
echo "moved away by the killed run" >"$stale/user-notes.txt"
analyzer "$work/trace" -o "$work/report" --force >"$work/out" 2>"$work/err" &&
	[ -f "$stale/user-notes.txt" ] && [ -f "$stale/summary.json" ] &&
	ok "a staging directory without a mark is left alone" ||
	fail "a staging directory without a mark: $(cat "$work/err"), $(ls -a "$stale" 2>&1)"
contains "$work/err" "warning: left alone $stale" "a warning names it"
contains "$work/err" "no .profopt-staging or .profopt-replaced mark" "the warning says why"
touch "$stale/.profopt-replaced"
expect_exit 0 "a run after one killed in the middle of its commit" "$work/trace" -o "$work/report" --force
[ ! -e "$stale" ] && ok "the killed run's directory is gone" || fail "left: $(ls -aR "$stale")"
[ "$(cat "$work/report/user-notes.txt" 2>/dev/null)" = "moved away by the killed run" ] &&
	ok "the user's file is back in the report directory" || fail "the user's file was not moved back"

# Killed between the two renames of a file system without RENAME_EXCHANGE: the report
# directory is missing and the earlier report waits aside; the next run puts it back.
touch "$work/report/.profopt-replaced"
mv "$work/report" "$work/.report.profopt-$dead_pid-1-GhIjKl-old"
expect_exit 2 "a run after one killed between two renames" "$work/trace" -o "$work/report"
[ -f "$work/report/summary.json" ] && [ -f "$work/report/user-notes.txt" ] &&
	[ ! -e "$work/.report.profopt-$dead_pid-1-GhIjKl-old" ] &&
	[ ! -e "$work/report/.profopt-replaced" ] &&
	ok "the earlier report is back in place (and, without --force, kept)" ||
	fail "the earlier report was not put back: $(ls -a "$work")"
no_staging

valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

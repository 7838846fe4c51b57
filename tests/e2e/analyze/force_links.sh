#!/usr/bin/env bash
# --force stays inside the report directory: a manifest line whose path goes through a
# symbolic link (DIR/lnk -> elsewhere, "lnk/file"), or meets a FIFO or a device, is
# refused before the analysis (exit 2, one line naming the entry), and nothing outside
# DIR, nor in it, is removed. Runs on a committed trace: no session daemon.
set -u
bin=$1
trace=$2
work=$(mktemp -d /tmp/profopt-links.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

snapshot() { (cd "$1" && find . -print0 | sort -z | xargs -0 -r ls -ld --time-style=+ | sed 's/ [0-9]* / /'); }
no_staging() { ls -a "$work" | grep -q '\.profopt-' && fail "a staging directory was left: $(ls -a "$work")" || ok "no staging directory left"; }

# elsewhere/ is what must survive: a directory outside the report, and a file in it.
mkdir "$work/elsewhere"
echo "not the report's" >"$work/elsewhere/file"
echo "not the report's" >"$work/elsewhere/summary.json"
elsewhere_intact() { holds "not the report's" "$1" "$work/elsewhere/file" "$work/elsewhere/summary.json"; }

expect_exit 0 "first report" "$trace" -o "$work/r"

# The issue's case: a link in the middle of a listed path.
ln -s "$work/elsewhere" "$work/r/lnk"
echo "lnk/file" >>"$work/r/.profopt-report"
snapshot "$work/r" >"$work/r.before"
expect_exit 2 "--force over a manifest line through a symbolic link" "$trace" -o "$work/r" --force
contains "$work/err" "$work/r/lnk is a symbolic link" "the error names the link"
elsewhere_intact "a link in the middle"
snapshot "$work/r" | cmp -s - "$work/r.before" && ok "the report directory is as it was" ||
	fail "the report directory changed: $(ls -la "$work/r")"
no_staging

# The link where a report directory is (charts -> elsewhere), its files listed.
rm "$work/r/lnk"
sed -i '/^lnk\/file$/d' "$work/r/.profopt-report"
mv "$work/r/charts" "$work/charts.saved"
ln -s "$work/elsewhere" "$work/r/charts"
echo "charts/file" >>"$work/r/.profopt-report"
expect_exit 2 "--force with charts/ a symbolic link" "$trace" -o "$work/r" --force
contains "$work/err" "$work/r/charts is a symbolic link" "the error names charts"
elsewhere_intact "charts a link"
rm "$work/r/charts"
mv "$work/charts.saved" "$work/r/charts"
sed -i '/^charts\/file$/d' "$work/r/.profopt-report"

# A FIFO where the manifest lists a directory, and one where it lists a file.
mkfifo "$work/r/pipe"
echo "pipe/file" >>"$work/r/.profopt-report"
expect_exit 2 "--force with a FIFO where a listed directory is" "$trace" -o "$work/r" --force
contains "$work/err" "$work/r/pipe is a FIFO" "the error names the FIFO"
rm "$work/r/pipe"
sed -i '/^pipe\/file$/d' "$work/r/.profopt-report"
mv "$work/r/summary.json" "$work/summary.saved"
mkfifo "$work/r/summary.json"
expect_exit 2 "--force with a FIFO where a listed file is" "$trace" -o "$work/r" --force
contains "$work/err" "$work/r/summary.json is a FIFO" "the error names the FIFO"
rm "$work/r/summary.json"
mv "$work/summary.saved" "$work/r/summary.json"

# The earlier report of a run killed in its commit (this user's, with the commit's mark),
# whose manifest lists lnk/file through a link: the next run removes nothing through the
# link, moves the link back into DIR as the user's, and removes the rest.
sh -c 'exit 0' &
dead_pid=$!
wait "$dead_pid"
stale="$work/.r.profopt-$dead_pid-1-AbCdEf"
mkdir "$stale" && chmod 755 "$stale"
printf 'profopt-report/1\nlnk/file\nsummary.json\n' >"$stale/.profopt-report"
echo old >"$stale/summary.json"
ln -s "$work/elsewhere" "$stale/lnk"
touch "$stale/.profopt-replaced"
expect_exit 0 "a run after one killed in its commit, a link in its manifest's path" "$trace" -o "$work/r" --force
elsewhere_intact "a killed run's earlier report"
[ ! -e "$stale" ] && [ -L "$work/r/lnk" ] && ok "the link went back into the report directory as a link" ||
	fail "the killed run's directory: $(ls -la "$stale" "$work/r" 2>&1)"
rm -f "$work/r/lnk"

# With the links gone, --force replaces the report; the user's link beside it stays.
ln -s "$work/elsewhere" "$work/r/my-link"
expect_exit 0 "--force over a clean report with a link of the user's" "$trace" -o "$work/r" --force
[ -L "$work/r/my-link" ] && ok "the user's link is kept" || fail "the user's link is gone: $(ls -la "$work/r")"
elsewhere_intact "after the last --force"
no_staging

valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

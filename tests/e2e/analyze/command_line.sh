#!/usr/bin/env bash
# Bad command lines and unusable output directories: a one-line error, the documented exit
# status, and nothing written or lost.
set -u
bin=$1
work=$(mktemp -d /tmp/profopt-cli.XXXXXX)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
failed=0 passed=0

expect() { # expect STATUS DESCRIPTION COMMAND...
	local want=$1 what=$2
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	local got=$?
	if [ "$got" -eq "$want" ] && { [ "$want" -eq 0 ] || [ "$(wc -l <"$work/err")" -eq 1 ]; }; then
		passed=$((passed + 1)); echo "ok   $what ($got): $(cat "$work/err")"
	else
		failed=$((failed + 1)); echo "FAIL $what: status $got, want $want; stderr: $(cat "$work/err")"
	fi
}

"$bin/profopt-record" -o "$work/trace" -- "$bin/profopt-sim" --workers 1 --steps 25 \
	--load-ms 1 --forward-ms 1 --gpu-ms 1 --kernels 2 >/dev/null 2>&1 || { echo "FAIL record"; exit 1; }
a=analyzer

expect 2 "no arguments" "$a"
expect 0 "--help" "$a" --help
if grep -q '%%' "$work/out"; then
	failed=$((failed + 1)); echo "FAIL --help prints a literal %%"
else
	passed=$((passed + 1)); echo "ok   --help has no literal %%"
fi
expect 2 "unknown option" "$a" --bogus "$work/trace"
expect 2 "missing option argument" "$a" "$work/trace" -o
expect 2 "empty output directory" "$a" "$work/trace" -o ""
expect 2 "two traces without -o" "$a" "$work/trace" "$work/trace"
# Several TRACE_DIRs: one report from a private job directory of links under TMPDIR,
# removed afterwards whatever the outcome.
"$bin/profopt-record" -o "$work/trace2" -- "$bin/profopt-sim" --workers 1 --steps 20 \
	--load-ms 1 --forward-ms 1 >/dev/null 2>&1 || { echo "FAIL record the second trace"; exit 1; }
mkdir -m 700 "$work/jobtmp"
TMPDIR=$work/jobtmp expect 2 "the same trace twice" "$a" "$work/trace" "$work/trace/" -o "$work/r-same"
TMPDIR=$work/jobtmp expect 3 "a second trace that is missing" "$a" "$work/trace" "$work/nope" \
	-o "$work/r-missing"
grep -q "$work/nope: No such file" "$work/err" ||
	{ failed=$((failed + 1)); echo "FAIL the missing second trace is not named"; }
TMPDIR=$work/jobtmp expect 2 "-o inside the second trace" "$a" "$work/trace" "$work/trace2" \
	-o "$work/trace2/r"
TMPDIR=$work/jobtmp expect 0 "two traces with -o" "$a" -q "$work/trace" "$work/trace2" -o "$work/r-two"
[ -f "$work/r-two/summary.json" ] ||
	{ failed=$((failed + 1)); echo "FAIL no report from two traces"; }
mkdir -p "$work/not-a-trace2" && echo data >"$work/not-a-trace2/file.bin"
TMPDIR=$work/jobtmp expect 3 "two traces, one not a trace" "$a" "$work/trace" "$work/not-a-trace2" \
	-o "$work/r-bad-two"
if [ -n "$(ls -A "$work/jobtmp")" ]; then
	failed=$((failed + 1)); echo "FAIL a job directory was left behind: $(ls -A "$work/jobtmp")"
else
	passed=$((passed + 1)); echo "ok   no job directory left behind"
fi
expect 2 "bad --set" "$a" --set nonsense "$work/trace"
expect 2 "--set outside the rule's range" "$a" --set input-bound.max_workers=1e12 "$work/trace"
expect 2 "--set a fraction of a count" "$a" --set step-outliers.min_steps=2.5 "$work/trace"
expect 2 "bad --timeline-steps" "$a" --timeline-steps 5:1 "$work/trace"
expect 2 "bad --steps-in" "$a" --steps-in 5:5 "$work/trace"
PROFOPT_DECODE_LIMITS=mem=abc expect 2 "a malformed PROFOPT_DECODE_LIMITS" "$a" "$work/trace" \
	-o "$work/r-limits"
grep -q 'PROFOPT_DECODE_LIMITS=mem=abc: "mem=abc"' "$work/err" ||
	{ failed=$((failed + 1)); echo "FAIL the malformed limit is not named"; }
[ -e "$work/r-limits" ] && { failed=$((failed + 1)); echo "FAIL output left for a bad limit"; }
expect 3 "missing trace" "$a" "$work/nope" -o "$work/r0"
mkdir -p "$work/not-a-trace" && echo data >"$work/not-a-trace/file.bin"
expect 3 "not a trace" "$a" "$work/not-a-trace" -o "$work/r1"
[ -e "$work/r1" ] && { failed=$((failed + 1)); echo "FAIL output left for a bad input"; }
# A session still writing: whether decoding fails on the half-written end or not, the
# trace changed size during the analysis, so exit 3 naming the file and no output.
cp -r "$work/trace" "$work/live"
live_stream=$(find "$work/live" -type f -path '*/ust/*' ! -name metadata ! -path '*/index/*' \
	-size +0 | head -1)
(for _ in $(seq 600); do head -c 64 /dev/urandom >>"$live_stream"; sleep 0.05; done) &
writer=$!
expect 3 "trace still being written" "$a" "$work/live" -o "$work/r-live"
kill "$writer"; wait "$writer" 2>/dev/null
grep -q "still being written" "$work/err" ||
	{ failed=$((failed + 1)); echo "FAIL the live trace is not said to be still written"; }
[ -e "$work/r-live" ] && { failed=$((failed + 1)); echo "FAIL output left for a live trace"; }
expect 2 "output inside the trace" "$a" "$work/trace" -o "$work/trace/report"
[ -e "$work/trace/report" ] && { failed=$((failed + 1)); echo "FAIL wrote into the trace"; }
mkdir -p "$work/busy" && echo keep >"$work/busy/notes.txt"
expect 2 "non-empty foreign output dir" "$a" "$work/trace" -o "$work/busy"
grep -q keep "$work/busy/notes.txt" || { failed=$((failed + 1)); echo "FAIL user file lost"; }
expect 0 "first report" "$a" "$work/trace" -o "$work/report"
cp "$work/report/summary.json" "$work/first-summary.json"
expect 2 "earlier report without --force" "$a" "$work/trace" -o "$work/report"
expect 0 "earlier report with --force" "$a" "$work/trace" -o "$work/report" --force
cmp -s "$work/report/summary.json" "$work/first-summary.json" &&
	{ passed=$((passed + 1)); echo "ok   same trace, same summary.json bytes"; } ||
	{ failed=$((failed + 1)); echo "FAIL summary.json differs between two runs"; }
expect 0 "rules changed with --set" "$a" "$work/trace" -o "$work/rules" --json-only \
	--set input-bound.max_workers=8
/usr/bin/python3 -c 'import json, sys
changed = json.load(open(sys.argv[1]))["rules_changed"]
first = json.load(open(sys.argv[2]))["rules_changed"]
sys.exit(0 if changed == [{"default": 32.0, "rule": "input-bound.max_workers", "value": 8.0}]
         and first == [] else 1)' "$work/rules/summary.json" "$work/first-summary.json" &&
	{ passed=$((passed + 1)); echo "ok   summary.json lists the rules changed (and none by default)"; } ||
	{ failed=$((failed + 1)); echo "FAIL summary.json rules_changed"; }
expect 5 "output parent is a file" "$a" "$work/trace" -o "$work/busy/notes.txt/report"
if [ "$(id -u)" -ne 0 ]; then
	mkdir -p "$work/ro" && chmod a-w "$work/ro"
	expect 5 "read-only parent" "$a" "$work/trace" -o "$work/ro/report"
fi
# A full file system (a small tmpfs in a private mount namespace holding a copy of the
# earlier report and little more): exit 5, the earlier report intact, no staging left.
# Exit 90-93 from the namespace: could not mount, could not copy, report changed, staging left.
if [ "$(id -u)" -eq 0 ] && unshare --mount true 2>/dev/null; then
	mkdir -p "$work/small"
	expect 5 "full file system" unshare --mount bash -c '
		small=$1 report=$2 kb=$3
		shift 3
		mount -t tmpfs -o size="$kb"k tmpfs "$small" || exit 90
		cp -a "$report" "$small/report" || exit 91
		"$@" -o "$small/report" --force
		status=$?
		cmp -s "$report/summary.json" "$small/report/summary.json" || exit 92
		ls -a "$small" | grep -q "\.profopt-" && exit 93
		exit $status' full-fs "$work/small" "$work/report" \
		$(($(du -sk "$work/report" | cut -f1) + 16)) "${analyzer_command[@]}" "$work/trace"
fi
expect 0 "--version" "$a" --version
ls -a "$work" | grep -q '\.profopt-' && { failed=$((failed + 1)); echo "FAIL staging left behind"; }

valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
